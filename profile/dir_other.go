//go:build !unix

package profile

// oNoFollow is 0 where the platform has no O_NOFOLLOW; O_EXCL still refuses
// an existing file or link at the temporary path.
const oNoFollow = 0
