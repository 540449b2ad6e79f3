package trace

import (
	"bytes"
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
	dirs := []string{t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "mpiscope-direct-")
		if err == nil {
			defer os.RemoveAll(d)
			dirs = append(dirs, d)
		}
	}
	defer func(f func(*os.File, []byte, int64) (int, error)) { directWriteAt = f }(directWriteAt)
	write := directWriteAt
	refuseAfter := -1 // direct writes taken before they are refused; -1 never
	taken := 0
	directWriteAt = func(f *os.File, b []byte, off int64) (int, error) {
		if refuseAfter >= 0 && taken >= refuseAfter {
			return 0, syscall.EINVAL
		}
		taken++
		return write(f, b, off)
	}
	rng := rand.New(rand.NewSource(1))
	data := make([]byte, 3*directBuf+5000)
	rng.Read(data)
	for _, refuse := range []int{-1, 0, 1} {
		for _, dir := range dirs {
			for _, size := range []int{0, 1, directAlign - 1, directAlign, directAlign + 1, directBuf - 1, directBuf, directBuf + 1, 2*directBuf + directAlign, len(data)} {
				for _, chunk := range []int{1000, 65536, directBuf + 7} {
					refuseAfter, taken = refuse, 0
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
						t.Logf("%s: direct writes %v, refused after %d: %d taken", dir, direct, refuse, taken)
					}
				}
			}
		}
	}
}
