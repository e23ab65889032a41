/*
 * backend_host.c - the host backend: an in-process data-parallel world of W
 * ranks that really stores every rank's shard and really copies them in
 * all-gathers.  It is the data plane of the unit tests and fuzz targets and
 * the default backend of a runtime created with zo_config.backend == NULL.
 *
 * Parameter contents
 *   Byte i of parameter p's original full tensor is zo_host_param_byte(p, i):
 *   the 64-bit word w = i / 8 is mixed with p by splitmix64's finaliser,
 *       z = mix64(w * 0x9E3779B97F4A7C15 ^ (p + 1) * 0xD1B54A32D192ED03)
 *   and byte i is byte (i % 8) of z, least significant first.  Cheap (one mix
 *   per 8 bytes), deterministic, different for every parameter and never
 *   constant, so a gather that copies the wrong shard, the wrong parameter or
 *   nothing at all is visible in the content.
 *
 * Shard layout (DeepSpeed's uniform padded partitions)
 *   shard_bytes = partition_numel * elem_size, partition_numel =
 *   ceil(numel / W).  Rank r's shard holds bytes [r*shard_bytes,
 *   (r+1)*shard_bytes) of the padded full tensor of W*shard_bytes bytes;
 *   bytes at or past numel*elem_size are padding and are zero.  The world is
 *   stored as one block per parameter, rank 0's shard first, so rank r's
 *   shard is block + r*shard_bytes.
 *
 * Physical cap (zo_host_config.max_bytes_per_param = C > 0, fuzz builds)
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
 *   when allocated, so data read before the gather completed is wrong
 *   content, not stale-but-right content.
 *   no_copy = 1 (control-plane benchmarks): shards are not stored, gathers
 *   copy nothing and full buffers are neither filled nor poisoned - their
 *   content is unspecified.
 *
 * Reduce-scatter convention
 *   The runtime has only this rank's gradient.  In the host world every rank
 *   is taken to have produced that same gradient g, so the backend really
 *   sums the W contributions for its own shard: SUM gives sum_{k<W} g[j]
 *   (W*g up to float rounding), AVG that sum divided by W (g up to rounding);
 *   padding elements of the last shard give 0.
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
 *
 * Ownership
 *   Every allocation (context, zo_backend struct, parameter blocks, full
 *   buffers, works) goes through zo_host_config.allocator (malloc/free when
 *   both are NULL).  The zo_backend struct lives inside the context
 *   allocation; ops->destroy frees both, together with whatever the runtime
 *   left behind (parameters, full buffers, works).  zo_backend_destroy(b)
 *   is therefore "call b->ops->destroy(b->ctx)", which is how every backend
 *   zoffload creates is freed.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_host_internal.h"
#include "zoffload_backend.h"

#define ZO_HOST_MAX_ALLOC (1ull << 40)
#define HOST_POISON 0xA5

typedef struct host_ctx host_ctx;

/* Open-addressing hash map, linear probing with backward-shift deletion;
 * a NULL value marks an empty slot. */
typedef struct host_map {
    uint64_t *keys;
    void **vals;
    size_t cap, count; /* cap: 0 or a power of two */
} host_map;
typedef struct host_work host_work;

typedef struct host_param {
    zo_param_id id;
    uint32_t elem_size;       /* bytes */
    uint64_t numel;           /* elements */
    uint64_t partition_numel; /* elements per rank */
    uint64_t full_bytes;      /* numel * elem_size */
    uint64_t shard_bytes;     /* partition_numel * elem_size */
    uint64_t padded_bytes;    /* W * shard_bytes */
    uint64_t copy_bytes;      /* L: bytes a gather copies (0 with no_copy) */
    uint8_t *store;           /* copy_bytes bytes: rank r's shard at r*shard_bytes */
    host_work *pending;       /* deferred gather not completed yet */
    uint64_t mark;            /* duplicate detection inside one group */
} host_param;

typedef struct host_buf {
    zo_param_id param;
    size_t requested; /* bytes asked for */
    size_t capacity;  /* bytes really allocated after the header */
    host_work *pending;
    uint64_t mark;
} host_buf;

