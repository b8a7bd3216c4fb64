#!/usr/bin/env bash
# compare-verbs.sh: btl/verbs against perftest (ib_send_lat, ib_write_bw)
# and against btl/ofi over verbs;ofi_rxm, on one RDMA device, alternating
# the programs round by round. Meant for the soft-RoCE guest:
#
#   contrib/rdma-vm/run.sh --build-dir _build -- contrib/perf/compare-verbs.sh _build
#
# Usage: compare-verbs.sh [options] BUILD_DIR
#   --device D        the device (default rxe0); --gid-index G (default 1:
#                     the guest's ::ffff:10.99.0.2, RoCE v2 over IPv4)
#   --addr A          the address the perftest server is reached at
#                     (default 10.99.0.2)
#   --rounds N        rounds (default 3); medians are reported
#   --lat-iters N     ping-pongs for 8-byte latency (default 2000)
#   --bw-sizes LIST   RDMA write bandwidth sizes (default 64k,256k,1m,4m;
#                     none: latency only)
#   --bw-iters N      writes per size (default 400; opal_perf puts a window
#                     of --bw-window, N / window times)
#   --bw-window W     RDMA writes opal_perf keeps in flight (default 16;
#                     ib_write_bw keeps its tx depth, 128, or N when fewer)
#
# Latency: opal_perf latency --percentiles at 8 bytes over `--mca btl
# self,verbs` and over `--mca btl self,ofi` with verbs;ofi_rxm, its median
# against ib_send_lat's t_typical (also a median of half round trips) and
# its average against t_avg. Under emulation a few stalls of milliseconds
# make the averages of one run and the next differ several times over:
# the medians are the comparison.
# Bandwidth: ib_write_bw (Gb/s, converted to MB/s of 10^6 bytes) against
# opal_perf na-put over `--na btl` on btl/verbs (a window of RDMA writes),
# once with both ranks spinning in progress and once with --blocking
# (progress sleeps on the completion channel): ib_write_bw's server sleeps
# in a read while the client writes, and in the guest the CPUs a spinning
# target takes are the ones rxe needs to move the data.
# Under emulation absolute times mean nothing: only the ratios of one run
# count. Ratios are btl/verbs / the other; the targets (issue 14): 8 B
# latency <= 1.2x ib_send_lat and <= 0.8x btl/ofi; bandwidth >= 0.9x
# ib_write_bw.
set -u
device=rxe0 gid_index=1 addr=10.99.0.2 rounds=3 lat_iters=2000 bw_sizes=64k,256k,1m,4m
bw_iters=400 bw_window=16 build=""
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device=$2; shift 2 ;;
        --gid-index) gid_index=$2; shift 2 ;;
        --addr) addr=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --lat-iters) lat_iters=$2; shift 2 ;;
        --bw-sizes) bw_sizes=$2; shift 2 ;;
        --bw-iters) bw_iters=$2; shift 2 ;;
        --bw-window) bw_window=$2; shift 2 ;;
        -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare-verbs.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) build=$1; shift ;;
    esac
done
[ -n "$build" ] && [ -x "$build/tools/opal_perf/opal_perf" ] || {
    echo "compare-verbs.sh: give a build directory with opal_perf built" >&2
    exit 2
}
build=$(cd "$build" && pwd)
for tool in ib_send_lat ib_write_bw; do
    command -v $tool >/dev/null || { echo "compare-verbs.sh: $tool not found (Debian package perftest)" >&2; exit 1; }
