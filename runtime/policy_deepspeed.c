/*
 * policy_deepspeed.c - DeepSpeed's hook bodies, shared by the three
 * DeepSpeed-shaped counter policies (reset-on-forward, lazy-init,
 * init-at-register; they differ only in how ds_grads_remaining comes to
 * exist, zo_policy.counter_*).
 *
 * Mirrors deepspeed/runtime/zero/parameter_offload.py (0.15.4 and 0.19.8):
 * _post_backward_module_hook counts the inputs that require grad into the
 * module's ds_grads_remaining (hook D), _pre_backward_module_hook counts
 * every output into applied_pre_backward_ref_cnt (hook C), the
 * PreBackwardFunctionForModule / PostBackwardFunctionModule nodes fetch and
 * release; a grad handle names a module, not a call.  With a DeepSpeed 0.19
 * profile, also the coordinator's backward bookkeeping
 * (partitioned_param_coordinator.py: __active_backward_submodules,
 * ds_recompute_parameters) and, with the ZeRO-3 optimizer (ZO_DS_0_19),
 * stage3.py's backward epilogue and step.
 */
#include "policy.h"

/* ------------------------------------------------------------------ */
/* the coordinator's backward bookkeeping (DeepSpeed 0.19.8)            */
/* ------------------------------------------------------------------ */

/* __active_backward_submodules, a dict in insertion order: a list of the
 * modules in it, oldest first, so its last key is O(1) */

/* __active_backward_submodules[m.ds_id] = m at fetch_sub_module(forward=
 * False): a module already in it keeps its place */
static void ds_bwd_enter(zo_runtime *rt, zo_module_id m) {
    zo_mod_ds *md = &rt->mds[m];
    if (md->in_bwd) return;
    md->in_bwd = 1;
    md->bwd_next = ZO_NO_MODULE;
    md->bwd_prev = rt->n_bwd_mods ? rt->bwd_tail : ZO_NO_MODULE;
    if (rt->n_bwd_mods)
        rt->mds[rt->bwd_tail].bwd_next = m;
    else
        rt->bwd_head = m;
    rt->bwd_tail = m;
    rt->n_bwd_mods++;
}

/* __active_backward_submodules.pop(m.ds_id, None) */
static void ds_bwd_leave(zo_runtime *rt, zo_module_id m) {
    zo_mod_ds *md = &rt->mds[m];
    if (!md->in_bwd) return;
    if (md->bwd_prev != ZO_NO_MODULE)
        rt->mds[md->bwd_prev].bwd_next = md->bwd_next;
    else
        rt->bwd_head = md->bwd_next;
    if (md->bwd_next != ZO_NO_MODULE)
        rt->mds[md->bwd_next].bwd_prev = md->bwd_prev;
    else
        rt->bwd_tail = md->bwd_prev;
    md->in_bwd = 0;
    rt->n_bwd_mods--;
}

/* next(reversed(__active_backward_submodules)), or ZO_NO_MODULE */
static zo_module_id ds_bwd_last(const zo_runtime *rt) { return rt->n_bwd_mods ? rt->bwd_tail : ZO_NO_MODULE; }

/* fetch_sub_module(forward=True) inside a running backward (a checkpoint
 * recompute: torch._C._current_graph_task_id() != -1) with a module in
 * backward: each frozen parameter fetched is added to that module's
 * ds_recompute_parameters (update_recompute_parameters); trainable ones are
 * released by their own module's backward. */
static zo_status ds_charge_recompute(zo_runtime *rt, zo_module_id m) {
    zo_module_id owner = ds_bwd_last(rt);
    if (owner == ZO_NO_MODULE) return ZO_OK;
    const zo_mod *md = &rt->mods[m];
    zo_mod_ds *od = &rt->mds[owner];
    for (uint32_t i = 0; i < md->n_fetch; i++) {
        zo_param_id p = md->fetch[i];
        if (rt->pars[p].trainable) continue;
        int have = 0;
        for (uint32_t j = 0; j < od->n_recomp && !have; j++) have = od->recomp[j] == p;
        if (have) continue;
        if (od->n_recomp >= od->cap_recomp) break; /* cannot happen: zo_pre_forward made room */
        od->recomp[od->n_recomp++] = p;
    }
    /* update_recompute_parameters: param.ds_active_sub_modules.add(owner), so
     * the recomputed module's own release leaves it gathered for the module
     * in backward (capacity reserved by zo__reserve_act in the fetch) */
    for (uint32_t i = 0; i < md->n_fetch; i++)
        if (!rt->pars[md->fetch[i]].trainable) (void)zo__act_add(rt, md->fetch[i], owner);
    return ZO_OK;
}

