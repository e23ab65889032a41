/*
 * scenario.c - scenario model helpers: init, equality, tree queries, names,
 * and the validity rules (one function per choice a scenario makes).  The
 * byte codec and zs_scenario_validate, which apply the rules, live in
 * codec.c; the rank edits' rules in ranks.c.
 */
#include "scenario.h"

#include "zoffload.h" /* the policy names and count */

#include <stdlib.h>
#include <string.h>

const uint64_t zs_threshold_classes[ZS_TH_COUNT][ZS_TH_CLASSES] = {
    /* param_persistence_threshold: 0 first (nothing persistent, the
     * interesting case), then DeepSpeed's default 1e5 */
    {0, 100000ull, 16, 4096, 524288ull, ZS_INF},
    /* model_persistence_threshold: default infinite */
    {ZS_INF, 0, 64, 4096, 100000ull, 1000000ull},
    /* prefetch_bucket_size: default 5e7 */
    {50000000ull, 0, 1, 1000, 100000ull, ZS_INF},
    /* max_live_parameters: default 1e9 */
    {1000000000ull, 0, 1, 1000, 100000ull, ZS_INF},
    /* max_reuse_distance: default 1e9 */
    {1000000000ull, 0, 1, 1000, 100000ull, ZS_INF},
};

const char *const zs_threshold_names[ZS_TH_COUNT] = {"param_persistence_threshold", "model_persistence_threshold",
                                                     "prefetch_bucket_size", "max_live_parameters",
                                                     "max_reuse_distance"};

uint64_t *zs_config_threshold(zs_config *cfg, int which) {
    switch (which) {
    case ZS_TH_PARAM_PERSIST: return &cfg->param_persistence_threshold;
    case ZS_TH_MODEL_PERSIST: return &cfg->model_persistence_threshold;
    case ZS_TH_PREFETCH_BUCKET: return &cfg->prefetch_bucket_size;
    case ZS_TH_MAX_LIVE: return &cfg->max_live_parameters;
    default: return &cfg->max_reuse_distance;
    }
}

int zs_scenario_init(zs_scenario *s) {
    if (zs_decode(NULL, 0, s) == ZS_DECODE_NOMEM) return -1;
    /* room for a hand-built scenario within the codec's bounds in every
     * pass (zs_decode itself only grows the passes it decodes) */
    for (unsigned i = 0; i < ZS_MAX_STEPS; i++)
        for (unsigned k = 0; k < ZS_MAX_PASSES; k++)
            if (zs_pass_reserve(&s->step[i].pass[k], ZS_CODEC_MAX_CALLS)) {
                s->n_modules = 0;
                return -1;
            }
    return 0;
}

void zs_scenario_free(zs_scenario *s) {
    if (!s) return;
    free(s->mod);
    free(s->par);
    free(s->use);
    for (unsigned i = 0; i < ZS_MAX_STEPS; i++)
        for (unsigned k = 0; k < ZS_MAX_PASSES; k++) free(s->step[i].pass[k].calls);
    memset(s, 0, sizeof *s);
}

/* Grows *arr (elements of sz bytes, *cap slots) to at least need slots,
 * zeroing the new ones; 0, or -1 (nothing changed) if need > max or out of
 * memory. */
static int grow_array(void **arr, uint32_t *cap, uint32_t need, uint32_t max, size_t sz) {
    if (need <= *cap) return 0;
    if (need > max) return -1;
    uint64_t nc = *cap ? (uint64_t)*cap * 2 : 8;
    while (nc < need) nc *= 2;
    if (nc > max) nc = max;
    void *q = realloc(*arr, (size_t)nc * sz);
    if (!q) return -1;
    memset((char *)q + (size_t)*cap * sz, 0, (size_t)(nc - *cap) * sz);
    *arr = q;
    *cap = (uint32_t)nc;
    return 0;
}

int zs_scenario_reserve(zs_scenario *s, uint32_t modules, uint32_t params, uint32_t uses) {
    if (modules > ZS_MAX_MODULES || params > ZS_MAX_PARAMS || uses > ZS_MAX_USES) return -1;
    void *m = s->mod, *p = s->par, *u = s->use;
    int rc = grow_array(&m, &s->cap_modules, modules, ZS_MAX_MODULES, sizeof *s->mod);
    s->mod = m;
    if (!rc) rc = grow_array(&p, &s->cap_params, params, ZS_MAX_PARAMS, sizeof *s->par);
    s->par = p;
    if (!rc) rc = grow_array(&u, &s->cap_uses, uses, ZS_MAX_USES, sizeof *s->use);
    s->use = u;
    return rc;
}

