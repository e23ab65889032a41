/*
 * mpi_mirror.c - host backend + MPI backend side by side, compared at every
 * completed all-gather (see mpi_mirror.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_mirror.h"
#include "zoffload_mpi.h"
#include "zoffload_testing.h"

typedef struct mbuf {
    void *host, *mpi;
    zo_param_id param;
    struct mbuf *next;
} mbuf;

typedef struct mitem {
    zo_param_id param;
    void *host, *mpi;
    uint64_t full_bytes, padded_bytes;
} mitem;

typedef struct mwork {
    zo_work *hw, *mw;
    int compared;
    zo_status verdict;
    size_t n;
    mitem items[];
} mwork;

typedef struct mctx {
    zo_backend pub;
    zo_backend *h, *m;
    mbuf *bufs;
    zo_mpi_mirror_stats st;
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

static int mm_world(void *ctx) { return ((mctx *)ctx)->h->ops->world_size(((mctx *)ctx)->h->ctx); }
static int mm_rank(void *ctx) { return ((mctx *)ctx)->h->ops->rank(((mctx *)ctx)->h->ctx); }

static zo_status mm_param_add(void *ctx, zo_param_id p, uint64_t numel, uint32_t es, uint64_t part)
{
    mctx *c = ctx;
    zo_status s = c->h->ops->param_add(c->h->ctx, p, numel, es, part);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    s = c->m->ops->param_add(c->m->ctx, p, numel, es, part);
    if (s) {
        c->h->ops->param_remove(c->h->ctx, p);
        return mfail(c, s, "mpi: %s", le(c->m));
    }
    return ZO_OK;
}

static void mm_param_remove(void *ctx, zo_param_id p)
{
    mctx *c = ctx;
    c->h->ops->param_remove(c->h->ctx, p);
    c->m->ops->param_remove(c->m->ctx, p);
}

static zo_status mm_full_alloc(void *ctx, zo_param_id p, size_t bytes, void **out)
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
    s = c->m->ops->full_alloc(c->m->ctx, p, bytes, &b->mpi);
    if (s) {
        c->h->ops->full_free(c->h->ctx, p, b->host);
        free(b);
        return mfail(c, s, "mpi: %s", le(c->m));
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

static void mm_full_free(void *ctx, zo_param_id p, void *host)
{
    mctx *c = ctx;
    mbuf **l = NULL;
    mbuf *b = find_buf(c, host, &l);
    c->h->ops->full_free(c->h->ctx, p, host);
    if (!b)
        return;
    c->m->ops->full_free(c->m->ctx, b->param, b->mpi);
    *l = b->next;
    free(b);
}

static zo_status mm_all_gather_start(void *ctx, const zo_gather_item *items, size_t n, zo_work **out)
{
    mctx *c = ctx;
    *out = NULL;
    mwork *w = calloc(1, sizeof *w + n * sizeof(mitem));
    zo_gather_item *mi = calloc(n ? n : 1, sizeof *mi);
    if (!w || !mi) {
        free(w);
        free(mi);
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        mbuf *b = find_buf(c, items[i].full, NULL);
        w->items[i].param = items[i].param;
        w->items[i].host = items[i].full;
        w->items[i].mpi = b ? b->mpi : NULL;
        w->items[i].full_bytes = items[i].numel * items[i].elem_size;
        w->items[i].padded_bytes =
            items[i].partition_numel * items[i].elem_size * (uint64_t)mm_world(ctx);
        mi[i] = items[i];
        mi[i].full = b ? b->mpi : NULL; /* NULL: the MPI backend rejects it (a foreign buffer) */
    }
    w->n = n;
    /* the host backend validates first: a bad group issues no MPI collective */
    zo_status s = c->h->ops->all_gather_start(c->h->ctx, items, n, &w->hw);
    if (s) {
        free(w);
        free(mi);
        return mfail(c, s, "host: %s", le(c->h));
    }
    s = c->m->ops->all_gather_start(c->m->ctx, mi, n, &w->mw);
    free(mi);
    if (s) {
        c->h->ops->work_free(c->h->ctx, w->hw);
        free(w);
        return mfail(c, s, "mpi: %s", le(c->m));
    }
    *out = (zo_work *)w;
    return ZO_OK;
}

/* waits the MPI side and compares every item once */
static zo_status compare(mctx *c, mwork *w)
{
    if (w->compared)
        return w->verdict;
    w->compared = 1;
    w->verdict = ZO_OK;
    zo_status s = c->m->ops->wait(c->m->ctx, w->mw);
    if (s)
        return w->verdict = mfail(c, s, "mpi wait: %s", le(c->m));
    for (size_t i = 0; i < w->n; i++) {
        mitem *it = &w->items[i];
        uint64_t hb = zo_host_physical_bytes(c->h, it->padded_bytes);
        uint64_t mb = zo_mpi_physical_bytes(c->m, it->padded_bytes);
        if (hb != mb) {
            c->st.mismatches++;
            w->verdict = mfail(c, ZO_ERR_BACKEND, "mirror: param %u: host moves %llu bytes, mpi %llu",
                               (unsigned)it->param, (unsigned long long)hb, (unsigned long long)mb);
            continue;
        }
        const uint8_t *h = it->host, *d = it->mpi;
        for (uint64_t j = 0; j < hb; j++) {
            uint8_t want = j < it->full_bytes ? zo_host_param_byte(it->param, j) : 0;
            if (d[j] != want || h[j] != d[j]) {
                c->st.mismatches++;
                mfail(c, ZO_ERR_BACKEND,
                      "mirror: param %u byte %llu of %llu: mpi %u, host backend %u, content function %u",
                      (unsigned)it->param, (unsigned long long)j, (unsigned long long)hb, d[j], h[j], want);
                if (!c->first[0])
                    snprintf(c->first, sizeof c->first, "%s", c->err);
                w->verdict = ZO_ERR_BACKEND;
                break;
            }
        }
        c->st.compared++;
        c->st.bytes_compared += hb;
    }
    return w->verdict;
}

