#!/usr/bin/env bash
# compare-mercury.sh: opal-mca's na and bulk against Mercury 2.4.1's own
# perf tools, on the same transport, in one run.
#
# Usage: contrib/perf/compare-mercury.sh [options] [BUILD_DIR | PREFIX]
#
#   BUILD_DIR | PREFIX   an opal-mca build tree (default: _build next to
#                        this script's tree) or an install prefix
#   --mercury-src TAR    Mercury's source tarball (default
#                        ../shared/peers/mercury-2.4.1.tar.gz beside the
#                        tree); built once with CMake into the cache
#   --mercury-build DIR  a Mercury build tree to use as it is (its bin/)
#   --cache DIR          where Mercury is built (default
#                        ${XDG_CACHE_HOME:-~/.cache}/opal-mca/mercury-2.4.1)
#   --transports LIST    sm, tcp, net, btltcp (default "sm tcp btltcp"):
#                        Mercury na+sm against na/btl over btl/sm, Mercury
#                        ofi+tcp against na/ofi ofi+tcp, Mercury ofi+tcp
#                        against na/ofi ofi+net (libfabric's native TCP
#                        provider: what Mercury's ofi+tcp takes from
#                        libfabric 1.18 on), and Mercury ofi+tcp against
#                        na/btl over btl/tcp (our own sockets)
#   --tests LIST         lat, get, bulk, write, push (default "lat get
#                        bulk write push")
#   --rounds N           rounds (default 5), each runs Mercury and ours
#                        (odd rounds Mercury first, even rounds ours first)
#   --lat-sizes LIST     latency sizes (default 8,64,512)
#   --bw-sizes LIST      bandwidth sizes (default 64k,256k,1m,4m)
#   --iterations N       latency round trips per size (default 10000;
#                        bandwidth uses N/100, at least 20, windows of 64)
#   --no-deps            do not install cmake
#
# Mercury's pairs: na_perf_server with na_lat (latency: an unexpected
# message and its expected answer, half the round trip) and na_bw_get (a
# window of 64 gets); hg_perf_server with hg_bw_read (an RPC whose handler
# moves 64 chunks of the client's bulk handle: it pushes them into it,
# HG_PERF_BW_READ being registered with hg_perf_bulk_push_cb). Ours:
# opal_perf server with na-lat, na-get, and bulk-pull ("bulk": the
# pairing issue 19 names, our pull against that push; "write": our pull
# against hg_bw_write, whose handler pulls, the same move) and bulk-push
# ("push": the same move as hg_bw_read's), the same patterns
# (opal_perf(1)).
# Servers run on core 0, clients on core 1, busy-polling, Mercury and ours
# alternating in every round; the medians of the rounds and the median of
# the rounds' ratios (ours / Mercury, each from the two runs of one round,
# back to back) are printed, with the lowest and highest of the rounds'
# ratios ("rounds"), then issue 19's targets: latency 8-512 B
# at most 0.5x over shared memory and 1.0x over tcp; bulk 64 KiB - 4 MiB
# at least 1.2x on both (reported for all three pairings).
# With lat over sm, every round also runs contrib/perf/sm_floor.c (built
# with cc into the work directory): the same ping-pong between two
# processes with no library at all, on the same cores. Its table puts
# both latencies over that floor, which the host's moving of the cores
# shifts for all three alike.
# With bulk, write or push over tcp or btltcp, every round also runs
# contrib/perf/tcp_floor.c: 64 chunks of each size per round over one bare
# TCP connection between the same cores (sender on 0, receiver on 1), and
# each table is followed by Mercury's and our figures over it. A
# reference rather than a bound (tcp_floor.c says why): where Mercury
# moves about what the bare connection moves, 1.2x of Mercury asks for
# more than the kernel's copies give a plain program here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

