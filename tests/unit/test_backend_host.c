/*
 * test_backend_host.c - the host backend (runtime/backend_host.c) through
 * its vtable: shard content and padding, all-gathers for uneven partitions,
 * deferred completion (query / wait / zo_host_progress), the physical cap,
 * no_copy, reduce-scatter, allocation-failure injection and bad arguments;
 * the cache of freed full buffers (cache_bytes: reuse, LIFO, re-poison,
 * budget, physical sizes, cancelled gathers never write into a reused
 * buffer, destroy frees it, world mode) and no_poison.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if !defined(TEST_ASAN) && defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "backend_host_internal.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

/* ------------------------------------------------------------------ */
/* Counting allocator with failure injection                           */
/* ------------------------------------------------------------------ */

typedef struct counting_alloc {
    long calls;   /* allocation attempts */
    long fail_at; /* fail the fail_at-th attempt (1-based); 0: never */
    long failed;  /* failures injected */
    long live;    /* outstanding allocations */
    long max_live;
} counting_alloc;

static void *ca_alloc(void *opaque, size_t n) {
    counting_alloc *a = opaque;
    a->calls++;
    if (a->fail_at && a->calls == a->fail_at) {
        a->failed++;
        return NULL;
    }
    void *p = malloc(n);
    if (p && ++a->live > a->max_live) a->max_live = a->live;
    return p;
}

static void ca_free(void *opaque, void *p) {
    counting_alloc *a = opaque;
    if (p) {
        a->live--;
        free(p);
    }
}

/* The test-only settings of the config host_cfg made last (read when the
 * backend is created, so each config is used before the next host_cfg). */
static zo_host_testing g_testing;
#define TESTING(cfg) (*(zo_host_testing *)(cfg).testing)

/* Poison on whatever the build's default (these tests read the 0xA5 fill;
 * test_no_poison covers the other settings). */
static zo_host_config host_cfg(int W, int rank) {
    zo_host_config cfg = ZO_HOST_CONFIG_INIT;
    cfg.world_size = W;
    cfg.rank = rank;
    zo_host_testing t = ZO_HOST_TESTING_INIT;
    g_testing = t;
    g_testing.no_poison = 0;
    cfg.testing = &g_testing;
    return cfg;
}

static zo_backend *make(const zo_host_config *cfg) {
    zo_backend *b = NULL;
    assert_int_equal(zo_backend_host_create(cfg, &b), ZO_OK);
    assert_non_null(b);
    return b;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* param_add with the uniform padded partition */
static zo_status add(zo_backend *b, zo_param_id id, uint64_t numel, uint32_t es) {
    int W = b->ops->world_size(b->ctx);
    return zo_backend_param_add(b, id, numel, es, ceil_div(numel, (uint64_t)W));
}

static zo_gather_item item(zo_backend *b, zo_param_id id, uint64_t numel, uint32_t es, void *full) {
    int W = b->ops->world_size(b->ctx);
    zo_gather_item it = {id, full, numel, ceil_div(numel, (uint64_t)W), es};
    return it;
}

static size_t padded_bytes(zo_backend *b, uint64_t numel, uint32_t es) {
    int W = b->ops->world_size(b->ctx);
    return (size_t)(ceil_div(numel, (uint64_t)W) * es * (uint64_t)W);
}

/* The first n bytes of buf are parameter id's content. */
static void assert_content(zo_param_id id, const uint8_t *buf, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        if (buf[i] != zo_host_param_byte(id, i))
            fail_msg("param %u byte %llu: got 0x%02x want 0x%02x", (unsigned)id, (unsigned long long)i, buf[i],
                     zo_host_param_byte(id, i));
}

/* assert_content for buffers of tens of MB (memcheck runs this test): the
 * first and last 64 KiB and every 4,099th byte between (a prime stride, so
 * every offset within a page and a cache line is sampled) */
static void assert_content_sampled(zo_param_id id, const uint8_t *buf, uint64_t n) {
    const uint64_t edge = 65536;
    if (n <= 4 * edge) {
        assert_content(id, buf, n);
        return;
    }
    assert_content(id, buf, edge);
    for (uint64_t i = edge; i < n - edge; i += 4099)
        if (buf[i] != zo_host_param_byte(id, i))
            fail_msg("param %u byte %llu: got 0x%02x want 0x%02x", (unsigned)id, (unsigned long long)i, buf[i],
                     zo_host_param_byte(id, i));
    for (uint64_t i = n - edge; i < n; i++)
        if (buf[i] != zo_host_param_byte(id, i))
            fail_msg("param %u byte %llu: got 0x%02x want 0x%02x", (unsigned)id, (unsigned long long)i, buf[i],
                     zo_host_param_byte(id, i));
}

static void assert_all(const uint8_t *buf, uint8_t v, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        if (buf[i] != v) fail_msg("byte %llu: got 0x%02x want 0x%02x", (unsigned long long)i, buf[i], v);
}

/* ------------------------------------------------------------------ */
/* Content function                                                    */
/* ------------------------------------------------------------------ */

static void test_param_byte_deterministic_not_constant(void **state) {
    (void)state;
    int seen[256] = {0}, distinct = 0, differ01 = 0;
    for (uint64_t i = 0; i < 4096; i++) {
        uint8_t v = zo_host_param_byte(0, i);
        assert_int_equal(v, zo_host_param_byte(0, i));
        if (!seen[v]++) distinct++;
        if (v != zo_host_param_byte(1, i)) differ01++;
    }
    assert_true(distinct > 200);  /* not constant, roughly uniform */
    assert_true(differ01 > 3900); /* parameters differ (expect ~4080) */
    /* depends on the whole 64-bit index and on large ids */
    assert_true(zo_host_param_byte(7, 1ull << 40) != zo_host_param_byte(7, 0) ||
                zo_host_param_byte(7, (1ull << 40) + 1) != zo_host_param_byte(7, 1));
    int d = 0;
    for (uint64_t i = 0; i < 64; i++)
        d += zo_host_param_byte(UINT32_MAX - 1, i) != zo_host_param_byte(UINT32_MAX - 2, i);
    assert_true(d > 50);
}

/* ------------------------------------------------------------------ */
/* Create, vtable metadata, bad configs                                */
/* ------------------------------------------------------------------ */

static void test_create_and_ops(void **state) {
    (void)state;
    zo_host_config cfg = host_cfg(8, 3);
    zo_backend *b = make(&cfg);
    assert_int_equal(b->ops->version, ZO_BACKEND_OPS_VERSION);
    assert_string_equal(b->ops->name, "host");
    assert_int_equal(b->ops->world_size(b->ctx), 8);
    assert_int_equal(b->ops->rank(b->ctx), 3);
    assert_non_null(zo_backend_last_error(b));
    assert_non_null(b->ops->reduce_scatter);
    assert_true(zo_host_is_host(b));
    assert_false(zo_host_is_host(NULL));
    zo_backend_destroy(b);
    zo_backend_destroy(NULL); /* accepted */
}

static void test_create_bad_args(void **state) {
    (void)state;
    zo_backend *b = (zo_backend *)&b; /* must be reset to NULL on failure */
    zo_host_config cfg = host_cfg(4, 0);
    assert_int_equal(zo_backend_host_create(&cfg, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_host_create(NULL, &b), ZO_ERR_INVALID_ARG);
    assert_null(b);

    struct {
        int field;
        long value;
        zo_status want;
    } cases[] = {
        {0, 0, ZO_ERR_VERSION},                          /* size */
        {1, ZO_HOST_CONFIG_VERSION + 1, ZO_ERR_VERSION}, /* version */
        {2, 0, ZO_ERR_INVALID_ARG},                      /* world_size 0 */
        {2, ZO_MAX_WORLD_SIZE + 1, ZO_ERR_INVALID_ARG},
        {3, -1, ZO_ERR_INVALID_ARG}, /* rank */
        {3, 4, ZO_ERR_INVALID_ARG},
        {4, 2, ZO_ERR_INVALID_ARG},  /* deferred */
        {5, -1, ZO_ERR_INVALID_ARG}, /* no_copy */
        {6, 0, ZO_ERR_INVALID_ARG},  /* allocator: alloc only */
        {7, 0, ZO_ERR_INVALID_ARG},  /* allocator: free only */
        {8, 2, ZO_ERR_INVALID_ARG},  /* no_poison: 0, 1 or -1 (build default) */
        {8, -2, ZO_ERR_INVALID_ARG},
    };
    counting_alloc ca = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zo_host_config c = host_cfg(4, 0);
        switch (cases[i].field) {
        case 0: c.size = sizeof(zo_host_config) - 1; break;
        case 1: c.version = (uint32_t)cases[i].value; break;
        case 2: c.world_size = (int)cases[i].value; break;
        case 3: c.rank = (int)cases[i].value; break;
        case 4: TESTING(c).deferred = (int)cases[i].value; break;
        case 5: TESTING(c).no_copy = (int)cases[i].value; break;
        case 6:
            c.allocator.alloc = ca_alloc;
            c.allocator.opaque = &ca;
            break;
        case 7:
            c.allocator.free = ca_free;
            c.allocator.opaque = &ca;
            break;
        case 8: TESTING(c).no_poison = (int)cases[i].value; break;
        }
        b = (zo_backend *)&b;
        assert_int_equal(zo_backend_host_create(&c, &b), cases[i].want);
        assert_null(b);
    }
    assert_int_equal(ca.calls, 0);

    /* the largest world is accepted */
    zo_host_config big = host_cfg(ZO_MAX_WORLD_SIZE, ZO_MAX_WORLD_SIZE - 1);
    b = make(&big);
    zo_backend_destroy(b);
}

/* ------------------------------------------------------------------ */
/* Shards and all-gathers                                              */
/* ------------------------------------------------------------------ */

/* Every rank's shard holds its slice of the padded tensor, zero padding. */
static void check_shards(zo_backend *b, zo_param_id id, uint64_t numel, uint32_t es) {
    int W = b->ops->world_size(b->ctx);
    uint64_t shard = ceil_div(numel, (uint64_t)W) * es, full = numel * es;
    for (int r = 0; r < W; r++) {
        const uint8_t *d = NULL;
        uint64_t n = 0;
        assert_int_equal(zo_host_shard(b, id, r, &d, &n), ZO_OK);
        assert_int_equal(n, shard);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t g = (uint64_t)r * shard + i;
            uint8_t want = g < full ? zo_host_param_byte(id, g) : 0;
            if (d[i] != want)
                fail_msg("W=%d rank %d shard byte %llu (global %llu): got 0x%02x want 0x%02x", W, r,
                         (unsigned long long)i, (unsigned long long)g, d[i], want);
        }
    }
}

