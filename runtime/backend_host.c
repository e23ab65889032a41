/*
 * backend_host.c - the host backend: an in-process data-parallel world of W
 * ranks that really stores every rank's shard and really copies them in
 * all-gathers.  It is the data plane of the unit tests and fuzz targets and
 * the default backend of a runtime created with zo_config.backend == NULL.
 *
 * Files: this one (single view, the vtable, creation, introspection),
 * host_world.c (the multi-rank world), host_cache.c (the cache of freed full
 * buffers), host_faults.c (fault injection); host.h has what they share.
 *
 * Two modes
 *   Single view (zo_host_config.world == NULL): one backend holds all W
 *   ranks' shards and completes every collective alone - one rank's view of
 *   an SPMD world in which every rank does what this one does.
 *   Multi-rank world (zo_host_config.world = a zo_host_world): W backends,
 *   one per rank, each driven by its own runtime on its own thread; rank r
 *   stores only its own shard and the world matches and performs the
 *   collectives across the ranks (host_world.c and
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
 *   shared with the MPI backend, as is the hash table below.)
 *
 * Shard layout (DeepSpeed's uniform padded partitions)
 *   shard_bytes = partition_numel * elem_size, partition_numel =
 *   ceil(numel / W).  Rank r's shard holds bytes [r*shard_bytes,
 *   (r+1)*shard_bytes) of the padded full tensor of W*shard_bytes bytes;
 *   bytes at or past numel*elem_size are padding and are zero.  The world is
 *   stored as one block per parameter, rank 0's shard first, so rank r's
 *   shard is block + r*shard_bytes: the layout of the flat output buffer of
 *   DeepSpeed's all-gather (torch.distributed.all_gather_into_tensor, rank
 *   r's partition at r * partition_numel elements, the padding at the end;
 *   checked in partition_parameters.py of DeepSpeed 0.19.8 and 0.15.4:
 *   flat_tensor = torch.empty(partition_sz * world_size)),
 *   so a single-view all-gather is one memcpy of the padded tensor's bytes
 *   into the full buffer (W = 1 included: the shard is copied, as
 *   DeepSpeed's all-gather copies it).  Shard blocks and full buffers start
 *   on a 64-byte line (an AVX copy into a destination off the line runs at
 *   about 0.7x on the benchmark machine).
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
 *   no_poison = -1 (ZO_HOST_TESTING_INIT, or no zo_host_testing at all)
 *   follows the build (ZO_BUILD_POISON: fill in sanitizer/fuzz/test builds,
 *   none in a release build).  (deferred, no_copy, no_poison and the cap are
 *   zo_host_testing fields, zoffload_testing.h.)
 *
 * Full buffer cache (zo_host_config.cache_bytes, host_cache.c)
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
 *   message in last_error(); nothing aborts.  Parameters (a slot array by
 *   id), live full buffers (a list per parameter) and live works (a pool of
 *   records, checked by address) are kept so that an unknown, stale or
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
#include "host.h"

static const zo_backend_ops host_ops;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

zo_status zo__host_fail(host_ctx *c, zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return st;
}

static zo_status map_reserve(host_ctx *c, zo__map *m) {
    return zo__map_reserve(m, &c->alloc, c->err, sizeof c->err, "host backend");
}

const host_ctx *zo__host_of(const zo_backend *b) {
    if (!b || b->ops != &host_ops || !b->ctx) return NULL;
    return (const host_ctx *)b->ctx;
}

static host_buf *find_in(host_buf *list, const void *full) {
    for (host_buf *b = list; b; b = b->live_next)
        if (data_of(b) == full) return b;
    return NULL;
}

/* checked_buf's search beyond the buffers of p (which may be NULL). */
static host_buf *checked_buf_others(host_ctx *c, const host_param *p, void *full) {
    host_buf *b;
    if ((b = find_in(c->orphans, full))) return b;
    for (size_t i = 0; i < c->slots_hi; i++)
        if (c->slots[i] && c->slots[i] != p && (b = find_in(c->slots[i]->bufs, full))) return b;
    for (size_t i = 0; i < c->sparse.cap; i++) {
        host_param *q = c->sparse.vals[i];
        if (q && q != p && (b = find_in(q->bufs, full))) return b;
    }
    return NULL;
}

/* The live full buffer `full` of this backend, or NULL: found among the
 * buffers of `param` (the caller's claim), else among all live buffers,
 * comparing addresses only, so a foreign, stale or double-freed pointer is
 * reported, never dereferenced. */
static inline host_buf *checked_buf(host_ctx *c, zo_param_id param, void *full) {
    if (!full) return NULL;
    host_param *p = lookup(c, param);
    host_buf *b = p ? find_in(p->bufs, full) : NULL;
    if (b || !c->nbufs) return b;
    /* not a buffer of that parameter: an error path, or a full_free /
     * gather naming another parameter */
    return checked_buf_others(c, p, full);
}

