/*
 * test_sim.c - the simulator and checker on hand-built scenarios: exact
 * engine-order traces, the ready-queue emulation against PyTorch 1.13, the
 * legacy-policy bug classes of docs/../shared protocol (each must be found)
 * and the per-call policy holding on the same scenarios.
 *
 * sim.c is included so that the ready-queue heap (static) can be tested
 * directly; the archive's sim.o is then not linked.
 *
 * Scenarios are written as .scn text (docs/scenario-format.md) in string
 * literals beside the tests that run them and parsed with zs_scn_parse
 * (parse() below); a macro holds the lines that several texts share.
 * Module ids in the traces ("A m=1") are declaration order, the root is
 * m=0.  The ready-queue test drives the heap itself and the hook-stack
 * test registers its runtime by hand: neither builds a scenario.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../fuzz/sim.c"
#include "scn.h"

static zs_scenario sc;
static char tbuf[1 << 16];

/* Runs s under policy with the trace captured in tbuf; returns zs_sim_run's value. */
static int run(const zs_scenario *s, int policy, int order, zs_sim_result *r) {
    char err[256];
    if (zs_scenario_validate(s, err, sizeof err)) {
        fprintf(stderr, "invalid scenario: %s\n", err);
        fail();
    }
    FILE *f = fmemopen(tbuf, sizeof tbuf, "w");
    assert_non_null(f);
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = policy;
    o.order_mode = order;
    o.trace = f;
    int rc = zs_sim_run(s, &o, r);
    fputc(0, f);
    fclose(f);
    return rc;
}

static void expect_holds(const zs_scenario *s, int policy) {
    zs_sim_result r;
    int rc = run(s, policy, -1, &r);
    if (rc) {
        char line[512];
        zs_violation_format(&r.v, line, sizeof line);
        fprintf(stderr, "%s\ntrace:\n%s", line, tbuf);
    }
    assert_int_equal(rc, 0);
    assert_false(r.setup_error);
}

static void expect_violation(const zs_scenario *s, int policy, int inv, int step) {
    zs_sim_result r;
    int rc = run(s, policy, -1, &r);
    char line[512];
    zs_violation_format(&r.v, line, sizeof line);
    if (rc != 1 || r.v.inv != inv || r.v.step != step)
        fprintf(stderr, "expected %s at step %d under %s, got: %s\ntrace:\n%s", zs_inv_name(inv), step,
                zs_policy_name((unsigned)policy), rc ? line : "no violation", tbuf);
    assert_int_equal(rc, 1);
    assert_int_equal(r.v.inv, inv);
    assert_int_equal(r.v.step, step);
}

/* Parses .scn text into *s; a text that does not parse fails the test. */
static void parse(zs_scenario *s, const char *text) {
    zs_scn_error err;
    if (zs_scn_parse(text, strlen(text), s, NULL, &err)) {
        fprintf(stderr, "%d:%d: %s\n%s", err.line, err.col, err.msg, text);
        fail();
    }
}

/* A root module with one child module owning one parameter. */
#define MODEL_LAYER                                                                                                    \
    "module model\n"                                                                                                   \
    "  module layer\n"                                                                                                 \
    "param layer.w owner=layer numel=1000\n"

/* ALBERT-style reuse: h = L(x); y = L(h); loss(y). */
#define REUSE_CALLS                                                                                                    \
    "  call model(batch_rg) -> 1 use(out1.0)\n"                                                                        \
    "    call layer(arg0) -> 1 use(arg0)\n"                                                                            \
    "    call layer(out0.0) -> 1 use(arg0)\n"

static const char reuse_text[] = MODEL_LAYER "step train loss=0\n" REUSE_CALLS;

