package mpitest_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// stackTool builds one of the PMPI tools of testdata/progs/stack as a
// shared library in dir.
func stackTool(t *testing.T, f mpitest.Family, name, dir string) string {
	t.Helper()
	so := filepath.Join(dir, "lib"+name+".so")
	cmd := exec.Command(f.MPICC, "-O1", "-g", "-shared", "-fPIC", "-o", so, mpitest.Testdata("stack/"+name+".c"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	return so
}

// toolFile reads a tool's output file: "name value" lines, and the
// "pcontrol ..." lines in order.
func toolFile(t *testing.T, path string) (map[string]int64, []string) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatalf("the tool wrote no file: %v", err)
	}
	defer fh.Close()
	kv := map[string]int64{}
	var pc []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "pcontrol ") {
			pc = append(pc, line)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("%s: line %q", path, line)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: line %q", path, line)
		}
		kv[f[0]] = n
	}
	return kv, pc
}

func sortedOutput(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// appCounts is what stack/app.c calls on each of 2 ranks.
var appCounts = map[string]int64{
	"MPI_Init": 1, "MPI_Finalize": 1, "MPI_Comm_size": 1, "MPI_Send": 100, "MPI_Recv": 100,
	"MPI_Barrier": 10, "MPI_Allreduce": 5, "MPI_Pcontrol": 2,
}

// checkStack checks one run of stack/app.c with tools stacked in order
// (each "count" or "bytes") below mpiscope: mpiscope's profile, and each
// tool's file, hold exactly the program's calls and bytes.
func checkStack(t *testing.T, p *profile.Profile, out string, order []string) {
	t.Helper()
	checkStackLang(t, p, out, order, false)
}

// checkStackLang: fortran, a Fortran app_*.f90, calls MPI_Pcontrol(1)
// twice instead of entering and leaving region "solve".
func checkStackLang(t *testing.T, p *profile.Profile, out string, order []string, fortran bool) {
	t.Helper()
	// mpiscope: both ranks. Rank 0 sends 100 x 8 bytes, rank 1 100 x 16.
	mpitest.Want(t, p, map[string][2]int64{
		"MPI_Send": {200, 2400}, "MPI_Recv": {200, 2400}, "MPI_Barrier": {20, 0}, "MPI_Allreduce": {10, 40},
	})
	if f := mpitest.Func(p, "MPI_Comm_rank"); f.Calls != 2 {
		t.Errorf("mpiscope: MPI_Comm_rank %d calls, want 2", f.Calls)
	}
	if !fortran && (len(p.Regions) != 1 || p.Regions[0].Path != "solve" || p.Regions[0].Visits != 2) {
		t.Errorf("mpiscope: regions %+v, want solve visited once per rank", p.Regions)
	}
	var stack []string
	for _, s := range p.Meta.Settings {
		if s.Name == "stack" {
			stack = append(stack, s.Value)
		}
	}
	if len(stack) != len(order) {
		t.Errorf("report header: stack %q, want %d levels", stack, len(order))
	}
	for i, name := range order {
		if i < len(stack) && !strings.HasSuffix(stack[i], "/lib"+name+".so") {
			t.Errorf("report header: level %d is %q, want lib%s.so", i+1, stack[i], name)
		}
	}
	for level, name := range order {
		for rank := 0; rank < 2; rank++ {
			kv, pc := toolFile(t, filepath.Join(out, name+"."+strconv.Itoa(rank)+".txt"))
			switch name {
			case "count":
				want := map[string]int64{}
				for k, v := range appCounts {
					want[k] = v
				}
				// The program's MPI_Comm_rank, and that of each tool
				// above this one at its MPI_Finalize (its calls of
				// PMPI_Comm_rank reach the next level's MPI_Comm_rank).
				want["MPI_Comm_rank"] = int64(1 + level)
				for k, v := range want {
					if kv[k] != v {
						t.Errorf("count (level %d) rank %d: %s %d calls, want %d", level+1, rank, k, kv[k], v)
					}
				}
				for k := range kv {
					if _, ok := want[k]; !ok {
						t.Errorf("count (level %d) rank %d: %s %d calls, want none", level+1, rank, k, kv[k])
					}
				}
				wantPc := "pcontrol 4 solve;pcontrol -4"
				if fortran {
					wantPc = "pcontrol 1;pcontrol 1"
				}
				if strings.Join(pc, ";") != wantPc {
					t.Errorf("count (level %d) rank %d: Pcontrol levels %q, want %q", level+1, rank, pc, wantPc)
				}
			case "bytes":
				want := map[string]int64{"sends": 100, "bytes": 800 * int64(rank+1)}
				for k, v := range want {
					if kv[k] != v {
						t.Errorf("bytes (level %d) rank %d: %s %d, want %d", level+1, rank, k, kv[k], v)
					}
				}
			}
		}
	}
}

// TestStack stacks the two PMPI tools of testdata/progs/stack below
// mpiscope, in both orders (MPISCOPE_STACK): every level counts the
// program's calls and bytes exactly once, the program's output does not
// change, nothing warns.
func TestStack(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", dir)
		tools := map[string]string{"count": stackTool(t, f, "count", dir), "bytes": stackTool(t, f, "bytes", dir)}
		ref := f.Exec(t, mpitest.Run{NP: 2, Args: []string{app}})
		if ref.Err != nil {
			t.Fatalf("without mpiscope: %v\n%s", ref.Err, ref.Stderr)
		}
		for _, order := range [][]string{{"count", "bytes"}, {"bytes", "count"}, {"count"}} {
			t.Run(strings.Join(order, "-"), func(t *testing.T) {
				out := t.TempDir()
				var libs []string
				for _, n := range order {
					libs = append(libs, tools[n])
				}
				p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_STACK": strings.Join(libs, ":"), "STACK_OUT": out}, app)
				checkStack(t, p, out, order)
				if sortedOutput(res.Stdout) != sortedOutput(ref.Stdout) {
					t.Errorf("output changed:\n%s\nwithout mpiscope:\n%s", res.Stdout, ref.Stdout)
				}
				if strings.Contains(res.Stderr, "warning") {
					t.Errorf("stderr:\n%s", res.Stderr)
				}
			})
		}
	})
}

