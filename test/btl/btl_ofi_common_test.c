/*
 * common/ofi as units: the provider, domain and interface lists; the NIC
 * nearest to a binding (on a two-package topology from a file); address
 * blobs checked before they reach a provider; the choice of provider on
 * this machine's libfabric; opening a provider and registering memory;
 * the ofi_* variables and the unknown-name check.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_pid.h"
#include "test/mca/mca_var_test_support.h"
#include "test/support/opal_test.h"

/* ---------------------------------------------------------------- lists */

START_TEST(provider_item_matches_whole_name_or_one_layer)
{
    ck_assert(opal_common_ofi_provider_listed("tcp;ofi_rxm", "tcp;ofi_rxm", NULL));
    ck_assert(opal_common_ofi_provider_listed("tcp", "tcp;ofi_rxm", NULL));
    ck_assert(opal_common_ofi_provider_listed("ofi_rxm", "verbs;ofi_rxm", NULL));
    ck_assert(opal_common_ofi_provider_listed("shm", "shm", NULL));
    ck_assert(!opal_common_ofi_provider_listed("tc", "tcp;ofi_rxm", NULL));
    ck_assert(!opal_common_ofi_provider_listed("tcp;ofi_rxd", "tcp;ofi_rxm", NULL));
    ck_assert(!opal_common_ofi_provider_listed("udp", "tcp;ofi_rxm", NULL));
    ck_assert(!opal_common_ofi_provider_listed("ofi_rxm;tcp", "tcp;ofi_rxm", NULL));
}
END_TEST

START_TEST(provider_list_gives_first_matching_item_and_ignores_blanks)
{
    int index = -1;
    ck_assert(opal_common_ofi_provider_listed(" shm , udp;ofi_rxd ,tcp", "tcp;ofi_rxm", &index));
    ck_assert_int_eq(index, 2);
    ck_assert(opal_common_ofi_provider_listed("shm,,udp;ofi_rxd", "udp;ofi_rxd", &index));
    ck_assert_int_eq(index, 1);
    ck_assert(!opal_common_ofi_provider_listed("", "shm", NULL));
    ck_assert(!opal_common_ofi_provider_listed(" , ", "shm", NULL));
    ck_assert(!opal_common_ofi_provider_listed(NULL, "shm", NULL));
}
END_TEST

static struct sockaddr_in ipv4(const char *text)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(4711)};
    ck_assert_int_eq(inet_pton(AF_INET, text, &sin.sin_addr), 1);
    return sin;
}

START_TEST(if_include_subnets_contain_addresses)
{
    struct sockaddr_in a = ipv4("192.0.2.17");
    ck_assert(opal_common_ofi_if_listed("192.0.2.0/24", &a, sizeof(a)));
    ck_assert(opal_common_ofi_if_listed("10.0.0.0/8,192.0.2.16/28", &a, sizeof(a)));
    ck_assert(!opal_common_ofi_if_listed("192.0.2.32/28", &a, sizeof(a)));
    ck_assert(!opal_common_ofi_if_listed("198.51.100.0/24", &a, sizeof(a)));
    ck_assert(opal_common_ofi_if_listed("0.0.0.0/0", &a, sizeof(a)));
    /* Malformed subnets match nothing. */
    ck_assert(!opal_common_ofi_if_listed("192.0.2.0/33", &a, sizeof(a)));
    ck_assert(!opal_common_ofi_if_listed("192.0.2/24", &a, sizeof(a)));
    ck_assert(!opal_common_ofi_if_listed("192.0.2.0/x", &a, sizeof(a)));

    struct sockaddr_in6 b = {.sin6_family = AF_INET6};
    ck_assert_int_eq(inet_pton(AF_INET6, "fd00::2", &b.sin6_addr), 1);
    ck_assert(opal_common_ofi_if_listed("fd00::/64", &b, sizeof(b)));
    ck_assert(!opal_common_ofi_if_listed("fe80::/64", &b, sizeof(b)));
    /* An IPv4 subnet never contains an IPv6 address. */
    ck_assert(!opal_common_ofi_if_listed("0.0.0.0/0", &b, sizeof(b)));
}
END_TEST

