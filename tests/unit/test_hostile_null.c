/*
 * test_hostile_null.c - every public function of libzoffload's headers
 * (include/zoffload.h, zoffload_backend.h, zoffload_testing.h) called with
 * each of its pointer arguments NULL, one at a time, the others valid.
 *
 * The table below has one row per (function, pointer parameter).  It is
 * checked against the headers themselves: test_table_covers_headers parses
 * every prototype of both headers and fails on a pointer parameter without
 * a row (a new function or parameter must get one) and on a row naming
 * something the headers no longer declare.
 *
 * Each row states what its header comment promises for that NULL:
 *   ST   returns this zo_status; when it is an error, the message
 *        (zo_last_error(rt) with a runtime, zo_last_error(NULL) without
 *        one, see zoffload.h) was set by this call (not the sentinel error
 *        provoked just before) and contains the needle;
 *   VAL  a function returning a value: this value (e.g. 0 for bad ids);
 *   PTR  a function returning a string: non-NULL;
 *   VOID accepted, nothing happens.
 * Afterwards the runtime passes zo_check_consistency and a normal training
 * step succeeds and ends with everything released.
 */
#include <ctype.h>
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
#include "zoffload_backend.h"

#ifndef ZO_SOURCE_DIR
#define ZO_SOURCE_DIR "."
#endif

/* ------------------------------------------------------------------ */
/* Fixture: a root -> fc model, a borrowed host backend and a world     */
/* ------------------------------------------------------------------ */

typedef struct fx {
    zo_runtime *rt;
    zo_backend *be;
    zo_host_world *world;
    zo_module_id root, fc;
    zo_param_id w_root, w_fc;
} fx;

static void fx_make(fx *f) {
    memset(f, 0, sizeof *f);
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 2;
    assert_int_equal(zo_backend_host_create(&hc, &f->be), ZO_OK);
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = 2;
    cfg.backend = f->be;
    cfg.param_persistence_threshold = 0;
    f->rt = HD_CREATE(cfg, NULL);
    f->root = HD_MODULE(f->rt, ZO_NO_MODULE, "model");
    f->fc = HD_MODULE(f->rt, f->root, "fc");
    f->w_root = HD_PARAM(f->rt, f->root, "bias", 1000);
    f->w_fc = HD_PARAM(f->rt, f->fc, "weight", 4000);
    assert_int_equal(zo_host_world_create(2, NULL, &f->world), ZO_OK);
}

/* one training step in PyTorch order; everything released at the end */
static void fx_step(fx *f) {
    zo_runtime *rt = f->rt;
    hd_call r, c;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, f->root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &c, f->fc, ZO_CALL_GRAD, "1");
    HD_ACCESS(rt, f->fc, f->w_fc);
    HD_EXIT(rt, &c, "1");
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_GRAD_READY(rt, f->w_root);
    HD_OUT_GRAD(rt, c.out[0]);
    HD_GRAD_READY(rt, f->w_fc);
    HD_IN_GRAD(rt, c.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
}

static void fx_free(fx *f) {
    HD_OK(f->rt, zo_runtime_destroy(f->rt));
    zo_backend_destroy(f->be);
    assert_int_equal(zo_host_world_destroy(f->world), ZO_OK);
}

/* ------------------------------------------------------------------ */
/* The table                                                            */
/* ------------------------------------------------------------------ */

enum { ST, VAL, PTR, VOID };
enum { CH_RT, CH_TLS }; /* where the message of an error goes */

typedef struct row {
    const char *func, *param;
    int kind;
    int64_t want;       /* ST: the status; VAL: the value */
    int channel;        /* ST errors: zo_last_error(rt) or zo_last_error(NULL) */
    const char *needle; /* ST errors: the message contains it (and the function's name) */
    int64_t (*call)(fx *f);
} row;

#define CASE(name, ...)                                                                                                \
    static int64_t name(fx *f) {                                                                                       \
        (void)f;                                                                                                       \
        __VA_ARGS__                                                                                                    \
    }

static zo_module_id g_mod;
static zo_param_id g_par;
static zo_graph g_graph;
static zo_grads_policy g_pol;
static zo_param_info g_pi;
static zo_module_info g_mi;
static zo_stats g_st;
static zo_trace_info g_ti;
static zo_param_id g_buf[4];
static size_t g_n;
static zo_runtime *g_rt;
static zo_backend *g_be;
static zo_host_world *g_world;
static const void *g_data;
static size_t g_bytes;
static zo_grad_handle g_h[2];
static const uint8_t g_rg[2] = {1, 1};

