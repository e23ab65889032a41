/*
 * test_policies.c - the four ds_grads_remaining policies driven through
 * realistic hook sequences in the order PyTorch fires DeepSpeed's hooks,
 * and the three scenarios of the reference protocol asserted exactly:
 *
 *  (a) a module called twice in one forward, then one backward
 *      (ALBERT-style sharing): RESET_ON_FORWARD counts 1, 1 in forward,
 *      0 then -1 in backward and keeps the params gathered; PER_CALL never
 *      negative and releases.
 *  (b) module b whose input requires grad and whose output does not reach
 *      the loss in step 1 but does in steps 2 and 3: INIT_AT_REGISTER and
 *      LAZY_INIT count 1, 1, 1 after each backward and keep b's params
 *      gathered after backward in steps 2 and 3; RESET_ON_FORWARD releases
 *      in steps 2 and 3; PER_CALL releases in every step and reports b's
 *      step-1 window as a leftover.
 *  (c) b's output unused in all three steps: INIT_AT_REGISTER counts 1, 2, 3.
 *
 * Policy runs use hd_policy_config(): nothing persistent, no prefetch, no
 * reuse keeping, so every release decision is the hook's own.
 */
#include "hookdrv.h"

static hd_events g_ev;

static const char *pname(int pol) {
    const char *n = zo_policy_name((zo_grads_policy)pol);
    return n ? n : "?";
}

static void expect_no_uninit(zo_runtime *rt) {
    HD_EQ(HD_STATS(rt).uninit_counter_events, 0);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_COUNTER_UNINIT, HD_ANY, HD_ANY), 0);
}

/* ------------------------------------------------------------------ */
/* Scenario (a): m called twice in one forward                          */
/* ------------------------------------------------------------------ */

typedef struct scen_a {
    zo_runtime *rt;
    zo_module_id r, m;
    zo_param_id p;
    zo_graph g;
    hd_call cr, c1, c2;
} scen_a;

static void scen_a_setup(scen_a *s, zo_config cfg) {
    s->rt = HD_CREATE(cfg, &g_ev);
    s->r = HD_MODULE(s->rt, ZO_NO_MODULE, "r");
    s->m = HD_MODULE(s->rt, s->r, "shared_layer");
    s->p = HD_PARAM(s->rt, s->m, "weight", 1000);
    HD_EQ(HD_PINFO(s->rt, s->p).persistent, 0);
}

static void test_scenario_a_reset_on_forward(void **state) {
    (void)state;
    scen_a s;
    scen_a_setup(&s, hd_policy_config(ZO_GRADS_RESET_ON_FORWARD));
    zo_runtime *rt = s.rt;

    s.g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &s.cr, s.r, ZO_CALL_GRAD, "1");
    /* call 1: h1 = m(x) */
    HD_ENTER(rt, &s.c1, s.m, ZO_CALL_GRAD, "1");
    HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 1); /* after call 1's hook D */
    HD_EQ(HD_MINFO(rt, s.m).grads_initialised, 1);
    HD_EXIT(rt, &s.c1, "1");
    HD_RELEASED(rt, s.p);
    /* call 2: h2 = m(h1) */
    HD_ENTER(rt, &s.c2, s.m, ZO_CALL_GRAD, "1");
    HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 1); /* reset to 0 in hook D, then 1 */
    HD_EXIT(rt, &s.c2, "1");
    HD_EXIT(rt, &s.cr, "1");
    HD_FWD_END(rt, s.g);
    HD_EQ(HD_MINFO(rt, s.m).pre_backward_ref_cnt, 2);

    /* event view of hook D: counter_after 1 for both calls */
    size_t i = hd_ev_find(&g_ev, 0, ZO_EV_TRACK_INPUTS, s.m, HD_ANY);
    assert_true(i != (size_t)-1);
    assert_true(g_ev.ev[i].counter_valid);
    HD_EQ(g_ev.ev[i].counter_after, 1);
    i = hd_ev_find(&g_ev, i + 1, ZO_EV_TRACK_INPUTS, s.m, HD_ANY);
    assert_true(i != (size_t)-1);
    HD_EQ(g_ev.ev[i].counter_after, 1);

    size_t bwd_mark = g_ev.n;
    HD_BWD_BEGIN(rt, s.g);
    HD_OUT_GRAD(rt, s.cr.out[0]);
    HD_OUT_GRAD(rt, s.c2.out[0]);
    HD_EQ(HD_MINFO(rt, s.m).pre_backward_ref_cnt, 1);
    HD_ACCESS(rt, s.m, s.p); /* m's backward computation */
    HD_IN_GRAD(rt, s.c2.in[0]);
    HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 0);
    HD_RELEASED(rt, s.p); /* reached 0: release_sub_module */
    HD_OUT_GRAD(rt, s.c1.out[0]);
    HD_EQ(HD_MINFO(rt, s.m).pre_backward_ref_cnt, 0);
    HD_AVAILABLE(rt, s.p);
    HD_IN_GRAD(rt, s.c1.in[0]);
    HD_EQ(HD_MINFO(rt, s.m).grads_remaining, -1);
    HD_GRAD_READY(rt, s.p);
    HD_IN_GRAD(rt, s.cr.in[0]);
    HD_BWD_END(rt, s.g);

    /* ends at -1 with the parameter still gathered */
    HD_EQ(HD_MINFO(rt, s.m).grads_remaining, -1);
    HD_AVAILABLE(rt, s.p);
    /* event view of the post-backward decrements: 0 then -1 */
    i = hd_ev_find(&g_ev, bwd_mark, ZO_EV_INPUT_GRAD, s.m, HD_ANY);
    assert_true(i != (size_t)-1);
    assert_true(g_ev.ev[i].counter_valid);
    HD_EQ(g_ev.ev[i].counter_before, 1);
    HD_EQ(g_ev.ev[i].counter_after, 0);
    i = hd_ev_find(&g_ev, i + 1, ZO_EV_INPUT_GRAD, s.m, HD_ANY);
    assert_true(i != (size_t)-1);
    HD_EQ(g_ev.ev[i].counter_before, 0);
    HD_EQ(g_ev.ev[i].counter_after, -1);
    assert_true(g_ev.min_counter == -1);

    /* only the optimizer-step sweep frees it */
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    expect_no_uninit(rt);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void scenario_a_per_call(zo_config cfg) {
    scen_a s;
    scen_a_setup(&s, cfg);
    zo_runtime *rt = s.rt;

    s.g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &s.cr, s.r, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &s.c1, s.m, ZO_CALL_GRAD, "1");
    assert_true(s.c1.in[0] != 0);
    zo_module_info mi = HD_MINFO(rt, s.m);
    HD_EQ(mi.open_windows, 1);
    HD_EQ(mi.grads_remaining, 1);
    HD_EXIT(rt, &s.c1, "1");
    HD_RELEASED(rt, s.p);
    HD_ENTER(rt, &s.c2, s.m, ZO_CALL_GRAD, "1");
    assert_true(s.c2.in[0] != 0 && s.c2.in[0] != s.c1.in[0]);
    mi = HD_MINFO(rt, s.m);
    HD_EQ(mi.open_windows, 2); /* one window per call: counts never mix */
    HD_EQ(mi.grads_remaining, 2);
    HD_EXIT(rt, &s.c2, "1");
    HD_EXIT(rt, &s.cr, "1");
    HD_FWD_END(rt, s.g);
    HD_RELEASED(rt, s.p);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_WINDOW_OPEN, s.m, HD_ANY), 2);
    const zo_event *wo = hd_ev_last(&g_ev, ZO_EV_WINDOW_OPEN, s.m, HD_ANY);
    assert_true(wo->counter_valid);
    HD_EQ(wo->counter_after, 1);

    HD_BWD_BEGIN(rt, s.g);
    HD_OUT_GRAD(rt, s.cr.out[0]);
    HD_OUT_GRAD(rt, s.c2.out[0]);
    HD_AVAILABLE(rt, s.p);
    uint64_t unplanned = HD_STATS(rt).unplanned_fetches;
    HD_ACCESS(rt, s.m, s.p);
    HD_EQ(HD_STATS(rt).unplanned_fetches, unplanned); /* fetched by the pre-backward */
    HD_IN_GRAD(rt, s.c2.in[0]);
    HD_RELEASED(rt, s.p); /* call 2's window closed */
    HD_EQ(HD_MINFO(rt, s.m).open_windows, 1);
    HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 1);
    HD_OUT_GRAD(rt, s.c1.out[0]);
    HD_AVAILABLE(rt, s.p);
    HD_ACCESS(rt, s.m, s.p);
    HD_IN_GRAD(rt, s.c1.in[0]);
    HD_RELEASED(rt, s.p);
    HD_GRAD_READY(rt, s.p);
    HD_IN_GRAD(rt, s.cr.in[0]);
    HD_BWD_END(rt, s.g);

    mi = HD_MINFO(rt, s.m);
    HD_EQ(mi.open_windows, 0);
    HD_EQ(mi.grads_remaining, 0);
    HD_ALL_RELEASED(rt); /* by the hooks, before any sweep */
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_WINDOW_CLOSE, s.m, HD_ANY), 2);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
    HD_EQ(HD_STATS(rt).leftovers, 0);
    /* no counter ever negative */
    assert_true(g_ev.min_counter >= 0);
    expect_no_uninit(rt);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_scenario_a_per_call(void **state) {
    (void)state;
    scenario_a_per_call(hd_policy_config(ZO_GRADS_PER_CALL));
}

