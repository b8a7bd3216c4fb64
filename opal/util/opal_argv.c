#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"

int opal_argv_count(char **argv)
{
    int n = 0;
    if (NULL != argv) {
        while (NULL != argv[n]) {
            ++n;
        }
    }
    return n;
}

void opal_argv_free(char **argv)
{
    if (NULL == argv) {
        return;
    }
    for (char **p = argv; NULL != *p; ++p) {
        free(*p);
    }
    free(argv);
}

/* Makes room for extra more strings (and the terminator) in *argv, which
 * holds count. Leaves *argv untouched on failure. */
static int reserve(char ***argv, int count, int extra)
{
    char **grown = realloc(*argv, ((size_t) count + (size_t) extra + 1) * sizeof(char *));
    if (NULL == grown) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == *argv) {
        grown[0] = NULL;
    }
    *argv = grown;
    return OPAL_SUCCESS;
}

/* Inserts a copy of arg at index (0 <= index <= count). */
static int insert_one(char ***argv, int index, const char *arg)
{
    if (NULL == argv || NULL == arg) {
        return OPAL_ERR_BAD_PARAM;
    }
    int count = opal_argv_count(*argv);
    char *copy = strdup(arg);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS != reserve(argv, count, 1)) {
        free(copy);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memmove(&(*argv)[index + 1], &(*argv)[index], ((size_t) (count - index) + 1) * sizeof(char *));
    (*argv)[index] = copy;
    return OPAL_SUCCESS;
}

int opal_argv_append_nosize(char ***argv, const char *arg)
{
    return insert_one(argv, NULL == argv ? 0 : opal_argv_count(*argv), arg);
}

int opal_argv_append(int *argc, char ***argv, const char *arg)
{
    if (NULL == argc) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_argv_append_nosize(argv, arg);
    if (OPAL_SUCCESS == rc) {
        *argc = opal_argv_count(*argv);
    }
    return rc;
}

int opal_argv_append_unique_nosize(char ***argv, const char *arg)
{
    if (NULL == argv || NULL == arg) {
        return OPAL_ERR_BAD_PARAM;
    }
    for (char **p = *argv; NULL != p && NULL != *p; ++p) {
        if (0 == strcmp(*p, arg)) {
            return OPAL_SUCCESS;
        }
    }
    return opal_argv_append_nosize(argv, arg);
}

int opal_argv_prepend_nosize(char ***argv, const char *arg)
{
    return insert_one(argv, 0, arg);
}

int opal_argv_prepend(int *argc, char ***argv, const char *arg)
{
    if (NULL == argc) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = insert_one(argv, 0, arg);
    if (OPAL_SUCCESS == rc) {
        *argc = opal_argv_count(*argv);
    }
    return rc;
}

static char **split(const char *src, int delimiter, bool keep_empty)
{
    if (NULL == src) {
        return NULL;
    }
    /* Count first so the vector is allocated once. */
    size_t fields = 1;
    for (const char *p = src; '\0' != *p; ++p) {
        if (*p == (char) delimiter) {
            ++fields;
        }
    }
    char **argv = calloc(fields + 1, sizeof(char *));
    if (NULL == argv) {
        return NULL;
    }
    size_t n = 0;
    const char *start = src;
    for (;;) {
        const char *end = strchr(start, delimiter);
        size_t len = NULL == end ? strlen(start) : (size_t) (end - start);
        if (len > 0 || keep_empty) {
            if (NULL == (argv[n] = strndup(start, len))) {
                opal_argv_free(argv);
                return NULL;
            }
            ++n;
        }
        if (NULL == end) {
            break;
        }
        start = end + 1;
    }
    return argv;
}

char **opal_argv_split(const char *src, int delimiter)
{
    return split(src, delimiter, false);
}

char **opal_argv_split_with_empty(const char *src, int delimiter)
{
    return split(src, delimiter, true);
}

char *opal_argv_join(char **argv, int delimiter)
{
    int count = opal_argv_count(argv);
    size_t total = 1;
    for (int i = 0; i < count; ++i) {
        total += strlen(argv[i]) + 1;
    }
    char *joined = malloc(total);
    if (NULL == joined) {
        return NULL;
    }
    char *w = joined;
    for (int i = 0; i < count; ++i) {
        if (i > 0) {
            *w++ = (char) delimiter;
        }
        size_t len = strlen(argv[i]);
        memcpy(w, argv[i], len);
        w += len;
    }
    *w = '\0';
    return joined;
}

char **opal_argv_copy(char **argv)
{
    if (NULL == argv) {
        return NULL;
    }
    int count = opal_argv_count(argv);
    char **copy = calloc((size_t) count + 1, sizeof(char *));
    if (NULL == copy) {
        return NULL;
    }
    for (int i = 0; i < count; ++i) {
        if (NULL == (copy[i] = strdup(argv[i]))) {
            opal_argv_free(copy);
            return NULL;
        }
    }
    return copy;
}

int opal_argv_delete(int *argc, char ***argv, int start, int num)
{
    if (NULL == argv || start < 0 || num < 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    int count = opal_argv_count(*argv);
    if (start >= count || 0 == num) {
        return OPAL_SUCCESS;
    }
    int end = num > count - start ? count : start + num;
    for (int i = start; i < end; ++i) {
        free((*argv)[i]);
    }
    /* Moves the tail and its NULL terminator down; the vector keeps its
     * size, which is harmless and cannot fail. */
    memmove(&(*argv)[start], &(*argv)[end], ((size_t) (count - end) + 1) * sizeof(char *));
    if (NULL != argc) {
        *argc = count - (end - start);
    }
    return OPAL_SUCCESS;
}

int opal_argv_insert(char ***target, int start, char **source)
{
    if (NULL == target) {
        return OPAL_ERR_BAD_PARAM;
    }
    int count = opal_argv_count(*target);
    if (start < 0 || start > count) {
        return OPAL_ERR_BAD_PARAM;
    }
    int extra = opal_argv_count(source);
    if (0 == extra) {
        return OPAL_SUCCESS;
    }
    char **copies = opal_argv_copy(source);
    if (NULL == copies) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS != reserve(target, count, extra)) {
        opal_argv_free(copies);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memmove(&(*target)[start + extra], &(*target)[start],
            ((size_t) (count - start) + 1) * sizeof(char *));
    memcpy(&(*target)[start], copies, (size_t) extra * sizeof(char *));
    /* The strings now belong to target; only the vector is freed. */
    free(copies);
    return OPAL_SUCCESS;
}
