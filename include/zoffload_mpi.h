/*
 * zoffload_mpi.h - the MPI data plane of libzoffload (library zoffload_mpi,
 * built when an MPI C implementation is found: cmake/mpi.cmake).
 *
 * One process per rank, as with NCCL: rank r of a communicator of W
 * processes stores only partition r of every parameter (partition_numel =
 * ceil(numel / W) elements, DeepSpeed's uniform padded shards) and the
 * collectives are real MPI collectives between processes.  It is the CPU
 * stand-in for multi-node NCCL (tests/mpi replays the model corpus in 4
 * processes under mpiexec and compares every gathered parameter with the
 * host backend); nothing in it needs a GPU.
 *
 * What each vtable operation is here (zoffload_backend.h has the contract):
 *   param_add        allocates this rank's shard only and fills it with the
 *                    host backend's content (zo_host_param_byte over the
 *                    rank's byte range of the full tensor, zero padding), so
 *                    every rank's gathered tensor can be compared with the
 *                    host backend's.
 *   full_alloc       allocator memory (malloc by default) of
 *                    min(bytes, max_bytes_per_param) bytes; in a library
 *                    built with poisoning (zo_host_poison_default() = 1:
 *                    sanitizer, fuzz and test builds, CMake ZO_POISON) filled
 *                    with the poison byte 0xA5 (as the host backend), so data
 *                    read before a gather completed is visibly wrong; in a
 *                    release build not filled (unspecified content until the
 *                    gather, as DeepSpeed's torch.empty buffer).
 *   all_gather_start one nonblocking collective per item, all issued before
 *                    returning (DeepSpeed's AllGatherCoalescedHandle over
 *                    torch.distributed all_gather_into_tensor; NCCL's
 *                    ncclGroupStart / ncclAllGather per item / ncclGroupEnd):
 *                    MPI_Iallgather of shard_bytes bytes per rank (MPI_BYTE;
 *                    a contiguous derived datatype when shard_bytes >
 *                    INT_MAX); with a physical cap that truncates the padded
 *                    tensor, MPI_Iallgatherv of each rank's stored bytes
 *                    (MPI_Ibcast from each storing rank when the capped size
 *                    exceeds INT_MAX).
 *   query            MPI_Testall over the work's requests (never blocks;
 *                    drives MPI progress).
 *   wait             MPI_Waitall (host-blocking, like NCCL's host mode).
 *   work_free        a work not complete yet is waited first: MPI forbids
 *                    freeing the request of a pending collective, and the
 *                    collective has been issued on every rank anyway.
 *   reduce_scatter   MPI_Ireduce_scatter_block of float32 (MPI_SUM) + MPI_Wait,
 *                    in chunks of at most 2^27 elements per rank; AVG divides
 *                    the sum by W (NCCL's ncclAvg).  Every rank contributes
 *                    its own gradient (the host backend assumes all ranks
 *                    have the same one: the same numbers when they do).
 *   exchange         MPI_Allgather of the small message (the runtime's
 *                    collective fingerprint, zo_config.verify_collectives).
 *
 * Physical cap (max_bytes_per_param = C > 0): exactly the host backend's
 *   semantics, so gathered bytes are comparable byte for byte: only the first
 *   L = min(C, W * shard_bytes) bytes of the padded tensor exist; rank r
 *   stores bytes [r*shard_bytes, min((r+1)*shard_bytes, L)) (possibly none),
 *   full_alloc(bytes) allocates min(bytes, C) bytes and a gather moves
 *   exactly L bytes.  Control flow never depends on the cap.
 *
 * Ordering: MPI requires every rank of the communicator to issue its
 *   collectives in the same order - the SPMD property zoffload's runtime has
 *   when every rank runs the same program.  When ranks diverge (MoE routing
 *   by rank), a real MPI run hangs or mixes tensors; zo_config.
 *   verify_collectives turns that into ZO_ERR_COLLECTIVE_MISMATCH before the
 *   divergent collective is issued.
 *
 * Errors: bad arguments are reported (ZO_ERR_INVALID_ARG, ZO_ERR_BAD_HANDLE,
 *   ZO_ERR_STATE, ZO_ERR_OVERFLOW) with a message in last_error(), never by
 *   aborting.  The backend's communicator is a duplicate of the caller's with
 *   MPI_ERRORS_RETURN, so an MPI failure becomes ZO_ERR_BACKEND with the
 *   operation and MPI_Error_string in last_error(); allocator failures are
 *   ZO_ERR_NOMEM.
 *
 * Ownership: the backend owns its duplicated communicator, shards, full
 *   buffers and works; zo_backend_destroy frees them (waiting for works in
 *   flight) and frees the communicator.  Call it before MPI_Finalize, at the
 *   same point of every rank's collective sequence.
 *
 * Thread safety: one backend is used by one thread at a time (as a
 *   zo_runtime); MPI_THREAD_SINGLE/FUNNELED is enough.
 */
