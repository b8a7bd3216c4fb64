#!/usr/bin/env bash
# Wall time of opal_info against Open MPI's ompi_info, measured in the same
# run and alternately (opal, ompi, opal, ompi, ...) so that both see the
# same machine load: the plain command, and --all --parsable. Prints each
# median and the ratio opal/ompi (the target is at most 0.5).
#
# Usage: contrib/perf/opal_info_vs_ompi_info.sh [-n ROUNDS] [-b BUILD_DIR]
#   -n ROUNDS     runs of each command (default 15), after one warm-up run
#   -b BUILD_DIR  the opal-mca build tree (default _build); its opal_info is
#                 run directly (.libs/opal_info with LD_LIBRARY_PATH), not
#                 through libtool's wrapper script, which would add a shell
#                 start to every run
# With OPAL_INFO=/path/to/opal_info in the environment, that program is
# timed instead (an installed one, say).
#
# The build tree's opal_info loads the build tree's plugins by itself (btl,
# ess; libfabric is not loaded to list variables). Also times
# test/tools/opal_info_mcatest (built by make check) with the mcatest
# components loaded as plugins from the build tree, when it is there.
#
# Installs openmpi-bin with apt-get (as root, or through sudo) when
# ompi_info is missing.
set -eu
cd "$(dirname "$0")/../.."
top=$(pwd)
rounds=15
build="$top/_build"
while getopts "n:b:h" opt; do
    case $opt in
        n) rounds=$OPTARG ;;
        b) build=$(cd "$OPTARG" && pwd) ;;
        *)
            sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
            exit 2
            ;;
    esac
done
case $rounds in
    '' | *[!0-9]* | 0)
        echo "opal_info_vs_ompi_info.sh: -n wants a number of rounds, not '$rounds'" >&2
        exit 2
        ;;
esac

if ! command -v ompi_info >/dev/null 2>&1; then
    echo "== ompi_info not found: installing openmpi-bin"
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y openmpi-bin >/dev/null
    else
        sudo apt-get install -y openmpi-bin >/dev/null
    fi
fi
ompi=$(command -v ompi_info)

libs="$build/.libs"
if [ -n "${OPAL_INFO:-}" ]; then
    opal=$OPAL_INFO
elif [ -x "$build/tools/opal_info/.libs/opal_info" ]; then
    opal="$build/tools/opal_info/.libs/opal_info"
elif [ -x "$build/tools/opal_info/opal_info" ]; then
    opal="$build/tools/opal_info/opal_info"
else
    echo "opal_info_vs_ompi_info.sh: no opal_info in $build: build first (make -C $build)" >&2
    exit 1
fi
mcatest="$build/test/tools/.libs/opal_info_mcatest"
[ -x "$mcatest" ] || mcatest="$build/test/tools/opal_info_mcatest"
[ -x "$mcatest" ] || mcatest=
plugin_dirs=$(find "$build/test/mca" -path '*/.libs/mca_mcatest_*.so' -printf '%h\n' 2>/dev/null |
    sort -u | paste -sd: -)

# run_opal ARGS...: opal_info as a user would run it, from the build tree.
run_opal() {
    LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$opal" "$@"
}
run_ompi() {
    "$ompi" "$@"
}
run_mcatest() {
    LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        OPAL_INFO_MCATEST_PLUGINS_ONLY=1 OPAL_MCA_mca_base_component_path="$plugin_dirs" \
        OPAL_MCA_mca_base_component_show_load_errors=none "$mcatest" "$@"
}

# elapsed_us CMD...: runs CMD with its output discarded and prints the wall
# time in microseconds (bash's EPOCHREALTIME).
elapsed_us() {
    local start=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || true
    local end=$EPOCHREALTIME
    echo $((${end/./} - ${start/./}))
}

median() {
    sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

names=(opal_plain ompi_plain opal_all ompi_all)
cmds=("run_opal" "run_ompi" "run_opal --all --parsable" "run_ompi --all --parsable")
if [ -n "$mcatest" ] && [ -n "$plugin_dirs" ]; then
    names+=(mcatest_plain mcatest_all)
    cmds+=("run_mcatest" "run_mcatest --all --parsable")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== opal_info: $opal"
echo "== ompi_info: $ompi ($("$ompi" --version 2>/dev/null | sed -n 1p))"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $rounds rounds"
for i in "${!cmds[@]}"; do # warm-up: page cache, dynamic linker cache
    ${cmds[$i]} >/dev/null 2>&1 || true
done
for ((r = 0; r < rounds; ++r)); do
    for i in "${!cmds[@]}"; do
        elapsed_us ${cmds[$i]} >>"$tmp/${names[$i]}"
    done
done
echo "== load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A med
for n in "${names[@]}"; do
    med[$n]=$(median <"$tmp/$n")
done
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'
}
ms() {
    awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'
}
printf '\n%-34s %12s %12s %8s\n' "command" "opal ms" "ompi ms" "ratio"
printf '%-34s %12s %12s %8s\n' "opal_info / ompi_info" "$(ms "${med[opal_plain]}")" \
    "$(ms "${med[ompi_plain]}")" "$(ratio "${med[opal_plain]}" "${med[ompi_plain]}")"
printf '%-34s %12s %12s %8s\n' "... --all --parsable" "$(ms "${med[opal_all]}")" \
    "$(ms "${med[ompi_all]}")" "$(ratio "${med[opal_all]}" "${med[ompi_all]}")"
if [ -n "${med[mcatest_plain]:-}" ]; then
    printf '%-34s %12s %12s %8s\n' "opal_info_mcatest (7 plugins)" "$(ms "${med[mcatest_plain]}")" \
        "$(ms "${med[ompi_plain]}")" "$(ratio "${med[mcatest_plain]}" "${med[ompi_plain]}")"
    printf '%-34s %12s %12s %8s\n' "... --all --parsable" "$(ms "${med[mcatest_all]}")" \
        "$(ms "${med[ompi_all]}")" "$(ratio "${med[mcatest_all]}" "${med[ompi_all]}")"
fi
echo "(medians of $rounds alternating runs; ratio = opal / ompi, target <= 0.5)"