int zs_pass_reserve(zs_pass *p, uint32_t calls) {
    void *c = p->calls;
    int rc = grow_array(&c, &p->cap_calls, calls, ZS_MAX_CALLS, sizeof *p->calls);
    p->calls = c;
    return rc;
}

int zs_step_copy(zs_step *dst, const zs_step *src) {
    if (dst == src) return 0;
    dst->n_passes = 0;
    if (src->n_passes > ZS_MAX_PASSES) return -1;
    for (unsigned k = 0; k < src->n_passes; k++)
        if (zs_pass_reserve(&dst->pass[k], src->pass[k].n_calls)) return -1;
    for (unsigned k = 0; k < ZS_MAX_PASSES; k++) {
        zs_pass *dp = &dst->pass[k];
        const zs_pass *sp = &src->pass[k];
        int used = k < src->n_passes;
        dp->n_calls = used ? sp->n_calls : 0;
        dp->loss_mask = used ? sp->loss_mask : 0;
        if (used && sp->n_calls) memcpy(dp->calls, sp->calls, sp->n_calls * sizeof *sp->calls);
    }
    dst->kind = src->kind;
    dst->n_passes = src->n_passes;
    return 0;
}

int zs_scenario_copy(zs_scenario *dst, const zs_scenario *src) {
    if (dst == src) return 0;
    dst->n_modules = 0;
    if (src->n_steps > ZS_MAX_STEPS || src->n_edits > ZS_MAX_RANK_EDITS || src->n_order > ZS_MAX_ORDER) return -1;
    if (zs_scenario_reserve(dst, src->n_modules, src->n_params, src->n_uses)) return -1;
    for (unsigned i = 0; i < src->n_steps; i++)
        for (unsigned k = 0; k < src->step[i].n_passes && k < ZS_MAX_PASSES; k++)
            if (zs_pass_reserve(&dst->step[i].pass[k], src->step[i].pass[k].n_calls)) return -1;
    dst->cfg = src->cfg;
    dst->n_params = src->n_params;
    dst->n_uses = src->n_uses;
    dst->n_steps = src->n_steps;
    dst->n_order = src->n_order;
    if (src->n_modules) memcpy(dst->mod, src->mod, src->n_modules * sizeof *src->mod);
    if (src->n_params) memcpy(dst->par, src->par, src->n_params * sizeof *src->par);
    if (src->n_uses) memcpy(dst->use, src->use, src->n_uses * sizeof *src->use);
    for (unsigned i = 0; i < ZS_MAX_STEPS; i++) {
        zs_step *d = &dst->step[i];
        const zs_step *t = &src->step[i];
        d->kind = t->kind;
        d->n_passes = t->n_passes;
        for (unsigned k = 0; k < ZS_MAX_PASSES; k++) {
            zs_pass *dp = &d->pass[k];
            const zs_pass *sp = &t->pass[k];
            int used = i < src->n_steps && k < t->n_passes;
            dp->n_calls = used ? sp->n_calls : 0;
            dp->loss_mask = used ? sp->loss_mask : 0;
            if (used && sp->n_calls) memcpy(dp->calls, sp->calls, sp->n_calls * sizeof *sp->calls);
        }
    }
    memcpy(dst->order, src->order, sizeof dst->order);
    dst->n_edits = src->n_edits;
    memcpy(dst->edit, src->edit, sizeof dst->edit);
    dst->n_modules = src->n_modules;
    return 0;
}

static int ref_equal(const zs_ref *a, const zs_ref *b) {
    return a->kind == b->kind && a->call == b->call && a->index == b->index && a->detach == b->detach &&
           a->raw == b->raw;
}

