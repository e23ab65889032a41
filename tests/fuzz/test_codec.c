/*
 * test_codec.c - property tests of the scenario byte codec (fuzz/codec.c):
 * every byte string decodes to a valid scenario, decode(encode(s)) == s,
 * encoding is canonical, validation rejects what the model cannot express.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ranks.h"
#include "scenario.h"
#include "sim.h"
#include "zs_random.h"

static zs_scenario a, b, c;
static uint8_t in[4096], enc1[ZS_ENCODE_MAX], enc2[ZS_ENCODE_MAX];

/* How many random trials a property test runs: `full` (the long set,
 * ZO_TEST_LONG=1: ctest label long, ./build.sh test-long) or an eighth of
 * it (./build.sh test's fast set); the same seeds, so the fast set's
 * inputs are the first trials of the long set's. */
static uint64_t n_trials(uint64_t full) {
    const char *e = getenv("ZO_TEST_LONG");
    return e && !strcmp(e, "1") ? full : full / 8;
}

static void assert_roundtrip(const zs_scenario *s) {
    char err[256];
    int v = zs_scenario_validate(s, err, sizeof err);
    if (v) fprintf(stderr, "validate: %s\n", err);
    assert_int_equal(v, 0);
    size_t n1 = zs_encode(s, enc1, sizeof enc1);
    assert_true(n1 > 0 && n1 <= sizeof enc1);
    zs_decode(enc1, n1, &b);
    assert_true(zs_scenario_equal(s, &b));
    /* canonical: encoding the decoded scenario gives the same bytes */
    size_t n2 = zs_encode(&b, enc2, sizeof enc2);
    assert_int_equal(n1, n2);
    assert_memory_equal(enc1, enc2, n1);
}

static void test_empty_input(void **state) {
    (void)state;
    zs_decode(NULL, 0, &a);
    zs_scenario_init(&c);
    assert_true(zs_scenario_equal(&a, &c));
    assert_int_equal(a.n_modules, 1);
    assert_int_equal(a.n_params, 1);
    assert_int_equal(a.par[0].numel, 1);
    assert_int_equal(a.par[0].elem_size, 4);
    assert_int_equal(a.cfg.world_size, 1);
    assert_int_equal(a.cfg.policy, 0);
    assert_int_equal(a.cfg.param_persistence_threshold, 0);
    assert_int_equal(a.n_steps, 1);
    assert_int_equal(a.step[0].kind, ZS_STEP_TRAIN);
    const zs_pass *p = &a.step[0].pass[0];
    assert_int_equal(p->n_calls, 1);
    assert_int_equal(p->calls[0].n_in, 1);
    assert_int_equal(p->calls[0].in[0].kind, ZS_REF_BATCH_RG);
    assert_int_equal(p->calls[0].n_out, 1);
    assert_int_equal(p->loss_mask, 1);
    assert_roundtrip(&a);
    /* zero bytes read like missing bytes */
    uint8_t zeros[64] = {0};
    zs_decode(zeros, sizeof zeros, &b);
    assert_true(zs_scenario_equal(&a, &b));
}

/* Thousands of random byte strings: decode -> valid -> encode -> decode. */
static void test_random_roundtrip(void **state) {
    (void)state;
    unsigned long calls = 0, modules = 0, maxcalls = 0;
    const uint64_t trials = n_trials(5000);
    for (uint64_t t = 0; t < trials; t++) {
        size_t n = zs_rand_input(42, t, in, t % 3 == 0 ? 64 : sizeof in);
        size_t used = zs_decode(in, n, &a);
        assert_true(used <= n);
        assert_roundtrip(&a);
        /* decode(encode(decode(x))) == decode(x) */
        size_t m = zs_encode(&a, enc1, sizeof enc1);
        zs_decode(enc1, m, &c);
        assert_true(zs_scenario_equal(&a, &c));
        modules += a.n_modules;
        for (unsigned s = 0; s < a.n_steps; s++)
            for (unsigned k = 0; k < a.step[s].n_passes; k++) {
                calls += a.step[s].pass[k].n_calls;
                if (a.step[s].pass[k].n_calls > maxcalls) maxcalls = a.step[s].pass[k].n_calls;
            }
    }
    /* the decoder reaches structure, not only trivial scenarios */
    assert_true(modules / trials >= 4);
    assert_true(maxcalls >= 20);
    (void)calls;
}

/* Small inputs mean small scenarios. */
static void test_small_inputs(void **state) {
    (void)state;
    for (unsigned v = 0; v < 256; v++) {
        uint8_t one = (uint8_t)v;
        zs_decode(&one, 1, &a);
        assert_int_equal(a.n_modules, 1);
        assert_int_equal(a.n_steps, 1);
        assert_int_equal(a.step[0].pass[0].n_calls, 1);
        assert_roundtrip(&a);
    }
}

