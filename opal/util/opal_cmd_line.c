#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_argv.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"

/* An option as the parser keeps it: a private copy of the caller's entry. */
struct opal_cmd_line_entry_t {
    char *long_name;
    char short_name;
    int num_args;
    char *arg_name;
    char *description;
    /* Collected by opal_cmd_line_get_mca_params(). */
    bool is_mca;
};
typedef struct opal_cmd_line_entry_t entry_t;

/* One appearance of an option on the command line. */
struct opal_cmd_line_occurrence_t {
    int option;
    char **values; /* num_args copies, NULL-terminated; NULL for none */
};
typedef struct opal_cmd_line_occurrence_t occurrence_t;

/* Unknown options longer than this get no suggestion: they are not typos. */
#define MAX_SUGGEST_LEN 64

static void free_entry(entry_t *e)
{
    free(e->long_name);
    free(e->arg_name);
    free(e->description);
}

static void reset_results(opal_cmd_line_t *cmd)
{
    for (int i = 0; i < cmd->num_occurrences; ++i) {
        opal_argv_free(cmd->occurrences[i].values);
    }
    free(cmd->occurrences);
    cmd->occurrences = NULL;
    cmd->num_occurrences = 0;
    opal_argv_free(cmd->positional);
    cmd->positional = NULL;
    cmd->num_positional = 0;
    free(cmd->error);
    cmd->error = NULL;
}

static void cmd_line_construct(opal_cmd_line_t *cmd)
{
    cmd->options = NULL;
    cmd->num_options = 0;
    cmd->occurrences = NULL;
    cmd->num_occurrences = 0;
    cmd->positional = NULL;
    cmd->num_positional = 0;
    cmd->error = NULL;
}

static void cmd_line_destruct(opal_cmd_line_t *cmd)
{
    reset_results(cmd);
    for (int i = 0; i < cmd->num_options; ++i) {
        free_entry(&cmd->options[i]);
    }
    free(cmd->options);
}

OBJ_CLASS_INSTANCE(opal_cmd_line_t, opal_object_t, cmd_line_construct, cmd_line_destruct);

static void mca_param_construct(opal_cmd_line_mca_param_t *p)
{
    p->option = NULL;
    p->key = NULL;
    p->value = NULL;
}

static void mca_param_destruct(opal_cmd_line_mca_param_t *p)
{
    free(p->option);
    free(p->key);
    free(p->value);
}

OBJ_CLASS_INSTANCE(opal_cmd_line_mca_param_t, opal_list_item_t, mca_param_construct,
                   mca_param_destruct);

/* ---- the option table ------------------------------------------------ */

static int find_long(const opal_cmd_line_t *cmd, const char *name, size_t len)
{
    for (int i = 0; i < cmd->num_options; ++i) {
        const char *ln = cmd->options[i].long_name;
        if (NULL != ln && strlen(ln) == len && 0 == strncmp(ln, name, len)) {
            return i;
        }
    }
    return -1;
}

static int find_short(const opal_cmd_line_t *cmd, char c)
{
    for (int i = 0; '\0' != c && i < cmd->num_options; ++i) {
        if (cmd->options[i].short_name == c) {
            return i;
        }
    }
    return -1;
}

static bool valid_long_name(const char *name)
{
    if ('\0' == name[0] || '-' == name[0]) {
        return false;
    }
    for (const char *p = name; '\0' != *p; ++p) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              '-' == c || '_' == c || '.' == c)) {
            return false;
        }
    }
    return true;
}

static bool valid_short_name(char c)
{
    return c > ' ' && c < 0x7f && '-' != c && '=' != c;
}

/* Checks table[0, n) against itself and against cmd's options. */
static int check_table(const opal_cmd_line_t *cmd, const opal_cmd_line_option_t *table, int n)
{
    for (int i = 0; i < n; ++i) {
        const opal_cmd_line_option_t *o = &table[i];
        if ((NULL != o->long_name && !valid_long_name(o->long_name)) ||
            ('\0' != o->short_name && !valid_short_name(o->short_name)) || o->num_args < 0) {
            return OPAL_ERR_BAD_PARAM;
        }
        if ((NULL != o->long_name && find_long(cmd, o->long_name, strlen(o->long_name)) >= 0) ||
            find_short(cmd, o->short_name) >= 0) {
            return OPAL_ERR_EXISTS;
        }
        for (int j = 0; j < i; ++j) {
            const opal_cmd_line_option_t *p = &table[j];
            if ((NULL != o->long_name && NULL != p->long_name &&
                 0 == strcmp(o->long_name, p->long_name)) ||
                ('\0' != o->short_name && o->short_name == p->short_name)) {
                return OPAL_ERR_EXISTS;
            }
        }
    }
    return OPAL_SUCCESS;
}

