/*
 * zofuzz - the zoffload fuzzing tool: the main job (`run`: libFuzzer on the
 * shipped model corpus with progress, summary and minimised repros) and
 * the tools around a finding (repro, minimize, check, print, compile,
 * trace, seeds, verify, export).  `zofuzz help` and `zofuzz CMD --help` describe
 * each subcommand; docs/scenario-format.md the .scn format.
 *
 * Exit codes (every subcommand):
 *   0  success / every invariant holds
 *   1  an invariant was violated (run, repro, check, trace, minimize's
 *      input does not fail -> see minimize --help), or a verdict mismatch
 *      (verify)
 *   2  bad usage, unreadable or unparsable input, missing binary
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "minimize.h"
#include "run.h"
#include "ranks.h"
#include "scenario.h"
#include "scn.h"
#include "scenario_json.h"
#include "settings.h"
#include "world.h"
#include "sim.h"
#ifdef ZOFUZZ_HAVE_ENUMERATE
#include "enumerate.h"
#endif
#include "zs_random.h"

#ifndef ZO_SOURCE_DIR
#define ZO_SOURCE_DIR "."
#endif

#define MAX_FILE (4u << 20)

static const char *g_prog = "zofuzz";

static void die_usage(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void die_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(2);
}

/* snprintf that treats truncation as fatal (paths, flags): exit 2 */
static void xsnprintf(char *dst, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void xsnprintf(char *dst, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) die_usage("path or argument too long: %.60s...", dst);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* Option helpers                                                       */
/* ------------------------------------------------------------------ */

static int opt_policy(const char *v) {
    int p = zs_policy_from_name(v);
    if (p < 0) die_usage("unknown policy '%s' (per-call, reset-on-forward, lazy-init, init-at-register)", v);
    return p;
}

/* The ZOFUZZ_* environment (fuzz/settings.h), read once by main() before
 * any subcommand runs (a bad value exits 2 there). */
static zs_settings g_env;

/* the option of a setting of the table (fuzz/settings.h), parsed by it */
static zs_settings opt_setting(zs_setting_id id, const char *v) {
    zs_settings st;
    zs_settings_init(&st);
    char err[300];
    if (zs_settings_set(&st, id, v, err, sizeof err) != 0) die_usage("--%s", err);
    return st;
}

static int opt_order(const char *v) { return opt_setting(ZS_SET_ORDER, v).order_mode; }
/* A decimal count (zs_parse_u64: ' -5' would wrap, '010' read as 8). */
static unsigned long opt_ulong(const char *name, const char *v) {
    uint64_t x;
    if (zs_parse_u64(v, &x) || x > ULONG_MAX) die_usage("%s: bad number '%s' (decimal digits, below 2^64)", name, v);
    return (unsigned long)x;
}

/* the value of option argv[*i] (which takes one) */
static const char *optval(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) die_usage("%s needs a value", argv[*i]);
    return argv[++*i];
}

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* An option word: "-x" or "--xyz" (not "-", a lone dash meaning stdin or
 * stdout, and not a negative number, which is a bad value the option's
 * own parser reports). */
static int is_option_word(const char *a) { return a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9'); }

/* The one validation layer every subcommand's command line passes before
 * the subcommand reads it: an option given twice (the later one would
 * silently win) and options that contradict each other are exit 2 naming
 * both.  Only the option words are looked at (a value never starts with
 * '-'), so it needs no table of which options take values. */
static void check_args(int argc, char **argv) {
    static const char *const repeatable[] = {"--engine-arg", "--help", "-h", NULL};
    static const char *const exclusive[][2] = {
        {"--text", "--bytes"}, {"--quiet", "--verbose"}, {"--quiet", "-v"}, {"--expect", "--json"}};
    for (int i = 2; i < argc; i++) {
        if (!is_option_word(argv[i])) continue;
        int rep = 0;
        for (int k = 0; repeatable[k]; k++) rep |= !strcmp(argv[i], repeatable[k]);
        for (int j = 2; j < i && !rep; j++)
            if (!strcmp(argv[i], argv[j])) die_usage("%s: %s given twice (each option at most once)", argv[1], argv[i]);
        for (size_t k = 0; k < sizeof exclusive / sizeof exclusive[0]; k++) {
            if (strcmp(argv[i], exclusive[k][1])) continue;
            for (int j = 2; j < argc; j++)
                if (!strcmp(argv[j], exclusive[k][0]))
                    die_usage("%s: %s and %s contradict each other (give one)", argv[1], exclusive[k][0],
                              exclusive[k][1]);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Files                                                                */
/* ------------------------------------------------------------------ */

/* Reads a whole file (at most MAX_FILE bytes).  Returns a malloc'd buffer
 * (NUL-terminated, *n = size) or NULL with a message printed. */
static uint8_t *read_all(const char *path, size_t *n) {
    struct stat st;
    if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s: is a directory (give a scenario file)\n", g_prog, path);
        return NULL;
    }
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", g_prog, path, strerror(errno));
        return NULL;
    }
    uint8_t *buf = malloc(MAX_FILE + 1);
    if (!buf) {
        if (f != stdin) fclose(f);
        fprintf(stderr, "%s: out of memory\n", g_prog);
        return NULL;
    }
    size_t k = fread(buf, 1, MAX_FILE + 1, f);
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) {
        fprintf(stderr, "%s: %s: read error\n", g_prog, path);
        free(buf);
        return NULL;
    }
    if (k > MAX_FILE) {
        fprintf(stderr, "%s: %s: larger than %u bytes\n", g_prog, path, MAX_FILE);
        free(buf);
        return NULL;
    }
    buf[k] = 0;
    *n = k;
    return buf;
}

static int write_all(const char *path, const void *data, size_t n) {
    FILE *f = (!path || !strcmp(path, "-")) ? stdout : fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", g_prog, path, strerror(errno));
        return -1;
    }
    int rc = fwrite(data, 1, n, f) == n ? 0 : -1;
    int e = rc ? errno : 0;
    if (f != stdout) {
        if (fclose(f) != 0) {
            if (!rc) e = errno;
            rc = -1;
        }
    } else {
        fflush(stdout);
    }
    if (rc)
        fprintf(stderr, "%s: %s: write error%s%s\n", g_prog, path ? path : "(stdout)", e ? ": " : "",
                e ? strerror(e) : "");
    return rc;
}

/* Exit 2 unless path (an output file) can be written: an existing
 * writable file, or a new name in a writable directory.  Checked before
 * the work, so a long run does not end failing on its output path. */
static void need_writable(const char *opt, const char *path) {
    if (!path || !strcmp(path, "-")) return;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) die_usage("%s %s: is a directory", opt, path);
        if (access(path, W_OK) != 0) die_usage("%s %s: %s", opt, path, strerror(errno));
        return;
    }
    char dir[PATH_MAX];
    xsnprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        xsnprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) die_usage("%s %s: directory %s does not exist", opt, path, dir);
    if (access(dir, W_OK | X_OK) != 0) die_usage("%s %s: directory %s: %s", opt, path, dir, strerror(errno));
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Writes text to path: a regular file (or a name not yet taken) through a
 * temporary file in the same directory, renamed over path at the end, so
 * path never holds a partial file; a symbolic link's target the same way
 * (the link stays a link); anything else that exists (a device, a FIFO)
 * by writing into it, as a redirection would, every write checked.
 * Returns 0, or -1 with a message printed. */
static int write_whole(const char *path, const char *text) {
    size_t len = strlen(text);
    struct stat lst, st;
    char target[PATH_MAX];
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* a dangling link is written through, creating its target */
        if (!realpath(path, target)) return write_all(path, text, len);
        path = target;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s: %s: is a directory\n", g_prog, path);
            return -1;
        }
        return write_all(path, text, len);
    }
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        fprintf(stderr, "%s: %s: path too long\n", g_prog, path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", g_prog, path, strerror(errno));
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    /* the mode a plain fopen would give (mkstemp makes 0600) */
    mode_t um = umask(0);
    umask(um);
    int bad = off != len || fchmod(fd, 0666 & ~um) != 0;
    bad |= close(fd) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: %s: write error: %s\n", g_prog, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* 0 if a file can be written at path (its directory exists and is
 * writable; an existing path is a writable regular file), else -1 with
 * the reason in why. */
