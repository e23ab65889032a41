/*
 * scenario.h - the one scenario model of the zoffload fuzz harness.
 *
 * A scenario is data with counts (module, parameter, use and call arrays
 * on the heap, owned by the scenario; see "Storage" below):
 * a runtime config, a module tree, parameters, tied/external parameter
 * uses, and a program of training/eval steps whose forward passes are
 * nested programs of module calls.  Everything that consumes scenarios
 * uses this header: the byte codec (zs_decode/zs_encode, codec.c), the
 * simulator that replays a scenario against the real runtime with
 * PyTorch-faithful hook timing (sim.h), the invariant checker (check.h),
 * the JSON export for the PyTorch oracle (scenario_json.c), the .scn text
 * format, the zofuzz tool, the minimiser and the exhaustive enumerator.
 *
 * The full semantics (what PyTorch/DeepSpeed code each field stands for)
 * are in docs/scenario-model.md; the short version is in the comments.
 *
 * Validity.  A scenario is valid iff zs_scenario_validate() accepts it.
 * Exactly the valid scenarios are the ones zs_decode() can produce, and
 * for every valid s: zs_decode(zs_encode(s)) is zs_scenario_equal to s.
 * Validity rules are enforced by the same walker that decodes and encodes
 * (codec.c), so the three cannot drift; the walker takes each choice from
 * the rule functions below ("Validity rules", scenario.c), which the .scn
 * parser and the enumerator use too, and the rank edits' rules from
 * ranks.h.
 *
 * Units: numel and thresholds in ELEMENTS, elem_size in bytes.
 */
#ifndef ZS_SCENARIO_H
#define ZS_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Limits                                                               */
/* ------------------------------------------------------------------ */

/* The byte codec's bounds (zs_decode, zs_encode).  They are smaller than
 * the model's (.scn text, validation, replay) so that fuzzing stays fast,
 * and they fix the byte layout: every existing .bin input decodes to the
 * same scenario.  A scenario beyond them is valid but has no byte encoding
 * (zs_encode returns 0).  The per-call arrays (ZS_MAX_IN, ...) are the same
 * in both. */
#define ZS_CODEC_MAX_MODULES     254
#define ZS_CODEC_MAX_PARAMS      254
#define ZS_CODEC_MAX_USES        64
#define ZS_CODEC_MAX_CALLS       254 /* per forward pass */
#define ZS_CODEC_MAX_CHILD_CALLS 16

/* The model's bounds (.scn text, validation, replay).  Real models: a
 * LLaMA-7B config has ~390 modules, Mixtral-8x7B ~1,100, LLaMA-70B ~970;
 * a transformer body makes one child call per layer (80 for LLaMA-70B). */
#define ZS_MAX_MODULES     65536   /* module tree size */
#define ZS_MAX_PARAMS      65536   /* parameters */
#define ZS_MAX_USES        65536   /* tied / external parameter uses */
#define ZS_MAX_STEPS       8       /* steps in the program */
#define ZS_MAX_PASSES      4       /* forward passes (micro-batches) per step */
#define ZS_MAX_CALLS       1000000 /* module calls per forward pass */
#define ZS_MAX_CHILD_CALLS 4096    /* calls made by one call's body */
#define ZS_MAX_IN          4       /* input tensors of one call */
#define ZS_MAX_OUT         4       /* output tensors of one call */
#define ZS_MAX_USE         8       /* tensors consumed by one call's own op */
#define ZS_MAX_KW          4       /* keyword tensor inputs of one call (.scn only, not in the byte codec) */
#define ZS_MAX_MIX         8       /* extra terms of one call's mixed inputs (.scn only, not in the byte codec) */
#define ZS_MAX_ORDER       256     /* fuzzed backward-order choice bytes */
#define ZS_MAX_WORLD       8       /* world size W is 1..ZS_MAX_WORLD */
/* numel is 1..ZS_MAX_NUMEL; the codec's classes favour <= 2^20 (~1e6); real
 * models need ~4e7 (GPT-2 wte) */
#define ZS_MAX_NUMEL       0x7FFFFFFFu
#define ZS_MAX_ELEM_SIZE   64 /* elem_size is 1..64 bytes (the runtime's limit) */
#define ZS_MAX_PROGRESS    7  /* cfg.progress_every is 0..7 */
#define ZS_NAME_LEN        24 /* annotation names, NUL-terminated */

/** Module, parameter, use and call ids/indices are zs_id (32-bit);
 *  ZS_NONE is "no module / no call" in every zs_id field. */
typedef uint32_t zs_id;
#define ZS_NONE 0xFFFFFFFFu
#define ZS_INF  UINT64_MAX /* "infinite" threshold */

/* ------------------------------------------------------------------ */
/* Config                                                               */
/* ------------------------------------------------------------------ */

/** Backward ready-node order. */
enum {
    ZS_ORDER_ENGINE = 0, /* PyTorch single-device CPU ReadyQueue: highest sequence_nr first */
    ZS_ORDER_FUZZED = 1  /* any ready node, chosen by zs_scenario.order[] bytes */
};

/** Runtime + host-backend configuration of a scenario.  The five
 *  thresholds are DeepSpeed's stage3_* settings in ELEMENTS; ZS_INF means
 *  "infinite".  The codec draws them from zs_threshold_classes[] (below)
 *  or, for any other value, an explicit 64-bit value. */