static const char *reuse_trace_per_call = "STEP 0 train\n"
                                          "FWD g=0\n"
                                          "A m=0\n"
                                          "D m=0 n=1 rg=1 c=0->1\n"
                                          "A m=1\n"
                                          "D m=1 n=1 rg=1 c=0->1\n"
                                          "B m=1\n"
                                          "C m=1 n=1 rg=1 r=?->?\n"
                                          "A m=1\n"
                                          "D m=1 n=1 rg=1 c=0->1\n"
                                          "B m=1\n"
                                          "C m=1 n=1 rg=1 r=?->?\n"
                                          "B m=0\n"
                                          "C m=0 n=1 rg=1 r=?->?\n"
                                          "ENDFWD g=0\n"
                                          "BWD g=0 retain=0\n"
                                          "PRE m=0 r=?->?\n"
                                          "PRE m=1 r=?->?\n"
                                          "POST m=1 c=1->0\n"
                                          "PRE m=1 r=?->?\n"
                                          "PGRAD p=0\n"
                                          "POST m=1 c=1->0\n"
                                          "POST m=0 c=1->0\n"
                                          "ENDBWD g=0\n"
                                          "SWEEP\n";

static void test_reuse(void **state) {
    (void)state;
    parse(&sc, reuse_text);
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_string_equal(tbuf, reuse_trace_per_call);
    /* DeepSpeed upstream: counts 1, 1, then 0 and -1 in backward */
    expect_violation(&sc, ZO_GRADS_RESET_ON_FORWARD, ZS_INV_I1, 0);
    assert_non_null(strstr(tbuf, "D m=1 n=1 rg=1 c=?->1\n"));
    assert_non_null(strstr(tbuf, "D m=1 n=1 rg=1 c=1->1\n"));
    assert_non_null(strstr(tbuf, "POST m=1 c=1->0\n"));
    assert_non_null(strstr(tbuf, "POST m=1 c=0->-1\n"));
    /* fuzzed order with zero choice bytes is the engine order here */
    parse(&sc, "config order=fuzzed\n" MODEL_LAYER "step train loss=0\n" REUSE_CALLS);
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_string_equal(tbuf, reuse_trace_per_call);
    /* a different ready-node choice: the second POST m=1 is not ready
     * before PRE m=1 ... there is exactly one ready node at each point in
     * this chain, so every choice byte gives the same order */
    parse(&sc, "config order=fuzzed\n" MODEL_LAYER "step train loss=0\n" REUSE_CALLS "order_bytes 7 7 7 7\n");
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_string_equal(tbuf, reuse_trace_per_call);
}

/* Step 0: the child's output is unused (its input requires grad); step 1:
 * used.  Legacy never-reset counters keep a stale count.  DeepSpeed's
 * hooks alone: with the ZeRO-3 optimizer (deepspeed=0.19)
 * release_backward_leftovers() frees what the stale count holds. */
static const char unused_then_used_text[] = "config deepspeed=0.19-hooks\n" MODEL_LAYER "step train loss=0\n"
                                            "  call model(batch_rg) -> 1 use(arg0)   # the branch is dropped\n"
                                            "    call layer(arg0) -> 1 use(arg0)\n"
                                            "step train loss=0\n"
                                            "  call model(batch_rg) -> 1 use(out0.0)\n"
                                            "    call layer(arg0) -> 1 use(arg0)\n";

static void test_unused_branch(void **state) {
    (void)state;
    parse(&sc, unused_then_used_text);
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    expect_holds(&sc, ZO_GRADS_RESET_ON_FORWARD);
    expect_violation(&sc, ZO_GRADS_INIT_AT_REGISTER, ZS_INV_I3, 1);
    assert_non_null(strstr(tbuf, "POST m=1 c=2->1\n"));
    expect_violation(&sc, ZO_GRADS_LAZY_INIT, ZS_INV_I3, 1);
}

/* A checkpointed child (ckpt=KIND): reentrant, its no_grad first pass
 * counts the input without a backward node. */
#define CKPT_CALLS(kind)                                                                                               \
    "step train loss=0\n"                                                                                              \
    "  call model(batch_rg) -> 1 use(out0.0)\n"                                                                        \
    "    call layer(arg0) -> 1 use(arg0) ckpt=" kind "\n"

