/*
 * fuzz_hooks - the main fuzz target: realistic hook orders.
 *
 * The input is decoded into a scenario (fuzz/codec.c: every byte string is
 * a valid scenario), executed against the real runtime by the
 * PyTorch-faithful simulator (fuzz/sim.c) and checked after every event
 * (fuzz/check.c).  A violation prints the invariant, step, event, module,
 * parameter and policy and aborts, so the engine records a crash.
 *
 * Environment:
 *   ZOFUZZ_POLICY   per-call (default) | reset-on-forward | lazy-init |
 *                   init-at-register | scenario (use the scenario's policy byte)
 *   ZOFUZZ_ORDER    engine | fuzzed | scenario (default: the scenario's choice)
 *   ZOFUZZ_CAP      physical bytes stored per parameter in the host backend
 *                   (default 64; 0 = full copies)
 *   ZOFUZZ_TRACE=1  print the canonical hook trace of every input to stderr
 *   ZOFUZZ_SKIP_DISCARD_I3=1  triage only: skip the I3 check after a graph
 *                   discard, to look past that finding class while it is open
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sim.h"

static int g_init, g_policy = 0, g_order = -1, g_trace, g_skip_discard;
static uint64_t g_cap = ZS_SIM_DEFAULT_CAP;

static void init_env(void)
{
    if (g_init) return;
    g_init = 1;
    const char *p = getenv("ZOFUZZ_POLICY");
    if (p && *p) {
        if (!strcmp(p, "scenario"))
            g_policy = -1;
        else if ((g_policy = zs_policy_from_name(p)) < 0) {
            fprintf(stderr, "fuzz_hooks: unknown ZOFUZZ_POLICY '%s' (per-call, reset-on-forward, "
                            "lazy-init, init-at-register, scenario)\n", p);
            exit(2);
        }
    }
    const char *o = getenv("ZOFUZZ_ORDER");
    if (o && !strcmp(o, "engine")) g_order = ZS_ORDER_ENGINE;
    if (o && !strcmp(o, "fuzzed")) g_order = ZS_ORDER_FUZZED;
    const char *c = getenv("ZOFUZZ_CAP");
    if (c && *c) g_cap = strtoull(c, NULL, 0);
    const char *t = getenv("ZOFUZZ_TRACE");
    g_trace = t && *t && strcmp(t, "0");
    const char *sd = getenv("ZOFUZZ_SKIP_DISCARD_I3");
    g_skip_discard = sd && *sd && strcmp(sd, "0");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    init_env();
    fprintf(stderr, "fuzz_hooks: policy %s\n",
            g_policy < 0 ? "from the scenario" : zs_policy_name((unsigned)g_policy));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static zs_scenario s;
    init_env();
    zs_decode(data, size, &s);
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = g_policy;
    o.order_mode = g_order;
    o.max_bytes_per_param = g_cap;
    o.abort_on_violation = 1;
    if (g_trace) o.trace = stderr;
    o.skip_discard_i3 = g_skip_discard;
    zs_sim_result r;
    zs_sim_run(&s, &o, &r);
    return 0;
}
