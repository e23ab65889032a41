/*
 * host_cache.c - the host backend's cache of freed full buffers
 * (zo_host_config.cache_bytes); backend_host.c's header comment describes
 * the backend, host.h the shared types.
 */
#include <string.h>

#include "backend_host_internal.h"
#include "host.h"

/* ------------------------------------------------------------------ */
/* Full buffer cache                                                   */
/* ------------------------------------------------------------------ */

/* Freed full buffers kept for reuse (zo_host_config.cache_bytes), keyed by
 * capacity (the physical bytes after the header).  Intrusive, so caching
 * never allocates (full_free cannot fail): bucket hash(capacity) holds a
 * chain of stack tops, one per capacity, linked by next_class; below each
 * top the older buffers of the same capacity, linked by below (LIFO: the
 * most recently freed buffer, likely still in cache, is reused first).
 * A chain holds one top per distinct capacity in that bucket, so a lookup
 * scans at most the distinct cached sizes hashing there.  A buffer that
 * would take the cached bytes over the budget is really freed; nothing is
 * evicted.  While cached the data part is poisoned for ASan; a cached
 * buffer is on no live list, so full_free / all_gather_start of its stale
 * pointer are reported like those of a freed one. */

static host_buf **cache_bucket(host_ctx *c, size_t capacity) {
    /* Fibonacci hashing: the top HOST_CACHE_BUCKET_BITS bits of the product */
    return &c->cache[((uint64_t)capacity * 0x9E3779B97F4A7C15ull) >> (64u - HOST_CACHE_BUCKET_BITS)];
}

/* Takes the most recently cached buffer of exactly `capacity` bytes, or NULL. */
host_buf *zo__host_cache_take(host_ctx *c, size_t capacity) {
    if (!c->cache_count) return NULL;
    host_buf **pp = cache_bucket(c, capacity);
    while (*pp && (*pp)->capacity != capacity) pp = &(*pp)->next_class;
    host_buf *b = *pp;
    if (!b) return NULL;
    if (b->below) {
        b->below->next_class = b->next_class;
        *pp = b->below;
    } else {
        *pp = b->next_class;
    }
    b->below = b->next_class = NULL;
    c->cache_count--;
    c->cache_bytes -= capacity;
    c->cache_hits++;
    HOST_ASAN_UNPOISON(data_of(b), capacity);
    return b;
}

/* Keeps b (already off the live lists) for reuse if it fits the budget;
 * returns 0 if it does not (the caller frees it). */
int zo__host_cache_put(host_ctx *c, host_buf *b) {
    if (b->capacity > c->cache_budget || c->cache_bytes > c->cache_budget - b->capacity) return 0;
    host_buf **pp = cache_bucket(c, b->capacity);
    while (*pp && (*pp)->capacity != b->capacity) pp = &(*pp)->next_class;
    if (*pp) { /* b becomes the top of its capacity's stack */
        b->below = *pp;
        b->next_class = (*pp)->next_class;
        (*pp)->next_class = NULL;
        *pp = b;
    } else { /* first buffer of this capacity: a new chain entry */
        b->below = NULL;
        b->next_class = *pp;
        *pp = b;
    }
    b->pending = NULL;
    c->cache_count++;
    c->cache_bytes += b->capacity;
    HOST_ASAN_POISON(data_of(b), b->capacity);
    return 1;
}

/* Really frees every cached buffer (destroy). */
void zo__host_cache_free_all(host_ctx *c) {
    for (size_t i = 0; i < HOST_CACHE_BUCKETS; i++) {
        host_buf *top = c->cache[i];
        while (top) {
            host_buf *next_top = top->next_class;
            for (host_buf *b = top; b;) {
                host_buf *below = b->below;
                /* the allocator may reuse the memory without ASan knowing */
                HOST_ASAN_UNPOISON(data_of(b), b->capacity);
                buf_dealloc(c, b);
                b = below;
            }
            top = next_top;
        }
        c->cache[i] = NULL;
    }
    c->cache_count = 0;
    c->cache_bytes = 0;
}


size_t zo_host_cached_full_buffers(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->cache_count : 0;
}
uint64_t zo_host_cached_bytes(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->cache_bytes : 0;
}
uint64_t zo_host_cache_hits(const zo_backend *b) {
    const host_ctx *c = zo__host_of(b);
    return c ? c->cache_hits : 0;
}
