/*
 * The progress engine.
 *
 * Passes are exclusive: a pass (running the callbacks, or dispatching fd
 * events) happens with the pass held: pass_owner holds the thread's token
 * (a compare-and-swap from 0 takes it, a release store of 0 gives it
 * back; "pass_lock" below). opal_progress() only tries, so a second thread
 * returns 0 at once; opal_progress_wait() and unregistration wait for it,
 * spinning then yielding, announced through pass_waiters so that a thread
 * spinning on opal_progress() cannot starve them. A pthread mutex did the
 * same for about 55 more instructions of every idle round (its trylock
 * and unlock); passes are short, so a waiter seldom yields long.
 *
 * Callbacks live in copy-on-write arrays. Registration, under reg_lock,
 * builds a new array and publishes it with a release store; a pass reads
 * the current array with an acquire load and never locks reg_lock. The old
 * array may still be walked by the running pass, so it is retired onto a
 * lock-free list and freed by whoever next holds pass_lock (the next pass,
 * or an unregistration waiting for the pass), when no walker can remain.
 * Unregistration additionally clears the callback's slot in the current
 * array, so a pass already walking that array skips it.
 *
 * Lock order: pass_lock, then reg_lock (a pass dispatching fd events looks
 * up the watch under reg_lock). Registration never takes pass_lock while
 * holding reg_lock.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_timer.h"

enum {
    LP_INTERVAL_DEFAULT = 8,
    /* Events taken from epoll per wait; more stay ready for the next one. */
    WAIT_MAX_EVENTS = 16
};

/* epoll data of the internal eventfd. Registered fds carry
 * (generation << 32 | fd) with fd >= 0, so their data never has the low
 * half all ones. */
#define WAKE_TOKEN UINT64_MAX

/* Level-triggered, one-shot: see dispatch(). */
#define WATCH_EVENTS (EPOLLIN | EPOLLONESHOT)

typedef struct callback_array {
    struct callback_array *retired_next;
    size_t count;
    /* Written before the array is published; afterwards a slot only ever
     * changes to NULL (unregistration), hence atomic. */
    _Atomic(opal_progress_callback_t) callbacks[];
} callback_array_t;

typedef _Atomic(callback_array_t *) callback_slot_t;

typedef struct {
    int fd;
    /* Tells this registration from an earlier one of the same fd number,
     * whose events may still be in another thread's hands. */
    uint32_t generation;
    opal_progress_fd_callback_t callback;
    /* NULL: the fd needs no arming before a sleep. */
    opal_progress_fd_arm_t arm;
    void *context;
} fd_watch_t;

static struct {
    /* The token of the thread holding the pass ("pass_lock"), 0 when none. */
    _Atomic uintptr_t pass_owner;
    /* Threads waiting for the pass; while > 0 opal_progress() backs off. */
    opal_atomic_int32_t pass_waiters;
    callback_slot_t high;
    callback_slot_t low;
    /* Arrays replaced but perhaps still walked by the running pass. */
    callback_slot_t retired;
    opal_atomic_uint32_t lp_interval;
    /* Passes since low-priority callbacks last ran. Written by the pass
     * holder and by opal_progress_set_lp_interval(); a lost reset only
     * shifts when the next low-priority round comes. */
    opal_atomic_uint32_t lp_count;

    /* Guards everything below and serialises array replacement. */
    pthread_mutex_t reg_lock;
    int init_count;
    fd_watch_t *watches;
    size_t nwatches;
    size_t watches_size;
    /* Watches with an arm hook; written under reg_lock, read without it
     * (relaxed) by waiting threads. */
    opal_atomic_size_t narmed;
    uint32_t next_generation;
    /* Read without reg_lock by waiting threads and by
     * opal_progress_wakeup(), which may run in a signal handler: atomic,
     * relaxed, because they change only in init/finalize, which no thread
     * races with. */
    opal_atomic_int32_t epoll_fd;
    opal_atomic_int32_t wake_fd;
} engine = {
    .lp_interval = LP_INTERVAL_DEFAULT,
    .reg_lock = PTHREAD_MUTEX_INITIALIZER,
    .epoll_fd = -1,
    .wake_fd = -1,
};

