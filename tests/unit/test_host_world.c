/*
 * test_host_world.c - the multi-rank host world (zo_host_world_*,
 * zo_host_config.world): W host backends in one process, one pthread per
 * rank, matching their collectives.
 *
 * Covered: all-gathers of uneven parameters for W = 2, 3, 4, 8 (every
 * rank's full buffer equals the parameter, with and without the physical
 * cap); mismatches of parameter, numel, element size, group size and kind
 * (ZO_ERR_COLLECTIVE_MISMATCH on every rank, the report naming both ranks);
 * a rank that leaves early (would-hang detected, blocked ranks return
 * instead of deadlocking, later blocking calls fail fast); an extra gather
 * freed before completion; a contribution whose owner removed the
 * parameter and left; exchange (world and single view); reduce-scatter
 * sum/avg; faults; query never blocking; determinism under jitter; W
 * runtimes on one world (pre-/post-forward, the data is right); the
 * version-1 host config; bad arguments.  Every test runs under a watchdog
 * alarm, so a deadlock fails the test instead of hanging ctest.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend_host_internal.h"
#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

#define MAXW 8

/* ------------------------------------------------------------------ */
/* Harness: a world, one backend per rank, one thread per rank          */
/* ------------------------------------------------------------------ */

typedef struct world_fx world_fx;
typedef void (*rank_fn)(world_fx *fx, int rank);

struct world_fx {
    int W;
    zo_host_world *world;
    zo_backend *b[MAXW];
    uint64_t cap;
    rank_fn fn;
    void *user;
    /* per-rank results, checked by the main thread after join */
    zo_status st[MAXW][16];
    char err[MAXW][512];
    int failures[MAXW];
    char why[MAXW][256];
    /* a tiny sequencer for tests that need an order between ranks */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stage;
};

typedef struct rank_arg {
    world_fx *fx;
    int rank;
} rank_arg;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_host_world: watchdog: a test deadlocked\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    _exit(99);
}

static void watchdog(unsigned seconds) {
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

/* Records a failure in a rank thread (cmocka asserts are main-thread only). */
static void rfail(world_fx *fx, int rank, const char *fmt, ...) {
    if (fx->failures[rank]++) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fx->why[rank], sizeof fx->why[rank], fmt, ap);
    va_end(ap);
}

#define RCHECK(fx, rank, cond)                                                                                         \
    do {                                                                                                               \
        if (!(cond)) rfail((fx), (rank), "%s:%d: %s", __FILE__, __LINE__, #cond);                                      \
    } while (0)

static void fx_init(world_fx *fx, int W, uint64_t cap) {
    memset(fx, 0, sizeof *fx);
    fx->W = W;
    fx->cap = cap;
    pthread_mutex_init(&fx->mu, NULL);
    pthread_cond_init(&fx->cv, NULL);
    assert_int_equal(zo_host_world_create(W, NULL, &fx->world), ZO_OK);
    for (int r = 0; r < W; r++) {
        zo_host_config cfg = ZO_HOST_CONFIG_INIT;
        zo_host_testing ht = ZO_HOST_TESTING_INIT;
        cfg.testing = &ht;
        cfg.world_size = W;
        cfg.rank = r;
        ht.max_bytes_per_param = cap;
        cfg.world = fx->world;
        ht.no_poison = 0; /* a failed collective must leave the 0xA5 fill */
        assert_int_equal(zo_backend_host_create(&cfg, &fx->b[r]), ZO_OK);
    }
}

static void *rank_main(void *p) {
    rank_arg *a = p;
    a->fx->fn(a->fx, a->rank);
    return NULL;
}

/* Runs fn on every rank, one thread each; then asserts no rank failed. */
static void fx_run(world_fx *fx, rank_fn fn) {
    pthread_t t[MAXW];
    rank_arg a[MAXW];
    fx->fn = fn;
    for (int r = 0; r < fx->W; r++) {
        a[r].fx = fx;
        a[r].rank = r;
        assert_int_equal(pthread_create(&t[r], NULL, rank_main, &a[r]), 0);
    }
    for (int r = 0; r < fx->W; r++) pthread_join(t[r], NULL);
    for (int r = 0; r < fx->W; r++)
        if (fx->failures[r]) fail_msg("rank %d: %s (%d failures)", r, fx->why[r], fx->failures[r]);
}

/* Destroys the backends still alive and the world. */
static void fx_done(world_fx *fx) {
    for (int r = 0; r < fx->W; r++)
        if (fx->b[r]) {
            zo_backend_destroy(fx->b[r]);
            fx->b[r] = NULL;
        }
    assert_int_equal(zo_host_world_destroy(fx->world), ZO_OK);
    pthread_cond_destroy(&fx->cv);
    pthread_mutex_destroy(&fx->mu);
}

/* The rank leaves the world (its thread destroys its backend). */
static void leave(world_fx *fx, int rank) {
    zo_backend_destroy(fx->b[rank]);
    fx->b[rank] = NULL;
}

static void stage_wait(world_fx *fx, int s) {
    pthread_mutex_lock(&fx->mu);
    while (fx->stage < s) pthread_cond_wait(&fx->cv, &fx->mu);
    pthread_mutex_unlock(&fx->mu);
}

static void stage_set(world_fx *fx, int s) {
    pthread_mutex_lock(&fx->mu);
    fx->stage = s;
    pthread_cond_broadcast(&fx->cv);
    pthread_mutex_unlock(&fx->mu);
}

static zo_status add(world_fx *fx, int r, zo_param_id id, uint64_t numel, uint32_t es) {
    return zo_backend_param_add(fx->b[r], id, numel, es, ceil_div(numel, (uint64_t)fx->W));
}

static size_t padded(world_fx *fx, uint64_t numel, uint32_t es) {
    return (size_t)(ceil_div(numel, (uint64_t)fx->W) * es * (uint64_t)fx->W);
}

static zo_gather_item item(world_fx *fx, zo_param_id id, uint64_t numel, uint32_t es, void *full) {
    zo_gather_item it = {id, full, numel, ceil_div(numel, (uint64_t)fx->W), es};
    return it;
}

/* 0 if the physical bytes of full are param id's content, then padding zeros. */
static int check_content(world_fx *fx, int r, zo_param_id id, uint64_t numel, uint32_t es, const uint8_t *full) {
    uint64_t fb = numel * es, pb = padded(fx, numel, es);
    uint64_t L = zo_host_physical_bytes(fx->b[r], pb);
    for (uint64_t i = 0; i < L; i++) {
        uint8_t want = i < fb ? zo_host_param_byte(id, i) : 0;
        if (full[i] != want) {
            rfail(fx, r, "param %u byte %llu of %llu: got 0x%02x want 0x%02x", (unsigned)id, (unsigned long long)i,
                  (unsigned long long)L, full[i], want);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Matched all-gathers                                                 */
/* ------------------------------------------------------------------ */

typedef struct pspec {
    zo_param_id id;
    uint64_t numel;
    uint32_t es;
} pspec;

static const pspec g_params[] = {
    {0, 1, 4}, {1, 7, 2}, {2, 1000, 4}, {3, 1023, 1}, {4, 4097, 8}, {5, 33, 3}, {6, 65536 + 5, 4},
};
#define NPARAMS (sizeof g_params / sizeof g_params[0])

/* Every rank: add all parameters, gather them in groups {0,1}, {2}, {3,4,5,6}
 * for 3 rounds (fresh buffers each round), check every byte. */
static void rank_gather_all(world_fx *fx, int r) {
    for (size_t i = 0; i < NPARAMS; i++)
        RCHECK(fx, r, add(fx, r, g_params[i].id, g_params[i].numel, g_params[i].es) == ZO_OK);
    const size_t groups[][2] = {{0, 2}, {2, 1}, {3, 4}};
    for (int round = 0; round < 3; round++) {
        void *full[NPARAMS];
        for (size_t i = 0; i < NPARAMS; i++)
            RCHECK(fx, r,
                   zo_backend_full_alloc(fx->b[r], g_params[i].id, padded(fx, g_params[i].numel, g_params[i].es),
                                         &full[i]) == ZO_OK);
        zo_work *w[3];
        for (int g = 0; g < 3; g++) {
            zo_gather_item it[4];
            for (size_t j = 0; j < groups[g][1]; j++) {
                const pspec *p = &g_params[groups[g][0] + j];
                it[j] = item(fx, p->id, p->numel, p->es, full[groups[g][0] + j]);
            }
            RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], it, groups[g][1], &w[g]) == ZO_OK);
        }
        /* wait in reverse order: completion is per collective, not per wait order */
        for (int g = 2; g >= 0; g--) {
            zo_status s = zo_backend_wait(fx->b[r], w[g]);
            if (s != ZO_OK) rfail(fx, r, "wait group %d: %d %s", g, s, zo_backend_last_error(fx->b[r]));
            zo_backend_work_free(fx->b[r], w[g]);
        }
        for (size_t i = 0; i < NPARAMS; i++) {
            check_content(fx, r, g_params[i].id, g_params[i].numel, g_params[i].es, full[i]);
            zo_backend_full_free(fx->b[r], g_params[i].id, full[i]);
        }
    }
    RCHECK(fx, r, zo_host_live_works(fx->b[r]) == 0);
    RCHECK(fx, r, zo_host_pending_works(fx->b[r]) == 0);
    RCHECK(fx, r, zo_host_live_full_buffers(fx->b[r]) == 0);
}

static void gather_world(int W, uint64_t cap) {
    world_fx fx;
    watchdog(60);
    fx_init(&fx, W, cap);
    fx_run(&fx, rank_gather_all);
    for (int r = 0; r < W; r++) {
        assert_int_equal(zo_host_world_collectives(fx.world, r), 9);
        /* each rank stores only its own shards */
        uint64_t want = 0;
        for (size_t i = 0; i < NPARAMS; i++) {
            uint64_t sb = ceil_div(g_params[i].numel, (uint64_t)W) * g_params[i].es;
            uint64_t L = zo_host_physical_bytes(fx.b[r], sb * (uint64_t)W);
            uint64_t off = (uint64_t)r * sb;
            want += off < L ? (sb < L - off ? sb : L - off) : 0;
            const uint8_t *data;
            uint64_t stored;
            assert_int_equal(zo_host_shard(fx.b[r], g_params[i].id, r, &data, &stored), ZO_OK);
            if (W > 1)
                assert_int_equal(zo_host_shard(fx.b[r], g_params[i].id, (r + 1) % W, &data, &stored),
                                 ZO_ERR_INVALID_ARG);
        }
        assert_int_equal(zo_host_shard_bytes(fx.b[r]), want);
        assert_true(zo_host_bytes_copied(fx.b[r]) > 0);
        assert_int_equal(zo_host_progress(fx.b[r]), 0);
    }
    char rep[256];
    assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_OK);
    assert_string_equal(rep, "");
    fx_done(&fx);
    alarm(0);
}

