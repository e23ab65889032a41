/*
 * arena.c - the fuzz targets' per-execution allocator (arena.h).
 *
 * One contiguous buffer, handed out from the bottom: each block is a 16-byte
 * header, the caller's bytes rounded up to 16 and a 16-byte gap, so the
 * next block's header and the gap make at least 32 poisoned bytes between
 * two blocks.  Past the end of the buffer (or its budget) blocks come from
 * malloc, on a list that the reset empties; the reset then grows the buffer
 * to the execution's demand, so the next one fits.
 */
#include "arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZS_ARENA_ASAN 1
#endif
#if __has_feature(memory_sanitizer)
#define ZS_ARENA_MSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ZS_ARENA_ASAN)
#define ZS_ARENA_ASAN 1
#endif

#ifdef ZS_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#ifdef ZS_ARENA_MSAN
#include <sanitizer/msan_interface.h>
#define MSAN_NEW(p, n) __msan_allocated_memory((p), (n))
#else
#define MSAN_NEW(p, n) ((void)(p), (void)(n))
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define ZS_ARENA_VALGRIND 1
#endif
#endif
#ifndef ZS_ARENA_VALGRIND
#define VALGRIND_MALLOCLIKE_BLOCK(p, n, rz, z) ((void)0)
#define VALGRIND_FREELIKE_BLOCK(p, rz)         ((void)0)
#define VALGRIND_MAKE_MEM_NOACCESS(p, n)       ((void)0)
#define VALGRIND_MAKE_MEM_DEFINED(p, n)        ((void)0)
#define VALGRIND_MAKE_MEM_UNDEFINED(p, n)      ((void)0)
#define RUNNING_ON_VALGRIND                    0
#endif

#define HDR  16u /* header before every block */
#define GAP  16u /* poisoned bytes after every block */
#define ALGN 16u

enum { LIVE = 0x4c495645u, FREED = 0x46524545u, HEAP_LIVE = 0x48454150u };

typedef struct hdr {
    uint32_t magic;
    uint32_t pad;
    uint64_t size; /* the caller's bytes */
} hdr;
_Static_assert(sizeof(hdr) == HDR, "header size");

/* a malloc'd block: links, then the same header */
typedef struct heapblk {
    struct heapblk *prev, *next;
    hdr h;
} heapblk;
_Static_assert(sizeof(heapblk) == 16 + HDR, "heap block header size");

struct zs_arena {
    char *base;
    size_t cap, top;
    size_t budget;
    size_t demand; /* arena bytes this execution would have used with no end to the buffer
                      (freed blocks are not handed out again, so it only grows; a freed
                      last block given back is subtracted) */
    size_t peak;
    size_t live;   /* blocks handed out and not freed since the reset */
    heapblk *heap; /* malloc'd blocks still live */
    int reuse_top; /* a freed last block's memory is handed out again (no
                      sanitizer or memcheck to see a stale pointer) */
    uint64_t allocs, heap_allocs;
};

static size_t round_up(size_t n) { return (n + (ALGN - 1)) & ~(size_t)(ALGN - 1); }

/* The headers stay poisoned (ASan) and no-access (memcheck): the arena's
 * own reads and writes of them are not instrumented, instead of unpoisoning
 * and poisoning again around each (two calls into the ASan runtime). */
#ifdef ZS_ARENA_ASAN
#define NO_ASAN __attribute__((no_sanitize("address")))
#else
#define NO_ASAN
#endif

static NO_ASAN hdr read_hdr(const char *h) {
    VALGRIND_MAKE_MEM_DEFINED(h, HDR);
    const hdr *src = (const hdr *)(const void *)h;
    hdr v;
    v.magic = src->magic;
    v.pad = 0;
    v.size = src->size;
    VALGRIND_MAKE_MEM_NOACCESS(h, HDR);
    return v;
}

static NO_ASAN void write_hdr(char *h, uint32_t magic, uint64_t size) {
    VALGRIND_MAKE_MEM_UNDEFINED(h, HDR);
    hdr *dst = (hdr *)(void *)h;
    dst->magic = magic;
    dst->pad = 0;
    dst->size = size;
    VALGRIND_MAKE_MEM_NOACCESS(h, HDR);
}

static int set_buffer(zs_arena *a, size_t cap) {
    char *b = malloc(cap);
    if (!b) return -1;
    a->base = b;
    a->cap = cap;
    a->top = 0;
    POISON(b, cap);
    VALGRIND_MAKE_MEM_NOACCESS(b, cap);
    return 0;
}

static void drop_buffer(zs_arena *a) {
    if (!a->base) return;
    UNPOISON(a->base, a->cap);
    VALGRIND_MAKE_MEM_UNDEFINED(a->base, a->cap);
    free(a->base);
    a->base = NULL;
    a->cap = a->top = 0;
}

