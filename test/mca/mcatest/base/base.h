/*
 * The mcatest framework's base: its framework struct, with the
 * components configure built in as its static table.
 */
#ifndef OPAL_TEST_MCA_MCATEST_BASE_BASE_H
#define OPAL_TEST_MCA_MCATEST_BASE_BASE_H

#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_framework.h"

extern mca_base_framework_t test_mcatest_base_framework;

/* The framework's own variable mcatest_base_knob (default 5), registered
 * by its register hook: lets the tests see framework variables come and
 * go with the framework. */
extern int mca_mcatest_base_knob;

/* How often the framework's open and close hooks ran (the open hook
 * fails with OPAL_ERR_NOT_SUPPORTED when mcatest_base_fail_open is set). */
extern int mca_mcatest_base_open_calls;
extern int mca_mcatest_base_close_calls;

#endif /* OPAL_TEST_MCA_MCATEST_BASE_BASE_H */
