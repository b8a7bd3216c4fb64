#!/usr/bin/env bash
# compare-mercury-rpc.sh: opal-mca's rpc engine (opal_perf rpc-rate and
# rpc-bw) against Mercury 2.4.1's hg_rate, hg_bw_read and hg_bw_write, on
# the same transport, in one run.
#
# Usage: contrib/perf/compare-mercury-rpc.sh [--mercury-build DIR] [options] [BUILD_DIR]
#
#   BUILD_DIR            an opal-mca build tree (default: _build)
#   --mercury-build DIR  a Mercury build tree with bin/hg_rate, hg_bw_read,
#                        hg_bw_write and hg_perf_server (default: the cache
#                        contrib/perf/compare-mercury.sh builds Mercury into,
#                        ${XDG_CACHE_HOME:-~/.cache}/opal-mca/mercury-2.4.1/build)
#   --tests LIST         rate, bw (default "rate bw")
#   --transports LIST    shm, sm, btl, tcp, net, btltcp (default "shm btl tcp btltcp"): Mercury
#                        ofi+shm against our ofi+shm (the same transport);
#                        sm: Mercury's own na+sm against our ofi+shm; btl:
#                        Mercury's na+sm against our na/btl over btl/sm (both
#                        shared memory written by the project itself; ours
#                        runs as a 2-rank mcarun job bound to cores 0 and 1,
#                        its blocking mode with btl_sm_blocking so that it
#                        sleeps as Mercury's does); tcp: Mercury's ofi+tcp
#                        against our ofi+tcp; net: Mercury's ofi+tcp
#                        against our ofi+net (libfabric's native TCP RDM
#                        provider, named tcp from libfabric 1.18 on, where
#                        Mercury's ofi+tcp takes it; on 1.17 Mercury takes
#                        tcp;ofi_rxm); btltcp: Mercury's ofi+tcp
#                        against our na/btl over btl/tcp (our own sockets;
#                        server and client started separately)
#   --windows LIST       requests in flight (default "1 16")
#   --modes LIST         busy, blocking (default "busy blocking")
#   --rounds N           rounds (default 5): rate runs Mercury then ours in
#                        odd rounds, ours first in even ones; bw runs
#                        hg_bw_read, ours, hg_bw_write
#   --size N             argument bytes (default 8)
#   --iterations N       RPCs per measurement (default 20000)
#   --bw-sizes LIST      bw chunk sizes (default 64k,256k,1m,4m)
#   --bw-iterations N    bw RPCs per size (default 100), each moving 64 chunks
#
# rate: hg_rate against opal_perf rpc-rate (null RPCs with an IOV of the
# size). bw: hg_bw_read / hg_bw_write (the server's handler pushes /
# pulls 64 chunks of the size into / from the client's bulk handle per
# RPC, MB/s with -M) against opal_perf rpc-bw (the same, both directions),
# busy polling. Servers run on core 0, clients on core 1; in every round
# Mercury and ours alternate. The medians of the rounds, and the median of
# the rounds' ratios (ours / Mercury, each round's pair measured back to
# back), are printed per transport, window and mode (rate) and per
# transport, direction and size (bw); the targets are a rate ratio of at
# least 1.5 (1.2 over tcp) and a bulk read ratio of at least 1.2.
# bw over tcp or btltcp also runs contrib/perf/tcp_floor.c in every round
# (built with cc into the work directory): the read's move (64 chunks of
# each size from core 0 to core 1 per round) over one bare TCP connection,
# and prints Mercury's and our read over it.
# Blocking mode: Mercury's perf tools (hg_perf_request_wait) spin for a
# second after every wake-up before they sleep again, so under a steady
# stream they hardly sleep; ours spins na_base_wait_spin_us (20 us).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mercury_build=${XDG_CACHE_HOME:-$HOME/.cache}/opal-mca/mercury-2.4.1/build
tests="rate bw"
bw_sizes="64k,256k,1m,4m"
bw_iterations=100
transports="shm btl tcp btltcp"
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
        --tests) tests=$2; shift 2 ;;
        --bw-sizes) bw_sizes=$2; shift 2 ;;
        --bw-iterations) bw_iterations=$2; shift 2 ;;
        -h | --help) sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare-mercury-rpc.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) target=$1; shift ;;
    esac
