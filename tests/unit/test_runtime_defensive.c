/*
 * test_runtime_defensive.c - runtime paths that only a misbehaving caller
 * or a corrupted state reaches (coverage of runtime/): forged
 * legacy grad handles (a handle is a plain uint64 the framework stores, so
 * a caller can hand back one for a module that never ran hook C or D), and
 * zo_check_consistency() catching each kind of internal inconsistency
 * (the runtime's state corrupted through runtime/internal.h, checked,
 * then restored).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "internal.h"
#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

typedef struct evlog {
    int uninit;
} evlog;
static void on_ev(void *u, const zo_event *ev) {
    if (ev->kind == ZO_EV_COUNTER_UNINIT) ((evlog *)u)->uninit++;
}

static zo_runtime *mk(zo_grads_policy pol, zo_backend *be, evlog *ev) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.grads_policy = pol;
    cfg.param_persistence_threshold = 4;
    cfg.backend = be;
    if (be) cfg.world_size = 2;
    cfg.on_event = on_ev;
    cfg.event_user = ev;
    zo_runtime *rt = NULL;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
    zo_module_id r, a, b;
    zo_param_id p;
    assert_int_equal(zo_module_register(rt, ZO_NO_MODULE, "r", 0, &r), ZO_OK);
    assert_int_equal(zo_module_register(rt, r, "a", 0, &a), ZO_OK);
    assert_int_equal(zo_module_register(rt, r, "b", 0, &b), ZO_OK);
    assert_int_equal(zo_param_register(rt, a, "w", 100, 4, 0, &p), ZO_OK);
    assert_int_equal(zo_param_register(rt, b, "w", 50, 4, 0, &p), ZO_OK);
    assert_int_equal(zo_param_register(rt, b, "bias", 2, 4, 0, &p), ZO_OK); /* persistent */
    return rt;
}

/* The legacy handle of module `m`, built from a real one of another module
 * by swapping the module index (bits 20..39 of the documented-opaque
 * encoding: runtime.c mk_handle). */
static zo_grad_handle forge(zo_grad_handle real, uint32_t m) {
    return (real & ~((zo_grad_handle)0xFFFFFu << 20)) | ((zo_grad_handle)m << 20);
}

/* A legacy output/input gradient for a module whose hooks C/D never ran:
 * DeepSpeed would read applied_pre_backward_ref_cnt / ds_grads_remaining
 * before they exist (AttributeError); the runtime reports
 * ZO_EV_COUNTER_UNINIT, initialises the counter and goes on. */
static void test_forged_legacy_handles(void **state) {
    (void)state;
    static const zo_grads_policy pols[] = {ZO_GRADS_RESET_ON_FORWARD, ZO_GRADS_LAZY_INIT};
    for (int i = 0; i < 2; i++) {
        evlog ev = {0};
        zo_runtime *rt = mk(pols[i], NULL, &ev);
        zo_graph g;
        uint8_t one[1] = {1};
        zo_grad_handle in_a, out_a;
        assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT, &g), ZO_OK);
        assert_int_equal(zo_pre_forward(rt, 1, ZO_CALL_GRAD), ZO_OK);
        assert_int_equal(zo_track_inputs(rt, 1, 1, one, &in_a), ZO_OK);
        assert_int_equal(zo_post_forward(rt, 1), ZO_OK);
        assert_int_equal(zo_track_outputs(rt, 1, 1, one, &out_a), ZO_OK);
        assert_int_equal(zo_forward_end(rt, g), ZO_OK);
        assert_int_equal(zo_backward_begin(rt, g, 0), ZO_OK);
        /* module b (2) never ran: its counters were never created */
        assert_int_equal(zo_output_grad(rt, forge(out_a, 2)), ZO_OK);
        assert_int_equal(zo_input_grad(rt, forge(in_a, 2)), ZO_OK);
        zo_module_info mi;
        assert_int_equal(zo_module_get_info(rt, 2, &mi), ZO_OK);
        assert_int_equal(mi.grads_remaining, -1);
        /* lazy-init creates the counter silently on first access (the seed
         * PR's first version); reset-on-forward reports both reads */
        assert_int_equal(ev.uninit, pols[i] == ZO_GRADS_LAZY_INIT ? 1 : 2);
        assert_int_equal(zo_check_consistency(rt), ZO_OK);
        /* an index past the modules is a bad handle, not a read */
        assert_int_equal(zo_output_grad(rt, forge(out_a, 999)), ZO_ERR_BAD_HANDLE);
        assert_int_equal(zo_input_grad(rt, forge(in_a, 999)), ZO_ERR_BAD_HANDLE);
        assert_int_equal(zo_backward_end(rt, g), ZO_OK);
        assert_int_equal(zo_release_all(rt), ZO_OK);
        assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    }
}

