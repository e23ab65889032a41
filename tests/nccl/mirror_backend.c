/*
 * mirror_backend.c - host backend + NCCL backend side by side, compared at
 * every completed all-gather (see mirror_backend.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "mirror_backend.h"
#include "zoffload_nccl.h"
#include "zoffload_testing.h"

typedef struct mbuf {
    void *host, *dev; /* dev NULL: skipped (too large) */
    zo_param_id param;
    struct mbuf *next;
} mbuf;

typedef struct mitem {
    zo_param_id param;
    void *host, *dev;
    uint64_t full_bytes;
} mitem;

typedef struct mwork {
    zo_work *hw, *nw; /* nw NULL when no item went to NCCL */
    int compared;
    zo_status verdict;
    size_t n;
    mitem items[];
} mwork;

typedef struct mctx {
    zo_backend pub;
    zo_backend *h, *n;
    uint64_t max_nccl, compare_bytes;
    int hw_world, n_world;
    mbuf *bufs;         /* live full buffers (few: a list is enough) */
    uint8_t *skip;      /* per param id: 1 = host only */
    size_t skip_cap;
    zo_mirror_stats st;
    char err[512], first[512];
} mctx;

static const zo_backend_ops mirror_ops;

static zo_status mfail(mctx *c, zo_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return s;
}

static const char *le(zo_backend *b)
{
    const char *m = b->ops->last_error ? b->ops->last_error(b->ctx) : NULL;
    return m ? m : "";
}

static int w_mirror(void *ctx) { return ((mctx *)ctx)->h->ops->world_size(((mctx *)ctx)->h->ctx); }
static int r_mirror(void *ctx) { return ((mctx *)ctx)->h->ops->rank(((mctx *)ctx)->h->ctx); }

static int skipped(mctx *c, zo_param_id p) { return (size_t)p < c->skip_cap && c->skip[p]; }

static zo_status m_param_add(void *ctx, zo_param_id p, uint64_t numel, uint32_t es, uint64_t part)
{
    mctx *c = ctx;
    zo_status s = c->h->ops->param_add(c->h->ctx, p, numel, es, part);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    if ((size_t)p >= c->skip_cap) {
        size_t ncap = c->skip_cap ? c->skip_cap : 256;
        while (ncap <= (size_t)p)
            ncap *= 2;
        uint8_t *n = realloc(c->skip, ncap);
        if (!n) {
            c->h->ops->param_remove(c->h->ctx, p);
            return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
        }
        memset(n + c->skip_cap, 0, ncap - c->skip_cap);
        c->skip = n;
        c->skip_cap = ncap;
    }
    uint64_t npart = (numel + (uint64_t)c->n_world - 1) / (uint64_t)c->n_world;
    uint64_t padded = npart * (uint64_t)c->n_world * es;
    c->skip[p] = c->max_nccl && padded > c->max_nccl;
    if (c->skip[p]) {
        c->st.skipped_large++;
        return ZO_OK;
    }
    s = c->n->ops->param_add(c->n->ctx, p, numel, es, npart);
    if (s) {
        c->h->ops->param_remove(c->h->ctx, p);
        return mfail(c, s, "nccl: %s", le(c->n));
    }
    return ZO_OK;
}

static void m_param_remove(void *ctx, zo_param_id p)
{
    mctx *c = ctx;
    c->h->ops->param_remove(c->h->ctx, p);
    if (!skipped(c, p))
        c->n->ops->param_remove(c->n->ctx, p);
}

static zo_status m_full_alloc(void *ctx, zo_param_id p, size_t bytes, void **out)
{
    mctx *c = ctx;
    *out = NULL;
    mbuf *b = calloc(1, sizeof *b);
    if (!b)
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    zo_status s = c->h->ops->full_alloc(c->h->ctx, p, bytes, &b->host);
    if (s) {
        free(b);
        return mfail(c, s, "host: %s", le(c->h));
    }
    if (!skipped(c, p)) {
        /* bytes = W_h * ceil(numel / W_h) * elem >= numel * elem; the NCCL side
         * needs W_n * ceil(numel / W_n) * elem <= (numel + W_n - 1) * elem, so
         * bytes + (W_n - 1) * 64 covers every elem_size (<= 64) */
        size_t nb = bytes;
        nb += (size_t)(c->n_world - 1) * 64u;
        s = c->n->ops->full_alloc(c->n->ctx, p, nb, &b->dev);
        if (s) {
            c->h->ops->full_free(c->h->ctx, p, b->host);
            free(b);
            return mfail(c, s, "nccl: %s", le(c->n));
        }
    }
    b->param = p;
    b->next = c->bufs;
    c->bufs = b;
    *out = b->host;
    return ZO_OK;
}

static mbuf *find_buf(mctx *c, void *host, mbuf ***link)
{
    for (mbuf **l = &c->bufs; *l; l = &(*l)->next)
        if ((*l)->host == host) {
            if (link)
                *link = l;
            return *l;
        }
    return NULL;
}

