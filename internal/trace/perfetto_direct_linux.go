//go:build linux

package trace

import "syscall"

const oDirect = syscall.O_DIRECT
