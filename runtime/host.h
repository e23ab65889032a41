/*
 * host.h - the host backend's shared types and internal functions, private
 * to runtime/: backend_host.c (single view, the vtable, creation),
 * host_world.c (the multi-rank world: matching and hang detection),
 * host_cache.c (the cache of freed full buffers) and host_faults.c (fault
 * injection).  backend_host.c's header comment describes the whole backend.
 */
#ifndef ZOFFLOAD_HOST_H
#define ZOFFLOAD_HOST_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hostmap.h"
#include "zoffload_backend.h"
#include "zoffload_testing.h"

/* AddressSanitizer: cached full buffers are poisoned so that a use after
 * full_free is reported as it would be after a real free. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOST_ASAN 1
#endif
#endif
#if !defined(HOST_ASAN) && defined(__SANITIZE_ADDRESS__)
#define HOST_ASAN 1
#endif
#ifdef HOST_ASAN
#include <sanitizer/asan_interface.h>
#define HOST_ASAN_POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define HOST_ASAN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define HOST_ASAN_POISON(p, n)   ((void)(p), (void)(n))
#define HOST_ASAN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ZO_HOST_MAX_ALLOC ZO__HOST_MAX_ALLOC

/* A single-view all-gather copies the padded tensor in pieces of
 * HOST_COPY_PIECE bytes when it is shorter than HOST_COPY_WHOLE_MIN bytes,
 * else with one memcpy.  Pieces: one glibc 2.36 memcpy of 1 MiB or more
 * ran at 0.75-0.9x of the same bytes copied in pieces of 64-512 KiB on an
 * AMD EPYC (1 MiB L2 per core), and within 0.91-1.07x of them from 64 KiB
 * to 16 MiB on an Intel Xeon (4 MiB L2, 105 MiB L3); 512 KiB is also
 * NCCL's default step of a ring all-gather (NCCL_BUFFSIZE 4 MiB /
 * NCCL_STEPS 8).  One memcpy from 32 MiB: above glibc's non-temporal
 * threshold (x86_non_temporal_threshold, 41 MiB on that Xeon) memcpy
 * streams with non-temporal stores, which the pieces never reach; there
 * one memcpy of 64-256 MiB ran at 1.4-1.5x of the pieces on the Xeon.
 * Which one wins on a machine is the C library's choice from then on. */
#define HOST_COPY_PIECE     ((uint64_t)512u << 10)
#define HOST_COPY_WHOLE_MIN ((uint64_t)32u << 20)

/* Copies of HOST_COPY_WHOLE_MIN bytes or more go between a store whose
 * data starts on a page and a full buffer whose data starts 64 bytes into
 * its page.  On the Xeon above, one memcpy of 64-256 MiB whose destination
 * sat 64 bytes behind its source modulo 4 KiB ran at 0.85-0.9x of one whose
 * destination sat 64 bytes ahead (4K aliasing between the loads and the
 * non-temporal stores); where malloc put the two blocks decided which one a
 * parameter got.  The HOST_PAGE_SLACK spare bytes of such an allocation
 * (0.01% of it) place the record. */
#define HOST_PAGE_SLACK     ((size_t)4095u)
#define HOST_STORE_PAGE_OFF ((uintptr_t)0u)
#define HOST_FULL_PAGE_OFF  ((uintptr_t)64u)
#define HOST_POISON         ZO__HOST_POISON

typedef struct host_ctx host_ctx;

typedef struct host_work host_work;
typedef struct wentry wentry;

typedef struct host_buf host_buf;

typedef struct host_param {
    /* first line (the block is line-aligned where it can be): what a
     * gather, full_alloc and full_free read */
    zo_param_id id;
    uint32_t elem_size;       /* bytes */
    uint64_t numel;           /* elements */
    uint64_t partition_numel; /* elements per rank */
    uint64_t copy_bytes;      /* L: bytes a gather copies (0 with no_copy) */
    host_work *pending;       /* deferred gather not completed yet */
    uint64_t mark;            /* duplicate detection inside one group */
    host_buf *bufs;           /* its live full buffers (usually one), newest first */
    uint8_t *store;           /* single view: L bytes, rank r's shard at r*shard_bytes;
                                 world: this rank's stored part of its own shard only */
    /* second line */
    uint64_t full_bytes;   /* numel * elem_size */
    uint64_t shard_bytes;  /* partition_numel * elem_size */
    uint64_t padded_bytes; /* W * shard_bytes */
    uint64_t stored;       /* bytes in store: L (single view) or this rank's part (world) */
    void *block;           /* the allocation holding this record and store */
} host_param;
_Static_assert(offsetof(host_param, full_bytes) == 64, "a gather reads one line of a parameter record");