static void test_gather_w1(void **s) {
    (void)s;
    gather_world(1, 0);
}
static void test_gather_w2(void **s) {
    (void)s;
    gather_world(2, 0);
}
static void test_gather_w3(void **s) {
    (void)s;
    gather_world(3, 0);
}
static void test_gather_w4(void **s) {
    (void)s;
    gather_world(4, 0);
}
static void test_gather_w8(void **s) {
    (void)s;
    gather_world(8, 0);
}
static void test_gather_w3_capped(void **s) {
    (void)s;
    gather_world(3, 100);
}
static void test_gather_w8_capped(void **s) {
    (void)s;
    gather_world(8, 1000);
}

/* ------------------------------------------------------------------ */
/* Mismatches                                                          */
/* ------------------------------------------------------------------ */

/* What rank r registers and gathers as its collective 0, per test case. */
typedef struct mm_case {
    const char *name;
    pspec p0[2], p1[2]; /* rank 0's items, the other ranks' items */
    size_t n0, n1;
    int kind1;        /* 0: all-gather, 1: exchange (other ranks) */
    const char *want; /* expected report, W = 2 */
} mm_case;

static const mm_case g_mm[] = {
    {"param",
     {{3, 1024, 4}},
     {{5, 1024, 4}},
     1,
     1,
     0,
     "collective 0: rank 0 all-gather [p3 1024x4B] vs rank 1 all-gather [p5 1024x4B]"},
    {"numel",
     {{3, 1024, 4}},
     {{3, 1000, 4}},
     1,
     1,
     0,
     "collective 0: rank 0 all-gather [p3 1024x4B] vs rank 1 all-gather [p3 1000x4B]"},
    {"elem_size",
     {{3, 1024, 4}},
     {{3, 1024, 2}},
     1,
     1,
     0,
     "collective 0: rank 0 all-gather [p3 1024x4B] vs rank 1 all-gather [p3 1024x2B]"},
    {"group size",
     {{3, 1024, 4}, {4, 10, 2}},
     {{3, 1024, 4}},
     2,
     1,
     0,
     "collective 0: rank 0 all-gather [p3 1024x4B, p4 10x2B] vs rank 1 all-gather [p3 1024x4B]"},
    {"kind",
     {{3, 1024, 4}},
     {{3, 1024, 4}},
     1,
     1,
     1,
     "collective 0: rank 0 all-gather [p3 1024x4B] vs rank 1 exchange [8B]"},
};
static const mm_case *g_cur_mm;

static void rank_mismatch(world_fx *fx, int r) {
    const mm_case *m = g_cur_mm;
    const pspec *ps = r == 0 ? m->p0 : m->p1;
    size_t n = r == 0 ? m->n0 : m->n1;
    /* every rank registers p3 and p4 as rank 0 does... except what differs */
    void *full[2] = {NULL, NULL};
    zo_gather_item it[2];
    for (size_t i = 0; i < n; i++) {
        RCHECK(fx, r, add(fx, r, ps[i].id, ps[i].numel, ps[i].es) == ZO_OK);
        RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], ps[i].id, padded(fx, ps[i].numel, ps[i].es), &full[i]) == ZO_OK);
        it[i] = item(fx, ps[i].id, ps[i].numel, ps[i].es, full[i]);
    }
    if (r != 0 && m->kind1 == 1) {
        uint64_t send = 42, recv[MAXW];
        fx->st[r][0] = zo_backend_exchange(fx->b[r], &send, sizeof send, recv);
    } else {
        zo_work *w = NULL;
        RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], it, n, &w) == ZO_OK);
        fx->st[r][0] = zo_backend_wait(fx->b[r], w);
        /* a second wait gives the same answer */
        fx->st[r][1] = zo_backend_wait(fx->b[r], w);
        zo_backend_work_free(fx->b[r], w);
        /* nothing was copied: the poison is still there */
        RCHECK(fx, r, ((uint8_t *)full[0])[0] == 0xA5);
    }
    snprintf(fx->err[r], sizeof fx->err[r], "%s", zo_backend_last_error(fx->b[r]));
    for (size_t i = 0; i < n; i++) zo_backend_full_free(fx->b[r], ps[i].id, full[i]);
    /* the world goes on: a matched exchange afterwards works */
    uint8_t send = (uint8_t)(r + 1), recv[MAXW];
    fx->st[r][2] = zo_backend_exchange(fx->b[r], &send, 1, recv);
    for (int k = 0; k < fx->W; k++) RCHECK(fx, r, recv[k] == k + 1);
}