static int path_writable(const char *path, char *why, size_t n) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(why, n, "is a directory");
            return -1;
        }
        if (access(path, W_OK) != 0) {
            snprintf(why, n, "%s", strerror(errno));
            return -1;
        }
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, n, "directory %s does not exist", dir);
        return -1;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(why, n, "directory %s is not writable (%s)", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int all_text(const uint8_t *b, size_t n) {
    if (n == 0) return 0;
    size_t i0 = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0; /* UTF-8 BOM */
    for (size_t i = i0; i < n; i++) {
        uint8_t c = b[i];
        if (c == '\n' || c == '\r' || c == '\t') continue;
        if (c < 0x20 || c > 0x7e) return 0;
    }
    return 1;
}

enum { FORM_AUTO = 0, FORM_TEXT = 1, FORM_BYTES = 2 };

/* Loads a scenario: .scn text or raw fuzzer bytes (docs/scenario-format.md
 * section 5).  Returns 0, or 2 with a message printed. */
static int load_scenario(const char *path, int form, zs_scenario *s, zs_scn_expect *exp, int *is_text) {
    size_t n;
    uint8_t *b = read_all(path, &n);
    if (!b) return 2;
    zs_scn_expect dummy;
    if (!exp) exp = &dummy;
    memset(exp, 0, sizeof *exp);
    /* detection (FORM_AUTO): a .scn name, or content that is text, is a
     * text scenario and its parse error is reported; anything else is raw
     * fuzzer bytes.  An empty file is neither (it would decode to a
     * default scenario that holds every invariant): --bytes asks for it. */
    int text = form == FORM_TEXT || (form == FORM_AUTO && (ends_with(path, ".scn") || all_text(b, n)));
    if (form == FORM_AUTO && n == 0) {
        fprintf(stderr, "%s: %s: empty file: not a scenario (pass --bytes to decode it as fuzzer bytes)\n", g_prog,
                path);
        free(b);
        return 2;
    }
    zs_scn_error err;
    if (text) {
        if (zs_scn_parse((const char *)b, n, s, exp, &err) != 0) {
            fprintf(stderr, "%s:%d:%d: %s\n", path, err.line, err.col, err.msg);
            if (memchr(b, '\r', n) && !memchr(b, '\n', n))
                fprintf(stderr, "%s: %s: its lines end in CR alone; .scn lines end in LF or CR LF\n", g_prog, path);
            if (form == FORM_AUTO && !ends_with(path, ".scn"))
                fprintf(stderr,
                        "%s: %s: read as .scn text (the content is text); pass --bytes if it "
                        "is raw fuzzer bytes\n",
                        g_prog, path);
            free(b);
            return 2;
        }
    } else {
        memset(exp, 0, sizeof *exp);
        zs_decode(b, n, s);
        text = 0;
    }
    free(b);
    if (is_text) *is_text = text;
    return 0;
}

/* The policy fuzz_hooks runs raw bytes under (fuzz/fuzz_hooks.c): its
 * ZOFUZZ_POLICY, per-call when unset, the scenario's own with "scenario";
 * so a crash file replays under the policy that found it.  Exit 2 on a
 * value fuzz_hooks would refuse. */
/* zs_run_opts_init plus how an all-ranks world runs (ZOFUZZ_RANKS): every
 * subcommand honours it, its options decide the rest */
static void run_opts_init(zs_run_opts *o) {
    zs_run_opts_init(o);
    o->env.threads = g_env.world.threads;
}

static int bytes_default_policy(const zs_scenario *s) { return g_env.policy < 0 ? s->cfg.policy : g_env.policy; }
/* the expect line of s measured by running it under every policy */
static void measure_expect(const zs_scenario *s, int order_mode, zs_scn_expect *e) {
    memset(e, 0, sizeof *e);
    e->have_torch = e->have_ds = 1;
    e->torch = s->cfg.torch_profile;
    e->ds = s->cfg.ds_profile;
    zs_run_opts ro;
    run_opts_init(&ro);
    ro.order_mode = order_mode;
    for (int p = 0; p < 4; p++) {
        zs_outcome out;
        ro.policy = p;
        e->have[p] = 1;
        e->verdict[p] = zs_run(s, &ro, &out);
    }
}

static const char *src_dir(void) { return g_env.source_dir ? g_env.source_dir : ZO_SOURCE_DIR; /* ZOFUZZ_SOURCE_DIR */ }

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int mkdirs(const char *path) {
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
    if (!is_dir(tmp)) { /* it exists, as a file */
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted list of regular files in dir whose name ends with suffix ("" =
 * any, dot files skipped).  Returns the count; *out malloc'd array of
 * malloc'd full paths (free with free_list). */
static size_t list_dir(const char *dir, const char *suffix, char ***out) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (*suffix && !ends_with(e->d_name, suffix)) continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p) continue;
        if (!is_file(p)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) break;
            v = nv;
        }
        v[n] = strdup(p);
        if (v[n]) n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ------------------------------------------------------------------ */
/* all-ranks knobs shared by check and minimize                         */
/* ------------------------------------------------------------------ */

/* The all-ranks knobs check and minimize start from, before their options:
 * every invariant with any divergence counted as I8 (programs), every edit
 * kind, no gather-always; then each of ZOFUZZ_INVARIANTS, ZOFUZZ_EDITS and
 * ZOFUZZ_GATHER_ALWAYS that is set (the options override it), and how the
 * world runs (ZOFUZZ_RANKS) */
static zs_world_env world_env_base(void) {
    zs_world_env e = {~0u, 0, 0, 0, 0, g_env.world.threads};
    if (g_env.set & (1u << ZS_SET_INVARIANTS)) {
        e.only_i8 = g_env.world.only_i8;
        e.skip_i8 = g_env.world.skip_i8;
        e.blame_runtime = g_env.world.blame_runtime;
    }
    if (g_env.set & (1u << ZS_SET_EDITS)) e.edit_mask = g_env.world.edit_mask;
    if (g_env.set & (1u << ZS_SET_GATHER_ALWAYS)) e.protect_routers = g_env.world.protect_routers;
    return e;
}

/* --invariants programs|all|I8|no-I8, --edits K,..., --gather-always routers (the
 * fuzz_hooks environment knobs as options); returns 1 if argv[*i] was one */
static int world_opt(const char *cmd, int argc, char **argv, int *i, zs_world_env *e) {
    const char *a = argv[*i];
    if (strcmp(a, "--invariants") && strcmp(a, "--edits") && strcmp(a, "--gather-always")) return 0;
    const char *v = optval(argc, argv, i);
    char err[200];
    if (zs_world_env_set(e, a + 2, v, err, sizeof err) != 0) die_usage("%s: --%s", cmd, err);
    return 1;
}


/* ------------------------------------------------------------------ */
/* repro / trace                                                        */
/* ------------------------------------------------------------------ */

static const char *const repro_help =
    "usage: zofuzz repro FILE [--policy P] [--order engine|fuzzed|scenario] [--text|--bytes]\n"
    "                         [--quiet] [--cap BYTES] [--verify 0|1|scenario] [--only-i8]\n"
    "\n"
    "Runs one scenario against the real runtime with the simulator and prints the\n"
    "event trace.  FILE is .scn text when it is named *.scn or its content is text\n"
    "(a parse error is then reported, exit 2), otherwise raw fuzzer bytes; --text or\n"
    "--bytes forces the form (an empty file needs --bytes).  The trace lists\n"
    "every hook line (A/D/B/C, PRE/POST, PGRAD, BWD/ENDBWD, SWEEP, ...;\n"
    "docs/scenario-model.md section 4)\n"
    "with module and counter before->after, preceded by the runtime events it\n"
    "caused (indented \"ev SEQ KIND m= p=\" lines: ds_status changes FROM->TO,\n"
    "counters before->after, gathers, releases).  Then the first invariant\n"
    "violated (\"violated: ...\"), or \"all invariants hold\".\n"
    "\n"
    "  --policy P   per-call | reset-on-forward | lazy-init | init-at-register\n"
    "               (default: .scn text: the scenario's config policy; raw fuzzer\n"
    "               bytes: the policy fuzz_hooks ran them under, ZOFUZZ_POLICY as\n"
    "               fuzz_hooks reads it - per-call when unset, the bytes' policy\n"
    "               with ZOFUZZ_POLICY=scenario)\n"
    "  --order O    backward ready-node order (default: the scenario's)\n"
    "  --quiet      no trace, only the verdict\n"
    "  --cap B      host backend bytes stored per parameter (default 64; 0 = all)\n"
    "  --verify V   0 | 1 | scenario: zo_config.verify_collectives (default: the\n"
    "               scenario's)\n"
    "  --only-i8    all-ranks scenarios: check only I8 (ranks run past their own\n"
    "               violations)\n"
    "\n"
    "All-ranks scenarios (config all_ranks, per-rank edits) run every rank in one\n"
    "host world (fuzz/world.h) and also check I8: every rank issues the same\n"
    "collectives.  The trace is printed rank by rank (\"# rank R\"); a finding\n"
    "prints the first differing collective of both ranks with their hook stacks.\n"
    "\n"
    "Exit: 0 every invariant holds, 1 an invariant was violated, 2 bad usage/input or\n"
    "no verdict (the run could not be set up: out of memory, e.g. --cap 0 on a large model).\n";

static const char *const trace_help =
    "usage: zofuzz trace FILE [--order engine|fuzzed|scenario] [--policy P] [--text|--bytes]\n"
    "\n"
    "Prints the canonical hook trace of a scenario (docs/scenario-model.md section 4;\n"
    "the PyTorch oracle prints the same lines).  The verdict goes to stderr.\n"
    "All-ranks scenarios: every rank's trace in turn, each after a \"# rank R\" line.\n"
    "\n"
    "Exit: 0 every invariant holds, 1 an invariant was violated, 2 bad usage/input or\n"
    "no verdict (the run could not be set up: out of memory, e.g. --cap 0 on a large model).\n";

static int cmd_repro(int argc, char **argv, int trace_only) {
    const char *file = NULL;
    int policy = -1, order = -1, form = FORM_AUTO, quiet = 0, verify = -1, only_i8 = 0;
    uint64_t cap = ZS_SIM_DEFAULT_CAP;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(trace_only ? trace_help : repro_help, stdout);
            return 0;
        } else if (!strcmp(a, "--policy"))
            policy = opt_policy(optval(argc, argv, &i));
        else if (!strcmp(a, "--verify"))
            verify = opt_setting(ZS_SET_VERIFY, optval(argc, argv, &i)).verify;
        else if (!strcmp(a, "--only-i8"))
            only_i8 = 1;
        else if (!strcmp(a, "--order"))
            order = opt_order(optval(argc, argv, &i));
        else if (!strcmp(a, "--text"))
            form = FORM_TEXT;
        else if (!strcmp(a, "--bytes"))
            form = FORM_BYTES;
        else if (!strcmp(a, "--quiet") && !trace_only)
            quiet = 1;
        else if (!strcmp(a, "--cap"))
            cap = opt_setting(ZS_SET_CAP, optval(argc, argv, &i)).cap;
        else if (a[0] == '-' && a[1])
            die_usage("%s: unknown option %s (see --help)", argv[1], a);
        else if (!file)
            file = a;
        else
            die_usage("%s: one FILE only", argv[1]);
    }
    if (!file) die_usage("%s: FILE missing (see --help)", argv[1]);
    static zs_scenario s;
    int is_text;
    if (load_scenario(file, form, &s, NULL, &is_text)) return 2;
    if (only_i8 && !s.cfg.all_ranks)
        die_usage("%s: --only-i8: %s is not an all-ranks scenario (I8 compares the ranks of one)", argv[1], file);
    int pol = policy;
    if (pol < 0 && !is_text) pol = bytes_default_policy(&s);
    if (pol < 0) pol = s.cfg.policy;
    int ord = order >= 0 ? order : s.cfg.order_mode;
    zs_run_opts o;
    run_opts_init(&o);
    o.policy = pol;
    o.order_mode = ord;
    o.cap = cap;
    FILE *verdict_out = trace_only ? stderr : stdout;
    if (trace_only)
        o.trace = stdout;
    else if (!quiet) {
        o.events = stdout;
        printf("# %s (%s), policy %s, order %s, torch %s, deepspeed %s\n", file, is_text ? ".scn text" : "fuzzer bytes",
               zs_policy_name((unsigned)pol), ord == ZS_ORDER_FUZZED ? "fuzzed" : "engine",
               zs_torch_profile_name(s.cfg.torch_profile), zs_ds_profile_name(s.cfg.ds_profile));
    }
    o.verify_collectives = verify;
    o.env.only_i8 = only_i8;
    static zs_world_result wr;
    o.world = &wr;
    zs_outcome out;
    zs_run(&s, &o, &out);
    fflush(stdout);
    if (out.in_world) {
        if (out.verdict == ZS_SCN_SETUP) {
            fprintf(verdict_out, "setup error: %s\n", out.r.setup_msg);
            return 2;
        }
        zs_world_print(verdict_out, &wr);
        return wr.violated ? 1 : 0;
    }
    const zs_sim_result r = out.r;
    if (out.verdict == ZS_SCN_SETUP) {
        fprintf(verdict_out, "setup error (no verdict): %s\n", r.setup_msg);
        return 2;
    }
    if (r.torch_error) fprintf(verdict_out, "note: PyTorch would raise here (%s); the run stopped\n", r.torch_msg);
    if (r.violated) {
        char line[512];
        zs_violation_format(&r.v, line, sizeof line);
        fprintf(verdict_out, "violated: %s (torch %s, deepspeed %s)\n", line,
                zs_torch_profile_name(s.cfg.torch_profile), zs_ds_profile_name(s.cfg.ds_profile));
        return 1;
    }
    if (!trace_only && r.i3_hook_misses)
        fprintf(verdict_out,
                "note: I3-hooks: %llu of %llu end-of-backward checks needed the end-of-backward "
                "callback or sweep (first: %s)\n",
                (unsigned long long)r.i3_hook_misses, (unsigned long long)r.i3_hook_checks, r.i3_hook_first);
    fprintf(verdict_out,
            "all invariants hold (policy %s, torch %s, deepspeed %s, %llu hook calls, %llu events, "
            "%llu backwards)\n",
            zs_policy_name((unsigned)pol), zs_torch_profile_name(s.cfg.torch_profile),
            zs_ds_profile_name(s.cfg.ds_profile), (unsigned long long)r.hook_calls, (unsigned long long)r.events,
            (unsigned long long)r.backwards);
    return 0;
}

/* ------------------------------------------------------------------ */
/* print / compile                                                      */
/* ------------------------------------------------------------------ */

static const char *const print_help = "usage: zofuzz print FILE [-o OUT.scn] [--text|--bytes] [--expect] [--json]\n"
                                      "\n"
                                      "Prints a scenario (raw fuzzer bytes, or .scn text) as canonical .scn text.\n"
                                      "  --expect   add an expect line measured by running every policy\n"
                                      "  --json     print it as JSON instead (docs/scenario-model.md section 5; what\n"
                                      "             the PyTorch oracle reads)\n"
                                      "\n"
                                      "Exit: 0 printed, 2 bad usage/input.\n";

static const char *const compile_help = "usage: zofuzz compile FILE.scn -o FILE.bin\n"
                                        "\n"
                                        "Compiles .scn text into fuzzer bytes (zs_encode): the input that fuzz_hooks\n"
                                        "decodes into the same scenario (names are not encoded).  -o - writes stdout.\n"
                                        "\n"
                                        "Exit: 0 written, 2 bad usage/input.\n";

static int cmd_print(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    int form = FORM_AUTO, want_expect = 0, json = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(print_help, stdout);
            return 0;
        } else if (!strcmp(a, "-o"))
            out = optval(argc, argv, &i);
        else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--text"))
            form = FORM_TEXT;
        else if (!strcmp(a, "--bytes"))
            form = FORM_BYTES;
        else if (!strcmp(a, "--expect"))
            want_expect = 1;
        else if (a[0] == '-' && a[1])
            die_usage("print: unknown option %s", a);
        else if (!file)
            file = a;
        else
            die_usage("print: one FILE only");
    }
    if (!file) die_usage("print: FILE missing (see --help)");
    static zs_scenario s;
    zs_scn_expect e;
    need_writable("-o", out);
    if (load_scenario(file, form, &s, &e, NULL)) return 2;
    if (json) {
        int to_stdout = !out || !strcmp(out, "-");
        FILE *f = to_stdout ? stdout : fopen(out, "w");
        if (!f) {
            fprintf(stderr, "%s: %s: %s\n", g_prog, out, strerror(errno));
            return 2;
        }
        int bad = zs_scenario_write_json(&s, f);
        if (to_stdout ? fflush(f) != 0 : fclose(f) != 0) bad = 1;
        if (bad) fprintf(stderr, "%s: %s: JSON export failed\n", g_prog, to_stdout ? "stdout" : out);
        return bad ? 2 : 0;
    }
    if (want_expect) measure_expect(&s, -1, &e);
    char *t = zs_scn_print(&s, &e);
    if (!t) {
        fprintf(stderr, "%s: cannot print the scenario (out of memory)\n", g_prog);
        return 2;
    }
    int rc = write_all(out, t, strlen(t));
    free(t);
    return rc ? 2 : 0;
}

static int cmd_compile(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(compile_help, stdout);
            return 0;
        } else if (!strcmp(a, "-o"))
            out = optval(argc, argv, &i);
        else if (a[0] == '-' && a[1])
            die_usage("compile: unknown option %s", a);
        else if (!file)
            file = a;
        else
            die_usage("compile: one FILE only");
    }
    if (!file || !out) die_usage("compile: usage: zofuzz compile FILE.scn -o FILE.bin");
    static zs_scenario s, back;
    if (load_scenario(file, FORM_TEXT, &s, NULL, NULL)) return 2;
    static uint8_t enc[ZS_ENCODE_MAX];
    if (zs_scenario_has_ext(&s)) {
        fprintf(stderr,
                "%s: %s: keyword/mixed inputs, aliased, nograd outputs or nosave ops (a captured "
                "model's constructs) have no fuzzer-byte encoding; `zofuzz seeds` compiles the "
                "scenario without them\n",
                g_prog, file);
        return 2;
    }
    if (!zs_scenario_fits_codec(&s)) {
        fprintf(stderr,
                "%s: %s: larger than the fuzzer-byte codec's bounds (%d modules, %d parameters, "
                "%d uses, %d calls per pass, %d child calls per call): .scn text only\n",
                g_prog, file, ZS_CODEC_MAX_MODULES, ZS_CODEC_MAX_PARAMS, ZS_CODEC_MAX_USES, ZS_CODEC_MAX_CALLS,
                ZS_CODEC_MAX_CHILD_CALLS);
        return 2;
    }
    size_t n = zs_encode(&s, enc, sizeof enc);
    if (n == 0 || n > sizeof enc) {
        fprintf(stderr, "%s: %s: cannot encode (%zu bytes)\n", g_prog, file, n);
        return 2;
    }
    zs_decode(enc, n, &back);
    if (!zs_scenario_equal(&s, &back)) {
        fprintf(stderr, "%s: %s: internal error: decode(encode(s)) != s\n", g_prog, file);
        return 2;
    }
    return write_all(out, enc, n) ? 2 : 0;
}

/* ------------------------------------------------------------------ */
/* export                                                               */
/* ------------------------------------------------------------------ */

static const char *const export_help =
    "usage: zofuzz export FILE --to torch|deepspeed [-o OUT.py] [--rank R] [--text|--bytes]\n"
    "\n"
    "Writes a standalone Python script (it imports only torch, or torch and\n"
    "deepspeed) that reproduces the scenario on the real library, for a\n"
    "maintainer who does not have zoffload.  It builds the scenario's model from\n"
    "torch.nn.Modules (.scn names as attribute names, real numels; totals over\n"
    "2^22 elements scaled down as `zofuzz traces --ds` does), runs the steps as\n"
    "tools/torch_oracle.py / tools/deepspeed_oracle.py do, prints one line per\n"
    "hook with ds_grads_remaining and applied_pre_backward_ref_cnt (DeepSpeed:\n"
    "and every parameter's ds_status), and checks the invariants it can observe:\n"
    "I1 (a negative ds_grads_remaining), and on DeepSpeed I3 (a non-persistent\n"
    "parameter still gathered after a backward, an eval forward or the optimizer\n"
    "step) and I4 (an op computing with a parameter that is not AVAILABLE).  The\n"
    "script exits 1 with \"VIOLATION I<n>: ...\" (or \"EXCEPTION ...\" when torch or\n"
    "DeepSpeed raises), else 0 with \"no invariant violation on ...\".  Its header\n"
    "names the scenario, the simulator's verdict under reset-on-forward (DeepSpeed\n"
    "upstream) and this command.\n"
    "\n"
    "  --to torch      plain torch with DeepSpeed-shaped hooks (reset-on-forward\n"
    "                  counters), as tools/torch_oracle.py\n"
    "  --to deepspeed  DeepSpeed ZeRO stage 3 on CPU (gloo, world size 1): by\n"
    "                  default deepspeed.initialize with an optimizer,\n"
    "                  engine.backward, engine.step; the script's --hooks-only runs\n"
    "                  the bare hooks (no optimizer, loss.backward())\n"
    "  -o OUT.py       output file (default stdout); checked before any work, never\n"
    "                  left partly written\n"
    "  --rank R        all-ranks scenarios: export rank R's program (required when\n"
    "                  the scenario has rank edits)\n"
    "\n"
    "Run the result: pip install torch deepspeed; DS_ACCELERATOR=cpu python OUT.py\n"
    "zofuzz run and zofuzz minimize write the DeepSpeed script beside every\n"
    "minimised .scn of a reset-on-forward finding (same name, .py).\n"
    "\n"
    "Exit: 0 written, 2 bad usage/input (nothing written).\n";

