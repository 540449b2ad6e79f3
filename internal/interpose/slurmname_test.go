package interpose

import "testing"

// TestSlurmJobDirName: inside a Slurm job step the default job directory is
// named after the step, from the environment alone; outside Slurm, or with
// a malformed id, there is no Slurm name (the time-stamped one is used).
func TestSlurmJobDirName(t *testing.T) {
	for _, c := range []struct {
		job, step, want string
	}{
		{"4242", "0", "mpiscope-my_app-64r-slurm4242.0"},
		{"4242", "17", "mpiscope-my_app-64r-slurm4242.17"},
		{"4242", "", "mpiscope-my_app-64r-slurm4242"},      // mpirun inside sbatch/salloc
		{"4242", "batch", "mpiscope-my_app-64r-slurm4242"}, // not a number: left out
		{"", "0", ""},     // not in Slurm
		{"../x", "0", ""}, // never part of a path
		{"12a", "", ""},
	} {
		env := map[string]string{"SLURM_JOB_ID": c.job, "SLURM_STEP_ID": c.step}
		got := slurmJobDirName("/path/to/my app", 64, func(k string) string { return env[k] })
		if got != c.want {
			t.Errorf("SLURM_JOB_ID=%q SLURM_STEP_ID=%q: got %q, want %q", c.job, c.step, got, c.want)
		}
	}
}
