/*
 * mpi_mirror.h - a test backend that runs every data-plane operation on the
 * single-view host backend AND on the MPI backend (zoffload_mpi.h) and
 * compares what they gathered (the MPI counterpart of
 * tests/nccl/mirror_backend.h).
 *
 * The runtime sees the host backend's world, rank and full buffers, so the
 * fuzz checker (which reads full buffers) works unchanged; the same
 * all-gathers are issued on the MPI backend into its own buffers, between
 * real processes.  When a gather is complete (host query says done, or
 * wait), the MPI work is waited and every item's bytes are compared: the MPI
 * buffer with the host backend's buffer over the physical bytes
 * (min(cap, W * shard_bytes), both backends have the same cap semantics) and
 * with the content function (zo_host_param_byte below numel * elem_size,
 * zero padding above).  A mismatch is ZO_ERR_BACKEND from wait/query with the
 * first differing byte in last_error.
 *
 * exchange (the fingerprint of zo_config.verify_collectives) goes to the MPI
 * backend only: it is the cross-process collective; the single-view host
 * backend would answer with W copies of this rank's own fingerprint.
 * reduce_scatter goes to both, outputs compared (1e-5 relative).
 *
 * Both backends must have the same world size (MPI processes = scenario W).
 */
#ifndef ZO_TESTS_MPI_MIRROR_H
#define ZO_TESTS_MPI_MIRROR_H

#include <stdint.h>

#include "zoffload_backend.h"

typedef struct zo_mpi_mirror_stats {
    uint64_t compared;       /* gathered parameters compared */
    uint64_t bytes_compared; /* bytes compared (physical) */
    uint64_t mismatches;     /* parameters whose bytes differed */
    uint64_t rs_compared;    /* reduce-scatters compared */
    uint64_t exchanges;      /* exchanges forwarded to MPI */
} zo_mpi_mirror_stats;

/** host and mpi are borrowed (destroy them after the mirror and after every
 *  runtime using it).  Errors: ZO_ERR_INVALID_ARG (NULL, world sizes or
 *  ranks differ), ZO_ERR_NOMEM. */
zo_status zo_mpi_mirror_create(zo_backend *host, zo_backend *mpi, zo_backend **out);
/** Frees the mirror (not the two backends).  NULL ok. */
void zo_mpi_mirror_destroy(zo_backend *mirror);
/** Counters (zeros for anything else). */
zo_mpi_mirror_stats zo_mpi_mirror_get_stats(const zo_backend *mirror);
/** First mismatch message ("" if none). */
const char *zo_mpi_mirror_first_mismatch(const zo_backend *mirror);

#endif
