/* opal_info as a user runs it: what the default output lists, --param and
 * --level, --show-failed, --selected, --pvars, --path, --config, --mca,
 * and how bad options are refused. The tool runs in this process over the
 * mcatest framework (static components, or the build tree's plugins). */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/mca/mcatest/base/base.h"
#include "test/support/opal_test.h"
#include "test/tools/opal_info_test_support.h"

#define assert_has(text, needle)                                                                   \
    ck_assert_msg(NULL != strstr((text), (needle)), "missing \"%s\" in:\n%s", (needle), (text))
#define assert_lacks(text, needle)                                                                 \
    ck_assert_msg(NULL == strstr((text), (needle)), "unexpected \"%s\" in:\n%s", (needle), (text))

START_TEST(default_output_lists_package_compiler_and_dependencies)
{
    oi_reset();
    /* mcatest/badversion is built in, and its refusal printed otherwise. */
    oi_set("mca_base_component_show_load_errors", "none");
    oi_run_t run = oi_run(NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "Package: opal-mca " OPAL_VERSION);
    assert_has(run.out, "Prefix: ");
    assert_has(run.out, "Configure command line: ");
    assert_has(run.out, "C compiler: ");
    assert_has(run.out, "C compiler version: ");
    assert_has(run.out, "hwloc version: ");
    assert_has(run.out, "libfabric version: ");
    assert_has(run.out, "rdma-core version: ");
    /* Sections asked for by their own option stay out. */
    assert_lacks(run.out, "parameter \"");
    assert_lacks(run.out, "Pkglibdir");
    ck_assert_str_eq(run.err, "");
    oi_run_free(&run);
}
END_TEST

START_TEST(default_output_lists_built_in_components_with_versions)
{
    oi_reset();
    oi_run_t run = oi_run(NULL);
    ck_assert_int_eq(run.status, 0);
    const char *names[] = {"good", "other", "alltypes", "openfail"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        char line[256];
        snprintf(line, sizeof(line),
                 "MCA mcatest: %s (MCA v1.0.0, API v1.0.0, Component v1.0.0, built in)\n",
                 names[i]);
        assert_has(run.out, line);
    }
    assert_has(run.out, "MCA mcatest: regdecline (built in) declined at register: no mcatest "
                        "device on this machine");
    /* badversion is refused by the version check: a failure, not listed. */
    assert_has(run.out, "MCA mcatest: 1 component(s) failed to load: opal_info --show-failed");
    assert_lacks(run.out, "badversion (MCA");
    oi_run_free(&run);
}
END_TEST

START_TEST(default_output_lists_plugins_with_their_path)
{
    oi_reset();
    oi_plugins_only();
    oi_run_t run = oi_run(NULL);
    ck_assert_int_eq(run.status, 0);
    char *good = oi_lines_starting(run.out, "             MCA mcatest: good ");
    assert_has(good, "(MCA v1.0.0, API v1.0.0, Component v1.0.0, plugin /");
    assert_has(good, "/test/mca/mcatest/good/.libs/mca_mcatest_good.so)");
    free(good);
    /* undefsym and badversion failed to load; the failures are printed as
     * mca_base_component_show_load_errors says (all, by default). */
    assert_has(run.out, "2 component(s) failed to load: opal_info --show-failed");
    assert_has(run.err, "mcatest_undefsym_missing_function");
    oi_run_free(&run);
}
END_TEST

START_TEST(no_frameworks_lists_none)
{
    oi_reset();
    static mca_base_framework_t *const none[] = {NULL};
    oi_run_t run = oi_run_with(none, NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "MCA frameworks: none in this build");
    oi_run_free(&run);
}
END_TEST

