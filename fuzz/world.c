/*
 * world.c - all-ranks runs in one multi-rank host world, invariant I8
 * (see world.h).
 *
 * Rank r's simulator runs zs_scenario_rank_view(s, r) (the program of
 * zs_scenario_for_rank, sharing s's storage), as a coroutine of
 * the caller's thread (cooperative mode, the default) or on its own thread
 * (rank 0 on the caller's).  Its host backend is joined to the
 * world and wrapped in a recorder: every collective the runtime issues
 * (all_gather_start, exchange, reduce_scatter) is appended to the rank's
 * log with its items and a copy of the rank's hook stack at that moment.
 * After every rank finished, the logs are compared (I8) and the verdict is
 * decided as world.h describes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, strtok_r */
#endif
#include "world.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "ranks.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

/* ------------------------------------------------------------------ */
/* Recorder backend                                                     */
/* ------------------------------------------------------------------ */

enum { WC_GATHER = 0, WC_EXCHANGE = 1, WC_REDUCE = 2 };

typedef struct witem {
    uint32_t param;
    uint32_t elem_size;
    uint64_t numel;
    uint64_t partition_numel;
} witem;

typedef struct wcoll {
    uint8_t kind;     /* WC_* */
    uint8_t op;       /* WC_REDUCE: zo_reduce_op */
    uint32_t n_items; /* WC_GATHER: items[item0 .. item0 + n_items); WC_REDUCE: 1 */
    uint32_t item0;
    uint32_t ctx;     /* the hook stack: index in the rank's ctxs */
    uint64_t bytes;   /* WC_EXCHANGE: message bytes */
    uint64_t hash;    /* WC_EXCHANGE: FNV-1a of the message */
    uint8_t head[16]; /* WC_EXCHANGE: first bytes of the message (for the report) */
} wcoll;

typedef struct wrank {
    int r;
    zs_scenario *s; /* this rank's program */
    zs_sim_opts o;
    zs_sim_result *res;
    int rc;
    /* recorder (rec_wrap) */
    wcoll *c;
    size_t n, cap;
    witem *it;
    size_t n_it, cap_it;
    zs_sim_ctx *ctxs; /* the hook stacks at the collectives, as data (formatted by
                            ctx_of for a report); a repeat of the last one is not stored */
    size_t n_ctx, cap_ctx;
    int nomem;
    const void *sim_handle; /* the rank's simulator (zs_sim_opts.context_handle) */
    /* stop bookkeeping */
    int violated;
    uint64_t n_at_violation;
    int backend_mismatch;         /* a backend call of this rank returned ZO_ERR_COLLECTIVE_MISMATCH */
    int violation_after_mismatch; /* the rank's violation came after that: a consequence (the
                                     runtime may report the failed collective as another error) */
    /* per-rank output streams (trace, events) */
    char *trace_buf, *events_buf;
    size_t trace_len, events_len;
    int joined;    /* its host backend joined the world (rec_wrap ran) */
    int thread_ok; /* runs on its own new thread (th) */
    int pooled;    /* runs on pool worker `pooled - 1` */
    pthread_t th;
} wrank;

static void *wgrow(wrank *R, void *p, size_t *cap, size_t need, size_t sz) {
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(p, nc * sz);
    if (!q) {
        R->nomem = 1;
        return p;
    }
    *cap = nc;
    return q;
}

static uint32_t store_ctx(wrank *R) {
    zs_sim_ctx c;
    zs_sim_context_save(R->sim_handle, &c);
    if (R->n_ctx && !memcmp(&R->ctxs[R->n_ctx - 1], &c, sizeof c)) return (uint32_t)(R->n_ctx - 1);
    R->ctxs = wgrow(R, R->ctxs, &R->cap_ctx, R->n_ctx + 1, sizeof *R->ctxs);
    if (R->nomem) return 0;
    R->ctxs[R->n_ctx] = c;
    return (uint32_t)R->n_ctx++;
}

static wcoll *new_coll(wrank *R, int kind) {
    R->c = wgrow(R, R->c, &R->cap, R->n + 1, sizeof *R->c);
    if (R->nomem) return NULL;
    uint32_t ctx = store_ctx(R);
    if (R->nomem) return NULL;
    wcoll *c = &R->c[R->n++];
    memset(c, 0, sizeof *c);
    c->kind = (uint8_t)kind;
    c->ctx = ctx;
    c->item0 = (uint32_t)R->n_it;
    return c;
}

static witem *new_item(wrank *R) {
    R->it = wgrow(R, R->it, &R->cap_it, R->n_it + 1, sizeof *R->it);
    if (R->nomem) return NULL;
    return &R->it[R->n_it++];
}

/* The recorder: a zo_backend_wrap around the rank's host backend that
 * records each collective as it is issued and notes a
 * ZO_ERR_COLLECTIVE_MISMATCH from the backend. */
static zo_status rec_before(void *user, zo_wrap_call *k) {
    wrank *R = user;
    wcoll *c = NULL;
    switch (k->op) {
    case ZO_WRAP_ALL_GATHER_START:
        c = new_coll(R, WC_GATHER);
        for (size_t i = 0; c && i < k->n; i++) {
            witem *w = new_item(R);
            if (!w) break;
            w->param = k->items[i].param;
            w->elem_size = k->items[i].elem_size;
            w->numel = k->items[i].numel;
            w->partition_numel = k->items[i].partition_numel;
            c = &R->c[R->n - 1];
            c->n_items++;
        }
        break;
    case ZO_WRAP_REDUCE_SCATTER: {
        c = new_coll(R, WC_REDUCE);
        witem *w = c ? new_item(R) : NULL;
        if (w) {
            c = &R->c[R->n - 1];
            c->n_items = 1;
            c->op = (uint8_t)k->reduce_op;
            w->param = k->param;
            w->elem_size = 4;
            w->numel = k->numel;
            w->partition_numel = k->partition_numel;
        }
        break;
    }
    case ZO_WRAP_EXCHANGE:
        c = new_coll(R, WC_EXCHANGE);
        if (c) {
            uint64_t h = 1469598103934665603ull;
            const uint8_t *b = k->send;
            for (size_t i = 0; i < k->bytes; i++) h = (h ^ b[i]) * 1099511628211ull;
            c->bytes = k->bytes;
            c->hash = h;
            memcpy(c->head, k->send, k->bytes < sizeof c->head ? k->bytes : sizeof c->head);
        }
        break;
    default: break;
    }
    return ZO_OK;
}

