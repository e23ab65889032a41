/*
 * policy.h - the counter policies behind one table of functions.  Not
 * installed.
 *
 * runtime.c's hook entry points do what every policy shares: argument and
 * protocol checks, the forward stack, contexts, graphs and call records,
 * the entry point's own event.  The rest - how ds_grads_remaining is kept,
 * when a module's parameters are released, what a grad handle names - is
 * the runtime's policy, a zo_policy chosen at zo_runtime_create from
 * zoffload.h's ZO_GRADS_POLICY_MAP: policy NAME is the object
 * zo__policy_NAME, defined in a file of its own.
 *
 * Two families today.  zoffload's per-call windows (policy_per_call.c).
 * DeepSpeed's hooks, with its coordinator and engine (policy_deepspeed.c,
 * the hook bodies of deepspeed/runtime/zero/parameter_offload.py and the
 * backward bookkeeping of partitioned_param_coordinator.py / stage3.py),
 * whose three policies differ only in how the counter comes to exist
 * (policy_reset_on_forward.c, policy_lazy_init.c,
 * policy_init_at_register.c).  A fifth policy is one new file defining
 * zo__policy_NAME plus its line in ZO_GRADS_POLICY_MAP.
 *
 * The helpers below are shared by runtime.c and the policies.
 */
#ifndef ZO_POLICY_H
#define ZO_POLICY_H

#include "internal.h"

struct zo_policy {
    /* 1: DeepSpeed's semantics around the hooks: one coordinator for train
     * and eval, DeepSpeed's coordinator rules (coordinator.c), persistent
     * parameters released by release_and_reset_all, no gather on access
     * outside a forward, the DeepSpeed profile's engine (zo_ds_profile).
     * 0: zoffload's per-call coordinator (docs/protocol.md). */
    unsigned deepspeed;
    /* ds_grads_remaining (DeepSpeed family): 0 at registration
     * (init-at-register); reset to 0 in hook D on every call
     * (reset-on-forward); created as 0 by its first use without a
     * ZO_EV_COUNTER_UNINIT (lazy-init).  None set: a use before any
     * initialisation is reported (the Python AttributeError). */
    unsigned counter_at_register;
    unsigned counter_reset_in_d;
    unsigned counter_lazy;

    /* Each hook body runs after the entry point's common part; see the
     * entry point in zoffload.h for the contract.  NULL: nothing to do. */

    /* zo_pre_forward, before anything changes: reserve what the body after
     * the fetch needs, so that a refused allocation leaves nothing done */
    zo_status (*pre_forward_reserve)(zo_runtime *rt, zo_module_id m);
    /* zo_pre_forward: call idx is pushed and its module active; `fetched`
     * is the fetch's status (an error after activation: a failed
     * prefetch), returned unless the body fails itself */
    zo_status (*pre_forward)(zo_runtime *rt, uint32_t idx, zo_status fetched);
    /* zo_track_inputs: hook D for the open call idx; k of the n inputs
     * require grad */
    zo_status (*track_inputs)(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad, uint32_t k,
                              zo_grad_handle *out_handles);
    /* zo_post_forward: call idx was popped and has ended */
    zo_status (*post_forward)(zo_runtime *rt, uint32_t idx, zo_coord *co);
    /* zo_track_outputs: hook C for the ended call idx */
    zo_status (*track_outputs)(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad,
                               zo_grad_handle *out_handles);
    /* zo_forward_abort: call idx was unwound (popped, ended, hook C never runs) */
    zo_status (*unwound)(zo_runtime *rt, uint32_t idx);
    /* nothing of a pass runs any more (a pass ended without backward, was
     * aborted or discarded): release what no module holds */
    zo_status (*sweep)(zo_runtime *rt, int wait_inflight);
    /* zo_output_grad / zo_input_grad: h is a handle of this runtime of kind
     * `kind`; a kind the policy does not hand out is ZO_ERR_BAD_HANDLE */
    zo_status (*output_grad)(zo_runtime *rt, zo_grad_handle h, unsigned kind);
    zo_status (*input_grad)(zo_runtime *rt, zo_grad_handle h, unsigned kind);
    /* zo_param_grad_ready, after its event */
    zo_status (*param_grad_ready)(zo_runtime *rt, zo_param_id p);
    /* zo_backward_end: graph gslot's backward context was popped; the
     * graph is freed afterwards unless retained */
    zo_status (*backward_end)(zo_runtime *rt, uint32_t gslot, zo_graph gh, int outermost);
    /* zo_release_all: after waits and active sets cleared, before the
     * parameters are released: end what the step ends */
    void (*release_all_calls)(zo_runtime *rt);
    /* zo_release_all: after every parameter was released (the optimizer
     * step's own gathers) */
    zo_status (*step_end)(zo_runtime *rt);
};

