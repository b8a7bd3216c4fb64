/*
 * Log facilities and the mask that sets their levels (mca_base_log.h).
 * The facilities are fixed at build time (the layers below and
 * opal_frameworks[]), so a mask is checked in full when it is read.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_log.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define LOG_LAYERS(X)  X(opal) X(mca) X(orte)
#define LOG_LEVELS(X)  X(error, 0) X(warn, 5) X(info, 10) X(debug, 40) X(trace, 100)
#define MAX_FACILITIES 64
#define NO_LEVEL       (-1)

static const char *const layers[] = {
#define LAYER_NAME(n) #n,
    LOG_LAYERS(LAYER_NAME)
#undef LAYER_NAME
};
#define N_LAYERS (sizeof(layers) / sizeof(layers[0]))

static const struct {
    const char *name;
    int level;
} levels[] = {
#define LEVEL_ENTRY(n, v) {#n, v},
    LOG_LEVELS(LEVEL_ENTRY)
#undef LEVEL_ENTRY
};
#define N_LEVELS (sizeof(levels) / sizeof(levels[0]))

/* Indexed like facility_name(): the mask's level for each, NO_LEVEL when
 * it names neither the facility nor a default. */
static int mask_level[MAX_FACILITIES];
static int default_level = NO_LEVEL;
static bool configured = false;
static char log_file[4096];

static const char *facility_name(size_t i)
{
    if (i < N_LAYERS) {
        return layers[i];
    }
    for (size_t k = 0; NULL != opal_frameworks[k]; ++k) {
        if (k == i - N_LAYERS) {
            return opal_frameworks[k]->framework_name;
        }
    }
    return NULL;
}

static int facility_index(const char *name, size_t len)
{
    for (size_t i = 0; i < MAX_FACILITIES; ++i) {
        const char *f = facility_name(i);
        if (NULL == f) {
            break;
        }
        if (strlen(f) == len && 0 == strncmp(f, name, len)) {
            return (int) i;
        }
    }
    return -1;
}

static int level_of(const char *name, size_t len)
{
    for (size_t i = 0; i < N_LEVELS; ++i) {
        if (strlen(levels[i].name) == len && 0 == strncmp(levels[i].name, name, len)) {
            return levels[i].level;
        }
    }
    return NO_LEVEL;
}

static void list_facilities(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < MAX_FACILITIES && NULL != facility_name(i) && used < size; ++i) {
        int n = snprintf(buf + used, size - used, "%s%s", 0 == i ? "" : ", ", facility_name(i));
        used += n < 0 ? size : (size_t) n;
    }
}

static void list_levels(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_LEVELS && used < size; ++i) {
        int n = snprintf(buf + used, size - used, "%s%s (%d)", 0 == i ? "" : ", ", levels[i].name,
                         levels[i].level);
        used += n < 0 ? size : (size_t) n;
    }
}

/* Parses one "level" or "facility=level" item of len bytes into the
 * tables. */
static int parse_item(const char *mask, const char *item, size_t len, int *table, int *dflt)
{
    char list[1024];
    const char *eq = memchr(item, '=', len);
    const char *lvl = NULL == eq ? item : eq + 1;
    size_t lvl_len = len - (size_t) (lvl - item);
    int fac = -1;
    if (NULL != eq) {
        fac = facility_index(item, (size_t) (eq - item));
        if (fac < 0) {
            list_facilities(list, sizeof(list));
            opal_output(0, "opal_log_mask=%s: unknown facility \"%.*s\"; the facilities are: %s",
                        mask, (int) (eq - item), item, list);
            return OPAL_ERR_BAD_PARAM;
        }
    }
    int level = level_of(lvl, lvl_len);
    if (NO_LEVEL == level) {
        list_levels(list, sizeof(list));
        opal_output(0, "opal_log_mask=%s: unknown level \"%.*s\"; the levels are: %s", mask,
                    (int) lvl_len, lvl, list);
        return OPAL_ERR_BAD_PARAM;
    }
    if (fac < 0) {
        *dflt = level;
    } else {
        table[fac] = level;
    }
    return OPAL_SUCCESS;
}

int mca_base_log_configure(const char *mask, const char *file)
{
    int table[MAX_FACILITIES], dflt = NO_LEVEL;
    char path[sizeof(log_file)] = "";
    for (size_t i = 0; i < MAX_FACILITIES; ++i) {
        table[i] = NO_LEVEL;
    }
    for (const char *item = NULL == mask ? "" : mask; '\0' != *item;) {
        size_t len = strcspn(item, ",");
        if (len > 0) {
            int rc = parse_item(mask, item, len, table, &dflt);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
        }
        item += len + (',' == item[len] ? 1 : 0);
    }
    if (NULL != file && '\0' != file[0]) {
        int rc = opal_output_expand_path(file, path, sizeof(path));
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "opal_log_file=%s: the file name is too long", file);
            return rc;
        }
    }
    memcpy(mask_level, table, sizeof(table));
    default_level = dflt;
    snprintf(log_file, sizeof(log_file), "%s", path);
    configured = (NULL != mask && '\0' != mask[0]) || '\0' != path[0];
    return OPAL_SUCCESS;
}

void mca_base_log_reset(void)
{
    (void) mca_base_log_configure(NULL, NULL);
}

int mca_base_log_verbosity(const char *facility, int verbose)
{
    int i = facility_index(facility, strlen(facility));
    int level = i >= 0 && NO_LEVEL != mask_level[i] ? mask_level[i] : default_level;
    return level > verbose ? level : verbose;
}

int mca_base_log_open(const char *facility, const char *plain_prefix, int verbose)
{
    char prefix[128];
    opal_output_stream_t lds = {
        .lds_prefix = prefix,
        .lds_verbose_level = mca_base_log_verbosity(facility, verbose),
        .lds_want_stderr = true,
    };
    if (configured) {
        const char *rank = getenv("OPAL_ORTE_RANK");
        snprintf(prefix, sizeof(prefix), "rank %s pid %ld %s", NULL != rank ? rank : "none",
                 (long) getpid(), facility);
        lds.lds_want_header = true;
        if ('\0' != log_file[0]) {
            lds.lds_file_name = log_file;
            lds.lds_want_stderr = false;
        }
    } else {
        snprintf(prefix, sizeof(prefix), "%s", plain_prefix);
    }
    return opal_output_open(&lds);
}