/* the command line, for the script's header */
static void join_args(int argc, char **argv, char *out, size_t cap) {
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < argc && n + 2 < cap; i++) {
        const char *a = i == 0 ? "zofuzz" : argv[i];
        int k = snprintf(out + n, cap - n, "%s%s", i ? " " : "", a);
        if (k < 0 || (size_t)k >= cap - n) break;
        n += (size_t)k;
    }
}

static int cmd_export(int argc, char **argv) {
    const char *file = NULL, *out = NULL, *to = NULL, *rank_s = NULL;
    int form = FORM_AUTO, form_seen = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(export_help, stdout);
            return 0;
        } else if (!strcmp(a, "-o")) {
            if (out) die_usage("export: -o given twice");
            out = optval(argc, argv, &i);
        } else if (!strcmp(a, "--to")) {
            if (to) die_usage("export: --to given twice");
            to = optval(argc, argv, &i);
        } else if (!strcmp(a, "--rank")) {
            if (rank_s) die_usage("export: --rank given twice");
            rank_s = optval(argc, argv, &i);
        } else if (!strcmp(a, "--text") || !strcmp(a, "--bytes")) {
            if (form_seen) die_usage("export: --text/--bytes given twice");
            form_seen = 1;
            form = !strcmp(a, "--text") ? FORM_TEXT : FORM_BYTES;
        } else if (a[0] == '-' && a[1])
            die_usage("export: unknown option %s (see --help)", a);
        else if (!file)
            file = a;
        else
            die_usage("export: one FILE only (got '%s' and '%s')", file, a);
    }
    if (!file) die_usage("export: FILE missing (see --help)");
    if (!to) die_usage("export: --to torch|deepspeed missing");
    int target = zs_export_target_from_name(to);
    if (target < 0) die_usage("export: unknown target '%s' for --to (torch, deepspeed)", to);
    long rank = -1;
    if (rank_s) rank = (long)opt_ulong("--rank", rank_s);
    char why[PATH_MAX + 64];
    if (out && strcmp(out, "-") && path_writable(out, why, sizeof why) != 0)
        die_usage("export: cannot write -o %s: %s", out, why);
    static zs_scenario s, r;
    if (load_scenario(file, form, &s, NULL, NULL)) return 2;
    if (rank >= 0 && rank >= s.cfg.world_size)
        die_usage("export: --rank %ld: the scenario has world size %u (ranks 0..%u)", rank, s.cfg.world_size,
                  s.cfg.world_size - 1u);
    const zs_scenario *exp = &s;
    int from_rank = -1;
    if (s.cfg.all_ranks) {
        if (rank < 0 && s.n_edits)
            die_usage("export: %s: an all-ranks scenario with rank edits runs a different program "
                      "on each rank; export one with --rank R (0..%u)",
                      file, s.cfg.world_size - 1u);
        char err[256];
        if (zs_scenario_for_rank(&s, rank < 0 ? 0u : (unsigned)rank, &r, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s: rank %ld: %s\n", g_prog, file, rank < 0 ? 0 : rank, err);
            return 2;
        }
        exp = &r;
        from_rank = rank < 0 ? 0 : (int)rank;
    } else if (rank >= 0) {
        if (zs_scenario_copy(&r, &s)) {
            fprintf(stderr, "%s: %s: out of memory\n", g_prog, file);
            return 2;
        }
        r.cfg.rank = (uint8_t)rank;
        exp = &r;
    }
    char cmd[2048];
    join_args(argc, argv, cmd, sizeof cmd);
    zs_export_opts eo = {target, file, cmd, out && strcmp(out, "-") ? out : NULL, from_rank};
    char err[256];
    char *py = zs_export_script(exp, &eo, err, sizeof err);
    if (!py) {
        fprintf(stderr, "%s: %s: %s\n", g_prog, file, err);
        return 2;
    }
    int rc = (!out || !strcmp(out, "-")) ? write_all(NULL, py, strlen(py)) : write_whole(out, py);
    free(py);
    return rc ? 2 : 0;
}

/* zofuzz run / minimize: the DeepSpeed reproducer of a minimised
 * reset-on-forward finding, beside its .scn (same base name, .py).
 * Prints where it went (to f), or why not. */
static void export_beside(FILE *f, const zs_scenario *s, const char *scn_path, const char *cmd) {
    char py[PATH_MAX];
    size_t n = strlen(scn_path);
    if (ends_with(scn_path, ".scn")) n -= 4;
    if (n + 4 >= sizeof py) return;
    memcpy(py, scn_path, n);
    memcpy(py + n, ".py", 4);
    static zs_scenario r;
    const zs_scenario *e = s;
    int from_rank = -1;
    char err[256];
    if (s->cfg.all_ranks) {
        /* the first rank that violates alone; rank 0 if none does */
        unsigned pick = 0;
        zs_run_opts ro;
        run_opts_init(&ro);
        ro.policy = zs_policy_from_name("reset-on-forward");
        for (unsigned k = 0; k < s->cfg.world_size; k++) {
            zs_outcome out;
            if (zs_scenario_for_rank(s, k, &r, err, sizeof err) != 0) continue;
            if (zs_run(&r, &ro, &out) != ZS_INV_NONE) {
                pick = k;
                break;
            }
        }
        if (zs_scenario_for_rank(s, pick, &r, err, sizeof err) != 0) {
            fprintf(f, "  (no DeepSpeed reproducer: %s)\n", err);
            return;
        }
        e = &r;
        from_rank = (int)pick;
    }
    zs_export_opts eo = {ZS_EXPORT_DEEPSPEED, scn_path, cmd, py, from_rank};
    char *text = zs_export_script(e, &eo, err, sizeof err);
    if (!text) {
        fprintf(f, "  (no DeepSpeed reproducer: %s)\n", err);
        return;
    }
    if (write_whole(py, text) == 0)
        fprintf(f, "  DeepSpeed reproducer: %s (DS_ACCELERATOR=cpu python %s)\n", py, base_name(py));
    free(text);
}

/* ------------------------------------------------------------------ */
/* minimize                                                             */
/* ------------------------------------------------------------------ */

static const char *const minimize_help =
    "usage: zofuzz minimize FILE [-o OUT.scn] [--policy P] [--order engine|fuzzed|scenario]\n"
    "                       [--inv I] [--same-verdicts] [--max-runs N] [--text|--bytes] [-v]\n"
    "\n"
    "Structure-aware delta debugging over the scenario (not over bytes): drops\n"
    "steps, passes, calls with their subtrees, modules (ids re-indexed), parameters,\n"
    "uses, inputs, outputs, consumed tensors and loss terms; clears flags (no_grad,\n"
    "checkpoint, raise, detach, z3_leaf, frozen); turns steps into plain train steps;\n"
    "lowers numel, W and rank; moves config values to their defaults; shortens and\n"
    "zeroes the fuzzed order bytes.  A change is kept only if the SAME invariant\n"
    "still fails under the same policy and order; repeated to a fixpoint.\n"
    "Prints the sizes before and after (steps/passes/calls/modules/params/uses and\n"
    "lines of .scn) and writes the minimised scenario as .scn with an expect line\n"
    "measured under every policy (stdout without -o).  With -o and a\n"
    "reset-on-forward finding it also writes the DeepSpeed reproducer beside it\n"
    "(OUT.py, zofuzz export --to deepspeed) and names it.\n"
    "\n"
    "  --policy P   policy to minimise under (default: the scenario's; raw fuzzer\n"
    "               bytes: fuzz_hooks' policy, as for repro)\n"
    "  --inv I      keep this invariant (I1..I7, ERR; default: the first one reported)\n"
    "  --same-verdicts  also keep the verdict under every other policy (the whole\n"
    "               expect line): the result stays in the same bug class\n"
    "  --max-runs N simulator run budget, at least 1 (default 200000)\n"
    "All-ranks scenarios run every rank in the host world (I8 included); the\n"
    "fuzz_hooks knobs as options, kept on every candidate (the remedy under test\n"
    "cannot be minimised away): --invariants programs|all|I8|no-I8, --edits K,...,\n"
    "--gather-always routers (see zofuzz check --help); ZOFUZZ_INVARIANTS,\n"
    "ZOFUZZ_EDITS and ZOFUZZ_GATHER_ALWAYS set them too when no option does\n"
    "\n"
    "Exit: 0 minimised, 1 the scenario violates nothing (nothing to minimise),\n"
    "      2 bad usage/input.\n";

static void print_size(FILE *f, const char *what, const zs_min_size *z) {
    fprintf(f, "%s: %u step%s, %u pass%s, %u call%s, %u module%s, %u param%s, %u use%s", what, z->steps,
            z->steps == 1 ? "" : "s", z->passes, z->passes == 1 ? "" : "es", z->calls, z->calls == 1 ? "" : "s",
            z->modules, z->modules == 1 ? "" : "s", z->params, z->params == 1 ? "" : "s", z->uses,
            z->uses == 1 ? "" : "s");
    if (z->order_bytes) fprintf(f, ", %u order bytes", z->order_bytes);
    fprintf(f, "; %d .scn lines\n", z->lines);
}

/* Writes the minimised scenario with a provenance comment and a measured
 * expect line. */
static char *min_text(const zs_scenario *s, const char *origin, const zs_min_stats *st) {
    zs_scn_expect e;
    measure_expect(s, -1, &e);
    char *body = zs_scn_print(s, &e);
    if (!body) return NULL;
    char line[512];
    zs_violation_format(&st->v, line, sizeof line);
    size_t cap = strlen(body) + strlen(line) + strlen(origin) + 256;
    char *t = malloc(cap);
    if (!t) {
        free(body);
        return NULL;
    }
    xsnprintf(t, cap, "# minimised by zofuzz minimize from %s\n# %s\n%s", origin, line, body);
    free(body);
    return t;
}

static int cmd_minimize(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    int form = FORM_AUTO;
    zs_min_opts mo;
    zs_min_opts_init(&mo);
    mo.max_runs = 200000;
    zs_world_env wenv = world_env_base(); /* the environment's knobs; the options below override them */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(minimize_help, stdout);
            return 0;
        } else if (!strcmp(a, "-o"))
            out = optval(argc, argv, &i);
        else if (!strcmp(a, "--policy"))
            mo.policy = opt_policy(optval(argc, argv, &i));
        else if (!strcmp(a, "--order"))
            mo.order_mode = opt_order(optval(argc, argv, &i));
        else if (!strcmp(a, "--inv")) {
            const char *v = optval(argc, argv, &i);
            mo.inv = zs_scn_verdict_from_name(v);
            if (mo.inv <= 0 || mo.inv >= ZS_INV_COUNT) die_usage("minimize: bad invariant '%s'", v);
        } else if (!strcmp(a, "--max-runs")) {
            mo.max_runs = opt_ulong("--max-runs", optval(argc, argv, &i));
            if (mo.max_runs == 0) die_usage("minimize: --max-runs must be at least 1");
        } else if (!strcmp(a, "--text"))
            form = FORM_TEXT;
        else if (!strcmp(a, "--bytes"))
            form = FORM_BYTES;
        else if (!strcmp(a, "-v"))
            mo.verbose = 1;
        else if (!strcmp(a, "--same-verdicts"))
            mo.same_verdicts = 1;
        else if (world_opt("minimize", argc, argv, &i, &wenv))
            continue;
        else if (a[0] == '-' && a[1])
            die_usage("minimize: unknown option %s", a);
        else if (!file)
            file = a;
        else
            die_usage("minimize: one FILE only");
    }
    if (!file) die_usage("minimize: FILE missing (see --help)");
    need_writable("-o", out);
    static zs_scenario s;
    int is_text;
    if (load_scenario(file, form, &s, NULL, &is_text)) return 2;
    if (mo.policy < 0 && !is_text) mo.policy = bytes_default_policy(&s);
    mo.run.env = wenv; /* every candidate runs with the knobs */
    zs_min_stats st;
    int rc = zs_minimize(&s, &mo, &st);
    if (rc == 0) zs_world_env_apply(&wenv, &s); /* the remedy stays in the printed scenario */
    if (rc < 0) {
        fprintf(stderr, "%s: %s: invalid scenario or out of memory\n", g_prog, file);
        return 2;
    }
    if (rc == 1) {
        fprintf(stderr, "%s: %s: %s under policy %s - nothing to minimise\n", g_prog, file,
                st.inv == ZS_INV_NONE    ? "every invariant holds"
                : st.inv == ZS_SCN_SETUP ? "the runtime refuses the setup"
                                         : "it violates a different invariant",
                zs_policy_name((unsigned)st.policy));
        return 1;
    }
    char line[512];
    zs_violation_format(&st.v, line, sizeof line);
    fprintf(stderr, "invariant %s under %s: %s\n", zs_inv_name(st.inv), zs_policy_name((unsigned)st.policy), line);
    print_size(stderr, "before", &st.before);
    print_size(stderr, "after ", &st.after);
    fprintf(stderr, "%lu simulator runs, %lu changes kept, %u rounds, %.2f s\n", st.runs, st.accepted, st.rounds,
            st.seconds);
    char *t = min_text(&s, file, &st);
    if (!t) return 2;
    int w = write_all(out, t, strlen(t));
    free(t);
    if (out && !w) fprintf(stderr, "wrote %s\n", out);
    if (out && !w && strcmp(out, "-") && st.policy == zs_policy_from_name("reset-on-forward")) {
        char cmd[2048];
        join_args(argc, argv, cmd, sizeof cmd);
        export_beside(stderr, &s, out, cmd);
    }
    return w ? 2 : 0;
}