/* ALBERT-style reuse: root calls child 1 twice, chained. */
static void build_reuse(zs_scenario *s) {
    zs_scenario_init(s);
    s->n_modules = 2;
    s->mod[1].parent = 0;
    s->mod[1].flags = 0;
    s->n_params = 1;
    s->par[0].owner = 1;
    s->par[0].numel = 1000;
    s->par[0].elem_size = 4;
    zs_pass *p = &s->step[0].pass[0];
    p->n_calls = 3;
    zs_call *r = &p->calls[0];
    r->n_use = 1;
    r->use[0] = (zs_ref){ZS_REF_OUT, 2, 0, 0, 0};
    zs_call *c1 = &p->calls[1];
    memset(c1, 0, sizeof *c1);
    c1->module = 1;
    c1->parent = 0;
    c1->catcher = ZS_NONE;
    c1->n_in = 1;
    c1->in[0] = (zs_ref){ZS_REF_ARG, 0, 0, 0, 0};
    c1->n_out = 1;
    c1->n_use = 1;
    c1->use[0] = (zs_ref){ZS_REF_ARG, 0, 0, 0, 0};
    zs_call *c2 = &p->calls[2];
    *c2 = *c1;
    c2->in[0] = (zs_ref){ZS_REF_OUT, 1, 0, 0, 0};
}

static void test_built_scenarios(void **state) {
    (void)state;
    build_reuse(&a);
    assert_roundtrip(&a);

    /* names are annotations: equal ignores them, strict does not */
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    snprintf(c.mod[1].name, ZS_NAME_LEN, "layer");
    assert_true(zs_scenario_equal(&a, &c));
    assert_false(zs_scenario_equal_strict(&a, &c));

    /* explicit thresholds outside the class tables, odd elem size, big numel */
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.cfg.max_live_parameters = 123457;
    c.cfg.param_persistence_threshold = ZS_INF;
    c.par[0].elem_size = 3;
    c.par[0].numel = ZS_MAX_NUMEL;
    c.cfg.world_size = 7;
    c.cfg.rank = 6;
    c.cfg.deferred = 1;
    c.cfg.progress_every = 3;
    c.cfg.order_mode = ZS_ORDER_FUZZED;
    c.n_order = 3;
    c.order[0] = 9;
    c.order[1] = 0;
    c.order[2] = 255;
    assert_roundtrip(&c);

    /* every step kind, checkpoint flags, a caught exception, tied use */
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.n_steps = 5;
    for (unsigned k = 0; k < 5; k++) {
        assert_int_equal(zs_step_copy(&c.step[k], &a.step[0]), 0);
        c.step[k].kind = (uint8_t)k;
        c.step[k].n_passes = (k == ZS_STEP_ACCUM || k == ZS_STEP_INTERLEAVE) ? 3 : 1;
        for (unsigned q = 1; q < c.step[k].n_passes; q++) {
            zs_pass *d = &c.step[k].pass[q];
            const zs_pass *p0 = &c.step[k].pass[0];
            assert_int_equal(zs_pass_reserve(d, p0->n_calls), 0);
            d->n_calls = p0->n_calls;
            d->loss_mask = p0->loss_mask;
            memcpy(d->calls, p0->calls, p0->n_calls * sizeof *p0->calls);
        }
    }
    c.step[ZS_STEP_EVAL].pass[0].loss_mask = 0;
    c.step[0].pass[0].calls[1].flags = ZS_CALL_CKPT_RE;
    c.step[2].pass[0].calls[2].flags = ZS_CALL_CKPT_NRE | ZS_CALL_NO_GRAD;
    /* step 3: the second call raises, the root catches; the root then
     * consumes the first call's output */
    zs_pass *p = &c.step[3].pass[0];
    p->calls[2].flags = ZS_CALL_RAISE;
    p->calls[2].catcher = 0;
    p->calls[2].n_out = 0;
    p->calls[2].n_use = 0;
    p->calls[0].use[0] = (zs_ref){ZS_REF_OUT, 1, 0, 1, 0};
    c.n_modules = 3;
    c.mod[2].parent = 1;
    c.mod[2].flags = ZS_MOD_Z3_LEAF;
    c.n_uses = 1;
    c.use[0] = (zs_use){0, 0};
    assert_roundtrip(&c);
}

