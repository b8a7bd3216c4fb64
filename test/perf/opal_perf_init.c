/*
 * What starting the MCA costs: opal_init_util + mca_base_open, then the
 * same plus registering every framework of the build (opal_frameworks[])
 * and the test-only mcatest -- with its components built in, and loaded
 * as plugins from the build tree -- each undone again. Every case runs
 * PERF_ROUNDS times after one warm-up round; the median is printed with
 * the first (cold) round.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/mca/mcatest/base/base.h"
#include "test/perf/opal_perf_support.h"

#ifndef OPAL_TEST_MCA_PLUGIN_DIRS
#error "OPAL_TEST_MCA_PLUGIN_DIRS comes from test/perf/Makefile-init.inc"
#endif

#define PERF_ROUNDS 51

static const mca_base_component_t *const no_components[] = {NULL};

static void check(int rc, const char *what)
{
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf_init: %s: %s\n", what, opal_strerror(rc));
        exit(EXIT_FAILURE);
    }
}

/* One start and stop; with_frameworks registers (and closes) every
 * framework too. Returns the nanoseconds it took. */
static double start_and_stop(bool with_frameworks)
{
    uint64_t start = opal_timer_ns();
    check(opal_init_util(NULL, NULL), "opal_init_util");
    check(mca_base_open(), "mca_base_open");
    if (with_frameworks) {
        for (int i = 0; NULL != opal_frameworks[i]; ++i) {
            check(mca_base_framework_register(opal_frameworks[i], MCA_BASE_REGISTER_DEFAULT),
                  opal_frameworks[i]->framework_name);
        }
        check(mca_base_framework_register(&test_mcatest_base_framework, MCA_BASE_REGISTER_DEFAULT),
              "mcatest");
        check(mca_base_framework_close(&test_mcatest_base_framework), "close mcatest");
        for (int i = 0; NULL != opal_frameworks[i]; ++i) {
            check(mca_base_framework_close(opal_frameworks[i]), "close");
        }
    }
    check(mca_base_close(), "mca_base_close");
    check(opal_finalize_util(), "opal_finalize_util");
    return (double) (opal_timer_ns() - start);
}

static void measure(const char *what, bool with_frameworks)
{
    double first = start_and_stop(with_frameworks);
    double ns[PERF_ROUNDS];
    for (int i = 0; i < PERF_ROUNDS; ++i) {
        ns[i] = start_and_stop(with_frameworks);
    }
    printf("%-58s %10.1f %10.1f\n", what, perf_median(ns, PERF_ROUNDS) / 1000.0, first / 1000.0);
}

int main(void)
{
    size_t frameworks = 0;
    while (NULL != opal_frameworks[frameworks]) {
        ++frameworks;
    }
    /* Load failures (mcatest's undefsym) are expected and not the point. */
    setenv("OPAL_MCA_mca_base_component_show_load_errors", "none", 1);
    setenv("OPAL_MCA_mca_base_component_path", "", 1);
    printf("opal frameworks in this build: %zu (+ mcatest)\n", frameworks);
    printf("%-58s %10s %10s\n", "start + stop", "median us", "first us");
    measure("opal_init_util + mca_base_open", false);
    measure("... + register every framework (mcatest built in)", true);
    test_mcatest_base_framework.framework_static_components = no_components;
    setenv("OPAL_MCA_mca_base_component_path", OPAL_TEST_MCA_PLUGIN_DIRS, 1);
    measure("... + register every framework (mcatest as plugins)", true);
    return EXIT_SUCCESS;
}