START_TEST(param_level_9_shows_every_alltypes_variable)
{
    oi_reset();
    oi_run_t run = oi_run("--param", "mcatest", "alltypes", "--level", "9", NULL);
    ck_assert_int_eq(run.status, 0);
    const char *vars[][2] = {
        {"int", "-7"},          {"unsigned", "7"},           {"long", "-70000"},
        {"size", "4096"},       {"uint64", "1099511627776"}, {"bool", "true"},
        {"double", "2.5"},      {"string", "hello"},         {"enum", "green"},
        {"flags", "fast,safe"},
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) {
        char text[256];
        snprintf(text, sizeof(text),
                 "MCA mcatest alltypes: parameter \"mcatest_alltypes_%s\" (current value: \"%s\", "
                 "data source: default, level: 9 dev/all, type: ",
                 vars[i][0], vars[i][1]);
        assert_has(run.out, text);
    }
    assert_has(run.out, "synonyms: mcatest_alltypes_old_int (deprecated))");
    assert_has(run.out, "Valid values: 0:\"red\", 1:\"green\", 2:\"blue\"");
    assert_has(run.out, "Valid flags: 0x1:\"fast\", 0x2:\"safe\", 0x4:\"cheap\"");
    assert_has(run.out, "A variable of mcatest/alltypes");
    /* The component comes first, and the others are left out. */
    assert_has(run.out, "MCA mcatest: alltypes (MCA v1.0.0");
    assert_lacks(run.out, "mcatest_good_priority");
    oi_run_free(&run);
}
END_TEST

START_TEST(variables_above_the_level_are_hidden)
{
    oi_reset();
    /* The selection variable "mcatest" is level 2, mcatest_base_verbose 3,
     * the components' 9. */
    oi_run_t run = oi_run("--param", "mcatest", "all", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_lacks(run.out, "parameter \"");
    assert_has(run.out, "MCA mcatest: no variables up to level 1 (--level 9 shows them all)");
    oi_run_free(&run);
    run = oi_run("--param", "mcatest", "all", "--level", "2", NULL);
    assert_has(run.out, "MCA mcatest: parameter \"mcatest\" (current value: \"\"");
    assert_lacks(run.out, "mcatest_base_verbose");
    oi_run_free(&run);
    run = oi_run("--param", "mcatest", "base", "--level", "3", NULL);
    assert_has(run.out, "parameter \"mcatest_base_verbose\"");
    assert_lacks(run.out, "mcatest_good_priority");
    oi_run_free(&run);
}
END_TEST

START_TEST(param_mca_lists_the_base_variables)
{
    oi_reset();
    static mca_base_framework_t *const none[] = {NULL};
    oi_run_t run = oi_run_with(none, "--param", "mca", "all", "--level", "9", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "MCA mca base: parameter \"mca_base_component_path\"");
    assert_has(run.out, "MCA mca base: parameter \"mca_base_param_files\"");
    assert_has(run.out, "MCA mca base: parameter \"mca_base_verbose\"");
    oi_run_free(&run);
}
END_TEST

START_TEST(all_shows_everything_at_level_9)
{
    oi_reset();
    oi_run_t run = oi_run("--all", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "Package: opal-mca");
    assert_has(run.out, "Pkglibdir: ");
    assert_has(run.out, "CFLAGS: ");
    assert_has(run.out, "MCA mcatest: good (MCA v1.0.0");
    assert_has(run.out, "parameter \"mca_base_component_path\"");
    assert_has(run.out, "parameter \"mcatest_alltypes_flags\"");
    assert_has(run.out, "parameter \"mcatest_base_knob\"");
    assert_has(run.out, "badversion (built in) failed at version check");
    oi_run_free(&run);
}
END_TEST

START_TEST(internal_variables_show_with_all_only)
{
    oi_reset();
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    int secret = 3;
    int index = mca_base_var_register("opal", "mca", "base", "test_secret", "An internal knob",
                                      MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_INTERNAL,
                                      OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &secret);
    ck_assert_int_ge(index, 0);
    static mca_base_framework_t *const none[] = {NULL};
    oi_run_t run = oi_run_with(none, "--param", "mca", "all", "--level", "9", NULL);
    assert_lacks(run.out, "mca_base_test_secret");
    oi_run_free(&run);
    run = oi_run_with(none, "--all", NULL);
    assert_has(run.out, "parameter \"mca_base_test_secret\" (current value: \"3\"");
    assert_has(run.out, ", internal)");
    assert_has(run.out, "parameter \"mca_base_verbose\""); /* level 3 */
    oi_run_free(&run);
    /* --level still limits --all. */
    run = oi_run_with(none, "--all", "--level", "1", NULL);
    assert_has(run.out, "parameter \"mca_base_test_secret\"");
    assert_lacks(run.out, "parameter \"mca_base_verbose\"");
    oi_run_free(&run);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}
END_TEST

START_TEST(mca_option_sets_a_value_from_the_command_line)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest_good_priority", "7", "--param", "mcatest", "good",
                          "--level", "9", "--parsable", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "mca:mcatest:good:param:mcatest_good_priority:value:7\n");
    assert_has(run.out, "mca:mcatest:good:param:mcatest_good_priority:source:command line\n");
    assert_has(run.out, "mca:mcatest:good:param:mcatest_good_priority:default:50\n");
    oi_run_free(&run);
    run = oi_run("--mca", "mcatest_good_priority", "7", "--param", "mcatest", "good", "--level",
                 "9", NULL);
    assert_has(run.out, "data source: command line (--mca mcatest_good_priority), default: "
                        "\"50\"");
    oi_run_free(&run);
}
END_TEST

