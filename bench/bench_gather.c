/*
 * bench_gather - host all-gather throughput against memcpy (benchmark 2 of
 * docs/benchmarks.md).
 *
 * For each parameter size S (full tensor bytes; float32 elements, numel =
 * S / 4) and world size W, three measurements in the same process, one
 * after the other inside every repetition so that their ratio holds on a
 * noisy machine:
 *
 *   memcpy   memcpy(dst, src, S) between two preallocated, pre-touched,
 *            page-aligned buffers (the copy an ideal all-gather does: every
 *            byte of the full tensor written once) at the fastest of
 *            MEMCPY_NOFF source/destination offset pairs, chosen once per
 *            cell before the repetitions (each pair timed over the same
 *            number of copies; choosing per repetition would make the
 *            baseline the maximum of four noisy samples against single
 *            samples of the others): glibc's memcpy depends on where the two buffers
 *            fall relative to each other (two mallocs 16 bytes apart modulo
 *            4096 copied at 1.7 GB/s instead of 37-50 GB/s here: 4K
 *            aliasing of loads and stores), so one arbitrary placement is
 *            no baseline
 *   backend  the host backend's data plane alone: param_add once, one full
 *            buffer from full_alloc once, then all_gather_start + wait +
 *            work_free repeated (every rank's shard into the full
 *            buffer; the single-view backend stores the W shards in the
 *            layout of the flat all-gather output, so that is one copy of
 *            the padded tensor's bytes)
 *   runtime  the whole path through the public API: an eval forward
 *            (zo_forward_begin(ROOT|EVAL), zo_pre_forward of a module owning
 *            the parameter: full_alloc (a buffer from the backend's cache of
 *            freed full buffers, or malloc, + 0xA5 poison fill) and the
 *            all-gather, zo_param_access, zo_post_forward: release
 *            (full_free: back to the cache), zo_forward_end), i.e. what one
 *            fetch+release of a parameter costs in the host backend's copy
 *            mode with the default zo_host_config (the runtime creates it);
 *            whether that fills with 0xA5 is the build's ZO_POISON
 *            (zo_host_poison_default(): off in bench/run.sh's release build)
 *   runtime_poison  the same with a host backend created with no_poison = 0
 *            (0xA5 fill of every fetched buffer; otherwise
 *            ZO_HOST_CONFIG_INIT): what a test/fuzz build's gather costs
 *
 * Memory: the host backend stores every rank's shard of the parameter in
 * one block (W * ceil(numel/W) elements, about S), plus one full buffer
 * (S), plus the memcpy pair (2S + 2 pages of offset room): about 4S for any W, 1 GiB at S = 256 MiB;
 * the two runtime cases add 2S each (shards + one full buffer, cached
 * between fetches), 2 GiB in all at 256 MiB.
 *
 * The timing loops are functions of their own (time_memcpy, time_backend,
 * time_runtime), so that `valgrind --tool=callgrind
 * --toggle-collect=time_runtime` counts the instructions of exactly the
 * timed fetches (docs/benchmarks.md).
 *
 * Times are CPU time of the thread (CLOCK_THREAD_CPUTIME_ID: user + system,
 * so page faults count), which is what the process really spent on a
 * machine shared with other jobs.
 *
 * Output (stdout, tab-separated): first one line
 *   gather_config poison_default <0|1>
 * (zo_host_poison_default() of the library measured), then one line per
 * size x W x repetition:
 *   gather <W> <bytes> <rep> <memcpy_GBps> <backend_GBps> <runtime_GBps> <runtime_poison_GBps> <memcpy_worst_GBps>
 * (memcpy: the fastest offset pair; memcpy_worst: the slowest pair in the
 * choice, the same on every repetition of a cell, to show the spread the
 * placement makes)
 *
 * usage: bench_gather [--sizes B,B,...] [--worlds W,W,...] [--reps R]
 *                     [--min-bytes B] [--only memcpy|backend|runtime|runtime_poison]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zoffload.h>
#include <zoffload_backend.h>
#include <zoffload_testing.h>

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, zo_status s, const char *msg) {
    fprintf(stderr, "bench_gather: %s: %s: %s\n", what, zo_strerror(s), msg ? msg : "");
    exit(1);
}

/* keeps the compiler from dropping copies whose result is never read */
static volatile uint8_t g_sink;

