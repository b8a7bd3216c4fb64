/*
 * What na/btl's standalone runtime (na_btl_rte.c) and its cleanup
 * (na_btl_cleanup.c) share: the standalone job's id and the names of the
 * files its processes leave in /dev/shm.
 *
 * Every such file is /dev/shm/opal-mca.<uid>.<jobid>.<kind>.<pid>, the
 * name btl/sm gives its segment for rank <pid> of job <jobid>
 * (kind "btl_sm"), and na/btl its card ("card", "cardtmp" while written),
 * so that the owner's uid and pid can be read back from the name.
 */
#ifndef OPAL_MCA_NA_BTL_NA_BTL_RTE_H
#define OPAL_MCA_NA_BTL_NA_BTL_RTE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

/* The job every process started alone belongs to (its rank is its pid);
 * far above the job ids mcarun gives. */
#define NA_BTL_STANDALONE_JOBID 0xfffffff0u

#define NA_BTL_SHM_NAME_MAX 128
#define NA_BTL_SHM_CARD     "card"
#define NA_BTL_SHM_CARD_TMP "cardtmp"

/* "/opal-mca.<uid>.<jobid>.<kind>.<pid>" (for shm_open) into name. */
int na_btl_shm_name(const char *kind, uint32_t pid, char *name, size_t size);

#endif /* OPAL_MCA_NA_BTL_NA_BTL_RTE_H */
