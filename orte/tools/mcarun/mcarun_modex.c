/*
 * The modex as mcarun keeps it: per rank, pairs staged by PUT and made
 * visible by COMMIT; fences that complete when every rank has entered; and
 * gets that wait (up to their timeout) for the peer to commit the key.
 *
 * Every rank of an mcarun job is on node 0, so LOCAL and GLOBAL pairs are
 * visible to every rank and REMOTE ones to none but their owner (who reads
 * its own pairs from its client's cache, never from here).
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "orte/tools/mcarun/mcarun.h"
#include "orte/util/orte_launcher_client.h"
#include "orte/util/orte_wire.h"

static void blob_construct(mcarun_blob_t *b)
{
    b->buffer = NULL;
    b->bytes = NULL;
    b->size = 0;
}
static void blob_destruct(mcarun_blob_t *b)
{
    free(b->buffer);
}
OBJ_CLASS_INSTANCE(mcarun_blob_t, opal_object_t, blob_construct, blob_destruct);

/* One pair. */
typedef struct mcarun_kv_t {
    opal_list_item_t super; /* in the owner's staged list */
    char key[ORTE_WIRE_MAX_KEY + 1];
    size_t key_len;
    uint8_t scope;
    uint64_t seq; /* when it was committed: modex.commits at the time */
    mcarun_blob_t *blob;
} mcarun_kv_t;

static void kv_construct(mcarun_kv_t *kv)
{
    MCARUN_CLEAR_PAST_SUPER(kv);
}
static void kv_destruct(mcarun_kv_t *kv)
{
    if (NULL != kv->blob) {
        OBJ_RELEASE(kv->blob);
    }
}
static OBJ_CLASS_INSTANCE(mcarun_kv_t, opal_list_item_t, kv_construct, kv_destruct);

/* A get waiting for its peer to commit the key. Replying may close a
 * connection, which must not change the list under an iteration: a
 * closed connection's gets only lose their conn, and are dropped by the
 * next walk over the list. */
typedef struct pending_get_t {
    opal_list_item_t super;
    struct mcarun_conn_t *conn; /* NULL once its connection closed */
    uint32_t peer;
    char key[ORTE_WIRE_MAX_KEY + 1];
    size_t key_len;
    uint64_t deadline; /* UINT64_MAX: none */
} pending_get_t;
static void get_construct(pending_get_t *g)
{
    MCARUN_CLEAR_PAST_SUPER(g);
}
static OBJ_CLASS_INSTANCE(pending_get_t, opal_list_item_t, get_construct, NULL);

static struct {
    opal_list_t gets;
    /* Pairs committed so far; each pair is stamped with the count at its
     * commit, and each rank remembers the count its last collecting fence
     * covered, so that a collecting fence sends only what is new. */
    uint64_t commits;
    bool initialized;
} modex;

void mcarun_modex_rank_init(mcarun_rank_t *r)
{
    if (!modex.initialized) {
        OBJ_CONSTRUCT(&modex.gets, opal_list_t);
        modex.initialized = true;
    }
    OBJ_CONSTRUCT(&r->committed, opal_hash_table_t);
    OBJ_CONSTRUCT(&r->staged, opal_list_t);
}

void mcarun_modex_rank_fini(mcarun_rank_t *r)
{
    const void *key;
    size_t key_size, cursor;
    void *value;
    int rc = opal_hash_table_get_first_key_ptr(&r->committed, &key, &key_size, &value, &cursor);
    while (OPAL_SUCCESS == rc) {
        mcarun_kv_t *kv = value;
        OBJ_RELEASE(kv);
        rc = opal_hash_table_get_next_key_ptr(&r->committed, &key, &key_size, &value, &cursor);
    }
    OBJ_DESTRUCT(&r->committed);
    OPAL_LIST_DESTRUCT(&r->staged);
}

void mcarun_modex_fini(void)
{
    if (modex.initialized) {
        OPAL_LIST_DESTRUCT(&modex.gets);
        modex.initialized = false;
    }
}

static bool visible(const mcarun_kv_t *kv)
{
    return ORTE_MODEX_SCOPE_REMOTE != kv->scope;
}

static void reply_get(struct mcarun_conn_t *conn, int status, const mcarun_kv_t *kv)
{
    orte_wire_msg_t msg = {.type = ORTE_WIRE_GET_REPLY, .status = status};
    if (OPAL_SUCCESS == status) {
        msg.value = kv->blob->bytes;
        msg.value_len = kv->blob->size;
    }
    mcarun_conn_send(conn, &msg, OPAL_SUCCESS == status ? kv->blob : NULL);
}

