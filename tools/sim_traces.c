/*
 * sim_traces - batch front end of the simulator for the differential tests
 * (tools/difftest.py, tools/deepspeed_oracle.py).
 *
 *   sim_traces OUTDIR FILE...            scenarios: FILE.scn as .scn text (when the
 *                                        build has fuzz/scn.c), anything else as raw
 *                                        fuzzer bytes (zs_decode)
 *   sim_traces OUTDIR --seeds FIRST LAST the scenarios `zs_tool gen --seed S`
 *                                        writes, S = FIRST..LAST
 *   sim_traces --rank R ...              all-ranks scenarios: only rank R's program
 *                                        (default: every rank's, one after another)
 *   sim_traces --ds-profile P ...        every scenario's config.ds_profile set to P
 *                                        (0.19 | 0.19-hooks | 0.15, fuzz/scenario.h
 *                                        ZS_DS_*), in the simulation and the JSON
 *   sim_traces --torch-profile P ...     likewise config.torch_profile (2.x |
 *                                        2.x-no-early-stop | 1.13), as the oracle of
 *                                        that torch release runs it
 *   sim_traces --ds OUTDIR ...           DeepSpeed-oracle mode: the scenario as the
 *                                        DeepSpeed oracle runs it (world size 1, rank 0,
 *                                        immediate completion: deferred 0), policy
 *                                        reset-on-forward only, and the runtime's event
 *                                        log OUTDIR/k.reset-on-forward.events (trace lines
 *                                        interleaved with "  ev ..." lines, PARAM_STATE
 *                                        included) for the ds_status comparison.  A
 *                                        scenario over 2^22 elements in all is scaled
 *                                        down first (every numel and every finite,
 *                                        non-zero threshold divided by the same factor,
 *                                        at least 1), so that the DeepSpeed oracle can
 *                                        hold it in real tensors; both sides then run
 *                                        the same scaled scenario
 *
 * An all-ranks scenario (config ranks=all) is W single-rank scenarios for
 * the oracles: rank r's program, zs_scenario_for_rank(s, r) (its rank
 * edits applied: MoE routing, skipped calls, early exits, a raise, skipped
 * steps), each an entry of its own named "NAME#rank<r>", so the PyTorch
 * autograd comparison covers every rank's program.  In --ds mode the
 * gather_always flags are cleared (DeepSpeed has no such option; both
 * sides then run the same scenario).
 *
 * For every scenario k (0, 1, ... in argument order, one per rank of an
 * all-ranks scenario) it writes
 *   OUTDIR/k.json               zs_scenario_write_json (docs/scenario-model.md §5)
 *   OUTDIR/k.<policy>.trace     the canonical engine-order hook trace (§4) for
 *                               each of the four policies
 * and one line per scenario to OUTDIR/index.tsv:
 *   k <TAB> name <TAB> policy=outcome ...    outcome: ok | I1 | ... | ERR | torch | setup
 *
 * Unlike `zs_tool trace`, the simulator runs with stop_on_violation = 0:
 * the legacy policies violate I1/I3 by design (that is what they are kept
 * for), and the differential test must compare the whole run, not the
 * prefix up to the first violation.  A PyTorch error (TORCHERROR) still
 * ends the run, as it does in real PyTorch.
 *
 * Exit: 0 ok, 2 usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranks.h"
#include "scenario.h"
#include "scenario_json.h"
#include "sim.h"
#include "zs_random.h"
#ifdef ZS_HAVE_SCN
#include "scn.h"
#endif

static uint8_t buf[1u << 20];
static uint8_t enc[ZS_ENCODE_MAX];
static zs_scenario sc;

static int ds_mode;
static int only_rank = -1; /* --rank R */
static int ds_profile = -1;    /* --ds-profile P: ZS_DS_* for every scenario */
static int torch_profile = -1; /* --torch-profile P: ZS_TORCH_* for every scenario */
static zs_scenario whole; /* an all-ranks scenario while its ranks are emitted */
#define DS_MAX_TOTAL_NUMEL (1ull << 22) /* = deepspeed_oracle.py's MAX_TOTAL_NUMEL */

