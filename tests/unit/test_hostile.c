/*
 * test_hostile.c - hostile inputs to the public API: requests the system
 * cannot satisfy, handles from another runtime or long stale, hook orders
 * PyTorch never produces, and errors of functions that have no runtime to
 * hold the message.  Every case asserts the exact status, that
 * zo_last_error() names the problem, and that a normal training step
 * afterwards succeeds and releases everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hookdrv.h"
#include "zoffload.h"

/* last_error of rt (NULL: the thread's creation error) contains needle */
#define HAS_MSG(rt, needle)                                                                                            \
    do {                                                                                                               \
        const char *m_ = zo_last_error(rt);                                                                            \
        if (!m_ || !strstr(m_, (needle))) {                                                                            \
            print_error("last_error \"%s\" lacks \"%s\"\n", m_ ? m_ : "(null)", (needle));                             \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

/* A model root -> fc with one parameter each. */
typedef struct model {
    zo_runtime *rt;
    zo_module_id root, fc;
    zo_param_id w_root, w_fc;
} model;

static void model_make(model *md, zo_config cfg) {
    cfg.param_persistence_threshold = 0;
    md->rt = HD_CREATE(cfg, NULL);
    md->root = HD_MODULE(md->rt, ZO_NO_MODULE, "model");
    md->fc = HD_MODULE(md->rt, md->root, "fc");
    md->w_root = HD_PARAM(md->rt, md->root, "bias", 1000);
    md->w_fc = HD_PARAM(md->rt, md->fc, "weight", 4000);
}

/* One full training step (forward, backward, optimizer step) in PyTorch
 * order; everything is released at the end. */
static void model_step(model *md) {
    zo_runtime *rt = md->rt;
    hd_call r, f;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, md->root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, md->fc, ZO_CALL_GRAD, "1");
    HD_ACCESS(rt, md->fc, md->w_fc);
    HD_EXIT(rt, &f, "1");
    HD_ACCESS(rt, md->root, md->w_root);
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_GRAD_READY(rt, md->w_root);
    HD_OUT_GRAD(rt, f.out[0]);
    HD_GRAD_READY(rt, md->w_fc);
    HD_IN_GRAD(rt, f.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
}

static void model_free(model *md) {
    HD_OK(md->rt, zo_runtime_destroy(md->rt));
    md->rt = NULL;
}

/* ------------------------------------------------------------------ */
/* Allocation the system refuses                                        */
/* ------------------------------------------------------------------ */

/* 64 GiB (more than this machine can commit) and just under the 1 TiB cap
 * (AddressSanitizer's own limit) are ZO_ERR_NOMEM in every build, sanitized
 * or not, and leave the runtime usable. */
static void test_huge_param_is_nomem(void **state) {
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_param_id p = 77;
    HD_ERR(md.rt, zo_param_register(md.rt, md.fc, "huge", 1ull << 34, 4, 0, &p), ZO_ERR_NOMEM);
    HAS_MSG(md.rt, "param_add");
    assert_int_equal(p, 77);
    HD_ERR(md.rt, zo_param_register(md.rt, md.fc, "huger", (1ull << 38) - 1, 4, 0, &p), ZO_ERR_NOMEM);
    HAS_MSG(md.rt, "param_add");
    HD_ERR(md.rt, zo_param_register(md.rt, md.fc, "huger", ((1ull << 40) - 4096), 1, 0, &p), ZO_ERR_NOMEM);
    HAS_MSG(md.rt, "param_add");
    assert_int_equal(HD_STATS(md.rt).n_params, 2);
    model_step(&md);
    model_free(&md);
}

/* ------------------------------------------------------------------ */
/* Handles cannot alias                                                 */
/* ------------------------------------------------------------------ */

/* A call slot reused 2^21 times (the width of the old generation field)
 * and more: the first call's handles stay stale. */
static void test_stale_grad_handle_after_many_reuses(void **state) {
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_runtime *rt = md.rt;
    hd_call c;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &c, md.root, ZO_CALL_GRAD, "1");
    HD_EXIT(rt, &c, "1");
    HD_FWD_END(rt, g);
    HD_OK(rt, zo_graph_discard(rt, g));
    zo_grad_handle old_in = c.in[0], old_out = c.out[0];
    /* calls without grad: each pass ends at zo_forward_end and frees the
     * one call slot, which the next pass reuses; 2^21 uses in all bring a
     * 21-bit generation back to the first call's */
    for (uint32_t i = 0; i < (1u << 21) - 1; i++) {
        zo_graph e;
        if (zo_forward_begin(rt, 0, &e) || zo_pre_forward(rt, md.root, 0) || zo_post_forward(rt, md.root) ||
            zo_forward_end(rt, e))
            fail_msg("reuse %u: %s", i, zo_last_error(rt));
    }
    hd_call r, f;
    g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, md.root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, md.fc, ZO_CALL_GRAD, "1");
    HD_EXIT(rt, &f, "1");
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_ERR(rt, zo_output_grad(rt, old_out), ZO_ERR_BAD_HANDLE);
    HAS_MSG(rt, "handle");
    HD_ERR(rt, zo_input_grad(rt, old_in), ZO_ERR_BAD_HANDLE);
    HAS_MSG(rt, "handle");
    HD_OUT_GRAD(rt, r.out[0]);
    HD_OUT_GRAD(rt, f.out[0]);
    HD_GRAD_READY(rt, md.w_fc);
    HD_GRAD_READY(rt, md.w_root);
    HD_IN_GRAD(rt, f.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    model_step(&md);
    model_free(&md);
}

/* Two runtimes with the same model: neither accepts the other's graph or
 * grad handles, even while its own pass sits in the same slot. */
static void test_handles_of_another_runtime(void **state) {
    (void)state;
    model a, b;
    model_make(&a, (zo_config)ZO_CONFIG_INIT);
    model_make(&b, (zo_config)ZO_CONFIG_INIT);
    hd_call ra, rb;
    zo_graph ga = HD_FWD_BEGIN(a.rt);
    zo_graph gb = HD_FWD_BEGIN(b.rt);
    assert_true(ga != gb);
    HD_ENTER(a.rt, &ra, a.root, ZO_CALL_GRAD, "1");
    HD_ENTER(b.rt, &rb, b.root, ZO_CALL_GRAD, "1");
    assert_true(ra.in[0] != rb.in[0]);
    HD_EXIT(a.rt, &ra, "1");
    HD_EXIT(b.rt, &rb, "1");
    assert_true(ra.out[0] != rb.out[0]);
    HD_ERR(a.rt, zo_forward_end(a.rt, gb), ZO_ERR_BAD_HANDLE);
    HAS_MSG(a.rt, "graph");
    HD_FWD_END(a.rt, ga);
    HD_FWD_END(b.rt, gb);
    HD_ERR(a.rt, zo_backward_begin(a.rt, gb, 0), ZO_ERR_BAD_HANDLE);
    HD_BWD_BEGIN(a.rt, ga);
    HD_ERR(a.rt, zo_output_grad(a.rt, rb.out[0]), ZO_ERR_BAD_HANDLE);
    HAS_MSG(a.rt, "handle");
    HD_ERR(a.rt, zo_input_grad(a.rt, rb.in[0]), ZO_ERR_BAD_HANDLE);
    HAS_MSG(a.rt, "handle");
    HD_OUT_GRAD(a.rt, ra.out[0]);
    HD_GRAD_READY(a.rt, a.w_root);
    HD_IN_GRAD(a.rt, ra.in[0]);
    HD_BWD_END(a.rt, ga);
    HD_RELEASE_ALL(a.rt);
    HD_OK(b.rt, zo_graph_discard(b.rt, gb));
    HD_RELEASE_ALL(b.rt);
    model_step(&a);
    model_step(&b);
    model_free(&a);
    model_free(&b);
}

/* ------------------------------------------------------------------ */
/* Errors without a runtime, and of introspection                       */
/* ------------------------------------------------------------------ */

static void test_create_errors_have_messages(void **state) {
    (void)state;
    zo_runtime *rt = (zo_runtime *)1;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.version = 99;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_ERR_VERSION);
    assert_null(rt);
    HAS_MSG(NULL, "version 99");
    cfg = (zo_config)ZO_CONFIG_INIT;
    cfg.size = 8;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_ERR_VERSION);
    HAS_MSG(NULL, "size 8");
    cfg = (zo_config)ZO_CONFIG_INIT;
    cfg.world_size = 0;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "world_size 0");
    cfg = (zo_config)ZO_CONFIG_INIT;
    cfg.world_size = 2;
    cfg.rank = 2;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "rank 2");
    assert_int_equal(zo_runtime_create(NULL, &rt), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "cfg is NULL");

    /* a backend of another world size */
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 4;
    hc.rank = 4;
    zo_backend *be = NULL;
    assert_int_equal(zo_backend_host_create(&hc, &be), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "rank 4");
    hc.world_size = 0;
    hc.rank = 0;
    assert_int_equal(zo_backend_host_create(&hc, &be), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "world_size 0");
    hc.version = 7;
    hc.world_size = 4;
    assert_int_equal(zo_backend_host_create(&hc, &be), ZO_ERR_VERSION);
    HAS_MSG(NULL, "version 7");
    hc = (zo_host_config)ZO_HOST_CONFIG_INIT;
    hc.world_size = 4;
    hc.rank = 1;
    assert_int_equal(zo_backend_host_create(&hc, &be), ZO_OK);
    cfg = (zo_config)ZO_CONFIG_INIT;
    cfg.world_size = 2;
    cfg.rank = 1;
    cfg.backend = be;
    assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_ERR_BACKEND);
    HAS_MSG(NULL, "world size 4");
    zo_backend_destroy(be);

    /* a NULL runtime is named too */
    zo_module_id m;
    assert_int_equal(zo_module_register(NULL, ZO_NO_MODULE, "x", 0, &m), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "zo_module_register: rt is NULL");

    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    model_step(&md);
    model_free(&md);
}

