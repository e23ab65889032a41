/*
 * test_scaling.c - entry points at a size where a scan per item would show:
 * 32,000 named modules under one root (the duplicate-name check still
 * answers) and 32,000 nested forward passes aborted one by one (the stack
 * empties, everything is released).  Correctness only: that the cost per
 * item stays flat (1e4 -> 1e6 modules, 1e4 -> 2^20 passes, ratio <= 1.5)
 * is measured by bench/bench_scaling.c, since timing is no test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hookdrv.h"
#include "zoffload.h"

#define LARGE 32000u

/* registers n named modules under one root */
static void register_many(unsigned n) {
    zo_config cfg = ZO_CONFIG_INIT;
    zo_runtime *rt = HD_CREATE(cfg, NULL);
    zo_module_id root = HD_MODULE(rt, ZO_NO_MODULE, "model"), m;
    char name[32];
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "layer%u", i);
        if (zo_module_register(rt, root, name, 0, &m)) fail_msg("register %u: %s", i, zo_last_error(rt));
    }
    /* the duplicate check still works at this size */
    HD_ERR(rt, zo_module_register(rt, root, "layer7", 0, &m), ZO_ERR_EXISTS);
    HD_OK(rt, zo_module_register(rt, root + 1, "layer7", 0, &m)); /* the same name under layer0 */
    HD_EQ(HD_STATS(rt).n_modules, n + 2);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_register_named_modules_at_scale(void **state) {
    (void)state;
    register_many(LARGE);
}

/* zo_forward_abort unwinds n nested forward passes (a reentrant recompute
 * inside a recompute ...), one open call each, the innermost first */
static void abort_many(unsigned n) {
    zo_config cfg = ZO_CONFIG_INIT;
    zo_runtime *rt = HD_CREATE(cfg, NULL);
    zo_module_id root = HD_MODULE(rt, ZO_NO_MODULE, "model");
    HD_PARAM(rt, root, "w", 16);
    zo_graph g;
    for (unsigned i = 0; i < n; i++)
        if (zo_forward_begin(rt, 0, &g) || zo_pre_forward(rt, root, ZO_CALL_GRAD))
            fail_msg("pass %u: %s", i, zo_last_error(rt));
    HD_EQ(HD_STATS(rt).forward_stack_depth, n);
    for (unsigned i = 0; i < n; i++)
        if (zo_forward_abort(rt, ZO_NO_MODULE)) fail_msg("abort %u: %s", i, zo_last_error(rt));
    HD_EQ(HD_STATS(rt).forward_stack_depth, 0);
    HD_ALL_RELEASED(rt);
    HD_OK(rt, zo_runtime_destroy(rt));
}

static void test_forward_abort_at_scale(void **state) {
    (void)state;
    abort_many(LARGE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_named_modules_at_scale),
        cmocka_unit_test(test_forward_abort_at_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