/* zoffload.h */
CASE(c_policy_name, return zo_policy_from_name(NULL, &g_pol);)
CASE(c_policy_out, return zo_policy_from_name("per-call", NULL);)
CASE(c_create_cfg, return zo_runtime_create(NULL, &g_rt);)
CASE(c_create_out, zo_config cfg = ZO_CONFIG_INIT; return zo_runtime_create(&cfg, NULL);)
CASE(c_destroy_rt, return zo_runtime_destroy(NULL);)
CASE(c_last_error_rt, return zo_last_error(NULL) != NULL;)
CASE(c_mreg_rt, return zo_module_register(NULL, ZO_NO_MODULE, "x", 0, &g_mod);)
CASE(c_mreg_name, return zo_module_register(f->rt, f->root, NULL, 0, &g_mod);)
CASE(c_mreg_out, return zo_module_register(f->rt, f->root, "x", 0, NULL);)
CASE(c_preg_rt, return zo_param_register(NULL, 0, "w", 4, 4, 0, &g_par);)
CASE(c_preg_name, return zo_param_register(f->rt, f->root, NULL, 4, 4, 0, &g_par);)
CASE(c_preg_out, return zo_param_register(f->rt, f->root, "w2", 4, 4, 0, NULL);)
CASE(c_use_rt, return zo_module_use_param(NULL, f->fc, f->w_root);)
CASE(c_fbegin_rt, return zo_forward_begin(NULL, ZO_FWD_ROOT, &g_graph);)
CASE(c_fbegin_out, return zo_forward_begin(f->rt, ZO_FWD_ROOT, NULL);)
CASE(c_fend_rt, return zo_forward_end(NULL, 1);)
CASE(c_pre_rt, return zo_pre_forward(NULL, f->root, ZO_CALL_GRAD);)
/* the array arguments of hooks D and C, inside a pass with the call open
 * (D) or just ended (C), so that nothing but the NULL is wrong */
static int64_t in_pass(fx *f, int which) {
    zo_graph g;
    if (zo_forward_begin(f->rt, ZO_FWD_ROOT, &g) || zo_pre_forward(f->rt, f->root, ZO_CALL_GRAD)) return 99;
    zo_status st = 99;
    if (which == 0) st = zo_track_inputs(NULL, f->root, 2, g_rg, g_h);
    if (which == 1) st = zo_track_inputs(f->rt, f->root, 2, NULL, g_h);
    if (which == 2) st = zo_track_inputs(f->rt, f->root, 2, g_rg, NULL);
    if (which >= 3) {
        if (zo_track_inputs(f->rt, f->root, 2, g_rg, g_h) || zo_post_forward(f->rt, f->root)) return 99;
        if (which == 3) st = zo_track_outputs(NULL, f->root, 2, g_rg, g_h);
        if (which == 4) st = zo_track_outputs(f->rt, f->root, 2, NULL, g_h);
        if (which == 5) st = zo_track_outputs(f->rt, f->root, 2, g_rg, NULL);
        if (which == 6) st = zo_post_forward(NULL, f->root);
    }
    /* clean up; calls that succeed leave the message channels alone */
    if (which < 3) {
        if (zo_forward_abort(f->rt, ZO_NO_MODULE)) return 98;
    } else {
        zo_status e = zo_forward_end(f->rt, g);
        if (e == ZO_OK) e = zo_graph_discard(f->rt, g);
        if (e != ZO_OK) return 97;
    }
    return st;
}
CASE(c_tin_rt, return in_pass(f, 0);)
CASE(c_tin_rg, return in_pass(f, 1);)
CASE(c_tin_out, return in_pass(f, 2);)
CASE(c_tout_rt, return in_pass(f, 3);)
CASE(c_tout_rg, return in_pass(f, 4);)
CASE(c_tout_out, return in_pass(f, 5);)
CASE(c_post_rt, return in_pass(f, 6);)
/* the paired entry points: refused before either hook runs, so the pass
 * is left as it was (nothing open) */
