/*
 * The per-peer multiplexer: asks every module which of the new peers it
 * reaches, ranks the modules per peer, and keeps the result in a table
 * indexed by rank. Modules a peer does not use (no send flag, or more
 * than MCA_BTL_BASE_MUX_MAX of them) forget it at once, so that a peer's
 * send[] holds every endpoint left to release.
 *
 * Peers are added and removed from one thread (initialisation and
 * finalisation); the table is read without a lock on the send path.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_internal.h"
#include "opal/mca/btl/base/btl_base_mux_internal.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

mca_btl_base_peer_t **mca_btl_base_peers = NULL;
size_t mca_btl_base_peers_size = 0;

static void peer_construct(mca_btl_base_peer_t *peer)
{
    peer->proc = NULL;
    peer->rank = 0;
    peer->send_count = 0;
    peer->rdma_count = 0;
    memset(peer->send, 0, sizeof(peer->send));
    memset(peer->rdma, 0, sizeof(peer->rdma));
}

static void peer_destruct(mca_btl_base_peer_t *peer)
{
    if (NULL != peer->proc) {
        OBJ_RELEASE(peer->proc);
    }
}

OBJ_CLASS_INSTANCE(mca_btl_base_peer_t, opal_object_t, peer_construct, peer_destruct);

/* < 0 when a is the better module for a peer. */
static int rank_compare(const mca_btl_base_module_t *a, const mca_btl_base_module_t *b)
{
    if (a->btl_exclusivity != b->btl_exclusivity) {
        return a->btl_exclusivity > b->btl_exclusivity ? -1 : 1;
    }
    if (a->btl_latency != b->btl_latency) {
        return a->btl_latency < b->btl_latency ? -1 : 1;
    }
    if (a->btl_bandwidth != b->btl_bandwidth) {
        return a->btl_bandwidth > b->btl_bandwidth ? -1 : 1;
    }
    return 0;
}

static int grow_table(uint32_t rank)
{
    if (rank < mca_btl_base_peers_size) {
        return OPAL_SUCCESS;
    }
    size_t size = 0 == mca_btl_base_peers_size ? 16 : mca_btl_base_peers_size;
    while (size <= rank) {
        size *= 2;
    }
    mca_btl_base_peer_t **bigger = realloc(mca_btl_base_peers, size * sizeof(*bigger));
    if (NULL == bigger) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memset(bigger + mca_btl_base_peers_size, 0, (size - mca_btl_base_peers_size) * sizeof(*bigger));
    mca_btl_base_peers = bigger;
    mca_btl_base_peers_size = size;
    return OPAL_SUCCESS;
}

/* Inserts (btl, endpoint) into peer's send list by rank, equal ones
 * keeping the order modules were asked. Returns the entry that no longer
 * fits (the worst), or an empty entry when all fit. */
static mca_btl_base_mux_entry_t insert_send(mca_btl_base_peer_t *peer, mca_btl_base_module_t *btl,
                                            struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_base_mux_entry_t entry = {.btl = btl, .endpoint = endpoint};
    int pos = peer->send_count;
    while (pos > 0 && rank_compare(btl, peer->send[pos - 1].btl) < 0) {
        --pos;
    }
    if (pos == MCA_BTL_BASE_MUX_MAX) {
        return entry;
    }
    mca_btl_base_mux_entry_t dropped = {NULL, NULL};
    if (peer->send_count == MCA_BTL_BASE_MUX_MAX) {
        dropped = peer->send[MCA_BTL_BASE_MUX_MAX - 1];
        --peer->send_count;
    }
    memmove(&peer->send[pos + 1], &peer->send[pos],
            (size_t) (peer->send_count - pos) * sizeof(peer->send[0]));
    peer->send[pos] = entry;
    ++peer->send_count;
    return dropped;
}

static void rebuild_rdma(mca_btl_base_peer_t *peer)
{
    peer->rdma_count = 0;
    for (int i = 0; i < peer->send_count; ++i) {
        if (MCA_BTL_FLAGS_RDMA == (peer->send[i].btl->btl_flags & MCA_BTL_FLAGS_RDMA)) {
            peer->rdma[peer->rdma_count++] = peer->send[i];
        }
    }
}

