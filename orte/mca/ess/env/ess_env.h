/*
 * ess/env: a process started by mcarun. The job comes from the launcher
 * (orte_launcher_client_connect); the modex and fences go over the
 * launcher's socket.
 */
#ifndef ORTE_MCA_ESS_ENV_ESS_ENV_H
#define ORTE_MCA_ESS_ENV_ESS_ENV_H

#include "opal/opal_config.h"

#include "orte/mca/ess/ess.h"

OPAL_DECLSPEC extern const orte_ess_base_component_t mca_ess_env_component;

/* The module the component's query returns. */
extern orte_ess_base_module_t mca_ess_env_module;

#endif /* ORTE_MCA_ESS_ENV_ESS_ENV_H */
