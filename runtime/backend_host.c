/*
 * backend_host.c - the host backend: an in-process data-parallel world of W
 * ranks that really stores every rank's shard and really copies them in
 * all-gathers.  It is the data plane of the unit tests and fuzz targets and
 * the default backend of a runtime created with zo_config.backend == NULL.
 *
 * Two modes
 *   Single view (zo_host_config.world == NULL): one backend holds all W
 *   ranks' shards and completes every collective alone - one rank's view of
 *   an SPMD world in which every rank does what this one does.
 *   Multi-rank world (zo_host_config.world = a zo_host_world): W backends,
 *   one per rank, each driven by its own runtime on its own thread; rank r
 *   stores only its own shard and the world matches and performs the
 *   collectives across the ranks (section "Multi-rank host world" below and
 *   zoffload_backend.h).  Everything else in this comment holds for both,
 *   except where "world:" says otherwise.
 *
 * Parameter contents
 *   Byte i of parameter p's original full tensor is zo_host_param_byte(p, i):
 *   the 64-bit word w = i / 8 is mixed with p by splitmix64's finaliser,
 *       z = mix64(w * 0x9E3779B97F4A7C15 ^ (p + 1) * 0xD1B54A32D192ED03)
 *   and byte i is byte (i % 8) of z, least significant first.  Cheap (one mix
 *   per 8 bytes), deterministic, different for every parameter and never
 *   constant, so a gather that copies the wrong shard, the wrong parameter or
 *   nothing at all is visible in the content.  (Computed in hostmap.c,
 *   shared with the MPI backend, as are the hash tables below.)
 *
 * Shard layout (DeepSpeed's uniform padded partitions)
 *   shard_bytes = partition_numel * elem_size, partition_numel =
 *   ceil(numel / W).  Rank r's shard holds bytes [r*shard_bytes,
 *   (r+1)*shard_bytes) of the padded full tensor of W*shard_bytes bytes;
 *   bytes at or past numel*elem_size are padding and are zero.  The world is
 *   stored as one block per parameter, rank 0's shard first, so rank r's
 *   shard is block + r*shard_bytes.
 *
 * Physical cap (zo_host_testing.max_bytes_per_param = C > 0, fuzz builds)
 *   Only the first L = min(C, W*shard_bytes) bytes of the padded tensor exist:
 *   rank r stores bytes [r*shard_bytes, min((r+1)*shard_bytes, L)) of its
 *   shard - a full shard for r < L / shard_bytes, a prefix for the rank that
 *   holds byte L-1, nothing for the ranks above it.  full_alloc(bytes) really
 *   allocates zo_host_physical_bytes(bytes) = min(bytes, C) bytes and an
 *   all-gather copies exactly L bytes into it (each rank's stored part to its
 *   place).  Bytes past the cap are neither stored, copied nor allocated;
 *   a checker compares only zo_host_physical_bytes(numel*elem_size) bytes.
 *
 * Completion
 *   Immediate (deferred = 0): all_gather_start copies before returning; the
 *   work is complete.  Deferred (deferred = 1): nothing is copied until
 *   wait() on that work or zo_host_progress(); until then query() reports
 *   not done, so INFLIGHT is observable.  A full buffer is filled with 0xA5
 *   when allocated (fresh or taken from the cache), so data read before the
 *   gather completed is wrong content, not stale-but-right content;
 *   no_poison = 1 skips the fill (content then unspecified until the gather);
 *   no_poison = -1 (ZO_HOST_CONFIG_INIT) follows the build (ZO_BUILD_POISON:
 *   fill in sanitizer/fuzz/test builds, none in a release build).
 *
 * Full buffer cache (zo_host_config.cache_bytes, section "Full buffer cache")
 *   full_free keeps the buffer for reuse while the cached bytes stay within
 *   the budget; full_alloc reuses the most recent one of the same physical
 *   size.  A caching allocator like PyTorch's: without it every fetch of a
 *   parameter above glibc's mmap threshold (up to 32 MiB) was a fresh mmap
 *   whose pages all fault and are zeroed, then an munmap at the release.
 *   no_copy = 1 (control-plane benchmarks): shards are not stored, gathers
 *   copy nothing and full buffers are neither filled nor poisoned - their
 *   content is unspecified.
 *
 *   world: every gather completes when the last rank issues its matching
 *   collective (deferred is ignored, zo_host_progress is a no-op returning
 *   0); a rank sees its work complete only once it observed it (wait, or a
 *   query that said done).  no_copy: nothing stored or moved, as above.
 *
 * Reduce-scatter convention
 *   Single view: the runtime has only this rank's gradient.  Every rank is
 *   taken to have produced that same gradient g, so the backend really
 *   sums the W contributions for its own shard: SUM gives sum_{k<W} g[j]
 *   (W*g up to float rounding), AVG that sum divided by W (g up to rounding);
 *   padding elements of the last shard give 0.
 *   world: a blocking collective matched like the others (also on the op):
 *   rank d's shard_out[i] = sum over ranks s = 0..W-1, in rank order, of
 *   s's full_grad[d * partition_numel + i] (AVG: / W), padding 0.
 *
 * Exchange (ops version 2; the runtime's verify_collectives fingerprint)
 *   1..256 bytes per rank.  Single view: recv receives W copies of send
 *   (every rank is this rank).  world: a blocking matched collective (on
 *   bytes); recv gets rank r's bytes at r * bytes.  Moves data even with
 *   no_copy (it is control data).  Not subject to fault injection: faults
 *   model the data plane, the exchange is the runtime's checking channel.
 *
 * Defensive checks
 *   Every entry validates its arguments and returns a zo_status with a
 *   message in last_error(); nothing aborts.  Parameters, live full buffers
 *   and live works are kept in hash tables, so an unknown, stale or
 *   double-freed handle is reported (or, for the void ops, recorded in
 *   last_error() and ignored), never dereferenced.  The backend also checks the
 *   data-plane protocol it can see: a parameter is in at most one pending
 *   gather, a full buffer belongs to the parameter it is gathered for and is
 *   large enough, and a buffer freed or a parameter removed while its
 *   deferred gather is pending cancels that copy and makes the wait return
 *   ZO_ERR_STATE instead of writing into freed memory.  Single requests
 *   above ZO_HOST_MAX_ALLOC bytes fail with ZO_ERR_NOMEM without reaching the
 *   allocator (sanitizer allocators abort on absurd sizes).
 *
 * Fault injection (zo_host_set_fault)
 *   One armed fault at a time: at the at-th (.. at+count-1-th) all_gather_start
 *   (point GATHER) or completion check - wait() or query() - (point WAIT)
 *   the operation fails transiently (FAIL: returns the status, no effect), is
 *   delayed (DELAY: a gather stays pending until a wait(); a wait sleeps), or
 *   the collective fails (FAIL_WORK: the work completes copying nothing and
 *   reports the status at every later check).  Shards are never modified by
 *   any fault, so a later gather of the same parameter gets the right data.
 *   world: counted per rank as in single view.  GATHER FAIL: nothing issued
 *   (no collective number used - the other ranks then see a different
 *   sequence, as they would with NCCL).  GATHER FAIL_WORK: the collective
 *   runs (this rank still contributes) but delivers nothing to this rank,
 *   whose wait returns the status.  GATHER DELAY: no effect (completion
 *   waits for the ranks anyway).  WAIT FAIL / FAIL_WORK / DELAY: as in single
 *   view for this rank; the other ranks are unaffected.
 *
 * Introspection (backend_host_internal.h) in a world: per rank.
 *   zo_host_shard answers only for the backend's own rank (ZO_ERR_INVALID_ARG
 *   for another rank: that shard lives in another backend); shard_bytes is
 *   this rank's storage; bytes_copied counts bytes delivered into this
 *   rank's buffers (added when the work is observed); pending_works counts
 *   works not yet observed complete.
 *
 * Ownership
 *   Every allocation (context, zo_backend struct, parameter blocks, full
 *   buffers, works) goes through zo_host_config.allocator (malloc/free when
 *   both are NULL).  The zo_backend struct lives inside the context
 *   allocation; ops->destroy frees both, together with whatever the runtime
 *   left behind (parameters, full buffers, works) and the cached buffers.  zo_backend_destroy(b)
 *   is therefore "call b->ops->destroy(b->ctx)", which is how every backend
 *   zoffload creates is freed.
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_host_internal.h"
#include "hostmap.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

/* AddressSanitizer: cached full buffers are poisoned so that a use after
 * full_free is reported as it would be after a real free. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOST_ASAN 1
#endif
#endif
#if !defined(HOST_ASAN) && defined(__SANITIZE_ADDRESS__)
#define HOST_ASAN 1
#endif
#ifdef HOST_ASAN
#include <sanitizer/asan_interface.h>
#define HOST_ASAN_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define HOST_ASAN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define HOST_ASAN_POISON(p, n) ((void)(p), (void)(n))
#define HOST_ASAN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ZO_HOST_MAX_ALLOC ZO__HOST_MAX_ALLOC
#define HOST_POISON ZO__HOST_POISON

typedef struct host_ctx host_ctx;

typedef struct host_work host_work;
typedef struct wentry wentry;

typedef struct host_param {
    zo_param_id id;
    uint32_t elem_size;       /* bytes */
    uint64_t numel;           /* elements */
    uint64_t partition_numel; /* elements per rank */
    uint64_t full_bytes;      /* numel * elem_size */
    uint64_t shard_bytes;     /* partition_numel * elem_size */
    uint64_t padded_bytes;    /* W * shard_bytes */
    uint64_t copy_bytes;      /* L: bytes a gather copies (0 with no_copy) */
    uint64_t stored;          /* bytes in store: L (single view) or this rank's part (world) */
    uint8_t *store;           /* single view: L bytes, rank r's shard at r*shard_bytes;
                                 world: this rank's stored part of its own shard only */
    host_work *pending;       /* deferred gather not completed yet */
    uint64_t mark;            /* duplicate detection inside one group */
} host_param;

