#!/usr/bin/python3
"""ctest tools/capture_errors: bad input to `python -m zoffload.capture`
gets exit 2, a message naming the construct (and module path), and no
file.  Runs on .venv-current (exit 77 when it or its torch is missing).

  test_capture_errors.py --zofuzz BUILD/fuzz/zofuzz [--venv DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--zofuzz", required=True)
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-current"))
    a = ap.parse_args(argv)
    py = os.path.join(a.venv, "bin", "python")
    if not os.access(py, os.X_OK) or subprocess.run([py, "-c", "import torch"],
                                                     stderr=subprocess.DEVNULL).returncode != 0:
        print("capture_errors: SKIP: no torch venv at %s (tools/oracle_venv.sh --current)" % a.venv)
        return 77
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONWARNINGS="ignore")
    work = tempfile.mkdtemp(prefix="zo-capture-errors-")
    bad = 0
    for build, step, words in CASES:
        out = os.path.join(work, "%s-%s.scn" % (build, step))
        r = subprocess.run([py, "-m", "zoffload.capture", "%s:%s" % (BAD, step), "--build", build, "-o", out,
                            "--zofuzz", a.zofuzz], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env)
        msg = r.stdout.strip()
        missing = [w for w in words if w not in msg]
        leftovers = [f for f in os.listdir(work) if f.startswith("%s-%s" % (build, step))]
        # the refusal is the whole story: no traceback, no error ignored at
        # exit (a checkpoint region left open on the step's thread), no abort
        noise = [w for w in ("Traceback", "Exception ignored", "INTERNAL ASSERT", "terminate called")
                 if w in msg]
        if r.returncode != 2 or missing or leftovers or noise:
            bad += 1
            print("FAIL %s:%s: exit %d, missing %r, files %r, noise %r\n  %s" % (
                build, step, r.returncode, missing, leftovers, noise, msg.replace("\n", "\n  ")))
        else:
            print("ok   %s:%s: %s" % (build, step, msg.splitlines()[0]))
    # the script argument itself: a directory, a file that is not Python,
    # invalid Python, no ":FUNCTION" - exit 2 with the reason, no traceback
    garbage = os.path.join(work, "garbage.py")
    with open(garbage, "w") as f:
        f.write("this is ( not python\n")
    for target, words in ((work + ":step", "is a directory"), (os.path.join(ROOT, "README.md") + ":step",
                          "is not a Python script"), (garbage + ":step", "is not valid Python"),
                          (garbage, "expected SCRIPT.py:FUNCTION")):
        r = subprocess.run([py, "-m", "zoffload.capture", target, "-o", os.path.join(work, "t.scn"),
                            "--zofuzz", a.zofuzz], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env)
        msg = r.stdout.strip()
        if r.returncode != 2 or words not in msg or "Traceback" in msg:
            bad += 1
            print("FAIL %s: exit %d, expected %r\n  %s" % (target, r.returncode, words, msg.replace("\n", "\n  ")))
        else:
            print("ok   %s: %s" % (target, msg.splitlines()[-1]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