typedef struct zs_config {
    uint8_t policy;     /* zo_grads_policy, 0..3 (fuzz_hooks overrides it from ZOFUZZ_POLICY) */
    uint8_t world_size; /* W, 1..8 */
    uint8_t rank;       /* this rank, 0..W-1 */
    uint8_t order_mode; /* ZS_ORDER_ENGINE / ZS_ORDER_FUZZED */
    uint8_t deferred;   /* 0/1: host backend deferred completion (gathers stay INFLIGHT until waited/progressed) */
    uint8_t
        progress_every; /* deferred only: call zo_host_progress() after every Nth hook call; 0 = never (only waits complete) */
    uint64_t param_persistence_threshold; /* stage3_param_persistence_threshold */
    uint64_t model_persistence_threshold; /* stage3_model_persistence_threshold */
    uint64_t prefetch_bucket_size;        /* stage3_prefetch_bucket_size (0 disables prefetch) */
    uint64_t max_live_parameters;         /* stage3_max_live_parameters */
    uint64_t max_reuse_distance;          /* stage3_max_reuse_distance */
    uint8_t all_ranks;                    /* 0: one rank's view (rank `rank`, single-view host backend);
                                1: all W ranks, each its own runtime, in one host world (fuzz/world.h),
                                checking I8.  Requires W >= 2.  Encoded in the tail (see edits). */
    uint8_t verify_collectives;           /* 0/1: zo_config.verify_collectives on every rank (tail-encoded) */
    uint8_t torch_profile;                /* ZS_TORCH_*: the PyTorch autograd semantics modelled (tail-encoded) */
    uint8_t ds_profile;                   /* ZS_DS_*: the DeepSpeed release behaviour the DeepSpeed-shaped
                                policies model (tail-encoded) */
} zs_config;

/** PyTorch profiles: which autograd semantics the simulator reproduces.
 *  Each was checked against the named release by tools/difftest.py
 *  (docs/oracles.md).  The current release is the default (0). */
enum {
    /* torch 2.x (checked against 2.15.0): a non-reentrant checkpoint's
     * recompute stops as soon as the last tensor the region saved has been
     * rebuilt (torch.utils.checkpoint.set_checkpoint_early_stop(True), the
     * default), so hooks B and C of the modules still open at that point
     * never fire in the recompute; every backward over the region (a
     * retained graph's second one too) recomputes it again. */
    ZS_TORCH_2 = 0,
    /* torch 2.x under set_checkpoint_early_stop(False): the recompute
     * runs the whole region (every hook fires), once per backward. */
    ZS_TORCH_2_NO_EARLY_STOP = 1,
    /* torch 1.13 (Debian's python3-torch 1.13.1): the whole region is
     * recomputed at the first unpack; a retained graph's second backward
     * reuses the stored tensors (no second recompute). */
    ZS_TORCH_113 = 2,
    ZS_TORCH_PROFILES = 3
};

/** DeepSpeed profiles: what the DeepSpeed-shaped policies (reset-on-forward,
 *  lazy-init, init-at-register) model around the hooks.  The current
 *  release, run as users run it, is the default (0). */
enum {
    /* DeepSpeed 0.19 (checked against 0.19.8) with the ZeRO-3 optimizer
     * (deepspeed.initialize with an optimizer; engine.backward,
     * engine.step): release_backward_leftovers() at the end of every
     * backward, frozen parameters fetched in a recompute held by the
     * module in backward, gradients partitioned (param.grad emptied) at
     * the post-accumulate-grad hook. */
    ZS_DS_019 = 0,
    /* DeepSpeed 0.19 hooks only (DeepSpeedZeRoOffload, no optimizer:
     * deepspeed.initialize without one): the four hooks and the
     * coordinator, no end-of-backward release, gradients left alone. */
    ZS_DS_019_HOOKS = 1,
    /* DeepSpeed 0.15 (0.15.4) hooks only, the previous reference. */
    ZS_DS_015 = 2,
    ZS_DS_PROFILES = 3
};

/** Index of each threshold in the class tables. */
enum {
    ZS_TH_PARAM_PERSIST = 0,
    ZS_TH_MODEL_PERSIST = 1,
    ZS_TH_PREFETCH_BUCKET = 2,
    ZS_TH_MAX_LIVE = 3,
    ZS_TH_REUSE_DIST = 4,
    ZS_TH_COUNT = 5
};
#define ZS_TH_CLASSES 6
/** Value classes of each threshold, class 0 first (what zero bytes give).
 *  Each table includes 0 and ZS_INF.  Defined in scenario.c. */
extern const uint64_t zs_threshold_classes[ZS_TH_COUNT][ZS_TH_CLASSES];
extern const char *const zs_threshold_names[ZS_TH_COUNT]; /* "param_persistence_threshold", ... */
/** Pointer to the threshold field number `which` of cfg. */
uint64_t *zs_config_threshold(zs_config *cfg, int which);

/* ------------------------------------------------------------------ */
/* Module tree and parameters                                           */
/* ------------------------------------------------------------------ */

