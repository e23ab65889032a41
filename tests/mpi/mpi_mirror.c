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
    struct mwork *next;
    size_t n;
    mitem items[];
} mwork;

/* The hooks' state (zo_backend_wrap around the host backend). */
typedef struct mctx {
    zo_backend *h, *m;
    mbuf *bufs;
    mwork *works;
    zo_mpi_mirror_stats st;
    char err[512], first[512];
} mctx;

static zo_status mfail(mctx *c, zo_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return s;
}

static mbuf *find_buf(mctx *c, void *host, mbuf ***link) {
    for (mbuf **l = &c->bufs; *l; l = &(*l)->next)
        if ((*l)->host == host) {
            if (link) *link = l;
            return *l;
        }
    return NULL;
}

static mwork *find_work(mctx *c, zo_work *hw, mwork ***link) {
    for (mwork **l = &c->works; *l; l = &(*l)->next)
        if ((*l)->hw == hw) {
            if (link) *link = l;
            return *l;
        }
    return NULL;
}

/* the same all-gather on the MPI backend, after the host backend accepted it
 * (a bad group issues no MPI collective) */
static zo_status gather_mpi(mctx *c, zo_wrap_call *k) {
    size_t n = k->n;
    mwork *w = calloc(1, sizeof *w + n * sizeof(mitem));
    zo_gather_item *mi = calloc(n ? n : 1, sizeof *mi);
    if (!w || !mi) {
        free(w);
        free(mi);
        zo_backend_work_free(c->h, k->work);
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    }
    int W = c->h->ops->world_size(c->h->ctx);
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &k->items[i];
        mbuf *b = find_buf(c, it->full, NULL);
        w->items[i].param = it->param;
        w->items[i].host = it->full;
        w->items[i].mpi = b ? b->mpi : NULL;
        w->items[i].full_bytes = it->numel * it->elem_size;
        w->items[i].padded_bytes = it->partition_numel * it->elem_size * (uint64_t)W;
        mi[i] = *it;
        mi[i].full = b ? b->mpi : NULL; /* NULL: the MPI backend rejects it (a foreign buffer) */
    }
    w->n = n;
    w->hw = k->work;
    zo_status s = zo_backend_all_gather_start(c->m, mi, n, &w->mw);
    free(mi);
    if (s) {
        zo_backend_work_free(c->h, k->work);
        free(w);
        return mfail(c, s, "mpi: %s", zo_backend_last_error(c->m));
    }
    w->next = c->works;
    c->works = w;
    return ZO_OK;
}

/* waits the MPI side and compares every item once */
static zo_status compare(mctx *c, mwork *w) {
    if (w->compared) return w->verdict;
    w->compared = 1;
    w->verdict = ZO_OK;
    zo_status s = zo_backend_wait(c->m, w->mw);
    if (s) return w->verdict = mfail(c, s, "mpi wait: %s", zo_backend_last_error(c->m));
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
                if (!c->first[0]) snprintf(c->first, sizeof c->first, "%s", c->err);
                w->verdict = ZO_ERR_BACKEND;
                break;
            }
        }
        c->st.compared++;
        c->st.bytes_compared += hb;
    }
    return w->verdict;
}

static zo_status reduce_scatter_mpi(mctx *c, zo_wrap_call *k) {
    uint64_t part = k->partition_numel;
    float *o2 = malloc((part ? part : 1) * sizeof *o2);
    if (!o2) return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    zo_status s = zo_backend_reduce_scatter(c->m, k->param, k->grad, o2, k->numel, part, k->reduce_op);
    if (s) {
        free(o2);
        return mfail(c, s, "mpi: %s", zo_backend_last_error(c->m));
    }
    const float *out = k->shard;
    for (uint64_t i = 0; i < part; i++) {
        float d = o2[i] - out[i], a = out[i] < 0 ? -out[i] : out[i];
        if ((d < 0 ? -d : d) > 1e-5f * a + 1e-6f) {
            c->st.mismatches++;
            s = mfail(c, ZO_ERR_BACKEND, "mirror: reduce_scatter param %u elem %llu: mpi %g, host %g",
                      (unsigned)k->param, (unsigned long long)i, (double)o2[i], (double)out[i]);
            if (!c->first[0]) snprintf(c->first, sizeof c->first, "%s", c->err);
            break;
        }
    }
    c->st.rs_compared++;
    free(o2);
    return s;
}

/* exchange goes to the MPI backend only (the cross-process collective) */
static zo_status mm_before(void *user, zo_wrap_call *k) {
    mctx *c = user;
    c->err[0] = 0;
    if (k->op != ZO_WRAP_EXCHANGE) return ZO_OK;
    k->skip_inner = 1;
    c->st.exchanges++;
    zo_status s = zo_backend_exchange(c->m, k->send, k->bytes, k->recv);
    return s ? mfail(c, s, "mpi: %s", zo_backend_last_error(c->m)) : ZO_OK;
}