START_TEST(if_include_interface_names_hold_their_addresses)
{
    struct sockaddr_in lo = ipv4("127.0.0.1");
    ck_assert(opal_common_ofi_if_listed("lo", &lo, sizeof(lo)));
    ck_assert(opal_common_ofi_if_listed("nosuchif0, lo", &lo, sizeof(lo)));
    ck_assert(!opal_common_ofi_if_listed("nosuchif0", &lo, sizeof(lo)));
    struct sockaddr_in other = ipv4("198.51.100.7");
    ck_assert(!opal_common_ofi_if_listed("lo", &other, sizeof(other)));
}
END_TEST

/* ----------------------------------------------------------------- NICs */

#if OPAL_HAVE_HWLOC
static hwloc_topology_t two_packages(void)
{
    return opal_test_xml_topology("btl/data/two_packages_two_nics.xml");
}

START_TEST(nic_near_the_binding_ranks_first)
{
    hwloc_topology_t topology = two_packages();
    const char *domains[] = {"hsn0", "mlx5_1", "eth9"};
    int rank[3];
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, "0-1", 3, domains, NULL, rank),
                     OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 0);
    ck_assert_int_eq(rank[1], 2);
    ck_assert_int_eq(rank[2], 1);
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, "3", 3, domains, NULL, rank), OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 2);
    ck_assert_int_eq(rank[1], 0);
    ck_assert_int_eq(rank[2], 1);
    /* A binding across both packages is near both. */
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, "1-2", 3, domains, NULL, rank),
                     OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 0);
    ck_assert_int_eq(rank[1], 0);
    hwloc_topology_destroy(topology);
}
END_TEST

START_TEST(nic_found_by_pci_address_when_the_domain_name_is_not_a_device)
{
    hwloc_topology_t topology = two_packages();
    const char *domains[] = {"fabric-a", "fabric-b"};
    const char *busids[] = {"0000:81:00.0", "0000:01:00.0"};
    int rank[2];
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, "2-3", 2, domains, busids, rank),
                     OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 0);
    ck_assert_int_eq(rank[1], 2);
    hwloc_topology_destroy(topology);
}
END_TEST

START_TEST(nic_locality_unknown_without_a_binding)
{
    hwloc_topology_t topology = two_packages();
    const char *domains[] = {"hsn0", "mlx5_1"};
    int rank[2] = {7, 7};
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, NULL, 2, domains, NULL, rank),
                     OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 1);
    ck_assert_int_eq(rank[1], 1);
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, "", 2, domains, NULL, rank), OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 1);
    ck_assert_int_eq(opal_common_ofi_nic_rank(topology, "zero", 2, domains, NULL, rank),
                     OPAL_ERR_BAD_PARAM);
    hwloc_topology_destroy(topology);
}
END_TEST
#endif

/* ------------------------------------------------------------ addresses */

/* A context as a provider with addr_format and an address of addrlen
 * bytes would have after ctx_open (only what the blob code reads). */
static opal_common_ofi_ctx_t fake_ctx(const char *prov, uint32_t addr_format, const void *addr,
                                      size_t addrlen)
{
    opal_common_ofi_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.info = fi_allocinfo();
    ck_assert_ptr_nonnull(ctx.info);
    ctx.info->addr_format = addr_format;
    ctx.prov_name = prov;
    memcpy(ctx.addr, addr, addrlen);
    ctx.addrlen = addrlen;
    return ctx;
}

static uint8_t *pack(const opal_common_ofi_ctx_t *ctx, size_t *size)
{
    void *blob = NULL;
    ck_assert_int_eq(opal_common_ofi_addr_pack(ctx, &blob, size), OPAL_SUCCESS);
    return blob;
}

/* Unpacks blob into ctx's view; returns the code, reason in why. */
static int unpack(const opal_common_ofi_ctx_t *ctx, const void *blob, size_t size, char *why)
{
    opal_common_ofi_peer_addr_t addr;
    why[0] = '\0';
    return opal_common_ofi_addr_unpack(ctx, blob, size, &addr, why, 160);
}