static void test_gather_uneven_worlds(void **state) {
    (void)state;
    const int worlds[] = {1, 2, 3, 7, 8, 64};
    const uint64_t numels[] = {1, 2, 5, 63, 64, 65, 100, 1001};
    const uint32_t sizes[] = {1, 2, 4, 8};
    for (size_t wi = 0; wi < sizeof worlds / sizeof worlds[0]; wi++) {
        int W = worlds[wi];
        zo_host_config cfg = host_cfg(W, W - 1);
        zo_backend *b = make(&cfg);
        zo_param_id id = 0;
        uint64_t expect_copied = 0;
        for (size_t ni = 0; ni < sizeof numels / sizeof numels[0]; ni++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, id++) {
                uint64_t numel = numels[ni];
                uint32_t es = sizes[si];
                assert_int_equal(add(b, id, numel, es), ZO_OK);
                check_shards(b, id, numel, es);
                size_t pb = padded_bytes(b, numel, es);
                void *full = NULL;
                assert_int_equal(zo_backend_full_alloc(b, id, pb, &full), ZO_OK);
                zo_gather_item it = item(b, id, numel, es, full);
                zo_work *w = NULL;
                assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
                int done = 0;
                assert_int_equal(zo_backend_query(b, w, &done), ZO_OK);
                assert_int_equal(done, 1); /* immediate completion */
                assert_int_equal(zo_backend_wait(b, w), ZO_OK);
                assert_content(id, full, numel * es);
                assert_all((const uint8_t *)full + numel * es, 0, pb - numel * es);
                expect_copied += pb;
                zo_backend_work_free(b, w);
                zo_backend_full_free(b, id, full);
            }
        assert_int_equal(zo_host_bytes_copied(b), expect_copied);
        assert_int_equal(zo_host_live_full_buffers(b), 0);
        assert_int_equal(zo_host_live_works(b), 0);
        zo_backend_destroy(b);
    }
}

/* Parameters of several MiB: the single-view store is the padded tensor
 * (the flat all-gather layout), gathered in pieces (1.6 MB) or with one
 * copy (34 MB, past HOST_COPY_WHOLE_MIN); every byte lands in place, the
 * padding is zero, full buffers start on a 64-byte line (past the whole-copy
 * size: the store's data on a page, the full buffer's 64 bytes into one),
 * and under a cap exactly the first L bytes are copied. */
static void test_gather_large(void **state) {
    (void)state;
    static const struct {
        uint64_t numel, cap; /* float32 elements; the capped run's max_bytes_per_param */
        int whole;           /* L >= 32 MiB: one copy between page-placed blocks */
    } sizes[] = {
        {400003, 1100001, 0},   /* three 512 KiB pieces and a tail; capped: two and 51,713 bytes */
        {8400005, 33554433, 1}, /* 33.6 MB; capped: 32 MiB + 1 byte */
    };
    const int worlds[] = {1, 3, 64};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const uint64_t numel = sizes[si].numel;
        for (size_t wi = 0; wi < sizeof worlds / sizeof worlds[0]; wi++) {
            int W = worlds[wi];
            for (int capped = 0; capped < 2; capped++) {
                zo_host_config cfg = host_cfg(W, 0);
                if (capped) TESTING(cfg).max_bytes_per_param = sizes[si].cap;
                zo_backend *b = make(&cfg);
                assert_int_equal(add(b, 5, numel, 4), ZO_OK);
                size_t pb = padded_bytes(b, numel, 4);
                uint64_t L = zo_host_physical_bytes(b, pb);
                assert_int_equal(L, capped ? sizes[si].cap : pb);
                const uint8_t *store = NULL;
                uint64_t stored = 0;
                assert_int_equal(zo_host_shard(b, 5, 0, &store, &stored), ZO_OK);
                assert_int_equal(stored,
                                 W == 1 ? L : (pb / (uint64_t)W < L ? pb / (uint64_t)W : L)); /* rank 0's shard */
                assert_int_equal((uintptr_t)store % (sizes[si].whole ? 4096u : 64u), 0);
                void *full = NULL;
                for (int round = 0; round < 2; round++) { /* a fresh buffer, then the cached one */
                    assert_int_equal(zo_backend_full_alloc(b, 5, pb, &full), ZO_OK);
                    assert_int_equal((uintptr_t)full % (sizes[si].whole ? 4096u : 64u), sizes[si].whole ? 64u : 0u);
                    zo_gather_item it = item(b, 5, numel, 4, full);
                    zo_work *w = NULL;
                    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
                    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
                    uint64_t content = numel * 4 < L ? numel * 4 : L;
                    if (sizes[si].whole)
                        assert_content_sampled(5, full, content);
                    else
                        assert_content(5, full, content);
                    assert_all((const uint8_t *)full + content, 0, L - content);
                    assert_int_equal(zo_host_bytes_copied(b), (uint64_t)(round + 1) * L);
                    zo_backend_work_free(b, w);
                    zo_backend_full_free(b, 5, full);
                }
                assert_int_equal(zo_host_cache_hits(b), 1);
                zo_backend_destroy(b);
            }
        }
    }
}

/* One coalesced all-gather of several parameters. */
static void test_gather_group(void **state) {
    (void)state;
    zo_host_config cfg = host_cfg(7, 2);
    zo_backend *b = make(&cfg);
    enum { N = 9 };
    zo_gather_item items[N];
    void *bufs[N];
    for (zo_param_id i = 0; i < N; i++) {
        uint64_t numel = 13 * (i + 1) + i; /* never a multiple of 7 ... except by chance */
        assert_int_equal(add(b, 100 + i, numel, 4), ZO_OK);
        assert_int_equal(zo_backend_full_alloc(b, 100 + i, padded_bytes(b, numel, 4), &bufs[i]), ZO_OK);
        items[i] = item(b, 100 + i, numel, 4, bufs[i]);
    }
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, items, N, &w), ZO_OK);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    for (zo_param_id i = 0; i < N; i++) assert_content(100 + i, bufs[i], items[i].numel * 4);
    zo_backend_work_free(b, w);
    /* empty group: a complete work */
    assert_int_equal(zo_backend_all_gather_start(b, NULL, 0, &w), ZO_OK);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    zo_backend_work_free(b, w);
    zo_backend_destroy(b); /* frees the buffers left to it */
}

