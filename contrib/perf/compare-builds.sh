#!/usr/bin/env bash
# compare-builds.sh: one opal_perf measurement in two opal-mca build trees
# (the code before a change and after it), alternating, on the same cores.
#
# Usage: contrib/perf/compare-builds.sh [--rounds N] [--np N] BEFORE AFTER -- ARGS...
#
#   BEFORE, AFTER   build trees (each with orte/tools/mcarun/mcarun and
#                   tools/opal_perf/opal_perf), e.g. a git worktree of the
#                   old commit built beside the current _build
#   ARGS            opal_perf's subcommand and options, run in a job:
#                   mcarun -np NP --bind-to core opal_perf ARGS
#   --rounds N      rounds (default 7); each runs BEFORE, then AFTER
#   --np N          ranks (default 2)
#
# Prints each round's figures per size and, per size, the median over the
# rounds of AFTER / BEFORE (the figure opal_perf prints first after the
# size: a rate or bandwidth, where more is better, or a time, where less
# is). The host moves its vCPUs between physical cores, so one round can
# be 3x off the next; alternating and taking the median of the ratios is
# what makes two builds comparable on it.
#
#   contrib/perf/compare-builds.sh /tmp/base/_build _build -- rpc-rate --na btl --window 16 --sizes 8 -i 100000
set -u

rounds=7 np=2
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) break ;;
    esac
done
if [ $# -lt 4 ] || [ "$3" != -- ]; then
    echo "usage: compare-builds.sh [--rounds N] [--np N] BEFORE AFTER -- ARGS..." >&2
    exit 2
fi
before=$1 after=$2
shift 3
for b in "$before" "$after"; do
    for p in orte/tools/mcarun/mcarun tools/opal_perf/opal_perf; do
        [ -x "$b/$p" ] || { echo "compare-builds.sh: no $b/$p (build it first)" >&2; exit 2; }
    done
done
case "$rounds" in '' | *[!0-9]* | 0) echo "compare-builds.sh: --rounds wants a positive number, not '$rounds'" >&2; exit 2 ;; esac

# One run; prints "size figure" lines (opal_perf's data lines: a size,
# then its figures), nothing when the run failed.
run() { # build args...
    local build=$1
    shift
    (cd "$build" && taskset -c 0,1 timeout 300 orte/tools/mcarun/mcarun -np "$np" --bind-to core \
        tools/opal_perf/opal_perf "$@" 2>/dev/null) | awk '$1 ~ /^[0-9]+$/ && NF >= 2 { print $1, $2 }'
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== opal_perf $*: $rounds rounds, before then after in each"
printf '%-6s %-10s %16s %16s %8s\n' round size before after ratio
for ((i = 1; i <= rounds; i++)); do
    a=$(run "$before" "$@")
    b=$(run "$after" "$@")
    if [ -z "$a" ] || [ -z "$b" ]; then
        echo "round $i: a run printed no figures (try it by hand: mcarun -np $np opal_perf $*)" >&2
        continue
    fi
    join <(echo "$a" | sort -k1,1) <(echo "$b" | sort -k1,1) |
        awk -v r="$i" '$2 > 0 { printf "%-6s %-10s %16s %16s %8.3f\n", r, $1, $2, $3, $3 / $2; print $1, $3 / $2 > "/dev/stderr" }' \
            2>>"$out"
done
echo "== median of after / before per size"
sort -k1,1n -k2,2g "$out" | awk '
    { v[$1, ++n[$1]] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 } }
    END {
        for (i = 1; i <= m; i++) {
            s = order[i]; k = n[s]
            med = k % 2 ? v[s, (k + 1) / 2] : (v[s, k / 2] + v[s, k / 2 + 1]) / 2
            printf "%-10s %8.3f  (%d rounds)\n", s, med, k
        }
    }'
