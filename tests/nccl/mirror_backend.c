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
    struct mwork *next;
    size_t n;
    mitem items[];
} mwork;

/* The hooks' state (zo_backend_wrap around the host backend). */
typedef struct mctx {
    zo_backend *h, *n;
    uint64_t max_nccl, compare_bytes;
    int hw_world, n_world;
    mbuf *bufs;    /* live full buffers (few: a list is enough) */
    mwork *works;  /* live works, by host work */
    uint8_t *skip; /* per param id: 1 = host only */
    size_t skip_cap;
    zo_mirror_stats st;
    char err[512], first[512];
} mctx;

#define MIRROR_NAME "mirror(host,nccl)"

static zo_status mfail(mctx *c, zo_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return s;
}

static const char *le(zo_backend *b) { return zo_backend_last_error(b); }

static int skipped(mctx *c, zo_param_id p) { return (size_t)p < c->skip_cap && c->skip[p]; }

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

/* after the host backend's param_add */
static zo_status param_add_nccl(mctx *c, zo_wrap_call *k) {
    zo_param_id p = k->param;
    if ((size_t)p >= c->skip_cap) {
        size_t ncap = c->skip_cap ? c->skip_cap : 256;
        while (ncap <= (size_t)p) ncap *= 2;
        uint8_t *n = realloc(c->skip, ncap);
        if (!n) {
            zo_backend_param_remove(c->h, p);
            return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
        }
        memset(n + c->skip_cap, 0, ncap - c->skip_cap);
        c->skip = n;
        c->skip_cap = ncap;
    }
    uint64_t npart = (k->numel + (uint64_t)c->n_world - 1) / (uint64_t)c->n_world;
    uint64_t padded = npart * (uint64_t)c->n_world * k->elem_size;
    c->skip[p] = c->max_nccl && padded > c->max_nccl;
    if (c->skip[p]) {
        c->st.skipped_large++;
        return ZO_OK;
    }
    zo_status s = zo_backend_param_add(c->n, p, k->numel, k->elem_size, npart);
    if (s) {
        zo_backend_param_remove(c->h, p);
        return mfail(c, s, "nccl: %s", le(c->n));
    }
    return ZO_OK;
}

/* after the host backend's full_alloc */
static zo_status full_alloc_nccl(mctx *c, zo_wrap_call *k) {
    mbuf *b = calloc(1, sizeof *b);
    if (!b) {
        zo_backend_full_free(c->h, k->param, k->buf);
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    }
    if (!skipped(c, k->param)) {
        /* bytes = W_h * ceil(numel / W_h) * elem >= numel * elem; the NCCL side
         * needs W_n * ceil(numel / W_n) * elem <= (numel + W_n - 1) * elem, so
         * bytes + (W_n - 1) * 64 covers every elem_size (<= 64) */
        size_t nb = k->bytes;
        nb += (size_t)(c->n_world - 1) * 64u;
        zo_status s = zo_backend_full_alloc(c->n, k->param, nb, &b->dev);
        if (s) {
            zo_backend_full_free(c->h, k->param, k->buf);
            free(b);
            return mfail(c, s, "nccl: %s", le(c->n));
        }
    }
    b->host = k->buf;
    b->param = k->param;
    b->next = c->bufs;
    c->bufs = b;
    return ZO_OK;
}

/* after the host backend accepted the group: the same items on NCCL */
static zo_status gather_nccl(mctx *c, zo_wrap_call *k) {
    size_t n = k->n;
    mwork *w = calloc(1, sizeof *w + n * sizeof(mitem));
    zo_gather_item *ni = calloc(n ? n : 1, sizeof *ni);
    if (!w || !ni) {
        free(w);
        free(ni);
        zo_backend_work_free(c->h, k->work);
        return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const zo_gather_item *it = &k->items[i];
        mbuf *b = find_buf(c, it->full, NULL);
        w->items[i].param = it->param;
        w->items[i].host = it->full;
        w->items[i].dev = b ? b->dev : NULL;
        w->items[i].full_bytes = it->numel * it->elem_size;
        if (b && b->dev) {
            ni[m] = *it;
            ni[m].full = b->dev;
            ni[m].partition_numel = (it->numel + (uint64_t)c->n_world - 1) / (uint64_t)c->n_world;
            m++;
        }
    }
    w->n = n;
    w->hw = k->work;
    if (m) {
        zo_status s = zo_backend_all_gather_start(c->n, ni, m, &w->nw);
        if (s) {
            zo_backend_work_free(c->h, k->work);
            free(w);
            free(ni);
            return mfail(c, s, "nccl: %s", le(c->n));
        }
    }
    free(ni);
    w->next = c->works;
    c->works = w;
    return ZO_OK;
}