static zo_status rec_after(void *user, zo_wrap_call *k, zo_status st) {
    wrank *R = user;
    (void)k;
    if (st == ZO_ERR_COLLECTIVE_MISMATCH) R->backend_mismatch = 1;
    return st;
}

static zo_status rec_wrap(void *user, zo_backend *host, zo_backend **out) {
    ((wrank *)user)->joined = 1;
    zo_wrap_hooks h = {.user = user, .name = "world-recorder", .before = rec_before, .after = rec_after};
    return zo_backend_wrap(host, &h, out);
}

/* after the runtime, before the simulator destroys the host backend */
static void rec_unwrap(void *user, zo_backend *wrapped) {
    (void)user;
    zo_backend_destroy(wrapped);
}

static void on_violation(void *user) {
    wrank *R = user;
    if (R->violated) return;
    R->violated = 1;
    R->n_at_violation = R->n;
    R->violation_after_mismatch = R->backend_mismatch;
}

/* A rank's coroutine stack (cooperative mode): mapped on first use and
 * reused by every later world run of the thread. */
typedef struct wstack {
    char *map;   /* the mapping: a guard page, then the stack */
    size_t len;  /* bytes mapped */
    unsigned vg; /* valgrind's id of the stack */
} wstack;

/* Per calling thread, kept across runs (fuzzing and enumeration run worlds
 * back to back): the rank programs (their storage reused), the coroutine
 * stacks; freed when the thread exits. */
typedef struct wcache {
    zs_scenario *rank_own[ZS_MAX_WORLD]; /* the passes each rank's edits change */
    zs_scenario view[ZS_MAX_WORLD];      /* each rank's program: zs_scenario_rank_view */
    wstack stack[ZS_MAX_WORLD];
    struct coop *co; /* the coroutines' state (coop_run), cleared for each run */
} wcache;

static void stack_unmap(wstack *k);

static pthread_key_t g_cache_key;
static pthread_once_t g_cache_once = PTHREAD_ONCE_INIT;
static int g_cache_key_ok;

static void cache_free(void *p) {
    wcache *c = p;
    if (!c) return;
    for (int q = 0; q < ZS_MAX_WORLD; q++) {
        zs_scenario_free(c->rank_own[q]);
        free(c->rank_own[q]);
        stack_unmap(&c->stack[q]);
    }
    free(c->co);
    free(c);
}

static void cache_key_init(void) { g_cache_key_ok = pthread_key_create(&g_cache_key, cache_free) == 0; }

static wcache *cache_get(void) {
    pthread_once(&g_cache_once, cache_key_init);
    if (!g_cache_key_ok) return NULL;
    wcache *c = pthread_getspecific(g_cache_key);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (c && pthread_setspecific(g_cache_key, c) != 0) {
            free(c);
            c = NULL;
        }
    }
    return c;
}

/* Rank R's whole program.  A rank whose host backend never joined (it
 * could not be created) joins and leaves now, so that the others do not
 * wait for it forever. */
static void *rank_main(void *arg) {
    wrank *R = arg;
    R->rc = zs_sim_run(R->s, &R->o, R->res);
    if (!R->joined) {
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        zo_backend *b = NULL;
        hc.world_size = R->s->cfg.world_size;
        hc.rank = R->r;
        hc.world = R->o.world;
        if (zo_backend_host_create(&hc, &b) == ZO_OK) zo_backend_destroy(b);
    }
    return NULL;
}

/* Worker threads kept across runs: creating a thread costs ~360 us under
 * ASan, a third of a 2-rank world run.  One world run at a time uses the
 * pool (others, and a forked child, whose copy has no workers, start
 * their own threads). */
typedef struct wworker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    wrank *job; /* set by the dispatcher, cleared by the worker when the rank finished */
    int up;
} wworker;

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static wworker g_pool[ZS_MAX_WORLD];
static pid_t g_pool_pid;

static void *worker_main(void *arg) {
    wworker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->job) pthread_cond_wait(&w->cv, &w->mu);
        wrank *R = w->job;
        pthread_mutex_unlock(&w->mu);
        rank_main(R);
        pthread_mutex_lock(&w->mu);
        w->job = NULL;
        pthread_cond_broadcast(&w->cv);
    }
    return NULL;
}

/* Takes the pool for one run; 0 if it is busy or this is a forked child. */
static int pool_take(void) {
    if (pthread_mutex_trylock(&g_pool_mu) != 0) return 0;
    if (g_pool_pid && g_pool_pid != getpid()) {
        pthread_mutex_unlock(&g_pool_mu);
        return 0;
    }
    g_pool_pid = getpid();
    return 1;
}

/* Hands rank R to worker i (started on first use); 0 if it cannot. */
static int pool_run(unsigned i, wrank *R) {
    wworker *w = &g_pool[i];
    if (!w->up) {
        if (pthread_mutex_init(&w->mu, NULL)) return 0;
        if (pthread_cond_init(&w->cv, NULL)) {
            pthread_mutex_destroy(&w->mu);
            return 0;
        }
        if (pthread_create(&w->th, NULL, worker_main, w)) {
            pthread_cond_destroy(&w->cv);
            pthread_mutex_destroy(&w->mu);
            return 0;
        }
        pthread_detach(w->th);
        w->up = 1;
    }
    pthread_mutex_lock(&w->mu);
    w->job = R;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 1;
}

