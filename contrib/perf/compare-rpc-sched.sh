#!/usr/bin/env bash
# compare-rpc-sched.sh: the rpc engine's rate with handlers run as tasks of
# sched (fifo, or the policy given) against the same handlers flagged
# OPAL_RPC_OP_INLINE (called directly), alternating, over ofi+shm.
#
# Usage: contrib/perf/compare-rpc-sched.sh [BUILD_DIR]
#   environment: ROUNDS (default 9), ITERATIONS (100000), WINDOW (16),
#   POLICY (fifo), BLOCKING (set: --blocking)
#
# Server on core 0, client on core 1. Prints each round's pair and ratio,
# then the median of the ratios and of each side's rates (issue 12's
# target: scheduled >= 0.9x inline).
set -u
build=${1:-_build}
perf="$build/tools/opal_perf/opal_perf"
[ -x "$perf" ] || { echo "compare-rpc-sched.sh: no $perf (build first)" >&2; exit 1; }
rounds=${ROUNDS:-9} iterations=${ITERATIONS:-100000} window=${WINDOW:-16}
policy=${POLICY:-fifo} blocking=${BLOCKING:+--blocking}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

rate() { # inline: 0 or 1
    rm -f "$work/uri"
    OPAL_MCA_sched=$policy OPAL_PERF_RPC_INLINE=$1 taskset -c 0 timeout 120 "$perf" rpc-server \
        --na ofi+shm --uri-file "$work/uri" $blocking >"$work/server.log" 2>&1 &
    local spid=$!
    taskset -c 1 timeout 120 "$perf" rpc-rate --na ofi+shm --uri-file "$work/uri" $blocking \
        --window "$window" --sizes 0 -i "$iterations" 2>/dev/null | awk '$1 == 0 { print $2; exit }'
    wait "$spid" 2>/dev/null
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$work/pairs"
for r in $(seq "$rounds"); do
    s=$(rate 0) i=$(rate 1)
    [ -n "$s" ] && [ -n "$i" ] || { echo "round $r: a run failed" >&2; continue; }
    echo "$s $i" | awk -v r="$r" -v p="$policy" '{ printf "round %d: sched %s %.0f RPC/s, inline %.0f, ratio %.3f\n", r, p, $1, $2, $1 / $2 }'
    echo "$s $i" >>"$work/pairs"
done
echo "median ratio (per round): $(awk '{ print $1 / $2 }' "$work/pairs" | median)"
echo "median rates: sched $policy $(awk '{ print $1 }' "$work/pairs" | median), inline $(awk '{ print $2 }' "$work/pairs" | median) RPC/s"
