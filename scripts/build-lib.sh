#!/bin/sh
# build-lib.sh MPICC OUT: generate the wrappers from MPICC's mpi.h and build
# libmpiscope.so and libmpiscope.a for that MPI into OUT/lib/<family>/.
set -e
mpicc=$1
out=$2
family=$(go run ./cmd/mpiwrapgen -mpicc "$mpicc" -print-family)
go run ./cmd/mpiwrapgen -mpicc "$mpicc" -o "internal/interpose/zwrap_$family.c"
mkdir -p "$out/lib/$family"
CC="$mpicc" go build -tags "mpiscope_$family" -buildmode=c-shared -o "$out/lib/$family/libmpiscope.so" ./cmd/libmpiscope
CC="$mpicc" go build -tags "mpiscope_$family" -buildmode=c-archive -o "$out/lib/$family/libmpiscope.a" ./cmd/libmpiscope
rm -f "$out/lib/$family/libmpiscope.h"
echo "$family"
