/*
 * test_verify_collectives.c - zo_config.verify_collectives: the collective
 * fingerprint exchanged before every all-gather group (fetch, prefetch,
 * gather on access) and at the optimizer step (zo_release_all).
 *
 * A mock backend wraps a single-view host backend (W = 2, this runtime is
 * rank 0) and implements the version 2 exchange op itself: rank 0's slot
 * receives what the runtime sent, rank 1's slot receives
 *   - the same bytes (ranks agree), or
 *   - at exchange k, a fingerprint of a different collective (rank 1
 *     diverged), or
 *   - the fingerprints a real rank 1 runtime sent, recorded beforehand by
 *     running rank 1's (different) program against a recording mock.
 * It can also make exchange k fail (ZO_ERR_BACKEND, or the host world's
 * ZO_ERR_COLLECTIVE_MISMATCH).  It counts exchanges and all_gather_start
 * calls, so "nothing was issued" and "one exchange per collective" are
 * checked directly.
 *
 * Fingerprint layout used to read the mock's copies (runtime/util.c):
 * bytes 6 kind (1 all-gather, 2 step), 7 ids shown, 8 sequence number,
 * 16 total numel, 24 hash, 32 parameter count, 36.. first 7 ids (u32 LE).
 */
#include "hookdrv.h"

#include <pthread.h>
#include <unistd.h>

#define FP 64

static hd_events g_ev;

/* ------------------------------------------------------------------ */
/* mock backend                                                        */
/* ------------------------------------------------------------------ */

enum {
    MOCK_AGREE = 0,  /* rank 1 sends the same bytes */
    MOCK_ALTER_ID,   /* at diverge_at: rank 1 names a different first parameter */
    MOCK_ALTER_HASH, /* at diverge_at: only the hash differs (hidden difference) */
    MOCK_FAIL,       /* at diverge_at: the exchange returns fail_status */
    MOCK_REPLAY,     /* rank 1 answers script[i] at exchange i */
    MOCK_RECORD      /* this is rank 1: record what it sends; rank 0 agrees */
};

#define MAX_SCRIPT 512

typedef struct mock {
    zo_backend *inner;
    zo_backend self;
    zo_backend_ops ops;
    int mode;
    uint64_t diverge_at; /* 1-based exchange index; 0: never */
    zo_status fail_status;
    uint64_t exchanges;          /* exchange calls */
    uint64_t gathers;            /* all_gather_start calls */
    uint64_t gathers_at_diverge; /* gathers issued when exchange diverge_at ran */
    int diverged;
    uint8_t last_sent[FP];
    uint8_t diverged_sent[FP]; /* what rank 0 sent at the diverging exchange */
    uint8_t (*script)[FP];     /* REPLAY: rank 1's messages; RECORD: filled */
    size_t n_script;
    int bad_size; /* an exchange of a size other than 64 */
} mock;

#define M_INNER(m) ((m)->inner->ops)
#define M_ICTX(m)  ((m)->inner->ctx)

static int mk_world_size(void *ctx) {
    mock *m = ctx;
    return M_INNER(m)->world_size(M_ICTX(m));
}
static int mk_rank(void *ctx) {
    mock *m = ctx;
    return M_INNER(m)->rank(M_ICTX(m));
}
static zo_status mk_param_add(void *ctx, zo_param_id p, uint64_t n, uint32_t es, uint64_t part) {
    mock *m = ctx;
    return M_INNER(m)->param_add(M_ICTX(m), p, n, es, part);
}
static void mk_param_remove(void *ctx, zo_param_id p) {
    mock *m = ctx;
    M_INNER(m)->param_remove(M_ICTX(m), p);
}
static zo_status mk_full_alloc(void *ctx, zo_param_id p, size_t bytes, void **out) {
    mock *m = ctx;
    return M_INNER(m)->full_alloc(M_ICTX(m), p, bytes, out);
}
static void mk_full_free(void *ctx, zo_param_id p, void *buf) {
    mock *m = ctx;
    M_INNER(m)->full_free(M_ICTX(m), p, buf);
}
static zo_status mk_start(void *ctx, const zo_gather_item *it, size_t n, zo_work **out) {
    mock *m = ctx;
    m->gathers++;
    return M_INNER(m)->all_gather_start(M_ICTX(m), it, n, out);
}
static zo_status mk_wait(void *ctx, zo_work *w) {
    mock *m = ctx;
    return M_INNER(m)->wait(M_ICTX(m), w);
}
static zo_status mk_query(void *ctx, zo_work *w, int *done) {
    mock *m = ctx;
    return M_INNER(m)->query(M_ICTX(m), w, done);
}
static void mk_work_free(void *ctx, zo_work *w) {
    mock *m = ctx;
    M_INNER(m)->work_free(M_ICTX(m), w);
}
static const char *mk_last_error(void *ctx) {
    mock *m = ctx;
    if (m->diverged && m->mode == MOCK_FAIL) return "mock: exchange failed";
    return M_INNER(m)->last_error(M_ICTX(m));
}
static void mk_destroy(void *ctx) { (void)ctx; }

static void put32(uint8_t *o, uint32_t v) {
    for (int i = 0; i < 4; i++) o[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *o) {
    return (uint32_t)o[0] | (uint32_t)o[1] << 8 | (uint32_t)o[2] << 16 | (uint32_t)o[3] << 24;
}

static zo_status mk_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    mock *m = ctx;
    if (bytes != FP) {
        m->bad_size = 1;
        return ZO_ERR_INVALID_ARG;
    }
    m->exchanges++;
    memcpy(m->last_sent, send, FP);
    uint8_t *r = recv;
    int me = M_INNER(m)->rank(M_ICTX(m));
    uint8_t *mine = r + (size_t)me * FP, *other = r + (size_t)(1 - me) * FP;
    memcpy(mine, send, FP);
    memcpy(other, send, FP);
    if (m->mode == MOCK_RECORD) {
        if (m->n_script < MAX_SCRIPT) memcpy(m->script[m->n_script++], send, FP);
        return ZO_OK;
    }
    if (m->mode == MOCK_REPLAY) {
        if (m->exchanges <= m->n_script) memcpy(other, m->script[m->exchanges - 1], FP);
        return ZO_OK;
    }
    if (m->diverge_at == 0 || m->exchanges != m->diverge_at) return ZO_OK;
    m->diverged = 1;
    m->gathers_at_diverge = m->gathers;
    memcpy(m->diverged_sent, send, FP);
    switch (m->mode) {
    case MOCK_ALTER_ID:
        put32(other + 36, get32(other + 36) + 1000); /* rank 1 gathers a different parameter */
        if (other[7] == 0) other[7] = 1;
        return ZO_OK;
    case MOCK_ALTER_HASH: other[24] ^= 0x5A; return ZO_OK;
    case MOCK_FAIL: return m->fail_status;
    default: return ZO_OK;
    }
}

