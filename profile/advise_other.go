//go:build !(linux && (amd64 || arm64 || loong64 || riscv64))

package profile

const canAdvise = false

// inPageCache cannot tell here: it reports true.
func inPageCache(string) bool { return true }

// adviseWillNeed does nothing where posix_fadvise is not used.
func adviseWillNeed(string) {}
