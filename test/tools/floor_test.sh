#!/usr/bin/env bash
# contrib/perf/sm_floor.c and tcp_floor.c, which the Mercury comparisons
# build with cc at run time, and contrib/perf/fbox_model.c (btl/sm's fast
# box alone, built against this tree's btl_sm_fbox.h): they build, a short
# run prints one row per size in opal_perf's layout with a positive
# figure, and bad options are refused with a message naming the option.
# Run by make check from the build directory.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/floor_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

for tool in sm_floor tcp_floor; do
    if ! ${CC:-cc} -std=c11 -O2 -Wall -Werror -o "$work/$tool" "$src/contrib/perf/$tool.c" \
        2>"$work/$tool.log"; then
        fail "$tool.c does not build: $(cat "$work/$tool.log")"
    fi
done
if ! ${CC:-cc} -std=c11 -O2 -Wall -Werror -I"$src" -I"$build" -o "$work/fbox_model" \
    "$src/contrib/perf/fbox_model.c" "$src/opal/mca/btl/sm/btl_sm_fbox.c" 2>"$work/fbox_model.log"; then
    fail "fbox_model.c does not build: $(cat "$work/fbox_model.log")"
fi
[ $failed -eq 0 ] || exit 1

# rows OUT SIZES: OUT has '#' lines, then exactly one "size value" row per
# size in SIZES, in order, each value above 0.
rows() {
    local out=$1 sizes=$2
    grep -v '^#' "$out" | awk '{ print $1 }' | tr '\n' ' ' | grep -qx "$sizes " ||
        fail "rows of $(cat "$out") are not for sizes $sizes"
    grep -v '^#' "$out" | awk 'NF != 2 || !($2 > 0) { bad = 1 } END { exit bad }' ||
        fail "a row of $(cat "$out") has no positive figure"
    head -n 1 "$out" | grep -q '^# ' || fail "no header line in $(cat "$out")"
}

# Few round trips (sm_floor adds 1,000 untimed ones per size): both spin,
# and on cores shared with other tests each may wait out a time slice.
timeout 120 "$work/sm_floor" --sizes 8,64 --iterations 10 >"$work/sm.out" 2>&1 ||
    fail "sm_floor failed: $(cat "$work/sm.out")"
rows "$work/sm.out" "8 64"

timeout 120 "$work/tcp_floor" --sizes 4096,65536 --window 4 --iterations 5 >"$work/tcp.out" 2>&1 ||
    fail "tcp_floor failed: $(cat "$work/tcp.out")"
rows "$work/tcp.out" "4096 65536"
grep -q 'at most 262144 bytes per send' "$work/tcp.out" ||
    fail "tcp_floor's header does not give its send size: $(head -n 1 "$work/tcp.out")"
# Whole chunks at once, a size that is no multiple of a page.
timeout 120 "$work/tcp_floor" --sizes 100001 --window 3 --iterations 2 --send-max 0 \
    >"$work/tcp0.out" 2>&1 || fail "tcp_floor --send-max 0 failed: $(cat "$work/tcp0.out")"
rows "$work/tcp0.out" "100001"

# Today's write order and watch, and the ones before (each size adds
# 1,000 untimed round trips, as sm_floor's), at the smallest message and
# the largest its ring takes.
for setting in "fill on" "plain off"; do
    read -r order watch <<<"$setting"
    timeout 120 "$work/fbox_model" --sizes 8,1016 --iterations 10 --order "$order" \
        --watch "$watch" --work 0 >"$work/fb.out" 2>&1 ||
        fail "fbox_model --order $order --watch $watch failed: $(cat "$work/fb.out")"
    rows "$work/fb.out" "8 1016"
    grep -q "order $order, watch $watch, work 0" "$work/fb.out" ||
        fail "fbox_model's header does not give its settings: $(head -n 1 "$work/fb.out")"
done

# refused TOOL MESSAGE ARGS...: TOOL ARGS exits 2 and says MESSAGE.
refused() {
    local tool=$1 msg=$2
    shift 2
    "$work/$tool" "$@" >"$work/r.out" 2>&1
    local rc=$?
    [ $rc -eq 2 ] || fail "$tool $* exited $rc, not 2"
    grep -qF -- "$msg" "$work/r.out" || fail "$tool $*: no '$msg' in: $(cat "$work/r.out")"
}
refused sm_floor "--sizes: '5000' is not a size" --sizes 8,5000
refused sm_floor "unknown option '--window'" --window 2
refused tcp_floor "--sizes: '0' is not a size" --sizes 0
refused tcp_floor "--sizes: '64k' is not a size" --sizes 64k
refused tcp_floor "--window: '0' is not a count" --window 0
refused tcp_floor "--window: '2000' is not a count" --window 2000
refused tcp_floor "--iterations: '0' is not a count" --iterations 0
refused tcp_floor "--send-max: 'x' is not a size" --send-max x
refused tcp_floor "--cores: '0' is not two core numbers" --cores 0
refused tcp_floor "--iterations needs a value" --iterations
refused tcp_floor "unknown option '--rounds'" --rounds 3
refused tcp_floor "more than 1073741824 bytes per process" --sizes 67108864 --window 64

refused fbox_model "--order: 'both' is not fill or plain" --order both
refused fbox_model "--watch: '1' is not on or off" --watch 1
refused fbox_model "--work: '-1' is not a count" --work -1
refused fbox_model "--sizes: '4' is not a size from 8 to 1016" --sizes 4
refused fbox_model "--sizes: '1017' is not a size" --sizes 1017

exit $failed