/* ---- exclusive passes ------------------------------------------------ */

static inline uintptr_t self_token(void)
{
    /* glibc's pthread_t is the thread's descriptor address: never 0. */
    return (uintptr_t) pthread_self();
}

/* True when the caller holds pass_lock, i.e. runs inside a callback.
 * Relaxed is enough: only a thread itself stores its own token, and it
 * clears it when it leaves, so reading our token means we hold the pass,
 * whatever other threads have stored since. */
static inline bool in_pass(void)
{
    return atomic_load_explicit(&engine.pass_owner, memory_order_relaxed) == self_token();
}

/* Takes the pass from nobody. Acquire pairs with pass_leave's release:
 * the previous pass's writes are visible to this one. */
static inline bool pass_take(uintptr_t self)
{
    uintptr_t none = 0;
    return 0 == atomic_load_explicit(&engine.pass_owner, memory_order_relaxed) &&
           atomic_compare_exchange_strong_explicit(&engine.pass_owner, &none, self,
                                                   memory_order_acquire, memory_order_relaxed);
}

static inline bool pass_try_enter(void)
{
    /* Relaxed: a stale 0 only lets this thread take one more pass before it
     * sees a waiter. */
    if (OPAL_UNLIKELY(0 < atomic_load_explicit(&engine.pass_waiters, memory_order_relaxed))) {
        return false;
    }
    return pass_take(self_token());
}

static void pass_enter(void)
{
    atomic_fetch_add_explicit(&engine.pass_waiters, 1, memory_order_relaxed);
    uintptr_t self = self_token();
    for (unsigned spins = 0; !pass_take(self); ++spins) {
        /* A pass is a round of callbacks: spin a little, then let the
         * holder (perhaps on this core) run. */
        if (spins < 100) {
            opal_atomic_pause();
        } else {
            sched_yield();
        }
    }
    atomic_fetch_sub_explicit(&engine.pass_waiters, 1, memory_order_relaxed);
}

static inline void pass_leave(void)
{
    atomic_store_explicit(&engine.pass_owner, 0, memory_order_release);
}

/* ---- callback arrays ------------------------------------------------- */

static void free_array_list(callback_array_t *list)
{
    while (NULL != list) {
        callback_array_t *next = list->retired_next;
        free(list);
        list = next;
    }
}

/* Caller holds pass_lock: no pass walks a retired array any more (the one
 * that did released pass_lock before we took it). */
static inline void free_retired(void)
{
    if (OPAL_LIKELY(NULL == atomic_load_explicit(&engine.retired, memory_order_relaxed))) {
        return;
    }
    /* Acquire pairs with the release in retire(): the pushes (and the
     * writes that built those arrays) happen before the free. */
    free_array_list(atomic_exchange_explicit(&engine.retired, NULL, memory_order_acquire));
}

/* Caller holds reg_lock (one pusher at a time); free_retired() may take the
 * list concurrently, hence the CAS. */
static void retire(callback_array_t *array)
{
    callback_array_t *head = atomic_load_explicit(&engine.retired, memory_order_relaxed);
    do {
        array->retired_next = head;
    } while (!atomic_compare_exchange_weak_explicit(&engine.retired, &head, array,
                                                    memory_order_release, memory_order_relaxed));
}

static int run_callbacks(callback_slot_t *slot)
{
    /* Acquire pairs with the release store in rebuild(): the slots of the
     * array are complete before it is seen. */
    callback_array_t *array = atomic_load_explicit(slot, memory_order_acquire);
    if (NULL == array) {
        return 0;
    }
    int events = 0;
    for (size_t i = 0; i < array->count; ++i) {
        /* Relaxed: a slot cleared by a callback of this pass is this
         * thread's own store; one cleared by another thread need not be
         * seen, as that thread waits for this pass to end. */
        opal_progress_callback_t cb =
            atomic_load_explicit(&array->callbacks[i], memory_order_relaxed);
        if (NULL != cb) {
            int n = cb();
            if (n > 0) {
                events += n;
            }
        }
    }
    return events;
}