static void test_introspection_errors_have_messages(void **state) {
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_runtime *rt = md.rt;
    zo_trace_info ti;
    zo_param_info pi;
    zo_module_info mi;
    size_t n;
    HD_ERR(rt, zo_get_stats(rt, NULL), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "zo_get_stats: out is NULL");
    HD_ERR(rt, zo_get_trace_info(rt, 7, &ti), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "eval 7");
    HD_ERR(rt, zo_get_trace_info(rt, 0, NULL), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "out is NULL");
    HD_ERR(rt, zo_param_get_info(rt, md.w_fc, NULL), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "zo_param_get_info: out is NULL");
    HD_ERR(rt, zo_param_get_info(rt, 99, &pi), ZO_ERR_BAD_HANDLE);
    HAS_MSG(rt, "unknown parameter 99");
    HD_ERR(rt, zo_module_get_info(rt, md.fc, NULL), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "zo_module_get_info: out is NULL");
    HD_ERR(rt, zo_module_get_info(rt, 42, &mi), ZO_ERR_BAD_HANDLE);
    HAS_MSG(rt, "unknown module 42");
    HD_ERR(rt, zo_module_params(rt, md.fc, NULL, 5, &n), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "buf is NULL with cap 5");
    HD_ERR(rt, zo_module_params(rt, md.fc, NULL, 0, NULL), ZO_ERR_INVALID_ARG);
    HAS_MSG(rt, "n_out is NULL");
    HD_ERR(rt, zo_module_params(rt, 42, NULL, 0, &n), ZO_ERR_BAD_HANDLE);
    HAS_MSG(rt, "unknown module 42");
    assert_int_equal(zo_get_stats(NULL, NULL), ZO_ERR_INVALID_ARG);
    HAS_MSG(NULL, "zo_get_stats: rt is NULL");
    model_step(&md);
    model_free(&md);
}

