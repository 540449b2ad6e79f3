//go:build !linux

package trace

const oDirect = 0 // no direct writes: DirectFile writes as os.File does

// directAlloc returns n bytes aligned to directAlign (unused without
// direct writes), and what frees them.
func directAlloc(n int) ([]byte, func()) { return heapAligned(n), func() {} }
