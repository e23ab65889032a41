/*
 * backend.c - calling a backend: the zo_backend_* functions of
 * zoffload_backend.h.
 *
 * Every caller of a backend (the runtime, the tests, the wrapping backends)
 * goes through these functions.  Each one checks the arguments that can be
 * judged without the backend's state (NULL pointers, counts, sizes, ids, the
 * op being present) and only then calls the backend's op, so the host, MPI
 * and NCCL backends (and any other) check only what needs their own state:
 * whether a parameter was added, whether a buffer or work is live, whether
 * the sizes match param_add's.
 *
 * A refused call leaves the backend untouched.  Its message ("<name>
 * backend: <op>...: ...", the form the backends use) is kept per thread and
 * returned by zo_backend_last_error for that backend until the next
 * zo_backend_* call of this thread; zo_last_error(NULL) has it too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hostmap.h"

/* The last refusal of this thread: the backend it concerns (NULL: none
 * pending) and its message. */
static _Thread_local const zo_backend *tl_refused;
static _Thread_local char tl_msg[256];

/* Records the refusal of a call to b (b may be NULL) by fn, the refusing
 * zo_backend_* function (named in zo_last_error(NULL)), and returns st. */
static zo_status refuse(const zo_backend *b, zo_status st, const char *fn, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static zo_status refuse(const zo_backend *b, zo_status st, const char *fn, const char *fmt, ...) {
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = b && b->ops && b->ops->name ? b->ops->name : "unnamed";
    snprintf(tl_msg, sizeof tl_msg, "%s backend: %s", name, what);
    tl_refused = b;
    return zo__fail_tls(st, "%s: %s", fn, tl_msg);
}

/* Starts a call: forgets the previous refusal; 1 if b can be called. */
static int usable(const zo_backend *b) {
    tl_refused = NULL;
    return b && b->ops;
}

zo_status zo_backend_param_add(zo_backend *b, zo_param_id param, uint64_t numel, uint32_t elem_size,
                               uint64_t partition_numel) {
    if (!usable(b) || !b->ops->param_add || !b->ops->world_size)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_param_add", "param_add: %s",
                      b ? "backend without param_add/world_size" : "NULL backend");
    int W = b->ops->world_size(b->ctx);
    if (W < 1)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_param_add", "param_add: the backend reports world size %d", W);
    if (param == ZO_NO_PARAM)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_param_add", "param_add: ZO_NO_PARAM is not a parameter id");
    if (numel == 0 || elem_size == 0 || elem_size > 64)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_param_add",
                      "param_add(%u): numel %llu and elem_size %u must be > 0 (elem_size <= 64)", (unsigned)param,
                      (unsigned long long)numel, (unsigned)elem_size);
    uint64_t w = (uint64_t)W;
    uint64_t expect = numel / w + (numel % w != 0);
    if (partition_numel != expect)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_param_add",
                      "param_add(%u): partition_numel %llu != ceil(%llu / %llu) = %llu", (unsigned)param,
                      (unsigned long long)partition_numel, (unsigned long long)numel, (unsigned long long)w,
                      (unsigned long long)expect);
    /* numel, partition_numel and W * partition_numel elements in bytes fit
     * in uint64_t and in size_t (what one buffer can hold) */
    if (numel > UINT64_MAX / elem_size || partition_numel > UINT64_MAX / elem_size ||
        partition_numel * elem_size > UINT64_MAX / w || partition_numel * elem_size * w > (uint64_t)SIZE_MAX)
        return refuse(b, ZO_ERR_OVERFLOW, "zo_backend_param_add", "param_add(%u): %llu x %u bytes overflows",
                      (unsigned)param, (unsigned long long)numel, (unsigned)elem_size);
    return b->ops->param_add(b->ctx, param, numel, elem_size, partition_numel);
}

void zo_backend_param_remove(zo_backend *b, zo_param_id param) {
    if (usable(b) && b->ops->param_remove) b->ops->param_remove(b->ctx, param);
}

zo_status zo_backend_full_alloc(zo_backend *b, zo_param_id param, size_t bytes, void **out) {
    if (out) *out = NULL;
    if (!usable(b) || !b->ops->full_alloc)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_full_alloc", "full_alloc: %s",
                      b ? "backend without full_alloc" : "NULL backend");
    if (!out) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_full_alloc", "full_alloc: NULL out");
    if (bytes == 0)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_full_alloc", "full_alloc(%u): 0 bytes", (unsigned)param);
    return b->ops->full_alloc(b->ctx, param, bytes, out);
}