static int64_t paired(fx *f, int which) {
    zo_graph g;
    if (zo_forward_begin(f->rt, ZO_FWD_ROOT, &g)) return 99;
    zo_status st = 99;
    if (which == 0) st = zo_module_enter(NULL, f->root, ZO_CALL_GRAD, 2, g_rg, g_h);
    if (which == 1) st = zo_module_enter(f->rt, f->root, ZO_CALL_GRAD, 2, NULL, g_h);
    if (which == 2) st = zo_module_enter(f->rt, f->root, ZO_CALL_GRAD, 2, g_rg, NULL);
    if (which >= 3) {
        if (zo_module_enter(f->rt, f->root, ZO_CALL_GRAD, 2, g_rg, g_h)) return 99;
        if (which == 3) st = zo_module_exit(NULL, f->root, 2, g_rg, g_h);
        if (which == 4) st = zo_module_exit(f->rt, f->root, 2, NULL, g_h);
        if (which == 5) st = zo_module_exit(f->rt, f->root, 2, g_rg, NULL);
        /* refused: the call is still open, and still ends normally */
        if (zo_module_exit(f->rt, f->root, 2, g_rg, g_h) != ZO_OK) return 96;
    }
    zo_status e = zo_forward_end(f->rt, g); /* a pass with no call ends its graph */
    if (e == ZO_OK && which >= 3) e = zo_graph_discard(f->rt, g);
    if (e != ZO_OK) return 97;
    return st;
}
CASE(c_enter_rt, return paired(f, 0);)
CASE(c_enter_rg, return paired(f, 1);)
CASE(c_enter_out, return paired(f, 2);)
CASE(c_exit_rt, return paired(f, 3);)
CASE(c_exit_rg, return paired(f, 4);)
CASE(c_exit_out, return paired(f, 5);)
CASE(c_abort_rt, return zo_forward_abort(NULL, ZO_NO_MODULE);)
CASE(c_bbegin_rt, return zo_backward_begin(NULL, 1, 0);)
CASE(c_ograd_rt, return zo_output_grad(NULL, 1);)
CASE(c_igrad_rt, return zo_input_grad(NULL, 1);)
CASE(c_gready_rt, return zo_param_grad_ready(NULL, 0);)
CASE(c_bend_rt, return zo_backward_end(NULL, 1);)
CASE(c_discard_rt, return zo_graph_discard(NULL, 1);)
CASE(c_access_rt, return zo_param_access(NULL, 0, 0, &g_data, &g_bytes);)
CASE(c_access_data, return zo_param_access(f->rt, f->fc, f->w_fc, NULL, &g_bytes);)
CASE(c_access_bytes, zo_status s = zo_param_access(f->rt, f->fc, f->w_fc, &g_data, NULL);
     return s == ZO_OK && g_data == NULL ? 99 : s;)
CASE(c_relall_rt, return zo_release_all(NULL);)
CASE(c_reset_rt, return zo_reset_step(NULL, 0);)
CASE(c_pinfo_rt, return zo_param_get_info(NULL, 0, &g_pi);)
CASE(c_pinfo_out, return zo_param_get_info(f->rt, f->w_fc, NULL);)
CASE(c_active_rt, return zo_param_is_active_for(NULL, 0, 0);)
CASE(c_minfo_rt, return zo_module_get_info(NULL, 0, &g_mi);)
CASE(c_minfo_out, return zo_module_get_info(f->rt, f->fc, NULL);)
CASE(c_mparams_rt, return zo_module_params(NULL, 0, g_buf, 4, &g_n);)
CASE(c_mparams_buf, return zo_module_params(f->rt, f->fc, NULL, 4, &g_n);)
CASE(c_mparams_n, return zo_module_params(f->rt, f->fc, g_buf, 4, NULL);)
CASE(c_stats_rt, return zo_get_stats(NULL, &g_st);)
CASE(c_stats_out, return zo_get_stats(f->rt, NULL);)
CASE(c_trace_rt, return zo_get_trace_info(NULL, 0, &g_ti);)
CASE(c_trace_out, return zo_get_trace_info(f->rt, 0, NULL);)
CASE(c_consist_rt, return zo_check_consistency(NULL);)

/* zoffload_backend.h, zoffload_testing.h */
CASE(c_bdestroy_b, zo_backend_destroy(NULL); return 0;)
CASE(c_hcreate_cfg, return zo_backend_host_create(NULL, &g_be);)
CASE(c_hcreate_out, zo_host_config hc = ZO_HOST_CONFIG_INIT; return zo_backend_host_create(&hc, NULL);)
CASE(c_progress_b, return zo_host_progress(NULL);)
CASE(c_phys_b, return (int64_t)zo_host_physical_bytes(NULL, 12345);)
CASE(c_wcreate_alloc, zo_status s = zo_host_world_create(2, NULL, &g_world);
     if (s == ZO_OK) s = zo_host_world_destroy(g_world); return s;)