/* ------------------------------------------------------------------ */
/* Deferred completion                                                 */
/* ------------------------------------------------------------------ */

static void test_deferred_query_then_wait(void **state) {
    (void)state;
    zo_host_config cfg = host_cfg(3, 1);
    TESTING(cfg).deferred = 1;
    zo_backend *b = make(&cfg);
    const uint64_t numel = 100;
    assert_int_equal(add(b, 5, numel, 2), ZO_OK);
    size_t pb = padded_bytes(b, numel, 2);
    void *full = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 5, pb, &full), ZO_OK);
    assert_all(full, 0xA5, pb); /* poisoned until gathered */
    zo_gather_item it = item(b, 5, numel, 2, full);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    int done = -1;
    assert_int_equal(zo_backend_query(b, w, &done), ZO_OK);
    assert_int_equal(done, 0);
    assert_int_equal(zo_host_pending_works(b), 1);
    assert_all(full, 0xA5, pb); /* INFLIGHT: nothing copied yet */
    assert_int_equal(zo_host_bytes_copied(b), 0);
    /* the same parameter cannot be in two pending gathers */
    void *full2 = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 5, pb, &full2), ZO_OK);
    zo_gather_item it2 = item(b, 5, numel, 2, full2);
    zo_work *w2 = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it2, 1, &w2), ZO_ERR_STATE);
    assert_null(w2);
    assert_true(strstr(zo_backend_last_error(b), "in flight") != NULL);

    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    assert_int_equal(zo_backend_query(b, w, &done), ZO_OK);
    assert_int_equal(done, 1);
    assert_int_equal(zo_host_pending_works(b), 0);
    assert_content(5, full, numel * 2);
    assert_all((uint8_t *)full + numel * 2, 0, pb - numel * 2);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK); /* waiting again is fine */
    zo_backend_work_free(b, w);
    /* now the second buffer may be gathered */
    assert_int_equal(zo_backend_all_gather_start(b, &it2, 1, &w2), ZO_OK);
    assert_int_equal(zo_backend_wait(b, w2), ZO_OK);
    assert_content(5, full2, numel * 2);
    zo_backend_work_free(b, w2);
    zo_backend_full_free(b, 5, full);
    zo_backend_full_free(b, 5, full2);
    zo_backend_destroy(b);
}

static void test_deferred_progress(void **state) {
    (void)state;
    zo_host_config cfg = host_cfg(8, 0);
    TESTING(cfg).deferred = 1;
    zo_backend *b = make(&cfg);
    void *full[3];
    zo_work *w[3];
    for (zo_param_id i = 0; i < 3; i++) {
        assert_int_equal(add(b, i, 50 + i, 4), ZO_OK);
        assert_int_equal(zo_backend_full_alloc(b, i, padded_bytes(b, 50 + i, 4), &full[i]), ZO_OK);
        zo_gather_item it = item(b, i, 50 + i, 4, full[i]);
        assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w[i]), ZO_OK);
    }
    assert_int_equal(zo_host_pending_works(b), 3);
    /* complete one by wait, then the network makes progress on the rest */
    assert_int_equal(zo_backend_wait(b, w[1]), ZO_OK);
    assert_int_equal(zo_host_progress(b), 2);
    assert_int_equal(zo_host_progress(b), 0);
    for (zo_param_id i = 0; i < 3; i++) {
        int done = 0;
        assert_int_equal(zo_backend_query(b, w[i], &done), ZO_OK);
        assert_int_equal(done, 1);
        assert_content(i, full[i], (50 + i) * 4);
        zo_backend_work_free(b, w[i]);
    }
    /* a work freed before completion is abandoned: nothing is copied */
    zo_gather_item it = item(b, 0, 50, 4, full[0]);
    memset(full[0], 0x11, padded_bytes(b, 50, 4));
    zo_work *wa = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &wa), ZO_OK);
    zo_backend_work_free(b, wa);
    assert_int_equal(zo_host_pending_works(b), 0);
    assert_int_equal(zo_host_progress(b), 0);
    assert_all(full[0], 0x11, padded_bytes(b, 50, 4));
    /* progress on a non-host backend is an error */
    assert_int_equal(zo_host_progress(NULL), ZO_ERR_INVALID_ARG);
    zo_backend fake = {NULL, NULL};
    assert_int_equal(zo_host_progress(&fake), ZO_ERR_INVALID_ARG);
    zo_backend_destroy(b);
}

/* A buffer freed, or a parameter removed, while its deferred gather is
 * pending: the copy is cancelled and the wait reports ZO_ERR_STATE. */
static void test_deferred_cancel(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = host_cfg(2, 0);
    TESTING(cfg).deferred = 1;
    cfg.allocator.alloc = ca_alloc;
    cfg.allocator.free = ca_free;
    cfg.allocator.opaque = &ca;
    zo_backend *b = make(&cfg);
    void *f0 = NULL, *f1 = NULL;
    assert_int_equal(add(b, 0, 10, 4), ZO_OK);
    assert_int_equal(add(b, 1, 10, 4), ZO_OK);
    assert_int_equal(zo_backend_full_alloc(b, 0, 40, &f0), ZO_OK);
    assert_int_equal(zo_backend_full_alloc(b, 1, 40, &f1), ZO_OK);
    zo_gather_item its[2] = {item(b, 0, 10, 4, f0), item(b, 1, 10, 4, f1)};
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, its, 2, &w), ZO_OK);
    zo_backend_full_free(b, 0, f0); /* freed while in flight */
    assert_true(strstr(zo_backend_last_error(b), "in flight") != NULL);
    assert_int_equal(zo_backend_wait(b, w), ZO_ERR_STATE);
    assert_content(1, f1, 40); /* the other item still completed */
    zo_backend_work_free(b, w);

    assert_int_equal(zo_backend_all_gather_start(b, &its[1], 1, &w), ZO_OK);
    zo_backend_param_remove(b, 1); /* removed while in flight */
    assert_int_equal(zo_host_progress(b), 1);
    int done = 0;
    assert_int_equal(zo_backend_query(b, w, &done), ZO_ERR_STATE);
    assert_int_equal(done, 1);
    zo_backend_work_free(b, w);
    zo_backend_full_free(b, 1, f1); /* a removed parameter's buffer can still be freed */
    assert_int_equal(zo_host_live_full_buffers(b), 0);
    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);
}

/* ------------------------------------------------------------------ */
/* Physical cap and no_copy                                            */
/* ------------------------------------------------------------------ */

