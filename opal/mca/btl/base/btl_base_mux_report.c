/*
 * Why a peer is unreachable: the answers of every module add_procs asked,
 * kept per proc, and the error that prints them with the components that
 * did not run ("self: not this process", "sm: peer is on another node",
 * "ofi: not included by btl=self,sm").
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_internal.h"
#include "opal/mca/btl/base/btl_base_mux_internal.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

/* Peers described one by one in the error; the rest are counted. */
#define REPORT_MAX_PEERS 8

typedef struct {
    mca_btl_base_module_t *btl;
    mca_btl_base_reason_t *reasons;
    int rc;
} attempt_t;

struct mca_btl_base_mux_attempts_t {
    size_t nprocs;
    int count;
    int capacity;
    attempt_t *attempts;
};

mca_btl_base_mux_attempts_t *mca_btl_base_mux_attempts_new(size_t nprocs)
{
    mca_btl_base_mux_attempts_t *a = calloc(1, sizeof(*a));
    if (NULL != a) {
        a->nprocs = nprocs;
    }
    return a;
}

void mca_btl_base_mux_attempts_free(mca_btl_base_mux_attempts_t *a)
{
    if (NULL == a) {
        return;
    }
    for (int i = 0; i < a->count; ++i) {
        free(a->attempts[i].reasons);
    }
    free(a->attempts);
    free(a);
}

int mca_btl_base_mux_attempt_add(mca_btl_base_mux_attempts_t *a, mca_btl_base_module_t *btl)
{
    if (a->count == a->capacity) {
        int capacity = 0 == a->capacity ? 4 : 2 * a->capacity;
        attempt_t *bigger = realloc(a->attempts, (size_t) capacity * sizeof(*bigger));
        if (NULL == bigger) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        a->attempts = bigger;
        a->capacity = capacity;
    }
    mca_btl_base_reason_t *reasons = calloc(a->nprocs, sizeof(*reasons));
    if (NULL == reasons) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    a->attempts[a->count] = (attempt_t){.btl = btl, .reasons = reasons, .rc = OPAL_SUCCESS};
    return a->count++;
}

mca_btl_base_reason_t *mca_btl_base_mux_attempt_reasons(mca_btl_base_mux_attempts_t *a, int index)
{
    return a->attempts[index].reasons;
}

void mca_btl_base_mux_attempt_failed(mca_btl_base_mux_attempts_t *a, int index, int rc)
{
    a->attempts[index].rc = rc;
}

void mca_btl_base_mux_attempt_note(mca_btl_base_mux_attempts_t *a, int index, size_t i,
                                   const char *text)
{
    snprintf(a->attempts[index].reasons[i].text, sizeof(a->attempts[index].reasons[i].text), "%s",
             text);
}

/* "sm", or "ofi (module 2)" when the component has several modules. */
static void module_label(const mca_btl_base_mux_attempts_t *a, int index, char *buf, size_t size)
{
    const mca_btl_base_module_t *btl = a->attempts[index].btl;
    const mca_btl_base_component_t *comp = btl->btl_component;
    const char *name = NULL != comp ? comp->btl_version.mca_component_name : "?";
    int same = 0, position = 0;
    for (int i = 0; i < a->count; ++i) {
        if (a->attempts[i].btl->btl_component == comp) {
            ++same;
            if (i == index) {
                position = same;
            }
        }
    }
    if (same > 1) {
        snprintf(buf, size, "%s (module %d)", name, position);
    } else {
        snprintf(buf, size, "%s", name);
    }
}

/* Why module index does not reach proc i, in words. */
static void why_not(const mca_btl_base_mux_attempts_t *a, int index, size_t i, char *buf,
                    size_t size)
{
    const attempt_t *at = &a->attempts[index];
    if (OPAL_SUCCESS != at->rc) {
        snprintf(buf, size, "add_procs failed: %s", opal_strerror(at->rc));
        return;
    }
    /* What a peer wrote is bounded by the array, not trusted to end. */
    size_t len = strnlen(at->reasons[i].text, sizeof(at->reasons[i].text));
    if (0 == len) {
        snprintf(buf, size, "no reason given");
    } else {
        snprintf(buf, size, "%.*s", (int) len, at->reasons[i].text);
    }
}

