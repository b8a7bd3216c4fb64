/*
 * The standalone runtime: what na/btl installs (opal_rte_install) in a
 * process that no launcher started, so that the BTLs, which expect a job,
 * run between processes that share none.
 *
 * The node's standalone job: every such process of this node and user is
 * a rank of one job (NA_BTL_STANDALONE_JOBID) whose rank is its pid and
 * whose size is the kernel's pid_max, so ranks never collide on a node
 * and need no agreement. BTLs that index peers by rank (the multiplexer,
 * sm, ofi) then reach each other as in any job.
 *
 * The modex: what this process puts is its business card (na_btl_wire.h:
 * key / value pairs), which its URI carries and which it also writes to
 * /dev/shm/opal-mca.<uid>.<jobid>.card.<pid> (mode 0600) once the BTLs
 * are up. A get for a peer answers from that peer's card: the one its URI
 * or serialized address brought (na_btl_rte_add_card), or else its card
 * file, so that a server whose BTLs meet a new client's first message
 * find the client's card without being told. The files are named so that
 * opal_na_cleanup can tell their owner and pid (na_btl_cleanup.c).
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/na/btl/na_btl.h"
#include "opal/mca/na/btl/na_btl_rte.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* What this process published, and the peers' cards it knows. */
typedef struct rte_pair_t {
    char *key;
    void *value;
    uint32_t size;
} rte_pair_t;

typedef struct rte_peer_t {
    struct rte_peer_t *next;
    uint32_t rank;
    uint8_t *bytes; /* the encoded card; decoded points into it */
    size_t size;
    na_btl_card_t *decoded;
} rte_peer_t;

static struct {
    pthread_mutex_t lock;
    bool installed;
    uint32_t rank;
    rte_pair_t pairs[NA_BTL_CARD_MAX_PAIRS];
    uint32_t npairs;
    rte_peer_t *peers;
    char card_name[NA_BTL_SHM_NAME_MAX];
    bool card_written;
    char hostname[256];
    char session_dir[512];
} rte = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------- names */

int na_btl_shm_name(const char *kind, uint32_t pid, char *name, size_t size)
{
    int n = snprintf(name, size, "/opal-mca.%lu.%lu.%s.%lu", (unsigned long) geteuid(),
                     (unsigned long) NA_BTL_STANDALONE_JOBID, kind, (unsigned long) pid);
    return n < 0 || (size_t) n >= size ? OPAL_ERR_BAD_PARAM : OPAL_SUCCESS;
}

/* --------------------------------------------------------- the hooks */

static int rte_put(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    (void) scope;
    if (strlen(key) > NA_BTL_CARD_MAX_KEY || size > NA_BTL_CARD_MAX_VALUE) {
        opal_output(0,
                    "na/btl: the business card cannot hold \"%s\" (%zu bytes; keys of at most "
                    "%d characters, values of at most %d bytes)",
                    key, size, NA_BTL_CARD_MAX_KEY, NA_BTL_CARD_MAX_VALUE);
        return OPAL_ERR_BAD_PARAM;
    }
    void *copy = malloc(0 == size ? 1 : size);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (size > 0) {
        memcpy(copy, value, size);
    }
    int rc = OPAL_SUCCESS;
    pthread_mutex_lock(&rte.lock);
    uint32_t i = 0;
    while (i < rte.npairs && 0 != strcmp(rte.pairs[i].key, key)) {
        ++i;
    }
    if (i == rte.npairs) {
        if (NA_BTL_CARD_MAX_PAIRS == rte.npairs || NULL == (rte.pairs[i].key = strdup(key))) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        } else {
            ++rte.npairs;
        }
    } else {
        free(rte.pairs[i].value);
    }
    if (OPAL_SUCCESS == rc) {
        rte.pairs[i].value = copy;
        rte.pairs[i].size = (uint32_t) size;
    } else {
        free(copy);
    }
    pthread_mutex_unlock(&rte.lock);
    return rc;
}

static void peer_free(rte_peer_t *p)
{
    free(p->bytes);
    free(p->decoded);
    free(p);
}

static int rte_commit(void)
{
    return OPAL_SUCCESS;
}

/* Reads the card file of rank (lock held); NULL when there is none that
 * is this user's and well formed. */