static void mock_init(mock *m, int world_size, int rank) {
    memset(m, 0, sizeof(*m));
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = world_size;
    hc.rank = rank;
    HD_OK(NULL, zo_backend_host_create(&hc, &m->inner));
    zo_backend_ops o = {
        .version = ZO_BACKEND_OPS_VERSION,
        .name = "mock-exchange",
        .world_size = mk_world_size,
        .rank = mk_rank,
        .param_add = mk_param_add,
        .param_remove = mk_param_remove,
        .full_alloc = mk_full_alloc,
        .full_free = mk_full_free,
        .all_gather_start = mk_start,
        .wait = mk_wait,
        .query = mk_query,
        .work_free = mk_work_free,
        .last_error = mk_last_error,
        .destroy = mk_destroy,
        .exchange = mk_exchange,
    };
    m->ops = o;
    m->self.ops = &m->ops;
    m->self.ctx = m;
}

static void mock_fini(mock *m) {
    zo_backend_destroy(m->inner);
    m->inner = NULL;
}

/* ------------------------------------------------------------------ */
/* last error event (hd_events drops the detail)                       */
/* ------------------------------------------------------------------ */

static char g_last_err_detail[512];
static zo_status g_last_err_status;
static uint64_t g_mismatch_events;

static void on_event(void *user, const zo_event *ev) {
    hd_on_event(user, ev);
    if (ev->kind == ZO_EV_ERROR) {
        g_last_err_status = ev->status;
        snprintf(g_last_err_detail, sizeof(g_last_err_detail), "%s", ev->detail ? ev->detail : "");
        if (ev->status == ZO_ERR_COLLECTIVE_MISMATCH) g_mismatch_events++;
    }
}

static zo_runtime *create_rt(zo_config cfg) {
    zo_runtime *rt = NULL;
    hd_events_reset(&g_ev);
    g_last_err_detail[0] = '\0';
    g_last_err_status = ZO_OK;
    g_mismatch_events = 0;
    cfg.on_event = on_event;
    cfg.event_user = &g_ev;
    HD_OK(NULL, zo_runtime_create(&cfg, &rt));
    assert_non_null(rt);
    return rt;
}

/* ------------------------------------------------------------------ */
/* the program: a small model over 3 steps, with persistence, prefetch  */
/* from the trace, gather on access and a step at the end of each        */
/* ------------------------------------------------------------------ */

typedef struct prog {
    zo_runtime *rt;
    zo_graph g;
    int in_fwd, in_bwd;
    zo_status failed; /* status of the entry point that failed */
    int failed_line;
    int release_alls; /* zo_release_all calls that reached the runtime */
} prog;

