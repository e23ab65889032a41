/*
 * zoffload_backend.h - the data-plane interface of libzoffload.
 * (Test-only behaviour of the host backend - deferred completion, a
 * physical cap, no copies, no poison fill, fault injection - is in
 * zoffload_testing.h.)
 *
 * A backend owns every rank's shard storage and the full (gathered)
 * buffers, and performs the collectives.  The runtime (control plane)
 * drives it through one vtable, so the same hooks run on the in-process
 * host world (tests, fuzzing) and on CUDA + NCCL.
 *
 * Units: numel in elements, sizes in bytes.  All-gathers use uniform
 * padded shards: partition_numel = ceil(numel / W) elements per rank; the
 * full buffer handed to all_gather_start has room for W * partition_numel
 * elements, of which the first numel are the parameter.
 */
#ifndef ZOFFLOAD_BACKEND_H
#define ZOFFLOAD_BACKEND_H

#include "zoffload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZO_BACKEND_OPS_VERSION 3u /**< 2 added exchange, 3 prefetch; the runtime still accepts version 1 and 2 vtables */

/** One parameter of an all-gather group. */
typedef struct zo_gather_item {
    zo_param_id param;
    void *full;               /**< destination, W * partition_numel * elem_size bytes, from full_alloc */
    uint64_t numel;           /**< elements */
    uint64_t partition_numel; /**< elements per rank */
    uint32_t elem_size;       /**< bytes */
} zo_gather_item;

/** Opaque in-flight work (one per all-gather group, DeepSpeed's
 *  AllGatherCoalescedHandle). */
typedef struct zo_work zo_work;

typedef enum zo_reduce_op { ZO_REDUCE_SUM = 0, ZO_REDUCE_AVG = 1 } zo_reduce_op;

/** A backend's operations.  Define a vtable with designated initialisers
 *  (.name = "...", .param_add = ...).  The ops are called only through the
 *  zo_backend_* functions below, which have checked every argument that
 *  needs no backend state before the call: an op checks only its own
 *  handles and state. */
