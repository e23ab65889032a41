"""zoffload.check - run your training step live on libzoffload and report
the first protocol invariant that breaks, where.

    python -m zoffload.check my_train.py:step [--build build] [--steps N]
        [--policy reset-on-forward] [--ds-profile 0.19] [-o model.scn]
        [--zofuzz PATH] [--no-capture] [--allow-approx]

The script convention is zoffload.capture's: `build()` returns the model,
`step(model, i)` runs training step i (forward, loss.backward(), the
optimizer step).  The model is wrapped with zoffload.torch under the
chosen counter policy, with DeepSpeed's autograd Functions as the
gradient hooks (grad_hooks="function": the hook timing DeepSpeed 0.19.8
and the simulator have), and the live invariant checker watches the
runtime's event stream; after each step the optimizer-step boundary runs
(zo_release_all).  The gradients land in the runtime's shards, so the
script's own optimizer sees none and updates nothing: what is checked is
the hook protocol on the model's real forward and backward.

Then, unless --no-capture, a freshly built model is captured with
zoffload.capture (the simulator's exactness check included) and written to
-o (default: SCRIPT-STEP.scn), and `zofuzz repro` of it under the same
policy is run when zofuzz is found (--zofuzz, $ZOFFLOAD_ZOFUZZ,
build*/fuzz/zofuzz, PATH): the live verdict
and the simulator's are printed side by side.  The file is the input of
`zofuzz minimize`.

Exit status: 0 no violation, 1 a violation (live), 2 bad input or an
error of the run.
"""

import argparse
import os
import re
import subprocess
import sys
import time


from . import capture as _cap
from . import torch as zt
from ._lib import POLICIES, DS_PROFILES, ZoffloadError


def run_live(build, step, steps, policy, ds_profile, build_name="build"):
    """(violation or None, stats, steps run); ZoffloadError when the live
    run cannot go on, CaptureError when the user's builder fails"""
    model = _cap.build_model(build, build_name)
    live = zt.wrap(model, policy=policy, ds_profile=ds_profile, grad_hooks="function",
                   param_persistence_threshold=0)
    done = 0
    try:
        for i in range(steps):
            try:
                step(model, i)
            except (zt.LiveViolation, ZoffloadError):
                raise
            except SystemExit as e:
                raise ZoffloadError("step %d called sys.exit(%r)" % (i, e.code)) from e
            except Exception as e:  # noqa: BLE001 - the user's step: any exception is its error
                raise ZoffloadError("step %d raised %s: %s" % (i, type(e).__name__, e)) from e
            live.end_step()
            done += 1
        st = live.stats()
        st["peak_live_bytes"] = st["peak_live_numel"] * _elem_size(live)
        return None, st, done
    except zt.LiveViolation as v:
        return v, live.stats(), done
    finally:
        try:
            live.close()
        except ZoffloadError:
            pass


def _elem_size(live):
    sizes = {p.element_size() for p in live.params}
    return sizes.pop() if len(sizes) == 1 else 0


_VERDICT = re.compile(r"invariant (\S+) violated: step (\d+), event (\d+), at (.*?), module (\S+), param (\S+)")


_STATE = re.compile(r"^\s*ev \d+ PARAM_STATE p=(\d+) (\w+)->(\w+)")
_PARAM = re.compile(r"^param \S+ .*\bnumel=(\d+)")


def sim_peak(scn, trace):
    """The simulator's peak gathered elements for .scn file scn from its
    zofuzz repro trace: the largest sum of the numels of the parameters not
    NOT_AVAILABLE (zo_stats.peak_live_numel's definition), param ids in the
    file's order."""
    numel = []
    with open(scn) as f:
        for ln in f:
            m = _PARAM.match(ln.strip())
            if m:
                numel.append(int(m.group(1)))
    live = peak = 0
    for ln in trace.splitlines():
        m = _STATE.match(ln)
        if not m:
            continue
        p, a, b = int(m.group(1)), m.group(2), m.group(3)
        if a == "NOT_AVAILABLE" and b != "NOT_AVAILABLE":
            live += numel[p]
        elif b == "NOT_AVAILABLE" and a != "NOT_AVAILABLE":
            live -= numel[p]
        peak = max(peak, live)
    return peak


