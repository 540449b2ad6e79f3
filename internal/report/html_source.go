package report

import (
	"bufio"
	"os"
	"strings"
)

// sourceCache reads the source lines of callsites when the report is made,
// each file at most once. A file that cannot be read, is not a regular
// file or is larger than maxSourceFile gives no lines.
type sourceCache struct {
	files map[string][]string
}

const (
	maxSourceFile = 16 << 20
	maxSourceLine = 200 // characters shown of a line
)

func newSourceCache() *sourceCache { return &sourceCache{files: map[string][]string{}} }

// line returns line n (1-based) of file, trimmed, or "" when unknown.
func (c *sourceCache) line(file string, n int) string {
	if file == "" || n <= 0 {
		return ""
	}
	lines, ok := c.files[file]
	if !ok {
		lines = readLines(file)
		c.files[file] = lines
	}
	if n > len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[n-1])
	if len(s) > maxSourceLine {
		s = s[:maxSourceLine] + "..."
	}
	return s
}

func readLines(file string) []string {
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxSourceFile {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxSourceFile)
	for sc.Scan() {
		lines = append(lines, strings.ReplaceAll(sc.Text(), "\t", " "))
	}
	return lines
}
