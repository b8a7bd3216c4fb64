# OPAL_CHECK_SYSTEM: the operating-system interfaces the runtime uses.
AC_DEFUN([OPAL_CHECK_SYSTEM], [
    AX_PTHREAD_LITE
    AC_CHECK_HEADERS([sys/epoll.h sys/eventfd.h], [],
        [AC_MSG_ERROR([opal-mca needs Linux epoll and eventfd (header $ac_header)])])
    AC_CHECK_FUNCS([clock_gettime pthread_setname_np])
    AC_SEARCH_LIBS([clock_gettime], [rt])
    # Memcheck's client requests (Debian's valgrind package ships them):
    # where a device writes into memory behind valgrind's back (btl/verbs'
    # receives and RDMA reads), the bytes are marked defined. Without the
    # header the marks compile to nothing.
    AC_CHECK_HEADERS([valgrind/memcheck.h])
])

# AX_PTHREAD_LITE: -pthread works with both gcc and clang on the systems
# opal-mca supports (Linux); fail early where it does not.
AC_DEFUN([AX_PTHREAD_LITE], [
    opal_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -pthread"
    AC_MSG_CHECKING([whether $CC -pthread links])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>]],
                                    [[pthread_t t; return pthread_create(&t, 0, 0, 0);]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no]); AC_MSG_ERROR([$CC cannot link POSIX threads with -pthread])])
    CFLAGS=$opal_save_CFLAGS
    PTHREAD_CFLAGS=-pthread
    PTHREAD_LIBS=-pthread
    AC_SUBST([PTHREAD_CFLAGS])
    AC_SUBST([PTHREAD_LIBS])
])
