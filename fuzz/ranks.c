/*
 * ranks.c - rank edits: their rules and each rank's program.
 *
 * An all-ranks scenario holds one base program and the rank edits that
 * change one rank's copy of it (scenario.h, "Per-rank programs").  This
 * file builds rank r's program from them (zs_scenario_for_rank: the edits
 * of one pass applied by mat_pass) and says which edits are valid
 * (zs_edit_check: an edit is valid if the pass it changes, materialised
 * with it and the edits before it, is a valid pass).  The codec draws
 * edits from the candidate lists below (zs_route_scan,
 * zs_raise_candidates) and keeps the ones zs_edit_check accepts.
 */
#include "ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void zs_mtree_free(zs_mtree *t) {
    free(t->nkids);
    memset(t, 0, sizeof *t);
}

static int same_shape(const zs_scenario *s, const zs_mtree *t, unsigned a, unsigned b) {
    if ((s->mod[a].flags & ZS_MOD_Z3_LEAF) != (s->mod[b].flags & ZS_MOD_Z3_LEAF)) return 0;
    if (t->nkids[a] != t->nkids[b]) return 0;
    for (unsigned k = 0; k < t->nkids[a]; k++)
        if (t->cls[t->kid[t->first[a] + k]] != t->cls[t->kid[t->first[b] + k]]) return 0;
    return 1;
}

int zs_mtree_build(const zs_scenario *s, zs_mtree *t) {
    unsigned n = s->n_modules <= ZS_MAX_MODULES ? s->n_modules : ZS_MAX_MODULES;
    memset(t, 0, sizeof *t);
    uint32_t *a = calloc((size_t)5 * (n ? n : 1), sizeof *a);
    if (!a) return -1;
    t->n = n;
    t->nkids = a;
    t->first = a + n;
    t->kid = a + 2 * (size_t)n;
    t->crank = a + 3 * (size_t)n;
    t->cls = a + 4 * (size_t)n;
    for (unsigned m = 1; m < n; m++) {
        unsigned p = s->mod[m].parent;
        if (p < m) t->crank[m] = t->nkids[p]++;
    }
    unsigned off = 0;
    for (unsigned m = 0; m < n; m++) {
        t->first[m] = (uint32_t)off;
        off += t->nkids[m];
    }
    for (unsigned m = 1; m < n; m++) {
        unsigned p = s->mod[m].parent;
        if (p < m) t->kid[t->first[p] + t->crank[m]] = (zs_id)m;
    }
    /* bottom-up (children have larger ids): same class iff same z3_leaf
     * flag and children of the same classes in the same order */
    for (unsigned m = n; m-- > 0;) {
        t->cls[m] = (zs_id)m;
        for (unsigned j = m + 1; j < n; j++)
            if (t->cls[j] == j && same_shape(s, t, m, j)) {
                t->cls[m] = (zs_id)j;
                break;
            }
    }
    return 0;
}

/* Facts about the calls of a base pass. */
typedef struct pinfo {
    unsigned n;
    uint32_t *end; /* last call of c's subtree (pre-order); one allocation with: */
    uint8_t *ckpt; /* c or an ancestor call is checkpointed */
    uint8_t *unw;  /* c is unwound in the base pass */
} pinfo;

static void pinfo_free(pinfo *pi) {
    free(pi->end);
    memset(pi, 0, sizeof *pi);
}

/* Bytes of the arrays of p's pinfo. */
static size_t pinfo_bytes(const zs_pass *p) {
    unsigned n = p->n_calls <= ZS_MAX_CALLS ? p->n_calls : ZS_MAX_CALLS;
    size_t nn = n ? n : 1;
    return nn * (sizeof(uint32_t) + 2);
}

static void pinfo_fill(const zs_pass *p, pinfo *pi, void *mem);

/* 0, or -1 if out of memory (pi empty then). */
static int pinfo_build(const zs_pass *p, pinfo *pi) {
    memset(pi, 0, sizeof *pi);
    void *mem = malloc(pinfo_bytes(p));
    if (!mem) return -1;
    pinfo_fill(p, pi, mem);
    return 0;
}