/* the recompute parameters of m leave with it (release_sub_module(forward=
 * False) and release_backward_leftovers): m is discarded from their active
 * sets and those that are not persistent are released */
static zo_status ds_release_recompute(zo_runtime *rt, zo_module_id m) {
    zo_mod_ds *md = &rt->mds[m];
    zo_status first = ZO_OK;
    for (uint32_t j = 0; j < md->n_recomp; j++) {
        zo_param_id p = md->recomp[j];
        zo__act_discard(rt, p, m);
        if (!rt->pars[p].persistent) {
            zo_status s = zo__release_param(rt, p, 0);
            if (s && !first) first = s;
        }
    }
    md->n_recomp = 0;
    return first;
}

/* release_backward_leftovers (DeepSpeedZeroOptimizer_Stage3.
 * backward_epilogue, 0.19): the modules still in backward leave, most
 * recent first, releasing their non-persistent parameters */
static zo_status ds_release_backward_leftovers(zo_runtime *rt, zo_graph gh) {
    zo_status first = ZO_OK;
    for (;;) {
        zo_module_id m = ds_bwd_last(rt);
        if (m == ZO_NO_MODULE) break;
        zo_mod *md = &rt->mods[m];
        const zo_mod_ds *mx = &rt->mds[m];
        ds_bwd_leave(rt, m);
        rt->st.leftovers++;
        zo__emit(rt, ZO_EV_LEFTOVER, m, ZO_NO_PARAM, gh, mx->grads, mx->grads, mx->grads_init,
                 "release_backward_leftovers: post-backward never released the module");
        zo_status s = ds_release_recompute(rt, m);
        if (s && !first) first = s;
        for (uint32_t i = 0; i < md->n_fetch; i++) {
            zo_param_id p = md->fetch[i];
            zo__act_discard(rt, p, m);
            if (!rt->pars[p].persistent) {
                s = zo__release_param(rt, p, 0);
                if (s && !first) first = s;
            }
        }
    }
    return first;
}

/* ------------------------------------------------------------------ */
/* hooks                                                                */
/* ------------------------------------------------------------------ */

zo_status zo__ds_pre_forward_reserve(zo_runtime *rt, zo_module_id m) {
    if (!ZO_DS_019(rt) || zo__n_bwd(rt) == 0) return ZO_OK;
    /* a recompute may charge m's frozen parameters to the module in
     * backward (ds_charge_recompute): room for them now, so that a
     * refused allocation leaves nothing done */
    zo_module_id owner = ds_bwd_last(rt);
    if (owner == ZO_NO_MODULE) return ZO_OK;
    zo_mod_ds *od = &rt->mds[owner];
    if (zo__reserve(rt, (void **)&od->recomp, &od->cap_recomp, od->n_recomp + rt->mods[m].n_fetch + 1,
                    sizeof *od->recomp))
        return zo__fail(rt, ZO_ERR_NOMEM, "zo_pre_forward: ds_recompute_parameters");
    return ZO_OK;
}

zo_status zo__ds_pre_forward(zo_runtime *rt, uint32_t idx, zo_status fetched) {
    const zo_call_rec *c = &rt->calls[idx];
    if (ZO_DS_019(rt) && c->recompute && fetched == ZO_OK) return ds_charge_recompute(rt, c->m);
    return fetched;
}

/* _post_backward_module_hook: ds_grads_remaining counts the inputs that
 * require grad, each wrapped in a PostBackwardFunctionModule */
zo_status zo__ds_track_inputs(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad, uint32_t k,
                              zo_grad_handle *out_handles) {
    (void)k;
    zo_call_rec *c = &rt->calls[idx];
    zo_module_id m = c->m;
    zo_mod_ds *md = &rt->mds[m];
    zo_graph gh = zo__mk_graph(rt, c->graph);
    int64_t before = md->grads;
    int valid_before = md->grads_init;
    if (rt->pol->counter_reset_in_d) {
        md->grads = 0; /* module.ds_grads_remaining = 0 */
        md->grads_init = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (requires_grad[i]) {
            if (!md->grads_init) {
                if (!rt->pol->counter_lazy) {
                    rt->st.uninit_counter_events++;
                    zo__emit(rt, ZO_EV_COUNTER_UNINIT, m, ZO_NO_PARAM, gh, 0, 0, 0,
                             "ds_grads_remaining += 1 before initialisation");
                }
                md->grads = 0;
                md->grads_init = 1;
            }
            md->grads += 1;
            out_handles[i] = zo__mk_handle(rt, ZO_H_LEGACY_IN, 0, m, 0);
        } else {
            out_handles[i] = 0;
        }
    }
    c->d_done = 1;
    zo__emit(rt, ZO_EV_TRACK_INPUTS, m, ZO_NO_PARAM, gh, valid_before ? before : 0, md->grads, md->grads_init ? 1 : 0,
             valid_before ? NULL : "counter was uninitialised before");
    return ZO_OK;
}