static zo_status mm_wait(void *ctx, zo_work *zw)
{
    mctx *c = ctx;
    mwork *w = (mwork *)zw;
    zo_status s = c->h->ops->wait(c->h->ctx, w->hw);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    return compare(c, w);
}

static zo_status mm_query(void *ctx, zo_work *zw, int *done)
{
    mctx *c = ctx;
    mwork *w = (mwork *)zw;
    zo_status s = c->h->ops->query(c->h->ctx, w->hw, done);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    if (*done)
        return compare(c, w);
    return ZO_OK;
}

static void mm_work_free(void *ctx, zo_work *zw)
{
    mctx *c = ctx;
    mwork *w = (mwork *)zw;
    if (!w)
        return;
    c->h->ops->work_free(c->h->ctx, w->hw);
    c->m->ops->work_free(c->m->ctx, w->mw); /* waits if still pending (MPI rule) */
    free(w);
}

static zo_status mm_reduce_scatter(void *ctx, zo_param_id p, const float *g, float *out, uint64_t numel,
                                   uint64_t part, zo_reduce_op op)
{
    mctx *c = ctx;
    zo_status s = c->h->ops->reduce_scatter(c->h->ctx, p, g, out, numel, part, op);
    if (s)
        return mfail(c, s, "host: %s", le(c->h));
    float *o2 = malloc((part ? part : 1) * sizeof *o2);
    if (!o2)
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    s = c->m->ops->reduce_scatter(c->m->ctx, p, g, o2, numel, part, op);
    if (s) {
        free(o2);
        return mfail(c, s, "mpi: %s", le(c->m));
    }
    for (uint64_t i = 0; i < part; i++) {
        float d = o2[i] - out[i], a = out[i] < 0 ? -out[i] : out[i];
        if ((d < 0 ? -d : d) > 1e-5f * a + 1e-6f) {
            c->st.mismatches++;
            s = mfail(c, ZO_ERR_BACKEND, "mirror: reduce_scatter param %u elem %llu: mpi %g, host %g", (unsigned)p,
                      (unsigned long long)i, (double)o2[i], (double)out[i]);
            if (!c->first[0])
                snprintf(c->first, sizeof c->first, "%s", c->err);
            break;
        }
    }
    c->st.rs_compared++;
    free(o2);
    return s;
}

static zo_status mm_exchange(void *ctx, const void *send, size_t bytes, void *recv)
{
    mctx *c = ctx;
    c->st.exchanges++;
    zo_status s = c->m->ops->exchange(c->m->ctx, send, bytes, recv);
    return s ? mfail(c, s, "mpi: %s", le(c->m)) : ZO_OK;
}

static const char *mm_last_error(void *ctx) { return ((mctx *)ctx)->err; }

static void mm_destroy(void *ctx)
{
    mctx *c = ctx;
    while (c->bufs) {
        mbuf *b = c->bufs;
        c->bufs = b->next;
        free(b); /* the buffers belong to the two backends */
    }
    free(c);
}

static const zo_backend_ops mirror_ops = {
    .version = ZO_BACKEND_OPS_VERSION,
    .name = "mirror(host,mpi)",
    .world_size = mm_world,
    .rank = mm_rank,
    .param_add = mm_param_add,
    .param_remove = mm_param_remove,
    .full_alloc = mm_full_alloc,
    .full_free = mm_full_free,
    .all_gather_start = mm_all_gather_start,
    .wait = mm_wait,
    .query = mm_query,
    .work_free = mm_work_free,
    .reduce_scatter = mm_reduce_scatter,
    .last_error = mm_last_error,
    .destroy = mm_destroy,
    .exchange = mm_exchange,
};

zo_status zo_mpi_mirror_create(zo_backend *host, zo_backend *mpi, zo_backend **out)
{
    if (!out)
        return ZO_ERR_INVALID_ARG;
    *out = NULL;
    if (!host || !mpi || !host->ops || !mpi->ops || host->ops->world_size(host->ctx) != mpi->ops->world_size(mpi->ctx) ||
        host->ops->rank(host->ctx) != mpi->ops->rank(mpi->ctx) || mpi->ops->version < 2u || !mpi->ops->exchange)
        return ZO_ERR_INVALID_ARG;
    mctx *c = calloc(1, sizeof *c);
    if (!c)
        return ZO_ERR_NOMEM;
    c->h = host;
    c->m = mpi;
    c->pub.ops = &mirror_ops;
    c->pub.ctx = c;
    *out = &c->pub;
    return ZO_OK;
}

void zo_mpi_mirror_destroy(zo_backend *b)
{
    if (b && b->ops == &mirror_ops)
        zo_backend_destroy(b);
}

zo_mpi_mirror_stats zo_mpi_mirror_get_stats(const zo_backend *b)
{
    zo_mpi_mirror_stats z;
    memset(&z, 0, sizeof z);
    if (!b || b->ops != &mirror_ops)
        return z;
    return ((const mctx *)b->ctx)->st;
}

const char *zo_mpi_mirror_first_mismatch(const zo_backend *b)
{
    if (!b || b->ops != &mirror_ops)
        return "";
    return ((const mctx *)b->ctx)->first;
}