typedef struct host_buf host_buf;
struct host_buf {
    zo_param_id param;
    size_t requested; /* bytes asked for */
    size_t capacity;  /* bytes really allocated after the header */
    host_work *pending;
    uint64_t mark;
    /* only while cached (see "Full buffer cache"): */
    host_buf *below;      /* the buffer of the same capacity cached before this one */
    host_buf *next_class; /* only for the top of a capacity's stack: the next capacity's top
                             in the same bucket */
};

#define HOST_BUF_HDR ((sizeof(host_buf) + 63u) & ~(size_t)63u)

/* Buckets of the full buffer cache (a power of two), inline in the context
 * so that caching a buffer never allocates. */
#define HOST_CACHE_BUCKETS 64u

typedef struct host_item {
    zo_param_id param;
    host_param *p;  /* NULL once cancelled by param_remove */
    host_buf *buf;  /* NULL once cancelled by full_free */
    int cancelled;
} host_item;

struct host_work {
    int done;
    int delayed;         /* fault DELAY at GATHER: only wait() completes it */
    zo_status doomed;    /* fault FAIL_WORK at GATHER: completes with this, copying nothing */
    zo_status status;
    size_t n;
    wentry *we;          /* world mode: this rank's entry in its collective until observed */
    host_work *prev, *next; /* list of live works */
    host_item items[];
};

struct host_ctx {
    zo_backend pub; /* the handle given to the caller; lives in this allocation */
    zo_allocator alloc;
    zo_host_world *world; /* NULL: single view */
    int world_size, rank, deferred, no_copy;
    uint64_t cap; /* max_bytes_per_param, 0 = none */
    zo__map params; /* id -> host_param* */
    zo__map bufs;   /* live full buffer (user pointer) -> host_buf* */
    zo__map workset; /* live work -> itself: validation without reading foreign memory */
    host_work *works; /* live works, newest first */
    size_t npending;
    uint64_t mark_gen;
    uint64_t shard_bytes_total, bytes_copied;
    int no_poison;
    uint64_t cache_budget;  /* zo_host_config.cache_bytes */
    uint64_t cache_bytes;   /* capacity bytes of the cached buffers */
    size_t cache_count;     /* cached buffers */
    uint64_t cache_hits;    /* full_alloc served from the cache */
    host_buf *cache[HOST_CACHE_BUCKETS]; /* per bucket: the tops of its capacities' stacks */
    zo_host_fault fault;    /* armed fault (action NONE: none) */
    uint64_t fault_ops[2];  /* operations per zo_host_fault_point since armed */
    uint64_t fault_fired;
    char err[256];
};

static const zo_backend_ops host_ops;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static zo_status fail(host_ctx *c, zo_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return st;
}

static void *h_alloc(host_ctx *c, size_t n) { return zo__host_alloc(&c->alloc, n); }
static void h_free(host_ctx *c, void *p) { zo__host_free(&c->alloc, p); }

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t phys(const host_ctx *c, uint64_t bytes)
{
    return c->cap ? min_u64(bytes, c->cap) : bytes;
}

/* Makes room for one more entry in m; no change on error. */
static zo_status map_reserve(host_ctx *c, zo__map *m)
{
    return zo__map_reserve(m, &c->alloc, c->err, sizeof c->err, "host backend");
}

static host_param *lookup(const host_ctx *c, zo_param_id id) { return zo__map_get(&c->params, id); }

static host_ctx *ctx_of(void *ctx) { return (host_ctx *)ctx; }

static const host_ctx *host_of(const zo_backend *b)
{
    if (!b || b->ops != &host_ops || !b->ctx)
        return NULL;
    return (const host_ctx *)b->ctx;
}

static host_buf *buf_of(void *full) { return (host_buf *)((uint8_t *)full - HOST_BUF_HDR); }
static uint8_t *data_of(host_buf *b) { return (uint8_t *)b + HOST_BUF_HDR; }

/* ------------------------------------------------------------------ */
/* Full buffer cache                                                   */
/* ------------------------------------------------------------------ */

/* Freed full buffers kept for reuse (zo_host_config.cache_bytes), keyed by
 * capacity (the physical bytes after the header).  Intrusive, so caching
 * never allocates (full_free cannot fail): bucket hash(capacity) holds a
 * chain of stack tops, one per capacity, linked by next_class; below each
 * top the older buffers of the same capacity, linked by below (LIFO: the
 * most recently freed buffer, likely still in cache, is reused first).
 * A chain holds one top per distinct capacity in that bucket, so a lookup
 * scans at most the distinct cached sizes hashing there.  A buffer that
 * would take the cached bytes over the budget is really freed; nothing is
 * evicted.  While cached the data part is poisoned for ASan; a cached
 * buffer is not in c->bufs, so full_free / all_gather_start of its stale
 * pointer are reported like those of a freed one. */

static host_buf **cache_bucket(host_ctx *c, size_t capacity)
{
    return &c->cache[zo__mix64((uint64_t)capacity) & (HOST_CACHE_BUCKETS - 1u)];
}

/* Takes the most recently cached buffer of exactly `capacity` bytes, or NULL. */
static host_buf *cache_take(host_ctx *c, size_t capacity)
{
    if (!c->cache_count)
        return NULL;
    host_buf **pp = cache_bucket(c, capacity);
    while (*pp && (*pp)->capacity != capacity)
        pp = &(*pp)->next_class;
    host_buf *b = *pp;
    if (!b)
        return NULL;
    if (b->below) {
        b->below->next_class = b->next_class;
        *pp = b->below;
    } else {
        *pp = b->next_class;
    }
    b->below = b->next_class = NULL;
    c->cache_count--;
    c->cache_bytes -= capacity;
    c->cache_hits++;
    HOST_ASAN_UNPOISON(data_of(b), capacity);
    return b;
}

/* Keeps b (already out of c->bufs) for reuse if it fits the budget;
 * returns 0 if it does not (the caller frees it). */
static int cache_put(host_ctx *c, host_buf *b)
{
    if (b->capacity > c->cache_budget || c->cache_bytes > c->cache_budget - b->capacity)
        return 0;
    host_buf **pp = cache_bucket(c, b->capacity);
    while (*pp && (*pp)->capacity != b->capacity)
        pp = &(*pp)->next_class;
    if (*pp) { /* b becomes the top of its capacity's stack */
        b->below = *pp;
        b->next_class = (*pp)->next_class;
        (*pp)->next_class = NULL;
        *pp = b;
    } else {   /* first buffer of this capacity: a new chain entry */
        b->below = NULL;
        b->next_class = *pp;
        *pp = b;
    }
    b->pending = NULL;
    c->cache_count++;
    c->cache_bytes += b->capacity;
    HOST_ASAN_POISON(data_of(b), b->capacity);
    return 1;
}

/* Really frees every cached buffer (destroy). */
static void cache_free_all(host_ctx *c)
{
    for (size_t i = 0; i < HOST_CACHE_BUCKETS; i++) {
        host_buf *top = c->cache[i];
        while (top) {
            host_buf *next_top = top->next_class;
            for (host_buf *b = top; b;) {
                host_buf *below = b->below;
                /* the allocator may reuse the memory without ASan knowing */
                HOST_ASAN_UNPOISON(data_of(b), b->capacity);
                h_free(c, b);
                b = below;
            }
            top = next_top;
        }
        c->cache[i] = NULL;
    }
    c->cache_count = 0;
    c->cache_bytes = 0;
}

/* The live full buffer `full` of this backend, or NULL: looked up in the
 * buffer table, so a foreign, stale or double-freed pointer is reported,
 * never dereferenced. */
static host_buf *checked_buf(host_ctx *c, void *full)
{
    return full ? zo__map_get(&c->bufs, (uint64_t)(uintptr_t)full) : NULL;
}

/* ------------------------------------------------------------------ */
/* Data movement                                                       */
/* ------------------------------------------------------------------ */

/* The collective itself: every rank contributes its stored part of its
 * shard to its place in the full buffer. */
static void gather_copy(host_ctx *c, const host_param *p, uint8_t *full)
{
    uint64_t L = p->copy_bytes;
    for (int r = 0; r < c->world_size; r++) {
        uint64_t off = (uint64_t)r * p->shard_bytes;
        if (off >= L)
            break;
        uint64_t len = min_u64(p->shard_bytes, L - off);
        memcpy(full + off, p->store + off, (size_t)len);
    }
    c->bytes_copied += L;
}

static void unlink_pending(host_work *w)
{
    for (size_t i = 0; i < w->n; i++) {
        host_item *it = &w->items[i];
        if (it->p && it->p->pending == w)
            it->p->pending = NULL;
        if (it->buf && it->buf->pending == w)
            it->buf->pending = NULL;
    }
}

