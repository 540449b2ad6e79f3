package cli

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

// writeRank writes rank's trace file: header, calibration, the world
// communicator, then one E block per slice of evs (damaged: an E block
// whose payload does not decode, its checksum right, before them), and
// the final block. It returns the file's path.
func writeRank(t *testing.T, job string, rank, size int, evs [][]trace.Event, damaged bool) string {
	t.Helper()
	path := trace.RankPath(job, rank)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw, _ := trace.NewBlockWriter(f)
	bw.Block(trace.BHeader, trace.EncodeHeader(&trace.Header{Rank: rank, Size: size, Host: "h", Family: "test",
		Timer: "clock", FnNames: []string{"MPI_Barrier", "MPI_Comm_rank"}, FnClasses: []string{"coll", "env"}}))
	bw.Block(trace.BCalib, trace.EncodeCalib(trace.Calib{NsPerTick: 1}))
	world := make([]int, size)
	for i := range world {
		world[i] = i
	}
	bw.Block(trace.BComm, trace.EncodeComm(&trace.CommDef{ID: 0, Key: "world", Size: size, World: world}))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	for i, b := range evs {
		if damaged && i == len(evs)-1 {
			bw.Block(trace.BEvents, []byte{1, 5, 200, 0xff, 0xff})
		}
		p, err := trace.AppendEvents(nil, 7, b, fw, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		bw.Block(trace.BEvents, p)
	}
	bw.Block(trace.BFinal, trace.EncodeFinal(trace.Final{}))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// calls returns n calls of MPI_Comm_rank from tick t0, 100 ticks apart.
func calls(n int, t0 uint64) []trace.Event {
	var evs []trace.Event
	for i := 0; i < n; i++ {
		t := t0 + uint64(i)*100
		evs = append(evs, trace.Event{Kind: trace.KCall, Fn: 1, Comm: 0, T0: t, T1: t + 50, PC: 0x401000,
			SPeer: -1, STag: -1, RPeer: -1, RTag: -1})
	}
	return evs
}

func convert(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var so, se bytes.Buffer
	err := Main(append([]string{"convert"}, args...), &so, &se)
	return se.String(), err
}

func otf2Records(t *testing.T, anchor string) map[string]int {
	t.Helper()
	bin, err := exec.LookPath("otf2-print")
	if err != nil {
		mpitest.Skip(t, "otf2-print not installed")
	}
	out, err := exec.Command(bin, anchor).CombinedOutput()
	if err != nil {
		t.Fatalf("otf2-print: %v\n%s", err, out)
	}
	n := map[string]int{}
	re := regexp.MustCompile(`^([A-Z_]+)\s+\d+\s+\d+`)
	for _, l := range strings.Split(string(out), "\n") {
		if g := re.FindStringSubmatch(l); g != nil {
			n[g[1]]++
		}
	}
	return n
}

// TestConvertDamaged: a rank file with a bad checksum is skipped, a rank
// with a block that does not decode is converted up to it; each gets a
// warning with the file and the offset, the other ranks are converted,
// and the command succeeds.
func TestConvertDamaged(t *testing.T) {
	job := t.TempDir()
	writeRank(t, job, 0, 3, [][]trace.Event{calls(10, 1000)}, false)
	bad := writeRank(t, job, 1, 3, [][]trace.Event{calls(10, 1000)}, false)
	b, _ := os.ReadFile(bad)
	b[len(b)-30] ^= 0x40
	os.WriteFile(bad, b, 0o666)
	half := writeRank(t, job, 2, 3, [][]trace.Event{calls(4, 1000), calls(6, 5000)}, true)
	stderr, err := convert(t, "--otf2", job)
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	for _, re := range []string{
		regexp.QuoteMeta(bad) + `: corrupt trace at offset \d+: .*\(rank skipped\)`,
		regexp.QuoteMeta(half) + `: corrupt trace at offset \d+: block 'E': .*rank 2's events from there on were not converted`,
	} {
		if !regexp.MustCompile(re).MatchString(stderr) {
			t.Errorf("stderr lacks %s:\n%s", re, stderr)
		}
	}
	// Rank 0's 10 calls and rank 2's 4 before the damaged block.
	n := otf2Records(t, filepath.Join(job, "otf2", "traces.otf2"))
	if n["ENTER"] != 14 || n["LEAVE"] != 14 {
		t.Errorf("otf2-print: %d ENTER, %d LEAVE, want 14", n["ENTER"], n["LEAVE"])
	}
	if stderr, err := convert(t, "--perfetto", job); err != nil {
		t.Fatalf("convert --perfetto: %v\n%s", err, stderr)
	}
	js, _ := os.ReadFile(filepath.Join(job, "trace.json"))
	if c := strings.Count(string(js), `"ph":"X"`); c != 14 {
		t.Errorf("trace.json: %d slices, want 14", c)
	}
}

// TestConvertFails: when nothing can be converted the command fails and
// leaves no output behind (no empty otf2/, no empty trace.json).
func TestConvertFails(t *testing.T) {
	job := t.TempDir()
	for r := 0; r < 2; r++ {
		writeRank(t, job, r, 2, [][]trace.Event{calls(3, 1000)}, true)
	}
	for _, c := range []struct{ flag, out string }{{"--otf2", "otf2"}, {"--perfetto", "trace.json"}} {
		stderr, err := convert(t, c.flag, job)
		if err == nil || !strings.Contains(err.Error(), "no event could be converted") {
			t.Errorf("%s: err %v, want no event could be converted\n%s", c.flag, err, stderr)
		}
		ents, _ := os.ReadDir(job)
		for _, e := range ents {
			if e.Name() != "trace" {
				t.Errorf("%s: %s left behind", c.flag, e.Name())
			}
		}
	}
	// Every rank file unreadable: an error naming the first.
	for r := 0; r < 2; r++ {
		os.WriteFile(trace.RankPath(job, r), []byte("garbage"), 0o666)
	}
	if _, err := convert(t, "--otf2", job); err == nil || !strings.Contains(err.Error(), "none of the 2 trace files") {
		t.Errorf("err %v, want none of the 2 trace files", err)
	}
}

// TestConvertCallsites: the sample on 2 ranks, traced; converted, each
// call's callsite is its source line: in Perfetto's args and as OTF2
// calling contexts (the MPI_Allreduce of line 45, 200 times per rank).
func TestConvertCallsites(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, mpitest.Testdata("../../examples/sample.c"), dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0",
			"MPISCOPE_TRACE": "1"}, Preload: f.Lib(), Args: []string{prog}, Dir: dir})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s", res.Err, res.Stderr)
		}
		if stderr, err := convert(t, "--perfetto", job); err != nil {
			t.Fatalf("convert: %v\n%s", err, stderr)
		}
		js, _ := os.ReadFile(filepath.Join(job, "trace.json"))
		for re, n := range map[string]int{
			`"name":"MPI_Allreduce"[^\n]*"callsite":"[^"]*sample\.c:45","caller":"main"`: 400,
			`"name":"MPI_Waitall"[^\n]*"callsite":"[^"]*sample\.c:43","caller":"main"`:   400,
			`"callsite":"0x`: 0,
		} {
			if c := len(regexp.MustCompile(re).FindAllIndex(js, -1)); c != n {
				t.Errorf("trace.json: %d slices %s, want %d", c, re, n)
			}
		}
		if stderr, err := convert(t, "--otf2", job); err != nil {
			t.Fatalf("convert: %v\n%s", err, stderr)
		}
		anchor := filepath.Join(job, "otf2", "traces.otf2")
		out, err := exec.Command("otf2-print", anchor).CombinedOutput()
		if err != nil {
			t.Fatalf("otf2-print: %v\n%s", err, out)
		}
		if c := len(regexp.MustCompile(`(?m)^CALLING_CONTEXT_ENTER .*"MPI_Allreduce@[^"]*sample\.c:45"`).FindAllIndex(out, -1)); c != 400 {
			t.Errorf("otf2-print: %d calling context enters of MPI_Allreduce at sample.c:45, want 400", c)
		}
		n := otf2Records(t, anchor)
		if n["CALLING_CONTEXT_ENTER"] != n["CALLING_CONTEXT_LEAVE"] || n["CALLING_CONTEXT_ENTER"] < 2*1202 {
			t.Errorf("otf2-print: %d calling context enters, %d leaves; want as many, at least %d", n["CALLING_CONTEXT_ENTER"], n["CALLING_CONTEXT_LEAVE"], 2*1202)
		}
	})
}

