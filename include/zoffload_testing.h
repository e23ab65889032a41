/*
 * zoffload_testing.h - test-only behaviour of the host backend: what the
 * tests, the fuzz harness, the benchmarks and the CI reliability jobs use
 * and a framework integration does not.
 *
 *   zo_host_testing   deferred completion, a physical cap on stored and
 *                     copied bytes, no data movement, the poison fill;
 *                     handed to zo_backend_host_create through
 *                     zo_host_config.testing (zoffload_backend.h).
 *   zo_host_progress, zo_host_physical_bytes
 *   fault injection   zo_host_set_fault and its counters.
 *   zo_host_config_v2 the version 1 and 2 layout of zo_host_config, still
 *                     accepted by zo_backend_host_create.
 *   zo_backend_wrap   a backend forwarding to another with hooks around
 *                     every call: recording collectives, mirroring them
 *                     onto a second backend and comparing.
 *
 * Units: sizes in bytes.
 */
#ifndef ZOFFLOAD_TESTING_H
#define ZOFFLOAD_TESTING_H

#include "zoffload_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Test-only host backend settings                                      */
/* ------------------------------------------------------------------ */

/** zo_host_testing.no_poison: follow the library's build setting
 *  (zo_host_poison_default()). */
#define ZO_HOST_POISON_BUILD_DEFAULT (-1)

struct zo_host_testing {
    int deferred;                 /**< 1: a gather completes only at wait() or zo_host_progress(), so INFLIGHT is
                             observable (single view only; a world backend completes at the match).
                             0 or 1, else ZO_ERR_INVALID_ARG. */
    uint64_t max_bytes_per_param; /**< physical cap on stored/copied bytes per parameter (fuzz builds); 0 = none.
                                       Bytes past the cap are neither stored nor compared.  Every rank of
                                       a world must have the same cap. */
    int no_copy;                  /**< 1: skip data movement (control-plane benchmarks); 0 or 1.  Every rank of a
                             world must have the same. */
    int no_poison;                /**< 1: full_alloc does not fill buffers with the 0xA5 poison byte (their
                             content before the gather completes is unspecified: stale bytes of a
                             reused buffer or fresh memory) - benchmarks.
                             0: every buffer handed out, fresh or reused, is filled with 0xA5
                             first, so data read before its gather completed (or a gather that
                             copied nothing) is visibly wrong; tests and fault injection rely on
                             it.  The fill is a full write of the buffer: it costs about as much
                             as the gather's own copy (a gather at ~0.6x memcpy instead of ~1x).
                             ZO_HOST_POISON_BUILD_DEFAULT (-1, what ZO_HOST_TESTING_INIT sets and
                             what zo_host_config.testing = NULL means): the library's build
                             setting, zo_host_poison_default() - 0 (fill) in sanitizer, fuzzing
                             and test builds (CMake ZO_POISON=ON), 1 (no fill) in a plain release
                             build.  Other values: ZO_ERR_INVALID_ARG. */
};

/** The settings of zo_host_config.testing = NULL. */
#define ZO_HOST_TESTING_INIT                                                                                           \
    { 0, 0, 0, ZO_HOST_POISON_BUILD_DEFAULT }

/** Completes every deferred gather of a host backend now (the "network"
 *  made progress).  Returns the number completed, or a negative zo_status
 *  (ZO_ERR_INVALID_ARG if b is NULL or not a host backend; message in
 *  zo_last_error(NULL)).  0 for a world backend. */
int zo_host_progress(zo_backend *b);

/** Bytes of a parameter of `bytes` full bytes that the host backend b
 *  really stores and copies (min(bytes, max_bytes_per_param)); `bytes`
 *  itself for NULL or a backend without a cap. */
uint64_t zo_host_physical_bytes(const zo_backend *b, uint64_t bytes);

/* ------------------------------------------------------------------ */
/* Cooperative scheduling of a host world's ranks                      */
/* ------------------------------------------------------------------ */

