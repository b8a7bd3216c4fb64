#include "opal/opal_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "opal/runtime/opal_build_tree.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

#ifndef OPAL_PKGDATADIR
#error "OPAL_PKGDATADIR (where help files are installed) must be defined by the build"
#endif

#define HELP_PATH_ENV "OPAL_SHOW_HELP_PATH"
#define SEPARATOR     "--------------------------------------------------------------------------\n"

/* Longest width or precision accepted in a help text conversion: enough for
 * any layout, small enough that a typo cannot ask for a gigabyte. */
#define MAX_FIELD_DIGITS 4

/* Keys ("file\ntopic") of the topics already shown. Not an opal_mutex_t:
 * show_help must work before and after the object system. */
static pthread_mutex_t shown_lock = PTHREAD_MUTEX_INITIALIZER;
static char **shown;

/* Relaxed: a change of stream need not be seen by a concurrent message. */
static atomic_int help_output;

int opal_show_help_init(void)
{
    return OPAL_SUCCESS;
}

void opal_show_help_finalize(void)
{
    pthread_mutex_lock(&shown_lock);
    opal_argv_free(shown);
    shown = NULL;
    pthread_mutex_unlock(&shown_lock);
    atomic_store_explicit(&help_output, 0, memory_order_relaxed);
}

int opal_show_help_set_output(int output_id)
{
    return atomic_exchange_explicit(&help_output, output_id, memory_order_relaxed);
}

/* The directories searched for a help file name without a '/': those of
 * $OPAL_SHOW_HELP_PATH, then the build tree's source directories for a
 * build-tree libopal (whose help files are not installed yet), else where
 * they are installed. */
static char **help_dirs(void)
{
    const char *env = getenv(HELP_PATH_ENV);
    char **dirs = opal_argv_split(NULL != env ? env : "", ':');
    if (NULL == dirs) {
        return NULL;
    }
    int rc;
    if (opal_build_tree_in_use()) {
        char **tree = opal_argv_split(opal_build_tree_help_dirs(), ' ');
        rc = NULL == tree ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
        for (int i = 0; OPAL_SUCCESS == rc && NULL != tree[i]; ++i) {
            rc = opal_argv_append_nosize(&dirs, tree[i]);
        }
        opal_argv_free(tree);
    } else {
        rc = opal_argv_append_nosize(&dirs, OPAL_PKGDATADIR);
    }
    if (OPAL_SUCCESS != rc) {
        opal_argv_free(dirs);
        dirs = NULL;
    }
    return dirs;
}

/* Opens filename along the help path. On success *path is the file opened;
 * on failure *searched lists where it was looked for. Both are malloc'd. */
static FILE *open_help_file(const char *filename, char **path, char **searched)
{
    *path = NULL;
    *searched = NULL;
    if (NULL != strchr(filename, '/')) {
        FILE *fp = fopen(filename, "r");
        *(NULL != fp ? path : searched) = strdup(filename);
        return fp;
    }
    char **dirs = help_dirs();
    if (NULL == dirs) {
        return NULL;
    }
    FILE *fp = NULL;
    for (char **d = dirs; NULL != *d && NULL == fp; ++d) {
        char *candidate;
        if (asprintf(&candidate, "%s/%s", *d, filename) < 0) {
            break;
        }
        if (NULL != (fp = fopen(candidate, "r"))) {
            *path = candidate;
        } else {
            free(candidate);
        }
    }
    if (NULL == fp) {
        *searched = opal_argv_join(dirs, ':');
    }
    opal_argv_free(dirs);
    return fp;
}

/* Strips the trailing newline and whitespace of line in place. */
static void chomp(char *line)
{
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' ||
                       line[len - 1] == '\t')) {
        line[--len] = '\0';
    }
}

/* The name of a "[name]" line, in place; NULL for any other line. */
static char *topic_name(char *line)
{
    size_t len = strlen(line);
    if (len < 2 || '[' != line[0] || ']' != line[len - 1]) {
        return NULL;
    }
    line[len - 1] = '\0';
    return line + 1;
}

/* Reads topic's text from fp into *text (malloc'd). Returns OPAL_SUCCESS,
 * OPAL_ERR_NOT_FOUND or OPAL_ERR_OUT_OF_RESOURCE. */
