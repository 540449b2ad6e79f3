//go:build !linux

package trace

import "os"

const oDirect = 0 // no direct writes: DirectFile writes as os.File does

// directAlloc returns n bytes aligned to directAlign (unused without
// direct writes), and what frees them.
func directAlloc(n int) ([]byte, func()) { return heapAligned(n), func() {} }

// pwritev writes bufs at off, one WriteAt each.
func pwritev(f *os.File, bufs [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := f.WriteAt(b, off)
		total += n
		off += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
