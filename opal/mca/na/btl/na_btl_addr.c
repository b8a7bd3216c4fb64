/*
 * na/btl's addresses: one interned object per rank (an open-addressing
 * table, since ranks outside a job are pids), URIs, and the serialized
 * form. An address reaches the BTLs (add_procs) on its first send, never
 * from progress: the receive path only interns.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/na/btl/na_btl.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* ------------------------------------------------------------- the table */

static size_t slot_of(uint32_t rank, size_t mask)
{
    /* Fibonacci hashing spreads pids, which come in runs. */
    return (size_t) (((uint64_t) rank * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
}

static int table_grow(na_btl_class_t *nb)
{
    size_t size = 0 == nb->addrs_size ? 64 : 2 * nb->addrs_size;
    opal_na_addr_t **bigger = calloc(size, sizeof(*bigger));
    if (NULL == bigger) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < nb->addrs_size; ++i) {
        opal_na_addr_t *a = nb->addrs[i];
        if (NULL != a) {
            size_t s = slot_of(a->rank, size - 1);
            while (NULL != bigger[s]) {
                s = (s + 1) & (size - 1);
            }
            bigger[s] = a;
        }
    }
    free(nb->addrs);
    nb->addrs = bigger;
    nb->addrs_size = size;
    return OPAL_SUCCESS;
}

opal_na_addr_t *na_btl_addr_for_rank(na_btl_class_t *nb, uint32_t rank)
{
    if (0 != nb->addrs_size) {
        size_t mask = nb->addrs_size - 1;
        for (size_t s = slot_of(rank, mask); NULL != nb->addrs[s]; s = (s + 1) & mask) {
            if (nb->addrs[s]->rank == rank) {
                (void) opal_thread_fetch_add_32(&nb->addrs[s]->refcount, 1, memory_order_relaxed);
                return nb->addrs[s];
            }
        }
    }
    if ((nb->addrs_count + 1) * 2 > nb->addrs_size && OPAL_SUCCESS != table_grow(nb)) {
        return NULL;
    }
    opal_na_addr_t *a = calloc(1, sizeof(*a));
    if (NULL == a) {
        return NULL;
    }
    a->jobid = nb->jobid;
    a->rank = rank;
    /* One reference is the table's, one the caller's. */
    atomic_init(&a->refcount, 2);
    atomic_init(&a->failed, false);
    size_t mask = nb->addrs_size - 1;
    size_t s = slot_of(rank, mask);
    while (NULL != nb->addrs[s]) {
        s = (s + 1) & mask;
    }
    nb->addrs[s] = a;
    ++nb->addrs_count;
    return a;
}

void na_btl_addr_table_free(na_btl_class_t *nb)
{
    for (size_t i = 0; i < nb->addrs_size; ++i) {
        opal_na_addr_t *a = nb->addrs[i];
        if (NULL == a) {
            continue;
        }
        int32_t left = atomic_load_explicit(&a->refcount, memory_order_relaxed);
        if (left > 1 && a != nb->self) {
            opal_output_verbose(1, opal_na_base_output,
                                "na/btl: finalize with %d reference(s) to rank %u not freed",
                                left - 1, a->rank);
        }
        free(a->card);
        free(a);
    }
    free(nb->addrs);
    nb->addrs = NULL;
    nb->addrs_size = 0;
    nb->addrs_count = 0;
    nb->self = NULL;
}

/* Serialises adding peers to the BTLs. */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

int na_btl_addr_peer(na_btl_class_t *nb, opal_na_addr_t *addr, mca_btl_base_peer_t **peer)
{
    (void) nb;
    mca_btl_base_peer_t *known = atomic_load_explicit(&addr->peer, memory_order_acquire);
    if (OPAL_LIKELY(NULL != known)) {
        *peer = known;
        return atomic_load_explicit(&addr->failed, memory_order_acquire) ? OPAL_ERR_PEER_FAILED
                                                                         : OPAL_SUCCESS;
    }
    if (atomic_load_explicit(&addr->failed, memory_order_acquire)) {
        return OPAL_ERR_PEER_FAILED;
    }
    /* Not the class lock: add_procs may take long (modex) and must not
     * hold up the receive path. */
    pthread_mutex_lock(&peer_lock);
    int rc = OPAL_SUCCESS;
    if (NULL == atomic_load_explicit(&addr->peer, memory_order_relaxed)) {
        mca_btl_base_peer_t *p = mca_btl_base_peer_get(addr->rank);
        if (NULL == p) {
            opal_proc_t *proc = NULL;
            rc = opal_proc_for_rank(addr->rank, &proc);
            if (OPAL_SUCCESS == rc) {
                rc = mca_btl_base_add_procs(&proc, 1);
            }
            p = mca_btl_base_peer_get(addr->rank);
            if (OPAL_SUCCESS != rc || NULL == p) {
                opal_output(0, "na/btl: no BTL reaches rank %u of job %u: %s", addr->rank,
                            addr->jobid, opal_strerror(OPAL_SUCCESS == rc ? OPAL_ERR_UNREACH : rc));
                rc = OPAL_ERR_UNREACH;
            }
        }
        /* Pairs with the acquire above: a sender that sees the peer sees
         * it added. */
        atomic_store_explicit(&addr->peer, p, memory_order_release);
    }
    pthread_mutex_unlock(&peer_lock);
    *peer = atomic_load_explicit(&addr->peer, memory_order_acquire);
    return rc;
}

/* -------------------------------------------------------------- lookups */

/* The interned address of a peer named by (jobid, rank), with its card
 * outside a job. */
static int addr_from_name(na_btl_class_t *nb, const char *what, uint32_t jobid, uint32_t rank,
                          const uint8_t *card, size_t card_size, opal_na_addr_t **addr)
{
    if (jobid != nb->jobid) {
        opal_output(0,
                    "na/btl: %s names a process of job %u; this process is of job %u (a "
                    "process outside a job is reached by the URI carrying its card)",
                    what, jobid, nb->jobid);
        return OPAL_ERR_UNREACH;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (rank >= job->size) {
        opal_output(0, "na/btl: %s names rank %u; job %u has %u", what, rank, jobid, job->size);
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != card && rank != nb->my_rank) {
        int rc = na_btl_rte_add_card(rank, card, card_size);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    int rc = OPAL_SUCCESS;
    OPAL_THREAD_LOCK(&nb->lock);
    opal_na_addr_t *a = na_btl_addr_for_rank(nb, rank);
    if (NULL != a && NULL != card && NULL == a->card && a != nb->self) {
        /* Kept so that this process can give the peer's URI on. */
        a->card = malloc(card_size);
        if (NULL == a->card) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(a->card, card, card_size);
            a->card_size = card_size;
        }
    }
    OPAL_THREAD_UNLOCK(&nb->lock);
    if (NULL == a) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS != rc) {
        na_btl_addr_free(nb->cls, a);
        return rc;
    }
    *addr = a;
    return OPAL_SUCCESS;
}

int na_btl_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr)
{
    na_btl_class_t *nb = cls->plugin;
    na_btl_uri_t parsed;
    char why[NA_BTL_WHY_MAX];
    int rc = na_btl_uri_parse(uri, &parsed, why);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: cannot look up \"btl://%.80s%s\": %s", uri,
                    strlen(uri) > 80 ? "..." : "", why);
        return rc;
    }
    if (parsed.has_card && !nb->own_runtime) {
        opal_output(0, "na/btl: \"btl://card/...\" names a process outside a job; this process "
                       "is in an mcarun job and reaches its ranks only");
        free(parsed.card);
        return OPAL_ERR_UNREACH;
    }
    rc = addr_from_name(nb, "the URI", parsed.jobid, parsed.rank, parsed.card, parsed.card_size,
                        addr);
    free(parsed.card);
    return rc;
}

