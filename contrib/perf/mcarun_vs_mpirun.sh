#!/usr/bin/env bash
# Start-up cost of mcarun against Open MPI's mpirun, measured in the same
# run: `mcarun -np 2 /bin/true` against `mpirun -np 2 /bin/true`, and the
# same with -np 8 --oversubscribe, alternating the two launchers round by
# round. Prints the median wall time of each and the median of the
# per-round ratios mcarun / mpirun (the target is at most 0.25). Then, when
# the build tree has it, the fence latency of test/perf/orte_perf_fence
# under mcarun for np 2..8.
#
#   contrib/perf/mcarun_vs_mpirun.sh [--rounds N] [--build DIR]
#
# DIR is a configured and built tree (default: _build); its mcarun is run
# directly, not through the libtool wrapper script. mpirun comes from
# PATH (Debian: apt-get install openmpi-bin); as root it is allowed with
# OMPI_ALLOW_RUN_AS_ROOT.
set -u
cd "$(dirname "$0")/../.."
rounds=15
build=_build
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "mcarun_vs_mpirun: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
build=$(cd "$build" 2>/dev/null && pwd) || { echo "mcarun_vs_mpirun: no build tree $build" >&2; exit 1; }

mcarun=$build/orte/tools/mcarun/mcarun
if [ -x "$build/orte/tools/mcarun/.libs/mcarun" ]; then
    # The real program, with the build tree's libraries.
    mcarun=$build/orte/tools/mcarun/.libs/mcarun
    export LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -x "$mcarun" ] || { echo "mcarun_vs_mpirun: build $build first (no $mcarun)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mcarun_vs_mpirun: no mpirun in PATH (apt-get install openmpi-bin)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# time_us COMMAND...: runs it, prints its wall time in microseconds.
time_us() {
    local t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || { echo "mcarun_vs_mpirun: failed: $*" >&2; exit 1; }
    local t1=$EPOCHREALTIME
    echo $(((${t1/./} - ${t0/./})))
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# compare LABEL ARGS...: alternates mcarun ARGS and mpirun ARGS.
compare() {
    local label=$1
    shift
    local a b ratios="" as="" bs=""
    time_us "$mcarun" "$@" >/dev/null
    time_us mpirun "$@" >/dev/null
    for _ in $(seq "$rounds"); do
        a=$(time_us "$mcarun" "$@")
        b=$(time_us mpirun "$@")
        as="$as $a"
        bs="$bs $b"
        ratios="$ratios $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')"
    done
    local ma mb mr
    ma=$(echo "$as" | tr ' ' '\n' | grep . | median)
    mb=$(echo "$bs" | tr ' ' '\n' | grep . | median)
    mr=$(echo "$ratios" | tr ' ' '\n' | grep . | median)
    printf '%-30s mcarun %8.2f ms   mpirun %8.2f ms   median ratio %.3f\n' "$label" \
        "$(awk -v v="$ma" 'BEGIN { print v / 1000 }')" "$(awk -v v="$mb" 'BEGIN { print v / 1000 }')" "$mr"
}

echo "mcarun: $mcarun"
echo "mpirun: $(command -v mpirun) ($(mpirun --version 2>&1 | head -1))"
echo "rounds: $rounds, alternating; $(nproc) cpus"
compare "-np 2 /bin/true" -np 2 /bin/true
compare "-np 8 --oversubscribe /bin/true" -np 8 --oversubscribe /bin/true

fence=$build/test/perf/orte_perf_fence
if [ -x "$fence" ]; then
    echo "fence latency (test/perf/orte_perf_fence under mcarun):"
    for np in 2 3 4 5 6 7 8; do
        "$mcarun" -np "$np" --oversubscribe "$fence" 2000 | sed 's/^/  /'
    done
    "$mcarun" -np 8 --oversubscribe "$fence" 2000 collect | sed 's/^/  /'
fi
