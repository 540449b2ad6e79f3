//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "api.h"
#include "callpath.h"
static int ms_path_depth_get(void) { return ms_path_depth; }
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// pathInit sets the call-path depth (MPISCOPE_DEPTH) for the run, before
// recording starts (msgoStart). The default, auto (Depth 0), is chosen
// from the program (callpath.c) and shown in the report's settings.
func pathInit(cfg Config) {
	C.ms_path_setup(C.int(cfg.Depth))
	if cfg.Depth == C.MS_PATH_AUTO {
		d, fp, n := int(C.ms_path_depth_get()), int(C.ms_path_auto_fp), int(C.ms_path_auto_n)
		why := fmt.Sprintf("the program keeps frame pointers in %d of %d functions judged", fp, n)
		if n == 0 {
			why = "the program has no call-frame information to judge it by"
		}
		set := profile.Setting{Name: "MPISCOPE_DEPTH", Value: fmt.Sprintf("%d (auto: %s)", d, why)}
		for i, s := range state.settings {
			if s.Name == set.Name { // MPISCOPE_DEPTH=auto given
				state.settings = append(state.settings[:i:i], state.settings[i+1:]...)
				break
			}
		}
		state.settings = append(state.settings, set)
	}
}

// pathColl gathers one rank's call paths while collect reads the site
// tables: a site record's pc holds a path of its thread's table at depth
// > 1 (callpath.h).
type pathColl struct {
	on   bool
	tabs map[*C.ms_thread]*C.ms_paths
	acc  map[rawPathKey]*rawPath
}

// pathWarned: the "other paths" warning was given (once per process).
var pathWarned bool

type rawPathKey struct {
	fn, region int
	other      bool
	frames     string // the frames' addresses, 8 bytes each
}

func newPathColl() *pathColl {
	pc := &pathColl{on: C.ms_path_depth_get() > 1}
	if !pc.on {
		return pc
	}
	pc.tabs = map[*C.ms_thread]*C.ms_paths{}
	pc.acc = map[rawPathKey]*rawPath{}
	for p := C.ms_paths_head(); p != nil; p = p.next {
		pc.tabs[(*C.ms_thread)(unsafe.Pointer(p.owner))] = p
		if p.other > 0 && !pathWarned {
			pathWarned = true
			warn(fmt.Sprintf("call paths: thread %d's path table is full (%d paths, %d frames): further paths are counted as \"other paths\" (their callsite kept)",
				int(p.owner.tid), uint64(p.npaths), uint64(p.nframes)))
		}
	}
	return pc
}

// site counts one site record (of thread t) in its path and returns its
// callsite, the pc the site table keys on.
func (pc *pathColl) site(t *C.ms_thread, raw, key, calls, ticks, mn, mx uint64, bytes int64) uint64 {
	if !pc.on {
		return raw
	}
	fn, region := int(key&0xffff), int(key>>16&0xffff)
	var frames []uint64
	other := false
	site := raw
	switch {
	case raw&C.MS_PATH_TAG == 0: // a record made without a path (a hand-written wrapper)
		frames = []uint64{raw}
	case raw&C.MS_PATH_OTHER != 0:
		site = raw &^ (C.MS_PATH_TAG | C.MS_PATH_OTHER)
		frames, other = []uint64{site}, true
	default:
		tab := pc.tabs[t]
		var n C.uint32_t
		var f *C.uintptr_t
		if tab != nil {
			f = C.ms_path_frames(tab, C.uint32_t(raw&0xffffffff), &n)
		}
		if f == nil || n == 0 {
			// Cannot happen: a tagged pc always names a published slot.
			return raw &^ C.MS_PATH_TAG
		}
		for _, a := range unsafe.Slice(f, int(n)) {
			frames = append(frames, uint64(a))
		}
		site = frames[0]
	}
	b := make([]byte, 0, 8*len(frames))
	for _, a := range frames {
		b = append(b, byte(a), byte(a>>8), byte(a>>16), byte(a>>24), byte(a>>32), byte(a>>40), byte(a>>48), byte(a>>56))
	}
	k := rawPathKey{fn, region, other, string(b)}
	a := pc.acc[k]
	if a == nil {
		a = &rawPath{Fn: fn, Region: region, Other: other, Frames: frames, Min: ^uint64(0)}
		pc.acc[k] = a
	}
	a.Calls += calls
	a.Ticks += ticks
	a.Bytes += bytes
	a.Min = min(a.Min, mn)
	a.Max = max(a.Max, mx)
	return site
}

// done hands the paths to the rank's raw tables.
func (pc *pathColl) done(r *rawRank) {
	for _, a := range pc.acc {
		r.Paths = append(r.Paths, *a)
	}
}

// symbolizePaths fills function, file and line of every path's frames
// (symbolizePathFrames, callpath_build.go).
func symbolizePaths(s *symbolize.Symbolizer, p *profile.Profile) {
	symbolizePathFrames(s.LookupReturnFrames, p)
}
