//go:build mpiscope_mpich

package interpose

const family = "mpich"
