/*
 * What opal_proc.c and opal_proc_locality.c share, and what the tests of
 * opal_proc reach directly. Not installed.
 */
#ifndef OPAL_RUNTIME_OPAL_PROC_INTERNAL_H
#define OPAL_RUNTIME_OPAL_PROC_INTERNAL_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/runtime/opal_proc.h"

/* Fills proc's node id, host name and cpuset from the record rank
 * published (size bytes, not NUL-terminated). OPAL_ERR_PROTOCOL, after a
 * message naming rank and the record, when it is malformed. */
OPAL_DECLSPEC int opal_proc_decode_record(uint32_t rank, const void *value, size_t size,
                                          opal_proc_t *proc);

/* Unloads the machine topology opal_proc_compute_locality and
 * opal_proc_get_binding loaded, if any. */
void opal_proc_topology_release(void);

#endif /* OPAL_RUNTIME_OPAL_PROC_INTERNAL_H */