CASE(c_wcreate_out, return zo_host_world_create(2, NULL, NULL);)
CASE(c_wdestroy_w, return zo_host_world_destroy(NULL);)
CASE(c_wreport_w, char b[64]; return zo_host_world_report(NULL, b, sizeof b);)
CASE(c_wreport_buf, return zo_host_world_report(f->world, NULL, 64);)
CASE(c_wcoll_w, return (int64_t)zo_host_world_collectives(NULL, 0);)
CASE(c_wsched_w, zo_host_world_sched sc = ZO_HOST_WORLD_SCHED_INIT; return zo_host_world_set_sched(NULL, &sc);)
CASE(c_wsched_s, zo_status s = zo_host_world_create(2, NULL, &g_world);
     if (s == ZO_OK) s = zo_host_world_set_sched(g_world, NULL); if (s == ZO_OK) s = zo_host_world_destroy(g_world);
     return s;)
CASE(c_fault_b, zo_host_fault hf = {ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL, 1, 1, 0, 0};
     return zo_host_set_fault(NULL, &hf);)
CASE(c_fault_f, return zo_host_set_fault(f->be, NULL);)
CASE(c_fops_b, return (int64_t)zo_host_fault_ops(NULL, ZO_HOST_FAULT_GATHER);)
CASE(c_ffired_b, return (int64_t)zo_host_fault_fired(NULL);)
static float g_grad[8], g_shard[8];
static uint8_t g_xs[8], g_xr[16];
static zo_work *g_work;
static void *g_full;
CASE(c_padd_b, return zo_backend_param_add(NULL, 0, 8, 4, 4);)
CASE(c_prem_b, zo_backend_param_remove(NULL, 0); return 0;)
CASE(c_falloc_b, return zo_backend_full_alloc(NULL, f->w_fc, 64, &g_full);)
CASE(c_falloc_out, return zo_backend_full_alloc(f->be, f->w_fc, 64, NULL);)
CASE(c_ffree_b, zo_backend_full_free(NULL, 0, g_xs); return 0;)
CASE(c_ffree_buf, zo_backend_full_free(f->be, f->w_fc, NULL); return 0;)
CASE(c_ags_b, zo_gather_item it = {0}; return zo_backend_all_gather_start(NULL, &it, 1, &g_work);)
CASE(c_ags_items, return zo_backend_all_gather_start(f->be, NULL, 1, &g_work);)
CASE(c_ags_out, zo_gather_item it = {0}; return zo_backend_all_gather_start(f->be, &it, 1, NULL);)
CASE(c_wait_b, return zo_backend_wait(NULL, (zo_work *)g_xs);)
CASE(c_wait_w, return zo_backend_wait(f->be, NULL);)
CASE(c_query_b, int d; return zo_backend_query(NULL, (zo_work *)g_xs, &d);)
CASE(c_query_w, int d; return zo_backend_query(f->be, NULL, &d);)
CASE(c_query_done, return zo_backend_query(f->be, (zo_work *)g_xs, NULL);)
CASE(c_wfree_b, zo_backend_work_free(NULL, (zo_work *)g_xs); return 0;)
CASE(c_wfree_w, zo_backend_work_free(f->be, NULL); return 0;)
CASE(c_rs_b, return zo_backend_reduce_scatter(NULL, f->w_fc, g_grad, g_shard, 8, 4, ZO_REDUCE_SUM);)
CASE(c_rs_grad, return zo_backend_reduce_scatter(f->be, f->w_fc, NULL, g_shard, 8, 4, ZO_REDUCE_SUM);)
CASE(c_rs_out, return zo_backend_reduce_scatter(f->be, f->w_fc, g_grad, NULL, 8, 4, ZO_REDUCE_SUM);)
CASE(c_pref_b, zo_backend_prefetch(NULL, 0); return 0;)
CASE(c_xchg_b, return zo_backend_exchange(NULL, g_xs, 8, g_xr);)
CASE(c_xchg_send, return zo_backend_exchange(f->be, NULL, 8, g_xr);)
CASE(c_xchg_recv, return zo_backend_exchange(f->be, g_xs, 8, NULL);)
CASE(c_blast_b, return zo_backend_last_error(NULL) != NULL;)
static const zo_wrap_hooks g_hooks = {0};
CASE(c_wrap_inner, return zo_backend_wrap(NULL, &g_hooks, &g_be);)
CASE(c_wrap_hooks, return zo_backend_wrap(f->be, NULL, &g_be);)
CASE(c_wrap_out, return zo_backend_wrap(f->be, &g_hooks, NULL);)
CASE(c_wuser_b, return zo_backend_wrap_user(NULL) == NULL;)

