/*
 * host_world.c - the multi-rank host world (zo_host_world_*,
 * zoffload_backend.h): one stand-in for an NCCL communicator shared by W
 * host backends, with collective matching and hang detection.  The rank
 * side of each operation is in backend_host.c; host.h has the shared types.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* ------------------------------------------------------------------ */
/* Multi-rank host world                                               */
/* ------------------------------------------------------------------ */
/*
 * One mutex and one condition variable for the whole world.  Every world
 * operation of a rank's backend that touches shared state (issuing,
 * completing, observing, cancelling, leaving) holds the mutex; the data of
 * a completed collective is copied under it by the thread of the rank that
 * issued the collective last, from the source ranks' memory into every
 * destination rank's memory.
 *
 * A rank's k-th collective is a wentry (world-owned, world allocator) in the
 * wcoll of sequence number k.  The entry records what the rank contributes
 * (its stored part of each shard, its send buffer, its gradient) and where
 * its result goes (its full buffers, recv, shard_out).  The owning rank
 * observes the entry's completion at wait(), query() or (blocking calls)
 * right away, and then frees it.  A rank that stops caring before
 * completion (work_free, param_remove, full_free, a FAIL_WORK fault at a
 * wait, leaving the world) cancels its destinations and, for the sources
 * that would go away with its memory, leaves a copy (snapshot) in the
 * entry: the collective still completes for the other ranks exactly as if
 * the rank had stayed, which keeps every outcome independent of timing.
 * (Should that copy not be allocatable, the collective completes with
 * ZO_ERR_NOMEM on every rank - never with wrong bytes.)
 *
 * Determinism: a rank's collective k completes iff every rank issues its
 * k-th collective before the world would hang, and whether that happens
 * depends only on each rank's program (like a Kahn process network: a rank
 * only ever blocks on one of its own collectives).  Its status depends only
 * on the k-th collectives' descriptions.  The only timing-dependent answer
 * is query()'s done flag; a rank's own later outcomes depend on it only if
 * its program branches on it.  For that reason a rank's work counts as
 * complete for this rank only once observed: a full buffer freed (or a
 * parameter removed) while its work is unobserved cancels the item (wait
 * returns ZO_ERR_STATE), even if the data had already arrived.
 *
 * Matching: when the last rank issues collective k, every rank's entry is
 * compared with rank 0's (kind, item count, per item param / numel /
 * partition_numel / elem_size; exchange: bytes; reduce-scatter: also the
 * op).  The first rank that differs is named: "collective 7: rank 0
 * all-gather [p3 1024x4B] vs rank 1 all-gather [p5 1024x4B]" (at most 4
 * items listed, then "... N items").  Every rank's k-th then completes with
 * ZO_ERR_COLLECTIVE_MISMATCH and no data moves; the world goes on (the
 * next collectives are matched normally).
 *
 * Would hang: a rank is blocked while it waits (wait, exchange,
 * reduce-scatter) on an entry not yet done; a rank has left once its
 * backend is destroyed.  When every rank has joined and each is blocked or
 * has left, nothing can ever complete: the finding names the lowest
 * collective k a blocked rank waits on, the lowest rank waiting on it and
 * the lowest rank that never issued k (necessarily one that left - a
 * blocked rank that had not issued k would be waiting on a lower one):
 * "collective 7: would hang: rank 0 waits in all-gather [p3 1024x4B]; rank
 * 1 left after 7 collectives".  When the last rank leaves while some
 * collective was issued by only some ranks (nobody waits on it): "...
 * would hang: rank 0 issued all-gather [...] and left; rank 1 left after 7
 * collectives".  Then every pending entry completes with
 * ZO_ERR_COLLECTIVE_MISMATCH (collective k's with the finding, the others
 * with "collective j aborted: <finding>") and every later collective fails
 * at once ("collective j: not run, the world would hang: <finding>"): the
 * world stays failed.  Each failed call's last_error carries its text.
 * Until every rank has joined (created its backend) nothing is declared: a
 * rank that has not joined yet may still come.  A rank that finishes its
 * program must destroy its backend, or the others wait for it forever -
 * as with NCCL.
 *
 * Blocking: a rank's thread sleeps on the condition variable until its
 * entry is done; with a scheduler (zo_host_world_set_sched, the ranks as
 * coroutines of one thread) it releases the mutex and calls yield instead,
 * and entry_finish calls wake for the rank it unblocks.  Nothing else
 * differs: the world is the same state machine either way, driven by the
 * ranks' calls, so every outcome is the same.
 *
 * Findings: the first mismatch or would-hang is kept for
 * zo_host_world_report.  Collectives complete in sequence order (the last
 * rank to issue k issued k-1 before), and a would-hang can only come after
 * every mismatch that will happen, so "first" is deterministic too.
 */

