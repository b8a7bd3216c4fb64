#include "opal/opal_config.h"

#include <pthread.h>

#include "opal/class/opal_object.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

/* Guards the count so that racing init/finalize calls start and stop the
 * layer exactly once. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count = 0;

int opal_init_util(int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    int rc = OPAL_SUCCESS;

    pthread_mutex_lock(&init_lock);
    if (init_count++ > 0) {
        goto out;
    }
    rc = opal_output_init();
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    rc = opal_show_help_init();
    if (OPAL_SUCCESS != rc) {
        goto fail_output;
    }
    rc = opal_progress_init();
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "opal_init_util: the progress engine failed to start: %s",
                    opal_strerror(rc));
        goto fail_show_help;
    }
    goto out;

fail_show_help:
    opal_show_help_finalize();
fail_output:
    opal_output_finalize();
fail:
    init_count = 0;
out:
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int opal_finalize_util(void)
{
    pthread_mutex_lock(&init_lock);
    if (0 == init_count) {
        pthread_mutex_unlock(&init_lock);
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (0 == --init_count) {
        opal_progress_finalize();
        opal_show_help_finalize();
        opal_output_finalize();
        opal_class_finalize();
    }
    pthread_mutex_unlock(&init_lock);
    return OPAL_SUCCESS;
}

bool opal_util_initialized(void)
{
    pthread_mutex_lock(&init_lock);
    bool up = init_count > 0;
    pthread_mutex_unlock(&init_lock);
    return up;
}
