/*
 * NULL-terminated string vectors ("argv"), as main() receives them. An argv
 * and every string in it are owned by whoever holds it and released with
 * opal_argv_free(). A NULL argv is a valid empty vector for every function
 * that reads one; the growing functions allocate it on first use.
 *
 * Functions returning int return OPAL_SUCCESS, OPAL_ERR_BAD_PARAM or
 * OPAL_ERR_OUT_OF_RESOURCE; on failure the argv is left as it was.
 */
#ifndef OPAL_UTIL_OPAL_ARGV_H
#define OPAL_UTIL_OPAL_ARGV_H

#include "opal/opal_config.h"

/* Appends a copy of arg to *argv and sets *argc to the new count. */
OPAL_DECLSPEC int opal_argv_append(int *argc, char ***argv, const char *arg);

/* Appends a copy of arg to *argv. */
OPAL_DECLSPEC int opal_argv_append_nosize(char ***argv, const char *arg);

/* Appends a copy of arg unless *argv already holds an equal string. */
OPAL_DECLSPEC int opal_argv_append_unique_nosize(char ***argv, const char *arg);

/* Inserts a copy of arg in front of *argv and sets *argc to the new count. */
OPAL_DECLSPEC int opal_argv_prepend(int *argc, char ***argv, const char *arg);

/* Inserts a copy of arg in front of *argv. */
OPAL_DECLSPEC int opal_argv_prepend_nosize(char ***argv, const char *arg);

/* Frees every string and the vector; NULL is ignored. */
OPAL_DECLSPEC void opal_argv_free(char **argv);

/* The number of strings before the terminating NULL; 0 for NULL. */
OPAL_DECLSPEC int opal_argv_count(char **argv);

/* Splits src at each delimiter, dropping empty fields: "a::b:" gives
 * {"a", "b"} and "" gives an empty argv. Returns a new argv, or NULL when
 * src is NULL or memory runs out. */
OPAL_DECLSPEC char **opal_argv_split(const char *src, int delimiter);

/* Splits src at each delimiter keeping empty fields: "a::b:" gives
 * {"a", "", "b", ""} and "" gives {""}, so opal_argv_join() restores src.
 * Returns a new argv, or NULL when src is NULL or memory runs out. */
OPAL_DECLSPEC char **opal_argv_split_with_empty(const char *src, int delimiter);

/* Joins the strings with delimiter between them; an empty or NULL argv
 * gives "". Returns a new string (the caller frees it), NULL when out of
 * memory. */
OPAL_DECLSPEC char *opal_argv_join(char **argv, int delimiter);

/* A deep copy of argv; a NULL argv gives NULL. NULL also when out of
 * memory: test argv before blaming memory. */
OPAL_DECLSPEC char **opal_argv_copy(char **argv);

/* Removes and frees the strings at [start, start + num) of *argv, clipped to
 * its end, and updates *argc (which may be NULL). A start at or past the end
 * removes nothing; a negative start or num is OPAL_ERR_BAD_PARAM. */
OPAL_DECLSPEC int opal_argv_delete(int *argc, char ***argv, int start, int num);

/* Inserts copies of every string of source into *target before index
 * start (at the end when start is the count). A start past the end or
 * negative is OPAL_ERR_BAD_PARAM. */
OPAL_DECLSPEC int opal_argv_insert(char ***target, int start, char **source);

#endif /* OPAL_UTIL_OPAL_ARGV_H */