static void *w_alloc(zo_host_world *w, size_t n) { return zo__host_alloc(&w->alloc, n); }
static void w_free(zo_host_world *w, void *p) { zo__host_free(&w->alloc, p); }

static const char *kind_name(int k) {
    return k == WK_GATHER ? "all-gather" : k == WK_EXCHANGE ? "exchange" : "reduce-scatter";
}

/* "all-gather [p3 1024x4B, p5 10x2B]", "exchange [64B]", "reduce-scatter [p3 1024x4B sum]" */
static void describe(const wentry *e, char *buf, size_t len) {
    size_t o = 0;
#define APP(...)                                                                                                       \
    do {                                                                                                               \
        int k_ = snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__);                                                \
        if (k_ > 0) o += (size_t)k_;                                                                                   \
        if (o >= len) o = len - 1;                                                                                     \
    } while (0)
    if (!len) return;
    buf[0] = '\0';
    APP("%s [", kind_name(e->kind));
    if (e->kind == WK_EXCHANGE) {
        APP("%zuB", e->bytes);
    } else {
        for (size_t i = 0; i < e->n; i++) {
            if (i == 4) {
                APP(", ... %zu items", e->n);
                break;
            }
            APP("%sp%u %llux%uB", i ? ", " : "", (unsigned)e->items[i].param, (unsigned long long)e->items[i].numel,
                (unsigned)e->items[i].elem_size);
        }
        if (e->n == 0) APP("no items");
        if (e->kind == WK_RS) APP(" %s", e->op == ZO_REDUCE_AVG ? "avg" : "sum");
    }
    APP("]");
#undef APP
}

static int entries_match(const wentry *a, const wentry *b) {
    if (a->kind != b->kind || a->n != b->n) return 0;
    if (a->kind == WK_EXCHANGE) return a->bytes == b->bytes;
    if (a->kind == WK_RS && a->op != b->op) return 0;
    for (size_t i = 0; i < a->n; i++) {
        const witem *x = &a->items[i], *y = &b->items[i];
        if (x->param != y->param || x->numel != y->numel || x->partition_numel != y->partition_numel ||
            x->elem_size != y->elem_size)
            return 0;
    }
    return 1;
}

void zo__host_entry_free(zo_host_world *w, wentry *e) {
    if (!e) return;
    for (size_t i = 0; i < e->n; i++) w_free(w, e->items[i].snap);
    w_free(w, e->msg);
    w_free(w, e);
}

static void entry_set_msg(zo_host_world *w, wentry *e, const char *text) {
    if (e->msg) return;
    size_t n = strlen(text) + 1;
    e->msg = w_alloc(w, n);
    if (e->msg) memcpy(e->msg, text, n);
}

static void record_finding(zo_host_world *w, const char *text) {
    if (w->finding_st != ZO_OK) return;
    w->finding_st = ZO_ERR_COLLECTIVE_MISMATCH;
    snprintf(w->finding, sizeof w->finding, "%s", text);
}

/* Marks e complete with status st (text for failures); frees it if detached. */
static void entry_finish(zo_host_world *w, wentry *e, zo_status st, const char *text) {
    wrank *owner = &w->r[e->rank];
    if (owner->blocked == e) {
        /* its rank can progress again: no longer counted as blocked */
        owner->blocked = NULL;
        w->nblocked--;
        if (w->sched.wake) w->sched.wake(w->sched.user, e->rank);
    }
    e->status = st;
    if (st != ZO_OK && text) entry_set_msg(w, e, text);
    e->done = 1;
    if (e->detached) zo__host_entry_free(w, e);
}

/* The data movement of a matched collective: every rank's contribution to
 * every rank's destination. */
