/*
 * zoffload.h - ZeRO-3 parameter partitioning runtime (public API).
 *
 * One header, one prefix (zo_), negative error codes with zo_strerror(),
 * opaque caller-owned handles, a versioned config struct with an
 * initialiser macro and a replaceable allocator.
 *
 * The runtime implements DeepSpeed's stage-3 parameter-offload hook
 * protocol (deepspeed/runtime/zero/parameter_offload.py and
 * partitioned_param_coordinator.py): every parameter is partitioned over a
 * data-parallel world of W ranks; a module's parameters are all-gathered
 * before its forward and its backward and released afterwards, with
 * trace-based prefetch, persistence and reuse-distance rules.  A training
 * framework calls the hook entry points below from its own module hooks
 * and autograd nodes, in the order PyTorch would fire DeepSpeed's hooks:
 *
 *   zo_forward_begin(ROOT)                       root forward pre-hook (reset_step)
 *   for every module call m(x):
 *     zo_pre_forward(m)                          hook A  _pre_forward_module_hook
 *     zo_track_inputs(m, inputs)                 hook D  _post_backward_module_hook
 *       ... m.forward body, children calls ...
 *     zo_post_forward(m)                         hook B  _post_forward_module_hook
 *     zo_track_outputs(m, outputs)               hook C  _pre_backward_module_hook
 *   zo_forward_end()
 *   zo_backward_begin(graph, retain_graph)       loss.backward() starts
 *     zo_output_grad(h)                          PreBackwardFunctionForModule.backward
 *     zo_input_grad(h)                           PostBackwardFunctionModule.backward
 *     zo_param_grad_ready(p)                     post-accumulate-grad hook of p
 *   zo_backward_end(graph)                       end-of-backward callback
 *   zo_release_all()                             release_and_reset_all (optimizer step)
 *
 * zo_module_enter() is hooks A and D in one call, zo_module_exit() hooks B
 * and C, for frameworks that need nothing between them.
 *
 * Computations read parameters through zo_param_access().
 *
 * Thread safety: a zo_runtime is not thread-safe; one thread at a time.
 * Nothing in this API aborts: every error is returned as a zo_status, with a
 * message available from zo_last_error(), and leaves the runtime consistent
 * (the call had no effect unless its documentation says otherwise).
 *
 * Units: "numel" and every threshold are in ELEMENTS; "bytes" are bytes.
 */
#ifndef ZOFFLOAD_H
#define ZOFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZO_VERSION_MAJOR 0
#define ZO_VERSION_MINOR 1
#define ZO_VERSION_PATCH 0

/* ------------------------------------------------------------------ */
/* Status codes                                                         */
/* ------------------------------------------------------------------ */

/** 0 on success, a negative ZO_ERR_* code otherwise. */
typedef int zo_status;

/** Every status code, once (libuv's UV_ERRNO_MAP): XX(NAME, value, text)
 *  gives ZO_ERR_NAME = value and zo_strerror's "ZO_ERR_NAME: text".  Tools
 *  that need the list (the Python binding, the docs) read it from here. */
#define ZO_STATUS_MAP(XX)                                                                                              \
    /* NULL pointer, value out of range, numel 0 */                                                                    \
    XX(INVALID_ARG, -1, "invalid argument")                                                                            \
    /* the allocator returned NULL */                                                                                  \
    XX(NOMEM, -2, "out of memory")                                                                                     \
    /* unknown or stale module/param/graph/grad handle */                                                              \
    XX(BAD_HANDLE, -3, "unknown or stale handle")                                                                      \
    /* hook called out of protocol order */                                                                            \
    XX(PROTOCOL, -4, "hook called out of protocol order")                                                              \
    /* double registration */                                                                                          \
    XX(EXISTS, -5, "already registered")                                                                               \
    /* numel * elem_size or a total overflows */                                                                       \
    XX(OVERFLOW, -6, "size overflow")                                                                                  \
    /* the data-plane backend reported an error */                                                                     \
    XX(BACKEND, -7, "backend error")                                                                                   \
    /* DeepSpeed's "tracing error" (prefetch queue mismatch) */                                                        \
    XX(TRACE, -8, "tracing error")                                                                                     \
    /* illegal parameter state transition / internal inconsistency */                                                  \
    XX(STATE, -9, "inconsistent state")                                                                                \
    /* parameter read while not AVAILABLE and the policy does not gather on access */                                  \
    XX(NOT_AVAILABLE, -10, "parameter not available")                                                                  \
    /* config struct size/version not understood */                                                                    \
    XX(VERSION, -11, "config version not understood")                                                                  \
    /* a fixed limit (ids, world size) would be exceeded */                                                            \
    XX(LIMIT, -12, "limit exceeded")                                                                                   \
    /* operation not offered by this backend/build */                                                                  \
    XX(UNSUPPORTED, -13, "not supported")                                                                              \
    /* no (or too few) accelerator devices */                                                                          \
    XX(NO_DEVICE, -14, "no device")                                                                                    \
    /* ranks issued different collectives */                                                                           \
    XX(COLLECTIVE_MISMATCH, -15, "ranks issued different collectives")

enum {
    ZO_OK = 0,
#define ZO__STATUS_ENUM(name, value, text) ZO_ERR_##name = (value),
    ZO_STATUS_MAP(ZO__STATUS_ENUM)
#undef ZO__STATUS_ENUM
};

/** Static string for a status code ("ZO_ERR_NOMEM: out of memory"); never NULL. */
const char *zo_strerror(zo_status status);

/* ------------------------------------------------------------------ */
/* Basic types                                                          */
/* ------------------------------------------------------------------ */

typedef struct zo_runtime zo_runtime; /**< opaque; created by zo_runtime_create */
typedef struct zo_backend zo_backend; /**< opaque data plane; see zoffload_backend.h */

/** Module id: DeepSpeed's module.id / ds_id, assigned 0,1,2,... in
 *  registration order (register in DFS pre-order to match named_modules). */
typedef uint32_t zo_module_id;
/** Parameter id: DeepSpeed's param.ds_id, 0,1,2,... in registration order. */
typedef uint32_t zo_param_id;
#define ZO_NO_MODULE ((zo_module_id)UINT32_MAX)
#define ZO_NO_PARAM  ((zo_param_id)UINT32_MAX)

/** One forward pass (one autograd graph).  0 is never a valid graph.
 *  Layout (opaque to callers): runtime tag (6 bits) | 0 (6) | generation
 *  (32) | slot (20). */
