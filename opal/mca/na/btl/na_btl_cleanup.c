#include "opal/opal_config.h"
#include "opal/mca/na/btl/na_btl.h"
int na_btl_cleanup(void)
{
    return 0;
}
