/*
 * opal_perf's start-up and shut-down over the btl: the tags, the btl
 * framework, the modules that reach the peer (the best send module, and a
 * module that can get for rendezvous), the buffers and their registration,
 * and the hello with the peer that checks both run the same plan and agree
 * on rendezvous.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_proc.h"
#include "tools/opal_perf/opal_perf.h"
#include "opal/util/opal_error.h"

/* The first of the peer's RDMA modules that can serve rendezvous. */
static void pick_rdma(perf_t *p, const mca_btl_base_peer_t *peer)
{
    for (int i = 0; i < peer->rdma_count; ++i) {
        mca_btl_base_module_t *btl = peer->rdma[i].btl;
        size_t hsize = btl->btl_registration_handle_size;
        /* The request (header + handle) goes as one eager message. */
        if (0 != (btl->btl_flags & MCA_BTL_FLAGS_GET) && NULL != btl->btl_get &&
            hsize <= PERF_MAX_HANDLE_SIZE && (0 == hsize || NULL != btl->btl_register_mem) &&
            perf_rndv_request_size(hsize) <= p->eager_limit) {
            p->rdma_btl = btl;
            p->rdma_ep = peer->rdma[i].endpoint;
            p->handle_size = hsize;
            return;
        }
    }
}

/* The largest single get: the module's pipeline fragment and get limit
 * (0: no limit), rounded down to its alignment; PERF_MAX_SIZE when the
 * module has no limit below it. */
static size_t get_piece_size(const mca_btl_base_module_t *btl)
{
    size_t piece = PERF_MAX_SIZE;
    if (btl->btl_rdma_pipeline_frag_size > 0 && btl->btl_rdma_pipeline_frag_size < piece) {
        piece = btl->btl_rdma_pipeline_frag_size;
    }
    if (btl->btl_get_limit > 0 && btl->btl_get_limit < piece) {
        piece = btl->btl_get_limit;
    }
    size_t align = btl->btl_get_alignment > 1 ? btl->btl_get_alignment : 1;
    return piece > align ? piece / align * align : align;
}

static int reach_peer(perf_t *p)
{
    opal_proc_t *proc = NULL;
    int rc = opal_proc_for_rank(p->peer_rank, &proc);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": cannot look up rank %" PRIu32 ": %s\n",
                p->rank, p->peer_rank, opal_strerror(rc));
        return rc;
    }
    /* On failure the base has said, module by module, why. */
    rc = mca_btl_base_add_procs(&proc, 1);
    mca_btl_base_peer_t *peer = mca_btl_base_peer_get(p->peer_rank);
    if (OPAL_SUCCESS != rc || NULL == peer || peer->send_count < 1) {
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": no btl module reaches rank %" PRIu32 "%s\n",
                p->rank, p->peer_rank, p->loopback ? " (itself: is btl/self selected?)" : "");
        return OPAL_SUCCESS != rc ? rc : OPAL_ERR_UNREACH;
    }
    p->send_btl = peer->send[0].btl;
    p->send_ep = peer->send[0].endpoint;
    p->eager_limit = p->send_btl->btl_eager_limit;
    p->frag_size = p->send_btl->btl_max_send_size;
    if (0 == p->frag_size || NULL == p->send_btl->btl_prepare_src ||
        NULL == p->send_btl->btl_alloc) {
        fprintf(stderr,
                "opal_perf: rank %" PRIu32 ": btl %s has no usable send (max_send_size %zu)\n",
                p->rank, p->send_btl->btl_component->btl_version.mca_component_name, p->frag_size);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    pick_rdma(p, peer);
    return OPAL_SUCCESS;
}

static int alloc_buffers(perf_t *p, size_t max_size)
{
    size_t align = NULL != p->rdma_btl && p->rdma_btl->btl_get_alignment > 1
                       ? p->rdma_btl->btl_get_alignment
                       : 1;
    /* Page-aligned, with room for a get rounded up to the alignment. */
    p->buf_size = (max_size + align + 4095) / 4096 * 4096;
    void *s = NULL, *r = NULL;
    if (0 != posix_memalign(&s, 4096, p->buf_size) || 0 != posix_memalign(&r, 4096, p->buf_size)) {
        free(s);
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": cannot allocate 2 x %zu bytes\n", p->rank,
                p->buf_size);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    p->sbuf = s;
    p->rbuf = r;
    /* Touched now, so that no page fault is timed. */
    memset(p->sbuf, 0xa5, p->buf_size);
    memset(p->rbuf, 0, p->buf_size);
    size_t ring = 2;
    while (ring < 2 * (size_t) p->opts.window + 2) {
        ring *= 2;
    }
    p->rndv = calloc(ring, sizeof(*p->rndv));
    if (NULL == p->rndv) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    p->rndv_mask = ring - 1;
    return OPAL_SUCCESS;
}