#define PC(pr, call)                                                                                                   \
    do {                                                                                                               \
        zo_status pc_s_ = (call);                                                                                      \
        if (pc_s_ != ZO_OK) {                                                                                          \
            (pr)->failed = pc_s_;                                                                                      \
            (pr)->failed_line = __LINE__;                                                                              \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

/* ids: r.w 0 (33, persistent), a.w 1 (1000), a.bias 2 (5, persistent),
 * b.w 3 (777), b.v 4 (600), c.w 5 (900) */
static void build_model(zo_runtime *rt) {
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id a = HD_MODULE(rt, r, "a");
    zo_module_id b = HD_MODULE(rt, r, "b");
    zo_module_id c = HD_MODULE(rt, r, "c");
    HD_PARAM(rt, r, "w", 33);
    hd_param_(rt, a, "w", 1000, 2, 0, __FILE__, __LINE__);
    HD_PARAM(rt, a, "bias", 5);
    HD_PARAM(rt, b, "w", 777);
    HD_PARAM(rt, b, "v", 600);
    HD_PARAM(rt, c, "w", 900);
    assert_int_equal(r, 0);
    assert_int_equal(c, 3);
}

/* one step; returns 1 when an entry point failed (pr->failed) */
static int run_step(prog *pr, zo_grads_policy pol) {
    zo_runtime *rt = pr->rt;
    const zo_module_id r = 0, a = 1, b = 2, c = 3;
    uint8_t one[1] = {1};
    zo_grad_handle r_in, r_out, a_in, a_out, b_in, b_out, c_in, c_out, a2_in, a2_out;
    const void *d;
    PC(pr, zo_forward_begin(rt, ZO_FWD_ROOT, &pr->g));
    pr->in_fwd = 1;
    PC(pr, zo_pre_forward(rt, r, ZO_CALL_GRAD));
    PC(pr, zo_track_inputs(rt, r, 1, one, &r_in));
    PC(pr, zo_pre_forward(rt, a, ZO_CALL_GRAD));
    PC(pr, zo_track_inputs(rt, a, 1, one, &a_in));
    PC(pr, zo_post_forward(rt, a));
    PC(pr, zo_track_outputs(rt, a, 1, one, &a_out));
    PC(pr, zo_pre_forward(rt, b, ZO_CALL_GRAD));
    PC(pr, zo_track_inputs(rt, b, 1, one, &b_in));
    PC(pr, zo_param_access(rt, b, 5, &d, NULL)); /* c.w read by b: gather on access */
    PC(pr, zo_post_forward(rt, b));
    PC(pr, zo_track_outputs(rt, b, 1, one, &b_out));
    PC(pr, zo_pre_forward(rt, c, ZO_CALL_GRAD));
    PC(pr, zo_track_inputs(rt, c, 1, one, &c_in));
    PC(pr, zo_post_forward(rt, c));
    PC(pr, zo_track_outputs(rt, c, 1, one, &c_out));
    PC(pr, zo_pre_forward(rt, a, ZO_CALL_GRAD));
    PC(pr, zo_track_inputs(rt, a, 1, one, &a2_in));
    PC(pr, zo_post_forward(rt, a));
    PC(pr, zo_track_outputs(rt, a, 1, one, &a2_out));
    PC(pr, zo_post_forward(rt, r));
    PC(pr, zo_track_outputs(rt, r, 1, one, &r_out));
    PC(pr, zo_forward_end(rt, pr->g));
    pr->in_fwd = 0;
    PC(pr, zo_backward_begin(rt, pr->g, 0));
    pr->in_bwd = 1;
    PC(pr, zo_output_grad(rt, r_out));
    PC(pr, zo_output_grad(rt, a2_out));
    PC(pr, zo_input_grad(rt, a2_in));
    PC(pr, zo_output_grad(rt, c_out));
    PC(pr, zo_input_grad(rt, c_in));
    PC(pr, zo_output_grad(rt, b_out));
    if (pol == ZO_GRADS_PER_CALL) PC(pr, zo_param_access(rt, b, 4, &d, NULL));
    PC(pr, zo_input_grad(rt, b_in));
    PC(pr, zo_output_grad(rt, a_out));
    PC(pr, zo_input_grad(rt, a_in));
    PC(pr, zo_input_grad(rt, r_in));
    PC(pr, zo_backward_end(rt, pr->g));
    pr->in_bwd = 0;
    pr->release_alls++;
    PC(pr, zo_release_all(rt));
    return 0;
}

static int run_steps(prog *pr, zo_grads_policy pol, int steps) {
    for (int s = 0; s < steps; s++)
        if (run_step(pr, pol)) return 1;
    return 0;
}

/* the framework after the exception: unwind the forward or end the
 * backward, then the step's sweep; everything must end released */
static void recover(prog *pr) {
    if (pr->in_fwd) {
        HD_OK(pr->rt, zo_forward_abort(pr->rt, ZO_NO_MODULE));
        pr->in_fwd = 0;
    }
    if (pr->in_bwd) {
        HD_OK(pr->rt, zo_backward_end(pr->rt, pr->g));
        pr->in_bwd = 0;
    }
    HD_OK(pr->rt, zo_release_all(pr->rt));
    HD_ALL_RELEASED(pr->rt);
}

static zo_config base_config(zo_grads_policy pol, mock *m, hd_alloc *a) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.grads_policy = pol;
    cfg.world_size = 2;
    cfg.rank = 0;
    cfg.param_persistence_threshold = 40; /* r.w and a.bias persistent */
    cfg.prefetch_bucket_size = 1200;
    cfg.max_reuse_distance = 0;
    cfg.backend = m ? &m->self : NULL;
    if (a) cfg.allocator = hd_allocator(a);
    cfg.verify_collectives = 1;
    return cfg;
}

/* ------------------------------------------------------------------ */
/* tests                                                               */
/* ------------------------------------------------------------------ */

/* Agreeing ranks: everything proceeds exactly as without the check, one
 * exchange per collective, and the check allocates once (at create). */
static void test_identical_fingerprints_proceed(void **state) {
    (void)state;
    static const zo_grads_policy pols[] = {ZO_GRADS_PER_CALL, ZO_GRADS_RESET_ON_FORWARD, ZO_GRADS_INIT_AT_REGISTER};
    for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
        uint64_t gathers[2], allocs[2], prefetches[2], exchanges[2];
        for (int verify = 0; verify < 2; verify++) {
            mock m;
            hd_alloc a;
            memset(&a, 0, sizeof(a));
            mock_init(&m, 2, 0);
            zo_config cfg = base_config(pols[i], &m, &a);
            cfg.verify_collectives = verify;
            prog pr;
            memset(&pr, 0, sizeof(pr));
            pr.rt = create_rt(cfg);
            build_model(pr.rt);
            int failed = run_steps(&pr, pols[i], 3);
            if (failed)
                fail_msg("policy %s verify %d: line %d: %s: %s", zo_policy_name(pols[i]), verify, pr.failed_line,
                         zo_strerror(pr.failed), zo_last_error(pr.rt));
            HD_ALL_RELEASED(pr.rt);
            zo_stats st = HD_STATS(pr.rt);
            gathers[verify] = m.gathers;
            prefetches[verify] = st.prefetches;
            allocs[verify] = a.calls;
            exchanges[verify] = m.exchanges;
            assert_int_equal(m.bad_size, 0);
            assert_int_equal(g_ev.per_kind[ZO_EV_ERROR], 0);
            if (verify) {
                /* one fingerprint per all-gather group and per optimizer step */
                HD_EQ(m.exchanges, m.gathers + (uint64_t)pr.release_alls);
                HD_EQ(pr.release_alls, 3);
            }
            HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
            HD_EQ(a.live, 0);
            mock_fini(&m);
        }
        HD_EQ(exchanges[0], 0);
        HD_EQ(gathers[1], gathers[0]);
        HD_EQ(prefetches[1], prefetches[0]);
        assert_true(gathers[0] >= 6);
        assert_true(prefetches[0] > 0); /* steps 2 and 3 prefetch from the trace */
        /* the receive buffer is the check's only allocation: none per collective */
        HD_EQ(allocs[1], allocs[0] + 1);
        print_message("policy %s: %llu all-gathers (%llu prefetched), %llu exchanges\n", zo_policy_name(pols[i]),
                      (unsigned long long)gathers[1], (unsigned long long)prefetches[1],
                      (unsigned long long)exchanges[1]);
    }
}

/* Rank 1 diverges at collective k, for every k of the program: the entry
 * point that issues collective k returns ZO_ERR_COLLECTIVE_MISMATCH (a
 * prefetch's mismatch is not swallowed), names both ranks, reports
 * ZO_EV_ERROR, issues nothing, leaves the runtime consistent with the
 * collective's parameters NOT_AVAILABLE; after recovery a later step runs. */
