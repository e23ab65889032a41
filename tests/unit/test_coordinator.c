/*
 * test_coordinator.c - DeepSpeed's PartitionedParameterCoordinator
 * decisions: trace RECORD -> COMPLETE at the next root forward
 * (reset_step), prefetch from the parameter trace (prefetch_bucket_size,
 * 0 disables), max_live_parameters bounding it, max_reuse_distance keeping
 * a reused parameter gathered, invalidation on a different module order or
 * on re-registration, separate train/eval coordinators.
 */
#include "hookdrv.h"

static hd_events g_ev;

#define NCHILD 8

typedef struct chain {
    zo_runtime *rt;
    zo_module_id r;
    zo_module_id c[NCHILD];
    zo_param_id p[NCHILD];
    int n;
} chain;

/* root r (no params) with n children, each owning one 1000-element param */
static chain chain_make(zo_config cfg, int n) {
    chain ch;
    memset(&ch, 0, sizeof(ch));
    cfg.param_persistence_threshold = 0;
    ch.rt = HD_CREATE(cfg, &g_ev);
    ch.n = n;
    ch.r = HD_MODULE(ch.rt, ZO_NO_MODULE, "r");
    for (int i = 0; i < n; i++) {
        char name[8];
        snprintf(name, sizeof(name), "c%d", i);
        ch.c[i] = HD_MODULE(ch.rt, ch.r, name);
    }
    for (int i = 0; i < n; i++) ch.p[i] = HD_PARAM(ch.rt, ch.c[i], "w", 1000);
    return ch;
}

/* One forward-only training step (no input requires grad): root, then the
 * children in order[] (indices into ch->c). */
static void chain_fwd(chain *ch, const int *order, int n) {
    hd_call cr, c;
    zo_graph g = HD_FWD_BEGIN(ch->rt);
    HD_ENTER(ch->rt, &cr, ch->r, ZO_CALL_GRAD, "");
    for (int i = 0; i < n; i++) HD_CALL(ch->rt, &c, ch->c[order[i]], ZO_CALL_GRAD, "", "");
    HD_EXIT(ch->rt, &cr, "");
    HD_FWD_END(ch->rt, g);
    HD_OK(ch->rt, zo_graph_discard(ch->rt, g));
    HD_ALL_RELEASED(ch->rt);
}

static const int ORDER4[4] = {0, 1, 2, 3};

