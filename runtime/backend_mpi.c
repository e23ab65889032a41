/*
 * backend_mpi.c - the MPI data plane (zoffload_mpi.h has the semantics).
 *
 * Layout per rank
 *   mpi_param  one per parameter: sizes, and this rank's stored part of its
 *              shard (bytes [r*shard_bytes, min((r+1)*shard_bytes, L)) of the
 *              padded tensor, L = min(cap, W*shard_bytes)), filled from
 *              zo_host_param_byte with zero padding.
 *   mpi_buf    header in front of every full buffer (like the host backend),
 *              found through a table so a foreign or stale pointer is
 *              reported, never dereferenced.
 *   mpi_work   the requests of one all_gather_start group, their per-item
 *              Iallgatherv count/displacement arrays (which MPI requires to
 *              stay valid until completion) and the parameters / buffers it
 *              writes into, so freeing them while it is pending waits first.
 *
 * MPI errors: the duplicated communicator has MPI_ERRORS_RETURN; every MPI
 * return code other than MPI_SUCCESS becomes ZO_ERR_BACKEND with the
 * operation and MPI_Error_string in last_error().  A work whose wait or test
 * failed is complete (status kept): its requests are not touched again.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmap.h"
#include "zoffload_mpi.h"

#define MPI_POISON    ZO__HOST_POISON
#define MPI_MAX_ALLOC ZO__HOST_MAX_ALLOC
/* The three limits below can be lowered at compile time so that tests reach
 * the large-count paths with small tensors (tests/mpi: mpi/backend_small_counts). */
#ifndef ZO_MPI_COUNT_MAX
#define ZO_MPI_COUNT_MAX INT_MAX /* largest count passed as one MPI int count */
#endif
#ifndef ZO_MPI_BIG_UNIT
#define ZO_MPI_BIG_UNIT (1ull << 30) /* unit of the derived datatypes for counts above ZO_MPI_COUNT_MAX */
#endif
#ifndef ZO_MPI_RS_CHUNK
#define ZO_MPI_RS_CHUNK (1ull << 27) /* reduce-scatter elements per rank per MPI call */
#endif
#define MPI_RS_CHUNK  ((uint64_t)(ZO_MPI_RS_CHUNK))
#define MPI_BIG_UNIT  ((uint64_t)(ZO_MPI_BIG_UNIT))
#define MPI_COUNT_MAX ((uint64_t)(ZO_MPI_COUNT_MAX))

typedef struct mpi_work mpi_work;

typedef struct mpi_param {
    zo_param_id id;
    uint32_t elem_size;
    uint64_t numel, partition_numel;
    uint64_t full_bytes, shard_bytes, padded_bytes;
    uint64_t copy_bytes; /* L */
    uint64_t stored;     /* bytes of this rank's shard that exist */
    uint8_t *store;      /* stored bytes (NULL when stored == 0) */
    mpi_work *pending;
    uint64_t mark;
} mpi_param;

typedef struct mpi_buf {
    zo_param_id param;
    size_t requested, capacity;
    mpi_work *pending;
    uint64_t mark;
} mpi_buf;

#define MPI_BUF_HDR ((sizeof(mpi_buf) + 63u) & ~(size_t)63u)

typedef struct mpi_witem {
    mpi_param *p;
    mpi_buf *b;
} mpi_witem;

struct mpi_work {
    int done;
    zo_status status;
    size_t n; /* items */
    int nreq;
    MPI_Request *reqs;
    int *ints; /* Iallgatherv counts and displacements */
    mpi_witem *items;
};

typedef struct mpi_ctx {
    zo_backend pub;
    zo_allocator alloc;
    MPI_Comm comm;
    int world_size, rank;
    uint64_t cap;
    zo__map params, bufs, works;
    uint64_t mark_gen;
    zo_mpi_stats st;
    char err[384];
} mpi_ctx;

static const zo_backend_ops mpi_ops;

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
static _Thread_local char create_err[256];
#else
static __thread char create_err[256];
#endif

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static zo_status fail(mpi_ctx *c, zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return st;
}