static void test_mismatch_cases(void **s) {
    (void)s;
    const int worlds[] = {2, 3};
    for (size_t c = 0; c < sizeof g_mm / sizeof g_mm[0]; c++)
        for (size_t wi = 0; wi < 2; wi++) {
            world_fx fx;
            watchdog(30);
            g_cur_mm = &g_mm[c];
            fx_init(&fx, worlds[wi], 0);
            fx_run(&fx, rank_mismatch);
            char rep[512];
            assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_ERR_COLLECTIVE_MISMATCH);
            if (worlds[wi] == 2) assert_string_equal(rep, g_mm[c].want);
            assert_non_null(strstr(rep, "rank 0 "));
            assert_non_null(strstr(rep, "rank 1 "));
            for (int r = 0; r < fx.W; r++) {
                assert_int_equal(fx.st[r][0], ZO_ERR_COLLECTIVE_MISMATCH);
                if (!(r != 0 && g_mm[c].kind1 == 1)) assert_int_equal(fx.st[r][1], ZO_ERR_COLLECTIVE_MISMATCH);
                assert_string_equal(fx.err[r], rep); /* last_error carries the finding */
                assert_int_equal(fx.st[r][2], ZO_OK);
                assert_int_equal(zo_host_world_collectives(fx.world, r), 2);
            }
            /* a truncated report buffer is still a C string */
            char small[8];
            assert_int_equal(zo_host_world_report(fx.world, small, sizeof small), ZO_ERR_COLLECTIVE_MISMATCH);
            assert_int_equal(strlen(small), 7);
            assert_int_equal(zo_host_world_report(fx.world, NULL, 0), ZO_ERR_COLLECTIVE_MISMATCH);
            fx_done(&fx);
            alarm(0);
        }
}

/* ------------------------------------------------------------------ */
/* A rank that leaves early: would hang                                 */
/* ------------------------------------------------------------------ */

static unsigned g_jitter_seed;

static void jitter(int r, int step) {
    if (!g_jitter_seed) return;
    unsigned x = g_jitter_seed * 2654435761u ^ (unsigned)(r * 97 + step * 13);
    x ^= x >> 13;
    struct timespec ts = {0, (long)(x % 3000u) * 1000L};
    nanosleep(&ts, NULL);
}

/* Ranks 0..W-2 gather p0 twice (waiting each), then try an exchange;
 * rank W-1 gathers p0 once and leaves. */
static void rank_leaver(world_fx *fx, int r) {
    RCHECK(fx, r, add(fx, r, 0, 1024, 4) == ZO_OK);
    int rounds = r == fx->W - 1 ? 1 : 2;
    for (int k = 0; k < rounds; k++) {
        void *full;
        zo_work *w;
        jitter(r, k);
        RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 1024, 4), &full) == ZO_OK);
        zo_gather_item it = item(fx, 0, 1024, 4, full);
        RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
        jitter(r, k + 10);
        fx->st[r][k] = zo_backend_wait(fx->b[r], w);
        if (k == 1) snprintf(fx->err[r], sizeof fx->err[r], "%s", zo_backend_last_error(fx->b[r]));
        if (fx->st[r][k] == ZO_OK) check_content(fx, r, 0, 1024, 4, full);
        zo_backend_work_free(fx->b[r], w);
        zo_backend_full_free(fx->b[r], 0, full);
    }
    if (r == fx->W - 1) {
        jitter(r, 20);
        leave(fx, r);
        return;
    }
    /* later blocking calls fail fast */
    uint8_t send = 1, recv[MAXW];
    fx->st[r][2] = zo_backend_exchange(fx->b[r], &send, 1, recv);
    float g[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    RCHECK(fx, r, add(fx, r, 9, 8, 4) == ZO_OK);
    fx->st[r][3] = zo_backend_reduce_scatter(fx->b[r], 9, g, out, 8, ceil_div(8, (uint64_t)fx->W), ZO_REDUCE_SUM);
}

static void leaver_once(int W, unsigned seed, char *rep, size_t replen) {
    world_fx fx;
    watchdog(30);
    g_jitter_seed = seed;
    fx_init(&fx, W, 0);
    fx_run(&fx, rank_leaver);
    assert_int_equal(zo_host_world_report(fx.world, rep, replen), ZO_ERR_COLLECTIVE_MISMATCH);
    for (int r = 0; r < W - 1; r++) {
        assert_int_equal(fx.st[r][0], ZO_OK);
        assert_int_equal(fx.st[r][1], ZO_ERR_COLLECTIVE_MISMATCH);
        assert_int_equal(fx.st[r][2], ZO_ERR_COLLECTIVE_MISMATCH);
        assert_int_equal(fx.st[r][3], ZO_ERR_COLLECTIVE_MISMATCH);
        assert_int_equal(zo_host_world_collectives(fx.world, r), 4);
        if (r == 0)
            assert_string_equal(fx.err[r], rep);
        else
            assert_non_null(strstr(fx.err[r], rep));
    }
    assert_int_equal(fx.st[W - 1][0], ZO_OK);
    assert_int_equal(zo_host_world_collectives(fx.world, W - 1), 1);
    fx_done(&fx);
    g_jitter_seed = 0;
    alarm(0);
}

static void test_rank_leaves_early(void **s) {
    (void)s;
    char rep[512], want[512];
    leaver_once(2, 0, rep, sizeof rep);
    assert_string_equal(rep, "collective 1: would hang: rank 0 waits in all-gather [p0 1024x4B]; rank 1 left after 1 "
                             "collectives");
    for (int W = 3; W <= 4; W++) {
        leaver_once(W, 0, rep, sizeof rep);
        snprintf(want, sizeof want,
                 "collective 1: would hang: rank 0 waits in all-gather [p0 1024x4B]; rank %d left after 1 collectives",
                 W - 1);
        assert_string_equal(rep, want);
    }
}

/* Same program, 12 different thread timings: identical outcomes. */
static void test_deterministic_under_jitter(void **s) {
    (void)s;
    char first[512], rep[512];
    leaver_once(4, 0, first, sizeof first);
    for (unsigned seed = 1; seed <= 12; seed++) {
        leaver_once(4, seed, rep, sizeof rep);
        assert_string_equal(rep, first);
    }
}

/* A longer mixed program: 4 ranks, 120 collectives issued two at a time
 * (gathers of 3 parameters, an exchange every 10th), rank 2's 60th names
 * another parameter (mismatch), rank 3 leaves after 100 collectives (would
 * hang).  Every rank's sequence of statuses, its collective count and the
 * report must be the same under every thread timing. */
#define MIX_N 120
static zo_status g_mix[MAXW][MIX_N];

static void rank_mixed(world_fx *fx, int r) {
    for (zo_param_id p = 0; p < 3; p++) RCHECK(fx, r, add(fx, r, p, 50 + p * 17, 4) == ZO_OK);
    int stop = r == 3 ? 100 : MIX_N;
    zo_work *pend[2] = {NULL, NULL};
    void *pbuf[2] = {NULL, NULL};
    zo_param_id pid[2] = {0, 0};
    int pk[2] = {-1, -1};
    for (int k = 0; k <= stop; k++) {
        /* retire the older of the two in flight */
        int slot = k & 1;
        if (pend[slot]) {
            g_mix[r][pk[slot]] = zo_backend_wait(fx->b[r], pend[slot]);
            zo_backend_work_free(fx->b[r], pend[slot]);
            zo_backend_full_free(fx->b[r], pid[slot], pbuf[slot]);
            pend[slot] = NULL;
        }
        if (k == stop) break;
        jitter(r, k);
        if (k % 10 == 9) {
            uint32_t send = (uint32_t)(k * 4 + r), recv[MAXW];
            g_mix[r][k] = zo_backend_exchange(fx->b[r], &send, sizeof send, recv);
            if (g_mix[r][k] == ZO_OK)
                for (int q = 0; q < fx->W; q++) RCHECK(fx, r, recv[q] == (uint32_t)(k * 4 + q));
            continue;
        }
        zo_param_id p = (zo_param_id)(k % 3);
        if (r == 2 && k == 60) p = (p + 2) % 3; /* p2: not the parameter of the gather still in flight (k = 61 is p1) */
        uint64_t numel = 50 + p * 17;
        RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], p, padded(fx, numel, 4), &pbuf[slot]) == ZO_OK);
        zo_gather_item it = item(fx, p, numel, 4, pbuf[slot]);
        RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &pend[slot]) == ZO_OK);
        pid[slot] = p;
        pk[slot] = k;
    }
    /* the last one still in flight */
    for (int slot = 0; slot < 2; slot++)
        if (pend[slot]) {
            g_mix[r][pk[slot]] = zo_backend_wait(fx->b[r], pend[slot]);
            zo_backend_work_free(fx->b[r], pend[slot]);
            zo_backend_full_free(fx->b[r], pid[slot], pbuf[slot]);
        }
    if (r == 3) leave(fx, r);
}