/* ------------------------------------------------------------------ */
/* check                                                                */
/* ------------------------------------------------------------------ */

static const char *const check_help =
    "usage: zofuzz check [--trials N] [--seed S] [--policy P] [--order engine|fuzzed|scenario]\n"
    "                    [--max-len N] [--max-failures N] [--no-minimize] [--any-verdicts]\n"
    "                    [-o DIR] [--quiet] [--invariants programs|all|I8|no-I8] [--edits K,...]\n"
    "                    [--gather-always routers]\n"
    "\n"
    "Property testing without a fuzzing engine: trial t of seed S draws random\n"
    "bytes from a seeded PRNG (zs_rand_input, splitmix64), decodes them into a\n"
    "scenario (zs_decode, the same decoder as fuzz_hooks) and runs it through the\n"
    "simulator and checker.  Every failure is minimised (zofuzz minimize) and\n"
    "printed as .scn; identical minimised scenarios are printed once.  The same\n"
    "seed reproduces the same run everywhere.\n"
    "\n"
    "  --trials N        scenarios to run (default 1000)\n"
    "  --seed S          PRNG seed (default 1)\n"
    "  --policy P        counter policy (default per-call)\n"
    "  --order O         backward order (default: each scenario's)\n"
    "  --max-len N       random input length at most N bytes (default 512)\n"
    "  --max-failures N  stop after N failures (default 5; 0 = never stop)\n"
    "  -o DIR            also write each distinct minimised scenario to DIR/check-SEED-T.scn\n"
    "  --any-verdicts    minimise keeping only the invariant (default: also the verdict\n"
    "                    under every other policy - zofuzz minimize --same-verdicts - so\n"
    "                    that different bug classes stay apart)\n"
    "All-ranks scenarios (about 4 in 10 random ones) run in the host world\n"
    "(fuzz/world.h), which also checks I8 (identical collectives on every rank):\n"
    "  --invariants I   programs (default: every invariant; any divergence is I8),\n"
    "                    all (as fuzz_hooks' default: I8 only where the runtime is to\n"
    "                    blame - routing inside gather-always modules, or a diverging\n"
    "                    all-gather past verify_collectives; other divergences are\n"
    "                    the programs' and counted), I8 (only I8, any divergence: ranks\n"
    "                    run past their own violations), no-I8 (all but I8)\n"
    "  --edits K,...     keep only rank edits of these kinds (route, skip, exit, raise,\n"
    "                    skip-step) - as ZOFUZZ_EDITS in fuzz_hooks\n"
    "  --gather-always routers  mark every ROUTE edit's router module gather-always\n"
    "                    first (the remedy) - as ZOFUZZ_GATHER_ALWAYS in fuzz_hooks\n"
    "Those three environment variables, when set, set the same knobs here (the\n"
    "defaults above stay otherwise); an option overrides its variable.\n"
    "\n"
    "Exit: 0 every trial held every invariant, 1 a failure was found, 2 bad usage.\n";

#define MAX_SEEN 64
typedef struct seen_set {
    char *text[MAX_SEEN];
    int n;
} seen_set;

static int seen_add(seen_set *ss, const char *t) {
    for (int i = 0; i < ss->n; i++)
        if (!strcmp(ss->text[i], t)) return 0;
    if (ss->n < MAX_SEEN) ss->text[ss->n++] = strdup(t);
    return 1;
}

static void seen_free(seen_set *ss) {
    for (int i = 0; i < ss->n; i++) free(ss->text[i]);
    ss->n = 0;
}

static int cmd_check(int argc, char **argv) {
    unsigned long trials = 1000, max_len = 512, max_fail = 5;
    uint64_t seed = 1;
    int policy = ZO_GRADS_PER_CALL, order = -1, minimize = 1, quiet = 0, same_verdicts = 1;
    const char *outdir = NULL;
    zs_world_env wenv = world_env_base(); /* the environment's knobs; the options below override them */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(check_help, stdout);
            return 0;
        } else if (!strcmp(a, "--trials"))
            trials = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--seed"))
            seed = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--policy"))
            policy = opt_policy(optval(argc, argv, &i));
        else if (!strcmp(a, "--order"))
            order = opt_order(optval(argc, argv, &i));
        else if (!strcmp(a, "--max-len"))
            max_len = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--max-failures"))
            max_fail = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--no-minimize"))
            minimize = 0;
        else if (!strcmp(a, "--any-verdicts"))
            same_verdicts = 0;
        else if (!strcmp(a, "-o"))
            outdir = optval(argc, argv, &i);
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (world_opt("check", argc, argv, &i, &wenv))
            continue;
        else
            die_usage("check: unknown argument %s (see --help)", a);
    }
    if (max_len > 65536) die_usage("check: --max-len at most 65536");
    if (trials == 0) die_usage("check: --trials must be at least 1");
    if (outdir && (mkdirs(outdir) || access(outdir, W_OK | X_OK)))
        die_usage("check: -o %s: cannot create or write it (%s)", outdir, strerror(errno));
    uint8_t *buf = malloc(max_len + 1);
    zs_scenario *s = calloc(1, sizeof *s);
    if (!buf || !s) die_usage("out of memory");
    unsigned long fails = 0, by_inv[ZS_INV_COUNT + 1] = {0}, torch = 0, setup = 0;
    unsigned long ranked = 0, diverged = 0;
    zs_run_opts ro;
    run_opts_init(&ro);
    ro.policy = policy;
    ro.order_mode = order;
    ro.env = wenv;
    seen_set seen = {0};
    double t0 = now_s();
    unsigned long t;
    for (t = 0; t < trials; t++) {
        size_t n = zs_rand_input(seed, t, buf, max_len);
        zs_decode(buf, n, s);
        /* the knobs edit the scenario that is minimised and printed too */
        zs_world_env_apply(&wenv, s);
        zs_outcome out;
        int v = zs_run(s, &ro, &out);
        if (!out.ran) continue; /* --invariants I8 on one rank's view: nothing to check */
        const zs_sim_result r = out.r;
        if (out.in_world) {
            ranked++;
            diverged += out.divergence >= 0;
        }
        if (r.torch_error) torch++;
        if (v == ZS_INV_NONE) continue;
        fails++;
        if (v == ZS_SCN_SETUP) {
            setup++;
            printf("trial %lu (seed %llu, %zu bytes): setup error: %s\n", t, (unsigned long long)seed, n, r.setup_msg);
        } else {
            by_inv[v]++;
            char line[512];
            zs_violation_format(&r.v, line, sizeof line);
            printf("trial %lu (seed %llu, %zu bytes): %s\n", t, (unsigned long long)seed, n, line);
            if (minimize) {
                zs_min_opts mo;
                zs_min_opts_init(&mo);
                mo.policy = policy;
                mo.order_mode = order;
                mo.inv = v;
                mo.max_runs = 50000;
                mo.same_verdicts = same_verdicts;
                mo.run.env = wenv;
                zs_min_stats st;
                if (zs_minimize(s, &mo, &st) == 0) {
                    zs_world_env_apply(&wenv, s); /* the remedy stays in the printed scenario */
                    char origin[96];
                    xsnprintf(origin, sizeof origin, "zofuzz check --seed %llu trial %lu", (unsigned long long)seed, t);
                    char *txt = min_text(s, origin, &st);
                    if (txt) {
                        /* dedupe on the scenario body (after the 2 comment lines) */
                        const char *body = strchr(txt, '\n');
                        body = body ? strchr(body + 1, '\n') : NULL;
                        body = body ? body + 1 : txt;
                        if (seen_add(&seen, body)) {
                            printf("  minimised (%u calls, %u modules, %d lines, %lu runs):\n", st.after.calls,
                                   st.after.modules, st.after.lines, st.runs);
                            if (!quiet)
                                for (const char *q = body; *q;) {
                                    const char *e = strchr(q, '\n');
                                    int len = e ? (int)(e - q) : (int)strlen(q);
                                    printf("    %.*s\n", len, q);
                                    q += len + (e ? 1 : 0);
                                }
                            if (outdir) {
                                char p[PATH_MAX];
                                xsnprintf(p, sizeof p, "%s/check-%llu-%lu.scn", outdir, (unsigned long long)seed, t);
                                write_all(p, txt, strlen(txt));
                            }
                        } else {
                            printf("  minimised to a scenario printed above\n");
                        }
                        free(txt);
                    }
                }
            }
        }
        fflush(stdout);
        if (max_fail && fails >= max_fail) {
            t++;
            break;
        }
    }
    double dt = now_s() - t0;
    printf("check: %lu trials, seed %llu, policy %s: %lu failure%s", t, (unsigned long long)seed,
           zs_policy_name((unsigned)policy), fails, fails == 1 ? "" : "s");
    if (fails) {
        printf(" (");
        int first = 1;
        for (int k = 1; k < ZS_INV_COUNT; k++)
            if (by_inv[k]) {
                printf("%s%s x%lu", first ? "" : ", ", zs_inv_name(k), by_inv[k]);
                first = 0;
            }
        if (setup) printf("%ssetup x%lu", first ? "" : ", ", setup);
        printf(")");
    }
    printf("; %lu stopped at a TORCHERROR; %lu all-ranks (%lu with diverging collectives); "
           "%.2f s (%.0f scenarios/s)\n",
           torch, ranked, diverged, dt, dt > 0 ? t / dt : 0.0);
    seen_free(&seen);
    free(buf);
    zs_scenario_free(s);
    free(s);
    return fails ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* traces (the differential tests' front end)                          */
/* ------------------------------------------------------------------ */

static const char *const traces_help =
    "usage: zofuzz traces OUTDIR FILE... [--ds] [--rank R] [--ds-profile P] [--torch-profile P]\n"
    "       zofuzz traces OUTDIR --seeds FIRST LAST [options as above]\n"
    "\n"
    "The simulator's side of the differential tests (tools/difftest.py, the\n"
    "PyTorch and DeepSpeed oracles, python/zoffload/capture.py).  FILE is .scn\n"
    "text when named *.scn, raw fuzzer bytes otherwise; --seeds FIRST LAST takes\n"
    "the scenarios `zofuzz gen --seed S` writes for S = FIRST..LAST.  For every\n"
    "scenario k (0, 1, ... in order; an all-ranks scenario gives one per rank,\n"
    "its program zs_scenario_for_rank, named NAME#rankR) it writes\n"
    "  OUTDIR/k.json              the scenario as JSON (docs/scenario-model.md section 5)\n"
    "  OUTDIR/k.<policy>.trace    the canonical engine-order hook trace of each policy\n"
    "and one line per scenario to OUTDIR/index.tsv:\n"
    "  k <TAB> name <TAB> policy=ok|I1|...|ERR|torch|setup ...\n"
    "Unlike `zofuzz trace`, a run does not stop at a violation (the legacy\n"
    "policies violate by design and the whole run is compared); a PyTorch error\n"
    "still ends it.\n"
    "\n"
    "  --rank R           only rank R's program of each all-ranks scenario (a FILE\n"
    "                     without rank R is an error; a --seeds scenario without it\n"
    "                     is left out, and counted on stderr)\n"
    "  --ds-profile P     every scenario's deepspeed profile: 0.19 | 0.19-hooks | 0.15\n"
    "  --torch-profile P  every scenario's torch profile: 2.x | 2.x-no-early-stop | 1.13\n"
    "  --ds               as the DeepSpeed oracle runs it: world size 1, rank 0,\n"
    "                     immediate completion, no gather-always, policy\n"
    "                     reset-on-forward only, and the runtime's event log in\n"
    "                     OUTDIR/k.reset-on-forward.events; a scenario over 2^22\n"
    "                     elements in all is scaled down first (every numel and\n"
    "                     finite non-zero threshold divided by one factor, at least 1)\n"
    "\n"
    "Exit: 0 written, 2 bad usage, input or output.\n";

#define DS_MAX_TOTAL_NUMEL (1ull << 22) /* = deepspeed_oracle.py's MAX_TOTAL_NUMEL */

typedef struct traces_opts {
    const char *dir;
    FILE *index;
    int ds_mode, only_rank, ds_profile, torch_profile;
} traces_opts;

/* --ds: a scenario the DeepSpeed oracle can hold in real tensors */
static void ds_scale(zs_scenario *sc) {
    uint64_t total = 0;
    for (unsigned i = 0; i < sc->n_params; i++) total += sc->par[i].numel;
    if (total <= DS_MAX_TOTAL_NUMEL) return;
    uint64_t f = (total + DS_MAX_TOTAL_NUMEL - 1) / DS_MAX_TOTAL_NUMEL;
    for (unsigned i = 0; i < sc->n_params; i++) {
        uint64_t n = sc->par[i].numel / f;
        sc->par[i].numel = (uint32_t)(n ? n : 1);
    }
    for (int t = 0; t < ZS_TH_COUNT; t++) {
        uint64_t *v = zs_config_threshold(&sc->cfg, t);
        if (*v != ZS_INF && *v != 0) *v = *v / f ? *v / f : 1;
    }
}

/* scenario k: its JSON, a trace per policy, its index line */
static int traces_emit(const traces_opts *T, zs_scenario *sc, unsigned k, const char *name) {
    char path[PATH_MAX];
    if (T->ds_profile >= 0) sc->cfg.ds_profile = (uint8_t)T->ds_profile;
    if (T->torch_profile >= 0) sc->cfg.torch_profile = (uint8_t)T->torch_profile;
    if (T->ds_mode) {
        sc->cfg.world_size = 1;
        sc->cfg.rank = 0;
        sc->cfg.deferred = 0;
        sc->cfg.progress_every = 0;
        sc->cfg.policy = ZO_GRADS_RESET_ON_FORWARD;
        for (unsigned m = 0; m < sc->n_modules; m++) sc->mod[m].flags &= (uint8_t)~ZS_MOD_GATHER_ALWAYS;
        ds_scale(sc);
    }
    xsnprintf(path, sizeof path, "%s/%u.json", T->dir, k);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", g_prog, path, strerror(errno));
        return 2;
    }
    int bad = zs_scenario_write_json(sc, f);
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        fprintf(stderr, "%s: traces: %s: JSON export failed\n", g_prog, name);
        return 2;
    }
    fprintf(T->index, "%u\t%s", k, name);
    for (int pol = 0; pol < 4; pol++) {
        if (T->ds_mode && pol != ZO_GRADS_RESET_ON_FORWARD) continue;
        FILE *ev = NULL;
        if (T->ds_mode) {
            xsnprintf(path, sizeof path, "%s/%u.%s.events", T->dir, k, zs_policy_name((unsigned)pol));
            ev = fopen(path, "w");
            if (!ev) {
                fprintf(stderr, "%s: %s: %s\n", g_prog, path, strerror(errno));
                return 2;
            }
        }
        xsnprintf(path, sizeof path, "%s/%u.%s.trace", T->dir, k, zs_policy_name((unsigned)pol));
        f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "%s: %s: %s\n", g_prog, path, strerror(errno));
            if (ev) fclose(ev);
            return 2;
        }
        zs_run_opts o;
        run_opts_init(&o);
        o.policy = pol;
        o.order_mode = ZS_ORDER_ENGINE;
        o.stop_on_violation = 0;
        o.one_rank = 1; /* each rank's program is a scenario of its own here */
        o.trace = f;
        o.events = ev;
        zs_outcome out;
        int v = zs_run(sc, &o, &out);
        int werr = fclose(f) != 0;
        if (ev && fclose(ev) != 0) werr = 1;
        if (werr) {
            fprintf(stderr, "%s: traces: %s: writing the trace failed\n", g_prog, name);
            return 2;
        }
        const char *res = "ok";
        if (v == ZS_SCN_SETUP)
            res = "setup";
        else if (out.r.violated)
            res = zs_inv_name(out.r.v.inv);
        else if (out.r.torch_error)
            res = "torch";
        fprintf(T->index, "\t%s=%s", zs_policy_name((unsigned)pol), res);
    }
    fprintf(T->index, "\n");
    return 0;
}

