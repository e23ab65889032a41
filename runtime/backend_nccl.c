/*
 * backend_nccl.c - the CUDA + NCCL data plane (library zoffload_nccl).
 *
 * Plain C against the CUDA runtime API and nccl.h; no kernels.  Built only
 * when cmake/nccl.cmake finds the toolkit and NCCL; libzoffload itself never
 * depends on CUDA.  The semantics of every operation (streams, what
 * "complete" means for query, what wait guarantees, pointer kinds of
 * reduce-scatter, error mapping) are documented in include/zoffload_nccl.h;
 * this file comment covers the implementation.
 *
 * Memory
 *   shard      one per parameter for this rank, partition_numel * elem_size
 *              bytes: cudaMalloc, or cudaHostAlloc (offload cpu, pinned), or
 *              the host allocator (offload cpu, pageable).  Filled at
 *              param_add (pattern or zeros), synchronously.
 *   full       W * shard bytes from this backend's own cudaMemPool
 *              (cudaMallocFromPoolAsync on the gather stream); freed by
 *              cudaFreeAsync on the gather stream after the gather stream
 *              waited for an event recorded on the compute stream, so the
 *              free is ordered after every use enqueued on the compute stream
 *              before full_free was called.  The pool keeps freed memory up
 *              to pool_release_threshold bytes, so gathers reuse it.
 *   staging    reduce-scatter padding / host staging buffers: pool memory
 *              allocated and freed on the gather stream.
 *
 * All-gather of one group (one zo_gather_item array)
 *   [gather stream waits for ev_shards if zo_nccl_mark_shards_written]
 *   offload cpu: cudaMemcpyAsync H2D shard -> full + rank * shard_bytes
 *   ncclGroupStart
 *     ncclAllGather(send, full, shard_bytes, ncclUint8)   per item
 *       (send = the device shard, or in place for offloaded shards)
 *   ncclGroupEnd
 *   cudaEventRecord(work->ev, gather)
 *   Bytes (ncclUint8) make every elem_size (1..64) one datatype.
 *
 * Bookkeeping
 *   Parameters: array indexed by zo_param_id (the runtime assigns 0,1,2,...).
 *   Live full buffers: a zo__map (runtime/hostmap.c) from address to
 *   (param, bytes), so a foreign or double-freed pointer is reported, never
 *   handed to cudaFreeAsync.
 *   Live works: doubly linked list with a magic word; a work is validated by
 *   list membership before use.  Events: a free list (cudaEventCreate is not
 *   free; a work's event goes back to the list at work_free - re-recording an
 *   event is legal even while an earlier record is pending, the earlier
 *   cudaStreamWaitEvent calls captured it).
 *
 * Back-pressure counts live works whose event is not known complete; a work
 * freed before completion (stream-mode wait, then work_free) no longer counts
 * - the runtime then holds its buffers and the stream order protects them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#ifdef ZO_HAVE_MPI
#include <mpi.h>
#endif

#include "backend_nccl_internal.h"
#include "hostmap.h"
#include "zoffload_nccl.h"

_Static_assert(sizeof(ncclUniqueId) == ZO_NCCL_UNIQUE_ID_BYTES,
               "ZO_NCCL_UNIQUE_ID_BYTES must equal sizeof(ncclUniqueId)");

#define NC_MAGIC_CTX    0x7a6f6e63636c4354ull /* "zonccl CT" */
#define NC_MAGIC_WORK   0x5a4f574bu
#define NC_MAX_PARAMS   (1u << 28)
#define NC_INIT_CHUNK   ((size_t)1 << 20)
#define NC_EXCHANGE_MAX ZO_BACKEND_EXCHANGE_MAX /* bytes per rank in one exchange */

typedef struct nc_param {
    zo_param_id id;
    uint32_t elem_size;  /* bytes */
    uint64_t numel;      /* elements */
    uint64_t part;       /* partition_numel, elements */
    size_t shard_bytes;  /* part * elem_size */
    size_t padded_bytes; /* W * shard_bytes */
    void *shard;         /* device, pinned host or pageable host */
    int on_host, pinned;
} nc_param;

/* A live full buffer (the value of nc_ctx.bufs, keyed by its address). */
typedef struct nc_buf {
    zo_param_id param;
    size_t bytes;
} nc_buf;

typedef struct nc_work {
    uint32_t magic;
    int done; /* event known complete */
    cudaEvent_t ev;
    struct nc_work *prev, *next;
    size_t n; /* items */
} nc_work;

typedef struct nc_ctx {
    zo_backend pub; /* handed to the caller; lives in this allocation */
    uint64_t magic;
    zo_allocator alloc;
    int world, rank, device;
    ncclComm_t comm; /* NULL once aborted */
    int broken;
    char broken_msg[256];
    cudaStream_t compute, gather;
    cudaMemPool_t pool;
    cudaEvent_t ev_compute, ev_shards, ev_sync;
    int shards_dirty;
    zo_nccl_offload offload;
    int pin, wait_host, max_out;
    uint64_t wait_timeout_ms;
    zo_reduce_op reduce_op;
    zo_nccl_init init;
    nc_param **params;
    size_t params_cap;
    zo__map bufs;   /* full buffer address -> nc_buf */
    nc_work *works; /* newest first */
    cudaEvent_t *evfree;
    size_t n_evfree, cap_evfree;
    uint8_t *xbuf; /* exchange staging, W * NC_EXCHANGE_MAX device bytes, allocated at the first exchange */
    zo_nccl_stats st;
    char err[512];
} nc_ctx;

static const zo_backend_ops nccl_ops;

/* ------------------------------------------------------------------ */
/* Messages and error mapping                                          */
/* ------------------------------------------------------------------ */

static _Thread_local char g_create_err[512];

const char *zo_nccl_create_error(void) { return g_create_err; }

static zo_status create_fail(zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_create_err, sizeof g_create_err, fmt, ap);
    va_end(ap);
    return st;
}

static zo_status fail(nc_ctx *c, zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return st;
}

static zo_status status_of_cuda(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return ZO_OK;
    case cudaErrorMemoryAllocation: return ZO_ERR_NOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice: return ZO_ERR_NO_DEVICE;
    default: return ZO_ERR_BACKEND;
    }
}

/* "nccl backend: <what>: CUDA error N cudaErrorX: <string>".  Clears the
 * sticky-free error state so the next call does not see it again. */
static zo_status cuda_fail(nc_ctx *c, cudaError_t e, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    (void)cudaGetLastError();
    snprintf(c->err, sizeof c->err, "nccl backend (rank %d, device %d): %s: CUDA error %d %s: %s", c->rank, c->device,
             what, (int)e, cudaGetErrorName(e), cudaGetErrorString(e));
    return status_of_cuda(e);
}

static zo_status nccl_fail(nc_ctx *c, ncclResult_t r, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *last = ncclGetLastError(c->comm);
    snprintf(c->err, sizeof c->err, "nccl backend (rank %d, device %d): %s: NCCL error %d: %s%s%s", c->rank, c->device,
             what, (int)r, ncclGetErrorString(r), last && last[0] ? "; " : "", last ? last : "");
    return ZO_ERR_BACKEND;
}

#define CU(c, call, ...)                                                                                               \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) return cuda_fail((c), e_, __VA_ARGS__);                                                 \
    } while (0)

/* ------------------------------------------------------------------ */
/* Host allocation                                                      */
/* ------------------------------------------------------------------ */

/* zo__host_alloc / zo__host_free (runtime/hostmap.c): the caller's
 * allocator, else malloc/free, shared with the host and MPI backends */

/* ------------------------------------------------------------------ */
/* Full-buffer map (zo__map of runtime/hostmap.c)                       */
/* ------------------------------------------------------------------ */

static nc_buf *buf_find(const nc_ctx *c, const void *full) {
    return full ? zo__map_get(&c->bufs, (uint64_t)(uintptr_t)full) : NULL;
}

/* ------------------------------------------------------------------ */
/* Context helpers                                                      */
/* ------------------------------------------------------------------ */