static char *dup_or_null(const char *s, bool *failed)
{
    char *copy = NULL;
    if (NULL != s && NULL == (copy = strdup(s))) {
        *failed = true;
    }
    return copy;
}

int opal_cmd_line_add(opal_cmd_line_t *cmd, const opal_cmd_line_option_t *table)
{
    if (NULL == cmd || NULL == table) {
        return OPAL_ERR_BAD_PARAM;
    }
    int n = 0;
    while (NULL != table[n].long_name || '\0' != table[n].short_name) {
        ++n;
    }
    int rc = check_table(cmd, table, n);
    if (OPAL_SUCCESS != rc || 0 == n) {
        return rc;
    }
    entry_t *grown = realloc(cmd->options, (size_t) (cmd->num_options + n) * sizeof(entry_t));
    if (NULL == grown) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    cmd->options = grown;
    for (int i = 0; i < n; ++i) {
        bool failed = false;
        entry_t *e = &cmd->options[cmd->num_options + i];
        e->short_name = table[i].short_name;
        e->num_args = table[i].num_args;
        e->is_mca = false;
        e->long_name = dup_or_null(table[i].long_name, &failed);
        e->arg_name = dup_or_null(table[i].arg_name, &failed);
        e->description = dup_or_null(table[i].description, &failed);
        if (failed) {
            /* Nothing is added: undo the entries copied so far. */
            for (int j = 0; j <= i; ++j) {
                free_entry(&cmd->options[cmd->num_options + j]);
            }
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    cmd->num_options += n;
    return OPAL_SUCCESS;
}

int opal_cmd_line_add_mca_options(opal_cmd_line_t *cmd)
{
    static const opal_cmd_line_option_t mca_options[] = {
        {"mca", '\0', 2, "<key> <value>",
         "Set the MCA parameter <key> to <value>; may be repeated"},
        {"gmca", '\0', 2, "<key> <value>",
         "The same as --mca (Open MPI's spelling for all the applications of a job; a job "
         "here runs one)"},
        {NULL, '\0', 0, NULL, NULL},
    };
    int rc = opal_cmd_line_add(cmd, mca_options);
    if (OPAL_SUCCESS == rc) {
        cmd->options[cmd->num_options - 2].is_mca = true;
        cmd->options[cmd->num_options - 1].is_mca = true;
    }
    return rc;
}

/* ---- parsing --------------------------------------------------------- */

/* Records why parsing failed and returns rc. */
static int fail(opal_cmd_line_t *cmd, int rc, const char *format, ...) OPAL_PRINTF_LIKE(3, 4);
static int fail(opal_cmd_line_t *cmd, int rc, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    free(cmd->error);
    if (vasprintf(&cmd->error, format, ap) < 0) {
        cmd->error = NULL;
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    }
    va_end(ap);
    return rc;
}

/* The edit distance between a[0, alen) and b, counting a swap of two
 * neighbours as one edit (the commonest typo), or SIZE_MAX when either is
 * too long to be a typo of the other. */
static size_t edit_distance(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen > MAX_SUGGEST_LEN || blen > MAX_SUGGEST_LEN) {
        return SIZE_MAX;
    }
    /* Three rows of the dynamic-programming table: i-2, i-1 and i. */
    size_t rows[3][MAX_SUGGEST_LEN + 1];
    size_t *before = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= blen; ++j) {
        prev[j] = j;
    }
    for (size_t i = 1; i <= alen; ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= blen; ++j) {
            size_t best = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (prev[j] + 1 < best) {
                best = prev[j] + 1;
            }
            if (cur[j - 1] + 1 < best) {
                best = cur[j - 1] + 1;
            }
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                before[j - 2] + 1 < best) {
                best = before[j - 2] + 1;
            }
            cur[j] = best;
        }
        size_t *recycled = before;
        before = prev;
        prev = cur;
        cur = recycled;
    }
    return prev[blen];
}

/* The long name closest to name[0, len): a prefix of exactly one option
 * ("--verb"), else the nearest within a third of the length (at least 1).
 * NULL when nothing is close. */