/* the DeepSpeed-shaped policies (they share DeepSpeed's coordinator) */
#define ZO_IS_DS(rt)     ((rt)->pol->deepspeed != 0)
/* ... under a DeepSpeed 0.19 profile (engine or hooks only) */
#define ZO_DS_019(rt)    (ZO_IS_DS(rt) && (rt)->cfg.ds_profile != ZO_DS_0_15)
/* ... with 0.19's ZeRO-3 optimizer */
#define ZO_DS_ENGINE(rt) (ZO_IS_DS(rt) && (rt)->cfg.ds_profile == ZO_DS_0_19)
/* the release flags of a DeepSpeed release point */
#define ZO_DS_REL(rt)    (ZO_IS_DS(rt) ? ZO_REL_PERSIST : 0)

#define ZO__POLICY_DECL(name, value, text) extern const zo_policy zo__policy_##name;
ZO_GRADS_POLICY_MAP(ZO__POLICY_DECL)
#undef ZO__POLICY_DECL

/* The DeepSpeed family's hook bodies (policy_deepspeed.c), for the
 * DeepSpeed-shaped policies' definitions: zo_policy p = {ZO_DS_HOOKS, ...}. */
zo_status zo__ds_pre_forward_reserve(zo_runtime *rt, zo_module_id m);
zo_status zo__ds_pre_forward(zo_runtime *rt, uint32_t idx, zo_status fetched);
zo_status zo__ds_track_inputs(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad, uint32_t k,
                              zo_grad_handle *out_handles);
zo_status zo__ds_post_forward(zo_runtime *rt, uint32_t idx, zo_coord *co);
zo_status zo__ds_track_outputs(zo_runtime *rt, uint32_t idx, size_t n, const uint8_t *requires_grad,
                               zo_grad_handle *out_handles);
zo_status zo__ds_output_grad(zo_runtime *rt, zo_grad_handle h, unsigned kind);
zo_status zo__ds_input_grad(zo_runtime *rt, zo_grad_handle h, unsigned kind);
zo_status zo__ds_param_grad_ready(zo_runtime *rt, zo_param_id p);
zo_status zo__ds_backward_end(zo_runtime *rt, uint32_t gslot, zo_graph gh, int outermost);
zo_status zo__ds_step_end(zo_runtime *rt);
#define ZO_DS_HOOKS                                                                                                    \
    .deepspeed = 1, .pre_forward_reserve = zo__ds_pre_forward_reserve, .pre_forward = zo__ds_pre_forward,              \
    .track_inputs = zo__ds_track_inputs, .post_forward = zo__ds_post_forward, .track_outputs = zo__ds_track_outputs,   \
    .output_grad = zo__ds_output_grad, .input_grad = zo__ds_input_grad, .param_grad_ready = zo__ds_param_grad_ready,   \
    .backward_end = zo__ds_backward_end, .step_end = zo__ds_step_end

/* runtime.c: releases every non-persistent parameter no module holds; with
 * wait_inflight also waits and releases in-flight gathers */
zo_status zo__sweep_unheld(zo_runtime *rt, int wait_inflight);

/* ------------------------------------------------------------------ */
/* handles                                                              */
/* ------------------------------------------------------------------ */

/* Grad handle: kind-1 (2 bits) | tag (6) | gen (16) | call slot (20) |
 * tensor index (20).  Graph handle: tag (6) | 0 (6) | gen (32) | slot (20).
 * tag is the runtime's (1..63, never 0, so no handle is 0), so a handle
 * of another runtime is not one of this runtime's; gen is the slot's
 * generation, and a slot whose generation is exhausted is retired (never
 * reused), so a stale handle can never name a live record again. */
#define ZO_H_GEN_MASK 0xFFFFu
#define ZO_G_GEN_MAX  UINT32_MAX
static inline zo_grad_handle zo__mk_handle(const zo_runtime *rt, unsigned kind, uint32_t gen, uint32_t idx,
                                           uint32_t slot) {
    return ((uint64_t)(kind - 1u) << 62) | ((uint64_t)rt->tag << 56) | ((uint64_t)(gen & ZO_H_GEN_MASK) << 40) |
           ((uint64_t)(idx & 0xFFFFFu) << 20) | (uint64_t)(slot & 0xFFFFFu);
}
/* kind of a handle of this runtime, 0 for a handle of another runtime or 0 */
static inline unsigned zo__h_kind(const zo_runtime *rt, zo_grad_handle h) {
    if (h == 0 || ((h >> 56) & 0x3Fu) != rt->tag) return 0;
    return (unsigned)(h >> 62) + 1u;
}
static inline uint32_t zo__h_gen(zo_grad_handle h) { return (uint32_t)((h >> 40) & ZO_H_GEN_MASK); }
static inline uint32_t zo__h_idx(zo_grad_handle h) { return (uint32_t)((h >> 20) & 0xFFFFFu); }
static inline uint32_t zo__h_slot(zo_grad_handle h) { return (uint32_t)(h & 0xFFFFFu); }