static void ds_scale(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < sc.n_params; i++) total += sc.par[i].numel;
    if (total <= DS_MAX_TOTAL_NUMEL) return;
    uint64_t f = (total + DS_MAX_TOTAL_NUMEL - 1) / DS_MAX_TOTAL_NUMEL;
    for (unsigned i = 0; i < sc.n_params; i++) {
        uint64_t n = sc.par[i].numel / f;
        sc.par[i].numel = (uint32_t)(n ? n : 1);
    }
    for (int t = 0; t < ZS_TH_COUNT; t++) {
        uint64_t *v = zs_config_threshold(&sc.cfg, t);
        if (*v != ZS_INF && *v != 0) *v = *v / f ? *v / f : 1;
    }
}

static int emit(const char *dir, unsigned k, const char *name, FILE *index)
{
    char path[4096];
    if (ds_profile >= 0) sc.cfg.ds_profile = (uint8_t)ds_profile;
    if (torch_profile >= 0) sc.cfg.torch_profile = (uint8_t)torch_profile;
    if (ds_mode) {
        sc.cfg.world_size = 1;
        sc.cfg.rank = 0;
        sc.cfg.deferred = 0;
        sc.cfg.progress_every = 0;
        sc.cfg.policy = 1; /* reset-on-forward */
        for (unsigned m = 0; m < sc.n_modules; m++) sc.mod[m].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
        ds_scale();
    }
    snprintf(path, sizeof path, "%s/%u.json", dir, k);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 2;
    }
    int bad = zs_scenario_write_json(&sc, f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "sim_traces: %s: JSON export failed\n", name);
        return 2;
    }
    fprintf(index, "%u\t%s", k, name);
    for (int pol = 0; pol < 4; pol++) {
        if (ds_mode && pol != 1) continue;
        FILE *ev = NULL;
        if (ds_mode) {
            snprintf(path, sizeof path, "%s/%u.%s.events", dir, k, zs_policy_name((unsigned)pol));
            ev = fopen(path, "w");
            if (!ev) {
                perror(path);
                return 2;
            }
        }
        snprintf(path, sizeof path, "%s/%u.%s.trace", dir, k, zs_policy_name((unsigned)pol));
        f = fopen(path, "w");
        if (!f) {
            perror(path);
            return 2;
        }
        zs_sim_opts o;
        zs_sim_opts_init(&o);
        o.policy = pol;
        o.order_mode = ZS_ORDER_ENGINE;
        o.stop_on_violation = 0;
        o.trace = f;
        o.events = ev;
        zs_sim_result r;
        int rc = zs_sim_run(&sc, &o, &r);
        fclose(f);
        if (ev) fclose(ev);
        const char *out = "ok";
        if (r.setup_error)
            out = "setup";
        else if (r.torch_error)
            out = "torch";
        if (rc == 1 && !r.setup_error) out = zs_inv_name(r.v.inv);
        fprintf(index, "\t%s=%s", zs_policy_name((unsigned)pol), out);
    }
    fprintf(index, "\n");
    return 0;
}

/* emit() for sc, or for each rank's program of an all-ranks sc */
static int emit_ranks(const char *dir, unsigned *k, const char *name, FILE *index)
{
    if (!sc.cfg.all_ranks) return emit(dir, (*k)++, name, index);
    if (zs_scenario_copy(&whole, &sc)) {
        fprintf(stderr, "sim_traces: %s: out of memory\n", name);
        return 2;
    }
    for (unsigned r = 0; r < whole.cfg.world_size; r++) {
        if (only_rank >= 0 && (unsigned)only_rank != r) continue;
        char err[256], rname[4200];
        if (zs_scenario_for_rank(&whole, r, &sc, err, sizeof err) != 0) {
            fprintf(stderr, "sim_traces: %s: rank %u: %s\n", name, r, err);
            return 2;
        }
        snprintf(rname, sizeof rname, "%s#rank%u", name, r);
        int rc = emit(dir, (*k)++, rname, index);
        if (rc) return rc;
    }
    return 0;
}

