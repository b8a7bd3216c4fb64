#!/bin/sh
# Fails when a shared object exports a symbol outside opal-mca's prefix.
#
#   opal_check_exports.sh PREFIX VERSION-NODE FILE...
#
# Every symbol libopal, liborte and the plugins export must start with
# PREFIX (docs/developer.md, "Exported symbols"); the version node itself
# is an absolute symbol of that name and is allowed, and so are the
# __odr_asan.* markers AddressSanitizer adds next to each global. Prints the offending
# names per file and exits 1, or says how many names were checked.
set -e
if [ $# -lt 3 ]; then
    echo "usage: $0 PREFIX VERSION-NODE FILE..." >&2
    exit 2
fi
prefix=$1
node=$2
shift 2
status=0
total=0
for f in "$@"; do
    case "$f" in *"*"*) continue ;; esac  # a glob that matched nothing
    if [ ! -f "$f" ]; then
        echo "check-exports: $f: no such file" >&2
        status=1
        continue
    fi
    names=$(nm -D --defined-only "$f" | awk '{ print $NF }' | sed 's/@.*//')
    bad=$(printf '%s\n' "$names" | grep -v -e "^$prefix" -e "^$node\$" -e '^__odr_asan[._]' -e '^$' || true)
    count=$(printf '%s\n' "$names" | grep -c . || true)
    total=$((total + count))
    unversioned=$(nm -D --defined-only --with-symbol-versions "$f" 2>/dev/null \
        | awk -v p="$prefix" -v n="$node" '$NF ~ "^" p && $NF !~ "@@?" n "$" { print $NF }' || true)
    if [ -n "$bad" ]; then
        echo "check-exports: $f exports names without the prefix $prefix:" >&2
        printf '%s\n' "$bad" | sed 's/^/    /' >&2
        echo "  declare them OPAL_DECLSPEC in a header (opal/opal_rename.h renames them)" >&2
        status=1
    fi
    if [ -n "$unversioned" ]; then
        echo "check-exports: $f exports names outside the version node $node:" >&2
        printf '%s\n' "$unversioned" | sed 's/^/    /' >&2
        status=1
    fi
done
if [ $status -eq 0 ]; then
    echo "check-exports: $# files, $total exported names, all $prefix* in $node"
fi
exit $status