done
for n in "$rounds" "$iterations" "$size" "$bw_iterations"; do
    case "$n" in '' | *[!0-9]*) echo "compare-mercury-rpc.sh: --rounds, --iterations, --size and --bw-iterations need numbers" >&2; exit 2 ;; esac
done
for t in $tests; do
    case "$t" in rate | bw) ;; *) echo "compare-mercury-rpc.sh: test '$t' is not rate or bw" >&2; exit 2 ;; esac
done
mbin=$mercury_build/bin
for tool in hg_rate hg_bw_read hg_bw_write hg_perf_server; do
    [ -x "$mbin/$tool" ] || { echo "compare-mercury-rpc.sh: $mbin/$tool is missing (--mercury-build, or run contrib/perf/compare-mercury.sh once to build Mercury into its cache)" >&2; exit 2; }
done
target=${target:-$top/_build}
opal_perf=$target/tools/opal_perf/opal_perf
[ -x "$opal_perf" ] || { echo "compare-mercury-rpc.sh: no $opal_perf" >&2; exit 2; }
mcarun=$target/orte/tools/mcarun/mcarun
case " $transports " in *" btl "*)
    [ -x "$mcarun" ] || { echo "compare-mercury-rpc.sh: no $mcarun (for --transports btl)" >&2; exit 2; } ;;
esac
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
    case "$1" in shm) na=ofi; proto=shm ;; sm | btl) na=na; proto=sm ;; tcp | net | btltcp) na=ofi; proto=tcp ;; esac
    [ "$3" = busy ] && busy=-b
    (cd "$work" && rm -f port.cfg &&
        { taskset -c 0 timeout -k 5 120 "$mbin/hg_perf_server" -c $na -p $proto $busy >server.log 2>&1 &
          echo $! >server.pid; } &&
        for _ in $(seq 100); do [ -s port.cfg ] && break; sleep 0.1; done &&
        taskset -c 1 timeout 120 "$mbin/hg_rate" -c $na -p $proto $busy -x "$2" -y "$size" -z "$size" \
            -l "$iterations" 2>/dev/null | awk -v s="$size" '$1 == s { print $2; exit }')
    spid=$(cat "$work/server.pid" 2>/dev/null)
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    spid=""
}

ours_rate() { # transport window mode
    local info blocking="" mca=()
    case "$1" in shm | sm) info=ofi+shm ;; tcp) info=ofi+tcp ;; net) info=ofi+net ;; btl) info=btl ;;
        btltcp) info=btl; mca=(--mca btl self,tcp) ;; esac
    [ "$3" = blocking ] && blocking=--blocking
    if [ btl = "$1" ]; then
        local sleep=0
        [ "$3" = blocking ] && sleep=1
        taskset -c 0,1 timeout 120 "$mcarun" -np 2 --bind-to core --mca btl_sm_blocking $sleep \
            "$opal_perf" rpc-rate --na btl $blocking --window "$2" --sizes "$size" \
            -i "$iterations" 2>/dev/null | awk -v s="$size" '$1 == s { print $2; exit }'
        return
    fi
    rm -f "$work/uri"
    taskset -c 0 timeout 120 "$opal_perf" rpc-server --na $info --uri-file "$work/uri" $blocking \
        "${mca[@]}" >"$work/oserver.log" 2>&1 &
    spid=$!
    taskset -c 1 timeout 120 "$opal_perf" rpc-rate --na $info --uri-file "$work/uri" $blocking \
        "${mca[@]}" --window "$2" --sizes "$size" -i "$iterations" 2>/dev/null |
        awk -v s="$size" '$1 == s { print $2; exit }'
    wait "$spid" 2>/dev/null
    spid=""
}

