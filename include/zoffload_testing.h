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
    int deferred;       /**< 1: a gather completes only at wait() or zo_host_progress(), so INFLIGHT is
                             observable (single view only; a world backend completes at the match).
                             0 or 1, else ZO_ERR_INVALID_ARG. */
    uint64_t max_bytes_per_param; /**< physical cap on stored/copied bytes per parameter (fuzz builds); 0 = none.
                                       Bytes past the cap are neither stored nor compared.  Every rank of
                                       a world must have the same cap. */
    int no_copy;        /**< 1: skip data movement (control-plane benchmarks); 0 or 1.  Every rank of a
                             world must have the same. */
    int no_poison;      /**< 1: full_alloc does not fill buffers with the 0xA5 poison byte (their
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
#define ZO_HOST_TESTING_INIT {0, 0, 0, ZO_HOST_POISON_BUILD_DEFAULT}

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

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_TESTING_H */
