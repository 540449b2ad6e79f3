#!/bin/sh
# deps.sh: install what building and testing mpiscope needs on Debian, when
# it is missing. Safe to run again: it installs nothing that is present.
set -e
# slurm-wlm and munge: the Slurm test (internal/mpitest/slurm_test.go) runs
# its own one-node cluster; the packages' services are not used.
# chromium: the browser tests of the HTML report and mpiscope view
# (internal/browsertest, headless).
# valgrind: TestCallPathsLean counts instructions with callgrind.
pkgs="openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran g++ make otf2-tools python3-pandas slurm-wlm munge chromium valgrind"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if ! command -v go >/dev/null 2>&1; then
	missing="$missing golang-go"
fi
[ -z "$missing" ] && exit 0
echo "deps.sh: installing:$missing" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