static void coll_move(zo_host_world *w, wcoll *k) {
    int W = w->W;
    wentry *e0 = k->e[0];
    if (e0->kind == WK_GATHER) {
        if (w->no_copy) return;
        for (size_t i = 0; i < e0->n; i++) {
            uint64_t L = e0->items[i].copy_bytes, sb = e0->items[i].shard_bytes;
            for (int d = 0; d < W; d++) {
                witem *dst = &k->e[d]->items[i];
                if (!dst->dst) continue;
                for (int s = 0; s < W; s++) {
                    uint64_t off = (uint64_t)s * sb;
                    if (off >= L) break;
                    const witem *src = &k->e[s]->items[i];
                    uint64_t len = min_u64(min_u64(sb, L - off), src->src_len);
                    const uint8_t *from = src->snap ? src->snap : src->src;
                    if (len && from) memcpy(dst->dst + off, from, (size_t)len);
                }
                k->e[d]->copied += L;
            }
        }
    } else if (e0->kind == WK_EXCHANGE) {
        size_t b = e0->bytes;
        for (int d = 0; d < W; d++)
            for (int s = 0; s < W; s++) memcpy((uint8_t *)k->e[d]->recv + (size_t)s * b, k->e[s]->send, b);
    } else {
        uint64_t numel = e0->items[0].numel, pn = e0->items[0].partition_numel;
        for (int d = 0; d < W; d++) {
            float *out = k->e[d]->out;
            for (uint64_t i = 0; i < pn; i++) {
                uint64_t j = (uint64_t)d * pn + i;
                if (j >= numel) {
                    out[i] = 0.0f;
                    continue;
                }
                float acc = 0.0f;
                for (int s = 0; s < W; s++) acc += k->e[s]->grad[j];
                out[i] = e0->op == ZO_REDUCE_AVG ? acc / (float)W : acc;
            }
        }
    }
}

static void coll_unlink_free(zo_host_world *w, wcoll *k) {
    wcoll **pp = &w->head, *prev = NULL;
    while (*pp && *pp != k) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = k->next;
        if (w->tail == k) w->tail = prev;
    }
    if (!w->spare) {
        w->spare = k;
    } else {
        w_free(w, k);
    }
}

/* Every rank issued collective k: match, move, complete. */
static void coll_complete(zo_host_world *w, wcoll *k) {
    int W = w->W, bad = -1, lost = -1;
    for (int r = 1; r < W && bad < 0; r++)
        if (!entries_match(k->e[0], k->e[r])) bad = r;
    for (int r = 0; r < W && bad < 0 && lost < 0; r++)
        for (size_t i = 0; i < k->e[r]->n; i++)
            if (k->e[r]->items[i].lost) lost = r;
    if (lost >= 0) {
        char text[200];
        snprintf(text, sizeof text,
                 "collective %llu: out of memory keeping rank %d's contribution after it released it",
                 (unsigned long long)k->seq, lost);
        for (int r = 0; r < W; r++) entry_finish(w, k->e[r], ZO_ERR_NOMEM, text);
    } else if (bad < 0) {
        coll_move(w, k);
        for (int r = 0; r < W; r++) entry_finish(w, k->e[r], ZO_OK, NULL);
    } else {
        char a[160], b[160], text[512];
        describe(k->e[0], a, sizeof a);
        describe(k->e[bad], b, sizeof b);
        snprintf(text, sizeof text, "collective %llu: rank 0 %s vs rank %d %s", (unsigned long long)k->seq, a, bad, b);
        record_finding(w, text);
        for (int r = 0; r < W; r++) entry_finish(w, k->e[r], ZO_ERR_COLLECTIVE_MISMATCH, text);
    }
    coll_unlink_free(w, k);
    pthread_cond_broadcast(&w->cv);
}

/* The world would hang: every pending collective is aborted (collective
 * seq gets the finding itself, the others say they were aborted by it), and
 * every later one fails at once. */
static void world_abort_all(zo_host_world *w, uint64_t seq, const char *finding) {
    while (w->head) {
        wcoll *k = w->head;
        char text[700];
        snprintf(text, sizeof text, "collective %llu aborted: %s", (unsigned long long)k->seq, finding);
        for (int r = 0; r < w->W; r++)
            if (k->e[r]) entry_finish(w, k->e[r], ZO_ERR_COLLECTIVE_MISMATCH, k->seq == seq ? finding : text);
        coll_unlink_free(w, k);
    }
    w->hung = 1;
    pthread_cond_broadcast(&w->cv);
}

