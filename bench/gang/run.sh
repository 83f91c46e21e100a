#!/bin/sh
# bench/gang/run.sh: builds bench/gang and its CPU-bound rank program and
# runs it; arguments go to the bench (see main.go), e.g.
#
#	sh bench/gang/run.sh -iters 200 -ops 1000000 -quanta 1,20,100
#
# Where Open MPI is installed (mpicc.openmpi, mpirun.openmpi: Debian's
# libopenmpi-dev openmpi-bin), part 1 also runs examples/c/stencil.c under it.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/" ./bench/gang ./examples/stencil
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
	mpicc.openmpi -O2 -o "$dir/stencil.ompi" examples/c/stencil.c -lm
	set -- -ompi "$dir/stencil.ompi" "$@"
fi
"$dir/gang" -prog "$dir/stencil" "$@"
