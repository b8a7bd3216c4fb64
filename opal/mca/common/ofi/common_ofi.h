/*
 * common/ofi: what every libfabric component (btl/ofi, na/ofi) needs and
 * should do the same way:
 *
 *   variables   ofi_provider_include, ofi_provider_exclude,
 *               ofi_domain_include, ofi_if_include (registered once,
 *               whichever component asks first; opal_info --param ofi all)
 *   choice      fi_getinfo for the capabilities a component wants, the
 *               lists applied, the NIC nearest to the process's binding
 *               preferred (common_ofi_select.c, common_ofi_nic.c)
 *   resources   fabric, domain, address vector, completion queue with a
 *               wait fd when the provider has one, endpoint (common_ofi_ctx.c)
 *   memory      registration under whatever FI_MR_* modes the provider
 *               demands (common_ofi_mr.c)
 *   addresses   this endpoint's address as a modex blob, and a peer's blob
 *               checked before it reaches fi_av_insert (common_ofi_addr.c)
 *   errors      messages naming the operation, the provider and the peer
 *
 * The code is a convenience library linked into each component that uses
 * it (built only when configure found libfabric); nothing here is a hot
 * path except the inline helpers.
 */
#ifndef OPAL_MCA_COMMON_OFI_COMMON_OFI_H
#define OPAL_MCA_COMMON_OFI_COMMON_OFI_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "opal/mca/mca.h"
#include "opal/threads/opal_atomic.h"

/* The libfabric API version asked for: the one compiled against, or the
 * library's own when it is older (a binary built on a newer release). */
uint32_t opal_common_ofi_api_version(void);

/* ------------------------------------------------------------ variables */

/* Where the variables are bound (in the copy registered last); read them
 * with opal_common_ofi_var_value. */
typedef struct opal_common_ofi_vars_t {
    /* Comma lists; NULL or "" when unset. A provider item is a full name
     * ("tcp;ofi_rxm") or one layer of it ("tcp" matches "tcp;ofi_rxm"). */
    char *provider_include;
    char *provider_exclude;
    /* Domain names as fi_info shows them (eth0, mlx5_0, shm). */
    char *domain_include;
    /* Interface names (eth0) or IP subnets (192.0.2.0/24) that the
     * provider's source address must be on; providers without an IP source
     * address (shm) are not affected. */
    char *if_include;
    /* SO_RCVBUF of the udp provider's socket (0: the kernel's default). */
    size_t udp_socket_buffer;
} opal_common_ofi_vars_t;

/* ofi_udp_socket_buffer's default: 4 MiB. */
#define OPAL_COMMON_OFI_UDP_SOCKET_BUFFER ((size_t) 4 << 20)

extern opal_common_ofi_vars_t opal_common_ofi_vars;

/* The current value of ofi_<name> ("provider_include"), malloc'd, or NULL
 * when it is unset or empty (or not registered). */
char *opal_common_ofi_var_value(const char *name);

/* The current value of the size variable ofi_<name>, or fallback when it
 * is not registered. */
size_t opal_common_ofi_var_size(const char *name, size_t fallback);

/* Registers the ofi_* variables (project opal, framework "ofi", no
 * component) the first time and rebinds them here on later calls; call
 * from a component's register hook. component names the caller in
 * verbose output only. Returns OPAL_SUCCESS or the variable system's
 * error. The variables are deregistered when the code holding their
 * storage is unloaded. */
int opal_common_ofi_register(const mca_base_component_t *component);

/* Loads libfabric (OPAL_OFI_LIBRARY, found by configure) once, and keeps
 * it and the provider libraries it pulled in mapped until the process
 * exits (their memory hooks and threads do not survive being unmapped).
 * Nothing loads it before a component needs a provider: registering and
 * listing the ofi variables does not (common_ofi_lib.c says why).
 * OPAL_SUCCESS, or OPAL_ERR_NOT_AVAILABLE with *why (static text; why may
 * be NULL) saying what dlopen said. Thread-safe. */
int opal_common_ofi_load(const char **why);

/* The functions libfabric exports, called through the loaded library
 * (each loads it first; without it they fail with -FI_ENOSYS, NULL, 0 or
 * a text saying so). The rest of the API is inline in libfabric's
 * headers, through the fids' operation tables. */
int opal_common_ofi_fi_getinfo(uint32_t version, const char *node, const char *service,
                               uint64_t flags, const struct fi_info *hints, struct fi_info **info);
void opal_common_ofi_fi_freeinfo(struct fi_info *info);
struct fi_info *opal_common_ofi_fi_dupinfo(const struct fi_info *info);
int opal_common_ofi_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
                              void *context);