static rte_peer_t *card_from_file(uint32_t rank)
{
    char name[NA_BTL_SHM_NAME_MAX];
    if (OPAL_SUCCESS != na_btl_shm_name(NA_BTL_SHM_CARD, rank, name, sizeof(name))) {
        return NULL;
    }
    int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    rte_peer_t *peer = NULL;
    uint8_t *bytes = NULL;
    char why[NA_BTL_WHY_MAX];
    if (0 != fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_size <= 0 ||
        st.st_size > 4 * 1024 * 1024) {
        goto out;
    }
    bytes = malloc((size_t) st.st_size);
    if (NULL == bytes || st.st_size != pread(fd, bytes, (size_t) st.st_size, 0)) {
        goto out;
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer || NULL == (peer->decoded = malloc(sizeof(*peer->decoded)))) {
        goto out;
    }
    if (OPAL_SUCCESS != na_btl_card_decode(bytes, (size_t) st.st_size, peer->decoded, why) ||
        peer->decoded->rank != rank || peer->decoded->jobid != NA_BTL_STANDALONE_JOBID) {
        opal_output_verbose(1, opal_na_base_output, "na/btl: /dev/shm%s is not a card of pid %u",
                            name, rank);
        goto out;
    }
    peer->rank = rank;
    peer->bytes = bytes;
    peer->size = (size_t) st.st_size;
    bytes = NULL;
    peer->next = rte.peers;
    rte.peers = peer;
    close(fd);
    return peer;
out:
    if (NULL != peer) {
        free(peer->decoded);
        free(peer);
    }
    free(bytes);
    close(fd);
    return NULL;
}

static int rte_get(uint32_t peer_rank, const char *key, void **value, size_t *size,
                   int64_t timeout_ns)
{
    (void) timeout_ns;
    *value = NULL;
    *size = 0;
    int rc = OPAL_ERR_NOT_FOUND;
    pthread_mutex_lock(&rte.lock);
    const void *found = NULL;
    size_t found_size = 0;
    if (peer_rank == rte.rank) {
        for (uint32_t i = 0; i < rte.npairs; ++i) {
            if (0 == strcmp(rte.pairs[i].key, key)) {
                found = rte.pairs[i].value;
                found_size = rte.pairs[i].size;
                rc = OPAL_SUCCESS;
            }
        }
    } else {
        rte_peer_t *p = rte.peers;
        while (NULL != p && p->rank != peer_rank) {
            p = p->next;
        }
        if (NULL == p) {
            p = card_from_file(peer_rank);
        }
        for (uint32_t i = 0; NULL != p && i < p->decoded->npairs; ++i) {
            if (0 == strcmp(p->decoded->pairs[i].key, key)) {
                found = p->decoded->pairs[i].value;
                found_size = p->decoded->pairs[i].size;
                rc = OPAL_SUCCESS;
            }
        }
    }
    if (OPAL_SUCCESS == rc && found_size > 0) {
        *value = malloc(found_size);
        if (NULL == *value) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(*value, found, found_size);
            *size = found_size;
        }
    }
    pthread_mutex_unlock(&rte.lock);
    if (OPAL_ERR_NOT_FOUND == rc) {
        opal_output_verbose(10, opal_na_base_output,
                            "na/btl: no card of pid %u here holds \"%s\" (look the process up by "
                            "its URI)",
                            peer_rank, key);
    }
    return rc;
}

static int rte_fence(bool collect)
{
    (void) collect;
    /* A job of processes that do not know each other has nobody to wait
     * for. */
    return OPAL_SUCCESS;
}

static int rte_abort(int status, const char *message)
{
    opal_output(0, "na/btl: abort (status %d) outside a job: %s", status, message);
    return OPAL_ERR_NOT_SUPPORTED;
}

static const opal_rte_hooks_t hooks = {
    .rte_name = "na/btl standalone",
    .rte_modex_put = rte_put,
    .rte_modex_commit = rte_commit,
    .rte_modex_get = rte_get,
    .rte_fence = rte_fence,
    .rte_abort = rte_abort,
};

/* ----------------------------------------------------------- the job */

/* The kernel's largest pid + 1: the standalone job's size. */
static uint32_t pid_limit(void)
{
    uint32_t limit = 4194304; /* PID_MAX_LIMIT on 64-bit Linux */
    FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
    if (NULL != f) {
        unsigned long v = 0;
        if (1 == fscanf(f, "%lu", &v) && v > 1 && v <= limit) {
            limit = (uint32_t) v;
        }
        fclose(f);
    }
    return limit;
}