/* ZO_ERR_BACKEND for MPI return code rc of operation `what`. */
static zo_status mpi_fail(mpi_ctx *c, int rc, const char *what) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS || len <= 0) snprintf(msg, sizeof msg, "MPI error code %d", rc);
    return fail(c, ZO_ERR_BACKEND, "mpi backend: %s: %s", what, msg);
}

static void *m_alloc(mpi_ctx *c, size_t n) { return zo__host_alloc(&c->alloc, n); }
static void m_free(mpi_ctx *c, void *p) { zo__host_free(&c->alloc, p); }

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t phys(const mpi_ctx *c, uint64_t bytes) { return c->cap ? min_u64(bytes, c->cap) : bytes; }

/* Makes room for one more entry in m; no change on error. */
static zo_status map_reserve(mpi_ctx *c, zo__map *m) {
    return zo__map_reserve(m, &c->alloc, c->err, sizeof c->err, "mpi backend");
}

static mpi_ctx *ctx_of(void *ctx) { return (mpi_ctx *)ctx; }
static mpi_param *lookup(const mpi_ctx *c, zo_param_id id) { return zo__map_get(&c->params, id); }
static mpi_buf *buf_hdr(void *full) { return (mpi_buf *)((uint8_t *)full - MPI_BUF_HDR); }
static uint8_t *buf_data(mpi_buf *b) { return (uint8_t *)b + MPI_BUF_HDR; }
static mpi_buf *checked_buf(const mpi_ctx *c, void *full) {
    return full ? zo__map_get(&c->bufs, (uint64_t)(uintptr_t)full) : NULL;
}
static mpi_work *checked_work(const mpi_ctx *c, zo_work *w) {
    return w ? zo__map_get(&c->works, (uint64_t)(uintptr_t)w) : NULL;
}

/* A datatype of exactly n bytes (extent n) for n > MPI_COUNT_MAX: q units of
 * MPI_BIG_UNIT bytes plus a remainder (BigMPI's construction).  Returns the
 * MPI return code. */