static mcarun_kv_t *lookup(mcarun_rank_t *owner, const char *key, size_t key_len)
{
    void *kv = NULL;
    return OPAL_SUCCESS == opal_hash_table_get_value_ptr(&owner->committed, key, key_len, &kv)
               ? kv
               : NULL;
}

int mcarun_modex_put(mcarun_rank_t *r, const orte_wire_msg_t *msg, void *payload)
{
    char name[64];
    if (r->modex_bytes + msg->value_len > MCARUN_MODEX_MAX_BYTES ||
        r->modex_keys >= MCARUN_MODEX_MAX_KEYS) {
        opal_output(0,
                    "mcarun: %s put more modex data than mcarun keeps for one rank "
                    "(%llu MiB in %u keys)",
                    mcarun_rank_name(r, name, sizeof(name)),
                    (unsigned long long) (MCARUN_MODEX_MAX_BYTES >> 20), MCARUN_MODEX_MAX_KEYS);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mcarun_kv_t *kv = OBJ_NEW(mcarun_kv_t);
    mcarun_blob_t *blob = OBJ_NEW(mcarun_blob_t);
    if (NULL == kv || NULL == blob) {
        if (NULL != kv) {
            OBJ_RELEASE(kv);
        }
        if (NULL != blob) {
            OBJ_RELEASE(blob);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* The value stays where it arrived: the blob owns the whole payload. */
    blob->buffer = payload;
    blob->bytes = msg->value;
    blob->size = msg->value_len;
    kv->blob = blob;
    memcpy(kv->key, msg->key, msg->key_len);
    kv->key[msg->key_len] = '\0';
    kv->key_len = msg->key_len;
    kv->scope = msg->scope;
    r->modex_bytes += msg->value_len;
    ++r->modex_keys;
    opal_list_append(&r->staged, &kv->super);
    return OPAL_SUCCESS;
}

/* Answers the gets waiting for r's pairs, or all of them when r is gone. */
static void answer_gets(mcarun_rank_t *r)
{
    pending_get_t *g, *next;
    OPAL_LIST_FOREACH_SAFE (g, next, &modex.gets, pending_get_t) {
        const mcarun_kv_t *kv = NULL;
        if (NULL != g->conn) {
            if (g->peer != r->rank) {
                continue;
            }
            kv = lookup(r, g->key, g->key_len);
            if (NULL == kv && !r->gone) {
                continue;
            }
        }
        opal_list_remove_item(&modex.gets, &g->super);
        if (NULL != g->conn) {
            reply_get(g->conn, NULL != kv && visible(kv) ? OPAL_SUCCESS : OPAL_ERR_NOT_FOUND, kv);
        }
        OBJ_RELEASE(g);
    }
}

int mcarun_modex_commit(mcarun_rank_t *r)
{
    mcarun_kv_t *kv;
    while (NULL != (kv = (mcarun_kv_t *) opal_list_remove_first(&r->staged))) {
        mcarun_kv_t *old = lookup(r, kv->key, kv->key_len);
        kv->seq = ++modex.commits;
        int rc = opal_hash_table_set_value_ptr(&r->committed, kv->key, kv->key_len, kv);
        if (OPAL_SUCCESS != rc) {
            OBJ_RELEASE(kv);
            return rc;
        }
        if (NULL != old) {
            r->modex_bytes -= old->blob->size;
            --r->modex_keys;
            OBJ_RELEASE(old);
        }
    }
    answer_gets(r);
    return OPAL_SUCCESS;
}

/* The pairs a collecting fence brings, encoded once: DATA_SET records in
 * blobs of at most ORTE_WIRE_MAX_SET bytes, each sent whole to every
 * collecting rank (a rank skips its own records). One message per blob
 * and rank, however many ranks and keys: the set is built in one pass
 * over the store and its bytes are shared by every connection. */
typedef struct collected_t {
    mcarun_blob_t **blobs;
    uint32_t *counts;
    size_t num;
} collected_t;

static void collected_free(collected_t *set)
{
    for (size_t i = 0; i < set->num; ++i) {
        OBJ_RELEASE(set->blobs[i]);
    }
    free(set->blobs);
    free(set->counts);
    *set = (collected_t){0};
}

/* Starts a new blob of capacity bytes. */
static int collected_grow(collected_t *set, size_t capacity)
{
    mcarun_blob_t **blobs = realloc(set->blobs, (set->num + 1) * sizeof(*blobs));
    if (NULL == blobs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    set->blobs = blobs;
    uint32_t *counts = realloc(set->counts, (set->num + 1) * sizeof(*counts));
    if (NULL == counts) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    set->counts = counts;
    mcarun_blob_t *b = OBJ_NEW(mcarun_blob_t);
    if (NULL == b || NULL == (b->buffer = malloc(0 < capacity ? capacity : 1))) {
        if (NULL != b) {
            OBJ_RELEASE(b);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    b->bytes = b->buffer;
    set->blobs[set->num] = b;
    set->counts[set->num] = 0;
    ++set->num;
    return OPAL_SUCCESS;
}

/* Encodes every rank's visible pairs committed after since into set: a
 * first pass sizes the blobs, a second fills them. */
static int collected_build(collected_t *set, uint64_t since)
{
    for (int pass = 0; pass < 2; ++pass) {
        size_t blob = 0, used = 0;
        for (uint32_t i = 0; i < mcarun_job.size; ++i) {
            mcarun_rank_t *owner = &mcarun_job.ranks[i];
            const void *key;
            size_t key_size, cursor;
            void *value;
            int rc = opal_hash_table_get_first_key_ptr(&owner->committed, &key, &key_size, &value,
                                                       &cursor);
            for (; OPAL_SUCCESS == rc; rc = opal_hash_table_get_next_key_ptr(
                                           &owner->committed, &key, &key_size, &value, &cursor)) {
                const mcarun_kv_t *kv = value;
                if (!visible(kv) || kv->seq <= since) {
                    continue;
                }
                size_t need = orte_wire_record_size(kv->key_len, kv->blob->size);
                if (0 < used && used + need > ORTE_WIRE_MAX_SET) {
                    if (0 == pass && OPAL_SUCCESS != (rc = collected_grow(set, used))) {
                        return rc;
                    }
                    ++blob;
                    used = 0;
                }
                if (1 == pass) {
                    mcarun_blob_t *b = set->blobs[blob];
                    orte_wire_msg_t rec = {.rank = owner->rank,
                                           .scope = kv->scope,
                                           .key = kv->key,
                                           .key_len = kv->key_len,
                                           .value = kv->blob->bytes,
                                           .value_len = kv->blob->size};
                    size_t len;
                    rc = orte_wire_record_encode(&rec, (uint8_t *) b->buffer + used, need, &len);
                    if (OPAL_SUCCESS != rc) {
                        return rc;
                    }
                    b->size += len;
                    ++set->counts[blob];
                }
                used += need;
            }
        }
        if (0 == pass && OPAL_SUCCESS != collected_grow(set, used)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

/* Sends r the collected set. */
static void send_collected(mcarun_rank_t *r, const collected_t *set)
{
    for (size_t i = 0; i < set->num && NULL != r->conn; ++i) {
        orte_wire_msg_t msg = {.type = ORTE_WIRE_DATA_SET,
                               .count = set->counts[i],
                               .value = set->blobs[i]->bytes,
                               .value_len = set->blobs[i]->size};
        mcarun_conn_send(r->conn, &msg, set->blobs[i]);
    }
}

static void fence_end(int status, const mcarun_rank_t *failed, const char *why)
{
    collected_t set = {0};
    bool collect = false;
    /* One set serves every collecting rank: it starts after the pairs
     * that the rank that collected least recently already holds (the
     * others receive a few again, at their latest values). */
    uint64_t since = UINT64_MAX;
    for (uint32_t i = 0; i < mcarun_job.size && OPAL_SUCCESS == status; ++i) {
        const mcarun_rank_t *r = &mcarun_job.ranks[i];
        if (r->in_fence && r->fence_collect) {
            collect = true;
            since = r->collected_upto < since ? r->collected_upto : since;
        }
    }
    if (collect && OPAL_SUCCESS != collected_build(&set, since)) {
        /* Every rank is told, so that none waits for a set that is not
         * coming. */
        status = OPAL_ERR_OUT_OF_RESOURCE;
        why = "mcarun ran out of memory collecting the modex";
        mcarun_job_fail(MCARUN_EXIT_FAILURE, "%s", why);
    }
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        mcarun_rank_t *r = &mcarun_job.ranks[i];
        if (!r->in_fence) {
            continue;
        }
        r->in_fence = false;
        if (OPAL_SUCCESS == status && r->fence_collect) {
            send_collected(r, &set);
            r->collected_upto = modex.commits;
        }
        orte_wire_msg_t msg = {.type = ORTE_WIRE_FENCE_DONE,
                               .status = status,
                               .rank = NULL != failed ? failed->rank : ORTE_WIRE_NO_RANK,
                               .text = why,
                               .text_len = strlen(why)};
        mcarun_conn_send(r->conn, &msg, NULL);
    }
    collected_free(&set);
}

/* Completes the fence when every rank has entered it; fails it when a
 * rank that has not entered never will. */
static void fence_check(const char *why_gone)
{
    uint32_t entered = 0;
    const mcarun_rank_t *gone = NULL;
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        const mcarun_rank_t *r = &mcarun_job.ranks[i];
        if (r->in_fence) {
            ++entered;
        } else if (r->gone && NULL == gone) {
            gone = r;
        }
    }
    if (0 == entered) {
        return;
    }
    if (entered == mcarun_job.size) {
        fence_end(OPAL_SUCCESS, NULL, "");
    } else if (NULL != gone) {
        char why[ORTE_WIRE_MAX_TEXT], name[64];
        snprintf(why, sizeof(why), "%s %s before entering the fence",
                 mcarun_rank_name(gone, name, sizeof(name)),
                 NULL != why_gone ? why_gone : "left the job");
        fence_end(OPAL_ERR_PEER_FAILED, gone, why);
    }
}

int mcarun_modex_fence(mcarun_rank_t *r, bool collect)
{
    if (r->in_fence) {
        char name[64];
        opal_output(0, "mcarun: %s entered a fence while already in one",
                    mcarun_rank_name(r, name, sizeof(name)));
        return OPAL_ERR_PROTOCOL;
    }
    r->in_fence = true;
    r->fence_collect = collect;
    fence_check(NULL);
    return OPAL_SUCCESS;
}

int mcarun_modex_get(mcarun_rank_t *r, const orte_wire_msg_t *msg)
{
    if (msg->rank >= mcarun_job.size) {
        reply_get(r->conn, OPAL_ERR_BAD_PARAM, NULL);
        return OPAL_SUCCESS;
    }
    mcarun_rank_t *peer = &mcarun_job.ranks[msg->rank];
    const mcarun_kv_t *kv = lookup(peer, msg->key, msg->key_len);
    if (NULL != kv || peer->gone) {
        reply_get(r->conn, NULL != kv && visible(kv) ? OPAL_SUCCESS : OPAL_ERR_NOT_FOUND, kv);
        return OPAL_SUCCESS;
    }
    if (0 == msg->timeout_ns) {
        reply_get(r->conn, OPAL_ERR_TIMEOUT, NULL);
        return OPAL_SUCCESS;
    }
    pending_get_t *g = OBJ_NEW(pending_get_t);
    if (NULL == g) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    g->conn = r->conn;
    g->peer = msg->rank;
    memcpy(g->key, msg->key, msg->key_len);
    g->key[msg->key_len] = '\0';
    g->key_len = msg->key_len;
    g->deadline = msg->timeout_ns < 0 ? UINT64_MAX : opal_timer_ns() + (uint64_t) msg->timeout_ns;
    if (g->deadline < (uint64_t) msg->timeout_ns) {
        g->deadline = UINT64_MAX; /* wrapped: as good as forever */
    }
    opal_list_append(&modex.gets, &g->super);
    return OPAL_SUCCESS;
}

void mcarun_modex_rank_gone(mcarun_rank_t *r, const char *why)
{
    r->gone = true;
    if (!modex.initialized) {
        return;
    }
    answer_gets(r);
    fence_check(why);
}

void mcarun_modex_forget_conn(struct mcarun_conn_t *c)
{
    if (!modex.initialized) {
        return;
    }
    pending_get_t *g;
    OPAL_LIST_FOREACH (g, &modex.gets, pending_get_t) {
        if (g->conn == c) {
            g->conn = NULL;
        }
    }
}

uint64_t mcarun_modex_next_deadline(void)
{
    uint64_t next = UINT64_MAX;
    if (modex.initialized) {
        pending_get_t *g;
        OPAL_LIST_FOREACH (g, &modex.gets, pending_get_t) {
            /* A get whose connection closed is dropped by the next tick. */
            uint64_t d = NULL == g->conn ? 0 : g->deadline;
            if (d < next) {
                next = d;
            }
        }
    }
    return next;
}

void mcarun_modex_tick(uint64_t now)
{
    if (!modex.initialized) {
        return;
    }
    pending_get_t *g, *next;
    OPAL_LIST_FOREACH_SAFE (g, next, &modex.gets, pending_get_t) {
        if (NULL == g->conn || g->deadline <= now) {
            opal_list_remove_item(&modex.gets, &g->super);
            if (NULL != g->conn) {
                reply_get(g->conn, OPAL_ERR_TIMEOUT, NULL);
            }
            OBJ_RELEASE(g);
        }
    }
}
