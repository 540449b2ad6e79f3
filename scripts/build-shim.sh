#!/bin/sh
# build-shim.sh MPICC OUT: the stacking shims (docs/stacking.md) for MPICC's
# MPI: OUT/lib/<family>/stack/libmpiscope-shim-K.so for K = 1..8, each
# one object generated from mpi.h (internal/interpose/zshim_<family>.c)
# linked with a DT_NEEDED of libmpiscope-level-K.so found through
# RUNPATH $ORIGIN: at run time mpiscope puts the shim and a link named
# so to the K-th stacked tool side by side in a directory of its own.
set -e
mpicc=$1
out=$2
family=$(go run ./cmd/mpiwrapgen -mpicc "$mpicc" -print-family)
src="internal/interpose/zshim_$family.c"
go run ./cmd/mpiwrapgen -mpicc "$mpicc" -shim "$src"
dir="$out/lib/$family/stack"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir"
"$mpicc" -O2 -g -fPIC -fvisibility=hidden -c -o "$tmp/shim.o" "$src"
for k in 1 2 3 4 5 6 7 8; do
	# The level's stand-in, only to record the DT_NEEDED.
	"$mpicc" -shared -o "$tmp/libmpiscope-level-$k.so" -Wl,-soname,libmpiscope-level-$k.so -x c /dev/null
	"$mpicc" -shared -o "$dir/libmpiscope-shim-$k.so" -Wl,-soname,libmpiscope-shim-$k.so \
		"$tmp/shim.o" -Wl,--no-as-needed "$tmp/libmpiscope-level-$k.so" -Wl,--as-needed \
		-Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl
done
