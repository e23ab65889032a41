/*
 * backend_host_internal.h - introspection of the host backend for tests and
 * the fuzz checker (not part of the public API; may change).
 *
 * Every function accepts any zo_backend: for NULL or a backend that is not
 * a host backend it returns 0.
 */
#ifndef ZOFFLOAD_BACKEND_HOST_INTERNAL_H
#define ZOFFLOAD_BACKEND_HOST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "zoffload_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** 1 if b is a host backend (made by zo_backend_host_create), else 0. */
int zo_host_is_host(const zo_backend *b);

/** Full buffers handed out by full_alloc and not yet given to full_free
 *  (cached buffers are not counted). */
size_t zo_host_live_full_buffers(const zo_backend *b);

/** Freed full buffers kept for reuse (zo_host_config.cache_bytes), their
 *  physical bytes (at most cache_bytes), and full_alloc calls served from
 *  the cache so far. */
size_t zo_host_cached_full_buffers(const zo_backend *b);
uint64_t zo_host_cached_bytes(const zo_backend *b);
uint64_t zo_host_cache_hits(const zo_backend *b);

/** Works returned by all_gather_start and not yet given to work_free. */
size_t zo_host_live_works(const zo_backend *b);

/** Works whose data movement has not happened yet (deferred mode). */
size_t zo_host_pending_works(const zo_backend *b);

/** Parameters currently added (param_add minus param_remove). */
size_t zo_host_param_count(const zo_backend *b);

/** Bytes of shard storage currently held for all W ranks together. */
uint64_t zo_host_shard_bytes(const zo_backend *b);

/** Rank r's stored shard of parameter param: *data receives its first byte
 *  (backend-owned; valid until param_remove), *stored its stored length in
 *  bytes: partition_numel * elem_size, less under max_bytes_per_param (a
 *  prefix, possibly 0 bytes; *data is then NULL), 0 with no_copy.
 *  Errors: ZO_ERR_INVALID_ARG (not a host backend, NULL outputs, rank out of
 *  range), ZO_ERR_BAD_HANDLE (param not added). */
zo_status zo_host_shard(const zo_backend *b, zo_param_id param, int rank, const uint8_t **data, uint64_t *stored);

/** Total parameter bytes copied by completed all-gathers so far. */
uint64_t zo_host_bytes_copied(const zo_backend *b);

#ifdef __cplusplus
}
#endif
#endif /* ZOFFLOAD_BACKEND_HOST_INTERNAL_H */