static void test_deterministic_mixed_program(void **s) {
    (void)s;
    zo_status first[MAXW][MIX_N];
    char first_rep[512] = "", rep[512];
    uint64_t first_n[MAXW];
    for (unsigned seed = 0; seed <= 8; seed++) {
        world_fx fx;
        watchdog(60);
        memset(g_mix, 0x7f, sizeof g_mix);
        g_jitter_seed = seed;
        fx_init(&fx, 4, 0);
        fx_run(&fx, rank_mixed);
        assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_ERR_COLLECTIVE_MISMATCH);
        if (seed == 0) {
            memcpy(first, g_mix, sizeof first);
            memcpy(first_rep, rep, sizeof rep);
            for (int r = 0; r < 4; r++) first_n[r] = zo_host_world_collectives(fx.world, r);
            assert_string_equal(rep, "collective 60: rank 0 all-gather [p0 50x4B] vs rank 2 all-gather "
                                     "[p2 84x4B]");
            for (int r = 0; r < 4; r++) {
                for (int k = 0; k < 100; k++)
                    if (first[r][k] != (k == 60 ? ZO_ERR_COLLECTIVE_MISMATCH : ZO_OK))
                        fail_msg("rank %d collective %d: %d", r, k, first[r][k]);
                for (int k = 100; r != 3 && k < MIX_N; k++)
                    if (first[r][k] != ZO_ERR_COLLECTIVE_MISMATCH)
                        fail_msg("rank %d collective %d after rank 3 left: %d", r, k, first[r][k]);
            }
        } else {
            assert_string_equal(rep, first_rep);
            assert_memory_equal(g_mix, first, sizeof first);
            for (int r = 0; r < 4; r++) assert_int_equal(zo_host_world_collectives(fx.world, r), first_n[r]);
        }
        fx_done(&fx);
        alarm(0);
    }
    g_jitter_seed = 0;
}

/* ------------------------------------------------------------------ */
/* Work freed before completion; contributions of departed ranks        */
/* ------------------------------------------------------------------ */

/* Rank 0 issues one extra gather of p1, frees the work and the buffer at
 * once, then both ranks gather p0 (which rank 1 matches against rank 0's
 * extra gather of p1: a mismatch) - all safe, everyone returns. */
static void rank_extra_gather(world_fx *fx, int r) {
    RCHECK(fx, r, add(fx, r, 0, 100, 4) == ZO_OK);
    RCHECK(fx, r, add(fx, r, 1, 100, 4) == ZO_OK);
    if (r == 0) {
        void *full;
        zo_work *w;
        RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 1, padded(fx, 100, 4), &full) == ZO_OK);
        zo_gather_item it = item(fx, 1, 100, 4, full);
        RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
        zo_backend_work_free(fx->b[r], w);
        zo_backend_full_free(fx->b[r], 1, full);
        zo_backend_param_remove(fx->b[r], 1);
        RCHECK(fx, r, zo_host_live_works(fx->b[r]) == 0);
        RCHECK(fx, r, zo_host_pending_works(fx->b[r]) == 0);
    }
    void *full;
    zo_work *w;
    RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 100, 4), &full) == ZO_OK);
    zo_gather_item it = item(fx, 0, 100, 4, full);
    RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
    fx->st[r][0] = zo_backend_wait(fx->b[r], w);
    zo_backend_work_free(fx->b[r], w);
    zo_backend_full_free(fx->b[r], 0, full);
    leave(fx, r);
}

static void test_extra_gather_freed_before_completion(void **s) {
    (void)s;
    world_fx fx;
    watchdog(30);
    fx_init(&fx, 2, 0);
    fx_run(&fx, rank_extra_gather);
    /* rank 0's collective 0 (p1) met rank 1's (p0); rank 0's collective 1
     * (p0) then has no partner: rank 1 left after 1 collective */
    assert_int_equal(fx.st[1][0], ZO_ERR_COLLECTIVE_MISMATCH);
    assert_int_equal(fx.st[0][0], ZO_ERR_COLLECTIVE_MISMATCH);
    char rep[512];
    assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_ERR_COLLECTIVE_MISMATCH);
    assert_string_equal(rep, "collective 0: rank 0 all-gather [p1 100x4B] vs rank 1 all-gather [p0 100x4B]");
    fx_done(&fx);
    alarm(0);
}

/* Everyone leaves while rank 0's unwaited gather was never matched. */
static void rank_unmatched_then_leave(world_fx *fx, int r) {
    if (r == 0) {
        void *full;
        zo_work *w;
        RCHECK(fx, r, add(fx, r, 0, 100, 4) == ZO_OK);
        RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 100, 4), &full) == ZO_OK);
        zo_gather_item it = item(fx, 0, 100, 4, full);
        RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
        zo_backend_work_free(fx->b[r], w);
        zo_backend_full_free(fx->b[r], 0, full);
    }
    leave(fx, r);
}

static void test_everyone_left_with_unmatched_collective(void **s) {
    (void)s;
    world_fx fx;
    watchdog(30);
    fx_init(&fx, 2, 0);
    fx_run(&fx, rank_unmatched_then_leave);
    char rep[512];
    assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_ERR_COLLECTIVE_MISMATCH);
    assert_string_equal(rep, "collective 0: would hang: rank 0 issued all-gather [p0 100x4B] and left; rank 1 left "
                             "after 0 collectives");
    fx_done(&fx);
    alarm(0);
}

/* Rank 0 leaves collective 0 unwaited and blocks on collective 1; rank 1
 * leaves at once.  The finding names the collective waited on; the other
 * pending one is aborted with a text that quotes it. */
static void rank_two_pending(world_fx *fx, int r) {
    if (r == 1) {
        leave(fx, r);
        return;
    }
    void *full[2];
    zo_work *w[2];
    for (int i = 0; i < 2; i++) {
        RCHECK(fx, r, add(fx, r, (zo_param_id)i, 10 + (uint64_t)i, 4) == ZO_OK);
        RCHECK(fx, r,
               zo_backend_full_alloc(fx->b[r], (zo_param_id)i, padded(fx, 10 + (uint64_t)i, 4), &full[i]) == ZO_OK);
        zo_gather_item it = item(fx, (zo_param_id)i, 10 + (uint64_t)i, 4, full[i]);
        RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w[i]) == ZO_OK);
    }
    fx->st[r][1] = zo_backend_wait(fx->b[r], w[1]);
    snprintf(fx->err[r], sizeof fx->err[r], "%s", zo_backend_last_error(fx->b[r]));
    fx->st[r][0] = zo_backend_wait(fx->b[r], w[0]);
    snprintf(fx->err[1], sizeof fx->err[1], "%s", zo_backend_last_error(fx->b[r])); /* rank 1 writes none */
    int done = 0;
    RCHECK(fx, r, zo_backend_query(fx->b[r], w[0], &done) == ZO_ERR_COLLECTIVE_MISMATCH && done == 1);
    for (int i = 0; i < 2; i++) {
        zo_backend_work_free(fx->b[r], w[i]);
        zo_backend_full_free(fx->b[r], (zo_param_id)i, full[i]);
    }
}