/* Counts one operation at pt and returns the armed fault's action if it
 * applies (zo__host_fault_hit), without a call when none is armed. */
static inline zo_host_fault_action fault_hit(host_ctx *c, zo_host_fault_point pt) {
    if (c->fault_action == ZO_HOST_FAULT_NONE) {
        c->fault_ops[pt]++;
        return ZO_HOST_FAULT_NONE;
    }
    return zo__host_fault_hit(c, pt);
}

static void buf_link(host_buf **head, host_buf *b) {
    b->live_prev = NULL;
    b->live_next = *head;
    if (*head) (*head)->live_prev = b;
    *head = b;
}

static void buf_unlink(host_ctx *c, host_buf *b) {
    if (b->live_prev)
        b->live_prev->live_next = b->live_next;
    else if (b->owner)
        b->owner->bufs = b->live_next;
    else
        c->orphans = b->live_next;
    if (b->live_next) b->live_next->live_prev = b->live_prev;
    b->live_prev = b->live_next = NULL;
}

/* Makes room for parameter id: a slot (growing the slot array while ids
 * stay dense), else an entry of the sparse map.  No change on error. */
static zo_status param_reserve(host_ctx *c, zo_param_id id) {
    if (id < c->nslots) return ZO_OK;
    if ((uint64_t)id >= (uint64_t)c->nparams * 2u + 1024u) return map_reserve(c, &c->sparse);
    size_t ncap = c->nslots ? c->nslots : 1024;
    while (ncap <= id) ncap *= 2;
    host_param **ns = h_alloc(c, ncap * sizeof *ns);
    if (!ns) return zo__host_fail(c, ZO_ERR_NOMEM, "host backend: out of memory growing a table to %zu slots", ncap);
    if (c->nslots) memcpy(ns, c->slots, c->nslots * sizeof *ns);
    memset(ns + c->nslots, 0, (ncap - c->nslots) * sizeof *ns);
    if (c->sparse.count) /* ids now below the slot count move to their slot */
        for (size_t i = c->nslots; i < ncap; i++) {
            host_param *q = zo__map_get(&c->sparse, (uint64_t)i);
            if (q) {
                ns[i] = q;
                zo__map_del(&c->sparse, (uint64_t)i);
                if (i >= c->slots_hi) c->slots_hi = i + 1;
            }
        }
    h_free(c, c->slots);
    c->slots = ns;
    c->nslots = ncap;
    return ZO_OK;
}

/* ------------------------------------------------------------------ */
/* Data movement                                                       */
/* ------------------------------------------------------------------ */

/* The collective itself (single view): every rank contributes its stored
 * part of its shard to its place in the full buffer.  The store holds the
 * padded tensor's first L bytes with rank r's shard at r * shard_bytes, the
 * layout of DeepSpeed's flat all-gather output (0.19.8 and 0.15.4; see the
 * header: rank r's partition at r * partition_numel elements, the padding at
 * the end), so the W shard
 * copies are one copy of L bytes: in pieces of HOST_COPY_PIECE bytes below
 * HOST_COPY_WHOLE_MIN, one memcpy from there (see host.h). */
static void gather_copy(host_ctx *c, const host_param *p, uint8_t *full) {
    uint64_t L = p->copy_bytes;
    if (L <= HOST_COPY_PIECE || L >= HOST_COPY_WHOLE_MIN) {
        memcpy(full, p->store, (size_t)L);
    } else {
        for (uint64_t off = 0; off < L; off += HOST_COPY_PIECE)
            memcpy(full + off, p->store + off, (size_t)min_u64(HOST_COPY_PIECE, L - off));
    }
    c->bytes_copied += L;
}

void zo__host_unlink_pending(host_work *w) {
    for (size_t i = 0; i < w->n; i++) {
        host_item *it = &w->items[i];
        if (it->p && it->p->pending == w) it->p->pending = NULL;
        if (it->buf && it->buf->pending == w) it->buf->pending = NULL;
    }
}

/* Performs the data movement of a pending work (deferred mode). */
void zo__host_complete(host_ctx *c, host_work *w) {
    if (w->done) return;
    size_t cancelled = 0;
    zo_param_id first = ZO_NO_PARAM;
    for (size_t i = 0; i < w->n; i++) {
        host_item *it = &w->items[i];
        if (it->cancelled || !it->p || !it->buf) {
            if (!cancelled++) first = it->param;
            continue;
        }
        if (!c->no_copy && !w->doomed) gather_copy(c, it->p, data_of(it->buf));
    }
    zo__host_unlink_pending(w);
    w->done = 1;
    c->npending--;
    zo__host_work_fate(c, w, cancelled, first);
}

