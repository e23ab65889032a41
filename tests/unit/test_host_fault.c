/*
 * test_host_fault.c - the host backend's fault injection (zo_host_set_fault)
 * at the data-plane level, and host backend defensive paths the other
 * tests leave uncovered (coverage of runtime/).
 *
 * Every case drives the backend vtable directly, the way the runtime does:
 * param_add, full_alloc, all_gather_start, query/wait, work_free.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "backend_host_internal.h"
#include "zoffload.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

typedef struct hb {
    zo_backend *b;
    const zo_backend_ops *o;
    void *c;
} hb;

static hb mk(int world, int deferred) {
    zo_host_config cfg = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    cfg.testing = &ht;
    cfg.world_size = world;
    cfg.rank = 0;
    ht.deferred = deferred;
    ht.no_poison = 0; /* the failed-gather tests read the 0xA5 fill */
    hb h;
    assert_int_equal(zo_backend_host_create(&cfg, &h.b), ZO_OK);
    h.o = h.b->ops;
    h.c = h.b->ctx;
    return h;
}

/* adds param p of numel 4-byte elements and allocates its full buffer */
static void *add_param(hb *h, zo_param_id p, uint64_t numel, zo_gather_item *it) {
    int W = h->o->world_size(h->c);
    uint64_t part = (numel + (uint64_t)W - 1) / (uint64_t)W;
    assert_int_equal(zo_backend_param_add(h->b, p, numel, 4, part), ZO_OK);
    void *buf = NULL;
    assert_int_equal(zo_backend_full_alloc(h->b, p, (size_t)(part * (uint64_t)W * 4u), &buf), ZO_OK);
    it->param = p;
    it->full = buf;
    it->numel = numel;
    it->partition_numel = part;
    it->elem_size = 4;
    return buf;
}

static int content_ok(zo_param_id p, const void *buf, uint64_t bytes) {
    const uint8_t *d = buf;
    for (uint64_t i = 0; i < bytes; i++)
        if (d[i] != zo_host_param_byte(p, i)) return 0;
    return 1;
}

static void test_set_fault_args(void **state) {
    (void)state;
    zo_host_fault f = {ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL, 1, 1, 0, 0};
    assert_int_equal(zo_host_set_fault(NULL, &f), ZO_ERR_INVALID_ARG);
    assert_int_equal(zo_host_fault_ops(NULL, ZO_HOST_FAULT_GATHER), 0);
    assert_int_equal(zo_host_fault_fired(NULL), 0);
    hb h = mk(2, 0);
    f.point = (zo_host_fault_point)2;
    assert_int_equal(zo_host_set_fault(h.b, &f), ZO_ERR_INVALID_ARG);
    f.point = ZO_HOST_FAULT_WAIT;
    f.action = (zo_host_fault_action)9;
    assert_int_equal(zo_host_set_fault(h.b, &f), ZO_ERR_INVALID_ARG);
    f.action = ZO_HOST_FAULT_FAIL;
    f.status = 3; /* a positive status is not an error code */
    assert_int_equal(zo_host_set_fault(h.b, &f), ZO_ERR_INVALID_ARG);
    f.status = 0;
    assert_int_equal(zo_host_set_fault(h.b, &f), ZO_OK);
    assert_int_equal(zo_host_fault_ops(h.b, (zo_host_fault_point)5), 0);
    assert_int_equal(zo_host_set_fault(h.b, NULL), ZO_OK); /* disarm */
    zo_backend_destroy(h.b);
}

/* FAIL at GATHER: the at-th gather fails with the status and has no
 * effect; the next one works; counts restart at each set_fault */
