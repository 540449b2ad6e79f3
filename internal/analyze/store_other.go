//go:build !linux

package analyze

import "errors"

// sysMap is not tried on systems other than Linux: the store's lists
// stay on the Go heap.
func sysMap(int, bool) ([]byte, error) { return nil, errors.New("no mapped store on this system") }

func sysUnmap([]byte) error { return nil }

func sysRelease([]byte) {}
