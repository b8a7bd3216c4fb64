/*
 * MCA variables: typed, documented run-time parameters of the project, its
 * frameworks and their components.
 *
 * A variable's full name is <framework>_<component>_<name> with empty parts
 * left out ("btl_sm_eager_limit", "btl_base_verbose", "btl" for the
 * selection variable of the btl framework, "mca_base_component_path").
 * It is bound to the caller's storage, which always holds the current
 * value; registration reads the value from the highest-precedence source:
 *
 *   override file > API (mca_base_var_set_value) > command line (--mca k v)
 *     > environment (OPAL_MCA_<full name>) > parameter files > default
 *
 * Parameter files are read in this order, an earlier file winning:
 * each file of $OPAL_PARAM_FILES (colon list), ~/.opal/mca-params.conf,
 * $sysconfdir/opal-mca-params.conf. The override file
 * $sysconfdir/opal-mca-params-override.conf beats everything and makes the
 * variables it sets read-only.
 *
 * Every value knows where it came from (mca_base_var_source_t, plus file and
 * line for files). Bad values are never silent: a value that does not parse
 * for the type, an enumerator or flag name that does not exist, is refused
 * with a message naming the variable, the value and its source, and the
 * variable keeps its previous value (at registration: the value of the
 * next source down, or the default). Names set in the environment, in
 * files or on the command line that match no variable are reported by
 * mca_base_var_check_unknown() with the nearest registered name. Messages
 * go to opal_output stream 0 or to mca_base_var_set_error_callback().
 *
 * Registration is under a lock and may happen from any thread; components
 * read their bound storage directly, without it.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_VAR_H
#define OPAL_MCA_BASE_MCA_BASE_VAR_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_object.h"

/* Value types. Enumerations and flag sets are MCA_BASE_VAR_TYPE_INT with an
 * enumerator attached. */
#define MCA_BASE_VAR_TYPE_TABLE(X)                                                                 \
    X(MCA_BASE_VAR_TYPE_INT, "int")                                                                \
    X(MCA_BASE_VAR_TYPE_UNSIGNED_INT, "unsigned_int")                                              \
    X(MCA_BASE_VAR_TYPE_LONG, "long")                                                              \
    X(MCA_BASE_VAR_TYPE_SIZE_T, "size_t")                                                          \
    X(MCA_BASE_VAR_TYPE_UINT64_T, "uint64_t")                                                      \
    X(MCA_BASE_VAR_TYPE_BOOL, "bool")                                                              \
    X(MCA_BASE_VAR_TYPE_DOUBLE, "double")                                                          \
    X(MCA_BASE_VAR_TYPE_STRING, "string")

/* clang-format off */
typedef enum {
#define MCA_BASE_VAR_TYPE_ENUM(name, str) name,
    MCA_BASE_VAR_TYPE_TABLE(MCA_BASE_VAR_TYPE_ENUM)
#undef MCA_BASE_VAR_TYPE_ENUM
    MCA_BASE_VAR_TYPE_MAX
} mca_base_var_type_t;
/* clang-format on */

/* The name of a type ("size_t"). */
OPAL_DECLSPEC const char *mca_base_var_type_name(mca_base_var_type_t type);

/* Where a value came from, lowest precedence first. */
#define MCA_BASE_VAR_SOURCE_TABLE(X)                                                               \
    X(MCA_BASE_VAR_SOURCE_DEFAULT, "default")                                                      \
    X(MCA_BASE_VAR_SOURCE_FILE, "file")                                                            \
    X(MCA_BASE_VAR_SOURCE_ENV, "environment")                                                      \
    X(MCA_BASE_VAR_SOURCE_COMMAND_LINE, "command line")                                            \
    X(MCA_BASE_VAR_SOURCE_SET, "API")                                                              \
    X(MCA_BASE_VAR_SOURCE_OVERRIDE, "override file")

/* clang-format off */
typedef enum {
#define MCA_BASE_VAR_SOURCE_ENUM(name, str) name,
    MCA_BASE_VAR_SOURCE_TABLE(MCA_BASE_VAR_SOURCE_ENUM)
#undef MCA_BASE_VAR_SOURCE_ENUM
    MCA_BASE_VAR_SOURCE_MAX
} mca_base_var_source_t;
/* clang-format on */

OPAL_DECLSPEC const char *mca_base_var_source_name(mca_base_var_source_t source);

