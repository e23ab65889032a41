/*
 * export.c - a scenario as a standalone Python reproducer (see export.h).
 *
 * The script is fuzz/export_template.py (embedded at build time as
 * export_template.h) with two parts filled in here: the header docstring
 * (source, simulator verdict, how to run) and the scenario (model builder,
 * thresholds, external uses, the per-call program table).  Template lines
 * between "#@deepspeed" / "#@torch" and "#@end" are kept for that target
 * only.
 */
#include "export.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sim.h"
#include "export_template.h" /* static const char zs_export_template[] */

/* Total numel above which the DeepSpeed runs are scaled down, as
 * `zofuzz traces --ds` does for tools/deepspeed_oracle.py (DS_MAX_TOTAL_NUMEL). */
#define EXPORT_MAX_TOTAL_NUMEL (1ull << 22)
/* DeepSpeed's "infinite" threshold in the script (deepspeed_oracle.py's). */
#define EXPORT_BIG             "10**15"

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->n + n + 1 > cap) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sb_put(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)n);
    free(big);
}

/* a Python string literal (names are [A-Za-z0-9_.-@]; escape anyway) */
static void sb_pystr(sbuf *b, const char *s) {
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            sb_printf(b, "\\x%02x", c);
        else
            sb_put(b, (const char *)&c, 1);
    }
    sb_put(b, "\"", 1);
}

int zs_export_target_from_name(const char *name) {
    if (!strcmp(name, "torch")) return ZS_EXPORT_TORCH;
    if (!strcmp(name, "deepspeed")) return ZS_EXPORT_DEEPSPEED;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

/* attribute names a Block must keep: Python keywords, torch.nn.Module's
 * own attributes and methods, the template's and DeepSpeed's */
static const char *const reserved[] = {"False",
                                       "None",
                                       "True",
                                       "and",
                                       "as",
                                       "assert",
                                       "async",
                                       "await",
                                       "break",
                                       "class",
                                       "continue",
                                       "def",
                                       "del",
                                       "elif",
                                       "else",
                                       "except",
                                       "finally",
                                       "for",
                                       "from",
                                       "global",
                                       "if",
                                       "import",
                                       "in",
                                       "is",
                                       "lambda",
                                       "nonlocal",
                                       "not",
                                       "or",
                                       "pass",
                                       "raise",
                                       "return",
                                       "try",
                                       "while",
                                       "with",
                                       "yield",
                                       "match",
                                       "case",
                                       "type",
                                       "forward",
                                       "training",
                                       "train",
                                       "eval",
                                       "parameters",
                                       "named_parameters",
                                       "modules",
                                       "named_modules",
                                       "children",
                                       "named_children",
                                       "buffers",
                                       "named_buffers",
                                       "apply",
                                       "cuda",
                                       "cpu",
                                       "xpu",
                                       "ipu",
                                       "mtia",
                                       "to",
                                       "float",
                                       "double",
                                       "half",
                                       "bfloat16",
                                       "state_dict",
                                       "load_state_dict",
                                       "zero_grad",
                                       "requires_grad_",
                                       "share_memory",
                                       "extra_repr",
                                       "add_module",
                                       "register_module",
                                       "register_buffer",
                                       "register_parameter",
                                       "get_submodule",
                                       "set_submodule",
                                       "get_parameter",
                                       "get_buffer",
                                       "get_extra_state",
                                       "set_extra_state",
                                       "dump_patches",
                                       "call_super_init",
                                       "compile",
                                       "to_empty",
                                       "pset",
                                       "pending",
                                       "applied_pre_backward_ref_cnt",
                                       "pre_bwd_fn",
                                       "post_bwd_fn",
                                       "model",
                                       "T_destination",
                                       NULL};

static int py_ident_ok(const char *n) {
    if (!n[0] || !((n[0] >= 'A' && n[0] <= 'Z') || (n[0] >= 'a' && n[0] <= 'z'))) return 0;
    for (const char *q = n; *q; q++)
        if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) return 0;
    if (!strncmp(n, "zo_", 3) || !strncmp(n, "ds_", 3) || !strncmp(n, "register_", 9) || !strncmp(n, "named_", 6))
        return 0;
    for (int i = 0; reserved[i]; i++)
        if (!strcmp(n, reserved[i])) return 0;
    return 1;
}