/* The status of a completed work of this rank from its own items: an
 * injected FAIL_WORK fault, else cancelled items (ZO_ERR_STATE), else
 * unchanged (single view and the host world alike). */
void zo__host_work_fate(host_ctx *c, host_work *w, size_t cancelled, zo_param_id first) {
    if (w->doomed) {
        w->status = w->doomed;
        zo__host_fail(c, w->doomed, "host backend: injected fault: the all-gather of %zu parameter(s) failed", w->n);
    } else if (cancelled) {
        w->status = ZO_ERR_STATE;
        zo__host_fail(c, ZO_ERR_STATE,
                      "host backend: %zu item(s) of an all-gather were cancelled before it completed "
                      "(first: param %u; its full buffer was freed or the parameter removed while in flight)",
                      cancelled, (unsigned)first);
    }
}

/* The live work zw of this backend, or NULL: found by its address among
 * the pool's chunks, so a foreign or stale handle is reported, never
 * dereferenced. */
static host_work *checked_work(host_ctx *c, zo_work *zw) {
    uintptr_t a = (uintptr_t)zw;
    for (size_t k = c->nwchunks; zw && k-- > 0;) { /* the largest chunk holds half the records */
        uintptr_t base = (uintptr_t)c->wchunk[k];
        size_t count = (size_t)HOST_WORK_CHUNK0 << k;
        if (a >= base && a - base < count * sizeof(host_work)) {
            if ((a - base) % sizeof(host_work)) return NULL;
            host_work *w = (host_work *)a;
            return w->live ? w : NULL;
        }
    }
    return NULL;
}

static void work_stack_push(host_ctx *c, host_work *w) {
    w->live = 0;
    w->next = c->wfree;
    c->wfree = w;
}

/* A freed record enters the quarantine ring; the oldest there, if the ring
 * is full, becomes reusable. */
static void work_pool_push(host_ctx *c, host_work *w) {
    w->live = 0;
    if (c->wquar_n == HOST_WORK_QUARANTINE) {
        work_stack_push(c, c->wquar[c->wquar_head]);
        c->wquar[c->wquar_head] = w;
        c->wquar_head = (c->wquar_head + 1) % HOST_WORK_QUARANTINE;
        return;
    }
    c->wquar[(c->wquar_head + c->wquar_n++) % HOST_WORK_QUARANTINE] = w;
}

/* Adds the next chunk of records to the free stack; 0 when out of memory
 * or chunks (nothing changed). */
static int work_grow(host_ctx *c) {
    size_t count = (size_t)HOST_WORK_CHUNK0 << c->nwchunks;
    void *raw = c->nwchunks < HOST_WORK_CHUNKS ? h_alloc(c, count * sizeof(host_work) + 63u) : NULL;
    if (!raw) return 0;
    host_work *ch = (host_work *)(((uintptr_t)raw + 63u) & ~(uintptr_t)63u);
    memset(ch, 0, count * sizeof *ch);
    c->wchunk_raw[c->nwchunks] = raw;
    c->wchunk[c->nwchunks++] = ch;
    for (size_t i = count; i-- > 0;) work_stack_push(c, &ch[i]);
    return 1;
}

/* A free work record with room for n items (its own items for n <= HOST_WORK_INLINE),
 * cleared except for its kept item array; NULL when out of memory
 * (nothing changed). */
static host_work *work_take(host_ctx *c, size_t n) {
    if (!c->wfree && !work_grow(c)) return NULL;
    host_work *w = c->wfree;
    host_item *items = w->inl;
    if (n > HOST_WORK_INLINE) {
        if (w->heap_cap < n) {
            size_t cap = n < 4 ? 4 : n;
            host_item *heap = h_alloc(c, cap * sizeof *heap);
            if (!heap) return NULL;
            if (w->heap)
                h_free(c, w->heap);
            else
                c->nwheaps++;
            w->heap = heap;
            w->heap_cap = cap;
        }
        items = w->heap;
    }
    c->wfree = w->next;
    w->items = items;
    w->n = 0;
    w->live = w->done = w->delayed = w->listed = 0;
    w->doomed = w->status = ZO_OK;
    /* the second line (prev, we, heap) is left alone for a one-item work
     * outside a world: prev is set when the work is listed, and we is NULL
     * there from the chunk's memset on */
    w->next = NULL;
    if (c->world) w->we = NULL;
    return w;
}


