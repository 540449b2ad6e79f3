//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "api.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// The Go side of safety.c: what a helper thread runs when a rank ends
// early (abort, signal, exit without MPI_Finalize) or takes a snapshot on a
// signal or a timer, and what an internal error does. See docs/safety.md.

// warnMu guards state.warnings, which the end-of-run writers read without
// state's lock.
var warnMu sync.Mutex

func addWarning(msg string) {
	warnMu.Lock()
	state.warnings = append(state.warnings, msg)
	warnMu.Unlock()
}

func warningsCopy() []string {
	warnMu.Lock()
	defer warnMu.Unlock()
	return append([]string(nil), state.warnings...)
}

// signalNumbers maps the names MPISCOPE_SNAPSHOT_SIGNAL accepts (see
// snapshotSignals in config.go) to numbers.
var signalNumbers = map[string]syscall.Signal{
	"USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "HUP": syscall.SIGHUP, "WINCH": syscall.SIGWINCH,
}

func signalName(n int) string {
	for name, s := range signalNumbers {
		if int(s) == n {
			return "SIG" + name
		}
	}
	switch syscall.Signal(n) {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return fmt.Sprintf("signal %d", n)
}

// fault is MPISCOPE_FAULT, a test hook: the named point panics, to check
// that an internal error turns recording off and harms nothing else.
var fault string

func faultPoint(name string) {
	if fault == name {
		panic("fault injected at " + name + " (MPISCOPE_FAULT)")
	}
}

// msgoSafetyStart is called at the end of MPI_Init, after msgoStart. It
// starts the snapshot timer and returns the snapshot signal (0: none).
//
//export msgoSafetyStart
func msgoSafetyStart() C.int {
	fault = os.Getenv("MPISCOPE_FAULT")
	if d := state.cfg.SnapshotEvry; d > 0 {
		go func() {
			t := time.NewTicker(d)
			defer t.Stop()
			for range t.C {
				if C.ms_finished_get() != 0 {
					return
				}
				C.ms_snapshot_request()
			}
		}()
	}
	if s, ok := signalNumbers[state.cfg.SnapshotSignal]; ok {
		return C.int(s)
	}
	return 0
}

// msgoSafetyNote records that the snapshot signal was left to the
// application, which had its own disposition for it before MPI_Init. It is
// not printed: the application chose that signal for itself.
//
//export msgoSafetyNote
func msgoSafetyNote(sig C.int) {
	addWarning(fmt.Sprintf("MPISCOPE_SNAPSHOT_SIGNAL: the application handles %s itself; no snapshots on that signal", signalName(int(sig))))
}

// msgoRankFile writes this rank's own file (ranks/<r/1000>/r<r>.mps) when
// the rank ends without taking part in the final merge. It runs on a helper
// thread while the application may still run (the tables are read as they
// are: racy by design, see docs/safety.md). It does not take state's lock,
// which a finalize blocked on a dead rank may hold: what it reads of state
// is fixed after MPI_Init, and safety.c lets only one such write happen.
//
//export msgoRankFile
func msgoRankFile(what, arg C.int) {
	keepGC() // the run is ending: the collector on for good (cgo.go)
	defer recoverWarn("writing this rank's file")
	faultPoint("rankfile")
	var st, why string
	switch what {
	case C.MS_END_ABORT:
		st, why = "abort", fmt.Sprintf("a rank called MPI_Abort (error code %d)", int(arg))
	case C.MS_END_SIGNAL, C.MS_END_CHAINED:
		st, why = "signal", fmt.Sprintf("ranks received %s before MPI_Finalize", signalName(int(arg&0xff)))
	case C.MS_END_EXIT:
		st, why = "exit", "ranks exited without MPI_Finalize"
	default:
		st, why = "exit", "ranks ended early"
	}
	t0 := time.Now()
	// The trace first (bounded): the rank file's appearance tells the
	// ranks stopped by their launcher that this one is done (waitSiblings).
	traceEnd(what != C.MS_END_CHAINED, traceEndWait)
	p := rankProfile(st)
	symbolizeSites(p)
	p.Meta.Partial = true
	p.Meta.Settings = append(p.Meta.Settings, profile.Setting{Name: "warning", Value: "partial data: " + why})
	p.Sort()
	writeRank(p, "")
	if what == C.MS_END_SIGNAL && arg&C.MS_FROM_PARENT != 0 {
		waitSiblings(t0.Add(siblingWait))
	}
}

// traceEndWait bounds the wait for the trace writer's last buffers when a
// rank ends early: safety.c gives the whole write MS_BOUND_MS (2 s).
const traceEndWait = time.Second

// siblingWait bounds how long a rank stopped by its launcher waits for the
// other ranks' files; maxSiblings is the largest job that waits at all (the
// wait reads the job directory every siblingPoll).
const (
	siblingWait = time.Second
	siblingPoll = 20 * time.Millisecond
	maxSiblings = 1024
)

// waitSiblings waits until every rank of the job has its file in the job
// directory, or until the deadline. A signal from the launcher (mpirun's
// daemon, hydra's proxy, slurmstepd) goes to all ranks at once, and
// launchers kill the remaining ranks with SIGKILL as soon as one rank has
// died of the signal: each rank therefore delays its own death a little
// until the others have written theirs.
func waitSiblings(deadline time.Time) {
	if state.job == "" || state.size > maxSiblings {
		return
	}
	for time.Now().Before(deadline) {
		n := 0
		for d := 0; d <= (state.size-1)/1000; d++ {
			ents, _ := os.ReadDir(filepath.Dir(profile.RankFile(state.job, d*1000)))
			for _, e := range ents {
				if name := e.Name(); strings.HasPrefix(name, "r") && strings.HasSuffix(name, ".mps") {
					n++
				}
			}
		}
		if n >= state.size {
			return
		}
		time.Sleep(siblingPoll)
	}
}

// msgoSnapshot writes a snapshot on the snapshot signal or timer, like
// MPI_Pcontrol(2) but from a helper thread, so that it works while the
// application is blocked inside MPI.
//
//export msgoSnapshot
func msgoSnapshot() {
	defer recoverWarn("snapshot")
	if C.ms_finished_get() != 0 {
		return
	}
	faultPoint("snapshot")
	msgoFlush()
}

var internalOnce sync.Once

// internalError turns recording off for good after a bug of ours (a
// recovered panic) and says so once: the application goes on unharmed, and
// what was recorded before still gets written.
func internalError(where string, e any) {
	C.ms_disable()
	internalOnce.Do(func() {
		msg := fmt.Sprintf("internal error during %s: %v; recording is off from here (data may be missing)", where, e)
		addWarning(msg)
		if !state.cfg.Quiet {
			fmt.Fprintf(os.Stderr, "mpiscope: rank %d: %s\n", state.rank, msg)
		}
	})
}
