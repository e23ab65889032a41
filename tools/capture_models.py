#!/usr/bin/python3
"""capture_models.py - the captured-model corpus: real PyTorch models (HF
transformers built from tiny configs with random weights, peft LoRA, and
small torch models, one per construct) captured with python/zoffload.capture.

  capture_models.py --check --zofuzz BUILD/fuzz/zofuzz [--venv .venv-current]
        ctest tools/capture_models: captures every model again in a temporary
        directory through `python -m zoffload.capture` (which fails unless the
        simulator's trace equals the real trace under all four policies),
        then compares the .scn with the committed corpus/models/<name>.scn
        (comment lines and the expect line aside)
  capture_models.py --write --zofuzz ... [--only NAME,...]
        (re)writes corpus/models/<name>.scn with the measured expect line
        (zofuzz repro under every policy)

The models run on .venv-current (tools/oracle_venv.sh --current: torch
2.15.0, transformers, peft).  Exit 77 (ctest's skip) when that venv or its
transformers/peft is missing; 1 when a capture fails or differs; 0 when
every model captures exactly.

Importing torch 2.15.0, transformers and peft (PyPI) takes about 2.3 of the 3.3-4.9
seconds a model's capture takes here: the script re-runs itself under the
venv's python, imports them and zoffload.capture once, and captures each
model in a fork of that process (`python -m zoffload.capture`'s main, with
its own output file and its own interpreter exit; tests/capture/
test_capture_errors.py checks that a forked run prints what a real process
does).
"""

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HF = "tools/capture/hf_models.py"
TC = "tools/capture/constructs.py"

# name, script, builder, step function, steps, header comment
MODELS = [
    ("gpt2", HF, "build_gpt2", "step", 1,
     "GPT-2 (transformers GPT2LMHeadModel, tiny config: 2 layers, n_embd 16, vocab 64; tied lm_head)"),
    ("bert", HF, "build_bert", "step", 1,
     "BERT (transformers BertForMaskedLM, tiny config: 2 layers, hidden 16; decoder tied to word embeddings)"),
    ("albert", HF, "build_albert", "step", 1,
     "ALBERT (transformers AlbertForMaskedLM, tiny config: one shared layer called 3 times)"),
    ("t5", HF, "build_t5", "step", 1,
     "T5 (transformers T5ForConditionalGeneration, tiny config: 1 encoder + 1 decoder block)"),
    ("llama", HF, "build_llama", "step", 1,
     "LLaMA (transformers LlamaForCausalLM, tiny config: 2 layers, GQA 2/1 heads)"),
    ("llama_ckpt", HF, "build_llama_ckpt", "step", 1,
     "LLaMA (tiny config: 2 layers, GQA 2/1 heads) with model.gradient_checkpointing_enable(): transformers 5.24.0 "
     "checkpoints each decoder layer's forward body, non-reentrant (ckpt=body-non-reentrant)"),
    ("llama_ckpt_reentrant", HF, "build_llama_ckpt_reentrant", "step", 1,
     "LLaMA (tiny config: 2 layers, GQA 2/1 heads) with gradient_checkpointing_enable("
     "gradient_checkpointing_kwargs={'use_reentrant': True}) (ckpt=body-reentrant)"),
    ("gpt2_ckpt", HF, "build_gpt2_ckpt", "step", 1,
     "GPT-2 (tiny config: 2 layers, n_embd 16) with model.gradient_checkpointing_enable(), non-reentrant "
     "in transformers 5.24.0 (ckpt=body-non-reentrant)"),
    ("bert_ckpt", HF, "build_bert_ckpt", "step", 1,
     "BERT (tiny config: 2 layers, hidden 16) with model.gradient_checkpointing_enable(), non-reentrant "
     "in transformers 5.24.0 (ckpt=body-non-reentrant)"),
    ("mixtral", HF, "build_mixtral", "step", 1,
     "Mixtral (transformers MixtralForCausalLM, tiny config: 1 layer, 4 experts, top-2; transformers 5.24.0's "
     "fused MixtralExperts (grouped_mm on CPU) reads gate_up_proj before its act_fn call and down_proj "
     "after it: a param(...) term)"),
    ("llama32", HF, "build_llama32", "step", 1,
     "LLaMA with LLaMA-7B's depth (transformers LlamaForCausalLM: 32 layers, hidden 16, GQA 2/1 heads; "
     "423 modules, over the fuzzer-byte codec's 254: .scn only)"),
    ("lora", HF, "build_lora", "step", 1,
     "peft LoRA (r=2 on q_proj, v_proj) over the tiny LLaMA: base weights frozen"),
    ("torch_mixed", TC, "build", "step_mixed", 5,
     "small torch model: train, eval, retain_graph, accumulation and interleaved steps"),
    ("torch_reuse", TC, "build_reuse", "step", 1,
     "small torch model: one block called twice (ALBERT-style reuse)"),
    ("torch_ckpt", TC, "build_ckpt", "step_mixed", 5,
     "small torch model: checkpoint(block, x, use_reentrant=False) per block, every step kind"),
    ("torch_ckpt_reentrant", TC, "build_ckpt_reentrant", "step_mixed", 5,
     "small torch model: checkpoint(block, x, use_reentrant=True) per block, every step kind"),
    ("torch_raise", TC, "build_raise", "step", 1,
     "small torch model: an exception raised in a block's forward, caught by the model"),
    ("torch_split", TC, "build_split", "step_mixed", 5,
     "small torch model: a module reading its own weights before and after its child call "
     "(fused MoE experts, param(...) terms), called twice, every step kind"),
    ("torch_cache", TC, "build_cache", "step_mixed", 5,
     "small torch model: blocks keep their output on self and the model's loss reads the cache "
     "(outK.J.raw: paths that bypass the block's output hook), every step kind"),
    ("torch_tied", TC, "build_tied", "step", 1,
     "small torch model: a tied weight on two modules and a frozen bias"),
]