static void expect_invalid(const zs_scenario *s, const char *needle) {
    char err[256];
    assert_int_not_equal(zs_scenario_validate(s, err, sizeof err), 0);
    if (needle && !strstr(err, needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", err, needle);
        fail();
    }
    assert_int_equal(zs_encode(s, enc1, sizeof enc1), 0);
}

static void test_invalid(void **state) {
    (void)state;
    build_reuse(&a);
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.cfg.world_size = 9;
    expect_invalid(&c, "world_size");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.cfg.rank = 1;
    expect_invalid(&c, "rank");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.n_modules = 3;
    c.mod[2].parent = 5;
    expect_invalid(&c, "module 2");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.par[0].numel = 0;
    expect_invalid(&c, "numel");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.n_uses = 1;
    c.use[0] = (zs_use){1, 0}; /* the owner itself */
    expect_invalid(&c, "use 0");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[2].module = 0; /* callee not a child module */
    expect_invalid(&c, "call 2");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[1].in[0] = (zs_ref){ZS_REF_OUT, 2, 0, 0, 0}; /* a later call */
    expect_invalid(&c, "call 1");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].loss_mask = 2; /* root has one output */
    expect_invalid(&c, "loss_mask");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[0].flags = ZS_CALL_CKPT_RE;
    expect_invalid(&c, "root");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[1].flags = ZS_CALL_CKPT_RE | ZS_CALL_RAISE;
    expect_invalid(&c, "raise");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[2].parent = 1; /* call 2 made by call 1: callee not a child */
    expect_invalid(&c, NULL);
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].n_passes = 2;
    expect_invalid(&c, "n_passes");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.n_order = 1; /* order bytes with the engine order */
    expect_invalid(&c, "order");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[1].catcher = 0; /* catcher without raise */
    expect_invalid(&c, "catcher");
}


/* ------------------------------------------------------------------ */
/* Per-rank programs, verify_collectives, gather-always (the tail)      */
/* ------------------------------------------------------------------ */

static zs_call mkcall(unsigned module, unsigned parent, unsigned n_in, zs_ref in0, unsigned n_out) {
    zs_call c;
    memset(&c, 0, sizeof c);
    c.module = (zs_id)module;
    c.parent = (zs_id)parent;
    c.catcher = ZS_NONE;
    c.n_in = (uint8_t)n_in;
    c.in[0] = in0;
    c.n_out = (uint8_t)n_out;
    return c;
}

#define ARG(i)    ((zs_ref){ZS_REF_ARG, 0, (i), 0, 0})
#define OUT(c, j) ((zs_ref){ZS_REF_OUT, (c), (j), 0, 0})

/* An MoE model: net -> moe(router, e0(fc), e1(fc), e2(fc)), head.  Each
 * pass: net(batch_rg) calls moe and head; moe calls router, then e0 and e1
 * on the router's output and consumes both experts' outputs.
 *   call 0 net, 1 moe, 2 router, 3 e0, 4 e0.fc, 5 e1, 6 e1.fc, 7 head */
static void build_moe(zs_scenario *s, unsigned n_steps) {
    zs_scenario_init(s);
    static const zs_id parent[10] = {ZS_NONE, 0, 1, 1, 3, 1, 5, 1, 7, 0};
    static const char *const names[10] = {"net", "moe", "router", "e0", "fc", "e1", "fc", "e2", "fc", "head"};
    s->n_modules = 10;
    for (unsigned m = 0; m < 10; m++) {
        s->mod[m].parent = parent[m];
        s->mod[m].flags = 0;
        snprintf(s->mod[m].name, ZS_NAME_LEN, "%s", names[m]);
    }
    static const uint8_t owner[5] = {2, 4, 6, 8, 9};
    s->n_params = 5;
    for (unsigned q = 0; q < 5; q++) {
        s->par[q].owner = owner[q];
        s->par[q].numel = 100 + q;
        s->par[q].elem_size = 4;
        s->par[q].flags = 0;
    }
    s->cfg.world_size = 3;
    s->n_steps = (uint8_t)n_steps;
    for (unsigned st = 0; st < n_steps; st++) {
        zs_step *S = &s->step[st];
        S->kind = ZS_STEP_TRAIN;
        S->n_passes = 1;
        zs_pass *p = &S->pass[0];
        p->n_calls = 8;
        p->loss_mask = 1;
        p->calls[0] = mkcall(0, ZS_NONE, 1, (zs_ref){ZS_REF_BATCH_RG, 0, 0, 0, 0}, 1);
        p->calls[0].n_use = 1;
        p->calls[0].use[0] = OUT(7, 0);
        p->calls[1] = mkcall(1, 0, 1, ARG(0), 1);
        p->calls[1].n_use = 2;
        p->calls[1].use[0] = OUT(3, 0);
        p->calls[1].use[1] = OUT(5, 0);
        p->calls[2] = mkcall(2, 1, 1, ARG(0), 1);
        p->calls[2].n_use = 1;
        p->calls[2].use[0] = ARG(0);
        for (unsigned e = 0; e < 2; e++) {
            unsigned c = 3 + 2 * e;
            p->calls[c] = mkcall(3 + 2 * e, 1, 1, OUT(2, 0), 1);
            p->calls[c].n_use = 1;
            p->calls[c].use[0] = OUT(c + 1, 0);
            p->calls[c + 1] = mkcall(4 + 2 * e, c, 1, ARG(0), 1);
            p->calls[c + 1].n_use = 1;
            p->calls[c + 1].use[0] = ARG(0);
        }
        p->calls[7] = mkcall(9, 0, 1, OUT(1, 0), 1);
        p->calls[7].n_use = 1;
        p->calls[7].use[0] = ARG(0);
    }
}