static int call_equal(const zs_call *a, const zs_call *b) {
    if (a->module != b->module || a->parent != b->parent || a->flags != b->flags || a->catcher != b->catcher ||
        a->n_in != b->n_in || a->n_out != b->n_out || a->n_use != b->n_use)
        return 0;
    if (a->n_in > ZS_MAX_IN || a->n_use > ZS_MAX_USE) return 0;
    for (unsigned i = 0; i < a->n_in; i++)
        if (!ref_equal(&a->in[i], &b->in[i])) return 0;
    for (unsigned i = 0; i < a->n_use; i++)
        if (!ref_equal(&a->use[i], &b->use[i])) return 0;
    if (a->n_kw != b->n_kw || a->n_mix != b->n_mix || a->out_norg != b->out_norg || a->out_alias != b->out_alias ||
        a->op_nosave != b->op_nosave)
        return 0;
    for (unsigned j = 0; j < ZS_MAX_OUT; j++)
        if (((a->out_alias >> j) & 1u) && !ref_equal(&a->alias[j], &b->alias[j])) return 0;
    if (a->n_kw > ZS_MAX_KW || a->n_mix > ZS_MAX_MIX) return 0;
    for (unsigned i = 0; i < a->n_kw; i++)
        if (!ref_equal(&a->kw[i], &b->kw[i])) return 0;
    for (unsigned i = 0; i < a->n_mix; i++)
        if (a->mix[i].slot != b->mix[i].slot || !ref_equal(&a->mix[i].ref, &b->mix[i].ref)) return 0;
    return 1;
}

static int equal_impl(const zs_scenario *a, const zs_scenario *b, int strict) {
    if (memcmp(&a->cfg, &b->cfg, sizeof a->cfg) != 0) {
        /* compare field by field: padding bytes may differ */
        const zs_config *x = &a->cfg, *y = &b->cfg;
        if (x->policy != y->policy || x->world_size != y->world_size || x->rank != y->rank ||
            x->order_mode != y->order_mode || x->deferred != y->deferred || x->progress_every != y->progress_every ||
            x->param_persistence_threshold != y->param_persistence_threshold ||
            x->model_persistence_threshold != y->model_persistence_threshold ||
            x->prefetch_bucket_size != y->prefetch_bucket_size || x->max_live_parameters != y->max_live_parameters ||
            x->max_reuse_distance != y->max_reuse_distance || x->all_ranks != y->all_ranks ||
            x->verify_collectives != y->verify_collectives || x->torch_profile != y->torch_profile ||
            x->ds_profile != y->ds_profile)
            return 0;
    }
    if (a->n_modules != b->n_modules || a->n_params != b->n_params || a->n_uses != b->n_uses ||
        a->n_steps != b->n_steps || a->n_edits != b->n_edits)
        return 0;
    if (a->n_modules > ZS_MAX_MODULES || a->n_params > ZS_MAX_PARAMS || a->n_uses > ZS_MAX_USES ||
        a->n_steps > ZS_MAX_STEPS || a->n_order > ZS_MAX_ORDER || b->n_order > ZS_MAX_ORDER ||
        a->n_edits > ZS_MAX_RANK_EDITS)
        return 0;
    for (unsigned i = 0; i < a->n_modules; i++) {
        if (a->mod[i].parent != b->mod[i].parent || a->mod[i].flags != b->mod[i].flags) return 0;
        if (strict && strncmp(a->mod[i].name, b->mod[i].name, ZS_NAME_LEN) != 0) return 0;
    }
    for (unsigned i = 0; i < a->n_params; i++) {
        const zs_param *x = &a->par[i], *y = &b->par[i];
        if (x->owner != y->owner || x->flags != y->flags || x->elem_size != y->elem_size || x->numel != y->numel)
            return 0;
        if (strict && strncmp(x->name, y->name, ZS_NAME_LEN) != 0) return 0;
    }
    for (unsigned i = 0; i < a->n_uses; i++)
        if (a->use[i].module != b->use[i].module || a->use[i].param != b->use[i].param) return 0;
    for (unsigned i = 0; i < a->n_steps; i++) {
        const zs_step *x = &a->step[i], *y = &b->step[i];
        if (x->kind != y->kind || x->n_passes != y->n_passes || x->n_passes > ZS_MAX_PASSES) return 0;
        for (unsigned k = 0; k < x->n_passes; k++) {
            const zs_pass *p = &x->pass[k], *q = &y->pass[k];
            if (p->n_calls != q->n_calls || p->loss_mask != q->loss_mask || p->n_calls > ZS_MAX_CALLS) return 0;
            for (unsigned c = 0; c < p->n_calls; c++)
                if (!call_equal(&p->calls[c], &q->calls[c])) return 0;
        }
    }
    /* order bytes past n_order read 0, so trailing zeros carry no meaning
     * (the encoder pads them when it writes a tail) */
    unsigned no = a->n_order > b->n_order ? a->n_order : b->n_order;
    for (unsigned k = 0; k < no; k++) {
        uint8_t x = k < a->n_order ? a->order[k] : 0, y = k < b->n_order ? b->order[k] : 0;
        if (x != y) return 0;
    }
    for (unsigned k = 0; k < a->n_edits; k++) {
        const zs_rank_edit *x = &a->edit[k], *y = &b->edit[k];
        if (x->rank != y->rank || x->kind != y->kind || x->step != y->step || x->pass != y->pass ||
            x->call != y->call || x->module != y->module)
            return 0;
    }
    return 1;
}

