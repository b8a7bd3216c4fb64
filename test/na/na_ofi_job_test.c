/*
 * na/ofi inside an mcarun job: the ranks (na_ofi_rank) find each other
 * by the URIs they publish in the modex and exchange unexpected and
 * expected messages, on tcp and on shm.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static void run_job(const char *protocol)
{
    static char prog[4096];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/na/na_ofi_rank"));
    const char *args[] = {"-np", "3", "--oversubscribe", "--timeout", "120", prog, protocol, NULL};
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, args);
    if (0 != run.status || 3 != mcarun_test_count(run.out, " ok\n")) {
        mcarun_test_dump(&run);
    }
    ck_assert_int_eq(run.status, 0);
    ck_assert_int_eq(mcarun_test_count(run.out, " ok\n"), 3);
    mcarun_test_run_free(&run);
}

START_TEST(ranks_of_a_job_reach_each_other_over_tcp_by_their_uris)
{
    run_job("tcp");
}
END_TEST

START_TEST(ranks_of_a_job_reach_each_other_over_shm_by_their_uris)
{
    run_job("shm");
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", NA_TEST_PLUGIN_DIRS, 0);
    Suite *s = suite_create("na_ofi_job");
    OPAL_TEST_ADD(s, ranks_of_a_job_reach_each_other_over_tcp_by_their_uris);
    OPAL_TEST_ADD(s, ranks_of_a_job_reach_each_other_over_shm_by_their_uris);
    return opal_test_run(s);
}
