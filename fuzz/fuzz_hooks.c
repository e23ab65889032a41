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
 *
 * All-ranks inputs (cfg.all_ranks, per-rank programs) run every
 * rank in one host world (fuzz/world.h: W threads) and also check I8
 * (identical collective sequences across ranks):
 *   ZOFUZZ_INVARIANTS=all     (default) I8 only where the runtime is to blame
 *                   (zs_world_i8_runtime_blamed): ranks whose programs differ
 *                   only by routing inside gather-always modules, or a
 *                   diverging all-gather that got past verify_collectives;
 *                   a divergence the programs explain is counted, not reported,
 *                   and every other invariant is still checked
 *   ZOFUZZ_INVARIANTS=programs  every invariant, and any divergence is I8
 *                   (find where a model's ranks diverge)
 *   ZOFUZZ_INVARIANTS=I8      check only I8: ranks run on past their own
 *                   I1-I7/ERR violations (I8 under legacy policies, which
 *                   break I1/I3 anyway); single-rank inputs then check nothing
 *   ZOFUZZ_INVARIANTS=no-I8   every invariant but I8 (all-ranks inputs still
 *                   run in the world; their rank edits diverge by design)
 *   ZOFUZZ_GATHER_ALWAYS=routers  before running, mark the parent module of
 *                   every ROUTE edit's base callee ZS_MOD_GATHER_ALWAYS where
 *                   the scenario stays valid (the remedy under test)
 *   ZOFUZZ_EDITS=route|skip|exit|raise|skip-step[,...]  keep only rank edits
 *                   of these kinds (default: all)
 *   ZOFUZZ_VERIFY=0|1  zo_config.verify_collectives for every input
 *                   (default: the scenario's)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sim.h"
#include "world.h"

static int g_init, g_policy = 0, g_order = -1, g_trace, g_skip_discard;
static int g_verify = -1;
static zs_world_env g_env;
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
    char err[200];
    if (zs_world_env_read(&g_env, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_hooks: %s\n", err);
        exit(2);
    }
    const char *vf = getenv("ZOFUZZ_VERIFY");
    if (vf && *vf) g_verify = atoi(vf) ? 1 : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    init_env();
    fprintf(stderr, "fuzz_hooks: policy %s%s%s%s\n",
            g_policy < 0 ? "from the scenario" : zs_policy_name((unsigned)g_policy),
            g_env.only_i8 ? ", only I8 (any divergence)" : g_env.skip_i8 ? ", I8 not checked" : g_env.blame_runtime ? ", I8 where the runtime is to blame" : ", any divergence is I8", g_env.protect_routers ? ", gather-always routers" : "",
            g_env.edit_mask != ~0u ? ", some edit kinds only" : "");
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
    o.verify_collectives = g_verify;
    if (s.cfg.all_ranks) {
        static zs_world_result wr;
        zs_world_opts wo;
        zs_world_opts_init(&wo);
        wo.only_i8 = g_env.only_i8;
        wo.skip_i8 = g_env.skip_i8;
        wo.blame_runtime = g_env.blame_runtime;
        zs_world_env_apply(&g_env, &s);
        zs_world_run_ex(&s, &o, &wo, &wr); /* aborts on a finding */
        return 0;
    }
    if (g_env.only_i8) return 0; /* one rank's view: no I8 to check */
    zs_sim_result r;
    zs_sim_run(&s, &o, &r);
    return 0;
}