#define EXPECT_STATE(rt, needle)                                                                                       \
    do {                                                                                                               \
        assert_int_equal(zo_check_consistency(rt), ZO_ERR_STATE);                                                      \
        if (!strstr(zo_last_error(rt), (needle))) {                                                                    \
            print_error("last_error \"%s\" lacks \"%s\"\n", zo_last_error(rt), (needle));                              \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

/* Each internal inconsistency zo_check_consistency() looks for, made by
 * hand on a runtime with a parameter in flight (deferred backend), one
 * AVAILABLE and a call on the forward stack; restored after each. */
static void test_consistency_detects_corruption(void **state) {
    (void)state;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 2;
    ht.deferred = 1;
    zo_backend *be;
    assert_int_equal(zo_backend_host_create(&hc, &be), ZO_OK);
    evlog ev = {0};
    zo_runtime *rt = mk(ZO_GRADS_PER_CALL, be, &ev);
    zo_graph g;
    uint8_t one[1] = {1};
    zo_grad_handle hin;
    const void *d;
    assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT, &g), ZO_OK);
    assert_int_equal(zo_pre_forward(rt, 1, ZO_CALL_GRAD), ZO_OK); /* param 0 AVAILABLE */
    assert_int_equal(zo_track_inputs(rt, 1, 1, one, &hin), ZO_OK);
    /* issue (not wait) a gather of param 1 by hand, as the prefetcher does */
    zo_param_id p1 = 1;
    assert_int_equal(zo__gather(rt, &p1, 1, 1), ZO_OK);
    assert_int_equal(zo_check_consistency(rt), ZO_OK);
    zo_par *a = &rt->pars[0], *b = &rt->pars[1];
    assert_int_equal(a->status, ZO_PARAM_AVAILABLE);
    assert_int_equal(b->status, ZO_PARAM_INFLIGHT);

    zo_param_status s0 = a->status;
    a->status = (zo_param_status)3; /* the one invalid value the 2-bit field holds */
    EXPECT_STATE(rt, "invalid ds_status");
    a->status = s0;

    uint32_t w = b->work;
    b->work = ZO_NONE32;
    EXPECT_STATE(rt, "in-flight registry");
    b->work = rt->n_works + 3;
    EXPECT_STATE(rt, "dead work");
    b->work = w;

    zo_work_rec *wr = &rt->works[w];
    assert_int_equal(wr->n_params, 1); /* listed in the slot itself */
    zo_param_id saved = wr->inl[0];
    wr->inl[0] = 0; /* the work no longer lists param 1 */
    EXPECT_STATE(rt, "times in its work");
    wr->inl[0] = saved;

    void *full = a->full;
    a->full = NULL;
    EXPECT_STATE(rt, "has no full buffer");
    a->full = full;
    zo_par *c = &rt->pars[2]; /* persistent, gathered at registration? */
    if (c->status == ZO_PARAM_NOT_AVAILABLE) {
        c->full = (void *)1;
        EXPECT_STATE(rt, "still has a full buffer");
        c->full = NULL;
    }

    /* a work listing a parameter that is not in flight with it */
    uint32_t n = wr->n_params;
    zo_param_id inl1 = wr->inl[1];
    wr->inl[0] = 1;
    wr->inl[1] = 0;
    wr->n_params = 2;
    EXPECT_STATE(rt, "not in flight with it");
    wr->inl[0] = saved;
    wr->inl[1] = inl1;
    wr->n_params = n;

    rt->st.live_numel += 1;
    EXPECT_STATE(rt, "accounting");
    rt->st.live_numel -= 1;

    zo_mod *md = &rt->mods[1];
    int64_t ws = md->window_sum;
    md->window_sum = -1;
    EXPECT_STATE(rt, "negative window count");
    md->window_sum = ws;

    uint32_t j = rt->mod_calls[1];
    assert_true(j != ZO_NONE32);
    int64_t wc = rt->calls[j].window_count;
    rt->calls[j].window_count = -1;
    EXPECT_STATE(rt, "a window of module 1 is negative");
    rt->calls[j].window_count = wc;

    md->activations += 1;
    EXPECT_STATE(rt, "activation accounting");
    md->activations -= 1;

    /* the index lists: live parameters (param 0 is AVAILABLE) and held
     * calls (none while forward runs) */
    uint32_t lp = a->live_pos;
    assert_true(lp != 0);
    a->live_pos = 0;
    EXPECT_STATE(rt, "parameter 0 is missing from the list of live parameters");
    a->live_pos = lp;
    uint32_t listed = rt->live_pars[lp - 1];
    rt->live_pars[lp - 1] = listed + 1;
    EXPECT_STATE(rt, "missing from the list of live parameters");
    rt->live_pars[lp - 1] = listed;
    rt->n_live_pars += 1;
    EXPECT_STATE(rt, "live parameters,");
    rt->n_live_pars -= 1;
    assert_int_equal(rt->calls[j].held_pos, 0);
    rt->calls[j].held_pos = 1;
    EXPECT_STATE(rt, "is wrongly in the list of held calls");
    rt->calls[j].held_pos = 0;

    assert_int_equal(zo_check_consistency(rt), ZO_OK);
    assert_int_equal(zo_param_access(rt, 1, 0, &d, NULL), ZO_OK);
    assert_int_equal(zo_forward_abort(rt, ZO_NO_MODULE), ZO_OK);
    assert_int_equal(zo_release_all(rt), ZO_OK);
    assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    zo_backend_destroy(be);
}

