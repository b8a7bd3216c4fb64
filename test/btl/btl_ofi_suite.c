/*
 * The btl test suite over btl/ofi on one libfabric provider: every
 * generic case (sizes, tags, order, sendi, rdma, all-to-all, self, a
 * killed peer) with `--mca btl self,ofi --mca ofi_provider_include P`,
 * ofi carrying everything between ranks.
 *
 * Built once per provider (BTL_OFI_PROVIDER, BTL_OFI_SUITE_NAME, and
 * BTL_OFI_SLOW_PROVIDER for one that needs lighter cases), and once more
 * with BTL_OFI_FORCE_SEQ_HEADER: the sequence number in a header in the
 * payload (btl_ofi_force_seq_header), the path providers with 4 bytes of
 * remote CQ data take (rxm over verbs), on a provider that runs here. Whether
 * libfabric runs the provider here is asked at run time (fi_getinfo for
 * reliable datagram messages with that provider name); when it does not,
 * the program says why and exits 77, which make check counts as SKIP,
 * not as a pass.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "test/btl/btl_test_suite.h"
#include "test/orte/orte_test_support.h"

#ifndef BTL_OFI_PROVIDER
#error "BTL_OFI_PROVIDER names the provider this suite runs on"
#endif

#define SKIP_STATUS 77

#if defined(BTL_OFI_SLOW_PROVIDER) && BTL_OFI_SLOW_PROVIDER
/* udp;ofi_rxd moves ~1.5 KB datagrams under a window of acknowledgements
 * driven by both sides' progress: eight oversubscribed ranks exchanging
 * 256 KiB messages take minutes on two cores. Smaller messages and four
 * ranks test the same paths in seconds. */
static const char *const mca_args[] = {"--mca", "ofi_provider_include",  BTL_OFI_PROVIDER,
                                       "--mca", "btl_ofi_max_send_size", "65536",
                                       NULL};
/* make check's runs: puts and gets of up to 64 KiB too (the rdma case
 * posts seven of each at once, up to 1 MiB: rxd once stalled one such get
 * for 100 s under ASan, then failed it with "Timed out"; make
 * check-ofi-udp keeps the full sizes). */
static const char *const mca_args_small_rdma[] = {
    "--mca", "ofi_provider_include", BTL_OFI_PROVIDER, "--mca", "btl_ofi_max_send_size", "65536",
    "--mca", "btl_ofi_put_limit",    "65536",          "--mca", "btl_ofi_get_limit",     "65536",
    NULL};
#define ALLTOALL_NP 4
#elif defined(BTL_OFI_FORCE_SEQ_HEADER) && BTL_OFI_FORCE_SEQ_HEADER
static const char *const mca_args[] = {"--mca", "ofi_provider_include",     BTL_OFI_PROVIDER,
                                       "--mca", "btl_ofi_force_seq_header", "true",
                                       NULL};
#define ALLTOALL_NP 0
#else
static const char *const mca_args[] = {"--mca", "ofi_provider_include", BTL_OFI_PROVIDER, NULL};
#define ALLTOALL_NP 0
#endif

/* How the module carries the sequence number, as its verbose line says,
 * and the limits it advertises: the defaults (16384, 262144), or with
 * rxm its eager size (16384 - 512: larger messages of a dead peer crash
 * rxm), less the header's 4 bytes when there is one; with shm its inject
 * size (shm_inject_size). */
#if defined(BTL_OFI_FORCE_SEQ_HEADER) && BTL_OFI_FORCE_SEQ_HEADER
#define SEQ_NEEDLE     "eager 16380, max send 262140,"
#define SEQ_NEEDLE_RXM "eager 15868, max send 15868,"
#define SEQ_MODE       "sequence header in the payload"
#else
#define SEQ_NEEDLE     "eager 16384, max send 262144,"
#define SEQ_NEEDLE_RXM "eager 15872, max send 15872,"
#define SEQ_MODE       "sequence in the CQ data"
#endif

