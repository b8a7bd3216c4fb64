#include "opal/opal_config.h"

#include "opal/class/opal_lifo.h"

static void lifo_construct(opal_lifo_t *lifo)
{
    atomic_init(&lifo->opal_lifo_head.data.item, NULL);
    atomic_init(&lifo->opal_lifo_head.data.counter, 0);
#if !OPAL_HAVE_ATOMIC_CAS_128
    OBJ_CONSTRUCT(&lifo->opal_lifo_pop_lock, opal_mutex_t);
#endif
}

static void lifo_destruct(opal_lifo_t *lifo)
{
#if !OPAL_HAVE_ATOMIC_CAS_128
    OBJ_DESTRUCT(&lifo->opal_lifo_pop_lock);
#else
    (void) lifo;
#endif
}

OBJ_CLASS_INSTANCE(opal_lifo_t, opal_object_t, lifo_construct, lifo_destruct);
