/*
 * Threaded stress for opal_lifo_t, opal_fifo_t and opal_free_list_t with
 * 2, 4 and 8 threads, a million operations per run (scaled down under
 * valgrind). Every item carries an owner flag that a thread sets with an
 * atomic exchange when it takes the item and clears before giving it
 * back: finding it already set means an item was handed out twice. At the
 * end every item must be found again exactly once (none lost).
 *
 * Few items circulate, so the containers are often empty or nearly so:
 * that is where the ABA and last-item races live. Threads record failures
 * in their own counters and the main thread asserts after joining.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "opal/class/opal_fifo.h"
#include "opal/class/opal_free_list.h"
#include "opal/class/opal_lifo.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

enum { MAX_THREADS = 8, MAX_HOLD = 4 };

typedef struct {
    opal_free_list_item_t super;
    _Atomic int owned;
    int index;
    int producer;
    size_t seq;
} sitem_t;

static opal_atomic_int32_t sitem_constructed;
static void sitem_construct(sitem_t *it)
{
    atomic_init(&it->owned, 0);
    it->index = atomic_fetch_add(&sitem_constructed, 1);
    it->producer = -1;
    it->seq = 0;
}
OBJ_CLASS_DECLARATION(sitem_t);
OBJ_CLASS_INSTANCE(sitem_t, opal_free_list_item_t, sitem_construct, NULL);

#if defined(__SANITIZE_THREAD__)
#define STRESS_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRESS_UNDER_TSAN 1
#endif
#endif

/* Operations per run of one case. ThreadSanitizer runs the code several
 * times slower: there each case does half, so that the three thread counts
 * together still make well over a million operations per container. */
static size_t total_ops(void)
{
#if defined(STRESS_UNDER_TSAN)
    return opal_test_iterations(500000);
#else
    return opal_test_iterations(1000000);
#endif
}

static uint32_t xorshift(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

/* What one thread saw. */
typedef struct {
    int index;
    size_t quota;
    size_t handed_out_twice;
    size_t released_unowned;
    size_t out_of_order;
    size_t duplicated;
    size_t received;
    void *(*body)(void *);
} worker_t;

static void take(worker_t *w, sitem_t *it)
{
    /* The exchanges on one flag are totally ordered whatever the memory
     * order: a second owner always sees 1. */
    if (0 != atomic_exchange_explicit(&it->owned, 1, memory_order_relaxed)) {
        ++w->handed_out_twice;
    }
}

static void give_back(worker_t *w, sitem_t *it)
{
    if (1 != atomic_exchange_explicit(&it->owned, 0, memory_order_relaxed)) {
        ++w->released_unowned;
    }
}

/* All threads start at once, so they overlap even when a quota takes
 * less than a scheduler time slice. */
static pthread_barrier_t start_line;
static void *start_together(void *arg)
{
    worker_t *w = arg;
    pthread_barrier_wait(&start_line);
    return w->body(w);
}

static void run_threads(int nthreads, void *(*body)(void *), worker_t *workers)
{
    pthread_t t[MAX_THREADS];
    ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, (unsigned) nthreads), 0);
    for (int i = 0; i < nthreads; ++i) {
        workers[i].body = body;
        ck_assert_int_eq(pthread_create(&t[i], NULL, start_together, &workers[i]), 0);
    }
    for (int i = 0; i < nthreads; ++i) {
        pthread_join(t[i], NULL);
    }
    pthread_barrier_destroy(&start_line);
    for (int i = 0; i < nthreads; ++i) {
        ck_assert_uint_eq(workers[i].handed_out_twice, 0);
        ck_assert_uint_eq(workers[i].released_unowned, 0);
        ck_assert_uint_eq(workers[i].out_of_order, 0);
        ck_assert_uint_eq(workers[i].duplicated, 0);
    }
}

static void init_workers(worker_t *workers, int nthreads, size_t total)
{
    for (int i = 0; i < nthreads; ++i) {
        workers[i] = (worker_t){.index = i, .quota = total / (size_t) nthreads};
    }
}

/* Every item exactly once in what drain() yields, none still owned. items
 * (when not NULL) maps an index to its item; drained items go to keep when
 * it is not NULL. */
static void check_all_back(sitem_t **items, size_t nitems, opal_list_item_t *(*drain)(void *),
                           void *container, opal_lifo_t *keep)
{
    int *seen = calloc(nitems, sizeof(*seen));
    ck_assert_ptr_nonnull(seen);
    size_t found = 0;
    sitem_t *it;
    while (NULL != (it = (sitem_t *) drain(container))) {
        ck_assert_int_ge(it->index, 0);
        ck_assert_uint_lt((size_t) it->index, nitems);
        if (NULL != items) {
            ck_assert_ptr_eq(items[it->index], it);
        }
        ck_assert_int_eq(atomic_load(&it->owned), 0);
        ++seen[it->index];
        ++found;
        if (NULL != keep) {
            opal_lifo_push_st(keep, &it->super.super);
        }
    }
    ck_assert_uint_eq(found, nitems);
    for (size_t i = 0; i < nitems; ++i) {
        ck_assert_int_eq(seen[i], 1);
    }
    free(seen);
}