static void test_cap(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = host_cfg(3, 0);
    TESTING(cfg).max_bytes_per_param = 3000;
    cfg.allocator.alloc = ca_alloc;
    cfg.allocator.free = ca_free;
    cfg.allocator.opaque = &ca;
    zo_backend *b = make(&cfg);
    assert_int_equal(zo_host_physical_bytes(b, 4000), 3000);
    assert_int_equal(zo_host_physical_bytes(b, 2999), 2999);
    assert_int_equal(zo_host_physical_bytes(NULL, 4000), 4000);

    /* 1000 float32 over 3 ranks: shard 1336 bytes; the cap keeps rank 0's
     * shard, rank 1's and the first 328 bytes of rank 2's */
    assert_int_equal(add(b, 9, 1000, 4), ZO_OK);
    const uint64_t want_stored[3] = {1336, 1336, 328};
    for (int r = 0; r < 3; r++) {
        const uint8_t *d = NULL;
        uint64_t n = 0;
        assert_int_equal(zo_host_shard(b, 9, r, &d, &n), ZO_OK);
        assert_int_equal(n, want_stored[r]);
        for (uint64_t i = 0; i < n; i++) assert_int_equal(d[i], zo_host_param_byte(9, (uint64_t)r * 1336 + i));
    }
    assert_int_equal(zo_host_shard_bytes(b), 3000);

    /* a huge parameter stores only the cap: 2^40 elements cost 3000 bytes */
    long live_before = ca.live;
    assert_int_equal(add(b, 10, 1ull << 40, 4), ZO_OK);
    assert_int_equal(ca.live, live_before + 1); /* one block of 3000 bytes (+ header) */
    const uint8_t *d = NULL;
    uint64_t n = 0;
    assert_int_equal(zo_host_shard(b, 10, 0, &d, &n), ZO_OK);
    assert_int_equal(n, 3000);
    assert_int_equal(zo_host_shard(b, 10, 1, &d, &n), ZO_OK);
    assert_int_equal(n, 0);
    assert_null(d);
    void *full = NULL;
    size_t req = (size_t)padded_bytes(b, 1ull << 40, 4);
    assert_int_equal(zo_backend_full_alloc(b, 10, req, &full), ZO_OK);
    zo_gather_item it = item(b, 10, 1ull << 40, 4, full);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    assert_content(10, full, zo_host_physical_bytes(b, (1ull << 40) * 4));
    zo_backend_work_free(b, w);
    zo_backend_full_free(b, 10, full);

    /* a full buffer smaller than the gather needs is refused */
    assert_int_equal(zo_backend_full_alloc(b, 9, 100, &full), ZO_OK);
    it = item(b, 9, 1000, 4, full);
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_ERR_INVALID_ARG);
    assert_null(w);
    zo_backend_full_free(b, 9, full);

    /* a cap smaller than one shard, world of 64 */
    zo_host_config c2 = host_cfg(64, 5);
    TESTING(c2).max_bytes_per_param = 10;
    zo_backend *b2 = make(&c2);
    assert_int_equal(add(b2, 0, 1001, 2), ZO_OK); /* shard 32 bytes */
    assert_int_equal(zo_backend_full_alloc(b2, 0, padded_bytes(b2, 1001, 2), &full), ZO_OK);
    it = item(b2, 0, 1001, 2, full);
    assert_int_equal(zo_backend_all_gather_start(b2, &it, 1, &w), ZO_OK);
    assert_int_equal(zo_backend_wait(b2, w), ZO_OK);
    assert_content(0, full, 10);
    assert_int_equal(zo_host_bytes_copied(b2), 10);
    zo_backend_work_free(b2, w);
    zo_backend_destroy(b2);

    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);
}

static void test_no_copy(void **state) {
    (void)state;
    zo_host_config cfg = host_cfg(4, 1);
    TESTING(cfg).no_copy = 1;
    TESTING(cfg).deferred = 1;
    zo_backend *b = make(&cfg);
    assert_int_equal(add(b, 0, 1000, 4), ZO_OK);
    assert_int_equal(zo_host_shard_bytes(b), 0);
    void *full = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 0, 4000, &full), ZO_OK);
    memset(full, 0x3C, 4000);
    zo_gather_item it = item(b, 0, 1000, 4, full);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    int done = 1;
    assert_int_equal(zo_backend_query(b, w, &done), ZO_OK);
    assert_int_equal(done, 0); /* deferred still observable */
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    assert_all(full, 0x3C, 4000); /* nothing moved */
    assert_int_equal(zo_host_bytes_copied(b), 0);
    zo_backend_work_free(b, w);
    zo_backend_full_free(b, 0, full);
    zo_backend_destroy(b);
}

/* ------------------------------------------------------------------ */
/* Reduce-scatter                                                      */
/* ------------------------------------------------------------------ */

static void test_reduce_scatter(void **state) {
    (void)state;
    /* 10 elements over 3 ranks: 4 per rank, rank 2 holds 8, 9 + 2 padding */
    float g[10];
    for (int i = 0; i < 10; i++) g[i] = 0.5f * (float)(i + 1) - 2.0f; /* exact in binary */
    for (int r = 0; r < 3; r++) {
        zo_host_config cfg = host_cfg(3, r);
        zo_backend *b = make(&cfg);
        assert_int_equal(add(b, 4, 10, 4), ZO_OK);
        float out[4];
        assert_int_equal(zo_backend_reduce_scatter(b, 4, g, out, 10, 4, ZO_REDUCE_SUM), ZO_OK);
        for (int i = 0; i < 4; i++) {
            int j = r * 4 + i;
            assert_true(out[i] == (j < 10 ? 3.0f * g[j] : 0.0f));
        }
        assert_int_equal(zo_backend_reduce_scatter(b, 4, g, out, 10, 4, ZO_REDUCE_AVG), ZO_OK);
        for (int i = 0; i < 4; i++) {
            int j = r * 4 + i;
            assert_true(out[i] == (j < 10 ? g[j] : 0.0f));
        }
        /* bad arguments */
        assert_int_equal(zo_backend_reduce_scatter(b, 4, NULL, out, 10, 4, ZO_REDUCE_SUM), ZO_ERR_INVALID_ARG);
        assert_int_equal(zo_backend_reduce_scatter(b, 4, g, NULL, 10, 4, ZO_REDUCE_SUM), ZO_ERR_INVALID_ARG);
        assert_int_equal(zo_backend_reduce_scatter(b, 4, g, out, 10, 4, (zo_reduce_op)7), ZO_ERR_INVALID_ARG);
        assert_int_equal(zo_backend_reduce_scatter(b, 4, g, out, 11, 4, ZO_REDUCE_SUM), ZO_ERR_INVALID_ARG);
        assert_int_equal(zo_backend_reduce_scatter(b, 5, g, out, 10, 4, ZO_REDUCE_SUM), ZO_ERR_BAD_HANDLE);
        zo_backend_destroy(b);
    }
    /* a sum of 64 contributions is really summed: 0.1f added 64 times is
     * not bit-identical to 64 * 0.1f, but close */
    zo_host_config cfg = host_cfg(64, 0);
    zo_backend *b = make(&cfg);
    assert_int_equal(add(b, 0, 64, 4), ZO_OK);
    float g64[64], out = 0.0f;
    for (int i = 0; i < 64; i++) g64[i] = 0.1f;
    assert_int_equal(zo_backend_reduce_scatter(b, 0, g64, &out, 64, 1, ZO_REDUCE_SUM), ZO_OK);
    assert_true(out > 6.39f && out < 6.41f);
    assert_int_equal(zo_backend_reduce_scatter(b, 0, g64, &out, 64, 1, ZO_REDUCE_AVG), ZO_OK);
    assert_true(out > 0.0999f && out < 0.1001f);
    zo_backend_destroy(b);
}

/* ------------------------------------------------------------------ */
/* Bad arguments to the ops                                            */
/* ------------------------------------------------------------------ */

