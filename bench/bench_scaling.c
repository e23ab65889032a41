/*
 * bench_scaling - entry points whose cost per item must not grow with the
 * size of the model or of the pass stack (docs/benchmarks.md, section 8):
 * the cost per item at the large size divided by the cost per item at the
 * small size, measured in the same run, must stay <= 1.5 (a scan per item
 * would make it ~100 times larger).
 *
 * Cases (per item):
 *   register   zo_module_register of n named modules under one root (the
 *              duplicate-name check is a hash lookup), named "layer0",
 *              "layer1", ... (numbered, as nn.ModuleList children are in
 *              torch 2.15.0: the name table places such names eight to a
 *              cache line)
 *   register-plain  the same with names that do not end in a number ("l0x",
 *              "l1x", ...: one random slot of the name table per name)
 *   abort      n nested forward passes (a reentrant recompute inside a
 *              recompute ...), one open call each, unwound innermost first
 *              by zo_forward_abort(ZO_NO_MODULE); the largest n is 2^20,
 *              the number of graph and call slots, or the most the runtime
 *              accepts if that is less (printed)
 *   chain      a chain of n modules (1e4, 2e5, 4e5), each the child of
 *              the previous one (named "layer"), then one training step
 *              through it: n nested calls (hooks A, D), n post-forwards
 *              (B, C), the backward (output and input gradients), the
 *              optimizer step; per phase too (chain-register,
 *              chain-forward, chain-backward, chain-step), and the ratio of
 *              each size to the previous one
 *
 * Each size is timed best of R repetitions (thread CPU time); the small
 * sizes are cheap, so they get more.  Checks: the duplicate check still
 * fires at the largest size, every abort leaves the stack empty and
 * everything released, the chain step ends released.
 *
 * Output (stdout, tab-separated, one line per size):
 *   scaling <case> <n> <best_ns_per_item> <reps>
 *   ratio   <case> <n_small> <n_large> <ratio>
 * Exit 0, or 1 if a runtime call failed or a check did not hold (the
 * ratio is reported, not judged: bench/report.py marks it against 1.5).
 *
 * usage: bench_scaling [--quick] [--only register,abort,chain]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zoffload.h>

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(zo_runtime *rt, const char *what, zo_status st) {
    fprintf(stderr, "bench_scaling: %s: %s: %s\n", what, zo_strerror(st), rt ? zo_last_error(rt) : zo_last_error(NULL));
    exit(1);
}
#define CK(rt, what, call)                                                                                             \
    do {                                                                                                               \
        zo_status s_ = (call);                                                                                         \
        if (s_ != ZO_OK) die((rt), (what), s_);                                                                        \
    } while (0)

static zo_runtime *mk(void) {
    zo_config cfg = ZO_CONFIG_INIT;
    cfg.param_persistence_threshold = 0;
    cfg.prefetch_bucket_size = 0;
    zo_runtime *rt = NULL;
    CK(NULL, "zo_runtime_create", zo_runtime_create(&cfg, &rt));
    return rt;
}

static void all_released(zo_runtime *rt, const char *what) {
    zo_stats st;
    CK(rt, "zo_get_stats", zo_get_stats(rt, &st));
    if (st.forward_stack_depth || st.live_numel != st.persistent_live_numel || st.inflight_params) {
        fprintf(stderr, "bench_scaling: %s: stack %u, live %llu, in flight %llu\n", what, st.forward_stack_depth,
                (unsigned long long)st.live_numel, (unsigned long long)st.inflight_params);
        exit(1);
    }
    CK(rt, "zo_check_consistency", zo_check_consistency(rt));
}

/* seconds per module; fmt: the names, from the module's index */
static double t_register(unsigned n, const char *fmt) {
    zo_runtime *rt = mk();
    zo_module_id root, m;
    char name[32];
    CK(rt, "register root", zo_module_register(rt, ZO_NO_MODULE, "model", 0, &root));
    double t0 = cpu_s();
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, fmt, i);
        CK(rt, "zo_module_register", zo_module_register(rt, root, name, 0, &m));
    }
    double t = cpu_s() - t0;
    snprintf(name, sizeof name, fmt, 7u);
    if (zo_module_register(rt, root, name, 0, &m) != ZO_ERR_EXISTS) {
        fprintf(stderr, "bench_scaling: the duplicate name check failed at %u modules\n", n);
        exit(1);
    }
    CK(rt, "zo_runtime_destroy", zo_runtime_destroy(rt));
    return t / n;
}