void zo_backend_full_free(zo_backend *b, zo_param_id param, void *buf) {
    if (usable(b) && b->ops->full_free && buf) b->ops->full_free(b->ctx, param, buf);
}

zo_status zo_backend_all_gather_start(zo_backend *b, const zo_gather_item *items, size_t n, zo_work **out) {
    if (out) *out = NULL;
    if (!usable(b) || !b->ops->all_gather_start)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_all_gather_start", "all_gather_start: %s",
                      b ? "backend without all_gather_start" : "NULL backend");
    if (!out) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_all_gather_start", "all_gather_start: NULL out");
    if (n > 0 && !items)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_all_gather_start", "all_gather_start: NULL items with n = %zu",
                      n);
    return b->ops->all_gather_start(b->ctx, items, n, out);
}

zo_status zo_backend_wait(zo_backend *b, zo_work *w) {
    if (!usable(b) || !b->ops->wait)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_wait", "wait: %s",
                      b ? "backend without wait" : "NULL backend");
    if (!w) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_wait", "wait: not a live work of this backend (NULL)");
    return b->ops->wait(b->ctx, w);
}

zo_status zo_backend_query(zo_backend *b, zo_work *w, int *done) {
    if (done) *done = 0;
    if (!usable(b) || !b->ops->query)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_query", "query: %s",
                      b ? "backend without query" : "NULL backend");
    if (!done) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_query", "query: NULL done");
    if (!w) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_query", "query: not a live work of this backend (NULL)");
    return b->ops->query(b->ctx, w, done);
}

void zo_backend_work_free(zo_backend *b, zo_work *w) {
    if (usable(b) && b->ops->work_free && w) b->ops->work_free(b->ctx, w);
}

zo_status zo_backend_reduce_scatter(zo_backend *b, zo_param_id param, const float *full_grad, float *shard_out,
                                    uint64_t numel, uint64_t partition_numel, zo_reduce_op op) {
    if (!usable(b)) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_reduce_scatter", "reduce_scatter: NULL backend");
    if (!b->ops->reduce_scatter)
        return refuse(b, ZO_ERR_UNSUPPORTED, "zo_backend_reduce_scatter",
                      "reduce_scatter: not supported by this backend");
    if (!full_grad || !shard_out)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_reduce_scatter", "reduce_scatter(%u): NULL buffer",
                      (unsigned)param);
    if (op != ZO_REDUCE_SUM && op != ZO_REDUCE_AVG)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_reduce_scatter", "reduce_scatter(%u): unknown op %d",
                      (unsigned)param, (int)op);
    return b->ops->reduce_scatter(b->ctx, param, full_grad, shard_out, numel, partition_numel, op);
}

zo_status zo_backend_exchange(zo_backend *b, const void *send, size_t bytes, void *recv) {
    if (!usable(b)) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_exchange", "exchange: NULL backend");
    if (b->ops->version < 2u || !b->ops->exchange)
        return refuse(b, ZO_ERR_UNSUPPORTED, "zo_backend_exchange",
                      "exchange: not supported by this backend (version %u vtable)", (unsigned)b->ops->version);
    if (!send || !recv) return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_exchange", "exchange: NULL buffer");
    if (bytes < 1 || bytes > ZO_BACKEND_EXCHANGE_MAX)
        return refuse(b, ZO_ERR_INVALID_ARG, "zo_backend_exchange", "exchange: %zu bytes (1..%u)", bytes,
                      (unsigned)ZO_BACKEND_EXCHANGE_MAX);
    return b->ops->exchange(b->ctx, send, bytes, recv);
}

void zo_backend_prefetch(zo_backend *b, zo_param_id param) {
    if (!usable(b) || b->ops->version < 3u || !b->ops->prefetch) return;
    b->ops->prefetch(b->ctx, param);
}

const char *zo_backend_last_error(const zo_backend *b) {
    if (b && tl_refused == b) return tl_msg;
    const char *m = b && b->ops && b->ops->last_error ? b->ops->last_error(b->ctx) : NULL;
    return m ? m : "";
}

void zo_backend_destroy(zo_backend *b) {
    if (!b || !b->ops || !b->ops->destroy) return;
    if (tl_refused == b) tl_refused = NULL;
    /* Every zoffload backend keeps its zo_backend struct inside its context
     * allocation: destroy frees both (through the backend's allocator). */
    b->ops->destroy(b->ctx);
}