#define ZS_MOD_Z3_LEAF 0x1u /* deepspeed.utils.set_z3_leaf_modules (== ZO_MODULE_Z3_LEAF) */
#define ZS_MOD_GATHER_ALWAYS                                                                                           \
    0x2u /* == ZO_MODULE_GATHER_ALWAYS: fetches its whole subtree, children keep
                                     their hooks and make calls; not with Z3_LEAF on the same module */

/** Module i (id i).  Ids are DFS pre-order, as zoffload registers them
 *  (named_modules order): module 0 is the root (parent ZS_NONE); for
 *  i > 0, parent < i and parent is module i-1 or an ancestor of i-1. */
typedef struct zs_module {
    zs_id parent;           /* ZS_NONE for module 0 */
    uint8_t flags;          /* ZS_MOD_* */
    char name[ZS_NAME_LEN]; /* annotation only ("" = unnamed); not in the byte encoding, ignored by zs_scenario_equal */
} zs_module;

#define ZS_PARAM_FROZEN 0x1u /* requires_grad=False (== ZO_PARAM_FROZEN) */

/** Parameter i (ds_id i), registered in index order after all modules. */
typedef struct zs_param {
    zs_id owner;            /* module id */
    uint8_t flags;          /* ZS_PARAM_* */
    uint8_t elem_size;      /* bytes per element, 1..64 (codec classes 4, 2, 1, 8, else explicit) */
    uint32_t numel;         /* elements, 1..ZS_MAX_NUMEL */
    char name[ZS_NAME_LEN]; /* annotation only */
} zs_param;

/** Module `module` also uses parameter `param` (tied weights, DeepSpeed
 *  external parameters): zo_module_use_param(module, param), registered in
 *  list order after all parameters.  module != owner(param), no duplicate
 *  (module, param) pair. */
typedef struct zs_use {
    zs_id module;
    zs_id param;
} zs_use;

/* ------------------------------------------------------------------ */
/* Forward programs                                                     */
/* ------------------------------------------------------------------ */

/** Kinds of tensor reference. */
enum {
    ZS_REF_BATCH = 0,    /* the pass's batch input, requires_grad=False */
    ZS_REF_BATCH_RG = 1, /* the pass's leaf input with requires_grad=True (one leaf per pass) */
    ZS_REF_ARG = 2,      /* input `index` of the enclosing call, as wrapped by its hook D
                            (index >= n_in: keyword input index - n_in, not wrapped) */
    ZS_REF_OUT = 3,      /* output `index` of call `call` (a child call of the enclosing call made earlier) */
    /* Extension (.scn and replay only; only as a mixed input's extra term,
     * zs_mix.ref): parameter `call` (its ds_id, 32-bit like every id),
     * which the caller's module reads (zs_module_param_set) in the op that
     * computes the input - transformers 5.24.0's fused MixtralExperts reads
     * gate_up_proj before its act_fn child call and down_proj after it.
     * index and detach 0. */
    ZS_REF_PARAM = 4
};

/** A tensor reference inside a call's scope.  The "enclosing call" is the
 *  calling call for zs_call.in[], and the call itself for zs_call.use[]. */
typedef struct zs_ref {
    uint8_t kind;   /* ZS_REF_* */
    zs_id call;     /* ZS_REF_OUT: index of the producing call in the pass; else 0 */
    uint8_t index;  /* ZS_REF_ARG: input index; ZS_REF_OUT: output index; else 0 */
    uint8_t detach; /* 0/1: the reference is x.detach() (requires_grad=False, no edge) */
    /* Extension (.scn and replay only, `outK.J.raw`): ZS_REF_OUT only, the
     * output as the producing call's op made it, BEFORE its hook C wrapped
     * it - a tensor the module cached on self and the caller reads
     * afterwards: a path to the loss that bypasses the module's
     * pre-backward hook.  0/1. */
    uint8_t raw;
} zs_ref;

/** Call flags. */
#define ZS_CALL_NO_GRAD   0x1u /* the caller wraps this call in torch.no_grad() */
#define ZS_CALL_CKPT_RE   0x2u /* torch.utils.checkpoint(m, *in, use_reentrant=True) */
#define ZS_CALL_CKPT_NRE  0x4u /* torch.utils.checkpoint(m, *in, use_reentrant=False) */
#define ZS_CALL_RAISE     0x8u /* m.forward raises after its child calls, before its own op */
#define ZS_CALL_FLAGS_ALL 0xFu
/* Extension (.scn and replay only, like keyword inputs): with CKPT_RE or
 * CKPT_NRE, the checkpoint region is the call's BODY, not the call: the
 * module's forward is checkpoint(partial(forward, self, **kw), *args,
 * use_reentrant=...) - transformers 5.x's GradientCheckpointingLayer after
 * gradient_checkpointing_enable() (checked against transformers 5.24.0,
 * torch 2.15.0).  Hooks A and D fire before the region (with grad, on the
 * positional inputs), the child calls and the own op run inside it, hooks
 * B and C fire after it on the region's outputs; the recompute reruns the
 * child calls and the own op only (the children's hooks fire again, the
 * module's own never do).  Every rule of the checkpoint flags holds
 * (at most one kind, not on call 0, not inside a checkpointed subtree, no
 * RAISE in or on it, no keyword or mixed inputs on it). */
