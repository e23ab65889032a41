#!/usr/bin/python3
"""bench/report.py OUT - turns OUT/raw/*.tsv (written by bench/run.sh) into
OUT/latest.md and, with gnuplot, OUT/*.png (scripts bench/*.gp).

Statistics: median, min and max over the repetitions of one run; ratios
are taken between figures measured in the same run (paired per repetition
where both sides were measured in the same repetition).  Time-to-bug:
median, restricted mean (RMST: mean of min(T, cap), a trial that found
nothing counting as the cap) with a 95 % percentile-bootstrap interval
(5000 resamples, fixed seed).
"""
import collections
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(path, tag):
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f and f[0] == tag:
            out.append(f[1:])
    return out


def write_dat(raw, name, header, lines, has_data):
    """A gnuplot data file, or none: bench/plots.gp plots the files that
    exist, and gnuplot stops at a file without a valid point (a run with
    --only leaves most benchmarks out)."""
    path = os.path.join(raw, name)
    if has_data:
        with open(path, "w") as f:
            f.write(header + "\n" + "\n".join(lines) + "\n")
    elif os.path.exists(path):
        os.unlink(path)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x, nd=1):
    if x != x:  # nan
        return "-"
    if abs(x) >= 100:
        return "%.0f" % x
    return ("%." + str(nd) + "f") % x


def mmm(xs, nd=1):
    return "%s (%s-%s)" % (fmt(med(xs), nd), fmt(min(xs), nd), fmt(max(xs), nd)) if xs else "-"


def bootstrap_ci(xs, stat, n=5000, seed=7):
    if len(xs) < 2:
        return (float("nan"), float("nan"))
    r = random.Random(seed)
    vals = sorted(stat([r.choice(xs) for _ in xs]) for _ in range(n))
    return vals[int(0.025 * n)], vals[int(0.975 * n) - 1]


GOAL_HOOKS_DEFAULTS = 1.6   # cost per event, max modules / min modules, DeepSpeed's defaults
GOAL_HOOKS_UNIFORM = 1.3    # the same in the uniform regime
GOAL_BYTES_PER_EVENT = 100  # bytes touched per event at the largest N (callgrind LL misses x 64)
GOAL_GATHER = 0.9           # runtime-path gather / memcpy at every size >= 64 KiB
GOAL_SCALING = 1.5          # registration cost per item, 1e6 vs 1e4 modules
GOAL_EXEC = [               # (speed cell, engine, exec per CPU second)
    ("fuzz_hooks", "libfuzzer-asan", 500),
    ("fuzz_hooks:small", "libfuzzer-asan", 5000),
    ("fuzz_hooks:one-rank", "libfuzzer-O2", 20000),
    ("fuzz_hooks:one-rank", "aflpp-O2", 20000),
]
SCALING_HEADLINE = {"register": "named module registration (numbered names)",
                    "register-plain": "named module registration (names without a number)",
                    "abort": "nested passes aborted"}
GOAL_QUICK_RUNS_S = 120     # bench/run.sh --quick after the builds, without --baseline


def hooks_cg(raw, tag):
    """{N: (instructions per event, bytes touched per event)} from hooks_cg.tsv
    (callgrind: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw over the timed steps)."""
    out = {}
    for f in rows(os.path.join(raw, "hooks_cg.tsv"), tag):
        try:
            n, ev = int(f[0]), float(f[1])
            c = [float(x) for x in f[2:11]]
        except (ValueError, IndexError):
            continue
        if ev > 0 and len(c) == 9:
            out[n] = (c[0] / ev, 64.0 * (c[2] + c[5] + c[8]) / ev)
    return out


def per_gather(h):
    """{N: median CPU ns per gather} from bench_hooks rows (ns/event x events
    per step / gathers per step: its last column, or, from a bench_hooks
    that does not print it, the prefetches per step - every gather of a
    complete trace is a prefetch)."""
    out = collections.defaultdict(list)
    for f in h:
        try:
            ns, steps, events = float(f[2]), float(f[4]), float(f[5])
            gathers = float(f[8]) if len(f) > 8 else float(f[6])
        except (ValueError, IndexError):
            continue
        if steps > 0 and gathers > 0:
            out[int(f[0])].append(ns * events / steps / gathers)
    return {n: med(v) for n, v in out.items()}