static void run_mismatch_loop(zo_grads_policy pol, int mode) {
    /* the number of collectives of 3 steps */
    mock m;
    mock_init(&m, 2, 0);
    prog pr;
    memset(&pr, 0, sizeof(pr));
    pr.rt = create_rt(base_config(pol, &m, NULL));
    build_model(pr.rt);
    assert_int_equal(run_steps(&pr, pol, 3), 0);
    uint64_t n = m.exchanges;
    HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
    mock_fini(&m);

    int n_prefetch = 0, n_step = 0, n_access = 0, n_bwd = 0;
    for (uint64_t k = 1; k <= n; k++) {
        mock_init(&m, 2, 0);
        memset(&pr, 0, sizeof(pr));
        pr.rt = create_rt(base_config(pol, &m, NULL));
        build_model(pr.rt);
        m.mode = mode;
        m.diverge_at = k;
        int failed = run_steps(&pr, pol, 3);
        if (!failed) fail_msg("%s k=%llu: the divergence was swallowed", zo_policy_name(pol), (unsigned long long)k);
        if (pr.failed != ZO_ERR_COLLECTIVE_MISMATCH)
            fail_msg("%s k=%llu line %d: %s (%s)", zo_policy_name(pol), (unsigned long long)k, pr.failed_line,
                     zo_strerror(pr.failed), zo_last_error(pr.rt));
        /* it surfaced at the k-th exchange, and nothing was issued after it */
        HD_EQ(m.exchanges, k);
        HD_EQ(m.gathers, m.gathers_at_diverge);
        const char *msg = zo_last_error(pr.rt);
        char want[64];
        snprintf(want, sizeof(want), "collective %llu: rank 0 ", (unsigned long long)(k - 1));
        if (!strstr(msg, want) || !strstr(msg, " vs rank 1 ") || !strstr(msg, "ZO_ERR_COLLECTIVE_MISMATCH"))
            fail_msg("k=%llu: message \"%s\" lacks \"%s\" / \" vs rank 1 \"", (unsigned long long)k, msg, want);
        if (mode == MOCK_ALTER_HASH) assert_non_null(strstr(msg, "parameter hash"));
        assert_string_equal(g_last_err_detail, msg);
        HD_EQ(g_last_err_status, ZO_ERR_COLLECTIVE_MISMATCH);
        HD_EQ(g_mismatch_events, 1);
        HD_CONSISTENT(pr.rt);
        if (m.diverged_sent[6] == 1) {
            /* the all-gather's parameters were not issued */
            unsigned shown = m.diverged_sent[7];
            for (unsigned i = 0; i < shown; i++) HD_RELEASED(pr.rt, get32(m.diverged_sent + 36 + 4 * i));
            assert_non_null(strstr(msg, "all-gather of"));
        } else {
            HD_EQ(m.diverged_sent[6], 2);
            assert_non_null(strstr(msg, "rank 0 step over 6 trainable params [0, 1, 2, 3, 4, 5] (3315 elements)"));
            n_step++;
        }
        if (strstr(msg, "prefetch")) n_prefetch++;
        if (pr.in_bwd) n_bwd++;
        if (strstr(msg, "rank 0 all-gather of 1 param [5] ")) n_access++;
        /* recovery, then a later legitimate step proceeds */
        m.mode = MOCK_AGREE;
        recover(&pr);
        memset(&pr.failed, 0, sizeof(pr.failed));
        if (run_step(&pr, pol))
            fail_msg("k=%llu: step after recovery failed at line %d: %s", (unsigned long long)k, pr.failed_line,
                     zo_last_error(pr.rt));
        HD_ALL_RELEASED(pr.rt);
        HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
        mock_fini(&m);
    }
    print_message("policy %s mode %d: %llu collectives, each mismatch surfaced (%d prefetch, %d step, %d in "
                  "backward, %d gather on access)\n",
                  zo_policy_name(pol), mode, (unsigned long long)n, n_prefetch, n_step, n_bwd, n_access);
    HD_EQ(n_step, 3);
    assert_true(n_prefetch >= 1);
    assert_true(n_bwd >= 1);
}

static void test_mismatch_at_every_collective_per_call(void **state) {
    (void)state;
    run_mismatch_loop(ZO_GRADS_PER_CALL, MOCK_ALTER_ID);
    run_mismatch_loop(ZO_GRADS_PER_CALL, MOCK_ALTER_HASH);
}

static void test_mismatch_at_every_collective_legacy(void **state) {
    (void)state;
    run_mismatch_loop(ZO_GRADS_RESET_ON_FORWARD, MOCK_ALTER_ID);
    run_mismatch_loop(ZO_GRADS_LAZY_INIT, MOCK_ALTER_ID);
}

/* Two real programs: rank 1's fingerprints are recorded from a rank 1
 * runtime that calls module c where rank 0 calls module b; rank 0 replays
 * them.  The message names both collectives exactly. */
