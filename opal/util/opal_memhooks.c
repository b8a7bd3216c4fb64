/*
 * Memory release hooks by rewriting libc's entry points (x86_64 glibc).
 *
 * The entry of each libc function that gives memory back becomes
 *     movabs $hook, %r11 ; jmp *%r11          (13 bytes)
 * so every caller, libc's own malloc included (it calls the same code
 * through internal aliases), lands in the hook, which tells the
 * subscribers and makes the system call itself with syscall(2): the
 * original code is never run again, so no instruction of it has to be
 * relocated. The hooks stay for the life of the process (libopal is pinned
 * with RTLD_NODELETE so the jump never points into an unloaded library).
 *
 * Subscribers sit in a fixed table read without locks: a release in any
 * thread walks it, counted in `inflight`; unsubscribe clears its slot and
 * waits until no other thread is inside a callback, so the caller may
 * free its context afterwards. Subscribe and unsubscribe serialise on
 * subs_lock; the hooks never take it.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
#define MEMHOOKS_PATCH 1
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <sys/shm.h>
#else
#define MEMHOOKS_PATCH 0
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MEMHOOKS_VALGRIND 1
#endif
#endif
#if !defined(MEMHOOKS_VALGRIND)
#define MEMHOOKS_VALGRIND 0
#endif

#include "opal/util/opal_error.h"
#include "opal/util/opal_memhooks.h"

#define MAX_SUBSCRIBERS 32
#define MODE_ENV        "OPAL_MCA_opal_memhooks"

typedef struct subscriber_t {
    _Atomic(opal_memhooks_release_fn_t) fn;
    /* Written before fn is published, read after fn is seen. */
    void *_Atomic ctx;
} subscriber_t;

static subscriber_t subscribers[MAX_SUBSCRIBERS];
/* Slots ever used (a high-water mark: cleared slots are skipped). */
static atomic_uint nslots;
/* Threads inside notify now, and how many of those frames are this
 * thread's (a callback that releases memory nests). Initial-exec TLS: the
 * hook runs inside malloc, where a lazily allocated TLS block must not be
 * created. */
static atomic_uint inflight;
static __thread unsigned my_inflight __attribute__((tls_model("initial-exec")));
static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;

/* 0: not tried; 1: installed; -1: refused (why says why). */
static atomic_int install_state;
static char why[256];
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t page_size = 4096;

OPAL_MEMHOOKS_CALLBACK static void notify(void *base, size_t size)
{
    if (0 == size || 0 == atomic_load_explicit(&nslots, memory_order_acquire)) {
        return;
    }
    int saved_errno = errno;
    uintptr_t lo = (uintptr_t) base & ~(uintptr_t) (page_size - 1);
    uintptr_t hi = (uintptr_t) base + size;
    hi = hi < lo ? UINTPTR_MAX : (hi + page_size - 1) & ~(uintptr_t) (page_size - 1);
    if (hi <= lo) {
        hi = UINTPTR_MAX;
    }
    /* seq_cst with unsubscribe's store of NULL then load of inflight: one
     * of the two sides sees the other (Dekker). */
    atomic_fetch_add_explicit(&inflight, 1, memory_order_seq_cst);
    my_inflight++;
    unsigned n = atomic_load_explicit(&nslots, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        opal_memhooks_release_fn_t fn =
            atomic_load_explicit(&subscribers[i].fn, memory_order_seq_cst);
        if (NULL != fn) {
            fn((void *) lo, hi - lo,
               atomic_load_explicit(&subscribers[i].ctx, memory_order_relaxed));
        }
    }
    my_inflight--;
    atomic_fetch_sub_explicit(&inflight, 1, memory_order_release);
    errno = saved_errno;
}

#if MEMHOOKS_PATCH

/* ------------------------------------------------------------- the hooks */

extern void *__curbrk;

OPAL_MEMHOOKS_CALLBACK static int hook_munmap(void *addr, size_t len)
{
    notify(addr, len);
    return (int) syscall(SYS_munmap, addr, len);
}

