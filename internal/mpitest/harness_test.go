package mpitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeTB records whether the harness skipped or failed.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped, f.msg = true, fmt.Sprintf(format, args...)
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
}

// TestGetRecordedMPICC: a family's compilers and mpirun are those of the
// mpicc recorded by the build (lib/<family>/mpicc), found next to it; a
// build without the record, older than its sources, or whose mpicc is
// gone, skips (fails in CI);
// a relative MPISCOPE_BUILD is taken from the repository.
func TestGetRecordedMPICC(t *testing.T) {
	build := t.TempDir()
	bin := t.TempDir()
	t.Setenv("MPISCOPE_BUILD", build)
	lib := filepath.Join(build, "lib", "openmpi")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "libmpiscope.so"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mpicc := filepath.Join(bin, "mpicc.test")
	if err := os.WriteFile(mpicc, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		f := &fakeTB{TB: t}
		Get(f, "openmpi")
		if !f.skipped && !f.failed || f.skipped != (ci == "") {
			t.Errorf("CI=%q, no record: skipped %v failed %v (%s)", ci, f.skipped, f.failed, f.msg)
		}
	}
	if err := os.WriteFile(filepath.Join(lib, "mpicc"), []byte(mpicc+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeTB{TB: t}
	got := Get(f, "openmpi")
	want := Family{Name: "openmpi", MPICC: mpicc, MPICXX: filepath.Join(bin, "mpicxx.test"),
		MPIFORT: filepath.Join(bin, "mpifort.test"), MPIRun: filepath.Join(bin, "mpirun.test"), LibDir: lib}
	if f.skipped || f.failed || got != want {
		t.Errorf("Get = %+v (skipped %v failed %v %s), want %+v", got, f.skipped, f.failed, f.msg, want)
	}
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(lib, "libmpiscope.so"), old, old); err != nil {
		t.Fatal(err)
	}
	f = &fakeTB{TB: t}
	Get(f, "openmpi")
	if !f.failed || !strings.Contains(f.msg, "stale") {
		t.Errorf("CI=true, library older than its sources: failed %v (%s)", f.failed, f.msg)
	}
	now := time.Now()
	if err := os.Chtimes(filepath.Join(lib, "libmpiscope.so"), now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(mpicc); err != nil {
		t.Fatal(err)
	}
	f = &fakeTB{TB: t}
	Get(f, "openmpi")
	if !f.failed {
		t.Errorf("CI=true, recorded mpicc gone: not failed (%s)", f.msg)
	}

	t.Setenv("MPISCOPE_BUILD", "rel/b")
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	if got := BuildDir(t); got != filepath.Join(repo, "rel", "b") {
		t.Errorf("BuildDir with MPISCOPE_BUILD=rel/b: %s, want %s", got, filepath.Join(repo, "rel", "b"))
	}
}
