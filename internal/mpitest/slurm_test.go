package mpitest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// slurmCluster is a one-node Slurm cluster (munged, slurmctld, slurmd from
// Debian's slurm-wlm and munge) that a test runs as root in a temporary
// directory, with its own slurm.conf, munge key and ports, and tears down in
// t.Cleanup, also on failure: every process started with the cluster's
// marker in its environment (the daemons, slurmstepd, the job's tasks) is
// killed by its pid.
type slurmCluster struct {
	dir     string
	env     []string // for srun, salloc, sinfo, scancel
	marker  string   // MPISCOPETEST_SLURM_CLUSTER=<dir>, in every process of the cluster
	daemons []*exec.Cmd
}

// slurmConf is the cluster's configuration: one node of 4 CPUs (more than
// the machine may have: config_overrides), no cgroups, no accounting.
const slurmConf = `ClusterName=mpiscopetest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={{ctldport}}
SlurmdPort={{slurmdport}}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={{dir}}/munge/munge.sock
StateSaveLocation={{dir}}/state
SlurmdSpoolDir={{dir}}/spool
SlurmctldPidFile={{dir}}/slurmctld.pid
SlurmdPidFile={{dir}}/slurmd.pid
SlurmctldLogFile={{dir}}/slurmctld.log
SlurmdLogFile={{dir}}/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
KillWait=5
FirstJobId=1000
NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
`