static void test_fail_gather(void **state) {
    (void)state;
    hb h = mk(3, 0);
    zo_gather_item it;
    void *buf = add_param(&h, 0, 10, &it);
    zo_host_fault f = {ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL, 2, 1, ZO_ERR_NOMEM, 0};
    assert_int_equal(zo_host_set_fault(h.b, &f), ZO_OK);
    zo_work *w = NULL;
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK); /* 1st */
    assert_int_equal(zo_backend_wait(h.b, w), ZO_OK);
    zo_backend_work_free(h.b, w);
    memset(buf, 0xA5, 40);
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_ERR_NOMEM); /* 2nd: injected */
    assert_null(w);
    assert_non_null(strstr(zo_backend_last_error(h.b), "injected"));
    assert_int_equal(zo_host_live_works(h.b), 0);
    assert_int_equal(zo_host_fault_fired(h.b), 1);
    assert_int_equal(zo_host_fault_ops(h.b, ZO_HOST_FAULT_GATHER), 2);
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK); /* 3rd */
    assert_int_equal(zo_backend_wait(h.b, w), ZO_OK);
    assert_true(content_ok(0, buf, 40));
    zo_backend_work_free(h.b, w);
    /* status 0 means ZO_ERR_BACKEND; count 2 fails two in a row */
    zo_host_fault f2 = {ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_FAIL, 1, 2, 0, 0};
    assert_int_equal(zo_host_set_fault(h.b, &f2), ZO_OK);
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_ERR_BACKEND);
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_ERR_BACKEND);
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK);
    zo_backend_work_free(h.b, w);
    zo_backend_full_free(h.b, 0, buf);
    zo_backend_destroy(h.b);
}

/* FAIL at WAIT is transient: the work stays; a later wait completes it */
static void test_fail_wait_transient(void **state) {
    (void)state;
    for (int deferred = 0; deferred < 2; deferred++) {
        hb h = mk(2, deferred);
        zo_gather_item it;
        void *buf = add_param(&h, 3, 33, &it);
        zo_host_fault f = {ZO_HOST_FAULT_WAIT, ZO_HOST_FAULT_FAIL, 1, 2, 0, 0};
        assert_int_equal(zo_host_set_fault(h.b, &f), ZO_OK);
        zo_work *w = NULL;
        int done = 7;
        assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK);
        assert_int_equal(zo_backend_query(h.b, w, &done), ZO_ERR_BACKEND); /* check 1 */
        assert_int_equal(done, 0);
        assert_int_equal(zo_backend_wait(h.b, w), ZO_ERR_BACKEND); /* check 2 */
        assert_int_equal(zo_backend_wait(h.b, w), ZO_OK);          /* check 3 */
        assert_true(content_ok(3, buf, 33 * 4));
        assert_int_equal(zo_host_fault_fired(h.b), 2);
        zo_backend_work_free(h.b, w);
        zo_backend_full_free(h.b, 3, buf);
        zo_backend_destroy(h.b);
    }
}

/* DELAY at GATHER: not done until a wait, even on an immediate backend;
 * zo_host_progress skips it.  DELAY at WAIT: query says not done, wait
 * completes (after sleeping). */
static void test_delay(void **state) {
    (void)state;
    hb h = mk(4, 0);
    zo_gather_item it;
    void *buf = add_param(&h, 1, 9, &it);
    zo_host_fault f = {ZO_HOST_FAULT_GATHER, ZO_HOST_FAULT_DELAY, 1, 1, 0, 0};
    assert_int_equal(zo_host_set_fault(h.b, &f), ZO_OK);
    zo_work *w = NULL;
    int done = 1;
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK);
    assert_int_equal(zo_backend_query(h.b, w, &done), ZO_OK);
    assert_int_equal(done, 0);
    assert_int_equal(zo_host_pending_works(h.b), 1);
    assert_int_equal(zo_host_progress(h.b), 0); /* a slow collective: progress does not finish it */
    assert_int_equal(zo_backend_wait(h.b, w), ZO_OK);
    assert_true(content_ok(1, buf, 36));
    zo_backend_work_free(h.b, w);

    zo_host_fault g = {ZO_HOST_FAULT_WAIT, ZO_HOST_FAULT_DELAY, 1, 2, 0, 1000};
    assert_int_equal(zo_host_set_fault(h.b, &g), ZO_OK);
    memset(buf, 0, 36);
    assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK); /* immediate: already copied */
    done = 1;
    assert_int_equal(zo_backend_query(h.b, w, &done), ZO_OK);
    assert_int_equal(done, 0);                        /* reported not done */
    assert_int_equal(zo_backend_wait(h.b, w), ZO_OK); /* sleeps 1 ms, completes */
    assert_true(content_ok(1, buf, 36));
    zo_backend_work_free(h.b, w);
    zo_backend_full_free(h.b, 1, buf);
    zo_backend_destroy(h.b);
}

/* FAIL_WORK: the collective fails; nothing is copied (the buffer keeps
 * its poison), every later check reports the status, the shards are intact */