typedef char zname[ZS_NAME_LEN + 8];
typedef struct names {
    /* per module / parameter, one allocation (names_alloc, names_free) */
    zname *mod_ref;        /* .scn reference: name or @N */
    zname *mod_attr;       /* attribute on the parent */
    char (*mod_path)[512]; /* Python expression */
    zname *par_name;
    zname *par_attr;
    int fallbacks; /* attributes not from .scn names */
} names;

static int names_alloc(names *nm, unsigned n_mod, unsigned n_par) {
    memset(nm, 0, sizeof *nm);
    size_t m = n_mod ? n_mod : 1, q = n_par ? n_par : 1;
    char *a = calloc(1, m * (2 * sizeof(zname) + 512) + q * 2 * sizeof(zname));
    if (!a) return -1;
    nm->mod_path = (char(*)[512])a;
    nm->mod_ref = (zname *)(a + m * 512);
    nm->mod_attr = nm->mod_ref + m;
    nm->par_name = nm->mod_attr + m;
    nm->par_attr = nm->par_name + q;
    return 0;
}

static void names_free(names *nm) {
    free(nm->mod_path);
    memset(nm, 0, sizeof *nm);
}

/* 1 if attr is taken on module m (a child module or parameter attribute set so far) */
static int attr_taken(const zs_scenario *s, const names *nm, unsigned m, const char *attr, unsigned upto_mod,
                      unsigned upto_par) {
    for (unsigned c = 1; c < upto_mod; c++)
        if (s->mod[c].parent == m && !strcmp(nm->mod_attr[c], attr)) return 1;
    for (unsigned q = 0; q < upto_par; q++)
        if (s->par[q].owner == m && !strcmp(nm->par_attr[q], attr)) return 1;
    return 0;
}

/* A fallback attribute on module owner: prefix and id ("m7", "p3"), or,
 * where that is taken (a sibling named "m7" in the .scn), the first free
 * of "m7_1", "m7_2", ...: two modules or parameters never share one. */
static void fallback_attr(const zs_scenario *s, const names *nm, unsigned owner, char prefix, unsigned id,
                          unsigned upto_mod, unsigned upto_par, zname out) {
    snprintf(out, sizeof(zname), "%c%u", prefix, id);
    for (unsigned k = 1; attr_taken(s, nm, owner, out, upto_mod, upto_par); k++)
        snprintf(out, sizeof(zname), "%c%u_%u", prefix, id, k);
}

/* Longest attribute chain ("model.a.b...") the script writes; a module
 * whose chain would be longer is bound to a local of build_model (_m<id>)
 * and reached through it, so a deep tree still gives short lines. */
#define EXPORT_PATH_MAX 400

/* 1 if module m > 0 is bound to a local of build_model (its path has no '.') */
static int mod_is_var(const names *nm, unsigned m) { return m > 0 && !strchr(nm->mod_path[m], '.'); }

