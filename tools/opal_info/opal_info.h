/*
 * opal_info: what this build of opal-mca holds and how it is set up --
 * package, paths, configuration, frameworks and their components, MCA
 * variables and performance variables, plugins that failed to load, and
 * which components the current environment would select.
 *
 * The tool is a function, so that the installed program passes the
 * build's frameworks (opal_frameworks[]) and a test program adds the
 * test-only ones. Every section is printed in one of three formats:
 *
 *   pretty    for people: "label: text" lines, wrapped to the terminal
 *             width when stdout is a terminal;
 *   parsable  one "key:key:...:value" line per fact (see opal_info(1));
 *   json      the same facts as one JSON document.
 *
 * Parsable and JSON output are both printed from one tree of facts that
 * the sections fill (opal_info_put), so the two always hold the same data;
 * pretty output is written as the sections go.
 */
#ifndef OPAL_TOOLS_OPAL_INFO_OPAL_INFO_H
#define OPAL_TOOLS_OPAL_INFO_OPAL_INFO_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "opal/mca/base/mca_base_framework.h"

/* Runs opal_info with argv (argv[0] is the program name) over frameworks
 * (NULL-terminated; NULL for none). Writes to stdout, errors to stderr.
 * Starts and stops the utility layer and the MCA base itself, so it may be
 * called again. Returns the exit status: 0, or 1 after an error. */
int opal_info_main(int argc, char **argv, mca_base_framework_t *const *frameworks);

typedef enum {
    OPAL_INFO_PRETTY,
    OPAL_INFO_PARSABLE,
    OPAL_INFO_JSON,
} opal_info_format_t;

/* What a fact's value is, for JSON (parsable output prints them all as
 * text). */
typedef enum {
    OPAL_INFO_STRING,
    OPAL_INFO_INT,
    OPAL_INFO_BOOL,
} opal_info_kind_t;

/* A node of the fact tree: an inner node has children, a leaf a value
 * (never both). Children keep the order in which they were first put. */
typedef struct opal_info_node_t {
    char *key;
    char *value;
    opal_info_kind_t kind;
    struct opal_info_node_t *first_child;
    struct opal_info_node_t *last_child;
    struct opal_info_node_t *next;
} opal_info_node_t;

/* The pretty output's labels are right-aligned in this many columns. */
#define OPAL_INFO_LABEL_WIDTH 24

/* One run of the tool: its options and where its output goes. */
typedef struct opal_info_t {
    FILE *out;
    opal_info_format_t format;
    /* Columns to wrap pretty output to; 0: no wrapping. */
    size_t width;
    /* Variables above this info level are hidden. */
    int level;
    /* Show variables flagged internal (--all). */
    bool show_internal;
    /* The frameworks to show (NULL-terminated, never NULL), and which of
     * them this run registered (one flag each). */
    mca_base_framework_t *const *frameworks;
    bool *registered;
    /* Parsable and JSON: the facts, printed at the end. */
    opal_info_node_t *tree;
    /* Set by a section that failed; the exit status is then 1. */
    bool failed;
} opal_info_t;

/* opal_info_output.c: formats, wrapping and escaping. */

/* The width to wrap at: 0 unless fd is a terminal; then $COLUMNS when it
 * is a number of at least 20, else the terminal's width (TIOCGWINSZ), else
 * 80. */
size_t opal_info_terminal_width(int fd);

/* text with each line broken at spaces so that it fits in columns
 * (a word longer than that stays whole on its own line); the newlines of
 * text are kept. columns 0: a copy of text. Caller frees; NULL when out of
 * memory. */
char *opal_info_wrap(const char *text, size_t columns);

/* Writes field escaped for parsable output: backslash, ':', newline,
 * carriage return and tab as \\, \:, \n, \r, \t, other control bytes as
 * \xHH. */
void opal_info_escape_parsable(FILE *out, const char *field);

/* Writes text as a JSON string (with the quotes): ", \ and control bytes
 * escaped, valid UTF-8 copied, each byte of invalid UTF-8 as U+FFFD. */
void opal_info_escape_json(FILE *out, const char *text);

/* Pretty output: label right-aligned, ": ", then text, continued (after
 * its newlines and where it is wrapped) under the text's first column.
 * An empty label prints text as a continuation of the line before. */
void opal_info_pretty(opal_info_t *info, const char *label, const char *text);
void opal_info_prettyf(opal_info_t *info, const char *label, const char *format, ...)
    OPAL_PRINTF_LIKE(3, 4);

