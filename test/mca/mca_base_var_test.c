/* The MCA variable registry: registration and binding, every type's
 * parsing, enumerations and flag sets, synonyms, flags, deregistration and
 * the queries opal_info uses. */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/mca.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_var_test_support.h"

void mca_base_var_add_type_tests(Suite *s);

static int reg_flags(const char *name, mca_base_var_type_t type, mca_base_var_enum_t *e,
                     uint32_t flags, mca_base_var_scope_t scope, void *storage)
{
    return mca_base_var_register("opal", "testfw", "comp", name, "a test variable", type, e, flags,
                                 OPAL_INFO_LVL_1, scope, storage);
}

static int reg(const char *name, mca_base_var_type_t type, void *storage)
{
    return reg_flags(name, type, NULL, 0, MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static const mca_base_var_t *get(int index)
{
    const mca_base_var_t *var = NULL;
    ck_assert_int_eq(mca_base_var_get(index, &var), OPAL_SUCCESS);
    return var;
}

static int set(int index, const char *text)
{
    return mca_base_var_set_value_string(index, text, MCA_BASE_VAR_SOURCE_SET, NULL);
}

START_TEST(register_binds_storage_to_default)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 42;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    ck_assert_int_ge(index, 0);
    ck_assert_int_eq(x, 42);
    const mca_base_var_t *var = get(index);
    ck_assert_str_eq(var->mbv_full_name, "testfw_comp_x");
    ck_assert_str_eq(var->mbv_long_name, "opal_testfw_comp_x");
    ck_assert_str_eq(var->mbv_default_text, "42");
    ck_assert_int_eq(var->mbv_source, MCA_BASE_VAR_SOURCE_DEFAULT);
    ck_assert_ptr_eq(var->mbv_storage, (void *) &x);
    ck_assert_str_eq(mvt_value(index), "42");
    ck_assert_str_eq(mvt_source(index), "default");
}
END_TEST

START_TEST(full_name_leaves_out_absent_parts)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 0, b = 0, c = 0;
    int ia = mca_base_var_register(NULL, "btl", NULL, NULL, "selection", MCA_BASE_VAR_TYPE_INT,
                                   NULL, 0, OPAL_INFO_LVL_2, MCA_BASE_VAR_SCOPE_LOCAL, &a);
    int ib = mca_base_var_register(NULL, NULL, NULL, "toplevel", "d", MCA_BASE_VAR_TYPE_INT, NULL,
                                   0, OPAL_INFO_LVL_2, MCA_BASE_VAR_SCOPE_LOCAL, &b);
    int ic = mca_base_var_register(NULL, "btl", "", "x", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                   OPAL_INFO_LVL_2, MCA_BASE_VAR_SCOPE_LOCAL, &c);
    ck_assert_str_eq(get(ia)->mbv_full_name, "btl");
    ck_assert_str_eq(get(ia)->mbv_project_name, "opal");
    ck_assert_ptr_null(get(ia)->mbv_component_name);
    ck_assert_str_eq(get(ib)->mbv_full_name, "toplevel");
    ck_assert_str_eq(get(ic)->mbv_full_name, "btl_x");
}
END_TEST

