/*
 * settings.c - the fuzz harness's settings table (settings.h).
 */
#include "settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "sim.h"

const zs_setting_def zs_setting_defs[ZS_SET_COUNT] = {
#define ZS__SETTING_ROW(id, kind, field, name, env, flag, values, def, help)                                           \
    {ZS_KIND_##kind, offsetof(zs_settings, field), name, env, flag, values, def, help},
    ZS_SETTINGS_MAP(ZS__SETTING_ROW)
#undef ZS__SETTING_ROW
};

static int bad(char *err, size_t errlen, zs_setting_id id, const char *v) {
    snprintf(err, errlen, "%s: '%s' is not one of: %s", zs_setting_defs[id].name, v, zs_setting_defs[id].values);
    return -1;
}

/* "0" / "1" only */
int zs_parse_u64(const char *v, uint64_t *out) {
    /* decimal digits only: no sign or space (' -5' wraps), no 0x or octal */
    if (!v || v[0] < '0' || v[0] > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)x;
    return 0;
}

static int parse_bool(const char *v, int *out) {
    if (!strcmp(v, "0") || !strcmp(v, "1")) {
        *out = v[0] == '1';
        return 0;
    }
    return -1;
}

void zs_settings_init(zs_settings *s) {
    memset(s, 0, sizeof *s);
    char err[8];
    for (int i = 0; i < ZS_SET_COUNT; i++)
        (void)zs_settings_set(s, (zs_setting_id)i, zs_setting_defs[i].def, err, sizeof err);
    s->set = 0;
}

int zs_settings_set(zs_settings *s, zs_setting_id id, const char *v, char *err, size_t errlen) {
    if (!v) v = "";
    if ((unsigned)id >= ZS_SET_COUNT) {
        snprintf(err, errlen, "setting %d does not exist", (int)id);
        return -1;
    }
    const zs_setting_def *d = &zs_setting_defs[id];
    void *field = (char *)s + d->offset;
    switch (d->kind) {
    case ZS_KIND_BOOL:
        if (parse_bool(v, (int *)field)) return bad(err, errlen, id, v);
        s->set |= 1u << id;
        return 0;
    case ZS_KIND_UINT: {
        uint64_t x;
        if (zs_parse_u64(v, &x)) return bad(err, errlen, id, v);
        *(uint64_t *)field = x;
        s->set |= 1u << id;
        return 0;
    }
    case ZS_KIND_PATH:
        /* the default is computed by its reader: NULL stands for it */
        if (!*v) return bad(err, errlen, id, v);
        *(const char **)field = strcmp(v, d->def) ? v : NULL;
        s->set |= 1u << id;
        return 0;
    case ZS_KIND_CHOICE: break;
    }
    switch (id) {
    case ZS_SET_POLICY: {
        int p = strcmp(v, "scenario") ? zs_policy_from_name(v) : -1;
        if (p < 0 && strcmp(v, "scenario")) return bad(err, errlen, id, v);
        s->policy = p;
        break;
    }
    case ZS_SET_ORDER:
        if (!strcmp(v, "engine"))
            s->order_mode = ZS_ORDER_ENGINE;
        else if (!strcmp(v, "fuzzed"))
            s->order_mode = ZS_ORDER_FUZZED;
        else if (!strcmp(v, "scenario"))
            s->order_mode = -1;
        else
            return bad(err, errlen, id, v);
        break;
    case ZS_SET_VERIFY:
        if (!strcmp(v, "scenario"))
            s->verify = -1;
        else if (parse_bool(v, &s->verify))
            return bad(err, errlen, id, v);
        break;
    case ZS_SET_INVARIANTS:
    case ZS_SET_GATHER_ALWAYS:
    case ZS_SET_EDITS:
    case ZS_SET_RANKS: {
        /* world.c owns these values (zs_world_env_set); a refused value
         * leaves s unchanged */
        zs_world_env w = s->world;
        char msg[200];
        if (zs_world_env_set(&w, zs_setting_defs[id].name, v, msg, sizeof msg) != 0) {
            snprintf(err, errlen, "%s", msg);
            return -1;
        }
        s->world = w;
        break;
    }
    default: /* a CHOICE setting without its case here */
        snprintf(err, errlen, "%s: no parser for its values", d->name);
        return -1;
    }
    s->set |= 1u << id;
    return 0;
}

int zs_settings_from_env(zs_settings *s, char *err, size_t errlen) {
    for (int i = 0; i < ZS_SET_COUNT; i++) {
        const char *v = getenv(zs_setting_defs[i].env);
        if (!v || !*v) continue;
        char msg[256];
        if (zs_settings_set(s, (zs_setting_id)i, v, msg, sizeof msg) != 0) {
            snprintf(err, errlen, "%s: %s", zs_setting_defs[i].env, msg);
            return -1;
        }
    }
    return 0;
}

int zs_settings_by_flag(const char *flag) {
    if (!flag) return -1;
    for (int i = 0; i < ZS_SET_COUNT; i++)
        if (zs_setting_defs[i].flag[0] && !strcmp(flag, zs_setting_defs[i].flag)) return i;
    return -1;
}

void zs_settings_print(FILE *f, int markdown) {
    if (markdown) {
        fprintf(f, "| setting | environment | zofuzz option | values | default | what it does |\n");
        fprintf(f, "| --- | --- | --- | --- | --- | --- |\n");
        for (int i = 0; i < ZS_SET_COUNT; i++) {
            const zs_setting_def *d = &zs_setting_defs[i];
            fprintf(f, "| %s | `%s` | %s%s%s | ", d->name, d->env, d->flag[0] ? "`" : "", d->flag[0] ? d->flag : "-",
                    d->flag[0] ? "`" : "");
            for (const char *c = d->values; *c; c++) { /* | separates values; escape it in a table cell */
                if (*c == '|')
                    fputs("\\|", f);
                else
                    fputc(*c, f);
            }
            fprintf(f, " | %s | %s |\n", d->def, d->help);
        }
        return;
    }
    for (int i = 0; i < ZS_SET_COUNT; i++) {
        const zs_setting_def *d = &zs_setting_defs[i];
        fprintf(f, "  %s=%s%s%s\n      %s (default %s)\n", d->env, d->values, d->flag[0] ? ", option " : "", d->flag,
                d->help, d->def);
    }
}
