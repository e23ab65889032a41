/*
 * test_hostile_protocol.c - every hook entry point in every protocol state.
 *
 * A model root -> fc (one parameter each) is driven into one of the
 * states below, then one entry point is called with the arguments a
 * framework in that state would have at hand (the pass's graph, the root
 * call's grad handles, fc's parameter).  The status must be exactly the
 * one in k_expect, the cell's contract from include/zoffload.h: ZO_OK
 * where PyTorch can produce the order (DeepSpeed's mapping of it),
 * ZO_ERR_PROTOCOL where it cannot, ZO_ERR_BAD_HANDLE for a graph or handle
 * that is gone.  A failing call must leave a message of its own in
 * zo_last_error() (a sentinel error is provoked before each call), and
 * the runtime consistent.  Then everything still open is unwound the way
 * a framework would (abort, end backward, discard, optimizer step) and a
 * normal training step must succeed and release everything.
 *
 * Two policies: per-call (test_hostile_protocol.inc) and DeepSpeed upstream,
 * reset-on-forward (test_hostile_protocol_rof.inc), whose differences are
 * the header's: its grad handles name a module's counter (a handle of an
 * earlier step is not stale, only early: ZO_ERR_PROTOCOL outside a
 * backward), parameters are gathered on access only while a forward call
 * is open (else ZO_ERR_NOT_AVAILABLE), and one coordinator serves train
 * and eval (zo_reset_step(eval) mid-forward is ZO_ERR_PROTOCOL too).
 *
 * ZO_PRINT_MATRIX=1 prints the observed matrices in the tables' layout.
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

typedef struct ctx {
    zo_runtime *rt;
    zo_module_id root, fc;
    zo_param_id w_root, w_fc;
    zo_graph g, g2; /* the pass; a recompute's pass inside its backward */
    hd_call r, f;   /* the root's and fc's calls in g */
    int in_bwd;     /* g's backward running */
} ctx;

static zo_grads_policy g_policy = ZO_GRADS_PER_CALL;

static void step(ctx *c) {
    zo_runtime *rt = c->rt;
    hd_call r, f;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, c->root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, c->fc, ZO_CALL_GRAD, "1");
    HD_ACCESS(rt, c->fc, c->w_fc);
    HD_EXIT(rt, &f, "1");
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_GRAD_READY(rt, c->w_root);
    HD_OUT_GRAD(rt, f.out[0]);
    HD_GRAD_READY(rt, c->w_fc);
    HD_IN_GRAD(rt, f.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
    /* the framework keeps the last step's objects: stale in later states */
    c->g = g;
    c->r = r;
    c->f = f;
}

static void make(ctx *c) {
    memset(c, 0, sizeof *c);
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.param_persistence_threshold = 0;
    cfg.grads_policy = g_policy;
    c->rt = HD_CREATE(cfg, NULL);
    c->root = HD_MODULE(c->rt, ZO_NO_MODULE, "model");
    c->fc = HD_MODULE(c->rt, c->root, "fc");
    c->w_root = HD_PARAM(c->rt, c->root, "bias", 1000);
    c->w_fc = HD_PARAM(c->rt, c->fc, "weight", 4000);
    step(c); /* a recorded trace, and stale objects */
}

/* ------------------------------------------------------------------ */
/* States                                                               */
/* ------------------------------------------------------------------ */