START_TEST(register_refuses_bad_arguments)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int before = mca_base_var_get_count();
    int x = 0;
    bool b = false;
    mca_base_var_enum_t *e = NULL;
    static const mca_base_var_enum_value_t values[] = {{0, "a"}, {0, NULL}};
    ck_assert_int_eq(mca_base_var_enum_create("e", values, &e), OPAL_SUCCESS);

    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg("bad-name", MCA_BASE_VAR_TYPE_INT, &x), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg("bad.name", MCA_BASE_VAR_TYPE_INT, &x), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_MAX, &x), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg_flags("x", MCA_BASE_VAR_TYPE_BOOL, e, 0, MCA_BASE_VAR_SCOPE_LOCAL, &b),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg_flags("x", MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_SYNONYM,
                               MCA_BASE_VAR_SCOPE_LOCAL, &x),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg_flags("x", MCA_BASE_VAR_TYPE_INT, NULL, 0, MCA_BASE_VAR_SCOPE_MAX, &x),
                     OPAL_ERR_BAD_PARAM);
    for (int lvl = 0; lvl <= 10; lvl += 10) {
        ck_assert_int_eq(
            mca_base_var_register(NULL, "testfw", "comp", "x", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                  (mca_base_var_info_lvl_t) lvl, MCA_BASE_VAR_SCOPE_LOCAL, &x),
            OPAL_ERR_BAD_PARAM);
    }
    ck_assert_int_eq(mca_base_var_register(NULL, NULL, "", NULL, "d", MCA_BASE_VAR_TYPE_INT, NULL,
                                           0, OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &x),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_get_count(), before);
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(register_outside_init_fails)
{
    int x = 0;
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, &x), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(mca_base_var_get_count(), 0);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_ge(reg("x", MCA_BASE_VAR_TYPE_INT, &x), 0);
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, &x), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(init_is_counted)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
    /* Still up: the first finalize only dropped a count. */
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_x"), index);
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_x"), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(register_again_same_type_returns_same_index_and_rebinds)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 1, b = 2;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &a);
    int count = mca_base_var_get_count();
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, &b), index);
    ck_assert_int_eq(mca_base_var_get_count(), count);
    ck_assert_str_eq(get(index)->mbv_default_text, "2");
    ck_assert_int_eq(set(index, "7"), OPAL_SUCCESS);
    ck_assert_int_eq(b, 7);
    ck_assert_int_eq(a, 1);
}
END_TEST

START_TEST(register_again_with_other_type_fails)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 1;
    unsigned u = 1;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &a);
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_UNSIGNED_INT, &u), OPAL_ERR_EXISTS);
    ck_assert_int_eq(get(index)->mbv_type, MCA_BASE_VAR_TYPE_INT);
}
END_TEST

START_TEST(register_again_moves_string_to_new_storage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *a = "one", *b = "two";
    int index = reg("s", MCA_BASE_VAR_TYPE_STRING, &a);
    ck_assert_int_eq(reg("s", MCA_BASE_VAR_TYPE_STRING, &b), index);
    /* The first storage no longer points at a string the system owns. */
    ck_assert_ptr_null(a);
    ck_assert_str_eq(b, "two");
    /* The storage is on this stack: let go of it before returning. */
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
}
END_TEST

START_TEST(string_value_is_copied_and_owned)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    static const char literal[] = "hello";
    char *s = (char *) literal;
    int index = reg("s", MCA_BASE_VAR_TYPE_STRING, &s);
    ck_assert_ptr_ne(s, literal);
    ck_assert_str_eq(s, "hello");
    ck_assert_int_eq(set(index, "world"), OPAL_SUCCESS);
    ck_assert_str_eq(s, "world");
    ck_assert_str_eq(get(index)->mbv_default_text, "hello");
    /* The storage is on this stack: let go of it before returning. */
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
}
END_TEST

START_TEST(deregister_frees_string_and_nulls_storage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *s = "dflt";
    int index = reg("s", MCA_BASE_VAR_TYPE_STRING, &s);
    ck_assert_int_eq(set(index, "set"), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    ck_assert_ptr_null(s);
    const mca_base_var_t *var = NULL;
    ck_assert_int_eq(mca_base_var_get(index, &var), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_s"), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(deregister_stops_writing_storage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 1;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    x = 5;
    ck_assert_int_eq(set(index, "9"), OPAL_ERR_NOT_FOUND);
    char *keys[] = {"testfw_comp_x"}, *values[] = {"8"};
    ck_assert_int_eq(mca_base_var_process_cmdline(1, keys, values), OPAL_SUCCESS);
    ck_assert_int_eq(x, 5);
}
END_TEST

START_TEST(finalize_frees_strings_and_nulls_storage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *s = "dflt";
    reg("s", MCA_BASE_VAR_TYPE_STRING, &s);
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(register_after_deregister_gets_pending_value_again)
{
    mvt_setenv("testfw_comp_x", "9");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 1, b = 3;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &a);
    ck_assert_int_eq(a, 9);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    /* A plugin loaded again binds new storage to the same variable. */
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, &b), index);
    ck_assert_int_eq(b, 9);
    ck_assert_str_eq(mvt_source(index), "environment (OPAL_MCA_testfw_comp_x)");
}
END_TEST

START_TEST(api_value_survives_reregistration)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 1, b = 1;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &a);
    ck_assert_int_eq(set(index, "11"), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, &b), index);
    ck_assert_int_eq(b, 11);
    ck_assert_int_eq(get(index)->mbv_source, MCA_BASE_VAR_SOURCE_SET);
}
END_TEST

