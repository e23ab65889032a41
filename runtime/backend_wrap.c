/*
 * backend_wrap.c - a backend that forwards every call to an inner backend
 * and lets hooks see, replace or extend each call (zo_backend_wrap,
 * zoffload_testing.h): the one recording / mirroring wrapper of the fuzz
 * harness and the MPI and NCCL mirror tests.
 */
#include <stdlib.h>
#include <string.h>

#include "hostmap.h"
#include "zoffload_testing.h"

typedef struct wrap_ctx {
    zo_backend pub; /* handed to the caller; lives in this allocation */
    zo_backend *inner;
    zo_wrap_hooks h;
    zo_backend_ops ops;
} wrap_ctx;

/* Runs one call: before (may fail it or take it over), the inner op
 * (forward, unless skipped), after (sees and may change the status). */
static zo_status run(wrap_ctx *c, zo_wrap_call *call, zo_status (*forward)(wrap_ctx *, zo_wrap_call *)) {
    if (c->h.before) {
        zo_status st = c->h.before(c->h.user, call);
        if (st != ZO_OK || call->skip_inner) return st;
    }
    zo_status st = forward(c, call);
    return c->h.after ? c->h.after(c->h.user, call, st) : st;
}

static zo_status fw_param_add(wrap_ctx *c, zo_wrap_call *k) {
    return zo_backend_param_add(c->inner, k->param, k->numel, k->elem_size, k->partition_numel);
}
static zo_status fw_param_remove(wrap_ctx *c, zo_wrap_call *k) {
    zo_backend_param_remove(c->inner, k->param);
    return ZO_OK;
}
static zo_status fw_full_alloc(wrap_ctx *c, zo_wrap_call *k) {
    return zo_backend_full_alloc(c->inner, k->param, k->bytes, &k->buf);
}
static zo_status fw_full_free(wrap_ctx *c, zo_wrap_call *k) {
    zo_backend_full_free(c->inner, k->param, k->buf);
    return ZO_OK;
}
static zo_status fw_gather(wrap_ctx *c, zo_wrap_call *k) {
    return zo_backend_all_gather_start(c->inner, k->items, k->n, &k->work);
}
static zo_status fw_wait(wrap_ctx *c, zo_wrap_call *k) { return zo_backend_wait(c->inner, k->work); }
static zo_status fw_query(wrap_ctx *c, zo_wrap_call *k) { return zo_backend_query(c->inner, k->work, &k->done); }
static zo_status fw_work_free(wrap_ctx *c, zo_wrap_call *k) {
    zo_backend_work_free(c->inner, k->work);
    return ZO_OK;
}
static zo_status fw_reduce_scatter(wrap_ctx *c, zo_wrap_call *k) {
    return zo_backend_reduce_scatter(c->inner, k->param, k->grad, k->shard, k->numel, k->partition_numel, k->reduce_op);
}
static zo_status fw_exchange(wrap_ctx *c, zo_wrap_call *k) {
    return zo_backend_exchange(c->inner, k->send, k->bytes, k->recv);
}

