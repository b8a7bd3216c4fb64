# OPAL_CHECK_SYMBOLS: how libopal, liborte and the plugins export their
# symbols so that they live in one process with Open MPI's libopen-pal
# (docs/developer.md, "Exported symbols").
#
# OPAL_SYMBOL_PREFIX (opalmca_) goes in front of every exported name:
# config/opal_rename.sh writes opal/opal_rename.h at build time from the
# OPAL_DECLSPEC and OBJ_CLASS_DECLARATION declarations, and
# opal/opal_config.h includes it. OPAL_LIB_LDFLAGS links each library and
# plugin with
#   - a version script (config/opal_symbols.map) that puts the prefixed
#     names in the version node OPALMCA_<major>, and
#   - -Bsymbolic-functions, so that calls inside a library bind to the
#     library itself, whatever else the process loaded first.
AC_DEFUN([OPAL_CHECK_SYMBOLS], [
    OPAL_SYMBOL_PREFIX=opalmca_
    AC_SUBST([OPAL_SYMBOL_PREFIX])
    OPAL_SYMBOL_VERSION="OPALMCA_`echo $PACKAGE_VERSION | cut -d. -f1`"
    AC_SUBST([OPAL_SYMBOL_VERSION])
    OPAL_LIB_LDFLAGS=
    opal_sym_summary=
    opal_sym_save_LDFLAGS=$LDFLAGS
    cat >conftest.map <<OPAL_EOF
$OPAL_SYMBOL_VERSION { global: ${OPAL_SYMBOL_PREFIX}*; };
OPAL_EOF
    for opal_sym_flag in "-Wl,--version-script=conftest.map" -Wl,-Bsymbolic-functions; do
        AC_MSG_CHECKING([whether the linker accepts $opal_sym_flag])
        LDFLAGS="$opal_sym_save_LDFLAGS -shared -fPIC $opal_sym_flag"
        AC_LINK_IFELSE([AC_LANG_PROGRAM([int ${OPAL_SYMBOL_PREFIX}conftest_fn(void);
                                         int ${OPAL_SYMBOL_PREFIX}conftest_fn(void) { return 0; }],
                                        [])],
            [AC_MSG_RESULT([yes])
             AS_CASE([$opal_sym_flag],
                 [*version-script*],
                 [OPAL_LIB_LDFLAGS="$OPAL_LIB_LDFLAGS -Wl,--version-script=\$(abs_top_builddir)/config/opal_symbols.map"
                  opal_sym_summary="$opal_sym_summary version $OPAL_SYMBOL_VERSION"],
                 [OPAL_LIB_LDFLAGS="$OPAL_LIB_LDFLAGS $opal_sym_flag"
                  opal_sym_summary="$opal_sym_summary -Bsymbolic-functions"])],
            [AC_MSG_RESULT([no])
             opal_sym_summary="$opal_sym_summary (no $opal_sym_flag)"])
    done
    LDFLAGS=$opal_sym_save_LDFLAGS
    rm -f conftest.map
    AC_SUBST([OPAL_LIB_LDFLAGS])
    AC_CONFIG_FILES([config/opal_symbols.map])
    OPAL_SUMMARY_ADD([exported names], [yes], [prefix $OPAL_SYMBOL_PREFIX;$opal_sym_summary])
])