static int make_big_type(uint64_t n, MPI_Datatype *out) {
    MPI_Datatype unit = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL;
    uint64_t q = n / MPI_BIG_UNIT, r = n % MPI_BIG_UNIT;
    int rc = MPI_Type_contiguous((int)MPI_BIG_UNIT, MPI_BYTE, &unit);
    if (rc == MPI_SUCCESS) rc = MPI_Type_contiguous((int)q, unit, &body);
    if (rc == MPI_SUCCESS && r == 0) {
        *out = body;
        body = MPI_DATATYPE_NULL;
    } else if (rc == MPI_SUCCESS) {
        int lens[2] = {1, (int)r};
        MPI_Aint disp[2] = {0, (MPI_Aint)(q * MPI_BIG_UNIT)};
        MPI_Datatype types[2] = {body, MPI_BYTE};
        rc = MPI_Type_create_struct(2, lens, disp, types, out);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(out);
    if (unit != MPI_DATATYPE_NULL) MPI_Type_free(&unit);
    if (body != MPI_DATATYPE_NULL) MPI_Type_free(&body);
    return rc;
}

/* Bytes rank r stores of p (its part of [0, L)). */
static uint64_t rank_stored(const mpi_param *p, int r) {
    uint64_t off = (uint64_t)r * p->shard_bytes;
    return off < p->copy_bytes ? min_u64(p->shard_bytes, p->copy_bytes - off) : 0;
}

/* ------------------------------------------------------------------ */
/* Works                                                               */
/* ------------------------------------------------------------------ */

static void unlink_work(mpi_work *w) {
    for (size_t i = 0; i < w->n; i++) {
        if (w->items[i].p && w->items[i].p->pending == w) w->items[i].p->pending = NULL;
        if (w->items[i].b && w->items[i].b->pending == w) w->items[i].b->pending = NULL;
    }
}

/* Blocks until w completed (MPI_Waitall); idempotent. */
static zo_status work_complete(mpi_ctx *c, mpi_work *w) {
    if (w->done) return w->status;
    int rc = w->nreq ? MPI_Waitall(w->nreq, w->reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    w->done = 1;
    unlink_work(w);
    if (rc != MPI_SUCCESS) w->status = mpi_fail(c, rc, "MPI_Waitall (all-gather)");
    return w->status;
}

static void work_release(mpi_ctx *c, mpi_work *w) {
    if (!w->done) {
        c->st.blocking_frees++;
        work_complete(c, w);
    }
    zo__map_del(&c->works, (uint64_t)(uintptr_t)w);
    m_free(c, w);
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */
/* ------------------------------------------------------------------ */

static int op_world_size(void *ctx) { return ctx ? ctx_of(ctx)->world_size : 0; }
static int op_rank(void *ctx) { return ctx ? ctx_of(ctx)->rank : -1; }

static zo_status op_param_add(void *ctx, zo_param_id param, uint64_t numel, uint32_t elem_size,
                              uint64_t partition_numel) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    uint64_t W = (uint64_t)c->world_size;
    if (lookup(c, param))
        return fail(c, ZO_ERR_EXISTS, "mpi backend: param_add: param %u already added", (unsigned)param);

    uint64_t shard = partition_numel * elem_size;
    uint64_t L = phys(c, shard * W);
    uint64_t off = (uint64_t)c->rank * shard;
    uint64_t stored = off < L ? min_u64(shard, L - off) : 0;
    size_t head = (sizeof(mpi_param) + 63u) & ~(size_t)63u;
    if (stored > MPI_MAX_ALLOC - head)
        return fail(c, ZO_ERR_NOMEM,
                    "mpi backend: param_add(%u): a %llu-byte shard exceeds the %llu-byte limit (set "
                    "max_bytes_per_param)",
                    (unsigned)param, (unsigned long long)stored, (unsigned long long)MPI_MAX_ALLOC);
    zo_status st = map_reserve(c, &c->params);
    if (st != ZO_OK) return st;
    mpi_param *p = m_alloc(c, head + (size_t)stored);
    if (!p)
        return fail(c, ZO_ERR_NOMEM, "mpi backend: param_add(%u): out of memory for a %llu-byte shard", (unsigned)param,
                    (unsigned long long)stored);
    memset(p, 0, sizeof *p);
    p->id = param;
    p->elem_size = elem_size;
    p->numel = numel;
    p->partition_numel = partition_numel;
    p->full_bytes = numel * elem_size;
    p->shard_bytes = shard;
    p->padded_bytes = shard * W;
    p->copy_bytes = L;
    p->stored = stored;
    p->store = stored ? (uint8_t *)p + head : NULL;
    zo__fill_padded(param, p->store, off, stored, p->full_bytes); /* content, zero padding past full_bytes */
    zo__map_put(&c->params, param, p);
    return ZO_OK;
}

static void op_param_remove(void *ctx, zo_param_id param) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return;
    mpi_param *p = lookup(c, param);
    if (!p) {
        fail(c, ZO_ERR_BAD_HANDLE, "mpi backend: param_remove: param %u not added", (unsigned)param);
        return;
    }
    if (p->pending) { /* its shard is the send buffer of a collective in flight */
        c->st.blocking_frees++;
        work_complete(c, p->pending);
    }
    zo__map_del(&c->params, param);
    m_free(c, p);
}

static zo_status op_full_alloc(void *ctx, zo_param_id param, size_t bytes, void **out) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    uint64_t cap = phys(c, bytes);
    zo_status st =
        zo__full_alloc_check(c->err, sizeof c->err, "mpi backend", param, lookup(c, param) != NULL, cap, MPI_BUF_HDR);
    if (st != ZO_OK) return st;
    st = map_reserve(c, &c->bufs);
    if (st != ZO_OK) return st;
    mpi_buf *b = m_alloc(c, MPI_BUF_HDR + (size_t)cap);
    if (!b)
        return fail(c, ZO_ERR_NOMEM, "mpi backend: full_alloc(%u): out of memory for %llu bytes", (unsigned)param,
                    (unsigned long long)cap);
    memset(b, 0, sizeof *b);
    b->param = param;
    b->requested = bytes;
    b->capacity = (size_t)cap;
    if (ZO_BUILD_POISON) /* as the host backend's default (zo_host_poison_default) */
        memset(buf_data(b), MPI_POISON, (size_t)cap);
    zo__map_put(&c->bufs, (uint64_t)(uintptr_t)buf_data(b), b);
    *out = buf_data(b);
    return ZO_OK;
}