typedef struct zo_backend_ops {
    uint32_t version; /**< ZO_BACKEND_OPS_VERSION */
    const char *name; /**< "host", "nccl", ... */

    /** World size and rank this backend was created for. */
    int (*world_size)(void *ctx);
    int (*rank)(void *ctx);

    /** Create the shard(s) of a new parameter.  The host backend creates
     *  all W shards, filled from zo_host_param_byte().  */
    zo_status (*param_add)(void *ctx, zo_param_id param, uint64_t numel, uint32_t elem_size, uint64_t partition_numel);
    /** Remove a parameter's shards (runtime destroy). */
    void (*param_remove)(void *ctx, zo_param_id param);

    /** Allocate / free a full buffer of `bytes` bytes for param. */
    zo_status (*full_alloc)(void *ctx, zo_param_id param, size_t bytes, void **out);
    void (*full_free)(void *ctx, zo_param_id param, void *buf);

    /** Issue one coalesced all-gather for n items (ncclGroupStart/End on
     *  NCCL).  *out receives the work, released with work_free. */
    zo_status (*all_gather_start)(void *ctx, const zo_gather_item *items, size_t n, zo_work **out);
    /** Block until the work completed (data in every item's full buffer). */
    zo_status (*wait)(void *ctx, zo_work *w);
    /** *done = 1 if complete, without blocking. */
    zo_status (*query)(void *ctx, zo_work *w, int *done);
    void (*work_free)(void *ctx, zo_work *w);

    /** Reduce-scatter slot (may be NULL: ZO_ERR_UNSUPPORTED).
     *  full_grad: numel float32 gradient of this rank; shard_out:
     *  partition_numel float32 elements of this rank's reduced shard. */
    zo_status (*reduce_scatter)(void *ctx, zo_param_id param, const float *full_grad, float *shard_out, uint64_t numel,
                                uint64_t partition_numel, zo_reduce_op op);

    /** Message for the backend's last error (may be NULL). */
    const char *(*last_error)(void *ctx);

    /** Free the backend context. */
    void (*destroy)(void *ctx);

    /* ---- version 2 ---- */
    /** Blocking all-gather of a small control message (the runtime's
     *  collective fingerprint, zo_config.verify_collectives): every rank
     *  sends `bytes` bytes (1..256) from send; recv (W * bytes bytes)
     *  receives rank r's message at offset r * bytes, this rank's
     *  included.  A collective like any other: every rank must call it at
     *  the same point of its collective sequence.  NCCL: ncclAllGather on
     *  the backend's communicator and stream, then a synchronous copy to
     *  the host; MPI: MPI_Allgather; single-view host backend: every rank
     *  is this rank (W copies of send); host world: a matched collective
     *  that returns ZO_ERR_COLLECTIVE_MISMATCH if the world would hang.
     *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BACKEND,
     *  ZO_ERR_COLLECTIVE_MISMATCH (host world only). */
    zo_status (*exchange)(void *ctx, const void *send, size_t bytes, void *recv);

    /* ---- version 3 ---- */
    /** A hint, with no effect on state or results: the runtime will soon
     *  call full_alloc and all_gather_start for param, so the backend may
     *  bring what those read of its own per-parameter state into the CPU
     *  cache (__builtin_prefetch; nothing that can fault or block).  The
     *  runtime calls it from the trace-driven prefetch (a complete trace,
     *  the __param_queue of DeepSpeed 0.19.8 and 0.15.4's
     *  PartitionedParameterCoordinator), for the parameter after the one the
     *  queue pops next; with many parameters that record is otherwise a
     *  cache miss on every gather.  param may be unknown to the backend
     *  (then nothing happens).  May be NULL. */
    void (*prefetch)(void *ctx, zo_param_id param);
} zo_backend_ops;

/** A backend instance: vtable plus context.  Owned by whoever created it. */
struct zo_backend {
    const zo_backend_ops *ops;
    void *ctx;
};

/** Frees a backend made by a zo_backend_*_create function (NULL ok).
 *  Destroy every runtime using it first. */
void zo_backend_destroy(zo_backend *b);

/** Largest exchange message in bytes per rank (zo_backend_ops.exchange). */
#define ZO_BACKEND_EXCHANGE_MAX 256u

/* ------------------------------------------------------------------ */
/* Calling a backend                                                    */
/* ------------------------------------------------------------------ */

/* The runtime, the tests and every backend wrapping another call a backend
 * through these functions.  (Calling b->ops directly skips these checks: the
 * caller must pass arguments they would accept.)  Each checks the arguments that need no backend state - a NULL
 * backend or pointer, a missing op, counts, sizes, ids - and returns
 * ZO_ERR_INVALID_ARG (ZO_ERR_OVERFLOW, ZO_ERR_UNSUPPORTED where said)
 * without calling the backend; otherwise it returns what the op returns.
 * So a backend's ops may rely on these checks having passed and check only
 * what needs their own state (a parameter not added: ZO_ERR_BAD_HANDLE; a
 * buffer or work not live, sizes differing from param_add's:
 * ZO_ERR_INVALID_ARG; ...; see each backend's header).
 *
 * Messages: after a failed call, zo_backend_last_error(b) on the same thread
 * ("<name> backend: <op>...: ..."); a refusal by these checks is also in
 * zo_last_error(NULL).  Units as in zo_backend_ops: numel in elements,
 * sizes in bytes.  Nothing is allocated or owned by these functions. */

/** param_add: param not ZO_NO_PARAM, numel > 0, elem_size 1..64 bytes,
 *  partition_numel == ceil(numel / W) with W the backend's world size, and
 *  numel, partition_numel and W * partition_numel elements fit in uint64_t
 *  and size_t bytes (ZO_ERR_OVERFLOW).  ZO_ERR_INVALID_ARG also for a NULL
 *  b, a backend without param_add / world_size or reporting W < 1. */
