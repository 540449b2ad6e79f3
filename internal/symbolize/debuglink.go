package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// openDebugFile finds and opens the separate debug file of f (the module at
// path), as installed by distribution -dbg/-debuginfo packages or produced
// with objcopy --only-keep-debug. It tries, in order:
//
//	<root>/.build-id/xx/yyyy.debug        (from .note.gnu.build-id)
//	<dir>/<debuglink>                      (from .gnu_debuglink)
//	<dir>/.debug/<debuglink>
//	<root>/<dir>/<debuglink>
//
// where root is normally /usr/lib/debug and dir is the module's directory.
// Debuglink candidates must match the CRC32 recorded in the link. It
// returns nil if none is found or usable.
func openDebugFile(f *elf.File, path, root string) *elf.File {
	if id := buildID(f); len(id) >= 2 && root != "" {
		h := hex.EncodeToString(id)
		cand := filepath.Join(root, ".build-id", h[:2], h[2:]+".debug")
		if df := openIfDebug(cand, path, nil); df != nil {
			return df
		}
	}
	name, crc, ok := debugLink(f)
	if !ok {
		return nil
	}
	dir := filepath.Dir(path)
	cands := []string{
		filepath.Join(dir, name),
		filepath.Join(dir, ".debug", name),
	}
	if root != "" {
		cands = append(cands, filepath.Join(root, dir, name))
	}
	for _, c := range cands {
		if df := openIfDebug(c, path, &crc); df != nil {
			return df
		}
	}
	return nil
}

// openIfDebug opens cand if it is not the module itself, matches crc (if
// given) and has DWARF.
func openIfDebug(cand, module string, crc *uint32) *elf.File {
	if cand == module {
		return nil
	}
	if a, err := os.Stat(cand); err != nil || !a.Mode().IsRegular() {
		return nil
	} else if b, err := os.Stat(module); err == nil && os.SameFile(a, b) {
		return nil
	}
	if crc != nil {
		got, err := fileCRC(cand)
		if err != nil || got != *crc {
			return nil
		}
	}
	df, err := elf.Open(cand)
	if err != nil {
		return nil
	}
	if !hasDebugInfo(df) {
		df.Close()
		return nil
	}
	return df
}

func fileCRC(path string) (uint32, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, fh); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// debugLink parses .gnu_debuglink: a NUL-terminated file name, padding to
// a 4-byte boundary and a 4-byte CRC32 in the file's byte order.
func debugLink(f *elf.File) (name string, crc uint32, ok bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return "", 0, false
	}
	data, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	n := bytes.IndexByte(data, 0)
	if n <= 0 {
		return "", 0, false
	}
	name = string(data[:n])
	at := (n + 4) &^ 3
	if at+4 > len(data) || filepath.Base(name) != name {
		return "", 0, false
	}
	return name, f.ByteOrder.Uint32(data[at:]), true
}

// buildID returns the GNU build ID from the module's notes, or nil.
func buildID(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for len(data) >= 12 {
			namesz := uint64(f.ByteOrder.Uint32(data[0:]))
			descsz := uint64(f.ByteOrder.Uint32(data[4:]))
			typ := f.ByteOrder.Uint32(data[8:])
			nameEnd := 12 + (namesz+3)&^3
			descEnd := nameEnd + (descsz+3)&^3
			if nameEnd > uint64(len(data)) || descEnd > uint64(len(data)) {
				break
			}
			if typ == 3 && namesz == 4 && string(data[12:15]) == "GNU" { // NT_GNU_BUILD_ID
				return append([]byte(nil), data[nameEnd:nameEnd+descsz]...)
			}
			data = data[descEnd:]
		}
	}
	return nil
}
