#!/bin/sh
# Writes the headers that give every symbol opal-mca exports a prefix, so
# that libopal, liborte and the plugins can live in one process with Open
# MPI's libopen-pal, which exports many of the same names (opal_progress,
# mca_base_var_register, opal_list_t_class, ...). See docs/developer.md,
# "Exported symbols".
#
#   opal_rename.sh SRCDIR PREFIX OUTDIR [INSTALLED-HEADER...]
#
# Scans every .h and .c under SRCDIR/opal, SRCDIR/orte and SRCDIR/test for
# exported declarations -- a statement holding OPAL_DECLSPEC, or
# OBJ_CLASS_DECLARATION(T) (which exports T_class) -- and writes
#
#   OUTDIR/opal/opal_rename.h           #define NAME PREFIXNAME for the
#                                       names declared in installed headers
#                                       (the INSTALLED-HEADER paths, relative
#                                       to SRCDIR); installed, included by
#                                       opal/opal_config.h
#   OUTDIR/opal/opal_rename_internal.h  the same for every other name (plugin
#                                       component symbols, internal calls
#                                       between libopal, liborte and tests);
#                                       included only inside the build
#
# Each file is replaced only when its contents change, so running this on
# every make rebuilds nothing needlessly. A name that is also a macro
# somewhere is left alone (renaming it would redefine the macro); make
# installcheck then reports it if it is exported.
set -e
if [ $# -lt 3 ]; then
    echo "usage: $0 SRCDIR PREFIX OUTDIR [INSTALLED-HEADER...]" >&2
    exit 2
fi
srcdir=$1
prefix=$2
outdir=$3
shift 3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/opal_rename.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for h in "$@"; do
    echo "$h"
done >"$tmp/installed"

# The files, relative to srcdir, in a stable order.
(cd "$srcdir" && find opal orte test -name '*.[ch]' -type f 2>/dev/null | LC_ALL=C sort) \
    >"$tmp/files"

# Prints "public NAME" or "internal NAME" for every exported name, and
# "macro NAME" for every name a #define defines.
(cd "$srcdir" && xargs awk -v installed="$tmp/installed" '
function flush_file(    n, i, stmts, s, name) {
    if (buf == "") {
        return
    }
    n = split(buf, stmts, /[;{}]/)
    for (i = 1; i <= n; ++i) {
        s = stmts[i]
        if (s !~ /OPAL_DECLSPEC|OBJ_CLASS_DECLARATION[ \t]*\(/) {
            continue
        }
        name = declared_name(s)
        if (name != "") {
            print (cur_file in public_file ? "public " : "internal ") name
        }
    }
    buf = ""
}

# Drops __attribute__((...)) and UPPER_CASE(...) annotations such as
# OPAL_PRINTF_LIKE(2, 3): balanced parentheses, one level of nesting.
function drop_annotations(s,    p, depth, j, c) {
    while (match(s, /(__attribute__|[A-Z][A-Z0-9_]*)[ \t]*\(/)) {
        p = RSTART
        depth = 0
        for (j = RSTART + RLENGTH - 1; j <= length(s); ++j) {
            c = substr(s, j, 1)
            if (c == "(") {
                ++depth
            } else if (c == ")" && --depth == 0) {
                break
            }
        }
        s = substr(s, 1, p - 1) " " substr(s, j + 1)
    }
    return s
}

function declared_name(s,    m, head) {
    if (match(s, /OBJ_CLASS_DECLARATION[ \t]*\([ \t]*[A-Za-z_][A-Za-z0-9_]*/)) {
        m = substr(s, RSTART, RLENGTH)
        sub(/.*\([ \t]*/, "", m)
        return m "_class"
    }
    if (s ~ /(^|[^A-Za-z0-9_])typedef([^A-Za-z0-9_]|$)/) {
        return ""
    }
    s = drop_annotations(s)
    if (index(s, "(") > 0) {
        head = substr(s, 1, index(s, "(") - 1)
        sub(/[ \t]+$/, "", head)
        if (match(head, /[A-Za-z_][A-Za-z0-9_]*$/)) {
            return substr(head, RSTART, RLENGTH)
        }
        # A pointer to a function: void (*name)(...).
        if (match(s, /\([ \t]*\*[ \t]*[A-Za-z_][A-Za-z0-9_]*/)) {
            m = substr(s, RSTART, RLENGTH)
            sub(/^\([ \t]*\*[ \t]*/, "", m)
            return m
        }
        return ""
    }
    sub(/=.*/, "", s)
    sub(/\[.*/, "", s)
    sub(/[ \t]+$/, "", s)
    if (match(s, /[A-Za-z_][A-Za-z0-9_]*$/)) {
        m = substr(s, RSTART, RLENGTH)
        if (m != "OPAL_DECLSPEC") {
            return m
        }
    }
    return ""
}

# Removes comments, keeping the state of a block comment across lines.
function strip_comments(s,    out, p, q) {
    out = ""
    while (s != "") {
        if (in_comment) {
            p = index(s, "*/")
            if (p == 0) {
                return out
            }
            s = substr(s, p + 2)
            in_comment = 0
            continue
        }
        p = index(s, "/*")
        q = index(s, "//")
        if (q > 0 && (p == 0 || q < p)) {
            return out substr(s, 1, q - 1)
        }
        if (p == 0) {
            return out s
        }
        out = out substr(s, 1, p - 1) " "
        s = substr(s, p + 2)
        in_comment = 1
    }
    return out
}

BEGIN {
    while ((getline h < installed) > 0) {
        public_file[h] = 1
    }
}
FNR == 1 {
    flush_file()
    cur_file = FILENAME
    in_comment = 0
    in_define = 0
}
{
    line = strip_comments($0)
    if (in_define) {
        in_define = (line ~ /\\[ \t]*$/)
        next
    }
    if (line ~ /^[ \t]*#/) {
        if (match(line, /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) {
            m = substr(line, RSTART, RLENGTH)
            sub(/.*define[ \t]+/, "", m)
            print "macro " m
        }
        in_define = (line ~ /\\[ \t]*$/)
        next
    }
    buf = buf " " line
}
END {
    flush_file()
}
' <"$tmp/files") >"$tmp/names"

awk '$1 == "macro" { print $2 }' "$tmp/names" | LC_ALL=C sort -u >"$tmp/macros"
awk '$1 == "public" { print $2 }' "$tmp/names" | LC_ALL=C sort -u >"$tmp/public.all"
awk '$1 == "internal" { print $2 }' "$tmp/names" | LC_ALL=C sort -u >"$tmp/internal.all"
LC_ALL=C comm -23 "$tmp/public.all" "$tmp/macros" >"$tmp/public"
LC_ALL=C comm -23 "$tmp/internal.all" "$tmp/macros" | LC_ALL=C comm -23 - "$tmp/public" \
    >"$tmp/internal"

# write_header FILE GUARD WHAT NAMES
write_header() {
    {
        echo "/* Generated by config/opal_rename.sh at build time: do not edit."
        echo " * $3"
        echo " * Every exported symbol carries the prefix $prefix so that opal-mca lives"
        echo " * in one process with Open MPI's libopen-pal (docs/developer.md). */"
        echo "#ifndef $2"
        echo "#define $2"
        awk -v p="$prefix" '{ print "#define " $1 " " p $1 }' "$4"
        echo "#endif"
    } >"$tmp/out"
    mkdir -p "$(dirname "$1")"
    if cmp -s "$tmp/out" "$1"; then
        :
    else
        cp "$tmp/out" "$1"
    fi
}

write_header "$outdir/opal/opal_rename.h" OPAL_OPAL_RENAME_H \
    "The names the installed headers declare." "$tmp/public"
write_header "$outdir/opal/opal_rename_internal.h" OPAL_OPAL_RENAME_INTERNAL_H \
    "The names only the build tree declares (plugins, internal calls, tests)." "$tmp/internal"