zo_status zo_backend_param_add(zo_backend *b, zo_param_id param, uint64_t numel, uint32_t elem_size,
                               uint64_t partition_numel);
/** param_remove (an optional op: nothing when absent or b is NULL). */
void zo_backend_param_remove(zo_backend *b, zo_param_id param);
/** full_alloc of `bytes` bytes (> 0) for param; *out (not NULL) is set to
 *  NULL first, then to the buffer, owned by the backend until
 *  zo_backend_full_free.  ZO_ERR_INVALID_ARG: NULL b/out, 0 bytes. */
zo_status zo_backend_full_alloc(zo_backend *b, zo_param_id param, size_t bytes, void **out);
/** full_free (nothing when b or buf is NULL). */
void zo_backend_full_free(zo_backend *b, zo_param_id param, void *buf);
/** all_gather_start of n items (n may be 0); *out (not NULL) is set to
 *  NULL first, then to the work, released by zo_backend_work_free.
 *  ZO_ERR_INVALID_ARG: NULL b/out, NULL items with n > 0. */
zo_status zo_backend_all_gather_start(zo_backend *b, const zo_gather_item *items, size_t n, zo_work **out);
/** wait; ZO_ERR_INVALID_ARG: NULL b or w. */
zo_status zo_backend_wait(zo_backend *b, zo_work *w);
/** query; *done (not NULL) is set to 0 first.  ZO_ERR_INVALID_ARG: NULL
 *  b, w or done. */
zo_status zo_backend_query(zo_backend *b, zo_work *w, int *done);
/** work_free (nothing when b or w is NULL). */
void zo_backend_work_free(zo_backend *b, zo_work *w);
/** reduce_scatter (float32 elements).  ZO_ERR_UNSUPPORTED: the backend has
 *  no reduce_scatter; ZO_ERR_INVALID_ARG: NULL b or buffer, op not SUM/AVG. */
zo_status zo_backend_reduce_scatter(zo_backend *b, zo_param_id param, const float *full_grad, float *shard_out,
                                    uint64_t numel, uint64_t partition_numel, zo_reduce_op op);
/** exchange of `bytes` bytes (1..ZO_BACKEND_EXCHANGE_MAX) per rank.
 *  ZO_ERR_UNSUPPORTED: a version 1 vtable or no exchange op;
 *  ZO_ERR_INVALID_ARG: NULL b, send or recv, bytes out of range. */
zo_status zo_backend_exchange(zo_backend *b, const void *send, size_t bytes, void *recv);
/** prefetch hint for param (an optional op: nothing when b is NULL, the
 *  vtable is version 1 or 2, or the op is absent).  No status: a hint
 *  cannot fail, and a param the backend does not know is ignored. */
void zo_backend_prefetch(zo_backend *b, zo_param_id param);
/** The message of this thread's last failed zo_backend_* call on b if
 *  these checks refused it, else the backend's own last_error; "" when
 *  there is none (b NULL, no last_error op).  Never NULL.  Owned by the
 *  backend or the thread; valid until the next call on b. */
const char *zo_backend_last_error(const zo_backend *b);

/* ------------------------------------------------------------------ */
/* Host backend: an in-process simulated world doing real memory copies */
/* ------------------------------------------------------------------ */

#define ZO_HOST_CONFIG_VERSION 3u

/** A multi-rank host world: W ranks' host backends in one process, one
 *  per rank, each driven by its own runtime (typically on its own thread),
 *  sharing shards and matching collectives.  Opaque. */
typedef struct zo_host_world zo_host_world;

/** Test-only behaviour of a host backend (zoffload_testing.h). */
typedef struct zo_host_testing zo_host_testing;