static void test_would_hang_aborts_every_pending_collective(void **s) {
    (void)s;
    world_fx fx;
    watchdog(30);
    fx_init(&fx, 2, 0);
    fx_run(&fx, rank_two_pending);
    char rep[512], want[700];
    assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_ERR_COLLECTIVE_MISMATCH);
    assert_string_equal(rep, "collective 1: would hang: rank 0 waits in all-gather [p1 11x4B]; rank 1 left after 0 "
                             "collectives");
    assert_int_equal(fx.st[0][1], ZO_ERR_COLLECTIVE_MISMATCH);
    assert_int_equal(fx.st[0][0], ZO_ERR_COLLECTIVE_MISMATCH);
    assert_string_equal(fx.err[0], rep);
    snprintf(want, sizeof want, "collective 0 aborted: %s", rep);
    assert_string_equal(fx.err[1], want);
    fx_done(&fx);
    alarm(0);
}

/* Rank 0 issues its gather of p0, frees the work and buffer, removes the
 * parameter and leaves; only then do ranks 1, 2 issue theirs: they still
 * receive rank 0's shard (kept by the world), byte for byte. */
static void rank_departed_contribution(world_fx *fx, int r) {
    const uint64_t numel = 3001;
    RCHECK(fx, r, add(fx, r, 0, numel, 4) == ZO_OK);
    void *full;
    zo_work *w;
    RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, numel, 4), &full) == ZO_OK);
    zo_gather_item it = item(fx, 0, numel, 4, full);
    if (r != 0) stage_wait(fx, 1);
    RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
    if (r == 0) {
        zo_backend_full_free(fx->b[r], 0, full); /* cancels this rank's item */
        zo_backend_param_remove(fx->b[r], 0);    /* its shard must survive for the others */
        zo_backend_work_free(fx->b[r], w);
        leave(fx, r);
        stage_set(fx, 1);
        return;
    }
    fx->st[r][0] = zo_backend_wait(fx->b[r], w);
    if (fx->st[r][0] == ZO_OK) check_content(fx, r, 0, numel, 4, full);
    zo_backend_work_free(fx->b[r], w);
    zo_backend_full_free(fx->b[r], 0, full);
}

static void test_departed_rank_contribution_kept(void **s) {
    (void)s;
    world_fx fx;
    watchdog(30);
    fx_init(&fx, 3, 0);
    fx_run(&fx, rank_departed_contribution);
    assert_int_equal(fx.st[1][0], ZO_OK);
    assert_int_equal(fx.st[2][0], ZO_OK);
    assert_int_equal(zo_host_world_report(fx.world, NULL, 0), ZO_OK);
    fx_done(&fx);
    alarm(0);
}

/* A buffer freed while this rank's work is unobserved: ZO_ERR_STATE for this
 * rank (whether or not the data had arrived), the others get their data. */
static void rank_cancel_own(world_fx *fx, int r) {
    RCHECK(fx, r, add(fx, r, 0, 50, 4) == ZO_OK);
    void *full;
    zo_work *w;
    RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 50, 4), &full) == ZO_OK);
    zo_gather_item it = item(fx, 0, 50, 4, full);
    RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
    if (r == 1) {
        zo_backend_full_free(fx->b[r], 0, full);
        full = NULL;
    }
    fx->st[r][0] = zo_backend_wait(fx->b[r], w);
    if (full && fx->st[r][0] == ZO_OK) check_content(fx, r, 0, 50, 4, full);
    zo_backend_work_free(fx->b[r], w);
    if (full) zo_backend_full_free(fx->b[r], 0, full);
}

static void test_buffer_freed_while_pending(void **s) {
    (void)s;
    for (int rep = 0; rep < 5; rep++) {
        world_fx fx;
        watchdog(30);
        fx_init(&fx, 2, 0);
        fx_run(&fx, rank_cancel_own);
        assert_int_equal(fx.st[0][0], ZO_OK);
        assert_int_equal(fx.st[1][0], ZO_ERR_STATE);
        fx_done(&fx);
        alarm(0);
    }
}

/* ------------------------------------------------------------------ */
/* Exchange                                                            */
/* ------------------------------------------------------------------ */

static void rank_exchange(world_fx *fx, int r) {
    for (size_t bytes = 1; bytes <= 256; bytes = bytes * 3 + 1) {
        uint8_t send[256], recv[MAXW * 256];
        for (size_t i = 0; i < bytes; i++) send[i] = (uint8_t)(r * 31 + i * 7 + bytes);
        memset(recv, 0xEE, sizeof recv);
        zo_status st = zo_backend_exchange(fx->b[r], send, bytes, recv);
        RCHECK(fx, r, st == ZO_OK);
        for (int k = 0; k < fx->W; k++)
            for (size_t i = 0; i < bytes; i++)
                if (recv[(size_t)k * bytes + i] != (uint8_t)(k * 31 + i * 7 + bytes)) {
                    rfail(fx, r, "exchange %zu bytes: rank %d byte %zu wrong", bytes, k, i);
                    return;
                }
        RCHECK(fx, r, recv[(size_t)fx->W * bytes] == 0xEE || (size_t)fx->W * bytes == sizeof recv);
    }
    /* the full 256 bytes */
    uint8_t send[256], recv[MAXW * 256];
    memset(send, r, sizeof send);
    RCHECK(fx, r, zo_backend_exchange(fx->b[r], send, 256, recv) == ZO_OK);
    for (int k = 0; k < fx->W; k++) RCHECK(fx, r, recv[k * 256] == k && recv[k * 256 + 255] == k);
    /* bad arguments are not collectives */
    RCHECK(fx, r, zo_backend_exchange(fx->b[r], send, 0, recv) == ZO_ERR_INVALID_ARG);
    RCHECK(fx, r, zo_backend_exchange(fx->b[r], send, 257, recv) == ZO_ERR_INVALID_ARG);
    RCHECK(fx, r, zo_backend_exchange(fx->b[r], NULL, 4, recv) == ZO_ERR_INVALID_ARG);
    RCHECK(fx, r, zo_backend_exchange(fx->b[r], send, 4, NULL) == ZO_ERR_INVALID_ARG);
}

static void test_exchange_world(void **s) {
    (void)s;
    for (int W = 2; W <= MAXW; W *= 2) {
        world_fx fx;
        watchdog(30);
        fx_init(&fx, W, 0);
        fx_run(&fx, rank_exchange);
        for (int r = 0; r < W; r++) assert_int_equal(zo_host_world_collectives(fx.world, r), 6);
        assert_int_equal(zo_host_world_report(fx.world, NULL, 0), ZO_OK);
        fx_done(&fx);
        alarm(0);
    }
}

static void test_exchange_single_view(void **s) {
    (void)s;
    zo_host_config cfg = ZO_HOST_CONFIG_INIT;
    cfg.world_size = 5;
    cfg.rank = 3;
    zo_backend *b;
    assert_int_equal(zo_backend_host_create(&cfg, &b), ZO_OK);
    assert_true(b->ops->version >= 2u); /* exchange is a version 2 op */
    assert_non_null(b->ops->exchange);
    uint8_t send[64], recv[5 * 64];
    for (int i = 0; i < 64; i++) send[i] = (uint8_t)(i * 5 + 1);
    assert_int_equal(zo_backend_exchange(b, send, 64, recv), ZO_OK);
    for (int r = 0; r < 5; r++) assert_memory_equal(recv + r * 64, send, 64);
    assert_int_equal(zo_backend_exchange(b, send, 0, recv), ZO_ERR_INVALID_ARG);
    assert_true(strlen(zo_backend_last_error(b)) > 0);
    assert_int_equal(zo_backend_exchange(b, send, 257, recv), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_exchange(b, NULL, 1, recv), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_exchange(b, send, 1, NULL), ZO_ERR_INVALID_ARG);
    zo_backend_destroy(b);
}