int zs_scenario_equal(const zs_scenario *a, const zs_scenario *b) { return equal_impl(a, b, 0); }

int zs_scenario_equal_strict(const zs_scenario *a, const zs_scenario *b) { return equal_impl(a, b, 1); }

int zs_module_depth(const zs_scenario *s, unsigned m) {
    int d = 0;
    while (m < s->n_modules && s->mod[m].parent != ZS_NONE && d <= ZS_MAX_MODULES) {
        m = s->mod[m].parent;
        d++;
    }
    return d;
}

int zs_module_is_ancestor(const zs_scenario *s, unsigned a, unsigned b) {
    for (int guard = 0; b < s->n_modules && guard <= ZS_MAX_MODULES; guard++) {
        if (a == b) return 1;
        if (s->mod[b].parent == ZS_NONE) return 0;
        b = s->mod[b].parent;
    }
    return 0;
}

int zs_module_in_leaf(const zs_scenario *s, unsigned m) {
    if (m >= s->n_modules) return 0;
    unsigned a = s->mod[m].parent;
    for (int guard = 0; a != ZS_NONE && a < s->n_modules && guard <= ZS_MAX_MODULES; guard++) {
        if (s->mod[a].flags & ZS_MOD_Z3_LEAF) return 1;
        a = s->mod[a].parent;
    }
    return 0;
}

int zs_module_under_gather_always(const zs_scenario *s, unsigned m) {
    if (m >= s->n_modules) return 0;
    unsigned a = s->mod[m].parent;
    for (int guard = 0; a != ZS_NONE && a < s->n_modules && guard <= ZS_MAX_MODULES; guard++) {
        if (s->mod[a].flags & ZS_MOD_GATHER_ALWAYS) return 1;
        a = s->mod[a].parent;
    }
    return 0;
}

int zs_module_gathers_subtree(const zs_scenario *s, unsigned m) {
    if (m >= s->n_modules) return 0;
    if (s->mod[m].flags & ZS_MOD_Z3_LEAF) return 1;
    return (s->mod[m].flags & ZS_MOD_GATHER_ALWAYS) && !zs_module_in_leaf(s, m) && !zs_module_under_gather_always(s, m);
}

int zs_module_param_set(const zs_scenario *s, unsigned m, zs_id *out) {
    /* a z3 leaf, or an effective gather-always module (ZO_MODULE_GATHER_ALWAYS:
     * not inside a leaf, not below another gather-always module), fetches
     * its whole subtree's parameters; DeepSpeed's get_all_parameters(m,
     * recurse=leaf): named_parameters (the subtree's own parameters for a
     * leaf) plus m's own ds_external_parameters only.  Ids ascending, each
     * once (no scratch array: the parameter count has no small bound). */
    int leaf = zs_module_gathers_subtree(s, m);
    int n = 0;
    for (unsigned p = 0; p < s->n_params; p++) {
        unsigned o = s->par[p].owner;
        int in = o == m || (leaf && zs_module_is_ancestor(s, m, o));
        for (unsigned u = 0; u < s->n_uses && !in; u++)
            if (s->use[u].module == m && s->use[u].param == p) in = 1;
        if (in) out[n++] = (zs_id)p;
    }
    return n;
}

int zs_call_depth(const zs_pass *p, unsigned c) {
    int d = 0;
    while (c < p->n_calls && p->calls[c].parent != ZS_NONE && d <= ZS_MAX_CALLS) {
        c = p->calls[c].parent;
        d++;
    }
    return d;
}