/* Flags given at registration. */
typedef enum {
    MCA_BASE_VAR_FLAG_NONE = 0,
    /* Not shown by opal_info unless asked (--all). */
    MCA_BASE_VAR_FLAG_INTERNAL = 0x1,
    /* Only the default is used; setting it anywhere is an error (so is
     * MCA_BASE_VAR_SCOPE_CONSTANT). */
    MCA_BASE_VAR_FLAG_DEFAULT_ONLY = 0x2,
    /* Still works but will go away; setting it warns once. */
    MCA_BASE_VAR_FLAG_DEPRECATED = 0x4,
    /* Takes its value from the sources at registration, then cannot be
     * changed: later sets return OPAL_ERR_PERM (so does
     * MCA_BASE_VAR_SCOPE_READONLY). The override file sets it. */
    MCA_BASE_VAR_FLAG_READ_ONLY = 0x8,
    /* Internal: the variable is a synonym of another. */
    MCA_BASE_VAR_FLAG_SYNONYM = 0x10,
} mca_base_var_flag_t;

/* Who may change a variable and whether it must match across processes
 * (shown by opal_info; enforced only for CONSTANT and READ_ONLY). */
typedef enum {
    MCA_BASE_VAR_SCOPE_CONSTANT, /* never changes: a compile-time fact */
    MCA_BASE_VAR_SCOPE_READONLY, /* set before registration, then fixed */
    MCA_BASE_VAR_SCOPE_LOCAL,    /* may differ between processes */
    MCA_BASE_VAR_SCOPE_GROUP,    /* must match within a group of peers */
    MCA_BASE_VAR_SCOPE_ALL,      /* must match across the whole job */
    MCA_BASE_VAR_SCOPE_MAX
} mca_base_var_scope_t;

OPAL_DECLSPEC const char *mca_base_var_scope_name(mca_base_var_scope_t scope);

/* Info levels: 1-3 selection and verbosity (end users), 4-6 tuning
 * (application tuners), 7-9 internals (developers). */
typedef enum {
    OPAL_INFO_LVL_1 = 1,
    OPAL_INFO_LVL_2,
    OPAL_INFO_LVL_3,
    OPAL_INFO_LVL_4,
    OPAL_INFO_LVL_5,
    OPAL_INFO_LVL_6,
    OPAL_INFO_LVL_7,
    OPAL_INFO_LVL_8,
    OPAL_INFO_LVL_9,
    OPAL_INFO_LVL_MAX = OPAL_INFO_LVL_9
} mca_base_var_info_lvl_t;

/* One named value of an enumeration or one bit of a flag set. */
typedef struct mca_base_var_enum_value_t {
    int value;
    const char *string;
} mca_base_var_enum_value_t;

/*
 * An enumerator: for an enumeration, the variable holds one of the values
 * and accepts the name or the number; for a flag set, each value is a bit
 * (or a mask of bits), the variable holds their OR, and accepts a comma
 * list of names (or a number). Reference counted: the variable retains it.
 */
typedef struct mca_base_var_enum_t {
    opal_object_t super;
    char *enum_name;
    bool enum_is_flag;
    int enum_value_count;
    /* Copied at creation; strings owned by the enumerator. */
    mca_base_var_enum_value_t *enum_values;
} mca_base_var_enum_t;
OBJ_CLASS_DECLARATION(mca_base_var_enum_t);

/* Creates an enumeration from values (terminated by {0, NULL}). The caller
 * owns the returned reference. OPAL_ERR_BAD_PARAM for duplicate names. */
OPAL_DECLSPEC int mca_base_var_enum_create(const char *name,
                                           const mca_base_var_enum_value_t *values,
                                           mca_base_var_enum_t **enumerator);

/* Creates a flag set; every value must be non-zero. */
OPAL_DECLSPEC int mca_base_var_enum_create_flag(const char *name,
                                                const mca_base_var_enum_value_t *flags,
                                                mca_base_var_enum_t **enumerator);

/* Parses a name, number or (flag sets) comma list into *value. On failure
 * returns OPAL_ERR_BAD_VALUE and, if error is not NULL, a malloc'd message
 * listing the accepted names. */
OPAL_DECLSPEC int mca_base_var_enum_parse(const mca_base_var_enum_t *enumerator, const char *text,
                                          int *value, char **error);

/* The text for a value: the name (a value outside the table as its
 * number), or for a flag set the comma list of the names of its bits (bits
 * no flag names as one hex number; 0 as ""). Caller frees. */
OPAL_DECLSPEC int mca_base_var_enum_to_string(const mca_base_var_enum_t *enumerator, int value,
                                              char **text);

