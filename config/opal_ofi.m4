# OPAL_OFI_LIBRARY_FILE: when libfabric was found, defines OPAL_OFI_LIBRARY,
# the file common/ofi dlopens when a component first needs libfabric (the
# plugins do not link it: loading it runs every provider library's
# constructor, see opal/mca/common/ofi/common_ofi_lib.c). It is the soname
# a program linked with $OFI_LIBS records, with the directory of a -L flag
# when the library is there (outside the loader's own path).
AC_DEFUN([OPAL_OFI_LIBRARY_FILE], [
    AS_IF([test "x$opal_have_ofi" = xyes], [
        AC_MSG_CHECKING([which file to dlopen for libfabric])
        opal_ofi_library=
        opal_ofi_save_LIBS=$LIBS
        opal_ofi_save_CPPFLAGS=$CPPFLAGS
        LIBS="$OFI_LIBS $LIBS"
        CPPFLAGS="$OFI_CFLAGS $CPPFLAGS"
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <rdma/fabric.h>]],
                                        [[return (int) fi_version();]])],
            [opal_ofi_library=`${OBJDUMP:-objdump} -p conftest$EXEEXT 2>/dev/null |
                sed -n 's/^ *NEEDED *\(libfabric[[^ ]]*\) *$/\1/p' | sed 1q`])
        LIBS=$opal_ofi_save_LIBS
        CPPFLAGS=$opal_ofi_save_CPPFLAGS
        AS_IF([test -z "$opal_ofi_library"], [opal_ofi_library=libfabric.so.1])
        for opal_ofi_flag in $OFI_LIBS; do
            case $opal_ofi_flag in
                -L*)
                    opal_ofi_dir=`echo "$opal_ofi_flag" | sed 's/^-L//'`
                    AS_IF([test -f "$opal_ofi_dir/$opal_ofi_library"],
                          [opal_ofi_library="$opal_ofi_dir/$opal_ofi_library"; break])
                    ;;
            esac
        done
        AC_MSG_RESULT([$opal_ofi_library])
        AC_DEFINE_UNQUOTED([OPAL_OFI_LIBRARY], ["$opal_ofi_library"],
                           [The libfabric file common/ofi dlopens])
    ])
])