mercury_src=$top/../shared/peers/mercury-2.4.1.tar.gz
mercury_build=""
cache=${XDG_CACHE_HOME:-$HOME/.cache}/opal-mca/mercury-2.4.1
transports="sm tcp btltcp"
tests="lat get bulk write push"
rounds=5
lat_sizes="8,64,512"
bw_sizes="64k,256k,1m,4m"
iterations=10000
deps=yes
target=""
while [ $# -gt 0 ]; do
    case "$1" in
        --mercury-src) mercury_src=$2; shift 2 ;;
        --mercury-build) mercury_build=$2; shift 2 ;;
        --cache) cache=$2; shift 2 ;;
        --transports) transports=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --lat-sizes) lat_sizes=$2; shift 2 ;;
        --bw-sizes) bw_sizes=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --no-deps) deps=no; shift ;;
        -h | --help) sed -n '2,52p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare-mercury.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) target=$1; shift ;;
    esac
done
for n in "$rounds" "$iterations"; do
    case "$n" in '' | *[!0-9]* | 0) echo "compare-mercury.sh: --rounds / --iterations need a positive number" >&2; exit 2 ;; esac
done
for t in $transports; do
    case "$t" in sm | tcp | net | btltcp) ;; *) echo "compare-mercury.sh: transport '$t' is not sm, tcp, net or btltcp" >&2; exit 2 ;; esac
done
for t in $tests; do
    case "$t" in lat | get | bulk | write | push) ;; *) echo "compare-mercury.sh: test '$t' is not lat, get, bulk, write or push" >&2; exit 2 ;; esac
done
bw_iterations=$((iterations / 100 > 20 ? iterations / 100 : 20))

# --------------------------------------------------------------- ours
target=${target:-$top/_build}
if [ -x "$target/tools/opal_perf/opal_perf" ]; then
    opal_perf=$target/tools/opal_perf/opal_perf
    OPAL_MCA_mca_base_component_path=$(find "$target/opal/mca" "$target/orte/mca" \
        -type d -name .libs 2>/dev/null | sort | tr '\n' ':')
    export OPAL_MCA_mca_base_component_path
elif [ -x "$target/bin/opal_perf" ]; then
    opal_perf=$target/bin/opal_perf
else
    echo "compare-mercury.sh: $target is neither an opal-mca build tree nor an install prefix" >&2
    exit 2
fi

# ------------------------------------------------------------ Mercury
if [ -n "$mercury_build" ]; then
    mbin=$mercury_build/bin
else
    mbin=$cache/build/bin
    if [ ! -x "$mbin/na_lat" ] || [ ! -x "$mbin/hg_bw_read" ]; then
        [ -f "$mercury_src" ] || {
            echo "compare-mercury.sh: Mercury's source $mercury_src is missing (--mercury-src)" >&2
            exit 2
        }
        if [ $deps = yes ]; then
            . "$top/contrib/opal-deps.sh"
            opal_deps_packages="cmake"
            opal_install_deps || exit 1
        fi
        echo "== building Mercury from $mercury_src into $cache (once)"
        rm -rf "$cache" && mkdir -p "$cache/build" || exit 1
        tar xzf "$mercury_src" -C "$cache" || exit 1
        src=$(find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'mercury-*' | head -n 1)
        (cd "$cache/build" &&
            cmake "$src" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=ON \
                -DBUILD_TESTING_PERF=ON -DNA_USE_SM=ON -DNA_USE_OFI=ON >cmake.log 2>&1 &&
            make -j"$(nproc)" >make.log 2>&1) || {
            echo "compare-mercury.sh: Mercury did not build; see $cache/build/*.log" >&2
            exit 1
        }
    fi
fi
for tool in na_perf_server na_lat na_bw_get hg_perf_server hg_bw_read; do
    [ -x "$mbin/$tool" ] || { echo "compare-mercury.sh: $mbin/$tool is missing" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/compare-mercury.XXXXXX")
cleanup() {
    # Mercury's servers may keep spinning after their client left.
    [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

to_bytes() {
    local IFS=, s out=()
    for s in $1; do
        case "$s" in
            *[kK]) out+=($((${s%?} * 1024))) ;;
            *[mM]) out+=($((${s%?} * 1048576))) ;;
            *) out+=("$s") ;;
        esac
    done
    printf '%s ' "${out[@]}"
}
lat_bytes=$(to_bytes "$lat_sizes")

