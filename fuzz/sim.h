/*
 * sim.h - executes a scenario against the real zoffload runtime, calling
 * the hooks exactly when PyTorch (the scenario's torch profile: torch 2.x,
 * the default, or 1.13) with DeepSpeed's stage-3 hook registration would,
 * and checks the invariants (check.h) as it goes.
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
#include "zoffload_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default physical cap on stored/copied bytes per parameter in the host
 *  backend (zo_host_testing.max_bytes_per_param).  Bytes past the cap are
 *  neither stored nor compared; control flow and every invariant see the
 *  full numel. */
#define ZS_SIM_DEFAULT_CAP 64u

typedef struct zs_sim_opts {
    int policy;                   /* -1: the scenario's; else a zo_grads_policy */
    int order_mode;               /* -1: the scenario's; else ZS_ORDER_ENGINE/FUZZED */
    uint64_t max_bytes_per_param; /* host backend cap; 0 = none (full copies) */
    int abort_on_violation;       /* 1: print the violation and abort() */
    int stop_on_violation;        /* 1: stop executing at the first violation (default for repro) */
    FILE *trace;                  /* canonical hook trace (docs/scenario-model.md §4), or NULL */
    FILE *events;                 /* every runtime event and simulator action, or NULL */
    /* optional: the runtime gets wrap_backend(wrap_user, host) instead of the
     * host backend (which the checker and zo_host_progress keep using), e.g.
     * tests/nccl/mirror_backend.h; unwrap_backend frees it after the runtime */
    zo_status (*wrap_backend)(void *user, zo_backend *host, zo_backend **out);
    void (*unwrap_backend)(void *user, zo_backend *wrapped);
    void *wrap_user;
    int skip_discard_i3; /* triage only: do not check I3 after a graph discard (lets a
                                fuzzer look past that one known finding class) */
    /* optional, fuzzed order only: called at every ready-node choice k
     * (0, 1, ... in the run, the index into zs_scenario.order[]) with the
     * number of ready nodes n_ready it chooses among (order[k] % n_ready);
     * lets the enumerator explore every choice exactly */
    void (*on_choice)(void *user, unsigned k, unsigned n_ready);
    void *choice_user;

    /* ---- many ranks (fuzz/world.h sets these) ---- */
    /* a multi-rank host world to join: the host backend is created with
     * zo_host_config.world = world, rank = s->cfg.rank (the world's size
     * must be s->cfg.world_size); deferred completion and zo_host_progress
     * do not apply to world backends.  NULL: one rank's view. */
    zo_host_world *world;
    /* if set: before every runtime call the simulator writes its current
     * hook stack, NUL-terminated, into context[0..context_len): step and
     * pass, forward/backward (recompute), the chain of active module calls
     * (module name or mN, #call index in this rank's pass), and the hook
     * being called, e.g.
     *   "step 1 (train) pass 0 forward: root(m0)#0 > moe(m2)#3 > expert1(m4)#5: A m=4 (pre-forward)"
     * Costs nothing when NULL. */
    char *context;
    size_t context_len;
    /* the lazy form (what fuzz/world.c uses: formatting costs ~5 us per
     * hook under ASan, and only the stacks at collectives are wanted): if
     * set, *context_handle is the running simulator during zs_sim_run
     * (NULL before and after), and zs_sim_context() formats its current
     * hook stack on demand - from the simulator's own thread only (e.g.
     * inside a backend wrapper the runtime calls). */
    const void **context_handle;
    int verify_collectives;           /* -1: the scenario's cfg.verify_collectives; else 0/1 for
                                zo_config.verify_collectives */
    int collective_mismatch_stops;    /* 1 (world ranks): ZO_ERR_COLLECTIVE_MISMATCH from a hook
                                (or as a runtime error event) stops this rank and is recorded in
                                zs_sim_result.collective_mismatch - a consequence of I8, not a
                                violation.  0: it is an ERR violation like any error. */
    void (*on_violation)(void *user); /* optional: called once when the first violation is
                                recorded (before abort_on_violation aborts) */
    void *violation_user;
    /* optional: every allocation of the run - the simulator's, the runtime's
     * (zo_config.allocator) and its host backend's (zo_host_config.allocator)
     * - goes through it, e.g. the fuzz targets' per-execution arena
     * (fuzz/arena.h); used on the simulator's thread only.  NULL: malloc. */
    const zo_allocator *allocator;
} zs_sim_opts;
#define ZS_SIM_HAS_WORLD 1

