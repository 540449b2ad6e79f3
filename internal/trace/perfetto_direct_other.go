//go:build !linux

package trace

const oDirect = 0 // no direct writes: DirectFile writes as os.File does
