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
#include "ranks.h"
#include "scenario.h"
#include "zoffload.h" /* ZO_GRADS_POLICY_COUNT */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct walker {
    int enc;             /* 0 decode, 1 encode */
    const uint8_t *in;   /* decode input */
    size_t in_size, pos; /* pos may run past in_size (missing bytes read 0) */
    uint8_t *out;        /* encode output (may be NULL: validate only) */
    size_t cap, len;
    int err;
    int ext_ok; /* encode for validation: keyword/mixed inputs allowed (.scn only) */
    /* Bounds of this walk: the byte codec's ZS_CODEC_MAX_* (decode, zs_encode: the
     * byte layout depends on them) or the model's ZS_MAX_* (zs_scenario_validate). */
    unsigned max_modules, max_params, max_uses, max_calls, max_child;
    int nomem; /* an allocation failed (decode returns ZS_DECODE_NOMEM) */
    /* candidate references of the call being walked: cand_inline holds what
     * the codec's bounds allow; larger lists (validation of a big .scn) get
     * a heap buffer, freed by walker_done */
    zs_ref *cand;
    unsigned cand_cap;
    zs_ref cand_inline[ZS_MAX_IN + ZS_MAX_KW + ZS_CODEC_MAX_CHILD_CALLS * ZS_MAX_OUT + 2];
    char msg[240];
    /* where the walk is, for messages ("step 1 pass 0 call 3"): kept as
     * numbers, formatted only by w_fail */
    uint8_t loc;                 /* WL_* */
    unsigned loc_i;              /* the module, param, use, step, edit or call */
    unsigned loc_step, loc_pass; /* the pass walked (WL_PASS, WL_CALL) */
} walker;

enum { WL_NONE, WL_MODULE, WL_PARAM, WL_USE, WL_STEP, WL_PASS, WL_CALL, WL_EDIT };

_Static_assert(ZS_MAX_IN + ZS_MAX_KW + ZS_CODEC_MAX_CHILD_CALLS * ZS_MAX_OUT + 2 <=
                   sizeof((walker *)0)->cand_inline / sizeof(zs_ref),
               "a decoded call's candidate lists fit cand_inline (w_fits_inline)");

static void set_loc(walker *w, unsigned kind, unsigned i) {
    w->loc = (uint8_t)kind;
    w->loc_i = i;
}

static void limits_codec(walker *w) {
    w->max_modules = ZS_CODEC_MAX_MODULES;
    w->max_params = ZS_CODEC_MAX_PARAMS;
    w->max_uses = ZS_CODEC_MAX_USES;
    w->max_calls = ZS_CODEC_MAX_CALLS;
    w->max_child = ZS_CODEC_MAX_CHILD_CALLS;
}

static void limits_model(walker *w) {
    w->max_modules = ZS_MAX_MODULES;
    w->max_params = ZS_MAX_PARAMS;
    w->max_uses = ZS_MAX_USES;
    w->max_calls = ZS_MAX_CALLS;
    w->max_child = ZS_MAX_CHILD_CALLS;
}

static void w_fail(walker *w, const char *fmt, ...) {
    if (w->err) return;
    w->err = 1;
    char tmp[150];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    char where[64];
    switch (w->loc) {
    case WL_MODULE: snprintf(where, sizeof where, "module %u", w->loc_i); break;
    case WL_PARAM: snprintf(where, sizeof where, "param %u", w->loc_i); break;
    case WL_USE: snprintf(where, sizeof where, "use %u", w->loc_i); break;
    case WL_STEP: snprintf(where, sizeof where, "step %u", w->loc_i); break;
    case WL_PASS: snprintf(where, sizeof where, "step %u pass %u", w->loc_step, w->loc_pass); break;
    case WL_CALL: snprintf(where, sizeof where, "step %u pass %u call %u", w->loc_step, w->loc_pass, w->loc_i); break;
    case WL_EDIT: snprintf(where, sizeof where, "edit %u", w->loc_i); break;
    default: where[0] = 0;
    }
    if (where[0])
        snprintf(w->msg, sizeof w->msg, "%s: %s", where, tmp);
    else
        snprintf(w->msg, sizeof w->msg, "%s", tmp);
}

static void walker_init(walker *w) {
    memset(w, 0, sizeof *w);
    w->cand = w->cand_inline;
    w->cand_cap = sizeof w->cand_inline / sizeof w->cand_inline[0];
}

static void walker_done(walker *w) {
    if (w->cand != w->cand_inline) free(w->cand);
    w->cand = w->cand_inline;
}

static void w_nomem(walker *w) {
    w->nomem = 1;
    w_fail(w, "out of memory");
}

/* Scratch for n zs_id entries: buf (inline, cap entries) or the heap; NULL
 * (and w failed) if out of memory.  Release with scratch_free. */
static zs_id *scratch(walker *w, zs_id *buf, size_t cap, size_t n) {
    if (n <= cap) return buf;
    zs_id *p = malloc(n * sizeof *p);
    if (!p) w_nomem(w);
    return p;
}

static void scratch_free(zs_id *p, const zs_id *buf) {
    if (p != buf) free(p);
}

/* Bytes needed for a choice among `range` values (range 0 means 2^64):
 * those of range - 1's significant bits (every choice takes this, so no
 * loop over the bytes) */
static unsigned nbytes(uint64_t range) {
    if (range == 0) return 8;
    uint64_t m = range - 1;
    if (!m) return 0;
#if defined(__GNUC__)
    return (unsigned)(64 - __builtin_clzll(m) + 7) / 8;
#else
    unsigned n = 0;
    while (m) {
        n++;
        m >>= 8;
    }
    return n;
#endif
}

/* One raw choice in [0, range) (range 0 = full 64 bits).  Decode: returns
 * the value read.  Encode: writes v (caller guarantees v < range). */