def zofuzz_verdict(zofuzz, scn, policy):
    """(verdict, (text, module) or None, simulator peak elements)"""
    r = subprocess.run([zofuzz, "repro", scn, "--policy", policy], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    m = _VERDICT.search(r.stdout)
    peak = sim_peak(scn, r.stdout)
    if r.returncode == 0:
        return "ok", None, peak
    if m:
        line = [ln for ln in r.stdout.splitlines() if "violated" in ln][-1]
        return m.group(1), (line.split("violated: ", 1)[-1], m.group(5)), peak
    return "?", (r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "exit %d" % r.returncode, None), peak


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m zoffload.check",
                                 description="Run a training step live on libzoffload and report the first "
                                             "invariant violation; capture it as a .scn.")
    ap.add_argument("target", help="SCRIPT.py:STEP; the script also defines the model builder")
    ap.add_argument("--build", default="build", help="the model builder in the script (default: build)")
    ap.add_argument("--steps", type=int, default=None, help="steps (default: the script's STEPS or 1)")
    ap.add_argument("--policy", default="per-call", choices=POLICIES)
    ap.add_argument("--ds-profile", default="0.19", choices=DS_PROFILES)
    ap.add_argument("-o", "--output", help="the .scn to write (default: SCRIPT-STEP.scn)")
    ap.add_argument("--no-capture", action="store_true", help="only the live run")
    ap.add_argument("--zofuzz", help="the zofuzz binary of a zoffload build (capture's exactness check, "
                    "the simulator's verdict; default: $ZOFFLOAD_ZOFUZZ, ./build/fuzz/zofuzz)")
    ap.add_argument("--allow-approx", action="store_true", help="write the .scn even if the simulator differs")
    a = ap.parse_args(argv)
    out = a.output
    if out is None and ":" in a.target:
        out = "%s-%s.scn" % (os.path.splitext(os.path.basename(a.target.rsplit(":", 1)[0]))[0],
                             a.target.rsplit(":", 1)[1])
    try:
        if not a.no_capture:
            _cap.check_output(out)
            if a.zofuzz:
                _cap.zofuzz_ok(a.zofuzz)
        build, step, mod = _cap.load_script(a.target, a.build)
        steps = (_cap.steps_arg(a.steps, "--steps") if a.steps is not None
                 else _cap.steps_arg(getattr(mod, "STEPS", 1), "the script's STEPS"))
    except _cap.CaptureError as e:
        sys.stderr.write("check: %s\n" % e)
        return 2
    t0 = time.time()
    try:
        v, st, done = run_live(build, step, steps, a.policy, a.ds_profile, a.build)
    except (ZoffloadError, _cap.CaptureError) as e:
        sys.stderr.write("check: the live run failed: %s\n" % e)
        return 2
    print("check: live run of %s, policy %s, %d step(s), %.1f s: %d gathers, peak %s elements gathered"
          % (a.target, a.policy, steps, time.time() - t0, st["gathers"], "{:,}".format(st["peak_live_numel"])))
    if v is None:
        print("check: no invariant violated")
    else:
        print("check: VIOLATION %s" % v)
        print("check: module %s (id %s)" % (v.module_path or "-", v.module if v.module is not None else "-"))
    if a.no_capture:
        return 1 if v else 0
    # the simulator and zofuzz are executables with their own sanitizer
    # runtime: an ASan runtime preloaded for this interpreter (a sanitized
    # libzoffload, tests/live/run.sh) must not reach them
    pre = os.environ.get("LD_PRELOAD", "")
    if "asan" in pre:
        kept = [x for x in pre.split(":") if x and "asan" not in x]
        if kept:
            os.environ["LD_PRELOAD"] = ":".join(kept)
        else:
            del os.environ["LD_PRELOAD"]
    try:
        sc = _cap.capture(_cap.build_model(build, a.build), step, steps=steps)
        sc.info.append("source: %s (%d step%s), zoffload.check --policy %s" % (
            os.path.basename(a.target), steps, "s" if steps > 1 else "", a.policy))
        sim = _cap.find_zofuzz(a.zofuzz)
        if sim:
            ok, msg = sc.check(sim)
            if ok is None:
                raise _cap.CaptureError("capture: the simulator could not check the scenario: %s" % msg)
            if not ok and not a.allow_approx:
                raise _cap.CaptureError("capture: the scenario does not reproduce the real hook trace "
                                        "(--allow-approx writes it anyway):\n%s" % msg)
            sc.checked = msg if ok else "APPROXIMATE: " + msg.replace("\n", "; ")
        else:
            sc.checked = "not checked (no zofuzz found)"
        sc.write_scn(out, traces=False)
    except _cap.CaptureError as e:
        sys.stderr.write("check: no .scn written: %s\n" % e)
        return 1 if v else 2
    print("check: wrote %s (%s)" % (out, sc.checked))
    zofuzz = sim
    if zofuzz and os.access(zofuzz, os.X_OK):
        inv, detail, speak = zofuzz_verdict(zofuzz, out, a.policy)
        live_inv = v.inv if v else "ok"
        print("check: zofuzz repro %s --policy %s: %s%s" % (out, a.policy, inv,
                                                             (": " + detail[0]) if detail else ""))
        same = inv == live_inv and (v is None or detail is None or detail[1] in ("-", str(v.module)))
        print("check: the live run and the simulator %s (live %s%s, simulator %s%s)" % (
            "agree" if same else "DIFFER", live_inv, " module %s" % v.module if v else "",
            inv, " module %s" % detail[1] if detail and detail[1] else ""))
        if v is None:
            lp = st["peak_live_numel"]
            print("check: peak gathered: live %s elements (%s bytes, zo_get_stats), simulator %s elements: %s"
                  % ("{:,}".format(lp), "{:,}".format(st["peak_live_bytes"]), "{:,}".format(speak),
                     "equal" if lp == speak else "DIFFERENT"))
    stem = out[:-4] if out.endswith(".scn") else out
    print("check: minimise with: zofuzz minimize %s --policy %s -o %s-min.scn" % (out, a.policy, stem))
    return 1 if v else 0


if __name__ == "__main__":
    sys.exit(main())
