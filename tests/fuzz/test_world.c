/*
 * test_world.c - all-ranks runs in the multi-rank host world and invariant
 * I8 (fuzz/world.h) on hand-built scenarios:
 *
 *  - MoE routing that differs by rank (rank 1's router picks another
 *    expert) is an I8 finding under every policy, and the report shows
 *    both ranks' collectives with their hook stacks;
 *  - the gather-always option on the MoE module removes it (every expert
 *    is gathered on every rank);
 *  - identical ranks never give I8, for W = 2..8;
 *  - the result is the same on every run (20 runs, byte-identical report);
 *  - with verify_collectives the hooks get ZO_ERR_COLLECTIVE_MISMATCH at
 *    the divergence and the world still reports I8 (not ERR);
 *  - a rank's own violation before any divergence is reported as the root
 *    cause, not as I8; with only_i8 the divergence after it is still found.
 *
 * Scenarios are written as .scn text (docs/scenario-format.md): the model
 * and the steps are string-literal macros, joined by moe() below, which
 * adds the config line with the world size and parses the text with
 * zs_scn_parse.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, strtok_r */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "scn.h"
#include "world.h"

static zs_scenario sc;
static zs_world_result wr, wr2;

/* root -> moe (owning the gate parameter) -> expert0..2, each owning one
 * parameter; MOE_MODEL(" gather_always") marks moe gather-always. */
#define MOE_MODEL(moe_flags)                                                                                           \
    "module root\n"                                                                                                    \
    "  module moe" moe_flags "\n"                                                                                      \
    "    module expert0\n"                                                                                             \
    "    module expert1\n"                                                                                             \
    "    module expert2\n"                                                                                             \
    "param moe.gate owner=moe numel=16\n"                                                                              \
    "param expert0.w owner=expert0 numel=24\n"                                                                         \
    "param expert1.w owner=expert1 numel=32\n"                                                                         \
    "param expert2.w owner=expert2 numel=40\n"

/* One train step x -> root -> moe -> expert0. */
#define MOE_STEP                                                                                                       \
    "step train loss=0\n"                                                                                              \
    "  call root(batch_rg) -> 1 use(out0.0)\n"                                                                         \
    "    call moe(arg0) -> 1 use(out0.0)\n"                                                                            \
    "      call expert0(arg0) -> 1 use(arg0)\n"

/* Rank R's router sends step 0's tokens to expert1 instead. */
#define ROUTE(R) "rank " #R " step 0 call expert0 route expert1\n"

/* Parses "config world_size=W ranks=all" followed by text into *s. */
static void moe(zs_scenario *s, int W, const char *text) {
    static char buf[4096];
    int n = snprintf(buf, sizeof buf, "config world_size=%d ranks=all\n%s", W, text);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    zs_scn_error err;
    if (zs_scn_parse(buf, (size_t)n, s, NULL, &err)) {
        fprintf(stderr, "%d:%d: %s\n%s", err.line, err.col, err.msg, buf);
        fail();
    }
}

static void valid(const zs_scenario *s) {
    char err[256];
    if (zs_scenario_validate(s, err, sizeof err)) {
        fprintf(stderr, "invalid scenario: %s\n", err);
        fail();
    }
}

static int world(const zs_scenario *s, int policy, int verify, int only_i8, zs_world_result *r) {
    valid(s);
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = policy;
    o.verify_collectives = verify;
    zs_world_opts wo;
    zs_world_opts_init(&wo);
    wo.only_i8 = only_i8;
    return zs_world_run(s, &o, &wo, r);
}

static void show(const zs_world_result *r) { zs_world_print(stderr, r); }

/* TEST_WORLD_VERBOSE=1: print every report the tests look at */
static void verbose(const zs_world_result *r) {
    const char *v = getenv("TEST_WORLD_VERBOSE");
    if (v && *v && strcmp(v, "0")) show(r);
}

