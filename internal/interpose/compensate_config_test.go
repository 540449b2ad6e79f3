package interpose

import (
	"reflect"
	"strings"
	"testing"
)

// TestCompensateSettings: MPISCOPE_COMPENSATE, MPISCOPE_TEST_DELAY_NS and
// MPISCOPE_TEST_DELAY_RANKS; bad values warn (once, at MPI_Init) and fall
// back to the defaults (no delay, all ranks).
func TestCompensateSettings(t *testing.T) {
	c, _, warns := ParseConfig([]string{"MPISCOPE_COMPENSATE=1", "MPISCOPE_TEST_DELAY_NS=20000", "MPISCOPE_TEST_DELAY_RANKS=0,2-3"})
	if !c.Compensate || c.TestDelayNs != 20000 || !reflect.DeepEqual(c.TestDelayRanks, []int{0, 2, 3}) || len(warns) != 0 {
		t.Errorf("good values: %+v %v", c, warns)
	}
	c, _, _ = ParseConfig(nil)
	if c.Compensate || c.TestDelayNs != 0 || c.TestDelayRanks != nil {
		t.Errorf("defaults: %+v", c)
	}
	for _, bad := range []string{"MPISCOPE_TEST_DELAY_NS=fast", "MPISCOPE_TEST_DELAY_NS=-5", "MPISCOPE_TEST_DELAY_NS=2000000000",
		"MPISCOPE_TEST_DELAY_RANKS=x", "MPISCOPE_TEST_DELAY_RANKS=3-1", "MPISCOPE_TEST_DELAY_RANKS=-1", "MPISCOPE_COMPENSATE=maybe"} {
		c, _, warns := ParseConfig([]string{bad})
		name, _, _ := strings.Cut(bad, "=")
		if len(warns) != 1 || !strings.Contains(warns[0], name) {
			t.Errorf("%s: warnings %q", bad, warns)
		}
		if c.Compensate || c.TestDelayNs != 0 || c.TestDelayRanks != nil {
			t.Errorf("%s: not the defaults: %+v", bad, c)
		}
	}
}
