/*
 * test_hostile.c - hostile inputs to the public API: requests the system
 * cannot satisfy, handles from another runtime or long stale, hook orders
 * PyTorch never produces, and errors of functions that have no runtime to
 * hold the message.  Every case asserts the exact status, that
 * zo_last_error() names the problem, and that a normal training step
 * afterwards succeeds and releases everything.
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

/* last_error of rt (NULL: the thread's creation error) contains needle */
#define HAS_MSG(rt, needle)                                                                  \
    do {                                                                                     \
        const char *m_ = zo_last_error(rt);                                                  \
        if (!m_ || !strstr(m_, (needle))) {                                                  \
            print_error("last_error \"%s\" lacks \"%s\"\n", m_ ? m_ : "(null)", (needle)); \
            fail();                                                                          \
        }                                                                                    \
    } while (0)

/* A model root -> fc with one parameter each. */
typedef struct model {
    zo_runtime *rt;
    zo_module_id root, fc;
    zo_param_id w_root, w_fc;
} model;

static void model_make(model *md, zo_config cfg)
{
    cfg.param_persistence_threshold = 0;
    md->rt = HD_CREATE(cfg, NULL);
    md->root = HD_MODULE(md->rt, ZO_NO_MODULE, "model");
    md->fc = HD_MODULE(md->rt, md->root, "fc");
    md->w_root = HD_PARAM(md->rt, md->root, "bias", 1000);
    md->w_fc = HD_PARAM(md->rt, md->fc, "weight", 4000);
}

/* One full training step (forward, backward, optimizer step) in PyTorch
 * order; everything is released at the end. */
static void model_step(model *md)
{
    zo_runtime *rt = md->rt;
    hd_call r, f;
    zo_graph g = HD_FWD_BEGIN(rt);
    HD_ENTER(rt, &r, md->root, ZO_CALL_GRAD, "1");
    HD_ENTER(rt, &f, md->fc, ZO_CALL_GRAD, "1");
    HD_ACCESS(rt, md->fc, md->w_fc);
    HD_EXIT(rt, &f, "1");
    HD_ACCESS(rt, md->root, md->w_root);
    HD_EXIT(rt, &r, "1");
    HD_FWD_END(rt, g);
    HD_BWD_BEGIN(rt, g);
    HD_OUT_GRAD(rt, r.out[0]);
    HD_GRAD_READY(rt, md->w_root);
    HD_OUT_GRAD(rt, f.out[0]);
    HD_GRAD_READY(rt, md->w_fc);
    HD_IN_GRAD(rt, f.in[0]);
    HD_IN_GRAD(rt, r.in[0]);
    HD_BWD_END(rt, g);
    HD_RELEASE_ALL(rt);
    HD_ALL_RELEASED(rt);
}

static void model_free(model *md)
{
    HD_OK(md->rt, zo_runtime_destroy(md->rt));
    md->rt = NULL;
}

/* ------------------------------------------------------------------ */
/* Allocation the system refuses                                        */
/* ------------------------------------------------------------------ */

/* 64 GiB (more than this machine can commit) and just under the 1 TiB cap
 * (AddressSanitizer's own limit) are ZO_ERR_NOMEM in every build, sanitized
 * or not, and leave the runtime usable. */
static void test_huge_param_is_nomem(void **state)
{
    (void)state;
    model md;
    model_make(&md, (zo_config)ZO_CONFIG_INIT);
    zo_param_id p = 77;
    HD_ERR(md.rt, zo_param_register(md.rt, md.fc, "huge", 1ull << 34, 4, 0, &p), ZO_ERR_NOMEM);
    HAS_MSG(md.rt, "param_add");
    assert_int_equal(p, 77);
    HD_ERR(md.rt, zo_param_register(md.rt, md.fc, "huger", (1ull << 38) - 1, 4, 0, &p), ZO_ERR_NOMEM);
    HAS_MSG(md.rt, "param_add");
    HD_ERR(md.rt, zo_param_register(md.rt, md.fc, "huger", ((1ull << 40) - 4096), 1, 0, &p), ZO_ERR_NOMEM);
    HAS_MSG(md.rt, "param_add");
    assert_int_equal(HD_STATS(md.rt).n_params, 2);
    model_step(&md);
    model_free(&md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_param_is_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