/* A node id that the standalone processes of one boot of one host agree
 * on (FNV-1a of the boot id and the host name). */
static uint32_t node_id(const char *hostname)
{
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (NULL != f) {
        if (NULL == fgets(boot, sizeof(boot), f)) {
            boot[0] = '\0';
        }
        fclose(f);
    }
    uint32_t h = 2166136261u;
    for (const char *s = boot; '\0' != *s; ++s) {
        h = (h ^ (uint8_t) *s) * 16777619u;
    }
    for (const char *s = hostname; '\0' != *s; ++s) {
        h = (h ^ (uint8_t) *s) * 16777619u;
    }
    return h & 0x7fffffffu;
}

int na_btl_rte_install(bool *installed)
{
    *installed = false;
    if (opal_rte_installed()) {
        opal_output(0,
                    "na/btl: runtime \"%s\" is installed but described no job (opal_proc_init "
                    "was not called): na/btl cannot tell its peers",
                    opal_rte_name());
        return OPAL_ERR_NOT_INITIALIZED;
    }
    /* Files of standalone processes of this user that are gone. */
    (void) na_btl_cleanup();
    if (0 != gethostname(rte.hostname, sizeof(rte.hostname) - 1)) {
        snprintf(rte.hostname, sizeof(rte.hostname), "localhost");
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(rte.session_dir, sizeof(rte.session_dir), "%s/opal-mca.%lu/%lu/",
             NULL == tmp || '\0' == tmp[0] ? "/tmp" : tmp, (unsigned long) geteuid(),
             (unsigned long) NA_BTL_STANDALONE_JOBID);
    rte.rank = (uint32_t) getpid();
    rte.npairs = 0;
    rte.peers = NULL;
    rte.card_written = false;
    int rc = opal_rte_install(&hooks);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rte.installed = true;
    uint32_t size = pid_limit();
    opal_proc_job_info_t job = {
        .my_name = {.jobid = NA_BTL_STANDALONE_JOBID, .vpid = rte.rank},
        .size = size,
        .local_rank = rte.rank,
        .local_size = size,
        .node_id = node_id(rte.hostname),
        .hostname = rte.hostname,
        .session_dir = rte.session_dir,
        .lookup_timeout_ns = 0,
    };
    rc = opal_proc_init(&job);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: cannot describe the standalone job: %s", opal_strerror(rc));
        na_btl_rte_uninstall();
        return rc;
    }
    *installed = true;
    return OPAL_SUCCESS;
}

