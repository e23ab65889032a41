/*
 * test_scn.c - the .scn format (fuzz/scn.c, docs/scenario-format.md):
 *   - property: random bytes -> zs_decode -> random valid names ->
 *     zs_scn_print -> zs_scn_parse gives a zs_scenario_equal_strict
 *     scenario, printing is canonical, and the text compiles (zs_encode)
 *     back to the same scenario;
 *   - every example of docs/scenario-format.md section 3 parses and is
 *     printed back to itself modulo comments/spacing;
 *   - non-canonical spellings (comments, spacing, 1e5/0x, key order, an
 *     explicit pass line) print canonically;
 *   - parse errors name the right line and column;
 *   - truncations and byte flips of valid texts never crash the parser and
 *     every error has a position.
 *
 * Fixtures are written as .scn text in string literals (a macro where two
 * texts differ in one word) and parsed with zs_scn_parse.  Scenarios are
 * built on the struct only where the struct is what is tested: the
 * decoder's random scenarios, zs_scenario_init, and invalid scenarios that
 * the parser refuses to produce, made to test zs_scenario_validate.
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
#include "scn.h"
#include "sim.h"
#include "minimize.h"
#include "zs_random.h"

static zs_scenario s1, s2, s3;

/* assigns random valid names (some empty, some duplicated) */
static void random_names(zs_scenario *s, uint64_t *st) {
    static const char *const pool[] = {"attn", "mlp", "layer.0", "h-1", "_x", "wte", "E9", "a23456789012345678901_z"};
    for (unsigned m = 0; m < s->n_modules; m++) {
        uint64_t r = zs_rand_next(st) % 10;
        memset(s->mod[m].name, 0, ZS_NAME_LEN);
        if (r < 2) continue;
        if (r < 5)
            snprintf(s->mod[m].name, ZS_NAME_LEN, "%s", pool[zs_rand_next(st) % 8]);
        else
            snprintf(s->mod[m].name, ZS_NAME_LEN, "m%u_%u", m, (unsigned)(r & 7));
    }
    for (unsigned p = 0; p < s->n_params; p++) {
        uint64_t r = zs_rand_next(st) % 10;
        memset(s->par[p].name, 0, ZS_NAME_LEN);
        if (r < 2) continue;
        if (r < 5)
            snprintf(s->par[p].name, ZS_NAME_LEN, "%s", pool[zs_rand_next(st) % 8]);
        else
            snprintf(s->par[p].name, ZS_NAME_LEN, "p%u.weight", p);
    }
}

static void roundtrip_one(uint64_t seed, uint64_t trial, size_t max) {
    static uint8_t buf[4096];
    static uint8_t enc[ZS_ENCODE_MAX];
    size_t n = zs_rand_input(seed, trial, buf, max);
    zs_decode(buf, n, &s1);
    uint64_t st = seed ^ (trial * 7919);
    random_names(&s1, &st);
    zs_scn_expect e;
    memset(&e, 0, sizeof e);
    if (trial % 3 == 0) {
        e.have[trial % 4] = 1;
        e.verdict[trial % 4] = (int)(trial % ZS_INV_COUNT);
        /* a printed expect line names its profiles; parsing states them */
        e.have_torch = e.have_ds = 1;
        e.torch = (int)(trial / 3 % ZS_TORCH_PROFILES);
        e.ds = (int)(trial / 9 % ZS_DS_PROFILES);
    }
    char *t = zs_scn_print(&s1, &e);
    assert_non_null(t);
    zs_scn_expect e2;
    zs_scn_error err;
    int rc = zs_scn_parse(t, strlen(t), &s2, &e2, &err);
    if (rc != 0) fprintf(stderr, "trial %llu: %d:%d: %s\n%s", (unsigned long long)trial, err.line, err.col, err.msg, t);
    assert_int_equal(rc, 0);
    if (!zs_scenario_equal_strict(&s1, &s2)) fprintf(stderr, "trial %llu: not equal\n%s", (unsigned long long)trial, t);
    assert_true(zs_scenario_equal_strict(&s1, &s2));
    assert_memory_equal(&e, &e2, sizeof e);
    char *t2 = zs_scn_print(&s2, &e2);
    assert_non_null(t2);
    assert_string_equal(t, t2);
    /* text -> bytes -> scenario */
    size_t k = zs_encode(&s2, enc, sizeof enc);
    assert_true(k > 0 && k <= sizeof enc);
    zs_decode(enc, k, &s3);
    assert_true(zs_scenario_equal(&s2, &s3));
    free(t);
    free(t2);
}

static void test_roundtrip_property(void **state) {
    (void)state;
    unsigned with_edits = 0, all_ranks = 0;
    for (uint64_t t = 0; t < 3000; t++) {
        roundtrip_one(11, t, t % 2 ? 600 : 64);
        with_edits += s1.n_edits > 0;
        all_ranks += s1.cfg.all_ranks;
    }
    /* the random inputs reach the tail: per-rank programs round-trip too */
    fprintf(stderr, "round trips: %u all-ranks, %u with rank edits\n", all_ranks, with_edits);
    assert_true(with_edits >= 20);
}