/* the runtime's names (zoffload.h's ZO_GRADS_POLICY_MAP) */
const char *zs_policy_name(unsigned policy) {
    return policy < ZO_GRADS_POLICY_COUNT ? zo_policy_name((zo_grads_policy)policy) : NULL;
}

int zs_policy_from_name(const char *name) {
    if (!name) return -1;
    for (unsigned i = 0; i < ZO_GRADS_POLICY_COUNT; i++)
        if (strcmp(name, zo_policy_name((zo_grads_policy)i)) == 0) return (int)i;
    return -1;
}

const char *zs_step_kind_name(unsigned kind) {
    static const char *const names[ZS_STEP_KINDS] = {"train", "eval", "accum", "retain", "interleave"};
    return kind < ZS_STEP_KINDS ? names[kind] : NULL;
}

static const char *const torch_profile_names[ZS_TORCH_PROFILES] = {"2.x", "2.x-no-early-stop", "1.13"};
static const char *const ds_profile_names[ZS_DS_PROFILES] = {"0.19", "0.19-hooks", "0.15"};

const char *zs_edit_kind_name(unsigned kind) {
    static const char *const names[ZS_EDIT_KINDS] = {"route", "skip", "exit", "raise", "skip-step"};
    return kind < ZS_EDIT_KINDS ? names[kind] : NULL;
}

const char *zs_torch_profile_name(unsigned profile) {
    return profile < ZS_TORCH_PROFILES ? torch_profile_names[profile] : NULL;
}

const char *zs_ds_profile_name(unsigned profile) { return profile < ZS_DS_PROFILES ? ds_profile_names[profile] : NULL; }

int zs_torch_profile_from_name(const char *name) {
    for (int i = 0; name && i < ZS_TORCH_PROFILES; i++)
        if (strcmp(name, torch_profile_names[i]) == 0) return i;
    return -1;
}

