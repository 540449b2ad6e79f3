package cli

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestAutoMemory(t *testing.T) {
	const meminfo = "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"
	v1 := "5:memory:/slurm/uid_0/job_7\n0::/\n"
	v2 := "0::/system.slice/job_8\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"nothing readable", nil, 1 << 30},
		{"meminfo only", map[string]string{"/proc/meminfo": meminfo}, 20000000 << 10 / 2},
		{"v1 limit below", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": v1,
			"/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes": "8589934592\n",
			"/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes": "1073741824\n"}, 7 << 30 / 2},
		{"v1 no limit", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": v1,
			"/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes": "9223372036854771712\n",
			"/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes": "1073741824\n"}, 20000000 << 10 / 2},
		{"v1 in a container (own cgroup at the root)", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": v1,
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "4294967296\n",
			"/sys/fs/cgroup/memory/memory.usage_in_bytes": "0\n"}, 2 << 30},
		{"v2 limit", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": v2,
			"/sys/fs/cgroup/system.slice/job_8/memory.max":     "2147483648\n",
			"/sys/fs/cgroup/system.slice/job_8/memory.current": "536870912\n"}, 768 << 20},
		{"v2 max", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": v2,
			"/sys/fs/cgroup/system.slice/job_8/memory.max":     "max\n",
			"/sys/fs/cgroup/system.slice/job_8/memory.current": "536870912\n"}, 20000000 << 10 / 2},
		{"v2 full: the floor", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": v2,
			"/sys/fs/cgroup/system.slice/job_8/memory.max":     "2147483648\n",
			"/sys/fs/cgroup/system.slice/job_8/memory.current": "3147483648\n"}, minAutoMemory},
		{"cgroup without meminfo", map[string]string{"/proc/self/cgroup": v2,
			"/sys/fs/cgroup/system.slice/job_8/memory.max":     "2147483648\n",
			"/sys/fs/cgroup/system.slice/job_8/memory.current": "0\n"}, 1 << 30},
	} {
		read := func(p string) ([]byte, error) {
			if s, ok := c.files[p]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		}
		if got := autoMemoryFrom(read); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if m := autoMemory(); m < minAutoMemory {
		t.Errorf("autoMemory on this machine: %d, want at least %d", m, minAutoMemory)
	}
}

// TestCollectorForAnalysis: the analysis runs with analyzeGCPercent and
// the previous setting comes back; a GOGC of the user's is left alone.
func TestCollectorForAnalysis(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	restore := collectorForAnalysis(func(string) string { return "" })
	if got := debug.SetGCPercent(analyzeGCPercent); got != analyzeGCPercent {
		t.Errorf("during the analysis: GC percent %d, want %d", got, analyzeGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after: GC percent %d, want 100", got)
	}
	restore = collectorForAnalysis(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want 100 (unchanged)", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, after: GC percent %d, want 100", got)
	}
}