/* Storage a variable is bound to; the union member matches the type. */
typedef union mca_base_var_storage_t {
    int intval;
    unsigned int uintval;
    long longval;
    size_t sizetval;
    uint64_t uint64val;
    bool boolval;
    double doubleval;
    char *stringval;
} mca_base_var_storage_t;

/* A registered variable, as the query functions show it. Read-only to
 * callers. */
typedef struct mca_base_var_t {
    opal_object_t super;
    int mbv_index;
    char *mbv_project_name;
    char *mbv_framework_name;
    char *mbv_component_name;
    char *mbv_variable_name;
    char *mbv_full_name;
    char *mbv_long_name; /* <project>_<full name> */
    char *mbv_description;
    mca_base_var_type_t mbv_type;
    mca_base_var_enum_t *mbv_enumerator;
    mca_base_var_info_lvl_t mbv_info_lvl;
    mca_base_var_scope_t mbv_scope;
    uint32_t mbv_flags;
    /* The caller's storage; strings in it are owned by the variable system
     * (strdup'd), and freed when the variable is deregistered. */
    mca_base_var_storage_t *mbv_storage;
    /* The default as text (for opal_info and resets). */
    char *mbv_default_text;
    mca_base_var_source_t mbv_source;
    /* For FILE and OVERRIDE sources: which file and line; else NULL / 0. */
    char *mbv_source_file;
    int mbv_source_line;
    /* A synonym points at its variable; a variable lists its synonyms. */
    int mbv_synonym_for;
    int *mbv_synonyms;
    int mbv_synonym_count;
    /* False after deregistration (the index stays reserved). */
    bool mbv_valid;
} mca_base_var_t;
OBJ_CLASS_DECLARATION(mca_base_var_t);

/*
 * Starts the variable system: reads the environment, the override file and
 * the parameter files into pending values (nothing is applied until a
 * variable registers) and registers its own variables:
 *   mca_base_param_files          colon list of parameter files (default
 *                                 $OPAL_PARAM_FILES, ~/.opal/mca-params.conf,
 *                                 $sysconfdir/opal-mca-params.conf)
 *   mca_base_override_param_file  (default
 *                                 $sysconfdir/opal-mca-params-override.conf)
 *   mca_base_unknown_params       warn | error | ignore
 * The two file variables are taken from the environment
 * (OPAL_MCA_mca_base_param_files=...) since they say which files to read.
 * A missing file is skipped silently; syntax errors are reported with
 * file:line and the good lines still apply. Counted like opal_init_util:
 * only the first init reads, only the last finalize tears down (every
 * variable is deregistered, every pending value forgotten). Every other
 * function returns OPAL_ERR_NOT_INITIALIZED outside init/finalize.
 */
OPAL_DECLSPEC int mca_base_var_init(void);
OPAL_DECLSPEC int mca_base_var_finalize(void);

/* Records `--mca key value` pairs from a command line (keys are full names
 * or synonyms, without the OPAL_MCA_ prefix). Applies to variables already
 * registered at once, and to later ones as they register. Repeated keys:
 * the last one wins. Bad values are reported against "command line";
 * every pair is tried and the first failure returned (OPAL_ERR_BAD_VALUE,
 * OPAL_ERR_PERM for a read-only variable); OPAL_ERR_BAD_PARAM (nothing
 * recorded) for a NULL or empty key or a NULL value. */
OPAL_DECLSPEC int mca_base_var_process_cmdline(int count, char *const keys[], char *const values[]);

/*
 * Registers a variable and binds it to storage (which must hold the
 * default on entry: a string default is copied, so set the default just
 * before registering, also when registering again). The storage then
 * holds the value of the highest source; it must stay valid until the
 * variable is deregistered (or the last mca_base_var_finalize()).
 * Returns the variable's index (>= 0) or a negative error:
 * OPAL_ERR_BAD_PARAM for a bad name part (letters, digits and '_' only),
 * type, enumerator (only with MCA_BASE_VAR_TYPE_INT), info level, scope or
 * flag (MCA_BASE_VAR_FLAG_SYNONYM is not the caller's); OPAL_ERR_EXISTS
 * when the name is a synonym or was registered with another type (the
 * same registration again returns the existing index and rebinds it to the
 * new storage, re-reading its value: a plugin loaded again);
 * OPAL_ERR_NOT_INITIALIZED. project may be NULL ("opal"); framework,
 * component and name may be NULL or "" (absent) but not all three.
 * enumerator may be NULL; it is retained.
 */
