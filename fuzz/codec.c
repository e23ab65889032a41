/*
 * codec.c - bytes <-> scenario, one bidirectional walker.
 *
 * The walker visits a scenario as a sequence of bounded choices.  In
 * decode mode each choice reads ceil(log256(range)) bytes (little endian,
 * missing bytes read as 0, value taken modulo the range) and stores the
 * result; in encode mode it checks that the stored value lies in the same
 * range (else the scenario is invalid) and writes it.  Structure (counts,
 * candidate lists, which choices exist at all) is computed by the same
 * code in both modes, so decode(encode(s)) == s for every valid s and
 * every byte string decodes to a valid scenario.  zs_scenario_validate()
 * is "the encoder accepts s and decode(encode(s)) equals s".
 *
 * Choices are "rotated" so that a zero byte gives the most useful default
 * (e.g. n_outputs 1, loss sums output 0); see docs/scenario-model.md.
 */
#include "scenario.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct walker {
    int enc;                 /* 0 decode, 1 encode */
    const uint8_t *in;       /* decode input */
    size_t in_size, pos;     /* pos may run past in_size (missing bytes read 0) */
    uint8_t *out;            /* encode output (may be NULL: validate only) */
    size_t cap, len;
    int err;
    char msg[240];
    char where[64];          /* "step 1 pass 0 call 3" */
    char base[48];           /* "step 1 pass 0" while walking a pass */
} walker;

static void w_fail(walker *w, const char *fmt, ...)
{
    if (w->err) return;
    w->err = 1;
    char tmp[150];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (w->where[0])
        snprintf(w->msg, sizeof w->msg, "%s: %s", w->where, tmp);
    else
        snprintf(w->msg, sizeof w->msg, "%s", tmp);
}

/* Bytes needed for a choice among `range` values (range 0 means 2^64). */
static unsigned nbytes(uint64_t range)
{
    if (range == 0) return 8;
    uint64_t m = range - 1;
    unsigned n = 0;
    while (m) {
        n++;
        m >>= 8;
    }
    return n;
}

/* One raw choice in [0, range) (range 0 = full 64 bits).  Decode: returns
 * the value read.  Encode: writes v (caller guarantees v < range). */
static uint64_t w_raw(walker *w, uint64_t range, uint64_t v)
{
    unsigned n = nbytes(range);
    if (!w->enc) {
        uint64_t x = 0;
        for (unsigned i = 0; i < n; i++) {
            uint64_t b = (w->pos < w->in_size) ? w->in[w->pos] : 0;
            w->pos++;
            x |= b << (8 * i);
        }
        return range ? x % range : x;
    }
    for (unsigned i = 0; i < n; i++) {
        if (w->out && w->len < w->cap) w->out[w->len] = (uint8_t)(v >> (8 * i));
        w->len++;
    }
    return v;
}

/* Value in [lo, hi]; a zero raw choice gives def (lo <= def <= hi). */
static uint64_t w_range(walker *w, uint64_t v, uint64_t lo, uint64_t hi, uint64_t def,
                        const char *what)
{
    uint64_t range = hi - lo + 1; /* 0 if the full 64-bit range */
    if (w->enc) {
        if (v < lo || v > hi) {
            w_fail(w, "%s: value %llu not in [%llu, %llu]", what, (unsigned long long)v,
                   (unsigned long long)lo, (unsigned long long)hi);
            return v;
        }
        uint64_t r = v - def; /* modulo 2^64 */
        if (range) r = (v >= def) ? (v - def) : (v + range - def);
        w_raw(w, range, r);
        return v;
    }
    uint64_t r = w_raw(w, range, 0);
    uint64_t off = def - lo;
    if (range) return lo + (r + off) % range;
    return def + r;
}

#define W_U8(w, field, lo, hi, def, what) \
    ((field) = (uint8_t)w_range((w), (field), (lo), (hi), (def), (what)))

/* A flag that is set with probability 1/n for random bytes. */
static uint8_t w_flag(walker *w, uint8_t v, unsigned n, const char *what)
{
    if (w->enc) {
        if (v > 1) {
            w_fail(w, "%s: flag value %u not 0/1", what, v);
            return v;
        }
        w_raw(w, n, v ? n - 1 : 0);
        return v;
    }
    return w_raw(w, n, 0) == n - 1;
}