static nc_ctx *ctx_of(void *ctx) {
    nc_ctx *c = ctx;
    return c && c->magic == NC_MAGIC_CTX ? c : NULL;
}

static nc_ctx *backend_ctx(const zo_backend *b) {
    if (!b || b->ops != &nccl_ops) return NULL;
    return ctx_of(b->ctx);
}

static zo_status use_device(nc_ctx *c, const char *op) {
    CU(c, cudaSetDevice(c->device), "%s: cudaSetDevice(%d)", op, c->device);
    return ZO_OK;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void nap(unsigned spin) {
    if (spin < 64) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 50000}; /* 50 us */
    nanosleep(&ts, NULL);
}

/* Polls ncclCommGetAsyncError.  An error marks the communicator broken and
 * aborts it (ncclCommAbort returns; the process goes on). */
static zo_status check_async(nc_ctx *c, const char *where) {
    if (c->broken)
        return fail(c, ZO_ERR_BACKEND, "nccl backend (rank %d): %s: communicator unusable after an earlier error: %s",
                    c->rank, where, c->broken_msg);
    ncclResult_t ar = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(c->comm, &ar);
    if (r != ncclSuccess) return nccl_fail(c, r, "%s: ncclCommGetAsyncError", where);
    if (ar == ncclSuccess || ar == ncclInProgress) return ZO_OK;
    const char *last = ncclGetLastError(c->comm);
    snprintf(c->broken_msg, sizeof c->broken_msg, "asynchronous NCCL error %d: %s%s%s", (int)ar, ncclGetErrorString(ar),
             last && last[0] ? "; " : "", last ? last : "");
    c->broken = 1;
    (void)ncclCommAbort(c->comm);
    c->comm = NULL;
    return fail(c, ZO_ERR_BACKEND, "nccl backend (rank %d): %s: %s (communicator aborted)", c->rank, where,
                c->broken_msg);
}

/* Blocks the host until ev completed, polling the asynchronous NCCL error
 * and the configured timeout. */
static zo_status host_wait_event(nc_ctx *c, cudaEvent_t ev, const char *where) {
    uint64_t t0 = c->wait_timeout_ms ? now_ms() : 0;
    for (unsigned spin = 0;; spin++) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess) return ZO_OK;
        if (e != cudaErrorNotReady) return cuda_fail(c, e, "%s: cudaEventQuery", where);
        zo_status s = check_async(c, where);
        if (s) return s;
        if (c->wait_timeout_ms && now_ms() - t0 > c->wait_timeout_ms)
            return fail(c, ZO_ERR_BACKEND,
                        "nccl backend (rank %d): %s: not complete after %llu ms (wait_timeout_ms); a peer rank "
                        "may not have issued the same collective",
                        c->rank, where, (unsigned long long)c->wait_timeout_ms);
        nap(spin);
    }
}

static zo_status event_get(nc_ctx *c, cudaEvent_t *out) {
    if (c->n_evfree) {
        *out = c->evfree[--c->n_evfree];
        return ZO_OK;
    }
    CU(c, cudaEventCreateWithFlags(out, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    return ZO_OK;
}

static void event_put(nc_ctx *c, cudaEvent_t ev) {
    if (c->n_evfree == c->cap_evfree) {
        size_t ncap = c->cap_evfree ? c->cap_evfree * 2 : 32;
        cudaEvent_t *n = zo__host_alloc(&c->alloc, ncap * sizeof *n);
        if (!n) {
            (void)cudaEventDestroy(ev);
            return;
        }
        if (c->n_evfree) memcpy(n, c->evfree, c->n_evfree * sizeof *n);
        zo__host_free(&c->alloc, c->evfree);
        c->evfree = n;
        c->cap_evfree = ncap;
    }
    c->evfree[c->n_evfree++] = ev;
}

static nc_param *lookup(nc_ctx *c, zo_param_id id) { return (size_t)id < c->params_cap ? c->params[id] : NULL; }

static nc_work *checked_work(nc_ctx *c, zo_work *zw) {
    for (nc_work *w = c->works; w; w = w->next)
        if ((zo_work *)w == zw) return w->magic == NC_MAGIC_WORK ? w : NULL;
    return NULL;
}

/* Marks complete every live work whose event completed (oldest first). */
static zo_status refresh_outstanding(nc_ctx *c) {
    for (nc_work *w = c->works; w; w = w->next) {
        if (w->done) continue;
        cudaError_t e = cudaEventQuery(w->ev);
        if (e == cudaSuccess) {
            w->done = 1;
            c->st.outstanding--;
        } else if (e != cudaErrorNotReady) {
            return cuda_fail(c, e, "cudaEventQuery (back-pressure)");
        }
    }
    return ZO_OK;
}

static nc_work *oldest_incomplete(nc_ctx *c) {
    nc_work *o = NULL;
    for (nc_work *w = c->works; w; w = w->next)
        if (!w->done) o = w; /* list is newest first: the last one seen is the oldest */
    return o;
}

/* ------------------------------------------------------------------ */
/* vtable                                                               */
/* ------------------------------------------------------------------ */

static int op_world_size(void *ctx) {
    nc_ctx *c = ctx_of(ctx);
    return c ? c->world : 0;
}

static int op_rank(void *ctx) {
    nc_ctx *c = ctx_of(ctx);
    return c ? c->rank : -1;
}

/* byte i (of the padded full tensor) of param: pattern content or padding */
static void fill_pattern(const nc_param *p, int rank, uint64_t shard_off, uint8_t *dst, size_t n) {
    zo__fill_padded(p->id, dst, (uint64_t)rank * p->shard_bytes + shard_off, n, p->numel * p->elem_size);
}

static void shard_release(nc_ctx *c, nc_param *p) {
    if (!p->shard) return;
    if (!p->on_host)
        (void)cudaFree(p->shard);
    else if (p->pinned)
        (void)cudaFreeHost(p->shard);
    else
        zo__host_free(&c->alloc, p->shard);
    p->shard = NULL;
}

static zo_status op_param_add(void *ctx, zo_param_id param, uint64_t numel, uint32_t elem_size,
                              uint64_t partition_numel) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    if (param >= NC_MAX_PARAMS)
        return fail(c, ZO_ERR_LIMIT, "nccl backend: param_add: id %u above the limit %u", (unsigned)param,
                    NC_MAX_PARAMS);
    if (lookup(c, param))
        return fail(c, ZO_ERR_EXISTS, "nccl backend: param_add: param %u already added", (unsigned)param);
    zo_status s = use_device(c, "param_add");
    if (s) return s;
    if ((size_t)param >= c->params_cap) {
        size_t ncap = c->params_cap ? c->params_cap : 64;
        while (ncap <= (size_t)param) ncap *= 2;
        nc_param **n = zo__host_alloc(&c->alloc, ncap * sizeof *n);
        if (!n) return fail(c, ZO_ERR_NOMEM, "nccl backend: param_add(%u): out of host memory", (unsigned)param);
        memset(n, 0, ncap * sizeof *n);
        if (c->params_cap) memcpy(n, c->params, c->params_cap * sizeof *n);
        zo__host_free(&c->alloc, c->params);
        c->params = n;
        c->params_cap = ncap;
    }
    nc_param *p = zo__host_alloc(&c->alloc, sizeof *p);
    if (!p) return fail(c, ZO_ERR_NOMEM, "nccl backend: param_add(%u): out of host memory", (unsigned)param);
    memset(p, 0, sizeof *p);
    p->id = param;
    p->elem_size = elem_size;
    p->numel = numel;
    p->part = partition_numel;
    p->shard_bytes = (size_t)(partition_numel * elem_size);
    p->padded_bytes = p->shard_bytes * (size_t)c->world;

    cudaError_t e = cudaSuccess;
    const char *what = "cudaMalloc";
    if (c->offload == ZO_NCCL_OFFLOAD_NONE) {
        e = cudaMalloc(&p->shard, p->shard_bytes);
    } else if (c->pin) {
        what = "cudaHostAlloc";
        e = cudaHostAlloc(&p->shard, p->shard_bytes, cudaHostAllocDefault);
        p->on_host = p->pinned = 1;
    } else {
        p->shard = zo__host_alloc(&c->alloc, p->shard_bytes);
        p->on_host = 1;
        if (!p->shard) {
            zo__host_free(&c->alloc, p);
            return fail(c, ZO_ERR_NOMEM, "nccl backend: param_add(%u): out of host memory for a %zu-byte shard",
                        (unsigned)param, (size_t)(partition_numel * elem_size));
        }
    }
    if (e != cudaSuccess) {
        p->shard = NULL;
        zo__host_free(&c->alloc, p);
        return cuda_fail(c, e, "param_add(%u): %s(%zu bytes)", (unsigned)param, what,
                         (size_t)(partition_numel * elem_size));
    }

    /* initial contents, synchronously */
    if (c->init == ZO_NCCL_INIT_ZERO) {
        if (p->on_host)
            memset(p->shard, 0, p->shard_bytes);
        else
            e = cudaMemset(p->shard, 0, p->shard_bytes);
    } else if (p->on_host) {
        fill_pattern(p, c->rank, 0, p->shard, p->shard_bytes);
    } else {
        size_t chunk = p->shard_bytes < NC_INIT_CHUNK ? p->shard_bytes : NC_INIT_CHUNK;
        uint8_t *tmp = zo__host_alloc(&c->alloc, chunk);
        if (!tmp) {
            shard_release(c, p);
            zo__host_free(&c->alloc, p);
            return fail(c, ZO_ERR_NOMEM, "nccl backend: param_add(%u): out of host memory", (unsigned)param);
        }
        for (size_t off = 0; off < p->shard_bytes && e == cudaSuccess; off += chunk) {
            size_t n = p->shard_bytes - off < chunk ? p->shard_bytes - off : chunk;
            fill_pattern(p, c->rank, off, tmp, n);
            e = cudaMemcpy((uint8_t *)p->shard + off, tmp, n, cudaMemcpyHostToDevice);
        }
        zo__host_free(&c->alloc, tmp);
    }
    /* cudaMemcpy from pageable memory may return before its DMA finished and
     * cudaMemset is asynchronous; the gather stream does not synchronise
     * with the legacy stream, so wait here (registration time only) */
    if (e == cudaSuccess && !p->on_host) e = cudaStreamSynchronize((cudaStream_t)0);
    if (e != cudaSuccess) {
        zo_status st = cuda_fail(c, e, "param_add(%u): initialising the shard", (unsigned)param);
        shard_release(c, p);
        zo__host_free(&c->alloc, p);
        return st;
    }
    c->params[param] = p;
    c->st.shard_bytes += p->shard_bytes;
    return ZO_OK;
}

static void op_param_remove(void *ctx, zo_param_id param) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return;
    nc_param *p = lookup(c, param);
    if (!p) {
        fail(c, ZO_ERR_BAD_HANDLE, "nccl backend: param_remove: param %u not added", (unsigned)param);
        return;
    }
    if (use_device(c, "param_remove")) return;
    /* a gather enqueued earlier may still read the shard */
    cudaError_t e = cudaStreamSynchronize(c->gather);
    if (e != cudaSuccess) cuda_fail(c, e, "param_remove(%u): cudaStreamSynchronize(gather)", (unsigned)param);
    c->st.shard_bytes -= p->shard_bytes;
    shard_release(c, p);
    c->params[param] = NULL;
    zo__host_free(&c->alloc, p);
}

