/*
 * Endpoints: a peer's modex record read and checked, its QP brought up
 * (at add_procs, at a first send, or from the connection timer for peers
 * never added), a peer's failure reported, the liveness of peers on
 * this node.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "opal/mca/btl/verbs/btl_verbs.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_pid.h"
#include "opal/util/opal_timer.h"

const char *mca_btl_verbs_peer_name(const mca_btl_verbs_endpoint_t *ep)
{
    static _Thread_local char name[96];
    if (NULL != ep->proc && NULL != ep->proc->proc_hostname) {
        snprintf(name, sizeof(name), "rank %u (on %s)", ep->rank, ep->proc->proc_hostname);
    } else {
        snprintf(name, sizeof(name), "rank %u", ep->rank);
    }
    return name;
}

/* The peer is gone: it finalized (closed) or it failed (what says how
 * that was found out). */
static void peer_gone(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep, bool closed,
                      const char *what)
{
    if (MCA_BTL_VERBS_EP_FAILED == ep->state) {
        return;
    }
    ep->state = MCA_BTL_VERBS_EP_FAILED;
    /* Whatever is still queued on the QP is flushed back with errors. */
    struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
    (void) ibv_modify_qp(ep->qp, &attr, IBV_QP_STATE);
    char info[512];
    if (closed) {
        snprintf(info, sizeof(info), "btl/verbs (%s): %s finalized", module->transport,
                 mca_btl_verbs_peer_name(ep));
    } else {
        snprintf(info, sizeof(info), "btl/verbs (%s): %s failed: %s", module->transport,
                 mca_btl_verbs_peer_name(ep), what);
    }
    if (module->finalizing) {
        opal_output_verbose(closed ? 10 : 1, mca_btl_base_output, "%s (while finalizing)", info);
    } else if (NULL != module->error_cb) {
        module->error_cb(&module->super,
                         closed ? MCA_BTL_ERROR_FLAGS_PEER_CLOSED : MCA_BTL_ERROR_FLAGS_PEER_FAILED,
                         ep->proc, info);
    } else if (!closed) {
        opal_output(0, "%s", info);
    }
}

void mca_btl_verbs_peer_failed(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep,
                               const char *what)
{
    peer_gone(module, ep, false, what);
}

/* The whole module broke (port down, device gone). */
void mca_btl_verbs_liveness_check(mca_btl_verbs_module_t *module, bool force)
{
    uint64_t now = opal_timer_ns();
    if (!force && now < module->next_liveness_ns) {
        return;
    }
    module->next_liveness_ns = now + 100000000u;
    for (uint32_t r = 0; r < module->job_size; ++r) {
        mca_btl_verbs_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep || 0 == ep->pid || MCA_BTL_VERBS_EP_READY != ep->state ||
            !opal_pid_exited(ep->pid)) {
            continue;
        }
        /* What it sent before it left may still wait in the CQ: one more
         * interval to deliver it (a forced check decides at once). */
        if (!force && !ep->exit_seen) {
            ep->exit_seen = true;
            continue;
        }
        /* btl/verbs says no goodbye: the runtime says whether it
         * finalized (a marker on this node) or crashed. */
        if (opal_rte_peer_finalized(r)) {
            peer_gone(module, ep, true, NULL);
        } else {
            char what[96];
            snprintf(what, sizeof(what), "its process (pid %d on this node) has exited",
                     (int) ep->pid);
            mca_btl_verbs_peer_failed(module, ep, what);
        }
    }
}

/* ---------------------------------------------------------- connecting */