/* ------------------------------------------------------------------ */
/* Hook orders PyTorch never produces                                   */
/* ------------------------------------------------------------------ */

/* Hook B of the root while the child's call is still the innermost open
 * call: refused, nothing happens, and the forward then ends in order. */
static void test_post_forward_not_innermost(void **state) {
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_runtime *rt = md.rt;
    hd_call r, f;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, md.root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, md.fc, ZO_CALL_GRAD, "1");
    HD_ERR(rt, zo_post_forward(rt, md.root), ZO_ERR_PROTOCOL);
    HAS_MSG(rt, "not the innermost open call");
    HD_EQ(HD_STATS(rt).forward_stack_depth, 2);
    HD_AVAILABLE(rt, md.w_root);
    HD_EXIT(rt, &f, "1");
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_OUT_GRAD(rt, f.out[0]);
    HD_GRAD_READY(rt, md.w_fc);
    HD_GRAD_READY(rt, md.w_root);
    HD_IN_GRAD(rt, f.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    model_step(&md);
    model_free(&md);
}

/* zo_release_all inside a forward does what DeepSpeed's
 * release_and_reset_all does (releases the open calls' parameters) but
 * leaves the forward's windows open: every input handle of that forward
 * works in its backward.  zo_reset_step inside a forward is refused. */