median() { grep -E '^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The bw sizes in bytes, and the range Mercury is asked for.
bw_bytes=$(echo "$bw_sizes" | tr ',' '\n' | awk '/[kK]$/ { print $0 * 1024; next } /[mM]$/ { print $0 * 1048576; next } { print $0 + 0 }')
bw_min=$(echo "$bw_bytes" | sort -n | head -n 1)
bw_max=$(echo "$bw_bytes" | sort -n | tail -n 1)

# Mercury's hg_bw_read or hg_bw_write once: its "size MB/s" rows.
mercury_bw() { # transport tool
    local na proto
    case "$1" in shm) na=ofi; proto=shm ;; sm | btl) na=na; proto=sm ;; tcp | net | btltcp) na=ofi; proto=tcp ;; esac
    (cd "$work" && rm -f port.cfg &&
        { taskset -c 0 timeout -k 5 300 "$mbin/hg_perf_server" -c $na -p $proto -b >server.log 2>&1 &
          echo $! >server.pid; } &&
        for _ in $(seq 100); do [ -s port.cfg ] && break; sleep 0.1; done &&
        taskset -c 1 timeout 300 "$mbin/$2" -c $na -p $proto -b -l "$bw_iterations" -w 64 -M \
            -y "$bw_min" -z "$bw_max" 2>/dev/null | awk '/^[0-9]/ { print $1, $2 }')
    spid=$(cat "$work/server.pid" 2>/dev/null)
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    spid=""
}

# opal_perf rpc-bw once: its "size read write" rows.
ours_bw() { # transport
    local info mca=()
    case "$1" in shm | sm) info=ofi+shm ;; tcp) info=ofi+tcp ;; net) info=ofi+net ;; btl) info=btl ;;
        btltcp) info=btl; mca=(--mca btl self,tcp) ;; esac
    if [ btl = "$1" ]; then
        taskset -c 0,1 timeout 300 "$mcarun" -np 2 --bind-to core "$opal_perf" rpc-bw --na btl \
            --sizes "$bw_sizes" -W 64 -i "$bw_iterations" 2>/dev/null | awk '/^[0-9]/ { print $1, $2, $3 }'
        return
    fi
    rm -f "$work/uri"
    taskset -c 0 timeout 300 "$opal_perf" rpc-server --na $info --uri-file "$work/uri" \
        "${mca[@]}" >"$work/oserver.log" 2>&1 &
    spid=$!
    taskset -c 1 timeout 300 "$opal_perf" rpc-bw --na $info --uri-file "$work/uri" "${mca[@]}" \
        --sizes "$bw_sizes" -W 64 -i "$bw_iterations" 2>/dev/null | awk '/^[0-9]/ { print $1, $2, $3 }'
    wait "$spid" 2>/dev/null
    spid=""
}

# The tcp floor (bw over tcp or btltcp): built once, skipped with a line
# saying why when it does not build. One run: "size MB/s" rows.
tcp_floor=""
case " $tests " in *" bw "*)
    case " $transports " in *" tcp "* | *" btltcp "*)
        if ${CC:-cc} -std=c11 -O2 -o "$work/tcp_floor" "$here/tcp_floor.c" 2>"$work/tcp_floor.log"; then
            tcp_floor=$work/tcp_floor
        else
            echo "compare-mercury-rpc.sh: tcp_floor.c did not build with ${CC:-cc}; no floor:" >&2
            sed 's/^/    /' "$work/tcp_floor.log" >&2
        fi ;;
    esac ;;
esac
floor_bw() {
    timeout 300 "$tcp_floor" --sizes "$(echo $bw_bytes | tr ' ' ',')" --window 64 \
        --iterations "$bw_iterations" --cores 0,1 2>/dev/null | awk '/^[0-9]/ { print $1, $2 }'
}

# The median of column col of the rows of size s in file f.
median_of() { # file size col
    awk -v s="$2" -v c="$3" '$1 == s { print $c }' "$1" | median
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }

