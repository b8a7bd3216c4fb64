/* btl/self through real jobs: a rank alone sends every size, tag and
 * order to itself and puts / gets in its own memory; with only self
 * selected, two ranks cannot reach each other and the error says why;
 * opal_info --selected shows self as a component that initialises here
 * (without a job). */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/btl/btl_test_suite.h"

static const btl_suite_t self_suite = {
    .name = "btl_self",
    .btl = "self",
    .cases = BTL_SUITE_SELF,
};

START_TEST(two_ranks_with_only_self_fail_naming_the_peer_and_why)
{
    const char *args[] = {"sizes", NULL};
    /* Both ranks say why, even after the first one failed. */
    const char *extra[] = {"--enable-recovery", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self", NULL, extra, 2, args);
    const char *reasons[] = {"self: not this process", "cannot reach 1 peer(s)", NULL};
    btl_suite_expect_unreachable(&run, 1, reasons);
    btl_suite_expect_unreachable(&run, 0, reasons);
    ck_assert(btl_suite_has(run.out, "rank 0: add_procs failed: OPAL_ERR_UNREACH"));
    ck_assert(btl_suite_has(run.out, "rank 1: add_procs failed: OPAL_ERR_UNREACH"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(a_rank_alone_reaches_itself_over_self)
{
    const char *args[] = {"tags", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self", NULL, NULL, 1, args);
    btl_suite_expect_ok(&run, 1, "tags", NULL);
    char module[32];
    ck_assert(btl_suite_send_module(&run, 0, 0, module, sizeof(module)));
    ck_assert_str_eq(module, "self");
    ck_assert(btl_suite_has(run.out, "rank 0: peer 0: send over self; rdma over self\n"));
    /* The message on a tag nobody registered was counted and reported. */
    ck_assert(btl_suite_has(run.err, "tag 254 (6 bytes) from rank 0"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Runs the build tree's opal_info with args; returns its output. */
static char *opal_info(const char *args)
{
    char command[4096];
    snprintf(command, sizeof(command), "%s %s 2>&1",
             mcarun_test_build_path("tools/opal_info/opal_info"), args);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = 0, cap = 65536;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    size_t n;
    while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            out = realloc(out, cap);
            ck_assert_ptr_nonnull(out);
        }
    }
    out[len] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    return out;
}

START_TEST(opal_info_selected_shows_self_initialising_without_a_job)
{
    char *out = opal_info("--selected --parsable --mca btl self");
    ck_assert_msg(btl_suite_has(out, "framework:btl:selected:self\n") &&
                      btl_suite_has(out, "mca:btl:self:selected:true\n"),
                  "opal_info does not show self selected:\n%s", out);
    free(out);
    out = opal_info("--selected --mca btl self");
    ck_assert_msg(btl_suite_has(out, "MCA btl: selected self\n"),
                  "opal_info does not show self selected:\n%s", out);
    free(out);
}
END_TEST

int main(void)
{
    Suite *s = btl_suite_create(&self_suite);
    OPAL_TEST_ADD(s, two_ranks_with_only_self_fail_naming_the_peer_and_why);
    OPAL_TEST_ADD(s, a_rank_alone_reaches_itself_over_self);
    OPAL_TEST_ADD(s, opal_info_selected_shows_self_initialising_without_a_job);
    return btl_suite_main(s);
}
