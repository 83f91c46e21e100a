#!/bin/sh
# run.sh PROG NPROCS...: compile testdata/diff/PROG.c with mpicc.mpich,
# mpicc.openmpi and bcscc and run it on each count, printing what is not
# "ok" (a developer's aid; IMPLS="mpich ompi bcs" picks implementations).
d=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$d/../../../bin" && pwd)
p=$1; shift
o=${TMPDIR:-/tmp}/difft; mkdir -p $o
impls=${IMPLS:-"mpich ompi bcs"}
for i in $impls; do case $i in
  mpich) mpicc.mpich -g -w -o $o/$p.mpich $d/$p.c || exit 1;;
  ompi) mpicc.openmpi -g -w -o $o/$p.ompi $d/$p.c || exit 1;;
  bcs) $bin/bcscc -Wall -o $o/$p.bcs $d/$p.c || exit 1;;
esac; done
for n in "$@"; do for i in $impls; do
  echo "== $i $n"
  case $i in
  mpich) timeout 60 mpiexec.mpich -n $n $o/$p.mpich;;
  ompi) timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe -n $n $o/$p.ompi;;
  bcs) timeout 60 $bin/bcsrun -n $n $o/$p.bcs;;
  esac 2>&1 | grep -v " ok [0-9]*$" | grep -v "^ *[0-9][0-9]* .*0x\|^=\|^$\|FAQ\|typically\|EXIT STRING\|^\[vm" | sort | head -${LINES:-20}
done; done