static void test_trace_record_then_complete(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    chain ch = chain_make(cfg, 4);
    zo_runtime *rt = ch.rt;
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_RECORD);

    zo_graph g = HD_FWD_BEGIN(rt); /* step 1: reset_step, nothing recorded yet */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_RECORD);
    HD_EQ(HD_STATS(rt).steps, 1);
    hd_call cr, c;
    HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
    for (int i = 0; i < 4; i++) {
        HD_RELEASED(rt, ch.p[i]); /* nothing to prefetch from */
        HD_CALL(rt, &c, ch.c[i], ZO_CALL_GRAD, "", "");
    }
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    zo_trace_info ti = HD_TRACE(rt);
    HD_EQ(ti.mode, ZO_TRACE_RECORD);
    HD_EQ(ti.n_modules, 5); /* r, c0..c3 */
    HD_EQ(HD_STATS(rt).prefetches, 0);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_TRACE_COMPLETE, HD_ANY, HD_ANY), 0);

    /* step 2: RECORD -> COMPLETE at the root's forward_begin */
    size_t mark = g_ev.n;
    g = HD_FWD_BEGIN(rt);
    ti = HD_TRACE(rt);
    HD_EQ(ti.mode, ZO_TRACE_COMPLETE);
    HD_EQ(ti.n_modules, 5);
    HD_EQ(ti.n_params, 4);
    HD_EQ(ti.queue_len, 4);
    HD_EQ(ti.step_id, 0);
    HD_EQ(HD_STATS(rt).steps, 2);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_TRACE_COMPLETE, HD_ANY, HD_ANY), 1);
    assert_true(hd_ev_count_from(&g_ev, mark, ZO_EV_RESET_STEP, HD_ANY, HD_ANY) >= 1);

    uint64_t gathers0 = HD_STATS(rt).gathers;
    HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
    /* default bucket (5e7 elements): the whole trace prefetched at r */
    zo_stats st = HD_STATS(rt);
    HD_EQ(st.prefetches, 4);
    HD_EQ(HD_TRACE(rt).queue_len, 0);
    HD_EQ(HD_TRACE(rt).step_id, 1);
    for (int i = 0; i < 4; i++) {
        assert_true(HD_PINFO(rt, ch.p[i]).status != ZO_PARAM_NOT_AVAILABLE);
        HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_PREFETCH, HD_ANY, ch.p[i]), 1);
    }
    for (int i = 0; i < 4; i++) {
        size_t pf = hd_ev_find(&g_ev, mark, ZO_EV_PREFETCH, HD_ANY, ch.p[i]);
        size_t before = g_ev.n;
        HD_CALL(rt, &c, ch.c[i], ZO_CALL_GRAD, "", "");
        size_t pre = hd_ev_find(&g_ev, before, ZO_EV_PRE_FORWARD, ch.c[i], HD_ANY);
        assert_true(pf != (size_t)-1 && pre != (size_t)-1 && pf < pre); /* gathered ahead */
    }
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    HD_ALL_RELEASED(rt);
    st = HD_STATS(rt);
    HD_EQ(st.gathers, gathers0 + 4); /* every gather of step 2 was a prefetch */
    HD_EQ(st.trace_invalidations, 0);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);

    /* the explicit reset_step keeps a complete trace complete */
    HD_OK(rt, zo_reset_step(rt, 0));
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_EQ(HD_TRACE(rt).queue_len, 4);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_prefetch_disabled_by_zero_bucket(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.prefetch_bucket_size = 0;
    chain ch = chain_make(cfg, 4);
    zo_runtime *rt = ch.rt;
    for (int step = 0; step < 3; step++) {
        hd_call cr, c;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
        for (int i = 0; i < 4; i++) {
            HD_RELEASED(rt, ch.p[i]);
            HD_CALL(rt, &c, ch.c[i], ZO_CALL_GRAD, "", "");
        }
        HD_EXIT(rt, &cr, "");
        HD_FWD_END(rt, g);
        HD_OK(rt, zo_graph_discard(rt, g));
    }
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_EQ(HD_STATS(rt).prefetches, 0);
    HD_EQ(hd_ev_count(&g_ev, ZO_EV_PREFETCH, HD_ANY, HD_ANY), 0);
    HD_EQ(HD_STATS(rt).gathers, 12);
    HD_EQ(HD_STATS(rt).bytes_gathered, 12 * 1000 * 4); /* W = 1: no padding */
    HD_EQ(HD_STATS(rt).releases, 12);
    /* events carry the step number (reset_step calls so far) */
    assert_true(g_ev.n > 0);
    HD_EQ(g_ev.ev[g_ev.n - 1].step, 3);
    HD_EQ(g_ev.seq_errors, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* prefetch_bucket_size = one param's numel: exactly the next one ahead. */
static void test_prefetch_bucket_one_ahead(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.prefetch_bucket_size = 1000;
    cfg.max_reuse_distance = 0;
    chain ch = chain_make(cfg, 4);
    zo_runtime *rt = ch.rt;
    chain_fwd(&ch, ORDER4, 4);
    hd_call cr, c;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
    assert_true(HD_PINFO(rt, ch.p[0]).status != ZO_PARAM_NOT_AVAILABLE);
    HD_RELEASED(rt, ch.p[1]);
    for (int i = 0; i < 4; i++) {
        HD_ENTER(rt, &c, ch.c[i], ZO_CALL_GRAD, "");
        HD_AVAILABLE(rt, ch.p[i]);
        if (i + 1 < 4) assert_true(HD_PINFO(rt, ch.p[i + 1]).status != ZO_PARAM_NOT_AVAILABLE);
        if (i + 2 < 4) HD_RELEASED(rt, ch.p[i + 2]);
        HD_EXIT(rt, &c, "");
        HD_RELEASED(rt, ch.p[i]);
    }
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    HD_ALL_RELEASED(rt);
    HD_EQ(HD_STATS(rt).prefetches, 4);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* max_live_parameters bounds what the prefetcher may gather: gathered
 * numel never exceeds max_live + the largest single fetch (invariant 5). */
static uint64_t run_max_live(uint64_t max_live) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.max_live_parameters = max_live;
    cfg.max_reuse_distance = 0;
    chain ch = chain_make(cfg, NCHILD);
    zo_runtime *rt = ch.rt;
    int order[NCHILD];
    for (int i = 0; i < NCHILD; i++) order[i] = i;
    chain_fwd(&ch, order, NCHILD);
    uint64_t peak = 0;
    for (int step = 0; step < 2; step++) {
        hd_call cr, c;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
        for (int i = 0; i < NCHILD; i++) {
            uint64_t live = HD_STATS(rt).live_numel;
            if (live > peak) peak = live;
            HD_ENTER(rt, &c, ch.c[i], ZO_CALL_GRAD, "");
            live = HD_STATS(rt).live_numel;
            if (live > peak) peak = live;
            HD_EXIT(rt, &c, "");
        }
        HD_EXIT(rt, &cr, "");
        HD_FWD_END(rt, g);
        HD_OK(rt, zo_graph_discard(rt, g));
        HD_ALL_RELEASED(rt);
    }
    zo_stats st = HD_STATS(rt);
    assert_true(st.prefetches > 0);
    if (st.peak_live_numel > peak) peak = st.peak_live_numel;
    HD_OK(rt, zo_runtime_destroy(rt));
    return peak;
}

static void test_max_live_parameters_bounds_prefetch(void **state) {
    (void)state;
    uint64_t bounded = run_max_live(2000);
    uint64_t unbounded = run_max_live(1000000000ull);
    print_message("peak live numel: max_live=2000 -> %llu, max_live=1e9 -> %llu\n", (unsigned long long)bounded,
                  (unsigned long long)unbounded);
    assert_true(bounded <= 2000 + 1000);
    HD_EQ(unbounded, NCHILD * 1000); /* everything prefetched at the root */
}

/* order r, c0, c1, c0: c0's param is reused after c1 (1000 elements). */
static void reuse_run(uint64_t distance, int *kept_step2) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.prefetch_bucket_size = 0; /* the reuse rule alone */
    cfg.max_reuse_distance = distance;
    chain ch = chain_make(cfg, 2);
    zo_runtime *rt = ch.rt;
    static const int order[3] = {0, 1, 0};
    for (int step = 0; step < 2; step++) {
        hd_call cr, c;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
        HD_CALL(rt, &c, ch.c[0], ZO_CALL_GRAD, "", "");
        zo_param_status s0 = HD_PINFO(rt, ch.p[0]).status;
        if (step == 0)
            HD_EQ(s0, ZO_PARAM_NOT_AVAILABLE); /* recording: no trace to consult */
        else
            *kept_step2 = s0 == ZO_PARAM_AVAILABLE;
        HD_CALL(rt, &c, ch.c[1], ZO_CALL_GRAD, "", "");
        HD_RELEASED(rt, ch.p[1]); /* not reused */
        HD_CALL(rt, &c, ch.c[0], ZO_CALL_GRAD, "", "");
        HD_RELEASED(rt, ch.p[0]); /* last use */
        HD_EXIT(rt, &cr, "");
        HD_FWD_END(rt, g);
        HD_OK(rt, zo_graph_discard(rt, g));
        HD_ALL_RELEASED(rt);
    }
    (void)order;
    HD_EQ(HD_STATS(rt).trace_invalidations, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_max_reuse_distance(void **state) {
    (void)state;
    int kept = -1;
    reuse_run(1000000000ull, &kept);
    HD_EQ(kept, 1); /* kept gathered between the two uses */
    reuse_run(0, &kept);
    HD_EQ(kept, 0);
    /* DeepSpeed's __params_to_release: walk the trace from the next step,
     * stop once params_traversed >= max_reuse_distance.  c1's 1000 elements
     * lie between the two uses of c0. */
    reuse_run(1000, &kept);
    HD_EQ(kept, 0);
    reuse_run(1001, &kept);
    HD_EQ(kept, 1);
}

static void test_invalidation_on_module_order(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    chain ch = chain_make(cfg, 4);
    zo_runtime *rt = ch.rt;
    chain_fwd(&ch, ORDER4, 4); /* step 1 records 0 1 2 3 */
    static const int swapped[4] = {0, 2, 1, 3};
    size_t mark = g_ev.n;
    hd_call cr, c;
    zo_graph g = HD_FWD_BEGIN(rt); /* step 2: complete */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
    HD_CALL(rt, &c, ch.c[0], ZO_CALL_GRAD, "", "");
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_CALL(rt, &c, ch.c[2], ZO_CALL_GRAD, "", ""); /* expected c1 */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_INVALID);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_TRACE_INVALIDATED, HD_ANY, HD_ANY), 1);
    HD_EQ(HD_STATS(rt).trace_invalidations, 1);
    HD_CALL(rt, &c, ch.c[1], ZO_CALL_GRAD, "", "");
    HD_CALL(rt, &c, ch.c[3], ZO_CALL_GRAD, "", "");
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    HD_ALL_RELEASED(rt); /* every prefetched param was used and released by its module */

    chain_fwd(&ch, swapped, 4); /* step 3: INVALID -> RECORD, records the new order */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_RECORD);
    mark = g_ev.n;
    chain_fwd(&ch, swapped, 4); /* step 4: COMPLETE, matches */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_EQ(HD_STATS(rt).trace_invalidations, 1);
    assert_true(hd_ev_count_from(&g_ev, mark, ZO_EV_PREFETCH, HD_ANY, HD_ANY) > 0);

    /* one module more than recorded also invalidates */
    static const int longer[5] = {0, 2, 1, 3, 0};
    chain_fwd(&ch, longer, 5);
    HD_EQ(HD_STATS(rt).trace_invalidations, 2);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_INVALID);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_invalidation_on_registration(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    chain ch = chain_make(cfg, 3);
    zo_runtime *rt = ch.rt;
    static const int order3[3] = {0, 1, 2};
    chain_fwd(&ch, order3, 3);
    chain_fwd(&ch, order3, 3);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_EQ(HD_STATS(rt).trace_invalidations, 0);
    size_t mark = g_ev.n;
    zo_module_id extra = HD_MODULE(rt, ch.r, "late");
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_INVALID);
    HD_EQ(HD_STATS(rt).trace_invalidations, 1);
    HD_EQ(hd_ev_count_from(&g_ev, mark, ZO_EV_TRACE_INVALIDATED, HD_ANY, HD_ANY), 1);
    chain_fwd(&ch, order3, 3); /* records again */
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_RECORD);
    chain_fwd(&ch, order3, 3);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    /* a new parameter of a traced module after the trace is complete makes
     * the parameter trace stale: invalidated too (re-registration) */
    HD_PARAM(rt, ch.c[0], "w2", 10);
    (void)extra;
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_INVALID);
    HD_EQ(HD_STATS(rt).trace_invalidations, 2);
    chain_fwd(&ch, order3, 3);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* A module gains an external parameter after the trace is complete: the
 * parameter trace no longer matches.  Either the runtime invalidates the
 * trace, or the fetch reports DeepSpeed's "tracing error" (ZO_ERR_TRACE,
 * call still pushed: zo_forward_abort); never an inconsistent state. */