static void test_checkpoint(void **state) {
    (void)state;
    parse(&sc, MODEL_LAYER CKPT_CALLS("reentrant"));
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    /* the recompute is a nested forward + backward inside backward 0 */
    const char *want = "BWD g=0 retain=0\n"
                       "PRE m=0 r=?->?\n"
                       "FWD g=1\n"
                       "A m=1\n"
                       "D m=1 n=1 rg=1 c=0->1\n"
                       "B m=1\n"
                       "C m=1 n=1 rg=1 r=?->?\n"
                       "ENDFWD g=1\n"
                       "BWD g=1 retain=0\n"
                       "PRE m=1 r=?->?\n"
                       "PGRAD p=0\n"
                       "POST m=1 c=1->0\n"
                       "ENDBWD g=1\n"
                       "POST m=0 c=1->0\n"
                       "ENDBWD g=0\n";
    if (!strstr(tbuf, want)) fprintf(stderr, "trace:\n%s", tbuf);
    assert_non_null(strstr(tbuf, want));
    /* first pass under no_grad: hook D sees rg=1 but no window opens */
    assert_non_null(strstr(tbuf, "A m=1\nD m=1 n=1 rg=1 c=0->0\nB m=1\nC m=1 n=1 rg=0"));
    /* the count of the no_grad first pass never returns to 0: the hooks
     * leave the child gathered (DeepSpeed's hooks alone); the ZeRO-3
     * optimizer's release_backward_leftovers() frees it */
    parse(&sc, "config deepspeed=0.19-hooks\n" MODEL_LAYER CKPT_CALLS("reentrant"));
    expect_violation(&sc, ZO_GRADS_LAZY_INIT, ZS_INV_I3, 0);
    expect_violation(&sc, ZO_GRADS_INIT_AT_REGISTER, ZS_INV_I3, 0);
    parse(&sc, MODEL_LAYER CKPT_CALLS("reentrant"));
    expect_holds(&sc, ZO_GRADS_LAZY_INIT);
    expect_holds(&sc, ZO_GRADS_INIT_AT_REGISTER);

    /* non-reentrant, torch 2.x (the default profile): one forward with
     * grad; when backward reaches the region's op node the recompute runs
     * A and D, then stops at the pack of the region's only saved tensor
     * (early stop): B and C never fire */
    parse(&sc, MODEL_LAYER CKPT_CALLS("non-reentrant"));
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    const char *nre2 = "BWD g=0 retain=0\n"
                       "PRE m=0 r=?->?\n"
                       "PRE m=1 r=?->?\n"
                       "A m=1\n"
                       "D m=1 n=1 rg=1 c=0->0\n"
                       "PGRAD p=0\n"
                       "POST m=1 c=1->0\n"
                       "POST m=0 c=1->0\n"
                       "ENDBWD g=0\n";
    if (!strstr(tbuf, nre2)) fprintf(stderr, "trace:\n%s", tbuf);
    assert_non_null(strstr(tbuf, nre2));
    /* the legacy policies keep what the recompute's A fetched until the
     * module's post-backward: reset-on-forward releases it there */
    expect_holds(&sc, ZO_GRADS_RESET_ON_FORWARD);

    /* without early stop (torch 2.x, set_checkpoint_early_stop(False)) and
     * on torch 1.13 the whole region is recomputed: A D B C */
    static const char *const full_recompute[] = {
        "config torch=2.x-no-early-stop\n" MODEL_LAYER CKPT_CALLS("non-reentrant"),
        "config torch=1.13\n" MODEL_LAYER CKPT_CALLS("non-reentrant"),
    };
    for (int k = 0; k < 2; k++) {
        parse(&sc, full_recompute[k]);
        expect_holds(&sc, ZO_GRADS_PER_CALL);
        const char *nre = "BWD g=0 retain=0\n"
                          "PRE m=0 r=?->?\n"
                          "PRE m=1 r=?->?\n"
                          "A m=1\n"
                          "D m=1 n=1 rg=1 c=0->0\n"
                          "B m=1\n"
                          "C m=1 n=1 rg=1 r=?->?\n"
                          "PGRAD p=0\n"
                          "POST m=1 c=1->0\n"
                          "POST m=0 c=1->0\n"
                          "ENDBWD g=0\n";
        if (!strstr(tbuf, nre)) fprintf(stderr, "trace:\n%s", tbuf);
        assert_non_null(strstr(tbuf, nre));
    }
}