/* Performs the data movement of a pending work (deferred mode). */
static void complete(host_ctx *c, host_work *w)
{
    if (w->done)
        return;
    size_t cancelled = 0;
    zo_param_id first = ZO_NO_PARAM;
    for (size_t i = 0; i < w->n; i++) {
        host_item *it = &w->items[i];
        if (it->cancelled || !it->p || !it->buf) {
            if (!cancelled++)
                first = it->param;
            continue;
        }
        if (!c->no_copy && !w->doomed)
            gather_copy(c, it->p, data_of(it->buf));
    }
    unlink_pending(w);
    w->done = 1;
    c->npending--;
    if (w->doomed) {
        w->status = w->doomed;
        fail(c, w->doomed, "host backend: injected fault: the all-gather of %zu parameter(s) failed", w->n);
    } else if (cancelled) {
        w->status = ZO_ERR_STATE;
        fail(c, ZO_ERR_STATE,
             "host backend: %zu item(s) of an all-gather were cancelled before it completed "
             "(first: param %u; its full buffer was freed or the parameter removed while in flight)",
             cancelled, (unsigned)first);
    }
}

static host_work *checked_work(host_ctx *c, zo_work *zw)
{
    return zw ? zo__map_get(&c->workset, (uint64_t)(uintptr_t)zw) : NULL;
}

/* Counts one operation at pt; returns the armed fault's action if it
 * applies to this operation, else ZO_HOST_FAULT_NONE. */
static zo_host_fault_action fault_hit(host_ctx *c, zo_host_fault_point pt)
{
    uint64_t n = ++c->fault_ops[pt];
    const zo_host_fault *f = &c->fault;
    if (f->action == ZO_HOST_FAULT_NONE || f->point != pt || f->at == 0 || n < f->at ||
        n - f->at >= (f->count ? f->count : 1u))
        return ZO_HOST_FAULT_NONE;
    c->fault_fired++;
    return f->action;
}

static zo_status fault_status(const host_ctx *c) { return c->fault.status ? c->fault.status : ZO_ERR_BACKEND; }

/* FAIL_WORK at a completion check: the work completes now, copying nothing. */
static void doom_now(host_ctx *c, host_work *w)
{
    if (w->done) {
        if (w->status == ZO_OK)
            w->status = fault_status(c);
        fail(c, w->status, "host backend: injected fault: the all-gather failed");
        return;
    }
    w->doomed = fault_status(c);
    complete(c, w);
}

static void sleep_us(uint32_t us)
{
    if (!us)
        return;
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ------------------------------------------------------------------ */
/* Multi-rank host world                                               */
/* ------------------------------------------------------------------ */
/*
 * One mutex and one condition variable for the whole world.  Every world
 * operation of a rank's backend that touches shared state (issuing,
 * completing, observing, cancelling, leaving) holds the mutex; the data of
 * a completed collective is copied under it by the thread of the rank that
 * issued the collective last, from the source ranks' memory into every
 * destination rank's memory.
 *
 * A rank's k-th collective is a wentry (world-owned, world allocator) in the
 * wcoll of sequence number k.  The entry records what the rank contributes
 * (its stored part of each shard, its send buffer, its gradient) and where
 * its result goes (its full buffers, recv, shard_out).  The owning rank
 * observes the entry's completion at wait(), query() or (blocking calls)
 * right away, and then frees it.  A rank that stops caring before
 * completion (work_free, param_remove, full_free, a FAIL_WORK fault at a
 * wait, leaving the world) cancels its destinations and, for the sources
 * that would go away with its memory, leaves a copy (snapshot) in the
 * entry: the collective still completes for the other ranks exactly as if
 * the rank had stayed, which keeps every outcome independent of timing.
 * (Should that copy not be allocatable, the collective completes with
 * ZO_ERR_NOMEM on every rank - never with wrong bytes.)
 *
 * Determinism: a rank's collective k completes iff every rank issues its
 * k-th collective before the world would hang, and whether that happens
 * depends only on each rank's program (like a Kahn process network: a rank
 * only ever blocks on one of its own collectives).  Its status depends only
 * on the k-th collectives' descriptions.  The only timing-dependent answer
 * is query()'s done flag; a rank's own later outcomes depend on it only if
 * its program branches on it.  For that reason a rank's work counts as
 * complete for this rank only once observed: a full buffer freed (or a
 * parameter removed) while its work is unobserved cancels the item (wait
 * returns ZO_ERR_STATE), even if the data had already arrived.
 *
 * Matching: when the last rank issues collective k, every rank's entry is
 * compared with rank 0's (kind, item count, per item param / numel /
 * partition_numel / elem_size; exchange: bytes; reduce-scatter: also the
 * op).  The first rank that differs is named: "collective 7: rank 0
 * all-gather [p3 1024x4B] vs rank 1 all-gather [p5 1024x4B]" (at most 4
 * items listed, then "... N items").  Every rank's k-th then completes with
 * ZO_ERR_COLLECTIVE_MISMATCH and no data moves; the world goes on (the
 * next collectives are matched normally).
 *
 * Would hang: a rank is blocked while it waits (wait, exchange,
 * reduce-scatter) on an entry not yet done; a rank has left once its
 * backend is destroyed.  When every rank has joined and each is blocked or
 * has left, nothing can ever complete: the finding names the lowest
 * collective k a blocked rank waits on, the lowest rank waiting on it and
 * the lowest rank that never issued k (necessarily one that left - a
 * blocked rank that had not issued k would be waiting on a lower one):
 * "collective 7: would hang: rank 0 waits in all-gather [p3 1024x4B]; rank
 * 1 left after 7 collectives".  When the last rank leaves while some
 * collective was issued by only some ranks (nobody waits on it): "...
 * would hang: rank 0 issued all-gather [...] and left; rank 1 left after 7
 * collectives".  Then every pending entry completes with
 * ZO_ERR_COLLECTIVE_MISMATCH (collective k's with the finding, the others
 * with "collective j aborted: <finding>") and every later collective fails
 * at once ("collective j: not run, the world would hang: <finding>"): the
 * world stays failed.  Each failed call's last_error carries its text.
 * Until every rank has joined (created its backend) nothing is declared: a
 * rank that has not joined yet may still come.  A rank that finishes its
 * program must destroy its backend, or the others wait for it forever -
 * as with NCCL.
 *
 * Findings: the first mismatch or would-hang is kept for
 * zo_host_world_report.  Collectives complete in sequence order (the last
 * rank to issue k issued k-1 before), and a would-hang can only come after
 * every mismatch that will happen, so "first" is deterministic too.
 */

enum { WK_GATHER = 1, WK_EXCHANGE = 2, WK_RS = 3 };

typedef struct witem {
    zo_param_id param;
    uint64_t numel, partition_numel;
    uint32_t elem_size;
    uint64_t shard_bytes, copy_bytes; /* per rank; L (capped padded bytes) */
    const uint8_t *src;               /* this rank's stored part of its shard; may be NULL when 0 bytes */
    uint64_t src_len;
    uint8_t *snap;                    /* world-owned copy of src once the owner's memory may go */
    uint8_t *dst;                     /* this rank's full buffer; NULL: not delivered (cancelled) */
    int lost;                         /* the snapshot could not be allocated: the source is gone */
} witem;

struct wentry {
    int kind, rank;
    uint64_t seq;
    int done;             /* the collective completed (or was aborted) */
    int detached;         /* the owner no longer observes it: freed by the world at completion */
    zo_status status;     /* at done: ZO_OK or ZO_ERR_COLLECTIVE_MISMATCH */
    char *msg;            /* world-owned text for a failed entry (NULL: none) */
    uint64_t copied;      /* bytes delivered into this rank's buffers */
    const void *send;     /* exchange */
    void *recv;
    size_t bytes;
    const float *grad;    /* reduce-scatter */
    float *out;
    zo_reduce_op op;
    size_t n;             /* items (gather: group size; reduce-scatter: 1) */
    witem items[];
};

typedef struct wcoll {
    uint64_t seq;
    int arrived;
    struct wcoll *next;
    wentry *e[]; /* W: rank r's entry, NULL until it issues */
} wcoll;

typedef struct wrank {
    int state;          /* 0 not joined, 1 member, 2 left */
    uint64_t issued;    /* collectives issued (next sequence number) */
    wentry *blocked;    /* the entry it blocks on, or NULL */
} wrank;

struct zo_host_world {
    zo_allocator alloc;
    int W;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int joined, nleft, nblocked, hung;
    int have_cfg, no_copy;
    uint64_t cap;
    wcoll *head, *tail; /* collectives some but not all ranks issued, by sequence number */
    wcoll *spare;       /* one cached wcoll (W pointers) */
    zo_status finding_st;
    char finding[512];
    wrank *r;
};

static void *w_alloc(zo_host_world *w, size_t n) { return zo__host_alloc(&w->alloc, n); }
static void w_free(zo_host_world *w, void *p) { zo__host_free(&w->alloc, p); }

static const char *kind_name(int k)
{
    return k == WK_GATHER ? "all-gather" : k == WK_EXCHANGE ? "exchange" : "reduce-scatter";
}

/* "all-gather [p3 1024x4B, p5 10x2B]", "exchange [64B]", "reduce-scatter [p3 1024x4B sum]" */
static void describe(const wentry *e, char *buf, size_t len)
{
    size_t o = 0;
#define APP(...)                                                           \
    do {                                                                   \
        int k_ = snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__);    \
        if (k_ > 0)                                                        \
            o += (size_t)k_;                                               \
        if (o >= len)                                                      \
            o = len - 1;                                                   \
    } while (0)
    if (!len)
        return;
    buf[0] = '\0';
    APP("%s [", kind_name(e->kind));
    if (e->kind == WK_EXCHANGE) {
        APP("%zuB", e->bytes);
    } else {
        for (size_t i = 0; i < e->n; i++) {
            if (i == 4) {
                APP(", ... %zu items", e->n);
                break;
            }
            APP("%sp%u %llux%uB", i ? ", " : "", (unsigned)e->items[i].param,
                (unsigned long long)e->items[i].numel, (unsigned)e->items[i].elem_size);
        }
        if (e->n == 0)
            APP("no items");
        if (e->kind == WK_RS)
            APP(" %s", e->op == ZO_REDUCE_AVG ? "avg" : "sum");
    }
    APP("]");
#undef APP
}