static zs_rank_edit mkedit(unsigned rank, unsigned kind, unsigned step, unsigned pass, unsigned call, unsigned module) {
    return (zs_rank_edit){(uint8_t)rank, (uint8_t)kind, (uint8_t)step, (uint8_t)pass, (zs_id)call, (zs_id)module};
}

static zs_scenario r0, r1, r2;

static void for_rank_ok(const zs_scenario *s, unsigned r, zs_scenario *out) {
    char err[256];
    int rc = zs_scenario_for_rank(s, r, out, err, sizeof err);
    if (rc) fprintf(stderr, "for_rank(%u): %s\n", r, err);
    assert_int_equal(rc, 0);
    rc = zs_scenario_validate(out, err, sizeof err);
    if (rc) fprintf(stderr, "for_rank(%u) invalid: %s\n", r, err);
    assert_int_equal(rc, 0);
    assert_int_equal(out->cfg.rank, r);
    assert_int_equal(out->cfg.all_ranks, 0);
    assert_int_equal(out->n_edits, 0);
}

/* One edit of every kind, materialised and checked call by call. */
static void test_rank_edits(void **state) {
    (void)state;
    build_moe(&a, 4);
    assert_roundtrip(&a);
    a.cfg.all_ranks = 1;
    a.cfg.verify_collectives = 1;
    a.n_edits = 5;
    a.edit[0] = mkedit(0, ZS_EDIT_RAISE, 2, 0, 2, 0);     /* rank 0 raises in the router, step 2 */
    a.edit[1] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 3, 7);     /* rank 1 routes e0's tokens to e2 */
    a.edit[2] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 5, 0);      /* ... and skips e1 */
    a.edit[3] = mkedit(1, ZS_EDIT_EXIT, 1, 0, 3, 0);      /* step 1: exits before e0 */
    a.edit[4] = mkedit(1, ZS_EDIT_SKIP_STEP, 3, 0, 0, 0); /* step 3: rank 1 has no batch */
    assert_roundtrip(&a);

    /* rank 2: the base program */
    for_rank_ok(&a, 2, &r2);
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.cfg.rank = 2;
    c.cfg.all_ranks = 0;
    c.n_edits = 0;
    assert_true(zs_scenario_equal(&r2, &c));
    assert_int_equal(r2.cfg.verify_collectives, 1);

    /* rank 0: step 2 raises in the router, caught by the step's code */
    for_rank_ok(&a, 0, &r0);
    assert_int_equal(r0.n_steps, 4);
    const zs_pass *p = &r0.step[2].pass[0];
    assert_int_equal(p->n_calls, 3); /* net, moe, router: nothing after the raise */
    assert_true(p->calls[2].flags & ZS_CALL_RAISE);
    assert_int_equal(p->calls[2].catcher, ZS_NONE);
    for (unsigned k = 0; k < 3; k++) {
        assert_int_equal(p->calls[k].n_out, 0);
        assert_int_equal(p->calls[k].n_use, 0);
    }
    assert_int_equal(p->loss_mask, 0);
    assert_int_equal(r0.step[1].pass[0].n_calls, 8);

    /* rank 1 */
    for_rank_ok(&a, 1, &r1);
    assert_int_equal(r1.n_steps, 3); /* step 3 skipped */
    p = &r1.step[0].pass[0];
    assert_int_equal(p->n_calls, 6); /* net moe router e2 e2.fc head */
    assert_int_equal(p->calls[3].module, 7);
    assert_int_equal(p->calls[4].module, 8); /* the k-th child of e0 maps to e2's */
    assert_int_equal(p->calls[4].parent, 3);
    assert_int_equal(p->calls[5].module, 9);
    /* moe consumed e1's output, now bypassed to e1's input (router's output) */
    assert_int_equal(p->calls[1].n_use, 2);
    assert_true(p->calls[1].use[0].kind == ZS_REF_OUT && p->calls[1].use[0].call == 3);
    assert_true(p->calls[1].use[1].kind == ZS_REF_OUT && p->calls[1].use[1].call == 2);
    assert_int_equal(p->calls[0].use[0].call, 5); /* head renumbered */
    p = &r1.step[1].pass[0];
    assert_int_equal(p->n_calls, 4); /* net moe router head: e0 and e1 exited */
    assert_int_equal(p->calls[3].module, 9);
    assert_int_equal(p->calls[1].n_use, 2);
    assert_true(p->calls[1].use[0].call == 2 && p->calls[1].use[1].call == 2);
    assert_int_equal(p->loss_mask, 1);

    /* aliasing in == out works */
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    assert_int_equal(zs_scenario_for_rank(&c, 1, &c, NULL, 0), 0);
    assert_true(zs_scenario_equal(&c, &r1));

    /* with n_in = 0 a bypassed in[] becomes batch and a use[] is dropped */
    build_moe(&a, 1);
    a.step[0].pass[0].calls[5].n_in = 0;
    a.step[0].pass[0].calls[6].in[0] = (zs_ref){ZS_REF_BATCH, 0, 0, 0, 0};
    assert_roundtrip(&a);
    a.cfg.all_ranks = 1;
    a.n_edits = 1;
    a.edit[0] = mkedit(2, ZS_EDIT_SKIP, 0, 0, 5, 0);
    assert_roundtrip(&a);
    for_rank_ok(&a, 2, &r2);
    assert_int_equal(r2.step[0].pass[0].calls[1].n_use, 1);
    /* an exited call whose output feeds a later sibling: the sibling gets the input */
    build_moe(&a, 1);
    a.step[0].pass[0].calls[5].in[0] = (zs_ref){ZS_REF_OUT, 3, 0, 1, 0}; /* e1(out e0, detached) */
    assert_roundtrip(&a);
    a.cfg.all_ranks = 1;
    a.n_edits = 1;
    a.edit[0] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 3, 0);
    assert_roundtrip(&a);
    for_rank_ok(&a, 1, &r1);
    p = &r1.step[0].pass[0];
    assert_int_equal(p->n_calls, 6);
    assert_int_equal(p->calls[3].module, 5);
    assert_true(p->calls[3].in[0].kind == ZS_REF_OUT && p->calls[3].in[0].call == 2 && p->calls[3].in[0].detach == 1);
}