/* ------------------------------------------------------------------ */
/* Reduce-scatter                                                      */
/* ------------------------------------------------------------------ */

static float grad_of(int r, uint64_t j) { return (float)((r + 1) * 1000 + (int)(j % 997)); }

static void rank_reduce_scatter(world_fx *fx, int r) {
    const uint64_t numel = 1001;
    uint64_t pn = ceil_div(numel, (uint64_t)fx->W);
    RCHECK(fx, r, add(fx, r, 2, numel, 4) == ZO_OK);
    float *g = malloc(numel * sizeof(float)), *out = malloc(pn * sizeof(float));
    for (uint64_t j = 0; j < numel; j++) g[j] = grad_of(r, j);
    for (int op = 0; op < 2; op++) {
        RCHECK(fx, r, zo_backend_reduce_scatter(fx->b[r], 2, g, out, numel, pn, (zo_reduce_op)op) == ZO_OK);
        for (uint64_t i = 0; i < pn; i++) {
            uint64_t j = (uint64_t)r * pn + i;
            float want = 0.0f;
            if (j < numel) {
                for (int k = 0; k < fx->W; k++) want += grad_of(k, j);
                if (op == ZO_REDUCE_AVG) want /= (float)fx->W;
            }
            if (out[i] != want) {
                rfail(fx, r, "op %d element %llu: %g want %g", op, (unsigned long long)i, out[i], want);
                break;
            }
        }
    }
    /* op mismatch: rank 0 sums, the others average */
    fx->st[r][0] = zo_backend_reduce_scatter(fx->b[r], 2, g, out, numel, pn, r == 0 ? ZO_REDUCE_SUM : ZO_REDUCE_AVG);
    free(g);
    free(out);
}

static void test_reduce_scatter_world(void **s) {
    (void)s;
    const int worlds[] = {2, 3, 8};
    for (int wi = 0; wi < 3; wi++) {
        world_fx fx;
        watchdog(30);
        fx_init(&fx, worlds[wi], 0);
        fx_run(&fx, rank_reduce_scatter);
        char rep[256];
        assert_int_equal(zo_host_world_report(fx.world, rep, sizeof rep), ZO_ERR_COLLECTIVE_MISMATCH);
        assert_string_equal(rep, "collective 2: rank 0 reduce-scatter [p2 1001x4B sum] vs rank 1 reduce-scatter "
                                 "[p2 1001x4B avg]");
        for (int r = 0; r < fx.W; r++) assert_int_equal(fx.st[r][0], ZO_ERR_COLLECTIVE_MISMATCH);
        fx_done(&fx);
        alarm(0);
    }
}

/* ------------------------------------------------------------------ */
/* query never blocks; faults in a world                                */
/* ------------------------------------------------------------------ */

static void rank_query(world_fx *fx, int r) {
    RCHECK(fx, r, add(fx, r, 0, 64, 4) == ZO_OK);
    void *full;
    zo_work *w;
    RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 64, 4), &full) == ZO_OK);
    zo_gather_item it = item(fx, 0, 64, 4, full);
    if (r == 1) stage_wait(fx, 1);
    RCHECK(fx, r, zo_backend_all_gather_start(fx->b[r], &it, 1, &w) == ZO_OK);
    int done = -1;
    if (r == 0) {
        /* rank 1 has not issued yet: not done, and query returned */
        RCHECK(fx, r, zo_backend_query(fx->b[r], w, &done) == ZO_OK);
        RCHECK(fx, r, done == 0);
        RCHECK(fx, r, zo_host_pending_works(fx->b[r]) == 1);
        stage_set(fx, 1);
        for (int i = 0; i < 100000 && !done; i++) {
            RCHECK(fx, r, zo_backend_query(fx->b[r], w, &done) == ZO_OK);
            if (!done) {
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
            }
        }
        RCHECK(fx, r, done == 1);
        RCHECK(fx, r, zo_host_pending_works(fx->b[r]) == 0);
    }
    RCHECK(fx, r, zo_backend_wait(fx->b[r], w) == ZO_OK);
    check_content(fx, r, 0, 64, 4, full);
    zo_backend_work_free(fx->b[r], w);
    zo_backend_full_free(fx->b[r], 0, full);
}

static void test_query_never_blocks(void **s) {
    (void)s;
    world_fx fx;
    watchdog(30);
    fx_init(&fx, 2, 0);
    fx_run(&fx, rank_query);
    fx_done(&fx);
    alarm(0);
}

/* Rank 0: the first gather fails transiently at issue (not a collective),
 * the retry works; rank 1's wait of the second collective suffers
 * FAIL_WORK: only rank 1 sees the error, rank 0 gets its data. */
static void rank_faults(world_fx *fx, int r) {
    RCHECK(fx, r, add(fx, r, 0, 300, 4) == ZO_OK);
    zo_host_fault f = {ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL, 1, 1, 0, 0};
    if (r == 1) {
        f.point = ZO_HOST_FAULT_WAIT;
        f.action = ZO_HOST_FAULT_FAIL_WORK;
        f.at = 2;
    }
    RCHECK(fx, r, zo_host_set_fault(fx->b[r], &f) == ZO_OK);
    for (int k = 0; k < 2; k++) {
        void *full;
        zo_work *w;
        RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 300, 4), &full) == ZO_OK);
        zo_gather_item it = item(fx, 0, 300, 4, full);
        zo_status st = zo_backend_all_gather_start(fx->b[r], &it, 1, &w);
        if (r == 0 && k == 0) {
            RCHECK(fx, r, st == ZO_ERR_BACKEND);
            RCHECK(fx, r, zo_host_world_collectives(fx->world, 0) == 0);
            st = zo_backend_all_gather_start(fx->b[r], &it, 1, &w);
        }
        RCHECK(fx, r, st == ZO_OK);
        fx->st[r][k] = zo_backend_wait(fx->b[r], w);
        if (fx->st[r][k] == ZO_OK) check_content(fx, r, 0, 300, 4, full);
        zo_backend_work_free(fx->b[r], w);
        zo_backend_full_free(fx->b[r], 0, full);
    }
}

static void test_faults_in_world(void **s) {
    (void)s;
    world_fx fx;
    watchdog(30);
    fx_init(&fx, 2, 0);
    fx_run(&fx, rank_faults);
    assert_int_equal(fx.st[0][0], ZO_OK);
    assert_int_equal(fx.st[0][1], ZO_OK);
    assert_int_equal(fx.st[1][0], ZO_OK);
    assert_int_equal(fx.st[1][1], ZO_ERR_BACKEND);
    assert_int_equal(zo_host_world_report(fx.world, NULL, 0), ZO_OK);
    fx_done(&fx);
    alarm(0);
}

/* ------------------------------------------------------------------ */
/* Many gathers: throughput                                            */
/* ------------------------------------------------------------------ */

#define NGATHERS 10000

static void rank_many(world_fx *fx, int r) {
    RCHECK(fx, r, add(fx, r, 0, 256, 4) == ZO_OK);
    RCHECK(fx, r, add(fx, r, 1, 1000, 2) == ZO_OK);
    void *full[2];
    RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 0, padded(fx, 256, 4), &full[0]) == ZO_OK);
    RCHECK(fx, r, zo_backend_full_alloc(fx->b[r], 1, padded(fx, 1000, 2), &full[1]) == ZO_OK);
    for (int k = 0; k < NGATHERS; k++) {
        int p = k & 1;
        zo_gather_item it = p ? item(fx, 1, 1000, 2, full[1]) : item(fx, 0, 256, 4, full[0]);
        zo_work *w;
        if (zo_backend_all_gather_start(fx->b[r], &it, 1, &w) != ZO_OK) {
            rfail(fx, r, "gather %d not issued", k);
            break;
        }
        if (zo_backend_wait(fx->b[r], w) != ZO_OK) rfail(fx, r, "gather %d failed", k);
        zo_backend_work_free(fx->b[r], w);
    }
    check_content(fx, r, 0, 256, 4, full[0]);
    check_content(fx, r, 1, 1000, 2, full[1]);
    zo_backend_full_free(fx->b[r], 0, full[0]);
    zo_backend_full_free(fx->b[r], 1, full[1]);
}

