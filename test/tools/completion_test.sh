#!/usr/bin/env bash
# contrib/completion/opal-mca.bash against the build tree's programs: the
# options each --help lists, --mca names and values from opal_info's
# parsable output, opal_perf's subcommands, mcarun's own arguments.
# Run by make check from the build directory.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$PWD
info=$build/tools/opal_info/opal_info
perf=$build/tools/opal_perf/opal_perf
mcarun=$build/orte/tools/mcarun/mcarun
for p in "$info" "$perf" "$mcarun"; do
    [ -x "$p" ] || { echo "completion_test: $p not built" >&2; exit 99; }
done
# The completion asks the opal_info beside the program, else on PATH.
PATH=$build/tools/opal_info:$PATH
# shellcheck source=/dev/null
. "$src/contrib/completion/opal-mca.bash"

failed=0
# expect FUNCTION WANTED WORDS...: completing the last word offers WANTED.
expect() {
    local fn=$1 wanted=$2
    shift 2
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    "$fn"
    local offered=" ${COMPREPLY[*]} "
    if [[ $offered != *" $wanted "* ]]; then
        echo "FAIL: completing '${*:2}' with $fn does not offer '$wanted' (offered:$offered)" >&2
        failed=1
    else
        echo "ok: '${*:2}' offers $wanted"
    fi
}

expect _opal_mca_opal_info --param "$info" --par
expect _opal_mca_opal_info --selected "$info" --sel
expect _opal_mca_opal_info btl_self_eager_limit "$info" --mca btl_self_eag
expect _opal_mca_opal_info self "$info" --mca btl ""
expect _opal_mca_opal_info warn "$info" --mca mca_base_unknown_params ""
expect _opal_mca_opal_info btl "$info" --param b
expect _opal_mca_opal_info self "$info" --param btl s
expect _opal_mca_opal_perf latency "$perf" la
expect _opal_mca_opal_perf --iterations "$perf" latency --it
expect _opal_mca_opal_perf btl_self_eager_limit "$perf" latency --mca btl_self_eag
expect _opal_mca_mcarun --timeout "$mcarun" --ti
expect _opal_mca_mcarun core "$mcarun" --bind-to c
expect _opal_mca_mcarun self "$mcarun" --gmca btl s
exit $failed
