/*
 * Performance variables: what components count and time while they run
 * (messages sent, bytes pulled, queue depth, time in progress), listed by
 * opal_info --pvars and read by tools.
 *
 * A component registers a pvar with a name (<framework>_<component>_<name>
 * like an MCA variable, in its own name space), a description, an info
 * level, a class and a type, and either binds it to storage it updates or
 * gives a callback that computes the value. The pvar system never writes
 * the component's storage: a reset records the current value as a
 * baseline, and reads of counters and timers return the growth since.
 *
 * Bound storage is an _Atomic object of the pvar's type
 * (_Atomic unsigned int, opal_atomic_uint64_t, _Atomic double) that the
 * system reads with a relaxed load. Components update it with relaxed
 * atomics (a single-threaded component may load and store relaxed, which
 * costs what a plain increment does). No ordering is needed: a pvar is a
 * statistic, not a synchronisation point.
 *
 * Registration and lookup take the variable system's lock (pvars live
 * between mca_base_var_init() and mca_base_var_finalize()); a component's
 * updates never do.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_PVAR_H
#define OPAL_MCA_BASE_MCA_BASE_PVAR_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_object.h"
#include "opal/mca/base/mca_base_var.h"

/* What a pvar measures, and so what reading and resetting mean. */
#define MCA_BASE_PVAR_CLASS_TABLE(X)                                                               \
    /* Grows only (events, bytes). Reset: counts from zero again. */                               \
    X(MCA_BASE_PVAR_CLASS_COUNTER, "counter")                                                      \
    /* Accumulated time in nanoseconds. Reset as a counter. */                                     \
    X(MCA_BASE_PVAR_CLASS_TIMER, "timer")                                                          \
    /* A current amount (queue depth, memory in use). Not resettable. */                           \
    X(MCA_BASE_PVAR_CLASS_LEVEL, "level")                                                          \
    /* The highest / lowest level seen, kept by the component. */                                  \
    X(MCA_BASE_PVAR_CLASS_HIGHWATERMARK, "high watermark")                                         \
    X(MCA_BASE_PVAR_CLASS_LOWWATERMARK, "low watermark")

/* Unformatted: clang-format takes the table expansion for a statement. */
/* clang-format off */
typedef enum {
#define MCA_BASE_PVAR_CLASS_ENUM(name, str) name,
    MCA_BASE_PVAR_CLASS_TABLE(MCA_BASE_PVAR_CLASS_ENUM)
#undef MCA_BASE_PVAR_CLASS_ENUM
    MCA_BASE_PVAR_CLASS_MAX
} mca_base_pvar_class_t;
/* clang-format on */

/* The name of a class ("counter"). */
OPAL_DECLSPEC const char *mca_base_pvar_class_name(mca_base_pvar_class_t pvar_class);

/* Flags given at registration. */
typedef enum {
    MCA_BASE_PVAR_FLAG_NONE = 0,
    /* Not shown by opal_info unless asked (--all). */
    MCA_BASE_PVAR_FLAG_INTERNAL = 0x1,
} mca_base_pvar_flag_t;

/* A value, the member matching the pvar's type: MCA_BASE_VAR_TYPE_UNSIGNED_INT,
 * MCA_BASE_VAR_TYPE_UINT64_T or MCA_BASE_VAR_TYPE_DOUBLE. */
typedef union mca_base_pvar_value_t {
    unsigned int uintval;
    uint64_t uint64val;
    double doubleval;
} mca_base_pvar_value_t;

struct mca_base_pvar_t;

/* Computes the raw value (before any reset baseline) into *value. Called
 * with the variable system's lock held. Returns OPAL_SUCCESS or an error
 * that the read passes on. */
typedef int (*mca_base_pvar_read_fn_t)(const struct mca_base_pvar_t *pvar,
                                       mca_base_pvar_value_t *value, void *ctx);

/* A registered pvar, as the query functions show it. Read-only to
 * callers. */
