/*
 * test_enumerate.c - tests of the bounded exhaustive checker:
 * hand-counted scenario counts, validity and uniqueness of the generated
 * scenarios, the renaming (automorphism) reduction, the known verdicts of
 * the four counter policies at a small bound, and shard/merge/results-file
 * equivalence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "enumerate.h"
#include "sim.h"

/* ------------------------------------------------------------------ */
/* Counts                                                               */
/* ------------------------------------------------------------------ */

/*
 * Hand count of bound N=1 (one module), K=1 call, S=1 step.
 *
 * Config and labels: config "base" has one numel class, so the root module
 * has 3 labels (no parameter, trainable, frozen); config "tight" has 3
 * numel classes: 1 + 3 trainable + 3 frozen = 7 labels.  10 (config,
 * label) pairs.  A one-node tree has no renaming.
 *
 * Steps: one step; accum and interleave need 2 passes = 2 calls > K: out.
 * Root call: input BATCH_RG or BATCH; flags plain / no_grad / raise
 * (caught outside; the only catcher of the root call); consumed tensors: a
 * subset of the candidates that may require grad, i.e. of {its input} when
 * the input is BATCH_RG and grad is on, else only the empty set; a raising
 * call is unwound and consumes nothing.
 *   train:  BATCH_RG: plain 2 (uses {} or {x}) + no_grad 1 + raise 1 = 4
 *           BATCH:    plain 1 + no_grad 1 + raise 1                 = 3   -> 7
 *   retain: the same 7
 *   eval:   grad is off, so no_grad is not offered (inert) and nothing
 *           consumed may require grad: per input plain 1 + raise 1  = 2, x2 inputs -> 4
 *   per pair 7 + 7 + 4 = 18;  10 pairs -> 180.
 *
 * N=1, K=2, S=1: the same 18 single-pass programs plus accum and
 * interleave, whose two passes are each one of the 7 train programs:
 * 18 + 49 + 49 = 116 per pair -> 1160.
 *
 * N=1, K=2, S=2: one step: 116; two steps: each step gets one call (the
 * second is reserved while the first is chosen), 18 x 18 = 324; 440 per
 * pair -> 4400.
 */
static void test_count_hand_computed(void **state)
{
    (void)state;
    zo_enum_bounds b = {1, 1, 1, 0, 0};
    assert_int_equal(zo_enum_count(&b), 180);
    b.max_calls = 2;
    assert_int_equal(zo_enum_count(&b), 1160);
    b.max_steps = 2;
    assert_int_equal(zo_enum_count(&b), 4400);
    /* restricting to config "base" keeps 3 of the 10 pairs */
    b.config_mask = 1;
    assert_int_equal(zo_enum_count(&b), 3 * 440);
}