/* The child raises; the root catches it and carries on. */
static void test_exception(void **state) {
    (void)state;
    parse(&sc, MODEL_LAYER "step train loss=0\n"
                           "  call model(batch_rg) -> 1 use(out1.0)\n"
                           "    call layer(arg0) raise=up1\n"
                           "    call layer(arg0) -> 1 use(arg0)\n");
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_non_null(strstr(tbuf, "A m=1\nD m=1 n=1 rg=1 c=0->1\nABORT catcher=0\nA m=1\n"));
    /* nobody catches: the pass is abandoned, no backward */
    parse(&sc, MODEL_LAYER "step train\n"
                           "  call model(batch_rg)\n"
                           "    call layer(arg0) raise=outside\n");
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_non_null(strstr(tbuf, "ABORT catcher=-1\nSWEEP\n"));
    assert_null(strstr(tbuf, "BWD"));
}

/* retain_graph: the same nodes fire twice. */
static void test_retain(void **state) {
    (void)state;
    parse(&sc, MODEL_LAYER "step retain loss=0\n" REUSE_CALLS);
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_non_null(strstr(tbuf, "BWD g=0 retain=1\n"));
    assert_non_null(strstr(tbuf, "BWD g=0 retain=0\n"));
}

/* Fuzzed order: a choice byte picks among ready nodes (0 = the engine's
 * pick).  root(x) = op(c1(x), c2(x)): after the root's op node both
 * children's PreBackward nodes are ready; the engine runs the later one
 * (m=2) first, choice 1 runs m=1 first.  Both orders must hold. */
#define TWO_CHILDREN                                                                                                   \
    "module model\n"                                                                                                   \
    "  module a\n"                                                                                                     \
    "  module b\n"                                                                                                     \
    "param a.w owner=a numel=1000\n"                                                                                   \
    "param b.w owner=b numel=1000\n"                                                                                   \
    "step train loss=0\n"                                                                                              \
    "  call model(batch_rg) -> 1 use(out0.0, out1.0)\n"                                                                \
    "    call a(arg0) -> 1 use(arg0)\n"                                                                                \
    "    call b(arg0) -> 1 use(arg0)\n"

static void test_fuzzed_order(void **state) {
    (void)state;
    parse(&sc, TWO_CHILDREN);
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    char *a = strstr(tbuf, "PRE m=1"), *b = strstr(tbuf, "PRE m=2");
    assert_true(a && b && b < a); /* engine: the child called last first */
    /* 4th choice: loss, PRE m=0, op m=0, then {PRE m=2, PRE m=1} */
    parse(&sc, "config order=fuzzed\n" TWO_CHILDREN "order_bytes 0 0 0 1\n");
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    a = strstr(tbuf, "PRE m=1");
    b = strstr(tbuf, "PRE m=2");
    assert_true(a && b && a < b);
    expect_holds(&sc, ZO_GRADS_RESET_ON_FORWARD);
}

/* The emulated ready queue pops tied AccumulateGrad nodes in the order
 * PyTorch 1.13's CPU engine does.  Recorded on this machine with one
 * autograd.Function over n parameters, each AccumulateGrad node hooked:
 * n=4 -> 0 2 1 3, n=5 -> 0 2 4 1 3, n=6 -> 0 2 5 4 1 3,
 * n=7 -> 0 2 5 6 4 1 3, n=9 -> 0 2 6 8 5 7 4 1 3. */
