#!/bin/sh
# build-lib.sh MPICC OUT: generate the wrappers from MPICC's mpi.h and build
# libmpiscope.so and libmpiscope.a for that MPI into OUT/lib/<family>/, and
# record MPICC's absolute path in OUT/lib/<family>/mpicc.
set -e
mpicc=$1
out=$2
family=$(go run ./cmd/mpiwrapgen -mpicc "$mpicc" -print-family)
go run ./cmd/mpiwrapgen -mpicc "$mpicc" -o "internal/interpose/zwrap_$family.c" -qmpi "internal/interpose/zqmpi_$family.c"
# Fortran entry points (internal/wrapgen/fortran.go); the library links the
# family's Fortran libraries so that their profiling entries resolve.
fflags=$(go run ./cmd/mpiwrapgen fortran -optional -mpicc "$mpicc" -o "internal/interpose/zfwrap_$family.c" -ldflags)
export CGO_LDFLAGS="${CGO_LDFLAGS:-} $fflags"
mkdir -p "$out/lib/$family"
CC="$mpicc" go build -tags "mpiscope_$family" -buildmode=c-shared -o "$out/lib/$family/libmpiscope.so" ./cmd/libmpiscope
CC="$mpicc" go build -tags "mpiscope_$family" -buildmode=c-archive -o "$out/lib/$family/libmpiscope.a" ./cmd/libmpiscope
rm -f "$out/lib/$family/libmpiscope.h"
# Which MPI this build is for: the tests take this family's compilers and
# mpirun from here (internal/mpitest).
# Stacking shims (docs/stacking.md).
sh scripts/build-shim.sh "$mpicc" "$out" >/dev/null
command -v "$mpicc" > "$out/lib/$family/mpicc"
echo "$family"
