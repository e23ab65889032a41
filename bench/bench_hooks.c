/*
 * bench_hooks - control-plane cost per hook event against the number of
 * modules (benchmark 1 of docs/benchmarks.md).
 *
 * Model: a root module, then blocks of one "layer" module with three leaf
 * children (DFS registration order, DeepSpeed's module.id), every module
 * owning one trainable parameter of PARAM_NUMEL elements (above the default
 * stage3_param_persistence_threshold of 1e5, so nothing is persistent).
 * Leftover modules (N-1 not a multiple of 4) are leaves under the root.
 *
 * One training step, in the order PyTorch 1.13 fires DeepSpeed's hooks
 * with the single-device engine order:
 *   forward:  for every call m(x): A zo_pre_forward, D zo_track_inputs(1
 *             input requiring grad), children, own op (zo_param_access of
 *             m's parameter), B zo_post_forward, C zo_track_outputs(1 output)
 *   backward: for every call, nearest the loss first: PreBackward
 *             zo_output_grad, own op's backward (zo_param_access), the
 *             post-accumulate-grad hook zo_param_grad_ready, children in
 *             reverse, then PostBackward zo_input_grad
 *   zo_backward_end, zo_release_all (optimizer step)
 *
 * An "event" is one of the seven hook firings per module per step (A, D,
 * B, C, pre-backward, post-backward, grad-ready) - the same count the
 * PyTorch baseline (bench/torch_hooks_baseline.py) uses.  The time also
 * includes the two zo_param_access calls per module and the per-step
 * calls (forward_begin/end, backward_begin/end, release_all).
 *
 * Runtime: per-call policy (the default), DeepSpeed's default thresholds
 * (prefetch on: stage3_prefetch_bucket_size 5e7), W = 8, a host backend
 * with no_copy = 1 and max_bytes_per_param = 64 so that neither data
 * movement nor large allocations are measured (no_copy alone still
 * allocates full buffers).  Step 1 records the trace; steps are then timed
 * with a COMPLETE trace (checked, as is prefetching and that every step
 * ends released).
 *
 * Repetitions are interleaved: every model is built first (all runtimes
 * live at once), then repetition r of each N runs in turn, each after one
 * untimed step of its own model (so it starts from its own state in the
 * cache, not the previous model's).  On a shared machine whose speed
 * drifts over minutes, every N then sees the same drift, and the ratios
 * between N that the goals are stated in do not absorb it.
 *
 * Output (stdout, one line per repetition, tab-separated; the lines of
 * one N are not contiguous):
 *   hooks <N> <rep> <cpu_ns_per_event> <wall_ns_per_event> <steps> <events>
 *         <prefetches/step> <blocking_waits/step> <gathers/step>
 * (gathers counts every all-gathered parameter, prefetched or not: the cost
 * per gather is cpu_ns_per_event * events / (gathers/step * steps))
 * (CPU time of the thread, CLOCK_THREAD_CPUTIME_ID, is the figure reported;
 * wall time is printed for reference.)
 * Progress goes to stderr.  Exit 0, or 1 with a message if a runtime call
 * failed or a sanity check did not hold.
 *
 * --max-live and --reuse set stage3_max_live_parameters and
 * stage3_max_reuse_distance (elements).  With DeepSpeed's defaults (1e9
 * both) the regime changes with N: a model of <= 1e9 elements (N <= 1e3
 * here) keeps every parameter gathered from forward to backward, a larger
 * one releases and re-gathers, about twice the gathers per event.
 * "--reuse 0 --max-live 5e7" gives every N the same regime (released at
 * every post-hook, <= 50 parameters live), the fair O(1) comparison.
 *
 * usage: bench_hooks [--modules N,N,...] [--reps R] [--min-events E] [--diag] [--max-live NUMEL] [--reuse NUMEL]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zoffload.h>
#include <zoffload_backend.h>
#include <zoffload_testing.h>

#define PARAM_NUMEL       1000000ull
#define EVENTS_PER_MODULE 7

static zo_runtime *g_rt;

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        zo_status s_ = (call);                                                                                         \
        if (s_ != ZO_OK) {                                                                                             \
            fprintf(stderr, "bench_hooks: %s: %s: %s\n", #call, zo_strerror(s_), zo_last_error(g_rt));                 \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this thread: on a shared, overloaded machine wall time
 * counts the time other processes hold the core; CPU time does not. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct model {
    uint32_t n;                         /* modules */
    uint32_t *first_child, *n_children; /* children of module i are ids first_child[i] .. +n_children[i]-1
                                           only for the root's direct block children we keep a list */
    uint32_t *root_kids;                /* direct children of the root, in order */
    uint32_t n_root_kids;
    zo_param_id *param;           /* param of module i */
    zo_grad_handle *in_h, *out_h; /* per module (one call per module per step) */
} model;

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "bench_hooks: out of memory\n");
        exit(1);
    }
    return p;
}

