/*
 * backend_nccl_internal.h - pieces of the NCCL backend exposed for its tests
 * (not part of the public API; may change).  They need no GPU.
 */
#ifndef ZOFFLOAD_BACKEND_NCCL_INTERNAL_H
#define ZOFFLOAD_BACKEND_NCCL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "zoffload_nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The file bootstrap's path, <dir>/zoffload-nccl-<tag>.id, into path[cap];
 *  tag NULL/"" resolved as zo_backend_nccl_create_file documents.
 *  Errors: ZO_ERR_INVALID_ARG (no dir, '/' in tag, too long); message in
 *  zo_nccl_create_error(). */
zo_status zo__nccl_bootstrap_path(const char *dir, const char *tag, char *path, size_t cap);

/** Rank 0's side: writes id for a world of `world` ranks atomically (temp
 *  file, fsync, rename, fsync of dir).  Errors: ZO_ERR_INVALID_ARG,
 *  ZO_ERR_BACKEND (I/O). */
zo_status zo__nccl_bootstrap_publish(const char *dir, const char *tag, int world, const zo_nccl_unique_id *id);

/** The other ranks' side: polls every 10 ms until the file exists, checks
 *  magic, version, checksum and world size, and copies the id.
 *  timeout_ms 0 = wait forever.  Errors: ZO_ERR_INVALID_ARG, ZO_ERR_BACKEND
 *  (timeout, bad file, world size differs). */
zo_status zo__nccl_bootstrap_fetch(const char *dir, const char *tag, int world, int rank, uint64_t timeout_ms,
                                   zo_nccl_unique_id *id);

#ifdef __cplusplus
}
#endif
#endif
