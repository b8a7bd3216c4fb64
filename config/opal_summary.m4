# OPAL_SUMMARY_ADD(item, yes|no, detail)
# Records one row of the table configure prints when it ends. The detail
# says what a "yes" found (a version) or why a "no" is not built.
AC_DEFUN([OPAL_SUMMARY_ADD], [
    opal_summary_rows="${opal_summary_rows}$1|$2|$3
"
])

# OPAL_SUMMARY_PRINT: prints the recorded rows as a table.
AC_DEFUN([OPAL_SUMMARY_PRINT], [
    echo ""
    echo "opal-mca $PACKAGE_VERSION configuration summary"
    echo "-----------------------------------------------------------------------"
    printf '%s' "$opal_summary_rows" | while IFS='|' read -r item state detail; do
        test -n "$item" || continue
        printf '  %-28s %-4s %s\n' "$item" "$state" "$detail"
    done
    echo "-----------------------------------------------------------------------"
    echo "  prefix:   $prefix"
    echo "  compiler: $CC $CFLAGS"
    echo ""
])
