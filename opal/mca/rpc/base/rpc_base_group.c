/*
 * rpc groups: the primary group (the job's ranks, addresses from the
 * modex), subgroups (lists of primary ranks), groups attached from a file
 * (rpc_base_group_file.c), the registry by name, membership states with
 * their version, and endpoints (group, rank, context).
 *
 * Lock order: the registry's lock before a group's lock; a subgroup's
 * lock before the primary group's (an endpoint of a subgroup is the
 * primary's), never the other way.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static opal_mutex_t registry_lock;
static opal_rpc_group_t *registry;
static bool registry_ready = false;

static opal_rpc_group_t *group_new(const char *name, rpc_group_kind_t kind, uint32_t size)
{
    opal_rpc_group_t *g = calloc(1, sizeof(*g));
    if (NULL == g) {
        return NULL;
    }
    snprintf(g->name, sizeof(g->name), "%s", name);
    g->kind = kind;
    g->size = size;
    g->self = UINT32_MAX;
    g->version = 1;
    g->state = calloc(size, sizeof(*g->state));
    g->addrs = calloc(size, sizeof(*g->addrs));
    if (NULL == g->state || NULL == g->addrs) {
        free(g->state);
        free(g->addrs);
        free(g);
        return NULL;
    }
    OBJ_CONSTRUCT(&g->lock, opal_mutex_t);
    return g;
}

static void group_free(opal_rpc_group_t *g)
{
    for (uint32_t r = 0; r < g->size; ++r) {
        opal_rpc_addr_free(g->addrs[r]);
        if (NULL != g->uris) {
            free(g->uris[r]);
        }
        if (NULL != g->hosts) {
            free(g->hosts[r]);
        }
    }
    free(g->uris);
    free(g->hosts);
    free(g->pids);
    free(g->addrs);
    free(g->state);
    free(g->primary_ranks);
    OBJ_DESTRUCT(&g->lock);
    free(g);
}

/* Under registry_lock. */
static opal_rpc_group_t *find(const char *name)
{
    for (opal_rpc_group_t *g = registry; NULL != g; g = g->next) {
        if (0 == strcmp(g->name, name)) {
            return g;
        }
    }
    return NULL;
}

int opal_rpc_base_group_add(opal_rpc_group_t *g)
{
    opal_mutex_lock(&registry_lock);
    if (NULL != find(g->name)) {
        opal_mutex_unlock(&registry_lock);
        opal_output(0, "rpc: a group named '%s' exists already", g->name);
        return OPAL_ERR_EXISTS;
    }
    g->next = registry;
    registry = g;
    opal_mutex_unlock(&registry_lock);
    return OPAL_SUCCESS;
}

opal_rpc_group_t *opal_rpc_base_group_alloc(const char *name, rpc_group_kind_t kind, uint32_t size)
{
    return group_new(name, kind, size);
}

void opal_rpc_base_group_release(opal_rpc_group_t *g)
{
    group_free(g);
}

int opal_rpc_base_group_init(void)
{
    OBJ_CONSTRUCT(&registry_lock, opal_mutex_t);
    registry = NULL;
    registry_ready = true;
    if (NULL == opal_rpc_engine.na || !opal_rte_installed() || NULL == opal_proc_job_info()) {
        return OPAL_SUCCESS;
    }
    /* Every rank publishes where its RPC listens, and who it is (pid and
     * host: what a group file records to tell a stale file). A na/btl URI
     * carries the business card of every BTL: over 1 KiB with sm and ofi. */
    char uri[8192], proc[512];
    size_t size = sizeof(uri);
    int rc = opal_rpc_self_uri(uri, &size);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    char host[256] = "";
    (void) gethostname(host, sizeof(host) - 1);
    snprintf(proc, sizeof(proc), "%ld %s", (long) getpid(), host);
    if (OPAL_SUCCESS != (rc = opal_modex_send(OPAL_RPC_MODEX_URI, uri, strlen(uri) + 1,
                                              OPAL_MODEX_SCOPE_GLOBAL)) ||
        OPAL_SUCCESS != (rc = opal_modex_send(OPAL_RPC_MODEX_PROC, proc, strlen(proc) + 1,
                                              OPAL_MODEX_SCOPE_GLOBAL)) ||
        OPAL_SUCCESS != (rc = opal_modex_commit())) {
        opal_output(0, "rpc: publishing this rank's URI in the modex (%s): %s", opal_rte_name(),
                    opal_strerror(rc));
    }
    return rc;
}

void opal_rpc_base_group_fini(void)
{
    if (!registry_ready) {
        return;
    }
    while (NULL != registry) {
        opal_rpc_group_t *g = registry;
        registry = g->next;
        group_free(g);
    }
    OBJ_DESTRUCT(&registry_lock);
    registry_ready = false;
}