static void test_use_param_after_complete_trace(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.prefetch_bucket_size = 1000;
    chain ch = chain_make(cfg, 3);
    zo_runtime *rt = ch.rt;
    static const int order3[3] = {0, 1, 2};
    chain_fwd(&ch, order3, 3);
    chain_fwd(&ch, order3, 3);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_OK(rt, zo_module_use_param(rt, ch.c[1], ch.p[2]));
    hd_call cr, c;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "");
    HD_CALL(rt, &c, ch.c[0], ZO_CALL_GRAD, "", "");
    zo_status s = zo_pre_forward(rt, ch.c[1], ZO_CALL_GRAD);
    if (s == ZO_OK) {
        HD_OK(rt, zo_track_inputs(rt, ch.c[1], 0, NULL, NULL));
        HD_ACCESS(rt, ch.c[1], ch.p[2]);
        HD_OK(rt, zo_post_forward(rt, ch.c[1]));
        HD_OK(rt, zo_track_outputs(rt, ch.c[1], 0, NULL, NULL));
    } else {
        HD_EQ(s, ZO_ERR_TRACE);
        HD_CONSISTENT(rt);
        HD_OK(rt, zo_forward_abort(rt, ch.r));
    }
    HD_CALL(rt, &c, ch.c[2], ZO_CALL_GRAD, "", "");
    HD_EXIT(rt, &cr, "");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    print_message("use_param after a complete trace: pre_forward returned %s, trace mode %d\n", zo_strerror(s),
                  (int)HD_TRACE(rt).mode);
    /* the following steps record and replay the new shape without error */
    chain_fwd(&ch, order3, 3);
    chain_fwd(&ch, order3, 3);
    chain_fwd(&ch, order3, 3);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* A z3 leaf module's whole subtree is one fetch in the trace: recorded,
 * prefetched as a unit on replay, never invalidated by its children. */
