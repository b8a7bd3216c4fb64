#!/usr/bin/env bash
# Runs test/orte/orte_ess_rank under srun --mpi=pmix across the cluster's
# nodes and under mcarun on one, and checks what the ranks saw:
#
#   expect-ess.sh NP PER_NODE [RANK-ARGS...]
#
# srun puts PER_NODE ranks on each node, in blocks (ranks 0 .. PER_NODE-1
# on the first node). Every rank r < NP must print exactly one line
#
#   rank r size NP local (r mod PER_NODE)/PER_NODE node D locality L data B
#
# where D is the same for the ranks of one node and differs between nodes,
# L has a non-zero digit for every peer on r's node and 0 for the others,
# and B (the modex bytes r checked) equals what the same ranks check under
# mcarun. Rank 0's session directory must be gone from its node's /tmp
# when the job has ended. Needs SRUN (cluster.sh run DIR srun), CLUSTER
# (the cluster's DIR), MCARUN and BUILD. The output is shown.
set -u
[ $# -ge 2 ] || { echo "usage: expect-ess.sh NP PER_NODE [RANK-ARGS...]" >&2; exit 2; }
np=$1 per_node=$2
shift 2
nodes=$(((np + per_node - 1) / per_node))
program=$BUILD/test/orte/orte_ess_rank
bad=0
complain() {
    echo "expect-ess: $*"
    bad=1
}

# shellcheck source=shown-run.sh
. "$(dirname "$0")/shown-run.sh"
# $SRUN is a command line (cluster.sh run DIR srun): split on purpose.
# shellcheck disable=SC2086
shown_run srun $SRUN --mpi=pmix -N "$nodes" -n "$np" --ntasks-per-node="$per_node" \
    "$program" --expect-size "$np" "$@"
out=$shown_out rc=$shown_rc
echo "$out" | sed 's/^/srun| /'
shown_run mcarun "$MCARUN" -np "$np" --oversubscribe --bind-to none "$program" --expect-size "$np" "$@"
ref=$shown_out mrc=$shown_rc
[ $rc -eq 0 ] || complain "srun exited $rc"
[ $mrc -eq 0 ] || { echo "$ref" | sed 's/^/mcarun| /'; complain "mcarun exited $mrc"; }

declare -A node_of
for ((r = 0; r < np; r++)); do
    lines=$(echo "$out" | grep -E "^rank $r size ")
    if [ "$(echo "$lines" | grep -c .)" -ne 1 ]; then
        complain "rank $r printed $(echo "$lines" | grep -c .) job lines, not one"
        continue
    fi
    read -r _ _ _ size _ local _ node _ locality _ data <<<"$lines"
    [ "$size" = "$np" ] || complain "rank $r says size $size"
    [ "$local" = "$((r % per_node))/$per_node" ] ||
        complain "rank $r says local $local, not $((r % per_node))/$per_node"
    node_of[$r]=$node
    for ((p = 0; p < np && p < ${#locality}; p++)); do
        digit=${locality:$p:1}
        if [ $((p / per_node)) -eq $((r / per_node)) ]; then
            [ "$digit" != 0 ] || complain "rank $r sees rank $p (its node) with no locality"
        else
            [ "$digit" = 0 ] || complain "rank $r sees rank $p (another node) with locality $digit"
        fi
    done
    [ ${#locality} -eq "$np" ] || complain "rank $r's locality '$locality' has not $np digits"
    ref_data=$(echo "$ref" | grep -E "^rank $r size " | awk '{ print $NF }')
    [ -n "$data" ] && [ "$data" = "$ref_data" ] ||
        complain "rank $r checked ${data:-no} modex bytes, under mcarun ${ref_data:-none}"
done
# Node ids: one per node, each shared by exactly that node's ranks.
for ((r = 0; r < np; r++)); do
    for ((p = 0; p < np; p++)); do
        [ -n "${node_of[$r]:-}" ] && [ -n "${node_of[$p]:-}" ] || continue
        if [ $((r / per_node)) -eq $((p / per_node)) ]; then
            [ "${node_of[$r]}" = "${node_of[$p]}" ] ||
                complain "ranks $r and $p share a node but say nodes ${node_of[$r]} and ${node_of[$p]}"
        elif [ "${node_of[$r]}" = "${node_of[$p]}" ]; then
            complain "ranks $r and $p are on different nodes but both say node ${node_of[$r]}"
        fi
    done
done
session=$(echo "$out" | sed -n 's/^session //p' | head -n 1)
if [ -z "$session" ]; then
    complain "rank 0 did not say its session directory"
elif [ -e "$CLUSTER/node0/${session#/}" ]; then
    complain "rank 0's session directory $session is still on node0"
fi
exit $bad