/* A module reached a proc the peer will not use it for: it forgets the
 * proc at once (its endpoint would otherwise never be released). */
static void forget(mca_btl_base_module_t *btl, opal_proc_t *proc,
                   struct mca_btl_base_endpoint_t *endpoint)
{
    if (NULL != btl->btl_del_procs) {
        (void) btl->btl_del_procs(btl, 1, &proc, &endpoint);
    }
}

static const char *module_name(const mca_btl_base_module_t *btl)
{
    return NULL != btl->btl_component ? btl->btl_component->btl_version.mca_component_name : "?";
}

/* Asks one module about the new procs and files the answers. */
static int ask_module(mca_btl_base_module_t *btl, size_t n, opal_proc_t **procs,
                      mca_btl_base_peer_t **peers, mca_btl_base_mux_attempts_t *attempts, int index)
{
    struct mca_btl_base_endpoint_t **endpoints = calloc(n, sizeof(*endpoints));
    opal_bitmap_t reachable;
    OBJ_CONSTRUCT(&reachable, opal_bitmap_t);
    int rc = NULL == endpoints ? OPAL_ERR_OUT_OF_RESOURCE : opal_bitmap_init(&reachable, (int) n);
    if (OPAL_SUCCESS == rc) {
        rc = btl->btl_add_procs(btl, n, procs, endpoints, &reachable,
                                mca_btl_base_mux_attempt_reasons(attempts, index));
        if (OPAL_SUCCESS != rc) {
            opal_output(mca_btl_base_output, "%s: add_procs failed: %s", module_name(btl),
                        opal_strerror(rc));
            mca_btl_base_mux_attempt_failed(attempts, index, rc);
            /* What it set up before failing is not used: released now. */
            for (size_t i = 0; i < n; ++i) {
                if (opal_bitmap_is_set_bit(&reachable, (int) i) && NULL != endpoints[i]) {
                    forget(btl, procs[i], endpoints[i]);
                }
            }
        }
    }
    for (size_t i = 0; OPAL_SUCCESS == rc && i < n; ++i) {
        if (!opal_bitmap_is_set_bit(&reachable, (int) i)) {
            continue;
        }
        if (NULL == endpoints[i]) {
            mca_btl_base_mux_attempt_note(attempts, index, i,
                                          "add_procs marked the peer reachable without an "
                                          "endpoint");
            continue;
        }
        if (0 == (btl->btl_flags & MCA_BTL_FLAGS_SEND)) {
            mca_btl_base_mux_attempt_note(attempts, index, i,
                                          "reaches the peer but cannot send (its flags lack "
                                          "send)");
            forget(btl, procs[i], endpoints[i]);
            continue;
        }
        mca_btl_base_mux_entry_t dropped = insert_send(peers[i], btl, endpoints[i]);
        if (NULL != dropped.btl) {
            opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, mca_btl_base_output,
                                "rank %" PRIu32 ": more than %d modules reach it: %s not used",
                                peers[i]->rank, MCA_BTL_BASE_MUX_MAX, module_name(dropped.btl));
            forget(dropped.btl, procs[i], dropped.endpoint);
        }
    }
    OBJ_DESTRUCT(&reachable);
    free(endpoints);
    return rc;
}

static void log_peer(const mca_btl_base_peer_t *peer)
{
    if (!opal_output_check_verbosity(MCA_BASE_VERBOSE_COMPONENT, mca_btl_base_output)) {
        return;
    }
    char line[512];
    size_t len = 0;
    for (int i = 0; i < peer->send_count && len < sizeof(line); ++i) {
        int n = snprintf(line + len, sizeof(line) - len, "%s%s", 0 == i ? "" : ", ",
                         module_name(peer->send[i].btl));
        len += n > 0 ? (size_t) n : 0;
    }
    opal_output(mca_btl_base_output, "rank %" PRIu32 " on %s: send over %s; rdma over %s",
                peer->rank, NULL != peer->proc->proc_hostname ? peer->proc->proc_hostname : "?",
                line, 0 < peer->rdma_count ? module_name(peer->rdma[0].btl) : "none");
}