static void test_ready_queue_ties(void **state) {
    (void)state;
    static const int want[5][10] = {{4, 0, 2, 1, 3},
                                    {5, 0, 2, 4, 1, 3},
                                    {6, 0, 2, 5, 4, 1, 3},
                                    {7, 0, 2, 5, 6, 4, 1, 3},
                                    {9, 0, 2, 6, 8, 5, 7, 4, 1, 3}};
    for (int k = 0; k < 5; k++) {
        int n = want[k][0];
        sim S;
        memset(&S, 0, sizeof S);
        S.order_mode = ZS_ORDER_ENGINE;
        S.nodes = calloc((size_t)n, sizeof *S.nodes);
        assert_non_null(S.nodes);
        S.cap_nodes = (uint32_t)n;
        for (int i = 0; i < n; i++) S.nodes[i].seq = SEQ_ACC;
        for (int i = 0; i < n; i++) hpush(&S, i, 0);
        for (int i = 0; i < n; i++) assert_int_equal(hpop(&S, 0), want[k][i + 1]);
        assert_int_equal(hpop(&S, 0), -1);
        free(S.nodes);
        free(S.heap);
    }
    /* the same through a whole scenario: the root owns 5 parameters */
    parse(&sc, "module model\n"
               "param w0 owner=model numel=1\n"
               "param w1 owner=model numel=1\n"
               "param w2 owner=model numel=1\n"
               "param w3 owner=model numel=1\n"
               "param w4 owner=model numel=1\n"
               "step train loss=0\n"
               "  call model(batch_rg) -> 1\n");
    expect_holds(&sc, ZO_GRADS_PER_CALL);
    assert_non_null(strstr(tbuf, "PGRAD p=0\nPGRAD p=2\nPGRAD p=4\nPGRAD p=1\nPGRAD p=3\n"));
}

/* A train pass whose loss does not require grad is discarded, and every
 * forward must end with its parameters released (I3) - also when the
 * trace keeps parameters for reuse. */
