package tree

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// makeDry runs make -n with args in the module's root, as from a shell:
// without the variables an enclosing make (make gotest) exports.
func makeDry(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-n"}, args...)...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES", "MAKEOVERRIDES", "GNUMAKEFLAGS":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}

// make with no target builds: the default goal is all, although mk/*.mk
// (included before all's rule) declares rules of its own.
func TestMakeDefaultGoal(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed: %v", err)
	}
	root := moduleRoot(t)
	// The database make -p prints names the goal that make alone builds.
	db := makeDry(t, root, "-p")
	m := regexp.MustCompile(`(?m)^\.DEFAULT_GOAL := (.*)$`).FindStringSubmatch(db)
	if m == nil {
		t.Fatal("make -p printed no .DEFAULT_GOAL")
	}
	if m[1] != "all" {
		t.Errorf("make's default goal is %q, want all", m[1])
	}
	// And what make alone would run is what make all runs.
	if got, want := makeDry(t, root), makeDry(t, root, "all"); got != want {
		t.Errorf("make -n runs\n%s\nmake -n all runs\n%s", got, want)
	}
}
