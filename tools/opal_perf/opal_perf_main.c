/* The installed opal_perf (its logic is in libopal_perf.la, which the
 * tests link too). */
#include "opal/opal_config.h"

#include "tools/opal_perf/opal_perf.h"

int main(int argc, char **argv)
{
    return opal_perf_main(argc, argv);
}
