/* The installed opal_info: the tool over the frameworks of this build. */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_framework.h"
#include "opal/tools/opal_info/opal_info.h"

int main(int argc, char **argv)
{
    return opal_info_main(argc, argv, opal_frameworks);
}
