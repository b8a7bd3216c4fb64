/*
 * Endpoints: a peer's address read from the modex, checked and inserted
 * into the address vector; a peer's failure and what it does to the
 * operations in flight; the liveness of peers on this node.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_pid.h"
#include "opal/util/opal_timer.h"

const char *mca_btl_ofi_peer_name(const mca_btl_ofi_endpoint_t *ep)
{
    static _Thread_local char name[96];
    if (NULL != ep->proc && NULL != ep->proc->proc_hostname) {
        snprintf(name, sizeof(name), "rank %u (on %s)", ep->rank, ep->proc->proc_hostname);
    } else {
        snprintf(name, sizeof(name), "rank %u", ep->rank);
    }
    return name;
}

/* Whether the provider reaches only processes of this node. */
static bool node_local_provider(const mca_btl_ofi_module_t *module)
{
    const struct fi_info *info = module->ofi.info;
    uint64_t caps = info->caps | info->domain_attr->caps;
    if (0 != (caps & FI_LOCAL_COMM) && 0 == (caps & FI_REMOTE_COMM)) {
        return true;
    }
    /* shm does not always say so in its capabilities. */
    return opal_common_ofi_provider_listed("shm", module->ofi.prov_name, NULL);
}

mca_btl_ofi_endpoint_t *mca_btl_ofi_endpoint_get(mca_btl_ofi_module_t *module, uint32_t rank,
                                                 mca_btl_base_reason_t *why)
{
    if (rank >= module->job_size) {
        mca_btl_base_reason_set(why, "rank %u is outside the job (%u processes)", rank,
                                module->job_size);
        return NULL;
    }
    mca_btl_ofi_endpoint_t *ep = module->endpoints[rank];
    if (NULL != ep) {
        if (ep->failed) {
            mca_btl_base_reason_set(why, "rank %u failed earlier", rank);
            return NULL;
        }
        return ep;
    }
    opal_proc_t *proc = NULL;
    int rc = opal_proc_for_rank(rank, &proc);
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why, "rank %u is unknown to the runtime: %s", rank,
                                opal_strerror(rc));
        return NULL;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    void *blob = NULL;
    size_t size = 0;
    rc = opal_modex_recv(rank, MCA_BTL_OFI_MODEX_KEY, &blob, &size,
                         NULL != job ? job->lookup_timeout_ns : OPAL_MODEX_WAIT_FOREVER);
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why,
                                "rank %u published no ofi address (its btl/ofi did not run): %s",
                                rank, opal_strerror(rc));
        return NULL;
    }
    opal_common_ofi_peer_addr_t addr;
    char detail[160];
    if (opal_common_ofi_declined_unpack(blob, size, detail, sizeof(detail))) {
        mca_btl_base_reason_set(why, "rank %u's btl/ofi did not run: %s", rank, detail);
        free(blob);
        return NULL;
    }
    rc = opal_common_ofi_addr_unpack(&module->ofi, blob, size, &addr, detail, sizeof(detail));
    if (OPAL_ERR_BAD_VALUE == rc) {
        /* A peer's data is broken: an error in its own right, not only a
         * reason this module does not reach it. */
        opal_output(0, "btl/ofi (%s): rank %u published a malformed address (modex key %s): %s",
                    module->ofi.prov_name, rank, MCA_BTL_OFI_MODEX_KEY, detail);
        mca_btl_base_reason_set(why, "rank %u published a malformed address: %s", rank, detail);
        free(blob);
        return NULL;
    }
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why, "rank %u cannot be reached: %s", rank, detail);
        free(blob);
        return NULL;
    }
    bool same_node = 0 != (proc->proc_locality & OPAL_PROC_ON_NODE);
    if (!same_node && node_local_provider(module)) {
        mca_btl_base_reason_set(why, "%s reaches only this node, rank %u runs on %s",
                                module->ofi.prov_name, rank,
                                NULL != proc->proc_hostname ? proc->proc_hostname : "another node");
        free(blob);
        return NULL;
    }
    fi_addr_t fi_addr;
    rc = opal_common_ofi_av_insert(&module->ofi, &addr, &fi_addr, detail, sizeof(detail));
    pid_t pid = (pid_t) addr.pid;
    uint64_t pid_space = addr.pid_space;
    free(blob);
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why, "rank %u: %s", rank, detail);
        return NULL;
    }
    ep = calloc(1, sizeof(*ep));
    if (NULL == ep) {
        mca_btl_base_reason_set(why, "out of memory");
        return NULL;
    }
    ep->module = module;
    OBJ_RETAIN(proc);
    ep->proc = proc;
    ep->rank = rank;
    ep->fi_addr = fi_addr;
    /* A pid means the same process only in the same pid space (a node's
     * containers may share a host name and not their pids); this process
     * is not checked on. */
    ep->pid =
        opal_pid_space_shared(module->pid_space, pid_space) && rank != module->my_rank ? pid : 0;
    OBJ_CONSTRUCT(&ep->held, opal_list_t);
    OBJ_CONSTRUCT(&ep->outstanding, opal_list_t);
    module->endpoints[rank] = ep;
    return ep;
}

