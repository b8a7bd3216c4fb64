/*
 * mcarun's event loop: epoll over the listening socket, the connections,
 * the ranks' pipes, stdin and a signalfd. mcarun needs write readiness
 * (replies to ranks that read slowly, stdin to rank 0), which the opal
 * progress engine does not watch, so it keeps a loop of its own; it sleeps
 * in epoll_wait whenever nothing is ready.
 *
 * A watch removed while a batch of events is being dispatched may still
 * have an event later in that batch: removal only marks it dead, and dead
 * watches are freed after the batch.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "orte/tools/mcarun/mcarun.h"

typedef struct mcarun_watch_t {
    int fd;
    mcarun_loop_fn_t fn;
    void *ctx;
    bool dead;
    struct mcarun_watch_t *next_dead;
} mcarun_watch_t;

static struct {
    int epfd;
    mcarun_watch_t *dead;
} loop = {.epfd = -1};

int mcarun_loop_init(void)
{
    loop.epfd = epoll_create1(EPOLL_CLOEXEC);
    return loop.epfd < 0 ? OPAL_ERR_IN_ERRNO : OPAL_SUCCESS;
}

static void free_dead(void)
{
    while (NULL != loop.dead) {
        mcarun_watch_t *w = loop.dead;
        loop.dead = w->next_dead;
        free(w);
    }
}

void mcarun_loop_fini(void)
{
    free_dead();
    if (0 <= loop.epfd) {
        close(loop.epfd);
        loop.epfd = -1;
    }
}

mcarun_watch_t *mcarun_loop_add(int fd, uint32_t events, mcarun_loop_fn_t fn, void *ctx)
{
    mcarun_watch_t *w = calloc(1, sizeof(*w));
    if (NULL == w) {
        return NULL;
    }
    w->fd = fd;
    w->fn = fn;
    w->ctx = ctx;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (0 != epoll_ctl(loop.epfd, EPOLL_CTL_ADD, fd, &ev)) {
        free(w);
        return NULL;
    }
    return w;
}

int mcarun_loop_modify(mcarun_watch_t *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return 0 == epoll_ctl(loop.epfd, EPOLL_CTL_MOD, w->fd, &ev) ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
}

void mcarun_loop_remove(mcarun_watch_t *w)
{
    if (NULL == w || w->dead) {
        return;
    }
    epoll_ctl(loop.epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->dead = true;
    w->next_dead = loop.dead;
    loop.dead = w;
}

int mcarun_loop_wait(int64_t timeout_ns)
{
    struct epoll_event events[64];
    int timeout_ms = -1;
    if (0 <= timeout_ns) {
        /* Round up: waking before a deadline only to sleep again is a
         * spin. */
        int64_t ms = (timeout_ns + 999999) / 1000000;
        timeout_ms = ms > 60000 ? 60000 : (int) ms;
    }
    int n = epoll_wait(loop.epfd, events, 64, timeout_ms);
    if (n < 0) {
        return EINTR == errno ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
    }
    for (int i = 0; i < n; ++i) {
        mcarun_watch_t *w = events[i].data.ptr;
        if (!w->dead) {
            w->fn(w->ctx, events[i].events);
        }
    }
    free_dead();
    return OPAL_SUCCESS;
}
