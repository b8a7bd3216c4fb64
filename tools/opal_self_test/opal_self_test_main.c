/* The installed opal_self_test (its logic is in libopal_self_test.la,
 * which the tests and the fuzz target link too). */
#include "opal/opal_config.h"

#include "tools/opal_self_test/opal_self_test.h"

int main(int argc, char **argv)
{
    return opal_self_test_main(argc, argv);
}