/* Prints an error on stderr as "opal_info: <message>" and marks the run
 * failed. */
void opal_info_error(opal_info_t *info, const char *format, ...) OPAL_PRINTF_LIKE(2, 3);

/* opal_info_tree.c: the facts behind parsable and JSON output. */

#if defined(__GNUC__)
#define OPAL_INFO_SENTINEL __attribute__((sentinel))
#else
#define OPAL_INFO_SENTINEL
#endif

/* Records the string value (copied; NULL is "") under the path of keys
 * that follows it, ended by NULL: opal_info_put(info, "2.9.0",
 * "dependency", "hwloc", "version", NULL). Putting the same path again
 * replaces the value. Does nothing in pretty mode. An error (out of
 * memory) is printed and marks the run failed. */
void opal_info_put(opal_info_t *info, const char *value, ...) OPAL_INFO_SENTINEL;
/* The same for a number and a boolean (JSON numbers and true/false). The
 * boolean is an int: the parameter before "..." must not be a type that
 * is promoted (C11 7.16.1.4). */
void opal_info_put_int(opal_info_t *info, long value, ...) OPAL_INFO_SENTINEL;
void opal_info_put_bool(opal_info_t *info, int value, ...) OPAL_INFO_SENTINEL;

/* The tree itself. put returns OPAL_SUCCESS, OPAL_ERR_OUT_OF_RESOURCE, or
 * OPAL_ERR_BAD_PARAM when the path would give a leaf children (or an inner
 * node a value). An OPAL_INFO_INT or OPAL_INFO_BOOL value must be a JSON
 * number or true/false. */
opal_info_node_t *opal_info_tree_new(void);
int opal_info_tree_put(opal_info_node_t *root, opal_info_kind_t kind, const char *value,
                       const char *const *path, size_t depth);
/* One line per leaf: the escaped keys and value joined by ':'. */
void opal_info_tree_print_parsable(FILE *out, const opal_info_node_t *root);
/* The root as one JSON object, indented by two spaces per level. */
void opal_info_tree_print_json(FILE *out, const opal_info_node_t *root);
void opal_info_tree_free(opal_info_node_t *root);

/* opal_info_config.c: the package, install paths and configuration. */

/* "opal_info (opal-mca) 0.1.0" (--version). */
void opal_info_show_version(opal_info_t *info);
/* Package, version, prefix, configure command line, compiler, versions of
 * the dependencies configure found (the start of the default output). */
void opal_info_show_header(opal_info_t *info);
/* Install paths and the component path (--path). */
void opal_info_show_paths(opal_info_t *info);
/* Configure options, compiler and flags, dependencies (--config). */
void opal_info_show_config(opal_info_t *info);

/* opal_info_components.c: frameworks, components, failures, selection. */

/* The framework of info->frameworks named name, or NULL. */
mca_base_framework_t *opal_info_find_framework(const opal_info_t *info, const char *name);

/* Registers framework with every component (MCA_BASE_REGISTER_ALL) unless
 * this run did already; opal_info_close_frameworks() undoes it. Returns
 * the register's error after printing it. */
int opal_info_register_framework(opal_info_t *info, mca_base_framework_t *framework);
void opal_info_close_frameworks(opal_info_t *info);

/* Every framework (or only framework, when not NULL) with its components:
 * versions, built in or plugin, and those that declined at register.
 * component (when not NULL) limits the listing to that component. */
void opal_info_show_components(opal_info_t *info, mca_base_framework_t *framework,
                               const char *component);
/* Components that failed to load or were refused by the version check,
 * with the file and why (--show-failed). */
void opal_info_show_failed(opal_info_t *info);
/* Opens every framework as a program would and runs its selection; prints
 * what was chosen and why each other component was not (--selected). */
void opal_info_show_selected(opal_info_t *info);

/* opal_info_params.c: MCA variables and performance variables. */

/* The variables of framework fw ("mca" for the MCA base's own, "all") and
 * component comp ("base" for the framework's own, "all") up to info->level
 * (--param). The framework must be registered. */
void opal_info_show_params(opal_info_t *info, const char *fw, const char *comp);
/* Every performance variable up to info->level (--pvars). */
void opal_info_show_pvars(opal_info_t *info);

/* The level's name as the pretty output shows it: "1 user/basic" ...
 * "9 dev/all". */
const char *opal_info_level_name(int level);

#endif /* OPAL_TOOLS_OPAL_INFO_OPAL_INFO_H */