static void m_full_free(void *ctx, zo_param_id p, void *host)
{
    mctx *c = ctx;
    mbuf **l = NULL;
    mbuf *b = find_buf(c, host, &l);
    c->h->ops->full_free(c->h->ctx, p, host);
    if (!b)
        return;
    if (b->dev)
        c->n->ops->full_free(c->n->ctx, b->param, b->dev);
    *l = b->next;
    free(b);
}

static zo_status m_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out)
{
    mctx *c = ctx;
    *out = NULL;
    mwork *w = calloc(1, sizeof *w + n * sizeof(mitem));
    zo_gather_item *ni = calloc(n ? n : 1, sizeof *ni);
    if (!w || !ni) {
        free(w);
        free(ni);
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        mbuf *b = find_buf(c, items[i].full, NULL);
        w->items[i].param = items[i].param;
        w->items[i].host = items[i].full;
        w->items[i].dev = b ? b->dev : NULL;
        w->items[i].full_bytes = items[i].numel * items[i].elem_size;
        if (b && b->dev) {
            ni[k] = items[i];
            ni[k].full = b->dev;
            ni[k].partition_numel = (items[i].numel + (uint64_t)c->n_world - 1) / (uint64_t)c->n_world;
            k++;
        }
    }
    w->n = n;
    zo_status s = c->h->ops->all_gather_start(c->h->ctx, items, n, &w->hw);
    if (s) {
        free(w);
        free(ni);
        return mfail(c, s, "host: %s", le(c->h));
    }
    if (k) {
        s = c->n->ops->all_gather_start(c->n->ctx, ni, k, &w->nw);
        if (s) {
            c->h->ops->work_free(c->h->ctx, w->hw);
            free(w);
            free(ni);
            return mfail(c, s, "nccl: %s", le(c->n));
        }
    }
    free(ni);
    *out = (zo_work *)w;
    return ZO_OK;
}

/* waits the NCCL side and compares every item once */
static zo_status compare(mctx *c, mwork *w)
{
    if (w->compared)
        return w->verdict;
    w->compared = 1;
    w->verdict = ZO_OK;
    if (w->nw) {
        zo_status s = c->n->ops->wait(c->n->ctx, w->nw);
        if (!s)
            s = zo_nccl_synchronize(c->n);
        if (s)
            return w->verdict = mfail(c, s, "nccl wait: %s", le(c->n));
    }
    for (size_t i = 0; i < w->n; i++) {
        mitem *it = &w->items[i];
        if (!it->dev)
            continue;
        uint64_t nb = it->full_bytes;
        if (c->compare_bytes && nb > c->compare_bytes)
            nb = c->compare_bytes;
        uint64_t hb = zo_host_physical_bytes(c->h, it->full_bytes);
        uint8_t *d = malloc(nb ? nb : 1);
        if (!d)
            return w->verdict = mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
        cudaError_t e = cudaMemcpy(d, it->dev, nb, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            free(d);
            return w->verdict = mfail(c, ZO_ERR_BACKEND, "mirror: cudaMemcpy: %s", cudaGetErrorString(e));
        }
        const uint8_t *h = it->host;
        for (uint64_t j = 0; j < nb; j++) {
            uint8_t want = zo_host_param_byte(it->param, j);
            if (d[j] != want || (j < hb && h[j] != d[j])) {
                c->st.mismatches++;
                mfail(c, ZO_ERR_BACKEND,
                      "mirror: param %u byte %llu: nccl %u, host backend %d, content function %u",
                      (unsigned)it->param, (unsigned long long)j, d[j], j < hb ? (int)h[j] : -1, want);
                if (!c->first[0])
                    snprintf(c->first, sizeof c->first, "%s", c->err);
                w->verdict = ZO_ERR_BACKEND;
                break;
            }
        }
        c->st.compared++;
        c->st.bytes_compared += nb;
        free(d);
    }
    return w->verdict;
}

static zo_status m_wait(void *ctx, zo_work *zw)
{
    mctx *c = ctx;
    mwork *w = (mwork *)zw;
    zo_status s = c->h->ops->wait(c->h->ctx, w->hw);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    return compare(c, w);
}

static zo_status m_query(void *ctx, zo_work *zw, int *done)
{
    mctx *c = ctx;
    mwork *w = (mwork *)zw;
    zo_status s = c->h->ops->query(c->h->ctx, w->hw, done);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    if (*done) {
        s = compare(c, w);
        if (s)
            return s;
    }
    return ZO_OK;
}

static void m_work_free(void *ctx, zo_work *zw)
{
    mctx *c = ctx;
    mwork *w = (mwork *)zw;
    if (!w)
        return;
    c->h->ops->work_free(c->h->ctx, w->hw);
    if (w->nw)
        c->n->ops->work_free(c->n->ctx, w->nw);
    free(w);
}