typedef uint64_t zo_graph;
/** Handle the framework attaches to one backward node (one input's
 *  PostBackwardFunctionModule or one output's PreBackwardFunctionForModule).
 *  0 means "nothing to attach".  Layout (opaque to callers): kind (2 bits)
 *  | runtime tag (6) | generation (16) | call slot (20) | tensor index (20).
 *
 *  Graph and grad handles cannot alias: a stale handle is reported as
 *  ZO_ERR_BAD_HANDLE, never dereferenced and never taken for a newer one.
 *  Each slot's generation advances when it is reused, and a slot whose
 *  generation is exhausted (2^16 calls made through one call slot, 2^32
 *  passes through one graph slot) is retired for the runtime's lifetime
 *  instead of wrapping (so a runtime makes at most 2^36 module calls
 *  before zo_pre_forward returns ZO_ERR_LIMIT).  The runtime tag (1..63)
 *  is taken in turn by each zo_runtime_create in the process, so a handle
 *  of another runtime created fewer than 63 creations apart (in
 *  particular the ranks of one process-local world) is ZO_ERR_BAD_HANDLE
 *  too.  (PyTorch attaches these nodes to one autograd graph, which cannot
 *  be handed to another process group's module.)
 *  Under the DeepSpeed-shaped policies a handle names its module's counter
 *  instead of a call (DeepSpeed's backward functions act on the module's
 *  ds_grads_remaining / applied_pre_backward_ref_cnt, whichever call made
 *  them): it stays valid while the runtime lives, also after its graph was
 *  discarded or backpropagated; only handles of another runtime, of
 *  another kind or malformed are ZO_ERR_BAD_HANDLE. */
typedef uint64_t zo_grad_handle;

/** ds_status of a parameter. */
typedef enum zo_param_status {
    ZO_PARAM_NOT_AVAILABLE = 0, /**< only the shard exists */
    ZO_PARAM_INFLIGHT = 1,      /**< all-gather issued, not waited */
    ZO_PARAM_AVAILABLE = 2      /**< full tensor materialised */
} zo_param_status;

/** The legal ds_status transitions, as one explicit table (ColossalAI
 *  Gemini style): NOT_AVAILABLE->INFLIGHT (all-gather issued),
 *  INFLIGHT->AVAILABLE (waited), AVAILABLE->NOT_AVAILABLE (partition()),
 *  and INFLIGHT->NOT_AVAILABLE (the all-gather failed: the full buffer is
 *  dropped, the shards are intact and the next fetch gathers again).
 *  Returns 1 if from->to is legal, 0 otherwise (including from == to). */
int zo_transition_legal(zo_param_status from, zo_param_status to);
const char *zo_param_status_name(zo_param_status s);

/** How ds_grads_remaining is kept (see docs/protocol.md).  One list,
 *  XX(NAME, value, "name"): ZO_GRADS_NAME = value, zo_policy_name's string.
 *
 *  PER_CALL, "per-call": zoffload's default: one window per forward call
 *  made with grad enabled and at least one input requiring grad;
 *  pre-backward fetch on every output-gradient arrival; release at window
 *  close, when every trainable parameter of the module produced its
 *  gradient, and at the end-of-backward callback; no release at
 *  post-forward during a recompute; gather on access; forward abort.
 *
 *  RESET_ON_FORWARD, "reset-on-forward": DeepSpeed upstream:
 *  ds_grads_remaining = 0 in hook D on every call, signed, may go
 *  negative.  Legacy, for regression analysis.
 *
 *  LAZY_INIT, "lazy-init": seed PR, first version: created as 0 on first
 *  access, never reset.
 *
 *  INIT_AT_REGISTER, "init-at-register": seed PR, final version: 0 at
 *  registration, never reset. */
#define ZO_GRADS_POLICY_MAP(XX)                                                                                        \
    XX(PER_CALL, 0, "per-call")                                                                                        \
    XX(RESET_ON_FORWARD, 1, "reset-on-forward")                                                                        \
    XX(LAZY_INIT, 2, "lazy-init")                                                                                      \
    XX(INIT_AT_REGISTER, 3, "init-at-register")

typedef enum zo_grads_policy {
#define ZO__POLICY_ENUM(name, value, text) ZO_GRADS_##name = (value),
    ZO_GRADS_POLICY_MAP(ZO__POLICY_ENUM)
#undef ZO__POLICY_ENUM
} zo_grads_policy;
#define ZO__COUNT_ONE(...)    +1
/** Number of policies (the entries of ZO_GRADS_POLICY_MAP, valued 0..N-1). */
#define ZO_GRADS_POLICY_COUNT (0 ZO_GRADS_POLICY_MAP(ZO__COUNT_ONE))

/** "per-call", "reset-on-forward", "lazy-init", "init-at-register";
 *  NULL for an unknown value. */
const char *zo_policy_name(zo_grads_policy p);
/** Parses a policy name as above.  ZO_ERR_INVALID_ARG if unknown/NULL
 *  (message in zo_last_error(NULL)). */
zo_status zo_policy_from_name(const char *name, zo_grads_policy *out);

/** The DeepSpeed release whose behaviour around the hooks the DeepSpeed-
 *  shaped policies (ZO_GRADS_RESET_ON_FORWARD, ZO_GRADS_LAZY_INIT,
 *  ZO_GRADS_INIT_AT_REGISTER: they share DeepSpeed's coordinator and
 *  engine) reproduce; ZO_GRADS_PER_CALL ignores it.  Each value was
 *  checked against the named release by tools/difftest.py --deepspeed
 *  (docs/oracles.md), names in DeepSpeed's
 *  deepspeed/runtime/zero/{parameter_offload,partitioned_param_coordinator,
 *  stage3}.py.  Common to all three (DeepSpeed 0.15.4 and 0.19.8):
 *   - post-backward releases at ds_grads_remaining == 0 also during a
 *     retain_graph backward (PostBackwardFunctionModule.backward has no
 *     special case);
 *   - a trace invalidated by trace_prologue (a module other than the
 *     recorded one) also waits and releases every in-flight gather and
 *     prefetch (_invalidate_trace -> _clean_inflight_param_registry, since
 *     0.15.3);
 *   - ds_persist parameters are kept only by __params_to_release with a
 *     complete trace: release_sub_module while the trace is recorded or
 *     invalid, _clean_inflight_param_registry (reset_step, invalidation)
 *     and release_and_reset_all (zo_release_all) release them like any
 *     other parameter (the next fetch gathers them again).
 *  Out-of-range values make zo_runtime_create return ZO_ERR_INVALID_ARG
 *  (message in zo_last_error(NULL)). */
