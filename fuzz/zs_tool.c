/*
 * zs_tool - small CLI over the scenario model and simulator (until zofuzz
 * exists, and for the PyTorch oracle's tests).
 *
 *   zs_tool json FILE                      scenario (raw fuzzer bytes) as JSON
 *   zs_tool trace FILE [--policy P] [--order engine|fuzzed]
 *                                          canonical hook trace (docs/scenario-model.md §4)
 *   zs_tool check FILE [--policy P] [--order O] [--events]
 *                                          run the invariant checker; exit 0 holds, 1 violated
 *   zs_tool gen --seed S [--max N] [-o OUT]
 *                                          a random scenario's canonical bytes
 *   zs_tool canon FILE -o OUT              re-encode bytes canonically
 *   zs_tool smoke --seed S [--trials N] [--max N] [--policy P] [--order O]
 *                                          N random scenarios (seeded) through the simulator;
 *                                          the first violation is written to smoke-fail.bin
 *
 * Exit codes: 0 ok / invariants hold, 1 violation, 2 usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenario.h"
#include "scenario_json.h"
#include "run.h"
#include "sim.h"
#include "world.h"
#include "zs_random.h"

static uint8_t buf[1u << 20];
static uint8_t enc[ZS_ENCODE_MAX];
static zs_scenario sc;

static int usage(void)
{
    fprintf(stderr,
            "usage: zs_tool json FILE\n"
            "       zs_tool trace FILE [--policy P] [--order engine|fuzzed]\n"
            "       zs_tool check FILE [--policy P] [--order engine|fuzzed] [--events]\n"
            "       zs_tool gen --seed S [--max N] [-o OUT]\n"
            "       zs_tool canon FILE -o OUT\n"
            "       zs_tool smoke --seed S [--trials N] [--max N] [--policy P] [--order O]\n"
            "policies: per-call, reset-on-forward, lazy-init, init-at-register\n");
    return 2;
}

static long read_file(const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        perror(path);
        return -1;
    }
    size_t n = fread(buf, 1, sizeof buf, f);
    if (f != stdin) fclose(f);
    return (long)n;
}

static int write_bytes(const char *out, const uint8_t *b, size_t n)
{
    FILE *f = out ? fopen(out, "wb") : stdout;
    if (!f) {
        perror(out);
        return 2;
    }
    fwrite(b, 1, n, f);
    if (out) fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *cmd = argv[1];
    const char *file = NULL, *out = NULL;
    int policy = -1, order = -1, events = 0;
    uint64_t seed = 0;
    size_t max = 512;
    int have_seed = 0;
    unsigned long trials = 1000;
    int keep_going = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
            policy = zs_policy_from_name(argv[++i]);
            if (policy < 0) return usage();
        } else if (!strcmp(argv[i], "--order") && i + 1 < argc) {
            i++;
            if (!strcmp(argv[i], "engine"))
                order = ZS_ORDER_ENGINE;
            else if (!strcmp(argv[i], "fuzzed"))
                order = ZS_ORDER_FUZZED;
            else
                return usage();
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
            have_seed = 1;
        } else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            max = (size_t)strtoull(argv[++i], NULL, 0);
            if (max > sizeof buf) max = sizeof buf;
        } else if (!strcmp(argv[i], "--trials") && i + 1 < argc) {
            trials = strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--keep-going")) {
            keep_going = 1;
        } else if (!strcmp(argv[i], "--events")) {
            events = 1;
        } else if (argv[i][0] != '-' || !strcmp(argv[i], "-")) {
            file = argv[i];
        } else {
            return usage();
        }
    }
    if (!strcmp(cmd, "gen")) {
        if (!have_seed) return usage();
        size_t n = zs_rand_input(seed, 0, buf, max);
        zs_decode(buf, n, &sc);
        size_t m = zs_encode(&sc, enc, sizeof enc);
        if (m == 0 || m > sizeof enc) return 2;
        return write_bytes(out, enc, m);
    }
    if (!strcmp(cmd, "smoke")) {
        if (!have_seed) return usage();
        zs_run_opts o;
        zs_run_opts_init(&o);
        o.policy = policy < 0 ? 0 : policy;
        o.order_mode = order;
        unsigned long torch = 0, misses = 0, bwd = 0, rec = 0, violations = 0;
        unsigned long ranked = 0, diverged = 0;
        /* random rank edits diverge by construction: every invariant but
         * I8 on each rank of the world, divergences counted */
        o.env.skip_i8 = 1;
        static char keys[64][80];
        static unsigned long counts[64];
        unsigned n_keys = 0;
        clock_t t0 = clock();
        for (unsigned long t = 0; t < trials; t++) {
            size_t n = zs_rand_input(seed, t, buf, max);
            zs_decode(buf, n, &sc);
            zs_outcome res;
            int rc = zs_run(&sc, &o, &res) != ZS_INV_NONE;
            const zs_sim_result r = res.r;
            if (res.in_world) {
                ranked++;
                diverged += res.divergence >= 0;
            }
            torch += r.torch_error;
            misses += r.i3_hook_misses != 0;
            bwd += r.backwards;
            rec += r.recomputes;
            if (rc && keep_going) {
                /* tally by invariant and action kind; print the first of each */
                char key[80];
                snprintf(key, sizeof key, "%s %.*s", zs_inv_name(r.v.inv),
                         (int)strcspn(r.v.what, " "), r.v.what);
                unsigned k = 0;
                while (k < n_keys && strcmp(keys[k], key)) k++;
                if (k == n_keys && n_keys < 64) {
                    snprintf(keys[n_keys++], sizeof keys[0], "%s", key);
                    char line[512];
                    zs_violation_format(&r.v, line, sizeof line);
                    printf("first %s: trial %lu: %s\n", key, t, line);
                }
                if (k < 64) counts[k]++;
                violations++;
                continue;
            }
            if (rc) {
                char line[512];
                zs_violation_format(&r.v, line, sizeof line);
                printf("trial %lu (seed %llu): %s\n", t, (unsigned long long)seed, line);
                size_t m = zs_encode(&sc, enc, sizeof enc);
                if (m && m <= sizeof enc && write_bytes(out ? out : "smoke-fail.bin", enc, m) == 0)
                    printf("scenario written to %s\n", out ? out : "smoke-fail.bin");
                return 1;
            }
        }
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        if (keep_going) {
            for (unsigned k = 0; k < n_keys; k++) printf("%6lu  %s\n", counts[k], keys[k]);
            printf("smoke: %lu of %lu scenarios violated an invariant; %lu backwards, %lu "
                   "recomputes, %lu with I3-hooks misses (parameters the hooks left to the "
                   "end-of-backward callback)\n",
                   violations, trials, bwd, rec, misses);
            return violations ? 1 : 0;
        }
        printf("smoke: %lu scenarios, policy %s, no violation; %lu backwards, %lu recomputes, "
               "%lu stopped by a PyTorch error, %lu with I3-hooks misses; %lu all-ranks in the "
               "host world (%lu with diverging collectives, I8 not checked here); "
               "%.0f scenarios/s\n",
               trials, zs_policy_name((unsigned)o.policy), bwd, rec, torch, misses, ranked,
               diverged, secs > 0 ? trials / secs : 0.0);
        return 0;
    }
    if (!file) return usage();
    long n = read_file(file);
    if (n < 0) return 2;
    zs_decode(buf, (size_t)n, &sc);
    if (!strcmp(cmd, "json")) return zs_scenario_write_json(&sc, stdout) ? 2 : 0;
    if (!strcmp(cmd, "canon")) {
        size_t m = zs_encode(&sc, enc, sizeof enc);
        if (m == 0 || m > sizeof enc) return 2;
        return write_bytes(out, enc, m);
    }
    zs_run_opts o;
    zs_run_opts_init(&o);
    o.policy = policy;
    o.order_mode = order;
    zs_outcome res;
    static zs_world_result wres;
    o.world = &wres;
    if (sc.cfg.all_ranks && (!strcmp(cmd, "trace") || !strcmp(cmd, "check"))) {
        /* every rank in the host world, I8 included (fuzz/world.h) */
        if (!strcmp(cmd, "trace")) o.trace = stdout;
        if (events) o.events = stdout;
        int rc = zs_run(&sc, &o, &res) != ZS_INV_NONE;
        if (!strcmp(cmd, "check")) zs_world_print(stdout, &wres);
        return !strcmp(cmd, "trace") ? 0 : rc != 0;
    }
    if (!strcmp(cmd, "trace")) {
        o.trace = stdout;
        zs_run(&sc, &o, &res);
        return 0;
    }
    if (!strcmp(cmd, "check")) {
        if (events) o.events = stdout;
        int rc = zs_run(&sc, &o, &res) != ZS_INV_NONE;
        const zs_sim_result r = res.r;
        if (r.torch_error) printf("pytorch would raise: %s\n", r.torch_msg);
        printf("events %llu, hook calls %llu, backwards %llu, recomputes %llu, "
               "I3 checks %llu, I3-hooks misses %llu/%llu\n",
               (unsigned long long)r.events, (unsigned long long)r.hook_calls,
               (unsigned long long)r.backwards, (unsigned long long)r.recomputes,
               (unsigned long long)r.i3_checks, (unsigned long long)r.i3_hook_misses,
               (unsigned long long)r.i3_hook_checks);
        if (r.i3_hook_misses) printf("first I3-hooks miss: %s\n", r.i3_hook_first);
        if (rc) {
            char line[512];
            zs_violation_format(&r.v, line, sizeof line);
            printf("%s\n", line);
            return 1;
        }
        printf("all invariants hold\n");
        return 0;
    }
    return usage();
}