/* A full buffer: this header, then the data (data_of), both on a line
 * boundary inside the allocation unless that would exceed the allocation
 * limit (slack 0). */
struct host_buf {
    zo_param_id param;
    uint32_t slack;   /* bytes from the allocation's start to this header (0..63) */
    size_t requested; /* bytes asked for */
    size_t capacity;  /* bytes really allocated after the header */
    host_work *pending;
    uint64_t mark;
    union {
        struct {                  /* only while cached (see "Full buffer cache"): */
            host_buf *below;      /* the buffer of the same capacity cached before this one */
            host_buf *next_class; /* only for the top of a capacity's stack: the next capacity's top
                                     in the same bucket */
        };
        struct { /* only while live: its list (owner->bufs, or c->orphans) */
            host_buf *live_prev, *live_next;
        };
    };
    host_param *owner; /* while live: the parameter it was allocated for, NULL once that was removed */
};

#define HOST_BUF_HDR ((sizeof(host_buf) + 63u) & ~(size_t)63u)

/* Buckets of the full buffer cache (a power of two), inline in the context
 * so that caching a buffer never allocates. */
#define HOST_CACHE_BUCKET_BITS 6u
#define HOST_CACHE_BUCKETS     (1u << HOST_CACHE_BUCKET_BITS)

typedef struct host_item {
    zo_param_id param;
    int cancelled;
    host_param *p; /* NULL once cancelled by param_remove */
    host_buf *buf; /* NULL once cancelled by full_free */
} host_item;

/* One all-gather group.  Its first line is what a one-item gather, its
 * completion check and its work_free touch: the items of a group of up to
 * two live in the record (items == inl; the second on the next line), a
 * larger group's in an array the record keeps across reuses (heap,
 * heap_cap items).  Only a work that is not complete when
 * all_gather_start returns is on the live list (listed; prev/next):
 * zo_host_progress and destroy walk it. */
#define HOST_WORK_INLINE 2u
struct host_work {
    _Alignas(64) host_item *items; /* n items: inl, or heap */
    size_t n;
    uint8_t live; /* a live work (else free in the pool) */
    uint8_t done;
    uint8_t delayed;  /* fault DELAY at GATHER: only wait() completes it */
    uint8_t listed;   /* on the live list c->works */
    zo_status doomed; /* fault FAIL_WORK at GATHER: completes with this, copying nothing */
    zo_status status;
    host_work *next; /* listed: the live list; free: the pool's queue */
    host_item inl[HOST_WORK_INLINE];
    host_work *prev; /* listed: the live list */
    wentry *we;      /* world mode: this rank's entry in its collective until observed */
    host_item *heap;
    size_t heap_cap;
};
_Static_assert(offsetof(host_work, inl) + sizeof(host_item) <= 64, "a one-item work is one cache line");
_Static_assert(sizeof(host_work) == 128, "records of a pool chunk stay line-aligned");

/* Work records come from a pool of chunks (chunk k: HOST_WORK_CHUNK0 << k
 * records, line-aligned inside its allocation) that only grows; a handle is
 * valid when it is the address of a record of a chunk that is live.  A
 * freed record waits in a ring of the HOST_WORK_QUARANTINE most recently
 * freed before it is reused (most recently freed first, for locality), so
 * the handle of a freed work stays invalid for at least that many later
 * frees. */
#define HOST_WORK_CHUNK0     64u
#define HOST_WORK_CHUNKS     40u
#define HOST_WORK_QUARANTINE 16u

