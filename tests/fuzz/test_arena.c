/*
 * test_arena.c - the fuzz targets' per-execution arena (fuzz/arena.h): its
 * blocks, its reset and growth, what ASan sees in it (poisoned headers, gaps
 * and freed blocks), and runs through it that give what runs through malloc
 * give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "run.h"
#include "scenario.h"
#include "zs_random.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_ASAN)
#define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static void test_blocks(void **state) {
    (void)state;
    zs_arena *a = zs_arena_create(0);
    assert_non_null(a);
    assert_null(zs_arena_alloc(a, 0));
    char *p[64];
    for (int i = 0; i < 64; i++) {
        size_t n = (size_t)(1 + i * 37);
        p[i] = zs_arena_alloc(a, n);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % 16, 0);
        memset(p[i], i, n);
    }
    for (int i = 0; i < 64; i++) { /* no block overlaps another */
        size_t n = (size_t)(1 + i * 37);
        for (size_t k = 0; k < n; k++) assert_int_equal((unsigned char)p[i][k], (unsigned)i);
    }
    for (int i = 0; i < 64; i += 2) zs_arena_free(a, p[i]);
    zs_arena_free(a, NULL);
    assert_int_equal(zs_arena_reset(a), 32);                               /* the odd ones were still live */
    for (int i = 1; i < 64; i += 2) assert_non_null(zs_arena_alloc(a, 8)); /* memory again after the reset */
    assert_int_equal(zs_arena_reset(a), 32);
    zs_arena_destroy(a);
    zs_arena_destroy(NULL);
}

/* past the budget blocks come from malloc; the reset frees those still live
 * and grows the arena to the demand it saw, up to the budget */
static void test_heap_and_growth(void **state) {
    (void)state;
    zs_arena *a = zs_arena_create((size_t)1 << 20);
    assert_non_null(a);
    zs_arena_stats st;
    zs_arena_get_stats(a, &st);
    size_t cap0 = st.capacity;
    assert_true(cap0 > 0 && cap0 <= ((size_t)1 << 20));
    void *big[8];
    for (int i = 0; i < 8; i++) {
        big[i] = zs_arena_alloc(a, 100000);
        assert_non_null(big[i]);
        memset(big[i], 0x5a, 100000);
    }
    zs_arena_get_stats(a, &st);
    assert_true(st.heap > 0);               /* 800 KB did not fit in the first buffer */
    zs_arena_free(a, big[7]);               /* a malloc'd block freed at once */
    assert_int_equal(zs_arena_reset(a), 7); /* the others by the reset */
    zs_arena_get_stats(a, &st);
    assert_true(st.capacity >= 8 * 100000u); /* grown to the demand */
    assert_true(st.capacity <= ((size_t)1 << 20));
    uint64_t heap_before = st.heap;
    for (int i = 0; i < 8; i++) assert_non_null(zs_arena_alloc(a, 100000));
    zs_arena_get_stats(a, &st);
    assert_int_equal(st.heap, heap_before); /* it all fits now */
    /* a block bigger than the whole budget still works (malloc) */
    void *huge = zs_arena_alloc(a, (size_t)3 << 20);
    assert_non_null(huge);
    memset(huge, 1, (size_t)3 << 20);
    zs_arena_free(a, huge);
    assert_int_equal(zs_arena_reset(a), 8);
    zs_arena_get_stats(a, &st);
    assert_true(st.capacity <= ((size_t)1 << 20)); /* never past the budget */
    zs_arena_destroy(a);
}

/* ASan keeps its power in the arena: outside the live blocks is poisoned */
static void test_poison(void **state) {
    (void)state;
#ifdef TEST_ASAN
    zs_arena *a = zs_arena_create(0);
    assert_non_null(a);
    for (size_t n = 1; n <= 70; n++) {
        char *p = zs_arena_alloc(a, n);
        char *q = zs_arena_alloc(a, n);
        assert_non_null(p);
        for (size_t k = 0; k < n; k++) assert_false(__asan_address_is_poisoned(p + k));
        for (size_t k = n; k < n + 32; k++) assert_true(__asan_address_is_poisoned(p + k)); /* overflow */
        for (size_t k = 1; k <= 16; k++) assert_true(__asan_address_is_poisoned(q - k));    /* underflow */
        zs_arena_free(a, p);
        for (size_t k = 0; k < n; k++) assert_true(__asan_address_is_poisoned(p + k)); /* use after free */
        char *r = zs_arena_alloc(a, n);
        assert_true(r != p); /* a freed block is not handed out again before the reset */
        assert_true(__asan_address_is_poisoned(p));
        zs_arena_free(a, r);
        zs_arena_free(a, q);
    }
    char *p = zs_arena_alloc(a, 100);
    zs_arena_reset(a);
    assert_true(__asan_address_is_poisoned(p)); /* nothing survives the reset */
    zs_arena_destroy(a);
#else
    skip();
#endif
}

/* a run through the arena gives what a run through malloc gives, and frees
 * every block (random byte strings decode to valid scenarios: the codec) */
static void test_runs_match_malloc(void **state) {
    (void)state;
    static zs_scenario s;
    static uint8_t in[1024];
    zs_arena *a = zs_arena_create(0);
    assert_non_null(a);
    zo_allocator al = zs_arena_allocator(a);
    int ran = 0;
    for (int t = 0; t < 300; t++) {
        size_t n = zs_rand_input(7, (uint64_t)t, in, t < 150 ? 256 : sizeof in);
        zs_decode(in, n, &s);
        for (int pol = 0; pol < 2; pol++) {
            zs_run_opts o;
            zs_run_opts_init(&o);
            o.policy = pol ? ZO_GRADS_RESET_ON_FORWARD : -1;
            zs_outcome x, y;
            zs_run(&s, &o, &x);
            o.allocator = &al;
            zs_run(&s, &o, &y);
            assert_int_equal(zs_arena_reset(a), 0);
            assert_int_equal(x.verdict, y.verdict);
            assert_int_equal(x.r.events, y.r.events);
            assert_int_equal(x.r.hook_calls, y.r.hook_calls);
            assert_int_equal(x.r.backwards, y.r.backwards);
            assert_int_equal(x.r.i3_checks, y.r.i3_checks);
            assert_int_equal(x.r.torch_error, y.r.torch_error);
            assert_string_equal(x.r.v.msg, y.r.v.msg);
            if (x.in_world) /* the world's ranks are threads: how often one waits is timing */
                x.r.stats.blocking_waits = y.r.stats.blocking_waits = 0;
            assert_memory_equal(&x.r.stats, &y.r.stats, sizeof x.r.stats);
            ran += x.ran;
        }
    }
    assert_true(ran > 500);
    zs_arena_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_heap_and_growth),
        cmocka_unit_test(test_poison),
        cmocka_unit_test(test_runs_match_malloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
