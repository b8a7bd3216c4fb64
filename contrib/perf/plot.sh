#!/usr/bin/env bash
# plot.sh OUT.png TITLE FILE=LABEL...: draws one panel per FILE into
# OUT.png, side by side: message size on a log x axis, the values on a log
# y axis, one line per program. Each FILE starts with a line
# "# size NAME NAME ..." (names with '_' for blanks) and then holds rows
# "size value value ..." ("-" where a program has no value); size 0 is
# left out (no place on a log axis). LABEL titles the panel and its y axis
# ("Latency (us)"). Used by compare-ompi.sh and compare-ofi.sh --plot;
# needs gnuplot (Debian: gnuplot-nox).
set -eu
if [ $# -lt 3 ]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
out=$1
title=$2
shift 2
command -v gnuplot >/dev/null 2>&1 || {
    echo "plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2
    exit 1
}
panels=$#
{
    echo "set terminal pngcairo size $((560 * panels)),480 font ',10'"
    echo "set output '$out'"
    echo "set multiplot layout 1,$panels title '$title'"
    echo "set logscale xy 2"
    echo "set format x '%.0b%B'"
    echo "set xlabel 'message size (bytes)'"
    echo "set key top left"
    echo "set grid"
    echo "set datafile missing '-'"
    for panel in "$@"; do
        file=${panel%%=*}
        label=${panel#*=}
        read -r -a names <<<"$(sed -n '1s/^# *size *//p' "$file")"
        echo "set title '$label'"
        echo "set ylabel '$label'"
        plot="plot"
        for i in "${!names[@]}"; do
            name=${names[$i]//_/ }
            plot="$plot '$file' using (\$1 > 0 ? \$1 : NaN):$((i + 2)) with linespoints title '$name',"
        done
        echo "${plot%,}"
    done
    echo "unset multiplot"
} | gnuplot
echo "plot.sh: wrote $out"
