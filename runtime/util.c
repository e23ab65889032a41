/*
 * util.c - allocator, errors, events and name tables of libzoffload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "policy.h"

/* AddressSanitizer's allocator aborts the process on a request the system
 * refuses (a 64 GiB shard) unless allocator_may_return_null=1.  zoffload
 * promises ZO_ERR_NOMEM for that, so an ASan build of the library makes
 * it the default for every program linked with it (tests, fuzz targets,
 * zofuzz): they see the contract users of a plain build see.  ASAN_OPTIONS
 * still overrides it.  A program with its own __asan_default_options
 * compiles the library with -DZO_NO_ASAN_DEFAULT_OPTIONS. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZO__ASAN 1
#endif
#endif
#if !defined(ZO__ASAN) && defined(__SANITIZE_ADDRESS__)
#define ZO__ASAN 1
#endif
#if defined(ZO__ASAN) && !defined(ZO_NO_ASAN_DEFAULT_OPTIONS)
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

void *zo__alloc(zo_runtime *rt, size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (rt->al.alloc) return rt->al.alloc(rt->al.opaque, bytes);
    return malloc(bytes);
}

void *zo__calloc(zo_runtime *rt, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    void *p = zo__alloc(rt, n * size);
    if (p && n * size > 0) memset(p, 0, n * size);
    return p;
}

void zo__free(zo_runtime *rt, void *p) {
    if (!p) return;
    if (rt->al.free)
        rt->al.free(rt->al.opaque, p);
    else
        free(p);
}

/* Growth by doubling.  With the default allocator (zo_config.allocator
 * left NULL) a block grows with realloc, which moves a large block's pages
 * (mremap) instead of copying them, so growing an array of 1e6 records
 * costs page-table updates, not a pass over the old contents; a caller's
 * allocator has no realloc, so the block is allocated, copied and freed.
 * The new capacity is zero-filled either way. */
zo_status zo__reserve_sz(zo_runtime *rt, void **arr, size_t *cap, size_t need, size_t esz) {
    if (need <= *cap) return ZO_OK;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return ZO_ERR_NOMEM;
        nc *= 2;
    }
    if (esz && nc > SIZE_MAX / esz) return ZO_ERR_NOMEM;
    void *n;
    if (!rt->al.alloc) {
        n = realloc(*arr, nc * esz ? nc * esz : 1);
        if (!n) return ZO_ERR_NOMEM;
    } else {
        n = zo__alloc(rt, nc * esz);
        if (!n) return ZO_ERR_NOMEM;
        if (*arr && *cap) memcpy(n, *arr, *cap * esz);
        zo__free(rt, *arr);
    }
    memset((char *)n + *cap * esz, 0, (nc - *cap) * esz);
    *arr = n;
    *cap = nc;
    return ZO_OK;
}

zo_status zo__reserve_grow(zo_runtime *rt, void **arr, uint32_t *cap, uint32_t need, size_t esz) {
    size_t c = *cap;
    zo_status s = zo__reserve_sz(rt, arr, &c, need, esz);
    if (s == ZO_OK) *cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    return s;
}

zo_status zo__reserve_aligned(zo_runtime *rt, void **arr, void **raw, uint32_t *cap, uint32_t need, size_t esz) {
    if (need <= *cap) return ZO_OK;
    uint64_t nc = *cap ? *cap : 8;
    while (nc < need) nc *= 2;
    if (nc > UINT32_MAX) nc = need;
    if (esz && nc > (SIZE_MAX - 63) / esz) return ZO_ERR_NOMEM;
    size_t old_bytes = (size_t)*cap * esz;
    char *r, *a;
    if (!rt->al.alloc) {
        /* realloc (see zo__reserve_sz); the block may come back at another
         * offset from a line boundary, then the contents move to the new
         * aligned start */
        size_t off = *raw ? (size_t)((char *)*arr - (char *)*raw) : 0;
        r = realloc(*raw, (size_t)nc * esz + 63);
        if (!r) return ZO_ERR_NOMEM;
        a = (char *)(((uintptr_t)r + 63) & ~(uintptr_t)63);
        if (old_bytes && (size_t)(a - r) != off) memmove(a, r + off, old_bytes);
    } else {
        r = zo__alloc(rt, (size_t)nc * esz + 63);
        if (!r) return ZO_ERR_NOMEM;
        a = (char *)(((uintptr_t)r + 63) & ~(uintptr_t)63);
        if (*arr && old_bytes) memcpy(a, *arr, old_bytes);
        zo__free(rt, *raw);
    }
    memset(a + old_bytes, 0, (size_t)(nc - *cap) * esz);
    *raw = r;
    *arr = a;
    *cap = (uint32_t)nc;
    return ZO_OK;
}

