//go:build unix

package profile

import "syscall"

const oNoFollow = syscall.O_NOFOLLOW