/* Index into a candidate list of n >= 1 entries; encode: idx must be < n
 * (caller passes n for "not found", which fails). */
static unsigned w_index(walker *w, unsigned idx, unsigned n, const char *what)
{
    if (n == 0) {
        w_fail(w, "%s: no candidates", what);
        return 0;
    }
    if (w->enc) {
        if (idx >= n) {
            w_fail(w, "%s: value not among the %u candidates", what, n);
            return 0;
        }
        w_raw(w, n, idx);
        return idx;
    }
    return (unsigned)w_raw(w, n, 0);
}

/* ------------------------------------------------------------------ */

static const uint8_t elem_classes[4] = {4, 2, 1, 8};

/* A count in [lo, max] drawn in three tiers, [lo, 8], [lo, 32], [lo, max]
 * (one class byte, then the value), so that random bytes give small trees
 * and parameter lists most of the time while every count stays reachable.
 * A zero class byte and zero value give def. */
static uint64_t w_count(walker *w, uint64_t v, uint64_t lo, uint64_t max, uint64_t def,
                        const char *what)
{
    static const uint64_t tier[2] = {8, 32};
    if (max <= tier[0]) return w_range(w, v, lo, max, def, what);
    uint64_t hi[3] = {tier[0], tier[1] < max ? tier[1] : max, max};
    unsigned cls = 0;
    if (w->enc)
        while (cls < 2 && v > hi[cls]) cls++;
    cls = (unsigned)w_range(w, cls, 0, 2, 0, what);
    return w_range(w, v, lo, hi[cls], def <= hi[cls] ? def : lo, what);
}

static uint64_t w_threshold(walker *w, uint64_t v, int which)
{
    const uint64_t *cls = zs_threshold_classes[which];
    unsigned idx = ZS_TH_CLASSES;
    if (w->enc)
        for (unsigned i = 0; i < ZS_TH_CLASSES; i++)
            if (cls[i] == v) {
                idx = i;
                break;
            }
    idx = (unsigned)w_range(w, idx, 0, ZS_TH_CLASSES, 0, zs_threshold_names[which]);
    if (idx < ZS_TH_CLASSES) return cls[idx];
    return w_raw(w, 0, v);
}

static void walk_config(walker *w, zs_config *c)
{
    W_U8(w, c->policy, 0, 3, 0, "policy");
    W_U8(w, c->world_size, 1, ZS_MAX_WORLD, 1, "world_size");
    W_U8(w, c->rank, 0, c->world_size ? c->world_size - 1 : 0, 0, "rank");
    if (w->enc && c->world_size == 0) w_fail(w, "world_size 0");
    c->order_mode = w_flag(w, c->order_mode, 2, "order_mode");
    c->deferred = w_flag(w, c->deferred, 2, "deferred");
    if (c->deferred)
        W_U8(w, c->progress_every, 0, ZS_MAX_PROGRESS, 0, "progress_every");
    else if (w->enc && c->progress_every)
        w_fail(w, "progress_every set without deferred");
    else
        c->progress_every = 0;
    for (int t = 0; t < ZS_TH_COUNT; t++) {
        uint64_t *f = zs_config_threshold(c, t);
        *f = w_threshold(w, *f, t);
    }
}

static void walk_modules(walker *w, zs_scenario *s)
{
    s->n_modules = (uint8_t)w_count(w, s->n_modules, 1, ZS_MAX_MODULES, 1, "n_modules");
    if (w->err) return;
    for (unsigned i = 0; i < s->n_modules && !w->err; i++) {
        zs_module *m = &s->mod[i];
        snprintf(w->where, sizeof w->where, "module %u", i);
        if (i == 0) {
            if (w->enc && m->parent != ZS_NONE) w_fail(w, "root parent must be none");
            m->parent = ZS_NONE;
        } else {
            /* candidates: i-1, then its ancestors up to the root */
            uint8_t cand[ZS_MAX_MODULES];
            unsigned n = 0, idx = ZS_MAX_MODULES;
            for (unsigned a = i - 1; a != ZS_NONE; a = s->mod[a].parent) {
                if (w->enc && a == m->parent) idx = n;
                cand[n++] = (uint8_t)a;
                if (a == 0) break;
            }
            idx = w_index(w, idx, n, "parent");
            m->parent = cand[idx];
        }
        if (w->enc && (m->flags & ~ZS_MOD_Z3_LEAF)) w_fail(w, "unknown module flags");
        m->flags = w_flag(w, m->flags & ZS_MOD_Z3_LEAF, 8, "z3_leaf") ? ZS_MOD_Z3_LEAF : 0;
    }
    w->where[0] = 0;
}

