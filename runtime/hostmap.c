/*
 * hostmap.c - helpers shared by the backends (hostmap.h has the contract).
 */
#include "hostmap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t zo__mix64(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

/* Formats the message into err[errcap] (if any) and returns st. */
static zo_status fail(zo_status st, char *err, size_t errcap, const char *fmt, ...) {
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

void *zo__host_alloc(const zo_allocator *a, size_t n) {
    if (n == 0 || (uint64_t)n > ZO__HOST_MAX_ALLOC) return NULL;
    return a->alloc ? a->alloc(a->opaque, n) : malloc(n);
}

void zo__host_free(const zo_allocator *a, void *p) {
    if (!p) return;
    if (a->free)
        a->free(a->opaque, p);
    else
        free(p);
}

/* ------------------------------------------------------------------ */
/* Hash table                                                          */
/* ------------------------------------------------------------------ */

static size_t map_home(uint64_t key, size_t cap) { return (size_t)zo__mix64(key) & (cap - 1); }


void *zo__map_get(const zo__map *m, uint64_t key) {
    if (!m->cap) return NULL;
    for (size_t i = map_home(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i]) return NULL;
        if (m->keys[i] == key) return m->vals[i];
    }
}

zo_status zo__map_reserve(zo__map *m, const zo_allocator *a, char *err, size_t errcap, const char *who) {
    if ((m->count + 1) * 2 <= m->cap) return ZO_OK;
    size_t n = m->cap ? m->cap * 2 : 16;
    size_t each = sizeof(uint64_t) + sizeof(void *);
    if (n > SIZE_MAX / each) return fail(ZO_ERR_NOMEM, err, errcap, "%s: table too large", who);
    uint8_t *mem = zo__host_alloc(a, n * each);
    if (!mem) return fail(ZO_ERR_NOMEM, err, errcap, "%s: out of memory growing a table to %zu slots", who, n);
    memset(mem, 0, n * each);
    uint64_t *keys = (uint64_t *)mem;
    void **vals = (void **)(mem + n * sizeof(uint64_t));
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->vals[i]) continue;
        size_t j = map_home(m->keys[i], n);
        while (vals[j]) j = (j + 1) & (n - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    zo__host_free(a, m->keys);
    m->keys = keys;
    m->vals = vals;
    m->cap = n;
    return ZO_OK;
}

void zo__map_put(zo__map *m, uint64_t key, void *val) {
    size_t i = map_home(key, m->cap);
    while (m->vals[i]) i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
}

void zo__map_del(zo__map *m, uint64_t key) {
    if (!m->cap) return;
    size_t mask = m->cap - 1, i = map_home(key, m->cap);
    while (m->vals[i] && m->keys[i] != key) i = (i + 1) & mask;
    if (!m->vals[i]) return;
    m->vals[i] = NULL;
    m->count--;
    for (size_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        size_t home = map_home(m->keys[j], m->cap);
        /* slots[j] may move into the hole i unless its home lies in (i, j] */
        int stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->vals[j] = NULL;
            i = j;
        }
    }
}

void zo__map_free(zo__map *m, const zo_allocator *a) {
    zo__host_free(a, m->keys); /* vals lives in the same allocation */
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}

/* ------------------------------------------------------------------ */
/* Parameter content (backend_host.c's header comment: "Parameter       */
/* contents")                                                          */
/* ------------------------------------------------------------------ */

static uint64_t param_word(zo_param_id param, uint64_t word) {
    return zo__mix64(word * 0x9E3779B97F4A7C15ull ^ ((uint64_t)param + 1u) * 0xD1B54A32D192ED03ull);
}

uint8_t zo_host_param_byte(zo_param_id param, uint64_t byte_index) {
    return (uint8_t)(param_word(param, byte_index >> 3) >> ((byte_index & 7u) * 8u));
}

/* Writes bytes [off, off + n) of param's full tensor to dst: a byte at a
 * time up to the next word boundary, then one mix per 8 bytes. */
static void fill_content_at(zo_param_id param, uint8_t *dst, uint64_t off, uint64_t n) {
    uint64_t i = 0;
    for (; i < n && ((off + i) & 7u); i++) dst[i] = zo_host_param_byte(param, off + i);
    for (; i + 8 <= n; i += 8) {
        uint64_t z = param_word(param, (off + i) >> 3);
        for (unsigned k = 0; k < 8; k++) dst[i + k] = (uint8_t)(z >> (8u * k));
    }
    for (; i < n; i++) dst[i] = zo_host_param_byte(param, off + i);
}