static void test_rank_edits_invalid(void **state) {
    (void)state;
    build_moe(&a, 2);
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.cfg.world_size = 1;
    c.cfg.all_ranks = 1;
    expect_invalid(&c, "all_ranks");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.n_edits = 1;
    c.edit[0] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 5, 0);
    expect_invalid(&c, "all_ranks");
    c.cfg.all_ranks = 1;
    assert_roundtrip(&c);
    c.cfg.all_ranks = 2;
    expect_invalid(&c, "all_ranks");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.cfg.verify_collectives = 2;
    expect_invalid(&c, "verify_collectives");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.mod[9].flags = ZS_MOD_GATHER_ALWAYS | ZS_MOD_Z3_LEAF;
    expect_invalid(&c, "gather_always");
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.mod[1].flags = 0x4;
    expect_invalid(&c, "flags");

    a.cfg.all_ranks = 1;
    a.n_edits = 2;
    /* not sorted */
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.edit[0] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 5, 0);
    c.edit[1] = mkedit(0, ZS_EDIT_SKIP, 0, 0, 5, 0);
    expect_invalid(&c, "sorted");
    /* two edits on one call */
    c.edit[0] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 3, 7);
    c.edit[1] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 3, 0);
    expect_invalid(&c, "two edits");
    /* an edit inside a skipped subtree */
    c.edit[0] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 3, 0);
    c.edit[1] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 4, 0);
    expect_invalid(&c, "removes");
    /* an edit on a later sibling of an exit */
    c.edit[0] = mkedit(1, ZS_EDIT_EXIT, 0, 0, 3, 0);
    c.edit[1] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 5, 7);
    expect_invalid(&c, "removes");
    /* an edit after a raise */
    c.edit[0] = mkedit(1, ZS_EDIT_RAISE, 0, 0, 2, 0);
    c.edit[1] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 3, 0);
    expect_invalid(&c, "removes");
    /* every step skipped */
    c.edit[0] = mkedit(1, ZS_EDIT_SKIP_STEP, 0, 0, 0, 0);
    c.edit[1] = mkedit(1, ZS_EDIT_SKIP_STEP, 1, 0, 0, 0);
    expect_invalid(&c, "every step");
    /* skip-step with another edit of the step */
    c.edit[0] = mkedit(1, ZS_EDIT_RAISE, 0, 0, 0, 0);
    c.edit[1] = mkedit(1, ZS_EDIT_SKIP_STEP, 0, 0, 0, 0);
    expect_invalid(&c, "skip-step");
    c.n_edits = 1;
    /* route to a module that is not a sibling, or to the callee itself */
    c.edit[0] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 3, 9);
    expect_invalid(&c, "sibling");
    c.edit[0] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 3, 3);
    expect_invalid(&c, "sibling");
    /* route whose subtree does not map: the router has no children */
    c.edit[0] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 3, 2);
    expect_invalid(&c, "no child");
    /* route to a differently shaped sibling whose subtree does map is fine */
    c.edit[0] = mkedit(1, ZS_EDIT_ROUTE, 0, 0, 2, 3);
    assert_roundtrip(&c);
    /* skip / exit of the root, rank out of range, module on a skip */
    c.edit[0] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 0, 0);
    expect_invalid(&c, "edit 0");
    c.edit[0] = mkedit(3, ZS_EDIT_SKIP, 0, 0, 3, 0);
    expect_invalid(&c, "rank");
    c.edit[0] = mkedit(1, ZS_EDIT_SKIP, 0, 0, 3, 1);
    expect_invalid(&c, "module");
    /* raise inside a checkpointed call */
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.step[0].pass[0].calls[3].flags = ZS_CALL_CKPT_NRE;
    c.n_edits = 1;
    c.edit[0] = mkedit(1, ZS_EDIT_RAISE, 0, 0, 4, 0);
    expect_invalid(&c, "edit 0");
}