static void moe_routing_is_i8_under_every_policy(void **state) {
    (void)state;
    moe(&sc, 2, MOE_MODEL("") MOE_STEP ROUTE(1));
    for (int pol = 0; pol < 4; pol++) {
        int rc = world(&sc, pol, 0, 0, &wr);
        verbose(&wr);
        if (rc != 1 || wr.verdict != ZS_INV_I8) show(&wr);
        assert_int_equal(rc, 1);
        assert_int_equal(wr.verdict, ZS_INV_I8);
        assert_int_equal(wr.v.inv, ZS_INV_I8);
        assert_true(wr.divergence >= 0);
        assert_int_equal(wr.div_rank[0], 0);
        assert_int_equal(wr.div_rank[1], 1);
        /* both ranks' collectives and hook stacks */
        char a[64], b[64];
        snprintf(a, sizeof a, "rank 0, collective %lld: all-gather [p1 ", (long long)wr.divergence);
        snprintf(b, sizeof b, "rank 1, collective %lld: all-gather [p2 ", (long long)wr.divergence);
        if (!strstr(wr.report, a) || !strstr(wr.report, b)) show(&wr);
        assert_non_null(strstr(wr.report, a));
        assert_non_null(strstr(wr.report, b));
        assert_non_null(strstr(wr.report, "root(m0)#0 > moe(m1)#1 > expert0(m2)#2"));
        assert_non_null(strstr(wr.report, "root(m0)#0 > moe(m1)#1 > expert1(m3)#2"));
        assert_non_null(strstr(wr.report, "pre-forward"));
        assert_non_null(strstr(wr.v.msg, "rank 0 all-gather [p1 24x4B]"));
        assert_non_null(strstr(wr.v.msg, "rank 1 all-gather [p2 32x4B]"));
        assert_int_equal(wr.v.step, 0);
        assert_int_equal(wr.v.policy, pol);
        /* the failed collective stopped both ranks: the hook returned
         * ZO_ERR_COLLECTIVE_MISMATCH (a consequence of I8, no violation) */
        assert_true(wr.mismatched[0] && wr.mismatched[1]);
        for (int q = 0; q < 2; q++) {
            assert_true(wr.rank_result[q].collective_mismatch);
            assert_false(wr.rank_result[q].violated);
        }
        assert_non_null(strstr(wr.world_report, "collective"));
    }
}

static void gather_always_on_the_router_removes_i8(void **state) {
    (void)state;
    moe(&sc, 2, MOE_MODEL(" gather_always") MOE_STEP ROUTE(1));
    for (int pol = 0; pol < 4; pol++) {
        for (int verify = 0; verify <= 1; verify++) {
            /* legacy policies may break I1/I3 on their own: check I8 alone */
            int rc = world(&sc, pol, verify, pol != 0, &wr);
            if (rc != 0) show(&wr);
            assert_int_equal(rc, 0);
            assert_int_equal(wr.verdict, ZS_INV_NONE);
            assert_true(wr.collectives[0] > 0);
            assert_true(wr.collectives[0] == wr.collectives[1]);
        }
    }
    /* the knob used by fuzz_hooks (ZOFUZZ_GATHER_ALWAYS=routers) does the same */
    moe(&sc, 2, MOE_MODEL("") MOE_STEP ROUTE(1));
    assert_int_equal(zs_world_protect_routers(&sc), 1);
    assert_true(sc.mod[1].flags & ZS_MOD_GATHER_ALWAYS);
    assert_int_equal(world(&sc, 0, 0, 0, &wr), 0);
}

static void identical_ranks_never_i8(void **state) {
    (void)state;
    for (int W = 2; W <= 8; W++) {
        moe(&sc, W, MOE_MODEL("") MOE_STEP);
        for (int verify = 0; verify <= 1; verify++) {
            int rc = world(&sc, 0, verify, 0, &wr);
            if (rc != 0) show(&wr);
            assert_int_equal(rc, 0);
            assert_int_equal(wr.world_size, W);
            assert_true(wr.collectives[0] > 0);
            for (int q = 1; q < W; q++) assert_true(wr.collectives[q] == wr.collectives[0]);
            for (int q = 0; q < W; q++) {
                assert_false(wr.mismatched[q]);
                assert_false(wr.rank_result[q].violated);
            }
            assert_string_equal(wr.world_report, "");
        }
    }
}

static void deterministic(void **state) {
    (void)state;
    moe(&sc, 4, MOE_MODEL("") MOE_STEP ROUTE(2)); /* the odd rank out is rank 2 of 4 */
    assert_int_equal(world(&sc, 0, 0, 0, &wr2), 1);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(world(&sc, 0, i & 1 ? 0 : 0, 0, &wr), 1);
        assert_int_equal(wr.verdict, ZS_INV_I8);
        assert_true(wr.divergence == wr2.divergence);
        assert_string_equal(wr.report, wr2.report);
        assert_string_equal(wr.v.msg, wr2.v.msg);
        assert_string_equal(wr.world_report, wr2.world_report);
        for (int q = 0; q < 4; q++) assert_true(wr.collectives[q] == wr2.collectives[q]);
    }
    /* and with the fingerprint check */
    assert_int_equal(world(&sc, 0, 1, 0, &wr2), 1);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(world(&sc, 0, 1, 0, &wr), 1);
        assert_string_equal(wr.report, wr2.report);
    }
}