#define ZS_CALL_CKPT_BODY 0x10u

/** An extra term of a mixed input (.scn `in0+out1.0`): the caller's body
 *  computes input `slot` of the call (0..n_in-1 positional, n_in + j keyword
 *  j) as an op (a residual sum, a concatenation) of in[slot] (or kw[j]) and
 *  these terms, right before the call.  `ref` is in the caller's scope, like
 *  in[], or ZS_REF_PARAM: a parameter of the caller's module the op reads
 *  (.scn `arg0 + param(NAME)`; its gradient is ready when that op's
 *  backward has run). */
typedef struct zs_mix {
    uint8_t slot;
    zs_ref ref;
} zs_mix;

/** One module call m(*in) of a forward pass.
 *
 *  Calls of a pass are stored in pre-order (the order their hook A fires):
 *  call 0 is the root call (module 0, made by the step, parent ZS_NONE);
 *  a call's callee is a child module of its caller's module; a call's
 *  children (the calls its body makes, in order) follow it, each with its
 *  subtree, before its next sibling.  A z3 leaf module's call makes no
 *  child calls (its forward is opaque; it uses its whole subtree's
 *  parameters).
 *
 *  Timeline of one call (what the simulator executes):
 *    hook A, hook D(in), child calls in order, [raise], own op consuming
 *    use[] and the module's parameters producing n_out outputs, hook B,
 *    hook C(outputs).
 *
 *  A call is "unwound" if it raises or a descendant raises with a catcher
 *  above it; an unwound call has n_out = 0 and n_use = 0, no op, no B/C,
 *  and makes no further child calls after the raise.  Outputs of unwound
 *  calls do not exist, so nothing references them.
 *
 *  Checkpoint flags (at most one) are not allowed on call 0 nor inside a
 *  checkpointed call's subtree; RAISE is not allowed in (or on) a
 *  checkpointed subtree.  A checkpoint flag on a call made with grad
 *  disabled is inert (torch runs the function once, as a plain call).
 */
typedef struct zs_call {
    zs_id module;           /* callee module id */
    zs_id parent;           /* index of the calling call; ZS_NONE for call 0 */
    uint8_t flags;          /* ZS_CALL_* */
    zs_id catcher;          /* RAISE only: index of the ancestor call whose body catches the exception
                             and continues, or ZS_NONE = caught outside every module (the step's code
                             catches it: the pass's forward is abandoned, no backward) */
    uint8_t n_in;           /* 0..ZS_MAX_IN */
    uint8_t n_out;          /* 0..ZS_MAX_OUT (0 if unwound) */
    uint8_t n_use;          /* 0..ZS_MAX_USE tensors consumed by the own op (0 if unwound) */
    zs_ref in[ZS_MAX_IN];   /* scope: the caller's wrapped inputs (ARG), outputs of the caller's earlier
                             child calls (OUT), BATCH, BATCH_RG; call 0: BATCH or BATCH_RG only */
    zs_ref use[ZS_MAX_USE]; /* scope: this call's own wrapped inputs (ARG) and its child calls' outputs (OUT) */
    /* Extensions for captured models (.scn and replay only: zs_encode refuses
     * a scenario that has them, zs_decode never makes them; validated by
     * zs_scenario_validate).  Not on call 0, not on a checkpointed call. */
    uint8_t n_kw;             /* 0..ZS_MAX_KW keyword tensors m(..., key=t): hook D does not see them
                             (DeepSpeed's forward pre-hook gets the positional inputs only); in
                             the call's scope they are ARG n_in + j, the caller's tensor itself */
    zs_ref kw[ZS_MAX_KW];     /* scope: as in[] */
    uint8_t out_norg;         /* bit j: output j never requires grad (integer indices, a detached
                             tensor): hook C wraps it, its backward never runs */
    uint8_t out_alias;        /* bit j: output j is alias[j] itself, a tensor of the call's scope
                             (a child's output or an input returned as is: no op between) */
    zs_ref alias[ZS_MAX_OUT]; /* scope: as use[] */
    uint8_t op_nosave;        /* 0/1: the own op saves no tensor for backward (a residual sum): inside
                             a non-reentrant checkpoint its backward neither triggers the
                             recompute nor counts towards the early stop */
    uint8_t n_mix;            /* 0..ZS_MAX_MIX extra terms of mixed inputs, slots ascending */
    zs_mix mix[ZS_MAX_MIX];
} zs_call;

/** One forward pass (one micro-batch, one autograd graph).  calls[] is
 *  heap storage owned by the zs_scenario the pass belongs to (see "Storage"
 *  below): cap_calls slots, the first n_calls meaningful. */
typedef struct zs_pass {
    uint32_t n_calls;   /* 1..ZS_MAX_CALLS */
    uint8_t loss_mask;  /* bit j: root call output j is summed into the loss; 0 in eval steps
                             and when the root call is unwound */
    uint32_t cap_calls; /* allocated slots of calls[] */
    zs_call *calls;     /* [cap_calls] */
} zs_pass;

