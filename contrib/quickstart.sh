#!/usr/bin/env bash
# Installs what is missing, builds opal-mca in _build, and runs the main
# job: the configure summary, the examples, opal_info (what is built and
# what would be selected here), examples/hello as a job of two ranks
# under mcarun, examples/rpc_hello as a server and a client started
# separately, a short opal_perf latency run and a short RPC rate.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

. "$top/contrib/opal-deps.sh"
opal_install_deps

echo "== autogen"
./autogen.sh >/dev/null
echo "== configure (_build)"
mkdir -p _build
(cd _build && "$top/configure" >configure.out 2>&1) || {
    tail -n 30 _build/configure.out
    exit 1
}
sed -n '/configuration summary/,/compiler:/p' _build/configure.out
echo "== make -j$jobs"
make -C _build -j"$jobs" >_build/make.out 2>&1 || {
    tail -n 30 _build/make.out
    exit 1
}

# The build tree's programs need no installing: a build-tree libopal takes
# its plugins from the build tree's component directories and its help
# files from the source tree (opal/runtime/opal_build_tree.c).
for ex in _build/examples/*; do
    [ -x "$ex" ] && [ -f "$ex" ] || continue
    case "$ex" in */rpc_hello) continue ;; esac # a pair: below
    echo "== $ex"
    "$ex"
done

# What the build holds, and what a program would select here.
echo "== opal_info"
_build/tools/opal_info/opal_info
echo "== opal_info --selected"
_build/tools/opal_info/opal_info --selected

echo "== mcarun -np 2 examples/hello"
_build/orte/tools/mcarun/mcarun -np 2 _build/examples/hello

# An RPC between two processes started separately: the server writes its
# URI to a file, the client reads it (na btl: no launcher involved).
echo "== examples/rpc_hello server & examples/rpc_hello client"
uri=$(mktemp -u "${TMPDIR:-/tmp}/rpc_hello.XXXXXX")
timeout 120 _build/examples/rpc_hello server "$uri" &
server=$!
timeout 120 _build/examples/rpc_hello client "$uri" "$(id -un 2>/dev/null || echo you)"
wait "$server"

# A short benchmark: two ranks over shared memory, or, in a build without
# btl/sm, one rank talking to itself over btl/self.
perf="_build/tools/opal_perf/opal_perf latency --sizes 0,8,64,1k,64k,1m --iterations 1000"
if [ -e _build/opal/mca/btl/sm/mca_btl_sm.la ] || [ -e _build/opal/mca/btl/sm/libmca_btl_sm.la ]; then
    echo "== mcarun -np 2 --bind-to core opal_perf latency --mca btl self,sm"
    _build/orte/tools/mcarun/mcarun -np 2 --bind-to core --timeout 120 $perf --mca btl self,sm
    echo "== mcarun -np 2 opal_perf rpc-rate --na btl --window 16 --mca btl self,sm"
    _build/orte/tools/mcarun/mcarun -np 2 --timeout 120 _build/tools/opal_perf/opal_perf rpc-rate \
        --na btl --sizes 8 --window 16 --iterations 5000 --warmup 500 --mca btl self,sm
else
    echo "== mcarun -np 1 opal_perf latency --mca btl self (btl/sm is not built)"
    _build/orte/tools/mcarun/mcarun -np 1 --timeout 120 $perf --mca btl self
fi
echo "== done: build tree in _build; run contrib/check.sh for the tests"
echo "== mcarun, opal_info and opal_perf run from the build tree as they are; to have them on PATH:"
echo "export PATH=\"$top/_build/orte/tools/mcarun:$top/_build/tools/opal_info:$top/_build/tools/opal_perf:\$PATH\""
