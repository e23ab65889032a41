#!/usr/bin/env python3
"""A zoffload scenario on real DeepSpeed ZeRO stage 3 (CPU, gloo, world size 1).

Source:     corpus/models/mixtral_moe_ranks.scn
Made by:    zofuzz export corpus/models/mixtral_moe_ranks.scn --to deepspeed
            -o corpus/deepspeed/models-mixtral_moe_ranks.py --rank 0
Simulator:  policy reset-on-forward (DeepSpeed upstream's counters), torch
            2.x, deepspeed 0.19: all invariants hold
            (under the scenario's own policy per-call: all invariants hold)
Run:        pip install torch deepspeed; DS_ACCELERATOR=cpu python models-mixtral_moe_ranks.py
            (--hooks-only: DeepSpeed's bare hooks, deepspeed.initialize without
            an optimizer)
Exit:       1 and a last line "VIOLATION I<n>: ..." when an invariant is
            violated (or "EXCEPTION ..." when torch or DeepSpeed raises), else 0 and
            "no invariant violation on ...".

Checked: I1 ds_grads_remaining never negative; I3 every non-persistent
parameter NOT_AVAILABLE after each backward (engine.backward), eval forward
and optimizer step (DeepSpeed's "expected to be released" error counts);
I4 a module's op only computes with AVAILABLE parameters.

Adapted from the scenario:
- the program of rank 0 of an all-ranks scenario (W=4)
- world size 4 -> 1 (one process)
- numels and finite thresholds divided by 755: 3164688384 elements in all is over
  2^22 (as `zofuzz traces --ds` scales for tools/deepspeed_oracle.py)
"""
import argparse
import contextlib
import io
import os
import sys
import threading
import warnings
import socket
import tempfile

# DeepSpeed on CPU, one process: gloo, world size 1.  Anything DeepSpeed
# JIT-builds goes to a private TORCH_EXTENSIONS_DIR, so a stale lock left in
# the shared cache by an interrupted build cannot block this run.
os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
if "MASTER_PORT" not in os.environ:
    with socket.socket() as _s:
        _s.bind(("127.0.0.1", 0))
        os.environ["MASTER_PORT"] = str(_s.getsockname()[1])
if "TORCH_EXTENSIONS_DIR" not in os.environ:
    os.environ["TORCH_EXTENSIONS_DIR"] = tempfile.mkdtemp(prefix="torch_extensions.")
# LOCAL_SIZE: the CPU accelerator counts devices with numactl otherwise
for _k, _v in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("LOCAL_SIZE", "1")):
    os.environ.setdefault(_k, _v)

import torch  # noqa: E402
import torch.utils.checkpoint as tcheckpoint  # noqa: E402

import logging  # noqa: E402

with contextlib.redirect_stdout(io.StringIO()):
    import deepspeed  # noqa: E402
    import deepspeed.comm.comm as dscomm  # noqa: E402
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus  # noqa: E402
logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
deepspeed.utils.logger.setLevel(logging.ERROR)
VERSIONS = "deepspeed %s, torch %s" % (deepspeed.__version__, torch.__version__.split("+")[0])
VERSIONS_ON = "deepspeed %s / torch %s" % (deepspeed.__version__, torch.__version__.split("+")[0])
STATUS_CHAR = {ZeroParamStatus.NOT_AVAILABLE: "N", ZeroParamStatus.INFLIGHT: "I",
               ZeroParamStatus.AVAILABLE: "A"}

warnings.filterwarnings("ignore")


class Block(torch.nn.Module):
    """One module of the scenario.  Its forward runs the body of the call
    being made (see PROGRAM): the child calls, then its own op."""

    def __init__(self, name, mid):
        super().__init__()
        self.zo_name = name
        self.zo_id = mid
        self.pset = []  # parameters its op reads (own, external/tied, a z3 leaf's subtree)
        self.pending = []  # (execution, call index) of the next forward

    def forward(self, *args, **kwargs):
        x, ci = self.pending.pop()
        # keyword inputs (hook D does not see them) follow the positional ones
        args = args + tuple(kwargs["kw%d" % k] for k in range(len(kwargs)))
        if x.p.calls[ci]["ckpt"].startswith("body-") and torch.is_grad_enabled():
            return RUN.body_checkpoint(x, ci, args)
        return RUN.body(x, ci, args)


# ----------------------------------------------------------------------
# The scenario
# ----------------------------------------------------------------------

# DeepSpeed's stage3_* settings, in elements
THRESHOLDS = {
    "param_persistence_threshold": 132,
    "model_persistence_threshold": 10**15,  # infinite
    "prefetch_bucket_size": 66225,
    "max_live_parameters": 1324503,
    "max_reuse_distance": 1324503,
}


