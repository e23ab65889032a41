/*
 * arena.h - a per-execution allocator for the fuzz targets: the runtime, its
 * host backend and the simulator allocate from one block of memory that is
 * kept from one input to the next and emptied between them
 * (zs_arena_reset), instead of a hundred or more malloc/free pairs per
 * input.
 *
 * What the sanitizers and memcheck still see:
 *   - ASan: everything outside a live allocation is poisoned - the 16-byte
 *     header before each block, at least 16 bytes after it, every freed
 *     block until the reset and all of the arena after a reset - so an
 *     overflow out of a block or a use after free is reported (as
 *     "use-after-poison"; the report's address names the block).  A freed
 *     block's memory is not reused within the execution, and a free of a
 *     pointer that is not a live block of the arena (a double free, a
 *     pointer into a block or from malloc) aborts with a message.
 *   - MSan: a new block is uninitialised memory, as malloc's.
 *   - Valgrind memcheck: blocks are announced as malloc-like with 16-byte
 *     red zones (valgrind/memcheck.h, when the header is installed).
 *   - LeakSanitizer cannot see into the arena: zs_arena_reset returns the
 *     blocks still live (the fuzz target treats a nonzero count as a leak of
 *     the runtime and aborts).
 * Past its budget the arena hands out malloc'd blocks (freed by zs_arena_free
 * or at the reset), so one huge scenario cannot make it hold unbounded memory.
 *
 * Not thread-safe: one arena per thread.
 */
#ifndef ZS_ARENA_H
#define ZS_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "zoffload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zs_arena zs_arena;

/** Default budget of zs_arena_create: bytes of contiguous arena memory. */
#define ZS_ARENA_DEFAULT_BUDGET ((size_t)64 << 20)

/** A new, empty arena that keeps at most `budget` bytes of its own memory
 *  (0: ZS_ARENA_DEFAULT_BUDGET); NULL if out of memory. */
zs_arena *zs_arena_create(size_t budget);
/** Frees the arena and everything allocated from it.  NULL is accepted. */
void zs_arena_destroy(zs_arena *a);
/** zo_allocator.alloc: `bytes` (> 0) bytes, 16-byte aligned, or NULL
 *  (bytes == 0 or out of memory). */
void *zs_arena_alloc(void *arena, size_t bytes);
/** zo_allocator.free: ends the block p (NULL is accepted). */
void zs_arena_free(void *arena, void *p);
/** The allocator to give zo_config / zo_host_config. */
zo_allocator zs_arena_allocator(zs_arena *a);
/** Ends every block at once and makes the arena's memory the next
 *  execution's (grown to hold the largest execution so far, within the
 *  budget).  Returns the number of blocks that were still live. */
size_t zs_arena_reset(zs_arena *a);

/** What the arena did (statistics, for tests and measurements). */
typedef struct zs_arena_stats {
    uint64_t allocs; /* blocks handed out since creation */
    uint64_t heap;   /* of which malloc'd (past the arena's end or budget) */
    size_t capacity; /* bytes of arena memory now */
    size_t peak;     /* most arena bytes one execution asked for */
} zs_arena_stats;
void zs_arena_get_stats(const zs_arena *a, zs_arena_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* ZS_ARENA_H */