def goal_figures(raw):
    """Every goal's figure measured in raw/ (a dict; a figure absent from
    the run is missing)."""
    g = {}
    for name, key in (("hooks.tsv", "hooks_defaults"), ("hooks_uniform.tsv", "hooks_uniform")):
        byn = collections.defaultdict(list)
        h = rows(os.path.join(raw, name), "hooks")
        for f in h:
            byn[int(f[0])].append(float(f[2]))
        if len(byn) >= 2:
            lo, hi = min(byn), max(byn)
            g[key] = (med(byn[hi]) / med(byn[lo]), "%d/%d" % (hi, lo))
            gpe = per_gather(h)
            if lo in gpe and hi in gpe:
                g["hooks_gather" if key == "hooks_defaults" else "hooks_gather_uniform"] = (
                    gpe[hi] / gpe[lo], "%d/%d" % (hi, lo))
    for tag in ("defaults", "uniform"):
        cg = hooks_cg(raw, tag)
        if cg:
            n = max(cg)
            g["bytes_" + tag] = (cg[n][1], "%d" % n)
    cells = collections.defaultdict(list)
    for f in rows(os.path.join(raw, "gather.tsv"), "gather"):
        if len(f) >= 8 and int(f[1]) >= 64 * 1024 and float(f[3]) > 0:
            cells[(int(f[0]), int(f[1]))].append(float(f[5]) / float(f[3]))
    if cells:
        worst = min((med(v), w, b) for (w, b), v in cells.items())
        g["gather"] = (worst[0], "W=%d, %s" % (worst[1], "%d KiB" % (worst[2] // 1024) if worst[2] < 1 << 20
                                               else "%d MiB" % (worst[2] >> 20)))
    for f in rows(os.path.join(raw, "fuzzspeed.tsv"), "speed"):
        if len(f) > 6 and float(f[2]) > 0:
            g[("exec", f[0], f[1])] = (float(f[6]), "%s exec/s per wall second" % fmt(float(f[4]), 0))
    for f in rows(os.path.join(raw, "scaling.tsv"), "ratio"):
        if f[0] in ("register", "register-plain"):
            g[f[0]] = (float(f[3]), "%s/%s" % (f[2], f[1]))
    tb = collections.defaultdict(list)
    for f in rows(os.path.join(raw, "ttb.tsv"), "ttb"):
        tb[(f[0], f[1])].append((int(f[3]), float(f[4])))
    for (pol, eng), v in tb.items():
        g[("ttb", pol, eng)] = (statistics.mean(x[1] for x in v), "%d/%d found" % (sum(x[0] for x in v), len(v)))
    return g


def goals_table(raw, m):
    """The ## Goals section: every performance goal, this tree's figure and,
    with --baseline, the baseline's from the same run."""
    now = goal_figures(raw)
    base_dir = os.path.join(raw, "base")
    base = goal_figures(base_dir) if os.path.isdir(base_dir) else None
    base_rev = open(os.path.join(base_dir, "commit")).read().strip() if base and os.path.exists(
        os.path.join(base_dir, "commit")) else None

    def cell(d, key, nd=2, suffix="x"):
        if d is None:
            return None
        if key not in d:
            return "-"
        v, where = d[key]
        return "%s%s (%s)" % (fmt(v, nd), suffix, where) if where else fmt(v, nd) + suffix

    lines = []
    def row(label, goal, key, ok, nd=2, suffix="x"):
        v = now.get(key)
        met = "-" if v is None or ok is None else ("met" if ok(v[0]) else "**not met**")
        r = [label, goal, cell(now, key, nd, suffix)]
        if base is not None:
            r.append(cell(base, key, nd, suffix))
        r.append(met)
        lines.append("| " + " | ".join(r) + " |")

    row("hook cost per event, max vs min modules, DeepSpeed's defaults", "<= %.1fx" % GOAL_HOOKS_DEFAULTS,
        "hooks_defaults", lambda x: x <= GOAL_HOOKS_DEFAULTS)
    row("hook cost per gather, max vs min modules, DeepSpeed's defaults", "(reported)", "hooks_gather", None)
    row("hook cost per event, max vs min modules, uniform regime", "<= %.1fx" % GOAL_HOOKS_UNIFORM, "hooks_uniform",
        lambda x: x <= GOAL_HOOKS_UNIFORM)
    row("hook cost per gather, max vs min modules, uniform regime", "(reported)", "hooks_gather_uniform", None)
    row("bytes touched per event at max modules, defaults (callgrind)", "<= %d" % GOAL_BYTES_PER_EVENT,
        "bytes_defaults", lambda x: x <= GOAL_BYTES_PER_EVENT, 0, "")
    row("bytes touched per event at max modules, uniform (callgrind)", "<= %d" % GOAL_BYTES_PER_EVENT,
        "bytes_uniform", lambda x: x <= GOAL_BYTES_PER_EVENT, 0, "")
    row("runtime-path gather / memcpy, worst size >= 64 KiB (default build)", ">= %.1fx" % GOAL_GATHER, "gather",
        lambda x: x >= GOAL_GATHER)
    for c, eng, want in GOAL_EXEC:
        row("%s, %s, exec per CPU second" % (c, eng), ">= %d" % want, ("exec", c, eng), lambda x, w=want: x >= w,
            0, "")
    for eng in dict.fromkeys(e for _, e, _ in GOAL_EXEC):
        # the engine's own ceiling (bench/fuzz_empty): no target reaches more under that engine
        row("engine alone (bench/fuzz_empty), %s, exec per CPU second" % eng, "(ceiling)",
            ("exec", "engine-only", eng), None, 0, "")
    for eng in dict.fromkeys(e for _, e, _ in GOAL_EXEC if e.startswith("libfuzzer")):
        # ... and at fuzz_hooks one-rank's features per execution (bench/fuzz_wide)
        row("engine at fuzz_hooks one-rank's features per execution (bench/fuzz_wide), %s, exec per CPU second"
            % eng, "(ceiling)", ("exec", "engine-wide", eng), None, 0, "")
    row("named module registration, cost per item 1e6 vs 1e4 (numbered names)", "<= %.1fx" % GOAL_SCALING,
        "register", lambda x: x <= GOAL_SCALING)
    row("named module registration, cost per item 1e6 vs 1e4 (names without a number)", "<= %.1fx" % GOAL_SCALING,
        "register-plain", lambda x: x <= GOAL_SCALING)
    for key in sorted(k for k in now if isinstance(k, tuple) and k[0] == "ttb" and k[2] != "unguided"):
        row("time to first violation, %s, %s (mean s, cap counted)" % (key[1], key[2]), "(reported)", key, None, 3,
            " s")
    runs = m.get("runs_s")
    if runs and m.get("quick") == "1":
        if base is None:
            ok = int(runs) <= GOAL_QUICK_RUNS_S
            lines.append("| bench/run.sh --quick after the builds | <= %d s | %s s | %s |" % (
                GOAL_QUICK_RUNS_S, runs, "met" if ok else "**not met**"))
        else:
            lines.append("| bench/run.sh --quick after the builds | <= %d s | %s s for both trees | - | - |" % (
                GOAL_QUICK_RUNS_S, runs))
    head = ["## Goals", "",
            "Each performance goal with this tree's figure%s. Exec per CPU second: executions / CPU time of the "
            "engine and target (a shared machine depresses exec per wall second, which is given beside it). "
            "Time to first violation: the restricted mean of section 4 (a trial that found nothing counts as the "
            "cap)." % (" and the baseline's, measured in the same run (`--baseline %s`: its tree built and run "
                       "right after this one's, benchmark by benchmark)" % base_rev if base is not None else ""), "",
            "| goal | target | this tree | %smet |" % ("baseline %s | " % base_rev if base is not None else ""),
            "| --- | --- | --- | %s--- |" % ("--- | " if base is not None else "")]
    return head + lines + [""]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
    raw = os.path.join(out, "raw")
    m = {}
    if os.path.exists(os.path.join(raw, "machine.txt")):
        for line in open(os.path.join(raw, "machine.txt")):
            if "=" in line:
                for part in line.strip().split(" ") if line.startswith("hook_mods") else [line.strip()]:
                    k, v = part.split("=", 1)
                    m[k] = v
    quick = m.get("quick") == "1"
    # a run of some benchmarks only (bench/run.sh --only) says so in every stamp
    only, subset = m.get("only", ""), m.get("subset") == "1"
    kind = ("QUICK run" if quick else "run" if subset else "full run") + (" of %s only" % only if subset else "")
    stamp = "%s, %s nproc, %s, %s GiB; load %s; commit %s; %s" % (
        m.get("date", "?"), m.get("nproc", "?"), m.get("cpu", "?"), m.get("mem_gib", "?"), m.get("load", "?"),
        m.get("commit", "?"), "%s (bench/run.sh%s%s)" % (kind, " --quick" if quick else "", " --only " + only if subset else ""))
    md = []
    md.append("# zoffload benchmark results")
    md.append("")
    md.append("Written by `bench/run.sh%s` (see docs/benchmarks.md for what each figure means and how it is measured)."
              % (" --quick" if quick else ""))
    md.append("")
    md.append("- machine: %s nproc, CPU `%s`, %s GiB RAM, load average at the end `%s` (the machine is shared: "
              "every figure is a ratio against a baseline measured in the same run)" %
              (m.get("nproc", "?"), m.get("cpu", "?"), m.get("mem_gib", "?"), m.get("load", "?")))
    md.append("- date %s, commit `%s`, %s; %s; torch %s; AFL++ %s; total %s s, of which the benchmarks after the "
              "builds %s s" % (
        m.get("date", "?"), m.get("commit", "?"), "**%s**" % kind if quick or subset else kind, m.get("clang", "?"),
        m.get("torch", "?"), m.get("afl", "?") or "absent", m.get("elapsed_s", "?"), m.get("runs_s", "?")))
    md.append("- every table below carries the same stamp: `%s`" % stamp)
    md.append("")
    headline = []

    # ---------------------------------------------------------------- hooks
    h = rows(os.path.join(raw, "hooks.tsv"), "hooks")
    t = rows(os.path.join(raw, "torch.tsv"), "torch")
    md.append("## 1. Control-plane cost per hook event")
    md.append("")
    md.append("Complete trace, prefetch on, per-call policy, host backend `no_copy` (W = 8, 1e6-element parameters, "
              "one per module). CPU ns per event (7 events per module per step: A, D, B, C, pre-backward, "
              "post-backward, grad-ready); median (min-max) over repetitions. PyTorch: the same hooks in Python "
              "(`bench/torch_hooks_baseline.py`), *total* = step with hooks / events, *hooks only* = (with - without "
              "hooks) / events. Stamp: %s." % stamp)
    md.append("")
    cgd = hooks_cg(raw, "defaults")
    irs = {n: v[0] for n, v in cgd.items()}
    md.append("| modules | zoffload ns/event | zoffload instructions/event | bytes touched/event | PyTorch total ns/event | PyTorch hooks-only ns/event | PyTorch total / zoffload | hooks-only / zoffload |")
    md.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    byn = collections.OrderedDict()
    for f in h:
        byn.setdefault(int(f[0]), []).append(float(f[2]))
    tb = collections.OrderedDict()
    for f in t:
        tb.setdefault(int(f[0]), ([], []))
        tb[int(f[0])][0].append(float(f[2]))
        tb[int(f[0])][1].append(float(f[3]))
    plot = []
    for n in sorted(set(byn) | set(tb)):
        c = byn.get(n, [])
        tt, th = tb.get(n, ([], []))
        r1 = med(tt) / med(c) if c and tt else float("nan")
        r2 = med(th) / med(c) if c and th else float("nan")
        md.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (n, mmm(c), fmt(irs[n], 0) if n in irs else "-",
                                                             fmt(cgd[n][1], 0) if n in cgd else "-", mmm(tt, 0),
                                                        mmm(th, 0), fmt(r1) + "x" if r1 == r1 else "-",
                                                        fmt(r2) + "x" if r2 == r2 else "-"))
        plot.append("%d %s %s %s" % (n, fmt(med(c), 3) if c else "NaN", fmt(med(tt), 3) if tt else "NaN",
                                     fmt(med(th), 3) if th else "NaN"))
    write_dat(raw, "hooks.dat", "# modules zoffload_ns torch_total_ns torch_hooks_ns", plot, bool(byn))
    if byn:
        lo, hi = min(byn), max(byn)
        ratio = med(byn[hi]) / med(byn[lo])
        md.append("")
        md.append("**cost(%d)/cost(%d) = %.2f** (goal <= %.1f: %s)." % (hi, lo, ratio, GOAL_HOOKS_DEFAULTS,
                                                                      "met" if ratio <= GOAL_HOOKS_DEFAULTS else "NOT met"))
        gpe = per_gather(h)
        if lo in gpe and hi in gpe:
            md.append("Per gather (CPU ns per step / gathers per step; with the defaults N <= 1e3 gathers each "
                      "parameter once per step, larger N about twice): %s ns at %d, %s ns at %d modules, **%.2fx**."
                      % (fmt(gpe[lo], 0), lo, fmt(gpe[hi], 0), hi, gpe[hi] / gpe[lo]))
        headline.append(("hook cost %d vs %d modules" % (hi, lo), "%.2fx (goal <= %.1fx)" % (ratio, GOAL_HOOKS_DEFAULTS)))
        if lo in irs and hi in irs:
            md.append("Instructions per event (callgrind, timed steps only, deterministic): %d -> %d, "
                      "**%.2fx** from %d to %d modules (the defaults' regime switch, see docs/benchmarks.md); the rest "
                      "of the time ratio is the memory hierarchy. *Bytes touched/event*: callgrind's last-level misses "
                      "(1 MiB, 8-way, 64-byte lines: instruction and data reads, data writes) x 64 per event, timed "
                      "steps only." % (irs[lo], irs[hi], irs[hi] / irs[lo], lo, hi))
            headline.append(("instructions per event %d vs %d modules (callgrind)" % (hi, lo), "%.2fx" % (irs[hi] / irs[lo])))
        common = [n for n in byn if n in tb]
        if common:
            rs = [med(tb[n][0]) / med(byn[n]) for n in common]
            rh = [med(tb[n][1]) / med(byn[n]) for n in common]
            headline.append(("PyTorch hooks / zoffload per event (%s modules)" % ",".join(str(n) for n in common),
                             "total %s-%sx, hooks only %s-%sx" % (fmt(min(rs)), fmt(max(rs)), fmt(min(rh)), fmt(max(rh)))))
    hu = rows(os.path.join(raw, "hooks_uniform.tsv"), "hooks")
    if hu:
        bu = collections.OrderedDict()
        for f in hu:
            bu.setdefault(int(f[0]), []).append(float(f[2]))
        md.append("")
        md.append("Same benchmark, one regime for every N (`max_reuse_distance` 0, `max_live_parameters` 5e7: "
                  "released at every post-hook, at most 50 parameters live). With DeepSpeed's defaults a model of "
                  "<= 1e9 elements (N <= 1e3 here) stays gathered from forward to backward while a larger one is "
                  "re-gathered in backward (about twice the gathers per event), so the defaults mix two regimes.")
        md.append("")
        md.append("| modules | zoffload ns/event, uniform regime |")
        md.append("| ---: | ---: |")
        for n, v in bu.items():
            md.append("| %d | %s |" % (n, mmm(v)))
        lo, hi = min(bu), max(bu)
        ru = med(bu[hi]) / med(bu[lo])
        md.append("")
        md.append("**cost(%d)/cost(%d), uniform regime = %.2f** (goal <= %.1f: %s)." % (
            hi, lo, ru, GOAL_HOOKS_UNIFORM, "met" if ru <= GOAL_HOOKS_UNIFORM else "NOT met"))
        gpu = per_gather(hu)
        gev = {}
        for f in hu:
            try:
                gev.setdefault(int(f[0]), float(f[8]) * float(f[4]) / float(f[5]))
            except (ValueError, IndexError, ZeroDivisionError):
                pass
        if lo in gpu and hi in gpu and lo in gev and hi in gev:
            md.append("Per gather: %s ns at %d, %s ns at %d modules, **%.2fx**. Gathers per event: %s at %d, %s at %d "
                      "modules: at the turn from forward to backward the last parameters gathered (at most 50 live) "
                      "serve the first backward modules without a new gather, a large share of a 100-module model "
                      "and none to speak of at 1e5, so part of the per-event ratio is that share, not the hooks." % (
                          fmt(gpu[lo], 0), lo, fmt(gpu[hi], 0), hi, gpu[hi] / gpu[lo], fmt(gev[lo], 3), lo,
                          fmt(gev[hi], 3), hi))
        cgu = hooks_cg(raw, "uniform")
        if cgu:
            n = max(cgu)
            md.append("callgrind at %d modules, uniform regime: %s instructions and %s bytes touched per event." % (
                n, fmt(cgu[n][0], 0), fmt(cgu[n][1], 0)))
        headline.append(("hook cost %d vs %d modules, uniform regime" % (hi, lo), "%.2fx" % ru))
    md.append("")

    # ---------------------------------------------------------------- gather
    g = rows(os.path.join(raw, "gather.tsv"), "gather")
    gcfg = rows(os.path.join(raw, "gather.tsv"), "gather_config")
    poison_default = gcfg[0][1] if gcfg and len(gcfg[0]) > 1 else "?"
    md.append("## 2. Host gather throughput against memcpy")
    md.append("")
    md.append("GB/s (CPU time, 1e9 bytes/s) median (min-max) over repetitions; ratios are per repetition, then the "
              "median. *memcpy*: the fastest of four source/destination offset pairs between page-aligned buffers "
              "(*memcpy worst*: the slowest pair, glibc's spread with placement); *backend*: the host backend's "
              "all-gather alone (buffer allocated once); *runtime*: zo_pre_forward + zo_post_forward of a module "
              "owning the parameter with the default host backend of this build (full buffer from the backend's "
              "cache of freed buffers, gather, release back to the cache; the 0xA5 poison fill only where the "
              "library is built with ZO_POISON - here zo_host_poison_default() = %s); *runtime poison*: the same "
              "with `no_poison = 0` (0xA5 fill of every fetched buffer, as in test and fuzz builds). Size = full "
              "parameter bytes; the W shards together hold the same bytes, so memory is about 8x size for any W "
              "(2 GiB at 256 MiB): no size had to be capped. Stamp: %s." % (poison_default, stamp))
    md.append("")
    md.append("| W | size | memcpy GB/s | memcpy worst GB/s | backend GB/s | runtime GB/s | backend/memcpy "
              "| runtime/memcpy | runtime poison GB/s | runtime poison/memcpy |")
    md.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    gb = collections.OrderedDict()
    for f in g:
        if len(f) < 8:
            continue  # written by an older bench_gather (other columns)
        gb.setdefault((int(f[0]), int(f[1])), []).append(
            (float(f[3]), float(f[4]), float(f[5]), float(f[6]), float(f[7])))
    gplot = collections.defaultdict(list)
    worst_b, worst_r, worst_p, goal_r = [], [], [], []
    for (w, s), v in sorted(gb.items()):
        mc = [x[0] for x in v]
        mw = [x[4] for x in v if x[4] > 0]
        be = [x[1] for x in v]
        rt = [x[2] for x in v]
        rp = [x[3] for x in v if x[3] > 0]
        rb = [x[1] / x[0] for x in v if x[0] > 0]
        rr = [x[2] / x[0] for x in v if x[0] > 0]
        rpr = [x[3] / x[0] for x in v if x[0] > 0 and x[3] > 0]
        size = "%d KiB" % (s // 1024) if s < 1 << 20 else "%d MiB" % (s >> 20)
        md.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            w, size, mmm(mc), mmm(mw), mmm(be), mmm(rt), fmt(med(rb), 2), fmt(med(rr), 2), mmm(rp),
            fmt(med(rpr), 2) if rpr else "-"))
        gplot[w].append("%d %.4f %.4f %.4f" % (s, med(rb), med(rr), med(rpr) if rpr else float("nan")))
        worst_b.append((med(rb), w, size))
        worst_r.append((med(rr), w, size))
        if s >= 64 * 1024:
            goal_r.append((med(rr), w, size))
        if rpr:
            worst_p.append((med(rpr), w, size))
    for w, lines in gplot.items():
        write_dat(raw, "gather_w%d.dat" % w, "# bytes backend/memcpy runtime/memcpy runtime_poison/memcpy", lines,
                  bool(lines))
    if worst_b:
        md.append("")
        if goal_r:
            r_ok = sum(1 for x in goal_r if x[0] >= 0.9)
            md.append("**Goal: runtime path >= 0.9x memcpy at every size >= 64 KiB in the default configuration: "
                      "met in %d of %d cells (worst %.2fx at W=%d, %s): %s.**" % (
                          r_ok, len(goal_r), min(goal_r)[0], min(goal_r)[1], min(goal_r)[2],
                          "met" if r_ok == len(goal_r) else "NOT met"))
        line = ("All sizes: backend >= 0.9x memcpy in %d of %d cells (worst %.2fx at W=%d, %s); runtime path in "
                "%d of %d (worst %.2fx at W=%d, %s)" % (
                    sum(1 for x in worst_b if x[0] >= 0.9), len(worst_b), min(worst_b)[0], min(worst_b)[1],
                    min(worst_b)[2], sum(1 for x in worst_r if x[0] >= 0.9), len(worst_r), min(worst_r)[0],
                    min(worst_r)[1], min(worst_r)[2]))
        if worst_p:
            line += "; runtime path with the poison fill in %d of %d (worst %.2fx at W=%d, %s)" % (
                sum(1 for x in worst_p if x[0] >= 0.9), len(worst_p), min(worst_p)[0], min(worst_p)[1],
                min(worst_p)[2])
        md.append(line + ". Small sizes are dominated by the fixed cost per fetch (hooks, bookkeeping).")
        head = "backend median %.2fx (worst %.2fx); runtime median %.2fx (worst %.2fx)" % (
            med([x[0] for x in worst_b]), min(worst_b)[0], med([x[0] for x in worst_r]), min(worst_r)[0])
        if goal_r:
            head += "; runtime >= 64 KiB worst %.2fx (goal 0.9x)" % min(goal_r)[0]
        if worst_p:
            head += "; runtime with poison fill median %.2fx (worst %.2fx)" % (med([x[0] for x in worst_p]),
                                                                             min(worst_p)[0])
        headline.append(("host gather / memcpy (backend; runtime path, poison %s)" %
                         ("on" if poison_default == "1" else "off" if poison_default == "0" else "?"), head))
    md.append("")
    md.append("NCCL rows (gather bytes/s against cudaMemcpyAsync device-to-device): **absent** - no GPU on this "
              "machine (`%s`)." % m.get("gpu", "absent"))
    md.append("")

    # ---------------------------------------------------------------- fuzz speed
    sp = rows(os.path.join(raw, "fuzzspeed.tsv"), "speed")
    md.append("## 3. Fuzzing speed")
    md.append("")
    md.append("exec/s, one run of %s s per target and engine, per-call policy, shipped seeds; fuzz_hooks:small "
              "starts from an empty corpus (AFL++: a 16-byte zero seed) with inputs of at most 256 bytes, "
              "fuzz_hooks:one-rank runs every input, all-ranks ones too, as one rank's view "
              "(`ZOFUZZ_ONE_RANK=1`); engine-only is `bench/fuzz_empty`, a target that reads its input and "
              "does nothing else, from an empty corpus with inputs of at most 256 bytes: the engine's own cost per "
              "execution on this machine, which no target beats under the same engine; engine-wide (libFuzzer "
              "only) is `bench/fuzz_wide`, the same through as many small functions as give it the coverage "
              "features per execution of fuzz_hooks one-rank on the shipped seeds (the note gives both counts), "
              "with edge coverage only: libFuzzer works on every feature an execution hits, so this is close to "
              "the ceiling of a target that wide under the same engine. libFuzzer: "
              "`stat::average_exec_per_sec`; AFL++ 4.04c persistent mode (libAFLDriver): `execs_per_sec` (its "
              "calibration included); both per wall second, so the machine's load depresses them; *per CPU "
              "second* divides the executions by the CPU time of the engine and target (getrusage). Stamp: %s."
              % (m.get("speed_s", "?"), stamp))
    md.append("")
    md.append("| target | libFuzzer ASan+UBSan | libFuzzer -O2 | AFL++ -O2 | -O2 / ASan | AFL++ / libFuzzer -O2 | per CPU second: ASan / -O2 / AFL++ | note |")
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    sb = collections.defaultdict(dict)
    sc = collections.defaultdict(dict)
    notes = collections.defaultdict(list)
    for f in sp:
        sb[f[0]][f[1]] = float(f[4])
        if len(f) > 6:
            sc[f[0]][f[1]] = float(f[6])
        if len(f) > 5 and f[5]:
            notes[f[0]].append("%s: %s" % (f[1], f[5]))
    splot = []
    for i, tg in enumerate(["fuzz_hooks", "fuzz_hooks:small", "fuzz_hooks:one-rank", "fuzz_api", "fuzz_scn_parse",
                            "engine-only", "engine-wide"]):
        e = sb.get(tg, {})
        a, o, af = e.get("libfuzzer-asan", float("nan")), e.get("libfuzzer-O2", float("nan")), e.get("aflpp-O2", float("nan"))
        c = sc.get(tg, {})
        cpu = " / ".join(fmt(c[k], 0) if k in c else "-" for k in ("libfuzzer-asan", "libfuzzer-O2", "aflpp-O2"))
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (tg, fmt(a, 0), fmt(o, 0), fmt(af, 0),
                                                             fmt(o / a, 2) if a == a and a else "-",
                                                             fmt(af / o, 2) if o == o and o else "-", cpu,
                                                             "; ".join(notes[tg])))
        splot.append("%d %s %s %s %s" % (i, tg, a if a == a else "NaN", o if o == o else "NaN", af if af == af else "NaN"))
        if o == o:
            headline.append(("exec/s %s (ASan / -O2 / AFL++)" % tg, "%s / %s / %s" % (fmt(a, 0), fmt(o, 0), fmt(af, 0))))
    write_dat(raw, "fuzzspeed.dat", "# idx target asan O2 afl", splot,
              any(v > 0 for e in sb.values() for v in e.values()))
    md.append("")

    # ---------------------------------------------------------------- ttb
    tt = rows(os.path.join(raw, "ttb.tsv"), "ttb")
    cap = float(m.get("ttb_cap", "120"))
    md.append("## 4. Time-to-bug")
    md.append("")
    md.append("%s trials per configuration, each capped at %s s of wall time, from an empty corpus; a trial ends at "
              "the first invariant violation under the legacy policy (`ZOFUZZ_POLICY`); the invariant is read back "
              "with `zofuzz repro`. Unguided: `zofuzz check` (seeded random bytes, max length 4096, through the same "
              "decoder, no coverage feedback). Seconds: median (min-max), RMST = restricted mean of min(T, cap) with "
              "a 95 %% bootstrap interval; ratio = guided / unguided RMST.%s Stamp: %s." %
              (m.get("ttb_trials", "?"), m.get("ttb_cap", "?"),
               " **Quick run: %s trials capped at %s s, policies %s, not the 10 x 120 s of all three of the full "
               "run.**" % (m.get("ttb_trials", "?"), m.get("ttb_cap", "?"), m.get("ttb_policies", "?"))
               if quick else "", stamp))
    md.append("")
    md.append("| policy | engine | found | median s | RMST s [95% CI] | RMST / unguided | executions to bug | first violation |")
    md.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    tbd = collections.OrderedDict()
    for f in tt:
        tbd.setdefault((f[0], f[1]), []).append((int(f[3]), float(f[4]), f[5], int(f[6]) if len(f) > 6 else -1))
    rm = {}
    for (pol, eng), v in tbd.items():
        ts = [min(x[1], cap) if x[0] else cap for x in v]
        rm[(pol, eng)] = statistics.mean(ts)
    tplot = []
    for (pol, eng), v in tbd.items():
        ts = [min(x[1], cap) if x[0] else cap for x in v]
        found = sum(x[0] for x in v)
        lo, hi = bootstrap_ci(ts, statistics.mean)
        invs = collections.Counter(x[2] for x in v if x[0])
        un = rm.get((pol, "unguided"))
        ratio = rm[(pol, eng)] / un if un else float("nan")
        ex = [float(x[3]) for x in v if x[0] and x[3] >= 0]
        md.append("| %s | %s | %d/%d | %s | %s [%s, %s] | %s | %s | %s |" % (
            pol, eng, found, len(v), mmm(ts, 3), fmt(rm[(pol, eng)], 3), fmt(lo, 3), fmt(hi, 3),
            fmt(ratio, 1) + "x" if eng != "unguided" and ratio == ratio else "-", mmm(ex, 0),
            ", ".join("%s x%d" % kv for kv in sorted(invs.items())) or "-"))
        tplot.append("\"%s\\n%s\" %.4f %.4f %.4f" % (pol, eng, rm[(pol, eng)], lo if lo == lo else rm[(pol, eng)],
                                                    hi if hi == hi else rm[(pol, eng)]))
    write_dat(raw, "ttb.dat", "# label rmst lo hi", tplot, bool(tplot))
    if tbd:
        for eng in ["libfuzzer-O2", "aflpp-O2"]:
            rs = [rm[(p, eng)] / rm[(p, "unguided")] for p, e in tbd if e == eng and (p, "unguided") in rm and rm[(p, "unguided")] > 0]
            if rs:
                ex = [x[3] for (p, e), v in tbd.items() if e == eng for x in v if x[0] and x[3] >= 0]
                headline.append(("time-to-bug %s / unguided (RMST; > 1 = guided slower)" % eng,
                                 "%s-%sx over %d polic%s; median %s executions to bug%s" % (
                                     fmt(min(rs), 1), fmt(max(rs), 1), len(rs), "y" if len(rs) == 1 else "ies",
                                     fmt(med(ex), 0) if ex else "-",
                                     " (quick: %s x %s s)" % (m.get("ttb_trials", "?"), m.get("ttb_cap", "?"))
                                     if quick else "")))
    md.append("")

    # ---------------------------------------------------------------- memory
    mem = rows(os.path.join(raw, "memory.tsv"), "memory")
    lat = rows(os.path.join(raw, "memory.tsv"), "latency")
    md.append("## 5. Memory: peak gathered numel against the minimum")
    md.append("")
    md.append("Per model (corpus/models), first two train steps (record, then a COMPLETE trace), per-call policy. "
              "min = the largest parameter set one module computation needs; stack = the largest union along one "
              "call stack (a caller holds its parameters while its children run); persistent = ds_persist numel "
              "(always gathered, inside peak). reuse = max_reuse_distance: the scenario's (DeepSpeed default 1e9 "
              "elements) or 0. Deterministic (no timing): one run. Stamp: %s." % stamp)
    md.append("")
    md.append("| model | min | stack | persistent | reuse | peak, prefetch off | peak/min | peak, prefetch on | peak/min | verdict |")
    md.append("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
    mb = collections.OrderedDict()
    for f in mem:
        mb.setdefault((f[0], f[1]), {})[int(f[2])] = f
    mplot = []
    ratios_on = []
    for i, ((model, reuse), d) in enumerate(mb.items()):
        off, on = d.get(0), d.get(1)
        if not off or not on:
            continue
        mn = int(off[4])
        md.append("| %s | %s | %s | %s | %s | %s | %.2f | %s | %.2f | %s |" % (
            model, "{:,}".format(mn), "{:,}".format(int(off[5])), "{:,}".format(int(off[6])), reuse,
            "{:,}".format(int(off[3])), int(off[3]) / mn, "{:,}".format(int(on[3])), int(on[3]) / mn,
            off[7] if off[7] == on[7] else off[7] + "/" + on[7]))
        if reuse == "default":
            mplot.append("%d %s %.4f %.4f" % (len(mplot), model, int(off[3]) / mn, int(on[3]) / mn))
            ratios_on.append(int(on[3]) / mn)
    write_dat(raw, "memory.dat", "# idx model peak_off/min peak_on/min (default reuse)", mplot, bool(mplot))
    if ratios_on:
        headline.append(("peak / minimum, prefetch on, DeepSpeed defaults",
                         "%.2f-%.2fx over %d models" % (min(ratios_on), max(ratios_on), len(ratios_on))))
    md.append("")
    md.append("Blocking fetches in step 2 (the COMPLETE trace) with the deferred host backend: a gather completes "
              "when waited or at the next `zo_host_progress()`, which the simulator calls after every k-th hook "
              "call (latency 1..k hook calls). Prefetch hit rate = 1 - blocking(on) / blocking(off). An all-ranks "
              "model (`config ranks=all`) is rank 0's program here (in a host world a gather completes when its "
              "last rank issues it, not after k hook calls); its memory rows above run every rank in one world, "
              "and their verdict is the world's (I8: the ranks' collectives diverge, the finding the model shows).")
    md.append("")
    md.append("| model | reuse | k | blocking, prefetch off | blocking, prefetch on | gathers (on) | prefetches (on) | hit rate |")
    md.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    hits = []
    for f in lat:
        boff, bon = int(f[3]), int(f[4])
        hr = 1 - bon / boff if boff else float("nan")
        if f[1] == "default":
            hits.append(hr)
        md.append("| %s | %s | %s | %d | %d | %s | %s | %s |" % (f[0], f[1], f[2], boff, bon, f[5], f[6],
                                                                "%.0f%%" % (100 * hr) if hr == hr else "-"))
    if hits:
        headline.append(("prefetch hit rate (latency 1-7 hook calls)", "%.0f%%-%.0f%%" % (100 * min(hits), 100 * max(hits))))
    md.append("")

    # ---------------------------------------------------------------- verify
    ver = rows(os.path.join(raw, "verify.tsv"), "verify")
    if ver:
        md.append("## 6. verify_collectives: cost of the fingerprint check per collective")
        md.append("")
        md.append("bench/bench_verify.c: each rank registers 64 modules with one float32 parameter each, persistence "
                  "and prefetch off, and runs eval forwards (one all-gather per module call). Same run with "
                  "`zo_config.verify_collectives` off and on, alternating within each repetition; wall time of the "
                  "whole world divided by the all-gathers issued. W=1 is one rank's view (the exchange is a local "
                  "copy: the cost of building and comparing fingerprints); W=2,4 is the multi-rank host world, one "
                  "thread per rank, where the fingerprint exchange is a real matched collective that blocks until "
                  "every rank arrives. Median (min-max) over the repetitions. Stamp: %s." % stamp)
        md.append("")
        md.append("| W | parameter bytes | ns/collective, off | ns/collective, on | extra ns | on/off |")
        md.append("| ---: | ---: | ---: | ---: | ---: | ---: |")
        vb = collections.OrderedDict()
        for f in ver:
            vb.setdefault((int(f[0]), int(f[1])), []).append((float(f[4]), float(f[5]), float(f[6])))
        worst = []
        for (w, b), xs in vb.items():
            off = [x[0] for x in xs]
            on = [x[1] for x in xs]
            ra = [x[2] for x in xs]
            md.append("| %d | %s | %s | %s | %s | %s |" % (w, "{:,}".format(b), mmm(off, 0), mmm(on, 0),
                                                          fmt(med(on) - med(off), 0), mmm(ra, 2)))
            worst.append((med(ra), w, b, med(on) - med(off)))
        if worst:
            small = [x for x in worst if x[2] <= 4096]
            pick = max(small or worst)
            headline.append(("verify_collectives, worst on/off ratio (small params)",
                             "%.2fx (W=%d, %s B: +%s ns per collective)" % (pick[0], pick[1], "{:,}".format(pick[2]),
                                                                            fmt(pick[3], 0))))
        md.append("")

    # ---------------------------------------------------------------- scaling
    sc = rows(os.path.join(raw, "scaling.tsv"), "scaling")
    ra = rows(os.path.join(raw, "scaling.tsv"), "ratio")
    if sc:
        md.append("## 7. Scaling: cost per item at a large size vs a small one")
        md.append("")
        md.append("bench/bench_scaling.c, one run: per-item thread CPU time at each size, best of the repetitions "
                  "(small sizes more). register: named modules under one root (1e4, 1e6), named \"layer0\", "
                  "\"layer1\", ..., each repetition in a fresh child process; register-plain: the same with names "
                  "that do not end in a number (\"l0x\", ...); abort: nested forward "
                  "passes with one open call each, unwound by zo_forward_abort(ZO_NO_MODULE) innermost first "
                  "(1e4, 2^20); chain: a chain of modules, each the child of the previous one, registered and "
                  "taken through one training step (1e4, 2e5, 4e5), and its phases. Goal: ratio <= 1.5 (a scan per "
                  "item would give ~the size ratio, 20-105x). Stamp: %s." % stamp)
        md.append("")
        md.append("| case | n | ns/item | repetitions |")
        md.append("| --- | ---: | ---: | ---: |")
        for f in sc:
            md.append("| %s | %s | %s | %s |" % (f[0], "{:,}".format(int(f[1])), fmt(float(f[2]), 0), f[3]))
        md.append("")
        md.append("| case | from n | to n | per-item ratio | goal <= 1.5 |")
        md.append("| --- | ---: | ---: | ---: | --- |")
        for f in ra:
            r = float(f[3])
            md.append("| %s | %s | %s | %.2fx | %s |" % (f[0], "{:,}".format(int(f[1])), "{:,}".format(int(f[2])), r,
                                                          "met" if r <= 1.5 else "not met"))
        md.append("")
        for f in ra:
            if f[0] in SCALING_HEADLINE:
                headline.append(("%s: cost per item %s vs %s" % (SCALING_HEADLINE[f[0]],
                    "{:,}".format(int(f[2])), "{:,}".format(int(f[1]))),
                    "%.2fx (goal <= 1.5)" % float(f[3])))
        ch = [f for f in ra if f[0] == "chain"]
        if ch:
            headline.append(("deep chain of modules, register + step, cost per module",
                             "; ".join("%s->%s: %.2fx" % ("{:,}".format(int(f[1])), "{:,}".format(int(f[2])),
                                                           float(f[3])) for f in ch)))

    # ---------------------------------------------------------------- headline
    top = ["## Headline", "", "| figure | value |", "| --- | --- |"]
    top += ["| %s | %s |" % kv for kv in headline]
    top += ["", "Stamp: %s." % stamp, ""]
    idx = md.index("## 1. Control-plane cost per hook event")
    md = md[:idx] + goals_table(raw, m) + top + md[idx:]
    with open(os.path.join(out, "latest.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(raw, "headline.md"), "w") as f:
        f.write("\n".join(top) + "\n")

    # ---------------------------------------------------------------- plots
    gp = os.path.join(HERE, "plots.gp")
    try:
        subprocess.run(["gnuplot", "-e", "raw='%s'; out='%s'; stamp='%s'" % (raw, out, stamp.replace("'", "")), gp],
                       check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("[bench] no plots: %s" % e, file=sys.stderr)


if __name__ == "__main__":
    main()
