/*
 * test_world_modes.c - the two ways zs_world_run runs the ranks of an
 * all-ranks scenario (fuzz/world.h: zs_world_opts.threads) give the same
 * result, byte for byte.
 *
 * Every all-ranks input of the shipped corpus runs in the cooperative mode
 * (every rank a coroutine of one thread, the default) and in the threaded
 * mode (a thread per rank), and the two zs_world_result are compared whole
 * with memcmp: verdict, rank, finding, per-rank simulator results,
 * collective counts, the world's report and the long report.  The inputs:
 * the .scn files under corpus/ whose config says ranks=all, and the .bin
 * inputs of corpus/seeds/fuzz_hooks and corpus/regressions/fuzz_hooks that
 * decode to an all-ranks scenario (cfg.all_ranks - what makes fuzz_hooks
 * run an input in the world).  Each runs as fuzz_hooks runs it (the
 * scenario's policy, I8 where the runtime is to blame) and under every
 * policy with any divergence as I8, and once more with the per-rank hook
 * traces and event logs, which must be the same text too.  A hand-made
 * world that would hang and one whose ranks diverge are among them, so
 * the would-hang and I8 paths are compared as well.
 *
 * The corpus directory is argv[1] (tests/CMakeLists.txt passes it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream */
#endif
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "ranks.h"
#include "scn.h"
#include "world.h"
#include "zs_random.h"

static const char *g_corpus;

/* the inputs: paths, sorted */
typedef struct paths {
    char **p;
    size_t n, cap;
} paths;

static void add_path(paths *ps, const char *p) {
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 64;
        ps->p = realloc(ps->p, ps->cap * sizeof *ps->p);
        assert_non_null(ps->p);
    }
    ps->p[ps->n] = strdup(p);
    assert_non_null(ps->p[ps->n]);
    ps->n++;
}

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* every file under dir ending in suffix (recursively) */
static void walk(paths *ps, const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode))
            walk(ps, p, suffix);
        else if (has_suffix(p, suffix))
            add_path(ps, p);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Loads path into *s; 1 if it is an all-ranks scenario. */
static int load(const char *path, zs_scenario *s) {
    size_t n;
    char *b = slurp(path, &n);
    if (has_suffix(path, ".scn")) {
        zs_scn_error err;
        if (zs_scn_parse(b, n, s, NULL, &err) != 0) {
            free(b);
            return 0; /* the parser's own negative tests */
        }
    } else {
        zs_decode((const uint8_t *)b, n, s);
    }
    free(b);
    return s->cfg.all_ranks;
}

static zs_world_result g_a, g_b;

/* Names the first field where a and b differ (for the failure message). */
static const char *first_field(const zs_world_result *a, const zs_world_result *b) {
    const char *pa = (const char *)a, *pb = (const char *)b;
    size_t off = 0;
    while (off < sizeof *a && pa[off] == pb[off]) off++;
#define F(m)                                                                                                           \
    if (off >= offsetof(zs_world_result, m) && off < offsetof(zs_world_result, m) + sizeof a->m) return #m
    F(world_size);
    F(verdict);
    F(rank);
    F(violated);
    F(v);
    F(torch_error);
    F(torch_msg);
    F(setup_error);
    F(setup_msg);
    F(divergence);
    F(div_rank);
    F(i8_program);
    F(div_kind);
    if (off >= offsetof(zs_world_result, rank_result) && off < offsetof(zs_world_result, collectives)) {
        size_t o = (off - offsetof(zs_world_result, rank_result)) % sizeof(zs_sim_result);
        static char where[96];
        snprintf(where, sizeof where, "rank_result[%zu] + %zu",
                 (off - offsetof(zs_world_result, rank_result)) / sizeof(zs_sim_result), o);
        return where;
    }
    F(collectives);
    F(mismatched);
    F(world_report);
    F(report);
#undef F
    return "padding";
}

