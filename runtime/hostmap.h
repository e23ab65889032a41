/*
 * hostmap.h - helpers shared by the backends (backend_host.c, backend_mpi.c,
 * backend_nccl.c) and by backend.c; private to the runtime (not installed,
 * not part of the public API).
 *
 *   - the bounded allocator wrappers both backends allocate through;
 *   - zo__map, an open-addressing hash table from 64-bit keys to non-NULL
 *     pointers (parameter ids, full buffer and work addresses), so an
 *     unknown, stale or double-freed handle is found missing instead of
 *     being dereferenced;
 *   - the deterministic parameter content (zo_host_param_byte,
 *     zoffload_backend.h) written a range at a time, with DeepSpeed's zero
 *     padding past the tensor's end.
 *
 * Error messages: functions that can fail write "<who>: ..." into the
 * caller's buffer, so each backend keeps its own prefix ("host backend",
 * "mpi backend").
 */
#ifndef ZOFFLOAD_HOSTMAP_H
#define ZOFFLOAD_HOSTMAP_H

#include <stddef.h>
#include <stdint.h>

#include "zoffload_backend.h"

/* Largest single allocation in bytes: larger requests fail (NULL) without
 * reaching the allocator.  1 TiB less 1 MiB: below AddressSanitizer's
 * largest supported allocation (1 TiB including its redzones and
 * alignment on 64-bit targets), so a sanitized build reports the same
 * ZO_ERR_NOMEM as a plain one instead of aborting with "requested
 * allocation size exceeds maximum supported size".  (Requests under the
 * cap that the system refuses return NULL from ASan only with
 * allocator_may_return_null=1, which sanitized builds of zoffload set by
 * default: runtime/util.c.) */
#define ZO__HOST_MAX_ALLOC ((1ull << 40) - (1ull << 20))

/* Byte a fresh full buffer is filled with, so data read before its
 * all-gather completed is wrong content, not stale-but-right content. */
#define ZO__HOST_POISON 0xA5

/* Whether full buffers are poison-filled by default (zo_host_poison_default,
 * zoffload_backend.h): CMake's ZO_POISON sets ZO_BUILD_POISON to 0 or 1;
 * compiled without CMake, a release build: no fill. */
#ifndef ZO_BUILD_POISON
#define ZO_BUILD_POISON 0
#endif

/* util.c: records the message of a failed call that has no runtime
 * (zo_last_error(NULL), thread-local); returns st. */
zo_status zo__fail_tls(zo_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* splitmix64's finaliser: a bijective 64-bit mix. */
uint64_t zo__mix64(uint64_t z);

/* n bytes from a (malloc when a->alloc is NULL); NULL when n is 0, above
 * ZO__HOST_MAX_ALLOC, or the allocator refuses.  Freed by zo__host_free. */
void *zo__host_alloc(const zo_allocator *a, size_t n);
/* Gives p (NULL: nothing) back to a (free when a->free is NULL). */
void zo__host_free(const zo_allocator *a, void *p);

/* Open-addressing hash table, linear probing with backward-shift deletion;
 * a NULL value marks an empty slot, so values are never NULL.  Zero-
 * initialise; the key and value arrays are one allocation. */
typedef struct zo__map {
    uint64_t *keys;
    void **vals;
    size_t cap, count; /* cap: 0 or a power of two (slots) */
} zo__map;

/* The value stored under key, or NULL. */
void *zo__map_get(const zo__map *m, uint64_t key);
/* Makes room for one more entry (load factor <= 1/2), growing through a.
 * ZO_OK, or ZO_ERR_NOMEM with "<who>: ..." in err[errcap]; no change to m
 * on error. */
zo_status zo__map_reserve(zo__map *m, const zo_allocator *a, char *err, size_t errcap, const char *who);
/* Inserts a key not present (val != NULL); zo__map_reserve must have
 * succeeded since the last insertion. */
void zo__map_put(zo__map *m, uint64_t key, void *val);
/* Removes key if present. */
void zo__map_del(zo__map *m, uint64_t key);
/* Frees the table's arrays (not the values) through a; m becomes empty. */
void zo__map_free(zo__map *m, const zo_allocator *a);

/* Writes bytes [off, off + n) of param's padded full tensor to dst:
 * zo_host_param_byte(param, i) for i < full_bytes, 0 (padding) from
 * full_bytes on. */
void zo__fill_padded(zo_param_id param, uint8_t *dst, uint64_t off, uint64_t n, uint64_t full_bytes);

/* What all_gather_start knows of an item's parameter (as param_add saw it)
 * and of its full buffer, for zo__gather_item_check. */
typedef struct zo__gather_param {
    uint64_t numel, partition_numel; /* elements */
    uint32_t elem_size;              /* bytes */
    uint64_t copy_bytes;             /* L: bytes the gather writes into the full buffer */
    int busy;                        /* in a pending all-gather, or already an item of this group */
} zo__gather_param;
typedef struct zo__gather_buf {
    zo_param_id param; /* the parameter it was allocated for */
    size_t capacity;   /* bytes */
    int busy;          /* target of a pending all-gather, or of an earlier item of this group */
} zo__gather_buf;

/* all_gather_start's per-item checks (the data-plane protocol the backend
 * can see), item i = it: p is its parameter (NULL: not added), b its full
 * buffer (NULL: not a live full buffer of this backend).  In this order:
 * ZO_ERR_BAD_HANDLE (not added), ZO_ERR_INVALID_ARG (sizes differ from
 * param_add's, buffer not from full_alloc, of another parameter, or smaller
 * than L), ZO_ERR_STATE (parameter or buffer already in flight); message
 * "<who>: all_gather_start: ..." in err[errcap].  ZO_OK: the item is valid. */
zo_status zo__gather_item_check(char *err, size_t errcap, const char *who, size_t i, const zo_gather_item *it,
                                const zo__gather_param *p, const zo__gather_buf *b);

/* full_alloc's checks of the backend's state (zo_backend_full_alloc checked
 * out and bytes): param added (added != 0), and the phys_bytes the buffer
 * really takes (bytes, capped) plus a hdr-byte header within
 * ZO__HOST_MAX_ALLOC (phys_bytes 0: never too large).  ZO_OK, or
 * ZO_ERR_BAD_HANDLE / ZO_ERR_NOMEM with "<who>: full_alloc..." in
 * err[errcap]. */
zo_status zo__full_alloc_check(char *err, size_t errcap, const char *who, zo_param_id param, int added,
                               uint64_t phys_bytes, size_t hdr);

/* reduce_scatter's checks of the backend's state (zo_backend_reduce_scatter
 * checked the buffers and op): param added (added != 0) with param_add's
 * numel / partition_numel (elements) equal to the call's.  ZO_OK, or
 * ZO_ERR_BAD_HANDLE / ZO_ERR_INVALID_ARG with "<who>: reduce_scatter..." in
 * err[errcap]. */
zo_status zo__reduce_scatter_check(char *err, size_t errcap, const char *who, zo_param_id param, uint64_t numel,
                                   uint64_t partition_numel, int added, uint64_t added_numel,
                                   uint64_t added_partition_numel);

#endif
