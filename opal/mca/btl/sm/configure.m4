# MCA_opal_btl_sm_CONFIG([action-if-can], [action-if-cannot])
# btl/sm needs POSIX shared memory and mmap, CMA (process_vm_readv) and
# eventfd: Linux. shm_open lives in librt before glibc 2.34.
AC_DEFUN([MCA_opal_btl_sm_CONFIG], [
    opal_btl_sm_happy=yes
    AC_CHECK_HEADERS([sys/mman.h sys/eventfd.h sys/uio.h sys/prctl.h], [],
                     [opal_btl_sm_happy=no])
    AC_CHECK_FUNCS([process_vm_readv process_vm_writev], [], [opal_btl_sm_happy=no])
    # Optional: under valgrind sm skips the pidfd system calls it does not
    # know (btl_sm_endpoint.c).
    AC_CHECK_HEADERS([valgrind/valgrind.h])
    OPAL_BTL_SM_LIBS=
    opal_btl_sm_save_LIBS=$LIBS
    AC_SEARCH_LIBS([shm_open], [rt], [test "x$ac_cv_search_shm_open" = "xnone required" ||
                                      OPAL_BTL_SM_LIBS=$ac_cv_search_shm_open],
                   [opal_btl_sm_happy=no])
    LIBS=$opal_btl_sm_save_LIBS
    AC_SUBST([OPAL_BTL_SM_LIBS])
    AS_IF([test "x$opal_btl_sm_happy" = xyes], [$1],
          [opal_mca_why="needs Linux shared memory, CMA and eventfd (shm_open, process_vm_readv, sys/eventfd.h)"
           $2])
])