/* Tells the compiler that memory pointed to by p may be read and written
 * here: without it clang -O2 sees the same memcpy(dst, src) repeated with
 * nothing in between that changes src or dst and drops the repetitions
 * (an early version of this benchmark measured a loop without copies). */
static inline void clobber(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

__attribute__((noinline)) static double time_memcpy(uint8_t *dst, const uint8_t *src, size_t bytes, int iters) {
    double a = cpu_s();
    for (int i = 0; i < iters; i++) {
        memcpy(dst, src, bytes);
        clobber(dst);
        g_sink ^= dst[(size_t)i % bytes];
    }
    return cpu_s() - a;
}

/* Source and destination offsets from page-aligned blocks: equal offsets
 * (both page-aligned), the destination one cache line and half a page
 * ahead, and a 16-byte misalignment of both. */
#define MEMCPY_NOFF 4
static const size_t k_memcpy_off[MEMCPY_NOFF][2] = {{0, 0}, {0, 64}, {0, 2048}, {16, 16}};
#define MEMCPY_SLACK 4096

/* Times every offset pair over `iters` copies; returns the index of the
 * fastest, *worst_s the slowest pair's time. */
static int choose_memcpy_pair(uint8_t *dst_page, const uint8_t *src_page, size_t bytes, int iters, double *worst_s) {
    double best = 0, bad = 0;
    int kb = 0;
    for (int k = 0; k < MEMCPY_NOFF; k++) {
        double t = time_memcpy(dst_page + k_memcpy_off[k][1], src_page + k_memcpy_off[k][0], bytes, iters);
        if (k == 0 || t < best) best = t, kb = k;
        if (k == 0 || t > bad) bad = t;
    }
    *worst_s = bad;
    return kb;
}

typedef struct backend_case {
    zo_backend *be;
    void *full;
    zo_gather_item item;
} backend_case;

static void backend_setup(backend_case *bc, int W, size_t bytes) {
    zo_host_config hc = ZO_HOST_CONFIG_INIT;
    hc.world_size = W;
    zo_status s = zo_backend_host_create(&hc, &bc->be);
    if (s) die("zo_backend_host_create", s, NULL);
    const zo_backend_ops *ops = bc->be->ops;
    void *ctx = bc->be->ctx;
    uint64_t numel = bytes / 4, part = (numel + (uint64_t)W - 1) / (uint64_t)W;
    if ((s = ops->param_add(ctx, 0, numel, 4, part))) die("param_add", s, ops->last_error(ctx));
    if ((s = ops->full_alloc(ctx, 0, (size_t)(part * (uint64_t)W * 4), &bc->full)))
        die("full_alloc", s, ops->last_error(ctx));
    bc->item.param = 0;
    bc->item.full = bc->full;
    bc->item.numel = numel;
    bc->item.partition_numel = part;
    bc->item.elem_size = 4;
}

__attribute__((noinline)) static double time_backend(backend_case *bc, size_t bytes, int iters) {
    const zo_backend_ops *ops = bc->be->ops;
    void *ctx = bc->be->ctx;
    double a = cpu_s();
    for (int i = 0; i < iters; i++) {
        zo_work *w = NULL;
        zo_status s = ops->all_gather_start(ctx, &bc->item, 1, &w);
        if (s) die("all_gather_start", s, ops->last_error(ctx));
        if ((s = ops->wait(ctx, w))) die("wait", s, ops->last_error(ctx));
        ops->work_free(ctx, w);
        g_sink ^= ((uint8_t *)bc->full)[(size_t)i % bytes];
    }
    return cpu_s() - a;
}

static void backend_teardown(backend_case *bc) {
    bc->be->ops->full_free(bc->be->ctx, 0, bc->full);
    zo_backend_destroy(bc->be);
}

typedef struct runtime_case {
    zo_runtime *rt;
    zo_backend *be; /* NULL: the runtime's own host backend (ZO_HOST_CONFIG_INIT) */
    zo_module_id root, fc;
    zo_param_id w;
} runtime_case;

#define RT_CHECK(rc, call)                                                                                             \
    do {                                                                                                               \
        zo_status s_ = (call);                                                                                         \
        if (s_ != ZO_OK) die(#call, s_, zo_last_error((rc)->rt));                                                      \
    } while (0)

/* poison 0: the runtime creates its host backend (ZO_HOST_CONFIG_INIT:
 * copy mode, immediate, cache on, poison as the build's default); 1: the
 * same configuration with no_poison = 0 (always fill), created here and
 * passed as cfg.backend. */
static void runtime_setup(runtime_case *rc, int W, size_t bytes, int poison) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.world_size = W;
    rc->be = NULL;
    if (poison) {
        zo_host_config hc = ZO_HOST_CONFIG_INIT;
        zo_host_testing ht = ZO_HOST_TESTING_INIT;
        hc.testing = &ht;
        hc.world_size = W;
        ht.no_poison = 0;
        zo_status s = zo_backend_host_create(&hc, &rc->be);
        if (s) die("zo_backend_host_create(no_poison = 0)", s, NULL);
        cfg.backend = rc->be;
    }
    /* stage3_param_persistence_threshold defaults to 1e5 elements: a
     * parameter at or under it is gathered once and never released, so the
     * small sizes (4 KiB = 1024 elements) would not be fetched again.
     * 0: every size is fetched and released every time. */
    cfg.param_persistence_threshold = 0;
    zo_status s = zo_runtime_create(&cfg, &rc->rt);
    if (s) die("zo_runtime_create", s, NULL);
    RT_CHECK(rc, zo_module_register(rc->rt, ZO_NO_MODULE, "model", 0, &rc->root));
    RT_CHECK(rc, zo_module_register(rc->rt, rc->root, "fc", 0, &rc->fc));
    RT_CHECK(rc, zo_param_register(rc->rt, rc->fc, "weight", bytes / 4, 4, 0, &rc->w));
}

__attribute__((noinline)) static double time_runtime(runtime_case *rc, size_t bytes, int iters) {
    double a = cpu_s();
    for (int i = 0; i < iters; i++) {
        zo_graph g;
        const void *data;
        size_t nb;
        RT_CHECK(rc, zo_forward_begin(rc->rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g));
        RT_CHECK(rc, zo_pre_forward(rc->rt, rc->fc, 0));
        RT_CHECK(rc, zo_param_access(rc->rt, rc->fc, rc->w, &data, &nb));
        if (nb != bytes) die("zo_param_access: wrong size", ZO_ERR_STATE, NULL);
        g_sink ^= ((const uint8_t *)data)[(size_t)i % bytes];
        RT_CHECK(rc, zo_post_forward(rc->rt, rc->fc));
        RT_CHECK(rc, zo_forward_end(rc->rt, g));
    }
    return cpu_s() - a;
}

/* One more fetch: the bytes zo_param_access gives are the parameter's
 * (sampled every 4093 bytes); 0 if one is wrong. */
static int runtime_content_ok(runtime_case *rc, size_t bytes) {
    zo_graph g;
    const void *data;
    size_t nb;
    int ok = 1;
    RT_CHECK(rc, zo_forward_begin(rc->rt, ZO_FWD_ROOT | ZO_FWD_EVAL, &g));
    RT_CHECK(rc, zo_pre_forward(rc->rt, rc->fc, 0));
    RT_CHECK(rc, zo_param_access(rc->rt, rc->fc, rc->w, &data, &nb));
    for (size_t k = 0; k < bytes && ok; k += 4093) ok = ((const uint8_t *)data)[k] == zo_host_param_byte(rc->w, k);
    RT_CHECK(rc, zo_post_forward(rc->rt, rc->fc));
    RT_CHECK(rc, zo_forward_end(rc->rt, g));
    return ok;
}

static size_t parse_list(const char *s, unsigned long long *out, size_t cap) {
    size_t n = 0;
    char *dup = strdup(s);
    if (!dup) return 0;
    for (char *t = strtok(dup, ","); t && n < cap; t = strtok(NULL, ",")) out[n++] = strtoull(t, NULL, 0);
    free(dup);
    return n;
}

int main(int argc, char **argv) {
    const char *sizes_s = "4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456";
    const char *worlds_s = "1,8,64";
    int reps = 5;
    const char *only = NULL; /* --only memcpy|backend|runtime|runtime_poison: profile one path (others print 0) */
    double min_bytes = 512.0 * 1024 * 1024;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes_s = argv[++i];
        else if (!strcmp(argv[i], "--worlds") && i + 1 < argc)
            worlds_s = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc)
            min_bytes = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_gather [--sizes B,B,...] [--worlds W,W,...] [--reps R] [--min-bytes B] "
                            "[--only memcpy|backend|runtime|runtime_poison]\n");
            return 2;
        }
    }
    unsigned long long sizes[32], worlds[16];
    size_t ns = parse_list(sizes_s, sizes, 32), nw = parse_list(worlds_s, worlds, 16);
    if (!ns || !nw || reps < 1) return 2;
    printf("gather_config\tpoison_default\t%d\n", zo_host_poison_default());
    for (size_t wi = 0; wi < nw; wi++) {
        int W = (int)worlds[wi];
        for (size_t si = 0; si < ns; si++) {
            size_t bytes = (size_t)sizes[si];
            if (bytes < 4 * (size_t)W || bytes % 4) {
                fprintf(stderr, "bench_gather: size %zu unusable for W=%d\n", bytes, W);
                return 2;
            }
            int iters = (int)(min_bytes / (double)bytes);
            if (iters < 2) iters = 2;
            fprintf(stderr, "[bench] gather: W=%d size %zu bytes, %d copies x %d reps\n", W, bytes, iters, reps);
            /* page-aligned, with room for the offsets (time_memcpy_best) */
            uint8_t *src = aligned_alloc(4096, (bytes + MEMCPY_SLACK + 4095) / 4096 * 4096);
            uint8_t *dst = aligned_alloc(4096, (bytes + MEMCPY_SLACK + 4095) / 4096 * 4096);
            if (!src || !dst) {
                fprintf(stderr, "bench_gather: out of memory for %zu bytes\n", bytes);
                return 1;
            }
            memset(src, 1, bytes + MEMCPY_SLACK);
            memset(dst, 2, bytes + MEMCPY_SLACK);
            backend_case bc;
            runtime_case rc, rn;
            backend_setup(&bc, W, bytes);
            runtime_setup(&rc, W, bytes, 0);
            runtime_setup(&rn, W, bytes, 1);
            /* warm-up: fault every page in, reach steady state (the
             * runtime cases' full buffer is then in the backend's cache) */
            double worst_s = 0;
            int kb = choose_memcpy_pair(dst, src, bytes, iters, &worst_s);
            uint8_t *msrc = src + k_memcpy_off[kb][0], *mdst = dst + k_memcpy_off[kb][1];
            time_backend(&bc, bytes, 1);
            time_runtime(&rc, bytes, 1);
            time_runtime(&rn, bytes, 1);
            for (int r = 0; r < reps; r++) {
                double tm = 0, tb = 0, tr = 0, tn = 0;
                if (!only || !strcmp(only, "memcpy")) tm = time_memcpy(mdst, msrc, bytes, iters);
                if (!only || !strcmp(only, "backend")) tb = time_backend(&bc, bytes, iters);
                if (!only || !strcmp(only, "runtime")) tr = time_runtime(&rc, bytes, iters);
                if (!only || !strcmp(only, "runtime_poison")) tn = time_runtime(&rn, bytes, iters);
                double tot = (double)bytes * iters;
                printf("gather\t%d\t%zu\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", W, bytes, r, tm > 0 ? tot / tm / 1e9 : 0,
                       tb > 0 ? tot / tb / 1e9 : 0, tr > 0 ? tot / tr / 1e9 : 0, tn > 0 ? tot / tn / 1e9 : 0,
                       worst_s > 0 ? tot / worst_s / 1e9 : 0);
                fflush(stdout);
            }
            /* the gathered content must be the parameter (a benchmark that
             * copies the wrong bytes measures nothing) */
            for (size_t k = 0; k < bytes; k += 4093)
                if (((uint8_t *)bc.full)[k] != zo_host_param_byte(0, k)) {
                    fprintf(stderr, "bench_gather: W=%d size %zu: gathered byte %zu is wrong\n", W, bytes, k);
                    return 1;
                }
            if (!runtime_content_ok(&rc, bytes) || !runtime_content_ok(&rn, bytes)) {
                fprintf(stderr, "bench_gather: W=%d size %zu: the runtime path gathered wrong bytes\n", W, bytes);
                return 1;
            }
            backend_teardown(&bc);
            zo_runtime_destroy(rc.rt);
            zo_runtime_destroy(rn.rt);
            zo_backend_destroy(rn.be);
            free(src);
            free(dst);
        }
    }
    return 0;
}
