//go:build linux

package analyze

import "syscall"

// sysMap maps n bytes (rounded up to pages) of private anonymous memory,
// zeroed by the kernel; with huge, it asks for transparent huge pages on
// it (MADV_HUGEPAGE: the machine's setting may be "madvise", under which
// the Go runtime's heap gets none), and its failing is an error too, with
// nothing left mapped.
func sysMap(n int, huge bool) ([]byte, error) {
	n = (n + 4095) &^ 4095
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	if huge {
		if err := syscall.Madvise(b, syscall.MADV_HUGEPAGE); err != nil {
			syscall.Munmap(b)
			return nil, err
		}
	}
	return b, nil
}

func sysUnmap(b []byte) error { return syscall.Munmap(b) }

// sysRelease gives b's pages (whole pages of a mapping) back to the
// kernel: b stays mapped, and reads as zeroes until written again
// (MADV_DONTNEED: the resident set shrinks at once).
func sysRelease(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }
