#!/bin/sh
# bench/gang/run.sh: builds bench/gang and its CPU-bound rank program and
# runs it; arguments go to the bench (see main.go), e.g.
#
#	sh bench/gang/run.sh -iters 200 -ops 1000000 -quanta 1,20,100
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/" ./bench/gang ./examples/stencil
"$dir/gang" -prog "$dir/stencil" "$@"
