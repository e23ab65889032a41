/*
 * zoffload_nccl.h - the CUDA + NCCL data plane of libzoffload (library
 * zoffload_nccl, built only when the CUDA toolkit and NCCL are found).
 *
 * One process per GPU, DeepSpeed's layout: rank r of a data-parallel world
 * of W ranks owns partition r (partition_numel = ceil(numel / W) elements)
 * of every parameter; a gather is one ncclAllGather of uniform padded
 * shards.  The backend plugs into the runtime through zo_config.backend
 * (zoffload_backend.h); the runtime's hooks are the same as with the host
 * backend.
 *
 * Streams and completion (what the vtable operations mean here)
 *   compute stream   the stream the framework computes on (zo_nccl_config.
 *                    compute_stream; NULL = the legacy default stream 0).
 *   gather stream    a non-blocking stream owned by the backend; every
 *                    all-gather, H2D shard copy, reduce-scatter and full
 *                    buffer allocation/free is enqueued on it.
 *   full_alloc       cudaMallocFromPoolAsync on the gather stream, from a
 *                    pool owned by the backend (stream-ordered, reused
 *                    without a cache of our own).
 *   all_gather_start enqueues on the gather stream: a wait for
 *                    zo_nccl_mark_shards_written() if one is pending, the H2D
 *                    copies of cpu-offloaded shards, one ncclGroupStart /
 *                    ncclAllGather per item / ncclGroupEnd for the
 *                    zo_gather_item group, and one CUDA event (the work).
 *   query            *done = 1 when that event has completed on the device
 *                    (cudaEventQuery == cudaSuccess): the data is in every
 *                    full buffer and readable from any stream or, after a
 *                    cudaMemcpy, from the host.  Also polls
 *                    ncclCommGetAsyncError.
 *   wait             stream mode (default): makes the compute stream wait on
 *                    the event (cudaStreamWaitEvent) - no host
 *                    synchronisation; the data is usable by everything
 *                    enqueued on the compute stream afterwards (and by
 *                    cudaMemcpy on the legacy default stream when that is the
 *                    compute stream).  Host mode (wait_host = 1): blocks the
 *                    host until the event completed, polling
 *                    ncclCommGetAsyncError.  Both poll the async error.
 *   full_free        records an event on the compute stream (after the last
 *                    use of the buffer enqueued so far), makes the gather
 *                    stream wait on it, then cudaFreeAsync on the gather
 *                    stream: the host never blocks and memory is reused by
 *                    the pool without a cache of our own.
 *   exchange         (ops version 2; the runtime's verify_collectives
 *                    fingerprint) host send -> this rank's slot of a device
 *                    staging buffer of W * 256 bytes (cudaMalloc'ed at the
 *                    first exchange, freed at destroy), in-place
 *                    ncclAllGather of `bytes` bytes on the gather stream and
 *                    communicator (ordered with the all-gathers), copy of the
 *                    W slots to recv, then a host wait like wait_host's
 *                    (async error polled, wait_timeout_ms applies): recv is
 *                    filled when it returns.  Counted in
 *                    zo_nccl_stats.exchanges and host_waits.
 *   prefetch         (ops version 3) a cache hint for the parameter's host
 *                    record (__builtin_prefetch), nothing else.
 *   back-pressure    at most max_outstanding_gathers live works (issued, not
 *                    yet work_free'd) may be not known complete;
 *                    all_gather_start blocks the host on the oldest one
 *                    beyond that (counted in zo_nccl_stats.backpressure_waits).
 *                    A work freed before completion stops counting: the
 *                    runtime then owns its buffers and stream order protects
 *                    them.
 *
 * Pointers
 *   Full buffers handed out by full_alloc (and so by zo_param_access) are
 *   DEVICE pointers.  Shards are device memory, or host memory when
 *   offload_param = ZO_NCCL_OFFLOAD_CPU (pinned with pin_memory = 1), as in
 *   DeepSpeed's offload_param {device: cpu, pin_memory}.
 *   reduce_scatter (vtable slot and zo_nccl_reduce_scatter) accepts host or
 *   device float32 pointers, told apart with cudaPointerGetAttributes:
 *     both device (or managed): stream-ordered, no host synchronisation: the
 *       gather stream waits for the compute stream, runs ncclReduceScatter
 *       and the compute stream waits for the result;
 *     a host pointer on either side: staged through pool device buffers and
 *       synchronous (the call returns when shard_out holds the result).
 *   Every rank contributes its own gradient: SUM gives sum over ranks, AVG
 *   that sum / W (ncclAvg).  The host backend's convention (every rank has
 *   the same gradient) gives the same numbers when all ranks pass the same
 *   gradient, which is how the GPU tests compare the two.
 *
 * Errors
 *   Every CUDA and NCCL failure becomes a zo_status (cudaErrorMemoryAllocation
 *   -> ZO_ERR_NOMEM, no device/driver -> ZO_ERR_NO_DEVICE, anything else ->
 *   ZO_ERR_BACKEND) with the operation, cudaGetErrorString /
 *   ncclGetErrorString and ncclGetLastError in the backend's last_error().
 *   An asynchronous NCCL error (ncclCommGetAsyncError, polled at query and
 *   wait) marks the communicator broken: it is aborted (ncclCommAbort, which
 *   returns; the process is never terminated) and every later collective
 *   returns ZO_ERR_BACKEND.  Nothing in this library calls exit or abort.
 *   Creation failures have no backend to hold a message: read it with
 *   zo_nccl_create_error() (thread-local).
 *
 * Thread safety: one backend is used by one thread at a time (as a
 * zo_runtime).  Several backends of one process (zo_backend_nccl_create_all)
 * may be driven by one thread each, concurrently.
 */