static void test_many_gathers_4_ranks(void **s) {
    (void)s;
    world_fx fx;
    watchdog(120);
    fx_init(&fx, 4, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fx_run(&fx, rank_many);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s_ = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    print_message("host world: %d matched all-gathers x 4 ranks in %.3f s (%.1f us per collective)\n", NGATHERS, s_,
                  s_ * 1e6 / NGATHERS);
    for (int r = 0; r < 4; r++) assert_int_equal(zo_host_world_collectives(fx.world, r), NGATHERS);
    fx_done(&fx);
    alarm(0);
}

/* ------------------------------------------------------------------ */
/* W runtimes on one world                                              */
/* ------------------------------------------------------------------ */

/* A model: root (p0: 5000 x 4B) -> a (p1: 333 x 2B, p2: 70001 x 4B) -> b (p3: 9 x 8B) */
static void rank_runtime(world_fx *fx, int r) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = fx->W;
    cfg.rank = r;
    cfg.backend = fx->b[r];
    cfg.param_persistence_threshold = 0; /* every parameter is gathered and released per call */
    zo_runtime *rt = NULL;
    if (zo_runtime_create(&cfg, &rt) != ZO_OK) {
        rfail(fx, r, "zo_runtime_create failed");
        return;
    }
    zo_module_id root, a, b;
    zo_param_id p[4];
    RCHECK(fx, r, zo_module_register(rt, ZO_NO_MODULE, "root", 0, &root) == ZO_OK);
    RCHECK(fx, r, zo_module_register(rt, root, "a", 0, &a) == ZO_OK);
    RCHECK(fx, r, zo_module_register(rt, a, "b", 0, &b) == ZO_OK);
    static const struct {
        uint64_t numel;
        uint32_t es;
        int owner;
    } ps[4] = {{5000, 4, 0}, {333, 2, 1}, {70001, 4, 1}, {9, 8, 2}};
    zo_module_id owners[3] = {root, a, b};
    for (int i = 0; i < 4; i++)
        RCHECK(fx, r, zo_param_register(rt, owners[ps[i].owner], NULL, ps[i].numel, ps[i].es, 0, &p[i]) == ZO_OK);
    for (int step = 0; step < 3; step++) {
        zo_graph g;
        RCHECK(fx, r, zo_forward_begin(rt, ZO_FWD_ROOT, &g) == ZO_OK);
        for (int m = 0; m < 3; m++) {
            zo_status st = zo_pre_forward(rt, owners[m], 0);
            if (st != ZO_OK) {
                rfail(fx, r, "step %d pre_forward(%d): %s", step, m, zo_last_error(rt));
                break;
            }
            for (int i = 0; i < 4; i++) {
                if (ps[i].owner != m) continue;
                const void *data = NULL;
                size_t bytes = 0;
                RCHECK(fx, r, zo_param_access(rt, owners[m], p[i], &data, &bytes) == ZO_OK);
                RCHECK(fx, r, bytes == ps[i].numel * ps[i].es);
                if (data)
                    for (size_t j = 0; j < bytes; j++)
                        if (((const uint8_t *)data)[j] != zo_host_param_byte(p[i], j)) {
                            rfail(fx, r, "step %d param %u byte %zu wrong", step, (unsigned)p[i], j);
                            break;
                        }
            }
        }
        for (int m = 2; m >= 0; m--) RCHECK(fx, r, zo_post_forward(rt, owners[m]) == ZO_OK);
        RCHECK(fx, r, zo_forward_end(rt, g) == ZO_OK);
        RCHECK(fx, r, zo_release_all(rt) == ZO_OK);
    }
    zo_stats st;
    RCHECK(fx, r, zo_get_stats(rt, &st) == ZO_OK);
    RCHECK(fx, r, st.gathers >= 12);
    RCHECK(fx, r, zo_check_consistency(rt) == ZO_OK);
    RCHECK(fx, r, zo_runtime_destroy(rt) == ZO_OK);
    leave(fx, r);
}

static void test_runtimes_on_a_world(void **s) {
    (void)s;
    const int worlds[] = {2, 3, 4};
    for (int wi = 0; wi < 3; wi++) {
        world_fx fx;
        watchdog(60);
        fx_init(&fx, worlds[wi], 0);
        fx_run(&fx, rank_runtime);
        char rep[512];
        zo_status st = zo_host_world_report(fx.world, rep, sizeof rep);
        if (st != ZO_OK) fail_msg("W=%d: %s", worlds[wi], rep);
        uint64_t n0 = zo_host_world_collectives(fx.world, 0);
        print_message("W=%d: %llu collectives per rank\n", fx.W, (unsigned long long)n0);
        assert_true(n0 >= 3);
        for (int r = 1; r < fx.W; r++) assert_int_equal(zo_host_world_collectives(fx.world, r), n0);
        fx_done(&fx);
        alarm(0);
    }
}

/* ------------------------------------------------------------------ */
/* Configuration and bad arguments                                      */
/* ------------------------------------------------------------------ */

