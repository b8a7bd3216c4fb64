#!/usr/bin/env bash
# compare-ompi.sh: opal_perf over btl self,sm against the same measurements
# over Open MPI (pml ob1, btl self,vader), in one run on this machine.
#
# Usage: contrib/perf/compare-ompi.sh [options] [BUILD_DIR | PREFIX]
#
#   BUILD_DIR | PREFIX   an opal-mca build tree (default: _build next to
#                        this script's tree) or an install prefix (with
#                        bin/mcarun and bin/opal_perf)
#   --rounds N           rounds per measurement (default 5); each round runs
#                        Open MPI then opal_perf (A B A B ...), and the
#                        median of the rounds is reported
#   --sizes LIST         sizes for latency, bw and bibw (default 0 to 4m,
#                        powers of two), opal_perf's syntax: 0,8,64,1k,4m
#   --rate-sizes LIST    sizes for rate (default 8)
#   --commands LIST      which measurements (default "latency,bw,bibw,rate")
#   --btl LIST           opal_perf's btl selection (default self,sm)
#   --single-copy MECH   vader's btl_vader_single_copy_mechanism (default
#                        cma: the issue's target is against Open MPI with
#                        CMA; "none" makes vader copy through its segment)
#   --iterations N, --warmup N
#                        passed to both programs (default: their own
#                        defaults, which are the same)
#   --no-deps            do not install openmpi-bin / libopenmpi-dev
#   --plot FILE.png      also draw ours against Open MPI per size (one panel
#                        per measurement, log scales; gnuplot, plot.sh)
#
# Both programs run with two ranks bound to cores 0 and 1 (mpirun and
# mcarun --bind-to core). Ratios are opal_perf / Open MPI: for latency
# lower is better, for bandwidth and rate higher is better; the last lines
# hold the results against the targets of issue 5 (latency 0-64 B <= 1.0x,
# bandwidth 64 KiB-4 MiB >= 1.0x, 8 B rate >= 1.0x).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

rounds=5
sizes="0,1,2,4,8,16,32,64,128,256,512,1k,2k,4k,8k,16k,32k,64k,128k,256k,512k,1m,2m,4m"
rate_sizes=8
commands="latency,bw,bibw,rate"
btl=self,sm
single_copy=cma
common_args=()
deps=yes
plot=""
target=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --rate-sizes) rate_sizes=$2; shift 2 ;;
        --commands) commands=$2; shift 2 ;;
        --btl) btl=$2; shift 2 ;;
        --single-copy) single_copy=$2; shift 2 ;;
        --iterations | --warmup) common_args+=("$1" "$2"); shift 2 ;;
        --no-deps) deps=no; shift ;;
        --plot) plot=$2; shift 2 ;;
        -h | --help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare-ompi.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) target=$1; shift ;;
    esac
done
case "$rounds" in '' | *[!0-9]* | 0) echo "compare-ompi.sh: --rounds needs a positive number" >&2; exit 2 ;; esac

# --- opal-mca: a build tree or an install prefix
target=${target:-$top/_build}
if [ -x "$target/orte/tools/mcarun/mcarun" ]; then
    mcarun=$target/orte/tools/mcarun/mcarun
    opal_perf=$target/tools/opal_perf/opal_perf
    # Plugins of a build tree are found through the component path.
    OPAL_MCA_mca_base_component_path=$(find "$target/opal/mca" "$target/orte/mca" \
        -type d -name .libs 2>/dev/null | sort | tr '\n' ':')
    export OPAL_MCA_mca_base_component_path
elif [ -x "$target/bin/mcarun" ]; then
    mcarun=$target/bin/mcarun
    opal_perf=$target/bin/opal_perf
else
    echo "compare-ompi.sh: $target is neither an opal-mca build tree nor an install prefix" >&2
    exit 2
fi
[ -x "$opal_perf" ] || { echo "compare-ompi.sh: no opal_perf in $target (build it first)" >&2; exit 2; }

