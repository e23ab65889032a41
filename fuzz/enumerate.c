/*
 * enumerate.c - bounded exhaustive checking (see enumerate.h and
 * docs/bounded-proofs.md).
 *
 * Generator.  A scenario is built by one deterministic walk that asks a
 * sequence of bounded choices (config, tree shape, parameter labels, step
 * kinds, then per call: input, flags, child calls, consumed tensors).  The
 * generator is an odometer over the choice values: after a walk it
 * increments the last choice that has room and truncates everything after
 * it, so every path of the choice tree is walked exactly once, in
 * lexicographic order, and the k-th emitted scenario is well defined (the
 * basis of --shard).  Walks that would give a non-canonical labelled tree,
 * a renamed copy of an earlier scenario (a non-trivial automorphism of the
 * labelled tree maps the program to a smaller one) or that overrun the
 * call budget are rejected as soon as the choice that breaks them is made.
 *
 * Checker.  `engine`: one zs_run per policy in ZS_ORDER_ENGINE.  `all`:
 * a depth-first search over the order[] bytes of the fuzzed order mode
 * (explore_exact(): the simulator reports the ready nodes at every
 * choice, sim.h's on_choice); every simulator run is one real ready-node order, each
 * distinct runtime-observable run (hash of the simulator's event stream)
 * counts once.
 */
#define _GNU_SOURCE /* fopencookie, MAP_ANONYMOUS */
#include "enumerate.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "sim.h"
#include "world.h"
#include "zoffload.h"

#if defined(__has_include)
#if __has_include("scn.h") && defined(ZO_ENUM_HAVE_SCN)
#include "scn.h"
#define HAVE_SCN 1
#endif
#endif
#ifndef HAVE_SCN
#define HAVE_SCN 0
#endif

#define UNW_NO ZS_UNWIND_NONE

#define MAX_N 6  /* max_modules limit (automorphism table: 5! = 120 entries) */
#define MAX_K 16 /* max_calls limit */

/* ------------------------------------------------------------------ */
/* Fixed configurations                                                 */
/* ------------------------------------------------------------------ */