static void walk_numel(walker *w, zs_param *p)
{
    /* classes: tiny, small, up to ~1e6 (fuzzing), real-model sizes */
    static const uint32_t hi[4] = {64, 65536, 1u << 20, ZS_MAX_NUMEL};
    unsigned cls = 0;
    if (w->enc) {
        while (cls < 3 && p->numel > hi[cls]) cls++;
    }
    cls = (unsigned)w_range(w, cls, 0, 3, 0, "numel class");
    p->numel = (uint32_t)w_range(w, p->numel, 1, hi[cls], 1, "numel");
}

static void walk_params(walker *w, zs_scenario *s)
{
    s->n_params = (uint8_t)w_count(w, s->n_params, 0, ZS_MAX_PARAMS, 1, "n_params");
    for (unsigned i = 0; i < s->n_params && !w->err; i++) {
        zs_param *p = &s->par[i];
        snprintf(w->where, sizeof w->where, "param %u", i);
        W_U8(w, p->owner, 0, s->n_modules - 1, 0, "owner");
        walk_numel(w, p);
        unsigned ec = 4;
        for (unsigned k = 0; k < 4 && w->enc; k++)
            if (elem_classes[k] == p->elem_size) {
                ec = k;
                break;
            }
        ec = (unsigned)w_range(w, ec, 0, 4, 0, "elem_size class");
        if (ec < 4)
            p->elem_size = elem_classes[ec];
        else
            W_U8(w, p->elem_size, 1, ZS_MAX_ELEM_SIZE, 1, "elem_size");
        if (w->enc && (p->flags & ~ZS_PARAM_FROZEN)) w_fail(w, "unknown param flags");
        p->flags = w_flag(w, p->flags & ZS_PARAM_FROZEN, 4, "frozen") ? ZS_PARAM_FROZEN : 0;
    }
    w->where[0] = 0;
}

static void walk_uses(walker *w, zs_scenario *s)
{
    unsigned maxu = (s->n_params && s->n_modules > 1) ? ZS_MAX_USES : 0;
    unsigned n = s->n_uses;
    n = (unsigned)w_count(w, n, 0, maxu, 0, "n_uses");
    unsigned out = 0;
    for (unsigned k = 0; k < n && !w->err; k++) {
        zs_use u = w->enc ? s->use[k] : (zs_use){0, 0};
        snprintf(w->where, sizeof w->where, "use %u", k);
        u.param = (uint8_t)w_range(w, u.param, 0, s->n_params - 1, 0, "param");
        if (w->err) break;
        uint8_t cand[ZS_MAX_MODULES];
        unsigned nc = 0, idx = ZS_MAX_MODULES;
        for (unsigned m = 0; m < s->n_modules; m++) {
            if (m == s->par[u.param].owner) continue;
            int dup = 0;
            for (unsigned j = 0; j < out; j++)
                if (s->use[j].module == m && s->use[j].param == u.param) dup = 1;
            if (dup) continue;
            if (w->enc && m == u.module) idx = nc;
            cand[nc++] = (uint8_t)m;
        }
        if (nc == 0) {
            if (w->enc) w_fail(w, "module %u cannot use param %u", u.module, u.param);
            continue; /* decode: no module can take this use; drop it */
        }
        idx = w_index(w, idx, nc, "module");
        u.module = cand[idx];
        s->use[out++] = u;
    }
    s->n_uses = (uint8_t)out;
    w->where[0] = 0;
}

/* ------------------------------------------------------------------ */
/* Forward programs                                                     */
/* ------------------------------------------------------------------ */

#define UNW_NO (-1)  /* the call completed */
#define UNW_OUT (-2) /* unwound past the root call (caught outside every module) */