static void test_discard(void **state) {
    (void)state;
    parse(&sc, "module model\n"
               "param w owner=model numel=1\n"
               "step train loss=0\n"
               "  call model(batch_rg) -> 1 use(arg0)\n"
               "step train\n"
               "  call model(batch_rg) -> 1 use(arg0)\n");
    zs_sim_result r;
    int rc = run(&sc, ZO_GRADS_PER_CALL, -1, &r);
    assert_non_null(strstr(tbuf, "STEP 1 train\nFWD g=1\nA m=0\nD m=0 n=1 rg=1 c=0->1\nB m=0\n"
                                 "C m=0 n=1 rg=1 r=?->?\nENDFWD g=1\nDISCARD g=1\n"));
    if (rc) {
        char line[512];
        zs_violation_format(&r.v, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    assert_int_equal(rc, 0);
}

/* opts.context: after a run it says where the simulator ended. */
static void test_context(void **state) {
    (void)state;
    parse(&sc, reuse_text);
    char ctx[512] = "";
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.context = ctx;
    o.context_len = sizeof ctx;
    zs_sim_result r;
    assert_int_equal(zs_sim_run(&sc, &o, &r), 0);
    assert_string_equal(ctx, "teardown (zo_runtime_destroy)");
    /* a short buffer is truncated, never overrun */
    char tiny[8];
    o.context = tiny;
    o.context_len = sizeof tiny;
    assert_int_equal(zs_sim_run(&sc, &o, &r), 0);
    assert_int_equal(strlen(tiny), 7);
}

/* The hook stack the simulator would write at given points, checked
 * through a checker callback that snapshots it at each PARAM_STATE event. */
static char *g_ctx;
static char g_snap[64][512];
static zs_sim_ctx g_saved[64]; /* the same points saved as data (zs_sim_context_save) */
static const void *g_sim;
static unsigned g_nsnap;
static void snap_event(void *user, const zo_event *ev) {
    zs_check_event(user, ev);
    if (ev->kind == ZO_EV_GATHER && g_nsnap < 64) {
        zs_sim_context_save(g_sim, &g_saved[g_nsnap]);
        snprintf(g_snap[g_nsnap++], 512, "%s", g_ctx);
    }
}

static void test_context_at_gathers(void **state) {
    (void)state;
    parse(&sc, reuse_text);
    char ctx[512] = "";
    g_ctx = ctx;
    g_nsnap = 0;
    /* drive the simulator by hand to install the snapshotting callback */
    sim *S = calloc(1, sizeof *S);
    assert_non_null(S);
    g_sim = S;
    zs_sim_result r;
    memset(&r, 0, sizeof r);
    S->s = &sc;
    zs_sim_opts_init(&S->o);
    S->o.context = ctx;
    S->o.context_len = sizeof ctx;
    S->r = &r;
    S->policy = 0;
    S->order_mode = 0;
    assert_int_equal(alloc_arrays(S), 0);
    for (unsigned p = 0; p < sc.n_params; p++) S->acc[p] = -1;
    zs_check_init(&S->chk, &sc, 0, 0);
    S->ctx_phase = "setup";
    S->ctx_pass = -1;
    S->ctx_graph = -1;
    assert_int_equal(setup(S), 0);
    /* reroute events through the snapshotter */
    zo_runtime_destroy(S->rt);
    S->rt = NULL;
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.backend = S->be;
    cfg.on_event = snap_event;
    cfg.event_user = &S->chk;
    cfg.param_persistence_threshold = sc.cfg.param_persistence_threshold;
    assert_int_equal(zo_runtime_create(&cfg, &S->rt), ZO_OK);
    S->chk.rt = S->rt;
    zo_module_id id;
    assert_int_equal(zo_module_register(S->rt, ZO_NO_MODULE, NULL, 0, &id), ZO_OK);
    assert_int_equal(zo_module_register(S->rt, 0, NULL, 0, &id), ZO_OK);
    zo_param_id pid;
    assert_int_equal(zo_param_register(S->rt, 1, NULL, 1000, 4, 0, &pid), ZO_OK);
    memset(S->chk.shadow, 0, sc.n_params);
    run_step(S, 0);
    assert_false(S->chk.violated);
    /* the first gather: layer's first call inside model's call */
    assert_true(g_nsnap >= 2);
    assert_string_equal(g_snap[0], "step 0 (train) pass 0 forward: model(m0)#0 > layer(m1)#1: A m=1 (pre-forward)");
    int in_bwd = 0;
    for (unsigned i = 0; i < g_nsnap; i++)
        if (strstr(g_snap[i], "step 0 (train) pass 0 backward g=0: PRE m=1 (pre-backward)")) in_bwd = 1;
    assert_true(in_bwd);
    /* saved as data and formatted later, each gives the same text */
    for (unsigned i = 0; i < g_nsnap; i++) {
        char text[512];
        zs_sim_context_format(&sc, &g_saved[i], text, sizeof text);
        assert_string_equal(text, g_snap[i]);
    }
    /* a chain deeper than 8 shows its outermost two and innermost five */
    unsigned depth = S->ctx_depth, cap = S->ctx_cap;
    const char *phase = S->ctx_phase;
    zs_id *mods = S->ctx_mod, *calls = S->ctx_call, deep_mod[12], deep_call[12];
    S->ctx_mod = deep_mod;
    S->ctx_call = deep_call;
    S->ctx_cap = 12;
    S->ctx_depth = 12;
    for (unsigned i = 0; i < 12; i++) {
        S->ctx_mod[i] = (zs_id)(i % 2);
        S->ctx_call[i] = (zs_id)i;
    }
    S->ctx_phase = "forward";
    S->ctx_pass = 0;
    S->ctx_graph = -1;
    S->ctx_fixed = NULL;
    S->chk.step = 0;
    hook_begin(S, "A m=%d", 1, 0);
    const char *deep = "step 0 (train) pass 0 forward: model(m0)#0 > layer(m1)#1 > ... > "
                       "layer(m1)#7 > model(m0)#8 > layer(m1)#9 > model(m0)#10 > layer(m1)#11: "
                       "A m=1 (pre-forward)";
    assert_string_equal(ctx, deep);
    zs_sim_ctx saved, again;
    zs_sim_context_save(S, &saved);
    zs_sim_context_save(S, &again);
    assert_memory_equal(&saved, &again, sizeof saved);
    char text[512];
    zs_sim_context_format(&sc, &saved, text, sizeof text);
    assert_string_equal(text, deep);
    S->ctx_depth = depth;
    S->ctx_cap = cap;
    S->ctx_mod = mods;
    S->ctx_call = calls;
    S->ctx_phase = phase;
    zo_runtime_destroy(S->rt);
    zo_backend_destroy(S->be);
    free_step(S);
    free(S->nodes);
    free(S->edges);
    free(S->regions);
    free(S->ckrecs);
    free(S->xs);
    free(S->heap);
    free(S->pset_ids);
    free(S->arrays);
    free(S);
}

/* verify_collectives in one rank's view: the exchange gives W copies of
 * this rank's fingerprint, so it always matches - every invariant holds
 * and the hooks never fail. */
static void test_verify_single_view(void **state) {
    (void)state;
    parse(&sc, "config world_size=4\n" MODEL_LAYER "step train loss=0\n" REUSE_CALLS);
    for (int pol = 0; pol < 1; pol++) {
        zs_sim_opts o;
        zs_sim_opts_init(&o);
        o.verify_collectives = 1;
        zs_sim_result r;
        assert_int_equal(zs_sim_run(&sc, &o, &r), 0);
        assert_false(r.collective_mismatch);
    }
}

/* The incremental checker (zs_check_incremental) against the full scan on
 * one runtime: the events reach both checkers, except those of a parameter
 * being hidden (a state change without its event). */
static zs_checker g_chk[2];
static zo_param_id g_hide = ZO_NO_PARAM;
static void both_event(void *user, const zo_event *ev) {
    (void)user;
    if (ev->param != ZO_NO_PARAM && ev->param == g_hide) return;
    zs_check_event(&g_chk[0], ev);
    zs_check_event(&g_chk[1], ev);
}

static void expect_same_verdict(void) {
    int full = zs_check_state(&g_chk[0]), inc = zs_check_state(&g_chk[1]);
    assert_int_equal(full, 1);
    assert_int_equal(inc, 1);
    assert_int_equal(g_chk[1].v.inv, g_chk[0].v.inv);
    assert_int_equal(g_chk[1].v.param, g_chk[0].v.param);
    assert_int_equal(g_chk[1].v.event, g_chk[0].v.event);
    assert_string_equal(g_chk[1].v.what, g_chk[0].v.what);
    assert_string_equal(g_chk[1].v.msg, g_chk[0].v.msg);
}

/* An allocator that refuses every block above 64 KiB: a parameter whose
 * shards the host backend must store in full (cap 0) cannot be held. */
static void *small_alloc(void *opaque, size_t bytes) {
    (void)opaque;
    return bytes > 65536 ? NULL : malloc(bytes);
}
static void small_free(void *opaque, void *p) {
    (void)opaque;
    free(p);
}

/* Out of memory while registering is no verdict: zs_sim_run returns -1
 * with the reason, neither a violation (ERR) nor "every invariant held". */
static void test_setup_out_of_memory(void **state) {
    (void)state;
    parse(&sc, "module model\n"
               "param w owner=model numel=1048576\n"
               "step train loss=0\n"
               "  call model(batch_rg) -> 1 use(arg0)\n");
    zo_allocator al = {small_alloc, small_free, NULL};
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.allocator = &al;
    o.max_bytes_per_param = 0; /* every byte stored: 4 MiB */
    zs_sim_result r;
    assert_int_equal(zs_sim_run(&sc, &o, &r), -1);
    assert_int_equal(r.violated, 0);
    assert_int_equal(r.setup_error, 1);
    assert_non_null(strstr(r.setup_msg, "zo_param_register(param 0)"));
    assert_non_null(strstr(r.setup_msg, "out of memory"));
    /* the same scenario with the fuzzing cap fits and holds */
    o.max_bytes_per_param = ZS_SIM_DEFAULT_CAP;
    assert_int_equal(zs_sim_run(&sc, &o, &r), 0);
    assert_int_equal(r.setup_error, 0);
}

static void test_incremental_check(void **state) {
    (void)state;
    zs_scenario s2;
    memset(&s2, 0, sizeof s2); /* empty: zs_scenario_init reuses storage it owns */
    assert_int_equal(zs_scenario_init(&s2), 0);
    s2.n_modules = 3;
    s2.n_params = 2;
    for (int hidden = 0; hidden < 2; hidden++) {
        uint8_t shadow[2][2];
        uint64_t storage[2][32];
        assert_true(sizeof storage[0] >= zs_check_incremental_size(2));
        zo_backend *be = NULL;
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        assert_int_equal(zo_backend_host_create(&hc, &be), ZO_OK);
        zo_config cfg = ZO_CONFIG_INIT;
        cfg.backend = be;
        cfg.param_persistence_threshold = 0;
        cfg.on_event = both_event;
        zo_runtime *rt = NULL;
        assert_int_equal(zo_runtime_create(&cfg, &rt), ZO_OK);
        zo_module_id m0, m1, m2;
        zo_param_id p0, p1;
        assert_int_equal(zo_module_register(rt, ZO_NO_MODULE, NULL, 0, &m0), ZO_OK);
        assert_int_equal(zo_module_register(rt, m0, NULL, 0, &m1), ZO_OK);
        assert_int_equal(zo_module_register(rt, m0, NULL, 0, &m2), ZO_OK);
        assert_int_equal(zo_param_register(rt, m1, NULL, 100, 4, 0, &p0), ZO_OK);
        assert_int_equal(zo_param_register(rt, m2, NULL, 200, 4, 0, &p1), ZO_OK);
        for (int k = 0; k < 2; k++) {
            zs_check_init(&g_chk[k], &s2, ZO_GRADS_PER_CALL, 0);
            g_chk[k].rt = rt;
            g_chk[k].shadow = shadow[k];
            g_chk[k].n_params = 2;
            memset(shadow[k], 0, 2);
        }
        zs_check_incremental(&g_chk[1], storage[1]);
        g_hide = ZO_NO_PARAM;
        assert_int_equal(zs_check_state(&g_chk[0]), 0);
        assert_int_equal(zs_check_state(&g_chk[1]), 0);
        assert_int_equal(g_chk[1].n_sweeps, 1); /* the first check scans */
        zo_graph g;
        assert_int_equal(zo_forward_begin(rt, ZO_FWD_ROOT, &g), ZO_OK);
        assert_int_equal(zs_check_state(&g_chk[0]), 0);
        assert_int_equal(zs_check_state(&g_chk[1]), 0);
        assert_int_equal(g_chk[1].n_sweeps, 2); /* a root forward resets the step: a scan */
        assert_int_equal(zo_pre_forward(rt, m0, ZO_CALL_GRAD), ZO_OK);
        assert_int_equal(zo_pre_forward(rt, m1, ZO_CALL_GRAD), ZO_OK); /* gathers p0 */
        assert_int_equal(zs_check_state(&g_chk[0]), 0);
        assert_int_equal(zs_check_state(&g_chk[1]), 0);
        assert_int_equal(g_chk[1].n_sweeps, 2); /* checked incrementally */
        /* nothing happens for 64 actions: one full scan among them */
        for (int i = 0; i < 64; i++) assert_int_equal(zs_check_state(&g_chk[1]), 0);
        assert_int_equal(g_chk[1].n_sweeps, 3);
        if (hidden) {
            /* p1 is gathered without the checkers seeing its events: the
             * totals give it away at once, and the full scan names it */
            g_hide = p1;
            assert_int_equal(zo_pre_forward(rt, m2, ZO_CALL_GRAD), ZO_OK);
            g_hide = ZO_NO_PARAM;
            /* (the non-incremental rule scans only after a state event or
             * at every 16th action: make this one a scan to compare) */
            g_chk[0].state_dirty = 1;
        } else {
            /* an event claims a change the runtime did not make */
            zo_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = ZO_EV_PARAM_STATE;
            ev.module = ZO_NO_MODULE;
            ev.param = p1;
            ev.from = ZO_PARAM_NOT_AVAILABLE;
            ev.to = ZO_PARAM_INFLIGHT;
            both_event(NULL, &ev);
        }
        expect_same_verdict();
        assert_int_equal(g_chk[1].v.inv, ZS_INV_I7);
        assert_int_equal(g_chk[1].v.param, (long)p1);
        zo_runtime_destroy(rt);
        zo_backend_destroy(be);
    }
    zs_scenario_free(&s2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_unused_branch),
        cmocka_unit_test(test_checkpoint),
        cmocka_unit_test(test_exception),
        cmocka_unit_test(test_retain),
        cmocka_unit_test(test_ready_queue_ties),
        cmocka_unit_test(test_fuzzed_order),
        cmocka_unit_test(test_discard),
        cmocka_unit_test(test_context),
        cmocka_unit_test(test_context_at_gathers),
        cmocka_unit_test(test_verify_single_view),
        cmocka_unit_test(test_incremental_check),
        cmocka_unit_test(test_setup_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