/*  0_19, "0.19": default.  DeepSpeed 0.19 (0.19.8) with the ZeRO-3
 *  optimizer (deepspeed.initialize with an optimizer; engine.backward,
 *  engine.step), what users run.  Besides the common rules:
 *   - zo_backward_end of the outermost backward runs
 *     release_backward_leftovers() (DeepSpeedZeroOptimizer_Stage3.
 *     backward_epilogue): every module whose pre-backward fetched
 *     (fetch_sub_module(forward=False)) and whose post-backward release
 *     never ran leaves its parameters' active sets, and those that are
 *     not persistent are released;
 *   - frozen parameters fetched by a call made while a backward runs
 *     (an activation-checkpoint recompute) are charged to the module
 *     most recently fetched by a pre-backward that is still in backward
 *     (update_recompute_parameters) and released with it (its
 *     post-backward release or the leftovers), unless persistent.
 *  Gradients are partitioned at the post-accumulate-grad hook (param.grad
 *  emptied), so a retained graph's second backward into such a
 *  parameter fails in PyTorch (the framework's concern, not a hook).
 *
 *  0_19_HOOKS, "0.19-hooks": DeepSpeed 0.19 (0.19.8) hooks only:
 *  DeepSpeedZeRoOffload without an optimizer.  The common rules and the
 *  recompute charging of frozen parameters above (the coordinator's), no
 *  end-of-backward release.
 *
 *  0_15, "0.15": DeepSpeed 0.15 (0.15.4) hooks only: the common rules. */
#define ZO_DS_PROFILE_MAP(XX)                                                                                          \
    XX(0_19, 0, "0.19")                                                                                                \
    XX(0_19_HOOKS, 1, "0.19-hooks")                                                                                    \
    XX(0_15, 2, "0.15")

typedef enum zo_ds_profile {
#define ZO__DS_PROFILE_ENUM(name, value, text) ZO_DS_##name = (value),
    ZO_DS_PROFILE_MAP(ZO__DS_PROFILE_ENUM)
#undef ZO__DS_PROFILE_ENUM
} zo_ds_profile;
/** Number of profiles (the entries of ZO_DS_PROFILE_MAP, valued 0..N-1). */
#define ZO_DS_PROFILE_COUNT (0 ZO_DS_PROFILE_MAP(ZO__COUNT_ONE))

/** "0.19", "0.19-hooks", "0.15"; NULL for an unknown value. */
const char *zo_ds_profile_name(zo_ds_profile p);

/** Replaceable allocator (zstd's ZSTD_customMem).  Both NULL: malloc/free.
 *  alloc returns NULL on failure; free accepts NULL. */
typedef struct zo_allocator {
    void *(*alloc)(void *opaque, size_t bytes);
    void (*free)(void *opaque, void *ptr);
    void *opaque;
} zo_allocator;

/* ------------------------------------------------------------------ */
/* Events (observability)                                               */
/* ------------------------------------------------------------------ */

/** Event kinds, one list: XX(NAME) gives ZO_EV_NAME (0, 1, 2, ... in list
 *  order) and zo_event_kind_name's "NAME". */
#define ZO_EVENT_KIND_MAP(XX)                                                                                          \
    /* hook and autograd entry points, one event per call */                                                           \
    XX(FORWARD_BEGIN)                                                                                                  \
    XX(FORWARD_END)                                                                                                    \
    XX(PRE_FORWARD)   /* hook A */                                                                                     \
    XX(TRACK_INPUTS)  /* hook D; counter before/after */                                                               \
    XX(POST_FORWARD)  /* hook B */                                                                                     \
    XX(TRACK_OUTPUTS) /* hook C; applied_pre_backward_ref_cnt before/after */                                          \
    XX(OUTPUT_GRAD)   /* pre-backward; ref count before/after (legacy) */                                              \
    XX(INPUT_GRAD)    /* post-backward; counter before/after */                                                        \
    XX(PARAM_GRAD_READY)                                                                                               \
    XX(PARAM_ACCESS)                                                                                                   \
    XX(BACKWARD_BEGIN)                                                                                                 \
    XX(BACKWARD_END)                                                                                                   \
    XX(FORWARD_ABORT)                                                                                                  \
    XX(RELEASE_ALL)                                                                                                    \
    XX(RESET_STEP)                                                                                                     \
    /* data plane and coordinator */                                                                                   \
    XX(PARAM_STATE)       /* a ds_status change: from -> to */                                                         \
    XX(GATHER)            /* all-gather issued for param (fetch) */                                                    \
    XX(PREFETCH)          /* all-gather issued for param by the prefetcher */                                          \
    XX(WAIT)              /* blocking wait on an in-flight param */                                                    \
    XX(RELEASE)           /* param partitioned (full buffer freed) */                                                  \
    XX(UNPLANNED_FETCH)   /* gather on access (a stall, not a fault) */                                                \
    XX(WINDOW_OPEN)       /* per-call: window opened (counter_after = inputs counted) */                               \
    XX(WINDOW_CLOSE)      /* per-call: window closed by its last input gradient */                                     \
    XX(LEFTOVER)          /* window closed / module released by the end-of-backward       \
                             callback or release_all */                            \
    XX(COUNTER_UNINIT)    /* counter read or written before initialisation (Python        \
                             AttributeError) */                            \
    XX(TRACE_COMPLETE)    /* trace RECORD -> COMPLETE */                                                               \
    XX(TRACE_INVALIDATED) /* trace -> INVALID */                                                                       \
    XX(ERROR)             /* an entry point returned an error; status set */

typedef enum zo_event_kind {
#define ZO__EVENT_ENUM(name) ZO_EV_##name,
    ZO_EVENT_KIND_MAP(ZO__EVENT_ENUM)
#undef ZO__EVENT_ENUM
} zo_event_kind;
#define ZO_EV_KIND_COUNT (ZO_EV_ERROR + 1)
const char *zo_event_kind_name(zo_event_kind k);