/** Defaults: scenario's policy, order and verify_collectives, cap
 *  ZS_SIM_DEFAULT_CAP, no abort, stop at the first violation, no output,
 *  single view (no world), no context. */
void zs_sim_opts_init(zs_sim_opts *o);

typedef struct zs_sim_result {
    int violated; /* 1: v holds the first violation */
    zs_violation v;
    int torch_error; /* 1: PyTorch would have raised (run stopped there, not a finding) */
    char torch_msg[128];
    int setup_error; /* the runtime refused the scenario's config/registration */
    char setup_msg[256];
    uint64_t events;     /* runtime events */
    uint64_t hook_calls; /* runtime entry points called */
    uint64_t backwards;  /* top-level backwards run */
    uint64_t recomputes; /* checkpoint recomputes */
    uint64_t i3_checks;
    uint64_t i3_hook_checks, i3_hook_misses; /* I3-hooks statistic */
    char i3_hook_first[160];
    zo_stats stats;             /* runtime stats at the end */
    int collective_mismatch;    /* collective_mismatch_stops: a hook got ZO_ERR_COLLECTIVE_MISMATCH
                                and the rank stopped there */
    char mismatch_msg[256];     /* "zo_pre_forward: <zo_last_error>" at that point */
    char mismatch_context[256]; /* the hook stack then (only with opts.context) */
} zs_sim_result;

/** Writes the hook stack of the simulator `handle` (from
 *  zs_sim_opts.context_handle) into buf[0..len), NUL-terminated, in the
 *  format of zs_sim_opts.context.  Call only on the simulator's thread. */
void zs_sim_context(const void *handle, char *buf, size_t len);

/** The same hook stack saved as data, to be formatted only if it is ever
 *  reported: a few stores instead of a dozen snprintf calls.  Plain data
 *  (the pointers are to static strings), zero-filled where unused, so two
 *  saves compare with memcmp. */
#define ZS_SIM_CTX_FRAMES 8
typedef struct zs_sim_ctx {
    const char *fixed; /* a fixed text ("setup", "teardown ..."), or NULL: */
    const char *fmt;   /* the hook being called (two int arguments a, b) */
    const char *phase; /* "forward", "backward", ... */
    int a, b;
    int step, pass, graph; /* -1: none */
    int recompute;
    uint32_t depth;                                           /* active calls */
    uint32_t mod[ZS_SIM_CTX_FRAMES], call[ZS_SIM_CTX_FRAMES]; /* the frames the text shows:
                                all of a chain up to 8 deep, else the outermost two and the
                                innermost five */
} zs_sim_ctx;
/** Saves the hook stack of `handle` (as zs_sim_context; on its thread). */
void zs_sim_context_save(const void *handle, zs_sim_ctx *out);
/** Formats a saved hook stack as zs_sim_context did when it was saved: s is
 *  the scenario that simulator ran (module names, step kinds). */
void zs_sim_context_format(const zs_scenario *s, const zs_sim_ctx *c, char *buf, size_t len);

/** The one-rank engine under zs_run (fuzz/run.h), which callers use;
 *  called directly by zs_run, the world's rank threads and their own tests.
 *  Runs scenario s (which must be valid: zs_scenario_validate) and fills
 *  *r.  Returns 0 if every invariant held, 1 on a violation (a runtime
 *  refusing a valid scenario's setup is one: ERR), -1 if the run could not
 *  be set up for want of memory - the simulator's, or the host backend's
 *  for the shards, which a cap of 0 stores in full (r->setup_msg says
 *  why; no verdict).  With abort_on_violation a violation never returns. */
int zs_sim_run(const zs_scenario *s, const zs_sim_opts *o, zs_sim_result *r);

#ifdef __cplusplus
}
#endif
#endif /* ZS_SIM_H */