static void test_trace_with_z3_leaf(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.param_persistence_threshold = 0;
    zo_runtime *rt = HD_CREATE(cfg, &g_ev);
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id a = HD_MODULE(rt, r, "a");
    zo_module_id L = HD_LEAF_MODULE(rt, r, "moe");
    zo_module_id e0 = HD_MODULE(rt, L, "e0");
    zo_module_id e1 = HD_MODULE(rt, L, "e1");
    zo_param_id pa = HD_PARAM(rt, a, "w", 100);
    zo_param_id p0 = HD_PARAM(rt, e0, "w", 100);
    zo_param_id p1 = HD_PARAM(rt, e1, "w", 100);
    for (int step = 0; step < 3; step++) {
        hd_call cr, c;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "");
        if (step >= 1) {
            HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
            HD_EQ(HD_TRACE(rt).n_modules, 3);
            HD_EQ(HD_TRACE(rt).n_params, 3);
            assert_true(HD_PINFO(rt, p0).status != ZO_PARAM_NOT_AVAILABLE);
            assert_true(HD_PINFO(rt, p1).status != ZO_PARAM_NOT_AVAILABLE);
        }
        HD_CALL(rt, &c, a, ZO_CALL_GRAD, "", "");
        HD_CALL(rt, &c, L, ZO_CALL_GRAD, "", "");
        HD_EXIT(rt, &cr, "");
        HD_FWD_END(rt, g);
        HD_OK(rt, zo_graph_discard(rt, g));
        HD_ALL_RELEASED(rt);
    }
    HD_EQ(HD_STATS(rt).trace_invalidations, 0);
    (void)pa;
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* A full training step (forward + backward in engine order) replays
 * without invalidation and prefetches ahead of the pre-backward fetches. */