# build_floor NAME: contrib/perf/NAME.c built once into the work
# directory; prints its path, or nothing after a line saying why (no C
# compiler, or it does not build).
build_floor() {
    if ${CC:-cc} -std=c11 -O2 -o "$work/$1" "$here/$1.c" 2>"$work/$1.log"; then
        echo "$work/$1"
    else
        echo "compare-mercury.sh: $1.c did not build with ${CC:-cc}; no floor:" >&2
        sed 's/^/    /' "$work/$1.log" >&2
    fi
}

# The shared-memory floor (lat over sm).
floor=""
floor_sizes=${lat_bytes% } # to_bytes' list, comma-separated
floor_sizes=${floor_sizes// /,}
case " $tests " in *" lat "*)
    case " $transports " in *" sm "*) floor=$(build_floor sm_floor) ;; esac ;;
esac
bw_bytes=$(to_bytes "$bw_sizes")
# The tcp floor (bulk, write or push over tcp or btltcp).
tcp_floor=""
tcp_floor_sizes=${bw_bytes% }
tcp_floor_sizes=${tcp_floor_sizes// /,}
case " $tests " in *" bulk "* | *" write "* | *" push "*)
    case " $transports " in *" tcp "* | *" btltcp "*) tcp_floor=$(build_floor tcp_floor) ;; esac ;;
esac
max_bw=0
min_bw=
for s in $bw_bytes; do
    [ "$s" -gt $max_bw ] && max_bw=$s
    { [ -z "$min_bw" ] || [ "$s" -lt "$min_bw" ]; } && min_bw=$s
done

# rows FILE: the data rows of a perf tool's output as "round size value"
# (the round being run), so that each round's two figures can be paired.
round=0
rows() {
    grep -E '^[0-9]+ +[0-9.]+' "$1" | awk -v r="$round" '{print r, $1, $2}'
}

# stop_server: ends the server started as $spid (timeout's pid): SIGTERM,
# then SIGKILL after 5 s. hg_perf_server once ignored SIGTERM after an
# hg_bw_write run over tcp, and waiting for it hung the whole comparison.
stop_server() {
    kill "$spid" 2>/dev/null
    local _
    for _ in $(seq 50); do
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$spid" 2>/dev/null; then
        echo "compare-mercury.sh: the server did not end on SIGTERM: SIGKILL" >&2
        pkill -KILL -P "$spid" 2>/dev/null
        kill -KILL "$spid" 2>/dev/null
    fi
    wait "$spid" 2>/dev/null
}

# merc_pair SERVER CLIENT CLIENT-ARGS -- COMMON-ARGS: one Mercury run in a
# fresh directory (the server writes port.cfg there, the client reads it).
spid=""
merc_pair() {
    local server=$1 client=$2 cargs=() common=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do cargs+=("$1"); shift; done
    shift
    common=("$@")
    local dir
    dir=$(mktemp -d "$work/m.XXXXXX")
    (cd "$dir" && exec taskset -c 0 timeout -k 5 600 "$mbin/$server" "${common[@]}" >server.log 2>&1) &
    spid=$!
    local i
    for i in $(seq 1 200); do
        [ -s "$dir/port.cfg" ] && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.05
    done
    (cd "$dir" && taskset -c 1 timeout 600 "$mbin/$client" "${common[@]}" "${cargs[@]}" \
        >client.log 2>&1)
    local rc=$?
    stop_server
    spid=""
    if [ $rc -ne 0 ]; then
        echo "compare-mercury.sh: Mercury $client ${common[*]} failed ($rc):" >&2
        tail -n 8 "$dir/client.log" "$dir/server.log" | sed 's/^/    /' >&2
        return 1
    fi
    rows "$dir/client.log"
}