/** Step kinds. */
enum {
    ZS_STEP_TRAIN = 0,      /* fwd, bwd, optimizer step (1 pass) */
    ZS_STEP_EVAL = 1,       /* fwd under no_grad with ZO_FWD_EVAL; no backward, no optimizer step (1 pass) */
    ZS_STEP_ACCUM = 2,      /* gradient accumulation: (fwd_i, bwd_i) for i=1..k, then optimizer step (2..4 passes) */
    ZS_STEP_RETAIN = 3,     /* fwd, bwd(retain_graph=True), bwd(retain_graph=False), optimizer step (1 pass) */
    ZS_STEP_INTERLEAVE = 4, /* fwd_1..fwd_k, then bwd_1..bwd_k, then optimizer step (2..4 passes) */
    ZS_STEP_KINDS = 5
};

typedef struct zs_step {
    uint8_t kind;     /* ZS_STEP_* */
    uint8_t n_passes; /* 1 for TRAIN/EVAL/RETAIN, 2..4 for ACCUM/INTERLEAVE */
    zs_pass pass[ZS_MAX_PASSES];
} zs_step;

/* ------------------------------------------------------------------ */
/* Per-rank programs                                                    */
/* ------------------------------------------------------------------ */

/* ZeRO-3 is SPMD, but real training gives ranks different programs.  A
 * scenario's program (steps above) is every rank's base program; rank
 * edits change one rank's copy.  zs_scenario_for_rank() (ranks.h)
 * materialises rank r's program as an ordinary single-rank scenario,
 * which is what the simulator runs on that rank. */

#define ZS_MAX_RANK_EDITS 128 /* real per-rank MoE routing: 4 ranks x 3 steps x 2 layers need ~70 */

enum {
    /* MoE routing: on this rank call `call` invokes module `module`
     * instead of the base callee: a sibling (same parent) whose subtree is
     * isomorphic for every call in the call's subtree (the k-th child of
     * a mapped module maps to the k-th child of its image). */
    ZS_EDIT_ROUTE = 0,
    /* Data-dependent skip: this rank does not make call `call` (nor its
     * subtree).  The module is bypassed: a reference to its output j
     * becomes its input in[j % n_in] (detach kept: ref.detach |= in.detach);
     * with n_in = 0 an in[] reference becomes BATCH and a use[] reference
     * is dropped.  Not call 0. */
    ZS_EDIT_SKIP = 1,
    /* Data-dependent early exit: this rank skips call `call` and every
     * later sibling call of its caller's body (break out of a layer loop),
     * each bypassed as for SKIP.  Not call 0. */
    ZS_EDIT_EXIT = 2,
    /* This rank raises in call `call` (after its child calls, before its
     * own op), caught by the step's code: ZS_CALL_RAISE with catcher
     * ZS_NONE on this rank only - the pass's forward is abandoned, no
     * backward for it.  Not inside or on a checkpointed call. */
    ZS_EDIT_RAISE = 3,
    /* This rank does not run step `step` at all (its data loader ran dry,
     * it hit a bad batch): pass and call are 0.  Not every step of the
     * program. */
    ZS_EDIT_SKIP_STEP = 4,
    ZS_EDIT_KINDS = 5
};

/** One edit of rank `rank`'s copy of the program.  Calls are indices into
 *  the BASE pass step[step].pass[pass].  Validity: rank < W; edits sorted
 *  strictly by (rank, step, pass, call, kind); at most one edit per (rank,
 *  step, pass, call); no edit names a call that another edit of the same
 *  rank removes (inside a skipped/exited subtree, after a raise); at most
 *  one RAISE per (rank, step, pass); a SKIP_STEP excludes every other edit
 *  of that (rank, step); and the materialised program of every rank is a
 *  valid scenario. */
/* Details of the rules above, as ranks.c and codec.c implement them:
 *  - ROUTE: call >= 1; module != the base callee.  A ROUTE inside another
 *    ROUTE's subtree names its target among the BASE callee's siblings;
 *    the outer mapping then carries it (target's k-th child rank is kept).
 *  - SKIP/EXIT bypass: a use[] reference whose bypass lands on BATCH or
 *    BATCH_RG (not in a use[] scope) is dropped, like the n_in = 0 case.
 *  - RAISE: not on a call that raises already or that the base pass
 *    unwinds; the raising call keeps its child calls (it raises after
 *    them); every later call in pre-order is removed; the call and its
 *    ancestors get n_out = n_use = 0; the pass's loss_mask becomes 0.
 *  - Validity is checked edit by edit in sort order: each edit must be
 *    valid given the edits before it (so the edits of one (rank, step,
 *    pass) are valid as every prefix, not only as a whole).
 *  - Encoding: cfg.all_ranks, cfg.verify_collectives, the gather-always
 *    modules and the edits form a tail after the order bytes; with
 *    order_mode fuzzed and a non-empty tail the encoder pads the order
 *    bytes with zeros to ZS_MAX_ORDER (zero order bytes mean what missing
 *    ones do, and zs_scenario_equal ignores trailing zero order bytes).
 *    The decoder sorts the decoded edits and drops invalid ones. */
typedef struct zs_rank_edit {
    uint8_t rank;
    uint8_t kind; /* ZS_EDIT_* */
    uint8_t step;
    uint8_t pass; /* 0 for SKIP_STEP */
    zs_id call;   /* 0 for SKIP_STEP */
    zs_id module; /* ROUTE: the callee on this rank; else 0 */
} zs_rank_edit;