uint32_t opal_common_ofi_fi_version(void);
const char *opal_common_ofi_fi_strerror(int errnum);

/* From here on the ofi code's fi_* calls go through the loaded library
 * (libfabric's own inline fi_allocinfo would not: use fi_dupinfo(NULL)). */
#define fi_getinfo  opal_common_ofi_fi_getinfo
#define fi_freeinfo opal_common_ofi_fi_freeinfo
#define fi_dupinfo  opal_common_ofi_fi_dupinfo
#define fi_fabric   opal_common_ofi_fi_fabric
#define fi_version  opal_common_ofi_fi_version
#define fi_strerror opal_common_ofi_fi_strerror

/* ------------------------------------------------------------- choice */

/* What a component asks of a provider. */
typedef struct opal_common_ofi_want_t {
    enum fi_ep_type ep_type;
    /* Capabilities without which a provider is useless (FI_MSG), and those
     * used when offered (FI_RMA, FI_MULTI_RECV): each provider is taken
     * with as many of the desired ones as it has. */
    uint64_t caps_required;
    uint64_t caps_desired;
    /* Message ordering the transmit side must give (FI_ORDER_SAS). */
    uint64_t msg_order;
    /* Remote CQ data bytes the component puts in each message (0: none). */
    size_t cq_data_size;
    /* FI_THREAD_DOMAIN when the component serialises its calls, else
     * FI_THREAD_SAFE. */
    enum fi_threading threading;
    /* NULL, or the one provider to take ("tcp;ofi_rxm"): na/ofi's info
     * string names it (the ofi_* lists still apply, except that the
     * default ofi_provider_exclude does not refuse a provider named here
     * by its whole name: "ofi+net" gets net). */
    const char *prov_name;
    /* NULL, or where to listen (fi_getinfo's node and service with
     * FI_SOURCE): na/ofi's "ofi+tcp://host:port". */
    const char *node;
    const char *service;
} opal_common_ofi_want_t;

/* Chooses the provider and domain to use: fi_getinfo for want, filtered by
 * the ofi_* lists and by want's ordering and CQ data, ordered by the
 * provider include list (its order, when given) then libfabric's own
 * preference, and among the domains of the chosen provider the NIC
 * nearest to this process's binding first. On success *info is the chosen
 * fi_info (the caller fi_freeinfo's it). OPAL_ERR_NOT_AVAILABLE when no
 * provider fits, with *why (malloc'd) saying what was found and why each
 * was left out; verbose output goes to output at levels 10-40. Within a
 * job, FI_UNIVERSE_SIZE is set to the job's size first unless the user
 * set it (rxm sizes its core CQs by it; see common_ofi_select.c). */
int opal_common_ofi_choose(const opal_common_ofi_want_t *want, int output, struct fi_info **info,
                           char **why);

/* Whether provider name prov_name matches one item of a comma list (see
 * opal_common_ofi_vars_t); the index of the first matching item in *index
 * when index is not NULL. */
bool opal_common_ofi_provider_listed(const char *list, const char *prov_name, int *index);

/* Whether an IP address (struct sockaddr_in / sockaddr_in6) matches an
 * item of an ofi_if_include list: an interface that holds it (by name) or
 * a subnet (a.b.c.d/n, x::y/n) that contains it. */
bool opal_common_ofi_if_listed(const char *list, const void *sockaddr, size_t len);

struct hwloc_topology;

/* Ranks candidate domains by how near their NIC is to cpuset (a binding
 * as a list string; NULL or "": not bound), as opal_device_near_rank
 * does: rank[i] is 0 for a NIC whose locality covers part of cpuset, 2
 * when it is elsewhere, 1 when unknown (no such device in topology, or
 * one hung off the machine itself). domains[i] is matched against hwloc's
 * OS devices (network interfaces, OpenFabrics devices) and pci_busids[i]
 * (NULL or "dddd:bb:dd.f") against its PCI devices. topology NULL: this
 * machine's, with I/O devices (loaded only when cpuset is set). */
int opal_common_ofi_nic_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                             const char *const *domains, const char *const *pci_busids, int *rank);

/* ----------------------------------------------------------- resources */