/* pi for p with its arrays in mem (pinfo_bytes(p) bytes, 4-byte aligned). */
static void pinfo_fill(const zs_pass *p, pinfo *pi, void *mem) {
    unsigned n = p->n_calls <= ZS_MAX_CALLS ? p->n_calls : ZS_MAX_CALLS;
    memset(pi, 0, sizeof *pi);
    size_t nn = n ? n : 1;
    pi->end = mem;
    pi->ckpt = (uint8_t *)(pi->end + nn);
    pi->unw = pi->ckpt + nn;
    pi->n = n;
    for (unsigned c = 0; c < n; c++) pi->end[c] = (uint32_t)c;
    for (unsigned c = n; c-- > 1;) {
        unsigned par = p->calls[c].parent;
        if (par < c && pi->end[c] > pi->end[par]) pi->end[par] = pi->end[c];
    }
    for (unsigned c = 0; c < n; c++) {
        unsigned par = p->calls[c].parent;
        pi->ckpt[c] = (p->calls[c].flags & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE)) || (c > 0 && par < c && pi->ckpt[par]);
    }
    /* a raising call whose body completed unwinds itself and its ancestors
     * below the catcher; descendants (larger indices) go first */
    memset(pi->unw, 0, nn);
    for (unsigned c = n; c-- > 0;) {
        const zs_call *cl = &p->calls[c];
        if (!(cl->flags & ZS_CALL_RAISE) || pi->unw[c]) continue;
        pi->unw[c] = 1;
        for (unsigned a = cl->parent, prev = c; a < prev && a != cl->catcher; prev = a, a = p->calls[a].parent)
            pi->unw[a] = 1;
    }
}

unsigned zs_route_scan(const zs_scenario *s, const zs_mtree *t, const zs_pass *p, int bucket, unsigned want, zs_id *oc,
                       zs_id *om, unsigned fc, unsigned fm, unsigned *fidx) {
    unsigned n = 0;
    for (unsigned c = 1; c < p->n_calls && c < ZS_MAX_CALLS; c++) {
        unsigned b = p->calls[c].module;
        if (b >= t->n) continue;
        unsigned par = s->mod[b].parent;
        if (par >= t->n) continue;
        for (unsigned k = 0; k < t->nkids[par]; k++) {
            unsigned m = t->kid[t->first[par] + k];
            if (m == b) continue;
            int same = t->cls[m] == t->cls[b];
            if (same != !bucket) continue;
            if (n == want) {
                *oc = (zs_id)c;
                *om = (zs_id)m;
            }
            if (c == fc && m == fm) *fidx = n;
            n++;
        }
    }
    return n;
}

int zs_raise_candidates(const zs_pass *p, zs_id *out) {
    pinfo pi;
    if (pinfo_build(p, &pi)) return -1;
    unsigned n = 0;
    for (unsigned c = 0; c < pi.n; c++)
        if (!pi.ckpt[c] && !pi.unw[c] && !(p->calls[c].flags & ZS_CALL_RAISE)) out[n++] = (zs_id)c;
    pinfo_free(&pi);
    return (int)n;
}

#define GONE_KEPT    0
#define GONE_BYPASS  1 /* skipped or exited: references to its outputs are bypassed */
#define GONE_REMOVED 2

static zs_ref bypass_ref(zs_ref r, int use_ctx, const zs_pass *base, const uint8_t *gone,
                         const zs_ref (*rin)[ZS_MAX_IN], int *drop) {
    if (r.kind != ZS_REF_OUT || r.call >= base->n_calls || gone[r.call] != GONE_BYPASS) return r;
    const zs_call *bc = &base->calls[r.call];
    if (bc->n_in == 0) {
        if (use_ctx) *drop = 1;
        return (zs_ref){ZS_REF_BATCH, 0, 0, r.detach, 0};
    }
    zs_ref x = rin[r.call][r.index % bc->n_in]; /* already bypass-free (earlier in pre-order) */
    x.detach = (uint8_t)(x.detach | r.detach);
    if (use_ctx && (x.kind == ZS_REF_BATCH || x.kind == ZS_REF_BATCH_RG)) *drop = 1;
    return x;
}