static void test_bounds_rejected(void **state)
{
    (void)state;
    zo_enum_gen *g = malloc(sizeof *g);
    assert_non_null(g);
    zo_enum_bounds bad[] = {{0, 1, 1, 0, 0}, {7, 1, 1, 0, 0}, {1, 0, 1, 0, 0},
                            {1, 17, 1, 0, 0}, {1, 1, 0, 0, 0}, {1, 1, 9, 0, 0},
                            {1, 1, 1, 4, 0}, {1, 1, 1, 0, 0x200}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(zo_enum_gen_init(g, &bad[i]), -1);
    zo_enum_bounds ok = {6, 16, 8, 3, ZO_ENUM_F_ALL};
    assert_int_equal(zo_enum_gen_init(g, &ok), 0);
    free(g);
    unsigned m = 0;
    assert_int_equal(zo_enum_parse_features("nograd,eval", &m), 0);
    assert_int_equal(m, ZO_ENUM_F_NOGRAD | ZO_ENUM_F_EVAL);
    assert_int_equal(zo_enum_parse_features("none", &m), 0);
    assert_int_equal(m, ZO_ENUM_F_NONE);
    assert_int_equal(zo_enum_parse_features("all", &m), 0);
    assert_int_equal(m, 0);
    assert_int_equal(zo_enum_parse_features("nograd,bogus", &m), -1);
}

/* ------------------------------------------------------------------ */
/* Validity, uniqueness, renaming reduction                             */
/* ------------------------------------------------------------------ */

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

static void test_valid_and_unique(void **state)
{
    (void)state;
    zo_enum_bounds b = {2, 2, 2, 0, 0};
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    uint8_t *buf = malloc(ZS_ENCODE_MAX);
    unsigned cap = 1u << 18;
    uint64_t *set = calloc(cap, sizeof *set);
    assert_true(g && s && buf && set);
    assert_int_equal(zo_enum_gen_init(g, &b), 0);
    uint64_t n = 0, dups = 0;
    char err[256];
    while (zo_enum_next(g, s)) {
        n++;
        if (zs_scenario_validate(s, err, sizeof err) != 0) fail_msg("invalid scenario %llu: %s", (unsigned long long)n, err);
        size_t len = zs_encode(s, buf, ZS_ENCODE_MAX);
        assert_true(len > 0 && len <= ZS_ENCODE_MAX);
        uint64_t h = fnv(buf, len);
        unsigned j = (unsigned)(h & (cap - 1));
        while (set[j] && set[j] != h) j = (j + 1) & (cap - 1);
        if (set[j] == h) dups++;
        set[j] = h;
    }
    assert_int_equal(n, zo_enum_count(&b));
    assert_int_equal(n, 40128); /* pinned: changes only with the generator */
    assert_int_equal(dups, 0);
    free(set);
    free(buf);
    zs_scenario_free(s);
    free(s);
    free(g);
}

/* A root with two children carrying the same label is symmetric: a program
 * and its image with the children swapped are the same scenario, and only
 * the one that calls module 1 first is enumerated. */
static void test_renaming_reduction(void **state)
{
    (void)state;
    zo_enum_bounds b = {3, 3, 1, 1, ZO_ENUM_F_NONE};
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    assert_true(g && s);
    assert_int_equal(zo_enum_gen_init(g, &b), 0);
    uint64_t sym = 0, only2 = 0, only1 = 0;
    while (zo_enum_next(g, s)) {
        if (s->n_modules != 3 || s->mod[1].parent != 0 || s->mod[2].parent != 0) continue;
        int p1 = -1, p2 = -1;
        for (unsigned i = 0; i < s->n_params; i++) {
            if (s->par[i].owner == 1) p1 = (int)i;
            if (s->par[i].owner == 2) p2 = (int)i;
        }
        int same = (p1 < 0 && p2 < 0) ||
                   (p1 >= 0 && p2 >= 0 && s->par[p1].numel == s->par[p2].numel &&
                    s->par[p1].flags == s->par[p2].flags);
        if (!same) continue;
        sym++;
        const zs_pass *P = &s->step[0].pass[0];
        if (P->n_calls == 2 && P->calls[1].module == 2) only2++;
        if (P->n_calls == 2 && P->calls[1].module == 1) only1++;
    }
    assert_true(sym > 0);
    assert_true(only1 > 0);
    assert_int_equal(only2, 0);
    zs_scenario_free(s);
    free(s);
    free(g);
}

/* ------------------------------------------------------------------ */
/* Known verdicts                                                       */
/* ------------------------------------------------------------------ */

static zs_ref R(uint8_t kind, uint8_t call, uint8_t index)
{
    zs_ref r = {kind, call, index, 0, 0};
    return r;
}

/* Config "base", root module 0 with child module 1 owning one trainable
 * parameter of 8 elements. */
static void two_modules(zs_scenario *s, unsigned n_steps)
{
    /* a clean scenario with room for the codec's bounds, every slot zero */
    zs_scenario_free(s);
    assert_int_equal(zs_scenario_init(s), 0);
    memset(s->mod, 0, s->cap_modules * sizeof *s->mod);
    memset(s->par, 0, s->cap_params * sizeof *s->par);
    for (unsigned i = 0; i < ZS_MAX_STEPS; i++) {
        memset(&s->step[i].kind, 0, sizeof s->step[i].kind);
        s->step[i].n_passes = 0;
        for (unsigned k = 0; k < ZS_MAX_PASSES; k++) {
            zs_pass *p = &s->step[i].pass[k];
            memset(p->calls, 0, p->cap_calls * sizeof *p->calls);
            p->n_calls = 0;
            p->loss_mask = 0;
        }
    }
    uint32_t cls[3];
    unsigned ncls;
    assert_int_equal(zo_enum_config(0, &s->cfg, cls, &ncls), 0);
    s->n_modules = 2;
    s->mod[0].parent = ZS_NONE;
    s->mod[1].parent = 0;
    s->n_params = 1;
    s->par[0].owner = 1;
    s->par[0].elem_size = 4;
    s->par[0].numel = cls[0];
    s->n_steps = (uint8_t)n_steps;
    for (unsigned i = 0; i < n_steps; i++) {
        s->step[i].kind = ZS_STEP_TRAIN;
        s->step[i].n_passes = 1;
        s->step[i].pass[0].loss_mask = 1;
    }
}

static void root_call(zs_pass *P)
{
    zs_call *c = &P->calls[0];
    c->module = 0;
    c->parent = ZS_NONE;
    c->catcher = ZS_NONE;
    c->n_in = 1;
    c->in[0] = R(ZS_REF_BATCH_RG, 0, 0);
    c->n_out = 1;
}

static void child_call(zs_pass *P, unsigned ci)
{
    zs_call *c = &P->calls[ci];
    c->module = 1;
    c->parent = 0;
    c->catcher = ZS_NONE;
    c->n_in = 1;
    c->in[0] = R(ZS_REF_ARG, 0, 0);
    c->n_out = 1;
    c->n_use = 1;
    c->use[0] = R(ZS_REF_ARG, 0, 0);
}

/* ALBERT-style sharing: the root calls its child twice on its input and
 * consumes both outputs.  One train step, 3 calls. */
static void scenario_reuse(zs_scenario *s)
{
    two_modules(s, 1);
    zs_pass *P = &s->step[0].pass[0];
    P->n_calls = 3;
    root_call(P);
    child_call(P, 1);
    child_call(P, 2);
    P->calls[0].n_use = 2;
    P->calls[0].use[0] = R(ZS_REF_OUT, 1, 0);
    P->calls[0].use[1] = R(ZS_REF_OUT, 2, 0);
}

/* The child's output is unused in step 0 (the root consumes only its own
 * input) and used in step 1.  Two train steps, 4 calls. */
static void scenario_unused_then_used(zs_scenario *s)
{
    two_modules(s, 2);
    for (unsigned i = 0; i < 2; i++) {
        zs_pass *P = &s->step[i].pass[0];
        P->n_calls = 2;
        root_call(P);
        child_call(P, 1);
        P->calls[0].n_use = 1;
        P->calls[0].use[0] = i == 0 ? R(ZS_REF_ARG, 0, 0) : R(ZS_REF_OUT, 1, 0);
    }
}

static int verdict(const zs_scenario *s, int policy)
{
    zs_sim_opts o;
    zs_sim_result r;
    zs_sim_opts_init(&o);
    o.policy = policy;
    int rc = zs_sim_run(s, &o, &r);
    if (rc < 0) return ZS_INV_ERR;
    return r.violated ? r.v.inv : ZS_INV_NONE;
}

/* 1 if the generator emits a scenario equal to want within bound b. */
static int emitted(const zo_enum_bounds *b, const zs_scenario *want)
{
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    int found = 0;
    assert_true(g && s);
    assert_int_equal(zo_enum_gen_init(g, b), 0);
    while (!found && zo_enum_next(g, s)) found = zs_scenario_equal(s, want);
    zs_scenario_free(s);
    free(s);
    free(g);
    return found;
}

/* Bound of the known-verdict test: 2 modules, 4 calls, 2 steps, config
 * "base", plain train steps only.  It contains both scenarios above. */
static const zo_enum_bounds known_bound = {2, 4, 2, 1, ZO_ENUM_F_NONE};

static void test_known_scenarios(void **state)
{
    (void)state;
    zs_scenario *s = calloc(1, sizeof *s);
    char err[256];
    assert_non_null(s);

    scenario_reuse(s);
    if (zs_scenario_validate(s, err, sizeof err)) fail_msg("reuse scenario: %s", err);
    assert_true(emitted(&known_bound, s));
    assert_int_equal(verdict(s, ZO_GRADS_PER_CALL), ZS_INV_NONE);
    assert_int_equal(verdict(s, ZO_GRADS_RESET_ON_FORWARD), ZS_INV_I1);

    scenario_unused_then_used(s);
    if (zs_scenario_validate(s, err, sizeof err)) fail_msg("unused/used scenario: %s", err);
    assert_true(emitted(&known_bound, s));
    assert_int_equal(verdict(s, ZO_GRADS_PER_CALL), ZS_INV_NONE);
    /* the seed-PR policies' stale count keeps the module's parameters
     * gathered after backward: DeepSpeed 0.19's ZeRO-3 optimizer releases
     * them at the end of the backward (release_backward_leftovers), the
     * hooks alone do not */
    assert_int_equal(verdict(s, ZO_GRADS_INIT_AT_REGISTER), ZS_INV_NONE);
    assert_int_equal(verdict(s, ZO_GRADS_LAZY_INIT), ZS_INV_NONE);
    s->cfg.ds_profile = ZS_DS_019_HOOKS;
    assert_int_equal(verdict(s, ZO_GRADS_INIT_AT_REGISTER), ZS_INV_I3);
    assert_int_equal(verdict(s, ZO_GRADS_LAZY_INIT), ZS_INV_I3);
    zs_scenario_free(s);
    free(s);
}

/* The table at the known bound, every policy, engine order. */
static void test_known_verdicts_table(void **state)
{
    (void)state;
    zo_enum_opts o = {ZO_ENUM_ORDERS_ENGINE, 0xF, 0};
    zo_enum_results r;
    assert_int_equal(zo_enum_results_init(&r, &known_bound, o.orders, o.policy_mask, 1), 0);
    assert_int_equal(zo_enum_run_shard(&known_bound, &o, 0, 1, 0, 1, &r, NULL), 0);
    assert_int_equal(r.invalid, 0);
    assert_int_equal(r.scenarios, zo_enum_count(&known_bound));
    /* the default policy holds every invariant in every scenario of the bound */
    const zo_enum_policy_res *pc = &r.pol[ZO_GRADS_PER_CALL];
    for (int i = 1; i < ZS_INV_COUNT; i++)
        if (pc->cell[i].scenarios)
            fail_msg("per-call violates %s in %llu scenarios (first at \"%s\")", zs_inv_name(i),
                     (unsigned long long)pc->cell[i].scenarios, pc->cell[i].site[0]);
    assert_int_equal(pc->setup_errors, 0);
    assert_int_equal(pc->uninit_full, 0);
    assert_true(r.pol[ZO_GRADS_RESET_ON_FORWARD].cell[ZS_INV_I1].scenarios > 0);
    assert_true(r.pol[ZO_GRADS_INIT_AT_REGISTER].cell[ZS_INV_I3].scenarios > 0);
    assert_true(r.pol[ZO_GRADS_LAZY_INIT].cell[ZS_INV_I3].scenarios > 0);
    /* I3 of init-at-register is detected by the hooks-only check after a
     * backward, not only after discards */
    int after_bwd = 0;
    for (int k = 0; k < ZO_ENUM_SITES; k++)
        after_bwd |= !strcmp(r.pol[ZO_GRADS_INIT_AT_REGISTER].cell[ZS_INV_I3].site[k], "after ENDBWD g=#");
    assert_true(after_bwd);
    /* the smallest counterexamples replay to the same verdict */
    zs_scenario *s = calloc(1, sizeof *s);
    assert_non_null(s);
    const zo_enum_cell *c = &r.pol[ZO_GRADS_RESET_ON_FORWARD].cell[ZS_INV_I1];
    assert_true(c->len > 0);
    zs_decode(c->bytes, c->len, s);
    assert_int_equal(s->cfg.policy, ZO_GRADS_RESET_ON_FORWARD);
    assert_int_equal(verdict(s, -1), ZS_INV_I1);
    zs_scenario_free(s);
    free(s);
    zo_enum_results_free(&r);
}

/* ------------------------------------------------------------------ */
/* Orders                                                               */
/* ------------------------------------------------------------------ */

/* Every ready-node order: at least one order per scenario, more than one
 * for some (the bound has interleaved/accumulated passes and parameter
 * gradients), and the default policy holds every invariant in all of them. */
static void test_all_orders_small(void **state)
{
    (void)state;
    zo_enum_bounds b = {1, 2, 1, 1, 0};
    zo_enum_opts o = {ZO_ENUM_ORDERS_ALL, 1u << ZO_GRADS_PER_CALL, 0};
    zo_enum_results r;
    assert_int_equal(zo_enum_results_init(&r, &b, o.orders, o.policy_mask, 1), 0);
    assert_int_equal(zo_enum_run_shard(&b, &o, 0, 1, 0, 1, &r, NULL), 0);
    const zo_enum_policy_res *pc = &r.pol[ZO_GRADS_PER_CALL];
    assert_int_equal(r.scenarios, 3 * 116);
    assert_true(pc->orders > r.scenarios);
    assert_int_equal(pc->order_cap_hits, 0);
    for (int i = 1; i < ZS_INV_COUNT; i++)
        if (pc->cell[i].scenarios)
            fail_msg("per-call violates %s in %llu scenarios (first at \"%s\")", zs_inv_name(i),
                     (unsigned long long)pc->cell[i].scenarios, pc->cell[i].site[0]);
    zo_enum_results_free(&r);
}

/* ------------------------------------------------------------------ */
/* Shards, merge, results files                                         */
/* ------------------------------------------------------------------ */

static void same_results(const zo_enum_results *a, const zo_enum_results *b)
{
    assert_int_equal(a->scenarios, b->scenarios);
    assert_int_equal(a->invalid, b->invalid);
    for (int p = 0; p < 4; p++) {
        assert_int_equal(a->pol[p].runs, b->pol[p].runs);
        assert_int_equal(a->pol[p].orders, b->pol[p].orders);
        assert_int_equal(a->pol[p].torch_errors, b->pol[p].torch_errors);
        assert_int_equal(a->pol[p].uninit_full, b->pol[p].uninit_full);
        for (int i = 1; i < ZS_INV_COUNT; i++) {
            const zo_enum_cell *x = &a->pol[p].cell[i], *y = &b->pol[p].cell[i];
            assert_int_equal(x->scenarios, y->scenarios);
            assert_int_equal(x->orders, y->orders);
            assert_int_equal(x->key, y->key);
            assert_int_equal(x->len, y->len);
            assert_memory_equal(x->bytes, y->bytes, x->len);
            uint64_t sx = x->site_other, sy = y->site_other;
            for (int k = 0; k < ZO_ENUM_SITES; k++) {
                sx += x->site_n[k];
                sy += y->site_n[k];
            }
            assert_int_equal(sx, sy);
        }
    }
}

static void test_shards_merge(void **state)
{
    (void)state;
    zo_enum_bounds b = {1, 2, 2, 0, 0};
    zo_enum_opts o = {ZO_ENUM_ORDERS_ENGINE, 0xF, 0};
    zo_enum_results whole, merged;
    assert_int_equal(zo_enum_results_init(&whole, &b, o.orders, o.policy_mask, 3), 0);
    whole.shard_seen[0] = whole.shard_seen[1] = whole.shard_seen[2] = 1;
    assert_int_equal(zo_enum_run_shard(&b, &o, 0, 1, 0, 1, &whole, NULL), 0);
    assert_int_equal(whole.scenarios, 4400);

    int have = 0;
    for (unsigned sh = 0; sh < 3; sh++) {
        for (unsigned sub = 0; sub < 2; sub++) { /* --jobs 2 inside each shard */
            zo_enum_results one, back;
            assert_int_equal(zo_enum_results_init(&one, &b, o.orders, o.policy_mask, 3), 0);
            one.shard_seen[sh] = sub == 0; /* the parts of a shard: flagged once */
            assert_int_equal(zo_enum_run_shard(&b, &o, sh, 3, sub, 2, &one, NULL), 0);
            FILE *f = tmpfile();
            assert_non_null(f);
            assert_int_equal(zo_enum_results_write(&one, f), 0);
            rewind(f);
            char err[200];
            if (zo_enum_results_read(&back, f, err, sizeof err)) fail_msg("read back: %s", err);
            fclose(f);
            same_results(&one, &back);
            zo_enum_results_free(&one);
            if (!have) {
                merged = back;
                have = 1;
            } else {
                assert_int_equal(zo_enum_results_merge(&merged, &back), 0);
                zo_enum_results_free(&back);
            }
        }
    }
    for (unsigned i = 0; i < 3; i++) assert_int_equal(merged.shard_seen[i], 1);
    same_results(&whole, &merged);
    /* the same shard twice is refused (an array job's file passed twice) */
    {
        zo_enum_results dup;
        assert_int_equal(zo_enum_results_init(&dup, &b, o.orders, o.policy_mask, 3), 0);
        dup.shard_seen[1] = 1;
        assert_int_equal(zo_enum_results_merge(&merged, &dup), -1);
        zo_enum_results_free(&dup);
        same_results(&whole, &merged);
    }
    /* merging results of another bound is refused */
    zo_enum_bounds b2 = {1, 1, 1, 0, 0};
    zo_enum_results other;
    assert_int_equal(zo_enum_results_init(&other, &b2, o.orders, o.policy_mask, 3), 0);
    assert_int_equal(zo_enum_results_merge(&merged, &other), -1);
    zo_enum_results_free(&other);
    zo_enum_results_free(&merged);
    zo_enum_results_free(&whole);
}

static void test_results_read_rejects_garbage(void **state)
{
    (void)state;
    const char *bad[] = {"", "hello\n", "zoffload-enumerate-results 1\nbounds 1 1\n",
                         "zoffload-enumerate-results 1\nbounds 1 1 1 0 0\norders engine\npolicies 15\n"
                         "shards 2 5\nend\n",
                         "zoffload-enumerate-results 1\nbounds 1 1 1 0 0\norders engine\npolicies 15\n"
                         "shards 1 0\ncell 0 3 1 1 5 zz\nend\n",
                         "zoffload-enumerate-results 1\nbounds 1 1 1 0 0\norders engine\npolicies 15\n"
                         "shards 1 0\nscenarios 3\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = tmpfile();
        assert_non_null(f);
        fputs(bad[i], f);
        rewind(f);
        zo_enum_results r;
        char err[200];
        assert_int_equal(zo_enum_results_read(&r, f, err, sizeof err), -1);
        assert_true(err[0] != 0);
        fclose(f);
    }
}

/* A call with more candidate tensors than an op may consume (ZS_MAX_USE):
 * the generator's walk that takes the last value of every choice (a root
 * making as many child calls as the budget allows, using all of them) must
 * stay within zs_call.use[] and produce valid scenarios, at every
 * --max-calls up to the largest. */
static void test_many_children_use_bound(void **state)
{
    (void)state;
    zo_enum_gen *g = malloc(sizeof *g);
    zs_scenario *s = calloc(1, sizeof *s);
    assert_true(g && s);
    char err[256];
    for (unsigned k = 9; k <= 16; k++) {
        zo_enum_bounds b = {2, k, 1, 1, ZO_ENUM_F_NONE};
        assert_int_equal(zo_enum_gen_init(g, &b), 0);
        unsigned most = 0;
        /* walk the path of last choices: each walk reveals the ranges of
         * the next choices, the following walk takes their last values */
        for (int it = 0; it < 64; it++) {
            for (unsigned p = 0; p < g->n; p++) g->val[p] = (uint16_t)(g->range[p] ? g->range[p] - 1 : 0);
            g->started = 0;
            g->done = 0;
            if (!zo_enum_next(g, s)) break;
            if (zs_scenario_validate(s, err, sizeof err) != 0) fail_msg("K=%u: invalid scenario: %s", k, err);
            const zs_pass *ps = &s->step[0].pass[0];
            for (unsigned c = 0; c < ps->n_calls; c++)
                if (ps->calls[c].n_use > most) most = ps->calls[c].n_use;
        }
        assert_int_equal(most, ZS_MAX_USE);
        /* and the scenarios after it in enumeration order */
        for (int n = 0; n < 2000 && zo_enum_next(g, s); n++)
            if (zs_scenario_validate(s, err, sizeof err) != 0) fail_msg("K=%u: invalid scenario: %s", k, err);
    }
    zs_scenario_free(s);
    free(s);
    free(g);
}

/* The up-front estimate of --count: within a factor 1.5 of the exact
 * count of bounds whose exact count is known. */
static void test_estimate_close(void **state)
{
    (void)state;
    zo_enum_bounds bs[3] = {{1, 2, 2, 0, 0}, {2, 2, 2, 0, 0}, {2, 3, 1, 0, 0}};
    for (int i = 0; i < 3; i++) {
        double exact = (double)zo_enum_count(&bs[i]);
        double est = zo_enum_estimate(&bs[i], 20000, 1234);
        print_message("bound %u/%u/%u: %.0f scenarios, estimate %.0f\n", bs[i].max_modules, bs[i].max_calls,
                      bs[i].max_steps, exact, est);
        assert_true(est > exact / 1.5 && est < exact * 1.5);
    }
    zo_enum_bounds bad = {0, 1, 1, 0, 0};
    assert_true(zo_enum_estimate(&bad, 10, 1) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_hand_computed),
        cmocka_unit_test(test_bounds_rejected),
        cmocka_unit_test(test_valid_and_unique),
        cmocka_unit_test(test_renaming_reduction),
        cmocka_unit_test(test_known_scenarios),
        cmocka_unit_test(test_known_verdicts_table),
        cmocka_unit_test(test_all_orders_small),
        cmocka_unit_test(test_shards_merge),
        cmocka_unit_test(test_results_read_rejects_garbage),
        cmocka_unit_test(test_many_children_use_bound),
        cmocka_unit_test(test_estimate_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