/* Per-rank programs: ranks=all, verify_collectives, gather_always, every
 * edit kind, MODULE:K call names; edits may come in any order. */
static const char moe_text[] = "config world_size=3 ranks=all verify_collectives=1\n"
                               "module net\n"
                               "  module moe gather_always\n"
                               "    module router\n"
                               "    module e0\n"
                               "      module fc\n"
                               "    module e1\n"
                               "      module fc\n"
                               "    module e2\n"
                               "      module fc\n"
                               "  module layer\n"
                               "param router.w owner=router numel=64\n"
                               "param e0.w owner=@4 numel=256\n"
                               "param e1.w owner=@6 numel=256\n"
                               "param e2.w owner=@8 numel=256\n"
                               "param layer.w owner=layer numel=64\n"
                               "step train loss=0\n"
                               "  call net(batch_rg) -> 1 use(out2.0)\n"
                               "    call moe(arg0) -> 1 use(out1.0, out2.0)\n"
                               "      call router(arg0) -> 1 use(arg0)\n"
                               "      call e0(out0.0) -> 1 use(out0.0)\n"
                               "        call @4(arg0) -> 1 use(arg0)\n"
                               "      call e1(out0.0) -> 1 use(out0.0)\n"
                               "        call @6(arg0) -> 1 use(arg0)\n"
                               "    call layer(out0.0) -> 1 use(arg0)\n"
                               "    call layer(out1.0) -> 1 use(arg0)\n"
                               "step accum\n"
                               "  pass loss=0\n"
                               "    call net(batch_rg) -> 1 use(arg0)\n"
                               "      call layer(arg0) -> 1 use(arg0)\n"
                               "  pass loss=0\n"
                               "    call net(batch_rg) -> 1 use(arg0)\n"
                               "      call layer(arg0) -> 1 use(arg0)\n"
                               "rank 0 step 0 call router raise\n"
                               "rank 1 step 0 call e0 route e2\n"
                               "rank 1 step 0 call e1 skip\n"
                               "rank 1 step 0 call layer:1 exit\n"
                               "rank 1 step 1 pass 1 call layer skip\n"
                               "rank 2 step 1 skip-step\n";