static zo_status op_full_alloc(void *ctx, zo_param_id param, size_t bytes, void **out) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    zo_status s = zo__full_alloc_check(c->err, sizeof c->err, "nccl backend", param, lookup(c, param) != NULL, 0, 0);
    if (s) return s;
    s = use_device(c, "full_alloc");
    if (s) return s;
    s = zo__map_reserve(&c->bufs, &c->alloc, c->err, sizeof c->err, "nccl backend: full_alloc");
    if (s) return s;
    nc_buf *rec = zo__host_alloc(&c->alloc, sizeof *rec);
    if (!rec) return fail(c, ZO_ERR_NOMEM, "nccl backend: full_alloc(%u): out of host memory", (unsigned)param);
    void *ptr = NULL;
    cudaError_t e = cudaMallocFromPoolAsync(&ptr, bytes, c->pool, c->gather);
    if (e != cudaSuccess) {
        zo__host_free(&c->alloc, rec);
        return cuda_fail(c, e, "full_alloc(%u): cudaMallocFromPoolAsync(%zu bytes)", (unsigned)param, bytes);
    }
    rec->param = param;
    rec->bytes = bytes;
    zo__map_put(&c->bufs, (uint64_t)(uintptr_t)ptr, rec);
    c->st.live_full_buffers++;
    *out = ptr;
    return ZO_OK;
}

static void op_full_free(void *ctx, zo_param_id param, void *buf) {
    nc_ctx *c = ctx_of(ctx);
    if (!c || !buf) return;
    nc_buf *rec = buf_find(c, buf);
    if (!rec) {
        fail(c, ZO_ERR_INVALID_ARG, "nccl backend: full_free(%u): %p is not a live full buffer of this backend",
             (unsigned)param, buf);
        return;
    }
    if (rec->param != param)
        fail(c, ZO_ERR_INVALID_ARG, "nccl backend: full_free: buffer of param %u freed as param %u (freed anyway)",
             (unsigned)rec->param, (unsigned)param);
    zo__map_del(&c->bufs, (uint64_t)(uintptr_t)buf);
    zo__host_free(&c->alloc, rec);
    c->st.live_full_buffers--;
    if (use_device(c, "full_free")) return;
    /* every use of buf enqueued on the compute stream so far comes first */
    cudaError_t e = cudaEventRecord(c->ev_compute, c->compute);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->gather, c->ev_compute, 0);
    if (e != cudaSuccess) {
        /* cannot order the free after the compute stream: synchronise */
        cuda_fail(c, e, "full_free(%u): ordering after the compute stream", (unsigned)param);
        (void)cudaDeviceSynchronize();
    }
    e = cudaFreeAsync(buf, c->gather);
    if (e != cudaSuccess) cuda_fail(c, e, "full_free(%u): cudaFreeAsync", (unsigned)param);
}

