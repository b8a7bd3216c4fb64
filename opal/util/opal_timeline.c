/*
 * The timeline recorder (opal_timeline.h): marks go into one array by an
 * atomic index, so any thread may mark without a lock; the array is
 * written out once, when recording stops.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timeline.h"
#include "opal/util/opal_timer.h"

/* Keeps a recording within 4 GiB of memory. */
#define TIMELINE_MAX_MARKS (1u << 28)
/* Clock reads timed for the header's clock_read_ns. */
#define TIMELINE_CLOCK_SAMPLES 1000

typedef struct timeline_record_t {
    uint64_t ns;
    uint32_t thread;
    uint32_t mark;
} timeline_record_t;

static const char *const mark_names[] = {
#define OPAL_TIMELINE_NAME_(name, what) #name,
    OPAL_TIMELINE_MARK_TABLE(OPAL_TIMELINE_NAME_)
#undef OPAL_TIMELINE_NAME_
};

/* The flag's release in start pairs with the acquire in mark, so that a
 * thread that sees it set sees the array; stop runs once no thread marks
 * (opal_timeline.h). The marks' own relaxed look only saves the call. */
atomic_bool opal_timeline_recording;
static atomic_size_t next_record;
static atomic_uint next_thread;
static timeline_record_t *records;
static size_t capacity;
static char *file_path;
static _Thread_local uint32_t thread_number = UINT32_MAX;

void opal_timeline_mark(opal_timeline_mark_t mark)
{
    if (!atomic_load_explicit(&opal_timeline_recording, memory_order_acquire)) {
        return;
    }
    const uint64_t now = opal_timer_ns();
    const size_t i = atomic_fetch_add_explicit(&next_record, 1, memory_order_relaxed);
    if (i >= capacity) {
        return; /* counted as dropped by the index past capacity */
    }
    if (UINT32_MAX == thread_number) {
        thread_number = atomic_fetch_add_explicit(&next_thread, 1, memory_order_relaxed);
    }
    records[i] = (timeline_record_t){.ns = now, .thread = thread_number, .mark = (uint32_t) mark};
}

const char *opal_timeline_mark_name(opal_timeline_mark_t mark)
{
    return (unsigned) mark < OPAL_TIMELINE_MARKS ? mark_names[mark] : NULL;
}

int opal_timeline_compiled_in(void)
{
#if defined(OPAL_ENABLE_TIMELINE) && OPAL_ENABLE_TIMELINE
    return 1;
#else
    return 0;
#endif
}

int opal_timeline_start(const char *path, size_t max)
{
    if (NULL == path || '\0' == path[0] || 0 == max || max > TIMELINE_MAX_MARKS) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (atomic_load_explicit(&opal_timeline_recording, memory_order_relaxed)) {
        return OPAL_ERR_EXISTS;
    }
    char path_now[PATH_MAX];
    if (OPAL_SUCCESS != opal_output_expand_path(path, path_now, sizeof(path_now))) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *expanded = strdup(path_now);
    records = malloc(max * sizeof(*records));
    if (NULL == expanded || NULL == records) {
        free(expanded);
        free(records);
        records = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    file_path = expanded;
    capacity = max;
    atomic_store_explicit(&next_record, 0, memory_order_relaxed);
    atomic_store_explicit(&opal_timeline_recording, true, memory_order_release);
    return OPAL_SUCCESS;
}

/* The mean time of one clock read, in ns. */
static uint64_t clock_read_ns(void)
{
    uint64_t first = opal_timer_ns(), last = first;
    for (int i = 0; i < TIMELINE_CLOCK_SAMPLES; ++i) {
        last = opal_timer_ns();
    }
    return (last - first + TIMELINE_CLOCK_SAMPLES / 2) / TIMELINE_CLOCK_SAMPLES;
}

int opal_timeline_stop(void)
{
    if (!atomic_load_explicit(&opal_timeline_recording, memory_order_relaxed)) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    atomic_store_explicit(&opal_timeline_recording, false, memory_order_relaxed);
    const size_t taken = atomic_load_explicit(&next_record, memory_order_relaxed);
    const size_t kept = taken < capacity ? taken : capacity;
    int rc = OPAL_SUCCESS;
    FILE *f = fopen(file_path, "w");
    bool failed = NULL == f;
    if (!failed) {
        fprintf(f, "# opal timeline 1\n# pid %ld marks %zu dropped %zu clock_read_ns %llu\n",
                (long) getpid(), kept, taken - kept, (unsigned long long) clock_read_ns());
        fputs("# ns thread mark\n", f);
        for (size_t i = 0; i < kept; ++i) {
            fprintf(f, "%llu %u %s\n", (unsigned long long) records[i].ns, records[i].thread,
                    mark_names[records[i].mark]);
        }
        failed = 0 != ferror(f);
        failed = 0 != fclose(f) || failed;
    }
    if (failed) {
        opal_output(0, "opal_timeline: cannot write the timeline file %s (opal_timeline_file): %s",
                    file_path, strerror(errno));
        rc = OPAL_ERR_IN_ERRNO;
    }
    free(records);
    records = NULL;
    capacity = 0;
    free(file_path);
    file_path = NULL;
    return rc;
}
