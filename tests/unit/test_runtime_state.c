/*
 * test_runtime_state.c - the parameter state machine and registration
 * rules: ds_status transitions (one explicit table), INFLIGHT with a
 * deferred host backend, release only when AVAILABLE with an empty
 * ds_active_sub_modules, ds_persist (DeepSpeed's
 * mark_persistent_parameters), live/peak numel, gathered contents,
 * uneven partitions (W = 1..64), z3 leaf modules, external/tied params.
 */
#include "hookdrv.h"

static hd_events g_ev;

static void test_transition_table(void **state) {
    (void)state;
    const zo_param_status NA = ZO_PARAM_NOT_AVAILABLE, IF = ZO_PARAM_INFLIGHT, AV = ZO_PARAM_AVAILABLE;
    /* all 9 pairs */
    HD_EQ(zo_transition_legal(NA, NA), 0);
    HD_EQ(zo_transition_legal(NA, IF), 1);
    HD_EQ(zo_transition_legal(NA, AV), 0);
    HD_EQ(zo_transition_legal(IF, NA), 1); /* a failed all-gather */
    HD_EQ(zo_transition_legal(IF, IF), 0);
    HD_EQ(zo_transition_legal(IF, AV), 1);
    HD_EQ(zo_transition_legal(AV, NA), 1);
    HD_EQ(zo_transition_legal(AV, IF), 0);
    HD_EQ(zo_transition_legal(AV, AV), 0);
    /* out of range */
    HD_EQ(zo_transition_legal((zo_param_status)3, NA), 0);
    HD_EQ(zo_transition_legal(AV, (zo_param_status)-1), 0);
    assert_string_not_equal(zo_param_status_name(NA), zo_param_status_name(IF));
    assert_string_not_equal(zo_param_status_name(IF), zo_param_status_name(AV));
}

/* One forward-only step over root r calling each child in order[]. */
static void fwd_only_step(zo_runtime *rt, zo_module_id r, const zo_module_id *order, size_t n) {
    hd_call cr, c;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "");
    for (size_t i = 0; i < n; i++) HD_CALL(rt, &c, order[i], ZO_CALL_GRAD, "", "");
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
}

/* INFLIGHT is observable with a deferred host backend: the prefetcher of a
 * complete trace issues the all-gather, the param stays INFLIGHT (in the
 * in-flight registry, once) until the fetch waits for it. */