int na_btl_rte_card(uint8_t **card, size_t *size)
{
    *card = NULL;
    *size = 0;
    const char *keys[NA_BTL_CARD_MAX_PAIRS];
    const void *values[NA_BTL_CARD_MAX_PAIRS];
    uint32_t sizes[NA_BTL_CARD_MAX_PAIRS];
    pthread_mutex_lock(&rte.lock);
    for (uint32_t i = 0; i < rte.npairs; ++i) {
        keys[i] = rte.pairs[i].key;
        values[i] = rte.pairs[i].value;
        sizes[i] = rte.pairs[i].size;
    }
    size_t n = na_btl_card_size(rte.npairs, keys, sizes);
    uint8_t *bytes = malloc(n);
    int rc = NULL == bytes ? OPAL_ERR_OUT_OF_RESOURCE
                           : na_btl_card_encode(bytes, n, NA_BTL_STANDALONE_JOBID, rte.rank,
                                                rte.npairs, keys, values, sizes);
    pthread_mutex_unlock(&rte.lock);
    if (OPAL_SUCCESS != rc) {
        free(bytes);
        return rc;
    }
    /* Written under a temporary name and renamed, so that a reader never
     * sees half a card. */
    char tmp[NA_BTL_SHM_NAME_MAX];
    rc = na_btl_shm_name(NA_BTL_SHM_CARD, rte.rank, rte.card_name, sizeof(rte.card_name));
    if (OPAL_SUCCESS == rc) {
        rc = na_btl_shm_name(NA_BTL_SHM_CARD_TMP, rte.rank, tmp, sizeof(tmp));
    }
    int fd = OPAL_SUCCESS == rc
                 ? shm_open(tmp, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR)
                 : -1;
    if (fd < 0 || 0 != fchmod(fd, S_IRUSR | S_IWUSR) || (ssize_t) n != pwrite(fd, bytes, n, 0)) {
        opal_output(0, "na/btl: cannot write this process's card to /dev/shm%s: %s", tmp,
                    strerror(errno));
        rc = OPAL_ERR_IN_ERRNO;
    } else {
        char from[NA_BTL_SHM_NAME_MAX + 16], to[NA_BTL_SHM_NAME_MAX + 16];
        snprintf(from, sizeof(from), "/dev/shm%s", tmp);
        snprintf(to, sizeof(to), "/dev/shm%s", rte.card_name);
        if (0 != rename(from, to)) {
            opal_output(0, "na/btl: cannot publish this process's card as %s: %s", to,
                        strerror(errno));
            (void) shm_unlink(tmp);
            rc = OPAL_ERR_IN_ERRNO;
        } else {
            rte.card_written = true;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    if (OPAL_SUCCESS != rc) {
        free(bytes);
        return rc;
    }
    *card = bytes;
    *size = n;
    return OPAL_SUCCESS;
}

int na_btl_rte_add_card(uint32_t rank, const uint8_t *card, size_t size)
{
    rte_peer_t *peer = calloc(1, sizeof(*peer));
    uint8_t *bytes = malloc(size);
    na_btl_card_t *decoded = malloc(sizeof(*decoded));
    if (NULL == peer || NULL == bytes || NULL == decoded) {
        free(peer);
        free(bytes);
        free(decoded);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(bytes, card, size);
    char why[NA_BTL_WHY_MAX];
    int rc = na_btl_card_decode(bytes, size, decoded, why);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: the card of pid %u: %s", rank, why);
        free(peer);
        free(bytes);
        free(decoded);
        return rc;
    }
    peer->rank = rank;
    peer->bytes = bytes;
    peer->size = size;
    peer->decoded = decoded;
    pthread_mutex_lock(&rte.lock);
    /* The newest card of a rank wins: a pid reused by a new process. */
    rte_peer_t **p = &rte.peers;
    while (NULL != *p) {
        if ((*p)->rank == rank) {
            rte_peer_t *old = *p;
            *p = old->next;
            peer_free(old);
        } else {
            p = &(*p)->next;
        }
    }
    peer->next = rte.peers;
    rte.peers = peer;
    pthread_mutex_unlock(&rte.lock);
    return OPAL_SUCCESS;
}

void na_btl_rte_forget(uint32_t rank)
{
    if (!rte.installed) {
        return;
    }
    pthread_mutex_lock(&rte.lock);
    for (rte_peer_t **p = &rte.peers; NULL != *p; p = &(*p)->next) {
        if ((*p)->rank == rank) {
            rte_peer_t *old = *p;
            *p = old->next;
            peer_free(old);
            break;
        }
    }
    pthread_mutex_unlock(&rte.lock);
}

int na_btl_rte_peer_card(uint32_t rank, uint8_t **card, size_t *size)
{
    *card = NULL;
    *size = 0;
    int rc = OPAL_ERR_NOT_FOUND;
    pthread_mutex_lock(&rte.lock);
    rte_peer_t *p = rte.peers;
    while (NULL != p && p->rank != rank) {
        p = p->next;
    }
    if (NULL == p) {
        p = card_from_file(rank);
    }
    if (NULL != p) {
        size_t n = p->size;
        *card = malloc(n);
        if (NULL == *card) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(*card, p->bytes, n);
            *size = n;
            rc = OPAL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&rte.lock);
    return rc;
}

void na_btl_rte_uninstall(void)
{
    if (!rte.installed) {
        return;
    }
    opal_proc_finalize();
    (void) opal_rte_uninstall();
    if (rte.card_written) {
        (void) shm_unlink(rte.card_name);
        rte.card_written = false;
    }
    for (uint32_t i = 0; i < rte.npairs; ++i) {
        free(rte.pairs[i].key);
        free(rte.pairs[i].value);
    }
    rte.npairs = 0;
    while (NULL != rte.peers) {
        rte_peer_t *p = rte.peers;
        rte.peers = p->next;
        peer_free(p);
    }
    rte.installed = false;
}