/* Called under the mutex whenever a rank blocks or leaves. */
void zo__host_world_check_hang(zo_host_world *w) {
    int W = w->W;
    if (w->hung || w->joined < W || w->nblocked + w->nleft != W || !w->head) return;
    char text[512], d[160];
    uint64_t seq;
    if (w->nblocked > 0) {
        /* the lowest collective a blocked rank waits for; a rank that did
         * not issue it has necessarily left (a blocked rank that had not
         * would wait for a lower one) */
        int a = -1;
        for (int r = 0; r < W; r++)
            if (w->r[r].blocked && (a < 0 || w->r[r].blocked->seq < w->r[a].blocked->seq)) a = r;
        uint64_t k = w->r[a].blocked->seq;
        seq = k;
        int b = -1;
        for (int r = 0; r < W && b < 0; r++)
            if (w->r[r].issued <= k) b = r;
        describe(w->r[a].blocked, d, sizeof d);
        if (b >= 0)
            snprintf(text, sizeof text,
                     "collective %llu: would hang: rank %d waits in %s; rank %d %s after %llu collectives",
                     (unsigned long long)k, a, d, b, w->r[b].state == 2 ? "left" : "stopped",
                     (unsigned long long)w->r[b].issued);
        else
            snprintf(text, sizeof text, "collective %llu: would hang: rank %d waits in %s", (unsigned long long)k, a,
                     d);
    } else {
        /* everyone left with collectives some ranks never issued */
        wcoll *k = w->head;
        seq = k->seq;
        int a = -1, b = -1;
        for (int r = 0; r < W; r++) {
            if (k->e[r] && a < 0) a = r;
            if (!k->e[r] && b < 0) b = r;
        }
        describe(k->e[a], d, sizeof d);
        snprintf(text, sizeof text,
                 "collective %llu: would hang: rank %d issued %s and left; rank %d left after %llu collectives",
                 (unsigned long long)k->seq, a, d, b, (unsigned long long)w->r[b].issued);
    }
    record_finding(w, text);
    world_abort_all(w, seq, text);
}

/* Rank-side helpers (mutex held unless said otherwise) */

/* A new entry of n items, world allocator. */
wentry *zo__host_entry_new(zo_host_world *w, int kind, int rank, size_t n) {
    if (n > (SIZE_MAX - sizeof(wentry)) / sizeof(witem)) return NULL;
    wentry *e = w_alloc(w, sizeof(wentry) + n * sizeof(witem));
    if (!e) return NULL;
    memset(e, 0, sizeof(wentry) + n * sizeof(witem));
    e->kind = kind;
    e->rank = rank;
    e->n = n;
    e->status = ZO_OK;
    return e;
}

/* Issues e as this rank's next collective.  ZO_ERR_NOMEM (nothing issued)
 * if a new collective record cannot be allocated. */
zo_status zo__host_world_issue(zo_host_world *w, wentry *e) {
    wrank *me = &w->r[e->rank];
    uint64_t k = me->issued;
    if (w->hung) {
        me->issued++;
        e->seq = k;
        char text[700];
        snprintf(text, sizeof text, "collective %llu: not run, the world would hang: %s", (unsigned long long)k,
                 w->finding);
        entry_finish(w, e, ZO_ERR_COLLECTIVE_MISMATCH, text);
        return ZO_OK;
    }
    wcoll *c = w->head;
    while (c && c->seq != k) c = c->next;
    if (!c) {
        /* the first rank to issue k: every lower one was created before */
        size_t sz = sizeof(wcoll) + (size_t)w->W * sizeof(wentry *);
        if (w->spare) {
            c = w->spare;
            w->spare = NULL;
        } else {
            c = w_alloc(w, sz);
            if (!c) return ZO_ERR_NOMEM;
        }
        memset(c, 0, sz);
        c->seq = k;
        if (w->tail)
            w->tail->next = c;
        else
            w->head = c;
        w->tail = c;
    }
    me->issued++;
    e->seq = k;
    c->e[e->rank] = e;
    if (++c->arrived == w->W) coll_complete(w, c);
    return ZO_OK;
}

/* Blocks the calling rank until e is done (or the world would hang). */
void zo__host_world_block(zo_host_world *w, wentry *e) {
    if (e->done) return;
    wrank *me = &w->r[e->rank];
    me->blocked = e;
    w->nblocked++;
    zo__host_world_check_hang(w);
    while (!e->done) {
        if (w->sched.yield) {
            /* cooperative: the other ranks run on this thread, and take
             * the mutex themselves */
            pthread_mutex_unlock(&w->mu);
            w->sched.yield(w->sched.user, e->rank);
            pthread_mutex_lock(&w->mu);
        } else {
            pthread_cond_wait(&w->cv, &w->mu);
        }
    }
    /* entry_finish took the rank off the blocked count */
}

