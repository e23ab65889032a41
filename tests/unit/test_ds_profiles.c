/*
 * test_ds_profiles.c - zo_config.ds_profile: what the DeepSpeed-shaped
 * policies reproduce of each DeepSpeed release around the hooks, asserted
 * as the parameter states and counters DeepSpeed shows (checked with
 * tools/difftest.py --deepspeed against DeepSpeed 0.19.8 and 0.15.4;
 * function names are DeepSpeed's, deepspeed/runtime/zero/).
 *
 *  - ZO_DS_0_19 (the ZeRO-3 optimizer): release_backward_leftovers() at
 *    the end of the backward releases a module whose post-backward never
 *    released it (ALBERT-style reuse: counts 0 then -1);
 *  - every profile: _invalidate_trace cleans the in-flight registry (a
 *    prefetch for the abandoned order is released);
 *  - every profile: ds_persist parameters are released by
 *    release_sub_module without a complete trace and by
 *    release_and_reset_all;
 *  - the config: version 2 structs still accepted, a bad ds_profile
 *    rejected with a message.
 */
#include "hookdrv.h"

static hd_events g_ev;

static zo_config ds_config(zo_grads_policy pol, zo_ds_profile prof) {
    zo_config cfg = hd_policy_config(pol);
    cfg.ds_profile = prof;
    return cfg;
}

/* m called twice in one forward (ALBERT): the second post-backward takes
 * the counter to -1 and never releases.  With the ZeRO-3 optimizer (0.19)
 * the backward epilogue's release_backward_leftovers() releases m's
 * parameter at the end of the backward and reports m as a leftover; with
 * the hooks alone (0.19-hooks, 0.15) it stays gathered until the sweep. */