/* seconds per zo_forward_abort; *n is lowered to what the runtime accepts */
static double t_abort(unsigned *n) {
    zo_runtime *rt = mk();
    zo_module_id root;
    zo_param_id p;
    CK(rt, "register", zo_module_register(rt, ZO_NO_MODULE, "model", 0, &root));
    CK(rt, "register param", zo_param_register(rt, root, "w", 16, 4, 0, &p));
    zo_graph g;
    unsigned k = 0;
    for (; k < *n; k++) {
        zo_status s = zo_forward_begin(rt, 0, &g);
        if (s == ZO_ERR_LIMIT) break;
        if (s) die(rt, "zo_forward_begin", s);
        s = zo_pre_forward(rt, root, ZO_CALL_GRAD);
        if (s == ZO_ERR_LIMIT) {
            CK(rt, "zo_forward_abort", zo_forward_abort(rt, ZO_NO_MODULE));
            break;
        }
        if (s) die(rt, "zo_pre_forward", s);
    }
    *n = k;
    double t0 = cpu_s();
    for (unsigned i = 0; i < k; i++) CK(rt, "zo_forward_abort", zo_forward_abort(rt, ZO_NO_MODULE));
    double t = cpu_s() - t0;
    all_released(rt, "abort");
    CK(rt, "zo_runtime_destroy", zo_runtime_destroy(rt));
    return k ? t / k : 0;
}

/* seconds per module: register a chain of n, then one step through it;
 * ph[0..3] receive the phases (registration, forward, backward, optimizer
 * step) */
static double t_chain(unsigned n, double ph[4]) {
    zo_runtime *rt = mk();
    zo_module_id *m = malloc((size_t)n * sizeof *m);
    zo_grad_handle *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    if (!m || !in || !out) {
        fprintf(stderr, "bench_scaling: out of memory\n");
        exit(1);
    }
    static const uint8_t one[1] = {1};
    double t0 = cpu_s();
    zo_module_id parent = ZO_NO_MODULE;
    for (unsigned i = 0; i < n; i++) {
        CK(rt, "zo_module_register", zo_module_register(rt, parent, "layer", 0, &m[i]));
        parent = m[i];
    }
    zo_param_id p;
    CK(rt, "zo_param_register", zo_param_register(rt, m[n - 1], "w", 16, 4, 0, &p));
    double t1 = cpu_s();
    zo_graph g;
    CK(rt, "zo_forward_begin", zo_forward_begin(rt, ZO_FWD_ROOT, &g));
    for (unsigned i = 0; i < n; i++) {
        CK(rt, "zo_pre_forward", zo_pre_forward(rt, m[i], ZO_CALL_GRAD));
        CK(rt, "zo_track_inputs", zo_track_inputs(rt, m[i], 1, one, &in[i]));
    }
    for (unsigned i = n; i-- > 0;) {
        CK(rt, "zo_post_forward", zo_post_forward(rt, m[i]));
        CK(rt, "zo_track_outputs", zo_track_outputs(rt, m[i], 1, one, &out[i]));
    }
    CK(rt, "zo_forward_end", zo_forward_end(rt, g));
    double t2 = cpu_s();
    CK(rt, "zo_backward_begin", zo_backward_begin(rt, g, 0));
    for (unsigned i = 0; i < n; i++) CK(rt, "zo_output_grad", zo_output_grad(rt, out[i]));
    CK(rt, "zo_param_grad_ready", zo_param_grad_ready(rt, p));
    for (unsigned i = n; i-- > 0;) CK(rt, "zo_input_grad", zo_input_grad(rt, in[i]));
    CK(rt, "zo_backward_end", zo_backward_end(rt, g));
    double t3 = cpu_s();
    CK(rt, "zo_release_all", zo_release_all(rt));
    double t4 = cpu_s(), t = t4 - t0;
    ph[0] = (t1 - t0) / n;
    ph[1] = (t2 - t1) / n;
    ph[2] = (t3 - t2) / n;
    ph[3] = (t4 - t3) / n;
    all_released(rt, "chain");
    CK(rt, "zo_runtime_destroy", zo_runtime_destroy(rt));
    free(m);
    free(in);
    free(out);
    return t / n;
}

/* t_register(n, fmt) in a child process, so that every repetition of
 * every size registers into the same fresh heap: run in this process, a
 * repetition after a larger one reuses memory the large one freed (glibc
 * raises its mmap threshold when a large block is freed), so the first
 * case's small size paid page faults the later ones did not (1e4 names
 * without a number: 246-336 ns per module as the first case, 121 ns after
 * a 1e6 case) */
