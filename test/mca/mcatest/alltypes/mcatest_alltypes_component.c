/* mcatest/alltypes: registers a variable of every type, an enumeration, a
 * flag set and a deprecated synonym, so that the tests can watch a
 * component's variables appear at register and disappear at close. */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

static int alltypes_register(void);
static int alltypes_query(mca_base_module_t **module, int *priority);

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_alltypes_component = {
    .base_version =
        {
            MCA_MCATEST_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("alltypes", 1, 0, 0),
            .mca_register_component_params = alltypes_register,
            .mca_query_component = alltypes_query,
        },
};

static int int_value;
static unsigned int unsigned_value;
static long long_value;
static size_t size_value;
static uint64_t uint64_value;
static bool bool_value;
static double double_value;
static char *string_value;
static int enum_value;
static int flags_value;

static const mca_base_var_enum_value_t colours[] = {
    {0, "red"},
    {1, "green"},
    {2, "blue"},
    {0, NULL},
};

static const mca_base_var_enum_value_t features[] = {
    {0x1, "fast"},
    {0x2, "safe"},
    {0x4, "cheap"},
    {0, NULL},
};

static int alltypes_whoami(void)
{
    return MCATEST_WHOAMI_ALLTYPES;
}

static mca_mcatest_base_module_t alltypes_module = {.mcatest_whoami = alltypes_whoami};

static int reg(const char *name, mca_base_var_type_t type, mca_base_var_enum_t *enumerator,
               void *storage)
{
    return mca_base_component_var_register(
        &mca_mcatest_alltypes_component.base_version, name, "A variable of mcatest/alltypes", type,
        enumerator, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int register_enums(void)
{
    mca_base_var_enum_t *colour = NULL, *feature = NULL;
    int rc = mca_base_var_enum_create("mcatest_alltypes_colour", colours, &colour);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    enum_value = 1;
    rc = reg("enum", MCA_BASE_VAR_TYPE_INT, colour, &enum_value);
    /* The variable holds its own reference. */
    OBJ_RELEASE(colour);
    if (rc < 0) {
        return rc;
    }
    rc = mca_base_var_enum_create_flag("mcatest_alltypes_features", features, &feature);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    flags_value = 0x1 | 0x2;
    rc = reg("flags", MCA_BASE_VAR_TYPE_INT, feature, &flags_value);
    OBJ_RELEASE(feature);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static int alltypes_register(void)
{
    int_value = -7;
    unsigned_value = 7;
    long_value = -70000L;
    size_value = 4096;
    uint64_value = UINT64_C(1) << 40;
    bool_value = true;
    double_value = 2.5;
    string_value = (char *) "hello";
    struct {
        const char *name;
        mca_base_var_type_t type;
        void *storage;
    } vars[] = {
        {"int", MCA_BASE_VAR_TYPE_INT, &int_value},
        {"unsigned", MCA_BASE_VAR_TYPE_UNSIGNED_INT, &unsigned_value},
        {"long", MCA_BASE_VAR_TYPE_LONG, &long_value},
        {"size", MCA_BASE_VAR_TYPE_SIZE_T, &size_value},
        {"uint64", MCA_BASE_VAR_TYPE_UINT64_T, &uint64_value},
        {"bool", MCA_BASE_VAR_TYPE_BOOL, &bool_value},
        {"double", MCA_BASE_VAR_TYPE_DOUBLE, &double_value},
        {"string", MCA_BASE_VAR_TYPE_STRING, &string_value},
    };
    int int_index = -1;
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) {
        int index = reg(vars[i].name, vars[i].type, NULL, vars[i].storage);
        if (index < 0) {
            return index;
        }
        if (0 == i) {
            int_index = index;
        }
    }
    int rc = mca_base_var_register_synonym(int_index, "test", "mcatest", "alltypes", "old_int",
                                           MCA_BASE_VAR_FLAG_DEPRECATED);
    if (rc < 0) {
        return rc;
    }
    return register_enums();
}

static int alltypes_query(mca_base_module_t **module, int *priority)
{
    *module = &alltypes_module.super;
    *priority = 10;
    return OPAL_SUCCESS;
}