/* What a component opens on the chosen provider. */
typedef struct opal_common_ofi_ctx_attr_t {
    enum fi_cq_format cq_format;
    size_t cq_size;
    /* Ask for FI_WAIT_FD; a provider that has none is used without. */
    bool want_wait_fd;
    /* Used when the provider does not name one (FI_AV_TABLE: fi_addr_t
     * are small indices). */
    enum fi_av_type av_type;
    /* FI_OPT_MIN_MULTI_RECV for a provider with FI_MULTI_RECV (0: its
     * default): a multi-receive buffer is released once less than this
     * is left in it. */
    size_t min_multi_recv;
    /* A name for the endpoint when the provider names it after a file
     * (shm: /dev/shm/<name>), or NULL for the provider's own (shm's is
     * "<pid>:<domain>:<endpoint>": see opal_common_ofi_shm_sweep). A
     * launcher that sweeps its job's files away afterwards hands out a
     * prefix to build it with. A stale file of that name is removed
     * first. */
    const char *shm_ep_name;
    /* Where verbose messages go (0 when the caller has no stream). */
    int output;
} opal_common_ofi_ctx_attr_t;

/* Everything opened on one provider; fields are read-only to users. */
typedef struct opal_common_ofi_ctx_t {
    struct fi_info *info; /* owned */
    const char *prov_name;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    /* The CQ's wait fd for opal_progress_fd_register, or -1 (with the
     * reason in no_wait_fd_why). */
    int cq_fd;
    char no_wait_fd_why[96];
    /* The FI_MR_* bits the provider demands. */
    uint64_t mr_mode;
    /* Next key asked for when the provider does not choose them (taken
     * with a relaxed fetch-add: only uniqueness matters). */
    opal_atomic_int64_t next_key;
    /* This endpoint's address. */
    uint8_t addr[256];
    size_t addrlen;
    /* Set by the user when a peer died: a provider may then keep objects
     * of its own on the domain for good (rxm in libfabric 1.17 keeps the
     * registrations of rendezvous transfers with the peer that never
     * finished), so a busy domain or fabric at close is expected and
     * reported only at a high verbosity. */
    bool peer_lost;
} opal_common_ofi_ctx_t;

/*
 * The shm provider's own files. Without a name, shm calls an endpoint's
 * file /dev/shm/<pid>:<domain>:<endpoint> (16 MiB) and removes it only
 * when the endpoint is closed: a process that is killed, or exits without
 * closing it, leaves it behind, and a later process that gets the same
 * pid then fails to open shm ("fi_enable ... Device or resource busy").
 * opal_common_ofi_shm_sweep removes, of this user's files so named:
 *   - those whose pid no process has;
 *   - those with this process's pid last written before it started (a
 *     dead process with the same pid left them: this process's own are
 *     newer).
 * A context on shm without a name runs it before it enables the
 * endpoint; na/ofi's cleanup (opal_info --cleanup) runs it too. Returns
 * how many files it removed; says so on output at verbosity 1.
 * (Naming the endpoint ourselves would avoid the question, but libfabric
 * 1.17's shm then reads memory it does not own when an endpoint inserts
 * its own address, as valgrind shows.)
 */
int opal_common_ofi_shm_sweep(int output);

/* The pid in a name of the shm provider, "<pid>:<n>:<n>" (digits only),
 * or 0 when name is not one. */
pid_t opal_common_ofi_shm_name_pid(const char *name);

/* Opens fabric, domain, CQ (with a wait fd when asked and possible), AV
 * and an endpoint bound to both, enabled; takes ownership of info (also on
 * failure). On failure everything opened is closed, and *why (malloc'd)
 * names the step, the provider and the error. */
int opal_common_ofi_ctx_open(opal_common_ofi_ctx_t *ctx, struct fi_info *info,
                             const opal_common_ofi_ctx_attr_t *attr, char **why);

/* Closes what ctx_open opened (safe on a zeroed or half-opened ctx). */
void opal_common_ofi_ctx_close(opal_common_ofi_ctx_t *ctx);

/* Whether it is safe to sleep on cq_fd now (fi_trywait): OPAL_SUCCESS,
 * or OPAL_ERR_RESOURCE_BUSY when completions are waiting to be read. */
int opal_common_ofi_cq_trywait(opal_common_ofi_ctx_t *ctx);

/* Reads the error entry fi_cq_read announced with -FI_EAVAIL into *entry
 * and writes a description ("Connection reset by peer (provider: ...)")
 * into text. Returns OPAL_SUCCESS, or OPAL_ERR_NOT_FOUND when there was
 * none. */
int opal_common_ofi_cq_readerr(opal_common_ofi_ctx_t *ctx, struct fi_cq_err_entry *entry,
                               char *text, size_t size);

/* Prints an error at verbosity 0: "<who> (<provider>): <op>[ to|from
 * <peer>]: <fi_strerror(rc)>". peer may be NULL. */
void opal_common_ofi_error(const char *who, const opal_common_ofi_ctx_t *ctx, const char *op,
                           const char *peer, ssize_t rc);

/* -------------------------------------------------------------- memory */