static void st_idle(ctx *c) { (void)c; }
static void st_fwd_nocall(ctx *c) { c->g = HD_FWD_BEGIN(c->rt); }
static void st_fwd_root_open(ctx *c) {
    c->g = HD_FWD_BEGIN(c->rt);
    HD_ENTER(c->rt, &c->r, c->root, ZO_CALL_GRAD, "1");
}
/* root's pre-forward ran, hook D not yet */
static void st_fwd_root_pre(ctx *c) {
    c->g = HD_FWD_BEGIN(c->rt);
    HD_OK(c->rt, zo_pre_forward(c->rt, c->root, ZO_CALL_GRAD));
    memset(&c->r, 0, sizeof c->r);
}
static void st_fwd_nested(ctx *c) {
    st_fwd_root_open(c);
    HD_ENTER(c->rt, &c->f, c->fc, ZO_CALL_GRAD, "1");
}
/* root's call ended (hooks B and C), the pass still open */
static void st_fwd_call_ended(ctx *c) {
    st_fwd_root_open(c);
    HD_EXIT(c->rt, &c->r, "1");
}
/* hook B ran, hook C not yet */
static void st_fwd_post_no_outputs(ctx *c) {
    st_fwd_root_open(c);
    HD_OK(c->rt, zo_post_forward(c->rt, c->root));
}
static void st_fwd_ended(ctx *c) {
    st_fwd_call_ended(c);
    HD_FWD_END(c->rt, c->g);
}
static void st_bwd(ctx *c) {
    st_fwd_ended(c);
    HD_BWD_BEGIN(c->rt, c->g);
    c->in_bwd = 1;
}
/* inside the backward, a reentrant checkpoint recompute of fc with its
 * call open */
static void st_bwd_recompute(ctx *c) {
    st_bwd(c);
    HD_OUT_GRAD(c->rt, c->r.out[0]);
    c->g2 = HD_FWD_BEGIN_FLAGS(c->rt, 0);
    hd_call x;
    HD_ENTER(c->rt, &x, c->fc, ZO_CALL_GRAD, "1");
}
static void st_bwd_ended(ctx *c) {
    st_bwd(c);
    HD_OUT_GRAD(c->rt, c->r.out[0]);
    HD_GRAD_READY(c->rt, c->w_root);
    HD_IN_GRAD(c->rt, c->r.in[0]);
    HD_BWD_END(c->rt, c->g);
    c->in_bwd = 0;
}
static void st_after_abort(ctx *c) {
    st_fwd_nested(c);
    HD_OK(c->rt, zo_forward_abort(c->rt, ZO_NO_MODULE));
}
/* fc raised inside root, root caught it: root's call still open */
static void st_after_caught(ctx *c) {
    st_fwd_nested(c);
    HD_OK(c->rt, zo_forward_abort(c->rt, c->root));
}
static void st_after_reset(ctx *c) { HD_OK(c->rt, zo_reset_step(c->rt, 0)); }
static void st_after_release_mid_fwd(ctx *c) {
    st_fwd_nested(c);
    HD_RELEASE_ALL(c->rt);
}
static void st_after_discard(ctx *c) {
    st_fwd_ended(c);
    HD_OK(c->rt, zo_graph_discard(c->rt, c->g));
}

typedef struct state {
    const char *name;
    void (*make)(ctx *c);
} state;

static const state k_states[] = {
    {"idle", st_idle},
    {"fwd_nocall", st_fwd_nocall},
    {"fwd_root_pre", st_fwd_root_pre},
    {"fwd_root_open", st_fwd_root_open},
    {"fwd_nested", st_fwd_nested},
    {"fwd_post_no_out", st_fwd_post_no_outputs},
    {"fwd_call_ended", st_fwd_call_ended},
    {"fwd_ended", st_fwd_ended},
    {"bwd", st_bwd},
    {"bwd_recompute", st_bwd_recompute},
    {"bwd_ended", st_bwd_ended},
    {"after_abort", st_after_abort},
    {"after_caught", st_after_caught},
    {"after_reset", st_after_reset},
    {"rel_mid_fwd", st_after_release_mid_fwd},
    {"after_discard", st_after_discard},
};
#define N_STATES (sizeof k_states / sizeof k_states[0])

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

static const uint8_t k_one[1] = {1};