typedef struct prog {
    const zs_scenario *s;
    zs_pass *p;
    unsigned cursor; /* next call index in pre-order */
    int eval;
} prog;

static int ref_eq(const zs_ref *a, const zs_ref *b)
{
    return a->kind == b->kind && a->call == b->call && a->index == b->index &&
           a->detach == b->detach;
}

/* Candidate refs for the inputs of a call whose caller is `caller` (ZS_NONE
 * for the root call), made after the caller's child calls before `self`. */
static unsigned input_candidates(const prog *g, unsigned caller, unsigned self, zs_ref *cand)
{
    unsigned n = 0;
    if (caller != ZS_NONE) {
        /* outputs of the caller's earlier child calls, most recent first */
        for (unsigned j = self; j-- > caller + 1;) {
            const zs_call *c = &g->p->calls[j];
            if (c->parent != caller) continue;
            for (unsigned o = 0; o < c->n_out; o++)
                cand[n++] = (zs_ref){ZS_REF_OUT, (uint8_t)j, (uint8_t)o, 0};
        }
        const zs_call *cc = &g->p->calls[caller];
        for (unsigned i = 0; i < cc->n_in; i++) cand[n++] = (zs_ref){ZS_REF_ARG, 0, (uint8_t)i, 0};
    }
    cand[n++] = (zs_ref){ZS_REF_BATCH_RG, 0, 0, 0};
    cand[n++] = (zs_ref){ZS_REF_BATCH, 0, 0, 0};
    return n;
}

/* Candidate refs consumed by call c's own op: its wrapped inputs, then the
 * outputs of its child calls in call order. */
static unsigned use_candidates(const prog *g, unsigned c, zs_ref *cand)
{
    unsigned n = 0;
    const zs_call *cc = &g->p->calls[c];
    for (unsigned i = 0; i < cc->n_in; i++) cand[n++] = (zs_ref){ZS_REF_ARG, 0, (uint8_t)i, 0};
    for (unsigned j = c + 1; j < g->cursor; j++) {
        const zs_call *ch = &g->p->calls[j];
        if (ch->parent != c) continue;
        for (unsigned o = 0; o < ch->n_out; o++)
            cand[n++] = (zs_ref){ZS_REF_OUT, (uint8_t)j, (uint8_t)o, 0};
    }
    return n;
}

#define MAX_CAND (ZS_MAX_IN + ZS_MAX_CHILD_CALLS * ZS_MAX_OUT + ZS_MAX_OUT * ZS_MAX_CALLS + 2)

static void walk_ref(walker *w, zs_ref *r, const zs_ref *cand, unsigned n, const char *what)
{
    unsigned idx = n;
    if (w->enc) {
        zs_ref key = *r;
        key.detach = 0;
        for (unsigned k = 0; k < n; k++)
            if (ref_eq(&key, &cand[k])) {
                idx = k;
                break;
            }
    }
    idx = w_index(w, idx, n, what);
    uint8_t det = w->enc ? r->detach : 0;
    det = w_flag(w, det, 8, "detach");
    if (w->err) return;
    *r = cand[idx];
    r->detach = det;
}

static int walk_call(walker *w, prog *g, unsigned ci, int in_ckpt);

static void set_where(walker *w, unsigned ci)
{
    snprintf(w->where, sizeof w->where, "%s call %u", w->base, ci);
}