char *zo__strdup(zo_runtime *rt, const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = zo__alloc(rt, n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

void zo__emit_to(zo_runtime *rt, uint64_t seq, zo_event_kind k, zo_module_id m, zo_param_id p, zo_graph g,
                 int64_t before, int64_t after, int valid, const char *detail) {
    zo_event ev;
    zo__event_head(rt, &ev, seq, k, m, p);
    ev.graph = g;
    ev.counter_before = before;
    ev.counter_after = after;
    ev.counter_valid = valid;
    ev.from = ev.to = ZO_PARAM_NOT_AVAILABLE;
    ev.status = ZO_OK;
    ev.detail = detail;
    rt->cfg.on_event(rt->cfg.event_user, &ev);
}

/* The message of the last failed call of this thread that had no runtime
 * to hold it (zo_last_error(NULL)). */
static _Thread_local char zo__tls_err[512];

static void zo__vformat(char *buf, size_t cap, zo_status st, const char *fmt, va_list ap) {
    int n = snprintf(buf, cap, "%s: ", zo_strerror(st));
    if (n < 0) n = 0;
    if ((size_t)n < cap) vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
}

zo_status zo__fail_tls(zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    zo__vformat(zo__tls_err, sizeof zo__tls_err, st, fmt, ap);
    va_end(ap);
    return st;
}

const char *zo__tls_error(void) { return zo__tls_err; }

zo_status zo__fail_const(const zo_runtime *rt, zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    /* rt is never a const object (zo_runtime_create allocates it); the
     * message buffer is the only thing written */
    zo__vformat(((zo_runtime *)rt)->err, sizeof rt->err, st, fmt, ap);
    va_end(ap);
    return st;
}

zo_status zo__fail(zo_runtime *rt, zo_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(rt->err, sizeof rt->err, "%s: ", zo_strerror(st));
    if (n < 0) n = 0;
    if ((size_t)n < sizeof rt->err) vsnprintf(rt->err + n, sizeof rt->err - (size_t)n, fmt, ap);
    va_end(ap);
    uint64_t seq = rt->ev_seq++;
    if (rt->cfg.on_event) {
        zo_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = ZO_EV_ERROR;
        ev.seq = seq;
        ev.step = rt->st.steps;
        ev.module = ZO_NO_MODULE;
        ev.param = ZO_NO_PARAM;
        ev.status = st;
        ev.detail = rt->err;
        rt->cfg.on_event(rt->cfg.event_user, &ev);
    }
    return st;
}

const char *zo_strerror(zo_status s) {
    switch (s) {
    case ZO_OK: return "ZO_OK: success";
#define ZO__STRERROR(name, value, text)                                                                                \
    case ZO_ERR_##name: return "ZO_ERR_" #name ": " text;
        ZO_STATUS_MAP(ZO__STRERROR)
#undef ZO__STRERROR
    default: return "ZO_ERR_UNKNOWN: unknown status code";
    }
}

int zo_transition_legal(zo_param_status from, zo_param_status to) { return zo__transition_legal(from, to); }

/* The one table of legal hook orders (policy.h: zo__hook).  needs: the
 * runtime phase the hook runs in; from: the call phases it may find its
 * call in (bit ZO__CALL_*), with the reason when it finds another. */
#define ZO__PH(x) (1u << ZO__CALL_##x)
const zo__hook_rule zo__hook_order[ZO__HOOK_N] = {
    [ZO__HOOK_PRE_FORWARD] = {"zo_pre_forward", ZO__NEED_FORWARD, ZO__PH(NONE), NULL},
    [ZO__HOOK_TRACK_INPUTS] = {"zo_track_inputs", 0, ZO__PH(OPEN), "hook D already ran for this call of %u"},
    [ZO__HOOK_POST_FORWARD] = {"zo_post_forward", 0, ZO__PH(OPEN) | ZO__PH(INPUTS), "module %u's call already ended"},
    [ZO__HOOK_TRACK_OUTPUTS] = {"zo_track_outputs", 0, ZO__PH(ENDED), "module %u has no call that just ended"},
    [ZO__HOOK_OUTPUT_GRAD] = {"zo_output_grad", ZO__NEED_BACKWARD, ZO__PH(NONE), NULL},
    [ZO__HOOK_INPUT_GRAD] = {"zo_input_grad", ZO__NEED_BACKWARD, ZO__PH(NONE), NULL},
    [ZO__HOOK_PARAM_GRAD_READY] = {"zo_param_grad_ready", ZO__NEED_BACKWARD, ZO__PH(NONE), NULL},
    [ZO__HOOK_FORWARD_ABORT] = {"zo_forward_abort", ZO__NEED_FORWARD, ZO__PH(NONE), NULL},
};
#undef ZO__PH

zo_status zo__hook_fail(zo_runtime *rt, zo__hook h, zo__call_phase ph, zo_module_id m) {
    if ((unsigned)h >= ZO__HOOK_N || (unsigned)ph >= ZO__CALL_PHASE_N)
        return zo__fail(rt, ZO_ERR_STATE, "hook order: hook %d, call phase %d out of range", (int)h, (int)ph);
    const char *name = zo__hook_order[h].name;
    if ((zo__hook_order[h].needs & ZO__NEED_FORWARD) && rt->n_ctx == 0)
        return zo__fail(rt, ZO_ERR_PROTOCOL, "%s: no forward pass begun", name);
    if ((zo__hook_order[h].needs & ZO__NEED_BACKWARD) && zo__n_bwd(rt) == 0)
        return zo__fail(rt, ZO_ERR_PROTOCOL, "%s: no backward running", name);
    if (!(zo__hook_order[h].from & (1u << ph))) {
        char why[160];
        snprintf(why, sizeof why, zo__hook_order[h].why ? zo__hook_order[h].why : "module %u: call phase not legal",
                 (unsigned)m);
        return zo__fail(rt, ZO_ERR_PROTOCOL, "%s: %s", name, why);
    }
    return ZO_OK;
}

const char *zo_param_status_name(zo_param_status s) {
    switch (s) {
    case ZO_PARAM_NOT_AVAILABLE: return "NOT_AVAILABLE";
    case ZO_PARAM_INFLIGHT: return "INFLIGHT";
    case ZO_PARAM_AVAILABLE: return "AVAILABLE";
    default: return "INVALID";
    }
}

/* indexed by value (a value >= COUNT does not compile; the unit tests
 * check that every value below COUNT has a name) */
#define ZO__NAME_AT(name, value, text) [value] = text,
static const char *const k_policy_names[ZO_GRADS_POLICY_COUNT] = {ZO_GRADS_POLICY_MAP(ZO__NAME_AT)};
static const char *const k_ds_profile_names[ZO_DS_PROFILE_COUNT] = {ZO_DS_PROFILE_MAP(ZO__NAME_AT)};
#undef ZO__NAME_AT

const char *zo_ds_profile_name(zo_ds_profile p) {
    if ((unsigned)p >= ZO_DS_PROFILE_COUNT) return NULL;
    return k_ds_profile_names[p];
}

const char *zo_policy_name(zo_grads_policy p) {
    if ((unsigned)p >= ZO_GRADS_POLICY_COUNT) return NULL;
    return k_policy_names[p];
}

zo_status zo_policy_from_name(const char *name, zo_grads_policy *out) {
    if (!name || !out)
        return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_policy_from_name: %s is NULL", name ? "out" : "name");
    for (unsigned i = 0; i < ZO_GRADS_POLICY_COUNT; i++)
        if (strcmp(name, k_policy_names[i]) == 0) {
            *out = (zo_grads_policy)i;
            return ZO_OK;
        }
#define ZO__LISTED(name, value, text) text ", "
    static const char k_all[] = ZO_GRADS_POLICY_MAP(ZO__LISTED);
#undef ZO__LISTED
    return zo__fail_tls(ZO_ERR_INVALID_ARG, "zo_policy_from_name: unknown policy '%.64s' (%.*s)", name,
                        (int)(sizeof k_all - 3), k_all);
}

#define ZO__EVENT_NAME(name) #name,
static const char *const k_event_names[ZO_EV_KIND_COUNT] = {ZO_EVENT_KIND_MAP(ZO__EVENT_NAME)};
#undef ZO__EVENT_NAME

const char *zo_event_kind_name(zo_event_kind k) {
    if ((unsigned)k >= ZO_EV_KIND_COUNT) return "UNKNOWN";
    return k_event_names[k];
}

/* ------------------------------------------------------------------ */
/* collective fingerprint (zo_config.verify_collectives)                */
/* ------------------------------------------------------------------ */

/* Layout, little-endian, 64 bytes:
 *   0 magic "ZOFP" (u32)   4 version (u16)   6 kind (u8)   7 ids shown (u8)
 *   8 sequence number (u64)   16 total numel (u64)   24 hash (u64)
 *  32 parameter count (u32)   36 first 7 parameter ids (u32 each)
 * Built without allocation; every rank encodes the same bytes for the same
 * collective, so the comparison is a memcmp. */
#define FP_MAGIC   0x50464F5Au /* "ZOFP" read as little-endian bytes */
#define FP_VERSION 1u

static uint64_t fp_mix(uint64_t h, uint64_t v) {
    /* splitmix64 finaliser over h ^ v: cheap, every input bit matters */
    uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void zo__fp_init(zo_fp_acc *a) {
    memset(a, 0, sizeof *a);
    a->hash = 0x5A4F46494E474552ull;
}

void zo__fp_add(zo_fp_acc *a, zo_param_id p, uint64_t numel, uint32_t elem_size) {
    if (a->n < ZO_FP_MAX_IDS) a->ids[a->n] = p;
    if (a->n < UINT32_MAX) a->n++;
    a->total_numel += numel;
    a->hash = fp_mix(fp_mix(fp_mix(a->hash, p), numel), elem_size);
}

static void put_le(uint8_t *o, uint64_t v, unsigned bytes) {
    for (unsigned i = 0; i < bytes; i++) o[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *o, unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++) v |= (uint64_t)o[i] << (8 * i);
    return v;
}

void zo__fp_encode(const zo_fp_acc *a, uint64_t seq, unsigned kind, uint8_t out[ZO_FP_BYTES]) {
    memset(out, 0, ZO_FP_BYTES);
    unsigned shown = a->n < ZO_FP_MAX_IDS ? a->n : ZO_FP_MAX_IDS;
    put_le(out + 0, FP_MAGIC, 4);
    put_le(out + 4, FP_VERSION, 2);
    out[6] = (uint8_t)kind;
    out[7] = (uint8_t)shown;
    put_le(out + 8, seq, 8);
    put_le(out + 16, a->total_numel, 8);
    put_le(out + 24, a->hash, 8);
    put_le(out + 32, a->n, 4);
    for (unsigned i = 0; i < shown; i++) put_le(out + 36 + 4 * i, a->ids[i], 4);
}

int zo__fp_valid(const uint8_t fp[ZO_FP_BYTES]) {
    return get_le(fp, 4) == FP_MAGIC && get_le(fp + 4, 2) == FP_VERSION &&
           (fp[6] == ZO_FP_KIND_GATHER || fp[6] == ZO_FP_KIND_STEP) && fp[7] <= ZO_FP_MAX_IDS;
}

uint64_t zo__fp_seq(const uint8_t fp[ZO_FP_BYTES]) { return zo__fp_valid(fp) ? get_le(fp + 8, 8) : 0; }

uint64_t zo__fp_hash(const uint8_t fp[ZO_FP_BYTES]) { return get_le(fp + 24, 8); }

/* appends with snprintf semantics; *pos never passes len - 1 */
static void app(char *buf, size_t len, size_t *pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void app(char *buf, size_t len, size_t *pos, const char *fmt, ...) {
    if (*pos + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    *pos += (size_t)n;
    if (*pos >= len) *pos = len - 1;
}

char *zo__fp_describe(const uint8_t fp[ZO_FP_BYTES], uint64_t ref_seq, char *buf, size_t len) {
    size_t pos = 0;
    if (!buf || len == 0) return buf;
    buf[0] = '\0';
    if (!zo__fp_valid(fp)) {
        app(buf, len, &pos, "an unrecognised fingerprint (first bytes %02x%02x%02x%02x%02x%02x%02x%02x)", fp[0], fp[1],
            fp[2], fp[3], fp[4], fp[5], fp[6], fp[7]);
        return buf;
    }
    uint64_t seq = get_le(fp + 8, 8);
    uint64_t n = get_le(fp + 32, 4);
    unsigned shown = fp[7];
    if (seq != ref_seq) app(buf, len, &pos, "collective %llu: ", (unsigned long long)seq);
    if (fp[6] == ZO_FP_KIND_STEP)
        app(buf, len, &pos, "step over %llu trainable param%s [", (unsigned long long)n, n == 1 ? "" : "s");
    else
        app(buf, len, &pos, "all-gather of %llu param%s [", (unsigned long long)n, n == 1 ? "" : "s");
    for (unsigned i = 0; i < shown; i++)
        app(buf, len, &pos, "%s%llu", i ? ", " : "", (unsigned long long)get_le(fp + 36 + 4 * i, 4));
    if (n > shown) app(buf, len, &pos, "%s... +%llu more", shown ? ", " : "", (unsigned long long)(n - shown));
    uint64_t total = get_le(fp + 16, 8);
    app(buf, len, &pos, "] (%llu element%s)", (unsigned long long)total, total == 1 ? "" : "s");
    return buf;
}
