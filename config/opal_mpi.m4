# OPAL_CHECK_MPI: Open MPI's compiler wrapper, for the tests that run an
# MPI program linked with libopal too (test/coexist, docs/developer.md
# "Exported symbols"). Optional: without mpicc and mpi.h those tests skip.
# OPAL_MPICC names the wrapper (default: mpicc in PATH); MPI_CFLAGS and
# MPI_LIBS come from its --showme (Open MPI's wrappers; others are not
# the point of these tests).
AC_DEFUN([OPAL_CHECK_MPI], [
    AC_ARG_VAR([OPAL_MPICC], [Open MPI's C compiler wrapper for the coexistence tests (default: mpicc)])
    AC_PATH_PROG([OPAL_MPICC], [mpicc], [])
    opal_have_mpi=no
    opal_mpi_why="no mpicc in PATH (install libopenmpi-dev)"
    AS_IF([test -n "$OPAL_MPICC"], [
        MPI_CFLAGS=`$OPAL_MPICC --showme:compile 2>/dev/null`
        MPI_LIBS=`$OPAL_MPICC --showme:link 2>/dev/null`
        AS_IF([test -z "$MPI_LIBS"], [opal_mpi_why="$OPAL_MPICC is not Open MPI's wrapper (no --showme)"], [
            opal_mpi_save_CFLAGS=$CFLAGS
            opal_mpi_save_LIBS=$LIBS
            CFLAGS="$CFLAGS $MPI_CFLAGS"
            LIBS="$MPI_LIBS $LIBS"
            AC_MSG_CHECKING([whether an MPI program links with $MPI_LIBS])
            AC_LINK_IFELSE([AC_LANG_PROGRAM([#include <mpi.h>], [return MPI_Init(0, 0);])],
                [AC_MSG_RESULT([yes]); opal_have_mpi=yes],
                [AC_MSG_RESULT([no]); opal_mpi_why="mpi.h or libmpi unusable (install libopenmpi-dev)"])
            CFLAGS=$opal_mpi_save_CFLAGS
            LIBS=$opal_mpi_save_LIBS])
    ])
    AS_IF([test $opal_have_mpi = yes],
          [OPAL_SUMMARY_ADD([MPI coexistence tests], [yes], [$OPAL_MPICC])],
          [MPI_CFLAGS= MPI_LIBS=
           OPAL_SUMMARY_ADD([MPI coexistence tests], [no], [$opal_mpi_why])])
    AC_SUBST([MPI_CFLAGS])
    AC_SUBST([MPI_LIBS])
    AM_CONDITIONAL([OPAL_HAVE_MPI], [test $opal_have_mpi = yes])
    AS_IF([test $opal_have_mpi = yes],
          [AC_DEFINE([OPAL_HAVE_MPI], [1], [Define to 1 when Open MPI's mpicc and mpi.h are usable by the tests])],
          [AC_DEFINE([OPAL_HAVE_MPI], [0], [Define to 1 when Open MPI's mpicc and mpi.h are usable by the tests])])
])