#define MFAIL(...)                                                                                                     \
    do {                                                                                                               \
        if (msg && msgn) snprintf(msg, msgn, __VA_ARGS__);                                                             \
        return -1;                                                                                                     \
    } while (0)

/* Per-call scratch of mat_pass: one allocation. */
typedef struct mscratch {
    uint8_t *act, *gone, *unwound;
    zs_id *tgt, *nidx, *nm;
    zs_ref (*rin)[ZS_MAX_IN];
    pinfo pi;
} mscratch;

static int mat_pass_impl(const zs_scenario *s, const zs_mtree *t, const zs_pass *base, const zs_rank_edit *e,
                         unsigned ne, zs_pass *out, char *msg, size_t msgn, mscratch *x);

/* Rank r's copy of one pass: base with the edits e[0..ne) (all of one
 * (rank, step, pass), sorted by call, no SKIP_STEP) applied.  Returns 0,
 * or -1 with a message if an edit cannot be applied.  The result still
 * needs the pass's validity check (zs_pass_validate).  keep: NULL, or
 * working storage kept for the next call (zs_edit_check_in). */
static int mat_pass(const zs_scenario *s, const zs_mtree *t, const zs_pass *base, const zs_rank_edit *e, unsigned ne,
                    zs_pass *out, char *msg, size_t msgn, zs_edit_scratch *keep) {
    unsigned n = base->n_calls;
    if (n == 0 || n > ZS_MAX_CALLS) MFAIL("bad n_calls %u", n);
    mscratch x;
    memset(&x, 0, sizeof x);
    /* one block: the per-call arrays, then (4-byte aligned) the pinfo's */
    size_t per = 3 + 3 * sizeof(zs_id) + ZS_MAX_IN * sizeof(zs_ref);
    size_t pinfo_at = ((size_t)n * per + 3) / 4 * 4;
    size_t need = pinfo_at + pinfo_bytes(base);
    char *blk;
    if (keep) {
        if (keep->cap < need) {
            char *q = malloc(need);
            if (q) {
                free(keep->blk);
                keep->blk = q;
                keep->cap = need;
            }
        }
        blk = keep->cap >= need ? keep->blk : NULL;
    } else {
        blk = malloc(need);
    }
    if (!blk || zs_pass_reserve(out, n)) {
        if (!keep) free(blk);
        MFAIL("out of memory");
    }
    pinfo_fill(base, &x.pi, blk + pinfo_at);
    /* the zs_ref block first (alignment), then the ids, then the bytes */
    x.rin = (zs_ref(*)[ZS_MAX_IN])blk;
    x.tgt = (zs_id *)(blk + (size_t)n * ZS_MAX_IN * sizeof(zs_ref));
    x.nidx = x.tgt + n;
    x.nm = x.nidx + n;
    x.act = (uint8_t *)(x.nm + n);
    x.gone = x.act + n;
    x.unwound = x.gone + n;
    int rc = mat_pass_impl(s, t, base, e, ne, out, msg, msgn, &x);
    if (!keep) free(blk);
    return rc;
}