int mca_btl_base_add_procs(opal_proc_t **procs, size_t nprocs)
{
    if (!mca_btl_base_initialized()) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (0 == nprocs) {
        return OPAL_SUCCESS;
    }
    if (NULL == procs) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* The procs not added yet; a proc listed twice counts once. */
    opal_proc_t **fresh = calloc(nprocs, sizeof(*fresh));
    mca_btl_base_peer_t **peers = calloc(nprocs, sizeof(*peers));
    size_t n = 0;
    int rc = NULL == fresh || NULL == peers ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    for (size_t i = 0; OPAL_SUCCESS == rc && i < nprocs; ++i) {
        opal_proc_t *proc = procs[i];
        if (NULL == proc) {
            rc = OPAL_ERR_BAD_PARAM;
            break;
        }
        uint32_t rank = proc->proc_name.vpid;
        if (NULL != mca_btl_base_peer_get(rank)) {
            continue;
        }
        rc = grow_table(rank);
        if (OPAL_SUCCESS != rc) {
            break;
        }
        mca_btl_base_peer_t *peer = OBJ_NEW(mca_btl_base_peer_t);
        if (NULL == peer) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        OBJ_RETAIN(proc);
        peer->proc = proc;
        peer->rank = rank;
        /* In the table while being ranked, so that a duplicate is skipped. */
        mca_btl_base_peers[rank] = peer;
        fresh[n] = proc;
        peers[n] = peer;
        ++n;
    }
    mca_btl_base_mux_attempts_t *attempts = NULL;
    if (OPAL_SUCCESS == rc && n > 0) {
        attempts = mca_btl_base_mux_attempts_new(n);
        if (NULL == attempts) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    int first_error = OPAL_SUCCESS;
    if (OPAL_SUCCESS == rc && n > 0) {
        mca_btl_base_selected_module_t *sm;
        OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
            int index = mca_btl_base_mux_attempt_add(attempts, sm->btl_module);
            if (index < 0) {
                rc = index;
                break;
            }
            int mrc = ask_module(sm->btl_module, n, fresh, peers, attempts, index);
            if (OPAL_SUCCESS != mrc && OPAL_SUCCESS == first_error) {
                first_error = mrc;
            }
        }
    }
    size_t unreached = 0;
    for (size_t i = 0; OPAL_SUCCESS == rc && i < n; ++i) {
        rebuild_rdma(peers[i]);
        if (0 == peers[i]->send_count) {
            ++unreached;
        } else {
            log_peer(peers[i]);
        }
    }
    if (OPAL_SUCCESS == rc && unreached > 0) {
        mca_btl_base_mux_report_unreachable(attempts, n, peers);
    }
    /* Unreached peers (and all new ones after a failure of the base
     * itself) leave the table; the peers that were reached stay. */
    for (size_t i = 0; i < n; ++i) {
        if (OPAL_SUCCESS == rc && 0 != peers[i]->send_count) {
            continue;
        }
        for (int k = 0; k < peers[i]->send_count; ++k) {
            forget(peers[i]->send[k].btl, peers[i]->proc, peers[i]->send[k].endpoint);
        }
        mca_btl_base_peers[peers[i]->rank] = NULL;
        OBJ_RELEASE(peers[i]);
    }
    mca_btl_base_mux_attempts_free(attempts);
    free(peers);
    free(fresh);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (unreached > 0) {
        return OPAL_ERR_UNREACH;
    }
    return first_error;
}

int mca_btl_base_add_all_procs(void)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (!mca_btl_base_initialized() || NULL == job) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    opal_proc_t **procs = calloc(job->size, sizeof(*procs));
    if (NULL == procs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_SUCCESS;
    for (uint32_t rank = 0; rank < job->size; ++rank) {
        rc = opal_proc_for_rank(rank, &procs[rank]);
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "btl: cannot look up rank %" PRIu32 " of %" PRIu32 ": %s", rank,
                        job->size, opal_strerror(rc));
            break;
        }
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_base_add_procs(procs, job->size);
    }
    free(procs);
    return rc;
}