static double t_register_fresh(unsigned n, const char *fmt) {
    int fd[2];
    if (pipe(fd) != 0) {
        perror("bench_scaling: pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_scaling: fork");
        exit(1);
    }
    if (pid == 0) {
        close(fd[0]);
        double t = t_register(n, fmt);
        _exit(write(fd[1], &t, sizeof t) == (ssize_t)sizeof t ? 0 : 1);
    }
    close(fd[1]);
    double t = -1;
    ssize_t got = read(fd[0], &t, sizeof t);
    close(fd[0]);
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || got != (ssize_t)sizeof t) {
        fprintf(stderr, "bench_scaling: the registration of %u modules failed in its child process\n", n);
        exit(1);
    }
    return t;
}

static int want(const char *only, const char *c) {
    if (!only) return 1;
    size_t l = strlen(c);
    for (const char *p = only; (p = strstr(p, c)); p += l)
        if ((p == only || p[-1] == ',') && (p[l] == ',' || p[l] == 0)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    int quick = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_scaling [--quick] [--only register,abort,chain]\n");
            return 2;
        }
    }
    int rs = quick ? 5 : 9, rl = quick ? 1 : 3; /* repetitions: small, large */
    static const char *const reg_case[2][2] = {{"register", "layer%u"}, {"register-plain", "l%ux"}};
    for (int c = 0; c < 2 && want(only, "register"); c++) {
        unsigned ns = 10000, nl = 1000000;
        double s = 1e9, l = 1e9;
        for (int r = 0; r < rs; r++) {
            double t = t_register_fresh(ns, reg_case[c][1]);
            if (t < s) s = t;
        }
        for (int r = 0; r < rl; r++) {
            double t = t_register_fresh(nl, reg_case[c][1]);
            if (t < l) l = t;
        }
        printf("scaling\t%s\t%u\t%.1f\t%d\n", reg_case[c][0], ns, s * 1e9, rs);
        printf("scaling\t%s\t%u\t%.1f\t%d\n", reg_case[c][0], nl, l * 1e9, rl);
        printf("ratio\t%s\t%u\t%u\t%.3f\n", reg_case[c][0], ns, nl, l / s);
        fflush(stdout);
    }
    if (want(only, "abort")) {
        unsigned ns = 10000, nl = 1u << 20;
        double s = 1e9, l = 1e9;
        for (int r = 0; r < rs; r++) {
            unsigned k = ns;
            double t = t_abort(&k);
            if (t < s) s = t;
        }
        for (int r = 0; r < rl; r++) {
            unsigned k = 1u << 20;
            double t = t_abort(&k);
            if (t < l) l = t;
            nl = k;
        }
        printf("scaling\tabort\t%u\t%.1f\t%d\n", ns, s * 1e9, rs);
        printf("scaling\tabort\t%u\t%.1f\t%d\n", nl, l * 1e9, rl);
        printf("ratio\tabort\t%u\t%u\t%.3f\n", ns, nl, l / s);
        fflush(stdout);
    }
    if (want(only, "chain")) {
        /* 2e5 deep (the case that did not finish in 300 s when registration
         * was quadratic) and twice that, to tell a cache effect (the 1e4
         * chain fits in cache) from a growth with n */
        unsigned sz[3] = {10000, 200000, 400000};
        int reps[3] = {rs, rl, rl};
        double best[3], phb[3][4], ph[4];
        static const char *const phase[4] = {"chain-register", "chain-forward", "chain-backward", "chain-step"};
        for (int k = 0; k < 3; k++) {
            best[k] = 1e9;
            for (int r = 0; r < reps[k]; r++) {
                double t = t_chain(sz[k], ph);
                if (t < best[k]) {
                    best[k] = t;
                    memcpy(phb[k], ph, sizeof ph);
                }
            }
            printf("scaling\tchain\t%u\t%.1f\t%d\n", sz[k], best[k] * 1e9, reps[k]);
            for (int q = 0; q < 4; q++)
                printf("scaling\t%s\t%u\t%.1f\t%d\n", phase[q], sz[k], phb[k][q] * 1e9, reps[k]);
        }
        for (int k = 1; k < 3; k++) {
            printf("ratio\tchain\t%u\t%u\t%.3f\n", sz[k - 1], sz[k], best[k] / best[k - 1]);
            for (int q = 0; q < 4; q++)
                printf("ratio\t%s\t%u\t%u\t%.3f\n", phase[q], sz[k - 1], sz[k],
                       phb[k - 1][q] > 0 ? phb[k][q] / phb[k - 1][q] : 0.0);
        }
        fflush(stdout);
    }
    return 0;
}
