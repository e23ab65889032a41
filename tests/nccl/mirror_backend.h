/*
 * mirror_backend.h - a test backend that runs every data-plane operation on
 * the host backend AND on an NCCL backend and compares what they gathered.
 *
 * The runtime sees the host backend's world, rank and full buffers (so the
 * fuzz checker, which reads full buffers on the host, works unchanged); the
 * same all-gathers are issued on the NCCL backend into its own device
 * buffers.  When a gather is complete (host query says done, or wait), the
 * NCCL result is copied back and compared with the host backend's buffer and
 * with the content function zo_host_param_byte (both backends initialise
 * shards with it: ZO_NCCL_INIT_PATTERN).  A mismatch is an error
 * (ZO_ERR_BACKEND from wait/query, message in last_error), so a fuzz target
 * or replay reports it like any other backend failure.
 *
 * World sizes may differ: the host backend simulates the scenario's W ranks,
 * the NCCL backend has the real ranks (processes x GPUs).  The full tensor
 * (first numel * elem_size bytes) is the same in both layouts, and that is
 * what is compared.  Every NCCL rank must run the same scenario so that the
 * collectives match (the runtime is deterministic).
 *
 * Reduce-scatter: forwarded to both when the worlds are equal and the
 * outputs compared (1e-5 relative); otherwise the host backend's result
 * only.
 *
 * Exchange (verify_collectives): the host backend's result is returned; the
 * exchange also runs on the NCCL communicator (same collective order on
 * every NCCL rank) and each NCCL rank's slot must equal this rank's send.
 */
#ifndef ZO_TESTS_MIRROR_BACKEND_H
#define ZO_TESTS_MIRROR_BACKEND_H

#include <stdint.h>

#include "zoffload_backend.h"

typedef struct zo_mirror_stats {
    uint64_t compared; /* gathered parameters compared */
    uint64_t bytes_compared;
    uint64_t skipped_large; /* parameters above max_nccl_bytes: host only */
    uint64_t mismatches;
    uint64_t rs_compared;
    uint64_t exchanges_compared; /* exchanges run on both (NCCL slots checked against send) */
} zo_mirror_stats;

/** host and nccl are borrowed (destroy them after the mirror and after every
 *  runtime using the mirror).  Parameters whose padded NCCL full size
 *  exceeds max_nccl_bytes (0 = no limit) are gathered by the host backend
 *  only (deterministic, so every rank skips the same ones).  compare_bytes:
 *  how many leading bytes of each gathered tensor are compared (0 = all).
 *  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_NOMEM. */
zo_status zo_mirror_create(zo_backend *host, zo_backend *nccl, uint64_t max_nccl_bytes, uint64_t compare_bytes,
                           zo_backend **out);

/** Counters of a mirror backend (zeros for anything else). */
zo_mirror_stats zo_mirror_get_stats(const zo_backend *mirror);

/** First mismatch message ("" if none). */
const char *zo_mirror_first_mismatch(const zo_backend *mirror);

#endif
