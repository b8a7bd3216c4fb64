#!/usr/bin/env bash
# mcarun against Open MPI's mpirun, measured in the same run, alternating
# the two launchers round by round:
#
#  1. start-up cost: `-np 2 /bin/true` and `-np 8 --oversubscribe /bin/true`;
#  2. for np = 2, 4, ..., 256 (--oversubscribe), an orte program
#     (test/orte/orte_allgather_rank: orte_init, put a 64-byte value,
#     fence with collection, read every other rank's value, orte_finalize)
#     under both launchers -- ess/env under mcarun, ess/pmix under mpirun:
#       launch-to-exit  the wall time of the whole job;
#       collect fence   rank 0's mean time of one collecting fence, over
#                       --fences K rounds of "put, fence with collection"
#                       (run with --fences K, after a plain fence).
#
# Prints per np the medians of each launcher and the median of the
# per-round ratios mcarun / mpirun. Targets (issue 17): at np 256
# launch-to-exit at most 0.5, collect fence at most 1.0.
#
#   contrib/perf/mcarun_vs_mpirun.sh [--rounds N] [--big-rounds N]
#       [--nps "2 4 ... 256"] [--fences K] [--build DIR]
#
# --rounds (default 7) is for np <= 64, --big-rounds (default 5) above.
# DIR is a configured and built tree (default: _build; an optimised one,
# configured without --enable-debug, measures what users get); its mcarun
# is run directly, not through the libtool wrapper script. mpirun comes
# from PATH (Debian: apt-get install openmpi-bin); as root it is allowed
# with --allow-run-as-root. ess/pmix must be built (libpmix-dev) for the
# orte program to run under mpirun.
set -u
cd "$(dirname "$0")/../.."
rounds=7
big_rounds=5
nps="2 4 8 16 32 64 128 256"
fences=20
build=_build
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --big-rounds) big_rounds=$2; shift 2 ;;
        --nps) nps=$2; shift 2 ;;
        --fences) fences=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
mpirun_args=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpirun_args+=(--allow-run-as-root)
# The build tree's plugins (ess/env, ess/pmix) for both launchers' ranks.
eval "$(make -s -C "$build" print-test-env)"
mpirun_args+=(-x OPAL_MCA_mca_base_component_path -x LD_LIBRARY_PATH)

# run_once COMMAND...: runs it with its output in $out; a run that fails
# is said on stderr (with the end of its output) and tried again, twice
# at most: Open MPI 4.1's mpirun now and then fails a large
# oversubscribed job in its own shutdown. Sets elapsed_us.
out= elapsed_us=
run_once() {
    local try t0 t1
    for try in 1 2 3; do
        t0=$EPOCHREALTIME
        if out=$("$@" 2>&1); then
            t1=$EPOCHREALTIME
            elapsed_us=$(((${t1/./} - ${t0/./})))
            return 0
        fi
        echo "mcarun_vs_mpirun: failed (try $try of 3): $*" >&2
        echo "$out" | grep -v '^ *$' | tail -4 | sed 's/^/    /' >&2
    done
    exit 1
}

# time_us COMMAND...: prints its wall time in microseconds.
time_us() {
    run_once "$@"
    echo "$elapsed_us"
}

# fence_us COMMAND...: prints rank 0's collect_fence_us.
fence_us() {
    run_once "$@"
    echo "$out" | awk '/^collect_fence_us / { print $2 }'
}

median() {
    tr ' ' '\n' | grep . | sort -g |
        awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# compare HOW N LABEL UNIT SCALE ARGS...: N alternating rounds of
# HOW mcarun ARGS and HOW mpirun ARGS (HOW: time_us or fence_us); prints
# the medians (divided by SCALE, in UNIT) and the median ratio, and sets
# last_ratio.
last_ratio=
compare() {
    local how=$1 n=$2 label=$3 unit=$4 scale=$5
    shift 5
    local a b as="" bs="" ratios=""
    for _ in $(seq "$n"); do
        a=$($how "$mcarun" --oversubscribe "$@") || exit 1
        b=$($how mpirun "${mpirun_args[@]}" "$@") || exit 1
        as="$as $a"
        bs="$bs $b"
        ratios="$ratios $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')"
    done
    local ma mb
    ma=$(echo "$as" | median)
    mb=$(echo "$bs" | median)
    last_ratio=$(echo "$ratios" | median)
    printf '%-34s mcarun %10.2f %s   mpirun %10.2f %s   median ratio %.3f\n' "$label" \
        "$(awk -v v="$ma" -v s="$scale" 'BEGIN { print v / s }')" "$unit" \
        "$(awk -v v="$mb" -v s="$scale" 'BEGIN { print v / s }')" "$unit" "$last_ratio"
}

prog=$build/test/orte/orte_allgather_rank
[ -x "$prog" ] || { echo "mcarun_vs_mpirun: no $prog (make in $build)" >&2; exit 1; }

echo "mcarun: $mcarun"
echo "mpirun: $(command -v mpirun) ($(mpirun --version 2>&1 | head -1))"
echo "rounds: $rounds (np <= 64), $big_rounds (above), alternating; $(nproc) cpus"
# One untimed run of each, so that neither pays for a cold cache.
time_us "$mcarun" -np 2 "$prog" >/dev/null
time_us mpirun "${mpirun_args[@]}" -np 2 "$prog" >/dev/null
compare time_us "$rounds" "-np 2 /bin/true" ms 1000 -np 2 /bin/true
compare time_us "$rounds" "-np 8 /bin/true" ms 1000 -np 8 /bin/true

launch_256= fence_256=
for np in $nps; do
    n=$rounds
    [ "$np" -gt 64 ] && n=$big_rounds
    compare time_us "$n" "np $np launch-to-exit" ms 1000 -np "$np" "$prog"
    [ "$np" = 256 ] && launch_256=$last_ratio
    compare fence_us "$n" "np $np collect fence" us 1 -np "$np" "$prog" --fences "$fences"
    [ "$np" = 256 ] && fence_256=$last_ratio
done
if [ -n "$launch_256" ]; then
    verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r <= t) ? "met" : "NOT met" }'; }
    echo "targets at np 256: launch-to-exit ratio $launch_256 <= 0.5: $(verdict "$launch_256" 0.5);" \
        "collect fence ratio $fence_256 <= 1.0: $(verdict "$fence_256" 1.0)"
fi