static void test_albert_leftovers(void **state) {
    (void)state;
    for (int prof = 0; prof < ZO_DS_PROFILE_COUNT; prof++) {
        zo_runtime *rt = HD_CREATE(ds_config(ZO_GRADS_RESET_ON_FORWARD, (zo_ds_profile)prof), &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_module_id m = HD_MODULE(rt, r, "shared");
        zo_param_id p = HD_PARAM(rt, m, "w", 1000);
        hd_call cr, c1, c2;
        zo_graph g = HD_FWD_BEGIN(rt);
        HD_ENTER(rt, &cr, r, ZO_CALL_GRAD, "1");
        HD_CALL(rt, &c1, m, ZO_CALL_GRAD, "1", "1");
        HD_CALL(rt, &c2, m, ZO_CALL_GRAD, "1", "1");
        HD_EXIT(rt, &cr, "1");
        HD_FWD_END(rt, g);
        HD_BWD_BEGIN(rt, g);
        HD_OUT_GRAD(rt, cr.out[0]);
        HD_OUT_GRAD(rt, c2.out[0]);
        HD_IN_GRAD(rt, c2.in[0]);
        HD_EQ(HD_MINFO(rt, m).grads_remaining, 0);
        HD_RELEASED(rt, p);
        HD_OUT_GRAD(rt, c1.out[0]); /* ref count 1 -> 0: fetched again */
        HD_AVAILABLE(rt, p);
        HD_IN_GRAD(rt, c1.in[0]);
        HD_EQ(HD_MINFO(rt, m).grads_remaining, -1);
        HD_AVAILABLE(rt, p);
        HD_IN_GRAD(rt, cr.in[0]);
        size_t mark = g_ev.n;
        HD_BWD_END(rt, g);
        if (prof == ZO_DS_0_19) {
            HD_RELEASED(rt, p);
            HD_EQ(HD_PINFO(rt, p).n_active, 0);
            HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, m, HD_ANY), 1);
            assert_true(hd_ev_find(&g_ev, mark, ZO_EV_LEFTOVER, m, HD_ANY) != (size_t)-1);
            HD_EQ(HD_STATS(rt).leftovers, 1);
        } else {
            HD_AVAILABLE(rt, p);
            HD_EQ(HD_PINFO(rt, p).n_active, 1);
            HD_EQ(hd_ev_count(&g_ev, ZO_EV_LEFTOVER, HD_ANY, HD_ANY), 0);
        }
        HD_EQ(HD_MINFO(rt, m).grads_remaining, -1); /* the epilogue changes no counter */
        HD_RELEASE_ALL(rt);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* A complete trace r, a, b prefetches b while a runs; the next forward
 * calls r then b: b differs from the recorded a at step 1, the trace is
 * invalidated, and DeepSpeed (>= 0.15.3) waits and releases the in-flight
 * prefetch of a's parameter that nobody will use.  Per-call keeps its own
 * behaviour (the prefetched parameter stays gathered until the pass ends). */
static void test_invalidation_cleans_inflight(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        for (int prof = 0; prof < ZO_DS_PROFILE_COUNT; prof++) {
            zo_config cfg = ds_config((zo_grads_policy)pol, (zo_ds_profile)prof);
            cfg.prefetch_bucket_size = 1000000;
            zo_host_config hc = ZO_HOST_CONFIG_INIT;
            zo_host_testing ht = ZO_HOST_TESTING_INIT;
            hc.testing = &ht;
            ht.deferred = 1; /* gathers stay in flight until waited */
            zo_backend *be = NULL;
            HD_OK(NULL, zo_backend_host_create(&hc, &be));
            cfg.backend = be;
            zo_runtime *rt = HD_CREATE(cfg, &g_ev);
            zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
            zo_module_id a = HD_MODULE(rt, r, "a");
            zo_module_id b = HD_MODULE(rt, r, "b");
            zo_param_id pa = HD_PARAM(rt, a, "wa", 100);
            zo_param_id pb = HD_PARAM(rt, b, "wb", 100);
            /* step 1 (eval, no backward): records r, a, b */
            hd_call cr, ca, cb;
            zo_graph g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
            HD_ENTER(rt, &cr, r, 0, "0");
            HD_CALL(rt, &ca, a, 0, "0", "0");
            HD_CALL(rt, &cb, b, 0, "0", "0");
            HD_EXIT(rt, &cr, "0");
            HD_FWD_END(rt, g);
            /* step 2: the root's fetch prefetches a's and b's parameters */
            g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
            HD_ENTER(rt, &cr, r, 0, "0");
            HD_PSTATUS(rt, pa, ZO_PARAM_INFLIGHT);
            HD_PSTATUS(rt, pb, ZO_PARAM_INFLIGHT);
            HD_ENTER(rt, &cb, b, 0, "0"); /* b where a was recorded: invalidated */
            zo_trace_info ti;
            HD_OK(rt, zo_get_trace_info(rt, 1, &ti));
            HD_EQ(ti.mode, ZO_TRACE_INVALID);
            HD_AVAILABLE(rt, pb);
            /* (a and b's parameters were prefetched as one coalesced
             * gather: waiting b's completes a's too) */
            if (pol == ZO_GRADS_PER_CALL)
                HD_AVAILABLE(rt, pa); /* kept until the pass ends */
            else
                HD_RELEASED(rt, pa); /* _clean_inflight_param_registry */
            HD_EQ(HD_STATS(rt).inflight_params, 0);
            HD_EXIT(rt, &cb, "0");
            HD_EXIT(rt, &cr, "0");
            HD_FWD_END(rt, g);
            HD_RELEASE_ALL(rt);
            HD_OK(rt, zo_runtime_destroy(rt));
            zo_backend_destroy(be);
        }
    }
}

/* A ds_persist parameter (numel under param_persistence_threshold): the
 * DeepSpeed-shaped policies release it at post-forward while the trace is
 * recorded (release_sub_module without a complete trace releases every
 * parameter) and at release_and_reset_all; per-call gathers it once and
 * keeps it. */
