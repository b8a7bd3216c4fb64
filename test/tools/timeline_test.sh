#!/usr/bin/env bash
# contrib/perf/timeline.sh on timelines of known times (the segments, their
# counts and medians, the cycle, its refusals), and on a real one: in a
# build with marks (--enable-timeline), two ranks of opal_perf rpc-rate
# record a timeline and every layer of a round trip shows in the summary;
# in a build without, asking for a timeline stops the program with a
# message saying why. Run by make check from the build directory.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$PWD
summary=$src/contrib/perf/timeline.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/timeline_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}
# has FILE TEXT: FILE holds the line TEXT (spaces squeezed).
has() {
    tr -s ' ' <"$1" | grep -qxF -- "$2" || fail "no line '$2' in $(cat "$1")"
}

# Two processes, 20 round trips: p0 a at t, b at t+100; p1 c at t+300
# (a ping of 200 ns, 202 every fifth time), d at t+350; the next a at
# t+1000.
{
    echo "# opal timeline 1"
    echo "# pid 100 marks 40 dropped 0 clock_read_ns 40"
    echo "# ns thread mark"
    for i in $(seq 0 19); do
        echo "$((5000 + i * 1000)) 0 rpc_send"
        echo "$((5100 + i * 1000)) 0 sm_sent"
    done
} >"$work/a"
{
    echo "# opal timeline 1"
    echo "# pid 101 marks 40 dropped 0 clock_read_ns 40"
    echo "# ns thread mark"
    for i in $(seq 0 19); do
        echo "$((5300 + i * 1000 + (i % 5 == 0 ? 2 : 0))) 0 sm_arrived"
        echo "$((5350 + i * 1000)) 0 rpc_handler"
    done
} >"$work/b"
printf '# opal timeline 1\n# pid 102 marks 0 dropped 0 clock_read_ns 40\n# ns thread mark\n' >"$work/empty"

if "$summary" --skip 0 "$work/a" "$work/empty" "$work/b" >"$work/out" 2>"$work/err"; then
    cat "$work/out"
    has "$work/out" "# p0 = $work/a: pid 100 marks 40 dropped 0 clock_read_ns 40"
    has "$work/out" "# p1 = $work/b: pid 101 marks 40 dropped 0 clock_read_ns 40"
    has "$work/out" "# (no marks in $work/empty)"
    has "$work/out" "p0:rpc_send -> p0:sm_sent 20 100 100 100"
    has "$work/out" "p0:sm_sent -> p1:sm_arrived 20 200 200 202"
    has "$work/out" "p1:sm_arrived -> p1:rpc_handler 20 48 50 50"
    has "$work/out" "p1:rpc_handler -> p0:rpc_send 19 650 650 650"
    has "$work/out" "cycle: 1000 ns, the medians of the 4 segments seen as often as the most frequent"
    # The order is the order of first occurrence.
    first=$(grep -n -- '->' "$work/out" | head -n 1)
    [[ $first == *"p0:rpc_send -> p0:sm_sent"* ]] || fail "first segment: $first"
else
    fail "timeline.sh on the made-up files: $(cat "$work/err")"
fi

# --skip leaves out the start: 50% of 80 marks is the first 20 round trips'
# half, so 10 round trips remain.
if "$summary" --skip 50 "$work/a" "$work/b" >"$work/out" 2>"$work/err"; then
    has "$work/out" "p0:rpc_send -> p0:sm_sent 10 100 100 100"
else
    fail "timeline.sh --skip 50: $(cat "$work/err")"
fi

# refused STATUS TEXT ARGS...: timeline.sh ARGS exits with STATUS, saying TEXT.
refused() {
    local status=$1 text=$2
    shift 2
    "$summary" "$@" >"$work/out" 2>"$work/err"
    local got=$?
    [ "$got" -eq "$status" ] || fail "timeline.sh $* exited $got, not $status"
    grep -qF -- "$text" "$work/err" || fail "timeline.sh $*: no '$text' in: $(cat "$work/err")"
}
refused 2 "no timeline file given"
refused 2 "take whole percents, not 'x'" --skip x "$work/a"
refused 2 "is past 100 percent" --min-share 101 "$work/a"
refused 2 "unknown option '--bogus'" --bogus "$work/a"
refused 1 "cannot read $work/missing" "$work/missing"
echo "not a timeline" >"$work/other"
refused 1 "$work/other is not a timeline file" "$work/other"
sed '5s/.*/12 0 rpc_send extra/' "$work/a" >"$work/bad"
refused 1 "$work/bad line 5 is not \"<ns> <thread> <mark>\"" "$work/bad"
refused 1 "none of the files holds a mark" "$work/empty"

# The real thing, or its refusal.
mcarun=$build/orte/tools/mcarun/mcarun
perf=$build/tools/opal_perf/opal_perf
for p in "$mcarun" "$perf"; do
    [ -x "$p" ] || { echo "timeline_test: $p not built" >&2; exit 99; }
done
if grep -q '^#define OPAL_ENABLE_TIMELINE 1' "$build/config.h"; then
    if timeout 120 "$mcarun" -np 2 --mca opal_timeline_file "$work/tl.%p" \
        "$perf" rpc-rate --na btl --window 1 --sizes 8 -i 2000 >"$work/run" 2>&1; then
        ls "$work"/tl.* >/dev/null 2>&1 || fail "no timeline files after the run"
        if "$summary" "$work"/tl.* >"$work/out" 2>"$work/err"; then
            cat "$work/out"
            # Each layer of the round trip, client and server, every time.
            for seg in "rpc_send -> p.:rpc_transmit" "rpc_transmit -> p.:na_send" \
                "na_send -> p.:sm_sent" "sm_sent -> p.:sm_arrived" "sm_arrived -> p.:na_recv" \
                "na_recv -> p.:na_queued" "na_queued -> p.:na_trigger" \
                "na_trigger -> p.:rpc_recv" \
                "rpc_recv -> p.:rpc_handler" "rpc_handler -> p.:rpc_reply" \
                "rpc_reply -> p.:rpc_transmit" "rpc_recv -> p.:rpc_complete"; do
                line=$(grep -E -- "p.:$seg " "$work/out" | head -n 1)
                count=$(echo "$line" | awk '{ print $4 }')
                if [ -z "$line" ] || [ "${count:-0}" -lt 1500 ]; then
                    fail "segment '$seg' missing or seen fewer than 1500 times: '$line'"
                fi
            done
        else
            fail "timeline.sh on the run's files: $(cat "$work/err")"
        fi
    else
        fail "rpc-rate with opal_timeline_file: $(cat "$work/run")"
    fi
else
    OPAL_MCA_opal_timeline_file=$work/tl "$perf" rpc-rate --na btl -i 10 >"$work/run" 2>&1
    status=$?
    [ "$status" -ne 0 ] || fail "opal_perf ran with opal_timeline_file in a build without marks"
    grep -qF "this build has no timeline marks (configure --enable-timeline)" "$work/run" ||
        fail "no reason given: $(cat "$work/run")"
    [ ! -e "$work/tl" ] || fail "a timeline file was written by a build without marks"
    echo "ok: a build without marks refuses opal_timeline_file"
fi
exit $failed