/* Cancels the items of pending works that refer to p or buf. */
static void cancel_for_param(host_ctx *c, host_param *p) {
    if (!p->pending) return;
    host_work *w = p->pending;
    for (size_t i = 0; i < w->n; i++)
        if (w->items[i].p == p) {
            zo__host_world_cancel_item(c, w, i);
            w->items[i].cancelled = 1;
            if (w->items[i].buf && w->items[i].buf->pending == w) w->items[i].buf->pending = NULL;
            w->items[i].p = NULL;
            w->items[i].buf = NULL;
        }
    p->pending = NULL;
    zo__host_fail(c, ZO_ERR_STATE, "host backend: param %u removed while its all-gather was in flight",
                  (unsigned)p->id);
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */
/* ------------------------------------------------------------------ */

static int op_world_size(void *ctx) { return ctx ? ctx_of(ctx)->world_size : 0; }
static int op_rank(void *ctx) { return ctx ? ctx_of(ctx)->rank : -1; }

/* Spare bytes for placing the record of a block of `head` + `bytes` bytes:
 * HOST_PAGE_SLACK from HOST_COPY_WHOLE_MIN data bytes (page placement), 63
 * below (line alignment), 0 where either would pass ZO_HOST_MAX_ALLOC. */
static size_t place_slack(uint64_t head, uint64_t bytes) {
    size_t slack = bytes >= HOST_COPY_WHOLE_MIN ? HOST_PAGE_SLACK : 63u;
    return head + bytes + slack <= ZO_HOST_MAX_ALLOC ? slack : 0u;
}

/* Where a block's record goes inside its allocation `raw` of `slack` spare
 * bytes: 0 spare bytes, at raw; up to 63, on the next 64-byte line; up to
 * HOST_PAGE_SLACK, where the data `lead` bytes after the record starts at
 * page offset `page_off` (see host.h). */
static void *place(void *raw, size_t slack, size_t lead, uintptr_t page_off) {
    uintptr_t a = (uintptr_t)raw;
    if (slack < HOST_PAGE_SLACK) return (void *)((a + slack) & ~(uintptr_t)slack);
    return (void *)(a + ((page_off - (a + lead)) & 4095u));
}

static zo_status op_param_add(void *ctx, zo_param_id param, uint64_t numel, uint32_t elem_size,
                              uint64_t partition_numel) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    zo_status st;
    uint64_t W = (uint64_t)c->world_size;
    if (lookup(c, param))
        return zo__host_fail(c, ZO_ERR_EXISTS, "host backend: param_add: param %u already added", (unsigned)param);

    uint64_t full_bytes = numel * elem_size;
    uint64_t shard_bytes = partition_numel * elem_size;
    uint64_t padded = shard_bytes * W;
    uint64_t L = c->no_copy ? 0 : phys(c, padded);
    /* world: only this rank's stored part of its own shard */
    uint64_t own_off = (uint64_t)c->rank * shard_bytes;
    uint64_t stored = !c->world ? L : own_off < L ? min_u64(shard_bytes, L - own_off) : 0;
    size_t head = (sizeof(host_param) + 63u) & ~(size_t)63u;
    if (L > ZO_HOST_MAX_ALLOC - head)
        return zo__host_fail(c, ZO_ERR_NOMEM,
                             "host backend: param_add(%u): %llu bytes of shards exceed the %llu-byte limit "
                             "(set max_bytes_per_param)",
                             (unsigned)param, (unsigned long long)L, (unsigned long long)ZO_HOST_MAX_ALLOC);
    st = param_reserve(c, param);
    if (st != ZO_OK) return st;
    /* the record on a line boundary, a large store's data on a page
     * (place_slack, place) */
    size_t slack = place_slack(head, stored);
    void *block = h_alloc(c, head + (size_t)stored + slack);
    host_param *p = (host_param *)place(block, slack, head, HOST_STORE_PAGE_OFF);
    if (!block)
        return zo__host_fail(c, ZO_ERR_NOMEM, "host backend: param_add(%u): out of memory for %llu bytes of shards",
                             (unsigned)param, (unsigned long long)L);
    memset(p, 0, sizeof *p);
    p->block = block;
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
    if (param < c->nslots) {
        c->slots[param] = p;
        if (param >= c->slots_hi) c->slots_hi = (size_t)param + 1;
    } else {
        zo__map_put(&c->sparse, param, p);
    }
    c->nparams++;
    c->shard_bytes_total += stored;
    return ZO_OK;
}

static void op_param_remove(void *ctx, zo_param_id param) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return;
    host_param *p = lookup(c, param);
    if (!p) {
        zo__host_fail(c, ZO_ERR_BAD_HANDLE, "host backend: param_remove: param %u not added", (unsigned)param);
        return;
    }
    cancel_for_param(c, p);
    while (p->bufs) { /* its live buffers stay valid handles */
        host_buf *b = p->bufs;
        buf_unlink(c, b);
        b->owner = NULL;
        buf_link(&c->orphans, b);
    }
    if (param < c->nslots)
        c->slots[param] = NULL;
    else
        zo__map_del(&c->sparse, param);
    c->nparams--;
    c->shard_bytes_total -= p->copy_bytes;
    h_free(c, p->block);
}

