#include "opal/opal_config.h"
#include "opal/mca/na/btl/na_btl.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
int na_btl_rte_install(bool *installed)
{
    *installed = false;
    opal_output(0, "na/btl: no job");
    return OPAL_ERR_NOT_SUPPORTED;
}
int na_btl_rte_card(uint8_t **card, size_t *size)
{
    *card = NULL;
    *size = 0;
    return OPAL_ERR_NOT_SUPPORTED;
}
int na_btl_rte_add_card(uint32_t rank, const uint8_t *card, size_t size)
{
    (void) rank;
    (void) card;
    (void) size;
    return OPAL_ERR_NOT_SUPPORTED;
}
void na_btl_rte_uninstall(void)
{
}
