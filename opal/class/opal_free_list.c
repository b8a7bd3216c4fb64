#include "opal/opal_config.h"

#include <stdalign.h>
#include <stdlib.h>

#include "opal/class/opal_free_list.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_timer.h"

/* One allocation step: the items and, when the list has payloads, their
 * buffers, with what the register hook returned for them. */
typedef struct free_list_slab_t {
    opal_list_item_t super;
    void *items;
    size_t items_size;
    void *payloads;
    size_t payloads_size;
    void *registration;
    size_t count;
} free_list_slab_t;

static OBJ_CLASS_INSTANCE(free_list_slab_t, opal_list_item_t, NULL, NULL);

static void free_list_item_construct(opal_free_list_item_t *item)
{
    item->registration = NULL;
    item->ptr = NULL;
}

OBJ_CLASS_INSTANCE(opal_free_list_item_t, opal_list_item_t, free_list_item_construct, NULL);

static void free_list_construct(opal_free_list_t *fl)
{
    atomic_init(&fl->fl_num_allocated, 0);
    /* Nothing can be allocated before opal_free_list_init sets a limit. */
    fl->fl_max_to_alloc = 0;
    fl->fl_num_per_alloc = 0;
    atomic_init(&fl->fl_num_waiting, 0);
    fl->fl_item_class = NULL;
    fl->fl_item_stride = 0;
    fl->fl_item_alignment = 0;
    fl->fl_payload_stride = 0;
    fl->fl_payload_alignment = 0;
    fl->fl_register = NULL;
    fl->fl_deregister = NULL;
    fl->fl_context = NULL;
    OBJ_CONSTRUCT(&fl->fl_slabs, opal_list_t);
    OBJ_CONSTRUCT(&fl->fl_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&fl->fl_condition, opal_condition_t);
}

static void *slab_item(const opal_free_list_t *fl, const free_list_slab_t *slab, size_t i)
{
    return (char *) slab->items + i * fl->fl_item_stride;
}

static void free_list_destruct(opal_free_list_t *fl)
{
    /* The list is no longer shared: drain it without atomics. */
    size_t free_items = 0;
    while (NULL != opal_lifo_pop_st(&fl->super)) {
        ++free_items;
    }
#if OPAL_ENABLE_DEBUG
    if (free_items != opal_free_list_num_allocated(fl)) {
        opal_obj_fatal(&fl->super.super, "OBJ_DESTRUCT of a free list with items still out",
                       __FILE__, __LINE__);
    }
#else
    (void) free_items;
#endif
    opal_list_item_t *it;
    while (NULL != (it = opal_list_remove_first(&fl->fl_slabs))) {
        free_list_slab_t *slab = (free_list_slab_t *) it;
        for (size_t i = 0; i < slab->count; ++i) {
            OBJ_DESTRUCT(slab_item(fl, slab, i));
        }
        if (NULL != fl->fl_deregister) {
            if (NULL != slab->payloads) {
                fl->fl_deregister(slab->payloads, slab->payloads_size, fl->fl_context,
                                  slab->registration);
            } else {
                fl->fl_deregister(slab->items, slab->items_size, fl->fl_context,
                                  slab->registration);
            }
        }
        free(slab->payloads);
        free(slab->items);
        OBJ_RELEASE(slab);
    }
    OBJ_DESTRUCT(&fl->fl_condition);
    OBJ_DESTRUCT(&fl->fl_lock);
    OBJ_DESTRUCT(&fl->fl_slabs);
}

OBJ_CLASS_INSTANCE(opal_free_list_t, opal_lifo_t, free_list_construct, free_list_destruct);

static bool is_power_of_two(size_t x)
{
    return 0 != x && 0 == (x & (x - 1));
}

static size_t round_up(size_t x, size_t alignment)
{
    return (x + alignment - 1) & ~(alignment - 1);
}

static bool class_derives_from(const opal_class_t *cls, const opal_class_t *base)
{
    for (; NULL != cls; cls = cls->cls_parent) {
        if (cls == base) {
            return true;
        }
    }
    return false;
}