static void build(model *md, uint32_t n) {
    md->n = n;
    md->first_child = xcalloc(n, sizeof(uint32_t));
    md->n_children = xcalloc(n, sizeof(uint32_t));
    md->root_kids = xcalloc(n, sizeof(uint32_t));
    md->param = xcalloc(n, sizeof(zo_param_id));
    md->in_h = xcalloc(n, sizeof(zo_grad_handle));
    md->out_h = xcalloc(n, sizeof(zo_grad_handle));
    zo_module_id root, id;
    CHECK(zo_module_register(g_rt, ZO_NO_MODULE, "model", 0, &root));
    uint32_t next = 1, nblocks = (n - 1) / 4;
    for (uint32_t b = 0; b < nblocks; b++) {
        zo_module_id blk;
        CHECK(zo_module_register(g_rt, root, NULL, 0, &blk));
        md->root_kids[md->n_root_kids++] = blk;
        md->first_child[blk] = blk + 1;
        md->n_children[blk] = 3;
        for (int k = 0; k < 3; k++) CHECK(zo_module_register(g_rt, blk, NULL, 0, &id));
        next += 4;
    }
    while (next < n) {
        CHECK(zo_module_register(g_rt, root, NULL, 0, &id));
        md->root_kids[md->n_root_kids++] = id;
        next++;
    }
    for (uint32_t m = 0; m < n; m++) CHECK(zo_param_register(g_rt, m, "weight", PARAM_NUMEL, 4, 0, &md->param[m]));
}

static const uint8_t k_yes = 1;

/* --diag: the in-flight registry and live numel high-water marks, sampled
 * after every hook (slow; not used for timing), per model */
static int g_diag;
static unsigned long long g_max_live_cfg;     /* --max-live: stage3_max_live_parameters (0: default 1e9) */
static long long g_reuse_cfg = -1;            /* --reuse: stage3_max_reuse_distance (-1: default 1e9) */
static uint64_t *g_max_inflight, *g_max_live; /* the current model's marks */
static void diag(void) {
    zo_stats st;
    if (!g_diag || zo_get_stats(g_rt, &st) != ZO_OK) return;
    if (st.inflight_params > *g_max_inflight) *g_max_inflight = st.inflight_params;
    if (st.live_numel > *g_max_live) *g_max_live = st.live_numel;
}

static void fwd_call(model *md, uint32_t m) {
    const void *data;
    CHECK(zo_pre_forward(g_rt, m, ZO_CALL_GRAD)); /* A */
    diag();
    CHECK(zo_track_inputs(g_rt, m, 1, &k_yes, &md->in_h[m])); /* D */
    if (m == 0)
        for (uint32_t i = 0; i < md->n_root_kids; i++) fwd_call(md, md->root_kids[i]);
    else
        for (uint32_t i = 0; i < md->n_children[m]; i++) fwd_call(md, md->first_child[m] + i);
    CHECK(zo_param_access(g_rt, m, md->param[m], &data, NULL)); /* own op */
    CHECK(zo_post_forward(g_rt, m));                            /* B */
    CHECK(zo_track_outputs(g_rt, m, 1, &k_yes, &md->out_h[m])); /* C */
}

