/*
 * ess/singleton: a process started alone is rank 0 of a job of 1; its
 * modex is a table in the process and its fences return at once.
 */
#ifndef ORTE_MCA_ESS_SINGLETON_ESS_SINGLETON_H
#define ORTE_MCA_ESS_SINGLETON_ESS_SINGLETON_H

#include "opal/opal_config.h"

#include "orte/mca/ess/ess.h"

OPAL_DECLSPEC extern const orte_ess_base_component_t mca_ess_singleton_component;

/* The module the component's query returns. */
extern orte_ess_base_module_t mca_ess_singleton_module;

#endif /* ORTE_MCA_ESS_SINGLETON_ESS_SINGLETON_H */
