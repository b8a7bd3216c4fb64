/*
 * opal_list_t: a doubly linked list of opal_list_item_t objects, with a
 * sentinel so that no operation needs a special case for an empty list.
 *
 * The list does not own a reference on its items: appending does not
 * retain, removing does not release. Destructing a list that still holds
 * items leaves them alone (the debug build clears their membership so they
 * can go into another list).
 *
 *   OPAL_LIST_FOREACH(item, &list, my_item_t) { ... }
 *   OPAL_LIST_FOREACH_SAFE(item, next, &list, my_item_t) {   (may remove item)
 *       opal_list_remove_item(&list, &item->super);
 *   }
 *
 * Debug builds (OPAL_ENABLE_DEBUG) record which list an item is in and abort
 * when an item is appended to a second list, or removed from a list that
 * does not hold it.
 */
#ifndef OPAL_CLASS_OPAL_LIST_H
#define OPAL_CLASS_OPAL_LIST_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>

#include "opal/class/opal_object.h"

typedef struct opal_list_item_t opal_list_item_t;
typedef struct opal_list_t opal_list_t;

struct opal_list_item_t {
    opal_object_t super;
    opal_list_item_t *opal_list_next;
    opal_list_item_t *opal_list_prev;
#if OPAL_ENABLE_DEBUG
    /* The list holding this item, or NULL. */
    opal_list_t *opal_list_item_belong_to;
#endif
};
OBJ_CLASS_DECLARATION(opal_list_item_t);

struct opal_list_t {
    opal_object_t super;
    opal_list_item_t opal_list_sentinel;
    size_t opal_list_length;
};
OBJ_CLASS_DECLARATION(opal_list_t);

/* Compares two items for opal_list_sort: <0, 0, >0 like qsort. */
typedef int (*opal_list_item_compare_fn_t)(opal_list_item_t **a, opal_list_item_t **b);

#define opal_list_get_next(item) (((opal_list_item_t *) (item))->opal_list_next)
#define opal_list_get_prev(item) (((opal_list_item_t *) (item))->opal_list_prev)

/* Iterates item (a pointer of type `type *`) over the list, first to last.
 * The list must not change during the loop. */
#define OPAL_LIST_FOREACH(item, list, type)                                         \
    for (item = (type *) (list)->opal_list_sentinel.opal_list_next;                 \
         item != (type *) &(list)->opal_list_sentinel;                              \
         item = (type *) ((opal_list_item_t *) (item))->opal_list_next)

/* Iterates last to first. */
#define OPAL_LIST_FOREACH_REV(item, list, type)                                     \
    for (item = (type *) (list)->opal_list_sentinel.opal_list_prev;                 \
         item != (type *) &(list)->opal_list_sentinel;                              \
         item = (type *) ((opal_list_item_t *) (item))->opal_list_prev)

/* Iterates first to last; the loop body may remove (and free) item. */
#define OPAL_LIST_FOREACH_SAFE(item, next, list, type)                              \
    for (item = (type *) (list)->opal_list_sentinel.opal_list_next,                 \
        next = (type *) ((opal_list_item_t *) (item))->opal_list_next;              \
         item != (type *) &(list)->opal_list_sentinel;                              \
         item = next, next = (type *) ((opal_list_item_t *) (item))->opal_list_next)

/* Iterates last to first; the loop body may remove (and free) item. */
#define OPAL_LIST_FOREACH_SAFE_REV(item, prev, list, type)                          \
    for (item = (type *) (list)->opal_list_sentinel.opal_list_prev,                 \
        prev = (type *) ((opal_list_item_t *) (item))->opal_list_prev;              \
         item != (type *) &(list)->opal_list_sentinel;                              \
         item = prev, prev = (type *) ((opal_list_item_t *) (item))->opal_list_prev)

/* Releases every item (OBJ_RELEASE) and destructs the list. */
#define OPAL_LIST_DESTRUCT(list)                                   \
    do {                                                           \
        opal_list_item_t *it_;                                     \
        while (NULL != (it_ = opal_list_remove_first(list))) {     \
            OBJ_RELEASE(it_);                                      \
        }                                                          \
        OBJ_DESTRUCT(list);                                        \
    } while (0)

/* Releases every item and then the list itself; sets list to NULL. */
#define OPAL_LIST_RELEASE(list)                                    \
    do {                                                           \
        opal_list_item_t *it_;                                     \
        while (NULL != (it_ = opal_list_remove_first(list))) {     \
            OBJ_RELEASE(it_);                                      \
        }                                                          \
        OBJ_RELEASE(list);                                         \
    } while (0)

static inline bool opal_list_is_empty(const opal_list_t *list)
{
    return list->opal_list_sentinel.opal_list_next == &list->opal_list_sentinel;
}

static inline size_t opal_list_get_size(const opal_list_t *list)
{
    return list->opal_list_length;
}

/* First / last item, or NULL when the list is empty. */
static inline opal_list_item_t *opal_list_get_first(opal_list_t *list)
{
    opal_list_item_t *item = list->opal_list_sentinel.opal_list_next;
    return item == &list->opal_list_sentinel ? NULL : item;
}

