/*
 * check.h - invariant checker of the zoffload fuzz harness.
 *
 * The checker watches a runtime through its event callback
 * (zs_check_event, installed as zo_config.on_event by the simulator) and
 * through introspection after every simulator action (zs_check_state).
 * Invariants (docs/fuzzing.md has the long form):
 *
 *   I1  ds_grads_remaining (per-call: a window count) is never negative
 *   I2  the counter is initialised before it is read or written
 *       (ZO_EV_COUNTER_UNINIT)
 *   I3  after an eval forward, after each top-level backward's
 *       end-of-backward callback (zo_backward_end), after a graph discard
 *       and after the step sweep: every non-persistent parameter is
 *       NOT_AVAILABLE, nothing is in flight, live numel == persistent live
 *       numel.  "I3-hooks" (the same check just before zo_backward_end) is a
 *       statistic, not a violation.
 *   I4  every computation's zo_param_access returns ZO_OK and the bytes
 *       equal zo_host_param_byte() up to the physical cap
 *   I5  at every prefetch issue, live numel <= max_live_parameters +
 *       numel of the prefetched parameter (the prefetcher only issues while
 *       under budget; one parameter may overshoot)
 *   I6  the in-flight registry holds exactly the INFLIGHT parameters, each
 *       once (zo_check_consistency + per-parameter info)
 *   I7  every ZO_EV_PARAM_STATE change is legal (zo_transition_legal) and
 *       starts from the state the checker's shadow copy holds
 *   ERR an entry point the simulator called returned an unexpected error,
 *       or the runtime reported ZO_EV_ERROR (e.g. ZO_ERR_TRACE)
 *   I8  (all-ranks scenarios, fuzz/world.h) every rank issues the same
 *       collectives in the same order; checked by zs_world_run across the
 *       ranks' recorded sequences, not by this per-rank checker
 *
 * A violation is recorded once (the first); with abort_on_violation the
 * checker prints it to stderr and calls abort(), so fuzzing engines record
 * a crash.
 */
#ifndef ZS_CHECK_H
#define ZS_CHECK_H

#include <stdio.h>

#include "scenario.h"
#include "zoffload.h"
#include "zoffload_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The invariants, one list: XX(NAME, value, "name") gives ZS_INV_NAME =
 *  value and zs_inv_name's string; a .scn expect line names the same
 *  verdicts ("ok" for NONE).  docs/fuzzing.md says what each checks. */
#define ZS_INV_MAP(XX)                                                                                                 \
    XX(NONE, 0, "none")                                                                                                \
    XX(I1, 1, "I1")                                                                                                    \
    XX(I2, 2, "I2")                                                                                                    \
    XX(I3, 3, "I3")                                                                                                    \
    XX(I4, 4, "I4")                                                                                                    \
    XX(I5, 5, "I5")                                                                                                    \
    XX(I6, 6, "I6")                                                                                                    \
    XX(I7, 7, "I7")                                                                                                    \
    XX(ERR, 8, "ERR")                                                                                                  \
    /* all-ranks runs only (fuzz/world.h): collective sequences differ across ranks */                                 \
    XX(I8, 9, "I8")

enum {
#define ZS__INV_ENUM(name, value, text) ZS_INV_##name = (value),
    ZS_INV_MAP(ZS__INV_ENUM)
#undef ZS__INV_ENUM
        ZS_INV_COUNT /* one past the last */
};
/** "I1".."I7", "ERR", "I8", "none". */
const char *zs_inv_name(int inv);

/** The first violation of a run. */
typedef struct zs_violation {
    int inv;        /* ZS_INV_* */
    int step;       /* scenario step index (-1: setup) */
    uint64_t event; /* runtime event seq at detection (events so far) */
    long module;    /* module id or -1 */
    long param;     /* parameter id or -1 */
    int policy;     /* zo_grads_policy */
    char what[64];  /* the simulator action ("POST m=3", "ENDBWD g=0") */
    char msg[256];
} zs_violation;