/* traces_emit for sc, or for each rank's program of an all-ranks sc.
 * --rank R on a FILE that has no rank R is an error (exit 2); a generated
 * scenario (--seeds) without it is left out and counted in *skipped. */
static int traces_emit_ranks(const traces_opts *T, zs_scenario *sc, unsigned *k, const char *name, int from_file,
                             unsigned *skipped) {
    if (T->only_rank >= 0 && (!sc->cfg.all_ranks || (unsigned)T->only_rank >= sc->cfg.world_size)) {
        if (!from_file) {
            (*skipped)++;
            return 0;
        }
        if (!sc->cfg.all_ranks)
            fprintf(stderr, "%s: traces: %s: --rank %d: not an all-ranks scenario (--rank picks one rank's program)\n",
                    g_prog, name, T->only_rank);
        else
            fprintf(stderr, "%s: traces: %s: --rank %d: the scenario has world size %u (ranks 0..%u)\n", g_prog, name,
                    T->only_rank, (unsigned)sc->cfg.world_size, (unsigned)sc->cfg.world_size - 1u);
        return 2;
    }
    if (!sc->cfg.all_ranks) return traces_emit(T, sc, (*k)++, name);
    static zs_scenario whole;
    if (zs_scenario_copy(&whole, sc)) {
        fprintf(stderr, "%s: traces: %s: out of memory\n", g_prog, name);
        return 2;
    }
    for (unsigned r = 0; r < whole.cfg.world_size; r++) {
        if (T->only_rank >= 0 && (unsigned)T->only_rank != r) continue;
        char err[256], rname[PATH_MAX + 32];
        if (zs_scenario_for_rank(&whole, r, sc, err, sizeof err) != 0) {
            fprintf(stderr, "%s: traces: %s: rank %u: %s\n", g_prog, name, r, err);
            return 2;
        }
        xsnprintf(rname, sizeof rname, "%s#rank%u", name, r);
        int rc = traces_emit(T, sc, (*k)++, rname);
        if (rc) return rc;
    }
    return 0;
}

static int cmd_traces(int argc, char **argv) {
    traces_opts T = {NULL, NULL, 0, -1, -1, -1};
    int have_seeds = 0, nfiles = 0;
    unsigned long long first = 0, last = 0;
    const char **files = calloc((size_t)argc, sizeof *files);
    if (!files) die_usage("out of memory");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(traces_help, stdout);
            free(files);
            return 0;
        } else if (!strcmp(a, "--ds"))
            T.ds_mode = 1;
        else if (!strcmp(a, "--rank")) {
            unsigned long r = opt_ulong(a, optval(argc, argv, &i));
            if (r >= ZS_MAX_WORLD) die_usage("traces: --rank %lu: not a rank 0..%d", r, ZS_MAX_WORLD - 1);
            T.only_rank = (int)r;
        } else if (!strcmp(a, "--ds-profile")) {
            const char *v = optval(argc, argv, &i);
            if ((T.ds_profile = zs_ds_profile_from_name(v)) < 0)
                die_usage("traces: --ds-profile '%s': not 0.19, 0.19-hooks or 0.15", v);
        } else if (!strcmp(a, "--torch-profile")) {
            const char *v = optval(argc, argv, &i);
            if ((T.torch_profile = zs_torch_profile_from_name(v)) < 0)
                die_usage("traces: --torch-profile '%s': not 2.x, 2.x-no-early-stop or 1.13", v);
        } else if (!strcmp(a, "--seeds")) {
            if (i + 2 >= argc) die_usage("traces: --seeds needs two values, FIRST and LAST");
            first = opt_ulong("--seeds", argv[++i]);
            last = opt_ulong("--seeds", argv[++i]);
            have_seeds = 1;
        } else if (a[0] == '-' && a[1])
            die_usage("traces: unknown option %s (see --help)", a);
        else if (!T.dir)
            T.dir = a;
        else
            files[nfiles++] = a;
    }
    if (!T.dir) die_usage("traces: OUTDIR missing (see --help)");
    if (have_seeds == (nfiles > 0))
        die_usage("traces: give either FILE... or --seeds FIRST LAST after OUTDIR (see --help)");
    if (have_seeds && first > last) die_usage("traces: --seeds %llu %llu: FIRST is after LAST", first, last);
    if (!is_dir(T.dir)) die_usage("traces: %s: not a directory (create it first)", T.dir);
    char path[PATH_MAX];
    xsnprintf(path, sizeof path, "%s/index.tsv", T.dir);
    T.index = fopen(path, "w");
    if (!T.index) die_usage("traces: %s: %s", path, strerror(errno));
    static zs_scenario sc;
    static uint8_t enc[ZS_ENCODE_MAX], raw[512];
    int rc = 0;
    unsigned k = 0, skipped = 0;
    for (unsigned long long sd = first; have_seeds && sd <= last && !rc; sd++) {
        /* exactly what `zofuzz gen --seed S` writes, decoded */
        size_t n = zs_rand_input(sd, 0, raw, sizeof raw);
        zs_decode(raw, n, &sc);
        size_t m = zs_encode(&sc, enc, sizeof enc);
        if (m == 0 || m > sizeof enc) {
            fprintf(stderr, "%s: traces: seed %llu: cannot encode\n", g_prog, sd);
            rc = 2;
            break;
        }
        zs_decode(enc, m, &sc);
        char name[64];
        xsnprintf(name, sizeof name, "seed-%llu", sd);
        rc = traces_emit_ranks(&T, &sc, &k, name, 0, &skipped);
        if (sd == ULLONG_MAX) break;
    }
    for (int i = 0; i < nfiles && !rc; i++) {
        if (load_scenario(files[i], ends_with(files[i], ".scn") ? FORM_TEXT : FORM_BYTES, &sc, NULL, NULL)) {
            rc = 2;
            break;
        }
        rc = traces_emit_ranks(&T, &sc, &k, files[i], 1, &skipped);
    }
    if (!rc && skipped)
        fprintf(stderr, "%s: traces: --rank %d: %u of the seeds' scenarios have no rank %d, left out\n", g_prog,
                T.only_rank, skipped, T.only_rank);
    if (!rc && k == 0 && T.only_rank >= 0) {
        fprintf(stderr, "%s: traces: no scenario has rank %d: nothing written\n", g_prog, T.only_rank);
        rc = 2;
    }
    if (fclose(T.index) != 0 && !rc) {
        fprintf(stderr, "%s: %s: write failed\n", g_prog, path);
        rc = 2;
    }
    free(files);
    return rc;
}

/* ------------------------------------------------------------------ */
/* gen                                                                  */
/* ------------------------------------------------------------------ */

static const char *const gen_help = "usage: zofuzz gen --seed S [--max-len N] [-o OUT]\n"
                                    "\n"
                                    "Writes the canonical fuzzer bytes of the random scenario of seed S: the\n"
                                    "first input `zofuzz check --seed S` draws (zs_rand_input trial 0, N bytes at\n"
                                    "most, default 512), decoded and encoded again.  `zofuzz traces --seeds`\n"
                                    "and tools/difftest.py use the same scenarios.  -o - or no -o: stdout.\n"
                                    "\n"
                                    "Exit: 0 written, 2 bad usage or output.\n";

static int cmd_gen(int argc, char **argv) {
    const char *out = NULL;
    unsigned long max_len = 512;
    uint64_t seed = 0;
    int have_seed = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(gen_help, stdout);
            return 0;
        } else if (!strcmp(a, "--seed")) {
            seed = opt_ulong(a, optval(argc, argv, &i));
            have_seed = 1;
        } else if (!strcmp(a, "--max-len"))
            max_len = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "-o"))
            out = optval(argc, argv, &i);
        else if (a[0] == '-' && a[1])
            die_usage("gen: unknown option %s (see --help)", a);
        else
            die_usage("gen: no operands (see --help)");
    }
    if (max_len > 65536) die_usage("gen: --max-len at most 65536");
    need_writable("-o", out);
    if (!have_seed) die_usage("gen: --seed S missing (see --help)");
    uint8_t *raw = malloc(max_len + 1);
    static uint8_t enc[ZS_ENCODE_MAX];
    static zs_scenario sc;
    if (!raw) die_usage("out of memory");
    size_t n = zs_rand_input(seed, 0, raw, max_len);
    zs_decode(raw, n, &sc);
    free(raw);
    size_t m = zs_encode(&sc, enc, sizeof enc);
    if (m == 0 || m > sizeof enc) {
        fprintf(stderr, "%s: gen: seed %llu: cannot encode\n", g_prog, (unsigned long long)seed);
        return 2;
    }
    return write_all(out, enc, m) ? 2 : 0;
}

/* ------------------------------------------------------------------ */
/* verify (regression suite)                                            */
/* ------------------------------------------------------------------ */

static const char *const verify_help =
    "usage: zofuzz verify FILE.scn|DIR...\n"
    "\n"
    "Regression check: every .scn file (directories: every *.scn in them) is run\n"
    "under each policy of its expect line and the verdict compared.  Per-call must\n"
    "hold every invariant in every file, whether its expect line lists it or not\n"
    "(\"per-call=I3\" in a file is a runtime bug report, not a regression), except\n"
    "I8 in a ranks=all file: ranks whose programs issue different collectives diverge\n"
    "under every policy (mixtral_moe_ranks.scn).\n"
    "\n"
    "Exit: 0 every verdict as stated, 1 a mismatch, 2 bad usage or unparsable file.\n";

static int verify_file(const char *path, int *parse_err) {
    static zs_scenario s;
    zs_scn_expect e;
    if (load_scenario(path, FORM_TEXT, &s, &e, NULL)) {
        *parse_err = 1;
        return 1;
    }
    int bad = 0;
    /* the verdicts hold under the profiles the expect line names */
    zs_scn_expect_apply(&e, &s);
    /* per-call must hold in every file, listed or not */
    if (!e.have[ZO_GRADS_PER_CALL]) {
        e.have[ZO_GRADS_PER_CALL] = 1;
        e.verdict[ZO_GRADS_PER_CALL] = ZS_INV_NONE;
    }
    /* ... except I8: ranks whose programs issue different collectives (MoE routing
     * per rank without a gather-always block) diverge under any counter policy -
     * a property of the program, which the runtime can only report, not a bug */
    if (e.have[ZO_GRADS_PER_CALL] && e.verdict[ZO_GRADS_PER_CALL] != ZS_INV_NONE &&
        !(e.verdict[ZO_GRADS_PER_CALL] == ZS_INV_I8 && s.cfg.all_ranks)) {
        printf("FAIL %s: expect says per-call=%s; per-call must hold every invariant (report it "
               "as a runtime bug)\n",
               path, zs_scn_verdict_name(e.verdict[ZO_GRADS_PER_CALL]));
        bad = 1;
    }
    char got_line[256] = "";
    size_t gl = 0;
    zs_run_opts ro;
    run_opts_init(&ro);
    for (int p = 0; p < 4; p++) {
        if (!e.have[p]) continue;
        zs_outcome out;
        ro.policy = p;
        int v = zs_run(&s, &ro, &out);
        const zs_sim_result r = out.r;
        gl += (size_t)snprintf(got_line + gl, sizeof got_line - gl, " %s=%s", zs_policy_name((unsigned)p),
                               zs_scn_verdict_name(v));
        if (gl >= sizeof got_line) gl = sizeof got_line - 1;
        if (v != e.verdict[p]) {
            char line[512] = "";
            if (r.violated)
                zs_violation_format(&r.v, line, sizeof line);
            else if (v == ZS_SCN_SETUP)
                snprintf(line, sizeof line, "%s", r.setup_msg);
            printf("FAIL %s: policy %s: expected %s, got %s%s%s\n", path, zs_policy_name((unsigned)p),
                   zs_scn_verdict_name(e.verdict[p]), zs_scn_verdict_name(v), line[0] ? ": " : "", line);
            bad = 1;
        }
    }
    if (!bad) printf("ok   %s:%s\n", path, got_line);
    return bad;
}

static int cmd_verify(int argc, char **argv) {
    int nfiles = 0, bad = 0, perr = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(verify_help, stdout);
            return 0;
        }
        if (a[0] == '-' && a[1]) die_usage("verify: unknown option %s", a);
        if (is_dir(a)) {
            char **v;
            size_t n = list_dir(a, ".scn", &v);
            if (n == 0) {
                free_list(v, n);
                die_usage("verify: %s: a directory without .scn files", a);
            }
            for (size_t k = 0; k < n; k++) {
                bad += verify_file(v[k], &perr);
                nfiles++;
            }
            free_list(v, n);
        } else {
            bad += verify_file(a, &perr);
            nfiles++;
        }
    }
    if (!nfiles) die_usage("verify: no .scn files given (see --help)");
    printf("verify: %d file%s, %d failing\n", nfiles, nfiles == 1 ? "" : "s", bad);
    if (perr) return 2;
    return bad ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* seeds                                                                */