static int entries_match(const wentry *a, const wentry *b)
{
    if (a->kind != b->kind || a->n != b->n)
        return 0;
    if (a->kind == WK_EXCHANGE)
        return a->bytes == b->bytes;
    if (a->kind == WK_RS && a->op != b->op)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const witem *x = &a->items[i], *y = &b->items[i];
        if (x->param != y->param || x->numel != y->numel || x->partition_numel != y->partition_numel ||
            x->elem_size != y->elem_size)
            return 0;
    }
    return 1;
}

static void entry_free(zo_host_world *w, wentry *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        w_free(w, e->items[i].snap);
    w_free(w, e->msg);
    w_free(w, e);
}

static void entry_set_msg(zo_host_world *w, wentry *e, const char *text)
{
    if (e->msg)
        return;
    size_t n = strlen(text) + 1;
    e->msg = w_alloc(w, n);
    if (e->msg)
        memcpy(e->msg, text, n);
}

static void record_finding(zo_host_world *w, const char *text)
{
    if (w->finding_st != ZO_OK)
        return;
    w->finding_st = ZO_ERR_COLLECTIVE_MISMATCH;
    snprintf(w->finding, sizeof w->finding, "%s", text);
}

/* Marks e complete with status st (text for failures); frees it if detached. */
static void entry_finish(zo_host_world *w, wentry *e, zo_status st, const char *text)
{
    wrank *owner = &w->r[e->rank];
    if (owner->blocked == e) {
        /* its rank can progress again: no longer counted as blocked */
        owner->blocked = NULL;
        w->nblocked--;
    }
    e->status = st;
    if (st != ZO_OK && text)
        entry_set_msg(w, e, text);
    e->done = 1;
    if (e->detached)
        entry_free(w, e);
}

/* The data movement of a matched collective: every rank's contribution to
 * every rank's destination. */
static void coll_move(zo_host_world *w, wcoll *k)
{
    int W = w->W;
    wentry *e0 = k->e[0];
    if (e0->kind == WK_GATHER) {
        if (w->no_copy)
            return;
        for (size_t i = 0; i < e0->n; i++) {
            uint64_t L = e0->items[i].copy_bytes, sb = e0->items[i].shard_bytes;
            for (int d = 0; d < W; d++) {
                witem *dst = &k->e[d]->items[i];
                if (!dst->dst)
                    continue;
                for (int s = 0; s < W; s++) {
                    uint64_t off = (uint64_t)s * sb;
                    if (off >= L)
                        break;
                    const witem *src = &k->e[s]->items[i];
                    uint64_t len = min_u64(min_u64(sb, L - off), src->src_len);
                    const uint8_t *from = src->snap ? src->snap : src->src;
                    if (len && from)
                        memcpy(dst->dst + off, from, (size_t)len);
                }
                k->e[d]->copied += L;
            }
        }
    } else if (e0->kind == WK_EXCHANGE) {
        size_t b = e0->bytes;
        for (int d = 0; d < W; d++)
            for (int s = 0; s < W; s++)
                memcpy((uint8_t *)k->e[d]->recv + (size_t)s * b, k->e[s]->send, b);
    } else {
        uint64_t numel = e0->items[0].numel, pn = e0->items[0].partition_numel;
        for (int d = 0; d < W; d++) {
            float *out = k->e[d]->out;
            for (uint64_t i = 0; i < pn; i++) {
                uint64_t j = (uint64_t)d * pn + i;
                if (j >= numel) {
                    out[i] = 0.0f;
                    continue;
                }
                float acc = 0.0f;
                for (int s = 0; s < W; s++)
                    acc += k->e[s]->grad[j];
                out[i] = e0->op == ZO_REDUCE_AVG ? acc / (float)W : acc;
            }
        }
    }
}

static void coll_unlink_free(zo_host_world *w, wcoll *k)
{
    wcoll **pp = &w->head, *prev = NULL;
    while (*pp && *pp != k) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = k->next;
        if (w->tail == k)
            w->tail = prev;
    }
    if (!w->spare) {
        w->spare = k;
    } else {
        w_free(w, k);
    }
}

/* Every rank issued collective k: match, move, complete. */
static void coll_complete(zo_host_world *w, wcoll *k)
{
    int W = w->W, bad = -1, lost = -1;
    for (int r = 1; r < W && bad < 0; r++)
        if (!entries_match(k->e[0], k->e[r]))
            bad = r;
    for (int r = 0; r < W && bad < 0 && lost < 0; r++)
        for (size_t i = 0; i < k->e[r]->n; i++)
            if (k->e[r]->items[i].lost)
                lost = r;
    if (lost >= 0) {
        char text[200];
        snprintf(text, sizeof text,
                 "collective %llu: out of memory keeping rank %d's contribution after it released it",
                 (unsigned long long)k->seq, lost);
        for (int r = 0; r < W; r++)
            entry_finish(w, k->e[r], ZO_ERR_NOMEM, text);
    } else if (bad < 0) {
        coll_move(w, k);
        for (int r = 0; r < W; r++)
            entry_finish(w, k->e[r], ZO_OK, NULL);
    } else {
        char a[160], b[160], text[512];
        describe(k->e[0], a, sizeof a);
        describe(k->e[bad], b, sizeof b);
        snprintf(text, sizeof text, "collective %llu: rank 0 %s vs rank %d %s", (unsigned long long)k->seq, a,
                 bad, b);
        record_finding(w, text);
        for (int r = 0; r < W; r++)
            entry_finish(w, k->e[r], ZO_ERR_COLLECTIVE_MISMATCH, text);
    }
    coll_unlink_free(w, k);
    pthread_cond_broadcast(&w->cv);
}

/* The world would hang: every pending collective is aborted (collective
 * seq gets the finding itself, the others say they were aborted by it), and
 * every later one fails at once. */
static void world_abort_all(zo_host_world *w, uint64_t seq, const char *finding)
{
    while (w->head) {
        wcoll *k = w->head;
        char text[700];
        snprintf(text, sizeof text, "collective %llu aborted: %s", (unsigned long long)k->seq, finding);
        for (int r = 0; r < w->W; r++)
            if (k->e[r])
                entry_finish(w, k->e[r], ZO_ERR_COLLECTIVE_MISMATCH, k->seq == seq ? finding : text);
        coll_unlink_free(w, k);
    }
    w->hung = 1;
    pthread_cond_broadcast(&w->cv);
}

/* Called under the mutex whenever a rank blocks or leaves. */
static void world_check_hang(zo_host_world *w)
{
    int W = w->W;
    if (w->hung || w->joined < W || w->nblocked + w->nleft != W || !w->head)
        return;
    char text[512], d[160];
    uint64_t seq;
    if (w->nblocked > 0) {
        /* the lowest collective a blocked rank waits for; a rank that did
         * not issue it has necessarily left (a blocked rank that had not
         * would wait for a lower one) */
        int a = -1;
        for (int r = 0; r < W; r++)
            if (w->r[r].blocked && (a < 0 || w->r[r].blocked->seq < w->r[a].blocked->seq))
                a = r;
        uint64_t k = w->r[a].blocked->seq;
        seq = k;
        int b = -1;
        for (int r = 0; r < W && b < 0; r++)
            if (w->r[r].issued <= k)
                b = r;
        describe(w->r[a].blocked, d, sizeof d);
        if (b >= 0)
            snprintf(text, sizeof text, "collective %llu: would hang: rank %d waits in %s; rank %d %s after %llu collectives",
                     (unsigned long long)k, a, d, b, w->r[b].state == 2 ? "left" : "stopped",
                     (unsigned long long)w->r[b].issued);
        else
            snprintf(text, sizeof text, "collective %llu: would hang: rank %d waits in %s", (unsigned long long)k, a, d);
    } else {
        /* everyone left with collectives some ranks never issued */
        wcoll *k = w->head;
        seq = k->seq;
        int a = -1, b = -1;
        for (int r = 0; r < W; r++) {
            if (k->e[r] && a < 0)
                a = r;
            if (!k->e[r] && b < 0)
                b = r;
        }
        describe(k->e[a], d, sizeof d);
        snprintf(text, sizeof text, "collective %llu: would hang: rank %d issued %s and left; rank %d left after %llu collectives",
                 (unsigned long long)k->seq, a, d, b, (unsigned long long)w->r[b].issued);
    }
    record_finding(w, text);
    world_abort_all(w, seq, text);
}

