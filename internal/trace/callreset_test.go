package trace

import (
	"reflect"
	"testing"
)

// reset empties a call as the walk does before each call: the fields
// every call has (the walk writes them itself, each once) zero, then
// clearRest.
func (c *Call) reset() {
	c.Rank, c.Thread, c.Fn, c.Class, c.FnID = 0, 0, "", "", 0
	c.T0, c.T1, c.PC, c.Src, c.Path, c.Comm = 0, 0, 0, nil, nil, nil
	c.clearRest()
}

// TestCallReset: reset clears every field of a Call, whatever fields it
// gains: a field it forgot would carry one call's value into the next
// (the walk reuses its Call). The call's own slices keep their arrays,
// Root is -1.
func TestCallReset(t *testing.T) {
	var c Call
	v := reflect.ValueOf(&c).Elem()
	caps := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 2, 5))
			caps[name] = 5
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint64:
			f.SetUint(7)
		case reflect.Float64:
			f.SetFloat(7)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", name, f.Kind())
		}
	}
	c.reset()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "Root":
			if c.Root != -1 {
				t.Errorf("Root %d after reset, want -1", c.Root)
			}
		case f.Kind() == reflect.Slice && name != "Path": // Path is the callers' slice, not the call's
			if f.Len() != 0 || f.Cap() != caps[name] {
				t.Errorf("%s: length %d, capacity %d after reset; want 0 and its array kept (%d)", name, f.Len(), f.Cap(), caps[name])
			}
		case !f.IsZero():
			t.Errorf("%s not cleared by reset: %v", name, f.Interface())
		}
	}
}
