/*
 * The two na/ofi classes the na/ofi fuzz targets parse against (0: tcp on
 * the loopback, 1: shm), opened at the first input and finalized at exit:
 * a class left open leaves its provider's files behind.
 */
#ifndef OPAL_TEST_FUZZ_FUZZ_NA_OFI_H
#define OPAL_TEST_FUZZ_FUZZ_NA_OFI_H

#include <stdlib.h>

#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_init.h"

static opal_na_class_t *fuzz_na_ofi_classes[2];

static void fuzz_na_ofi_close(void)
{
    for (int i = 0; i < 2; ++i) {
        if (NULL != fuzz_na_ofi_classes[i]) {
            (void) opal_na_finalize(fuzz_na_ofi_classes[i]);
            fuzz_na_ofi_classes[i] = NULL;
        }
    }
}

/* Class which (0 or 1), NULL when it could not be opened. */
static opal_na_class_t *fuzz_na_ofi_class(int which)
{
    static int opened;
    if (!opened) {
        opened = 1;
        (void) opal_init_util(NULL, NULL);
        (void) opal_na_initialize("ofi+tcp://127.0.0.1", false, &fuzz_na_ofi_classes[0]);
        (void) opal_na_initialize("ofi+shm", false, &fuzz_na_ofi_classes[1]);
        (void) atexit(fuzz_na_ofi_close);
    }
    return fuzz_na_ofi_classes[which];
}

#endif /* OPAL_TEST_FUZZ_FUZZ_NA_OFI_H */