# --- Open MPI: the Debian packages, and ompi_perf built against them
if [ $deps = yes ]; then
    . "$top/contrib/opal-deps.sh"
    opal_deps_packages="openmpi-bin libopenmpi-dev"
    opal_install_deps || exit 1
fi
command -v mpicc >/dev/null && command -v mpirun >/dev/null || {
    echo "compare-ompi.sh: mpicc / mpirun not found (install openmpi-bin libopenmpi-dev)" >&2
    exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-ompi.XXXXXX")
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/ompi_perf" "$here/ompi_perf.c" || { echo "compare-ompi.sh: mpicc failed" >&2; exit 1; }

ompi_run=(mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to core
    --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism "$single_copy"
    "$work/ompi_perf")
ours_run=("$mcarun" -np 2 --bind-to core --timeout 300 "$opal_perf")

echo "== compare-ompi: opal_perf (btl $btl) against Open MPI (pml ob1, btl self,vader)"
echo "   $(mpirun --version 2>/dev/null | head -n 1); vader single copy: $single_copy" \
    "(btl_vader_single_copy_mechanism; Open MPI's default here: $(ompi_info --param btl vader \
    --level 9 2>/dev/null | sed -n 's/.*single_copy_mechanism" (current value: "\([^"]*\)".*/\1/p'))"
echo "   $("$opal_perf" --version); $rounds rounds, A B A B ...; both bound to cores 0 and 1"
"$mcarun" -np 2 --bind-to core --report-bindings true 2>&1 | sed 's/^/   /'

