/* The component repository: finding plugins along the path, loading them
 * from the build tree, static components winning, load and version
 * failures recorded with why and printed as
 * mca_base_component_show_load_errors says, and plugins unloaded at close
 * and loaded fresh again. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_memhooks.h"
#include "test/mca/mca_base_test_support.h"
#include "test/mca/mcatest/mcatest.h"
#include "test/support/opal_test.h"

static mca_base_framework_t *const fw = &test_mcatest_base_framework;

static const mca_base_component_repository_item_t *plugin_named(const opal_list_t *plugins,
                                                                const char *name)
{
    const mca_base_component_repository_item_t *item;
    OPAL_LIST_FOREACH (item, plugins, const mca_base_component_repository_item_t) {
        if (0 == strcmp(item->ri_component, name)) {
            return item;
        }
    }
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && 0 == strcmp(s + n - m, suffix);
}

static void ignore_release(void *base, size_t size, void *ctx)
{
    (void) base;
    (void) size;
    (void) ctx;
}

START_TEST(mca_base_open_is_counted_and_registers_its_variables)
{
    mt_reset();
    mt_set("mca_base_component_path", NULL);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert(mt_var_exists("mca_base_component_path"));
    ck_assert(mt_var_exists("mca_base_component_show_load_errors"));
    ck_assert(mt_var_exists("mca_base_verbose"));
    /* This libopal's plugins first (the build tree's here, see
     * mca_base_build_tree_test), then the user's. */
    ck_assert_ptr_nonnull(mca_base_component_path);
    ck_assert(ends_with(mca_base_component_path, "/.libs:~/.opal/components"));
    ck_assert_str_eq(mca_base_component_show_load_errors, "all");
    ck_assert_int_eq(mca_base_verbose, 0);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(mca_base_component_repository_failures());
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    ck_assert_ptr_null(mca_base_component_repository_failures());
    ck_assert_int_eq(mca_base_close(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(opal_memhooks_none_reaches_the_memory_hooks)
{
    mt_reset();
    mt_set("opal_memhooks", "none");
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert(mt_var_exists("opal_memhooks"));
    ck_assert_int_eq(opal_memhooks_subscribe(ignore_release, NULL), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(opal_memhooks_why(), "MCA variable opal_memhooks"));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    mt_reset();
}
END_TEST

START_TEST(mca_base_verbose_shows_the_search)
{
    mt_reset();
    mt_use_build_plugins();
    mt_set("mca_base_verbose", "40");
    mt_capture_start();
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(mca_base_component_repository_plugins("mcatest"));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    char *out = mt_capture_end();
    char *good = mt_plugin_file("good");
    char expected[4096];
    snprintf(expected, sizeof(expected), "mca: base: found plugin %s", good);
    ck_assert_ptr_nonnull(strstr(out, "mca: base: looking for plugins in "));
    ck_assert_ptr_nonnull(strstr(out, expected));
    free(good);
    free(out);
}
END_TEST

START_TEST(build_tree_plugins_are_found)
{
    mt_reset();
    mt_use_build_plugins();
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    const opal_list_t *plugins = mca_base_component_repository_plugins("mcatest");
    ck_assert_ptr_nonnull(plugins);
    const char *names[] = {"alltypes", "badversion", "good",    "openfail",
                           "other",    "regdecline", "undefsym"};
    ck_assert_uint_eq(opal_list_get_size(plugins), sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        const mca_base_component_repository_item_t *item = plugin_named(plugins, names[i]);
        ck_assert_msg(NULL != item, "plugin %s not found", names[i]);
        char *expected = mt_plugin_file(names[i]);
        ck_assert_str_eq(item->ri_path, expected);
        ck_assert_str_eq(item->ri_framework, "mcatest");
        ck_assert_ptr_null(item->ri_loaded);
        free(expected);
    }
    /* Nothing is loaded by looking. */
    ck_assert(!mt_mapped("mca_mcatest_good.so"));
    ck_assert_ptr_nonnull(mca_base_component_repository_plugins("nosuchfw"));
    ck_assert(opal_list_is_empty(mca_base_component_repository_plugins("nosuchfw")));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(plugin_file_names_split_at_the_second_underscore)
{
    mt_reset();
    char *dir = mt_make_dir();
    char *good = mt_plugin_file("good");
    mt_link(dir, "mca_fw_comp_with_underscores.so", good);
    mt_link(dir, "mca_x_y.la", good);
    mt_link(dir, "mca_x_y.so", good);
    mt_link(dir, "mca_nounderscore.so", good);
    mt_link(dir, "mca_x_.so", good);
    mt_link(dir, "mca_x_z.so.1", good);
    mt_link(dir, "libmca_x_w.so", good);
    mt_set("mca_base_component_path", dir);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);

    const opal_list_t *fwplugins = mca_base_component_repository_plugins("fw");
    ck_assert_uint_eq(opal_list_get_size(fwplugins), 1);
    ck_assert_ptr_nonnull(plugin_named(fwplugins, "comp_with_underscores"));
    /* The .so and the .la of one plugin are one entry, named by the .so. */
    const opal_list_t *x = mca_base_component_repository_plugins("x");
    ck_assert_uint_eq(opal_list_get_size(x), 1);
    const mca_base_component_repository_item_t *y = plugin_named(x, "y");
    ck_assert_ptr_nonnull(y);
    ck_assert(ends_with(y->ri_path, "/mca_x_y.so"));
    ck_assert(opal_list_is_empty(mca_base_component_repository_plugins("nounderscore")));

    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    free(good);
    mt_remove_dir(dir);
}
END_TEST

START_TEST(first_directory_of_the_path_wins)
{
    mt_reset();
    char *first = mt_make_dir(), *second = mt_make_dir();
    char *good = mt_plugin_file("good");
    mt_link(first, "mca_mcatest_good.so", good);
    mt_link(second, "mca_mcatest_good.so", good);
    char path[8192];
    snprintf(path, sizeof(path), "/nonexistent/dir:%s:%s", first, second);
    mt_set("mca_base_component_path", path);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);

    mca_base_component_repository_item_t *item =
        mca_base_component_repository_find("mcatest", "good");
    ck_assert_ptr_nonnull(item);
    char expected[8192];
    snprintf(expected, sizeof(expected), "%s/mca_mcatest_good.so", first);
    ck_assert_str_eq(item->ri_path, expected);

    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    free(good);
    mt_remove_dir(first);
    mt_remove_dir(second);
}
END_TEST

START_TEST(tilde_in_the_path_is_home)
{
    mt_reset();
    char *home = mt_make_dir();
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char *good = mt_plugin_file("good");
    mt_link(home, "mca_mcatest_good.so", good);
    setenv("HOME", home, 1);
    mt_set("mca_base_component_path", "~");
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(mca_base_component_repository_find("mcatest", "good"));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    if (NULL != saved_home) {
        setenv("HOME", saved_home, 1);
    } else {
        unsetenv("HOME");
    }
    free(saved_home);
    free(good);
    mt_remove_dir(home);
}
END_TEST

START_TEST(path_is_scanned_again_when_it_changes)
{
    mt_reset();
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert(opal_list_is_empty(mca_base_component_repository_plugins("mcatest")));
    int index = mca_base_var_find_by_name("mca_base_component_path");
    ck_assert_int_ge(index, 0);
    ck_assert_int_eq(mca_base_var_set_value_string(index, OPAL_TEST_MCA_PLUGIN_DIRS,
                                                   MCA_BASE_VAR_SOURCE_SET, NULL),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(opal_list_get_size(mca_base_component_repository_plugins("mcatest")), 7);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(static_only_registration_loads_no_plugin)
{
    mt_reset();
    mt_use_build_plugins();
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_STATIC_ONLY), OPAL_SUCCESS);
    const char *names[] = {"alltypes", "good", "openfail", "other"};
    ck_assert_uint_eq(opal_list_get_size(&fw->framework_components), 4);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        mca_base_component_list_item_t *item = mt_component(fw, names[i]);
        ck_assert_msg(NULL != item, "%s not registered", names[i]);
        ck_assert_ptr_null(item->cli_path);
        ck_assert_ptr_null(item->cli_plugin);
    }
    /* undefsym exists only as a plugin: not even tried. */
    ck_assert_ptr_null(mt_failure(&fw->framework_failures, "undefsym", MT_ANY_STAGE));
    ck_assert(opal_list_is_empty(mca_base_component_repository_failures()));
    ck_assert(!mt_mapped("mca_mcatest_undefsym.so"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(plugins_load_from_the_build_tree)
{
    mt_reset();
    mt_use_build_plugins();
    mt_no_static_components();
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    mca_base_component_list_item_t *good = mt_component(fw, "good");
    ck_assert_ptr_nonnull(good);
    char *expected = mt_plugin_file("good");
    ck_assert_str_eq(good->cli_path, expected);
    free(expected);
    ck_assert_ptr_nonnull(good->cli_plugin);
    ck_assert(good->cli_opened);
    ck_assert(mca_base_component_repository_is_loaded("mcatest", "good"));
    ck_assert(mt_mapped("mca_mcatest_good.so"));
    /* The component is the plugin's own struct. */
    ck_assert_ptr_eq(good->cli_component, good->cli_plugin->ri_loaded);
    ck_assert_ptr_nonnull(mt_component(fw, "other"));
    ck_assert_ptr_nonnull(mt_component(fw, "alltypes"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(static_component_wins_over_its_plugin)
{
    mt_reset();
    mt_use_build_plugins();
    mt_set("mcatest_base_verbose", "10");
    mt_capture_start();
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    char *out = mt_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    mca_base_component_list_item_t *good = mt_component(fw, "good");
    ck_assert_ptr_nonnull(good);
    ck_assert_ptr_null(good->cli_path);
    ck_assert(!mca_base_component_repository_is_loaded("mcatest", "good"));
    ck_assert(!mt_mapped("mca_mcatest_good.so"));
    ck_assert_ptr_nonnull(strstr(out, "mcatest: ignoring plugin "));
    ck_assert_ptr_nonnull(strstr(out, "mca_mcatest_good.so: good is built in"));
    /* The plugin-only component still comes from its plugin (and fails). */
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "undefsym", MCA_BASE_COMPONENT_STAGE_LOAD));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(undefined_symbol_is_recorded_by_name)
{
    mt_reset();
    mt_use_build_plugins();
    mt_set("mca_base_component_show_load_errors", "none");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    const mca_base_component_failure_t *failure =
        mt_failure(mca_base_component_repository_failures(), "undefsym", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(failure);
    ck_assert_int_eq(failure->cf_stage, MCA_BASE_COMPONENT_STAGE_LOAD);
    ck_assert_str_eq(failure->cf_framework, "mcatest");
    char *expected = mt_plugin_file("undefsym");
    ck_assert_str_eq(failure->cf_path, expected);
    free(expected);
    ck_assert_msg(
        NULL != strstr(failure->cf_reason, "undefined symbol: mcatest_undefsym_missing_function"),
        "reason: %s", failure->cf_reason);
    /* The framework keeps it too, for opal_info. */
    const mca_base_component_failure_t *mine =
        mt_failure(&fw->framework_failures, "undefsym", MCA_BASE_COMPONENT_STAGE_LOAD);
    ck_assert_ptr_nonnull(mine);
    ck_assert_str_eq(mine->cf_reason, failure->cf_reason);
    ck_assert_ptr_null(mt_component(fw, "undefsym"));
    ck_assert(!mt_mapped("mca_mcatest_undefsym.so"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(plugin_without_its_component_symbol_is_refused)
{
    mt_reset();
    char *dir = mt_make_dir();
    char *good = mt_plugin_file("good");
    /* The file promises mcatest/renamed but exports mca_mcatest_good_component. */
    mt_link(dir, "mca_mcatest_renamed.so", good);
    mt_set("mca_base_component_path", dir);
    mt_set("mca_base_component_show_load_errors", "none");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    const mca_base_component_failure_t *failure =
        mt_failure(&fw->framework_failures, "renamed", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(failure);
    ck_assert_int_eq(failure->cf_stage, MCA_BASE_COMPONENT_STAGE_LOAD);
    ck_assert_msg(0 == strncmp(failure->cf_reason, "no symbol mca_mcatest_renamed_component", 39),
                  "reason: %s", failure->cf_reason);
    ck_assert_ptr_null(mt_component(fw, "renamed"));
    ck_assert(!mt_mapped("mca_mcatest_renamed.so"));
    ck_assert(!mt_mapped("mca_mcatest_good.so"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    free(good);
    mt_remove_dir(dir);
}
END_TEST

START_TEST(plugin_of_another_mca_version_is_refused_with_both_versions)
{
    mt_reset();
    mt_use_build_plugins();
    mt_no_static_components();
    mt_set("mca_base_component_show_load_errors", "none");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    const mca_base_component_failure_t *failure =
        mt_failure(&fw->framework_failures, "badversion", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(failure);
    ck_assert_int_eq(failure->cf_stage, MCA_BASE_COMPONENT_STAGE_VERSION);
    ck_assert_str_eq(failure->cf_reason, "built with MCA version 9.0.0, expected 1.0.0");
    ck_assert(ends_with(failure->cf_path, "/mca_mcatest_badversion.so"));
    ck_assert_ptr_nonnull(
        mt_failure(mca_base_component_repository_failures(), "badversion", MT_ANY_STAGE));
    /* Refused before anything in it ran, and unloaded. */
    ck_assert_ptr_null(mt_component(fw, "badversion"));
    ck_assert(!mt_mapped("mca_mcatest_badversion.so"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(static_component_of_another_mca_version_is_refused)
{
    mt_reset();
    mt_set("mca_base_component_show_load_errors", "none");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    const mca_base_component_failure_t *failure =
        mt_failure(&fw->framework_failures, "badversion", MCA_BASE_COMPONENT_STAGE_VERSION);
    ck_assert_ptr_nonnull(failure);
    ck_assert_ptr_null(failure->cf_path);
    ck_assert_str_eq(failure->cf_reason, "built with MCA version 9.0.0, expected 1.0.0");
    ck_assert_ptr_null(mt_component(fw, "badversion"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

/* A well-formed mcatest component to alter field by field. */
static mca_base_component_t sound_component(void)
{
    mca_base_component_t c = {
        MCA_MCATEST_BASE_VERSION,
        MCA_BASE_COMPONENT_NAME("sound", 1, 0, 0),
    };
    return c;
}

static void assert_refused(const mca_base_component_t *c, const char *name, const char *why)
{
    char *reason = NULL;
    ck_assert_int_eq(mca_base_component_check_version(c, fw, name, &reason),
                     OPAL_ERR_VERSION_MISMATCH);
    ck_assert_ptr_nonnull(reason);
    ck_assert_str_eq(reason, why);
    free(reason);
}

START_TEST(version_check_names_what_differs)
{
    char *reason = NULL;
    mca_base_component_t c = sound_component();
    ck_assert_int_eq(mca_base_component_check_version(&c, fw, "sound", &reason), OPAL_SUCCESS);
    ck_assert_ptr_null(reason);

    c.mca_major_version = 2;
    assert_refused(&c, NULL, "built with MCA version 2.0.0, expected 1.0.0");

    c = sound_component();
    strcpy(c.mca_type_name, "btl");
    assert_refused(&c, NULL, "built for framework btl, expected mcatest");

    c = sound_component();
    c.mca_type_major_version = 2;
    assert_refused(&c, NULL, "framework mcatest API 2.0, expected 1.0");

    c = sound_component();
    c.mca_type_minor_version = MCATEST_API_MINOR + 1;
    assert_refused(&c, NULL, "framework mcatest API 1.1, expected 1.0");

    c = sound_component();
    strcpy(c.mca_project_name, "orte");
    assert_refused(&c, NULL, "built for project orte, expected test");

    c = sound_component();
    c.mca_project_minor_version = OPAL_MINOR_VERSION + 1;
    char why[128];
    snprintf(why, sizeof(why), "built with test version %d.%d, expected %d.%d", OPAL_MAJOR_VERSION,
             OPAL_MINOR_VERSION + 1, OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION);
    assert_refused(&c, NULL, why);

    /* The release numbers do not matter; the name must match the file. */
    c = sound_component();
    c.mca_project_release_version = 99;
    c.mca_type_release_version = 99;
    ck_assert_int_eq(mca_base_component_check_version(&c, fw, NULL, &reason), OPAL_SUCCESS);
    assert_refused(&c, "loud", "calls itself sound, expected loud");
}
END_TEST

START_TEST(older_minor_interface_is_accepted)
{
    mca_base_framework_t newer = *fw;
    newer.framework_api_minor = 3;
    mca_base_component_t c = sound_component();
    char *reason = NULL;
    ck_assert_int_eq(mca_base_component_check_version(&c, &newer, NULL, &reason), OPAL_SUCCESS);
    ck_assert_ptr_null(reason);
}
END_TEST

/* Opens mcatest with the build-tree plugins and show_load_errors set to
 * value; returns what was printed. */
static char *open_with_show(const char *value)
{
    mt_reset();
    mt_use_build_plugins();
    if (NULL != value) {
        mt_set("mca_base_component_show_load_errors", value);
    }
    mt_capture_start();
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    char *out = mt_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    /* Recorded whatever is printed. */
    ck_assert_ptr_nonnull(mt_failure(mca_base_component_repository_failures(), "undefsym",
                                     MCA_BASE_COMPONENT_STAGE_LOAD));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    return out;
}

static bool printed_undefsym(const char *out)
{
    return NULL != strstr(out, "mca_mcatest_undefsym.so (mcatest/undefsym): undefined symbol: "
                               "mcatest_undefsym_missing_function");
}

START_TEST(load_errors_are_printed_by_default)
{
    char *out = open_with_show(NULL);
    ck_assert_msg(printed_undefsym(out), "printed: %s", out);
    ck_assert_ptr_nonnull(strstr(out, "mca: cannot load plugin "));
    /* A built-in component refused by the version check is shown alike. */
    ck_assert_ptr_nonnull(strstr(out, "mca: cannot use built-in component mcatest/badversion: "
                                      "built with MCA version 9.0.0, expected 1.0.0"));
    free(out);
}
END_TEST

START_TEST(load_errors_all_prints_them)
{
    char *out = open_with_show("all");
    ck_assert(printed_undefsym(out));
    free(out);
}
END_TEST

START_TEST(load_errors_none_hides_them)
{
    char *out = open_with_show("none");
    ck_assert(!printed_undefsym(out));
    ck_assert_ptr_null(strstr(out, "mca: cannot"));
    ck_assert_ptr_null(strstr(out, "badversion"));
    free(out);
}
END_TEST

START_TEST(load_errors_of_a_listed_framework_are_printed)
{
    char *out = open_with_show("btl,mcatest");
    ck_assert(printed_undefsym(out));
    free(out);
    out = open_with_show("btl,na");
    ck_assert(!printed_undefsym(out));
    free(out);
}
END_TEST

START_TEST(load_errors_of_a_negated_framework_are_hidden)
{
    char *out = open_with_show("^mcatest");
    ck_assert(!printed_undefsym(out));
    free(out);
    out = open_with_show("^btl");
    ck_assert(printed_undefsym(out));
    free(out);
    out = open_with_show("^btl,^mcatest");
    ck_assert(!printed_undefsym(out));
    ck_assert_ptr_null(strstr(out, "mca_base_component_show_load_errors="));
    free(out);
}
END_TEST

START_TEST(load_errors_of_a_listed_component_are_printed)
{
    char *out = open_with_show("mcatest/undefsym");
    ck_assert(printed_undefsym(out));
    free(out);
    out = open_with_show("mcatest/good");
    ck_assert(!printed_undefsym(out));
    free(out);
    out = open_with_show("^mcatest/undefsym");
    ck_assert(!printed_undefsym(out));
    free(out);
}
END_TEST

START_TEST(bad_show_load_errors_value_is_reported_and_shows_all)
{
    const char *bad[] = {"mcatest/", "mcatest,^btl", "a,,b", "mca_test", "mcatest/a/b", "^", "^^a"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        char *out = open_with_show(bad[i]);
        char expected[128];
        snprintf(expected, sizeof(expected), "mca_base_component_show_load_errors=\"%s\"", bad[i]);
        ck_assert_msg(NULL != strstr(out, expected), "%s not reported: %s", bad[i], out);
        ck_assert(printed_undefsym(out));
        free(out);
    }
}
END_TEST

START_TEST(a_failure_is_kept_once)
{
    mt_reset();
    mt_use_build_plugins();
    mt_set("mca_base_component_show_load_errors", "none");
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
        ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    }
    ck_assert_int_eq(mt_failure_count(mca_base_component_repository_failures(), "undefsym"), 1);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    ck_assert_ptr_null(mca_base_component_repository_failures());
}
END_TEST

START_TEST(plugins_are_unloaded_at_close_and_fresh_when_loaded_again)
{
    mt_reset();
    mt_use_build_plugins();
    mt_no_static_components();
    mt_set("mcatest", "good");
    /* Held across the framework's close so that the variables can be
     * looked at. */
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    for (int round = 0; round < 2; ++round) {
        ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
        ck_assert(mt_var_exists("mcatest_good_priority"));
        mca_base_module_t *module = NULL;
        ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_SUCCESS);
        mca_mcatest_base_module_t *m = (mca_mcatest_base_module_t *) module;
        ck_assert_int_eq(m->mcatest_whoami(), MCATEST_WHOAMI_GOOD);
        /* Its static state starts from zero each time it is loaded. */
        ck_assert_int_eq(m->mcatest_open_count(), 1);
        ck_assert(mt_mapped("mca_mcatest_good.so"));

        ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
        ck_assert(!mt_var_exists("mcatest_good_priority"));
        ck_assert(!mca_base_component_repository_is_loaded("mcatest", "good"));
        ck_assert(!mt_mapped("mca_mcatest_good.so"));
    }
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

static Suite *component_suite(void)
{
    Suite *s = suite_create("mca_base_component");
    OPAL_TEST_ADD(s, mca_base_open_is_counted_and_registers_its_variables);
    OPAL_TEST_ADD(s, opal_memhooks_none_reaches_the_memory_hooks);
    OPAL_TEST_ADD(s, mca_base_verbose_shows_the_search);
    OPAL_TEST_ADD(s, build_tree_plugins_are_found);
    OPAL_TEST_ADD(s, plugin_file_names_split_at_the_second_underscore);
    OPAL_TEST_ADD(s, first_directory_of_the_path_wins);
    OPAL_TEST_ADD(s, tilde_in_the_path_is_home);
    OPAL_TEST_ADD(s, path_is_scanned_again_when_it_changes);
    OPAL_TEST_ADD(s, static_only_registration_loads_no_plugin);
    OPAL_TEST_ADD(s, plugins_load_from_the_build_tree);
    OPAL_TEST_ADD(s, static_component_wins_over_its_plugin);
    OPAL_TEST_ADD(s, undefined_symbol_is_recorded_by_name);
    OPAL_TEST_ADD(s, plugin_without_its_component_symbol_is_refused);
    OPAL_TEST_ADD(s, plugin_of_another_mca_version_is_refused_with_both_versions);
    OPAL_TEST_ADD(s, static_component_of_another_mca_version_is_refused);
    OPAL_TEST_ADD(s, version_check_names_what_differs);
    OPAL_TEST_ADD(s, older_minor_interface_is_accepted);
    OPAL_TEST_ADD(s, load_errors_are_printed_by_default);
    OPAL_TEST_ADD(s, load_errors_all_prints_them);
    OPAL_TEST_ADD(s, load_errors_none_hides_them);
    OPAL_TEST_ADD(s, load_errors_of_a_listed_framework_are_printed);
    OPAL_TEST_ADD(s, load_errors_of_a_negated_framework_are_hidden);
    OPAL_TEST_ADD(s, load_errors_of_a_listed_component_are_printed);
    OPAL_TEST_ADD(s, bad_show_load_errors_value_is_reported_and_shows_all);
    OPAL_TEST_ADD(s, a_failure_is_kept_once);
    OPAL_TEST_ADD(s, plugins_are_unloaded_at_close_and_fresh_when_loaded_again);
    return s;
}

int main(void)
{
    return opal_test_run(component_suite());
}
