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
#include <string.h>

#include <cmocka.h>

#include "scenario.h"
#include "zs_random.h"

static zs_scenario a, b, c;
static uint8_t in[4096], enc1[ZS_ENCODE_MAX], enc2[ZS_ENCODE_MAX];

static void assert_roundtrip(const zs_scenario *s)
{
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

static void test_empty_input(void **state)
{
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
static void test_random_roundtrip(void **state)
{
    (void)state;
    unsigned long calls = 0, modules = 0, maxcalls = 0;
    for (uint64_t t = 0; t < 5000; t++) {
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
    assert_true(modules / 5000 >= 4);
    assert_true(maxcalls >= 20);
    (void)calls;
}

/* Small inputs mean small scenarios. */
static void test_small_inputs(void **state)
{
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
static void build_reuse(zs_scenario *s)
{
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
    r->use[0] = (zs_ref){ZS_REF_OUT, 2, 0, 0};
    zs_call *c1 = &p->calls[1];
    memset(c1, 0, sizeof *c1);
    c1->module = 1;
    c1->parent = 0;
    c1->catcher = ZS_NONE;
    c1->n_in = 1;
    c1->in[0] = (zs_ref){ZS_REF_ARG, 0, 0, 0};
    c1->n_out = 1;
    c1->n_use = 1;
    c1->use[0] = (zs_ref){ZS_REF_ARG, 0, 0, 0};
    zs_call *c2 = &p->calls[2];
    *c2 = *c1;
    c2->in[0] = (zs_ref){ZS_REF_OUT, 1, 0, 0};
}

static void test_built_scenarios(void **state)
{
    (void)state;
    build_reuse(&a);
    assert_roundtrip(&a);

    /* names are annotations: equal ignores them, strict does not */
    c = a;
    snprintf(c.mod[1].name, ZS_NAME_LEN, "layer");
    assert_true(zs_scenario_equal(&a, &c));
    assert_false(zs_scenario_equal_strict(&a, &c));

    /* explicit thresholds outside the class tables, odd elem size, big numel */
    c = a;
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
    c = a;
    c.n_steps = 5;
    for (unsigned k = 0; k < 5; k++) {
        c.step[k] = a.step[0];
        c.step[k].kind = (uint8_t)k;
        c.step[k].n_passes = (k == ZS_STEP_ACCUM || k == ZS_STEP_INTERLEAVE) ? 3 : 1;
        for (unsigned q = 1; q < c.step[k].n_passes; q++) c.step[k].pass[q] = c.step[k].pass[0];
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
    p->calls[0].use[0] = (zs_ref){ZS_REF_OUT, 1, 0, 1};
    c.n_modules = 3;
    c.mod[2].parent = 1;
    c.mod[2].flags = ZS_MOD_Z3_LEAF;
    c.n_uses = 1;
    c.use[0] = (zs_use){0, 0};
    assert_roundtrip(&c);
}

static void expect_invalid(const zs_scenario *s, const char *needle)
{
    char err[256];
    assert_int_not_equal(zs_scenario_validate(s, err, sizeof err), 0);
    if (needle && !strstr(err, needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", err, needle);
        fail();
    }
    assert_int_equal(zs_encode(s, enc1, sizeof enc1), 0);
}

static void test_invalid(void **state)
{
    (void)state;
    build_reuse(&a);
    c = a;
    c.cfg.world_size = 9;
    expect_invalid(&c, "world_size");
    c = a;
    c.cfg.rank = 1;
    expect_invalid(&c, "rank");
    c = a;
    c.n_modules = 3;
    c.mod[2].parent = 5;
    expect_invalid(&c, "module 2");
    c = a;
    c.par[0].numel = 0;
    expect_invalid(&c, "numel");
    c = a;
    c.n_uses = 1;
    c.use[0] = (zs_use){1, 0}; /* the owner itself */
    expect_invalid(&c, "use 0");
    c = a;
    c.step[0].pass[0].calls[2].module = 0; /* callee not a child module */
    expect_invalid(&c, "call 2");
    c = a;
    c.step[0].pass[0].calls[1].in[0] = (zs_ref){ZS_REF_OUT, 2, 0, 0}; /* a later call */
    expect_invalid(&c, "call 1");
    c = a;
    c.step[0].pass[0].loss_mask = 2; /* root has one output */
    expect_invalid(&c, "loss_mask");
    c = a;
    c.step[0].pass[0].calls[0].flags = ZS_CALL_CKPT_RE;
    expect_invalid(&c, "root");
    c = a;
    c.step[0].pass[0].calls[1].flags = ZS_CALL_CKPT_RE | ZS_CALL_RAISE;
    expect_invalid(&c, "raise");
    c = a;
    c.step[0].pass[0].calls[2].parent = 1; /* call 2 made by call 1: callee not a child */
    expect_invalid(&c, NULL);
    c = a;
    c.step[0].n_passes = 2;
    expect_invalid(&c, "n_passes");
    c = a;
    c.n_order = 1; /* order bytes with the engine order */
    expect_invalid(&c, "order");
    c = a;
    c.step[0].pass[0].calls[1].catcher = 0; /* catcher without raise */
    expect_invalid(&c, "catcher");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_small_inputs),
        cmocka_unit_test(test_built_scenarios),
        cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