static void test_trace_over_forward_and_backward(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.prefetch_bucket_size = 1000;
    cfg.max_reuse_distance = 0;
    chain ch = chain_make(cfg, 4);
    zo_runtime *rt = ch.rt;
    for (int step = 0; step < 3; step++) {
        hd_call cr, c[4];
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, ch.r, ZO_CALL_GRAD, "1");
        for (int i = 0; i < 4; i++) HD_CALL(rt, &c[i], ch.c[i], ZO_CALL_GRAD, "1", "1");
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        for (int i = 3; i >= 0; i--) {
            if (step >= 1) /* gathered ahead of its pre-backward fetch */
                assert_true(HD_PINFO(rt, ch.p[i]).status != ZO_PARAM_NOT_AVAILABLE);
            HD_OUT_GRAD(rt, c[i].out[0]);
            HD_ACCESS(rt, ch.c[i], ch.p[i]);
            HD_IN_GRAD(rt, c[i].in[0]);
            HD_GRAD_READY(rt, ch.p[i]);
        }
        HD_IN_GRAD(rt, cr.in[0]);
        HD_BWD_END(rt, g);
        HD_ALL_RELEASED(rt);
        HD_RELEASE_ALL(rt);
        if (step >= 1) HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    }
    zo_stats st = HD_STATS(rt);
    HD_EQ(st.trace_invalidations, 0);
    assert_true(st.prefetches >= 8);
    HD_EQ(HD_TRACE(rt).n_params, 8);
    assert_true(g_ev.min_counter >= 0);
    HD_EQ(g_ev.illegal_transitions, 0);
    HD_OK(rt, zo_runtime_destroy(rt));
}

/* The backend's prefetch hint (zo_backend_ops.prefetch, version 3): with
 * a complete trace every fetch hints the parameter after the one the
 * queue (__param_queue) pops next, so the hint runs one fetch ahead of the
 * gather; a recording step hints nothing; a version 2 vtable's prefetch is
 * never called; the hint changes no result. */
static zo_param_id g_hints[64];
static int g_nhints;
static void (*g_inner_prefetch)(void *, zo_param_id);
static void counting_prefetch(void *ctx, zo_param_id p) {
    if (g_nhints < 64) g_hints[g_nhints] = p;
    g_nhints++;
    g_inner_prefetch(ctx, p);
}

static zo_stats run_hinted(uint32_t version, int *hints_recording, int *hints_complete) {
    zo_backend *host = NULL;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    assert_int_equal(zo_backend_host_create(&hc, &host), ZO_OK);
    assert_int_equal(host->ops->version, 3);
    assert_non_null(host->ops->prefetch);
    zo_backend_ops ops = *host->ops;
    g_inner_prefetch = ops.prefetch;
    ops.prefetch = counting_prefetch;
    ops.version = version;
    zo_backend mine = {&ops, host->ctx};
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.backend = &mine;
    cfg.prefetch_bucket_size = 1000;
    cfg.max_reuse_distance = 0;
    chain ch = chain_make(cfg, 4);
    g_nhints = 0;
    chain_fwd(&ch, ORDER4, 4); /* records the trace */
    *hints_recording = g_nhints;
    g_nhints = 0;
    chain_fwd(&ch, ORDER4, 4); /* replays it */
    *hints_complete = g_nhints;
    HD_EQ(HD_TRACE(ch.rt).mode, ZO_TRACE_COMPLETE);
    zo_stats st = HD_STATS(ch.rt);
    HD_OK(ch.rt, zo_runtime_destroy(ch.rt));
    zo_backend_destroy(host);
    return st;
}

