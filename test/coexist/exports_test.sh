#!/bin/sh
# Every symbol the build tree's libopal, liborte and plugins export carries
# opal-mca's prefix and version node (config/opal_symbols.map), as make
# installcheck checks after an install: a name declared without
# OPAL_DECLSPEC, or exported some other way, fails here first.
set -e
map=config/opal_symbols.map
if [ ! -f "$map" ]; then
    echo "exports_test: run from the build tree ($map is missing)" >&2
    exit 99
fi
node=$(sed -n 's/^\([A-Za-z_][A-Za-z0-9_.]*\) *{.*/\1/p' "$map")
prefix=$(sed -n 's/^ *\([A-Za-z_][A-Za-z0-9_]*\)\*;.*/\1/p' "$map")
if [ -z "$node" ] || [ -z "$prefix" ]; then
    echo "exports_test: cannot read the version node and prefix from $map" >&2
    exit 99
fi
plugins=$(find . -path '*/.libs/mca_*.so' -type f | LC_ALL=C sort)
if [ -z "$plugins" ]; then
    echo "exports_test: no plugin in the build tree (built with --disable-mca-dso?)"
fi
# shellcheck disable=SC2086
exec sh "${srcdir:-.}/config/opal_check_exports.sh" "$prefix" "$node" \
    .libs/libopal.so .libs/liborte.so $plugins