/* Removes peers[0..n) from the table: each module forgets the procs it
 * reaches among them in one del_procs call, then the peers go. */
static void release_peers(mca_btl_base_peer_t **peers, size_t n)
{
    opal_proc_t **procs = calloc(n, sizeof(*procs));
    struct mca_btl_base_endpoint_t **endpoints = calloc(n, sizeof(*endpoints));
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        mca_btl_base_module_t *btl = sm->btl_module;
        size_t count = 0;
        for (size_t i = 0; i < n; ++i) {
            for (int k = 0; k < peers[i]->send_count; ++k) {
                if (peers[i]->send[k].btl != btl) {
                    continue;
                }
                if (NULL == procs || NULL == endpoints) {
                    /* Out of memory: one at a time. */
                    forget(btl, peers[i]->proc, peers[i]->send[k].endpoint);
                } else {
                    procs[count] = peers[i]->proc;
                    endpoints[count] = peers[i]->send[k].endpoint;
                    ++count;
                }
            }
        }
        if (count > 0 && NULL != btl->btl_del_procs) {
            (void) btl->btl_del_procs(btl, count, procs, endpoints);
        }
    }
    for (size_t i = 0; i < n; ++i) {
        mca_btl_base_peers[peers[i]->rank] = NULL;
        OBJ_RELEASE(peers[i]);
    }
    free(endpoints);
    free(procs);
}

int mca_btl_base_del_procs(opal_proc_t **procs, size_t nprocs)
{
    if (!mca_btl_base_initialized()) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (0 == nprocs) {
        return OPAL_SUCCESS;
    }
    mca_btl_base_peer_t **peers = calloc(nprocs, sizeof(*peers));
    if (NULL == peers) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    size_t n = 0;
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL == procs[i]) {
            continue;
        }
        mca_btl_base_peer_t *peer = mca_btl_base_peer_get(procs[i]->proc_name.vpid);
        bool listed = false;
        for (size_t k = 0; k < n && !listed; ++k) {
            listed = peers[k] == peer;
        }
        if (NULL != peer && !listed) {
            peers[n++] = peer;
        }
    }
    release_peers(peers, n);
    free(peers);
    return OPAL_SUCCESS;
}

void mca_btl_base_mux_release(void)
{
    size_t n = 0;
    mca_btl_base_peer_t **list = calloc(mca_btl_base_peers_size + 1, sizeof(*list));
    for (size_t rank = 0; rank < mca_btl_base_peers_size; ++rank) {
        mca_btl_base_peer_t *peer = mca_btl_base_peers[rank];
        if (NULL == peer) {
            continue;
        }
        if (NULL != list) {
            list[n++] = peer;
        } else {
            release_peers(&peer, 1);
        }
    }
    if (n > 0) {
        release_peers(list, n);
    }
    free(list);
    free(mca_btl_base_peers);
    mca_btl_base_peers = NULL;
    mca_btl_base_peers_size = 0;
}

void mca_btl_base_mux_describe(const mca_btl_base_peer_t *peer, char *buf, size_t size)
{
    if (0 == size) {
        return;
    }
    buf[0] = '\0';
    size_t len = 0;
    /* rdma[] holds modules of send[] only: send[] names each once. */
    for (int i = 0; i < peer->send_count && len < size; ++i) {
        const mca_btl_base_mux_entry_t *e = &peer->send[i];
        char line[512] = "(no state to show)";
        if (NULL != e->btl->btl_dump) {
            e->btl->btl_dump(e->btl, e->endpoint, line, sizeof(line));
        }
        int n = snprintf(buf + len, size - len, "%s%s: %s", 0 == len ? "" : "; ",
                         module_name(e->btl), line);
        len += n > 0 ? (size_t) n : 0;
    }
}