const char *zs_edit_kind_name(unsigned kind); /* "route", "skip", "exit", "raise", "skip-step" */

/* ------------------------------------------------------------------ */
/* Scenario                                                             */
/* ------------------------------------------------------------------ */

/* Storage.  The module, parameter and use arrays and every pass's calls
 * live on the heap, owned by the zs_scenario (a few KB of fixed fields
 * otherwise).  A zs_scenario object starts zero-filled (a static, `=
 * {0}`, memset 0, or zs_scenario_free): that is an empty scenario with no
 * storage, which every function that writes a whole scenario accepts as
 * its output (zs_scenario_init, zs_decode, zs_scenario_copy,
 * zs_scenario_for_rank, zs_scn_parse); those reuse the storage the object
 * already has and grow it as needed, so a scenario reused across fuzzer
 * executions allocates nothing once it has grown.  zs_scenario_free
 * releases it.  Never copy a zs_scenario (or a zs_pass or zs_step) by
 * assignment or memcpy: the copy would share the arrays (use
 * zs_scenario_copy).  Code that builds a scenario by hand reserves room
 * first (zs_scenario_reserve, zs_pass_reserve). */
typedef struct zs_scenario {
    zs_config cfg;
    uint32_t n_modules;                         /* 1..ZS_MAX_MODULES */
    uint32_t n_params;                          /* 0..ZS_MAX_PARAMS */
    uint32_t n_uses;                            /* 0..ZS_MAX_USES */
    uint8_t n_steps;                            /* 1..ZS_MAX_STEPS */
    uint16_t n_order;                           /* 0..ZS_MAX_ORDER; 0 unless order_mode == ZS_ORDER_FUZZED */
    zs_module *mod;                             /* [cap_modules] */
    zs_param *par;                              /* [cap_params] */
    zs_use *use;                                /* [cap_uses] */
    uint32_t cap_modules, cap_params, cap_uses; /* allocated slots */
    zs_step step[ZS_MAX_STEPS];
    uint8_t order[ZS_MAX_ORDER]; /* fuzzed order: k-th ready-node choice of the run picks
                                          ready[order[k] % n_ready] with ready sorted in engine
                                          order (so 0 = engine order); past n_order reads 0 */
    uint8_t n_edits;             /* 0..ZS_MAX_RANK_EDITS; 0 unless cfg.all_ranks */
    zs_rank_edit edit[ZS_MAX_RANK_EDITS];
} zs_scenario;

/* ------------------------------------------------------------------ */
/* Functions (scenario.c, codec.c)                                      */
/* ------------------------------------------------------------------ */

/** Sets *s (zero-filled or a scenario; its storage is reused) to the
 *  smallest valid scenario (the same as zs_decode of an empty input):
 *  DeepSpeed default thresholds except param_persistence_threshold 0,
 *  per-call policy, W=1, one root module, no parameters, one train step
 *  with one root call taking the batch input with requires_grad and one
 *  output summed into the loss.  Returns 0, or -1 if memory could not be
 *  allocated (then *s is empty: n_modules 0, and still owns what it had).
 *  Every array has room for the codec's bounds afterwards (ZS_CODEC_MAX_*
 *  modules, parameters, uses, and calls in each of the ZS_MAX_STEPS x
 *  ZS_MAX_PASSES passes), so a scenario within them can be built by hand
 *  without zs_scenario_reserve. */
int zs_scenario_init(zs_scenario *s);

/** Releases the storage of *s and zero-fills it (an empty scenario,
 *  reusable).  s may be NULL; a zero-filled s is a no-op. */
void zs_scenario_free(zs_scenario *s);

/** Grows s's arrays so that it holds at least `modules` modules, `params`
 *  parameters and `uses` uses (existing entries kept, new slots zeroed;
 *  never shrinks).  Returns 0, or -1 if a count exceeds its ZS_MAX_* or
 *  memory could not be allocated (s unchanged then). */
int zs_scenario_reserve(zs_scenario *s, uint32_t modules, uint32_t params, uint32_t uses);

/** Grows p->calls to at least `calls` slots (entries kept, new slots
 *  zeroed).  p must belong to a zs_scenario (its storage is released
 *  by zs_scenario_free).  Returns 0, or -1 if calls > ZS_MAX_CALLS or memory
 *  could not be allocated (p unchanged then). */
int zs_pass_reserve(zs_pass *p, uint32_t calls);

/** Copies step *src (kind, passes and their calls) into *dst, whose passes
 *  keep and grow their own storage (both steps belong to scenarios; dst's
 *  passes beyond src's n_passes are cleared).  dst == src is a no-op.
 *  Returns 0, or -1 if memory could not be allocated (dst then has
 *  n_passes 0). */
int zs_step_copy(zs_step *dst, const zs_step *src);

/** Deep copy: *dst becomes equal (zs_scenario_equal_strict, names included)
 *  to *src, reusing dst's storage.  dst is zero-filled or a scenario;
 *  dst == src is a no-op.  Returns 0, or -1 if memory could not be
 *  allocated (dst is then a scenario with n_modules 0: not valid, still
 *  owning its storage). */