START_TEST(deregister_component_touches_only_that_component)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 0, b = 0, c = 0, d = 0;
    int ia = mca_base_var_register(NULL, "fw", "one", "a", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                   OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &a);
    int ib = mca_base_var_register(NULL, "fw", "two", "b", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                   OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &b);
    int ic = mca_base_var_register(NULL, "fw", NULL, "c", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                   OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &c);
    int id = mca_base_var_register(NULL, "other", "one", "d", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                   OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &d);
    const mca_base_var_t *var;
    ck_assert_int_eq(mca_base_var_deregister_component(NULL, "fw", "one"), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_get(ia, &var), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_get(ib, &var), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_get(ic, &var), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_deregister_component(NULL, "fw", NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_get(ib, &var), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_get(ic, &var), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_get(id, &var), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_deregister_component(NULL, NULL, NULL), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(synonym_sets_its_variable)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    int syn = mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old", 0);
    ck_assert_int_ge(syn, 0);
    ck_assert_int_ne(syn, index);
    ck_assert_int_eq(set(syn, "5"), OPAL_SUCCESS);
    ck_assert_int_eq(x, 5);
    ck_assert_str_eq(mvt_value(syn), "5");
    const mca_base_var_t *s = get(syn), *v = get(index);
    ck_assert(0 != (s->mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM));
    ck_assert_int_eq(s->mbv_synonym_for, index);
    ck_assert_int_eq(v->mbv_synonym_count, 1);
    ck_assert_int_eq(v->mbv_synonyms[0], syn);
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_old"), syn);
    ck_assert_int_eq(mvt_warning_count(), 0);
}
END_TEST

START_TEST(synonym_takes_pending_value)
{
    mvt_setenv("testfw_comp_old", "7");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    ck_assert_int_eq(x, 0);
    /* Registered after its variable: the value waiting under it applies. */
    mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old", 0);
    ck_assert_int_eq(x, 7);
    ck_assert_str_eq(mvt_source(index), "environment (OPAL_MCA_testfw_comp_old)");
}
END_TEST

START_TEST(deprecated_synonym_warns_once_naming_new_name)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    int syn = mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old",
                                            MCA_BASE_VAR_FLAG_DEPRECATED);
    ck_assert_int_eq(set(syn, "5"), OPAL_SUCCESS);
    ck_assert_int_eq(set(syn, "6"), OPAL_SUCCESS);
    ck_assert_int_eq(x, 6);
    ck_assert_int_eq(mvt_warning_count(), 1);
    MVT_ASSERT_MESSAGE("testfw_comp_old", "deprecated", "use testfw_comp_x instead");
    /* The new name never warns. */
    ck_assert_int_eq(set(index, "7"), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 1);
}
END_TEST

START_TEST(deprecated_variable_warns_once)
{
    mvt_setenv("testfw_comp_x", "3");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg_flags("x", MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_DEPRECATED,
                          MCA_BASE_VAR_SCOPE_LOCAL, &x);
    ck_assert_int_eq(x, 3);
    ck_assert_int_eq(set(index, "4"), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_warning_count(), 1);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "OPAL_MCA_testfw_comp_x", "deprecated");
}
END_TEST

START_TEST(synonym_registration_errors)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0, y = 0;
    int ix = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    int iy = reg("y", MCA_BASE_VAR_TYPE_INT, &y);
    ck_assert_int_eq(mca_base_var_register_synonym(ix, "opal", "testfw", "comp", "y", 0),
                     OPAL_ERR_EXISTS);
    int syn = mca_base_var_register_synonym(ix, "opal", "testfw", "comp", "old", 0);
    ck_assert_int_eq(mca_base_var_register_synonym(iy, "opal", "testfw", "comp", "old", 0),
                     OPAL_ERR_EXISTS);
    ck_assert_int_eq(mca_base_var_register_synonym(ix, "opal", "testfw", "comp", "old", 0), syn);
    ck_assert_int_eq(mca_base_var_register_synonym(syn, "opal", "testfw", "comp", "o2", 0),
                     OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_register_synonym(999, "opal", "testfw", "comp", "o3", 0),
                     OPAL_ERR_NOT_FOUND);
    /* A variable cannot be registered under a synonym's name. */
    ck_assert_int_eq(reg("old", MCA_BASE_VAR_TYPE_INT, &y), OPAL_ERR_EXISTS);
}
END_TEST

