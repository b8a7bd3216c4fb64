# OPAL_CHECK_FAULT_INJECTION: --enable-fault-injection compiles the fault
# sites in (OPAL_FAULT(site), opal/util/opal_fault.h); on by default in
# --enable-debug builds, absent from the others.
AC_DEFUN([OPAL_CHECK_FAULT_INJECTION], [
    AC_ARG_ENABLE([fault-injection],
        [AS_HELP_STRING([--enable-fault-injection],
            [compile in the fault sites configured by opal_fault_config (default: with --enable-debug)])],
        [], [enable_fault_injection=$enable_debug])
    AS_IF([test "x$enable_fault_injection" = xyes],
          [AC_DEFINE([OPAL_ENABLE_FAULT_INJECTION], [1], [Define to 1 to compile in the fault sites])
           OPAL_SUMMARY_ADD([fault injection], [yes], [sites configured by opal_fault_config])],
          [AC_DEFINE([OPAL_ENABLE_FAULT_INJECTION], [0], [Define to 1 to compile in the fault sites])
           OPAL_SUMMARY_ADD([fault injection], [no], [enable with --enable-fault-injection or --enable-debug])])
])