static void pool_wait(unsigned i) {
    wworker *w = &g_pool[i];
    pthread_mutex_lock(&w->mu);
    while (w->job) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* ------------------------------------------------------------------ */
/* Cooperative mode: every rank a coroutine of the calling thread        */
/* ------------------------------------------------------------------ */
/*
 * Each rank runs on its own stack (ucontext) and the caller's thread
 * schedules them: rank 0 runs until it blocks in the world (the world's
 * yield hook, zo_host_world_sched), then the next runnable rank, round
 * robin, until every rank finished.  A blocked rank is runnable again once
 * the world completes (or aborts) its collective (the wake hook).  The
 * world decides every outcome from each rank's own calls, so the result is
 * the threaded mode's, byte for byte (tests/fuzz/test_world_modes.c), but
 * for the one answer that depends on the threads' timing there (world.h:
 * whether a wait found its all-gather complete).
 * Would-hang needs nothing of the scheduler: the world declares it when
 * the last rank blocks or leaves, which wakes every blocked rank.
 *
 * Sanitizers: AddressSanitizer is told of every switch
 * (__sanitizer_start/finish_switch_fiber), and swapcontext is called past
 * its ASan interceptor (which would clear the shadow of the whole target
 * stack at every switch and warn once per process; the annotations are
 * the supported way).  Valgrind gets every stack registered.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORLD_ASAN 1
#endif
#endif
#if !defined(WORLD_ASAN) && defined(__SANITIZE_ADDRESS__)
#define WORLD_ASAN 1
#endif
#ifdef WORLD_ASAN
#include <dlfcn.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define WORLD_VALGRIND 1
#endif
#endif

/* Bytes of a rank's stack: what a thread of the threaded mode gets by
 * default on Linux (RLIMIT_STACK's usual 8 MiB), so that a scenario runs in
 * both modes or in neither.  The simulator recurses once per nesting level
 * of module calls: under ASan (-O1) about 2.1 KB a level, 23 KB for the
 * deepest shipped input and 530 KB for a chain of 250 nested calls (the
 * codec's inputs nest at most 254 deep; only a hand-written .scn nested
 * some 3,900 deep would overflow, in both modes).  Pages never touched are
 * never backed by memory, so the reservation costs address space only;
 * the page below the stack is a guard (an overflow faults). */
#define WORLD_STACK (8u << 20)

static void stack_unmap(wstack *k) {
    if (!k->map) return;
#ifdef WORLD_VALGRIND
    VALGRIND_STACK_DEREGISTER(k->vg);
#endif
    munmap(k->map, k->len);
    memset(k, 0, sizeof *k);
}

/* 0, or -1 if the stack cannot be mapped. */
static int stack_get(wstack *k) {
    if (k->map) return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = WORLD_STACK + page;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return -1;
    /* the guard page: an overflow faults instead of writing past the stack */
    if (mprotect(m, page, PROT_NONE) != 0) {
        munmap(m, len);
        return -1;
    }
    k->map = m;
    k->len = len;
#ifdef WORLD_VALGRIND
    k->vg = VALGRIND_STACK_REGISTER(k->map + page, k->map + len);
#endif
    return 0;
}

static char *stack_lo(const wstack *k) { return k->map + (k->len - WORLD_STACK); }

enum { CO_RUN = 0, CO_WAIT = 1, CO_DONE = 2 };

typedef struct coop {
    ucontext_t main_uc;
    const void *main_lo; /* ASan: the caller's stack, learnt at the first switch */
    size_t main_size;
    void *main_fake;
    wrank *R;
    int W, live;
    struct {
        ucontext_t uc;
        void *fake;
        int state; /* CO_* */
    } f[ZS_MAX_WORLD];
    wstack *stk;
} coop;

#ifdef WORLD_ASAN
typedef int (*swap_fn)(ucontext_t *, const ucontext_t *);
static swap_fn g_swap;
static pthread_once_t g_swap_once = PTHREAD_ONCE_INIT;
static void swap_init(void) {
    g_swap = (swap_fn)(uintptr_t)dlsym(RTLD_NEXT, "swapcontext");
    if (!g_swap) g_swap = swapcontext;
}
#define CO_SWAP(from, to) g_swap((from), (to))
#else
#define CO_SWAP(from, to) swapcontext((from), (to))
#endif

/* main -> rank q, back when q yields or finished */
static void co_enter(coop *C, int q) {
#ifdef WORLD_ASAN
    __sanitizer_start_switch_fiber(&C->main_fake, stack_lo(&C->stk[q]), WORLD_STACK);
#endif
    (void)CO_SWAP(&C->main_uc, &C->f[q].uc);
#ifdef WORLD_ASAN
    __sanitizer_finish_switch_fiber(C->main_fake, NULL, NULL);
#endif
}

/* rank q -> main; back when the scheduler resumes q (never once q died) */
static void co_leave(coop *C, int q, int dying) {
#ifdef WORLD_ASAN
    __sanitizer_start_switch_fiber(dying ? NULL : &C->f[q].fake, C->main_lo, C->main_size);
#else
    (void)dying;
#endif
    (void)CO_SWAP(&C->f[q].uc, &C->main_uc);
#ifdef WORLD_ASAN
    __sanitizer_finish_switch_fiber(C->f[q].fake, &C->main_lo, &C->main_size);
#endif
}

static void co_yield (void *user, int rank) {
    coop *C = user;
    C->f[rank].state = CO_WAIT;
    co_leave(C, rank, 0);
}

static void co_wake(void *user, int rank) {
    coop *C = user;
    if (C->f[rank].state == CO_WAIT) C->f[rank].state = CO_RUN;
}

/* makecontext passes ints: the coop pointer in two halves, and the rank */
static void co_main(unsigned hi, unsigned lo, int q) {
    coop *C = (coop *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
#ifdef WORLD_ASAN
    __sanitizer_finish_switch_fiber(NULL, &C->main_lo, &C->main_size);
#endif
    rank_main(&C->R[q]);
    C->f[q].state = CO_DONE;
    C->live--;
    co_leave(C, q, 1);
}

/* Runs ranks 0..W-1 of R as coroutines of this thread in world w.  0, or
 * -1 with a message in err (nothing ran, or - a world that cannot make
 * progress although every rank joined, which the world excludes - the
 * ranks left stuck: their stacks are dropped). */
static int coop_run(wcache *cache, zo_host_world *w, wrank *R, int W, char *err, size_t errlen) {
    /* kept in the thread's cache: a ucontext per rank, some KiB that a
     * fresh allocation would have the sanitizers map and fill every run */
    if (!cache->co) cache->co = malloc(sizeof *cache->co);
    coop *C = cache->co;
    if (!C) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(C, 0, sizeof *C);
#ifdef WORLD_ASAN
    pthread_once(&g_swap_once, swap_init);
#endif
    C->R = R;
    C->W = W;
    C->stk = cache->stack;
    for (int q = 0; q < W; q++) {
        if (stack_get(&cache->stack[q]) != 0) {
            snprintf(err, errlen, "rank %d: cannot map a %u KiB stack", q, WORLD_STACK >> 10);
            return -1;
        }
        if (getcontext(&C->f[q].uc) != 0) {
            snprintf(err, errlen, "rank %d: getcontext failed", q);
            return -1;
        }
        C->f[q].uc.uc_stack.ss_sp = stack_lo(&cache->stack[q]);
        C->f[q].uc.uc_stack.ss_size = WORLD_STACK;
        C->f[q].uc.uc_link = NULL;
        uintptr_t p = (uintptr_t)C;
        makecontext(&C->f[q].uc, (void (*)(void))co_main, 3, (unsigned)(p >> 16 >> 16), (unsigned)(p & 0xffffffffu), q);
    }
    zo_host_world_sched sc = ZO_HOST_WORLD_SCHED_INIT;
    sc.user = C;
    sc.yield = co_yield;
    sc.wake = co_wake;
    if (zo_host_world_set_sched(w, &sc) != ZO_OK) {
        snprintf(err, errlen, "zo_host_world_set_sched: %s", zo_last_error(NULL));
        return -1;
    }
    C->live = W;
    int ret = 0;
    for (int q = 0; C->live;) {
        int k = 0;
        while (k < W && C->f[(q + k) % W].state != CO_RUN) k++;
        if (k == W) {
            /* every rank left waits: a world that cannot progress */
            snprintf(err, errlen, "%d rank(s) wait forever in the world", C->live);
            for (int x = 0; x < W; x++)
                if (C->f[x].state != CO_DONE) stack_unmap(&cache->stack[x]); /* never resumed */
            ret = -1;
            break;
        }
        q = (q + k) % W;
        co_enter(C, q);
        q = (q + 1) % W;
    }
    return ret;
}

/* ------------------------------------------------------------------ */
/* Comparison and report                                                */
/* ------------------------------------------------------------------ */

static int coll_equal(const wrank *A, const wcoll *a, const wrank *B, const wcoll *b) {
    if (a->kind != b->kind || a->n_items != b->n_items) return 0;
    if (a->kind == WC_EXCHANGE) return a->bytes == b->bytes && a->hash == b->hash;
    if (a->kind == WC_REDUCE && a->op != b->op) return 0;
    for (uint32_t i = 0; i < a->n_items; i++) {
        const witem *x = &A->it[a->item0 + i], *y = &B->it[b->item0 + i];
        if (x->param != y->param || x->numel != y->numel || x->partition_numel != y->partition_numel ||
            x->elem_size != y->elem_size)
            return 0;
    }
    return 1;
}

/* First index where the logs of A and B differ (a log that is a strict
 * prefix of the other differs at its end); -1 if identical. */
static int64_t first_diff(const wrank *A, const wrank *B) {
    size_t n = A->n < B->n ? A->n : B->n;
    for (size_t k = 0; k < n; k++)
        if (!coll_equal(A, &A->c[k], B, &B->c[k])) return (int64_t)k;
    return A->n == B->n ? -1 : (int64_t)n;
}

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_put(sbuf *b, const char *fmt, ...) {
    if (b->n + 1 >= b->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k > 0) b->n += (size_t)k < b->cap - b->n ? (size_t)k : b->cap - b->n - 1;
}

static void coll_desc(const wrank *R, const wcoll *c, char *buf, size_t len) {
    sbuf b = {buf, 0, len};
    buf[0] = 0;
    switch (c->kind) {
    case WC_GATHER:
        sb_put(&b, "all-gather [");
        for (uint32_t i = 0; i < c->n_items; i++) {
            const witem *w = &R->it[c->item0 + i];
            if (i == 6 && c->n_items > 7) {
                sb_put(&b, ", +%u more", c->n_items - 6);
                break;
            }
            sb_put(&b, "%sp%u %llux%uB", i ? ", " : "", w->param, (unsigned long long)w->numel, w->elem_size);
        }
        sb_put(&b, "]");
        break;
    case WC_EXCHANGE:
        sb_put(&b, "exchange %lluB [", (unsigned long long)c->bytes);
        for (size_t i = 0; i < sizeof c->head && i < c->bytes; i++) sb_put(&b, "%02x", c->head[i]);
        sb_put(&b, "%s hash %016llx]", c->bytes > sizeof c->head ? "..." : "", (unsigned long long)c->hash);
        break;
    default: {
        const witem *w = &R->it[c->item0];
        sb_put(&b, "reduce-scatter %s [p%u %llu floats]", c->op == ZO_REDUCE_AVG ? "avg" : "sum", w->param,
               (unsigned long long)w->numel);
        break;
    }
    }
}

/* snprintf whose truncation is intended (short forms of long texts) */
static void fmt_trunc(char *dst, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void fmt_trunc(char *dst, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

/* The hook stack at collective c, formatted into buf as zs_sim_context
 * would have at the time into a CTX_LEN buffer. */
#define CTX_LEN 512
static const char *ctx_of(const wrank *R, const wcoll *c, char buf[CTX_LEN]) {
    if (c->ctx < R->n_ctx)
        zs_sim_context_format(R->s, &R->ctxs[c->ctx], buf, CTX_LEN);
    else
        buf[0] = 0;
    return buf;
}

/* "the hook" part of a context: after the last ": " */
static const char *ctx_hook(const char *ctx) {
    const char *h = ctx, *p;
    while ((p = strstr(h, ": ")) != NULL) h = p + 2;
    return h;
}

static void rank_outcome(const wrank *R, const zs_sim_result *res, char *buf, size_t len) {
    if (res->setup_error && !R->violation_after_mismatch)
        snprintf(buf, len, "setup error: %s", res->setup_msg);
    else if (R->violation_after_mismatch)
        snprintf(buf, len,
                 "stopped at a failed collective (the backend returned "
                 "ZO_ERR_COLLECTIVE_MISMATCH; the hook said: %s)",
                 res->v.msg);
    else if (res->collective_mismatch)
        snprintf(buf, len, "stopped at ZO_ERR_COLLECTIVE_MISMATCH (%s)", res->mismatch_msg);
    else if (res->violated) {
        char v[400];
        zs_violation_format(&res->v, v, sizeof v);
        snprintf(buf, len, "%s %s (after %llu collectives)",
                 R->o.stop_on_violation ? "stopped:" : "violated (kept running):", v,
                 (unsigned long long)R->n_at_violation);
    } else if (res->torch_error)
        snprintf(buf, len, "stopped where PyTorch raises: %s", res->torch_msg);
    else
        snprintf(buf, len, "ran to the end");
}

static void side(sbuf *b, const wrank *R, int64_t k, const zs_world_result *r) {
    char d[512];
    if ((size_t)k < R->n) {
        const wcoll *c = &R->c[k];
        coll_desc(R, c, d, sizeof d);
        char cx[CTX_LEN];
        sb_put(b, "rank %d, collective %lld: %s\n    hook stack: %s\n", R->r, (long long)k, d, ctx_of(R, c, cx));
    } else {
        char oc[600];
        rank_outcome(R, &r->rank_result[R->r], oc, sizeof oc);
        sb_put(b, "rank %d: finished after %llu collectives: %s\n", R->r, (unsigned long long)R->n, oc);
        if (r->rank_result[R->r].collective_mismatch && r->rank_result[R->r].mismatch_context[0])
            sb_put(b, "    hook stack: %s\n", r->rank_result[R->r].mismatch_context);
    }
}

static void short_side(char *buf, size_t len, const wrank *R, int64_t k) {
    if ((size_t)k < R->n) {
        char d[160], cx[CTX_LEN];
        coll_desc(R, &R->c[k], d, sizeof d);
        snprintf(buf, len, "rank %d %s at %s", R->r, d, ctx_hook(ctx_of(R, &R->c[k], cx)));
    } else {
        snprintf(buf, len, "rank %d finished after %llu collectives", R->r, (unsigned long long)R->n);
    }
}

static void i8_report(zs_world_result *r, wrank *R, int W, int a, int bb, int64_t d, int policy, int order) {
    sbuf b = {r->report, 0, sizeof r->report};
    const wrank *A = &R[a], *B = &R[bb];
    sb_put(&b,
           "invariant I8 violated: collective sequences differ across ranks (W=%d, policy %s, "
           "order %s)\n",
           W, zs_policy_name((unsigned)policy) ? zs_policy_name((unsigned)policy) : "?",
           order == ZS_ORDER_FUZZED ? "fuzzed" : "engine");
    sb_put(&b, "first difference: collective %lld (rank %d issued %llu, rank %d issued %llu)\n", (long long)d, a,
           (unsigned long long)A->n, bb, (unsigned long long)B->n);
    if (r->world_report[0]) sb_put(&b, "world: %s\n", r->world_report);
    sb_put(&b, "\n");
    side(&b, A, d, r);
    side(&b, B, d, r);
    /* the collectives before: where both ranks still agreed */
    int64_t from = d - 3 < 0 ? 0 : d - 3;
    if (from < d) {
        sb_put(&b, "\nlast matching collectives:\n");
        for (int64_t k = from; k < d; k++) {
            char dsc[400], ca[CTX_LEN], cb[CTX_LEN];
            coll_desc(A, &A->c[k], dsc, sizeof dsc);
            sb_put(&b, "  %lld: %s\n    rank %d: %s\n", (long long)k, dsc, a, ctx_of(A, &A->c[k], ca));
            if (strcmp(ca, ctx_of(B, &B->c[k], cb))) sb_put(&b, "    rank %d: %s\n", bb, cb);
        }
    }
    sb_put(&b, "\nranks:\n");
    for (int q = 0; q < W; q++) {
        char oc[600];
        rank_outcome(&R[q], &r->rank_result[q], oc, sizeof oc);
        sb_put(&b, "  rank %d: %llu collectives, %llu hook calls: %s\n", q, (unsigned long long)R[q].n,
               (unsigned long long)r->rank_result[q].hook_calls, oc);
    }
}

static void finding_report(zs_world_result *r, wrank *R, int W, int q) {
    sbuf b = {r->report, 0, sizeof r->report};
    char line[512];
    zs_violation_format(&r->v, line, sizeof line);
    sb_put(&b, "rank %d: %s\n", q, line);
    sb_put(&b,
           "(root cause: rank %d stopped after %llu collectives, before any difference in the "
           "collective sequences; the other ranks then wait for it)\n",
           q, (unsigned long long)R[q].n_at_violation);
    if (r->world_report[0]) sb_put(&b, "world: %s\n", r->world_report);
    for (int k = 0; k < W; k++) {
        char oc[600];
        rank_outcome(&R[k], &r->rank_result[k], oc, sizeof oc);
        sb_put(&b, "  rank %d: %llu collectives: %s\n", k, (unsigned long long)R[k].n, oc);
    }
}

/* ------------------------------------------------------------------ */
/* Run                                                                  */
/* ------------------------------------------------------------------ */

void zs_world_opts_init(zs_world_opts *wo) { memset(wo, 0, sizeof *wo); }

static void set_setup_error(zs_world_result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_setup_error(zs_world_result *r, const char *fmt, ...) {
    if (r->setup_error) return;
    r->setup_error = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->setup_msg, sizeof r->setup_msg, fmt, ap);
    va_end(ap);
}

static void dump_stream(FILE *f, int q, const char *buf, size_t len) {
    if (!f) return;
    fprintf(f, "# rank %d\n", q);
    if (buf && len) fwrite(buf, 1, len, f);
}

int zs_world_run(const zs_scenario *s, const zs_sim_opts *opts, const zs_world_opts *wopts, zs_world_result *r) {
    zs_sim_opts base;
    if (opts)
        base = *opts;
    else
        zs_sim_opts_init(&base);
    zs_world_opts wo;
    if (wopts)
        wo = *wopts;
    else
        zs_world_opts_init(&wo);
    memset(r, 0, sizeof *r);
    r->divergence = -1;
    r->rank = -1;
    r->div_rank[0] = r->div_rank[1] = -1;
    r->div_kind[0] = r->div_kind[1] = -1;
    int W = s->cfg.world_size;
    r->world_size = W;
    if (W < 1 || W > ZS_MAX_WORLD) {
        set_setup_error(r, "world size %d out of range", W);
        return -1;
    }
    int policy = base.policy >= 0 ? base.policy : s->cfg.policy;
    int order = base.order_mode >= 0 ? base.order_mode : s->cfg.order_mode;

    wrank *R = calloc((size_t)W, sizeof *R);
    if (!R) {
        set_setup_error(r, "out of memory");
        return -1;
    }
    int ret = 0;
    zo_host_world *world = NULL;
    wcache *cache = cache_get();
    if (!cache) {
        set_setup_error(r, "out of memory");
        goto out;
    }
    for (int q = 0; q < W; q++) {
        R[q].r = q;
        R[q].res = &r->rank_result[q];
        if (!cache->rank_own[q]) cache->rank_own[q] = calloc(1, sizeof *cache->rank_own[q]);
        if (!cache->rank_own[q]) {
            set_setup_error(r, "out of memory");
            goto out;
        }
        /* s itself, but for the passes the rank's edits change: no copy */
        R[q].s = &cache->view[q];
        char err[256] = "";
        if (zs_scenario_rank_view(s, (unsigned)q, R[q].s, cache->rank_own[q], err, sizeof err) != 0) {
            set_setup_error(r, "rank %d: zs_scenario_rank_view: %s", q, err);
            goto out;
        }
    }
    zo_status st = zo_host_world_create(W, wo.threads ? NULL : wo.world_alloc, &world);
    if (st) {
        set_setup_error(r, "zo_host_world_create: %s", zo_strerror(st));
        goto out;
    }
    for (int q = 0; q < W; q++) {
        wrank *Q = &R[q];
        Q->o = base;
        Q->o.world = world;
        Q->o.context = NULL; /* saved at each collective (store_ctx), formatted for a report */
        Q->o.context_handle = &Q->sim_handle;
        Q->o.wrap_backend = rec_wrap;
        Q->o.unwrap_backend = rec_unwrap;
        Q->o.wrap_user = Q;
        Q->o.collective_mismatch_stops = 1;
        Q->o.on_violation = on_violation;
        Q->o.violation_user = Q;
        Q->o.abort_on_violation = 0;
        Q->o.stop_on_violation = wo.only_i8 ? 0 : 1;
        Q->o.on_choice = NULL;
        Q->o.allocator = wo.threads ? NULL : wo.rank_alloc[q];
        Q->o.trace = base.trace ? open_memstream(&Q->trace_buf, &Q->trace_len) : NULL;
        Q->o.events = base.events ? open_memstream(&Q->events_buf, &Q->events_len) : NULL;
    }
    int pool = 0;
    if (!wo.threads) {
        /* every rank a coroutine of this thread */
        char err[200];
        if (coop_run(cache, world, R, W, err, sizeof err) != 0) set_setup_error(r, "%s", err);
        goto ran;
    }
    /* ranks 1..W-1 on pool workers (or new threads), rank 0 here */
    pool = pool_take();
    for (int q = 1; q < W; q++) {
        if (pool && pool_run((unsigned)q, &R[q]))
            R[q].pooled = q;
        else
            R[q].thread_ok = pthread_create(&R[q].th, NULL, rank_main, &R[q]) == 0;
    }
    for (int q = 1; q < W; q++)
        if (!R[q].thread_ok && !R[q].pooled) {
            /* this rank never runs: join and leave at once so nobody waits for it */
            zo_host_config hc = ZO_HOST_CONFIG_INIT;
            zo_backend *b = NULL;
            hc.world_size = W;
            hc.rank = q;
            hc.world = world;
            if (zo_backend_host_create(&hc, &b) == ZO_OK) zo_backend_destroy(b);
            set_setup_error(r, "rank %d: cannot start a thread", q);
        }
    rank_main(&R[0]);
    for (int q = 1; q < W; q++) {
        if (R[q].thread_ok) pthread_join(R[q].th, NULL);
        if (R[q].pooled) pool_wait((unsigned)R[q].pooled);
    }
    if (pool) pthread_mutex_unlock(&g_pool_mu);
ran:
    for (int q = 0; q < W; q++) {
        if (R[q].o.trace) fclose(R[q].o.trace);
        if (R[q].o.events) fclose(R[q].o.events);
    }
    for (int q = 0; q < W; q++) dump_stream(base.trace, q, R[q].trace_buf, R[q].trace_len);
    for (int q = 0; q < W; q++) dump_stream(base.events, q, R[q].events_buf, R[q].events_len);

    if (zo_host_world_report(world, r->world_report, sizeof r->world_report) == ZO_OK) r->world_report[0] = 0;
    for (int q = 0; q < W; q++) {
        r->collectives[q] = R[q].n;
        r->mismatched[q] = r->rank_result[q].collective_mismatch || R[q].violation_after_mismatch;
        if (R[q].nomem) set_setup_error(r, "rank %d: out of memory recording collectives", q);
        if (r->rank_result[q].setup_error && !r->rank_result[q].collective_mismatch)
            set_setup_error(r, "rank %d: %s", q, r->rank_result[q].setup_msg);
    }
    if (r->setup_error) {
        ret = -1;
        goto out;
    }

    /* I8: the first index where some rank differs from rank 0 */
    int64_t d = -1;
    int db = -1;
    for (int q = 1; q < W; q++) {
        int64_t k = first_diff(&R[0], &R[q]);
        if (k >= 0 && (d < 0 || k < d)) {
            d = k;
            db = q;
        }
    }
    /* root-cause candidates: ranks that stopped on their own (violation,
     * PyTorch error), the earliest (fewest collectives issued) first */
    int cq = -1;
    uint64_t cn = 0;
    for (int q = 0; q < W; q++) {
        const zs_sim_result *x = &r->rank_result[q];
        uint64_t n;
        if (R[q].violation_after_mismatch) continue; /* a consequence of a mismatch or would-hang */
        if (x->violated && !wo.only_i8)
            n = R[q].n_at_violation;
        else if (x->torch_error && !x->collective_mismatch)
            n = R[q].n;
        else
            continue;
        if (cq < 0 || n < cn) {
            cq = q;
            cn = n;
        }
    }
    if (cq >= 0 && (d < 0 || (uint64_t)d >= cn)) {
        const zs_sim_result *x = &r->rank_result[cq];
        if (x->violated && !wo.only_i8) {
            r->verdict = x->v.inv;
            r->rank = cq;
            r->violated = 1;
            r->v = x->v;
            finding_report(r, R, W, cq);
            ret = 1;
        } else {
            r->torch_error = 1;
            r->rank = cq;
            snprintf(r->torch_msg, sizeof r->torch_msg, "rank %d: %s", cq, x->torch_msg);
        }
        goto out;
    }
    r->divergence = d;
    if (d >= 0) {
        r->div_kind[0] = (size_t)d < R[0].n ? R[0].c[d].kind : -1;
        r->div_kind[1] = (size_t)d < R[db].n ? R[db].c[d].kind : -1;
    }
    if (d >= 0 && !wo.skip_i8 && !wo.only_i8 && wo.blame_runtime) {
        int verify = base.verify_collectives >= 0 ? base.verify_collectives : s->cfg.verify_collectives;
        r->i8_program = !zs_world_i8_runtime_blamed(s, r, verify);
    }
    if (d >= 0 && (wo.skip_i8 || r->i8_program)) {
        r->div_rank[0] = 0;
        r->div_rank[1] = db;
        goto out; /* measured, not a finding */
    }
    if (d >= 0) {
        r->verdict = ZS_INV_I8;
        r->violated = 1;
        r->divergence = d;
        r->div_rank[0] = 0;
        r->div_rank[1] = db;
        zs_violation *v = &r->v;
        memset(v, 0, sizeof *v);
        v->inv = ZS_INV_I8;
        v->policy = policy;
        v->module = -1;
        v->param = -1;
        v->step = -1;
        const wrank *A = (size_t)d < R[0].n ? &R[0] : &R[db];
        const wcoll *c = &A->c[d];
        char cxb[CTX_LEN];
        const char *cx = ctx_of(A, c, cxb);
        int stp;
        if (sscanf(cx, "step %d", &stp) == 1) v->step = stp;
        v->event = (uint64_t)d;
        snprintf(v->what, sizeof v->what, "collective %lld", (long long)d);
        if (c->kind != WC_EXCHANGE && c->n_items) v->param = A->it[c->item0].param;
        char sa[200], sb2[200];
        short_side(sa, sizeof sa, &R[0], d);
        short_side(sb2, sizeof sb2, &R[db], d);
        fmt_trunc(v->msg, sizeof v->msg, "collective %lld: %s vs %s", (long long)d, sa, sb2);
        i8_report(r, R, W, 0, db, d, policy, order);
        ret = 1;
        goto out;
    }
    int any_mm = 0;
    for (int q = 0; q < W; q++) any_mm |= r->mismatched[q];
    if (any_mm || (r->world_report[0] && !wo.skip_i8)) {
        /* a mismatch or would-hang while every rank issued the same
         * collectives: the world or the runtime is wrong */
        r->verdict = ZS_INV_ERR;
        r->violated = 1;
        zs_violation *v = &r->v;
        memset(v, 0, sizeof *v);
        v->inv = ZS_INV_ERR;
        v->policy = policy;
        v->module = v->param = -1;
        v->step = -1;
        snprintf(v->what, sizeof v->what, "world");
        fmt_trunc(v->msg, sizeof v->msg,
                  "collective mismatch reported although every rank issued the same %llu collectives: %s",
                  (unsigned long long)R[0].n, r->world_report);
        for (int q = 0; q < W; q++)
            if (r->mismatched[q]) {
                r->rank = q;
                break;
            }
        finding_report(r, R, W, r->rank < 0 ? 0 : r->rank);
        ret = 1;
    }

out:
    if (ret > 0 && wo.report) {
        char line[512];
        zs_violation_format(&r->v, line, sizeof line);
        fprintf(wo.report, "%s\n%s", line, r->report);
    }
    if (ret > 0 && base.abort_on_violation) {
        char line[512];
        zs_violation_format(&r->v, line, sizeof line);
        fprintf(stderr, "zofuzz: %s (all %d ranks)\n%s", line, W, r->report);
        fflush(stderr);
        abort();
    }
    if (world) {
        zo_status dst = zo_host_world_destroy(world);
        if (dst && !r->setup_error && ret >= 0) {
            set_setup_error(r, "zo_host_world_destroy: %s", zo_strerror(dst));
            ret = -1;
        }
    }
    for (int q = 0; q < W; q++) {
        free(R[q].c);
        free(R[q].it);
        free(R[q].ctxs);
        free(R[q].trace_buf);
        free(R[q].events_buf);
    }
    free(R);
    if (r->setup_error) ret = -1;
    return ret;
}

void zs_world_to_sim_result(const zs_world_result *w, zs_sim_result *r) {
    memset(r, 0, sizeof *r);
    r->violated = w->violated;
    r->v = w->v;
    r->torch_error = w->torch_error;
    fmt_trunc(r->torch_msg, sizeof r->torch_msg, "%s", w->torch_msg);
    r->setup_error = w->setup_error;
    snprintf(r->setup_msg, sizeof r->setup_msg, "%s", w->setup_msg);
    for (int q = 0; q < w->world_size && q < ZS_MAX_WORLD; q++) {
        const zs_sim_result *x = &w->rank_result[q];
        r->events += x->events;
        r->hook_calls += x->hook_calls;
        r->backwards += x->backwards;
        r->recomputes += x->recomputes;
        r->i3_checks += x->i3_checks;
        r->i3_hook_checks += x->i3_hook_checks;
        r->i3_hook_misses += x->i3_hook_misses;
        r->collective_mismatch |= x->collective_mismatch;
    }
    if (w->world_size > 0) {
        r->stats = w->rank_result[0].stats;
        memcpy(r->i3_hook_first, w->rank_result[0].i3_hook_first, sizeof r->i3_hook_first);
    }
}

void zs_world_print(FILE *f, const zs_world_result *r) {
    if (r->setup_error) {
        fprintf(f, "setup error: %s\n", r->setup_msg);
        return;
    }
    if (r->violated) {
        char line[512];
        zs_violation_format(&r->v, line, sizeof line);
        if (r->verdict == ZS_INV_I8 || r->rank < 0)
            fprintf(f, "violated: %s\n", line);
        else
            fprintf(f, "violated: %s (rank %d)\n", line, r->rank);
        if (r->report[0]) fprintf(f, "%s", r->report);
        return;
    }
    if (r->torch_error) fprintf(f, "note: PyTorch would raise here (%s); the run stopped\n", r->torch_msg);
    fprintf(f, "all invariants hold, I8 included (W=%d; collectives per rank:", r->world_size);
    for (int q = 0; q < r->world_size; q++) fprintf(f, " %llu", (unsigned long long)r->collectives[q]);
    fprintf(f, ")\n");
}

/* ------------------------------------------------------------------ */
/* Knobs                                                                */
/* ------------------------------------------------------------------ */

int zs_world_protect_routers(zs_scenario *s) {
    int marked = 0;
    for (unsigned i = 0; i < s->n_edits; i++) {
        const zs_rank_edit *e = &s->edit[i];
        if (e->kind != ZS_EDIT_ROUTE || e->step >= s->n_steps) continue;
        const zs_step *st = &s->step[e->step];
        if (e->pass >= st->n_passes || e->call >= st->pass[e->pass].n_calls) continue;
        unsigned callee = st->pass[e->pass].calls[e->call].module;
        if (callee >= s->n_modules) continue;
        unsigned parent = s->mod[callee].parent;
        if (parent == ZS_NONE || (s->mod[parent].flags & ZS_MOD_GATHER_ALWAYS)) continue;
        s->mod[parent].flags |= ZS_MOD_GATHER_ALWAYS;
        if (zs_scenario_validate(s, NULL, 0) != 0)
            s->mod[parent].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
        else
            marked++;
    }
    return marked;
}

int zs_world_keep_edits(zs_scenario *s, unsigned kind_mask) {
    unsigned n = 0;
    for (unsigned i = 0; i < s->n_edits; i++)
        if (s->edit[i].kind < 32 && (kind_mask >> s->edit[i].kind) & 1u) s->edit[n++] = s->edit[i];
    unsigned old = s->n_edits;
    s->n_edits = (uint8_t)n;
    if (n != old && zs_scenario_validate(s, NULL, 0) != 0) s->n_edits = 0;
    return s->n_edits;
}

/* 1 if the subtrees of modules x and y are replicas: the same shape (k-th
 * child to k-th child), module flags, owned parameters (numel, element
 * size, flags, in order) and tied/external uses (the same parameters) - an
 * MoE layer's experts.  Routing between replicas changes which parameters
 * a rank computes with, never the autograd graph's shape around them. */
static int replica_subtrees(const zs_scenario *s, unsigned x, unsigned y, int depth) {
    if (depth > ZS_MAX_MODULES) return 0;
    if (s->mod[x].flags != s->mod[y].flags) return 0;
    /* the parameters x and y own, pairwise in order (two cursors) */
    for (unsigned p = 0, q = 0;; p++, q++) {
        while (p < s->n_params && s->par[p].owner != x) p++;
        while (q < s->n_params && s->par[q].owner != y) q++;
        if (p >= s->n_params || q >= s->n_params) {
            if (p < s->n_params || q < s->n_params) return 0; /* different counts */
            break;
        }
        const zs_param *a = &s->par[p], *b = &s->par[q];
        if (a->numel != b->numel || a->elem_size != b->elem_size || a->flags != b->flags) return 0;
    }
    for (unsigned u = 0; u < s->n_uses; u++) {
        unsigned m = s->use[u].module, q = s->use[u].param, v;
        if (m != x && m != y) continue;
        unsigned other = m == x ? y : x;
        for (v = 0; v < s->n_uses; v++)
            if (s->use[v].module == other && s->use[v].param == q) break;
        if (v == s->n_uses) return 0;
    }
    /* the children, pairwise in order */
    for (unsigned a = 1, b = 1;; a++, b++) {
        while (a < s->n_modules && s->mod[a].parent != x) a++;
        while (b < s->n_modules && s->mod[b].parent != y) b++;
        if (a >= s->n_modules || b >= s->n_modules) return a >= s->n_modules && b >= s->n_modules;
        if (!replica_subtrees(s, a, b, depth + 1)) return 0;
    }
}

int zs_world_i8_runtime_blamed(const zs_scenario *s, const zs_world_result *r, int verify) {
    if (r->divergence < 0) return 0;
    int spmd = 1;
    for (unsigned k = 0; k < s->n_edits && spmd; k++) {
        const zs_rank_edit *e = &s->edit[k];
        if (e->kind != ZS_EDIT_ROUTE || e->step >= s->n_steps || e->pass >= s->step[e->step].n_passes ||
            e->call >= s->step[e->step].pass[e->pass].n_calls) {
            spmd = 0;
            break;
        }
        unsigned callee = s->step[e->step].pass[e->pass].calls[e->call].module;
        if (!zs_module_under_gather_always(s, callee) || e->module >= s->n_modules ||
            !replica_subtrees(s, callee, e->module, 0))
            spmd = 0;
    }
    if (spmd) return 1;
    if (verify)
        for (int i = 0; i < 2; i++)
            if (r->div_kind[i] == ZS_WORLD_GATHER || r->div_kind[i] == ZS_WORLD_REDUCE) return 1;
    return 0;
}

int zs_world_env_set(zs_world_env *e, const char *knob, const char *v, char *err, size_t errlen) {
    if (!strcmp(knob, "invariants")) {
        e->only_i8 = e->skip_i8 = 0;
        e->blame_runtime = !*v || !strcmp(v, "all");
        if (e->blame_runtime) return 0;
        if (!strcmp(v, "I8"))
            e->only_i8 = 1;
        else if (!strcmp(v, "no-I8"))
            e->skip_i8 = 1;
        else if (strcmp(v, "programs")) {
            snprintf(err, errlen, "invariants: 'all', 'programs', 'I8' or 'no-I8', not '%s'", v);
            return -1;
        }
        return 0;
    }
    if (!strcmp(knob, "gather-always")) {
        e->protect_routers = *v && strcmp(v, "0");
        if (e->protect_routers && strcmp(v, "routers")) {
            snprintf(err, errlen, "gather-always: 'routers' or unset, not '%s'", v);
            return -1;
        }
        return 0;
    }
    if (!strcmp(knob, "edits")) {
        if (!strcmp(v, "all")) {
            e->edit_mask = ~0u;
            return 0;
        }
        /* a comma list of distinct kinds, no empty item: a typo never
         * turns into "no edits" or into fewer kinds than written */
        unsigned mask = 0;
        const char *p = v;
        for (;;) {
            size_t len = strcspn(p, ",");
            unsigned k;
            for (k = 0; k < ZS_EDIT_KINDS; k++) {
                const char *nm = zs_edit_kind_name(k);
                if (strlen(nm) == len && !strncmp(p, nm, len)) break;
            }
            if (len == 0) {
                snprintf(err, errlen,
                         "edits: '%s' has an empty item ('all' or a comma list of route, skip, exit, "
                         "raise, skip-step)",
                         v);
                return -1;
            }
            if (k == ZS_EDIT_KINDS) {
                snprintf(err, errlen, "edits: unknown edit kind '%.*s' (route, skip, exit, raise, skip-step)",
                         (int)(len > 64 ? 64 : len), p);
                return -1;
            }
            if (mask & (1u << k)) {
                snprintf(err, errlen, "edits: '%s' names %s twice", v, zs_edit_kind_name(k));
                return -1;
            }
            mask |= 1u << k;
            if (!p[len]) break;
            p += len + 1;
        }
        e->edit_mask = mask;
        return 0;
    }
    if (!strcmp(knob, "ranks")) {
        if (*v && strcmp(v, "coroutines") && strcmp(v, "threads")) {
            snprintf(err, errlen, "ranks: 'coroutines' or 'threads', not '%s'", v);
            return -1;
        }
        e->threads = !strcmp(v, "threads");
        return 0;
    }
    snprintf(err, errlen, "unknown knob '%s'", knob);
    return -1;
}

void zs_world_env_apply(const zs_world_env *e, zs_scenario *s) {
    if (!s->cfg.all_ranks) return;
    if (e->edit_mask != ~0u) zs_world_keep_edits(s, e->edit_mask);
    if (e->protect_routers) zs_world_protect_routers(s);
}