static void verify_collectives_turns_the_hang_into_mismatch(void **state) {
    (void)state;
    moe(&sc, 2, MOE_MODEL("") MOE_STEP ROUTE(1));
    int rc = world(&sc, 0, 1, 0, &wr);
    verbose(&wr);
    if (rc != 1 || wr.verdict != ZS_INV_I8) show(&wr);
    assert_int_equal(rc, 1);
    assert_int_equal(wr.verdict, ZS_INV_I8);
    /* both ranks' hooks got ZO_ERR_COLLECTIVE_MISMATCH and stopped there */
    for (int q = 0; q < 2; q++) {
        assert_true(wr.mismatched[q]);
        assert_true(wr.rank_result[q].collective_mismatch);
        assert_false(wr.rank_result[q].violated); /* a consequence, not an ERR */
        assert_non_null(strstr(wr.rank_result[q].mismatch_msg, "zo_pre_forward"));
    }
    /* the divergence is the fingerprint exchange before the experts' gathers */
    char a[64];
    snprintf(a, sizeof a, "rank 0, collective %lld: exchange ", (long long)wr.divergence);
    if (!strstr(wr.report, a)) show(&wr);
    assert_non_null(strstr(wr.report, a));
    assert_non_null(strstr(wr.report, "expert1(m3)#2"));
    assert_non_null(strstr(wr.report, "ZO_ERR_COLLECTIVE_MISMATCH"));
}

/* ALBERT-style reuse in step 0 (I1 under reset-on-forward): moe calls
 * expert0 twice (h = E(x); y = E(h)); then the MoE routing difference in
 * step 1. */
#define REUSE_STEP                                                                                                     \
    "step train loss=0\n"                                                                                              \
    "  call root(batch_rg) -> 1 use(out0.0)\n"                                                                         \
    "    call moe(arg0) -> 1 use(out1.0)\n"                                                                            \
    "      call expert0(arg0) -> 1 use(arg0)\n"                                                                        \
    "      call expert0(out0.0) -> 1 use(arg0)\n"

static void own_violation_first_is_the_root_cause(void **state) {
    (void)state;
    moe(&sc, 2, MOE_MODEL("") REUSE_STEP MOE_STEP "rank 1 step 1 call expert0 route expert1\n");
    /* per-call holds until the divergence in step 1 */
    int rc = world(&sc, 0, 0, 0, &wr);
    if (rc != 1 || wr.verdict != ZS_INV_I8) show(&wr);
    assert_int_equal(wr.verdict, ZS_INV_I8);
    assert_int_equal(wr.v.step, 1);
    /* reset-on-forward breaks I1 in step 0 on every rank: that is the finding */
    rc = world(&sc, 1, 0, 0, &wr);
    verbose(&wr);
    if (rc != 1 || wr.verdict != ZS_INV_I1) show(&wr);
    assert_int_equal(rc, 1);
    assert_int_equal(wr.verdict, ZS_INV_I1);
    assert_int_equal(wr.v.step, 0);
    assert_int_equal(wr.rank, 0);
    /* checking I8 alone, the ranks run on and the divergence is found */
    rc = world(&sc, 1, 0, 1, &wr);
    if (rc != 1 || wr.verdict != ZS_INV_I8) show(&wr);
    assert_int_equal(wr.verdict, ZS_INV_I8);
    assert_int_equal(wr.v.step, 1);
}

static void trace_is_per_rank(void **state) {
    (void)state;
    moe(&sc, 2, MOE_MODEL("") MOE_STEP ROUTE(1));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.trace = f;
    assert_int_equal(zs_world_run(&sc, &o, NULL, &wr), 1);
    fclose(f);
    char *r0 = strstr(buf, "# rank 0\n"), *r1 = strstr(buf, "# rank 1\n");
    assert_non_null(r0);
    assert_non_null(r1);
    assert_true(r0 < r1);
    /* rank 0 calls expert0 (m2), rank 1 expert1 (m3) */
    char *a2 = strstr(r0, "A m=2"), *a3 = strstr(r1, "A m=3");
    assert_non_null(a2);
    assert_true(a2 < r1);
    assert_non_null(a3);
    free(buf);
}

/* Two threads running worlds at the same time (one gets the worker pool,
 * the other starts its own threads): same results as alone. */
static zs_scenario sc_par;
static zs_world_result par_res[2];
static int par_ok[2];
static void *par_main(void *arg) {
    int k = (int)(intptr_t)arg;
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    par_ok[k] = 1;
    for (int i = 0; i < 10; i++) {
        if (zs_world_run(&sc_par, &o, NULL, &par_res[k]) != 1 || par_res[k].verdict != ZS_INV_I8 ||
            strcmp(par_res[k].report, wr2.report))
            par_ok[k] = 0;
    }
    return NULL;
}

static void concurrent_worlds(void **state) {
    (void)state;
    moe(&sc_par, 4, MOE_MODEL("") MOE_STEP ROUTE(1));
    assert_int_equal(world(&sc_par, 0, 0, 0, &wr2), 1);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&th[k], NULL, par_main, (void *)(intptr_t)k), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    assert_true(par_ok[0]);
    assert_true(par_ok[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moe_routing_is_i8_under_every_policy),
        cmocka_unit_test(gather_always_on_the_router_removes_i8),
        cmocka_unit_test(identical_ranks_never_i8),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(verify_collectives_turns_the_hang_into_mismatch),
        cmocka_unit_test(own_violation_first_is_the_root_cause),
        cmocka_unit_test(trace_is_per_rank),
        cmocka_unit_test(concurrent_worlds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