START_TEST(address_blob_round_trips)
{
    struct sockaddr_in sin = ipv4("192.0.2.2");
    opal_common_ofi_ctx_t ctx = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN, &sin, sizeof(sin));
    size_t size = 0;
    uint8_t *blob = pack(&ctx, &size);
    ck_assert_uint_eq(size, 72 + sizeof(sin));
    opal_common_ofi_peer_addr_t addr;
    char why[160];
    ck_assert_int_eq(opal_common_ofi_addr_unpack(&ctx, blob, size, &addr, why, sizeof(why)),
                     OPAL_SUCCESS);
    ck_assert_str_eq(addr.prov_name, "tcp;ofi_rxm");
    ck_assert_uint_eq(addr.addr_format, FI_SOCKADDR_IN);
    ck_assert_uint_eq(addr.addrlen, sizeof(sin));
    ck_assert_uint_eq(addr.pid, (uint32_t) getpid());
    ck_assert(0 != addr.pid_space && addr.pid_space == opal_pid_space());
    ck_assert_mem_eq(addr.addr, &sin, sizeof(sin));
    free(blob);
    fi_freeinfo(ctx.info);
}
END_TEST

START_TEST(address_blob_refuses_broken_headers)
{
    struct sockaddr_in sin = ipv4("192.0.2.2");
    opal_common_ofi_ctx_t ctx = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN, &sin, sizeof(sin));
    size_t size = 0;
    uint8_t *blob = pack(&ctx, &size);
    char why[160];

    ck_assert_int_eq(unpack(&ctx, blob, 3, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "3 bytes, shorter than the 72-byte header");
    ck_assert_int_eq(unpack(&ctx, NULL, 0, why), OPAL_ERR_BAD_VALUE);
    ck_assert_int_eq(unpack(&ctx, blob, size - 1, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "header claims a 16-byte address but 15 bytes follow");
    ck_assert_int_eq(unpack(&ctx, blob, 72, why), OPAL_ERR_BAD_VALUE);
    /* A version 1 blob (no pid space, 64-byte header) is refused. */
    ck_assert_int_eq(unpack(&ctx, blob, 64, why), OPAL_ERR_BAD_VALUE);

    uint8_t *copy = malloc(size);
    memcpy(copy, blob, size);
    copy[0] = 'X';
    ck_assert_int_eq(unpack(&ctx, copy, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "not an ofi address (bad magic)");

    memcpy(copy, blob, size);
    copy[4] = 9;
    ck_assert_int_eq(unpack(&ctx, copy, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "address blob version 9, this process reads 2");
    copy[4] = 1;
    ck_assert_int_eq(unpack(&ctx, copy, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "address blob version 1, this process reads 2");

    memcpy(copy, blob, size);
    memset(copy + 16, 'A', 48);
    ck_assert_int_eq(unpack(&ctx, copy, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "provider name not terminated");

    memcpy(copy, blob, size);
    copy[6] = 0;
    copy[7] = 0;
    ck_assert_int_eq(unpack(&ctx, copy, size, why), OPAL_ERR_BAD_VALUE);
    free(copy);
    free(blob);
    fi_freeinfo(ctx.info);
}
END_TEST

START_TEST(address_blob_refuses_socket_addresses_of_the_wrong_form)
{
    struct sockaddr_in sin = ipv4("192.0.2.2");
    opal_common_ofi_ctx_t ctx = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN, &sin, sizeof(sin));
    char why[160];

    /* A peer whose address is shorter than its format implies. */
    opal_common_ofi_ctx_t peer = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN, &sin, 3);
    size_t size = 0;
    uint8_t *blob = pack(&peer, &size);
    ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "address of 3 bytes, expected 16 for an IPv4 socket address");
    free(blob);
    fi_freeinfo(peer.info);

    /* The right length, the wrong family. */
    struct sockaddr_in bad = sin;
    bad.sin_family = AF_UNIX;
    peer = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN, &bad, sizeof(bad));
    blob = pack(&peer, &size);
    ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_msg(NULL != strstr(why, "socket address of family"), "%s", why);
    free(blob);
    fi_freeinfo(peer.info);
    fi_freeinfo(ctx.info);
}
END_TEST

START_TEST(address_blob_of_another_provider_is_unreachable_not_malformed)
{
    struct sockaddr_in sin = ipv4("192.0.2.2");
    opal_common_ofi_ctx_t ctx = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN, &sin, sizeof(sin));
    opal_common_ofi_ctx_t peer = fake_ctx("udp;ofi_rxd", FI_SOCKADDR_IN, &sin, sizeof(sin));
    char why[160];
    size_t size = 0;
    uint8_t *blob = pack(&peer, &size);
    ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_str_eq(why, "it uses provider udp;ofi_rxd, this process tcp;ofi_rxm");
    free(blob);
    fi_freeinfo(peer.info);

    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
    peer = fake_ctx("tcp;ofi_rxm", FI_SOCKADDR_IN6, &sin6, sizeof(sin6));
    blob = pack(&peer, &size);
    ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_msg(NULL != strstr(why, "FI_SOCKADDR_IN6"), "%s", why);
    free(blob);
    fi_freeinfo(peer.info);
    fi_freeinfo(ctx.info);
}
END_TEST

