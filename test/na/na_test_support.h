/*
 * What the na tests share: opening a class with a context, waiting for
 * callbacks, and a callback that records what it got.
 */
#ifndef TEST_NA_NA_TEST_SUPPORT_H
#define TEST_NA_NA_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>

#include "opal/mca/na/base/base.h"

typedef struct na_test_end_t {
    opal_na_class_t *cls;
    opal_na_context_t *ctx;
} na_test_end_t;

/* What a callback saw; calls counts how often it ran. */
typedef struct na_test_result_t {
    int calls;
    int ret;
    size_t size;
    opal_na_tag_t tag;
    opal_na_addr_t *source;
} na_test_result_t;

/* Records info into the na_test_result_t given as arg. */
void na_test_record(const opal_na_cb_info_t *info);

/* Sets the plugin path (the build tree's) and opens opal's utilities. */
void na_test_init(void);
void na_test_fini(void);

/* Opens info (listening) with context 0; OPAL_SUCCESS or the error. */
int na_test_open(const char *info, na_test_end_t *end);
void na_test_close(na_test_end_t *end);

/* Polls and triggers every end until *count >= want or timeout_s passed;
 * true when it got there. */
bool na_test_wait(na_test_end_t *ends, size_t nends, const int *count, int want, int timeout_s);

/* The URI of end's own address, malloc'd. */
char *na_test_uri(na_test_end_t *end);

#endif /* TEST_NA_NA_TEST_SUPPORT_H */