static void two_rank_program(zo_runtime *rt, int rank, zo_status *first, int *fail_line) {
    zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
    zo_module_id m0 = HD_MODULE(rt, r, "m0");
    zo_module_id b = HD_MODULE(rt, r, "b");
    zo_module_id c = HD_MODULE(rt, r, "c");
    HD_PARAM(rt, m0, "w0", 10);
    HD_PARAM(rt, m0, "w1", 20);
    HD_PARAM(rt, m0, "w2", 30);
    HD_PARAM(rt, b, "w", 2048);
    HD_PARAM(rt, b, "v", 1024);
    HD_PARAM(rt, c, "w", 1024);
    zo_graph g;
    *first = ZO_OK;
    *fail_line = 0;
#define TR(call)                                                                                                       \
    do {                                                                                                               \
        zo_status tr_s_ = (call);                                                                                      \
        if (tr_s_) {                                                                                                   \
            *first = tr_s_;                                                                                            \
            *fail_line = __LINE__;                                                                                     \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)
    TR(zo_forward_begin(rt, ZO_FWD_ROOT, &g));
    TR(zo_pre_forward(rt, r, 0));
    TR(zo_pre_forward(rt, m0, 0));
    TR(zo_post_forward(rt, m0));
    zo_module_id e = rank == 0 ? b : c; /* data-dependent routing */
    TR(zo_pre_forward(rt, e, 0));
    TR(zo_post_forward(rt, e));
    TR(zo_post_forward(rt, r));
    TR(zo_forward_end(rt, g));
    TR(zo_release_all(rt));
#undef TR
}

static void test_two_programs_message(void **state) {
    (void)state;
    static uint8_t script[MAX_SCRIPT][FP];
    /* rank 1, recorded */
    mock m1;
    mock_init(&m1, 2, 1);
    m1.mode = MOCK_RECORD;
    m1.script = script;
    zo_config cfg = base_config(ZO_GRADS_PER_CALL, &m1, NULL);
    cfg.rank = 1;
    cfg.param_persistence_threshold = 0;
    cfg.prefetch_bucket_size = 0;
    zo_runtime *rt1 = create_rt(cfg);
    zo_status s1;
    int line1;
    two_rank_program(rt1, 1, &s1, &line1);
    HD_EQ(s1, ZO_OK);
    HD_EQ(m1.n_script, 3); /* m0, c, step */
    HD_OK(rt1, zo_runtime_destroy(rt1));
    mock_fini(&m1);

    /* rank 0 replays rank 1's answers */
    mock m0;
    mock_init(&m0, 2, 0);
    m0.mode = MOCK_REPLAY;
    m0.script = script;
    m0.n_script = m1.n_script;
    cfg = base_config(ZO_GRADS_PER_CALL, &m0, NULL);
    cfg.param_persistence_threshold = 0;
    cfg.prefetch_bucket_size = 0;
    zo_runtime *rt0 = create_rt(cfg);
    zo_status s0;
    int line0;
    two_rank_program(rt0, 0, &s0, &line0);
    HD_EQ(s0, ZO_ERR_COLLECTIVE_MISMATCH);
    assert_string_equal(zo_last_error(rt0),
                        "ZO_ERR_COLLECTIVE_MISMATCH: ranks issued different collectives: collective 1: "
                        "rank 0 all-gather of 2 params [3, 4] (3072 elements) vs rank 1 all-gather of 1 "
                        "param [5] (1024 elements)");
    HD_EQ(m0.gathers, 1); /* only m0's */
    HD_RELEASED(rt0, 3);
    HD_RELEASED(rt0, 4);
    HD_CONSISTENT(rt0);
    /* pre_forward failed before anything happened: b is not on the stack */
    zo_module_info mi = HD_MINFO(rt0, 2);
    HD_EQ(mi.open_calls, 0);
    HD_EQ(HD_STATS(rt0).forward_stack_depth, 1); /* r */
    HD_OK(rt0, zo_forward_abort(rt0, ZO_NO_MODULE));
    m0.mode = MOCK_AGREE;
    HD_OK(rt0, zo_release_all(rt0));
    HD_ALL_RELEASED(rt0);
    HD_OK(rt0, zo_runtime_destroy(rt0));
    mock_fini(&m0);
}

/* A long fingerprint list is abbreviated; a step whose parameter sets
 * differ names both, and a mismatched zo_release_all has no effect. */
static void test_message_abbreviates_and_step(void **state) {
    (void)state;
    static uint8_t script[MAX_SCRIPT][FP];
    for (int rank = 1; rank >= 0; rank--) {
        mock m;
        mock_init(&m, 2, rank);
        m.mode = rank == 1 ? MOCK_RECORD : MOCK_REPLAY;
        m.script = script;
        if (rank == 0) m.n_script = 2;
        zo_config cfg = base_config(ZO_GRADS_PER_CALL, &m, NULL);
        cfg.rank = rank;
        cfg.param_persistence_threshold = 0;
        cfg.prefetch_bucket_size = 0;
        zo_runtime *rt = create_rt(cfg);
        zo_module_id r = HD_MODULE(rt, ZO_NO_MODULE, "r");
        for (int i = 0; i < 10; i++) HD_PARAM(rt, r, NULL, 100 + (uint64_t)i);
        /* parameter 10: frozen on rank 1, trainable on rank 0.  The
         * all-gather of r's 11 parameters matches (same ids, numels, sizes);
         * the step's gradient collectives do not. */
        if (rank == 1)
            HD_FROZEN_PARAM(rt, r, "p10", 7);
        else
            HD_PARAM(rt, r, "p10", 7);
        zo_graph g;
        HD_OK(rt, zo_forward_begin(rt, ZO_FWD_ROOT, &g));
        HD_OK(rt, zo_pre_forward(rt, r, 0));
        if (rank == 1) {
            HD_OK(rt, zo_release_all(rt));
            HD_EQ(m.n_script, 2);
        } else {
            HD_ERR(rt, zo_release_all(rt), ZO_ERR_COLLECTIVE_MISMATCH);
            assert_string_equal(zo_last_error(rt),
                                "ZO_ERR_COLLECTIVE_MISMATCH: ranks issued different collectives: collective 1: "
                                "rank 0 step over 11 trainable params [0, 1, 2, 3, 4, 5, 6, ... +4 more] "
                                "(1052 elements) vs rank 1 step over 10 trainable params [0, 1, 2, 3, 4, 5, 6, "
                                "... +3 more] (1045 elements)");
            /* no effect: r still holds its gathered parameters */
            HD_AVAILABLE(rt, 0);
            HD_EQ(HD_PINFO(rt, 0).n_active, 1);
            HD_EQ(g_ev.per_kind[ZO_EV_RELEASE], 0);
            m.mode = MOCK_AGREE;
            HD_OK(rt, zo_release_all(rt));
            HD_EQ(HD_PINFO(rt, 0).n_active, 0);
        }
        HD_OK(rt, zo_post_forward(rt, r));
        HD_OK(rt, zo_forward_end(rt, g));
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
        mock_fini(&m);
    }
}

/* The exchange itself fails: ZO_ERR_BACKEND as for a failed all-gather
 * (best effort for a prefetch); a host world's ZO_ERR_COLLECTIVE_MISMATCH
 * from the exchange is the hook's mismatch. */
static void test_exchange_failures(void **state) {
    (void)state;
    mock m;
    mock_init(&m, 2, 0);
    prog pr;
    memset(&pr, 0, sizeof(pr));
    pr.rt = create_rt(base_config(ZO_GRADS_PER_CALL, &m, NULL));
    build_model(pr.rt);
    assert_int_equal(run_steps(&pr, ZO_GRADS_PER_CALL, 3), 0);
    uint64_t n = m.exchanges;
    HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
    mock_fini(&m);

    static const zo_status codes[] = {ZO_ERR_BACKEND, ZO_ERR_NOMEM, ZO_ERR_COLLECTIVE_MISMATCH, ZO_ERR_STATE};
    for (size_t ci = 0; ci < sizeof(codes) / sizeof(codes[0]); ci++) {
        int absorbed = 0;
        for (uint64_t k = 1; k <= n; k++) {
            mock_init(&m, 2, 0);
            memset(&pr, 0, sizeof(pr));
            pr.rt = create_rt(base_config(ZO_GRADS_PER_CALL, &m, NULL));
            build_model(pr.rt);
            m.mode = MOCK_FAIL;
            m.fail_status = codes[ci];
            m.diverge_at = k;
            int failed = run_steps(&pr, ZO_GRADS_PER_CALL, 3);
            zo_status want = codes[ci] == ZO_ERR_COLLECTIVE_MISMATCH ? ZO_ERR_COLLECTIVE_MISMATCH
                             : codes[ci] == ZO_ERR_NOMEM             ? ZO_ERR_NOMEM
                                                                     : ZO_ERR_BACKEND;
            if (!failed) {
                /* only a prefetch is best effort, and only for a non-mismatch */
                assert_true(codes[ci] != ZO_ERR_COLLECTIVE_MISMATCH);
                assert_non_null(strstr(g_last_err_detail, "prefetch"));
                HD_EQ(g_last_err_status, want);
                absorbed++;
            } else {
                HD_EQ(pr.failed, want);
                HD_EQ(m.exchanges, k);
                HD_EQ(m.gathers, m.gathers_at_diverge);
                assert_non_null(strstr(zo_last_error(pr.rt), "mock: exchange failed"));
                assert_non_null(strstr(zo_last_error(pr.rt), "fingerprint exchange"));
                HD_CONSISTENT(pr.rt);
                m.mode = MOCK_AGREE;
                recover(&pr);
            }
            HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
            mock_fini(&m);
        }
        if (codes[ci] == ZO_ERR_COLLECTIVE_MISMATCH)
            HD_EQ(absorbed, 0);
        else
            assert_true(absorbed >= 1);
    }
}

/* A backend that hands back something other than this rank's own message
 * at its offset is broken: ZO_ERR_BACKEND, nothing issued. */
static zo_status bad_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    (void)ctx;
    memset(recv, 0, 2 * bytes);
    (void)send;
    return ZO_OK;
}

