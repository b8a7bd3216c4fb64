#!/bin/sh
# Where the wall-clock time of a message goes: merges the timeline files of
# the processes of one run (opal_timeline_file, in a build configured with
# --enable-timeline; opal/util/opal_timeline.h) and prints, for each pair
# of consecutive marks, how often it occurred and how long it took.
#
# Usage: contrib/perf/timeline.sh [--skip PERCENT] [--min-share PERCENT] FILE...
#
#   --skip PERCENT       leave out the first PERCENT of the marks, the
#                        run's start (default 10)
#   --min-share PERCENT  show the segments seen at least PERCENT as often
#                        as the most frequent one (default 5)
#
# The processes are p0, p1, ... in the order of the files (files with no
# marks, such as mcarun's own, are left out), and a thread other than a
# process's first is p<i>.t<n>. "p0:rpc_send -> p0:rpc_transmit" is the
# time from one mark to the next mark of any process; the rows are in the
# order the segments first occurred, and "cycle" adds the medians of the
# segments seen as often as the most frequent one (one round trip for a
# ping-pong). Each segment includes about one clock read (clock_read_ns in
# the legend). The files share CLOCK_MONOTONIC, so marks of processes on
# one machine merge in the order they happened.
#
#   mcarun -np 2 --mca opal_timeline_file /tmp/tl.%p \
#       opal_perf rpc-rate --na btl --window 1 -i 100000
#   contrib/perf/timeline.sh /tmp/tl.*
set -eu

skip=10
min_share=5
usage() { sed -n '7,12p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --skip) skip=${2:?--skip needs a number}; shift 2 ;;
        --min-share) min_share=${2:?--min-share needs a number}; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "timeline.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) break ;;
    esac
done
for n in "$skip" "$min_share"; do
    case "$n" in
        '' | *[!0-9]*) echo "timeline.sh: --skip and --min-share take whole percents, not '$n'" >&2; exit 2 ;;
    esac
    if [ "$n" -gt 100 ]; then
        echo "timeline.sh: $n is past 100 percent" >&2
        exit 2
    fi
done
if [ $# -eq 0 ]; then
    echo "timeline.sh: no timeline file given (try --help)" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/timeline.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# The legend, and every mark as "ns label mark".
i=0
for f in "$@"; do
    if [ ! -r "$f" ]; then
        echo "timeline.sh: cannot read $f" >&2
        exit 1
    fi
    if [ "$(head -n 1 "$f")" != "# opal timeline 1" ]; then
        echo "timeline.sh: $f is not a timeline file (its first line is not '# opal timeline 1')" >&2
        exit 1
    fi
    marks=$(sed -n '2s/.* marks \([0-9]*\) .*/\1/p' "$f")
    case "$marks" in
        '' | *[!0-9]*) echo "timeline.sh: $f has no '# pid ... marks N ...' line" >&2; exit 1 ;;
    esac
    if [ "$marks" -eq 0 ]; then
        echo "# (no marks in $f)" >>"$work/legend"
        continue
    fi
    sed -n "2s|^# |# p$i = $f: |p" "$f" >>"$work/legend"
    awk -v p="p$i" -v f="$f" '
        /^#/ { next }
        NF != 3 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ {
            printf "timeline.sh: %s line %d is not \"<ns> <thread> <mark>\": %s\n", f, NR, $0 > "/dev/stderr"
            exit 1
        }
        { printf "%s %s%s %s\n", $1, p, ($2 == 0 ? "" : ".t" $2), $3 }
    ' "$f" >>"$work/marks"
    i=$((i + 1))
done
if [ ! -s "$work/marks" ]; then
    echo "timeline.sh: none of the files holds a mark" >&2
    exit 1
fi

# Merged in time order; each pair of consecutive marks after the skipped
# start becomes "order key ns" (order: where the pair first occurred).
sort -n -k1,1 "$work/marks" >"$work/merged"
total=$(wc -l <"$work/merged")
awk -v first=$((total * skip / 100 + 1)) '
    NR < first { next }
    NR > first {
        key = prev_label ":" prev_mark " -> " $2 ":" $3
        if (!(key in order)) {
            order[key] = ++keys
        }
        printf "%d\t%s\t%d\n", order[key], key, $1 - prev_ns
    }
    { prev_ns = $1; prev_label = $2; prev_mark = $3 }
' "$work/merged" | sort -t "$(printf '\t')" -k1,1n -k3,3n >"$work/pairs"
if [ ! -s "$work/pairs" ]; then
    echo "timeline.sh: fewer than two marks past the skipped $skip%" >&2
    exit 1
fi

# Per segment: count and quantiles (the durations of a segment are sorted).
awk -F '\t' '
    function flush() {
        if (n > 0) {
            printf "%d\t%s\t%d\t%d\t%d\t%d\n", id, key, n, d[int((n - 1) * 0.1) + 1],
                d[int((n - 1) * 0.5) + 1], d[int((n - 1) * 0.9) + 1]
        }
        n = 0
    }
    $1 != id { flush(); id = $1; key = $2 }
    { d[++n] = $3 }
    END { flush() }
' "$work/pairs" >"$work/segments"

cat "$work/legend"
awk -F '\t' -v min_share="$min_share" '
    { id[NR] = $1; key[NR] = $2; n[NR] = $3; p10[NR] = $4; p50[NR] = $5; p90[NR] = $6
      if ($3 > most) most = $3 }
    END {
        printf "%-48s %9s %9s %9s %9s\n", "segment", "count", "p10 ns", "median", "p90 ns"
        for (i = 1; i <= NR; ++i) {
            if (n[i] * 100 < most * min_share) {
                hidden += n[i]
                continue
            }
            printf "%-48s %9d %9d %9d %9d\n", key[i], n[i], p10[i], p50[i], p90[i]
            if (n[i] * 10 >= most * 9) {
                cycle += p50[i]
                parts++
            }
        }
        if (hidden > 0) {
            printf "(%d rarer segment occurrences not shown: --min-share)\n", hidden
        }
        printf "cycle: %d ns, the medians of the %d segments seen as often as the most frequent\n",
            cycle, parts
    }
' "$work/segments"