void zo__fill_padded(zo_param_id param, uint8_t *dst, uint64_t off, uint64_t n, uint64_t full_bytes) {
    if (n == 0) return;
    uint64_t content = full_bytes > off ? (full_bytes - off < n ? full_bytes - off : n) : 0;
    fill_content_at(param, dst, off, content);
    if (n > content) memset(dst + content, 0, (size_t)(n - content));
}

/* ------------------------------------------------------------------ */
/* Argument checks                                                     */
/* ------------------------------------------------------------------ */

zo_status zo__gather_item_check(char *err, size_t errcap, const char *who, size_t i, const zo_gather_item *it,
                                const zo__gather_param *p, const zo__gather_buf *b) {
    if (!p)
        return fail(ZO_ERR_BAD_HANDLE, err, errcap, "%s: all_gather_start: item %zu: param %u not added", who, i,
                    (unsigned)it->param);
    if (it->numel != p->numel || it->partition_numel != p->partition_numel || it->elem_size != p->elem_size)
        return fail(ZO_ERR_INVALID_ARG, err, errcap,
                    "%s: all_gather_start: item %zu (param %u): numel/partition_numel/elem_size "
                    "%llu/%llu/%u differ from param_add's %llu/%llu/%u",
                    who, i, (unsigned)it->param, (unsigned long long)it->numel, (unsigned long long)it->partition_numel,
                    (unsigned)it->elem_size, (unsigned long long)p->numel, (unsigned long long)p->partition_numel,
                    (unsigned)p->elem_size);
    if (!b)
        return fail(ZO_ERR_INVALID_ARG, err, errcap,
                    "%s: all_gather_start: item %zu (param %u): full buffer is not from this backend's full_alloc", who,
                    i, (unsigned)it->param);
    if (b->param != it->param)
        return fail(ZO_ERR_INVALID_ARG, err, errcap,
                    "%s: all_gather_start: item %zu: buffer of param %u used for param %u", who, i, (unsigned)b->param,
                    (unsigned)it->param);
    if (b->capacity < p->copy_bytes)
        return fail(ZO_ERR_INVALID_ARG, err, errcap,
                    "%s: all_gather_start: item %zu (param %u): full buffer holds %zu bytes, the gather needs "
                    "%llu (W * partition_numel * elem_size, capped)",
                    who, i, (unsigned)it->param, b->capacity, (unsigned long long)p->copy_bytes);
    if (p->busy)
        return fail(ZO_ERR_STATE, err, errcap,
                    "%s: all_gather_start: param %u is already in flight (a parameter is in at most one pending "
                    "all-gather)",
                    who, (unsigned)it->param);
    if (b->busy)
        return fail(ZO_ERR_STATE, err, errcap,
                    "%s: all_gather_start: full buffer of param %u is already the target of a pending all-gather", who,
                    (unsigned)it->param);
    return ZO_OK;
}

zo_status zo__full_alloc_check(char *err, size_t errcap, const char *who, zo_param_id param, int added,
                               uint64_t phys_bytes, size_t hdr) {
    if (!added) return fail(ZO_ERR_BAD_HANDLE, err, errcap, "%s: full_alloc: param %u not added", who, (unsigned)param);
    if (phys_bytes > ZO__HOST_MAX_ALLOC - hdr)
        return fail(ZO_ERR_NOMEM, err, errcap, "%s: full_alloc(%u): %llu bytes exceed the %llu-byte limit", who,
                    (unsigned)param, (unsigned long long)phys_bytes, (unsigned long long)ZO__HOST_MAX_ALLOC);
    return ZO_OK;
}

zo_status zo__reduce_scatter_check(char *err, size_t errcap, const char *who, zo_param_id param, uint64_t numel,
                                   uint64_t partition_numel, int added, uint64_t added_numel,
                                   uint64_t added_partition_numel) {
    if (!added)
        return fail(ZO_ERR_BAD_HANDLE, err, errcap, "%s: reduce_scatter: param %u not added", who, (unsigned)param);
    if (numel != added_numel || partition_numel != added_partition_numel)
        return fail(ZO_ERR_INVALID_ARG, err, errcap,
                    "%s: reduce_scatter(%u): numel/partition_numel %llu/%llu differ from %llu/%llu", who,
                    (unsigned)param, (unsigned long long)numel, (unsigned long long)partition_numel,
                    (unsigned long long)added_numel, (unsigned long long)added_partition_numel);
    return ZO_OK;
}
