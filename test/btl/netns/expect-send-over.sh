#!/usr/bin/env bash
# Runs an mcarun job of test/btl/btl_test_rank and checks what it says:
#
#   expect-send-over.sh NP MODULE CASE -- <mcarun command...>
#
# The job must exit 0, no rank may print FAILED, every rank r < NP must
# print "rank r: CASE ok", and for every other rank p "rank r: peer p: send
# over MODULE;": MODULE alone carries the sends between different ranks
# (e.g. ofi between two hosts, where sm must not claim the peer). After
# CASE order, every rank r must also show what MODULE holds toward every
# peer p ("rank r: toward rank p: MODULE: <its btl_dump>"). The job's
# output is shown.
#
# CASE killed (run with mcarun --enable-recovery): the last rank is killed
# mid-transfer, so the job must exit non-zero, and every other rank must
# say that its error callback named the victim, that it survived, and
# "killed ok".
set -u
[ $# -ge 5 ] && [ "$4" = -- ] || {
    echo "usage: expect-send-over.sh NP MODULE CASE -- <command...>" >&2
    exit 2
}
np=$1 module=$2 case_name=$3
shift 4
out=$("$@" 2>&1)
rc=$?
echo "$out"
bad=0
complain() {
    echo "expect-send-over: $*"
    bad=1
}
victim=$((np - 1))
if [ "$case_name" = killed ]; then
    [ $rc -ne 0 ] || complain "the job exited 0 although rank $victim was killed"
else
    [ $rc -eq 0 ] || complain "the job exited $rc"
fi
if echo "$out" | grep -q FAILED; then
    complain "a rank reported a failure"
fi
for ((r = 0; r < np; r++)); do
    if [ "$case_name" = killed ]; then
        [ $r -eq $victim ] && continue
        echo "$out" | grep -qF "rank $r: error callback: rank $victim failed" ||
            complain "rank $r's error callback did not name rank $victim"
        echo "$out" | grep -qF "rank $r: survived the loss of rank $victim" ||
            complain "rank $r did not say it survived the loss of rank $victim"
    fi
    echo "$out" | grep -qxF "rank $r: $case_name ok" || complain "rank $r did not say '$case_name ok'"
    for ((p = 0; p < np; p++)); do
        [ $p -eq $r ] && continue
        [ "$case_name" = killed ] && [ $r -eq $victim ] && continue
        line=$(echo "$out" | grep -F "rank $r: peer $p: send over " | head -n 1)
        if [ -z "$line" ]; then
            complain "rank $r did not say how it reaches rank $p"
        elif [[ $line != "rank $r: peer $p: send over $module;"* ]]; then
            complain "rank $r reaches rank $p otherwise than over $module alone: $line"
        fi
        # The order case ends with what MODULE holds toward each peer
        # (btl_dump), not the placeholder of a module without one.
        if [ "$case_name" = order ]; then
            line=$(echo "$out" | grep -F "rank $r: toward rank $p: " | head -n 1)
            if [[ $line != *"$module: "* ]] || [[ $line == *"(no state to show)"* ]]; then
                complain "rank $r does not show what $module holds toward rank $p: ${line:-nothing}"
            fi
        fi
    done
done
exit $bad