static inline zo_graph zo__mk_graph(const zo_runtime *rt, uint32_t slot) {
    return ((uint64_t)rt->tag << 58) | ((uint64_t)rt->graphs[slot].gen << 20) | (uint64_t)slot;
}

/* whether call record c is live: made and not freed.  free_graph frees
 * the calls that have nothing left to do without reading their records
 * (they stay marked in_use until alloc_call takes them again), so a
 * record is live only while its graph is the one it was made in. */
static inline int zo__call_live(const zo_runtime *rt, const zo_call_rec *c) {
    if (!c->in_use) return 0;
    const zo_graph_rec *g = &rt->graphs[c->graph];
    return g->in_use && g->gen == c->ggen;
}

/* resolves a per-call handle; returns the call index or ZO_NONE32 */
static inline uint32_t zo__call_of_handle(const zo_runtime *rt, zo_grad_handle h) {
    uint32_t idx = zo__h_idx(h);
    if (idx >= rt->n_calls) return ZO_NONE32;
    const zo_call_rec *c = &rt->calls[idx];
    if (c->gen != zo__h_gen(h) || !zo__call_live(rt, c)) return ZO_NONE32;
    return idx;
}

/* ------------------------------------------------------------------ */
/* contexts, activations, windows                                       */
/* ------------------------------------------------------------------ */

static inline zo_coord *zo__coord_of_graph(zo_runtime *rt, uint32_t gslot) {
    /* DeepSpeed >= 0.15 has one coordinator for both modes
     * (DeepSpeedZeRoOffload.get_param_coordinator()); per-call keeps one per
     * mode, as DeepSpeed 0.14 did */
    if (ZO_IS_DS(rt)) return &rt->coord[0];
    return &rt->coord[rt->graphs[gslot].eval ? 1 : 0];
}

/* backward contexts on the context stack (kept as a count: O(1), where
 * scanning the stack made every hook O(open passes)) */
static inline uint32_t zo__n_bwd(const zo_runtime *rt) { return rt->n_bwd_ctx; }

/* Hook-order legality: the one table (util.c, beside the ds_status table)
 * of where each hook may run.  Two things decide it: the runtime's phase
 * (a forward pass open, a backward running: torch 2.15.0 and 1.13 fire
 * module hooks inside forward and gradient hooks inside backward) and, for
 * the hooks of one module call, the call's phase (torch 2.15.0 and 1.13,
 * with DeepSpeed 0.19.8's and 0.15.4's stage-3 hooks, fire A pre-forward,
 * D input tracking, B post-forward, C output tracking in that order; D may
 * be missing when no input is a tensor).  Finding the call (which record a
 * hook means) stays with the hook; the table says whether the hook may run
 * now. */
typedef enum zo__hook {
    ZO__HOOK_PRE_FORWARD,      /* A */
    ZO__HOOK_TRACK_INPUTS,     /* D */
    ZO__HOOK_POST_FORWARD,     /* B */
    ZO__HOOK_TRACK_OUTPUTS,    /* C */
    ZO__HOOK_OUTPUT_GRAD,      /* E: PreBackwardFunctionForModule.backward */
    ZO__HOOK_INPUT_GRAD,       /* F: PostBackwardFunctionModule.backward */
    ZO__HOOK_PARAM_GRAD_READY, /* a parameter's gradient accumulated */
    ZO__HOOK_FORWARD_ABORT,    /* an exception unwinds the forward */
    ZO__HOOK_N
} zo__hook;

typedef enum zo__call_phase {
    ZO__CALL_NONE,    /* the hook names no call record */
    ZO__CALL_OPEN,    /* after A */
    ZO__CALL_INPUTS,  /* after D */
    ZO__CALL_ENDED,   /* after B */
    ZO__CALL_OUTPUTS, /* after C */
    ZO__CALL_PHASE_N
} zo__call_phase;

/* the phase of call record c (from its flags) */
static inline zo__call_phase zo__call_phase_of(const zo_call_rec *c) {
    if (c->c_done) return ZO__CALL_OUTPUTS;
    if (c->ended) return ZO__CALL_ENDED;
    return c->d_done ? ZO__CALL_INPUTS : ZO__CALL_OPEN;
}