/* Gather-always: tail-encoded, and the module's fetch is its subtree's. */
static void test_gather_always(void **state) {
    (void)state;
    build_moe(&a, 1);
    a.mod[1].flags = ZS_MOD_GATHER_ALWAYS;
    a.mod[5].flags = ZS_MOD_GATHER_ALWAYS; /* below another: no effect */
    a.mod[7].flags = ZS_MOD_Z3_LEAF;
    assert_roundtrip(&a);
    static zs_id ids[ZS_MAX_PARAMS];
    assert_int_equal(zs_module_param_set(&a, 1, ids), 4); /* router, e0.fc, e1.fc, e2.fc */
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[3], 3);
    assert_int_equal(zs_module_param_set(&a, 5, ids), 0); /* e1 owns nothing itself */
    assert_int_equal(zs_module_param_set(&a, 7, ids), 1); /* the leaf e2: e2.fc */
    assert_true(zs_module_gathers_subtree(&a, 1));
    assert_false(zs_module_gathers_subtree(&a, 5));
    assert_true(zs_module_under_gather_always(&a, 4));
    assert_true(zs_module_under_gather_always(&a, 5));
    assert_false(zs_module_under_gather_always(&a, 1));
    assert_false(zs_module_under_gather_always(&a, 9));
    assert_int_equal(zs_scenario_copy(&c, &a), 0);
    c.mod[5].flags = 0;
    assert_false(zs_scenario_equal(&a, &c));
}

/* A scenario beyond the byte codec's bounds: a root module with n children
 * (n + 1 modules, one parameter each), one pass in which the root calls each
 * child once on its input and consumes every child's output... up to
 * ZS_MAX_USE of them.  n = 299: 300 modules and calls, 299 child calls. */
static void build_wide(zs_scenario *s, unsigned n) {
    zs_scenario_free(s);
    assert_int_equal(zs_scenario_init(s), 0);
    assert_int_equal(zs_scenario_reserve(s, n + 1, n + 1, 0), 0);
    assert_int_equal(zs_pass_reserve(&s->step[0].pass[0], n + 1), 0);
    s->n_modules = n + 1;
    s->n_params = n + 1;
    for (unsigned m = 0; m <= n; m++) {
        s->mod[m].parent = m ? 0 : ZS_NONE;
        s->mod[m].flags = 0;
        snprintf(s->mod[m].name, ZS_NAME_LEN, m ? "l%u" : "root", m);
        s->par[m].owner = m;
        s->par[m].numel = 8;
        s->par[m].elem_size = 4;
        s->par[m].flags = 0;
    }
    zs_pass *p = &s->step[0].pass[0];
    p->n_calls = n + 1;
    p->loss_mask = 1;
    p->calls[0] = mkcall(0, ZS_NONE, 1, (zs_ref){ZS_REF_BATCH_RG, 0, 0, 0, 0}, 1);
    for (unsigned k = 1; k <= n; k++) {
        p->calls[k] = mkcall(k, 0, 1, ARG(0), 1);
        p->calls[k].n_use = 1;
        p->calls[k].use[0] = ARG(0);
    }
    p->calls[0].n_use = ZS_MAX_USE;
    for (unsigned u = 0; u < ZS_MAX_USE; u++) p->calls[0].use[u] = OUT(n - u, 0);
}

/* The model's bounds exceed the codec's: such a scenario validates, prints,
 * parses back, copies and replays, and zs_encode refuses it. */
static void test_beyond_codec(void **state) {
    (void)state;
    char err[256];
    build_wide(&a, 299);
    assert_int_equal(zs_scenario_validate(&a, err, sizeof err), 0);
    assert_false(zs_scenario_fits_codec(&a));
    assert_int_equal(zs_encode(&a, enc1, sizeof enc1), 0);
    /* (the .scn print/parse round trip of such a scenario: tests/corpus/test_scn.c) */
    assert_int_equal(zs_scenario_copy(&b, &a), 0);
    assert_int_equal(b.step[0].pass[0].n_calls, 300);
    assert_int_equal(b.step[0].pass[0].calls[299].module, 299);
    assert_int_equal(zs_scenario_copy(&c, &b), 0);
    assert_true(zs_scenario_equal_strict(&a, &c));
    /* the copy owns its arrays: changing it leaves the original */
    c.mod[299].flags = ZS_MOD_Z3_LEAF;
    assert_false(zs_scenario_equal(&a, &c));
    zs_sim_result r;
    assert_int_equal(zs_sim_run(&a, NULL, &r), 0);
    assert_false(r.violated);
    /* within the codec's bounds again: bytes as before */
    build_wide(&a, 15);
    assert_true(zs_scenario_fits_codec(&a));
    assert_roundtrip(&a);
    zs_scenario_free(&a);
    zs_scenario_free(&b);
    zs_scenario_free(&c);
    assert_int_equal(a.n_modules, 0);
    assert_null(a.mod);
}

