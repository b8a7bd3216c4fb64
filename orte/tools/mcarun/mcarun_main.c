/*
 * mcarun's command line, set-up, main loop and clean-up.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "orte/tools/mcarun/mcarun.h"
#include "orte/util/orte_session_dir.h"

static const opal_cmd_line_option_t options[] = {
    {"np", 'n', 1, "<N>", "Run N ranks (default: one per core)"},
    {NULL, 'x', 1, "<VAR[=value]>",
     "Set VAR in the ranks' environment to value, or to mcarun's own value of VAR"},
    {"tag-output", '\0', 0, NULL,
     "Start every line of output with the rank and stream: [3]<stdout>: ..."},
    {"output-filename", '\0', 1, "<DIR>",
     "Write each rank's output to DIR/rank.N/stdout and DIR/rank.N/stderr instead"},
    {"timeout", '\0', 1, "<SEC>", "Stop the job after SEC seconds (mcarun then exits 124)"},
    {"bind-to", '\0', 1, "<none|core|package>",
     "Bind rank i to core i (modulo the number of cores), or to that core's package "
     "(\"socket\" is accepted for package; default none)"},
    {"report-bindings", '\0', 0, NULL, "Say where each rank is bound"},
    {"oversubscribe", '\0', 0, NULL, "Allow more ranks than cores"},
    {"enable-recovery", '\0', 0, NULL,
     "A rank that fails does not stop the others; mcarun still exits with the first "
     "failure's status"},
    {"wdir", '\0', 1, "<DIR>", "Start the ranks in DIR"},
    {"clean", '\0', 0, NULL,
     "Remove the session directories and /dev/shm files of your jobs whose mcarun is gone, "
     "and exit"},
    {"version", 'V', 0, NULL, "Print the version and exit"},
    {"help", 'h', 0, NULL, "Print this help and exit"},
    {NULL, '\0', 0, NULL, NULL},
};

static int usage_error(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);
static int usage_error(const char *format, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    fprintf(stderr, "mcarun: %s\nmcarun: see mcarun --help\n", text);
    return MCARUN_EXIT_USAGE;
}

static bool valid_name(const char *s, size_t len)
{
    if (0 == len) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        char c = s[i];
        if (!(('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || '_' == c ||
              (0 < i && '0' <= c && c <= '9'))) {
            return false;
        }
    }
    return true;
}

/* Adds NAME=value to the ranks' variables, replacing an earlier NAME. */
static int set_rank_env(const char *name, size_t name_len, const char *value)
{
    char **env = mcarun_job.opts.env;
    for (int i = 0; NULL != env && NULL != env[i]; ++i) {
        if (0 == strncmp(env[i], name, name_len) && '=' == env[i][name_len]) {
            opal_argv_delete(NULL, &mcarun_job.opts.env, i, 1);
            break;
        }
    }
    char *entry;
    if (asprintf(&entry, "%.*s=%s", (int) name_len, name, value) < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_argv_append_nosize(&mcarun_job.opts.env, entry);
    free(entry);
    return rc;
}

static int mkdir_p(const char *dir)
{
    char *path = strdup(dir);
    if (NULL == path) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_SUCCESS;
    for (char *p = path + 1;; ++p) {
        if ('/' != *p && '\0' != *p) {
            continue;
        }
        char c = *p;
        *p = '\0';
        if (0 != mkdir(path, 0755) && EEXIST != errno) {
            rc = OPAL_ERR_IN_ERRNO;
            break;
        }
        *p = c;
        if ('\0' == c) {
            break;
        }
    }
    free(path);
    return rc;
}

/* Returns -1 to go on, or the status mcarun exits with now. */
static int parse_options(opal_cmd_line_t *cmd, int argc, char **argv)
{
    mcarun_options_t *o = &mcarun_job.opts;
    if (OPAL_SUCCESS != opal_cmd_line_add(cmd, options) ||
        OPAL_SUCCESS != opal_cmd_line_add_mca_options(cmd)) {
        return MCARUN_EXIT_FAILURE;
    }
    if (OPAL_SUCCESS != opal_cmd_line_parse(cmd, argc, argv, OPAL_CMD_LINE_STOP_AT_POSITIONAL)) {
        return usage_error("%s", opal_cmd_line_get_error(cmd));
    }
    if (opal_cmd_line_is_taken(cmd, "help")) {
        char *text = opal_cmd_line_get_usage_msg(cmd, 80);
        printf("Usage: mcarun [options] <program> [arguments]\n\n"
               "Runs <program> as a job of N ranks on this machine.\n\nOptions:\n%s\n"
               "See mcarun(1) for the environment the ranks get and the exit status.\n",
               NULL != text ? text : "");
        free(text);
        return 0;
    }
    if (opal_cmd_line_is_taken(cmd, "version")) {
        printf("mcarun (%s) %s\n", PACKAGE_NAME, OPAL_VERSION);
        return 0;
    }
    if (opal_cmd_line_is_taken(cmd, "clean")) {
        int cleaned = mcarun_clean_stale();
        if (0 == cleaned) {
            printf("mcarun: no stale sessions\n");
        }
        return cleaned < 0 ? MCARUN_EXIT_FAILURE : 0;
    }
    int count;
    char **positional = opal_cmd_line_get_positional(cmd, &count);
    if (0 == count) {
        return usage_error("no program to run");
    }
    o->argv = opal_argv_copy(positional);
    const char *v;
    if (NULL !=
        (v = opal_cmd_line_get_param(cmd, "np", opal_cmd_line_get_ninsts(cmd, "np") - 1, 0))) {
        char *end;
        errno = 0;
        long np = strtol(v, &end, 10);
        if (0 != errno || '\0' != *end || np < 1 || np > MCARUN_MAX_NP) {
            return usage_error("-np %s: expected a number of ranks from 1 to %d", v, MCARUN_MAX_NP);
        }
        o->np = (int) np;
    }
    for (int i = 0; i < opal_cmd_line_get_ninsts(cmd, "x"); ++i) {
        v = opal_cmd_line_get_param(cmd, "x", i, 0);
        const char *eq = strchr(v, '=');
        size_t len = NULL != eq ? (size_t) (eq - v) : strlen(v);
        if (!valid_name(v, len)) {
            return usage_error("-x %s: not an environment variable name", v);
        }
        const char *value = NULL != eq ? eq + 1 : getenv(v);
        if (NULL == value) {
            fprintf(stderr, "mcarun: warning: -x %s: %s is not set here; not exported\n", v, v);
        } else if (OPAL_SUCCESS != set_rank_env(v, len, value)) {
            return MCARUN_EXIT_FAILURE;
        }
    }
    opal_list_t params;
    OBJ_CONSTRUCT(&params, opal_list_t);
    int rc = opal_cmd_line_get_mca_params(cmd, &params);
    opal_cmd_line_mca_param_t *p;
    OPAL_LIST_FOREACH (p, &params, opal_cmd_line_mca_param_t) {
        char name[512];
        if (OPAL_SUCCESS == rc && !valid_name(p->key, strlen(p->key))) {
            usage_error("--mca %s: not an MCA variable name", p->key);
            rc = OPAL_ERR_BAD_PARAM;
        }
        if (OPAL_SUCCESS == rc) {
            int n = snprintf(name, sizeof(name), "OPAL_MCA_%s", p->key);
            rc = n < (int) sizeof(name) ? set_rank_env(name, (size_t) n, p->value)
                                        : OPAL_ERR_BAD_PARAM;
        }
    }
    if (OPAL_SUCCESS == rc) {
        char *checked = NULL;
        rc = mcarun_mca_check(&params, &checked);
        if (OPAL_SUCCESS == rc && NULL != checked) {
            rc = set_rank_env(MCA_BASE_VAR_CHECKED_ENV, strlen(MCA_BASE_VAR_CHECKED_ENV), checked);
        }
        free(checked);
    }
    OPAL_LIST_DESTRUCT(&params);
    if (OPAL_SUCCESS != rc) {
        return MCARUN_EXIT_USAGE;
    }
    o->tag_output = opal_cmd_line_is_taken(cmd, "tag-output");
    o->report_bindings = opal_cmd_line_is_taken(cmd, "report-bindings");
    o->oversubscribe = opal_cmd_line_is_taken(cmd, "oversubscribe");
    o->enable_recovery = opal_cmd_line_is_taken(cmd, "enable-recovery");
    if (NULL != (v = opal_cmd_line_get_param(cmd, "timeout", 0, 0))) {
        char *end;
        errno = 0;
        o->timeout_s = strtod(v, &end);
        if (0 != errno || '\0' != *end || !(o->timeout_s > 0) || o->timeout_s > 1e9) {
            return usage_error("--timeout %s: expected a number of seconds above 0", v);
        }
    }
    if (NULL != (v = opal_cmd_line_get_param(cmd, "bind-to", 0, 0))) {
        if (0 == strcmp(v, "none")) {
            o->bind_to = MCARUN_BIND_NONE;
        } else if (0 == strcmp(v, "core")) {
            o->bind_to = MCARUN_BIND_CORE;
        } else if (0 == strcmp(v, "package") || 0 == strcmp(v, "socket")) {
            /* "socket" is Open MPI's older name for a package. */
            o->bind_to = MCARUN_BIND_PACKAGE;
        } else {
            return usage_error("--bind-to %s: expected none, core or package (or socket)", v);
        }
    }
    struct stat st;
    if (NULL != (v = opal_cmd_line_get_param(cmd, "wdir", 0, 0))) {
        if (0 != stat(v, &st)) {
            return usage_error("--wdir %s: %s", v, strerror(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
            return usage_error("--wdir %s: not a directory", v);
        }
        o->wdir = strdup(v);
    }
    if (NULL != (v = opal_cmd_line_get_param(cmd, "output-filename", 0, 0))) {
        if (OPAL_SUCCESS != mkdir_p(v)) {
            return usage_error("--output-filename %s: %s", v, strerror(errno));
        }
        o->output_dir = strdup(v);
    }
    return -1;
}

/* Checks np against the cores, and that binding can be done. */
static int check_resources(void)
{
    mcarun_options_t *o = &mcarun_job.opts;
    int cores = 0;
#if !OPAL_HAVE_HWLOC
    if (MCARUN_BIND_NONE != o->bind_to) {
        fprintf(stderr,
                "mcarun: --bind-to %s needs hwloc, and this build of opal-mca has none "
                "(configure did not find libhwloc-dev); use --bind-to none\n",
                MCARUN_BIND_CORE == o->bind_to ? "core" : "package");
        return MCARUN_EXIT_USAGE;
    }
#endif
    bool need_cores = 0 == o->np || !o->oversubscribe || MCARUN_BIND_CORE == o->bind_to;
    if (need_cores && OPAL_SUCCESS != mcarun_bind_num_cores(&cores)) {
        return MCARUN_EXIT_FAILURE;
    }
    if (0 == o->np) {
        o->np = cores;
    }
    if (!o->oversubscribe && o->np > cores) {
        fprintf(stderr,
                "mcarun: %d ranks were asked for, but this machine has %d core%s for them.\n"
                "mcarun: to run more ranks than cores, add --oversubscribe.\n",
                o->np, cores, 1 == cores ? "" : "s");
        return MCARUN_EXIT_USAGE;
    }
    if (MCARUN_BIND_CORE == o->bind_to && o->np > cores) {
        /* Allowed (the user asked for --oversubscribe), but never silent:
         * ranks that share a core run at a fraction of its speed. */
        fprintf(stderr,
                "mcarun: warning: --bind-to core with %d ranks on %d core%s: up to %d ranks "
                "share each core\n",
                o->np, cores, 1 == cores ? "" : "s", (o->np + cores - 1) / cores);
    }
    return -1;
}

static void ensure_std_fds(void)
{
    /* A closed 0, 1 or 2 would be reused by the first pipe mcarun opens,
     * and a rank's stdin would be someone's pipe. */
    for (int fd = 0; fd < 3; ++fd) {
        if (fcntl(fd, F_GETFD) < 0) {
            int null = open("/dev/null", O_RDWR);
            if (0 <= null && null != fd) {
                dup2(null, fd);
                close(null);
            }
        }
    }
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (0 == getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int setup(void)
{
    mcarun_job.size = (uint32_t) mcarun_job.opts.np;
    mcarun_job.ranks = calloc(mcarun_job.size, sizeof(mcarun_rank_t));
    if (NULL == mcarun_job.ranks) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        mcarun_rank_t *r = &mcarun_job.ranks[i];
        r->rank = i;
        r->out.fd = r->err.fd = r->stdin_fd = -1;
        mcarun_modex_rank_init(r);
    }
    int rc = mcarun_loop_init();
    if (OPAL_SUCCESS == rc) {
        rc = mcarun_signals_init();
    }
    if (OPAL_SUCCESS == rc) {
        /* Leftovers of launchers killed by SIGKILL: removed before they
         * fill /dev/shm. A failure here is no reason not to run. */
        (void) mcarun_clean_stale();
        rc = orte_session_dir_create((uint32_t) getpid(), &mcarun_job.jobid, mcarun_job.session_dir,
                                     sizeof(mcarun_job.session_dir));
        mcarun_job.session_created = OPAL_SUCCESS == rc;
    }
    if (OPAL_SUCCESS == rc) {
        rc = mcarun_clean_record(mcarun_job.session_dir);
    }
    if (OPAL_SUCCESS == rc) {
        rc = orte_session_dir_shm_prefix(mcarun_job.jobid, mcarun_job.shm_prefix,
                                         sizeof(mcarun_job.shm_prefix));
    }
    if (OPAL_SUCCESS == rc) {
        rc = mcarun_bind_plan();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mcarun_server_init();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mcarun_iof_stdin_init();
    }
    return rc;
}

static void run(void)
{
    if (0 < mcarun_job.opts.timeout_s) {
        mcarun_job.timeout_deadline =
            opal_timer_ns() + (uint64_t) llround(mcarun_job.opts.timeout_s * 1e9);
    }
    mcarun_launch();
    while (0 < mcarun_job.running) {
        uint64_t now = opal_timer_ns();
        mcarun_job_tick(now);
        uint64_t next = mcarun_job_next_deadline();
        mcarun_loop_wait(UINT64_MAX == next ? -1 : next <= now ? 0 : (int64_t) (next - now));
        mcarun_server_free_closed();
    }
}

static void cleanup(void)
{
    mcarun_server_fini();
    for (uint32_t i = 0; NULL != mcarun_job.ranks && i < mcarun_job.size; ++i) {
        mcarun_iof_close(&mcarun_job.ranks[i]);
        mcarun_modex_rank_fini(&mcarun_job.ranks[i]);
    }
    mcarun_iof_stdin_fini();
    mcarun_modex_fini();
    mcarun_signals_fini();
    mcarun_loop_fini();
    if (mcarun_job.session_created) {
        orte_session_dir_remove(mcarun_job.session_dir);
        orte_session_dir_remove_shm(NULL, mcarun_job.shm_prefix);
    }
    mcarun_bind_fini();
    free(mcarun_job.ranks);
    opal_argv_free(mcarun_job.opts.argv);
    opal_argv_free(mcarun_job.opts.env);
    free(mcarun_job.opts.wdir);
    free(mcarun_job.opts.output_dir);
}

int main(int argc, char **argv)
{
    ensure_std_fds();
    if (OPAL_SUCCESS != opal_init_util(&argc, &argv)) {
        fprintf(stderr, "mcarun: cannot initialise opal\n");
        return MCARUN_EXIT_FAILURE;
    }
    opal_cmd_line_t *cmd = OBJ_NEW(opal_cmd_line_t);
    int status = NULL == cmd ? MCARUN_EXIT_FAILURE : parse_options(cmd, argc, argv);
    if (NULL != cmd) {
        OBJ_RELEASE(cmd);
    }
    if (status < 0) {
        status = check_resources();
    }
    if (status < 0) {
        raise_fd_limit();
        if (OPAL_SUCCESS == setup()) {
            run();
            status = mcarun_job.failed ? mcarun_job.exit_status : 0;
        } else {
            status = MCARUN_EXIT_FAILURE;
        }
    }
    cleanup();
    opal_finalize_util();
    return status;
}
