/*
 * opal_na_cleanup for na/btl: removes the /dev/shm files of standalone
 * processes of this user that are gone (na_btl_rte.h names them
 * "opal-mca.<uid>.<standalone job>.<kind>.<pid>"; opal_shm_sweep.c says which
 * files it removes and which it leaves).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <unistd.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/na/btl/na_btl.h"
#include "opal/mca/na/btl/na_btl_rte.h"
#include "opal/util/opal_shm_sweep.h"

int na_btl_cleanup(void)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "opal-mca.%lu.%lu.", (unsigned long) geteuid(),
             (unsigned long) NA_BTL_STANDALONE_JOBID);
    return opal_shm_sweep(opal_shm_owner_by_prefix, prefix, false, "na/btl", opal_na_base_output);
}