struct host_ctx {
    /* first, together (about 200 bytes): what a gather - full_alloc,
     * all_gather_start, its completion check, work_free, full_free - reads
     * and writes; after them what error paths, the other entry points and
     * the world use */
    zo_backend pub; /* the handle given to the caller; lives in this allocation */
    uint64_t cap;   /* max_bytes_per_param, 0 = none */
    /* Parameters: slots[id] for id < nslots (the runtime numbers its
     * parameters densely from 0), the map for ids far above the count;
     * slots_hi: 1 + the highest slot a parameter was ever put in (the
     * slots from it on are NULL, so walks over every parameter stop there,
     * not at the table's size) */
    host_param **slots;
    size_t nslots, slots_hi;
    zo_host_world *world; /* NULL: single view */
    int world_size, rank, deferred, no_copy, no_poison;
    zo_host_fault_action fault_action; /* fault.action: ZO_HOST_FAULT_NONE when none is armed */
    size_t nbufs;
    uint64_t cache_budget; /* zo_host_config.cache_bytes */
    uint64_t cache_bytes;  /* capacity bytes of the cached buffers */
    size_t cache_count;    /* cached buffers */
    uint64_t cache_hits;   /* full_alloc served from the cache */
    uint64_t mark_gen;
    uint64_t fault_ops[2]; /* operations per zo_host_fault_point since armed */
    host_work *wfree;      /* free records out of quarantine, a stack (next) */
    size_t wquar_head, wquar_n;
    size_t nworks;    /* live works */
    host_work *works; /* listed works (not complete at all_gather_start), newest first */
    size_t npending;
    uint64_t shard_bytes_total, bytes_copied;
    size_t nwchunks;
    size_t nwheaps;                         /* work records holding an allocated item array (heap) */
    host_work *wchunk[HOST_WORK_CHUNKS];    /* the work pool's chunks (line-aligned) */
    host_work *wquar[HOST_WORK_QUARANTINE]; /* the most recently freed records, a ring */
    host_buf *cache[HOST_CACHE_BUCKETS];    /* per bucket: the tops of its capacities' stacks */
    /* Live full buffers: on their parameter's list (host_param.bufs), or on
     * orphans once the parameter was removed; found by comparing addresses
     * with those of the lists, never by reading the caller's pointer. */
    host_buf *orphans;
    zo__map sparse; /* id -> host_param*, only ids >= nslots */
    size_t nparams;
    zo_allocator alloc;
    void *wchunk_raw[HOST_WORK_CHUNKS]; /* the allocations of wchunk[] */
    zo_host_fault fault;                /* armed fault (action NONE: none) */
    uint64_t fault_fired;
    char err[256];
};


enum { WK_GATHER = 1, WK_EXCHANGE = 2, WK_RS = 3 };

typedef struct witem {
    zo_param_id param;
    uint64_t numel, partition_numel;
    uint32_t elem_size;
    uint64_t shard_bytes, copy_bytes; /* per rank; L (capped padded bytes) */
    const uint8_t *src;               /* this rank's stored part of its shard; may be NULL when 0 bytes */
    uint64_t src_len;
    uint8_t *snap; /* world-owned copy of src once the owner's memory may go */
    uint8_t *dst;  /* this rank's full buffer; NULL: not delivered (cancelled) */
    int lost;      /* the snapshot could not be allocated: the source is gone */
} witem;

struct wentry {
    int kind, rank;
    uint64_t seq;
    int done;         /* the collective completed (or was aborted) */
    int detached;     /* the owner no longer observes it: freed by the world at completion */
    zo_status status; /* at done: ZO_OK or ZO_ERR_COLLECTIVE_MISMATCH */
    char *msg;        /* world-owned text for a failed entry (NULL: none) */
    uint64_t copied;  /* bytes delivered into this rank's buffers */
    const void *send; /* exchange */
    void *recv;
    size_t bytes;
    const float *grad; /* reduce-scatter */
    float *out;
    zo_reduce_op op;
    size_t n; /* items (gather: group size; reduce-scatter: 1) */
    witem items[];
};

typedef struct wcoll {
    uint64_t seq;
    int arrived;
    struct wcoll *next;
    wentry *e[]; /* W: rank r's entry, NULL until it issues */
} wcoll;

typedef struct wrank {
    int state;       /* 0 not joined, 1 member, 2 left */
    uint64_t issued; /* collectives issued (next sequence number) */
    wentry *blocked; /* the entry it blocks on, or NULL */
} wrank;

struct zo_host_world {
    zo_allocator alloc;
    int W;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int joined, nleft, nblocked, hung;
    int have_cfg, no_copy;
    uint64_t cap;
    wcoll *head, *tail; /* collectives some but not all ranks issued, by sequence number */
    wcoll *spare;       /* one cached wcoll (W pointers) */
    zo_status finding_st;
    char finding[512];
    wrank *r;
    zo_host_world_sched sched; /* yield == NULL: ranks on threads, blocking on cv */
};


/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static inline void *h_alloc(host_ctx *c, size_t n) { return zo__host_alloc(&c->alloc, n); }

static inline void h_free(host_ctx *c, void *p) { zo__host_free(&c->alloc, p); }

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static inline uint64_t phys(const host_ctx *c, uint64_t bytes) { return c->cap ? min_u64(bytes, c->cap) : bytes; }