/* Same with the default coordinator settings (prefetch and reuse on). */
static void test_scenario_a_per_call_default_coordinator(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.param_persistence_threshold = 0;
    scenario_a_per_call(cfg);
}

/* The other legacy policies on (a): counters 1, 2 in forward (never
 * reset), 1 then 0 in backward -> released at the second input gradient. */
static void test_scenario_a_never_reset_policies(void **state) {
    (void)state;
    zo_grads_policy pols[2] = {ZO_GRADS_INIT_AT_REGISTER, ZO_GRADS_LAZY_INIT};
    for (int k = 0; k < 2; k++) {
        scen_a s;
        scen_a_setup(&s, hd_policy_config(pols[k]));
        zo_runtime *rt = s.rt;
        if (pols[k] == ZO_GRADS_INIT_AT_REGISTER) {
            HD_EQ(HD_MINFO(rt, s.m).grads_initialised, 1);
            HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 0);
        } else {
            HD_EQ(HD_MINFO(rt, s.m).grads_initialised, 0); /* created on first access */
        }
        s.g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &s.cr, s.r, ZO_CALL_GRAD, "1");
        HD_ENTER(rt, &s.c1, s.m, ZO_CALL_GRAD, "1");
        HD_EQ(HD_MINFO(rt, s.m).grads_initialised, 1);
        HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 1);
        HD_EXIT(rt, &s.c1, "1");
        HD_ENTER(rt, &s.c2, s.m, ZO_CALL_GRAD, "1");
        HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 2);
        HD_EXIT(rt, &s.c2, "1");
        HD_EXIT(rt, &s.cr, "1");
        HD_FWD_END(rt, s.g);
        HD_BWD_BEGIN(rt, s.g);
        HD_OUT_GRAD(rt, s.cr.out[0]);
        HD_OUT_GRAD(rt, s.c2.out[0]);
        HD_IN_GRAD(rt, s.c2.in[0]);
        HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 1);
        HD_AVAILABLE(rt, s.p);
        HD_OUT_GRAD(rt, s.c1.out[0]);
        HD_IN_GRAD(rt, s.c1.in[0]);
        HD_EQ(HD_MINFO(rt, s.m).grads_remaining, 0);
        HD_RELEASED(rt, s.p);
        HD_GRAD_READY(rt, s.p);
        HD_IN_GRAD(rt, s.cr.in[0]);
        HD_BWD_END(rt, s.g);
        HD_ALL_RELEASED(rt);
        expect_no_uninit(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
        (void)pname;
    }
}

/* ------------------------------------------------------------------ */
/* Scenarios (b) and (c): b's output reaches the loss only in some steps */
/* ------------------------------------------------------------------ */

typedef struct bc_result {
    int64_t count_after_bwd[3]; /* b's ds_grads_remaining after backward_end */
    zo_param_status status_after_bwd[3];
    size_t leftovers_b[3];     /* ZO_EV_LEFTOVER naming b, per step, up to backward_end */
    uint64_t leftover_stat[3]; /* stats.leftovers increase, per step, up to backward_end */
    int64_t min_counter;
} bc_result;

/* root r (no params) takes x (requires grad) and calls b(x).  When
 * used[step] == 0 the loss is built from r's path not through b (r's
 * output depends on x directly), so b's PreBackward/PostBackward nodes
 * never fire.  After each step: zo_release_all (optimizer step). */
