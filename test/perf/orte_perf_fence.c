/*
 * Fence latency through mcarun's launcher socket:
 *
 *   mcarun -np N [--oversubscribe] test/perf/orte_perf_fence [FENCES] [collect]
 *
 * Every rank fences FENCES times (default 2000) after a warm-up; rank 0
 * prints the mean time of one fence in microseconds.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/util/orte_launcher_client.h"

int main(int argc, char **argv)
{
    int fences = 1 < argc ? atoi(argv[1]) : 2000;
    int collect = 2 < argc && 0 == strcmp(argv[2], "collect");
    if (fences <= 0) {
        fprintf(stderr, "usage: orte_perf_fence [FENCES] [collect]\n");
        return 2;
    }
    opal_init_util(&argc, &argv);
    orte_launcher_job_info_t info;
    int rc = orte_launcher_client_connect(&info);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "orte_perf_fence: run me under mcarun (%s)\n", opal_strerror(rc));
        opal_finalize_util();
        return 1;
    }
    for (int i = 0; i < fences / 10 + 10 && OPAL_SUCCESS == rc; ++i) {
        rc = orte_launcher_client_fence(collect);
    }
    uint64_t start = opal_timer_ns();
    for (int i = 0; i < fences && OPAL_SUCCESS == rc; ++i) {
        rc = orte_launcher_client_fence(collect);
    }
    uint64_t elapsed = opal_timer_ns() - start;
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "orte_perf_fence: fence failed: %s\n", opal_strerror(rc));
    } else if (0 == info.rank) {
        printf("np %u: %.1f us per fence (%d fences%s)\n", (unsigned) info.size,
               (double) elapsed / 1e3 / fences, fences, collect ? ", collect" : "");
    }
    int frc = orte_launcher_client_finalize();
    opal_finalize_util();
    return OPAL_SUCCESS == rc && OPAL_SUCCESS == frc ? 0 : 1;
}
