# OPAL_CHECK_TIMELINE: --enable-timeline compiles in the timeline marks
# (OPAL_TIMELINE(mark), opal/util/opal_timeline.h) that record when a
# message passes each layer; absent by default, where they cost nothing.
AC_DEFUN([OPAL_CHECK_TIMELINE], [
    AC_ARG_ENABLE([timeline],
        [AS_HELP_STRING([--enable-timeline],
            [compile in the timeline marks written to opal_timeline_file (default: no)])],
        [], [enable_timeline=no])
    AS_IF([test "x$enable_timeline" = xyes],
          [AC_DEFINE([OPAL_ENABLE_TIMELINE], [1], [Define to 1 to compile in the timeline marks])
           OPAL_SUMMARY_ADD([timeline], [yes], [marks written to opal_timeline_file])],
          [AC_DEFINE([OPAL_ENABLE_TIMELINE], [0], [Define to 1 to compile in the timeline marks])
           OPAL_SUMMARY_ADD([timeline], [no], [enable with --enable-timeline])])
])