static int mat_pass_impl(const zs_scenario *s, const zs_mtree *t, const zs_pass *base, const zs_rank_edit *e,
                         unsigned ne, zs_pass *out, char *msg, size_t msgn, mscratch *x) {
    unsigned n = base->n_calls;
    uint8_t *act = x->act, *gone = x->gone, *unwound = x->unwound;
    zs_id *tgt = x->tgt, *nidx = x->nidx, *nm = x->nm;
    zs_ref(*rin)[ZS_MAX_IN] = x->rin;
    memset(act, 0xFF, n);
    memset(gone, 0, n);
    unsigned nraise = 0;
    for (unsigned k = 0; k < ne; k++) {
        unsigned c = e[k].call;
        if (c >= n) MFAIL("call %u: not a call of the pass (it has %u)", c, n);
        if (act[c] != 0xFF) MFAIL("call %u: two edits", c);
        if (e[k].kind >= ZS_EDIT_SKIP_STEP) MFAIL("call %u: edit kind %u", c, e[k].kind);
        if (e[k].kind != ZS_EDIT_ROUTE && e[k].module)
            MFAIL("call %u: module set on a %s edit", c, zs_edit_kind_name(e[k].kind));
        act[c] = e[k].kind;
        tgt[c] = e[k].module;
        if (e[k].kind == ZS_EDIT_RAISE) nraise++;
    }
    if (nraise > 1) MFAIL("more than one raise in the pass");
    const pinfo pi = x->pi;
    int raise_at = -1;
    for (unsigned c = 0; c < n; c++) {
        if (gone[c]) {
            if (act[c] != 0xFF)
                MFAIL("call %u: %s edit on a call that an earlier edit of this rank removes", c,
                      zs_edit_kind_name(act[c]));
            continue;
        }
        if (act[c] == 0xFF) continue;
        if (c == 0 && act[c] != ZS_EDIT_RAISE) MFAIL("call 0: %s edit on the root call", zs_edit_kind_name(act[c]));
        switch (act[c]) {
        case ZS_EDIT_ROUTE: {
            unsigned b = base->calls[c].module, m = tgt[c];
            if (m >= t->n || b >= t->n || m == b || s->mod[m].parent != s->mod[b].parent)
                MFAIL("call %u: route: module %u is not a sibling of the callee %u", c, m, b);
            break;
        }
        case ZS_EDIT_SKIP:
            gone[c] = GONE_BYPASS;
            for (unsigned d = c + 1; d <= pi.end[c]; d++) gone[d] = GONE_REMOVED;
            break;
        case ZS_EDIT_EXIT: {
            unsigned par = base->calls[c].parent;
            if (par >= c) MFAIL("call %u: bad parent", c);
            for (unsigned j = c; j <= pi.end[par]; j = pi.end[j] + 1) {
                gone[j] = GONE_BYPASS; /* j is a later sibling (a child of par) */
                for (unsigned d = j + 1; d <= pi.end[j]; d++) gone[d] = GONE_REMOVED;
            }
            break;
        }
        case ZS_EDIT_RAISE:
            if (pi.ckpt[c]) MFAIL("call %u: raise inside or on a checkpointed call", c);
            if (pi.unw[c] || (base->calls[c].flags & ZS_CALL_RAISE))
                MFAIL("call %u: raise on a call that raises or is unwound already", c);
            raise_at = (int)c;
            for (unsigned d = pi.end[c] + 1u; d < n; d++) gone[d] = GONE_REMOVED;
            break;
        default: MFAIL("call %u: unknown edit kind", c);
        }
    }
    /* callees: the k-th child of a mapped module maps to the k-th child of its image */
    nm[0] = base->calls[0].module;
    unsigned cnt = 0;
    for (unsigned c = 0; c < n; c++) {
        if (gone[c] != GONE_KEPT) continue;
        nidx[c] = (zs_id)cnt++;
        if (c == 0) continue;
        unsigned par = base->calls[c].parent;
        if (par >= c || gone[par] != GONE_KEPT) MFAIL("call %u: bad parent", c);
        unsigned b = act[c] == ZS_EDIT_ROUTE ? tgt[c] : base->calls[c].module;
        if (b >= t->n) MFAIL("call %u: bad module", c);
        unsigned np = nm[par], k = t->crank[b];
        if (np >= t->n || k >= t->nkids[np])
            MFAIL("call %u: route: module %u (the image of the caller's module) has no child number %u for module %u",
                  c, np, k, b);
        nm[c] = t->kid[t->first[np] + k];
    }
    /* references, bypassing skipped/exited calls */
    /* unwound: the raising call and its ancestors: no op, no use */
    memset(unwound, 0, n);
    for (unsigned a = (unsigned)raise_at; raise_at >= 0 && a < n; a = a ? base->calls[a].parent : n) unwound[a] = 1;
    /* inputs first (a caller's use[] names its children's outputs, which
     * come after it): an in[] names earlier siblings only, so one pass in
     * pre-order resolves chains of bypassed calls */
    for (unsigned c = 0; c < n; c++) {
        if (gone[c] == GONE_REMOVED) continue;
        const zs_call *bc = &base->calls[c];
        if (bc->n_in > ZS_MAX_IN || bc->n_use > ZS_MAX_USE) MFAIL("call %u: bad counts", c);
        for (unsigned i = 0; i < bc->n_in; i++) {
            int drop = 0;
            rin[c][i] = bypass_ref(bc->in[i], 0, base, gone, (const zs_ref(*)[ZS_MAX_IN])rin, &drop);
        }
    }
    out->n_calls = (uint32_t)cnt;
    for (unsigned c = 0; c < n; c++) {
        if (gone[c] != GONE_KEPT) continue;
        const zs_call *bc = &base->calls[c];
        zs_call *oc = &out->calls[nidx[c]];
        *oc = *bc;
        oc->module = nm[c];
        oc->parent = c ? nidx[bc->parent] : ZS_NONE;
        oc->catcher = (bc->catcher < c && gone[bc->catcher] == GONE_KEPT) ? nidx[bc->catcher] : ZS_NONE;
        for (unsigned i = 0; i < bc->n_in; i++) {
            zs_ref r = rin[c][i];
            if (r.kind == ZS_REF_OUT) {
                if (r.call >= n || gone[r.call] != GONE_KEPT)
                    MFAIL("call %u: in[%u]: reference to a removed call", c, i);
                r.call = nidx[r.call];
            }
            oc->in[i] = r;
        }
        unsigned nu = 0;
        for (unsigned k = 0; k < bc->n_use && !unwound[c]; k++) {
            int drop = 0;
            zs_ref r = bypass_ref(bc->use[k], 1, base, gone, (const zs_ref(*)[ZS_MAX_IN])rin, &drop);
            if (drop) continue;
            if (r.kind == ZS_REF_OUT) {
                if (r.call >= n || gone[r.call] != GONE_KEPT)
                    MFAIL("call %u: use[%u]: reference to a removed call", c, k);
                r.call = nidx[r.call];
            }
            oc->use[nu++] = r;
        }
        for (unsigned k = nu; k < ZS_MAX_USE; k++) memset(&oc->use[k], 0, sizeof oc->use[k]);
        oc->n_use = (uint8_t)nu;
        if (unwound[c]) oc->n_out = 0;
    }
    out->loss_mask = base->loss_mask;
    if (raise_at >= 0) {
        zs_call *rc = &out->calls[nidx[raise_at]];
        rc->flags |= ZS_CALL_RAISE;
        rc->catcher = ZS_NONE;
        out->loss_mask = 0;
    }
    return 0;
}