/** Event record.  Valid only during the callback. */
typedef struct zo_event {
    zo_event_kind kind;
    uint64_t seq;           /**< 0,1,2,... per runtime */
    uint64_t step;          /**< number of reset_step calls so far */
    zo_module_id module;    /**< ZO_NO_MODULE if none */
    zo_param_id param;      /**< ZO_NO_PARAM if none */
    zo_graph graph;         /**< 0 if none */
    int64_t counter_before; /**< ds_grads_remaining (or ref count, window count) */
    int64_t counter_after;
    int counter_valid;        /**< 1 when counter_before/after carry a value */
    zo_param_status from, to; /**< for ZO_EV_PARAM_STATE */
    zo_status status;         /**< for ZO_EV_ERROR; else ZO_OK */
    const char *detail;       /**< static or runtime-owned text; may be NULL */
} zo_event;

typedef void (*zo_event_fn)(void *user, const zo_event *ev);

/* ------------------------------------------------------------------ */
/* Configuration                                                        */
/* ------------------------------------------------------------------ */

#define ZO_CONFIG_VERSION 3u
/** sizeof(zo_config) of version 1 (before verify_collectives): a version 1
 *  struct of this size is still accepted, with verify_collectives = 0 and
 *  ds_profile = ZO_DS_0_19. */
#define ZO_CONFIG_V1_SIZE offsetof(zo_config, verify_collectives)
/** sizeof(zo_config) of version 2 (before ds_profile): still accepted, with
 *  ds_profile = ZO_DS_0_19 (the default). */
#define ZO_CONFIG_V2_SIZE offsetof(zo_config, ds_profile)
#define ZO_MAX_WORLD_SIZE 65536

/** Runtime configuration (NCCL ncclConfig_t style).  Always start from
 *  ZO_CONFIG_INIT so that fields added later get their defaults. */
typedef struct zo_config {
    size_t size;                          /**< sizeof(zo_config) */
    uint32_t version;                     /**< ZO_CONFIG_VERSION */
    int world_size;                       /**< W, data-parallel ranks, 1..ZO_MAX_WORLD_SIZE */
    int rank;                             /**< this rank, 0..W-1 */
    zo_grads_policy grads_policy;         /**< default ZO_GRADS_PER_CALL */
    uint64_t param_persistence_threshold; /**< elements; stage3_param_persistence_threshold, default 1e5 */
    uint64_t model_persistence_threshold; /**< elements; stage3_model_persistence_threshold, default UINT64_MAX */
    uint64_t prefetch_bucket_size; /**< elements; stage3_prefetch_bucket_size, default 5e7 (0 disables prefetch) */
    uint64_t max_live_parameters;  /**< elements; stage3_max_live_parameters, default 1e9 */
    uint64_t max_reuse_distance;   /**< elements; stage3_max_reuse_distance, default 1e9 */
    zo_backend *backend;    /**< borrowed; NULL: the runtime creates and owns a host backend (immediate completion) */
    zo_allocator allocator; /**< all runtime allocations go through it */
    zo_event_fn on_event;   /**< optional event callback */
    void *event_user;       /**< passed to on_event */
    /* ---- version 2 ---- */
    /** 1: before every collective (each coalesced all-gather, and the
     *  optimizer step's zo_release_all, where DeepSpeed's step runs its
     *  gradient collectives) every rank exchanges a 64-byte fingerprint
     *  (sequence number, kind, parameter ids, numels, element sizes) with
     *  the backend's exchange op (one extra small all-gather on the same
     *  communicator) and compares them; if any rank differs the hook returns
     *  ZO_ERR_COLLECTIVE_MISMATCH naming both sides, and issues nothing
     *  (the parameters stay NOT_AVAILABLE, state consistent) instead of
     *  hanging in NCCL.  PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL check for
     *  process groups.  Default 0 (production); tests and fuzzing set 1.
     *  Needs a backend with ops version >= 2 and a non-NULL exchange op,
     *  else zo_runtime_create returns ZO_ERR_UNSUPPORTED. */
    int verify_collectives;
    /* ---- version 3 ---- */
    /** The DeepSpeed release the DeepSpeed-shaped policies reproduce
     *  (zo_ds_profile above); ignored by ZO_GRADS_PER_CALL.  Default
     *  ZO_DS_0_19. */
    zo_ds_profile ds_profile;
} zo_config;

#define ZO_CONFIG_INIT                                                                                                 \
    {                                                                                                                  \
        sizeof(zo_config), ZO_CONFIG_VERSION, 1, 0, ZO_GRADS_PER_CALL, 100000ull, UINT64_MAX, 50000000ull,             \
            1000000000ull, 1000000000ull, NULL, {NULL, NULL, NULL}, NULL, NULL, 0, ZO_DS_0_19                          \
    }

/* ------------------------------------------------------------------ */
/* Lifetime                                                             */
/* ------------------------------------------------------------------ */

/** Creates a runtime.  *out receives a handle owned by the caller, freed
 *  with zo_runtime_destroy().  cfg is copied.
 *  Errors (each with its cause in zo_last_error(NULL), as there is no
 *  runtime yet): ZO_ERR_INVALID_ARG (NULL, world_size/rank out of range,
 *  bad policy, bad ds_profile, allocator with only one of alloc/free,
 *  backend ops incomplete), ZO_ERR_VERSION (size or version),
 *  ZO_ERR_BACKEND (backend world size or rank differs),
 *  ZO_ERR_UNSUPPORTED (verify_collectives without an exchange op),
 *  ZO_ERR_NOMEM, or the host backend's creation error. */
zo_status zo_runtime_create(const zo_config *cfg, zo_runtime **out);

/** Frees the runtime, every full buffer it holds and (if it created it)
 *  its host backend.  NULL is accepted (returns ZO_OK).  A borrowed backend
 *  is left alive, with every shard the runtime registered in it removed. */
zo_status zo_runtime_destroy(zo_runtime *rt);

/** Last error message of this runtime ("" if none); runtime-owned, valid
 *  until the next call on rt.
 *  NULL rt: the message of the last failed call of this thread that had
 *  no runtime to hold it - zo_runtime_create, zo_policy_from_name, the
 *  host backend and host world functions of zoffload_backend.h, or any
 *  function given a NULL runtime ("" if none); thread-local, valid
 *  until the next such failure on this thread, not cleared by successes
 *  (NCCL's ncclGetLastError(NULL), libuv's uv_strerror of the returned
 *  code, which zoffload cannot give a cause in). */
const char *zo_last_error(const zo_runtime *rt);

/* ------------------------------------------------------------------ */
/* Registration                                                         */
/* ------------------------------------------------------------------ */

