/*
 * bench_verify - the cost of zo_config.verify_collectives per collective
 * (docs/benchmarks.md, benchmark 6).
 *
 * With verify_collectives every rank exchanges a 64-byte fingerprint
 * (backend exchange op: one extra small all-gather) before each all-gather
 * group and at the optimizer step.  This program measures what that costs
 * on the host data plane, as a ratio against the same run with the check
 * off, in the same process:
 *
 *   W = 1      one rank's view (the single-view host backend: the exchange
 *              is a local copy; this is the cost of building and comparing
 *              fingerprints)
 *   W = 2, 4   a multi-rank host world (zo_host_world), one thread and one
 *              runtime per rank: every collective, the fingerprint exchange
 *              included, is matched across the ranks and blocks until all
 *              arrive, as NCCL would
 *
 * Each rank registers M modules under a root, one float32 parameter each
 * of S bytes, with persistence and prefetch off, so every pre-forward
 * issues exactly one all-gather and every post-forward releases it.  One
 * iteration is an eval forward over the M modules (M collectives, M
 * fingerprint exchanges when on).  Each repetition runs `iters` iterations
 * with the check off, then on (the order alternates between repetitions),
 * timing wall clock of the whole world (threads block on each other).
 *
 * Output, one line per (W, S, rep), tab-separated:
 *   verify <W> <bytes> <rep> <collectives> <off_ns_per_coll> <on_ns_per_coll> <ratio>
 * and a summary line per (W, S) with the medians.
 *
 * usage: bench_verify [--worlds 1,2,4] [--sizes 1024,1048576] [--modules M]
 *                     [--iters N] [--reps R]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zoffload.h>
#include <zoffload_backend.h>

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, zo_status s, const char *msg) {
    fprintf(stderr, "bench_verify: %s: %s: %s\n", what, zo_strerror(s), msg ? msg : "");
    exit(1);
}

typedef struct rank_job {
    zo_host_world *world; /* NULL: single view */
    int W, rank, verify, modules, iters;
    uint64_t numel;
    zo_status st;
    char msg[256];
    uint64_t collectives;
} rank_job;

static void *run_rank(void *arg) {
    rank_job *j = arg;
    zo_backend *be = NULL;
    zo_runtime *rt = NULL;
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = j->W;
    hc.rank = j->rank;
    hc.world = j->world;
    j->st = zo_backend_host_create(&hc, &be);
    if (j->st) {
        snprintf(j->msg, sizeof j->msg, "zo_backend_host_create");
        return NULL;
    }
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = j->W;
    cfg.rank = j->rank;
    cfg.backend = be;
    cfg.param_persistence_threshold = 0;
    cfg.prefetch_bucket_size = 0;
    cfg.verify_collectives = j->verify;
    j->st = zo_runtime_create(&cfg, &rt);
    if (j->st) {
        snprintf(j->msg, sizeof j->msg, "zo_runtime_create");
        zo_backend_destroy(be);
        return NULL;
    }
    zo_module_id root, m;
    zo_param_id p;
    zo_status s = zo_module_register(rt, ZO_NO_MODULE, "root", 0, &root);
    zo_module_id *mods = calloc((size_t)j->modules, sizeof *mods);
    for (int i = 0; !s && i < j->modules; i++) {
        s = zo_module_register(rt, root, NULL, 0, &m);
        if (!s) s = zo_param_register(rt, m, NULL, j->numel, 4, 0, &p);
        mods[i] = m;
    }
    /* all-gathers issued, from the runtime's own count (one parameter per
     * module, so one per collective); the fingerprint exchanges are not in it */
    zo_stats st0, st1;
    if (!s) s = zo_get_stats(rt, &st0);
    for (int it = 0; !s && it < j->iters; it++) {
        zo_graph g;
        s = zo_forward_begin(rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g);
        if (!s) s = zo_pre_forward(rt, root, 0);
        for (int i = 0; !s && i < j->modules; i++) {
            s = zo_pre_forward(rt, mods[i], 0);
            if (!s) s = zo_post_forward(rt, mods[i]);
        }
        if (!s) s = zo_post_forward(rt, root);
        if (!s) s = zo_forward_end(rt, g);
    }
    if (!s) s = zo_get_stats(rt, &st1);
    if (!s) j->collectives = st1.gathers - st0.gathers;
    if (s) {
        j->st = s;
        snprintf(j->msg, sizeof j->msg, "%s", zo_last_error(rt));
    }
    free(mods);
    zo_runtime_destroy(rt);
    zo_backend_destroy(be);
    return NULL;
}