START_TEST(mca_option_with_an_unknown_name_is_reported_with_the_nearest)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest_good_priorty", "7", NULL);
    assert_has(run.err, "mcatest_good_priorty");
    assert_has(run.err, "mcatest_good_priority");
    oi_run_free(&run);
}
END_TEST

START_TEST(mca_option_with_a_bad_value_names_the_variable)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest_alltypes_enum", "purple", "--param", "mcatest",
                          "alltypes", "--level", "9", NULL);
    assert_has(run.err, "mcatest_alltypes_enum");
    assert_has(run.err, "purple");
    assert_has(run.out, "parameter \"mcatest_alltypes_enum\" (current value: \"green\", data "
                        "source: default");
    oi_run_free(&run);
}
END_TEST

START_TEST(show_failed_lists_undefined_symbol_and_bad_version)
{
    oi_reset();
    oi_plugins_only();
    oi_set("mca_base_component_show_load_errors", "none");
    oi_run_t run = oi_run("--show-failed", NULL);
    ck_assert_int_eq(run.status, 0);
    char *undefsym = oi_lines_starting(run.out, "             MCA mcatest: undefsym ");
    assert_has(undefsym, "/test/mca/mcatest/undefsym/.libs/mca_mcatest_undefsym.so) failed at "
                         "load: ");
    assert_has(undefsym, "undefined symbol: mcatest_undefsym_missing_function");
    free(undefsym);
    char *badversion = oi_lines_starting(run.out, "             MCA mcatest: badversion ");
    assert_has(badversion, "/mca_mcatest_badversion.so) failed at version check: ");
    assert_has(badversion, "9.0.0");
    assert_has(badversion, "1.0.0");
    free(badversion);
    /* Only failures: a component that loaded is not listed. */
    assert_lacks(run.out, "good");
    ck_assert_str_eq(run.err, "");
    oi_run_free(&run);

    run = oi_run("--show-failed", "--parsable", NULL);
    assert_has(run.out, "mca:mcatest:undefsym:status:failed\n");
    assert_has(run.out, "mca:mcatest:undefsym:stage:load\n");
    assert_has(run.out, "mca:mcatest:undefsym:build:plugin\n");
    assert_has(run.out, "mca:mcatest:badversion:stage:version check\n");
    char *reason = oi_lines_starting(run.out, "mca:mcatest:badversion:reason:");
    assert_has(reason, "9.0.0");
    free(reason);
    oi_run_free(&run);
}
END_TEST

