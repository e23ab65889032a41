/*
 * minimize.h - structure-aware scenario minimiser (delta debugging over
 * the scenario model, not over bytes).
 *
 * Given a scenario that violates invariant X under policy P, the
 * minimiser repeatedly tries smaller variants - drop a step, a pass, a
 * call with its subtree, a module (ids re-indexed), a parameter, a use,
 * an input, an output, a consumed tensor, a loss term; clear a flag
 * (no_grad, checkpoint, raise, detach, z3_leaf, gather_always, frozen);
 * turn a step into a plain train step; lower numel / W / rank; move a
 * parameter to its owner's parent module; move config values to their
 * defaults (all_ranks and verify_collectives included); drop a rank edit;
 * shorten or zero the fuzzed order bytes - and keeps a variant
 * only if it is valid (zs_scenario_validate) and zs_run still reports
 * the SAME invariant X under the same policy P and the same backward
 * order.  It repeats until no variant is accepted (a fixpoint).  Every
 * accepted variant is strictly smaller in a well-founded order (the size
 * vector of zs_min_cost, compared lexicographically), so it terminates.
 *
 * The result has cfg.policy = P and the order mode it was reproduced
 * with, so `zofuzz repro` on it reproduces without options.
 *
 * Rank edits (all-ranks scenarios) follow the structure: removing a step,
 * pass, call or module renumbers the edits that name what stays and drops
 * the ones that named what went (or that the change made invalid), so
 * every candidate is a valid scenario; an edit the predicate needs keeps
 * the calls it names.
 */
#ifndef ZS_MINIMIZE_H
#define ZS_MINIMIZE_H

#include <stdint.h>

#include "scenario.h"
#include "run.h"
#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zs_min_opts {
    int policy;             /* -1: the scenario's; else zo_grads_policy (written into the result) */
    int order_mode;         /* -1: the scenario's (the minimiser may then try engine order);
                                else ZS_ORDER_ENGINE/FUZZED, kept and written into the result */
    int inv;                /* invariant to keep (ZS_INV_*); 0: whatever the first run reports */
    unsigned long max_runs; /* budget of simulator runs; 0 = unlimited */
    int same_verdicts;      /* 1: also keep the verdict under every other policy (the whole
                                expect line), so the result stays in the same bug class
                                (e.g. "per-call ok, reset-on-forward ok, lazy-init I3") */
    int verbose;            /* 1: one line per accepted change on stderr */
    /* How each run goes (fuzz/run.h): cap, verify_collectives, the
     * all-ranks knobs (env: the candidate is edited by them before it runs,
     * so a remedy under test - gather-always routers - cannot be minimised
     * away and dropped edit kinds stay dropped), one_rank.  Its policy and
     * order_mode are ignored: the minimiser runs each candidate under the
     * policy it keeps (and, with same_verdicts, every other) and the
     * candidate's own order; every run stops at its first violation and
     * neither aborts nor writes a trace, events or a report.
     * zs_min_opts_init: zs_run_opts_init's defaults. */
    zs_run_opts run;
    /* The verdict of one run (the predicate), instead of zs_run with `run`:
     * policy/order_mode -1 = the scenario's; returns ZS_INV_NONE,
     * ZS_INV_I1..ZS_INV_I8, or ZS_SCN_SETUP; fills *v with the finding when
     * v is not NULL and it returns a violation.  NULL (the default): zs_run.
     * For properties other than an invariant of the run. */
    int (*verdict)(const zs_scenario *s, int policy, int order_mode, uint64_t cap, zs_violation *v, void *ctx);
    void *verdict_ctx;
} zs_min_opts;

void zs_min_opts_init(zs_min_opts *o);

/** Sizes reported before/after. */
typedef struct zs_min_size {
    unsigned steps, passes, calls, modules, params, uses, order_bytes;
    int lines; /* lines of the canonical .scn text */
} zs_min_size;

typedef struct zs_min_stats {
    zs_min_size before, after;
    unsigned long runs;     /* simulator runs */
    unsigned long accepted; /* accepted changes */
    unsigned rounds;        /* passes over all change kinds */
    int inv;                /* the invariant kept */
    int policy;             /* the policy used */
    zs_violation v;         /* the violation of the final scenario */
    double seconds;
} zs_min_stats;

/** Size of s (for reports and tests). */
void zs_min_size_of(const zs_scenario *s, zs_min_size *out);

/** Minimises *s in place.  s must be valid and must violate an invariant
 *  under the options' policy/order (the first run checks it).  Returns 0
 *  on success (*s is the minimised scenario, still violating st->inv),
 *  1 if s does not violate anything (or not opts->inv) - *s unchanged -,
 *  -1 if s is invalid or memory ran out.  st may be NULL. */
int zs_minimize(zs_scenario *s, const zs_min_opts *o, zs_min_stats *st);

/* Building blocks (exposed for tests).  Each edits a scenario in place and
 * keeps every reference consistent; the result may still be invalid for
 * other reasons (the minimiser validates every candidate). */

/** Removes call c (c > 0) of pass p and its subtree; references to its
 *  outputs are removed (the consuming inputs recursively), loss bits of
 *  the root call shift. */
void zs_min_pass_drop_call(zs_pass *p, unsigned c);
/** Removes input i of call c (references to it in c's scope removed). */
void zs_min_pass_drop_input(zs_pass *p, unsigned c, unsigned i);
/** Removes output j of call c (references to it removed, later outputs renumbered). */
void zs_min_pass_drop_output(zs_pass *p, unsigned c, unsigned j);
/** Removes module m (m > 0, no child modules): its calls (with subtrees),
 *  its parameters and every use naming it; ids re-indexed. Returns 0, or
 *  -1 if m has children or is the root. */
int zs_min_drop_module(zs_scenario *s, unsigned m);
/** Removes parameter q and the uses naming it; ids re-indexed. */
void zs_min_drop_param(zs_scenario *s, unsigned q);

/** The fuzz codec's approximation of s: keyword inputs, mixed inputs'
 *  extra terms, aliased outputs, nograd outputs and nosave ops (the .scn-only
 *  constructs of captured models, zs_scenario_has_ext) removed, a
 *  checkpointed body made the call's checkpoint of the same kind, raw
 *  outputs (outK.J.raw) the hooked ones, every
 *  reference to them dropped, so that zs_encode takes the result (seeds of
 *  the byte-level fuzz targets).  Returns 0, or -1 if the result is not
 *  valid (then s is unspecified). */
int zs_scenario_strip_ext(zs_scenario *s);

#ifdef __cplusplus
}
#endif
#endif /* ZS_MINIMIZE_H */
