package mpitest_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// qmpiLib builds testdata/progs/qmpi/<name>.c as a shared library in dir.
func qmpiLib(t *testing.T, f mpitest.Family, name, dir string) string {
	t.Helper()
	so := filepath.Join(dir, "lib"+name+".so")
	cmd := exec.Command(f.MPICC, "-O1", "-g", "-shared", "-fPIC", "-o", so, mpitest.Testdata("qmpi/"+name+".c"), "-ldl")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	return so
}

// qmpiApp builds stack/app.c linked with the QMPI tool qcount (whose
// constructor registers it), in qcount's directory.
func qmpiApp(t *testing.T, f mpitest.Family, qcount string) string {
	t.Helper()
	dir := filepath.Dir(qcount)
	return mpitest.Compile(t, f.MPICC, "stack/app.c", dir, "-Wl,--no-as-needed", qcount, "-Wl,-rpath,"+dir)
}

// checkQMPIApp checks mpiscope's profile of stack/app.c on 2 ranks: every
// call counted once, at its callsite in app.c.
func checkQMPIApp(t *testing.T, p *profile.Profile) {
	t.Helper()
	mpitest.Want(t, p, map[string][2]int64{
		"MPI_Send": {200, 2400}, "MPI_Recv": {200, 2400}, "MPI_Barrier": {20, 0}, "MPI_Allreduce": {10, 40},
		"MPI_Comm_rank": {2, 0}, "MPI_Comm_size": {2, 0},
	})
	lines := map[string]map[int]bool{"MPI_Send": {25: true, 30: true}, "MPI_Recv": {26: true, 29: true}}
	for _, s := range p.Sites {
		if want, ok := lines[s.Func]; ok && (filepath.Base(s.Loc.File) != "app.c" || !want[s.Loc.Line]) {
			t.Errorf("%s: callsite %s:%d (%s), want app.c line %v", s.Func, s.Loc.File, s.Loc.Line, s.Loc.Function, want)
		}
	}
}

// checkQCount checks the files of the QMPI tool qcount (both ranks): it
// registered, the library called its initialization, and it saw each of
// the program's calls once, and none of mpiscope's.
func checkQCount(t *testing.T, out string) {
	t.Helper()
	for rank := 0; rank < 2; rank++ {
		kv, _ := toolFile(t, filepath.Join(out, "qcount."+strconv.Itoa(rank)+".txt"))
		want := map[string]int64{"reg": 0, "init": 1, "MPI_Send": 100, "MPI_Recv": 100, "MPI_Barrier": 10, "MPI_Allreduce": 5, "bytes": 800 * int64(rank+1)}
		for k, v := range want {
			if kv[k] != v {
				t.Errorf("qcount rank %d: %s %d, want %d", rank, k, kv[k], v)
			}
		}
	}
}

// settings returns the values of the report header's settings called name.
func settings(p *profile.Profile, name string) []string {
	var v []string
	for _, s := range p.Meta.Settings {
		if s.Name == name {
			v = append(v, s.Value)
		}
	}
	return v
}

// qmpiRun profiles app on 2 ranks with the libraries preload and env.
func qmpiRun(t *testing.T, f mpitest.Family, preload string, env map[string]string, app string) (*profile.Profile, mpitest.Result) {
	t.Helper()
	job := filepath.Join(t.TempDir(), "job")
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
	for k, v := range env {
		e[k] = v
	}
	return f.ExecLoad(t, mpitest.Run{NP: 2, Env: e, Preload: preload, Args: []string{app}}, job)
}