/* ------------------------------------------------------------------ */

static const char *const seeds_help = "usage: zofuzz seeds [-o DIR] [FILE.scn|SRCDIR...]\n"
                                      "\n"
                                      "Compiles the .scn corpus into seed corpora for the fuzz targets:\n"
                                      "  DIR/fuzz_hooks/<dir>-<name>.bin      zs_encode of each scenario\n"
                                      "  DIR/fuzz_scn_parse/<dir>-<name>.scn  the canonical text of each scenario\n"
                                      "Default inputs: corpus/models/*.scn and corpus/regressions/*.scn of the source\n"
                                      "tree; default DIR: corpus/seeds of the source tree.  Files named\n"
                                      "models-* / regressions-* in DIR that no input produces any more are removed.\n"
                                      "\n"
                                      "A scenario beyond the fuzzer-byte codec's bounds gets no seed: skipped\n"
                                      "with a note in a directory, an error when named as a FILE.\n"
                                      "\n"
                                      "Exit: 0 written, 2 bad usage, an unparsable file or a FILE without a seed.\n";

static int write_seed(const char *dir, const char *target, const char *name, const void *data, size_t n) {
    char p[PATH_MAX];
    xsnprintf(p, sizeof p, "%s/%s", dir, target);
    if (mkdirs(p)) {
        fprintf(stderr, "%s: cannot create %s: %s\n", g_prog, p, strerror(errno));
        return -1;
    }
    xsnprintf(p, sizeof p, "%s/%s/%s", dir, target, name);
    /* rewrite only if different (keeps mtimes stable for the build) */
    size_t on;
    FILE *f = fopen(p, "rb");
    if (f) {
        fclose(f);
        uint8_t *old = read_all(p, &on);
        int same = old && on == n && !memcmp(old, data, n);
        free(old);
        if (same) return 0;
    }
    return write_all(p, data, n);
}

/* seed name prefix of a source file: the name of its directory */
static void seed_name(const char *path, const char *ext, char *out, size_t cap) {
    char dir[PATH_MAX];
    xsnprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    const char *dn = "scn";
    if (sl) {
        *sl = 0;
        dn = base_name(dir);
    }
    char b[256];
    xsnprintf(b, sizeof b, "%s", base_name(path));
    if (ends_with(b, ".scn")) b[strlen(b) - 4] = 0;
    xsnprintf(out, cap, "%s-%s%s", dn, b, ext);
}

static int cmd_seeds(int argc, char **argv) {
    const char *outdir = NULL;
    char defdir[PATH_MAX];
    const char *inputs[64];
    int nin = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(seeds_help, stdout);
            return 0;
        } else if (!strcmp(a, "-o"))
            outdir = optval(argc, argv, &i);
        else if (a[0] == '-' && a[1])
            die_usage("seeds: unknown option %s", a);
        else if (nin < 64)
            inputs[nin++] = a;
        else
            die_usage("seeds: too many inputs");
    }
    char dm[PATH_MAX], dr[PATH_MAX];
    if (!nin) {
        xsnprintf(dm, sizeof dm, "%s/corpus/models", src_dir());
        xsnprintf(dr, sizeof dr, "%s/corpus/regressions", src_dir());
        inputs[nin++] = dm;
        inputs[nin++] = dr;
    }
    if (!outdir) {
        xsnprintf(defdir, sizeof defdir, "%s/corpus/seeds", src_dir());
        outdir = defdir;
    }
    if (mkdirs(outdir) || access(outdir, W_OK | X_OK))
        die_usage("seeds: -o %s: cannot create or write it (%s)", outdir, strerror(errno));
    /* every input must provide scenarios before anything is written: an
     * empty or mistyped directory would otherwise compile nothing and the
     * stale-seed sweep below would delete every generated seed in DIR */
    for (int k = 0; k < nin; k++) {
        if (!is_dir(inputs[k])) continue;
        char **v = NULL;
        size_t n = list_dir(inputs[k], ".scn", &v);
        free_list(v, n);
        if (n == 0) die_usage("seeds: %s: a directory without .scn files", inputs[k]);
    }
    /* names produced, for the stale-file sweep */
    char **made = NULL;
    size_t nmade = 0, capm = 0;
    int err = 0, count = 0;
    static zs_scenario s;
    static uint8_t enc[ZS_ENCODE_MAX];
    for (int k = 0; k < nin; k++) {
        char **v = NULL;
        size_t n;
        if (is_dir(inputs[k])) {
            n = list_dir(inputs[k], ".scn", &v);
        } else {
            v = malloc(sizeof *v);
            if (!v) return 2;
            v[0] = strdup(inputs[k]);
            n = v[0] ? 1 : 0;
        }
        for (size_t q = 0; q < n; q++) {
            if (load_scenario(v[q], FORM_TEXT, &s, NULL, NULL)) {
                err = 1;
                continue;
            }
            /* a captured model's .scn-only constructs (keyword / mixed
             * inputs, aliased outputs...) have no bytes: its byte seed is the
             * scenario without them; the .scn seed keeps them */
            static zs_scenario core;
            if (zs_scenario_copy(&core, &s)) {
                fprintf(stderr, "zofuzz seeds: %s: out of memory\n", v[q]);
                err = 1;
                continue;
            }
            if (!zs_scenario_fits_codec(&core)) {
                /* a model larger than the byte codec's bounds: no fuzzer seed
                 * (it is replayed from its .scn by the corpus tests); a file
                 * named on the command line was asked for, so that is an error */
                fprintf(stderr, "zofuzz seeds: %s: beyond the fuzzer-byte codec's bounds, no seed\n", v[q]);
                if (!is_dir(inputs[k])) err = 1;
                continue;
            }
            if (zs_scenario_has_ext(&core) && zs_scenario_strip_ext(&core) != 0) {
                fprintf(stderr, "zofuzz seeds: %s: no byte encoding without its .scn-only constructs\n", v[q]);
                err = 1;
                continue;
            }
            size_t len = zs_encode(&core, enc, sizeof enc);
            char name[300];
            seed_name(v[q], ".bin", name, sizeof name);
            if (len == 0 || len > sizeof enc || write_seed(outdir, "fuzz_hooks", name, enc, len)) {
                err = 1;
                continue;
            }
            char *txt = zs_scn_print(&s, NULL);
            char name2[300];
            seed_name(v[q], ".scn", name2, sizeof name2);
            if (!txt || write_seed(outdir, "fuzz_scn_parse", name2, txt, strlen(txt))) err = 1;
            free(txt);
            if (nmade + 2 > capm) {
                capm = capm ? capm * 2 : 64;
                char **nm = realloc(made, capm * sizeof *made);
                if (!nm) return 2;
                made = nm;
            }
            made[nmade++] = strdup(name);
            made[nmade++] = strdup(name2);
            count++;
        }
        free_list(v, n);
    }
    /* sweep stale generated seeds (not after a failed input: its seeds
     * are not stale, only unreadable this time) */
    const char *targets[2] = {"fuzz_hooks", "fuzz_scn_parse"};
    for (int t = 0; t < 2 && !err; t++) {
        char d[PATH_MAX];
        xsnprintf(d, sizeof d, "%s/%s", outdir, targets[t]);
        char **v;
        size_t n = list_dir(d, "", &v);
        for (size_t q = 0; q < n; q++) {
            const char *b = base_name(v[q]);
            if (strncmp(b, "models-", 7) && strncmp(b, "regressions-", 12)) continue;
            int keep = 0;
            for (size_t m = 0; m < nmade && !keep; m++) keep = made[m] && !strcmp(made[m], b);
            if (!keep) unlink(v[q]);
        }
        free_list(v, n);
    }
    free_list(made, nmade);
    printf("seeds: %d scenario%s compiled into %s/{fuzz_hooks,fuzz_scn_parse}\n", count, count == 1 ? "" : "s", outdir);
    return err ? 2 : 0;
}

/* ------------------------------------------------------------------ */
/* run: libFuzzer driver                                                */
/* ------------------------------------------------------------------ */

static const char *const run_help =
    "usage: zofuzz run [--target T] [--policy P] [--time S] [--jobs N] [--keep-going]\n"
    "                  [--no-seeds] [--work DIR] [--progress S] [--max-repro N]\n"
    "                  [--verbose] [--any-verdicts] [--engine-arg ARG]... [CORPUS...]\n"
    "\n"
    "The main job: fuzzes the runtime with libFuzzer.  By default on the shipped\n"
    "corpus - corpus/seeds/<target>/ plus every corpus/models/*.scn and\n"
    "corpus/regressions/*.scn compiled on the fly - copied into a writable work\n"
    "corpus (WORK/<target>-<policy>/corpus, kept between runs).  It execs the\n"
    "engine binary next to zofuzz (build-fuzz/fuzz/<target>) with -max_total_time,\n"
    "-dict, -artifact_prefix and the target's .options, ZOFUZZ_POLICY=<policy>, and\n"
    "prints a progress line every few seconds (elapsed, execs, execs/s, coverage\n"
    "cov, features ft, corpus size, violations found) and a closing summary.\n"
    "Each crash input is saved (WORK/<target>-<policy>/crashes-<time>/), replayed\n"
    "in-process, minimised (zofuzz minimize) and printed as a .scn scenario, saved\n"
    "next to it as <crash>.scn: copy it to corpus/regressions/ to keep it.  Under\n"
    "reset-on-forward the DeepSpeed reproducer goes beside it as <crash>.py\n"
    "(zofuzz export --to deepspeed; DS_ACCELERATOR=cpu python <crash>.py).\n"
    "\n"
    "  --target T     fuzz_hooks (default), fuzz_api, fuzz_scn_parse\n"
    "  --policy P     counter policy under test (default per-call)\n"
    "  --time S       seconds of fuzzing (default 60)\n"
    "  --jobs N       N parallel libFuzzer jobs (-fork=N, crashes do not stop the\n"
    "                 run; corpora merged with -merge=1 at the end); default 1\n"
    "  --keep-going   with 1 job: fork mode too, so the run continues after a crash\n"
    "                 (default: stop at the first violation, like libFuzzer).  Under\n"
    "                 a legacy policy the shipped corpus violates at once (the\n"
    "                 regressions are there): use --keep-going or --no-seeds\n"
    "  --no-seeds     start from an empty corpus (measures time to first violation)\n"
    "  --work DIR     work directory (default: $ZOFUZZ_WORK, else zofuzz-work/ next\n"
    "                 to the binary, else $TMPDIR/zofuzz-work)\n"
    "  --progress S   seconds between progress lines (default 5)\n"
    "  --max-repro N  crashes to minimise and print (default 5)\n"
    "  --any-verdicts minimise crashes keeping only the invariant (default: also the\n"
    "                 verdict under every other policy, so bug classes stay apart)\n"
    "  --verbose      pass libFuzzer's own output through (it is always in WORK/.../fuzz.log)\n"
    "                 (fuzz_hooks runs with -len_control=0: the decoder makes richer\n"
    "                 scenarios from longer inputs; override with --engine-arg)\n"
    "  --engine-arg A extra libFuzzer flag (repeatable), e.g. --engine-arg -seed=1\n"
    "  CORPUS...      fuzz these corpus directories instead of the shipped corpus\n"
    "\n"
    "Exit: 0 no violation found, 1 violations (crashes) found, 2 bad usage, missing\n"
    "engine binary or the engine failed to start.\n";

static char g_selfdir[PATH_MAX];