def body(text):
    """The scenario lines of a .scn: no comments, no expect line."""
    out = []
    for ln in text.splitlines():
        s = ln.split("#", 1)[0].rstrip()
        if s and not s.startswith("expect "):
            out.append(s)
    return out


def venv_ok(venv):
    py = os.path.join(venv, "bin", "python")
    if not os.access(py, os.X_OK):
        return None, "no %s (tools/oracle_venv.sh --current)" % py
    r = subprocess.run([py, os.path.join(ROOT, "tools", "dist_versions.py"), "torch", "transformers", "peft"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None, "%s lacks torch, transformers or peft (tools/oracle_venv.sh --current installs them)" % venv
    return py, None


def forked(argv, out, freeze=False):
    """python -m zoffload.capture ARGV in a fork of this process, stdout and
    stderr to the file out: (exit status, output).  The child exits through
    the interpreter (SystemExit unwinds to the top), as a real process
    would.

    freeze: the objects alive at the fork (torch's, this driver's) are
    frozen first (gc.freeze), so that the child's collections, the ones at
    its exit included, skip them instead of writing to every one of their
    shared pages: the exit costs about 0.33 s instead of 0.75 s with torch
    2.15.0 loaded.  They stay frozen in this process (unfreezing costs a
    full collection of them at the next fork; they live as long as this
    driver anyway).  The child still clears every module and collects
    everything it created, but a reference cycle among objects older than
    the fork (a class, say) is left uncollected at its exit, with whatever
    the child hung on it, where a real process would collect it and report
    a failing finaliser ("Exception ignored ...").  For runs whose exit
    output does not matter (the models' captures); test_capture_errors.py,
    which checks that output, forks without it."""
    sys.stdout.flush()
    sys.stderr.flush()
    if freeze:
        gc.freeze()
    pid = os.fork()
    if pid == 0:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        from zoffload import capture
        sys.argv = [capture.__file__] + argv
        try:
            code = capture.main(argv)
        except SystemExit as e:  # argparse
            code = e.code
        except BaseException:  # a traceback, as the real process would print it
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        raise SystemExit(code)
    _, status = os.waitpid(pid, 0)
    with open(out) as f:
        text = f.read()
    os.unlink(out)
    return os.waitstatus_to_exitcode(status), text


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--write", action="store_true")
    ap.add_argument("--zofuzz", required=True, help="the zofuzz binary of a zoffload build")
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv-current"))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.zofuzz = os.path.abspath(a.zofuzz)
    models = MODELS
    if a.only:
        want = a.only.split(",")
        unknown = [n for n in want if n not in [m[0] for m in MODELS]]
        if unknown:
            ap.error("--only: unknown model(s) %s (known: %s)" % (", ".join(unknown), ", ".join(m[0] for m in MODELS)))
        models = [m for m in MODELS if m[0] in want]
    if not a.in_venv:
        py, why = venv_ok(a.venv)
        if py is None:
            print("capture_models: SKIP: %s" % why)
            return 77
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TRANSFORMERS_VERBOSITY="error",
                   PYTHONWARNINGS="ignore", HF_HUB_OFFLINE="1")
        sys.stdout.flush()
        return subprocess.run([py, os.path.abspath(__file__), "--in-venv"] + argv, env=env, cwd=ROOT).returncode
    # once, before the forks: what every capture imports
    import torch  # noqa: F401
    import transformers  # noqa: F401
    import transformers.modeling_utils  # noqa: F401  the base of every model class
    import zoffload.capture  # noqa: F401
    bad = 0
    work = tempfile.mkdtemp(prefix="zo-capture-models-")
    t_all = time.time()
    for name, script, build, step, steps, comment in models:
        out = os.path.join(work, name + ".scn") if a.check else os.path.join(ROOT, "corpus", "models", name + ".scn")
        cmd = ["%s:%s" % (os.path.join(ROOT, script), step), "--build", build,
               "--steps", str(steps), "-o", out, "--zofuzz", a.zofuzz, "--comment", comment,
               "--comment", "made by: tools/capture_models.py --write (python -m zoffload.capture %s:%s "
               "--build %s --steps %d)" % (script, step, build, steps)]
        if a.write:
            cmd += ["--expect", "--no-traces"]
        t0 = time.time()
        code, text = forked(cmd, os.path.join(work, name + ".out"), freeze=True)
        dt = time.time() - t0
        if code != 0:
            bad += 1
            print("FAIL %-22s %5.1fs capture failed:\n%s" % (name, dt, text.strip()))
            continue
        if a.check:
            ref = os.path.join(ROOT, "corpus", "models", name + ".scn")
            try:
                with open(ref) as f:
                    want = body(f.read())
            except FileNotFoundError:
                want = None
            with open(out) as f:
                got = body(f.read())
            if want != got:
                bad += 1
                if want is None:
                    print("FAIL %-22s %5.1fs exact, but %s is missing (capture_models.py --write)" % (name, dt, ref))
                else:
                    i = next((k for k in range(max(len(want), len(got)))
                              if k >= len(want) or k >= len(got) or want[k] != got[k]), 0)
                    print("FAIL %-22s %5.1fs exact, but differs from %s at scenario line %d:\n  corpus:  %s\n"
                          "  capture: %s" % (name, dt, os.path.relpath(ref, ROOT), i + 1,
                                             want[i] if i < len(want) else "<end>",
                                             got[i] if i < len(got) else "<end>"))
                continue
        print("ok   %-22s %5.1fs %s" % (name, dt, text.strip().split("; ", 1)[-1]))
    print("capture_models: %d of %d models captured exactly (%.0f s)" % (len(models) - bad, len(models),
                                                                         time.time() - t_all))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
