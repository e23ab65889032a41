/*
 * sim.h - executes a scenario against the real zoffload runtime, calling
 * the hooks exactly when PyTorch 1.13 with DeepSpeed's stage-3 hook
 * registration would, and checks the invariants (check.h) as it goes.
 *
 * The execution semantics (grad mode, autograd graph, sequence numbers,
 * ready-node orders, checkpoint recomputes, exceptions) are specified in
 * docs/scenario-model.md section 3; the canonical hook trace in section 4.
 */
#ifndef ZS_SIM_H
#define ZS_SIM_H

#include <stdio.h>

#include "check.h"
#include "scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default physical cap on stored/copied bytes per parameter in the host
 *  backend (zo_host_config.max_bytes_per_param).  Bytes past the cap are
 *  neither stored nor compared; control flow and every invariant see the
 *  full numel. */
#define ZS_SIM_DEFAULT_CAP 64u

typedef struct zs_sim_opts {
    int policy;              /* -1: the scenario's; else a zo_grads_policy */
    int order_mode;          /* -1: the scenario's; else ZS_ORDER_ENGINE/FUZZED */
    uint64_t max_bytes_per_param; /* host backend cap; 0 = none (full copies) */
    int abort_on_violation;  /* 1: print the violation and abort() */
    int stop_on_violation;   /* 1: stop executing at the first violation (default for repro) */
    FILE *trace;             /* canonical hook trace (docs/scenario-model.md §4), or NULL */
    FILE *events;            /* every runtime event and simulator action, or NULL */
    /* optional: the runtime gets wrap_backend(wrap_user, host) instead of the
     * host backend (which the checker and zo_host_progress keep using), e.g.
     * tests/nccl/mirror_backend.h; unwrap_backend frees it after the runtime */
    zo_status (*wrap_backend)(void *user, zo_backend *host, zo_backend **out);
    void (*unwrap_backend)(void *user, zo_backend *wrapped);
    void *wrap_user;
    int skip_discard_i3;     /* triage only: do not check I3 after a graph discard (lets a
                                fuzzer look past that one known finding class) */
    /* optional, fuzzed order only: called at every ready-node choice k
     * (0, 1, ... in the run, the index into zs_scenario.order[]) with the
     * number of ready nodes n_ready it chooses among (order[k] % n_ready);
     * lets the enumerator explore every choice exactly */
    void (*on_choice)(void *user, unsigned k, unsigned n_ready);
    void *choice_user;
} zs_sim_opts;
#define ZS_SIM_HAS_ON_CHOICE 1

/** Defaults: scenario's policy and order, cap ZS_SIM_DEFAULT_CAP, no
 *  abort, stop at the first violation, no output. */
void zs_sim_opts_init(zs_sim_opts *o);

typedef struct zs_sim_result {
    int violated;            /* 1: v holds the first violation */
    zs_violation v;
    int torch_error;         /* 1: PyTorch would have raised (run stopped there, not a finding) */
    char torch_msg[128];
    int setup_error;         /* the runtime refused the scenario's config/registration */
    char setup_msg[256];
    uint64_t events;         /* runtime events */
    uint64_t hook_calls;     /* runtime entry points called */
    uint64_t backwards;      /* top-level backwards run */
    uint64_t recomputes;     /* checkpoint recomputes */
    uint64_t i3_checks;
    uint64_t i3_hook_checks, i3_hook_misses; /* I3-hooks statistic */
    char i3_hook_first[160];
    zo_stats stats;          /* runtime stats at the end */
} zs_sim_result;

/** Runs scenario s (which must be valid: zs_scenario_validate) and fills
 *  *r.  Returns 0 if every invariant held, 1 on a violation, -1 if the
 *  runtime could not be set up (r->setup_msg says why; not a finding for
 *  valid scenarios, which the runtime must accept - treated as ERR).  With
 *  abort_on_violation a violation never returns. */
int zs_sim_run(const zs_scenario *s, const zs_sim_opts *o, zs_sim_result *r);

#ifdef __cplusplus
}
#endif
#endif /* ZS_SIM_H */