def build_model():
    """The module tree (ids in registration order, as named_modules() lists
    them), then the parameters (registered after every module, in .scn order;
    float32, numel as in the scenario divided by the scaling factor above)."""
    model = Block("lm", 0)  # module 0
    model.m1 = Block("model", 1)  # module 1
    model.m1.embed_tokens = Block("model.embed_tokens", 2)  # module 2
    model.m1.l0 = Block("l0", 3)  # module 3
    model.m1.l0.attn = Block("l0.attn", 4)  # module 4
    model.m1.l0.attn.q_proj = Block("l0.attn.q_proj", 5)  # module 5
    model.m1.l0.attn.k_proj = Block("l0.attn.k_proj", 6)  # module 6
    model.m1.l0.attn.v_proj = Block("l0.attn.v_proj", 7)  # module 7
    model.m1.l0.attn.o_proj = Block("l0.attn.o_proj", 8)  # module 8
    model.m1.l0.moe = Block("l0.moe", 9)  # module 9
    model.m1.l0.moe.gate = Block("l0.moe.gate", 10)  # module 10
    model.m1.l0.moe.e0 = Block("l0.moe.e0", 11)  # module 11
    model.m1.l0.moe.e0.w1 = Block("l0.moe.e0.w1", 12)  # module 12
    model.m1.l0.moe.e0.w2 = Block("l0.moe.e0.w2", 13)  # module 13
    model.m1.l0.moe.e0.w3 = Block("l0.moe.e0.w3", 14)  # module 14
    model.m1.l0.moe.e1 = Block("l0.moe.e1", 15)  # module 15
    model.m1.l0.moe.e1.w1 = Block("l0.moe.e1.w1", 16)  # module 16
    model.m1.l0.moe.e1.w2 = Block("l0.moe.e1.w2", 17)  # module 17
    model.m1.l0.moe.e1.w3 = Block("l0.moe.e1.w3", 18)  # module 18
    model.m1.l0.moe.e2 = Block("l0.moe.e2", 19)  # module 19
    model.m1.l0.moe.e2.w1 = Block("l0.moe.e2.w1", 20)  # module 20
    model.m1.l0.moe.e2.w2 = Block("l0.moe.e2.w2", 21)  # module 21
    model.m1.l0.moe.e2.w3 = Block("l0.moe.e2.w3", 22)  # module 22
    model.m1.l0.moe.e3 = Block("l0.moe.e3", 23)  # module 23
    model.m1.l0.moe.e3.w1 = Block("l0.moe.e3.w1", 24)  # module 24
    model.m1.l0.moe.e3.w2 = Block("l0.moe.e3.w2", 25)  # module 25
    model.m1.l0.moe.e3.w3 = Block("l0.moe.e3.w3", 26)  # module 26
    model.m1.l0.moe.e4 = Block("l0.moe.e4", 27)  # module 27
    model.m1.l0.moe.e4.w1 = Block("l0.moe.e4.w1", 28)  # module 28
    model.m1.l0.moe.e4.w2 = Block("l0.moe.e4.w2", 29)  # module 29
    model.m1.l0.moe.e4.w3 = Block("l0.moe.e4.w3", 30)  # module 30
    model.m1.l0.moe.e5 = Block("l0.moe.e5", 31)  # module 31
    model.m1.l0.moe.e5.w1 = Block("l0.moe.e5.w1", 32)  # module 32
    model.m1.l0.moe.e5.w2 = Block("l0.moe.e5.w2", 33)  # module 33
    model.m1.l0.moe.e5.w3 = Block("l0.moe.e5.w3", 34)  # module 34
    model.m1.l0.moe.e6 = Block("l0.moe.e6", 35)  # module 35
    model.m1.l0.moe.e6.w1 = Block("l0.moe.e6.w1", 36)  # module 36
    model.m1.l0.moe.e6.w2 = Block("l0.moe.e6.w2", 37)  # module 37
    model.m1.l0.moe.e6.w3 = Block("l0.moe.e6.w3", 38)  # module 38
    model.m1.l0.moe.e7 = Block("l0.moe.e7", 39)  # module 39
    model.m1.l0.moe.e7.w1 = Block("l0.moe.e7.w1", 40)  # module 40
    model.m1.l0.moe.e7.w2 = Block("l0.moe.e7.w2", 41)  # module 41
    model.m1.l0.moe.e7.w3 = Block("l0.moe.e7.w3", 42)  # module 42
    model.m1.l0.in_ln = Block("l0.in_ln", 43)  # module 43
    model.m1.l0.post_ln = Block("l0.post_ln", 44)  # module 44
    model.m1.l1 = Block("l1", 45)  # module 45
    model.m1.l1.attn = Block("l1.attn", 46)  # module 46
    model.m1.l1.attn.q_proj = Block("l1.attn.q_proj", 47)  # module 47
    model.m1.l1.attn.k_proj = Block("l1.attn.k_proj", 48)  # module 48
    model.m1.l1.attn.v_proj = Block("l1.attn.v_proj", 49)  # module 49
    model.m1.l1.attn.o_proj = Block("l1.attn.o_proj", 50)  # module 50
    model.m1.l1.moe = Block("l1.moe", 51)  # module 51
    model.m1.l1.moe.gate = Block("l1.moe.gate", 52)  # module 52
    model.m1.l1.moe.e0 = Block("l1.moe.e0", 53)  # module 53
    model.m1.l1.moe.e0.w1 = Block("l1.moe.e0.w1", 54)  # module 54
    model.m1.l1.moe.e0.w2 = Block("l1.moe.e0.w2", 55)  # module 55
    model.m1.l1.moe.e0.w3 = Block("l1.moe.e0.w3", 56)  # module 56
    model.m1.l1.moe.e1 = Block("l1.moe.e1", 57)  # module 57
    model.m1.l1.moe.e1.w1 = Block("l1.moe.e1.w1", 58)  # module 58
    model.m1.l1.moe.e1.w2 = Block("l1.moe.e1.w2", 59)  # module 59
    model.m1.l1.moe.e1.w3 = Block("l1.moe.e1.w3", 60)  # module 60
    model.m1.l1.moe.e2 = Block("l1.moe.e2", 61)  # module 61
    model.m1.l1.moe.e2.w1 = Block("l1.moe.e2.w1", 62)  # module 62
    model.m1.l1.moe.e2.w2 = Block("l1.moe.e2.w2", 63)  # module 63
    model.m1.l1.moe.e2.w3 = Block("l1.moe.e2.w3", 64)  # module 64
    model.m1.l1.moe.e3 = Block("l1.moe.e3", 65)  # module 65
    model.m1.l1.moe.e3.w1 = Block("l1.moe.e3.w1", 66)  # module 66
    model.m1.l1.moe.e3.w2 = Block("l1.moe.e3.w2", 67)  # module 67
    model.m1.l1.moe.e3.w3 = Block("l1.moe.e3.w3", 68)  # module 68
    model.m1.l1.moe.e4 = Block("l1.moe.e4", 69)  # module 69
    model.m1.l1.moe.e4.w1 = Block("l1.moe.e4.w1", 70)  # module 70
    model.m1.l1.moe.e4.w2 = Block("l1.moe.e4.w2", 71)  # module 71
    model.m1.l1.moe.e4.w3 = Block("l1.moe.e4.w3", 72)  # module 72
    model.m1.l1.moe.e5 = Block("l1.moe.e5", 73)  # module 73
    model.m1.l1.moe.e5.w1 = Block("l1.moe.e5.w1", 74)  # module 74
    model.m1.l1.moe.e5.w2 = Block("l1.moe.e5.w2", 75)  # module 75
    model.m1.l1.moe.e5.w3 = Block("l1.moe.e5.w3", 76)  # module 76
    model.m1.l1.moe.e6 = Block("l1.moe.e6", 77)  # module 77
    model.m1.l1.moe.e6.w1 = Block("l1.moe.e6.w1", 78)  # module 78
    model.m1.l1.moe.e6.w2 = Block("l1.moe.e6.w2", 79)  # module 79
    model.m1.l1.moe.e6.w3 = Block("l1.moe.e6.w3", 80)  # module 80
    model.m1.l1.moe.e7 = Block("l1.moe.e7", 81)  # module 81
    model.m1.l1.moe.e7.w1 = Block("l1.moe.e7.w1", 82)  # module 82
    model.m1.l1.moe.e7.w2 = Block("l1.moe.e7.w2", 83)  # module 83
    model.m1.l1.moe.e7.w3 = Block("l1.moe.e7.w3", 84)  # module 84
    model.m1.l1.in_ln = Block("l1.in_ln", 85)  # module 85
    model.m1.l1.post_ln = Block("l1.post_ln", 86)  # module 86
    model.m1.norm = Block("model.norm", 87)  # module 87
    model.lm_head = Block("lm_head", 88)  # module 88
    model.m1.embed_tokens.w = torch.nn.Parameter(torch.zeros(173605))  # param 0 model.embed_tokens.w
    model.m1.l0.attn.q_proj.w = torch.nn.Parameter(torch.zeros(22221))  # param 1 l0.attn.q_proj.w
    model.m1.l0.attn.k_proj.w = torch.nn.Parameter(torch.zeros(5555))  # param 2 l0.attn.k_proj.w
    model.m1.l0.attn.v_proj.w = torch.nn.Parameter(torch.zeros(5555))  # param 3 l0.attn.v_proj.w
    model.m1.l0.attn.o_proj.w = torch.nn.Parameter(torch.zeros(22221))  # param 4 l0.attn.o_proj.w
    model.m1.l0.moe.gate.w = torch.nn.Parameter(torch.zeros(43))  # param 5 l0.moe.gate.w
    model.m1.l0.moe.e0.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 6 l0.moe.e0.w1.w
    model.m1.l0.moe.e0.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 7 l0.moe.e0.w2.w
    model.m1.l0.moe.e0.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 8 l0.moe.e0.w3.w
    model.m1.l0.moe.e1.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 9 l0.moe.e1.w1.w
    model.m1.l0.moe.e1.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 10 l0.moe.e1.w2.w
    model.m1.l0.moe.e1.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 11 l0.moe.e1.w3.w
    model.m1.l0.moe.e2.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 12 l0.moe.e2.w1.w
    model.m1.l0.moe.e2.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 13 l0.moe.e2.w2.w
    model.m1.l0.moe.e2.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 14 l0.moe.e2.w3.w
    model.m1.l0.moe.e3.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 15 l0.moe.e3.w1.w
    model.m1.l0.moe.e3.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 16 l0.moe.e3.w2.w
    model.m1.l0.moe.e3.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 17 l0.moe.e3.w3.w
    model.m1.l0.moe.e4.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 18 l0.moe.e4.w1.w
    model.m1.l0.moe.e4.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 19 l0.moe.e4.w2.w
    model.m1.l0.moe.e4.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 20 l0.moe.e4.w3.w
    model.m1.l0.moe.e5.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 21 l0.moe.e5.w1.w
    model.m1.l0.moe.e5.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 22 l0.moe.e5.w2.w
    model.m1.l0.moe.e5.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 23 l0.moe.e5.w3.w
    model.m1.l0.moe.e6.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 24 l0.moe.e6.w1.w
    model.m1.l0.moe.e6.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 25 l0.moe.e6.w2.w
    model.m1.l0.moe.e6.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 26 l0.moe.e6.w3.w
    model.m1.l0.moe.e7.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 27 l0.moe.e7.w1.w
    model.m1.l0.moe.e7.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 28 l0.moe.e7.w2.w
    model.m1.l0.moe.e7.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 29 l0.moe.e7.w3.w
    model.m1.l0.in_ln.w = torch.nn.Parameter(torch.zeros(5))  # param 30 l0.in_ln.w
    model.m1.l0.post_ln.w = torch.nn.Parameter(torch.zeros(5))  # param 31 l0.post_ln.w
    model.m1.l1.attn.q_proj.w = torch.nn.Parameter(torch.zeros(22221))  # param 32 l1.attn.q_proj.w
    model.m1.l1.attn.k_proj.w = torch.nn.Parameter(torch.zeros(5555))  # param 33 l1.attn.k_proj.w
    model.m1.l1.attn.v_proj.w = torch.nn.Parameter(torch.zeros(5555))  # param 34 l1.attn.v_proj.w
    model.m1.l1.attn.o_proj.w = torch.nn.Parameter(torch.zeros(22221))  # param 35 l1.attn.o_proj.w
    model.m1.l1.moe.gate.w = torch.nn.Parameter(torch.zeros(43))  # param 36 l1.moe.gate.w
    model.m1.l1.moe.e0.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 37 l1.moe.e0.w1.w
    model.m1.l1.moe.e0.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 38 l1.moe.e0.w2.w
    model.m1.l1.moe.e0.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 39 l1.moe.e0.w3.w
    model.m1.l1.moe.e1.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 40 l1.moe.e1.w1.w
    model.m1.l1.moe.e1.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 41 l1.moe.e1.w2.w
    model.m1.l1.moe.e1.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 42 l1.moe.e1.w3.w
    model.m1.l1.moe.e2.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 43 l1.moe.e2.w1.w
    model.m1.l1.moe.e2.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 44 l1.moe.e2.w2.w
    model.m1.l1.moe.e2.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 45 l1.moe.e2.w3.w
    model.m1.l1.moe.e3.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 46 l1.moe.e3.w1.w
    model.m1.l1.moe.e3.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 47 l1.moe.e3.w2.w
    model.m1.l1.moe.e3.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 48 l1.moe.e3.w3.w
    model.m1.l1.moe.e4.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 49 l1.moe.e4.w1.w
    model.m1.l1.moe.e4.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 50 l1.moe.e4.w2.w
    model.m1.l1.moe.e4.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 51 l1.moe.e4.w3.w
    model.m1.l1.moe.e5.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 52 l1.moe.e5.w1.w
    model.m1.l1.moe.e5.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 53 l1.moe.e5.w2.w
    model.m1.l1.moe.e5.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 54 l1.moe.e5.w3.w
    model.m1.l1.moe.e6.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 55 l1.moe.e6.w1.w
    model.m1.l1.moe.e6.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 56 l1.moe.e6.w2.w
    model.m1.l1.moe.e6.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 57 l1.moe.e6.w3.w
    model.m1.l1.moe.e7.w1.w = torch.nn.Parameter(torch.zeros(77775))  # param 58 l1.moe.e7.w1.w
    model.m1.l1.moe.e7.w2.w = torch.nn.Parameter(torch.zeros(77775))  # param 59 l1.moe.e7.w2.w
    model.m1.l1.moe.e7.w3.w = torch.nn.Parameter(torch.zeros(77775))  # param 60 l1.moe.e7.w3.w
    model.m1.l1.in_ln.w = torch.nn.Parameter(torch.zeros(5))  # param 61 l1.in_ln.w
    model.m1.l1.post_ln.w = torch.nn.Parameter(torch.zeros(5))  # param 62 l1.post_ln.w
    model.m1.norm.w = torch.nn.Parameter(torch.zeros(5))  # param 63 model.norm.w
    model.lm_head.w = torch.nn.Parameter(torch.zeros(173605))  # param 64 lm_head.w
    modules = [model, model.m1, model.m1.embed_tokens, model.m1.l0, model.m1.l0.attn, model.m1.l0.attn.q_proj, model.m1.l0.attn.k_proj, model.m1.l0.attn.v_proj, model.m1.l0.attn.o_proj, model.m1.l0.moe, model.m1.l0.moe.gate, model.m1.l0.moe.e0, model.m1.l0.moe.e0.w1, model.m1.l0.moe.e0.w2, model.m1.l0.moe.e0.w3, model.m1.l0.moe.e1, model.m1.l0.moe.e1.w1, model.m1.l0.moe.e1.w2, model.m1.l0.moe.e1.w3, model.m1.l0.moe.e2, model.m1.l0.moe.e2.w1, model.m1.l0.moe.e2.w2, model.m1.l0.moe.e2.w3, model.m1.l0.moe.e3, model.m1.l0.moe.e3.w1, model.m1.l0.moe.e3.w2, model.m1.l0.moe.e3.w3, model.m1.l0.moe.e4, model.m1.l0.moe.e4.w1, model.m1.l0.moe.e4.w2, model.m1.l0.moe.e4.w3, model.m1.l0.moe.e5, model.m1.l0.moe.e5.w1, model.m1.l0.moe.e5.w2, model.m1.l0.moe.e5.w3, model.m1.l0.moe.e6, model.m1.l0.moe.e6.w1, model.m1.l0.moe.e6.w2, model.m1.l0.moe.e6.w3, model.m1.l0.moe.e7, model.m1.l0.moe.e7.w1, model.m1.l0.moe.e7.w2, model.m1.l0.moe.e7.w3, model.m1.l0.in_ln, model.m1.l0.post_ln, model.m1.l1, model.m1.l1.attn, model.m1.l1.attn.q_proj, model.m1.l1.attn.k_proj, model.m1.l1.attn.v_proj, model.m1.l1.attn.o_proj, model.m1.l1.moe, model.m1.l1.moe.gate, model.m1.l1.moe.e0, model.m1.l1.moe.e0.w1, model.m1.l1.moe.e0.w2, model.m1.l1.moe.e0.w3, model.m1.l1.moe.e1, model.m1.l1.moe.e1.w1, model.m1.l1.moe.e1.w2, model.m1.l1.moe.e1.w3, model.m1.l1.moe.e2, model.m1.l1.moe.e2.w1, model.m1.l1.moe.e2.w2, model.m1.l1.moe.e2.w3, model.m1.l1.moe.e3, model.m1.l1.moe.e3.w1, model.m1.l1.moe.e3.w2, model.m1.l1.moe.e3.w3, model.m1.l1.moe.e4, model.m1.l1.moe.e4.w1, model.m1.l1.moe.e4.w2, model.m1.l1.moe.e4.w3, model.m1.l1.moe.e5, model.m1.l1.moe.e5.w1, model.m1.l1.moe.e5.w2, model.m1.l1.moe.e5.w3, model.m1.l1.moe.e6, model.m1.l1.moe.e6.w1, model.m1.l1.moe.e6.w2, model.m1.l1.moe.e6.w3, model.m1.l1.moe.e7, model.m1.l1.moe.e7.w1, model.m1.l1.moe.e7.w2, model.m1.l1.moe.e7.w3, model.m1.l1.in_ln, model.m1.l1.post_ln, model.m1.norm, model.lm_head]
    params = [model.m1.embed_tokens.w, model.m1.l0.attn.q_proj.w, model.m1.l0.attn.k_proj.w, model.m1.l0.attn.v_proj.w, model.m1.l0.attn.o_proj.w, model.m1.l0.moe.gate.w, model.m1.l0.moe.e0.w1.w, model.m1.l0.moe.e0.w2.w, model.m1.l0.moe.e0.w3.w, model.m1.l0.moe.e1.w1.w, model.m1.l0.moe.e1.w2.w, model.m1.l0.moe.e1.w3.w, model.m1.l0.moe.e2.w1.w, model.m1.l0.moe.e2.w2.w, model.m1.l0.moe.e2.w3.w, model.m1.l0.moe.e3.w1.w, model.m1.l0.moe.e3.w2.w, model.m1.l0.moe.e3.w3.w, model.m1.l0.moe.e4.w1.w, model.m1.l0.moe.e4.w2.w, model.m1.l0.moe.e4.w3.w, model.m1.l0.moe.e5.w1.w, model.m1.l0.moe.e5.w2.w, model.m1.l0.moe.e5.w3.w, model.m1.l0.moe.e6.w1.w, model.m1.l0.moe.e6.w2.w, model.m1.l0.moe.e6.w3.w, model.m1.l0.moe.e7.w1.w, model.m1.l0.moe.e7.w2.w, model.m1.l0.moe.e7.w3.w, model.m1.l0.in_ln.w, model.m1.l0.post_ln.w, model.m1.l1.attn.q_proj.w, model.m1.l1.attn.k_proj.w, model.m1.l1.attn.v_proj.w, model.m1.l1.attn.o_proj.w, model.m1.l1.moe.gate.w, model.m1.l1.moe.e0.w1.w, model.m1.l1.moe.e0.w2.w, model.m1.l1.moe.e0.w3.w, model.m1.l1.moe.e1.w1.w, model.m1.l1.moe.e1.w2.w, model.m1.l1.moe.e1.w3.w, model.m1.l1.moe.e2.w1.w, model.m1.l1.moe.e2.w2.w, model.m1.l1.moe.e2.w3.w, model.m1.l1.moe.e3.w1.w, model.m1.l1.moe.e3.w2.w, model.m1.l1.moe.e3.w3.w, model.m1.l1.moe.e4.w1.w, model.m1.l1.moe.e4.w2.w, model.m1.l1.moe.e4.w3.w, model.m1.l1.moe.e5.w1.w, model.m1.l1.moe.e5.w2.w, model.m1.l1.moe.e5.w3.w, model.m1.l1.moe.e6.w1.w, model.m1.l1.moe.e6.w2.w, model.m1.l1.moe.e6.w3.w, model.m1.l1.moe.e7.w1.w, model.m1.l1.moe.e7.w2.w, model.m1.l1.moe.e7.w3.w, model.m1.l1.in_ln.w, model.m1.l1.post_ln.w, model.m1.norm.w, model.lm_head.w]
    return modules, params