/* Caller holds pass_lock. */
static int run_pass(void)
{
    free_retired();
    int events = run_callbacks(&engine.high);

    uint32_t count = atomic_load_explicit(&engine.lp_count, memory_order_relaxed) + 1;
    if (count >= atomic_load_explicit(&engine.lp_interval, memory_order_relaxed)) {
        count = 0;
        events += run_callbacks(&engine.low);
    }
    atomic_store_explicit(&engine.lp_count, count, memory_order_relaxed);
    return events;
}

/* Caller holds reg_lock. Relaxed loads of the slots: reg_lock orders every
 * store to them, and only reg_lock holders store. */
static callback_array_t *current(callback_slot_t *slot)
{
    return atomic_load_explicit(slot, memory_order_relaxed);
}

static ssize_t find_callback(callback_array_t *array, opal_progress_callback_t cb)
{
    if (NULL != array) {
        for (size_t i = 0; i < array->count; ++i) {
            if (atomic_load_explicit(&array->callbacks[i], memory_order_relaxed) == cb) {
                return (ssize_t) i;
            }
        }
    }
    return -1;
}

/* Caller holds reg_lock. Publishes a copy of the slot's array without its
 * cleared slots, plus extra when not NULL; an empty result publishes NULL
 * so the fast path does not even look. */
static int rebuild(callback_slot_t *slot, opal_progress_callback_t extra)
{
    callback_array_t *old = current(slot);
    size_t count = (NULL != extra);
    for (size_t i = 0; NULL != old && i < old->count; ++i) {
        count += (NULL != atomic_load_explicit(&old->callbacks[i], memory_order_relaxed));
    }

    callback_array_t *fresh = NULL;
    if (count > 0) {
        fresh = malloc(sizeof(*fresh) + count * sizeof(fresh->callbacks[0]));
        if (NULL == fresh) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        fresh->retired_next = NULL;
        fresh->count = 0;
        for (size_t i = 0; NULL != old && i < old->count; ++i) {
            opal_progress_callback_t cb =
                atomic_load_explicit(&old->callbacks[i], memory_order_relaxed);
            if (NULL != cb) {
                atomic_init(&fresh->callbacks[fresh->count++], cb);
            }
        }
        if (NULL != extra) {
            atomic_init(&fresh->callbacks[fresh->count++], extra);
        }
    }
    /* Release pairs with the acquire load in run_callbacks(). */
    atomic_store_explicit(slot, fresh, memory_order_release);
    if (NULL != old) {
        retire(old);
    }
    return OPAL_SUCCESS;
}

static int add_callback(callback_slot_t *slot, opal_progress_callback_t cb)
{
    if (NULL == cb) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc;
    pthread_mutex_lock(&engine.reg_lock);
    if (0 == engine.init_count) {
        rc = OPAL_ERR_NOT_INITIALIZED;
    } else if (0 <= find_callback(current(&engine.high), cb) ||
               0 <= find_callback(current(&engine.low), cb)) {
        rc = OPAL_ERR_EXISTS;
    } else {
        rc = rebuild(slot, cb);
    }
    pthread_mutex_unlock(&engine.reg_lock);
    return rc;
}

/* After a removal: returns once no pass that could still call what was
 * removed is running. A caller inside a pass is that pass, and returns at
 * once. Holding pass_lock, it is also a safe moment to free retired
 * arrays. */
static void wait_for_running_pass(void)
{
    if (in_pass()) {
        return;
    }
    pass_enter();
    free_retired();
    pass_leave();
}