# ours_pair SUBCOMMAND NA CLIENT-ARGS...: opal_perf server + client started
# alone, the URI through a file.
ours_pair() {
    local sub=$1 tr=$2 na
    shift 2
    na=$(ours_na "$tr")
    local dir
    dir=$(mktemp -d "$work/o.XXXXXX")
    local mca=()
    case "$tr" in
        sm) mca=(--mca btl self,sm) ;;
        btltcp) mca=(--mca btl self,tcp) ;;
    esac
    taskset -c 0 timeout 600 "$opal_perf" server --na "$na" --uri-file "$dir/uri" \
        --max-size "$max_bw" "${mca[@]}" >"$dir/server.log" 2>&1 &
    spid=$!
    taskset -c 1 timeout 600 "$opal_perf" "$sub" --na "$na" --uri-file "$dir/uri" "${mca[@]}" \
        "$@" >"$dir/client.log" 2>&1
    local rc=$?
    # A client that failed never told the server it was done.
    [ $rc -eq 0 ] || kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=""
    if [ $rc -ne 0 ]; then
        echo "compare-mercury.sh: opal_perf $sub --na $na failed ($rc):" >&2
        tail -n 8 "$dir/client.log" "$dir/server.log" | sed 's/^/    /' >&2
        return 1
    fi
    rows "$dir/client.log"
}

merc_args() { # the transport's Mercury options
    case "$1" in sm) echo "-c na -p sm" ;; tcp | net | btltcp) echo "-c ofi -p tcp" ;; esac
}
ours_na() {
    case "$1" in sm | btltcp) echo btl ;; tcp) echo ofi+tcp ;; net) echo ofi+net ;; esac
}

echo "== compare-mercury: opal-mca na / bulk against Mercury 2.4.1's perf tools"
echo "   $("$opal_perf" --version); Mercury from $mbin"
echo "   $rounds rounds; latency: $iterations round trips per size; bandwidth: $bw_iterations" \
    "iterations of 64 chunks; servers on core 0, clients on core 1, busy polling"

# One file per (test, transport, side): "size value" rows of every round.
# merc_run / ours_run TEST TRANSPORT: one side of one test.
# shellcheck disable=SC2046
merc_run() {
    local t=$1 tr=$2
    case "$t" in
        lat) merc_pair na_perf_server na_lat -l "$iterations" -- $(merc_args "$tr") -b ;;
        get)
            merc_pair na_perf_server na_bw_get -l "$bw_iterations" -w 64 -M \
                -y "$min_bw" -z "$max_bw" -- $(merc_args "$tr") -b
            ;;
        bulk | write | push)
            # bulk and push against hg_bw_read: our pull (issue 19's
            # pairing) and our push (the same move as its handler's);
            # write against hg_bw_write (whose handler pulls, as ours).
            merc_pair hg_perf_server "hg_bw_$([ write = "$t" ] && echo write || echo read)" \
                -l "$bw_iterations" -w 64 -M -y "$min_bw" -z "$max_bw" -- $(merc_args "$tr") -b
            ;;
    esac >>"$work/$t.$tr.mercury" || true
}
ours_run() {
    local t=$1 tr=$2
    case "$t" in
        lat) ours_pair na-lat "$tr" --sizes "$lat_sizes" --iterations "$iterations" ;;
        get)
            ours_pair na-get "$tr" --sizes "$bw_sizes" --window 64 \
                --iterations "$bw_iterations"
            ;;
        bulk | write | push)
            ours_pair "bulk-$([ push = "$t" ] && echo push || echo pull)" "$tr" \
                --sizes "$bw_sizes" --window 64 --iterations "$bw_iterations"
            ;;
    esac >>"$work/$t.$tr.ours" || true
}