/* Rank-side helpers (mutex held unless said otherwise) */

/* A new entry of n items, world allocator. */
static wentry *entry_new(zo_host_world *w, int kind, int rank, size_t n)
{
    if (n > (SIZE_MAX - sizeof(wentry)) / sizeof(witem))
        return NULL;
    wentry *e = w_alloc(w, sizeof(wentry) + n * sizeof(witem));
    if (!e)
        return NULL;
    memset(e, 0, sizeof(wentry) + n * sizeof(witem));
    e->kind = kind;
    e->rank = rank;
    e->n = n;
    e->status = ZO_OK;
    return e;
}

/* Issues e as this rank's next collective.  ZO_ERR_NOMEM (nothing issued)
 * if a new collective record cannot be allocated. */
static zo_status world_issue(zo_host_world *w, wentry *e)
{
    wrank *me = &w->r[e->rank];
    uint64_t k = me->issued;
    if (w->hung) {
        me->issued++;
        e->seq = k;
        char text[700];
        snprintf(text, sizeof text, "collective %llu: not run, the world would hang: %s", (unsigned long long)k,
                 w->finding);
        entry_finish(w, e, ZO_ERR_COLLECTIVE_MISMATCH, text);
        return ZO_OK;
    }
    wcoll *c = w->head;
    while (c && c->seq != k)
        c = c->next;
    if (!c) {
        /* the first rank to issue k: every lower one was created before */
        size_t sz = sizeof(wcoll) + (size_t)w->W * sizeof(wentry *);
        if (w->spare) {
            c = w->spare;
            w->spare = NULL;
        } else {
            c = w_alloc(w, sz);
            if (!c)
                return ZO_ERR_NOMEM;
        }
        memset(c, 0, sz);
        c->seq = k;
        if (w->tail)
            w->tail->next = c;
        else
            w->head = c;
        w->tail = c;
    }
    me->issued++;
    e->seq = k;
    c->e[e->rank] = e;
    if (++c->arrived == w->W)
        coll_complete(w, c);
    return ZO_OK;
}

/* Blocks the calling rank until e is done (or the world would hang). */
static void world_block(zo_host_world *w, wentry *e)
{
    if (e->done)
        return;
    wrank *me = &w->r[e->rank];
    me->blocked = e;
    w->nblocked++;
    world_check_hang(w);
    while (!e->done)
        pthread_cond_wait(&w->cv, &w->mu);
    /* entry_finish took the rank off the blocked count */
}

/* Keeps what an item's source points to alive in the entry (the owner's
 * memory may go).  If the copy cannot be allocated the item is lost and the
 * collective will fail with ZO_ERR_NOMEM on every rank (never wrong data). */
static void entry_snapshot_item(zo_host_world *w, witem *it)
{
    if (it->snap || !it->src || !it->src_len) {
        it->src = NULL;
        return;
    }
    it->snap = w_alloc(w, (size_t)it->src_len);
    if (it->snap)
        memcpy(it->snap, it->src, (size_t)it->src_len);
    else
        it->lost = 1;
    it->src = NULL;
}

/* The owner stops observing e: completed entries are freed, pending ones
 * keep contributing (sources snapshotted), deliver nothing more to this
 * rank and are freed by the world at completion. */
static void entry_detach(zo_host_world *w, wentry *e)
{
    if (!e)
        return;
    if (e->done) {
        entry_free(w, e);
        return;
    }
    for (size_t i = 0; i < e->n; i++) {
        entry_snapshot_item(w, &e->items[i]);
        e->items[i].dst = NULL;
    }
    e->recv = NULL;
    e->detached = 1;
}

/* Mutex of c's world (no-ops in single view). */
static void wlock(host_ctx *c)
{
    if (c->world)
        pthread_mutex_lock(&c->world->mu);
}
static void wunlock(host_ctx *c)
{
    if (c->world)
        pthread_mutex_unlock(&c->world->mu);
}

/* The owner observes its completed entry (mutex held): the work is done
 * for this rank, with the collective's status, else the fate of its own
 * items (FAIL_WORK fault, cancelled items) as in single view. */
static void world_observe(host_ctx *c, host_work *w)
{
    wentry *e = w->we;
    size_t cancelled = 0;
    zo_param_id first = ZO_NO_PARAM;
    for (size_t i = 0; i < w->n; i++) {
        host_item *it = &w->items[i];
        if (it->cancelled || !it->p || !it->buf) {
            if (!cancelled++)
                first = it->param;
        }
    }
    c->bytes_copied += e->copied;
    unlink_pending(w);
    w->done = 1;
    c->npending--;
    if (e->status != ZO_OK) {
        w->status = e->status;
        fail(c, e->status, "%s", e->msg ? e->msg : "host world: the collective failed");
    } else if (w->doomed) {
        w->status = w->doomed;
        fail(c, w->doomed, "host backend: injected fault: the all-gather of %zu parameter(s) failed", w->n);
    } else if (cancelled) {
        w->status = ZO_ERR_STATE;
        fail(c, ZO_ERR_STATE,
             "host backend: %zu item(s) of an all-gather were cancelled before it completed "
             "(first: param %u; its full buffer was freed or the parameter removed while in flight)",
             cancelled, (unsigned)first);
    }
    entry_free(c->world, e);
    w->we = NULL;
}

/* FAIL_WORK at a completion check in world mode: the work is done for this
 * rank now, delivering nothing more; the collective goes on for the others. */
static void world_doom(host_ctx *c, host_work *w)
{
    if (w->done) {
        if (w->status == ZO_OK)
            w->status = fault_status(c);
        fail(c, w->status, "host backend: injected fault: the all-gather failed");
        return;
    }
    wlock(c);
    entry_detach(c->world, w->we);
    wunlock(c);
    w->we = NULL;
    unlink_pending(w);
    w->done = 1;
    c->npending--;
    w->status = fault_status(c);
    fail(c, w->status, "host backend: injected fault: the all-gather failed");
}

/* Item i of pending work w is cancelled for this rank (its buffer freed or
 * its parameter removed): nothing more is delivered to it, and its source
 * is kept for the others (the item no longer tracks the parameter, which
 * may be removed next). */
static void world_cancel_item(host_ctx *c, host_work *w, size_t i)
{
    if (!c->world || !w->we)
        return;
    wlock(c);
    wentry *e = w->we;
    if (!e->done) {
        e->items[i].dst = NULL;
        entry_snapshot_item(c->world, &e->items[i]);
    }
    wunlock(c);
}

/* Cancels the items of pending works that refer to p or buf. */
static void cancel_for_param(host_ctx *c, host_param *p)
{
    if (!p->pending)
        return;
    host_work *w = p->pending;
    for (size_t i = 0; i < w->n; i++)
        if (w->items[i].p == p) {
            world_cancel_item(c, w, i);
            w->items[i].cancelled = 1;
            if (w->items[i].buf && w->items[i].buf->pending == w)
                w->items[i].buf->pending = NULL;
            w->items[i].p = NULL;
            w->items[i].buf = NULL;
        }
    p->pending = NULL;
    fail(c, ZO_ERR_STATE, "host backend: param %u removed while its all-gather was in flight",
         (unsigned)p->id);
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */
/* ------------------------------------------------------------------ */

static int op_world_size(void *ctx) { return ctx ? ctx_of(ctx)->world_size : 0; }
static int op_rank(void *ctx) { return ctx ? ctx_of(ctx)->rank : -1; }

static zo_status op_param_add(void *ctx, zo_param_id param, uint64_t numel, uint32_t elem_size,
                              uint64_t partition_numel)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    zo_status st;
    uint64_t W = (uint64_t)c->world_size;
    if (lookup(c, param))
        return fail(c, ZO_ERR_EXISTS, "host backend: param_add: param %u already added", (unsigned)param);

    uint64_t full_bytes = numel * elem_size;
    uint64_t shard_bytes = partition_numel * elem_size;
    uint64_t padded = shard_bytes * W;
    uint64_t L = c->no_copy ? 0 : phys(c, padded);
    /* world: only this rank's stored part of its own shard */
    uint64_t own_off = (uint64_t)c->rank * shard_bytes;
    uint64_t stored = !c->world ? L : own_off < L ? min_u64(shard_bytes, L - own_off) : 0;
    size_t head = (sizeof(host_param) + 63u) & ~(size_t)63u;
    if (L > ZO_HOST_MAX_ALLOC - head)
        return fail(c, ZO_ERR_NOMEM,
                    "host backend: param_add(%u): %llu bytes of shards exceed the %llu-byte limit "
                    "(set max_bytes_per_param)",
                    (unsigned)param, (unsigned long long)L, (unsigned long long)ZO_HOST_MAX_ALLOC);
    st = map_reserve(c, &c->params);
    if (st != ZO_OK)
        return st;
    host_param *p = h_alloc(c, head + (size_t)stored);
    if (!p)
        return fail(c, ZO_ERR_NOMEM, "host backend: param_add(%u): out of memory for %llu bytes of shards",
                    (unsigned)param, (unsigned long long)L);
    memset(p, 0, sizeof *p);
    p->id = param;
    p->elem_size = elem_size;
    p->numel = numel;
    p->partition_numel = partition_numel;
    p->full_bytes = full_bytes;
    p->shard_bytes = shard_bytes;
    p->padded_bytes = padded;
    p->copy_bytes = L;
    p->stored = stored;
    p->store = (uint8_t *)p + head;
    /* single view: every rank's shard, bytes [0, L) of the padded tensor;
     * world: bytes [own_off, own_off + stored) (parameter bytes, then zero padding) */
    zo__fill_padded(param, p->store, c->world ? own_off : 0, stored, full_bytes);
    zo__map_put(&c->params, param, p);
    c->shard_bytes_total += stored;
    return ZO_OK;
}

