#!/usr/bin/python3
"""ctest tools/capture_errors: bad input to `python -m zoffload.capture`
gets exit 2, a message naming the construct (and module path), and no
file.  Runs on .venv-current (exit 77 when it or its torch is missing).

Importing torch 2.15.0 (PyPI) costs about 3 CPU seconds here, more than
most refusals take: the script re-runs itself under the venv's python, imports
zoffload.capture (and torch) once and runs each case in a fork of that
process, with its own stdout/stderr file and its own interpreter exit
(atexit handlers and unraisable-exception reports at shutdown included).
The first case also runs as a real `python -m zoffload.capture` process,
and its exit status and output must equal the forked run's.

  test_capture_errors.py --zofuzz BUILD/fuzz/zofuzz [--venv DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import capture_models  # noqa: E402  forked(): a capture in a fork of this process
BAD = os.path.join(ROOT, "tools", "capture", "bad_inputs.py")

# builder, step, words the message must contain
CASES = [
    ("build_noparams", "step", ["has no parameters", "NoParams"]),
    ("build_not_module", "step", ["not a torch.nn.Module", "object"]),
    ("build_small", "step_raises", ["step 0 raised RuntimeError", "in the forward of fc"]),
    ("build_small", "step_no_backward", ["no backward"]),
    ("build_wide", "step", ["does not fit the scenario model", "more than 4096 child calls", "ZS_MAX_CHILD_CALLS"]),
    ("build_split", "step", ["does not reproduce the real hook trace", "split.act",
                             "parameter(s) split.act.weight read directly by the caller split"]),
    ("build_body_ckpt_nested", "step", ["layer's forward body runs in a non-reentrant checkpoint inside another "
                                        "checkpointed region", "nested checkpoints: unsupported"]),
    ("build_missing", "step", ["defines no build_missing()"]),
    ("build_raises", "step", ["build_raises() raised RuntimeError: builder failed"]),
    ("build_small", "step_not_callable", ["step_not_callable in", "is not a function"]),
    ("build_small", "step_nested_capture", ["capture() called while another capture runs", "do not nest"]),
    ("build_small", "step_exits", ["step 0 called sys.exit(0): nothing captured"]),
]


def forked(argv, work, tag):
    """python -m zoffload.capture ARGV in a fork of this process: (exit
    status, output); tools/capture_models.py's fork runner."""
    return capture_models.forked(argv, os.path.join(work, "out-%s.txt" % tag))