static void find_selfdir(const char *argv0) {
    char p[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
    if (n > 0) {
        p[n] = 0;
    } else {
        xsnprintf(p, sizeof p, "%s", argv0);
    }
    char *sl = strrchr(p, '/');
    if (sl)
        *sl = 0;
    else
        snprintf(p, sizeof p, ".");
    xsnprintf(g_selfdir, sizeof g_selfdir, "%s", p);
}

static int copy_file(const char *from, const char *to) {
    size_t n;
    uint8_t *b = read_all(from, &n);
    if (!b) return -1;
    int rc = write_all(to, b, n);
    free(b);
    return rc;
}

/* Fills the work corpus with the shipped seeds (corpus/seeds/<target>/),
 * then with every corpus .scn compiled now (same file names as `zofuzz
 * seeds` gives them, so a fresh compile replaces a stale shipped seed);
 * returns the number of distinct seeds. */
/* files named seed-* in dir */
static int count_seeds(const char *dir) {
    char **v;
    size_t n = list_dir(dir, "", &v);
    int c = 0;
    for (size_t k = 0; k < n; k++) c += !strncmp(base_name(v[k]), "seed-", 5);
    free_list(v, n);
    return c;
}

static int seed_corpus(const char *target, const char *corpus) {
    int count = 0;
    char d[PATH_MAX];
    xsnprintf(d, sizeof d, "%s/corpus/seeds/%s", src_dir(), target);
    char **v;
    size_t n = list_dir(d, "", &v);
    for (size_t k = 0; k < n; k++) {
        char to[PATH_MAX];
        xsnprintf(to, sizeof to, "%s/seed-%s", corpus, base_name(v[k]));
        if (copy_file(v[k], to) == 0) count++;
    }
    free_list(v, n);
    if (strcmp(target, "fuzz_hooks") && strcmp(target, "fuzz_scn_parse")) return count_seeds(corpus);
    static zs_scenario s;
    static uint8_t enc[ZS_ENCODE_MAX];
    const char *sub[2] = {"models", "regressions"};
    for (int q = 0; q < 2; q++) {
        xsnprintf(d, sizeof d, "%s/corpus/%s", src_dir(), sub[q]);
        n = list_dir(d, ".scn", &v);
        for (size_t k = 0; k < n; k++) {
            char name[300], to[PATH_MAX];
            if (!strcmp(target, "fuzz_scn_parse")) {
                seed_name(v[k], ".scn", name, sizeof name);
                xsnprintf(to, sizeof to, "%s/seed-%s", corpus, name);
                if (copy_file(v[k], to) == 0) count++;
                continue;
            }
            if (load_scenario(v[k], FORM_TEXT, &s, NULL, NULL)) continue;
            if (zs_scenario_has_ext(&s) && zs_scenario_strip_ext(&s) != 0) continue;
            size_t len = zs_encode(&s, enc, sizeof enc);
            if (len == 0 || len > sizeof enc) continue;
            seed_name(v[k], ".bin", name, sizeof name);
            xsnprintf(to, sizeof to, "%s/seed-%s", corpus, name);
            if (write_all(to, enc, len) == 0) count++;
        }
        free_list(v, n);
    }
    (void)count;
    return count_seeds(corpus);
}

typedef struct fstat_ {
    unsigned long long execs, cov, ft, corp, execs_per_s;
    unsigned long crashes_reported; /* "Test unit written" / fork crash count */
    double first_violation;         /* seconds, <0 none */
    unsigned long fork_crash;
    char last_violation[256];
    char bad_flag[200]; /* libFuzzer's "WARNING: unrecognized flag ..." line, if any */
} fstat_;

/* value after "key" in line, or -1 */
static long long field(const char *line, const char *key) {
    const char *p = strstr(line, key);
    if (!p) return -1;
    p += strlen(key);
    while (*p == ' ') p++;
    if (*p < '0' || *p > '9') return -1;
    return strtoll(p, NULL, 10);
}

static void parse_line(fstat_ *fs, const char *line, double elapsed) {
    long long v;
    if (!fs->bad_flag[0] && !strncmp(line, "WARNING: unrecognized flag", 26))
        snprintf(fs->bad_flag, sizeof fs->bad_flag, "%s", line);
    if (line[0] == '#') {
        v = strtoll(line + 1, NULL, 10);
        if (v > 0) fs->execs = (unsigned long long)v;
    }
    if ((v = field(line, "cov:")) >= 0) fs->cov = (unsigned long long)v;
    if ((v = field(line, "ft:")) >= 0) fs->ft = (unsigned long long)v;
    if ((v = field(line, "corp:")) >= 0) fs->corp = (unsigned long long)v;
    if ((v = field(line, "exec/s:")) >= 0) fs->execs_per_s = (unsigned long long)v;
    const char *c = strstr(line, "oom/timeout/crash:");
    if (c) {
        unsigned long a, b, d;
        if (sscanf(c, "oom/timeout/crash: %lu/%lu/%lu", &a, &b, &d) == 3) {
            unsigned long tot = a + b + d;
            if (tot > fs->fork_crash) {
                fs->fork_crash = tot;
                if (fs->first_violation < 0) fs->first_violation = elapsed;
            }
        }
    }
    if (strstr(line, "Test unit written to") &&
        (strstr(line, "crash-") || strstr(line, "timeout-") || strstr(line, "oom-") || strstr(line, "leak-"))) {
        fs->crashes_reported++;
        if (fs->first_violation < 0) fs->first_violation = elapsed;
    }
    if (!strncmp(line, "zofuzz: ", 8)) {
        snprintf(fs->last_violation, sizeof fs->last_violation, "%s", line + 8);
        if (fs->first_violation < 0) fs->first_violation = elapsed;
    }
}

static unsigned long violations_of(const fstat_ *fs) {
    return fs->crashes_reported > fs->fork_crash ? fs->crashes_reported : fs->fork_crash;
}

static volatile sig_atomic_t g_stop;
static void on_sigint(int sig) {
    (void)sig;
    g_stop = 1;
}

/* [libfuzzer] section of an OSS-Fuzz .options file -> "-k=v" flags */
static int read_options(const char *path, char flags[][128], int max) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    int in = 0, n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        p[strcspn(p, "\r\n")] = 0;
        if (*p == '[') {
            in = !strncmp(p, "[libfuzzer]", 11);
            continue;
        }
        if (!in || !*p || *p == '#' || *p == ';') continue;
        char *eq = strchr(p, '=');
        if (!eq) continue;
        *eq = 0;
        char *k = p, *val = eq + 1;
        size_t kl = strlen(k);
        while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t')) k[--kl] = 0;
        while (*val == ' ' || *val == '\t') val++;
        if (!strcmp(k, "dict")) continue; /* handled (path next to the binary) */
        xsnprintf(flags[n++], 128, "-%s=%s", k, val);
    }
    fclose(f);
    return n;
}

/* Runs argv with stderr+stdout on a pipe; calls back per line. */
typedef struct runner {
    FILE *log;
    int verbose;
    double t0, last_progress, progress_every, time_limit;
    fstat_ *fs;
    const char *label;
} runner;

static void progress_line(runner *R, int final) {
    double el = now_s() - R->t0;
    fstat_ *fs = R->fs;
    double eps = el > 0 ? fs->execs / el : 0;
    printf("[zofuzz] %s%3.0fs  execs %llu (%.0f/s)  cov %llu  ft %llu  corpus %llu  violations %lu\n",
           final ? "done " : "", el, fs->execs, fs->execs_per_s ? (double)fs->execs_per_s : eps, fs->cov, fs->ft,
           fs->corp, violations_of(fs));
    fflush(stdout);
}

static int spawn_and_watch(runner *R, char **args, char **envp_add, int watch) {
    int pfd[2];
    if (pipe(pfd)) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(pfd[0]);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[1]);
        for (char **e = envp_add; e && *e; e++) putenv(*e);
        execv(args[0], args);
        fprintf(stderr, "zofuzz: cannot exec %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    char buf[8192];
    size_t have = 0;
    int killed = 0;
    for (;;) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        int pr = poll(&p, 1, 500);
        double el = now_s() - R->t0;
        if (g_stop && !killed) {
            kill(pid, SIGINT);
            killed = 1;
        }
        if (R->time_limit > 0 && el > R->time_limit + 60 && killed < 2) {
            kill(pid, SIGKILL); /* libFuzzer ignored -max_total_time */
            killed = 2;
        }
        if (pr > 0) {
            ssize_t k = read(pfd[0], buf + have, sizeof buf - 1 - have);
            if (k <= 0) break;
            have += (size_t)k;
            buf[have] = 0;
            char *start = buf, *nl;
            while ((nl = strchr(start, '\n'))) {
                *nl = 0;
                if (R->log) fprintf(R->log, "%s\n", start);
                if (R->verbose) fprintf(stderr, "%s\n", start);
                if (watch) parse_line(R->fs, start, el);
                /* a flag libFuzzer does not know (a mistyped --engine-arg)
                 * ends the run: it would otherwise fuzz without it */
                if (watch && R->fs->bad_flag[0] && !killed) {
                    kill(pid, SIGINT);
                    killed = 1;
                }
                start = nl + 1;
            }
            have = strlen(start);
            memmove(buf, start, have);
            if (have == sizeof buf - 1) have = 0; /* overlong line: drop */
        }
        if (watch && now_s() - R->last_progress >= R->progress_every) {
            R->last_progress = now_s();
            progress_line(R, 0);
        }
    }
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (R->log) fflush(R->log);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* replay + minimise + print one crash; returns its invariant (0 none) */
static int g_run_same_verdicts = 1;

static int report_crash(const char *path, int policy, seen_set *seen, int target_is_hooks) {
    if (!target_is_hooks) {
        printf("  %s (replay it with the target binary; not a scenario input)\n", path);
        return 0;
    }
    static zs_scenario s;
    if (load_scenario(path, FORM_BYTES, &s, NULL, NULL)) return 0;
    /* the target's all-ranks knobs changed the scenario before running it */
    zs_world_env env = g_env.world;
    zs_run_opts ro;
    run_opts_init(&ro);
    ro.policy = policy;
    ro.env = env;
    zs_outcome res;
    int v = zs_run(&s, &ro, &res);
    const zs_sim_result r = res.r;
    if (v == ZS_INV_NONE || v == ZS_SCN_SETUP) {
        printf("  %s: does not reproduce in-process as an invariant violation (%s): a sanitizer\n"
               "  finding, timeout or OOM - see fuzz.log; replay: build-fuzz/fuzz/fuzz_hooks %s\n",
               path, v == ZS_SCN_SETUP ? "setup error" : "all invariants hold", path);
        return 0;
    }
    char line[512];
    zs_violation_format(&r.v, line, sizeof line);
    zs_min_opts mo;
    zs_min_opts_init(&mo);
    mo.policy = policy;
    mo.inv = v;
    mo.max_runs = 100000;
    mo.same_verdicts = g_run_same_verdicts;
    mo.run.env = env;
    zs_min_stats st;
    int mrc = zs_minimize(&s, &mo, &st);
    if (mrc == 0) zs_world_env_apply(&env, &s);
    if (mrc != 0) {
        printf("  %s: %s (minimisation failed)\n", path, line);
        return v;
    }
    char *txt = min_text(&s, path, &st);
    if (!txt) return v;
    char out[PATH_MAX];
    xsnprintf(out, sizeof out, "%s.scn", path);
    int wrote = write_all(out, txt, strlen(txt)) == 0;
    const char *body = strchr(txt, '\n');
    body = body ? strchr(body + 1, '\n') : NULL;
    body = body ? body + 1 : txt;
    int fresh = seen_add(seen, body);
    printf("  %s: %s\n", base_name(path), line);
    printf("  minimised in %.2f s: %u calls/%u modules/%d lines -> %u calls/%u modules/%d lines, "
           "saved %s\n",
           st.seconds, st.before.calls, st.before.modules, st.before.lines, st.after.calls, st.after.modules,
           st.after.lines, out);
    if (wrote && policy == zs_policy_from_name("reset-on-forward"))
        export_beside(stdout, &s, out, "zofuzz run (crash minimised by zofuzz minimize)");
    if (fresh) {
        for (const char *q = body; *q;) {
            const char *e = strchr(q, '\n');
            int len = e ? (int)(e - q) : (int)strlen(q);
            printf("    | %.*s\n", len, q);
            q += len + (e ? 1 : 0);
        }
    } else {
        printf("    (same minimised scenario as above)\n");
    }
    free(txt);
    return v;
}