// startSlurm starts the cluster and waits for its node to be idle.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		mpitest.Skip(t, "a Slurm cluster needs root (slurmd runs jobs as their user)")
	}
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "srun", "salloc", "sinfo", "scancel"} {
		if _, err := exec.LookPath(tool); err != nil {
			mpitest.Skip(t, "%s not installed (slurm-wlm, munge: run scripts/deps.sh): %v", tool, err)
		}
	}
	// The daemons' socket paths must be short (108 bytes).
	dir, err := os.MkdirTemp("", "mpiscope-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	c := &slurmCluster{dir: dir, marker: "MPISCOPETEST_SLURM_CLUSTER=" + dir}
	t.Cleanup(func() { c.stop(t) })
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "munge", "munge.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 2)
	conf := strings.NewReplacer("{{dir}}", dir,
		"{{ctldport}}", strconv.Itoa(ports[0]), "{{slurmdport}}", strconv.Itoa(ports[1])).Replace(slurmConf)
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The environment of everything the cluster runs: no variable of a
	// Slurm job or launcher the test itself may run in, no MPISCOPE_OUT.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "PMI") || strings.HasPrefix(k, "OMPI_") ||
			strings.HasPrefix(k, "MPISCOPE_") || k == "LD_PRELOAD" {
			continue
		}
		c.env = append(c.env, kv)
	}
	c.env = append(c.env, "SLURM_CONF="+filepath.Join(dir, "slurm.conf"), c.marker,
		"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_mpi_yield_when_idle=1", "MPISCOPE_SUMMARY=0")

	m := dir + "/munge/"
	c.daemon(t, "munged", "-F", "-f", "--socket="+m+"munge.sock", "--key-file="+m+"munge.key",
		"--pid-file="+m+"munged.pid", "--log-file="+m+"munged.log", "--seed-file="+m+"munged.seed")
	c.waitFor(t, "munged's socket", func() bool { _, err := os.Stat(m + "munge.sock"); return err == nil })
	c.daemon(t, "slurmctld", "-D", "-i")
	c.daemon(t, "slurmd", "-D", "-N", "localhost")
	c.waitFor(t, "the node to be idle", func() bool {
		out, _ := c.command(context.Background(), dir, "sinfo", "-h", "-o", "%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	return c
}

// freePorts returns n distinct TCP ports free at the time of the call.
func freePorts(t *testing.T, n int) []int {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// command is a Slurm client command in the cluster's environment.
func (c *slurmCluster) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	cmd.Dir = dir
	return cmd
}

// daemon starts a daemon in the foreground, in its own process group,
// killed by the kernel too if the test binary dies (Pdeathsig).
func (c *slurmCluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	out, err := os.Create(filepath.Join(c.dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.daemons = append(c.daemons, cmd)
	go cmd.Wait() // reaps it; ProcessState tells stop it is gone
}

// waitFor polls cond for up to 60 s; on timeout it fails with the logs.
func (c *slurmCluster) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s\n%s", what, c.logs())
}

// logs returns the daemons' output and log files.
func (c *slurmCluster) logs() string {
	var b strings.Builder
	for _, f := range []string{"munged.out", "munge/munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"} {
		data, err := os.ReadFile(filepath.Join(c.dir, f))
		if err == nil {
			fmt.Fprintf(&b, "--- %s\n%s", f, data)
		}
	}
	return b.String()
}

// stop cancels the cluster's jobs, stops the daemons (SIGTERM, then SIGKILL
// to their process groups) and kills by pid whatever else still carries
// the cluster's marker (slurmstepd and tasks, which leave slurmd's process
// group). It fails the test if any of them survives.
func (c *slurmCluster) stop(t *testing.T) {
	if len(c.daemons) == 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c.command(ctx, c.dir, "scancel", "--user=root").Run()
		cancel()
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		p := c.daemons[i].Process
		p.Signal(syscall.SIGTERM)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && alive(p.Pid); {
			time.Sleep(50 * time.Millisecond)
		}
		syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
	var left []int
	for try := 0; try < 50; try++ {
		left = c.marked()
		if len(left) == 0 {
			break
		}
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("Slurm test cluster: processes %v still running after teardown", left)
	}
	if t.Failed() {
		t.Logf("Slurm cluster logs:\n%s", c.logs())
	}
	os.RemoveAll(c.dir)
}

// alive reports whether pid is a process that has not exited (a zombie
// has exited).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// marked lists the live processes whose environment holds the marker.
func (c *slurmCluster) marked() []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+c.marker+"\x00")) {
			continue
		}
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// srunResult is one srun (or salloc) and the job id it reported.
type srunResult struct {
	JobID          string
	Stdout, Stderr string
}

var jobIDRe = regexp.MustCompile(`(?m)^s(?:run|alloc): (?:jobid |Granted job allocation )(\d+)`)

// run runs a Slurm client (srun -v ... or salloc ...) in dir and fails the
// test if it fails.
func (c *slurmCluster) run(t *testing.T, dir, name string, args ...string) srunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := c.command(ctx, dir, name, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := srunResult{Stdout: so.String(), Stderr: se.String()}
	if err != nil {
		t.Fatalf("%s %s: %v (%v)\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, ctx.Err(), r.Stdout, r.Stderr)
	}
	m := jobIDRe.FindStringSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("%s %s: no job id in its output:\n%s", name, strings.Join(args, " "), r.Stderr)
	}
	r.JobID = m[1]
	return r
}

// slurmLaunch is how a family's ranks get their PMI under srun, and why
// another way cannot work with the installed packages.
type slurmLaunch struct {
	family, mpi string
}

// slurmCombos decides, from the MPI builds and `srun --mpi=list`, which
// family × PMI plugin can launch; the others are logged with the evidence.
func slurmCombos(t *testing.T, c *slurmCluster) []slurmLaunch {
	out, err := c.command(context.Background(), c.dir, "srun", "--mpi=list").CombinedOutput()
	if err != nil {
		t.Fatalf("srun --mpi=list: %v\n%s", err, out)
	}
	plugins := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if l := strings.TrimSpace(l); l != "" && !strings.Contains(l, " ") {
			plugins[l] = true
		}
	}
	// Open MPI's PMI clients are its pmix components: ext* (an external
	// PMIx: srun --mpi=pmix), s1/s2 (Slurm's PMI-1/PMI-2 libraries).
	var ompiPMI []string
	if b, err := exec.Command("ompi_info", "--parsable").Output(); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Split(l, ":"); len(f) >= 3 && f[0] == "mca" && f[1] == "pmix" {
				ompiPMI = append(ompiPMI, f[2])
			}
		}
	}
	has := func(prefix string) bool {
		for _, s := range ompiPMI {
			if strings.HasPrefix(s, prefix) {
				return true
			}
		}
		return false
	}
	// MPICH speaks PMI-1/PMI-2 (its own simple PMI client) unless it was
	// configured with PMIx.
	mpichConf := ""
	if b, err := exec.Command("mpichversion").Output(); err == nil {
		mpichConf = string(b)
	}
	mpichPMIx := strings.Contains(mpichConf, "--with-pmix")
	can := map[slurmLaunch]string{ // "" = can launch, else why not
		{"openmpi", "pmix"}: why(!has("ext") && !has("pmix"), "Open MPI has no external PMIx client (ompi_info pmix components: %v)", ompiPMI),
		{"openmpi", "pmi2"}: why(!has("s2"), "Open MPI has no PMI-2 client, component s2 (ompi_info pmix components: %v)", ompiPMI),
		{"mpich", "pmi2"}:   why(mpichPMIx, "MPICH was configured --with-pmix (mpichversion)"),
		{"mpich", "pmix"}:   why(!mpichPMIx, "MPICH was not configured --with-pmix, its client speaks PMI-1/PMI-2 only (mpichversion: %s)", configureLine(mpichConf)),
	}
	var run []slurmLaunch
	for _, l := range []slurmLaunch{{"openmpi", "pmix"}, {"openmpi", "pmi2"}, {"mpich", "pmi2"}, {"mpich", "pmix"}} {
		switch {
		case !plugins[l.mpi]:
			t.Logf("%s with srun --mpi=%s: cannot launch: Slurm has no %s plugin (srun --mpi=list: %q)", l.family, l.mpi, l.mpi, out)
		case can[l] != "":
			t.Logf("%s with srun --mpi=%s: cannot launch: %s", l.family, l.mpi, can[l])
		default:
			run = append(run, l)
		}
	}
	return run
}

