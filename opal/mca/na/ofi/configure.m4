# MCA_opal_na_ofi_CONFIG([action-if-can], [action-if-cannot])
# na/ofi needs libfabric (configure.ac probes it with OPAL_CHECK_PKG, which
# leaves the answer in opal_have_ofi); it links common/ofi, built under the
# same condition.
AC_DEFUN([MCA_opal_na_ofi_CONFIG], [
    AS_IF([test "x$opal_have_ofi" = xyes], [$1],
          [opal_mca_why="libfabric not found (install libfabric-dev, or give --with-ofi=DIR)"
           $2])
])