typedef struct tally {
    unsigned inputs, runs, i8, hang, findings, torch;
} tally;

/* The word after a WAIT event says whether the wait found its gather
 * complete or had to block (see both()): "(complete)" and "(blocking)"
 * become "(--------)" in the NUL-terminated event log e. */
static void wait_words(char *e) {
    for (char *p = strstr(e, " WAIT "); p; p = strstr(p + 1, " WAIT ")) {
        char *end = strchr(p, '\n');
        if (!end) end = p + strlen(p);
        char *w = end - 10;
        if (w > p && (!strncmp(w, "(complete)", 10) || !strncmp(w, "(blocking)", 10))) memcpy(w + 1, "--------", 8);
    }
}

/* Runs s in both modes with options o / wo, compares; with streams, the
 * traces and event logs too. */
static void both(const char *path, const zs_scenario *s, const zs_sim_opts *o, const zs_world_opts *wo, int streams,
                 tally *t) {
    char *buf[2][2] = {{NULL, NULL}, {NULL, NULL}};
    size_t len[2][2] = {{0, 0}, {0, 0}};
    int rc[2];
    for (int mode = 0; mode < 2; mode++) {
        zs_sim_opts so = *o;
        zs_world_opts w = *wo;
        w.threads = mode;
        FILE *f[2] = {NULL, NULL};
        if (streams) {
            f[0] = open_memstream(&buf[mode][0], &len[mode][0]);
            f[1] = open_memstream(&buf[mode][1], &len[mode][1]);
            assert_non_null(f[0]);
            assert_non_null(f[1]);
            so.trace = f[0];
            so.events = f[1];
        }
        zs_world_result *r = mode ? &g_b : &g_a;
        memset(r, 0xee, sizeof *r); /* what zs_world_run leaves unwritten would differ */
        rc[mode] = zs_world_run(s, &so, &w, r);
        if (streams) {
            fclose(f[0]);
            fclose(f[1]);
        }
    }
    t->runs++;
    /* The one answer of the world that depends on who runs when: whether a
     * wait found its all-gather complete already (query() said done; the
     * other ranks had issued theirs) or had to block - the runtime's
     * blocking_waits counter and the "complete"/"blocking" word of its
     * wait events.  In the threaded mode it varies from run to run with the
     * threads' timing; nothing else may depend on it. */
    for (int q = 0; q < ZS_MAX_WORLD; q++) g_a.rank_result[q].stats.blocking_waits = 0;
    for (int q = 0; q < ZS_MAX_WORLD; q++) g_b.rank_result[q].stats.blocking_waits = 0;
    if (rc[0] != rc[1] || memcmp(&g_a, &g_b, sizeof g_a) != 0) {
        fprintf(stderr, "%s: policy %d, threads 0 vs 1: rc %d vs %d, results differ first in %s\n", path, o->policy,
                rc[0], rc[1], first_field(&g_a, &g_b));
        fprintf(stderr, "--- cooperative\n");
        zs_world_print(stderr, &g_a);
        fprintf(stderr, "--- threads\n");
        zs_world_print(stderr, &g_b);
        fail();
    }
    assert_false(g_a.setup_error); /* a corpus input always runs */
    if (streams)
        for (int k = 0; k < 2; k++) {
            if (k) {
                wait_words(buf[0][k]);
                wait_words(buf[1][k]);
            }
            if (len[0][k] != len[1][k] || memcmp(buf[0][k], buf[1][k], len[0][k]) != 0) {
                fprintf(stderr, "%s: the %s differ between the modes\n", path, k ? "event logs" : "traces");
                fail();
            }
            assert_true(len[0][k] > 0);
            free(buf[0][k]);
            free(buf[1][k]);
        }
    t->i8 += g_a.verdict == ZS_INV_I8;
    t->hang += strstr(g_a.world_report, "would hang") != NULL;
    t->findings += g_a.violated;
    t->torch += g_a.torch_error;
}