func why(cannot bool, format string, args ...any) string {
	if !cannot {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

func configureLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "MPICH configure:") {
			return strings.TrimSpace(l)
		}
	}
	return "not found"
}

// onlyJobDir returns the single mpiscope-* directory in dir.
func onlyJobDir(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "mpiscope-*"))
	if len(m) != 1 {
		t.Fatalf("want one job directory in %s, got %v", dir, m)
	}
	return filepath.Base(m[0])
}

// TestSlurm runs MPI programs with srun on a one-node Slurm cluster started
// by the test: through the mpiscope launcher and with LD_PRELOAD, for each
// family with the PMI plugin it can use; the job directory is named after
// the job step (mpiscope-<app>-<N>r-slurm<job>.<step>) and the profile has
// the exact counts of the program. Two steps of one allocation get two
// directories; the sessions model (MPICH), whose ranks cannot communicate to
// agree on a name, finds the same one on every rank.
func TestSlurm(t *testing.T) {
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	if _, err := os.Stat(bin); err != nil {
		mpitest.Skip(t, "no %s: run make cli", bin)
	}
	c := startSlurm(t)
	combos := slurmCombos(t, c)
	ran := map[string]bool{}
	for _, l := range combos {
		t.Run(l.family+"-"+l.mpi, func(t *testing.T) {
			f := mpitest.Get(t, l.family)
			ran[l.family] = true
			src := t.TempDir()
			prog := mpitest.Compile(t, f.MPICC, "p2p.c", src)
			// 2 ranks of p2p.c (see there): per rank 1,010 MPI_Send of
			// 8,000 bytes in all (10 to MPI_PROC_NULL), 1,011 MPI_Recv of
			// 8,000 + 20 + 96 bytes.
			want := map[string][2]int64{"MPI_Send": {2020, 16000}, "MPI_Recv": {2022, 16232}}
			for _, how := range []struct {
				name string
				args []string
			}{
				{"launcher", []string{"-v", "--mpi=" + l.mpi, "-n", "2", bin, prog}},
				{"LD_PRELOAD", []string{"-v", "--mpi=" + l.mpi, "-n", "2", "--export=ALL,LD_PRELOAD=" + f.Lib(), prog}},
			} {
				dir := t.TempDir()
				r := c.run(t, dir, "srun", how.args...)
				if got, want := onlyJobDir(t, dir), "mpiscope-p2p-2r-slurm"+r.JobID+".0"; got != want {
					t.Errorf("%s: job directory %s, want %s", how.name, got, want)
				}
				p, _, err := profile.Load(filepath.Join(dir, onlyJobDir(t, dir)))
				if err != nil {
					t.Fatalf("%s: %v\n%s", how.name, err, r.Stderr)
				}
				if p.Meta.NumRanks != 2 {
					t.Errorf("%s: %d ranks, want 2", how.name, p.Meta.NumRanks)
				}
				mpitest.Want(t, p, want)
			}

			// Two steps of one allocation: .0 and .1, same job.
			dir := t.TempDir()
			step := fmt.Sprintf("srun --mpi=%s -n 2 %s %s", l.mpi, bin, prog)
			r := c.run(t, dir, "salloc", "-n", "2", "sh", "-c", step+" && "+step)
			for _, s := range []string{"0", "1"} {
				job := filepath.Join(dir, "mpiscope-p2p-2r-slurm"+r.JobID+"."+s)
				p, _, err := profile.Load(job)
				if err != nil {
					m, _ := filepath.Glob(filepath.Join(dir, "*"))
					t.Fatalf("step %s: %v (directory holds %v)\n%s", s, err, m, r.Stderr)
				}
				mpitest.Want(t, p, want)
			}

			if l.family == "mpich" {
				sess := mpitest.Compile(t, f.MPICC, "session.c", src)
				dir := t.TempDir()
				r := c.run(t, dir, "srun", "-v", "--mpi="+l.mpi, "-n", "2", bin, sess)
				if got, want := onlyJobDir(t, dir), "mpiscope-session-2r-slurm"+r.JobID+".0"; got != want {
					t.Errorf("sessions: job directory %s, want %s", got, want)
				}
				p, _, err := profile.Load(filepath.Join(dir, onlyJobDir(t, dir)))
				if err != nil {
					t.Fatal(err)
				}
				mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {40, 320}, "MPI_Recv": {40, 320}})
			}
		})
	}
	for _, fam := range []string{"openmpi", "mpich"} {
		if !ran[fam] && mpitest.InCI() {
			t.Errorf("CI=true and %s could not be launched with srun in any way (see the log)", fam)
		}
	}
}