/*
 * Allocates, registers and constructs one slab of up to count items. When
 * first is not NULL the first new item is handed to the caller instead of
 * being made free; the others go on the lifo, atomically unless st. The
 * caller serialises growth (fl_lock, or a single thread).
 */
static int free_list_grow_locked(opal_free_list_t *fl, size_t count, bool st,
                                 opal_free_list_item_t **first)
{
    if (OPAL_FAULT(free_list_grow)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    size_t allocated = opal_free_list_num_allocated(fl);
    size_t room = fl->fl_max_to_alloc - allocated;
    if (count > room) {
        count = room;
    }
    if (0 == count) {
        return OPAL_ERR_TEMP_OUT_OF_RESOURCE;
    }
    if (count > SIZE_MAX / fl->fl_item_stride ||
        (0 != fl->fl_payload_stride && count > SIZE_MAX / fl->fl_payload_stride)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }

    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    free_list_slab_t *slab = OBJ_NEW(free_list_slab_t);
    if (NULL == slab) {
        return rc;
    }
    slab->items = NULL;
    slab->payloads = NULL;
    slab->registration = NULL;
    slab->count = count;
    slab->items_size = count * fl->fl_item_stride;
    slab->payloads_size = count * fl->fl_payload_stride;
    if (0 != posix_memalign(&slab->items, fl->fl_item_alignment, slab->items_size)) {
        slab->items = NULL;
        goto fail;
    }
    if (0 != slab->payloads_size &&
        0 != posix_memalign(&slab->payloads, fl->fl_payload_alignment, slab->payloads_size)) {
        slab->payloads = NULL;
        goto fail;
    }
    if (NULL != fl->fl_register) {
        void *base = NULL != slab->payloads ? slab->payloads : slab->items;
        size_t size = NULL != slab->payloads ? slab->payloads_size : slab->items_size;
        rc = fl->fl_register(base, size, fl->fl_context, &slab->registration);
        if (OPAL_SUCCESS != rc) {
            goto fail;
        }
    }

    for (size_t i = 0; i < count; ++i) {
        opal_free_list_item_t *item = slab_item(fl, slab, i);
        OBJ_CONSTRUCT_FROM_CLASS(item, fl->fl_item_class);
        item->registration = slab->registration;
        if (NULL != slab->payloads) {
            item->ptr = (char *) slab->payloads + i * fl->fl_payload_stride;
        }
    }
    opal_list_append(&fl->fl_slabs, &slab->super);
    /* Relaxed: writers are serialised by the caller; readers only report. */
    atomic_store_explicit(&fl->fl_num_allocated, allocated + count, memory_order_relaxed);

    /* Push the highest address first so that gets walk the slab upwards.
     * The pushes publish the constructed items (see opal_lifo_push). */
    size_t keep = NULL != first ? 1 : 0;
    for (size_t i = count; i-- > keep;) {
        opal_list_item_t *item = slab_item(fl, slab, i);
        if (st) {
            opal_lifo_push_st(&fl->super, item);
        } else {
            opal_lifo_push(&fl->super, item);
        }
    }
    if (NULL != first) {
        *first = slab_item(fl, slab, 0);
    }
    return OPAL_SUCCESS;

fail:
    free(slab->payloads);
    free(slab->items);
    OBJ_RELEASE(slab);
    return rc;
}

int opal_free_list_init(opal_free_list_t *fl, size_t item_size, size_t item_alignment,
                        opal_class_t *item_class, size_t payload_size, size_t payload_alignment,
                        size_t num_initial, size_t max, size_t increment,
                        opal_free_list_register_fn_t reg_fn,
                        opal_free_list_deregister_fn_t dereg_fn, void *context)
{
    if (NULL == fl || NULL != fl->fl_item_class || NULL == item_class ||
        !class_derives_from(item_class, OBJ_CLASS(opal_free_list_item_t))) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == item_size) {
        item_size = item_class->cls_sizeof;
    }
    if (item_size < item_class->cls_sizeof) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == item_alignment) {
        item_alignment = alignof(max_align_t);
    }
    if (0 == payload_alignment) {
        payload_alignment = alignof(max_align_t);
    }
    if (!is_power_of_two(item_alignment) || !is_power_of_two(payload_alignment)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == increment || (0 != max && num_initial > max) || (NULL != dereg_fn && NULL == reg_fn)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (item_alignment < alignof(max_align_t)) {
        item_alignment = alignof(max_align_t);
    }
    /* posix_memalign wants a multiple of sizeof(void *). */
    if (payload_alignment < sizeof(void *)) {
        payload_alignment = sizeof(void *);
    }

    fl->fl_item_class = item_class;
    fl->fl_item_alignment = item_alignment;
    fl->fl_item_stride = round_up(item_size, item_alignment);
    fl->fl_payload_alignment = payload_alignment;
    fl->fl_payload_stride = 0 == payload_size ? 0 : round_up(payload_size, payload_alignment);
    fl->fl_max_to_alloc = 0 == max ? SIZE_MAX : max;
    fl->fl_num_per_alloc = increment;
    fl->fl_register = reg_fn;
    fl->fl_deregister = dereg_fn;
    fl->fl_context = context;

    if (0 == num_initial) {
        return OPAL_SUCCESS;
    }
    return opal_free_list_grow(fl, num_initial);
}

