#!/bin/sh
# build-variant.sh FAMILY KIND OUT [CFLAGS...]: build libmpiscope.so for
# FAMILY (openmpi or mpich) with extra C flags, for runbench -variants.
# KIND is "profile" (the generated wrappers) or "passthrough" (wrappers that
# only call PMPI_, as runbench builds its pass-through control). The
# generated files in internal/interpose are not touched: the wrappers are
# generated under OUT and swapped in with go build -overlay.
#
#   sh bench/build-variant.sh openmpi passthrough build/var/openmpi-pt-noplt -fno-plt
#   go run ./bench/cmd/runbench -family openmpi -only ab \
#       -variants 'pt-noplt=build/var/{family}-pt-noplt/libmpiscope.so'
set -e
family=$1 kind=$2 out=$3
shift 3
case $family in
openmpi) mpicc=mpicc.openmpi ;;
mpich) mpicc=mpicc.mpich ;;
*) echo "build-variant.sh: family $family: want openmpi or mpich" >&2; exit 2 ;;
esac
case $kind in
profile) pt= ;;
passthrough) pt=-passthrough ;;
*) echo "build-variant.sh: kind $kind: want profile or passthrough" >&2; exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
go run ./cmd/mpiwrapgen -mpicc "$mpicc" $pt -o "$out/zwrap_$family.c"
fflags=$(go run ./cmd/mpiwrapgen fortran -optional -mpicc "$mpicc" -o "$out/zfwrap_$family.c" -ldflags)
printf '{"Replace":{"%s":"%s","%s":"%s"}}\n' \
	"$PWD/internal/interpose/zwrap_$family.c" "$out/zwrap_$family.c" \
	"$PWD/internal/interpose/zfwrap_$family.c" "$out/zfwrap_$family.c" >"$out/overlay.json"
CC="$mpicc" CGO_CFLAGS="-O2 -g $*" CGO_LDFLAGS="${CGO_LDFLAGS:-} $fflags" \
	go build -overlay "$out/overlay.json" -tags "mpiscope_$family" -buildmode=c-shared -o "$out/libmpiscope.so" ./cmd/libmpiscope
rm -f "$out/libmpiscope.h"
echo "$out/libmpiscope.so"