#define HOST_BUF_HDR ((sizeof(host_buf) + 63u) & ~(size_t)63u)

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
    host_work *prev, *next; /* list of live works */
    host_item items[];
};

struct host_ctx {
    zo_backend pub; /* the handle given to the caller; lives in this allocation */
    zo_allocator alloc;
    int world_size, rank, deferred, no_copy;
    uint64_t cap; /* max_bytes_per_param, 0 = none */
    host_map params; /* id -> host_param* */
    host_map bufs;   /* live full buffer (user pointer) -> host_buf* */
    host_map workset; /* live work -> itself: validation without reading foreign memory */
    host_work *works; /* live works, newest first */
    size_t npending;
    uint64_t mark_gen;
    uint64_t shard_bytes_total, bytes_copied;
    zo_host_fault fault;    /* armed fault (action NONE: none) */
    uint64_t fault_ops[2];  /* operations per zo_host_fault_point since armed */
    uint64_t fault_fired;
    char err[256];
};

static const zo_backend_ops host_ops;

/* ------------------------------------------------------------------ */
/* Content function                                                    */
/* ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

static uint64_t param_word(zo_param_id param, uint64_t word)
{
    return mix64(word * 0x9E3779B97F4A7C15ull ^ ((uint64_t)param + 1u) * 0xD1B54A32D192ED03ull);
}

uint8_t zo_host_param_byte(zo_param_id param, uint64_t byte_index)
{
    return (uint8_t)(param_word(param, byte_index >> 3) >> ((byte_index & 7u) * 8u));
}

/* Writes bytes [0, n) of param's full tensor to dst. */
static void fill_content(zo_param_id param, uint8_t *dst, uint64_t n)
{
    uint64_t w = 0, i = 0;
    for (; i + 8 <= n; i += 8, w++) {
        uint64_t z = param_word(param, w);
        for (unsigned k = 0; k < 8; k++)
            dst[i + k] = (uint8_t)(z >> (8u * k));
    }
    if (i < n) {
        uint64_t z = param_word(param, w);
        for (unsigned k = 0; i < n; i++, k++)
            dst[i] = (uint8_t)(z >> (8u * k));
    }
}

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

static void *h_alloc_raw(const zo_allocator *a, size_t n)
{
    if (n == 0 || (uint64_t)n > ZO_HOST_MAX_ALLOC)
        return NULL;
    return a->alloc ? a->alloc(a->opaque, n) : malloc(n);
}

static void h_free_raw(const zo_allocator *a, void *p)
{
    if (!p)
        return;
    if (a->free)
        a->free(a->opaque, p);
    else
        free(p);
}

static void *h_alloc(host_ctx *c, size_t n) { return h_alloc_raw(&c->alloc, n); }
static void h_free(host_ctx *c, void *p) { h_free_raw(&c->alloc, p); }

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t phys(const host_ctx *c, uint64_t bytes)
{
    return c->cap ? min_u64(bytes, c->cap) : bytes;
}

static size_t map_home(uint64_t key, size_t cap) { return (size_t)mix64(key) & (cap - 1); }

static void *map_get(const host_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = map_home(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i])
            return NULL;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

/* Makes room for one more entry (load factor <= 1/2); no change on error. */
static zo_status map_reserve(host_ctx *c, host_map *m)
{
    if ((m->count + 1) * 2 <= m->cap)
        return ZO_OK;
    size_t n = m->cap ? m->cap * 2 : 16;
    size_t each = sizeof(uint64_t) + sizeof(void *);
    if (n > SIZE_MAX / each)
        return fail(c, ZO_ERR_NOMEM, "host backend: table too large");
    uint8_t *mem = h_alloc(c, n * each);
    if (!mem)
        return fail(c, ZO_ERR_NOMEM, "host backend: out of memory growing a table to %zu slots", n);
    memset(mem, 0, n * each);
    uint64_t *keys = (uint64_t *)mem;
    void **vals = (void **)(mem + n * sizeof(uint64_t));
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->vals[i])
            continue;
        size_t j = map_home(m->keys[i], n);
        while (vals[j])
            j = (j + 1) & (n - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    h_free(c, m->keys);
    m->keys = keys;
    m->vals = vals;
    m->cap = n;
    return ZO_OK;
}