START_TEST(last_api_set_wins_across_synonyms_after_reregistration)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 0, b = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &a);
    int syn = mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old", 0);
    ck_assert_int_eq(set(syn, "5"), OPAL_SUCCESS);
    ck_assert_int_eq(set(index, "6"), OPAL_SUCCESS);
    ck_assert_int_eq(set(syn, "7"), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(reg("x", MCA_BASE_VAR_TYPE_INT, &b), index);
    ck_assert_int_eq(mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old", 0), syn);
    ck_assert_int_eq(b, 7);
}
END_TEST

START_TEST(deregistering_variable_deregisters_synonyms)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old", 0);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_old"), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(default_only_refuses_every_setting)
{
    mvt_setenv("testfw_comp_x", "5");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 1;
    int index = reg_flags("x", MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_DEFAULT_ONLY,
                          MCA_BASE_VAR_SCOPE_LOCAL, &x);
    ck_assert_int_eq(x, 1);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "default value", "\"5\"", "OPAL_MCA_testfw_comp_x");
    ck_assert_int_eq(set(index, "6"), OPAL_ERR_PERM);
    ck_assert_int_eq(x, 1);
    ck_assert_int_eq(mvt_error_count(), 2);
}
END_TEST

START_TEST(constant_scope_refuses_every_setting)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 1;
    int index = reg_flags("x", MCA_BASE_VAR_TYPE_INT, NULL, 0, MCA_BASE_VAR_SCOPE_CONSTANT, &x);
    ck_assert_int_eq(set(index, "6"), OPAL_ERR_PERM);
    ck_assert_int_eq(x, 1);
}
END_TEST

START_TEST(read_only_takes_startup_value_then_refuses_set)
{
    mvt_setenv("testfw_comp_x", "5");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 1;
    int index = reg_flags("x", MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_READ_ONLY,
                          MCA_BASE_VAR_SCOPE_LOCAL, &x);
    ck_assert_int_eq(x, 5);
    ck_assert_int_eq(set(index, "6"), OPAL_ERR_PERM);
    ck_assert_int_eq(x, 5);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "read-only", "\"6\"", "API");
}
END_TEST

START_TEST(find_by_parts_and_by_name)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    ck_assert_int_eq(mca_base_var_find("opal", "testfw", "comp", "x"), index);
    ck_assert_int_eq(mca_base_var_find(NULL, "testfw", "comp", "x"), index);
    ck_assert_int_eq(mca_base_var_find("orte", "testfw", "comp", "x"), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_find(NULL, "testfw", "comp", "nope"), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_x"), index);
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp"), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(indices_follow_registration_order)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int base = mca_base_var_get_count(), v[3] = {0};
    static const char *const names[] = {"zeta", "alpha", "mid"};
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(reg(names[i], MCA_BASE_VAR_TYPE_INT, &v[i]), base + i);
    }
    ck_assert_int_eq(mca_base_var_get_count(), base + 3);
    for (int i = 0; i < 3; ++i) {
        ck_assert_str_eq(get(base + i)->mbv_variable_name, names[i]);
    }
    const mca_base_var_t *var;
    ck_assert_int_eq(mca_base_var_get(base + 3, &var), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_var_get(-1, &var), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(component_var_register_takes_names_from_component)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    static const mca_base_component_t component = {
        .mca_project_name = "test",
        .mca_type_name = "mcatest",
        .mca_component_name = "good",
    };
    int prio = 10;
    int index =
        mca_base_component_var_register(&component, "priority", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                                        OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_LOCAL, &prio);
    ck_assert_str_eq(get(index)->mbv_full_name, "mcatest_good_priority");
    ck_assert_str_eq(get(index)->mbv_project_name, "test");
    ck_assert_str_eq(get(index)->mbv_component_name, "good");
}
END_TEST

START_TEST(type_source_and_scope_names)
{
    ck_assert_str_eq(mca_base_var_type_name(MCA_BASE_VAR_TYPE_SIZE_T), "size_t");
    ck_assert_str_eq(mca_base_var_type_name(MCA_BASE_VAR_TYPE_MAX), "unknown");
    ck_assert_str_eq(mca_base_var_source_name(MCA_BASE_VAR_SOURCE_ENV), "environment");
    ck_assert_str_eq(mca_base_var_source_name(MCA_BASE_VAR_SOURCE_OVERRIDE), "override file");
    ck_assert_str_eq(mca_base_var_scope_name(MCA_BASE_VAR_SCOPE_ALL), "all");
    ck_assert_str_eq(mca_base_var_scope_name(MCA_BASE_VAR_SCOPE_MAX), "unknown");
}
END_TEST

