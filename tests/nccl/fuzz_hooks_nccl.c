/*
 * fuzz_hooks_nccl.c - fuzz_hooks with the NCCL data plane: every input is
 * decoded into a scenario and run by the simulator (fuzz/sim.c) exactly as
 * fuzz_hooks does, but the runtime's backend is the mirror backend
 * (tests/nccl/mirror_backend.h): every all-gather is issued on the host
 * backend and on the NCCL backend, and every gathered parameter is compared
 * (NCCL bytes vs host backend bytes vs the content function).  A mismatch is
 * a backend error, which the checker reports as a violation (abort), like
 * any other finding.
 *
 * Built by cmake/nccl.cmake as
 *   fuzz_hooks_nccl_replay FILE|DIR...   (fuzz/regression_driver.c main:
 *                                         replays a corpus)
 *   fuzz_hooks_nccl                      (libFuzzer, when ZO_FUZZ_ENGINE)
 * once fuzz/sim.h offers zs_sim_opts.wrap_backend.
 *
 * NCCL world: single process, one device (W = 1) by default.  Under a
 * launcher (WORLD_SIZE/RANK/LOCAL_RANK or OMPI_COMM_WORLD_*), every rank
 * runs the same inputs in the same order and the ranks meet through the file
 * bootstrap in $ZO_NCCL_BOOTSTRAP_DIR (default /tmp) with tag
 * $ZO_NCCL_RUN_ID.
 *
 * Environment: ZOFUZZ_POLICY, ZOFUZZ_CAP as fuzz_hooks;
 * ZO_MIRROR_MAX_BYTES (default 256 MiB: larger parameters are gathered on
 * the host backend only), ZO_MIRROR_COMPARE_BYTES (default 1 MiB compared
 * per parameter; 0 = all).  At exit it prints what was compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_backend.h"
#include "scenario.h"
#include "settings.h"
#include "sim.h"
#include "zoffload_nccl.h"

static int g_init, g_policy = 0;
static uint64_t g_cap = ZS_SIM_DEFAULT_CAP, g_max = 256ull << 20, g_cmp = 1ull << 20;
static zo_backend *g_nccl;
static zo_mirror_stats g_tot;
static unsigned long g_inputs;

static uint64_t env_u64(const char *name, uint64_t def) {
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : def;
}

static void report(void) {
    fprintf(stderr,
            "fuzz_hooks_nccl: %lu inputs; %llu gathered parameters compared (%llu bytes), %llu host-only "
            "(too large), %llu mismatches\n",
            g_inputs, (unsigned long long)g_tot.compared, (unsigned long long)g_tot.bytes_compared,
            (unsigned long long)g_tot.skipped_large, (unsigned long long)g_tot.mismatches);
    if (g_nccl) {
        zo_nccl_stats st;
        if (!zo_nccl_get_stats(g_nccl, &st))
            fprintf(stderr, "fuzz_hooks_nccl: nccl backend: %llu all-gathers, %llu bytes gathered\n",
                    (unsigned long long)st.gathers, (unsigned long long)st.bytes_gathered);
        zo_backend_destroy(g_nccl);
        g_nccl = NULL;
    }
}

static void init(void) {
    if (g_init) return;
    g_init = 1;
    zs_settings set; /* ZOFUZZ_POLICY, ZOFUZZ_CAP as fuzz_hooks reads them (fuzz/settings.h) */
    zs_settings_init(&set);
    char err[300];
    if (zs_settings_from_env(&set, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_hooks_nccl: %s\n", err);
        exit(2);
    }
    if (set.policy < 0) {
        fprintf(stderr, "fuzz_hooks_nccl: ZOFUZZ_POLICY=scenario is not offered here (name a policy)\n");
        exit(2);
    }
    g_policy = set.policy;
    g_cap = set.cap;
    g_max = env_u64("ZO_MIRROR_MAX_BYTES", g_max);
    g_cmp = env_u64("ZO_MIRROR_COMPARE_BYTES", g_cmp);
    zo_nccl_config cfg = ZO_NCCL_CONFIG_INIT;
    cfg.wait_host = 1;
    cfg.wait_timeout_ms = 120000; /* a rank that diverged fails instead of hanging */
    zo_status s = zo_nccl_config_from_env(&cfg);
    if (!s && cfg.world_size > 1) {
        const char *dir = getenv("ZO_NCCL_BOOTSTRAP_DIR");
        s = zo_backend_nccl_create_file(&cfg, dir && *dir ? dir : "/tmp", NULL, &g_nccl);
    } else if (!s) {
        s = zo_backend_nccl_create_all(&cfg, 1, NULL, &g_nccl);
    }
    if (s) {
        fprintf(stderr, "fuzz_hooks_nccl: cannot create the NCCL backend: %s: %s\n", zo_strerror(s),
                zo_nccl_create_error());
        exit(2);
    }
    fprintf(stderr, "fuzz_hooks_nccl: policy %s, NCCL world %d rank %d device %d\n", zs_policy_name((unsigned)g_policy),
            g_nccl->ops->world_size(g_nccl->ctx), g_nccl->ops->rank(g_nccl->ctx), zo_nccl_device(g_nccl));
    atexit(report);
}

static zo_status wrap(void *user, zo_backend *host, zo_backend **out) {
    (void)user;
    return zo_mirror_create(host, g_nccl, g_max, g_cmp, out);
}

static void unwrap(void *user, zo_backend *m) {
    (void)user;
    zo_mirror_stats st = zo_mirror_get_stats(m);
    g_tot.compared += st.compared;
    g_tot.bytes_compared += st.bytes_compared;
    g_tot.skipped_large += st.skipped_large;
    g_tot.mismatches += st.mismatches;
    if (st.mismatches) fprintf(stderr, "fuzz_hooks_nccl: %s\n", zo_mirror_first_mismatch(m));
    zo_backend_destroy(m);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static zs_scenario s;
    init();
    g_inputs++;
    zs_decode(data, size, &s);
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = g_policy;
    o.max_bytes_per_param = g_cap;
    o.abort_on_violation = 1;
    o.wrap_backend = wrap;
    o.unwrap_backend = unwrap;
    o.wrap_user = NULL;
    zs_sim_result r;
    zs_sim_run(&s, &o, &r);
    return 0;
}
