/*
 * run.h - the one way to run a scenario to a verdict.
 *
 * zs_run chooses how to run a scenario itself: a scenario with per-rank
 * programs (cfg.all_ranks) runs every rank in one host world (fuzz/world.h:
 * each rank its own simulator and runtime, invariant I8 included); any
 * other scenario runs in one rank's view (fuzz/sim.h).  It applies the
 * knobs of zs_run_opts (policy, order, cap, verify_collectives and the
 * all-ranks environment: rank-edit kinds, gather-always routers, which
 * invariants count) and returns one verdict.
 *
 * Every fuzz target, every zofuzz subcommand, the minimiser's default
 * predicate and the enumerator run scenarios through it; zs_sim_run and
 * zs_world_run_ex are the two engines underneath.
 */
#ifndef ZS_RUN_H
#define ZS_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "scenario.h"
#include "settings.h"
#include "sim.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The verdict of a run the runtime refused to set up (the .scn verdict
 *  "setup"; scn.h's ZS_SCN_SETUP is the same value). */
#define ZS_RUN_SETUP 100

/** How zs_run runs a scenario.  zs_run_opts_init gives the defaults. */
typedef struct zs_run_opts {
    int policy;             /* zo_grads_policy, or -1 (default): the scenario's */
    int order_mode;         /* ZS_ORDER_ENGINE / ZS_ORDER_FUZZED, or -1 (default): the scenario's */
    uint64_t cap;           /* bytes the host backend stores per parameter; 0 = full copies
                                (default ZS_SIM_DEFAULT_CAP) */
    int verify_collectives; /* 0 / 1, or -1 (default): the scenario's */
    int stop_on_violation;  /* 1 (default): stop at the first violation; 0: run to the end
                                (one rank's view only: the world stops every rank at its first
                                violation, and runs past them with env.only_i8) */
    int abort_on_violation; /* 1: print the finding (the world: its long report) to stderr and
                                abort() - a fuzz target's crash; default 0 */
    int skip_discard_i3;    /* triage only: no I3 check after a graph discard; default 0 */
    int one_rank;           /* 1: run only rank cfg.rank's view even of an all-ranks scenario
                                (no I8); default 0: all-ranks scenarios run in the world */
    zs_world_env env;       /* all-ranks scenarios: which rank-edit kinds stay, gather-always
                                routers, which invariants count (fuzz/world.h; settings
                                "edits", "gather-always", "invariants").  Default: every edit
                                kind, no remedy, any divergence is I8 (invariants=programs).
                                With env.only_i8 a scenario that runs in one rank's view is not
                                run at all (no I8 to check: verdict ZS_INV_NONE, ran 0) */
    FILE *trace;            /* canonical hook trace (docs/scenario-model.md section 4), or NULL;
                                the world writes every rank's after the run ("# rank R") */
    FILE *events;           /* every runtime event and simulator action, or NULL; likewise */
    FILE *report;           /* world: on a finding, its one-line form and long report, or NULL */
    zs_world_result *world; /* world: NULL, or caller memory (about 20 KB, not kept) that gets
                                the world's details (per-rank results, I8 divergence) */
    /* one rank's view, fuzzed order only: called at every ready-node choice
     * k with the number of ready nodes n_ready (zs_sim_opts.on_choice) */
    void (*on_choice)(void *user, unsigned k, unsigned n_ready);
    void *choice_user;
    /* one rank's view only: every allocation of the run goes through it
     * (zs_sim_opts.allocator; the fuzz targets' per-execution arena,
     * fuzz/arena.h).  NULL (default), and always in the world: malloc. */
    const zo_allocator *allocator;
    /* the world, its ranks run as coroutines (env.threads 0) only: the
     * allocators of each rank's run and of the host world
     * (zs_world_opts.rank_alloc, world_alloc), one for each; NULL
     * (default): malloc */
    const zo_allocator *rank_allocator[ZS_MAX_WORLD];
    const zo_allocator *world_allocator;
} zs_run_opts;

/** Sets every field of *o to its default (above). */
void zs_run_opts_init(zs_run_opts *o);

/** Sets the fields of *o that the fuzz settings table holds (fuzz/settings.h:
 *  policy, order, cap, verify, skip-discard-i3, invariants, gather-always,
 *  edits) from *st, as the fuzz targets run their inputs.  ZOFUZZ_TRACE is
 *  not a run option (the caller points o->trace where it wants). */
void zs_run_opts_from_settings(zs_run_opts *o, const zs_settings *st);

/** What one run gave. */
typedef struct zs_outcome {
    int verdict;            /* ZS_INV_NONE (every invariant held), ZS_INV_I1..ZS_INV_ERR,
                                ZS_INV_I8 (world only), or ZS_RUN_SETUP (r.setup_msg says why) */
    int ran;                /* 0: nothing ran (env.only_i8 on one rank's view) */
    int in_world;           /* 1: every rank ran in the host world; 0: one rank's view */
    int policy, order_mode; /* the policy and order it ran under */
    int64_t divergence;     /* world: first collective index where the ranks' sequences
                                differ, whether or not that counts as I8; else -1 */
    zs_sim_result r;        /* one rank's view: the simulator's result.  World: the summary
                                (zs_world_to_sim_result): the finding (I8 included), PyTorch and
                                setup errors, counters summed over the ranks, stats of rank 0 */
} zs_outcome;

/** Runs scenario s (valid: zs_scenario_validate; not changed - the env
 *  knobs apply to a private copy) as *o says (NULL: the defaults) and fills
 *  *out.  Returns out->verdict; with abort_on_violation a finding does not
 *  return.  A policy outside 0..3 or an order_mode other than -1,
 *  ZS_ORDER_ENGINE, ZS_ORDER_FUZZED, a scenario copy that runs out of
 *  memory, or a runtime that refuses the scenario give ZS_RUN_SETUP with
 *  the reason in out->r.setup_msg.  Returns -1 (out untouched) if s or out
 *  is NULL.  Not reentrant within one thread (a thread-local scenario copy
 *  and world result are reused); threads may run concurrently. */
int zs_run(const zs_scenario *s, const zs_run_opts *o, zs_outcome *out);

#ifdef __cplusplus
}
#endif
#endif /* ZS_RUN_H */