static int cmd_run(int argc, char **argv) {
    const char *target = "fuzz_hooks", *work = NULL;
    int policy = ZO_GRADS_PER_CALL, keep_going = 0, no_seeds = 0, verbose = 0;
    unsigned long tsec = 60, jobs = 1, max_repro = 5, prog = 5;
    const char *corpora[32];
    int ncorp = 0;
    const char *extra[32];
    int nextra = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(run_help, stdout);
            return 0;
        } else if (!strcmp(a, "--target"))
            target = optval(argc, argv, &i);
        else if (!strcmp(a, "--policy"))
            policy = opt_policy(optval(argc, argv, &i));
        else if (!strcmp(a, "--time"))
            tsec = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--jobs"))
            jobs = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--keep-going"))
            keep_going = 1;
        else if (!strcmp(a, "--no-seeds"))
            no_seeds = 1;
        else if (!strcmp(a, "--work"))
            work = optval(argc, argv, &i);
        else if (!strcmp(a, "--progress"))
            prog = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--max-repro"))
            max_repro = opt_ulong(a, optval(argc, argv, &i));
        else if (!strcmp(a, "--verbose"))
            verbose = 1;
        else if (!strcmp(a, "--any-verdicts"))
            g_run_same_verdicts = 0;
        else if (!strcmp(a, "--engine-arg")) {
            if (nextra >= 32) die_usage("run: too many --engine-arg");
            extra[nextra++] = optval(argc, argv, &i);
        } else if (a[0] == '-' && a[1])
            die_usage("run: unknown option %s (see --help)", a);
        else if (ncorp < 32)
            corpora[ncorp++] = a;
        else
            die_usage("run: too many corpus directories");
    }
    if (jobs < 1 || jobs > 64) die_usage("run: --jobs must be 1..64");
    if (tsec < 1) die_usage("run: --time must be at least 1");
    if (!prog) die_usage("run: --progress must be at least 1 (seconds between progress lines)");
    if (strcmp(target, "fuzz_hooks") && strcmp(target, "fuzz_api") && strcmp(target, "fuzz_scn_parse"))
        die_usage("run: unknown target '%s' (fuzz_hooks, fuzz_api, fuzz_scn_parse)", target);
    for (int k = 0; k < ncorp; k++)
        if (!is_dir(corpora[k])) die_usage("run: %s is not a directory", corpora[k]);
    /* an unusable --work is an argument error, said before anything else */
    if (work && (mkdirs(work) || access(work, W_OK)))
        die_usage("run: --work %s: cannot create or write it (%s)", work, strerror(errno));

    char engine[PATH_MAX];
    xsnprintf(engine, sizeof engine, "%s/%s", g_selfdir, target);
    if (access(engine, X_OK) != 0) {
        fprintf(stderr,
                "%s: the engine binary %s is missing: build the libFuzzer targets first\n"
                "  (./build.sh run does it; or ./build.sh fuzz, or configure with "
                "-DZO_FUZZ_ENGINE=-fsanitize=fuzzer)\n",
                g_prog, engine);
        return 2;
    }

    /* work directory: --work, else ZOFUZZ_WORK (fuzz/settings.h) */
    char wbase[PATH_MAX], wdir[PATH_MAX], corpus[PATH_MAX], crashes[PATH_MAX], logp[PATH_MAX];
    if (work)
        snprintf(wbase, sizeof wbase, "%s", work);
    else if (g_env.work)
        xsnprintf(wbase, sizeof wbase, "%s", g_env.work);
    else {
        xsnprintf(wbase, sizeof wbase, "%s/zofuzz-work", g_selfdir);
        if (mkdirs(wbase) || access(wbase, W_OK)) {
            const char *tmp = getenv("TMPDIR");
            xsnprintf(wbase, sizeof wbase, "%s/zofuzz-work", tmp && *tmp ? tmp : "/tmp");
        }
    }
    xsnprintf(wdir, sizeof wdir, "%s/%s-%s%s", wbase, target, zs_policy_name((unsigned)policy),
              no_seeds ? "-noseeds" : "");
    xsnprintf(corpus, sizeof corpus, "%s/corpus", wdir);
    {
        time_t tt = time(NULL);
        struct tm tmv;
        gmtime_r(&tt, &tmv);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
        xsnprintf(crashes, sizeof crashes, "%s/crashes-%s-%ld", wdir, stamp, (long)getpid());
    }
    xsnprintf(logp, sizeof logp, "%s/fuzz.log", wdir);
    if (no_seeds) {
        /* a fresh empty corpus every time */
        char **v;
        size_t n = list_dir(corpus, "", &v);
        for (size_t k = 0; k < n; k++) unlink(v[k]);
        free_list(v, n);
    }
    if (mkdirs(corpus) || mkdirs(crashes)) {
        fprintf(stderr, "%s: cannot create the work directory %s\n", g_prog, wdir);
        return 2;
    }
    int nseeds = 0;
    if (!no_seeds && !ncorp) nseeds = seed_corpus(target, corpus);
    FILE *log = fopen(logp, "w");

    /* engine command line */
    static char flagbuf[48][128];
    char *args[128];
    int na = 0, nf = 0;
    args[na++] = engine;
    xsnprintf(flagbuf[nf], 128, "-max_total_time=%lu", tsec);
    args[na++] = flagbuf[nf++];
    xsnprintf(flagbuf[nf], 128, "-artifact_prefix=%s/", crashes);
    args[na++] = flagbuf[nf++];
    xsnprintf(flagbuf[nf], 128, "-print_final_stats=1");
    args[na++] = flagbuf[nf++];
    char dictp[PATH_MAX];
    xsnprintf(dictp, sizeof dictp, "%s.dict", engine);
    if (is_file(dictp)) {
        xsnprintf(flagbuf[nf], 128, "-dict=%s", dictp);
        args[na++] = flagbuf[nf++];
    }
    char optp[PATH_MAX];
    xsnprintf(optp, sizeof optp, "%s.options", engine);
    int no = read_options(optp, flagbuf + nf, 16);
    /* -max_len: at least the largest corpus input, so that no shipped seed
     * (a whole model scenario can take 15 KB) is truncated */
    unsigned long maxlen = 0, biggest = 0;
    for (int k = 0; k < no; k++)
        if (!strncmp(flagbuf[nf + k], "-max_len=", 9)) maxlen = strtoul(flagbuf[nf + k] + 9, NULL, 10);
    for (int d = -1; d < ncorp; d++) {
        char **v;
        size_t n = list_dir(d < 0 ? corpus : corpora[d], "", &v);
        for (size_t k = 0; k < n; k++) {
            struct stat sb;
            if (stat(v[k], &sb) == 0 && (unsigned long)sb.st_size > biggest) biggest = (unsigned long)sb.st_size;
        }
        free_list(v, n);
    }
    if (biggest > 65536) biggest = 65536;
    for (int k = 0; k < no; k++) {
        if (maxlen && biggest > maxlen && !strncmp(flagbuf[nf], "-max_len=", 9)) {
            xsnprintf(flagbuf[nf], 128, "-max_len=%lu", biggest);
            printf("[zofuzz] -max_len raised from %lu to %lu (largest corpus input)\n", maxlen, biggest);
        }
        args[na++] = flagbuf[nf++];
    }
    int fork_mode = jobs > 1 || keep_going;
    if (fork_mode) {
        xsnprintf(flagbuf[nf], 128, "-fork=%lu", jobs);
        args[na++] = flagbuf[nf++];
        xsnprintf(flagbuf[nf], 128, "-ignore_crashes=1");
        args[na++] = flagbuf[nf++];
        xsnprintf(flagbuf[nf], 128, "-ignore_timeouts=1");
        args[na++] = flagbuf[nf++];
        xsnprintf(flagbuf[nf], 128, "-ignore_ooms=1");
        args[na++] = flagbuf[nf++];
    }
    /* the scenario decoder turns longer inputs into richer scenarios: let
     * libFuzzer use the whole max_len at once (unless told otherwise) */
    int user_len_control = 0;
    for (int k = 0; k < nextra; k++) user_len_control |= !strncmp(extra[k], "-len_control=", 13);
    if (!strcmp(target, "fuzz_hooks") && !user_len_control) {
        xsnprintf(flagbuf[nf], 128, "-len_control=0");
        args[na++] = flagbuf[nf++];
    }
    for (int k = 0; k < nextra; k++) args[na++] = (char *)extra[k];
    args[na++] = corpus;
    for (int k = 0; k < ncorp; k++) args[na++] = (char *)corpora[k];
    args[na] = NULL;

    static char envpol[64];
    xsnprintf(envpol, sizeof envpol, "ZOFUZZ_POLICY=%s", zs_policy_name((unsigned)policy));
    char *envadd[] = {envpol, NULL};

    printf("[zofuzz] target %s, policy %s, %lus, %lu job%s%s\n", target, zs_policy_name((unsigned)policy), tsec, jobs,
           jobs == 1 ? "" : "s", fork_mode ? " (fork mode, crashes do not stop the run)" : "");
    printf("[zofuzz] corpus %s (%d shipped seed%s%s), crashes -> %s\n", corpus, nseeds, nseeds == 1 ? "" : "s",
           ncorp ? " + given corpora" : "", crashes);
    printf("[zofuzz] engine log %s\n", logp);
    fflush(stdout);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    fstat_ fs;
    memset(&fs, 0, sizeof fs);
    fs.first_violation = -1;
    runner R = {log, verbose, now_s(), now_s(), (double)prog, (double)tsec, &fs, target};
    int ec = spawn_and_watch(&R, args, envadd, 1);
    double elapsed = now_s() - R.t0;
    if (fs.bad_flag[0]) {
        if (log) fclose(log);
        fprintf(stderr, "%s: run: --engine-arg: libFuzzer says \"%s\"; the run was stopped\n", g_prog, fs.bad_flag);
        return 2;
    }
    progress_line(&R, 1);

    /* merge the fork-mode corpus */
    if (jobs > 1 && !g_stop) {
        char merged[PATH_MAX];
        xsnprintf(merged, sizeof merged, "%s/corpus.merged", wdir);
        char **v;
        size_t n = list_dir(merged, "", &v);
        for (size_t k = 0; k < n; k++) unlink(v[k]);
        free_list(v, n);
        mkdirs(merged);
        char *margs[8];
        static char m1[32];
        xsnprintf(m1, sizeof m1, "-merge=1");
        int q = 0;
        margs[q++] = engine;
        margs[q++] = m1;
        margs[q++] = merged;
        margs[q++] = corpus;
        margs[q] = NULL;
        fstat_ mfs;
        memset(&mfs, 0, sizeof mfs);
        runner M = {log, 0, now_s(), now_s(), 1e9, 0, &mfs, target};
        int mec = spawn_and_watch(&M, margs, envadd, 0);
        size_t before = 0, after = 0;
        n = list_dir(corpus, "", &v);
        before = n;
        free_list(v, n);
        n = list_dir(merged, "", &v);
        after = n;
        if (mec == 0 && after > 0) {
            char **old;
            size_t no2 = list_dir(corpus, "", &old);
            for (size_t k = 0; k < no2; k++) unlink(old[k]);
            free_list(old, no2);
            for (size_t k = 0; k < n; k++) {
                char to[PATH_MAX];
                xsnprintf(to, sizeof to, "%s/%s", corpus, base_name(v[k]));
                rename(v[k], to);
            }
            printf("[zofuzz] merged corpus: %zu -> %zu inputs (-merge=1)\n", before, after);
        } else {
            printf("[zofuzz] corpus merge skipped (merge exit %d)\n", mec);
        }
        free_list(v, n);
    }
    if (log) fclose(log);

    /* crashes */
    char **cv;
    size_t nc = list_dir(crashes, "", &cv);
    size_t ncrash = 0;
    for (size_t k = 0; k < nc; k++) {
        const char *b = base_name(cv[k]);
        if (ends_with(b, ".scn") || ends_with(b, ".py")) continue; /* our outputs */
        if (!strncmp(b, "crash-", 6) || !strncmp(b, "timeout-", 8) || !strncmp(b, "oom-", 4) || !strncmp(b, "leak-", 5))
            ncrash++;
    }
    unsigned long viol = violations_of(&fs);
    if (ncrash > viol) viol = ncrash;
    printf("\n[zofuzz] summary: target %s, policy %s\n", target, zs_policy_name((unsigned)policy));
    printf("  time         %.1f s%s\n", elapsed, g_stop ? " (interrupted)" : "");
    printf("  execs        %llu (%.0f/s)\n", fs.execs, elapsed > 0 ? fs.execs / elapsed : 0.0);
    printf("  coverage     cov %llu, ft %llu\n", fs.cov, fs.ft);
    printf("  corpus       %llu inputs (%s)\n", fs.corp, corpus);
    printf("  violations   %lu", viol);
    if (fs.first_violation >= 0) printf(" (first after %.1f s)", fs.first_violation);
    printf("; %zu crash file%s in %s\n", ncrash, ncrash == 1 ? "" : "s", crashes);
    if (!viol && ec != 0 && !g_stop) {
        printf("  the engine exited with status %d without a crash file: see %s\n", ec, logp);
        free_list(cv, nc);
        rmdir(crashes);
        return 2;
    }
    if (ncrash) {
        printf("\n[zofuzz] crashes (replayed in-process, minimised, saved as .scn):\n");
        seen_set seen = {0};
        int invs[ZS_INV_COUNT] = {0};
        size_t done = 0;
        for (size_t k = 0; k < nc && done < max_repro; k++) {
            const char *b = base_name(cv[k]);
            if (ends_with(b, ".scn") || ends_with(b, ".py")) continue; /* our outputs */
            if (strncmp(b, "crash-", 6) && strncmp(b, "timeout-", 8) && strncmp(b, "oom-", 4) && strncmp(b, "leak-", 5))
                continue;
            int v = report_crash(cv[k], policy, &seen, !strcmp(target, "fuzz_hooks"));
            if (v > 0 && v < ZS_INV_COUNT) invs[v]++;
            done++;
        }
        if (ncrash > done) printf("  ... %zu more (raise --max-repro)\n", ncrash - done);
        printf("  by invariant (of the %zu replayed):", done);
        int anyinv = 0;
        for (int k = 1; k < ZS_INV_COUNT; k++)
            if (invs[k]) {
                printf(" %s x%d", zs_inv_name(k), invs[k]);
                anyinv = 1;
            }
        printf("%s\n", anyinv ? "" : done ? " none reproduced in-process" : " none (--max-repro 0)");
        printf("  distinct minimised scenarios: %d; to keep one: cp <crash>.scn "
               "corpus/regressions/<name>.scn\n",
               seen.n);
        seen_free(&seen);
    }
    free_list(cv, nc);
    rmdir(crashes); /* only if empty */
    return viol ? 1 : 0;
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* settings                                                             */
/* ------------------------------------------------------------------ */

static const char *const settings_help = "usage: zofuzz settings [--markdown]\n"
                                         "\n"
                                         "Every setting of the fuzz targets and of zofuzz (fuzz/settings.h): its\n"
                                         "environment variable (read by fuzz_hooks, fuzz_api and zofuzz), its zofuzz\n"
                                         "option where it has one, the values it takes and its default.  An unknown\n"
                                         "value is an error (exit 2) wherever it is given.\n"
                                         "  --markdown   the same as the Markdown table of docs/fuzzing.md\n";

static int cmd_settings(int argc, char **argv) {
    int md = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(settings_help, stdout);
            return 0;
        } else if (!strcmp(a, "--markdown"))
            md = 1;
        else if (a[0] == '-' && a[1])
            die_usage("settings: unknown option %s", a);
        else
            die_usage("settings: no operands (see --help)");
    }
    zs_settings_print(stdout, md);
    return 0;
}

static const char *const main_help =
    "usage: zofuzz COMMAND [ARGS...]   (zofuzz COMMAND --help for each)\n"
    "\n"
    "  run       the main job: libFuzzer on the shipped model corpus, progress,\n"
    "            summary, crashes minimised and printed as .scn\n"
    "  repro     run one scenario (.scn or fuzzer bytes): event trace + verdict\n"
    "  minimize  shrink a failing scenario to a smallest one with the same violation\n"
    "  check     property testing without an engine (seeded random scenarios)\n"
    "  print     fuzzer bytes -> canonical .scn text\n"
    "  compile   .scn text -> fuzzer bytes\n"
    "  trace     canonical hook trace of a scenario\n"
    "  traces    JSON and every policy's trace of many scenarios (the oracles' input)\n"
    "  gen       the fuzzer bytes of a seeded random scenario\n"
    "  verify    regression check of .scn files against their expect lines\n"
    "  seeds     compile corpus/models + corpus/regressions into corpus/seeds/<target>/\n"
    "  export    a scenario as a standalone Python script for real torch / DeepSpeed\n"
    "  settings  every setting: environment variable, option, values, default\n"
#ifdef ZOFUZZ_HAVE_ENUMERATE
    "  enumerate exhaustive small-scope check: every scenario and order up to a bound\n"
    "            (docs/bounded-proofs.md)\n"
#endif
    "\n"
    "Exit codes: 0 ok / every invariant holds; 1 an invariant was violated (or a\n"
    "verdict mismatch, or nothing to minimise); 2 bad usage or input.\n"
    "The .scn format: docs/scenario-format.md.  Policies: per-call (default),\n"
    "reset-on-forward, lazy-init, init-at-register.\n";

int main(int argc, char **argv) {
    find_selfdir(argv[0]);
    if (argc < 2 || is_help(argv[1]) || !strcmp(argv[1], "help")) {
        if (argc >= 3 && !strcmp(argv[1], "help")) {
            static char help_opt[] = "--help";
            char *v[3] = {argv[0], argv[2], help_opt};
            return main(3, v);
        }
        fputs(main_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    check_args(argc, argv);
    {
        /* the ZOFUZZ_* environment (fuzz/settings.h): a bad value is an
         * error here as in the fuzz targets */
        char err[300];
        zs_settings_init(&g_env);
        if (zs_settings_from_env(&g_env, err, sizeof err) != 0) die_usage("%s", err);
    }
    if (!strcmp(cmd, "run")) return cmd_run(argc, argv);
    if (!strcmp(cmd, "repro")) return cmd_repro(argc, argv, 0);
    if (!strcmp(cmd, "trace")) return cmd_repro(argc, argv, 1);
    if (!strcmp(cmd, "minimize") || !strcmp(cmd, "minimise")) return cmd_minimize(argc, argv);
    if (!strcmp(cmd, "check")) return cmd_check(argc, argv);
    if (!strcmp(cmd, "print")) return cmd_print(argc, argv);
    if (!strcmp(cmd, "compile")) return cmd_compile(argc, argv);
    if (!strcmp(cmd, "verify")) return cmd_verify(argc, argv);
    if (!strcmp(cmd, "seeds")) return cmd_seeds(argc, argv);
    if (!strcmp(cmd, "export")) return cmd_export(argc, argv);
    if (!strcmp(cmd, "settings")) return cmd_settings(argc, argv);
    if (!strcmp(cmd, "traces")) return cmd_traces(argc, argv);
    if (!strcmp(cmd, "gen")) return cmd_gen(argc, argv);
#ifdef ZOFUZZ_HAVE_ENUMERATE
    if (!strcmp(cmd, "enumerate")) return zo_enumerate_main(argc - 1, argv + 1);
#endif
    fprintf(stderr, "%s: unknown command '%s'\n\n%s", g_prog, cmd, main_help);
    return 2;
}
