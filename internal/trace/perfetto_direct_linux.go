//go:build linux

package trace

import "syscall"

const oDirect = syscall.O_DIRECT

// hugePage is the size of a transparent huge page on x86-64 and arm64
// (4 KiB pages).
const hugePage = 2 << 20

// directAlloc returns n bytes aligned to directAlign, and what frees them.
// They are mapped outside Go's heap, aligned to a huge page and advised
// onto transparent huge pages (madvise(MADV_HUGEPAGE)), where the kernel
// gives them: a direct write then pins one page instead of 512
// (measured 2026-11-26, 1.7 GB in direct writes of 2 MiB: 0.03-0.06 s of
// system time against 0.16-0.18 s from 4 KiB pages). Without them, or
// without the mapping, the bytes come from Go's heap.
func directAlloc(n int) ([]byte, func()) {
	m, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return heapAligned(n), func() {}
	}
	a := alignUp(m, hugePage)
	b := m[a : a+n : a+n]
	syscall.Madvise(b, syscall.MADV_HUGEPAGE) // a hint: refused, the pages are small
	return b, func() { syscall.Munmap(m) }
}
