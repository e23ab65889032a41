/*
 * scn.c - .scn text scenario format: parser and canonical printer
 * (docs/scenario-format.md).
 *
 * The parser works line by line: each line is cut into tokens (words and
 * the punctuation ( ) , = ->), its indentation is matched against a stack
 * of open statements (module / step / pass / call), and the statement is
 * applied to the scenario being built.  Everything is bounded: at most
 * MAX_TOK tokens per line, fixed-size tables for the model's limits, one
 * malloc'd working struct.  Structural rules are checked where the text
 * can name the offending token (with scenario.h's rule functions, e.g.
 * zs_callee_ok, zs_step_multi_pass); the remaining validity rules
 * (unwinding, checkpoint nesting, ...) are checked by
 * zs_scenario_validate(), whose "step S pass P call C: ..." location is
 * mapped back to the line.
 */
#include "scn.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

/* verdicts are the invariants' names (check.h's ZS_INV_MAP), "ok" for none */
const char *zs_scn_verdict_name(int v) {
    if (v == ZS_INV_NONE) return "ok";
    if (v > 0 && v < ZS_INV_COUNT) return zs_inv_name(v);
    if (v == ZS_SCN_SETUP) return "setup";
    return "?";
}

int zs_scn_verdict_from_name(const char *name) {
    if (!name) return -1;
    if (!strcmp(name, "ok")) return ZS_INV_NONE;
    for (int i = 1; i < ZS_INV_COUNT; i++)
        if (!strcmp(name, zs_inv_name(i))) return i;
    if (!strcmp(name, "setup")) return ZS_SCN_SETUP;
    return -1;
}

