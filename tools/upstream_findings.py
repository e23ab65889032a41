#!/usr/bin/python3
"""upstream_findings.py - which of the corpus's findings about upstream
DeepSpeed (the reset-on-forward verdicts of its expect lines) reproduce on
real DeepSpeed, per release.

  upstream_findings.py --zofuzz BUILD/fuzz/zofuzz [--jobs 2]
      (re)exports every corpus .scn whose expect line states a
      reset-on-forward verdict to corpus/deepspeed/<dir>-<name>.py
      (`zofuzz export --to deepspeed`), runs each script on the current
      stack (.venv-current: DeepSpeed 0.19.8, torch 2.15) and on the legacy
      one (.venv-oracle: DeepSpeed 0.15.4, torch 1.13), full engine both, and
      writes the table
      docs/upstream-findings.md and corpus/deepspeed/expected.tsv (what each
      script gives on the current stack).
  upstream_findings.py --zofuzz BUILD/fuzz/zofuzz --only models-gpt2.py,models-bert.py
      the same for these scripts only (NAME or a prefix such as models-);
      every other row keeps its cells from the committed table and
      expected.tsv (scripts whose scenario is gone are dropped)
  upstream_findings.py --check --zofuzz BUILD/fuzz/zofuzz [--jobs 2]
      the ctest entry: every committed script is what `zofuzz export` writes
      now, and on the current stack (full engine) it exits as expected.tsv
      says with the same summary word.  Exit 77 (skip) without .venv-current.
      With --only, every script is still checked against `zofuzz export` but
      only the named ones are run on DeepSpeed (ctest corpus/upstream_findings,
      the fast set; corpus/upstream_findings_full runs all, label long).

An all-ranks scenario is exported as rank 0's program (I8 needs several
processes; the single-process script shows what rank 0 sees).
"""

import argparse
import concurrent.futures
import datetime
import glob
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUTDIR = os.path.join(ROOT, "corpus", "deepspeed")
TABLE = os.path.join(ROOT, "docs", "upstream-findings.md")
EXPECTED = os.path.join(OUTDIR, "expected.tsv")
CURRENT = os.path.join(ROOT, ".venv-current", "bin", "python")
LEGACY = os.path.join(ROOT, ".venv-oracle", "bin", "python")
TIMEOUT = 600


def scenarios():
    """(scn path, script name, expected reset-on-forward verdict, all_ranks)"""
    out = []
    for sub in ("models", "regressions"):
        for f in sorted(glob.glob(os.path.join(ROOT, "corpus", sub, "*.scn"))):
            text = open(f).read()
            m = re.search(r"^expect .*\breset-on-forward=(\S+)", text, re.M)
            if not m:
                continue
            ranks = re.search(r"^config .*\branks=all\b", text, re.M) is not None
            name = "%s-%s.py" % (sub, os.path.basename(f)[:-4])
            out.append((f, name, m.group(1), ranks))
    return out


def export(zofuzz, scn, dest, ranks):
    cmd = [zofuzz, "export", os.path.relpath(scn, ROOT), "--to", "deepspeed",
           "-o", os.path.relpath(dest, ROOT)]
    if ranks:
        cmd += ["--rank", "0"]
    r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit("upstream_findings: %s failed: %s" % (" ".join(cmd), r.stderr.strip()))


