#!/usr/bin/env bash
# Builds the OSU micro-benchmarks (OMB) from a directory where the user has unpacked them and runs
# them under bcsmpi, Open MPI and MPICH side by side, printing one table.
# Usage: bench/osu/run.sh [options] OSU_DIR      (see bench/osu/README.md)
set -uo pipefail

np_pt2pt=2 np_multi=4 np_coll=4 iters=100 warmup=10 maxsize=65536 timeout_s=300
mpis="bcsmpi openmpi mpich" only="" direct=0 syncs="flush lock fence pscw" keep=""
usage() {
  echo "usage: $0 [-n NP_COLL] [-i ITERS] [-x WARMUP] [-m MAXSIZE] [-t TIMEOUT_S] [-M 'bcsmpi openmpi mpich']"
  echo "          [-b 'osu_latency osu_bw ...'] [-s 'flush lock fence pscw'] [-d] [-k DIR] OSU_DIR"
  exit 2
}
while getopts "n:i:x:m:t:M:b:s:dk:h" o; do
  case $o in
    n) np_coll=$OPTARG np_multi=$OPTARG ;; i) iters=$OPTARG ;; x) warmup=$OPTARG ;; m) maxsize=$OPTARG ;;
    t) timeout_s=$OPTARG ;; M) mpis=$OPTARG ;; b) only=$OPTARG ;; s) syncs=$OPTARG ;; d) direct=1 ;;
    k) keep=$OPTARG ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
osu=$(cd "$1" && pwd) || { echo "run.sh: no directory $1" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=/usr/local/go/bin:$PATH

if [ -n "$keep" ]; then work=$keep; mkdir -p "$work"; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
echo "# work directory: $work" >&2

# The benchmarks, the rank count each runs with, and the figure's message size (- for none).
pt2pt="osu_latency osu_bw osu_bibw osu_mbw_mr osu_multi_lat osu_latency_mt"
coll="osu_barrier osu_bcast osu_reduce osu_allreduce osu_gather osu_gatherv osu_scatter osu_scatterv
  osu_allgather osu_allgatherv osu_alltoall osu_alltoallv osu_alltoallw osu_reduce_scatter
  osu_ibarrier osu_ibcast osu_ireduce osu_iallreduce osu_igather osu_igatherv osu_iscatter osu_iscatterv
  osu_iallgather osu_iallgatherv osu_ialltoall osu_ialltoallv osu_ialltoallw osu_ireduce_scatter"
rma="osu_put_latency osu_get_latency osu_acc_latency osu_get_acc_latency osu_fop_latency osu_cas_latency
  osu_put_bw osu_get_bw osu_put_bibw"
all="$pt2pt $coll $rma"
[ -n "$only" ] && all=$only

compilers() { # mpi -> "CC CXX"
  case $1 in
    bcsmpi) echo "$work/bcs/bcscc $work/bcs/bcscxx" ;;
    openmpi) echo "mpicc.openmpi mpicxx.openmpi" ;;
    mpich) echo "mpicc.mpich mpicxx.mpich" ;;
  esac
}
launcher() { # mpi np -> command prefix
  case $1 in
    bcsmpi) echo "$work/bcs/bcsrun -n $2" ;;
    openmpi) echo "mpirun.openmpi --allow-run-as-root --oversubscribe -np $2" ;;
    mpich) echo "mpiexec.mpich -n $2" ;;
  esac
}

# bcsmpi's compiler wrapper and launcher, from this checkout.
mkdir -p "$work/bcs"
(cd "$repo" && go build -o "$work/bcs/" ./cmd/...) || { echo "run.sh: go build of bcsmpi failed" >&2; exit 1; }

srcof() { find "$osu" -name "$1.c" -path '*mpi*' -not -path '*/nccl/*' 2>/dev/null | head -1; }

build_direct() { # mpi dir: compile util once, then each benchmark
  local mpi=$1 dir=$2 cc util utilsrc b src
  cc=$(compilers "$mpi" | cut -d' ' -f1)
  util=$(dirname "$(find "$osu" -name osu_util.c -not -path '*/openshmem/*' | head -1)")
  [ -d "$util" ] || { echo "run.sh: no osu_util.c under $osu" >&2; return 1; }
  utilsrc=$(ls "$util"/osu_util*.c | grep -v -e pgas -e graph -e papi -e nccl -e gpu -e cuda -e rocm)
  for b in $all; do
    src=$(srcof "$b"); [ -n "$src" ] || continue
    $cc -O2 -I"$util" -o "$dir/$b" "$src" $utilsrc -lm -lpthread >"$dir/$b.build.log" 2>&1 || true
  done
}