#define ZO_HOST_WORLD_SCHED_VERSION 1u

/** How the ranks of a host world (zo_host_world_create) block.  By default
 *  each rank runs on its own thread and a rank whose wait, exchange or
 *  reduce_scatter has not completed sleeps on the world's condition
 *  variable.  With a scheduler the ranks may instead share one thread, each
 *  on its own stack (coroutines, switched by the caller): a blocking rank
 *  calls yield, which runs other ranks and returns when this rank may check
 *  again.  Matching, data movement, would-hang detection and every outcome
 *  (statuses, texts, zo_host_world_report) are the same in both modes: the
 *  world decides them from each rank's own sequence of calls, never from
 *  who runs when.  No NCCL or DeepSpeed counterpart: a test harness's way
 *  to run W ranks without W threads. */
typedef struct zo_host_world_sched {
    size_t size;      /**< sizeof(zo_host_world_sched) */
    uint32_t version; /**< ZO_HOST_WORLD_SCHED_VERSION */
    void *user;       /**< passed to both hooks; borrowed */
    /** Rank `rank` blocks on a collective that has not completed.  Called
     *  from inside that rank's backend call, on the rank's own stack, with
     *  no lock of the world held; may run other ranks (their backend calls
     *  included) and returns when the rank should look again (it calls
     *  yield again while its collective is still not complete, so an early
     *  return is harmless).  Required. */
    void (*yield)(void *user, int rank);
    /** The collective rank `rank` is blocked on completed (or failed: a
     *  mismatch, a would-hang); yield need not keep it waiting.  Called by
     *  whichever rank completed it, with the world's lock held: it must
     *  only take note (no world or backend calls, no switching).  May be
     *  NULL (then the scheduler must resume blocked ranks itself to let
     *  them look). */
    void (*wake)(void *user, int rank);
} zo_host_world_sched;

#define ZO_HOST_WORLD_SCHED_INIT                                                                                       \
    { sizeof(zo_host_world_sched), ZO_HOST_WORLD_SCHED_VERSION, NULL, NULL, NULL }

/** Sets the scheduler of world w (sched is copied; NULL: the threads of
 *  the default mode again).  Only before the first rank joins: the ranks
 *  of one world block in one way.  Every rank's calls must then run on the
 *  one thread that drives the scheduler, so that yield can run the others.
 *  Errors (message in zo_last_error(NULL)): ZO_ERR_INVALID_ARG (w NULL,
 *  sched without yield), ZO_ERR_VERSION (size or version other than
 *  ZO_HOST_WORLD_SCHED_INIT's), ZO_ERR_STATE (a rank has joined already);
 *  the world is unchanged then. */
zo_status zo_host_world_set_sched(zo_host_world *w, const zo_host_world_sched *sched);

/* ------------------------------------------------------------------ */
/* Version 1 and 2 host configs                                         */
/* ------------------------------------------------------------------ */

/** zo_host_config as versions 1 and 2 laid it out, the test-only settings
 *  inline (same meaning as in zo_host_testing).  A version 1 config ends
 *  before world (size ZO_HOST_CONFIG_V1_SIZE: no world, no cache, the
 *  build's poison setting); a version 2 config is the whole struct (size
 *  sizeof(zo_host_config_v2)). */
typedef struct zo_host_config_v2 {
    size_t size;
    uint32_t version; /**< 1 or 2 */
    int world_size;
    int rank;
    int deferred;
    uint64_t max_bytes_per_param;
    int no_copy;
    zo_allocator allocator;
    /* ---- version 2 ---- */
    zo_host_world *world;
    uint64_t cache_bytes;
    int no_poison;
} zo_host_config_v2;

/** sizeof a version 1 zo_host_config_v2. */
#define ZO_HOST_CONFIG_V1_SIZE offsetof(zo_host_config_v2, world)