static void op_param_remove(void *ctx, zo_param_id param)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return;
    host_param *p = lookup(c, param);
    if (!p) {
        fail(c, ZO_ERR_BAD_HANDLE, "host backend: param_remove: param %u not added", (unsigned)param);
        return;
    }
    cancel_for_param(c, p);
    zo__map_del(&c->params, param);
    c->shard_bytes_total -= p->copy_bytes;
    h_free(c, p);
}

static zo_status op_full_alloc(void *ctx, zo_param_id param, size_t bytes, void **out)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    uint64_t cap = phys(c, bytes);
    zo_status st = zo__full_alloc_check(c->err, sizeof c->err, "host backend", param, lookup(c, param) != NULL,
                                        cap, HOST_BUF_HDR);
    if (st != ZO_OK)
        return st;
    st = map_reserve(c, &c->bufs);
    if (st != ZO_OK)
        return st;
    host_buf *b = cache_take(c, (size_t)cap);
    if (!b)
        b = h_alloc(c, HOST_BUF_HDR + (size_t)cap);
    if (!b)
        return fail(c, ZO_ERR_NOMEM, "host backend: full_alloc(%u): out of memory for %llu bytes",
                    (unsigned)param, (unsigned long long)cap);
    memset(b, 0, sizeof *b);
    b->param = param;
    b->requested = bytes;
    b->capacity = (size_t)cap;
    zo__map_put(&c->bufs, (uint64_t)(uintptr_t)data_of(b), b);
    /* fresh or reused: the same 0xA5 content (a reused buffer holds the
     * previous parameter's bytes, which must not pass for a gather) */
    if (!c->no_copy && !c->no_poison)
        memset(data_of(b), HOST_POISON, (size_t)cap);
    *out = data_of(b);
    return ZO_OK;
}

/* full_free's release: back to the cache if it fits, else to the allocator. */
static void buf_release(host_ctx *c, host_buf *b)
{
    zo__map_del(&c->bufs, (uint64_t)(uintptr_t)data_of(b));
    if (!cache_put(c, b))
        h_free(c, b);
}

static void op_full_free(void *ctx, zo_param_id param, void *full)
{
    host_ctx *c = ctx_of(ctx);
    if (!c || !full)
        return;
    host_buf *b = checked_buf(c, full);
    if (!b) {
        fail(c, ZO_ERR_INVALID_ARG, "host backend: full_free(%u): buffer %p is not a live full buffer of this backend",
             (unsigned)param, full);
        return;
    }
    if (b->param != param)
        fail(c, ZO_ERR_INVALID_ARG, "host backend: full_free: buffer of param %u freed as param %u (freed anyway)",
             (unsigned)b->param, (unsigned)param);
    if (b->pending) {
        host_work *w = b->pending;
        for (size_t i = 0; i < w->n; i++)
            if (w->items[i].buf == b) {
                world_cancel_item(c, w, i);
                w->items[i].cancelled = 1;
                w->items[i].buf = NULL;
                if (w->items[i].p && w->items[i].p->pending == w)
                    w->items[i].p->pending = NULL;
                w->items[i].p = NULL;
            }
        fail(c, ZO_ERR_STATE, "host backend: full buffer of param %u freed while its all-gather was in flight",
             (unsigned)b->param);
    }
    buf_release(c, b);
}

static zo_status op_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    if (n > (SIZE_MAX - sizeof(host_work)) / sizeof(host_item))
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: all_gather_start: n = %zu too large", n);

    /* validate everything before any side effect */
    uint64_t gen = ++c->mark_gen;
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &items[i];
        host_param *p = lookup(c, it->param);
        host_buf *b = checked_buf(c, it->full);
        zo_status st = zo__gather_item_check(
            c->err, sizeof c->err, "host backend", i, it,
            p ? &(zo__gather_param){p->numel, p->partition_numel, p->elem_size, p->copy_bytes,
                                    p->pending || p->mark == gen} : NULL,
            b ? &(zo__gather_buf){b->param, b->capacity, b->pending || b->mark == gen} : NULL);
        if (st != ZO_OK)
            return st;
        p->mark = gen;
        b->mark = gen;
    }

    zo_host_fault_action fa = fault_hit(c, ZO_HOST_FAULT_GATHER);
    if (fa == ZO_HOST_FAULT_FAIL)
        return fail(c, fault_status(c), "host backend: all_gather_start: injected fault (gather %llu)",
                    (unsigned long long)c->fault_ops[ZO_HOST_FAULT_GATHER]);

    zo_status st = map_reserve(c, &c->workset);
    if (st != ZO_OK)
        return st;
    host_work *w = h_alloc(c, sizeof(host_work) + n * sizeof(host_item));
    if (!w)
        return fail(c, ZO_ERR_NOMEM, "host backend: all_gather_start: out of memory for a work of %zu items", n);
    memset(w, 0, sizeof *w);
    wentry *we = NULL;
    if (c->world) {
        we = entry_new(c->world, WK_GATHER, c->rank, n);
        if (!we) {
            h_free(c, w);
            return fail(c, ZO_ERR_NOMEM, "host world: all_gather_start: out of memory for a collective entry");
        }
        for (size_t i = 0; i < n; i++) {
            const host_param *p = lookup(c, items[i].param);
            witem *wi = &we->items[i];
            wi->param = items[i].param;
            wi->numel = items[i].numel;
            wi->partition_numel = items[i].partition_numel;
            wi->elem_size = items[i].elem_size;
            wi->shard_bytes = p->shard_bytes;
            wi->copy_bytes = p->copy_bytes;
            wi->src = p->stored ? p->store : NULL;
            wi->src_len = p->stored;
            wi->dst = fa == ZO_HOST_FAULT_FAIL_WORK ? NULL : data_of(buf_of(items[i].full));
        }
        pthread_mutex_lock(&c->world->mu);
        st = world_issue(c->world, we);
        pthread_mutex_unlock(&c->world->mu);
        if (st != ZO_OK) {
            entry_free(c->world, we);
            h_free(c, w);
            return fail(c, st, "host world: all_gather_start: out of memory for a collective record");
        }
    }
    w->n = n;
    w->status = ZO_OK;
    w->delayed = !c->world && fa == ZO_HOST_FAULT_DELAY; /* world: completion waits for the ranks anyway */
    w->we = we;
    w->doomed = fa == ZO_HOST_FAULT_FAIL_WORK ? fault_status(c) : ZO_OK;
    for (size_t i = 0; i < n; i++) {
        w->items[i].param = items[i].param;
        w->items[i].p = lookup(c, items[i].param);
        w->items[i].buf = buf_of(items[i].full);
        w->items[i].cancelled = 0;
    }
    w->next = c->works;
    if (c->works)
        c->works->prev = w;
    c->works = w;
    zo__map_put(&c->workset, (uint64_t)(uintptr_t)w, w);

    if (c->world || c->deferred || w->delayed) {
        for (size_t i = 0; i < n; i++) {
            w->items[i].p->pending = w;
            w->items[i].buf->pending = w;
        }
        c->npending++;
    } else {
        c->npending++; /* complete() accounts it back */
        complete(c, w);
    }
    *out = (zo_work *)w;
    return ZO_OK;
}

static zo_status op_wait(void *ctx, zo_work *zw)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    host_work *w = checked_work(c, zw);
    if (!w)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: wait: not a live work of this backend");
    switch (fault_hit(c, ZO_HOST_FAULT_WAIT)) {
    case ZO_HOST_FAULT_FAIL:
        return fail(c, fault_status(c), "host backend: wait: injected fault (completion check %llu)",
                    (unsigned long long)c->fault_ops[ZO_HOST_FAULT_WAIT]);
    case ZO_HOST_FAULT_FAIL_WORK:
        if (c->world)
            world_doom(c, w);
        else
            doom_now(c, w);
        return w->status;
    case ZO_HOST_FAULT_DELAY:
        sleep_us(c->fault.delay_us);
        break;
    default:
        break;
    }
    if (c->world) {
        if (!w->done) {
            pthread_mutex_lock(&c->world->mu);
            world_block(c->world, w->we);
            world_observe(c, w);
            pthread_mutex_unlock(&c->world->mu);
        }
        return w->status;
    }
    complete(c, w);
    return w->status;
}