START_TEST(address_blob_checks_string_addresses)
{
    const char good[16] = "fi_shm://4711";
    opal_common_ofi_ctx_t ctx = fake_ctx("shm", FI_ADDR_STR, good, sizeof(good));
    char why[160];
    size_t size = 0;
    uint8_t *blob = pack(&ctx, &size);
    ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_SUCCESS);
    free(blob);

    static const struct {
        const char bytes[16];
        const char *reason;
    } bad[] = {
        {"fi_shm://4711\n", "string address holds a non-printable byte 0x0a at 13"},
        {"\0fi_shm://4711", "string address of 16 bytes is empty"},
        {"fi_shm:4711", "string address \"fi_shm:4711\" has no scheme"},
        {"fi_shm://47\0x", "string address has bytes after its end"},
        {"0123456789abcdef", "string address of 16 bytes is not terminated"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        opal_common_ofi_ctx_t peer = fake_ctx("shm", FI_ADDR_STR, bad[i].bytes, 16);
        blob = pack(&peer, &size);
        ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_ERR_BAD_VALUE);
        ck_assert_str_eq(why, bad[i].reason);
        free(blob);
        fi_freeinfo(peer.info);
    }
    fi_freeinfo(ctx.info);
}
END_TEST

START_TEST(address_blob_binary_formats_have_one_length)
{
    const uint8_t psm2[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    opal_common_ofi_ctx_t ctx = fake_ctx("psm2", FI_ADDR_PSMX2, psm2, sizeof(psm2));
    opal_common_ofi_ctx_t peer = fake_ctx("psm2", FI_ADDR_PSMX2, psm2, 8);
    char why[160];
    size_t size = 0;
    uint8_t *blob = pack(&peer, &size);
    ck_assert_int_eq(unpack(&ctx, blob, size, why), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(why, "address of 8 bytes, expected 16 for a provider-specific format");
    free(blob);
    fi_freeinfo(peer.info);
    fi_freeinfo(ctx.info);
}
END_TEST

/* ---------------------------------------------- choice on this libfabric */

/* Whether libfabric offers provider for reliable datagram messages here;
 * when not, says so (a test that needs it cannot run). */
static bool provider_here(const char *provider)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup(provider);
    int rc = fi_getinfo(opal_common_ofi_api_version(), NULL, NULL, 0, hints, &info);
    fi_freeinfo(hints);
    if (0 != rc) {
        printf("libfabric has no %s provider here (fi_getinfo: %s): the %s cases cannot run\n",
               provider, fi_strerror(-rc), provider);
        return false;
    }
    fi_freeinfo(info);
    return true;
}

static const opal_common_ofi_want_t want_rdm = {
    .ep_type = FI_EP_RDM,
    .caps_required = FI_MSG,
    .caps_desired = FI_RMA | FI_MULTI_RECV,
    .msg_order = FI_ORDER_SAS,
    .cq_data_size = 8,
    .threading = FI_THREAD_DOMAIN,
};

/* The var system up with the ofi_* variables; values set as from the
 * command line. */
static void vars_with(const char *name, const char *value, const char *name2, const char *value2)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_common_ofi_register(NULL), OPAL_SUCCESS);
    char *keys[2] = {(char *) name, (char *) name2}, *values[2] = {(char *) value, (char *) value2};
    ck_assert_int_eq(mca_base_var_process_cmdline(NULL != name2 ? 2 : 1, keys, values),
                     OPAL_SUCCESS);
}

