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
 */
#ifndef OPAL_RUNTIME_OPAL_PROGRESS_H
#define OPAL_RUNTIME_OPAL_PROGRESS_H

#include "opal/opal_config.h"

#include <stdint.h>

/* Polls one source; returns the number of events it completed (>= 0). */
typedef int (*opal_progress_callback_t)(void);

/* Called when a registered fd is readable (or has an error / hang-up);
 * returns the number of events it completed. */
typedef int (*opal_progress_fd_callback_t)(int fd, uint32_t epoll_events, void *context);

/* Calls every callback (and the low-priority ones every Nth time); returns
 * the total number of events. Safe to call from several threads; a call
 * made while another thread is progressing returns 0 at once. */
OPAL_DECLSPEC int opal_progress(void);

/* Registers / removes a callback; registering one twice is
 * OPAL_ERR_EXISTS, removing an unknown one OPAL_ERR_NOT_FOUND. */
OPAL_DECLSPEC int opal_progress_register(opal_progress_callback_t cb);
OPAL_DECLSPEC int opal_progress_register_lp(opal_progress_callback_t cb);
OPAL_DECLSPEC int opal_progress_unregister(opal_progress_callback_t cb);

/* How often low-priority callbacks run: every interval-th opal_progress()
 * (default 8; 1 = every time). */
OPAL_DECLSPEC int opal_progress_set_lp_interval(unsigned interval);

/* Watches fd for readability; cb runs from opal_progress_wait() when it
 * fires. The caller keeps ownership of fd and must unregister it before
 * closing it. Registering an fd twice is OPAL_ERR_EXISTS. */
OPAL_DECLSPEC int opal_progress_fd_register(int fd, opal_progress_fd_callback_t cb,
                                            void *context);
OPAL_DECLSPEC int opal_progress_fd_unregister(int fd);

/* Progresses once; if nothing happened, sleeps until a registered fd fires
 * or timeout_ns passes (negative: no limit; 0: do not sleep), then
 * progresses again. Returns the number of events (>= 0) or a negative
 * OPAL_ERR_* when the wait itself failed. */
OPAL_DECLSPEC int opal_progress_wait(int64_t timeout_ns);

/* Wakes a thread sleeping in opal_progress_wait() from another thread or a
 * signal handler (async-signal-safe). */
OPAL_DECLSPEC void opal_progress_wakeup(void);

/* Set up / torn down by opal_init_util / opal_finalize_util. */
OPAL_DECLSPEC int opal_progress_init(void);
OPAL_DECLSPEC void opal_progress_finalize(void);

#endif /* OPAL_RUNTIME_OPAL_PROGRESS_H */