START_TEST(messages_without_callback_go_to_stderr)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    mca_base_var_set_error_callback(NULL, NULL);
    char path[512];
    snprintf(path, sizeof(path), "%s/stderr.txt", mvt_tmpdir());
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600), saved = dup(2);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    int rc = set(index, "bogus");
    dup2(saved, 2);
    close(saved);
    close(fd);
    ck_assert_int_eq(rc, OPAL_ERR_BAD_VALUE);
    char buf[1024] = {0};
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    ck_assert_uint_gt(n, 0);
    ck_assert_ptr_nonnull(strstr(buf, "testfw_comp_x"));
    ck_assert_ptr_nonnull(strstr(buf, "\"bogus\""));
}
END_TEST

#define THREADS    4
#define PER_THREAD 50

static void *register_many(void *arg)
{
    int t = (int) (intptr_t) arg;
    static int storage[THREADS][PER_THREAD];
    for (int i = 0; i < PER_THREAD; ++i) {
        char name[32];
        snprintf(name, sizeof(name), "t%d_v%d", t, i);
        int index = reg(name, MCA_BASE_VAR_TYPE_INT, &storage[t][i]);
        char full[64];
        snprintf(full, sizeof(full), "testfw_comp_%s", name);
        if (mca_base_var_find_by_name(full) != index) {
            return (void *) 1;
        }
    }
    return NULL;
}

START_TEST(registrations_from_threads_get_distinct_indices)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int base = mca_base_var_get_count();
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        ck_assert_int_eq(pthread_create(&threads[t], NULL, register_many, (void *) (intptr_t) t),
                         0);
    }
    for (int t = 0; t < THREADS; ++t) {
        void *result;
        pthread_join(threads[t], &result);
        ck_assert_ptr_null(result);
    }
    ck_assert_int_eq(mca_base_var_get_count(), base + THREADS * PER_THREAD);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mca_base_var");
    MVT_ADD(s, register_binds_storage_to_default);
    MVT_ADD(s, full_name_leaves_out_absent_parts);
    MVT_ADD(s, register_refuses_bad_arguments);
    MVT_ADD(s, register_outside_init_fails);
    MVT_ADD(s, init_is_counted);
    MVT_ADD(s, register_again_same_type_returns_same_index_and_rebinds);
    MVT_ADD(s, register_again_with_other_type_fails);
    MVT_ADD(s, register_again_moves_string_to_new_storage);
    MVT_ADD(s, string_value_is_copied_and_owned);
    MVT_ADD(s, deregister_frees_string_and_nulls_storage);
    MVT_ADD(s, deregister_stops_writing_storage);
    MVT_ADD(s, finalize_frees_strings_and_nulls_storage);
    MVT_ADD(s, register_after_deregister_gets_pending_value_again);
    MVT_ADD(s, api_value_survives_reregistration);
    MVT_ADD(s, deregister_component_touches_only_that_component);
    mca_base_var_add_type_tests(s);
    MVT_ADD(s, synonym_sets_its_variable);
    MVT_ADD(s, synonym_takes_pending_value);
    MVT_ADD(s, deprecated_synonym_warns_once_naming_new_name);
    MVT_ADD(s, deprecated_variable_warns_once);
    MVT_ADD(s, synonym_registration_errors);
    MVT_ADD(s, last_api_set_wins_across_synonyms_after_reregistration);
    MVT_ADD(s, deregistering_variable_deregisters_synonyms);
    MVT_ADD(s, default_only_refuses_every_setting);
    MVT_ADD(s, constant_scope_refuses_every_setting);
    MVT_ADD(s, read_only_takes_startup_value_then_refuses_set);
    MVT_ADD(s, find_by_parts_and_by_name);
    MVT_ADD(s, indices_follow_registration_order);
    MVT_ADD(s, component_var_register_takes_names_from_component);
    MVT_ADD(s, type_source_and_scope_names);
    MVT_ADD(s, messages_without_callback_go_to_stderr);
    MVT_ADD(s, registrations_from_threads_get_distinct_indices);
    return opal_test_run(s);
}
