# OPAL_CONFIGURE_OPTIONS: --enable-debug, --enable-picky, --enable-sanitizers.

# _OPAL_TSAN_CAS128_FLAGS: ThreadSanitizer cannot see into the cmpxchg16b
# asm, so under it opal_atomic.h uses the 128-bit __atomic builtin. gcc
# turns that into an instrumented TSan call; clang calls libatomic (which
# TSan cannot see, and which is not linked) unless -mcx16 lets it inline
# cmpxchg16b, which TSan instruments. -latomic is the last resort.
m4_define([_OPAL_TSAN_CAS128_PROGRAM], [AC_LANG_PROGRAM([], [[
    static unsigned __int128 v;
    unsigned __int128 e = 0;
    return !__atomic_compare_exchange_n(&v, &e, (unsigned __int128) 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);]])])
AC_DEFUN([_OPAL_TSAN_CAS128_FLAGS], [
    AC_MSG_CHECKING([what a 128-bit compare-and-swap needs under ThreadSanitizer])
    opal_tsan_save_CFLAGS=$CFLAGS
    opal_tsan_save_LIBS=$LIBS
    opal_tsan_cas128=none
    AC_LINK_IFELSE([_OPAL_TSAN_CAS128_PROGRAM], [opal_tsan_cas128=nothing])
    AS_IF([test $opal_tsan_cas128 = none], [
        CFLAGS="$opal_tsan_save_CFLAGS -mcx16"
        AC_LINK_IFELSE([_OPAL_TSAN_CAS128_PROGRAM], [opal_tsan_cas128=-mcx16],
                       [CFLAGS=$opal_tsan_save_CFLAGS])])
    AS_IF([test $opal_tsan_cas128 = none], [
        LIBS="$opal_tsan_save_LIBS -latomic"
        AC_LINK_IFELSE([_OPAL_TSAN_CAS128_PROGRAM], [opal_tsan_cas128=-latomic],
                       [LIBS=$opal_tsan_save_LIBS])])
    AC_MSG_RESULT([$opal_tsan_cas128])
    AS_CASE([$opal_tsan_cas128],
        [-mcx16], [OPAL_SANITIZER_CFLAGS="$OPAL_SANITIZER_CFLAGS -mcx16"],
        [none], [AC_MSG_WARN([a 128-bit compare-and-swap does not link under ThreadSanitizer; configure with --disable-cas128])])
])

AC_DEFUN([OPAL_CONFIGURE_OPTIONS], [
    AC_ARG_ENABLE([debug],
        [AS_HELP_STRING([--enable-debug],
            [debug checks in the object system and containers (magic ids, double-destruct and list-membership checks), -g -O0])],
        [], [enable_debug=no])
    AS_IF([test "x$enable_debug" = xyes],
          [OPAL_ENABLE_DEBUG=1
           CFLAGS="$CFLAGS -g -O0"
           OPAL_SUMMARY_ADD([debug checks], [yes], [--enable-debug])],
          [OPAL_ENABLE_DEBUG=0
           OPAL_SUMMARY_ADD([debug checks], [no], [enable with --enable-debug])])
    AC_SUBST([OPAL_ENABLE_DEBUG])

    AC_ARG_ENABLE([picky],
        [AS_HELP_STRING([--enable-picky], [extra warnings, all of them errors])],
        [], [enable_picky=no])

    AC_ARG_ENABLE([sanitizers],
        [AS_HELP_STRING([--enable-sanitizers=LIST],
            [build with sanitizers: address,undefined or thread])],
        [], [enable_sanitizers=no])
    OPAL_SANITIZER_CFLAGS=
    AS_CASE(["$enable_sanitizers"],
        [no|""], [],
        [yes], [enable_sanitizers=address,undefined],
        [])
    AS_IF([test "x$enable_sanitizers" != xno], [
        opal_san_thread=no
        opal_san_other=no
        for opal_san in `echo "$enable_sanitizers" | tr ',' ' '`; do
            AS_CASE(["$opal_san"],
                [thread], [opal_san_thread=yes],
                [address|undefined|leak], [opal_san_other=yes],
                [AC_MSG_ERROR([--enable-sanitizers: unknown sanitizer '$opal_san' (expected address, undefined, leak or thread)])])
        done
        AS_IF([test $opal_san_thread = yes && test $opal_san_other = yes],
              [AC_MSG_ERROR([--enable-sanitizers=$enable_sanitizers: thread cannot be combined with address, undefined or leak])])
        OPAL_SANITIZER_CFLAGS="-fsanitize=$enable_sanitizers -fno-omit-frame-pointer -g"
        AS_IF([test $opal_san_other = yes],
              [OPAL_SANITIZER_CFLAGS="$OPAL_SANITIZER_CFLAGS -fno-sanitize-recover=all"])
        opal_save_CFLAGS=$CFLAGS
        CFLAGS="$CFLAGS $OPAL_SANITIZER_CFLAGS"
        AC_MSG_CHECKING([whether $CC links with $OPAL_SANITIZER_CFLAGS])
        AC_LINK_IFELSE([AC_LANG_PROGRAM([], [return 0;])],
            [AC_MSG_RESULT([yes])],
            [AC_MSG_RESULT([no])
             AC_MSG_ERROR([$CC cannot build with -fsanitize=$enable_sanitizers])])
        LDFLAGS="$LDFLAGS -fsanitize=$enable_sanitizers"
        AS_IF([test $opal_san_thread = yes], [_OPAL_TSAN_CAS128_FLAGS])
        OPAL_SUMMARY_ADD([sanitizers], [yes], [$enable_sanitizers])
    ], [
        OPAL_SUMMARY_ADD([sanitizers], [no], [enable with --enable-sanitizers=address,undefined|thread])
    ])
])