static int walk_call(walker *w, prog *g, unsigned ci, int in_ckpt)
{
    zs_pass *p = g->p;
    zs_call *c = &p->calls[ci];
    const zs_scenario *s = g->s;
    set_where(w, ci);

    /* inputs (scope of the caller) */
    zs_ref cand[MAX_CAND];
    unsigned nc = input_candidates(g, c->parent, ci, cand);
    {
        unsigned nin = c->n_in;
        /* zero byte -> 1 input */
        nin = (unsigned)w_range(w, nin, 0, ZS_MAX_IN, 1, "n_in");
        c->n_in = (uint8_t)nin;
        for (unsigned i = 0; i < nin && !w->err; i++) walk_ref(w, &c->in[i], cand, nc, "in");
    }

    /* flags */
    uint8_t fl = w->enc ? c->flags : 0;
    if (w->enc && (fl & ~ZS_CALL_FLAGS_ALL)) w_fail(w, "unknown call flags");
    uint8_t ng = w_flag(w, fl & ZS_CALL_NO_GRAD ? 1 : 0, 8, "no_grad");
    uint8_t ck = 0; /* 0 none, 1 reentrant, 2 non-reentrant */
    if (!in_ckpt && ci != 0) {
        unsigned r = 0;
        if (w->enc) {
            if ((fl & ZS_CALL_CKPT_RE) && (fl & ZS_CALL_CKPT_NRE))
                w_fail(w, "both checkpoint flags");
            r = (fl & ZS_CALL_CKPT_RE) ? 14 : (fl & ZS_CALL_CKPT_NRE) ? 15 : 0;
        }
        r = (unsigned)w_raw(w, 16, r);
        ck = r == 14 ? 1 : r == 15 ? 2 : 0;
    } else if (w->enc && (fl & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE))) {
        w_fail(w, ci == 0 ? "checkpoint on the root call" : "checkpoint inside a checkpointed call");
    }
    uint8_t rs = 0;
    if (!in_ckpt && !ck)
        rs = w_flag(w, fl & ZS_CALL_RAISE ? 1 : 0, 16, "raise");
    else if (w->enc && (fl & ZS_CALL_RAISE))
        w_fail(w, "raise inside a checkpointed call");
    if (w->err) return UNW_NO;
    c->flags = (uint8_t)((ng ? ZS_CALL_NO_GRAD : 0) | (ck == 1 ? ZS_CALL_CKPT_RE : 0) |
                         (ck == 2 ? ZS_CALL_CKPT_NRE : 0) | (rs ? ZS_CALL_RAISE : 0));

    if (rs) {
        /* catcher: the caller, its ancestors up to the root call, then outside */
        uint8_t cc[ZS_MAX_CALLS + 1];
        unsigned n = 0, idx = ZS_MAX_CALLS + 1;
        for (unsigned a = c->parent; a != ZS_NONE; a = p->calls[a].parent) {
            if (w->enc && a == c->catcher) idx = n;
            cc[n++] = (uint8_t)a;
        }
        if (w->enc && c->catcher == ZS_NONE) idx = n;
        cc[n++] = ZS_NONE;
        idx = w_index(w, idx, n, "catcher");
        c->catcher = cc[idx];
    } else {
        if (w->enc && c->catcher != ZS_NONE) w_fail(w, "catcher set without raise");
        c->catcher = ZS_NONE;
    }
    if (w->err) return UNW_NO;

    /* child calls */
    const zs_module *mod = &s->mod[c->module];
    uint8_t kids[ZS_MAX_MODULES];
    unsigned nk = 0;
    if (!(mod->flags & ZS_MOD_Z3_LEAF))
        for (unsigned m = c->module + 1; m < s->n_modules; m++)
            if (s->mod[m].parent == c->module) kids[nk++] = (uint8_t)m;
    unsigned room = ZS_MAX_CALLS - g->cursor;
    unsigned maxch = nk ? (room < ZS_MAX_CHILD_CALLS ? room : ZS_MAX_CHILD_CALLS) : 0;
    unsigned nch = 0;
    if (w->enc)
        for (unsigned j = ci + 1; j < p->n_calls; j++)
            if (p->calls[j].parent == ci) nch++;
    nch = (unsigned)w_range(w, nch, 0, maxch, 0, "n_children");
    int child_ckpt = in_ckpt || ck;
    int unw = UNW_NO;
    for (unsigned k = 0; k < nch && !w->err; k++) {
        if (g->cursor >= ZS_MAX_CALLS) break; /* decode: the pass is full (encode never gets here) */
        unsigned j = g->cursor++;
        zs_call *ch = &p->calls[j];
        if (w->enc) {
            if (j >= p->n_calls || ch->parent != ci) {
                set_where(w, j);
                w_fail(w, "calls not in pre-order (expected a child of call %u)", ci);
                break;
            }
        } else {
            memset(ch, 0, sizeof *ch);
            ch->parent = (uint8_t)ci;
        }
        unsigned idx = nk;
        for (unsigned q = 0; q < nk && w->enc; q++)
            if (kids[q] == ch->module) idx = q;
        set_where(w, j);
        idx = w_index(w, idx, nk, "callee module (must be a child of the caller's module)");
        ch->module = kids[idx];
        int r = walk_call(w, g, j, child_ckpt);
        set_where(w, ci);
        if (r == UNW_NO || r == (int)ci) continue; /* completed, or caught in this body */
        unw = r; /* unwound past this call: no further child calls (encode: leftovers
                    fail the pre-order check in walk_pass) */
        break;
    }
    if (w->err) return UNW_NO;
    /* the call raises after its body (only if its body completed) */
    if (rs && unw == UNW_NO) unw = c->catcher == ZS_NONE ? UNW_OUT : c->catcher;

    if (unw != UNW_NO) {
        if (w->enc && (c->n_out || c->n_use)) w_fail(w, "unwound call has outputs or uses");
        c->n_out = 0;
        c->n_use = 0;
        return unw;
    }

    /* own op: outputs and consumed tensors */
    {
        unsigned no = c->n_out;
        no = (unsigned)w_range(w, no, 0, ZS_MAX_OUT, 1, "n_out");
        c->n_out = (uint8_t)no;
    }
    nc = use_candidates(g, ci, cand);
    unsigned nall = nc < ZS_MAX_USE ? nc : ZS_MAX_USE;
    unsigned mode = 1;
    if (w->enc) {
        mode = 0;
        if (c->n_use != nall) mode = 1;
        for (unsigned k = 0; k < c->n_use && !mode; k++)
            if (!ref_eq(&c->use[k], &cand[k])) mode = 1;
    }
    mode = (unsigned)w_raw(w, 2, mode);
    if (mode == 0) {
        c->n_use = (uint8_t)nall;
        for (unsigned k = 0; k < nall; k++) c->use[k] = cand[k];
    } else {
        unsigned nu = c->n_use;
        nu = (unsigned)w_range(w, nu, 0, nc ? ZS_MAX_USE : 0, nc ? 1 : 0, "n_use");
        c->n_use = (uint8_t)nu;
        for (unsigned k = 0; k < nu && !w->err; k++) walk_ref(w, &c->use[k], cand, nc, "use");
    }
    return UNW_NO;
}