/* nm: from names_alloc (zero-filled) */
static void make_names(const zs_scenario *s, names *nm) {
    for (unsigned m = 0; m < s->n_modules; m++) {
        const char *n = s->mod[m].name;
        /* a name that more than one module carries (captured models: "query"
         * under every layer) is referenced by @id, as the .scn printer does */
        int unique = 1;
        for (unsigned o = 0; o < s->n_modules && unique; o++)
            if (o != m && !strcmp(s->mod[o].name, n)) unique = 0;
        if (n[0] && unique)
            snprintf(nm->mod_ref[m], sizeof nm->mod_ref[m], "%s", n);
        else
            snprintf(nm->mod_ref[m], sizeof nm->mod_ref[m], "@%u", m);
        if (m == 0) {
            snprintf(nm->mod_path[0], sizeof nm->mod_path[0], "model");
            continue;
        }
        /* the .scn name relative to the parent's ("h.0.ln_1" under "h.0":
         * ln_1), else its last component, else with '.'/'-' as '_' (h_0) */
        char cand[3][ZS_NAME_LEN + 8];
        const char *pn = s->mod[s->mod[m].parent].name;
        size_t pl = strlen(pn);
        const char *rel = (pl && !strncmp(n, pn, pl) && n[pl] == '.') ? n + pl + 1 : n;
        const char *last = strrchr(n, '.');
        snprintf(cand[0], sizeof cand[0], "%s", rel);
        snprintf(cand[1], sizeof cand[1], "%s", last ? last + 1 : n);
        snprintf(cand[2], sizeof cand[2], "%s", rel);
        for (char *q = cand[2]; *q; q++)
            if (*q == '.' || *q == '-') *q = '_';
        int k = 0;
        while (k < 3 && !(py_ident_ok(cand[k]) && !attr_taken(s, nm, s->mod[m].parent, cand[k], m, 0))) k++;
        if (k < 3)
            snprintf(nm->mod_attr[m], sizeof nm->mod_attr[m], "%s", cand[k]);
        else {
            fallback_attr(s, nm, s->mod[m].parent, 'm', m, m, 0, nm->mod_attr[m]);
            nm->fallbacks++;
        }
        const char *pp = nm->mod_path[s->mod[m].parent];
        if (strlen(pp) + 1 + strlen(nm->mod_attr[m]) <= EXPORT_PATH_MAX)
            snprintf(nm->mod_path[m], sizeof nm->mod_path[m], "%s.%s", pp, nm->mod_attr[m]);
        else
            snprintf(nm->mod_path[m], sizeof nm->mod_path[m], "_m%u", m);
    }
    for (unsigned q = 0; q < s->n_params; q++) {
        const char *n = s->par[q].name;
        if (n[0])
            snprintf(nm->par_name[q], sizeof nm->par_name[q], "%s", n);
        else
            snprintf(nm->par_name[q], sizeof nm->par_name[q], "p%u", q);
        const char *last = strrchr(n, '.');
        last = last ? last + 1 : n;
        if (py_ident_ok(last) && !attr_taken(s, nm, s->par[q].owner, last, s->n_modules, q))
            snprintf(nm->par_attr[q], sizeof nm->par_attr[q], "%s", last);
        else {
            fallback_attr(s, nm, s->par[q].owner, 'p', q, s->n_modules, q, nm->par_attr[q]);
            if (n[0]) nm->fallbacks++;
        }
    }
}

/* ------------------------------------------------------------------ */
/* The scenario as the script runs it                                   */
/* ------------------------------------------------------------------ */

typedef struct prep {
    zs_scenario s;     /* W=1, rank 0, immediate completion, no gather-always, scaled */
    uint64_t total;    /* total numel before scaling */
    uint64_t factor;   /* 1: not scaled */
    int changed_world; /* W was > 1 */
    int dropped_ga;    /* gather-always flags dropped */
    int fuzzed_order;
} prep;

/* 0, or -1 if out of memory (p->s to be freed either way). */
static int prepare(const zs_scenario *in, prep *p) {
    memset(p, 0, sizeof *p);
    if (zs_scenario_copy(&p->s, in)) return -1;
    zs_scenario *s = &p->s;
    p->changed_world = s->cfg.world_size > 1;
    p->fuzzed_order = s->cfg.order_mode == ZS_ORDER_FUZZED && s->n_order > 0;
    s->cfg.world_size = 1;
    s->cfg.rank = 0;
    s->cfg.deferred = 0;
    s->cfg.progress_every = 0;
    s->cfg.order_mode = ZS_ORDER_ENGINE;
    s->n_order = 0;
    for (unsigned m = 0; m < s->n_modules; m++)
        if (s->mod[m].flags & ZS_MOD_GATHER_ALWAYS) {
            s->mod[m].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
            p->dropped_ga = 1;
        }
    for (unsigned i = 0; i < s->n_params; i++) p->total += s->par[i].numel;
    p->factor = 1;
    if (p->total > EXPORT_MAX_TOTAL_NUMEL) {
        uint64_t f = (p->total + EXPORT_MAX_TOTAL_NUMEL - 1) / EXPORT_MAX_TOTAL_NUMEL;
        p->factor = f;
        for (unsigned i = 0; i < s->n_params; i++) {
            uint64_t n = s->par[i].numel / f;
            s->par[i].numel = (uint32_t)(n ? n : 1);
        }
        for (int t = 0; t < ZS_TH_COUNT; t++) {
            uint64_t *v = zs_config_threshold(&s->cfg, t);
            if (*v != ZS_INF && *v != 0) *v = *v / f ? *v / f : 1;
        }
    }
    return 0;
}