static void test_ops_bad_args(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = host_cfg(4, 0);
    TESTING(cfg).deferred = 1;
    cfg.allocator.alloc = ca_alloc;
    cfg.allocator.free = ca_free;
    cfg.allocator.opaque = &ca;
    zo_backend *b = make(&cfg);
    const zo_backend_ops *o = b->ops;

    /* param_add */
    assert_int_equal(zo_backend_param_add(b, ZO_NO_PARAM, 4, 4, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_param_add(b, 0, 0, 4, 0), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_param_add(b, 0, 4, 0, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_param_add(b, 0, 4, 65, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_param_add(b, 0, 10, 4, 2), ZO_ERR_INVALID_ARG); /* ceil(10/4) = 3 */
    assert_true(strstr(zo_backend_last_error(b), "partition_numel") != NULL);
    assert_int_equal(zo_backend_param_add(b, 0, UINT64_MAX / 2, 4, ceil_div(UINT64_MAX / 2, 4)), ZO_ERR_OVERFLOW);
    long calls = ca.calls;
    assert_int_equal(zo_backend_param_add(b, 0, 1ull << 42, 1, 1ull << 40), ZO_ERR_NOMEM); /* over the limit, no cap */
    assert_int_equal(ca.calls, calls); /* refused before reaching the allocator */
    assert_int_equal(zo_host_param_count(b), 0);
    assert_int_equal(add(b, 0, 10, 4), ZO_OK);
    assert_int_equal(add(b, 0, 10, 4), ZO_ERR_EXISTS);
    assert_int_equal(add(b, 1, 10, 4), ZO_OK);

    /* full_alloc */
    void *full = (void *)&full;
    assert_int_equal(zo_backend_full_alloc(b, 0, 48, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_full_alloc(b, 0, 0, &full), ZO_ERR_INVALID_ARG);
    assert_null(full);
    assert_int_equal(zo_backend_full_alloc(b, 77, 48, &full), ZO_ERR_BAD_HANDLE);
    assert_null(full);
    calls = ca.calls;
    assert_int_equal(zo_backend_full_alloc(b, 0, (size_t)1 << 41, &full), ZO_ERR_NOMEM);
    assert_int_equal(ca.calls, calls);
    void *f0 = NULL, *f1 = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 0, 48, &f0), ZO_OK);
    assert_int_equal(zo_backend_full_alloc(b, 1, 48, &f1), ZO_OK);

    /* all_gather_start */
    zo_work *w = (zo_work *)&w;
    zo_gather_item it = item(b, 0, 10, 4, f0);
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_all_gather_start(b, NULL, 1, &w), ZO_ERR_INVALID_ARG);
    assert_null(w);
    zo_gather_item bad = it;
    bad.param = 42;
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_BAD_HANDLE);
    bad = it;
    bad.numel = 11;
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_INVALID_ARG);
    bad = it;
    bad.partition_numel = 4;
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_INVALID_ARG);
    bad = it;
    bad.elem_size = 2;
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_INVALID_ARG);
    bad = it;
    bad.full = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_INVALID_ARG);
    uint8_t stack_buf[64];
    bad.full = stack_buf; /* not from full_alloc: reported, not dereferenced */
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_INVALID_ARG);
    bad.full = f1; /* param 1's buffer used for param 0 */
    assert_int_equal(zo_backend_all_gather_start(b, &bad, 1, &w), ZO_ERR_INVALID_ARG);
    zo_gather_item dup[2] = {it, it};
    assert_int_equal(zo_backend_all_gather_start(b, dup, 2, &w), ZO_ERR_STATE);
    zo_gather_item same_buf[2] = {it, item(b, 1, 10, 4, f0)};
    assert_int_equal(zo_backend_all_gather_start(b, same_buf, 2, &w), ZO_ERR_INVALID_ARG);
    assert_null(w);
    assert_int_equal(zo_host_live_works(b), 0);
    assert_int_equal(zo_host_pending_works(b), 0);

    /* wait / query / work_free on things that are not live works */
    int done = 0;
    assert_int_equal(zo_backend_wait(b, NULL), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_wait(b, (zo_work *)stack_buf), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_query(b, (zo_work *)stack_buf, &done), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    assert_int_equal(zo_backend_query(b, w, NULL), ZO_ERR_INVALID_ARG);
    zo_backend_work_free(b, (zo_work *)stack_buf); /* ignored, recorded */
    assert_true(strstr(zo_backend_last_error(b), "not a live work") != NULL);
    zo_backend_work_free(b, NULL);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    zo_backend_work_free(b, w);
    zo_backend_work_free(b, w); /* double free: detected, not dereferenced */
    assert_int_equal(zo_backend_wait(b, w), ZO_ERR_INVALID_ARG);

    /* full_free / param_remove misuse */
    zo_backend_full_free(b, 0, stack_buf);
    assert_true(strstr(zo_backend_last_error(b), "not a live full buffer") != NULL);
    zo_backend_full_free(b, 0, NULL);
    zo_backend_full_free(b, 0, f0);
    zo_backend_full_free(b, 0, f0); /* double free: detected */
    assert_true(strstr(zo_backend_last_error(b), "not a live full buffer") != NULL);
    zo_backend_param_remove(b, 99);
    assert_true(strstr(zo_backend_last_error(b), "not added") != NULL);
    assert_int_equal(zo_host_param_count(b), 2);

    /* introspection on bad inputs */
    const uint8_t *d;
    uint64_t n;
    assert_int_equal(zo_host_shard(NULL, 0, 0, &d, &n), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_shard(b, 0, 4, &d, &n), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_shard(b, 0, -1, &d, &n), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_shard(b, 5, 0, &d, &n), ZO_ERR_BAD_HANDLE);

    /* NULL contexts do not crash */
    assert_int_equal(o->param_add(NULL, 0, 1, 1, 1), ZO_ERR_INVALID_ARG);
    assert_int_equal(o->full_alloc(NULL, 0, 1, &full), ZO_ERR_INVALID_ARG);
    assert_int_equal(o->wait(NULL, w), ZO_ERR_INVALID_ARG);
    assert_null(o->last_error(NULL));
    o->destroy(NULL);

    zo_backend_destroy(b); /* f1 and both params left behind: freed */
    assert_int_equal(ca.live, 0);
}

/* Many parameters added and removed in a scattered order: the parameter
 * table keeps every survivor reachable. */
static void test_many_params_add_remove(void **state) {
    (void)state;
    zo_host_config cfg = host_cfg(3, 0);
    zo_backend *b = make(&cfg);
    enum { N = 2000 };
    for (zo_param_id i = 0; i < N; i++) assert_int_equal(add(b, i * 7919u, 1 + i % 17, 1), ZO_OK);
    for (zo_param_id i = 0; i < N; i += 3) zo_backend_param_remove(b, i * 7919u);
    assert_int_equal(zo_host_param_count(b), N - (N + 2) / 3);
    for (zo_param_id i = 0; i < N; i++) {
        void *full = NULL;
        zo_status st = zo_backend_full_alloc(b, i * 7919u, 64, &full);
        if (i % 3 == 0) {
            assert_int_equal(st, ZO_ERR_BAD_HANDLE);
            continue;
        }
        assert_int_equal(st, ZO_OK);
        zo_gather_item it = item(b, i * 7919u, 1 + i % 17, 1, full);
        zo_work *w = NULL;
        assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
        assert_content(i * 7919u, full, 1 + i % 17);
        zo_backend_work_free(b, w);
        zo_backend_full_free(b, i * 7919u, full);
    }
    zo_backend_destroy(b);
}

/* Destroy gives back every allocation whatever table holds the
 * parameter: slots (dense ids), the sparse map (an id far above the
 * count), and a slot the map's entry moved to when the slot table grew
 * past its id; with live full buffers, a cached one and works that kept
 * an item array of their own (groups above the inline size). */
static void test_destroy_frees_every_table(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = host_cfg(3, 0);
    cfg.allocator.alloc = ca_alloc;
    cfg.allocator.free = ca_free;
    cfg.allocator.opaque = &ca;
    zo_backend *b = make(&cfg);
    /* ids >= 2 * count + 1024 go to the map: 5000000 and 3000; then
     * 0..2099 make the table grow to 1024, 2048 and 4096 slots (3000
     * moves to its slot) */
    assert_int_equal(add(b, 5000000, 11, 4), ZO_OK);
    assert_int_equal(add(b, 3000, 7, 2), ZO_OK);
    for (zo_param_id i = 0; i < 2100; i++) assert_int_equal(add(b, i, 1 + i % 5, 1), ZO_OK);
    assert_int_equal(zo_host_param_count(b), 2102);
    const zo_param_id ids[] = {5000000, 3000, 0, 2099, 7, 8, 9};
    const uint64_t numel[] = {11, 7, 1, 5, 3, 4, 5};
    const uint32_t es[] = {4, 2, 1, 1, 1, 1, 1};
    enum { K = sizeof ids / sizeof ids[0] };
    zo_gather_item its[K];
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < K; k++) {
            void *full = NULL;
            assert_int_equal(zo_backend_full_alloc(b, ids[k], padded_bytes(b, numel[k], es[k]), &full), ZO_OK);
            its[k] = item(b, ids[k], numel[k], es[k], full);
        }
        zo_work *w = NULL;
        assert_int_equal(zo_backend_all_gather_start(b, its, K, &w), ZO_OK);
        assert_int_equal(zo_backend_wait(b, w), ZO_OK);
        for (int k = 0; k < K; k++) assert_content(ids[k], its[k].full, numel[k] * es[k]);
        zo_backend_work_free(b, w);
        if (round == 0) /* one back to the cache, the rest live */
            zo_backend_full_free(b, ids[2], its[2].full);
    }
    /* a second group still in hand at destroy */
    zo_work *w2 = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, its, K, &w2), ZO_OK);
    assert_true(ca.live > 0);
    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);
}