int zs_ds_profile_from_name(const char *name) {
    for (int i = 0; name && i < ZS_DS_PROFILES; i++)
        if (strcmp(name, ds_profile_names[i]) == 0) return i;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Validity rules                                                       */
/* ------------------------------------------------------------------ */

/* Modules are in DFS pre-order: module i's parent is i-1 or one of its
 * ancestors.  The chain is walked, not stored (it has no small bound);
 * a < i guards against parents not checked yet. */
unsigned zs_parent_count(const zs_scenario *s, unsigned i) {
    unsigned n = 0;
    for (unsigned a = i - 1, guard = 0; a < i && guard <= i; a = s->mod[a].parent, guard++) {
        n++;
        if (a == 0) break;
    }
    return n;
}

zs_id zs_parent_at(const zs_scenario *s, unsigned i, unsigned k) {
    unsigned a = i - 1;
    for (unsigned j = 0; j < k; j++) a = s->mod[a].parent;
    return (zs_id)a;
}

unsigned zs_parent_index(const zs_scenario *s, unsigned i, unsigned parent) {
    unsigned n = 0;
    for (unsigned a = i - 1, guard = 0; a < i && guard <= i; a = s->mod[a].parent, guard++) {
        if (a == parent) return n;
        n++;
        if (a == 0) break;
    }
    return n;
}

int zs_step_multi_pass(unsigned kind) { return kind == ZS_STEP_ACCUM || kind == ZS_STEP_INTERLEAVE; }

int zs_pass_has_loss(unsigned kind, int unwind) { return unwind == ZS_UNWIND_NONE && kind != ZS_STEP_EVAL; }

unsigned zs_callee_candidates(const zs_scenario *s, unsigned caller_mod, zs_id *out) {
    unsigned n = 0;
    if (s->mod[caller_mod].flags & ZS_MOD_Z3_LEAF) return 0;
    /* pre-order: caller_mod's subtree ends at the first later module whose
     * parent comes before it */
    for (unsigned m = caller_mod + 1; m < s->n_modules && s->mod[m].parent >= caller_mod; m++)
        if (s->mod[m].parent == caller_mod) {
            if (out) out[n] = (zs_id)m;
            n++;
        }
    return n;
}

int zs_callee_ok(const zs_scenario *s, unsigned caller_mod, unsigned m) {
    return !(s->mod[caller_mod].flags & ZS_MOD_Z3_LEAF) && m > caller_mod && m < s->n_modules &&
           s->mod[m].parent == caller_mod;
}

unsigned zs_input_candidates(const zs_pass *p, unsigned caller, unsigned self, zs_ref *cand) {
    unsigned n = 0;
    if (caller != ZS_NONE) {
        /* outputs of the caller's earlier child calls, most recent first */
        for (unsigned j = self; j-- > caller + 1;) {
            const zs_call *c = &p->calls[j];
            if (c->parent != caller) continue;
            for (unsigned o = 0; o < c->n_out; o++, n++)
                if (cand) cand[n] = (zs_ref){ZS_REF_OUT, (zs_id)j, (uint8_t)o, 0, 0};
        }
        const zs_call *cc = &p->calls[caller];
        /* positional, then keyword inputs */
        for (unsigned i = 0; i < (unsigned)cc->n_in + cc->n_kw; i++, n++)
            if (cand) cand[n] = (zs_ref){ZS_REF_ARG, 0, (uint8_t)i, 0, 0};
    }
    if (cand) {
        cand[n] = (zs_ref){ZS_REF_BATCH_RG, 0, 0, 0, 0};
        cand[n + 1] = (zs_ref){ZS_REF_BATCH, 0, 0, 0, 0};
    }
    return n + 2;
}

unsigned zs_use_candidates(const zs_pass *p, unsigned c, unsigned end, zs_ref *cand) {
    unsigned n = 0;
    const zs_call *cc = &p->calls[c];
    for (unsigned i = 0; i < (unsigned)cc->n_in + cc->n_kw; i++, n++)
        if (cand) cand[n] = (zs_ref){ZS_REF_ARG, 0, (uint8_t)i, 0, 0};
    for (unsigned j = c + 1; j < end; j++) {
        const zs_call *ch = &p->calls[j];
        if (ch->parent != c) continue;
        for (unsigned o = 0; o < ch->n_out; o++, n++)
            if (cand) cand[n] = (zs_ref){ZS_REF_OUT, (zs_id)j, (uint8_t)o, 0, 0};
    }
    return n;
}

int zs_ref_in_scope(const zs_pass *p, unsigned caller, unsigned end, int use, const zs_ref *r) {
    switch (r->kind) {
    case ZS_REF_BATCH:
    case ZS_REF_BATCH_RG: return !use && r->call == 0 && r->index == 0;
    case ZS_REF_ARG: {
        if (caller == ZS_NONE || r->call != 0) return 0;
        const zs_call *cc = &p->calls[caller];
        return r->index < (unsigned)cc->n_in + cc->n_kw;
    }
    case ZS_REF_OUT: {
        if (caller == ZS_NONE) return 0;
        unsigned j = r->call;
        if (j <= caller || j >= end || p->calls[j].parent != caller) return 0;
        return r->index < p->calls[j].n_out;
    }
    default: return 0;
    }
}

int zs_call_may_checkpoint(unsigned ci, int in_ckpt) { return ci != 0 && !in_ckpt; }

int zs_call_may_raise(int in_ckpt, int ckpt) { return !in_ckpt && !ckpt; }

/* The catcher chain: the caller, its ancestor calls, then ZS_NONE (walked,
 * not stored: it has no small bound). */
unsigned zs_catcher_count(const zs_pass *p, unsigned caller) {
    unsigned n = 1; /* ZS_NONE */
    for (unsigned a = caller; a != ZS_NONE; a = p->calls[a].parent) n++;
    return n;
}

zs_id zs_catcher_at(const zs_pass *p, unsigned caller, unsigned k) {
    zs_id a = (zs_id)caller;
    for (unsigned j = 0; j < k && a != ZS_NONE; j++) a = p->calls[a].parent;
    return a;
}

unsigned zs_catcher_index(const zs_pass *p, unsigned caller, unsigned catcher) {
    unsigned n = 0;
    for (unsigned a = caller; a != ZS_NONE; a = p->calls[a].parent, n++)
        if (a == catcher) return n;
    return catcher == ZS_NONE ? n : n + 1;
}

int zs_unwind_after_child(int child, unsigned ci) { return child == (int)ci ? ZS_UNWIND_NONE : child; }

int zs_call_unwinds_to(const zs_call *c, int body) {
    if (body != ZS_UNWIND_NONE || !(c->flags & ZS_CALL_RAISE)) return body;
    return c->catcher == ZS_NONE ? ZS_UNWIND_OUT : (int)c->catcher;
}
