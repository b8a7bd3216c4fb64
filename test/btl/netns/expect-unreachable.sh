#!/usr/bin/env bash
# Runs an mcarun job of test/btl/btl_test_rank whose ranks must not reach
# each other, and checks that it fails the right way:
#
#   expect-unreachable.sh REASON -- <mcarun command...>
#
# The job must exit non-zero, a rank must say "add_procs failed:
# OPAL_ERR_UNREACH", its error must name a peer on the other host ("rank P
# (on netns-hostH)" with H not its own) and give REASON (e.g. "sm: peer
# does not share this /dev/shm"). Only one rank is required to report: the
# launcher stops the job at the first failure. The job's output is shown.
set -u
[ $# -ge 3 ] && [ "$2" = -- ] || {
    echo "usage: expect-unreachable.sh REASON -- <command...>" >&2
    exit 2
}
reason=$1
shift 2
out=$("$@" 2>&1)
rc=$?
echo "$out"
bad=0
complain() {
    echo "expect-unreachable: $*"
    bad=1
}
[ $rc -ne 0 ] || complain "the job exited 0 although its ranks cannot reach each other"
echo "$out" | grep -qE '^rank [0-9]+: add_procs failed: OPAL_ERR_UNREACH$' ||
    complain "no rank said add_procs failed: OPAL_ERR_UNREACH"
echo "$out" | grep -qF -- "$reason" || complain "no rank gave the reason '$reason'"
# "Rank R (on netns-hostA) cannot reach" followed by "  rank P (on netns-hostB):".
if ! echo "$out" | awk '
        /^Rank [0-9]+ \(on netns-host[0-9]+\) cannot reach/ { mine = $4 }
        /^  rank [0-9]+ \(on netns-host[0-9]+\):$/ && mine != "" && $4 != mine { found = 1 }
        END { exit !found }'; then
    complain "no error names a peer on the other host"
fi
exit $bad