/** deepspeed.utils.set_z3_leaf_modules: fetches its whole subtree, children get no hooks */
#define ZO_MODULE_Z3_LEAF       0x1u
/** Gather always (the rank-independent MoE option).  The module's fetch
 *  (pre-forward, pre-backward, recompute) all-gathers every parameter of
 *  its whole subtree, as a z3 leaf's does, and its trace entry lists them
 *  all; the modules below it keep their hooks (counters, call windows,
 *  accounting) but never fetch, release, prefetch or enter the trace:
 *  their parameters are held by the gather-always ancestor from its fetch
 *  to its release.  So a module whose children are chosen per rank (an MoE
 *  layer's router picking experts from each rank's tokens) issues the same
 *  collectives on every rank.  The "gather every expert on every rank"
 *  remedy; DeepSpeed-MoE's alternative, expert-parallel process groups,
 *  is described in docs/protocol.md.  Not combinable with ZO_MODULE_Z3_LEAF
 *  on the same module; inside a z3 leaf or below another gather-always
 *  module it has no effect. */
#define ZO_MODULE_GATHER_ALWAYS 0x2u

/** Registers a module under parent (ZO_NO_MODULE for a root).  Ids are
 *  assigned in registration order; register in DFS pre-order to match
 *  DeepSpeed's module.id.  name is copied (may be NULL; at most 255 bytes).
 *  Registering after a trace was recorded invalidates the trace.
 *  Errors: ZO_ERR_INVALID_ARG (NULL rt/out, unknown flags, name too long),
 *  ZO_ERR_BAD_HANDLE (unknown parent), ZO_ERR_EXISTS (same non-empty name
 *  under the same parent: child names are unique in PyTorch; checked with a
 *  hash lookup, O(1) expected), ZO_ERR_LIMIT, ZO_ERR_NOMEM. */
zo_status zo_module_register(zo_runtime *rt, zo_module_id parent, const char *name, unsigned flags, zo_module_id *out);

#define ZO_PARAM_FROZEN 0x1u /**< requires_grad=False */

/** Registers a parameter of numel elements of elem_size bytes, owned by
 *  module owner.  Partition numel is ceil(numel / W) elements (the last
 *  shard padded).  ds_persist is decided here exactly as DeepSpeed's
 *  mark_persistent_parameters does, in registration order: skipped if
 *  numel + persistent total > model_persistence_threshold, else persistent
 *  if numel <= param_persistence_threshold.  The backend creates the shards.
 *  name is copied (may be NULL).
 *  Errors: ZO_ERR_INVALID_ARG (numel 0, elem_size 0 or > 64, unknown flags),
 *  ZO_ERR_BAD_HANDLE (owner), ZO_ERR_EXISTS (same non-empty name in owner),
 *  ZO_ERR_OVERFLOW (the padded full buffer, W * ceil(numel / W) *
 *  elem_size bytes, overflows size_t, or the runtime's parameters together
 *  would hold more than 2^63 - 1 elements: DeepSpeed 0.19.8 and 0.15.4
 *  count them in Python integers, the runtime in 64 bits), ZO_ERR_LIMIT, ZO_ERR_NOMEM,
 *  ZO_ERR_BACKEND. */
zo_status zo_param_register(zo_runtime *rt, zo_module_id owner, const char *name, uint64_t numel, uint32_t elem_size,
                            unsigned flags, zo_param_id *out);

/** Module m also uses parameter p (tied weights, DeepSpeed external
 *  parameters): p is fetched and released with m as well.
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_EXISTS (m owns or already uses p),
 *  ZO_ERR_NOMEM. */
zo_status zo_module_use_param(zo_runtime *rt, zo_module_id m, zo_param_id p);

/* ------------------------------------------------------------------ */
/* Hooks: forward                                                       */
/* ------------------------------------------------------------------ */

#define ZO_FWD_ROOT 0x1u /**< root forward: coordinator reset_step() first (DeepSpeed's start-of-forward hook) */
#define ZO_FWD_EVAL                                                                                                    \
    0x2u /**< module.training == False: per-call uses the eval coordinator (one per mode, as
                             DeepSpeed 0.14); the DeepSpeed-shaped policies have DeepSpeed 0.15+'s single one */

/** Starts a forward pass (a new autograd graph) and makes it current:
 *  windows opened by module calls belong to it until zo_forward_end().
 *  Forward passes nest (a reentrant checkpoint recompute inside backward
 *  starts its own).  *out_graph receives the new graph.
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_LIMIT, ZO_ERR_NOMEM. */
zo_status zo_forward_begin(zo_runtime *rt, unsigned flags, zo_graph *out_graph);

/** Ends forward pass g, which must be the innermost one begun.  With
 *  ZO_FWD_EVAL under per-call the eval coordinator's reset_step() runs
 *  (DeepSpeed 0.14's end-of-forward hook under no_grad; 0.15+ has none).  If some call of the pass had grad
 *  enabled, the graph stays alive, waiting for its backward (or for
 *  zo_graph_discard() / zo_release_all()).  A pass in which no call had
 *  grad enabled has nothing to backpropagate: it ends here and g becomes
 *  stale (ZO_ERR_BAD_HANDLE afterwards); per-call then also releases every
 *  parameter no module holds, so an eval forward ends released even when
 *  the trace kept parameters for a reuse that did not happen.
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (not innermost, or a module
 *  call still open: use zo_forward_abort() first). */
zo_status zo_forward_end(zo_runtime *rt, zo_graph g);

#define ZO_CALL_GRAD 0x1u /**< torch.is_grad_enabled() at the call */