int na_btl_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr)
{
    na_btl_class_t *nb = cls->plugin;
    (void) opal_thread_fetch_add_32(&nb->self->refcount, 1, memory_order_relaxed);
    *addr = nb->self;
    return OPAL_SUCCESS;
}

int na_btl_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr)
{
    (void) cls;
    (void) opal_thread_fetch_add_32(&addr->refcount, 1, memory_order_relaxed);
    *new_addr = addr;
    return OPAL_SUCCESS;
}

void na_btl_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    (void) cls;
    /* The table keeps its reference until finalize: an address is never
     * freed here, so a peer's object stays interned. */
    (void) opal_thread_fetch_add_32(&addr->refcount, -1, memory_order_relaxed);
}

bool na_btl_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b)
{
    (void) cls;
    return a == b;
}

bool na_btl_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    return ((na_btl_class_t *) cls->plugin)->self == addr;
}

/* The card of addr: this process's own, or what its lookup gave. */
static const uint8_t *addr_card(na_btl_class_t *nb, opal_na_addr_t *addr, size_t *size)
{
    if (!nb->own_runtime) {
        *size = 0;
        return NULL;
    }
    if (addr == nb->self) {
        *size = nb->card_size;
        return nb->card;
    }
    if (NULL == addr->card) {
        /* A peer known from its first message: its card is the one the
         * BTLs found. */
        OPAL_THREAD_LOCK(&nb->lock);
        if (NULL == addr->card) {
            (void) na_btl_rte_peer_card(addr->rank, &addr->card, &addr->card_size);
        }
        OPAL_THREAD_UNLOCK(&nb->lock);
    }
    *size = addr->card_size;
    return addr->card;
}

int na_btl_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr)
{
    na_btl_class_t *nb = cls->plugin;
    size_t card_size;
    const uint8_t *card = addr_card(nb, addr, &card_size);
    if (nb->own_runtime && NULL == card) {
        opal_output(0,
                    "na/btl: rank %u of the standalone job has no card here (it was not "
                    "looked up by URI): it has no URI to give",
                    addr->rank);
        return OPAL_ERR_NOT_FOUND;
    }
    return na_btl_uri_format(buf, size, addr->jobid, addr->rank, card, card_size);
}

size_t na_btl_addr_get_serialize_size(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    size_t card_size;
    (void) addr_card(cls->plugin, addr, &card_size);
    return na_btl_addr_blob_size(card_size);
}

int na_btl_addr_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr)
{
    size_t card_size;
    const uint8_t *card = addr_card(cls->plugin, addr, &card_size);
    return na_btl_addr_blob_encode(buf, size, addr->jobid, addr->rank, card, card_size);
}

int na_btl_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                            size_t size)
{
    na_btl_class_t *nb = cls->plugin;
    uint32_t jobid, rank;
    const uint8_t *card;
    size_t card_size;
    char why[NA_BTL_WHY_MAX];
    int rc = na_btl_addr_blob_decode(buf, size, &jobid, &rank, &card, &card_size, why);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: cannot deserialize an address: %s", why);
        return rc;
    }
    return addr_from_name(nb, "a serialized address", jobid, rank, card, card_size, addr);
}