static void test_fail_work(void **state) {
    (void)state;
    for (int point = 0; point < 2; point++)
        for (int deferred = 0; deferred < 2; deferred++) {
            hb h = mk(2, deferred);
            zo_gather_item it;
            void *buf = add_param(&h, 2, 16, &it);
            zo_host_fault f = {(zo_host_fault_point)point, ZO_HOST_FAULT_FAIL_WORK, 1, 1, ZO_ERR_BACKEND, 0};
            assert_int_equal(zo_host_set_fault(h.b, &f), ZO_OK);
            zo_work *w = NULL;
            int done = 0;
            /* the poison must survive: fill it again in case the gather copied */
            assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK);
            if (point == ZO_HOST_FAULT_GATHER) {
                /* immediate: completed (failed) at issue; deferred: at wait */
                assert_int_equal(zo_backend_wait(h.b, w), ZO_ERR_BACKEND);
            } else {
                assert_int_equal(zo_backend_query(h.b, w, &done), ZO_ERR_BACKEND);
                assert_int_equal(done, 1);
            }
            assert_int_equal(zo_backend_wait(h.b, w), ZO_ERR_BACKEND);
            assert_int_equal(zo_backend_query(h.b, w, &done), ZO_ERR_BACKEND);
            const uint8_t *d = buf;
            if (deferred || point == ZO_HOST_FAULT_GATHER) assert_int_equal(d[0], 0xA5); /* nothing copied */
            zo_backend_work_free(h.b, w);
            /* the shards are intact: a new gather gets the true bytes */
            assert_int_equal(zo_backend_all_gather_start(h.b, &it, 1, &w), ZO_OK);
            assert_int_equal(zo_backend_wait(h.b, w), ZO_OK);
            assert_true(content_ok(2, buf, 64));
            zo_backend_work_free(h.b, w);
            zo_backend_full_free(h.b, 2, buf);
            zo_backend_destroy(h.b);
        }
}

/* defensive paths: param removed / buffer freed while a deferred gather is
 * pending, a buffer freed as another parameter, two gathers into one
 * buffer, destroy with live works and buffers, unknown ids, NULL ctx */
static void test_defensive(void **state) {
    (void)state;
    hb h = mk(2, 1);
    zo_gather_item a, b;
    void *ba = add_param(&h, 0, 8, &a);
    void *bb = add_param(&h, 1, 8, &b);
    zo_work *w = NULL, *w2 = NULL;
    assert_int_equal(zo_backend_all_gather_start(h.b, &a, 1, &w), ZO_OK);
    /* the same buffer as the target of a second pending gather (another
     * param's item pointing at it is refused first by the param check) */
    zo_gather_item a2 = a;
    assert_int_equal(zo_backend_all_gather_start(h.b, &a2, 1, &w2), ZO_ERR_STATE);
    /* removing the parameter cancels the pending copy: wait reports it */
    zo_backend_param_remove(h.b, 0);
    assert_int_equal(zo_backend_wait(h.b, w), ZO_ERR_STATE);
    zo_backend_work_free(h.b, w);
    zo_backend_param_remove(h.b, 0); /* unknown now: recorded, ignored */
    assert_non_null(strstr(zo_backend_last_error(h.b), "not added"));
    /* a buffer freed as another parameter is freed anyway, with a message */
    zo_backend_full_free(h.b, 7, ba);
    assert_non_null(strstr(zo_backend_last_error(h.b), "freed as param"));
    assert_int_equal(zo_host_live_full_buffers(h.b), 1);
    /* destroy with a pending work and a live buffer frees both */
    assert_int_equal(zo_backend_all_gather_start(h.b, &b, 1, &w), ZO_OK);
    (void)bb;
    /* NULL contexts are refused, never dereferenced */
    int done;
    assert_int_equal(h.o->all_gather_start(NULL, &b, 1, &w2), ZO_ERR_INVALID_ARG);
    assert_int_equal(h.o->wait(NULL, w), ZO_ERR_INVALID_ARG);
    assert_int_equal(h.o->query(NULL, w, &done), ZO_ERR_INVALID_ARG);
    h.o->work_free(NULL, w);
    h.o->param_remove(NULL, 1);
    assert_int_equal(zo_backend_all_gather_start(h.b, &b, SIZE_MAX / 2, &w2), ZO_ERR_INVALID_ARG);
    zo_backend_destroy(h.b); /* with the pending work and bb alive: LSan checks */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_fault_args),      cmocka_unit_test(test_fail_gather),
        cmocka_unit_test(test_fail_wait_transient), cmocka_unit_test(test_delay),
        cmocka_unit_test(test_fail_work),           cmocka_unit_test(test_defensive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