// TestConvertSpace: a conversion whose estimated output exceeds the free
// space is refused with the sizes; -force converts anyway.
func TestConvertSpace(t *testing.T) {
	job := t.TempDir()
	writeRank(t, job, 0, 1, [][]trace.Event{calls(1000, 1000)}, false)
	save := freeSpace
	defer func() { freeSpace = save }()
	var asked string
	freeSpace = func(dir string) (uint64, error) { asked = dir; return 200 << 10, nil }
	// 1,000 events: about 63 KiB of OTF2, 375 KiB of JSON.
	_, err := convert(t, "--otf2", job)
	if err != nil || asked != job {
		t.Errorf("OTF2 in 200 KiB free: %v (free space asked of %q, want %q)", err, asked, job)
	}
	_, err = convert(t, "--perfetto", job)
	want := "the output needs about 375 KiB (1000 events) and " + job + " has 200 KiB free"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Perfetto in 200 KiB free: %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(job, "trace.json")); err == nil {
		t.Errorf("trace.json written after the refusal")
	}
	if _, err := convert(t, "--perfetto", "-force", job); err != nil {
		t.Errorf("-force: %v", err)
	}
	// -o in a directory yet to be made: the space of its first existing parent.
	out := filepath.Join(job, "new", "sub", "t.json")
	if _, err := convert(t, "--perfetto", "-o", out, job); err == nil || asked != job {
		t.Errorf("-o %s: %v, free space asked of %q, want %q", out, err, asked, job)
	}
}