build_configure() { # mpi dir: OMB's own configure and make, out of tree
  local mpi=$1 dir=$2 cc cxx
  read -r cc cxx <<<"$(compilers "$mpi")"
  (cd "$dir" && "$osu/configure" CC="$cc" CXX="$cxx" >configure.log 2>&1 && make -j2 >make.log 2>&1)
}

for mpi in $mpis; do
  cc=$(compilers "$mpi" | cut -d' ' -f1)
  command -v "$cc" >/dev/null 2>&1 || { echo "# $mpi: no $cc, skipped" >&2; mpis=${mpis/$mpi/}; continue; }
  mkdir -p "$work/$mpi"
  if [ $direct = 0 ] && [ -x "$osu/configure" ] && build_configure "$mpi" "$work/$mpi"; then :
  else
    [ $direct = 0 ] && [ -x "$osu/configure" ] && echo "# $mpi: configure/make failed (see $work/$mpi/*.log); compiling directly" >&2
    build_direct "$mpi" "$work/$mpi"
  fi
done

binof() { find "$work/$1" -type f -perm -u+x -name "$2" 2>/dev/null | head -1; }

run_one() { # mpi bench np args... -> prints the cell
  local mpi=$1 b=$2 np=$3; shift 3
  local bin out rc cell size line
  bin=$(binof "$mpi" "$b"); [ -n "$bin" ] || { echo "no-build"; return; }
  out="$work/$mpi/$b.$(echo "$*" | tr -c 'a-z0-9' _).out"
  (cd "$work/$mpi" && timeout "$timeout_s" $(launcher "$mpi" "$np") "$bin" "$@" >"$out" 2>&1)
  rc=$?
  case $rc in 0) ;; 124|137) echo "HANG(${timeout_s}s)"; return ;; *) ;; esac
  if grep -qE '[[:space:]]Fail([[:space:]]|$)|VALIDATION ERROR' "$out"; then echo "WRONG"; return; fi
  if [ $rc != 0 ]; then
    if grep -qiE 'THREAD_MULTIPLE|not supported|Invalid' "$out"; then echo "refused"; else echo "FAIL(rc=$rc)"; fi
    return
  fi
  # the figure: second column of the last data row (latency, bandwidth or overall time)
  line=$(grep -E '^[0-9]+[[:space:]]+[0-9.]+' "$out" | tail -1)
  [ -z "$line" ] && line=$(grep -E '^[[:space:]]*[0-9.]+[[:space:]]*' "$out" | tail -1 | sed 's/^/- /')
  size=$(echo "$line" | awk '{print $1}'); cell=$(echo "$line" | awk '{print $2}')
  echo "${cell:-?}@${size:-?}"
}

printf '%-24s %-26s' benchmark options; for mpi in $mpis; do printf ' %-18s' "$mpi"; done; echo
row() { # bench np args...
  local b=$1 np=$2; shift 2
  printf '%-24s %-26s' "$b" "-n $np $*"
  for mpi in $mpis; do printf ' %-18s' "$(run_one "$mpi" "$b" "$np" "$@")"; done
  echo
}
validates() { local s; s=$(srcof "$1"); [ -n "$s" ] && grep -q 'options.validate' "$s"; }

for b in $all; do
  src=$(srcof "$b")
  [ -n "$src" ] || { printf '%-24s not in %s\n' "$b" "$osu"; continue; }
  c=""; validates "$b" && c="-c"
  case " $pt2pt " in
    *" $b "*)
      np=$np_pt2pt; case $b in osu_mbw_mr|osu_multi_lat) np=$np_multi ;; esac
      args="-i $iters -x $warmup -m $maxsize"
      [ $b = osu_latency_mt ] && c=""
      row "$b" "$np" $args $c
      continue ;;
  esac
  case " $rma " in
    *" $b "*)
      for s in $syncs; do
        case $b in osu_put_bibw) case $s in fence|pscw) ;; *) continue ;; esac ;; esac
        case $b in osu_fop_latency|osu_cas_latency) args="-i $iters -x $warmup" ;; *) args="-i $iters -x $warmup -m $maxsize" ;; esac
        row "$b" 2 $args -s "$s"
      done
      continue ;;
  esac
  case $b in osu_barrier|osu_ibarrier) args="-i $iters -x $warmup" ;; *) args="-i $iters -x $warmup -m $maxsize" ;; esac
  row "$b" "$np_coll" $args $c
done