typedef struct zo_host_config {
    size_t size;      /**< sizeof(zo_host_config) */
    uint32_t version; /**< ZO_HOST_CONFIG_VERSION */
    int world_size;   /**< W, 1..ZO_MAX_WORLD_SIZE; must equal the runtime's */
    int rank;         /**< the rank whose view the runtime has */
    zo_allocator allocator;
    zo_host_world *world;           /**< NULL: one rank's view (the backend stores all W shards itself and
                               completes gathers alone).  Else: this backend is rank `rank` of the
                               world (world_size must equal the world's); see zo_host_world_create. */
    uint64_t cache_bytes;           /**< Budget in bytes of the cache of freed full buffers (0: no cache, every
                               full_free really frees).  full_free keeps a buffer for reuse when the
                               cached buffers' bytes (physical bytes, zo_host_physical_bytes) stay
                               within the budget, else frees it (nothing is evicted); full_alloc takes
                               the most recently cached buffer of exactly the same physical size, if
                               any.  What PyTorch's CUDA caching allocator does for DeepSpeed's
                               gathered parameters: a released block is kept and handed to the next
                               request of its size instead of going back to the system (here: no
                               mmap/munmap and page faults per fetch above glibc's mmap threshold).
                               Cached buffers are not live, are freed by destroy, and are poisoned
                               for AddressSanitizer while cached, so a use after full_free is still
                               reported.  Default ZO_HOST_CACHE_BYTES_DEFAULT. */
    const zo_host_testing *testing; /**< NULL (production): immediate completion, no cap, real copies,
                                         full buffers poison-filled as the build says
                                         (zo_host_poison_default).  Else test-only behaviour,
                                         read (copied) by zo_backend_host_create: zoffload_testing.h. */
} zo_host_config;

/** Default zo_host_config.cache_bytes: 1 GiB of freed full buffers kept
 *  for reuse per host backend (per rank in a world). */
#define ZO_HOST_CACHE_BYTES_DEFAULT (1ull << 30)

#define ZO_HOST_CONFIG_INIT                                                                                            \
    {                                                                                                                  \
        sizeof(zo_host_config), ZO_HOST_CONFIG_VERSION, 1, 0, {NULL, NULL, NULL}, NULL, ZO_HOST_CACHE_BYTES_DEFAULT,   \
            NULL                                                                                                       \
    }

/** 1 if this library was built to poison-fill gathered buffers by default
 *  (CMake option ZO_POISON, compile definition ZO_BUILD_POISON=1: on by
 *  default in builds with sanitizers, a fuzz engine or CMAKE_BUILD_TYPE
 *  Debug, which is what `./build.sh test`, `fuzz`, `run`, the CI and
 *  OSS-Fuzz builds are), else 0 (a plain release build: `./build.sh`,
 *  the benchmarks).  It decides whether the host backend fills its full
 *  buffers (unless zo_host_testing.no_poison says otherwise) and whether the MPI backend fills its buffers
 *  (zoffload_mpi.h).  Neither PyTorch nor DeepSpeed fills a gathered
 *  parameter before the all-gather: DeepSpeed 0.19.8's all-gather of
 *  partitioned parameters (runtime/zero/partition_parameters.py) allocates
 *  the full buffer with torch.empty, uninitialised memory in torch 2.15.0; the fill is a debugging aid of
 *  this library.  Never fails. */
int zo_host_poison_default(void);

/** Creates a host backend; *out is owned by the caller (zo_backend_destroy).
 *  Accepts version 1 and 2 configs (zoffload_testing.h's
 *  zo_host_config_v2: the test-only fields were inline).
 *  Errors, each with its cause in zo_last_error(NULL) (thread-local, see
 *  zoffload.h): ZO_ERR_INVALID_ARG (NULL, world_size/rank out of range,
 *  allocator with only one of alloc/free, a world of another size, a rank
 *  that joined already, bad testing fields: zoffload_testing.h),
 *  ZO_ERR_VERSION, ZO_ERR_NOMEM. */