/* waits the NCCL side and compares every item once */
static zo_status compare(mctx *c, mwork *w) {
    if (w->compared) return w->verdict;
    w->compared = 1;
    w->verdict = ZO_OK;
    if (w->nw) {
        zo_status s = zo_backend_wait(c->n, w->nw);
        if (!s) s = zo_nccl_synchronize(c->n);
        if (s) return w->verdict = mfail(c, s, "nccl wait: %s", le(c->n));
    }
    for (size_t i = 0; i < w->n; i++) {
        mitem *it = &w->items[i];
        if (!it->dev) continue;
        uint64_t nb = it->full_bytes;
        if (c->compare_bytes && nb > c->compare_bytes) nb = c->compare_bytes;
        uint64_t hb = zo_host_physical_bytes(c->h, it->full_bytes);
        uint8_t *d = malloc(nb ? nb : 1);
        if (!d) return w->verdict = mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
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
                mfail(c, ZO_ERR_BACKEND, "mirror: param %u byte %llu: nccl %u, host backend %d, content function %u",
                      (unsigned)it->param, (unsigned long long)j, d[j], j < hb ? (int)h[j] : -1, want);
                if (!c->first[0]) snprintf(c->first, sizeof c->first, "%s", c->err);
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

/* after the host backend's reduce-scatter: the same on NCCL when the
 * worlds are equal, outputs compared */
static zo_status reduce_scatter_nccl(mctx *c, zo_wrap_call *k) {
    zo_param_id p = k->param;
    uint64_t part = k->partition_numel;
    if (c->hw_world != c->n_world || skipped(c, p)) return ZO_OK;
    float *o2 = malloc(part * sizeof *o2);
    if (!o2) return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    zo_status s = zo_backend_reduce_scatter(c->n, p, k->grad, o2, k->numel, part, k->reduce_op);
    if (s) {
        free(o2);
        return mfail(c, s, "nccl: %s", le(c->n));
    }
    const float *out = k->shard;
    for (uint64_t i = 0; i < part; i++) {
        float d = o2[i] - out[i], a = out[i] < 0 ? -out[i] : out[i];
        if ((d < 0 ? -d : d) > 1e-5f * a + 1e-6f) {
            c->st.mismatches++;
            s = mfail(c, ZO_ERR_BACKEND, "mirror: reduce_scatter param %u elem %llu: nccl %g, host %g", (unsigned)p,
                      (unsigned long long)i, o2[i], out[i]);
            if (!c->first[0]) snprintf(c->first, sizeof c->first, "%s", c->err);
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
static zo_status exchange_nccl(mctx *c, zo_wrap_call *k) {
    if (c->n->ops->version < 2u || !c->n->ops->exchange) return ZO_OK;
    size_t bytes = k->bytes;
    uint8_t *r2 = malloc((size_t)c->n_world * bytes);
    if (!r2) return mfail(c, ZO_ERR_NOMEM, "mirror: out of memory");
    zo_status s = zo_backend_exchange(c->n, k->send, bytes, r2);
    if (s) {
        free(r2);
        return mfail(c, s, "nccl: %s", le(c->n));
    }
    for (int r = 0; r < c->n_world; r++)
        if (memcmp(r2 + (size_t)r * bytes, k->send, bytes) != 0) {
            c->st.mismatches++;
            s = mfail(c, ZO_ERR_BACKEND, "mirror: exchange of %zu bytes: NCCL rank %d sent other bytes than this rank",
                      bytes, r);
            if (!c->first[0]) snprintf(c->first, sizeof c->first, "%s", c->err);
            break;
        }
    c->st.exchanges_compared++;
    free(r2);
    return s;
}

static zo_status m_before(void *user, zo_wrap_call *k) {
    (void)k;
    ((mctx *)user)->err[0] = 0;
    return ZO_OK;
}

/* the host backend did the op (st); now the NCCL backend */
static zo_status m_after(void *user, zo_wrap_call *k, zo_status st) {
    mctx *c = user;
    if (st != ZO_OK) return mfail(c, st, "host: %s", le(c->h));
    switch (k->op) {
    case ZO_WRAP_PARAM_ADD: return param_add_nccl(c, k);
    case ZO_WRAP_PARAM_REMOVE:
        if (!skipped(c, k->param)) zo_backend_param_remove(c->n, k->param);
        return ZO_OK;
    case ZO_WRAP_FULL_ALLOC: return full_alloc_nccl(c, k);
    case ZO_WRAP_FULL_FREE: {
        mbuf **l = NULL;
        mbuf *b = find_buf(c, k->buf, &l);
        if (b) {
            if (b->dev) zo_backend_full_free(c->n, b->param, b->dev);
            *l = b->next;
            free(b);
        }
        return ZO_OK;
    }
    case ZO_WRAP_ALL_GATHER_START: return gather_nccl(c, k);
    case ZO_WRAP_WAIT:
    case ZO_WRAP_QUERY: {
        mwork *w = find_work(c, k->work, NULL);
        return w && (k->op == ZO_WRAP_WAIT || k->done) ? compare(c, w) : ZO_OK;
    }
    case ZO_WRAP_WORK_FREE: {
        mwork **l = NULL;
        mwork *w = find_work(c, k->work, &l);
        if (w) {
            if (w->nw) zo_backend_work_free(c->n, w->nw);
            *l = w->next;
            free(w);
        }
        return ZO_OK;
    }
    case ZO_WRAP_REDUCE_SCATTER: return reduce_scatter_nccl(c, k);
    case ZO_WRAP_EXCHANGE: return exchange_nccl(c, k);
    default: return ZO_OK;
    }
}

static const char *m_last_error(void *user) { return ((mctx *)user)->err; }

static void m_destroy(void *user) {
    mctx *c = user;
    while (c->bufs) {
        mbuf *b = c->bufs;
        c->bufs = b->next;
        free(b); /* buffers themselves belong to the two backends, freed by them */
    }
    while (c->works) {
        mwork *w = c->works;
        c->works = w->next;
        free(w);
    }
    free(c->skip);
    free(c);
}

zo_status zo_mirror_create(zo_backend *host, zo_backend *nccl, uint64_t max_nccl_bytes, uint64_t compare_bytes,
                           zo_backend **out) {
    if (!out || !host || !nccl || !host->ops || !nccl->ops) return ZO_ERR_INVALID_ARG;
    *out = NULL;
    mctx *c = calloc(1, sizeof *c);
    if (!c) return ZO_ERR_NOMEM;
    c->h = host;
    c->n = nccl;
    c->max_nccl = max_nccl_bytes;
    c->compare_bytes = compare_bytes;
    c->hw_world = host->ops->world_size(host->ctx);
    c->n_world = nccl->ops->world_size(nccl->ctx);
    zo_wrap_hooks hk = {.user = c,
                        .name = MIRROR_NAME,
                        .before = m_before,
                        .after = m_after,
                        .last_error = m_last_error,
                        .destroy = m_destroy};
    zo_status s = zo_backend_wrap(host, &hk, out);
    if (s) free(c);
    return s;
}

/* the mirror's state, or NULL for anything else */
static const mctx *mirror_of(const zo_backend *b) {
    return b && b->ops && b->ops->name && !strcmp(b->ops->name, MIRROR_NAME) ? zo_backend_wrap_user(b) : NULL;
}

zo_mirror_stats zo_mirror_get_stats(const zo_backend *b) {
    zo_mirror_stats z;
    memset(&z, 0, sizeof z);
    const mctx *c = mirror_of(b);
    return c ? c->st : z;
}

const char *zo_mirror_first_mismatch(const zo_backend *b) {
    const mctx *c = mirror_of(b);
    return c ? c->first : "";
}