static zo_status op_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    /* validate everything before any side effect */
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &items[i];
        const nc_param *p = lookup(c, it->param);
        const nc_buf *rec = buf_find(c, it->full);
        /* a parameter or buffer is busy here only as an earlier item of this
         * group: the streams order gathers of the same parameter */
        int p_dup = 0, b_dup = 0;
        for (size_t j = 0; j < i; j++) {
            p_dup |= items[j].param == it->param;
            b_dup |= items[j].full == it->full;
        }
        zo__gather_param gp = {0};
        zo__gather_buf gb = {0};
        if (p) {
            gp.numel = p->numel;
            gp.partition_numel = p->part;
            gp.elem_size = p->elem_size;
            gp.copy_bytes = p->padded_bytes;
            gp.busy = p_dup;
        }
        if (rec) {
            gb.param = rec->param;
            gb.capacity = rec->bytes;
            gb.busy = b_dup;
        }
        zo_status st =
            zo__gather_item_check(c->err, sizeof c->err, "nccl backend", i, it, p ? &gp : NULL, rec ? &gb : NULL);
        if (st) return st;
    }
    zo_status s = check_async(c, "all_gather_start");
    if (s) return s;
    s = use_device(c, "all_gather_start");
    if (s) return s;

    /* back-pressure */
    if (c->max_out > 0 && c->st.outstanding >= (uint64_t)c->max_out) {
        s = refresh_outstanding(c);
        if (s) return s;
        while (c->st.outstanding >= (uint64_t)c->max_out) {
            nc_work *o = oldest_incomplete(c);
            if (!o) break;
            c->st.backpressure_waits++;
            s = host_wait_event(c, o->ev, "all_gather_start (back-pressure)");
            if (s) return s;
            o->done = 1;
            c->st.outstanding--;
        }
    }

    nc_work *w = zo__host_alloc(&c->alloc, sizeof *w);
    if (!w) return fail(c, ZO_ERR_NOMEM, "nccl backend: all_gather_start: out of host memory");
    memset(w, 0, sizeof *w);
    s = event_get(c, &w->ev);
    if (s) {
        zo__host_free(&c->alloc, w);
        return s;
    }
    w->magic = NC_MAGIC_WORK;
    w->n = n;

    cudaError_t e = cudaSuccess;
    if (c->shards_dirty) {
        e = cudaStreamWaitEvent(c->gather, c->ev_shards, 0);
        if (e != cudaSuccess) goto cuda_err;
        c->shards_dirty = 0;
    }
    uint64_t h2d = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        nc_param *p = lookup(c, items[i].param);
        if (p->on_host) {
            e = cudaMemcpyAsync((uint8_t *)items[i].full + (size_t)c->rank * p->shard_bytes, p->shard, p->shard_bytes,
                                cudaMemcpyHostToDevice, c->gather);
            if (e != cudaSuccess) goto cuda_err;
            h2d += p->shard_bytes;
        }
    }
    ncclResult_t r = ncclGroupStart();
    if (r != ncclSuccess) {
        s = nccl_fail(c, r, "all_gather_start: ncclGroupStart");
        goto fail_work;
    }
    ncclResult_t r_item = ncclSuccess;
    size_t bad = 0;
    for (size_t i = 0; i < n && r_item == ncclSuccess; i++) {
        nc_param *p = lookup(c, items[i].param);
        const void *send = p->on_host ? (const void *)((uint8_t *)items[i].full + (size_t)c->rank * p->shard_bytes)
                                      : (const void *)p->shard;
        r_item = ncclAllGather(send, items[i].full, p->shard_bytes, ncclUint8, c->comm, c->gather);
        bad = i;
        bytes += p->padded_bytes;
    }
    r = ncclGroupEnd(); /* always closes the group */
    if (r_item != ncclSuccess) {
        s = nccl_fail(c, r_item, "all_gather_start: ncclAllGather(param %u)", (unsigned)items[bad].param);
        goto fail_work;
    }
    if (r != ncclSuccess) {
        s = nccl_fail(c, r, "all_gather_start: ncclGroupEnd (%zu parameters)", n);
        goto fail_work;
    }
    e = cudaEventRecord(w->ev, c->gather);
    if (e != cudaSuccess) goto cuda_err;

    w->next = c->works;
    if (c->works) c->works->prev = w;
    c->works = w;
    c->st.gathers++;
    c->st.gathered_params += n;
    c->st.bytes_gathered += bytes;
    c->st.h2d_bytes += h2d;
    c->st.live_works++;
    c->st.outstanding++;
    *out = (zo_work *)w;
    return ZO_OK;

cuda_err:
    s = cuda_fail(c, e, "all_gather_start (%zu parameters)", n);
fail_work:
    event_put(c, w->ev);
    w->magic = 0;
    zo__host_free(&c->alloc, w);
    return s;
}

static zo_status op_wait(void *ctx, zo_work *zw) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    nc_work *w = checked_work(c, zw);
    if (!w) return fail(c, ZO_ERR_INVALID_ARG, "nccl backend: wait: not a live work of this backend");
    zo_status s = use_device(c, "wait");
    if (s) return s;
    s = check_async(c, "wait");
    if (s) return s;
    if (w->done) return ZO_OK;
    if (c->wait_host) {
        c->st.host_waits++;
        s = host_wait_event(c, w->ev, "wait");
        if (s) return s;
        w->done = 1;
        c->st.outstanding--;
        return ZO_OK;
    }
    CU(c, cudaStreamWaitEvent(c->compute, w->ev, 0), "wait: cudaStreamWaitEvent(compute)");
    c->st.stream_waits++;
    return ZO_OK;
}

static zo_status op_query(void *ctx, zo_work *zw, int *done) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    nc_work *w = checked_work(c, zw);
    if (!w) return fail(c, ZO_ERR_INVALID_ARG, "nccl backend: query: not a live work of this backend");
    zo_status s = use_device(c, "query");
    if (s) return s;
    if (!w->done) {
        cudaError_t e = cudaEventQuery(w->ev);
        if (e == cudaSuccess) {
            w->done = 1;
            c->st.outstanding--;
        } else if (e != cudaErrorNotReady) {
            return cuda_fail(c, e, "query: cudaEventQuery");
        }
    }
    s = check_async(c, "query");
    if (s) return s;
    *done = w->done;
    return ZO_OK;
}

static void work_release(nc_ctx *c, nc_work *w) {
    if (!w->done) c->st.outstanding--;
    if (w->prev)
        w->prev->next = w->next;
    else
        c->works = w->next;
    if (w->next) w->next->prev = w->prev;
    event_put(c, w->ev);
    w->magic = 0;
    c->st.live_works--;
    zo__host_free(&c->alloc, w);
}

static void op_work_free(void *ctx, zo_work *zw) {
    nc_ctx *c = ctx_of(ctx);
    if (!c || !zw) return;
    nc_work *w = checked_work(c, zw);
    if (!w) {
        fail(c, ZO_ERR_INVALID_ARG, "nccl backend: work_free: not a live work of this backend");
        return;
    }
    work_release(c, w);
}

/* 1 if ptr is host memory (registered or not, or unknown to CUDA), 0 if device or managed */
static int is_host_ptr(const void *ptr) {
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* older runtimes: invalid value for plain host memory */
        return 1;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? 0 : 1;
}

static zo_status op_reduce_scatter(void *ctx, zo_param_id param, const float *full_grad, float *shard_out,
                                   uint64_t numel, uint64_t partition_numel, zo_reduce_op op) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    const nc_param *p = lookup(c, param);
    zo_status s = zo__reduce_scatter_check(c->err, sizeof c->err, "nccl backend", param, numel, partition_numel,
                                           p != NULL, p ? p->numel : 0, p ? p->part : 0);
    if (s) return s;
    s = check_async(c, "reduce_scatter");
    if (s) return s;
    s = use_device(c, "reduce_scatter");
    if (s) return s;
    int in_host = is_host_ptr(full_grad), out_host = is_host_ptr(shard_out);
    size_t padded = (size_t)partition_numel * (size_t)c->world; /* elements */
    float *tmp_in = NULL, *tmp_out = NULL;
    const float *send = full_grad;
    float *recv = shard_out;
    cudaError_t e;
    ncclResult_t r;

    /* the gradient was produced on the compute stream */
    e = cudaEventRecord(c->ev_compute, c->compute);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->gather, c->ev_compute, 0);
    if (e != cudaSuccess)
        return cuda_fail(c, e, "reduce_scatter(%u): ordering after the compute stream", (unsigned)param);
    if (in_host || padded != numel) {
        e = cudaMallocFromPoolAsync((void **)&tmp_in, padded * sizeof(float), c->pool, c->gather);
        if (e != cudaSuccess)
            return cuda_fail(c, e, "reduce_scatter(%u): staging input (%zu bytes)", (unsigned)param,
                             padded * sizeof(float));
        e = cudaMemcpyAsync(tmp_in, full_grad, (size_t)numel * sizeof(float),
                            in_host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice, c->gather);
        if (e == cudaSuccess && padded > numel)
            e = cudaMemsetAsync(tmp_in + numel, 0, (padded - (size_t)numel) * sizeof(float), c->gather);
        if (e != cudaSuccess) {
            s = cuda_fail(c, e, "reduce_scatter(%u): staging input", (unsigned)param);
            goto out;
        }
        send = tmp_in;
    }
    if (out_host) {
        e = cudaMallocFromPoolAsync((void **)&tmp_out, (size_t)partition_numel * sizeof(float), c->pool, c->gather);
        if (e != cudaSuccess) {
            s = cuda_fail(c, e, "reduce_scatter(%u): staging output", (unsigned)param);
            goto out;
        }
        recv = tmp_out;
    }
    r = ncclReduceScatter(send, recv, (size_t)partition_numel, ncclFloat32, op == ZO_REDUCE_AVG ? ncclAvg : ncclSum,
                          c->comm, c->gather);
    if (r != ncclSuccess) {
        s = nccl_fail(c, r, "reduce_scatter(%u): ncclReduceScatter", (unsigned)param);
        goto out;
    }
    if (out_host) {
        e = cudaMemcpyAsync(shard_out, tmp_out, (size_t)partition_numel * sizeof(float), cudaMemcpyDeviceToHost,
                            c->gather);
        if (e != cudaSuccess) {
            s = cuda_fail(c, e, "reduce_scatter(%u): copying the shard to the host", (unsigned)param);
            goto out;
        }
    }
    c->st.reduce_scatters++;
    s = ZO_OK;
