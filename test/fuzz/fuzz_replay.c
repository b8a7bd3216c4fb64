/*
 * Replays a fuzz target's corpus through its LLVMFuzzerTestOneInput without
 * libFuzzer, so that gcc builds, valgrind and the sanitizer builds run the
 * same inputs in `make check`.
 *
 *   replay_<name> [FILE-OR-DIR...]
 *
 * Without arguments it replays $OPAL_TEST_SRCDIR/fuzz/corpus/<name>/, the
 * name taken from the program's own (replay_<name>). Each input is copied
 * into a buffer of exactly its size, so a read past the end is caught.
 * Exits 0 after every input, 99 (a hard error for the test harness) when
 * the corpus is missing or empty.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test/fuzz/fuzz.h"

static int replay_file(const char *path, unsigned *count)
{
    FILE *f = fopen(path, "rb");
    if (NULL == f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, size = 0;
    uint8_t *data = malloc(cap);
    size_t n;
    while (NULL != data && (n = fread(data + size, 1, cap - size, f)) > 0) {
        size += n;
        if (size == cap) {
            uint8_t *bigger = realloc(data, cap * 2);
            if (NULL == bigger) {
                free(data);
                data = NULL;
                break;
            }
            data = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (NULL == data) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    /* Exactly size bytes, so that reading one more is an error. */
    uint8_t *exact = malloc(size > 0 ? size : 1);
    if (NULL == exact) {
        free(data);
        return -1;
    }
    memcpy(exact, data, size);
    free(data);
    (void) LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    ++*count;
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Every regular file of dir, in name order (reproducible runs). */
static int replay_dir(const char *dir, unsigned *count)
{
    DIR *d = opendir(dir);
    if (NULL == d) {
        fprintf(stderr, "replay: cannot open the corpus %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    int rc = 0;
    while (0 == rc && NULL != (e = readdir(d))) {
        if ('.' == e->d_name[0]) {
            continue;
        }
        char **more = realloc(names, (n + 1) * sizeof(char *));
        char *path = NULL;
        if (NULL == more || asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
            names = NULL == more ? names : more;
            rc = -1;
            break;
        }
        names = more;
        names[n++] = path;
    }
    closedir(d);
    qsort(names, n, sizeof(char *), compare_names);
    for (size_t i = 0; i < n; ++i) {
        struct stat st;
        if (0 == rc && 0 == stat(names[i], &st) && S_ISREG(st.st_mode)) {
            rc = replay_file(names[i], count);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static int replay_path(const char *path, unsigned *count)
{
    struct stat st;
    if (0 != stat(path, &st)) {
        fprintf(stderr, "replay: %s does not exist\n", path);
        return -1;
    }
    return S_ISDIR(st.st_mode) ? replay_dir(path, count) : replay_file(path, count);
}

int main(int argc, char **argv)
{
    const char *self = strrchr(argv[0], '/');
    self = NULL == self ? argv[0] : self + 1;
    const char *name = 0 == strncmp(self, "replay_", 7) ? self + 7 : self;
    unsigned count = 0;
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc && 0 == rc; ++i) {
            rc = replay_path(argv[i], &count);
        }
    } else {
        const char *srcdir = getenv("OPAL_TEST_SRCDIR");
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/fuzz/corpus/%s", NULL != srcdir ? srcdir : "test", name);
        rc = replay_dir(dir, &count);
    }
    if (0 == rc && 0 == count) {
        fprintf(stderr, "replay %s: the corpus is empty\n", name);
        return 99;
    }
    printf("replay %s: %u inputs\n", name, count);
    return 0 == rc ? 0 : 99;
}
