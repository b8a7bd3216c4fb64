/* opal-mca inside an MPI program built with Open MPI: coexist_rank (see
 * there) under Open MPI's mpirun, linked with libopal before and after
 * libmpi, on 2 and 4 ranks. Both libraries define the same names in their
 * source; the test shows each keeps its own (docs/developer.md, "Exported
 * symbols"). Skipped (77) when Open MPI's mpicc or mpirun is absent. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

#define OPAL_FIRST ORTE_TEST_BUILDDIR "/test/coexist/coexist_rank_opal_first"
#define MPI_FIRST  ORTE_TEST_BUILDDIR "/test/coexist/coexist_rank_mpi_first"

/* Position of the first DT_NEEDED entry naming lib in readelf's output of
 * program, or -1. */
static long needed_position(const char *readelf_out, const char *lib)
{
    const char *p = readelf_out;
    while (NULL != (p = strstr(p, "(NEEDED)"))) {
        const char *end = strchr(p, '\n');
        size_t len = NULL == end ? strlen(p) : (size_t) (end - p);
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int) (len < sizeof(line) ? len : sizeof(line) - 1),
                 p);
        if (NULL != strstr(line, lib)) {
            return (long) (p - readelf_out);
        }
        p += len;
    }
    return -1;
}

static void check_order(const char *program, bool opal_first)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "readelf -d %s", program));
    ck_assert_msg(0 == run.status, "readelf -d %s exited %d: %s", program, run.status, run.err);
    long opal = needed_position(run.out, "[libopal.so");
    long mpi = needed_position(run.out, "[libmpi.so");
    ck_assert_msg(opal >= 0 && mpi >= 0, "%s does not need both libopal and libmpi:\n%s", program,
                  run.out);
    ck_assert_msg(opal_first == (opal < mpi), "%s needs %s first:\n%s", program,
                  opal_first ? "libmpi" : "libopal", run.out);
    orte_test_result_free(&run);
}

START_TEST(opal_first_program_needs_libopal_before_libmpi)
{
    check_order(OPAL_FIRST, true);
}
END_TEST

START_TEST(mpi_first_program_needs_libmpi_before_libopal)
{
    check_order(MPI_FIRST, false);
}
END_TEST

static void run_job(const char *program, unsigned np)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run,
                            "timeout -k 5 170 mpirun --oversubscribe --bind-to none -np %u "
                            "-x OPAL_MCA_btl=self,sm %s",
                            np, program));
    ck_assert_msg(0 == run.status, "mpirun -np %u %s exited %d:\n%.2000s%.2000s", np, program,
                  run.status, run.out, run.err);
    for (unsigned r = 0; r < np; ++r) {
        char expect[64];
        snprintf(expect, sizeof(expect), "rank %u: ok (", r);
        ck_assert_msg(NULL != strstr(run.out, expect), "no '%s' line:\n%.2000s%.2000s", expect,
                      run.out, run.err);
    }
    ck_assert_msg(NULL == strstr(run.out, "FAILED"), "a rank failed:\n%.2000s", run.out);
    orte_test_result_free(&run);
}

START_TEST(opal_first_np2_allreduce_objects_and_sm_ping_pong_work)
{
    run_job(OPAL_FIRST, 2);
}
END_TEST

START_TEST(opal_first_np4_allreduce_objects_and_sm_ping_pong_work)
{
    run_job(OPAL_FIRST, 4);
}
END_TEST

START_TEST(mpi_first_np2_allreduce_objects_and_sm_ping_pong_work)
{
    run_job(MPI_FIRST, 2);
}
END_TEST

START_TEST(mpi_first_np4_allreduce_objects_and_sm_ping_pong_work)
{
    run_job(MPI_FIRST, 4);
}
END_TEST

static Suite *coexist_suite(void)
{
    Suite *s = suite_create("coexist_mpi");
    OPAL_TEST_ADD(s, opal_first_program_needs_libopal_before_libmpi);
    OPAL_TEST_ADD(s, mpi_first_program_needs_libmpi_before_libopal);
    OPAL_TEST_ADD(s, opal_first_np2_allreduce_objects_and_sm_ping_pong_work);
    OPAL_TEST_ADD(s, opal_first_np4_allreduce_objects_and_sm_ping_pong_work);
    OPAL_TEST_ADD(s, mpi_first_np2_allreduce_objects_and_sm_ping_pong_work);
    OPAL_TEST_ADD(s, mpi_first_np4_allreduce_objects_and_sm_ping_pong_work);
    return s;
}

int main(void)
{
    const char *skip = NULL;
#if !OPAL_HAVE_MPI
    skip = "Open MPI's mpicc or mpi.h was not found by configure (install libopenmpi-dev): the "
           "MPI programs are not built";
#elif !OPAL_HAVE_PMIX
    skip = "libpmix is absent (install libpmix-dev): ess/pmix, which connects our runtime to "
           "mpirun, is not built";
#endif
    if (NULL == skip && !orte_test_have_program("mpirun")) {
        skip = "no mpirun in PATH (install openmpi-bin)";
    }
    if (NULL != skip) {
        printf("SKIP: %s\n", skip);
        return 77;
    }
    orte_test_forget_launchers();
    orte_test_use_build_tree_plugins();
    /* The ranks carry Open MPI and libpmix, whose leaks at exit are not
     * ours; every other ASan check still applies to them. */
    const char *asan = getenv("ASAN_OPTIONS");
    char options[1024];
    snprintf(options, sizeof(options), "%s%sdetect_leaks=0", NULL == asan ? "" : asan,
             NULL == asan || '\0' == asan[0] ? "" : ":");
    setenv("ASAN_OPTIONS", options, 1);
    /* Open MPI refuses root unless told twice; harmless otherwise. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    return opal_test_run(coexist_suite());
}
