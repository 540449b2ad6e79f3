//go:build linux && (amd64 || arm64 || loong64 || riscv64)

package profile

import (
	"syscall"
	"unsafe"
)

const canAdvise = true

// openHint opens path for a hint: read-only, never blocking (a FIFO).
func openHint(path string) (int, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	return fd, err == nil
}

// inPageCache reports whether the first byte of the file at path can be read
// without waiting for the disk: it reads it with preadv2(RWF_NOWAIT), which
// fails with EAGAIN instead of starting I/O. It reports true when it cannot
// tell (an old kernel, a file system without RWF_NOWAIT, an error).
func inPageCache(path string) bool {
	fd, ok := openHint(path)
	if !ok {
		return true
	}
	defer syscall.Close(fd)
	var b [1]byte
	iov := syscall.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	const rwfNoWait = 0x8
	_, _, errno := syscall.Syscall6(sysPreadv2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, 0, 0, rwfNoWait)
	return errno != syscall.EAGAIN
}

// adviseWillNeed asks the kernel to start reading the file at path into the
// page cache (posix_fadvise POSIX_FADV_WILLNEED) without waiting for it.
// Errors are ignored: this is only a hint, and reading the file reports them.
func adviseWillNeed(path string) {
	fd, ok := openHint(path)
	if !ok {
		return
	}
	const posixFadvWillNeed = 3
	syscall.Syscall6(syscall.SYS_FADVISE64, uintptr(fd), 0, 0, posixFadvWillNeed, 0, 0)
	syscall.Close(fd)
}