/* ------------------------------------------------------------------ */
/* Allocation-failure injection                                        */
/* ------------------------------------------------------------------ */

/* A script touching every allocation site: create, parameter table
 * growth, shard blocks, full buffers and their table, works and their
 * table, deferred and immediate.  Returns the first failing status (after
 * checking that the failed call had no effect), or ZO_OK. */
static zo_status script(counting_alloc *ca, int deferred) {
    zo_host_config cfg = host_cfg(5, 2);
    TESTING(cfg).deferred = deferred;
    cfg.allocator.alloc = ca_alloc;
    cfg.allocator.free = ca_free;
    cfg.allocator.opaque = ca;
    zo_backend *b = (zo_backend *)&cfg;
    zo_status st = zo_backend_host_create(&cfg, &b);
    if (st != ZO_OK) {
        assert_null(b);
        return st;
    }
    enum { N = 40 };
    void *full[N] = {0};
    zo_work *w[N] = {0};
    for (zo_param_id i = 0; i < N && st == ZO_OK; i++) {
        size_t before = zo_host_param_count(b);
        st = add(b, i, 3 + i, 4);
        if (st != ZO_OK) assert_int_equal(zo_host_param_count(b), before);
    }
    for (zo_param_id i = 0; i < N && st == ZO_OK; i++) {
        size_t before = zo_host_live_full_buffers(b);
        st = zo_backend_full_alloc(b, i, padded_bytes(b, 3 + i, 4), &full[i]);
        if (st != ZO_OK) {
            assert_null(full[i]);
            assert_int_equal(zo_host_live_full_buffers(b), before);
        }
    }
    for (zo_param_id i = 0; i < N && st == ZO_OK; i += 2) {
        zo_gather_item its[2] = {item(b, i, 3 + i, 4, full[i]), item(b, i + 1, 4 + i, 4, full[i + 1])};
        size_t before = zo_host_live_works(b);
        st = zo_backend_all_gather_start(b, its, 2, &w[i]);
        if (st != ZO_OK) {
            assert_null(w[i]);
            assert_int_equal(zo_host_live_works(b), before);
        }
    }
    if (st == ZO_OK) {
        if (deferred) assert_int_equal(zo_host_progress(b), N / 2);
        for (zo_param_id i = 0; i < N; i += 2) {
            assert_int_equal(zo_backend_wait(b, w[i]), ZO_OK);
            assert_content(i, full[i], (3 + i) * 4);
            assert_content(i + 1, full[i + 1], (4 + i) * 4);
        }
    }
    if (st != ZO_OK) {
        assert_int_equal(st, ZO_ERR_NOMEM);
        assert_true(strlen(zo_backend_last_error(b)) > 0);
    }
    /* release half explicitly, leave the rest to destroy */
    for (zo_param_id i = 0; i < N; i += 2) {
        if (w[i]) zo_backend_work_free(b, w[i]);
        if (full[i]) zo_backend_full_free(b, i, full[i]);
        zo_backend_param_remove(b, i);
    }
    zo_backend_destroy(b);
    return st;
}

static void test_alloc_failure_every_site(void **state) {
    (void)state;
    for (int deferred = 0; deferred <= 1; deferred++) {
        counting_alloc ca = {0};
        assert_int_equal(script(&ca, deferred), ZO_OK); /* dry run: count allocations */
        assert_int_equal(ca.live, 0);
        long total = ca.calls;
        assert_true(total > 80); /* ctx + 40 params + 40 buffers + 20 works + tables */
        for (long k = 1; k <= total; k++) {
            counting_alloc f = {0};
            f.fail_at = k;
            zo_status st = script(&f, deferred);
            assert_int_equal(f.failed, 1);
            if (st != ZO_ERR_NOMEM)
                fail_msg("deferred=%d: failing allocation %ld of %ld returned %d", deferred, k, total, st);
            if (f.live != 0)
                fail_msg("deferred=%d: failing allocation %ld leaked %ld allocations", deferred, k, f.live);
        }
    }
}


/* ------------------------------------------------------------------ */
/* Cache of freed full buffers (cache_bytes) and no_poison              */
/* ------------------------------------------------------------------ */

/* A counting allocator that fills every new block with 0x3C, so that a
 * buffer full_alloc did not poison is recognisable. */
static void *ca_alloc_3c(void *opaque, size_t n) {
    void *p = ca_alloc(opaque, n);
    if (p) memset(p, 0x3C, n);
    return p;
}

static zo_host_config cache_cfg(int W, counting_alloc *ca, uint64_t cache_bytes) {
    zo_host_config cfg = host_cfg(W, 0);
    cfg.cache_bytes = cache_bytes;
    cfg.allocator.alloc = ca_alloc_3c;
    cfg.allocator.free = ca_free;
    cfg.allocator.opaque = ca;
    return cfg;
}

/* full_alloc + one all-gather + wait + work_free: the content is the parameter's */
static void *gathered(zo_backend *b, zo_param_id id, uint64_t numel) {
    void *f = NULL;
    assert_int_equal(zo_backend_full_alloc(b, id, padded_bytes(b, numel, 4), &f), ZO_OK);
    zo_gather_item it = item(b, id, numel, 4, f);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    zo_backend_work_free(b, w);
    assert_content(id, f, zo_host_physical_bytes(b, numel * 4));
    return f;
}

static void test_cache_default_on(void **state) {
    (void)state;
    zo_host_config cfg = ZO_HOST_CONFIG_INIT;
    assert_int_equal(cfg.cache_bytes, ZO_HOST_CACHE_BYTES_DEFAULT);
    assert_true(cfg.cache_bytes >= (256u << 20)); /* a 256 MiB parameter fits */
    assert_null(cfg.testing);                     /* the defaults of ZO_HOST_TESTING_INIT: */
    zo_host_testing t = ZO_HOST_TESTING_INIT;
    assert_int_equal(t.no_poison, ZO_HOST_POISON_BUILD_DEFAULT);
    assert_int_equal(zo_host_cached_full_buffers(NULL), 0);
    assert_int_equal(zo_host_cached_bytes(NULL), 0);
    assert_int_equal(zo_host_cache_hits(NULL), 0);
}

/* A freed buffer is reused for the next request of its size - by any
 * parameter - filled with 0xA5 again; the most recently freed first. */