static zo_status e_fwd_begin(ctx *c) {
    zo_graph g;
    zo_status s = zo_forward_begin(c->rt, ZO_FWD_ROOT, &g);
    if (s == ZO_OK) c->g2 = g; /* ends in the clean-up */
    return s;
}
static zo_status e_fwd_end(ctx *c) { return zo_forward_end(c->rt, c->g); }
static zo_status e_pre_root(ctx *c) { return zo_pre_forward(c->rt, c->root, ZO_CALL_GRAD); }
static zo_status e_pre_fc(ctx *c) { return zo_pre_forward(c->rt, c->fc, ZO_CALL_GRAD); }
static zo_status e_track_in(ctx *c) {
    zo_grad_handle h[1];
    return zo_track_inputs(c->rt, c->root, 1, k_one, h);
}
static zo_status e_post_root(ctx *c) { return zo_post_forward(c->rt, c->root); }
static zo_status e_post_fc(ctx *c) { return zo_post_forward(c->rt, c->fc); }
static zo_status e_track_out(ctx *c) {
    zo_grad_handle h[1];
    return zo_track_outputs(c->rt, c->root, 1, k_one, h);
}
static zo_status e_abort(ctx *c) { return zo_forward_abort(c->rt, ZO_NO_MODULE); }
static zo_status e_abort_root(ctx *c) { return zo_forward_abort(c->rt, c->root); }
static zo_status e_bwd_begin(ctx *c) {
    zo_status s = zo_backward_begin(c->rt, c->g, 0);
    if (s == ZO_OK) c->in_bwd = 1;
    return s;
}
static zo_status e_out_grad(ctx *c) { return zo_output_grad(c->rt, c->r.out[0]); }
static zo_status e_in_grad(ctx *c) { return zo_input_grad(c->rt, c->r.in[0]); }
static zo_status e_grad_ready(ctx *c) { return zo_param_grad_ready(c->rt, c->w_fc); }
static zo_status e_bwd_end(ctx *c) {
    zo_status s = zo_backward_end(c->rt, c->g);
    if (s == ZO_OK) c->in_bwd = 0;
    return s;
}
static zo_status e_discard(ctx *c) { return zo_graph_discard(c->rt, c->g); }
static zo_status e_release_all(ctx *c) { return zo_release_all(c->rt); }
static zo_status e_reset(ctx *c) { return zo_reset_step(c->rt, 0); }
static zo_status e_reset_eval(ctx *c) { return zo_reset_step(c->rt, 1); }
static zo_status e_access(ctx *c) {
    const void *d;
    return zo_param_access(c->rt, c->fc, c->w_fc, &d, NULL);
}

typedef struct entry {
    const char *name;
    zo_status (*call)(ctx *c);
} entry;

static const entry k_entries[] = {
    {"forward_begin", e_fwd_begin},     {"forward_end", e_fwd_end},
    {"pre_forward(root)", e_pre_root},  {"pre_forward(fc)", e_pre_fc},
    {"track_inputs", e_track_in},       {"post_forward(root)", e_post_root},
    {"post_forward(fc)", e_post_fc},    {"track_outputs", e_track_out},
    {"forward_abort(none)", e_abort},   {"forward_abort(root)", e_abort_root},
    {"backward_begin", e_bwd_begin},    {"output_grad", e_out_grad},
    {"input_grad", e_in_grad},          {"param_grad_ready", e_grad_ready},
    {"backward_end", e_bwd_end},        {"graph_discard", e_discard},
    {"release_all", e_release_all},     {"reset_step(train)", e_reset},
    {"reset_step(eval)", e_reset_eval}, {"param_access", e_access},
};
#define N_ENTRIES (sizeof k_entries / sizeof k_entries[0])

/* ------------------------------------------------------------------ */
/* Expected statuses: one row per state, one column per entry point     */
/* ------------------------------------------------------------------ */

#define OK ZO_OK
#define PR ZO_ERR_PROTOCOL
#define BH ZO_ERR_BAD_HANDLE
#define IA ZO_ERR_INVALID_ARG
#define NA ZO_ERR_NOT_AVAILABLE
/* clang-format off */
static const zo_status k_expect_per_call[N_STATES][N_ENTRIES] = {
#include "test_hostile_protocol.inc"
};
/* DeepSpeed upstream (reset-on-forward, DeepSpeed 0.19 with its optimizer):
 * the same except where DeepSpeed's hooks act on module counters */
static const zo_status k_expect_rof[N_STATES][N_ENTRIES] = {
#include "test_hostile_protocol_rof.inc"
};
/* clang-format on */

/* ------------------------------------------------------------------ */

