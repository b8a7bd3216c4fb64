/*
 * opal_memhooks: tells subscribers when the process gives memory back to
 * the kernel, so that a registration cache can forget registrations of
 * pages that no longer exist (opal_rcache_watch).
 *
 *   static void gone(void *base, size_t size, void *ctx) { ... }
 *   if (OPAL_SUCCESS != opal_memhooks_subscribe(gone, my_ctx))
 *       opal_output(0, "no memory hooks: %s", opal_memhooks_why());
 *   ...
 *   opal_memhooks_unsubscribe(gone, my_ctx);
 *
 * What counts as a release: munmap; mremap (the old range when the
 * mapping moves, the tail when it shrinks); madvise MADV_DONTNEED,
 * MADV_FREE and MADV_REMOVE; mmap MAP_FIXED over existing pages; brk and
 * sbrk shrinking the heap; shmdt. The C library's own calls count too
 * (free() of a large block, heap trimming), which interposing the symbols
 * would miss: on x86_64 Linux with glibc the entry of each of those libc
 * functions is rewritten, at the first subscribe, into a jump to a hook
 * that tells the subscribers and makes the system call itself.
 *
 * Where that cannot be done (another architecture, another C library,
 * libc's code not writable, a function already redirected by another
 * patcher, the MCA variable opal_memhooks=none, e.g. from the environment
 * OPAL_MCA_opal_memhooks=none) subscribe returns
 * OPAL_ERR_NOT_SUPPORTED and opal_memhooks_why() says why; nothing was
 * changed. opal_memhooks=auto (the default) patches when it can.
 *
 * The first subscribe should come before other threads are busy
 * releasing memory: a thread that runs into one of those functions while
 * its first 13 bytes are being rewritten could execute a torn
 * instruction (Open MPI's patcher has the same window).
 *
 * Callbacks run in whichever thread released the memory, before the
 * system call for munmap, madvise, mmap, brk and shmdt and after it for
 * mremap (which is only known to move once done), possibly inside the C
 * library's malloc with its locks held: a callback must not allocate,
 * free, take a lock its own thread may hold, or block. Record the range
 * and act on it later (what opal_rcache does). A callback that releases
 * memory itself is called again, nested, for that range.
 */
#ifndef OPAL_UTIL_OPAL_MEMHOOKS_H
#define OPAL_UTIL_OPAL_MEMHOOKS_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>

/* Put on a release callback (and on what it calls). glibc trims the
 * stack of an exiting thread, and frees cached stacks, after
 * ThreadSanitizer has retired that thread: instrumented code there
 * crashes TSan's runtime. So in TSan builds the hooks and callbacks are
 * not instrumented (their synchronisation is invisible to TSan; the
 * callbacks' rule above keeps them short and self-contained anyway). */
#if defined(__SANITIZE_THREAD__)
#define OPAL_MEMHOOKS_CALLBACK __attribute__((no_sanitize_thread, noinline))
#elif defined(__has_feature) && defined(__has_attribute)
#if __has_feature(thread_sanitizer) && __has_attribute(disable_sanitizer_instrumentation)
#define OPAL_MEMHOOKS_CALLBACK __attribute__((disable_sanitizer_instrumentation, noinline))
#endif
#endif
#ifndef OPAL_MEMHOOKS_CALLBACK
#define OPAL_MEMHOOKS_CALLBACK
#endif

/* [base, base + size) is being (or has just been) given back. */
typedef void (*opal_memhooks_release_fn_t)(void *base, size_t size, void *ctx);

/* Installs the hooks if they are not yet and adds fn(ctx) to the
 * subscribers (at most 32). OPAL_SUCCESS; OPAL_ERR_NOT_SUPPORTED when
 * releases cannot be caught here (opal_memhooks_why() says why);
 * OPAL_ERR_OUT_OF_RESOURCE when every subscriber slot is taken;
 * OPAL_ERR_BAD_PARAM without fn. */
OPAL_DECLSPEC int opal_memhooks_subscribe(opal_memhooks_release_fn_t fn, void *ctx);

/* Removes fn(ctx); when it returns no thread is still inside fn(ctx), so
 * ctx may be freed. Not to be called from inside a callback (it waits for
 * the callbacks running in other threads). The hooks stay installed. */
OPAL_DECLSPEC void opal_memhooks_unsubscribe(opal_memhooks_release_fn_t fn, void *ctx);

/* The switch's value from the MCA variable opal_memhooks (mca_base_open
 * registers it and passes what the environment, a parameter file or
 * --mca set); NULL goes back to reading OPAL_MCA_opal_memhooks from the
 * environment at each subscribe. Copied. */
OPAL_DECLSPEC void opal_memhooks_set_mode(const char *mode);

/* True when the hooks are installed and still in place (no one patched
 * over them since, e.g. a patcher loaded later). Cheap, no lock. */
OPAL_DECLSPEC bool opal_memhooks_active(void);

/* Why the last subscribe was refused (a sentence), or NULL when it was
 * not or nobody asked yet. */
OPAL_DECLSPEC const char *opal_memhooks_why(void);

/* Why free() may give memory back without the hooks seeing it, or NULL.
 * Under valgrind or a sanitizer, malloc is the tool's: it keeps freed
 * blocks a while, then unmaps them with its own system calls, so a new
 * block can come back at the same address over other pages. A cache of
 * registrations (opal_rcache_watch) is only as true as what the hooks
 * see, and must not keep entries past their deregister then. */
OPAL_DECLSPEC const char *opal_memhooks_free_unseen(void);

#endif /* OPAL_UTIL_OPAL_MEMHOOKS_H */