/** Hook A, _pre_forward_module_hook: push m on the forward stack, trace
 *  prologue and record, fetch_sub_module(m, forward=True): all-gather m's
 *  parameters (its own; its subtree's if m is a z3 leaf; external ones),
 *  wait for them, add m to each one's active set, then prefetch per the
 *  trace.  During a running backward the call is a recompute: inside a
 *  pass begun for it (reentrant checkpointing) or, with none, inside the
 *  backward's own graph (torch's non-reentrant checkpoint recomputes
 *  without a forward pass of its own).
 *  Errors: ZO_ERR_INVALID_ARG (call_flags other than ZO_CALL_GRAD),
 *  ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (no forward pass begun and no
 *  backward running, m is
 *  inside a z3 leaf module), ZO_ERR_TRACE, ZO_ERR_BACKEND, ZO_ERR_NOMEM,
 *  ZO_ERR_LIMIT (2^20 call slots live or retired, see zo_grad_handle).
 *  On ZO_ERR_NOMEM, or ZO_ERR_BACKEND from issuing the gather, nothing
 *  happened.  On ZO_ERR_TRACE, or ZO_ERR_BACKEND from waiting, the call is
 *  pushed and m is active (as in DeepSpeed the exception unwinds the
 *  forward): call zo_forward_abort().  Prefetching is best effort: a
 *  prefetch that cannot be issued (allocation or backend failure) is
 *  reported as ZO_EV_ERROR and skipped, and the hook still returns ZO_OK.
 *  A backend that itself detects mismatched collectives (the multi-rank
 *  host world's matcher) makes an all-gather or its wait fail with
 *  ZO_ERR_COLLECTIVE_MISMATCH, returned as such (other backend failures
 *  are ZO_ERR_BACKEND).
 *  With verify_collectives: ZO_ERR_COLLECTIVE_MISMATCH before m's own
 *  all-gather means nothing happened (as for a gather that could not be
 *  issued); before a prefetch it is not skipped but returned: m's own
 *  parameters were fetched, the call is pushed and m is active (call
 *  zo_forward_abort()), the prefetch was not issued.  A module held by a
 *  ZO_MODULE_GATHER_ALWAYS ancestor fetches, traces and prefetches nothing. */
zo_status zo_pre_forward(zo_runtime *rt, zo_module_id m, unsigned call_flags);

/** Hook D, _post_backward_module_hook, for the innermost open call of m.
 *  requires_grad[i] (0/1) for each of n inputs (n may be 0).  Legacy
 *  policies: reset (reset-on-forward) then count every input that requires
 *  grad, even under no_grad, as DeepSpeed's PostBackwardFunctionModule does.
 *  Per-call: with grad enabled and >= 1 input requiring grad, opens this
 *  call's window counting those inputs.  out_handles[i] receives the handle
 *  to attach to input i's PostBackwardFunctionModule node (0: none).
 *  Errors: ZO_ERR_INVALID_ARG (NULL arrays with n > 0), ZO_ERR_BAD_HANDLE,
 *  ZO_ERR_PROTOCOL (m has no open call, or hook D already ran for it),
 *  ZO_ERR_LIMIT (n >= 2^20), ZO_ERR_NOMEM. */
zo_status zo_track_inputs(zo_runtime *rt, zo_module_id m, size_t n, const uint8_t *requires_grad,
                          zo_grad_handle *out_handles);

/** Hook B, _post_forward_module_hook: pop m's innermost open call from the
 *  forward stack, release_sub_module(m, forward=True) (per-call: not during
 *  a recompute).  m's call must be the innermost open call: PyTorch's
 *  forward hooks nest, so a child's call always ends before its caller's
 *  (an exception unwinding calls is zo_forward_abort()).
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (m has no open call, or
 *  another module's call is open inside it; nothing happened),
 *  ZO_ERR_BACKEND. */
zo_status zo_post_forward(zo_runtime *rt, zo_module_id m);

/** Hook C, _pre_backward_module_hook, for m's call that just ended (call
 *  zo_post_forward first).  Legacy: applied_pre_backward_ref_cnt += n (every
 *  output, even one that does not require grad).  out_handles[i] receives
 *  the handle for output i's PreBackwardFunctionForModule node (per-call:
 *  0 for outputs that do not require grad).
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (no
 *  ended call of m to attach to, or hook C already ran for it),
 *  ZO_ERR_LIMIT (n >= 2^20). */
zo_status zo_track_outputs(zo_runtime *rt, zo_module_id m, size_t n, const uint8_t *requires_grad,
                           zo_grad_handle *out_handles);

/** A module call's start as one call: zo_pre_forward(m, call_flags) (hook
 *  A) then zo_track_inputs(m, n_in, requires_grad, out_handles) (hook D),
 *  what nn.Module.__call__ does with DeepSpeed's forward pre-hook and its
 *  PostBackwardFunctionModule wrapping of the inputs.  Units and handles as
 *  those two; frameworks that need something between the two hooks call
 *  them separately.
 *  Errors: ZO_ERR_INVALID_ARG (rt NULL, unknown call_flags, NULL arrays
 *  with n_in > 0) and ZO_ERR_LIMIT (n_in >= 2^20) are found before either
 *  hook runs and have no effect; otherwise zo_pre_forward's errors, with
 *  its effects (a failed prefetch or verify_collectives mismatch leaves the
 *  call open: zo_forward_abort() it), and then zo_track_inputs' (only
 *  ZO_ERR_NOMEM can occur there: the call is open without hook D, as when
 *  a forward pre-hook raises in PyTorch; zo_forward_abort() it). */
zo_status zo_module_enter(zo_runtime *rt, zo_module_id m, unsigned call_flags, size_t n_in,
                          const uint8_t *requires_grad, zo_grad_handle *out_handles);

/** A module call's end as one call: zo_post_forward(m) (hook B) then
 *  zo_track_outputs(m, n_out, requires_grad, out_handles) (hook C), what
 *  nn.Module.__call__ does with DeepSpeed's forward hook and its
 *  PreBackwardFunctionForModule wrapping of the outputs.  Units and handles
 *  as those two.
 *  Errors: ZO_ERR_INVALID_ARG (rt NULL, NULL arrays with n_out > 0) and
 *  ZO_ERR_LIMIT (n_out >= 2^20) before either hook runs, no effect;
 *  zo_post_forward's errors (ZO_ERR_BAD_HANDLE and ZO_ERR_PROTOCOL with no
 *  effect; ZO_ERR_BACKEND from the release: the call has ended and hook C
 *  did not run, as when DeepSpeed's release raises in the forward hook). */
zo_status zo_module_exit(zo_runtime *rt, zo_module_id m, size_t n_out, const uint8_t *requires_grad,
                         zo_grad_handle *out_handles);