# floor_run FILE FLOOR ARGS...: one round of a floor (its rows appended
# to FILE), the sizes and cores of what it stands beside.
floor_run() {
    local file=$1 tool=$2 out
    shift 2
    out=$(mktemp "$work/f.XXXXXX")
    if timeout 600 "$tool" "$@" --cores 0,1 >"$out" 2>&1; then
        rows "$out" >>"$file"
    else
        echo "compare-mercury.sh: ${tool##*/} failed:" >&2
        tail -n 8 "$out" | sed 's/^/    /' >&2
    fi
}

# Odd rounds run Mercury first, even rounds ours first: a drift of the
# host within a round (the cores moved, another load) favours neither.
for round in $(seq 1 "$rounds"); do
    for tr in $transports; do
        for t in $tests; do
            if [ $((round % 2)) -eq 1 ]; then
                merc_run "$t" "$tr"
                ours_run "$t" "$tr"
            else
                ours_run "$t" "$tr"
                merc_run "$t" "$tr"
            fi
            if [ "$t" = lat ] && [ "$tr" = sm ] && [ -n "$floor" ]; then
                floor_run "$work/lat.sm.floor" "$floor" --sizes "$floor_sizes" \
                    --iterations "$iterations"
            fi
        done
    done
    if [ -n "$tcp_floor" ]; then
        floor_run "$work/bw.tcp.floor" "$tcp_floor" --sizes "$tcp_floor_sizes" --window 64 \
            --iterations "$bw_iterations"
    fi
done