static void test_backend_prefetch_hint(void **state) {
    (void)state;
    int rec = -1, comp = -1;
    zo_stats hinted = run_hinted(3, &rec, &comp);
    HD_EQ(rec, 0);
    /* trace r, c0..c3; queue p0..p3.  r's fetch prefetches p0 (qpos 1) and
     * hints p2; c0's pops nothing of its own (p0 came by prefetch), prefetches
     * p1 and hints p3; c1 and c2 prefetch p2, p3 and are at the queue's end */
    HD_EQ(comp, 2);
    HD_EQ(g_hints[0], 2);
    HD_EQ(g_hints[1], 3);
    zo_stats plain = run_hinted(2, &rec, &comp);
    HD_EQ(rec, 0);
    HD_EQ(comp, 0);
    HD_EQ(plain.gathers, hinted.gathers);
    HD_EQ(plain.prefetches, hinted.prefetches);
    HD_EQ(plain.releases, hinted.releases);
    HD_EQ(plain.peak_live_numel, hinted.peak_live_numel);
    /* the wrapper: a hint for a parameter the backend does not know, and
     * for NULL, is nothing */
    zo_backend *host = NULL;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    assert_int_equal(zo_backend_host_create(&hc, &host), ZO_OK);
    zo_backend_prefetch(host, 12345);
    zo_backend_prefetch(host, ZO_NO_PARAM);
    zo_backend_prefetch(NULL, 0);
    zo_backend_destroy(host);
}

/* Train and eval keep separate coordinators (DeepSpeed keeps one per
 * module.training mode): eval forwards never touch the train trace. */
static void test_train_and_eval_coordinators(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    chain ch = chain_make(cfg, 3);
    zo_runtime *rt = ch.rt;
    static const int order3[3] = {0, 1, 2};
    chain_fwd(&ch, order3, 3);
    chain_fwd(&ch, order3, 3);
    HD_EQ(HD_TRACE(rt).mode, ZO_TRACE_COMPLETE);
    HD_EQ(HD_TRACE_EVAL(rt).mode, ZO_TRACE_RECORD);
    /* eval forward in another order */
    for (int k = 0; k < 3; k++) {
        hd_call cr, c;
        zo_graph g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
        HD_ENTER(rt, &cr, ch.r, 0, "");
        HD_CALL(rt, &c, ch.c[2], 0, "", "");
        HD_CALL(rt, &c, ch.c[0], 0, "", "");
        HD_EXIT(rt, &cr, "");
        HD_FWD_END(rt, g); /* end-of-forward reset_step of the eval coordinator */
        HD_ALL_RELEASED(rt);
        HD_EQ(HD_TRACE_EVAL(rt).mode, ZO_TRACE_COMPLETE);
        HD_EQ(HD_TRACE_EVAL(rt).n_modules, 3);
    }
    zo_trace_info ti = HD_TRACE(rt);
    HD_EQ(ti.mode, ZO_TRACE_COMPLETE);
    HD_EQ(ti.n_modules, 4);
    HD_EQ(HD_STATS(rt).trace_invalidations, 0);
    chain_fwd(&ch, order3, 3);
    HD_EQ(HD_STATS(rt).trace_invalidations, 0);
    HD_OK(rt, zo_reset_step(rt, 1));
    HD_OK(rt, zo_runtime_destroy(rt));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_record_then_complete),   cmocka_unit_test(test_prefetch_disabled_by_zero_bucket),
        cmocka_unit_test(test_prefetch_bucket_one_ahead),    cmocka_unit_test(test_max_live_parameters_bounds_prefetch),
        cmocka_unit_test(test_max_reuse_distance),           cmocka_unit_test(test_invalidation_on_module_order),
        cmocka_unit_test(test_invalidation_on_registration), cmocka_unit_test(test_use_param_after_complete_trace),
        cmocka_unit_test(test_trace_with_z3_leaf),           cmocka_unit_test(test_trace_over_forward_and_backward),
        cmocka_unit_test(test_train_and_eval_coordinators),  cmocka_unit_test(test_backend_prefetch_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
