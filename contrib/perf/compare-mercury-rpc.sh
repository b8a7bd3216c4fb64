#!/usr/bin/env bash
# compare-mercury-rpc.sh: opal-mca's rpc engine (opal_perf rpc-rate)
# against Mercury 2.4.1's hg_rate, on the same transport, in one run.
#
# Usage: contrib/perf/compare-mercury-rpc.sh --mercury-build DIR [options] [BUILD_DIR]
#
#   BUILD_DIR            an opal-mca build tree (default: _build)
#   --mercury-build DIR  a Mercury build tree with bin/hg_rate and
#                        bin/hg_perf_server (see ../shared/peers/README.md)
#   --transports LIST    shm, sm, tcp (default "shm sm tcp"): Mercury ofi+shm
#                        against our ofi+shm (the same transport), Mercury's
#                        own na+sm against our ofi+shm (until na/btl over
#                        btl/sm serves rpc), ofi+tcp against ofi+tcp
#   --windows LIST       requests in flight (default "1 16")
#   --modes LIST         busy, blocking (default "busy blocking")
#   --rounds N           rounds (default 5), each runs Mercury then ours
#   --size N             argument bytes (default 8)
#   --iterations N       RPCs per measurement (default 20000)
#
# Servers run on core 0, clients on core 1; in every round Mercury and
# ours alternate. The medians of the rounds and their ratio (ours /
# Mercury) are printed per transport, window and mode; the target is a
# ratio of at least 1.5 (1.2 over tcp).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mercury_build=""
transports="shm sm tcp"
windows="1 16"
modes="busy blocking"
rounds=5
size=8
iterations=20000
target=""
while [ $# -gt 0 ]; do
    case "$1" in
        --mercury-build) mercury_build=$2; shift 2 ;;
        --transports) transports=$2; shift 2 ;;
        --windows) windows=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare-mercury-rpc.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) target=$1; shift ;;
    esac
done
for n in "$rounds" "$iterations" "$size"; do
    case "$n" in '' | *[!0-9]*) echo "compare-mercury-rpc.sh: --rounds, --iterations and --size need numbers" >&2; exit 2 ;; esac
done
mbin=$mercury_build/bin
for tool in hg_rate hg_perf_server; do
    [ -x "$mbin/$tool" ] || { echo "compare-mercury-rpc.sh: $mbin/$tool is missing (--mercury-build)" >&2; exit 2; }
done
target=${target:-$top/_build}
opal_perf=$target/tools/opal_perf/opal_perf
[ -x "$opal_perf" ] || { echo "compare-mercury-rpc.sh: no $opal_perf" >&2; exit 2; }
OPAL_MCA_mca_base_component_path=$(find "$target/opal/mca" "$target/orte/mca" -type d -name .libs 2>/dev/null | sort | tr '\n' ':')
export OPAL_MCA_mca_base_component_path

work=$(mktemp -d "${TMPDIR:-/tmp}/compare-mercury-rpc.XXXXXX")
spid=""
cleanup() {
    # hg_perf_server keeps spinning after a client with -x left: stop it by pid.
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# Runs Mercury's pair once; prints the rate (RPC/s) or nothing.
mercury_rate() { # transport window mode
    local na proto busy=""
    case "$1" in shm) na=ofi; proto=shm ;; sm) na=na; proto=sm ;; tcp) na=ofi; proto=tcp ;; esac
    [ "$3" = busy ] && busy=-b
    (cd "$work" && rm -f port.cfg &&
        { taskset -c 0 timeout 120 "$mbin/hg_perf_server" -c $na -p $proto $busy >server.log 2>&1 &
          echo $! >server.pid; } &&
        for _ in $(seq 100); do [ -s port.cfg ] && break; sleep 0.1; done &&
        taskset -c 1 timeout 120 "$mbin/hg_rate" -c $na -p $proto $busy -x "$2" -y "$size" -z "$size" \
            -l "$iterations" 2>/dev/null | awk -v s="$size" '$1 == s { print $2; exit }')
    spid=$(cat "$work/server.pid" 2>/dev/null)
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    spid=""
}

ours_rate() { # transport window mode
    local info blocking=""
    case "$1" in shm | sm) info=ofi+shm ;; tcp) info=ofi+tcp ;; esac
    [ "$3" = blocking ] && blocking=--blocking
    rm -f "$work/uri"
    taskset -c 0 timeout 120 "$opal_perf" rpc-server --na $info --uri-file "$work/uri" $blocking \
        >"$work/oserver.log" 2>&1 &
    spid=$!
    taskset -c 1 timeout 120 "$opal_perf" rpc-rate --na $info --uri-file "$work/uri" $blocking \
        --window "$2" --sizes "$size" -i "$iterations" 2>/dev/null |
        awk -v s="$size" '$1 == s { print $2; exit }'
    wait "$spid" 2>/dev/null
    spid=""
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-10s %-7s %-9s %14s %14s %8s\n' transport window mode "Mercury RPC/s" "ours RPC/s" ratio
for t in $transports; do
    for w in $windows; do
        for m in $modes; do
            : >"$work/m" && : >"$work/o"
            for _ in $(seq "$rounds"); do
                mercury_rate "$t" "$w" "$m" >>"$work/m"
                ours_rate "$t" "$w" "$m" >>"$work/o"
            done
            mm=$(median <"$work/m")
            om=$(median <"$work/o")
            ratio=$(awk -v a="$om" -v b="$mm" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else print "n/a" }')
            printf '%-10s %-7s %-9s %14s %14s %8s\n' "$t" "$w" "$m" "$mm" "$om" "$ratio"
        done
    done
done