#define OFI_SUITE_CASES (BTL_SUITE_ALL | BTL_SUITE_UNREAPED | BTL_SUITE_DEPARTED)

static btl_suite_t ofi_suite = {
    .name = BTL_OFI_SUITE_NAME,
    .btl = "self,ofi",
    .mca_args = mca_args,
    .cases = OFI_SUITE_CASES,
    .between_ranks = "ofi",
    .alltoall_np = ALLTOALL_NP,
};

/* fi_getinfo for reliable datagram messages on provider prov: 0 and
 * *info (the caller frees it), or libfabric's negative error. */
static int rdm_info(const char *prov, struct fi_info **info)
{
    struct fi_info *hints = fi_allocinfo();
    if (NULL == hints) {
        return -FI_ENOMEM;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, hints, info);
    fi_freeinfo(hints);
    return rc;
}

#if !(defined(BTL_OFI_SLOW_PROVIDER) && BTL_OFI_SLOW_PROVIDER)
/* shm's inject size as libfabric reports it (0 when it does not). */
static size_t shm_inject_size(void)
{
    struct fi_info *info = NULL;
    if (0 != rdm_info("shm", &info)) {
        return 0;
    }
    size_t size = info->tx_attr->inject_size;
    fi_freeinfo(info);
    return size;
}
#endif

/* NULL when libfabric offers the provider for reliable datagram messages
 * here; else why not (static storage). */
static const char *provider_missing(void)
{
    static char why[256];
    struct fi_info *info = NULL;
    int rc = rdm_info(BTL_OFI_PROVIDER, &info);
    if (0 == rc) {
        fi_freeinfo(info);
        return NULL;
    }
    snprintf(why, sizeof(why), "fi_getinfo finds no %s provider for FI_EP_RDM messages: %s",
             BTL_OFI_PROVIDER, fi_strerror(-rc));
    return why;
}

/* The provider every run used, as the rank program reports it through
 * btl_base_verbose: a fallback to another provider would not test this
 * one; and where the sequence number went (the mode this suite tests). */
