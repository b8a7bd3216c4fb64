#!/bin/sh
# The build tree's LIBTOOL (Makefile.am): links the programs made with
# -no-install (the test programs, which run where they are built) without
# libtool, and hands every other call to libtool unchanged.
#
# libtool spends about 0.8 s of shell on each link (its script is parsed,
# then some thirty sed runs) against 0.1 s for the compiler's own link;
# with some 170 test programs in each build tree that is a minute or more
# of every make check on two cores.
#
# Usage: opal_fast_link.sh SHELL LIBTOOL ARGS...
# ARGS are libtool's: --tag=..., --silent, --mode=link, then the compiler
# command. Each NAME.la of the command becomes what libtool would link for
# an uninstalled library: DIR/.libs/libNAME.so and a run path to DIR/.libs
# (shared), or DIR/.libs/libNAME.a and its dependency_libs (convenience),
# read from the .la file. Anything unexpected (an installed .la, a
# library with neither file, an option of libtool's own) goes to libtool.

sh_=$1
libtool_=$2
shift 2

to_libtool() {
    exec "$sh_" "$libtool_" "$@"
}

case " $* " in
    *" --mode=link "*" -no-install "*) ;;
    *) to_libtool "$@" ;;
esac

silent=no
cmd=
rpaths=
seen=
# add WORD: appends one word, quoted for eval, to the command.
add() {
    case "$1" in
        *"'"*) cmd="$cmd '$(printf '%s' "$1" | sed "s/'/'\\\\''/g")'" ;;
        *) cmd="$cmd '$1'" ;;
    esac
}

# expand_la FILE [dep]: adds the link words of one libtool library (with
# dep, one that a shared library depends on: only its run path, as
# libtool does); fails on anything the fast path does not handle.
expand_la() {
    la=$1
    dep=${2:-}
    if [ -z "$dep" ]; then
        case " $seen " in *" $la "*) return 0 ;; esac
        seen="$seen $la"
    fi
    [ -f "$la" ] || return 1
    dir=$(dirname "$la")
    dlname= library_names= old_library= dependency_libs= inherited_linker_flags= installed=
    # A .la file is a list of shell assignments ('.' needs a slash to not
    # search PATH).
    case "$la" in
        */*) . "$la" ;;
        *) . "./$la" ;;
    esac
    [ "$installed" = no ] || return 1
    for f in $inherited_linker_flags; do add "$f"; done
    if [ -n "$dlname" ]; then
        link_name=
        for n in $library_names; do link_name=$n; done
        [ -n "$link_name" ] && [ -f "$dir/.libs/$link_name" ] || return 1
        [ -n "$dep" ] || add "$dir/.libs/$link_name"
        abs=$(cd "$dir/.libs" && pwd) || return 1
        case " $rpaths " in *" $abs "*) ;; *) rpaths="$rpaths $abs" ;; esac
        # A shared library's own dependencies load through it; the libtool
        # libraries among them add their run path.
        for d in $dependency_libs; do
            case "$d" in *.la) expand_la "$d" dep || return 1 ;; esac
        done
    elif [ -n "$old_library" ]; then
        [ -f "$dir/.libs/$old_library" ] || return 1
        add "$dir/.libs/$old_library"
        for d in $dependency_libs; do
            case "$d" in
                *.la) expand_la "$d" || return 1 ;;
                -R*) return 1 ;;
                *) add "$d" ;;
            esac
        done
    else
        return 1
    fi
}

fast=yes
for arg in "$@"; do
    case "$arg" in
        --tag=* | --mode=link) ;;
        --silent | --quiet) silent=yes ;;
        --*) fast=no ;;
        -no-install) ;;
        # libtool's own link options: libtool handles those links.
        -rpath | -R* | -module | -avoid-version | -static | -all-static | -shared | \
            -export-* | -version-* | -release | -dlopen | -dlpreopen | -no-undefined | \
            -shrext | -weak | -objectlist | -precious-files-regex | -bindir | -Wc,* | \
            -Xcompiler | -XCClinker | -Xlinker | -static-libtool-libs | -no-fast-install)
            fast=no
            ;;
        *.la) expand_la "$arg" || fast=no ;;
        *) add "$arg" ;;
    esac
    [ $fast = yes ] || break
done
[ $fast = yes ] || to_libtool "$@"
for r in $rpaths; do
    add "-Wl,-rpath"
    add "-Wl,$r"
done
[ $silent = yes ] || eval "echo libtool: link: $cmd"
eval "exec $cmd"