START_TEST(show_failed_says_none_when_everything_loads)
{
    oi_reset();
    oi_set("mcatest", "good");
    static mca_base_framework_t *const none[] = {NULL};
    oi_run_t run = oi_run_with(none, "--show-failed", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "Failed components: none");
    oi_run_free(&run);
}
END_TEST

START_TEST(selected_shows_the_winner_and_why_the_others_lost)
{
    oi_reset();
    oi_run_t run = oi_run("--selected", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "MCA mcatest: selected good (priority 50)\n");
    assert_has(run.out, "not selected: other (priority): priority 30 < 50 of good\n");
    assert_has(run.out, "not selected: alltypes (priority): priority 10 < 50 of good\n");
    assert_has(run.out, "not selected: regdecline (register): no mcatest device on this machine");
    assert_has(run.out, "not selected: openfail (open): ");
    assert_has(run.out, "not selected: badversion (version check): ");
    /* Only the selection: no header, no listing. */
    assert_lacks(run.out, "Package:");
    oi_run_free(&run);
}
END_TEST

START_TEST(selected_follows_the_selection_variable)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest", "other", "--selected", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "MCA mcatest: selected other (priority 30)\n");
    assert_has(run.out, "not selected: good (selection): not included by mcatest=other\n");
    oi_run_free(&run);
    run = oi_run("--selected", "--parsable", NULL);
    assert_has(run.out, "framework:mcatest:selected:good\n");
    assert_has(run.out, "mca:mcatest:good:selected:true\n");
    assert_has(run.out, "mca:mcatest:good:priority:50\n");
    assert_has(run.out, "mca:mcatest:other:selected:false\n");
    assert_has(run.out, "mca:mcatest:other:not_selected:stage:priority\n");
    oi_run_free(&run);
}
END_TEST

START_TEST(selected_in_a_multi_select_framework_keeps_every_module)
{
    oi_reset();
    test_mcatest_base_framework.framework_flags |= MCA_BASE_FRAMEWORK_FLAG_MULTI_SELECT;
    oi_run_t run = oi_run("--selected", NULL);
    ck_assert_int_eq(run.status, 0);
    /* Highest priority first. */
    const char *good = strstr(run.out, "MCA mcatest: selected good (priority 50)\n");
    const char *other = strstr(run.out, "MCA mcatest: selected other (priority 30)\n");
    const char *alltypes = strstr(run.out, "MCA mcatest: selected alltypes (priority 10)\n");
    ck_assert_msg(NULL != good && NULL != other && NULL != alltypes, "%s", run.out);
    ck_assert(good < other);
    ck_assert(other < alltypes);
    assert_has(run.out, "not selected: openfail (open): ");
    assert_lacks(run.out, "not selected: other");
    oi_run_free(&run);
    run = oi_run("--selected", "--parsable", NULL);
    assert_has(run.out, "framework:mcatest:select:multi\n");
    assert_has(run.out, "framework:mcatest:selected:good,other,alltypes\n");
    oi_run_free(&run);
}
END_TEST

START_TEST(selected_with_a_bad_selection_fails_and_says_why)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest", "nosuch", "--selected", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "nosuch");
    assert_has(run.err, "opal_info: cannot open framework mcatest");
    oi_run_free(&run);
}
END_TEST