/* Keeps what an item's source points to alive in the entry (the owner's
 * memory may go).  If the copy cannot be allocated the item is lost and the
 * collective will fail with ZO_ERR_NOMEM on every rank (never wrong data). */
static void entry_snapshot_item(zo_host_world *w, witem *it) {
    if (it->snap || !it->src || !it->src_len) {
        it->src = NULL;
        return;
    }
    it->snap = w_alloc(w, (size_t)it->src_len);
    if (it->snap)
        memcpy(it->snap, it->src, (size_t)it->src_len);
    else
        it->lost = 1;
    it->src = NULL;
}

/* The owner stops observing e: completed entries are freed, pending ones
 * keep contributing (sources snapshotted), deliver nothing more to this
 * rank and are freed by the world at completion. */
void zo__host_entry_detach(zo_host_world *w, wentry *e) {
    if (!e) return;
    if (e->done) {
        zo__host_entry_free(w, e);
        return;
    }
    for (size_t i = 0; i < e->n; i++) {
        entry_snapshot_item(w, &e->items[i]);
        e->items[i].dst = NULL;
    }
    e->recv = NULL;
    e->detached = 1;
}

/* Mutex of c's world (no-ops in single view). */
static void wlock(host_ctx *c) {
    if (c->world) pthread_mutex_lock(&c->world->mu);
}
static void wunlock(host_ctx *c) {
    if (c->world) pthread_mutex_unlock(&c->world->mu);
}

/* The owner observes its completed entry (mutex held): the work is done
 * for this rank, with the collective's status, else the fate of its own
 * items (FAIL_WORK fault, cancelled items) as in single view. */
void zo__host_world_observe(host_ctx *c, host_work *w) {
    wentry *e = w->we;
    size_t cancelled = 0;
    zo_param_id first = ZO_NO_PARAM;
    for (size_t i = 0; i < w->n; i++) {
        host_item *it = &w->items[i];
        if (it->cancelled || !it->p || !it->buf) {
            if (!cancelled++) first = it->param;
        }
    }
    c->bytes_copied += e->copied;
    zo__host_unlink_pending(w);
    w->done = 1;
    c->npending--;
    if (e->status != ZO_OK) {
        w->status = e->status;
        zo__host_fail(c, e->status, "%s", e->msg ? e->msg : "host world: the collective failed");
    } else {
        zo__host_work_fate(c, w, cancelled, first);
    }
    zo__host_entry_free(c->world, e);
    w->we = NULL;
}

/* FAIL_WORK at a completion check in world mode: the work is done for this
 * rank now, delivering nothing more; the collective goes on for the others. */
void zo__host_world_doom(host_ctx *c, host_work *w) {
    if (w->done) {
        if (w->status == ZO_OK) w->status = zo__host_fault_status(c);
        zo__host_fail(c, w->status, "host backend: injected fault: the all-gather failed");
        return;
    }
    wlock(c);
    zo__host_entry_detach(c->world, w->we);
    wunlock(c);
    w->we = NULL;
    zo__host_unlink_pending(w);
    w->done = 1;
    c->npending--;
    w->status = zo__host_fault_status(c);
    zo__host_fail(c, w->status, "host backend: injected fault: the all-gather failed");
}

/* Item i of pending work w is cancelled for this rank (its buffer freed or
 * its parameter removed): nothing more is delivered to it, and its source
 * is kept for the others (the item no longer tracks the parameter, which
 * may be removed next). */
void zo__host_world_cancel_item(host_ctx *c, host_work *w, size_t i) {
    if (!c->world || !w->we) return;
    wlock(c);
    wentry *e = w->we;
    if (!e->done) {
        e->items[i].dst = NULL;
        entry_snapshot_item(c->world, &e->items[i]);
    }
    wunlock(c);
}


/* Issues e (exchange, reduce-scatter) and blocks until it completed. */
zo_status zo__host_world_blocking_call(host_ctx *c, wentry *e, const char *what) {
    zo_host_world *w = c->world;
    pthread_mutex_lock(&w->mu);
    zo_status st = zo__host_world_issue(w, e);
    if (st != ZO_OK) {
        pthread_mutex_unlock(&w->mu);
        zo__host_entry_free(w, e);
        return zo__host_fail(c, st, "host world: %s: out of memory for a collective record", what);
    }
    zo__host_world_block(w, e);
    st = e->status;
    if (st != ZO_OK) zo__host_fail(c, st, "%s", e->msg ? e->msg : "host world: the collective failed");
    zo__host_entry_free(w, e);
    pthread_mutex_unlock(&w->mu);
    return st;
}

