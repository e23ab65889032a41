/*
 * bench_memory - gathered memory against the theoretical minimum, and
 * blocking fetches with a simulated gather latency (benchmark 5 of
 * docs/benchmarks.md).
 *
 * For every model scenario given (the corpus/models .scn files), the first two steps
 * are kept (both must be train steps running the same program: step 1
 * records the coordinator's trace, step 2 replays it COMPLETE) and run by
 * the PyTorch-faithful simulator (fuzz/sim.c) against the real runtime,
 * per-call policy, engine order, invariants checked as in the fuzz targets:
 *
 *   peak      zo_stats.peak_live_numel over the two steps (elements
 *             gathered at once, INFLIGHT + AVAILABLE, persistent included)
 *   min       the spec's theoretical minimum for the trace: the largest
 *             set of parameters any single module computation needs -
 *             max over every call of the two steps of the numel of
 *             zs_module_param_set(callee) (own, tied/external and, for a
 *             z3 leaf, its subtree's parameters)
 *   min_stack the floor of any runtime that follows the hook protocol: a
 *             caller's parameters stay gathered while its children run
 *             (fetched in its hook A, released in its hook B), so the
 *             largest union of the parameter sets along one call stack
 *   persist   numel of the persistent parameters (ds_persist: numel <=
 *             param_persistence_threshold): gathered once, never released,
 *             counted in peak
 *
 * each with prefetch off (prefetch_bucket_size = 0) and on (the scenario's
 * own bucket, DeepSpeed's default 5e7), and with the scenario's
 * max_reuse_distance (DeepSpeed's default 1e9 elements: with a complete
 * trace a parameter used again within 1e9 elements of trace is not
 * released, so a model under ~1e9 elements stays gathered from forward to
 * backward) and with max_reuse_distance = 0 (release at every post-hook).
 *
 * Simulated latency (host backend deferred mode): a gather is issued
 * INFLIGHT and completes only when waited (a blocking fetch) or when the
 * simulator calls zo_host_progress(), which it does after every k-th hook
 * call (zs_config.progress_every = k, 1..7): an all-gather issued at hook
 * call i has landed by hook call ceil((i+1)/k)*k, i.e. it takes between 1
 * and k hook calls.  blocking = zo_stats.blocking_waits during step 2 (the
 * step with a COMPLETE trace) = waits on a gather that had not completed.
 * With prefetch off every demand gather blocks; the prefetch hit rate is
 *     hit = 1 - blocking(prefetch on) / blocking(prefetch off)
 * the fraction of blocking fetches that prefetching removed.
 *
 * All-ranks models (config ranks=all): the memory rows run every rank in
 * one host world (zs_run; peak = rank 0's), rank edits past the
 * two steps dropped; the latency rows run rank 0's program alone
 * (zs_scenario_for_rank), since a world completes a gather when its last
 * rank issues it, not after k hook calls.
 *
 * Output (stdout, tab-separated):
 *   memory <model> <reuse> <prefetch 0|1> <peak> <min> <min_stack> <persist> <verdict>
 *   latency <model> <reuse> <k> <blocking_off> <blocking_on> <gathers_on> <prefetches_on> <verdict>
 * (reuse: "default" = the scenario's max_reuse_distance, "0" = 0)
 *
 * usage: bench_memory [--latency K,K,...] FILE.scn...
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minimize.h"
#include "run.h"
#include "ranks.h"
#include "scenario.h"
#include "scn.h"
#include "sim.h"

static char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, k = 0;
    char *b = malloc(cap);
    while (b) {
        size_t r = fread(b + k, 1, cap - k, f);
        k += r;
        if (r == 0) break;
        if (k == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *n = k;
    return b;
}

static uint64_t set_numel(const zs_scenario *s, const zs_id *ids, int n) {
    uint64_t t = 0;
    for (int i = 0; i < n; i++) t += s->par[ids[i]].numel;
    return t;
}

/* the spec minimum and the call-stack floor over every call of s */
static void minimums(const zs_scenario *s, uint64_t *min_single, uint64_t *min_stack) {
    static zs_id ids[ZS_MAX_PARAMS];
    static uint8_t mark[ZS_MAX_PARAMS];
    *min_single = *min_stack = 0;
    for (unsigned st = 0; st < s->n_steps; st++)
        for (unsigned p = 0; p < s->step[st].n_passes; p++) {
            const zs_pass *ps = &s->step[st].pass[p];
            for (unsigned c = 0; c < ps->n_calls; c++) {
                int n = zs_module_param_set(s, ps->calls[c].module, ids);
                uint64_t one = set_numel(s, ids, n);
                if (one > *min_single) *min_single = one;
                /* union along the call stack c, parent(c), ..., call 0 */
                memset(mark, 0, sizeof mark);
                uint64_t stack = 0;
                for (unsigned k = c; k != ZS_NONE; k = ps->calls[k].parent) {
                    int m = zs_module_param_set(s, ps->calls[k].module, ids);
                    for (int i = 0; i < m; i++)
                        if (!mark[ids[i]]) {
                            mark[ids[i]] = 1;
                            stack += s->par[ids[i]].numel;
                        }
                    if (k == 0) break;
                }
                if (stack > *min_stack) *min_stack = stack;
            }
        }
}