#ifndef ZOFFLOAD_NCCL_H
#define ZOFFLOAD_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include "zoffload_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZO_NCCL_CONFIG_VERSION 1u

/** A field left at this value is taken from the launcher's environment
 *  (see zo_nccl_config_from_env). */
#define ZO_NCCL_FROM_ENV (-1)

/** DeepSpeed offload_param.device. */
typedef enum zo_nccl_offload {
    ZO_NCCL_OFFLOAD_NONE = 0, /**< shards in device memory (cudaMalloc) */
    ZO_NCCL_OFFLOAD_CPU = 1   /**< shards in host memory; copied H2D (async) before each all-gather */
} zo_nccl_offload;

/** Initial contents of a shard created by param_add. */
typedef enum zo_nccl_init {
    /** byte i of the full tensor is zo_host_param_byte(param, i), padding 0:
     *  exactly what the host backend gathers, so the two can be compared */
    ZO_NCCL_INIT_PATTERN = 0,
    /** zeros (cudaMemset); the trainer writes the values (zo_nccl_shard_upload) */
    ZO_NCCL_INIT_ZERO = 1
} zo_nccl_init;

/** Configuration of one rank's NCCL backend.  Always start from
 *  ZO_NCCL_CONFIG_INIT so fields added later get their defaults. */