/* reset_step's _clean_inflight_param_registry when a wait fails: the error
 * is returned, the rest of the step is still reset, the parameter stays
 * INFLIGHT (consistent) and the next sweep recovers it (transient fault) */
static void test_reset_step_wait_failure(void **state) {
    (void)state;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hc.testing = &ht;
    hc.world_size = 2;
    ht.deferred = 1;
    zo_backend *be;
    assert_int_equal(zo_backend_host_create(&hc, &be), ZO_OK);
    evlog ev = {0};
    zo_runtime *rt = mk(ZO_GRADS_PER_CALL, be, &ev);
    zo_param_id ids[2] = {0, 1};
    assert_int_equal(zo__gather(rt, ids, 2, 1), ZO_OK); /* both INFLIGHT, one work */
    zo_host_fault f = {ZO_HOST_FAULT_WAIT, ZO_HOST_FAULT_FAIL, 1, 1, 0, 0};
    assert_int_equal(zo_host_set_fault(be, &f), ZO_OK);
    assert_int_equal(zo_reset_step(rt, 0), ZO_ERR_BACKEND);
    assert_non_null(strstr(zo_last_error(rt), "injected"));
    assert_int_equal(zo_check_consistency(rt), ZO_OK);
    zo_param_info pi;
    assert_int_equal(zo_param_get_info(rt, 0, &pi), ZO_OK);
    /* the all-gather failed: both parameters of that work went back to
     * NOT_AVAILABLE (buffers freed, shards intact), nothing is in flight */
    assert_int_equal(pi.status, ZO_PARAM_NOT_AVAILABLE);
    assert_int_equal(zo_param_get_info(rt, 1, &pi), ZO_OK);
    assert_int_equal(pi.status, ZO_PARAM_NOT_AVAILABLE);
    zo_stats st;
    assert_int_equal(zo_get_stats(rt, &st), ZO_OK);
    assert_int_equal(st.live_numel, 0);
    assert_int_equal(st.inflight_params, 0);
    assert_int_equal(zo_release_all(rt), ZO_OK);
    assert_int_equal(zo_param_get_info(rt, 0, &pi), ZO_OK);
    assert_int_equal(pi.status, ZO_PARAM_NOT_AVAILABLE);
    assert_int_equal(zo_check_consistency(rt), ZO_OK);
    assert_int_equal(zo_runtime_destroy(rt), ZO_OK);
    zo_backend_destroy(be);
}

