/*
 * What sm_floor.c, tcp_floor.c and fbox_model.c share: their options'
 * parsing, binding to a core, the clock and waiting for the forked child.
 * Header-only, so that each still builds with one cc command (the compare
 * scripts build them at run time). Included first: it defines
 * _GNU_SOURCE.
 */
#ifndef CONTRIB_PERF_FLOOR_H
#define CONTRIB_PERF_FLOOR_H

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>

#define FLOOR_MAX_SIZES 32

/* A whole decimal number in [min, max], or -1. */
static inline long floor_parse_long(const char *s, long min, long max)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (0 != errno || end == s || '\0' != *end || v < min || v > max) {
        return -1;
    }
    return v;
}

/* A comma-separated list of sizes in [min, max] into sizes (at most
 * FLOOR_MAX_SIZES); their count, or -1 after a message naming prog and
 * the bad one. */
static inline int floor_parse_sizes(const char *prog, const char *arg, long min, long max,
                                    long *sizes)
{
    char *copy = strdup(arg), *save = NULL;
    int n = 0;
    if (NULL == copy) {
        return -1;
    }
    for (char *tok = strtok_r(copy, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
        long v = floor_parse_long(tok, min, max);
        if (v < 0 || n == FLOOR_MAX_SIZES) {
            fprintf(stderr, "%s: --sizes: '%s' is not a size from %ld to %ld (at most %d sizes)\n",
                    prog, tok, min, max, FLOOR_MAX_SIZES);
            n = -1;
            break;
        }
        sizes[n++] = v;
    }
    free(copy);
    return n;
}

/* "A,B" into cores; 0, or -1 after a message naming prog. */
static inline int floor_parse_cores(const char *prog, const char *val, int *cores)
{
    char tail = 0;
    if (2 != sscanf(val, "%d,%d%c", &cores[0], &cores[1], &tail) || cores[0] < 0 || cores[1] < 0 ||
        cores[0] >= CPU_SETSIZE || cores[1] >= CPU_SETSIZE) {
        fprintf(stderr, "%s: --cores: '%s' is not two core numbers A,B\n", prog, val);
        return -1;
    }
    return 0;
}

/* The options both take. */
typedef struct {
    long sizes[FLOOR_MAX_SIZES];
    int num_sizes;
    long size_min, size_max; /* what --sizes accepts */
    long iterations;
    int cores[2];
} floor_options_t;

/* Walks argv: -h / --help, --sizes, --iterations and --cores into o, any
 * other option with its value to extra (1: taken, 0: unknown, -1: refused
 * with a message), which may be NULL. Returns -1 when the program should
 * go on, else its exit status (0 after the help, 2 after a message). */
static inline int floor_parse_options(const char *prog, floor_options_t *o, int argc, char **argv,
                                      void (*usage)(FILE *f),
                                      int (*extra)(const char *opt, const char *val))
{
    for (int i = 1; i < argc; ++i) {
        const char *opt = argv[i];
        if (0 == strcmp(opt, "-h") || 0 == strcmp(opt, "--help")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "%s: %s needs a value\n", prog, opt);
            usage(stderr);
            return 2;
        }
        const char *val = argv[++i];
        int taken = 1;
        if (0 == strcmp(opt, "--sizes")) {
            o->num_sizes = floor_parse_sizes(prog, val, o->size_min, o->size_max, o->sizes);
            taken = o->num_sizes > 0 ? 1 : -1;
        } else if (0 == strcmp(opt, "--iterations")) {
            o->iterations = floor_parse_long(val, 1, 1000000000L);
            if (o->iterations < 0) {
                fprintf(stderr, "%s: --iterations: '%s' is not a count from 1 to 10^9\n", prog,
                        val);
                taken = -1;
            }
        } else if (0 == strcmp(opt, "--cores")) {
            taken = 0 == floor_parse_cores(prog, val, o->cores) ? 1 : -1;
        } else {
            taken = NULL == extra ? 0 : extra(opt, val);
        }
        if (0 == taken) {
            fprintf(stderr, "%s: unknown option '%s'\n", prog, opt);
            usage(stderr);
        }
        if (taken <= 0) {
            return 2;
        }
    }
    return -1;
}

/* Binds the calling process to core; a warning when it cannot. */
static inline void floor_bind_to(const char *prog, int core)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    if (0 != sched_setaffinity(0, sizeof(set), &set)) {
        fprintf(stderr, "%s: cannot bind to core %d (%s); running unbound\n", prog, core,
                strerror(errno));
    }
}

static inline double floor_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e6 + (double) t.tv_nsec * 1e-3;
}

/* Waits for the forked child (named who in the message); 0 when it exited
 * with status 0, else 1 after a message naming prog. */
static inline int floor_wait_child(const char *prog, pid_t child, const char *who)
{
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        fprintf(stderr, "%s: the %s did not end cleanly\n", prog, who);
        return 1;
    }
    return 0;
}

#endif
