package trace

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// numbers are edge values of the writer's integer formatting (each power
// of ten and its neighbours, the limits) and random ones of every length.
func numbers() []uint64 {
	v := []uint64{0, math.MaxUint64, math.MaxInt64, math.MaxInt64 + 1}
	for p := uint64(1); ; p *= 10 {
		v = append(v, p-1, p, p+1)
		if p > math.MaxUint64/10 {
			break
		}
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		v = append(v, r.Uint64()>>r.Intn(64))
	}
	return v
}

// TestAppendNumbers: the writer's integers and hexadecimal flow ids are
// strconv's and fmt's, appended after what the buffer holds.
func TestAppendNumbers(t *testing.T) {
	for _, v := range numbers() {
		if got, want := string(appendUint([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendUint(%d) = %s, want %s", v, got, want)
		}
		if got, want := string(appendInt([]byte("x"), int64(v))), "x"+strconv.FormatInt(int64(v), 10); got != want {
			t.Fatalf("appendInt(%d) = %s, want %s", int64(v), got, want)
		}
		if got, want := string(appendHex16([]byte("x"), v)), fmt.Sprintf("x%016x", v); got != want {
			t.Fatalf("appendHex16(%#x) = %s, want %s", v, got, want)
		}
	}
}

// TestAppendUsRandom: appendUs against the integer nanoseconds written by
// fmt, for times of every length, fractions of a nanosecond included.
func TestAppendUsRandom(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20000; i++ {
		v := float64(r.Uint64()>>r.Intn(64)) / 8
		if r.Intn(2) == 0 {
			v = -v
		}
		if !(v > -9e15 && v < 9e15) {
			continue
		}
		ns := int64(math.Round(v))
		want := fmt.Sprintf("%d.%03d", ns/1000, ns%1000)
		if ns < 0 {
			want = fmt.Sprintf("-%d.%03d", -ns/1000, -ns%1000)
		}
		if got := appendUs([]byte("x"), v); string(got) != "x"+want {
			t.Fatalf("appendUs(%v) = %s, want %s", v, got, want)
		}
	}
}