// TestConvertToDevice: an output that exists and is not a regular file (a
// named pipe here; /dev/null, a terminal) is written in place, never
// replaced: Perfetto's JSON goes through it, and OTF2, a directory, is
// refused. Until 2026-11-28 the output went to a temporary file beside it,
// renamed over it at the end (as root, -o /dev/null left a regular file
// at /dev/null; OTF2 removed it first).
func TestConvertToDevice(t *testing.T) {
	job := t.TempDir()
	for r := 0; r < 2; r++ {
		writeRank(t, job, r, 2, [][]trace.Event{calls(3, 1000)}, false)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go readPipe(fifo, got)
	stderr, err := convert(t, "--perfetto", "-o", fifo, job)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var b []byte
	select {
	case b = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing read from the pipe")
	}
	var doc struct{ TraceEvents []any }
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.TraceEvents) == 0 {
		t.Errorf("through the pipe: %d bytes, %d events, %v", len(b), len(doc.TraceEvents), err)
	}
	if _, err := convert(t, "--otf2", "-o", fifo, job); err == nil {
		t.Errorf("--otf2 into a pipe: no error")
	}
	// --pprof of a profile file, through the pipe.
	mps := filepath.Join(t.TempDir(), "p.mps")
	if err := profile.WriteFile(mps, &profile.Profile{}); err != nil {
		t.Fatal(err)
	}
	go readPipe(fifo, got)
	if stderr, err := convert(t, "--pprof", "-o", fifo, mps); err != nil {
		t.Errorf("--pprof: %v\n%s", err, stderr)
	}
	select {
	case b = <-got:
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("--pprof through the pipe: %d bytes, not gzip", len(b))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nothing read from the pipe (--pprof)")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is no longer one: %v, %v", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files beside the pipe, want none", len(ents)-1)
	}
}

// readPipe sends what one writer of the named pipe fifo wrote, nil when it
// cannot be opened.
func readPipe(fifo string, got chan<- []byte) {
	f, err := os.Open(fifo)
	if err != nil {
		got <- nil
		return
	}
	b, _ := io.ReadAll(f)
	f.Close()
	got <- b
}