static void walk_pass(walker *w, zs_scenario *s, zs_step *st, unsigned si, unsigned pi)
{
    zs_pass *p = &st->pass[pi];
    prog g = {s, p, 1, st->kind == ZS_STEP_EVAL};
    snprintf(w->base, sizeof w->base, "step %u pass %u", si, pi);
    if (w->enc) {
        if (p->n_calls < 1 || p->n_calls > ZS_MAX_CALLS) {
            snprintf(w->where, sizeof w->where, "%s", w->base);
            w_fail(w, "n_calls %u not in [1, %u]", p->n_calls, ZS_MAX_CALLS);
            return;
        }
        if (p->calls[0].module != 0 || p->calls[0].parent != ZS_NONE) {
            set_where(w, 0);
            w_fail(w, "call 0 must be the root module called by the step");
            return;
        }
    } else {
        memset(&p->calls[0], 0, sizeof p->calls[0]);
        p->calls[0].parent = ZS_NONE;
        p->calls[0].module = 0;
    }
    int r = walk_call(w, &g, 0, 0);
    if (w->err) return;
    if (w->enc && g.cursor != p->n_calls) {
        set_where(w, g.cursor);
        w_fail(w, "call not reachable in pre-order (bad parent, or after an unwinding raise)");
        return;
    }
    p->n_calls = (uint8_t)g.cursor;
    snprintf(w->where, sizeof w->where, "%s", w->base);
    if (r == UNW_NO && st->kind != ZS_STEP_EVAL) {
        unsigned n = p->calls[0].n_out;
        unsigned hi = (1u << n) - 1;
        W_U8(w, p->loss_mask, 0, hi, hi ? 1 : 0, "loss_mask");
    } else {
        if (w->enc && p->loss_mask) w_fail(w, "loss_mask set without a loss");
        p->loss_mask = 0;
    }
    w->where[0] = 0;
}

