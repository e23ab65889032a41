/*
 * policy_per_call.c - zoffload's default counter policy, "per-call"
 * (ZO_GRADS_PER_CALL; docs/protocol.md).
 *
 * One window per forward call made with grad enabled and at least one
 * input requiring grad, counting those inputs; its grad handles name the
 * call, so a second call of the same module has a window of its own.  A
 * module is active while some call of it is in forward, in backward
 * (fetched by an output gradient) or holds what a recompute fetched; it is
 * released when it becomes inactive: at post-forward (not during a
 * recompute), at its window's close, when every trainable parameter of the
 * module produced its gradient, and at the end-of-backward callback (FSDP2's
 * final callback).  Gather on access anywhere; an aborted forward releases
 * what its calls fetched.
 */
#include <string.h>

#include "policy.h"

static zo_status pc_pre_forward(zo_runtime *rt, uint32_t idx, zo_status fetched) {
    zo_call_rec *c = &rt->calls[idx];
    zo__act_set(rt, c, &c->fwd_active);
    return fetched;
}

static zo_status pc_track_inputs(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad, uint32_t k,
                                 zo_grad_handle *out_handles) {
    zo_call_rec *c = &rt->calls[idx];
    zo_module_id m = c->m;
    zo_mod *md = &rt->mods[m];
    zo_graph gh = zo__mk_graph(rt, c->graph);
    int top_fwd = rt->n_ctx > 0 && rt->ctx[rt->n_ctx - 1].type == ZO_CTX_FWD;
    if (c->grad && k > 0 && top_fwd) {
        uint8_t *st = c->in_st.inl;
        if (n > ZO_IN_STATE_INLINE) {
            st = zo__calloc(rt, n, 1);
            if (!st) return zo__fail(rt, ZO_ERR_NOMEM, "zo_track_inputs: window");
            c->in_st.heap = st;
        }
        for (size_t i = 0; i < n; i++) {
            st[i] = requires_grad[i] ? 1 : 0;
            out_handles[i] = requires_grad[i] ? zo__mk_handle(rt, ZO_H_CALL_IN, c->gen, idx, (uint32_t)i) : 0;
        }
        c->n_in = (uint32_t)n;
        c->has_window = 1;
        c->window_open = 1;
        c->window_count = k;
        c->n_tracked = k;
        md->open_windows++;
        md->window_sum += k;
        rt->st.open_windows++;
        c->d_done = 1;
        zo__emit(rt, ZO_EV_TRACK_INPUTS, m, ZO_NO_PARAM, gh, 0, k, 1, NULL);
        zo__emit(rt, ZO_EV_WINDOW_OPEN, m, ZO_NO_PARAM, gh, 0, k, 1, NULL);
    } else {
        for (size_t i = 0; i < n; i++) out_handles[i] = 0;
        c->d_done = 1;
        zo__emit(rt, ZO_EV_TRACK_INPUTS, m, ZO_NO_PARAM, gh, 0, 0, 1, "no window");
    }
    return ZO_OK;
}

static zo_status pc_post_forward(zo_runtime *rt, uint32_t idx, zo_coord *co) {
    zo_call_rec *c = &rt->calls[idx];
    if (c->recompute) {
        /* keep the parameters for the backward that follows the recompute */
        if (c->fwd_active) {
            c->fwd_active = 0;
            c->hold = 1; /* activation moves from fwd to hold */
            zo__call_held_sync(rt, c);
        }
        return ZO_OK;
    }
    if (zo__act_clear(rt, c, &c->fwd_active)) return zo__release_module(rt, c->m, co);
    return ZO_OK;
}

static zo_status pc_track_outputs(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad,
                                  zo_grad_handle *out_handles) {
    zo_call_rec *c = &rt->calls[idx];
    for (size_t i = 0; i < n; i++)
        out_handles[i] = (requires_grad[i] && c->grad) ? zo__mk_handle(rt, ZO_H_CALL_OUT, c->gen, idx, (uint32_t)i) : 0;
    zo__emit(rt, ZO_EV_TRACK_OUTPUTS, c->m, ZO_NO_PARAM, zo__mk_graph(rt, c->graph), 0, 0, 0, NULL);
    return ZO_OK;
}

static zo_status pc_unwound(zo_runtime *rt, uint32_t idx) {
    zo_call_rec *c = &rt->calls[idx];
    if (c->recompute) {
        /* a recompute stopped early (torch 2.x non-reentrant checkpoint):
         * keep what it fetched for the region's backward, as its
         * post-forward would have */
        if (c->fwd_active) {
            c->fwd_active = 0;
            c->hold = 1;
            zo__call_held_sync(rt, c);
        }
        return ZO_OK;
    }
    if (c->window_open) zo__window_close(rt, c);
    c->has_window = 0;
    memset(zo__in_state(c), 0, c->n_in);
    int rel = zo__act_clear(rt, c, &c->fwd_active);
    rel |= zo__act_clear(rt, c, &c->hold);
    if (rel) return zo__release_module(rt, c->m, zo__coord_of_graph(rt, c->graph));
    return ZO_OK;
}