static void test_step_boundary_inside_forward(void **state) {
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_runtime *rt = md.rt;
    model_step(&md); /* a recorded trace */
    hd_call r, f;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, md.root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, md.fc, ZO_CALL_GRAD, "1");
    zo_trace_info before = HD_TRACE(rt);
    HD_ERR(rt, zo_reset_step(rt, 0), ZO_ERR_PROTOCOL);
    HAS_MSG(rt, "zo_reset_step");
    HD_EQ(HD_TRACE(rt).step_id, before.step_id);
    HD_OK(rt, zo_reset_step(rt, 1)); /* the eval coordinator is not in use */
    HD_RELEASE_ALL(rt);
    HD_RELEASED(rt, md.w_fc);
    HD_ACCESS(rt, md.fc, md.w_fc); /* gathered again on access */
    HD_EXIT(rt, &f, "1");
    HD_RELEASE_ALL(rt);
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_OUT_GRAD(rt, f.out[0]);
    HD_GRAD_READY(rt, md.w_fc);
    HD_GRAD_READY(rt, md.w_root);
    HD_IN_GRAD(rt, f.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    model_step(&md);
    model_free(&md);
}

/* A call unwound by an exception has its window discarded: a gradient
 * later arriving at one of its input nodes is reported as such, instead
 * of claiming the handle was already used. */
static void test_input_grad_after_window_closed(void **state) {
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_runtime *rt = md.rt;
    hd_call r, f;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, md.root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, md.fc, ZO_CALL_GRAD, "1");
    HD_OK(rt, zo_forward_abort(rt, md.root)); /* fc raised, the root caught it */
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_ERR(rt, zo_input_grad(rt, f.in[0]), ZO_ERR_BAD_HANDLE);
    HAS_MSG(rt, "window was closed");
    HD_GRAD_READY(rt, md.w_root);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    model_step(&md);
    model_free(&md);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_param_is_nomem),
        cmocka_unit_test(test_stale_grad_handle_after_many_reuses),
        cmocka_unit_test(test_handles_of_another_runtime),
        cmocka_unit_test(test_create_errors_have_messages),
        cmocka_unit_test(test_introspection_errors_have_messages),
        cmocka_unit_test(test_post_forward_not_innermost),
        cmocka_unit_test(test_step_boundary_inside_forward),
        cmocka_unit_test(test_input_grad_after_window_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
