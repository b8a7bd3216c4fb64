#include "opal/opal_config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "test/support/opal_test.h"

int opal_test_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}

bool opal_test_under_valgrind(void)
{
    const char *v = getenv("OPAL_TEST_UNDER_VALGRIND");
    return NULL != v && 0 != strcmp(v, "0");
}

size_t opal_test_iterations(size_t full)
{
    if (!opal_test_under_valgrind()) {
        return full;
    }
    size_t n = full / 100;
    return n > 0 ? n : 1;
}

const char *opal_test_srcdir(void)
{
    const char *dir = getenv("OPAL_TEST_SRCDIR");
    return NULL != dir ? dir : ".";
}

#if OPAL_HAVE_HWLOC
struct hwloc_topology *opal_test_xml_topology(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", opal_test_srcdir(), rel);
    hwloc_topology_t topology;
    ck_assert_int_eq(hwloc_topology_init(&topology), 0);
    ck_assert_msg(0 == hwloc_topology_set_xml(topology, path), "%s: not an hwloc XML file", path);
    ck_assert_int_eq(hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL), 0);
    ck_assert_msg(0 == hwloc_topology_load(topology), "%s: does not load", path);
    return topology;
}
#endif

bool opal_test_can_fork(void)
{
    const char *v = getenv("CK_FORK");
    return NULL == v || 0 != strcmp(v, "no");
}

int opal_test_shm_files(const char *prefix)
{
    DIR *dir = opendir("/dev/shm");
    if (NULL == dir) {
        return 0;
    }
    int n = 0;
    struct dirent *e;
    while (NULL != (e = readdir(dir))) {
        n += 0 == strncmp(e->d_name, prefix, strlen(prefix)) ? 1 : 0;
    }
    closedir(dir);
    return n;
}