static void bwd_call(model *md, uint32_t m) {
    const void *data;
    CHECK(zo_output_grad(g_rt, md->out_h[m])); /* PreBackward */
    diag();
    CHECK(zo_param_access(g_rt, m, md->param[m], &data, NULL)); /* own op's backward */
    CHECK(zo_param_grad_ready(g_rt, md->param[m]));
    if (m == 0)
        for (uint32_t i = md->n_root_kids; i-- > 0;) bwd_call(md, md->root_kids[i]);
    else
        for (uint32_t i = md->n_children[m]; i-- > 0;) bwd_call(md, md->first_child[m] + i);
    CHECK(zo_input_grad(g_rt, md->in_h[m])); /* PostBackward */
    diag();
}

static void step(model *md) {
    zo_graph g;
    CHECK(zo_forward_begin(g_rt, ZO_FWD_ROOT, &g));
    fwd_call(md, 0);
    CHECK(zo_forward_end(g_rt, g));
    CHECK(zo_backward_begin(g_rt, g, 0));
    bwd_call(md, 0);
    CHECK(zo_backward_end(g_rt, g));
    CHECK(zo_release_all(g_rt));
}

/* the timed steps (a separate function so that a profiler can collect
 * only them: valgrind --tool=callgrind --toggle-collect=timed_step) */
__attribute__((noinline)) static void timed_step(model *md) { step(md); }

static void fail(const char *what, uint32_t n) {
    fprintf(stderr, "bench_hooks: N=%u: sanity check failed: %s\n", n, what);
    exit(1);
}

/* one model size: its backend, runtime and model, all live until the end */
typedef struct hcase {
    uint32_t n;
    zo_backend *be;
    zo_runtime *rt;
    model md;
    int steps;
    double ev_step;
    uint64_t max_inflight, max_live;
} hcase;

/* the current model: what the hook functions call (g_rt) and diag() marks */
static void use_case(hcase *hc) {
    g_rt = hc->rt;
    g_max_inflight = &hc->max_inflight;
    g_max_live = &hc->max_live;
}

