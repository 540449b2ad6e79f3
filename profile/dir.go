package profile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Names in a job directory. See docs/format.md.
const (
	FinalFile  = "profile.mps" // the merged profile of the job
	ReportFile = "report.txt"  // the text report
	RanksDir   = "ranks"       // per-rank files: ranks/<rank/1000>/r<rank>.mps
	SnapPrefix = "snapshot-"   // flush snapshots: snapshot-<n>/ranks/...
)

// RankFile returns the path of rank's file under dir (a job or snapshot
// directory): dir/ranks/<rank/1000>/r<rank>.mps.
func RankFile(dir string, rank int) string {
	return filepath.Join(dir, RanksDir, strconv.Itoa(rank/1000), "r"+strconv.Itoa(rank)+".mps")
}

// SnapshotDir returns the directory of the n-th flush snapshot (n >= 1) of
// the job directory job: job/snapshot-<n>.
func SnapshotDir(job string, n int) string {
	return filepath.Join(job, SnapPrefix+strconv.Itoa(n))
}

// LoadInfo describes what Load read.
type LoadInfo struct {
	Path string // what was loaded
	// Source is "file" (a single .mps file), "final" (the job's
	// profile.mps, possibly completed by rank files: see Warnings),
	// "ranks" (merged from per-rank files, every rank's written at the end
	// of its run: the sessions model, MPI_Session_finalize), "partial"
	// (merged from per-rank files of a job that ended early: MPI_Abort, a
	// signal, exit without MPI_Finalize, missing ranks) or "snapshot" (a job
	// directory holding nothing but flush snapshots: the latest was used).
	Source   string
	Files    int   // profile files merged
	NumRanks int   // Meta.NumRanks, or highest rank + 1 if unknown
	Ranks    int   // ranks in 0..NumRanks-1 with data
	Missing  []int // ranks in 0..NumRanks-1 without data, ascending
	Snapshot int   // Meta.Snapshot
	// Partial is set when ranks are missing, the profile was merged from
	// per-rank files, or its writer marked it partial.
	Partial  bool
	Warnings []string // one per unreadable or corrupt file, and other anomalies
}

// maxMissing bounds the rank range scanned for missing ranks, so a hostile
// NumRanks cannot make Load allocate without bound.
const maxMissing = 1 << 24

// maxMissingListed bounds LoadInfo.Missing.
const maxMissingListed = 1 << 16

// Summary describes the load in one line, for example
// "partial profile: 3 of 4 ranks (missing: 2)".
func (i *LoadInfo) Summary() string {
	var b strings.Builder
	switch {
	case i.Partial:
		b.WriteString("partial profile")
	case i.Source == "final":
		b.WriteString("final profile")
	default:
		b.WriteString("profile")
	}
	if i.Snapshot > 0 {
		fmt.Fprintf(&b, " (snapshot %d)", i.Snapshot)
	}
	fmt.Fprintf(&b, ": %d of %d ranks", i.Ranks, i.NumRanks)
	if len(i.Missing) > 0 {
		b.WriteString(" (missing: ")
		b.WriteString(rankRanges(i.Missing, 8))
		b.WriteString(")")
	}
	if i.Files > 1 {
		fmt.Fprintf(&b, ", %d files", i.Files)
	}
	switch n := len(i.Warnings); n {
	case 0:
	case 1:
		b.WriteString(", 1 warning")
	default:
		fmt.Fprintf(&b, ", %d warnings", n)
	}
	return b.String()
}