static zo_status op_query(void *ctx, zo_work *zw, int *done)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    host_work *w = checked_work(c, zw);
    if (!w)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: query: not a live work of this backend");
    switch (fault_hit(c, ZO_HOST_FAULT_WAIT)) {
    case ZO_HOST_FAULT_FAIL:
        *done = 0;
        return fail(c, fault_status(c), "host backend: query: injected fault (completion check %llu)",
                    (unsigned long long)c->fault_ops[ZO_HOST_FAULT_WAIT]);
    case ZO_HOST_FAULT_FAIL_WORK:
        if (c->world)
            world_doom(c, w);
        else
            doom_now(c, w);
        *done = 1;
        return w->status;
    case ZO_HOST_FAULT_DELAY:
        *done = 0;
        return ZO_OK;
    default:
        break;
    }
    if (c->world && !w->done) {
        pthread_mutex_lock(&c->world->mu);
        if (w->we->done)
            world_observe(c, w);
        pthread_mutex_unlock(&c->world->mu);
    }
    *done = w->done;
    return w->done ? w->status : ZO_OK;
}

static void work_release(host_ctx *c, host_work *w)
{
    if (!w->done) {
        /* freed without a wait: the gather is abandoned, nothing is copied
         * (world: for this rank; the others still get its contribution) */
        if (c->world) {
            pthread_mutex_lock(&c->world->mu);
            entry_detach(c->world, w->we);
            pthread_mutex_unlock(&c->world->mu);
            w->we = NULL;
        }
        unlink_pending(w);
        c->npending--;
    }
    if (w->prev)
        w->prev->next = w->next;
    else
        c->works = w->next;
    if (w->next)
        w->next->prev = w->prev;
    zo__map_del(&c->workset, (uint64_t)(uintptr_t)w);
    h_free(c, w);
}

static void op_work_free(void *ctx, zo_work *zw)
{
    host_ctx *c = ctx_of(ctx);
    if (!c || !zw)
        return;
    host_work *w = checked_work(c, zw);
    if (!w) {
        fail(c, ZO_ERR_INVALID_ARG, "host backend: work_free: not a live work of this backend");
        return;
    }
    work_release(c, w);
}

/* Issues e (exchange, reduce-scatter) and blocks until it completed. */
static zo_status world_blocking_call(host_ctx *c, wentry *e, const char *what)
{
    zo_host_world *w = c->world;
    pthread_mutex_lock(&w->mu);
    zo_status st = world_issue(w, e);
    if (st != ZO_OK) {
        pthread_mutex_unlock(&w->mu);
        entry_free(w, e);
        return fail(c, st, "host world: %s: out of memory for a collective record", what);
    }
    world_block(w, e);
    st = e->status;
    if (st != ZO_OK)
        fail(c, st, "%s", e->msg ? e->msg : "host world: the collective failed");
    entry_free(w, e);
    pthread_mutex_unlock(&w->mu);
    return st;
}

/* exchange: not subject to fault injection (it is the runtime's checking
 * channel, not a data-plane operation). */
static zo_status op_exchange(void *ctx, const void *send, size_t bytes, void *recv)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    if (c->world) {
        wentry *e = entry_new(c->world, WK_EXCHANGE, c->rank, 0);
        if (!e)
            return fail(c, ZO_ERR_NOMEM, "host world: exchange: out of memory");
        e->send = send;
        e->recv = recv;
        e->bytes = bytes;
        return world_blocking_call(c, e, "exchange");
    }
    /* single view: every rank is this rank (SPMD) */
    for (int r = 0; r < c->world_size; r++)
        memmove((uint8_t *)recv + (size_t)r * bytes, send, bytes);
    return ZO_OK;
}

static zo_status op_reduce_scatter(void *ctx, zo_param_id param, const float *full_grad, float *shard_out,
                                   uint64_t numel, uint64_t partition_numel, zo_reduce_op op)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    host_param *p = lookup(c, param);
    zo_status st = zo__reduce_scatter_check(c->err, sizeof c->err, "host backend", param, numel, partition_numel,
                                            p != NULL, p ? p->numel : 0, p ? p->partition_numel : 0);
    if (st != ZO_OK)
        return st;
    if (c->world) {
        /* a real blocking collective over the ranks' gradients */
        wentry *e = entry_new(c->world, WK_RS, c->rank, 1);
        if (!e)
            return fail(c, ZO_ERR_NOMEM, "host world: reduce_scatter(%u): out of memory", (unsigned)param);
        e->items[0].param = param;
        e->items[0].numel = numel;
        e->items[0].partition_numel = partition_numel;
        e->items[0].elem_size = (uint32_t)sizeof(float);
        e->grad = full_grad;
        e->out = shard_out;
        e->op = op;
        return world_blocking_call(c, e, "reduce_scatter");
    }
    uint64_t base = (uint64_t)c->rank * partition_numel;
    for (uint64_t i = 0; i < partition_numel; i++) {
        uint64_t j = base + i;
        if (j >= numel) {
            shard_out[i] = 0.0f; /* padding of the last shard */
            continue;
        }
        /* every rank k contributes its gradient g_k[j]; in the host world
         * g_k = full_grad for every k */
        float acc = 0.0f;
        for (int k = 0; k < c->world_size; k++)
            acc += full_grad[j];
        shard_out[i] = (op == ZO_REDUCE_AVG) ? acc / (float)c->world_size : acc;
    }
    return ZO_OK;
}

static const char *op_last_error(void *ctx)
{
    return ctx ? ctx_of(ctx)->err : NULL;
}

static void op_destroy(void *ctx)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return;
    while (c->works)
        work_release(c, c->works);
    if (c->world) {
        /* the rank leaves: nothing of it is referenced by the world any more */
        zo_host_world *w = c->world;
        pthread_mutex_lock(&w->mu);
        w->r[c->rank].state = 2;
        w->nleft++;
        world_check_hang(w);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    for (size_t i = 0; i < c->bufs.cap; i++)
        h_free(c, c->bufs.vals[i]);
    cache_free_all(c);
    for (size_t i = 0; i < c->params.cap; i++)
        h_free(c, c->params.vals[i]);
    zo__map_free(&c->bufs, &c->alloc);
    zo__map_free(&c->params, &c->alloc);
    zo__map_free(&c->workset, &c->alloc);
    zo_allocator a = c->alloc;
    zo__host_free(&a, c);
}

static const zo_backend_ops host_ops = {
    .version = ZO_BACKEND_OPS_VERSION,
    .name = "host",
    .world_size = op_world_size,
    .rank = op_rank,
    .param_add = op_param_add,
    .param_remove = op_param_remove,
    .full_alloc = op_full_alloc,
    .full_free = op_full_free,
    .all_gather_start = op_all_gather_start,
    .wait = op_wait,
    .query = op_query,
    .work_free = op_work_free,
    .reduce_scatter = op_reduce_scatter,
    .last_error = op_last_error,
    .destroy = op_destroy,
    .exchange = op_exchange,
};

/* ------------------------------------------------------------------ */
/* Public entry points                                                 */
/* ------------------------------------------------------------------ */

zo_status zo_backend_host_create(const zo_host_config *cfg, zo_backend **out)
{
    if (!out)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: out is NULL");
    *out = NULL;
    if (!cfg)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: cfg is NULL");
    /* the settings, from any accepted layout */
    zo_host_config c3;
    zo_host_testing t = ZO_HOST_TESTING_INIT;
    if ((cfg->version == 1u && cfg->size == ZO_HOST_CONFIG_V1_SIZE) ||
        (cfg->version == 2u && cfg->size == sizeof(zo_host_config_v2))) {
        zo_host_config_v2 old;
        memset(&old, 0, sizeof old);
        memcpy(&old, cfg, cfg->size);
        if (cfg->version == 1u)
            old.no_poison = 0; /* version 1 poisons (and has no cache, no world) */
        memset(&c3, 0, sizeof c3);
        c3.size = sizeof c3;
        c3.version = ZO_HOST_CONFIG_VERSION;
        c3.world_size = old.world_size;
        c3.rank = old.rank;
        c3.allocator = old.allocator;
        c3.world = old.world;
        c3.cache_bytes = old.cache_bytes;
        t.deferred = old.deferred;
        t.max_bytes_per_param = old.max_bytes_per_param;
        t.no_copy = old.no_copy;
        t.no_poison = old.no_poison;
        cfg = &c3;
    } else if (cfg->size != sizeof(zo_host_config) || cfg->version != ZO_HOST_CONFIG_VERSION) {
        return zo__fail_tls(ZO_ERR_VERSION,
                            "zo_backend_host_create: config size %zu version %u not understood (this library: "
                            "size %zu version %u; start from ZO_HOST_CONFIG_INIT)",
                            cfg->size, (unsigned)cfg->version, sizeof(zo_host_config), (unsigned)ZO_HOST_CONFIG_VERSION);
    } else if (cfg->testing) {
        t = *cfg->testing;
    }
    if (cfg->world_size < 1 || cfg->world_size > ZO_MAX_WORLD_SIZE)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: world_size %d not in 1..%d",
                            cfg->world_size, ZO_MAX_WORLD_SIZE);
    if (cfg->rank < 0 || cfg->rank >= cfg->world_size)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: rank %d not in 0..%d (world_size %d)",
                            cfg->rank, cfg->world_size - 1, cfg->world_size);
    if ((t.deferred != 0 && t.deferred != 1) || (t.no_copy != 0 && t.no_copy != 1))
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: deferred and no_copy must be 0 or 1");
    if (t.no_poison != 0 && t.no_poison != 1 && t.no_poison != ZO_HOST_POISON_BUILD_DEFAULT)
        return zo__fail_tls(ZO_ERR_INVALID_ARG,
                            "zo_backend_host_create: no_poison %d must be 0, 1 or ZO_HOST_POISON_BUILD_DEFAULT (-1)",
                            t.no_poison);
    if (!cfg->allocator.alloc != !cfg->allocator.free)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: allocator has only one of alloc/free");
    host_ctx *c = zo__host_alloc(&cfg->allocator, sizeof *c);
    if (!c)
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_backend_host_create: context");
    memset(c, 0, sizeof *c);
    c->alloc = cfg->allocator;
    c->world_size = cfg->world_size;
    c->rank = cfg->rank;
    c->deferred = t.deferred;
    c->no_copy = t.no_copy;
    c->no_poison = t.no_poison == ZO_HOST_POISON_BUILD_DEFAULT ? !zo_host_poison_default() : t.no_poison;
    c->cache_budget = cfg->cache_bytes;
    c->cap = t.max_bytes_per_param;
    c->pub.ops = &host_ops;
    c->pub.ctx = c;
    if (cfg->world) {
        zo_host_world *w = cfg->world;
        zo_status st = ZO_OK;
        pthread_mutex_lock(&w->mu);
        if (w->W != cfg->world_size)
            st = zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: world of %d ranks, config world_size %d",
                              w->W, cfg->world_size);
        else if (w->r[cfg->rank].state != 0)
            st = zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: rank %d already joined the world",
                              cfg->rank);
        else if (w->have_cfg && (w->cap != c->cap || w->no_copy != c->no_copy))
            st = zo__fail_tls(ZO_ERR_INVALID_ARG, /* every rank must store and copy the same bytes */
                              "zo_backend_host_create: max_bytes_per_param/no_copy differ from the world's other ranks");
        if (st == ZO_OK) {
            w->have_cfg = 1;
            w->cap = c->cap;
            w->no_copy = c->no_copy;
            w->r[cfg->rank].state = 1;
            w->joined++;
            c->world = w;
            c->deferred = 0; /* completion is the world's */
        }
        pthread_mutex_unlock(&w->mu);
        if (st != ZO_OK) {
            zo__host_free(&cfg->allocator, c);
            return st;
        }
    }
    *out = &c->pub;
    return ZO_OK;
}

