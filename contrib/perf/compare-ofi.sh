#!/usr/bin/env bash
# compare-ofi.sh: opal_perf over btl/ofi against libfabric's own
# fi_pingpong (libfabric-bin) on the same provider, in one run; and against
# Open MPI's btl/ofi (pml ob1) when Open MPI runs that provider here.
#
# Usage: contrib/perf/compare-ofi.sh [options] [BUILD_DIR | PREFIX]
#
#   BUILD_DIR | PREFIX   an opal-mca build tree (default: _build next to
#                        this script's tree) or an install prefix
#   --provider P         the libfabric provider (default "tcp;ofi_rxm"; also
#                        "shm", "udp;ofi_rxd", "verbs;ofi_rxm", ...)
#   --rounds N           rounds (default 5), each runs fi_pingpong, opal_perf
#                        and Open MPI in turn; medians are reported
#   --sizes LIST         latency sizes (default 0,8,64,512,4k)
#   --bw-sizes LIST      bandwidth sizes (default 64k,256k,1m,4m)
#   --iterations N       ping-pongs per size for latency (default 5000;
#                        bandwidth sizes use N/50, at least 20)
#   --no-ompi            leave Open MPI out
#   --no-deps            do not install libfabric-bin / openmpi-bin /
#                        libopenmpi-dev
#   --plot FILE.png      also draw the three per size (latency and bandwidth
#                        panels, log scales; gnuplot, plot.sh)
#
# Every program runs its two processes bound to cores 0 and 1. fi_pingpong
# is a ping-pong only: its MB/sec is the ping-pong bandwidth (size / half
# round trip), so the bandwidth compared here is that one for all three
# (opal_perf latency at large sizes, converted). Debian ships no fabtests
# streaming benchmark (fi_msg_bw / fi_rdm_bw) to compare opal_perf bw with.
# Ratios are opal_perf / the other; the last lines hold the results against
# issue 6's targets (latency 0-64 B <= 1.1x of fi_pingpong's, bandwidth
# 64 KiB-4 MiB >= 0.9x).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

provider="tcp;ofi_rxm"
plot=""
rounds=5
sizes="0,8,64,512,4k"
bw_sizes="64k,256k,1m,4m"
iterations=5000
ompi=yes
deps=yes
target=""
while [ $# -gt 0 ]; do
    case "$1" in
        --provider) provider=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --bw-sizes) bw_sizes=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --no-ompi) ompi=no; shift ;;
        --no-deps) deps=no; shift ;;
        --plot) plot=$2; shift 2 ;;
        -h | --help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare-ofi.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) target=$1; shift ;;
    esac
done
for n in "$rounds" "$iterations"; do
    case "$n" in '' | *[!0-9]* | 0) echo "compare-ofi.sh: --rounds / --iterations need a positive number" >&2; exit 2 ;; esac
done
bw_iterations=$((iterations / 50 > 20 ? iterations / 50 : 20))

target=${target:-$top/_build}
if [ -x "$target/orte/tools/mcarun/mcarun" ]; then
    mcarun=$target/orte/tools/mcarun/mcarun
    opal_perf=$target/tools/opal_perf/opal_perf
    OPAL_MCA_mca_base_component_path=$(find "$target/opal/mca" "$target/orte/mca" \
        -type d -name .libs 2>/dev/null | sort | tr '\n' ':')
    export OPAL_MCA_mca_base_component_path
elif [ -x "$target/bin/mcarun" ]; then
    mcarun=$target/bin/mcarun
    opal_perf=$target/bin/opal_perf
else
    echo "compare-ofi.sh: $target is neither an opal-mca build tree nor an install prefix" >&2
    exit 2
fi
[ -x "$opal_perf" ] || { echo "compare-ofi.sh: no opal_perf in $target (build it first)" >&2; exit 2; }

if [ $deps = yes ]; then
    . "$top/contrib/opal-deps.sh"
    opal_deps_packages="libfabric-bin"
    [ $ompi = yes ] && opal_deps_packages="$opal_deps_packages openmpi-bin libopenmpi-dev"
    opal_install_deps || exit 1
fi
command -v fi_pingpong >/dev/null || { echo "compare-ofi.sh: fi_pingpong not found (libfabric-bin)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-ofi.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ $ompi = yes ]; then
    if command -v mpicc >/dev/null && mpicc -O2 -o "$work/ompi_perf" "$here/ompi_perf.c"; then
        :
    else
        echo "compare-ofi.sh: cannot build ompi_perf: leaving Open MPI out" >&2
        ompi=no
    fi
fi

# The sizes in bytes, as both tools print them.
to_bytes() {
    local IFS=, s out=()
    for s in $1; do
        case "$s" in
            *[kK]) out+=($((${s%?} * 1024))) ;;
            *[mM]) out+=($((${s%?} * 1048576))) ;;
            *[gG]) out+=($((${s%?} * 1073741824))) ;;
            *) out+=("$s") ;;
        esac
    done
    printf '%s ' "${out[@]}"
}
lat_bytes=$(to_bytes "$sizes")
bw_bytes=$(to_bytes "$bw_sizes")

