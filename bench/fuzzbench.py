#!/usr/bin/python3
"""Fuzzing benchmarks 3 and 4 of docs/benchmarks.md, driven by bench/run.sh.

  speed  exec/s of every fuzz target (fuzz_hooks, fuzz_api, fuzz_scn_parse)
         under libFuzzer with ASan+UBSan, libFuzzer plain -O2 and AFL++
         persistent mode (libAFLDriver), SECONDS each, on the shipped seeds
         (corpus/seeds/<target>/; fuzz_api has none: one 16-byte zero
         seed); fuzz_hooks also from an empty corpus with inputs of at
         most 256 bytes (fuzz_hooks:small) and with every input run as
         one rank's view (fuzz_hooks:one-rank, ZOFUZZ_ONE_RANK=1); and
         bench/fuzz_empty, a target that does next to nothing, from an
         empty corpus (engine-only: the engine's own ceiling on this
         machine); under libFuzzer also bench/fuzz_wide with as many
         coverage features per execution as fuzz_hooks one-rank hits on
         the shipped seeds (engine-wide: close to the ceiling of a target
         that wide under that engine).  libFuzzer: stat::average_exec_per_sec of
         -print_final_stats=1; AFL++: execs_per_sec of fuzzer_stats.
         Output: speed <target> <engine> <execs> <seconds> <exec_per_s> <note> <exec_per_cpu_s>
         (exec_per_cpu_s: executions per CPU second of the engine and its
         target, from getrusage(RUSAGE_CHILDREN) around the run - the
         figure a loaded, shared machine does not depress.  This process
         is a child subreaper, so AFL++'s persistent-mode target, killed
         with its fork server at the end of the run, is reparented here
         and reaped, and its CPU time counts; reaped by init, it did not:
         over half of an AFL++ run's CPU time was missing)

  ttb    time-to-bug, Magma/FuzzBench style: for every legacy policy
         (ZOFUZZ_POLICY) and engine - libFuzzer -O2, AFL++ -O2, and
         unguided random generation (`zofuzz check`: seeded random bytes
         through the same decoder, no coverage feedback) - TRIALS
         independent trials from an empty corpus (AFL++: one empty-ish
         seed), each capped at CAP seconds of wall time.  A trial ends at
         the first invariant violation; the violated invariant is read
         back by replaying the crash with `zofuzz repro`.
         Output: ttb <policy> <engine> <trial> <found 0|1> <seconds> <invariant> <execs>
         (execs: executions until the bug or the cap - libFuzzer
         stat::number_of_executed_units, AFL++ execs_done, unguided the
         number of scenarios run)

Both write tab-separated lines to stdout and progress to stderr.
"""
import argparse
import glob
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["fuzz_hooks", "fuzz_api", "fuzz_scn_parse"]
# speed cells: (row name, target binary, corpus, max_len or None, extra environment).
#   shipped   the shipped seeds (corpus/seeds/<target>/), the target's own max_len
#   small     from an empty corpus (AFL++: a 16-byte zero seed), inputs of at most 256 bytes
#   one-rank  the shipped seeds with ZOFUZZ_ONE_RANK=1: every input, all-ranks ones
#             included, runs as one rank's view (the harness's single-rank speed)
#   engine-only  bench/fuzz_empty (reads its input, one branch): the engine's own
#             cost per execution on this machine, the ceiling of every other cell
#   engine-wide  bench/fuzz_wide (libFuzzer only) running through as many small
#             functions as give it the features per execution of fuzz_hooks
#             one-rank on the shipped seeds (wide_funcs): libFuzzer works on
#             every feature an execution hits, so this is close to the
#             ceiling of a target that wide (ZOFUZZ_ONE_RANK: for the count
#             of fuzz_hooks' features; fuzz_wide ignores it)
SPEED_CELLS = [
    ("fuzz_hooks", "fuzz_hooks", "shipped", None, {}),
    ("fuzz_hooks:small", "fuzz_hooks", "empty", 256, {}),
    ("fuzz_hooks:one-rank", "fuzz_hooks", "shipped", None, {"ZOFUZZ_ONE_RANK": "1"}),
    ("engine-only", "fuzz_empty", "empty", 256, {}),
    ("engine-wide", "fuzz_wide", "empty", 256, {"ZOFUZZ_ONE_RANK": "1"}),
    ("fuzz_api", "fuzz_api", "shipped", None, {}),
    ("fuzz_scn_parse", "fuzz_scn_parse", "shipped", None, {}),
]
POLICIES = ["reset-on-forward", "lazy-init", "init-at-register"]