typedef struct mca_base_pvar_t {
    opal_object_t super;
    int pvar_index;
    char *pvar_project_name;
    char *pvar_framework_name; /* NULL when absent */
    char *pvar_component_name; /* NULL when absent */
    char *pvar_variable_name;
    char *pvar_full_name; /* <framework>_<component>_<name> */
    char *pvar_description;
    mca_base_pvar_class_t pvar_class;
    mca_base_var_type_t pvar_type;
    mca_base_var_info_lvl_t pvar_info_lvl;
    uint32_t pvar_flags;
    /* False after deregistration (the index stays reserved). */
    bool pvar_valid;
} mca_base_pvar_t;
OBJ_CLASS_DECLARATION(mca_base_pvar_t);

/*
 * Registers a pvar bound to storage (see above) or computed by read_fn
 * (exactly one of the two; ctx goes to read_fn). Returns its index (>= 0)
 * or OPAL_ERR_BAD_PARAM (bad name, class, type, info level or flags;
 * both or neither of storage and read_fn), OPAL_ERR_EXISTS (registered
 * before with another class or type), OPAL_ERR_NOT_INITIALIZED. The same
 * registration again (a plugin loaded again) returns the same index,
 * rebinds it and clears its reset baseline. project NULL means "opal".
 */
OPAL_DECLSPEC int mca_base_pvar_register(const char *project, const char *framework,
                                         const char *component, const char *name,
                                         const char *description, mca_base_pvar_class_t pvar_class,
                                         mca_base_var_type_t type, mca_base_var_info_lvl_t info_lvl,
                                         uint32_t flags, void *storage,
                                         mca_base_pvar_read_fn_t read_fn, void *ctx);

/* The same, with the names taken from the component struct. */
struct mca_base_component_t;
OPAL_DECLSPEC int mca_base_component_pvar_register(
    const struct mca_base_component_t *component, const char *name, const char *description,
    mca_base_pvar_class_t pvar_class, mca_base_var_type_t type, mca_base_var_info_lvl_t info_lvl,
    uint32_t flags, void *storage, mca_base_pvar_read_fn_t read_fn, void *ctx);

/* Stops reading the pvar's storage or calling its read_fn (call before the
 * plugin holding them is unloaded). OPAL_ERR_NOT_FOUND when not
 * registered. */
OPAL_DECLSPEC int mca_base_pvar_deregister(int pvar_index);

/* Deregisters every pvar of a framework (component NULL) or of one
 * component; project NULL matches any project. */
OPAL_DECLSPEC int mca_base_pvar_deregister_component(const char *project, const char *framework,
                                                     const char *component);

/* The index of a registered pvar by its parts or its full name, or
 * OPAL_ERR_NOT_FOUND. */
OPAL_DECLSPEC int mca_base_pvar_find(const char *project, const char *framework,
                                     const char *component, const char *name);
OPAL_DECLSPEC int mca_base_pvar_find_by_name(const char *full_name);

/* The pvar at index, valid until mca_base_var_finalize(); OPAL_ERR_NOT_FOUND
 * for a bad or deregistered index. Indices follow registration order and
 * are never reused: walk 0 .. mca_base_pvar_get_count() - 1. */
OPAL_DECLSPEC int mca_base_pvar_get(int pvar_index, const mca_base_pvar_t **pvar);
OPAL_DECLSPEC int mca_base_pvar_get_count(void);

/* Reads the value into *value (counters and timers: the growth since the
 * last reset). OPAL_ERR_NOT_FOUND for a bad index, or read_fn's error. */
OPAL_DECLSPEC int mca_base_pvar_read(int pvar_index, mca_base_pvar_value_t *value);

/* Counters and timers read from zero again. OPAL_ERR_NOT_SUPPORTED for the
 * other classes, whose value is the component's to keep. */
OPAL_DECLSPEC int mca_base_pvar_reset(int pvar_index);

/* The value as text ("1234", "0.25"), as opal_info prints it. Caller
 * frees. */
OPAL_DECLSPEC int mca_base_pvar_value_string(int pvar_index, char **text);

#endif /* OPAL_MCA_BASE_MCA_BASE_PVAR_H */
