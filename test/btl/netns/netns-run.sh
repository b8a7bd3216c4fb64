#!/usr/bin/env bash
# Runs a command with two "hosts" set up on this machine (netns-lib.sh): two
# network namespaces joined by a veth pair, 10.77.0.1 and 10.77.0.2 on
# interface mcanet0, removed again however the command ends.
#
#   test/btl/netns/netns-run.sh [--build-dir DIR] -- <command> [arguments]
#
# e.g. put rank r of a job on host r mod 2 with the rank wrapper:
#
#   test/btl/netns/netns-run.sh --build-dir _build -- \
#       sh -c '$MCARUN -np 2 --mca btl self,ofi $NETNS_RANK _build/examples/hello'
#
# The command runs in the current directory, in the root namespace, with
# NETNS_RANK (the wrapper netns-rank.sh), NETNS_PREFIX (namespace i is
# ${NETNS_PREFIX}h<i>), TCP_MCA (--mca btl self,ofi --mca
# ofi_provider_include tcp;ofi_rxm) and, with --build-dir, MCARUN and the
# build tree's plugin and help paths set.
#
# A signal (Ctrl-C, SIGTERM) ends the command and removes the namespaces.
# Exit status: the command's; 77 if this machine cannot make namespaces
# (not root, no CAP_NET_ADMIN, a container), saying why; 1 if setting them
# up failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=
while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) build=${2:?--build-dir needs a directory}; shift ;;
        -h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        *) echo "netns-run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ $# -gt 0 ] || { echo "netns-run.sh: no command given (try --help)" >&2; exit 2; }

# shellcheck source=netns-lib.sh
. "$here/netns-lib.sh"
if why=$(netns_unusable); then
    echo "skipped: $why"
    exit 77
fi
if [ -n "$build" ]; then
    # shellcheck source=../../../contrib/test-list.sh
    . "$here/../../../contrib/test-list.sh"
    tl_build_env "$(cd "$build" && pwd)" || exit 2
fi
netns_setup || { echo "netns-run.sh: cannot set up the namespaces" >&2; exit 1; }
export NETNS_RANK=$here/netns-rank.sh NETNS_PREFIX=$netns_prefix
export TCP_MCA="--mca btl self,ofi --mca ofi_provider_include tcp;ofi_rxm"
# In the background, so that a signal is handled at once (netns-lib.sh);
# its standard input is this script's.
"$@" <&0 &
netns_child=$!
wait "$netns_child"