/* ------------------------------------------------------------------ */
/* Fault injection (tests, fuzzing, CI reliability jobs)               */
/* ------------------------------------------------------------------ */

/** Where a fault is injected.  Operations are counted per point from the
 *  last zo_host_set_fault() call, 1-based. */
typedef enum zo_host_fault_point {
    ZO_HOST_FAULT_GATHER = 0, /**< all_gather_start */
    ZO_HOST_FAULT_WAIT = 1    /**< a completion check: wait() or query() */
} zo_host_fault_point;

typedef enum zo_host_fault_action {
    ZO_HOST_FAULT_NONE = 0,
    /** Transient failure: the operation returns `status` and has no
     *  effect.  GATHER: nothing is issued (no work, no copy).  WAIT: the
     *  work is untouched (still pending or complete), so a later wait or
     *  query on it can succeed - a NCCL call that failed before enqueuing. */
    ZO_HOST_FAULT_FAIL = 1,
    /** Delay.  GATHER: the work is issued but its copy is deferred even on
     *  an immediate backend; query() reports it not done and
     *  zo_host_progress() skips it, only wait() completes it (a slow
     *  all-gather: the runtime must block).  WAIT: wait() sleeps delay_us
     *  microseconds before completing; query() reports not done. */
    ZO_HOST_FAULT_DELAY = 2,
    /** The collective itself fails.  GATHER: the work is issued and, when
     *  it completes (wait, or zo_host_progress), copies nothing and
     *  reports `status`.  WAIT: the work completes now without copying and
     *  this and every later wait/query on it return `status`.  The shards
     *  are never touched; the full buffers keep their poison bytes. */
    ZO_HOST_FAULT_FAIL_WORK = 3
} zo_host_fault_action;

/** A fault: `action` is applied to the operations at `point` numbered
 *  at .. at + count - 1 (count 0 means 1). */
typedef struct zo_host_fault {
    zo_host_fault_point point;
    zo_host_fault_action action;
    uint64_t at;       /**< 1-based operation index at `point`; 0: never */
    uint32_t count;    /**< consecutive operations affected (0 = 1) */
    zo_status status;  /**< FAIL / FAIL_WORK: code returned; 0 = ZO_ERR_BACKEND */
    uint32_t delay_us; /**< DELAY at WAIT: microseconds wait() sleeps */
} zo_host_fault;

/** Arms fault f on host backend b (f is copied), replacing the previous
 *  one and restarting the operation counts; f == NULL disarms.  Works
 *  already delayed or doomed keep their fate.
 *  Errors: ZO_ERR_INVALID_ARG (b NULL or not a host backend: message in
 *  zo_last_error(NULL); bad point/action, status > 0). */
zo_status zo_host_set_fault(zo_backend *b, const zo_host_fault *f);

/** Operations counted at `point` since the last zo_host_set_fault()
 *  (0 for a non-host backend or an unknown point). */
uint64_t zo_host_fault_ops(const zo_backend *b, zo_host_fault_point point);

/** Operations the armed fault was applied to since the last
 *  zo_host_set_fault() (0 for a non-host backend). */
uint64_t zo_host_fault_fired(const zo_backend *b);

/* ------------------------------------------------------------------ */
/* A wrapping backend: recording and mirroring                          */
/* ------------------------------------------------------------------ */

/** Which op a wrapped call is. */
typedef enum zo_wrap_op {
    ZO_WRAP_PARAM_ADD = 0,
    ZO_WRAP_PARAM_REMOVE = 1,
    ZO_WRAP_FULL_ALLOC = 2,
    ZO_WRAP_FULL_FREE = 3,
    ZO_WRAP_ALL_GATHER_START = 4,
    ZO_WRAP_WAIT = 5,
    ZO_WRAP_QUERY = 6,
    ZO_WRAP_WORK_FREE = 7,
    ZO_WRAP_REDUCE_SCATTER = 8,
    ZO_WRAP_EXCHANGE = 9
} zo_wrap_op;

