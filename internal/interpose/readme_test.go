package interpose

import (
	"os"
	"strings"
	"testing"
)

// TestREADMESettings keeps the README's settings table in step with the
// settings the runtime reads.
func TestREADMESettings(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Settings {
		row := "| `" + s.name + "` | `" + s.def + "` |"
		if s.def == "" {
			row = "| `" + s.name + "` |"
		}
		if !strings.Contains(string(b), row) {
			t.Errorf("README.md has no settings row starting %q", row)
		}
	}
}