static bc_result run_b_steps(zo_grads_policy pol, const int used[3]) {
    bc_result res;
    memset(&res, 0, sizeof(res));
    zo_config cfg = hd_policy_config(pol);
    zo_runtime *rt = HD_CREATE(cfg, &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id b = HD_MODULE(rt, r, "b");
    zo_param_id pb = HD_PARAM(rt, b, "weight", 1000);

    for (int step = 0; step < 3; step++) {
        hd_call cr, cb;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        HD_CALL(rt, &cb, b, ZO_CALL_GRAD, "1", "1");
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_RELEASED(rt, pb); /* released by b's post-forward */

        size_t mark = g_ev.n;
        uint64_t left0 = HD_STATS(rt).leftovers;
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        if (used[step]) {
            HD_OUT_GRAD(rt, cb.out[0]); /* b's pre-backward: fetch */
            HD_AVAILABLE(rt, pb);
            HD_ACCESS(rt, b, pb);
            HD_GRAD_READY(rt, pb);
            HD_IN_GRAD(rt, cb.in[0]); /* b's post-backward */
        }
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        zo_module_info mi = HD_MINFO(rt, b);
        res.count_after_bwd[step] = mi.grads_remaining;
        res.status_after_bwd[step] = HD_PINFO(rt, pb).status;
        res.leftovers_b[step] = hd_ev_count_from(&g_ev, mark, ZO_EV_LEFTOVER, b, HD_ANY);
        res.leftover_stat[step] = HD_STATS(rt).leftovers - left0;
        HD_CONSISTENT(rt);
        HD_RELEASE_ALL(rt); /* optimizer step: release_and_reset_all */
        HD_ALL_RELEASED(rt);
    }
    res.min_counter = g_ev.min_counter;
    expect_no_uninit(rt);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
    return res;
}

static const int B_USED[3] = {0, 1, 1};
static const int C_USED[3] = {0, 0, 0};

static void test_scenario_b_never_reset_policies(void **state) {
    (void)state;
    zo_grads_policy pols[2] = {ZO_GRADS_INIT_AT_REGISTER, ZO_GRADS_LAZY_INIT};
    for (int k = 0; k < 2; k++) {
        bc_result r = run_b_steps(pols[k], B_USED);
        print_message("(b) %s: counts after backward %lld %lld %lld\n", pname(pols[k]), (long long)r.count_after_bwd[0],
                      (long long)r.count_after_bwd[1], (long long)r.count_after_bwd[2]);
        HD_EQ(r.count_after_bwd[0], 1);
        HD_EQ(r.count_after_bwd[1], 1);
        HD_EQ(r.count_after_bwd[2], 1);
        HD_EQ(r.status_after_bwd[0], ZO_PARAM_NOT_AVAILABLE);
        /* fetched by b's pre-backward, never released by a hook */
        HD_EQ(r.status_after_bwd[1], ZO_PARAM_AVAILABLE);
        HD_EQ(r.status_after_bwd[2], ZO_PARAM_AVAILABLE);
    }
}

static void test_scenario_b_reset_on_forward(void **state) {
    (void)state;
    bc_result r = run_b_steps(ZO_GRADS_RESET_ON_FORWARD, B_USED);
    HD_EQ(r.count_after_bwd[0], 1);
    HD_EQ(r.count_after_bwd[1], 0);
    HD_EQ(r.count_after_bwd[2], 0);
    HD_EQ(r.status_after_bwd[1], ZO_PARAM_NOT_AVAILABLE);
    HD_EQ(r.status_after_bwd[2], ZO_PARAM_NOT_AVAILABLE);
}

static void test_scenario_b_per_call(void **state) {
    (void)state;
    bc_result r = run_b_steps(ZO_GRADS_PER_CALL, B_USED);
    for (int s = 0; s < 3; s++) {
        HD_EQ(r.status_after_bwd[s], ZO_PARAM_NOT_AVAILABLE);
        HD_EQ(r.count_after_bwd[s], 0);
    }
    /* step 1: b's window closed by the end-of-backward callback */
    HD_EQ(r.leftovers_b[0], 1);
    HD_EQ(r.leftovers_b[1], 0);
    HD_EQ(r.leftovers_b[2], 0);
    HD_EQ(r.leftover_stat[0], 1);
    HD_EQ(r.leftover_stat[1], 0);
    HD_EQ(r.leftover_stat[2], 0);
    assert_true(r.min_counter >= 0);
}

static void test_scenario_c_all_policies(void **state) {
    (void)state;
    bc_result r = run_b_steps(ZO_GRADS_INIT_AT_REGISTER, C_USED);
    print_message("(c) init-at-register: counts after backward %lld %lld %lld\n", (long long)r.count_after_bwd[0],
                  (long long)r.count_after_bwd[1], (long long)r.count_after_bwd[2]);
    HD_EQ(r.count_after_bwd[0], 1);
    HD_EQ(r.count_after_bwd[1], 2);
    HD_EQ(r.count_after_bwd[2], 3);

    r = run_b_steps(ZO_GRADS_LAZY_INIT, C_USED);
    HD_EQ(r.count_after_bwd[0], 1);
    HD_EQ(r.count_after_bwd[1], 2);
    HD_EQ(r.count_after_bwd[2], 3);

    r = run_b_steps(ZO_GRADS_RESET_ON_FORWARD, C_USED);
    HD_EQ(r.count_after_bwd[0], 1);
    HD_EQ(r.count_after_bwd[1], 1);
    HD_EQ(r.count_after_bwd[2], 1);

    r = run_b_steps(ZO_GRADS_PER_CALL, C_USED);
    for (int s = 0; s < 3; s++) {
        HD_EQ(r.status_after_bwd[s], ZO_PARAM_NOT_AVAILABLE);
        HD_EQ(r.count_after_bwd[s], 0);
        HD_EQ(r.leftovers_b[s], 1);
        HD_EQ(r.leftover_stat[s], 1);
    }
    assert_true(r.min_counter >= 0);
}

/* ------------------------------------------------------------------ */
/* Eval forward, no_grad inside training, abort, retain_graph,          */
/* interleaved micro-batches, access in backward, recompute             */
/* ------------------------------------------------------------------ */

/* Eval forward (module.training False, no_grad) ends with every
 * non-persistent param released, under every policy, with the default
 * coordinator (prefetch + reuse distance on) over three steps. */
static void test_eval_forward_releases_all(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        zo_config cfg = ZO_CONFIG_INIT;
        cfg.grads_policy = (zo_grads_policy)pol;
        cfg.param_persistence_threshold = 10; /* the biases persist */
        cfg.world_size = 2;
        zo_runtime *rt = HD_CREATE(cfg, &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id a = HD_MODULE(rt, r, "a");
        zo_module_id b = HD_MODULE(rt, r, "b");
        zo_module_id c = HD_MODULE(rt, b, "c");
        zo_param_id pa = HD_PARAM(rt, a, "w", 300);
        HD_PARAM(rt, a, "bias", 10);
        zo_param_id pb = HD_PARAM(rt, b, "w", 200);
        zo_param_id pc = HD_PARAM(rt, c, "w", 100);
        HD_OK(rt, zo_module_use_param(rt, c, pa));
        for (int step = 0; step < 3; step++) {
            hd_call cr, ca, cb, cc, ca2;
            zo_graph g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
            HD_ENTER(rt, &cr, r, 0, "0");
            HD_CALL(rt, &ca, a, 0, "0", "0");
            HD_ENTER(rt, &cb, b, 0, "0");
            HD_CALL(rt, &cc, c, 0, "0", "0");
            HD_ACCESS(rt, b, pb);
            HD_EXIT(rt, &cb, "0");
            HD_ENTER(rt, &ca2, a, 0, "0"); /* reused module */
            HD_ACCESS(rt, a, pa);
            HD_EXIT(rt, &ca2, "0");
            HD_EXIT(rt, &cr, "0");
            HD_FWD_END(rt, g);
            HD_ALL_RELEASED(rt); /* by the hooks */
            (void)pc;
        }
        /* per-call: the train trace was not touched by eval forwards; the
         * DeepSpeed-shaped policies have DeepSpeed's one coordinator for
         * both modes (0.15+), which recorded r, a, b, c, a */
        HD_EQ(HD_TRACE(rt).n_modules, pol == ZO_GRADS_PER_CALL ? 0 : 5);
        if (pol == ZO_GRADS_PER_CALL) HD_EQ(HD_STATS(rt).open_windows, 0);
        assert_true(g_ev.min_counter >= 0);
        expect_no_uninit(rt);
        HD_EQ(g_ev.illegal_transitions, 0);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* A module called under no_grad inside a training forward, its input
 * requiring grad: per-call opens no window (handle 0), legacy policies
 * count the input anyway and never see it come back. */
static void test_no_grad_call_inside_training(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        zo_config cfg = hd_policy_config((zo_grads_policy)pol);
        zo_runtime *rt = HD_CREATE(cfg, &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id a = HD_MODULE(rt, r, "a");
        zo_module_id n = HD_MODULE(rt, r, "teacher");
        zo_param_id pa = HD_PARAM(rt, a, "w", 100);
        zo_param_id pn = HD_PARAM(rt, n, "w", 100);
        for (int step = 1; step <= 2; step++) {
            hd_call cr, ca, cn;
            size_t mark = g_ev.n;
            zo_graph g = HD_FWD_BEGIN(rt);
            HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
            HD_CALL(rt, &ca, a, ZO_CALL_GRAD, "1", "1");
            HD_ENTER(rt, &cn, n, 0 /* torch.no_grad() */, "1");
            if (pol == ZO_GRADS_PER_CALL) {
                HD_EQ(cn.in[0], 0);
                HD_EQ(HD_MINFO(rt, n).open_windows, 0);
                HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_WINDOW_OPEN, n, HD_ANY), 0);
            } else if (pol == ZO_GRADS_RESET_ON_FORWARD) {
                HD_EQ(HD_MINFO(rt, n).grads_remaining, 1);
            } else {
                HD_EQ(HD_MINFO(rt, n).grads_remaining, step); /* stale growth */
            }
            HD_EXIT(rt, &cn, "0");
            if (pol == ZO_GRADS_PER_CALL) HD_EQ(cn.out[0], 0);
            HD_RELEASED(rt, pn);
            HD_EXIT(rt, &cr, "1");
            HD_FWD_END(rt, g);
            HD_BWD_BEGIN(rt, g);
            HD_OUT_GRAD(rt, cr.out[0]);
            HD_OUT_GRAD(rt, ca.out[0]);
            HD_ACCESS(rt, a, pa);
            HD_IN_GRAD(rt, ca.in[0]);
            HD_GRAD_READY(rt, pa);
            HD_IN_GRAD(rt, cr.in[0]);
            HD_BWD_END(rt, g);
            HD_ALL_RELEASED(rt);
            if (pol == ZO_GRADS_PER_CALL) {
                HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_LEFTOVER, n, HD_ANY), 0);
                HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
            } else if (pol == ZO_GRADS_RESET_ON_FORWARD) {
                HD_EQ(HD_MINFO(rt, n).grads_remaining, 1);
            } else {
                HD_EQ(HD_MINFO(rt, n).grads_remaining, step);
            }
            HD_RELEASE_ALL(rt);
        }
        if (pol == ZO_GRADS_PER_CALL) assert_true(g_ev.min_counter >= 0);
        expect_no_uninit(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

typedef struct abort_model {
    zo_runtime *rt;
    zo_module_id r, a, c;
    zo_param_id pr, pa, pc;
} abort_model;

static abort_model abort_model_make(zo_grads_policy pol) {
    abort_model m;
    m.rt = HD_CREATE(hd_policy_config(pol), &g_ev);
    m.r = HD_MODULE(m.rt, ZO_NO_MODULE, "r");
    m.a = HD_MODULE(m.rt, m.r, "a");
    m.c = HD_MODULE(m.rt, m.a, "c");
    m.pr = HD_PARAM(m.rt, m.r, "w", 10);
    m.pa = HD_PARAM(m.rt, m.a, "w", 20);
    m.pc = HD_PARAM(m.rt, m.c, "w", 30);
    return m;
}

/* An exception in c unwinds c and a; r catches it and continues. */
static void test_forward_abort_per_call(void **state) {
    (void)state;
    abort_model m = abort_model_make(ZO_GRADS_PER_CALL);
    zo_runtime *rt = m.rt;
    hd_call cr, ca, cc, ca2;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, m.r, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &ca, m.a, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &cc, m.c, ZO_CALL_GRAD, "1");
    HD_EQ(HD_STATS(rt).forward_stack_depth, 3);
    HD_OK(rt, zo_forward_abort(rt, m.r));
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_FORWARD_ABORT, HD_ANY, HD_ANY), 1);
    HD_EQ(HD_STATS(rt).forward_stack_depth, 1);
    HD_RELEASED(rt, m.pa);
    HD_RELEASED(rt, m.pc);
    HD_AVAILABLE(rt, m.pr); /* r's call is still running */
    HD_EQ(HD_MINFO(rt, m.a).open_calls, 0);
    HD_EQ(HD_MINFO(rt, m.c).open_calls, 0);
    HD_EQ(HD_MINFO(rt, m.a).open_windows, 0);
    HD_EQ(HD_MINFO(rt, m.c).open_windows, 0);
    HD_EQ(HD_MINFO(rt, m.r).open_calls, 1);
    HD_EQ(HD_MINFO(rt, m.r).open_windows, 1);
    HD_CONSISTENT(rt);
    /* r continues with a fallback call of a */
    HD_CALL(rt, &ca2, m.a, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    HD_OUT_GRAD(rt, ca2.out[0]);
    /* the aborted calls' handles are stale */
    HD_ERR(rt, zo_input_grad(rt, ca.in[0]), ZO_ERR_BAD_HANDLE);
    HD_ERR(rt, zo_input_grad(rt, cc.in[0]), ZO_ERR_BAD_HANDLE);
    HD_IN_GRAD(rt, ca2.in[0]);
    HD_IN_GRAD(rt, cr.in[0]);
    HD_BWD_END(rt, g);
    HD_ALL_RELEASED(rt);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
    assert_true(g_ev.min_counter >= 0);

    /* caught outside every module: the forward pass ends, graph discarded */
    g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, m.r, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &ca, m.a, ZO_CALL_GRAD, "1");
    HD_OK(rt, zo_forward_abort(rt, ZO_NO_MODULE));
    HD_EQ(HD_STATS(rt).forward_stack_depth, 0);
    HD_EQ(HD_STATS(rt).open_windows, 0);
    HD_ALL_RELEASED(rt);
    HD_ERR(rt, zo_backward_begin(rt, g, 0), ZO_ERR_BAD_HANDLE);
    HD_ERR(rt, zo_forward_end(rt, g), ZO_ERR_BAD_HANDLE);
    /* and the next step works */
    g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, m.r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &ca, m.a, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    HD_OUT_GRAD(rt, ca.out[0]);
    HD_IN_GRAD(rt, ca.in[0]);
    HD_IN_GRAD(rt, cr.in[0]);
    HD_BWD_END(rt, g);
    HD_ALL_RELEASED(rt);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* Legacy: DeepSpeed's hooks B and C never run for the unwound calls.
 * zo_forward_abort: "the unwound calls leave the stack (so the runtime
 * stays usable) but nothing is released: ... their parameters stay
 * gathered and their modules stay in the active sets until
 * zo_release_all()". */