static int qp_to_init(mca_btl_verbs_module_t *module, struct ibv_qp *qp)
{
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_INIT,
        .pkey_index = 0,
        .port_num = module->port,
        .qp_access_flags =
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
    };
    return ibv_modify_qp(qp, &attr,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int qp_to_rts(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep,
                     const mca_btl_verbs_modex_port_t *peer, const char **step)
{
    const mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    uint32_t remote_qpn = mca_btl_verbs_modex_qpn(peer, module->my_rank);
    enum ibv_mtu mtu = (enum ibv_mtu)(peer->mtu < module->addr.mtu ? peer->mtu : module->addr.mtu);
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = mtu,
        .dest_qp_num = remote_qpn,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = module->rd_atom,
        .min_rnr_timer = 12,
        .ah_attr =
            {
                .dlid = peer->lid,
                .sl = 0,
                .src_path_bits = 0,
                .port_num = module->port,
            },
    };
    if (MCA_BTL_VERBS_LINK_ETHERNET == module->addr.link_layer) {
        attr.ah_attr.is_global = 1;
        memcpy(attr.ah_attr.grh.dgid.raw, peer->gid, 16);
        attr.ah_attr.grh.sgid_index = (uint8_t) module->gid_index;
        attr.ah_attr.grh.hop_limit = 64;
    }
    *step = "INIT";
    if (0 != qp_to_init(module, ep->qp)) {
        return OPAL_ERROR;
    }
    *step = "RTR";
    if (0 != ibv_modify_qp(ep->qp, &attr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        return OPAL_ERROR;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = (uint8_t) (c->timeout > 31 ? 31 : c->timeout);
    attr.retry_cnt = (uint8_t) (c->retry_cnt > 7 ? 7 : c->retry_cnt);
    /* 7: retry without end on a receiver-not-ready NAK. Credits keep a
     * peer's buffers from running out; this covers only the moment a
     * credit-only message finds its reserved buffer not yet reposted. */
    attr.rnr_retry = 7;
    attr.sq_psn = module->addr.psn;
    attr.max_rd_atomic = module->rd_atom;
    *step = "RTS";
    if (0 != ibv_modify_qp(ep->qp, &attr,
                           IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                               IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
        return OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

int mca_btl_verbs_endpoint_connect(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep,
                                   int64_t wait_ns, mca_btl_base_reason_t *why)
{
    if (MCA_BTL_VERBS_EP_READY == ep->state) {
        return OPAL_SUCCESS;
    }
    if (MCA_BTL_VERBS_EP_FAILED == ep->state) {
        mca_btl_base_reason_set(why, "rank %u failed earlier", ep->rank);
        return OPAL_ERR_UNREACH;
    }
    if (ep->refused) {
        mca_btl_base_reason_set(why, "%s", ep->refused_why);
        return OPAL_ERR_UNREACH;
    }
    mca_btl_base_reason_t local;
    if (NULL == why) {
        why = &local;
    }
    void *blob = NULL;
    size_t size = 0;
    int rc = opal_modex_recv(ep->rank, MCA_BTL_VERBS_MODEX_KEY, &blob, &size, wait_ns);
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why,
                                "rank %u published no verbs record (its btl/verbs did not run): %s",
                                ep->rank, opal_strerror(rc));
        return OPAL_ERR_UNREACH;
    }
    mca_btl_verbs_modex_t peer;
    char detail[200] = "";
    rc = mca_btl_verbs_modex_unpack(blob, size, ep->rank, module->job_size, &peer, detail,
                                    sizeof(detail));
    if (OPAL_ERR_NOT_AVAILABLE == rc) {
        mca_btl_base_reason_set(why, "rank %u's btl/verbs did not run: %s", ep->rank, detail);
        rc = OPAL_ERR_UNREACH;
        goto out;
    }
    if (OPAL_SUCCESS != rc) {
        /* Broken data from a peer is an error in its own right. */
        opal_output(0, "btl/verbs (%s): rank %u published a malformed record (modex key %s): %s",
                    module->transport, ep->rank, MCA_BTL_VERBS_MODEX_KEY, detail);
        mca_btl_base_reason_set(why, "verbs: rank %u's record is malformed: %s", ep->rank, detail);
        rc = OPAL_ERR_UNREACH;
        goto out;
    }
    int index = mca_btl_verbs_modex_pair(&mca_btl_verbs_component.own, module->record_index, &peer,
                                         detail, sizeof(detail));
    if (index < 0) {
        char ports[300] = "";
        size_t len = 0;
        for (unsigned i = 0; i < peer.nports && len < sizeof(ports); ++i) {
            char gid[64];
            mca_btl_verbs_gid_string(peer.ports[i].gid, gid, sizeof(gid));
            int n = snprintf(ports + len, sizeof(ports) - len, "%s%s:%u %s%s", 0 == i ? "" : ", ",
                             peer.ports[i].name, (unsigned) peer.ports[i].port, gid,
                             MCA_BTL_VERBS_LINK_IB == peer.ports[i].link_layer ? " (IB)" : "");
            len += n > 0 ? (size_t) n : 0;
        }
        mca_btl_base_reason_set(why, "verbs: rank %u has %s; its ports: %s", ep->rank, detail,
                                ports);
        rc = OPAL_ERR_UNREACH;
        goto out;
    }
    const mca_btl_verbs_modex_port_t *pp = &peer.ports[index];
    const char *step = "";
    if (OPAL_SUCCESS != qp_to_rts(module, ep, pp, &step)) {
        int err = errno;
        mca_btl_base_reason_set(why, "verbs: bringing the queue pair to rank %u to %s failed: %s",
                                ep->rank, step, strerror(err));
        opal_output_verbose(1, mca_btl_base_output, "btl/verbs (%s): %s", module->transport,
                            why ? why->text : "");
        /* The QP is in an unknown state: never used again. */
        ep->state = MCA_BTL_VERBS_EP_FAILED;
        rc = OPAL_ERR_UNREACH;
        goto out;
    }
    ep->state = MCA_BTL_VERBS_EP_READY;
    ep->send_credits = module->credits;
    /* Messages from the peer name it, whether or not it was added. */
    opal_proc_t *proc = NULL;
    if (NULL == ep->proc && OPAL_SUCCESS == opal_proc_for_rank(ep->rank, &proc)) {
        OBJ_RETAIN(proc);
        ep->proc = proc;
    }
    /* Its pid means the same process here only in the same pid space (a
     * node's containers may share a host name and not their pids). */
    if (opal_pid_space_shared(mca_btl_verbs_component.own.pid_space, peer.pid_space)) {
        ep->pid = (pid_t) peer.pid;
    }
    opal_output_verbose(
        20, mca_btl_base_output, "verbs: %s: QP 0x%x to rank %u (its QP 0x%x on %s:%u) is up",
        module->transport, ep->qp->qp_num, ep->rank, mca_btl_verbs_modex_qpn(pp, module->my_rank),
        pp->name, (unsigned) pp->port);
    rc = OPAL_SUCCESS;
out:
    if (OPAL_SUCCESS != rc && MCA_BTL_VERBS_EP_CLOSED == ep->state) {
        /* The record was there and is refused: so it stays. */
        ep->refused = true;
        snprintf(ep->refused_why, sizeof(ep->refused_why), "%s", why->text);
    }
    free(blob);
    return rc;
}

/* Looks (without waiting) for the records of peers not connected yet and
 * brings their QPs up; once none is left, the timer goes. */
void mca_btl_verbs_connect_pending(mca_btl_verbs_module_t *module)
{
    unsigned left = 0;
    module->next_connect_ns = opal_timer_ns() + 100000000u;
    for (uint32_t r = 0; r < module->job_size; ++r) {
        mca_btl_verbs_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep || MCA_BTL_VERBS_EP_CLOSED != ep->state || ep->refused) {
            continue;
        }
        mca_btl_base_reason_t why;
        if (OPAL_SUCCESS != mca_btl_verbs_endpoint_connect(module, ep, 0, &why) &&
            MCA_BTL_VERBS_EP_CLOSED == ep->state && !ep->refused) {
            ++left;
        }
    }
    module->closed_count = left;
    if (0 == left && module->connect_timer_fd >= 0) {
        (void) opal_progress_fd_unregister(module->connect_timer_fd);
        close(module->connect_timer_fd);
        module->connect_timer_fd = -1;
    }
}

static int connect_timer_ready(int fd, uint32_t epoll_events, void *context)
{
    (void) epoll_events;
    mca_btl_verbs_module_t *module = context;
    uint64_t expirations;
    ssize_t n = read(fd, &expirations, sizeof(expirations));
    (void) n;
    OPAL_THREAD_LOCK(&module->lock);
    mca_btl_verbs_connect_pending(module);
    OPAL_THREAD_UNLOCK(&module->lock);
    return 0;
}

/* A 100 ms timer for connect_pending while peers are not connected. */
int mca_btl_verbs_connect_timer_open(mca_btl_verbs_module_t *module)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) {
        return OPAL_ERR_IN_ERRNO;
    }
    struct itimerspec spec = {.it_interval = {.tv_sec = 0, .tv_nsec = 100000000},
                              .it_value = {.tv_sec = 0, .tv_nsec = 100000000}};
    int rc = OPAL_SUCCESS;
    if (0 != timerfd_settime(fd, 0, &spec, NULL)) {
        rc = OPAL_ERR_IN_ERRNO;
    } else {
        rc = opal_progress_fd_register(fd, connect_timer_ready, module);
    }
    if (OPAL_SUCCESS != rc) {
        close(fd);
        return rc;
    }
    module->connect_timer_fd = fd;
    return OPAL_SUCCESS;
}