int opal_progress(void)
{
    /* The process_exit fault: a rank dies at a chosen point of its run. */
    if (OPAL_FAULT(process_exit)) {
        int sig = (int) opal_fault_arg(OPAL_FAULT_SITE_process_exit);
        if (sig > 0) {
            (void) raise(sig);
        }
        _exit(97);
    }
    /* Nothing registered: not even the try-lock. Relaxed: a registration
     * racing with this call may be seen by the next one. */
    if (NULL == atomic_load_explicit(&engine.high, memory_order_relaxed) &&
        NULL == atomic_load_explicit(&engine.low, memory_order_relaxed)) {
        return 0;
    }
    if (!pass_try_enter()) {
        return 0;
    }
    int events = run_pass();
    pass_leave();
    return events;
}

int opal_progress_register(opal_progress_callback_t cb)
{
    return add_callback(&engine.high, cb);
}

int opal_progress_register_lp(opal_progress_callback_t cb)
{
    return add_callback(&engine.low, cb);
}

int opal_progress_unregister(opal_progress_callback_t cb)
{
    if (NULL == cb) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = OPAL_ERR_NOT_FOUND;
    pthread_mutex_lock(&engine.reg_lock);
    if (0 == engine.init_count) {
        rc = OPAL_ERR_NOT_INITIALIZED;
    }
    callback_slot_t *slots[] = {&engine.high, &engine.low};
    for (size_t s = 0; OPAL_ERR_NOT_FOUND == rc && s < sizeof(slots) / sizeof(slots[0]); ++s) {
        callback_array_t *array = current(slots[s]);
        ssize_t i = find_callback(array, cb);
        if (i >= 0) {
            /* Clearing the slot is what a running pass sees; the compacted
             * copy only saves later passes a look at the hole, so running
             * out of memory for it is harmless. */
            atomic_store_explicit(&array->callbacks[i], NULL, memory_order_relaxed);
            (void) rebuild(slots[s], NULL);
            rc = OPAL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&engine.reg_lock);
    if (OPAL_SUCCESS == rc) {
        wait_for_running_pass();
    }
    return rc;
}

int opal_progress_set_lp_interval(unsigned interval)
{
    if (0 == interval) {
        return OPAL_ERR_BAD_PARAM;
    }
    atomic_store_explicit(&engine.lp_interval, (uint32_t) interval, memory_order_relaxed);
    atomic_store_explicit(&engine.lp_count, 0, memory_order_relaxed);
    return OPAL_SUCCESS;
}

/* ---- file descriptors ------------------------------------------------ */

static inline uint64_t watch_token(int fd, uint32_t generation)
{
    return ((uint64_t) generation << 32) | (uint32_t) fd;
}

/* Caller holds reg_lock. */
static ssize_t find_watch(int fd)
{
    for (size_t i = 0; i < engine.nwatches; ++i) {
        if (engine.watches[i].fd == fd) {
            return (ssize_t) i;
        }
    }
    return -1;
}

int opal_progress_fd_register(int fd, opal_progress_fd_callback_t cb, void *context)
{
    return opal_progress_fd_register_armed(fd, cb, NULL, context);
}

int opal_progress_fd_register_armed(int fd, opal_progress_fd_callback_t cb,
                                    opal_progress_fd_arm_t arm, void *context)
{
    if (fd < 0 || NULL == cb) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = OPAL_SUCCESS;
    pthread_mutex_lock(&engine.reg_lock);
    if (0 == engine.init_count) {
        rc = OPAL_ERR_NOT_INITIALIZED;
        goto out;
    }
    if (0 <= find_watch(fd)) {
        rc = OPAL_ERR_EXISTS;
        goto out;
    }
    if (engine.nwatches == engine.watches_size) {
        size_t size = engine.watches_size ? 2 * engine.watches_size : 8;
        fd_watch_t *grown = realloc(engine.watches, size * sizeof(*grown));
        if (NULL == grown) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        engine.watches = grown;
        engine.watches_size = size;
    }

    uint32_t generation = engine.next_generation++;
    if (0 == engine.next_generation) {
        engine.next_generation = 1;
    }
    struct epoll_event ev = {.events = WATCH_EVENTS, .data.u64 = watch_token(fd, generation)};
    /* Added before the watch is recorded: an event that fires at once is
     * looked up under reg_lock, which we hold until the record exists. */
    if (0 != epoll_ctl(atomic_load_explicit(&engine.epoll_fd, memory_order_relaxed), EPOLL_CTL_ADD,
                       fd, &ev)) {
        rc = (ENOMEM == errno || ENOSPC == errno) ? OPAL_ERR_OUT_OF_RESOURCE
             : EEXIST == errno                    ? OPAL_ERR_EXISTS
                                                  : OPAL_ERR_BAD_PARAM;
        goto out;
    }
    engine.watches[engine.nwatches++] = (fd_watch_t){
        .fd = fd, .generation = generation, .callback = cb, .arm = arm, .context = context};
    if (NULL != arm) {
        atomic_fetch_add_explicit(&engine.narmed, 1, memory_order_relaxed);
    }
out:
    pthread_mutex_unlock(&engine.reg_lock);
    return rc;
}

int opal_progress_fd_unregister(int fd)
{
    int rc = OPAL_SUCCESS;
    pthread_mutex_lock(&engine.reg_lock);
    ssize_t i = 0 == engine.init_count ? -1 : find_watch(fd);
    if (i < 0) {
        rc = 0 == engine.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_ERR_NOT_FOUND;
    } else {
        /* A failure here means the caller already closed fd, which epoll
         * noticed by itself; the record must go either way. */
        (void) epoll_ctl(atomic_load_explicit(&engine.epoll_fd, memory_order_relaxed),
                         EPOLL_CTL_DEL, fd, NULL);
        if (NULL != engine.watches[i].arm) {
            atomic_fetch_sub_explicit(&engine.narmed, 1, memory_order_relaxed);
        }
        engine.watches[i] = engine.watches[--engine.nwatches];
    }
    pthread_mutex_unlock(&engine.reg_lock);
    if (OPAL_SUCCESS == rc) {
        /* A pass may have looked the watch up just before it went. */
        wait_for_running_pass();
    }
    return rc;
}

static void drain_wakeups(void)
{
    uint64_t count;
    /* Non-blocking: when another waiter drained it first, EAGAIN is fine. */
    ssize_t n =
        read(atomic_load_explicit(&engine.wake_fd, memory_order_relaxed), &count, sizeof(count));
    (void) n;
}

/* Caller holds reg_lock. The watch registered for the token, or NULL when
 * it was unregistered (or its fd number reused) since the event fired. */
static fd_watch_t *watch_for_token(uint64_t token)
{
    ssize_t w = find_watch((int) (uint32_t) token);
    if (w < 0 || watch_token(engine.watches[w].fd, engine.watches[w].generation) != token) {
        return NULL;
    }
    return &engine.watches[w];
}

/* Caller holds pass_lock. Runs the callbacks of the watches that fired and
 * still exist in the registration the event was for, then re-arms them:
 * watches are one-shot, so each readiness is handed to exactly one waiting
 * thread and a callback is not called again for data it already read. */
static int dispatch(const struct epoll_event *ready, int nready)
{
    int events = 0;
    for (int i = 0; i < nready; ++i) {
        uint64_t token = ready[i].data.u64;
        if (WAKE_TOKEN == token) {
            continue;
        }
        fd_watch_t watch = {.callback = NULL};
        pthread_mutex_lock(&engine.reg_lock);
        fd_watch_t *found = watch_for_token(token);
        if (NULL != found) {
            watch = *found;
        }
        pthread_mutex_unlock(&engine.reg_lock);
        if (NULL == watch.callback) {
            continue;
        }

        int n = watch.callback(watch.fd, ready[i].events, watch.context);
        if (n > 0) {
            events += n;
        }

        /* The callback may have unregistered the fd (or re-registered it,
         * which armed the new watch already). */
        pthread_mutex_lock(&engine.reg_lock);
        if (NULL != watch_for_token(token)) {
            struct epoll_event ev = {.events = WATCH_EVENTS, .data.u64 = token};
            /* Fails only when the owner closed fd without unregistering it
             * first, which the interface forbids. */
            (void) epoll_ctl(atomic_load_explicit(&engine.epoll_fd, memory_order_relaxed),
                             EPOLL_CTL_MOD, watch.fd, &ev);
        }
        pthread_mutex_unlock(&engine.reg_lock);
    }
    return events;
}

/* Sleeps in epoll until something is ready or the timeout passes. Returns
 * how many entries of ready were filled (0 at the timeout) or
 * OPAL_ERR_IN_ERRNO. */
static int sleep_in_epoll(int epoll_fd, struct epoll_event *ready, int64_t timeout_ns)
{
    uint64_t deadline = timeout_ns > 0 ? opal_timer_ns() + (uint64_t) timeout_ns : 0;
    for (;;) {
        int timeout_ms = timeout_ns < 0 ? -1 : 0;
        if (timeout_ns > 0) {
            uint64_t now = opal_timer_ns();
            if (now >= deadline) {
                return 0;
            }
            /* Rounded up: epoll counts whole milliseconds and must not
             * return before the deadline. */
            uint64_t ms = (deadline - now + 999999u) / 1000000u;
            timeout_ms = ms > INT_MAX ? INT_MAX : (int) ms;
        }
        int n = epoll_wait(epoll_fd, ready, WAIT_MAX_EVENTS, timeout_ms);
        if (n > 0 || (0 == n && 0 == timeout_ns)) {
            return n;
        }
        if (n < 0 && EINTR != errno) {
            return OPAL_ERR_IN_ERRNO;
        }
        /* Interrupted by a signal, or epoll's clock ran slightly ahead of
         * ours: sleep again for what is left. A handler that wants the
         * wait to end calls opal_progress_wakeup(). */
    }
}

/* Before a sleep: arms every watch that has a hook, under pass_lock like
 * any callback. A watch whose work is already waiting has its callback
 * run at once, and the sleep is off: returns false then, with the events
 * its callback reported in *events. */
static bool arm_watches(int *events)
{
    fd_watch_t armed[WAIT_MAX_EVENTS];
    size_t count = 0;
    pthread_mutex_lock(&engine.reg_lock);
    for (size_t i = 0; i < engine.nwatches && count < WAIT_MAX_EVENTS; ++i) {
        if (NULL != engine.watches[i].arm) {
            armed[count++] = engine.watches[i];
        }
    }
    pthread_mutex_unlock(&engine.reg_lock);
    bool sleep = true;
    *events = 0;
    pass_enter();
    for (size_t i = 0; i < count; ++i) {
        /* Unregistered since the copy: its owner may have freed context. */
        pthread_mutex_lock(&engine.reg_lock);
        bool alive = NULL != watch_for_token(watch_token(armed[i].fd, armed[i].generation));
        pthread_mutex_unlock(&engine.reg_lock);
        if (alive && OPAL_ERR_RESOURCE_BUSY == armed[i].arm(armed[i].fd, armed[i].context)) {
            sleep = false;
            int n = armed[i].callback(armed[i].fd, EPOLLIN, armed[i].context);
            if (n > 0) {
                *events += n;
            }
        }
    }
    pass_leave();
    return sleep;
}

int opal_progress_wait(int64_t timeout_ns)
{
    int epoll_fd = atomic_load_explicit(&engine.epoll_fd, memory_order_relaxed);
    if (epoll_fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (in_pass()) {
        return 0;
    }
    int events = opal_progress();
    if (events > 0) {
        return events;
    }
    /* Relaxed: a watch registered meanwhile is armed by the next wait. */
    if (0 != timeout_ns && 0 != atomic_load_explicit(&engine.narmed, memory_order_relaxed) &&
        !arm_watches(&events)) {
        return events;
    }

    struct epoll_event ready[WAIT_MAX_EVENTS];
    int nready = sleep_in_epoll(epoll_fd, ready, timeout_ns);
    if (nready < 0) {
        return nready;
    }
    bool fds_fired = false;
    for (int i = 0; i < nready; ++i) {
        if (WAKE_TOKEN == ready[i].data.u64) {
            drain_wakeups();
        } else {
            fds_fired = true;
        }
    }
    if (!fds_fired) {
        /* Woken or timed out: one more look, as time has passed (none has
         * for a zero timeout, whose first look just found nothing). */
        return 0 == timeout_ns ? 0 : opal_progress();
    }
    /* Blocking: the events are in our hands only, so they must be
     * dispatched even if another thread is in a pass right now. */
    pass_enter();
    events = dispatch(ready, nready);
    events += run_pass();
    pass_leave();
    return events;
}

void opal_progress_wakeup(void)
{
    int fd = atomic_load_explicit(&engine.wake_fd, memory_order_relaxed);
    if (fd < 0) {
        return;
    }
    int saved_errno = errno;
    uint64_t one = 1;
    /* Fails only when the counter is saturated, which still reads as
     * readable: the wake-up is not lost. */
    ssize_t n = write(fd, &one, sizeof(one));
    (void) n;
    errno = saved_errno;
}

/* ---- init / finalize ------------------------------------------------- */

int opal_progress_init(void)
{
    int rc = OPAL_SUCCESS, epoll_fd = -1, wake_fd = -1;
    pthread_mutex_lock(&engine.reg_lock);
    if (engine.init_count > 0) {
        ++engine.init_count;
        goto out;
    }
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) {
        rc = (EMFILE == errno || ENFILE == errno || ENOMEM == errno) ? OPAL_ERR_OUT_OF_RESOURCE
                                                                     : OPAL_ERR_IN_ERRNO;
        goto out;
    }
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) {
        rc = (EMFILE == errno || ENFILE == errno || ENOMEM == errno) ? OPAL_ERR_OUT_OF_RESOURCE
                                                                     : OPAL_ERR_IN_ERRNO;
        goto out;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = WAKE_TOKEN};
    if (0 != epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev)) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    engine.next_generation = 1;
    atomic_store_explicit(&engine.epoll_fd, epoll_fd, memory_order_relaxed);
    atomic_store_explicit(&engine.wake_fd, wake_fd, memory_order_relaxed);
    engine.init_count = 1;