/** An exception unwound the forward stack down to module catcher (which
 *  caught it and continues; ZO_NO_MODULE: caught outside every module).
 *  During a running backward, ZO_NO_MODULE ends a non-reentrant checkpoint
 *  recompute whose open calls never reach hook B: torch 2.x stops the
 *  recompute as soon as the region's last saved tensor is rebuilt
 *  (torch.utils.checkpoint's _StopRecomputationError, early stop on by
 *  default); per-call keeps what those calls fetched for the region's
 *  backward, as their post-forward in a recompute would have.
 *  Per-call: releases what the unwound calls fetched, discards their
 *  windows, pops them; with ZO_NO_MODULE the current forward pass ends and
 *  its graph is discarded.  Legacy policies: the unwound calls leave the
 *  stack (so the runtime stays usable) but nothing is released: as in
 *  DeepSpeed, where hooks B and C never run, their parameters stay
 *  gathered and their modules stay in the active sets until
 *  zo_release_all().  (DeepSpeed's FWD_MODULE_STACK also keeps the stale
 *  entries; it only serves external-parameter registration, which
 *  zoffload does not model.)
 *  With ZO_NO_MODULE the calls unwound are those of the innermost pass or
 *  running backward (none open: nothing to unwind, ZO_OK).
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (no forward pass or backward
 *  running; catcher not on the stack, or open in an outer pass). */
zo_status zo_forward_abort(zo_runtime *rt, zo_module_id catcher);

/* ------------------------------------------------------------------ */
/* Hooks: backward                                                      */
/* ------------------------------------------------------------------ */

/** loss.backward() over graph g begins (nested calls allowed: reentrant
 *  checkpointing).  retain_graph: graph kept for another backward.
 *  Errors: ZO_ERR_BAD_HANDLE (unknown or discarded graph), ZO_ERR_PROTOCOL
 *  (g still being built, or already being backpropagated). */
zo_status zo_backward_begin(zo_runtime *rt, zo_graph g, int retain_graph);

/** PreBackwardFunctionForModule.backward: the gradient of one of the
 *  module's outputs arrived.  Legacy: if applied_pre_backward_ref_cnt > 0,
 *  fetch_sub_module(m, forward=False) and decrement.  Per-call: fetch on
 *  every arrival (idempotent).
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (no backward running),
 *  ZO_ERR_TRACE, ZO_ERR_BACKEND, ZO_ERR_COLLECTIVE_MISMATCH (before m's own
 *  all-gather: nothing happened, the count is not consumed; before a
 *  prefetch: m was fetched and is active, as zo_pre_forward). */
zo_status zo_output_grad(zo_runtime *rt, zo_grad_handle h);

/** PostBackwardFunctionModule.backward: the gradient w.r.t. one input
 *  arrived.  Legacy: ds_grads_remaining -= 1; at exactly 0,
 *  release_sub_module(m, forward=False), a retain_graph backward included
 *  (DeepSpeed has no special case for it).  Per-call: the window's count -= 1; at 0 the window closes and
 *  the call's parameters are released.
 *  Errors: ZO_ERR_BAD_HANDLE (unknown; per-call: already used, or stale
 *  because its call's window was closed - by zo_release_all,
 *  zo_graph_discard, zo_forward_abort or the end-of-backward callback -
 *  before the gradient arrived; the message says which),
 *  ZO_ERR_PROTOCOL (no backward running), ZO_ERR_BACKEND. */
zo_status zo_input_grad(zo_runtime *rt, zo_grad_handle h);

/** The gradient of trainable parameter p is ready (post-accumulate-grad
 *  hook) in the running backward.  Per-call: a module all of whose
 *  trainable parameters are ready is released.  Legacy: event only.
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_INVALID_ARG (p frozen),
 *  ZO_ERR_PROTOCOL (no backward running). */
zo_status zo_param_grad_ready(zo_runtime *rt, zo_param_id p);

/** End-of-backward callback for graph g (FSDP2-style final callback).
 *  Per-call: closes g's windows (re-arms them if g was retained), releases
 *  every non-persistent parameter no open forward call needs and reports
 *  each window it closed as ZO_EV_LEFTOVER; windows of other forward passes
 *  stay open.  Legacy: ends the retain_graph state; with ds_profile
 *  ZO_DS_0_19, at the outermost backward, release_backward_leftovers()
 *  (see zo_ds_profile).
 *  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (g not the innermost running
 *  backward, or a call made during it (a recompute) is still open: abort
 *  it with zo_forward_abort() first), ZO_ERR_BACKEND. */
zo_status zo_backward_end(zo_runtime *rt, zo_graph g);

/** Forget graph g without a backward (the loss was never computed or the
 *  graph went out of scope).  Per-call: its windows are closed as
 *  leftovers and, when no forward or backward is running, every in-flight
 *  gather is waited and every parameter no module holds is released (what
 *  was prefetched for the backward that will not come).  Errors: ZO_ERR_BAD_HANDLE, ZO_ERR_PROTOCOL (being built or
 *  backpropagated). */
zo_status zo_graph_discard(zo_runtime *rt, zo_graph g);

/* ------------------------------------------------------------------ */
/* Parameter access, step boundary                                      */
/* ------------------------------------------------------------------ */

/** Module m's computation reads parameter p.  *out_data receives the full
 *  tensor (numel * elem_size bytes, *out_bytes; runtime-owned, valid until
 *  p is released).  If p is INFLIGHT it is waited.  If NOT_AVAILABLE: the
 *  per-call policy gathers it (blocking, counted as an unplanned fetch);
 *  legacy policies gather only while a forward call is open (DeepSpeed's
 *  ZeROOrderedDict) and otherwise return ZO_ERR_NOT_AVAILABLE with
 *  *out_data = NULL.  out_bytes may be NULL.
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BAD_HANDLE, ZO_ERR_NOT_AVAILABLE,
 *  ZO_ERR_BACKEND, ZO_ERR_NOMEM, ZO_ERR_COLLECTIVE_MISMATCH (verify_collectives,
 *  gather on access: nothing happened). */
zo_status zo_param_access(zo_runtime *rt, zo_module_id m, zo_param_id p, const void **out_data, size_t *out_bytes);

/** release_and_reset_all: waits every in-flight gather, clears every
 *  active set, releases every non-persistent parameter, resets the
 *  live-parameter count; every open per-call window is closed as a
 *  leftover, except those of a forward pass still being built.  Call at
 *  the optimizer step.  Called in the middle of a forward it does what
 *  DeepSpeed's release_and_reset_all does there: the open calls'
 *  parameters are released too (gathered again on access); the pass's
 *  windows stay open, so its backward's input gradients still close them.
 *  Errors: ZO_ERR_BACKEND;
 *  with verify_collectives, ZO_ERR_COLLECTIVE_MISMATCH (the ranks' steps
 *  cover different trainable parameters, or a rank is elsewhere in its
 *  collective sequence), ZO_ERR_BACKEND or ZO_ERR_NOMEM from the exchange:
 *  then the call had no effect. */
zo_status zo_release_all(zo_runtime *rt);

