/*
 * introspection.c - the runtime's read-only entry points: a parameter's and
 * a module's state, the statistics, the trace, and zo_check_consistency
 * (every cross-check of the runtime's own records).
 *
 * Kept apart from runtime.c, which holds the hooks that change that state;
 * the fuzz harness's checker calls these after every event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* ------------------------------------------------------------------ */
/* introspection                                                        */
/* ------------------------------------------------------------------ */

/* A record kept in an index list by its 1-based position pos (0: not in
 * it): 1 when it is in the list exactly if it should be (member), at the
 * position that names it (idx). */
static int listed_right(int member, uint32_t pos, const uint32_t *list, uint32_t n, uint32_t idx) {
    if (member != (pos != 0)) return 0;
    return !member || (pos <= n && list[pos - 1] == idx);
}

zo_status zo_param_get_info(const zo_runtime *rt, zo_param_id p, zo_param_info *out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_param_get_info: rt is NULL");
    if (!out) return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_param_get_info: out is NULL");
    if (p >= rt->n_pars)
        return zo__fail_const(rt, ZO_ERR_BAD_HANDLE, "zo_param_get_info: unknown parameter %u (%u registered)", p,
                              rt->n_pars);
    const zo_par *pr = &rt->pars[p];
    memset(out, 0, sizeof *out);
    out->status = pr->status;
    out->numel = pr->numel;
    out->partition_numel = rt->pcold[p].part_numel;
    out->elem_size = rt->pcold[p].elem_size;
    out->owner = rt->pcold[p].owner;
    out->persistent = pr->persistent;
    out->trainable = pr->trainable;
    out->inflight = pr->work != ZO_NONE32;
    out->n_active = pr->n_act;
    out->gathers = (uint64_t)rt->pcold[p].gathers_hi << 32 | rt->pgathers[p];
    return ZO_OK;
}

int zo_param_is_active_for(const zo_runtime *rt, zo_param_id p, zo_module_id m) {
    if (!rt || p >= rt->n_pars) return 0;
    return zo__act_has(rt, p, m);
}

/* 1 if parameter p is in the fetch set of gather-always module g: owned
 * in its subtree, or used by g or a module it holds (exact, no allocation) */
static int ga_uses(const zo_runtime *rt, zo_module_id g, zo_param_id p) {
    zo_module_id a = rt->pcold[p].owner;
    while (a != ZO_NO_MODULE && a != g) a = rt->mcold[a].parent;
    if (a == g) return 1;
    for (uint32_t m = 0; m < rt->n_mods; m++) {
        const zo_mod_cold *md = &rt->mcold[m];
        if (m != g && rt->mods[m].ga_holder != g) continue;
        for (uint32_t i = 0; i < md->n_ext; i++)
            if (md->ext[i] == p) return 1;
    }
    return 0;
}

zo_status zo_module_get_info(const zo_runtime *rt, zo_module_id m, zo_module_info *out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_module_get_info: rt is NULL");
    if (!out) return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_module_get_info: out is NULL");
    if (m >= rt->n_mods)
        return zo__fail_const(rt, ZO_ERR_BAD_HANDLE, "zo_module_get_info: unknown module %u (%u registered)", m,
                              rt->n_mods);
    const zo_mod *md = &rt->mods[m];
    const zo_mod_cold *mc = &rt->mcold[m];
    memset(out, 0, sizeof *out);
    out->parent = mc->parent;
    out->flags = mc->flags;
    out->in_leaf = md->in_leaf;
    if (!ZO_IS_DS(rt)) {
        out->grads_remaining = md->window_sum;
        out->grads_initialised = 1;
    } else {
        out->grads_remaining = rt->mds[m].grads;
        out->grads_initialised = rt->mds[m].grads_init;
        out->pre_backward_ref_cnt = rt->mds[m].refcnt;
    }
    out->open_windows = md->open_windows;
    out->open_calls = md->open_calls;
    out->gather_holder = md->ga_holder;
    if (rt->dirty) {
        /* count without rebuilding (const, no allocation): own + ext
         * (+ subtree for leaves; + subtree and held modules' external ones
         * for gather-always; nothing for held modules) */
        uint64_t n = 0;
        if (md->ga) {
            for (uint32_t p = 0; p < rt->n_pars; p++) n += ga_uses(rt, m, p);
        } else if (md->ga_holder == ZO_NO_MODULE) {
            n = mc->n_own + mc->n_ext;
            if (mc->flags & ZO_MODULE_Z3_LEAF)
                for (uint32_t p = 0; p < rt->n_pars; p++) {
                    zo_module_id a = rt->mcold[rt->pcold[p].owner].parent;
                    while (a != ZO_NO_MODULE && a != m) a = rt->mcold[a].parent;
                    if (a == m) n++;
                }
        }
        out->n_params = n;
    } else {
        out->n_params = md->n_fetch;
    }
    return ZO_OK;
}