def run(py, script, extra=()):
    """(exit code, last line) of one script run; rc 124 on timeout.  A run
    killed by a signal (torch 1.13's gloo teardown has aborted at exit on a
    loaded machine, after the script printed its verdict) is run once more:
    the table states what the script decides, not how the interpreter ended."""
    env = dict(os.environ, DS_ACCELERATOR="cpu", PYTHONUNBUFFERED="1")
    env.pop("MASTER_PORT", None)
    for attempt in range(2):
        try:
            r = subprocess.run([py, script] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, timeout=TIMEOUT, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return 124, "timeout after %d s" % TIMEOUT
        if r.returncode >= 0:
            break
    lines = [x for x in r.stdout.splitlines() if x.strip()]
    last = lines[-1] if lines else (r.stderr.strip().splitlines() or ["(no output)"])[-1]
    return r.returncode, last


def outcome(rc, last):
    """A table cell: the invariant shown, 'holds', or the exception."""
    if rc == 0:
        return "holds"
    m = re.match(r"VIOLATION (I\d)", last)
    if m:
        return m.group(1)
    m = re.match(r"EXCEPTION in (.*?): (?:\w+ )?raised (.*?) \((?:deepspeed|torch) ", last)
    if m:
        return "raises `%s` (%s)" % (m.group(2), m.group(1))
    if last.startswith("EXCEPTION"):
        return "raises (%s)" % last[len("EXCEPTION "):60]
    return "exit %d: %s" % (rc, last[:60])


def word(last):
    return last.split()[0] if last.split() else ""


NOTES = """
Where a row differs, and why (checked by reading the script's output):

- `raises KeyError: 0` in the optimizer step: a step whose only pass
  produced no gradient (a forward discarded, or no output reaching the
  loss) makes `engine.step()` of DeepSpeed's ZeRO-3 optimizer fail before
  its release sweep; the hook protocol has nothing to say there, so
  zoffload's verdict is about the parameters the hooks left, which the
  real run never reaches.
- `z3-leaf-two-outputs`: its `expect` line is measured under DeepSpeed's
  hooks alone (`deepspeed=0.19-hooks`), while the script runs the ZeRO-3
  optimizer, which puts a full backward hook on the leaf
  (`create_reduce_and_remove_grad_hooks`); torch then joins the leaf's
  outputs in one `BackwardHookFunction`, both pre-backward functions run and
  the weight is released.  `z3-leaf-two-outputs-optimizer.scn` is the same
  scenario under `deepspeed=0.19`, where the simulator models that hook and
  says `ok`, as DeepSpeed 0.19.8 does.
- `mixtral_moe_ranks_gather.scn`: its verdict is about all four ranks with
  gather-always MoE blocks, zoffload's own option; DeepSpeed has none, so
  the script runs rank 0's program without it, a different scenario.
- `ok` rows that show I3 on 0.15.4 only: DeepSpeed 0.15's optimizer has no
  `release_backward_leftovers()`, so parameters whose post-backward never
  fired stay gathered past the backward; the simulator's `deepspeed=0.15`
  profile reproduces that.
- `nonreentrant-checkpoint-torch1.13.scn` is measured under torch 1.13's
  checkpoint; on torch 2.15 the recompute stops early and there is no I4.
- `mixtral_moe_ranks.scn`'s I8 needs several processes: one rank's
  program in one process cannot show it.
"""


def read_previous():
    """The committed results: {(script, column label): table cell} and
    {script: (exit code, first word)}."""
    cells, exp = {}, {}
    try:
        with open(EXPECTED) as fh:
            for line in fh:
                if line.startswith("#") or not line.strip():
                    continue
                name, rc, w = line.rstrip("\n").split("\t")
                exp[name] = (int(rc), w)
        with open(TABLE) as fh:
            text = fh.read()
    except OSError:
        return cells, exp
    m = re.search(r"^\| scenario \| zoffload \(reset-on-forward\) \| (.*) \|$", text, re.M)
    labels = [x.strip() for x in m.group(1).split("|")] if m else []
    for line in text.splitlines():
        r = re.match(r"^\| `corpus/(\w+)/(\S+)\.scn`(?: \(rank 0\))? \| [^|]* \| (.*) \|$", line)
        if not r:
            continue
        name = "%s-%s.py" % (r.group(1), r.group(2))
        for label, cell in zip(labels, [x.strip() for x in r.group(3).split(" | ")]):
            cells[(name, label)] = cell
    return cells, exp


def write_outputs(scs, cols, versions, res, prev_cells=None, prev_exp=None):
    """expected.tsv and the docs table from the runs' results (rows not run:
    their previous cells)."""
    prev_cells, prev_exp = prev_cells or {}, prev_exp or {}
    with open(EXPECTED, "w") as fh:
        fh.write("# script\texit code\tfirst word of the last line, on %s (full engine);\n"
                 "# written by tools/upstream_findings.py, checked by ctest corpus/upstream_findings\n"
                 % versions[CURRENT])
        for _, name, _, _ in scs:
            if (name, cols[0][0]) in res:
                rc, last = res[(name, cols[0][0])]
                fh.write("%s\t%d\t%s\n" % (name, rc, word(last)))
            elif name in prev_exp:
                fh.write("%s\t%d\t%s\n" % (name, *prev_exp[name]))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    with open(TABLE, "w") as fh:
        fh.write("# Upstream findings on real DeepSpeed\n\n")
        fh.write("Which of the corpus's verdicts about upstream DeepSpeed (the `reset-on-forward` verdict of "
                 "each `.scn` file's `expect` line, from zoffload's simulator with the file's torch and "
                 "DeepSpeed profiles) show on real DeepSpeed. Each row's script is "
                 "`corpus/deepspeed/<dir>-<name>.py`, written by `zofuzz export FILE --to deepspeed` "
                 "(all-ranks files: `--rank 0`, so rank 0's program in one process; I8 needs several "
                 "processes and cannot show there).\n\n")
        fh.write("Produced on %s by\n\n```sh\n/usr/bin/python3 tools/upstream_findings.py --zofuzz "
                 "build-test/fuzz/zofuzz\n```\n\nwhich runs, for every row, `DS_ACCELERATOR=cpu "
                 ".venv-current/bin/python corpus/deepspeed/NAME.py` (%s; full engine: "
                 "`deepspeed.initialize` with an optimizer, `engine.backward`, `engine.step`; a script "
                 "takes `--hooks-only` for DeepSpeed's bare hooks) and `.venv-oracle/bin/python "
                 "corpus/deepspeed/NAME.py` (%s). A cell is the first invariant the script saw "
                 "(`I1` a negative `ds_grads_remaining`, `I3` a parameter still gathered after a backward "
                 "or the optimizer step, `I4` an op computing with a released parameter), `holds` "
                 "(exit 0), or the exception torch/DeepSpeed raised first. `ctest -R "
                 "corpus/upstream_findings_full` reruns the first column's scripts (`corpus/upstream_findings`, in "
                 "`./build.sh test`, checks every script is current and runs two of them).\n\n"
                 % (stamp, versions[CURRENT] or "not available", versions[LEGACY] or "not available"))
        fh.write("| scenario | zoffload (reset-on-forward) | %s |\n" % " | ".join(c[0] for c in cols))
        fh.write("| --- | --- | %s |\n" % " | ".join("---" for _ in cols))
        for scn, name, verdict, ranks in scs:
            cells = []
            for label, py, _ in cols:
                cells.append(outcome(*res[(name, label)]) if (name, label) in res
                             else prev_cells.get((name, label), "not run"))
            fh.write("| `%s`%s | %s | %s |\n" % (os.path.relpath(scn, ROOT), " (rank 0)" if ranks else "",
                                                verdict, " | ".join(cells)))
        fh.write("\nCounted from the table:\n\n")
        found = [(name, v) for _, name, v, ranks in scs if v not in ("ok", "I8")]
        for label, py, _ in cols:
            cell = lambda name: (outcome(*res[(name, label)]) if (name, label) in res
                                 else prev_cells.get((name, label), "not run"))
            same = sum(1 for name, v in found if cell(name) == v)
            held = sum(1 for _, name, v, _ in scs if v == "ok" and cell(name) == "holds")
            n_ok = sum(1 for _, _, v, _ in scs if v == "ok")
            fh.write("- %s: %d of the %d findings (I1, I3, I4) show as the same invariant; %d of the %d "
                     "`ok` rows hold.\n" % (label, same, len(found), held, n_ok))
        fh.write(NOTES)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zofuzz", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="comma-separated script names or prefixes to redo (with --check: to run on "
                                   "DeepSpeed; every script is still checked for staleness)")
    a = ap.parse_args(argv)
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    t0 = time.time()
    scs = scenarios()
    if a.check:
        if not os.access(CURRENT, os.X_OK):
            print("upstream_findings: SKIP: no %s (tools/oracle_venv.sh --current)" % CURRENT)
            return 77
        want = {}
        with open(EXPECTED) as fh:
            for line in fh:
                if line.startswith("#") or not line.strip():
                    continue
                name, rc, w = line.rstrip("\n").split("\t")
                want[name] = (int(rc), w)
        import tempfile
        tmp = tempfile.mkdtemp(prefix="zo-upstream-")
        bad = 0
        for scn, name, _, ranks in scs:
            fresh = os.path.join(tmp, name)
            export(a.zofuzz, scn, fresh, ranks)
            committed = os.path.join(OUTDIR, name)
            if not os.path.exists(committed) or name not in want:
                print("FAIL %s: not in corpus/deepspeed (rerun tools/upstream_findings.py)" % name)
                bad += 1
                continue
            with open(fresh) as f1, open(committed) as f2:
                # the header's "Made by" line names the output path (and
                # wraps where its length says)
                strip = lambda t: re.sub(r"-o \S+", "-o X", re.sub(r"\s+", " ", t))
                if strip(f1.read()) != strip(f2.read()):
                    print("FAIL %s: stale (zofuzz export writes something else now; rerun "
                          "tools/upstream_findings.py)" % name)
                    bad += 1
        # --only: the fast set of ./build.sh test runs a few scripts on
        # DeepSpeed (each costs a DeepSpeed start); the long set all of them
        chosen = lambda name: not a.only or any(name == o or name.startswith(o) for o in a.only.split(","))
        to_run = [name for _, name, _, _ in scs if chosen(name)]
        if not to_run:
            print("FAIL: --only %s names no script" % a.only)
            return 1
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            futs = {ex.submit(run, CURRENT, os.path.join(OUTDIR, name)): name for name in to_run}
            for fu in concurrent.futures.as_completed(futs):
                name = futs[fu]
                rc, last = fu.result()
                if name in want and (rc, word(last)) != want[name]:
                    print("FAIL %s: exit %d (%s), expected exit %d (%s)" % (name, rc, last, want[name][0],
                                                                           want[name][1]))
                    bad += 1
                else:
                    print("ok   %s: exit %d: %s" % (name, rc, last))
        print("upstream_findings: %d scripts checked as current, %d run on DeepSpeed, %.0f s" % (
            len(scs), len(to_run), time.time() - t0))
        print("%d passed, %d failed" % (len(scs) - bad, bad))
        return 1 if bad else 0

    os.makedirs(OUTDIR, exist_ok=True)
    prev_cells, prev_exp = read_previous() if a.only else ({}, {})
    sel = lambda name: not a.only or any(name == o or name.startswith(o) for o in a.only.split(","))
    live = set(name for _, name, _, _ in scs)
    for old in glob.glob(os.path.join(OUTDIR, "*.py")):
        if sel(os.path.basename(old)) or os.path.basename(old) not in live:
            os.remove(old)
    for scn, name, _, ranks in scs:
        if sel(name):
            export(a.zofuzz, scn, os.path.join(OUTDIR, name), ranks)
    cols = [("DeepSpeed 0.19.8", CURRENT, ()), ("DeepSpeed 0.15.4", LEGACY, ())]
    versions = {}
    for label, py, _ in cols:
        if os.access(py, os.X_OK):
            # from the distributions' metadata: importing them costs seconds
            r = subprocess.run([py, os.path.join(HERE, "dist_versions.py"), "torch", "deepspeed"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            v = r.stdout.split() if r.returncode == 0 else []
            v = dict(zip(v[::2], v[1::2]))  # "torch X deepspeed Y"
            versions[py] = "deepspeed %s, torch %s" % (v["deepspeed"], v["torch"]) if len(v) == 2 else None
        else:
            versions[py] = None
    jobs = []
    for scn, name, verdict, ranks in scs:
        for label, py, extra in cols:
            if versions[py] and sel(name):
                jobs.append((name, label, py, extra))
    res = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run, py, os.path.join(OUTDIR, name), extra): (name, label)
                for name, label, py, extra in jobs}
        for fu in concurrent.futures.as_completed(futs):
            res[futs[fu]] = fu.result()
            print("%s [%s]: exit %d: %s" % (futs[fu][0], futs[fu][1], *res[futs[fu]]), flush=True)
    write_outputs(scs, cols, versions, res, prev_cells, prev_exp)
    print("upstream_findings: %d scenarios, %.0f s; wrote %s and %s" % (
        len(scs), time.time() - t0, os.path.relpath(TABLE, ROOT), os.path.relpath(EXPECTED, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