/** Checker state (embedded in the simulator; plain struct). */
typedef struct zs_checker {
    zo_runtime *rt;
    zo_backend *backend;
    const zs_scenario *s;
    int policy;
    int abort_on_violation;
    int skip_counters;           /* 1: do not check I1/I2 (fuzz_api under a legacy policy, where
                             arbitrary call orders legitimately break them) */
    int skip_budget;             /* 1: do not check I5 (fuzz_api under a DeepSpeed-shaped policy: its
                             prefetch budget is DeepSpeed's __n_available_params, reset to 0 at
                             reset_step while parameters an aborted forward left gathered stay
                             gathered, so a prefetch may exceed max_live_parameters as in
                             DeepSpeed) */
    int mismatch_stops;          /* 1 (rank of a host world): a ZO_ERR_COLLECTIVE_MISMATCH error event
                             is a consequence of I8, recorded in `mismatch`, not a violation */
    int mismatch;                /* a ZO_ERR_COLLECTIVE_MISMATCH error event was seen (mismatch_stops) */
    void (*on_fail)(void *user); /* optional: called once when the first violation is recorded
                                    (before abort_on_violation aborts) */
    void *fail_user;
    uint32_t n_modules; /* modules to inspect (default: the scenario's) */
    FILE *log;          /* every runtime event, one line each (NULL: none) */

    int step;
    char what[64];        /* current simulator action */
    const char *what_fmt; /* if set: the action is snprintf(what_fmt, what_a, what_b), formatted
                             only when a violation is reported (hot path) */
    int what_a, what_b;
    uint8_t *shadow; /* [n_params] ds_status per the PARAM_STATE events: storage owned by
                             whoever sets n_params (zero-filled: ZO_PARAM_NOT_AVAILABLE) */
    uint32_t n_params;

    /* capture for the simulator's trace: the counter of the last hook event */
    int ev_have;
    int64_t ev_before, ev_after;
    int ev_valid;
    int ev_uninit;      /* a ZO_EV_COUNTER_UNINIT came during the hook */
    zo_status ev_error; /* status of the last ZO_EV_ERROR seen */
    uint64_t n_error_events;
    uint64_t seen_error_events; /* n_error_events already accounted for */

    /* the full scan of zs_check_state runs after every action that changed
     * parameter state (an event below set state_dirty) and every 16th
     * action regardless - unless incremental checking is on (below) */
    int state_dirty;
    unsigned clean_actions;

    /* incremental checking (zs_check_incremental; what the simulator uses):
     * storage owned by the caller, sized by zs_check_incremental_size */
    int incremental;
    int need_sweep;      /* the next zs_check_state makes a full scan */
    uint64_t *inc_numel; /* [n_params] numel and persistence of each parameter as of the */
    uint8_t *inc_pers;   /* last full scan */
    uint32_t *inc_list;  /* [n_params] parameters named by an event since the last check */
    uint32_t *inc_mark;  /* [n_params] inc_epoch when in inc_list */
    uint32_t n_inc, inc_epoch;
    uint8_t *expect_ok;                      /* [n_params] expect holds the parameter's first bytes */
    uint8_t *expect;                         /* [n_params * ZS_CHECK_EXPECT] the original tensors' first bytes (I4) */
    uint64_t sh_live, sh_plive, sh_inflight; /* live numel, persistent live numel and INFLIGHT
                                                parameters per the shadow */
    uint64_t since_sweep;                    /* actions since the last full scan */
    uint64_t sweep_every;                    /* a full scan at least every so many actions */
    /* where the last zs_check_state ran (a sweep before a state-wiping entry
     * point reports there, as a check right after that action would) */
    const char *last_fmt;
    int last_a, last_b, last_step;
    uint64_t n_sweeps; /* full scans made (statistic) */

    /* results */
    int violated;
    zs_violation v;
    uint64_t n_events;
    uint64_t i3_checks;      /* I3 checks made */
    uint64_t i3_hook_checks; /* I3-hooks checks made (before zo_backward_end) */
    uint64_t i3_hook_misses; /* of which the hooks alone had not released everything */
    char i3_hook_first[160]; /* first miss, for the report */
} zs_checker;

/** Bytes of each parameter's original tensor that the incremental storage
 *  keeps for the I4 content check (zs_check_access). */
#define ZS_CHECK_EXPECT 64u

/** Initialises c for runtime rt (may be NULL until created: set c->rt). */
void zs_check_init(zs_checker *c, const zs_scenario *s, int policy, int abort_on_violation);
/** zo_event_fn: pass as zo_config.on_event with event_user = the checker. */
void zs_check_event(void *user, const zo_event *ev);
/** Records a violation (first one wins); aborts if so configured. */
void zs_check_fail(zs_checker *c, int inv, long module, long param, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** After every simulator action: I1 (module counters), I6, consistency,
 *  unaccounted ZO_EV_ERROR events.  Returns 1 if a violation is recorded.
 *
 *  By default every call that follows a state change scans the whole
 *  runtime (zo_check_consistency and every parameter), which makes a run
 *  quadratic in the model size.  With zs_check_incremental a call checks
 *  what the action's events named instead: the ds_status and in-flight
 *  membership of each parameter an event named, and (every call) the live
 *  / persistent live / in-flight totals against the shadow copy's; any mismatch
 *  is reported through a full scan, so the message is the full scan's.  A
 *  full scan still runs: at the first call; after an end of backward, a
 *  release_all, a reset_step and a forward abort (events); when the caller
 *  asks (zs_check_sweep, zs_check_sweep_next); and at least every
 *  sweep_every calls.  What only the full scan sees - zo_check_consistency's
 *  internal bookkeeping (work records, full buffers, per-module activation
 *  and window accounting) and a state change without its event - is found
 *  at the next full scan instead of at once. */
int zs_check_state(zs_checker *c);
/** Bytes of storage zs_check_incremental needs for n_params parameters
 *  (8-byte aligned storage). */
size_t zs_check_incremental_size(uint32_t n_params);
/** Turns on incremental checking (see zs_check_state).  Call after
 *  n_params and shadow are set and before the first zs_check_state;
 *  storage: zs_check_incremental_size(n_params) bytes, 8-byte aligned,
 *  owned by the caller and kept for the checker's lifetime. */
void zs_check_incremental(zs_checker *c, void *storage);
/** A full scan now, reported as at the last zs_check_state (its step and
 *  action): the simulator calls it before an entry point that wipes state
 *  (end of backward, graph discard, release_all, forward abort).  Returns 1
 *  if a violation is recorded. */
int zs_check_sweep(zs_checker *c);
/** Makes the next zs_check_state a full scan. */
static inline void zs_check_sweep_next(zs_checker *c) { c->need_sweep = 1; }
/** I3: everything non-persistent released.  Returns 1 if not released.
 *  as_stat: only count an I3-hooks miss (no violation). */
int zs_check_released(zs_checker *c, int as_stat);
/** I4 content check of a zo_param_access result.  Returns 1 on violation. */
int zs_check_access(zs_checker *c, unsigned m, unsigned p, zo_status st, const void *data, size_t bytes);
/** Formats v as one line (no newline). */
void zs_violation_format(const zs_violation *v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* ZS_CHECK_H */
