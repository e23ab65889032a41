/*
 * test_minimize.c - the structure-aware minimiser (fuzz/minimize.c):
 *   - a large model with one ALBERT-style shared layer (tests/corpus/
 *     big-reuse.scn, 72 calls, 21 modules) minimised under reset-on-forward
 *     reaches the known smallest module-reuse repro: root + one child, one
 *     step, three calls (the root and the child twice), no parameter;
 *   - corpus/models/albert.scn (when present) likewise;
 *   - a large model with an unused branch (big-unused.scn) minimised under
 *     init-at-register / lazy-init keeping every policy's verdict reaches
 *     the smallest unused-branch repro: one module, two steps, two calls;
 *   - minimising random failing scenarios under each legacy policy keeps
 *     the invariant, validity, and never grows anything;
 *   - the editing primitives keep references consistent;
 *   - all-ranks scenarios: an edit the predicate needs is kept (and
 *     renumbered as calls, steps and modules go), edits it does not need
 *     go with all_ranks itself; the default predicate runs the host world,
 *     where per-rank MoE routing is I8 until gather_always is set.
 *
 * Scenarios are written as .scn text (docs/scenario-format.md): the large
 * models are files beside this test (tests/corpus/big-*.scn) or in
 * corpus/models/, the small ones string literals parsed with
 * zs_scn_parse; a macro holds the lines that two texts share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "minimize.h"
#include "run.h"
#include "ranks.h"
#include "scenario.h"
#include "scn.h"
#include "zs_random.h"

/* the verdict of s under policy (-1: the scenario's), its own order, the
 * default cap; all-ranks scenarios in the host world (zs_run's defaults) */
static int verdict_of(const zs_scenario *s, int policy) {
    zs_run_opts o;
    zs_run_opts_init(&o);
    o.policy = policy;
    zs_outcome out;
    return zs_run(s, &o, &out);
}

static zs_scenario sc;

static int load(const char *rel, zs_scenario *s) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ZO_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    zs_scn_error err;
    if (zs_scn_parse(buf, n, s, NULL, &err) != 0) {
        fprintf(stderr, "%s:%d:%d: %s\n", rel, err.line, err.col, err.msg);
        return -2;
    }
    return 0;
}