START_TEST(pvars_lists_registered_performance_variables)
{
    oi_reset();
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    static opal_atomic_uint64_t sent = 12;
    int index = mca_base_pvar_register("test", "mcatest", "good", "sent", "Messages sent",
                                       MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T,
                                       OPAL_INFO_LVL_4, MCA_BASE_PVAR_FLAG_NONE, (void *) &sent,
                                       NULL, NULL);
    ck_assert_int_ge(index, 0);
    oi_run_t run = oi_run("--pvars", NULL);
    assert_has(run.out, "Performance variables: none up to level 1");
    oi_run_free(&run);
    run = oi_run("--pvars", "--level", "4", NULL);
    assert_has(run.out, "MCA mcatest good: performance variable \"mcatest_good_sent\" (value: 12, "
                        "class: counter, type: uint64_t, level: 4 tuner/basic)");
    assert_has(run.out, "Messages sent");
    oi_run_free(&run);
    run = oi_run("--pvars", "--level", "4", "--parsable", NULL);
    assert_has(run.out, "mca:mcatest:good:pvar:mcatest_good_sent:value:12\n");
    assert_has(run.out, "mca:mcatest:good:pvar:mcatest_good_sent:class:counter\n");
    oi_run_free(&run);
    ck_assert_int_eq(mca_base_pvar_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}
END_TEST

START_TEST(path_lists_install_directories_and_component_path)
{
    oi_reset();
    oi_set("mca_base_component_path", "/nowhere/a:/nowhere/b");
    oi_run_t run = oi_run("--path", NULL);
    ck_assert_int_eq(run.status, 0);
    const char *labels[] = {
        "Prefix: ", "Bindir: ", "Libdir: ", "Pkglibdir: ", "Pkgdatadir: ", "Sysconfdir: "};
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); ++i) {
        assert_has(run.out, labels[i]);
    }
    assert_has(run.out, "Component path: /nowhere/a:/nowhere/b\n");
    assert_lacks(run.out, "MCA mcatest");
    oi_run_free(&run);
    run = oi_run("--path", "--parsable", NULL);
    assert_has(run.out, "path:component_path:/nowhere/a\\:/nowhere/b\n");
    assert_has(run.out, "path:pkglibdir:");
    oi_run_free(&run);
}
END_TEST

START_TEST(config_lists_compiler_flags_and_dependencies)
{
    oi_reset();
    oi_run_t run = oi_run("--config", "--parsable", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "config:compiler:command:");
    assert_has(run.out, "config:cflags:");
    assert_has(run.out, "config:debug:");
    assert_has(run.out, "dependency:hwloc:found:");
    assert_has(run.out, "dependency:libfabric:found:");
    assert_has(run.out, "dependency:rdma-core:found:");
    assert_has(run.out, "dependency:pmix:found:");
    oi_run_free(&run);
}
END_TEST

START_TEST(version_prints_the_version_without_the_mca_base)
{
    oi_reset();
    /* Opening the MCA base would report this file's syntax errors. */
    char file[4096];
    snprintf(file, sizeof(file), "%s/mca/data/syntax_errors.conf", opal_test_srcdir());
    oi_set("mca_base_param_files", file);
    oi_run_t run = oi_run("--version", NULL);
    ck_assert_int_eq(run.status, 0);
    ck_assert_str_eq(run.out, "opal_info (opal-mca) " OPAL_VERSION "\n");
    ck_assert_str_eq(run.err, "");
    oi_run_free(&run);
    /* The file is read otherwise: the test above means something. */
    run = oi_run("--path", NULL);
    ck_assert_str_ne(run.err, "");
    oi_run_free(&run);
}
END_TEST

START_TEST(help_lists_every_option)
{
    oi_reset();
    oi_run_t run = oi_run("--help", NULL);
    ck_assert_int_eq(run.status, 0);
    const char *options[] = {"--param", "--level",       "--all",      "--parsable",
                             "--json",  "--show-failed", "--selected", "--pvars",
                             "--path",  "--config",      "--version",  "--mca"};
    for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); ++i) {
        assert_has(run.out, options[i]);
    }
    oi_run_free(&run);
}
END_TEST

START_TEST(unknown_option_fails_with_a_suggestion)
{
    oi_reset();
    oi_run_t run = oi_run("--paramm", "mcatest", "all", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "opal_info: ");
    assert_has(run.err, "--paramm");
    assert_has(run.err, "--param");
    assert_has(run.err, "opal_info --help");
    ck_assert_str_eq(run.out, "");
    oi_run_free(&run);
}
END_TEST

START_TEST(stray_argument_fails)
{
    oi_reset();
    oi_run_t run = oi_run("mcatest", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "unexpected argument 'mcatest'");
    oi_run_free(&run);
}
END_TEST

