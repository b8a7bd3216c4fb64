#!/usr/bin/env bash
# Slurm's srun --mpi=pmix across the two nodes of test/slurm/cluster.sh
# against mcarun on one machine, 4 ranks, alternating the two launchers
# round by round:
#
#   /bin/true      srun --mpi=pmix -N 2 -n 4 /bin/true
#                  mcarun -np 4 --oversubscribe /bin/true
#                  (and srun --mpi=none, to show what the PMIx plugin adds)
#   orte program   the same with test/orte/orte_allgather_rank (orte_init,
#                  put 64 bytes, fence with collection, read every peer's
#                  value, orte_finalize): ess/pmix under srun, ess/env
#                  under mcarun
#
# each first as a job of its own (srun asks slurmctld for an allocation
# every time), then as a job step inside one allocation (salloc -N 2 -n 4,
# then srun in it: what a batch script's sruns cost). Prints the median
# wall time of each and the median of the per-round ratios srun / mcarun. Both launchers run from the cluster's login side
# (the controller's namespace), so cluster.sh's own wrapper is not timed.
#
#   contrib/perf/srun_vs_mcarun.sh [--rounds N] [--build DIR]
#
# N defaults to 9. DIR is a built tree (default _build). Needs root: the
# script starts its own cluster under DIR/test/slurm/perf.<pid> and stops
# it however it ends.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=9
build=$top/_build
inside=no
steps=no
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --inside) inside=yes; shift ;;
        --steps) steps=yes; shift ;;
        -h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "srun_vs_mcarun: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
build=$(cd "$build" 2>/dev/null && pwd) || { echo "srun_vs_mcarun: no build tree" >&2; exit 1; }
prog=$build/test/orte/orte_allgather_rank
[ -x "$prog" ] || { echo "srun_vs_mcarun: no $prog (make check TESTS= in $build)" >&2; exit 1; }

if [ $inside = no ]; then
    # Short: slurmstepd's PMIx socket lives under it (test/slurm/cluster.sh).
    cluster=$build/slurm-perf.$$
    trap 'bash "$top/test/slurm/cluster.sh" stop "$cluster"' EXIT
    trap 'exit 1' INT TERM HUP
    bash "$top/test/slurm/cluster.sh" start "$cluster" || exit 1
    eval "$(make -s -C "$build" print-test-env)"
    bash "$top/test/slurm/cluster.sh" run "$cluster" \
        bash "$here/$(basename "$0")" --inside --rounds "$rounds" --build "$build"
    exit
fi

mcarun=$build/orte/tools/mcarun/mcarun
if [ -x "$build/orte/tools/mcarun/.libs/mcarun" ]; then
    # The real program, not libtool's wrapper script.
    mcarun=$build/orte/tools/mcarun/.libs/mcarun
    export LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# elapsed_us COMMAND...: its wall time in microseconds; fails with it.
elapsed_us() {
    local t0 t1 out
    t0=$EPOCHREALTIME
    if ! out=$("$@" 2>&1); then
        echo "srun_vs_mcarun: failed: $*" >&2
        echo "$out" | tail -n 5 | sed 's/^/    /' >&2
        return 1
    fi
    t1=$EPOCHREALTIME
    echo $((${t1/./} - ${t0/./}))
}

median() {
    tr ' ' '\n' | grep . | sort -g |
        awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# compare LABEL MPI PROGRAM...: rounds of srun --mpi=MPI then mcarun.
compare() {
    local label=$1 mpi=$2 a b as="" bs="" ratios=""
    shift 2
    [ $steps = yes ] && label="$label (step)"
    for _ in $(seq "$rounds"); do
        a=$(elapsed_us srun --mpi="$mpi" -N 2 -n 4 "$@") || exit 1
        b=$(elapsed_us "$mcarun" -np 4 --oversubscribe "$@") || exit 1
        as="$as $a"
        bs="$bs $b"
        ratios="$ratios $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')"
    done
    printf '%-36s srun %8.1f ms   mcarun %8.1f ms   median ratio srun/mcarun %.2f\n' "$label" \
        "$(echo "$as" | median | awk '{ print $1 / 1000 }')" \
        "$(echo "$bs" | median | awk '{ print $1 / 1000 }')" "$(echo "$ratios" | median)"
}

if [ $steps = no ]; then
    echo "srun: $(command -v srun) ($(srun --version)), 2 nodes x 2 ranks"
    echo "mcarun: $mcarun, 4 ranks on this machine"
    echo "rounds: $rounds, alternating; $(nproc) cpus"
    # One untimed run of each, so that neither pays for a cold cache.
    elapsed_us srun --mpi=pmix -N 2 -n 4 "$prog" >/dev/null || exit 1
    elapsed_us "$mcarun" -np 4 --oversubscribe "$prog" >/dev/null || exit 1
fi
# srun's own cost without the PMIx plugin (mcarun's figure is the same run).
compare "-n 4 /bin/true, no pmix" none /bin/true
compare "-n 4 /bin/true" pmix /bin/true
compare "-n 4 orte_allgather_rank" pmix "$prog"
if [ $steps = no ]; then
    salloc -Q -N 2 -n 4 bash "$here/$(basename "$0")" --inside --steps --rounds "$rounds" \
        --build "$build"
fi