// TestStackLanguages: the C++ program and the three Fortran ones
// (mpif.h, use mpi, use mpi_f08) with both tools stacked: the same exact
// counts at every level, MPI_Init and MPI_Finalize reaching each tool
// from Fortran too.
func TestStackLanguages(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		count, bytes := stackTool(t, f, "count", dir), stackTool(t, f, "bytes", dir)
		for _, c := range []struct {
			name, src, cc string
			extra         []string
		}{
			{"cxx", "stack/app.cpp", f.MPICXX, nil},
			{"mpif", "stack/app_mpif.f90", f.MPIFORT, []string{"-fallow-argument-mismatch"}},
			{"usempi", "stack/app_usempi.f90", f.MPIFORT, nil},
			{"f08", "stack/app_f08.f90", f.MPIFORT, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				app := mpitest.Compile(t, c.cc, c.src, t.TempDir(), c.extra...)
				ref := f.Exec(t, mpitest.Run{NP: 2, Args: []string{app}})
				if ref.Err != nil {
					t.Fatalf("without mpiscope: %v\n%s", ref.Err, ref.Stderr)
				}
				out := t.TempDir()
				p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_STACK": count + ":" + bytes, "STACK_OUT": out}, app)
				checkStackLang(t, p, out, []string{"count", "bytes"}, c.name != "cxx")
				if sortedOutput(res.Stdout) != sortedOutput(ref.Stdout) {
					t.Errorf("output changed:\n%s\nwithout mpiscope:\n%s", res.Stdout, ref.Stdout)
				}
				if strings.Contains(res.Stderr, "warning") {
					t.Errorf("stderr:\n%s", res.Stderr)
				}
			})
		}
	})
}

// stackLauncher builds the mpiscope command into dir.
func stackLauncher(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "mpiscope")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/mpiscope")
	cmd.Dir = filepath.Join(mpitest.Testdata(""), "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the launcher: %v\n%s", err, b)
	}
	return bin
}

// TestStackLauncher stacks the tools with the launcher's -with.
func TestStackLauncher(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", dir)
		count, bytes := stackTool(t, f, "count", dir), stackTool(t, f, "bytes", dir)
		out, job := t.TempDir(), filepath.Join(t.TempDir(), "job")
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0",
			"MPISCOPE_LIBDIR": filepath.Dir(f.LibDir), "STACK_OUT": out},
			Args: []string{stackLauncher(t, dir), "-with", count + "," + bytes, app}})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
		}
		p, _, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, out, []string{"count", "bytes"})
	})
}