/* Over the model's own bounds: 4,097 child calls in one call body. */
static void test_over_model_bounds(void **state) {
    (void)state;
    char err[256];
    build_wide(&a, 1);
    zs_pass *p = &a.step[0].pass[0];
    unsigned n = ZS_MAX_CHILD_CALLS + 1;
    assert_int_equal(zs_pass_reserve(p, n + 1), 0);
    for (unsigned k = 1; k <= n; k++) {
        p->calls[k] = mkcall(1, 0, 1, ARG(0), 1);
        p->calls[k].n_use = 1;
        p->calls[k].use[0] = ARG(0);
    }
    p->n_calls = n + 1;
    p->calls[0].n_use = 1;
    p->calls[0].use[0] = OUT(n, 0);
    assert_int_equal(zs_scenario_validate(&a, err, sizeof err), -1);
    assert_non_null(strstr(err, "n_children"));
    /* one child call fewer is within them */
    p->n_calls = n;
    p->calls[0].use[0] = OUT(n - 1, 0);
    assert_int_equal(zs_scenario_validate(&a, err, sizeof err), 0);
    /* and reserve refuses what the model cannot hold */
    assert_int_equal(zs_pass_reserve(p, ZS_MAX_CALLS + 1), -1);
    assert_int_equal(zs_scenario_reserve(&a, ZS_MAX_MODULES + 1, 1, 0), -1);
    zs_scenario_free(&a);
}

/* The tail keeps every old byte string's meaning: no tail, no bytes. */
static void test_tail_compat(void **state) {
    (void)state;
    build_moe(&a, 2);
    size_t n0 = zs_encode(&a, enc1, sizeof enc1);
    a.cfg.verify_collectives = 1;
    size_t n1 = zs_encode(&a, enc2, sizeof enc2);
    assert_true(n1 > n0);
    assert_memory_equal(enc1, enc2, n0); /* the tail follows the old encoding */
    /* fuzzed order with a tail: the order bytes are padded to ZS_MAX_ORDER */
    a.cfg.order_mode = ZS_ORDER_FUZZED;
    a.n_order = 2;
    a.order[0] = 3;
    a.order[1] = 1;
    assert_roundtrip(&a);
    zs_decode(enc1, zs_encode(&a, enc1, sizeof enc1), &c);
    assert_int_equal(c.n_order, ZS_MAX_ORDER);
    assert_int_equal(c.cfg.verify_collectives, 1);
    assert_true(zs_scenario_equal(&a, &c));
    a.cfg.verify_collectives = 0;
    a.cfg.all_ranks = 1;
    a.n_edits = 1;
    a.edit[0] = mkedit(2, ZS_EDIT_ROUTE, 1, 0, 5, 3);
    assert_roundtrip(&a);
    /* the profiles come last in the tail (one byte each): an encoding that
     * ends before them decodes as the current torch and DeepSpeed */
    a.cfg.torch_profile = ZS_TORCH_113;
    a.cfg.ds_profile = ZS_DS_015;
    assert_roundtrip(&a);
    size_t n2 = zs_encode(&a, enc1, sizeof enc1);
    zs_decode(enc1, n2, &c);
    assert_int_equal(c.cfg.torch_profile, ZS_TORCH_113);
    assert_int_equal(c.cfg.ds_profile, ZS_DS_015);
    zs_decode(enc1, n2 - 2, &c);
    assert_int_equal(c.cfg.torch_profile, ZS_TORCH_2);
    assert_int_equal(c.cfg.ds_profile, ZS_DS_019);
    assert_int_equal(c.n_edits, 1);
}