static zo_status op_full_alloc(void *ctx, zo_param_id param, size_t bytes, void **out) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    uint64_t cap = phys(c, bytes);
    host_param *p = lookup(c, param);
    if (!p || cap > ZO_HOST_MAX_ALLOC - HOST_BUF_HDR) /* refused: the checks say why */
        return zo__full_alloc_check(c->err, sizeof c->err, "host backend", param, p != NULL, cap, HOST_BUF_HDR);
    host_buf *b = c->cache_count ? zo__host_cache_take(c, (size_t)cap) : NULL;
    if (!b) {
        /* header and data on a line boundary (a copy into a destination
         * off the line runs at about 0.7x here), a large buffer's data 64
         * bytes into a page (place_slack, place) */
        size_t slack = place_slack(HOST_BUF_HDR, cap);
        void *raw = h_alloc(c, HOST_BUF_HDR + (size_t)cap + slack);
        if (!raw)
            return zo__host_fail(c, ZO_ERR_NOMEM, "host backend: full_alloc(%u): out of memory for %llu bytes",
                                 (unsigned)param, (unsigned long long)cap);
        b = (host_buf *)place(raw, slack, HOST_BUF_HDR, HOST_FULL_PAGE_OFF);
        b->slack = (uint32_t)((uint8_t *)b - (uint8_t *)raw);
    }
    b->param = param;
    b->requested = bytes;
    b->capacity = (size_t)cap;
    b->pending = NULL;
    b->mark = 0;
    b->owner = p;
    buf_link(&p->bufs, b);
    c->nbufs++;
    /* fresh or reused: the same 0xA5 content (a reused buffer holds the
     * previous parameter's bytes, which must not pass for a gather) */
    if (!c->no_copy && !c->no_poison) memset(data_of(b), HOST_POISON, (size_t)cap);
    *out = data_of(b);
    return ZO_OK;
}

/* full_free's release: back to the cache if it fits, else to the allocator. */
static void buf_release(host_ctx *c, host_buf *b) {
    buf_unlink(c, b);
    c->nbufs--;
    if (!zo__host_cache_put(c, b)) buf_dealloc(c, b);
}

static void op_full_free(void *ctx, zo_param_id param, void *full) {
    host_ctx *c = ctx_of(ctx);
    if (!c || !full) return;
    host_buf *b = checked_buf(c, param, full);
    if (b && b->param == param && !b->pending) { /* the usual case */
        buf_release(c, b);
        return;
    }
    if (!b) {
        zo__host_fail(c, ZO_ERR_INVALID_ARG,
                      "host backend: full_free(%u): buffer %p is not a live full buffer of this backend",
                      (unsigned)param, full);
        return;
    }
    if (b->param != param)
        zo__host_fail(c, ZO_ERR_INVALID_ARG,
                      "host backend: full_free: buffer of param %u freed as param %u (freed anyway)",
                      (unsigned)b->param, (unsigned)param);
    if (b->pending) {
        host_work *w = b->pending;
        for (size_t i = 0; i < w->n; i++)
            if (w->items[i].buf == b) {
                zo__host_world_cancel_item(c, w, i);
                w->items[i].cancelled = 1;
                w->items[i].buf = NULL;
                if (w->items[i].p && w->items[i].p->pending == w) w->items[i].p->pending = NULL;
                w->items[i].p = NULL;
            }
        zo__host_fail(c, ZO_ERR_STATE, "host backend: full buffer of param %u freed while its all-gather was in flight",
                      (unsigned)b->param);
    }
    buf_release(c, b);
}

