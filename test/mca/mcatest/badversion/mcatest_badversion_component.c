/* mcatest/badversion: claims to be built with MCA structure version 9, so
 * the base must refuse it before calling anything, naming both versions.
 * The fields are spelled out rather than taken from
 * MCA_MCATEST_BASE_VERSION, which sets the real version. */
#include "opal/opal_config.h"

#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

/* Must never run: the version check comes first. */
static int badversion_open(void)
{
    return OPAL_ERROR;
}

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_badversion_component = {
    .base_version =
        {
            .mca_major_version = 9,
            .mca_minor_version = 0,
            .mca_release_version = 0,
            .mca_project_name = "test",
            .mca_project_major_version = OPAL_MAJOR_VERSION,
            .mca_project_minor_version = OPAL_MINOR_VERSION,
            .mca_project_release_version = OPAL_RELEASE_VERSION,
            .mca_type_name = "mcatest",
            .mca_type_major_version = MCATEST_API_MAJOR,
            .mca_type_minor_version = MCATEST_API_MINOR,
            .mca_type_release_version = 0,
            MCA_BASE_COMPONENT_NAME("badversion", 1, 0, 0),
            .mca_open_component = badversion_open,
        },
};