// rankRanges formats ascending ranks as "2, 5-9, 12", listing at most max
// ranges.
func rankRanges(r []int, limit int) string {
	var parts []string
	for i := 0; i < len(r); {
		j := i
		for j+1 < len(r) && r[j+1] == r[j]+1 {
			j++
		}
		if len(parts) == limit {
			parts = append(parts, fmt.Sprintf("... %d more", len(r)-i))
			break
		}
		if i == j {
			parts = append(parts, strconv.Itoa(r[i]))
		} else {
			parts = append(parts, strconv.Itoa(r[i])+"-"+strconv.Itoa(r[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// finish fills the fields derived from the loaded profile.
func (i *LoadInfo) finish(p *Profile) {
	i.Snapshot = p.Meta.Snapshot
	n := p.Meta.NumRanks
	if n <= 0 {
		for _, r := range p.Ranks {
			n = max(n, r.Rank+1)
		}
	}
	i.NumRanks = n
	if n > maxMissing {
		i.Warnings = append(i.Warnings, fmt.Sprintf("%d ranks: too many to list missing ranks", n))
		i.Ranks = len(p.Ranks)
	} else if n > 0 {
		// From the sorted ranks present, not a table of n entries: memory
		// stays proportional to the input plus the missing list, which is
		// capped (a small file may claim millions of ranks).
		have := make([]int, 0, len(p.Ranks))
		for _, r := range p.Ranks {
			if r.Rank >= 0 && r.Rank < n {
				have = append(have, r.Rank)
			}
		}
		slices.Sort(have)
		have = slices.Compact(have)
		i.Ranks = len(have)
		listed := 0
		next := 0
		have = append(have, n)
		for _, h := range have {
			for ; next < h && listed < maxMissingListed; next++ {
				i.Missing = append(i.Missing, next)
				listed++
			}
			next = h + 1
		}
		if more := n - i.Ranks - listed; more > 0 {
			i.Warnings = append(i.Warnings, fmt.Sprintf("%d missing ranks not listed (only the first %d are)", more, maxMissingListed))
		}
	}
	i.Partial = i.Partial || len(i.Missing) > 0 || p.Meta.Partial
}

// Load reads a profile. path may be a .mps file, a job directory or a
// snapshot directory. For a directory, profile.mps is used if it is readable
// (Source "final"), merged with the rank files of any rank it lacks; otherwise
// every ranks/*/r*.mps is read in parallel and merged (Source "ranks", or
// "partial" if the job ended early or ranks are missing). A
// corrupt or unreadable rank file is skipped with a warning as long as some
// file is good. A job directory holding only flush snapshots yields the latest
// snapshot (Source "snapshot") with a warning. Malformed files are reported as
// *FormatError (wrapped when Load fails on a directory).
func Load(path string) (*Profile, *LoadInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		p, err := readFile(path)
		if err != nil {
			return nil, nil, err
		}
		info := &LoadInfo{Path: path, Source: "file", Files: 1}
		info.finish(p)
		return p, info, nil
	}
	return loadDir(path)
}

// readFile decodes the profile file at path, refusing files larger than
// MaxEncodedSize before reading them.
func readFile(path string) (*Profile, error) {
	data, err := appendFile(nil, path)
	if err != nil {
		return nil, err
	}
	return Unmarshal(data, path)
}

// appendFile appends the contents of the file at path to buf, refusing files
// larger than MaxEncodedSize before reading them. On error buf is returned
// unchanged.
func appendFile(buf []byte, path string) ([]byte, error) {
	f, err := openReadOnly(path)
	if err != nil {
		return buf, err
	}
	defer f.close()
	size, regular, err := f.stat()
	if err != nil {
		return buf, err
	}
	if !regular {
		return buf, fmt.Errorf("%s: not a regular file", path)
	}
	tooBig := func(n int64) error {
		return &FormatError{File: path, Offset: decodeLimit,
			Msg: fmt.Sprintf("file of %d bytes exceeds the %d byte limit", n, decodeLimit)}
	}
	if size > decodeLimit {
		return buf, tooBig(size)
	}
	// Read into room for the file's size (plus room to see EOF), growing
	// only if the file grew meanwhile.
	start := len(buf)
	data := slices.Grow(buf, int(size)+512)
	for {
		n, err := f.read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, err
		}
		if len(data) == cap(data) {
			if int64(len(data)-start) > decodeLimit {
				return buf, tooBig(int64(len(data) - start))
			}
			data = append(data, 0)[:len(data)]
		}
	}
	return data, nil
}

type rankFile struct {
	rank int
	path string
}

func loadDir(dir string) (*Profile, *LoadInfo, error) {
	info := &LoadInfo{Path: dir}
	var firstErr error
	files, err := listRankFiles(dir)
	if err != nil {
		info.Warnings = append(info.Warnings, err.Error())
		firstErr = err
	}

	final := filepath.Join(dir, FinalFile)
	p, err := readFile(final)
	switch {
	case err == nil:
		info.Source = "final"
		info.Files = 1
	case errors.Is(err, fs.ErrNotExist):
	default:
		p = nil
		info.Warnings = append(info.Warnings, err.Error())
		firstErr = err
	}

	if p != nil {
		have := make(map[int]bool, len(p.Ranks))
		for _, r := range p.Ranks {
			have[r.Rank] = true
		}
		var extra []rankFile
		for _, f := range files {
			if !have[f.rank] {
				extra = append(extra, f)
			}
		}
		if len(extra) > 0 {
			q, n, warns, _ := loadRankFiles(extra)
			info.Warnings = append(info.Warnings, warns...)
			if n > 0 {
				p.Merge(q)
				info.Files += n
				info.Partial = true
				ranks := make([]int, len(extra))
				for i, f := range extra {
					ranks[i] = f.rank
				}
				info.Warnings = append(info.Warnings, fmt.Sprintf(
					"%s: merged %d rank files for ranks missing from %s (ranks %s)",
					dir, n, FinalFile, rankRanges(ranks, 8)))
			}
		}
	} else if len(files) > 0 {
		q, n, warns, ferr := loadRankFiles(files)
		info.Warnings = append(info.Warnings, warns...)
		if n == 0 {
			return nil, nil, &loadError{dir: dir, msg: fmt.Sprintf("none of %d rank files is readable", len(files)), err: ferr}
		}
		p = q
		// Rank files alone are a whole profile when every rank wrote its
		// own at the end of its run (the sessions model: at
		// MPI_Session_finalize; a merge that failed at MPI_Finalize) and
		// none is missing (finish); otherwise the job ended early.
		if !allFinal(p) {
			p.Meta.Partial = true
		}
		info.Source = "ranks"
		if p.Meta.Partial {
			info.Source = "partial"
		}
		info.Files = n
	} else if snap := latestSnapshot(dir); snap > 0 {
		sp, sinfo, err := loadDir(SnapshotDir(dir, snap))
		if err != nil {
			return nil, nil, &loadError{dir: dir, msg: "no final profile or rank files, and the latest snapshot is unreadable", err: err}
		}
		sinfo.Path = dir
		sinfo.Source = "snapshot"
		sinfo.Warnings = append(append(info.Warnings,
			fmt.Sprintf("%s: no %s or rank files; using the latest flush snapshot %s%d", dir, FinalFile, SnapPrefix, snap)),
			sinfo.Warnings...)
		return sp, sinfo, nil
	} else {
		return nil, nil, &loadError{dir: dir, msg: "no profile found (no " + FinalFile + ", no " + RanksDir + "/*/r*.mps)", err: firstErr}
	}
	info.finish(p)
	if info.Source == "ranks" && info.Partial { // ranks missing
		info.Source = "partial"
		p.Meta.Partial = true
	}
	return p, info, nil
}

// allFinal reports whether p's ranks all ended their runs ("final") and
// no file was marked partial by its writer.
func allFinal(p *Profile) bool {
	if p.Meta.Partial || p.Meta.Snapshot > 0 || len(p.Ranks) == 0 {
		return false
	}
	for _, r := range p.Ranks {
		if r.State != "final" {
			return false
		}
	}
	return true
}

// loadError is the error of a directory with nothing readable. It unwraps to
// the first underlying error (often a *FormatError).
type loadError struct {
	dir, msg string
	err      error
}

func (e *loadError) Error() string {
	s := e.dir + ": " + e.msg
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

func (e *loadError) Unwrap() error { return e.err }

// listRankFiles returns ranks/<d>/r<rank>.mps under dir, sorted by rank.
// A missing ranks directory is not an error.
func listRankFiles(dir string) ([]rankFile, error) {
	root := filepath.Join(dir, RanksDir)
	subs, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var files []rankFile
	var firstErr error
	for _, s := range subs {
		if !s.IsDir() || !isDigits(s.Name()) {
			continue
		}
		sub := filepath.Join(root, s.Name())
		ents, err := os.ReadDir(sub)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, e := range ents {
			name := e.Name()
			num, ok := strings.CutPrefix(name, "r")
			if !ok {
				continue
			}
			num, ok = strings.CutSuffix(num, ".mps")
			if !ok || !isDigits(num) || e.IsDir() {
				continue
			}
			r, err := strconv.Atoi(num)
			if err != nil {
				continue
			}
			files = append(files, rankFile{r, filepath.Join(sub, name)})
		}
	}
	slices.SortFunc(files, func(a, b rankFile) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.path, b.path)
	})
	return files, firstErr
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// latestSnapshot returns the largest n with a snapshot-<n> directory in dir.
func latestSnapshot(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	best := 0
	for _, e := range ents {
		num, ok := strings.CutPrefix(e.Name(), SnapPrefix)
		if !ok || !e.IsDir() || !isDigits(num) {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > best {
			best = n
		}
	}
	return best
}

// loadChunk is the number of consecutive rank files merged by one task.
// It is fixed (not derived from the CPU count) so that the merge tree, and
// hence floating-point rounding, does not depend on the machine: each chunk
// is merged in file order, then the chunks' merges in chunk order.
const loadChunk = 256

// loadReaders is the number of goroutines reading rank files ahead of the
// decoding workers, so that the workers rarely wait for a file, and reading
// from disk overlaps decoding when the files are not in the page cache.
const loadReaders = 4

// chunkData is the contents of the files of one chunk, read by a reader.
type chunkData struct {
	c    int     // chunk number
	buf  []byte  // the files' contents, concatenated
	ends []int   // ends[i]: end of file i in buf
	errs []error // errs[i]: why file i could not be read
}

// loadRankFiles reads and merges files: loadReaders goroutines read chunks of
// loadChunk files, GOMAXPROCS workers decode and merge each chunk, and the
// chunks' merges are merged in chunk order as soon as they are done (so only
// the running total and the few chunks in flight are held). It returns the
// merge, the number of files merged, one warning per file that could not be
// used, in file order, and the first such file's error.
func loadRankFiles(files []rankFile) (*Profile, int, []string, error) {
	nchunks := (len(files) + loadChunk - 1) / loadChunk
	workers := max(1, min(runtime.GOMAXPROCS(0), nchunks))
	readers := max(1, min(loadReaders, nchunks))

	// Buffers circulate between readers and workers: their number bounds
	// how far reading runs ahead of decoding, and so the memory.
	free := make(chan *chunkData, readers+workers+2)
	for range cap(free) {
		free <- &chunkData{}
	}
	full := make(chan *chunkData, cap(free))
	var next atomic.Int64
	var rwg sync.WaitGroup
	for range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				cd := <-free
				c := int(next.Add(1) - 1)
				if c >= nchunks {
					free <- cd
					return
				}
				cd.c = c
				cd.buf, cd.ends, cd.errs = cd.buf[:0], cd.ends[:0], cd.errs[:0]
				chunk := files[c*loadChunk : min(len(files), (c+1)*loadChunk)]
				if canAdvise && len(chunk) > 1 && !inPageCache(chunk[0].path) {
					// The files are on disk, not in the page cache: ask
					// for all of them at once, which lets the kernel
					// issue and merge their reads rather than wait for
					// one file at a time (on a virtual disk, 100,000
					// uncached 10 kB files were read in 0.9 s instead of
					// 3.2 s, with half the system time).
					for _, f := range chunk {
						adviseWillNeed(f.path)
					}
				}
				for _, f := range chunk {
					var err error
					cd.buf, err = appendFile(cd.buf, f.path)
					cd.ends = append(cd.ends, len(cd.buf))
					cd.errs = append(cd.errs, err)
				}
				full <- cd
			}
		}()
	}
	go func() {
		rwg.Wait()
		close(full)
	}()

	type chunkResult struct {
		done  bool
		p     *Profile
		n     int
		warns []string
		err   error
	}
	var (
		mu      sync.Mutex
		results = make([]chunkResult, nchunks)
		merged  int // chunks 0..merged-1 are in total
		total   = newMerger()
		n       int
		warns   []string
		first   error
	)
	// collect records chunk c's result and merges every chunk that is now
	// next in order into total.
	collect := func(c int, res chunkResult) {
		mu.Lock()
		defer mu.Unlock()
		res.done = true
		results[c] = res
		for merged < nchunks && results[merged].done {
			r := &results[merged]
			if r.n > 0 {
				if merged == 0 && nchunks > 1 {
					total.reserve(r.p, nchunks)
				}
				total.add(r.p)
			}
			n += r.n
			warns = append(warns, r.warns...)
			if first == nil {
				first = r.err
			}
			*r = chunkResult{done: true}
			merged++
		}
	}

	var wwg sync.WaitGroup
	for range workers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			var dec reusingDecoder
			for cd := range full {
				m := newMerger()
				var res chunkResult
				chunk := files[cd.c*loadChunk : min(len(files), (cd.c+1)*loadChunk)]
				start := 0
				for i, f := range chunk {
					err := cd.errs[i]
					if err == nil {
						var p *Profile
						p, err = dec.unmarshal(cd.buf[start:cd.ends[i]], f.path)
						if err == nil {
							m.add(p)
							res.n++
						}
					}
					start = cd.ends[i]
					if err != nil {
						res.warns = append(res.warns, err.Error()+" (skipped)")
						if res.err == nil {
							res.err = err
						}
					}
				}
				c := cd.c
				free <- cd
				res.p = m.result()
				collect(c, res)
			}
		}()
	}
	wwg.Wait()
	return total.result(), n, warns, first
}

// WriteFile writes p to path atomically: it encodes into a new temporary file
// in the same directory (created with O_EXCL|O_NOFOLLOW, mode 0666 before
// umask), syncs it and renames it over path, so readers see the old file or
// the complete new one, and a symlink at path is replaced, never followed.
// Missing parent directories are created with mode 0777 before umask.
func WriteFile(path string, p *Profile) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	data := Marshal(p)
	var f *os.File
	var err error
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