static void test_broken_exchange(void **state) {
    (void)state;
    mock m;
    mock_init(&m, 2, 0);
    m.ops.exchange = bad_exchange;
    prog pr;
    memset(&pr, 0, sizeof(pr));
    pr.rt = create_rt(base_config(ZO_GRADS_PER_CALL, &m, NULL));
    build_model(pr.rt);
    assert_int_equal(run_step(&pr, ZO_GRADS_PER_CALL), 1);
    HD_EQ(pr.failed, ZO_ERR_BACKEND);
    HD_EQ(m.gathers, 0);
    assert_non_null(strstr(zo_last_error(pr.rt), "own message"));
    HD_CONSISTENT(pr.rt);
    HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
    mock_fini(&m);
}

/* Rank 1 sends bytes that are no fingerprint at all. */
static zo_status garbage_exchange(void *ctx, const void *send, size_t bytes, void *recv) {
    (void)ctx;
    memcpy(recv, send, bytes);
    memset((uint8_t *)recv + bytes, 0xEE, bytes);
    return ZO_OK;
}

static void test_garbage_fingerprint(void **state) {
    (void)state;
    mock m;
    mock_init(&m, 2, 0);
    m.ops.exchange = garbage_exchange;
    prog pr;
    memset(&pr, 0, sizeof(pr));
    pr.rt = create_rt(base_config(ZO_GRADS_PER_CALL, &m, NULL));
    build_model(pr.rt);
    assert_int_equal(run_step(&pr, ZO_GRADS_PER_CALL), 1);
    HD_EQ(pr.failed, ZO_ERR_COLLECTIVE_MISMATCH);
    assert_non_null(strstr(zo_last_error(pr.rt), "vs rank 1 an unrecognised fingerprint (first bytes eeeeeeee"));
    HD_EQ(m.gathers, 0);
    HD_CONSISTENT(pr.rt);
    HD_OK(pr.rt, zo_runtime_destroy(pr.rt));
    mock_fini(&m);
}

/* zo_runtime_create: the check needs an exchange op. */
static void test_unsupported_backend(void **state) {
    (void)state;
    mock m;
    mock_init(&m, 2, 0);
    zo_runtime *rt = NULL;
    zo_config cfg = base_config(ZO_GRADS_PER_CALL, &m, NULL);
    /* version 1 vtable: no exchange */
    m.ops.version = 1;
    HD_ERR(NULL, zo_runtime_create(&cfg, &rt), ZO_ERR_UNSUPPORTED);
    assert_null(rt);
    cfg.verify_collectives = 0;
    HD_OK(NULL, zo_runtime_create(&cfg, &rt)); /* a version 1 backend without the check */
    HD_OK(rt, zo_runtime_destroy(rt));
    /* version 2 without the op */
    m.ops.version = 2;
    m.ops.exchange = NULL;
    cfg.verify_collectives = 1;
    rt = NULL;
    HD_ERR(NULL, zo_runtime_create(&cfg, &rt), ZO_ERR_UNSUPPORTED);
    assert_null(rt);
    /* not a boolean */
    m.ops.exchange = mk_exchange;
    cfg.verify_collectives = 2;
    HD_ERR(NULL, zo_runtime_create(&cfg, &rt), ZO_ERR_INVALID_ARG);
    cfg.verify_collectives = -1;
    HD_ERR(NULL, zo_runtime_create(&cfg, &rt), ZO_ERR_INVALID_ARG);
    mock_fini(&m);

    /* the runtime's own host backend: supported exactly when it has the op */
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 2;
    zo_backend *hb = NULL;
    HD_OK(NULL, zo_backend_host_create(&hc, &hb));
    int host_has = hb->ops->version >= 2 && hb->ops->exchange != NULL;
    zo_backend_destroy(hb);
    hd_alloc a;
    memset(&a, 0, sizeof(a));
    cfg = base_config(ZO_GRADS_PER_CALL, NULL, &a);
    rt = NULL;
    zo_status s = zo_runtime_create(&cfg, &rt);
    HD_EQ(s, host_has ? ZO_OK : ZO_ERR_UNSUPPORTED);
    if (host_has) {
        /* single view: every rank is this rank, so everything agrees */
        prog pr;
        memset(&pr, 0, sizeof(pr));
        pr.rt = rt;
        build_model(rt);
        assert_int_equal(run_steps(&pr, ZO_GRADS_PER_CALL, 2), 0);
        HD_ALL_RELEASED(rt);
        HD_OK(rt, zo_runtime_destroy(rt));
    } else {
        assert_null(rt);
    }
    HD_EQ(a.live, 0);
    print_message("default host backend %s the exchange op\n", host_has ? "has" : "does not have yet");
}