/* Inserts a new key; map_reserve must have succeeded first. */
static void map_put(host_map *m, uint64_t key, void *val)
{
    size_t i = map_home(key, m->cap);
    while (m->vals[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
}

static void map_del(host_map *m, uint64_t key)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = map_home(key, m->cap);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->vals[i])
        return;
    m->vals[i] = NULL;
    m->count--;
    for (size_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        size_t home = map_home(m->keys[j], m->cap);
        /* slots[j] may move into the hole i unless its home lies in (i, j] */
        int stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->vals[j] = NULL;
            i = j;
        }
    }
}

static void map_free(host_ctx *c, host_map *m)
{
    h_free(c, m->keys);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}

static host_param *lookup(const host_ctx *c, zo_param_id id) { return map_get(&c->params, id); }

static host_ctx *ctx_of(void *ctx) { return (host_ctx *)ctx; }

static const host_ctx *host_of(const zo_backend *b)
{
    if (!b || b->ops != &host_ops || !b->ctx)
        return NULL;
    return (const host_ctx *)b->ctx;
}

static host_buf *buf_of(void *full) { return (host_buf *)((uint8_t *)full - HOST_BUF_HDR); }
static uint8_t *data_of(host_buf *b) { return (uint8_t *)b + HOST_BUF_HDR; }

/* The live full buffer `full` of this backend, or NULL: looked up in the
 * buffer table, so a foreign, stale or double-freed pointer is reported,
 * never dereferenced. */
