/*
 * The command-line parser the tools share (opal_info, mcarun, opal_perf).
 *
 * A tool describes its options in a table, parses argv, then asks what was
 * given. Accepted forms, for an option with long name "np", short name 'n'
 * and one argument:
 *
 *     --np 4   --np=4   -np 4   -np=4   -n 4   -n4   -n=4
 *
 * Options without arguments may be combined behind one dash (-vq for -v
 * -q); the last one of such a group may take arguments (-vn 4, -vn4). A
 * single-dash word that is a long name (-np) is that option, otherwise it
 * is a group of short options. "--" ends the options: everything after it
 * is positional. "-" alone is positional. An option with two or more
 * arguments (--mca key value) takes them from the following words only.
 *
 * A following word is not taken as an argument when it is "--" or names a
 * known option; write --opt=value to pass such a value. Options may repeat:
 * every occurrence is kept in order with its values.
 *
 * Positional arguments (words that are not options or their values) are
 * kept in order. With OPAL_CMD_LINE_STOP_AT_POSITIONAL, the first one ends
 * option parsing and it and everything after it are positional, so that
 * "mcarun -np 2 prog --prog-arg" leaves "--prog-arg" to prog.
 *
 * Parsing stops at the first error; opal_cmd_line_get_error() says which
 * word was wrong and why, suggesting the closest known option for an
 * unknown one.
 */
#ifndef OPAL_UTIL_OPAL_CMD_LINE_H
#define OPAL_UTIL_OPAL_CMD_LINE_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/class/opal_list.h"
#include "opal/class/opal_object.h"

/* One option. A table of them ends with an entry whose long_name is NULL
 * and short_name is '\0'. */
typedef struct opal_cmd_line_option_t {
    /* "np" matches --np and -np; NULL for none. Letters, digits, '-', '_'
     * and '.', not starting with '-'. */
    const char *long_name;
    /* 'n' matches -n; '\0' for none. */
    char short_name;
    /* How many words follow the option as its values: 0, 1 or more. */
    int num_args;
    /* The values' names in --help, e.g. "<key> <value>"; NULL gives one
     * "<arg>" per value. */
    const char *arg_name;
    /* What the option does, for --help. May be NULL. */
    const char *description;
} opal_cmd_line_option_t;

/* A parser: its options and the result of the last parse. The fields are
 * private; use the functions below. Create with OBJ_NEW, free with
 * OBJ_RELEASE. */
typedef struct opal_cmd_line_t {
    opal_object_t super;
    struct opal_cmd_line_entry_t *options;
    int num_options;
    struct opal_cmd_line_occurrence_t *occurrences;
    int num_occurrences;
    char **positional;
    int num_positional;
    char *error;
} opal_cmd_line_t;
OBJ_CLASS_DECLARATION(opal_cmd_line_t);

/* One "--mca key value" (or --gmca) from the command line, as collected by
 * opal_cmd_line_get_mca_params(). The strings belong to the item. */
typedef struct opal_cmd_line_mca_param_t {
    opal_list_item_t super;
    char *option; /* "mca" or "gmca": the option that gave it */
    char *key;
    char *value;
} opal_cmd_line_mca_param_t;
OBJ_CLASS_DECLARATION(opal_cmd_line_mca_param_t);

/* opal_cmd_line_parse() flags. */
#define OPAL_CMD_LINE_STOP_AT_POSITIONAL 0x1

/* Adds the options of table (copied) in order. Refuses the whole table,
 * adding nothing, with OPAL_ERR_BAD_PARAM for a bad name or a negative
 * num_args, or OPAL_ERR_EXISTS for a name already in use (in cmd or
 * earlier in table); OPAL_ERR_OUT_OF_RESOURCE when out of memory. */
OPAL_DECLSPEC int opal_cmd_line_add(opal_cmd_line_t *cmd, const opal_cmd_line_option_t *table);

/* Adds --mca <key> <value> and --gmca <key> <value> (also -mca, -gmca),
 * whose occurrences opal_cmd_line_get_mca_params() collects. Returns as
 * opal_cmd_line_add(). */
OPAL_DECLSPEC int opal_cmd_line_add_mca_options(opal_cmd_line_t *cmd);

/* Parses argv[1 .. argc-1] (argv[0] is the program name), replacing the
 * results of any earlier parse. flags: 0 or OPAL_CMD_LINE_STOP_AT_POSITIONAL.
 * Returns OPAL_SUCCESS; OPAL_ERR_UNKNOWN_NAME for an unknown option;
 * OPAL_ERR_BAD_PARAM for a missing or unexpected option value;
 * OPAL_ERR_OUT_OF_RESOURCE. The argv strings are copied. */
OPAL_DECLSPEC int opal_cmd_line_parse(opal_cmd_line_t *cmd, int argc, char *const argv[],
                                      int flags);

/* Why the last parse failed, e.g. "unknown option --verbos (did you mean
 * --verbose?)"; NULL when it succeeded. Owned by cmd. */
OPAL_DECLSPEC const char *opal_cmd_line_get_error(const opal_cmd_line_t *cmd);

/* Options are named by long name or, for one with only a short name, by
 * that letter ("np", "n"); leading dashes are ignored. An unknown name is
 * never set. */

/* True when the option was given at least once. */
OPAL_DECLSPEC bool opal_cmd_line_is_taken(const opal_cmd_line_t *cmd, const char *name);

/* How many times the option was given. */
OPAL_DECLSPEC int opal_cmd_line_get_ninsts(const opal_cmd_line_t *cmd, const char *name);

/* Value number idx of occurrence number inst (both from 0) of the option,
 * or NULL when out of range. Owned by cmd. */
OPAL_DECLSPEC const char *opal_cmd_line_get_param(const opal_cmd_line_t *cmd, const char *name,
                                                  int inst, int idx);

/* The positional arguments, NULL-terminated, owned by cmd; their number in
 * *count when count is not NULL. Never NULL after a successful parse. */
OPAL_DECLSPEC char **opal_cmd_line_get_positional(const opal_cmd_line_t *cmd, int *count);

/* Appends one opal_cmd_line_mca_param_t per --mca/--gmca occurrence to
 * params in command-line order; the caller releases them (e.g. with
 * OPAL_LIST_DESTRUCT). Returns OPAL_SUCCESS or OPAL_ERR_OUT_OF_RESOURCE
 * (params then holds those appended so far). */
OPAL_DECLSPEC int opal_cmd_line_get_mca_params(const opal_cmd_line_t *cmd, opal_list_t *params);

/* The option list for --help, in table order, one option per entry with
 * its description aligned and wrapped to width columns (<= 0: 80). The
 * caller frees it; NULL when out of memory. */
OPAL_DECLSPEC char *opal_cmd_line_get_usage_msg(const opal_cmd_line_t *cmd, int width);

#endif /* OPAL_UTIL_OPAL_CMD_LINE_H */