static const char *suggest(const opal_cmd_line_t *cmd, const char *name, size_t len)
{
    const char *prefix_of = NULL;
    int prefix_matches = 0;
    const char *best = NULL;
    size_t best_distance = len / 3 > 1 ? len / 3 : 1;
    for (int i = 0; 0 < len && i < cmd->num_options; ++i) {
        const char *ln = cmd->options[i].long_name;
        if (NULL == ln) {
            continue;
        }
        if (0 == strncmp(ln, name, len)) {
            prefix_of = ln;
            ++prefix_matches;
        }
        size_t d = edit_distance(name, len, ln);
        if (d <= best_distance && (NULL == best || d < best_distance)) {
            best = ln;
            best_distance = d;
        }
    }
    return 1 == prefix_matches ? prefix_of : best;
}

static int unknown(opal_cmd_line_t *cmd, const char *shown, int shown_len, const char *name,
                   size_t name_len)
{
    if (0 == name_len) {
        /* "-=x": the name is empty, so show the whole word. */
        shown_len = (int) strlen(shown);
    }
    const char *hint = suggest(cmd, name, name_len);
    if (NULL != hint) {
        return fail(cmd, OPAL_ERR_UNKNOWN_NAME, "unknown option %.*s (did you mean --%s?)",
                    shown_len, shown, hint);
    }
    return fail(cmd, OPAL_ERR_UNKNOWN_NAME, "unknown option %.*s", shown_len, shown);
}

/* True when word would be parsed as a known option, so it cannot be the
 * value of the option before it. */
static bool names_option(const opal_cmd_line_t *cmd, const char *word)
{
    if ('-' != word[0] || '\0' == word[1]) {
        return false;
    }
    if (0 == strcmp(word, "--")) {
        return true;
    }
    const char *name = word + ('-' == word[1] ? 2 : 1);
    if (find_long(cmd, name, strcspn(name, "=")) >= 0) {
        return true;
    }
    return '-' != word[1] && find_short(cmd, name[0]) >= 0;
}