// checkTwoTools runs mpiscope and qcount (linked into app) as QMPI tools
// in both orders of MPIR_CVAR_QMPI_TOOL_LIST (mpiscope in QMPI mode because
// the list names it): exact counts at both tools, no warning, and the
// report's header gives mpiscope's place in the list. Then MPISCOPE_QMPI=1
// with no list and plain, the program without qcount: mpiscope makes
// itself the list. Last, MPISCOPE_QMPI=1 with a list naming qcount only:
// qcount registers first (its constructor runs before mpiscope's), so the
// library has read its list before mpiscope can add itself; mpiscope is
// never initialized as a QMPI tool, warns once and profiles by PMPI, and
// qcount still counts every call once. So with MPISCOPE_DEPTH=2 (call
// paths need the PMPI wrappers). plain, built with frame pointers, gets
// depth 1 from the default (auto) in QMPI mode, not a refusal.
func checkTwoTools(t *testing.T, f mpitest.Family, preload, app, plain string) {
	for _, c := range []struct{ name, list, qmpi, app, setting, warning, depth string }{
		{"mpiscope-first", "mpiscope:qcount", "", app, "tool 1 of mpiscope:qcount", "", ""},
		{"qcount-first", "qcount:mpiscope", "", app, "tool 2 of qcount:mpiscope", "", ""},
		{"setting", "", "1", plain, "tool 1 of mpiscope", "", ""},
		{"unlisted", "qcount", "1", app, "", `; name mpiscope in MPIR_CVAR_QMPI_TOOL_LIST (now "mpiscope:qcount") when other QMPI tools are loaded; profiling by PMPI interception instead`, ""},
		// Call paths live in the PMPI wrappers: QMPI mode is refused.
		{"depth", "mpiscope:qcount", "", app, "", "QMPI mode: the piggyback channel and call paths (MPISCOPE_DEPTH > 1) work in the PMPI wrappers only; profiling by PMPI interception instead", "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			env := map[string]string{"QMPI_OUT": out}
			if c.list != "" {
				env["MPIR_CVAR_QMPI_TOOL_LIST"] = c.list
			}
			if c.qmpi != "" {
				env["MPISCOPE_QMPI"] = c.qmpi
			}
			if c.depth != "" {
				env["MPISCOPE_DEPTH"] = c.depth
			}
			p, res := qmpiRun(t, f, preload, env, c.app)
			checkQMPIApp(t, p)
			if c.app == app {
				checkQCount(t, out)
			}
			if got := settings(p, "qmpi"); c.setting != "" && (len(got) != 1 || got[0] != c.setting) || c.setting == "" && got != nil {
				t.Errorf("report header: qmpi %q, want %q", got, c.setting)
			}
			// plain keeps frame pointers: the default depth (auto) would
			// take paths, which QMPI mode has not; it takes 1 instead.
			if d := settings(p, "MPISCOPE_DEPTH"); c.app == plain && (len(d) != 1 || !strings.HasPrefix(d[0], "1 (auto: QMPI mode")) {
				t.Errorf("report header: MPISCOPE_DEPTH %q, want 1 (auto: QMPI mode ...)", d)
			}
			if c.warning == "" && strings.Contains(res.Stderr, "warning") ||
				c.warning != "" && (strings.Count(res.Stderr, "warning") != 1 || !strings.Contains(res.Stderr, c.warning)) {
				t.Errorf("stderr, want %q:\n%s", c.warning, res.Stderr)
			}
		})
	}
}

// TestQMPIFallback: MPISCOPE_QMPI=1 where the library cannot take QMPI
// tools (Open MPI has no QMPI; Debian's MPICH 4.0.2 was built without
// --enable-qmpi: QMPI_Register_tool_name returns 44) warns once, on rank
// 0, keeps the warning in the report, and profiles by PMPI exactly as
// without the setting. (An MPICH that dispatches through QMPI takes
// mpiscope as its only QMPI tool instead.)
func TestQMPIFallback(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", t.TempDir())
		p, res := qmpiRun(t, f, f.Lib(), map[string]string{"MPISCOPE_QMPI": "1"}, app)
		checkQMPIApp(t, p)
		want := "the MPI library has no QMPI"
		if f.Name == "mpich" {
			want = `QMPI_Register_tool_name("mpiscope") returned 44 (MPI_ERR_UNSUPPORTED_OPERATION: an MPICH built without --enable-qmpi)`
		}
		if f.Name == "mpich" && qmpiDispatches(t, f) == "" {
			// An MPICH built with --enable-qmpi: QMPI mode, no fallback.
			if q := settings(p, "qmpi"); len(q) != 1 || q[0] != "tool 1 of mpiscope" {
				t.Errorf("report header: qmpi %q, want tool 1 of mpiscope", q)
			}
			return
		}
		if n := strings.Count(res.Stderr, "mpiscope: warning: QMPI mode: "); n != 1 || !strings.Contains(res.Stderr, want) ||
			!strings.Contains(res.Stderr, "; profiling by PMPI interception instead\n") || strings.Count(res.Stderr, "warning") != 1 {
			t.Errorf("stderr has %d QMPI warnings, want one saying %q:\n%s", n, want, res.Stderr)
		}
		if w := settings(p, "warning"); len(w) != 1 || !strings.Contains(w[0], want) {
			t.Errorf("report header: warnings %q, want one saying %q", w, want)
		}
		if q := settings(p, "qmpi"); q != nil {
			t.Errorf("report header: qmpi %q, want none", q)
		}
	})
}

