/*
 * Helpers of the na tests (na_test_support.h).
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <time.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/na/na_test_support.h"

void na_test_record(const opal_na_cb_info_t *info)
{
    na_test_result_t *r = info->arg;
    r->calls++;
    r->ret = info->ret;
    if (OPAL_NA_CB_RECV_UNEXPECTED == info->type) {
        r->size = info->info.recv_unexpected.actual_size;
        r->tag = info->info.recv_unexpected.tag;
        r->source = info->info.recv_unexpected.source;
    } else if (OPAL_NA_CB_RECV_EXPECTED == info->type) {
        r->size = info->info.recv_expected.actual_size;
    }
}

void na_test_init(void)
{
#ifdef NA_TEST_PLUGIN_DIRS
    setenv("OPAL_MCA_mca_base_component_path", NA_TEST_PLUGIN_DIRS, 0);
#endif
    (void) opal_init_util(NULL, NULL);
}

void na_test_fini(void)
{
    (void) opal_finalize_util();
}

int na_test_open(const char *info, na_test_end_t *end)
{
    end->cls = NULL;
    end->ctx = NULL;
    int rc = opal_na_initialize(info, true, &end->cls);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_na_context_create(end->cls, 0, &end->ctx);
    if (OPAL_SUCCESS != rc) {
        (void) opal_na_finalize(end->cls);
        end->cls = NULL;
    }
    return rc;
}

void na_test_close(na_test_end_t *end)
{
    if (NULL == end->cls) {
        return;
    }
    /* Whatever completed and was not triggered yet. */
    (void) opal_na_poll(end->cls, end->ctx, NULL);
    (void) opal_na_trigger(end->ctx, 0, NULL);
    (void) opal_na_context_destroy(end->cls, end->ctx);
    (void) opal_na_finalize(end->cls);
    end->cls = NULL;
}

bool na_test_wait(na_test_end_t *ends, size_t nends, const int *count, int want, int timeout_s)
{
    time_t deadline = time(NULL) + timeout_s;
    while (*count < want) {
        if (time(NULL) > deadline) {
            return false;
        }
        for (size_t i = 0; i < nends; ++i) {
            if (NULL != ends[i].cls) {
                (void) opal_na_poll(ends[i].cls, ends[i].ctx, NULL);
                (void) opal_na_trigger(ends[i].ctx, 0, NULL);
            }
        }
    }
    return true;
}

char *na_test_uri(na_test_end_t *end)
{
    opal_na_addr_t *self = NULL;
    if (OPAL_SUCCESS != opal_na_addr_self(end->cls, &self)) {
        return NULL;
    }
    size_t size = 0;
    (void) opal_na_addr_to_string(end->cls, NULL, &size, self);
    char *uri = malloc(size);
    if (NULL != uri && OPAL_SUCCESS != opal_na_addr_to_string(end->cls, uri, &size, self)) {
        free(uri);
        uri = NULL;
    }
    opal_na_addr_free(end->cls, self);
    return uri;
}