static int op_world_size(void *ctx) {
    wrap_ctx *c = ctx;
    return c->inner->ops->world_size(c->inner->ctx);
}
static int op_rank(void *ctx) {
    wrap_ctx *c = ctx;
    return c->inner->ops->rank(c->inner->ctx);
}
static zo_status op_param_add(void *ctx, zo_param_id param, uint64_t numel, uint32_t elem_size,
                              uint64_t partition_numel) {
    zo_wrap_call k = {.op = ZO_WRAP_PARAM_ADD,
                      .param = param,
                      .numel = numel,
                      .elem_size = elem_size,
                      .partition_numel = partition_numel};
    return run(ctx, &k, fw_param_add);
}
static void op_param_remove(void *ctx, zo_param_id param) {
    zo_wrap_call k = {.op = ZO_WRAP_PARAM_REMOVE, .param = param};
    (void)run(ctx, &k, fw_param_remove);
}
static zo_status op_full_alloc(void *ctx, zo_param_id param, size_t bytes, void **out) {
    zo_wrap_call k = {.op = ZO_WRAP_FULL_ALLOC, .param = param, .bytes = bytes};
    zo_status st = run(ctx, &k, fw_full_alloc);
    *out = st == ZO_OK ? k.buf : NULL;
    return st;
}
static void op_full_free(void *ctx, zo_param_id param, void *buf) {
    zo_wrap_call k = {.op = ZO_WRAP_FULL_FREE, .param = param, .buf = buf};
    (void)run(ctx, &k, fw_full_free);
}
static zo_status op_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out) {
    zo_wrap_call k = {.op = ZO_WRAP_ALL_GATHER_START, .items = items, .n = n};
    zo_status st = run(ctx, &k, fw_gather);
    *out = st == ZO_OK ? k.work : NULL;
    return st;
}
static zo_status op_wait(void *ctx, zo_work *w) {
    zo_wrap_call k = {.op = ZO_WRAP_WAIT, .work = w};
    return run(ctx, &k, fw_wait);
}
static zo_status op_query(void *ctx, zo_work *w, int *done) {
    zo_wrap_call k = {.op = ZO_WRAP_QUERY, .work = w};
    zo_status st = run(ctx, &k, fw_query);
    *done = k.done;
    return st;
}
static void op_work_free(void *ctx, zo_work *w) {
    zo_wrap_call k = {.op = ZO_WRAP_WORK_FREE, .work = w};
    (void)run(ctx, &k, fw_work_free);
}
static zo_status op_reduce_scatter(void *ctx, zo_param_id param, const float *full_grad, float *shard_out,
                                   uint64_t numel, uint64_t partition_numel, zo_reduce_op op) {
    zo_wrap_call k = {.op = ZO_WRAP_REDUCE_SCATTER,
                      .param = param,
                      .grad = full_grad,
                      .shard = shard_out,
                      .numel = numel,
                      .partition_numel = partition_numel,
                      .reduce_op = op,
                      .elem_size = 4};
    return run(ctx, &k, fw_reduce_scatter);
}
static zo_status op_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    zo_wrap_call k = {.op = ZO_WRAP_EXCHANGE, .send = send, .bytes = bytes, .recv = recv};
    return run(ctx, &k, fw_exchange);
}
/* a hint with no effect: forwarded, no hooks (nothing to record or replace) */
static void op_prefetch(void *ctx, zo_param_id param) {
    wrap_ctx *c = ctx;
    zo_backend_prefetch(c->inner, param);
}
static const char *op_last_error(void *ctx) {
    wrap_ctx *c = ctx;
    const char *m = c->h.last_error ? c->h.last_error(c->h.user) : NULL;
    return m && m[0] ? m : zo_backend_last_error(c->inner);
}
static void op_destroy(void *ctx) {
    wrap_ctx *c = ctx;
    if (c->h.destroy) c->h.destroy(c->h.user);
    free(c);
}

zo_status zo_backend_wrap(zo_backend *inner, const zo_wrap_hooks *hooks, zo_backend **out) {
    if (!out) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_wrap: out is NULL");
    *out = NULL;
    if (!inner || !inner->ops || !inner->ops->world_size || !inner->ops->rank)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_wrap: inner is %s",
                            inner ? "a backend without world_size/rank" : "NULL");
    if (!hooks) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_backend_wrap: hooks is NULL");
    wrap_ctx *c = calloc(1, sizeof *c);
    if (!c) return zo__fail_tls(ZO_ERR_NOMEM, "zo_backend_wrap: context");
    c->inner = inner;
    c->h = *hooks;
    c->ops = (zo_backend_ops){
        .version = ZO_BACKEND_OPS_VERSION,
        .name = hooks->name ? hooks->name : "wrap",
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
        /* what the inner backend lacks, the wrapper lacks (unless a hook takes the call over) */
        .reduce_scatter = inner->ops->reduce_scatter || hooks->all_ops ? op_reduce_scatter : NULL,
        .last_error = op_last_error,
        .destroy = op_destroy,
        .exchange = (inner->ops->version >= 2u && inner->ops->exchange) || hooks->all_ops ? op_exchange : NULL,
        .prefetch = inner->ops->version >= 3u && inner->ops->prefetch ? op_prefetch : NULL,
    };
    c->pub.ops = &c->ops;
    c->pub.ctx = c;
    *out = &c->pub;
    return ZO_OK;
}

void *zo_backend_wrap_user(const zo_backend *b) {
    if (!b || !b->ops || b->ops->destroy != op_destroy || !b->ctx) return NULL;
    return ((const wrap_ctx *)b->ctx)->h.user;
}