// qmpiDispatches runs the QMPI tool qcount alone under the installed
// MPICH, without mpiscope, and returns why the library does not dispatch
// to it ("" when it does): the evidence for TestQMPITools's skip.
func qmpiDispatches(t *testing.T, f mpitest.Family) string {
	t.Helper()
	dir := t.TempDir()
	app := qmpiApp(t, f, qmpiLib(t, f, "qcount", dir))
	res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPIR_CVAR_QMPI_TOOL_LIST": "qcount", "QMPI_OUT": dir}, Args: []string{app}})
	if res.Err != nil {
		t.Fatalf("mpirun: %v\n%s", res.Err, res.Stderr)
	}
	kv, _ := toolFile(t, filepath.Join(dir, "qcount.0.txt"))
	if kv["init"] == 1 && kv["MPI_Send"] == 100 {
		return ""
	}
	conf := "mpichversion: "
	b, err := exec.Command(filepath.Join(filepath.Dir(f.MPICC), "mpichversion")).Output()
	switch {
	case err != nil:
		conf += err.Error()
	case strings.Contains(string(b), "--enable-qmpi"):
		conf += "configured with --enable-qmpi"
	default:
		conf += "configured without --enable-qmpi"
	}
	return "the installed MPICH does not dispatch through QMPI: with MPIR_CVAR_QMPI_TOOL_LIST=qcount, " +
		"QMPI_Register_tool_name returned " + strconv.FormatInt(kv["reg"], 10) +
		" (44 is MPI_ERR_UNSUPPORTED_OPERATION), the library called the tool's initialization " + strconv.FormatInt(kv["init"], 10) +
		" times and the tool saw " + strconv.FormatInt(kv["MPI_Send"], 10) + " of rank 0's 100 MPI_Send; " + conf
}

// TestQMPITools: mpiscope and a counting QMPI tool (testdata/progs/qmpi/
// qcount.c) together in MPIR_CVAR_QMPI_TOOL_LIST, under the installed
// MPICH: exact counts at both. Skipped, with the evidence, where the
// library does not dispatch through QMPI (Debian 12's MPICH 4.0.2);
// TestQMPIEmulated runs the same checks there.
func TestQMPITools(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	if why := qmpiDispatches(t, f); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	checkTwoTools(t, f, f.Lib(), qmpiApp(t, f, qmpiLib(t, f, "qcount", dir)), mpitest.Compile(t, f.MPICC, "stack/app.c", t.TempDir(), "-fno-omit-frame-pointer"))
}

// TestQMPIEmulated runs TestQMPITools's checks on any MPICH, with
// testdata/progs/qmpi/fakeqmpi.c preloaded after mpiscope: a library of
// the test that dispatches MPI_Send, MPI_Recv, MPI_Barrier,
// MPI_Allreduce, MPI_Comm_rank and MPI_Comm_size through QMPI tools as an
// MPICH built with --enable-qmpi does. So mpiscope's QMPI mode (the
// registration, the probe, the trampolines, the QMPI wrappers, the PMPI
// wrappers passing calls on) is tested where the installed MPICH does not
// dispatch.
func TestQMPIEmulated(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	dir := t.TempDir()
	fake := qmpiLib(t, f, "fakeqmpi", dir)
	app := qmpiApp(t, f, qmpiLib(t, f, "qcount", dir))
	checkTwoTools(t, f, f.Lib()+":"+fake, app, mpitest.Compile(t, f.MPICC, "stack/app.c", t.TempDir(), "-fno-omit-frame-pointer"))
}