static zo_status m_reduce_scatter(void *ctx, zo_param_id p, const float *g, float *out, uint64_t numel,
                                  uint64_t part, zo_reduce_op op)
{
    mctx *c = ctx;
    zo_status s = c->h->ops->reduce_scatter(c->h->ctx, p, g, out, numel, part, op);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    if (c->hw_world != c->n_world || skipped(c, p))
        return ZO_OK;
    float *o2 = malloc(part * sizeof *o2);
    if (!o2)
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    s = c->n->ops->reduce_scatter(c->n->ctx, p, g, o2, numel, part, op);
    if (s) {
        free(o2);
        return mfail(c, s, "nccl: %s", le(c->n));
    }
    for (uint64_t i = 0; i < part; i++) {
        float d = o2[i] - out[i], a = out[i] < 0 ? -out[i] : out[i];
        if ((d < 0 ? -d : d) > 1e-5f * a + 1e-6f) {
            c->st.mismatches++;
            s = mfail(c, ZO_ERR_BACKEND, "mirror: reduce_scatter param %u elem %llu: nccl %g, host %g",
                      (unsigned)p, (unsigned long long)i, o2[i], out[i]);
            if (!c->first[0])
                snprintf(c->first, sizeof c->first, "%s", c->err);
            break;
        }
    }
    c->st.rs_compared++;
    free(o2);
    return s;
}

/* exchange: the host backend's answer is returned (the runtime sees the host
 * world); the same exchange runs on NCCL (keeping the communicator's
 * collective order) and every NCCL rank's slot must equal this rank's send
 * (all NCCL ranks run the same scenario). */
static zo_status m_exchange(void *ctx, const void *send, size_t bytes, void *recv)
{
    mctx *c = ctx;
    if (c->h->ops->version < 2u || !c->h->ops->exchange)
        return mfail(c, ZO_ERR_UNSUPPORTED, "mirror: host backend has no exchange");
    zo_status s = c->h->ops->exchange(c->h->ctx, send, bytes, recv);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    if (c->n->ops->version < 2u || !c->n->ops->exchange)
        return ZO_OK;
    uint8_t *r2 = malloc((size_t)c->n_world * bytes);
    if (!r2)
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    s = c->n->ops->exchange(c->n->ctx, send, bytes, r2);
    if (s) {
        free(r2);
        return mfail(c, s, "nccl: %s", le(c->n));
    }
    for (int k = 0; k < c->n_world; k++)
        if (memcmp(r2 + (size_t)k * bytes, send, bytes) != 0) {
            c->st.mismatches++;
            s = mfail(c, ZO_ERR_BACKEND, "mirror: exchange of %zu bytes: NCCL rank %d sent other bytes than this rank",
                      bytes, k);
            if (!c->first[0])
                snprintf(c->first, sizeof c->first, "%s", c->err);
            break;
        }
    c->st.exchanges_compared++;
    free(r2);
    return s;
}

static const char *m_last_error(void *ctx) { return ((mctx *)ctx)->err; }

static void m_destroy(void *ctx)
{
    mctx *c = ctx;
    while (c->bufs) {
        mbuf *b = c->bufs;
        c->bufs = b->next;
        free(b); /* buffers themselves belong to the two backends, freed by them */
    }
    free(c->skip);
    free(c);
}

static const zo_backend_ops mirror_ops = {
    .version = ZO_BACKEND_OPS_VERSION,
    .name = "mirror(host,nccl)",
    .world_size = w_mirror,
    .rank = r_mirror,
    .param_add = m_param_add,
    .param_remove = m_param_remove,
    .full_alloc = m_full_alloc,
    .full_free = m_full_free,
    .all_gather_start = m_all_gather_start,
    .wait = m_wait,
    .query = m_query,
    .work_free = m_work_free,
    .reduce_scatter = m_reduce_scatter,
    .last_error = m_last_error,
    .destroy = m_destroy,
    .exchange = m_exchange,
};

zo_status zo_mirror_create(zo_backend *host, zo_backend *nccl, uint64_t max_nccl_bytes, uint64_t compare_bytes,
                           zo_backend **out)
{
    if (!out || !host || !nccl || !host->ops || !nccl->ops)
        return ZO_ERR_INVALID_ARG;
    *out = NULL;
    mctx *c = calloc(1, sizeof *c);
    if (!c)
        return ZO_ERR_NOMEM;
    c->h = host;
    c->n = nccl;
    c->max_nccl = max_nccl_bytes;
    c->compare_bytes = compare_bytes;
    c->hw_world = host->ops->world_size(host->ctx);
    c->n_world = nccl->ops->world_size(nccl->ctx);
    c->pub.ops = &mirror_ops;
    c->pub.ctx = c;
    *out = &c->pub;
    return ZO_OK;
}

zo_mirror_stats zo_mirror_get_stats(const zo_backend *b)
{
    zo_mirror_stats z;
    memset(&z, 0, sizeof z);
    if (!b || b->ops != &mirror_ops)
        return z;
    return ((const mctx *)b->ctx)->st;
}

const char *zo_mirror_first_mismatch(const zo_backend *b)
{
    if (!b || b->ops != &mirror_ops)
        return "";
    return ((const mctx *)b->ctx)->first;
}