def real(py, argv, env):
    r = subprocess.run([py, "-m", "zoffload.capture"] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    return r.returncode, r.stdout


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--zofuzz", required=True)
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-current"))
    ap.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    py = os.path.join(a.venv, "bin", "python")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONWARNINGS="ignore")
    skip = "capture_errors: SKIP: no torch venv at %s (tools/oracle_venv.sh --current)" % a.venv
    if not a.in_venv:
        if not os.access(py, os.X_OK):
            print(skip)
            return 77
        sys.stdout.flush()
        return subprocess.run([py, os.path.abspath(__file__), "--in-venv"] + argv, env=env).returncode
    try:
        import torch  # noqa: F401  once, before the forks
    except ImportError:
        print(skip)
        return 77
    import zoffload.capture  # noqa: F401
    work = tempfile.mkdtemp(prefix="zo-capture-errors-")
    bad = 0
    # capture()'s steps: a step count in 1..ZS_MAX_STEPS, refused before anything runs
    lin = torch.nn.Linear(2, 2)
    for v, words in (("2", "steps = '2' is not a number of steps"), (None, "steps = None is not"),
                     (2.5, "steps = 2.5 is not"), (True, "steps = True is not"),
                     (0, "steps = 0; the scenario model holds 1..")):
        try:
            zoffload.capture.capture(lin, lambda m, i: None, steps=v)
            msg = "accepted"
        except zoffload.capture.CaptureError as e:
            msg = str(e)
        except Exception as e:  # noqa: BLE001 - any other type is the failure
            msg = "%s: %s" % (type(e).__name__, e)
        if words not in msg:
            bad += 1
            print("FAIL capture(steps=%r): %s" % (v, msg))
        else:
            print("ok   capture(steps=%r): %s" % (v, msg))
    for i, (build, step, words) in enumerate(CASES):
        out = os.path.join(work, "%s-%s.scn" % (build, step))
        args = ["%s:%s" % (BAD, step), "--build", build, "-o", out, "--zofuzz", a.zofuzz]
        code, msg = forked(args, work, i)
        if i == 0:
            rcode, rmsg = real(py, args, env)
            if (rcode, rmsg.strip()) != (code, msg.strip()):
                bad += 1
                print("FAIL %s:%s: the forked run differs from python -m zoffload.capture:\n  fork: %d %r\n"
                      "  real: %d %r" % (build, step, code, msg, rcode, rmsg))
        msg = msg.strip()
        missing = [w for w in words if w not in msg]
        leftovers = [f for f in os.listdir(work) if f.startswith("%s-%s" % (build, step))]
        # the refusal is the whole story: no traceback, no error ignored at
        # exit (a checkpoint region left open on the step's thread), no abort
        noise = [w for w in ("Traceback", "Exception ignored", "INTERNAL ASSERT", "terminate called")
                 if w in msg]
        if code != 2 or missing or leftovers or noise:
            bad += 1
            print("FAIL %s:%s: exit %d, missing %r, files %r, noise %r\n  %s" % (
                build, step, code, missing, leftovers, noise, msg.replace("\n", "\n  ")))
        else:
            print("ok   %s:%s: %s" % (build, step, msg.splitlines()[0]))
    # the script argument itself: a directory, a file that is not Python,
    # invalid Python, no ":FUNCTION" - exit 2 with the reason, no traceback
    garbage = os.path.join(work, "garbage.py")
    with open(garbage, "w") as f:
        f.write("this is ( not python\n")
    for j, (target, words) in enumerate(((work + ":step", "is a directory"),
                                         (os.path.join(ROOT, "README.md") + ":step", "is not a Python script"),
                                         (garbage + ":step", "is not valid Python"),
                                         (garbage, "expected SCRIPT.py:FUNCTION"))):
        code, msg = forked([target, "-o", os.path.join(work, "t.scn"), "--zofuzz", a.zofuzz], work, "t%d" % j)
        msg = msg.strip()
        if code != 2 or words not in msg or "Traceback" in msg:
            bad += 1
            print("FAIL %s: exit %d, expected %r\n  %s" % (target, code, words, msg.replace("\n", "\n  ")))
        else:
            print("ok   %s: %s" % (target, msg.splitlines()[-1]))
    # a --zofuzz that is no executable: exit 2 before the model is built
    code, msg = forked(["%s:step" % BAD, "--build", "build_small", "-o", os.path.join(work, "z.scn"),
                        "--zofuzz", os.path.join(work, "no-zofuzz")], work, "z")
    msg = msg.strip()
    if code != 2 or "not an executable file" not in msg or "Traceback" in msg or os.path.exists(
            os.path.join(work, "z.scn")):
        bad += 1
        print("FAIL --zofuzz missing: exit %d\n  %s" % (code, msg.replace("\n", "\n  ")))
    else:
        print("ok   --zofuzz missing: %s" % msg.splitlines()[-1])
    # the output path and the step count: refused before the model is
    # built; a device is written into, never replaced; nothing left behind
    sub = os.path.join(work, "sub")
    os.mkdir(sub)
    full = os.path.join(sub, "full.scn")
    os.symlink("/dev/full", full)
    small = ["%s:step" % BAD, "--build", "build_small", "--zofuzz", a.zofuzz, "--no-traces"]
    for k, (extra, words) in enumerate((
            (["-o", os.path.join(work, "nodir", "x.scn")], "directory %s does not exist" % os.path.join(work, "nodir")),
            (["-o", sub], "is a directory"),
            (["-o", ""], "the output path is empty"),
            (["-o", full], "cannot write %s: No space left on device" % full),
            (["-o", os.path.join(sub, "s.scn"), "--steps", "0"], "--steps = 0; the scenario model holds 1.."),
            (["-o", os.path.join(sub, "s.scn"), "--steps", "100000"], "--steps = 100000"),
            (["-o", os.path.join(sub, "s.scn"), "--zofuzz", "/bin/true"],
             "the simulator could not check the scenario: /bin/true traces wrote no"))):
        code, msg = forked(small + extra, work, "o%d" % k)
        msg = msg.strip()
        left = sorted(set(os.listdir(sub)) - {"full.scn"})
        if code != 2 or words not in msg or "Traceback" in msg or left or not os.path.islink(full):
            bad += 1
            print("FAIL %s: exit %d, expected %r, files %r\n  %s" % (extra, code, words, left,
                                                                     msg.replace("\n", "\n  ")))
        else:
            print("ok   %s: %s" % (" ".join(extra), msg.splitlines()[-1]))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
