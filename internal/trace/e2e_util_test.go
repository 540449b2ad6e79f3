package trace_test

import "fmt"

func fmtSscan(s string, before, after *int) (int, error) {
	return fmt.Sscanf(s, "flush %d %d", before, after)
}