static zo_status op_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    if (n > (SIZE_MAX - sizeof(host_work)) / sizeof(host_item))
        return zo__host_fail(c, ZO_ERR_INVALID_ARG, "host backend: all_gather_start: n = %zu too large", n);

    /* validate everything before any side effect */
    uint64_t gen = ++c->mark_gen;
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &items[i];
        host_param *p = lookup(c, it->param);
        host_buf *b = p ? find_in(p->bufs, it->full) : NULL; /* a buffer on p's list is p's */
        if (!b || it->numel != p->numel || it->partition_numel != p->partition_numel || it->elem_size != p->elem_size ||
            b->capacity < p->copy_bytes || p->pending || p->mark == gen || b->pending || b->mark == gen) {
            /* refused (or the buffer is on another list): the checks, in
             * their order, say why */
            b = checked_buf(c, it->param, it->full);
            zo_status st = zo__gather_item_check(
                c->err, sizeof c->err, "host backend", i, it,
                p ? &(zo__gather_param){p->numel, p->partition_numel, p->elem_size, p->copy_bytes,
                                        p->pending || p->mark == gen}
                  : NULL,
                b ? &(zo__gather_buf){b->param, b->capacity, b->pending || b->mark == gen} : NULL);
            if (st != ZO_OK) return st;
        }
        p->mark = gen;
        b->mark = gen;
    }

    zo_host_fault_action fa = fault_hit(c, ZO_HOST_FAULT_GATHER);
    if (fa == ZO_HOST_FAULT_FAIL)
        return zo__host_fail(c, zo__host_fault_status(c),
                             "host backend: all_gather_start: injected fault (gather %llu)",
                             (unsigned long long)c->fault_ops[ZO_HOST_FAULT_GATHER]);

    zo_status st;
    host_work *w = work_take(c, n);
    if (!w)
        return zo__host_fail(c, ZO_ERR_NOMEM, "host backend: all_gather_start: out of memory for a work of %zu items",
                             n);
    wentry *we = NULL;
    if (c->world) {
        we = zo__host_entry_new(c->world, WK_GATHER, c->rank, n);
        if (!we) {
            work_stack_push(c, w);
            return zo__host_fail(c, ZO_ERR_NOMEM, "host world: all_gather_start: out of memory for a collective entry");
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
        st = zo__host_world_issue(c->world, we);
        pthread_mutex_unlock(&c->world->mu);
        if (st != ZO_OK) {
            zo__host_entry_free(c->world, we);
            work_stack_push(c, w);
            return zo__host_fail(c, st, "host world: all_gather_start: out of memory for a collective record");
        }
    }
    w->n = n;
    w->status = ZO_OK;
    w->delayed = !c->world && fa == ZO_HOST_FAULT_DELAY; /* world: completion waits for the ranks anyway */
    if (c->world) w->we = we;
    w->doomed = fa == ZO_HOST_FAULT_FAIL_WORK ? zo__host_fault_status(c) : ZO_OK;
    for (size_t i = 0; i < n; i++) {
        host_item *wi = &w->items[i];
        wi->param = items[i].param;
        wi->cancelled = 0;
        wi->p = lookup(c, items[i].param);
        wi->buf = buf_of(items[i].full);
    }
    w->live = 1;
    c->nworks++;

    if (c->world || c->deferred || w->delayed) {
        w->listed = 1;
        w->prev = NULL;
        w->next = c->works;
        if (c->works) c->works->prev = w;
        c->works = w;
        for (size_t i = 0; i < n; i++) {
            w->items[i].p->pending = w;
            w->items[i].buf->pending = w;
        }
        c->npending++;
    } else {
        /* immediate: the collective completes now (zo__host_complete's
         * work for a group nothing can have cancelled yet) */
        if (!c->no_copy && !w->doomed)
            for (size_t i = 0; i < n; i++) gather_copy(c, w->items[i].p, data_of(w->items[i].buf));
        w->done = 1;
        if (w->doomed) zo__host_work_fate(c, w, 0, ZO_NO_PARAM);
    }
    *out = (zo_work *)w;
    return ZO_OK;
}

static zo_status op_wait(void *ctx, zo_work *zw) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    host_work *w = checked_work(c, zw);
    if (!w) return zo__host_fail(c, ZO_ERR_INVALID_ARG, "host backend: wait: not a live work of this backend");
    switch (fault_hit(c, ZO_HOST_FAULT_WAIT)) {
    case ZO_HOST_FAULT_FAIL:
        return zo__host_fail(c, zo__host_fault_status(c), "host backend: wait: injected fault (completion check %llu)",
                             (unsigned long long)c->fault_ops[ZO_HOST_FAULT_WAIT]);
    case ZO_HOST_FAULT_FAIL_WORK:
        if (c->world)
            zo__host_world_doom(c, w);
        else
            zo__host_doom_now(c, w);
        return w->status;
    case ZO_HOST_FAULT_DELAY: zo__host_sleep_us(c->fault.delay_us); break;
    default: break;
    }
    if (c->world) {
        if (!w->done) {
            pthread_mutex_lock(&c->world->mu);
            zo__host_world_block(c->world, w->we);
            zo__host_world_observe(c, w);
            pthread_mutex_unlock(&c->world->mu);
        }
        return w->status;
    }
    zo__host_complete(c, w);
    return w->status;
}

static zo_status op_query(void *ctx, zo_work *zw, int *done) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    host_work *w = checked_work(c, zw);
    if (!w) return zo__host_fail(c, ZO_ERR_INVALID_ARG, "host backend: query: not a live work of this backend");
    switch (fault_hit(c, ZO_HOST_FAULT_WAIT)) {
    case ZO_HOST_FAULT_FAIL:
        *done = 0;
        return zo__host_fail(c, zo__host_fault_status(c), "host backend: query: injected fault (completion check %llu)",
                             (unsigned long long)c->fault_ops[ZO_HOST_FAULT_WAIT]);
    case ZO_HOST_FAULT_FAIL_WORK:
        if (c->world)
            zo__host_world_doom(c, w);
        else
            zo__host_doom_now(c, w);
        *done = 1;
        return w->status;
    case ZO_HOST_FAULT_DELAY: *done = 0; return ZO_OK;
    default: break;
    }
    if (c->world && !w->done) {
        pthread_mutex_lock(&c->world->mu);
        if (w->we->done) zo__host_world_observe(c, w);
        pthread_mutex_unlock(&c->world->mu);
    }
    *done = w->done;
    return w->done ? w->status : ZO_OK;
}