START_TEST(bad_level_fails)
{
    oi_reset();
    const char *levels[] = {"0", "10", "x", "", "3x"};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); ++i) {
        oi_run_t run = oi_run("--param", "mcatest", "all", "--level", levels[i], NULL);
        ck_assert_int_eq(run.status, 1);
        assert_has(run.err, "the level is a number from 1 to 9");
        ck_assert_str_eq(run.out, "");
        oi_run_free(&run);
    }
}
END_TEST

START_TEST(parsable_and_json_together_fail)
{
    oi_reset();
    oi_run_t run = oi_run("--parsable", "--json", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "--parsable and --json cannot be used together");
    oi_run_free(&run);
}
END_TEST

START_TEST(largest_sizes_show_as_unlimited_in_pretty_output_only)
{
    oi_reset();
    oi_set("mcatest_alltypes_size", "18446744073709551615");
    oi_set("mcatest_alltypes_uint64", "18446744073709551615");
    oi_run_t run = oi_run("--param", "mcatest", "alltypes", "--level", "9", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out, "parameter \"mcatest_alltypes_size\" (current value: \"unlimited\"");
    assert_has(run.out, "parameter \"mcatest_alltypes_uint64\" (current value: \"unlimited\"");
    /* One less is a number like any other. */
    oi_run_free(&run);
    oi_set("mcatest_alltypes_size", "18446744073709551614");
    run = oi_run("--param", "mcatest", "alltypes", "--level", "9", NULL);
    assert_has(run.out, "(current value: \"18446744073709551614\"");
    oi_run_free(&run);
    oi_set("mcatest_alltypes_size", "18446744073709551615");
    run = oi_run("--param", "mcatest", "alltypes", "--level", "9", "--parsable", NULL);
    assert_has(run.out, ":param:mcatest_alltypes_size:value:18446744073709551615\n");
    oi_run_free(&run);
}
END_TEST

START_TEST(param_with_an_unknown_framework_suggests_the_nearest)
{
    oi_reset();
    oi_run_t run = oi_run("--param", "mcatset", "all", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "no framework 'mcatset' (did you mean 'mcatest'?)");
    assert_has(run.err, "known: all, mca, mcatest");
    ck_assert_str_eq(run.out, "");
    oi_run_free(&run);
}
END_TEST

START_TEST(param_with_an_unknown_component_suggests_the_nearest)
{
    oi_reset();
    oi_run_t run = oi_run("--param", "mcatest", "godo", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "framework mcatest has no component 'godo' (did you mean 'good'?)");
    oi_run_free(&run);
}
END_TEST

START_TEST(param_with_a_declined_component_says_why)
{
    oi_reset();
    oi_run_t run = oi_run("--param", "mcatest", "regdecline", NULL);
    ck_assert_int_eq(run.status, 1);
    assert_has(run.err, "component regdecline is not available (register: no mcatest device on "
                        "this machine)");
    oi_run_free(&run);
}
END_TEST

/* Runs a built program through the shell; its stdout and stderr (malloc'd)
 * and exit status. */
static char *run_program(const char *args, int *status)
{
    char command[8192];
    snprintf(command, sizeof(command), "%s 2>&1", args);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t size = 0, cap = 4096;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    size_t n;
    while ((n = fread(text + size, 1, cap - size - 1, p)) > 0) {
        size += n;
        if (cap - size < 2) {
            cap *= 2;
            text = realloc(text, cap);
            ck_assert_ptr_nonnull(text);
        }
    }
    text[size] = '\0';
    int rc = pclose(p);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return text;
}

START_TEST(installed_program_shows_this_builds_frameworks)
{
    oi_reset();
    int status = -1;
    char *out = run_program("OPAL_MCA_mca_base_component_path='" OPAL_TEST_BUILDDIR
                            "/orte/mca/ess/singleton/.libs' '" OPAL_TEST_BUILDDIR
                            "/tools/opal_info/opal_info'",
                            &status);
    ck_assert_int_eq(status, 0);
    assert_has(out, "Package: opal-mca " OPAL_VERSION);
    /* opal has no framework yet (btl and the others come later); the
     * program also lists orte's, whose plugins it finds on the path. */
    assert_has(out, "MCA ess: singleton (MCA v");
    free(out);
    out = run_program("'" OPAL_TEST_BUILDDIR "/tools/opal_info/opal_info' --bogus", &status);
    ck_assert_int_eq(status, 1);
    assert_has(out, "opal_info: ");
    free(out);
}
END_TEST