out:
    if (OPAL_SUCCESS != rc) {
        if (wake_fd >= 0) {
            close(wake_fd);
        }
        if (epoll_fd >= 0) {
            close(epoll_fd);
        }
    }
    pthread_mutex_unlock(&engine.reg_lock);
    return rc;
}

void opal_progress_finalize(void)
{
    pthread_mutex_lock(&engine.reg_lock);
    if (0 == engine.init_count || 0 < --engine.init_count) {
        pthread_mutex_unlock(&engine.reg_lock);
        return;
    }
    close(atomic_exchange_explicit(&engine.wake_fd, -1, memory_order_relaxed));
    close(atomic_exchange_explicit(&engine.epoll_fd, -1, memory_order_relaxed));

    /* No pass runs (finalize races with nothing), so every array can go. */
    free_array_list(atomic_exchange_explicit(&engine.high, NULL, memory_order_relaxed));
    free_array_list(atomic_exchange_explicit(&engine.low, NULL, memory_order_relaxed));
    free_array_list(atomic_exchange_explicit(&engine.retired, NULL, memory_order_acquire));
    free(engine.watches);
    engine.watches = NULL;
    engine.nwatches = 0;
    engine.watches_size = 0;
    atomic_store_explicit(&engine.narmed, 0, memory_order_relaxed);
    atomic_store_explicit(&engine.lp_interval, LP_INTERVAL_DEFAULT, memory_order_relaxed);
    atomic_store_explicit(&engine.lp_count, 0, memory_order_relaxed);
    pthread_mutex_unlock(&engine.reg_lock);
}
