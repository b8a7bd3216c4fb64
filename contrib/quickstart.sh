#!/usr/bin/env bash
# Installs what is missing, builds opal-mca in _build, and runs the main
# job: today the configure summary, the examples and opal_info; the
# launcher joins as it lands.
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

for ex in _build/examples/*; do
    [ -x "$ex" ] && [ -f "$ex" ] || continue
    echo "== $ex"
    "$ex"
done

# What the build holds, and what a program would select here (from the
# build tree: the installed opal_info shows the installed plugins).
echo "== opal_info"
_build/opal/tools/opal_info/opal_info
echo "== opal_info --selected"
_build/opal/tools/opal_info/opal_info --selected
echo "== done: build tree in _build; run contrib/check.sh for the tests"