static void work_release(host_ctx *c, host_work *w) {
    if (!w->done) {
        /* freed without a wait: the gather is abandoned, nothing is copied
         * (world: for this rank; the others still get its contribution) */
        if (c->world) {
            pthread_mutex_lock(&c->world->mu);
            zo__host_entry_detach(c->world, w->we);
            pthread_mutex_unlock(&c->world->mu);
            w->we = NULL;
        }
        zo__host_unlink_pending(w);
        c->npending--;
    }
    if (w->listed) {
        if (w->prev)
            w->prev->next = w->next;
        else
            c->works = w->next;
        if (w->next) w->next->prev = w->prev;
    }
    c->nworks--;
    work_pool_push(c, w);
}

static void op_work_free(void *ctx, zo_work *zw) {
    host_ctx *c = ctx_of(ctx);
    if (!c || !zw) return;
    host_work *w = checked_work(c, zw);
    if (!w) {
        zo__host_fail(c, ZO_ERR_INVALID_ARG, "host backend: work_free: not a live work of this backend");
        return;
    }
    work_release(c, w);
}

/* exchange: not subject to fault injection (it is the runtime's checking
 * channel, not a data-plane operation). */
static zo_status op_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    if (c->world) {
        wentry *e = zo__host_entry_new(c->world, WK_EXCHANGE, c->rank, 0);
        if (!e) return zo__host_fail(c, ZO_ERR_NOMEM, "host world: exchange: out of memory");
        e->send = send;
        e->recv = recv;
        e->bytes = bytes;
        return zo__host_world_blocking_call(c, e, "exchange");
    }
    /* single view: every rank is this rank (SPMD) */
    for (int r = 0; r < c->world_size; r++) memmove((uint8_t *)recv + (size_t)r * bytes, send, bytes);
    return ZO_OK;
}

static zo_status op_reduce_scatter(void *ctx, zo_param_id param, const float *full_grad, float *shard_out,
                                   uint64_t numel, uint64_t partition_numel, zo_reduce_op op) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    host_param *p = lookup(c, param);
    zo_status st = zo__reduce_scatter_check(c->err, sizeof c->err, "host backend", param, numel, partition_numel,
                                            p != NULL, p ? p->numel : 0, p ? p->partition_numel : 0);
    if (st != ZO_OK) return st;
    if (c->world) {
        /* a real blocking collective over the ranks' gradients */
        wentry *e = zo__host_entry_new(c->world, WK_RS, c->rank, 1);
        if (!e) return zo__host_fail(c, ZO_ERR_NOMEM, "host world: reduce_scatter(%u): out of memory", (unsigned)param);
        e->items[0].param = param;
        e->items[0].numel = numel;
        e->items[0].partition_numel = partition_numel;
        e->items[0].elem_size = (uint32_t)sizeof(float);
        e->grad = full_grad;
        e->out = shard_out;
        e->op = op;
        return zo__host_world_blocking_call(c, e, "reduce_scatter");
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
        for (int k = 0; k < c->world_size; k++) acc += full_grad[j];
        shard_out[i] = (op == ZO_REDUCE_AVG) ? acc / (float)c->world_size : acc;
    }
    return ZO_OK;
}

static const char *op_last_error(void *ctx) { return ctx ? ctx_of(ctx)->err : NULL; }