OPAL_DECLSPEC int mca_base_var_register(const char *project, const char *framework,
                                        const char *component, const char *name,
                                        const char *description, mca_base_var_type_t type,
                                        mca_base_var_enum_t *enumerator, uint32_t flags,
                                        mca_base_var_info_lvl_t info_lvl,
                                        mca_base_var_scope_t scope, void *storage);

/* Shorthand for a component's variable: the component's project, framework
 * and component names come from the component struct. */
struct mca_base_component_t;
OPAL_DECLSPEC int mca_base_component_var_register(const struct mca_base_component_t *component,
                                                  const char *name, const char *description,
                                                  mca_base_var_type_t type,
                                                  mca_base_var_enum_t *enumerator, uint32_t flags,
                                                  mca_base_var_info_lvl_t info_lvl,
                                                  mca_base_var_scope_t scope, void *storage);

/* Registers another name for variable var_index; flags may be
 * MCA_BASE_VAR_FLAG_DEPRECATED (setting the synonym works but warns once,
 * naming the new name) and MCA_BASE_VAR_FLAG_INTERNAL. A value already
 * waiting under the synonym's name applies at once. Returns the synonym's
 * index (the same one when registered again for the same variable),
 * OPAL_ERR_NOT_FOUND for a bad or deregistered var_index or a synonym,
 * OPAL_ERR_EXISTS when the name belongs to another variable. */
OPAL_DECLSPEC int mca_base_var_register_synonym(int var_index, const char *project,
                                                const char *framework, const char *component,
                                                const char *name, uint32_t flags);

/* Deregisters a variable (and its synonyms; a synonym's index drops just
 * the synonym): its storage is no longer read or written, strings it
 * owned are freed (the storage's pointer is set to NULL). The index and
 * the values given for it stay, for a later registration. Used when a
 * component closes and its plugin is unloaded. OPAL_ERR_NOT_FOUND when not
 * registered. */
OPAL_DECLSPEC int mca_base_var_deregister(int var_index);

/* Deregisters every variable of a framework (component NULL: its own and
 * all its components') or of one component; project NULL matches any.
 * OPAL_ERR_BAD_PARAM without a framework. */
OPAL_DECLSPEC int mca_base_var_deregister_component(const char *project, const char *framework,
                                                    const char *component);

/* Index of a variable (or synonym) by its parts or by its full name;
 * OPAL_ERR_NOT_FOUND otherwise. */
OPAL_DECLSPEC int mca_base_var_find(const char *project, const char *framework,
                                    const char *component, const char *name);
OPAL_DECLSPEC int mca_base_var_find_by_name(const char *full_name);

/* The variable at index (synonyms resolve to themselves; see
 * mbv_synonym_for). OPAL_ERR_NOT_FOUND for a bad or deregistered index.
 * The struct stays valid until mca_base_var_finalize(); registering the
 * variable again updates it in place. Indices are handed out in
 * registration order and never reused, so walking 0 .. get_count() - 1
 * lists variables in the order their frameworks and components
 * registered them. */
OPAL_DECLSPEC int mca_base_var_get(int var_index, const mca_base_var_t **var);

/* Number of indices handed out (some may be deregistered). */
OPAL_DECLSPEC int mca_base_var_get_count(void);

/* Sets a variable from text as if from source (normally
 * MCA_BASE_VAR_SOURCE_SET; MCA_BASE_VAR_SOURCE_DEFAULT is
 * OPAL_ERR_BAD_PARAM); parses for the type, refuses read-only and
 * default-only variables (OPAL_ERR_PERM) and bad values
 * (OPAL_ERR_BAD_VALUE), reporting both with the variable's name. A value
 * from a source of lower precedence than the current one is kept (a
 * later registration of the variable sees it) but does not replace the
 * current value; that is not an error. */
OPAL_DECLSPEC int mca_base_var_set_value_string(int var_index, const char *value,
                                                mca_base_var_source_t source,
                                                const char *source_file);

/* The current value as text (enumerations by name, booleans as
 * true/false, a NULL string as ""). A synonym gives its variable's value.
 * Caller frees. */
OPAL_DECLSPEC int mca_base_var_value_string(int var_index, char **text);

/* Where the current value came from, as messages name it: "default",
 * "file /etc/x.conf:12", "environment (OPAL_MCA_btl_sm_eager_limit)",
 * "command line (--mca btl_sm_eager_limit)", "API",
 * "override file /etc/y.conf:3". Caller frees. */