# fi_pingpong's out-of-band port: below the kernel's ephemeral range, so
# that no connection of this run (or another) holds it already.
ephemeral_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
case "$ephemeral_low" in '' | *[!0-9]*) ephemeral_low=32768 ;; esac
port_base=$((ephemeral_low > 21000 ? ephemeral_low - 20000 : 10000))
port=$((port_base + RANDOM % 10000))
# fi_one SIZE ITER: one fi_pingpong run (server on core 0, client on core
# 1); prints "size usec/xfer MB/sec". A server that could not bind its
# port is started again on another one.
fi_one() {
    local size=$1 iter=$2 attempt
    for attempt in 1 2 3; do
        port=$((port_base + (port - port_base + 1) % 10000))
        taskset -c 0 timeout 120 fi_pingpong -B "$port" -p "$provider" -e rdm -I "$iter" \
            -S "$size" >"$work/fi.server" 2>&1 &
        local server=$!
        # The client retries while the server is still coming up.
        local try ok=no
        for try in 1 2 3 4 5 6 7 8 9 10; do
            sleep 0.2
            if taskset -c 1 timeout 120 fi_pingpong -P "$port" -p "$provider" -e rdm \
                -I "$iter" -S "$size" 127.0.0.1 >"$work/fi.client" 2>&1; then
                ok=yes
                break
            fi
            kill -0 "$server" 2>/dev/null || break
        done
        [ $ok = yes ] || kill "$server" 2>/dev/null
        wait "$server"
        [ $ok = yes ] && break
        grep -q 'Address already in use' "$work/fi.server" || break
    done
    local line
    line=$(grep -E '^[0-9]+[kmg]? ' "$work/fi.client" | tail -n 1)
    if [ -z "$line" ]; then
        echo "compare-ofi.sh: fi_pingpong -p '$provider' -S $size failed:" >&2
        sed 's/^/    /' "$work/fi.client" "$work/fi.server" | tail -n 10 >&2
        return 1
    fi
    echo "$size $(echo "$line" | awk '{print $7, $6}')"
}

# ours_one / ompi_one LIST ITER: latency rows "size us".
ours_one() {
    "$mcarun" -np 2 --bind-to core --timeout 600 "$opal_perf" latency --sizes "$1" \
        --iterations "$2" --mca btl self,ofi --mca ofi_provider_include "$provider" \
        >"$work/ours.raw" 2>&1 || {
        echo "compare-ofi.sh: opal_perf over btl/ofi ($provider) failed:" >&2
        tail -n 15 "$work/ours.raw" | sed 's/^/    /' >&2
        return 1
    }
    grep -E '^[0-9]+ +[0-9.]+' "$work/ours.raw" | awk '{print $1, $2}'
}
ompi_one() {
    timeout 600 mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to core --mca pml ob1 \
        --mca btl self,ofi --mca btl_ofi_mode 2 --mca opal_common_ofi_provider_exclude "" \
        --mca opal_common_ofi_provider_include "$provider" "$work/ompi_perf" latency \
        --sizes "$1" --iterations "$2" >"$work/ompi.raw" 2>&1 || return 1
    grep -E '^[0-9]+ +[0-9.]+' "$work/ompi.raw" | awk '{print $1, $2}'
}

echo "== compare-ofi: opal_perf (btl self,ofi) against fi_pingpong, provider '$provider'"
echo "   $(fi_info --version 2>/dev/null | tr '\n' ' ')"
echo "   $("$opal_perf" --version); $rounds rounds; latency: $iterations ping-pongs per size," \
    "bandwidth sizes: $bw_iterations; cores 0 and 1"

