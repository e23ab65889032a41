#!/usr/bin/env python3
"""A zoffload scenario on real DeepSpeed ZeRO stage 3 (CPU, gloo, world size 1).

Source:     corpus/models/llama32.scn
Made by:    zofuzz export corpus/models/llama32.scn --to deepspeed -o
            corpus/deepspeed/models-llama32.py
Simulator:  policy reset-on-forward (DeepSpeed upstream's counters), torch
            2.x, deepspeed 0.19: all invariants hold
            (under the scenario's own policy per-call: all invariants hold)
Run:        pip install torch deepspeed; DS_ACCELERATOR=cpu python models-llama32.py
            (--hooks-only: DeepSpeed's bare hooks, deepspeed.initialize without
            an optimizer)
Exit:       1 and a last line "VIOLATION I<n>: ..." when an invariant is
            violated (or "EXCEPTION ..." when torch or DeepSpeed raises), else 0 and
            "no invariant violation on ...".

Checked: I1 ds_grads_remaining never negative; I3 every non-persistent
parameter NOT_AVAILABLE after each backward (engine.backward), eval forward
and optimizer step (DeepSpeed's "expected to be released" error counts);
I4 a module's op only computes with AVAILABLE parameters.
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
    "param_persistence_threshold": 0,
    "model_persistence_threshold": 10**15,  # infinite
    "prefetch_bucket_size": 50000000,
    "max_live_parameters": 1000000000,
    "max_reuse_distance": 1000000000,
}


def build_model():
    """The module tree (ids in registration order, as named_modules() lists
    them), then the parameters (registered after every module, in .scn order;
    float32, numel as in the scenario)."""
    model = Block("LlamaForCausalLM", 0)  # module 0
    model.m1 = Block("model", 1)  # module 1
    model.m1.embed_tokens = Block("model.embed_tokens", 2)  # module 2
    model.m1.layers = Block("model.layers", 3)  # module 3
    model.m1.layers_0 = Block("model.layers.0", 4)  # module 4
    model.m1.layers_0.self_attn = Block("layers.0.self_attn", 5)  # module 5
    model.m1.layers_0.self_attn.q_proj = Block("l0.self_attn.q_proj", 6)  # module 6
    model.m1.layers_0.self_attn.k_proj = Block("l0.self_attn.k_proj", 7)  # module 7
    model.m1.layers_0.self_attn.v_proj = Block("l0.self_attn.v_proj", 8)  # module 8
    model.m1.layers_0.self_attn.o_proj = Block("l0.self_attn.o_proj", 9)  # module 9
    model.m1.layers_0.mlp = Block("model.layers.0.mlp", 10)  # module 10
    model.m1.layers_0.mlp.gate_proj = Block("layers.0.mlp.gate_proj", 11)  # module 11
    model.m1.layers_0.mlp.up_proj = Block("layers.0.mlp.up_proj", 12)  # module 12
    model.m1.layers_0.mlp.down_proj = Block("layers.0.mlp.down_proj", 13)  # module 13
    model.m1.layers_0.mlp.act_fn = Block("layers.0.mlp.act_fn", 14)  # module 14
    model.m1.layers_0.input_layernorm = Block("l0.input_layernorm", 15)  # module 15
    model.m1.layers_0.post_attention_layernor = Block("@16", 16)  # module 16
    model.m1.layers_1 = Block("model.layers.1", 17)  # module 17
    model.m1.layers_1.self_attn = Block("layers.1.self_attn", 18)  # module 18
    model.m1.layers_1.self_attn.q_proj = Block("l1.self_attn.q_proj", 19)  # module 19
    model.m1.layers_1.self_attn.k_proj = Block("l1.self_attn.k_proj", 20)  # module 20
    model.m1.layers_1.self_attn.v_proj = Block("l1.self_attn.v_proj", 21)  # module 21
    model.m1.layers_1.self_attn.o_proj = Block("l1.self_attn.o_proj", 22)  # module 22
    model.m1.layers_1.mlp = Block("model.layers.1.mlp", 23)  # module 23
    model.m1.layers_1.mlp.gate_proj = Block("layers.1.mlp.gate_proj", 24)  # module 24
    model.m1.layers_1.mlp.up_proj = Block("layers.1.mlp.up_proj", 25)  # module 25
    model.m1.layers_1.mlp.down_proj = Block("layers.1.mlp.down_proj", 26)  # module 26
    model.m1.layers_1.mlp.act_fn = Block("layers.1.mlp.act_fn", 27)  # module 27
    model.m1.layers_1.input_layernorm = Block("l1.input_layernorm", 28)  # module 28
    model.m1.layers_1.post_attention_layernor = Block("@29", 29)  # module 29
    model.m1.layers_2 = Block("model.layers.2", 30)  # module 30
    model.m1.layers_2.self_attn = Block("layers.2.self_attn", 31)  # module 31
    model.m1.layers_2.self_attn.q_proj = Block("l2.self_attn.q_proj", 32)  # module 32
    model.m1.layers_2.self_attn.k_proj = Block("l2.self_attn.k_proj", 33)  # module 33
    model.m1.layers_2.self_attn.v_proj = Block("l2.self_attn.v_proj", 34)  # module 34
    model.m1.layers_2.self_attn.o_proj = Block("l2.self_attn.o_proj", 35)  # module 35
    model.m1.layers_2.mlp = Block("model.layers.2.mlp", 36)  # module 36
    model.m1.layers_2.mlp.gate_proj = Block("layers.2.mlp.gate_proj", 37)  # module 37
    model.m1.layers_2.mlp.up_proj = Block("layers.2.mlp.up_proj", 38)  # module 38
    model.m1.layers_2.mlp.down_proj = Block("layers.2.mlp.down_proj", 39)  # module 39
    model.m1.layers_2.mlp.act_fn = Block("layers.2.mlp.act_fn", 40)  # module 40
    model.m1.layers_2.input_layernorm = Block("l2.input_layernorm", 41)  # module 41
    model.m1.layers_2.post_attention_layernor = Block("@42", 42)  # module 42
    model.m1.layers_3 = Block("model.layers.3", 43)  # module 43
    model.m1.layers_3.self_attn = Block("layers.3.self_attn", 44)  # module 44
    model.m1.layers_3.self_attn.q_proj = Block("l3.self_attn.q_proj", 45)  # module 45
    model.m1.layers_3.self_attn.k_proj = Block("l3.self_attn.k_proj", 46)  # module 46
    model.m1.layers_3.self_attn.v_proj = Block("l3.self_attn.v_proj", 47)  # module 47
    model.m1.layers_3.self_attn.o_proj = Block("l3.self_attn.o_proj", 48)  # module 48
    model.m1.layers_3.mlp = Block("model.layers.3.mlp", 49)  # module 49
    model.m1.layers_3.mlp.gate_proj = Block("layers.3.mlp.gate_proj", 50)  # module 50
    model.m1.layers_3.mlp.up_proj = Block("layers.3.mlp.up_proj", 51)  # module 51
    model.m1.layers_3.mlp.down_proj = Block("layers.3.mlp.down_proj", 52)  # module 52
    model.m1.layers_3.mlp.act_fn = Block("layers.3.mlp.act_fn", 53)  # module 53
    model.m1.layers_3.input_layernorm = Block("l3.input_layernorm", 54)  # module 54
    model.m1.layers_3.post_attention_layernor = Block("@55", 55)  # module 55
    model.m1.layers_4 = Block("model.layers.4", 56)  # module 56
    model.m1.layers_4.self_attn = Block("layers.4.self_attn", 57)  # module 57
    model.m1.layers_4.self_attn.q_proj = Block("l4.self_attn.q_proj", 58)  # module 58
    model.m1.layers_4.self_attn.k_proj = Block("l4.self_attn.k_proj", 59)  # module 59
    model.m1.layers_4.self_attn.v_proj = Block("l4.self_attn.v_proj", 60)  # module 60
    model.m1.layers_4.self_attn.o_proj = Block("l4.self_attn.o_proj", 61)  # module 61
    model.m1.layers_4.mlp = Block("model.layers.4.mlp", 62)  # module 62
    model.m1.layers_4.mlp.gate_proj = Block("layers.4.mlp.gate_proj", 63)  # module 63
    model.m1.layers_4.mlp.up_proj = Block("layers.4.mlp.up_proj", 64)  # module 64
    model.m1.layers_4.mlp.down_proj = Block("layers.4.mlp.down_proj", 65)  # module 65
    model.m1.layers_4.mlp.act_fn = Block("layers.4.mlp.act_fn", 66)  # module 66
    model.m1.layers_4.input_layernorm = Block("l4.input_layernorm", 67)  # module 67
    model.m1.layers_4.post_attention_layernor = Block("@68", 68)  # module 68
    model.m1.layers_5 = Block("model.layers.5", 69)  # module 69
    model.m1.layers_5.self_attn = Block("layers.5.self_attn", 70)  # module 70
    model.m1.layers_5.self_attn.q_proj = Block("l5.self_attn.q_proj", 71)  # module 71
    model.m1.layers_5.self_attn.k_proj = Block("l5.self_attn.k_proj", 72)  # module 72
    model.m1.layers_5.self_attn.v_proj = Block("l5.self_attn.v_proj", 73)  # module 73
    model.m1.layers_5.self_attn.o_proj = Block("l5.self_attn.o_proj", 74)  # module 74
    model.m1.layers_5.mlp = Block("model.layers.5.mlp", 75)  # module 75
    model.m1.layers_5.mlp.gate_proj = Block("layers.5.mlp.gate_proj", 76)  # module 76
    model.m1.layers_5.mlp.up_proj = Block("layers.5.mlp.up_proj", 77)  # module 77
    model.m1.layers_5.mlp.down_proj = Block("layers.5.mlp.down_proj", 78)  # module 78
    model.m1.layers_5.mlp.act_fn = Block("layers.5.mlp.act_fn", 79)  # module 79
    model.m1.layers_5.input_layernorm = Block("l5.input_layernorm", 80)  # module 80
    model.m1.layers_5.post_attention_layernor = Block("@81", 81)  # module 81
    model.m1.layers_6 = Block("model.layers.6", 82)  # module 82
    model.m1.layers_6.self_attn = Block("layers.6.self_attn", 83)  # module 83
    model.m1.layers_6.self_attn.q_proj = Block("l6.self_attn.q_proj", 84)  # module 84
    model.m1.layers_6.self_attn.k_proj = Block("l6.self_attn.k_proj", 85)  # module 85
    model.m1.layers_6.self_attn.v_proj = Block("l6.self_attn.v_proj", 86)  # module 86
    model.m1.layers_6.self_attn.o_proj = Block("l6.self_attn.o_proj", 87)  # module 87
    model.m1.layers_6.mlp = Block("model.layers.6.mlp", 88)  # module 88
    model.m1.layers_6.mlp.gate_proj = Block("layers.6.mlp.gate_proj", 89)  # module 89
    model.m1.layers_6.mlp.up_proj = Block("layers.6.mlp.up_proj", 90)  # module 90
    model.m1.layers_6.mlp.down_proj = Block("layers.6.mlp.down_proj", 91)  # module 91
    model.m1.layers_6.mlp.act_fn = Block("layers.6.mlp.act_fn", 92)  # module 92
    model.m1.layers_6.input_layernorm = Block("l6.input_layernorm", 93)  # module 93
    model.m1.layers_6.post_attention_layernor = Block("@94", 94)  # module 94
    model.m1.layers_7 = Block("model.layers.7", 95)  # module 95
    model.m1.layers_7.self_attn = Block("layers.7.self_attn", 96)  # module 96
    model.m1.layers_7.self_attn.q_proj = Block("l7.self_attn.q_proj", 97)  # module 97
    model.m1.layers_7.self_attn.k_proj = Block("l7.self_attn.k_proj", 98)  # module 98
    model.m1.layers_7.self_attn.v_proj = Block("l7.self_attn.v_proj", 99)  # module 99
    model.m1.layers_7.self_attn.o_proj = Block("l7.self_attn.o_proj", 100)  # module 100
    model.m1.layers_7.mlp = Block("model.layers.7.mlp", 101)  # module 101
    model.m1.layers_7.mlp.gate_proj = Block("layers.7.mlp.gate_proj", 102)  # module 102
    model.m1.layers_7.mlp.up_proj = Block("layers.7.mlp.up_proj", 103)  # module 103
    model.m1.layers_7.mlp.down_proj = Block("layers.7.mlp.down_proj", 104)  # module 104
    model.m1.layers_7.mlp.act_fn = Block("layers.7.mlp.act_fn", 105)  # module 105
    model.m1.layers_7.input_layernorm = Block("l7.input_layernorm", 106)  # module 106
    model.m1.layers_7.post_attention_layernor = Block("@107", 107)  # module 107
    model.m1.layers_8 = Block("model.layers.8", 108)  # module 108
    model.m1.layers_8.self_attn = Block("layers.8.self_attn", 109)  # module 109
    model.m1.layers_8.self_attn.q_proj = Block("l8.self_attn.q_proj", 110)  # module 110
    model.m1.layers_8.self_attn.k_proj = Block("l8.self_attn.k_proj", 111)  # module 111
    model.m1.layers_8.self_attn.v_proj = Block("l8.self_attn.v_proj", 112)  # module 112
    model.m1.layers_8.self_attn.o_proj = Block("l8.self_attn.o_proj", 113)  # module 113
    model.m1.layers_8.mlp = Block("model.layers.8.mlp", 114)  # module 114
    model.m1.layers_8.mlp.gate_proj = Block("layers.8.mlp.gate_proj", 115)  # module 115
    model.m1.layers_8.mlp.up_proj = Block("layers.8.mlp.up_proj", 116)  # module 116
    model.m1.layers_8.mlp.down_proj = Block("layers.8.mlp.down_proj", 117)  # module 117
    model.m1.layers_8.mlp.act_fn = Block("layers.8.mlp.act_fn", 118)  # module 118
    model.m1.layers_8.input_layernorm = Block("l8.input_layernorm", 119)  # module 119
    model.m1.layers_8.post_attention_layernor = Block("@120", 120)  # module 120
    model.m1.layers_9 = Block("model.layers.9", 121)  # module 121
    model.m1.layers_9.self_attn = Block("layers.9.self_attn", 122)  # module 122
    model.m1.layers_9.self_attn.q_proj = Block("l9.self_attn.q_proj", 123)  # module 123
    model.m1.layers_9.self_attn.k_proj = Block("l9.self_attn.k_proj", 124)  # module 124
    model.m1.layers_9.self_attn.v_proj = Block("l9.self_attn.v_proj", 125)  # module 125
    model.m1.layers_9.self_attn.o_proj = Block("l9.self_attn.o_proj", 126)  # module 126
    model.m1.layers_9.mlp = Block("model.layers.9.mlp", 127)  # module 127
    model.m1.layers_9.mlp.gate_proj = Block("layers.9.mlp.gate_proj", 128)  # module 128
    model.m1.layers_9.mlp.up_proj = Block("layers.9.mlp.up_proj", 129)  # module 129
    model.m1.layers_9.mlp.down_proj = Block("layers.9.mlp.down_proj", 130)  # module 130
    model.m1.layers_9.mlp.act_fn = Block("layers.9.mlp.act_fn", 131)  # module 131
    model.m1.layers_9.input_layernorm = Block("l9.input_layernorm", 132)  # module 132
    model.m1.layers_9.post_attention_layernor = Block("@133", 133)  # module 133
    model.m1.layers_10 = Block("model.layers.10", 134)  # module 134
    model.m1.layers_10.self_attn = Block("layers.10.self_attn", 135)  # module 135
    model.m1.layers_10.self_attn.q_proj = Block("l10.self_attn.q_proj", 136)  # module 136
    model.m1.layers_10.self_attn.k_proj = Block("l10.self_attn.k_proj", 137)  # module 137
    model.m1.layers_10.self_attn.v_proj = Block("l10.self_attn.v_proj", 138)  # module 138
    model.m1.layers_10.self_attn.o_proj = Block("l10.self_attn.o_proj", 139)  # module 139
    model.m1.layers_10.mlp = Block("model.layers.10.mlp", 140)  # module 140
    model.m1.layers_10.mlp.gate_proj = Block("layers.10.mlp.gate_proj", 141)  # module 141
    model.m1.layers_10.mlp.up_proj = Block("layers.10.mlp.up_proj", 142)  # module 142
    model.m1.layers_10.mlp.down_proj = Block("layers.10.mlp.down_proj", 143)  # module 143
    model.m1.layers_10.mlp.act_fn = Block("layers.10.mlp.act_fn", 144)  # module 144
    model.m1.layers_10.input_layernorm = Block("l10.input_layernorm", 145)  # module 145
    model.m1.layers_10.post_attention_layernor = Block("@146", 146)  # module 146
    model.m1.layers_11 = Block("model.layers.11", 147)  # module 147
    model.m1.layers_11.self_attn = Block("layers.11.self_attn", 148)  # module 148
    model.m1.layers_11.self_attn.q_proj = Block("l11.self_attn.q_proj", 149)  # module 149
    model.m1.layers_11.self_attn.k_proj = Block("l11.self_attn.k_proj", 150)  # module 150
    model.m1.layers_11.self_attn.v_proj = Block("l11.self_attn.v_proj", 151)  # module 151
    model.m1.layers_11.self_attn.o_proj = Block("l11.self_attn.o_proj", 152)  # module 152
    model.m1.layers_11.mlp = Block("model.layers.11.mlp", 153)  # module 153
    model.m1.layers_11.mlp.gate_proj = Block("layers.11.mlp.gate_proj", 154)  # module 154
    model.m1.layers_11.mlp.up_proj = Block("layers.11.mlp.up_proj", 155)  # module 155
    model.m1.layers_11.mlp.down_proj = Block("layers.11.mlp.down_proj", 156)  # module 156
    model.m1.layers_11.mlp.act_fn = Block("layers.11.mlp.act_fn", 157)  # module 157
    model.m1.layers_11.input_layernorm = Block("l11.input_layernorm", 158)  # module 158
    model.m1.layers_11.post_attention_layernor = Block("@159", 159)  # module 159
    model.m1.layers_12 = Block("model.layers.12", 160)  # module 160
    model.m1.layers_12.self_attn = Block("layers.12.self_attn", 161)  # module 161
    model.m1.layers_12.self_attn.q_proj = Block("l12.self_attn.q_proj", 162)  # module 162
    model.m1.layers_12.self_attn.k_proj = Block("l12.self_attn.k_proj", 163)  # module 163
    model.m1.layers_12.self_attn.v_proj = Block("l12.self_attn.v_proj", 164)  # module 164
    model.m1.layers_12.self_attn.o_proj = Block("l12.self_attn.o_proj", 165)  # module 165
    model.m1.layers_12.mlp = Block("model.layers.12.mlp", 166)  # module 166
    model.m1.layers_12.mlp.gate_proj = Block("layers.12.mlp.gate_proj", 167)  # module 167
    model.m1.layers_12.mlp.up_proj = Block("layers.12.mlp.up_proj", 168)  # module 168
    model.m1.layers_12.mlp.down_proj = Block("layers.12.mlp.down_proj", 169)  # module 169
    model.m1.layers_12.mlp.act_fn = Block("layers.12.mlp.act_fn", 170)  # module 170
    model.m1.layers_12.input_layernorm = Block("l12.input_layernorm", 171)  # module 171
    model.m1.layers_12.post_attention_layernor = Block("@172", 172)  # module 172
    model.m1.layers_13 = Block("model.layers.13", 173)  # module 173
    model.m1.layers_13.self_attn = Block("layers.13.self_attn", 174)  # module 174
    model.m1.layers_13.self_attn.q_proj = Block("l13.self_attn.q_proj", 175)  # module 175
    model.m1.layers_13.self_attn.k_proj = Block("l13.self_attn.k_proj", 176)  # module 176
    model.m1.layers_13.self_attn.v_proj = Block("l13.self_attn.v_proj", 177)  # module 177
    model.m1.layers_13.self_attn.o_proj = Block("l13.self_attn.o_proj", 178)  # module 178
    model.m1.layers_13.mlp = Block("model.layers.13.mlp", 179)  # module 179
    model.m1.layers_13.mlp.gate_proj = Block("layers.13.mlp.gate_proj", 180)  # module 180
    model.m1.layers_13.mlp.up_proj = Block("layers.13.mlp.up_proj", 181)  # module 181
    model.m1.layers_13.mlp.down_proj = Block("layers.13.mlp.down_proj", 182)  # module 182
    model.m1.layers_13.mlp.act_fn = Block("layers.13.mlp.act_fn", 183)  # module 183
    model.m1.layers_13.input_layernorm = Block("l13.input_layernorm", 184)  # module 184
    model.m1.layers_13.post_attention_layernor = Block("@185", 185)  # module 185
    model.m1.layers_14 = Block("model.layers.14", 186)  # module 186
    model.m1.layers_14.self_attn = Block("layers.14.self_attn", 187)  # module 187
    model.m1.layers_14.self_attn.q_proj = Block("l14.self_attn.q_proj", 188)  # module 188
    model.m1.layers_14.self_attn.k_proj = Block("l14.self_attn.k_proj", 189)  # module 189
    model.m1.layers_14.self_attn.v_proj = Block("l14.self_attn.v_proj", 190)  # module 190
    model.m1.layers_14.self_attn.o_proj = Block("l14.self_attn.o_proj", 191)  # module 191
    model.m1.layers_14.mlp = Block("model.layers.14.mlp", 192)  # module 192
    model.m1.layers_14.mlp.gate_proj = Block("layers.14.mlp.gate_proj", 193)  # module 193
    model.m1.layers_14.mlp.up_proj = Block("layers.14.mlp.up_proj", 194)  # module 194
    model.m1.layers_14.mlp.down_proj = Block("layers.14.mlp.down_proj", 195)  # module 195
    model.m1.layers_14.mlp.act_fn = Block("layers.14.mlp.act_fn", 196)  # module 196
    model.m1.layers_14.input_layernorm = Block("l14.input_layernorm", 197)  # module 197
    model.m1.layers_14.post_attention_layernor = Block("@198", 198)  # module 198
    model.m1.layers_15 = Block("model.layers.15", 199)  # module 199
    model.m1.layers_15.self_attn = Block("layers.15.self_attn", 200)  # module 200
    model.m1.layers_15.self_attn.q_proj = Block("l15.self_attn.q_proj", 201)  # module 201
    model.m1.layers_15.self_attn.k_proj = Block("l15.self_attn.k_proj", 202)  # module 202
    model.m1.layers_15.self_attn.v_proj = Block("l15.self_attn.v_proj", 203)  # module 203
    model.m1.layers_15.self_attn.o_proj = Block("l15.self_attn.o_proj", 204)  # module 204
    model.m1.layers_15.mlp = Block("model.layers.15.mlp", 205)  # module 205
    model.m1.layers_15.mlp.gate_proj = Block("layers.15.mlp.gate_proj", 206)  # module 206
    model.m1.layers_15.mlp.up_proj = Block("layers.15.mlp.up_proj", 207)  # module 207
    model.m1.layers_15.mlp.down_proj = Block("layers.15.mlp.down_proj", 208)  # module 208
    model.m1.layers_15.mlp.act_fn = Block("layers.15.mlp.act_fn", 209)  # module 209
    model.m1.layers_15.input_layernorm = Block("l15.input_layernorm", 210)  # module 210
    model.m1.layers_15.post_attention_layernor = Block("@211", 211)  # module 211
    model.m1.layers_16 = Block("model.layers.16", 212)  # module 212
    model.m1.layers_16.self_attn = Block("layers.16.self_attn", 213)  # module 213
    model.m1.layers_16.self_attn.q_proj = Block("l16.self_attn.q_proj", 214)  # module 214
    model.m1.layers_16.self_attn.k_proj = Block("l16.self_attn.k_proj", 215)  # module 215
    model.m1.layers_16.self_attn.v_proj = Block("l16.self_attn.v_proj", 216)  # module 216
    model.m1.layers_16.self_attn.o_proj = Block("l16.self_attn.o_proj", 217)  # module 217
    model.m1.layers_16.mlp = Block("model.layers.16.mlp", 218)  # module 218
    model.m1.layers_16.mlp.gate_proj = Block("layers.16.mlp.gate_proj", 219)  # module 219
    model.m1.layers_16.mlp.up_proj = Block("layers.16.mlp.up_proj", 220)  # module 220
    model.m1.layers_16.mlp.down_proj = Block("layers.16.mlp.down_proj", 221)  # module 221
    model.m1.layers_16.mlp.act_fn = Block("layers.16.mlp.act_fn", 222)  # module 222
    model.m1.layers_16.input_layernorm = Block("l16.input_layernorm", 223)  # module 223
    model.m1.layers_16.post_attention_layernor = Block("@224", 224)  # module 224
    model.m1.layers_17 = Block("model.layers.17", 225)  # module 225
    model.m1.layers_17.self_attn = Block("layers.17.self_attn", 226)  # module 226
    model.m1.layers_17.self_attn.q_proj = Block("l17.self_attn.q_proj", 227)  # module 227
    model.m1.layers_17.self_attn.k_proj = Block("l17.self_attn.k_proj", 228)  # module 228
    model.m1.layers_17.self_attn.v_proj = Block("l17.self_attn.v_proj", 229)  # module 229
    model.m1.layers_17.self_attn.o_proj = Block("l17.self_attn.o_proj", 230)  # module 230
    model.m1.layers_17.mlp = Block("model.layers.17.mlp", 231)  # module 231
    model.m1.layers_17.mlp.gate_proj = Block("layers.17.mlp.gate_proj", 232)  # module 232
    model.m1.layers_17.mlp.up_proj = Block("layers.17.mlp.up_proj", 233)  # module 233
    model.m1.layers_17.mlp.down_proj = Block("layers.17.mlp.down_proj", 234)  # module 234
    model.m1.layers_17.mlp.act_fn = Block("layers.17.mlp.act_fn", 235)  # module 235
    model.m1.layers_17.input_layernorm = Block("l17.input_layernorm", 236)  # module 236
    model.m1.layers_17.post_attention_layernor = Block("@237", 237)  # module 237
    model.m1.layers_18 = Block("model.layers.18", 238)  # module 238
    model.m1.layers_18.self_attn = Block("layers.18.self_attn", 239)  # module 239
    model.m1.layers_18.self_attn.q_proj = Block("l18.self_attn.q_proj", 240)  # module 240
    model.m1.layers_18.self_attn.k_proj = Block("l18.self_attn.k_proj", 241)  # module 241
    model.m1.layers_18.self_attn.v_proj = Block("l18.self_attn.v_proj", 242)  # module 242
    model.m1.layers_18.self_attn.o_proj = Block("l18.self_attn.o_proj", 243)  # module 243
    model.m1.layers_18.mlp = Block("model.layers.18.mlp", 244)  # module 244
    model.m1.layers_18.mlp.gate_proj = Block("layers.18.mlp.gate_proj", 245)  # module 245
    model.m1.layers_18.mlp.up_proj = Block("layers.18.mlp.up_proj", 246)  # module 246
    model.m1.layers_18.mlp.down_proj = Block("layers.18.mlp.down_proj", 247)  # module 247
    model.m1.layers_18.mlp.act_fn = Block("layers.18.mlp.act_fn", 248)  # module 248
    model.m1.layers_18.input_layernorm = Block("l18.input_layernorm", 249)  # module 249
    model.m1.layers_18.post_attention_layernor = Block("@250", 250)  # module 250
    model.m1.layers_19 = Block("model.layers.19", 251)  # module 251
    model.m1.layers_19.self_attn = Block("layers.19.self_attn", 252)  # module 252
    model.m1.layers_19.self_attn.q_proj = Block("l19.self_attn.q_proj", 253)  # module 253
    model.m1.layers_19.self_attn.k_proj = Block("l19.self_attn.k_proj", 254)  # module 254
    model.m1.layers_19.self_attn.v_proj = Block("l19.self_attn.v_proj", 255)  # module 255
    model.m1.layers_19.self_attn.o_proj = Block("l19.self_attn.o_proj", 256)  # module 256
    model.m1.layers_19.mlp = Block("model.layers.19.mlp", 257)  # module 257
    model.m1.layers_19.mlp.gate_proj = Block("layers.19.mlp.gate_proj", 258)  # module 258
    model.m1.layers_19.mlp.up_proj = Block("layers.19.mlp.up_proj", 259)  # module 259
    model.m1.layers_19.mlp.down_proj = Block("layers.19.mlp.down_proj", 260)  # module 260
    model.m1.layers_19.mlp.act_fn = Block("layers.19.mlp.act_fn", 261)  # module 261
    model.m1.layers_19.input_layernorm = Block("l19.input_layernorm", 262)  # module 262
    model.m1.layers_19.post_attention_layernor = Block("@263", 263)  # module 263
    model.m1.layers_20 = Block("model.layers.20", 264)  # module 264
    model.m1.layers_20.self_attn = Block("layers.20.self_attn", 265)  # module 265
    model.m1.layers_20.self_attn.q_proj = Block("l20.self_attn.q_proj", 266)  # module 266
    model.m1.layers_20.self_attn.k_proj = Block("l20.self_attn.k_proj", 267)  # module 267
    model.m1.layers_20.self_attn.v_proj = Block("l20.self_attn.v_proj", 268)  # module 268
    model.m1.layers_20.self_attn.o_proj = Block("l20.self_attn.o_proj", 269)  # module 269
    model.m1.layers_20.mlp = Block("model.layers.20.mlp", 270)  # module 270
    model.m1.layers_20.mlp.gate_proj = Block("layers.20.mlp.gate_proj", 271)  # module 271
    model.m1.layers_20.mlp.up_proj = Block("layers.20.mlp.up_proj", 272)  # module 272
    model.m1.layers_20.mlp.down_proj = Block("layers.20.mlp.down_proj", 273)  # module 273
    model.m1.layers_20.mlp.act_fn = Block("layers.20.mlp.act_fn", 274)  # module 274
    model.m1.layers_20.input_layernorm = Block("l20.input_layernorm", 275)  # module 275
    model.m1.layers_20.post_attention_layernor = Block("@276", 276)  # module 276
    model.m1.layers_21 = Block("model.layers.21", 277)  # module 277
    model.m1.layers_21.self_attn = Block("layers.21.self_attn", 278)  # module 278
    model.m1.layers_21.self_attn.q_proj = Block("l21.self_attn.q_proj", 279)  # module 279
    model.m1.layers_21.self_attn.k_proj = Block("l21.self_attn.k_proj", 280)  # module 280
    model.m1.layers_21.self_attn.v_proj = Block("l21.self_attn.v_proj", 281)  # module 281
    model.m1.layers_21.self_attn.o_proj = Block("l21.self_attn.o_proj", 282)  # module 282
    model.m1.layers_21.mlp = Block("model.layers.21.mlp", 283)  # module 283
    model.m1.layers_21.mlp.gate_proj = Block("layers.21.mlp.gate_proj", 284)  # module 284
    model.m1.layers_21.mlp.up_proj = Block("layers.21.mlp.up_proj", 285)  # module 285
    model.m1.layers_21.mlp.down_proj = Block("layers.21.mlp.down_proj", 286)  # module 286
    model.m1.layers_21.mlp.act_fn = Block("layers.21.mlp.act_fn", 287)  # module 287
    model.m1.layers_21.input_layernorm = Block("l21.input_layernorm", 288)  # module 288
    model.m1.layers_21.post_attention_layernor = Block("@289", 289)  # module 289
    model.m1.layers_22 = Block("model.layers.22", 290)  # module 290
    model.m1.layers_22.self_attn = Block("layers.22.self_attn", 291)  # module 291
    model.m1.layers_22.self_attn.q_proj = Block("l22.self_attn.q_proj", 292)  # module 292
    model.m1.layers_22.self_attn.k_proj = Block("l22.self_attn.k_proj", 293)  # module 293
    model.m1.layers_22.self_attn.v_proj = Block("l22.self_attn.v_proj", 294)  # module 294
    model.m1.layers_22.self_attn.o_proj = Block("l22.self_attn.o_proj", 295)  # module 295
    model.m1.layers_22.mlp = Block("model.layers.22.mlp", 296)  # module 296
    model.m1.layers_22.mlp.gate_proj = Block("layers.22.mlp.gate_proj", 297)  # module 297
    model.m1.layers_22.mlp.up_proj = Block("layers.22.mlp.up_proj", 298)  # module 298
    model.m1.layers_22.mlp.down_proj = Block("layers.22.mlp.down_proj", 299)  # module 299
    model.m1.layers_22.mlp.act_fn = Block("layers.22.mlp.act_fn", 300)  # module 300
    model.m1.layers_22.input_layernorm = Block("l22.input_layernorm", 301)  # module 301
    model.m1.layers_22.post_attention_layernor = Block("@302", 302)  # module 302
    model.m1.layers_23 = Block("model.layers.23", 303)  # module 303
    model.m1.layers_23.self_attn = Block("layers.23.self_attn", 304)  # module 304
    model.m1.layers_23.self_attn.q_proj = Block("l23.self_attn.q_proj", 305)  # module 305
    model.m1.layers_23.self_attn.k_proj = Block("l23.self_attn.k_proj", 306)  # module 306
    model.m1.layers_23.self_attn.v_proj = Block("l23.self_attn.v_proj", 307)  # module 307
    model.m1.layers_23.self_attn.o_proj = Block("l23.self_attn.o_proj", 308)  # module 308
    model.m1.layers_23.mlp = Block("model.layers.23.mlp", 309)  # module 309
    model.m1.layers_23.mlp.gate_proj = Block("layers.23.mlp.gate_proj", 310)  # module 310
    model.m1.layers_23.mlp.up_proj = Block("layers.23.mlp.up_proj", 311)  # module 311
    model.m1.layers_23.mlp.down_proj = Block("layers.23.mlp.down_proj", 312)  # module 312
    model.m1.layers_23.mlp.act_fn = Block("layers.23.mlp.act_fn", 313)  # module 313
    model.m1.layers_23.input_layernorm = Block("l23.input_layernorm", 314)  # module 314
    model.m1.layers_23.post_attention_layernor = Block("@315", 315)  # module 315
    model.m1.layers_24 = Block("model.layers.24", 316)  # module 316
    model.m1.layers_24.self_attn = Block("layers.24.self_attn", 317)  # module 317
    model.m1.layers_24.self_attn.q_proj = Block("l24.self_attn.q_proj", 318)  # module 318
    model.m1.layers_24.self_attn.k_proj = Block("l24.self_attn.k_proj", 319)  # module 319
    model.m1.layers_24.self_attn.v_proj = Block("l24.self_attn.v_proj", 320)  # module 320
    model.m1.layers_24.self_attn.o_proj = Block("l24.self_attn.o_proj", 321)  # module 321
    model.m1.layers_24.mlp = Block("model.layers.24.mlp", 322)  # module 322
    model.m1.layers_24.mlp.gate_proj = Block("layers.24.mlp.gate_proj", 323)  # module 323
    model.m1.layers_24.mlp.up_proj = Block("layers.24.mlp.up_proj", 324)  # module 324
    model.m1.layers_24.mlp.down_proj = Block("layers.24.mlp.down_proj", 325)  # module 325
    model.m1.layers_24.mlp.act_fn = Block("layers.24.mlp.act_fn", 326)  # module 326
    model.m1.layers_24.input_layernorm = Block("l24.input_layernorm", 327)  # module 327
    model.m1.layers_24.post_attention_layernor = Block("@328", 328)  # module 328
    model.m1.layers_25 = Block("model.layers.25", 329)  # module 329
    model.m1.layers_25.self_attn = Block("layers.25.self_attn", 330)  # module 330
    model.m1.layers_25.self_attn.q_proj = Block("l25.self_attn.q_proj", 331)  # module 331
    model.m1.layers_25.self_attn.k_proj = Block("l25.self_attn.k_proj", 332)  # module 332
    model.m1.layers_25.self_attn.v_proj = Block("l25.self_attn.v_proj", 333)  # module 333
    model.m1.layers_25.self_attn.o_proj = Block("l25.self_attn.o_proj", 334)  # module 334
    model.m1.layers_25.mlp = Block("model.layers.25.mlp", 335)  # module 335
    model.m1.layers_25.mlp.gate_proj = Block("layers.25.mlp.gate_proj", 336)  # module 336
    model.m1.layers_25.mlp.up_proj = Block("layers.25.mlp.up_proj", 337)  # module 337
    model.m1.layers_25.mlp.down_proj = Block("layers.25.mlp.down_proj", 338)  # module 338
    model.m1.layers_25.mlp.act_fn = Block("layers.25.mlp.act_fn", 339)  # module 339
    model.m1.layers_25.input_layernorm = Block("l25.input_layernorm", 340)  # module 340
    model.m1.layers_25.post_attention_layernor = Block("@341", 341)  # module 341
    model.m1.layers_26 = Block("model.layers.26", 342)  # module 342
    model.m1.layers_26.self_attn = Block("layers.26.self_attn", 343)  # module 343
    model.m1.layers_26.self_attn.q_proj = Block("l26.self_attn.q_proj", 344)  # module 344
    model.m1.layers_26.self_attn.k_proj = Block("l26.self_attn.k_proj", 345)  # module 345
    model.m1.layers_26.self_attn.v_proj = Block("l26.self_attn.v_proj", 346)  # module 346
    model.m1.layers_26.self_attn.o_proj = Block("l26.self_attn.o_proj", 347)  # module 347
    model.m1.layers_26.mlp = Block("model.layers.26.mlp", 348)  # module 348
    model.m1.layers_26.mlp.gate_proj = Block("layers.26.mlp.gate_proj", 349)  # module 349
    model.m1.layers_26.mlp.up_proj = Block("layers.26.mlp.up_proj", 350)  # module 350
    model.m1.layers_26.mlp.down_proj = Block("layers.26.mlp.down_proj", 351)  # module 351
    model.m1.layers_26.mlp.act_fn = Block("layers.26.mlp.act_fn", 352)  # module 352
    model.m1.layers_26.input_layernorm = Block("l26.input_layernorm", 353)  # module 353
    model.m1.layers_26.post_attention_layernor = Block("@354", 354)  # module 354
    model.m1.layers_27 = Block("model.layers.27", 355)  # module 355
    model.m1.layers_27.self_attn = Block("layers.27.self_attn", 356)  # module 356
    model.m1.layers_27.self_attn.q_proj = Block("l27.self_attn.q_proj", 357)  # module 357
    model.m1.layers_27.self_attn.k_proj = Block("l27.self_attn.k_proj", 358)  # module 358
    model.m1.layers_27.self_attn.v_proj = Block("l27.self_attn.v_proj", 359)  # module 359
    model.m1.layers_27.self_attn.o_proj = Block("l27.self_attn.o_proj", 360)  # module 360
    model.m1.layers_27.mlp = Block("model.layers.27.mlp", 361)  # module 361
    model.m1.layers_27.mlp.gate_proj = Block("layers.27.mlp.gate_proj", 362)  # module 362
    model.m1.layers_27.mlp.up_proj = Block("layers.27.mlp.up_proj", 363)  # module 363
    model.m1.layers_27.mlp.down_proj = Block("layers.27.mlp.down_proj", 364)  # module 364
    model.m1.layers_27.mlp.act_fn = Block("layers.27.mlp.act_fn", 365)  # module 365
    model.m1.layers_27.input_layernorm = Block("l27.input_layernorm", 366)  # module 366
    model.m1.layers_27.post_attention_layernor = Block("@367", 367)  # module 367
    model.m1.layers_28 = Block("model.layers.28", 368)  # module 368
    model.m1.layers_28.self_attn = Block("layers.28.self_attn", 369)  # module 369
    model.m1.layers_28.self_attn.q_proj = Block("l28.self_attn.q_proj", 370)  # module 370
    model.m1.layers_28.self_attn.k_proj = Block("l28.self_attn.k_proj", 371)  # module 371
    model.m1.layers_28.self_attn.v_proj = Block("l28.self_attn.v_proj", 372)  # module 372
    model.m1.layers_28.self_attn.o_proj = Block("l28.self_attn.o_proj", 373)  # module 373
    model.m1.layers_28.mlp = Block("model.layers.28.mlp", 374)  # module 374
    model.m1.layers_28.mlp.gate_proj = Block("layers.28.mlp.gate_proj", 375)  # module 375
    model.m1.layers_28.mlp.up_proj = Block("layers.28.mlp.up_proj", 376)  # module 376
    model.m1.layers_28.mlp.down_proj = Block("layers.28.mlp.down_proj", 377)  # module 377
    model.m1.layers_28.mlp.act_fn = Block("layers.28.mlp.act_fn", 378)  # module 378
    model.m1.layers_28.input_layernorm = Block("l28.input_layernorm", 379)  # module 379
    model.m1.layers_28.post_attention_layernor = Block("@380", 380)  # module 380
    model.m1.layers_29 = Block("model.layers.29", 381)  # module 381
    model.m1.layers_29.self_attn = Block("layers.29.self_attn", 382)  # module 382
    model.m1.layers_29.self_attn.q_proj = Block("l29.self_attn.q_proj", 383)  # module 383
    model.m1.layers_29.self_attn.k_proj = Block("l29.self_attn.k_proj", 384)  # module 384
    model.m1.layers_29.self_attn.v_proj = Block("l29.self_attn.v_proj", 385)  # module 385
    model.m1.layers_29.self_attn.o_proj = Block("l29.self_attn.o_proj", 386)  # module 386
    model.m1.layers_29.mlp = Block("model.layers.29.mlp", 387)  # module 387
    model.m1.layers_29.mlp.gate_proj = Block("layers.29.mlp.gate_proj", 388)  # module 388
    model.m1.layers_29.mlp.up_proj = Block("layers.29.mlp.up_proj", 389)  # module 389
    model.m1.layers_29.mlp.down_proj = Block("layers.29.mlp.down_proj", 390)  # module 390
    model.m1.layers_29.mlp.act_fn = Block("layers.29.mlp.act_fn", 391)  # module 391
    model.m1.layers_29.input_layernorm = Block("l29.input_layernorm", 392)  # module 392
    model.m1.layers_29.post_attention_layernor = Block("@393", 393)  # module 393
    model.m1.layers_30 = Block("model.layers.30", 394)  # module 394
    model.m1.layers_30.self_attn = Block("layers.30.self_attn", 395)  # module 395
    model.m1.layers_30.self_attn.q_proj = Block("l30.self_attn.q_proj", 396)  # module 396
    model.m1.layers_30.self_attn.k_proj = Block("l30.self_attn.k_proj", 397)  # module 397
    model.m1.layers_30.self_attn.v_proj = Block("l30.self_attn.v_proj", 398)  # module 398
    model.m1.layers_30.self_attn.o_proj = Block("l30.self_attn.o_proj", 399)  # module 399
    model.m1.layers_30.mlp = Block("model.layers.30.mlp", 400)  # module 400
    model.m1.layers_30.mlp.gate_proj = Block("layers.30.mlp.gate_proj", 401)  # module 401
    model.m1.layers_30.mlp.up_proj = Block("layers.30.mlp.up_proj", 402)  # module 402
    model.m1.layers_30.mlp.down_proj = Block("layers.30.mlp.down_proj", 403)  # module 403
    model.m1.layers_30.mlp.act_fn = Block("layers.30.mlp.act_fn", 404)  # module 404
    model.m1.layers_30.input_layernorm = Block("l30.input_layernorm", 405)  # module 405
    model.m1.layers_30.post_attention_layernor = Block("@406", 406)  # module 406
    model.m1.layers_31 = Block("model.layers.31", 407)  # module 407
    model.m1.layers_31.self_attn = Block("layers.31.self_attn", 408)  # module 408
    model.m1.layers_31.self_attn.q_proj = Block("l31.self_attn.q_proj", 409)  # module 409
    model.m1.layers_31.self_attn.k_proj = Block("l31.self_attn.k_proj", 410)  # module 410
    model.m1.layers_31.self_attn.v_proj = Block("l31.self_attn.v_proj", 411)  # module 411
    model.m1.layers_31.self_attn.o_proj = Block("l31.self_attn.o_proj", 412)  # module 412
    model.m1.layers_31.mlp = Block("model.layers.31.mlp", 413)  # module 413
    model.m1.layers_31.mlp.gate_proj = Block("layers.31.mlp.gate_proj", 414)  # module 414
    model.m1.layers_31.mlp.up_proj = Block("layers.31.mlp.up_proj", 415)  # module 415
    model.m1.layers_31.mlp.down_proj = Block("layers.31.mlp.down_proj", 416)  # module 416
    model.m1.layers_31.mlp.act_fn = Block("layers.31.mlp.act_fn", 417)  # module 417
    model.m1.layers_31.input_layernorm = Block("l31.input_layernorm", 418)  # module 418
    model.m1.layers_31.post_attention_layernor = Block("@419", 419)  # module 419
    model.m1.norm = Block("model.norm", 420)  # module 420
    model.m1.rotary_emb = Block("model.rotary_emb", 421)  # module 421
    model.lm_head = Block("lm_head", 422)  # module 422
    model.lm_head.weight = torch.nn.Parameter(torch.zeros(1024))  # param 0 lm_head.weight
    model.m1.norm.weight = torch.nn.Parameter(torch.zeros(16))  # param 1 model.norm.weight
    model.m1.layers_31.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 2 l31.mlp.down_proj.weigh
    model.m1.layers_31.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 3 l31.mlp.up_proj.weight
    model.m1.layers_31.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 4 l31.mlp.gate_proj.weigh
    model.m1.layers_31.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 5 weight
    model.m1.layers_31.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 6 self_attn.o_proj.weight
    model.m1.layers_31.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 7 self_attn.v_proj.weight
    model.m1.layers_31.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 8 self_attn.k_proj.weight
    model.m1.layers_31.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 9 self_attn.q_proj.weight
    model.m1.layers_31.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 10 input_layernorm.weight
    model.m1.layers_30.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 11 l30.mlp.down_proj.weigh
    model.m1.layers_30.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 12 l30.mlp.up_proj.weight
    model.m1.layers_30.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 13 l30.mlp.gate_proj.weigh
    model.m1.layers_30.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 14 weight
    model.m1.layers_30.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 15 self_attn.o_proj.weight
    model.m1.layers_30.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 16 self_attn.v_proj.weight
    model.m1.layers_30.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 17 self_attn.k_proj.weight
    model.m1.layers_30.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 18 self_attn.q_proj.weight
    model.m1.layers_30.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 19 input_layernorm.weight
    model.m1.layers_29.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 20 l29.mlp.down_proj.weigh
    model.m1.layers_29.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 21 l29.mlp.up_proj.weight
    model.m1.layers_29.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 22 l29.mlp.gate_proj.weigh
    model.m1.layers_29.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 23 weight
    model.m1.layers_29.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 24 self_attn.o_proj.weight
    model.m1.layers_29.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 25 self_attn.v_proj.weight
    model.m1.layers_29.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 26 self_attn.k_proj.weight
    model.m1.layers_29.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 27 self_attn.q_proj.weight
    model.m1.layers_29.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 28 input_layernorm.weight
    model.m1.layers_28.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 29 l28.mlp.down_proj.weigh
    model.m1.layers_28.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 30 l28.mlp.up_proj.weight
    model.m1.layers_28.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 31 l28.mlp.gate_proj.weigh
    model.m1.layers_28.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 32 weight
    model.m1.layers_28.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 33 self_attn.o_proj.weight
    model.m1.layers_28.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 34 self_attn.v_proj.weight
    model.m1.layers_28.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 35 self_attn.k_proj.weight
    model.m1.layers_28.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 36 self_attn.q_proj.weight
    model.m1.layers_28.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 37 input_layernorm.weight
    model.m1.layers_27.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 38 l27.mlp.down_proj.weigh
    model.m1.layers_27.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 39 l27.mlp.up_proj.weight
    model.m1.layers_27.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 40 l27.mlp.gate_proj.weigh
    model.m1.layers_27.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 41 weight
    model.m1.layers_27.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 42 self_attn.o_proj.weight
    model.m1.layers_27.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 43 self_attn.v_proj.weight
    model.m1.layers_27.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 44 self_attn.k_proj.weight
    model.m1.layers_27.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 45 self_attn.q_proj.weight
    model.m1.layers_27.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 46 input_layernorm.weight
    model.m1.layers_26.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 47 l26.mlp.down_proj.weigh
    model.m1.layers_26.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 48 l26.mlp.up_proj.weight
    model.m1.layers_26.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 49 l26.mlp.gate_proj.weigh
    model.m1.layers_26.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 50 weight
    model.m1.layers_26.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 51 self_attn.o_proj.weight
    model.m1.layers_26.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 52 self_attn.v_proj.weight
    model.m1.layers_26.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 53 self_attn.k_proj.weight
    model.m1.layers_26.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 54 self_attn.q_proj.weight
    model.m1.layers_26.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 55 input_layernorm.weight
    model.m1.layers_25.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 56 l25.mlp.down_proj.weigh
    model.m1.layers_25.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 57 l25.mlp.up_proj.weight
    model.m1.layers_25.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 58 l25.mlp.gate_proj.weigh
    model.m1.layers_25.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 59 weight
    model.m1.layers_25.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 60 self_attn.o_proj.weight
    model.m1.layers_25.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 61 self_attn.v_proj.weight
    model.m1.layers_25.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 62 self_attn.k_proj.weight
    model.m1.layers_25.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 63 self_attn.q_proj.weight
    model.m1.layers_25.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 64 input_layernorm.weight
    model.m1.layers_24.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 65 l24.mlp.down_proj.weigh
    model.m1.layers_24.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 66 l24.mlp.up_proj.weight
    model.m1.layers_24.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 67 l24.mlp.gate_proj.weigh
    model.m1.layers_24.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 68 weight
    model.m1.layers_24.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 69 self_attn.o_proj.weight
    model.m1.layers_24.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 70 self_attn.v_proj.weight
    model.m1.layers_24.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 71 self_attn.k_proj.weight
    model.m1.layers_24.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 72 self_attn.q_proj.weight
    model.m1.layers_24.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 73 input_layernorm.weight
    model.m1.layers_23.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 74 l23.mlp.down_proj.weigh
    model.m1.layers_23.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 75 l23.mlp.up_proj.weight
    model.m1.layers_23.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 76 l23.mlp.gate_proj.weigh
    model.m1.layers_23.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 77 weight
    model.m1.layers_23.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 78 self_attn.o_proj.weight
    model.m1.layers_23.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 79 self_attn.v_proj.weight
    model.m1.layers_23.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 80 self_attn.k_proj.weight
    model.m1.layers_23.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 81 self_attn.q_proj.weight
    model.m1.layers_23.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 82 input_layernorm.weight
    model.m1.layers_22.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 83 l22.mlp.down_proj.weigh
    model.m1.layers_22.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 84 l22.mlp.up_proj.weight
    model.m1.layers_22.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 85 l22.mlp.gate_proj.weigh
    model.m1.layers_22.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 86 weight
    model.m1.layers_22.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 87 self_attn.o_proj.weight
    model.m1.layers_22.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 88 self_attn.v_proj.weight
    model.m1.layers_22.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 89 self_attn.k_proj.weight
    model.m1.layers_22.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 90 self_attn.q_proj.weight
    model.m1.layers_22.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 91 input_layernorm.weight
    model.m1.layers_21.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 92 l21.mlp.down_proj.weigh
    model.m1.layers_21.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 93 l21.mlp.up_proj.weight
    model.m1.layers_21.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 94 l21.mlp.gate_proj.weigh
    model.m1.layers_21.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 95 weight
    model.m1.layers_21.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 96 self_attn.o_proj.weight
    model.m1.layers_21.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 97 self_attn.v_proj.weight
    model.m1.layers_21.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 98 self_attn.k_proj.weight
    model.m1.layers_21.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 99 self_attn.q_proj.weight
    model.m1.layers_21.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 100 input_layernorm.weight
    model.m1.layers_20.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 101 l20.mlp.down_proj.weigh
    model.m1.layers_20.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 102 l20.mlp.up_proj.weight
    model.m1.layers_20.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 103 l20.mlp.gate_proj.weigh
    model.m1.layers_20.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 104 weight
    model.m1.layers_20.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 105 self_attn.o_proj.weight
    model.m1.layers_20.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 106 self_attn.v_proj.weight
    model.m1.layers_20.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 107 self_attn.k_proj.weight
    model.m1.layers_20.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 108 self_attn.q_proj.weight
    model.m1.layers_20.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 109 input_layernorm.weight
    model.m1.layers_19.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 110 l19.mlp.down_proj.weigh
    model.m1.layers_19.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 111 l19.mlp.up_proj.weight
    model.m1.layers_19.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 112 l19.mlp.gate_proj.weigh
    model.m1.layers_19.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 113 weight
    model.m1.layers_19.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 114 self_attn.o_proj.weight
    model.m1.layers_19.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 115 self_attn.v_proj.weight
    model.m1.layers_19.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 116 self_attn.k_proj.weight
    model.m1.layers_19.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 117 self_attn.q_proj.weight
    model.m1.layers_19.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 118 input_layernorm.weight
    model.m1.layers_18.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 119 l18.mlp.down_proj.weigh
    model.m1.layers_18.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 120 l18.mlp.up_proj.weight
    model.m1.layers_18.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 121 l18.mlp.gate_proj.weigh
    model.m1.layers_18.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 122 weight
    model.m1.layers_18.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 123 self_attn.o_proj.weight
    model.m1.layers_18.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 124 self_attn.v_proj.weight
    model.m1.layers_18.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 125 self_attn.k_proj.weight
    model.m1.layers_18.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 126 self_attn.q_proj.weight
    model.m1.layers_18.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 127 input_layernorm.weight
    model.m1.layers_17.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 128 l17.mlp.down_proj.weigh
    model.m1.layers_17.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 129 l17.mlp.up_proj.weight
    model.m1.layers_17.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 130 l17.mlp.gate_proj.weigh
    model.m1.layers_17.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 131 weight
    model.m1.layers_17.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 132 self_attn.o_proj.weight
    model.m1.layers_17.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 133 self_attn.v_proj.weight
    model.m1.layers_17.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 134 self_attn.k_proj.weight
    model.m1.layers_17.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 135 self_attn.q_proj.weight
    model.m1.layers_17.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 136 input_layernorm.weight
    model.m1.layers_16.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 137 l16.mlp.down_proj.weigh
    model.m1.layers_16.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 138 l16.mlp.up_proj.weight
    model.m1.layers_16.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 139 l16.mlp.gate_proj.weigh
    model.m1.layers_16.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 140 weight
    model.m1.layers_16.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 141 self_attn.o_proj.weight
    model.m1.layers_16.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 142 self_attn.v_proj.weight
    model.m1.layers_16.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 143 self_attn.k_proj.weight
    model.m1.layers_16.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 144 self_attn.q_proj.weight
    model.m1.layers_16.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 145 input_layernorm.weight
    model.m1.layers_15.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 146 l15.mlp.down_proj.weigh
    model.m1.layers_15.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 147 l15.mlp.up_proj.weight
    model.m1.layers_15.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 148 l15.mlp.gate_proj.weigh
    model.m1.layers_15.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 149 weight
    model.m1.layers_15.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 150 self_attn.o_proj.weight
    model.m1.layers_15.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 151 self_attn.v_proj.weight
    model.m1.layers_15.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 152 self_attn.k_proj.weight
    model.m1.layers_15.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 153 self_attn.q_proj.weight
    model.m1.layers_15.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 154 input_layernorm.weight
    model.m1.layers_14.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 155 l14.mlp.down_proj.weigh
    model.m1.layers_14.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 156 l14.mlp.up_proj.weight
    model.m1.layers_14.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 157 l14.mlp.gate_proj.weigh
    model.m1.layers_14.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 158 weight
    model.m1.layers_14.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 159 self_attn.o_proj.weight
    model.m1.layers_14.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 160 self_attn.v_proj.weight
    model.m1.layers_14.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 161 self_attn.k_proj.weight
    model.m1.layers_14.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 162 self_attn.q_proj.weight
    model.m1.layers_14.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 163 input_layernorm.weight
    model.m1.layers_13.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 164 l13.mlp.down_proj.weigh
    model.m1.layers_13.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 165 l13.mlp.up_proj.weight
    model.m1.layers_13.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 166 l13.mlp.gate_proj.weigh
    model.m1.layers_13.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 167 weight
    model.m1.layers_13.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 168 self_attn.o_proj.weight
    model.m1.layers_13.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 169 self_attn.v_proj.weight
    model.m1.layers_13.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 170 self_attn.k_proj.weight
    model.m1.layers_13.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 171 self_attn.q_proj.weight
    model.m1.layers_13.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 172 input_layernorm.weight
    model.m1.layers_12.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 173 l12.mlp.down_proj.weigh
    model.m1.layers_12.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 174 l12.mlp.up_proj.weight
    model.m1.layers_12.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 175 l12.mlp.gate_proj.weigh
    model.m1.layers_12.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 176 weight
    model.m1.layers_12.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 177 self_attn.o_proj.weight
    model.m1.layers_12.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 178 self_attn.v_proj.weight
    model.m1.layers_12.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 179 self_attn.k_proj.weight
    model.m1.layers_12.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 180 self_attn.q_proj.weight
    model.m1.layers_12.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 181 input_layernorm.weight
    model.m1.layers_11.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 182 l11.mlp.down_proj.weigh
    model.m1.layers_11.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 183 l11.mlp.up_proj.weight
    model.m1.layers_11.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 184 l11.mlp.gate_proj.weigh
    model.m1.layers_11.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 185 weight
    model.m1.layers_11.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 186 self_attn.o_proj.weight
    model.m1.layers_11.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 187 self_attn.v_proj.weight
    model.m1.layers_11.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 188 self_attn.k_proj.weight
    model.m1.layers_11.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 189 self_attn.q_proj.weight
    model.m1.layers_11.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 190 input_layernorm.weight
    model.m1.layers_10.mlp.down_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 191 l10.mlp.down_proj.weigh
    model.m1.layers_10.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 192 l10.mlp.up_proj.weight
    model.m1.layers_10.mlp.gate_proj.weigh = torch.nn.Parameter(torch.zeros(512))  # param 193 l10.mlp.gate_proj.weigh
    model.m1.layers_10.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 194 weight
    model.m1.layers_10.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 195 self_attn.o_proj.weight
    model.m1.layers_10.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 196 self_attn.v_proj.weight
    model.m1.layers_10.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 197 self_attn.k_proj.weight
    model.m1.layers_10.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 198 self_attn.q_proj.weight
    model.m1.layers_10.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 199 input_layernorm.weight
    model.m1.layers_9.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 200 l9.mlp.down_proj.weight
    model.m1.layers_9.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 201 l9.mlp.up_proj.weight
    model.m1.layers_9.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 202 l9.mlp.gate_proj.weight
    model.m1.layers_9.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 203 weight
    model.m1.layers_9.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 204 self_attn.o_proj.weight
    model.m1.layers_9.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 205 self_attn.v_proj.weight
    model.m1.layers_9.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 206 self_attn.k_proj.weight
    model.m1.layers_9.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 207 self_attn.q_proj.weight
    model.m1.layers_9.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 208 input_layernorm.weight
    model.m1.layers_8.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 209 l8.mlp.down_proj.weight
    model.m1.layers_8.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 210 l8.mlp.up_proj.weight
    model.m1.layers_8.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 211 l8.mlp.gate_proj.weight
    model.m1.layers_8.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 212 weight
    model.m1.layers_8.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 213 self_attn.o_proj.weight
    model.m1.layers_8.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 214 self_attn.v_proj.weight
    model.m1.layers_8.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 215 self_attn.k_proj.weight
    model.m1.layers_8.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 216 self_attn.q_proj.weight
    model.m1.layers_8.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 217 input_layernorm.weight
    model.m1.layers_7.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 218 l7.mlp.down_proj.weight
    model.m1.layers_7.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 219 l7.mlp.up_proj.weight
    model.m1.layers_7.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 220 l7.mlp.gate_proj.weight
    model.m1.layers_7.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 221 weight
    model.m1.layers_7.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 222 self_attn.o_proj.weight
    model.m1.layers_7.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 223 self_attn.v_proj.weight
    model.m1.layers_7.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 224 self_attn.k_proj.weight
    model.m1.layers_7.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 225 self_attn.q_proj.weight
    model.m1.layers_7.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 226 input_layernorm.weight
    model.m1.layers_6.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 227 l6.mlp.down_proj.weight
    model.m1.layers_6.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 228 l6.mlp.up_proj.weight
    model.m1.layers_6.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 229 l6.mlp.gate_proj.weight
    model.m1.layers_6.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 230 weight
    model.m1.layers_6.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 231 self_attn.o_proj.weight
    model.m1.layers_6.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 232 self_attn.v_proj.weight
    model.m1.layers_6.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 233 self_attn.k_proj.weight
    model.m1.layers_6.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 234 self_attn.q_proj.weight
    model.m1.layers_6.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 235 input_layernorm.weight
    model.m1.layers_5.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 236 l5.mlp.down_proj.weight
    model.m1.layers_5.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 237 l5.mlp.up_proj.weight
    model.m1.layers_5.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 238 l5.mlp.gate_proj.weight
    model.m1.layers_5.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 239 weight
    model.m1.layers_5.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 240 self_attn.o_proj.weight
    model.m1.layers_5.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 241 self_attn.v_proj.weight
    model.m1.layers_5.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 242 self_attn.k_proj.weight
    model.m1.layers_5.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 243 self_attn.q_proj.weight
    model.m1.layers_5.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 244 input_layernorm.weight
    model.m1.layers_4.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 245 l4.mlp.down_proj.weight
    model.m1.layers_4.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 246 l4.mlp.up_proj.weight
    model.m1.layers_4.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 247 l4.mlp.gate_proj.weight
    model.m1.layers_4.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 248 weight
    model.m1.layers_4.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 249 self_attn.o_proj.weight
    model.m1.layers_4.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 250 self_attn.v_proj.weight
    model.m1.layers_4.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 251 self_attn.k_proj.weight
    model.m1.layers_4.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 252 self_attn.q_proj.weight
    model.m1.layers_4.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 253 input_layernorm.weight
    model.m1.layers_3.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 254 l3.mlp.down_proj.weight
    model.m1.layers_3.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 255 l3.mlp.up_proj.weight
    model.m1.layers_3.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 256 l3.mlp.gate_proj.weight
    model.m1.layers_3.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 257 weight
    model.m1.layers_3.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 258 self_attn.o_proj.weight
    model.m1.layers_3.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 259 self_attn.v_proj.weight
    model.m1.layers_3.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 260 self_attn.k_proj.weight
    model.m1.layers_3.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 261 self_attn.q_proj.weight
    model.m1.layers_3.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 262 input_layernorm.weight
    model.m1.layers_2.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 263 l2.mlp.down_proj.weight
    model.m1.layers_2.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 264 l2.mlp.up_proj.weight
    model.m1.layers_2.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 265 l2.mlp.gate_proj.weight
    model.m1.layers_2.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 266 weight
    model.m1.layers_2.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 267 self_attn.o_proj.weight
    model.m1.layers_2.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 268 self_attn.v_proj.weight
    model.m1.layers_2.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 269 self_attn.k_proj.weight
    model.m1.layers_2.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 270 self_attn.q_proj.weight
    model.m1.layers_2.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 271 input_layernorm.weight
    model.m1.layers_1.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 272 l1.mlp.down_proj.weight
    model.m1.layers_1.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 273 l1.mlp.up_proj.weight
    model.m1.layers_1.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 274 l1.mlp.gate_proj.weight
    model.m1.layers_1.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 275 weight
    model.m1.layers_1.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 276 self_attn.o_proj.weight
    model.m1.layers_1.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 277 self_attn.v_proj.weight
    model.m1.layers_1.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 278 self_attn.k_proj.weight
    model.m1.layers_1.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 279 self_attn.q_proj.weight
    model.m1.layers_1.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 280 input_layernorm.weight
    model.m1.layers_0.mlp.down_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 281 l0.mlp.down_proj.weight
    model.m1.layers_0.mlp.up_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 282 l0.mlp.up_proj.weight
    model.m1.layers_0.mlp.gate_proj.weight = torch.nn.Parameter(torch.zeros(512))  # param 283 l0.mlp.gate_proj.weight
    model.m1.layers_0.post_attention_layernor.weight = torch.nn.Parameter(torch.zeros(16))  # param 284 weight
    model.m1.layers_0.self_attn.o_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 285 self_attn.o_proj.weight
    model.m1.layers_0.self_attn.v_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 286 self_attn.v_proj.weight
    model.m1.layers_0.self_attn.k_proj.weight = torch.nn.Parameter(torch.zeros(128))  # param 287 self_attn.k_proj.weight
    model.m1.layers_0.self_attn.q_proj.weight = torch.nn.Parameter(torch.zeros(256))  # param 288 self_attn.q_proj.weight
    model.m1.layers_0.input_layernorm.weight = torch.nn.Parameter(torch.zeros(16))  # param 289 input_layernorm.weight
    model.m1.embed_tokens.weight = torch.nn.Parameter(torch.zeros(1024))  # param 290 embed_tokens.weight
    modules = [model, model.m1, model.m1.embed_tokens, model.m1.layers, model.m1.layers_0, model.m1.layers_0.self_attn, model.m1.layers_0.self_attn.q_proj, model.m1.layers_0.self_attn.k_proj, model.m1.layers_0.self_attn.v_proj, model.m1.layers_0.self_attn.o_proj, model.m1.layers_0.mlp, model.m1.layers_0.mlp.gate_proj, model.m1.layers_0.mlp.up_proj, model.m1.layers_0.mlp.down_proj, model.m1.layers_0.mlp.act_fn, model.m1.layers_0.input_layernorm, model.m1.layers_0.post_attention_layernor, model.m1.layers_1, model.m1.layers_1.self_attn, model.m1.layers_1.self_attn.q_proj, model.m1.layers_1.self_attn.k_proj, model.m1.layers_1.self_attn.v_proj, model.m1.layers_1.self_attn.o_proj, model.m1.layers_1.mlp, model.m1.layers_1.mlp.gate_proj, model.m1.layers_1.mlp.up_proj, model.m1.layers_1.mlp.down_proj, model.m1.layers_1.mlp.act_fn, model.m1.layers_1.input_layernorm, model.m1.layers_1.post_attention_layernor, model.m1.layers_2, model.m1.layers_2.self_attn, model.m1.layers_2.self_attn.q_proj, model.m1.layers_2.self_attn.k_proj, model.m1.layers_2.self_attn.v_proj, model.m1.layers_2.self_attn.o_proj, model.m1.layers_2.mlp, model.m1.layers_2.mlp.gate_proj, model.m1.layers_2.mlp.up_proj, model.m1.layers_2.mlp.down_proj, model.m1.layers_2.mlp.act_fn, model.m1.layers_2.input_layernorm, model.m1.layers_2.post_attention_layernor, model.m1.layers_3, model.m1.layers_3.self_attn, model.m1.layers_3.self_attn.q_proj, model.m1.layers_3.self_attn.k_proj, model.m1.layers_3.self_attn.v_proj, model.m1.layers_3.self_attn.o_proj, model.m1.layers_3.mlp, model.m1.layers_3.mlp.gate_proj, model.m1.layers_3.mlp.up_proj, model.m1.layers_3.mlp.down_proj, model.m1.layers_3.mlp.act_fn, model.m1.layers_3.input_layernorm, model.m1.layers_3.post_attention_layernor, model.m1.layers_4, model.m1.layers_4.self_attn, model.m1.layers_4.self_attn.q_proj, model.m1.layers_4.self_attn.k_proj, model.m1.layers_4.self_attn.v_proj, model.m1.layers_4.self_attn.o_proj, model.m1.layers_4.mlp, model.m1.layers_4.mlp.gate_proj, model.m1.layers_4.mlp.up_proj, model.m1.layers_4.mlp.down_proj, model.m1.layers_4.mlp.act_fn, model.m1.layers_4.input_layernorm, model.m1.layers_4.post_attention_layernor, model.m1.layers_5, model.m1.layers_5.self_attn, model.m1.layers_5.self_attn.q_proj, model.m1.layers_5.self_attn.k_proj, model.m1.layers_5.self_attn.v_proj, model.m1.layers_5.self_attn.o_proj, model.m1.layers_5.mlp, model.m1.layers_5.mlp.gate_proj, model.m1.layers_5.mlp.up_proj, model.m1.layers_5.mlp.down_proj, model.m1.layers_5.mlp.act_fn, model.m1.layers_5.input_layernorm, model.m1.layers_5.post_attention_layernor, model.m1.layers_6, model.m1.layers_6.self_attn, model.m1.layers_6.self_attn.q_proj, model.m1.layers_6.self_attn.k_proj, model.m1.layers_6.self_attn.v_proj, model.m1.layers_6.self_attn.o_proj, model.m1.layers_6.mlp, model.m1.layers_6.mlp.gate_proj, model.m1.layers_6.mlp.up_proj, model.m1.layers_6.mlp.down_proj, model.m1.layers_6.mlp.act_fn, model.m1.layers_6.input_layernorm, model.m1.layers_6.post_attention_layernor, model.m1.layers_7, model.m1.layers_7.self_attn, model.m1.layers_7.self_attn.q_proj, model.m1.layers_7.self_attn.k_proj, model.m1.layers_7.self_attn.v_proj, model.m1.layers_7.self_attn.o_proj, model.m1.layers_7.mlp, model.m1.layers_7.mlp.gate_proj, model.m1.layers_7.mlp.up_proj, model.m1.layers_7.mlp.down_proj, model.m1.layers_7.mlp.act_fn, model.m1.layers_7.input_layernorm, model.m1.layers_7.post_attention_layernor, model.m1.layers_8, model.m1.layers_8.self_attn, model.m1.layers_8.self_attn.q_proj, model.m1.layers_8.self_attn.k_proj, model.m1.layers_8.self_attn.v_proj, model.m1.layers_8.self_attn.o_proj, model.m1.layers_8.mlp, model.m1.layers_8.mlp.gate_proj, model.m1.layers_8.mlp.up_proj, model.m1.layers_8.mlp.down_proj, model.m1.layers_8.mlp.act_fn, model.m1.layers_8.input_layernorm, model.m1.layers_8.post_attention_layernor, model.m1.layers_9, model.m1.layers_9.self_attn, model.m1.layers_9.self_attn.q_proj, model.m1.layers_9.self_attn.k_proj, model.m1.layers_9.self_attn.v_proj, model.m1.layers_9.self_attn.o_proj, model.m1.layers_9.mlp, model.m1.layers_9.mlp.gate_proj, model.m1.layers_9.mlp.up_proj, model.m1.layers_9.mlp.down_proj, model.m1.layers_9.mlp.act_fn, model.m1.layers_9.input_layernorm, model.m1.layers_9.post_attention_layernor, model.m1.layers_10, model.m1.layers_10.self_attn, model.m1.layers_10.self_attn.q_proj, model.m1.layers_10.self_attn.k_proj, model.m1.layers_10.self_attn.v_proj, model.m1.layers_10.self_attn.o_proj, model.m1.layers_10.mlp, model.m1.layers_10.mlp.gate_proj, model.m1.layers_10.mlp.up_proj, model.m1.layers_10.mlp.down_proj, model.m1.layers_10.mlp.act_fn, model.m1.layers_10.input_layernorm, model.m1.layers_10.post_attention_layernor, model.m1.layers_11, model.m1.layers_11.self_attn, model.m1.layers_11.self_attn.q_proj, model.m1.layers_11.self_attn.k_proj, model.m1.layers_11.self_attn.v_proj, model.m1.layers_11.self_attn.o_proj, model.m1.layers_11.mlp, model.m1.layers_11.mlp.gate_proj, model.m1.layers_11.mlp.up_proj, model.m1.layers_11.mlp.down_proj, model.m1.layers_11.mlp.act_fn, model.m1.layers_11.input_layernorm, model.m1.layers_11.post_attention_layernor, model.m1.layers_12, model.m1.layers_12.self_attn, model.m1.layers_12.self_attn.q_proj, model.m1.layers_12.self_attn.k_proj, model.m1.layers_12.self_attn.v_proj, model.m1.layers_12.self_attn.o_proj, model.m1.layers_12.mlp, model.m1.layers_12.mlp.gate_proj, model.m1.layers_12.mlp.up_proj, model.m1.layers_12.mlp.down_proj, model.m1.layers_12.mlp.act_fn, model.m1.layers_12.input_layernorm, model.m1.layers_12.post_attention_layernor, model.m1.layers_13, model.m1.layers_13.self_attn, model.m1.layers_13.self_attn.q_proj, model.m1.layers_13.self_attn.k_proj, model.m1.layers_13.self_attn.v_proj, model.m1.layers_13.self_attn.o_proj, model.m1.layers_13.mlp, model.m1.layers_13.mlp.gate_proj, model.m1.layers_13.mlp.up_proj, model.m1.layers_13.mlp.down_proj, model.m1.layers_13.mlp.act_fn, model.m1.layers_13.input_layernorm, model.m1.layers_13.post_attention_layernor, model.m1.layers_14, model.m1.layers_14.self_attn, model.m1.layers_14.self_attn.q_proj, model.m1.layers_14.self_attn.k_proj, model.m1.layers_14.self_attn.v_proj, model.m1.layers_14.self_attn.o_proj, model.m1.layers_14.mlp, model.m1.layers_14.mlp.gate_proj, model.m1.layers_14.mlp.up_proj, model.m1.layers_14.mlp.down_proj, model.m1.layers_14.mlp.act_fn, model.m1.layers_14.input_layernorm, model.m1.layers_14.post_attention_layernor, model.m1.layers_15, model.m1.layers_15.self_attn, model.m1.layers_15.self_attn.q_proj, model.m1.layers_15.self_attn.k_proj, model.m1.layers_15.self_attn.v_proj, model.m1.layers_15.self_attn.o_proj, model.m1.layers_15.mlp, model.m1.layers_15.mlp.gate_proj, model.m1.layers_15.mlp.up_proj, model.m1.layers_15.mlp.down_proj, model.m1.layers_15.mlp.act_fn, model.m1.layers_15.input_layernorm, model.m1.layers_15.post_attention_layernor, model.m1.layers_16, model.m1.layers_16.self_attn, model.m1.layers_16.self_attn.q_proj, model.m1.layers_16.self_attn.k_proj, model.m1.layers_16.self_attn.v_proj, model.m1.layers_16.self_attn.o_proj, model.m1.layers_16.mlp, model.m1.layers_16.mlp.gate_proj, model.m1.layers_16.mlp.up_proj, model.m1.layers_16.mlp.down_proj, model.m1.layers_16.mlp.act_fn, model.m1.layers_16.input_layernorm, model.m1.layers_16.post_attention_layernor, model.m1.layers_17, model.m1.layers_17.self_attn, model.m1.layers_17.self_attn.q_proj, model.m1.layers_17.self_attn.k_proj, model.m1.layers_17.self_attn.v_proj, model.m1.layers_17.self_attn.o_proj, model.m1.layers_17.mlp, model.m1.layers_17.mlp.gate_proj, model.m1.layers_17.mlp.up_proj, model.m1.layers_17.mlp.down_proj, model.m1.layers_17.mlp.act_fn, model.m1.layers_17.input_layernorm, model.m1.layers_17.post_attention_layernor, model.m1.layers_18, model.m1.layers_18.self_attn, model.m1.layers_18.self_attn.q_proj, model.m1.layers_18.self_attn.k_proj, model.m1.layers_18.self_attn.v_proj, model.m1.layers_18.self_attn.o_proj, model.m1.layers_18.mlp, model.m1.layers_18.mlp.gate_proj, model.m1.layers_18.mlp.up_proj, model.m1.layers_18.mlp.down_proj, model.m1.layers_18.mlp.act_fn, model.m1.layers_18.input_layernorm, model.m1.layers_18.post_attention_layernor, model.m1.layers_19, model.m1.layers_19.self_attn, model.m1.layers_19.self_attn.q_proj, model.m1.layers_19.self_attn.k_proj, model.m1.layers_19.self_attn.v_proj, model.m1.layers_19.self_attn.o_proj, model.m1.layers_19.mlp, model.m1.layers_19.mlp.gate_proj, model.m1.layers_19.mlp.up_proj, model.m1.layers_19.mlp.down_proj, model.m1.layers_19.mlp.act_fn, model.m1.layers_19.input_layernorm, model.m1.layers_19.post_attention_layernor, model.m1.layers_20, model.m1.layers_20.self_attn, model.m1.layers_20.self_attn.q_proj, model.m1.layers_20.self_attn.k_proj, model.m1.layers_20.self_attn.v_proj, model.m1.layers_20.self_attn.o_proj, model.m1.layers_20.mlp, model.m1.layers_20.mlp.gate_proj, model.m1.layers_20.mlp.up_proj, model.m1.layers_20.mlp.down_proj, model.m1.layers_20.mlp.act_fn, model.m1.layers_20.input_layernorm, model.m1.layers_20.post_attention_layernor, model.m1.layers_21, model.m1.layers_21.self_attn, model.m1.layers_21.self_attn.q_proj, model.m1.layers_21.self_attn.k_proj, model.m1.layers_21.self_attn.v_proj, model.m1.layers_21.self_attn.o_proj, model.m1.layers_21.mlp, model.m1.layers_21.mlp.gate_proj, model.m1.layers_21.mlp.up_proj, model.m1.layers_21.mlp.down_proj, model.m1.layers_21.mlp.act_fn, model.m1.layers_21.input_layernorm, model.m1.layers_21.post_attention_layernor, model.m1.layers_22, model.m1.layers_22.self_attn, model.m1.layers_22.self_attn.q_proj, model.m1.layers_22.self_attn.k_proj, model.m1.layers_22.self_attn.v_proj, model.m1.layers_22.self_attn.o_proj, model.m1.layers_22.mlp, model.m1.layers_22.mlp.gate_proj, model.m1.layers_22.mlp.up_proj, model.m1.layers_22.mlp.down_proj, model.m1.layers_22.mlp.act_fn, model.m1.layers_22.input_layernorm, model.m1.layers_22.post_attention_layernor, model.m1.layers_23, model.m1.layers_23.self_attn, model.m1.layers_23.self_attn.q_proj, model.m1.layers_23.self_attn.k_proj, model.m1.layers_23.self_attn.v_proj, model.m1.layers_23.self_attn.o_proj, model.m1.layers_23.mlp, model.m1.layers_23.mlp.gate_proj, model.m1.layers_23.mlp.up_proj, model.m1.layers_23.mlp.down_proj, model.m1.layers_23.mlp.act_fn, model.m1.layers_23.input_layernorm, model.m1.layers_23.post_attention_layernor, model.m1.layers_24, model.m1.layers_24.self_attn, model.m1.layers_24.self_attn.q_proj, model.m1.layers_24.self_attn.k_proj, model.m1.layers_24.self_attn.v_proj, model.m1.layers_24.self_attn.o_proj, model.m1.layers_24.mlp, model.m1.layers_24.mlp.gate_proj, model.m1.layers_24.mlp.up_proj, model.m1.layers_24.mlp.down_proj, model.m1.layers_24.mlp.act_fn, model.m1.layers_24.input_layernorm, model.m1.layers_24.post_attention_layernor, model.m1.layers_25, model.m1.layers_25.self_attn, model.m1.layers_25.self_attn.q_proj, model.m1.layers_25.self_attn.k_proj, model.m1.layers_25.self_attn.v_proj, model.m1.layers_25.self_attn.o_proj, model.m1.layers_25.mlp, model.m1.layers_25.mlp.gate_proj, model.m1.layers_25.mlp.up_proj, model.m1.layers_25.mlp.down_proj, model.m1.layers_25.mlp.act_fn, model.m1.layers_25.input_layernorm, model.m1.layers_25.post_attention_layernor, model.m1.layers_26, model.m1.layers_26.self_attn, model.m1.layers_26.self_attn.q_proj, model.m1.layers_26.self_attn.k_proj, model.m1.layers_26.self_attn.v_proj, model.m1.layers_26.self_attn.o_proj, model.m1.layers_26.mlp, model.m1.layers_26.mlp.gate_proj, model.m1.layers_26.mlp.up_proj, model.m1.layers_26.mlp.down_proj, model.m1.layers_26.mlp.act_fn, model.m1.layers_26.input_layernorm, model.m1.layers_26.post_attention_layernor, model.m1.layers_27, model.m1.layers_27.self_attn, model.m1.layers_27.self_attn.q_proj, model.m1.layers_27.self_attn.k_proj, model.m1.layers_27.self_attn.v_proj, model.m1.layers_27.self_attn.o_proj, model.m1.layers_27.mlp, model.m1.layers_27.mlp.gate_proj, model.m1.layers_27.mlp.up_proj, model.m1.layers_27.mlp.down_proj, model.m1.layers_27.mlp.act_fn, model.m1.layers_27.input_layernorm, model.m1.layers_27.post_attention_layernor, model.m1.layers_28, model.m1.layers_28.self_attn, model.m1.layers_28.self_attn.q_proj, model.m1.layers_28.self_attn.k_proj, model.m1.layers_28.self_attn.v_proj, model.m1.layers_28.self_attn.o_proj, model.m1.layers_28.mlp, model.m1.layers_28.mlp.gate_proj, model.m1.layers_28.mlp.up_proj, model.m1.layers_28.mlp.down_proj, model.m1.layers_28.mlp.act_fn, model.m1.layers_28.input_layernorm, model.m1.layers_28.post_attention_layernor, model.m1.layers_29, model.m1.layers_29.self_attn, model.m1.layers_29.self_attn.q_proj, model.m1.layers_29.self_attn.k_proj, model.m1.layers_29.self_attn.v_proj, model.m1.layers_29.self_attn.o_proj, model.m1.layers_29.mlp, model.m1.layers_29.mlp.gate_proj, model.m1.layers_29.mlp.up_proj, model.m1.layers_29.mlp.down_proj, model.m1.layers_29.mlp.act_fn, model.m1.layers_29.input_layernorm, model.m1.layers_29.post_attention_layernor, model.m1.layers_30, model.m1.layers_30.self_attn, model.m1.layers_30.self_attn.q_proj, model.m1.layers_30.self_attn.k_proj, model.m1.layers_30.self_attn.v_proj, model.m1.layers_30.self_attn.o_proj, model.m1.layers_30.mlp, model.m1.layers_30.mlp.gate_proj, model.m1.layers_30.mlp.up_proj, model.m1.layers_30.mlp.down_proj, model.m1.layers_30.mlp.act_fn, model.m1.layers_30.input_layernorm, model.m1.layers_30.post_attention_layernor, model.m1.layers_31, model.m1.layers_31.self_attn, model.m1.layers_31.self_attn.q_proj, model.m1.layers_31.self_attn.k_proj, model.m1.layers_31.self_attn.v_proj, model.m1.layers_31.self_attn.o_proj, model.m1.layers_31.mlp, model.m1.layers_31.mlp.gate_proj, model.m1.layers_31.mlp.up_proj, model.m1.layers_31.mlp.down_proj, model.m1.layers_31.mlp.act_fn, model.m1.layers_31.input_layernorm, model.m1.layers_31.post_attention_layernor, model.m1.norm, model.m1.rotary_emb, model.lm_head]
    params = [model.lm_head.weight, model.m1.norm.weight, model.m1.layers_31.mlp.down_proj.weigh, model.m1.layers_31.mlp.up_proj.weight, model.m1.layers_31.mlp.gate_proj.weigh, model.m1.layers_31.post_attention_layernor.weight, model.m1.layers_31.self_attn.o_proj.weight, model.m1.layers_31.self_attn.v_proj.weight, model.m1.layers_31.self_attn.k_proj.weight, model.m1.layers_31.self_attn.q_proj.weight, model.m1.layers_31.input_layernorm.weight, model.m1.layers_30.mlp.down_proj.weigh, model.m1.layers_30.mlp.up_proj.weight, model.m1.layers_30.mlp.gate_proj.weigh, model.m1.layers_30.post_attention_layernor.weight, model.m1.layers_30.self_attn.o_proj.weight, model.m1.layers_30.self_attn.v_proj.weight, model.m1.layers_30.self_attn.k_proj.weight, model.m1.layers_30.self_attn.q_proj.weight, model.m1.layers_30.input_layernorm.weight, model.m1.layers_29.mlp.down_proj.weigh, model.m1.layers_29.mlp.up_proj.weight, model.m1.layers_29.mlp.gate_proj.weigh, model.m1.layers_29.post_attention_layernor.weight, model.m1.layers_29.self_attn.o_proj.weight, model.m1.layers_29.self_attn.v_proj.weight, model.m1.layers_29.self_attn.k_proj.weight, model.m1.layers_29.self_attn.q_proj.weight, model.m1.layers_29.input_layernorm.weight, model.m1.layers_28.mlp.down_proj.weigh, model.m1.layers_28.mlp.up_proj.weight, model.m1.layers_28.mlp.gate_proj.weigh, model.m1.layers_28.post_attention_layernor.weight, model.m1.layers_28.self_attn.o_proj.weight, model.m1.layers_28.self_attn.v_proj.weight, model.m1.layers_28.self_attn.k_proj.weight, model.m1.layers_28.self_attn.q_proj.weight, model.m1.layers_28.input_layernorm.weight, model.m1.layers_27.mlp.down_proj.weigh, model.m1.layers_27.mlp.up_proj.weight, model.m1.layers_27.mlp.gate_proj.weigh, model.m1.layers_27.post_attention_layernor.weight, model.m1.layers_27.self_attn.o_proj.weight, model.m1.layers_27.self_attn.v_proj.weight, model.m1.layers_27.self_attn.k_proj.weight, model.m1.layers_27.self_attn.q_proj.weight, model.m1.layers_27.input_layernorm.weight, model.m1.layers_26.mlp.down_proj.weigh, model.m1.layers_26.mlp.up_proj.weight, model.m1.layers_26.mlp.gate_proj.weigh, model.m1.layers_26.post_attention_layernor.weight, model.m1.layers_26.self_attn.o_proj.weight, model.m1.layers_26.self_attn.v_proj.weight, model.m1.layers_26.self_attn.k_proj.weight, model.m1.layers_26.self_attn.q_proj.weight, model.m1.layers_26.input_layernorm.weight, model.m1.layers_25.mlp.down_proj.weigh, model.m1.layers_25.mlp.up_proj.weight, model.m1.layers_25.mlp.gate_proj.weigh, model.m1.layers_25.post_attention_layernor.weight, model.m1.layers_25.self_attn.o_proj.weight, model.m1.layers_25.self_attn.v_proj.weight, model.m1.layers_25.self_attn.k_proj.weight, model.m1.layers_25.self_attn.q_proj.weight, model.m1.layers_25.input_layernorm.weight, model.m1.layers_24.mlp.down_proj.weigh, model.m1.layers_24.mlp.up_proj.weight, model.m1.layers_24.mlp.gate_proj.weigh, model.m1.layers_24.post_attention_layernor.weight, model.m1.layers_24.self_attn.o_proj.weight, model.m1.layers_24.self_attn.v_proj.weight, model.m1.layers_24.self_attn.k_proj.weight, model.m1.layers_24.self_attn.q_proj.weight, model.m1.layers_24.input_layernorm.weight, model.m1.layers_23.mlp.down_proj.weigh, model.m1.layers_23.mlp.up_proj.weight, model.m1.layers_23.mlp.gate_proj.weigh, model.m1.layers_23.post_attention_layernor.weight, model.m1.layers_23.self_attn.o_proj.weight, model.m1.layers_23.self_attn.v_proj.weight, model.m1.layers_23.self_attn.k_proj.weight, model.m1.layers_23.self_attn.q_proj.weight, model.m1.layers_23.input_layernorm.weight, model.m1.layers_22.mlp.down_proj.weigh, model.m1.layers_22.mlp.up_proj.weight, model.m1.layers_22.mlp.gate_proj.weigh, model.m1.layers_22.post_attention_layernor.weight, model.m1.layers_22.self_attn.o_proj.weight, model.m1.layers_22.self_attn.v_proj.weight, model.m1.layers_22.self_attn.k_proj.weight, model.m1.layers_22.self_attn.q_proj.weight, model.m1.layers_22.input_layernorm.weight, model.m1.layers_21.mlp.down_proj.weigh, model.m1.layers_21.mlp.up_proj.weight, model.m1.layers_21.mlp.gate_proj.weigh, model.m1.layers_21.post_attention_layernor.weight, model.m1.layers_21.self_attn.o_proj.weight, model.m1.layers_21.self_attn.v_proj.weight, model.m1.layers_21.self_attn.k_proj.weight, model.m1.layers_21.self_attn.q_proj.weight, model.m1.layers_21.input_layernorm.weight, model.m1.layers_20.mlp.down_proj.weigh, model.m1.layers_20.mlp.up_proj.weight, model.m1.layers_20.mlp.gate_proj.weigh, model.m1.layers_20.post_attention_layernor.weight, model.m1.layers_20.self_attn.o_proj.weight, model.m1.layers_20.self_attn.v_proj.weight, model.m1.layers_20.self_attn.k_proj.weight, model.m1.layers_20.self_attn.q_proj.weight, model.m1.layers_20.input_layernorm.weight, model.m1.layers_19.mlp.down_proj.weigh, model.m1.layers_19.mlp.up_proj.weight, model.m1.layers_19.mlp.gate_proj.weigh, model.m1.layers_19.post_attention_layernor.weight, model.m1.layers_19.self_attn.o_proj.weight, model.m1.layers_19.self_attn.v_proj.weight, model.m1.layers_19.self_attn.k_proj.weight, model.m1.layers_19.self_attn.q_proj.weight, model.m1.layers_19.input_layernorm.weight, model.m1.layers_18.mlp.down_proj.weigh, model.m1.layers_18.mlp.up_proj.weight, model.m1.layers_18.mlp.gate_proj.weigh, model.m1.layers_18.post_attention_layernor.weight, model.m1.layers_18.self_attn.o_proj.weight, model.m1.layers_18.self_attn.v_proj.weight, model.m1.layers_18.self_attn.k_proj.weight, model.m1.layers_18.self_attn.q_proj.weight, model.m1.layers_18.input_layernorm.weight, model.m1.layers_17.mlp.down_proj.weigh, model.m1.layers_17.mlp.up_proj.weight, model.m1.layers_17.mlp.gate_proj.weigh, model.m1.layers_17.post_attention_layernor.weight, model.m1.layers_17.self_attn.o_proj.weight, model.m1.layers_17.self_attn.v_proj.weight, model.m1.layers_17.self_attn.k_proj.weight, model.m1.layers_17.self_attn.q_proj.weight, model.m1.layers_17.input_layernorm.weight, model.m1.layers_16.mlp.down_proj.weigh, model.m1.layers_16.mlp.up_proj.weight, model.m1.layers_16.mlp.gate_proj.weigh, model.m1.layers_16.post_attention_layernor.weight, model.m1.layers_16.self_attn.o_proj.weight, model.m1.layers_16.self_attn.v_proj.weight, model.m1.layers_16.self_attn.k_proj.weight, model.m1.layers_16.self_attn.q_proj.weight, model.m1.layers_16.input_layernorm.weight, model.m1.layers_15.mlp.down_proj.weigh, model.m1.layers_15.mlp.up_proj.weight, model.m1.layers_15.mlp.gate_proj.weigh, model.m1.layers_15.post_attention_layernor.weight, model.m1.layers_15.self_attn.o_proj.weight, model.m1.layers_15.self_attn.v_proj.weight, model.m1.layers_15.self_attn.k_proj.weight, model.m1.layers_15.self_attn.q_proj.weight, model.m1.layers_15.input_layernorm.weight, model.m1.layers_14.mlp.down_proj.weigh, model.m1.layers_14.mlp.up_proj.weight, model.m1.layers_14.mlp.gate_proj.weigh, model.m1.layers_14.post_attention_layernor.weight, model.m1.layers_14.self_attn.o_proj.weight, model.m1.layers_14.self_attn.v_proj.weight, model.m1.layers_14.self_attn.k_proj.weight, model.m1.layers_14.self_attn.q_proj.weight, model.m1.layers_14.input_layernorm.weight, model.m1.layers_13.mlp.down_proj.weigh, model.m1.layers_13.mlp.up_proj.weight, model.m1.layers_13.mlp.gate_proj.weigh, model.m1.layers_13.post_attention_layernor.weight, model.m1.layers_13.self_attn.o_proj.weight, model.m1.layers_13.self_attn.v_proj.weight, model.m1.layers_13.self_attn.k_proj.weight, model.m1.layers_13.self_attn.q_proj.weight, model.m1.layers_13.input_layernorm.weight, model.m1.layers_12.mlp.down_proj.weigh, model.m1.layers_12.mlp.up_proj.weight, model.m1.layers_12.mlp.gate_proj.weigh, model.m1.layers_12.post_attention_layernor.weight, model.m1.layers_12.self_attn.o_proj.weight, model.m1.layers_12.self_attn.v_proj.weight, model.m1.layers_12.self_attn.k_proj.weight, model.m1.layers_12.self_attn.q_proj.weight, model.m1.layers_12.input_layernorm.weight, model.m1.layers_11.mlp.down_proj.weigh, model.m1.layers_11.mlp.up_proj.weight, model.m1.layers_11.mlp.gate_proj.weigh, model.m1.layers_11.post_attention_layernor.weight, model.m1.layers_11.self_attn.o_proj.weight, model.m1.layers_11.self_attn.v_proj.weight, model.m1.layers_11.self_attn.k_proj.weight, model.m1.layers_11.self_attn.q_proj.weight, model.m1.layers_11.input_layernorm.weight, model.m1.layers_10.mlp.down_proj.weigh, model.m1.layers_10.mlp.up_proj.weight, model.m1.layers_10.mlp.gate_proj.weigh, model.m1.layers_10.post_attention_layernor.weight, model.m1.layers_10.self_attn.o_proj.weight, model.m1.layers_10.self_attn.v_proj.weight, model.m1.layers_10.self_attn.k_proj.weight, model.m1.layers_10.self_attn.q_proj.weight, model.m1.layers_10.input_layernorm.weight, model.m1.layers_9.mlp.down_proj.weight, model.m1.layers_9.mlp.up_proj.weight, model.m1.layers_9.mlp.gate_proj.weight, model.m1.layers_9.post_attention_layernor.weight, model.m1.layers_9.self_attn.o_proj.weight, model.m1.layers_9.self_attn.v_proj.weight, model.m1.layers_9.self_attn.k_proj.weight, model.m1.layers_9.self_attn.q_proj.weight, model.m1.layers_9.input_layernorm.weight, model.m1.layers_8.mlp.down_proj.weight, model.m1.layers_8.mlp.up_proj.weight, model.m1.layers_8.mlp.gate_proj.weight, model.m1.layers_8.post_attention_layernor.weight, model.m1.layers_8.self_attn.o_proj.weight, model.m1.layers_8.self_attn.v_proj.weight, model.m1.layers_8.self_attn.k_proj.weight, model.m1.layers_8.self_attn.q_proj.weight, model.m1.layers_8.input_layernorm.weight, model.m1.layers_7.mlp.down_proj.weight, model.m1.layers_7.mlp.up_proj.weight, model.m1.layers_7.mlp.gate_proj.weight, model.m1.layers_7.post_attention_layernor.weight, model.m1.layers_7.self_attn.o_proj.weight, model.m1.layers_7.self_attn.v_proj.weight, model.m1.layers_7.self_attn.k_proj.weight, model.m1.layers_7.self_attn.q_proj.weight, model.m1.layers_7.input_layernorm.weight, model.m1.layers_6.mlp.down_proj.weight, model.m1.layers_6.mlp.up_proj.weight, model.m1.layers_6.mlp.gate_proj.weight, model.m1.layers_6.post_attention_layernor.weight, model.m1.layers_6.self_attn.o_proj.weight, model.m1.layers_6.self_attn.v_proj.weight, model.m1.layers_6.self_attn.k_proj.weight, model.m1.layers_6.self_attn.q_proj.weight, model.m1.layers_6.input_layernorm.weight, model.m1.layers_5.mlp.down_proj.weight, model.m1.layers_5.mlp.up_proj.weight, model.m1.layers_5.mlp.gate_proj.weight, model.m1.layers_5.post_attention_layernor.weight, model.m1.layers_5.self_attn.o_proj.weight, model.m1.layers_5.self_attn.v_proj.weight, model.m1.layers_5.self_attn.k_proj.weight, model.m1.layers_5.self_attn.q_proj.weight, model.m1.layers_5.input_layernorm.weight, model.m1.layers_4.mlp.down_proj.weight, model.m1.layers_4.mlp.up_proj.weight, model.m1.layers_4.mlp.gate_proj.weight, model.m1.layers_4.post_attention_layernor.weight, model.m1.layers_4.self_attn.o_proj.weight, model.m1.layers_4.self_attn.v_proj.weight, model.m1.layers_4.self_attn.k_proj.weight, model.m1.layers_4.self_attn.q_proj.weight, model.m1.layers_4.input_layernorm.weight, model.m1.layers_3.mlp.down_proj.weight, model.m1.layers_3.mlp.up_proj.weight, model.m1.layers_3.mlp.gate_proj.weight, model.m1.layers_3.post_attention_layernor.weight, model.m1.layers_3.self_attn.o_proj.weight, model.m1.layers_3.self_attn.v_proj.weight, model.m1.layers_3.self_attn.k_proj.weight, model.m1.layers_3.self_attn.q_proj.weight, model.m1.layers_3.input_layernorm.weight, model.m1.layers_2.mlp.down_proj.weight, model.m1.layers_2.mlp.up_proj.weight, model.m1.layers_2.mlp.gate_proj.weight, model.m1.layers_2.post_attention_layernor.weight, model.m1.layers_2.self_attn.o_proj.weight, model.m1.layers_2.self_attn.v_proj.weight, model.m1.layers_2.self_attn.k_proj.weight, model.m1.layers_2.self_attn.q_proj.weight, model.m1.layers_2.input_layernorm.weight, model.m1.layers_1.mlp.down_proj.weight, model.m1.layers_1.mlp.up_proj.weight, model.m1.layers_1.mlp.gate_proj.weight, model.m1.layers_1.post_attention_layernor.weight, model.m1.layers_1.self_attn.o_proj.weight, model.m1.layers_1.self_attn.v_proj.weight, model.m1.layers_1.self_attn.k_proj.weight, model.m1.layers_1.self_attn.q_proj.weight, model.m1.layers_1.input_layernorm.weight, model.m1.layers_0.mlp.down_proj.weight, model.m1.layers_0.mlp.up_proj.weight, model.m1.layers_0.mlp.gate_proj.weight, model.m1.layers_0.post_attention_layernor.weight, model.m1.layers_0.self_attn.o_proj.weight, model.m1.layers_0.self_attn.v_proj.weight, model.m1.layers_0.self_attn.k_proj.weight, model.m1.layers_0.self_attn.q_proj.weight, model.m1.layers_0.input_layernorm.weight, model.m1.embed_tokens.weight]
    return modules, params


MODULE_IDS = {"LlamaForCausalLM": 0, "model": 1, "model.embed_tokens": 2, "model.layers": 3, "model.layers.0": 4, "layers.0.self_attn": 5, "l0.self_attn.q_proj": 6, "l0.self_attn.k_proj": 7, "l0.self_attn.v_proj": 8, "l0.self_attn.o_proj": 9, "model.layers.0.mlp": 10, "layers.0.mlp.gate_proj": 11, "layers.0.mlp.up_proj": 12, "layers.0.mlp.down_proj": 13, "layers.0.mlp.act_fn": 14, "l0.input_layernorm": 15, "@16": 16, "model.layers.1": 17, "layers.1.self_attn": 18, "l1.self_attn.q_proj": 19, "l1.self_attn.k_proj": 20, "l1.self_attn.v_proj": 21, "l1.self_attn.o_proj": 22, "model.layers.1.mlp": 23, "layers.1.mlp.gate_proj": 24, "layers.1.mlp.up_proj": 25, "layers.1.mlp.down_proj": 26, "layers.1.mlp.act_fn": 27, "l1.input_layernorm": 28, "@29": 29, "model.layers.2": 30, "layers.2.self_attn": 31, "l2.self_attn.q_proj": 32, "l2.self_attn.k_proj": 33, "l2.self_attn.v_proj": 34, "l2.self_attn.o_proj": 35, "model.layers.2.mlp": 36, "layers.2.mlp.gate_proj": 37, "layers.2.mlp.up_proj": 38, "layers.2.mlp.down_proj": 39, "layers.2.mlp.act_fn": 40, "l2.input_layernorm": 41, "@42": 42, "model.layers.3": 43, "layers.3.self_attn": 44, "l3.self_attn.q_proj": 45, "l3.self_attn.k_proj": 46, "l3.self_attn.v_proj": 47, "l3.self_attn.o_proj": 48, "model.layers.3.mlp": 49, "layers.3.mlp.gate_proj": 50, "layers.3.mlp.up_proj": 51, "layers.3.mlp.down_proj": 52, "layers.3.mlp.act_fn": 53, "l3.input_layernorm": 54, "@55": 55, "model.layers.4": 56, "layers.4.self_attn": 57, "l4.self_attn.q_proj": 58, "l4.self_attn.k_proj": 59, "l4.self_attn.v_proj": 60, "l4.self_attn.o_proj": 61, "model.layers.4.mlp": 62, "layers.4.mlp.gate_proj": 63, "layers.4.mlp.up_proj": 64, "layers.4.mlp.down_proj": 65, "layers.4.mlp.act_fn": 66, "l4.input_layernorm": 67, "@68": 68, "model.layers.5": 69, "layers.5.self_attn": 70, "l5.self_attn.q_proj": 71, "l5.self_attn.k_proj": 72, "l5.self_attn.v_proj": 73, "l5.self_attn.o_proj": 74, "model.layers.5.mlp": 75, "layers.5.mlp.gate_proj": 76, "layers.5.mlp.up_proj": 77, "layers.5.mlp.down_proj": 78, "layers.5.mlp.act_fn": 79, "l5.input_layernorm": 80, "@81": 81, "model.layers.6": 82, "layers.6.self_attn": 83, "l6.self_attn.q_proj": 84, "l6.self_attn.k_proj": 85, "l6.self_attn.v_proj": 86, "l6.self_attn.o_proj": 87, "model.layers.6.mlp": 88, "layers.6.mlp.gate_proj": 89, "layers.6.mlp.up_proj": 90, "layers.6.mlp.down_proj": 91, "layers.6.mlp.act_fn": 92, "l6.input_layernorm": 93, "@94": 94, "model.layers.7": 95, "layers.7.self_attn": 96, "l7.self_attn.q_proj": 97, "l7.self_attn.k_proj": 98, "l7.self_attn.v_proj": 99, "l7.self_attn.o_proj": 100, "model.layers.7.mlp": 101, "layers.7.mlp.gate_proj": 102, "layers.7.mlp.up_proj": 103, "layers.7.mlp.down_proj": 104, "layers.7.mlp.act_fn": 105, "l7.input_layernorm": 106, "@107": 107, "model.layers.8": 108, "layers.8.self_attn": 109, "l8.self_attn.q_proj": 110, "l8.self_attn.k_proj": 111, "l8.self_attn.v_proj": 112, "l8.self_attn.o_proj": 113, "model.layers.8.mlp": 114, "layers.8.mlp.gate_proj": 115, "layers.8.mlp.up_proj": 116, "layers.8.mlp.down_proj": 117, "layers.8.mlp.act_fn": 118, "l8.input_layernorm": 119, "@120": 120, "model.layers.9": 121, "layers.9.self_attn": 122, "l9.self_attn.q_proj": 123, "l9.self_attn.k_proj": 124, "l9.self_attn.v_proj": 125, "l9.self_attn.o_proj": 126, "model.layers.9.mlp": 127, "layers.9.mlp.gate_proj": 128, "layers.9.mlp.up_proj": 129, "layers.9.mlp.down_proj": 130, "layers.9.mlp.act_fn": 131, "l9.input_layernorm": 132, "@133": 133, "model.layers.10": 134, "layers.10.self_attn": 135, "l10.self_attn.q_proj": 136, "l10.self_attn.k_proj": 137, "l10.self_attn.v_proj": 138, "l10.self_attn.o_proj": 139, "model.layers.10.mlp": 140, "layers.10.mlp.gate_proj": 141, "layers.10.mlp.up_proj": 142, "layers.10.mlp.down_proj": 143, "layers.10.mlp.act_fn": 144, "l10.input_layernorm": 145, "@146": 146, "model.layers.11": 147, "layers.11.self_attn": 148, "l11.self_attn.q_proj": 149, "l11.self_attn.k_proj": 150, "l11.self_attn.v_proj": 151, "l11.self_attn.o_proj": 152, "model.layers.11.mlp": 153, "layers.11.mlp.gate_proj": 154, "layers.11.mlp.up_proj": 155, "layers.11.mlp.down_proj": 156, "layers.11.mlp.act_fn": 157, "l11.input_layernorm": 158, "@159": 159, "model.layers.12": 160, "layers.12.self_attn": 161, "l12.self_attn.q_proj": 162, "l12.self_attn.k_proj": 163, "l12.self_attn.v_proj": 164, "l12.self_attn.o_proj": 165, "model.layers.12.mlp": 166, "layers.12.mlp.gate_proj": 167, "layers.12.mlp.up_proj": 168, "layers.12.mlp.down_proj": 169, "layers.12.mlp.act_fn": 170, "l12.input_layernorm": 171, "@172": 172, "model.layers.13": 173, "layers.13.self_attn": 174, "l13.self_attn.q_proj": 175, "l13.self_attn.k_proj": 176, "l13.self_attn.v_proj": 177, "l13.self_attn.o_proj": 178, "model.layers.13.mlp": 179, "layers.13.mlp.gate_proj": 180, "layers.13.mlp.up_proj": 181, "layers.13.mlp.down_proj": 182, "layers.13.mlp.act_fn": 183, "l13.input_layernorm": 184, "@185": 185, "model.layers.14": 186, "layers.14.self_attn": 187, "l14.self_attn.q_proj": 188, "l14.self_attn.k_proj": 189, "l14.self_attn.v_proj": 190, "l14.self_attn.o_proj": 191, "model.layers.14.mlp": 192, "layers.14.mlp.gate_proj": 193, "layers.14.mlp.up_proj": 194, "layers.14.mlp.down_proj": 195, "layers.14.mlp.act_fn": 196, "l14.input_layernorm": 197, "@198": 198, "model.layers.15": 199, "layers.15.self_attn": 200, "l15.self_attn.q_proj": 201, "l15.self_attn.k_proj": 202, "l15.self_attn.v_proj": 203, "l15.self_attn.o_proj": 204, "model.layers.15.mlp": 205, "layers.15.mlp.gate_proj": 206, "layers.15.mlp.up_proj": 207, "layers.15.mlp.down_proj": 208, "layers.15.mlp.act_fn": 209, "l15.input_layernorm": 210, "@211": 211, "model.layers.16": 212, "layers.16.self_attn": 213, "l16.self_attn.q_proj": 214, "l16.self_attn.k_proj": 215, "l16.self_attn.v_proj": 216, "l16.self_attn.o_proj": 217, "model.layers.16.mlp": 218, "layers.16.mlp.gate_proj": 219, "layers.16.mlp.up_proj": 220, "layers.16.mlp.down_proj": 221, "layers.16.mlp.act_fn": 222, "l16.input_layernorm": 223, "@224": 224, "model.layers.17": 225, "layers.17.self_attn": 226, "l17.self_attn.q_proj": 227, "l17.self_attn.k_proj": 228, "l17.self_attn.v_proj": 229, "l17.self_attn.o_proj": 230, "model.layers.17.mlp": 231, "layers.17.mlp.gate_proj": 232, "layers.17.mlp.up_proj": 233, "layers.17.mlp.down_proj": 234, "layers.17.mlp.act_fn": 235, "l17.input_layernorm": 236, "@237": 237, "model.layers.18": 238, "layers.18.self_attn": 239, "l18.self_attn.q_proj": 240, "l18.self_attn.k_proj": 241, "l18.self_attn.v_proj": 242, "l18.self_attn.o_proj": 243, "model.layers.18.mlp": 244, "layers.18.mlp.gate_proj": 245, "layers.18.mlp.up_proj": 246, "layers.18.mlp.down_proj": 247, "layers.18.mlp.act_fn": 248, "l18.input_layernorm": 249, "@250": 250, "model.layers.19": 251, "layers.19.self_attn": 252, "l19.self_attn.q_proj": 253, "l19.self_attn.k_proj": 254, "l19.self_attn.v_proj": 255, "l19.self_attn.o_proj": 256, "model.layers.19.mlp": 257, "layers.19.mlp.gate_proj": 258, "layers.19.mlp.up_proj": 259, "layers.19.mlp.down_proj": 260, "layers.19.mlp.act_fn": 261, "l19.input_layernorm": 262, "@263": 263, "model.layers.20": 264, "layers.20.self_attn": 265, "l20.self_attn.q_proj": 266, "l20.self_attn.k_proj": 267, "l20.self_attn.v_proj": 268, "l20.self_attn.o_proj": 269, "model.layers.20.mlp": 270, "layers.20.mlp.gate_proj": 271, "layers.20.mlp.up_proj": 272, "layers.20.mlp.down_proj": 273, "layers.20.mlp.act_fn": 274, "l20.input_layernorm": 275, "@276": 276, "model.layers.21": 277, "layers.21.self_attn": 278, "l21.self_attn.q_proj": 279, "l21.self_attn.k_proj": 280, "l21.self_attn.v_proj": 281, "l21.self_attn.o_proj": 282, "model.layers.21.mlp": 283, "layers.21.mlp.gate_proj": 284, "layers.21.mlp.up_proj": 285, "layers.21.mlp.down_proj": 286, "layers.21.mlp.act_fn": 287, "l21.input_layernorm": 288, "@289": 289, "model.layers.22": 290, "layers.22.self_attn": 291, "l22.self_attn.q_proj": 292, "l22.self_attn.k_proj": 293, "l22.self_attn.v_proj": 294, "l22.self_attn.o_proj": 295, "model.layers.22.mlp": 296, "layers.22.mlp.gate_proj": 297, "layers.22.mlp.up_proj": 298, "layers.22.mlp.down_proj": 299, "layers.22.mlp.act_fn": 300, "l22.input_layernorm": 301, "@302": 302, "model.layers.23": 303, "layers.23.self_attn": 304, "l23.self_attn.q_proj": 305, "l23.self_attn.k_proj": 306, "l23.self_attn.v_proj": 307, "l23.self_attn.o_proj": 308, "model.layers.23.mlp": 309, "layers.23.mlp.gate_proj": 310, "layers.23.mlp.up_proj": 311, "layers.23.mlp.down_proj": 312, "layers.23.mlp.act_fn": 313, "l23.input_layernorm": 314, "@315": 315, "model.layers.24": 316, "layers.24.self_attn": 317, "l24.self_attn.q_proj": 318, "l24.self_attn.k_proj": 319, "l24.self_attn.v_proj": 320, "l24.self_attn.o_proj": 321, "model.layers.24.mlp": 322, "layers.24.mlp.gate_proj": 323, "layers.24.mlp.up_proj": 324, "layers.24.mlp.down_proj": 325, "layers.24.mlp.act_fn": 326, "l24.input_layernorm": 327, "@328": 328, "model.layers.25": 329, "layers.25.self_attn": 330, "l25.self_attn.q_proj": 331, "l25.self_attn.k_proj": 332, "l25.self_attn.v_proj": 333, "l25.self_attn.o_proj": 334, "model.layers.25.mlp": 335, "layers.25.mlp.gate_proj": 336, "layers.25.mlp.up_proj": 337, "layers.25.mlp.down_proj": 338, "layers.25.mlp.act_fn": 339, "l25.input_layernorm": 340, "@341": 341, "model.layers.26": 342, "layers.26.self_attn": 343, "l26.self_attn.q_proj": 344, "l26.self_attn.k_proj": 345, "l26.self_attn.v_proj": 346, "l26.self_attn.o_proj": 347, "model.layers.26.mlp": 348, "layers.26.mlp.gate_proj": 349, "layers.26.mlp.up_proj": 350, "layers.26.mlp.down_proj": 351, "layers.26.mlp.act_fn": 352, "l26.input_layernorm": 353, "@354": 354, "model.layers.27": 355, "layers.27.self_attn": 356, "l27.self_attn.q_proj": 357, "l27.self_attn.k_proj": 358, "l27.self_attn.v_proj": 359, "l27.self_attn.o_proj": 360, "model.layers.27.mlp": 361, "layers.27.mlp.gate_proj": 362, "layers.27.mlp.up_proj": 363, "layers.27.mlp.down_proj": 364, "layers.27.mlp.act_fn": 365, "l27.input_layernorm": 366, "@367": 367, "model.layers.28": 368, "layers.28.self_attn": 369, "l28.self_attn.q_proj": 370, "l28.self_attn.k_proj": 371, "l28.self_attn.v_proj": 372, "l28.self_attn.o_proj": 373, "model.layers.28.mlp": 374, "layers.28.mlp.gate_proj": 375, "layers.28.mlp.up_proj": 376, "layers.28.mlp.down_proj": 377, "layers.28.mlp.act_fn": 378, "l28.input_layernorm": 379, "@380": 380, "model.layers.29": 381, "layers.29.self_attn": 382, "l29.self_attn.q_proj": 383, "l29.self_attn.k_proj": 384, "l29.self_attn.v_proj": 385, "l29.self_attn.o_proj": 386, "model.layers.29.mlp": 387, "layers.29.mlp.gate_proj": 388, "layers.29.mlp.up_proj": 389, "layers.29.mlp.down_proj": 390, "layers.29.mlp.act_fn": 391, "l29.input_layernorm": 392, "@393": 393, "model.layers.30": 394, "layers.30.self_attn": 395, "l30.self_attn.q_proj": 396, "l30.self_attn.k_proj": 397, "l30.self_attn.v_proj": 398, "l30.self_attn.o_proj": 399, "model.layers.30.mlp": 400, "layers.30.mlp.gate_proj": 401, "layers.30.mlp.up_proj": 402, "layers.30.mlp.down_proj": 403, "layers.30.mlp.act_fn": 404, "l30.input_layernorm": 405, "@406": 406, "model.layers.31": 407, "layers.31.self_attn": 408, "l31.self_attn.q_proj": 409, "l31.self_attn.k_proj": 410, "l31.self_attn.v_proj": 411, "l31.self_attn.o_proj": 412, "model.layers.31.mlp": 413, "layers.31.mlp.gate_proj": 414, "layers.31.mlp.up_proj": 415, "layers.31.mlp.down_proj": 416, "layers.31.mlp.act_fn": 417, "l31.input_layernorm": 418, "@419": 419, "model.norm": 420, "model.rotary_emb": 421, "lm_head": 422}
PARAM_NAMES = ["lm_head.weight", "model.norm.weight", "l31.mlp.down_proj.weigh", "l31.mlp.up_proj.weight", "l31.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l30.mlp.down_proj.weigh", "l30.mlp.up_proj.weight", "l30.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l29.mlp.down_proj.weigh", "l29.mlp.up_proj.weight", "l29.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l28.mlp.down_proj.weigh", "l28.mlp.up_proj.weight", "l28.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l27.mlp.down_proj.weigh", "l27.mlp.up_proj.weight", "l27.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l26.mlp.down_proj.weigh", "l26.mlp.up_proj.weight", "l26.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l25.mlp.down_proj.weigh", "l25.mlp.up_proj.weight", "l25.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l24.mlp.down_proj.weigh", "l24.mlp.up_proj.weight", "l24.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l23.mlp.down_proj.weigh", "l23.mlp.up_proj.weight", "l23.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l22.mlp.down_proj.weigh", "l22.mlp.up_proj.weight", "l22.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l21.mlp.down_proj.weigh", "l21.mlp.up_proj.weight", "l21.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l20.mlp.down_proj.weigh", "l20.mlp.up_proj.weight", "l20.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l19.mlp.down_proj.weigh", "l19.mlp.up_proj.weight", "l19.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l18.mlp.down_proj.weigh", "l18.mlp.up_proj.weight", "l18.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l17.mlp.down_proj.weigh", "l17.mlp.up_proj.weight", "l17.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l16.mlp.down_proj.weigh", "l16.mlp.up_proj.weight", "l16.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l15.mlp.down_proj.weigh", "l15.mlp.up_proj.weight", "l15.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l14.mlp.down_proj.weigh", "l14.mlp.up_proj.weight", "l14.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l13.mlp.down_proj.weigh", "l13.mlp.up_proj.weight", "l13.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l12.mlp.down_proj.weigh", "l12.mlp.up_proj.weight", "l12.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l11.mlp.down_proj.weigh", "l11.mlp.up_proj.weight", "l11.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l10.mlp.down_proj.weigh", "l10.mlp.up_proj.weight", "l10.mlp.gate_proj.weigh", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l9.mlp.down_proj.weight", "l9.mlp.up_proj.weight", "l9.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l8.mlp.down_proj.weight", "l8.mlp.up_proj.weight", "l8.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l7.mlp.down_proj.weight", "l7.mlp.up_proj.weight", "l7.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l6.mlp.down_proj.weight", "l6.mlp.up_proj.weight", "l6.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l5.mlp.down_proj.weight", "l5.mlp.up_proj.weight", "l5.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l4.mlp.down_proj.weight", "l4.mlp.up_proj.weight", "l4.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l3.mlp.down_proj.weight", "l3.mlp.up_proj.weight", "l3.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l2.mlp.down_proj.weight", "l2.mlp.up_proj.weight", "l2.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l1.mlp.down_proj.weight", "l1.mlp.up_proj.weight", "l1.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "l0.mlp.down_proj.weight", "l0.mlp.up_proj.weight", "l0.mlp.gate_proj.weight", "weight", "self_attn.o_proj.weight", "self_attn.v_proj.weight", "self_attn.k_proj.weight", "self_attn.q_proj.weight", "input_layernorm.weight", "embed_tokens.weight"]
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
            (0, None, "LlamaForCausalLM", [], 2, ["out1.0"], ["alias1=out1.0"]),
              (1, 0, "model", [], 1, [], ["alias0=out34.0"]),
                (2, 1, "model.embed_tokens", ["batch"], 1, [], []),
                (3, 1, "model.rotary_emb", ["out0.0"], 2, [], ["nograd=0", "nograd=1"]),
                (4, 1, "model.layers.0", ["out0.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (5, 4, "l0.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (6, 4, "layers.0.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (7, 6, "l0.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (8, 6, "l0.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (9, 6, "l0.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (10, 6, "l0.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (11, 4, "@16", ["arg0+out1.0"], 1, ["arg0"], []),
                  (12, 4, "model.layers.0.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (13, 12, "layers.0.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (14, 12, "layers.0.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (15, 12, "layers.0.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (16, 12, "layers.0.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (17, 1, "model.layers.1", ["out2.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (18, 17, "l1.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (19, 17, "layers.1.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (20, 19, "l1.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (21, 19, "l1.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (22, 19, "l1.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (23, 19, "l1.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (24, 17, "@29", ["arg0+out1.0"], 1, ["arg0"], []),
                  (25, 17, "model.layers.1.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (26, 25, "layers.1.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (27, 25, "layers.1.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (28, 25, "layers.1.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (29, 25, "layers.1.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (30, 1, "model.layers.2", ["out3.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (31, 30, "l2.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (32, 30, "layers.2.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (33, 32, "l2.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (34, 32, "l2.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (35, 32, "l2.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (36, 32, "l2.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (37, 30, "@42", ["arg0+out1.0"], 1, ["arg0"], []),
                  (38, 30, "model.layers.2.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (39, 38, "layers.2.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (40, 38, "layers.2.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (41, 38, "layers.2.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (42, 38, "layers.2.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (43, 1, "model.layers.3", ["out4.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (44, 43, "l3.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (45, 43, "layers.3.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (46, 45, "l3.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (47, 45, "l3.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (48, 45, "l3.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (49, 45, "l3.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (50, 43, "@55", ["arg0+out1.0"], 1, ["arg0"], []),
                  (51, 43, "model.layers.3.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (52, 51, "layers.3.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (53, 51, "layers.3.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (54, 51, "layers.3.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (55, 51, "layers.3.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (56, 1, "model.layers.4", ["out5.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (57, 56, "l4.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (58, 56, "layers.4.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (59, 58, "l4.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (60, 58, "l4.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (61, 58, "l4.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (62, 58, "l4.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (63, 56, "@68", ["arg0+out1.0"], 1, ["arg0"], []),
                  (64, 56, "model.layers.4.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (65, 64, "layers.4.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (66, 64, "layers.4.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (67, 64, "layers.4.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (68, 64, "layers.4.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (69, 1, "model.layers.5", ["out6.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (70, 69, "l5.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (71, 69, "layers.5.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (72, 71, "l5.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (73, 71, "l5.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (74, 71, "l5.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (75, 71, "l5.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (76, 69, "@81", ["arg0+out1.0"], 1, ["arg0"], []),
                  (77, 69, "model.layers.5.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (78, 77, "layers.5.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (79, 77, "layers.5.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (80, 77, "layers.5.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (81, 77, "layers.5.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (82, 1, "model.layers.6", ["out7.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (83, 82, "l6.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (84, 82, "layers.6.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (85, 84, "l6.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (86, 84, "l6.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (87, 84, "l6.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (88, 84, "l6.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (89, 82, "@94", ["arg0+out1.0"], 1, ["arg0"], []),
                  (90, 82, "model.layers.6.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (91, 90, "layers.6.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (92, 90, "layers.6.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (93, 90, "layers.6.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (94, 90, "layers.6.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (95, 1, "model.layers.7", ["out8.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (96, 95, "l7.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (97, 95, "layers.7.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (98, 97, "l7.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (99, 97, "l7.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (100, 97, "l7.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (101, 97, "l7.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (102, 95, "@107", ["arg0+out1.0"], 1, ["arg0"], []),
                  (103, 95, "model.layers.7.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (104, 103, "layers.7.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (105, 103, "layers.7.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (106, 103, "layers.7.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (107, 103, "layers.7.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (108, 1, "model.layers.8", ["out9.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (109, 108, "l8.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (110, 108, "layers.8.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (111, 110, "l8.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (112, 110, "l8.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (113, 110, "l8.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (114, 110, "l8.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (115, 108, "@120", ["arg0+out1.0"], 1, ["arg0"], []),
                  (116, 108, "model.layers.8.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (117, 116, "layers.8.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (118, 116, "layers.8.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (119, 116, "layers.8.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (120, 116, "layers.8.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (121, 1, "model.layers.9", ["out10.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (122, 121, "l9.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (123, 121, "layers.9.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (124, 123, "l9.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (125, 123, "l9.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (126, 123, "l9.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (127, 123, "l9.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (128, 121, "@133", ["arg0+out1.0"], 1, ["arg0"], []),
                  (129, 121, "model.layers.9.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (130, 129, "layers.9.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (131, 129, "layers.9.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (132, 129, "layers.9.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (133, 129, "layers.9.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (134, 1, "model.layers.10", ["out11.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (135, 134, "l10.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (136, 134, "layers.10.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (137, 136, "l10.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (138, 136, "l10.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (139, 136, "l10.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (140, 136, "l10.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (141, 134, "@146", ["arg0+out1.0"], 1, ["arg0"], []),
                  (142, 134, "model.layers.10.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (143, 142, "layers.10.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (144, 142, "layers.10.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (145, 142, "layers.10.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (146, 142, "layers.10.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (147, 1, "model.layers.11", ["out12.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (148, 147, "l11.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (149, 147, "layers.11.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (150, 149, "l11.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (151, 149, "l11.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (152, 149, "l11.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (153, 149, "l11.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (154, 147, "@159", ["arg0+out1.0"], 1, ["arg0"], []),
                  (155, 147, "model.layers.11.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (156, 155, "layers.11.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (157, 155, "layers.11.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (158, 155, "layers.11.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (159, 155, "layers.11.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (160, 1, "model.layers.12", ["out13.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (161, 160, "l12.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (162, 160, "layers.12.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (163, 162, "l12.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (164, 162, "l12.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (165, 162, "l12.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (166, 162, "l12.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (167, 160, "@172", ["arg0+out1.0"], 1, ["arg0"], []),
                  (168, 160, "model.layers.12.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (169, 168, "layers.12.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (170, 168, "layers.12.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (171, 168, "layers.12.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (172, 168, "layers.12.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (173, 1, "model.layers.13", ["out14.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (174, 173, "l13.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (175, 173, "layers.13.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (176, 175, "l13.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (177, 175, "l13.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (178, 175, "l13.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (179, 175, "l13.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (180, 173, "@185", ["arg0+out1.0"], 1, ["arg0"], []),
                  (181, 173, "model.layers.13.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (182, 181, "layers.13.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (183, 181, "layers.13.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (184, 181, "layers.13.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (185, 181, "layers.13.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (186, 1, "model.layers.14", ["out15.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (187, 186, "l14.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (188, 186, "layers.14.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (189, 188, "l14.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (190, 188, "l14.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (191, 188, "l14.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (192, 188, "l14.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (193, 186, "@198", ["arg0+out1.0"], 1, ["arg0"], []),
                  (194, 186, "model.layers.14.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (195, 194, "layers.14.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (196, 194, "layers.14.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (197, 194, "layers.14.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (198, 194, "layers.14.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (199, 1, "model.layers.15", ["out16.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (200, 199, "l15.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (201, 199, "layers.15.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (202, 201, "l15.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (203, 201, "l15.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (204, 201, "l15.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (205, 201, "l15.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (206, 199, "@211", ["arg0+out1.0"], 1, ["arg0"], []),
                  (207, 199, "model.layers.15.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (208, 207, "layers.15.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (209, 207, "layers.15.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (210, 207, "layers.15.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (211, 207, "layers.15.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (212, 1, "model.layers.16", ["out17.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (213, 212, "l16.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (214, 212, "layers.16.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (215, 214, "l16.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (216, 214, "l16.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (217, 214, "l16.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (218, 214, "l16.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (219, 212, "@224", ["arg0+out1.0"], 1, ["arg0"], []),
                  (220, 212, "model.layers.16.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (221, 220, "layers.16.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (222, 220, "layers.16.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (223, 220, "layers.16.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (224, 220, "layers.16.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (225, 1, "model.layers.17", ["out18.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (226, 225, "l17.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (227, 225, "layers.17.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (228, 227, "l17.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (229, 227, "l17.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (230, 227, "l17.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (231, 227, "l17.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (232, 225, "@237", ["arg0+out1.0"], 1, ["arg0"], []),
                  (233, 225, "model.layers.17.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (234, 233, "layers.17.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (235, 233, "layers.17.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (236, 233, "layers.17.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (237, 233, "layers.17.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (238, 1, "model.layers.18", ["out19.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (239, 238, "l18.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (240, 238, "layers.18.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (241, 240, "l18.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (242, 240, "l18.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (243, 240, "l18.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (244, 240, "l18.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (245, 238, "@250", ["arg0+out1.0"], 1, ["arg0"], []),
                  (246, 238, "model.layers.18.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (247, 246, "layers.18.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (248, 246, "layers.18.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (249, 246, "layers.18.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (250, 246, "layers.18.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (251, 1, "model.layers.19", ["out20.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (252, 251, "l19.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (253, 251, "layers.19.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (254, 253, "l19.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (255, 253, "l19.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (256, 253, "l19.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (257, 253, "l19.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (258, 251, "@263", ["arg0+out1.0"], 1, ["arg0"], []),
                  (259, 251, "model.layers.19.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (260, 259, "layers.19.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (261, 259, "layers.19.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (262, 259, "layers.19.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (263, 259, "layers.19.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (264, 1, "model.layers.20", ["out21.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (265, 264, "l20.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (266, 264, "layers.20.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (267, 266, "l20.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (268, 266, "l20.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (269, 266, "l20.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (270, 266, "l20.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (271, 264, "@276", ["arg0+out1.0"], 1, ["arg0"], []),
                  (272, 264, "model.layers.20.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (273, 272, "layers.20.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (274, 272, "layers.20.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (275, 272, "layers.20.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (276, 272, "layers.20.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (277, 1, "model.layers.21", ["out22.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (278, 277, "l21.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (279, 277, "layers.21.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (280, 279, "l21.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (281, 279, "l21.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (282, 279, "l21.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (283, 279, "l21.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (284, 277, "@289", ["arg0+out1.0"], 1, ["arg0"], []),
                  (285, 277, "model.layers.21.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (286, 285, "layers.21.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (287, 285, "layers.21.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (288, 285, "layers.21.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (289, 285, "layers.21.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (290, 1, "model.layers.22", ["out23.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (291, 290, "l22.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (292, 290, "layers.22.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (293, 292, "l22.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (294, 292, "l22.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (295, 292, "l22.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (296, 292, "l22.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (297, 290, "@302", ["arg0+out1.0"], 1, ["arg0"], []),
                  (298, 290, "model.layers.22.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (299, 298, "layers.22.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (300, 298, "layers.22.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (301, 298, "layers.22.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (302, 298, "layers.22.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (303, 1, "model.layers.23", ["out24.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (304, 303, "l23.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (305, 303, "layers.23.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (306, 305, "l23.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (307, 305, "l23.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (308, 305, "l23.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (309, 305, "l23.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (310, 303, "@315", ["arg0+out1.0"], 1, ["arg0"], []),
                  (311, 303, "model.layers.23.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (312, 311, "layers.23.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (313, 311, "layers.23.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (314, 311, "layers.23.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (315, 311, "layers.23.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (316, 1, "model.layers.24", ["out25.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (317, 316, "l24.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (318, 316, "layers.24.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (319, 318, "l24.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (320, 318, "l24.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (321, 318, "l24.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (322, 318, "l24.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (323, 316, "@328", ["arg0+out1.0"], 1, ["arg0"], []),
                  (324, 316, "model.layers.24.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (325, 324, "layers.24.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (326, 324, "layers.24.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (327, 324, "layers.24.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (328, 324, "layers.24.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (329, 1, "model.layers.25", ["out26.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (330, 329, "l25.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (331, 329, "layers.25.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (332, 331, "l25.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (333, 331, "l25.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (334, 331, "l25.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (335, 331, "l25.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (336, 329, "@341", ["arg0+out1.0"], 1, ["arg0"], []),
                  (337, 329, "model.layers.25.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (338, 337, "layers.25.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (339, 337, "layers.25.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (340, 337, "layers.25.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (341, 337, "layers.25.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (342, 1, "model.layers.26", ["out27.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (343, 342, "l26.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (344, 342, "layers.26.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (345, 344, "l26.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (346, 344, "l26.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (347, 344, "l26.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (348, 344, "l26.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (349, 342, "@354", ["arg0+out1.0"], 1, ["arg0"], []),
                  (350, 342, "model.layers.26.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (351, 350, "layers.26.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (352, 350, "layers.26.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (353, 350, "layers.26.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (354, 350, "layers.26.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (355, 1, "model.layers.27", ["out28.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (356, 355, "l27.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (357, 355, "layers.27.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (358, 357, "l27.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (359, 357, "l27.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (360, 357, "l27.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (361, 357, "l27.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (362, 355, "@367", ["arg0+out1.0"], 1, ["arg0"], []),
                  (363, 355, "model.layers.27.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (364, 363, "layers.27.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (365, 363, "layers.27.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (366, 363, "layers.27.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (367, 363, "layers.27.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (368, 1, "model.layers.28", ["out29.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (369, 368, "l28.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (370, 368, "layers.28.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (371, 370, "l28.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (372, 370, "l28.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (373, 370, "l28.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (374, 370, "l28.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (375, 368, "@380", ["arg0+out1.0"], 1, ["arg0"], []),
                  (376, 368, "model.layers.28.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (377, 376, "layers.28.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (378, 376, "layers.28.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (379, 376, "layers.28.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (380, 376, "layers.28.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (381, 1, "model.layers.29", ["out30.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (382, 381, "l29.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (383, 381, "layers.29.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (384, 383, "l29.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (385, 383, "l29.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (386, 383, "l29.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (387, 383, "l29.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (388, 381, "@393", ["arg0+out1.0"], 1, ["arg0"], []),
                  (389, 381, "model.layers.29.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (390, 389, "layers.29.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (391, 389, "layers.29.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (392, 389, "layers.29.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (393, 389, "layers.29.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (394, 1, "model.layers.30", ["out31.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (395, 394, "l30.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (396, 394, "layers.30.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (397, 396, "l30.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (398, 396, "l30.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (399, 396, "l30.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (400, 396, "l30.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (401, 394, "@406", ["arg0+out1.0"], 1, ["arg0"], []),
                  (402, 394, "model.layers.30.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (403, 402, "layers.30.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (404, 402, "layers.30.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (405, 402, "layers.30.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (406, 402, "layers.30.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (407, 1, "model.layers.31", ["out32.0"], 1, ["arg0", "out1.0", "out3.0"], ["nosave"]),
                  (408, 407, "l31.input_layernorm", ["arg0"], 1, ["arg0"], []),
                  (409, 407, "layers.31.self_attn", ["kw=out0.0"], 1, [], ["alias0=out3.0"]),
                    (410, 409, "l31.self_attn.q_proj", ["arg0"], 1, ["arg0"], []),
                    (411, 409, "l31.self_attn.k_proj", ["arg0"], 1, ["arg0"], []),
                    (412, 409, "l31.self_attn.v_proj", ["arg0"], 1, ["arg0"], []),
                    (413, 409, "l31.self_attn.o_proj", ["out0.0+out1.0+out2.0"], 1, ["arg0"], []),
                  (414, 407, "@419", ["arg0+out1.0"], 1, ["arg0"], []),
                  (415, 407, "model.layers.31.mlp", ["out2.0"], 1, [], ["alias0=out3.0"]),
                    (416, 415, "layers.31.mlp.gate_proj", ["arg0"], 1, ["arg0"], []),
                    (417, 415, "layers.31.mlp.act_fn", ["out0.0"], 1, ["arg0"], []),
                    (418, 415, "layers.31.mlp.up_proj", ["arg0"], 1, ["arg0"], []),
                    (419, 415, "layers.31.mlp.down_proj", ["out1.0+out2.0"], 1, ["arg0"], []),
                (420, 1, "model.norm", ["out33.0"], 1, ["arg0"], []),
              (421, 0, "lm_head", ["out0.0"], 1, ["arg0"], []),
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