int opal_free_list_grow(opal_free_list_t *fl, size_t count)
{
    if (0 == count || NULL == fl->fl_item_class) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_mutex_lock(&fl->fl_lock);
    int rc = free_list_grow_locked(fl, count, false, NULL);
    opal_mutex_unlock(&fl->fl_lock);
    return rc;
}

opal_free_list_item_t *opal_free_list_get_grow_st(opal_free_list_t *fl)
{
    opal_free_list_item_t *item = NULL;
    (void) free_list_grow_locked(fl, fl->fl_num_per_alloc, true, &item);
    return item;
}

opal_free_list_item_t *opal_free_list_get_grow_mt(opal_free_list_t *fl)
{
    opal_mutex_lock(&fl->fl_lock);
    /* Another thread may have grown the list while we waited for the lock;
     * take one of its items rather than growing again. */
    opal_free_list_item_t *item = (opal_free_list_item_t *) opal_lifo_pop(&fl->super);
    if (NULL == item) {
        (void) free_list_grow_locked(fl, fl->fl_num_per_alloc, false, &item);
    }
    opal_mutex_unlock(&fl->fl_lock);
    return item;
}

void opal_free_list_wake(opal_free_list_t *fl)
{
    /* Signalling under the lock: a sleeper holds it from announcing itself
     * until it sleeps, so the signal cannot fall between the two. */
    opal_mutex_lock(&fl->fl_lock);
    opal_condition_signal(&fl->fl_condition);
    opal_mutex_unlock(&fl->fl_lock);
}

void opal_free_list_sleep(opal_free_list_t *fl)
{
    opal_mutex_lock(&fl->fl_lock);
    /* Sequentially consistent increment and load: pairs with the push and
     * the load of fl_num_waiting in opal_free_list_return_mt. */
    atomic_fetch_add_explicit(&fl->fl_num_waiting, 1, memory_order_seq_cst);
    if (NULL == atomic_load_explicit(&fl->super.opal_lifo_head.data.item, memory_order_seq_cst)) {
        /* The timeout bounds the sleep so the caller drives progress again:
         * items may come back only from completions that progress finds. */
        (void) opal_condition_timedwait(&fl->fl_condition, &fl->fl_lock,
                                        opal_timer_ns() + OPAL_FREE_LIST_SLEEP_NS);
    }
    atomic_fetch_sub_explicit(&fl->fl_num_waiting, 1, memory_order_relaxed);
    opal_mutex_unlock(&fl->fl_lock);
}
