//go:build mpiscope_openmpi

package interpose

const family = "openmpi"