zo_status zo_backend_host_create(const zo_host_config *cfg, zo_backend **out);

/** Byte byte_index of parameter param's original full tensor: the
 *  deterministic content the host backend shards and gathers. */
uint8_t zo_host_param_byte(zo_param_id param, uint64_t byte_index);

/* ------------------------------------------------------------------ */
/* Multi-rank host world                                                */
/* ------------------------------------------------------------------ */

/** Creates a world of world_size ranks (1..ZO_MAX_WORLD_SIZE; the fuzz
 *  harness uses up to 8).  Each rank then creates its host backend with
 *  zo_host_config.world = *out and .rank = r (each rank at most once).
 *
 *  Semantics (an in-process stand-in for one NCCL communicator):
 *  - Rank r's backend stores only shard r of each parameter (content from
 *    zo_host_param_byte, physical cap as in single view); an all-gather
 *    copies every rank's shard into every rank's full buffer (real memcpy
 *    from the other ranks' memory).
 *  - Collectives (each all_gather_start group, each exchange, each
 *    reduce_scatter) are numbered per rank in issue order, 0, 1, ...  The
 *    k-th collectives of all ranks are matched on kind, item count and,
 *    per item, (param id, numel, partition_numel, elem_size); exchanges on
 *    bytes.  When the last rank issues its k-th collective and all match,
 *    the data moves and every rank's k-th completes.  A mismatch completes
 *    every rank's k-th with ZO_ERR_COLLECTIVE_MISMATCH, without moving data
 *    (real NCCL would hang, or silently mix tensors).
 *  - wait() blocks (condition variable; or the world's scheduler,
 *    zoffload_testing.h's zo_host_world_set_sched) until its collective
 *    completes.
 *    A rank that has destroyed its backend has left.  When no rank can
 *    make progress (every rank is blocked in wait/exchange/reduce_scatter
 *    or has left) the world would hang: every blocked call returns
 *    ZO_ERR_COLLECTIVE_MISMATCH, and so does every later blocking call.
 *  - query() never blocks: done = 0 until the collective completed.
 *    Deferred mode and zo_host_progress do not apply to world backends.
 *  - Deterministic: the outcome of every call depends only on each rank's
 *    own sequence of calls, never on thread timing.
 *  The first mismatch or would-hang is recorded: zo_host_world_report.
 *  Errors (message in zo_last_error(NULL)): ZO_ERR_INVALID_ARG (NULL out,
 *  world_size out of range, allocator with only one of alloc/free),
 *  ZO_ERR_NOMEM (allocator may be NULL: malloc). */
zo_status zo_host_world_create(int world_size, const zo_allocator *allocator, zo_host_world **out);

/** Frees the world.  Every rank's backend must have been destroyed first
 *  (ZO_ERR_STATE otherwise, nothing freed, message in zo_last_error(NULL)).
 *  NULL: ZO_OK. */
zo_status zo_host_world_destroy(zo_host_world *w);

/** ZO_OK if every collective so far matched and nothing would hang; else
 *  ZO_ERR_COLLECTIVE_MISMATCH and, in buf[0..len) (may be NULL/0), the
 *  first finding, naming both sides, e.g.
 *  "collective 7: rank 0 all-gather [p3 1024x4B] vs rank 1 all-gather [p5 1024x4B]" or
 *  "collective 7: would hang: rank 0 waits in all-gather [p3 1024x4B]; rank 1 left after 7 collectives".
 *  NULL w: ZO_ERR_INVALID_ARG (message in zo_last_error(NULL)).
 *  Thread-safe. */
zo_status zo_host_world_report(const zo_host_world *w, char *buf, size_t len);

/** Collectives rank has issued so far (0 for an unknown rank). */
uint64_t zo_host_world_collectives(const zo_host_world *w, int rank);

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_BACKEND_H */