static void op_destroy(void *ctx) {
    host_ctx *c = ctx_of(ctx);
    if (!c) return;
    while (c->works) work_release(c, c->works); /* the unlisted live works are complete: nothing to undo */
    if (c->world) {
        /* the rank leaves: nothing of it is referenced by the world any more */
        zo_host_world *w = c->world;
        pthread_mutex_lock(&w->mu);
        w->r[c->rank].state = 2;
        w->nleft++;
        zo__host_world_check_hang(w);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    while (c->orphans) {
        host_buf *b = c->orphans;
        c->orphans = b->live_next;
        buf_dealloc(c, b);
    }
    /* the slots in use, then the map */
    for (size_t i = 0; i < c->slots_hi + c->sparse.cap; i++) {
        host_param *p = i < c->slots_hi ? c->slots[i] : c->sparse.vals[i - c->slots_hi];
        if (!p) continue;
        while (p->bufs) {
            host_buf *b = p->bufs;
            p->bufs = b->live_next;
            buf_dealloc(c, b);
        }
        h_free(c, p->block);
    }
    zo__host_cache_free_all(c);
    h_free(c, c->slots);
    zo__map_free(&c->sparse, &c->alloc);
    for (size_t k = 0; k < c->nwchunks; k++) {
        for (size_t i = 0; c->nwheaps && i < ((size_t)HOST_WORK_CHUNK0 << k); i++) {
            if (!c->wchunk[k][i].heap) continue;
            h_free(c, c->wchunk[k][i].heap);
            c->nwheaps--;
        }
        h_free(c, c->wchunk_raw[k]);
    }
    zo_allocator a = c->alloc;
    zo__host_free(&a, c);
}

/* the record full_alloc, all_gather_start and full_free read first (its
 * first line: host_param) */
static void op_prefetch(void *ctx, zo_param_id param) {
    host_ctx *c = ctx_of(ctx);
    const host_param *p = c ? lookup(c, param) : NULL;
    if (p) __builtin_prefetch(p);
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
    .prefetch = op_prefetch,
};

/* ------------------------------------------------------------------ */
/* Public entry points                                                 */
/* ------------------------------------------------------------------ */

zo_status zo_backend_host_create(const zo_host_config *cfg, zo_backend **out) {
    if (!out) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: out is NULL");
    *out = NULL;
    if (!cfg) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: cfg is NULL");
    /* the settings, from any accepted layout */
    zo_host_config c3;
    zo_host_testing t = ZO_HOST_TESTING_INIT;
    if ((cfg->version == 1u && cfg->size == ZO_HOST_CONFIG_V1_SIZE) ||
        (cfg->version == 2u && cfg->size == sizeof(zo_host_config_v2))) {
        zo_host_config_v2 old;
        memset(&old, 0, sizeof old);
        memcpy(&old, cfg, cfg->size);
        if (cfg->version == 1u) old.no_poison = 0; /* version 1 poisons (and has no cache, no world) */
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
                            cfg->size, (unsigned)cfg->version, sizeof(zo_host_config),
                            (unsigned)ZO_HOST_CONFIG_VERSION);
    } else if (cfg->testing) {
        t = *cfg->testing;
    }
    if (cfg->world_size < 1 || cfg->world_size > ZO_MAX_WORLD_SIZE)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: world_size %d not in 1..%d", cfg->world_size,
                            ZO_MAX_WORLD_SIZE);
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
    if (!c) return zo__fail_tls(ZO_ERR_NOMEM, "zo_backend_host_create: context");
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
            st =
                zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_host_create: rank %d already joined the world", cfg->rank);
        else if (w->have_cfg && (w->cap != c->cap || w->no_copy != c->no_copy))
            st =
                zo__fail_tls(ZO_ERR_INVALID_ARG, /* every rank must store and copy the same bytes */
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

int zo_host_progress(zo_backend *b) {
    const host_ctx *cc = zo__host_of(b);
    if (!cc) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_progress: b is %s", b ? "not a host backend" : "NULL");
    host_ctx *c = (host_ctx *)cc;
    int n = 0;
    if (c->world) return 0; /* a world backend's collectives complete when every rank issued them */
    for (host_work *w = c->works; w; w = w->next)
        if (!w->done && !w->delayed) {
            zo__host_complete(c, w);
            if (n < INT_MAX) n++;
        }
    return n;
}

int zo_host_poison_default(void) { return ZO_BUILD_POISON ? 1 : 0; }

uint64_t zo_host_physical_bytes(const zo_backend *b, uint64_t bytes) {
    const host_ctx *c = zo__host_of(b);
    return c ? phys(c, bytes) : bytes;
}

int zo_host_is_host(const zo_backend *b) { return zo__host_of(b) != NULL; }
size_t zo_host_live_full_buffers(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->nbufs : 0;
}
size_t zo_host_live_works(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->nworks : 0;
}
size_t zo_host_pending_works(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->npending : 0;
}
size_t zo_host_param_count(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->nparams : 0;
}
uint64_t zo_host_shard_bytes(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->shard_bytes_total : 0;
}
uint64_t zo_host_bytes_copied(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->bytes_copied : 0;
}

zo_status zo_host_shard(const zo_backend *b, zo_param_id param, int rank, const uint8_t **data, uint64_t *stored) {
    const host_ctx *c = zo__host_of(b);
    if (!c || !data || !stored) return ZO_ERR_INVALID_ARG;
    *data = NULL;
    *stored = 0;
    if (rank < 0 || rank >= c->world_size || (c->world && rank != c->rank))
        return ZO_ERR_INVALID_ARG; /* a world backend stores only its own rank's shard */
    const host_param *p = lookup(c, param);
    if (!p) return ZO_ERR_BAD_HANDLE;
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