static void parse_text(const char *t, zs_scenario *s) {
    zs_scn_error err;
    int rc = zs_scn_parse(t, strlen(t), s, NULL, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
}

static void dump(const zs_scenario *s) { zs_scn_fprint(stderr, s, NULL); }

static void check_reuse_minimum(const char *rel) {
    int rc = load(rel, &sc);
    if (rc == -1) {
        fprintf(stderr, "%s missing: skipped\n", rel);
        skip();
    }
    assert_int_equal(rc, 0);
    zs_min_opts o;
    zs_min_opts_init(&o);
    o.policy = ZO_GRADS_RESET_ON_FORWARD;
    o.inv = ZS_INV_I1;
    zs_min_stats st;
    assert_int_equal(zs_minimize(&sc, &o, &st), 0);
    fprintf(stderr, "%s: %u calls/%u modules/%d lines -> %u calls/%u modules/%d lines, %lu runs\n", rel,
            st.before.calls, st.before.modules, st.before.lines, st.after.calls, st.after.modules, st.after.lines,
            st.runs);
    dump(&sc);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
    assert_int_equal(verdict_of(&sc, ZO_GRADS_RESET_ON_FORWARD), ZS_INV_I1);
    /* root + one child, one step, the child called twice */
    assert_int_equal(st.after.steps, 1);
    assert_int_equal(st.after.passes, 1);
    assert_int_equal(st.after.modules, 2);
    assert_int_equal(st.after.calls, 3);
    assert_int_equal(st.after.params, 0);
    const zs_pass *p = &sc.step[0].pass[0];
    assert_int_equal(p->calls[1].module, 1);
    assert_int_equal(p->calls[2].module, 1);
    assert_int_equal(sc.n_uses, 0);
    assert_true(st.after.lines <= 7);
}

static void test_big_reuse(void **state) {
    (void)state;
    check_reuse_minimum("tests/corpus/big-reuse.scn");
}

static void test_albert_model(void **state) {
    (void)state;
    check_reuse_minimum("corpus/models/albert.scn");
}

static void check_unused_minimum(int policy) {
    assert_int_equal(load("tests/corpus/big-unused.scn", &sc), 0);
    int before[4];
    for (int q = 0; q < 4; q++) before[q] = verdict_of(&sc, q);
    /* the unused-branch signature */
    assert_int_equal(before[ZO_GRADS_PER_CALL], ZS_INV_NONE);
    assert_int_equal(before[ZO_GRADS_RESET_ON_FORWARD], ZS_INV_NONE);
    assert_int_equal(before[ZO_GRADS_LAZY_INIT], ZS_INV_I3);
    assert_int_equal(before[ZO_GRADS_INIT_AT_REGISTER], ZS_INV_I3);
    zs_min_opts o;
    zs_min_opts_init(&o);
    o.policy = policy;
    o.same_verdicts = 1;
    zs_min_stats st;
    assert_int_equal(zs_minimize(&sc, &o, &st), 0);
    fprintf(stderr, "big-unused (%s): %u calls/%u modules/%u steps -> %u calls/%u modules/%u steps, %lu runs\n",
            zs_policy_name((unsigned)policy), st.before.calls, st.before.modules, st.before.steps, st.after.calls,
            st.after.modules, st.after.steps, st.runs);
    dump(&sc);
    for (int q = 0; q < 4; q++) assert_int_equal(verdict_of(&sc, q), before[q]);
    /* one module, two steps (the stale count, then the backward that stops
     * at 1), one call each */
    assert_int_equal(st.after.modules, 1);
    assert_int_equal(st.after.steps, 2);
    assert_int_equal(st.after.calls, 2);
    assert_true(st.after.params <= 1);
    assert_true(st.after.lines <= 7);
}

static void test_big_unused_init_at_register(void **state) {
    (void)state;
    check_unused_minimum(ZO_GRADS_INIT_AT_REGISTER);
}

static void test_big_unused_lazy_init(void **state) {
    (void)state;
    check_unused_minimum(ZO_GRADS_LAZY_INIT);
}

/* the smallest I3 of all (a module whose inputs do not require grad) */
static void test_big_unused_any_i3(void **state) {
    (void)state;
    assert_int_equal(load("tests/corpus/big-unused.scn", &sc), 0);
    zs_min_opts o;
    zs_min_opts_init(&o);
    o.policy = ZO_GRADS_INIT_AT_REGISTER;
    zs_min_stats st;
    assert_int_equal(zs_minimize(&sc, &o, &st), 0);
    assert_int_equal(st.inv, ZS_INV_I3);
    assert_int_equal(st.after.modules, 1);
    assert_int_equal(st.after.calls, 1);
    assert_int_equal(st.after.params, 1);
    assert_int_equal(st.after.lines, 5);
}

/* random failing scenarios under each legacy policy */
static void test_random_failures(void **state) {
    (void)state;
    static uint8_t buf[512];
    static zs_scenario orig;
    int found[4] = {0, 0, 0, 0};
    for (int policy = 1; policy < 4; policy++) {
        for (uint64_t t = 0; t < 400 && found[policy] < 6; t++) {
            size_t n = zs_rand_input(3, t, buf, sizeof buf);
            zs_decode(buf, n, &sc);
            int v = verdict_of(&sc, policy);
            if (v == ZS_INV_NONE || v == ZS_SCN_SETUP) continue;
            found[policy]++;
            assert_int_equal(zs_scenario_copy(&orig, &sc), 0);
            zs_min_opts o;
            zs_min_opts_init(&o);
            o.policy = policy;
            zs_min_stats st;
            assert_int_equal(zs_minimize(&sc, &o, &st), 0);
            assert_int_equal(st.inv, v);
            assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
            assert_int_equal(verdict_of(&sc, -1), v);
            assert_int_equal(sc.cfg.policy, policy);
            assert_true(st.after.calls <= st.before.calls);
            assert_true(st.after.modules <= st.before.modules);
            assert_true(st.after.params <= st.before.params);
            assert_true(st.after.steps <= st.before.steps);
            assert_true(st.after.lines <= st.before.lines);
            /* minimising the result again changes nothing (a fixpoint) */
            assert_int_equal(zs_scenario_copy(&orig, &sc), 0);
            zs_min_stats st2;
            assert_int_equal(zs_minimize(&sc, &o, &st2), 0);
            assert_int_equal(st2.accepted, 0);
            assert_true(zs_scenario_equal(&orig, &sc));
        }
        assert_true(found[policy] > 0);
    }
}

/* a scenario that holds has nothing to minimise */
static void test_holds(void **state) {
    (void)state;
    parse_text("module root\n"
               "param w owner=root numel=1\n"
               "step train loss=0\n"
               "  call root(batch_rg) -> 1 use(arg0)\n",
               &sc);
    zs_min_opts o;
    zs_min_opts_init(&o);
    zs_min_stats st;
    assert_int_equal(zs_minimize(&sc, &o, &st), 1);
    assert_int_equal(st.inv, ZS_INV_NONE);
}

/* ------------------------------------------------------------------ */
/* primitives                                                           */
/* ------------------------------------------------------------------ */

static void expect_text(const zs_scenario *s, const char *want) {
    char *t = zs_scn_print(s, NULL);
    assert_non_null(t);
    if (strcmp(t, want)) fprintf(stderr, "got:\n%swant:\n%s", t, want);
    assert_string_equal(t, want);
    free(t);
}

static void test_drop_call_and_input(void **state) {
    (void)state;
    parse_text("module r\n"
               "  module a\n"
               "  module b\n"
               "step train loss=0,1\n"
               "  call r(batch_rg, batch) -> 2 use(out1.0, out0.0, arg1)\n"
               "    call a(arg1, arg0) -> 1 use(arg1)\n"
               "    call b(out0.0, arg0) -> 1 use(arg0, arg1)\n",
               &sc);
    /* dropping a removes b's first input (b's arg0 uses go, arg1 -> arg0) */
    zs_min_pass_drop_call(&sc.step[0].pass[0], 1);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
    expect_text(&sc, "module r\n"
                     "  module a\n"
                     "  module b\n"
                     "step train loss=0,1\n"
                     "  call r(batch_rg, batch) -> 2 use(out0.0, arg1)\n"
                     "    call b(arg0) -> 1 use(arg0)\n");
    /* dropping r's input 0 removes b's input and b's use of it */
    zs_min_pass_drop_input(&sc.step[0].pass[0], 0, 0);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
    expect_text(&sc, "module r\n"
                     "  module a\n"
                     "  module b\n"
                     "step train loss=0,1\n"
                     "  call r(batch) -> 2 use(out0.0, arg0)\n"
                     "    call b() -> 1\n");
}

static void test_drop_output_and_module(void **state) {
    (void)state;
    parse_text("module r\n"
               "  module a\n"
               "    module a1\n"
               "  module b\n"
               "param pa owner=a numel=3\n"
               "param pb owner=b numel=5\n"
               "use a pb\n"
               "use r pa\n"
               "step train loss=0,2\n"
               "  call r(batch_rg) -> 3 use(out0.1, out1.0)\n"
               "    call a(arg0) -> 2 use(arg0)\n"
               "      call a1(arg0) -> 1 use(arg0)\n"
               "    call b(out0.1) -> 1 use(arg0)\n",
               &sc);
    /* root output 1 goes: loss bit 2 -> 1 */
    zs_min_pass_drop_output(&sc.step[0].pass[0], 0, 1);
    assert_int_equal(sc.step[0].pass[0].loss_mask, 0x3);
    /* a's output 0 goes: r's use of out0.1 -> out0.0, b's input likewise */
    zs_min_pass_drop_output(&sc.step[0].pass[0], 1, 0);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
    expect_text(&sc, "module r\n"
                     "  module a\n"
                     "    module a1\n"
                     "  module b\n"
                     "param pa owner=a numel=3\n"
                     "param pb owner=b numel=5\n"
                     "use a pb\n"
                     "use r pa\n"
                     "step train loss=0,1\n"
                     "  call r(batch_rg) -> 2 use(out0.0, out1.0)\n"
                     "    call a(arg0) -> 1 use(arg0)\n"
                     "      call a1(arg0) -> 1 use(arg0)\n"
                     "    call b(out0.0) -> 1 use(arg0)\n");
    /* a has a child module: cannot be dropped alone; a1 can */
    assert_int_equal(zs_min_drop_module(&sc, 1), -1);
    assert_int_equal(zs_min_drop_module(&sc, 2), 0);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
    /* ids re-indexed: b is module 2 now; pb's owner follows */
    assert_int_equal(sc.n_modules, 3);
    assert_string_equal(sc.mod[2].name, "b");
    assert_int_equal(sc.par[1].owner, 2);
    /* dropping pa removes the use naming it and renumbers pb */
    zs_min_drop_param(&sc, 0);
    assert_int_equal(sc.n_params, 1);
    assert_int_equal(sc.n_uses, 1);
    assert_int_equal(sc.use[0].module, 1);
    assert_int_equal(sc.use[0].param, 0);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
}


/* ------------------------------------------------------------------ */
/* per-rank programs                                                    */
/* ------------------------------------------------------------------ */

/* An MoE layer (router, experts e0..e2 each with an fc) and a head, two
 * train steps; MOE_PROGRAM(" gather_always") marks moe gather-always. */
#define MOE_PROGRAM(moe_flags)                                                                                         \
    "module net\n"                                                                                                     \
    "  module moe" moe_flags "\n"                                                                                      \
    "    module router\n"                                                                                              \
    "    module e0\n"                                                                                                  \
    "      module fc\n"                                                                                                \
    "    module e1\n"                                                                                                  \
    "      module fc\n"                                                                                                \
    "    module e2\n"                                                                                                  \
    "      module fc\n"                                                                                                \
    "  module head\n"                                                                                                  \
    "param router.w owner=router numel=64\n"                                                                           \
    "param e0.w owner=@4 numel=256\n"                                                                                  \
    "param e1.w owner=@6 numel=512\n"                                                                                  \
    "param e2.w owner=@8 numel=1024\n"                                                                                 \
    "param head.w owner=head numel=64\n"                                                                               \
    "step train loss=0\n"                                                                                              \
    "  call net(batch_rg) -> 1 use(out1.0)\n"                                                                          \
    "    call moe(arg0) -> 1 use(out1.0, out2.0)\n"                                                                    \
    "      call router(arg0) -> 1 use(arg0)\n"                                                                         \
    "      call e0(out0.0) -> 1 use(out0.0)\n"                                                                         \
    "        call @4(arg0) -> 1 use(arg0)\n"                                                                           \
    "      call e1(out0.0) -> 1 use(out0.0)\n"                                                                         \
    "        call @6(arg0) -> 1 use(arg0)\n"                                                                           \
    "    call head(out0.0) -> 1 use(arg0)\n"                                                                           \
    "step train loss=0\n"                                                                                              \
    "  call net(batch_rg) -> 1 use(out1.0)\n"                                                                          \
    "    call moe(arg0) -> 1 use(out1.0, out2.0)\n"                                                                    \
    "      call router(arg0) -> 1 use(arg0)\n"                                                                         \
    "      call e0(out0.0) -> 1 use(out0.0)\n"                                                                         \
    "        call @4(arg0) -> 1 use(arg0)\n"                                                                           \
    "      call e1(out0.0) -> 1 use(out0.0)\n"                                                                         \
    "        call @6(arg0) -> 1 use(arg0)\n"                                                                           \
    "    call head(out0.0) -> 1 use(arg0)\n"

static const char moe_text[] = "config world_size=3 ranks=all verify_collectives=1\n" MOE_PROGRAM(
    " gather_always") "rank 1 step 0 call head raise\n"
                      "rank 1 step 1 call e0 route e2\n"
                      "rank 2 step 0 call e1 skip\n"
                      "rank 2 step 1 skip-step\n";

/* The same without gather_always on moe; only the routing differs between
 * ranks. */
static const char moe_routed_text[] =
    "config world_size=3 ranks=all verify_collectives=1\n" MOE_PROGRAM("") "rank 1 step 1 call e0 route e2\n";

static int calls_module_named(const zs_scenario *s, const char *name) {
    for (unsigned i = 0; i < s->n_steps; i++)
        for (unsigned q = 0; q < s->step[i].n_passes; q++) {
            const zs_pass *p = &s->step[i].pass[q];
            for (unsigned c = 0; c < p->n_calls; c++)
                if (!strcmp(s->mod[p->calls[c].module].name, name)) return 1;
        }
    return 0;
}

/* a property of the per-rank programs: some rank calls e2 while rank 0
 * calls e0 (what MoE routing makes of one program) */
static unsigned long pred_runs;
static int pred_routed(const zs_scenario *s, int policy, int order_mode, uint64_t cap, zs_violation *v, void *ctx) {
    (void)policy, (void)order_mode, (void)cap, (void)ctx;
    static zs_scenario r0, rk;
    pred_runs++;
    assert_int_equal(zs_scenario_validate(s, NULL, 0), 0); /* every candidate is valid */
    if (zs_scenario_for_rank(s, 0, &r0, NULL, 0) != 0 || !calls_module_named(&r0, "e0")) return ZS_INV_NONE;
    for (unsigned r = 1; r < s->cfg.world_size; r++) {
        assert_int_equal(zs_scenario_for_rank(s, r, &rk, NULL, 0), 0);
        assert_int_equal(zs_scenario_validate(&rk, NULL, 0), 0);
        if (calls_module_named(&rk, "e2")) {
            if (v) {
                v->inv = ZS_INV_I8;
                snprintf(v->msg, sizeof v->msg, "rank %u routes to e2", r);
            }
            return ZS_INV_I8;
        }
    }
    return ZS_INV_NONE;
}

/* the minimiser keeps the edit the predicate needs and removes the rest,
 * renumbering it as calls, steps and modules go */
static void test_rank_edits_kept(void **state) {
    (void)state;
    parse_text(moe_text, &sc);
    zs_min_opts o;
    zs_min_opts_init(&o);
    o.verdict = pred_routed;
    zs_min_stats st;
    pred_runs = 0;
    assert_int_equal(zs_minimize(&sc, &o, &st), 0);
    assert_int_equal(st.inv, ZS_INV_I8);
    fprintf(stderr, "minimised with rank edits: %u -> %u lines, %lu predicate runs\n", (unsigned)st.before.lines,
            (unsigned)st.after.lines, pred_runs);
    dump(&sc);
    assert_int_equal(pred_routed(&sc, -1, -1, 0, NULL, NULL), ZS_INV_I8);
    assert_int_equal(sc.cfg.all_ranks, 1);
    assert_int_equal(sc.cfg.world_size, 2);
    assert_int_equal(sc.cfg.verify_collectives, 0);
    assert_int_equal(sc.n_edits, 1);
    assert_int_equal(sc.edit[0].kind, ZS_EDIT_ROUTE);
    assert_int_equal(sc.edit[0].rank, 1);
    assert_int_equal(sc.n_steps, 1);
    for (unsigned m = 0; m < sc.n_modules; m++) assert_int_equal(sc.mod[m].flags, 0);
    assert_true(st.after.calls < st.before.calls);
    assert_true(st.after.modules <= 3); /* net (or moe), e0, e2 */
    assert_int_equal(sc.n_params, 0);
}

/* a predicate that does not need the per-rank programs: they all go */
static int pred_has_head(const zs_scenario *s, int policy, int order_mode, uint64_t cap, zs_violation *v, void *ctx) {
    (void)policy, (void)order_mode, (void)cap, (void)ctx;
    if (!calls_module_named(s, "head")) return ZS_INV_NONE;
    if (v) v->inv = ZS_INV_I1;
    return ZS_INV_I1;
}

static void test_rank_edits_dropped(void **state) {
    (void)state;
    parse_text(moe_text, &sc);
    zs_min_opts o;
    zs_min_opts_init(&o);
    o.verdict = pred_has_head;
    zs_min_stats st;
    assert_int_equal(zs_minimize(&sc, &o, &st), 0);
    assert_int_equal(sc.cfg.all_ranks, 0);
    assert_int_equal(sc.n_edits, 0);
    assert_int_equal(sc.cfg.world_size, 1);
    assert_int_equal(sc.n_modules, 2);
    assert_int_equal(sc.step[0].pass[0].n_calls, 2);
}

/* the default predicate runs all-ranks scenarios in the host world: MoE
 * routing that differs by rank is I8 unless moe gathers all its experts */
static void test_world_i8_minimised(void **state) {
    (void)state;
    parse_text(moe_routed_text, &sc);
    assert_int_equal(sc.edit[0].kind, ZS_EDIT_ROUTE);
    assert_int_equal(zs_scenario_validate(&sc, NULL, 0), 0);
    int v = verdict_of(&sc, -1);
    fprintf(stderr, "MoE with per-rank routing, no gather_always: verdict %s\n", zs_scn_verdict_name(v));
    assert_int_equal(v, ZS_INV_I8);
    zs_min_opts o;
    zs_min_opts_init(&o);
    zs_min_stats st;
    assert_int_equal(zs_minimize(&sc, &o, &st), 0);
    assert_int_equal(st.inv, ZS_INV_I8);
    fprintf(stderr, "minimised I8 in %.2f s, %lu runs: %u -> %u lines\n", st.seconds, st.runs,
            (unsigned)st.before.lines, (unsigned)st.after.lines);
    dump(&sc);
    assert_int_equal(sc.cfg.all_ranks, 1);
    assert_int_equal(sc.n_edits, 1);
    assert_int_equal(sc.edit[0].kind, ZS_EDIT_ROUTE);
    assert_int_equal(verdict_of(&sc, -1), ZS_INV_I8);
    /* gather_always on the routed calls' parent removes the divergence */
    static zs_scenario g;
    assert_int_equal(zs_scenario_copy(&g, &sc), 0);
    int marked = 0;
    for (unsigned k = 0; k < g.n_edits; k++)
        if (g.edit[k].kind == ZS_EDIT_ROUTE) {
            unsigned m = g.step[g.edit[k].step].pass[g.edit[k].pass].calls[g.edit[k].call].module;
            g.mod[g.mod[m].parent].flags |= ZS_MOD_GATHER_ALWAYS;
            marked++;
        }
    assert_int_equal(marked, 1);
    assert_int_equal(zs_scenario_validate(&g, NULL, 0), 0);
    v = verdict_of(&g, -1);
    fprintf(stderr, "with gather_always on the routed call's parent module: %s\n", zs_scn_verdict_name(v));
    assert_int_equal(v, ZS_INV_NONE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drop_call_and_input),
        cmocka_unit_test(test_drop_output_and_module),
        cmocka_unit_test(test_holds),
        cmocka_unit_test(test_big_reuse),
        cmocka_unit_test(test_albert_model),
        cmocka_unit_test(test_big_unused_init_at_register),
        cmocka_unit_test(test_big_unused_lazy_init),
        cmocka_unit_test(test_big_unused_any_i3),
        cmocka_unit_test(test_random_failures),
        cmocka_unit_test(test_rank_edits_kept),
        cmocka_unit_test(test_rank_edits_dropped),
        cmocka_unit_test(test_world_i8_minimised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
