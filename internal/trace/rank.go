package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// RankPath is where rank's trace file goes under a job directory:
// <job>/trace/<rank/1000>/r<rank>.mst, so no directory holds more than
// 1000 files however many ranks run.
func RankPath(job string, rank int) string {
	return filepath.Join(job, "trace", strconv.Itoa(rank/1000), fmt.Sprintf("r%d.mst", rank))
}

// Rank is one rank's trace file after a first pass that reads everything
// but the events.
type Rank struct {
	Path     string
	Version  int // the file's format version (2 to Version)
	Header   *Header
	Calib    Calib
	Syncs    []Sync
	Comms    map[int]*CommDef
	Regions  map[int]string
	Texts    map[int]string
	Files    map[int]string // names of the files MPI_File_open opened, by id (KIo events' STag)
	Maps     []Mapping      // the process's file mappings (the last block), sorted by address
	Threads  []int          // thread ids: the main thread first, then in order of first appearance
	Events   uint64
	Dropped  uint64
	Complete bool   // the final block was read
	Warning  string // what was lost when the file is truncated
	// Paths are the rank's call paths (MPISCOPE_DEPTH > 1), by id - 1:
	// each path's return addresses, the callsite first (paths.go).
	Paths   [][]uint64
	pathOf  map[pathKey]uint32
	pathIDs map[string]uint32
}

// OpenRank reads a rank file's metadata. A truncated file is accepted with
// a Warning; a corrupt one is an error naming the file and offset.
func OpenRank(path string) (*Rank, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Rank{Path: path, Comms: map[int]*CommDef{}, Regions: map[int]string{}, Texts: map[int]string{}, Files: map[int]string{}}
	err = r.scan(f, nil, 0)
	if err != nil {
		return nil, err
	}
	if r.Header == nil {
		return nil, &CorruptError{path, int64(len(Magic)), errors.New("no header block")}
	}
	if r.Calib.NsPerTick == 0 {
		r.Calib = Calib{NsPerTick: 1}
	}
	// The main thread (its id is the process id) is thread 0, whichever
	// thread's buffer was written first.
	if i := slices.Index(r.Threads, r.Header.PID); i > 0 {
		copy(r.Threads[1:i+1], r.Threads[:i])
		r.Threads[0] = r.Header.PID
	}
	return r, nil
}

// scan reads the file; with fn == nil it records metadata and skips the
// events, else it decodes events and calls fn for each block, or with
// part > 0 for each part of at most part events of an events block (end:
// the block's last part; a raw block is one part).
func (r *Rank) scan(f io.Reader, fn func(tid int, evs []Event, end bool) error, part int) error {
	br, err := NewBlockReader(f, r.Path)
	if err != nil {
		var te *TruncatedError
		if errors.As(err, &te) {
			r.Warning = te.Error()
			return nil
		}
		return err
	}
	r.Version = br.Version()
	seen := map[int]bool{}
	var evs []Event
	st := evDecoder{ver: r.Version}
	for {
		kind, p, err := br.Next()
		off := br.Start()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var te *TruncatedError
			if errors.As(err, &te) {
				r.Warning = te.Error()
				return nil
			}
			return err
		}
		bad := func(err error) error {
			return &CorruptError{r.Path, off, fmt.Errorf("block %q: %v", kind, err)}
		}
		if fn != nil {
			if kind == BEvents && part > 0 {
				tid, err := st.start(p)
				if err != nil {
					return bad(err)
				}
				for st.left() > 0 {
					out, err := st.next(evs[:0], part)
					if err != nil {
						return bad(err)
					}
					evs = out
					if st.tagged {
						r.resolvePaths(tid, evs)
					}
					if err := fn(tid, evs, st.left() == 0); err != nil {
						return err
					}
				}
			} else if kind == BEvents || kind == BRaw {
				decode := st.decode
				if kind == BRaw {
					decode = DecodeRaw
				}
				tid, out, err := decode(p, evs[:0])
				if err != nil {
					return bad(err)
				}
				evs = out
				r.resolvePaths(tid, evs)
				if err := fn(tid, evs, true); err != nil {
					return err
				}
			}
			continue
		}
		switch kind {
		case BHeader:
			if r.Header, err = decodeHeader(p); err != nil {
				return bad(err)
			}
		case BCalib:
			if r.Calib, err = decodeCalib(p); err != nil {
				return bad(err)
			}
		case BSync:
			s, err := decodeSync(p)
			if err != nil {
				return bad(err)
			}
			r.Syncs = append(r.Syncs, s)
		case BComm:
			c, err := decodeComm(p)
			if err != nil {
				return bad(err)
			}
			r.Comms[c.ID] = c
		case BMaps:
			if r.Maps, err = decodeMaps(p); err != nil {
				return bad(err)
			}
		case BRegion, BText, BFile:
			id, s, err := decodeName(p)
			if err != nil {
				return bad(err)
			}
			switch kind {
			case BRegion:
				r.Regions[id] = s
			case BText:
				r.Texts[id] = s
			default:
				r.Files[id] = s
			}
		case BEvents, BRaw:
			d := dec{b: p}
			tid := d.n(1 << 31)
			n := d.u()
			if d.err != nil {
				return bad(d.err)
			}
			if kind == BRaw {
				if _, _, _, err := rawHeader(p); err != nil {
					return bad(err)
				}
			}
			if !seen[tid] {
				seen[tid] = true
				r.Threads = append(r.Threads, tid)
			}
			r.Events += n
		case BGap:
			d := dec{b: p}
			d.u()
			r.Dropped += d.u()
			if d.err != nil {
				return bad(d.err)
			}
		case BPaths:
			tp, err := decodePaths(p)
			if err != nil {
				return bad(err)
			}
			r.addPaths(tp)
		case BFinal:
			d := dec{b: p}
			d.u()
			d.u()
			if d.err != nil {
				return bad(d.err)
			}
			r.Complete = true
		default:
			// Unknown blocks are skipped: newer writers may add kinds.
		}
		if r.Header == nil && kind != BHeader {
			return &CorruptError{r.Path, off, errors.New("first block is not the header")}
		}
	}
}