/* ------------------------------------------------------------------ */
/* Multi-rank host world: public entry points                          */
/* ------------------------------------------------------------------ */

zo_status zo_host_world_create(int world_size, const zo_allocator *allocator, zo_host_world **out) {
    if (!out) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_create: out is NULL");
    *out = NULL;
    if (world_size < 1 || world_size > ZO_MAX_WORLD_SIZE)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_create: world_size %d not in 1..%d", world_size,
                            ZO_MAX_WORLD_SIZE);
    zo_allocator a = {NULL, NULL, NULL};
    if (allocator) a = *allocator;
    if (!a.alloc != !a.free)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_create: allocator with only one of alloc/free");
    zo_host_world *w = zo__host_alloc(&a, sizeof *w);
    if (!w) return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    memset(w, 0, sizeof *w);
    w->alloc = a;
    w->W = world_size;
    w->r = zo__host_alloc(&a, (size_t)world_size * sizeof(wrank));
    if (!w->r) {
        zo__host_free(&a, w);
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    }
    memset(w->r, 0, (size_t)world_size * sizeof(wrank));
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        zo__host_free(&a, w->r);
        zo__host_free(&a, w);
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        zo__host_free(&a, w->r);
        zo__host_free(&a, w);
        return zo__fail_tls(ZO_ERR_NOMEM, "zo_host_world_create: out of memory");
    }
    w->finding_st = ZO_OK;
    *out = w;
    return ZO_OK;
}

zo_status zo_host_world_destroy(zo_host_world *w) {
    if (!w) return ZO_OK;
    pthread_mutex_lock(&w->mu);
    for (int r = 0; r < w->W; r++)
        if (w->r[r].state == 1) {
            pthread_mutex_unlock(&w->mu);
            /* rank r's backend is still alive */
            return zo__fail_tls(ZO_ERR_STATE, "zo_host_world_destroy: rank %d's backend is still alive", r);
        }
    /* collectives only some ranks issued: their entries are all detached */
    while (w->head) {
        wcoll *k = w->head;
        w->head = k->next;
        for (int r = 0; r < w->W; r++) zo__host_entry_free(w, k->e[r]);
        w_free(w, k);
    }
    w_free(w, w->spare);
    pthread_mutex_unlock(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    zo_allocator a = w->alloc;
    zo__host_free(&a, w->r);
    zo__host_free(&a, w);
    return ZO_OK;
}

zo_status zo_host_world_set_sched(zo_host_world *w, const zo_host_world_sched *sched) {
    if (!w) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_set_sched: w is NULL");
    if (sched && (sched->size != sizeof *sched || sched->version != ZO_HOST_WORLD_SCHED_VERSION))
        return zo__fail_tls(ZO_ERR_VERSION,
                            "zo_host_world_set_sched: size %zu version %u not understood (this library: size %zu "
                            "version %u; start from ZO_HOST_WORLD_SCHED_INIT)",
                            sched->size, (unsigned)sched->version, sizeof *sched,
                            (unsigned)ZO_HOST_WORLD_SCHED_VERSION);
    if (sched && !sched->yield) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_set_sched: yield is NULL");
    pthread_mutex_lock(&w->mu);
    int joined = w->joined;
    if (!joined) {
        if (sched)
            w->sched = *sched;
        else
            memset(&w->sched, 0, sizeof w->sched);
    }
    pthread_mutex_unlock(&w->mu);
    if (joined)
        return zo__fail_tls(ZO_ERR_STATE, "zo_host_world_set_sched: %d rank(s) joined the world already", joined);
    return ZO_OK;
}

zo_status zo_host_world_report(const zo_host_world *cw, char *buf, size_t len) {
    if (!cw) return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_host_world_report: w is NULL");
    zo_host_world *w = (zo_host_world *)cw; /* the mutex */
    pthread_mutex_lock(&w->mu);
    zo_status st = w->finding_st;
    if (buf && len) snprintf(buf, len, "%s", st == ZO_OK ? "" : w->finding);
    pthread_mutex_unlock(&w->mu);
    return st;
}

uint64_t zo_host_world_collectives(const zo_host_world *cw, int rank) {
    if (!cw || rank < 0 || rank >= cw->W) return 0;
    zo_host_world *w = (zo_host_world *)cw;
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->r[rank].issued;
    pthread_mutex_unlock(&w->mu);
    return n;
}