done
ibv_devices 2>/dev/null | grep -qw "$device" || { echo "compare-verbs.sh: no device $device here" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../test-list.sh"
tl_build_env "$build"
opal_perf=$build/tools/opal_perf/opal_perf
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-verbs.XXXXXX")
trap 'rm -rf "$work"' EXIT

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
bw_bytes=""
[ none = "$bw_sizes" ] || bw_bytes=$(to_bytes "$bw_sizes")

# perf_pair SERVER-ARGS...: a perftest server and its client (which
# retries while the server comes up); the client's output on stdout.
port=18515
perf_pair() {
    local tool=$1 try
    shift
    port=$((port + 1))
    timeout 120 $tool -d "$device" -x "$gid_index" -p $port "$@" >"$work/server.out" 2>&1 &
    local server=$!
    for try in 1 2 3 4 5 6 7 8 9 10; do
        sleep 0.5
        if timeout 120 $tool -d "$device" -x "$gid_index" -p $port "$@" "$addr" \
            >"$work/client.out" 2>&1; then
            wait $server
            cat "$work/client.out"
            return 0
        fi
        kill -0 $server 2>/dev/null || break
    done
    kill $server 2>/dev/null
    wait $server
    echo "compare-verbs.sh: $tool $* failed:" >&2
    tail -n 5 "$work/client.out" "$work/server.out" >&2
    return 1
}

# The row of a perftest table that starts with size.
perf_row() { awk -v s="$1" '$1 == s {print; exit}'; }

# ib_send_lat's t_avg (under emulation it can be inf or dominated by a
# few stalls of milliseconds) and t_typical (its median).
ib_lat() { perf_pair ib_send_lat -s 8 -n "$lat_iters" | perf_row 8 | awk '{print $6, $5}'; }
ib_bw() {
    perf_pair ib_write_bw -s "$1" -n "$bw_iters" --report_gbits | perf_row "$1" |
        awk '{printf "%.1f\n", $4 * 1000 / 8}'
}
# opal_perf's average and median (us).
ours_lat() {
    "$MCARUN" -np 2 --timeout 120 "$opal_perf" latency --percentiles --sizes 8 \
        --iterations "$lat_iters" "$@" 2>&1 | awk '$1 == 8 {print $2, $3; exit}'
}
ours_put() {
    # A window of bw_window puts, bw_iters / bw_window times: as many bytes
    # as ib_write_bw moves. "$@": more opal_perf options (--blocking).
    local iters=$((bw_iters / bw_window > 1 ? bw_iters / bw_window : 1))
    "$MCARUN" -np 2 --timeout 300 "$opal_perf" na-put --na btl --sizes "$bw_sizes" \
        --window "$bw_window" --iterations "$iters" --warmup 1 --mca btl self,verbs "$@" 2>&1 |
        awk '$1 ~ /^[0-9]+$/ {print $1, $2}'
}

echo "== compare-verbs: btl/verbs against perftest and btl/ofi (verbs;ofi_rxm) on $device"
echo "   $rounds rounds, alternating; 8 B latency $lat_iters ping-pongs; RDMA write $bw_iters per size"
# note FILE LINE: records a measurement and shows it as it comes.
note() {
    echo "$2" >>"$work/$1"
    echo "   round $round: $1 $2"
}
for round in $(seq 1 "$rounds"); do
    read -r ib_avg ib_typical <<<"$(ib_lat)"
    note lat "ib_send_lat ${ib_avg:-}"
    note lat "ib_send_lat_typical ${ib_typical:-}"
    read -r avg med <<<"$(ours_lat --mca btl self,verbs)"
    note lat "verbs ${avg:-}"
    note lat "verbs_median ${med:-}"
    read -r avg med <<<"$(FI_UNIVERSE_SIZE=2 ours_lat --mca btl self,ofi \
        --mca ofi_provider_include 'verbs;ofi_rxm')"
    note lat "ofi ${avg:-}"
    note lat "ofi_median ${med:-}"
    for size in $bw_bytes; do
        note ib.bw "$size $(ib_bw "$size")"
    done
    [ -n "$bw_bytes" ] || continue
    ours_put >"$work/put.round"
    while read -r line; do note ours.bw "$line"; done <"$work/put.round"
    # The same with progress that sleeps on the completion channel: the
    # target waits the way ib_write_bw's server does (in a read), leaving
    # the guest's CPUs to rxe, which does the copying in the kernel.
    ours_put --blocking >"$work/put.round"
    while read -r line; do note ours.bw.blocking "$line"; done <"$work/put.round"
done

median() { sort -g | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
# Medians of the rounds; a value that is not a finite number is left out.
for who in ib_send_lat ib_send_lat_typical verbs verbs_median ofi ofi_median; do
    eval "lat_$who=\$(awk -v w=$who '\$1 == w && \$2 ~ /^[0-9.]+\$/ {print \$2}' \"$work/lat\" | median)"
done
echo "8-byte latency (us, median of $rounds; under emulation only the ratios count)"
printf '  %-26s %10s %10s\n' "" average median "ib_send_lat" "${lat_ib_send_lat:--}" \
    "${lat_ib_send_lat_typical:--}" "btl/verbs (opal_perf)" "${lat_verbs:--}" \
    "${lat_verbs_median:--}" "btl/ofi verbs;ofi_rxm" "${lat_ofi:--}" "${lat_ofi_median:--}"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else print "-"}'; }
echo "  btl/verbs / ib_send_lat, medians  = $(ratio "$lat_verbs_median" "$lat_ib_send_lat_typical")x (target <= 1.2)"
echo "  btl/verbs / btl/ofi, medians      = $(ratio "$lat_verbs_median" "$lat_ofi_median")x (target <= 0.8)"
echo "  (averages: $(ratio "$lat_verbs" "$lat_ib_send_lat")x ib_send_lat, $(ratio "$lat_verbs" "$lat_ofi")x btl/ofi)"
[ -n "$bw_bytes" ] || exit 0
echo "RDMA write bandwidth (MB/s, 10^6 bytes; median of $rounds)"
printf '  %-9s %12s %12s %8s %12s %8s\n' size ib_write_bw "btl/verbs" ratio "(blocking)" ratio
for size in $bw_bytes; do
    ib=$(awk -v s="$size" '$1 == s && $2 != "" {print $2}' "$work/ib.bw" | median)
    ours=$(awk -v s="$size" '$1 == s {print $2}' "$work/ours.bw" | median)
    blk=$(awk -v s="$size" '$1 == s {print $2}' "$work/ours.bw.blocking" | median)
    printf '  %-9s %12s %12s %7sx %12s %7sx\n' "$size" "${ib:--}" "${ours:--}" \
        "$(ratio "$ours" "$ib")" "${blk:--}" "$(ratio "$blk" "$ib")"
done
echo "  (target: btl/verbs >= 0.9x ib_write_bw from 64 KiB to 4 MiB)"