case " $tests " in *" bw "*)
    echo "== bw: hg_bw_read / hg_bw_write against opal_perf rpc-bw, 64 chunks per RPC, busy polling, $rounds rounds"
    printf '%-10s %-6s %10s %14s %14s %8s\n' transport dir size "Mercury MB/s" "ours MB/s" ratio
    for t in $transports; do
        : >"$work/bw.read" && : >"$work/bw.write" && : >"$work/bw.ours" && : >"$work/bw.ratios"
        : >"$work/bw.floor" && : >"$work/bw.fratios"
        floor=""
        case "$t" in tcp | btltcp) floor=$tcp_floor ;; esac
        for _ in $(seq "$rounds"); do
            mercury_bw "$t" hg_bw_read >"$work/bw.r1"
            ours_bw "$t" >"$work/bw.o1"
            mercury_bw "$t" hg_bw_write >"$work/bw.w1"
            cat "$work/bw.r1" >>"$work/bw.read"
            cat "$work/bw.o1" >>"$work/bw.ours"
            cat "$work/bw.w1" >>"$work/bw.write"
            for s in $bw_bytes; do
                r=$(ratio "$(median_of "$work/bw.o1" "$s" 2)" "$(median_of "$work/bw.r1" "$s" 2)")
                w=$(ratio "$(median_of "$work/bw.o1" "$s" 3)" "$(median_of "$work/bw.w1" "$s" 2)")
                echo "$s $r $w" >>"$work/bw.ratios"
            done
            if [ -n "$floor" ]; then
                floor_bw >"$work/bw.f1"
                cat "$work/bw.f1" >>"$work/bw.floor"
                for s in $bw_bytes; do
                    f=$(median_of "$work/bw.f1" "$s" 2)
                    echo "$s $(ratio "$(median_of "$work/bw.r1" "$s" 2)" "$f")" \
                        "$(ratio "$(median_of "$work/bw.o1" "$s" 2)" "$f")" >>"$work/bw.fratios"
                done
            fi
        done
        for s in $bw_bytes; do
            mm=$(median_of "$work/bw.read" "$s" 2)
            om=$(median_of "$work/bw.ours" "$s" 2)
            printf '%-10s %-6s %10s %14s %14s %8s\n' "$t" read "$s" "$mm" "$om" "$(median_of "$work/bw.ratios" "$s" 2)"
            mm=$(median_of "$work/bw.write" "$s" 2)
            om=$(median_of "$work/bw.ours" "$s" 3)
            printf '%-10s %-6s %10s %14s %14s %8s\n' "$t" write "$s" "$mm" "$om" "$(median_of "$work/bw.ratios" "$s" 3)"
        done
        if [ -s "$work/bw.floor" ]; then
            # The read's move over one bare connection, and each side's
            # read over it (the medians of the rounds' ratios).
            printf '%-10s %-6s %10s %14s %14s %8s\n' "floor" read size "floor MB/s" "Mercury/floor" "ours/floor"
            for s in $bw_bytes; do
                printf '%-10s %-6s %10s %14s %14s %8s\n' "$t" read "$s" "$(median_of "$work/bw.floor" "$s" 2)" \
                    "$(median_of "$work/bw.fratios" "$s" 2)" "$(median_of "$work/bw.fratios" "$s" 3)"
            done
        fi
    done
    ;;
esac

case " $tests " in *" rate "*) ;; *) exit 0 ;; esac
echo "== rate: hg_rate against opal_perf rpc-rate, $size-byte arguments, $iterations RPCs, $rounds rounds"
printf '%-10s %-7s %-9s %14s %14s %8s\n' transport window mode "Mercury RPC/s" "ours RPC/s" ratio
for t in $transports; do
    for w in $windows; do
        for m in $modes; do
            : >"$work/m" && : >"$work/o" && : >"$work/r"
            for round in $(seq "$rounds"); do
                # Odd rounds Mercury first, even rounds ours first.
                if [ $((round % 2)) -eq 1 ]; then
                    a=$(mercury_rate "$t" "$w" "$m")
                    b=$(ours_rate "$t" "$w" "$m")
                else
                    b=$(ours_rate "$t" "$w" "$m")
                    a=$(mercury_rate "$t" "$w" "$m")
                fi
                echo "$a" >>"$work/m"
                echo "$b" >>"$work/o"
                ratio "$b" "$a" | grep -v n/a >>"$work/r"
            done
            mm=$(grep . "$work/m" | median)
            om=$(grep . "$work/o" | median)
            ratio=$(median <"$work/r")
            printf '%-10s %-7s %-9s %14s %14s %8s\n' "$t" "$w" "$m" "$mm" "$om" "$ratio"
        done
    done
done
