/*
 * The group file (CaRT's group config file; the format is in
 * docs/rpc.md): what opal_rpc_group_save writes and
 * opal_rpc_group_attach reads. The parser takes bytes and names, so the
 * fuzz target drives it without files.
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_FILE_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_FILE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc_group.h"

/* The first line of every group file. */
#define OPAL_RPC_GROUP_FILE_MAGIC "opal_rpc_group 1"
/* Groups a file may describe at most (a bound on what a file makes us
 * allocate). */
#define OPAL_RPC_GROUP_FILE_MAX_SIZE (1u << 20)

typedef struct rpc_group_file_t {
    char name[OPAL_RPC_GROUP_NAME_MAX + 1];
    uint64_t version;
    uint32_t size;
    /* Per rank (size of each), owned. */
    long *pids;
    char **hosts;
    char **uris;
    uint32_t *lines; /* the line each rank was on, for messages */
} rpc_group_file_t;

/* Parses text (len bytes, not necessarily NUL-terminated) into *file
 * (zeroed first). On error returns OPAL_ERR_PARSE with "source:line:
 * reason" in why, and *file empty. */
OPAL_DECLSPEC int opal_rpc_base_group_file_parse(const char *text, size_t len, const char *source,
                                                 rpc_group_file_t *file, char *why,
                                                 size_t why_size);
/* True for a group name: 1..OPAL_RPC_GROUP_NAME_MAX letters, digits,
 * '_', '-', '.'. */
OPAL_DECLSPEC bool opal_rpc_base_group_name_ok(const char *name);
/* Releases what parse allocated. */
OPAL_DECLSPEC void opal_rpc_base_group_file_free(rpc_group_file_t *file);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_FILE_H */