/* opal_info of the build tree, with neither the component path nor the
 * help path set, as a user runs it after make. */
#define BUILD_TREE_OPAL_INFO                                                                       \
    "env -u OPAL_MCA_mca_base_component_path -u OPAL_SHOW_HELP_PATH '" OPAL_TEST_BUILDDIR          \
    "/tools/opal_info/opal_info'"

START_TEST(build_tree_program_finds_its_plugins_and_help_files)
{
    oi_reset();
    int status = -1;
    char *out = run_program(BUILD_TREE_OPAL_INFO, &status);
    ck_assert_int_eq(status, 0);
    assert_has(out, "MCA ess: singleton (MCA v");
    assert_has(out,
               "plugin " OPAL_TEST_BUILDDIR "/orte/mca/ess/singleton/.libs/mca_ess_singleton.so");
    free(out);
    /* A help message (a selection naming nothing) is shown in full. */
    out = run_program(BUILD_TREE_OPAL_INFO " --mca ess nosuch --selected", &status);
    assert_has(out, "Components that exist:");
    ck_assert_ptr_null(strstr(out, "cannot be shown"));
    free(out);
}
END_TEST

START_TEST(swapped_letters_in_a_framework_name_suggest_the_framework)
{
    oi_reset();
    int status = -1;
    /* "blt" is one swap from "btl" and two edits from "all". */
    char *out = run_program(BUILD_TREE_OPAL_INFO " --param blt all", &status);
    ck_assert_int_eq(status, 1);
    assert_has(out, "no framework 'blt' (did you mean 'btl'?)");
    free(out);
}
END_TEST

START_TEST(listing_every_variable_does_not_load_libfabric)
{
    oi_reset();
    int status = -1;
    /* The dynamic linker names each file it loads (LD_DEBUG=files). */
    char *out = run_program("LD_DEBUG=files " BUILD_TREE_OPAL_INFO " --all --parsable", &status);
    ck_assert_int_eq(status, 0);
    if (NULL == strstr(out, "mca:btl:ofi:")) {
        fprintf(stderr, "listing_every_variable...: btl/ofi is not built\n");
        free(out);
        return;
    }
    assert_has(out, "mca_btl_ofi.so");
    ck_assert_ptr_null(strstr(out, "libfabric.so"));
    free(out);
    /* Choosing a provider is what loads it. */
    out = run_program("LD_DEBUG=files " BUILD_TREE_OPAL_INFO " --mca btl ofi --selected", &status);
    assert_has(out, "libfabric.so");
    free(out);
}
END_TEST

START_TEST(selected_ofi_names_its_provider_and_domain)
{
    oi_reset();
    int status = -1;
    char *out = run_program(BUILD_TREE_OPAL_INFO " --mca btl ofi --mca ofi_provider_include "
                                                 "'tcp;ofi_rxm' --selected",
                            &status);
    if (NULL != strstr(out, "no framework") || NULL == strstr(out, "MCA btl: selected ofi")) {
        fprintf(stderr, "selected_ofi_names...: btl/ofi did not run here:\n%s\n", out);
        free(out);
        return;
    }
    assert_has(out, "MCA btl: selected ofi (tcp;ofi_rxm, ");
    free(out);
    out = run_program(BUILD_TREE_OPAL_INFO " --mca btl ofi --mca ofi_provider_include "
                                           "'tcp;ofi_rxm' --selected --parsable",
                      &status);
    assert_has(out, "mca:btl:ofi:transport:tcp;ofi_rxm, ");
    free(out);
}
END_TEST