/* Frees what an outstanding list item is, at module finalize (the
 * endpoint is closed: the provider holds nothing any more). An operation
 * not called back yet (it did not complete before finalize gave up on
 * it) is called back with OPAL_ERR_TIMEOUT first, so that its owner gets
 * its memory back (a bounce buffer, say). */
static void release_outstanding(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep,
                                opal_list_item_t *item)
{
    if (OBJ_CLASS(mca_btl_ofi_frag_t) == item->super.obj_class) {
        mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) item;
        bool called_back = 0 != (frag->state & MCA_BTL_OFI_OP_ABANDONED);
        bool freed = 0 != (frag->state & MCA_BTL_OFI_OP_FREED);
        frag->state = 0;
        if (!called_back && NULL != frag->base.des_cbfunc) {
            frag->base.des_cbfunc(&module->super, ep, &frag->base, OPAL_ERR_TIMEOUT);
        }
        /* A descriptor the caller kept is the caller's to free. */
        if (freed || 0 != (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
            mca_btl_ofi_frag_release(frag);
        }
    } else {
        mca_btl_ofi_rdma_op_t *op = (mca_btl_ofi_rdma_op_t *) item;
        if (0 == (op->state & MCA_BTL_OFI_OP_ABANDONED)) {
            op->cbfunc(&module->super, ep, op->local_address, op->local_handle, op->cbcontext,
                       op->cbdata, OPAL_ERR_TIMEOUT);
        }
        opal_free_list_return(&module->rdma_ops, (opal_free_list_item_t *) item);
    }
}

void mca_btl_ofi_endpoints_release(mca_btl_ofi_module_t *module)
{
    opal_list_item_t *item;
    for (uint32_t r = 0; r < module->job_size; ++r) {
        mca_btl_ofi_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep) {
            continue;
        }
        while (NULL != (item = opal_list_remove_first(&ep->outstanding))) {
            release_outstanding(module, ep, item);
        }
        mca_btl_ofi_recv_drop_held(module, ep);
        OBJ_DESTRUCT(&ep->outstanding);
        OBJ_DESTRUCT(&ep->held);
        OBJ_RELEASE(ep->proc);
        free(ep);
        module->endpoints[r] = NULL;
    }
    while (NULL != (item = opal_list_remove_first(&module->abandoned))) {
        release_outstanding(module, NULL, item);
    }
}

/* The peer is gone, closed (it said goodbye) or not (it failed, what
 * says how that was found out). */