static int case_setup(hcase *hc, uint32_t n, int reps, double min_events) {
    memset(hc, 0, sizeof *hc);
    hc->n = n;
    zo_host_config hcfg = ZO_HOST_CONFIG_INIT;
    zo_host_testing ht = ZO_HOST_TESTING_INIT;
    hcfg.testing = &ht;
    hcfg.world_size = 8;
    ht.no_copy = 1;
    ht.max_bytes_per_param = 64;
    if (zo_backend_host_create(&hcfg, &hc->be) != ZO_OK) {
        fprintf(stderr, "bench_hooks: host backend create failed\n");
        return 1;
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = 8;
    cfg.backend = hc->be;
    if (g_max_live_cfg) cfg.max_live_parameters = g_max_live_cfg;
    if (g_reuse_cfg >= 0) cfg.max_reuse_distance = (uint64_t)g_reuse_cfg;
    g_rt = NULL;
    CHECK(zo_runtime_create(&cfg, &hc->rt));
    use_case(hc);
    build(&hc->md, n);

    double t0 = now_s();
    step(&hc->md); /* records the trace */
    step(&hc->md); /* first step with a complete trace (warm-up) */
    double warm = now_s() - t0;
    zo_trace_info ti;
    CHECK(zo_get_trace_info(g_rt, 0, &ti));
    if (ti.mode != ZO_TRACE_COMPLETE) fail("trace not COMPLETE after two steps", n);

    hc->ev_step = (double)n * EVENTS_PER_MODULE;
    hc->steps = (int)(min_events / hc->ev_step + 0.999);
    if (hc->steps < 2) hc->steps = 2;
    fprintf(stderr, "[bench] hooks: N=%u modules, %d steps x %d reps (%.0f events/step, warm-up %.2f s)\n", n,
            hc->steps, reps, hc->ev_step, warm);
    return 0;
}

/* repetition r of one model: an untimed step, then the timed ones */
static void case_rep(hcase *hc, int r) {
    use_case(hc);
    model *md = &hc->md;
    uint32_t n = hc->n;
    int steps = hc->steps;
    step(md);
    zo_stats s0, s1;
    CHECK(zo_get_stats(g_rt, &s0));
    double a = now_s(), ac = cpu_s();
    for (int k = 0; k < steps; k++) timed_step(md);
    double dt = now_s() - a, dtc = cpu_s() - ac;
    CHECK(zo_get_stats(g_rt, &s1));
    if (s1.trace_invalidations != s0.trace_invalidations) fail("trace invalidated", n);
    if (s1.prefetches == s0.prefetches) fail("no prefetch with a complete trace", n);
    if (s1.live_numel != s1.persistent_live_numel || s1.inflight_params) fail("step did not end released", n);
    if (s1.unplanned_fetches != s0.unplanned_fetches) fail("unplanned fetch (gather on access)", n);
    double events = hc->ev_step * steps;
    printf("hooks\t%u\t%d\t%.2f\t%.2f\t%d\t%.0f\t%.1f\t%.1f\t%.1f\n", n, r, dtc * 1e9 / events, dt * 1e9 / events,
           steps, events, (double)(s1.prefetches - s0.prefetches) / steps,
           (double)(s1.blocking_waits - s0.blocking_waits) / steps, (double)(s1.gathers - s0.gathers) / steps);
    fflush(stdout);
}

static void case_teardown(hcase *hc) {
    use_case(hc);
    if (g_diag)
        fprintf(stderr,
                "[bench] hooks: N=%u diag: max in-flight params %llu, max live numel %llu "
                "(= %llu params of %llu)\n",
                hc->n, (unsigned long long)hc->max_inflight, (unsigned long long)hc->max_live,
                (unsigned long long)(hc->max_live / PARAM_NUMEL), (unsigned long long)PARAM_NUMEL);
    CHECK(zo_check_consistency(g_rt));
    CHECK(zo_runtime_destroy(g_rt));
    g_rt = NULL;
    zo_backend_destroy(hc->be);
    free(hc->md.first_child);
    free(hc->md.n_children);
    free(hc->md.root_kids);
    free(hc->md.param);
    free(hc->md.in_h);
    free(hc->md.out_h);
}

#define MAX_CASES 16

int main(int argc, char **argv) {
    const char *mods = "100,1000,10000,100000";
    int reps = 5;
    double min_events = 2e6;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--modules") && i + 1 < argc)
            mods = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            char *end;
            long r = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || r < 1 || r > 1000) {
                fprintf(stderr, "bench_hooks: --reps '%s' is not in 1..1000\n", argv[i]);
                return 2;
            }
            reps = (int)r;
        } else if (!strcmp(argv[i], "--min-events") && i + 1 < argc) {
            char *end;
            min_events = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(min_events > 0 && min_events <= 1e12)) {
                fprintf(stderr, "bench_hooks: --min-events '%s' is not a count in (0, 1e12]\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--diag"))
            g_diag = 1;
        else if (!strcmp(argv[i], "--max-live") && i + 1 < argc)
            g_max_live_cfg = (unsigned long long)atof(argv[++i]);
        else if (!strcmp(argv[i], "--reuse") && i + 1 < argc)
            g_reuse_cfg = (long long)atof(argv[++i]);
        else {
            fprintf(
                stderr,
                "usage: bench_hooks [--modules N,N,...] [--reps R] [--min-events E] [--diag] [--max-live NUMEL] [--reuse NUMEL]\n");
            return 2;
        }
    }
    char *list = strdup(mods);
    if (!list) return 1;
    uint32_t ns[MAX_CASES];
    int ncases = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        long n = strtol(tok, &end, 0);
        if (*end || n < 2 || n > 500000) {
            fprintf(stderr, "bench_hooks: module count '%s' is not in 2..500000\n", tok);
            return 2;
        }
        if (ncases == MAX_CASES) {
            fprintf(stderr, "bench_hooks: at most %d module counts\n", MAX_CASES);
            return 2;
        }
        ns[ncases++] = (uint32_t)n;
    }
    free(list);
    if (!ncases) {
        fprintf(stderr, "bench_hooks: --modules lists no module count\n");
        return 2;
    }
    static hcase cases[MAX_CASES];
    for (int c = 0; c < ncases; c++)
        if (case_setup(&cases[c], ns[c], reps, min_events)) return 1;
    for (int r = 0; r < reps; r++)
        for (int c = 0; c < ncases; c++) case_rep(&cases[c], r);
    for (int c = 0; c < ncases; c++) case_teardown(&cases[c]);
    return 0;
}
