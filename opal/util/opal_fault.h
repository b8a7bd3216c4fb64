/*
 * Fault injection by configuration, in the manner of DAOS's D_FI_CONFIG.
 *
 * A site is one line in the code where a fault may be made to happen:
 *
 *     if (OPAL_FAULT(btl_send)) {
 *         return OPAL_ERR_OUT_OF_RESOURCE;   // what the fault looks like
 *     }
 *
 * Sites exist only in builds configured with --enable-fault-injection (the
 * default with --enable-debug); elsewhere OPAL_FAULT(site) is the constant
 * false and the compiler removes the branch. Adding a site is one line in
 * OPAL_FAULT_SITE_TABLE below and OPAL_FAULT(name) where it happens.
 *
 * Which sites fire is read from a file named by the MCA variable
 * opal_fault_config (OPAL_MCA_opal_fault_config, --mca), loaded when the
 * MCA base opens. One site per line, '#' starts a comment:
 *
 *     # site        options (all optional)
 *     btl_send      probability=0.25 seed=7
 *     fence         interval=3 max=1          # the 3rd fence fails, once
 *     process_exit  interval=1000 arg=9       # SIGKILL at the 1000th progress
 *
 *   probability=P  fire with probability P (0..1; default 1)
 *   interval=N     consider only every Nth hit (default 1: every hit)
 *   max=N          fire at most N times (default 0: no limit)
 *   arg=N          a number the site interprets (default 0)
 *   seed=N         seed of the site's random numbers (default 1)
 *
 * An unknown site or option, or a bad value, is refused naming the file,
 * the line and what was wrong (and, for a site, the known ones).
 */
#ifndef OPAL_UTIL_OPAL_FAULT_H
#define OPAL_UTIL_OPAL_FAULT_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* X(name, what happens when it fires). Append; the names are what the
 * configuration file uses. */
#define OPAL_FAULT_SITE_TABLE(X)                                                                   \
    X(free_list_grow, "opal_free_list_grow and the get paths fail as if out of memory")            \
    X(btl_send, "btl/sm's send fails (OPAL_ERR_OUT_OF_RESOURCE)")                                  \
    X(btl_sendi, "btl/sm's sendi fails (OPAL_ERR_OUT_OF_RESOURCE)")                                \
    X(btl_put, "btl/sm's put fails (OPAL_ERR_OUT_OF_RESOURCE)")                                    \
    X(btl_get, "btl/sm's get fails (OPAL_ERR_OUT_OF_RESOURCE)")                                    \
    X(sm_recv_drop, "btl/sm drops a received message before delivering it")                        \
    X(sm_recv_corrupt, "btl/sm sees a received fast-box message with a damaged type")              \
    X(ofi_recv_drop, "btl/ofi drops a received message before delivering it")                      \
    X(ofi_recv_corrupt, "btl/ofi sees a received message longer than any peer may send")           \
    X(modex_get, "opal_modex_recv fails (OPAL_ERR_NOT_FOUND)")                                     \
    X(fence, "opal_fence fails (OPAL_ERR_TIMEOUT)")                                                \
    X(process_exit, "opal_progress kills the process with signal arg (0: exits with status 97)")   \
    X(rpc_request_drop, "an rpc server drops an incoming request (not the engine's own)")          \
    X(rpc_reply_drop, "an rpc server's reply is lost (opal_rpc_reply_send says it was sent)")      \
    X(rpc_reply_delay, "an rpc server holds a reply for arg ms, then sends it")                    \
    X(rpc_bulk_pull_hold,                                                                          \
      "an rpc client holds a finished pull of an output by bulk until its request completes "      \
      "otherwise (timeout, abort, peer failure): a pull slower than any timeout")                  \
    X(rpc_bulk_pull_delay,                                                                         \
      "an rpc process stalls arg ms (its progress blocked) before it pulls an input or an "        \
      "output by bulk")

typedef enum {
#define OPAL_FAULT_SITE_ENUM(name, what) OPAL_FAULT_SITE_##name,
    OPAL_FAULT_SITE_TABLE(OPAL_FAULT_SITE_ENUM)
#undef OPAL_FAULT_SITE_ENUM
        OPAL_FAULT_SITE_COUNT
} opal_fault_site_t;

#if defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION
/* True when some site is configured: the fast path of every site. Relaxed
 * is enough: the configuration is loaded before the code it affects runs. */
OPAL_DECLSPEC extern atomic_bool opal_fault_active;
#define OPAL_FAULT(name)                                                                           \
    OPAL_UNLIKELY(atomic_load_explicit(&opal_fault_active, memory_order_relaxed) &&                \
                  opal_fault_hit(OPAL_FAULT_SITE_##name))
#else
#define OPAL_FAULT(name) false
#endif

/* Counts one hit of site and says whether the fault fires now. */
OPAL_DECLSPEC bool opal_fault_hit(opal_fault_site_t site);

/* The arg= of site (0 when not configured). */
OPAL_DECLSPEC uint64_t opal_fault_arg(opal_fault_site_t site);

/* How many times site fired since it was configured. */
OPAL_DECLSPEC uint64_t opal_fault_fired(opal_fault_site_t site);

/* Replaces the configuration with the one in text (source names it in
 * messages). OPAL_ERR_BAD_PARAM after printing what was wrong (nothing
 * changes then); OPAL_ERR_NOT_SUPPORTED in a build without sites (after
 * saying so) unless text configures nothing. */
OPAL_DECLSPEC int opal_fault_configure(const char *text, const char *source);

/* The same with the contents of the file at path (OPAL_ERR_NOT_FOUND when
 * it cannot be read, after saying so). */
OPAL_DECLSPEC int opal_fault_configure_file(const char *path);

/* Turns every site off. */
OPAL_DECLSPEC void opal_fault_clear(void);

/* The site called name, or -1. */
OPAL_DECLSPEC int opal_fault_site_find(const char *name);

#endif /* OPAL_UTIL_OPAL_FAULT_H */