static void test_inflight_deferred(void **state) {
    (void)state;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 4;
    hc.rank = 2;
    ht.deferred = 1;
    zo_backend *be = NULL;
    HD_OK(NULL, zo_backend_host_create(&hc, &be));

    zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
    cfg.world_size = 4;
    cfg.rank = 2;
    cfg.backend = be;
    cfg.prefetch_bucket_size = 1000; /* one 1000-element param ahead */
    zo_runtime *rt = HD_CREATE(cfg, &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id a = HD_MODULE(rt, r, "a");
    zo_module_id b = HD_MODULE(rt, r, "b");
    zo_module_id c = HD_MODULE(rt, r, "c");
    zo_param_id pa = HD_PARAM(rt, a, "w", 1000);
    zo_param_id pb = HD_PARAM(rt, b, "w", 1000);
    zo_param_id pc = HD_PARAM(rt, c, "w", 1001);
    zo_module_id order[3] = {a, b, c};

    fwd_only_step(rt, r, order, 3); /* step 1: RECORD */
    HD_ALL_RELEASED(rt);

    zo_graph g = HD_FWD_BEGIN(rt); /* step 2: COMPLETE */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    hd_call cr, ca, cb, cc;
    size_t mark = g_ev.n;
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "");
    /* r has no params; the prefetcher issued pa's all-gather */
    HD_PSTATUS(rt, pa, ZO_PARAM_INFLIGHT);
    zo_param_info pi = HD_PINFO(rt, pa);
    HD_EQ(pi.inflight, 1);
    HD_PSTATUS(rt, pb, ZO_PARAM_NOT_AVAILABLE);
    zo_stats st = HD_STATS(rt);
    HD_EQ(st.inflight_params, 1);
    HD_EQ(st.live_numel, 1000); /* INFLIGHT counts as gathered */
    assert_true(st.prefetches >= 1);
    assert_true(hd_ev_count_from(&g_ev, mark, ZO_EV_PREFETCH, HD_ANY, pa) == 1);
    HD_CONSISTENT(rt);

    uint64_t waits0 = HD_STATS(rt).blocking_waits;
    HD_ENTER(rt, &ca, a, ZO_CALL_GRAD, "");
    HD_AVAILABLE(rt, pa);
    HD_EQ(HD_PINFO(rt, pa).inflight, 0);
    HD_EQ(HD_STATS(rt).blocking_waits, waits0 + 1); /* deferred: had not completed */
    assert_true(hd_ev_count_from(&g_ev, mark, ZO_EV_WAIT, HD_ANY, pa) >= 1);
    HD_PSTATUS(rt, pb, ZO_PARAM_INFLIGHT);
    HD_ACCESS(rt, a, pa);
    HD_EXIT(rt, &ca, "");
    HD_RELEASED(rt, pa);

    /* the network made progress: pb's gather completed, the wait at b's
     * fetch no longer blocks */
    assert_true(zo_host_progress(be) >= 1);
    uint64_t waits1 = HD_STATS(rt).blocking_waits;
    HD_ENTER(rt, &cb, b, ZO_CALL_GRAD, "");
    HD_AVAILABLE(rt, pb);
    HD_EQ(HD_STATS(rt).blocking_waits, waits1);
    /* pc is in flight; an access waits for it and sees the right bytes */
    HD_PSTATUS(rt, pc, ZO_PARAM_INFLIGHT);
    HD_ACCESS(rt, b, pc);
    HD_EQ(HD_PINFO(rt, pc).inflight, 0);
    HD_EXIT(rt, &cb, "");
    HD_CALL(rt, &cc, c, ZO_CALL_GRAD, "", "");
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);

    /* every ds_status change the runtime reported was legal, and the path
     * of pa was NOT_AVAILABLE -> INFLIGHT -> AVAILABLE -> NOT_AVAILABLE */
    HD_EQ(g_ev.illegal_transitions, 0);
    size_t i1 = hd_ev_find(&g_ev, mark, ZO_EV_PARAM_STATE, HD_ANY, pa);
    assert_true(i1 != (size_t)-1);
    HD_EQ(g_ev.ev[i1].from, ZO_PARAM_NOT_AVAILABLE);
    HD_EQ(g_ev.ev[i1].to, ZO_PARAM_INFLIGHT);
    size_t i2 = hd_ev_find(&g_ev, i1 + 1, ZO_EV_PARAM_STATE, HD_ANY, pa);
    assert_true(i2 != (size_t)-1);
    HD_EQ(g_ev.ev[i2].from, ZO_PARAM_INFLIGHT);
    HD_EQ(g_ev.ev[i2].to, ZO_PARAM_AVAILABLE);
    size_t i3 = hd_ev_find(&g_ev, i2 + 1, ZO_EV_PARAM_STATE, HD_ANY, pa);
    assert_true(i3 != (size_t)-1);
    HD_EQ(g_ev.ev[i3].from, ZO_PARAM_AVAILABLE);
    HD_EQ(g_ev.ev[i3].to, ZO_PARAM_NOT_AVAILABLE);
    HD_EQ(g_ev.seq_errors, 0);

    HD_OK(rt, zo_runtime_destroy(rt));
    zo_backend_destroy(be);
}

