# _OPAL_TSAN_CAS128: under ThreadSanitizer the lifo/fifo's 128-bit
# compare-and-swap is __atomic_compare_exchange_n on an __int128 (TSan
# cannot see inside the cmpxchg16b asm). gcc instruments it as is; clang
# instruments it only when 16-byte atomics are lock-free (-mcx16 on x86_64)
# and otherwise warns and calls libatomic's uninstrumented
# __atomic_compare_exchange. Find what the compiler needs, -Werror so the
# warning counts as a failure.
m4_define([_OPAL_TSAN_CAS128_PROGRAM], [AC_LANG_PROGRAM([[static unsigned __int128 v;]], [[
    unsigned __int128 e = 0;
    return !__atomic_compare_exchange_n(&v, &e, (unsigned __int128) 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);]])])
AC_DEFUN([_OPAL_TSAN_CAS128], [
    AC_MSG_CHECKING([what $CC needs for an instrumented 128-bit compare-and-swap])
    opal_tsan_cas128=no
    opal_save_tsan_CFLAGS=$CFLAGS
    for opal_flag in none -mcx16; do
        AS_IF([test $opal_flag = none],
              [CFLAGS="$opal_save_tsan_CFLAGS -Werror"],
              [CFLAGS="$opal_save_tsan_CFLAGS -Werror $opal_flag"])
        AC_LINK_IFELSE([_OPAL_TSAN_CAS128_PROGRAM],
            [opal_tsan_cas128=$opal_flag; break])
    done
    CFLAGS=$opal_save_tsan_CFLAGS
    AS_IF([test $opal_tsan_cas128 = no], [
        opal_save_tsan_LIBS=$LIBS
        LIBS="$LIBS -latomic"
        AC_LINK_IFELSE([_OPAL_TSAN_CAS128_PROGRAM],
            [opal_tsan_cas128=-latomic], [LIBS=$opal_save_tsan_LIBS])
    ])
    AS_CASE([$opal_tsan_cas128],
        [none], [AC_MSG_RESULT([nothing])],
        [-latomic], [AC_MSG_RESULT([-latomic])],
        [no], [AC_MSG_RESULT([no way found])
               AC_MSG_WARN([ThreadSanitizer may not see the 128-bit compare-and-swap; configure with --disable-cas128])],
        [AC_MSG_RESULT([$opal_tsan_cas128])
         OPAL_SANITIZER_CFLAGS="$OPAL_SANITIZER_CFLAGS $opal_tsan_cas128"
         CFLAGS="$CFLAGS $opal_tsan_cas128"])
])

# OPAL_CONFIGURE_OPTIONS: --enable-debug, --enable-picky, --enable-sanitizers.
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
        AS_IF([test $opal_san_thread = yes], [_OPAL_TSAN_CAS128])
        OPAL_SUMMARY_ADD([sanitizers], [yes], [$enable_sanitizers])
    ], [
        OPAL_SUMMARY_ADD([sanitizers], [no], [enable with --enable-sanitizers=address,undefined|thread])
    ])
])