static void op_full_free(void *ctx, zo_param_id param, void *full) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c || !full) return;
    mpi_buf *b = checked_buf(c, full);
    if (!b) {
        fail(c, ZO_ERR_INVALID_ARG, "mpi backend: full_free(%u): %p is not a live full buffer of this backend",
             (unsigned)param, full);
        return;
    }
    if (b->param != param)
        fail(c, ZO_ERR_INVALID_ARG, "mpi backend: full_free: buffer of param %u freed as param %u (freed anyway)",
             (unsigned)b->param, (unsigned)param);
    if (b->pending) { /* MPI is still writing into it: the collective must complete first */
        c->st.blocking_frees++;
        work_complete(c, b->pending);
    }
    zo__map_del(&c->bufs, (uint64_t)(uintptr_t)full);
    m_free(c, b);
}

/* Issues the collective(s) of one item into w->reqs[*k..]; returns the MPI
 * return code (the first failure). */
static int issue_item(mpi_ctx *c, mpi_work *w, int *k, int **ints, mpi_param *p, uint8_t *full) {
    int W = c->world_size, rc = MPI_SUCCESS;
    if (p->copy_bytes == p->padded_bytes) {
        /* uniform shards: one all-gather */
        if (p->shard_bytes <= MPI_COUNT_MAX) {
            rc = MPI_Iallgather(p->store, (int)p->shard_bytes, MPI_BYTE, full, (int)p->shard_bytes, MPI_BYTE, c->comm,
                                &w->reqs[(*k)++]);
        } else {
            MPI_Datatype t;
            rc = make_big_type(p->shard_bytes, &t);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Iallgather(p->store, 1, t, full, 1, t, c->comm, &w->reqs[(*k)++]);
                MPI_Type_free(&t); /* a pending operation keeps using it */
            }
        }
        c->st.collectives++;
    } else if (p->copy_bytes <= MPI_COUNT_MAX) {
        /* capped: each rank contributes what it stores (possibly nothing) */
        int *counts = *ints, *displs = *ints + W;
        *ints += 2 * W;
        for (int r = 0; r < W; r++) {
            uint64_t s = rank_stored(p, r);
            counts[r] = (int)s;
            displs[r] = s ? (int)((uint64_t)r * p->shard_bytes) : 0;
        }
        /* a rank that stores nothing sends 0 bytes from a buffer that does
         * not alias recvbuf (some MPIs reject aliasing even for 0 bytes) */
        static const uint8_t nothing = 0;
        rc = MPI_Iallgatherv(p->stored ? (const void *)p->store : (const void *)&nothing, (int)p->stored, MPI_BYTE,
                             full, counts, displs, MPI_BYTE, c->comm, &w->reqs[(*k)++]);
        c->st.collectives++;
    } else {
        /* capped above MPI_COUNT_MAX bytes: every storing rank broadcasts its part */
        for (int r = 0; r < W && rc == MPI_SUCCESS; r++) {
            uint64_t s = rank_stored(p, r);
            if (!s) break; /* ranks store a prefix of [0, L): none after the first empty one */
            uint8_t *dst = full + (uint64_t)r * p->shard_bytes;
            if (r == c->rank) memcpy(dst, p->store, (size_t)s);
            if (s <= MPI_COUNT_MAX) {
                rc = MPI_Ibcast(dst, (int)s, MPI_BYTE, r, c->comm, &w->reqs[(*k)++]);
            } else {
                MPI_Datatype t;
                rc = make_big_type(s, &t);
                if (rc == MPI_SUCCESS) {
                    rc = MPI_Ibcast(dst, 1, t, r, c->comm, &w->reqs[(*k)++]);
                    MPI_Type_free(&t);
                }
            }
            c->st.collectives++;
        }
    }
    return rc;
}