/* release_all waits for in-flight gathers (never INFLIGHT -> NOT_AVAILABLE). */
static void test_release_all_waits_inflight(void **state) {
    (void)state;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    ht.deferred = 1;
    zo_backend *be = NULL;
    HD_OK(NULL, zo_backend_host_create(&hc, &be));
    zo_config cfg = hd_policy_config(ZO_GRADS_RESET_ON_FORWARD);
    cfg.backend = be;
    cfg.prefetch_bucket_size = 50000000ull;
    zo_runtime *rt = HD_CREATE(cfg, &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id a = HD_MODULE(rt, r, "a");
    zo_module_id b = HD_MODULE(rt, r, "b");
    zo_param_id pa = HD_PARAM(rt, a, "w", 10);
    zo_param_id pb = HD_PARAM(rt, b, "w", 20);
    zo_module_id order[2] = {a, b};
    fwd_only_step(rt, r, order, 2);
    zo_graph g = HD_FWD_BEGIN(rt);
    hd_call cr;
    HD_ENTER(rt, &cr, r, 0, "");
    (void)g; /* left open: release_all is the optimizer-step sweep */
    HD_PSTATUS(rt, pa, ZO_PARAM_INFLIGHT);
    HD_PSTATUS(rt, pb, ZO_PARAM_INFLIGHT);
    HD_EQ(HD_STATS(rt).inflight_params, 2);
    HD_EQ(HD_STATS(rt).live_numel, 30);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
    zo_backend_destroy(be);
}

/* A param is released only when AVAILABLE and no module is active on it;
 * live and peak numel follow every gather/release. */
static void test_active_set_and_live_numel(void **state) {
    (void)state;
    zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
    cfg.world_size = 3;
    zo_runtime *rt = HD_CREATE(cfg, &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id a = HD_MODULE(rt, r, "a");
    zo_module_id b = HD_MODULE(rt, r, "b");
    zo_param_id pr = HD_PARAM(rt, r, "w", 100);
    zo_param_id pa = HD_PARAM(rt, a, "w", 301);
    zo_param_id pb = HD_PARAM(rt, b, "w", 50);
    HD_OK(rt, zo_module_use_param(rt, b, pr)); /* b also uses r's param */

    hd_call cr, ca, cb;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_EQ(HD_STATS(rt).live_numel, 0);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "");
    HD_EQ(HD_STATS(rt).live_numel, 100);
    HD_EQ(HD_PINFO(rt, pr).n_active, 1);
    HD_EQ(zo_param_is_active_for(rt, pr, r), 1);
    HD_EQ(zo_param_is_active_for(rt, pr, b), 0);
    HD_ENTER(rt, &ca, a, ZO_CALL_GRAD, "");
    HD_EQ(HD_STATS(rt).live_numel, 401);
    HD_EQ(HD_STATS(rt).peak_live_numel, 401);
    HD_EQ(HD_MINFO(rt, r).open_calls, 1);
    HD_EQ(HD_STATS(rt).forward_stack_depth, 2);
    HD_EXIT(rt, &ca, "");
    HD_RELEASED(rt, pa);
    HD_EQ(HD_STATS(rt).live_numel, 100);
    HD_ENTER(rt, &cb, b, ZO_CALL_GRAD, "");
    HD_EQ(HD_PINFO(rt, pr).n_active, 2);
    HD_EQ(HD_PINFO(rt, pr).gathers, 1); /* already AVAILABLE: not gathered again */
    HD_EQ(HD_STATS(rt).live_numel, 150);
    HD_EXIT(rt, &cb, "");
    /* r still active on pr: not released by b's post-forward */
    HD_AVAILABLE(rt, pr);
    HD_EQ(HD_PINFO(rt, pr).n_active, 1);
    HD_RELEASED(rt, pb);
    HD_EXIT(rt, &cr, "");
    HD_RELEASED(rt, pr);
    HD_EQ(HD_PINFO(rt, pr).n_active, 0);
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    zo_stats st = HD_STATS(rt);
    HD_EQ(st.live_numel, 0);
    HD_EQ(st.peak_live_numel, 401);
    HD_EQ(st.gathers, 3);
    HD_EQ(st.releases, 3);
    HD_EQ(st.forward_stack_depth, 0);
    HD_ALL_RELEASED(rt);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* ds_persist params are gathered once and never released, by hooks, by
 * the end-of-backward callback or by release_all (per-call; the DeepSpeed-
 * shaped policies release them where DeepSpeed does: test_ds_profiles.c). */
static void test_persistent_never_released(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        if (pol != ZO_GRADS_PER_CALL) continue;
        zo_config cfg = hd_policy_config((zo_grads_policy)pol);
        cfg.param_persistence_threshold = 16;
        cfg.world_size = 2;
        zo_runtime *rt = HD_CREATE(cfg, &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id m = HD_MODULE(rt, r, "m");
        zo_param_id big = HD_PARAM(rt, m, "w", 1000);
        zo_param_id small = HD_PARAM(rt, m, "b", 16);
        HD_EQ(HD_PINFO(rt, small).persistent, 1);
        HD_EQ(HD_PINFO(rt, big).persistent, 0);
        for (int step = 0; step < 3; step++) {
            hd_call cr, cm;
            zo_graph g = HD_FWD_BEGIN(rt);
            HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
            HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "1");
            HD_AVAILABLE(rt, small);
            HD_EXIT(rt, &cr, "1");
            HD_FWD_END(rt, g);
            HD_BWD_BEGIN(rt, g);
            HD_OUT_GRAD(rt, cr.out[0]);
            HD_OUT_GRAD(rt, cm.out[0]);
            HD_ACCESS(rt, m, small);
            HD_ACCESS(rt, m, big);
            HD_IN_GRAD(rt, cm.in[0]);
            HD_AVAILABLE(rt, small);
            HD_GRAD_READY(rt, big);
            HD_GRAD_READY(rt, small);
            HD_IN_GRAD(rt, cr.in[0]);
            HD_BWD_END(rt, g);
            HD_AVAILABLE(rt, small);
            HD_RELEASE_ALL(rt);
            HD_AVAILABLE(rt, small);
            HD_ALL_RELEASED(rt);
            zo_stats st = HD_STATS(rt);
            HD_EQ(st.persistent_live_numel, 16);
            HD_EQ(st.live_numel, 16);
            /* eval forward */
            g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
            HD_CALL(rt, &cm, m, 0, "0", "0");
            HD_FWD_END(rt, g);
            HD_AVAILABLE(rt, small);
        }
        HD_EQ(HD_PINFO(rt, small).gathers, 1);
        HD_EQ(hd_ev_count(&g_ev, ZO_EV_RELEASE, HD_ANY, small), 0);
        assert_true(hd_ev_count(&g_ev, ZO_EV_RELEASE, HD_ANY, big) >= 3);
        HD_EQ(g_ev.illegal_transitions, 0);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* mark_persistent_parameters, in registration order:
 *   if numel + total > model_threshold: skip
 *   elif numel <= param_threshold: persist, total += numel            */
static void test_persistence_rule(void **state) {
    (void)state;
    zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
    cfg.param_persistence_threshold = 100;
    cfg.model_persistence_threshold = 250;
    zo_runtime *rt = HD_CREATE(cfg, NULL);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id a = HD_MODULE(rt, r, "a");
    zo_module_id b = HD_MODULE(rt, r, "b");
    struct {
        zo_module_id owner;
        uint64_t numel;
        unsigned flags;
        int persist;
    } cases[] = {
        {r, 100, 0, 1},               /* total 100 */
        {a, 101, 0, 0},               /* > param threshold */
        {a, 100, ZO_PARAM_FROZEN, 1}, /* frozen too; total 200 */
        {b, 60, 0, 0},                /* 60 + 200 > 250 */
        {b, 50, 0, 1},                /* 50 + 200 == 250: persist; total 250 */
        {r, 1, 0, 0},                 /* 251 > 250 */
        {a, 1000, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%zu", i);
        zo_param_id p = hd_param_(rt, cases[i].owner, name, cases[i].numel, 4, cases[i].flags, __FILE__, __LINE__);
        HD_EQ(p, i);
        zo_param_info pi = HD_PINFO(rt, p);
        if (pi.persistent != cases[i].persist)
            print_error("case %zu: numel %llu\n", i, (unsigned long long)cases[i].numel);
        HD_EQ(pi.persistent, cases[i].persist);
    }
    HD_OK(rt, zo_runtime_destroy(rt));

    /* defaults: param threshold 1e5, no model limit */
    zo_config d = ZO_CONFIG_INIT;
    rt = HD_CREATE(d, NULL);
    r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    HD_EQ(HD_PINFO(rt, HD_PARAM(rt, r, "a", 100000)).persistent, 1);
    HD_EQ(HD_PINFO(rt, HD_PARAM(rt, r, "b", 100001)).persistent, 0);
    HD_EQ(HD_PINFO(rt, HD_PARAM(rt, r, "c", 100000)).persistent, 1);
    HD_OK(rt, zo_runtime_destroy(rt));

    /* model threshold 0 / param threshold 0: nothing persists */
    d.model_persistence_threshold = 0;
    rt = HD_CREATE(d, NULL);
    r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    HD_EQ(HD_PINFO(rt, HD_PARAM(rt, r, "a", 1)).persistent, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
    d = (zo_config)ZO_CONFIG_INIT;
    d.param_persistence_threshold = 0;
    rt = HD_CREATE(d, NULL);
    r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    HD_EQ(HD_PINFO(rt, HD_PARAM(rt, r, "a", 1)).persistent, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* partition_numel == ceil(numel / W) for every W in 1..64, and the
 * all-gathered contents are the original tensor (padding dropped). */
static void test_uneven_partitions(void **state) {
    (void)state;
    for (int W = 1; W <= 64; W++) {
        zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
        cfg.world_size = W;
        cfg.rank = W > 2 ? W - 2 : W - 1;
        zo_runtime *rt = HD_CREATE(cfg, NULL);
        zo_module_id m = HD_MODULE(rt, ZO_NO_MODULE, "m");
        uint64_t numels[] = {1, (uint64_t)W + 1, 3ull * W - 1, 5ull * W + 3, 97, 100003};
        static const uint32_t esz[] = {1, 2, 3, 4, 8, 2};
        for (size_t i = 0; i < sizeof(numels) / sizeof(numels[0]); i++) {
            uint64_t n = numels[i];
            char name[16];
            snprintf(name, sizeof(name), "p%zu", i);
            zo_param_id p = hd_param_(rt, m, name, n, esz[i], 0, __FILE__, __LINE__);
            zo_param_info pi = HD_PINFO(rt, p);
            HD_EQ(pi.numel, n);
            HD_EQ(pi.partition_numel, (n + (uint64_t)W - 1) / (uint64_t)W);
            HD_EQ(pi.elem_size, esz[i]);
            if (n < 100000) /* keep ASan time low: contents of the small ones */
                HD_ACCESS(rt, m, p);
        }
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* Very wide worlds: W up to ZO_MAX_WORLD_SIZE, numel smaller and larger
 * than W (most ranks hold only padding). */
static void test_wide_world_partitions(void **state) {
    (void)state;
    static const int Ws[] = {1000, 4099, ZO_MAX_WORLD_SIZE};
    for (size_t k = 0; k < sizeof(Ws) / sizeof(Ws[0]); k++) {
        int W = Ws[k];
        zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
        cfg.world_size = W;
        cfg.rank = W / 3;
        zo_runtime *rt = HD_CREATE(cfg, NULL);
        zo_module_id m = HD_MODULE(rt, ZO_NO_MODULE, "m");
        uint64_t numels[] = {1, 3, (uint64_t)W - 1, (uint64_t)W + 1, 2ull * W + 7};
        for (size_t i = 0; i < sizeof(numels) / sizeof(numels[0]); i++) {
            char name[16];
            snprintf(name, sizeof(name), "p%zu", i);
            zo_param_id p = hd_param_(rt, m, name, numels[i], 2, 0, __FILE__, __LINE__);
            HD_EQ(HD_PINFO(rt, p).partition_numel, (numels[i] + (uint64_t)W - 1) / (uint64_t)W);
            HD_ACCESS(rt, m, p);
        }
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* z3 leaf module: fetches its whole subtree at once; its descendants get
 * no hooks (pre_forward on them is a protocol error). */
static void test_z3_leaf_module(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        zo_config cfg = hd_policy_config((zo_grads_policy)pol);
        zo_runtime *rt = HD_CREATE(cfg, &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id L = HD_LEAF_MODULE(rt, r, "moe");
        zo_module_id c1 = HD_MODULE(rt, L, "expert0");
        zo_module_id g1 = HD_MODULE(rt, c1, "fc");
        zo_module_id c2 = HD_MODULE(rt, L, "expert1");
        zo_module_id after = HD_MODULE(rt, r, "head");
        zo_param_id pL = HD_PARAM(rt, L, "gate", 10);
        zo_param_id p1 = HD_PARAM(rt, c1, "w", 20);
        zo_param_id pg = HD_PARAM(rt, g1, "w", 30);
        zo_param_id p2 = HD_PARAM(rt, c2, "w", 40);
        zo_param_id ph = HD_PARAM(rt, after, "w", 50);

        zo_module_info mi = HD_MINFO(rt, L);
        HD_EQ(mi.flags, ZO_MODULE_Z3_LEAF);
        HD_EQ(mi.in_leaf, 0);
        HD_EQ(mi.n_params, 4);
        HD_EQ(HD_MINFO(rt, c1).in_leaf, 1);
        HD_EQ(HD_MINFO(rt, g1).in_leaf, 1);
        HD_EQ(HD_MINFO(rt, c2).in_leaf, 1);
        HD_EQ(HD_MINFO(rt, after).in_leaf, 0);
        HD_EQ(HD_MINFO(rt, r).in_leaf, 0);
        zo_param_id buf[8];
        size_t n = 0;
        HD_OK(rt, zo_module_params(rt, L, buf, 8, &n));
        HD_EQ(n, 4);
        HD_EQ(buf[0], pL);
        HD_EQ(buf[1], p1);
        HD_EQ(buf[2], pg);
        HD_EQ(buf[3], p2);
        HD_OK(rt, zo_module_params(rt, L, buf, 2, &n)); /* cap < count */
        HD_EQ(n, 4);
        HD_EQ(buf[1], p1);

        hd_call cr, cl, ch;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        HD_ERR(rt, zo_pre_forward(rt, c1, ZO_CALL_GRAD), ZO_ERR_PROTOCOL);
        HD_ENTER(rt, &cl, L, ZO_CALL_GRAD, "1");
        HD_AVAILABLE(rt, pL);
        HD_AVAILABLE(rt, p1);
        HD_AVAILABLE(rt, pg);
        HD_AVAILABLE(rt, p2);
        HD_RELEASED(rt, ph);
        HD_EQ(zo_param_is_active_for(rt, pg, L), 1);
        HD_ERR(rt, zo_pre_forward(rt, c1, ZO_CALL_GRAD), ZO_ERR_PROTOCOL);
        HD_ERR(rt, zo_pre_forward(rt, g1, ZO_CALL_GRAD), ZO_ERR_PROTOCOL);
        HD_ERR(rt, zo_pre_forward(rt, c2, 0), ZO_ERR_PROTOCOL);
        HD_ACCESS(rt, L, pg);
        HD_EXIT(rt, &cl, "1");
        HD_RELEASED(rt, pL);
        HD_RELEASED(rt, p1);
        HD_RELEASED(rt, pg);
        HD_RELEASED(rt, p2);
        HD_CALL(rt, &ch, after, ZO_CALL_GRAD, "1", "1");
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_OUT_GRAD(rt, ch.out[0]);
        HD_IN_GRAD(rt, ch.in[0]);
        HD_OUT_GRAD(rt, cl.out[0]);
        /* pre-backward of the leaf fetches the subtree */
        HD_AVAILABLE(rt, pL);
        HD_AVAILABLE(rt, pg);
        HD_AVAILABLE(rt, p2);
        HD_IN_GRAD(rt, cl.in[0]);
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        /* every policy: the leaf's only input gradient released the subtree
         * (legacy counter 1 -> 0, per-call window closed) */
        HD_RELEASED(rt, pL);
        HD_RELEASED(rt, pg);
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_EQ(g_ev.illegal_transitions, 0);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* External / tied params: fetched with each user, released only when no
 * user is active. */
static void test_external_tied_params(void **state) {
    (void)state;
    zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
    zo_runtime *rt = HD_CREATE(cfg, &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "lm");
    zo_module_id emb = HD_MODULE(rt, r, "embed");
    zo_module_id blk = HD_MODULE(rt, r, "block");
    zo_module_id inner = HD_MODULE(rt, blk, "inner");
    zo_module_id head = HD_MODULE(rt, r, "head");
    zo_param_id we = HD_PARAM(rt, emb, "weight", 500);
    zo_param_id wb = HD_PARAM(rt, blk, "w", 200);
    zo_param_id wh = HD_PARAM(rt, head, "bias", 300);
    HD_OK(rt, zo_module_use_param(rt, head, we));  /* tied lm head */
    HD_OK(rt, zo_module_use_param(rt, inner, wb)); /* external param of a child */
    zo_param_id buf[4];
    size_t n;
    HD_OK(rt, zo_module_params(rt, head, buf, 4, &n));
    HD_EQ(n, 2); /* sorted by id: the external one (registered first) leads */
    HD_EQ(buf[0], we);
    HD_EQ(buf[1], wh);
    HD_EQ(HD_MINFO(rt, head).n_params, 2);
    HD_EQ(HD_MINFO(rt, inner).n_params, 1);

    hd_call cr, ce, cb, ci, ch;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "");
    HD_CALL(rt, &ce, emb, ZO_CALL_GRAD, "0", "1");
    HD_RELEASED(rt, we);
    HD_ENTER(rt, &cb, blk, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &ci, inner, ZO_CALL_GRAD, "1");
    HD_EQ(HD_PINFO(rt, wb).n_active, 2);
    HD_EQ(HD_PINFO(rt, wb).gathers, 1);
    HD_ACCESS(rt, inner, wb);
    HD_EXIT(rt, &ci, "1");
    HD_AVAILABLE(rt, wb); /* block still active */
    HD_EQ(HD_PINFO(rt, wb).n_active, 1);
    HD_EXIT(rt, &cb, "1");
    HD_RELEASED(rt, wb);
    HD_ENTER(rt, &ch, head, ZO_CALL_GRAD, "1");
    HD_AVAILABLE(rt, we); /* fetched with its second user */
    HD_EQ(HD_PINFO(rt, we).gathers, 2);
    HD_EQ(zo_param_is_active_for(rt, we, head), 1);
    HD_EQ(zo_param_is_active_for(rt, we, emb), 0);
    HD_ACCESS(rt, head, we);
    HD_EXIT(rt, &ch, "1");
    HD_RELEASED(rt, we);
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);

    /* backward: head's pre-backward gathers we; embed's too; released
     * only when neither is active */
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    HD_OUT_GRAD(rt, ch.out[0]);
    HD_AVAILABLE(rt, we);
    HD_IN_GRAD(rt, ch.in[0]);
    HD_OUT_GRAD(rt, cb.out[0]);
    HD_OUT_GRAD(rt, ci.out[0]);
    HD_IN_GRAD(rt, ci.in[0]);
    HD_IN_GRAD(rt, cb.in[0]);
    HD_OUT_GRAD(rt, ce.out[0]);
    HD_AVAILABLE(rt, we);
    HD_GRAD_READY(rt, we);
    HD_GRAD_READY(rt, wb);
    HD_BWD_END(rt, g);
    HD_ALL_RELEASED(rt);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* Destroying a runtime with gathered params, open calls and graphs frees
 * everything (LSan + the counting allocator), and a borrowed backend
 * survives with its shards removed (it can serve a new runtime). */
static void test_destroy_midway_and_borrowed_backend(void **state) {
    (void)state;
    hd_alloc a;
    memset(&a, 0, sizeof(a));
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 2;
    ht.deferred = 1;
    zo_backend *be = NULL;
    HD_OK(NULL, zo_backend_host_create(&hc, &be));
    for (int round = 0; round < 2; round++) {
        zo_config cfg = hd_policy_config(ZO_GRADS_PER_CALL);
        cfg.world_size = 2;
        cfg.backend = be;
        cfg.allocator = hd_allocator(&a);
        zo_runtime *rt = HD_CREATE(cfg, NULL);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id m = HD_MODULE(rt, r, "m");
        zo_param_id p = HD_PARAM(rt, m, "w", 33);
        HD_EQ(p, 0);
        hd_call cr, cm;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        HD_ENTER(rt, &cm, m, ZO_CALL_GRAD, "1");
        HD_ACCESS(rt, m, p);
        (void)g;
        HD_OK(rt, zo_runtime_destroy(rt));
        HD_EQ(a.live, 0);
    }
    zo_backend_destroy(be);
}

/* The event stream a tracer consumes: one event per hook call, carrying
 * module / param / graph, in causal order. */
static void test_event_fields(void **state) {
    (void)state;
    zo_runtime *rt = HD_CREATE(hd_policy_config(ZO_GRADS_PER_CALL), &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m = HD_MODULE(rt, r, "m");
    zo_param_id p = HD_PARAM(rt, m, "w", 10);
    hd_call cr, cm;
    size_t mark = g_ev.n;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
    HD_CALL(rt, &cm, m, ZO_CALL_GRAD, "1", "1");
    HD_EXIT(rt, &cr, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, cr.out[0]);
    HD_OUT_GRAD(rt, cm.out[0]);
    HD_IN_GRAD(rt, cm.in[0]);
    HD_GRAD_READY(rt, p);
    HD_IN_GRAD(rt, cr.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);

    static const zo_event_kind once[] = {ZO_EV_FORWARD_BEGIN, ZO_EV_FORWARD_END,      ZO_EV_BACKWARD_BEGIN,
                                         ZO_EV_BACKWARD_END,  ZO_EV_PARAM_GRAD_READY, ZO_EV_RELEASE_ALL};
    for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
        HD_EQ(hd_ev_count_from(&g_ev, mark, once[i], HD_ANY, HD_ANY), 1);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_PRE_FORWARD, HD_ANY, HD_ANY), 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_TRACK_INPUTS, HD_ANY, HD_ANY), 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_POST_FORWARD, HD_ANY, HD_ANY), 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_TRACK_OUTPUTS, HD_ANY, HD_ANY), 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_OUTPUT_GRAD, HD_ANY, HD_ANY), 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_INPUT_GRAD, HD_ANY, HD_ANY), 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_PRE_FORWARD, m, HD_ANY), 1);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_OUTPUT_GRAD, m, HD_ANY), 1);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_PARAM_GRAD_READY, HD_ANY, p), 1);

    const zo_event *e = hd_ev_last(&g_ev, ZO_EV_FORWARD_BEGIN, HD_ANY, HD_ANY);
    HD_EQ(e->graph, g);
    e = hd_ev_last(&g_ev, ZO_EV_PRE_FORWARD, m, HD_ANY);
    HD_EQ(e->graph, g);
    e = hd_ev_last(&g_ev, ZO_EV_BACKWARD_END, HD_ANY, HD_ANY);
    HD_EQ(e->graph, g);

    /* causal order for m's forward call: pre-forward, gather of p,
     * hook D, post-forward, release of p, hook C */
    size_t a = hd_ev_find(&g_ev, mark, ZO_EV_PRE_FORWARD, m, HD_ANY);
    size_t ga = hd_ev_find(&g_ev, a, ZO_EV_GATHER, HD_ANY, p);
    size_t d = hd_ev_find(&g_ev, a, ZO_EV_TRACK_INPUTS, m, HD_ANY);
    size_t b = hd_ev_find(&g_ev, d, ZO_EV_POST_FORWARD, m, HD_ANY);
    size_t rl = hd_ev_find(&g_ev, b, ZO_EV_RELEASE, HD_ANY, p);
    size_t c = hd_ev_find(&g_ev, b, ZO_EV_TRACK_OUTPUTS, m, HD_ANY);
    assert_true(a != (size_t)-1 && ga != (size_t)-1 && d != (size_t)-1);
    assert_true(b != (size_t)-1 && rl != (size_t)-1 && c != (size_t)-1);
    assert_true(a < ga && ga < d && d < b && b < rl);
    /* every event of this step carries the step number 1 */
    for (size_t i = mark; i < g_ev.n; i++) HD_EQ(g_ev.ev[i].step, 1);
    HD_EQ(g_ev.seq_errors, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transition_table),
        cmocka_unit_test(test_inflight_deferred),
        cmocka_unit_test(test_release_all_waits_inflight),
        cmocka_unit_test(test_active_set_and_live_numel),
        cmocka_unit_test(test_persistent_never_released),
        cmocka_unit_test(test_persistence_rule),
        cmocka_unit_test(test_uneven_partitions),
        cmocka_unit_test(test_wide_world_partitions),
        cmocka_unit_test(test_z3_leaf_module),
        cmocka_unit_test(test_external_tied_params),
        cmocka_unit_test(test_destroy_midway_and_borrowed_backend),
        cmocka_unit_test(test_event_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