AFL_ENV = {
    "AFL_SKIP_CPUFREQ": "1",
    "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1",
    "AFL_NO_UI": "1",
    "AFL_QUIET": "1",
}
# AFL++'s own default binds afl-fuzz, and with it the fork server and the
# target, to one free core: each persistent-mode hand-off (the target
# stops itself, the fork server and afl-fuzz are woken) then stays on that
# core.  AFL_NO_AFFINITY=1 let the three processes spread over the 2 cores
# of the benchmark machine, and each hand-off became a wake-up across
# cores: 2.4x fewer executions per CPU second with fuzz_empty, 2.0x with
# fuzz_hooks one-rank (docs/benchmarks.md, section 3).  So the driver
# leaves the default; afl-fuzz says "No more free CPU cores" and the row
# reports it if every core is already taken by a bound process.


# Sanitizer options for every run, set (not defaulted: ./build.sh exports
# its own, abort_on_error=0 among them, and afl-fuzz refuses to start when
# ASAN_OPTIONS lacks abort_on_error=1 or symbolize=0, or LSAN_OPTIONS or
# UBSAN_OPTIONS lack symbolize=0 - AFL++ 4.04c's check_asan_opts - which
# made every AFL++ row 0 exec/s).  No leak check: a benchmark measures
# executions, and a leak report at exit would count as a crash.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1",
    "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:symbolize=0",
    "LSAN_OPTIONS": "symbolize=0",
    "MSAN_OPTIONS": "exit_code=86:symbolize=0",
}


def bench_env(extra):
    env = dict(os.environ)
    env.update(SANITIZER_ENV)
    env.update(extra)
    return env


def log(msg):
    print("[bench] " + msg, file=sys.stderr, flush=True)


def target_opts(target, maxlen=None):
    """libFuzzer flags from the target's .options plus what zofuzz run adds
    (maxlen: replaces the options' max_len)."""
    opts = []
    path = os.path.join(ROOT, "fuzz", target + ".options")
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"\s*(\w+)\s*=\s*(\S+)", line)
            if m and m.group(1) != "dict" and not (maxlen and m.group(1) == "max_len"):
                opts.append("-%s=%s" % (m.group(1), m.group(2)))
    if maxlen:
        opts.append("-max_len=%d" % maxlen)
    d = os.path.join(ROOT, "fuzz", target + ".dict")
    if os.path.exists(d):
        opts.append("-dict=" + d)
    if target == "fuzz_hooks":
        opts.append("-len_control=0")  # as zofuzz run: richer scenarios from longer inputs
    return opts


def max_len(target):
    for o in target_opts(target):
        if o.startswith("-max_len="):
            return int(o.split("=", 1)[1])
    return 4096


def seed_dir(target, work, empty=False):
    d = os.path.join(work, "seeds-" + target + ("-empty" if empty else ""))
    os.makedirs(d, exist_ok=True)
    src = os.path.join(ROOT, "corpus", "seeds", target)
    n = 0
    if os.path.isdir(src) and not empty:
        for f in sorted(os.listdir(src)):
            shutil.copy(os.path.join(src, f), os.path.join(d, f))
            n += 1
    if n == 0:
        with open(os.path.join(d, "zero"), "wb") as f:
            f.write(b"\0" * 16)
    return d


def run_libfuzzer(binary, target, corpus, seconds, env, extra=(), cap_wall=None, maxlen=None):
    """Runs libFuzzer; returns (rc, wall seconds, output text)."""
    art = os.path.join(corpus, "..", "art-")
    cmd = [binary] + target_opts(target, maxlen) + ["-max_total_time=%d" % seconds, "-print_final_stats=1",
                                            "-rss_limit_mb=2048", "-artifact_prefix=" + art] + list(extra) + [corpus]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=(cap_wall or seconds) + 30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    reap_orphans(p.pid)
    return p.returncode, time.monotonic() - t0, out.decode("utf-8", "replace")


