/*
 * test_runtime_backend_fail.c - data-plane failures (ZO_ERR_BACKEND).
 *
 * A wrapper backend forwards every operation to a real host backend but
 * makes the k-th fallible operation (param_add, full_alloc,
 * all_gather_start, wait, query) fail.  For k = 1, 2, ... a training
 * scenario runs until the injected failure surfaces; the failing entry
 * point must return the injected code (ZO_ERR_BACKEND, or ZO_ERR_NOMEM
 * for a refused full buffer) with a message, report ZO_EV_ERROR, and
 * leave the runtime consistent.  The framework then does what PyTorch
 * would after the exception: zo_forward_abort() if a forward is open
 * (pre_forward documents "On ZO_ERR_TRACE/BACKEND the call is still
 * pushed"), then zo_release_all(); everything must end released, and
 * destroy must free every block (counting allocator + LSan).
 */
#include "hookdrv.h"

static hd_events g_ev;

typedef struct failing {
    zo_backend *inner;
    uint64_t ops;     /* fallible operations so far */
    uint64_t fail_at; /* 1-based; 0: never */
    zo_status injected;
    int fired;
} failing;

static zo_status inject(failing *f, zo_status code) {
    f->ops++;
    if (f->fail_at != 0 && f->ops == f->fail_at) {
        f->fired = 1;
        f->injected = code;
        return code;
    }
    return ZO_OK;
}

#define INNER(f) ((f)->inner->ops)
#define ICTX(f)  ((f)->inner->ctx)

static int fb_world_size(void *ctx) {
    failing *f = ctx;
    return INNER(f)->world_size(ICTX(f));
}
static int fb_rank(void *ctx) {
    failing *f = ctx;
    return INNER(f)->rank(ICTX(f));
}
static zo_status fb_param_add(void *ctx, zo_param_id p, uint64_t numel, uint32_t es, uint64_t part) {
    failing *f = ctx;
    zo_status s = inject(f, ZO_ERR_BACKEND);
    return s ? s : INNER(f)->param_add(ICTX(f), p, numel, es, part);
}
static void fb_param_remove(void *ctx, zo_param_id p) {
    failing *f = ctx;
    INNER(f)->param_remove(ICTX(f), p);
}
static zo_status fb_full_alloc(void *ctx, zo_param_id p, size_t bytes, void **out) {
    failing *f = ctx;
    zo_status s = inject(f, ZO_ERR_NOMEM);
    return s ? s : INNER(f)->full_alloc(ICTX(f), p, bytes, out);
}
static void fb_full_free(void *ctx, zo_param_id p, void *buf) {
    failing *f = ctx;
    INNER(f)->full_free(ICTX(f), p, buf);
}
static zo_status fb_start(void *ctx, const zo_gather_item *it, size_t n, zo_work **out) {
    failing *f = ctx;
    zo_status s = inject(f, ZO_ERR_BACKEND);
    return s ? s : INNER(f)->all_gather_start(ICTX(f), it, n, out);
}
static zo_status fb_wait(void *ctx, zo_work *w) {
    failing *f = ctx;
    zo_status s = inject(f, ZO_ERR_BACKEND);
    return s ? s : INNER(f)->wait(ICTX(f), w);
}
static zo_status fb_query(void *ctx, zo_work *w, int *done) {
    failing *f = ctx;
    zo_status s = inject(f, ZO_ERR_BACKEND);
    return s ? s : INNER(f)->query(ICTX(f), w, done);
}
static void fb_work_free(void *ctx, zo_work *w) {
    failing *f = ctx;
    INNER(f)->work_free(ICTX(f), w);
}
static const char *fb_last_error(void *ctx) {
    failing *f = ctx;
    return f->fired ? "injected backend failure" : INNER(f)->last_error(ICTX(f));
}
static void fb_destroy(void *ctx) { (void)ctx; }

static const zo_backend_ops FB_OPS = {ZO_BACKEND_OPS_VERSION,
                                      "failing-host",
                                      fb_world_size,
                                      fb_rank,
                                      fb_param_add,
                                      fb_param_remove,
                                      fb_full_alloc,
                                      fb_full_free,
                                      fb_start,
                                      fb_wait,
                                      fb_query,
                                      fb_work_free,
                                      NULL,
                                      fb_last_error,
                                      fb_destroy,
                                      NULL /* exchange: none (a version-1-style backend) */,
                                      NULL /* prefetch: none */};

typedef struct bf_ctx {
    failing f;
    zo_backend wrapper;
    zo_runtime *rt;
    hd_alloc a;
    jmp_buf jb;
    int failed_calls; /* entry points that returned the injected code */
    char problem[512];
} bf_ctx;