/* ---------------------------------------------------------- add / del */

static int64_t lookup_timeout(void)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    return NULL != job ? job->lookup_timeout_ns : OPAL_MODEX_WAIT_FOREVER;
}

int mca_btl_verbs_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                            mca_btl_base_reason_t *reasons)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    const opal_proc_job_info_t *job = opal_proc_job_info();
    int rc = OPAL_SUCCESS;
    OPAL_THREAD_LOCK(&module->lock);
    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_base_reason_t *why = NULL != reasons ? &reasons[i] : NULL;
        uint32_t rank = procs[i]->proc_name.vpid;
        if (NULL == job || procs[i]->proc_name.jobid != job->my_name.jobid) {
            mca_btl_base_reason_set(why, "not a process of this job");
            continue;
        }
        if (rank >= module->job_size) {
            mca_btl_base_reason_set(why, "rank %u is outside the job (%u processes)", rank,
                                    module->job_size);
            continue;
        }
        if (rank == module->my_rank) {
            mca_btl_base_reason_set(why, "this process (btl/self reaches it)");
            continue;
        }
        mca_btl_verbs_endpoint_t *ep = module->endpoints[rank];
        if (OPAL_SUCCESS != mca_btl_verbs_endpoint_connect(module, ep, lookup_timeout(), why)) {
            continue;
        }
        rc = opal_bitmap_set_bit(reachable, (int) i);
        if (OPAL_SUCCESS != rc) {
            break;
        }
        ep->added = true;
        endpoints[i] = ep;
    }
    /* A peer this process never adds must still be able to reach it: its
     * QP here has to be in RTR before its first packet gives up. So the
     * first add_procs brings up the QP of every rank that published. */
    if (OPAL_SUCCESS == rc && !module->connected_all) {
        module->connected_all = true;
        for (uint32_t r = 0; r < module->job_size; ++r) {
            mca_btl_verbs_endpoint_t *ep = module->endpoints[r];
            if (NULL != ep && MCA_BTL_VERBS_EP_CLOSED == ep->state) {
                mca_btl_base_reason_t ignored;
                (void) mca_btl_verbs_endpoint_connect(module, ep, lookup_timeout(), &ignored);
            }
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

int mca_btl_verbs_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **endpoints)
{
    (void) btl;
    (void) procs;
    /* The QP stays up (the peer may still send); the endpoint goes with
     * the module. */
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != endpoints && NULL != endpoints[i]) {
            endpoints[i]->added = false;
        }
    }
    return OPAL_SUCCESS;
}