/* ---- lifo and fifo: every thread both takes and gives back ---- */

static opal_lifo_t lifo;
static opal_fifo_t fifo;

static opal_list_item_t *lifo_pop(void *c)
{
    return opal_lifo_pop(c);
}
static void lifo_push(void *c, opal_list_item_t *it)
{
    opal_lifo_push(c, it);
}
static opal_list_item_t *fifo_pop(void *c)
{
    return opal_fifo_pop(c);
}
static void fifo_push(void *c, opal_list_item_t *it)
{
    opal_fifo_push(c, it);
}

static opal_list_item_t *(*sym_pop)(void *);
static void (*sym_push)(void *, opal_list_item_t *);
static void *sym_container;

/* Takes up to MAX_HOLD items and gives them back in random order. */
static void *symmetric_body(void *arg)
{
    worker_t *w = arg;
    sitem_t *held[MAX_HOLD];
    int nheld = 0;
    uint32_t rng = 2463534242u + 7919u * (uint32_t) w->index;
    for (size_t ops = 0; ops < w->quota; ++ops) {
        bool taking = 0 == nheld || (MAX_HOLD > nheld && (xorshift(&rng) & 1));
        if (taking) {
            sitem_t *it = (sitem_t *) sym_pop(sym_container);
            if (NULL != it) {
                take(w, it);
                held[nheld++] = it;
            }
        } else {
            int pick = (int) (xorshift(&rng) % (uint32_t) nheld);
            sitem_t *it = held[pick];
            held[pick] = held[--nheld];
            give_back(w, it);
            sym_push(sym_container, &it->super.super);
        }
    }
    while (nheld > 0) {
        sitem_t *it = held[--nheld];
        give_back(w, it);
        sym_push(sym_container, &it->super.super);
    }
    return NULL;
}

static void symmetric_stress(int nthreads, opal_list_item_t *(*pop)(void *),
                             void (*push)(void *, opal_list_item_t *), void *container)
{
    /* Fewer items than the threads can hold: pops often find it empty. */
    size_t nitems = 2 * (size_t) nthreads + 1;
    sitem_t **items = calloc(nitems, sizeof(*items));
    ck_assert_ptr_nonnull(items);
    atomic_store(&sitem_constructed, 0);
    for (size_t i = 0; i < nitems; ++i) {
        items[i] = OBJ_NEW(sitem_t);
        ck_assert_ptr_nonnull(items[i]);
        push(container, &items[i]->super.super);
    }
    sym_pop = pop;
    sym_push = push;
    sym_container = container;

    worker_t workers[MAX_THREADS];
    init_workers(workers, nthreads, total_ops());
    run_threads(nthreads, symmetric_body, workers);
    check_all_back(items, nitems, pop, container, NULL);

    for (size_t i = 0; i < nitems; ++i) {
        OBJ_RELEASE(items[i]);
    }
    free(items);
}

static void lifo_stress(int nthreads)
{
    OBJ_CONSTRUCT(&lifo, opal_lifo_t);
    symmetric_stress(nthreads, lifo_pop, lifo_push, &lifo);
    OBJ_DESTRUCT(&lifo);
}

static void fifo_stress(int nthreads)
{
    OBJ_CONSTRUCT(&fifo, opal_fifo_t);
    symmetric_stress(nthreads, fifo_pop, fifo_push, &fifo);
    OBJ_DESTRUCT(&fifo);
}

/* ---- fifo order: producers stamp items, consumers check the stamps ----
 * Producers take blank items from a shared lifo (the pool), stamp them
 * (producer, sequence number) and push them on the fifo; consumers pop
 * them, check that each producer's numbers arrive in increasing order and
 * only once, and put the items back in the pool. */

static size_t order_messages_per_producer;
static int order_producers;
static opal_atomic_size_t order_consumed;
static size_t order_total;
/* received[p][seq] counts deliveries of each message. */
static _Atomic unsigned char *received[MAX_THREADS];

static void backoff(unsigned *spins)
{
    if (++*spins % 64 == 0) {
        sched_yield();
    } else {
        opal_atomic_pause();
    }
}