/* every other op: the host backend did it (st); now the MPI backend */
static zo_status mm_after(void *user, zo_wrap_call *k, zo_status st) {
    mctx *c = user;
    if (st != ZO_OK) return mfail(c, st, "host: %s", zo_backend_last_error(c->h));
    switch (k->op) {
    case ZO_WRAP_PARAM_ADD: {
        zo_status s = zo_backend_param_add(c->m, k->param, k->numel, k->elem_size, k->partition_numel);
        if (s) {
            zo_backend_param_remove(c->h, k->param);
            return mfail(c, s, "mpi: %s", zo_backend_last_error(c->m));
        }
        return ZO_OK;
    }
    case ZO_WRAP_PARAM_REMOVE: zo_backend_param_remove(c->m, k->param); return ZO_OK;
    case ZO_WRAP_FULL_ALLOC: {
        mbuf *b = calloc(1, sizeof *b);
        zo_status s = b ? zo_backend_full_alloc(c->m, k->param, k->bytes, &b->mpi) : ZO_ERR_NOMEM;
        if (s) {
            zo_backend_full_free(c->h, k->param, k->buf);
            free(b);
            return b ? mfail(c, s, "mpi: %s", zo_backend_last_error(c->m)) : mfail(c, s, "mirror: out of memory");
        }
        b->host = k->buf;
        b->param = k->param;
        b->next = c->bufs;
        c->bufs = b;
        return ZO_OK;
    }
    case ZO_WRAP_FULL_FREE: {
        mbuf **l = NULL;
        mbuf *b = find_buf(c, k->buf, &l);
        if (b) {
            zo_backend_full_free(c->m, b->param, b->mpi);
            *l = b->next;
            free(b);
        }
        return ZO_OK;
    }
    case ZO_WRAP_ALL_GATHER_START: return gather_mpi(c, k);
    case ZO_WRAP_WAIT:
    case ZO_WRAP_QUERY: {
        mwork *w = find_work(c, k->work, NULL);
        return w && (k->op == ZO_WRAP_WAIT || k->done) ? compare(c, w) : ZO_OK;
    }
    case ZO_WRAP_WORK_FREE: {
        mwork **l = NULL;
        mwork *w = find_work(c, k->work, &l);
        if (w) {
            zo_backend_work_free(c->m, w->mw); /* waits if still pending (MPI rule) */
            *l = w->next;
            free(w);
        }
        return ZO_OK;
    }
    case ZO_WRAP_REDUCE_SCATTER: return reduce_scatter_mpi(c, k);
    default: return ZO_OK;
    }
}

static const char *mm_last_error(void *user) { return ((mctx *)user)->err; }

static void mm_destroy(void *user) {
    mctx *c = user;
    while (c->bufs) {
        mbuf *b = c->bufs;
        c->bufs = b->next;
        free(b); /* the buffers belong to the two backends */
    }
    while (c->works) {
        mwork *w = c->works;
        c->works = w->next;
        free(w);
    }
    free(c);
}

zo_status zo_mpi_mirror_create(zo_backend *host, zo_backend *mpi, zo_backend **out) {
    if (!out) return ZO_ERR_INVALID_ARG;
    *out = NULL;
    if (!host || !mpi || !host->ops || !mpi->ops ||
        host->ops->world_size(host->ctx) != mpi->ops->world_size(mpi->ctx) ||
        host->ops->rank(host->ctx) != mpi->ops->rank(mpi->ctx) || mpi->ops->version < 2u || !mpi->ops->exchange)
        return ZO_ERR_INVALID_ARG;
    mctx *c = calloc(1, sizeof *c);
    if (!c) return ZO_ERR_NOMEM;
    c->h = host;
    c->m = mpi;
    zo_wrap_hooks hk = {.user = c,
                        .name = "mirror(host,mpi)",
                        .before = mm_before,
                        .after = mm_after,
                        .last_error = mm_last_error,
                        .destroy = mm_destroy,
                        .all_ops = 1};
    zo_status s = zo_backend_wrap(host, &hk, out);
    if (s) free(c);
    return s;
}

/* the mirror's state, or NULL for anything else */
static const mctx *mirror_of(const zo_backend *b) {
    return b && b->ops && b->ops->name && !strcmp(b->ops->name, "mirror(host,mpi)") ? zo_backend_wrap_user(b) : NULL;
}

void zo_mpi_mirror_destroy(zo_backend *b) {
    if (mirror_of(b)) zo_backend_destroy(b);
}

zo_mpi_mirror_stats zo_mpi_mirror_get_stats(const zo_backend *b) {
    zo_mpi_mirror_stats z;
    memset(&z, 0, sizeof z);
    const mctx *c = mirror_of(b);
    return c ? c->st : z;
}

const char *zo_mpi_mirror_first_mismatch(const zo_backend *b) {
    const mctx *c = mirror_of(b);
    return c ? c->first : "";
}
