/*
 * Fault injection: the configuration of each site and the decision at each
 * hit (opal_fault.h). A site's state is changed only under one lock; the
 * sites are in debug and test builds only, where that costs nothing that
 * matters.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"

typedef struct {
    bool on;
    double probability;
    uint64_t interval;
    uint64_t max;
    uint64_t arg;
    uint64_t rng;
    uint64_t hits;
    uint64_t fired;
} fault_site_state_t;

static const char *const site_names[] = {
#define OPAL_FAULT_SITE_NAME(name, what) #name,
    OPAL_FAULT_SITE_TABLE(OPAL_FAULT_SITE_NAME)
#undef OPAL_FAULT_SITE_NAME
};

atomic_bool opal_fault_active = false;
static fault_site_state_t sites[OPAL_FAULT_SITE_COUNT];
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;

int opal_fault_site_find(const char *name)
{
    for (int i = 0; i < OPAL_FAULT_SITE_COUNT; ++i) {
        if (0 == strcmp(site_names[i], name)) {
            return i;
        }
    }
    return -1;
}

/* xorshift64*: a site's own reproducible sequence. */
static double next_uniform(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (double) ((x * UINT64_C(2685821657736338717)) >> 11) / (double) (UINT64_C(1) << 53);
}

bool opal_fault_hit(opal_fault_site_t site)
{
    if ((unsigned) site >= OPAL_FAULT_SITE_COUNT) {
        return false;
    }
    bool fire = false;
    pthread_mutex_lock(&sites_lock);
    fault_site_state_t *s = &sites[site];
    if (s->on) {
        ++s->hits;
        fire = 0 == s->hits % s->interval && (0 == s->max || s->fired < s->max) &&
               (s->probability >= 1.0 || next_uniform(&s->rng) < s->probability);
        if (fire) {
            ++s->fired;
        }
    }
    pthread_mutex_unlock(&sites_lock);
    return fire;
}

uint64_t opal_fault_arg(opal_fault_site_t site)
{
    if ((unsigned) site >= OPAL_FAULT_SITE_COUNT) {
        return 0;
    }
    pthread_mutex_lock(&sites_lock);
    uint64_t arg = sites[site].arg;
    pthread_mutex_unlock(&sites_lock);
    return arg;
}

uint64_t opal_fault_fired(opal_fault_site_t site)
{
    if ((unsigned) site >= OPAL_FAULT_SITE_COUNT) {
        return 0;
    }
    pthread_mutex_lock(&sites_lock);
    uint64_t fired = sites[site].fired;
    pthread_mutex_unlock(&sites_lock);
    return fired;
}

void opal_fault_clear(void)
{
    pthread_mutex_lock(&sites_lock);
    memset(sites, 0, sizeof(sites));
    atomic_store_explicit(&opal_fault_active, false, memory_order_relaxed);
    pthread_mutex_unlock(&sites_lock);
}

/* ------------------------------------------------------------ parsing */

static void say_bad(const char *source, int lineno, const char *what, const char *word)
{
    char known[1024] = "";
    size_t len = 0;
    if (NULL != strstr(what, "unknown site")) {
        for (int i = 0; i < OPAL_FAULT_SITE_COUNT && len < sizeof(known); ++i) {
            int n = snprintf(known + len, sizeof(known) - len, "%s%s", 0 == i ? "" : ", ",
                             site_names[i]);
            len += n > 0 ? (size_t) n : 0;
        }
    }
    opal_output(0, "opal_fault: %s:%d: %s '%s'%s%s", source, lineno, what, word,
                '\0' == known[0] ? "" : "; the sites are: ", known);
}