static void test_world_create_and_join_errors(void **s) {
    (void)s;
    zo_host_world *w = NULL;
    assert_int_equal(zo_host_world_create(2, NULL, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_world_create(0, NULL, &w), ZO_ERR_INVALID_ARG);
    assert_null(w);
    assert_int_equal(zo_host_world_create(ZO_MAX_WORLD_SIZE + 1, NULL, &w), ZO_ERR_INVALID_ARG);
    zo_allocator none = {NULL, NULL, NULL};
    assert_int_equal(zo_host_world_destroy(NULL), ZO_OK);
    assert_int_equal(zo_host_world_report(NULL, NULL, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_world_collectives(NULL, 0), 0);

    assert_int_equal(zo_host_world_create(3, &none, &w), ZO_OK);
    zo_host_config cfg = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    cfg.testing = &ht;
    cfg.world = w;
    cfg.world_size = 2; /* not the world's */
    cfg.rank = 0;
    zo_backend *b0 = NULL, *b1 = NULL, *bx = NULL;
    assert_int_equal(zo_backend_host_create(&cfg, &bx), ZO_ERR_INVALID_ARG);
    assert_null(bx);
    cfg.world_size = 3;
    ht.max_bytes_per_param = 64;
    assert_int_equal(zo_backend_host_create(&cfg, &b0), ZO_OK);
    assert_int_equal(zo_backend_host_create(&cfg, &bx), ZO_ERR_INVALID_ARG); /* rank 0 again */
    cfg.rank = 1;
    ht.max_bytes_per_param = 0; /* differs from rank 0's cap */
    assert_int_equal(zo_backend_host_create(&cfg, &bx), ZO_ERR_INVALID_ARG);
    ht.max_bytes_per_param = 64;
    ht.deferred = 1; /* ignored by world backends */
    assert_int_equal(zo_backend_host_create(&cfg, &b1), ZO_OK);
    assert_int_equal(b1->ops->rank(b1->ctx), 1);
    assert_int_equal(b1->ops->world_size(b1->ctx), 3);
    /* live ranks: the world cannot go */
    assert_int_equal(zo_host_world_destroy(w), ZO_ERR_STATE);
    assert_int_equal(zo_host_world_collectives(w, 5), 0);
    assert_int_equal(zo_host_world_collectives(w, -1), 0);
    zo_backend_destroy(b0);
    assert_int_equal(zo_host_world_destroy(w), ZO_ERR_STATE);
    zo_backend_destroy(b1);
    /* a rank that left cannot come back */
    cfg.rank = 0;
    assert_int_equal(zo_backend_host_create(&cfg, &bx), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_world_report(w, NULL, 0), ZO_OK);
    assert_int_equal(zo_host_world_destroy(w), ZO_OK); /* rank 2 never joined: fine */
}

/* Counting allocator: the world and its entries use it, nothing leaks. */
typedef struct cnt_alloc {
    long live, calls;
    pthread_mutex_t mu;
    size_t fail_size; /* allocations of exactly this many bytes fail; 0: none */
} cnt_alloc;
static void *ca_alloc(void *o, size_t n) {
    cnt_alloc *a = o;
    if (a->fail_size && n == a->fail_size) return NULL;
    pthread_mutex_lock(&a->mu);
    a->live++;
    a->calls++;
    pthread_mutex_unlock(&a->mu);
    return malloc(n);
}
static void ca_free(void *o, void *p) {
    cnt_alloc *a = o;
    if (!p) return;
    pthread_mutex_lock(&a->mu);
    a->live--;
    pthread_mutex_unlock(&a->mu);
    free(p);
}

static void allocator_world(size_t fail_size, zo_status want) {
    cnt_alloc ca = {0, 0, PTHREAD_MUTEX_INITIALIZER, fail_size};
    zo_allocator al = {ca_alloc, ca_free, &ca};
    world_fx fx;
    watchdog(30);
    memset(&fx, 0, sizeof fx);
    fx.W = 3;
    pthread_mutex_init(&fx.mu, NULL);
    pthread_cond_init(&fx.cv, NULL);
    assert_int_equal(zo_host_world_create(3, &al, &fx.world), ZO_OK);
    for (int r = 0; r < 3; r++) {
        zo_host_config cfg = ZO_HOST_CONFIG_INIT;
        cfg.world_size = 3;
        cfg.rank = r;
        cfg.world = fx.world;
        cfg.allocator = al;
        assert_int_equal(zo_backend_host_create(&cfg, &fx.b[r]), ZO_OK);
    }
    fx_run(&fx, rank_departed_contribution); /* snapshots, detached entries */
    assert_int_equal(fx.st[1][0], want);
    assert_int_equal(fx.st[2][0], want);
    fx_done(&fx);
    assert_int_equal(ca.live, 0);
    assert_true(ca.calls > 10);
    alarm(0);
}

static void sched_yield_never(void *user, int rank) {
    (void)user;
    (void)rank;
    fail(); /* no rank runs in these tests */
}

/* zo_host_world_set_sched: its errors, and that it is refused once a rank
 * has joined (the world unchanged: its ranks block on the condition
 * variable as before). */
static void test_world_set_sched_errors(void **s) {
    (void)s;
    zo_host_world *w = NULL;
    assert_int_equal(zo_host_world_create(2, NULL, &w), ZO_OK);
    zo_host_world_sched sc = ZO_HOST_WORLD_SCHED_INIT;
    assert_int_equal(zo_host_world_set_sched(w, &sc), ZO_ERR_INVALID_ARG); /* no yield */
    assert_non_null(strstr(zo_last_error(NULL), "yield is NULL"));
    sc.yield = sched_yield_never;
    sc.size = sizeof sc - 1;
    assert_int_equal(zo_host_world_set_sched(w, &sc), ZO_ERR_VERSION);
    assert_non_null(strstr(zo_last_error(NULL), "ZO_HOST_WORLD_SCHED_INIT"));
    sc.size = sizeof sc;
    sc.version = ZO_HOST_WORLD_SCHED_VERSION + 1;
    assert_int_equal(zo_host_world_set_sched(w, &sc), ZO_ERR_VERSION);
    sc.version = ZO_HOST_WORLD_SCHED_VERSION;
    assert_int_equal(zo_host_world_set_sched(w, &sc), ZO_OK);
    assert_int_equal(zo_host_world_set_sched(w, NULL), ZO_OK); /* threads again */
    zo_host_config cfg = ZO_HOST_CONFIG_INIT;
    cfg.world = w;
    cfg.world_size = 2;
    cfg.rank = 1;
    zo_backend *b = NULL;
    assert_int_equal(zo_backend_host_create(&cfg, &b), ZO_OK);
    assert_int_equal(zo_host_world_set_sched(w, &sc), ZO_ERR_STATE);
    assert_non_null(strstr(zo_last_error(NULL), "1 rank(s) joined"));
    assert_int_equal(zo_host_world_set_sched(w, NULL), ZO_ERR_STATE);
    zo_backend_destroy(b);
    assert_int_equal(zo_host_world_destroy(w), ZO_OK);
}

static void test_world_allocator_no_leak(void **s) {
    (void)s;
    allocator_world(0, ZO_OK);
}

/* Rank 0's shard (1001 x 4 B = 4004 bytes at W = 3) cannot be kept when it
 * releases it: the collective fails with ZO_ERR_NOMEM on the ranks still
 * there instead of delivering wrong bytes. */
static void test_lost_contribution_fails_the_collective(void **s) {
    (void)s;
    allocator_world(4004, ZO_ERR_NOMEM);
}

static void test_v1_host_config_accepted(void **s) {
    (void)s;
    zo_host_config_v2 cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.size = ZO_HOST_CONFIG_V1_SIZE;
    cfg.version = 1;
    cfg.world_size = 2;
    cfg.rank = 1;
    cfg.world = (zo_host_world *)(uintptr_t)0x1; /* past a v1 struct: never read */
    zo_backend *b = NULL;
    assert_int_equal(zo_backend_host_create((const zo_host_config *)&cfg, &b), ZO_OK);
    assert_int_equal(b->ops->rank(b->ctx), 1);
    /* single view: the backend stores both ranks' shards */
    assert_int_equal(zo_backend_param_add(b, 0, 10, 4, 5), ZO_OK);
    const uint8_t *d;
    uint64_t n;
    assert_int_equal(zo_host_shard(b, 0, 0, &d, &n), ZO_OK);
    assert_int_equal(n, 20);
    zo_backend_destroy(b);
    /* version 1 with the version 2 size, or the reverse: not understood */
    cfg.size = sizeof cfg;
    assert_int_equal(zo_backend_host_create((const zo_host_config *)&cfg, &b), ZO_ERR_VERSION);
    cfg.size = ZO_HOST_CONFIG_V1_SIZE;
    cfg.version = 2;
    assert_int_equal(zo_backend_host_create((const zo_host_config *)&cfg, &b), ZO_ERR_VERSION);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_w1),
        cmocka_unit_test(test_gather_w2),
        cmocka_unit_test(test_gather_w3),
        cmocka_unit_test(test_gather_w4),
        cmocka_unit_test(test_gather_w8),
        cmocka_unit_test(test_gather_w3_capped),
        cmocka_unit_test(test_gather_w8_capped),
        cmocka_unit_test(test_mismatch_cases),
        cmocka_unit_test(test_rank_leaves_early),
        cmocka_unit_test(test_deterministic_under_jitter),
        cmocka_unit_test(test_deterministic_mixed_program),
        cmocka_unit_test(test_extra_gather_freed_before_completion),
        cmocka_unit_test(test_departed_rank_contribution_kept),
        cmocka_unit_test(test_everyone_left_with_unmatched_collective),
        cmocka_unit_test(test_would_hang_aborts_every_pending_collective),
        cmocka_unit_test(test_buffer_freed_while_pending),
        cmocka_unit_test(test_exchange_world),
        cmocka_unit_test(test_exchange_single_view),
        cmocka_unit_test(test_reduce_scatter_world),
        cmocka_unit_test(test_query_never_blocks),
        cmocka_unit_test(test_faults_in_world),
        cmocka_unit_test(test_many_gathers_4_ranks),
        cmocka_unit_test(test_runtimes_on_a_world),
        cmocka_unit_test(test_world_create_and_join_errors),
        cmocka_unit_test(test_world_set_sched_errors),
        cmocka_unit_test(test_world_allocator_no_leak),
        cmocka_unit_test(test_lost_contribution_fails_the_collective),
        cmocka_unit_test(test_v1_host_config_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