static void *producer_body(void *arg)
{
    worker_t *w = arg;
    for (size_t seq = 0; seq < order_messages_per_producer; ++seq) {
        sitem_t *it;
        unsigned spins = 0;
        while (NULL == (it = (sitem_t *) opal_lifo_pop(&lifo))) {
            backoff(&spins);
        }
        take(w, it);
        it->producer = w->index;
        it->seq = seq;
        give_back(w, it);
        /* The release in push publishes the stamp to the consumer. */
        opal_fifo_push(&fifo, &it->super.super);
    }
    return NULL;
}

static void *consumer_body(void *arg)
{
    worker_t *w = arg;
    size_t last[MAX_THREADS];
    bool any[MAX_THREADS] = {false};
    unsigned spins = 0;
    while (atomic_load_explicit(&order_consumed, memory_order_relaxed) < order_total) {
        sitem_t *it = (sitem_t *) opal_fifo_pop(&fifo);
        if (NULL == it) {
            backoff(&spins);
            continue;
        }
        atomic_fetch_add_explicit(&order_consumed, 1, memory_order_relaxed);
        take(w, it);
        int p = it->producer;
        if (p < 0 || p >= order_producers || it->seq >= order_messages_per_producer) {
            ++w->duplicated;
        } else {
            if (any[p] && it->seq <= last[p]) {
                ++w->out_of_order;
            }
            any[p] = true;
            last[p] = it->seq;
            if (0 != atomic_fetch_add_explicit(&received[p][it->seq], 1, memory_order_relaxed)) {
                ++w->duplicated;
            }
        }
        ++w->received;
        it->producer = -1;
        give_back(w, it);
        opal_lifo_push(&lifo, &it->super.super);
    }
    return NULL;
}

static void *order_body(void *arg)
{
    worker_t *w = arg;
    return w->index < order_producers ? producer_body(w) : consumer_body(w);
}

static void fifo_order_stress(int nthreads)
{
    OBJ_CONSTRUCT(&lifo, opal_lifo_t);
    OBJ_CONSTRUCT(&fifo, opal_fifo_t);
    order_producers = nthreads / 2;
    /* One push and one pop per message. */
    order_total = total_ops() / 2;
    order_messages_per_producer = order_total / (size_t) order_producers;
    order_total = order_messages_per_producer * (size_t) order_producers;
    atomic_store(&order_consumed, 0);
    for (int p = 0; p < order_producers; ++p) {
        received[p] = calloc(order_messages_per_producer, sizeof(*received[p]));
        ck_assert_ptr_nonnull(received[p]);
    }
    size_t nitems = 2 * (size_t) nthreads;
    sitem_t **items = calloc(nitems, sizeof(*items));
    ck_assert_ptr_nonnull(items);
    atomic_store(&sitem_constructed, 0);
    for (size_t i = 0; i < nitems; ++i) {
        items[i] = OBJ_NEW(sitem_t);
        ck_assert_ptr_nonnull(items[i]);
        opal_lifo_push(&lifo, &items[i]->super.super);
    }

    worker_t workers[MAX_THREADS];
    init_workers(workers, nthreads, 0);
    run_threads(nthreads, order_body, workers);

    size_t received_total = 0;
    for (int i = order_producers; i < nthreads; ++i) {
        received_total += workers[i].received;
    }
    ck_assert_uint_eq(received_total, order_total);
    /* Counted, then asserted once: each Check assertion costs a syscall. */
    size_t not_once = 0;
    for (int p = 0; p < order_producers; ++p) {
        for (size_t s = 0; s < order_messages_per_producer; ++s) {
            not_once += 1 != received[p][s];
        }
        free((void *) received[p]);
    }
    ck_assert_uint_eq(not_once, 0);
    ck_assert(opal_fifo_is_empty(&fifo));
    check_all_back(items, nitems, lifo_pop, &lifo, NULL);
    for (size_t i = 0; i < nitems; ++i) {
        OBJ_RELEASE(items[i]);
    }
    free(items);
    OBJ_DESTRUCT(&fifo);
    OBJ_DESTRUCT(&lifo);
}

/* ---- free list: get (sometimes wait) and return, growing to a max ---- */

static opal_free_list_t fl;

static void *free_list_body(void *arg)
{
    worker_t *w = arg;
    sitem_t *held[MAX_HOLD];
    int nheld = 0;
    uint32_t rng = 88675123u + 7919u * (uint32_t) w->index;
    for (size_t ops = 0; ops < w->quota; ++ops) {
        uint32_t r = xorshift(&rng);
        bool taking = 0 == nheld || (MAX_HOLD > nheld && (r & 1));
        if (taking) {
            /* Wait only with empty hands: whoever holds items returns them
             * without blocking, so a waiter is always woken. */
            sitem_t *it = (sitem_t *) (0 == nheld && 0 == (r & 0x6) ? opal_free_list_wait(&fl)
                                                                    : opal_free_list_get(&fl));
            if (NULL != it) {
                take(w, it);
                held[nheld++] = it;
            }
        } else {
            int pick = (int) ((r >> 8) % (uint32_t) nheld);
            sitem_t *it = held[pick];
            held[pick] = held[--nheld];
            give_back(w, it);
            opal_free_list_return(&fl, &it->super);
        }
    }
    while (nheld > 0) {
        sitem_t *it = held[--nheld];
        give_back(w, it);
        opal_free_list_return(&fl, &it->super);
    }
    return NULL;
}