/* Allocation failure of the receive buffer at create: ZO_ERR_NOMEM, no leak. */
static void test_create_nomem(void **state) {
    (void)state;
    mock m;
    mock_init(&m, 2, 0);
    for (uint64_t k = 1; k < 10; k++) {
        hd_alloc a;
        memset(&a, 0, sizeof(a));
        a.fail_at = k;
        zo_config cfg = base_config(ZO_GRADS_PER_CALL, &m, &a);
        zo_runtime *rt = NULL;
        zo_status s = zo_runtime_create(&cfg, &rt);
        if (s == ZO_OK) {
            HD_OK(rt, zo_runtime_destroy(rt));
            HD_EQ(a.live, 0);
            break;
        }
        HD_EQ(s, ZO_ERR_NOMEM);
        assert_null(rt);
        HD_EQ(a.live, 0);
    }
    mock_fini(&m);
}

/* ------------------------------------------------------------------ */
/* two runtimes on one host world, one thread each                     */
/* ------------------------------------------------------------------ */

typedef struct rank_run {
    int rank;
    zo_host_world *world;
    int diverge;     /* rank 1: calls c where rank 0 calls b in step 2 */
    int leave_after; /* leave (destroy) after this many steps; 0: never */
    zo_status first; /* first error of the program */
    int first_step;
    char msg[512];
    zo_status recovery; /* zo_release_all after the error */
    int steps_done;
    uint64_t bytes_checked, bad_bytes;
    int setup_failed;
} rank_run;

/* reads p through m and compares every byte with the original tensor */
static zo_status world_access(zo_runtime *rt, rank_run *rr, zo_module_id m, zo_param_id p) {
    const void *d = NULL;
    size_t bytes = 0;
    zo_status s = zo_param_access(rt, m, p, &d, &bytes);
    if (s) return s;
    for (size_t i = 0; i < bytes; i++) rr->bad_bytes += ((const uint8_t *)d)[i] != zo_host_param_byte(p, i);
    rr->bytes_checked += bytes;
    return ZO_OK;
}

#define WR(call)                                                                                                       \
    do {                                                                                                               \
        zo_status wr_s_ = (call);                                                                                      \
        if (wr_s_) return wr_s_;                                                                                       \
    } while (0)

static zo_status world_step(zo_runtime *rt, rank_run *rr, int step) {
    const zo_module_id r = 0, a = 1, b = 2, c = 3;
    uint8_t one[1] = {1};
    zo_grad_handle r_in, r_out, a_in, a_out, e_in, e_out;
    zo_graph g;
    zo_module_id e = (rr->diverge && step == 1) ? c : b; /* data-dependent routing */
    WR(zo_forward_begin(rt, ZO_FWD_ROOT, &g));
    WR(zo_pre_forward(rt, r, ZO_CALL_GRAD));
    WR(zo_track_inputs(rt, r, 1, one, &r_in));
    WR(zo_pre_forward(rt, a, ZO_CALL_GRAD));
    WR(zo_track_inputs(rt, a, 1, one, &a_in));
    WR(world_access(rt, rr, a, 1));
    WR(zo_post_forward(rt, a));
    WR(zo_track_outputs(rt, a, 1, one, &a_out));
    WR(zo_pre_forward(rt, e, ZO_CALL_GRAD));
    WR(zo_track_inputs(rt, e, 1, one, &e_in));
    WR(world_access(rt, rr, e, e == b ? 3 : 5));
    WR(zo_post_forward(rt, e));
    WR(zo_track_outputs(rt, e, 1, one, &e_out));
    WR(zo_post_forward(rt, r));
    WR(zo_track_outputs(rt, r, 1, one, &r_out));
    WR(zo_forward_end(rt, g));
    WR(zo_backward_begin(rt, g, 0));
    WR(zo_output_grad(rt, r_out));
    WR(zo_output_grad(rt, e_out));
    WR(world_access(rt, rr, e, e == b ? 4 : 5));
    WR(zo_input_grad(rt, e_in));
    WR(zo_output_grad(rt, a_out));
    WR(zo_input_grad(rt, a_in));
    WR(zo_input_grad(rt, r_in));
    WR(zo_backward_end(rt, g));
    WR(zo_release_all(rt));
    return ZO_OK;
}