static void test_persistent_released_like_deepspeed(void **state) {
    (void)state;
    for (int pol = 0; pol < ZO_GRADS_POLICY_COUNT; pol++) {
        zo_config cfg = ds_config((zo_grads_policy)pol, ZO_DS_0_19);
        cfg.param_persistence_threshold = 10;
        zo_runtime *rt = HD_CREATE(cfg, &g_ev);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        zo_param_id pp = HD_PARAM(rt, r, "bias", 4);
        HD_EQ(HD_PINFO(rt, pp).persistent, 1);
        hd_call cr;
        zo_graph g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
        HD_ENTER(rt, &cr, r, 0, "0");
        HD_AVAILABLE(rt, pp);
        HD_EXIT(rt, &cr, "0");
        if (pol == ZO_GRADS_PER_CALL) {
            HD_AVAILABLE(rt, pp);
        } else {
            HD_RELEASED(rt, pp);
            HD_EQ(HD_STATS(rt).persistent_live_numel, 0);
        }
        HD_FWD_END(rt, g);
        /* gathered again (per-call: still), then the sweep */
        g = HD_FWD_BEGIN_FLAGS(rt, ZO_FWD_ROOT | ZO_FWD_EVAL);
        HD_ENTER(rt, &cr, r, 0, "0");
        HD_EXIT(rt, &cr, "0");
        HD_FWD_END(rt, g);
        HD_RELEASE_ALL(rt);
        if (pol == ZO_GRADS_PER_CALL) {
            HD_AVAILABLE(rt, pp);
            HD_EQ(HD_STATS(rt).persistent_live_numel, 4);
        } else {
            HD_RELEASED(rt, pp);
        }
        HD_EQ(HD_STATS(rt).live_numel, HD_STATS(rt).persistent_live_numel);
        HD_OK(rt, zo_check_consistency(rt));
        HD_OK(rt, zo_runtime_destroy(rt));
    }
}

/* Version 2 structs (before ds_profile) are accepted with the default
 * ZO_DS_0_19; a value out of range is ZO_ERR_INVALID_ARG with a message. */
static void test_config_versions(void **state) {
    (void)state;
    zo_config cfg = ZO_CONFIG_INIT;
    HD_EQ(cfg.version, 3);
    HD_EQ(cfg.ds_profile, ZO_DS_0_19);
    zo_runtime *rt = NULL;
    zo_config v2 = ZO_CONFIG_INIT;
    v2.version = 2;
    v2.size = ZO_CONFIG_V2_SIZE;
    v2.ds_profile = (zo_ds_profile)77; /* beyond a version 2 struct: not read */
    HD_OK(NULL, zo_runtime_create(&v2, &rt));
    HD_OK(rt, zo_runtime_destroy(rt));
    v2.size = sizeof(zo_config);
    HD_ERR(NULL, zo_runtime_create(&v2, &rt), ZO_ERR_VERSION);
    cfg.ds_profile = (zo_ds_profile)ZO_DS_PROFILE_COUNT;
    rt = NULL;
    HD_ERR(NULL, zo_runtime_create(&cfg, &rt), ZO_ERR_INVALID_ARG);
    assert_null(rt);
    assert_non_null(strstr(zo_last_error(NULL), "ds_profile 3"));
    cfg.ds_profile = (zo_ds_profile)-1;
    HD_ERR(NULL, zo_runtime_create(&cfg, &rt), ZO_ERR_INVALID_ARG);
    for (int p = 0; p < ZO_DS_PROFILE_COUNT; p++) {
        cfg.ds_profile = (zo_ds_profile)p;
        HD_OK(NULL, zo_runtime_create(&cfg, &rt));
        HD_OK(rt, zo_runtime_destroy(rt));
    }
    assert_string_equal(zo_ds_profile_name(ZO_DS_0_19), "0.19");
    assert_string_equal(zo_ds_profile_name(ZO_DS_0_19_HOOKS), "0.19-hooks");
    assert_string_equal(zo_ds_profile_name(ZO_DS_0_15), "0.15");
    assert_null(zo_ds_profile_name((zo_ds_profile)3));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_albert_leftovers),
        cmocka_unit_test(test_invalidation_cleans_inflight),
        cmocka_unit_test(test_persistent_released_like_deepspeed),
        cmocka_unit_test(test_config_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