/* A registered region. */
typedef struct opal_common_ofi_mr_t {
    struct fid_mr *mr;
    /* For local buffers under FI_MR_LOCAL (NULL when not needed). */
    void *desc;
    /* What a peer names the region by. */
    uint64_t key;
} opal_common_ofi_mr_t;

/* Registers [base, base + size) for access (FI_SEND | FI_RECV | FI_READ |
 * FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE), handling FI_MR_PROV_KEY
 * (the provider's key) or not (a key of ours, unique in the domain),
 * FI_MR_ENDPOINT (bound to the endpoint and enabled) and FI_MR_LOCAL (the
 * descriptor). base must be allocated memory (FI_MR_ALLOCATED). Returns
 * OPAL_SUCCESS or OPAL_ERR_OUT_OF_RESOURCE after printing why. */
int opal_common_ofi_mr_register(opal_common_ofi_ctx_t *ctx, void *base, size_t size,
                                uint64_t access, opal_common_ofi_mr_t *mr);

/* Releases a registration (safe on a zeroed one). */
void opal_common_ofi_mr_deregister(opal_common_ofi_mr_t *mr);

/* The address an RMA operation names for the byte at addr of a peer's
 * region registered at region_base: the virtual address under
 * FI_MR_VIRT_ADDR, the offset into the region otherwise. */
static inline uint64_t opal_common_ofi_rma_addr(const opal_common_ofi_ctx_t *ctx,
                                                uint64_t region_base, uint64_t addr)
{
    return (ctx->mr_mode & FI_MR_VIRT_ADDR) ? addr : addr - region_base;
}

/* Whether local buffers need a registration descriptor. */
static inline bool opal_common_ofi_needs_local_mr(const opal_common_ofi_ctx_t *ctx)
{
    return 0 != (ctx->mr_mode & FI_MR_LOCAL);
}

/* ----------------------------------------------------------- addresses */

/* Longest provider name a blob carries. */
#define OPAL_COMMON_OFI_PROV_NAME_MAX 48

/* A peer's address as unpacked from its blob (pointing into the blob). */
typedef struct opal_common_ofi_peer_addr_t {
    char prov_name[OPAL_COMMON_OFI_PROV_NAME_MAX];
    uint32_t addr_format;
    uint32_t pid;
    /* The peer's opal_pid_space(): its pid means a process here only when
     * this equals this process's own. */
    uint64_t pid_space;
    const uint8_t *addr;
    size_t addrlen;
} opal_common_ofi_peer_addr_t;

/* This endpoint's address with the provider's name, the address format and
 * this process's pid and pid space, as bytes for the modex (*blob
 * malloc'd). */
int opal_common_ofi_addr_pack(const opal_common_ofi_ctx_t *ctx, void **blob, size_t *size);

/* Checks a peer's blob: its header, that it names this provider and
 * address format, and that the address has the form the format implies
 * (a sockaddr of the right family and length, a terminated printable
 * string, ...). OPAL_ERR_BAD_VALUE with the reason in why (e.g. "address
 * of 3 bytes, expected 16 for FI_SOCKADDR_IN") for a malformed blob,
 * OPAL_ERR_NOT_SUPPORTED when the peer uses another provider ("it uses
 * udp;ofi_rxd"). */
int opal_common_ofi_addr_unpack(const opal_common_ofi_ctx_t *ctx, const void *blob, size_t size,
                                opal_common_ofi_peer_addr_t *addr, char *why, size_t why_size);

/* A blob that says why this process has no endpoint (its component
 * declined), so that peers report the reason instead of waiting for an
 * address that never comes (*blob malloc'd; the reason is cut at 255
 * bytes). */
int opal_common_ofi_declined_pack(const char *reason, void **blob, size_t *size);

/* Whether blob is such a declined blob; when it is, its reason (printable
 * characters only, bad bytes shown as '?') in why. */
bool opal_common_ofi_declined_unpack(const void *blob, size_t size, char *why, size_t why_size);

/* Checks that a raw address of len bytes has the form ctx's address
 * format implies (as opal_common_ofi_addr_unpack does for a blob's):
 * OPAL_SUCCESS, or OPAL_ERR_BAD_VALUE with the reason in why. */
int opal_common_ofi_addr_check(const opal_common_ofi_ctx_t *ctx, const void *addr, size_t len,
                               char *why, size_t why_size);

/* Inserts a checked address into the AV; OPAL_ERR_UNREACH with why when
 * the provider refuses it. */
int opal_common_ofi_av_insert(opal_common_ofi_ctx_t *ctx, const opal_common_ofi_peer_addr_t *addr,
                              fi_addr_t *fi_addr, char *why, size_t why_size);

#endif /* OPAL_MCA_COMMON_OFI_COMMON_OFI_H */
