/*
 * Caches of the engine's per-RPC memory: request blocks and encoded
 * messages by size class, and send records that keep their na operation
 * id. A null RPC made four malloc / free pairs and created and destroyed
 * an na operation on each side, about 40 % of its instructions
 * (callgrind, docs/rpc.md); from a warm cache each costs a lock-free pop
 * and push.
 *
 * Blocks carry a small header in front (their size class) so that any
 * thread frees them without knowing where they came from. Each class keeps
 * at most RPC_POOL_KEEP free blocks; larger blocks, and everything while
 * the engine is not initialized, go straight to malloc and free.
 */
#include "opal/opal_config.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_lifo.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"

enum {
    RPC_POOL_GRAIN = 64,   /* bytes between size classes */
    RPC_POOL_CLASSES = 64, /* so blocks up to 4 KiB are cached */
    RPC_POOL_KEEP = 256,   /* free blocks kept per class */
    RPC_POOL_UNPOOLED = 0xffff,
};

typedef struct rpc_block_t {
    opal_list_item_t super;
    uint32_t cls; /* size class, or RPC_POOL_UNPOOLED */
} rpc_block_t;

/* Where the caller's bytes start: after the header, aligned for any type. */
#define RPC_BLOCK_HDR                                                                              \
    ((sizeof(rpc_block_t) + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t))

typedef struct rpc_pool_class_t {
    opal_lifo_t free;
    _Atomic int count;
} rpc_pool_class_t;

static rpc_pool_class_t classes[RPC_POOL_CLASSES];
static opal_lifo_t send_free;
static _Atomic int send_count;
/* Set between opal_rpc_base_pool_init and _fini: outside, nothing is
 * cached (a request freed after finalize goes to free()). */
static _Atomic bool pool_open;

void opal_rpc_base_pool_init(void)
{
    for (int i = 0; i < RPC_POOL_CLASSES; ++i) {
        OBJ_CONSTRUCT(&classes[i].free, opal_lifo_t);
        atomic_init(&classes[i].count, 0);
    }
    OBJ_CONSTRUCT(&send_free, opal_lifo_t);
    atomic_init(&send_count, 0);
    atomic_store(&pool_open, true);
}

void opal_rpc_base_pool_fini(opal_na_class_t *na)
{
    atomic_store(&pool_open, false);
    for (int i = 0; i < RPC_POOL_CLASSES; ++i) {
        opal_list_item_t *it;
        while (NULL != (it = opal_lifo_pop(&classes[i].free))) {
            OBJ_DESTRUCT(it);
            free(it);
        }
        OBJ_DESTRUCT(&classes[i].free);
    }
    opal_list_item_t *it;
    while (NULL != (it = opal_lifo_pop(&send_free))) {
        opal_rpc_base_send_t *s = (opal_rpc_base_send_t *) it;
        if (NULL != s->op && NULL != na) {
            (void) opal_na_op_destroy(na, s->op);
        }
        OBJ_DESTRUCT(it);
        free(s);
    }
    OBJ_DESTRUCT(&send_free);
}

/* The lock-free stacks' atomic operations only when threads are in use
 * (the free list's rule): without, a pop and a push are plain loads and
 * stores. */
static inline opal_list_item_t *pool_pop(opal_lifo_t *lifo)
{
    return opal_using_threads() ? opal_lifo_pop(lifo) : opal_lifo_pop_st(lifo);
}

static inline void pool_push(opal_lifo_t *lifo, opal_list_item_t *item)
{
    if (opal_using_threads()) {
        (void) opal_lifo_push(lifo, item);
    } else {
        (void) opal_lifo_push_st(lifo, item);
    }
}

void *opal_rpc_base_block_alloc(size_t size, bool zero)
{
    size_t cls = 0 == size ? 0 : (size - 1) / RPC_POOL_GRAIN;
    rpc_block_t *b = NULL;
    if (cls < RPC_POOL_CLASSES && atomic_load_explicit(&pool_open, memory_order_relaxed)) {
        b = (rpc_block_t *) pool_pop(&classes[cls].free);
        if (NULL != b) {
            (void) opal_thread_fetch_add_32(&classes[cls].count, -1, memory_order_relaxed);
            if (zero) {
                memset((char *) b + RPC_BLOCK_HDR, 0, size);
            }
            return (char *) b + RPC_BLOCK_HDR;
        }
        /* A new block of the class's full size, so that it serves any
         * request of the class once freed. */
        size = (cls + 1) * RPC_POOL_GRAIN;
    } else {
        cls = RPC_POOL_UNPOOLED;
    }
    b = zero ? calloc(1, RPC_BLOCK_HDR + size) : malloc(RPC_BLOCK_HDR + size);
    if (NULL == b) {
        return NULL;
    }
    OBJ_CONSTRUCT(&b->super, opal_list_item_t);
    b->cls = (uint32_t) cls;
    return (char *) b + RPC_BLOCK_HDR;
}

void opal_rpc_base_block_free(void *p)
{
    if (NULL == p) {
        return;
    }
    rpc_block_t *b = (rpc_block_t *) (void *) ((char *) p - RPC_BLOCK_HDR);
    if (RPC_POOL_UNPOOLED != b->cls && atomic_load_explicit(&pool_open, memory_order_relaxed) &&
        opal_thread_fetch_add_32(&classes[b->cls].count, 1, memory_order_relaxed) < RPC_POOL_KEEP) {
        pool_push(&classes[b->cls].free, &b->super);
        return;
    }
    if (RPC_POOL_UNPOOLED != b->cls && atomic_load_explicit(&pool_open, memory_order_relaxed)) {
        (void) opal_thread_fetch_add_32(&classes[b->cls].count, -1, memory_order_relaxed);
    }
    OBJ_DESTRUCT(&b->super);
    free(b);
}

opal_rpc_base_send_t *opal_rpc_base_send_get(void)
{
    opal_rpc_base_send_t *s = NULL;
    if (atomic_load_explicit(&pool_open, memory_order_relaxed)) {
        s = (opal_rpc_base_send_t *) pool_pop(&send_free);
    }
    if (NULL != s) {
        (void) opal_thread_fetch_add_32(&send_count, -1, memory_order_relaxed);
        return s;
    }
    s = calloc(1, sizeof(*s));
    if (NULL != s) {
        OBJ_CONSTRUCT(&s->super, opal_list_item_t);
    }
    return s;
}

void opal_rpc_base_send_put(opal_rpc_base_send_t *s, opal_na_class_t *na)
{
    s->ctx = NULL;
    s->req = NULL;
    s->buf = NULL;
    if (atomic_load_explicit(&pool_open, memory_order_relaxed) &&
        opal_thread_fetch_add_32(&send_count, 1, memory_order_relaxed) < RPC_POOL_KEEP) {
        pool_push(&send_free, &s->super);
        return;
    }
    if (atomic_load_explicit(&pool_open, memory_order_relaxed)) {
        (void) opal_thread_fetch_add_32(&send_count, -1, memory_order_relaxed);
    }
    if (NULL != s->op && NULL != na) {
        (void) opal_na_op_destroy(na, s->op);
    }
    OBJ_DESTRUCT(&s->super);
    free(s);
}
