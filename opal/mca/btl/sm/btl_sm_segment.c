/*
 * btl/sm: this process's segment (named, created, formatted, published,
 * unlinked) and the peers' (found through the modex, checked, mapped).
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"

static uint64_t align_up(uint64_t value, uint64_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

/* -------------------------------------------------------------- layout */

int mca_btl_sm_layout_compute(sm_layout_t *layout)
{
    const mca_btl_sm_params_t *c = &mca_btl_sm_params;
    memset(layout, 0, sizeof(*layout));
    layout->fifo_slots = c->fifo_size;
    layout->eager_count = c->eager_frags;
    layout->eager_stride = (uint32_t) align_up(SM_FRAG_HDR_SIZE + mca_btl_sm.super.btl_eager_limit,
                                               OPAL_CACHE_LINE_SIZE);
    layout->max_count = c->max_frags;
    layout->max_stride = (uint32_t) align_up(SM_FRAG_HDR_SIZE + mca_btl_sm.super.btl_max_send_size,
                                             OPAL_CACHE_LINE_SIZE);
    layout->fbox_count = c->fbox_max;
    layout->fbox_stride = SM_FBOX_CTL_SIZE + c->fbox_size;

    layout->fifo_offset = align_up(sizeof(sm_seg_header_t), OPAL_CACHE_LINE_SIZE);
    layout->frag_offset = align_up(layout->fifo_offset + (uint64_t) layout->fifo_slots * 8, 4096);
    layout->fbox_offset =
        align_up(layout->frag_offset + (uint64_t) layout->eager_count * layout->eager_stride +
                     (uint64_t) layout->max_count * layout->max_stride,
                 OPAL_CACHE_LINE_SIZE);
    layout->seg_size =
        align_up(layout->fbox_offset + (uint64_t) layout->fbox_count * layout->fbox_stride, 4096);
    char why[160];
    return mca_btl_sm_layout_check(layout, layout->seg_size, why, sizeof(why));
}

/* Reads a layout from shared memory field by field, once. */
static void layout_read(const sm_layout_t *shared, sm_layout_t *copy)
{
    copy->seg_size = SM_READ_ONCE(shared->seg_size);
    copy->fifo_offset = SM_READ_ONCE(shared->fifo_offset);
    copy->frag_offset = SM_READ_ONCE(shared->frag_offset);
    copy->fbox_offset = SM_READ_ONCE(shared->fbox_offset);
    copy->fifo_slots = SM_READ_ONCE(shared->fifo_slots);
    copy->eager_count = SM_READ_ONCE(shared->eager_count);
    copy->eager_stride = SM_READ_ONCE(shared->eager_stride);
    copy->max_count = SM_READ_ONCE(shared->max_count);
    copy->max_stride = SM_READ_ONCE(shared->max_stride);
    copy->fbox_count = SM_READ_ONCE(shared->fbox_count);
    copy->fbox_stride = SM_READ_ONCE(shared->fbox_stride);
    copy->reserved = 0;
}

/* ------------------------------------------------------ own segment */

static int open_new(const char *name, int *fd_out)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR);
        if (fd >= 0) {
            *fd_out = fd;
            return OPAL_SUCCESS;
        }
        if (EEXIST != errno || 0 != attempt) {
            break;
        }
        /* Our job id and rank: only an earlier job that died before its
         * launcher could clean up left it. */
        SM_VERBOSE(10, "btl sm: removing a stale /dev/shm%s", name);
        (void) shm_unlink(name);
    }
    opal_output(0, "btl sm: cannot create /dev/shm%s: %s", name, strerror(errno));
    return OPAL_ERR_IN_ERRNO;
}

int mca_btl_sm_segment_create(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm_layout_t layout;
    int fd = -1;
    int rc = mca_btl_sm_layout_compute(&layout);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "btl sm: the variables give an impossible segment layout");
        return rc;
    }
    rc = mca_btl_sm_segment_name(sm->jobid, sm->my_rank, sm->seg_name, sizeof(sm->seg_name));
    if (OPAL_SUCCESS != rc) {
        goto out;
    }
    rc = open_new(sm->seg_name, &fd);
    if (OPAL_SUCCESS != rc) {
        goto out;
    }
    /* The mode asked of shm_open went through the umask; make it 0600
     * exactly. posix_fallocate reserves the memory now: a full /dev/shm
     * is an error here, not a SIGBUS at the first touch. */
    int err = 0;
    if (0 != fchmod(fd, S_IRUSR | S_IWUSR)) {
        err = errno;
    } else {
        err = posix_fallocate(fd, 0, (off_t) layout.seg_size);
    }
    if (0 != err) {
        opal_output(0, "btl sm: cannot size /dev/shm%s to %" PRIu64 " bytes: %s", sm->seg_name,
                    layout.seg_size, strerror(err));
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto unlink;
    }
    void *base = mmap(NULL, (size_t) layout.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        opal_output(0, "btl sm: cannot map /dev/shm%s: %s", sm->seg_name, strerror(errno));
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto unlink;
    }
    sm->seg_base = base;
    sm->seg_size = (size_t) layout.seg_size;
    sm->seg_hdr = base;
    sm->seg_unlinked = false;

    sm_seg_header_t *hdr = sm->seg_hdr;
    hdr->version = SM_LAYOUT_VERSION;
    hdr->owner_rank = sm->my_rank;
    hdr->owner_pid = (int32_t) sm->my_pid;
    hdr->owner_jobid = sm->jobid;
    hdr->nonce = sm->nonce;
    hdr->layout = layout;
    atomic_store_explicit(&hdr->attached, 0, memory_order_relaxed);
    atomic_store_explicit(&hdr->fbox_in_available, (int32_t) mca_btl_sm_params.fbox_max,
                          memory_order_relaxed);
    atomic_store_explicit(&hdr->wake_unreachable, 0, memory_order_relaxed);
    atomic_store_explicit(&hdr->wake_ready, 0, memory_order_relaxed);
    atomic_store_explicit(&hdr->wake_armed, 0, memory_order_relaxed);
    mca_btl_sm_fifo_format((opal_atomic_uint64_t *) (void *) (sm->seg_base + layout.fifo_offset),
                           &hdr->fifo_tail, layout.fifo_slots);
    sm_fifo_attach(&sm->fifo, (opal_atomic_uint64_t *) (void *) (sm->seg_base + layout.fifo_offset),
                   &hdr->fifo_tail, layout.fifo_slots);
    atomic_store_explicit(&hdr->state, SM_SEG_STATE_ALIVE, memory_order_relaxed);
    /* Peers learn of the segment only through the modex, later. */
    hdr->magic = SM_SEG_MAGIC;
    close(fd);
    SM_VERBOSE(20, "btl sm: segment /dev/shm%s, %zu bytes", sm->seg_name, sm->seg_size);
    return OPAL_SUCCESS;

