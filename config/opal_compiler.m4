# OPAL_CHECK_COMPILER_FLAGS: warning flags, --enable-picky, symbol
# visibility. Every flag is tried first, so gcc and clang both work.
AC_DEFUN([_OPAL_ADD_CFLAG], [
    AS_VAR_PUSHDEF([opal_cv], [opal_cv_cflag_$1])
    AC_CACHE_CHECK([whether $CC accepts $1], [opal_cv], [
        opal_save_CFLAGS=$CFLAGS
        CFLAGS="$CFLAGS -Werror $1"
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
                          [AS_VAR_SET([opal_cv], [yes])],
                          [AS_VAR_SET([opal_cv], [no])])
        CFLAGS=$opal_save_CFLAGS])
    AS_VAR_IF([opal_cv], [yes], [$2="$$2 $1"])
    AS_VAR_POPDEF([opal_cv])
])

AC_DEFUN([OPAL_CHECK_COMPILER_FLAGS], [
    OPAL_WARN_CFLAGS=
    for opal_flag in -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
                     -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith; do
        _OPAL_ADD_CFLAG([$opal_flag], [OPAL_WARN_CFLAGS])
    done
    AS_IF([test "x$enable_picky" = xyes], [
        for opal_flag in -Werror -Wshadow -Wcast-align -Wformat=2 -Wundef \
                         -Wvla; do
            _OPAL_ADD_CFLAG([$opal_flag], [OPAL_WARN_CFLAGS])
        done
        OPAL_SUMMARY_ADD([picky warnings], [yes], [warnings are errors])
    ], [
        OPAL_SUMMARY_ADD([picky warnings], [no], [enable with --enable-picky])
    ])
    AC_SUBST([OPAL_WARN_CFLAGS])

    OPAL_VISIBILITY_CFLAGS=
    _OPAL_ADD_CFLAG([-fvisibility=hidden], [OPAL_VISIBILITY_CFLAGS])
    AC_SUBST([OPAL_VISIBILITY_CFLAGS])
    AC_SUBST([OPAL_SANITIZER_CFLAGS])
])
