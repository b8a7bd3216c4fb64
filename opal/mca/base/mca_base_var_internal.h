/*
 * What the files of the variable system share and nobody else sees.
 *
 *   mca_base_var.c         the registry: register, synonyms, deregister,
 *                          find, init/finalize, the lock
 *   mca_base_var_value.c   text <-> value for every type, applying values
 *                          with precedence, messages
 *   mca_base_var_enum.c    enumerations and flag sets
 *   mca_base_var_source.c  pending values from the environment, files,
 *                          override file, command line; unknown names
 *   mca_base_var_suggest.c nearest registered name
 *   mca_base_pvar.c        performance variables
 *
 * Lock: one recursive mutex (mca_base_var_lock) guards every structure
 * here. Public functions take it; the functions below expect it held.
 * It is recursive so that a message callback or a pvar read callback may
 * call back into the variable system.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_VAR_INTERNAL_H
#define OPAL_MCA_BASE_MCA_BASE_VAR_INTERNAL_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_pointer_array.h"
#include "opal/mca/base/mca_base_var.h"

#define MCA_BASE_VAR_HELP_FILE  "help-mca-var.txt"
#define MCA_BASE_VAR_ENV_PREFIX "OPAL_MCA_"

/* A value waiting for (or kept for) its variable. One list per source;
 * within a source a name appears at most once (see mca_base_var_pending_add). */
typedef struct mca_base_var_pending_t {
    opal_list_item_t super;
    char *name; /* as given: a variable's full name, a synonym or unknown */
    char *value;
    mca_base_var_source_t source;
    char *file; /* FILE and OVERRIDE: the file; else NULL */
    int line;
    int rank; /* FILE: the file's position in the search list, 0 first */
    bool bad; /* refused once (reported); never applied again */
    bool unknown_reported;
    bool override_reported; /* "ignored because of the override file" said */
} mca_base_var_pending_t;
/* Declared without OPAL_DECLSPEC: private classes stay unexported. */
extern opal_class_t mca_base_var_pending_t_class;

/* A variable with what callers do not see. */
typedef struct mca_base_var_priv_t {
    mca_base_var_t pub;
    /* The default as registered; a string is owned here. */
    mca_base_var_storage_t default_value;
    /* The string this system last put in the caller's storage (owned). */
    char *owned_string;
    /* The name the current value was given under (the variable's or a
     * synonym's); NULL for the default. */
    char *source_name;
    /* The flags as registered (the override file adds READ_ONLY). */
    uint32_t registered_flags;
    /* Deprecated names warn once per process. */
    bool deprecation_warned;
} mca_base_var_priv_t;
extern opal_class_t mca_base_var_priv_t_class;

typedef struct mca_base_var_state_t {
    int init_count;
    /* index -> mca_base_var_priv_t *; never shrinks before finalize. */
    opal_pointer_array_t vars;
    /* full name -> index, for variables and synonyms ever registered. */
    opal_hash_table_t names;
    /* Pending values by source (the DEFAULT slot stays empty). */
    opal_list_t pending[MCA_BASE_VAR_SOURCE_MAX];
    /* See mca_base_var_declare_prefix(). */
    char **declared_prefixes;
} mca_base_var_state_t;

extern mca_base_var_state_t mca_base_var_state;

void mca_base_var_lock(void);
void mca_base_var_unlock(void);

/* The variable (or synonym) at index, deregistered ones included; NULL
 * for an index never handed out. */
mca_base_var_priv_t *mca_base_var_lookup(int var_index);
/* The index of a full name ever registered, or OPAL_ERR_NOT_FOUND. */
int mca_base_var_lookup_name(const char *full_name);
/* The variable a synonym stands for (var itself when it is none). */
mca_base_var_priv_t *mca_base_var_resolve_synonym(mca_base_var_priv_t *var);
/* Names become parts of environment variable names: letters, digits and
 * '_' only. NULL and "" mean the part is absent (and are valid). */
bool mca_base_var_valid_part(const char *s);
/* <framework>_<component>_<name> without the absent parts; NULL when all
 * are absent, a part is invalid, or memory runs out. */
char *mca_base_var_join_name(const char *framework, const char *component, const char *name);

/* mca_base_var_value.c */

/* Parses text for var's type into *out (a string is malloc'd). On failure
 * returns OPAL_ERR_BAD_VALUE and *why (malloc'd) says what was expected. */
int mca_base_var_parse(const mca_base_var_priv_t *var, const char *text,
                       mca_base_var_storage_t *out, char **why);
/* Copies the member of type from the caller's storage (which is only as
 * large as that member) into *out; a string is not copied. */
void mca_base_var_storage_read(mca_base_var_type_t type, const void *storage,
                               mca_base_var_storage_t *out);
/* Writes value into var's storage, taking ownership of a string. */
void mca_base_var_store(mca_base_var_priv_t *var, mca_base_var_storage_t *value);
/* value as text for type (enumerations by name); malloc'd, NULL when out of
 * memory. */
char *mca_base_var_format_typed(mca_base_var_type_t type, const mca_base_var_enum_t *enumerator,
                                const mca_base_var_storage_t *value);
/* Sets var (a registered, non-synonym variable) to the default, then to the
 * best pending value of the highest source that has an acceptable one. */
void mca_base_var_resolve(mca_base_var_priv_t *var);
/* Applies a pending value that just arrived to var (registered; var may be
 * a synonym) if its source is not below the current one, with the checks
 * and messages of mca_base_var_set_value_string(). */
int mca_base_var_apply_new(mca_base_var_priv_t *var, mca_base_var_pending_t *pending);
/* "environment (OPAL_MCA_x)", "file /a/b.conf:3", ... malloc'd. */
char *mca_base_var_describe_pending(const mca_base_var_pending_t *pending);
/* Formats topic of the help file and hands it to the message callback or
 * opal_output stream 0. */
void mca_base_var_report(mca_base_var_msg_kind_t kind, const char *topic, ...);

/* mca_base_var_source.c */

int mca_base_var_source_init(void);
void mca_base_var_source_finalize(void);
/* Records a value. Within one source a later value for the same name
 * replaces the earlier, except between parameter files, where the earlier
 * file (lower rank) wins. Returns the entry kept for the name (NULL when
 * out of memory); *added is true when it holds this value. */
mca_base_var_pending_t *mca_base_var_pending_add(mca_base_var_source_t source, const char *name,
                                                 const char *value, const char *file, int line,
                                                 int rank, bool *added);
/* The pending value of source for var (not a synonym): under its own name
 * or a registered synonym's; among parameter files the earliest file wins,
 * then the variable's own name. NULL when there is none. */
mca_base_var_pending_t *mca_base_var_pending_find(const mca_base_var_priv_t *var,
                                                  mca_base_var_source_t source);

/* mca_base_pvar.c */

int mca_base_pvar_init(void);
void mca_base_pvar_finalize(void);

#endif /* OPAL_MCA_BASE_MCA_BASE_VAR_INTERNAL_H */