static void bf_problem(bf_ctx *c, int line, const char *expr, const char *what, zo_status st) {
    snprintf(c->problem, sizeof(c->problem), "line %d: %s: %s %s; last_error \"%s\"", line, expr, what, zo_strerror(st),
             c->rt ? zo_last_error(c->rt) : "");
    longjmp(c->jb, 1);
}

/* After the injected failure surfaced, calls are not retried: the
 * scenario stops (return 1) and the caller recovers as a framework would. */
#define BF(c, call)                                                                                                    \
    do {                                                                                                               \
        size_t bf_mark_ = g_ev.n;                                                                                      \
        zo_status bf_s_ = (call);                                                                                      \
        if (bf_s_ != ZO_OK) {                                                                                          \
            if (!(c)->f.fired) bf_problem((c), __LINE__, #call, "failed without injection:", bf_s_);                   \
            if (bf_s_ != (c)->f.injected) bf_problem((c), __LINE__, #call, "returned", bf_s_);                         \
            if (zo_last_error((c)->rt)[0] == '\0')                                                                     \
                bf_problem((c), __LINE__, #call, "empty zo_last_error after", bf_s_);                                  \
            if (hd_ev_count_from(&g_ev, bf_mark_, ZO_EV_ERROR, HD_ANY, HD_ANY) == 0)                                   \
                bf_problem((c), __LINE__, #call, "no ZO_EV_ERROR for", bf_s_);                                         \
            if (zo_check_consistency((c)->rt) != ZO_OK) bf_problem((c), __LINE__, #call, "inconsistent after", bf_s_); \
            (c)->failed_calls++;                                                                                       \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

/* returns 1 if an injected failure surfaced as an error */
static int bf_scenario(bf_ctx *c, zo_grads_policy pol) {
    zo_runtime *rt = c->rt;
    zo_module_id r, a, b;
    zo_param_id p;
    BF(c, zo_module_register(rt, ZO_NO_MODULE, "r", 0, &r));
    BF(c, zo_module_register(rt, r, "a", 0, &a));
    BF(c, zo_module_register(rt, r, "b", 0, &b));
    BF(c, zo_param_register(rt, r, "w", 33, 4, 0, &p));
    BF(c, zo_param_register(rt, a, "w", 1000, 2, 0, &p));
    BF(c, zo_param_register(rt, a, "bias", 5, 4, 0, &p)); /* persistent */
    BF(c, zo_param_register(rt, b, "w", 777, 4, 0, &p));
    BF(c, zo_module_use_param(rt, b, 1));
    for (int step = 0; step < 3; step++) {
        zo_graph g;
        uint8_t one[1] = {1};
        zo_grad_handle r_in, r_out, a_in, a_out, b_in, b_out, a2_in, a2_out;
        const void *d;
        BF(c, zo_forward_begin(rt, ZO_FWD_ROOT, &g));
        BF(c, zo_pre_forward(rt, r, ZO_CALL_GRAD));
        BF(c, zo_track_inputs(rt, r, 1, one, &r_in));
        BF(c, zo_pre_forward(rt, a, ZO_CALL_GRAD));
        BF(c, zo_track_inputs(rt, a, 1, one, &a_in));
        BF(c, zo_post_forward(rt, a));
        BF(c, zo_track_outputs(rt, a, 1, one, &a_out));
        BF(c, zo_pre_forward(rt, b, ZO_CALL_GRAD));
        BF(c, zo_track_inputs(rt, b, 1, one, &b_in));
        BF(c, zo_param_access(rt, b, 1, &d, NULL));
        BF(c, zo_post_forward(rt, b));
        BF(c, zo_track_outputs(rt, b, 1, one, &b_out));
        BF(c, zo_pre_forward(rt, a, ZO_CALL_GRAD));
        BF(c, zo_track_inputs(rt, a, 1, one, &a2_in));
        BF(c, zo_post_forward(rt, a));
        BF(c, zo_track_outputs(rt, a, 1, one, &a2_out));
        BF(c, zo_post_forward(rt, r));
        BF(c, zo_track_outputs(rt, r, 1, one, &r_out));
        BF(c, zo_forward_end(rt, g));
        BF(c, zo_backward_begin(rt, g, 0));
        BF(c, zo_output_grad(rt, r_out));
        BF(c, zo_output_grad(rt, a2_out));
        BF(c, zo_input_grad(rt, a2_in));
        BF(c, zo_output_grad(rt, b_out));
        if (pol == ZO_GRADS_PER_CALL) BF(c, zo_param_access(rt, b, 3, &d, NULL));
        BF(c, zo_input_grad(rt, b_in));
        BF(c, zo_output_grad(rt, a_out));
        BF(c, zo_input_grad(rt, a_in));
        BF(c, zo_input_grad(rt, r_in));
        BF(c, zo_backward_end(rt, g));
        BF(c, zo_release_all(rt));
    }
    return 0;
}

static int run_backend_fail_loop(zo_grads_policy pol, int deferred) {
    volatile int bad = 0, surfaced = 0, absorbed = 0; /* live across longjmp */
    volatile uint64_t k;                              /* live across longjmp */
    for (k = 1; k < 10000; k++) {
        static bf_ctx c;
        memset(&c, 0, sizeof(c));
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        zo_host_testing ht = ZO_HOST_TESTING_INIT;
        hc.testing = &ht;
        hc.world_size = 3;
        hc.rank = 2;
        ht.deferred = deferred;
        HD_OK(NULL, zo_backend_host_create(&hc, &c.f.inner));
        c.wrapper.ops = &FB_OPS;
        c.wrapper.ctx = &c.f;
        zo_config cfg = ZO_CONFIG_INIT;
        cfg.grads_policy = pol;
        cfg.world_size = 3;
        cfg.rank = 2;
        cfg.param_persistence_threshold = 10;
        cfg.prefetch_bucket_size = 1000;
        cfg.backend = &c.wrapper;
        cfg.allocator = hd_allocator(&c.a);
        c.rt = HD_CREATE(cfg, &g_ev);
        c.f.fail_at = k;
        if (setjmp(c.jb) != 0) {
            if (bad++ < 3)
                print_message("policy %s%s k=%llu: %s\n", zo_policy_name(pol), deferred ? " (deferred)" : "",
                              (unsigned long long)k, c.problem);
            c.f.fail_at = 0;
            zo_runtime_destroy(c.rt);
            zo_backend_destroy(c.f.inner);
            continue;
        }
        int surfaced_now = bf_scenario(&c, pol);
        c.f.fail_at = 0; /* the backend works again */
        if (surfaced_now) {
            surfaced++;
            /* the exception unwinds: abort an open forward, then sweep */
            zo_stats st = HD_STATS(c.rt);
            if (st.forward_stack_depth > 0) {
                zo_status s = zo_forward_abort(c.rt, ZO_NO_MODULE);
                if (s != ZO_OK) bf_problem(&c, __LINE__, "zo_forward_abort(ZO_NO_MODULE)", "returned", s);
            }
            zo_status s = zo_release_all(c.rt);
            if (s != ZO_OK) bf_problem(&c, __LINE__, "zo_release_all", "returned", s);
            if (zo_check_consistency(c.rt) != ZO_OK) bf_problem(&c, __LINE__, "recovery", "inconsistent", ZO_ERR_STATE);
            st = HD_STATS(c.rt);
            if (st.forward_stack_depth == 0) {
                for (zo_param_id p = 0; p < st.n_params; p++) {
                    zo_param_info pi;
                    HD_OK(c.rt, zo_param_get_info(c.rt, p, &pi));
                    if (!pi.persistent && pi.status != ZO_PARAM_NOT_AVAILABLE)
                        bf_problem(&c, __LINE__, "after recovery", "param still gathered", ZO_ERR_STATE);
                }
                if (st.inflight_params != 0 || st.live_numel != st.persistent_live_numel)
                    bf_problem(&c, __LINE__, "after recovery", "live/in-flight accounting", ZO_ERR_STATE);
            }
        } else if (c.f.fired) {
            absorbed++; /* e.g. a failed prefetch the fetch redid */
        }
        int fired = c.f.fired;
        HD_OK(c.rt, zo_runtime_destroy(c.rt));
        HD_EQ(c.a.live, 0);
        zo_backend_destroy(c.f.inner);
        if (!fired) break; /* the k-th operation never happened: done */
    }
    print_message("policy %s%s: %llu backend operations, %d failures surfaced, %d absorbed, "
                  "%d mishandled\n",
                  zo_policy_name(pol), deferred ? " (deferred)" : "", (unsigned long long)(k - 1), surfaced, absorbed,
                  bad);
    assert_true(surfaced > 10);
    return bad;
}

static void test_backend_failures_per_call(void **state) {
    (void)state;
    int bad = run_backend_fail_loop(ZO_GRADS_PER_CALL, 0);
    bad += run_backend_fail_loop(ZO_GRADS_PER_CALL, 1);
    HD_EQ(bad, 0);
}

static void test_backend_failures_legacy(void **state) {
    (void)state;
    int bad = run_backend_fail_loop(ZO_GRADS_RESET_ON_FORWARD, 1);
    bad += run_backend_fail_loop(ZO_GRADS_INIT_AT_REGISTER, 0);
    HD_EQ(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_failures_per_call),
        cmocka_unit_test(test_backend_failures_legacy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
