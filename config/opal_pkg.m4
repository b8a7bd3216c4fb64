# OPAL_CHECK_PKG(name, pkg-config module, library, header, function, enables)
#
# Adds --with-<name>[=DIR|yes|no]. The dependency is looked up with
# pkg-config (under DIR first when one is given), then by header and
# library. Not found is fine unless the user asked for it; either way the
# summary says what was found, or why not, and what it enables. Defines
# OPAL_HAVE_<NAME> (0/1), the automake conditional of the same name, and
# substitutes <NAME>_CFLAGS, <NAME>_LIBS and <NAME>_VERSION. The answer
# stays in the shell variable opal_have_<name> (yes/no) for later checks
# (a component's configure.m4).
AC_DEFUN([OPAL_CHECK_PKG], [
    m4_pushdef([NAME], m4_toupper([$1]))
    AC_ARG_WITH([$1],
        [AS_HELP_STRING([--with-$1@<:@=DIR|no@:>@],
            [use $2 (from DIR, or from pkg-config); needed for $6])],
        [], [with_$1=auto])
    opal_pkg_have=no
    opal_pkg_why=
    NAME[]_CFLAGS=
    NAME[]_LIBS=
    NAME[]_VERSION=
    AS_CASE(["$with_$1"],
    [no], [opal_pkg_why="disabled by --without-$1"],
    [
        opal_pkg_save_PCP=$PKG_CONFIG_PATH
        AS_CASE(["$with_$1"], [auto|yes], [], [
            PKG_CONFIG_PATH="$with_$1/lib/pkgconfig:$with_$1/lib64/pkgconfig:$with_$1/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
            export PKG_CONFIG_PATH])
        AC_MSG_CHECKING([for $2 with pkg-config])
        AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists "$2" 2>/dev/null], [
            NAME[]_CFLAGS=`$PKG_CONFIG --cflags "$2"`
            NAME[]_LIBS=`$PKG_CONFIG --libs "$2"`
            NAME[]_VERSION=`$PKG_CONFIG --modversion "$2"`
            AC_MSG_RESULT([$NAME[]_VERSION])
        ], [
            AC_MSG_RESULT([no])
            AS_CASE(["$with_$1"], [auto|yes], [], [
                NAME[]_CFLAGS="-I$with_$1/include"
                NAME[]_LIBS="-L$with_$1/lib -l$3"])
            NAME[]_LIBS="${NAME[]_LIBS:--l$3}"
            NAME[]_VERSION="unknown version"
        ])
        PKG_CONFIG_PATH=$opal_pkg_save_PCP
        opal_pkg_save_CPPFLAGS=$CPPFLAGS
        opal_pkg_save_LIBS=$LIBS
        CPPFLAGS="$CPPFLAGS $NAME[]_CFLAGS"
        LIBS="$NAME[]_LIBS $LIBS"
        AC_MSG_CHECKING([whether $4 and $5 from $2 are usable])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <$4>]], [[(void) &$5;]])],
            [opal_pkg_have=yes; AC_MSG_RESULT([yes])],
            [opal_pkg_why="$2 not found (no usable $4 / -l$3)"; AC_MSG_RESULT([no])])
        CPPFLAGS=$opal_pkg_save_CPPFLAGS
        LIBS=$opal_pkg_save_LIBS
        AS_IF([test $opal_pkg_have = no && test "x$with_$1" != xauto],
              [AC_MSG_ERROR([--with-$1=$with_$1 was given but $opal_pkg_why])])
    ])
    AS_IF([test $opal_pkg_have = yes], [
        AC_DEFINE([OPAL_HAVE_]NAME, [1], [Define to 1 if $2 is usable])
        OPAL_SUMMARY_ADD([$2], [yes], [$NAME[]_VERSION: $6])
    ], [
        NAME[]_CFLAGS=
        NAME[]_LIBS=
        AC_DEFINE([OPAL_HAVE_]NAME, [0], [Define to 1 if $2 is usable])
        OPAL_SUMMARY_ADD([$2], [no], [$opal_pkg_why; not built: $6])
    ])
    opal_have_$1=$opal_pkg_have
    AM_CONDITIONAL([OPAL_HAVE_]NAME, [test $opal_pkg_have = yes])
    AC_SUBST(NAME[_CFLAGS])
    AC_SUBST(NAME[_LIBS])
    AC_SUBST(NAME[_VERSION])
    m4_popdef([NAME])
])