// TestStackError: a tool below mpiscope that refuses one MPI_Send (tag 99,
// MPI_ERR_TAG) without sending it: the program gets the error, the level
// above it (count) and mpiscope see the call, the refusing tool counts
// only what it sent.
func TestStackError(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", dir)
		count, bytes := stackTool(t, f, "count", dir), stackTool(t, f, "bytes", dir)
		out := t.TempDir()
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_STACK": count + ":" + bytes, "STACK_OUT": out,
			"STACK_BYTES_FAIL_TAG": "99", "STACK_APP_FAIL_TAG": "99"}, app)
		var got, want int
		for _, line := range strings.Split(res.Stdout, "\n") {
			if strings.HasPrefix(line, "rank 0: send with tag 99") {
				if _, err := fmtSscanf(line, &got, &want); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
			}
		}
		if got != want || want == 0 {
			t.Errorf("the program got error class %d, want MPI_ERR_TAG (%d):\n%s", got, want, res.Stdout)
		}
		if f := mpitest.Func(p, "MPI_Send"); f.Calls != 201 || f.Bytes != 2400 {
			t.Errorf("mpiscope: MPI_Send %d calls %d bytes, want 201 calls (one failed) and 2,400 bytes", f.Calls, f.Bytes)
		}
		kv, _ := toolFile(t, filepath.Join(out, "count.0.txt"))
		if kv["MPI_Send"] != 101 {
			t.Errorf("count (above the refusing tool) rank 0: MPI_Send %d calls, want 101", kv["MPI_Send"])
		}
		kv, _ = toolFile(t, filepath.Join(out, "bytes.0.txt"))
		if kv["sends"] != 100 || kv["bytes"] != 800 {
			t.Errorf("bytes rank 0: %v, want 100 sends of 800 bytes", kv)
		}
	})
}

// TestStackChangedArgs: a tool below mpiscope that turns MPI_Allreduce's
// MPI_SUM into MPI_MAX on the way down: the program gets the maximum (1,
// not the 2 of the sum over 2 ranks), the level below the tool (count)
// still sees every call once, and mpiscope its 10 calls of 4 bytes.
func TestStackChangedArgs(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", dir)
		count, bytes := stackTool(t, f, "count", dir), stackTool(t, f, "bytes", dir)
		out := t.TempDir()
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_STACK": bytes + ":" + count, "STACK_OUT": out,
			"STACK_BYTES_MAX": "1"}, app)
		want := "rank 0 of 2: sum 400 total 1\nrank 1 of 2: sum 100 total 1"
		if got := sortedOutput(res.Stdout); got != want {
			t.Errorf("output:\n%s\nwant:\n%s", got, want)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_Allreduce": {10, 40}})
		for rank := 0; rank < 2; rank++ {
			kv, _ := toolFile(t, filepath.Join(out, "count."+strconv.Itoa(rank)+".txt"))
			if kv["MPI_Allreduce"] != 5 {
				t.Errorf("count rank %d: MPI_Allreduce %d calls, want 5", rank, kv["MPI_Allreduce"])
			}
		}
	})
}

func fmtSscanf(line string, got, want *int) (int, error) {
	return fmt.Sscanf(line, "rank 0: send with tag 99 returned error class %d (MPI_ERR_TAG is %d)", got, want)
}

// TestStackBadLibraries: a library that does not exist and one that is no
// PMPI tool are left out, each with one warning on rank 0 naming it and
// saying why (also in the report); the tool after them works as level 1.
func TestStackBadLibraries(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", dir)
		count := stackTool(t, f, "count", dir)
		src := filepath.Join(dir, "plain.c")
		if err := os.WriteFile(src, []byte("int plain_function(int x) { return x + 1; }\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		plain := filepath.Join(dir, "libplain.so")
		if b, err := exec.Command(f.MPICC, "-shared", "-fPIC", "-o", plain, src).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		missing := filepath.Join(dir, "libmissing.so")
		out := t.TempDir()
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_STACK": missing + ":" + plain + ":" + count, "STACK_OUT": out}, app)
		for _, w := range []string{missing + ": no such file or directory", plain + " defines no MPI_ function (not a PMPI tool)"} {
			if n := strings.Count(strings.ToLower(res.Stderr), strings.ToLower(w)); n != 1 {
				t.Errorf("warning %q printed %d times, want once:\n%s", w, n, res.Stderr)
			}
			found := false
			for _, s := range p.Meta.Settings {
				found = found || (s.Name == "warning" && strings.Contains(strings.ToLower(s.Value), strings.ToLower(w)))
			}
			if !found {
				t.Errorf("report: no warning %q", w)
			}
		}
		checkStack(t, p, out, []string{"count"})
	})
}