static struct fi_info *choose_ok(void)
{
    struct fi_info *info = NULL;
    char *why = NULL;
    int rc = opal_common_ofi_choose(&want_rdm, -1, &info, &why);
    ck_assert_msg(OPAL_SUCCESS == rc, "choose failed: %s", NULL != why ? why : "?");
    ck_assert_ptr_null(why);
    ck_assert_ptr_nonnull(info);
    return info;
}

START_TEST(choice_follows_the_include_list)
{
    if (!provider_here("tcp")) {
        return;
    }
    vars_with("ofi_provider_include", "tcp;ofi_rxm", NULL, NULL);
    struct fi_info *info = choose_ok();
    ck_assert_str_eq(info->fabric_attr->prov_name, "tcp;ofi_rxm");
    ck_assert(0 != (info->caps & FI_MSG));
    ck_assert(info->domain_attr->cq_data_size >= 8);
    ck_assert(0 != (info->tx_attr->msg_order & FI_ORDER_SAS));
    fi_freeinfo(info);
}
END_TEST

START_TEST(choice_takes_the_include_lists_order)
{
    if (!provider_here("tcp") || !provider_here("shm")) {
        return;
    }
    vars_with("ofi_provider_include", "shm,tcp", NULL, NULL);
    struct fi_info *info = choose_ok();
    ck_assert_str_eq(info->fabric_attr->prov_name, "shm");
    fi_freeinfo(info);
}
END_TEST

START_TEST(choice_takes_desired_capabilities_when_offered)
{
    if (!provider_here("tcp")) {
        return;
    }
    vars_with("ofi_provider_include", "tcp", NULL, NULL);
    struct fi_info *info = choose_ok();
    /* rxm over tcp does RMA and multi-receive. */
    ck_assert(0 != (info->caps & FI_RMA));
    ck_assert(0 != (info->caps & FI_MULTI_RECV));
    fi_freeinfo(info);
}
END_TEST

START_TEST(choice_domain_and_interface_lists_narrow_it)
{
    if (!provider_here("tcp")) {
        return;
    }
    vars_with("ofi_provider_include", "tcp", "ofi_domain_include", "lo");
    struct fi_info *info = choose_ok();
    ck_assert_str_eq(info->domain_attr->name, "lo");
    fi_freeinfo(info);
    mvt_teardown();
    mvt_setup();
    vars_with("ofi_provider_include", "tcp", "ofi_if_include", "127.0.0.0/8");
    info = choose_ok();
    ck_assert_str_eq(info->domain_attr->name, "lo");
    ck_assert_uint_eq(info->addr_format, FI_SOCKADDR_IN);
    fi_freeinfo(info);
}
END_TEST

START_TEST(choice_says_why_nothing_fits)
{
    vars_with("ofi_provider_include", "nosuchprovider", NULL, NULL);
    struct fi_info *info = NULL;
    char *why = NULL;
    ck_assert_int_eq(opal_common_ofi_choose(&want_rdm, -1, &info, &why), OPAL_ERR_NOT_AVAILABLE);
    ck_assert_ptr_null(info);
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(NULL != strstr(why, "no libfabric provider fits") &&
                      NULL != strstr(why, "not in ofi_provider_include=nosuchprovider"),
                  "%s", why);
    free(why);
}
END_TEST

START_TEST(choice_names_the_exclude_list)
{
    if (!provider_here("tcp")) {
        return;
    }
    vars_with("ofi_provider_include", "tcp", "ofi_provider_exclude", "ofi_rxm");
    struct fi_info *info = NULL;
    char *why = NULL;
    ck_assert_int_eq(opal_common_ofi_choose(&want_rdm, -1, &info, &why), OPAL_ERR_NOT_AVAILABLE);
    ck_assert_msg(NULL != why && NULL != strstr(why, "excluded by ofi_provider_exclude=ofi_rxm "
                                                     "(tcp;ofi_rxm"),
                  "%s", NULL != why ? why : "(null)");
    free(why);
}
END_TEST

START_TEST(choice_refuses_providers_that_cannot_carry_the_cq_data)
{
    if (!provider_here("tcp")) {
        return;
    }
    vars_with("ofi_provider_include", "tcp", NULL, NULL);
    opal_common_ofi_want_t want = want_rdm;
    want.cq_data_size = 4096;
    struct fi_info *info = NULL;
    char *why = NULL;
    ck_assert_int_eq(opal_common_ofi_choose(&want, -1, &info, &why), OPAL_ERR_NOT_AVAILABLE);
    ck_assert_msg(NULL != why && NULL != strstr(why, "remote CQ data (4096 needed)"), "%s",
                  NULL != why ? why : "(null)");
    free(why);
}
END_TEST