static zo_status pc_output_grad(zo_runtime *rt, zo_grad_handle h, unsigned kind) {
    if (kind != ZO_H_CALL_OUT)
        return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_output_grad: not an output handle of this runtime");
    uint32_t idx = zo__call_of_handle(rt, h);
    if (idx == ZO_NONE32 || zo__h_slot(h) >= rt->calls[idx].n_out)
        return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_output_grad: unknown or stale handle");
    {
        zo_status hs = zo__hook_legal(rt, ZO__HOOK_OUTPUT_GRAD, ZO__CALL_NONE, ZO_NO_MODULE);
        if (hs) return hs;
    }
    zo_call_rec *c = &rt->calls[idx];
    zo_module_id m = c->m;
    zo_graph gh = zo__mk_graph(rt, c->graph);
    zo_status s = ZO_OK;
    if (!c->bwd_active) {
        int activated = 0;
        s = zo__coord_fetch(rt, &rt->coord[0], m, &activated);
        if (activated) zo__act_set(rt, &rt->calls[idx], &rt->calls[idx].bwd_active);
    }
    zo__emit(rt, ZO_EV_OUTPUT_GRAD, m, ZO_NO_PARAM, gh, 0, 0, 0, NULL);
    return s;
}

static zo_status pc_input_grad(zo_runtime *rt, zo_grad_handle h, unsigned kind) {
    if (kind != ZO_H_CALL_IN)
        return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_input_grad: not an input handle of this runtime");
    uint32_t idx = zo__call_of_handle(rt, h);
    uint32_t slot = zo__h_slot(h);
    if (idx == ZO_NONE32 || slot >= rt->calls[idx].n_in) /* n_in 0: no window was opened */
        return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_input_grad: unknown or stale handle");
    zo_call_rec *c = &rt->calls[idx];
    uint8_t *in_state = zo__in_state(c);
    if (in_state[slot] == 2)
        return zo__fail(rt, ZO_ERR_BAD_HANDLE, "zo_input_grad: handle already used in this backward");
    if (in_state[slot] != 1 || !c->window_open)
        return zo__fail(rt, ZO_ERR_BAD_HANDLE,
                        "zo_input_grad: stale handle: module %u's call window was closed before this "
                        "gradient arrived (zo_release_all, zo_graph_discard, zo_forward_abort or the "
                        "end-of-backward callback)",
                        c->m);
    {
        zo_status hs = zo__hook_legal(rt, ZO__HOOK_INPUT_GRAD, ZO__CALL_NONE, ZO_NO_MODULE);
        if (hs) return hs;
    }
    zo_module_id m = c->m;
    zo_mod *md = &rt->mods[m];
    zo_graph gh = zo__mk_graph(rt, c->graph);
    in_state[slot] = 2;
    int64_t before = c->window_count;
    c->window_count--;
    md->window_sum--;
    zo__emit(rt, ZO_EV_INPUT_GRAD, m, ZO_NO_PARAM, gh, before, c->window_count, 1, NULL);
    if (c->window_count > 0) return ZO_OK;
    zo__window_close(rt, c);
    zo__emit(rt, ZO_EV_WINDOW_CLOSE, m, ZO_NO_PARAM, gh, 0, 0, 1, NULL);
    int rel = zo__act_clear(rt, c, &c->bwd_active);
    rel |= zo__act_clear(rt, c, &c->hold);
    /* recompute calls of the module without a window served this backward too */
    for (uint32_t j = rt->mod_calls[m]; j != ZO_NONE32; j = rt->calls[j].mod_next) {
        zo_call_rec *o = &rt->calls[j];
        if (o->hold && !o->has_window && !o->on_stack) rel |= zo__act_clear(rt, o, &o->hold);
    }
    if (rel) return zo__release_module(rt, m, &rt->coord[0]);
    return ZO_OK;
}

static zo_status pc_param_grad_ready(zo_runtime *rt, zo_param_id p) {
    uint64_t epoch = rt->bwd_epoch;
    if (rt->pready[p] == epoch) return ZO_OK;
    rt->pready[p] = epoch;
    zo_status first = ZO_OK;
    for (uint32_t u = rt->users_start[p], ue = rt->users_start[p + 1]; u < ue; u++) {
        zo_module_id m = rt->users_all[u];
        zo_mod *md = &rt->mods[m];
        /* Not for a gather-always holder: when all of its block's trainable
         * parameters are ready depends on which experts ran on this rank
         * (an unused expert never gets a gradient) and on frozen parameters
         * its held modules still compute with; releasing then would make
         * availability, and so the next all-gathers, rank-dependent.  It
         * is released at its window's close (its post-backward, after every
         * held module's) and by the end-of-backward callback. */
        if (md->ga) continue;
        if (md->ready_epoch != epoch) {
            md->ready_epoch = epoch;
            md->ready_count = 0;
        }
        md->ready_count++;
        if (md->ready_count != md->n_trainable) continue;
        /* every trainable parameter of m has its gradient: m's backward is done */
        int rel = 0;
        for (uint32_t j = rt->mod_calls[m]; j != ZO_NONE32; j = rt->calls[j].mod_next) {
            zo_call_rec *o = &rt->calls[j];
            if (o->on_stack) continue;
            rel |= zo__act_clear(rt, o, &o->bwd_active);
            rel |= zo__act_clear(rt, o, &o->hold);
        }
        if (rel) {
            zo_status s = zo__release_module(rt, m, &rt->coord[0]);
            if (s && !first) first = s;
        }
    }
    return first;
}