#define E ZO_ERR_INVALID_ARG
static const row k_rows[] = {
    /* zoffload.h */
    {"zo_policy_from_name", "name", ST, E, CH_TLS, "name is NULL", c_policy_name},
    {"zo_policy_from_name", "out", ST, E, CH_TLS, "out is NULL", c_policy_out},
    {"zo_runtime_create", "cfg", ST, E, CH_TLS, "cfg is NULL", c_create_cfg},
    {"zo_runtime_create", "out", ST, E, CH_TLS, "out is NULL", c_create_out},
    {"zo_runtime_destroy", "rt", ST, ZO_OK, CH_TLS, NULL, c_destroy_rt},
    {"zo_last_error", "rt", VAL, 1, CH_TLS, NULL, c_last_error_rt},
    {"zo_module_register", "rt", ST, E, CH_TLS, "rt is NULL", c_mreg_rt},
    {"zo_module_register", "name", ST, ZO_OK, CH_RT, NULL, c_mreg_name},
    {"zo_module_register", "out", ST, E, CH_RT, "out is NULL", c_mreg_out},
    {"zo_param_register", "rt", ST, E, CH_TLS, "rt is NULL", c_preg_rt},
    {"zo_param_register", "name", ST, ZO_OK, CH_RT, NULL, c_preg_name},
    {"zo_param_register", "out", ST, E, CH_RT, "out is NULL", c_preg_out},
    {"zo_module_use_param", "rt", ST, E, CH_TLS, "rt is NULL", c_use_rt},
    {"zo_forward_begin", "rt", ST, E, CH_TLS, "rt is NULL", c_fbegin_rt},
    {"zo_forward_begin", "out_graph", ST, E, CH_RT, "out_graph is NULL", c_fbegin_out},
    {"zo_forward_end", "rt", ST, E, CH_TLS, "rt is NULL", c_fend_rt},
    {"zo_pre_forward", "rt", ST, E, CH_TLS, "rt is NULL", c_pre_rt},
    {"zo_track_inputs", "rt", ST, E, CH_TLS, "rt is NULL", c_tin_rt},
    {"zo_track_inputs", "requires_grad", ST, E, CH_RT, "NULL", c_tin_rg},
    {"zo_track_inputs", "out_handles", ST, E, CH_RT, "NULL", c_tin_out},
    {"zo_post_forward", "rt", ST, E, CH_TLS, "rt is NULL", c_post_rt},
    {"zo_track_outputs", "rt", ST, E, CH_TLS, "rt is NULL", c_tout_rt},
    {"zo_track_outputs", "requires_grad", ST, E, CH_RT, "NULL", c_tout_rg},
    {"zo_track_outputs", "out_handles", ST, E, CH_RT, "NULL", c_tout_out},
    {"zo_module_enter", "rt", ST, E, CH_TLS, "rt is NULL", c_enter_rt},
    {"zo_module_enter", "requires_grad", ST, E, CH_RT, "NULL arrays", c_enter_rg},
    {"zo_module_enter", "out_handles", ST, E, CH_RT, "NULL arrays", c_enter_out},
    {"zo_module_exit", "rt", ST, E, CH_TLS, "rt is NULL", c_exit_rt},
    {"zo_module_exit", "requires_grad", ST, E, CH_RT, "NULL arrays", c_exit_rg},
    {"zo_module_exit", "out_handles", ST, E, CH_RT, "NULL arrays", c_exit_out},
    {"zo_forward_abort", "rt", ST, E, CH_TLS, "rt is NULL", c_abort_rt},
    {"zo_backward_begin", "rt", ST, E, CH_TLS, "rt is NULL", c_bbegin_rt},
    {"zo_output_grad", "rt", ST, E, CH_TLS, "rt is NULL", c_ograd_rt},
    {"zo_input_grad", "rt", ST, E, CH_TLS, "rt is NULL", c_igrad_rt},
    {"zo_param_grad_ready", "rt", ST, E, CH_TLS, "rt is NULL", c_gready_rt},
    {"zo_backward_end", "rt", ST, E, CH_TLS, "rt is NULL", c_bend_rt},
    {"zo_graph_discard", "rt", ST, E, CH_TLS, "rt is NULL", c_discard_rt},
    {"zo_param_access", "rt", ST, E, CH_TLS, "rt is NULL", c_access_rt},
    {"zo_param_access", "out_data", ST, E, CH_RT, "out_data is NULL", c_access_data},
    {"zo_param_access", "out_bytes", ST, ZO_OK, CH_RT, NULL, c_access_bytes},
    {"zo_release_all", "rt", ST, E, CH_TLS, "rt is NULL", c_relall_rt},
    {"zo_reset_step", "rt", ST, E, CH_TLS, "rt is NULL", c_reset_rt},
    {"zo_param_get_info", "rt", ST, E, CH_TLS, "rt is NULL", c_pinfo_rt},
    {"zo_param_get_info", "out", ST, E, CH_RT, "out is NULL", c_pinfo_out},
    {"zo_param_is_active_for", "rt", VAL, 0, CH_TLS, NULL, c_active_rt},
    {"zo_module_get_info", "rt", ST, E, CH_TLS, "rt is NULL", c_minfo_rt},
    {"zo_module_get_info", "out", ST, E, CH_RT, "out is NULL", c_minfo_out},
    {"zo_module_params", "rt", ST, E, CH_TLS, "rt is NULL", c_mparams_rt},
    {"zo_module_params", "buf", ST, E, CH_RT, "buf is NULL", c_mparams_buf},
    {"zo_module_params", "n_out", ST, E, CH_RT, "n_out is NULL", c_mparams_n},
    {"zo_get_stats", "rt", ST, E, CH_TLS, "rt is NULL", c_stats_rt},
    {"zo_get_stats", "out", ST, E, CH_RT, "out is NULL", c_stats_out},
    {"zo_get_trace_info", "rt", ST, E, CH_TLS, "rt is NULL", c_trace_rt},
    {"zo_get_trace_info", "out", ST, E, CH_RT, "out is NULL", c_trace_out},
    {"zo_check_consistency", "rt", ST, E, CH_TLS, "rt is NULL", c_consist_rt},
    /* zoffload_backend.h, zoffload_testing.h */
    {"zo_backend_destroy", "b", VOID, 0, CH_TLS, NULL, c_bdestroy_b},
    {"zo_backend_host_create", "cfg", ST, E, CH_TLS, "cfg is NULL", c_hcreate_cfg},
    {"zo_backend_host_create", "out", ST, E, CH_TLS, "out is NULL", c_hcreate_out},
    {"zo_host_progress", "b", ST, E, CH_TLS, "b is NULL", c_progress_b},
    {"zo_host_physical_bytes", "b", VAL, 12345, CH_TLS, NULL, c_phys_b},
    {"zo_host_world_create", "allocator", ST, ZO_OK, CH_TLS, NULL, c_wcreate_alloc},
    {"zo_host_world_create", "out", ST, E, CH_TLS, "out is NULL", c_wcreate_out},
    {"zo_host_world_destroy", "w", ST, ZO_OK, CH_TLS, NULL, c_wdestroy_w},
    {"zo_host_world_report", "w", ST, E, CH_TLS, "w is NULL", c_wreport_w},
    {"zo_host_world_report", "buf", ST, ZO_OK, CH_TLS, NULL, c_wreport_buf},
    {"zo_host_world_collectives", "w", VAL, 0, CH_TLS, NULL, c_wcoll_w},
    {"zo_host_world_set_sched", "w", ST, E, CH_TLS, "w is NULL", c_wsched_w},
    {"zo_host_world_set_sched", "sched", ST, ZO_OK, CH_TLS, NULL, c_wsched_s},
    {"zo_host_set_fault", "b", ST, E, CH_TLS, "b is NULL", c_fault_b},
    {"zo_host_set_fault", "f", ST, ZO_OK, CH_TLS, NULL, c_fault_f},
    {"zo_host_fault_ops", "b", VAL, 0, CH_TLS, NULL, c_fops_b},
    {"zo_host_fault_fired", "b", VAL, 0, CH_TLS, NULL, c_ffired_b},
    {"zo_backend_param_add", "b", ST, E, CH_TLS, "NULL backend", c_padd_b},
    {"zo_backend_param_remove", "b", VOID, 0, CH_TLS, NULL, c_prem_b},
    {"zo_backend_full_alloc", "b", ST, E, CH_TLS, "NULL backend", c_falloc_b},
    {"zo_backend_full_alloc", "out", ST, E, CH_TLS, "NULL out", c_falloc_out},
    {"zo_backend_full_free", "b", VOID, 0, CH_TLS, NULL, c_ffree_b},
    {"zo_backend_full_free", "buf", VOID, 0, CH_TLS, NULL, c_ffree_buf},
    {"zo_backend_all_gather_start", "b", ST, E, CH_TLS, "NULL backend", c_ags_b},
    {"zo_backend_all_gather_start", "items", ST, E, CH_TLS, "NULL items", c_ags_items},
    {"zo_backend_all_gather_start", "out", ST, E, CH_TLS, "NULL out", c_ags_out},
    {"zo_backend_wait", "b", ST, E, CH_TLS, "NULL backend", c_wait_b},
    {"zo_backend_wait", "w", ST, E, CH_TLS, "NULL", c_wait_w},
    {"zo_backend_query", "b", ST, E, CH_TLS, "NULL backend", c_query_b},
    {"zo_backend_query", "w", ST, E, CH_TLS, "NULL", c_query_w},
    {"zo_backend_query", "done", ST, E, CH_TLS, "NULL done", c_query_done},
    {"zo_backend_work_free", "b", VOID, 0, CH_TLS, NULL, c_wfree_b},
    {"zo_backend_work_free", "w", VOID, 0, CH_TLS, NULL, c_wfree_w},
    {"zo_backend_reduce_scatter", "b", ST, E, CH_TLS, "NULL backend", c_rs_b},
    {"zo_backend_reduce_scatter", "full_grad", ST, E, CH_TLS, "NULL buffer", c_rs_grad},
    {"zo_backend_reduce_scatter", "shard_out", ST, E, CH_TLS, "NULL buffer", c_rs_out},
    {"zo_backend_prefetch", "b", VOID, 0, CH_TLS, NULL, c_pref_b},
    {"zo_backend_exchange", "b", ST, E, CH_TLS, "NULL backend", c_xchg_b},
    {"zo_backend_exchange", "send", ST, E, CH_TLS, "NULL buffer", c_xchg_send},
    {"zo_backend_exchange", "recv", ST, E, CH_TLS, "NULL buffer", c_xchg_recv},
    {"zo_backend_last_error", "b", VAL, 1, CH_TLS, NULL, c_blast_b},
    {"zo_backend_wrap", "inner", ST, E, CH_TLS, "inner is NULL", c_wrap_inner},
    {"zo_backend_wrap", "hooks", ST, E, CH_TLS, "hooks is NULL", c_wrap_hooks},
    {"zo_backend_wrap", "out", ST, E, CH_TLS, "out is NULL", c_wrap_out},
    {"zo_backend_wrap_user", "b", VAL, 1, CH_TLS, NULL, c_wuser_b},
};
#undef E
#define N_ROWS (sizeof k_rows / sizeof k_rows[0])