static void test_cache_reuse_lifo_repoison(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = cache_cfg(4, &ca, 1u << 20);
    zo_backend *b = make(&cfg);
    for (zo_param_id id = 0; id < 4; id++) assert_int_equal(add(b, id, 1000, 4), ZO_OK); /* 4000 bytes each */
    assert_int_equal(add(b, 9, 999, 4), ZO_OK);   /* 4000 padded bytes too (W = 4: 250 x 4 x 4) */
    assert_int_equal(add(b, 10, 1001, 4), ZO_OK); /* 4016 bytes */

    void *x = gathered(b, 0, 1000);
    long allocs = ca.calls, live = ca.live;
    zo_backend_full_free(b, 0, x);
    assert_int_equal(zo_host_live_full_buffers(b), 0); /* cached is not live */
    assert_int_equal(zo_host_cached_full_buffers(b), 1);
    assert_int_equal(zo_host_cached_bytes(b), 4000);
    assert_int_equal(ca.live, live); /* kept, not freed */
#ifdef TEST_ASAN
    assert_true(__asan_address_is_poisoned(x)); /* a use after full_free is still reported */
#endif

    /* another parameter of the same size: the same buffer, poisoned again */
    void *y = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 1, 4000, &y), ZO_OK);
    assert_ptr_equal(y, x);
    assert_int_equal(ca.calls, allocs); /* no allocation */
    assert_int_equal(zo_host_cache_hits(b), 1);
    assert_int_equal(zo_host_cached_full_buffers(b), 0);
    assert_int_equal(zo_host_cached_bytes(b), 0);
    assert_int_equal(zo_host_live_full_buffers(b), 1);
    assert_all(y, 0xA5, 4000); /* not parameter 0's bytes */
    /* it is parameter 1's buffer now: gathers into it, frees as param 1 */
    zo_gather_item it = item(b, 1, 1000, 4, y);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    zo_backend_work_free(b, w);
    assert_content(1, y, 4000);

    /* a different size is a fresh allocation, the cached one stays */
    zo_backend_full_free(b, 1, y);
    allocs = ca.calls;
    void *z = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 10, 4016, &z), ZO_OK);
    assert_ptr_not_equal(z, y);
    assert_int_equal(ca.calls, allocs + 1);
    assert_int_equal(zo_host_cached_full_buffers(b), 1);
    assert_all(z, 0xA5, 4016);

    /* LIFO: three buffers of 4000 bytes freed p, q, r come back r, q, p */
    void *p = y, *q = NULL, *r = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 2, 4000, &p), ZO_OK);
    assert_ptr_equal(p, y);
    assert_int_equal(zo_backend_full_alloc(b, 3, 4000, &q), ZO_OK);
    assert_int_equal(zo_backend_full_alloc(b, 9, 4000, &r), ZO_OK);
    zo_backend_full_free(b, 2, p);
    zo_backend_full_free(b, 10, z); /* another size in between */
    zo_backend_full_free(b, 3, q);
    zo_backend_full_free(b, 9, r);
    assert_int_equal(zo_host_cached_full_buffers(b), 4);
    assert_int_equal(zo_host_cached_bytes(b), 3 * 4000 + 4016);
    void *g1 = NULL, *g2 = NULL, *g3 = NULL, *g4 = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 0, 4000, &g1), ZO_OK);
    assert_int_equal(zo_backend_full_alloc(b, 1, 4000, &g2), ZO_OK);
    assert_int_equal(zo_backend_full_alloc(b, 2, 4000, &g3), ZO_OK);
    assert_ptr_equal(g1, r);
    assert_ptr_equal(g2, q);
    assert_ptr_equal(g3, p);
    assert_int_equal(zo_backend_full_alloc(b, 10, 4016, &g4), ZO_OK);
    assert_ptr_equal(g4, z);
    assert_int_equal(zo_host_cached_full_buffers(b), 0);

    /* a stale pointer to a cached buffer is not a live buffer */
    zo_backend_full_free(b, 0, g1);
    zo_backend_full_free(b, 0, g1); /* double free: reported, ignored */
    assert_true(strstr(zo_backend_last_error(b), "not a live full buffer") != NULL);
    assert_int_equal(zo_host_cached_full_buffers(b), 1);
    zo_gather_item stale = item(b, 0, 1000, 4, g1);
    assert_int_equal(zo_backend_all_gather_start(b, &stale, 1, &w), ZO_ERR_INVALID_ARG);
    assert_null(w);

    /* destroy frees the live and the cached buffers */
    assert_int_equal(zo_host_live_full_buffers(b), 3);
    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);
}

/* The budget: a buffer that would take the cached bytes over it is really
 * freed; 0 caches nothing; sizes are physical (max_bytes_per_param). */
static void test_cache_budget(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = cache_cfg(1, &ca, 1000);
    zo_backend *b = make(&cfg);
    assert_int_equal(add(b, 0, 500, 4), ZO_OK); /* 2000 bytes: over the budget */
    assert_int_equal(add(b, 1, 150, 4), ZO_OK); /* 600 bytes */
    assert_int_equal(add(b, 2, 150, 4), ZO_OK);
    assert_int_equal(add(b, 3, 100, 4), ZO_OK); /* 400 bytes */
    void *big = gathered(b, 0, 500), *a = gathered(b, 1, 150), *a2 = gathered(b, 2, 150), *c = gathered(b, 3, 100);
    long live = ca.live;
    zo_backend_full_free(b, 0, big);
    assert_int_equal(ca.live, live - 1); /* really freed */
    assert_int_equal(zo_host_cached_full_buffers(b), 0);
    zo_backend_full_free(b, 1, a);
    assert_int_equal(ca.live, live - 1); /* cached: 600 */
    zo_backend_full_free(b, 2, a2);
    assert_int_equal(ca.live, live - 2); /* 600 + 600 > 1000: freed */
    zo_backend_full_free(b, 3, c);
    assert_int_equal(ca.live, live - 2); /* 600 + 400 = 1000: cached */
    assert_int_equal(zo_host_cached_bytes(b), 1000);
    assert_int_equal(zo_host_cached_full_buffers(b), 2);
    assert_true(zo_host_cached_bytes(b) <= cfg.cache_bytes);
    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);

    /* cache_bytes 0: every full_free frees */
    counting_alloc c0 = {0};
    cfg = cache_cfg(2, &c0, 0);
    b = make(&cfg);
    assert_int_equal(add(b, 0, 10, 4), ZO_OK);
    void *f = gathered(b, 0, 10);
    live = c0.live;
    zo_backend_full_free(b, 0, f);
    assert_int_equal(c0.live, live - 1);
    assert_int_equal(zo_host_cached_full_buffers(b), 0);
    f = gathered(b, 0, 10);
    zo_backend_full_free(b, 0, f);
    assert_int_equal(zo_host_cache_hits(b), 0);
    zo_backend_destroy(b);
    assert_int_equal(c0.live, 0);

    /* physical sizes: under a 256-byte cap, a 4000-byte and a 40000-byte
     * request both allocate 256 bytes and share the cached buffer */
    counting_alloc cc = {0};
    cfg = cache_cfg(2, &cc, 1u << 20);
    TESTING(cfg).max_bytes_per_param = 256;
    b = make(&cfg);
    assert_int_equal(add(b, 0, 1000, 4), ZO_OK);
    assert_int_equal(add(b, 1, 10000, 4), ZO_OK);
    f = gathered(b, 0, 1000); /* the first 256 bytes exist */
    zo_backend_full_free(b, 0, f);
    assert_int_equal(zo_host_cached_bytes(b), 256);
    void *g = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 1, 40000, &g), ZO_OK);
    assert_ptr_equal(g, f);
    assert_all(g, 0xA5, 256);
    zo_gather_item it = item(b, 1, 10000, 4, g);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK); /* big enough: physical size */
    assert_int_equal(zo_backend_wait(b, w), ZO_OK);
    zo_backend_work_free(b, w);
    assert_content(1, g, 256);
    zo_backend_destroy(b); /* g still live: destroy frees it */
    assert_int_equal(cc.live, 0);
}

/* A buffer freed while its deferred gather is pending is cached and may be
 * handed out again at once: the cancelled gather never writes into it. */
static void test_cache_cancelled_gather_never_writes(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config cfg = cache_cfg(3, &ca, 1u << 20);
    TESTING(cfg).deferred = 1;
    zo_backend *b = make(&cfg);
    assert_int_equal(add(b, 0, 300, 4), ZO_OK);
    assert_int_equal(add(b, 1, 300, 4), ZO_OK);
    void *f = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 0, 1200, &f), ZO_OK);
    zo_gather_item it = item(b, 0, 300, 4, f);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
    zo_backend_full_free(b, 0, f); /* in flight: cancelled, cached */
    assert_int_equal(zo_host_cached_full_buffers(b), 1);
    void *g = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 1, 1200, &g), ZO_OK);
    assert_ptr_equal(g, f);
    assert_int_equal(zo_host_progress(b), 1);
    assert_int_equal(zo_backend_wait(b, w), ZO_ERR_STATE);
    assert_all(g, 0xA5, 1200); /* parameter 0's gather wrote nothing */
    zo_backend_work_free(b, w);
    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);
}

/* The library's default is the build's ZO_POISON (the same compile
 * definition reaches this file); ./build.sh test builds with it on. */
static void test_poison_build_default(void **state) {
    (void)state;
    assert_int_equal(zo_host_poison_default(), ZO_BUILD_POISON);
#if defined(TEST_ASAN)
    assert_int_equal(zo_host_poison_default(), 1); /* sanitizer builds poison */
#endif
}

/* no_poison 1: neither a fresh nor a reused buffer is filled; 0: both are;
 * -1 (ZO_HOST_CONFIG_INIT): as zo_host_poison_default() says. */