/* One timed run of the whole world; returns wall seconds. */
static double run_world(int W, int verify, int modules, int iters, uint64_t numel, uint64_t *colls) {
    zo_host_world *world = NULL;
    if (W > 1) {
        zo_status s = zo_host_world_create(W, NULL, &world);
        if (s) die("zo_host_world_create", s, "");
    }
    rank_job jobs[8];
    pthread_t th[8];
    double t0 = wall_s();
    for (int r = 0; r < W; r++) {
        jobs[r] = (rank_job){world, W, r, verify, modules, iters, numel, ZO_OK, "", 0};
        if (W == 1)
            run_rank(&jobs[r]);
        else if (pthread_create(&th[r], NULL, run_rank, &jobs[r]))
            die("pthread_create", ZO_ERR_NOMEM, "");
    }
    if (W > 1)
        for (int r = 0; r < W; r++) pthread_join(th[r], NULL);
    double t = wall_s() - t0;
    for (int r = 0; r < W; r++)
        if (jobs[r].st) die(jobs[r].msg, jobs[r].st, "");
    if (world) {
        char rep[512];
        if (zo_host_world_report(world, rep, sizeof rep)) die("world report", ZO_ERR_COLLECTIVE_MISMATCH, rep);
        zo_host_world_destroy(world);
    }
    *colls = jobs[0].collectives;
    return t;
}

static int parse_list(const char *s, long *out, int max) {
    int n = 0;
    while (*s && n < max) {
        char *e;
        out[n++] = strtol(s, &e, 10);
        s = *e == ',' ? e + 1 : e;
        if (*e && *e != ',') break;
    }
    return n;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long worlds[8] = {1, 2, 4}, sizes[8] = {1024, 1048576};
    int nw = 3, ns = 2, modules = 64, iters = 200, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--worlds") && i + 1 < argc)
            nw = parse_list(argv[++i], worlds, 8);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            ns = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--modules") && i + 1 < argc)
            modules = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(
                stderr,
                "usage: bench_verify [--worlds 1,2,4] [--sizes 1024,1048576] [--modules M] [--iters N] [--reps R]\n");
            return 2;
        }
    }
    if (modules < 1 || iters < 1 || reps < 1 || reps > 64) {
        fprintf(stderr, "bench_verify: --modules, --iters >= 1, --reps 1..64\n");
        return 2;
    }
    for (int wi = 0; wi < nw; wi++) {
        int W = (int)worlds[wi];
        if (W < 1 || W > 8) {
            fprintf(stderr, "bench_verify: world size %d not in 1..8\n", W);
            return 2;
        }
        for (int si = 0; si < ns; si++) {
            uint64_t numel = (uint64_t)sizes[si] / 4 ? (uint64_t)sizes[si] / 4 : 1;
            /* fewer iterations for big tensors: keep each run under ~1 s */
            int it = iters;
            if ((uint64_t)sizes[si] * (uint64_t)modules * (uint64_t)iters * (uint64_t)W > (8ull << 30))
                it = (int)((8ull << 30) / ((uint64_t)sizes[si] * (uint64_t)modules * (uint64_t)W));
            if (it < 2) it = 2;
            uint64_t c0, c1;
            (void)run_world(W, 0, modules, 2, numel, &c0); /* warm-up */
            double off[64], on[64], ratio[64];
            for (int r = 0; r < reps; r++) {
                double a, b;
                if (r & 1) {
                    b = run_world(W, 1, modules, it, numel, &c1);
                    a = run_world(W, 0, modules, it, numel, &c0);
                } else {
                    a = run_world(W, 0, modules, it, numel, &c0);
                    b = run_world(W, 1, modules, it, numel, &c1);
                }
                if (c0 != c1 || c0 == 0) {
                    fprintf(stderr, "bench_verify: W=%d: %llu collectives off vs %llu on\n", W, (unsigned long long)c0,
                            (unsigned long long)c1);
                    return 1;
                }
                off[r] = a * 1e9 / (double)c0;
                on[r] = b * 1e9 / (double)c1;
                ratio[r] = on[r] / off[r];
                printf("verify\t%d\t%ld\t%d\t%llu\t%.0f\t%.0f\t%.3f\n", W, sizes[si], r, (unsigned long long)c0, off[r],
                       on[r], ratio[r]);
                fflush(stdout);
            }
            qsort(off, (size_t)reps, sizeof(double), cmp_d);
            qsort(on, (size_t)reps, sizeof(double), cmp_d);
            qsort(ratio, (size_t)reps, sizeof(double), cmp_d);
            printf("summary\tW=%d\tbytes=%ld\toff_ns=%.0f\ton_ns=%.0f\textra_ns=%.0f\tratio=%.3f\n", W, sizes[si],
                   off[reps / 2], on[reps / 2], on[reps / 2] - off[reps / 2], ratio[reps / 2]);
            fflush(stdout);
        }
    }
    return 0;
}