static zo_status pc_backward_end(zo_runtime *rt, uint32_t gslot, zo_graph gh, int outermost) {
    zo_graph_rec *g = &rt->graphs[gslot];
    zo_status first = ZO_OK;
    /* end-of-backward callback: close (or re-arm) this graph's windows;
     * nothing to do when none is open anywhere and none is re-armed */
    uint32_t n_walk = g->retain || rt->st.open_windows ? g->n_calls : 0;
    for (uint32_t k = n_walk; k-- > 0;) { /* newest first */
        zo_call_rec *c = &rt->calls[g->calls[k].idx];
        if (!c->has_window) continue;
        if (c->window_open) {
            rt->st.leftovers++;
            zo__emit(rt, ZO_EV_LEFTOVER, c->m, ZO_NO_PARAM, gh, c->window_count, 0, 1,
                     "window closed by the end-of-backward callback");
            zo__window_close(rt, c);
        }
        if (g->retain) {
            zo_mod *md = &rt->mods[c->m];
            uint8_t *in_state = zo__in_state(c);
            for (uint32_t i = 0; i < c->n_in; i++)
                if (in_state[i] == 2) in_state[i] = 1;
            c->window_open = 1;
            c->window_count = c->n_tracked;
            md->open_windows++;
            md->window_sum += c->n_tracked;
            rt->st.open_windows++;
        }
    }
    /* drop backward activations: every call (outermost) or this graph's;
     * only records holding their module have one, walked in index order */
    uint32_t n = rt->n_held_calls;
    if (n) memcpy(rt->calls_tmp, rt->held_calls, n * sizeof *rt->calls_tmp);
    zo__sort_ids(rt->calls_tmp, n);
    for (uint32_t t = 0; t < n; t++) {
        uint32_t j = rt->calls_tmp[t];
        zo_call_rec *c = &rt->calls[j];
        if (!zo__call_live(rt, c) || c->on_stack) continue;
        if (!outermost && c->graph != gslot) continue;
        int rel = zo__act_clear(rt, c, &c->bwd_active);
        rel |= zo__act_clear(rt, c, &c->hold);
        if (rel) {
            zo_status s = zo__release_module(rt, c->m, &rt->coord[0]);
            if (s && !first) first = s;
        }
    }
    return first;
}

static void pc_release_all_calls(zo_runtime *rt) {
    /* every live record, in index order: they are on their graphs' lists */
    uint32_t n = 0;
    for (uint32_t gs = 0; gs < rt->n_graphs && n < rt->live_calls; gs++) {
        const zo_graph_rec *g = &rt->graphs[gs];
        if (!g->in_use) continue;
        for (uint32_t k = 0; k < g->n_calls; k++) rt->calls_tmp[n++] = g->calls[k].idx;
    }
    zo__sort_ids(rt->calls_tmp, n);
    for (uint32_t t = 0; t < n; t++) {
        uint32_t j = rt->calls_tmp[t];
        zo_call_rec *c = &rt->calls[j];
        if (!zo__call_live(rt, c)) continue;
        /* a forward still being built continues after the step and
         * its backward comes later: its windows stay open */
        if (c->window_open && !rt->graphs[c->graph].building) {
            rt->st.leftovers++;
            zo__emit(rt, ZO_EV_LEFTOVER, c->m, ZO_NO_PARAM, zo__mk_graph(rt, c->graph), c->window_count, 0, 1,
                     "window closed by release_and_reset_all");
            zo__window_close(rt, c);
            c->has_window = 0;
            memset(zo__in_state(c), 0, c->n_in);
        }
        (void)zo__act_clear(rt, c, &c->bwd_active);
        (void)zo__act_clear(rt, c, &c->hold);
    }
}

const zo_policy zo__policy_PER_CALL = {
    .deepspeed = 0,
    .pre_forward = pc_pre_forward,
    .track_inputs = pc_track_inputs,
    .post_forward = pc_post_forward,
    .track_outputs = pc_track_outputs,
    .unwound = pc_unwound,
    .sweep = zo__sweep_unheld,
    .output_grad = pc_output_grad,
    .input_grad = pc_input_grad,
    .param_grad_ready = pc_param_grad_ready,
    .backward_end = pc_backward_end,
    .release_all_calls = pc_release_all_calls,
};
