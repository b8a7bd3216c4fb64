# OPAL_MCA_CONFIGURE: decides, for every component autogen.sh found, whether
# it is built and whether as a plugin or into its project's library; writes
# each framework's static-components.h and each project's list of
# frameworks; adds one summary row per component.
#
# --enable-mca-dso (default) / --disable-mca-dso: plugins, or everything
#   built in.
# --enable-mca-static=fw-comp,fw,...: these built in, the rest plugins.
# --enable-mca-no-build=fw-comp,fw,...: these not built at all.
#
# A component's configure.m4 may define
#   MCA_<project>_<fw>_<comp>_CONFIG([action-if-can], [action-if-cannot])
# and set opal_mca_why to say why it cannot be built (missing libfabric...).
# Components of the test project are always built both ways (tests load
# them as plugins and link them statically). A component whose directory
# holds a file .opal_plugin_only is only ever a plugin (e.g. one that
# cannot link into a program on purpose).

AC_DEFUN([OPAL_MCA_CONFIGURE], [
    AC_ARG_ENABLE([mca-dso],
        [AS_HELP_STRING([--disable-mca-dso], [build every component into its library instead of as a plugin])],
        [], [enable_mca_dso=yes])
    AC_ARG_ENABLE([mca-static],
        [AS_HELP_STRING([--enable-mca-static=LIST], [build these components (fw-comp or fw, comma list) into their library])],
        [], [enable_mca_static=])
    AC_ARG_ENABLE([mca-no-build],
        [AS_HELP_STRING([--enable-mca-no-build=LIST], [do not build these components (fw-comp or fw, comma list)])],
        [], [enable_mca_no_build=])
    AS_IF([test "x$enable_mca_dso" = xno],
          [OPAL_SUMMARY_ADD([component plugins], [no], [--disable-mca-dso: all built in])],
          [OPAL_SUMMARY_ADD([component plugins], [yes], [dlopen'd with libltdl from \$pkglibdir])])

    opal_mca_static_list=",`echo $enable_mca_static | sed 's/ //g'`,"
    opal_mca_no_build_list=",`echo $enable_mca_no_build | sed 's/ //g'`,"
    opal_mca_known=","

    OPAL_MCA_ALL_FRAMEWORKS

    # A name in --enable-mca-static / --enable-mca-no-build that matches no
    # framework or component is a typo: say so rather than ignore it.
    opal_mca_known_list=`echo "$opal_mca_known" | sed 's/^,//; s/,$//; s/,/ /g'`
    for opal_mca_item in `echo "$enable_mca_static,$enable_mca_no_build" | tr ',' ' '`; do
        AS_CASE(["$opal_mca_known"], [*",$opal_mca_item,"*], [],
            [AC_MSG_ERROR([--enable-mca-static / --enable-mca-no-build: '$opal_mca_item' is not a framework or component of this tree (known: $opal_mca_known_list)])])
    done

    _OPAL_MCA_WRITE_FRAMEWORK_LISTS
])

# _OPAL_MCA_FRAMEWORK(project, fw, components)
AC_DEFUN([_OPAL_MCA_FRAMEWORK], [
    opal_mca_known="${opal_mca_known}$2,"
    opal_mca_static_$1_$2=""
    opal_mca_frameworks_$1="$opal_mca_frameworks_$1 $2"
    m4_foreach_w([opal_comp], [$3], [
        _OPAL_MCA_COMPONENT([$1], [$2], opal_comp)
    ])
    _OPAL_MCA_WRITE_STATIC_TABLE([$1], [$2])
])

# _OPAL_MCA_COMPONENT(project, fw, comp)
AC_DEFUN([_OPAL_MCA_COMPONENT], [
    opal_mca_known="${opal_mca_known}$2-$3,"
    opal_mca_build=yes
    opal_mca_why=
    AS_CASE(["$opal_mca_no_build_list"],
        [*",$2-$3,"* | *",$2,"*], [opal_mca_build=no; opal_mca_why="--enable-mca-no-build"])
    m4_ifdef([MCA_$1_$2_$3_CONFIG], [
        AS_IF([test $opal_mca_build = yes], [
            MCA_$1_$2_$3_CONFIG([], [opal_mca_build=no
                                     test -n "$opal_mca_why" || opal_mca_why="its configure check failed"])
        ])
    ])
    opal_mca_dso=no
    opal_mca_static=no
    opal_mca_plugin_only=no
    test -f "$srcdir/$1/mca/$2/$3/.opal_plugin_only" && opal_mca_plugin_only=yes
    AS_IF([test $opal_mca_build = yes && test $opal_mca_plugin_only = yes &&
           test "$1" != test && test "x$enable_mca_dso" = xno],
          [opal_mca_build=no; opal_mca_why="plugin only, and --disable-mca-dso"])
    AS_IF([test $opal_mca_build = yes], [
        AS_IF([test $opal_mca_plugin_only = yes], [opal_mca_dso=yes],
              [test "$1" = test], [opal_mca_dso=yes; opal_mca_static=yes],
              [test "x$enable_mca_dso" = xno], [opal_mca_static=yes],
              [AS_CASE(["$opal_mca_static_list"],
                   [*",$2-$3,"* | *",$2,"*], [opal_mca_static=yes],
                   [opal_mca_dso=yes])])
    ])
    AS_IF([test $opal_mca_static = yes],
          [opal_mca_static_$1_$2="$opal_mca_static_$1_$2 $3"])
    AM_CONDITIONAL([MCA_BUILD_$1_$2_$3_DSO], [test $opal_mca_dso = yes])
    AM_CONDITIONAL([MCA_BUILD_$1_$2_$3_STATIC], [test $opal_mca_static = yes])
    AS_IF([test "$1" != test], [
        AS_IF([test $opal_mca_build = no],
              [OPAL_SUMMARY_ADD([$2/$3], [no], [$opal_mca_why])],
              [test $opal_mca_dso = yes],
              [OPAL_SUMMARY_ADD([$2/$3], [yes], [plugin])],
              [OPAL_SUMMARY_ADD([$2/$3], [yes], [built in])])
    ])
])

# _OPAL_MCA_WRITE_STATIC_TABLE(project, fw): <project>/mca/<fw>/base/static-components.h
AC_DEFUN([_OPAL_MCA_WRITE_STATIC_TABLE], [
    as_dir=$1/mca/$2/base; as_fn_mkdir_p
    opal_mca_file=$1/mca/$2/base/static-components.h
    {
        echo "/* Generated by configure: the $2 components built into the library. */"
        for opal_c in $opal_mca_static_$1_$2; do
            echo "extern const mca_base_component_t mca_$2_${opal_c}_component;"
        done
        echo "static const mca_base_component_t *const mca_$2_base_static_components@<:@@:>@ = {"
        for opal_c in $opal_mca_static_$1_$2; do
            echo "    &mca_$2_${opal_c}_component,"
        done
        echo "    NULL,"
        echo "};"
    } >"$opal_mca_file.tmp"
    if cmp -s "$opal_mca_file.tmp" "$opal_mca_file"; then rm -f "$opal_mca_file.tmp"; else mv "$opal_mca_file.tmp" "$opal_mca_file"; fi
])

# _OPAL_MCA_WRITE_FRAMEWORK_LISTS: opal/mca/base/opal_frameworks.h and
# orte/mca/base/orte_frameworks.h, the NULL-terminated framework tables
# opal_info walks (and, in opal's, the names of the common directories).
AC_DEFUN([_OPAL_MCA_WRITE_FRAMEWORK_LISTS], [
    for opal_p in opal orte; do
        as_dir=$opal_p/mca/base; as_fn_mkdir_p
        opal_mca_file=$opal_p/mca/base/${opal_p}_frameworks.h
        eval "opal_fws=\$opal_mca_frameworks_$opal_p"
        {
            echo "/* Generated by configure: the frameworks of project $opal_p. */"
            for opal_f in $opal_fws; do
                echo "extern mca_base_framework_t ${opal_p}_${opal_f}_base_framework;"
            done
            echo "mca_base_framework_t *${opal_p}_frameworks@<:@@:>@ = {"
            for opal_f in $opal_fws; do
                echo "    &${opal_p}_${opal_f}_base_framework,"
            done
            echo "    NULL,"
            echo "};"
            if test $opal_p = opal; then
                echo "/* The code shared by components (<project>/mca/common/<name>): its"
                echo " * variables are named <name>_*. */"
                echo "const char *const opal_mca_common_names@<:@@:>@ = {"
                for opal_c in OPAL_MCA_COMMON_NAMES; do
                    echo "    \"$opal_c\","
                done
                echo "    NULL,"
                echo "};"
            fi
        } >"$opal_mca_file.tmp"
        if cmp -s "$opal_mca_file.tmp" "$opal_mca_file"; then rm -f "$opal_mca_file.tmp"; else mv "$opal_mca_file.tmp" "$opal_mca_file"; fi
    done
])