START_TEST(test_program_adds_the_mcatest_framework)
{
    oi_reset();
    int status = -1;
    char *out = run_program("'" OPAL_TEST_BUILDDIR "/test/tools/opal_info_mcatest' --param "
                            "mcatest good --level 9 --parsable",
                            &status);
    ck_assert_int_eq(status, 0);
    assert_has(out, "mca:mcatest:good:param:mcatest_good_priority:value:50\n");
    assert_has(out, "mca:mcatest:good:build:static\n");
    free(out);
}
END_TEST

static Suite *opal_info_suite(void)
{
    Suite *s = suite_create("opal_info");
    OPAL_TEST_ADD(s, default_output_lists_package_compiler_and_dependencies);
    OPAL_TEST_ADD(s, default_output_lists_built_in_components_with_versions);
    OPAL_TEST_ADD(s, default_output_lists_plugins_with_their_path);
    OPAL_TEST_ADD(s, no_frameworks_lists_none);
    OPAL_TEST_ADD(s, param_level_9_shows_every_alltypes_variable);
    OPAL_TEST_ADD(s, variables_above_the_level_are_hidden);
    OPAL_TEST_ADD(s, param_mca_lists_the_base_variables);
    OPAL_TEST_ADD(s, all_shows_everything_at_level_9);
    OPAL_TEST_ADD(s, internal_variables_show_with_all_only);
    OPAL_TEST_ADD(s, mca_option_sets_a_value_from_the_command_line);
    OPAL_TEST_ADD(s, mca_option_with_an_unknown_name_is_reported_with_the_nearest);
    OPAL_TEST_ADD(s, mca_option_with_a_bad_value_names_the_variable);
    OPAL_TEST_ADD(s, show_failed_lists_undefined_symbol_and_bad_version);
    OPAL_TEST_ADD(s, show_failed_says_none_when_everything_loads);
    OPAL_TEST_ADD(s, selected_shows_the_winner_and_why_the_others_lost);
    OPAL_TEST_ADD(s, selected_follows_the_selection_variable);
    OPAL_TEST_ADD(s, selected_in_a_multi_select_framework_keeps_every_module);
    OPAL_TEST_ADD(s, selected_with_a_bad_selection_fails_and_says_why);
    OPAL_TEST_ADD(s, pvars_lists_registered_performance_variables);
    OPAL_TEST_ADD(s, path_lists_install_directories_and_component_path);
    OPAL_TEST_ADD(s, config_lists_compiler_flags_and_dependencies);
    OPAL_TEST_ADD(s, version_prints_the_version_without_the_mca_base);
    OPAL_TEST_ADD(s, help_lists_every_option);
    OPAL_TEST_ADD(s, unknown_option_fails_with_a_suggestion);
    OPAL_TEST_ADD(s, stray_argument_fails);
    OPAL_TEST_ADD(s, bad_level_fails);
    OPAL_TEST_ADD(s, parsable_and_json_together_fail);
    OPAL_TEST_ADD(s, largest_sizes_show_as_unlimited_in_pretty_output_only);
    OPAL_TEST_ADD(s, param_with_an_unknown_framework_suggests_the_nearest);
    OPAL_TEST_ADD(s, param_with_an_unknown_component_suggests_the_nearest);
    OPAL_TEST_ADD(s, param_with_a_declined_component_says_why);
    OPAL_TEST_ADD(s, installed_program_shows_this_builds_frameworks);
    OPAL_TEST_ADD(s, build_tree_program_finds_its_plugins_and_help_files);
    OPAL_TEST_ADD(s, swapped_letters_in_a_framework_name_suggest_the_framework);
    OPAL_TEST_ADD(s, listing_every_variable_does_not_load_libfabric);
    OPAL_TEST_ADD(s, selected_ofi_names_its_provider_and_domain);
    OPAL_TEST_ADD(s, test_program_adds_the_mcatest_framework);
    return s;
}

int main(void)
{
    return opal_test_run(opal_info_suite());
}