/* ------------------------------------------------------------ resources */

static opal_common_ofi_ctx_t open_ctx(const char *provider, bool wait_fd)
{
    vars_with("ofi_provider_include", provider, NULL, NULL);
    struct fi_info *info = choose_ok();
    opal_common_ofi_ctx_t ctx;
    opal_common_ofi_ctx_attr_t attr = {
        .cq_format = FI_CQ_FORMAT_DATA,
        .want_wait_fd = wait_fd,
        .av_type = FI_AV_TABLE,
        .min_multi_recv = 4096,
    };
    char *why = NULL;
    int rc = opal_common_ofi_ctx_open(&ctx, info, &attr, &why);
    ck_assert_msg(OPAL_SUCCESS == rc, "ctx_open: %s", NULL != why ? why : "?");
    return ctx;
}

START_TEST(provider_opens_with_a_wait_fd_and_an_address)
{
    if (!provider_here("tcp")) {
        return;
    }
    opal_common_ofi_ctx_t ctx = open_ctx("tcp;ofi_rxm", true);
    ck_assert_int_ge(ctx.cq_fd, 0);
    ck_assert_uint_eq(ctx.addrlen, sizeof(struct sockaddr_in));
    ck_assert_int_eq(opal_common_ofi_cq_trywait(&ctx), OPAL_SUCCESS);
    opal_common_ofi_ctx_close(&ctx);
    ck_assert_ptr_null(ctx.ep);
    ck_assert_int_eq(ctx.cq_fd, -1);
}
END_TEST

START_TEST(provider_without_a_wait_fd_says_why)
{
    if (!provider_here("shm")) {
        return;
    }
    opal_common_ofi_ctx_t ctx = open_ctx("shm", true);
    ck_assert_int_eq(ctx.cq_fd, -1);
    ck_assert_msg(NULL != strstr(ctx.no_wait_fd_why, "wait fd"), "%s", ctx.no_wait_fd_why);
    opal_common_ofi_ctx_close(&ctx);
}
END_TEST

START_TEST(memory_registers_with_a_key_and_descriptor)
{
    if (!provider_here("tcp")) {
        return;
    }
    opal_common_ofi_ctx_t ctx = open_ctx("tcp;ofi_rxm", false);
    static char region[2][8192];
    opal_common_ofi_mr_t mr[2];
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(opal_common_ofi_mr_register(&ctx, region[i], sizeof(region[i]),
                                                     FI_REMOTE_READ | FI_REMOTE_WRITE, &mr[i]),
                         OPAL_SUCCESS);
        ck_assert_ptr_nonnull(mr[i].mr);
    }
    /* Keys name regions: two regions, two keys. */
    ck_assert_uint_ne(mr[0].key, mr[1].key);
    for (int i = 0; i < 2; ++i) {
        opal_common_ofi_mr_deregister(&mr[i]);
        ck_assert_ptr_null(mr[i].mr);
    }
    opal_common_ofi_mr_deregister(&mr[0]);
    opal_common_ofi_ctx_close(&ctx);
}
END_TEST

START_TEST(rma_addresses_are_virtual_or_offsets_as_the_provider_says)
{
    opal_common_ofi_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.mr_mode = FI_MR_VIRT_ADDR;
    ck_assert_uint_eq(opal_common_ofi_rma_addr(&ctx, 0x10000, 0x10040), 0x10040);
    ctx.mr_mode = FI_MR_PROV_KEY;
    ck_assert_uint_eq(opal_common_ofi_rma_addr(&ctx, 0x10000, 0x10040), 0x40);
    ck_assert(!opal_common_ofi_needs_local_mr(&ctx));
    ctx.mr_mode |= FI_MR_LOCAL;
    ck_assert(opal_common_ofi_needs_local_mr(&ctx));
}
END_TEST

/* ------------------------------------------------------------ variables */