/* _post_forward_module_hook -> release_sub_module(forward=True) */
zo_status zo__ds_post_forward(zo_runtime *rt, uint32_t idx, zo_coord *co) {
    return zo__coord_release(rt, co, rt->calls[idx].m, 1);
}

/* _pre_backward_module_hook: applied_pre_backward_ref_cnt += every output */
zo_status zo__ds_track_outputs(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad,
                               zo_grad_handle *out_handles) {
    (void)requires_grad;
    zo_call_rec *c = &rt->calls[idx];
    zo_module_id m = c->m;
    zo_mod_ds *md = &rt->mds[m];
    int64_t before = md->refcnt;
    int vb = md->ref_init;
    if (!md->ref_init) {
        md->refcnt = 0;
        md->ref_init = 1;
    }
    md->refcnt += (int64_t)n;
    for (size_t i = 0; i < n; i++) out_handles[i] = zo__mk_handle(rt, ZO_H_LEGACY_OUT, 0, m, 0);
    zo__emit(rt, ZO_EV_TRACK_OUTPUTS, m, ZO_NO_PARAM, zo__mk_graph(rt, c->graph), vb ? before : 0, md->refcnt, 1, NULL);
    return ZO_OK;
}

/* the module a DeepSpeed grad handle names (hooks C and D hand out one
 * handle per module, not per call): ZO_NO_MODULE after reporting why not */
static zo_module_id ds_handle_module(zo_runtime *rt, zo_grad_handle h, unsigned kind, unsigned want, const char *fn,
                                     const char *what) {
    if (kind != want) {
        (void)zo__fail(rt, ZO_ERR_BAD_HANDLE, "%s: not an %s handle of this runtime", fn, what);
        return ZO_NO_MODULE;
    }
    zo_module_id m = zo__h_idx(h);
    if (m >= rt->n_mods || zo__h_gen(h) != 0 || zo__h_slot(h) != 0) {
        (void)zo__fail(rt, ZO_ERR_BAD_HANDLE, "%s: bad handle", fn);
        return ZO_NO_MODULE;
    }
    return m;
}

/* PreBackwardFunctionForModule.backward -> _run_before_backward_function:
 * pre_sub_module_backward_function while applied_pre_backward_ref_cnt > 0 */
zo_status zo__ds_output_grad(zo_runtime *rt, zo_grad_handle h, unsigned kind) {
    zo_module_id m = ds_handle_module(rt, h, kind, ZO_H_LEGACY_OUT, "zo_output_grad", "output");
    if (m == ZO_NO_MODULE) return ZO_ERR_BAD_HANDLE;
    {
        zo_status hs = zo__hook_legal(rt, ZO__HOOK_OUTPUT_GRAD, ZO__CALL_NONE, ZO_NO_MODULE);
        if (hs) return hs;
    }
    zo_mod_ds *md = &rt->mds[m];
    zo_graph gh = zo__mk_graph(rt, rt->ctx[rt->n_ctx - 1].graph);
    if (!md->ref_init) {
        rt->st.uninit_counter_events++;
        zo__emit(rt, ZO_EV_COUNTER_UNINIT, m, ZO_NO_PARAM, gh, 0, 0, 0,
                 "applied_pre_backward_ref_cnt read before initialisation");
        md->ref_init = 1;
        md->refcnt = 0;
    }
    int64_t before = md->refcnt;
    zo_status s = ZO_OK;
    if (md->refcnt > 0) {
        int activated = 0;
        /* fetch_sub_module(forward=False) enters the module in
         * __active_backward_submodules before fetching (0.19) */
        if (ZO_DS_019(rt)) ds_bwd_enter(rt, m);
        s = zo__coord_fetch(rt, &rt->coord[0], m, &activated); /* pre_sub_module_backward_function */
        if (s == ZO_OK) md->refcnt -= 1;                       /* Python raises before the decrement */
    }
    zo__emit(rt, ZO_EV_OUTPUT_GRAD, m, ZO_NO_PARAM, gh, before, md->refcnt, 1, NULL);
    return s;
}