int zs_scenario_copy(zs_scenario *dst, const zs_scenario *src);

/** 1 if a and b are the same scenario (every field that has meaning;
 *  unused array slots, annotation names and trailing zero order bytes -
 *  order bytes past n_order read 0 - are ignored), else 0. */
int zs_scenario_equal(const zs_scenario *a, const zs_scenario *b);
/** Like zs_scenario_equal but module and parameter names must match too
 *  (for the .scn printer/parser round trip). */
int zs_scenario_equal_strict(const zs_scenario *a, const zs_scenario *b);

/** 1 if s uses a construct the byte codec does not hold (keyword or mixed
 *  inputs, outputs without grad, aliased outputs, ops that save nothing,
 *  checkpointed bodies): it lives in .scn text and replays, zs_encode refuses it. */
int zs_scenario_has_ext(const zs_scenario *s);

/** 1 if s lies within the byte codec's bounds (ZS_CODEC_MAX_*: modules,
 *  parameters, uses, calls per pass, child calls per call), else 0.  A
 *  valid scenario beyond them lives in .scn text and replays; zs_encode
 *  refuses it. */
int zs_scenario_fits_codec(const zs_scenario *s);

/** 0 if s is valid; else -1 with a message naming the first offending
 *  field ("step 1 pass 0 call 3: in[0]: value 7 not a candidate") in
 *  err[0..errlen) (err may be NULL). */
int zs_scenario_validate(const zs_scenario *s, char *err, size_t errlen);
/** The rules of one pass, for a pass built outside s (a rank's copy of
 *  step si's pass pi, ranks.c): 0 if p is valid as pass pi of a step of
 *  kind `kind` at index si of s (the model's bounds), else -1 with the
 *  message zs_scenario_validate would give (msg may be NULL). */
int zs_pass_validate(const zs_scenario *s, unsigned si, unsigned pi, unsigned kind, const zs_pass *p, char *msg,
                     size_t msgn);

/** Decodes bytes data[0..size) as a sequence of bounded choices into *out
 *  (zero-filled or a scenario: its storage is reused, grown to the codec's
 *  bounds on first use, so a reused *out costs no allocation).  Every byte
 *  string gives a valid scenario within ZS_CODEC_MAX_*; missing bytes read
 *  as 0; small inputs give small scenarios.  Returns the number of bytes
 *  consumed (<= size), or ZS_DECODE_NOMEM if memory could not be allocated
 *  (*out is then not valid: n_modules 0). */
size_t zs_decode(const uint8_t *data, size_t size, zs_scenario *out);
#define ZS_DECODE_NOMEM ((size_t)-1)

/** Encodes a valid scenario into buf[0..cap).  Returns the number of bytes
 *  the encoding needs (which may exceed cap: then only a prefix was
 *  written; call again with a larger buffer), or 0 if s is not valid
 *  (zs_scenario_validate says why).  zs_decode of the result gives a
 *  scenario equal to s. */
size_t zs_encode(const zs_scenario *s, uint8_t *buf, size_t cap);
/** Upper bound of zs_encode's size for any scenario. */
#define ZS_ENCODE_MAX (1u << 16)

/* Each rank's program (zs_scenario_for_rank) and the rank edits' rules:
 * ranks.h. */

/* Helpers used by the simulator, .scn tools, minimiser and enumerator. */

/** Depth of module m (root = 0). */
int zs_module_depth(const zs_scenario *s, unsigned m);
/** 1 if module a is b or an ancestor of b. */
int zs_module_is_ancestor(const zs_scenario *s, unsigned a, unsigned b);
/** 1 if m is strictly inside a z3 leaf module's subtree (gets no hooks). */
int zs_module_in_leaf(const zs_scenario *s, unsigned m);
/** 1 if a strict ancestor of m has ZS_MOD_GATHER_ALWAYS (then m keeps its
 *  hooks but never fetches, releases or enters the trace: the ancestor
 *  holds its parameters). */
int zs_module_under_gather_always(const zs_scenario *s, unsigned m);
/** 1 if m's fetch gathers its whole subtree: m is a z3 leaf, or m has
 *  ZS_MOD_GATHER_ALWAYS and is neither inside a z3 leaf nor below another
 *  gather-always module (where the flag has no effect). */
int zs_module_gathers_subtree(const zs_scenario *s, unsigned m);
/** The parameters module m's op uses (and the runtime fetches for it):
 *  its own, its external/tied uses and, if m gathers its subtree (a z3
 *  leaf or an effective gather-always module), those owned by
 *  every module of its subtree (DeepSpeed's get_all_parameters(m,
 *  recurse=z3_leaf): named_parameters plus m's own external parameters).  Writes sorted unique ids to out (capacity
 *  s->n_params); returns the count. */
int zs_module_param_set(const zs_scenario *s, unsigned m, zs_id *out);
/** Depth of call c in pass p (call 0 = 0). */
int zs_call_depth(const zs_pass *p, unsigned c);

/* ------------------------------------------------------------------ */
/* Validity rules                                                       */
/* ------------------------------------------------------------------ */

/* Which choices a valid scenario may make, one function per choice: the
 * codec's walker (zs_decode, zs_encode, zs_scenario_validate and so the
 * .scn parser) takes every choice from them, the .scn parser's early
 * checks and the enumerator's generator (which picks representatives
 * among the candidates) too, so they cannot disagree.  The codec's byte
 * layout walks the candidates in the order given here. */

