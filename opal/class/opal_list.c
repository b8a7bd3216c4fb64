#include "opal/opal_config.h"

#include <stdio.h>

#include "opal/class/opal_list.h"

static void list_item_construct(opal_list_item_t *item)
{
    item->opal_list_next = item->opal_list_prev = NULL;
    OPAL_LIST_SET_OWNER(item, NULL);
}

static void list_item_destruct(opal_list_item_t *item)
{
#if OPAL_ENABLE_DEBUG
    if (NULL != item->opal_list_item_belong_to) {
        opal_list_fatal(item->opal_list_item_belong_to, item,
                        "destruct of an item still in a list");
    }
#else
    (void) item;
#endif
}

static void list_construct(opal_list_t *list)
{
    OBJ_CONSTRUCT(&list->opal_list_sentinel, opal_list_item_t);
    list->opal_list_sentinel.opal_list_next = &list->opal_list_sentinel;
    list->opal_list_sentinel.opal_list_prev = &list->opal_list_sentinel;
    list->opal_list_length = 0;
}

static void list_destruct(opal_list_t *list)
{
#if OPAL_ENABLE_DEBUG
    /* Items still here are not ours to free; let them join other lists. */
    for (opal_list_item_t *it = list->opal_list_sentinel.opal_list_next;
         it != &list->opal_list_sentinel; it = it->opal_list_next) {
        it->opal_list_item_belong_to = NULL;
    }
#endif
    OBJ_DESTRUCT(&list->opal_list_sentinel);
}

OBJ_CLASS_INSTANCE(opal_list_item_t, opal_object_t, list_item_construct, list_item_destruct);
OBJ_CLASS_INSTANCE(opal_list_t, opal_object_t, list_construct, list_destruct);

#if OPAL_ENABLE_DEBUG
void opal_list_fatal(const opal_list_t *list, const opal_list_item_t *item, const char *what)
{
    fprintf(stderr,
            "%s: item %p (class %s) belongs to list %p, not to list %p as the operation needs\n",
            what, (const void *) item, item->super.obj_class->cls_name,
            (const void *) item->opal_list_item_belong_to, (const void *) list);
    fflush(stderr);
    abort();
}
#endif

bool opal_list_insert(opal_list_t *list, opal_list_item_t *item, size_t index)
{
    if (index > list->opal_list_length) {
        return false;
    }
    opal_list_item_t *pos = list->opal_list_sentinel.opal_list_next;
    for (size_t i = 0; i < index; ++i) {
        pos = pos->opal_list_next;
    }
    opal_list_insert_pos(list, pos, item);
    return true;
}

/* Unhooks [first, last) from its list and links it before pos. The caller
 * fixes the lengths. */
static void move_range(opal_list_item_t *pos, opal_list_item_t *first, opal_list_item_t *last)
{
    opal_list_item_t *tail = last->opal_list_prev;

    first->opal_list_prev->opal_list_next = last;
    last->opal_list_prev = first->opal_list_prev;

    first->opal_list_prev = pos->opal_list_prev;
    tail->opal_list_next = pos;
    pos->opal_list_prev->opal_list_next = first;
    pos->opal_list_prev = tail;
}

void opal_list_join(opal_list_t *list, opal_list_item_t *pos, opal_list_t *source)
{
    if (opal_list_is_empty(source)) {
        return;
    }
#if OPAL_ENABLE_DEBUG
    for (opal_list_item_t *it = source->opal_list_sentinel.opal_list_next;
         it != &source->opal_list_sentinel; it = it->opal_list_next) {
        it->opal_list_item_belong_to = list;
    }
#endif
    move_range(pos, source->opal_list_sentinel.opal_list_next, &source->opal_list_sentinel);
    list->opal_list_length += source->opal_list_length;
    source->opal_list_length = 0;
}

void opal_list_splice(opal_list_t *list, opal_list_item_t *pos, opal_list_t *source,
                      opal_list_item_t *first, opal_list_item_t *last)
{
    if (first == last) {
        return;
    }
    size_t moved = 0;
    for (opal_list_item_t *it = first; it != last; it = it->opal_list_next) {
        OPAL_LIST_CHECK_MEMBER(source, it, "opal_list_splice");
        OPAL_LIST_SET_OWNER(it, list);
        ++moved;
    }
    move_range(pos, first, last);
    source->opal_list_length -= moved;
    list->opal_list_length += moved;
}

void opal_list_reverse(opal_list_t *list)
{
    opal_list_item_t *sentinel = &list->opal_list_sentinel;
    opal_list_item_t *it = sentinel;
    do {
        opal_list_item_t *next = it->opal_list_next;
        it->opal_list_next = it->opal_list_prev;
        it->opal_list_prev = next;
        it = next;
    } while (it != sentinel);
}

/* Merges two NULL-terminated singly linked runs, stable (a before b on
 * ties). */
static opal_list_item_t *merge_runs(opal_list_item_t *a, opal_list_item_t *b,
                                    opal_list_item_compare_fn_t compare)
{
    opal_list_item_t head, *tail = &head;
    while (NULL != a && NULL != b) {
        if (compare(&b, &a) < 0) {
            tail->opal_list_next = b;
            b = b->opal_list_next;
        } else {
            tail->opal_list_next = a;
            a = a->opal_list_next;
        }
        tail = tail->opal_list_next;
    }
    tail->opal_list_next = (NULL != a) ? a : b;
    return head.opal_list_next;
}

void opal_list_sort(opal_list_t *list, opal_list_item_compare_fn_t compare)
{
    if (list->opal_list_length < 2) {
        return;
    }
    opal_list_item_t *sentinel = &list->opal_list_sentinel;
    sentinel->opal_list_prev->opal_list_next = NULL;

    /* Bottom-up merge sort with a binary counter of runs: runs[i] holds a
     * sorted run of 2^i items or NULL. 64 slots cover any list length. */
    opal_list_item_t *runs[64] = {NULL};
    opal_list_item_t *it = sentinel->opal_list_next;
    int max_slot = 0;
    while (NULL != it) {
        opal_list_item_t *run = it;
        it = it->opal_list_next;
        run->opal_list_next = NULL;
        int slot = 0;
        /* Older runs hold earlier items, so they go first: stability. */
        for (; NULL != runs[slot]; ++slot) {
            run = merge_runs(runs[slot], run, compare);
            runs[slot] = NULL;
        }
        runs[slot] = run;
        if (slot > max_slot) {
            max_slot = slot;
        }
    }
    opal_list_item_t *sorted = NULL;
    for (int slot = 0; slot <= max_slot; ++slot) {
        if (NULL != runs[slot]) {
            sorted = (NULL == sorted) ? runs[slot] : merge_runs(runs[slot], sorted, compare);
        }
    }

    /* Rebuild the back links. */
    opal_list_item_t *prev = sentinel;
    for (it = sorted; NULL != it; it = it->opal_list_next) {
        it->opal_list_prev = prev;
        prev->opal_list_next = it;
        prev = it;
    }
    prev->opal_list_next = sentinel;
    sentinel->opal_list_prev = prev;
}