/* PostBackwardFunctionModule.backward -> _run_after_backward_function:
 * ds_grads_remaining -= 1, post_sub_module_backward_function at 0 */
zo_status zo__ds_input_grad(zo_runtime *rt, zo_grad_handle h, unsigned kind) {
    zo_module_id m = ds_handle_module(rt, h, kind, ZO_H_LEGACY_IN, "zo_input_grad", "input");
    if (m == ZO_NO_MODULE) return ZO_ERR_BAD_HANDLE;
    {
        zo_status hs = zo__hook_legal(rt, ZO__HOOK_INPUT_GRAD, ZO__CALL_NONE, ZO_NO_MODULE);
        if (hs) return hs;
    }
    zo_mod_ds *md = &rt->mds[m];
    zo_graph gh = zo__mk_graph(rt, rt->ctx[rt->n_ctx - 1].graph);
    int vb = md->grads_init;
    if (!md->grads_init) {
        if (!rt->pol->counter_lazy) {
            rt->st.uninit_counter_events++;
            zo__emit(rt, ZO_EV_COUNTER_UNINIT, m, ZO_NO_PARAM, gh, 0, 0, 0,
                     "ds_grads_remaining -= 1 before initialisation");
        }
        md->grads = 0;
        md->grads_init = 1;
    }
    int64_t before = md->grads;
    md->grads -= 1;
    zo__emit(rt, ZO_EV_INPUT_GRAD, m, ZO_NO_PARAM, gh, vb ? before : 0, md->grads, 1, NULL);
    if (md->grads != 0) return ZO_OK;
    /* post_sub_module_backward_function -> release_sub_module(forward=
     * False), in a retain_graph backward too (DeepSpeed has no special
     * case for it); 0.19 also releases the module's recompute
     * parameters and takes it out of __active_backward_submodules */
    zo_status s = zo__coord_release(rt, &rt->coord[0], m, 1);
    if (ZO_DS_019(rt)) {
        zo_status s2 = ds_release_recompute(rt, m);
        if (s2 && !s) s = s2;
        ds_bwd_leave(rt, m);
    }
    return s;
}

/* the post-accumulate-grad hook releases nothing in DeepSpeed's hooks; the
 * ZeRO-3 optimizer's step needs to know a gradient was produced */
zo_status zo__ds_param_grad_ready(zo_runtime *rt, zo_param_id p) {
    (void)p;
    rt->ds_step_grads++;
    return ZO_OK;
}

/* DeepSpeed 0.19's ZeRO-3 optimizer: engine.backward's epilogue after the
 * autograd call returns */
zo_status zo__ds_backward_end(zo_runtime *rt, uint32_t gslot, zo_graph gh, int outermost) {
    (void)gslot;
    if (outermost && ZO_DS_ENGINE(rt)) return ds_release_backward_leftovers(rt, gh);
    return ZO_OK;
}

/* DeepSpeed 0.19's ZeRO-3 optimizer step (stage3.py step): after
 * _partition_all_parameters() and the update, _post_step() gathers the
 * ds_persist parameters again (persistent_parameters[0].all_gather),
 * held by no module.  A step without any gradient fails before that
 * (_get_norm_groups), so it only partitions. */
zo_status zo__ds_step_end(zo_runtime *rt) {
    zo_status first = ZO_OK;
    if (ZO_DS_ENGINE(rt) && rt->ds_step_grads > 0 && zo__rebuild(rt) == ZO_OK) {
        /* the persistent parameters only (rebuilt with the fetch lists) */
        uint32_t n = 0;
        for (uint32_t i = 0; i < rt->n_pers_ids; i++) {
            zo_param_id p = rt->pers_ids[i];
            if (rt->pars[p].status == ZO_PARAM_NOT_AVAILABLE) rt->scratch[n++] = p;
        }
        if (n) {
            zo_status s = zo__gather(rt, rt->scratch, n, 0);
            if (s && !first) first = s;
            for (uint32_t i = 0; i < rt->n_pers_ids && !s; i++) {
                zo_param_id p = rt->pers_ids[i];
                if (rt->pars[p].status == ZO_PARAM_INFLIGHT) {
                    zo_status w = zo__wait_param(rt, p);
                    if (w && !first) first = w;
                }
            }
        }
    }
    rt->ds_step_grads = 0;
    return first;
}