static void test_no_poison(void **state) {
    (void)state;
    for (int setting = -1; setting <= 1; setting++) {
        counting_alloc ca = {0};
        zo_host_config cfg = cache_cfg(2, &ca, 1u << 20);
        TESTING(cfg).no_poison = setting;
        int np = setting == ZO_HOST_POISON_BUILD_DEFAULT ? !zo_host_poison_default() : setting;
        zo_backend *b = make(&cfg);
        assert_int_equal(add(b, 0, 100, 4), ZO_OK);
        assert_int_equal(add(b, 1, 100, 4), ZO_OK);
        void *f = NULL;
        assert_int_equal(zo_backend_full_alloc(b, 0, 400, &f), ZO_OK);
        assert_all(f, np ? 0x3C : 0xA5, 400); /* 0x3C: the allocator's fill, untouched */
        zo_gather_item it = item(b, 0, 100, 4, f);
        zo_work *w = NULL;
        assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
        assert_int_equal(zo_backend_wait(b, w), ZO_OK);
        zo_backend_work_free(b, w);
        assert_content(0, f, 400);
        zo_backend_full_free(b, 0, f);
        void *g = NULL;
        assert_int_equal(zo_backend_full_alloc(b, 1, 400, &g), ZO_OK);
        assert_ptr_equal(g, f);
        if (np)
            assert_content(0, g, 400); /* stale bytes of the previous owner */
        else
            assert_all(g, 0xA5, 400);
        /* the gather still delivers the right bytes */
        it = item(b, 1, 100, 4, g);
        assert_int_equal(zo_backend_all_gather_start(b, &it, 1, &w), ZO_OK);
        assert_int_equal(zo_backend_wait(b, w), ZO_OK);
        zo_backend_work_free(b, w);
        assert_content(1, g, 400);
        zo_backend_full_free(b, 1, g);
        zo_backend_destroy(b);
        assert_int_equal(ca.live, 0);
    }
}

/* A version 1 config (no cache_bytes / no_poison fields) caches nothing
 * and poisons: the behaviour it was written for. */
static void test_cache_v1_config_off(void **state) {
    (void)state;
    counting_alloc ca = {0};
    zo_host_config c3 = cache_cfg(2, &ca, 1u << 20);
    zo_host_config_v2 cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.world_size = c3.world_size;
    cfg.rank = c3.rank;
    cfg.allocator = c3.allocator;
    cfg.cache_bytes = 1u << 20; /* past the v1 size: never read */
    cfg.no_poison = 1;          /* likewise */
    cfg.size = ZO_HOST_CONFIG_V1_SIZE;
    cfg.version = 1;
    zo_backend *b = make((const zo_host_config *)&cfg);
    assert_int_equal(add(b, 0, 10, 4), ZO_OK);
    void *f = NULL;
    assert_int_equal(zo_backend_full_alloc(b, 0, 40, &f), ZO_OK);
    assert_all(f, 0xA5, 40);
    long live = ca.live;
    zo_backend_full_free(b, 0, f);
    assert_int_equal(ca.live, live - 1);
    assert_int_equal(zo_host_cached_full_buffers(b), 0);
    zo_backend_destroy(b);
    assert_int_equal(ca.live, 0);
}

/* World mode: each rank's backend has its own cache.  Two ranks driven
 * from this thread (all_gather_start never blocks; the second rank's
 * start completes the collective, so the waits return at once). */
static void test_cache_world(void **state) {
    (void)state;
    counting_alloc ca = {0}; /* the backends' allocator (the world uses malloc) */
    zo_host_world *world = NULL;
    assert_int_equal(zo_host_world_create(2, NULL, &world), ZO_OK);
    zo_backend *b[2];
    for (int r = 0; r < 2; r++) {
        zo_host_config cfg = cache_cfg(2, &ca, 1u << 20);
        cfg.rank = r;
        cfg.world = world;
        b[r] = make(&cfg);
        assert_int_equal(add(b[r], 0, 101, 4), ZO_OK); /* 51 x 4 x 2 = 408 bytes */
        assert_int_equal(add(b[r], 1, 102, 4), ZO_OK); /* the same padded size */
    }
    void *first[2] = {NULL, NULL};
    for (int round = 0; round < 3; round++) {
        zo_param_id id = (zo_param_id)(round % 2);
        void *f[2];
        zo_work *w[2];
        for (int r = 0; r < 2; r++) {
            assert_int_equal(zo_backend_full_alloc(b[r], id, 408, &f[r]), ZO_OK);
            assert_all(f[r], 0xA5, 408);
            if (round == 0)
                first[r] = f[r];
            else
                assert_ptr_equal(f[r], first[r]); /* reused every round */
        }
        for (int r = 0; r < 2; r++) {
            zo_gather_item it = item(b[r], id, 101 + id, 4, f[r]);
            assert_int_equal(zo_backend_all_gather_start(b[r], &it, 1, &w[r]), ZO_OK);
        }
        for (int r = 0; r < 2; r++) {
            assert_int_equal(zo_backend_wait(b[r], w[r]), ZO_OK);
            zo_backend_work_free(b[r], w[r]);
            assert_content(id, f[r], (101 + id) * 4);
            zo_backend_full_free(b[r], id, f[r]);
            assert_int_equal(zo_host_cached_full_buffers(b[r]), 1);
            assert_int_equal(zo_host_live_full_buffers(b[r]), 0);
        }
    }
    assert_int_equal(zo_host_cache_hits(b[0]), 2);
    assert_int_equal(zo_host_cache_hits(b[1]), 2);

    /* rank 0 frees its buffer while the collective waits for rank 1 and
     * reuses it at once: the collective completing later never writes
     * into it */
    void *f0 = NULL, *f1 = NULL, *again = NULL;
    zo_work *w0 = NULL, *w1 = NULL;
    assert_int_equal(zo_backend_full_alloc(b[0], 0, 408, &f0), ZO_OK);
    zo_gather_item it0 = item(b[0], 0, 101, 4, f0);
    assert_int_equal(zo_backend_all_gather_start(b[0], &it0, 1, &w0), ZO_OK);
    zo_backend_full_free(b[0], 0, f0); /* in flight: cancelled for rank 0, cached */
    assert_int_equal(zo_backend_full_alloc(b[0], 1, 408, &again), ZO_OK);
    assert_ptr_equal(again, f0);
    assert_int_equal(zo_backend_full_alloc(b[1], 0, 408, &f1), ZO_OK);
    zo_gather_item it1 = item(b[1], 0, 101, 4, f1);
    assert_int_equal(zo_backend_all_gather_start(b[1], &it1, 1, &w1), ZO_OK); /* completes it */
    assert_int_equal(zo_backend_wait(b[1], w1), ZO_OK);
    assert_content(0, f1, 404); /* rank 0 still contributed */
    assert_int_equal(zo_backend_wait(b[0], w0), ZO_ERR_STATE);
    assert_all(again, 0xA5, 408);
    zo_backend_work_free(b[0], w0);
    zo_backend_work_free(b[1], w1);
    zo_backend_full_free(b[1], 0, f1);
    assert_int_equal(zo_host_world_report(world, NULL, 0), ZO_OK);

    /* destroy frees live (rank 0's `again`) and cached buffers */
    zo_backend_destroy(b[0]);
    zo_backend_destroy(b[1]);
    assert_int_equal(zo_host_world_destroy(world), ZO_OK);
    assert_int_equal(ca.live, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_byte_deterministic_not_constant),
        cmocka_unit_test(test_create_and_ops),
        cmocka_unit_test(test_create_bad_args),
        cmocka_unit_test(test_gather_uneven_worlds),
        cmocka_unit_test(test_gather_large),
        cmocka_unit_test(test_gather_group),
        cmocka_unit_test(test_deferred_query_then_wait),
        cmocka_unit_test(test_deferred_progress),
        cmocka_unit_test(test_deferred_cancel),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_no_copy),
        cmocka_unit_test(test_reduce_scatter),
        cmocka_unit_test(test_ops_bad_args),
        cmocka_unit_test(test_many_params_add_remove),
        cmocka_unit_test(test_destroy_frees_every_table),
        cmocka_unit_test(test_alloc_failure_every_site),
        cmocka_unit_test(test_cache_default_on),
        cmocka_unit_test(test_cache_reuse_lifo_repoison),
        cmocka_unit_test(test_cache_budget),
        cmocka_unit_test(test_cache_cancelled_gather_never_writes),
        cmocka_unit_test(test_poison_build_default),
        cmocka_unit_test(test_no_poison),
        cmocka_unit_test(test_cache_v1_config_off),
        cmocka_unit_test(test_cache_world),
    };
    return cmocka_run_group_tests_name("backend_host", tests, NULL, NULL);
}