/* Random bytes after a scenario's encoding give valid, useful edits. */
static void test_random_tails(void **state) {
    (void)state;
    unsigned long kinds[ZS_EDIT_KINDS] = {0}, with_edits = 0, ga = 0;
    const unsigned long trials = (unsigned long)n_trials(4000);
    for (uint64_t t = 0; t < trials; t++) {
        /* a random base scenario with W >= 2 and the engine order */
        size_t n = zs_rand_input(7, t, in, 600);
        zs_decode(in, n, &a);
        a.cfg.world_size = (uint8_t)(2 + t % 3);
        a.cfg.rank = 0;
        a.cfg.order_mode = ZS_ORDER_ENGINE;
        a.n_order = 0;
        a.cfg.all_ranks = 0;
        a.cfg.verify_collectives = 0;
        a.cfg.torch_profile = 0;
        a.cfg.ds_profile = 0;
        a.n_edits = 0;
        for (unsigned m = 0; m < a.n_modules; m++) a.mod[m].flags &= ZS_MOD_Z3_LEAF;
        size_t m = zs_encode(&a, enc1, sizeof enc1); /* no tail */
        assert_true(m > 0 && m + 64 <= sizeof enc1);
        uint64_t st = t * 977 + 5;
        zs_rand_bytes(&st, enc1 + m, 64);
        enc1[m] |= 1; /* all_ranks */
        zs_decode(enc1, m + 64, &c);
        assert_roundtrip(&c);
        assert_int_equal(c.cfg.all_ranks, 1);
        if (c.n_edits) with_edits++;
        for (unsigned k = 0; k < c.n_edits; k++) kinds[c.edit[k].kind]++;
        for (unsigned q = 0; q < c.n_modules; q++) ga += (c.mod[q].flags & ZS_MOD_GATHER_ALWAYS) != 0;
        for (unsigned r = 0; r < c.cfg.world_size; r++) for_rank_ok(&c, r, &r0);
    }
    fprintf(
        stderr,
        "random tails: %lu/%lu with edits; route %lu skip %lu exit %lu raise %lu skip-step %lu; gather-always modules %lu\n",
        with_edits, trials, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], ga);
    assert_true(with_edits > trials / 4);
    /* per 4000 trials: more than 50 of each edit kind, 100 gather-always modules */
    for (unsigned k = 0; k < ZS_EDIT_KINDS; k++) assert_true(kinds[k] * 4000 > 50 * trials);
    assert_true(ga * 4000 > 100 * trials);
}

/* Any byte string: decode -> valid -> every rank's program valid. */
static void test_random_bytes_for_rank(void **state) {
    (void)state;
    unsigned long all = 0;
    const uint64_t trials = n_trials(3000);
    for (uint64_t t = 0; t < trials; t++) {
        size_t n = zs_rand_input(99, t, in, t % 2 ? 300 : sizeof in);
        zs_decode(in, n, &a);
        char err[256];
        int rc = zs_scenario_validate(&a, err, sizeof err);
        if (rc) fprintf(stderr, "trial %llu: %s\n", (unsigned long long)t, err);
        assert_int_equal(rc, 0);
        all += a.cfg.all_ranks;
        for (unsigned r = 0; r < a.cfg.world_size; r++) for_rank_ok(&a, r, &r0);
    }
    assert_true(all > 0);
}

/* zs_scenario_for_rank on garbage (a scenario built wrong by a tool):
 * returns 0 or -1, never reads out of bounds or loops (ASan/UBSan) */
static void test_for_rank_garbage(void **state) {
    (void)state;
    unsigned ok = 0;
    for (uint64_t t = 0; t < 300; t++) {
        size_t n = zs_rand_input(5, t, in, 600);
        zs_decode(in, n, &a);
        uint64_t st = t * 31 + 1;
        /* valid counts, random indices in the fields that name things */
        a.cfg.world_size = (uint8_t)(2 + t % 7);
        a.cfg.all_ranks = 1;
        a.n_edits = (uint8_t)(1 + zs_rand_next(&st) % ZS_MAX_RANK_EDITS);
        for (unsigned k = 0; k < a.n_edits; k++) {
            zs_rank_edit *e = &a.edit[k];
            e->rank = (uint8_t)(zs_rand_next(&st) % a.cfg.world_size);
            e->kind = (uint8_t)(zs_rand_next(&st) % (ZS_EDIT_KINDS + 1));
            e->step = (uint8_t)(zs_rand_next(&st) % (a.n_steps + 1));
            e->pass = (uint8_t)(zs_rand_next(&st) % 3);
            e->call = (zs_id)(zs_rand_next(&st) % 20);
            e->module = (zs_id)(zs_rand_next(&st) % 20);
        }
        for (unsigned q = 0; q < a.n_steps; q++)
            for (unsigned k = 0; k < a.step[q].n_passes; k++) {
                zs_pass *p = &a.step[q].pass[k];
                for (unsigned c = 1; c < p->n_calls; c++)
                    if (zs_rand_next(&st) % 8 == 0) p->calls[c].parent = (zs_id)(zs_rand_next(&st) % 256);
            }
        for (unsigned r = 0; r < a.cfg.world_size; r++) {
            char err[256];
            int rc = zs_scenario_for_rank(&a, r, &r0, err, sizeof err);
            assert_true(rc == 0 || (rc == -1 && err[0]));
            ok += rc == 0;
        }
        zs_scenario_drop_invalid_edits(&a); /* likewise never crashes */
    }
    assert_true(ok > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_small_inputs),
        cmocka_unit_test(test_built_scenarios),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_rank_edits),
        cmocka_unit_test(test_rank_edits_invalid),
        cmocka_unit_test(test_gather_always),
        cmocka_unit_test(test_tail_compat),
        cmocka_unit_test(test_beyond_codec),
        cmocka_unit_test(test_over_model_bounds),
        cmocka_unit_test(test_random_tails),
        cmocka_unit_test(test_random_bytes_for_rank),
        cmocka_unit_test(test_for_rank_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
