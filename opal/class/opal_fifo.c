#include "opal/opal_config.h"

#include <sched.h>

#include "opal/class/opal_fifo.h"

static void fifo_construct(opal_fifo_t *fifo)
{
    atomic_init(&fifo->opal_fifo_head.data.item, NULL);
    atomic_init(&fifo->opal_fifo_head.data.counter, 0);
    atomic_init(&fifo->opal_fifo_tail, NULL);
#if !OPAL_HAVE_ATOMIC_CAS_128
    OBJ_CONSTRUCT(&fifo->opal_fifo_pop_lock, opal_mutex_t);
#endif
}

static void fifo_destruct(opal_fifo_t *fifo)
{
#if !OPAL_HAVE_ATOMIC_CAS_128
    OBJ_DESTRUCT(&fifo->opal_fifo_pop_lock);
#else
    (void) fifo;
#endif
}

OBJ_CLASS_INSTANCE(opal_fifo_t, opal_object_t, fifo_construct, fifo_destruct);

void opal_fifo_pop_finish(opal_fifo_t *fifo, opal_list_item_t *item)
{
    /* The producer that exchanged the tail past item links item->next on
     * its very next step, so a short spin usually suffices; yield after
     * that so a preempted producer on an oversubscribed machine can run. */
    opal_list_item_t *next;
    unsigned spins = 0;
    while (NULL == (next = opal_lifo_link_load(item, __ATOMIC_ACQUIRE))) {
        if (++spins < 128) {
            opal_atomic_pause();
        } else {
            sched_yield();
        }
    }
    /* Only this thread writes the head now: it is NULL (consumers leave it
     * alone) and the tail is not NULL (producers leave it alone). Release
     * pairs with the consumers' acquire of the head. */
    atomic_store_explicit(&fifo->opal_fifo_head.data.item, next, memory_order_release);
}
