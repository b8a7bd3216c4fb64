#!/bin/bash
# Adds a second soft-RoCE device, rxe1, in the rdma-vm guest (as root):
# on rxv0, one end of a veth pair (rxv0 10.98.0.1/24, rxv1 10.98.0.2/24,
# IPv6 off so that the GID table stays put), beside guest.sh's rxe0 on
# eth0 (10.99.0.2/24), which it leaves alone. Waits until rxe1's port 1
# is ACTIVE. Nothing to do when rxe1 is there already.
#
#   contrib/rdma-vm/add-rxe1.sh
#
# The btl/verbs port tests (verbs-ports.list) run it first; taking rxv0
# down (ip link set rxv0 down) takes rxe1's port down.
set -u
say() { echo "add-rxe1: $*"; }
if [ -e /sys/class/infiniband/rxe1 ]; then
    say "rxe1 is there already"
    exit 0
fi
if [ ! -e /sys/class/net/rxv0 ]; then
    ip link add rxv0 type veth peer name rxv1 || { say "cannot make the veth pair rxv0/rxv1"; exit 1; }
    for dev in rxv0 rxv1; do
        sysctl -q -w "net.ipv6.conf.$dev.disable_ipv6=1" >/dev/null 2>&1
    done
    ip addr add 10.98.0.1/24 dev rxv0 && ip addr add 10.98.0.2/24 dev rxv1 ||
        { say "cannot give rxv0/rxv1 their addresses"; exit 1; }
fi
ip link set rxv0 up && ip link set rxv1 up || { say "cannot bring up rxv0/rxv1"; exit 1; }
rdma link add rxe1 type rxe netdev rxv0 || { say "rdma link add rxe1 failed"; exit 1; }
for _ in $(seq 100); do
    grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state 2>/dev/null && break
    sleep 0.1
done
if ! grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state; then
    say "rxe1 port 1 did not become ACTIVE ($(cat /sys/class/infiniband/rxe1/ports/1/state 2>&1))"
    exit 1
fi
say "rxe1 up on rxv0 (10.98.0.1/24)"
rdma link show