typedef struct zo_nccl_config {
    size_t size;      /**< sizeof(zo_nccl_config) */
    uint32_t version; /**< ZO_NCCL_CONFIG_VERSION */
    int world_size;   /**< W, 1..ZO_MAX_WORLD_SIZE; ZO_NCCL_FROM_ENV (default): launcher env */
    int rank;         /**< 0..W-1; ZO_NCCL_FROM_ENV (default): launcher env */
    int local_device; /**< CUDA device ordinal; ZO_NCCL_FROM_ENV (default): LOCAL_RANK env, else rank % device count */
    zo_nccl_offload offload_param; /**< offload_param.device; default ZO_NCCL_OFFLOAD_NONE */
    int pin_memory;                /**< offload_param.pin_memory: 1 (default) pinned host shards (cudaHostAlloc),
                                      0 pageable (malloc; the H2D copy is then synchronous) */
    zo_reduce_op reduce_op;        /**< reduction used by zo_nccl_reduce_grads (default ZO_REDUCE_AVG, DeepSpeed's
                                      gradient averaging); the vtable slot uses the op it is given */
    int max_outstanding_gathers;   /**< back-pressure: incomplete all-gather works allowed (default 16); 0 = no limit */
    int wait_host;                 /**< 0 (default): wait() is stream-ordered; 1: wait() blocks the host */
    uint64_t wait_timeout_ms;      /**< host-blocking waits (wait_host, back-pressure, staged reduce-scatter)
                                      give up with ZO_ERR_BACKEND after this many ms; 0 (default) = never */
    zo_nccl_init init;             /**< shard contents at param_add; default ZO_NCCL_INIT_PATTERN */
    uint64_t pool_release_threshold; /**< bytes the full-buffer pool keeps cached (cudaMemPoolAttrReleaseThreshold);
                                          default UINT64_MAX: keep everything */
    void *compute_stream;            /**< cudaStream_t of the framework's compute; NULL (default) = legacy stream 0 */
    uint64_t bootstrap_timeout_ms;   /**< file bootstrap: how long ranks > 0 wait for the id file (default 120000) */
    zo_allocator allocator;          /**< host-side bookkeeping allocations (not shards, not full buffers) */
} zo_nccl_config;

#define ZO_NCCL_CONFIG_INIT                                                                                            \
    {                                                                                                                  \
        sizeof(zo_nccl_config), ZO_NCCL_CONFIG_VERSION, ZO_NCCL_FROM_ENV, ZO_NCCL_FROM_ENV, ZO_NCCL_FROM_ENV,          \
            ZO_NCCL_OFFLOAD_NONE, 1, ZO_REDUCE_AVG, 16, 0, 0, ZO_NCCL_INIT_PATTERN, UINT64_MAX, NULL, 120000u, {       \
            NULL, NULL, NULL                                                                                           \
        }                                                                                                              \
    }

/** NCCL_UNIQUE_ID_BYTES: an ncclUniqueId as opaque bytes (checked at
 *  compile time against nccl.h). */
#define ZO_NCCL_UNIQUE_ID_BYTES 128
typedef struct zo_nccl_unique_id {
    char bytes[ZO_NCCL_UNIQUE_ID_BYTES];
} zo_nccl_unique_id;

/** Message of the last failed zo_backend_nccl_create* / zo_nccl_get_unique_id
 *  / zo_nccl_config_from_env call of this thread ("" if none).  Static
 *  thread-local storage, valid until the next such call on this thread. */
const char *zo_nccl_create_error(void);

/** Fills the fields of *cfg that are ZO_NCCL_FROM_ENV from the launcher:
 *  Open MPI's OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE /
 *  OMPI_COMM_WORLD_LOCAL_RANK first, else torchrun/Slurm-style RANK /
 *  WORLD_SIZE / LOCAL_RANK.  Missing world size and rank give 1 and 0 (a
 *  single process); a missing local rank leaves local_device at
 *  ZO_NCCL_FROM_ENV (creation then uses rank % device count).  Fields that
 *  are already set are kept.  Errors: ZO_ERR_INVALID_ARG (NULL, a variable
 *  that is not a non-negative integer, rank >= world size),
 *  ZO_ERR_VERSION. */
zo_status zo_nccl_config_from_env(zo_nccl_config *cfg);

/** ncclGetUniqueId into *id (rank 0 calls it, then sends the bytes to
 *  every rank: MPI_Bcast, a file, a TCP store...).
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_NO_DEVICE, ZO_ERR_BACKEND. */
zo_status zo_nccl_get_unique_id(zo_nccl_unique_id *id);