static host_buf *checked_buf(host_ctx *c, void *full)
{
    return full ? map_get(&c->bufs, (uint64_t)(uintptr_t)full) : NULL;
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
    return zw ? map_get(&c->workset, (uint64_t)(uintptr_t)zw) : NULL;
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

/* Cancels the items of pending works that refer to p or buf. */
static void cancel_for_param(host_ctx *c, host_param *p)
{
    if (!p->pending)
        return;
    host_work *w = p->pending;
    for (size_t i = 0; i < w->n; i++)
        if (w->items[i].p == p) {
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
    if (param == ZO_NO_PARAM)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: param_add: ZO_NO_PARAM is not a parameter id");
    if (numel == 0 || elem_size == 0 || elem_size > 64)
        return fail(c, ZO_ERR_INVALID_ARG,
                    "host backend: param_add(%u): numel %llu and elem_size %u must be > 0 (elem_size <= 64)",
                    (unsigned)param, (unsigned long long)numel, (unsigned)elem_size);
    uint64_t W = (uint64_t)c->world_size;
    uint64_t expect = numel / W + (numel % W != 0);
    if (partition_numel != expect)
        return fail(c, ZO_ERR_INVALID_ARG,
                    "host backend: param_add(%u): partition_numel %llu != ceil(%llu / %llu) = %llu",
                    (unsigned)param, (unsigned long long)partition_numel, (unsigned long long)numel,
                    (unsigned long long)W, (unsigned long long)expect);
    if (numel > UINT64_MAX / elem_size || partition_numel > UINT64_MAX / elem_size ||
        partition_numel * elem_size > UINT64_MAX / W)
        return fail(c, ZO_ERR_OVERFLOW, "host backend: param_add(%u): %llu x %u bytes overflows",
                    (unsigned)param, (unsigned long long)numel, (unsigned)elem_size);
    if (lookup(c, param))
        return fail(c, ZO_ERR_EXISTS, "host backend: param_add: param %u already added", (unsigned)param);

    uint64_t full_bytes = numel * elem_size;
    uint64_t shard_bytes = partition_numel * elem_size;
    uint64_t padded = shard_bytes * W;
    uint64_t L = c->no_copy ? 0 : phys(c, padded);
    size_t head = (sizeof(host_param) + 63u) & ~(size_t)63u;
    if (L > ZO_HOST_MAX_ALLOC - head)
        return fail(c, ZO_ERR_NOMEM,
                    "host backend: param_add(%u): %llu bytes of shards exceed the %llu-byte limit "
                    "(set max_bytes_per_param)",
                    (unsigned)param, (unsigned long long)L, (unsigned long long)ZO_HOST_MAX_ALLOC);
    zo_status st = map_reserve(c, &c->params);
    if (st != ZO_OK)
        return st;
    host_param *p = h_alloc(c, head + (size_t)L);
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
    p->store = (uint8_t *)p + head;
    /* every rank's shard: parameter bytes, then zero padding */
    uint64_t content = min_u64(full_bytes, L);
    fill_content(param, p->store, content);
    if (L > content)
        memset(p->store + content, 0, (size_t)(L - content));
    map_put(&c->params, param, p);
    c->shard_bytes_total += L;
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
    map_del(&c->params, param);
    c->shard_bytes_total -= p->copy_bytes;
    h_free(c, p);
}

static zo_status op_full_alloc(void *ctx, zo_param_id param, size_t bytes, void **out)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    if (!out)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: full_alloc: NULL out");
    *out = NULL;
    if (bytes == 0)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: full_alloc(%u): 0 bytes", (unsigned)param);
    if (!lookup(c, param))
        return fail(c, ZO_ERR_BAD_HANDLE, "host backend: full_alloc: param %u not added", (unsigned)param);
    uint64_t cap = phys(c, bytes);
    if (cap > ZO_HOST_MAX_ALLOC - HOST_BUF_HDR)
        return fail(c, ZO_ERR_NOMEM, "host backend: full_alloc(%u): %llu bytes exceed the %llu-byte limit",
                    (unsigned)param, (unsigned long long)cap, (unsigned long long)ZO_HOST_MAX_ALLOC);
    zo_status st = map_reserve(c, &c->bufs);
    if (st != ZO_OK)
        return st;
    host_buf *b = h_alloc(c, HOST_BUF_HDR + (size_t)cap);
    if (!b)
        return fail(c, ZO_ERR_NOMEM, "host backend: full_alloc(%u): out of memory for %llu bytes",
                    (unsigned)param, (unsigned long long)cap);
    memset(b, 0, sizeof *b);
    b->param = param;
    b->requested = bytes;
    b->capacity = (size_t)cap;
    map_put(&c->bufs, (uint64_t)(uintptr_t)data_of(b), b);
    if (!c->no_copy)
        memset(data_of(b), HOST_POISON, (size_t)cap);
    *out = data_of(b);
    return ZO_OK;
}

static void buf_release(host_ctx *c, host_buf *b)
{
    map_del(&c->bufs, (uint64_t)(uintptr_t)data_of(b));
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
    if (!out)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: all_gather_start: NULL out");
    *out = NULL;
    if (n > 0 && !items)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: all_gather_start: NULL items with n = %zu", n);
    if (n > (SIZE_MAX - sizeof(host_work)) / sizeof(host_item))
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: all_gather_start: n = %zu too large", n);

    /* validate everything before any side effect */
    uint64_t gen = ++c->mark_gen;
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &items[i];
        host_param *p = lookup(c, it->param);
        if (!p)
            return fail(c, ZO_ERR_BAD_HANDLE, "host backend: all_gather_start: item %zu: param %u not added", i,
                        (unsigned)it->param);
        if (it->numel != p->numel || it->partition_numel != p->partition_numel || it->elem_size != p->elem_size)
            return fail(c, ZO_ERR_INVALID_ARG,
                        "host backend: all_gather_start: item %zu (param %u): numel/partition_numel/elem_size "
                        "%llu/%llu/%u differ from param_add's %llu/%llu/%u",
                        i, (unsigned)it->param, (unsigned long long)it->numel,
                        (unsigned long long)it->partition_numel, (unsigned)it->elem_size,
                        (unsigned long long)p->numel, (unsigned long long)p->partition_numel,
                        (unsigned)p->elem_size);
        host_buf *b = checked_buf(c, it->full);
        if (!b)
            return fail(c, ZO_ERR_INVALID_ARG,
                        "host backend: all_gather_start: item %zu (param %u): full buffer is not from this "
                        "backend's full_alloc",
                        i, (unsigned)it->param);
        if (b->param != it->param)
            return fail(c, ZO_ERR_INVALID_ARG,
                        "host backend: all_gather_start: item %zu: buffer of param %u used for param %u", i,
                        (unsigned)b->param, (unsigned)it->param);
        if (b->capacity < p->copy_bytes)
            return fail(c, ZO_ERR_INVALID_ARG,
                        "host backend: all_gather_start: item %zu (param %u): full buffer holds %zu bytes, "
                        "the gather needs %llu (W * partition_numel * elem_size, capped)",
                        i, (unsigned)it->param, b->capacity, (unsigned long long)p->copy_bytes);
        if (p->pending || p->mark == gen)
            return fail(c, ZO_ERR_STATE,
                        "host backend: all_gather_start: param %u is already in flight (a parameter is in at "
                        "most one pending all-gather)",
                        (unsigned)it->param);
        if (b->pending || b->mark == gen)
            return fail(c, ZO_ERR_STATE,
                        "host backend: all_gather_start: full buffer of param %u is already the target of a "
                        "pending all-gather",
                        (unsigned)it->param);
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
    w->n = n;
    w->status = ZO_OK;
    w->delayed = fa == ZO_HOST_FAULT_DELAY;
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
    map_put(&c->workset, (uint64_t)(uintptr_t)w, w);

    if (c->deferred || w->delayed) {
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
        doom_now(c, w);
        return w->status;
    case ZO_HOST_FAULT_DELAY:
        sleep_us(c->fault.delay_us);
        break;
    default:
        break;
    }
    complete(c, w);
    return w->status;
}

static zo_status op_query(void *ctx, zo_work *zw, int *done)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    if (!done)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: query: NULL done");
    host_work *w = checked_work(c, zw);
    if (!w)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: query: not a live work of this backend");
    switch (fault_hit(c, ZO_HOST_FAULT_WAIT)) {
    case ZO_HOST_FAULT_FAIL:
        *done = 0;
        return fail(c, fault_status(c), "host backend: query: injected fault (completion check %llu)",
                    (unsigned long long)c->fault_ops[ZO_HOST_FAULT_WAIT]);
    case ZO_HOST_FAULT_FAIL_WORK:
        doom_now(c, w);
        *done = 1;
        return w->status;
    case ZO_HOST_FAULT_DELAY:
        *done = 0;
        return ZO_OK;
    default:
        break;
    }
    *done = w->done;
    return w->done ? w->status : ZO_OK;
}