static int append_line(char ***lines, const char *format, ...) OPAL_PRINTF_LIKE(2, 3);

static int append_line(char ***lines, const char *format, ...)
{
    char *line = NULL;
    va_list ap;
    va_start(ap, format);
    int n = vasprintf(&line, format, ap);
    va_end(ap);
    if (n < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_argv_append_nosize(lines, line);
    free(line);
    return rc;
}

/* The peers' part of the message: each unreached peer, then every module
 * tried and why not. */
static char *peers_text(const mca_btl_base_mux_attempts_t *a, size_t n,
                        mca_btl_base_peer_t *const *peers, size_t unreached)
{
    char **lines = NULL;
    size_t shown = 0;
    int rc = OPAL_SUCCESS;
    for (size_t i = 0; i < n && OPAL_SUCCESS == rc && shown < REPORT_MAX_PEERS; ++i) {
        const mca_btl_base_peer_t *peer = peers[i];
        if (0 != peer->send_count) {
            continue;
        }
        ++shown;
        const char *host = NULL != peer->proc->proc_hostname ? peer->proc->proc_hostname : "?";
        rc = append_line(&lines, "  rank %" PRIu32 " (on %s):", peer->rank, host);
        if (0 == a->count && OPAL_SUCCESS == rc) {
            rc = append_line(&lines, "    no btl module was initialised");
        }
        for (int m = 0; m < a->count && OPAL_SUCCESS == rc; ++m) {
            char label[96], why[MCA_BTL_BASE_REASON_MAX + 64];
            module_label(a, m, label, sizeof(label));
            why_not(a, m, i, why, sizeof(why));
            rc = append_line(&lines, "    %s: %s", label, why);
        }
    }
    if (OPAL_SUCCESS == rc && unreached > shown) {
        rc = append_line(&lines, "  ... and %zu more peer(s)", unreached - shown);
    }
    char *text = OPAL_SUCCESS == rc ? opal_argv_join(lines, '\n') : NULL;
    opal_argv_free(lines);
    return text;
}

void mca_btl_base_mux_report_unreachable(const mca_btl_base_mux_attempts_t *a, size_t n,
                                         mca_btl_base_peer_t *const *peers)
{
    size_t unreached = 0;
    for (size_t i = 0; i < n; ++i) {
        unreached += 0 == peers[i]->send_count ? 1 : 0;
    }
    const opal_proc_t *me = opal_proc_local_get();
    const opal_proc_job_info_t *job = opal_proc_job_info();
    char who[128];
    if (NULL != job) {
        const char *host = NULL != me && NULL != me->proc_hostname ? me->proc_hostname
                           : NULL != job->hostname                 ? job->hostname
                                                                   : "?";
        snprintf(who, sizeof(who), "Rank %" PRIu32 " (on %s)", job->my_name.vpid, host);
    } else {
        snprintf(who, sizeof(who), "This process (outside a job)");
    }
    char *peer_lines = peers_text(a, n, peers, unreached);
    char *failures = mca_btl_base_failures_string("  ");
    char *message = opal_show_help_string("help-mca-btl-base.txt", "unreachable", 1, who, unreached,
                                          NULL != peer_lines ? peer_lines : "  (out of memory)",
                                          NULL != failures ? failures : "  (out of memory)");
    /* Printed every time (not once per process like opal_show_help):
     * each call names other peers. */
    if (NULL != message) {
        opal_output(0, "%s", message);
    } else {
        opal_output(0, "btl: %s cannot reach %zu peer(s) (out of memory describing them)", who,
                    unreached);
    }
    free(message);
    free(failures);
    free(peer_lines);
}