zo_status zo_module_params(const zo_runtime *rt, zo_module_id m, zo_param_id *buf, size_t cap, size_t *n_out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_module_params: rt is NULL");
    if (!n_out) return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_module_params: n_out is NULL");
    if (cap > 0 && !buf)
        return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_module_params: buf is NULL with cap %zu", cap);
    if (m >= rt->n_mods)
        return zo__fail_const(rt, ZO_ERR_BAD_HANDLE, "zo_module_params: unknown module %u (%u registered)", m,
                              rt->n_mods);
    if (rt->dirty) {
        zo_status s = zo__rebuild((zo_runtime *)rt);
        if (s) return s;
    }
    const zo_mod *md = &rt->mods[m];
    for (size_t i = 0; i < md->n_fetch && i < cap; i++) buf[i] = md->fetch[i];
    *n_out = md->n_fetch;
    return ZO_OK;
}

zo_status zo_get_stats(const zo_runtime *rt, zo_stats *out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_get_stats: rt is NULL");
    if (!out) return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_get_stats: out is NULL");
    *out = rt->st;
    out->n_modules = rt->n_mods;
    out->n_params = rt->n_pars;
    out->forward_stack_depth = rt->n_fstack;
    return ZO_OK;
}

zo_status zo_get_trace_info(const zo_runtime *rt, int eval, zo_trace_info *out) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_get_trace_info: rt is NULL");
    if (!out) return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_get_trace_info: out is NULL");
    if (eval != 0 && eval != 1)
        return zo__fail_const(rt, ZO_ERR_INVALID_ARG, "zo_get_trace_info: eval %d is not 0 (train) or 1 (eval)", eval);
    const zo_coord *c = &rt->coord[ZO_IS_DS(rt) ? 0 : eval]; /* one coordinator (0.15+) */
    out->mode = c->mode;
    out->step_id = c->step_id;
    out->n_modules = c->n_order;
    out->n_params = c->n_porder;
    out->queue_len = c->mode == ZO_TRACE_COMPLETE ? c->n_porder - c->qpos : 0;
    return ZO_OK;
}