int zo_enum_config(unsigned idx, zs_config *cfg, uint32_t classes[3], unsigned *n_classes) {
    if (idx >= ZO_ENUM_N_CONFIGS) return -1;
    memset(cfg, 0, sizeof *cfg);
    cfg->policy = ZO_GRADS_PER_CALL;
    cfg->order_mode = ZS_ORDER_ENGINE;
    cfg->model_persistence_threshold = ZS_INF;
    if (idx == 0) {
        /* "base": W=1, nothing persistent, DeepSpeed's default prefetch, live
         * and reuse budgets (every parameter far under them).  Every numel
         * behaves the same here: one class. */
        cfg->world_size = 1;
        cfg->rank = 0;
        cfg->param_persistence_threshold = 0;
        cfg->prefetch_bucket_size = 50000000ull;
        cfg->max_live_parameters = 1000000000ull;
        cfg->max_reuse_distance = 1000000000ull;
        classes[0] = 8;
        *n_classes = 1;
    } else {
        /* "tight": W=2 (rank 1, the padded last shard), deferred completion
         * (INFLIGHT observable), persistence threshold 4, prefetch bucket 1
         * element, live budget 6 and reuse distance 6 elements.  Classes:
         * 1 = persistent (odd); 5 = not persistent, not divisible by W,
         * under the live/reuse budgets; 8 = not persistent, divisible by W,
         * over them. */
        cfg->world_size = 2;
        cfg->rank = 1;
        cfg->deferred = 1;
        cfg->progress_every = 0;
        cfg->param_persistence_threshold = 4;
        cfg->prefetch_bucket_size = 1;
        cfg->max_live_parameters = 6;
        cfg->max_reuse_distance = 6;
        classes[0] = 1;
        classes[1] = 5;
        classes[2] = 8;
        *n_classes = 3;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Generator                                                            */
/* ------------------------------------------------------------------ */

typedef struct wctx {
    zo_enum_gen *g;
    unsigned feat; /* ZO_ENUM_F_* */
    zs_scenario *s;
    int reject;
    unsigned budget; /* calls left in the current pass */
    unsigned cursor; /* next call index of the current pass */
    uint8_t lab[MAX_N];
    uint8_t argrg[MAX_K + 1]; /* call's wrapped input 0 may require grad */
    uint8_t outrg[MAX_K + 1]; /* call's output 0 may require grad */
} wctx;

/* One choice among `range` values (0 when range <= 1: not a choice point). */
static unsigned ch(wctx *w, unsigned range) {
    if (w->reject || range <= 1) return 0;
    zo_enum_gen *g = w->g;
    if (g->probe) {
        /* splitmix64 */
        uint64_t z = (g->rng += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        g->weight *= range;
        return (unsigned)(z % range);
    }
    if (g->pos >= ZO_ENUM_MAX_CHOICES) {
        w->reject = 1;
        return 0;
    }
    unsigned p = g->pos++;
    if (p >= g->n) {
        g->val[p] = 0;
        g->n = p + 1;
    }
    g->range[p] = (uint16_t)range;
    return g->val[p] < range ? g->val[p] : 0;
}

/* Walks call ci (module and parent already set).  grad_off: grad is
 * disabled here by an eval step or a NO_GRAD call at or above the caller
 * (not by a checkpoint's first forward, which is recomputed with grad). */
static int wcall(wctx *w, zs_pass *P, unsigned ci, int in_ckpt, int grad_off) {
    zs_call *c = &P->calls[ci];
    const zs_scenario *s = w->s;
    unsigned caller = c->parent;

    /* input: one tensor, among the candidates of the validity rule
     * (zs_input_candidates).  Candidates that certainly do not require grad
     * (BATCH, an argument or output produced with grad disabled) are all the
     * same to the runtime and the simulator (rg 0, no edge): BATCH stands
     * for them.  Of the others: the pass's leaf (the root call only), the
     * caller's input 0 and the output of the immediately previous sibling
     * call (chains x -> a -> b); in that order. */
    zs_ref cand[MAX_K * ZS_MAX_OUT + ZS_MAX_IN + ZS_MAX_KW + 2];
    unsigned nc = zs_input_candidates(P, caller, ci, cand);
    unsigned prev = ZS_NONE;
    for (unsigned j = ci; caller != ZS_NONE && j-- > caller + 1;)
        if (P->calls[j].parent == caller) {
            prev = j;
            break;
        }
    static const uint8_t rep_kinds[4] = {ZS_REF_BATCH_RG, ZS_REF_BATCH, ZS_REF_ARG, ZS_REF_OUT};
    zs_ref opt[4];
    unsigned no = 0;
    uint8_t optrg[4];
    for (unsigned q = 0; q < 4; q++)
        for (unsigned i = 0; i < nc; i++) {
            const zs_ref *r = &cand[i];
            if (r->kind != rep_kinds[q]) continue;
            int rg;
            switch (r->kind) {
            case ZS_REF_BATCH_RG: rg = caller == ZS_NONE ? 1 : -1; break;
            case ZS_REF_BATCH: rg = 0; break;
            case ZS_REF_ARG: rg = r->index == 0 && w->argrg[caller] ? 1 : -1; break;
            default: rg = r->call == prev && r->index == 0 && w->outrg[prev] ? 1 : -1; break;
            }
            if (rg < 0) continue;
            opt[no] = *r;
            optrg[no++] = (uint8_t)rg;
        }
    unsigned k = ch(w, no);
    c->n_in = 1;
    c->in[0] = opt[k];
    /* the wrapped input may require grad if it did and grad is not off
     * (inside a checkpoint the recompute has grad) */
    w->argrg[ci] = (uint8_t)(optrg[k] && !grad_off);

    /* flags: one of plain, no_grad, checkpoint (2 kinds), raise(catcher) */
    enum { F_PLAIN, F_NOGRAD, F_CKRE, F_CKNRE, F_RAISE };
    uint8_t fo[4 + MAX_K + 1];
    zs_id fcat[4 + MAX_K + 1];
    unsigned nf = 0;
    fo[nf] = F_PLAIN;
    fcat[nf++] = ZS_NONE;
    if (!grad_off) {
        /* under eval / no_grad these flags are inert (identical hook calls) */
        if (w->feat & ZO_ENUM_F_NOGRAD) {
            fo[nf] = F_NOGRAD;
            fcat[nf++] = ZS_NONE;
        }
        if (zs_call_may_checkpoint(ci, in_ckpt) && (w->feat & ZO_ENUM_F_CKPT)) {
            fo[nf] = F_CKRE;
            fcat[nf++] = ZS_NONE;
            fo[nf] = F_CKNRE;
            fcat[nf++] = ZS_NONE;
        }
    }
    if (zs_call_may_raise(in_ckpt, 0) && (w->feat & ZO_ENUM_F_RAISE)) {
        unsigned ncat = zs_catcher_count(P, caller);
        for (unsigned q = 0; q < ncat; q++) {
            fo[nf] = F_RAISE;
            fcat[nf++] = zs_catcher_at(P, caller, q);
        }
    }
    unsigned f = ch(w, nf);
    c->flags = 0;
    c->catcher = ZS_NONE;
    switch (fo[f]) {
    case F_NOGRAD: c->flags = ZS_CALL_NO_GRAD; break;
    case F_CKRE: c->flags = ZS_CALL_CKPT_RE; break;
    case F_CKNRE: c->flags = ZS_CALL_CKPT_NRE; break;
    case F_RAISE:
        c->flags = ZS_CALL_RAISE;
        c->catcher = fcat[f];
        break;
    default: break;
    }
    int cgrad_off = grad_off || (c->flags & ZS_CALL_NO_GRAD);
    int cin_ckpt = in_ckpt || (c->flags & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE));
    if (cgrad_off) w->argrg[ci] = 0;

    /* child calls: "another call?" then the callee */
    zs_id kids[MAX_N];
    unsigned nk = zs_callee_candidates(s, c->module, kids);
    unsigned nch = 0;
    int unw = UNW_NO;
    c->n_out = 0;
    c->n_use = 0;
    while (nk && w->budget > 0 && nch < ZS_CODEC_MAX_CHILD_CALLS && !w->reject) {
        if (!ch(w, 2)) break;
        unsigned j = w->cursor++;
        w->budget--;
        nch++;
        zs_call *cc = &P->calls[j];
        memset(cc, 0, sizeof *cc);
        cc->parent = (uint8_t)ci;
        cc->module = kids[ch(w, nk)];
        unw = zs_unwind_after_child(wcall(w, P, j, cin_ckpt, cgrad_off), ci);
        if (unw != UNW_NO) break;
    }
    if (w->reject) return UNW_NO;
    unw = zs_call_unwinds_to(c, unw);
    if (unw != UNW_NO) {
        w->outrg[ci] = 0;
        return unw;
    }

    /* own op: one output; consumed tensors = a subset of the candidates
     * (zs_use_candidates) that may require grad (using a tensor that does
     * not require grad adds no edge and changes no requires_grad: the same
     * as not using it) */
    c->n_out = 1;
    zs_ref uc[ZS_MAX_IN + ZS_MAX_KW + MAX_K * ZS_MAX_OUT];
    unsigned nu = 0, ncu = zs_use_candidates(P, ci, w->cursor, uc);
    for (unsigned q = 0; q < ncu; q++) {
        const zs_ref *r = &uc[q];
        int rg = r->index == 0 && (r->kind == ZS_REF_ARG ? w->argrg[ci] : w->outrg[r->call]);
        if (rg) uc[nu++] = *r;
    }
    if (nu <= ZS_MAX_USE) {
        unsigned mask = ch(w, 1u << nu);
        for (unsigned q = 0; q < nu; q++)
            if (mask & (1u << q)) c->use[c->n_use++] = uc[q];
    } else {
        /* more candidates than an op may consume (a call with many child
         * calls): one take/skip choice per candidate, forced to skip once
         * ZS_MAX_USE are taken, so every subset of at most ZS_MAX_USE
         * candidates is walked once (a 2^nu mask would neither fit a
         * choice's 16-bit range nor c->use[]) */
        for (unsigned q = 0; q < nu; q++)
            if (c->n_use < ZS_MAX_USE && ch(w, 2)) c->use[c->n_use++] = uc[q];
    }
    w->outrg[ci] = (uint8_t)!cgrad_off;
    return UNW_NO;
}

/* Canonical code of the labelled subtree of m into buf; returns 0 if some
 * node's children are not in non-decreasing code order (non-canonical). */
static int tree_code(const zs_scenario *s, const uint8_t *lab, unsigned m, char *buf, size_t cap) {
    size_t o = 0;
    if (cap < 4) return 0;
    buf[o++] = '(';
    buf[o++] = (char)('a' + lab[m]);
    char prev[4 * MAX_N + 4] = "";
    int first = 1;
    for (unsigned k = m + 1; k < s->n_modules; k++) {
        if (s->mod[k].parent != m) continue;
        char sub[4 * MAX_N + 4];
        if (!tree_code(s, lab, k, sub, sizeof sub)) return 0;
        if (!first && strcmp(prev, sub) > 0) return 0;
        first = 0;
        snprintf(prev, sizeof prev, "%s", sub);
        size_t l = strlen(sub);
        if (o + l + 2 > cap) return 0;
        memcpy(buf + o, sub, l);
        o += l;
    }
    buf[o++] = ')';
    buf[o] = 0;
    return 1;
}

/* Automorphisms of the labelled tree (non-identity ones), cached. */
static void autos_search(zo_enum_gen *g, const zs_scenario *s, const uint8_t *lab, uint8_t *pi, uint8_t *used,
                         unsigned i) {
    unsigned n = s->n_modules;
    if (i == n) {
        int ident = 1;
        for (unsigned k = 0; k < n; k++) ident &= pi[k] == k;
        if (!ident && g->n_auto < 120) memcpy(g->autos[g->n_auto++], pi, 8);
        return;
    }
    for (unsigned t = 1; t < n; t++) {
        if (used[t] || lab[t] != lab[i] || s->mod[t].parent != pi[s->mod[i].parent]) continue;
        used[t] = 1;
        pi[i] = (uint8_t)t;
        autos_search(g, s, lab, pi, used, i + 1);
        used[t] = 0;
    }
}

static void autos_update(zo_enum_gen *g, const zs_scenario *s, const uint8_t *lab) {
    uint8_t key[sizeof g->tree_key];
    memset(key, 0, sizeof key);
    key[0] = s->n_modules;
    for (unsigned m = 0; m < s->n_modules; m++) {
        key[1 + 2 * m] = s->mod[m].parent;
        key[2 + 2 * m] = lab[m];
    }
    if (memcmp(key, g->tree_key, sizeof key) == 0) return;
    memcpy(g->tree_key, key, sizeof key);
    g->n_auto = 0;
    uint8_t pi[8] = {0}, used[8] = {0};
    used[0] = 1;
    autos_search(g, s, lab, pi, used, 1);
}

/* 1 if some automorphism maps the program (the callee sequence: nothing
 * else in a program names a module) to a lexicographically smaller one. */
static int program_not_canonical(const zo_enum_gen *g, const zs_scenario *s) {
    for (unsigned a = 0; a < g->n_auto; a++) {
        const uint8_t *pi = g->autos[a];
        int cmp = 0;
        for (unsigned si = 0; si < s->n_steps && !cmp; si++)
            for (unsigned pj = 0; pj < s->step[si].n_passes && !cmp; pj++) {
                const zs_pass *P = &s->step[si].pass[pj];
                for (unsigned c = 0; c < P->n_calls && !cmp; c++) {
                    unsigned x = P->calls[c].module, y = pi[x];
                    if (y != x) cmp = y < x ? -1 : 1;
                }
            }
        if (cmp < 0) return 1;
    }
    return 0;
}

static void build(wctx *w) {
    zs_scenario *s = w->s;
    zo_enum_gen *g = w->g;
    const zo_enum_bounds *b = &g->b;
    uint32_t classes[3] = {8, 8, 8};
    unsigned ncls = 1;

    s->n_order = 0;
    s->n_uses = 0;
    /* room for the enumerator's own bounds (kept by a reused s) */
    int room = zs_scenario_reserve(s, MAX_N, MAX_N, 0) == 0;
    for (unsigned si = 0; si < ZS_MAX_STEPS && room; si++)
        for (unsigned pj = 0; pj < ZS_MAX_PASSES && room; pj++)
            room = zs_pass_reserve(&s->step[si].pass[pj], MAX_K + 1) == 0;
    if (!room) { /* out of memory: nothing can be built */
        w->reject = 1;
        return;
    }
    unsigned cfgs[ZO_ENUM_N_CONFIGS], ncfg = 0;
    for (unsigned i = 0; i < ZO_ENUM_N_CONFIGS; i++)
        if (!b->config_mask || (b->config_mask & (1u << i))) cfgs[ncfg++] = i;
    zo_enum_config(cfgs[ch(w, ncfg)], &s->cfg, classes, &ncls);
    unsigned nlab = 1 + (w->feat & ZO_ENUM_F_FROZEN ? 2 : 1) * ncls;

    /* module tree: DFS pre-order parent choices */
    s->n_modules = (uint8_t)(1 + ch(w, b->max_modules));
    memset(s->mod, 0, s->n_modules * sizeof s->mod[0]);
    s->mod[0].parent = ZS_NONE;
    for (unsigned i = 1; i < s->n_modules; i++) s->mod[i].parent = zs_parent_at(s, i, ch(w, zs_parent_count(s, i)));
    /* labels: 0 no parameter, 1..ncls trainable of class k, ncls+1..2ncls frozen */
    for (unsigned m = 0; m < s->n_modules; m++) w->lab[m] = (uint8_t)ch(w, nlab);
    if (w->reject) return;
    char code[8 * MAX_N + 8];
    if (!tree_code(s, w->lab, 0, code, sizeof code)) {
        w->reject = 1;
        return;
    }
    s->n_params = 0;
    for (unsigned m = 0; m < s->n_modules; m++) {
        if (!w->lab[m]) continue;
        zs_param *p = &s->par[s->n_params++];
        memset(p, 0, sizeof *p);
        unsigned l = w->lab[m] - 1u;
        p->owner = (uint8_t)m;
        p->elem_size = 4;
        p->numel = classes[l % ncls];
        p->flags = l >= ncls ? ZS_PARAM_FROZEN : 0;
    }
    autos_update(g, s, w->lab);

    /* steps */
    s->n_steps = (uint8_t)(1 + ch(w, b->max_steps));
    unsigned budget = b->max_calls;
    for (unsigned si = 0; si < s->n_steps && !w->reject; si++) {
        zs_step *st = &s->step[si];
        static const unsigned kind_feat[ZS_STEP_KINDS] = {0, ZO_ENUM_F_EVAL, ZO_ENUM_F_ACCUM, ZO_ENUM_F_RETAIN,
                                                          ZO_ENUM_F_INTERLEAVE};
        uint8_t kinds[ZS_STEP_KINDS];
        unsigned nkind = 0;
        for (unsigned kd = 0; kd < ZS_STEP_KINDS; kd++)
            if (!kind_feat[kd] || (w->feat & kind_feat[kd])) kinds[nkind++] = (uint8_t)kd;
        st->kind = kinds[ch(w, nkind)];
        st->n_passes = zs_step_multi_pass(st->kind) ? 2 : 1;
        unsigned reserve = s->n_steps - si - 1; /* one call for each later step */
        if (budget < st->n_passes + reserve) {
            w->reject = 1;
            return;
        }
        for (unsigned pj = 0; pj < st->n_passes && !w->reject; pj++) {
            zs_pass *P = &st->pass[pj];
            unsigned later = (unsigned)(st->n_passes - pj - 1) + reserve;
            w->budget = budget - later - 1; /* the root call takes one */
            w->cursor = 1;
            memset(&P->calls[0], 0, sizeof P->calls[0]);
            P->calls[0].module = 0;
            P->calls[0].parent = ZS_NONE;
            int r = wcall(w, P, 0, 0, st->kind == ZS_STEP_EVAL);
            P->n_calls = (uint8_t)w->cursor;
            P->loss_mask = zs_pass_has_loss(st->kind, r) ? 1 : 0;
            budget -= w->cursor;
        }
    }
    if (w->reject) return;
    if (g->n_auto && program_not_canonical(g, s)) w->reject = 1;
}

int zo_enum_gen_init(zo_enum_gen *g, const zo_enum_bounds *b) {
    if (!g || !b || b->max_modules < 1 || b->max_modules > MAX_N || b->max_calls < 1 || b->max_calls > MAX_K ||
        b->max_steps < 1 || b->max_steps > ZS_MAX_STEPS || (b->config_mask & ~((1u << ZO_ENUM_N_CONFIGS) - 1)) ||
        (b->feature_mask & ~(ZO_ENUM_F_ALL | ZO_ENUM_F_NONE)))
        return -1;
    memset(g, 0, sizeof *g);
    g->b = *b;
    return 0;
}

int zo_enum_next(zo_enum_gen *g, zs_scenario *out) {
    wctx w;
    while (!g->done) {
        if (g->started) {
            /* odometer: increment the last choice with room */
            unsigned p = g->n;
            while (p > 0 && g->val[p - 1] + 1u >= g->range[p - 1]) p--;
            if (p == 0) {
                g->done = 1;
                return 0;
            }
            g->val[p - 1]++;
            g->n = p;
        }
        g->started = 1;
        memset(&w, 0, sizeof w);
        w.g = g;
        w.feat = g->b.feature_mask ? g->b.feature_mask : ZO_ENUM_F_ALL;
        w.s = out;
        g->pos = 0;
        build(&w);
        g->n = g->pos; /* choices past this walk's last one are stale */
        g->paths++;
        if (!w.reject) {
            g->emitted++;
            return 1;
        }
    }
    return 0;
}

double zo_enum_estimate(const zo_enum_bounds *b, unsigned probes, uint64_t seed) {
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    double sum = 0;
    if (g && s && probes && zo_enum_gen_init(g, b) == 0) {
        g->probe = 1;
        g->rng = seed;
        for (unsigned i = 0; i < probes; i++) {
            wctx w;
            memset(&w, 0, sizeof w);
            w.g = g;
            w.feat = g->b.feature_mask ? g->b.feature_mask : ZO_ENUM_F_ALL;
            w.s = s;
            g->pos = 0;
            g->weight = 1;
            build(&w);
            if (!w.reject) sum += g->weight;
        }
        sum /= probes;
    }
    free(g);
    zs_scenario_free(s);
    free(s);
    return sum;
}

static double now_s(void);

uint64_t zo_enum_count_progress(const zo_enum_bounds *b, FILE *f, double every) {
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    uint64_t n = 0;
    double t0 = now_s(), next = t0 + every;
    if (g && s && zo_enum_gen_init(g, b) == 0)
        while (zo_enum_next(g, s)) {
            n++;
            if (f && (n & 1023) == 0 && now_s() >= next) {
                double dt = now_s() - t0;
                fprintf(f, "  counted %" PRIu64 " scenarios in %.0fs (%.0f/s)\n", n, dt, (double)n / dt);
                fflush(f);
                next = now_s() + every;
            }
        }
    free(g);
    zs_scenario_free(s);
    free(s);
    return n;
}

uint64_t zo_enum_count(const zo_enum_bounds *b) {
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    uint64_t n = 0;
    if (g && s && zo_enum_gen_init(g, b) == 0)
        while (zo_enum_next(g, s)) n++;
    free(g);
    zs_scenario_free(s);
    free(s);
    return n;
}

/* ------------------------------------------------------------------ */
/* Results                                                              */
/* ------------------------------------------------------------------ */

static unsigned total_calls(const zs_scenario *s) {
    unsigned n = 0;
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned k = 0; k < s->step[i].n_passes; k++) n += s->step[i].pass[k].n_calls;
    return n;
}

static uint64_t size_key_nolen(const zs_scenario *s) {
    uint64_t tc = total_calls(s);
    if (tc > 255) tc = 255;
    return (tc << 56) | ((uint64_t)s->n_steps << 48) | ((uint64_t)s->n_modules << 40) | ((uint64_t)s->n_params << 32);
}

uint64_t zo_enum_size_key(const zs_scenario *s) {
    static _Thread_local uint8_t buf[ZS_ENCODE_MAX];
    size_t n = zs_encode(s, buf, sizeof buf);
    if (n > 0xFFFFFFFFu) n = 0xFFFFFFFFu;
    return size_key_nolen(s) | (uint64_t)n;
}

int zo_enum_results_init(zo_enum_results *r, const zo_enum_bounds *b, int orders, unsigned policy_mask,
                         unsigned shard_n) {
    memset(r, 0, sizeof *r);
    r->b = *b;
    r->orders = orders;
    r->policy_mask = policy_mask;
    r->shard_n = shard_n ? shard_n : 1;
    r->shard_seen = calloc(r->shard_n, 1);
    if (!r->shard_seen) return -1;
    for (int p = 0; p < 4; p++)
        for (int i = 0; i < ZS_INV_COUNT; i++) r->pol[p].cell[i].key = UINT64_MAX;
    return 0;
}

void zo_enum_results_free(zo_enum_results *r) {
    if (!r) return;
    free(r->shard_seen);
    r->shard_seen = NULL;
}

static void cell_site(zo_enum_cell *c, const char *site, uint64_t n) {
    for (int i = 0; i < ZO_ENUM_SITES; i++) {
        if (c->site_n[i] && !strcmp(c->site[i], site)) {
            c->site_n[i] += n;
            return;
        }
        if (!c->site_n[i]) {
            snprintf(c->site[i], sizeof c->site[i], "%s", site);
            c->site_n[i] = n;
            return;
        }
    }
    c->site_other += n;
}

/* Offers counterexample bytes with size key `key` to cell c. */
static void cell_offer(zo_enum_cell *c, uint64_t key, const uint8_t *bytes, size_t len) {
    if (len > ZO_ENUM_REPRO_MAX) return;
    if (key < c->key || (key == c->key && (len < c->len || (len == c->len && memcmp(bytes, c->bytes, len) < 0)))) {
        c->key = key;
        c->len = (uint32_t)len;
        memcpy(c->bytes, bytes, len);
    }
}

int zo_enum_results_merge(zo_enum_results *dst, const zo_enum_results *src) {
    if (memcmp(&dst->b, &src->b, sizeof dst->b) || dst->orders != src->orders || dst->policy_mask != src->policy_mask ||
        dst->shard_n != src->shard_n)
        return -1;
    for (unsigned i = 0; i < dst->shard_n; i++)
        if (dst->shard_seen[i] && src->shard_seen[i]) return -1; /* a shard counted twice */
    for (unsigned i = 0; i < dst->shard_n; i++) dst->shard_seen[i] |= src->shard_seen[i];
    dst->scenarios += src->scenarios;
    dst->invalid += src->invalid;
    dst->seconds += src->seconds;
    for (int p = 0; p < 4; p++) {
        zo_enum_policy_res *d = &dst->pol[p];
        const zo_enum_policy_res *s = &src->pol[p];
        d->runs += s->runs;
        d->orders += s->orders;
        d->torch_errors += s->torch_errors;
        d->setup_errors += s->setup_errors;
        d->order_cap_hits += s->order_cap_hits;
        d->violating_scenarios += s->violating_scenarios;
        d->uninit_full += s->uninit_full;
        for (int i = 1; i < ZS_INV_COUNT; i++) {
            d->cell[i].scenarios += s->cell[i].scenarios;
            d->cell[i].orders += s->cell[i].orders;
            for (int k = 0; k < ZO_ENUM_SITES; k++)
                if (s->cell[i].site_n[k]) cell_site(&d->cell[i], s->cell[i].site[k], s->cell[i].site_n[k]);
            d->cell[i].site_other += s->cell[i].site_other;
            if (s->cell[i].key != UINT64_MAX) cell_offer(&d->cell[i], s->cell[i].key, s->cell[i].bytes, s->cell[i].len);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Checking one scenario                                                */
/* ------------------------------------------------------------------ */

/* A FILE whose writes feed a 64-bit FNV-1a hash (the event stream of a run,
 * without storing it). */
typedef struct hsink {
    uint64_t h;
} hsink;

static ssize_t hsink_write(void *cookie, const char *buf, size_t n) {
    hsink *k = cookie;
    uint64_t h = k->h;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)buf[i];
        h *= 1099511628211ull;
    }
    k->h = h;
    return (ssize_t)n;
}

typedef struct explorer {
    zs_scenario *s;
    int policy;
    unsigned max_runs;
    FILE *ev;
    hsink sink;
    /* distinct observable runs of this scenario/policy */
    uint64_t *seen;
    unsigned seen_cap, n_seen;
    uint64_t runs;
    int cap_hit;
    /* per invariant: violated in some order; smallest order bytes */
    int inv_hit[ZS_INV_COUNT];
    uint64_t inv_orders[ZS_INV_COUNT];
    unsigned inv_best_n[ZS_INV_COUNT];
    uint8_t inv_best[ZS_INV_COUNT][ZS_MAX_ORDER];
    int inv_engine[ZS_INV_COUNT];    /* found by the engine-order run */
    char inv_site[ZS_INV_COUNT][40]; /* site of the first violation found */
    uint64_t torch;
    int setup;
    int uninit_full;               /* an uninitialised counter access in some whole run */
    unsigned n_dec;                /* choices of the last run */
    uint16_t nready[ZS_MAX_ORDER]; /* n_ready of each of them (first ZS_MAX_ORDER) */
    int past_order;                /* the last run had a choice with n_ready > 1 past ZS_MAX_ORDER */
} explorer;

static void on_choice(void *user, unsigned k, unsigned n_ready) {
    explorer *E = user;
    if (k < ZS_MAX_ORDER) {
        E->nready[k] = (uint16_t)(n_ready > 0xFFFF ? 0xFFFF : n_ready);
        if (k + 1 > E->n_dec) E->n_dec = k + 1;
    } else if (n_ready > 1) {
        E->past_order = 1;
    }
}

static int seen_add(explorer *E, uint64_t h) {
    if (h == 0) h = 1;
    if (E->n_seen * 2 >= E->seen_cap) {
        unsigned nc = E->seen_cap ? E->seen_cap * 2 : 1024;
        uint64_t *t = calloc(nc, sizeof *t);
        if (!t) return 0;
        for (unsigned i = 0; i < E->seen_cap; i++)
            if (E->seen[i]) {
                unsigned j = (unsigned)(E->seen[i] & (nc - 1));
                while (t[j]) j = (j + 1) & (nc - 1);
                t[j] = E->seen[i];
            }
        free(E->seen);
        E->seen = t;
        E->seen_cap = nc;
    }
    unsigned j = (unsigned)(h & (E->seen_cap - 1));
    while (E->seen[j]) {
        if (E->seen[j] == h) return 0;
        j = (j + 1) & (E->seen_cap - 1);
    }
    E->seen[j] = h;
    E->n_seen++;
    return 1;
}

/* One simulator run with order bytes ord[0..n) (engine order if n < 0).
 * Returns the hash of its event stream. */
static uint64_t run_order(explorer *E, const uint8_t *ord, int n) {
    zs_scenario *s = E->s;
    zs_run_opts o;
    zs_outcome out;
    zs_run_opts_init(&o);
    o.one_rank = 1; /* the orders of one rank's view */
    o.policy = E->policy;
    if (n < 0) {
        o.order_mode = ZS_ORDER_ENGINE;
        s->cfg.order_mode = ZS_ORDER_ENGINE;
        s->n_order = 0;
    } else {
        o.order_mode = ZS_ORDER_FUZZED;
        s->cfg.order_mode = ZS_ORDER_FUZZED;
        s->n_order = (uint16_t)n;
        memcpy(s->order, ord, (size_t)n);
    }
    if (E->ev) {
        fflush(E->ev);
        E->sink.h = 1469598103934665603ull;
        o.events = E->ev;
    }
    E->n_dec = 0;
    E->past_order = 0;
    o.on_choice = on_choice;
    o.choice_user = E;
    int verdict = zs_run(s, &o, &out);
    const zs_sim_result *r = &out.r;
    int rc = verdict == ZS_RUN_SETUP ? -1 : r->violated ? 1 : 0;
    E->runs++;
    uint64_t h = 0;
    if (E->ev) {
        fprintf(E->ev, "end %d %d %d\n", rc, r->violated ? r->v.inv : 0, r->torch_error);
        fflush(E->ev);
        h = E->sink.h;
    }
    int fresh = E->ev ? seen_add(E, h) : 1;
    if (rc >= 0 && r->stats.uninit_counter_events) E->uninit_full = 1;
    if (rc >= 0 && r->violated && !E->uninit_full && fresh) {
        /* the run stopped at its first violation: run it to the end to see
         * whether a counter is read before initialisation later on */
        zs_outcome out2;
        zs_run_opts o2 = o;
        o2.stop_on_violation = 0;
        o2.events = NULL;
        if (zs_run(s, &o2, &out2) != ZS_RUN_SETUP && out2.r.stats.uninit_counter_events) E->uninit_full = 1;
        E->runs++;
    }
    if (fresh && r->torch_error) E->torch++;
    int inv = 0;
    if (rc < 0) {
        E->setup = 1;
        inv = ZS_INV_ERR;
    } else if (r->violated) {
        inv = r->v.inv;
    }
    if (inv > 0 && inv < ZS_INV_COUNT) {
        if (fresh) E->inv_orders[inv]++;
        unsigned len = n < 0 ? 0 : (unsigned)n;
        while (len > 0 && ord[len - 1] == 0) len--; /* trailing zeros read as 0 anyway */
        if (!E->inv_hit[inv] || (n >= 0 && !E->inv_engine[inv] && len < E->inv_best_n[inv])) {
            E->inv_best_n[inv] = len;
            if (len) memcpy(E->inv_best[inv], ord, len);
        }
        if (!E->inv_hit[inv] && n < 0) E->inv_engine[inv] = 1;
        if (!E->inv_hit[inv]) {
            const char *w = rc < 0 ? "setup" : r->v.what;
            size_t o = 0;
            for (size_t i = 0; w[i] && o + 1 < sizeof E->inv_site[inv]; i++) {
                char c = w[i];
                if (c >= '0' && c <= '9') {
                    if (o && E->inv_site[inv][o - 1] == '#') continue;
                    c = '#';
                }
                E->inv_site[inv][o++] = c;
            }
            E->inv_site[inv][o] = 0;
        }
        E->inv_hit[inv] = 1;
    }
    return h;
}

/* Exact search (the simulator reports n_ready at every choice): the run
 * pre[0..k) followed by zeros is one order; every other order agrees with it
 * up to some position j >= k and takes a value b in 1..n_ready(j)-1 there.
 * One run per order. */
static void explore_exact(explorer *E, uint8_t *pre, unsigned k) {
    if (E->runs >= E->max_runs) {
        E->cap_hit = 1;
        return;
    }
    (void)run_order(E, pre, (int)k);
    if (E->past_order) E->cap_hit = 1;
    unsigned nd = E->n_dec;
    uint16_t nr[ZS_MAX_ORDER];
    memcpy(nr, E->nready, nd * sizeof nr[0]);
    for (unsigned j = k; j < nd; j++) {
        if (nr[j] < 2) continue;
        memset(pre + k, 0, j - k);
        for (unsigned b = 1; b < nr[j] && b < 256; b++) {
            pre[j] = (uint8_t)b;
            explore_exact(E, pre, j + 1);
            if (E->runs >= E->max_runs) {
                E->cap_hit = 1;
                return;
            }
        }
        if (nr[j] > 256) E->cap_hit = 1;
        pre[j] = 0;
    }
}

static FILE *hash_file(hsink *k) {
    cookie_io_functions_t io = {NULL, hsink_write, NULL, NULL};
    FILE *f = fopencookie(k, "w", io);
    if (f) setvbuf(f, NULL, _IOFBF, 1 << 16);
    return f;
}

int zo_enum_check_scenario(zs_scenario *s, const zo_enum_opts *o, zo_enum_results *r) {
    /* the runs set policy/order fields of the scenario: in place, restored */
    zs_config saved = s->cfg;
    uint16_t saved_n = s->n_order;
    int bad_policies = 0;
    static _Thread_local uint8_t pre[ZS_MAX_ORDER];
    static _Thread_local uint8_t enc[ZO_ENUM_REPRO_MAX + 1];

    r->scenarios++;
    for (int p = 0; p < 4; p++) {
        if (!(o->policy_mask & (1u << p))) continue;
        explorer E;
        memset(&E, 0, sizeof E);
        E.s = s;
        E.policy = p;
        E.max_runs = o->max_runs ? o->max_runs : 20000;
        if (o->orders == ZO_ENUM_ORDERS_ALL) {
            E.ev = hash_file(&E.sink);
            memset(pre, 0, sizeof pre);
            (void)run_order(&E, pre, -1); /* the engine order itself */
            explore_exact(&E, pre, 0);
            if (E.ev) fclose(E.ev);
        } else {
            (void)run_order(&E, pre, -1);
        }
        zo_enum_policy_res *pr = &r->pol[p];
        pr->runs += E.runs;
        pr->orders += E.ev ? E.n_seen : 1;
        pr->torch_errors += E.torch;
        pr->setup_errors += E.setup ? 1 : 0;
        pr->order_cap_hits += E.cap_hit ? 1 : 0;
        pr->uninit_full += E.uninit_full ? 1 : 0;
        int any = 0;
        for (int i = 1; i < ZS_INV_COUNT; i++) {
            if (!E.inv_hit[i]) continue;
            any = 1;
            zo_enum_cell *c = &pr->cell[i];
            c->scenarios++;
            c->orders += E.inv_orders[i] ? E.inv_orders[i] : 1;
            cell_site(c, E.inv_site[i], 1);
            /* counterexample: the scenario with this policy and order */
            uint64_t k0 = size_key_nolen(s);
            if (k0 > c->key) continue;
            s->cfg.policy = (uint8_t)p;
            if (E.inv_engine[i]) {
                s->cfg.order_mode = ZS_ORDER_ENGINE;
                s->n_order = 0;
            } else {
                s->cfg.order_mode = ZS_ORDER_FUZZED;
                s->n_order = (uint16_t)E.inv_best_n[i];
                memcpy(s->order, E.inv_best[i], E.inv_best_n[i]);
            }
            size_t n = zs_encode(s, enc, sizeof enc);
            if (n > 0 && n <= ZO_ENUM_REPRO_MAX) cell_offer(c, k0 | n, enc, n);
            s->cfg = saved;
        }
        free(E.seen);
        if (any) {
            pr->violating_scenarios++;
            bad_policies++;
        }
    }
    s->cfg = saved;
    s->n_order = saved_n;
    return bad_policies;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int zo_enum_run_shard(const zo_enum_bounds *b, const zo_enum_opts *o, unsigned shard, unsigned nshard, unsigned sub,
                      unsigned nsub, zo_enum_results *r, volatile uint64_t *progress) {
    if (!nshard || shard >= nshard || !nsub || sub >= nsub) return -1;
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    if (!g || !s || zo_enum_gen_init(g, b) != 0) {
        free(g);
        zs_scenario_free(s);
        free(s);
        return -1;
    }
    double t0 = now_s();
    uint64_t k = 0;
    char err[256];
    while (zo_enum_next(g, s)) {
        uint64_t idx = k++;
        if (idx % nshard != shard || (idx / nshard) % nsub != sub) continue;
        if (zs_scenario_validate(s, err, sizeof err) != 0) {
            r->invalid++;
            if (r->invalid <= 3) fprintf(stderr, "enumerate: generated an invalid scenario: %s\n", err);
        } else {
            zo_enum_check_scenario(s, o, r);
        }
        if (progress) (*progress)++;
    }
    r->seconds += now_s() - t0;
    free(g);
    zs_scenario_free(s);
    free(s);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Results file                                                         */
/* ------------------------------------------------------------------ */
/*
 *   zoffload-enumerate-results 1
 *   bounds N K S
 *   orders engine|all
 *   policies MASK
 *   shards n  i i i ...        (the shards this file covers)
 *   scenarios X
 *   invalid X
 *   seconds T
 *   policy P runs R orders M torch T setup E caphits C violating V
 *   cell P INV SCENARIOS ORDERS KEY HEX|-
 *   end
 */

int zo_enum_results_write(const zo_enum_results *r, FILE *f) {
    fprintf(f, "zoffload-enumerate-results 1\n");
    fprintf(f, "bounds %u %u %u %u %u\n", r->b.max_modules, r->b.max_calls, r->b.max_steps, r->b.config_mask,
            r->b.feature_mask);
    fprintf(f, "orders %s\n", r->orders == ZO_ENUM_ORDERS_ALL ? "all" : "engine");
    fprintf(f, "policies %u\n", r->policy_mask);
    fprintf(f, "shards %u", r->shard_n);
    for (unsigned i = 0; i < r->shard_n; i++)
        if (r->shard_seen[i]) fprintf(f, " %u", i);
    fprintf(f, "\nscenarios %" PRIu64 "\ninvalid %" PRIu64 "\nseconds %.3f\n", r->scenarios, r->invalid, r->seconds);
    for (int p = 0; p < 4; p++) {
        if (!(r->policy_mask & (1u << p))) continue;
        const zo_enum_policy_res *pr = &r->pol[p];
        fprintf(f,
                "policy %d runs %" PRIu64 " orders %" PRIu64 " torch %" PRIu64 " setup %" PRIu64 " caphits %" PRIu64
                " violating %" PRIu64 " uninit %" PRIu64 "\n",
                p, pr->runs, pr->orders, pr->torch_errors, pr->setup_errors, pr->order_cap_hits,
                pr->violating_scenarios, pr->uninit_full);
        for (int i = 1; i < ZS_INV_COUNT; i++) {
            const zo_enum_cell *c = &pr->cell[i];
            fprintf(f, "cell %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " ", p, i, c->scenarios, c->orders, c->key);
            if (c->key == UINT64_MAX || !c->len)
                fputc('-', f);
            else
                for (uint32_t k = 0; k < c->len; k++) fprintf(f, "%02x", c->bytes[k]);
            fputc('\n', f);
            for (int k = 0; k < ZO_ENUM_SITES; k++)
                if (c->site_n[k]) fprintf(f, "site %d %d %" PRIu64 " %s\n", p, i, c->site_n[k], c->site[k]);
            if (c->site_other) fprintf(f, "site %d %d %" PRIu64 " (other)\n", p, i, c->site_other);
        }
    }
    fprintf(f, "end\n");
    return ferror(f) ? -1 : 0;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int zo_enum_results_read(zo_enum_results *r, FILE *f, char *err, size_t errlen) {
    static char line[2 * ZO_ENUM_REPRO_MAX + 256];
    zo_enum_bounds b = {0, 0, 0, 0, 0};
    int orders = -1;
    unsigned mask = 0, shard_n = 0;
    int inited = 0, ended = 0;
    unsigned lineno = 0;
#define RFAIL(...)                                                                                                     \
    do {                                                                                                               \
        if (err) snprintf(err, errlen, __VA_ARGS__);                                                                   \
        if (inited) zo_enum_results_free(r);                                                                           \
        return -1;                                                                                                     \
    } while (0)
    memset(r, 0, sizeof *r);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (lineno == 1) {
            if (strcmp(line, "zoffload-enumerate-results 1")) RFAIL("line 1: not a results file");
            continue;
        }
        if (!strncmp(line, "bounds ", 7)) {
            if (sscanf(line + 7, "%u %u %u %u %u", &b.max_modules, &b.max_calls, &b.max_steps, &b.config_mask,
                       &b.feature_mask) != 5)
                RFAIL("line %u: bad bounds", lineno);
        } else if (!strncmp(line, "orders ", 7)) {
            orders = !strcmp(line + 7, "all") ? ZO_ENUM_ORDERS_ALL : ZO_ENUM_ORDERS_ENGINE;
        } else if (!strncmp(line, "policies ", 9)) {
            mask = (unsigned)strtoul(line + 9, NULL, 10);
        } else if (!strncmp(line, "shards ", 7)) {
            char *e;
            shard_n = (unsigned)strtoul(line + 7, &e, 10);
            if (!shard_n || shard_n > 1000000 || orders < 0 || !b.max_modules)
                RFAIL("line %u: bad shards line (or before bounds/orders)", lineno);
            if (zo_enum_results_init(r, &b, orders, mask, shard_n)) RFAIL("out of memory");
            inited = 1;
            for (;;) {
                char *e2;
                unsigned long v = strtoul(e, &e2, 10);
                if (e2 == e) break;
                if (v >= shard_n) RFAIL("line %u: shard %lu out of range", lineno, v);
                r->shard_seen[v] = 1;
                e = e2;
            }
        } else if (!inited) {
            RFAIL("line %u: data before the shards line", lineno);
        } else if (!strncmp(line, "scenarios ", 10)) {
            r->scenarios = strtoull(line + 10, NULL, 10);
        } else if (!strncmp(line, "invalid ", 8)) {
            r->invalid = strtoull(line + 8, NULL, 10);
        } else if (!strncmp(line, "seconds ", 8)) {
            r->seconds = strtod(line + 8, NULL);
        } else if (!strncmp(line, "policy ", 7)) {
            int p;
            uint64_t a[7];
            if (sscanf(line + 7,
                       "%d runs %" SCNu64 " orders %" SCNu64 " torch %" SCNu64 " setup %" SCNu64 " caphits %" SCNu64
                       " violating %" SCNu64 " uninit %" SCNu64,
                       &p, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6]) != 8 ||
                p < 0 || p > 3)
                RFAIL("line %u: bad policy line", lineno);
            zo_enum_policy_res *pr = &r->pol[p];
            pr->runs = a[0];
            pr->orders = a[1];
            pr->torch_errors = a[2];
            pr->setup_errors = a[3];
            pr->order_cap_hits = a[4];
            pr->violating_scenarios = a[5];
            pr->uninit_full = a[6];
        } else if (!strncmp(line, "cell ", 5)) {
            int p, i, off = 0;
            uint64_t sc, orr, key;
            if (sscanf(line + 5, "%d %d %" SCNu64 " %" SCNu64 " %" SCNu64 " %n", &p, &i, &sc, &orr, &key, &off) != 5 ||
                p < 0 || p > 3 || i < 1 || i >= ZS_INV_COUNT)
                RFAIL("line %u: bad cell line", lineno);
            zo_enum_cell *c = &r->pol[p].cell[i];
            c->scenarios = sc;
            c->orders = orr;
            c->key = key;
            const char *h = line + 5 + off;
            c->len = 0;
            if (strcmp(h, "-")) {
                size_t hl = strlen(h);
                if (hl % 2 || hl / 2 > ZO_ENUM_REPRO_MAX) RFAIL("line %u: bad hex", lineno);
                for (size_t q = 0; q < hl / 2; q++) {
                    int hi = hexval(h[2 * q]), lo = hexval(h[2 * q + 1]);
                    if (hi < 0 || lo < 0) RFAIL("line %u: bad hex", lineno);
                    c->bytes[q] = (uint8_t)(hi * 16 + lo);
                }
                c->len = (uint32_t)(hl / 2);
            } else {
                c->key = UINT64_MAX;
            }
        } else if (!strncmp(line, "site ", 5)) {
            int p, i, off = 0;
            uint64_t n;
            if (sscanf(line + 5, "%d %d %" SCNu64 " %n", &p, &i, &n, &off) != 3 || p < 0 || p > 3 || i < 1 ||
                i >= ZS_INV_COUNT)
                RFAIL("line %u: bad site line", lineno);
            if (!strcmp(line + 5 + off, "(other)"))
                r->pol[p].cell[i].site_other += n;
            else
                cell_site(&r->pol[p].cell[i], line + 5 + off, n);
        } else if (!strcmp(line, "end")) {
            ended = 1;
            break;
        } else if (line[0]) {
            RFAIL("line %u: unknown key", lineno);
        }
    }
    if (!inited || !ended) RFAIL("truncated results file (no shards/end line)");
#undef RFAIL
    return 0;
}

/* ------------------------------------------------------------------ */
/* Report                                                               */
/* ------------------------------------------------------------------ */

static void write_cex(const zo_enum_cell *c, int p, int inv, const char *prefix, FILE *out) {
    zs_scenario *s = calloc(1, sizeof *s);
    if (!s) return;
    zs_decode(c->bytes, c->len, s);
    fprintf(out, "    smallest (%u calls, %u steps, %u modules, %u params, %u bytes): ", total_calls(s), s->n_steps,
            s->n_modules, s->n_params, c->len);
    for (uint32_t k = 0; k < c->len; k++) fprintf(out, "%02x", c->bytes[k]);
    fputc('\n', out);
    char path[512];
    if (prefix) {
        snprintf(path, sizeof path, "%s-%s-%s.bin", prefix, zs_policy_name((unsigned)p), zs_inv_name(inv));
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(c->bytes, 1, c->len, f);
            fclose(f);
            fprintf(out, "    written to %s\n", path);
        }
    }
#if HAVE_SCN
    char *txt = zs_scn_print(s, NULL);
    if (txt) {
        fprintf(out, "    .scn:\n");
        for (char *l = txt; *l;) {
            char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            fprintf(out, "      %.*s\n", (int)n, l);
            l += n + (e ? 1 : 0);
        }
        if (prefix) {
            snprintf(path, sizeof path, "%s-%s-%s.scn", prefix, zs_policy_name((unsigned)p), zs_inv_name(inv));
            FILE *f = fopen(path, "w");
            if (f) {
                fputs(txt, f);
                fclose(f);
            }
        }
        free(txt);
    }
#endif
    /* the run: violation and hook trace */
    zs_run_opts o;
    zs_outcome res;
    zs_run_opts_init(&o);
    o.one_rank = 1;
    char *tbuf = NULL;
    size_t tlen = 0;
    FILE *tf = open_memstream(&tbuf, &tlen);
    o.trace = tf;
    zs_run(s, &o, &res);
    const zs_sim_result r = res.r;
    if (tf) fclose(tf);
    char line[640];
    if (r.violated) {
        zs_violation_format(&r.v, line, sizeof line);
        fprintf(out, "    %s\n", line);
    } else {
        fprintf(out, "    (replay did not reproduce: %s)\n", r.setup_error ? r.setup_msg : "no violation");
    }
    if (prefix && tbuf) {
        snprintf(path, sizeof path, "%s-%s-%s.trace", prefix, zs_policy_name((unsigned)p), zs_inv_name(inv));
        FILE *f = fopen(path, "w");
        if (f) {
            fwrite(tbuf, 1, tlen, f);
            fclose(f);
        }
    }
    free(tbuf);
    zs_scenario_free(s);
    free(s);
}

int zo_enum_report(const zo_enum_results *r, FILE *f, const char *prefix) {
    unsigned missing = 0;
    for (unsigned i = 0; i < r->shard_n; i++) missing += !r->shard_seen[i];
    fprintf(f, "bound: --max-modules %u --max-calls %u --max-steps %u, orders %s\n", r->b.max_modules, r->b.max_calls,
            r->b.max_steps, r->orders == ZO_ENUM_ORDERS_ALL ? "all" : "engine");
    fprintf(f, "scenarios: %" PRIu64 " (invalid generated: %" PRIu64 ")", r->scenarios, r->invalid);
    if (missing) fprintf(f, "  INCOMPLETE: %u of %u shards missing", missing, r->shard_n);
    fprintf(f, "\n\n| policy | orders | I1 | I2 | I3 | I4 | I5 | I6 | I7 | ERR |\n");
    fprintf(f, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int p = 0; p < 4; p++) {
        if (!(r->policy_mask & (1u << p))) continue;
        const zo_enum_policy_res *pr = &r->pol[p];
        fprintf(f, "| %s | %" PRIu64 " |", zs_policy_name((unsigned)p), pr->orders);
        for (int i = 1; i < ZS_INV_COUNT; i++) {
            if (pr->cell[i].scenarios)
                fprintf(f, " **%" PRIu64 "** |", pr->cell[i].scenarios);
            else
                fprintf(f, " holds |");
        }
        fputc('\n', f);
    }
    fprintf(f, "\n(a number = scenarios in which some order's first violation is that invariant)\n\n");
    int bad = 0;
    for (int p = 0; p < 4; p++) {
        if (!(r->policy_mask & (1u << p))) continue;
        const zo_enum_policy_res *pr = &r->pol[p];
        fprintf(f,
                "policy %s: %" PRIu64 " runs, %" PRIu64 " orders, %" PRIu64 " PyTorch-rejected orders, %" PRIu64
                " order trees cut at the cap\n",
                zs_policy_name((unsigned)p), pr->runs, pr->orders, pr->torch_errors, pr->order_cap_hits);
        fprintf(f,
                "  counter accessed before initialisation anywhere in a whole run (runs continued "
                "past their first violation): %" PRIu64 " scenarios\n",
                pr->uninit_full);
        for (int i = 1; i < ZS_INV_COUNT; i++) {
            const zo_enum_cell *c = &pr->cell[i];
            if (!c->scenarios) {
                fprintf(f, "  %-3s holds for all %" PRIu64 " scenarios and %" PRIu64 " orders up to the bound\n",
                        zs_inv_name(i), r->scenarios, pr->orders);
                continue;
            }
            if (p == ZO_GRADS_PER_CALL) bad = 1;
            fprintf(f, "  %-3s VIOLATED in %" PRIu64 " scenarios (%" PRIu64 " orders); detected at:", zs_inv_name(i),
                    c->scenarios, c->orders);
            for (int k = 0; k < ZO_ENUM_SITES; k++)
                if (c->site_n[k]) fprintf(f, "%s \"%s\" x%" PRIu64, k ? "," : "", c->site[k], c->site_n[k]);
            if (c->site_other) fprintf(f, ", other sites x%" PRIu64, c->site_other);
            fputc('\n', f);
            if (c->len) write_cex(c, p, i, prefix, f);
        }
    }
    if (r->invalid) bad = 1;
    if (missing) bad = 1;
    return bad;
}

/* ------------------------------------------------------------------ */
/* Command line                                                         */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* --ranks: I8 over every single rank edit                    */
/* ------------------------------------------------------------------ */

/* For each base scenario of the bound: W = 2, all ranks, and either no
 * edit or one edit of rank 1 - each kind at each valid target (ROUTE: every
 * sibling module of the base callee; SKIP/EXIT: every call but the root
 * call; RAISE: every call; SKIP_STEP: every step) - each run in the host
 * world under every policy of the mask with only I8 checked (the legacy
 * policies break I1/I3 on their own).  --gather-always marks the router
 * (the base callee's parent) of a ROUTE edit gather-always first. */

#define RK_KINDS (ZS_EDIT_KINDS + 1) /* index ZS_EDIT_KINDS: no edit */

typedef struct rk_res {
    uint64_t bases, worlds, setup;
    uint64_t cand[RK_KINDS];
    uint64_t i8[4][RK_KINDS];
    uint64_t ga_marked;
    int verify;                      /* --verify: zo_config.verify_collectives on every rank */
    uint64_t unguarded[4][RK_KINDS]; /* --verify: I8 whose first difference is no fingerprint
                                        exchange on either rank (the check let it through) */
    char first_unguarded[4][RK_KINDS][200];
    char first[4][RK_KINDS][200]; /* first I8 message per cell */
} rk_res;

static const char *rk_kind_name(unsigned k) { return k < ZS_EDIT_KINDS ? zs_edit_kind_name(k) : "none"; }

static void rk_try(zs_scenario *s, unsigned kind, unsigned policy_mask, int ga, rk_res *R, zs_world_result *wr) {
    int marked = -1;
    if (zs_scenario_validate(s, NULL, 0) != 0) return; /* not a valid target */
    if (ga && kind == ZS_EDIT_ROUTE) {
        const zs_rank_edit *e = &s->edit[0];
        unsigned callee = s->step[e->step].pass[e->pass].calls[e->call].module;
        unsigned parent = s->mod[callee].parent;
        if (parent != ZS_NONE && !(s->mod[parent].flags & ZS_MOD_GATHER_ALWAYS)) {
            s->mod[parent].flags |= ZS_MOD_GATHER_ALWAYS;
            if (zs_scenario_validate(s, NULL, 0) == 0) {
                marked = (int)parent;
                R->ga_marked++;
            } else {
                s->mod[parent].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
            }
        }
    }
    R->cand[kind]++;
    zs_run_opts ro;
    zs_run_opts_init(&ro);
    ro.env.only_i8 = 1;
    ro.order_mode = ZS_ORDER_ENGINE;
    ro.verify_collectives = R->verify;
    ro.world = wr;
    for (int p = 0; p < 4; p++) {
        if (!(policy_mask & (1u << p))) continue;
        zs_outcome out;
        ro.policy = p;
        int v = zs_run(s, &ro, &out); /* s is all-ranks: every rank in the world */
        R->worlds++;
        if (v == ZS_RUN_SETUP) R->setup++;
        if (v == ZS_INV_I8) {
            if (!R->i8[p][kind]) memcpy(R->first[p][kind], wr->v.msg, sizeof R->first[p][kind] - 1); /* short form */
            R->i8[p][kind]++;
            if (R->verify && wr->div_kind[0] != ZS_WORLD_EXCHANGE && wr->div_kind[1] != ZS_WORLD_EXCHANGE) {
                if (!R->unguarded[p][kind])
                    memcpy(R->first_unguarded[p][kind], wr->v.msg, sizeof R->first_unguarded[p][kind] - 1);
                R->unguarded[p][kind]++;
            }
        }
    }
    if (marked >= 0) s->mod[marked].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
}

static void rk_scenario(zs_scenario *s, unsigned policy_mask, int ga, rk_res *R, zs_world_result *wr) {
    s->cfg.world_size = 2;
    s->cfg.rank = 0;
    s->cfg.all_ranks = 1;
    s->n_edits = 0;
    R->bases++;
    rk_try(s, ZS_EDIT_KINDS, policy_mask, ga, R, wr);
    s->n_edits = 1;
    zs_rank_edit *e = &s->edit[0];
    for (unsigned si = 0; si < s->n_steps; si++) {
        memset(e, 0, sizeof *e);
        e->rank = 1;
        e->kind = ZS_EDIT_SKIP_STEP;
        e->step = (uint8_t)si;
        rk_try(s, ZS_EDIT_SKIP_STEP, policy_mask, ga, R, wr);
        for (unsigned pi = 0; pi < s->step[si].n_passes; pi++) {
            const zs_pass *P = &s->step[si].pass[pi];
            for (unsigned c = 0; c < P->n_calls; c++) {
                memset(e, 0, sizeof *e);
                e->rank = 1;
                e->step = (uint8_t)si;
                e->pass = (uint8_t)pi;
                e->call = (uint8_t)c;
                for (unsigned k = ZS_EDIT_SKIP; k <= ZS_EDIT_RAISE; k++) {
                    e->kind = (uint8_t)k;
                    e->module = 0;
                    rk_try(s, k, policy_mask, ga, R, wr);
                }
                unsigned base = P->calls[c].module;
                unsigned parent = s->mod[base].parent;
                if (parent == ZS_NONE) continue;
                e->kind = ZS_EDIT_ROUTE;
                for (unsigned m = 0; m < s->n_modules; m++) {
                    if (m == base || s->mod[m].parent != parent) continue;
                    e->module = (uint8_t)m;
                    rk_try(s, ZS_EDIT_ROUTE, policy_mask, ga, R, wr);
                }
            }
        }
    }
    s->n_edits = 0;
}

static int rk_main(const char *prog, const zo_enum_bounds *b, unsigned policy_mask, int ga, int verify, int quiet) {
    zo_enum_gen *g = calloc(1, sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    zs_world_result *wr = malloc(sizeof *wr);
    rk_res *R = calloc(1, sizeof *R);
    if (!g || !s || !wr || !R || zo_enum_gen_init(g, b)) {
        fprintf(stderr, "%s: bad bounds or out of memory\n", prog);
        free(g);
        zs_scenario_free(s);
        free(s);
        free(wr);
        free(R);
        return 2;
    }
    R->verify = verify;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (zo_enum_next(g, s)) {
        rk_scenario(s, policy_mask, ga, R, wr);
        if (!quiet && R->bases % 1000 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            fprintf(stderr, "%s: %" PRIu64 " base scenarios, %" PRIu64 " worlds, %.1f s\n", prog, R->bases, R->worlds,
                    dt);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("ranks: bound %u modules, %u calls, %u steps; W=2, one edit of rank 1 (or none)%s\n", b->max_modules,
           b->max_calls, b->max_steps, ga ? "; ROUTE edits' routers gather-always" : "");
    if (verify) printf("verify_collectives on every rank\n");
    printf("%" PRIu64 " base scenarios, %" PRIu64 " world runs (engine order, only I8), %" PRIu64
           " setup errors, %.1f s: %.0f world runs/s, %.0f base scenarios/s\n",
           R->bases, R->worlds, R->setup, dt, dt > 0 ? (double)R->worlds / dt : 0.0,
           dt > 0 ? (double)R->bases / dt : 0.0);
    if (ga) printf("routers marked gather-always: %" PRIu64 "\n", R->ga_marked);
    printf("%-10s %10s", "edit", "scenarios");
    for (int p = 0; p < 4; p++)
        if (policy_mask & (1u << p)) printf(" %18s", zs_policy_name((unsigned)p));
    printf("\n");
    for (unsigned k = 0; k < RK_KINDS; k++) {
        unsigned kk = (k + ZS_EDIT_KINDS) % RK_KINDS; /* "none" first */
        printf("%-10s %10" PRIu64, rk_kind_name(kk), R->cand[kk]);
        for (int p = 0; p < 4; p++)
            if (policy_mask & (1u << p)) printf(" %15" PRIu64 " I8", R->i8[p][kk]);
        printf("\n");
    }
    for (unsigned k = 0; k < RK_KINDS; k++)
        for (int p = 0; p < 4; p++)
            if (R->i8[p][k] && (p == 0 || !(policy_mask & 1u)))
                printf("first I8, %s edit, %s: %s\n", rk_kind_name(k), zs_policy_name((unsigned)p), R->first[p][k]);
    if (verify) {
        uint64_t tot = 0;
        for (unsigned k = 0; k < RK_KINDS; k++)
            for (int p = 0; p < 4; p++) tot += R->unguarded[p][k];
        printf("I8 with no fingerprint exchange at the first difference (the check let a "
               "diverging collective through): %" PRIu64 "\n",
               tot);
        for (unsigned k = 0; k < RK_KINDS; k++)
            for (int p = 0; p < 4; p++)
                if (R->unguarded[p][k])
                    printf("  %s edit, %s: %" PRIu64 ", first: %s\n", rk_kind_name(k), zs_policy_name((unsigned)p),
                           R->unguarded[p][k], R->first_unguarded[p][k]);
    }
    int rc = R->setup ? 1 : 0;
    free(g);
    zs_scenario_free(s);
    free(s);
    free(wr);
    free(R);
    return rc;
}

static int usage(const char *prog) {
    fprintf(stderr,
            "usage: %s [--max-modules N] [--max-calls K] [--max-steps S] [--orders engine|all]\n"
            "          [--policy P|all] [--jobs J] [--shard i/n] [--out FILE] [--cex PREFIX]\n"
            "          [--config base|tight|all] [--features all|none|LIST] [--max-runs R]\n"
            "          [--count] [--quiet]\n"
            "       %s --ranks [--gather-always] [--verify] [bound, --policy, --config, --features]\n"
            "       %s --merge FILE... [--out FILE] [--cex PREFIX]\n"
            "  N: module tree size (1..%d), K: module calls summed over every pass (1..%d),\n"
            "  S: steps (1..%d).  LIST: comma list of nograd,ckpt,raise,frozen,eval,retain,\n"
            "  accum,interleave.  Exit 0: per-call holds every invariant; 1: it does not;\n"
            "  2: usage or I/O error.\n"
            "  --ranks: W=2, every base scenario with no edit and with every single edit of\n"
            "  rank 1, run in the host world checking I8; counts I8 by edit kind and\n"
            "  policy (exit 1 only on setup errors).  --gather-always: routers of ROUTE\n"
            "  edits gather always.  --verify: verify_collectives on every rank, and\n"
            "  count the divergences no fingerprint exchange caught.\n",
            prog, prog, prog, MAX_N, MAX_K, ZS_MAX_STEPS);
    return 2;
}

/* A usage error: what was wrong, then where the usage is; exit status 2. */
static int uerr(const char *prog, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int uerr(const char *prog, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see --help)\n");
    return 2;
}

/* 0 if path can be written (an existing writable file, or a new name in
 * a writable directory), else -1 with why[] set; checked before a long run
 * so that it does not fail on the output path at the end. */
static int writable_path(const char *path, char *why, size_t cap) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(why, cap, "is a directory");
            return -1;
        }
        if (access(path, W_OK) != 0) {
            snprintf(why, cap, "%s", strerror(errno));
            return -1;
        }
        return 0;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "directory %s does not exist", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, cap, "directory %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int zo_enum_parse_features(const char *text, unsigned *mask) {
    static const char *const names[8] = {"nograd", "ckpt", "raise", "frozen", "eval", "retain", "accum", "interleave"};
    if (!text) return -1;
    if (!strcmp(text, "all")) {
        *mask = 0;
        return 0;
    }
    if (!*text) return -1; /* "none" says no feature */
    unsigned m = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        if (n == 4 && !strncmp(p, "none", 4)) found = 1;
        for (unsigned i = 0; i < 8 && !found; i++)
            if (strlen(names[i]) == n && !strncmp(p, names[i], n)) {
                m |= 1u << i;
                found = 1;
            }
        if (!found) return -1;
        p += n;
        if (*p == ',' && !*++p) return -1; /* a trailing comma */
    }
    *mask = m ? m : ZO_ENUM_F_NONE; /* 0 would mean "all" */
    return 0;
}

static int parse_uint(const char *s, unsigned *out) {
    char *e;
    errno = 0;
    unsigned long v = strtoul(s, &e, 10);
    if (errno || e == s || *e || v > 1000000) return -1;
    *out = (unsigned)v;
    return 0;
}

static void progress_line(uint64_t done, uint64_t total, double t0, int final) {
    double dt = now_s() - t0;
    double rate = dt > 0 ? (double)done / dt : 0;
    double eta = rate > 0 && total > done ? (double)(total - done) / rate : 0;
    int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
    if (fill > width) fill = width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %" PRIu64 "/%" PRIu64 " scenarios  %.0f scen/s  ETA %.0fs   %s", bar, done, total, rate,
            eta, final ? "\n" : "");
    fflush(stderr);
}

int zo_enumerate_main(int argc, char **argv) {
    const char *prog = argc > 0 ? argv[0] : "zofuzz enumerate";
    zo_enum_bounds b = {2, 3, 2, 0, 0};
    zo_enum_opts o = {ZO_ENUM_ORDERS_ENGINE, 0xF, 20000};
    unsigned jobs = 1, shard = 0, nshard = 1;
    const char *out = NULL, *cex = "enumerate-cex";
    int cex_given = 0;
    int merge = 0, count_only = 0, quiet = 0;
    int first_file = -1;
    int ranks = 0, gather_always = 0, verify = 0;
    const char *not_ranks = NULL; /* an option --ranks has no use for, as given */

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                                                        \
    do {                                                                                                               \
        if (!v) {                                                                                                      \
            return uerr(prog, "%s needs a value", a);                                                                  \
        }                                                                                                              \
        i++;                                                                                                           \
    } while (0)
        if (!strcmp(a, "--max-modules")) {
            NEEDV();
            if (parse_uint(v, &b.max_modules) || b.max_modules < 1 || b.max_modules > MAX_N)
                return uerr(prog, "--max-modules '%s' is not in 1..%d", v, MAX_N);
        } else if (!strcmp(a, "--max-calls")) {
            NEEDV();
            if (parse_uint(v, &b.max_calls) || b.max_calls < 1 || b.max_calls > MAX_K)
                return uerr(prog, "--max-calls '%s' is not in 1..%d", v, MAX_K);
        } else if (!strcmp(a, "--max-steps")) {
            NEEDV();
            if (parse_uint(v, &b.max_steps) || b.max_steps < 1 || b.max_steps > ZS_MAX_STEPS)
                return uerr(prog, "--max-steps '%s' is not in 1..%d", v, ZS_MAX_STEPS);
        } else if (!strcmp(a, "--orders")) {
            NEEDV();
            not_ranks = a;
            if (!strcmp(v, "engine"))
                o.orders = ZO_ENUM_ORDERS_ENGINE;
            else if (!strcmp(v, "all"))
                o.orders = ZO_ENUM_ORDERS_ALL;
            else
                return uerr(prog, "unknown --orders '%s' (engine, all)", v);
        } else if (!strcmp(a, "--policy")) {
            NEEDV();
            if (!strcmp(v, "all")) {
                o.policy_mask = 0xF;
            } else {
                int p = zs_policy_from_name(v);
                if (p < 0)
                    return uerr(prog,
                                "unknown policy '%s' (per-call, reset-on-forward, lazy-init, "
                                "init-at-register, all)",
                                v);
                o.policy_mask = 1u << p;
            }
        } else if (!strcmp(a, "--jobs")) {
            NEEDV();
            not_ranks = a;
            if (parse_uint(v, &jobs) || jobs < 1 || jobs > 256) return uerr(prog, "--jobs '%s' is not in 1..256", v);
        } else if (!strcmp(a, "--shard")) {
            NEEDV();
            not_ranks = a;
            char tail;
            if (sscanf(v, "%u/%u%c", &shard, &nshard, &tail) != 2 || v[0] == '-' || strchr(v, '-'))
                return uerr(prog, "--shard '%s' is not i/n", v);
            if (nshard < 1 || nshard > 100000) return uerr(prog, "--shard '%s': n must be in 1..100000", v);
            if (shard >= nshard) return uerr(prog, "--shard '%s': i must be in 0..n-1 (shards are numbered from 0)", v);
        } else if (!strcmp(a, "--config")) {
            NEEDV();
            if (!strcmp(v, "all"))
                b.config_mask = 0;
            else if (!strcmp(v, "base"))
                b.config_mask = 1;
            else if (!strcmp(v, "tight"))
                b.config_mask = 2;
            else
                return uerr(prog, "unknown --config '%s' (base, tight, all)", v);
        } else if (!strcmp(a, "--features")) {
            NEEDV();
            if (zo_enum_parse_features(v, &b.feature_mask))
                return uerr(prog,
                            "bad --features '%s' (all, none, or a comma list of nograd, ckpt, raise, "
                            "frozen, eval, retain, accum, interleave)",
                            v);
        } else if (!strcmp(a, "--out")) {
            NEEDV();
            not_ranks = a;
            out = v;
        } else if (!strcmp(a, "--cex")) {
            NEEDV();
            not_ranks = a;
            cex = v;
            cex_given = 1;
        } else if (!strcmp(a, "--max-runs")) {
            NEEDV();
            not_ranks = a;
            if (parse_uint(v, &o.max_runs) || !o.max_runs) return uerr(prog, "--max-runs '%s' is not in 1..1000000", v);
        } else if (!strcmp(a, "--merge")) {
            merge = 1;
            not_ranks = a;
        } else if (!strcmp(a, "--count")) {
            count_only = 1;
            not_ranks = a;
        } else if (!strcmp(a, "--ranks")) {
            ranks = 1;
        } else if (!strcmp(a, "--gather-always")) {
            gather_always = 1;
        } else if (!strcmp(a, "--verify")) {
            verify = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(prog);
            return 0;
        } else if (merge && a[0] != '-') {
            if (first_file < 0) first_file = i;
        } else {
            return uerr(prog, "unknown argument '%s'", a);
        }
#undef NEEDV
    }

    /* an option the chosen mode does not read is an error, never ignored */
    if (ranks && not_ranks) return uerr(prog, "--ranks does not take %s", not_ranks);
    if (!ranks && gather_always) return uerr(prog, "--gather-always needs --ranks");
    if (!ranks && verify) return uerr(prog, "--verify needs --ranks");
    if (out) {
        char why[300];
        if (writable_path(out, why, sizeof why)) return uerr(prog, "--out %s: %s", out, why);
    }
    if (cex_given) {
        /* the counterexamples are PREFIX-<policy>-<invariant>.bin: their
         * directory must be writable before the run, even one that finds none */
        char probe[4096], why[300];
        snprintf(probe, sizeof probe, "%s-per-call-I1.bin", cex);
        if (writable_path(probe, why, sizeof why)) return uerr(prog, "--cex %s: %s", cex, why);
    }
    if (ranks) return rk_main(prog, &b, o.policy_mask, gather_always, verify, quiet);

    zo_enum_results res;
    if (merge) {
        if (first_file < 0) return uerr(prog, "--merge needs at least one results FILE");
        int have = 0;
        for (int i = first_file; i < argc; i++) {
            if (argv[i][0] == '-') {
                /* an option after the files: skip it and its value */
                if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "--cex")) i++;
                continue;
            }
            struct stat fst;
            if (stat(argv[i], &fst) == 0 && S_ISDIR(fst.st_mode)) {
                if (have) zo_enum_results_free(&res);
                return uerr(prog, "--merge %s: is a directory (give results files)", argv[i]);
            }
            FILE *f = fopen(argv[i], "r");
            if (!f) {
                perror(argv[i]);
                if (have) zo_enum_results_free(&res);
                return 2;
            }
            zo_enum_results one;
            char err[200];
            int rc = zo_enum_results_read(&one, f, err, sizeof err);
            fclose(f);
            if (rc) {
                fprintf(stderr, "%s: %s: %s\n", prog, argv[i], err);
                if (have) zo_enum_results_free(&res);
                return 2;
            }
            if (!have) {
                res = one;
                have = 1;
            } else {
                if (zo_enum_results_merge(&res, &one)) {
                    fprintf(stderr, "%s: %s: different bounds/orders/policies/shard count, or a shard already merged\n",
                            prog, argv[i]);
                    zo_enum_results_free(&one);
                    zo_enum_results_free(&res);
                    return 2;
                }
                zo_enum_results_free(&one);
            }
        }
    } else {
        zo_enum_gen probe;
        if (zo_enum_gen_init(&probe, &b))
            return uerr(prog,
                        "bound out of range: --max-modules %u (1..%d), --max-calls %u (1..%d), --max-steps %u (1..%d)",
                        b.max_modules, MAX_N, b.max_calls, MAX_K, b.max_steps, ZS_MAX_STEPS);
        double tc = now_s();
        if (!quiet) {
            /* counting exactly walks every scenario: say up front how many
             * there are about, and report progress while counting */
            double est = zo_enum_estimate(&b, 4000, 0x5eedull);
            fprintf(stderr, "%s: about %.3g scenarios in the bound (estimate from 4000 random walks); counting\n", prog,
                    est);
        }
        uint64_t total = zo_enum_count_progress(&b, quiet ? NULL : stderr, 5.0);
        if (count_only) {
            printf("%" PRIu64 "\n", total);
            return 0;
        }
        if (!quiet)
            fprintf(stderr, "%s: %" PRIu64 " scenarios in the bound (counted in %.1fs), shard %u/%u, %u job(s)\n", prog,
                    total, now_s() - tc, shard, nshard, jobs);
        uint64_t mine = total / nshard + (shard < total % nshard ? 1 : 0);
        if (zo_enum_results_init(&res, &b, o.orders, o.policy_mask, nshard)) return 2;
        res.shard_seen[shard] = 1;
        double t0 = now_s();
        volatile uint64_t *prog_ctr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (prog_ctr == MAP_FAILED) {
            zo_enum_results_free(&res);
            return 2;
        }
        memset((void *)prog_ctr, 0, 4096);
        unsigned J = jobs;
        pid_t pids[256];
        char tmpl[256][64];
        for (unsigned w = 0; w < J; w++) {
            snprintf(tmpl[w], sizeof tmpl[w], "/tmp/zo-enum-%d-%u-XXXXXX", (int)getpid(), w);
            int fd = mkstemp(tmpl[w]);
            if (fd < 0) {
                perror("mkstemp");
                return 2;
            }
            close(fd);
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                perror("fork");
                return 2;
            }
            if (pid == 0) {
                zo_enum_results wr;
                if (zo_enum_results_init(&wr, &b, o.orders, o.policy_mask, nshard)) _exit(3);
                int rc = zo_enum_run_shard(&b, &o, shard, nshard, w, J, &wr, &prog_ctr[w]);
                FILE *f = fopen(tmpl[w], "w");
                if (rc || !f || zo_enum_results_write(&wr, f) || fclose(f)) _exit(3);
                _exit(0);
            }
            pids[w] = pid;
        }
        unsigned running = J;
        int failed = 0;
        double last = 0;
        while (running) {
            for (unsigned w = 0; w < J; w++) {
                if (!pids[w]) continue;
                int st;
                pid_t rp = waitpid(pids[w], &st, WNOHANG);
                if (rp == pids[w]) {
                    pids[w] = 0;
                    running--;
                    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        fprintf(stderr, "%s: worker %u failed (status %d)\n", prog, w, st);
                        failed = 1;
                    }
                }
            }
            double t = now_s();
            double every = isatty(2) ? 0.25 : 10.0;
            if (!quiet && t - last > every) {
                uint64_t done = 0;
                for (unsigned w = 0; w < J; w++) done += prog_ctr[w];
                if (!quiet) progress_line(done, mine, t0, 0);
                last = t;
            }
            if (running) usleep(50000);
        }
        uint64_t done = 0;
        for (unsigned w = 0; w < J; w++) done += prog_ctr[w];
        if (!quiet) progress_line(done, mine, t0, 1);
        munmap((void *)prog_ctr, 4096);
        for (unsigned w = 0; w < J; w++) {
            FILE *f = fopen(tmpl[w], "r");
            zo_enum_results wr;
            char err[200];
            if (!failed && f && zo_enum_results_read(&wr, f, err, sizeof err) == 0) {
                /* a worker's file covers part of this shard; the parent owns the flags */
                memset(wr.shard_seen, 0, res.shard_n);
                zo_enum_results_merge(&res, &wr);
                zo_enum_results_free(&wr);
            } else if (!failed) {
                fprintf(stderr, "%s: worker %u results unreadable\n", prog, w);
                failed = 1;
            }
            if (f) fclose(f);
            unlink(tmpl[w]);
        }
        res.seconds = now_s() - t0;
        if (failed) {
            zo_enum_results_free(&res);
            return 2;
        }
        if (!quiet)
            fprintf(stderr, "%s: %" PRIu64 " scenarios in %.1fs (%.0f scenarios/s, %u job(s))\n", prog, res.scenarios,
                    res.seconds, res.seconds > 0 ? (double)res.scenarios / res.seconds : 0.0, J);
    }
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f || zo_enum_results_write(&res, f) || fclose(f)) {
            perror(out);
            zo_enum_results_free(&res);
            return 2;
        }
    }
    int bad = zo_enum_report(&res, stdout, cex);
    zo_enum_results_free(&res);
    return bad ? 1 : 0;
}
