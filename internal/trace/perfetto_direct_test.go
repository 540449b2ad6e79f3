package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDirectFile: what DirectFile is given is the file, byte for byte,
// whatever the sizes of the writes and of the file (a multiple of the
// alignment or of the buffer, or not), in direct writes (t.TempDir()) and
// where the file system refuses them (/dev/shm, tmpfs).
func TestDirectFile(t *testing.T) {
	dirs := directDirs(t)
	stub := stubDirectWrites(t)
	rng := rand.New(rand.NewSource(1))
	data := make([]byte, 3*directBuf+5000)
	rng.Read(data)
	for _, refuse := range []int{-1, 0, 1} {
		for _, dir := range dirs {
			for _, size := range []int{0, 1, directAlign - 1, directAlign, directAlign + 1, directBuf - 1, directBuf, directBuf + 1, 2*directBuf + directAlign, len(data)} {
				for _, chunk := range []int{1000, 65536, directBuf + 7} {
					stub.refuseAfter, stub.taken = refuse, 0
					path := filepath.Join(dir, "out")
					d, err := CreateDirect(path)
					if err != nil {
						t.Fatal(err)
					}
					direct := d.direct != nil
					if direct && (len(d.buf) != directBuf || alignUp(d.buf, directAlign) != 0) {
						t.Fatalf("%s: a buffer of %d bytes, %d bytes from alignment", dir, len(d.buf), alignUp(d.buf, directAlign))
					}
					for p := data[:size]; len(p) > 0; {
						c := min(chunk, len(p))
						if n, err := d.Write(p[:c]); err != nil || n != c {
							t.Fatalf("%s: write of %d: %d, %v", dir, c, n, err)
						}
						p = p[c:]
					}
					if err := d.Close(); err != nil {
						t.Fatalf("%s: close: %v", dir, err)
					}
					got, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, data[:size]) {
						t.Errorf("%s (direct writes %v, refused after %d): %d bytes in writes of %d: the file has %d, not the same", dir, direct, refuse, size, chunk, len(got))
					}
					if size == len(data) && chunk == 1000 {
						t.Logf("%s: direct writes %v, refused after %d: %d taken", dir, direct, refuse, stub.taken)
					}
				}
			}
		}
	}
}