out:
    if (tmp_in) (void)cudaFreeAsync(tmp_in, c->gather);
    if (tmp_out) (void)cudaFreeAsync(tmp_out, c->gather);
    if (s) return s;
    e = cudaEventRecord(c->ev_sync, c->gather);
    if (e != cudaSuccess) return cuda_fail(c, e, "reduce_scatter(%u): cudaEventRecord", (unsigned)param);
    if (in_host || out_host) {
        c->st.host_waits++;
        return host_wait_event(c, c->ev_sync, "reduce_scatter (host buffers)");
    }
    CU(c, cudaStreamWaitEvent(c->compute, c->ev_sync, 0), "reduce_scatter(%u): cudaStreamWaitEvent(compute)",
       (unsigned)param);
    return ZO_OK;
}

/* exchange: the runtime's collective fingerprint (zo_config.verify_collectives).
 * H2D copy of send into this rank's slot of the device staging buffer,
 * in-place ncclAllGather of `bytes` bytes on the gather stream (so it is
 * ordered with this rank's all-gathers on the same communicator), D2H copy
 * of the W slots, host wait (polling the asynchronous NCCL error and
 * wait_timeout_ms, like every host wait here). */
static zo_status op_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return ZO_ERR_INVALID_ARG;
    zo_status s = check_async(c, "exchange");
    if (s) return s;
    s = use_device(c, "exchange");
    if (s) return s;
    if (!c->xbuf) {
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, (size_t)c->world * NC_EXCHANGE_MAX);
        if (e != cudaSuccess)
            return cuda_fail(c, e, "exchange: cudaMalloc(%zu bytes of staging)", (size_t)c->world * NC_EXCHANGE_MAX);
        c->xbuf = p;
    }
    uint8_t *mine = c->xbuf + (size_t)c->rank * bytes;
    CU(c, cudaMemcpyAsync(mine, send, bytes, cudaMemcpyHostToDevice, c->gather), "exchange: cudaMemcpyAsync H2D");
    ncclResult_t r = ncclAllGather(mine, c->xbuf, bytes, ncclUint8, c->comm, c->gather);
    if (r != ncclSuccess) return nccl_fail(c, r, "exchange: ncclAllGather(%zu bytes)", bytes);
    CU(c, cudaMemcpyAsync(recv, c->xbuf, (size_t)c->world * bytes, cudaMemcpyDeviceToHost, c->gather),
       "exchange: cudaMemcpyAsync D2H");
    CU(c, cudaEventRecord(c->ev_sync, c->gather), "exchange: cudaEventRecord");
    c->st.host_waits++;
    s = host_wait_event(c, c->ev_sync, "exchange");
    if (s) return s;
    c->st.exchanges++;
    return ZO_OK;
}

static const char *op_last_error(void *ctx) {
    nc_ctx *c = ctx_of(ctx);
    return c ? c->err : NULL;
}

static void op_destroy(void *ctx) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return;
    (void)cudaSetDevice(c->device);
    if (c->gather) (void)cudaStreamSynchronize(c->gather);
    while (c->works) work_release(c, c->works);
    for (size_t i = 0; i < c->bufs.cap; i++)
        if (c->bufs.vals[i]) {
            (void)cudaFreeAsync((void *)(uintptr_t)c->bufs.keys[i], c->gather);
            zo__host_free(&c->alloc, c->bufs.vals[i]);
        }
    if (c->gather) (void)cudaStreamSynchronize(c->gather);
    if (c->xbuf) (void)cudaFree(c->xbuf);
    for (size_t i = 0; i < c->params_cap; i++)
        if (c->params[i]) {
            shard_release(c, c->params[i]);
            zo__host_free(&c->alloc, c->params[i]);
        }
    for (size_t i = 0; i < c->n_evfree; i++) (void)cudaEventDestroy(c->evfree[i]);
    if (c->ev_compute) (void)cudaEventDestroy(c->ev_compute);
    if (c->ev_shards) (void)cudaEventDestroy(c->ev_shards);
    if (c->ev_sync) (void)cudaEventDestroy(c->ev_sync);
    if (c->pool) (void)cudaMemPoolDestroy(c->pool);
    if (c->gather) (void)cudaStreamDestroy(c->gather);
    if (c->comm) (void)ncclCommDestroy(c->comm);
    zo__host_free(&c->alloc, c->params);
    zo__host_free(&c->alloc, c->evfree);
    zo__map_free(&c->bufs, &c->alloc);
    c->magic = 0;
    zo_allocator a = c->alloc;
    zo__host_free(&a, c);
}

/* the parameter record full_alloc and all_gather_start read */
static void op_prefetch(void *ctx, zo_param_id param) {
    nc_ctx *c = ctx_of(ctx);
    if (!c) return;
    nc_param *p = lookup(c, param);
    if (p) __builtin_prefetch(p);
}

static const zo_backend_ops nccl_ops = {
    .version = ZO_BACKEND_OPS_VERSION,
    .name = "nccl",
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
/* Configuration and creation                                           */
/* ------------------------------------------------------------------ */

/* -1: unset, -2: malformed, else the value */
static long env_int(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || !end || *end || x < 0 || x > INT_MAX) return -2;
    return x;
}

static zo_status check_version(const zo_nccl_config *cfg) {
    if (!cfg) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: NULL config");
    if (cfg->size != sizeof(zo_nccl_config) || cfg->version != ZO_NCCL_CONFIG_VERSION)
        return create_fail(ZO_ERR_VERSION,
                           "zoffload nccl: config size/version %zu/%u, this library expects %zu/%u "
                           "(start from ZO_NCCL_CONFIG_INIT)",
                           cfg->size, (unsigned)cfg->version, sizeof(zo_nccl_config), ZO_NCCL_CONFIG_VERSION);
    return ZO_OK;
}

zo_status zo_nccl_config_from_env(zo_nccl_config *cfg) {
    g_create_err[0] = 0;
    zo_status s = check_version(cfg);
    if (s) return s;
    const char *names[2][3] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
                               {"WORLD_SIZE", "RANK", "LOCAL_RANK"}};
    long v[3] = {-1, -1, -1};
    const char *src[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++)
        for (int set = 0; set < 2 && v[k] == -1; set++) {
            v[k] = env_int(names[set][k]);
            src[k] = names[set][k];
            if (v[k] == -2)
                return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: %s='%s' is not a non-negative integer",
                                   names[set][k], getenv(names[set][k]));
        }
    if (cfg->world_size == ZO_NCCL_FROM_ENV) cfg->world_size = v[0] >= 0 ? (int)v[0] : 1;
    if (cfg->rank == ZO_NCCL_FROM_ENV) cfg->rank = v[1] >= 0 ? (int)v[1] : 0;
    if (cfg->local_device == ZO_NCCL_FROM_ENV && v[2] >= 0) cfg->local_device = (int)v[2];
    if (cfg->world_size < 1 || cfg->world_size > ZO_MAX_WORLD_SIZE || cfg->rank < 0 || cfg->rank >= cfg->world_size)
        return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: rank %d / world size %d out of range (from %s, %s)",
                           cfg->rank, cfg->world_size, src[1] ? src[1] : "config", src[0] ? src[0] : "config");
    return ZO_OK;
}