static zo_status op_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    int W = c->world_size;
    size_t per_item = sizeof(mpi_witem) + (size_t)W * (sizeof(MPI_Request) + 2 * sizeof(int));
    if (n > (SIZE_MAX / 2 - sizeof(mpi_work)) / per_item || n > (size_t)INT_MAX / (size_t)W)
        return fail(c, ZO_ERR_INVALID_ARG, "mpi backend: all_gather_start: n = %zu too large", n);

    /* validate everything before any side effect (no collective is issued
     * on bad input, so the other ranks are not left waiting on a half group) */
    uint64_t gen = ++c->mark_gen;
    size_t nreq = 0, nints = 0;
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &items[i];
        mpi_param *p = lookup(c, it->param);
        mpi_buf *b = checked_buf(c, it->full);
        zo_status st =
            zo__gather_item_check(c->err, sizeof c->err, "mpi backend", i, it,
                                  p ? &(zo__gather_param){p->numel, p->partition_numel, p->elem_size, p->copy_bytes,
                                                          p->pending || p->mark == gen}
                                    : NULL,
                                  b ? &(zo__gather_buf){b->param, b->capacity, b->pending || b->mark == gen} : NULL);
        if (st != ZO_OK) return st;
        p->mark = gen;
        b->mark = gen;
        if (p->copy_bytes == p->padded_bytes) {
            nreq += 1;
        } else if (p->copy_bytes <= MPI_COUNT_MAX) {
            nreq += 1;
            nints += 2 * (size_t)W;
        } else {
            nreq += (size_t)W;
        }
    }

    zo_status st = map_reserve(c, &c->works);
    if (st != ZO_OK) return st;
    size_t sz = sizeof(mpi_work) + n * sizeof(mpi_witem) + nreq * sizeof(MPI_Request) + nints * sizeof(int);
    mpi_work *w = m_alloc(c, sz);
    if (!w) return fail(c, ZO_ERR_NOMEM, "mpi backend: all_gather_start: out of memory for a work of %zu items", n);
    memset(w, 0, sz);
    w->n = n;
    w->items = (mpi_witem *)(w + 1);
    w->reqs = (MPI_Request *)(w->items + n);
    w->ints = (int *)(w->reqs + nreq);
    for (size_t i = 0; i < nreq; i++) w->reqs[i] = MPI_REQUEST_NULL;
    int k = 0, *ints = w->ints, rc = MPI_SUCCESS;
    uint64_t moved = 0;
    for (size_t i = 0; i < n && rc == MPI_SUCCESS; i++) {
        mpi_param *p = lookup(c, items[i].param);
        mpi_buf *b = buf_hdr(items[i].full);
        w->items[i].p = p;
        w->items[i].b = b;
        p->pending = w;
        b->pending = w;
        rc = issue_item(c, w, &k, &ints, p, buf_data(b));
        moved += p->copy_bytes;
    }
    w->nreq = k;
    zo__map_put(&c->works, (uint64_t)(uintptr_t)w, w);
    if (rc != MPI_SUCCESS) {
        /* the requests issued so far are collectives the other ranks match:
         * complete them, then report the failure (nothing is left pending) */
        zo_status fs = mpi_fail(c, rc, "MPI_Iallgather");
        char keep[sizeof c->err];
        memcpy(keep, c->err, sizeof keep);
        work_complete(c, w);
        zo__map_del(&c->works, (uint64_t)(uintptr_t)w);
        m_free(c, w);
        memcpy(c->err, keep, sizeof keep);
        return fs;
    }
    c->st.gathers++;
    c->st.gather_items += n;
    c->st.bytes_gathered += moved;
    *out = (zo_work *)w;
    return ZO_OK;
}

static zo_status op_wait(void *ctx, zo_work *zw) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    mpi_work *w = checked_work(c, zw);
    if (!w) return fail(c, ZO_ERR_INVALID_ARG, "mpi backend: wait: not a live work of this backend");
    return work_complete(c, w);
}

static zo_status op_query(void *ctx, zo_work *zw, int *done) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    mpi_work *w = checked_work(c, zw);
    if (!w) return fail(c, ZO_ERR_INVALID_ARG, "mpi backend: query: not a live work of this backend");
    if (!w->done) {
        int flag = 1, rc = w->nreq ? MPI_Testall(w->nreq, w->reqs, &flag, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
        if (rc != MPI_SUCCESS) {
            w->done = 1;
            unlink_work(w);
            w->status = mpi_fail(c, rc, "MPI_Testall (all-gather)");
        } else if (flag) {
            w->done = 1;
            unlink_work(w);
        }
    }
    *done = w->done;
    return w->done ? w->status : ZO_OK;
}