/* ZO_OK if hook h may run now on a call in phase ph (ZO__CALL_NONE for the
 * hooks that name no call); otherwise ZO_ERR_PROTOCOL with the reason as
 * the last error ("<hook>: no forward pass begun", "<hook>: no backward
 * running", "<hook>: ... module m"). */
enum { ZO__NEED_FORWARD = 1u, ZO__NEED_BACKWARD = 2u };
typedef struct zo__hook_rule {
    const char *name;
    unsigned needs;  /* ZO__NEED_*: the runtime phase the hook runs in */
    unsigned from;   /* the call phases it may find its call in (bit ZO__CALL_*) */
    const char *why; /* printf format with the module id, for a call phase not in `from` */
} zo__hook_rule;
extern const zo__hook_rule zo__hook_order[ZO__HOOK_N];
/* zo__hook_legal's error (the checks again, then the message) */
zo_status zo__hook_fail(zo_runtime *rt, zo__hook h, zo__call_phase ph, zo_module_id m);
static inline zo_status zo__hook_legal(zo_runtime *rt, zo__hook h, zo__call_phase ph, zo_module_id m) {
    if ((unsigned)h < ZO__HOOK_N && (unsigned)ph < ZO__CALL_PHASE_N) {
        const zo__hook_rule *r = &zo__hook_order[h];
        if (!((r->needs & ZO__NEED_FORWARD) && rt->n_ctx == 0) &&
            !((r->needs & ZO__NEED_BACKWARD) && zo__n_bwd(rt) == 0) && (r->from & (1u << ph)))
            return ZO_OK;
    }
    return zo__hook_fail(rt, h, ph, m);
}

/* call record c enters or leaves rt->held_calls after its bwd_active or
 * hold flag changed (capacity grown with the call table) */
static inline void zo__call_held_sync(zo_runtime *rt, zo_call_rec *c) {
    int held = c->bwd_active || c->hold;
    if (held == (c->held_pos != 0)) return;
    uint32_t idx = (uint32_t)(c - rt->calls);
    rt->graphs[c->graph].n_held += held ? 1u : (uint32_t)-1;
    if (held) {
        rt->held_calls[rt->n_held_calls++] = idx;
        c->held_pos = rt->n_held_calls;
    } else {
        uint32_t last = rt->held_calls[--rt->n_held_calls];
        if (last != idx) {
            rt->held_calls[c->held_pos - 1] = last;
            rt->calls[last].held_pos = c->held_pos;
        }
        c->held_pos = 0;
    }
}

/* activation flags of per-call records; the module is active while any is set */
static inline void zo__act_set(zo_runtime *rt, zo_call_rec *c, uint8_t *flag) {
    if (*flag) return;
    *flag = 1;
    rt->mods[c->m].activations++;
    zo__call_held_sync(rt, c);
}

/* clears a flag; returns 1 when the module became inactive */
static inline int zo__act_clear(zo_runtime *rt, zo_call_rec *c, uint8_t *flag) {
    if (!*flag) return 0;
    *flag = 0;
    zo__call_held_sync(rt, c);
    zo_mod *md = &rt->mods[c->m];
    md->activations--;
    return md->activations == 0;
}

/* room in ds_active_sub_modules of each parameter m fetches for one more
 * module (so that adding never allocates); ZO_OK/NOMEM */
static inline zo_status zo__reserve_act(zo_runtime *rt, zo_module_id m) {
    const zo_mod *md = &rt->mods[m];
    /* room for m and, under DeepSpeed 0.19, the module in backward that a
     * recompute charges a frozen parameter to (ds_charge_recompute) */
    uint32_t extra = ZO_DS_019(rt) ? 2 : 1;
    for (uint32_t i = 0; i < md->n_fetch; i++) {
        zo_param_id p = md->fetch[i];
        uint32_t need = rt->pars[p].n_act + extra;
        if (need <= 1) continue; /* act0 */
        zo_par_cold *pc = &rt->pcold[p];
        if (zo__reserve(rt, (void **)&pc->act, &pc->cap_act, need - 1, sizeof *pc->act)) return ZO_ERR_NOMEM;
    }
    return ZO_OK;
}

/* release_sub_module for the per-call policy once the module is inactive */
static inline zo_status zo__release_module(zo_runtime *rt, zo_module_id m, zo_coord *c) {
    return zo__coord_release(rt, c, m, 1);
}

static inline void zo__window_close(zo_runtime *rt, zo_call_rec *c) {
    if (!c->window_open) return;
    zo_mod *md = &rt->mods[c->m];
    md->open_windows--;
    md->window_sum -= c->window_count;
    c->window_open = 0;
    c->window_count = 0;
    rt->st.open_windows--;
}

#endif