MODULE_IDS = {"lm": 0, "model": 1, "model.embed_tokens": 2, "l0": 3, "l0.attn": 4, "l0.attn.q_proj": 5, "l0.attn.k_proj": 6, "l0.attn.v_proj": 7, "l0.attn.o_proj": 8, "l0.moe": 9, "l0.moe.gate": 10, "l0.moe.e0": 11, "l0.moe.e0.w1": 12, "l0.moe.e0.w2": 13, "l0.moe.e0.w3": 14, "l0.moe.e1": 15, "l0.moe.e1.w1": 16, "l0.moe.e1.w2": 17, "l0.moe.e1.w3": 18, "l0.moe.e2": 19, "l0.moe.e2.w1": 20, "l0.moe.e2.w2": 21, "l0.moe.e2.w3": 22, "l0.moe.e3": 23, "l0.moe.e3.w1": 24, "l0.moe.e3.w2": 25, "l0.moe.e3.w3": 26, "l0.moe.e4": 27, "l0.moe.e4.w1": 28, "l0.moe.e4.w2": 29, "l0.moe.e4.w3": 30, "l0.moe.e5": 31, "l0.moe.e5.w1": 32, "l0.moe.e5.w2": 33, "l0.moe.e5.w3": 34, "l0.moe.e6": 35, "l0.moe.e6.w1": 36, "l0.moe.e6.w2": 37, "l0.moe.e6.w3": 38, "l0.moe.e7": 39, "l0.moe.e7.w1": 40, "l0.moe.e7.w2": 41, "l0.moe.e7.w3": 42, "l0.in_ln": 43, "l0.post_ln": 44, "l1": 45, "l1.attn": 46, "l1.attn.q_proj": 47, "l1.attn.k_proj": 48, "l1.attn.v_proj": 49, "l1.attn.o_proj": 50, "l1.moe": 51, "l1.moe.gate": 52, "l1.moe.e0": 53, "l1.moe.e0.w1": 54, "l1.moe.e0.w2": 55, "l1.moe.e0.w3": 56, "l1.moe.e1": 57, "l1.moe.e1.w1": 58, "l1.moe.e1.w2": 59, "l1.moe.e1.w3": 60, "l1.moe.e2": 61, "l1.moe.e2.w1": 62, "l1.moe.e2.w2": 63, "l1.moe.e2.w3": 64, "l1.moe.e3": 65, "l1.moe.e3.w1": 66, "l1.moe.e3.w2": 67, "l1.moe.e3.w3": 68, "l1.moe.e4": 69, "l1.moe.e4.w1": 70, "l1.moe.e4.w2": 71, "l1.moe.e4.w3": 72, "l1.moe.e5": 73, "l1.moe.e5.w1": 74, "l1.moe.e5.w2": 75, "l1.moe.e5.w3": 76, "l1.moe.e6": 77, "l1.moe.e6.w1": 78, "l1.moe.e6.w2": 79, "l1.moe.e6.w3": 80, "l1.moe.e7": 81, "l1.moe.e7.w1": 82, "l1.moe.e7.w2": 83, "l1.moe.e7.w3": 84, "l1.in_ln": 85, "l1.post_ln": 86, "model.norm": 87, "lm_head": 88}
PARAM_NAMES = ["model.embed_tokens.w", "l0.attn.q_proj.w", "l0.attn.k_proj.w", "l0.attn.v_proj.w", "l0.attn.o_proj.w", "l0.moe.gate.w", "l0.moe.e0.w1.w", "l0.moe.e0.w2.w", "l0.moe.e0.w3.w", "l0.moe.e1.w1.w", "l0.moe.e1.w2.w", "l0.moe.e1.w3.w", "l0.moe.e2.w1.w", "l0.moe.e2.w2.w", "l0.moe.e2.w3.w", "l0.moe.e3.w1.w", "l0.moe.e3.w2.w", "l0.moe.e3.w3.w", "l0.moe.e4.w1.w", "l0.moe.e4.w2.w", "l0.moe.e4.w3.w", "l0.moe.e5.w1.w", "l0.moe.e5.w2.w", "l0.moe.e5.w3.w", "l0.moe.e6.w1.w", "l0.moe.e6.w2.w", "l0.moe.e6.w3.w", "l0.moe.e7.w1.w", "l0.moe.e7.w2.w", "l0.moe.e7.w3.w", "l0.in_ln.w", "l0.post_ln.w", "l1.attn.q_proj.w", "l1.attn.k_proj.w", "l1.attn.v_proj.w", "l1.attn.o_proj.w", "l1.moe.gate.w", "l1.moe.e0.w1.w", "l1.moe.e0.w2.w", "l1.moe.e0.w3.w", "l1.moe.e1.w1.w", "l1.moe.e1.w2.w", "l1.moe.e1.w3.w", "l1.moe.e2.w1.w", "l1.moe.e2.w2.w", "l1.moe.e2.w3.w", "l1.moe.e3.w1.w", "l1.moe.e3.w2.w", "l1.moe.e3.w3.w", "l1.moe.e4.w1.w", "l1.moe.e4.w2.w", "l1.moe.e4.w3.w", "l1.moe.e5.w1.w", "l1.moe.e5.w2.w", "l1.moe.e5.w3.w", "l1.moe.e6.w1.w", "l1.moe.e6.w2.w", "l1.moe.e6.w3.w", "l1.moe.e7.w1.w", "l1.moe.e7.w2.w", "l1.moe.e7.w3.w", "l1.in_ln.w", "l1.post_ln.w", "model.norm.w", "lm_head.w"]
# z3 leaf modules (deepspeed.utils.set_z3_leaf_modules): fetch their whole
# subtree at once; the modules inside get no hooks
Z3_LEAF = []
# tied / external parameter uses (module, param): the module's op also reads
# the parameter; deepspeed.zero.register_external_parameter(module, param)
EXTERNAL = []