static void op_work_free(void *ctx, zo_work *zw) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c || !zw) return;
    mpi_work *w = checked_work(c, zw);
    if (!w) {
        fail(c, ZO_ERR_INVALID_ARG, "mpi backend: work_free: not a live work of this backend");
        return;
    }
    work_release(c, w);
}

static zo_status op_reduce_scatter(void *ctx, zo_param_id param, const float *full_grad, float *shard_out,
                                   uint64_t numel, uint64_t partition_numel, zo_reduce_op op) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    mpi_param *p = lookup(c, param);
    zo_status st = zo__reduce_scatter_check(c->err, sizeof c->err, "mpi backend", param, numel, partition_numel,
                                            p != NULL, p ? p->numel : 0, p ? p->partition_numel : 0);
    if (st != ZO_OK) return st;
    uint64_t W = (uint64_t)c->world_size;
    uint64_t chunk = min_u64(partition_numel, MPI_RS_CHUNK);
    if (chunk * W > SIZE_MAX / sizeof(float))
        return fail(c, ZO_ERR_NOMEM, "mpi backend: reduce_scatter(%u): staging buffer too large", (unsigned)param);
    float *tmp = m_alloc(c, (size_t)(chunk * W) * sizeof(float));
    if (!tmp)
        return fail(c, ZO_ERR_NOMEM, "mpi backend: reduce_scatter(%u): out of memory for %llu floats", (unsigned)param,
                    (unsigned long long)(chunk * W));
    st = ZO_OK;
    /* every chunk is one collective on every rank: all ranks loop the same way */
    for (uint64_t c0 = 0; c0 < partition_numel; c0 += chunk) {
        uint64_t len = min_u64(chunk, partition_numel - c0);
        for (uint64_t r = 0; r < W; r++) { /* rank r's block: elements [r*part + c0, +len), zero padding */
            uint64_t j0 = r * partition_numel + c0;
            for (uint64_t i = 0; i < len; i++) tmp[r * len + i] = j0 + i < numel ? full_grad[j0 + i] : 0.0f;
        }
        MPI_Request req = MPI_REQUEST_NULL;
        int rc = MPI_Ireduce_scatter_block(tmp, shard_out + c0, (int)len, MPI_FLOAT, MPI_SUM, c->comm, &req);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        c->st.collectives++;
        if (rc != MPI_SUCCESS) {
            st = mpi_fail(c, rc, "MPI_Ireduce_scatter_block");
            break;
        }
        if (op == ZO_REDUCE_AVG)
            for (uint64_t i = 0; i < len; i++) shard_out[c0 + i] /= (float)W;
    }
    m_free(c, tmp);
    if (st == ZO_OK) c->st.reduce_scatters++;
    return st;
}

static zo_status op_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    int rc = MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, c->comm);
    c->st.collectives++;
    if (rc != MPI_SUCCESS) return mpi_fail(c, rc, "MPI_Allgather (exchange)");
    c->st.exchanges++;
    return ZO_OK;
}

static const char *op_last_error(void *ctx) { return ctx ? ctx_of(ctx)->err : NULL; }