static void peer_gone(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep, bool closed,
                      const char *what)
{
    if (ep->failed) {
        return;
    }
    ep->failed = true;
    char info[512];
    if (closed) {
        snprintf(info, sizeof(info), "btl/ofi (%s): %s finalized", module->ofi.prov_name,
                 mca_btl_ofi_peer_name(ep));
    } else {
        module->ofi.peer_lost = true;
        snprintf(info, sizeof(info), "btl/ofi (%s): %s failed: %s", module->ofi.prov_name,
                 mca_btl_ofi_peer_name(ep), what);
    }
    if (module->finalizing) {
        /* A peer that finished first is no failure; the upper layer
         * has stopped listening anyway. */
        opal_output_verbose(closed ? 10 : 1, mca_btl_base_output, "%s (while finalizing)", info);
    } else if (NULL != module->error_cb) {
        module->error_cb(&module->super,
                         closed ? MCA_BTL_ERROR_FLAGS_PEER_CLOSED : MCA_BTL_ERROR_FLAGS_PEER_FAILED,
                         ep->proc, info);
    } else if (!closed) {
        opal_output(0, "%s", info);
    }
    /* What was in flight to it is called back now with the error; the
     * provider gives the memory back later (or never, until the endpoint
     * closes), so the operations wait on the module's abandoned list. */
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&ep->outstanding))) {
        opal_list_append(&module->abandoned, item);
        if (OBJ_CLASS(mca_btl_ofi_frag_t) == item->super.obj_class) {
            mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) item;
            frag->state |= MCA_BTL_OFI_OP_ABANDONED;
            if (NULL != frag->base.des_cbfunc) {
                frag->base.des_cbfunc(&module->super, ep, &frag->base, OPAL_ERR_UNREACH);
            }
        } else {
            mca_btl_ofi_rdma_op_t *op = (mca_btl_ofi_rdma_op_t *) item;
            op->state |= MCA_BTL_OFI_OP_ABANDONED;
            --ep->rdma_outstanding;
            --module->rdma_outstanding;
            op->cbfunc(&module->super, ep, op->local_address, op->local_handle, op->cbcontext,
                       op->cbdata, OPAL_ERR_UNREACH);
        }
    }
    ep->posted = 0;
    mca_btl_ofi_recv_drop_held(module, ep);
}

void mca_btl_ofi_peer_failed(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep,
                             const char *what)
{
    peer_gone(module, ep, false, what);
}

void mca_btl_ofi_peer_closed(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep)
{
    peer_gone(module, ep, true, NULL);
}

void mca_btl_ofi_liveness_check(mca_btl_ofi_module_t *module)
{
    unsigned interval_ms = mca_btl_ofi_component.liveness_interval_ms;
    if (0 == interval_ms) {
        return;
    }
    uint64_t now = opal_timer_ns();
    if (now < module->next_liveness_ns) {
        return;
    }
    module->next_liveness_ns = now + (uint64_t) interval_ms * 1000000u;
    /* A peer this process exchanged messages with says goodbye in their
     * sequence as it finalizes (not over verbs), and its exit may be seen
     * before that goodbye is read: it gets one more interval. */
    const bool goodbyes = !opal_common_ofi_provider_listed("verbs", module->ofi.prov_name, NULL);
    for (uint32_t r = 0; r < module->job_size; ++r) {
        mca_btl_ofi_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep || 0 == ep->pid || ep->failed || !opal_pid_exited(ep->pid)) {
            continue;
        }
        if (goodbyes && (0 != ep->send_seq || 0 != ep->recv_seq) && !ep->exit_seen) {
            ep->exit_seen = true;
            continue;
        }
        /* No goodbye came (none is said to a peer never spoken with, nor
         * over verbs): the runtime says whether it finalized. */
        if (opal_rte_peer_finalized(r)) {
            mca_btl_ofi_peer_closed(module, ep);
        } else {
            char what[96];
            snprintf(what, sizeof(what), "its process (pid %d) has exited", (int) ep->pid);
            mca_btl_ofi_peer_failed(module, ep, what);
        }
    }
}
