package mpitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestNever: MPISCOPE_ENABLE=never switches profiling off for the whole
// run. The launcher then runs the program without the library (its MPI_
// functions are the MPI library's own); preloaded, linked shared or
// static, the library's wrappers stay on the path but record nothing,
// MPI_Pcontrol(1) included. Either way nothing is written, nothing is
// printed and the program computes the same. The control: without never,
// the same programs are wrapped and every call counted.
func TestNever(t *testing.T) {
	Families(t, func(t *testing.T, f Family) {
		dir := t.TempDir()
		compile := func(mode string, extra ...string) string {
			d := filepath.Join(dir, mode)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			return Compile(t, f.MPICC, "never.c", d, extra...)
		}
		plain := compile("plain")
		shared := compile("shared", "-L"+f.LibDir, "-Wl,-rpath,"+f.LibDir, "-lmpiscope")
		static := compile("static", f.Archive(), "-lpthread", "-ldl")
		out := func(same int) string {
			return fmt.Sprintf("rank 0: sum 200, %d of 6 MPI_ functions are PMPI_\nrank 1: sum 200, %d of 6 MPI_ functions are PMPI_", same, same)
		}
		base := f.Exec(t, Run{NP: 2, Args: []string{plain}})
		if base.Err != nil || sortedLines(base.Stdout) != out(6) {
			t.Fatalf("without mpiscope: %v\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", base.Err, base.Stdout, base.Stderr, out(6))
		}
		libdir := filepath.Dir(f.LibDir)
		for _, c := range []struct {
			name    string
			args    []string
			preload bool
			same    int // MPI_ functions that are their PMPI_
		}{
			{"launcher", []string{launcher(t), plain}, false, 6},
			{"preload", []string{plain}, true, 0},
			{"link-shared", []string{shared}, false, 0},
			{"static", []string{static}, false, 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				job := filepath.Join(t.TempDir(), "job")
				r := Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_ENABLE": "never", "MPISCOPE_LIBDIR": libdir}, Args: c.args}
				if c.preload {
					r.Preload = f.Lib()
				}
				res := f.Exec(t, r)
				if res.Err != nil {
					t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
				}
				if got := sortedLines(res.Stdout); got != out(c.same) {
					t.Errorf("stdout:\n%s\nwant:\n%s", got, out(c.same))
				}
				if strings.Contains(res.Stderr, "mpiscope") {
					t.Errorf("mpiscope wrote to stderr:\n%s", res.Stderr)
				}
				if _, err := os.Stat(job); !os.IsNotExist(err) {
					t.Errorf("%s: %v, want nothing written", job, err)
				}
			})
		}
		t.Run("on", func(t *testing.T) {
			job := filepath.Join(t.TempDir(), "job")
			res := f.Exec(t, Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_LIBDIR": libdir},
				Args: []string{launcher(t), plain}})
			if res.Err != nil {
				t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
			}
			if got := sortedLines(res.Stdout); got != out(0) {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, out(0))
			}
			p, _, err := profile.Load(job)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, res.Stderr)
			}
			Want(t, p, map[string][2]int64{"MPI_Allreduce": {200, 1600}, "MPI_Send": {1, 8}, "MPI_Recv": {1, 8}, "MPI_Barrier": {2, 0}, "MPI_Comm_rank": {2, 0}})
		})
	})
}