int main(int argc, char **argv)
{
    for (;;) {
        if (argc > 1 && !strcmp(argv[1], "--ds")) {
            ds_mode = 1;
            argv++;
            argc--;
        } else if (argc > 2 && (!strcmp(argv[1], "--ds-profile") || !strcmp(argv[1], "--torch-profile"))) {
            int is_ds = !strcmp(argv[1], "--ds-profile");
            int v = is_ds ? zs_ds_profile_from_name(argv[2]) : zs_torch_profile_from_name(argv[2]);
            if (v < 0) {
                fprintf(stderr, "sim_traces: %s %s: unknown profile\n", argv[1], argv[2]);
                return 2;
            }
            if (is_ds)
                ds_profile = v;
            else
                torch_profile = v;
            argv += 2;
            argc -= 2;
        } else if (argc > 2 && !strcmp(argv[1], "--rank")) {
            only_rank = atoi(argv[2]);
            if (only_rank < 0 || only_rank >= ZS_MAX_WORLD) {
                fprintf(stderr, "sim_traces: --rank %s: not a rank 0..%d\n", argv[2], ZS_MAX_WORLD - 1);
                return 2;
            }
            argv += 2;
            argc -= 2;
        } else
            break;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: sim_traces [--ds] [--rank R] [--ds-profile P] [--torch-profile P] OUTDIR FILE... | "
                        "sim_traces [options] OUTDIR --seeds FIRST LAST\n");
        return 2;
    }
    const char *dir = argv[1];
    char path[4096];
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    FILE *index = fopen(path, "w");
    if (!index) {
        perror(path);
        return 2;
    }
    int rc = 0;
    unsigned k = 0;
    if (!strcmp(argv[2], "--seeds")) {
        if (argc != 5) return 2;
        unsigned long long a = strtoull(argv[3], NULL, 0), b = strtoull(argv[4], NULL, 0);
        for (unsigned long long s = a; s <= b && !rc; s++) {
            /* exactly what `zs_tool gen --seed S` writes (max 512), decoded */
            size_t n = zs_rand_input(s, 0, buf, 512);
            zs_decode(buf, n, &sc);
            size_t m = zs_encode(&sc, enc, sizeof enc);
            if (m == 0 || m > sizeof enc) return 2;
            zs_decode(enc, m, &sc);
            char name[64];
            snprintf(name, sizeof name, "seed-%llu", s);
            rc = emit_ranks(dir, &k, name, index);
        }
    } else {
        for (int i = 2; i < argc && !rc; i++) {
            FILE *f = fopen(argv[i], "rb");
            if (!f) {
                perror(argv[i]);
                rc = 2;
                break;
            }
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            size_t len = strlen(argv[i]);
            if (len > 4 && !strcmp(argv[i] + len - 4, ".scn")) {
#ifdef ZS_HAVE_SCN
                zs_scn_expect exp;
                zs_scn_error err;
                if (zs_scn_parse((const char *)buf, n, &sc, &exp, &err) != 0) {
                    fprintf(stderr, "%s:%d:%d: %s\n", argv[i], err.line, err.col, err.msg);
                    rc = 2;
                    break;
                }
#else
                fprintf(stderr, "sim_traces: %s: built without fuzz/scn.c\n", argv[i]);
                rc = 2;
                break;
#endif
            } else {
                zs_decode(buf, n, &sc);
            }
            rc = emit_ranks(dir, &k, argv[i], index);
        }
    }
    fclose(index);
    return rc;
}