static void op_destroy(void *ctx) {
    mpi_ctx *c = ctx_of(ctx);
    if (!c) return;
    /* works first (they may still be writing into buffers / reading shards) */
    for (size_t i = 0; i < c->works.cap; i++)
        if (c->works.vals[i]) {
            mpi_work *w = c->works.vals[i];
            work_complete(c, w);
            m_free(c, w);
        }
    for (size_t i = 0; i < c->bufs.cap; i++) m_free(c, c->bufs.vals[i]);
    for (size_t i = 0; i < c->params.cap; i++) m_free(c, c->params.vals[i]);
    zo__map_free(&c->works, &c->alloc);
    zo__map_free(&c->bufs, &c->alloc);
    zo__map_free(&c->params, &c->alloc);
    int fin = 0;
    if (MPI_Finalized(&fin) == MPI_SUCCESS && !fin && c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    zo_allocator a = c->alloc;
    zo__host_free(&a, c);
}

static const zo_backend_ops mpi_ops = {
    .version = ZO_BACKEND_OPS_VERSION,
    .name = "mpi",
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

static zo_status create_fail(zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(create_err, sizeof create_err, fmt, ap);
    va_end(ap);
    return st;
}

zo_status zo_backend_mpi_create(const zo_mpi_config *cfg, zo_backend **out) {
    create_err[0] = '\0';
    if (!out) return create_fail(ZO_ERR_INVALID_ARG, "zo_backend_mpi_create: NULL out");
    *out = NULL;
    if (!cfg) return create_fail(ZO_ERR_INVALID_ARG, "zo_backend_mpi_create: NULL config");
    if (cfg->size != sizeof(zo_mpi_config) || cfg->version != ZO_MPI_CONFIG_VERSION)
        return create_fail(ZO_ERR_VERSION, "zo_backend_mpi_create: config size %zu / version %u not understood",
                           cfg->size, (unsigned)cfg->version);
    if (!cfg->allocator.alloc != !cfg->allocator.free)
        return create_fail(ZO_ERR_INVALID_ARG, "zo_backend_mpi_create: allocator with only one of alloc/free");
    int init = 0, fin = 0;
    if (MPI_Initialized(&init) != MPI_SUCCESS || !init || MPI_Finalized(&fin) != MPI_SUCCESS || fin)
        return create_fail(ZO_ERR_BACKEND, "zo_backend_mpi_create: MPI is not initialised (or already finalised)");
    if (cfg->comm == MPI_COMM_NULL) return create_fail(ZO_ERR_INVALID_ARG, "zo_backend_mpi_create: MPI_COMM_NULL");
    int W = 0, r = 0;
    if (MPI_Comm_size(cfg->comm, &W) != MPI_SUCCESS || MPI_Comm_rank(cfg->comm, &r) != MPI_SUCCESS)
        return create_fail(ZO_ERR_BACKEND, "zo_backend_mpi_create: MPI_Comm_size/rank failed");
    if (W < 1 || W > ZO_MAX_WORLD_SIZE)
        return create_fail(ZO_ERR_BACKEND, "zo_backend_mpi_create: communicator of %d ranks (1..%d)", W,
                           ZO_MAX_WORLD_SIZE);
    /* collective first: every rank of cfg->comm reaches it (a rank that
     * failed before would leave the others waiting; nothing above depends on
     * rank-local resources) */
    MPI_Comm dup = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(cfg->comm, &dup);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
        if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
        return create_fail(ZO_ERR_BACKEND, "zo_backend_mpi_create: MPI_Comm_dup: %s", msg);
    }
    mpi_ctx *c = zo__host_alloc(&cfg->allocator, sizeof *c);
    if (!c) {
        MPI_Comm_free(&dup);
        return create_fail(ZO_ERR_NOMEM, "zo_backend_mpi_create: out of memory");
    }
    memset(c, 0, sizeof *c);
    c->alloc = cfg->allocator;
    c->world_size = W;
    c->rank = r;
    c->cap = cfg->max_bytes_per_param;
    c->comm = dup;
    c->pub.ops = &mpi_ops;
    c->pub.ctx = c;
    *out = &c->pub;
    return ZO_OK;
}

const char *zo_mpi_create_error(void) { return create_err; }

static const mpi_ctx *mpi_of(const zo_backend *b) {
    return (b && b->ops == &mpi_ops && b->ctx) ? (const mpi_ctx *)b->ctx : NULL;
}

int zo_mpi_is_mpi(const zo_backend *b) { return mpi_of(b) != NULL; }

uint64_t zo_mpi_physical_bytes(const zo_backend *b, uint64_t bytes) {
    const mpi_ctx *c = mpi_of(b);
    return c ? phys(c, bytes) : bytes;
}

zo_mpi_stats zo_mpi_get_stats(const zo_backend *b) {
    zo_mpi_stats z;
    memset(&z, 0, sizeof z);
    const mpi_ctx *c = mpi_of(b);
    return c ? c->st : z;
}