/* Appends an occurrence of option with copies of values[0, n). */
static int record(opal_cmd_line_t *cmd, int option, char *const *values, int n)
{
    char **copies = NULL;
    for (int i = 0; i < n; ++i) {
        if (OPAL_SUCCESS != opal_argv_append_nosize(&copies, values[i])) {
            opal_argv_free(copies);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    occurrence_t *grown =
        realloc(cmd->occurrences, (size_t) (cmd->num_occurrences + 1) * sizeof(occurrence_t));
    if (NULL == grown) {
        opal_argv_free(copies);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    cmd->occurrences = grown;
    cmd->occurrences[cmd->num_occurrences++] = (occurrence_t){.option = option, .values = copies};
    return OPAL_SUCCESS;
}

static const char *plural(int n)
{
    return 1 == n ? "" : "s";
}

/* Takes option's values, attached ("--np=4", "-n4") or from the words after
 * argv[*i], and moves *i past the last word used. dashes and name spell the
 * option as the user wrote it, for messages. */
static int take_option(opal_cmd_line_t *cmd, int option, const char *dashes, const char *name,
                       const char *attached, int argc, char *const argv[], int *i)
{
    const entry_t *e = &cmd->options[option];
    int n = e->num_args;
    if (NULL != attached) {
        if (0 == n) {
            return fail(cmd, OPAL_ERR_BAD_PARAM, "option %s%s takes no argument (given \"%s\")",
                        dashes, name, argv[*i]);
        }
        if (n > 1) {
            return fail(cmd, OPAL_ERR_BAD_PARAM,
                        "option %s%s takes %d arguments, given as separate words (not \"%s\")",
                        dashes, name, n, argv[*i]);
        }
        char *value[] = {(char *) attached};
        *i += 1;
        return record(cmd, option, value, 1);
    }
    for (int k = 0; k < n; ++k) {
        int j = *i + 1 + k;
        if (j >= argc || names_option(cmd, argv[j])) {
            return fail(cmd, OPAL_ERR_BAD_PARAM, "option %s%s needs %d argument%s%s%s%s, got %d",
                        dashes, name, n, plural(n), NULL != e->arg_name ? " (" : "",
                        NULL != e->arg_name ? e->arg_name : "", NULL != e->arg_name ? ")" : "", k);
        }
    }
    int rc = record(cmd, option, &argv[*i + 1], n);
    *i += n + 1;
    return rc;
}

/* Parses the option word argv[*i] (it starts with '-' and is not "-" or
 * "--") and its values. */
static int parse_option(opal_cmd_line_t *cmd, int argc, char *const argv[], int *i)
{
    const char *arg = argv[*i];
    bool double_dash = '-' == arg[1];
    const char *dashes = double_dash ? "--" : "-";
    const char *word = arg + (double_dash ? 2 : 1);
    const char *eq = strchr(word, '=');
    size_t name_len = NULL == eq ? strlen(word) : (size_t) (eq - word);
    int shown_len = (int) (word - arg) + (int) name_len;

    int option = find_long(cmd, word, name_len);
    if (option >= 0) {
        return take_option(cmd, option, dashes, cmd->options[option].long_name,
                           NULL == eq ? NULL : eq + 1, argc, argv, i);
    }
    if (double_dash || '=' == word[0]) {
        return unknown(cmd, arg, shown_len, word, name_len);
    }

    /* A group of short options: all but the last take no argument. */
    for (const char *c = word; '\0' != *c; ++c) {
        if ('=' == *c) {
            return fail(cmd, OPAL_ERR_BAD_PARAM, "option -%c takes no argument (given \"%s\")",
                        c[-1], arg);
        }
        option = find_short(cmd, *c);
        if (option < 0) {
            if (c == word) {
                return unknown(cmd, arg, shown_len, word, name_len);
            }
            const char *hint = suggest(cmd, word, name_len);
            return fail(cmd, OPAL_ERR_UNKNOWN_NAME, "unknown option -%c in \"%s\"%s%s%s", *c, arg,
                        NULL != hint ? " (did you mean --" : "", NULL != hint ? hint : "",
                        NULL != hint ? "?)" : "");
        }
        if (cmd->options[option].num_args > 0) {
            const char *attached = '\0' == c[1] ? NULL : c + 1 + ('=' == c[1] ? 1 : 0);
            char name[2] = {*c, '\0'};
            return take_option(cmd, option, "-", name, attached, argc, argv, i);
        }
        int rc = record(cmd, option, NULL, 0);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    *i += 1;
    return OPAL_SUCCESS;
}

static int add_positional(opal_cmd_line_t *cmd, const char *arg)
{
    int rc = opal_argv_append(&cmd->num_positional, &cmd->positional, arg);
    return OPAL_SUCCESS == rc ? rc : OPAL_ERR_OUT_OF_RESOURCE;
}

int opal_cmd_line_parse(opal_cmd_line_t *cmd, int argc, char *const argv[], int flags)
{
    if (NULL == cmd || argc < 0 || (argc > 0 && NULL == argv)) {
        return OPAL_ERR_BAD_PARAM;
    }
    reset_results(cmd);
    if (NULL == (cmd->positional = calloc(1, sizeof(char *)))) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    bool options_done = false;
    int i = 1;
    while (i < argc) {
        const char *arg = argv[i];
        int rc = OPAL_SUCCESS;
        if (options_done || '-' != arg[0] || '\0' == arg[1]) {
            rc = add_positional(cmd, arg);
            options_done = options_done || (flags & OPAL_CMD_LINE_STOP_AT_POSITIONAL);
            ++i;
        } else if (0 == strcmp(arg, "--")) {
            options_done = true;
            ++i;
        } else {
            rc = parse_option(cmd, argc, argv, &i);
        }
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

const char *opal_cmd_line_get_error(const opal_cmd_line_t *cmd)
{
    return cmd->error;
}

/* ---- queries --------------------------------------------------------- */

static int resolve(const opal_cmd_line_t *cmd, const char *name)
{
    if (NULL == name) {
        return -1;
    }
    while ('-' == *name) {
        ++name;
    }
    int option = find_long(cmd, name, strlen(name));
    if (option < 0 && 1 == strlen(name)) {
        option = find_short(cmd, name[0]);
    }
    return option;
}

int opal_cmd_line_get_ninsts(const opal_cmd_line_t *cmd, const char *name)
{
    int option = resolve(cmd, name), n = 0;
    for (int i = 0; option >= 0 && i < cmd->num_occurrences; ++i) {
        n += cmd->occurrences[i].option == option ? 1 : 0;
    }
    return n;
}

bool opal_cmd_line_is_taken(const opal_cmd_line_t *cmd, const char *name)
{
    return opal_cmd_line_get_ninsts(cmd, name) > 0;
}

const char *opal_cmd_line_get_param(const opal_cmd_line_t *cmd, const char *name, int inst, int idx)
{
    int option = resolve(cmd, name);
    if (option < 0 || inst < 0 || idx < 0 || idx >= cmd->options[option].num_args) {
        return NULL;
    }
    for (int i = 0; i < cmd->num_occurrences; ++i) {
        if (cmd->occurrences[i].option == option && 0 == inst--) {
            return cmd->occurrences[i].values[idx];
        }
    }
    return NULL;
}

char **opal_cmd_line_get_positional(const opal_cmd_line_t *cmd, int *count)
{
    if (NULL != count) {
        *count = cmd->num_positional;
    }
    return cmd->positional;
}

int opal_cmd_line_get_mca_params(const opal_cmd_line_t *cmd, opal_list_t *params)
{
    for (int i = 0; i < cmd->num_occurrences; ++i) {
        const occurrence_t *occ = &cmd->occurrences[i];
        const entry_t *e = &cmd->options[occ->option];
        if (!e->is_mca) {
            continue;
        }
        opal_cmd_line_mca_param_t *p = OBJ_NEW(opal_cmd_line_mca_param_t);
        if (NULL == p) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        p->option = strdup(e->long_name);
        p->key = strdup(occ->values[0]);
        p->value = strdup(occ->values[1]);
        if (NULL == p->option || NULL == p->key || NULL == p->value) {
            OBJ_RELEASE(p);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        opal_list_append(params, &p->super);
    }
    return OPAL_SUCCESS;
}

/* ---- --help ---------------------------------------------------------- */

/* The option column of e: "  -n, --np <N>" (long-only options are indented
 * as if they had a short name, so long names line up). malloc'd. */
static char *option_column(const entry_t *e)
{
    char *args = NULL;
    if (NULL != e->arg_name) {
        args = strdup(e->arg_name);
    } else {
        char **words = NULL;
        for (int i = 0; i < e->num_args; ++i) {
            if (OPAL_SUCCESS != opal_argv_append_nosize(&words, "<arg>")) {
                opal_argv_free(words);
                return NULL;
            }
        }
        args = opal_argv_join(words, ' ');
        opal_argv_free(words);
    }
    if (NULL == args) {
        return NULL;
    }
    char shortpart[8] = "    ";
    if ('\0' != e->short_name) {
        snprintf(shortpart, sizeof(shortpart), "-%c%s", e->short_name,
                 NULL != e->long_name ? ", " : "");
    }
    char *column;
    int rc = asprintf(&column, "  %s%s%s%s%s", shortpart, NULL != e->long_name ? "--" : "",
                      NULL != e->long_name ? e->long_name : "", '\0' != args[0] ? " " : "", args);
    free(args);
    return rc < 0 ? NULL : column;
}

/* Writes text word by word from column col (where the cursor is) without
 * passing width; a word longer than a line gets a line of its own, and
 * '\n' in text starts a new line. */
static void wrap(FILE *out, const char *text, int col, int width)
{
    int pos = col;
    bool line_empty = true;
    const char *p = text;
    while ('\0' != *p) {
        if (' ' == *p) {
            ++p;
            continue;
        }
        if ('\n' == *p) {
            fprintf(out, "\n%*s", col, "");
            pos = col;
            line_empty = true;
            ++p;
            continue;
        }
        int len = (int) strcspn(p, " \n");
        if (!line_empty && pos + 1 + len > width) {
            fprintf(out, "\n%*s", col, "");
            pos = col;
            line_empty = true;
        }
        if (!line_empty) {
            fputc(' ', out);
            ++pos;
        }
        fwrite(p, 1, (size_t) len, out);
        pos += len;
        line_empty = false;
        p += len;
    }
    fputc('\n', out);
}

char *opal_cmd_line_get_usage_msg(const opal_cmd_line_t *cmd, int width)
{
    if (width <= 0) {
        width = 80;
    }
    char **columns = calloc((size_t) cmd->num_options + 1, sizeof(char *));
    if (NULL == columns) {
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = NULL;
    /* Descriptions start two columns after the widest option column, but
     * no further than half the width, so they keep room to wrap; wider
     * option columns put their description on the next line. */
    int max_col = width / 2, col = 0;
    for (int i = 0; i < cmd->num_options; ++i) {
        if (NULL == (columns[i] = option_column(&cmd->options[i]))) {
            goto out;
        }
        int w = (int) strlen(columns[i]) + 2;
        if (w > col && w <= max_col) {
            col = w;
        }
    }
    if (0 == col) {
        col = max_col;
    }
    if (NULL == (out = open_memstream(&text, &len))) {
        goto out;
    }
    for (int i = 0; i < cmd->num_options; ++i) {
        const char *desc = cmd->options[i].description;
        int w = (int) strlen(columns[i]);
        fputs(columns[i], out);
        if (NULL == desc || '\0' == desc[0]) {
            fputc('\n', out);
            continue;
        }
        if (w + 2 > col) {
            fputc('\n', out);
            w = 0;
        }
        fprintf(out, "%*s", col - w, "");
        wrap(out, desc, col, width);
    }
    bool write_failed = 0 != ferror(out);
    if (0 != fclose(out) || write_failed) {
        free(text);
        text = NULL;
    }

out:
    opal_argv_free(columns);
    return text;
}