static void work_release(host_ctx *c, host_work *w)
{
    if (!w->done) {
        /* freed without a wait: the gather is abandoned, nothing is copied */
        unlink_pending(w);
        c->npending--;
    }
    if (w->prev)
        w->prev->next = w->next;
    else
        c->works = w->next;
    if (w->next)
        w->next->prev = w->prev;
    map_del(&c->workset, (uint64_t)(uintptr_t)w);
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

static zo_status op_reduce_scatter(void *ctx, zo_param_id param, const float *full_grad, float *shard_out,
                                   uint64_t numel, uint64_t partition_numel, zo_reduce_op op)
{
    host_ctx *c = ctx_of(ctx);
    if (!c)
        return ZO_ERR_INVALID_ARG;
    if (!full_grad || !shard_out)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: reduce_scatter(%u): NULL buffer", (unsigned)param);
    if (op != ZO_REDUCE_SUM && op != ZO_REDUCE_AVG)
        return fail(c, ZO_ERR_INVALID_ARG, "host backend: reduce_scatter(%u): unknown op %d", (unsigned)param,
                    (int)op);
    host_param *p = lookup(c, param);
    if (!p)
        return fail(c, ZO_ERR_BAD_HANDLE, "host backend: reduce_scatter: param %u not added", (unsigned)param);
    if (numel != p->numel || partition_numel != p->partition_numel)
        return fail(c, ZO_ERR_INVALID_ARG,
                    "host backend: reduce_scatter(%u): numel/partition_numel %llu/%llu differ from %llu/%llu",
                    (unsigned)param, (unsigned long long)numel, (unsigned long long)partition_numel,
                    (unsigned long long)p->numel, (unsigned long long)p->partition_numel);
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
    for (size_t i = 0; i < c->bufs.cap; i++)
        h_free(c, c->bufs.vals[i]);
    for (size_t i = 0; i < c->params.cap; i++)
        h_free(c, c->params.vals[i]);
    map_free(c, &c->bufs);
    map_free(c, &c->params);
    map_free(c, &c->workset);
    zo_allocator a = c->alloc;
    h_free_raw(&a, c);
}

static const zo_backend_ops host_ops = {
    ZO_BACKEND_OPS_VERSION,
    "host",
    op_world_size,
    op_rank,
    op_param_add,
    op_param_remove,
    op_full_alloc,
    op_full_free,
    op_all_gather_start,
    op_wait,
    op_query,
    op_work_free,
    op_reduce_scatter,
    op_last_error,
    op_destroy,
};

/* ------------------------------------------------------------------ */
/* Public entry points                                                 */
/* ------------------------------------------------------------------ */

zo_status zo_backend_host_create(const zo_host_config *cfg, zo_backend **out)
{
    if (!out)
        return ZO_ERR_INVALID_ARG;
    *out = NULL;
    if (!cfg)
        return ZO_ERR_INVALID_ARG;
    zo_host_config c2;
    if (cfg->version == 1u && cfg->size == ZO_HOST_CONFIG_V1_SIZE) { /* version 1: no world */
        memset(&c2, 0, sizeof c2);
        memcpy(&c2, cfg, ZO_HOST_CONFIG_V1_SIZE);
        c2.size = sizeof c2;
        c2.version = ZO_HOST_CONFIG_VERSION;
        cfg = &c2;
    } else if (cfg->size != sizeof(zo_host_config) || cfg->version != ZO_HOST_CONFIG_VERSION) {
        return ZO_ERR_VERSION;
    }
    if (cfg->world)
        return ZO_ERR_UNSUPPORTED; /* TODO(world): multi-rank host world */
    if (cfg->world_size < 1 || cfg->world_size > ZO_MAX_WORLD_SIZE || cfg->rank < 0 ||
        cfg->rank >= cfg->world_size)
        return ZO_ERR_INVALID_ARG;
    if ((cfg->deferred != 0 && cfg->deferred != 1) || (cfg->no_copy != 0 && cfg->no_copy != 1))
        return ZO_ERR_INVALID_ARG;
    if (!cfg->allocator.alloc != !cfg->allocator.free)
        return ZO_ERR_INVALID_ARG;
    host_ctx *c = h_alloc_raw(&cfg->allocator, sizeof *c);
    if (!c)
        return ZO_ERR_NOMEM;
    memset(c, 0, sizeof *c);
    c->alloc = cfg->allocator;
    c->world_size = cfg->world_size;
    c->rank = cfg->rank;
    c->deferred = cfg->deferred;
    c->no_copy = cfg->no_copy;
    c->cap = cfg->max_bytes_per_param;
    c->pub.ops = &host_ops;
    c->pub.ctx = c;
    *out = &c->pub;
    return ZO_OK;
}

void zo_backend_destroy(zo_backend *b)
{
    if (!b || !b->ops || !b->ops->destroy)
        return;
    /* Every zoffload backend keeps its zo_backend struct inside its context
     * allocation: destroy frees both (through the backend's allocator). */
    b->ops->destroy(b->ctx);
}

int zo_host_progress(zo_backend *b)
{
    const host_ctx *cc = host_of(b);
    if (!cc)
        return ZO_ERR_INVALID_ARG;
    host_ctx *c = (host_ctx *)cc;
    int n = 0;
    for (host_work *w = c->works; w; w = w->next)
        if (!w->done && !w->delayed) {
            complete(c, w);
            if (n < INT_MAX)
                n++;
        }
    return n;
}

uint64_t zo_host_physical_bytes(const zo_backend *b, uint64_t bytes)
{
    const host_ctx *c = host_of(b);
    return c ? phys(c, bytes) : bytes;
}

int zo_host_is_host(const zo_backend *b) { return host_of(b) != NULL; }
size_t zo_host_live_full_buffers(const zo_backend *b) { const host_ctx *c = host_of(b); return c ? c->bufs.count : 0; }
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
    if (rank < 0 || rank >= c->world_size)
        return ZO_ERR_INVALID_ARG;
    const host_param *p = lookup(c, param);
    if (!p)
        return ZO_ERR_BAD_HANDLE;
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
        return ZO_ERR_INVALID_ARG;
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