/* Validates cfg and resolves world/rank/device into *r.  Checks that the
 * device exists: ZO_ERR_NO_DEVICE otherwise. */
static zo_status resolve(const zo_nccl_config *cfg, zo_nccl_config *r, int need_rank) {
    zo_status s = check_version(cfg);
    if (s) return s;
    *r = *cfg;
    if ((unsigned)r->offload_param > ZO_NCCL_OFFLOAD_CPU || (r->pin_memory != 0 && r->pin_memory != 1) ||
        (r->wait_host != 0 && r->wait_host != 1) || (unsigned)r->init > ZO_NCCL_INIT_ZERO ||
        (r->reduce_op != ZO_REDUCE_SUM && r->reduce_op != ZO_REDUCE_AVG) || r->max_outstanding_gathers < 0 ||
        (!r->allocator.alloc != !r->allocator.free))
        return create_fail(ZO_ERR_INVALID_ARG,
                           "zoffload nccl: bad config (offload_param, pin_memory, wait_host, init, reduce_op, "
                           "max_outstanding_gathers >= 0, allocator with both alloc and free)");
    if (need_rank) {
        s = zo_nccl_config_from_env(r);
        if (s) return s;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return create_fail(ZO_ERR_NO_DEVICE,
                           "zoffload nccl: no CUDA device: cudaGetDeviceCount failed with %s (%s); a GPU and its "
                           "driver are required",
                           cudaGetErrorName(e), cudaGetErrorString(e));
    }
    if (count <= 0)
        return create_fail(ZO_ERR_NO_DEVICE, "zoffload nccl: no CUDA device: cudaGetDeviceCount reports 0 devices");
    if (need_rank) {
        if (r->local_device == ZO_NCCL_FROM_ENV) r->local_device = r->rank % count;
        if (r->local_device < 0 || r->local_device >= count)
            return create_fail(ZO_ERR_NO_DEVICE,
                               "zoffload nccl: rank %d needs CUDA device %d but only %d device(s) are present", r->rank,
                               r->local_device, count);
    }
    return ZO_OK;
}

/* Builds the backend around comm (taken over: destroyed on failure). */
static zo_status create_with_comm(const zo_nccl_config *r, int world, int rank, int device, ncclComm_t comm,
                                  zo_backend **out) {
    nc_ctx *c = zo__host_alloc(&r->allocator, sizeof *c);
    if (!c) {
        (void)ncclCommDestroy(comm);
        return create_fail(ZO_ERR_NOMEM, "zoffload nccl: out of host memory");
    }
    memset(c, 0, sizeof *c);
    c->magic = NC_MAGIC_CTX;
    c->alloc = r->allocator;
    c->world = world;
    c->rank = rank;
    c->device = device;
    c->comm = comm;
    c->compute = (cudaStream_t)r->compute_stream;
    c->offload = r->offload_param;
    c->pin = r->pin_memory;
    c->wait_host = r->wait_host;
    c->max_out = r->max_outstanding_gathers;
    c->wait_timeout_ms = r->wait_timeout_ms;
    c->reduce_op = r->reduce_op;
    c->init = r->init;
    c->pub.ops = &nccl_ops;
    c->pub.ctx = c;

    cudaError_t e = cudaSetDevice(device);
    const char *what = "cudaSetDevice";
    if (e == cudaSuccess) {
        what = "cudaStreamCreateWithFlags(gather)";
        e = cudaStreamCreateWithFlags(&c->gather, cudaStreamNonBlocking);
    }
    if (e == cudaSuccess) {
        what = "cudaEventCreateWithFlags";
        e = cudaEventCreateWithFlags(&c->ev_compute, cudaEventDisableTiming);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->ev_shards, cudaEventDisableTiming);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->ev_sync, cudaEventDisableTiming);
    }
    if (e == cudaSuccess) {
        struct cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        what = "cudaMemPoolCreate";
        e = cudaMemPoolCreate(&c->pool, &props);
        if (e == cudaSuccess) {
            uint64_t thr = r->pool_release_threshold;
            what = "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)";
            e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &thr);
        }
    }
    if (e != cudaSuccess) {
        zo_status st = status_of_cuda(e);
        create_fail(st == ZO_OK ? ZO_ERR_BACKEND : st, "zoffload nccl: rank %d device %d: %s: %s (%s)", rank, device,
                    what, cudaGetErrorName(e), cudaGetErrorString(e));
        (void)cudaGetLastError();
        op_destroy(c);
        return st == ZO_OK ? ZO_ERR_BACKEND : st;
    }
    *out = &c->pub;
    return ZO_OK;
}

zo_status zo_nccl_get_unique_id(zo_nccl_unique_id *id) {
    g_create_err[0] = 0;
    if (!id) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: NULL id");
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) {
        const char *last = ncclGetLastError(NULL);
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: ncclGetUniqueId: %s%s%s", ncclGetErrorString(r),
                           last && last[0] ? "; " : "", last ? last : "");
    }
    memcpy(id->bytes, u.internal, sizeof id->bytes);
    return ZO_OK;
}

static zo_status create_from_resolved(const zo_nccl_config *r, const zo_nccl_unique_id *id, zo_backend **out) {
    cudaError_t e = cudaSetDevice(r->local_device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        zo_status st = status_of_cuda(e);
        return create_fail(st ? st : ZO_ERR_BACKEND, "zoffload nccl: cudaSetDevice(%d): %s", r->local_device,
                           cudaGetErrorString(e));
    }
    ncclUniqueId u;
    memcpy(u.internal, id->bytes, sizeof u.internal);
    ncclComm_t comm = NULL;
    ncclResult_t nr = ncclCommInitRank(&comm, r->world_size, u, r->rank);
    if (nr != ncclSuccess) {
        const char *last = ncclGetLastError(NULL);
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: ncclCommInitRank(world %d, rank %d, device %d): %s%s%s",
                           r->world_size, r->rank, r->local_device, ncclGetErrorString(nr), last && last[0] ? "; " : "",
                           last ? last : "");
    }
    return create_with_comm(r, r->world_size, r->rank, r->local_device, comm, out);
}

zo_status zo_backend_nccl_create(const zo_nccl_config *cfg, const zo_nccl_unique_id *id, zo_backend **out) {
    g_create_err[0] = 0;
    if (!out) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: NULL out");
    *out = NULL;
    if (!id) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: NULL unique id");
    zo_nccl_config r;
    zo_status s = resolve(cfg, &r, 1);
    if (s) return s;
    return create_from_resolved(&r, id, out);
}

/* --- file bootstrap ---------------------------------------------------- */

#define NC_ID_FILE_MAGIC "ZONCCLID"
typedef struct nc_id_record {
    char magic[8];
    uint32_t version;
    int32_t world_size;
    char id[ZO_NCCL_UNIQUE_ID_BYTES];
    uint64_t check;
} nc_id_record;

static uint64_t record_check(const nc_id_record *rec) {
    const unsigned char *b = (const unsigned char *)rec;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over everything before check */
    for (size_t i = 0; i < offsetof(nc_id_record, check); i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static zo_status write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return ZO_ERR_BACKEND;
        }
        p += k;
        n -= (size_t)k;
    }
    return ZO_OK;
}

static zo_status write_id_file(const char *dir, const char *path, const nc_id_record *rec) {
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: bootstrap path too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return create_fail(ZO_ERR_BACKEND, "zoffload nccl: bootstrap: open(%s): %s", tmp, strerror(errno));
    if (write_all(fd, rec, sizeof *rec) || fsync(fd) != 0) {
        int er = errno;
        close(fd);
        unlink(tmp);
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: bootstrap: writing %s: %s", tmp, strerror(er));
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int er = errno;
        unlink(tmp);
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: bootstrap: rename(%s, %s): %s", tmp, path, strerror(er));
    }
    int dfd = open(dir, O_RDONLY | O_CLOEXEC);
    if (dfd >= 0) { /* make the rename durable; best effort */
        (void)fsync(dfd);
        close(dfd);
    }
    return ZO_OK;
}