# run_one IMPL CMD SIZES ROUND: one run, its rows (size value) in a file.
run_one() {
    local impl=$1 cmd=$2 list=$3 round=$4
    local out=$work/run.$impl.$cmd.$round
    local extra=()
    [ ${#common_args[@]} -gt 0 ] && extra=("${common_args[@]}")
    if [ "$impl" = ompi ]; then
        "${ompi_run[@]}" "$cmd" --sizes "$list" "${extra[@]}" >"$out.raw" 2>"$out.err"
    else
        "${ours_run[@]}" "$cmd" --sizes "$list" "${extra[@]}" --mca btl "$btl" \
            >"$out.raw" 2>"$out.err"
    fi
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "compare-ompi.sh: $impl $cmd (round $round) failed with status $rc:" >&2
        sed 's/^/    /' "$out.err" "$out.raw" | tail -n 20 >&2
        return 1
    fi
    grep -E '^[0-9]+ +[0-9.]+' "$out.raw" | awk '{print $1, $2}' >"$work/rows.$impl.$cmd.$round"
    if [ "$impl" = ours ] && [ "$round" = 1 ]; then
        grep '^#' "$out.raw" | sed -n '2,3p' | sed 's/^# */   opal_perf: /'
    fi
}

# report CMD UNIT BETTER: the medians and ratios of one measurement.
report() {
    local cmd=$1 unit=$2 better=$3
    echo
    echo "== $cmd ($unit, $better is better): median of $rounds rounds"
    cat "$work"/rows.ompi."$cmd".* 2>/dev/null | sed 's/^/ompi /' >"$work/$cmd.all"
    if [ $ours_ok = yes ]; then
        cat "$work"/rows.ours."$cmd".* | sed 's/^/ours /' >>"$work/$cmd.all"
    fi
    awk -v better="$better" -v plotfile="$work/$cmd.plot" '
        function median(list,    n, a, i, j, t) {
            n = split(list, a, " ")
            for (i = 2; i <= n; ++i) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; --j) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        { v[$1, $2] = v[$1, $2] " " $3; if (!seen[$2]++) order[++n] = $2 }
        END {
            printf "%-10s %14s %14s %10s\n", "Size", "Open MPI", "opal_perf", "ratio"
            print "# size Open_MPI opal_perf" > plotfile
            for (i = 1; i <= n; ++i) {
                s = order[i]; a = median(v["ompi", s])
                if (v["ours", s] == "") { printf "%-10s %14.2f %14s %10s\n", s, a, "-", "-"; print s, a, "-" > plotfile; continue }
                b = median(v["ours", s])
                print s, a, b > plotfile
                if (a == 0 || b == 0) { printf "%-10s %14.2f %14.2f %10s\n", s, a, b, "-"; continue }
                r = b / a
                if (better == "lower") verdict = r <= 1 ? "opal_perf faster" : "Open MPI faster"
                else verdict = r >= 1 ? "opal_perf faster" : "Open MPI faster"
                printf "%-10s %14.2f %14.2f %9.2fx  %s\n", s, a, b, r, verdict
                print s, r > "'"$work/$cmd.ratios"'"
            }
        }' "$work/$cmd.all"
}

# target_line TEXT CMD MIN MAX OP LIMIT: the worst ratio in [MIN, MAX].
target_line() {
    local text=$1 cmd=$2 min=$3 max=$4 op=$5 limit=$6
    [ -f "$work/$cmd.ratios" ] || { printf '   %-34s not measured\n' "$text"; return; }
    awk -v min="$min" -v max="$max" -v op="$op" -v limit="$limit" -v text="$text" '
        $1 >= min && $1 <= max {
            n++
            if (n == 1 || (op == "le" && $2 > w) || (op == "ge" && $2 < w)) w = $2
        }
        END {
            if (!n) { printf "   %-34s no size in range\n", text; exit }
            ok = op == "le" ? w <= limit : w >= limit
            printf "   %-34s worst %.2fx (target %s %.1fx): %s\n", text, w, op == "le" ? "<=" : ">=", limit, ok ? "met" : "MISSED"
        }' "$work/$cmd.ratios"
}

IFS=, read -r -a cmd_list <<<"$commands"
status=0
ours_ok=yes
for cmd in "${cmd_list[@]}"; do
    case "$cmd" in
        latency) list=$sizes; unit=us; better=lower ;;
        bw | bibw) list=$sizes; unit=MB/s; better=higher ;;
        rate) list=$rate_sizes; unit=messages/s; better=higher ;;
        *) echo "compare-ompi.sh: unknown measurement '$cmd'" >&2; exit 2 ;;
    esac
    echo
    echo "-- $cmd: $rounds rounds"
    for round in $(seq 1 "$rounds"); do
        run_one ompi "$cmd" "$list" "$round" || { status=1; break; }
        # opal_perf failing is reported once; Open MPI's side still runs.
        if [ $ours_ok = yes ] && ! run_one ours "$cmd" "$list" "$round"; then
            ours_ok=no
            status=1
            rm -f "$work"/rows.ours.*
        fi
    done
    report "$cmd" "$unit" "$better"
done
echo
echo "== against issue 5's targets (ratio = opal_perf / Open MPI)"
target_line "latency 0-64 B (goal 0.8x)" latency 0 64 le 1.0
target_line "bw 64 KiB-4 MiB (goal 1.2x)" bw 65536 4194304 ge 1.0
target_line "bibw 64 KiB-4 MiB (no target)" bibw 65536 4194304 ge 1.0
target_line "rate 8 B" rate 8 8 ge 1.0
if [ -n "$plot" ]; then
    panels=()
    for cmd in "${cmd_list[@]}"; do
        case "$cmd" in
            latency) panels+=("$work/latency.plot=Latency (us)") ;;
            bw) panels+=("$work/bw.plot=Bandwidth (MB/s)") ;;
            bibw) panels+=("$work/bibw.plot=Bidirectional bandwidth (MB/s)") ;;
        esac
    done
    if [ ${#panels[@]} -gt 0 ]; then
        "$here/plot.sh" "$plot" "opal_perf (btl $btl) and Open MPI (ob1, self,vader)" "${panels[@]}" ||
            status=1
    fi
fi
exit $status