static int read_topic(FILE *fp, const char *topic, char **text)
{
    char *line = NULL;
    size_t cap = 0;
    size_t len = 0;
    char *buf = NULL;
    FILE *out = open_memstream(&buf, &len);
    if (NULL == out) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    bool inside = false, found = false, any_text = false;
    /* Blank lines are held back until a text line follows, which drops them
     * at the end of the topic; those before its first line are dropped. */
    size_t pending_blank = 0;
    while (getline(&line, &cap, fp) >= 0) {
        chomp(line);
        if ('#' == line[0]) {
            continue;
        }
        char *name = topic_name(line);
        if (NULL != name) {
            if (inside) {
                break;
            }
            inside = found = (0 == strcmp(name, topic));
            continue;
        }
        if (!inside) {
            continue;
        }
        if ('\0' == line[0]) {
            pending_blank += any_text ? 1 : 0;
            continue;
        }
        any_text = true;
        for (; pending_blank > 0; --pending_blank) {
            fputc('\n', out);
        }
        fputs(line, out);
        fputc('\n', out);
    }
    free(line);
    bool write_failed = 0 != ferror(out);
    if (0 != fclose(out) || write_failed) {
        free(buf);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (!found) {
        free(buf);
        return OPAL_ERR_NOT_FOUND;
    }
    *text = buf;
    return OPAL_SUCCESS;
}

enum length_modifier { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_J, LEN_T, LEN_BIG_L };

/* Reads up to MAX_FIELD_DIGITS digits at *p into spec; false if more. */
static bool copy_digits(const char **p, char *spec, size_t *n)
{
    size_t digits = 0;
    while (**p >= '0' && **p <= '9') {
        if (++digits > MAX_FIELD_DIGITS) {
            return false;
        }
        spec[(*n)++] = *(*p)++;
    }
    return true;
}

/* The conversion is checked against the supported list, so the format
 * handed to fprintf is one we built from known-safe pieces. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/* Formats the conversion starting at the '%' at p. Returns the position
 * after it, or NULL (nothing written) when it is not supported. */
static const char *format_conversion(FILE *out, const char *p, va_list *ap)
{
    char spec[32];
    size_t n = 0;
    const char *q = p + 1;
    spec[n++] = '%';
    while ('\0' != *q && NULL != strchr("-+ #0", *q) && n < 8) {
        spec[n++] = *q++;
    }
    if (!copy_digits(&q, spec, &n)) {
        return NULL;
    }
    if ('.' == *q) {
        spec[n++] = *q++;
        if (!copy_digits(&q, spec, &n)) {
            return NULL;
        }
    }
    enum length_modifier len = LEN_NONE;
    switch (*q) {
        case 'h':
            len = ('h' == q[1]) ? LEN_HH : LEN_H;
            break;
        case 'l':
            len = ('l' == q[1]) ? LEN_LL : LEN_L;
            break;
        case 'z':
            len = LEN_Z;
            break;
        case 'j':
            len = LEN_J;
            break;
        case 't':
            len = LEN_T;
            break;
        case 'L':
            len = LEN_BIG_L;
            break;
        default:
            break;
    }
    int len_chars = (LEN_NONE == len) ? 0 : (LEN_HH == len || LEN_LL == len) ? 2 : 1;
    for (int i = 0; i < len_chars; ++i) {
        spec[n++] = *q++;
    }
    char conv = *q;
    if ('\0' == conv) {
        return NULL;
    }
    spec[n++] = conv;
    spec[n] = '\0';

    switch (conv) {
        case 'd':
        case 'i':
            switch (len) {
                case LEN_NONE:
                case LEN_HH:
                case LEN_H:
                    fprintf(out, spec, va_arg(*ap, int));
                    break;
                case LEN_L:
                    fprintf(out, spec, va_arg(*ap, long));
                    break;
                case LEN_LL:
                    fprintf(out, spec, va_arg(*ap, long long));
                    break;
                case LEN_Z:
                    fprintf(out, spec, va_arg(*ap, ssize_t));
                    break;
                case LEN_J:
                    fprintf(out, spec, va_arg(*ap, intmax_t));
                    break;
                case LEN_T:
                    fprintf(out, spec, va_arg(*ap, ptrdiff_t));
                    break;
                default:
                    return NULL;
            }
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            switch (len) {
                case LEN_NONE:
                case LEN_HH:
                case LEN_H:
                    fprintf(out, spec, va_arg(*ap, unsigned int));
                    break;
                case LEN_L:
                    fprintf(out, spec, va_arg(*ap, unsigned long));
                    break;
                case LEN_LL:
                    fprintf(out, spec, va_arg(*ap, unsigned long long));
                    break;
                case LEN_Z:
                    fprintf(out, spec, va_arg(*ap, size_t));
                    break;
                case LEN_J:
                    fprintf(out, spec, va_arg(*ap, uintmax_t));
                    break;
                case LEN_T:
                    fprintf(out, spec, va_arg(*ap, ptrdiff_t));
                    break;
                default:
                    return NULL;
            }
            break;
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
        case 'a':
        case 'A':
            if (LEN_BIG_L == len) {
                fprintf(out, spec, va_arg(*ap, long double));
            } else if (LEN_NONE == len || LEN_L == len) {
                fprintf(out, spec, va_arg(*ap, double));
            } else {
                return NULL;
            }
            break;
        case 'c':
        case 's':
        case 'p':
            if (LEN_NONE != len) {
                return NULL;
            }
            if ('c' == conv) {
                fprintf(out, spec, va_arg(*ap, int));
            } else if ('p' == conv) {
                fprintf(out, spec, va_arg(*ap, void *));
            } else {
                const char *s = va_arg(*ap, const char *);
                fprintf(out, spec, NULL == s ? "(null)" : s);
            }
            break;
        default:
            return NULL;
    }
    return q + 1;
}

#pragma GCC diagnostic pop

/* Writes text to out with its conversions filled from ap. */
static void format_text(FILE *out, const char *text, va_list *ap)
{
    const char *p = text;
    while ('\0' != *p) {
        const char *pct = strchr(p, '%');
        if (NULL == pct) {
            fputs(p, out);
            return;
        }
        fwrite(p, 1, (size_t) (pct - p), out);
        if ('%' == pct[1]) {
            fputc('%', out);
            p = pct + 2;
            continue;
        }
        const char *next = format_conversion(out, pct, ap);
        if (NULL == next) {
            fputc('%', out);
            next = pct + 1;
        }
        p = next;
    }
}

/* Builds the message for (filename, topic) into *msg (malloc'd): the topic
 * text, or an explanation of why it could not be found. Returns
 * OPAL_SUCCESS, OPAL_ERR_NOT_FOUND (with *msg the explanation) or
 * OPAL_ERR_OUT_OF_RESOURCE (with *msg NULL). */
static int render(const char *filename, const char *topic, bool want_error_header, va_list ap,
                  char **msg)
{
    char *path = NULL, *searched = NULL, *text = NULL;
    char *buf = NULL;
    size_t buflen = 0;
    *msg = NULL;

    FILE *fp = open_help_file(filename, &path, &searched);
    bool file_found = NULL != fp;
    int rc = file_found ? read_topic(fp, topic, &text) : OPAL_ERR_NOT_FOUND;
    if (file_found) {
        fclose(fp);
    }
    if (OPAL_ERR_OUT_OF_RESOURCE == rc) {
        goto out;
    }

    FILE *out = open_memstream(&buf, &buflen);
    if (NULL == out) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    if (want_error_header) {
        fputs(SEPARATOR, out);
    }
    if (OPAL_SUCCESS == rc) {
        va_list args;
        va_copy(args, ap);
        format_text(out, text, &args);
        va_end(args);
    } else if (!file_found) {
        fprintf(out,
                "Sorry, the help message for topic [%s] cannot be shown: help file \"%s\"\n"
                "was not found. Searched: %s\n",
                topic, filename, NULL == searched ? "(out of memory)" : searched);
    } else {
        fprintf(out,
                "Sorry, the help message for topic [%s] cannot be shown: help file\n"
                "%s has no such topic.\n",
                topic, NULL == path ? filename : path);
    }
    if (want_error_header) {
        fputs(SEPARATOR, out);
    }
    bool write_failed = 0 != ferror(out);
    if (0 != fclose(out) || write_failed) {
        free(buf);
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    *msg = buf;

out:
    free(text);
    free(searched);
    free(path);
    return rc;
}

char *opal_show_help_vstring(const char *filename, const char *topic, int want_error_header,
                             va_list ap)
{
    char *msg = NULL;
    if (NULL == filename || NULL == topic) {
        return NULL;
    }
    render(filename, topic, want_error_header, ap, &msg);
    return msg;
}

char *opal_show_help_string(const char *filename, const char *topic, int want_error_header, ...)
{
    va_list ap;
    va_start(ap, want_error_header);
    char *msg = opal_show_help_vstring(filename, topic, want_error_header, ap);
    va_end(ap);
    return msg;
}

/* The caller holds shown_lock. */
static bool already_shown(const char *key)
{
    for (char **k = shown; NULL != k && NULL != *k; ++k) {
        if (0 == strcmp(*k, key)) {
            return true;
        }
    }
    return false;
}

int opal_show_vhelp(const char *filename, const char *topic, int want_error_header, va_list ap)
{
    if (NULL == filename || NULL == topic) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *key = NULL, *msg = NULL;
    if (asprintf(&key, "%s\n%s", filename, topic) < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_lock(&shown_lock);
    bool seen = already_shown(key);
    pthread_mutex_unlock(&shown_lock);
    int rc = OPAL_SUCCESS;
    if (seen) {
        goto out;
    }

    /* Rendered outside the lock (it reads files); a thread that rendered
     * the same topic meanwhile wins the check below, so it prints once. */
    rc = render(filename, topic, want_error_header, ap, &msg);
    if (OPAL_ERR_OUT_OF_RESOURCE == rc) {
        goto out;
    }
    if (OPAL_SUCCESS == rc) {
        pthread_mutex_lock(&shown_lock);
        seen = already_shown(key);
        if (!seen) {
            /* Out of memory to remember it: it is shown anyway and may
             * repeat, which beats losing an error message. */
            (void) opal_argv_append_nosize(&shown, key);
        }
        pthread_mutex_unlock(&shown_lock);
        if (seen) {
            goto out;
        }
    }
    opal_output(atomic_load_explicit(&help_output, memory_order_relaxed), "%s", msg);

out:
    free(msg);
    free(key);
    return rc;
}

int opal_show_help(const char *filename, const char *topic, int want_error_header, ...)
{
    va_list ap;
    va_start(ap, want_error_header);
    int rc = opal_show_vhelp(filename, topic, want_error_header, ap);
    va_end(ap);
    return rc;
}
