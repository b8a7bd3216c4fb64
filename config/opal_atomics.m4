# OPAL_CHECK_ATOMICS: C11 stdatomic is required; a 128-bit compare-and-swap
# is used when the CPU and compiler have one that is lock-free (x86_64
# cmpxchg16b, aarch64 casp / ldxp-stxp). Without it the lock-free LIFO and
# FIFO use their locked fallback.
AC_DEFUN([OPAL_CHECK_ATOMICS], [
    AC_CHECK_HEADER([stdatomic.h], [],
        [AC_MSG_ERROR([opal-mca needs C11 <stdatomic.h>])])

    AC_ARG_ENABLE([cas128],
        [AS_HELP_STRING([--disable-cas128],
            [do not use a 128-bit compare-and-swap even where the CPU has one (tests the fallback)])],
        [], [enable_cas128=yes])

    OPAL_HAVE_ATOMIC_CAS_128=0
    opal_cas128_how="none"
    AS_IF([test "x$enable_cas128" != xno], [
        AS_CASE([$host_cpu],
        [x86_64], [
            AC_CACHE_CHECK([whether this x86_64 CPU has cmpxchg16b], [opal_cv_cmpxchg16b], [
                AC_RUN_IFELSE([AC_LANG_PROGRAM([[#include <cpuid.h>]], [[
                    unsigned a, b, c, d;
                    if (!__get_cpuid(1, &a, &b, &c, &d)) return 1;
                    return (c & bit_CMPXCHG16B) ? 0 : 1;]])],
                    [opal_cv_cmpxchg16b=yes], [opal_cv_cmpxchg16b=no],
                    [opal_cv_cmpxchg16b=yes])])
            AS_IF([test $opal_cv_cmpxchg16b = yes],
                  [OPAL_HAVE_ATOMIC_CAS_128=1; opal_cas128_how="cmpxchg16b"])
        ],
        [aarch64], [
            AC_CACHE_CHECK([whether __atomic on __int128 is inline], [opal_cv_atomic128_inline], [
                AC_LINK_IFELSE([AC_LANG_PROGRAM([], [[
                    static unsigned __int128 v; unsigned __int128 e = 0;
                    return !__atomic_compare_exchange_n(&v, &e, (unsigned __int128) 1, 0,
                                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);]])],
                    [opal_cv_atomic128_inline=yes], [opal_cv_atomic128_inline=no])])
            AS_IF([test $opal_cv_atomic128_inline = yes],
                  [OPAL_HAVE_ATOMIC_CAS_128=1; opal_cas128_how="__atomic (inline)"])
        ])
    ], [opal_cas128_how="disabled by --disable-cas128"])
    AC_SUBST([OPAL_HAVE_ATOMIC_CAS_128])
    AS_IF([test $OPAL_HAVE_ATOMIC_CAS_128 = 1],
          [OPAL_SUMMARY_ADD([128-bit compare-and-swap], [yes], [$opal_cas128_how])],
          [OPAL_SUMMARY_ADD([128-bit compare-and-swap], [no], [$opal_cas128_how: lifo/fifo use the locked fallback])])
])