static void *rank_main(void *arg) {
    rank_run *rr = arg;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = 2;
    hc.rank = rr->rank;
    hc.world = rr->world;
    zo_backend *be = NULL;
    if (zo_backend_host_create(&hc, &be)) {
        rr->setup_failed = 1;
        return NULL;
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = 2;
    cfg.rank = rr->rank;
    cfg.backend = be;
    cfg.param_persistence_threshold = 40;
    cfg.prefetch_bucket_size = 1200;
    cfg.max_reuse_distance = 0;
    cfg.verify_collectives = 1;
    zo_runtime *rt = NULL;
    if (zo_runtime_create(&cfg, &rt)) {
        rr->setup_failed = 1;
        zo_backend_destroy(be);
        return NULL;
    }
    zo_module_id r, a, b, c;
    zo_param_id p;
    int bad = zo_module_register(rt, ZO_NO_MODULE, "r", 0, &r) || zo_module_register(rt, r, "a", 0, &a) ||
              zo_module_register(rt, r, "b", 0, &b) || zo_module_register(rt, r, "c", 0, &c) ||
              zo_param_register(rt, r, "w", 33, 4, 0, &p) || zo_param_register(rt, a, "w", 1000, 2, 0, &p) ||
              zo_param_register(rt, a, "bias", 5, 4, 0, &p) || zo_param_register(rt, b, "w", 777, 4, 0, &p) ||
              zo_param_register(rt, b, "v", 600, 4, 0, &p) || zo_param_register(rt, c, "w", 900, 4, 0, &p);
    if (bad) rr->setup_failed = 1;
    for (int step = 0; step < 3 && !bad; step++) {
        if (rr->leave_after && step == rr->leave_after) break; /* this rank raised: it leaves */
        zo_status s = world_step(rt, rr, step);
        if (s) {
            rr->first = s;
            rr->first_step = step;
            snprintf(rr->msg, sizeof(rr->msg), "%s", zo_last_error(rt));
            /* the exception unwinds; the framework still calls the step's sweep */
            zo_stats st;
            zo_get_stats(rt, &st);
            if (st.forward_stack_depth) (void)zo_forward_abort(rt, ZO_NO_MODULE);
            rr->recovery = zo_release_all(rt);
            break;
        }
        rr->steps_done++;
    }
    zo_runtime_destroy(rt);
    zo_backend_destroy(be); /* the rank leaves the world */
    return NULL;
}

static void run_world(rank_run rr[2], int diverge, int leave_after) {
    zo_host_world *w = NULL;
    HD_OK(NULL, zo_host_world_create(2, NULL, &w));
    pthread_t th[2];
    for (int r = 0; r < 2; r++) {
        memset(&rr[r], 0, sizeof(rr[r]));
        rr[r].rank = r;
        rr[r].world = w;
        rr[r].diverge = diverge && r == 1;
        rr[r].leave_after = r == 1 ? leave_after : 0;
    }
    alarm(60); /* watchdog: a hang fails the test instead of blocking ctest */
    for (int r = 0; r < 2; r++) assert_int_equal(pthread_create(&th[r], NULL, rank_main, &rr[r]), 0);
    for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
    alarm(0);
    char report[512];
    zo_status rep = zo_host_world_report(w, report, sizeof(report));
    if (leave_after) {
        HD_EQ(rep, ZO_ERR_COLLECTIVE_MISMATCH); /* the world saw a rank that never arrives */
        print_message("world report: %s\n", report);
    } else {
        /* every collective matched: the fingerprints caught the divergence
         * before any all-gather differed */
        if (rep != ZO_OK) fail_msg("world report: %s", report);
    }
    HD_OK(NULL, zo_host_world_destroy(w));
    for (int r = 0; r < 2; r++) {
        HD_EQ(rr[r].setup_failed, 0);
        HD_EQ(rr[r].bad_bytes, 0); /* every gathered tensor equals the full parameter */
        assert_true(rr[r].bytes_checked > 0);
    }
}

static void test_world_agreeing_ranks(void **state) {
    (void)state;
    rank_run rr[2];
    run_world(rr, 0, 0);
    for (int r = 0; r < 2; r++) {
        HD_EQ(rr[r].first, ZO_OK);
        HD_EQ(rr[r].steps_done, 3);
    }
}

static void test_world_divergent_rank(void **state) {
    (void)state;
    rank_run rr[2];
    run_world(rr, 1, 0);
    for (int r = 0; r < 2; r++) {
        if (rr[r].first != ZO_ERR_COLLECTIVE_MISMATCH)
            fail_msg("rank %d: %s (%s)", r, zo_strerror(rr[r].first), rr[r].msg);
        HD_EQ(rr[r].first_step, 1);
        HD_EQ(rr[r].steps_done, 1);
        /* both sides named: rank 1's side is its call of c */
        print_message("rank %d: %s\n", r, rr[r].msg);
        assert_non_null(strstr(rr[r].msg, ": rank 0 all-gather of "));
        assert_non_null(strstr(rr[r].msg, " vs rank 1 all-gather of 1 param [5] (900 elements)"));
        /* the sweep after the error is a matched collective again */
        HD_EQ(rr[r].recovery, ZO_OK);
    }
    /* the same text on both ranks, up to where each noticed it */
    char *cut0 = strstr(rr[0].msg, " (this rank:"), *cut1 = strstr(rr[1].msg, " (this rank:");
    if (cut0) *cut0 = '\0';
    if (cut1) *cut1 = '\0';
    assert_string_equal(rr[0].msg, rr[1].msg);
}

static void test_world_rank_leaves(void **state) {
    (void)state;
    rank_run rr[2];
    run_world(rr, 0, 1);
    HD_EQ(rr[1].first, ZO_OK);
    HD_EQ(rr[1].steps_done, 1);
    /* rank 0's next fingerprint exchange would wait forever: an error */
    HD_EQ(rr[0].first, ZO_ERR_COLLECTIVE_MISMATCH);
    HD_EQ(rr[0].first_step, 1);
    print_message("rank 0: %s\n", rr[0].msg);
    assert_non_null(strstr(rr[0].msg, "fingerprint exchange before a"));
    assert_non_null(strstr(rr[0].msg, "would hang"));
    HD_EQ(rr[0].recovery, ZO_ERR_COLLECTIVE_MISMATCH);
    print_message("rank 0: %s\n", rr[0].msg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_fingerprints_proceed),
        cmocka_unit_test(test_mismatch_at_every_collective_per_call),
        cmocka_unit_test(test_mismatch_at_every_collective_legacy),
        cmocka_unit_test(test_two_programs_message),
        cmocka_unit_test(test_message_abbreviates_and_step),
        cmocka_unit_test(test_exchange_failures),
        cmocka_unit_test(test_broken_exchange),
        cmocka_unit_test(test_garbage_fingerprint),
        cmocka_unit_test(test_unsupported_backend),
        cmocka_unit_test(test_create_nomem),
        cmocka_unit_test(test_world_agreeing_ranks),
        cmocka_unit_test(test_world_divergent_rank),
        cmocka_unit_test(test_world_rank_leaves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
