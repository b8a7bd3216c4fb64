# MCA_orte_ess_pmix_CONFIG([action-if-can], [action-if-cannot])
# ess/pmix needs libpmix (configure.ac probes it with OPAL_CHECK_PKG, which
# leaves the answer in opal_have_pmix).
AC_DEFUN([MCA_orte_ess_pmix_CONFIG], [
    AS_IF([test "x$opal_have_pmix" = xyes], [$1],
          [opal_mca_why="libpmix not found (install libpmix-dev, or give --with-pmix=DIR)"
           $2])
])