OPAL_MEMHOOKS_CALLBACK static void *hook_mmap(void *addr, size_t len, int prot, int flags, int fd,
                                              off_t off)
{
    /* MAP_FIXED replaces whatever was mapped there. */
    if (0 != (flags & MAP_FIXED)) {
        notify(addr, len);
    }
    return (void *) syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* Declared with the fifth argument fixed: it is only read with
 * MREMAP_FIXED, when the caller passed it. */
OPAL_MEMHOOKS_CALLBACK static void *hook_mremap(void *old, size_t old_size, size_t new_size,
                                                int flags, void *new_addr)
{
    /* MREMAP_FIXED replaces whatever was mapped at the destination. */
    if (0 != (flags & MREMAP_FIXED)) {
        notify(new_addr, new_size);
    }
    void *moved = (void *) syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
    if (MAP_FAILED != moved) {
        if (moved != old) {
            notify(old, old_size);
        } else if (new_size < old_size) {
            size_t keep = (new_size + page_size - 1) & ~(page_size - 1);
            if (keep < old_size) {
                notify((char *) old + keep, old_size - keep);
            }
        }
    }
    return moved;
}

OPAL_MEMHOOKS_CALLBACK static int hook_madvise(void *addr, size_t len, int advice)
{
    switch (advice) {
        case MADV_DONTNEED:
#ifdef MADV_FREE
        case MADV_FREE:
#endif
#ifdef MADV_REMOVE
        case MADV_REMOVE:
#endif
            notify(addr, len);
            break;
        default:
            break;
    }
    return (int) syscall(SYS_madvise, addr, len, advice);
}

/* glibc's brk: the kernel returns the new break (the old one when it
 * refuses), and sbrk reads __curbrk. */
OPAL_MEMHOOKS_CALLBACK static int hook_brk(void *addr)
{
    char *old = __curbrk;
    if (NULL != old && (uintptr_t) addr < (uintptr_t) old) {
        notify(addr, (size_t) (old - (char *) addr));
    }
    void *now = (void *) syscall(SYS_brk, addr);
    __curbrk = now;
    if ((uintptr_t) now < (uintptr_t) addr) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

OPAL_MEMHOOKS_CALLBACK static bool parse_hex(const char **p, const char *end, char stop,
                                             uintptr_t *value)
{
    uintptr_t v = 0;
    const char *s = *p;
    for (; s < end && *s != stop; s++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
        if (d < 0) {
            return false;
        }
        v = v << 4 | (uintptr_t) d;
    }
    if (s == end || s == *p) {
        return false;
    }
    *p = s + 1;
    *value = v;
    return true;
}

/* The size of the mapping starting at addr, from /proc/self/maps, read
 * with system calls into a stack buffer (no allocation in a hook); 0 when
 * not found. */
OPAL_MEMHOOKS_CALLBACK static size_t mapping_size_at(uintptr_t addr)
{
    int fd = (int) syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    char buf[4096];
    size_t have = 0, found = 0;
    for (;;) {
        long got = syscall(SYS_read, fd, buf + have, sizeof(buf) - have);
        if (got <= 0) {
            break;
        }
        have += (size_t) got;
        char *line = buf, *nl;
        while (NULL != (nl = memchr(line, '\n', (size_t) (buf + have - line)))) {
            const char *p = line;
            uintptr_t lo, hi;
            if (parse_hex(&p, nl, '-', &lo) && parse_hex(&p, nl, ' ', &hi) && lo == addr) {
                found = hi > lo ? hi - lo : 0;
                goto out;
            }
            line = nl + 1;
        }
        have -= (size_t) (line - buf);
        memmove(buf, line, have);
        if (have == sizeof(buf)) {
            break; /* a line longer than the buffer: not a maps file we know */
        }
    }
out:
    syscall(SYS_close, fd);
    return found;
}

OPAL_MEMHOOKS_CALLBACK static int hook_shmdt(const void *addr)
{
    size_t size = mapping_size_at((uintptr_t) addr);
    if (size > 0) {
        notify((void *) addr, size);
    }
    return (int) syscall(SYS_shmdt, addr);
}

/* ---------------------------------------------------------- the patching */

#define JUMP_LEN 13

typedef struct patch_t {
    const char *name;
    void *hook;
    unsigned char *target;
    unsigned char jump[JUMP_LEN];
} patch_t;

static patch_t patches[] = {
    {"munmap", (void *) hook_munmap, NULL, {0}}, {"mmap", (void *) hook_mmap, NULL, {0}},
    {"mremap", (void *) hook_mremap, NULL, {0}}, {"madvise", (void *) hook_madvise, NULL, {0}},
    {"brk", (void *) hook_brk, NULL, {0}},       {"shmdt", (void *) hook_shmdt, NULL, {0}},
};
#define NPATCHES (sizeof(patches) / sizeof(patches[0]))

static void make_jump(unsigned char *out, void *to)
{
    uint64_t a = (uint64_t) (uintptr_t) to;
    out[0] = 0x49; /* movabs $to, %r11 */
    out[1] = 0xbb;
    memcpy(out + 2, &a, sizeof(a));
    out[10] = 0x41; /* jmp *%r11 */
    out[11] = 0xff;
    out[12] = 0xe3;
}

/* A first instruction that is already a jump: someone else (Open MPI's
 * memory/patcher, a profiler) redirected the function; writing over it
 * would silently break them. */
static bool looks_redirected(const unsigned char *code)
{
    return 0xe9 == code[0] || 0xeb == code[0] || (0xff == code[0] && 0x25 == code[1]) ||
           ((0x48 == code[0] || 0x49 == code[0]) && (0xb8 <= code[1] && code[1] <= 0xbf));
}

static int write_code(unsigned char *target, const unsigned char *bytes, size_t len)
{
    uintptr_t lo = (uintptr_t) target & ~(uintptr_t) (page_size - 1);
    uintptr_t hi = ((uintptr_t) target + len + page_size - 1) & ~(uintptr_t) (page_size - 1);
    /* Executable while writable: another thread may be running code on
     * the same page. */
    if (0 != mprotect((void *) lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC)) {
        return errno;
    }
    memcpy(target, bytes, len);
    __builtin___clear_cache((char *) target, (char *) target + len);
    (void) mprotect((void *) lo, hi - lo, PROT_READ | PROT_EXEC);
#if MEMHOOKS_VALGRIND
    /* Valgrind runs translations of the code, not the code: drop the
     * stale ones so the jump is seen. */
    VALGRIND_DISCARD_TRANSLATIONS(target, len);
#endif
    return 0;
}

__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return OPAL_ERR_NOT_SUPPORTED;
}

static int install(void)
{
    long page = sysconf(_SC_PAGESIZE);
    page_size = page > 0 ? (size_t) page : 4096;

    void *libc = dlopen(LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
    if (NULL == libc) {
        return refuse("%s is not loaded (%s): no C library to patch", LIBC_SO, dlerror());
    }
    unsigned char saved[NPATCHES][JUMP_LEN];
    int rc = OPAL_SUCCESS;
    for (size_t i = 0; i < NPATCHES; i++) {
        patch_t *p = &patches[i];
        p->target = dlsym(libc, p->name);
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (NULL == p->target || 0 == dladdr1(p->target, &info, (void **) &sym, RTLD_DL_SYMENT) ||
            NULL == sym) {
            rc = refuse("%s has no symbol %s to patch", LIBC_SO, p->name);
            goto out;
        }
        /* The jump must not run into the next function. */
        if (sym->st_size < JUMP_LEN) {
            rc = refuse("%s's %s is too short to redirect", LIBC_SO, p->name);
            goto out;
        }
        if (looks_redirected(p->target)) {
            rc = refuse("%s's %s already starts with a jump: another tool patched it (Open MPI's "
                        "memory/patcher?); not patching over it",
                        LIBC_SO, p->name);
            goto out;
        }
        make_jump(p->jump, p->hook);
    }
    /* The jumps point into this library: keep it loaded for good. */
    Dl_info self;
    if (0 == dladdr((void *) hook_munmap, &self) || NULL == self.dli_fname ||
        NULL == dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
        rc = refuse("cannot pin the library holding the hooks (%s)", dlerror());
        goto out;
    }
    size_t done = 0;
    for (; done < NPATCHES; done++) {
        memcpy(saved[done], patches[done].target, JUMP_LEN);
        int err = write_code(patches[done].target, patches[done].jump, JUMP_LEN);
        if (0 != err) {
            snprintf(why, sizeof(why), "cannot make %s's code writable to patch %s: %s", LIBC_SO,
                     patches[done].name, strerror(err));
            rc = OPAL_ERR_NOT_SUPPORTED;
            break;
        }
    }
    if (OPAL_SUCCESS != rc) {
        while (done-- > 0) {
            (void) write_code(patches[done].target, saved[done], JUMP_LEN);
        }
    }
out:
    dlclose(libc);
    return rc;
}

#else /* !MEMHOOKS_PATCH */

static int install(void)
{
    snprintf(why, sizeof(why),
             "memory release hooks are written for x86_64 Linux with glibc only "
             "(nothing catches munmap or free here)");
    return OPAL_ERR_NOT_SUPPORTED;
}

#endif

/* The MCA variable's value once mca_base_open passed it (install_lock). */
static bool mca_mode_set;
static char mca_mode[65];

void opal_memhooks_set_mode(const char *mode)
{
    pthread_mutex_lock(&install_lock);
    mca_mode_set = NULL != mode;
    snprintf(mca_mode, sizeof(mca_mode), "%s", NULL != mode ? mode : "");
    pthread_mutex_unlock(&install_lock);
}

/* Reads the switch at each subscribe, so a test (or a user) can turn it
 * off. Called with install_lock held. */
static int check_mode(void)
{
    const char *mode = mca_mode_set ? mca_mode : getenv(MODE_ENV);
    const char *source = mca_mode_set ? "MCA variable opal_memhooks" : "environment " MODE_ENV;
    if (NULL == mode || '\0' == mode[0] || 0 == strcmp(mode, "auto")) {
        return OPAL_SUCCESS;
    }
    if (0 == strcmp(mode, "none")) {
        snprintf(why, sizeof(why), "turned off (%s is none)", source);
    } else {
        snprintf(why, sizeof(why), "%s is \"%.64s\": expected auto or none; hooks off", source,
                 mode);
    }
    return OPAL_ERR_NOT_SUPPORTED;
}

/* A sanitizer's malloc (gcc says so by macro, clang by feature). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMHOOKS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MEMHOOKS_SANITIZER 1
#endif
#endif
#if !defined(MEMHOOKS_SANITIZER)
#define MEMHOOKS_SANITIZER 0
#endif

const char *opal_memhooks_free_unseen(void)
{
    if (MEMHOOKS_SANITIZER) {
        return "malloc is the sanitizer's, which unmaps freed blocks behind libc";
    }
#if MEMHOOKS_VALGRIND
    if (RUNNING_ON_VALGRIND) {
        return "malloc is valgrind's, which unmaps freed blocks behind libc";
    }
#endif
    return NULL;
}

int opal_memhooks_subscribe(opal_memhooks_release_fn_t fn, void *ctx)
{
    if (NULL == fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&install_lock);
    int rc = check_mode();
    if (OPAL_SUCCESS == rc) {
        if (0 == atomic_load_explicit(&install_state, memory_order_relaxed)) {
            /* Release: opal_memhooks_active reads patches[] after it. */
            atomic_store_explicit(&install_state, OPAL_SUCCESS == install() ? 1 : -1,
                                  memory_order_release);
        }
        rc = 1 == atomic_load_explicit(&install_state, memory_order_relaxed)
                 ? OPAL_SUCCESS
                 : OPAL_ERR_NOT_SUPPORTED;
    }
    if (OPAL_SUCCESS == rc) {
        why[0] = '\0';
    }
    pthread_mutex_unlock(&install_lock);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }

    pthread_mutex_lock(&subs_lock);
    unsigned n = atomic_load_explicit(&nslots, memory_order_relaxed);
    unsigned i = 0;
    while (i < n && NULL != atomic_load_explicit(&subscribers[i].fn, memory_order_relaxed)) {
        i++;
    }
    if (i == MAX_SUBSCRIBERS) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    } else {
        atomic_store_explicit(&subscribers[i].ctx, ctx, memory_order_relaxed);
        atomic_store_explicit(&subscribers[i].fn, fn, memory_order_seq_cst);
        if (i == n) {
            atomic_store_explicit(&nslots, n + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&subs_lock);
    return rc;
}

void opal_memhooks_unsubscribe(opal_memhooks_release_fn_t fn, void *ctx)
{
    pthread_mutex_lock(&subs_lock);
    unsigned n = atomic_load_explicit(&nslots, memory_order_relaxed);
    for (unsigned i = 0; i < n; i++) {
        if (fn == atomic_load_explicit(&subscribers[i].fn, memory_order_relaxed) &&
            ctx == atomic_load_explicit(&subscribers[i].ctx, memory_order_relaxed)) {
            atomic_store_explicit(&subscribers[i].fn, NULL, memory_order_seq_cst);
            break;
        }
    }
    /* Still holding subs_lock, so the slot is not reused while a thread
     * that read the old fn may still read ctx. Callbacks are short and
     * never block (the header's rule), so this ends. */
    while (atomic_load_explicit(&inflight, memory_order_seq_cst) > my_inflight) {
        sched_yield();
    }
    pthread_mutex_unlock(&subs_lock);
}

/* No lock: registration caches ask at every call. patches[] does not
 * change once install_state is 1. */
bool opal_memhooks_active(void)
{
    bool up = 1 == atomic_load_explicit(&install_state, memory_order_acquire);
#if MEMHOOKS_PATCH
    for (size_t i = 0; up && i < NPATCHES; i++) {
        up = 0 == memcmp(patches[i].target, patches[i].jump, JUMP_LEN);
    }
#endif
    return up;
}

const char *opal_memhooks_why(void)
{
    pthread_mutex_lock(&install_lock);
    const char *w = '\0' == why[0] ? NULL : why;
    pthread_mutex_unlock(&install_lock);
    return w;
}