static int register_buffers(perf_t *p)
{
    mca_btl_base_module_t *btl = p->rdma_btl;
    if (0 == p->handle_size) {
        return OPAL_SUCCESS;
    }
    p->sreg = btl->btl_register_mem(btl, p->rdma_ep, p->sbuf, p->buf_size,
                                    MCA_BTL_REG_FLAG_LOCAL_READ | MCA_BTL_REG_FLAG_REMOTE_READ);
    p->rreg = btl->btl_register_mem(btl, p->rdma_ep, p->rbuf, p->buf_size,
                                    MCA_BTL_REG_FLAG_LOCAL_WRITE | MCA_BTL_REG_FLAG_REMOTE_WRITE);
    if (NULL == p->sreg || NULL == p->rreg) {
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": btl %s cannot register 2 x %zu bytes\n",
                p->rank, btl->btl_component->btl_version.mca_component_name, p->buf_size);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

/* Both sides check they run the same plan and agree on rendezvous. */
static int hello(perf_t *p, uint64_t digest)
{
    if (p->loopback) {
        return OPAL_SUCCESS;
    }
    int rc = perf_send_hello(p, digest);
    if (OPAL_SUCCESS == rc) {
        rc = perf_wait(p, &p->rx_hello, 1);
    }
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": start-up with rank %" PRIu32 " failed: %s\n",
                p->rank, p->peer_rank, p->failure);
        return rc;
    }
    if (p->peer_digest != digest) {
        fprintf(stderr,
                "opal_perf: rank %" PRIu32 ": rank %" PRIu32
                " was started with other arguments: give every rank the same command line\n",
                p->rank, p->peer_rank);
        return OPAL_ERR_BAD_PARAM;
    }
    /* Rendezvous needs each side to get with the same component, so that
     * the handle one sends means something to the other. */
    if (NULL != p->rdma_btl &&
        (p->peer_handle_size != p->handle_size ||
         0 != strcmp(p->peer_rdma_component,
                     p->rdma_btl->btl_component->btl_version.mca_component_name))) {
        p->rdma_btl = NULL;
        p->rdma_ep = NULL;
        p->handle_size = 0;
    }
    return OPAL_SUCCESS;
}

static void add_progress(perf_t *p, const mca_btl_base_module_t *btl)
{
    if (NULL == btl || NULL == btl->btl_component->btl_progress) {
        return;
    }
    for (int i = 0; i < p->num_progress; ++i) {
        if (p->progress[i] == btl->btl_component->btl_progress) {
            return;
        }
    }
    p->progress[p->num_progress++] = btl->btl_component->btl_progress;
}

int perf_proto_init(perf_t *p, size_t max_size, uint64_t digest)
{
    p->peer_status = OPAL_SUCCESS;
    int rc = perf_proto_register_tags(p);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    p->tags_registered = true;
    rc = mca_btl_base_init(false, false);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": no btl module could start: %s\n", p->rank,
                opal_strerror(rc));
        return rc;
    }
    p->btl_started = true;
    perf_proto_watch_errors(p);
    rc = reach_peer(p);
    if (OPAL_SUCCESS == rc) {
        rc = alloc_buffers(p, max_size);
    }
    if (OPAL_SUCCESS == rc) {
        rc = hello(p, digest);
    }
    if (OPAL_SUCCESS == rc && NULL != p->rdma_btl) {
        p->get_piece = get_piece_size(p->rdma_btl);
        rc = register_buffers(p);
    }
    if (OPAL_SUCCESS == rc) {
        add_progress(p, p->send_btl);
        add_progress(p, p->rdma_btl);
    }
    return rc;
}

void perf_proto_fini(perf_t *p)
{
    if (NULL != p->sreg) {
        (void) p->rdma_btl->btl_deregister_mem(p->rdma_btl, p->sreg);
        p->sreg = NULL;
    }
    if (NULL != p->rreg) {
        (void) p->rdma_btl->btl_deregister_mem(p->rdma_btl, p->rreg);
        p->rreg = NULL;
    }
    if (p->btl_started) {
        (void) mca_btl_base_finalize();
        p->btl_started = false;
        perf_proto_watch_errors(NULL);
    }
    if (p->tags_registered) {
        perf_proto_deregister_tags();
        p->tags_registered = false;
    }
    free(p->sbuf);
    free(p->rbuf);
    free(p->rndv);
    p->sbuf = p->rbuf = NULL;
    p->rndv = NULL;
}