# The program: per step, its passes (micro-batches); per pass, the root outputs
# summed into the loss and the module calls in the order their pre-forward
# hooks fire.  A call's body makes the calls whose caller it is, in order, then
# runs the module's own op.  A row:
#   (call, caller, module, inputs, n_out, op_uses, flags)
#   inputs   module(*inputs), references in the caller's scope
#   op_uses  tensors the module's op consumes (with its parameters), in the
#            call's own scope; the op makes n_out outputs
#   refs     batch (requires_grad=False), batch_rg (a leaf, requires_grad=True),
#            argI (input I of the enclosing call as hook D wrapped it),
#            outK.J (output J of the K-th child call of the enclosing call),
#            REF.detach (x.detach()),
#            outK.J.raw (that output as the module made it, cached on self:
#              read by the caller, it bypasses the module's output hook C)
#            paramP (in a "+" term: the caller's op reads parameter P itself)
#   flags    no_grad: the caller makes the call under torch.no_grad()
#            nograd=J: output J never requires grad (detached / integer indices)
#            aliasJ=REF: output J is REF itself (returned as is, no op)
#            nosave: the op saves no tensor (no checkpoint recompute from it)
#            ckpt=reentrant / ckpt=non-reentrant: the caller makes it as
#              torch.utils.checkpoint.checkpoint(module, *inputs, use_reentrant=...)
#            ckpt=body-reentrant / ckpt=body-non-reentrant: the module's forward
#              runs its body as checkpoint(body, *inputs, use_reentrant=...), its
#              hooks outside the region (transformers' gradient_checkpointing_enable)
#            raise=upK: the forward raises after its child calls; the body of
#              the K-th enclosing call catches it and goes on
#            raise=outside: the training loop catches it (no backward)
# Step kinds: train (forward, backward, step), eval (forward under no_grad,
# eval mode), retain (backward(retain_graph=True), backward, step), accum
# (forward+backward per pass, one step), interleave (all forwards, then all
# backwards, one step).
STEPS = [
    ("train", [  # step 0
        dict(loss=[0], calls=[  # pass 0
            (0, None, "lm", ["batch"], 1, ["out1.0"], []),
              (1, 0, "model", ["arg0"], 1, ["out3.0"], []),
                (2, 1, "model.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "l0", ["out0.0"], 1, ["out3.0", "out1.0", "arg0"], []),
                  (4, 3, "l0.in_ln", ["arg0"], 1, ["arg0"], []),
                  (5, 3, "l0.attn", ["out0.0"], 1, ["out3.0", "out0.0", "out1.0"], []),
                    (6, 5, "l0.attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (7, 5, "l0.attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (8, 5, "l0.attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (9, 5, "l0.attn.o_proj", ["out2.0"], 1, ["arg0"], []),
                  (10, 3, "l0.post_ln", ["out1.0"], 1, ["arg0"], []),
                  (11, 3, "l0.moe", ["out2.0"], 2, ["out1.0", "out2.0", "out3.0", "out4.0", "out0.0"], []),
                    (12, 11, "l0.moe.gate", ["arg0"], 1, ["arg0"], []),
                    (13, 11, "l0.moe.e0", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (14, 13, "l0.moe.e0.w1", ["arg0"], 1, ["arg0"], []),
                      (15, 13, "l0.moe.e0.w3", ["arg0"], 1, ["arg0"], []),
                      (16, 13, "l0.moe.e0.w2", ["out0.0"], 1, ["arg0"], []),
                    (17, 11, "l0.moe.e1", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (18, 17, "l0.moe.e1.w1", ["arg0"], 1, ["arg0"], []),
                      (19, 17, "l0.moe.e1.w3", ["arg0"], 1, ["arg0"], []),
                      (20, 17, "l0.moe.e1.w2", ["out0.0"], 1, ["arg0"], []),
                    (21, 11, "l0.moe.e5", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (22, 21, "l0.moe.e5.w1", ["arg0"], 1, ["arg0"], []),
                      (23, 21, "l0.moe.e5.w3", ["arg0"], 1, ["arg0"], []),
                      (24, 21, "l0.moe.e5.w2", ["out0.0"], 1, ["arg0"], []),
                    (25, 11, "l0.moe.e6", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (26, 25, "l0.moe.e6.w1", ["arg0"], 1, ["arg0"], []),
                      (27, 25, "l0.moe.e6.w3", ["arg0"], 1, ["arg0"], []),
                      (28, 25, "l0.moe.e6.w2", ["out0.0"], 1, ["arg0"], []),
                (29, 1, "l1", ["out1.0"], 1, ["out3.0", "out1.0", "arg0"], []),
                  (30, 29, "l1.in_ln", ["arg0"], 1, ["arg0"], []),
                  (31, 29, "l1.attn", ["out0.0"], 1, ["out3.0", "out0.0", "out1.0"], []),
                    (32, 31, "l1.attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "l1.attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (34, 31, "l1.attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (35, 31, "l1.attn.o_proj", ["out2.0"], 1, ["arg0"], []),
                  (36, 29, "l1.post_ln", ["out1.0"], 1, ["arg0"], []),
                  (37, 29, "l1.moe", ["out2.0"], 2, ["out1.0", "out2.0", "out3.0", "out4.0", "out0.0"], []),
                    (38, 37, "l1.moe.gate", ["arg0"], 1, ["arg0"], []),
                    (39, 37, "l1.moe.e0", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (40, 39, "l1.moe.e0.w1", ["arg0"], 1, ["arg0"], []),
                      (41, 39, "l1.moe.e0.w3", ["arg0"], 1, ["arg0"], []),
                      (42, 39, "l1.moe.e0.w2", ["out0.0"], 1, ["arg0"], []),
                    (43, 37, "l1.moe.e2", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (44, 43, "l1.moe.e2.w1", ["arg0"], 1, ["arg0"], []),
                      (45, 43, "l1.moe.e2.w3", ["arg0"], 1, ["arg0"], []),
                      (46, 43, "l1.moe.e2.w2", ["out0.0"], 1, ["arg0"], []),
                    (47, 37, "l1.moe.e3", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (48, 47, "l1.moe.e3.w1", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l1.moe.e3.w3", ["arg0"], 1, ["arg0"], []),
                      (50, 47, "l1.moe.e3.w2", ["out0.0"], 1, ["arg0"], []),
                    (51, 37, "l1.moe.e6", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (52, 51, "l1.moe.e6.w1", ["arg0"], 1, ["arg0"], []),
                      (53, 51, "l1.moe.e6.w3", ["arg0"], 1, ["arg0"], []),
                      (54, 51, "l1.moe.e6.w2", ["out0.0"], 1, ["arg0"], []),
                (55, 1, "model.norm", ["out2.0"], 1, ["arg0"], []),
              (56, 0, "lm_head", ["out0.0"], 1, ["arg0"], []),
        ]),
    ]),
    ("train", [  # step 1
        dict(loss=[0], calls=[  # pass 0
            (0, None, "lm", ["batch"], 1, ["out1.0"], []),
              (1, 0, "model", ["arg0"], 1, ["out3.0"], []),
                (2, 1, "model.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "l0", ["out0.0"], 1, ["out3.0", "out1.0", "arg0"], []),
                  (4, 3, "l0.in_ln", ["arg0"], 1, ["arg0"], []),
                  (5, 3, "l0.attn", ["out0.0"], 1, ["out3.0", "out0.0", "out1.0"], []),
                    (6, 5, "l0.attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (7, 5, "l0.attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (8, 5, "l0.attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (9, 5, "l0.attn.o_proj", ["out2.0"], 1, ["arg0"], []),
                  (10, 3, "l0.post_ln", ["out1.0"], 1, ["arg0"], []),
                  (11, 3, "l0.moe", ["out2.0"], 2, ["out1.0", "out2.0", "out3.0", "out4.0", "out0.0"], []),
                    (12, 11, "l0.moe.gate", ["arg0"], 1, ["arg0"], []),
                    (13, 11, "l0.moe.e2", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (14, 13, "l0.moe.e2.w1", ["arg0"], 1, ["arg0"], []),
                      (15, 13, "l0.moe.e2.w3", ["arg0"], 1, ["arg0"], []),
                      (16, 13, "l0.moe.e2.w2", ["out0.0"], 1, ["arg0"], []),
                    (17, 11, "l0.moe.e4", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (18, 17, "l0.moe.e4.w1", ["arg0"], 1, ["arg0"], []),
                      (19, 17, "l0.moe.e4.w3", ["arg0"], 1, ["arg0"], []),
                      (20, 17, "l0.moe.e4.w2", ["out0.0"], 1, ["arg0"], []),
                    (21, 11, "l0.moe.e5", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (22, 21, "l0.moe.e5.w1", ["arg0"], 1, ["arg0"], []),
                      (23, 21, "l0.moe.e5.w3", ["arg0"], 1, ["arg0"], []),
                      (24, 21, "l0.moe.e5.w2", ["out0.0"], 1, ["arg0"], []),
                    (25, 11, "l0.moe.e7", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (26, 25, "l0.moe.e7.w1", ["arg0"], 1, ["arg0"], []),
                      (27, 25, "l0.moe.e7.w3", ["arg0"], 1, ["arg0"], []),
                      (28, 25, "l0.moe.e7.w2", ["out0.0"], 1, ["arg0"], []),
                (29, 1, "l1", ["out1.0"], 1, ["out3.0", "out1.0", "arg0"], []),
                  (30, 29, "l1.in_ln", ["arg0"], 1, ["arg0"], []),
                  (31, 29, "l1.attn", ["out0.0"], 1, ["out3.0", "out0.0", "out1.0"], []),
                    (32, 31, "l1.attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "l1.attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (34, 31, "l1.attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (35, 31, "l1.attn.o_proj", ["out2.0"], 1, ["arg0"], []),
                  (36, 29, "l1.post_ln", ["out1.0"], 1, ["arg0"], []),
                  (37, 29, "l1.moe", ["out2.0"], 2, ["out1.0", "out2.0", "out3.0", "out0.0"], []),
                    (38, 37, "l1.moe.gate", ["arg0"], 1, ["arg0"], []),
                    (39, 37, "l1.moe.e0", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (40, 39, "l1.moe.e0.w1", ["arg0"], 1, ["arg0"], []),
                      (41, 39, "l1.moe.e0.w3", ["arg0"], 1, ["arg0"], []),
                      (42, 39, "l1.moe.e0.w2", ["out0.0"], 1, ["arg0"], []),
                    (43, 37, "l1.moe.e3", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (44, 43, "l1.moe.e3.w1", ["arg0"], 1, ["arg0"], []),
                      (45, 43, "l1.moe.e3.w3", ["arg0"], 1, ["arg0"], []),
                      (46, 43, "l1.moe.e3.w2", ["out0.0"], 1, ["arg0"], []),
                    (47, 37, "l1.moe.e7", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (48, 47, "l1.moe.e7.w1", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l1.moe.e7.w3", ["arg0"], 1, ["arg0"], []),
                      (50, 47, "l1.moe.e7.w2", ["out0.0"], 1, ["arg0"], []),
                (51, 1, "model.norm", ["out2.0"], 1, ["arg0"], []),
              (52, 0, "lm_head", ["out0.0"], 1, ["arg0"], []),
        ]),
    ]),
    ("eval", [  # step 2
        dict(loss=[], calls=[  # pass 0
            (0, None, "lm", ["batch"], 1, ["out1.0"], []),
              (1, 0, "model", ["arg0"], 1, ["out3.0"], []),
                (2, 1, "model.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "l0", ["out0.0"], 1, ["out3.0", "out1.0", "arg0"], []),
                  (4, 3, "l0.in_ln", ["arg0"], 1, ["arg0"], []),
                  (5, 3, "l0.attn", ["out0.0"], 1, ["out3.0", "out0.0", "out1.0"], []),
                    (6, 5, "l0.attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (7, 5, "l0.attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (8, 5, "l0.attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (9, 5, "l0.attn.o_proj", ["out2.0"], 1, ["arg0"], []),
                  (10, 3, "l0.post_ln", ["out1.0"], 1, ["arg0"], []),
                  (11, 3, "l0.moe", ["out2.0"], 2, ["out1.0", "out2.0", "out3.0", "out4.0", "out0.0"], []),
                    (12, 11, "l0.moe.gate", ["arg0"], 1, ["arg0"], []),
                    (13, 11, "l0.moe.e0", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (14, 13, "l0.moe.e0.w1", ["arg0"], 1, ["arg0"], []),
                      (15, 13, "l0.moe.e0.w3", ["arg0"], 1, ["arg0"], []),
                      (16, 13, "l0.moe.e0.w2", ["out0.0"], 1, ["arg0"], []),
                    (17, 11, "l0.moe.e2", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (18, 17, "l0.moe.e2.w1", ["arg0"], 1, ["arg0"], []),
                      (19, 17, "l0.moe.e2.w3", ["arg0"], 1, ["arg0"], []),
                      (20, 17, "l0.moe.e2.w2", ["out0.0"], 1, ["arg0"], []),
                    (21, 11, "l0.moe.e4", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (22, 21, "l0.moe.e4.w1", ["arg0"], 1, ["arg0"], []),
                      (23, 21, "l0.moe.e4.w3", ["arg0"], 1, ["arg0"], []),
                      (24, 21, "l0.moe.e4.w2", ["out0.0"], 1, ["arg0"], []),
                    (25, 11, "l0.moe.e7", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (26, 25, "l0.moe.e7.w1", ["arg0"], 1, ["arg0"], []),
                      (27, 25, "l0.moe.e7.w3", ["arg0"], 1, ["arg0"], []),
                      (28, 25, "l0.moe.e7.w2", ["out0.0"], 1, ["arg0"], []),
                (29, 1, "l1", ["out1.0"], 1, ["out3.0", "out1.0", "arg0"], []),
                  (30, 29, "l1.in_ln", ["arg0"], 1, ["arg0"], []),
                  (31, 29, "l1.attn", ["out0.0"], 1, ["out3.0", "out0.0", "out1.0"], []),
                    (32, 31, "l1.attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "l1.attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (34, 31, "l1.attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (35, 31, "l1.attn.o_proj", ["out2.0"], 1, ["arg0"], []),
                  (36, 29, "l1.post_ln", ["out1.0"], 1, ["arg0"], []),
                  (37, 29, "l1.moe", ["out2.0"], 2, ["out1.0", "out2.0", "out0.0"], []),
                    (38, 37, "l1.moe.gate", ["arg0"], 1, ["arg0"], []),
                    (39, 37, "l1.moe.e1", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (40, 39, "l1.moe.e1.w1", ["arg0"], 1, ["arg0"], []),
                      (41, 39, "l1.moe.e1.w3", ["arg0"], 1, ["arg0"], []),
                      (42, 39, "l1.moe.e1.w2", ["out0.0"], 1, ["arg0"], []),
                    (43, 37, "l1.moe.e2", ["arg0"], 1, ["out2.0", "out1.0"], []),
                      (44, 43, "l1.moe.e2.w1", ["arg0"], 1, ["arg0"], []),
                      (45, 43, "l1.moe.e2.w3", ["arg0"], 1, ["arg0"], []),
                      (46, 43, "l1.moe.e2.w2", ["out0.0"], 1, ["arg0"], []),
                (47, 1, "model.norm", ["out2.0"], 1, ["arg0"], []),
              (48, 0, "lm_head", ["out0.0"], 1, ["arg0"], []),
        ]),
    ]),
]


# ----------------------------------------------------------------------
# The executor: runs STEPS as a training loop does and prints one line
# per hook:  A/D/B/C m=<module id> (forward hooks; D shows
# ds_grads_remaining before->after, C applied_pre_backward_ref_cnt),
# PRE/POST (the backward functions of DeepSpeed's hooks C and D), PGRAD
# p=<param> (gradient accumulated), FWD/ENDFWD/BWD/ENDBWD g=<graph>,
# SWEEP (optimizer step), DISCARD (no backward: eval, or a loss that needs
# no grad), ABORT (a module raises).
# After every D, C, PRE, POST, ENDBWD and SWEEP: "S <ds_status of every
# parameter>" (N = NOT_AVAILABLE, I = INFLIGHT, A = AVAILABLE).
# ----------------------------------------------------------------------

class ScenarioRaise(Exception):
    """The exception a module with raise=... throws."""

    def __init__(self, catcher_call):
        super().__init__("scenario raise")
        self.catcher_call = catcher_call  # call index, or -1: caught by the training loop


class StopRun(Exception):
    pass


def parse_ref(s):
    detach = s.endswith(".detach")
    if detach:
        s = s[:-len(".detach")]
    if s.endswith(".raw"):  # the output as the module made it (cached on self, before hook C)
        k, j = s[3:-len(".raw")].split(".")
        return ("raw", int(k), int(j), detach)
    if s in ("batch", "batch_rg"):
        return (s, 0, 0, detach)
    if s.startswith("arg"):
        return ("arg", 0, int(s[3:]), detach)
    if s.startswith("param"):  # a mixed input's term: the parameter with this ds_id
        return ("param", 0, int(s[5:]), detach)
    k, j = s[3:].split(".")
    return ("out", int(k), int(j), detach)


class Pass:
    """One forward pass (micro-batch): its calls, with children lists."""

    def __init__(self, spec, num):
        self.num = num
        self.loss_idx = spec["loss"]
        self.calls = []
        self.children = {}
        for ci, parent, mod, inputs, n_out, uses, flags in spec["calls"]:
            # an input is "REF", "REF+REF..." (a parameter-free op of the caller
            # over the terms, e.g. a residual sum) or "kw=..." (a keyword input)
            c = dict(module=MODULE_IDS[mod], parent=-1 if parent is None else parent, n_out=n_out,
                     inputs=[(r.startswith("kw="), [parse_ref(t) for t in r[3 * r.startswith("kw="):].split("+")])
                             for r in inputs], uses=[parse_ref(r) for r in uses],
                     no_grad="no_grad" in flags, ckpt="none", raise_=False, catcher=-1,
                     nograd=[int(f[len("nograd="):]) for f in flags if f.startswith("nograd=")],
                     nosave="nosave" in flags,
                     alias={int(f[5:f.index("=")]): parse_ref(f[f.index("=") + 1:])
                            for f in flags if f.startswith("alias")})
            for f in flags:
                if f.startswith("ckpt="):
                    c["ckpt"] = f[5:]
                elif f.startswith("raise="):
                    c["raise_"] = True
                    if f != "raise=outside":
                        a = ci
                        for _ in range(int(f[len("raise=up"):])):
                            a = self.calls[a]["parent"] if a != ci else c["parent"]
                        c["catcher"] = a
            self.calls.append(c)
            self.children.setdefault(c["parent"], []).append(ci)
        self.batch = torch.zeros(1)
        self.batch_rg = torch.zeros(1, requires_grad=True)
        self.aborted = self.discarded = self.freed = False
        self.loss = None


class Execution:
    """One execution of a pass's calls (the forward, or a checkpoint recompute)."""

    def __init__(self, p):
        self.p = p
        self.out = {}
        self.raw = {}
        self.win = {}


class Runner:
    def __init__(self, hooks_only):
        self.hooks_only = hooks_only
        self.graph_count = 0
        self.pending_inner = []  # graphs of reentrant recomputes awaiting their backward
        self.top_backward = None
        self.keep = []
        self.step = 0
        self.phase = "setup"
        self.violation = None  # first (invariant, message)
        self.exception = None
        self.build()

    # -- output and checks ------------------------------------------------

    def line(self, s):
        print(s, flush=True)
        if s.startswith("ENDBWD"):
            self.status_line()

    def status_line(self):
        print("S " + "".join(STATUS_CHAR.get(p.ds_status, "?") for p in self.params), flush=True)

    def where(self):
        return "setup" if self.phase == "setup" else "%s of step %d" % (self.phase, self.step)

    def violate(self, inv, msg):
        print("# violation %s: %s" % (inv, msg), flush=True)
        if self.violation is None:
            self.violation = (inv, msg)

    def counter(self, module, name):
        v = getattr(module, name, None)
        return "?" if v is None else str(v)

    def check_i1(self, module):
        v = getattr(module, "ds_grads_remaining", 0)
        if v < 0:
            self.violate("I1", "ds_grads_remaining of module '%s' went to %d in %s"
                         % (module.zo_name, v, self.where()))

    def check_i3(self, after):
        for p in self.params:
            if p.ds_status != ZeroParamStatus.NOT_AVAILABLE and not getattr(p, "ds_persist", False):
                self.violate("I3", "non-persistent parameter '%s' is still %s after %s in step %d"
                             % (p.zo_name, p.ds_status.name, after, self.step))
                return

    def check_i4(self, module, when):
        for p in module.pset:
            if p.ds_status != ZeroParamStatus.AVAILABLE:
                self.violate("I4", "module '%s' computes with parameter '%s' while it is %s, in "
                             "%s of step %d" % (module.zo_name, p.zo_name, p.ds_status.name, when,
                                                self.step))
                return

    # -- model ----------------------------------------------------------

    def build(self):
        self.mods, self.params = build_model()
        for p, name in zip(self.params, PARAM_NAMES):
            p.zo_name = name
        uses = [[] for _ in self.mods]
        for m, p in EXTERNAL:
            uses[m].append(p)
        self.uses_of = uses
        self.in_leaf = [False] * len(self.mods)
        index = {id(p): i for i, p in enumerate(self.params)}
        owner = [None] * len(self.params)
        for mid, mod in enumerate(self.mods):
            for p in mod.parameters(recurse=False):
                owner[index[id(p)]] = mid
            for sub in list(mod.modules())[1:]:
                if mod.zo_id in Z3_LEAF:
                    self.in_leaf[sub.zo_id] = True
        for mid, mod in enumerate(self.mods):
            s = set(i for i, o in enumerate(owner) if o == mid)
            s.update(uses[mid])
            if mid in Z3_LEAF:  # a z3 leaf's op reads its whole subtree's parameters
                sub = set(m.zo_id for m in mod.modules())
                s.update(i for i, o in enumerate(owner) if o in sub)
            mod.pset = [self.params[i] for i in sorted(s)]

    def pgrad_hooks(self):
        # a line when a parameter's gradient is accumulated: a hook on its
        # AccumulateGrad node (as DeepSpeed's stage 3 finds it), installed
        # on the full-size parameter, kept alive for every graph
        for pid, t in enumerate(self.params):
            if t.requires_grad:
                acc = t.expand_as(t).grad_fn.next_functions[0][0]
                acc.register_hook(lambda gi, go, pid=pid: self.line("PGRAD p=%d" % pid))
                self.keep.append(acc)

    # -- DeepSpeed's own hooks, wrapped to print a line -----------------------

    def install(self):
        cfg = {
            "train_batch_size": 1,
            "zero_allow_untested_optimizer": True,
            "steps_per_print": 1 << 30,
            "wall_clock_breakdown": False,
            "zero_optimization": dict(stage=3, **{"stage3_" + k: v for k, v in THRESHOLDS.items()}),
        }
        for mid in Z3_LEAF:
            self.mods[mid]._z3_leaf = True  # what deepspeed.utils.set_z3_leaf_modules sets
        root = self.mods[0]
        if not self.params:
            # DeepSpeed reads the dtype of the first parameter: one unused
            # parameter (not in the S lines), frozen unless the optimizer needs it
            root.register_parameter("zo_dummy", torch.nn.Parameter(torch.zeros(1),
                                                                   requires_grad=not self.hooks_only))
        elif not self.hooks_only and not any(p.requires_grad for p in self.params):
            # the ZeRO-3 optimizer needs a trainable parameter of the model
            root.register_parameter("zo_dummy", torch.nn.Parameter(torch.zeros(1)))
        self.pgrad_hooks()  # before DeepSpeed partitions param.data
        _allow_missing_shm_op()
        with contextlib.redirect_stdout(io.StringIO()):
            deepspeed.init_distributed(dist_backend="gloo", verbose=False)
            if int(torch.__version__.split(".")[0]) < 2:
                # torch 1.x's gloo has no all_gather_into_tensor / reduce_scatter_tensor:
                # at world size 1 both are copies (data plane only)
                dscomm.cdb.all_gather_function = _copy_collective
                dscomm.cdb.reduce_scatter_function = _copy_collective
            if self.hooks_only:
                # no optimizer: DeepSpeedZeRoOffload, the stage-3 hooks and coordinator alone
                self.engine, _, _, _ = deepspeed.initialize(model=root, config=cfg)
                self.offload = self.engine.optimizer
            else:
                opt = torch.optim.SGD([p for p in root.parameters() if p.requires_grad], lr=0.0)
                self.engine, _, _, _ = deepspeed.initialize(model=root, optimizer=opt, config=cfg)
                self.offload = self.engine.optimizer.parameter_offload
        # tied / external parameters: a module that uses a parameter it does not own
        for mid, pids in enumerate(self.uses_of):
            for pid in pids:
                deepspeed.zero.register_external_parameter(self.mods[mid], self.params[pid])
        for mid, mod in enumerate(self.mods):
            if not self.in_leaf[mid]:
                self.wrap_hooks(mod)

    def wrap_hooks(self, mod):
        wrap = {"_pre_forward_module_hook": self.wrap_a, "_post_backward_module_hook": self.wrap_d,
                "_post_forward_module_hook": self.wrap_b, "_pre_backward_module_hook": self.wrap_c}
        for d in (mod._forward_pre_hooks, mod._forward_hooks):
            for k, fn in list(d.items()):
                w = wrap.get(_hook_name(fn))
                if w:
                    d[k] = w(fn)

    def wrap_a(self, fn):
        def a(module, *args):
            self.line("A m=%d" % module.zo_id)
            return fn(module, *args)
        return a

    def wrap_b(self, fn):
        def b(module, inputs, output):
            self.line("B m=%d" % module.zo_id)
            return fn(module, inputs, output)
        return b

    def wrap_d(self, fn):
        def d(module, inputs):
            before = self.counter(module, "ds_grads_remaining")
            ret = fn(module, inputs)
            self.patch_backward(module, "post_bwd_fn", "POST", "c", "ds_grads_remaining")
            self.line("D m=%d n=%d rg=%s c=%s->%s" % (
                module.zo_id, len(inputs), ",".join("1" if x.requires_grad else "0" for x in inputs),
                before, self.counter(module, "ds_grads_remaining")))
            self.status_line()
            return ret
        return d

    def wrap_c(self, fn):
        def c(module, inputs, output):
            before = getattr(module, "applied_pre_backward_ref_cnt", 0)
            ret = fn(module, inputs, output)
            self.patch_backward(module, "pre_bwd_fn", "PRE", "r", "applied_pre_backward_ref_cnt")
            outs = output if isinstance(output, (tuple, list)) else (output,)
            self.line("C m=%d n=%d rg=%s r=%s->%s" % (
                module.zo_id, len(outs), ",".join("1" if y.requires_grad else "0" for y in outs),
                before, getattr(module, "applied_pre_backward_ref_cnt", 0)))
            self.status_line()
            return ret
        return c

    def patch_backward(self, module, attr, tag, key, counter):
        """A line (and I1 check) after the backward of DeepSpeed's
        PreBackwardFunctionForModule / PostBackwardFunctionModule."""
        cls = getattr(module, attr, None)
        if cls is None or getattr(cls, "_zo_traced", False):
            return
        orig = cls.backward
        rt = self

        def backward(ctx, *args):
            m = ctx.module
            before = rt.counter(m, counter)
            r = orig(ctx, *args)
            rt.line("%s m=%d %s=%s->%s" % (tag, m.zo_id, key, before, rt.counter(m, counter)))
            rt.status_line()
            if tag == "POST":
                rt.check_i1(m)
            return r
        cls.backward = staticmethod(backward)
        cls._zo_traced = True

    # -- the training loop's DeepSpeed calls --------------------------------

    def run_backward(self, loss, retain):
        if not self.hooks_only:
            self.engine.backward(loss, retain_graph=retain)
            return
        # what the stage-3 optimizer's backward does around autograd:
        # loss.backward(), then the coordinator's reset_step()
        loss.backward(retain_graph=retain)
        try:
            coord = self.offload.get_param_coordinator(training=True)
        except TypeError:  # 0.15+: one coordinator
            coord = self.offload.get_param_coordinator()
        try:
            coord.reset_step()
        except RuntimeError as e:
            self.line("DSERROR %s" % str(e).strip().splitlines()[0][:200])
            self.exception = ("deepspeed", e)
            raise StopRun()

    def sweep(self):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                if self.hooks_only:
                    # the optimizer step's release_and_reset_all + "expected to be released" check
                    self.offload.partition_all_parameters()
                else:
                    self.engine.step()
            self.line("SWEEP")
        except RuntimeError as e:
            msg = str(e).strip().splitlines()[0]
            self.line("SWEEP ERROR %s" % msg)
            if "expected to be released" in msg:
                self.violate("I3", "DeepSpeed at the optimizer step of step %d: %s" % (self.step, msg))
            else:
                self.exception = ("deepspeed", e)
        self.status_line()

    def set_training(self, training):
        self.engine.train(training)

    def close(self):
        try:
            self.engine.destroy()
        except Exception:
            pass

    # -- forward programs -------------------------------------------------

    def resolve(self, x, scope, ref):
        kind, k, j, detach = ref
        if kind == "batch":
            t = x.p.batch
        elif kind == "batch_rg":
            t = x.p.batch_rg
        elif kind == "arg":
            t = x.win[scope][j]
        elif kind == "param":
            t = self.params[j]
        elif kind == "raw":
            t = x.raw[(x.p.children[scope][k], j)]
        else:
            t = x.out[(x.p.children[scope][k], j)]
        return t.detach() if detach else t

    def invoke(self, x, ci, args, kwargs=None):
        mod = self.mods[x.p.calls[ci]["module"]]
        mod.pending.append((x, ci))
        try:
            outs = mod(*args, **(kwargs or {}))
        finally:
            if mod.pending and mod.pending[-1] == (x, ci):  # its forward never ran
                mod.pending.pop()
        for j, t in enumerate(outs):
            x.out[(ci, j)] = t
        return outs

    def call(self, x, ci, args, kwargs=None):
        """What the caller's code does for call ci: plain, or checkpointed."""
        ck = x.p.calls[ci]["ckpt"]
        if ck == "none" or ck.startswith("body-"):  # (a checkpointed body: Block.forward's)
            return self.invoke(x, ci, args, kwargs)
        state = {"n": 0}

        def run_function(*a):
            state["n"] += 1
            if state["n"] == 1:  # the original forward
                return self.invoke(x, ci, a)
            x2 = Execution(x.p)  # the recompute in backward
            if ck == "reentrant":
                num = self.graph_count  # a new forward pass (graph) with its own backward
                self.graph_count += 1
                self.line("FWD g=%d" % num)
                outs = self.invoke(x2, ci, a)
                self.line("ENDFWD g=%d" % num)
                self.pending_inner.append(num)
                return outs
            return self.invoke(x2, ci, a)

        outs = tcheckpoint.checkpoint(run_function, *args, use_reentrant=(ck == "reentrant"))
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        for j, t in enumerate(outs):
            x.out[(ci, j)] = t
        return outs

    def body_checkpoint(self, x, ci, args):
        """Block.forward of a call whose body is checkpointed, as transformers'
        GradientCheckpointingLayer runs a layer after gradient_checkpointing_enable():
        checkpoint(body, *args, use_reentrant=...) inside the module call, so the
        module's hooks fire outside the region; a recompute reruns the body alone."""
        c = x.p.calls[ci]
        reentrant = c["ckpt"] == "body-reentrant"
        state = {"n": 0}

        def run_function(*a):
            state["n"] += 1
            if state["n"] == 1:  # the original forward
                return self.body(x, ci, a)
            x2 = Execution(x.p)  # the recompute in backward
            if reentrant:
                num = self.graph_count  # a new forward pass (graph) with its own backward
                self.graph_count += 1
                self.line("FWD g=%d" % num)
                outs = self.body(x2, ci, a)
                self.line("ENDFWD g=%d" % num)
                self.pending_inner.append(num)
                return outs
            return self.body(x2, ci, a)

        outs = tcheckpoint.checkpoint(run_function, *args, use_reentrant=reentrant)
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        if c["nograd"]:  # what hook C sees (CheckpointFunction's outputs all require grad)
            outs = tuple(t.detach() if j in c["nograd"] else t for j, t in enumerate(outs))
        return outs

    def body(self, x, ci, args):
        """Block.forward of call ci: child calls, [raise], own op."""
        p = x.p
        c = p.calls[ci]
        x.win[ci] = args
        for j in p.children.get(ci, []):
            ch = p.calls[j]
            cargs, ckw = [], {}
            for is_kw, terms in ch["inputs"]:
                ts = [self.resolve(x, ci, r) for r in terms]
                t = ts[0] if len(ts) == 1 else MixFunction.apply(*ts)
                if is_kw:
                    ckw["kw%d" % len(ckw)] = t
                else:
                    cargs.append(t)
            cargs = tuple(cargs)
            try:
                if ch["no_grad"]:
                    with torch.no_grad():
                        self.call(x, j, cargs, ckw)
                else:
                    self.call(x, j, cargs, ckw)
            except ScenarioRaise as e:
                if e.catcher_call == ci:
                    continue  # caught here: the body goes on with its next child call
                raise
        if c["raise_"]:
            cat = c["catcher"]
            self.line("ABORT catcher=%d" % (p.calls[cat]["module"] if cat >= 0 else -1))
            raise ScenarioRaise(cat)
        mod = self.mods[c["module"]]
        if c["n_out"] == 0:
            return ()
        used = [self.resolve(x, ci, r) for r in c["uses"]]
        self.check_i4(mod, "the forward" if self.phase == "forward" else "a recompute in " + self.phase)
        if len(c["alias"]) < c["n_out"]:
            mod.zo_nosave = c["nosave"]
            outs = ModuleOp.apply(self, mod, c["n_out"], *used, *mod.pset)
        else:
            outs = (None,) * c["n_out"]
        # aliased outputs: a tensor of the call's scope returned as is
        outs = tuple(self.resolve(x, ci, c["alias"][j]) if j in c["alias"] else t for j, t in enumerate(outs))
        for j, t in enumerate(outs):  # what the module caches on self (outK.J.raw)
            x.raw[(ci, j)] = t
        if c["nograd"]:  # outputs that never require grad
            outs = tuple(t.detach() if j in c["nograd"] else t for j, t in enumerate(outs))
        return outs

    # -- steps ------------------------------------------------------------

    def traced_backward(self, tensors, grad_tensors=None, retain_graph=None, *a, **kw):
        """torch.autograd.backward with BWD/ENDBWD lines (also sees the inner
        backward of a reentrant checkpoint)."""
        if self.top_backward is not None:
            num, retain = self.top_backward
            self.top_backward = None
        else:
            num, retain = self.pending_inner.pop(), bool(retain_graph)
        self.line("BWD g=%d retain=%d" % (num, 1 if retain else 0))
        _orig_backward(tensors, grad_tensors, retain_graph, *a, **kw)
        self.line("ENDBWD g=%d" % num)

    def forward(self, spec, evalmode):
        self.phase = "forward"
        p = Pass(spec, self.graph_count)
        self.graph_count += 1
        self.line("FWD g=%d" % p.num)
        x = Execution(p)
        c0 = p.calls[0]
        args = tuple(self.resolve(x, -1, terms[0]) for _, terms in c0["inputs"])  # batch / batch_rg
        try:
            if evalmode or c0["no_grad"]:
                with torch.no_grad():
                    outs = self.invoke(x, 0, args)
            else:
                outs = self.invoke(x, 0, args)
        except ScenarioRaise:
            p.aborted = True  # caught by the training loop: this forward is abandoned
            return p
        self.line("ENDFWD g=%d" % p.num)
        if evalmode:
            self.line("DISCARD g=%d" % p.num)
            p.discarded = True
            self.check_i3("the eval forward")
            return p
        p.loss = LossFunction.apply(*[outs[j] for j in p.loss_idx])
        return p

    def backward(self, p, retain):
        if p.aborted or p.discarded or p.freed:
            return
        self.phase = "backward"
        if not p.loss.requires_grad:
            # loss.backward() would raise "element 0 of tensors does not
            # require grad": the training loop skips the backward
            self.line("DISCARD g=%d" % p.num)
            p.discarded = True
            self.check_i3("a forward whose loss needs no backward (discarded)")
            return
        self.top_backward = (p.num, retain)
        try:
            self.run_backward(p.loss, retain)
        except RuntimeError as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            self.line("TORCHERROR %s" % msg)
            self.exception = (_origin(e), e)
            raise StopRun()
        self.check_i3("the backward")
        if not retain:
            p.freed = True

    def optimizer_step(self):
        self.phase = "optimizer step"
        self.sweep()

    def run(self):
        for si, (kind, passes) in enumerate(STEPS):
            self.step = si
            self.line("STEP %d %s" % (si, kind))
            if kind == "eval":  # forward under no_grad, module in eval mode
                self.set_training(False)
                self.forward(passes[0], True)
                self.set_training(True)
            elif kind == "train":  # forward, backward, optimizer step
                p = self.forward(passes[0], False)
                self.backward(p, False)
                self.optimizer_step()
            elif kind == "retain":  # backward(retain_graph=True), backward again, step
                p = self.forward(passes[0], False)
                self.backward(p, True)
                self.backward(p, False)
                self.optimizer_step()
            elif kind == "accum":  # (forward, backward) per micro-batch, then one step
                for spec in passes:
                    p = self.forward(spec, False)
                    self.backward(p, False)
                self.optimizer_step()
            elif kind == "interleave":  # every forward, then every backward, then one step
                ps = [self.forward(spec, False) for spec in passes]
                for p in ps:
                    self.backward(p, False)
                self.optimizer_step()


class _Done:
    def wait(self):
        return True

    def is_completed(self):
        return True


def _copy_collective(output_tensor, input_tensor, *args, async_op=False, **kw):
    output_tensor.view(-1).copy_(input_tensor.reshape(-1))
    return _Done() if async_op else None


def _allow_missing_shm_op():
    """DeepSpeed's CPU comm backend JIT-builds a shared-memory allreduce op
    at init (minutes of C++ compiling, and it needs torch's C++ headers,
    which e.g. Debian's python3-torch lacks).  One process never uses it,
    and DeepSpeed runs without it whenever the builder is unavailable
    (deepspeed.comm.torch.build_shm_op returns None): so it is not built."""
    import importlib
    try:  # (the package's attribute "torch" is torch itself)
        dstorch = importlib.import_module("deepspeed.comm.torch")
    except ImportError:
        return
    if getattr(dstorch, "build_shm_op", None) is not None:
        dstorch.build_shm_op = lambda: None


def _hook_name(fn):
    """Name of a DeepSpeed hook function, through wrappers such as
    instrument_w_nvtx's wrapped_fn."""
    for _ in range(4):
        name = getattr(fn, "__name__", "")
        if name != "wrapped_fn":
            return name
        inner = [c.cell_contents for c in (fn.__closure__ or ()) if callable(c.cell_contents)]
        if not inner:
            return name
        fn = inner[0]
    return ""


class ModuleOp(torch.autograd.Function):
    """A module's own computation: consumes its op inputs and its
    parameters, produces n_out fresh tensors.  Saves one tensor (what a
    non-reentrant checkpoint's recompute is triggered by)."""

    @staticmethod
    def forward(ctx, rt, module, n_out, *inputs):
        outs = tuple(torch.zeros(1) for _ in range(n_out))
        ctx.nosave = getattr(module, "zo_nosave", False)  # nosave: the op saves nothing
        if not ctx.nosave:
            ctx.save_for_backward(outs[0])
        ctx.shapes = [t.shape for t in inputs]
        ctx.rt, ctx.module = rt, module
        return outs

    @staticmethod
    def backward(ctx, *grads):
        if not ctx.nosave:
            _ = ctx.saved_tensors
        ctx.rt.check_i4(ctx.module, "backward")
        return (None, None, None) + tuple(torch.zeros(s) for s in ctx.shapes)


class MixFunction(torch.autograd.Function):
    """A mixed input: the caller's parameter-free op (a residual sum) over
    its terms, one node with an edge to each term that requires grad."""

    @staticmethod
    def forward(ctx, *terms):
        ctx.shapes = [t.shape for t in terms]
        return torch.zeros(1)

    @staticmethod
    def backward(ctx, g):
        return tuple(torch.zeros(s) for s in ctx.shapes)


class LossFunction(torch.autograd.Function):
    """The loss: one node over the root outputs summed into it."""

    @staticmethod
    def forward(ctx, *outs):
        ctx.n = len(outs)
        return torch.zeros(())

    @staticmethod
    def backward(ctx, g):
        return tuple(torch.zeros(1) for _ in range(ctx.n))


def _origin(e):
    """Which library raised e: the file of the innermost frame."""
    tb, f = e.__traceback__, ""
    while tb is not None:
        f, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    return "deepspeed" if "deepspeed" in f else "torch" if "torch" in f else "python"


_orig_backward = torch.autograd.backward
_local = threading.local()


def _dispatch_backward(*a, **kw):
    r = getattr(_local, "run", None)
    if r is None:
        return _orig_backward(*a, **kw)
    return r.traced_backward(*a, **kw)


torch.autograd.backward = _dispatch_backward
RUN = None


def main():
    global RUN
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--hooks-only", action="store_true",
                    help="deepspeed.initialize without an optimizer (DeepSpeed's bare stage-3 hooks): "
                         "loss.backward() + the coordinator's reset_step(), partition_all_parameters() "
                         "as the step")
    a = ap.parse_args()
    hooks_only = getattr(a, "hooks_only", False)
    err = []

    def work():
        # a fresh thread: the autograd engine's CPU ready queue is per thread
        global RUN
        RUN = Runner(hooks_only)
        _local.run = RUN
        try:
            RUN.install()
            RUN.run()
        except StopRun:
            pass
        except Exception as e:  # torch or DeepSpeed raised outside backward
            import traceback
            traceback.print_exc()
            RUN.exception = (_origin(e), e)
            err.append(e)
        finally:
            _local.run = None
            RUN.close()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    r = RUN
    if r.violation and r.exception:
        who, e = r.exception
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print("# then %s raised %s: %s" % (who, type(e).__name__, first[:300]))
    if r.violation:
        inv, msg = r.violation
        print("VIOLATION %s: %s (%s)" % (inv, msg, VERSIONS))
        return 1
    if r.exception:
        who, e = r.exception
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print("EXCEPTION in %s: %s raised %s: %s (%s)" % (r.where(), who, type(e).__name__, first[:300],
                                                          VERSIONS))
        return 1
    print("no invariant violation on %s: the finding does not reproduce on this version" % VERSIONS_ON)
    return 0


if __name__ == "__main__":
    sys.exit(main())