static void test_rank_edits(void **state) {
    (void)state;
    /* the same edits listed out of order parse to the same scenario */
    const char *shuffled_tail = "rank 2 step 1 skip-step\n"
                                "rank 1 step 0 call layer:1 exit   # early exit before the second layer\n"
                                "rank 1 step 1 pass 1 call layer skip\n"
                                "rank 1 step 0 call e1 skip\n"
                                "rank 0 step 0 call router raise\n"
                                "rank 1 step 0 call @3 route @7\n";
    zs_scn_error err;
    int rc = zs_scn_parse(moe_text, strlen(moe_text), &s1, NULL, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s1.cfg.all_ranks, 1);
    assert_int_equal(s1.cfg.verify_collectives, 1);
    assert_int_equal(s1.mod[1].flags, ZS_MOD_GATHER_ALWAYS);
    assert_int_equal(s1.n_edits, 6);
    assert_int_equal(s1.edit[1].kind, ZS_EDIT_ROUTE);
    assert_int_equal(s1.edit[1].call, 3);
    assert_int_equal(s1.edit[1].module, 7);
    assert_int_equal(s1.edit[3].kind, ZS_EDIT_EXIT);
    assert_int_equal(s1.edit[3].call, 8); /* the second layer call */
    assert_int_equal(s1.edit[4].pass, 1);
    char *t = zs_scn_print(&s1, NULL);
    assert_non_null(t);
    assert_string_equal(t, moe_text);
    free(t);

    size_t head = (size_t)(strstr(moe_text, "rank 0") - moe_text);
    char *txt = malloc(head + strlen(shuffled_tail) + 1);
    assert_non_null(txt);
    memcpy(txt, moe_text, head);
    strcpy(txt + head, shuffled_tail);
    rc = zs_scn_parse(txt, strlen(txt), &s2, NULL, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    assert_true(zs_scenario_equal_strict(&s1, &s2));
    free(txt);

    /* every rank's program is a valid single-rank scenario */
    for (unsigned r = 0; r < 3; r++) {
        char e[200];
        assert_int_equal(zs_scenario_for_rank(&s1, r, &s3, e, sizeof e), 0);
        assert_int_equal(zs_scenario_validate(&s3, e, sizeof e), 0);
        t = zs_scn_print(&s3, NULL);
        assert_non_null(t);
        assert_null(strstr(t, "rank "));
        assert_null(strstr(t, "ranks=all"));
        free(t);
    }
}


static void test_roundtrip_init(void **state) {
    (void)state;
    zs_scenario_init(&s1);
    char *t = zs_scn_print(&s1, NULL);
    assert_non_null(t);
    assert_string_equal(t, "module _\n"
                           "param _ owner=@0 numel=1\n"
                           "step train loss=0\n"
                           "  call @0(batch_rg) -> 1 use(arg0)\n");
    free(t);
}

/* ------------------------------------------------------------------ */

static char *read_text(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ZO_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 20);
    size_t n = b ? fread(b, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

static void test_doc_examples(void **state) {
    (void)state;
    char *doc = read_text("docs/scenario-format.md");
    assert_non_null(doc);
    char *ex = strstr(doc, "## 3. Examples");
    char *end = strstr(doc, "## 4. Grammar");
    assert_non_null(ex);
    assert_non_null(end);
    int blocks = 0;
    for (char *p = strstr(ex, "```\n"); p && p < end;) {
        char *q = strstr(p + 4, "```\n");
        assert_non_null(q);
        zs_scn_error err;
        zs_scn_expect e;
        int rc = zs_scn_parse(p + 4, (size_t)(q - (p + 4)), &s1, &e, &err);
        if (rc) fprintf(stderr, "doc example %d: %d:%d: %s\n", blocks, err.line, err.col, err.msg);
        assert_int_equal(rc, 0);
        char *t = zs_scn_print(&s1, &e);
        assert_non_null(t);
        assert_int_equal(zs_scn_parse(t, strlen(t), &s2, NULL, &err), 0);
        assert_true(zs_scenario_equal_strict(&s1, &s2));
        free(t);
        blocks++;
        p = strstr(q + 4, "```\n");
    }
    assert_int_equal(blocks, 4);
    free(doc);
}

/* A captured model beyond the fuzzer-byte codec's bounds (423 modules, 291
 * parameters, 422 calls, 32 child calls in one body): parses, prints
 * canonically and parses back to the same scenario, and has no bytes. */
static void test_beyond_codec(void **state) {
    (void)state;
    char *txt = read_text("corpus/models/llama32.scn");
    assert_non_null(txt);
    zs_scn_error err;
    zs_scn_expect e;
    int rc = zs_scn_parse(txt, strlen(txt), &s1, &e, &err);
    if (rc) fprintf(stderr, "llama32.scn: %d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    free(txt);
    assert_int_equal(s1.n_modules, 423);
    assert_int_equal(s1.n_params, 291);
    assert_int_equal(s1.step[0].pass[0].n_calls, 422);
    assert_false(zs_scenario_fits_codec(&s1));
    char *t = zs_scn_print(&s1, &e);
    assert_non_null(t);
    assert_int_equal(zs_scn_parse(t, strlen(t), &s2, NULL, &err), 0);
    assert_true(zs_scenario_equal_strict(&s1, &s2));
    char *t2 = zs_scn_print(&s2, &e);
    assert_non_null(t2);
    assert_string_equal(t, t2);
    free(t);
    free(t2);
}

static void test_noncanonical(void **state) {
    (void)state;
    const char *in = "# a comment line\n"
                     "\n"
                     "scn 1\n"
                     "expect init-at-register=I3   reset-on-forward=ok per-call=ok\n"
                     "config max_live_parameters=1e5 policy = lazy-init\n"
                     "config world_size=0x2\n"
                     "module   root   # trailing comment\n"
                     "    module kid\n"
                     "param w numel=16 frozen owner=kid elem_size=4\n"
                     "step train\n"
                     "   pass   loss=none\n"
                     "       call root(batch_rg)->1 use( out0.0 )\n"
                     "          call kid( arg0 ) use(arg0)->1 no_grad\r\n"
                     "step accum\n"
                     "  pass loss=0\n"
                     "    call @0(batch) -> 1 use(arg0)\n"
                     "  pass\n"
                     "    call root(batch)\n";
    const char *want = "expect torch=2.x deepspeed=0.19 per-call=ok reset-on-forward=ok init-at-register=I3\n"
                       "config policy=lazy-init world_size=2 max_live_parameters=100000\n"
                       "module root\n"
                       "  module kid\n"
                       "param w owner=kid numel=16 frozen\n"
                       "step train\n"
                       "  call root(batch_rg) -> 1 use(out0.0)\n"
                       "    call kid(arg0) -> 1 use(arg0) no_grad\n"
                       "step accum\n"
                       "  pass loss=0\n"
                       "    call root(batch) -> 1 use(arg0)\n"
                       "  pass\n"
                       "    call root(batch)\n";
    zs_scn_error err;
    zs_scn_expect e;
    int rc = zs_scn_parse(in, strlen(in), &s1, &e, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    char *t = zs_scn_print(&s1, &e);
    assert_non_null(t);
    assert_string_equal(t, want);
    free(t);
}

/* ------------------------------------------------------------------ */

typedef struct err_case {
    const char *text;
    int line, col;
    const char *msg; /* substring */
} err_case;

static const err_case err_cases[] = {
    {"", 1, 1, "no module tree"},
    {"module a\n", 2, 1, "no step"},
    {"module a\nstep train\n", 2, 1, "no root call"},
    {"module a\nstep train loss=0\n  call a(batch_rg) -> 1 use(arg0\n", 3, 33, "',' or ')'"},
    {"module a\nstep train loss=0\n  call a(batch_rg) -> 1 use(arg1)\n", 3, 29, "this call has 1 input"},
    {"module a\nstep train loss=0\n  call b(batch_rg) -> 1\n", 3, 8, "unknown module 'b'"},
    {"module a\n  module b\n    module c\nstep train loss=0\n  call a(batch_rg) -> 1\n    call c(arg0)\n", 6, 10,
     "not a child module"},
    {"module a\nparam w owner=a numel=0\nstep eval\n  call a(batch)\n", 2, 23, "out of range"},
    {"module a\nparam w owner=a\nstep eval\n  call a(batch)\n", 2, 16, "numel=N"},
    {"module a\n\tmodule b\nstep eval\n  call a(batch)\n", 2, 1, "tab in indentation"},
    {"module a\n  module b\n module c\nstep eval\n  call a(batch)\n", 3, 1, "inconsistent indentation"},
    {"module a\nstep eval\n  call a(batch) -> 1 $\n", 3, 22, "unexpected character '$'"},
    {"module a\nconfig policy=per-call\nstep eval\n  call a(batch)\n", 2, 1, "'config' must come before"},
    {"config policy=bogus\nmodule a\nstep eval\n  call a(batch)\n", 1, 15, "a policy"},
    {"config order=fuzzed\nmodule a\nstep eval\n  call a(batch)\norder_bytes 1 256\n", 5, 15, "out of range"},
    {"module a\nstep eval\n  call a(batch)\norder_bytes 1\n", 4, 1, "order=fuzzed"},
    {"module a\nstep eval loss=0\n  call a(batch)\n", 2, 11, "eval step has no loss"},
    {"module a\nstep train loss=1\n  call a(batch_rg) -> 1\n", 2, 17, "root call does not have"},
    {"module a\nstep accum\n  call a(batch)\n", 3, 3, "put each root call under a 'pass'"},
    {"module a\nstep accum\n  pass\n    call a(batch)\n", 2, 1, "2 to 4 'pass' lines"},
    {"module a\n  module b\nstep train loss=0\n  call a(batch_rg) -> 1 use(arg0)\n    call b(arg0) -> 1 raise=up1\n", 5,
     1, "unwound"},
    {"module a\n  module b\nstep train\n  call a(batch)\n    call b(arg0) raise=up2\n", 5, 24, "only 1 calling call"},
    {"module a\n  module b\nstep train\n  call a(batch)\n    call b(out0.0)\n", 5, 12, "earlier sibling"},
    {"module a\n  module b\nstep train\n  call a(batch)\n    call b(batch) ckpt=sometimes\n", 5, 24,
     "reentrant, non-reentrant, body-reentrant or body-non-reentrant"},
    {"module a\n  module a\nstep train\n  call a(batch)\n", 4, 8, "not unique"},
    {"module a\nparam w owner=a numel=4\nuse a w\nstep eval\n  call a(batch)\n", 3, 5, "owns parameter"},
    {"module a\nstep train\n  call a(batch_rg) -> 1 use(batch)\n", 3, 29, "call inputs only"},
    {"module a\nstep train\n  call a(arg0)\n", 3, 10, "root call's inputs"},
    {"expect per-call=fine\nmodule a\nstep eval\n  call a(batch)\n", 1, 17, "a verdict"},
    /* profiles without any verdict (found by fuzz_scn_parse: the printer
     * drops such a line, so print/parse changed it) */
    {"expect torch=2.x deepspeed=0.19 \nmodule a\nstep eval\n  call a(batch)\n", 1, 32, "at least one verdict"},
    {"module a\nstep train\n  call a(batch)\n  call a(batch)\n", 4, 3, "exactly one root call"},
    {"module a\n  module b z3_leaf\n    module c\nstep train\n  call a(batch)\n    call b(arg0)\n      call c(arg0)\n",
     7, 7, "z3 leaf"},
    /* per-rank programs */
    {"config world_size=2 ranks=some\nmodule a\nstep eval\n  call a(batch)\n", 1, 27, "all"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "    call b(arg0)\nrank 1 step 0 call b skip\n",
     8, 20, "called 2 times"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "rank 1 step 0 call b:1 skip\n",
     7, 20, "only 1 time"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "rank 1 step 1 call b skip\n",
     7, 13, "out of range"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "rank 1 step 0 call b route\n",
     7, 27, "a module"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "rank 1 step 0 call b jump\n",
     7, 22, "route MODULE, skip, exit or raise"},
    {"config world_size=2\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "rank 1 step 0 call b skip\n",
     7, 1, "all_ranks"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\nstep train\n  call a(batch)\n    call b(arg0)\n"
     "rank 2 step 0 call b skip\n",
     7, 1, "rank"},
    {"config world_size=2 ranks=all\nmodule a\n  module b\n  module c\nstep train\n  call a(batch)\n"
     "    call b(arg0)\nrank 1 step 0 call b route a\n",
     8, 1, "sibling"},
    {"config ranks=all\nmodule a\nstep eval\n  call a(batch)\n", 1, 1, "world_size >= 2"},
    {"module a\n  module b z3_leaf gather_always\nstep eval\n  call a(batch)\n", 2, 1, "gather_always together"},
    {"module a gather_always gather_always\nstep eval\n  call a(batch)\n", 1, 24, "given twice"},
    {"module a\nstep eval\n  call a(batch)\nrank 1 step 0 skip-step\nstep eval\n  call a(batch)\n", 5, 1,
     "'step' must come before 'rank'"},
};

static void test_errors(void **state) {
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        const err_case *c = &err_cases[i];
        zs_scn_error err;
        int rc = zs_scn_parse(c->text, strlen(c->text), &s1, NULL, &err);
        if (rc == 0 || err.line != c->line || err.col != c->col || !strstr(err.msg, c->msg)) {
            fprintf(stderr, "case %zu: rc %d, got %d:%d: %s; want %d:%d: ...%s...\n", i, rc, err.line, err.col, err.msg,
                    c->line, c->col, c->msg);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* many names (the parser's name table grows several times): references
 * resolve to the one item of a unique name and fail on a repeated one,
 * citing its first two ids */
static void test_many_names(void **state) {
    (void)state;
    size_t cap = 1 << 16, n = 0;
    char *base = malloc(cap);
    assert_non_null(base);
    n += (size_t)snprintf(base + n, cap - n, "module root\n");
    for (int i = 0; i < 300; i++) n += (size_t)snprintf(base + n, cap - n, "  module m%d\n", i % 97); /* @1..@300 */
    for (int i = 0; i < 200; i++) n += (size_t)snprintf(base + n, cap - n, "  module u%d\n", i);      /* @301..@500 */
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(base + n, cap - n, "param w%d owner=u%d numel=4\n", i % 50, i); /* lines 502.. */
    static const struct {
        const char *tail;
        int line, col;
        const char *msg;
    } cases[] = {
        {"param p owner=u150 numel=4\nuse u3 @7\n", 0, 0, NULL},
        {"param p owner=m5 numel=4\n", 702, 15, "module name 'm5' is not unique (@6, @103, ...): use @ID"},
        {"param p owner=m96 numel=4\n", 702, 15, "module name 'm96' is not unique (@97, @194, ...): use @ID"},
        {"param p owner=m97 numel=4\n", 702, 15, "unknown module 'm97'"},
        {"use u3 w7\n", 702, 8, "parameter name 'w7' is not unique (@7, @57, ...): use @ID"},
        {"use u3 w50\n", 702, 8, "unknown parameter 'w50'"},
    };
    char *txt = malloc(cap + 64);
    assert_non_null(txt);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(txt, cap + 64, "%s%sstep eval\n  call root(batch)\n", base, cases[k].tail);
        zs_scn_error err;
        int rc = zs_scn_parse(txt, strlen(txt), &s1, NULL, &err);
        if (!cases[k].msg) {
            if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
            assert_int_equal(rc, 0);
            assert_int_equal(s1.n_modules, 501);
            assert_int_equal(s1.par[200].owner, 451);
            assert_int_equal(s1.n_uses, 1);
            assert_int_equal(s1.use[0].module, 304);
            assert_int_equal(s1.use[0].param, 7);
            continue;
        }
        if (rc == 0 || err.line != cases[k].line || err.col != cases[k].col || !strstr(err.msg, cases[k].msg))
            fprintf(stderr, "case %zu: rc %d, got %d:%d: %s\n", k, rc, err.line, err.col, err.msg);
        assert_int_not_equal(rc, 0);
        assert_int_equal(err.line, cases[k].line);
        assert_int_equal(err.col, cases[k].col);
        assert_non_null(strstr(err.msg, cases[k].msg));
    }
    free(txt);
    free(base);
}

/* truncations and byte mutations of valid texts: no crash (ASan), errors
 * carry a position, successes round-trip */
static void test_mutations(void **state) {
    (void)state;
    uint64_t st = 99;
    static uint8_t buf[4096];
    char *txt = malloc(1 << 16);
    assert_non_null(txt);
    for (uint64_t t = 0; t < 300; t++) {
        size_t n = zs_rand_input(5, t, buf, 400);
        zs_decode(buf, n, &s1);
        random_names(&s1, &st);
        char *p = zs_scn_print(&s1, NULL);
        assert_non_null(p);
        size_t len = strlen(p);
        for (int k = 0; k < 20; k++) {
            size_t m = len;
            memcpy(txt, p, len);
            int what = (int)(zs_rand_next(&st) % 3);
            if (what == 0)
                m = (size_t)(zs_rand_next(&st) % (len + 1));
            else if (what == 1)
                txt[zs_rand_next(&st) % len] = (char)(zs_rand_next(&st) & 0xff);
            else {
                static const char tokens[] = "()=,->#@ \n\t.x0129";
                txt[zs_rand_next(&st) % len] = tokens[zs_rand_next(&st) % (sizeof tokens - 1)];
            }
            /* exact-size copy so ASan catches any read past the end */
            char *exact = malloc(m ? m : 1);
            assert_non_null(exact);
            memcpy(exact, txt, m);
            zs_scn_error err;
            zs_scn_expect e;
            if (zs_scn_parse(exact, m, &s2, &e, &err) != 0) {
                assert_true(err.line >= 1 && err.col >= 1 && err.msg[0]);
            } else {
                char *q = zs_scn_print(&s2, &e);
                assert_non_null(q);
                assert_int_equal(zs_scn_parse(q, strlen(q), &s3, NULL, &err), 0);
                assert_true(zs_scenario_equal_strict(&s2, &s3));
                free(q);
            }
            free(exact);
        }
        free(p);
    }
    free(txt);
}

/* ------------------------------------------------------------------ */
/* A checkpointed body (ZS_CALL_CKPT_BODY): .scn text, validity, replay  */

#define BODY_TEXT(kind)                                                                                                \
    "module net\n"                                                                                                     \
    "  module layer\n"                                                                                                 \
    "    module fc\n"                                                                                                  \
    "param layer.w owner=layer numel=4\n"                                                                              \
    "param fc.w owner=fc numel=4\n"                                                                                    \
    "step train loss=0\n"                                                                                              \
    "  call net(batch_rg) -> 1 use(out0.0)\n"                                                                          \
    "    call layer(arg0) -> 1 use(out0.0) ckpt=" kind "\n"                                                            \
    "      call fc(arg0) -> 1 use(arg0)\n"

static const char body_text[] = BODY_TEXT("body-non-reentrant");

/* The simulator's canonical trace of s under `policy` into buf. */
static void sim_trace(const zs_scenario *s, int policy, char *buf, size_t cap) {
    static zs_scenario t; /* zero-filled: empty; reused */
    assert_int_equal(zs_scenario_copy(&t, s), 0);
    t.cfg.policy = (uint8_t)policy;
    FILE *f = tmpfile();
    assert_non_null(f);
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.trace = f;
    zs_sim_result r;
    assert_int_equal(zs_sim_run(&t, &o, &r), 0);
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

static void test_ckpt_body(void **state) {
    (void)state;
    static char trace[1 << 14];
    zs_scn_error err;
    int rc = zs_scn_parse(body_text, strlen(body_text), &s1, NULL, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s1.step[0].pass[0].calls[1].flags, ZS_CALL_CKPT_NRE | ZS_CALL_CKPT_BODY);
    /* printer round trip, and a .scn-only construct: no byte encoding */
    char *t = zs_scn_print(&s1, NULL);
    assert_non_null(t);
    assert_string_equal(t, body_text);
    free(t);
    assert_int_equal(zs_scenario_has_ext(&s1), 1);
    assert_int_equal(zs_scenario_validate(&s1, NULL, 0), 0);
    static uint8_t buf[ZS_ENCODE_MAX];
    assert_int_equal(zs_encode(&s1, buf, sizeof buf), 0);

    /* torch 2.x: layer's hooks A, D before the region and B, C after it;
     * the recompute in backward (after layer's pre-backward) reruns fc
     * alone - layer's hooks never fire in it, and the region's last saved
     * tensor is layer's op, so fc's B and C do fire */
    sim_trace(&s1, 0, trace, sizeof trace);
    assert_non_null(strstr(trace, "BWD g=0 retain=0\nPRE m=0 r=?->?\nPRE m=1 r=?->?\nA m=2\n"
                                  "D m=2 n=1 rg=1 c=0->0\nB m=2\nC m=2 n=1 rg=1 r=?->?\nPGRAD p=0\n"));
    assert_null(strstr(strstr(trace, "BWD g=0"), "A m=1"));

    /* reentrant body: CheckpointFunction's recompute is a forward of its
     * own (FWD g=1) and a nested backward, fc only */
    static const char body_re_text[] = BODY_TEXT("body-reentrant");
    assert_int_equal(zs_scn_parse(body_re_text, strlen(body_re_text), &s1, NULL, &err), 0);
    assert_int_equal(zs_scenario_validate(&s1, NULL, 0), 0);
    sim_trace(&s1, 0, trace, sizeof trace);
    assert_non_null(strstr(trace, "A m=1\nD m=1 n=1 rg=1 c=0->1\nA m=2\nD m=2 n=1 rg=1 c=0->0\nB m=2\n"
                                  "C m=2 n=1 rg=0 r=?->?\nB m=1\nC m=1 n=1 rg=1 r=?->?\n"));
    assert_non_null(strstr(trace, "PRE m=1 r=?->?\nFWD g=1\nA m=2\nD m=2 n=1 rg=1 c=0->1\nB m=2\n"
                                  "C m=2 n=1 rg=1 r=?->?\nENDFWD g=1\nBWD g=1 retain=0\n"));
    assert_null(strstr(strstr(trace, "BWD g=0"), "A m=1"));

    /* the fuzz codec's approximation: the call's checkpoint of the same kind */
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    assert_int_equal(zs_scenario_strip_ext(&s2), 0);
    assert_int_equal(s2.step[0].pass[0].calls[1].flags, ZS_CALL_CKPT_RE);
    assert_true(zs_encode(&s2, buf, sizeof buf) > 0);

    /* invalid: the body flag without a checkpoint kind; the body on the
     * root call.  The parser refuses both texts (below), so they are made
     * on the struct to test zs_scenario_validate itself. */
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    s2.step[0].pass[0].calls[1].flags = ZS_CALL_CKPT_BODY;
    char msg[200];
    assert_int_equal(zs_scenario_validate(&s2, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "without a checkpoint kind"));
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    s2.step[0].pass[0].calls[0].flags = ZS_CALL_CKPT_NRE | ZS_CALL_CKPT_BODY;
    assert_int_equal(zs_scenario_validate(&s2, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "root call"));
    static const char root_text[] = "module a\nstep train loss=0\n  call a(batch_rg) -> 1 ckpt=body-reentrant\n";
    assert_int_equal(zs_scn_parse(root_text, strlen(root_text), &s2, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "root call cannot be checkpointed"));
    static const char bad_kind[] = "module a\n  module b\nstep train loss=0\n"
                                   "  call a(batch_rg) -> 1\n    call b(arg0) -> 1 ckpt=body\n";
    assert_int_equal(zs_scn_parse(bad_kind, strlen(bad_kind), &s2, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "body-non-reentrant"));
}

/* A mixed input's parameter term (ZS_REF_PARAM): the caller's op reads
 * its own parameter before a child call (fused MoE experts) */
#define PARAM_TEXT(param)                                                                                              \
    "module net\n"                                                                                                     \
    "  module experts\n"                                                                                               \
    "    module act\n"                                                                                                 \
    "param experts.up owner=experts numel=8\n"                                                                         \
    "param experts.down owner=experts numel=8\n"                                                                       \
    "param act.w owner=act numel=2\n"                                                                                  \
    "step train loss=0\n"                                                                                              \
    "  call net(batch_rg) -> 1 use(out0.0)\n"                                                                          \
    "    call experts(arg0) -> 1 use(out0.0)\n"                                                                        \
    "      call act(arg0 + param(" param ")) -> 1 use(arg0)\n"

static const char param_text[] = PARAM_TEXT("experts.up");

static void test_param_term(void **state) {
    (void)state;
    static char trace[1 << 14];
    zs_scn_error err;
    int rc = zs_scn_parse(param_text, strlen(param_text), &s1, NULL, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    const zs_call *act = &s1.step[0].pass[0].calls[2];
    assert_int_equal(act->n_mix, 1);
    assert_int_equal(act->mix[0].ref.kind, ZS_REF_PARAM);
    assert_int_equal(act->mix[0].ref.call, 0);
    char *t = zs_scn_print(&s1, NULL);
    assert_non_null(t);
    assert_string_equal(t, param_text);
    free(t);
    assert_int_equal(zs_scenario_has_ext(&s1), 1);
    assert_int_equal(zs_scenario_validate(&s1, NULL, 0), 0);

    /* backward: experts' op (down, p=1) first, then act, then the op
     * before act that read up (p=0), then experts' post-backward */
    sim_trace(&s1, 0, trace, sizeof trace);
    assert_non_null(strstr(trace, "PRE m=1 r=?->?\nPGRAD p=1\nPRE m=2 r=?->?\nPGRAD p=2\n"
                                  "POST m=2 c=1->0\nPGRAD p=0\nPOST m=1 c=1->0\n"));

    /* invalid, made on the struct to test zs_scenario_validate (the parser
     * refuses such a text): a parameter the caller's module does not read;
     * a detached parameter term, which the format cannot spell */
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    s2.step[0].pass[0].calls[2].mix[0].ref.call = 2; /* act.w */
    char msg[200];
    assert_int_equal(zs_scenario_validate(&s2, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "not read by the caller's module"));
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    s2.step[0].pass[0].calls[2].mix[0].ref.detach = 1;
    assert_int_equal(zs_scenario_validate(&s2, msg, sizeof msg), -1);

    /* the minimiser drops a parameter and the terms that name it */
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    zs_min_drop_param(&s2, 0);
    assert_int_equal(s2.step[0].pass[0].calls[2].n_mix, 0);
    assert_int_equal(zs_scenario_validate(&s2, NULL, 0), 0);
    static const char down_text[] = PARAM_TEXT("experts.down");
    assert_int_equal(zs_scn_parse(down_text, strlen(down_text), &s2, NULL, &err), 0);
    zs_min_drop_param(&s2, 0);
    assert_int_equal(s2.step[0].pass[0].calls[2].mix[0].ref.call, 0);
    assert_int_equal(zs_scenario_validate(&s2, NULL, 0), 0);

    /* text errors: on the root call; an unknown parameter */
    static const char on_root[] = "module a\nparam w owner=a numel=1\nstep train loss=0\n"
                                  "  call a(batch_rg + param(w)) -> 1\n";
    assert_int_equal(zs_scn_parse(on_root, strlen(on_root), &s2, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "root call's inputs cannot be mixed"));
    static const char unknown[] = "module a\n  module b\nparam w owner=a numel=1\nstep train loss=0\n"
                                  "  call a(batch_rg) -> 1\n    call b(arg0 + param(v)) -> 1\n";
    assert_int_equal(zs_scn_parse(unknown, strlen(unknown), &s2, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "unknown parameter 'v'"));
}

/* A raw output reference (zs_ref.raw, outK.J.raw): the caller reads what
 * a child cached on self, before the child's hook C */
#define RAW_TEXT(suffix)                                                                                               \
    "module net\n"                                                                                                     \
    "  module enc\n"                                                                                                   \
    "  module aux\n"                                                                                                   \
    "param enc.w owner=enc numel=4\n"                                                                                  \
    "param aux.w owner=aux numel=4\n"                                                                                  \
    "step train loss=0\n"                                                                                              \
    "  call net(batch_rg) -> 1 use(out0.0, out1.0" suffix ")\n"                                                        \
    "    call enc(arg0) -> 1 use(arg0)\n"                                                                              \
    "    call aux(out0.0) -> 1 use(arg0)\n"

static const char raw_text[] = RAW_TEXT(".raw");

static void test_raw_ref(void **state) {
    (void)state;
    static char trace[1 << 14];
    zs_scn_error err;
    int rc = zs_scn_parse(raw_text, strlen(raw_text), &s1, NULL, &err);
    if (rc) fprintf(stderr, "%d:%d: %s\n", err.line, err.col, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s1.step[0].pass[0].calls[0].use[1].raw, 1);
    assert_int_equal(s1.step[0].pass[0].calls[0].use[0].raw, 0);
    char *t = zs_scn_print(&s1, NULL);
    assert_non_null(t);
    assert_string_equal(t, raw_text);
    free(t);
    assert_int_equal(zs_scenario_has_ext(&s1), 1);
    assert_int_equal(zs_scenario_validate(&s1, NULL, 0), 0);
    static uint8_t buf[ZS_ENCODE_MAX];
    assert_int_equal(zs_encode(&s1, buf, sizeof buf), 0);
    /* the same scenario without .raw differs (equality sees the flag) */
    static const char no_raw_text[] = RAW_TEXT("");
    assert_int_equal(zs_scn_parse(no_raw_text, strlen(no_raw_text), &s2, NULL, &err), 0);
    assert_false(zs_scenario_equal(&s1, &s2));

    /* backward: aux's output hook is bypassed - no PRE m=2 at all, its
     * weight's gradient straight after the root's pre-backward; enc's
     * pre-backward comes through aux's post-backward */
    sim_trace(&s1, 0, trace, sizeof trace);
    assert_non_null(strstr(trace, "BWD g=0 retain=0\nPRE m=0 r=?->?\nPGRAD p=1\nPOST m=2 c=1->0\n"
                                  "PRE m=1 r=?->?\nPGRAD p=0\nPOST m=1 c=1->0\n"));
    assert_null(strstr(trace, "PRE m=2"));

    /* .raw only on outK.J; not in the byte codec's fields */
    static const char bad[] = "module a\n  module b\nstep train loss=0\n"
                              "  call a(batch_rg) -> 1 use(arg0.raw)\n    call b(arg0) -> 1\n";
    assert_int_equal(zs_scn_parse(bad, strlen(bad), &s2, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "'.raw' only follows an outK.J reference"));
    /* the same on the struct, which the parser cannot produce: validation */
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    s2.step[0].pass[0].calls[0].use[0].kind = ZS_REF_ARG;
    s2.step[0].pass[0].calls[0].use[0].index = 0;
    s2.step[0].pass[0].calls[0].use[0].raw = 1;
    char msg[200];
    assert_int_equal(zs_scenario_validate(&s2, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "must be an outK.J reference"));
    /* the fuzz seed form has no raw reference */
    assert_int_equal(zs_scenario_copy(&s2, &s1), 0);
    assert_int_equal(zs_scenario_strip_ext(&s2), 0);
    assert_int_equal(s2.step[0].pass[0].calls[0].use[1].raw, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_init), cmocka_unit_test(test_roundtrip_property),
        cmocka_unit_test(test_doc_examples),   cmocka_unit_test(test_noncanonical),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_rank_edits),     cmocka_unit_test(test_ckpt_body),
        cmocka_unit_test(test_param_term),     cmocka_unit_test(test_raw_ref),
        cmocka_unit_test(test_beyond_codec),   cmocka_unit_test(test_many_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