/* fuzz_hooks' way (the scenario's policy, I8 where the runtime is to
 * blame), with the streams; then every policy, any divergence as I8. */
static void check_input(const char *path, const zs_scenario *s, tally *t) {
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    zs_world_opts wo;
    zs_world_opts_init(&wo);
    wo.blame_runtime = 1;
    both(path, s, &o, &wo, 1, t);
    wo.blame_runtime = 0;
    for (int p = 0; p < 4; p++) {
        o.policy = p;
        both(path, s, &o, &wo, 0, t);
    }
    t->inputs++;
}

static void run_dir_set(paths *ps, tally *t) {
    qsort(ps->p, ps->n, sizeof *ps->p, cmp_str);
    zs_scenario s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < ps->n; i++) {
        if (load(ps->p[i], &s)) check_input(ps->p[i], &s, t);
        free(ps->p[i]);
    }
    free(ps->p);
    zs_scenario_free(&s);
}

static void test_corpus_scn(void **state) {
    (void)state;
    paths ps = {0};
    walk(&ps, g_corpus, ".scn");
    assert_true(ps.n > 0);
    tally t = {0};
    run_dir_set(&ps, &t);
    fprintf(stderr, "corpus .scn: %u all-ranks inputs, %u runs per mode, %u I8, %u would-hang, %u findings\n", t.inputs,
            t.runs, t.i8, t.hang, t.findings);
    assert_true(t.inputs >= 2);
}

static void test_corpus_bin(void **state) {
    (void)state;
    paths ps = {0};
    char d[4096];
    snprintf(d, sizeof d, "%s/seeds/fuzz_hooks", g_corpus);
    walk(&ps, d, "");
    snprintf(d, sizeof d, "%s/regressions/fuzz_hooks", g_corpus);
    walk(&ps, d, "");
    assert_true(ps.n > 0);
    tally t = {0};
    run_dir_set(&ps, &t);
    fprintf(stderr, "corpus fuzz_hooks inputs: %u all-ranks, %u runs per mode, %u I8, %u would-hang, %u findings\n",
            t.inputs, t.runs, t.i8, t.hang, t.findings);
    assert_true(t.inputs >= 1);
}

/* Hand-made worlds that exercise the paths the corpus may not: a rank
 * that skips a step (would hang under the threaded world, I8 or root
 * cause), routing that diverges (I8), W = 8. */
static void test_hand_made(void **state) {
    (void)state;
    static const char *const texts[] = {
        "config world_size=2 ranks=all\n"
        "module root\n"
        "  module a\n"
        "  module b\n"
        "param a.w owner=a numel=24\n"
        "param b.w owner=b numel=32\n"
        "step train loss=0\n"
        "  call root(batch_rg) -> 1 use(out0.0)\n"
        "    call a(arg0) -> 1 use(arg0)\n"
        "step train loss=0\n"
        "  call root(batch_rg) -> 1 use(out0.0)\n"
        "    call a(arg0) -> 1 use(arg0)\n"
        "rank 1 step 0 call a route b\n",
        "config world_size=8 ranks=all\n"
        "module root\n"
        "  module a\n"
        "param a.w owner=a numel=100\n"
        "step train loss=0\n"
        "  call root(batch_rg) -> 1 use(out0.0)\n"
        "    call a(arg0) -> 1 use(arg0)\n",
        "config world_size=3 ranks=all\n"
        "module root\n"
        "  module a\n"
        "param a.w owner=a numel=100\n"
        "step train loss=0\n"
        "  call root(batch_rg) -> 1 use(out0.0)\n"
        "    call a(arg0) -> 1 use(arg0)\n"
        "step train loss=0\n"
        "  call root(batch_rg) -> 1 use(out0.0)\n"
        "    call a(arg0) -> 1 use(arg0)\n"
        "rank 2 step 1 skip-step\n",
    };
    tally t = {0};
    zs_scenario s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        zs_scn_error err;
        if (zs_scn_parse(texts[i], strlen(texts[i]), &s, NULL, &err) != 0) {
            fprintf(stderr, "scenario %zu, %d:%d: %s\n", i, err.line, err.col, err.msg);
            fail();
        }
        char name[32];
        snprintf(name, sizeof name, "hand-made %zu", i);
        check_input(name, &s, &t);
    }
    zs_scenario_free(&s);
    assert_true(t.i8 > 0);   /* the routing one */
    assert_true(t.hang > 0); /* the skipped step */
}