static uint64_t w_raw(walker *w, uint64_t range, uint64_t v) {
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
static uint64_t w_range(walker *w, uint64_t v, uint64_t lo, uint64_t hi, uint64_t def, const char *what) {
    uint64_t range = hi - lo + 1; /* 0 if the full 64-bit range */
    if (w->enc) {
        if (v < lo || v > hi) {
            w_fail(w, "%s: value %llu not in [%llu, %llu]", what, (unsigned long long)v, (unsigned long long)lo,
                   (unsigned long long)hi);
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

#define W_U8(w, field, lo, hi, def, what) ((field) = (uint8_t)w_range((w), (field), (lo), (hi), (def), (what)))

/* A flag that is set with probability 1/n for random bytes. */
static uint8_t w_flag(walker *w, uint8_t v, unsigned n, const char *what) {
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
static unsigned w_index(walker *w, unsigned idx, unsigned n, const char *what) {
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
static uint64_t w_count(walker *w, uint64_t v, uint64_t lo, uint64_t max, uint64_t def, const char *what) {
    static const uint64_t tier[2] = {8, 32};
    if (max <= tier[0]) return w_range(w, v, lo, max, def, what);
    uint64_t hi[3] = {tier[0], tier[1] < max ? tier[1] : max, max};
    unsigned cls = 0;
    if (w->enc)
        while (cls < 2 && v > hi[cls]) cls++;
    cls = (unsigned)w_range(w, cls, 0, 2, 0, what);
    return w_range(w, v, lo, hi[cls], def <= hi[cls] ? def : lo, what);
}

static uint64_t w_threshold(walker *w, uint64_t v, int which) {
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

static void walk_config(walker *w, zs_config *c) {
    W_U8(w, c->policy, 0, ZO_GRADS_POLICY_COUNT - 1, 0, "policy");
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

static void walk_modules(walker *w, zs_scenario *s) {
    s->n_modules = (uint32_t)w_count(w, s->n_modules, 1, w->max_modules, 1, "n_modules");
    if (w->err) return;
    if (!w->enc) memset(s->mod, 0, s->n_modules * sizeof *s->mod); /* the slots it fills, cleared */
    unsigned depth = 0; /* decode: module i-1's depth (its parent candidates are its chain to the root) */
    for (unsigned i = 0; i < s->n_modules && !w->err; i++) {
        zs_module *m = &s->mod[i];
        set_loc(w, WL_MODULE, i);
        if (i == 0) {
            if (w->enc && m->parent != ZS_NONE) w_fail(w, "root parent must be none");
            m->parent = ZS_NONE;
        } else {
            unsigned n = w->enc ? zs_parent_count(s, i) : depth + 1;
            unsigned idx = w->enc ? zs_parent_index(s, i, m->parent) : n;
            idx = w_index(w, idx, n, "parent");
            if (w->err) break;
            m->parent = zs_parent_at(s, i, idx);
            depth = depth + 1 - idx; /* the parent is idx steps up from module i-1 */
        }
        if (w->enc && (m->flags & ~(ZS_MOD_Z3_LEAF | ZS_MOD_GATHER_ALWAYS))) w_fail(w, "unknown module flags");
        /* gather-always is walked in the tail (walk_gather); decode sets it there */
        uint8_t ga = w->enc ? (uint8_t)(m->flags & ZS_MOD_GATHER_ALWAYS) : 0;
        m->flags = (uint8_t)((w_flag(w, m->flags & ZS_MOD_Z3_LEAF, 8, "z3_leaf") ? ZS_MOD_Z3_LEAF : 0) | ga);
    }
    set_loc(w, WL_NONE, 0);
}

static void walk_numel(walker *w, zs_param *p) {
    /* classes: tiny, small, up to ~1e6 (fuzzing), real-model sizes */
    static const uint32_t hi[4] = {64, 65536, 1u << 20, ZS_MAX_NUMEL};
    unsigned cls = 0;
    if (w->enc) {
        while (cls < 3 && p->numel > hi[cls]) cls++;
    }
    cls = (unsigned)w_range(w, cls, 0, 3, 0, "numel class");
    p->numel = (uint32_t)w_range(w, p->numel, 1, hi[cls], 1, "numel");
}

static void walk_params(walker *w, zs_scenario *s) {
    s->n_params = (uint32_t)w_count(w, s->n_params, 0, w->max_params, 1, "n_params");
    if (!w->enc) memset(s->par, 0, s->n_params * sizeof *s->par);
    for (unsigned i = 0; i < s->n_params && !w->err; i++) {
        zs_param *p = &s->par[i];
        set_loc(w, WL_PARAM, i);
        p->owner = (zs_id)w_range(w, p->owner, 0, s->n_modules - 1, 0, "owner");
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
    set_loc(w, WL_NONE, 0);
}

static void walk_uses(walker *w, zs_scenario *s) {
    unsigned maxu = (s->n_params && s->n_modules > 1) ? w->max_uses : 0;
    unsigned n = s->n_uses;
    n = (unsigned)w_count(w, n, 0, maxu, 0, "n_uses");
    unsigned out = 0;
    for (unsigned k = 0; k < n && !w->err; k++) {
        zs_use u = w->enc ? s->use[k] : (zs_use){0, 0};
        set_loc(w, WL_USE, k);
        u.param = (zs_id)w_range(w, u.param, 0, s->n_params - 1, 0, "param");
        if (w->err) break;
        zs_id cbuf[ZS_CODEC_MAX_MODULES];
        zs_id *cand = scratch(w, cbuf, ZS_CODEC_MAX_MODULES, s->n_modules);
        if (!cand) break;
        unsigned nc = 0, idx = s->n_modules;
        for (unsigned m = 0; m < s->n_modules; m++) {
            if (m == s->par[u.param].owner) continue;
            int dup = 0;
            for (unsigned j = 0; j < out; j++)
                if (s->use[j].module == m && s->use[j].param == u.param) dup = 1;
            if (dup) continue;
            if (w->enc && m == u.module) idx = nc;
            cand[nc++] = (zs_id)m;
        }
        if (nc == 0) {
            scratch_free(cand, cbuf);
            if (w->enc) w_fail(w, "module %u cannot use param %u", u.module, u.param);
            continue; /* decode: no module can take this use; drop it */
        }
        idx = w_index(w, idx, nc, "module");
        u.module = cand[idx];
        scratch_free(cand, cbuf);
        s->use[out++] = u;
    }
    s->n_uses = (uint32_t)out;
    set_loc(w, WL_NONE, 0);
}

/* ------------------------------------------------------------------ */
/* Forward programs                                                     */
/* ------------------------------------------------------------------ */

#define UNW_NO  ZS_UNWIND_NONE
#define UNW_OUT ZS_UNWIND_OUT

typedef struct prog {
    const zs_scenario *s;
    zs_pass *p;
    unsigned cursor; /* next call index in pre-order */
    int eval;
} prog;

static int ref_eq(const zs_ref *a, const zs_ref *b) {
    return a->kind == b->kind && a->call == b->call && a->index == b->index && a->detach == b->detach &&
           a->raw == b->raw;
}

/* Candidates of an input of call `self` (caller `caller`) and of call c's
 * own op (its child calls are the ones before the cursor): the rules of
 * zs_input_candidates and zs_use_candidates. */
static unsigned input_candidates(const prog *g, unsigned caller, unsigned self, zs_ref *cand) {
    return zs_input_candidates(g->p, caller, self, cand);
}

static unsigned use_candidates(const prog *g, unsigned c, zs_ref *cand) {
    return zs_use_candidates(g->p, c, g->cursor, cand);
}

/* Validation of a scenario beyond the byte codec's bounds (zs_scenario_validate
 * with the model's limits; no bytes are written): a reference is checked
 * where it points (zs_ref_in_scope) instead of being looked up in the
 * candidate list, which grows with the caller's child calls (the list per
 * call made validation quadratic in the calls of a pass).  The same
 * references are accepted. */
static int w_direct(const walker *w) { return w->enc && !w->out && w->max_calls > ZS_CODEC_MAX_CALLS; }

/* walk_ref of a validation by w_direct: the same checks and messages */
static void walk_ref_direct(walker *w, const prog *g, unsigned caller, unsigned self, int use, zs_ref *r,
                            const char *what) {
    uint8_t raw = r->raw;
    if (raw && (!w->ext_ok || r->kind != ZS_REF_OUT || raw != 1))
        w_fail(w, "%s: a raw output (outK.J.raw) %s", what,
               !w->ext_ok ? "has no fuzzer-byte encoding (.scn text only)" : "must be an outK.J reference");
    zs_ref key = *r;
    key.detach = 0;
    key.raw = 0;
    if (!w->err && !zs_ref_in_scope(g->p, caller, use ? g->cursor : self, use, &key)) {
        unsigned n = use ? use_candidates(g, caller, NULL) : input_candidates(g, caller, self, NULL);
        if (n == 0)
            w_fail(w, "%s: no candidates", what);
        else
            w_fail(w, "%s: value not among the %u candidates", what, n);
    }
    (void)w_flag(w, r->detach, 8, "detach");
}

/* Decoding within the codec's bounds, a candidate list (at most
 * ZS_CODEC_MAX_CHILD_CALLS children's outputs, the caller's inputs and the
 * batch) always fits the inline buffer, so it is filled without counting
 * it first. */
static int w_fits_inline(const walker *w) { return !w->enc && w->max_child <= ZS_CODEC_MAX_CHILD_CALLS; }

/* w->cand with room for n references (NULL and w failed if out of memory).
 * One buffer serves every call of the walk: a call fills it, uses it, and
 * fills it again after its child calls (which overwrite it). */
static zs_ref *cand_room(walker *w, unsigned n) {
    if (n <= w->cand_cap) return w->cand;
    zs_ref *q = malloc((size_t)n * sizeof *q);
    if (!q) {
        w_nomem(w);
        return NULL;
    }
    if (w->cand != w->cand_inline) free(w->cand);
    w->cand = q;
    w->cand_cap = n;
    return q;
}


static void walk_ref(walker *w, zs_ref *r, const zs_ref *cand, unsigned n, const char *what) {
    unsigned idx = n;
    uint8_t raw = w->enc ? r->raw : 0; /* .scn only: validated, never encoded */
    if (raw && (!w->ext_ok || r->kind != ZS_REF_OUT || raw != 1))
        w_fail(w, "%s: a raw output (outK.J.raw) %s", what,
               !w->ext_ok ? "has no fuzzer-byte encoding (.scn text only)" : "must be an outK.J reference");
    if (w->enc) {
        zs_ref key = *r;
        key.detach = 0;
        key.raw = 0;
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
    r->raw = raw;
}

static int walk_call(walker *w, prog *g, unsigned ci, int in_ckpt);

static void set_where(walker *w, unsigned ci) { set_loc(w, WL_CALL, ci); }

/* A mixed input's parameter term (ZS_REF_PARAM, .scn only): a parameter
 * the caller's module reads (zs_module_param_set of `caller_mod`). */
static void walk_param_term(walker *w, const zs_scenario *s, unsigned caller_mod, const zs_ref *r, unsigned k) {
    if (r->detach || r->index) {
        w_fail(w, "mix[%u]: a parameter term has no output index and no .detach", k);
        return;
    }
    if (r->call >= s->n_params) {
        w_fail(w, "mix[%u]: parameter %u of %u", k, r->call, s->n_params);
        return;
    }
    zs_id *ps = malloc(((size_t)s->n_params + 1) * sizeof *ps);
    if (!ps) {
        w_nomem(w);
        return;
    }
    int n = zs_module_param_set(s, caller_mod, ps);
    int found = 0;
    for (int q = 0; q < n; q++) found |= ps[q] == r->call;
    free(ps);
    if (!found) w_fail(w, "mix[%u]: parameter %u is not read by the caller's module %u", k, r->call, caller_mod);
}

static int walk_call(walker *w, prog *g, unsigned ci, int in_ckpt) {
    zs_pass *p = g->p;
    zs_call *c = &p->calls[ci];
    const zs_scenario *s = g->s;
    set_where(w, ci);

    /* inputs (scope of the caller) */
    const int direct = w_direct(w);
    zs_ref *cand = NULL;
    unsigned nc = 0;
    if (!direct) {
        cand = w_fits_inline(w) ? w->cand : cand_room(w, input_candidates(g, c->parent, ci, NULL));
        if (!cand) return UNW_NO;
        nc = input_candidates(g, c->parent, ci, cand);
    }
#define WALK_IN_REF(r, what)                                                                                           \
    (direct ? walk_ref_direct(w, g, c->parent, ci, 0, (r), (what)) : walk_ref(w, (r), cand, nc, (what)))
    {
        unsigned nin = c->n_in;
        /* zero byte -> 1 input */
        nin = (unsigned)w_range(w, nin, 0, ZS_MAX_IN, 1, "n_in");
        c->n_in = (uint8_t)nin;
        for (unsigned i = 0; i < nin && !w->err; i++) WALK_IN_REF(&c->in[i], "in");
    }

    /* flags */
    uint8_t fl = w->enc ? c->flags : 0;
    if (w->enc && (fl & ~(ZS_CALL_FLAGS_ALL | ZS_CALL_CKPT_BODY))) w_fail(w, "unknown call flags");
    uint8_t ng = w_flag(w, fl & ZS_CALL_NO_GRAD ? 1 : 0, 8, "no_grad");
    uint8_t ck = 0; /* 0 none, 1 reentrant, 2 non-reentrant */
    if (zs_call_may_checkpoint(ci, in_ckpt)) {
        unsigned r = 0;
        if (w->enc) {
            if ((fl & ZS_CALL_CKPT_RE) && (fl & ZS_CALL_CKPT_NRE)) w_fail(w, "both checkpoint flags");
            r = (fl & ZS_CALL_CKPT_RE) ? 14 : (fl & ZS_CALL_CKPT_NRE) ? 15 : 0;
        }
        r = (unsigned)w_raw(w, 16, r);
        ck = r == 14 ? 1 : r == 15 ? 2 : 0;
    } else if (w->enc && (fl & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE))) {
        w_fail(w, ci == 0 ? "checkpoint on the root call" : "checkpoint inside a checkpointed call");
    }
    uint8_t rs = 0;
    if (zs_call_may_raise(in_ckpt, ck))
        rs = w_flag(w, fl & ZS_CALL_RAISE ? 1 : 0, 16, "raise");
    else if (w->enc && (fl & ZS_CALL_RAISE))
        w_fail(w, "raise inside a checkpointed call");
    /* a checkpointed body: .scn only, like keyword inputs */
    uint8_t body = 0;
    if (w->enc && (fl & ZS_CALL_CKPT_BODY)) {
        if (!w->ext_ok)
            w_fail(w, "a checkpointed body has no fuzzer-byte encoding (.scn text only)");
        else if (!ck)
            w_fail(w, "checkpointed body without a checkpoint kind (reentrant or non-reentrant)");
        body = 1;
    }
    if (w->err) return UNW_NO;
    c->flags = (uint8_t)((ng ? ZS_CALL_NO_GRAD : 0) | (ck == 1 ? ZS_CALL_CKPT_RE : 0) |
                         (ck == 2 ? ZS_CALL_CKPT_NRE : 0) | (rs ? ZS_CALL_RAISE : 0) | (body ? ZS_CALL_CKPT_BODY : 0));

    if (rs) {
        unsigned n = zs_catcher_count(p, c->parent);
        unsigned idx = w->enc ? zs_catcher_index(p, c->parent, c->catcher) : n;
        idx = w_index(w, idx, n, "catcher");
        if (w->err) return UNW_NO;
        c->catcher = zs_catcher_at(p, c->parent, idx);
    } else {
        if (w->enc && c->catcher != ZS_NONE) w_fail(w, "catcher set without raise");
        c->catcher = ZS_NONE;
    }
    if (w->err) return UNW_NO;

    /* keyword and mixed inputs: .scn only (validated here, never encoded) */
    if (!w->enc) {
        c->n_kw = 0;
        c->n_mix = 0;
    } else if (c->n_kw || c->n_mix) {
        if (!w->ext_ok)
            w_fail(w, "keyword or mixed inputs have no fuzzer-byte encoding (.scn text only)");
        else if (ci == 0)
            w_fail(w, "keyword or mixed inputs on the root call");
        else if (ck)
            w_fail(w, "keyword or mixed inputs on a checkpointed call");
        else if (c->n_kw > ZS_MAX_KW)
            w_fail(w, "n_kw %u > %u", c->n_kw, ZS_MAX_KW);
        else if (c->n_mix > ZS_MAX_MIX)
            w_fail(w, "n_mix %u > %u", c->n_mix, ZS_MAX_MIX);
        for (unsigned k = 0; k < c->n_kw && !w->err; k++) WALK_IN_REF(&c->kw[k], "kw");
        for (unsigned k = 0; k < c->n_mix && !w->err; k++) {
            if (c->mix[k].slot >= (unsigned)c->n_in + c->n_kw)
                w_fail(w, "mix[%u]: slot %u: the call has %u inputs", k, c->mix[k].slot, (unsigned)c->n_in + c->n_kw);
            else if (k && c->mix[k].slot < c->mix[k - 1].slot)
                w_fail(w, "mix[%u]: slots not ascending", k);
            else if (c->mix[k].ref.kind == ZS_REF_PARAM)
                walk_param_term(w, s, p->calls[c->parent].module, &c->mix[k].ref, k);
            else
                WALK_IN_REF(&c->mix[k].ref, "mix");
        }
        if (w->err) return UNW_NO;
    }

    /* child calls */
    /* (fewer modules than kbuf holds: one scan of the subtree fills it;
     * else a first one counts) */
    zs_id kbuf[ZS_CODEC_MAX_MODULES];
    zs_id *kids = kbuf;
    unsigned nk;
    if (s->n_modules <= ZS_CODEC_MAX_MODULES) {
        nk = zs_callee_candidates(s, c->module, kbuf);
    } else {
        nk = zs_callee_candidates(s, c->module, NULL);
        kids = scratch(w, kbuf, ZS_CODEC_MAX_MODULES, nk);
        if (!kids) return UNW_NO;
        nk = zs_callee_candidates(s, c->module, kids);
    }
    unsigned room = w->max_calls > g->cursor ? w->max_calls - g->cursor : 0;
    unsigned maxch = nk ? (room < w->max_child ? room : w->max_child) : 0;
    unsigned nch = 0;
    if (w->enc) /* pre-order: ci's subtree ends at the first later call outside it (a
                   scenario that is not in pre-order fails below either way) */
        for (unsigned j = ci + 1; j < p->n_calls && p->calls[j].parent != ZS_NONE && p->calls[j].parent >= ci; j++)
            if (p->calls[j].parent == ci) nch++;
    nch = (unsigned)w_range(w, nch, 0, maxch, 0, "n_children");
    int child_ckpt = in_ckpt || ck;
    int unw = UNW_NO;
    for (unsigned k = 0; k < nch && !w->err; k++) {
        if (g->cursor >= w->max_calls) break; /* decode: the pass is full (encode never gets here) */
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
            ch->parent = (zs_id)ci;
        }
        unsigned idx = nk;
        for (unsigned q = 0; q < nk && w->enc; q++)
            if (kids[q] == ch->module) idx = q;
        set_where(w, j);
        idx = w_index(w, idx, nk, "callee module (must be a child of the caller's module)");
        ch->module = kids[idx];
        unw = zs_unwind_after_child(walk_call(w, g, j, child_ckpt), ci);
        set_where(w, ci);
        if (unw != UNW_NO)
            break; /* no further child calls (encode: leftovers fail the
                                     pre-order check in walk_pass) */
    }
    scratch_free(kids, kbuf);
    if (w->err) return UNW_NO;
    unw = zs_call_unwinds_to(c, unw);

    if (unw != UNW_NO) {
        if (w->enc && (c->n_out || c->n_use || c->out_norg || c->out_alias || c->op_nosave))
            w_fail(w, "unwound call has outputs or uses");
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
#undef WALK_IN_REF
    if (direct) {
        /* references checked where they point (w_direct): the same rules as
         * the candidate list's below */
        if (c->out_norg || c->out_alias || c->op_nosave) {
            if (c->op_nosave > 1) w_fail(w, "op_nosave %u not 0/1", c->op_nosave);
            if (!w->ext_ok)
                w_fail(w, "outputs without grad or aliased outputs have no fuzzer-byte encoding (.scn text only)");
            else if ((c->out_norg | c->out_alias) >> c->n_out)
                w_fail(w, "nograd/alias names an output the call does not have (n_out %u)", c->n_out);
            for (unsigned j = 0; j < c->n_out && !w->err; j++)
                if ((c->out_alias >> j) & 1u) walk_ref_direct(w, g, ci, 0, 1, &c->alias[j], "alias");
            if (w->err) return UNW_NO;
        }
        (void)w_range(w, c->n_use, 0, ZS_MAX_USE, 1, "n_use");
        for (unsigned k = 0; k < c->n_use && !w->err; k++) walk_ref_direct(w, g, ci, 0, 1, &c->use[k], "use");
        return UNW_NO;
    }
    cand = w_fits_inline(w) ? w->cand : cand_room(w, use_candidates(g, ci, NULL));
    if (!cand) return UNW_NO;
    nc = use_candidates(g, ci, cand);
    /* outputs without grad, aliased outputs: .scn only, like keyword inputs */
    if (!w->enc) {
        c->out_norg = 0;
        c->out_alias = 0;
        c->op_nosave = 0;
    } else if (c->out_norg || c->out_alias || c->op_nosave) {
        if (c->op_nosave > 1) w_fail(w, "op_nosave %u not 0/1", c->op_nosave);
        if (!w->ext_ok)
            w_fail(w, "outputs without grad or aliased outputs have no fuzzer-byte encoding (.scn text only)");
        else if ((c->out_norg | c->out_alias) >> c->n_out)
            w_fail(w, "nograd/alias names an output the call does not have (n_out %u)", c->n_out);
        for (unsigned j = 0; j < c->n_out && !w->err; j++)
            if ((c->out_alias >> j) & 1u) walk_ref(w, &c->alias[j], cand, nc, "alias");
        if (w->err) return UNW_NO;
    }
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

static void walk_pass(walker *w, zs_scenario *s, zs_step *st, unsigned si, unsigned pi) {
    zs_pass *p = &st->pass[pi];
    prog g = {s, p, 1, st->kind == ZS_STEP_EVAL};
    w->loc_step = si;
    w->loc_pass = pi;
    if (w->enc) {
        if (p->n_calls < 1 || p->n_calls > w->max_calls) {
            set_loc(w, WL_PASS, 0);
            w_fail(w, "n_calls %u not in [1, %u]", p->n_calls, w->max_calls);
            return;
        }
        if (p->calls[0].module != 0 || p->calls[0].parent != ZS_NONE) {
            set_where(w, 0);
            w_fail(w, "call 0 must be the root module called by the step");
            return;
        }
    } else {
        if (zs_pass_reserve(p, w->max_calls)) {
            w_nomem(w);
            return;
        }
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
    p->n_calls = (uint32_t)g.cursor;
    set_loc(w, WL_PASS, 0);
    if (zs_pass_has_loss(st->kind, r)) {
        unsigned n = p->calls[0].n_out;
        unsigned hi = (1u << n) - 1;
        W_U8(w, p->loss_mask, 0, hi, hi ? 1 : 0, "loss_mask");
    } else {
        if (w->enc && p->loss_mask) w_fail(w, "loss_mask set without a loss");
        p->loss_mask = 0;
    }
    set_loc(w, WL_NONE, 0);
}

static void walk_steps(walker *w, zs_scenario *s) {
    W_U8(w, s->n_steps, 1, ZS_MAX_STEPS, 1, "n_steps");
    for (unsigned i = 0; i < s->n_steps && !w->err; i++) {
        zs_step *st = &s->step[i];
        set_loc(w, WL_STEP, i);
        W_U8(w, st->kind, 0, ZS_STEP_KINDS - 1, 0, "kind");
        if (zs_step_multi_pass(st->kind))
            W_U8(w, st->n_passes, 2, ZS_MAX_PASSES, 2, "n_passes");
        else {
            if (w->enc && st->n_passes != 1) w_fail(w, "n_passes must be 1 for this kind");
            st->n_passes = 1;
        }
        for (unsigned k = 0; k < st->n_passes && !w->err; k++) walk_pass(w, s, st, i, k);
    }
    set_loc(w, WL_NONE, 0);
}

/* The rules of every pass, for a pass built outside the walker (a rank's
 * materialised copy): zs_pass_validate in scenario.h. */
int zs_pass_validate(const zs_scenario *s, unsigned si, unsigned pi, unsigned kind, const zs_pass *p, char *msg,
                     size_t msgn) {
    /* a step around p (sharing p's calls: the walker only reads them back as
     * they are, p being the caller's scratch) */
    zs_step tmp;
    memset(&tmp, 0, sizeof tmp);
    walker w;
    walker_init(&w);
    w.enc = 1;
    limits_model(&w);
    tmp.kind = (uint8_t)kind;
    tmp.n_passes = (uint8_t)(pi + 1);
    tmp.pass[pi] = *p;
    walk_pass(&w, (zs_scenario *)s, &tmp, si, pi);
    walker_done(&w);
    if (w.err) {
        if (msg && msgn) snprintf(msg, msgn, "%s", w.msg);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The tail: all_ranks, verify_collectives, gather-always, rank edits   */
/* ------------------------------------------------------------------ */

/* The tail comes after everything else (after the order bytes), so a
 * byte string that ends before it decodes exactly as it did before the
 * tail existed: missing bytes read 0 and an all-zero tail is "one rank's
 * view, no verification, no gather-always module, no edits".  The encoder
 * writes no tail at all for such scenarios, so their encodings are
 * unchanged too.  With order_mode fuzzed the decoder takes up to
 * ZS_MAX_ORDER order bytes before the tail, so the encoder pads the order
 * bytes with zeros (which mean "engine order", as missing ones do) to
 * ZS_MAX_ORDER when it writes a tail. */

/* One edit's choices.  Returns 1 if the edit exists, 0 if decode drops it
 * (no candidates for its kind). */
static int walk_edit(walker *w, const zs_scenario *s, const zs_mtree *t, zs_rank_edit *e) {
    W_U8(w, e->rank, 0, s->cfg.world_size - 1, 0, "rank");
    W_U8(w, e->kind, 0, ZS_EDIT_KINDS - 1, ZS_EDIT_ROUTE, "kind");
    W_U8(w, e->step, 0, s->n_steps - 1, 0, "step");
    if (w->err) return 0;
    if (e->kind == ZS_EDIT_SKIP_STEP) {
        if (w->enc && (e->pass || e->call || e->module)) w_fail(w, "skip-step with pass, call or module set");
        e->pass = e->call = e->module = 0;
        return !w->err;
    }
    const zs_step *st = &s->step[e->step];
    W_U8(w, e->pass, 0, st->n_passes - 1, 0, "pass");
    if (w->err) return 0;
    const zs_pass *p = &st->pass[e->pass];
    if (e->kind == ZS_EDIT_ROUTE) {
        unsigned fa = ~0u, fb = ~0u;
        zs_id oc = 0, om = 0;
        unsigned na = zs_route_scan(s, t, p, 0, ~0u, &oc, &om, e->call, e->module, &fa);
        unsigned nb = zs_route_scan(s, t, p, 1, ~0u, &oc, &om, e->call, e->module, &fb);
        if (na + nb == 0) {
            if (w->enc) w_fail(w, "route: no call of the pass has a sibling module to route to");
            return 0;
        }
        int bucket = 0;
        unsigned idx = ~0u;
        if (w->enc) {
            if (fa != ~0u)
                idx = fa;
            else if (fb != ~0u)
                bucket = 1, idx = fb;
            else {
                w_fail(w, "route: module %u is not a sibling of call %u's callee", e->module, e->call);
                return 0;
            }
        }
        if (na && nb)
            bucket = w_flag(w, (uint8_t)bucket, 8, "route to a differently shaped sibling");
        else
            bucket = na ? 0 : 1;
        idx = w_index(w, idx, bucket ? nb : na, "route (call, module)");
        if (w->err) return 0;
        zs_route_scan(s, t, p, bucket, idx, &oc, &om, ~0u, ~0u, &fa);
        e->call = oc;
        e->module = om;
        return 1;
    }
    if (w->enc && e->module) w_fail(w, "module set on a %s edit", zs_edit_kind_name(e->kind));
    e->module = 0;
    if (e->kind == ZS_EDIT_RAISE) {
        zs_id cbuf[ZS_CODEC_MAX_CALLS];
        zs_id *cand = scratch(w, cbuf, ZS_CODEC_MAX_CALLS, p->n_calls);
        if (!cand) return 0;
        int nr = zs_raise_candidates(p, cand);
        if (nr < 0) {
            scratch_free(cand, cbuf);
            w_nomem(w);
            return 0;
        }
        unsigned n = (unsigned)nr, idx = n;
        if (n == 0) {
            scratch_free(cand, cbuf);
            if (w->enc) w_fail(w, "raise: no call of the pass can raise");
            return 0;
        }
        for (unsigned k = 0; k < n && w->enc; k++)
            if (cand[k] == e->call) idx = k;
        idx = w_index(w, idx, n, "raise call");
        if (!w->err) e->call = cand[idx];
        scratch_free(cand, cbuf);
        return !w->err;
    }
    /* skip / exit: any call but the root */
    if (p->n_calls < 2) {
        if (w->enc) w_fail(w, "%s: the pass has only the root call", zs_edit_kind_name(e->kind));
        return 0;
    }
    unsigned idx = (e->call >= 1 && e->call < p->n_calls) ? e->call - 1u : p->n_calls - 1u;
    idx = w_index(w, idx, p->n_calls - 1u, "call");
    if (w->err) return 0;
    e->call = (zs_id)(idx + 1);
    return 1;
}

static void walk_edits(walker *w, zs_scenario *s) {
    zs_mtree t;
    if (zs_mtree_build(s, &t)) {
        w_nomem(w);
        return;
    }
    unsigned n = (unsigned)w_count(w, s->n_edits, 0, ZS_MAX_RANK_EDITS, 0, "n_edits");
    zs_rank_edit got[ZS_MAX_RANK_EDITS];
    unsigned ng = 0;
    for (unsigned k = 0; k < n && !w->err; k++) {
        zs_rank_edit e;
        if (w->enc)
            e = s->edit[k];
        else
            memset(&e, 0, sizeof e);
        set_loc(w, WL_EDIT, k);
        if (walk_edit(w, s, &t, &e)) got[ng++] = e;
    }
    if (w->err) {
        zs_mtree_free(&t);
        return;
    }
    if (!w->enc) zs_edits_sort(got, ng); /* decode: sort; encode: must be sorted already */
    /* keep the edits valid given the ones kept before them (decode drops the
     * others; the encoder fails on them); one scratch pass for every check */
    unsigned nk = 0;
    zs_edit_scratch scratch;
    memset(&scratch, 0, sizeof scratch);
    for (unsigned k = 0; k < ng; k++) {
        char m[360];
        zs_rank_edit e = got[k];
        if (zs_edit_check_in(s, &t, got, nk, &e, &scratch, m, sizeof m)) {
            if (w->enc) {
                set_loc(w, WL_EDIT, k);
                w_fail(w, "%s", m);
                zs_edit_scratch_free(&scratch);
                zs_mtree_free(&t);
                return;
            }
            continue;
        }
        got[nk++] = e;
    }
    zs_edit_scratch_free(&scratch);
    zs_mtree_free(&t);
    s->n_edits = (uint8_t)nk;
    for (unsigned k = 0; k < nk; k++) s->edit[k] = got[k];
    set_loc(w, WL_NONE, 0);
}

static void walk_gather(walker *w, zs_scenario *s) {
    zs_id cbuf[ZS_CODEC_MAX_MODULES], pbuf[ZS_CODEC_MAX_MODULES];
    zs_id *cand = scratch(w, cbuf, ZS_CODEC_MAX_MODULES, s->n_modules);
    zs_id *pos = cand ? scratch(w, pbuf, ZS_CODEC_MAX_MODULES, s->n_modules) : NULL;
    if (!pos) {
        if (cand) scratch_free(cand, cbuf);
        return;
    }
    unsigned nc = 0, ng = 0;
    for (unsigned m = 0; m < s->n_modules; m++) {
        uint8_t f = s->mod[m].flags;
        if (w->enc && (f & ZS_MOD_GATHER_ALWAYS)) {
            if (f & ZS_MOD_Z3_LEAF) {
                set_loc(w, WL_MODULE, m);
                w_fail(w, "gather_always together with z3_leaf");
                break;
            }
            pos[ng++] = (zs_id)nc;
        }
        if (!(f & ZS_MOD_Z3_LEAF)) cand[nc++] = (zs_id)m;
    }
    if (!w->err) ng = (unsigned)w_count(w, ng, 0, nc, 0, "n_gather_always");
    unsigned next = 0;
    for (unsigned k = 0; k < ng && next < nc && !w->err; k++) {
        unsigned idx = w->enc ? pos[k] - next : 0;
        idx = w_index(w, idx, nc - next, "gather_always module");
        if (w->err) break;
        if (!w->enc) s->mod[cand[next + idx]].flags |= ZS_MOD_GATHER_ALWAYS;
        next += idx + 1;
    }
    scratch_free(pos, pbuf);
    scratch_free(cand, cbuf);
}

static int tail_nontrivial(const zs_scenario *s) {
    if (s->cfg.all_ranks || s->cfg.verify_collectives || s->n_edits || s->cfg.torch_profile || s->cfg.ds_profile)
        return 1;
    for (unsigned m = 0; m < s->n_modules && m < ZS_MAX_MODULES; m++)
        if (s->mod[m].flags & ZS_MOD_GATHER_ALWAYS) return 1;
    return 0;
}

static void walk_tail(walker *w, zs_scenario *s) {
    zs_config *c = &s->cfg;
    set_loc(w, WL_NONE, 0);
    if (c->world_size >= 2)
        c->all_ranks = w_flag(w, c->all_ranks, 2, "all_ranks");
    else {
        if (w->enc && c->all_ranks) w_fail(w, "all_ranks requires world_size >= 2");
        c->all_ranks = 0;
    }
    c->verify_collectives = w_flag(w, c->verify_collectives, 2, "verify_collectives");
    if (!w->err) walk_gather(w, s);
    if (w->err) return;
    if (c->all_ranks)
        walk_edits(w, s);
    else {
        if (w->enc && s->n_edits) w_fail(w, "rank edits without all_ranks");
        s->n_edits = 0;
    }
    if (w->err) return;
    /* the profiles last: a tail that ends before them means the current
     * torch and DeepSpeed (what every earlier input was checked against
     * once the current stack became the reference) */
    set_loc(w, WL_NONE, 0);
    c->torch_profile = (uint8_t)w_index(w, c->torch_profile, ZS_TORCH_PROFILES, "torch profile");
    if (!w->err) c->ds_profile = (uint8_t)w_index(w, c->ds_profile, ZS_DS_PROFILES, "deepspeed profile");
}

static void walk(walker *w, zs_scenario *s) {
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
            if (tail_nontrivial(s)) /* the decoder reads up to ZS_MAX_ORDER order bytes first */
                for (unsigned k = s->n_order; k < ZS_MAX_ORDER; k++) w_raw(w, 256, 0);
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
    if (w->err) return;
    size_t tail_at = w->len;
    int nontrivial = w->enc && tail_nontrivial(s);
    walk_tail(w, s);
    if (w->enc && !w->err && !nontrivial) w->len = tail_at; /* an all-zero tail is left out */
}

size_t zs_decode(const uint8_t *data, size_t size, zs_scenario *out) {
    walker w;
    walker_init(&w);
    w.in = data;
    w.in_size = data ? size : 0;
    limits_codec(&w);
    /* Clear the config and the counts (the walker clears the module and
     * parameter slots it fills and initialises every use, step, pass and
     * call it decodes; unused slots are never read).  The storage is grown
     * to the codec's bounds once and reused. */
    memset(&out->cfg, 0, sizeof out->cfg);
    out->n_modules = out->n_params = out->n_uses = 0;
    out->n_steps = 0;
    out->n_order = 0;
    out->n_edits = 0;
    if (zs_scenario_reserve(out, ZS_CODEC_MAX_MODULES, ZS_CODEC_MAX_PARAMS, ZS_CODEC_MAX_USES)) {
        walk_config(&w, &out->cfg); /* the config at least (callers read defaults from it) */
        walker_done(&w);
        return ZS_DECODE_NOMEM;
    }
    walk(&w, out);
    walker_done(&w);
    if (w.nomem) {
        out->n_modules = 0;
        return ZS_DECODE_NOMEM;
    }
    return w.pos < w.in_size ? w.pos : w.in_size;
}

static int call_has_raw(const zs_call *c) {
    for (unsigned i = 0; i < c->n_in && i < ZS_MAX_IN; i++)
        if (c->in[i].raw) return 1;
    for (unsigned i = 0; i < c->n_use && i < ZS_MAX_USE; i++)
        if (c->use[i].raw) return 1;
    for (unsigned i = 0; i < c->n_kw && i < ZS_MAX_KW; i++)
        if (c->kw[i].raw) return 1;
    for (unsigned i = 0; i < c->n_mix && i < ZS_MAX_MIX; i++)
        if (c->mix[i].ref.raw) return 1;
    for (unsigned j = 0; j < ZS_MAX_OUT; j++)
        if (((c->out_alias >> j) & 1u) && c->alias[j].raw) return 1;
    return 0;
}

int zs_scenario_has_ext(const zs_scenario *s) {
    for (unsigned i = 0; i < s->n_steps && i < ZS_MAX_STEPS; i++)
        for (unsigned q = 0; q < s->step[i].n_passes && q < ZS_MAX_PASSES; q++) {
            const zs_pass *p = &s->step[i].pass[q];
            for (unsigned c = 0; c < p->n_calls && c < ZS_MAX_CALLS; c++)
                if (p->calls[c].n_kw || p->calls[c].n_mix || p->calls[c].out_norg || p->calls[c].out_alias ||
                    p->calls[c].op_nosave || (p->calls[c].flags & ZS_CALL_CKPT_BODY) || call_has_raw(&p->calls[c]))
                    return 1;
        }
    return 0;
}

int zs_scenario_fits_codec(const zs_scenario *s) {
    if (s->n_modules > ZS_CODEC_MAX_MODULES || s->n_params > ZS_CODEC_MAX_PARAMS || s->n_uses > ZS_CODEC_MAX_USES)
        return 0;
    for (unsigned i = 0; i < s->n_steps && i < ZS_MAX_STEPS; i++)
        for (unsigned q = 0; q < s->step[i].n_passes && q < ZS_MAX_PASSES; q++) {
            const zs_pass *p = &s->step[i].pass[q];
            if (p->n_calls > ZS_CODEC_MAX_CALLS) return 0;
            /* children per call, counted in one sweep */
            uint16_t nch[ZS_CODEC_MAX_CALLS];
            memset(nch, 0, sizeof nch);
            for (unsigned c = 1; c < p->n_calls; c++) {
                zs_id par = p->calls[c].parent;
                if (par < p->n_calls && ++nch[par] > ZS_CODEC_MAX_CHILD_CALLS) return 0;
            }
        }
    return 1;
}

/* ext_ok: the .scn-only constructs are allowed (validation); model: walk
 * with the model's bounds (validation of a scenario beyond the codec's),
 * else the codec's (the bytes' layout). */
static size_t encode_impl(const zs_scenario *s, uint8_t *buf, size_t cap, char *err, size_t errlen, int ext_ok,
                          int model) {
    walker w;
    walker_init(&w);
    w.enc = 1;
    w.ext_ok = ext_ok;
    if (model)
        limits_model(&w);
    else
        limits_codec(&w);
    w.out = buf;
    w.cap = buf ? cap : 0;
    /* the walker writes normalised fields back; work on a copy */
    zs_scenario tmp;
    memset(&tmp, 0, sizeof tmp);
    if (zs_scenario_copy(&tmp, s) == 0)
        walk(&w, &tmp);
    else
        w_nomem(&w);
    walker_done(&w);
    zs_scenario_free(&tmp);
    if (w.err) {
        if (err && errlen) snprintf(err, errlen, "%s", w.msg);
        return 0;
    }
    return w.len; /* >= 1: the config always takes bytes */
}

size_t zs_encode(const zs_scenario *s, uint8_t *buf, size_t cap) { return encode_impl(s, buf, cap, NULL, 0, 0, 0); }

int zs_scenario_validate(const zs_scenario *s, char *err, size_t errlen) {
    static _Thread_local uint8_t buf[ZS_ENCODE_MAX];
    if (err && errlen) err[0] = 0;
    int ext = zs_scenario_has_ext(s);
    if (ext && s->cfg.all_ranks) {
        if (err && errlen) snprintf(err, errlen, "keyword or mixed inputs in an all-ranks scenario (not supported)");
        return -1;
    }
    /* a scenario beyond the codec's bounds is checked by the same walker
     * with the model's bounds; it has no bytes of its own (.scn only) */
    int bytes = !ext && zs_scenario_fits_codec(s);
    size_t n = encode_impl(s, bytes ? buf : NULL, bytes ? sizeof buf : 0, err, errlen, 1, !bytes);
    if (n == 0) return -1;
    if (!bytes) return 0;
    if (n > sizeof buf) {
        if (err && errlen) snprintf(err, errlen, "encoding larger than ZS_ENCODE_MAX");
        return -1;
    }
    /* the round trip holds for what the byte codec encodes; a scenario with
     * keyword or mixed inputs has no bytes of its own (.scn only) */
    zs_scenario back;
    memset(&back, 0, sizeof back);
    if (zs_decode(buf, n, &back) == ZS_DECODE_NOMEM) {
        zs_scenario_free(&back);
        if (err && errlen) snprintf(err, errlen, "out of memory");
        return -1;
    }
    int same = zs_scenario_equal(s, &back);
    zs_scenario_free(&back);
    if (!same) {
        if (err && errlen) snprintf(err, errlen, "a field outside the model (unused-slot or normalised value differs)");
        return -1;
    }
    return 0;
}