int zs_edit_cmp(const zs_rank_edit *a, const zs_rank_edit *b) {
    const uint32_t ka[5] = {a->rank, a->step, a->pass, a->call, a->kind};
    const uint32_t kb[5] = {b->rank, b->step, b->pass, b->call, b->kind};
    for (int i = 0; i < 5; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

void zs_edits_sort(zs_rank_edit *e, unsigned n) {
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && zs_edit_cmp(&e[j - 1], &e[j]) > 0; j--) {
            zs_rank_edit x = e[j];
            e[j] = e[j - 1];
            e[j - 1] = x;
        }
}

int zs_edit_check(const zs_scenario *s, const zs_mtree *t, const zs_rank_edit *kept, unsigned nk, const zs_rank_edit *e,
                  char *msg, size_t msgn) {
    zs_edit_scratch x;
    memset(&x, 0, sizeof x);
    int rc = zs_edit_check_in(s, t, kept, nk, e, &x, msg, msgn);
    zs_edit_scratch_free(&x);
    return rc;
}

void zs_edit_scratch_free(zs_edit_scratch *x) {
    free(x->pass.calls);
    free(x->blk);
    memset(x, 0, sizeof *x);
}

int zs_edit_check_in(const zs_scenario *s, const zs_mtree *t, const zs_rank_edit *kept, unsigned nk,
                     const zs_rank_edit *e, zs_edit_scratch *keep, char *msg, size_t msgn) {
    zs_pass *scratch = &keep->pass;
    if (e->rank >= s->cfg.world_size) MFAIL("rank %u not below world_size %u", e->rank, s->cfg.world_size);
    if (e->step >= s->n_steps) MFAIL("step %u not in the program", e->step);
    if (e->kind >= ZS_EDIT_KINDS) MFAIL("unknown kind %u", e->kind);
    if (nk && zs_edit_cmp(&kept[nk - 1], e) >= 0) MFAIL("edits not sorted strictly by (rank, step, pass, call, kind)");
    unsigned nskip = 0;
    for (unsigned j = 0; j < nk; j++) {
        if (kept[j].rank != e->rank) continue;
        if (kept[j].kind == ZS_EDIT_SKIP_STEP) nskip++;
        if (kept[j].step == e->step && (kept[j].kind == ZS_EDIT_SKIP_STEP || e->kind == ZS_EDIT_SKIP_STEP))
            MFAIL("rank %u step %u: skip-step together with another edit of that step", e->rank, e->step);
    }
    if (e->kind == ZS_EDIT_SKIP_STEP) {
        if (e->pass || e->call || e->module) MFAIL("skip-step with pass, call or module set");
        if (nskip + 1 >= s->n_steps) MFAIL("rank %u would skip every step", e->rank);
        return 0;
    }
    const zs_step *st = &s->step[e->step];
    if (e->pass >= st->n_passes) MFAIL("pass %u not in step %u", e->pass, e->step);
    if (nk && kept[nk - 1].rank == e->rank && kept[nk - 1].step == e->step && kept[nk - 1].pass == e->pass &&
        kept[nk - 1].call == e->call)
        MFAIL("call %u: two edits", e->call);
    zs_rank_edit grp[ZS_MAX_RANK_EDITS + 1];
    unsigned ng = 0, j0 = nk;
    while (j0 > 0 && kept[j0 - 1].rank == e->rank && kept[j0 - 1].step == e->step && kept[j0 - 1].pass == e->pass) j0--;
    for (unsigned j = j0; j < nk; j++) grp[ng++] = kept[j];
    grp[ng++] = *e;
    char m2[280];
    /* Room for the base pass's calls in one allocation, left uninitialised:
     * mat_pass writes every call it keeps whole, and nothing reads past
     * them (zs_pass_reserve would grow it by doubling and zero each new
     * slot, a cost paid on every check the decoder makes). */
    unsigned nb = st->pass[e->pass].n_calls;
    if (nb > scratch->cap_calls && nb <= ZS_MAX_CALLS) {
        zs_call *q = malloc((size_t)nb * sizeof *q);
        if (q) {
            free(scratch->calls);
            scratch->calls = q;
            scratch->cap_calls = nb;
        }
    }
    scratch->n_calls = 0;
    scratch->loss_mask = 0;
    int bad = mat_pass(s, t, &st->pass[e->pass], grp, ng, scratch, m2, sizeof m2, keep);
    if (!bad) {
        char m3[240];
        bad = zs_pass_validate(s, e->step, e->pass, st->kind, scratch, m3, sizeof m3);
        if (bad) snprintf(m2, sizeof m2, "materialised %s", m3);
    }
    if (bad) MFAIL("rank %u step %u pass %u: %s", e->rank, e->step, e->pass, m2);
    return 0;
}

/* Materialises rank r's edits of s: each (step, pass) the rank edits, once,
 * built from s's pass with the group of the rank's edits of it, into
 * dst->step[step].pass[pass] (dst is not s); skip[i] = 1 for each step the
 * rank skips, done[i][p] = 1 for each pass written.  0, or -1 with msg: an
 * edit naming a step or pass the program lacks, or a pass that cannot be
 * built. */
static int mat_rank_edits(const zs_scenario *s, unsigned r, const zs_mtree *t, zs_scenario *dst,
                          uint8_t skip[ZS_MAX_STEPS], uint8_t done[ZS_MAX_STEPS][ZS_MAX_PASSES], char *msg,
                          size_t msgn) {
    for (unsigned k = 0; k < s->n_edits; k++) {
        const zs_rank_edit *e = &s->edit[k];
        if (e->rank != r) continue;
        if (e->step >= s->n_steps) MFAIL("edit %u: step %u not in the program", k, e->step);
        if (e->kind == ZS_EDIT_SKIP_STEP) {
            skip[e->step] = 1;
            continue;
        }
        const zs_step *st = &s->step[e->step];
        if (e->pass >= st->n_passes || e->pass >= ZS_MAX_PASSES)
            MFAIL("edit %u: pass %u not in step %u", k, e->pass, e->step);
        if (done[e->step][e->pass]) continue;
        done[e->step][e->pass] = 1;
        zs_rank_edit grp[ZS_MAX_RANK_EDITS];
        unsigned ng = 0;
        for (unsigned j = k; j < s->n_edits; j++) {
            const zs_rank_edit *f = &s->edit[j];
            if (f->rank == r && f->step == e->step && f->pass == e->pass && f->kind != ZS_EDIT_SKIP_STEP)
                grp[ng++] = *f;
        }
        char m2[280];
        if (mat_pass(s, t, &st->pass[e->pass], grp, ng, &dst->step[e->step].pass[e->pass], m2, sizeof m2, NULL))
            MFAIL("rank %u step %u pass %u: %s", r, e->step, e->pass, m2);
    }
    return 0;
}

static int for_rank_impl(const zs_scenario *s, unsigned r, zs_scenario *out, const zs_mtree *t, char *msg, size_t msgn);

int zs_scenario_for_rank(const zs_scenario *s, unsigned r, zs_scenario *out, char *err, size_t errlen) {
    char *msg = err;
    size_t msgn = errlen;
    if (err && errlen) err[0] = 0;
    if (!s || !out) MFAIL("NULL scenario");
    if (r >= s->cfg.world_size || r >= ZS_MAX_WORLD) MFAIL("rank %u not below world_size %u", r, s->cfg.world_size);
    if (s->n_steps > ZS_MAX_STEPS || s->n_edits > ZS_MAX_RANK_EDITS) MFAIL("bad counts");
    zs_scenario copy;
    memset(&copy, 0, sizeof copy);
    if (s == out && s->cfg.all_ranks && s->n_edits) {
        /* the edits read the base program while out is rewritten */
        if (zs_scenario_copy(&copy, s)) {
            zs_scenario_free(&copy);
            MFAIL("out of memory");
        }
        s = &copy;
    }
    if (zs_scenario_copy(out, s)) {
        zs_scenario_free(&copy);
        MFAIL("out of memory");
    }
    out->cfg.rank = (uint8_t)r;
    out->cfg.all_ranks = 0;
    out->n_edits = 0;
    memset(out->edit, 0, sizeof out->edit);
    int rc = 0;
    if (s->cfg.all_ranks && s->n_edits) {
        zs_mtree t;
        if (zs_mtree_build(s, &t)) {
            zs_scenario_free(&copy);
            MFAIL("out of memory");
        }
        rc = for_rank_impl(s, r, out, &t, msg, msgn);
        zs_mtree_free(&t);
    }
    zs_scenario_free(&copy);
    return rc;
}

static int for_rank_impl(const zs_scenario *s, unsigned r, zs_scenario *out, const zs_mtree *t, char *msg,
                         size_t msgn) {
    uint8_t skip[ZS_MAX_STEPS] = {0}, done[ZS_MAX_STEPS][ZS_MAX_PASSES] = {{0}};
    /* materialise straight into out's passes (s is not out here) */
    if (mat_rank_edits(s, r, t, out, skip, done, msg, msgn)) return -1;
    unsigned n = 0;
    for (unsigned i = 0; i < s->n_steps; i++) {
        if (skip[i]) continue;
        if (n != i) { /* move step i down: swap, so that each pass keeps its own storage */
            zs_step x = out->step[n];
            out->step[n] = out->step[i];
            out->step[i] = x;
        }
        n++;
    }
    if (n == 0) MFAIL("rank %u skips every step", r);
    out->n_steps = (uint8_t)n;
    return 0;
}

int zs_scenario_rank_view(const zs_scenario *s, unsigned r, zs_scenario *view, zs_scenario *own, char *err,
                          size_t errlen) {
    char *msg = err;
    size_t msgn = errlen;
    if (err && errlen) err[0] = 0;
    if (!s || !view || !own || view == s || own == s || view == own) MFAIL("NULL or shared scenario");
    if (r >= s->cfg.world_size || r >= ZS_MAX_WORLD) MFAIL("rank %u not below world_size %u", r, s->cfg.world_size);
    if (s->n_steps > ZS_MAX_STEPS || s->n_edits > ZS_MAX_RANK_EDITS) MFAIL("bad counts");
    *view = *s; /* the arrays are s's */
    view->cfg.rank = (uint8_t)r;
    view->cfg.all_ranks = 0;
    view->n_edits = 0;
    memset(view->edit, 0, sizeof view->edit);
    if (!s->cfg.all_ranks) return 0;
    uint8_t skip[ZS_MAX_STEPS] = {0}, done[ZS_MAX_STEPS][ZS_MAX_PASSES] = {{0}};
    int mine = 0, need_tree = 0;
    for (unsigned k = 0; k < s->n_edits; k++)
        if (s->edit[k].rank == r) {
            mine = 1;
            need_tree |= s->edit[k].kind != ZS_EDIT_SKIP_STEP;
        }
    if (!mine) return 0;
    zs_mtree t;
    memset(&t, 0, sizeof t);
    if (need_tree && zs_mtree_build(s, &t)) MFAIL("out of memory");
    /* the edited passes in own's storage; the view's passes refer to them */
    int rc = mat_rank_edits(s, r, &t, own, skip, done, msg, msgn);
    zs_mtree_free(&t);
    if (rc) return -1;
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned p = 0; p < ZS_MAX_PASSES; p++)
            if (done[i][p]) view->step[i].pass[p] = own->step[i].pass[p];
    unsigned n = 0;
    for (unsigned i = 0; i < s->n_steps; i++)
        if (!skip[i]) view->step[n++] = view->step[i];
    if (n == 0) MFAIL("rank %u skips every step", r);
    for (unsigned i = n; i < s->n_steps; i++) memset(&view->step[i], 0, sizeof view->step[i]);
    view->n_steps = (uint8_t)n;
    return 0;
}

int zs_scenario_drop_invalid_edits(zs_scenario *s) {
    zs_mtree t;
    unsigned n = s->n_edits <= ZS_MAX_RANK_EDITS ? s->n_edits : ZS_MAX_RANK_EDITS;
    if (!s->cfg.all_ranks || s->cfg.world_size < 2) {
        s->n_edits = 0;
        return (int)n;
    }
    zs_rank_edit got[ZS_MAX_RANK_EDITS];
    memcpy(got, s->edit, n * sizeof got[0]);
    zs_edits_sort(got, n);
    unsigned nk = 0;
    if (zs_mtree_build(s, &t) == 0) { /* out of memory: every edit is dropped */
        for (unsigned k = 0; k < n; k++) {
            zs_rank_edit e = got[k];
            if (zs_edit_check(s, &t, got, nk, &e, NULL, 0) == 0) got[nk++] = e;
        }
        zs_mtree_free(&t);
    }
    memset(s->edit, 0, sizeof s->edit);
    memcpy(s->edit, got, nk * sizeof got[0]);
    s->n_edits = (uint8_t)nk;
    return (int)(n - nk);
}