def afl_stats(outdir):
    stats = {}
    path = os.path.join(outdir, "default", "fuzzer_stats")
    if os.path.exists(path):
        for line in open(path):
            if ":" in line:
                k, v = line.split(":", 1)
                stats[k.strip()] = v.strip()
    return stats


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphaned descendants (AFL++'s persistent target, whose fork server
    afl-fuzz kills at the end) are reparented to this process instead of
    init, so reap_orphans() can collect them and RUSAGE_CHILDREN includes
    their CPU time.  Linux only; 0 if it could not be set."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return 1 if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 else 0
    except (OSError, AttributeError):
        return 0


def reap_orphans(pgid):
    """Kills what is left of process group pgid (a run's session) and
    reaps every child this process has left, so their CPU time is in
    RUSAGE_CHILDREN.  Only called between runs, when no Popen of ours is
    alive."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    deadline = time.monotonic() + 5
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)


def run_afl(binary, target, seeds, outdir, seconds, env, until_crash=False, seed=None, maxlen=None):
    env = dict(env)
    env.update(AFL_ENV)
    if until_crash:
        env["AFL_BENCH_UNTIL_CRASH"] = "1"
    cmd = ["afl-fuzz", "-i", seeds, "-o", outdir, "-V", str(seconds)]
    if seed is not None:
        cmd += ["-s", str(seed)]
    if maxlen:
        cmd += ["-G", str(maxlen)]
    d = os.path.join(ROOT, "fuzz", target + ".dict")
    if os.path.exists(d):
        cmd += ["-x", d]
    # -G only where a cell bounds the length (small, engine-only: 256): the
    # other cells run AFL++ with its defaults, as docs/fuzzing.md does
    # (-G 2048 measured 3x slower on fuzz_api here)
    cmd += ["--", binary]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    reap_orphans(p.pid)
    return p.returncode, time.monotonic() - t0, out.decode("utf-8", "replace")


INITED_FT = re.compile(r"INITED cov: \d+ ft: (\d+)")


def features_of(binary, target, path, env, work):
    """Coverage features (libFuzzer's ft) of one execution of the input at
    path: the binary run with -runs=0 on a directory holding only it (ft
    of a one-input corpus is the features that input hits); None if the
    run printed none."""
    d = tempfile.mkdtemp(prefix="ft-", dir=work)
    try:
        shutil.copy(path, os.path.join(d, "input"))
        opts = [o for o in target_opts(target) if not o.startswith("-dict=")]
        try:
            r = subprocess.run([binary] + opts + ["-runs=0", d], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, timeout=120)
        except subprocess.TimeoutExpired:
            return None
        m = INITED_FT.search(r.stdout.decode("utf-8", "replace"))
        return int(m.group(1)) if m else None
    finally:
        shutil.rmtree(d, ignore_errors=True)


WIDE_MAX = 2000  # ZW_MAX_FUNCS of bench/fuzz_wide.c
WIDE_CAL = 1000  # functions of the calibration run


def wide_funcs(bdir, env, work):
    """(F, features of fuzz_wide with F functions, mean features of
    fuzz_hooks per shipped seed under env (the cell's: one-rank), seeds
    counted) for the engine build bdir, F chosen so that the two match; or
    a string saying why not.  A seed whose run prints no count (a finding stops libFuzzer
    before INITED) is left out.  fuzz_wide hits a fixed number of features
    per function (two with clang 14): F = (K - features at 0) / per
    function."""
    hooks = os.path.join(bdir, "fuzz", "fuzz_hooks")
    wide = os.path.join(bdir, "bench", "fuzz_wide")
    seeds = sorted(glob.glob(os.path.join(ROOT, "corpus", "seeds", "fuzz_hooks", "*")))
    if not os.access(hooks, os.X_OK):
        return "missing %s" % hooks
    if not seeds:
        return "no seeds in corpus/seeds/fuzz_hooks"
    ks = [k for k in (features_of(hooks, "fuzz_hooks", f, env, work) for f in seeds) if k is not None]
    if not ks:
        return "no feature count from fuzz_hooks on any of %d seeds" % len(seeds)
    k = sum(ks) / len(ks)
    one = os.path.join(work, "wide-input")
    with open(one, "wb") as f:
        f.write(b"A")
    at = {}
    for n in (0, WIDE_CAL):
        at[n] = features_of(wide, "fuzz_wide", one, dict(env, ZO_BENCH_WIDE_FUNCS=str(n)), work)
        if at[n] is None:
            return "no feature count from fuzz_wide"
    per = (at[WIDE_CAL] - at[0]) / WIDE_CAL
    if per <= 0:
        return "fuzz_wide hits no more features with %d functions than with none" % WIDE_CAL
    n = max(0, min(WIDE_MAX, int(round((k - at[0]) / per))))
    got = features_of(wide, "fuzz_wide", one, dict(env, ZO_BENCH_WIDE_FUNCS=str(n)), work)
    if got is None:
        return "no feature count from fuzz_wide"
    return n, got, k, len(ks)


def cmd_speed(a):
    builds = [("libfuzzer-asan", a.asan), ("libfuzzer-O2", a.lf), ("aflpp-O2", a.afl)]
    if a.engines:
        builds = [b for b in builds if b[0] in a.engines.split(",")]
    work = tempfile.mkdtemp(prefix="zo-bench-speed-")
    # every check on, as `zofuzz run` fuzzes; a finding restarts libFuzzer
    # on the same corpus (below) and is counted in the note
    base_env = bench_env({"ZOFUZZ_POLICY": "per-call"})
    try:
        wanted = a.targets.split(",") if a.targets else [c[0] for c in SPEED_CELLS]
        for cell, target, kind, maxlen, extra_env in SPEED_CELLS:
            if cell not in wanted:
                continue
            seeds = seed_dir(target, work, empty=(kind == "empty"))
            env = dict(base_env)
            env.update(extra_env)
            for engine, bdir in builds:
                if target == "fuzz_wide" and not engine.startswith("libfuzzer"):
                    # AFL++'s cost per execution is its fork-server hand-off
                    # (engine-only), and it scans its whole coverage map
                    # whatever an execution hits: no row
                    continue
                if bdir is None:
                    print("speed\t%s\t%s\t0\t0\t0\tnot built (no --afl: AFL++ absent)" % (cell, engine), flush=True)
                    continue
                binary = os.path.join(bdir, "bench" if target in ("fuzz_empty", "fuzz_wide") else "fuzz", target)
                if not os.access(binary, os.X_OK):
                    print("speed\t%s\t%s\t0\t0\t0\tmissing %s" % (cell, engine, binary), flush=True)
                    continue
                missing = [k for k in extra_env if not knows_setting(bdir, k)]
                if missing:
                    # an older build ignores the variable: the cell would measure something else
                    print("speed\t%s\t%s\t0\t0\t0\tthis build has no %s" % (cell, engine, ",".join(missing)),
                          flush=True)
                    continue
                wide_note = ""
                run_env = env
                if target == "fuzz_wide":
                    w = wide_funcs(bdir, env, work)
                    if isinstance(w, str):
                        print("speed\t%s\t%s\t0\t0\t0\t%s" % (cell, engine, w), flush=True)
                        continue
                    run_env = dict(env, ZO_BENCH_WIDE_FUNCS=str(w[0]))
                    wide_note = ("%d features per execution (%d functions; fuzz_hooks one-rank: %.0f, the mean over "
                                 "%d shipped seeds)" % (w[1], w[0], w[2], w[3]))
                log("fuzz speed: %s under %s, %d s" % (cell, engine, a.seconds))
                corpus = os.path.join(work, "c-%s-%s" % (cell.replace(":", "-"), engine))
                if kind == "empty" and engine.startswith("libfuzzer"):
                    os.makedirs(corpus)
                else:
                    shutil.copytree(seeds, corpus)
                note = ""
                ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                if engine.startswith("libfuzzer"):
                    # libFuzzer stops at a finding: restart it on the same
                    # corpus until the time is used, summing executions
                    execs, secs, wall_sum, restarts = 0, 0.0, 0.0, 0
                    while wall_sum < a.seconds - 1 and restarts <= 20:
                        left = max(1, int(round(a.seconds - wall_sum)))
                        rc, wall, out = run_libfuzzer(binary, target, corpus, left, run_env, maxlen=maxlen)
                        wall_sum += wall
                        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
                        r = re.search(r"stat::average_exec_per_sec:\s*(\d+)", out)
                        e = int(m.group(1)) if m else 0
                        eps1 = float(r.group(1)) if r else 0.0
                        execs += e
                        secs += e / eps1 if eps1 else wall
                        if rc == 0:
                            break
                        restarts += 1
                        for f in glob.glob(os.path.join(work, "art-*")):
                            os.unlink(f)
                    eps = execs / secs if secs else 0.0
                    if restarts:
                        note = "%d finding%s (libFuzzer restarted)" % (restarts, "s" if restarts > 1 else "")
                    if wide_note:
                        note = "; ".join(x for x in (wide_note, note) if x)
                else:
                    outdir = os.path.join(work, "afl-%s" % cell.replace(":", "-"))
                    rc, wall, out = run_afl(binary, target, corpus, outdir, a.seconds, run_env, maxlen=maxlen)
                    st = afl_stats(outdir)
                    execs = int(st.get("execs_done", 0))
                    eps = float(st.get("execs_per_sec", 0))
                    secs = float(st.get("run_time", wall))
                    if not st:
                        note = "afl-fuzz failed: " + out.strip().splitlines()[-1][:80] if out.strip() else "afl-fuzz failed"
                ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
                print("speed\t%s\t%s\t%d\t%.1f\t%.1f\t%s\t%.1f" % (cell, engine, execs, secs, eps, note,
                                                                   execs / cpu if cpu > 0 else 0.0), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def knows_setting(bdir, var):
    """Whether the build's fuzz targets read environment variable var (an
    older build ignores one it does not know, silently)."""
    for name in ("fuzz_hooks", "zofuzz"):
        path = os.path.join(bdir, "fuzz", name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                if var.encode() in f.read():
                    return True
    return False


def classify(zofuzz, crash, policy):
    """The invariant a crash input violates under policy (zofuzz repro)."""
    try:
        p = subprocess.run([zofuzz, "repro", crash, "--policy", policy, "--bytes", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        m = re.search(r"violated: invariant (\w+)", p.stdout.decode("utf-8", "replace"))
        if m:
            return m.group(1)
        m = re.search(r"violated: (\w+)", p.stdout.decode("utf-8", "replace"))
        return m.group(1) if m else "?"
    except subprocess.TimeoutExpired:
        return "?"


def cmd_ttb(a):
    work = tempfile.mkdtemp(prefix="zo-bench-ttb-")
    zofuzz = os.path.join(a.o2, "fuzz", "zofuzz")
    try:
        for policy in (a.policies.split(",") if a.policies else POLICIES):
            env = bench_env({"ZOFUZZ_POLICY": policy})
            for engine in ["libfuzzer-O2"] + (["aflpp-O2"] if a.afl else []) + ["unguided"]:
                log("time-to-bug: %s, %s, %d trials capped at %d s" % (policy, engine, a.trials, a.cap))
                for t in range(a.trials):
                    d = os.path.join(work, "%s-%s-%d" % (policy, engine, t))
                    os.makedirs(d)
                    found, secs, inv, execs = 0, float(a.cap), "-", -1
                    if engine == "libfuzzer-O2":
                        corpus = os.path.join(d, "corpus")
                        os.makedirs(corpus)
                        rc, wall, out = run_libfuzzer(os.path.join(a.lf, "fuzz", "fuzz_hooks"), "fuzz_hooks", corpus,
                                                      a.cap, env, extra=["-seed=%d" % (1000 + t)], cap_wall=a.cap)
                        crashes = glob.glob(os.path.join(d, "art-crash-*"))
                        m = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
                        execs = int(m.group(1)) if m else -1
                        if crashes:
                            found, secs = 1, min(wall, float(a.cap))
                            inv = classify(zofuzz, crashes[0], policy)
                    elif engine == "aflpp-O2":
                        seeds = os.path.join(d, "in")
                        os.makedirs(seeds)
                        with open(os.path.join(seeds, "zero"), "wb") as f:
                            f.write(b"\0")
                        outdir = os.path.join(d, "out")
                        rc, wall, out = run_afl(os.path.join(a.afl, "fuzz", "fuzz_hooks"), "fuzz_hooks", seeds,
                                                outdir, a.cap, env, until_crash=True, seed=1000 + t)
                        crashes = [c for c in glob.glob(os.path.join(outdir, "default", "crashes", "id:*"))]
                        st = afl_stats(outdir)
                        execs = int(st.get("execs_done", -1))
                        if not st:  # it never ran: no time-to-bug to report
                            inv = "afl-fuzz-failed"
                            log("afl-fuzz failed: " + (out.strip().splitlines() or ["no output"])[-1][:120])
                        if crashes:
                            found, secs = 1, min(wall, float(a.cap))
                            inv = classify(zofuzz, sorted(crashes)[0], policy)
                    else:
                        cmd = [zofuzz, "check", "--seed", str(1000 + t), "--trials", "1000000000", "--policy", policy,
                               "--max-failures", "1", "--no-minimize", "--quiet", "--max-len", str(max_len("fuzz_hooks"))]
                        t0 = time.monotonic()
                        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                             start_new_session=True)
                        try:
                            out, _ = p.communicate(timeout=a.cap)
                            wall = time.monotonic() - t0
                            text = out.decode("utf-8", "replace")
                            m = re.search(r"invariant (\w+) violated", text) or re.search(r"(setup) error", text)
                            k = re.search(r"^trial (\d+) ", text, re.M)
                            if p.returncode == 1 and m:
                                found, secs, inv = 1, wall, m.group(1)
                                execs = int(k.group(1)) + 1 if k else -1
                        except subprocess.TimeoutExpired:
                            os.killpg(p.pid, signal.SIGKILL)
                            p.communicate()
                    print("ttb\t%s\t%s\t%d\t%d\t%.3f\t%s\t%d" % (policy, engine, t, found, secs, inv, execs),
                          flush=True)
                    shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not an integer" % text)
    if v <= 0:
        raise argparse.ArgumentTypeError("%d is not positive" % v)
    return v


def comma_list(ap, flag, text, known):
    """The names of a comma list, each one of KNOWN (exit 2 otherwise)."""
    names = [n for n in text.split(",") if n] if text else []
    bad = [n for n in names if n not in known]
    if bad or (text and not names):
        ap.error("%s: unknown %s (one of %s)" % (flag, ",".join(bad) or repr(text), ",".join(known)))
    return names


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--seconds", type=positive_int, default=30)
    s.add_argument("--targets", default="", help="comma list of cells (default: all): " +
                   ",".join(c[0] for c in SPEED_CELLS))
    s.add_argument("--engines", default="", help="comma list of libfuzzer-asan,libfuzzer-O2,aflpp-O2")
    s.add_argument("--asan", required=True, help="build dir: libFuzzer + ASan/UBSan")
    s.add_argument("--lf", required=True, help="build dir: libFuzzer plain -O2")
    s.add_argument("--afl", help="build dir: AFL++ (libAFLDriver); without it the AFL++ cells say so")
    t = sub.add_parser("ttb")
    t.add_argument("--trials", type=positive_int, default=10)
    t.add_argument("--cap", type=positive_int, default=120)
    t.add_argument("--policies", default="", help="comma list of legacy policies (default: all three)")
    t.add_argument("--lf", required=True)
    t.add_argument("--afl", help="build dir: AFL++ (libAFLDriver); without it no AFL++ trials")
    t.add_argument("--o2", required=True, help="build dir with fuzz/zofuzz")
    a = ap.parse_args()
    # a build directory that is not there is a mistake in the command line
    # (a tree whose build lacks one target gets a "missing" row instead)
    for flag in ("asan", "lf", "afl", "o2"):
        d = getattr(a, flag, None)
        if d is not None and not os.path.isdir(d):
            ap.error("--%s %s: no such build directory" % (flag, d))
    if a.cmd == "speed":
        comma_list(ap, "--targets", a.targets, [c[0] for c in SPEED_CELLS])
        comma_list(ap, "--engines", a.engines, ["libfuzzer-asan", "libfuzzer-O2", "aflpp-O2"])
    else:
        comma_list(ap, "--policies", a.policies, POLICIES)
    if not become_subreaper():
        log("cannot become a child subreaper: AFL++'s exec per CPU second misses its target's last process")
    if a.cmd == "speed":
        cmd_speed(a)
    else:
        cmd_ttb(a)


if __name__ == "__main__":
    main()