START_TEST(runs_use_the_provider_asked_for)
{
    const char *args[] = {"tags", NULL};
    const char *extra[] = {"--mca", "btl_base_verbose", "10", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self,ofi", mca_args, extra, 2, args);
    btl_suite_expect_ok(&run, 2, "tags", "ofi");
    char needle[128];
    snprintf(needle, sizeof(needle), "ofi: using %s,", BTL_OFI_PROVIDER);
    if (!btl_suite_has(run.err, needle)) {
        mcarun_test_dump(&run);
        ck_abort_msg("btl/ofi did not say it uses %s", BTL_OFI_PROVIDER);
    }
    if (!btl_suite_has(run.err, SEQ_MODE)) {
        mcarun_test_dump(&run);
        ck_abort_msg("btl/ofi did not say \"%s\"", SEQ_MODE);
    }
    if (NULL != strstr(BTL_OFI_PROVIDER, "udp")) {
        /* The udp socket's receive buffer is raised (as root, past
         * net.core.rmem_max too). */
        const char *want = 0 == geteuid() ? "udp socket receive buffer 4194304 bytes"
                                          : "udp socket receive buffer";
        if (!btl_suite_has(run.err, want)) {
            mcarun_test_dump(&run);
            ck_abort_msg("btl/ofi did not say \"%s\"", want);
        }
    }
#if !(defined(BTL_OFI_SLOW_PROVIDER) && BTL_OFI_SLOW_PROVIDER)
    const char *limits = NULL != strstr(BTL_OFI_PROVIDER, "ofi_rxm") ? SEQ_NEEDLE_RXM : SEQ_NEEDLE;
    char shm_limits[96];
    if (0 == strcmp(BTL_OFI_PROVIDER, "shm")) {
        /* Messages of at most shm's inject size: larger ones go by CMA. */
        size_t inject = shm_inject_size();
        ck_assert_uint_ge(inject, 1024);
        snprintf(shm_limits, sizeof(shm_limits), "eager %zu, max send %zu,", inject, inject);
        limits = shm_limits;
        /* Its gets go by its copy through shared memory. */
        if (!btl_suite_has(run.err, "RMA (gets with delivery completion)")) {
            mcarun_test_dump(&run);
            ck_abort_msg("btl/ofi over shm does not get with delivery completion");
        }
    }
    if (!btl_suite_has(run.err, limits)) {
        mcarun_test_dump(&run);
        ck_abort_msg("btl/ofi did not advertise \"%s\"", limits);
    }
#endif
    mcarun_test_run_free(&run);
}
END_TEST

#if defined(BTL_OFI_SHM_FILES) && BTL_OFI_SHM_FILES
/* The shm provider's files of this user in /dev/shm: those named under
 * mcarun's prefix ("opal-mca.<uid>.<job>.ofi_shm.<rank>"), and those of
 * libfabric's own naming ("<pid>:<uid>:<n>") made at or after since (a
 * machine may keep older ones of other programs). */
static int shm_files(time_t since)
{
    char prefix[64], own[64];
    snprintf(prefix, sizeof(prefix), "opal-mca.%lu.", (unsigned long) geteuid());
    snprintf(own, sizeof(own), ":%lu:", (unsigned long) geteuid());
    DIR *dir = opendir("/dev/shm");
    if (NULL == dir) {
        return 0;
    }
    int n = 0;
    struct dirent *e;
    while (NULL != (e = readdir(dir))) {
        struct stat st;
        if (0 != fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            st.st_uid != geteuid()) {
            continue;
        }
        bool ours = 0 == strncmp(e->d_name, prefix, strlen(prefix)) &&
                    NULL != strstr(e->d_name, ".ofi_shm.");
        bool libfabric = NULL != strstr(e->d_name, own) && st.st_ctime >= since;
        n += ours || libfabric ? 1 : 0;
    }
    closedir(dir);
    return n;
}

/* A rank killed while it runs cannot remove its shm endpoint's file: its
 * name is under mcarun's prefix, so mcarun removes it when the job ends. */
START_TEST(killed_rank_leaves_no_shm_file)
{
    time_t start = time(NULL);
    int before = shm_files(start);
    const char *args[] = {"killed", NULL};
    const char *extra[] = {"--enable-recovery", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self,ofi", mca_args, extra, 3, args);
    if (0 == run.status || !btl_suite_has(run.err, "rank 2 (pid ") ||
        !btl_suite_has(run.err, "exited on signal 9")) {
        mcarun_test_dump(&run);
        ck_abort_msg("rank 2 was not killed as the case intends");
    }
    /* Another test's job running meanwhile may have files of its own
     * for a while; a leftover stays. */
    int after = shm_files(start);
    for (int i = 0; i < 200 && after > before; ++i) {
        usleep(100 * 1000);
        after = shm_files(start);
    }
    if (after > before) {
        mcarun_test_dump(&run);
        ck_abort_msg("shm files: %d before the job, %d after it", before, after);
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* Starts btl_ofi_rank CASE alone (a singleton: no launcher to sweep its
 * files) over btl self,ofi on this provider. */
static pid_t start_singleton(const char *name)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        orte_test_forget_launchers();
        orte_test_use_build_tree_plugins();
        setenv("OPAL_MCA_btl", "self,ofi", 1);
        setenv("OPAL_MCA_ofi_provider_include", BTL_OFI_PROVIDER, 1);
        const char *prog = mcarun_test_build_path("test/btl/btl_ofi_rank");
        execl(prog, "btl_ofi_rank", name, (char *) NULL);
        _exit(127);
    }
    return pid;
}

/* How many files the shm provider named after pid ("<pid>:<domain>:<ep>")
 * are in /dev/shm. */
static int shm_files_of(pid_t pid)
{
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "%ld:", (long) pid);
    return opal_test_shm_files(prefix);
}

/* Outside mcarun, btl/ofi's shm endpoint has the provider's name
 * ("<pid>:<domain>:<ep>"), which a killed singleton leaves behind; the
 * next process's btl/ofi sweeps it away. */
START_TEST(a_killed_singletons_shm_file_is_swept_by_the_next)
{
    pid_t holder = start_singleton("hold");
    time_t deadline = time(NULL) + 60;
    int status;
    while (0 == shm_files_of(holder)) {
        ck_assert_msg(0 == waitpid(holder, &status, WNOHANG), "the singleton exited early");
        ck_assert_msg(time(NULL) < deadline, "the singleton made no shm file within 60 s");
        usleep(20 * 1000);
    }
    ck_assert_int_eq(kill(holder, SIGKILL), 0);
    ck_assert_int_eq(waitpid(holder, &status, 0), holder);
    ck_assert_msg(shm_files_of(holder) > 0, "the file of a killed singleton went away by itself");
    pid_t next = start_singleton("module");
    ck_assert_int_eq(waitpid(next, &status, 0), next);
    ck_assert_msg(WIFEXITED(status) && 0 == WEXITSTATUS(status), "the next singleton failed");
    ck_assert_msg(0 == shm_files_of(holder), "the next singleton's btl/ofi left the file");
}
END_TEST
#endif

int main(void)
{
#if defined(BTL_OFI_SLOW_PROVIDER) && BTL_OFI_SLOW_PROVIDER
    /* The streams (sizes, order, sendi, alltoall) and killed only when
     * asked (make check-ofi-udp, see test/btl/Makefile-ofi.inc): libfabric
     * 1.17's rxd gets them wrong now and then, alone on the machine too (4
     * runs of this suite in 30, with no datagram dropped): messages
     * delivered with the wrong length, corrupted or truncated segmented
     * messages, a stream that stops, a crash inside fi_recv, a send buffer
     * read after its completion. With every limit at 1 KiB the order
     * stream fails every run here and passes over tcp;ofi_rxm, with the
     * sequence header too. */
    const char *asked = getenv("OPAL_TEST_OFI_UDP");
    if (NULL == asked || 0 != strcmp(asked, "1")) {
        ofi_suite.cases &= ~(unsigned) (BTL_SUITE_SIZES | BTL_SUITE_ORDER | BTL_SUITE_SENDI |
                                        BTL_SUITE_ALLTOALL | BTL_SUITE_KILLED);
        ofi_suite.mca_args = mca_args_small_rdma;
        printf("%s: the sizes, order, sendi, alltoall and killed cases, and puts and gets over "
               "64 KiB, are left to make check-ofi-udp (libfabric 1.17's rxd delivers wrong "
               "lengths, corrupts, loses or stalls streams of messages and transfers now and "
               "then)\n",
               BTL_OFI_SUITE_NAME);
    }
#endif
    /* Ranks in pid namespaces of their own: over tcp (shm names its files
     * and reads its peers' memory by pid, so it needs one namespace). */
    if (0 == strcmp(BTL_OFI_PROVIDER, "tcp;ofi_rxm")) {
        ofi_suite.cases |= BTL_SUITE_PIDNS;
    }
    const char *missing = provider_missing();
    if (NULL != missing) {
        printf("%s: not run here: %s\n", BTL_OFI_SUITE_NAME, missing);
        return SKIP_STATUS;
    }
    Suite *s = btl_suite_create(&ofi_suite);
    OPAL_TEST_ADD(s, runs_use_the_provider_asked_for);
#if defined(BTL_OFI_SHM_FILES) && BTL_OFI_SHM_FILES
    OPAL_TEST_ADD(s, killed_rank_leaves_no_shm_file);
    OPAL_TEST_ADD(s, a_killed_singletons_shm_file_is_swept_by_the_next);
#endif
    return btl_suite_main(s);
}