/** Module i >= 1's parent (modules in DFS pre-order): i-1, then its
 *  ancestors up to the root, nearest first.  zs_parent_count: how many;
 *  zs_parent_at: the k-th (k < count); zs_parent_index: the index of
 *  `parent` among them (count if it is not one). */
unsigned zs_parent_count(const zs_scenario *s, unsigned i);
zs_id zs_parent_at(const zs_scenario *s, unsigned i, unsigned k);
unsigned zs_parent_index(const zs_scenario *s, unsigned i, unsigned parent);

/** 1 if a step of this kind has 2..ZS_MAX_PASSES passes (accum,
 *  interleave), 0 if it has exactly one. */
int zs_step_multi_pass(unsigned kind);

/** Where a call (or a pass's root call) is left: */
#define ZS_UNWIND_NONE (-1) /* it completed */
#define ZS_UNWIND_OUT  (-2) /* an exception unwound it past the root call */
/* (else the index of the call whose body catches the exception) */

/** 1 if a pass whose root call ended with `unwind` in a step of this kind
 *  has a loss (loss_mask may be non-zero): it completed, not in eval. */
int zs_pass_has_loss(unsigned kind, int unwind);

/** The modules a call of module caller_mod may call: its child modules,
 *  in id order, none if it is a z3 leaf.  Writes them to out (may be NULL:
 *  count only); looks only inside caller_mod's subtree, so the modules
 *  must be in pre-order (zs_parent_count's rule).  zs_callee_ok: m is one
 *  of them. */
unsigned zs_callee_candidates(const zs_scenario *s, unsigned caller_mod, zs_id *out);
int zs_callee_ok(const zs_scenario *s, unsigned caller_mod, unsigned m);

/** The references an input of call `self` may name, whose caller is call
 *  `caller` (ZS_NONE for the root call): the outputs of the caller's child
 *  calls made before self (most recent first), the caller's inputs
 *  (positional, then keyword), BATCH_RG, BATCH.  Writes them to cand (may
 *  be NULL: count only); returns how many. */
unsigned zs_input_candidates(const zs_pass *p, unsigned caller, unsigned self, zs_ref *cand);
/** The references call c's own op may consume: its inputs, then the
 *  outputs of its child calls (calls c+1 .. end-1 whose caller is c), in
 *  call order. */
unsigned zs_use_candidates(const zs_pass *p, unsigned c, unsigned end, zs_ref *cand);
/** 1 if r (kind, call and index; detach and raw are not looked at) is
 *  among zs_input_candidates(p, caller, end) (use 0) or
 *  zs_use_candidates(p, caller, end) (use 1), without listing them. */
int zs_ref_in_scope(const zs_pass *p, unsigned caller, unsigned end, int use, const zs_ref *r);

/** Call ci may be checkpointed: not the root call, not inside a
 *  checkpointed call. */
int zs_call_may_checkpoint(unsigned ci, int in_ckpt);
/** A call may raise: not inside or on a checkpointed call. */
int zs_call_may_raise(int in_ckpt, int ckpt);
/** The catcher of a raising call whose caller is `caller`: the caller, its
 *  ancestor calls up to the root call, then ZS_NONE (the step's code).
 *  zs_catcher_count: how many; zs_catcher_at: the k-th; zs_catcher_index:
 *  the index of `catcher` (count if it is not one). */
unsigned zs_catcher_count(const zs_pass *p, unsigned caller);
zs_id zs_catcher_at(const zs_pass *p, unsigned caller, unsigned k);
unsigned zs_catcher_index(const zs_pass *p, unsigned caller, unsigned catcher);

/** Unwinding.  zs_unwind_after_child: where call ci's body is left after a
 *  child call that ended with `child` (ZS_UNWIND_NONE if the child
 *  completed or ci's body catches its exception; a call whose body is left
 *  makes no further child calls).  zs_call_unwinds_to: where call c is
 *  left after its body ended with `body` (a raising call raises after a
 *  completed body).  A call that is left this way has no outputs and
 *  consumes nothing. */
int zs_unwind_after_child(int child, unsigned ci);
int zs_call_unwinds_to(const zs_call *c, int body);

/** Policy names: "per-call", "reset-on-forward", "lazy-init",
 *  "init-at-register" (same as zo_policy_name). */
const char *zs_policy_name(unsigned policy);
/** Returns 0..3, or -1 if unknown. */
int zs_policy_from_name(const char *name);
const char *zs_step_kind_name(unsigned kind); /* "train", "eval", "accum", "retain", "interleave" */
/** Profile names as in .scn config lines and JSON: "2.x", "2.x-no-early-stop",
 *  "1.13" / "0.19", "0.19-hooks", "0.15"; NULL if out of range. */
const char *zs_torch_profile_name(unsigned profile);
const char *zs_ds_profile_name(unsigned profile);
/** Inverses; -1 if unknown. */
int zs_torch_profile_from_name(const char *name);
int zs_ds_profile_from_name(const char *name);


#ifdef __cplusplus
}
#endif
#endif /* ZS_SCENARIO_H */
