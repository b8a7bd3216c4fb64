#!/usr/bin/env bash
# check-man-pages.sh BINDIR MAN1DIR [LIBDIR]: every program in BINDIR has
# its manual page in MAN1DIR, the page renders with `man -l` without a
# warning, and it names every long option the program's --help lists.
# Run by make installcheck against the installed files.
set -u
bindir=$1
man1dir=$2
libdir=${3:-}
if ! command -v man >/dev/null 2>&1; then
    echo "check-man-pages: man not found: not checked" >&2
    exit 0
fi
status=0
for prog in "$bindir"/*; do
    [ -x "$prog" ] && [ -f "$prog" ] || continue
    name=$(basename "$prog")
    page=$man1dir/$name.1
    if [ ! -f "$page" ]; then
        echo "check-man-pages: $name has no manual page ($page)" >&2
        status=1
        continue
    fi
    warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    text=$(MANWIDTH=200 man -l "$page" 2>/dev/null)
    if [ -n "$warnings" ] || [ -z "$text" ]; then
        echo "check-man-pages: $page does not render cleanly: $warnings" >&2
        status=1
    fi
    options=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prog" --help 2>&1 |
        grep -o -- '--[a-z][a-z-]*' | sort -u)
    if [ -z "$options" ]; then
        echo "check-man-pages: $name --help lists no option" >&2
        status=1
    fi
    for option in $options; do
        # man renders "-" as U+2010 in some locales: compare in C.
        if ! LC_ALL=C grep -q -- "$option" <<<"$(LC_ALL=C MANWIDTH=200 man -l "$page" 2>/dev/null)"; then
            echo "check-man-pages: $page lacks $option (listed by $name --help)" >&2
            status=1
        fi
    done
done
[ $status = 0 ] && echo "check-man-pages: every program's page renders and names its options"
exit $status