static inline opal_list_item_t *opal_list_get_last(opal_list_t *list)
{
    opal_list_item_t *item = list->opal_list_sentinel.opal_list_prev;
    return item == &list->opal_list_sentinel ? NULL : item;
}

/* The sentinel: what iteration by hand compares against. */
static inline opal_list_item_t *opal_list_get_end(opal_list_t *list)
{
    return &list->opal_list_sentinel;
}

static inline opal_list_item_t *opal_list_get_begin(opal_list_t *list)
{
    return &list->opal_list_sentinel;
}

#if OPAL_ENABLE_DEBUG
OPAL_DECLSPEC void opal_list_fatal(const opal_list_t *list, const opal_list_item_t *item,
                                   const char *what) __attribute__((noreturn));
#define OPAL_LIST_CHECK_FREE(list, item, what)                  \
    do {                                                        \
        OPAL_OBJ_CHECK_LIVE(item, what);                        \
        if (NULL != (item)->opal_list_item_belong_to) {         \
            opal_list_fatal((list), (item), (what));            \
        }                                                       \
    } while (0)
#define OPAL_LIST_CHECK_MEMBER(list, item, what)                \
    do {                                                        \
        if ((list) != (item)->opal_list_item_belong_to) {       \
            opal_list_fatal((list), (item), (what));            \
        }                                                       \
    } while (0)
#define OPAL_LIST_SET_OWNER(item, list) ((item)->opal_list_item_belong_to = (list))
#else
#define OPAL_LIST_CHECK_FREE(list, item, what) ((void) 0)
#define OPAL_LIST_CHECK_MEMBER(list, item, what) ((void) 0)
#define OPAL_LIST_SET_OWNER(item, list) ((void) 0)
#endif

/* Links item in before pos (pos may be the sentinel). */
static inline void opal_list_insert_pos(opal_list_t *list, opal_list_item_t *pos,
                                        opal_list_item_t *item)
{
    OPAL_LIST_CHECK_FREE(list, item, "opal_list_insert_pos");
    item->opal_list_next = pos;
    item->opal_list_prev = pos->opal_list_prev;
    pos->opal_list_prev->opal_list_next = item;
    pos->opal_list_prev = item;
    OPAL_LIST_SET_OWNER(item, list);
    ++list->opal_list_length;
}

static inline void opal_list_append(opal_list_t *list, opal_list_item_t *item)
{
    opal_list_insert_pos(list, &list->opal_list_sentinel, item);
}

static inline void opal_list_prepend(opal_list_t *list, opal_list_item_t *item)
{
    opal_list_insert_pos(list, list->opal_list_sentinel.opal_list_next, item);
}

/* Unlinks item from list and returns the item that followed it. */
static inline opal_list_item_t *opal_list_remove_item(opal_list_t *list, opal_list_item_t *item)
{
    OPAL_LIST_CHECK_MEMBER(list, item, "opal_list_remove_item");
    opal_list_item_t *next = item->opal_list_next;
    item->opal_list_prev->opal_list_next = next;
    next->opal_list_prev = item->opal_list_prev;
    item->opal_list_next = item->opal_list_prev = NULL;
    OPAL_LIST_SET_OWNER(item, NULL);
    --list->opal_list_length;
    return next;
}

/* Removes and returns the first / last item, or NULL when empty. */
static inline opal_list_item_t *opal_list_remove_first(opal_list_t *list)
{
    opal_list_item_t *item = opal_list_get_first(list);
    if (NULL != item) {
        opal_list_remove_item(list, item);
    }
    return item;
}

static inline opal_list_item_t *opal_list_remove_last(opal_list_t *list)
{
    opal_list_item_t *item = opal_list_get_last(list);
    if (NULL != item) {
        opal_list_remove_item(list, item);
    }
    return item;
}

/* Inserts item so that it becomes item number index (0-based); false when
 * index is past the end. Linear in index. */
OPAL_DECLSPEC bool opal_list_insert(opal_list_t *list, opal_list_item_t *item, size_t index);

/* Moves every item of source before pos in list (pos may be list's
 * sentinel); source ends empty. Constant time apart from debug checks. */
OPAL_DECLSPEC void opal_list_join(opal_list_t *list, opal_list_item_t *pos, opal_list_t *source);

/* Moves the items [first, last) of source before pos in list. last may be
 * source's sentinel. Linear in the number moved (the lengths are kept). */
OPAL_DECLSPEC void opal_list_splice(opal_list_t *list, opal_list_item_t *pos, opal_list_t *source,
                                    opal_list_item_t *first, opal_list_item_t *last);

/* Reverses the order of the items in place. */
OPAL_DECLSPEC void opal_list_reverse(opal_list_t *list);

/* Sorts stably by compare (merge sort; O(n log n), no allocation). */
OPAL_DECLSPEC void opal_list_sort(opal_list_t *list, opal_list_item_compare_fn_t compare);

#endif /* OPAL_CLASS_OPAL_LIST_H */
