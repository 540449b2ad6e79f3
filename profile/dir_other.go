//go:build !unix

package profile

import "os"

// oNoFollow is 0 where the platform has no O_NOFOLLOW; O_EXCL still refuses
// an existing file or link at the temporary path.
const oNoFollow = 0

// readOnlyFile is a file opened for reading (see dir_unix.go).
type readOnlyFile struct{ f *os.File }

func openReadOnly(path string) (readOnlyFile, error) {
	f, err := os.Open(path)
	return readOnlyFile{f}, err
}

// stat returns the file's size and whether it is a regular file.
func (f readOnlyFile) stat() (int64, bool, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return 0, false, err
	}
	return fi.Size(), fi.Mode().IsRegular(), nil
}

// read reads up to len(b) bytes; at the end of the file it returns 0, io.EOF.
func (f readOnlyFile) read(b []byte) (int, error) { return f.f.Read(b) }

func (f readOnlyFile) close() { f.f.Close() }