zs_arena *zs_arena_create(size_t budget) {
    zs_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->budget = budget ? budget : ZS_ARENA_DEFAULT_BUDGET;
    a->reuse_top = 1;
#if defined(ZS_ARENA_ASAN)
    a->reuse_top = 0;
#endif
    if (RUNNING_ON_VALGRIND) a->reuse_top = 0;
    size_t cap = (size_t)256 << 10;
    if (cap > a->budget) cap = a->budget;
    if (set_buffer(a, cap)) {
        free(a);
        return NULL;
    }
    return a;
}

static void free_heap(zs_arena *a) {
    while (a->heap) {
        heapblk *b = a->heap;
        a->heap = b->next;
        free(b);
    }
}

void zs_arena_destroy(zs_arena *a) {
    if (!a) return;
    free_heap(a);
    drop_buffer(a);
    free(a);
}

void *zs_arena_alloc(void *arena, size_t bytes) {
    zs_arena *a = arena;
    if (!bytes || bytes > SIZE_MAX / 2) return NULL;
    size_t need = HDR + round_up(bytes) + GAP;
    a->demand += need;
    if (a->demand > a->peak) a->peak = a->demand;
    a->allocs++;
    if (need <= a->cap - a->top) {
        char *h = a->base + a->top;
        a->top += need;
        write_hdr(h, LIVE, bytes);
        char *p = h + HDR;
        UNPOISON(p, bytes);
        MSAN_NEW(p, bytes);
        VALGRIND_MALLOCLIKE_BLOCK(p, bytes, HDR, 0);
        a->live++;
        return p;
    }
    heapblk *b = malloc(sizeof *b + bytes);
    if (!b) return NULL;
    b->h.magic = HEAP_LIVE;
    b->h.pad = 0;
    b->h.size = bytes;
    b->prev = NULL;
    b->next = a->heap;
    if (a->heap) a->heap->prev = b;
    a->heap = b;
    a->heap_allocs++;
    a->live++;
    return b + 1;
}

static void bad_free(const void *p) {
    fprintf(stderr,
            "zs_arena: free of %p, which is not a live block of the arena (a double free, or a pointer "
            "it did not hand out)\n",
            p);
    abort();
}

void zs_arena_free(void *arena, void *p) {
    zs_arena *a = arena;
    if (!p) return;
    char *c = p;
    if (a->base && c >= a->base && c < a->base + a->cap) {
        size_t off = (size_t)(c - a->base);
        if (off < HDR || off % ALGN || off >= a->top) bad_free(p);
        char *h = c - HDR;
        hdr v = read_hdr(h);
        if (v.magic != LIVE) bad_free(p);
        write_hdr(h, FREED, v.size);
        POISON(c, v.size);
        VALGRIND_FREELIKE_BLOCK(c, HDR);
        a->live--;
        size_t used = HDR + round_up((size_t)v.size) + GAP;
        if (a->reuse_top && h + used == a->base + a->top) {
            a->top = (size_t)(h - a->base);
            a->demand -= used;
        }
        return;
    }
    heapblk *b = (heapblk *)c - 1;
    if (b->h.magic != HEAP_LIVE) bad_free(p);
    b->h.magic = FREED;
    if (b->prev)
        b->prev->next = b->next;
    else
        a->heap = b->next;
    if (b->next) b->next->prev = b->prev;
    a->live--;
    free(b);
}

zo_allocator zs_arena_allocator(zs_arena *a) {
    zo_allocator al = {zs_arena_alloc, zs_arena_free, a};
    return al;
}

size_t zs_arena_reset(zs_arena *a) {
    size_t leaked = a->live;
    free_heap(a);
    a->live = 0;
    a->demand = 0;
    size_t want = a->cap;
    while (want < a->peak && want < a->budget) want *= 2;
    if (want > a->budget) want = a->budget;
    if (want > a->cap) {
        drop_buffer(a);
        if (set_buffer(a, want) && set_buffer(a, (size_t)256 << 10)) {
            a->budget = 0; /* no buffer: every block from malloc */
            return leaked;
        }
        return leaked;
    }
    /* only what this execution used needs its poison back */
    if (a->top) {
        POISON(a->base, a->top);
        VALGRIND_MAKE_MEM_NOACCESS(a->base, a->top);
    }
    a->top = 0;
    return leaked;
}

void zs_arena_get_stats(const zs_arena *a, zs_arena_stats *out) {
    out->allocs = a->allocs;
    out->heap = a->heap_allocs;
    out->capacity = a->cap;
    out->peak = a->peak;
}