static int is_alpha_(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_name_char(int c) { return is_alpha_(c) || is_digit(c) || c == '.' || c == '-'; }

static int name_valid_n(const char *p, size_t n) {
    if (n == 0 || n >= ZS_NAME_LEN || !is_alpha_((unsigned char)p[0])) return 0;
    if (n == 1 && p[0] == '_') return 0;
    for (size_t i = 1; i < n; i++)
        if (!is_name_char((unsigned char)p[i])) return 0;
    return 1;
}

int zs_scn_name_valid(const char *name) {
    if (!name) return 0;
    size_t n = 0;
    while (n < ZS_NAME_LEN && name[n]) n++;
    if (n >= ZS_NAME_LEN) return 0;
    return name_valid_n(name, n);
}

/* ------------------------------------------------------------------ */
/* Parser state                                                         */
/* ------------------------------------------------------------------ */

enum { T_WORD, T_LP, T_RP, T_COMMA, T_EQ, T_ARROW, T_PLUS };
#define MAX_TOK 320

typedef struct tok {
    int kind;
    int col;       /* 1-based */
    const char *p; /* word text (not NUL-terminated) */
    int len;
} tok;

enum { K_MODULE, K_STEP, K_PASS, K_CALL };

typedef struct frame {
    int indent;
    int child_indent; /* -1 until the first child */
    int kind;
    int idx;
} frame;

/* a use reference waiting for its call's children (out<K>.<J>) */
typedef struct uref {
    uint32_t k; /* child number */
    uint8_t j;  /* output index */
    int col;
} uref;

typedef struct callx {
    int line;
    int depth;
    uint32_t nchild;
    zs_id first_child, last_child, next_sib; /* the call's child calls, linked (ZS_NONE ends) */
    uint8_t n_pending;
    uint8_t pending_slot[ZS_MAX_USE + ZS_MAX_OUT]; /* use[] slot, or ZS_MAX_USE + j: alias[j] */
    uref pending[ZS_MAX_USE + ZS_MAX_OUT];
} callx;

enum { PH_START, PH_SCN, PH_EXPECT, PH_CONFIG, PH_MODULE, PH_PARAM, PH_USE, PH_STEP, PH_RANK, PH_ORDER };

/* The names declared so far, one table for modules and one for parameters,
 * so that a reference costs O(1): open addressing on the name's hash, each
 * slot holding the first two items declared with that name (a reference
 * to a name declared twice is an error citing both).  Unnamed items are
 * not entered (no reference can name them). */
typedef struct name_slot {
    uint32_t hash;
    uint32_t first;  /* item id + 1; 0 = empty slot */
    uint32_t second; /* id + 1 of the second item with this name; 0 = none */
} name_slot;

typedef struct name_index {
    name_slot *slot; /* [mask + 1], NULL until the first name */
    uint32_t mask;
    uint32_t used;
    int broken; /* out of memory once: references search the names linearly */
} name_index;

typedef struct pstate {
    const char *text;
    size_t len;
    zs_scenario *s;
    zs_scn_expect *exp;
    zs_scn_error *err;
    int failed;

    int line;
    int indent;
    tok t[MAX_TOK];
    int nt;

    int phase;
    int have_root;
    unsigned cfg_seen;
    int cfg_line;

    frame *st; /* [cap_st] indentation frames */
    uint32_t cap_st;
    int sp;

    /* current step / pass */
    int cur_step;      /* -1 none */
    int cur_pass;      /* -1 none */
    int step_implicit; /* single-pass step whose calls sit directly under it */
    int pass_has_root;
    int step_loss_col;
    uint8_t step_loss; /* loss parsed on the step line, for the implicit pass */
    int step_has_loss;
    int pass_loss_col;
    callx *cx; /* [cap_cx] the current pass's calls */
    uint32_t cap_cx;

    /* line numbers for mapping zs_scenario_validate messages */
    int *mod_line; /* [cap_mod_line] */
    int *par_line;
    int *use_line;
    uint32_t cap_mod_line, cap_par_line, cap_use_line;
    int step_line[ZS_MAX_STEPS];
    int pass_line[ZS_MAX_STEPS][ZS_MAX_PASSES];
    int *call_line[ZS_MAX_STEPS][ZS_MAX_PASSES];
    uint32_t cap_call_line[ZS_MAX_STEPS][ZS_MAX_PASSES];
    int edit_line[ZS_MAX_RANK_EDITS];

    name_index mod_names, par_names;
} pstate;

/* Grows *arr (sz-byte elements, *cap of them, new ones zeroed) to hold
 * index `need - 1`: 0, or -1 if out of memory. */
static int ps_grow(void **arr, uint32_t *cap, uint32_t need, size_t sz) {
    if (need <= *cap) return 0;
    uint64_t nc = *cap ? (uint64_t)*cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *q = realloc(*arr, (size_t)nc * sz);
    if (!q) return -1;
    memset((char *)q + (size_t)*cap * sz, 0, (size_t)(nc - *cap) * sz);
    *arr = q;
    *cap = (uint32_t)nc;
    return 0;
}
#define PS_GROW(arr, cap, need) ps_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

static void ps_free(pstate *ps) {
    free(ps->mod_names.slot);
    free(ps->par_names.slot);
    free(ps->st);
    free(ps->cx);
    free(ps->mod_line);
    free(ps->par_line);
    free(ps->use_line);
    for (unsigned i = 0; i < ZS_MAX_STEPS; i++)
        for (unsigned k = 0; k < ZS_MAX_PASSES; k++) free(ps->call_line[i][k]);
    free(ps);
}

static void fail_at(pstate *ps, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void fail_at(pstate *ps, int line, int col, const char *fmt, ...) {
    if (ps->failed) return;
    ps->failed = 1;
    if (!ps->err) return;
    ps->err->line = line;
    ps->err->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err->msg, sizeof ps->err->msg, fmt, ap);
    va_end(ap);
}

#define FAIL(col, ...) fail_at(ps, ps->line, (col), __VA_ARGS__)

/* token text for messages, at most 32 chars */
#define TOKF     "%.*s"
#define TOKA(tk) ((tk)->len > 32 ? 32 : (tk)->len), ((tk)->p)

static const char *tok_desc(const tok *tk) {
    switch (tk->kind) {
    case T_LP: return "'('";
    case T_RP: return "')'";
    case T_COMMA: return "','";
    case T_EQ: return "'='";
    case T_ARROW: return "'->'";
    case T_PLUS: return "'+'";
    default: return NULL;
    }
}

/* "found 'x'" / "found end of line" into buf */
static const char *found(pstate *ps, int i, char *buf, size_t n) {
    if (i >= ps->nt) {
        snprintf(buf, n, "end of line");
        return buf;
    }
    const tok *tk = &ps->t[i];
    const char *d = tok_desc(tk);
    if (d)
        snprintf(buf, n, "%s", d);
    else
        snprintf(buf, n, "'" TOKF "'", TOKA(tk));
    return buf;
}

static int col_of(pstate *ps, int i) {
    if (i < ps->nt) return ps->t[i].col;
    if (ps->nt <= 0 || ps->nt > MAX_TOK) return ps->indent + 1;
    const tok *tk = &ps->t[ps->nt - 1];
    return tk->col + (tk->kind == T_WORD ? tk->len : tk->kind == T_ARROW ? 2 : 1);
}

static void expected(pstate *ps, int i, const char *what) {
    char b[48];
    FAIL(col_of(ps, i), "expected %s, found %s", what, found(ps, i, b, sizeof b));
}

static int teq(const tok *tk, const char *s) {
    size_t n = strlen(s);
    return tk->kind == T_WORD && (size_t)tk->len == n && memcmp(tk->p, s, n) == 0;
}

static int is_word(pstate *ps, int i, const char *s) { return i < ps->nt && teq(&ps->t[i], s); }
static int is_kind(pstate *ps, int i, int k) { return i < ps->nt && ps->t[i].kind == k; }

/* ------------------------------------------------------------------ */
/* Tokenizer                                                            */
/* ------------------------------------------------------------------ */

/* Tokenizes line[0..n) (no line end).  Sets ps->indent and ps->nt.
 * Returns 0, or -1 on error. */
static int tokenize(pstate *ps, const char *line, size_t n) {
    size_t i = 0;
    ps->nt = 0;
    while (i < n && line[i] == ' ') i++;
    if (i < n && line[i] == '\t') {
        /* a tab in the indentation; fine if the rest is blank/comment */
        size_t k = i;
        while (k < n && (line[k] == ' ' || line[k] == '\t')) k++;
        if (k < n && line[k] != '#' && line[k] != '\r') {
            FAIL((int)i + 1, "tab in indentation (indent with spaces)");
            return -1;
        }
    }
    ps->indent = (int)i;
    while (i < n) {
        unsigned char c = (unsigned char)line[i];
        if (c == ' ' || c == '\t') {
            i++;
            continue;
        }
        if (c == '#') break;
        if (c == '\r' && i + 1 == n) break;
        if (ps->nt >= MAX_TOK) {
            FAIL((int)i + 1, "too many tokens on one line (at most %d)", MAX_TOK);
            return -1;
        }
        tok *tk = &ps->t[ps->nt];
        tk->col = (int)i + 1;
        tk->p = line + i;
        tk->len = 1;
        if (c == '(')
            tk->kind = T_LP;
        else if (c == ')')
            tk->kind = T_RP;
        else if (c == ',')
            tk->kind = T_COMMA;
        else if (c == '=')
            tk->kind = T_EQ;
        else if (c == '+')
            tk->kind = T_PLUS;
        else if (c == '-' && i + 1 < n && line[i + 1] == '>') {
            tk->kind = T_ARROW;
            tk->len = 2;
        } else if (is_alpha_(c) || is_digit(c) || c == '@') {
            size_t k = i + 1;
            while (k < n) {
                unsigned char d = (unsigned char)line[k];
                if (d == '-' && k + 1 < n && line[k + 1] == '>') break;
                if (!(is_name_char(d) || d == '@' || d == ':')) break;
                k++;
            }
            tk->kind = T_WORD;
            tk->len = (int)(k - i);
        } else {
            if (c >= 0x20 && c < 0x7f)
                FAIL((int)i + 1, "unexpected character '%c'", c);
            else
                FAIL((int)i + 1, "unexpected byte 0x%02x", c);
            return -1;
        }
        i += (size_t)tk->len;
        ps->nt++;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

/* decimal / 0x hex / MeE; allow_inf: "inf" -> ZS_INF.  0 ok, -1 bad. */
static int parse_u64_text(const char *p, int n, int allow_inf, uint64_t *out) {
    if (n <= 0) return -1;
    if (allow_inf && n == 3 && !memcmp(p, "inf", 3)) {
        *out = ZS_INF;
        return 0;
    }
    uint64_t v = 0;
    int i = 0;
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        for (i = 2; i < n; i++) {
            int c = (unsigned char)p[i], d;
            if (is_digit(c))
                d = c - '0';
            else if (c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else
                return -1;
            if (v > (UINT64_MAX >> 4)) return -1;
            v = (v << 4) | (uint64_t)d;
        }
        *out = v;
        return 0;
    }
    for (; i < n && is_digit((unsigned char)p[i]); i++) {
        uint64_t d = (uint64_t)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (i == 0) return -1;
    if (i < n) {
        if (p[i] != 'e' && p[i] != 'E') return -1;
        i++;
        if (i >= n) return -1;
        unsigned e = 0;
        for (; i < n; i++) {
            if (!is_digit((unsigned char)p[i])) return -1;
            e = e * 10 + (unsigned)(p[i] - '0');
            if (e > 30) return -1;
        }
        for (unsigned k = 0; k < e; k++) {
            if (v > UINT64_MAX / 10) return -1;
            v *= 10;
        }
    }
    *out = v;
    return 0;
}

/* Parses token i as a number in [lo, hi]; `what` names it for messages. */
static int num_tok(pstate *ps, int i, uint64_t lo, uint64_t hi, int allow_inf, const char *what, uint64_t *out) {
    if (!is_kind(ps, i, T_WORD)) {
        char b[64];
        snprintf(b, sizeof b, "a number (%s)", what);
        expected(ps, i, b);
        return -1;
    }
    const tok *tk = &ps->t[i];
    uint64_t v;
    if (parse_u64_text(tk->p, tk->len, allow_inf, &v) != 0) {
        FAIL(tk->col, "expected a number for %s (decimal, 0x hex, 1e5%s), found '" TOKF "'", what,
             allow_inf ? " or inf" : "", TOKA(tk));
        return -1;
    }
    if (v < lo || v > hi) {
        if (hi == ZS_INF)
            FAIL(tk->col, "%s " TOKF " out of range (at least %llu)", what, TOKA(tk), (unsigned long long)lo);
        else
            FAIL(tk->col, "%s " TOKF " out of range [%llu, %llu]", what, TOKA(tk), (unsigned long long)lo,
                 (unsigned long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* "KEY =" at token i: returns index of the value token, or -1. */
static int key_eq(pstate *ps, int i) {
    if (!is_kind(ps, i + 1, T_EQ)) {
        expected(ps, i + 1, "'='");
        return -1;
    }
    return i + 2;
}

static uint32_t name_hash(const char *p, size_t n) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

/* Enters item `id` (its name at names + id * stride) after the items
 * before it; a failed allocation leaves the index broken (see named_ref). */
static void name_index_add(name_index *x, const char *names, size_t stride, unsigned id) {
    const char *nm = names + (size_t)id * stride;
    size_t len = strnlen(nm, ZS_NAME_LEN);
    if (x->broken || !len) return;
    if (2 * (x->used + 1) > (x->slot ? x->mask + 1 : 0)) {
        uint32_t cap = x->slot ? 2 * (x->mask + 1) : 64;
        name_slot *t = calloc(cap, sizeof *t);
        if (!t) {
            free(x->slot);
            x->slot = NULL;
            x->broken = 1;
            return;
        }
        for (uint32_t k = 0; x->slot && k <= x->mask; k++) {
            if (!x->slot[k].first) continue;
            uint32_t j = x->slot[k].hash & (cap - 1);
            while (t[j].first) j = (j + 1) & (cap - 1);
            t[j] = x->slot[k];
        }
        free(x->slot);
        x->slot = t;
        x->mask = cap - 1;
    }
    uint32_t h = name_hash(nm, len);
    for (uint32_t j = h & x->mask;; j = (j + 1) & x->mask) {
        name_slot *sl = &x->slot[j];
        if (!sl->first) {
            sl->hash = h;
            sl->first = id + 1;
            x->used++;
            return;
        }
        if (sl->hash == h && !strncmp(names + (size_t)(sl->first - 1) * stride, nm, ZS_NAME_LEN)) {
            if (!sl->second) sl->second = id + 1;
            return;
        }
    }
}

/* A reference to a declared module or parameter: "@ID" or a unique name.
 * `names` points at the first declared item's name, `stride` bytes apart
 * (zs_module / zs_param); `n` items declared so far. */
typedef struct ref_kind {
    const char *noun;         /* "module", "parameter" */
    const char *nouns;        /* "modules", "parameters" */
    const char *count_note;   /* after "(N nouns declared" */
    const char *unknown_hint; /* after "unknown noun 'x'" */
} ref_kind;

static int named_ref(pstate *ps, int i, const ref_kind *k, const name_index *x, const char *names, size_t stride,
                     unsigned n, unsigned *out) {
    if (!is_kind(ps, i, T_WORD)) {
        char what[48];
        snprintf(what, sizeof what, "a %s (name or @ID)", k->noun);
        expected(ps, i, what);
        return -1;
    }
    const tok *tk = &ps->t[i];
    if (tk->p[0] == '@') {
        uint64_t v;
        if (tk->len < 2 || !is_digit((unsigned char)tk->p[1]) || parse_u64_text(tk->p + 1, tk->len - 1, 0, &v) != 0) {
            FAIL(tk->col, "bad %s id '" TOKF "' (expected @ and a decimal id)", k->noun, TOKA(tk));
            return -1;
        }
        if (v >= n) {
            FAIL(tk->col, "unknown %s @%llu (%u %s declared%s)", k->noun, (unsigned long long)v, n, k->nouns,
                 k->count_note);
            return -1;
        }
        *out = (unsigned)v;
        return 0;
    }
    if (!name_valid_n(tk->p, (size_t)tk->len)) {
        FAIL(tk->col, "expected a %s name or @ID, found '" TOKF "'", k->noun, TOKA(tk));
        return -1;
    }
    int hit = -1, hit2 = -1;
    if (!x->broken) {
        uint32_t h = name_hash(tk->p, (size_t)tk->len);
        for (uint32_t j = h & x->mask; x->slot && x->slot[j].first; j = (j + 1) & x->mask) {
            const name_slot *sl = &x->slot[j];
            const char *nm = names + (size_t)(sl->first - 1) * stride;
            if (sl->hash == h && strlen(nm) == (size_t)tk->len && !memcmp(nm, tk->p, (size_t)tk->len)) {
                hit = (int)sl->first - 1;
                hit2 = (int)sl->second - 1;
                break;
            }
        }
    } else {
        for (unsigned j = 0; j < n; j++) {
            const char *nm = names + (size_t)j * stride;
            if (strlen(nm) == (size_t)tk->len && !memcmp(nm, tk->p, (size_t)tk->len)) {
                if (hit < 0)
                    hit = (int)j;
                else if (hit2 < 0)
                    hit2 = (int)j;
            }
        }
    }
    if (hit < 0) {
        FAIL(tk->col, "unknown %s '" TOKF "'%s", k->noun, TOKA(tk), k->unknown_hint);
        return -1;
    }
    if (hit2 >= 0) {
        FAIL(tk->col, "%s name '" TOKF "' is not unique (@%d, @%d, ...): use @ID", k->noun, TOKA(tk), hit, hit2);
        return -1;
    }
    *out = (unsigned)hit;
    return 0;
}

static int module_ref(pstate *ps, int i, unsigned *out) {
    static const ref_kind k = {"module", "modules", " so far", " (declare it with a module line first)"};
    return named_ref(ps, i, &k, &ps->mod_names, ps->s->mod[0].name, sizeof ps->s->mod[0], ps->s->n_modules, out);
}

static int param_ref(pstate *ps, int i, unsigned *out) {
    static const ref_kind k = {"parameter", "parameters", "", ""};
    return named_ref(ps, i, &k, &ps->par_names, ps->s->par[0].name, sizeof ps->s->par[0], ps->s->n_params, out);
}

/* name declaration: NAME or "_" */
static int decl_name(pstate *ps, int i, char *dst, const char *what) {
    if (!is_kind(ps, i, T_WORD)) {
        char b[64];
        snprintf(b, sizeof b, "a %s name (or _ for unnamed)", what);
        expected(ps, i, b);
        return -1;
    }
    const tok *tk = &ps->t[i];
    memset(dst, 0, ZS_NAME_LEN);
    if (tk->len == 1 && tk->p[0] == '_') return 0;
    if (!name_valid_n(tk->p, (size_t)tk->len)) {
        if (tk->len >= ZS_NAME_LEN)
            FAIL(tk->col, "%s name '" TOKF "...' too long (at most %d bytes)", what, TOKA(tk), ZS_NAME_LEN - 1);
        else
            FAIL(tk->col, "bad %s name '" TOKF "' (letters, digits, _ . -; starting with a letter or _)", what,
                 TOKA(tk));
        return -1;
    }
    memcpy(dst, tk->p, (size_t)tk->len);
    return 0;
}

static int end_of_line(pstate *ps, int i) {
    if (i < ps->nt) {
        expected(ps, i, "end of line");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Statements                                                           */
/* ------------------------------------------------------------------ */

static int policy_tok(pstate *ps, int i, unsigned *out) {
    if (is_kind(ps, i, T_WORD)) {
        const tok *tk = &ps->t[i];
        for (unsigned p = 0; p < 4; p++)
            if (teq(tk, zs_policy_name(p))) {
                *out = p;
                return 0;
            }
    }
    expected(ps, i, "a policy (per-call, reset-on-forward, lazy-init, init-at-register)");
    return -1;
}

static void st_expect(pstate *ps) {
    int i = 1;
    zs_scn_expect ex;
    memset(&ex, 0, sizeof ex);
    if (ps->nt < 2) {
        expected(ps, 1, "POLICY=VERDICT");
        return;
    }
    while (i < ps->nt && !ps->failed) {
        unsigned p;
        int pc = col_of(ps, i);
        if (is_word(ps, i, "torch") || is_word(ps, i, "deepspeed")) {
            int is_t = is_word(ps, i, "torch");
            if (is_t ? ex.have_torch : ex.have_ds) {
                FAIL(pc, "%s profile given twice", is_t ? "torch" : "deepspeed");
                return;
            }
            int v = key_eq(ps, i);
            if (v < 0) return;
            int found = -1;
            unsigned n = is_t ? ZS_TORCH_PROFILES : ZS_DS_PROFILES;
            for (unsigned q = 0; q < n; q++)
                if (is_word(ps, v, is_t ? zs_torch_profile_name(q) : zs_ds_profile_name(q))) found = (int)q;
            if (found < 0) {
                expected(ps, v,
                         is_t ? "a torch profile (2.x, 2.x-no-early-stop, 1.13)"
                              : "a deepspeed profile (0.19, 0.19-hooks, 0.15)");
                return;
            }
            if (is_t) {
                ex.have_torch = 1;
                ex.torch = found;
            } else {
                ex.have_ds = 1;
                ex.ds = found;
            }
            i = v + 1;
            continue;
        }
        if (policy_tok(ps, i, &p)) return;
        if (ex.have[p]) {
            FAIL(pc, "policy %s listed twice", zs_policy_name(p));
            return;
        }
        int v = key_eq(ps, i);
        if (v < 0) return;
        int vd = -1;
        if (is_kind(ps, v, T_WORD)) {
            char b[16];
            const tok *tk = &ps->t[v];
            if (tk->len < (int)sizeof b) {
                memcpy(b, tk->p, (size_t)tk->len);
                b[tk->len] = 0;
                vd = zs_scn_verdict_from_name(b);
            }
        }
        if (vd < 0) {
            expected(ps, v, "a verdict (ok, I1..I8, ERR, setup)");
            return;
        }
        ex.have[p] = 1;
        ex.verdict[p] = vd;
        i = v + 1;
    }
    if (ps->failed) return;
    /* profiles alone state nothing (and would not survive a print/parse
     * round trip: the printer writes an expect line only for its verdicts) */
    int any = 0;
    for (unsigned p = 0; p < 4; p++) any |= ex.have[p];
    if (!any) {
        expected(ps, ps->nt, "POLICY=VERDICT (an expect line states at least one verdict)");
        return;
    }
    if (ps->exp) *ps->exp = ex;
}

enum {
    CK_POLICY,
    CK_WORLD,
    CK_RANK,
    CK_ORDER,
    CK_DEFERRED,
    CK_PROGRESS,
    CK_TH0,
    CK_RANKS = CK_TH0 + ZS_TH_COUNT,
    CK_VERIFY,
    CK_TORCH,
    CK_DS
};
static const char *const cfg_keys[] = {"policy",
                                       "world_size",
                                       "rank",
                                       "order",
                                       "deferred",
                                       "progress_every",
                                       "param_persistence_threshold",
                                       "model_persistence_threshold",
                                       "prefetch_bucket_size",
                                       "max_live_parameters",
                                       "max_reuse_distance",
                                       "ranks",
                                       "verify_collectives",
                                       "torch",
                                       "deepspeed"};
#define N_CFG_KEYS 15

static void st_config(pstate *ps) {
    zs_config *c = &ps->s->cfg;
    if (!ps->cfg_line) ps->cfg_line = ps->line;
    if (ps->nt < 2) {
        expected(ps, 1, "KEY=VALUE");
        return;
    }
    int i = 1;
    while (i < ps->nt && !ps->failed) {
        int k = -1;
        for (int q = 0; q < N_CFG_KEYS; q++)
            if (is_word(ps, i, cfg_keys[q])) k = q;
        if (k < 0) {
            expected(ps, i,
                     "a config key (policy, world_size, rank, ranks, order, deferred, progress_every, "
                     "verify_collectives, torch, deepspeed, or a threshold name)");
            return;
        }
        if (ps->cfg_seen & (1u << k)) {
            FAIL(col_of(ps, i), "config key %s given twice", cfg_keys[k]);
            return;
        }
        ps->cfg_seen |= 1u << k;
        int v = key_eq(ps, i);
        if (v < 0) return;
        uint64_t x;
        switch (k) {
        case CK_POLICY: {
            unsigned p;
            if (policy_tok(ps, v, &p)) return;
            c->policy = (uint8_t)p;
            break;
        }
        case CK_WORLD:
            if (num_tok(ps, v, 1, ZS_MAX_WORLD, 0, "world_size", &x)) return;
            c->world_size = (uint8_t)x;
            break;
        case CK_RANK:
            if (num_tok(ps, v, 0, ZS_MAX_WORLD - 1, 0, "rank", &x)) return;
            c->rank = (uint8_t)x;
            break;
        case CK_ORDER:
            if (is_word(ps, v, "engine"))
                c->order_mode = ZS_ORDER_ENGINE;
            else if (is_word(ps, v, "fuzzed"))
                c->order_mode = ZS_ORDER_FUZZED;
            else {
                expected(ps, v, "engine or fuzzed");
                return;
            }
            break;
        case CK_DEFERRED:
            if (num_tok(ps, v, 0, 1, 0, "deferred", &x)) return;
            c->deferred = (uint8_t)x;
            break;
        case CK_PROGRESS:
            if (num_tok(ps, v, 0, ZS_MAX_PROGRESS, 0, "progress_every", &x)) return;
            c->progress_every = (uint8_t)x;
            break;
        case CK_RANKS:
            if (is_word(ps, v, "all"))
                c->all_ranks = 1;
            else if (is_word(ps, v, "one"))
                c->all_ranks = 0;
            else {
                expected(ps, v, "all (every rank runs, each its own program) or one (rank's view)");
                return;
            }
            break;
        case CK_VERIFY:
            if (num_tok(ps, v, 0, 1, 0, "verify_collectives", &x)) return;
            c->verify_collectives = (uint8_t)x;
            break;
        case CK_TORCH:
        case CK_DS: {
            int found = -1;
            unsigned n = k == CK_TORCH ? ZS_TORCH_PROFILES : ZS_DS_PROFILES;
            for (unsigned q = 0; q < n; q++)
                if (is_word(ps, v, k == CK_TORCH ? zs_torch_profile_name(q) : zs_ds_profile_name(q))) found = (int)q;
            if (found < 0) {
                expected(ps, v,
                         k == CK_TORCH ? "a torch profile (2.x, 2.x-no-early-stop, 1.13)"
                                       : "a deepspeed profile (0.19, 0.19-hooks, 0.15)");
                return;
            }
            if (k == CK_TORCH)
                c->torch_profile = (uint8_t)found;
            else
                c->ds_profile = (uint8_t)found;
            break;
        }
        default:
            if (num_tok(ps, v, 0, ZS_INF, 1, cfg_keys[k], &x)) return;
            *zs_config_threshold(c, k - CK_TH0) = x;
            break;
        }
        i = v + 1;
    }
    if (c->rank >= c->world_size && (ps->cfg_seen & ((1u << CK_RANK) | (1u << CK_WORLD)))) {
        /* checked again by validate once all config lines are in; a rank
         * given before world_size on a later line is fine */
    }
}

static void st_module(pstate *ps, int parent) {
    zs_scenario *s = ps->s;
    if (s->n_modules >= ZS_MAX_MODULES) {
        FAIL(col_of(ps, 0), "too many modules (at most %d)", ZS_MAX_MODULES);
        return;
    }
    unsigned id = s->n_modules;
    if (zs_scenario_reserve(s, id + 1, s->n_params, s->n_uses) || PS_GROW(ps->mod_line, ps->cap_mod_line, id + 1)) {
        FAIL(col_of(ps, 0), "out of memory");
        return;
    }
    zs_module *m = &s->mod[id];
    memset(m, 0, sizeof *m);
    if (decl_name(ps, 1, m->name, "module")) return;
    int i = 2;
    while (i < ps->nt) {
        unsigned f = is_word(ps, i, "z3_leaf")         ? ZS_MOD_Z3_LEAF
                     : is_word(ps, i, "gather_always") ? ZS_MOD_GATHER_ALWAYS
                                                       : 0;
        if (!f) {
            expected(ps, i, "z3_leaf, gather_always or end of line");
            return;
        }
        if (m->flags & f) {
            FAIL(col_of(ps, i), "'" TOKF "' given twice", TOKA(&ps->t[i]));
            return;
        }
        m->flags |= (uint8_t)f;
        i++;
    }
    m->parent = parent < 0 ? ZS_NONE : (zs_id)parent;
    s->n_modules++;
    ps->mod_line[id] = ps->line;
    name_index_add(&ps->mod_names, s->mod[0].name, sizeof s->mod[0], id);
}

static void st_param(pstate *ps) {
    zs_scenario *s = ps->s;
    if (s->n_params >= ZS_MAX_PARAMS) {
        FAIL(col_of(ps, 0), "too many parameters (at most %d)", ZS_MAX_PARAMS);
        return;
    }
    if (zs_scenario_reserve(s, s->n_modules, s->n_params + 1, s->n_uses) ||
        PS_GROW(ps->par_line, ps->cap_par_line, s->n_params + 1)) {
        FAIL(col_of(ps, 0), "out of memory");
        return;
    }
    zs_param *p = &s->par[s->n_params];
    memset(p, 0, sizeof *p);
    p->elem_size = 4;
    if (decl_name(ps, 1, p->name, "parameter")) return;
    int i = 2, have_owner = 0, have_numel = 0, have_es = 0, have_fr = 0;
    while (i < ps->nt && !ps->failed) {
        int c = col_of(ps, i);
        if (is_word(ps, i, "owner")) {
            if (have_owner++) {
                FAIL(c, "owner given twice");
                return;
            }
            int v = key_eq(ps, i);
            unsigned m;
            if (v < 0 || module_ref(ps, v, &m)) return;
            p->owner = (zs_id)m;
            i = v + 1;
        } else if (is_word(ps, i, "numel")) {
            if (have_numel++) {
                FAIL(c, "numel given twice");
                return;
            }
            int v = key_eq(ps, i);
            uint64_t x;
            if (v < 0 || num_tok(ps, v, 1, ZS_MAX_NUMEL, 0, "numel", &x)) return;
            p->numel = (uint32_t)x;
            i = v + 1;
        } else if (is_word(ps, i, "elem_size")) {
            if (have_es++) {
                FAIL(c, "elem_size given twice");
                return;
            }
            int v = key_eq(ps, i);
            uint64_t x;
            if (v < 0 || num_tok(ps, v, 1, ZS_MAX_ELEM_SIZE, 0, "elem_size", &x)) return;
            p->elem_size = (uint8_t)x;
            i = v + 1;
        } else if (is_word(ps, i, "frozen")) {
            if (have_fr++) {
                FAIL(c, "frozen given twice");
                return;
            }
            p->flags |= ZS_PARAM_FROZEN;
            i++;
        } else {
            expected(ps, i, "owner=, numel=, elem_size= or frozen");
            return;
        }
    }
    if (!have_owner) {
        expected(ps, i, "owner=MODULE");
        return;
    }
    if (!have_numel) {
        expected(ps, i, "numel=N");
        return;
    }
    ps->par_line[s->n_params] = ps->line;
    s->n_params++;
    name_index_add(&ps->par_names, s->par[0].name, sizeof s->par[0], s->n_params - 1);
}

static void st_use(pstate *ps) {
    zs_scenario *s = ps->s;
    if (s->n_uses >= ZS_MAX_USES) {
        FAIL(col_of(ps, 0), "too many uses (at most %d)", ZS_MAX_USES);
        return;
    }
    unsigned m, p;
    if (module_ref(ps, 1, &m) || param_ref(ps, 2, &p) || end_of_line(ps, 3)) return;
    if (s->par[p].owner == m) {
        FAIL(col_of(ps, 1), "module @%u owns parameter @%u already", m, p);
        return;
    }
    for (unsigned k = 0; k < s->n_uses; k++)
        if (s->use[k].module == m && s->use[k].param == p) {
            FAIL(col_of(ps, 1), "duplicate use (same module and parameter as on line %d)", ps->use_line[k]);
            return;
        }
    if (zs_scenario_reserve(s, s->n_modules, s->n_params, s->n_uses + 1) ||
        PS_GROW(ps->use_line, ps->cap_use_line, s->n_uses + 1)) {
        FAIL(col_of(ps, 1), "out of memory");
        return;
    }
    s->use[s->n_uses].module = (zs_id)m;
    s->use[s->n_uses].param = (zs_id)p;
    ps->use_line[s->n_uses] = ps->line;
    s->n_uses++;
}

/* "loss=" LIST at token i (i is the "loss" word).  Returns next token or -1. */
static int parse_loss(pstate *ps, int i, uint8_t *mask, int *col) {
    int v = key_eq(ps, i);
    if (v < 0) return -1;
    *col = col_of(ps, v);
    *mask = 0;
    if (is_word(ps, v, "none")) return v + 1;
    for (;;) {
        uint64_t x;
        if (num_tok(ps, v, 0, ZS_MAX_OUT - 1, 0, "loss output index", &x)) return -1;
        if (*mask & (1u << x)) {
            FAIL(col_of(ps, v), "loss output %llu listed twice", (unsigned long long)x);
            return -1;
        }
        *mask |= (uint8_t)(1u << x);
        v++;
        if (!is_kind(ps, v, T_COMMA)) return v;
        v++;
    }
}


static void begin_pass(pstate *ps, uint8_t loss, int loss_col) {
    zs_step *st = &ps->s->step[ps->cur_step];
    ps->cur_pass = st->n_passes++;
    zs_pass *p = &st->pass[ps->cur_pass];
    p->n_calls = 0; /* the pass keeps its storage */
    p->loss_mask = loss;
    ps->pass_loss_col = loss_col;
    ps->pass_has_root = 0;
    ps->pass_line[ps->cur_step][ps->cur_pass] = ps->line;
}

/* Resolves the pending use references of the current pass and checks its
 * loss; called when the pass is complete. */
static void end_pass(pstate *ps) {
    if (ps->cur_pass < 0 || ps->failed) return;
    zs_pass *p = &ps->s->step[ps->cur_step].pass[ps->cur_pass];
    int pline = ps->pass_line[ps->cur_step][ps->cur_pass];
    if (!ps->pass_has_root) {
        fail_at(ps, pline, 1, "this pass has no root call (expected an indented 'call' line)");
        return;
    }
    for (unsigned c = 0; c < p->n_calls; c++) {
        callx *x = &ps->cx[c];
        zs_call *cl = &p->calls[c];
        for (unsigned q = 0; q < x->n_pending; q++) {
            uref *u = &x->pending[q];
            if (u->k >= x->nchild) {
                fail_at(ps, x->line, u->col, "use(): out%u.%u: this call makes %u child call%s", u->k, u->j, x->nchild,
                        x->nchild == 1 ? "" : "s");
                return;
            }
            unsigned ch = x->first_child;
            for (unsigned k = 0; k < u->k; k++) ch = ps->cx[ch].next_sib;
            if (u->j >= p->calls[ch].n_out) {
                fail_at(ps, x->line, u->col, "use(): out%u.%u: child call %u has %u output%s", u->k, u->j, u->k,
                        p->calls[ch].n_out, p->calls[ch].n_out == 1 ? "" : "s");
                return;
            }
            if (x->pending_slot[q] >= ZS_MAX_USE)
                cl->alias[x->pending_slot[q] - ZS_MAX_USE].call = (zs_id)ch;
            else
                cl->use[x->pending_slot[q]].call = (zs_id)ch;
        }
    }
    unsigned nout = p->calls[0].n_out;
    if (p->loss_mask >> nout) {
        fail_at(ps, pline, ps->pass_loss_col ? ps->pass_loss_col : 1,
                "loss names an output the root call does not have (it has %u)", nout);
        return;
    }
    ps->cur_pass = -1;
}

static void end_step(pstate *ps) {
    if (ps->cur_step < 0 || ps->failed) return;
    end_pass(ps);
    if (ps->failed) return;
    zs_step *st = &ps->s->step[ps->cur_step];
    int sl = ps->step_line[ps->cur_step];
    if (zs_step_multi_pass(st->kind)) {
        if (st->n_passes < 2)
            fail_at(ps, sl, 1, "a %s step needs 2 to %d 'pass' lines (it has %u)", zs_step_kind_name(st->kind),
                    ZS_MAX_PASSES, st->n_passes);
    } else if (st->n_passes != 1) {
        fail_at(ps, sl, 1, "this step has no root call (expected an indented 'call' line)");
    }
    ps->cur_step = -1;
}

static void st_step(pstate *ps) {
    zs_scenario *s = ps->s;
    if (s->n_steps >= ZS_MAX_STEPS) {
        FAIL(col_of(ps, 0), "too many steps (at most %d)", ZS_MAX_STEPS);
        return;
    }
    int kind = -1;
    if (is_kind(ps, 1, T_WORD))
        for (unsigned k = 0; k < ZS_STEP_KINDS; k++)
            if (teq(&ps->t[1], zs_step_kind_name(k))) kind = (int)k;
    if (kind < 0) {
        expected(ps, 1, "a step kind (train, eval, accum, retain, interleave)");
        return;
    }
    int i = 2;
    uint8_t mask = 0;
    int lcol = 0, have_loss = 0;
    if (is_word(ps, i, "loss")) {
        if (zs_step_multi_pass((unsigned)kind)) {
            FAIL(col_of(ps, i), "a %s step has several passes: put loss= on each 'pass' line",
                 zs_step_kind_name((unsigned)kind));
            return;
        }
        if (kind == ZS_STEP_EVAL) {
            FAIL(col_of(ps, i), "an eval step has no loss");
            return;
        }
        lcol = col_of(ps, i);
        i = parse_loss(ps, i, &mask, &lcol);
        if (i < 0) return;
        have_loss = 1;
    }
    if (i < ps->nt) {
        expected(ps, i, zs_step_multi_pass((unsigned)kind) ? "end of line" : "loss= or end of line");
        return;
    }
    unsigned si = s->n_steps++;
    zs_step *st = &s->step[si];
    st->n_passes = 0; /* its passes keep their storage */
    for (unsigned k = 0; k < ZS_MAX_PASSES; k++) {
        st->pass[k].n_calls = 0;
        st->pass[k].loss_mask = 0;
    }
    st->kind = (uint8_t)kind;
    ps->cur_step = (int)si;
    ps->cur_pass = -1;
    ps->step_implicit = 0;
    ps->step_loss = mask;
    ps->step_has_loss = have_loss;
    ps->step_loss_col = lcol;
    ps->step_line[si] = ps->line;
}

static void st_pass(pstate *ps) {
    zs_step *st = &ps->s->step[ps->cur_step];
    if (ps->step_implicit) {
        FAIL(col_of(ps, 0), "this step's calls are already directly under it: no 'pass' line here");
        return;
    }
    unsigned maxp = zs_step_multi_pass(st->kind) ? ZS_MAX_PASSES : 1;
    if (st->n_passes >= maxp) {
        FAIL(col_of(ps, 0), "a %s step has at most %u pass%s", zs_step_kind_name(st->kind), maxp,
             maxp == 1 ? "" : "es");
        return;
    }
    int i = 1;
    uint8_t mask = ps->step_loss;
    int lcol = ps->step_loss_col;
    if (is_word(ps, i, "loss")) {
        if (st->kind == ZS_STEP_EVAL) {
            FAIL(col_of(ps, i), "an eval step has no loss");
            return;
        }
        if (ps->step_has_loss) {
            FAIL(col_of(ps, i), "loss= is already on the step line");
            return;
        }
        i = parse_loss(ps, i, &mask, &lcol);
        if (i < 0) return;
    }
    if (end_of_line(ps, i)) return;
    end_pass(ps);
    if (ps->failed) return;
    begin_pass(ps, mask, lcol);
}

/* Parses one reference word at token i into *r.  scope_caller: the
 * reference is a call input (batch allowed).  Sets *pending when it is an
 * out<K>.<J> whose call index is resolved later (k, j in *u). */
static int parse_ref(pstate *ps, int i, zs_ref *r, uref *u, int *is_out) {
    if (!is_kind(ps, i, T_WORD)) {
        expected(ps, i, "a tensor reference (batch, batch_rg, argI, outK.J[.detach])");
        return -1;
    }
    const tok *tk = &ps->t[i];
    const char *p = tk->p;
    int n = tk->len;
    memset(r, 0, sizeof *r);
    *is_out = 0;
    if (n > 7 && !memcmp(p + n - 7, ".detach", 7)) {
        r->detach = 1;
        n -= 7;
    }
    int raw = 0; /* outK.J.raw: before the producing call's hook C */
    if (n > 4 && !memcmp(p + n - 4, ".raw", 4)) {
        raw = 1;
        n -= 4;
        if (n < 4 || memcmp(p, "out", 3)) {
            FAIL(tk->col, "'.raw' only follows an outK.J reference, found '" TOKF "'", TOKA(tk));
            return -1;
        }
    }
    if (n == 5 && !memcmp(p, "batch", 5)) {
        r->kind = ZS_REF_BATCH;
        return 0;
    }
    if (n == 8 && !memcmp(p, "batch_rg", 8)) {
        r->kind = ZS_REF_BATCH_RG;
        return 0;
    }
    uint64_t a, b;
    if (n > 3 && !memcmp(p, "arg", 3) && is_digit((unsigned char)p[3]) && parse_u64_text(p + 3, n - 3, 0, &a) == 0 &&
        n - 3 <= 2) {
        if (a >= ZS_MAX_IN + ZS_MAX_KW) {
            FAIL(tk->col, "arg%llu: a call has at most %d inputs (%d positional, %d keyword)", (unsigned long long)a,
                 ZS_MAX_IN + ZS_MAX_KW, ZS_MAX_IN, ZS_MAX_KW);
            return -1;
        }
        r->kind = ZS_REF_ARG;
        r->index = (uint8_t)a;
        return 0;
    }
    if (n > 3 && !memcmp(p, "out", 3)) {
        int dot = -1;
        for (int k = 3; k < n; k++)
            if (p[k] == '.') {
                dot = k;
                break;
            }
        if (dot > 3 && dot < n - 1 && dot - 3 <= 7 && n - dot - 1 <= 2 && is_digit((unsigned char)p[3]) &&
            is_digit((unsigned char)p[dot + 1]) && parse_u64_text(p + 3, dot - 3, 0, &a) == 0 &&
            parse_u64_text(p + dot + 1, n - dot - 1, 0, &b) == 0) {
            if (a >= ZS_MAX_CHILD_CALLS) {
                FAIL(tk->col, "out%llu: a call makes at most %d child calls", (unsigned long long)a,
                     ZS_MAX_CHILD_CALLS);
                return -1;
            }
            if (b >= ZS_MAX_OUT) {
                FAIL(tk->col, "out%llu.%llu: a call has at most %d outputs", (unsigned long long)a,
                     (unsigned long long)b, ZS_MAX_OUT);
                return -1;
            }
            r->kind = ZS_REF_OUT;
            r->index = (uint8_t)b;
            r->raw = (uint8_t)raw;
            u->k = (uint32_t)a;
            u->j = (uint8_t)b;
            u->col = tk->col;
            *is_out = 1;
            return 0;
        }
    }
    FAIL(tk->col,
         "expected a tensor reference (batch, batch_rg, argI, outK.J, each optionally "
         "followed by .detach), found '" TOKF "'",
         TOKA(tk));
    return -1;
}

/* parent_call: index of the calling call, or -1 for the pass's root call */
static void st_call(pstate *ps, int parent_call) {
    zs_scenario *s = ps->s;
    zs_step *st = &s->step[ps->cur_step];
    if (ps->cur_pass < 0) {
        /* a single-pass step with its calls directly under it */
        ps->step_implicit = 1;
        begin_pass(ps, ps->step_loss, ps->step_loss_col);
        ps->pass_line[ps->cur_step][ps->cur_pass] = ps->step_line[ps->cur_step];
    }
    zs_pass *p = &st->pass[ps->cur_pass];
    if (parent_call < 0 && ps->pass_has_root) {
        FAIL(col_of(ps, 0), "a pass has exactly one root call (indent this call under its caller)");
        return;
    }
    if (p->n_calls >= ZS_MAX_CALLS) {
        FAIL(col_of(ps, 0), "too many calls in one pass (at most %d)", ZS_MAX_CALLS);
        return;
    }
    unsigned mod;
    if (module_ref(ps, 1, &mod)) return;
    if (parent_call < 0) {
        if (mod != 0) {
            FAIL(col_of(ps, 1), "the root call must call the root module (@0)");
            return;
        }
    } else {
        unsigned cm = p->calls[parent_call].module;
        if (!zs_callee_ok(s, cm, mod)) {
            if (s->mod[cm].flags & ZS_MOD_Z3_LEAF)
                FAIL(col_of(ps, 0), "a z3 leaf module's call makes no child calls");
            else
                FAIL(col_of(ps, 1), "module @%u is not a child module of the caller's module @%u", mod, cm);
            return;
        }
        if (ps->cx[parent_call].nchild >= ZS_MAX_CHILD_CALLS) {
            FAIL(col_of(ps, 0), "a call makes at most %d child calls", ZS_MAX_CHILD_CALLS);
            return;
        }
    }
    unsigned ci = p->n_calls;
    if (zs_pass_reserve(p, ci + 1) || PS_GROW(ps->cx, ps->cap_cx, ci + 1) ||
        PS_GROW(ps->call_line[ps->cur_step][ps->cur_pass], ps->cap_call_line[ps->cur_step][ps->cur_pass], ci + 1)) {
        FAIL(col_of(ps, 0), "out of memory");
        return;
    }
    zs_call *c = &p->calls[ci];
    callx *x = &ps->cx[ci];
    memset(c, 0, sizeof *c);
    memset(x, 0, sizeof *x);
    x->first_child = x->last_child = x->next_sib = ZS_NONE;
    c->module = (zs_id)mod;
    c->parent = parent_call < 0 ? ZS_NONE : (zs_id)parent_call;
    c->catcher = ZS_NONE;
    x->line = ps->line;
    x->depth = parent_call < 0 ? 0 : ps->cx[parent_call].depth + 1;

    /* inputs */
    int i = 2;
    if (!is_kind(ps, i, T_LP)) {
        expected(ps, i, "'(' and the call's inputs");
        return;
    }
    i++;
    if (!is_kind(ps, i, T_RP)) {
        for (;;) {
            /* [kw=] REF { + REF } : a keyword input, a mixed input's extra terms */
            int is_kw = 0;
            if (is_word(ps, i, "kw") && is_kind(ps, i + 1, T_EQ)) {
                if (parent_call < 0) {
                    FAIL(col_of(ps, i), "the root call takes no keyword inputs");
                    return;
                }
                is_kw = 1;
                i += 2;
            } else if (c->n_kw) {
                FAIL(col_of(ps, i), "positional inputs come before keyword inputs (kw=...)");
                return;
            }
            if (is_kw ? c->n_kw >= ZS_MAX_KW : c->n_in >= ZS_MAX_IN) {
                FAIL(col_of(ps, i), "a call has at most %d %s inputs", is_kw ? ZS_MAX_KW : ZS_MAX_IN,
                     is_kw ? "keyword" : "positional");
                return;
            }
            unsigned slot = is_kw ? (unsigned)ZS_MAX_IN + c->n_kw : c->n_in;
            for (int term = 0;; term++) {
                zs_ref r;
                uref u;
                int is_out;
                int rc = col_of(ps, i);
                if (term > 0 && is_word(ps, i, "param") && is_kind(ps, i + 1, T_LP)) {
                    /* param(PARAM): a parameter the caller's op reads (ZS_REF_PARAM) */
                    unsigned q;
                    if (parent_call < 0) {
                        FAIL(rc, "the root call's inputs cannot be mixed");
                        return;
                    }
                    if (param_ref(ps, i + 2, &q)) return;
                    if (!is_kind(ps, i + 3, T_RP)) {
                        expected(ps, i + 3, "')' after param(PARAM");
                        return;
                    }
                    if (c->n_mix >= ZS_MAX_MIX) {
                        FAIL(rc, "a call has at most %d extra terms in its mixed inputs", ZS_MAX_MIX);
                        return;
                    }
                    memset(&r, 0, sizeof r);
                    r.kind = ZS_REF_PARAM;
                    r.call = (zs_id)q;
                    c->mix[c->n_mix].slot = (uint8_t)slot;
                    c->mix[c->n_mix++].ref = r;
                    i += 4;
                    if (!is_kind(ps, i, T_PLUS)) break;
                    i++;
                    continue;
                }
                if (parse_ref(ps, i, &r, &u, &is_out)) return;
                if (parent_call < 0 && r.kind != ZS_REF_BATCH && r.kind != ZS_REF_BATCH_RG) {
                    FAIL(rc, "the root call's inputs can only be batch or batch_rg");
                    return;
                }
                if (r.kind == ZS_REF_ARG && parent_call >= 0 &&
                    r.index >= (unsigned)p->calls[parent_call].n_in + p->calls[parent_call].n_kw) {
                    unsigned pn = (unsigned)p->calls[parent_call].n_in + p->calls[parent_call].n_kw;
                    FAIL(rc, "arg%u: the caller has %u input%s", r.index, pn, pn == 1 ? "" : "s");
                    return;
                }
                if (is_out) {
                    callx *px = &ps->cx[parent_call];
                    if (u.k >= px->nchild) {
                        FAIL(rc,
                             "out%u.%u: an input can only be an output of an earlier sibling call "
                             "(%u so far)",
                             u.k, u.j, px->nchild);
                        return;
                    }
                    unsigned sib = px->first_child;
                    for (unsigned k = 0; k < u.k; k++) sib = ps->cx[sib].next_sib;
                    if (u.j >= p->calls[sib].n_out) {
                        FAIL(rc, "out%u.%u: sibling call %u has %u output%s", u.k, u.j, u.k, p->calls[sib].n_out,
                             p->calls[sib].n_out == 1 ? "" : "s");
                        return;
                    }
                    r.call = (zs_id)sib;
                }
                if (term == 0) {
                    if (is_kw)
                        c->kw[c->n_kw++] = r;
                    else
                        c->in[c->n_in++] = r;
                } else {
                    if (parent_call < 0) {
                        FAIL(rc, "the root call's inputs cannot be mixed");
                        return;
                    }
                    if (c->n_mix >= ZS_MAX_MIX) {
                        FAIL(rc, "a call has at most %d extra terms in its mixed inputs", ZS_MAX_MIX);
                        return;
                    }
                    /* slot of a keyword input: ZS_MAX_IN + j until the
                     * positional count is final (fixed below) */
                    c->mix[c->n_mix].slot = (uint8_t)slot;
                    c->mix[c->n_mix++].ref = r;
                }
                i++;
                if (!is_kind(ps, i, T_PLUS)) break;
                i++;
            }
            if (is_kind(ps, i, T_RP)) break;
            if (!is_kind(ps, i, T_COMMA)) {
                expected(ps, i, "',' or ')' after an input reference");
                return;
            }
            i++;
        }
    }
    i++; /* ')' */
    for (unsigned k = 0; k < c->n_mix; k++)
        if (c->mix[k].slot >= ZS_MAX_IN) c->mix[k].slot = (uint8_t)(c->mix[k].slot - ZS_MAX_IN + c->n_in);

    /* attributes */
    int seen_out = 0, seen_use = 0, seen_ng = 0, seen_ck = 0, seen_rs = 0;
    while (i < ps->nt && !ps->failed) {
        int ac = col_of(ps, i);
        if (is_kind(ps, i, T_ARROW)) {
            if (seen_out++) {
                FAIL(ac, "'->' given twice");
                return;
            }
            uint64_t v;
            if (num_tok(ps, i + 1, 0, ZS_MAX_OUT, 0, "number of outputs", &v)) return;
            c->n_out = (uint8_t)v;
            i += 2;
        } else if (is_word(ps, i, "use")) {
            if (seen_use++) {
                FAIL(ac, "use() given twice");
                return;
            }
            i++;
            if (!is_kind(ps, i, T_LP)) {
                expected(ps, i, "'(' after use");
                return;
            }
            i++;
            if (!is_kind(ps, i, T_RP)) {
                for (;;) {
                    if (c->n_use >= ZS_MAX_USE) {
                        FAIL(col_of(ps, i), "an op consumes at most %d tensors", ZS_MAX_USE);
                        return;
                    }
                    zs_ref r;
                    uref u;
                    int is_out;
                    int rc = col_of(ps, i);
                    if (parse_ref(ps, i, &r, &u, &is_out)) return;
                    if (r.kind == ZS_REF_BATCH || r.kind == ZS_REF_BATCH_RG) {
                        FAIL(rc, "use(): batch/batch_rg are call inputs only (an op consumes "
                                 "them as argI)");
                        return;
                    }
                    if (r.kind == ZS_REF_ARG && r.index >= (unsigned)c->n_in + c->n_kw) {
                        unsigned cn = (unsigned)c->n_in + c->n_kw;
                        FAIL(rc, "use(): arg%u: this call has %u input%s", r.index, cn, cn == 1 ? "" : "s");
                        return;
                    }
                    if (is_out) {
                        x->pending_slot[x->n_pending] = c->n_use;
                        x->pending[x->n_pending++] = u;
                    }
                    c->use[c->n_use++] = r;
                    i++;
                    if (is_kind(ps, i, T_RP)) break;
                    if (!is_kind(ps, i, T_COMMA)) {
                        expected(ps, i, "',' or ')' in use(...)");
                        return;
                    }
                    i++;
                }
            }
            i++;
        } else if (is_word(ps, i, "alias")) {
            /* alias(J=REF, ...): output J is REF itself (call's own scope) */
            if (c->out_alias) {
                FAIL(ac, "alias() given twice");
                return;
            }
            i++;
            if (!is_kind(ps, i, T_LP)) {
                expected(ps, i, "'(' after alias");
                return;
            }
            i++;
            for (;;) {
                uint64_t v;
                if (num_tok(ps, i, 0, ZS_MAX_OUT - 1, 0, "output index", &v)) return;
                if ((c->out_alias >> v) & 1u) {
                    FAIL(col_of(ps, i), "output %u named twice", (unsigned)v);
                    return;
                }
                i++;
                if (!is_kind(ps, i, T_EQ)) {
                    expected(ps, i, "'=' after the output index in alias(...)");
                    return;
                }
                i++;
                zs_ref r;
                uref u;
                int is_out;
                int rc = col_of(ps, i);
                if (parse_ref(ps, i, &r, &u, &is_out)) return;
                if (r.kind == ZS_REF_BATCH || r.kind == ZS_REF_BATCH_RG) {
                    FAIL(rc, "alias(): batch/batch_rg are call inputs only");
                    return;
                }
                if (is_out) {
                    if (x->n_pending >= ZS_MAX_USE + ZS_MAX_OUT) {
                        FAIL(rc, "too many references");
                        return;
                    }
                    x->pending_slot[x->n_pending] = (uint8_t)(ZS_MAX_USE + v);
                    x->pending[x->n_pending++] = u;
                }
                c->alias[v] = r;
                c->out_alias |= (uint8_t)(1u << v);
                i++;
                if (is_kind(ps, i, T_RP)) break;
                if (!is_kind(ps, i, T_COMMA)) {
                    expected(ps, i, "',' or ')' in alias(...)");
                    return;
                }
                i++;
            }
            i++;
        } else if (is_word(ps, i, "nosave")) {
            if (c->op_nosave) {
                FAIL(ac, "nosave given twice");
                return;
            }
            c->op_nosave = 1;
            i++;
        } else if (is_word(ps, i, "nograd")) {
            /* nograd(J, ...): outputs that never require grad */
            if (c->out_norg) {
                FAIL(ac, "nograd() given twice");
                return;
            }
            i++;
            if (!is_kind(ps, i, T_LP)) {
                expected(ps, i, "'(' after nograd");
                return;
            }
            i++;
            for (;;) {
                uint64_t v;
                if (num_tok(ps, i, 0, ZS_MAX_OUT - 1, 0, "output index", &v)) return;
                if ((c->out_norg >> v) & 1u) {
                    FAIL(col_of(ps, i), "output %u named twice", (unsigned)v);
                    return;
                }
                c->out_norg |= (uint8_t)(1u << v);
                i++;
                if (is_kind(ps, i, T_RP)) break;
                if (!is_kind(ps, i, T_COMMA)) {
                    expected(ps, i, "',' or ')' in nograd(...)");
                    return;
                }
                i++;
            }
            i++;
        } else if (is_word(ps, i, "no_grad")) {
            if (seen_ng++) {
                FAIL(ac, "no_grad given twice");
                return;
            }
            c->flags |= ZS_CALL_NO_GRAD;
            i++;
        } else if (is_word(ps, i, "ckpt")) {
            if (seen_ck++) {
                FAIL(ac, "ckpt given twice");
                return;
            }
            if (parent_call < 0) {
                FAIL(ac, "the root call cannot be checkpointed");
                return;
            }
            int v = key_eq(ps, i);
            if (v < 0) return;
            if (is_word(ps, v, "reentrant"))
                c->flags |= ZS_CALL_CKPT_RE;
            else if (is_word(ps, v, "non-reentrant"))
                c->flags |= ZS_CALL_CKPT_NRE;
            else if (is_word(ps, v, "body-reentrant"))
                c->flags |= ZS_CALL_CKPT_RE | ZS_CALL_CKPT_BODY;
            else if (is_word(ps, v, "body-non-reentrant"))
                c->flags |= ZS_CALL_CKPT_NRE | ZS_CALL_CKPT_BODY;
            else {
                expected(ps, v, "reentrant, non-reentrant, body-reentrant or body-non-reentrant");
                return;
            }
            i = v + 1;
        } else if (is_word(ps, i, "raise")) {
            if (seen_rs++) {
                FAIL(ac, "raise given twice");
                return;
            }
            int v = key_eq(ps, i);
            if (v < 0) return;
            c->flags |= ZS_CALL_RAISE;
            if (is_word(ps, v, "outside")) {
                c->catcher = ZS_NONE;
            } else {
                const tok *tk = v < ps->nt ? &ps->t[v] : NULL;
                uint64_t k;
                if (!tk || tk->kind != T_WORD || tk->len < 3 || memcmp(tk->p, "up", 2) ||
                    !is_digit((unsigned char)tk->p[2]) || parse_u64_text(tk->p + 2, tk->len - 2, 0, &k) || k < 1) {
                    expected(ps, v, "outside or upK (K >= 1: the K-th calling call catches it)");
                    return;
                }
                if (k > (uint64_t)x->depth) {
                    FAIL(tk->col, "raise=up%llu: this call has only %d calling call%s", (unsigned long long)k, x->depth,
                         x->depth == 1 ? "" : "s");
                    return;
                }
                unsigned a = (unsigned)parent_call;
                for (uint64_t q = 1; q < k; q++) a = p->calls[a].parent;
                c->catcher = (zs_id)a;
            }
            i = v + 1;
        } else {
            expected(ps, i, "'->', use(...), no_grad, ckpt=, raise= or end of line");
            return;
        }
    }
    if (ps->failed) return;
    if (parent_call >= 0) {
        callx *px = &ps->cx[parent_call];
        if (px->last_child == ZS_NONE)
            px->first_child = (zs_id)ci;
        else
            ps->cx[px->last_child].next_sib = (zs_id)ci;
        px->last_child = (zs_id)ci;
        px->nchild++;
    } else {
        ps->pass_has_root = 1;
    }
    p->n_calls++;
    ps->call_line[ps->cur_step][ps->cur_pass][ci] = ps->line;
}

static void st_order(pstate *ps) {
    zs_scenario *s = ps->s;
    if (s->cfg.order_mode != ZS_ORDER_FUZZED) {
        FAIL(col_of(ps, 0), "order_bytes needs 'config order=fuzzed'");
        return;
    }
    if (ps->nt < 2) {
        expected(ps, 1, "order bytes (0..255)");
        return;
    }
    for (int i = 1; i < ps->nt; i++) {
        uint64_t v;
        if (s->n_order >= ZS_MAX_ORDER) {
            FAIL(col_of(ps, i), "too many order bytes (at most %d)", ZS_MAX_ORDER);
            return;
        }
        if (num_tok(ps, i, 0, 255, 0, "order byte", &v)) return;
        s->order[s->n_order++] = (uint8_t)v;
    }
}

/* "rank R step S [pass P] (skip-step | call CALL (route MODULE | skip | exit | raise))":
 * one rank edit (zs_rank_edit).  CALL names a call of the base pass by
 * its callee: MODULE (called once in the pass) or MODULE:K (its K-th
 * call in the pass, 0-based, in call order). */
static void st_rank(pstate *ps) {
    zs_scenario *s = ps->s;
    if (s->n_edits >= ZS_MAX_RANK_EDITS) {
        FAIL(col_of(ps, 0), "too many rank edits (at most %d)", ZS_MAX_RANK_EDITS);
        return;
    }
    zs_rank_edit e;
    memset(&e, 0, sizeof e);
    uint64_t x;
    if (num_tok(ps, 1, 0, ZS_MAX_WORLD - 1, 0, "rank", &x)) return;
    e.rank = (uint8_t)x;
    if (!is_word(ps, 2, "step")) {
        expected(ps, 2, "step");
        return;
    }
    if (num_tok(ps, 3, 0, s->n_steps - 1u, 0, "step (0-based, in file order)", &x)) return;
    e.step = (uint8_t)x;
    const zs_step *st = &s->step[e.step];
    int i = 4;
    if (is_word(ps, i, "skip-step")) {
        e.kind = ZS_EDIT_SKIP_STEP;
        if (end_of_line(ps, i + 1)) return;
    } else {
        if (is_word(ps, i, "pass")) {
            if (num_tok(ps, i + 1, 0, st->n_passes - 1u, 0, "pass (0-based)", &x)) return;
            e.pass = (uint8_t)x;
            i += 2;
        }
        if (!is_word(ps, i, "call")) {
            expected(ps, i, e.pass || i > 4 ? "call" : "pass, call or skip-step");
            return;
        }
        i++;
        /* CALL: a module reference, optionally ":K" */
        if (!is_kind(ps, i, T_WORD)) {
            expected(ps, i, "a call (MODULE or MODULE:K)");
            return;
        }
        tok whole = ps->t[i];
        int colon = -1;
        for (int k = 0; k < whole.len; k++)
            if (whole.p[k] == ':') {
                colon = k;
                break;
            }
        uint64_t occ = 0;
        int have_occ = colon >= 0;
        if (have_occ) {
            if (colon == 0 || colon == whole.len - 1 ||
                parse_u64_text(whole.p + colon + 1, whole.len - colon - 1, 0, &occ) != 0 ||
                !is_digit((unsigned char)whole.p[colon + 1])) {
                FAIL(whole.col,
                     "expected MODULE:K (K the call's number among that module's calls in "
                     "the pass), found '" TOKF "'",
                     TOKA(&whole));
                return;
            }
            ps->t[i].len = colon; /* the module part */
        }
        unsigned m;
        int bad = module_ref(ps, i, &m);
        ps->t[i] = whole;
        if (bad) return;
        const zs_pass *p = &st->pass[e.pass];
        unsigned cnt = 0, hit = ZS_NONE;
        for (unsigned c = 0; c < p->n_calls; c++)
            if (p->calls[c].module == m) {
                if (cnt == occ) hit = c;
                cnt++;
            }
        if (cnt == 0) {
            FAIL(whole.col, "module @%u is not called in step %u pass %u", m, e.step, e.pass);
            return;
        }
        if (!have_occ && cnt > 1) {
            FAIL(whole.col,
                 "module @%u is called %u times in step %u pass %u: name the call as "
                 "MODULE:K (K = 0..%u)",
                 m, cnt, e.step, e.pass, cnt - 1);
            return;
        }
        if (hit == ZS_NONE) {
            FAIL(whole.col, "call " TOKF ": module @%u is called only %u time%s in step %u pass %u", TOKA(&whole), m,
                 cnt, cnt == 1 ? "" : "s", e.step, e.pass);
            return;
        }
        e.call = (zs_id)hit;
        i++;
        if (is_word(ps, i, "route")) {
            unsigned t;
            if (module_ref(ps, i + 1, &t)) return;
            e.kind = ZS_EDIT_ROUTE;
            e.module = (zs_id)t;
            i += 2;
        } else if (is_word(ps, i, "skip")) {
            e.kind = ZS_EDIT_SKIP;
            i++;
        } else if (is_word(ps, i, "exit")) {
            e.kind = ZS_EDIT_EXIT;
            i++;
        } else if (is_word(ps, i, "raise")) {
            e.kind = ZS_EDIT_RAISE;
            i++;
        } else {
            expected(ps, i, "route MODULE, skip, exit or raise");
            return;
        }
        if (end_of_line(ps, i)) return;
    }
    /* keep the edits sorted (validation wants them sorted strictly); the
     * file may list them in any order */
    unsigned k = s->n_edits++;
    s->edit[k] = e;
    ps->edit_line[k] = ps->line;
    for (; k > 0; k--) {
        const zs_rank_edit *a = &s->edit[k - 1], *b = &s->edit[k];
        const uint32_t ka[5] = {a->rank, a->step, a->pass, a->call, a->kind};
        const uint32_t kb[5] = {b->rank, b->step, b->pass, b->call, b->kind};
        int cmp = 0;
        for (int i = 0; i < 5 && !cmp; i++) cmp = ka[i] < kb[i] ? -1 : ka[i] > kb[i];
        if (cmp <= 0) break;
        zs_rank_edit t = s->edit[k];
        s->edit[k] = s->edit[k - 1];
        s->edit[k - 1] = t;
        int tl = ps->edit_line[k];
        ps->edit_line[k] = ps->edit_line[k - 1];
        ps->edit_line[k - 1] = tl;
    }
}

/* ------------------------------------------------------------------ */
/* Lines and indentation                                                */
/* ------------------------------------------------------------------ */

static void pop_frame(pstate *ps) {
    frame *f = &ps->st[--ps->sp];
    if (f->kind == K_PASS)
        end_pass(ps);
    else if (f->kind == K_STEP)
        end_step(ps);
}

static void push_frame(pstate *ps, int kind, int idx) {
    if (PS_GROW(ps->st, ps->cap_st, (uint32_t)ps->sp + 1)) {
        fail_at(ps, ps->line, 1, "out of memory");
        return;
    }
    frame *f = &ps->st[ps->sp++];
    f->indent = ps->indent;
    f->child_indent = -1;
    f->kind = kind;
    f->idx = idx;
}

static int phase_of(const tok *tk) {
    if (teq(tk, "scn")) return PH_SCN;
    if (teq(tk, "expect")) return PH_EXPECT;
    if (teq(tk, "config")) return PH_CONFIG;
    if (teq(tk, "module")) return PH_MODULE;
    if (teq(tk, "param")) return PH_PARAM;
    if (teq(tk, "use")) return PH_USE;
    if (teq(tk, "step")) return PH_STEP;
    if (teq(tk, "rank")) return PH_RANK;
    if (teq(tk, "order_bytes")) return PH_ORDER;
    return -1;
}

static const char *const phase_names[] = {"",      "scn", "expect", "config", "module",
                                          "param", "use", "step",   "rank",   "order_bytes"};

static void statement(pstate *ps) {
    /* close the statements this line is not nested in */
    while (ps->sp > 0 && ps->st[ps->sp - 1].indent >= ps->indent && !ps->failed) pop_frame(ps);
    if (ps->failed) return;
    const tok *kw = &ps->t[0];
    if (kw->kind != T_WORD) {
        expected(ps, 0, "a statement keyword");
        return;
    }
    if (ps->sp == 0) {
        if (ps->indent != 0) {
            FAIL(1, "unexpected indentation (top-level statements start in column 1)");
            return;
        }
        int ph = phase_of(kw);
        if (ph < 0) {
            expected(ps, 0, "a statement (scn, expect, config, module, param, use, step, rank, order_bytes)");
            return;
        }
        int repeat =
            ph == PH_CONFIG || ph == PH_PARAM || ph == PH_USE || ph == PH_STEP || ph == PH_RANK || ph == PH_ORDER;
        if (ph < ps->phase || (ph == ps->phase && !repeat)) {
            if (ph == ps->phase && ph == PH_MODULE)
                FAIL(kw->col, "only one root module (a second unindented 'module' line)");
            else if (ph == ps->phase)
                FAIL(kw->col, "only one '%s' line", phase_names[ph]);
            else
                FAIL(kw->col,
                     "'%s' must come before '%s' (order: scn, expect, config, module, param, "
                     "use, step, rank, order_bytes)",
                     phase_names[ph], phase_names[ps->phase]);
            return;
        }
        if (ph > PH_MODULE && !ps->have_root) {
            FAIL(kw->col, "'%s' before the module tree (declare the root module first)", phase_names[ph]);
            return;
        }
        if ((ph == PH_ORDER || ph == PH_RANK) && ps->s->n_steps == 0) {
            FAIL(kw->col, "%s before any step", phase_names[ph]);
            return;
        }
        ps->phase = ph;
        switch (ph) {
        case PH_SCN: {
            uint64_t v;
            if (num_tok(ps, 1, 1, 1, 0, "format version", &v) || end_of_line(ps, 2)) return;
            break;
        }
        case PH_EXPECT: st_expect(ps); break;
        case PH_CONFIG: st_config(ps); break;
        case PH_MODULE:
            st_module(ps, -1);
            if (!ps->failed) {
                ps->have_root = 1;
                push_frame(ps, K_MODULE, 0);
            }
            break;
        case PH_PARAM: st_param(ps); break;
        case PH_USE: st_use(ps); break;
        case PH_STEP:
            st_step(ps);
            if (!ps->failed) push_frame(ps, K_STEP, ps->cur_step);
            break;
        case PH_RANK: st_rank(ps); break;
        case PH_ORDER: st_order(ps); break;
        }
        return;
    }
    /* nested: the innermost open statement is the parent */
    frame *par = &ps->st[ps->sp - 1];
    if (par->child_indent < 0)
        par->child_indent = ps->indent;
    else if (par->child_indent != ps->indent) {
        FAIL(1, "inconsistent indentation: %d spaces, the sibling above has %d", ps->indent, par->child_indent);
        return;
    }
    switch (par->kind) {
    case K_MODULE:
        if (!teq(kw, "module")) {
            if (phase_of(kw) >= 0)
                FAIL(kw->col, "'" TOKF "' must not be indented (only module lines nest under a module)", TOKA(kw));
            else
                expected(ps, 0, "'module' (a child module)");
            return;
        }
        {
            unsigned id = ps->s->n_modules;
            st_module(ps, par->idx);
            if (!ps->failed) push_frame(ps, K_MODULE, (int)id);
        }
        return;
    case K_STEP: {
        zs_step *st = &ps->s->step[ps->cur_step];
        if (teq(kw, "pass")) {
            st_pass(ps);
            if (!ps->failed) push_frame(ps, K_PASS, ps->cur_pass);
            return;
        }
        if (teq(kw, "call")) {
            if (zs_step_multi_pass(st->kind)) {
                FAIL(kw->col, "a %s step has several passes: put each root call under a 'pass' line",
                     zs_step_kind_name(st->kind));
                return;
            }
            if (st->n_passes && !ps->step_implicit) {
                FAIL(kw->col, "this step has a 'pass' line: indent the call under it");
                return;
            }
            unsigned ci = ps->cur_pass < 0 ? 0 : st->pass[ps->cur_pass].n_calls;
            st_call(ps, -1);
            if (!ps->failed) push_frame(ps, K_CALL, (int)ci);
            return;
        }
        expected(ps, 0, zs_step_multi_pass(st->kind) ? "'pass'" : "'call' (the root call) or 'pass'");
        return;
    }
    case K_PASS:
    case K_CALL: {
        if (!teq(kw, "call")) {
            expected(ps, 0, par->kind == K_PASS ? "'call' (the pass's root call)" : "'call' (a child call)");
            return;
        }
        unsigned ci = ps->s->step[ps->cur_step].pass[ps->cur_pass].n_calls;
        st_call(ps, par->kind == K_PASS ? -1 : par->idx);
        if (!ps->failed) push_frame(ps, K_CALL, (int)ci);
        return;
    }
    }
}

/* Maps a zs_scenario_validate message location to a line. */
static int validate_line(const pstate *ps, const char *msg) {
    unsigned a, b, c;
    if (sscanf(msg, "step %u pass %u call %u", &a, &b, &c) == 3 && a < ZS_MAX_STEPS && b < ZS_MAX_PASSES &&
        c < ps->cap_call_line[a][b] && ps->call_line[a][b][c])
        return ps->call_line[a][b][c];
    if (sscanf(msg, "step %u pass %u", &a, &b) == 2 && a < ZS_MAX_STEPS && b < ZS_MAX_PASSES && ps->pass_line[a][b])
        return ps->pass_line[a][b];
    if (sscanf(msg, "step %u", &a) == 1 && a < ZS_MAX_STEPS && ps->step_line[a]) return ps->step_line[a];
    if (sscanf(msg, "module %u", &a) == 1 && a < ps->cap_mod_line && ps->mod_line[a]) return ps->mod_line[a];
    if (sscanf(msg, "param %u", &a) == 1 && a < ps->cap_par_line && ps->par_line[a]) return ps->par_line[a];
    if (sscanf(msg, "use %u", &a) == 1 && a < ps->cap_use_line && ps->use_line[a]) return ps->use_line[a];
    if (sscanf(msg, "edit %u", &a) == 1 && a < ZS_MAX_RANK_EDITS && ps->edit_line[a]) return ps->edit_line[a];
    if (strstr(msg, "rank edits") && ps->edit_line[0]) return ps->edit_line[0];
    return ps->cfg_line ? ps->cfg_line : 1;
}

int zs_scn_parse(const char *text, size_t len, zs_scenario *out, zs_scn_expect *exp, zs_scn_error *err) {
    if (err) memset(err, 0, sizeof *err);
    if (exp) memset(exp, 0, sizeof *exp);
    if (!out || (!text && len)) {
        if (err) snprintf(err->msg, sizeof err->msg, "invalid argument");
        return -1;
    }
    /* a leading UTF-8 byte order mark (editors on Windows write one) is
     * not part of the text */
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
        text += 3;
        len -= 3;
    }
    pstate *ps = calloc(1, sizeof *ps);
    if (!ps) {
        if (err) snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    ps->text = text;
    ps->len = len;
    ps->s = out;
    ps->exp = exp;
    ps->err = err;
    ps->cur_step = -1;
    ps->cur_pass = -1;

    /* defaults: zs_scenario_init's config, nothing else (the storage kept) */
    if (zs_scenario_init(out)) {
        if (err) snprintf(err->msg, sizeof err->msg, "out of memory");
        ps_free(ps);
        return -1;
    }
    out->n_modules = out->n_params = out->n_uses = 0;
    for (unsigned i = 0; i < ZS_MAX_STEPS; i++) {
        out->step[i].kind = 0;
        out->step[i].n_passes = 0;
        for (unsigned k = 0; k < ZS_MAX_PASSES; k++) {
            out->step[i].pass[k].n_calls = 0;
            out->step[i].pass[k].loss_mask = 0;
        }
    }
    out->n_steps = 0;
    out->n_order = 0;
    memset(out->order, 0, sizeof out->order);
    out->n_edits = 0;
    memset(out->edit, 0, sizeof out->edit);

    size_t pos = 0;
    int line = 0;
    while (pos < len && !ps->failed) {
        size_t e = pos;
        while (e < len && text[e] != '\n') e++;
        line++;
        ps->line = line;
        if (tokenize(ps, text + pos, e - pos) == 0 && ps->nt > 0) statement(ps);
        pos = e + 1;
    }
    /* end of input: the line after a final line end */
    int eof_line = (len && text[len - 1] == '\n') ? line + 1 : (line ? line : 1);
    ps->line = eof_line;
    while (ps->sp > 0 && !ps->failed) pop_frame(ps);
    if (!ps->failed) {
        if (!ps->have_root)
            fail_at(ps, eof_line, 1, "no module tree (expected a 'module' line)");
        else if (out->n_steps == 0)
            fail_at(ps, eof_line, 1, "no step (expected a 'step' line)");
    }
    if (!ps->failed) {
        char msg[200];
        if (zs_scenario_validate(out, msg, sizeof msg) != 0) fail_at(ps, validate_line(ps, msg), 1, "%s", msg);
    }
    if (!ps->failed && exp) {
        /* an expect line names the profiles its verdicts hold under: the
         * scenario's, unless the line says otherwise */
        int any = 0;
        for (unsigned p = 0; p < 4; p++) any |= exp->have[p];
        if (any || exp->have_torch || exp->have_ds) {
            if (!exp->have_torch) exp->torch = out->cfg.torch_profile;
            if (!exp->have_ds) exp->ds = out->cfg.ds_profile;
            exp->have_torch = exp->have_ds = 1;
        }
    }
    int rc = ps->failed ? -1 : 0;
    ps_free(ps);
    return rc;
}

void zs_scn_expect_apply(const zs_scn_expect *exp, zs_scenario *s) {
    if (!exp || !s) return;
    if (exp->have_torch && exp->torch >= 0 && exp->torch < ZS_TORCH_PROFILES)
        s->cfg.torch_profile = (uint8_t)exp->torch;
    if (exp->have_ds && exp->ds >= 0 && exp->ds < ZS_DS_PROFILES) s->cfg.ds_profile = (uint8_t)exp->ds;
}

/* ------------------------------------------------------------------ */
/* Printer                                                              */
/* ------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
}

static void sb_indent(sbuf *b, int n) {
    for (int i = 0; i < n; i++) sb_printf(b, "  ");
}

static const char *pname_of(const char *name) { return zs_scn_name_valid(name) ? name : "_"; }

static void print_modref(sbuf *b, const zs_scenario *s, unsigned m) {
    const char *n = s->mod[m].name;
    if (zs_scn_name_valid(n)) {
        unsigned cnt = 0;
        for (unsigned k = 0; k < s->n_modules; k++)
            if (!strncmp(s->mod[k].name, n, ZS_NAME_LEN)) cnt++;
        if (cnt == 1) {
            sb_printf(b, "%s", n);
            return;
        }
    }
    sb_printf(b, "@%u", m);
}

static void print_parref(sbuf *b, const zs_scenario *s, unsigned p) {
    const char *n = s->par[p].name;
    if (zs_scn_name_valid(n)) {
        unsigned cnt = 0;
        for (unsigned k = 0; k < s->n_params; k++)
            if (!strncmp(s->par[k].name, n, ZS_NAME_LEN)) cnt++;
        if (cnt == 1) {
            sb_printf(b, "%s", n);
            return;
        }
    }
    sb_printf(b, "@%u", p);
}

static void print_u64(sbuf *b, uint64_t v) {
    if (v == ZS_INF)
        sb_printf(b, "inf");
    else
        sb_printf(b, "%llu", (unsigned long long)v);
}

/* position of call c among its caller's children */
static unsigned child_ordinal(const zs_pass *p, unsigned c) {
    unsigned par = p->calls[c].parent, k = 0;
    for (unsigned j = par + 1; j < c; j++)
        if (p->calls[j].parent == par) k++;
    return k;
}

static void print_ref(sbuf *b, const zs_pass *p, const zs_ref *r) {
    switch (r->kind) {
    case ZS_REF_BATCH: sb_printf(b, "batch"); break;
    case ZS_REF_BATCH_RG: sb_printf(b, "batch_rg"); break;
    case ZS_REF_ARG: sb_printf(b, "arg%u", r->index); break;
    default: sb_printf(b, "out%u.%u%s", child_ordinal(p, r->call), r->index, r->raw ? ".raw" : ""); break;
    }
    if (r->detach) sb_printf(b, ".detach");
}

static void print_call(sbuf *b, const zs_scenario *s, const zs_pass *p, unsigned c, int depth) {
    const zs_call *cl = &p->calls[c];
    sb_indent(b, depth);
    sb_printf(b, "call ");
    print_modref(b, s, cl->module);
    sb_printf(b, "(");
    for (unsigned i = 0; i < (unsigned)cl->n_in + cl->n_kw && i < ZS_MAX_IN + ZS_MAX_KW; i++) {
        if (i) sb_printf(b, ", ");
        if (i >= cl->n_in) sb_printf(b, "kw=");
        print_ref(b, p, i < cl->n_in ? &cl->in[i] : &cl->kw[i - cl->n_in]);
        for (unsigned k = 0; k < cl->n_mix && k < ZS_MAX_MIX; k++)
            if (cl->mix[k].slot == i) {
                sb_printf(b, " + ");
                if (cl->mix[k].ref.kind == ZS_REF_PARAM) {
                    sb_printf(b, "param(");
                    print_parref(b, s, cl->mix[k].ref.call);
                    sb_printf(b, ")");
                    continue;
                }
                print_ref(b, p, &cl->mix[k].ref);
            }
    }
    sb_printf(b, ")");
    if (cl->n_out) sb_printf(b, " -> %u", cl->n_out);
    if (cl->out_alias) {
        sb_printf(b, " alias(");
        for (unsigned j = 0, f = 0; j < ZS_MAX_OUT; j++)
            if ((cl->out_alias >> j) & 1u) {
                sb_printf(b, "%s%u=", f++ ? ", " : "", j);
                print_ref(b, p, &cl->alias[j]);
            }
        sb_printf(b, ")");
    }
    if (cl->out_norg) {
        sb_printf(b, " nograd(");
        for (unsigned j = 0, f = 0; j < 8; j++)
            if ((cl->out_norg >> j) & 1u) sb_printf(b, "%s%u", f++ ? ", " : "", j);
        sb_printf(b, ")");
    }
    if (cl->n_use) {
        sb_printf(b, " use(");
        for (unsigned i = 0; i < cl->n_use; i++) {
            if (i) sb_printf(b, ", ");
            print_ref(b, p, &cl->use[i]);
        }
        sb_printf(b, ")");
    }
    if (cl->op_nosave) sb_printf(b, " nosave");
    if (cl->flags & ZS_CALL_NO_GRAD) sb_printf(b, " no_grad");
    if (cl->flags & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE))
        sb_printf(b, " ckpt=%s%s", (cl->flags & ZS_CALL_CKPT_BODY) ? "body-" : "",
                  (cl->flags & ZS_CALL_CKPT_RE) ? "reentrant" : "non-reentrant");
    if (cl->flags & ZS_CALL_RAISE) {
        if (cl->catcher == ZS_NONE) {
            sb_printf(b, " raise=outside");
        } else {
            unsigned k = 1;
            for (unsigned a = cl->parent; a != ZS_NONE && a != cl->catcher; a = p->calls[a].parent) k++;
            sb_printf(b, " raise=up%u", k);
        }
    }
    sb_printf(b, "\n");
    /* calls are in pre-order: c's subtree is the run of later calls whose
     * parent is c or inside it, so the scan stops at its end */
    for (unsigned j = c + 1; j < p->n_calls && p->calls[j].parent != ZS_NONE && p->calls[j].parent >= c; j++)
        if (p->calls[j].parent == c) print_call(b, s, p, j, depth + 1);
}

static void print_loss(sbuf *b, uint8_t mask) {
    if (!mask) return;
    sb_printf(b, " loss=");
    int first = 1;
    for (unsigned j = 0; j < 8; j++)
        if (mask & (1u << j)) {
            sb_printf(b, first ? "%u" : ",%u", j);
            first = 0;
        }
}

static void print_edit(sbuf *b, const zs_scenario *s, const zs_rank_edit *e) {
    const zs_step *st = &s->step[e->step];
    sb_printf(b, "rank %u step %u", e->rank, e->step);
    if (e->kind == ZS_EDIT_SKIP_STEP) {
        sb_printf(b, " skip-step\n");
        return;
    }
    if (st->n_passes > 1) sb_printf(b, " pass %u", e->pass);
    const zs_pass *p = &st->pass[e->pass];
    unsigned m = p->calls[e->call].module, cnt = 0, occ = 0;
    for (unsigned c = 0; c < p->n_calls; c++)
        if (p->calls[c].module == m) {
            if (c < e->call) occ++;
            cnt++;
        }
    sb_printf(b, " call ");
    print_modref(b, s, m);
    if (cnt > 1) sb_printf(b, ":%u", occ);
    sb_printf(b, " %s", zs_edit_kind_name(e->kind));
    if (e->kind == ZS_EDIT_ROUTE) {
        sb_printf(b, " ");
        print_modref(b, s, e->module);
    }
    sb_printf(b, "\n");
}

char *zs_scn_print(const zs_scenario *s, const zs_scn_expect *exp) {
    if (!s || zs_scenario_validate(s, NULL, 0) != 0) return NULL;
    sbuf b = {0};
    if (exp) {
        int any = 0;
        for (unsigned p = 0; p < 4; p++) any |= exp->have[p];
        if (any) {
            sb_printf(&b, "expect");
            sb_printf(&b, " torch=%s deepspeed=%s",
                      zs_torch_profile_name(exp->have_torch && exp->torch >= 0 && exp->torch < ZS_TORCH_PROFILES
                                                ? (unsigned)exp->torch
                                                : s->cfg.torch_profile),
                      zs_ds_profile_name(exp->have_ds && exp->ds >= 0 && exp->ds < ZS_DS_PROFILES ? (unsigned)exp->ds
                                                                                                  : s->cfg.ds_profile));
            for (unsigned p = 0; p < 4; p++)
                if (exp->have[p]) sb_printf(&b, " %s=%s", zs_policy_name(p), zs_scn_verdict_name(exp->verdict[p]));
            sb_printf(&b, "\n");
        }
    }
    /* config: keys that differ from zs_scenario_init */
    {
        zs_scenario d;
        memset(&d, 0, sizeof d);
        zs_decode(NULL, 0, &d); /* zs_scenario_init's config (set even if out of memory) */
        zs_config dcfg = d.cfg;
        zs_scenario_free(&d);
        const zs_config *c = &s->cfg, *dc = &dcfg;
        sbuf cb = {0};
        if (c->policy != dc->policy) sb_printf(&cb, " policy=%s", zs_policy_name(c->policy));
        if (c->world_size != dc->world_size) sb_printf(&cb, " world_size=%u", c->world_size);
        if (c->rank != dc->rank) sb_printf(&cb, " rank=%u", c->rank);
        if (c->all_ranks) sb_printf(&cb, " ranks=all");
        if (c->order_mode != dc->order_mode)
            sb_printf(&cb, " order=%s", c->order_mode == ZS_ORDER_FUZZED ? "fuzzed" : "engine");
        if (c->deferred != dc->deferred) sb_printf(&cb, " deferred=%u", c->deferred);
        if (c->progress_every != dc->progress_every) sb_printf(&cb, " progress_every=%u", c->progress_every);
        for (int k = 0; k < ZS_TH_COUNT; k++) {
            uint64_t v = *zs_config_threshold((zs_config *)c, k);
            uint64_t dv = *zs_config_threshold((zs_config *)dc, k);
            if (v != dv) {
                sb_printf(&cb, " %s=", zs_threshold_names[k]);
                print_u64(&cb, v);
            }
        }
        if (c->verify_collectives) sb_printf(&cb, " verify_collectives=1");
        if (c->torch_profile != dc->torch_profile) sb_printf(&cb, " torch=%s", zs_torch_profile_name(c->torch_profile));
        if (c->ds_profile != dc->ds_profile) sb_printf(&cb, " deepspeed=%s", zs_ds_profile_name(c->ds_profile));
        if (cb.oom) b.oom = 1;
        if (cb.n) sb_printf(&b, "config%s\n", cb.p);
        free(cb.p);
    }
    for (unsigned m = 0; m < s->n_modules; m++) {
        sb_indent(&b, zs_module_depth(s, m));
        sb_printf(&b, "module %s%s%s\n", pname_of(s->mod[m].name), (s->mod[m].flags & ZS_MOD_Z3_LEAF) ? " z3_leaf" : "",
                  (s->mod[m].flags & ZS_MOD_GATHER_ALWAYS) ? " gather_always" : "");
    }
    for (unsigned p = 0; p < s->n_params; p++) {
        const zs_param *pp = &s->par[p];
        sb_printf(&b, "param %s owner=", pname_of(pp->name));
        print_modref(&b, s, pp->owner);
        sb_printf(&b, " numel=%u", pp->numel);
        if (pp->elem_size != 4) sb_printf(&b, " elem_size=%u", pp->elem_size);
        if (pp->flags & ZS_PARAM_FROZEN) sb_printf(&b, " frozen");
        sb_printf(&b, "\n");
    }
    for (unsigned u = 0; u < s->n_uses; u++) {
        sb_printf(&b, "use ");
        print_modref(&b, s, s->use[u].module);
        sb_printf(&b, " ");
        print_parref(&b, s, s->use[u].param);
        sb_printf(&b, "\n");
    }
    for (unsigned i = 0; i < s->n_steps; i++) {
        const zs_step *st = &s->step[i];
        sb_printf(&b, "step %s", zs_step_kind_name(st->kind));
        if (zs_step_multi_pass(st->kind)) {
            sb_printf(&b, "\n");
            for (unsigned q = 0; q < st->n_passes; q++) {
                sb_printf(&b, "  pass");
                print_loss(&b, st->pass[q].loss_mask);
                sb_printf(&b, "\n");
                print_call(&b, s, &st->pass[q], 0, 2);
            }
        } else {
            print_loss(&b, st->pass[0].loss_mask);
            sb_printf(&b, "\n");
            print_call(&b, s, &st->pass[0], 0, 1);
        }
    }
    for (unsigned k = 0; k < s->n_edits; k++) print_edit(&b, s, &s->edit[k]);
    if (s->cfg.order_mode == ZS_ORDER_FUZZED) {
        /* trailing zero bytes mean what missing ones do (engine order) */
        unsigned no = s->n_order;
        while (no > 0 && s->order[no - 1] == 0) no--;
        for (unsigned k = 0; k < no; k += 16) {
            sb_printf(&b, "order_bytes");
            for (unsigned q = k; q < no && q < k + 16; q++) sb_printf(&b, " %u", s->order[q]);
            sb_printf(&b, "\n");
        }
    }
    if (!b.p) sb_printf(&b, "%s", "");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

int zs_scn_fprint(FILE *f, const zs_scenario *s, const zs_scn_expect *exp) {
    char *t = zs_scn_print(s, exp);
    if (!t) return -1;
    size_t n = strlen(t);
    int rc = fwrite(t, 1, n, f) == n ? 0 : -1;
    free(t);
    return rc;
}

int zs_scn_line_count(const zs_scenario *s) {
    char *t = zs_scn_print(s, NULL);
    if (!t) return 0;
    int n = 0;
    for (const char *q = t; *q; q++)
        if (*q == '\n') n++;
    free(t);
    return n;
}
