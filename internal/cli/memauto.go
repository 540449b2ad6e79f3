package cli

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// autoMemory is analyze's default -mem ("auto"): half of the memory this
// process may still take, the smaller of the kernel's MemAvailable and
// its memory cgroup's room (a Slurm job's limit less its usage; cgroup v2
// or v1), at least 256 MiB. The bound counts the message records at their
// upper bound (one per event) and the call log; the garbage collector's
// headroom comes on top, hence half. When neither can be read, 1 GiB
// (analyze.DefaultMemory). A fixed 1 GiB spilled a trace of 10^8 events to
// temporary files and doubled its CPU time (docs/performance.md, "Offline
// analysis of 10^8 events").
func autoMemory() int64 {
	return autoMemoryFrom(os.ReadFile)
}

const minAutoMemory = 256 << 20

func autoMemoryFrom(read func(string) ([]byte, error)) int64 {
	room := int64(-1)
	if b, err := read("/proc/meminfo"); err == nil {
		room = memAvailable(b)
	}
	if c := cgroupRoom(read); c >= 0 && (room < 0 || c < room) {
		room = c
	}
	if room < 0 {
		return 1 << 30
	}
	return max(room/2, minAutoMemory)
}

// memAvailable returns /proc/meminfo's MemAvailable in bytes, or -1.
func memAvailable(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || v < 0 {
				return -1
			}
			if len(f) >= 3 && f[2] == "kB" {
				v <<= 10
			}
			return v
		}
	}
	return -1
}

// cgroupRoom returns what this process's memory cgroup lets it still take
// (limit less usage, at least 0), or -1 when it has no limit or none can
// be read.
func cgroupRoom(read func(string) ([]byte, error)) int64 {
	b, err := read("/proc/self/cgroup")
	if err != nil {
		return -1
	}
	num := func(p string) int64 {
		b, err := read(p)
		if err != nil {
			return -1
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v < 0 {
			return -1 // "max" (v2: no limit) or unreadable
		}
		return v
	}
	room := func(limit, usage int64) int64 {
		if limit < 0 || limit >= 1<<60 { // v1 writes no limit as about 2^63
			return -1
		}
		return max(limit-max(usage, 0), 0)
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		dir := parts[2]
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			for _, d := range []string{path.Join("/sys/fs/cgroup", dir), "/sys/fs/cgroup"} {
				if r := room(num(d+"/memory.max"), num(d+"/memory.current")); r >= 0 {
					return r
				}
			}
		case hasController(parts[1], "memory"): // v1
			for _, d := range []string{path.Join("/sys/fs/cgroup/memory", dir), "/sys/fs/cgroup/memory"} {
				if r := room(num(d+"/memory.limit_in_bytes"), num(d+"/memory.usage_in_bytes")); r >= 0 {
					return r
				}
			}
		}
	}
	return -1
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// analyzeGCPercent is the collector's setting during an analysis
// (collectorForAnalysis): the heap may grow to 1.5 times what was live at
// the last collection instead of twice. The records and candidates are
// in memory of the analysis's own (internal/analyze/store.go), so what is
// left on the heap (the call log, the critical path's and the delays'
// lists) holds few pointers and is cheap to mark; every byte of headroom
// is a fresh page the kernel faults in (docs/performance.md, "`analyze`
// at 10^8 events: memory of its own").
const analyzeGCPercent = 50

// collectorForAnalysis sets the collector to analyzeGCPercent unless the
// user chose a setting (GOGC in the environment, getenv), and returns
// what restores the previous one.
func collectorForAnalysis(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(analyzeGCPercent)
	return func() { debug.SetGCPercent(old) }
}