static opal_list_item_t *free_list_drain(void *c)
{
    return opal_lifo_pop_st(&((opal_free_list_t *) c)->super);
}

static void free_list_stress(int nthreads)
{
    bool had_threads = opal_set_using_threads(true);
    atomic_store(&sitem_constructed, 0);
    OBJ_CONSTRUCT(&fl, opal_free_list_t);
    /* Fewer items at the maximum than the threads can hold, and growth in
     * small steps, so gets race with growth and hit the maximum. */
    size_t max = 3 * (size_t) nthreads;
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 64, OBJ_CLASS(sitem_t), 64, 64, 2, max, 3, NULL, NULL, NULL),
        OPAL_SUCCESS);

    worker_t workers[MAX_THREADS];
    init_workers(workers, nthreads, total_ops());
    run_threads(nthreads, free_list_body, workers);

    size_t allocated = opal_free_list_num_allocated(&fl);
    ck_assert_uint_le(allocated, max);
    ck_assert_int_eq(atomic_load(&sitem_constructed), (int) allocated);
    /* Drain the list, checking, and put the items back for the destruct. */
    opal_lifo_t drained;
    OBJ_CONSTRUCT(&drained, opal_lifo_t);
    check_all_back(NULL, allocated, free_list_drain, &fl, &drained);
    opal_list_item_t *li;
    while (NULL != (li = opal_lifo_pop_st(&drained))) {
        opal_lifo_push_st(&fl.super, li);
    }
    OBJ_DESTRUCT(&drained);
    OBJ_DESTRUCT(&fl);
    opal_set_using_threads(had_threads);
}

#define STRESS_CASE(name, fn, n)                                                                   \
    START_TEST(name)                                                                               \
    {                                                                                              \
        fn(n);                                                                                     \
    }                                                                                              \
    END_TEST

STRESS_CASE(lifo_keeps_every_item_with_2_threads, lifo_stress, 2)
STRESS_CASE(lifo_keeps_every_item_with_4_threads, lifo_stress, 4)
STRESS_CASE(lifo_keeps_every_item_with_8_threads, lifo_stress, 8)
STRESS_CASE(fifo_keeps_every_item_with_2_threads, fifo_stress, 2)
STRESS_CASE(fifo_keeps_every_item_with_4_threads, fifo_stress, 4)
STRESS_CASE(fifo_keeps_every_item_with_8_threads, fifo_stress, 8)
STRESS_CASE(fifo_keeps_producer_order_with_2_threads, fifo_order_stress, 2)
STRESS_CASE(fifo_keeps_producer_order_with_4_threads, fifo_order_stress, 4)
STRESS_CASE(fifo_keeps_producer_order_with_8_threads, fifo_order_stress, 8)
STRESS_CASE(free_list_keeps_every_item_with_2_threads, free_list_stress, 2)
STRESS_CASE(free_list_keeps_every_item_with_4_threads, free_list_stress, 4)
STRESS_CASE(free_list_keeps_every_item_with_8_threads, free_list_stress, 8)

static Suite *stress_suite(void)
{
    Suite *s = suite_create("opal_container_stress");
    OPAL_TEST_ADD(s, lifo_keeps_every_item_with_2_threads);
    OPAL_TEST_ADD(s, lifo_keeps_every_item_with_4_threads);
    OPAL_TEST_ADD(s, lifo_keeps_every_item_with_8_threads);
    OPAL_TEST_ADD(s, fifo_keeps_every_item_with_2_threads);
    OPAL_TEST_ADD(s, fifo_keeps_every_item_with_4_threads);
    OPAL_TEST_ADD(s, fifo_keeps_every_item_with_8_threads);
    OPAL_TEST_ADD(s, fifo_keeps_producer_order_with_2_threads);
    OPAL_TEST_ADD(s, fifo_keeps_producer_order_with_4_threads);
    OPAL_TEST_ADD(s, fifo_keeps_producer_order_with_8_threads);
    OPAL_TEST_ADD(s, free_list_keeps_every_item_with_2_threads);
    OPAL_TEST_ADD(s, free_list_keeps_every_item_with_4_threads);
    OPAL_TEST_ADD(s, free_list_keeps_every_item_with_8_threads);
    return s;
}

int main(void)
{
    int rc = opal_test_run(stress_suite());
    opal_class_finalize();
    return rc;
}