int zo_host_progress(zo_backend *b)
{
    const host_ctx *cc = host_of(b);
    if (!cc)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_progress: b is %s", b ? "not a host backend" : "NULL");
    host_ctx *c = (host_ctx *)cc;
    int n = 0;
    if (c->world)
        return 0; /* a world backend's collectives complete when every rank issued them */
    for (host_work *w = c->works; w; w = w->next)
        if (!w->done && !w->delayed) {
            complete(c, w);
            if (n < INT_MAX)
                n++;
        }
    return n;
}

int zo_host_poison_default(void)
{
    return ZO_BUILD_POISON ? 1 : 0;
}

uint64_t zo_host_physical_bytes(const zo_backend *b, uint64_t bytes)
{
    const host_ctx *c = host_of(b);
    return c ? phys(c, bytes) : bytes;
}

int zo_host_is_host(const zo_backend *b) { return host_of(b) != NULL; }
size_t zo_host_live_full_buffers(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->bufs.count : 0; }
size_t zo_host_cached_full_buffers(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->cache_count : 0; }
uint64_t zo_host_cached_bytes(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->cache_bytes : 0; }
uint64_t zo_host_cache_hits(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->cache_hits : 0; }
size_t zo_host_live_works(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->workset.count : 0; }
size_t zo_host_pending_works(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->npending : 0; }
size_t zo_host_param_count(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->params.count : 0; }
uint64_t zo_host_shard_bytes(const zo_backend *b)
{
    const host_ctx *c = host_of(b);
    return c ? c->shard_bytes_total : 0;
}
uint64_t zo_host_bytes_copied(const zo_backend *b)
{
    const host_ctx *c = host_of(b);
    return c ? c->bytes_copied : 0;
}

zo_status zo_host_shard(const zo_backend *b, zo_param_id param, int rank, const uint8_t **data,
                        uint64_t *stored)
{
    const host_ctx *c = host_of(b);
    if (!c || !data || !stored)
        return ZO_ERR_INVALID_ARG;
    *data = NULL;
    *stored = 0;
    if (rank < 0 || rank >= c->world_size || (c->world && rank != c->rank))
        return ZO_ERR_INVALID_ARG; /* a world backend stores only its own rank's shard */
    const host_param *p = lookup(c, param);
    if (!p)
        return ZO_ERR_BAD_HANDLE;
    if (c->world) {
        *data = p->stored ? p->store : NULL;
        *stored = p->stored;
        return ZO_OK;
    }
    uint64_t off = (uint64_t)rank * p->shard_bytes;
    if (off < p->copy_bytes) {
        *data = p->store + off;
        *stored = min_u64(p->shard_bytes, p->copy_bytes - off);
    }
    return ZO_OK;
}

zo_status zo_host_set_fault(zo_backend *b, const zo_host_fault *f)
{
    const host_ctx *cc = host_of(b);
    if (!cc)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_set_fault: b is %s", b ? "not a host backend" : "NULL");
    host_ctx *c = (host_ctx *)cc;
    if (f) {
        if ((f->point != ZO_HOST_FAULT_GATHER && f->point != ZO_HOST_FAULT_WAIT) ||
            (f->action != ZO_HOST_FAULT_NONE && f->action != ZO_HOST_FAULT_FAIL &&
             f->action != ZO_HOST_FAULT_DELAY && f->action != ZO_HOST_FAULT_FAIL_WORK) ||
            f->status > 0)
            return fail(c, ZO_ERR_INVALID_ARG, "host backend: zo_host_set_fault: bad point, action or status");
        c->fault = *f;
    } else {
        memset(&c->fault, 0, sizeof c->fault);
    }
    c->fault_ops[0] = c->fault_ops[1] = 0;
    c->fault_fired = 0;
    return ZO_OK;
}

uint64_t zo_host_fault_ops(const zo_backend *b, zo_host_fault_point point)
{
    const host_ctx *c = host_of(b);
    if (!c || (point != ZO_HOST_FAULT_GATHER && point != ZO_HOST_FAULT_WAIT))
        return 0;
    return c->fault_ops[point];
}

uint64_t zo_host_fault_fired(const zo_backend *b)
{
    const host_ctx *c = host_of(b);
    return c ? c->fault_fired : 0;
}

/* ------------------------------------------------------------------ */
/* Multi-rank host world: public entry points                          */
/* ------------------------------------------------------------------ */

zo_status zo_host_world_create(int world_size, const zo_allocator *allocator, zo_host_world **out)
{
    if (!out)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_create: out is NULL");
    *out = NULL;
    if (world_size < 1 || world_size > ZO_MAX_WORLD_SIZE)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_create: world_size %d not in 1..%d", world_size,
                            ZO_MAX_WORLD_SIZE);
    zo_allocator a = {NULL, NULL, NULL};
    if (allocator)
        a = *allocator;
    if (!a.alloc != !a.free)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_create: allocator with only one of alloc/free");
    zo_host_world *w = zo__host_alloc(&a, sizeof *w);
    if (!w)
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    memset(w, 0, sizeof *w);
    w->alloc = a;
    w->W = world_size;
    w->r = zo__host_alloc(&a, (size_t)world_size * sizeof(wrank));
    if (!w->r) {
        zo__host_free(&a, w);
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    }
    memset(w->r, 0, (size_t)world_size * sizeof(wrank));
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        zo__host_free(&a, w->r);
        zo__host_free(&a, w);
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        zo__host_free(&a, w->r);
        zo__host_free(&a, w);
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    }
    w->finding_st = ZO_OK;
    *out = w;
    return ZO_OK;
}

zo_status zo_host_world_destroy(zo_host_world *w)
{
    if (!w)
        return ZO_OK;
    pthread_mutex_lock(&w->mu);
    for (int r = 0; r < w->W; r++)
        if (w->r[r].state == 1) {
            pthread_mutex_unlock(&w->mu);
            /* rank r's backend is still alive */
            return zo__fail_tls(ZO_ERR_STATE, "zo_host_world_destroy: rank %d's backend is still alive", r);
        }
    /* collectives only some ranks issued: their entries are all detached */
    while (w->head) {
        wcoll *k = w->head;
        w->head = k->next;
        for (int r = 0; r < w->W; r++)
            entry_free(w, k->e[r]);
        w_free(w, k);
    }
    w_free(w, w->spare);
    pthread_mutex_unlock(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    zo_allocator a = w->alloc;
    zo__host_free(&a, w->r);
    zo__host_free(&a, w);
    return ZO_OK;
}

zo_status zo_host_world_report(const zo_host_world *cw, char *buf, size_t len)
{
    if (!cw)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_report: w is NULL");
    zo_host_world *w = (zo_host_world *)cw; /* the mutex */
    pthread_mutex_lock(&w->mu);
    zo_status st = w->finding_st;
    if (buf && len)
        snprintf(buf, len, "%s", st == ZO_OK ? "" : w->finding);
    pthread_mutex_unlock(&w->mu);
    return st;
}

uint64_t zo_host_world_collectives(const zo_host_world *cw, int rank)
{
    if (!cw || rank < 0 || rank >= cw->W)
        return 0;
    zo_host_world *w = (zo_host_world *)cw;
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->r[rank].issued;
    pthread_mutex_unlock(&w->mu);
    return n;
}