/** Creates rank cfg->rank's backend from an ncclUniqueId every rank holds
 *  (ncclCommInitRank, collective: every rank of the world must call it).
 *  *out is owned by the caller (zo_backend_destroy, after every runtime
 *  using it).  Errors: ZO_ERR_INVALID_ARG (NULL, world/rank/device out of
 *  range, bad enum), ZO_ERR_VERSION, ZO_ERR_NO_DEVICE (no CUDA driver or
 *  device, or local_device >= device count), ZO_ERR_NOMEM,
 *  ZO_ERR_BACKEND (CUDA or NCCL initialisation failed); message in
 *  zo_nccl_create_error(). */
zo_status zo_backend_nccl_create(const zo_nccl_config *cfg, const zo_nccl_unique_id *id, zo_backend **out);

/** File bootstrap: rank 0 writes the unique id to
 *  <dir>/zoffload-nccl-<tag>.id atomically (write <name>.tmp.<pid>, fsync,
 *  rename, fsync dir); ranks > 0 poll for it (bootstrap_timeout_ms).  The
 *  file also holds a magic and the world size, checked by readers.  Rank 0
 *  removes it once ncclCommInitRank returned (every rank has read it by
 *  then).  dir must be shared by all ranks (a node-local directory for one
 *  node, a shared file system otherwise) and tag unique per run (NULL: the
 *  first set of $ZO_NCCL_RUN_ID, $SLURM_JOB_ID, $OMPI_MCA_ess_base_jobid
 *  (mpirun), $TORCHELASTIC_RUN_ID (torchrun), else "default"; a file left
 *  by a crashed earlier run with the same tag would be read as this run's).
 *  Errors: as zo_backend_nccl_create, plus ZO_ERR_INVALID_ARG (dir NULL or
 *  tag with '/'), ZO_ERR_BACKEND (I/O error, timeout, bad file). */
zo_status zo_backend_nccl_create_file(const zo_nccl_config *cfg, const char *dir, const char *tag, zo_backend **out);

/** MPI bootstrap: rank 0 of *mpi_comm (a pointer to an MPI_Comm; NULL =
 *  MPI_COMM_WORLD) creates the id, MPI_Bcast sends it.  world_size / rank
 *  left at ZO_NCCL_FROM_ENV are taken from MPI_Comm_size / MPI_Comm_rank;
 *  local_device from OMPI_COMM_WORLD_LOCAL_RANK / LOCAL_RANK.  MPI must be
 *  initialised by the caller.  Errors: as zo_backend_nccl_create, plus
 *  ZO_ERR_UNSUPPORTED when zoffload_nccl was built without MPI
 *  (zo_nccl_have_mpi() == 0), ZO_ERR_BACKEND on an MPI error. */
zo_status zo_backend_nccl_create_mpi(const zo_nccl_config *cfg, const void *mpi_comm, zo_backend **out);

/** 1 if zo_backend_nccl_create_mpi is available in this build, else 0. */
int zo_nccl_have_mpi(void);

/** Single process, several GPUs (tests): ncclCommInitAll over devices
 *  devlist[0..ndev) (NULL: 0..ndev-1); out[i] receives rank i's backend
 *  (world size ndev, rank i, device devlist[i]); cfg's world_size, rank
 *  and local_device are ignored.  Drive each backend from its own thread
 *  (NCCL may block a collective until every rank issued it).  On error no
 *  backend is returned.  Errors: as zo_backend_nccl_create; ZO_ERR_NO_DEVICE
 *  when fewer than ndev devices exist. */
zo_status zo_backend_nccl_create_all(const zo_nccl_config *cfg, int ndev, const int *devlist, zo_backend **out);

/** 1 if b is an NCCL backend, else 0. */
int zo_nccl_is_nccl(const zo_backend *b);

/** CUDA device ordinal of b, or a negative zo_status. */
int zo_nccl_device(const zo_backend *b);

/** The compute stream (cudaStream_t as void*; NULL = legacy stream) and the
 *  backend-owned gather stream.  NULL for a non-NCCL backend. */
void *zo_nccl_compute_stream(const zo_backend *b);
void *zo_nccl_gather_stream(const zo_backend *b);