/* After n_steps was lowered: drops the rank edits of an all-ranks
 * scenario (MoE routing, skips, ...) that name a step past the program,
 * which zs_scenario_for_rank refuses ("step 2 not in the program"): the
 * setup error that left both all-ranks models without figures. */
static void keep_steps(zs_scenario *s) {
    unsigned k = 0;
    for (unsigned i = 0; i < s->n_edits; i++)
        if (s->edit[i].step < s->n_steps) s->edit[k++] = s->edit[i];
    s->n_edits = (uint8_t)k;
}

/* per-call policy, engine order, the default physical cap (numel
 * accounting sees full sizes) */
static int run(const zs_scenario *s, zs_sim_result *r) {
    zs_run_opts o;
    zs_run_opts_init(&o);
    o.policy = ZO_GRADS_PER_CALL;
    o.order_mode = ZS_ORDER_ENGINE;
    zs_outcome out;
    int v = zs_run(s, &o, &out);
    *r = out.r;
    if (v == ZS_SCN_SETUP)
        fprintf(stderr, "bench_memory: setup error: %s\n", r->setup_msg[0] ? r->setup_msg : "(no message)");
    return v;
}

static const char *vname(int v) { return zs_scn_verdict_name(v); }

int main(int argc, char **argv) {
    int lat[8], nlat = 0;
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--latency")) {
        char *d = strdup(argv[2]);
        for (char *t = strtok(d, ","); t && nlat < 8; t = strtok(NULL, ",")) lat[nlat++] = atoi(t);
        free(d);
        first = 3;
    }
    if (!nlat) {
        lat[0] = 1;
        lat[1] = 4;
        lat[2] = 7;
        nlat = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: bench_memory [--latency K,K,...] FILE.scn...\n");
        return 2;
    }
    static zs_scenario s, one, two;
    int bad = 0;
    for (int a = first; a < argc; a++) {
        size_t n;
        char *txt = read_file(argv[a], &n);
        zs_scn_error err;
        if (!txt || zs_scn_parse(txt, n, &s, NULL, &err)) {
            fprintf(stderr, "bench_memory: %s: cannot read/parse (%d:%d %s)\n", argv[a], txt ? err.line : 0,
                    txt ? err.col : 0, txt ? err.msg : "");
            free(txt);
            return 2;
        }
        free(txt);
        const char *base = strrchr(argv[a], '/');
        base = base ? base + 1 : argv[a];
        char model[64];
        snprintf(model, sizeof model, "%s", base);
        char *dot = strstr(model, ".scn");
        if (dot) *dot = 0;
        if (s.n_steps < 2 || s.step[0].kind != ZS_STEP_TRAIN || s.step[1].kind != ZS_STEP_TRAIN) {
            fprintf(stderr, "bench_memory: %s: the first two steps are not train steps; skipped\n", model);
            continue;
        }
        fprintf(stderr, "[bench] memory: %s\n", model);
        if (zs_scenario_copy(&one, &s) || zs_scenario_copy(&two, &s)) return 1;
        one.n_steps = 1;
        keep_steps(&one);
        two.n_steps = 2;
        keep_steps(&two);
        uint64_t mn, mstack;
        minimums(&two, &mn, &mstack);
        for (int ru = 0; ru <= 1; ru++)
            for (int pf = 0; pf <= 1; pf++) {
                static zs_scenario t;
                if (zs_scenario_copy(&t, &two)) return 1;
                if (ru) t.cfg.max_reuse_distance = 0;
                t.cfg.deferred = 0;
                t.cfg.progress_every = 0;
                if (!pf) t.cfg.prefetch_bucket_size = 0;
                zs_sim_result r;
                int v = run(&t, &r);
                if (v) bad = 1;
                printf("memory\t%s\t%s\t%d\t%llu\t%llu\t%llu\t%llu\t%s\n", model, ru ? "0" : "default", pf,
                       (unsigned long long)r.stats.peak_live_numel, (unsigned long long)mn, (unsigned long long)mstack,
                       (unsigned long long)r.stats.persistent_live_numel, vname(v));
            }
        /* latency: an all-ranks model as rank 0's program on its own.  In
         * a host world a gather completes when the last rank issues it
         * (deferred mode and progress_every do not apply), so the world's
         * blocking waits depend on thread scheduling and step 2 minus
         * step 1 was not even non-negative; rank 0's program in the single
         * view has the simulated latency this benchmark measures. */
        static zs_scenario lone, ltwo;
        if (zs_scenario_copy(&lone, &one) || zs_scenario_copy(&ltwo, &two)) return 1;
        if (s.cfg.all_ranks) {
            char e1[256], e2[256];
            if (zs_scenario_for_rank(&one, 0, &lone, e1, sizeof e1) ||
                zs_scenario_for_rank(&two, 0, &ltwo, e2, sizeof e2)) {
                fprintf(stderr, "bench_memory: %s: rank 0's program: %s%s\n", model, e1, e2);
                bad = 1;
                continue;
            }
            fprintf(stderr, "[bench] memory: %s: latency rows are rank 0's program (all-ranks model)\n", model);
        }
        for (int ru = 0; ru <= 1; ru++)
            for (int li = 0; li < nlat; li++) {
                uint64_t blk[2], gat = 0, pre = 0;
                int vv = 0;
                for (int pf = 0; pf <= 1; pf++) {
                    static zs_scenario t1, t2;
                    if (zs_scenario_copy(&t1, &lone) || zs_scenario_copy(&t2, &ltwo)) return 1;
                    t1.cfg.deferred = t2.cfg.deferred = 1;
                    t1.cfg.progress_every = t2.cfg.progress_every = (uint8_t)lat[li];
                    if (!pf) t1.cfg.prefetch_bucket_size = t2.cfg.prefetch_bucket_size = 0;
                    if (ru) t1.cfg.max_reuse_distance = t2.cfg.max_reuse_distance = 0;
                    zs_sim_result r1, r2;
                    int v1 = run(&t1, &r1), v2 = run(&t2, &r2);
                    if (v1 || v2) bad = 1;
                    if (v2)
                        vv = v2;
                    else if (v1)
                        vv = v1;
                    blk[pf] = r2.stats.blocking_waits - r1.stats.blocking_waits;
                    if (pf) {
                        gat = r2.stats.gathers - r1.stats.gathers;
                        pre = r2.stats.prefetches - r1.stats.prefetches;
                        if (r2.stats.trace_invalidations != r1.stats.trace_invalidations)
                            fprintf(stderr, "bench_memory: %s: the trace was invalidated in step 2\n", model);
                    }
                }
                printf("latency\t%s\t%s\t%d\t%llu\t%llu\t%llu\t%llu\t%s\n", model, ru ? "0" : "default", lat[li],
                       (unsigned long long)blk[0], (unsigned long long)blk[1], (unsigned long long)gat,
                       (unsigned long long)pre, vname(vv));
            }
        fflush(stdout);
    }
    return bad;
}