status=0
ours_ok=yes
ompi_ok=$ompi
for round in $(seq 1 "$rounds"); do
    for size in $lat_bytes; do
        fi_one "$size" "$iterations" >>"$work/fi.lat" || status=1
    done
    for size in $bw_bytes; do
        fi_one "$size" "$bw_iterations" >>"$work/fi.bw" || status=1
    done
    [ $status -eq 0 ] || exit 1
    # A side that cannot run is reported once and left out of the tables.
    if [ $ours_ok = yes ]; then
        if ours_one "$sizes" "$iterations" >>"$work/ours.lat" &&
            ours_one "$bw_sizes" "$bw_iterations" >>"$work/ours.bw"; then
            :
        else
            ours_ok=no
            rm -f "$work/ours.lat" "$work/ours.bw"
        fi
    fi
    if [ $ompi_ok = yes ]; then
        if ompi_one "$sizes" "$iterations" >>"$work/ompi.lat" &&
            ompi_one "$bw_sizes" "$bw_iterations" >>"$work/ompi.bw"; then
            :
        else
            echo "   Open MPI's btl/ofi does not run with provider '$provider' here" \
                "(its last lines:)"
            tail -n 4 "$work/ompi.raw" | sed 's/^/      /'
            ompi_ok=no
            rm -f "$work/ompi.lat" "$work/ompi.bw"
        fi
    fi
done

# table FILE-PREFIX KIND: medians; KIND lat (us, lower better) or bw (MB/s
# from latency, higher better). fi rows are "size us MB/s"; ours and ompi
# rows "size us".
table() {
    local kind=$1
    {
        awk '{print "fi", $1, $2}' "$work/fi.$kind"
        [ -f "$work/ours.$kind" ] && awk '{print "ours", $1, $2}' "$work/ours.$kind"
        [ -f "$work/ompi.$kind" ] && awk '{print "ompi", $1, $2}' "$work/ompi.$kind"
    } | awk -v kind="$kind" -v ratios="$work/$kind.ratios" -v plotfile="$work/$kind.plot" '
        function median(list,    n, a, i, j, t) {
            n = split(list, a, " ")
            for (i = 2; i <= n; ++i) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; --j) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        function value(us, size) { return kind == "lat" ? us : (us > 0 ? size / us : 0) }
        { v[$1, $2] = v[$1, $2] " " $3; if (!seen[$2]++) order[++n] = $2; has[$1] = 1 }
        END {
            if (kind == "lat") print "latency (us, lower is better): median of the rounds"
            else print "ping-pong bandwidth (MB/s = size / half round trip, higher is better)"
            printf "%-9s %12s %12s %8s", "Size", "fi_pingpong", "opal_perf", "ratio"
            if (has["ompi"]) printf " %14s %8s", "Open MPI ofi", "ratio"
            printf "\n"
            print "# size fi_pingpong opal_perf Open_MPI_ofi" > plotfile
            for (i = 1; i <= n; ++i) {
                s = order[i]
                f = value(median(v["fi", s]), s)
                if (has["ours"]) {
                    o = value(median(v["ours", s]), s); r = f > 0 ? o / f : 0
                    printf "%-9s %12.2f %12.2f %7.2fx", s, f, o, r
                    print s, r > ratios
                } else {
                    printf "%-9s %12.2f %12s %8s", s, f, "-", "-"
                }
                if (has["ompi"]) {
                    m = value(median(v["ompi", s]), s)
                    if (has["ours"]) printf " %14.2f %7.2fx", m, (m > 0 ? o / m : 0)
                    else printf " %14.2f %8s", m, "-"
                }
                printf "\n"
                print s, f, (has["ours"] ? o : "-"), (has["ompi"] ? value(median(v["ompi", s]), s) : "-") > plotfile
            }
        }'
}
for kind in lat bw; do
    table $kind >"$work/$kind.table"
    echo
    echo "== $(head -n 1 "$work/$kind.table")"
    tail -n +2 "$work/$kind.table"
done

echo
echo "== against issue 6's targets (ratio = opal_perf / fi_pingpong)"
if [ $ours_ok = no ]; then
    echo "   opal_perf over btl/ofi did not run: no verdict"
    exit 1
fi
if [ -n "$plot" ]; then
    "$here/plot.sh" "$plot" "opal_perf (btl ofi, $provider), fi_pingpong and Open MPI" \
        "$work/lat.plot=Latency (us)" "$work/bw.plot=Ping-pong bandwidth (MB/s)" || true
fi
awk '$1 <= 64 { n++; if (n == 1 || $2 > w) w = $2 }
     END { if (n) printf "   latency 0-64 B:      worst %.2fx (target <= 1.1x): %s\n", w, (w <= 1.1 ? "met" : "MISSED")
           else print "   latency 0-64 B:      no size in range" }' "$work/lat.ratios"
awk '$1 >= 65536 && $1 <= 4194304 { n++; if (n == 1 || $2 < w) w = $2 }
     END { if (n) printf "   bandwidth 64K-4M:    worst %.2fx (target >= 0.9x): %s\n", w, (w >= 0.9 ? "met" : "MISSED")
           else print "   bandwidth 64K-4M:    no size in range" }' "$work/bw.ratios"
