//go:build linux && (arm64 || loong64 || riscv64)

package profile

const sysPreadv2 = 286 // asm-generic/unistd.h