START_TEST(variables_are_named_ofi_and_read_through_the_variable_system)
{
    vars_with("ofi_provider_include", "shm", NULL, NULL);
    ck_assert_int_ge(mca_base_var_find_by_name("ofi_provider_include"), 0);
    ck_assert_int_ge(mca_base_var_find_by_name("ofi_provider_exclude"), 0);
    ck_assert_int_ge(mca_base_var_find_by_name("ofi_domain_include"), 0);
    ck_assert_int_ge(mca_base_var_find_by_name("ofi_if_include"), 0);
    char *value = opal_common_ofi_var_value("provider_include");
    ck_assert_str_eq(value, "shm");
    free(value);
    /* A second registration (another component) keeps the value. */
    ck_assert_int_eq(opal_common_ofi_register(NULL), OPAL_SUCCESS);
    value = opal_common_ofi_var_value("provider_include");
    ck_assert_str_eq(value, "shm");
    free(value);
    ck_assert_ptr_null(opal_common_ofi_var_value("domain_include"));
    value = opal_common_ofi_var_value("provider_exclude");
    ck_assert_str_eq(value, "sockets,net");
    free(value);
}
END_TEST

START_TEST(unregistered_ofi_variables_are_not_typos)
{
    /* mca_base_open declares the common prefixes (ofi) as it declares the
     * frameworks: set before any component registered them, they are not
     * reported. */
    char *keys[] = {"ofi_provider_include"}, *values[] = {"tcp"};
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_process_cmdline(1, keys, values), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_warning_count(), 0);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(misspelt_ofi_variables_are_reported_once_registered)
{
    char *keys[] = {"ofi_provider_inclde"}, *values[] = {"tcp"};
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_common_ofi_register(NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_process_cmdline(1, keys, values), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_warning_count(), 1);
    ck_assert(mvt_has_message("ofi_provider_inclde", "did you mean ofi_provider_include?", NULL));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("btl_ofi_common");
    OPAL_TEST_ADD(s, provider_item_matches_whole_name_or_one_layer);
    OPAL_TEST_ADD(s, provider_list_gives_first_matching_item_and_ignores_blanks);
    OPAL_TEST_ADD(s, if_include_subnets_contain_addresses);
    OPAL_TEST_ADD(s, if_include_interface_names_hold_their_addresses);
#if OPAL_HAVE_HWLOC
    OPAL_TEST_ADD(s, nic_near_the_binding_ranks_first);
    OPAL_TEST_ADD(s, nic_found_by_pci_address_when_the_domain_name_is_not_a_device);
    OPAL_TEST_ADD(s, nic_locality_unknown_without_a_binding);
#endif
    OPAL_TEST_ADD(s, address_blob_round_trips);
    OPAL_TEST_ADD(s, address_blob_refuses_broken_headers);
    OPAL_TEST_ADD(s, address_blob_refuses_socket_addresses_of_the_wrong_form);
    OPAL_TEST_ADD(s, address_blob_of_another_provider_is_unreachable_not_malformed);
    OPAL_TEST_ADD(s, address_blob_checks_string_addresses);
    OPAL_TEST_ADD(s, address_blob_binary_formats_have_one_length);
    MVT_ADD(s, choice_follows_the_include_list);
    MVT_ADD(s, choice_takes_the_include_lists_order);
    MVT_ADD(s, choice_takes_desired_capabilities_when_offered);
    MVT_ADD(s, choice_domain_and_interface_lists_narrow_it);
    MVT_ADD(s, choice_says_why_nothing_fits);
    MVT_ADD(s, choice_names_the_exclude_list);
    MVT_ADD(s, choice_refuses_providers_that_cannot_carry_the_cq_data);
    MVT_ADD(s, provider_opens_with_a_wait_fd_and_an_address);
    MVT_ADD(s, provider_without_a_wait_fd_says_why);
    MVT_ADD(s, memory_registers_with_a_key_and_descriptor);
    OPAL_TEST_ADD(s, rma_addresses_are_virtual_or_offsets_as_the_provider_says);
    MVT_ADD(s, variables_are_named_ofi_and_read_through_the_variable_system);
    MVT_ADD(s, unregistered_ofi_variables_are_not_typos);
    MVT_ADD(s, misspelt_ofi_variables_are_reported_once_registered);
    return opal_test_run(s);
}