/* the simulator's verdict on s under policy, one line */
static void sim_verdict(const zs_scenario *s, int policy, char *out, size_t len) {
    zs_sim_opts o;
    zs_sim_opts_init(&o);
    o.policy = policy;
    o.stop_on_violation = 1;
    static zs_sim_result r;
    memset(&r, 0, sizeof r);
    int rc = zs_sim_run(s, &o, &r);
    if (rc < 0)
        snprintf(out, len, "setup error: %s", r.setup_msg);
    else if (r.violated)
        zs_violation_format(&r.v, out, len);
    else if (r.torch_error)
        snprintf(out, len, "all invariants hold; PyTorch raises (%s) and the run stops there", r.torch_msg);
    else
        snprintf(out, len, "all invariants hold");
}

/* ------------------------------------------------------------------ */
/* Script parts                                                         */
/* ------------------------------------------------------------------ */

/* a docstring line: no triple quotes or backslashes from file names */
static void sb_doc(sbuf *b, const char *s) {
    for (; *s; s++) {
        char c = *s;
        if (c == '\\' || c == '"') c = '\'';
        if ((unsigned char)c < 0x20) c = ' ';
        sb_put(b, &c, 1);
    }
}

static void wrap_doc(sbuf *b, const char *first, const char *text) {
    /* "first" then text wrapped at ~76 columns, continuation lines indented */
    size_t indent = strlen(first);
    sb_put(b, first, indent);
    size_t col = indent;
    const char *q = text;
    while (*q) {
        const char *e = q;
        while (*e && *e != ' ') e++;
        size_t w = (size_t)(e - q);
        if (col > indent && col + 1 + w > 78) {
            sb_put(b, "\n", 1);
            for (size_t i = 0; i < indent; i++) sb_put(b, " ", 1);
            col = indent;
        } else if (col > indent) {
            sb_put(b, " ", 1);
            col++;
        }
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(w < sizeof tmp ? w : sizeof tmp - 1), q);
        sb_doc(b, tmp);
        col += w;
        q = *e ? e + 1 : e;
    }
    sb_put(b, "\n", 1);
}

static void header(sbuf *b, const zs_scenario *orig, const prep *pp, const zs_export_opts *o) {
    int ds = o->target == ZS_EXPORT_DEEPSPEED;
    int rof = zs_policy_from_name("reset-on-forward");
    char v_rof[600], v_own[600], line[900];
    sim_verdict(&pp->s, rof, v_rof, sizeof v_rof);
    const char *src = o->source && o->source[0] ? o->source : "(no file)";
    const char *script = o->script && o->script[0] ? o->script : "repro.py";
    if (strrchr(script, '/')) script = strrchr(script, '/') + 1;
    sb_printf(b, "#!/usr/bin/env python3\n\"\"\"");
    if (ds)
        sb_printf(b, "A zoffload scenario on real DeepSpeed ZeRO stage 3 (CPU, gloo, world size 1).\n\n");
    else
        sb_printf(b, "A zoffload scenario on real PyTorch autograd with DeepSpeed-shaped stage-3 hooks.\n\n");
    wrap_doc(b, "Source:     ", src);
    if (o->command) wrap_doc(b, "Made by:    ", o->command);
    snprintf(line, sizeof line, "policy reset-on-forward (DeepSpeed upstream's counters), torch %s, deepspeed %s: %s",
             zs_torch_profile_name(pp->s.cfg.torch_profile), zs_ds_profile_name(pp->s.cfg.ds_profile), v_rof);
    wrap_doc(b, "Simulator:  ", line);
    if (orig->cfg.policy != (unsigned)rof) {
        sim_verdict(orig, orig->cfg.policy, v_own, sizeof v_own);
        snprintf(line, sizeof line, "(under the scenario's own policy %s: %s)", zs_policy_name(orig->cfg.policy),
                 v_own);
        wrap_doc(b, "            ", line);
    }
    if (ds) {
        sb_printf(b, "Run:        pip install torch deepspeed; DS_ACCELERATOR=cpu python %s\n", script);
        sb_printf(b, "            (--hooks-only: DeepSpeed's bare hooks, deepspeed.initialize without\n"
                     "            an optimizer)\n");
    } else {
        sb_printf(b, "Run:        pip install torch; python %s\n", script);
    }
    sb_printf(b,
              "Exit:       1 and a last line \"VIOLATION I<n>: ...\" when an invariant is\n"
              "            violated (or \"EXCEPTION ...\" when %s raises), else 0 and\n"
              "            \"no invariant violation on ...\".\n\n",
              ds ? "torch or DeepSpeed" : "torch");
    if (ds) {
        sb_printf(b, "Checked: I1 ds_grads_remaining never negative; I3 every non-persistent\n"
                     "parameter NOT_AVAILABLE after each backward (engine.backward), eval forward\n"
                     "and optimizer step (DeepSpeed's \"expected to be released\" error counts);\n"
                     "I4 a module's op only computes with AVAILABLE parameters.\n");
        if (orig->cfg.ds_profile != ZS_DS_019)
            sb_printf(b, "The scenario models DeepSpeed %s (hooks only): compare with --hooks-only.\n",
                      zs_ds_profile_name(orig->cfg.ds_profile));
    } else {
        sb_printf(b, "Checked: I1 ds_grads_remaining never negative (counters kept as DeepSpeed's\n"
                     "hooks keep them: reset to 0 in hook D on every call).\n");
    }
    if (pp->changed_world || pp->dropped_ga || pp->fuzzed_order || pp->factor > 1 || o->rank >= 0)
        sb_printf(b, "\nAdapted from the scenario:\n");
    if (o->rank >= 0)
        sb_printf(b, "- the program of rank %d of an all-ranks scenario (W=%u)\n", o->rank, orig->cfg.world_size);
    if (pp->changed_world) sb_printf(b, "- world size %u -> 1 (one process)\n", orig->cfg.world_size);
    if (pp->dropped_ga) sb_printf(b, "- gather-always modules (a zoffload extension) are ordinary modules here\n");
    if (pp->fuzzed_order) sb_printf(b, "- the fuzzed backward order is not reproducible: autograd's own order\n");
    if (pp->factor > 1)
        sb_printf(b,
                  "- numels and finite thresholds divided by %llu: %llu elements in all is over\n"
                  "  2^22 (as `zofuzz traces --ds` scales for tools/deepspeed_oracle.py)\n",
                  (unsigned long long)pp->factor, (unsigned long long)pp->total);
    sb_printf(b, "\"\"\"\n");
}