static bool parse_u64(const char *text, uint64_t *out)
{
    if ('\0' == text[0] || '-' == text[0]) {
        return false;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (0 != errno || '\0' != *end) {
        return false;
    }
    *out = (uint64_t) v;
    return true;
}

/* Applies one option "key=value" to s; false (after saying why) when bad. */
static bool parse_option(fault_site_state_t *s, char *word, const char *source, int lineno)
{
    char *eq = strchr(word, '=');
    if (NULL == eq) {
        say_bad(source, lineno, "expected option=value, not", word);
        return false;
    }
    *eq = '\0';
    const char *key = word, *value = eq + 1;
    bool ok = true;
    if (0 == strcmp(key, "probability")) {
        char *end = NULL;
        errno = 0;
        s->probability = strtod(value, &end);
        ok = '\0' != value[0] && '\0' == *end && 0 == errno && isfinite(s->probability) &&
             s->probability >= 0.0 && s->probability <= 1.0;
    } else if (0 == strcmp(key, "interval")) {
        ok = parse_u64(value, &s->interval) && s->interval > 0;
    } else if (0 == strcmp(key, "max")) {
        ok = parse_u64(value, &s->max);
    } else if (0 == strcmp(key, "arg")) {
        ok = parse_u64(value, &s->arg);
    } else if (0 == strcmp(key, "seed")) {
        ok = parse_u64(value, &s->rng);
        s->rng = 0 == s->rng ? 1 : s->rng;
    } else {
        *eq = '=';
        say_bad(source, lineno,
                "unknown option (expected probability, interval, max, arg or seed):", word);
        return false;
    }
    if (!ok) {
        *eq = '=';
        say_bad(source, lineno, "bad value in", word);
    }
    return ok;
}

int opal_fault_configure(const char *text, const char *source)
{
    fault_site_state_t parsed[OPAL_FAULT_SITE_COUNT];
    memset(parsed, 0, sizeof(parsed));
    char *copy = strdup(NULL == text ? "" : text);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_SUCCESS, lineno = 0;
    bool any = false;
    char *save_line = NULL;
    /* strtok_r would skip empty lines and lose the numbering. */
    for (char *line = copy; NULL != line && OPAL_SUCCESS == rc; line = save_line) {
        save_line = strchr(line, '\n');
        if (NULL != save_line) {
            *save_line++ = '\0';
        }
        ++lineno;
        char *hash = strchr(line, '#');
        if (NULL != hash) {
            *hash = '\0';
        }
        char *save_word = NULL;
        char *word = strtok_r(line, " \t\r", &save_word);
        if (NULL == word) {
            continue;
        }
        int site = opal_fault_site_find(word);
        if (site < 0) {
            say_bad(source, lineno, "unknown site", word);
            rc = OPAL_ERR_BAD_PARAM;
            break;
        }
        fault_site_state_t *s = &parsed[site];
        if (s->on) {
            say_bad(source, lineno, "site configured twice:", word);
            rc = OPAL_ERR_BAD_PARAM;
            break;
        }
        *s = (fault_site_state_t){.on = true, .probability = 1.0, .interval = 1, .rng = 1};
        while (NULL != (word = strtok_r(NULL, " \t\r", &save_word))) {
            if (!parse_option(s, word, source, lineno)) {
                rc = OPAL_ERR_BAD_PARAM;
                break;
            }
        }
        any = true;
    }
    free(copy);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
#if !(defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION)
    if (any) {
        opal_output(0,
                    "opal_fault: %s configures faults, but this build has no fault sites "
                    "(configure with --enable-fault-injection)",
                    source);
        return OPAL_ERR_NOT_SUPPORTED;
    }
#endif
    pthread_mutex_lock(&sites_lock);
    memcpy(sites, parsed, sizeof(sites));
    atomic_store_explicit(&opal_fault_active, any, memory_order_relaxed);
    pthread_mutex_unlock(&sites_lock);
    return OPAL_SUCCESS;
}

int opal_fault_configure_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        opal_output(0, "opal_fault: cannot read the fault configuration %s: %s", path,
                    strerror(errno));
        return OPAL_ERR_NOT_FOUND;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t n;
    while (NULL != text && (n = fread(text + len, 1, cap - 1 - len, f)) > 0) {
        len += n;
        if (len == cap - 1) {
            char *bigger = realloc(text, cap * 2);
            if (NULL == bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (NULL == text) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    text[len] = '\0';
    int rc = opal_fault_configure(text, path);
    free(text);
    return rc;
}