static void walk_steps(walker *w, zs_scenario *s)
{
    W_U8(w, s->n_steps, 1, ZS_MAX_STEPS, 1, "n_steps");
    for (unsigned i = 0; i < s->n_steps && !w->err; i++) {
        zs_step *st = &s->step[i];
        snprintf(w->where, sizeof w->where, "step %u", i);
        W_U8(w, st->kind, 0, ZS_STEP_KINDS - 1, 0, "kind");
        if (st->kind == ZS_STEP_ACCUM || st->kind == ZS_STEP_INTERLEAVE)
            W_U8(w, st->n_passes, 2, ZS_MAX_PASSES, 2, "n_passes");
        else {
            if (w->enc && st->n_passes != 1) w_fail(w, "n_passes must be 1 for this kind");
            st->n_passes = 1;
        }
        for (unsigned k = 0; k < st->n_passes && !w->err; k++) walk_pass(w, s, st, i, k);
    }
    w->where[0] = 0;
}

static void walk(walker *w, zs_scenario *s)
{
    walk_config(w, &s->cfg);
    if (!w->err) walk_modules(w, s);
    if (!w->err) walk_params(w, s);
    if (!w->err) walk_uses(w, s);
    if (!w->err) walk_steps(w, s);
    if (w->err) return;
    if (s->cfg.order_mode == ZS_ORDER_FUZZED) {
        if (w->enc) {
            if (s->n_order > ZS_MAX_ORDER) {
                w_fail(w, "n_order %u > %u", s->n_order, ZS_MAX_ORDER);
                return;
            }
            for (unsigned k = 0; k < s->n_order; k++) w_raw(w, 256, s->order[k]);
        } else {
            size_t left = w->pos < w->in_size ? w->in_size - w->pos : 0;
            if (left > ZS_MAX_ORDER) left = ZS_MAX_ORDER;
            memcpy(s->order, w->in + w->pos, left);
            w->pos += left;
            s->n_order = (uint16_t)left;
        }
    } else {
        if (w->enc && s->n_order) w_fail(w, "order bytes without order_mode fuzzed");
        s->n_order = 0;
    }
}

size_t zs_decode(const uint8_t *data, size_t size, zs_scenario *out)
{
    walker w;
    memset(&w, 0, sizeof w);
    w.in = data;
    w.in_size = data ? size : 0;
    /* Clear everything but the steps (the walker initialises every step,
     * pass and call it decodes; unused slots are never read): keeps a
     * decode cheap although the struct is ~0.5 MB. */
    memset(out, 0, offsetof(zs_scenario, step));
    out->n_order = 0;
    walk(&w, out);
    return w.pos < w.in_size ? w.pos : w.in_size;
}

static size_t encode_impl(const zs_scenario *s, uint8_t *buf, size_t cap, char *err, size_t errlen)
{
    walker w;
    memset(&w, 0, sizeof w);
    w.enc = 1;
    w.out = buf;
    w.cap = buf ? cap : 0;
    /* the walker writes normalised fields back; work on a copy */
    static _Thread_local zs_scenario tmp;
    tmp = *s;
    walk(&w, &tmp);
    if (w.err) {
        if (err && errlen) snprintf(err, errlen, "%s", w.msg);
        return 0;
    }
    return w.len; /* >= 1: the config always takes bytes */
}

size_t zs_encode(const zs_scenario *s, uint8_t *buf, size_t cap)
{
    return encode_impl(s, buf, cap, NULL, 0);
}

int zs_scenario_validate(const zs_scenario *s, char *err, size_t errlen)
{
    static _Thread_local uint8_t buf[ZS_ENCODE_MAX];
    static _Thread_local zs_scenario back;
    if (err && errlen) err[0] = 0;
    size_t n = encode_impl(s, buf, sizeof buf, err, errlen);
    if (n == 0) return -1;
    if (n > sizeof buf) {
        if (err && errlen) snprintf(err, errlen, "encoding larger than ZS_ENCODE_MAX");
        return -1;
    }
    zs_decode(buf, n, &back);
    if (!zs_scenario_equal(s, &back)) {
        if (err && errlen)
            snprintf(err, errlen, "a field outside the model (unused-slot or normalised value differs)");
        return -1;
    }
    return 0;
}
