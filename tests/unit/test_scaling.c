/*
 * test_scaling.c - entry points whose cost must not grow with the size of
 * the model or of the pass stack: the per-item cost at a large size stays
 * within a small factor of the cost at a 16 times smaller size (a scan per
 * item would make it ~16 times larger).  Timed, so the bound is generous:
 * the smaller size is timed best of three, the factor allowed is 6.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "hookdrv.h"
#include "zoffload.h"

#define SMALL 2000u
#define LARGE (16u * SMALL)
#define MAX_RATIO 6.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* seconds per module to register n named modules under one root */
static double register_cost(unsigned n)
{
    zo_config cfg = ZO_CONFIG_INIT;
    zo_runtime *rt = HD_CREATE(cfg, NULL);
    zo_module_id root = HD_MODULE(rt, ZO_NO_MODULE, "model"), m;
    char name[32];
    double t0 = now_s();
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "layer%u", i);
        if (zo_module_register(rt, root, name, 0, &m)) fail_msg("register %u: %s", i, zo_last_error(rt));
    }
    double t = now_s() - t0;
    /* the duplicate check still works at this size */
    HD_ERR(rt, zo_module_register(rt, root, "layer7", 0, &m), ZO_ERR_EXISTS);
    HD_OK(rt, zo_module_register(rt, root + 1, "layer7", 0, &m)); /* the same name under layer0 */
    HD_OK(rt, zo_runtime_destroy(rt));
    return t / n;
}

static void test_register_named_modules_linear(void **state)
{
    (void)state;
    double small = register_cost(SMALL);
    for (int k = 0; k < 2; k++) {
        double t = register_cost(SMALL);
        if (t < small) small = t;
    }
    double large = register_cost(LARGE);
    print_message("register: %.3f us/module at %u, %.3f us/module at %u (ratio %.1f)\n", small * 1e6, SMALL,
                  large * 1e6, LARGE, large / small);
    assert_true(large / small < MAX_RATIO);
}

/* seconds per zo_forward_abort to unwind n nested forward passes (a
 * reentrant recompute inside a recompute ...), one open call each, the
 * innermost first */
static double abort_cost(unsigned n)
{
    zo_config cfg = ZO_CONFIG_INIT;
    zo_runtime *rt = HD_CREATE(cfg, NULL);
    zo_module_id root = HD_MODULE(rt, ZO_NO_MODULE, "model");
    HD_PARAM(rt, root, "w", 16);
    zo_graph g;
    for (unsigned i = 0; i < n; i++)
        if (zo_forward_begin(rt, 0, &g) || zo_pre_forward(rt, root, ZO_CALL_GRAD))
            fail_msg("pass %u: %s", i, zo_last_error(rt));
    double t0 = now_s();
    for (unsigned i = 0; i < n; i++)
        if (zo_forward_abort(rt, ZO_NO_MODULE)) fail_msg("abort %u: %s", i, zo_last_error(rt));
    double t = now_s() - t0;
    HD_EQ(HD_STATS(rt).forward_stack_depth, 0);
    HD_ALL_RELEASED(rt);
    HD_OK(rt, zo_runtime_destroy(rt));
    return t / n;
}

static void test_forward_abort_linear(void **state)
{
    (void)state;
    double small = abort_cost(SMALL);
    for (int k = 0; k < 2; k++) {
        double t = abort_cost(SMALL);
        if (t < small) small = t;
    }
    double large = abort_cost(LARGE);
    print_message("abort: %.3f us/abort at %u passes, %.3f us/abort at %u (ratio %.1f)\n", small * 1e6, SMALL,
                  large * 1e6, LARGE, large / small);
    assert_true(large / small < MAX_RATIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_named_modules_linear),
        cmocka_unit_test(test_forward_abort_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