#ifndef ZOFFLOAD_MPI_H
#define ZOFFLOAD_MPI_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "zoffload_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZO_MPI_CONFIG_VERSION 1u

/** Configuration of one rank's MPI backend.  Always start from
 *  ZO_MPI_CONFIG_INIT so that fields added later get their defaults. */
typedef struct zo_mpi_config {
    size_t size;                  /**< sizeof(zo_mpi_config) */
    uint32_t version;             /**< ZO_MPI_CONFIG_VERSION */
    MPI_Comm comm;                /**< the data-parallel group (default MPI_COMM_WORLD); duplicated at create
                                       (MPI_Comm_dup, collective over comm), the caller keeps its own */
    uint64_t max_bytes_per_param; /**< physical cap in bytes, the host backend's semantics; 0 = none */
    zo_allocator allocator;       /**< shards, full buffers and bookkeeping; both NULL: malloc/free */
} zo_mpi_config;

#define ZO_MPI_CONFIG_INIT                                                                                             \
    {                                                                                                                  \
        sizeof(zo_mpi_config), ZO_MPI_CONFIG_VERSION, MPI_COMM_WORLD, 0, { NULL, NULL, NULL }                          \
    }

/** Creates rank MPI_Comm_rank(comm)'s MPI backend over a duplicate of
 *  cfg->comm (MPI_Comm_dup: collective, every rank of comm must call it).
 *  World size and rank are the communicator's.  *out is owned by the caller
 *  (zo_backend_destroy).  MPI must be initialised (MPI_Init) and not
 *  finalised.
 *  Errors: ZO_ERR_INVALID_ARG (NULL, MPI_COMM_NULL, one of alloc/free NULL),
 *  ZO_ERR_VERSION (size/version), ZO_ERR_BACKEND (MPI not initialised or
 *  already finalised, MPI_Comm_dup failed, W > ZO_MAX_WORLD_SIZE),
 *  ZO_ERR_NOMEM.  The message of a failed create: zo_mpi_create_error(). */
zo_status zo_backend_mpi_create(const zo_mpi_config *cfg, zo_backend **out);

/** Message of the last failed zo_backend_mpi_create of this thread ("" if
 *  none); static thread-local storage. */
const char *zo_mpi_create_error(void);

/** 1 if b is an MPI backend, else 0. */
int zo_mpi_is_mpi(const zo_backend *b);

/** Bytes of a parameter of `bytes` full bytes that the MPI backend b really
 *  stores and moves: min(bytes, max_bytes_per_param) (bytes for a non-MPI
 *  backend), as zo_host_physical_bytes. */
uint64_t zo_mpi_physical_bytes(const zo_backend *b, uint64_t bytes);

/** Counters of one MPI backend (all zero for a non-MPI backend). */
typedef struct zo_mpi_stats {
    uint64_t gathers;        /**< all_gather_start groups issued */
    uint64_t gather_items;   /**< parameters in them */
    uint64_t collectives;    /**< MPI collective calls made (Iallgather/v, Ibcast, reduce-scatter chunks, Allgather) */
    uint64_t bytes_gathered; /**< bytes received into full buffers (L per item, this rank's view) */
    uint64_t exchanges;      /**< exchange calls (fingerprints) */
    uint64_t reduce_scatters;
    uint64_t blocking_frees; /**< work_free / full_free / param_remove that had to wait a pending gather */
} zo_mpi_stats;
zo_mpi_stats zo_mpi_get_stats(const zo_backend *b);

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_MPI_H */