/* ------------------------------------------------------------------ */
/* The header parser                                                    */
/* ------------------------------------------------------------------ */

typedef struct proto_param {
    char func[64], param[64];
} proto_param;

static char *read_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) fail_msg("cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, fp), (size_t)n);
    s[n] = 0;
    fclose(fp);
    return s;
}

/* Comments, preprocessor lines (with continuations) and `extern "C" {`
 * become spaces. */
static void strip(char *s) {
    int bol = 1;
    for (char *p = s; *p;) {
        if (p[0] == '/' && p[1] == '*') {
            char *e = strstr(p + 2, "*/");
            char *end = e ? e + 2 : p + strlen(p);
            while (p < end) *p++ = ' ';
            continue;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') *p++ = ' ';
            continue;
        }
        if (bol && *p == '#') {
            while (*p && !(*p == '\n' && p[-1] != '\\')) *p++ = ' ';
            continue;
        }
        if (!strncmp(p, "extern \"C\"", 10)) {
            memset(p, ' ', 10);
            char *b = strchr(p, '{');
            if (b) *b = ' ';
            continue;
        }
        bol = *p == '\n' || (bol && isspace((unsigned char)*p));
        p++;
    }
}

/* The pointer parameters of every function declared at file scope. */
static size_t parse_header(const char *path, proto_param *out, size_t cap, size_t *n_funcs) {
    char *s = read_file(path);
    strip(s);
    size_t n = 0;
    int depth = 0;
    char *stmt = s;
    for (char *p = s; *p; p++) {
        if (*p == '{')
            depth++;
        else if (*p == '}') {
            if (depth > 0)
                depth--;
            else
                *p = ' '; /* the brace closing extern "C" */
            if (depth == 0) stmt = p + 1;
        } else if (*p == ';' && depth == 0) {
            *p = 0;
            char *t = stmt;
            stmt = p + 1;
            while (isspace((unsigned char)*t)) t++;
            if (!strncmp(t, "typedef", 7)) continue;
            char *lp = strchr(t, '(');
            if (!lp) continue;
            char *ne = lp;
            while (ne > t && isspace((unsigned char)ne[-1])) ne--;
            char *nb = ne;
            while (nb > t && (isalnum((unsigned char)nb[-1]) || nb[-1] == '_')) nb--;
            char fname[64];
            snprintf(fname, sizeof fname, "%.*s", (int)(ne - nb), nb);
            if (strncmp(fname, "zo_", 3)) continue;
            (*n_funcs)++;
            char *rp = strrchr(lp, ')');
            assert_non_null(rp);
            *rp = 0;
            /* split the parameter list on commas */
            for (char *a = lp + 1; a && *a;) {
                char *comma = strchr(a, ',');
                if (comma) *comma = 0;
                if (strchr(a, '*')) {
                    char *e = a + strlen(a);
                    while (e > a && !(isalnum((unsigned char)e[-1]) || e[-1] == '_')) e--;
                    char *b = e;
                    while (b > a && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
                    assert_true(n < cap);
                    snprintf(out[n].func, sizeof out[n].func, "%s", fname);
                    snprintf(out[n].param, sizeof out[n].param, "%.*s", (int)(e - b), b);
                    n++;
                }
                a = comma ? comma + 1 : NULL;
            }
        }
    }
    free(s);
    return n;
}

static const char *const k_headers[] = {"include/zoffload.h", "include/zoffload_backend.h",
                                        "include/zoffload_testing.h"};

static void test_table_covers_headers(void **state) {
    (void)state;
    proto_param pp[256];
    size_t n = 0, funcs = 0;
    for (size_t h = 0; h < sizeof k_headers / sizeof k_headers[0]; h++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", ZO_SOURCE_DIR, k_headers[h]);
        n += parse_header(path, pp + n, 256 - n, &funcs);
    }
    /* the parser sees the functions it must (a broken parser finding
     * nothing would make this test vacuous) */
    assert_true(funcs >= 45);
    assert_true(n >= (size_t)N_ROWS - 2);
    int missing = 0;
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (size_t k = 0; k < N_ROWS; k++)
            found |= !strcmp(k_rows[k].func, pp[i].func) && !strcmp(k_rows[k].param, pp[i].param);
        if (!found) {
            print_error("no row for %s(%s = NULL): add one to k_rows\n", pp[i].func, pp[i].param);
            missing++;
        }
    }
    for (size_t k = 0; k < N_ROWS; k++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= !strcmp(k_rows[k].func, pp[i].func) && !strcmp(k_rows[k].param, pp[i].param);
        if (!found) {
            print_error("row %s(%s) names no pointer parameter of the headers\n", k_rows[k].func, k_rows[k].param);
            missing++;
        }
    }
    print_message("%zu functions, %zu pointer parameters, %zu rows\n", funcs, n, (size_t)N_ROWS);
    assert_int_equal(missing, 0);
}