unlink:
    close(fd);
    (void) shm_unlink(sm->seg_name);
out:
    return rc;
}

void mca_btl_sm_segment_destroy(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (NULL == sm->seg_base) {
        return;
    }
    /* Release pairs with the peers' acquire load in their liveness
     * check: a peer that sees CLOSED does not report our exit. */
    atomic_store_explicit(&sm->seg_hdr->state, SM_SEG_STATE_CLOSED, memory_order_release);
    if (!sm->seg_unlinked) {
        (void) shm_unlink(sm->seg_name);
        sm->seg_unlinked = true;
    }
    munmap(sm->seg_base, sm->seg_size);
    sm->seg_base = NULL;
    sm->seg_hdr = NULL;
}

/* ----------------------------------------------------- peers' segments */

int mca_btl_sm_segment_attach(mca_btl_sm_endpoint_t *ep, const sm_modex_t *modex, char *why,
                              size_t why_size)
{
    int rc = OPAL_ERR_UNREACH;
    int fd = shm_open(modex->seg_name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open the peer's segment /dev/shm%s: %s", modex->seg_name,
                 strerror(errno));
        return rc;
    }
    struct stat st;
    if (0 != fstat(fd, &st)) {
        snprintf(why, why_size, "cannot stat /dev/shm%s: %s", modex->seg_name, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (uint64_t) st.st_size != modex->seg_size ||
        (uint64_t) st.st_size < sizeof(sm_seg_header_t) || (uint64_t) st.st_size > SM_MAX_SEGMENT) {
        snprintf(why, why_size,
                 "the peer's segment /dev/shm%s is not what it published (owner %lu, %lld bytes)",
                 modex->seg_name, (unsigned long) st.st_uid, (long long) st.st_size);
        goto out;
    }
    size_t size = (size_t) st.st_size;
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        snprintf(why, why_size, "cannot map /dev/shm%s: %s", modex->seg_name, strerror(errno));
        goto out;
    }
    sm_seg_header_t *hdr = base;
    char layout_why[120];
    if (SM_SEG_MAGIC != SM_READ_ONCE(hdr->magic) ||
        SM_LAYOUT_VERSION != SM_READ_ONCE(hdr->version) ||
        ep->rank != SM_READ_ONCE(hdr->owner_rank) || modex->pid != SM_READ_ONCE(hdr->owner_pid) ||
        modex->nonce != SM_READ_ONCE(hdr->nonce)) {
        snprintf(why, why_size, "the peer's segment /dev/shm%s is not the one it published",
                 modex->seg_name);
        munmap(base, size);
        goto out;
    }
    layout_read(&hdr->layout, &ep->layout);
    if (OPAL_SUCCESS !=
        mca_btl_sm_layout_check(&ep->layout, size, layout_why, sizeof(layout_why))) {
        snprintf(why, why_size, "the peer's segment /dev/shm%s is malformed: %s", modex->seg_name,
                 layout_why);
        munmap(base, size);
        goto out;
    }
    ep->seg_base = base;
    ep->seg_size = size;
    ep->seg_hdr = hdr;
    ep->frag_count = ep->layout.eager_count + ep->layout.max_count;
    snprintf(ep->seg_name, sizeof(ep->seg_name), "%s", modex->seg_name);
    sm_fifo_attach(&ep->fifo,
                   (opal_atomic_uint64_t *) (void *) (ep->seg_base + ep->layout.fifo_offset),
                   &hdr->fifo_tail, ep->layout.fifo_slots);

    /* The last local peer to map it removes the name: from then on a
     * crash leaves nothing in /dev/shm. Relaxed: only the count matters. */
    uint32_t attached = atomic_fetch_add_explicit(&hdr->attached, 1, memory_order_relaxed) + 1;
    if (mca_btl_sm.local_size > 1 && attached >= mca_btl_sm.local_size - 1) {
        if (0 == shm_unlink(modex->seg_name)) {
            SM_VERBOSE(20, "btl sm: every local peer mapped /dev/shm%s; unlinked", modex->seg_name);
        }
    }
    rc = OPAL_SUCCESS;
out:
    close(fd);
    return rc;
}

void mca_btl_sm_segment_detach(mca_btl_sm_endpoint_t *ep)
{
    if (NULL != ep->seg_base) {
        munmap(ep->seg_base, ep->seg_size);
        ep->seg_base = NULL;
        ep->seg_hdr = NULL;
    }
}