OPAL_DECLSPEC int mca_base_var_source_string(int var_index, char **text);

/* Every name set in the environment, in a parameter file, in the override
 * file or on the command line that matches no registered variable is
 * reported with the nearest registered name, as mca_base_unknown_params
 * says: "warn" (default), "error" (returns OPAL_ERR_UNKNOWN_NAME) or
 * "ignore"; see mca_base_var_declare_prefix() for the names that are
 * skipped. Each name is reported once per process however often this is
 * called. Call after the frameworks have registered. */
OPAL_DECLSPEC int mca_base_var_check_unknown(void);

/* The same for the names under prefix only (the prefix itself or
 * "<prefix>_..."): mca_base_framework_register() checks its framework's
 * names with it once the framework and its components have registered. */
OPAL_DECLSPEC int mca_base_var_check_unknown_under(const char *prefix);

/* Every name set in the environment, a parameter file, the override file
 * or on the command line that matches no variable registered so far (and
 * that no launcher checked), as a NULL-terminated argv the caller frees
 * with opal_argv_free (NULL when there is none). Lets a launcher decide
 * whether there is anything to check before it registers every
 * framework. */
OPAL_DECLSPEC int mca_base_var_unknown_names(char ***names);

/* The environment variable through which a launcher that has checked the
 * job's MCA names itself (mcarun) tells its processes which names it
 * checked: a comma list, maybe empty. The processes never report those
 * again, so a misspelt name is reported once per job, not once per
 * process; nor, when it is set, a missing parameter file, which the
 * launcher reported. */
#define MCA_BASE_VAR_CHECKED_ENV "OPAL_PARAM_CHECKED"

/*
 * Which unknown names mca_base_var_check_unknown() reports. A name that
 * matches no registered variable or synonym (ever registered in this
 * process, deregistered ones included) is reported, except when it falls
 * under a declared prefix (the name equals it or starts with it and '_')
 * that no registered name falls under: the name then belongs to a
 * framework or component this process never registered (a framework the
 * program does not open, a plugin that failed to load), whose variables
 * cannot be checked here. Names under a prefix that did register (a typo
 * inside btl_sm_*) and names matching no declared prefix at all (a typo
 * of the framework itself) are reported. The framework base declares
 * every framework of the build (opal_frameworks[], orte_frameworks[]),
 * every common directory (opal_mca_common_names[]: "ofi" for ofi_*)
 * and "<fw>_<component>" for every component it could not load. Kept
 * until finalize. OPAL_ERR_BAD_PARAM for a prefix that is not a valid
 * name part.
 */
OPAL_DECLSPEC int mca_base_var_declare_prefix(const char *prefix);

/* The registered name closest to name (Damerau-Levenshtein distance,
 * case-insensitive, at most one edit per 4 characters of name, rounded up,
 * and never more than 4; ties go to the earliest registered; deprecated
 * names are never offered), or NULL when none is close enough. Caller
 * frees. */
OPAL_DECLSPEC char *mca_base_var_suggest(const char *name);

/* Optimal-string-alignment distance of a and b, case-insensitive (one
 * edit each: insert, delete, replace, swap two neighbours), or limit + 1
 * as soon as it must exceed limit: what "did you mean" measures, for
 * variable, framework and component names alike. */
OPAL_DECLSPEC int mca_base_var_distance(const char *a, const char *b, int limit);

/* What kind of message the variable system reports. */
typedef enum {
    MCA_BASE_VAR_MSG_WARNING, /* deprecated names, unknown names (warn) */
    MCA_BASE_VAR_MSG_ERROR,   /* refused values, file syntax, unknown names (error) */
} mca_base_var_msg_kind_t;

/* Receives one complete message (possibly several lines, no trailing
 * newline). Called with the variable system's lock held; it may call
 * mca_base_var functions (the lock is recursive). */
typedef void (*mca_base_var_msg_fn_t)(mca_base_var_msg_kind_t kind, const char *message, void *ctx);

/* Sends every message of the variable system (bad values, file syntax
 * errors, deprecation warnings, unknown names) to fn instead of opal_output
 * stream 0; NULL restores stream 0. Survives mca_base_var_finalize(), so
 * it may be set before mca_base_var_init() to see what init reports. The
 * texts come from help-mca-var.txt. */
OPAL_DECLSPEC void mca_base_var_set_error_callback(mca_base_var_msg_fn_t fn, void *ctx);

#endif /* OPAL_MCA_BASE_MCA_BASE_VAR_H */
