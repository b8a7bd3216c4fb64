/*
 * The bulk tests' shared set-up (bulk_test_support.h).
 */
#include "opal/opal_config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/bulk/bulk_test_support.h"

static void set_vars(const char *const *vars, bool set)
{
    for (size_t i = 0; NULL != vars && NULL != vars[i]; ++i) {
        char name[256];
        const char *eq = strchr(vars[i], '=');
        ck_assert_ptr_nonnull(eq);
        snprintf(name, sizeof(name), "OPAL_MCA_%.*s", (int) (eq - vars[i]), vars[i]);
        if (set) {
            setenv(name, eq + 1, 1);
        } else {
            unsetenv(name);
        }
    }
}

void bulk_test_init(const char *const *vars)
{
    setenv("OPAL_MCA_mca_base_component_path", BULK_TEST_PLUGIN_DIRS, 1);
    set_vars(vars, true);
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
}

void bulk_test_fini(const char *const *vars)
{
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
    set_vars(vars, false);
}

void bulk_peer_open(bulk_peer_t *p, const fake_na_opts_t *opts)
{
    p->na = fake_na_open(opts);
    ck_assert_ptr_nonnull(p->na);
    ck_assert_int_eq(opal_na_context_create(p->na, 0, &p->ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_init(p->na, &p->bc), OPAL_SUCCESS);
}

void bulk_peer_close(bulk_peer_t *p)
{
    ck_assert_int_eq(opal_bulk_finalize(p->bc), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_destroy(p->na, p->ctx), OPAL_SUCCESS);
    fake_na_close(p->na);
    memset(p, 0, sizeof(*p));
}

bool bulk_progress(bulk_peer_t *peers, int n, const bool *done)
{
    for (int round = 0; round < 100000 && !*done; ++round) {
        for (int i = 0; i < n; ++i) {
            ck_assert_int_eq(opal_na_poll(peers[i].na, peers[i].ctx, NULL), OPAL_SUCCESS);
            ck_assert_int_eq(opal_na_trigger(peers[i].ctx, 0, NULL), OPAL_SUCCESS);
        }
    }
    return *done;
}

void bulk_drain(bulk_peer_t *peers, int n, int rounds)
{
    for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < n; ++i) {
            ck_assert_int_eq(opal_na_poll(peers[i].na, peers[i].ctx, NULL), OPAL_SUCCESS);
            ck_assert_int_eq(opal_na_trigger(peers[i].ctx, 0, NULL), OPAL_SUCCESS);
        }
    }
}

void bulk_fill(void *buf, size_t len, unsigned int seed)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < len; ++i) {
        b[i] = (unsigned char) ((i * 131u + seed * 7u + (i >> 8)) & 0xff);
    }
}