zo_status zo_check_consistency(zo_runtime *rt) {
    if (!rt) return zo__fail_tls(ZO_ERR_INVALID_ARG, "%s: rt is NULL", __func__);
    uint64_t live = 0, plive = 0, inflight = 0;
    for (uint32_t p = 0; p < rt->n_pars; p++) {
        const zo_par *pr = &rt->pars[p];
        if ((unsigned)pr->status > 2u) goto bad_status;
        int in_reg = pr->work != ZO_NONE32;
        if (in_reg != (pr->status == ZO_PARAM_INFLIGHT)) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: parameter %u is %s but %s the in-flight registry", p,
                     zo_param_status_name(pr->status), in_reg ? "in" : "not in");
            return ZO_ERR_STATE;
        }
        if (in_reg) {
            if (pr->work >= rt->n_works || !rt->works[pr->work].n_params) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: parameter %u points to a dead work", p);
                return ZO_ERR_STATE;
            }
            const zo_work_rec *wr = &rt->works[pr->work];
            uint32_t seen = 0;
            for (uint32_t i = 0; i < wr->n_params; i++) seen += zo__work_params(wr)[i] == p;
            if (seen != 1) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: parameter %u appears %u times in its work", p, seen);
                return ZO_ERR_STATE;
            }
            inflight++;
        }
        if (pr->status != ZO_PARAM_NOT_AVAILABLE) {
            live += pr->numel;
            if (pr->persistent) plive += pr->numel;
            if (!pr->full) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: gathered parameter %u has no full buffer", p);
                return ZO_ERR_STATE;
            }
        } else if (pr->full) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: released parameter %u still has a full buffer", p);
            return ZO_ERR_STATE;
        }
    }
    uint32_t n_live = 0;
    for (uint32_t p = 0; p < rt->n_pars; p++) {
        const zo_par *pr = &rt->pars[p];
        int live = zo__par_live(pr->status, pr->n_act, pr->ds_reg);
        n_live += (uint32_t)live;
        if (!listed_right(live, pr->live_pos, rt->live_pars, rt->n_live_pars, p)) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: parameter %u is %s the list of live parameters", p,
                     live ? "missing from" : "wrongly in");
            return ZO_ERR_STATE;
        }
    }
    if (n_live != rt->n_live_pars) {
        snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: %u live parameters, %u listed", n_live, rt->n_live_pars);
        return ZO_ERR_STATE;
    }
    uint32_t n_held = 0;
    for (uint32_t j = 0; j < rt->n_calls; j++) {
        const zo_call_rec *c = &rt->calls[j];
        int held = zo__call_live(rt, c) && (c->bwd_active || c->hold);
        n_held += (uint32_t)held;
        if (!listed_right(held, c->held_pos, rt->held_calls, rt->n_held_calls, j)) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: call record %u is %s the list of held calls", j,
                     held ? "missing from" : "wrongly in");
            return ZO_ERR_STATE;
        }
    }
    if (n_held != rt->n_held_calls) {
        snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: %u held call records, %u listed", n_held, rt->n_held_calls);
        return ZO_ERR_STATE;
    }
    for (uint32_t i = 0; i < rt->n_fstack; i++) {
        uint32_t j = rt->fstack[i];
        if (j >= rt->n_calls || !zo__call_live(rt, &rt->calls[j]) || !rt->calls[j].on_stack) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: the forward stack holds call record %u, not an open call",
                     j);
            return ZO_ERR_STATE;
        }
    }
    /* the graphs' counts of held calls (free_graph reads them) add up to
     * the held list, and each held call's graph counts some */
    uint64_t n_held_counted = 0;
    for (uint32_t gs = 0; gs < rt->n_graphs; gs++) n_held_counted += rt->graphs[gs].n_held;
    for (uint32_t i = 0; i < rt->n_held_calls; i++)
        if (rt->graphs[rt->calls[rt->held_calls[i]].graph].n_held == 0) n_held_counted = UINT64_MAX;
    if (n_held_counted != rt->n_held_calls) {
        snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: the graphs' counts of held calls disagree with the %u listed",
                 rt->n_held_calls);
        return ZO_ERR_STATE;
    }
    uint32_t n_listed_calls = 0;
    for (uint32_t gs = 0; gs < rt->n_graphs; gs++) {
        const zo_graph_rec *g = &rt->graphs[gs];
        if (!g->in_use) continue;
        for (uint32_t k = 0; k < g->n_calls; k++) {
            const zo_graph_call *e = &g->calls[k];
            const zo_call_rec *c = e->idx < rt->n_calls ? &rt->calls[e->idx] : NULL;
            if (!c || !zo__call_live(rt, c) || c->graph != gs || c->m != ZO_GC_MOD(*e)) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: graph slot %u lists call record %u, not its live call",
                         gs, e->idx);
                return ZO_ERR_STATE;
            }
        }
        n_listed_calls += g->n_calls;
    }
    if (n_listed_calls != rt->live_calls) {
        snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: %u live call records, %u listed by their graphs",
                 rt->live_calls, n_listed_calls);
        return ZO_ERR_STATE;
    }
    for (uint32_t w = 0; w < rt->n_works; w++) {
        const zo_work_rec *wr = &rt->works[w];
        if (!wr->n_params) continue;
        const zo_param_id *wp = zo__work_params(wr);
        for (uint32_t i = 0; i < wr->n_params; i++)
            if (wp[i] >= rt->n_pars || rt->pars[wp[i]].work != w) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: work %u lists parameter %u not in flight with it", w,
                         wp[i]);
                return ZO_ERR_STATE;
            }
    }
    if (live != rt->st.live_numel || plive != rt->st.persistent_live_numel || inflight != rt->st.inflight_params) {
        snprintf(rt->err, sizeof rt->err,
                 "ZO_ERR_STATE: accounting: live %llu (counted %llu), persistent %llu (counted %llu), in flight "
                 "%llu (counted %llu)",
                 (unsigned long long)rt->st.live_numel, (unsigned long long)live,
                 (unsigned long long)rt->st.persistent_live_numel, (unsigned long long)plive,
                 (unsigned long long)rt->st.inflight_params, (unsigned long long)inflight);
        return ZO_ERR_STATE;
    }
    for (uint32_t m = 0; m < rt->n_mods; m++) {
        const zo_mod *md = &rt->mods[m];
        if (!ZO_IS_DS(rt) && md->window_sum < 0) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: module %u has a negative window count", m);
            return ZO_ERR_STATE;
        }
        uint32_t acts = 0, opens = 0;
        uint32_t n_listed = 0;
        for (uint32_t j = rt->mod_calls[m]; j != ZO_NONE32 && n_listed <= rt->n_calls; j = rt->calls[j].mod_next) {
            const zo_call_rec *c = &rt->calls[j];
            n_listed++;
            if (!zo__call_live(rt, c)) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: module %u lists call record %u, which is free", m, j);
                return ZO_ERR_STATE;
            }
            if (c->fwd_active && !c->on_stack) { /* (free_graph relies on it: graph_calls_busy) */
                snprintf(rt->err, sizeof rt->err,
                         "ZO_ERR_STATE: call record %u of module %u is active for forward off the forward stack", j, m);
                return ZO_ERR_STATE;
            }
            acts += c->fwd_active + c->bwd_active + c->hold;
            opens += c->on_stack;
            if (c->window_count < 0) {
                snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: a window of module %u is negative", m);
                return ZO_ERR_STATE;
            }
        }
        if (acts != md->activations || opens != md->open_calls) {
            snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: module %u activation accounting (%u vs %u, %u vs %u)", m,
                     acts, md->activations, opens, md->open_calls);
            return ZO_ERR_STATE;
        }
    }
    return ZO_OK;
bad_status:
    snprintf(rt->err, sizeof rt->err, "ZO_ERR_STATE: a parameter has an invalid ds_status");
    return ZO_ERR_STATE;
}