/* Provokes a known error on each channel, so that a message afterwards
 * can be told apart from one left by an earlier call. */
static void arm_sentinels(fx *f) {
    zo_trace_info ti;
    assert_int_equal(zo_get_trace_info(f->rt, 987654321, &ti), ZO_ERR_INVALID_ARG);
    assert_non_null(strstr(zo_last_error(f->rt), "987654321"));
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.version = 987654321;
    zo_runtime *x = NULL;
    assert_int_equal(zo_runtime_create(&cfg, &x), ZO_ERR_VERSION);
    assert_non_null(strstr(zo_last_error(NULL), "987654321"));
}

static int run_row(const row *r) {
    fx f;
    fx_make(&f);
    arm_sentinels(&f);
    int64_t got = r->call(&f);
    const char *where = r->channel == CH_RT ? "zo_last_error(rt)" : "zo_last_error(NULL)";
    const char *msg = r->channel == CH_RT ? zo_last_error(f.rt) : zo_last_error(NULL);
    int bad = 0;
    switch (r->kind) {
    case ST:
        if (got != r->want) {
            print_error("%s(%s = NULL) returned %lld (%s), expected %lld (%s); %s: \"%s\"\n", r->func, r->param,
                        (long long)got, zo_strerror((zo_status)got), (long long)r->want,
                        zo_strerror((zo_status)r->want), where, msg);
            bad = 1;
        } else if (r->want != ZO_OK) {
            if (!msg || !*msg || strstr(msg, "987654321") || !strstr(msg, r->func) || !strstr(msg, r->needle)) {
                print_error("%s(%s = NULL) returned %s but %s is \"%s\" (wants a message of this call naming "
                            "\"%s\" and \"%s\")\n",
                            r->func, r->param, zo_strerror((zo_status)got), where, msg ? msg : "(null)", r->func,
                            r->needle);
                bad = 1;
            }
        }
        break;
    case VAL:
        if (got != r->want) {
            print_error("%s(%s = NULL) returned %lld, expected %lld\n", r->func, r->param, (long long)got,
                        (long long)r->want);
            bad = 1;
        }
        break;
    default: break;
    }
    HD_CONSISTENT(f.rt);
    fx_step(&f);
    fx_free(&f);
    return bad;
}

static void test_every_pointer_argument_null(void **state) {
    (void)state;
    int bad = 0;
    for (size_t k = 0; k < N_ROWS; k++) bad += run_row(&k_rows[k]);
    print_message("%zu (function, NULL argument) cases, %d failed\n", (size_t)N_ROWS, bad);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_covers_headers),
        cmocka_unit_test(test_every_pointer_argument_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