/* zs_scenario_rank_view (what the world runs) gives each rank the program
 * of zs_scenario_for_rank (a deep copy), on random all-ranks scenarios
 * with edits of every kind, and the same error on broken ones (random
 * edit fields, as a tool might leave them), without touching s. */
static void test_rank_view(void **state) {
    (void)state;
    static uint8_t in[8192];
    static zs_scenario s, copy, own, ref, view;
    unsigned worlds = 0, edited = 0, broken = 0;
    for (uint64_t t = 0; t < 1500; t++) {
        size_t n = zs_rand_input(11, t, in, t % 2 ? sizeof in : 1024);
        zs_decode(in, n, &s);
        int garbage = t % 5 == 4;
        if (garbage) {
            uint64_t st = t * 31 + 1;
            s.cfg.world_size = (uint8_t)(2 + t % 7);
            s.cfg.all_ranks = 1;
            s.n_edits = (uint8_t)(1 + zs_rand_next(&st) % ZS_MAX_RANK_EDITS);
            for (unsigned k = 0; k < s.n_edits; k++) {
                zs_rank_edit *e = &s.edit[k];
                e->rank = (uint8_t)(zs_rand_next(&st) % s.cfg.world_size);
                e->kind = (uint8_t)(zs_rand_next(&st) % (ZS_EDIT_KINDS + 1));
                e->step = (uint8_t)(zs_rand_next(&st) % (s.n_steps + 1));
                e->pass = (uint8_t)(zs_rand_next(&st) % 3);
                e->call = (zs_id)(zs_rand_next(&st) % 20);
                e->module = (zs_id)(zs_rand_next(&st) % 20);
            }
        }
        if (!s.cfg.all_ranks) continue;
        worlds++;
        edited += s.n_edits > 0;
        assert_int_equal(zs_scenario_copy(&copy, &s), 0);
        for (unsigned r = 0; r < s.cfg.world_size; r++) {
            char e1[256] = "", e2[256] = "";
            int rc1 = zs_scenario_for_rank(&s, r, &ref, e1, sizeof e1);
            int rc2 = zs_scenario_rank_view(&s, r, &view, &own, e2, sizeof e2);
            assert_int_equal(rc1, rc2);
            if (rc1) {
                assert_string_equal(e1, e2);
                broken++;
                continue;
            }
            if (!zs_scenario_equal_strict(&ref, &view)) {
                fprintf(stderr, "trial %llu rank %u: the view differs from zs_scenario_for_rank\n",
                        (unsigned long long)t, r);
                fail();
            }
        }
        assert_true(zs_scenario_equal_strict(&s, &copy)); /* s unchanged */
    }
    fprintf(stderr, "rank views: %u all-ranks scenarios, %u with edits, %u rank programs refused\n", worlds, edited,
            broken);
    assert_true(edited > 100 && broken > 0);
    zs_scenario_free(&s);
    zs_scenario_free(&copy);
    zs_scenario_free(&own);
    zs_scenario_free(&ref);
}

int main(int argc, char **argv) {
    g_corpus = argc > 1 ? argv[1] : "corpus";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_view),
        cmocka_unit_test(test_hand_made),
        cmocka_unit_test(test_corpus_scn),
        cmocka_unit_test(test_corpus_bin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