static void ref_str(const zs_pass *p, const uint32_t *pos, const zs_ref *r, char *out, size_t len) {
    switch (r->kind) {
    case ZS_REF_BATCH: snprintf(out, len, "batch"); break;
    case ZS_REF_BATCH_RG: snprintf(out, len, "batch_rg"); break;
    case ZS_REF_ARG: snprintf(out, len, "arg%u", r->index); break;
    case ZS_REF_PARAM: snprintf(out, len, "param%u", r->call); break; /* a mixed input's term */
    default: snprintf(out, len, "out%u.%u%s", pos[r->call], r->index, r->raw ? ".raw" : ""); break;
    }
    (void)p;
    if (r->detach) strncat(out, ".detach", len - strlen(out) - 1);
}

static void scenario_part(sbuf *b, const prep *pp, const names *nm, int ds) {
    const zs_scenario *s = &pp->s;
    sb_printf(b, "# ----------------------------------------------------------------------\n"
                 "# The scenario\n"
                 "# ----------------------------------------------------------------------\n\n");
    /* thresholds */
    sb_printf(b, "# DeepSpeed's stage3_* settings, in elements");
    if (!ds) sb_printf(b, " (not used by this torch-only script)");
    sb_printf(b, "\nTHRESHOLDS = {\n");
    for (int t = 0; t < ZS_TH_COUNT; t++) {
        uint64_t v = *zs_config_threshold((zs_config *)&s->cfg, t);
        if (v == ZS_INF)
            sb_printf(b, "    \"%s\": %s,  # infinite\n", zs_threshold_names[t], EXPORT_BIG);
        else
            sb_printf(b, "    \"%s\": %llu,\n", zs_threshold_names[t], (unsigned long long)v);
    }
    sb_printf(b, "}\n\n");

    /* the model */
    sb_printf(b,
              "\ndef build_model():\n"
              "    \"\"\"The module tree (ids in registration order, as named_modules() lists\n"
              "    them), then the parameters (registered after every module, in .scn order;\n"
              "    float32, numel as in the scenario%s).\"\"\"\n",
              pp->factor > 1 ? " divided by the scaling factor above" : "");
    for (unsigned m = 0; m < s->n_modules; m++) {
        char cmt[128] = "";
        if (s->mod[m].flags & ZS_MOD_Z3_LEAF) snprintf(cmt, sizeof cmt, ", z3 leaf");
        sb_printf(b, "    %s = Block(", nm->mod_path[m]);
        sb_pystr(b, nm->mod_ref[m]);
        sb_printf(b, ", %u)  # module %u%s\n", m, m, cmt);
        if (mod_is_var(nm, m))
            sb_printf(b, "    %s.%s = %s\n", nm->mod_path[s->mod[m].parent], nm->mod_attr[m], nm->mod_path[m]);
    }
    for (unsigned q = 0; q < s->n_params; q++) {
        const zs_param *p = &s->par[q];
        sb_printf(b, "    %s.%s = torch.nn.Parameter(torch.zeros(%u)%s)  # param %u %s%s\n", nm->mod_path[p->owner],
                  nm->par_attr[q], p->numel, (p->flags & ZS_PARAM_FROZEN) ? ", requires_grad=False" : "", q,
                  nm->par_name[q], (p->flags & ZS_PARAM_FROZEN) ? " (frozen)" : "");
    }
    sb_printf(b, "    modules = [");
    for (unsigned m = 0; m < s->n_modules; m++) sb_printf(b, "%s%s", m ? ", " : "", nm->mod_path[m]);
    sb_printf(b, "]\n    params = [");
    for (unsigned q = 0; q < s->n_params; q++)
        sb_printf(b, "%s%s.%s", q ? ", " : "", nm->mod_path[s->par[q].owner], nm->par_attr[q]);
    sb_printf(b, "]\n    return modules, params\n\n\n");
    sb_printf(b, "MODULE_IDS = {");
    for (unsigned m = 0; m < s->n_modules; m++) {
        sb_printf(b, "%s", m ? ", " : "");
        sb_pystr(b, nm->mod_ref[m]);
        sb_printf(b, ": %u", m);
    }
    sb_printf(b, "}\nPARAM_NAMES = [");
    for (unsigned q = 0; q < s->n_params; q++) {
        sb_printf(b, "%s", q ? ", " : "");
        sb_pystr(b, nm->par_name[q]);
    }
    sb_printf(b, "]\n");
    sb_printf(b, "# z3 leaf modules (deepspeed.utils.set_z3_leaf_modules): fetch their whole\n"
                 "# subtree at once; the modules inside get no hooks\nZ3_LEAF = [");
    int first = 1;
    for (unsigned m = 0; m < s->n_modules; m++)
        if (s->mod[m].flags & ZS_MOD_Z3_LEAF) {
            sb_printf(b, "%s%u", first ? "" : ", ", m);
            first = 0;
        }
    sb_printf(b,
              "]\n# tied / external parameter uses (module, param): the module's op also reads\n"
              "# the parameter%s\nEXTERNAL = [",
              ds ? "; deepspeed.zero.register_external_parameter(module, param)" : "");
    for (unsigned u = 0; u < s->n_uses; u++)
        sb_printf(b, "%s(%u, %u)", u ? ", " : "", s->use[u].module, s->use[u].param);
    sb_printf(b, "]");
    if (s->n_uses) {
        sb_printf(b, "  # ");
        for (unsigned u = 0; u < s->n_uses && u < 8; u++)
            sb_printf(b, "%s%s uses %s", u ? ", " : "", nm->mod_ref[s->use[u].module], nm->par_name[s->use[u].param]);
        if (s->n_uses > 8) sb_printf(b, ", ...");
    }
    sb_printf(b, "\n\n");

    /* the program */
    sb_printf(b, "# The program: per step, its passes (micro-batches); per pass, the root outputs\n"
                 "# summed into the loss and the module calls in the order their pre-forward\n"
                 "# hooks fire.  A call's body makes the calls whose caller it is, in order, then\n"
                 "# runs the module's own op.  A row:\n"
                 "#   (call, caller, module, inputs, n_out, op_uses, flags)\n"
                 "#   inputs   module(*inputs), references in the caller's scope\n"
                 "#   op_uses  tensors the module's op consumes (with its parameters), in the\n"
                 "#            call's own scope; the op makes n_out outputs\n"
                 "#   refs     batch (requires_grad=False), batch_rg (a leaf, requires_grad=True),\n"
                 "#            argI (input I of the enclosing call as hook D wrapped it),\n"
                 "#            outK.J (output J of the K-th child call of the enclosing call),\n"
                 "#            REF.detach (x.detach()),\n"
                 "#            outK.J.raw (that output as the module made it, cached on self:\n"
                 "#              read by the caller, it bypasses the module's output hook C)\n"
                 "#            paramP (in a \"+\" term: the caller's op reads parameter P itself)\n"
                 "#   flags    no_grad: the caller makes the call under torch.no_grad()\n"
                 "#            nograd=J: output J never requires grad (detached / integer indices)\n"
                 "#            aliasJ=REF: output J is REF itself (returned as is, no op)\n"
                 "#            nosave: the op saves no tensor (no checkpoint recompute from it)\n"
                 "#            ckpt=reentrant / ckpt=non-reentrant: the caller makes it as\n"
                 "#              torch.utils.checkpoint.checkpoint(module, *inputs, use_reentrant=...)\n"
                 "#            ckpt=body-reentrant / ckpt=body-non-reentrant: the module's forward\n"
                 "#              runs its body as checkpoint(body, *inputs, use_reentrant=...), its\n"
                 "#              hooks outside the region (transformers' gradient_checkpointing_enable)\n"
                 "#            raise=upK: the forward raises after its child calls; the body of\n"
                 "#              the K-th enclosing call catches it and goes on\n"
                 "#            raise=outside: the training loop catches it (no backward)\n"
                 "# Step kinds: train (forward, backward, step), eval (forward under no_grad,\n"
                 "# eval mode), retain (backward(retain_graph=True), backward, step), accum\n"
                 "# (forward+backward per pass, one step), interleave (all forwards, then all\n"
                 "# backwards, one step).\n");
    sb_printf(b, "STEPS = [\n");
    for (unsigned si = 0; si < s->n_steps; si++) {
        const zs_step *st = &s->step[si];
        sb_printf(b, "    (\"%s\", [  # step %u\n", zs_step_kind_name(st->kind), si);
        for (unsigned pi = 0; pi < st->n_passes; pi++) {
            const zs_pass *p = &st->pass[pi];
            /* pos[c]: c's number among its caller's child calls */
            uint32_t *pos = calloc((size_t)2 * p->n_calls + 1, sizeof *pos);
            if (!pos) {
                b->oom = 1;
                return;
            }
            uint32_t *nkids = pos + p->n_calls;
            for (unsigned c = 0; c < p->n_calls; c++) {
                unsigned par = p->calls[c].parent >= p->n_calls ? p->n_calls : p->calls[c].parent;
                pos[c] = nkids[par]++;
            }
            sb_printf(b, "        dict(loss=[");
            int f2 = 1;
            for (unsigned j = 0; j < 8; j++)
                if (p->loss_mask & (1u << j)) {
                    sb_printf(b, "%s%u", f2 ? "" : ", ", j);
                    f2 = 0;
                }
            sb_printf(b, "], calls=[  # pass %u\n", pi);
            for (unsigned c = 0; c < p->n_calls; c++) {
                const zs_call *cl = &p->calls[c];
                int depth = zs_call_depth(p, c);
                char rs[48];
                sb_printf(b, "            %*s(%u, ", depth * 2, "", c);
                if (cl->parent == ZS_NONE)
                    sb_printf(b, "None, ");
                else
                    sb_printf(b, "%u, ", cl->parent);
                sb_pystr(b, nm->mod_ref[cl->module]);
                sb_printf(b, ", [");
                for (unsigned i = 0; i < (unsigned)cl->n_in + cl->n_kw; i++) {
                    /* "kw=" a keyword input; "+" the terms of a mixed input */
                    ref_str(p, pos, i < cl->n_in ? &cl->in[i] : &cl->kw[i - cl->n_in], rs, sizeof rs);
                    sb_printf(b, "%s\"%s%s", i ? ", " : "", i < cl->n_in ? "" : "kw=", rs);
                    for (unsigned k = 0; k < cl->n_mix; k++)
                        if (cl->mix[k].slot == i) {
                            ref_str(p, pos, &cl->mix[k].ref, rs, sizeof rs);
                            sb_printf(b, "+%s", rs);
                        }
                    sb_printf(b, "\"");
                }
                sb_printf(b, "], %u, [", cl->n_out);
                for (unsigned i = 0; i < cl->n_use; i++) {
                    ref_str(p, pos, &cl->use[i], rs, sizeof rs);
                    sb_printf(b, "%s\"%s\"", i ? ", " : "", rs);
                }
                sb_printf(b, "], [");
                int nf = 0;
                if (cl->flags & ZS_CALL_NO_GRAD) sb_printf(b, "%s\"no_grad\"", nf++ ? ", " : "");
                if (cl->op_nosave) sb_printf(b, "%s\"nosave\"", nf++ ? ", " : "");
                for (unsigned j = 0; j < cl->n_out; j++)
                    if ((cl->out_norg >> j) & 1u) sb_printf(b, "%s\"nograd=%u\"", nf++ ? ", " : "", j);
                for (unsigned j = 0; j < cl->n_out; j++)
                    if ((cl->out_alias >> j) & 1u) {
                        ref_str(p, pos, &cl->alias[j], rs, sizeof rs);
                        sb_printf(b, "%s\"alias%u=%s\"", nf++ ? ", " : "", j, rs);
                    }
                if (cl->flags & (ZS_CALL_CKPT_RE | ZS_CALL_CKPT_NRE))
                    sb_printf(b, "%s\"ckpt=%s%s\"", nf++ ? ", " : "", (cl->flags & ZS_CALL_CKPT_BODY) ? "body-" : "",
                              (cl->flags & ZS_CALL_CKPT_RE) ? "reentrant" : "non-reentrant");
                if (cl->flags & ZS_CALL_RAISE) {
                    if (cl->catcher == ZS_NONE)
                        sb_printf(b, "%s\"raise=outside\"", nf++ ? ", " : "");
                    else
                        sb_printf(b, "%s\"raise=up%d\"", nf++ ? ", " : "", depth - zs_call_depth(p, cl->catcher));
                }
                sb_printf(b, "]),\n");
            }
            free(pos);
            sb_printf(b, "        ]),\n");
        }
        sb_printf(b, "    ]),\n");
    }
    sb_printf(b, "]\n");
}