/* 1: read a valid record, 0: not there (yet), <0: zo_status */
static int read_id_file(const char *path, int world, nc_id_record *rec) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT
                   ? 0
                   : create_fail(ZO_ERR_BACKEND, "zoffload nccl: bootstrap: open(%s): %s", path, strerror(errno));
    size_t got = 0;
    while (got < sizeof *rec) {
        ssize_t k = read(fd, (char *)rec + got, sizeof *rec - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (got != sizeof *rec || memcmp(rec->magic, NC_ID_FILE_MAGIC, 8) != 0 || rec->version != 1 ||
        rec->check != record_check(rec))
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: bootstrap: %s is not a zoffload NCCL id file", path);
    if (rec->world_size != world)
        return create_fail(ZO_ERR_BACKEND,
                           "zoffload nccl: bootstrap: %s was written for world size %d, this rank has %d (a stale "
                           "file of another run? use a unique tag)",
                           path, (int)rec->world_size, world);
    return 1;
}

/* the run's tag: the caller's, else a launcher's run id, else "default" */
static const char *bootstrap_tag(const char *tag) {
    const char *tag_vars[] = {"ZO_NCCL_RUN_ID", "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "TORCHELASTIC_RUN_ID"};
    for (size_t i = 0; i < sizeof tag_vars / sizeof tag_vars[0] && (!tag || !*tag); i++) tag = getenv(tag_vars[i]);
    return tag && *tag ? tag : "default";
}

zo_status zo__nccl_bootstrap_path(const char *dir, const char *tag, char *path, size_t cap) {
    if (!dir || !*dir) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: file bootstrap needs a directory");
    tag = bootstrap_tag(tag);
    if (strchr(tag, '/')) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: bootstrap tag '%s' contains '/'", tag);
    int n = snprintf(path, cap, "%s/zoffload-nccl-%s.id", dir, tag);
    if (n < 0 || (size_t)n >= cap) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: bootstrap path too long");
    return ZO_OK;
}

zo_status zo__nccl_bootstrap_publish(const char *dir, const char *tag, int world, const zo_nccl_unique_id *id) {
    char path[4000];
    zo_status s = zo__nccl_bootstrap_path(dir, tag, path, sizeof path);
    if (s) return s;
    nc_id_record rec;
    memset(&rec, 0, sizeof rec);
    memcpy(rec.magic, NC_ID_FILE_MAGIC, 8);
    rec.version = 1;
    rec.world_size = world;
    memcpy(rec.id, id->bytes, sizeof rec.id);
    rec.check = record_check(&rec);
    return write_id_file(dir, path, &rec);
}

zo_status zo__nccl_bootstrap_fetch(const char *dir, const char *tag, int world, int rank, uint64_t timeout_ms,
                                   zo_nccl_unique_id *id) {
    char path[4000];
    zo_status s = zo__nccl_bootstrap_path(dir, tag, path, sizeof path);
    if (s) return s;
    nc_id_record rec;
    uint64_t t0 = now_ms();
    for (;;) {
        int k = read_id_file(path, world, &rec);
        if (k < 0) return (zo_status)k;
        if (k == 1) break;
        if (timeout_ms && now_ms() - t0 > timeout_ms)
            return create_fail(ZO_ERR_BACKEND,
                               "zoffload nccl: bootstrap: rank %d waited %llu ms for %s (rank 0 not started, "
                               "or a different directory/tag)",
                               rank, (unsigned long long)timeout_ms, path);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    memcpy(id->bytes, rec.id, sizeof id->bytes);
    return ZO_OK;
}

zo_status zo_backend_nccl_create_file(const zo_nccl_config *cfg, const char *dir, const char *tag, zo_backend **out) {
    g_create_err[0] = 0;
    if (!out) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: NULL out");
    *out = NULL;
    char path[4000];
    zo_status s = zo__nccl_bootstrap_path(dir, tag, path, sizeof path);
    if (s) return s;
    zo_nccl_config r;
    s = resolve(cfg, &r, 1); /* before any file: no device, no id file */
    if (s) return s;
    zo_nccl_unique_id id;
    if (r.rank == 0) {
        s = zo_nccl_get_unique_id(&id);
        if (!s) s = zo__nccl_bootstrap_publish(dir, tag, r.world_size, &id);
    } else {
        s = zo__nccl_bootstrap_fetch(dir, tag, r.world_size, r.rank, r.bootstrap_timeout_ms, &id);
    }
    if (s) return s;
    s = create_from_resolved(&r, &id, out);
    if (r.rank == 0) (void)unlink(path); /* every rank has read it once ncclCommInitRank returned (or it failed) */
    return s;
}

/* --- MPI bootstrap ----------------------------------------------------- */

int zo_nccl_have_mpi(void) {
#ifdef ZO_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

zo_status zo_backend_nccl_create_mpi(const zo_nccl_config *cfg, const void *mpi_comm, zo_backend **out) {
    g_create_err[0] = 0;
    if (!out) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: NULL out");
    *out = NULL;
#ifndef ZO_HAVE_MPI
    (void)cfg;
    (void)mpi_comm;
    return create_fail(ZO_ERR_UNSUPPORTED,
                       "zoffload nccl: built without MPI (install libopenmpi-dev and reconfigure); use "
                       "zo_backend_nccl_create_file or zo_backend_nccl_create");
#else
    zo_status s = check_version(cfg);
    if (s) return s;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: MPI is not initialised (call MPI_Init first)");
    MPI_Comm mc = mpi_comm ? *(const MPI_Comm *)mpi_comm : MPI_COMM_WORLD;
    int msize = 0, mrank = 0;
    if (MPI_Comm_size(mc, &msize) != MPI_SUCCESS || MPI_Comm_rank(mc, &mrank) != MPI_SUCCESS)
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: MPI_Comm_size/MPI_Comm_rank failed");
    zo_nccl_config c2 = *cfg;
    if (c2.world_size == ZO_NCCL_FROM_ENV) c2.world_size = msize;
    if (c2.rank == ZO_NCCL_FROM_ENV) c2.rank = mrank;
    zo_nccl_config r;
    s = resolve(&c2, &r, 1);
    /* every rank learns whether every rank can go on: no rank is left
     * waiting in ncclCommInitRank for one that failed */
    int ok = s == ZO_OK, all_ok = 0;
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, mc) != MPI_SUCCESS)
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: MPI_Allreduce failed");
    if (s) return s;
    if (!all_ok) return create_fail(ZO_ERR_NO_DEVICE, "zoffload nccl: another MPI rank could not set up its device");
    struct {
        int status;
        zo_nccl_unique_id id;
    } msg;
    memset(&msg, 0, sizeof msg);
    if (r.rank == 0) msg.status = zo_nccl_get_unique_id(&msg.id);
    if (MPI_Bcast(&msg, (int)sizeof msg, MPI_BYTE, 0, mc) != MPI_SUCCESS)
        return create_fail(ZO_ERR_BACKEND, "zoffload nccl: MPI_Bcast of the unique id failed");
    if (msg.status)
        return r.rank == 0 ? msg.status
                           : create_fail(ZO_ERR_BACKEND, "zoffload nccl: rank 0 could not create the unique id");
    return create_from_resolved(&r, &msg.id, out);
#endif
}

/* --- single process, several devices ------------------------------------ */

zo_status zo_backend_nccl_create_all(const zo_nccl_config *cfg, int ndev, const int *devlist, zo_backend **out) {
    g_create_err[0] = 0;
    if (!out || ndev < 1 || ndev > 4096)
        return create_fail(ZO_ERR_INVALID_ARG, "zoffload nccl: create_all: NULL out or ndev %d out of 1..4096", ndev);
    for (int i = 0; i < ndev; i++) out[i] = NULL;
    zo_nccl_config r;
    zo_status s = resolve(cfg, &r, 0);
    if (s) return s;
    int count = 0;
    (void)cudaGetDeviceCount(&count); /* succeeded in resolve */
    int *devs = zo__host_alloc(&r.allocator, (size_t)ndev * sizeof *devs);
    ncclComm_t *comms = zo__host_alloc(&r.allocator, (size_t)ndev * sizeof *comms);
    if (!devs || !comms) {
        zo__host_free(&r.allocator, devs);
        zo__host_free(&r.allocator, comms);
        return create_fail(ZO_ERR_NOMEM, "zoffload nccl: out of host memory");
    }
    s = ZO_OK;
    for (int i = 0; i < ndev && !s; i++) {
        devs[i] = devlist ? devlist[i] : i;
        if (devs[i] < 0 || devs[i] >= count)
            s = create_fail(ZO_ERR_NO_DEVICE,
                            "zoffload nccl: create_all needs CUDA device %d (rank %d of %d) but only %d device(s) "
                            "are present",
                            devs[i], i, ndev, count);
    }
    if (!s) {
        memset(comms, 0, (size_t)ndev * sizeof *comms);
        ncclResult_t nr = ncclCommInitAll(comms, ndev, devs);
        if (nr != ncclSuccess) {
            const char *last = ncclGetLastError(NULL);
            s = create_fail(ZO_ERR_BACKEND, "zoffload nccl: ncclCommInitAll(%d devices): %s%s%s", ndev,
                            ncclGetErrorString(nr), last && last[0] ? "; " : "", last ? last : "");
        }
    }
    if (!s) {
        int i = 0;
        for (; i < ndev && !s; i++) s = create_with_comm(&r, ndev, i, devs[i], comms[i], &out[i]);
        if (s) {
            /* out[i-1] failed (its comm destroyed); undo the others */
            for (int j = 0; j < i - 1; j++) {
                zo_backend_destroy(out[j]);
                out[j] = NULL;
            }
            for (int j = i; j < ndev; j++) (void)ncclCommDestroy(comms[j]);
        }
    }
    zo__host_free(&r.allocator, devs);
    zo__host_free(&r.allocator, comms);
    return s;
}

/* ------------------------------------------------------------------ */
/* Public helpers                                                       */
/* ------------------------------------------------------------------ */

int zo_nccl_is_nccl(const zo_backend *b) { return backend_ctx(b) != NULL; }

int zo_nccl_device(const zo_backend *b) {
    nc_ctx *c = backend_ctx(b);
    return c ? c->device : ZO_ERR_INVALID_ARG;
}

void *zo_nccl_compute_stream(const zo_backend *b) {
    nc_ctx *c = backend_ctx(b);
    return c ? (void *)c->compute : NULL;
}

void *zo_nccl_gather_stream(const zo_backend *b) {
    nc_ctx *c = backend_ctx(b);
    return c ? (void *)c->gather : NULL;
}

zo_status zo_nccl_shard(zo_backend *b, zo_param_id param, void **shard, size_t *bytes, int *on_host) {
    nc_ctx *c = backend_ctx(b);
    if (!c || !shard) return ZO_ERR_INVALID_ARG;
    *shard = NULL;
    nc_param *p = lookup(c, param);
    if (!p) return fail(c, ZO_ERR_BAD_HANDLE, "nccl backend: shard: param %u not added", (unsigned)param);
    *shard = p->shard;
    if (bytes) *bytes = p->shard_bytes;
    if (on_host) *on_host = p->on_host;
    return ZO_OK;
}

static zo_status shard_copy(zo_backend *b, zo_param_id param, uint64_t offset, void *host, size_t bytes, int up) {
    nc_ctx *c = backend_ctx(b);
    if (!c || !host) return ZO_ERR_INVALID_ARG;
    const char *op = up ? "shard_upload" : "shard_download";
    nc_param *p = lookup(c, param);
    if (!p) return fail(c, ZO_ERR_BAD_HANDLE, "nccl backend: %s: param %u not added", op, (unsigned)param);
    if (offset > p->shard_bytes || bytes > p->shard_bytes - offset)
        return fail(c, ZO_ERR_INVALID_ARG, "nccl backend: %s(%u): bytes [%llu, +%zu) outside the %zu-byte shard", op,
                    (unsigned)param, (unsigned long long)offset, bytes, p->shard_bytes);
    zo_status s = use_device(c, op);
    if (s) return s;
    /* ordered after every gather reading the shard and every compute use */
    CU(c, cudaStreamSynchronize(c->gather), "%s: cudaStreamSynchronize(gather)", op);
    CU(c, cudaStreamSynchronize(c->compute), "%s: cudaStreamSynchronize(compute)", op);
    uint8_t *dev = (uint8_t *)p->shard + offset;
    if (p->on_host) {
        if (up)
            memcpy(dev, host, bytes);
        else
            memcpy(host, dev, bytes);
        return ZO_OK;
    }
    CU(c,
       cudaMemcpy(up ? (void *)dev : host, up ? (const void *)host : (const void *)dev, bytes,
                  up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
       "%s(%u): cudaMemcpy", op, (unsigned)param);
    /* an H2D cudaMemcpy from pageable memory may return before its DMA is
     * done; the next all-gather runs on the non-blocking gather stream */
    CU(c, cudaStreamSynchronize((cudaStream_t)0), "%s(%u): cudaStreamSynchronize(legacy stream)", op, (unsigned)param);
    return ZO_OK;
}

zo_status zo_nccl_shard_upload(zo_backend *b, zo_param_id param, uint64_t offset, const void *src, size_t bytes) {
    return shard_copy(b, param, offset, (void *)(uintptr_t)src, bytes, 1);
}

zo_status zo_nccl_shard_download(zo_backend *b, zo_param_id param, uint64_t offset, void *dst, size_t bytes) {
    return shard_copy(b, param, offset, dst, bytes, 0);
}

zo_status zo_nccl_mark_shards_written(zo_backend *b) {
    nc_ctx *c = backend_ctx(b);
    if (!c) return ZO_ERR_INVALID_ARG;
    zo_status s = use_device(c, "mark_shards_written");
    if (s) return s;
    CU(c, cudaEventRecord(c->ev_shards, c->compute), "mark_shards_written: cudaEventRecord");
    c->shards_dirty = 1;
    return ZO_OK;
}

zo_status zo_nccl_reduce_scatter(zo_backend *b, zo_param_id param, const float *full_grad, float *shard_out,
                                 uint64_t numel, uint64_t partition_numel, zo_reduce_op op) {
    nc_ctx *c = backend_ctx(b);
    if (!c) return ZO_ERR_INVALID_ARG;
    return op_reduce_scatter(c, param, full_grad, shard_out, numel, partition_numel, op);
}

zo_status zo_nccl_reduce_grads(zo_backend *b, zo_param_id param, const float *full_grad, float *shard_out,
                               uint64_t numel, uint64_t partition_numel) {
    nc_ctx *c = backend_ctx(b);
    if (!c) return ZO_ERR_INVALID_ARG;
    return op_reduce_scatter(c, param, full_grad, shard_out, numel, partition_numel, c->reduce_op);
}

zo_status zo_nccl_synchronize(zo_backend *b) {
    nc_ctx *c = backend_ctx(b);
    if (!c) return ZO_ERR_INVALID_ARG;
    zo_status s = use_device(c, "synchronize");
    if (s) return s;
    c->st.host_waits++;
    CU(c, cudaEventRecord(c->ev_sync, c->compute), "synchronize: cudaEventRecord(compute)");
    s = host_wait_event(c, c->ev_sync, "synchronize (compute stream)");
    if (s) return s;
    CU(c, cudaEventRecord(c->ev_sync, c->gather), "synchronize: cudaEventRecord(gather)");
    s = host_wait_event(c, c->ev_sync, "synchronize (gather stream)");
    if (s) return s;
    s = refresh_outstanding(c);
    if (s) return s;
    return check_async(c, "synchronize");
}

zo_status zo_nccl_get_stats(const zo_backend *b, zo_nccl_stats *out) {
    nc_ctx *c = backend_ctx(b);
    if (!c || !out) return ZO_ERR_INVALID_ARG;
    *out = c->st;
    return ZO_OK;
}
