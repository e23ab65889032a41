/*
 * scenario_json.c - JSON export of a scenario for the PyTorch oracle
 * (schema: docs/scenario-model.md section 5).
 */
#include "scenario_json.h"

#include <inttypes.h>

static void json_str(FILE *f, const char *s, size_t max) {
    fputc('"', f);
    for (size_t i = 0; i < max && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_u64(FILE *f, uint64_t v) {
    if (v == ZS_INF)
        fputs("\"inf\"", f);
    else
        fprintf(f, "%" PRIu64, v);
}

static void json_ref(FILE *f, const zs_ref *r) {
    /* "param" (ZS_REF_PARAM, a mixed input's term): call is the parameter's ds_id */
    static const char *const kinds[5] = {"batch", "batch_rg", "arg", "out", "param"};
    fprintf(f, "{\"kind\": \"%s\", \"call\": %u, \"index\": %u, \"detach\": %s%s}", r->kind < 5 ? kinds[r->kind] : "?",
            r->call, r->index, r->detach ? "true" : "false",
            r->raw ? ", \"raw\": true" : ""); /* raw: written only when set */
}

int zs_scenario_write_json(const zs_scenario *s, FILE *f) {
    const zs_config *c = &s->cfg;
    fprintf(f, "{\n  \"format\": \"zoffload-scenario\", \"version\": 1,\n");
    fprintf(f, "  \"config\": {\"policy\": \"%s\", \"world_size\": %u, \"rank\": %u, ",
            zs_policy_name(c->policy) ? zs_policy_name(c->policy) : "?", c->world_size, c->rank);
    fprintf(f, "\"order\": \"%s\", \"deferred\": %u, \"progress_every\": %u",
            c->order_mode == ZS_ORDER_FUZZED ? "fuzzed" : "engine", c->deferred, c->progress_every);
    for (int t = 0; t < ZS_TH_COUNT; t++) {
        fprintf(f, ",\n             \"%s\": ", zs_threshold_names[t]);
        json_u64(f, *zs_config_threshold((zs_config *)c, t));
    }
    fprintf(f, ",\n             \"all_ranks\": %u, \"verify_collectives\": %u", c->all_ranks, c->verify_collectives);
    fprintf(f, ",\n             \"torch_profile\": \"%s\", \"ds_profile\": \"%s\"",
            zs_torch_profile_name(c->torch_profile) ? zs_torch_profile_name(c->torch_profile) : "?",
            zs_ds_profile_name(c->ds_profile) ? zs_ds_profile_name(c->ds_profile) : "?");
    fprintf(f, "},\n  \"modules\": [");
    for (unsigned i = 0; i < s->n_modules; i++) {
        const zs_module *m = &s->mod[i];
        fprintf(f,
                "%s\n    {\"id\": %u, \"parent\": %d, \"z3_leaf\": %s, \"gather_always\": %s, \"name\": ", i ? "," : "",
                i, m->parent == ZS_NONE ? -1 : (int)m->parent, (m->flags & ZS_MOD_Z3_LEAF) ? "true" : "false",
                (m->flags & ZS_MOD_GATHER_ALWAYS) ? "true" : "false");
        json_str(f, m->name, ZS_NAME_LEN);
        fputc('}', f);
    }
    fprintf(f, "],\n  \"params\": [");
    for (unsigned i = 0; i < s->n_params; i++) {
        const zs_param *p = &s->par[i];
        fprintf(f,
                "%s\n    {\"id\": %u, \"owner\": %u, \"numel\": %u, \"elem_size\": %u, "
                "\"frozen\": %s, \"name\": ",
                i ? "," : "", i, p->owner, p->numel, p->elem_size, (p->flags & ZS_PARAM_FROZEN) ? "true" : "false");
        json_str(f, p->name, ZS_NAME_LEN);
        fputc('}', f);
    }
    fprintf(f, "],\n  \"uses\": [");
    for (unsigned i = 0; i < s->n_uses; i++)
        fprintf(f, "%s{\"module\": %u, \"param\": %u}", i ? ", " : "", s->use[i].module, s->use[i].param);
    fprintf(f, "],\n  \"steps\": [");
    for (unsigned si = 0; si < s->n_steps; si++) {
        const zs_step *st = &s->step[si];
        fprintf(f, "%s\n    {\"kind\": \"%s\", \"passes\": [", si ? "," : "",
                zs_step_kind_name(st->kind) ? zs_step_kind_name(st->kind) : "?");
        for (unsigned pi = 0; pi < st->n_passes; pi++) {
            const zs_pass *p = &st->pass[pi];
            fprintf(f, "%s\n      {\"loss\": [", pi ? "," : "");
            int first = 1;
            for (unsigned j = 0; j < 8; j++)
                if (p->loss_mask & (1u << j)) {
                    fprintf(f, "%s%u", first ? "" : ", ", j);
                    first = 0;
                }
            fprintf(f, "], \"calls\": [");
            for (unsigned ci = 0; ci < p->n_calls; ci++) {
                const zs_call *c2 = &p->calls[ci];
                const char *ck = (c2->flags & ZS_CALL_CKPT_RE)    ? "reentrant"
                                 : (c2->flags & ZS_CALL_CKPT_NRE) ? "non-reentrant"
                                                                  : "none";
                fprintf(f,
                        "%s\n        {\"id\": %u, \"module\": %u, \"parent\": %d, \"no_grad\": %s, "
                        "\"checkpoint\": \"%s\", \"raise\": %s, \"catcher\": %d,\n         "
                        "\"inputs\": [",
                        ci ? "," : "", ci, c2->module, c2->parent == ZS_NONE ? -1 : (int)c2->parent,
                        (c2->flags & ZS_CALL_NO_GRAD) ? "true" : "false", ck,
                        (c2->flags & ZS_CALL_RAISE) ? "true" : "false", c2->catcher == ZS_NONE ? -1 : (int)c2->catcher);
                for (unsigned i = 0; i < c2->n_in; i++) {
                    if (i) fputs(", ", f);
                    json_ref(f, &c2->in[i]);
                }
                fprintf(f, "],\n         \"n_out\": %u, \"uses\": [", c2->n_out);
                for (unsigned i = 0; i < c2->n_use; i++) {
                    if (i) fputs(", ", f);
                    json_ref(f, &c2->use[i]);
                }
                fputs("]", f);
                /* ZS_CALL_CKPT_BODY: "checkpoint" is the body's region (the
                 * module's hooks outside it); written only when set */
                if (c2->flags & ZS_CALL_CKPT_BODY) fputs(", \"checkpoint_body\": true", f);
                /* keyword inputs (unwrapped; ARG n_in + j in the callee's
                 * scope) and mixed inputs' extra terms: written only when
                 * present, so older readers see the same JSON as before */
                if (c2->n_kw) {
                    fputs(", \"kw\": [", f);
                    for (unsigned i = 0; i < c2->n_kw; i++) {
                        if (i) fputs(", ", f);
                        json_ref(f, &c2->kw[i]);
                    }
                    fputs("]", f);
                }
                if (c2->op_nosave) fputs(", \"nosave\": true", f);
                if (c2->out_alias) {
                    fputs(", \"alias\": {", f);
                    for (unsigned j = 0, k = 0; j < ZS_MAX_OUT; j++)
                        if ((c2->out_alias >> j) & 1u) {
                            fprintf(f, "%s\"%u\": ", k++ ? ", " : "", j);
                            json_ref(f, &c2->alias[j]);
                        }
                    fputs("}", f);
                }
                if (c2->out_norg) {
                    fputs(", \"nograd\": [", f);
                    for (unsigned j = 0, k = 0; j < 8; j++)
                        if ((c2->out_norg >> j) & 1u) fprintf(f, "%s%u", k++ ? ", " : "", j);
                    fputs("]", f);
                }
                if (c2->n_mix) {
                    fputs(", \"mix\": [", f);
                    for (unsigned i = 0; i < c2->n_mix; i++) {
                        fprintf(f, "%s{\"slot\": %u, \"ref\": ", i ? ", " : "", c2->mix[i].slot);
                        json_ref(f, &c2->mix[i].ref);
                        fputs("}", f);
                    }
                    fputs("]", f);
                }
                fputs("}", f);
            }
            fputs("]}", f);
        }
        fputs("]}", f);
    }
    fprintf(f, "],\n  \"order\": [");
    for (unsigned i = 0; i < s->n_order; i++) fprintf(f, "%s%u", i ? ", " : "", s->order[i]);
    /* rank edits (all-ranks scenarios): the base program above is every
     * rank's; the oracles run zs_scenario_for_rank's materialised programs */
    fprintf(f, "],\n  \"edits\": [");
    for (unsigned i = 0; i < s->n_edits; i++) {
        const zs_rank_edit *e = &s->edit[i];
        fprintf(f, "%s{\"rank\": %u, \"kind\": \"%s\", \"step\": %u, \"pass\": %u, \"call\": %u, \"module\": %u}",
                i ? ", " : "", e->rank, zs_edit_kind_name(e->kind) ? zs_edit_kind_name(e->kind) : "?", e->step, e->pass,
                e->call, e->module);
    }
    fprintf(f, "]\n}\n");
    return ferror(f) ? -1 : 0;
}
