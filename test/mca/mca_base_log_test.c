/*
 * Log facilities: opal_log_mask sets each facility's level (on top of
 * <fw>_base_verbose), a bad mask is refused naming what is wrong and
 * listing what exists, and opal_log_file sends log records (time, rank,
 * pid, facility, level) to a file per rank.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "test/mca/mca_base_test_support.h"
#include "test/support/opal_test.h"

static mca_base_framework_t *const fw = &test_mcatest_base_framework;

static mca_base_framework_t *opal_framework(const char *name)
{
    for (int i = 0; NULL != opal_frameworks[i]; ++i) {
        if (0 == strcmp(opal_frameworks[i]->framework_name, name)) {
            return opal_frameworks[i];
        }
    }
    ck_abort_msg("no framework %s in this build", name);
    return NULL;
}

/* The verbosity of framework's stream once registered with the mask. */
static int registered_verbosity(mca_base_framework_t *framework)
{
    ck_assert_int_eq(OPAL_SUCCESS,
                     mca_base_framework_register(framework, MCA_BASE_REGISTER_DEFAULT));
    return opal_output_get_verbosity(framework->framework_output);
}

START_TEST(mask_sets_the_default_and_each_named_facility)
{
    mt_reset();
    mt_set("mca_base_component_show_load_errors", "none");
    mt_set("opal_log_mask", "warn,btl=debug,rpc=info");
    mca_base_framework_t *btl = opal_framework("btl"), *rpc = opal_framework("rpc");
    ck_assert_int_eq(40, registered_verbosity(btl));
    ck_assert_int_eq(10, registered_verbosity(rpc));
    ck_assert_int_eq(5, registered_verbosity(fw));
    ck_assert_int_eq(OPAL_SUCCESS, mca_base_framework_close(fw));
    ck_assert_int_eq(OPAL_SUCCESS, mca_base_framework_close(rpc));
    ck_assert_int_eq(OPAL_SUCCESS, mca_base_framework_close(btl));
}
END_TEST

START_TEST(base_verbose_above_the_mask_wins)
{
    mt_reset();
    mt_set("opal_log_mask", "warn");
    mt_set("mcatest_base_verbose", "60");
    ck_assert_int_eq(60, registered_verbosity(fw));
    ck_assert_int_eq(OPAL_SUCCESS, mca_base_framework_close(fw));
}
END_TEST

START_TEST(bad_facility_is_named_and_the_facilities_listed)
{
    mt_reset();
    mt_set("opal_log_mask", "warn,bttl=debug");
    mt_capture_start();
    int rc = mca_base_open();
    char *out = mt_capture_end();
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, rc);
    ck_assert_msg(NULL != strstr(out, "opal_log_mask=warn,bttl=debug: unknown facility \"bttl\""),
                  "%s", out);
    ck_assert_msg(NULL != strstr(out, "the facilities are: opal, mca, orte, btl"), "%s", out);
    free(out);
}
END_TEST

START_TEST(bad_level_is_named_and_the_levels_listed)
{
    mt_reset();
    mt_set("opal_log_mask", "btl=loud");
    mt_capture_start();
    int rc = mca_base_open();
    char *out = mt_capture_end();
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, rc);
    ck_assert_msg(NULL != strstr(out, "unknown level \"loud\"; the levels are: error (0), warn "
                                      "(5), info (10), debug (40), trace (100)"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(log_file_gets_records_per_rank)
{
    mt_reset();
    char *dir = mt_make_dir();
    char pattern[1024], path[1100];
    snprintf(pattern, sizeof(pattern), "%s/log.%%r.%%p", dir);
    snprintf(path, sizeof(path), "%s/log.3.%ld", dir, (long) getpid());
    ck_assert_int_eq(0, setenv("OPAL_ORTE_RANK", "3", 1));
    mt_set("mca_base_component_show_load_errors", "none");
    mt_set("opal_log_mask", "debug");
    mt_set("opal_log_file", pattern);
    mt_capture_start();
    ck_assert_int_eq(OPAL_SUCCESS, mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT));
    opal_output_verbose(5, fw->framework_output, "a warning");
    ck_assert_int_eq(OPAL_SUCCESS, mca_base_framework_close(fw));
    char *err = mt_capture_end();
    ck_assert_str_eq("", err);
    free(err);
    unsetenv("OPAL_ORTE_RANK");

    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512], want[128];
    bool registered = false, warned = false;
    snprintf(want, sizeof(want), " rank 3 pid %ld mcatest ", (long) getpid());
    while (NULL != fgets(line, sizeof(line), f)) {
        /* 2026-11-25T17:45:01.123456Z */
        ck_assert_msg(strlen(line) > 28 && 'T' == line[10] && '.' == line[19] && 'Z' == line[26],
                      "no timestamp: %s", line);
        if (NULL != strstr(line, want) && NULL != strstr(line, "mcatest debug: registered")) {
            registered = true;
        }
        if (NULL != strstr(line, want) && NULL != strstr(line, "mcatest warn: a warning")) {
            warned = true;
        }
    }
    fclose(f);
    ck_assert(registered && warned);
    unlink(path);
    mt_remove_dir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mca_base_log");
    OPAL_TEST_ADD(s, mask_sets_the_default_and_each_named_facility);
    OPAL_TEST_ADD(s, base_verbose_above_the_mask_wins);
    OPAL_TEST_ADD(s, bad_facility_is_named_and_the_facilities_listed);
    OPAL_TEST_ADD(s, bad_level_is_named_and_the_levels_listed);
    OPAL_TEST_ADD(s, log_file_gets_records_per_rank);
    return opal_test_run(s);
}