// Scan decodes the events, one block (one thread's buffer) at a time, in
// file order. The slice passed to fn is reused.
func (r *Rank) Scan(fn func(tid int, evs []Event) error) error {
	f, err := os.Open(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.scan(f, func(tid int, evs []Event, _ bool) error { return fn(tid, evs) }, 0)
}

// scanParts is Scan with a large events block handed in parts of at most
// part events (end: the block's last part).
func (r *Rank) scanParts(part int, fn func(tid int, evs []Event, end bool) error) error {
	f, err := os.Open(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.scan(f, fn, part)
}

// ThreadIndex is the position of tid among the rank's threads.
func (r *Rank) ThreadIndex(tid int) int {
	for i, t := range r.Threads {
		if t == tid {
			return i
		}
	}
	return len(r.Threads)
}

// FnName names function id fn.
func (r *Rank) FnName(fn int) string {
	if fn < len(r.Header.FnNames) {
		return r.Header.FnNames[fn]
	}
	return fmt.Sprintf("fn#%d", fn)
}

// FnClass is the class of function id fn.
func (r *Rank) FnClass(fn int) string {
	if fn < len(r.Header.FnClasses) {
		return r.Header.FnClasses[fn]
	}
	return ""
}

// Job is the trace of a job: every rank file found.
type Job struct {
	Dir      string
	Ranks    []*Rank // sorted by rank
	Warnings []string
	Skipped  []string // rank files that could not be read (a warning each)
}

// OpenJob opens a job directory (or its trace/ subdirectory). A rank file
// that cannot be read is skipped with a warning; it fails only when no
// rank file can be read.
func OpenJob(dir string) (*Job, error) {
	tdir := filepath.Join(dir, "trace")
	if st, err := os.Stat(tdir); err != nil || !st.IsDir() {
		if filepath.Base(dir) == "trace" {
			tdir = dir
		} else {
			return nil, fmt.Errorf("%s: no trace directory (run with MPISCOPE_TRACE=1 or MPI_Pcontrol(6))", dir)
		}
	}
	var files []string
	subs, err := os.ReadDir(tdir)
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		if !s.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(tdir, s.Name()))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "r") && strings.HasSuffix(e.Name(), ".mst") {
				files = append(files, filepath.Join(tdir, s.Name(), e.Name()))
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no trace files", tdir)
	}
	j := &Job{Dir: dir}
	seen := map[int]string{}
	var firstErr error
	for _, f := range files {
		r, err := OpenRank(f)
		if err != nil {
			// A damaged or unreadable rank file is skipped, as report
			// skips a damaged rank profile; the error names the file
			// and the offset.
			j.Warnings = append(j.Warnings, fmt.Sprintf("%v (rank skipped)", err))
			j.Skipped = append(j.Skipped, f)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if r.Warning != "" {
			j.Warnings = append(j.Warnings, r.Warning)
		} else if !r.Complete {
			j.Warnings = append(j.Warnings, fmt.Sprintf("%s: no final block (the rank did not reach MPI_Finalize?)", f))
		}
		if r.Dropped > 0 {
			j.Warnings = append(j.Warnings, fmt.Sprintf("rank %d: %d events were dropped (writer behind; see MPISCOPE_TRACE_BUFFER)", r.Header.Rank, r.Dropped))
		}
		if p, dup := seen[r.Header.Rank]; dup {
			return nil, fmt.Errorf("rank %d has two trace files: %s and %s", r.Header.Rank, p, f)
		}
		seen[r.Header.Rank] = f
		j.Ranks = append(j.Ranks, r)
	}
	if len(j.Ranks) == 0 {
		if len(files) == 1 {
			return nil, firstErr
		}
		return nil, fmt.Errorf("none of the %d trace files of %s could be read; the first: %w", len(files), tdir, firstErr)
	}
	sort.Slice(j.Ranks, func(a, b int) bool { return j.Ranks[a].Header.Rank < j.Ranks[b].Header.Rank })
	if n := j.Ranks[0].Header.Size; len(j.Ranks) < n {
		j.Warnings = append(j.Warnings, fmt.Sprintf("%d of %d ranks have a trace file", len(j.Ranks), n))
	}
	return j, nil
}