// directDirs gives a test's directories for direct writes: t.TempDir(),
// where they are taken, and where there is /dev/shm one on tmpfs, which
// refuses them on Linux before 6.6 (later kernels take them; the refusal
// is then only the stub's: stubDirectWrites). Both are removed when the
// test ends.
func directDirs(t *testing.T) []string {
	dirs := []string{t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "mpiscope-direct-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// directStub counts the direct writes taken and refuses them, as a file
// system that refuses O_DIRECT does (EINVAL), once refuseAfter of them
// have been taken (never when refuseAfter < 0).
type directStub struct {
	refuseAfter, taken int
	vectored           int      // vectored writes taken
	bufs               int      // buffers in them
	misaligned         []string // buffers a direct write would refuse
}

// stubDirectWrites puts a directStub in front of directWriteAt for the
// rest of the test.
func stubDirectWrites(t *testing.T) *directStub {
	s := &directStub{refuseAfter: -1}
	write := directWriteAt
	t.Cleanup(func() { directWriteAt = write })
	directWriteAt = func(f *os.File, b []byte, off int64) (int, error) {
		if s.refuseAfter >= 0 && s.taken >= s.refuseAfter {
			return 0, syscall.EINVAL
		}
		s.taken++
		return write(f, b, off)
	}
	writev := directWritev
	t.Cleanup(func() { directWritev = writev })
	directWritev = func(f *os.File, bufs [][]byte, off int64) (int, error) {
		if s.refuseAfter >= 0 && s.taken >= s.refuseAfter {
			return 0, syscall.EINVAL
		}
		for i, b := range bufs {
			if off%directAlign != 0 || len(b)%directAlign != 0 || alignUp(b, directAlign) != 0 {
				s.misaligned = append(s.misaligned, fmt.Sprintf("buffer %d of %d at %d: %d bytes, %d from alignment", i, len(bufs), off, len(b), alignUp(b, directAlign)))
			}
		}
		s.taken++
		s.vectored++
		s.bufs += len(bufs)
		return writev(f, bufs, off)
	}
	return s
}

// TestDirectFileWritePages: writePages writes its buffers after what Write
// buffered, byte for byte: aligned pages in one vectored direct write,
// a batch with a buffer not aligned in memory or in length through
// Write's copy; where direct writes are refused (first, or after one),
// the same file.
func TestDirectFileWritePages(t *testing.T) {
	dirs := directDirs(t)
	stub := stubDirectWrites(t)
	rng := rand.New(rand.NewSource(4))
	page := func(n int) []byte {
		b := heapAligned(n)
		rng.Read(b)
		return b
	}
	head := make([]byte, directAlign)
	rng.Read(head)
	aligned := [][]byte{page(directAlign), page(3 * directAlign), page(16 * directAlign)}
	odd := page(2 * directAlign)
	batches := []struct {
		name     string
		bufs     [][]byte
		vectored int // vectored writes taken, direct writes never refused
	}{
		{"aligned", aligned, 1},
		{"a buffer off alignment", [][]byte{aligned[0], odd[1 : 1+directAlign], aligned[1]}, 0},
		{"a buffer of 100 bytes", [][]byte{aligned[0], aligned[1][:100]}, 0},
	}
	for _, refuse := range []int{-1, 0, 1} {
		for _, dir := range dirs {
			for _, bt := range batches {
				stub.refuseAfter, stub.taken, stub.vectored, stub.misaligned = refuse, 0, 0, nil
				path := filepath.Join(dir, "out")
				d, err := CreateDirect(path)
				if err != nil {
					t.Fatal(err)
				}
				direct := d.direct != nil
				want := append([]byte(nil), head...)
				if _, err := d.Write(head); err != nil {
					t.Fatal(err)
				}
				for k := 0; k < 2; k++ {
					if err := d.writePages(bt.bufs); err != nil {
						t.Fatalf("%s: %v", bt.name, err)
					}
					for _, b := range bt.bufs {
						want = append(want, b...)
					}
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s, %s, direct writes %v refused after %d", bt.name, dir, direct, refuse)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes, not the %d written", what, len(got), len(want))
				}
				if len(stub.misaligned) > 0 {
					t.Errorf("%s: %s", what, stub.misaligned[0])
				}
				if direct && refuse < 0 && stub.vectored != 2*bt.vectored {
					t.Errorf("%s: %d vectored writes, want %d", what, stub.vectored, 2*bt.vectored)
				}
				if direct && refuse == 1 && bt.vectored > 0 && stub.vectored != 1 {
					t.Errorf("%s: %d vectored writes before the refusal, want 1", what, stub.vectored)
				}
			}
		}
	}
}

// TestDirectWritevShort: directWritev goes on after a short vectored
// write from the first byte not written, buffers cut anywhere, and a write
// that makes no progress without an error is an error. Until 2026-11-28
// such a write made it loop forever.
func TestDirectWritevShort(t *testing.T) {
	call := pwritevCall
	t.Cleanup(func() { pwritevCall = call })
	rng := rand.New(rand.NewSource(6))
	var bufs [][]byte
	var want []byte
	for _, n := range []int{4096, 100, 7000, 1, 12288} {
		b := make([]byte, n)
		rng.Read(b)
		bufs = append(bufs, b)
		want = append(want, b...)
	}
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// At most 3000 bytes a write: the cut falls inside buffers.
	calls := 0
	pwritevCall = func(f *os.File, bufs [][]byte, off int64) (int, error) {
		calls++
		var part [][]byte
		for left := 3000; left > 0 && len(bufs) > 0; bufs = bufs[1:] {
			b := bufs[0][:min(left, len(bufs[0]))]
			part = append(part, b)
			left -= len(b)
		}
		return call(f, part, off)
	}
	n, err := directWritev(f, bufs, 5)
	if err != nil || n != len(want) || calls != (len(want)+2999)/3000 {
		t.Fatalf("%d bytes in %d writes, %v; want %d in %d", n, calls, err, len(want), (len(want)+2999)/3000)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[5:], want) || !bytes.Equal(got[:5], make([]byte, 5)) {
		t.Fatalf("the file differs from what was written")
	}
	// No progress, no error.
	calls = 0
	pwritevCall = func(*os.File, [][]byte, int64) (int, error) {
		if calls++; calls > 100 {
			t.Fatal("still writing after 100 writes of nothing")
		}
		return 0, nil
	}
	if n, err := directWritev(f, bufs, 0); !errors.Is(err, io.ErrShortWrite) || n != 0 {
		t.Fatalf("%d bytes, %v; want io.ErrShortWrite", n, err)
	}
}
