/*
 * The progress engine. Components register callbacks that poll their
 * transports; opal_progress() calls them and returns how many events they
 * reported. Low-priority callbacks run only every Nth call
 * (opal_progress_set_lp_interval), so an expensive poll does not slow the
 * fast path.
 *
 * A process with nothing to do need not spin: components register the file
 * descriptors that become readable when they have work (an eventfd, a
 * socket, a completion channel), and opal_progress_wait() sleeps in epoll
 * until one fires or the timeout passes, then progresses.
 *
 * Threads: every callback (polling or fd) runs in one thread at a time, so
 * callbacks never run concurrently with each other. Any thread may register
 * and unregister at any time, including from inside a callback. A callback
 * registered during a pass is first called in the next pass; once
 * unregistration returns, the callback is never called again (an
 * unregistration from another thread waits for a running pass to finish,
 * so it must not hold a lock that a callback takes).
 *
 * Before opal_progress_init() (and after the last opal_progress_finalize())
 * registration and opal_progress_wait() return OPAL_ERR_NOT_INITIALIZED and
 * opal_progress() returns 0: nothing is initialised lazily, so a component
 * that registers too early learns it at once.
 */
#ifndef OPAL_RUNTIME_OPAL_PROGRESS_H
#define OPAL_RUNTIME_OPAL_PROGRESS_H

#include "opal/opal_config.h"

#include <stdint.h>

/* Polls one source; returns the number of events it completed (>= 0;
 * negative values are not counted). */
typedef int (*opal_progress_callback_t)(void);

/* Called when a registered fd is readable (or has an error / hang-up);
 * returns the number of events it completed. */
typedef int (*opal_progress_fd_callback_t)(int fd, uint32_t epoll_events, void *context);

/* Calls every callback (and the low-priority ones every Nth time); returns
 * the total number of events. Safe to call from several threads; a call
 * made while another thread is progressing returns 0 at once, and so does
 * a call from inside a callback (the engine does not nest). The fast path
 * takes no lock besides the try-lock that makes passes exclusive. */
OPAL_DECLSPEC int opal_progress(void);

/* Registers / removes a callback; registering one twice (in either
 * priority) is OPAL_ERR_EXISTS, removing an unknown one OPAL_ERR_NOT_FOUND,
 * a NULL one OPAL_ERR_BAD_PARAM. */
OPAL_DECLSPEC int opal_progress_register(opal_progress_callback_t cb);
OPAL_DECLSPEC int opal_progress_register_lp(opal_progress_callback_t cb);
OPAL_DECLSPEC int opal_progress_unregister(opal_progress_callback_t cb);

/* How often low-priority callbacks run: every interval-th pass, counted
 * from this call (default 8; 1 = every time; 0 is OPAL_ERR_BAD_PARAM). A
 * pass is an opal_progress() that did not return at once because another
 * thread was progressing, or a pass run by opal_progress_wait(). Reset to
 * the default by the last opal_progress_finalize(). */
OPAL_DECLSPEC int opal_progress_set_lp_interval(unsigned interval);

/* Watches fd for readability; cb runs from opal_progress_wait() when it
 * fires. The caller keeps ownership of fd and must unregister it before
 * closing it. Registering an fd twice is OPAL_ERR_EXISTS; an fd epoll
 * cannot watch (a regular file, a closed fd) is OPAL_ERR_BAD_PARAM. The
 * watch is level-triggered: a callback that leaves data unread is called
 * again by the next wait. Each readiness is handed to one waiting thread
 * only, so several waiters do not all call cb for the same data. Unregistering an unknown fd is
 * OPAL_ERR_NOT_FOUND; after it returns, cb is not called again. */
OPAL_DECLSPEC int opal_progress_fd_register(int fd, opal_progress_fd_callback_t cb, void *context);

/* Arms a wait object before a sleep: returns OPAL_SUCCESS when fd will
 * become readable once there is work, OPAL_ERR_RESOURCE_BUSY when work is
 * already waiting (the sleep is skipped and the fd's callback runs). For
 * wait objects that signal only once armed (libfabric's fi_trywait,
 * verbs' ibv_req_notify_cq). Runs like the callbacks: one at a time. */
typedef int (*opal_progress_fd_arm_t)(int fd, void *context);

/* opal_progress_fd_register with an arm hook: opal_progress_wait() calls
 * arm after its pass found nothing and before it sleeps, so the engine
 * never sleeps on an unarmed fd and a busy loop of opal_progress() pays
 * nothing for it. Same errors; arm NULL is plain registration. */
OPAL_DECLSPEC int opal_progress_fd_register_armed(int fd, opal_progress_fd_callback_t cb,
                                                  opal_progress_fd_arm_t arm, void *context);
OPAL_DECLSPEC int opal_progress_fd_unregister(int fd);

/* Progresses once; if nothing happened, arms the fds that have an arm hook
 * (running at once the callback of one that has work waiting, which ends
 * the wait), then sleeps until a registered fd fires,
 * opal_progress_wakeup() is called or timeout_ns passes (negative: no
 * limit; 0: do not sleep, but still run the callbacks of fds that are
 * ready), runs the callbacks of the fds that fired, then progresses again.
 * A signal that interrupts the sleep does not end it. Returns the number of
 * events (>= 0; 0 when woken or timed out with nothing done, or when called
 * from inside a callback) or a negative OPAL_ERR_* when the wait itself
 * failed. Several threads may wait at once. */
OPAL_DECLSPEC int opal_progress_wait(int64_t timeout_ns);

/* Wakes a thread sleeping in opal_progress_wait() from another thread or a
 * signal handler (async-signal-safe; errno is preserved). A wake-up sent
 * while no thread sleeps is kept: the next wait returns promptly. Does
 * nothing before init; must not race with opal_progress_finalize(). */
OPAL_DECLSPEC void opal_progress_wakeup(void);

/* Set up / torn down by opal_init_util / opal_finalize_util. Calls nest:
 * only the last finalize tears the engine down, dropping every registered
 * callback and fd, after which init starts afresh. Neither may run while
 * another thread uses the engine. init returns OPAL_ERR_OUT_OF_RESOURCE (or
 * OPAL_ERR_IN_ERRNO) when the epoll fd or eventfd cannot be created. */
OPAL_DECLSPEC int opal_progress_init(void);
OPAL_DECLSPEC void opal_progress_finalize(void);

#endif /* OPAL_RUNTIME_OPAL_PROGRESS_H */