/** This rank's shard of param: *shard receives its storage
 *  (partition_numel * elem_size bytes, *bytes; device memory, or host
 *  memory with offload cpu - *on_host says which; backend-owned, valid until
 *  param_remove).  The caller may write it (optimizer step); after writing
 *  on the compute stream call zo_nccl_mark_shards_written() so the next
 *  all-gather waits for the writes.  bytes/on_host may be NULL.
 *  Errors: ZO_ERR_INVALID_ARG (not an NCCL backend, NULL shard),
 *  ZO_ERR_BAD_HANDLE (param not added). */
zo_status zo_nccl_shard(zo_backend *b, zo_param_id param, void **shard, size_t *bytes, int *on_host);

/** Copies `bytes` bytes from host memory src into param's shard at byte
 *  offset `offset` (synchronous; for initial values).  Errors:
 *  ZO_ERR_INVALID_ARG (range outside the shard, NULLs), ZO_ERR_BAD_HANDLE,
 *  ZO_ERR_BACKEND (CUDA error). */
zo_status zo_nccl_shard_upload(zo_backend *b, zo_param_id param, uint64_t offset, const void *src, size_t bytes);

/** Copies param's shard (bytes bytes from offset) to host memory dst
 *  (synchronous, ordered after the gather and compute streams).
 *  Errors: as zo_nccl_shard_upload. */
zo_status zo_nccl_shard_download(zo_backend *b, zo_param_id param, uint64_t offset, void *dst, size_t bytes);

/** The framework wrote shards on the compute stream (optimizer step): the
 *  next all-gather waits for everything enqueued on the compute stream so
 *  far (one event).  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BACKEND. */
zo_status zo_nccl_mark_shards_written(zo_backend *b);

/** The vtable's reduce-scatter, callable directly; pointer handling as in
 *  the file comment.  full_grad: numel float32 elements (this rank's
 *  gradient); shard_out: partition_numel float32 elements.
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BAD_HANDLE, ZO_ERR_NOMEM,
 *  ZO_ERR_BACKEND. */
zo_status zo_nccl_reduce_scatter(zo_backend *b, zo_param_id param, const float *full_grad, float *shard_out,
                                 uint64_t numel, uint64_t partition_numel, zo_reduce_op op);

/** zo_nccl_reduce_scatter with the configured reduce_op. */
zo_status zo_nccl_reduce_grads(zo_backend *b, zo_param_id param, const float *full_grad, float *shard_out,
                               uint64_t numel, uint64_t partition_numel);

/** Blocks the host until the gather and compute streams are idle and checks
 *  the asynchronous NCCL error.  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BACKEND. */
zo_status zo_nccl_synchronize(zo_backend *b);

typedef struct zo_nccl_stats {
    uint64_t gathers;         /**< all-gather works issued */
    uint64_t gathered_params; /**< parameters in them */
    uint64_t bytes_gathered;  /**< full bytes (W * shard) received */
    uint64_t h2d_bytes;       /**< offloaded shard bytes copied host-to-device */
    uint64_t reduce_scatters;
    uint64_t backpressure_waits; /**< all_gather_start blocked on the oldest work */
    uint64_t host_waits;         /**< waits that blocked the host (wait_host or staged paths) */
    uint64_t stream_waits;       /**< waits done as cudaStreamWaitEvent */
    uint64_t live_full_buffers;  /**< from full_alloc, not freed */
    uint64_t live_works;         /**< from all_gather_start, not freed */
    uint64_t outstanding;        /**< works not known complete */
    uint64_t shard_bytes;        /**< this rank's shard storage */
    uint64_t exchanges;          /**< exchange calls completed (verify_collectives fingerprints) */
} zo_nccl_stats;

/** Errors: ZO_ERR_INVALID_ARG (not an NCCL backend, NULL out). */
zo_status zo_nccl_get_stats(const zo_backend *b, zo_nccl_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_NCCL_H */
