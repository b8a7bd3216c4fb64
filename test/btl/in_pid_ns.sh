#!/bin/sh
# in_pid_ns.sh PROGRAM [ARGS...]: runs PROGRAM in a pid namespace and a
# /proc of its own, as the child of that namespace's first process, under
# a pid taken from this script's own (so that ranks started side by side
# get different ones). Its pid then names no process its peers can see:
# a btl that checked it would take a live peer for a dead one. Exits 77
# when the namespace cannot be made (not root, no unshare).
command -v unshare >/dev/null 2>&1 || { echo "in_pid_ns.sh: no unshare" >&2; exit 77; }
unshare --pid --fork --mount-proc true 2>/dev/null ||
    { echo "in_pid_ns.sh: cannot make a pid namespace here" >&2; exit 77; }
pid=$(( $$ % 20000 + 100 ))
exec unshare --pid --fork --mount-proc --kill-child sh -c '
    echo "$1" > /proc/sys/kernel/ns_last_pid || exit 77
    shift
    "$@" &
    wait $!' in_pid_ns.sh "$pid" "$@"