/* every entry point refuses a NULL runtime (nothing aborts on bad input) */
static void test_null_runtime(void **state) {
    (void)state;
    zo_graph g = 0;
    zo_grad_handle h = 0;
    uint8_t rg[1] = {1};
    const void *d = NULL;
    zo_module_id m;
    zo_param_id p;
    zo_param_info pi;
    zo_module_info mi;
    zo_stats st;
    zo_trace_info ti;
    size_t n;
    assert_int_equal(zo_runtime_destroy(NULL), ZO_OK);
    assert_non_null(zo_last_error(NULL));
    assert_int_equal(zo_module_register(NULL, ZO_NO_MODULE, "x", 0, &m), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_param_register(NULL, 0, "w", 1, 4, 0, &p), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_module_use_param(NULL, 0, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_forward_begin(NULL, ZO_FWD_ROOT, &g), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_forward_end(NULL, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_pre_forward(NULL, 0, ZO_CALL_GRAD), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_track_inputs(NULL, 0, 1, rg, &h), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_post_forward(NULL, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_track_outputs(NULL, 0, 1, rg, &h), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_forward_abort(NULL, ZO_NO_MODULE), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backward_begin(NULL, 1, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_output_grad(NULL, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_input_grad(NULL, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_param_grad_ready(NULL, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backward_end(NULL, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_graph_discard(NULL, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_param_access(NULL, 0, 0, &d, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_release_all(NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_reset_step(NULL, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_param_get_info(NULL, 0, &pi), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_param_is_active_for(NULL, 0, 0), 0);
    assert_int_equal(zo_module_get_info(NULL, 0, &mi), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_module_params(NULL, 0, &p, 1, &n), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_get_stats(NULL, &st), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_get_trace_info(NULL, 0, &ti), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_check_consistency(NULL), ZO_ERR_INVALID_ARG);
}

/* a borrowed backend whose vtable lacks any required operation (or has
 * the wrong version) is refused at create, one missing op at a time */
static void test_backend_missing_ops(void **state) {
    (void)state;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    zo_backend *host;
    assert_int_equal(zo_backend_host_create(&hc, &host), ZO_OK);
    static const size_t offs[] = {offsetof(zo_backend_ops, param_add), offsetof(zo_backend_ops, full_alloc),
                                  offsetof(zo_backend_ops, full_free), offsetof(zo_backend_ops, all_gather_start),
                                  offsetof(zo_backend_ops, wait),      offsetof(zo_backend_ops, query),
                                  offsetof(zo_backend_ops, work_free), offsetof(zo_backend_ops, world_size),
                                  offsetof(zo_backend_ops, rank)};
    for (size_t i = 0; i <= sizeof offs / sizeof offs[0]; i++) {
        zo_backend_ops ops = *host->ops;
        if (i < sizeof offs / sizeof offs[0])
            memset((char *)&ops + offs[i], 0, sizeof(void (*)(void)));
        else
            ops.version = ZO_BACKEND_OPS_VERSION + 1;
        zo_backend be = {&ops, host->ctx};
        zo_config cfg = ZO_CONFIG_INIT;
        cfg.backend = &be;
        zo_runtime *rt = NULL;
        assert_int_not_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
        assert_null(rt);
    }
    zo_backend none = {NULL, host->ctx};
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.backend = &none;
    zo_runtime *rt = NULL;
    assert_int_not_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
    zo_backend_destroy(host);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_runtime),
        cmocka_unit_test(test_backend_missing_ops),
        cmocka_unit_test(test_reset_step_wait_failure),
        cmocka_unit_test(test_forged_legacy_handles),
        cmocka_unit_test(test_consistency_detects_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