/** One call to a wrapping backend: its arguments (those of its op; the
 *  others 0) as zo_backend_* checked them, and its results. */
typedef struct zo_wrap_call {
    zo_wrap_op op;
    zo_param_id param;           /**< PARAM_ADD, PARAM_REMOVE, FULL_ALLOC, FULL_FREE, REDUCE_SCATTER */
    uint64_t numel;              /**< elements: PARAM_ADD, REDUCE_SCATTER */
    uint64_t partition_numel;    /**< elements: PARAM_ADD, REDUCE_SCATTER */
    uint32_t elem_size;          /**< bytes: PARAM_ADD (REDUCE_SCATTER: 4) */
    size_t bytes;                /**< FULL_ALLOC (buffer), EXCHANGE (message per rank) */
    void *buf;                   /**< FULL_FREE: the buffer; FULL_ALLOC: the new buffer (after the inner call,
                                   or set by a before hook that takes the call over) */
    const zo_gather_item *items; /**< ALL_GATHER_START: n items (caller-owned, valid during the call) */
    size_t n;
    zo_work *work;          /**< WAIT, QUERY, WORK_FREE; ALL_GATHER_START: the new work (as buf) */
    int done;               /**< QUERY: the answer (as buf) */
    const float *grad;      /**< REDUCE_SCATTER: numel elements */
    float *shard;           /**< REDUCE_SCATTER: partition_numel elements */
    zo_reduce_op reduce_op; /**< REDUCE_SCATTER */
    const void *send;       /**< EXCHANGE: bytes bytes */
    void *recv;             /**< EXCHANGE: W * bytes bytes */
    int skip_inner;         /**< set by a before hook: the inner backend is not called and the call
                                   returns what before returned (with buf / work / done as it set them) */
} zo_wrap_call;

/** What a wrapping backend does around each call; every member may be 0.
 *  Hooks run on the calling thread and must not call the wrapper itself. */
typedef struct zo_wrap_hooks {
    void *user;       /**< passed to every hook; borrowed */
    const char *name; /**< the wrapper's ops->name (static string; NULL: "wrap") */
    /** Before the inner call: ZO_OK lets it go ahead (or, with call->skip_inner
     *  set, stands for it); another status fails the call without calling the
     *  inner backend (the void ops ignore it). */
    zo_status (*before)(void *user, zo_wrap_call *call);
    /** After the inner call, with its status; returns the call's status (st to
     *  keep it).  Also runs for the void ops, with st = ZO_OK. */
    zo_status (*after)(void *user, zo_wrap_call *call, zo_status st);
    /** The wrapper's last_error: this message when it is not NULL or "" (a
     *  hook that fails calls sets it, and clears it when a call starts),
     *  else the inner backend's. */
    const char *(*last_error)(void *user);
    /** At zo_backend_destroy of the wrapper (the inner backend is not destroyed). */
    void (*destroy)(void *user);
    /** 1: offer reduce_scatter and exchange even when the inner backend has
     *  neither (a before hook must then take those calls over). */
    int all_ops;
} zo_wrap_hooks;

/** Creates a backend that forwards every call to inner (borrowed: destroy it
 *  after the wrapper) through zo_backend_*, with hooks (copied) around each
 *  call: the world size and rank are inner's; reduce_scatter and exchange
 *  exist when inner has them (or all_ops).  *out is owned by the caller
 *  (zo_backend_destroy, which calls hooks->destroy).
 *  Errors (message in zo_last_error(NULL)): ZO_ERR_INVALID_ARG (NULL out,
 *  inner or hooks; inner without world_size/rank), ZO_ERR_NOMEM. */
zo_status zo_backend_wrap(zo_backend *inner, const zo_wrap_hooks *hooks, zo_backend **out);

/** hooks->user of a backend made by zo_backend_wrap; NULL for NULL or any
 *  other backend. */
void *zo_backend_wrap_user(const zo_backend *b);

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_TESTING_H */