/** The coordinator's reset_step() for the train (eval = 0) or eval
 *  coordinator (the DeepSpeed-shaped policies have one for both):
 *  RECORD -> COMPLETE, INVALID -> RECORD, refill the prefetch queue, step
 *  id 0.  DeepSpeed runs it at the start of a forward (the root pre-hook),
 *  before any module call: with a module call of a pass using that
 *  coordinator open it is ZO_ERR_PROTOCOL and nothing happens.
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_PROTOCOL. */
zo_status zo_reset_step(zo_runtime *rt, int eval);

/* ------------------------------------------------------------------ */
/* Introspection                                                        */
/* ------------------------------------------------------------------ */

typedef struct zo_param_info {
    zo_param_status status;   /**< ds_status */
    uint64_t numel;           /**< ds_numel, elements */
    uint64_t partition_numel; /**< ceil(numel / W), elements */
    uint32_t elem_size;       /**< bytes */
    zo_module_id owner;
    int persistent;    /**< ds_persist */
    int trainable;     /**< requires_grad */
    int inflight;      /**< in the in-flight registry */
    uint32_t n_active; /**< |ds_active_sub_modules| */
    uint64_t gathers;  /**< times all-gathered */
} zo_param_info;
/** Errors (introspection functions: the cause in zo_last_error(rt), or
 *  zo_last_error(NULL) for a NULL rt; not reported as ZO_EV_ERROR):
 *  ZO_ERR_INVALID_ARG (NULL out), ZO_ERR_BAD_HANDLE (unknown p). */
zo_status zo_param_get_info(const zo_runtime *rt, zo_param_id p, zo_param_info *out);
/** 1 if module m is in p's active set, else 0 (also for bad ids). */
int zo_param_is_active_for(const zo_runtime *rt, zo_param_id p, zo_module_id m);

typedef struct zo_module_info {
    zo_module_id parent;
    unsigned flags;               /**< ZO_MODULE_* */
    int in_leaf;                  /**< inside a z3 leaf module (no hooks) */
    int64_t grads_remaining;      /**< ds_grads_remaining (legacy); per-call: sum of open window counts */
    int grads_initialised;        /**< the counter exists (hasattr) */
    int64_t pre_backward_ref_cnt; /**< applied_pre_backward_ref_cnt (legacy) */
    uint32_t open_windows;        /**< per-call windows still open */
    uint32_t open_calls;          /**< calls on the forward stack */
    uint64_t n_params;            /**< parameters fetched for it (own, subtree if leaf or gather-always,
                                             external; 0 for a module held by a gather-always ancestor) */
    zo_module_id gather_holder;   /**< the ZO_MODULE_GATHER_ALWAYS ancestor that fetches and releases
                                             its parameters, or ZO_NO_MODULE */
} zo_module_info;
/** Errors (message as zo_param_get_info): ZO_ERR_INVALID_ARG (NULL out),
 *  ZO_ERR_BAD_HANDLE (unknown m). */
zo_status zo_module_get_info(const zo_runtime *rt, zo_module_id m, zo_module_info *out);

/** Copies the ids of the parameters fetched for m (sorted by id) into
 *  buf[0..cap); *n_out receives the total count (may exceed cap).
 *  Errors (message as zo_param_get_info): ZO_ERR_INVALID_ARG (NULL n_out,
 *  NULL buf with cap > 0), ZO_ERR_BAD_HANDLE (unknown m), ZO_ERR_NOMEM
 *  (rebuilding the fetch lists after a registration). */
zo_status zo_module_params(const zo_runtime *rt, zo_module_id m, zo_param_id *buf, size_t cap, size_t *n_out);

typedef struct zo_stats {
    uint32_t n_modules, n_params;
    uint64_t gathers;        /**< all-gathers issued (params) */
    uint64_t prefetches;     /**< of which issued by the prefetcher */
    uint64_t releases;       /**< partition() calls */
    uint64_t bytes_gathered; /**< full bytes materialised */
    uint64_t live_numel;     /**< elements gathered now (INFLIGHT + AVAILABLE) */
    uint64_t peak_live_numel;
    uint64_t persistent_live_numel; /**< of live_numel, persistent */
    uint64_t inflight_params;       /**< entries in the in-flight registry */
    uint64_t blocking_waits;        /**< waits on a gather that had not completed */
    uint64_t unplanned_fetches;     /**< gathers on access */
    uint64_t leftovers;             /**< windows/modules released by callback or sweep */
    uint64_t uninit_counter_events;
    uint64_t trace_invalidations;
    uint64_t steps; /**< reset_step calls */
    uint64_t open_windows;
    uint32_t forward_stack_depth;
} zo_stats;
/** Errors (message as zo_param_get_info): ZO_ERR_INVALID_ARG (NULL out). */
zo_status zo_get_stats(const zo_runtime *rt, zo_stats *out);

typedef enum zo_trace_mode { ZO_TRACE_RECORD = 0, ZO_TRACE_COMPLETE = 1, ZO_TRACE_INVALID = 2 } zo_trace_mode;
typedef struct zo_trace_info {
    zo_trace_mode mode;
    uint64_t step_id;   /**< fetches so far in this step (DeepSpeed __step_id) */
    uint64_t n_modules; /**< length of the recorded module order */
    uint64_t n_params;  /**< length of the parameter trace */
    uint64_t queue_len; /**< parameters left in the prefetch queue */
} zo_trace_info;
/** The train (eval = 0) or eval coordinator's trace (the DeepSpeed-shaped
 *  policies have one for both).  Errors (message as zo_param_get_info):
 *  ZO_ERR_INVALID_ARG (NULL out, eval not 0 or 1). */
zo_status zo_get_trace_info(const zo_runtime *rt, int eval, zo_trace_info *out);

/** Internal consistency check (cheap, O(params + modules + call records +
 *  graph slots)): the in-flight registry holds exactly the INFLIGHT
 *  parameters, each once; live numel equals the sum over gathered
 *  parameters; persistent live numel likewise; every legacy counter that is
 *  read is initialised; no per-call window count is negative; the lists of
 *  live parameters, held calls, each graph's calls, each module's calls and
 *  the forward stack agree with the records.  Returns ZO_OK, ZO_ERR_STATE
 *  with a message in zo_last_error() (it is not recorded as ZO_EV_ERROR),
 *  or ZO_ERR_INVALID_ARG for a NULL rt. */
zo_status zo_check_consistency(zo_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_H */