int opal_rpc_group_primary(opal_rpc_group_t **group)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (NULL == group) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (!registry_ready) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (NULL == opal_rpc_engine.na || NULL == job || !opal_rte_installed()) {
        opal_output(0, "rpc: no primary group: %s",
                    NULL == opal_rpc_engine.na ? "the engine has no network (opal_rpc_init(NULL))"
                                               : "this process is not part of a job (orte_init)");
        return OPAL_ERR_NOT_AVAILABLE;
    }
    opal_mutex_lock(&registry_lock);
    opal_rpc_group_t *g = registry;
    while (NULL != g && RPC_GROUP_PRIMARY != g->kind) {
        g = g->next;
    }
    if (NULL == g) {
        g = group_new(OPAL_RPC_GROUP_PRIMARY, RPC_GROUP_PRIMARY, job->size);
        if (NULL == g) {
            opal_mutex_unlock(&registry_lock);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        g->self = job->my_name.vpid;
        g->next = registry;
        registry = g;
    }
    opal_mutex_unlock(&registry_lock);
    *group = g;
    return OPAL_SUCCESS;
}

int opal_rpc_group_create(const char *name, const uint32_t *ranks, uint32_t count,
                          opal_rpc_group_t **group)
{
    opal_rpc_group_t *primary = NULL;
    if (!opal_rpc_base_group_name_ok(name)) {
        opal_output(0,
                    "rpc: bad group name '%s' (1..%d characters of letters, digits, '_', '-', "
                    "'.')",
                    NULL == name ? "(null)" : name, OPAL_RPC_GROUP_NAME_MAX);
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == ranks || 0 == count || NULL == group) {
        opal_output(0, "rpc: group '%s' has no ranks", name);
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_rpc_group_primary(&primary);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    for (uint32_t i = 0; i < count; ++i) {
        if (ranks[i] >= primary->size) {
            opal_output(0, "rpc: group '%s': rank %u is not in the job (%u ranks)", name, ranks[i],
                        primary->size);
            return OPAL_ERR_BAD_PARAM;
        }
        for (uint32_t j = 0; j < i; ++j) {
            if (ranks[j] == ranks[i]) {
                opal_output(0, "rpc: group '%s': rank %u is listed twice", name, ranks[i]);
                return OPAL_ERR_BAD_PARAM;
            }
        }
    }
    opal_rpc_group_t *g = group_new(name, RPC_GROUP_SUB, count);
    if (NULL == g || NULL == (g->primary_ranks = malloc(count * sizeof(uint32_t)))) {
        if (NULL != g) {
            group_free(g);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(g->primary_ranks, ranks, count * sizeof(uint32_t));
    for (uint32_t i = 0; i < count; ++i) {
        if (ranks[i] == primary->self) {
            g->self = i;
        }
        opal_rpc_member_state_t s;
        (void) opal_rpc_group_member_state(primary, ranks[i], &s);
        g->state[i] = s;
    }
    g->parent = primary;
    rc = opal_rpc_base_group_add(g);
    if (OPAL_SUCCESS != rc) {
        group_free(g);
        return rc;
    }
    *group = g;
    return OPAL_SUCCESS;
}

int opal_rpc_group_destroy(opal_rpc_group_t *group)
{
    if (NULL == group) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (RPC_GROUP_PRIMARY == group->kind) {
        opal_output(0, "rpc: the primary group is destroyed by opal_rpc_finalize");
        return OPAL_ERR_BAD_PARAM;
    }
    opal_mutex_lock(&registry_lock);
    opal_rpc_group_t **p = &registry;
    while (NULL != *p && *p != group) {
        p = &(*p)->next;
    }
    if (NULL == *p) {
        opal_mutex_unlock(&registry_lock);
        return OPAL_ERR_NOT_FOUND;
    }
    *p = group->next;
    opal_mutex_unlock(&registry_lock);
    group_free(group);
    return OPAL_SUCCESS;
}

opal_rpc_group_t *opal_rpc_group_lookup(const char *name)
{
    if (NULL == name || !registry_ready) {
        return NULL;
    }
    if (0 == strcmp(name, OPAL_RPC_GROUP_PRIMARY)) {
        opal_rpc_group_t *g = NULL;
        return OPAL_SUCCESS == opal_rpc_group_primary(&g) ? g : NULL;
    }
    opal_mutex_lock(&registry_lock);
    opal_rpc_group_t *g = find(name);
    opal_mutex_unlock(&registry_lock);
    return g;
}

const char *opal_rpc_group_name(const opal_rpc_group_t *group)
{
    return group->name;
}

uint32_t opal_rpc_group_size(const opal_rpc_group_t *group)
{
    return group->size;
}

int opal_rpc_group_rank(const opal_rpc_group_t *group, uint32_t *rank)
{
    if (UINT32_MAX == group->self) {
        return OPAL_ERR_NOT_FOUND;
    }
    *rank = group->self;
    return OPAL_SUCCESS;
}

uint64_t opal_rpc_group_version(opal_rpc_group_t *group)
{
    opal_mutex_lock(&group->lock);
    uint64_t v = group->version;
    opal_mutex_unlock(&group->lock);
    return v;
}

static bool set_state(opal_rpc_group_t *g, uint32_t rank, opal_rpc_member_state_t state)
{
    opal_mutex_lock(&g->lock);
    bool changed = g->state[rank] != state;
    if (changed) {
        g->state[rank] = state;
        ++g->version;
    }
    opal_mutex_unlock(&g->lock);
    return changed;
}

int opal_rpc_group_member_set_state(opal_rpc_group_t *group, uint32_t rank,
                                    opal_rpc_member_state_t state)
{
    if (NULL == group || rank >= group->size ||
        (OPAL_RPC_MEMBER_ALIVE != state && OPAL_RPC_MEMBER_SUSPECT != state &&
         OPAL_RPC_MEMBER_DEAD != state)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (!set_state(group, rank, state) || RPC_GROUP_PRIMARY != group->kind) {
        return OPAL_SUCCESS;
    }
    /* The primary rank's state holds in every subgroup that has it. */
    opal_mutex_lock(&registry_lock);
    for (opal_rpc_group_t *g = registry; NULL != g; g = g->next) {
        if (RPC_GROUP_SUB != g->kind) {
            continue;
        }
        for (uint32_t i = 0; i < g->size; ++i) {
            if (g->primary_ranks[i] == rank) {
                (void) set_state(g, i, state);
            }
        }
    }
    opal_mutex_unlock(&registry_lock);
    return OPAL_SUCCESS;
}

int opal_rpc_group_member_state(opal_rpc_group_t *group, uint32_t rank,
                                opal_rpc_member_state_t *state)
{
    if (NULL == group || rank >= group->size || NULL == state) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_mutex_lock(&group->lock);
    *state = group->state[rank];
    opal_mutex_unlock(&group->lock);
    return OPAL_SUCCESS;
}

/* A primary rank's URI from the modex, malloc'd. */
int opal_rpc_base_group_modex_uri(uint32_t rank, const char *key, char **text)
{
    void *value = NULL;
    size_t size = 0;
    const opal_proc_job_info_t *job = opal_proc_job_info();
    int rc = opal_modex_recv(rank, key, &value, &size,
                             NULL == job ? OPAL_MODEX_WAIT_FOREVER : job->lookup_timeout_ns);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: rank %u's %s is not in the modex: %s", rank, key, opal_strerror(rc));
        return rc;
    }
    if (0 == size || '\0' != ((char *) value)[size - 1] || strlen(value) + 1 != size) {
        opal_output(0, "rpc: rank %u published a malformed %s (%zu bytes)", rank, key, size);
        free(value);
        return OPAL_ERR_PROTOCOL;
    }
    *text = value;
    return OPAL_SUCCESS;
}

/* Under g->lock: the address of rank, looked up on first use. */
static int member_addr(opal_rpc_group_t *g, uint32_t rank, opal_na_addr_t **addr)
{
    if (NULL != g->addrs[rank]) {
        *addr = g->addrs[rank];
        return OPAL_SUCCESS;
    }
    char *uri = NULL;
    int rc;
    if (RPC_GROUP_ATTACHED == g->kind) {
        uri = g->uris[rank];
        rc = opal_rpc_addr_lookup(uri, &g->addrs[rank]);
    } else {
        rc = opal_rpc_base_group_modex_uri(rank, OPAL_RPC_MODEX_URI, &uri);
        if (OPAL_SUCCESS == rc) {
            rc = opal_rpc_addr_lookup(uri, &g->addrs[rank]);
        }
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: group '%s', rank %u: looking up %s: %s", g->name, rank,
                    NULL == uri ? "its URI" : uri, opal_strerror(rc));
    }
    if (RPC_GROUP_ATTACHED != g->kind) {
        free(uri);
    }
    *addr = g->addrs[rank];
    return rc;
}

int opal_rpc_group_endpoint(opal_rpc_group_t *group, uint32_t rank, uint8_t ctx_idx,
                            opal_rpc_endpoint_t *ep)
{
    if (NULL == group || NULL == ep || rank >= group->size) {
        opal_output(0, "rpc: endpoint of rank %u in group '%s' (%u ranks)", rank,
                    NULL == group ? "(null)" : group->name, NULL == group ? 0 : group->size);
        return OPAL_ERR_BAD_PARAM;
    }
    if (RPC_GROUP_SUB == group->kind) {
        return opal_rpc_group_endpoint(group->parent, group->primary_ranks[rank], ctx_idx, ep);
    }
    ep->ctx_idx = ctx_idx;
    if (rank == group->self) {
        ep->addr = NULL;
        return OPAL_SUCCESS;
    }
    opal_mutex_lock(&group->lock);
    int rc = member_addr(group, rank, &ep->addr);
    opal_mutex_unlock(&group->lock);
    return rc;
}
