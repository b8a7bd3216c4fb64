/* Shared by the orte tests and the rank programs they start. */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/orte/orte_test_support.h"

extern char **environ;

void orte_test_use_build_tree_plugins(void)
{
    setenv("OPAL_MCA_mca_base_component_path", ORTE_TEST_PLUGIN_DIRS, 0);
}

void orte_test_unset_prefixed(const char *prefix)
{
    /* unsetenv changes environ: start over after each removal. */
    bool again = true;
    while (again) {
        again = false;
        for (char **env = environ; NULL != *env; ++env) {
            if (0 == strncmp(*env, prefix, strlen(prefix))) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(*env, "="), *env);
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
}

void orte_test_forget_launchers(void)
{
    orte_test_unset_prefixed("PMIX_");
    orte_test_unset_prefixed("OPAL_ORTE_");
    orte_test_unset_prefixed("OMPI_");
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return strdup("");
    }
    size_t used = 0, cap = 4096;
    char *text = malloc(cap);
    size_t n;
    while (NULL != text && (n = fread(text + used, 1, cap - used - 1, f)) > 0) {
        used += n;
        if (cap - used < 2) {
            char *bigger = realloc(text, cap * 2);
            if (NULL == bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (NULL != text) {
        text[used] = '\0';
    }
    return text;
}

bool orte_test_run(orte_test_result_t *result, const char *format, ...)
{
    result->status = -1;
    result->out = NULL;
    result->err = NULL;
    char dir[] = "/tmp/orte-test.XXXXXX";
    if (NULL == mkdtemp(dir)) {
        return false;
    }
    char script[64], out[64], err[64], command[512];
    snprintf(script, sizeof(script), "%s/cmd.sh", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    snprintf(err, sizeof(err), "%s/err", dir);
    FILE *f = fopen(script, "w");
    if (NULL == f) {
        rmdir(dir);
        return false;
    }
    va_list ap;
    va_start(ap, format);
    vfprintf(f, format, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
    /* A hung job must not hang the test: timeout stops it, then kills it. */
    snprintf(command, sizeof(command), "timeout -k 5 120 sh %s </dev/null >%s 2>%s", script, out,
             err);
    int status = system(command);
    if (-1 != status) {
        result->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    result->out = read_file(out);
    result->err = read_file(err);
    unlink(script);
    unlink(out);
    unlink(err);
    rmdir(dir);
    return -1 != status && NULL != result->out && NULL != result->err;
}

void orte_test_result_free(orte_test_result_t *result)
{
    free(result->out);
    free(result->err);
    result->out = NULL;
    result->err = NULL;
}

bool orte_test_have_program(const char *program)
{
    if (NULL != strchr(program, '/')) {
        return 0 == access(program, X_OK);
    }
    const char *path = getenv("PATH");
    if (NULL == path) {
        return false;
    }
    char *copy = strdup(path);
    bool found = false;
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); NULL != dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        char full[4096];
        snprintf(full, sizeof(full), "%s/%s", dir, program);
        found = 0 == access(full, X_OK);
    }
    free(copy);
    return found;
}

const char *orte_test_mcarun(void)
{
    return ORTE_TEST_BUILDDIR "/orte/tools/mcarun/mcarun";
}

const char *orte_test_rank_program(void)
{
    return ORTE_TEST_BUILDDIR "/test/orte/orte_ess_rank";
}

char *orte_test_rank_lines(const char *out, uint32_t n, char *why, size_t why_size)
{
    char **lines = calloc(n, sizeof(char *));
    char *joined = NULL;
    size_t total = 1;
    if (NULL == lines) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    for (const char *line = out; '\0' != *line;) {
        const char *end = strchr(line, '\n');
        size_t len = NULL == end ? strlen(line) : (size_t) (end - line);
        unsigned rank, size;
        if (0 == strncmp(line, "rank ", 5) && 2 == sscanf(line, "rank %u size %u", &rank, &size)) {
            if (rank >= n || size != n) {
                snprintf(why, why_size, "a line for rank %u of %u in a job of %u: %.*s", rank, size,
                         (unsigned) n, (int) len, line);
                goto out;
            }
            if (NULL != lines[rank]) {
                snprintf(why, why_size, "two lines for rank %u", rank);
                goto out;
            }
            lines[rank] = strndup(line, len);
            total += len + 1;
        }
        line += len + (NULL == end ? 0 : 1);
    }
    for (uint32_t r = 0; r < n; ++r) {
        if (NULL == lines[r]) {
            snprintf(why, why_size, "no line from rank %u", (unsigned) r);
            goto out;
        }
    }
    joined = malloc(total);
    if (NULL == joined) {
        snprintf(why, why_size, "out of memory");
        goto out;
    }
    joined[0] = '\0';
    for (uint32_t r = 0; r < n; ++r) {
        strcat(joined, lines[r]);
        strcat(joined, "\n");
    }
out:
    for (uint32_t r = 0; r < n; ++r) {
        free(lines[r]);
    }
    free(lines);
    return joined;
}

bool orte_test_check_job(const char *lines, uint32_t n, char peer_locality, char *why,
                         size_t why_size)
{
    unsigned long long data = 0;
    uint32_t rank = 0;
    for (const char *line = lines; '\0' != *line; ++rank) {
        unsigned r, size, lrank, lsize, node;
        char locality[1024];
        unsigned long long bytes;
        if (7 != sscanf(line, "rank %u size %u local %u/%u node %u locality %1023s data %llu", &r,
                        &size, &lrank, &lsize, &node, locality, &bytes)) {
            snprintf(why, why_size, "line %u does not parse: %.80s", (unsigned) rank, line);
            return false;
        }
        /* One node: local ranks are the ranks. */
        if (r != rank || lrank != r || lsize != n || strlen(locality) != n) {
            snprintf(why, why_size, "rank %u: local %u/%u, locality '%s' in a job of %u", r, lrank,
                     lsize, locality, (unsigned) n);
            return false;
        }
        for (uint32_t peer = 0; peer < n; ++peer) {
            char expected = peer == r ? '7' : peer_locality;
            if (locality[peer] != expected) {
                snprintf(why, why_size, "rank %u sees rank %u with locality %c, expected %c", r,
                         (unsigned) peer, locality[peer], expected);
                return false;
            }
        }
        if (0 == rank) {
            data = bytes;
        } else if (bytes != data) {
            snprintf(why, why_size, "rank %u checked %llu bytes, rank 0 %llu", r, bytes, data);
            return false;
        }
        line = strchr(line, '\n');
        line = NULL == line ? "" : line + 1;
    }
    if (rank != n) {
        snprintf(why, why_size, "%u lines for a job of %u", (unsigned) rank, (unsigned) n);
        return false;
    }
    return true;
}