static void test_forward_abort_legacy(void **state) {
    (void)state;
    for (int pol = 1; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        abort_model m = abort_model_make((zo_grads_policy)pol);
        zo_runtime *rt = m.rt;
        hd_call cr, ca, cc;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, m.r, ZO_CALL_GRAD, "1");
        HD_ENTER(rt, &ca, m.a, ZO_CALL_GRAD, "1");
        HD_ENTER(rt, &cc, m.c, ZO_CALL_GRAD, "1");
        HD_OK(rt, zo_forward_abort(rt, m.r));
        HD_EQ(hd_ev_count(&g_ev, ZO_EV_FORWARD_ABORT, HD_ANY, HD_ANY), 1);
        HD_AVAILABLE(rt, m.pa);
        HD_AVAILABLE(rt, m.pc);
        HD_AVAILABLE(rt, m.pr);
        HD_EQ(zo_param_is_active_for(rt, m.pa, m.a), 1);
        HD_EQ(zo_param_is_active_for(rt, m.pc, m.c), 1);
        HD_EQ(HD_STATS(rt).forward_stack_depth, 1);
        HD_EQ(HD_MINFO(rt, m.c).open_calls, 0);
        HD_EQ(HD_MINFO(rt, m.a).open_calls, 0);
        HD_CONSISTENT(rt);
        /* r continues and ends its forward; a and c stay gathered */
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_RELEASED(rt, m.pr);
        HD_AVAILABLE(rt, m.pa);
        HD_AVAILABLE(rt, m.pc);
        /* the backward of r alone: still gathered, only the sweep frees */
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        HD_AVAILABLE(rt, m.pa);
        HD_AVAILABLE(rt, m.pc);
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_EQ(zo_param_is_active_for(rt, m.pa, m.a), 0);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* retain_graph=True: the same graph backpropagated twice. */
static void test_retained_graph_per_call(void **state) {
    (void)state;
    zo_runtime *rt = HD_CREATE(hd_policy_config(ZO_GRADS_PER_CALL), &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m = HD_MODULE(rt, r, "m");
    zo_param_id pm = HD_PARAM(rt, m, "w", 100);
    hd_call cr, cm;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    for (int pass = 0; pass < 3; pass++) { /* retain_graph=True twice, then a last backward */
        HD_OK(rt, zo_backward_begin(rt, g, pass < 2 ? 1 : 0));
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_OUT_GRAD(rt, cm.out[0]);
        HD_AVAILABLE(rt, pm);
        HD_ACCESS(rt, m, pm);
        HD_IN_GRAD(rt, cm.in[0]);
        HD_RELEASED(rt, pm);
        HD_GRAD_READY(rt, pm);
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        HD_ALL_RELEASED(rt);
        if (pass < 2) { /* windows re-armed for the next backward */
            HD_EQ(HD_MINFO(rt, m).open_windows, 1);
            HD_EQ(HD_MINFO(rt, m).grads_remaining, 1);
            HD_EQ(HD_MINFO(rt, r).open_windows, 1);
        } else {
            HD_EQ(HD_MINFO(rt, m).open_windows, 0);
            HD_EQ(HD_STATS(rt).open_windows, 0);
        }
    }
    HD_ERR(rt, zo_backward_begin(rt, g, 0), ZO_ERR_BAD_HANDLE);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
    assert_true(g_ev.min_counter >= 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* Legacy under retain_graph, every DeepSpeed profile: the release at 0 is
 * not skipped in a retained backward (PostBackwardFunctionModule.backward
 * has no special case for it in DeepSpeed 0.15.4 or 0.19.8): the first
 * backward releases the layer at its count's 0; the second finds the
 * reference counts at 0 (no fetch) and takes the counter to -1, the
 * parameter stays released. */
static void test_retained_graph_reset_on_forward(void **state) {
    (void)state;
    for (int prof = 0; prof < ZO_DS_PROFILE_COUNT; prof++) {
        zo_config cfg = hd_policy_config(ZO_GRADS_RESET_ON_FORWARD);
        cfg.ds_profile = (zo_ds_profile)prof;
        zo_runtime *rt = HD_CREATE(cfg, &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id m = HD_MODULE(rt, r, "m");
        zo_param_id pm = HD_PARAM(rt, m, "w", 100);
        hd_call cr, cm;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "1");
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_BWD_BEGIN_RETAIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_OUT_GRAD(rt, cm.out[0]);
        HD_AVAILABLE(rt, pm);
        HD_IN_GRAD(rt, cm.in[0]);
        HD_EQ(HD_MINFO(rt, m).grads_remaining, 0);
        HD_RELEASED(rt, pm); /* released at 0 although the graph is retained */
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        HD_RELEASED(rt, pm);
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_OUT_GRAD(rt, cm.out[0]); /* ref count already 0: no fetch, no decrement */
        HD_EQ(HD_MINFO(rt, m).pre_backward_ref_cnt, 0);
        HD_RELEASED(rt, pm);
        HD_IN_GRAD(rt, cm.in[0]);
        HD_EQ(HD_MINFO(rt, m).grads_remaining, -1);
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        HD_RELEASED(rt, pm);
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* Interleaved micro-batches: forward g1, forward g2, backward g1,
 * backward g2.  g2's windows stay open across g1's end-of-backward. */
static void test_interleaved_microbatches_per_call(void **state) {
    (void)state;
    zo_runtime *rt = HD_CREATE(hd_policy_config(ZO_GRADS_PER_CALL), &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m = HD_MODULE(rt, r, "m");
    zo_param_id pm = HD_PARAM(rt, m, "w", 100);
    hd_call cr1, cm1, cr2, cm2;
    zo_graph g1 = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr1, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm1, m, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr1, "1");
    HD_FWD_END(rt, g1);
    zo_graph g2 = HD_FWD_BEGIN(rt);
    assert_true(g2 != g1);
    HD_ENTER(rt, &cr2, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm2, m, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr2, "1");
    HD_FWD_END(rt, g2);
    HD_EQ(HD_MINFO(rt, m).open_windows, 2);

    HD_BWD_BEGIN(rt, g1);
    HD_OUT_GRAD(rt, cr1.out[0]);
    HD_OUT_GRAD(rt, cm1.out[0]);
    HD_IN_GRAD(rt, cm1.in[0]);
    HD_GRAD_READY(rt, pm);
    HD_IN_GRAD(rt, cr1.in[0]);
    HD_BWD_END(rt, g1);
    HD_ALL_RELEASED(rt);
    HD_EQ(HD_MINFO(rt, m).open_windows, 1); /* g2's */
    HD_EQ(HD_MINFO(rt, m).grads_remaining, 1);
    HD_EQ(HD_MINFO(rt, r).open_windows, 1);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);

    HD_BWD_BEGIN(rt, g2);
    HD_OUT_GRAD(rt, cr2.out[0]);
    HD_OUT_GRAD(rt, cm2.out[0]);
    HD_ACCESS(rt, m, pm);
    HD_IN_GRAD(rt, cm2.in[0]);
    HD_GRAD_READY(rt, pm);
    HD_IN_GRAD(rt, cr2.in[0]);
    HD_BWD_END(rt, g2);
    HD_ALL_RELEASED(rt);
    HD_EQ(HD_STATS(rt).open_windows, 0);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
    assert_true(g_ev.min_counter >= 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* A computation in backward reads a param whose pre-backward did not
 * gather it: per-call gathers (an unplanned fetch), legacy refuses. */
static void test_access_not_available_in_backward(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        zo_runtime *rt = HD_CREATE(hd_policy_config((zo_grads_policy)pol), &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id m = HD_MODULE(rt, r, "m");
        zo_param_id pr = HD_PARAM(rt, r, "w", 10);
        zo_param_id pm = HD_PARAM(rt, m, "w", 100);
        hd_call cr, cm;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        /* during forward with a call open every policy gathers on access
         * (DeepSpeed's ZeROOrderedDict) */
        HD_ACCESS(rt, r, pm);
        HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "1");
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_RELEASED(rt, pm);
        uint64_t unplanned = HD_STATS(rt).unplanned_fetches;
        if (pol == ZO_GRADS_PER_CALL) {
            HD_ACCESS(rt, m, pm);
            HD_EQ(HD_STATS(rt).unplanned_fetches, unplanned + 1);
            assert_true(hd_ev_count(&g_ev, ZO_EV_UNPLANNED_FETCH, HD_ANY, pm) >= 1);
        } else {
            const void *data = (const void *)&data;
            size_t bytes = 1;
            HD_ERR(rt, zo_param_access(rt, m, pm, &data, &bytes), ZO_ERR_NOT_AVAILABLE);
            assert_null(data);
            HD_RELEASED(rt, pm);
        }
        HD_OUT_GRAD(rt, cm.out[0]);
        HD_ACCESS(rt, m, pm);
        HD_IN_GRAD(rt, cm.in[0]);
        HD_GRAD_READY(rt, pm);
        HD_GRAD_READY(rt, pr);
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* Per-call release when every trainable param of the module produced its
 * gradient (before the window closes); frozen params do not count. */
static void test_param_grad_ready_release_per_call(void **state) {
    (void)state;
    zo_runtime *rt = HD_CREATE(hd_policy_config(ZO_GRADS_PER_CALL), &g_ev);
    zo_module_id m = HD_MODULE(rt, ZO_NO_MODULE, "m");
    zo_param_id w1 = HD_PARAM(rt, m, "w1", 100);
    zo_param_id w2 = HD_PARAM(rt, m, "w2", 100);
    zo_param_id fz = HD_FROZEN_PARAM(rt, m, "frozen", 100);
    hd_call cm;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "11", "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cm.out[0]);
    HD_AVAILABLE(rt, w1);
    HD_AVAILABLE(rt, fz);
    HD_GRAD_READY(rt, w1);
    HD_AVAILABLE(rt, w2);
    HD_GRAD_READY(rt, w2);
    HD_RELEASED(rt, w1);
    HD_RELEASED(rt, w2);
    HD_RELEASED(rt, fz);
    HD_IN_GRAD(rt, cm.in[0]);
    HD_EQ(HD_MINFO(rt, m).open_windows, 1); /* two inputs */
    HD_IN_GRAD(rt, cm.in[1]);
    HD_EQ(HD_MINFO(rt, m).open_windows, 0);
    HD_BWD_END(rt, g);
    HD_ALL_RELEASED(rt);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* Hook C on a module with two outputs, one not requiring grad.  Legacy:
 * applied_pre_backward_ref_cnt += 2 (every output), the first arriving
 * gradient fetches and decrements.  Per-call: a handle only for the output
 * requiring grad; every arrival fetches (idempotent: no second gather while
 * AVAILABLE). */
static void test_outputs_ref_count_and_idempotent_fetch(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        zo_runtime *rt = HD_CREATE(hd_policy_config((zo_grads_policy)pol), &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id m = HD_MODULE(rt, r, "m");
        zo_param_id pm = HD_PARAM(rt, m, "w", 100);
        hd_call cr, cm, cm2;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "10");
        HD_CALL(rt, &cm2, m, ZO_CALL_GRAD, "1", "11"); /* two outputs requiring grad */
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        if (pol == ZO_GRADS_PER_CALL) {
            assert_true(cm.out[0] != 0);
            HD_EQ(cm.out[1], 0);
        } else {
            assert_true(cm.out[0] != 0 && cm.out[1] != 0);
            HD_EQ(HD_MINFO(rt, m).pre_backward_ref_cnt, 4);
        }
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        uint64_t g0 = HD_PINFO(rt, pm).gathers;
        HD_OUT_GRAD(rt, cm2.out[1]);
        HD_AVAILABLE(rt, pm);
        HD_EQ(HD_PINFO(rt, pm).gathers, g0 + 1);
        HD_OUT_GRAD(rt, cm2.out[0]);
        HD_EQ(HD_PINFO(rt, pm).gathers, g0 + 1); /* already AVAILABLE */
        if (pol != ZO_GRADS_PER_CALL) HD_EQ(HD_MINFO(rt, m).pre_backward_ref_cnt, 2);
        HD_IN_GRAD(rt, cm2.in[0]);
        HD_OUT_GRAD(rt, cm.out[0]);
        HD_AVAILABLE(rt, pm);
        HD_IN_GRAD(rt, cm.in[0]);
        HD_GRAD_READY(rt, pm);
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        if (pol == ZO_GRADS_PER_CALL) {
            HD_ALL_RELEASED(rt);
            assert_true(g_ev.min_counter >= 0);
        }
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* An embedding layer: its input (token ids) does not require grad, its
 * output does (trainable weight).  Its PreBackward node fires, no
 * PostBackward node exists.  Per-call: no window; released when its
 * weight's gradient is ready, or else by the end-of-backward callback.
 * Legacy: the pre-backward fetch is never matched by a decrement to 0, the
 * weight stays gathered until the sweep (DeepSpeed behaviour). */
static void test_embedding_without_input_grad(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        for (int with_grad_ready = 0; with_grad_ready < 2; with_grad_ready++) {
            zo_runtime *rt = HD_CREATE(hd_policy_config((zo_grads_policy)pol), &g_ev);
            zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "model");
            zo_module_id emb = HD_MODULE(rt, r, "embed");
            zo_module_id lin = HD_MODULE(rt, r, "linear");
            zo_param_id we = HD_PARAM(rt, emb, "weight", 1000);
            zo_param_id wl = HD_PARAM(rt, lin, "weight", 100);
            hd_call cr, ce, cl;
            zo_graph g = HD_FWD_BEGIN(rt);
            HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "0");
            HD_CALL(rt, &ce, emb, ZO_CALL_GRAD, "0", "1");
            HD_CALL(rt, &cl, lin, ZO_CALL_GRAD, "1", "1");
            HD_EXIT(rt, &cr, "1");
            HD_FWD_END(rt, g);
            if (pol == ZO_GRADS_PER_CALL) {
                HD_EQ(ce.in[0], 0);
                HD_EQ(HD_MINFO(rt, emb).open_windows, 0);
            }
            HD_BWD_BEGIN(rt, g);
            HD_OUT_GRAD(rt, cr.out[0]);
            HD_OUT_GRAD(rt, cl.out[0]);
            HD_IN_GRAD(rt, cl.in[0]);
            HD_GRAD_READY(rt, wl);
            HD_OUT_GRAD(rt, ce.out[0]);
            HD_ACCESS(rt, emb, we);
            if (with_grad_ready) {
                HD_GRAD_READY(rt, we);
                if (pol == ZO_GRADS_PER_CALL) HD_RELEASED(rt, we); /* every trainable param of embed ready */
            } else {
                HD_AVAILABLE(rt, we); /* nothing released it yet */
            }
            HD_BWD_END(rt, g);
            if (pol == ZO_GRADS_PER_CALL) {
                HD_ALL_RELEASED(rt);
                HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0); /* no window */
            } else {
                HD_AVAILABLE(rt, we);
                HD_RELEASED(rt, wl);
            }
            HD_RELEASE_ALL(rt);
            HD_ALL_RELEASED(rt);
            HD_OK(rt, zo_runtime_destroy(rt));
        }
    }
}

/* The loss reaches a module's computation through a cached intermediate,
 * bypassing its PreBackward node (and it has no input requiring grad):
 * per-call gathers on access (an unplanned fetch) and the end-of-backward
 * callback releases what no hook holds. */
static void test_bypassed_pre_backward_per_call(void **state) {
    (void)state;
    zo_runtime *rt = HD_CREATE(hd_policy_config(ZO_GRADS_PER_CALL), &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m = HD_MODULE(rt, r, "m");
    zo_param_id pm = HD_PARAM(rt, m, "w", 500);
    hd_call cr, cm;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "0", "1");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    uint64_t unplanned = HD_STATS(rt).unplanned_fetches;
    HD_ACCESS(rt, m, pm);
    HD_EQ(HD_STATS(rt).unplanned_fetches, unplanned + 1);
    HD_IN_GRAD(rt, cr.in[0]);
    HD_BWD_END(rt, g);
    HD_ALL_RELEASED(rt);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* Reentrant activation checkpointing: the first forward of the region
 * runs under no_grad; its gradient triggers a recompute with grad (a
 * nested forward pass inside backward) and an inner backward. */
static void reentrant_checkpoint(zo_grads_policy pol, int64_t *count_after, zo_param_status *st) {
    zo_runtime *rt = HD_CREATE(hd_policy_config(pol), &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m = HD_MODULE(rt, r, "ckpt_block");
    zo_param_id pm = HD_PARAM(rt, m, "w", 100);
    hd_call cr, cm, cm2;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm, m, 0 /* no_grad inside CheckpointFunction.forward */, "1", "0");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    HD_RELEASED(rt, pm);

    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    /* CheckpointFunction.backward: recompute with grad enabled */
    zo_graph g2 = HD_FWD_BEGIN_FLAGS(rt, 0);
    HD_ENTER(rt, &cm2, m, ZO_CALL_GRAD, "1");
    HD_EXIT(rt, &cm2, "1");
    if (pol == ZO_GRADS_PER_CALL) HD_AVAILABLE(rt, pm); /* no release at post-forward during a recompute */
    HD_FWD_END(rt, g2);
    HD_BWD_BEGIN(rt, g2);
    HD_OUT_GRAD(rt, cm2.out[0]);
    HD_ACCESS(rt, m, pm);
    HD_GRAD_READY(rt, pm);
    HD_IN_GRAD(rt, cm2.in[0]);
    HD_BWD_END(rt, g2);
    HD_IN_GRAD(rt, cr.in[0]);
    HD_BWD_END(rt, g);
    *count_after = HD_MINFO(rt, m).grads_remaining;
    *st = HD_PINFO(rt, pm).status;
    if (pol == ZO_GRADS_PER_CALL) {
        HD_ALL_RELEASED(rt);
        assert_true(g_ev.min_counter >= 0);
        HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
    }
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_reentrant_checkpoint(void **state) {
    (void)state;
    int64_t c;
    zo_param_status st;
    reentrant_checkpoint(ZO_GRADS_PER_CALL, &c, &st);
    HD_EQ(c, 0);
    HD_EQ(st, ZO_PARAM_NOT_AVAILABLE);
    /* init-at-register: the no_grad pass counted x (1), the recompute
     * counted it again (2), one gradient came back: stuck at 1, the params
     * fetched by the recompute never released by a hook */
    reentrant_checkpoint(ZO_GRADS_INIT_AT_REGISTER, &c, &st);
    HD_EQ(c, 1);
    HD_EQ(st, ZO_PARAM_AVAILABLE);
    reentrant_checkpoint(ZO_GRADS_LAZY_INIT, &c, &st);
    HD_EQ(c, 1);
    HD_EQ(st, ZO_PARAM_AVAILABLE);
    /* reset-on-forward: the recompute reset it, back to 0: released */
    reentrant_checkpoint(ZO_GRADS_RESET_ON_FORWARD, &c, &st);
    HD_EQ(c, 0);
    HD_EQ(st, ZO_PARAM_NOT_AVAILABLE);
}

/* Non-reentrant activation checkpointing: the region's forward ran with
 * grad but dropped its saved tensors; when backward first needs one (after
 * the region's pre-backward node fired) the forward is recomputed in the
 * middle of the running backward, hooks A, D, B, C firing again, and the
 * recomputed nodes are never backpropagated. */
static void non_reentrant_checkpoint(zo_grads_policy pol, int64_t *count_after) {
    zo_runtime *rt = HD_CREATE(hd_policy_config(pol), &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m = HD_MODULE(rt, r, "ckpt_block");
    zo_param_id pm = HD_PARAM(rt, m, "w", 100);
    hd_call cr, cm, rc;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    HD_OUT_GRAD(rt, cm.out[0]);
    /* recompute inside backward (no forward pass of its own) */
    HD_ENTER(rt, &rc, m, ZO_CALL_GRAD, "1");
    HD_EXIT(rt, &rc, "1");
    if (pol == ZO_GRADS_PER_CALL) {
        HD_AVAILABLE(rt, pm); /* no release at post-forward during a recompute */
        uint64_t unplanned = HD_STATS(rt).unplanned_fetches;
        HD_ACCESS(rt, m, pm);
        HD_EQ(HD_STATS(rt).unplanned_fetches, unplanned);
    }
    HD_IN_GRAD(rt, cm.in[0]);
    if (pol == ZO_GRADS_PER_CALL) HD_GRAD_READY(rt, pm);
    HD_IN_GRAD(rt, cr.in[0]);
    HD_BWD_END(rt, g);
    *count_after = HD_MINFO(rt, m).grads_remaining;
    if (pol == ZO_GRADS_PER_CALL) {
        HD_ALL_RELEASED(rt);
        HD_EQ(HD_STATS(rt).open_windows, 0);
        assert_true(g_ev.min_counter >= 0);
    }
    HD_CONSISTENT(rt);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_non_reentrant_checkpoint(void **state) {
    (void)state;
    int64_t c;
    non_reentrant_checkpoint(ZO_GRADS_PER_CALL, &c);
    HD_EQ(c, 0);
    /* the recompute's hook D counted x again; one gradient came back */
    non_reentrant_checkpoint(ZO_GRADS_INIT_AT_REGISTER, &c);
    HD_EQ(c, 1);
    non_reentrant_checkpoint(ZO_GRADS_LAZY_INIT, &c);
    HD_EQ(c, 1);
    non_reentrant_checkpoint(ZO_GRADS_RESET_ON_FORWARD, &c);
    HD_EQ(c, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_a_reset_on_forward),
        cmocka_unit_test(test_scenario_a_per_call),
        cmocka_unit_test(test_scenario_a_per_call_default_coordinator),
        cmocka_unit_test(test_scenario_a_never_reset_policies),
        cmocka_unit_test(test_scenario_b_never_reset_policies),
        cmocka_unit_test(test_scenario_b_reset_on_forward),
        cmocka_unit_test(test_scenario_b_per_call),
        cmocka_unit_test(test_scenario_c_all_policies),
        cmocka_unit_test(test_eval_forward_releases_all),
        cmocka_unit_test(test_no_grad_call_inside_training),
        cmocka_unit_test(test_forward_abort_per_call),
        cmocka_unit_test(test_forward_abort_legacy),
        cmocka_unit_test(test_retained_graph_per_call),
        cmocka_unit_test(test_retained_graph_reset_on_forward),
        cmocka_unit_test(test_interleaved_microbatches_per_call),
        cmocka_unit_test(test_access_not_available_in_backward),
        cmocka_unit_test(test_param_grad_ready_release_per_call),
        cmocka_unit_test(test_outputs_ref_count_and_idempotent_fetch),
        cmocka_unit_test(test_embedding_without_input_grad),
        cmocka_unit_test(test_bypassed_pre_backward_per_call),
        cmocka_unit_test(test_reentrant_checkpoint),
        cmocka_unit_test(test_non_reentrant_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
