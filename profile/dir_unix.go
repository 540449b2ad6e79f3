//go:build unix

package profile

import (
	"io"
	"io/fs"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// readOnlyFile is a file opened for reading with plain system calls: unlike
// an *os.File it is not set up for the runtime's poller (fcntl, epoll_ctl)
// and needs no allocation, which matters when reading 100,000 rank files.
// Errors are those os.File would return.
type readOnlyFile struct {
	fd   int
	path string
}

func openReadOnly(path string) (readOnlyFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			return readOnlyFile{fd, path}, nil
		}
		if err != syscall.EINTR {
			return readOnlyFile{-1, path}, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// stat returns the file's size and whether it is a regular file.
func (f readOnlyFile) stat() (int64, bool, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(f.fd, &st)
		if err == nil {
			return st.Size, st.Mode&syscall.S_IFMT == syscall.S_IFREG, nil
		}
		if err != syscall.EINTR {
			return 0, false, &fs.PathError{Op: "stat", Path: f.path, Err: err}
		}
	}
}

// read reads up to len(b) bytes; at the end of the file it returns 0, io.EOF.
func (f readOnlyFile) read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f readOnlyFile) close() { syscall.Close(f.fd) }