static inline host_param *lookup(const host_ctx *c, zo_param_id id) {
    if (id < c->nslots) return c->slots[id];
    return c->sparse.count ? zo__map_get(&c->sparse, id) : NULL;
}

static inline host_ctx *ctx_of(void *ctx) { return (host_ctx *)ctx; }

static inline host_buf *buf_of(void *full) { return (host_buf *)((uint8_t *)full - HOST_BUF_HDR); }

static inline uint8_t *data_of(host_buf *b) { return (uint8_t *)b + HOST_BUF_HDR; }

/* Gives a full buffer's allocation back to the allocator. */
static inline void buf_dealloc(host_ctx *c, host_buf *b) { h_free(c, (uint8_t *)b - b->slack); }

/* backend_host.c */

/* b's context if b is a host backend, else NULL. */
const host_ctx *zo__host_of(const zo_backend *b);
/* Performs the data movement of a pending work (deferred mode). */
void zo__host_complete(host_ctx *c, host_work *w);
/* Clears the pending links of w's parameters and buffers to w. */
void zo__host_unlink_pending(host_work *w);
/* a completed work's status from its own items: FAIL_WORK fault, else cancelled items */
void zo__host_work_fate(host_ctx *c, host_work *w, size_t cancelled, zo_param_id first);
/* Formats the message of a failed call into c->err; returns st. */
zo_status zo__host_fail(host_ctx *c, zo_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* host_cache.c: the cache of freed full buffers */

/* Takes the most recently cached buffer of exactly `capacity` bytes, or NULL. */
host_buf *zo__host_cache_take(host_ctx *c, size_t capacity);
/* Keeps b (already off the live lists) for reuse if it fits the budget;
 * returns 0 if it does not (the caller frees it). */
int zo__host_cache_put(host_ctx *c, host_buf *b);
/* Really frees every cached buffer (destroy). */
void zo__host_cache_free_all(host_ctx *c);

/* host_faults.c: fault injection */

/* FAIL_WORK at a completion check: the work completes now, copying nothing. */
void zo__host_doom_now(host_ctx *c, host_work *w);
/* Sleeps us microseconds (DELAY at WAIT). */
void zo__host_sleep_us(uint32_t us);
/* Counts one operation at pt; returns the armed fault's action if it
 * applies to this operation, else ZO_HOST_FAULT_NONE. */
zo_host_fault_action zo__host_fault_hit(host_ctx *c, zo_host_fault_point pt);
/* The status of the armed fault (ZO_ERR_BACKEND when it says 0). */
zo_status zo__host_fault_status(const host_ctx *c);

/* host_world.c: the multi-rank world */

/* The owner stops observing e: completed entries are freed, pending ones
 * keep contributing (sources snapshotted), deliver nothing more to this
 * rank and are freed by the world at completion. */
void zo__host_entry_detach(zo_host_world *w, wentry *e);
/* Frees an entry and its items (world allocator). */
void zo__host_entry_free(zo_host_world *w, wentry *e);
/* Blocks the calling rank until e is done (or the world would hang). */
void zo__host_world_block(zo_host_world *w, wentry *e);
/* Item i of pending work w is cancelled for this rank (its buffer freed or
 * its parameter removed): nothing more is delivered to it, and its source
 * is kept for the others (the item no longer tracks the parameter, which
 * may be removed next). */
void zo__host_world_cancel_item(host_ctx *c, host_work *w, size_t i);
/* Called under the mutex whenever a rank blocks or leaves. */
void zo__host_world_check_hang(zo_host_world *w);
/* FAIL_WORK at a completion check in world mode: the work is done for this
 * rank now, delivering nothing more; the collective goes on for the others. */
void zo__host_world_doom(host_ctx *c, host_work *w);
/* The owner observes its completed entry (mutex held): the work is done
 * for this rank, with the collective's status, else the fate of its own
 * items (FAIL_WORK fault, cancelled items) as in single view. */
void zo__host_world_observe(host_ctx *c, host_work *w);
/* A new entry of n items, world allocator. */
wentry *zo__host_entry_new(zo_host_world *w, int kind, int rank, size_t n);
/* Issues e (exchange, reduce-scatter) and blocks until it completed. */
zo_status zo__host_world_blocking_call(host_ctx *c, wentry *e, const char *what);
/* Issues e as this rank's next collective.  ZO_ERR_NOMEM (nothing issued)
 * if a new collective record cannot be allocated. */
zo_status zo__host_world_issue(zo_host_world *w, wentry *e);

#endif