/* Unwind whatever is open, as a framework would after the call. */
static void unwind(ctx *c) {
    zo_runtime *rt = c->rt;
    for (int k = 0; k < 8 && zo_get_stats(rt, &(zo_stats){0}) == ZO_OK; k++) {
        zo_stats st = HD_STATS(rt);
        if (st.forward_stack_depth == 0) break;
        HD_OK(rt, zo_forward_abort(rt, ZO_NO_MODULE));
    }
    /* a recompute pass with no call open ends; then the backward */
    if (c->g2) (void)zo_forward_end(rt, c->g2), (void)zo_graph_discard(rt, c->g2);
    if (c->in_bwd) HD_OK(rt, zo_backward_end(rt, c->g));
    /* a pass still being built (no call open): end it; a graph alive: discard */
    (void)zo_forward_end(rt, c->g);
    (void)zo_graph_discard(rt, c->g);
    HD_RELEASE_ALL(rt);
    HD_EQ(HD_STATS(rt).forward_stack_depth, 0);
    HD_ALL_RELEASED(rt);
}

static const char *code(zo_status s) {
    switch (s) {
    case ZO_OK: return "OK";
    case ZO_ERR_PROTOCOL: return "PR";
    case ZO_ERR_BAD_HANDLE: return "BH";
    case ZO_ERR_INVALID_ARG: return "IA";
    case ZO_ERR_NOT_AVAILABLE: return "NA";
    default: return "??";
    }
}

static void run_matrix(zo_grads_policy policy, const zo_status (*k_expect)[N_ENTRIES]) {
    g_policy = policy;
    int print = getenv("ZO_PRINT_MATRIX") && *getenv("ZO_PRINT_MATRIX") == '1';
    int bad = 0, cases = 0;
    zo_status got[N_STATES][N_ENTRIES];
    for (size_t s = 0; s < N_STATES; s++) {
        for (size_t e = 0; e < N_ENTRIES; e++) {
            ctx c;
            make(&c);
            k_states[s].make(&c);
            /* a sentinel error, so that a failing call's message is its own */
            zo_trace_info ti;
            HD_ERR(c.rt, zo_get_trace_info(c.rt, 987654321, &ti), ZO_ERR_INVALID_ARG);
            zo_status st = k_entries[e].call(&c);
            got[s][e] = st;
            cases++;
            const char *msg = zo_last_error(c.rt);
            if (st != k_expect[s][e] && !print) {
                print_error("state %s, %s: returned %d (%s), expected %d (%s); last_error: \"%s\"\n", k_states[s].name,
                            k_entries[e].name, st, zo_strerror(st), k_expect[s][e], zo_strerror(k_expect[s][e]), msg);
                bad++;
            }
            if (st != ZO_OK && (!msg || !*msg || strstr(msg, "987654321"))) {
                print_error("state %s, %s: returned %s but the message is \"%s\" (not this call's)\n", k_states[s].name,
                            k_entries[e].name, zo_strerror(st), msg ? msg : "(null)");
                bad++;
            }
            HD_CONSISTENT(c.rt);
            unwind(&c);
            step(&c);
            HD_OK(c.rt, zo_runtime_destroy(c.rt));
        }
    }
    if (print) {
        printf("/*%-17s", "");
        for (size_t e = 0; e < N_ENTRIES; e++) printf(" %2zu", e);
        printf(" */\n");
        for (size_t s = 0; s < N_STATES; s++) {
            printf("    /* %-16s */ {", k_states[s].name);
            for (size_t e = 0; e < N_ENTRIES; e++) printf("%s%s", code(got[s][e]), e + 1 < N_ENTRIES ? ", " : "");
            printf("},\n");
        }
    }
    print_message("%s: %d cases (%zu states x %zu entry points), %d failed\n", zo_policy_name(policy), cases,
                  (size_t)N_STATES, (size_t)N_ENTRIES, bad);
    assert_int_equal(bad, 0);
}

static void test_every_entry_in_every_state(void **state) {
    (void)state;
    run_matrix(ZO_GRADS_PER_CALL, k_expect_per_call);
}

static void test_every_entry_in_every_state_deepspeed(void **state) {
    (void)state;
    run_matrix(ZO_GRADS_RESET_ON_FORWARD, k_expect_rof);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_entry_in_every_state),
        cmocka_unit_test(test_every_entry_in_every_state_deepspeed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
