/*
 * ompi_perf: opal_perf's measurements over MPI, for contrib/perf/
 * compare-ompi.sh. The loops, counts and units are opal_perf's (which
 * follow the OSU benchmarks), so that the two tables compare line by line:
 *
 *   latency  MPI_Send / MPI_Recv ping-pong; half the round trip in us
 *   bw       rank 0: a window of MPI_Isend + MPI_Waitall, then a 0-byte
 *            acknowledgement from rank 1 (a window of MPI_Irecv +
 *            MPI_Waitall); MB/s (10^6 bytes)
 *   bibw     both: a window of MPI_Irecv and of MPI_Isend, MPI_Waitall;
 *            MB/s of both directions
 *   rate     bw's loop, in messages per second (and MB/s)
 *
 *   mpicc -O2 -o ompi_perf ompi_perf.c
 *   mpirun -np 2 ompi_perf latency --sizes 0,8,64 [--iterations N]
 *          [--warmup N] [--window N]
 *
 * Rank 0 prints the table in opal_perf's layout ('#' lines, then "size
 * value" rows). Default counts are opal_perf's (see opal_perf(1)).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_MESSAGE 8192
#define MAX_WINDOW    4096
#define TAG_DATA      1
#define TAG_ACK       2

enum { LATENCY, BW, BIBW, RATE };
static const char *const commands[] = {"latency", "bw", "bibw", "rate"};

static int command = -1;
static long iterations = -1, warmup = -1;
static int window = 64;
static size_t *sizes;
static int num_sizes;

static long default_iterations(size_t size)
{
    int large = size > LARGE_MESSAGE;
    switch (command) {
        case LATENCY:
            return large ? 1000 : 10000;
        case BW:
        case BIBW:
            return large ? 20 : 100;
        default:
            return large ? 100 : 1000;
    }
}

static long default_warmup(size_t size)
{
    int large = size > LARGE_MESSAGE;
    switch (command) {
        case LATENCY:
            return large ? 10 : 100;
        case BW:
        case BIBW:
            return large ? 2 : 10;
        default:
            return large ? 10 : 100;
    }
}

static int parse_size(const char *text, size_t *size)
{
    char *end;
    unsigned long long n = strtoull(text, &end, 10);
    if (end == text) {
        return -1;
    }
    switch (*end) {
        case 'k':
        case 'K':
            n <<= 10;
            ++end;
            break;
        case 'm':
        case 'M':
            n <<= 20;
            ++end;
            break;
        case 'g':
        case 'G':
            n <<= 30;
            ++end;
            break;
        default:
            break;
    }
    *size = (size_t) n;
    return '\0' == *end ? 0 : -1;
}

static int parse_sizes(const char *text)
{
    num_sizes = 1;
    for (const char *c = text; *c; ++c) {
        num_sizes += ',' == *c;
    }
    sizes = calloc((size_t) num_sizes, sizeof(size_t));
    char *copy = strdup(text);
    if (NULL == sizes || NULL == copy) {
        return -1;
    }
    char *save = NULL;
    int n = 0;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n >= num_sizes || 0 != parse_size(w, &sizes[n++])) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    num_sizes = n;
    return n > 0 ? 0 : -1;
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (0 == strcmp(a, "--sizes") && v) {
            if (0 != parse_sizes(v)) {
                return -1;
            }
            ++i;
        } else if (0 == strcmp(a, "--iterations") && v) {
            iterations = atol(v);
            ++i;
        } else if (0 == strcmp(a, "--warmup") && v) {
            warmup = atol(v);
            ++i;
        } else if (0 == strcmp(a, "--window") && v) {
            window = atoi(v);
            ++i;
        } else if (command < 0) {
            for (int c = 0; c < 4; ++c) {
                if (0 == strcmp(a, commands[c])) {
                    command = c;
                }
            }
            if (command < 0) {
                return -1;
            }
        } else {
            return -1;
        }
    }
    if (command < 0 || window < 1 || window > MAX_WINDOW) {
        return -1;
    }
    if (NULL == sizes) {
        return parse_sizes(RATE == command ? "8" : "0");
    }
    return 0;
}

static double latency(int rank, char *sbuf, char *rbuf, size_t size, long iters, long skip)
{
    int peer = 1 - rank;
    double start = 0;
    for (long i = -skip; i < iters; ++i) {
        if (0 == i) {
            start = MPI_Wtime();
        }
        if (0 == rank) {
            MPI_Send(sbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - start) * 1e6 / (double) iters / 2.0;
}

static double windows(int rank, char *sbuf, char *rbuf, size_t size, long iters, long skip,
                      MPI_Request *req)
{
    int peer = 1 - rank;
    double start = 0;
    for (long i = -skip; i < iters; ++i) {
        if (0 == i) {
            start = MPI_Wtime();
        }
        if (0 == rank) {
            for (int w = 0; w < window; ++w) {
                MPI_Isend(sbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &req[w]);
            }
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < window; ++w) {
                MPI_Irecv(rbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &req[w]);
            }
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - start;
}

static double both_ways(int rank, char *sbuf, char *rbuf, size_t size, long iters, long skip,
                        MPI_Request *req)
{
    int peer = 1 - rank;
    double start = 0;
    for (long i = -skip; i < iters; ++i) {
        if (0 == i) {
            start = MPI_Wtime();
        }
        for (int w = 0; w < window; ++w) {
            MPI_Irecv(rbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &req[w]);
        }
        for (int w = 0; w < window; ++w) {
            MPI_Isend(sbuf, (int) size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                      &req[window + w]);
        }
        MPI_Waitall(2 * window, req, MPI_STATUSES_IGNORE);
    }
    return MPI_Wtime() - start;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (0 != parse_args(argc, argv) || 2 != nprocs) {
        if (0 == rank) {
            fprintf(stderr, "usage: mpirun -np 2 ompi_perf latency|bw|bibw|rate [--sizes LIST] "
                            "[--iterations N] [--warmup N] [--window N]\n");
        }
        MPI_Finalize();
        return 1;
    }
    size_t max = 0;
    for (int i = 0; i < num_sizes; ++i) {
        max = sizes[i] > max ? sizes[i] : max;
    }
    void *s = NULL, *r = NULL;
    MPI_Request *req = calloc(2 * (size_t) window, sizeof(MPI_Request));
    if (0 != posix_memalign(&s, 4096, max + 1) || 0 != posix_memalign(&r, 4096, max + 1) ||
        NULL == req) {
        fprintf(stderr, "ompi_perf: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(s, 0xa5, max + 1);
    memset(r, 0, max + 1);
    if (0 == rank) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl) {
            *nl = '\0';
        }
        printf("# ompi_perf %s (%s)\n", commands[command], version);
        if (LATENCY != command) {
            printf("# window %d\n", window);
        }
        printf("# %-8s%20s%s\n", "Size",
               LATENCY == command ? "Latency (us)"
               : RATE == command  ? "Messages/s"
                                  : "Bandwidth (MB/s)",
               RATE == command ? "                MB/s" : "");
        fflush(stdout);
    }
    for (int i = 0; i < num_sizes; ++i) {
        size_t size = sizes[i];
        long iters = iterations > 0 ? iterations : default_iterations(size);
        long skip = warmup >= 0 ? warmup : default_warmup(size);
        MPI_Barrier(MPI_COMM_WORLD);
        double value, mbps = 0;
        double messages = (double) iters * (double) window;
        if (LATENCY == command) {
            value = latency(rank, s, r, size, iters, skip);
        } else if (BIBW == command) {
            double t = both_ways(rank, s, r, size, iters, skip, req);
            value = 2.0 * messages * (double) size / t / 1e6;
        } else {
            double t = windows(rank, s, r, size, iters, skip, req);
            value = BW == command ? messages * (double) size / t / 1e6 : messages / t;
            mbps = messages * (double) size / t / 1e6;
        }
        if (0 == rank) {
            if (RATE == command) {
                printf("%-10zu%20.2f%20.2f\n", size, value, mbps);
            } else {
                printf("%-10zu%20.2f\n", size, value);
            }
            fflush(stdout);
        }
    }
    free(req);
    free(s);
    free(r);
    free(sizes);
    MPI_Finalize();
    return 0;
}