char *zs_export_script(const zs_scenario *s, const zs_export_opts *o, char *err, size_t errlen) {
    char verr[256];
    if (s->cfg.all_ranks && s->n_edits) {
        snprintf(err, errlen, "an all-ranks scenario with rank edits: export one rank's program");
        return NULL;
    }
    if (zs_scenario_validate(s, verr, sizeof verr) != 0) {
        snprintf(err, errlen, "invalid scenario: %s", verr);
        return NULL;
    }
    if (o->target != ZS_EXPORT_TORCH && o->target != ZS_EXPORT_DEEPSPEED) {
        snprintf(err, errlen, "unknown export target %d", o->target);
        return NULL;
    }
    int ds = o->target == ZS_EXPORT_DEEPSPEED;
    prep *pp = calloc(1, sizeof *pp);
    names *nm = calloc(1, sizeof *nm);
    if (!pp || !nm || prepare(s, pp) || names_alloc(nm, s->n_modules, s->n_params)) {
        if (pp) zs_scenario_free(&pp->s);
        free(pp);
        if (nm) names_free(nm);
        free(nm);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    make_names(&pp->s, nm);
    sbuf b = {0};
    const char *t = zs_export_template;
    int keep = 1;
    while (*t) {
        const char *e = strchr(t, '\n');
        size_t len = e ? (size_t)(e - t) + 1 : strlen(t);
        if (!strncmp(t, "#@@HEADER@@", 11))
            header(&b, s, pp, o);
        else if (!strncmp(t, "#@@SCENARIO@@", 13))
            scenario_part(&b, pp, nm, ds);
        else if (!strncmp(t, "#@deepspeed", 11))
            keep = ds;
        else if (!strncmp(t, "#@torch", 7))
            keep = !ds;
        else if (!strncmp(t, "#@end", 5))
            keep = 1;
        else if (keep)
            sb_put(&b, t, len);
        t += len;
    }
    zs_scenario_free(&pp->s);
    free(pp);
    names_free(nm);
    free(nm);
    if (b.oom || !b.p) {
        free(b.p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return b.p;
}