# median_of: the median of the numbers on standard input ("-" when none).
median_of() {
    sort -g | awk '
        {v[NR] = $1} END {
            if (NR == 0) { print "-"; exit }
            if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# median FILE SIZE: the median of the values of SIZE in FILE ("-" when none).
median() {
    [ -f "$1" ] || { echo -; return; }
    awk -v s="$2" '$2 == s {print $3}' "$1" | median_of
}

# round_ratios MERCURY-FILE OURS-FILE SIZE: ours / Mercury of SIZE, one
# line per round that has both figures: the two ran back to back, so each
# round's ratio sees the same host.
round_ratios() {
    [ -f "$1" ] && [ -f "$2" ] || return 0
    awk -v s="$3" 'FNR == NR { if ($2 == s) m[$1] = $3; next }
        $2 == s && ($1 in m) && m[$1] > 0 { print $3 / m[$1] }' "$1" "$2"
}

# ratio_median MERCURY-FILE OURS-FILE SIZE: the median of round_ratios
# ("-" when none).
ratio_median() {
    round_ratios "$@" | median_of
}

# ratio_range MERCURY-FILE OURS-FILE SIZE: the lowest and highest of
# round_ratios ("lo-hi", "-" when none), to show how far one round's
# figure can move on this host.
ratio_range() {
    round_ratios "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 }
        END { if (NR == 0) print "-"; else printf "%.2f-%.2f\n", lo, hi }'
}

verdicts=()
status=0
report() { # TEST TRANSPORT UNIT SIZES TARGET-KIND TARGET LOW HIGH
    local t=$1 tr=$2 unit=$3 sizes=$4 kind=$5 goal=$6 low=$7 high=$8
    printf '\n%-8s %-4s %10s %16s %16s %10s %12s\n' "$t" "$tr" size "Mercury $unit" "ours $unit" \
        "ratio" "rounds"
    local s m o r range worst="" unpaired=""
    for s in $sizes; do
        m=$(median "$work/$t.$tr.mercury" "$s")
        o=$(median "$work/$t.$tr.ours" "$s")
        r=$(ratio_median "$work/$t.$tr.mercury" "$work/$t.$tr.ours" "$s")
        range=$(ratio_range "$work/$t.$tr.mercury" "$work/$t.$tr.ours" "$s")
        if [ "$r" = - ] && [ "$s" -ge "$low" ] && [ "$s" -le "$high" ]; then
            # Left out of the verdict, which says so (Mercury's na_lat
            # over ofi starts at 16 B, for one).
            unpaired="$unpaired${unpaired:+, }$s B"
        fi
        if [ "$r" != - ]; then
            r=$(awk -v r="$r" 'BEGIN { printf "%.2f", r }')
            if [ "$s" -ge "$low" ] && [ "$s" -le "$high" ]; then
                if [ -z "$worst" ]; then
                    worst=$r
                elif [ "$kind" = max ]; then
                    worst=$(awk -v a="$worst" -v b="$r" 'BEGIN { print (b > a ? b : a) }')
                else
                    worst=$(awk -v a="$worst" -v b="$r" 'BEGIN { print (b < a ? b : a) }')
                fi
            fi
        fi
        printf '%-8s %-4s %10s %16s %16s %10s %12s\n' "" "" "$s" "$m" "$o" "$r" "$range"
    done
    [ -n "$goal" ] || return 0
    local verdict
    if [ -z "$worst" ]; then
        verdict="no figures"
        status=1
    elif [ "$kind" = max ]; then
        verdict=$(awk -v w="$worst" -v g="$goal" 'BEGIN { print (w <= g ? "met" : "missed") }')
    else
        verdict=$(awk -v w="$worst" -v g="$goal" 'BEGIN { print (w >= g ? "met" : "missed") }')
    fi
    [ "$verdict" = met ] || status=1
    verdicts+=("$(printf '%-5s %-4s %s %sx of Mercury (%s-%s B): worst %s -> %s%s' "$t" "$tr" \
        "$([ "$kind" = max ] && echo "at most" || echo "at least")" "$goal" "$low" "$high" \
        "${worst:--}" "$verdict" "${unpaired:+ (no pair of figures at $unpaired)}")")
}

# report_floor FLOOR-FILE LABEL UNIT SIZES FORMAT MERCURY-FILE OURS-FILE:
# a floor's medians and, per size, the medians of the rounds' Mercury /
# floor and ours / floor (printed with FORMAT).
report_floor() {
    [ -f "$1" ] || return 0
    printf '\n%-8s %-4s %10s %16s %16s %16s\n' floor "$2" size "floor $3" "Mercury / floor" \
        "ours / floor"
    local s f m o
    for s in $4; do
        f=$(median "$1" "$s")
        m=$(ratio_median "$1" "$6" "$s")
        o=$(ratio_median "$1" "$7" "$s")
        [ "$m" = - ] || m=$(awk -v r="$m" -v f="$5" 'BEGIN { printf f, r }')
        [ "$o" = - ] || o=$(awk -v r="$o" -v f="$5" 'BEGIN { printf f, r }')
        printf '%-8s %-4s %10s %16s %16s %16s\n' "" "" "$s" "$f" "$m" "$o"
    done
}

for tr in $transports; do
    for t in $tests; do
        case "$t" in
            lat)
                goal=$([ "$tr" = sm ] && echo 0.5 || echo 1.0)
                report lat "$tr" "us" "$lat_bytes" max "$goal" 8 512
                [ "$tr" != sm ] || report_floor "$work/lat.sm.floor" sm us "$lat_bytes" %.1f \
                    "$work/lat.sm.mercury" "$work/lat.sm.ours" ;;
            get) report get "$tr" "MB/s" "$bw_bytes" min "" 0 0 ;;
            bulk) report bulk "$tr" "MB/s" "$bw_bytes" min 1.2 65536 4194304 ;;
            write) report write "$tr" "MB/s" "$bw_bytes" min 1.2 65536 4194304 ;;
            push) report push "$tr" "MB/s" "$bw_bytes" min 1.2 65536 4194304 ;;
        esac
        case "$t.$tr" in bulk.tcp | bulk.btltcp | write.tcp | write.btltcp | push.tcp | push.btltcp)
            report_floor "$work/bw.tcp.floor" tcp MB/s "$bw_bytes" %.2f "$work/$t.$tr.mercury" \
                "$work/$t.$tr.ours" ;;
        esac
    done
done
echo
echo "== targets (issue 19)"
for v in "${verdicts[@]}"; do echo "   $v"; done
exit $status
