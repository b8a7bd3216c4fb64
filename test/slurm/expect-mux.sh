#!/usr/bin/env bash
# Runs test/btl/btl_test_rank under srun --mpi=pmix across the cluster's
# nodes with btl self,sm,ofi (ofi over tcp;ofi_rxm) and checks that the
# multiplexer chose per peer:
#
#   expect-mux.sh NP PER_NODE CASE [CASE-ARGS...]
#
# PER_NODE ranks on each node, in blocks. The job must exit 0, no rank may
# print FAILED, every rank r must print "rank r: CASE ok", and for every
# other rank p "rank r: peer p: send over sm..." when p shares r's node
# (sm first; ofi may follow as a second path) and "send over ofi;" when it
# does not (sm must not claim a peer on another node).
#
# CASE killed: the last rank kills itself mid-transfer; srun must report
# it ("task K: Killed") and exit non-zero, and every other rank must say
# that its error callback named the victim (or that it survived its loss)
# and "killed ok". Slurm's PMIx plugin ends the whole step with SIGKILL
# as soon as its server loses a client (its error handler calls
# slurm_kill_job_step), so a survivor can be killed before it notices the
# loss or between its "survived" line and its "killed ok": both are
# required of every survivor that srun does not report killed, and at
# least one survivor must say it survived. Needs SRUN (cluster.sh run DIR srun) and BUILD. The
# output is shown.
set -u
[ $# -ge 3 ] || { echo "usage: expect-mux.sh NP PER_NODE CASE [CASE-ARGS...]" >&2; exit 2; }
np=$1 per_node=$2 case_name=$3
shift 3
nodes=$(((np + per_node - 1) / per_node))
bad=0
complain() {
    echo "expect-mux: $*"
    bad=1
}
# -K0: a rank that exits badly does not end the step at once (the killed
# case's survivors finish); Slurm still ends it when a rank is killed.
# shellcheck source=shown-run.sh
. "$(dirname "$0")/shown-run.sh"
# $SRUN is a command line (cluster.sh run DIR srun): split on purpose.
# shellcheck disable=SC2086
shown_run srun env OPAL_MCA_btl=self,sm,ofi OPAL_MCA_ofi_provider_include='tcp;ofi_rxm' \
    $SRUN --mpi=pmix -K0 -N "$nodes" -n "$np" --ntasks-per-node="$per_node" \
    "$BUILD/test/btl/btl_test_rank" "$case_name" "$@"
out=$shown_out rc=$shown_rc
echo "$out"
victim=-1
# srun_killed R: srun reported task R killed ("task R: Killed", or R in a
# list such as "tasks 0-1,3: Killed").
srun_killed() {
    local r=$1 list item
    while read -r list; do
        IFS=, read -ra items <<<"$list"
        for item in "${items[@]}"; do
            if [[ $item == *-* ]]; then
                ((r >= ${item%-*} && r <= ${item#*-})) && return 0
            elif ((r == item)); then
                return 0
            fi
        done
    done < <(echo "$out" | sed -n 's/^srun: error: node[0-9]*: tasks\? \([0-9,-]*\): Killed$/\1/p')
    return 1
}
if [ "$case_name" = killed ]; then
    victim=$((np - 1))
    [ $rc -ne 0 ] || complain "srun exited 0 although rank $victim was killed"
    echo "$out" | grep -qE "^srun: error: node[0-9]+: task $victim: Killed" ||
        complain "srun did not report task $victim killed"
else
    [ $rc -eq 0 ] || complain "srun exited $rc"
fi
echo "$out" | grep -q FAILED && complain "a rank reported a failure"
survivors=0
for ((r = 0; r < np; r++)); do
    [ $r -eq $victim ] && continue
    saw=no
    if [ $victim -ge 0 ]; then
        if echo "$out" | grep -qF "rank $r: survived the loss of rank $victim"; then
            survivors=$((survivors + 1))
            saw=yes
        elif srun_killed $r; then
            echo "expect-mux: rank $r was ended by Slurm before it saw the loss of rank $victim"
        else
            complain "rank $r did not say it survived the loss of rank $victim"
        fi
    fi
    if ! echo "$out" | grep -qxF "rank $r: $case_name ok"; then
        if [ $victim -ge 0 ] && srun_killed $r; then
            if [ $saw = yes ]; then
                echo "expect-mux: rank $r survived, then Slurm ended the step before it finished"
            fi
        else
            complain "rank $r did not say '$case_name ok'"
        fi
    fi
    for ((p = 0; p < np; p++)); do
        [ $p -eq $r ] && continue
        line=$(echo "$out" | grep -F "rank $r: peer $p: send over " | head -n 1)
        if [ -z "$line" ]; then
            complain "rank $r did not say how it reaches rank $p"
        elif [ $((p / per_node)) -eq $((r / per_node)) ]; then
            [[ $line == "rank $r: peer $p: send over sm"[,\;]* ]] ||
                complain "rank $r reaches rank $p (its node) otherwise than over sm first: $line"
        else
            [[ $line == "rank $r: peer $p: send over ofi;"* ]] ||
                complain "rank $r reaches rank $p (another node) otherwise than over ofi alone: $line"
        fi
    done
done
# Slurm may end some survivors before they notice; one at least must have
# seen the loss (the victim's node-mates see it at once: sm watches its
# pid).
if [ $victim -ge 0 ] && [ $survivors -eq 0 ]; then
    complain "no rank said it survived the loss of rank $victim"
fi
exit $bad
