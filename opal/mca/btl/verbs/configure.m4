# MCA_opal_btl_verbs_CONFIG([action-if-can], [action-if-cannot])
# btl/verbs needs libibverbs (configure.ac probes it with OPAL_CHECK_PKG,
# which leaves the answer in opal_have_verbs).
AC_DEFUN([MCA_opal_btl_verbs_CONFIG], [
    AS_IF([test "x$opal_have_verbs" = xyes], [$1],
          [opal_mca_why="libibverbs not found (install libibverbs-dev, or give --with-verbs=DIR)"
           $2])
])
