#!/usr/bin/env python3
"""A zoffload scenario on real DeepSpeed ZeRO stage 3 (CPU, gloo, world size 1).

Source:     corpus/models/t5.scn
Made by:    zofuzz export corpus/models/t5.scn --to deepspeed -o
            corpus/deepspeed/models-t5.py
Simulator:  policy reset-on-forward (DeepSpeed upstream's counters), torch
            2.x, deepspeed 0.19: invariant I3 violated: step 2, event 7103, at
            after eval forward, module -, param 0, policy reset-on-forward:
            not released: non-persistent parameter 0 still AVAILABLE (0 active
            modules)
            (under the scenario's own policy per-call: all invariants hold)
Run:        pip install torch deepspeed; DS_ACCELERATOR=cpu python models-t5.py
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
- world size 8 -> 1 (one process)
- numels and finite thresholds divided by 15: 60506624 elements in all is over
  2^22 (as tools/sim_traces --ds scales for tools/deepspeed_oracle.py)
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

    def forward(self, *args):
        x, ci = self.pending.pop()
        return RUN.body(x, ci, args)


# ----------------------------------------------------------------------
# The scenario
# ----------------------------------------------------------------------

# DeepSpeed's stage3_* settings, in elements
THRESHOLDS = {
    "param_persistence_threshold": 6666,
    "model_persistence_threshold": 10**15,  # infinite
    "prefetch_bucket_size": 3333333,
    "max_live_parameters": 66666666,
    "max_reuse_distance": 66666666,
}


def build_model():
    """The module tree (ids in registration order, as named_modules() lists
    them), then the parameters (registered after every module, in .scn order;
    float32, numel as in the scenario divided by the scaling factor above)."""
    model = Block("t5", 0)  # module 0
    model.shared = Block("shared", 1)  # module 1
    model.encoder = Block("encoder", 2)  # module 2
    model.encoder.embed_tokens = Block("encoder.embed_tokens", 3)  # module 3
    model.encoder.e0 = Block("e0", 4)  # module 4
    model.encoder.e0.sa = Block("e0.sa", 5)  # module 5
    model.encoder.e0.sa.attn = Block("e0.sa.attn", 6)  # module 6
    model.encoder.e0.sa.attn.q = Block("e0.sa.attn.q", 7)  # module 7
    model.encoder.e0.sa.attn.k = Block("e0.sa.attn.k", 8)  # module 8
    model.encoder.e0.sa.attn.v = Block("e0.sa.attn.v", 9)  # module 9
    model.encoder.e0.sa.attn.o = Block("e0.sa.attn.o", 10)  # module 10
    model.encoder.e0.sa.attn.rel_bias = Block("e0.sa.attn.rel_bias", 11)  # module 11
    model.encoder.e0.sa.ln = Block("e0.sa.ln", 12)  # module 12
    model.encoder.e0.ff = Block("e0.ff", 13)  # module 13
    model.encoder.e0.ff.dense = Block("e0.ff.dense", 14)  # module 14
    model.encoder.e0.ff.dense.wi = Block("e0.ff.dense.wi", 15)  # module 15
    model.encoder.e0.ff.dense.wo = Block("e0.ff.dense.wo", 16)  # module 16
    model.encoder.e0.ff.ln = Block("e0.ff.ln", 17)  # module 17
    model.encoder.e1 = Block("e1", 18)  # module 18
    model.encoder.e1.sa = Block("e1.sa", 19)  # module 19
    model.encoder.e1.sa.attn = Block("e1.sa.attn", 20)  # module 20
    model.encoder.e1.sa.attn.q = Block("e1.sa.attn.q", 21)  # module 21
    model.encoder.e1.sa.attn.k = Block("e1.sa.attn.k", 22)  # module 22
    model.encoder.e1.sa.attn.v = Block("e1.sa.attn.v", 23)  # module 23
    model.encoder.e1.sa.attn.o = Block("e1.sa.attn.o", 24)  # module 24
    model.encoder.e1.sa.ln = Block("e1.sa.ln", 25)  # module 25
    model.encoder.e1.ff = Block("e1.ff", 26)  # module 26
    model.encoder.e1.ff.dense = Block("e1.ff.dense", 27)  # module 27
    model.encoder.e1.ff.dense.wi = Block("e1.ff.dense.wi", 28)  # module 28
    model.encoder.e1.ff.dense.wo = Block("e1.ff.dense.wo", 29)  # module 29
    model.encoder.e1.ff.ln = Block("e1.ff.ln", 30)  # module 30
    model.encoder.e2 = Block("e2", 31)  # module 31
    model.encoder.e2.sa = Block("e2.sa", 32)  # module 32
    model.encoder.e2.sa.attn = Block("e2.sa.attn", 33)  # module 33
    model.encoder.e2.sa.attn.q = Block("e2.sa.attn.q", 34)  # module 34
    model.encoder.e2.sa.attn.k = Block("e2.sa.attn.k", 35)  # module 35
    model.encoder.e2.sa.attn.v = Block("e2.sa.attn.v", 36)  # module 36
    model.encoder.e2.sa.attn.o = Block("e2.sa.attn.o", 37)  # module 37
    model.encoder.e2.sa.ln = Block("e2.sa.ln", 38)  # module 38
    model.encoder.e2.ff = Block("e2.ff", 39)  # module 39
    model.encoder.e2.ff.dense = Block("e2.ff.dense", 40)  # module 40
    model.encoder.e2.ff.dense.wi = Block("e2.ff.dense.wi", 41)  # module 41
    model.encoder.e2.ff.dense.wo = Block("e2.ff.dense.wo", 42)  # module 42
    model.encoder.e2.ff.ln = Block("e2.ff.ln", 43)  # module 43
    model.encoder.e3 = Block("e3", 44)  # module 44
    model.encoder.e3.sa = Block("e3.sa", 45)  # module 45
    model.encoder.e3.sa.attn = Block("e3.sa.attn", 46)  # module 46
    model.encoder.e3.sa.attn.q = Block("e3.sa.attn.q", 47)  # module 47
    model.encoder.e3.sa.attn.k = Block("e3.sa.attn.k", 48)  # module 48
    model.encoder.e3.sa.attn.v = Block("e3.sa.attn.v", 49)  # module 49
    model.encoder.e3.sa.attn.o = Block("e3.sa.attn.o", 50)  # module 50
    model.encoder.e3.sa.ln = Block("e3.sa.ln", 51)  # module 51
    model.encoder.e3.ff = Block("e3.ff", 52)  # module 52
    model.encoder.e3.ff.dense = Block("e3.ff.dense", 53)  # module 53
    model.encoder.e3.ff.dense.wi = Block("e3.ff.dense.wi", 54)  # module 54
    model.encoder.e3.ff.dense.wo = Block("e3.ff.dense.wo", 55)  # module 55
    model.encoder.e3.ff.ln = Block("e3.ff.ln", 56)  # module 56
    model.encoder.e4 = Block("e4", 57)  # module 57
    model.encoder.e4.sa = Block("e4.sa", 58)  # module 58
    model.encoder.e4.sa.attn = Block("e4.sa.attn", 59)  # module 59
    model.encoder.e4.sa.attn.q = Block("e4.sa.attn.q", 60)  # module 60
    model.encoder.e4.sa.attn.k = Block("e4.sa.attn.k", 61)  # module 61
    model.encoder.e4.sa.attn.v = Block("e4.sa.attn.v", 62)  # module 62
    model.encoder.e4.sa.attn.o = Block("e4.sa.attn.o", 63)  # module 63
    model.encoder.e4.sa.ln = Block("e4.sa.ln", 64)  # module 64
    model.encoder.e4.ff = Block("e4.ff", 65)  # module 65
    model.encoder.e4.ff.dense = Block("e4.ff.dense", 66)  # module 66
    model.encoder.e4.ff.dense.wi = Block("e4.ff.dense.wi", 67)  # module 67
    model.encoder.e4.ff.dense.wo = Block("e4.ff.dense.wo", 68)  # module 68
    model.encoder.e4.ff.ln = Block("e4.ff.ln", 69)  # module 69
    model.encoder.e5 = Block("e5", 70)  # module 70
    model.encoder.e5.sa = Block("e5.sa", 71)  # module 71
    model.encoder.e5.sa.attn = Block("e5.sa.attn", 72)  # module 72
    model.encoder.e5.sa.attn.q = Block("e5.sa.attn.q", 73)  # module 73
    model.encoder.e5.sa.attn.k = Block("e5.sa.attn.k", 74)  # module 74
    model.encoder.e5.sa.attn.v = Block("e5.sa.attn.v", 75)  # module 75
    model.encoder.e5.sa.attn.o = Block("e5.sa.attn.o", 76)  # module 76
    model.encoder.e5.sa.ln = Block("e5.sa.ln", 77)  # module 77
    model.encoder.e5.ff = Block("e5.ff", 78)  # module 78
    model.encoder.e5.ff.dense = Block("e5.ff.dense", 79)  # module 79
    model.encoder.e5.ff.dense.wi = Block("e5.ff.dense.wi", 80)  # module 80
    model.encoder.e5.ff.dense.wo = Block("e5.ff.dense.wo", 81)  # module 81
    model.encoder.e5.ff.ln = Block("e5.ff.ln", 82)  # module 82
    model.encoder.final_ln = Block("encoder.final_ln", 83)  # module 83
    model.decoder = Block("decoder", 84)  # module 84
    model.decoder.embed_tokens = Block("decoder.embed_tokens", 85)  # module 85
    model.decoder.d0 = Block("d0", 86)  # module 86
    model.decoder.d0.sa = Block("d0.sa", 87)  # module 87
    model.decoder.d0.sa.attn = Block("d0.sa.attn", 88)  # module 88
    model.decoder.d0.sa.attn.q = Block("d0.sa.attn.q", 89)  # module 89
    model.decoder.d0.sa.attn.k = Block("d0.sa.attn.k", 90)  # module 90
    model.decoder.d0.sa.attn.v = Block("d0.sa.attn.v", 91)  # module 91
    model.decoder.d0.sa.attn.o = Block("d0.sa.attn.o", 92)  # module 92
    model.decoder.d0.sa.attn.rel_bias = Block("d0.sa.attn.rel_bias", 93)  # module 93
    model.decoder.d0.sa.ln = Block("d0.sa.ln", 94)  # module 94
    model.decoder.d0.ca = Block("d0.ca", 95)  # module 95
    model.decoder.d0.ca.attn = Block("d0.ca.attn", 96)  # module 96
    model.decoder.d0.ca.attn.q = Block("d0.ca.attn.q", 97)  # module 97
    model.decoder.d0.ca.attn.k = Block("d0.ca.attn.k", 98)  # module 98
    model.decoder.d0.ca.attn.v = Block("d0.ca.attn.v", 99)  # module 99
    model.decoder.d0.ca.attn.o = Block("d0.ca.attn.o", 100)  # module 100
    model.decoder.d0.ca.ln = Block("d0.ca.ln", 101)  # module 101
    model.decoder.d0.ff = Block("d0.ff", 102)  # module 102
    model.decoder.d0.ff.dense = Block("d0.ff.dense", 103)  # module 103
    model.decoder.d0.ff.dense.wi = Block("d0.ff.dense.wi", 104)  # module 104
    model.decoder.d0.ff.dense.wo = Block("d0.ff.dense.wo", 105)  # module 105
    model.decoder.d0.ff.ln = Block("d0.ff.ln", 106)  # module 106
    model.decoder.d1 = Block("d1", 107)  # module 107
    model.decoder.d1.sa = Block("d1.sa", 108)  # module 108
    model.decoder.d1.sa.attn = Block("d1.sa.attn", 109)  # module 109
    model.decoder.d1.sa.attn.q = Block("d1.sa.attn.q", 110)  # module 110
    model.decoder.d1.sa.attn.k = Block("d1.sa.attn.k", 111)  # module 111
    model.decoder.d1.sa.attn.v = Block("d1.sa.attn.v", 112)  # module 112
    model.decoder.d1.sa.attn.o = Block("d1.sa.attn.o", 113)  # module 113
    model.decoder.d1.sa.ln = Block("d1.sa.ln", 114)  # module 114
    model.decoder.d1.ca = Block("d1.ca", 115)  # module 115
    model.decoder.d1.ca.attn = Block("d1.ca.attn", 116)  # module 116
    model.decoder.d1.ca.attn.q = Block("d1.ca.attn.q", 117)  # module 117
    model.decoder.d1.ca.attn.k = Block("d1.ca.attn.k", 118)  # module 118
    model.decoder.d1.ca.attn.v = Block("d1.ca.attn.v", 119)  # module 119
    model.decoder.d1.ca.attn.o = Block("d1.ca.attn.o", 120)  # module 120
    model.decoder.d1.ca.ln = Block("d1.ca.ln", 121)  # module 121
    model.decoder.d1.ff = Block("d1.ff", 122)  # module 122
    model.decoder.d1.ff.dense = Block("d1.ff.dense", 123)  # module 123
    model.decoder.d1.ff.dense.wi = Block("d1.ff.dense.wi", 124)  # module 124
    model.decoder.d1.ff.dense.wo = Block("d1.ff.dense.wo", 125)  # module 125
    model.decoder.d1.ff.ln = Block("d1.ff.ln", 126)  # module 126
    model.decoder.d2 = Block("d2", 127)  # module 127
    model.decoder.d2.sa = Block("d2.sa", 128)  # module 128
    model.decoder.d2.sa.attn = Block("d2.sa.attn", 129)  # module 129
    model.decoder.d2.sa.attn.q = Block("d2.sa.attn.q", 130)  # module 130
    model.decoder.d2.sa.attn.k = Block("d2.sa.attn.k", 131)  # module 131
    model.decoder.d2.sa.attn.v = Block("d2.sa.attn.v", 132)  # module 132
    model.decoder.d2.sa.attn.o = Block("d2.sa.attn.o", 133)  # module 133
    model.decoder.d2.sa.ln = Block("d2.sa.ln", 134)  # module 134
    model.decoder.d2.ca = Block("d2.ca", 135)  # module 135
    model.decoder.d2.ca.attn = Block("d2.ca.attn", 136)  # module 136
    model.decoder.d2.ca.attn.q = Block("d2.ca.attn.q", 137)  # module 137
    model.decoder.d2.ca.attn.k = Block("d2.ca.attn.k", 138)  # module 138
    model.decoder.d2.ca.attn.v = Block("d2.ca.attn.v", 139)  # module 139
    model.decoder.d2.ca.attn.o = Block("d2.ca.attn.o", 140)  # module 140
    model.decoder.d2.ca.ln = Block("d2.ca.ln", 141)  # module 141
    model.decoder.d2.ff = Block("d2.ff", 142)  # module 142
    model.decoder.d2.ff.dense = Block("d2.ff.dense", 143)  # module 143
    model.decoder.d2.ff.dense.wi = Block("d2.ff.dense.wi", 144)  # module 144
    model.decoder.d2.ff.dense.wo = Block("d2.ff.dense.wo", 145)  # module 145
    model.decoder.d2.ff.ln = Block("d2.ff.ln", 146)  # module 146
    model.decoder.d3 = Block("d3", 147)  # module 147
    model.decoder.d3.sa = Block("d3.sa", 148)  # module 148
    model.decoder.d3.sa.attn = Block("d3.sa.attn", 149)  # module 149
    model.decoder.d3.sa.attn.q = Block("d3.sa.attn.q", 150)  # module 150
    model.decoder.d3.sa.attn.k = Block("d3.sa.attn.k", 151)  # module 151
    model.decoder.d3.sa.attn.v = Block("d3.sa.attn.v", 152)  # module 152
    model.decoder.d3.sa.attn.o = Block("d3.sa.attn.o", 153)  # module 153
    model.decoder.d3.sa.ln = Block("d3.sa.ln", 154)  # module 154
    model.decoder.d3.ca = Block("d3.ca", 155)  # module 155
    model.decoder.d3.ca.attn = Block("d3.ca.attn", 156)  # module 156
    model.decoder.d3.ca.attn.q = Block("d3.ca.attn.q", 157)  # module 157
    model.decoder.d3.ca.attn.k = Block("d3.ca.attn.k", 158)  # module 158
    model.decoder.d3.ca.attn.v = Block("d3.ca.attn.v", 159)  # module 159
    model.decoder.d3.ca.attn.o = Block("d3.ca.attn.o", 160)  # module 160
    model.decoder.d3.ca.ln = Block("d3.ca.ln", 161)  # module 161
    model.decoder.d3.ff = Block("d3.ff", 162)  # module 162
    model.decoder.d3.ff.dense = Block("d3.ff.dense", 163)  # module 163
    model.decoder.d3.ff.dense.wi = Block("d3.ff.dense.wi", 164)  # module 164
    model.decoder.d3.ff.dense.wo = Block("d3.ff.dense.wo", 165)  # module 165
    model.decoder.d3.ff.ln = Block("d3.ff.ln", 166)  # module 166
    model.decoder.d4 = Block("d4", 167)  # module 167
    model.decoder.d4.sa = Block("d4.sa", 168)  # module 168
    model.decoder.d4.sa.attn = Block("d4.sa.attn", 169)  # module 169
    model.decoder.d4.sa.attn.q = Block("d4.sa.attn.q", 170)  # module 170
    model.decoder.d4.sa.attn.k = Block("d4.sa.attn.k", 171)  # module 171
    model.decoder.d4.sa.attn.v = Block("d4.sa.attn.v", 172)  # module 172
    model.decoder.d4.sa.attn.o = Block("d4.sa.attn.o", 173)  # module 173
    model.decoder.d4.sa.ln = Block("d4.sa.ln", 174)  # module 174
    model.decoder.d4.ca = Block("d4.ca", 175)  # module 175
    model.decoder.d4.ca.attn = Block("d4.ca.attn", 176)  # module 176
    model.decoder.d4.ca.attn.q = Block("d4.ca.attn.q", 177)  # module 177
    model.decoder.d4.ca.attn.k = Block("d4.ca.attn.k", 178)  # module 178
    model.decoder.d4.ca.attn.v = Block("d4.ca.attn.v", 179)  # module 179
    model.decoder.d4.ca.attn.o = Block("d4.ca.attn.o", 180)  # module 180
    model.decoder.d4.ca.ln = Block("d4.ca.ln", 181)  # module 181
    model.decoder.d4.ff = Block("d4.ff", 182)  # module 182
    model.decoder.d4.ff.dense = Block("d4.ff.dense", 183)  # module 183
    model.decoder.d4.ff.dense.wi = Block("d4.ff.dense.wi", 184)  # module 184
    model.decoder.d4.ff.dense.wo = Block("d4.ff.dense.wo", 185)  # module 185
    model.decoder.d4.ff.ln = Block("d4.ff.ln", 186)  # module 186
    model.decoder.d5 = Block("d5", 187)  # module 187
    model.decoder.d5.sa = Block("d5.sa", 188)  # module 188
    model.decoder.d5.sa.attn = Block("d5.sa.attn", 189)  # module 189
    model.decoder.d5.sa.attn.q = Block("d5.sa.attn.q", 190)  # module 190
    model.decoder.d5.sa.attn.k = Block("d5.sa.attn.k", 191)  # module 191
    model.decoder.d5.sa.attn.v = Block("d5.sa.attn.v", 192)  # module 192
    model.decoder.d5.sa.attn.o = Block("d5.sa.attn.o", 193)  # module 193
    model.decoder.d5.sa.ln = Block("d5.sa.ln", 194)  # module 194
    model.decoder.d5.ca = Block("d5.ca", 195)  # module 195
    model.decoder.d5.ca.attn = Block("d5.ca.attn", 196)  # module 196
    model.decoder.d5.ca.attn.q = Block("d5.ca.attn.q", 197)  # module 197
    model.decoder.d5.ca.attn.k = Block("d5.ca.attn.k", 198)  # module 198
    model.decoder.d5.ca.attn.v = Block("d5.ca.attn.v", 199)  # module 199
    model.decoder.d5.ca.attn.o = Block("d5.ca.attn.o", 200)  # module 200
    model.decoder.d5.ca.ln = Block("d5.ca.ln", 201)  # module 201
    model.decoder.d5.ff = Block("d5.ff", 202)  # module 202
    model.decoder.d5.ff.dense = Block("d5.ff.dense", 203)  # module 203
    model.decoder.d5.ff.dense.wi = Block("d5.ff.dense.wi", 204)  # module 204
    model.decoder.d5.ff.dense.wo = Block("d5.ff.dense.wo", 205)  # module 205
    model.decoder.d5.ff.ln = Block("d5.ff.ln", 206)  # module 206
    model.decoder.final_ln = Block("decoder.final_ln", 207)  # module 207
    model.lm_head = Block("lm_head", 208)  # module 208
    model.shared.w = torch.nn.Parameter(torch.zeros(1096635))  # param 0 shared.w
    model.encoder.e0.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 1 e0.sa.attn.q.w
    model.encoder.e0.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 2 e0.sa.attn.k.w
    model.encoder.e0.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 3 e0.sa.attn.v.w
    model.encoder.e0.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 4 e0.sa.attn.o.w
    model.encoder.e0.sa.attn.rel_bias.w = torch.nn.Parameter(torch.zeros(17))  # param 5 e0.sa.attn.rel_bias.w
    model.encoder.e0.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 6 e0.sa.ln.w
    model.encoder.e0.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 7 e0.ff.dense.wi.w
    model.encoder.e0.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 8 e0.ff.dense.wo.w
    model.encoder.e0.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 9 e0.ff.ln.w
    model.encoder.e1.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 10 e1.sa.attn.q.w
    model.encoder.e1.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 11 e1.sa.attn.k.w
    model.encoder.e1.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 12 e1.sa.attn.v.w
    model.encoder.e1.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 13 e1.sa.attn.o.w
    model.encoder.e1.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 14 e1.sa.ln.w
    model.encoder.e1.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 15 e1.ff.dense.wi.w
    model.encoder.e1.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 16 e1.ff.dense.wo.w
    model.encoder.e1.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 17 e1.ff.ln.w
    model.encoder.e2.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 18 e2.sa.attn.q.w
    model.encoder.e2.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 19 e2.sa.attn.k.w
    model.encoder.e2.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 20 e2.sa.attn.v.w
    model.encoder.e2.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 21 e2.sa.attn.o.w
    model.encoder.e2.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 22 e2.sa.ln.w
    model.encoder.e2.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 23 e2.ff.dense.wi.w
    model.encoder.e2.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 24 e2.ff.dense.wo.w
    model.encoder.e2.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 25 e2.ff.ln.w
    model.encoder.e3.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 26 e3.sa.attn.q.w
    model.encoder.e3.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 27 e3.sa.attn.k.w
    model.encoder.e3.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 28 e3.sa.attn.v.w
    model.encoder.e3.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 29 e3.sa.attn.o.w
    model.encoder.e3.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 30 e3.sa.ln.w
    model.encoder.e3.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 31 e3.ff.dense.wi.w
    model.encoder.e3.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 32 e3.ff.dense.wo.w
    model.encoder.e3.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 33 e3.ff.ln.w
    model.encoder.e4.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 34 e4.sa.attn.q.w
    model.encoder.e4.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 35 e4.sa.attn.k.w
    model.encoder.e4.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 36 e4.sa.attn.v.w
    model.encoder.e4.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 37 e4.sa.attn.o.w
    model.encoder.e4.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 38 e4.sa.ln.w
    model.encoder.e4.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 39 e4.ff.dense.wi.w
    model.encoder.e4.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 40 e4.ff.dense.wo.w
    model.encoder.e4.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 41 e4.ff.ln.w
    model.encoder.e5.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 42 e5.sa.attn.q.w
    model.encoder.e5.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 43 e5.sa.attn.k.w
    model.encoder.e5.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 44 e5.sa.attn.v.w
    model.encoder.e5.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 45 e5.sa.attn.o.w
    model.encoder.e5.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 46 e5.sa.ln.w
    model.encoder.e5.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 47 e5.ff.dense.wi.w
    model.encoder.e5.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 48 e5.ff.dense.wo.w
    model.encoder.e5.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 49 e5.ff.ln.w
    model.encoder.final_ln.w = torch.nn.Parameter(torch.zeros(34))  # param 50 encoder.final_ln.w
    model.decoder.d0.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 51 d0.sa.attn.q.w
    model.decoder.d0.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 52 d0.sa.attn.k.w
    model.decoder.d0.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 53 d0.sa.attn.v.w
    model.decoder.d0.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 54 d0.sa.attn.o.w
    model.decoder.d0.sa.attn.rel_bias.w = torch.nn.Parameter(torch.zeros(17))  # param 55 d0.sa.attn.rel_bias.w
    model.decoder.d0.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 56 d0.sa.ln.w
    model.decoder.d0.ca.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 57 d0.ca.attn.q.w
    model.decoder.d0.ca.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 58 d0.ca.attn.k.w
    model.decoder.d0.ca.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 59 d0.ca.attn.v.w
    model.decoder.d0.ca.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 60 d0.ca.attn.o.w
    model.decoder.d0.ca.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 61 d0.ca.ln.w
    model.decoder.d0.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 62 d0.ff.dense.wi.w
    model.decoder.d0.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 63 d0.ff.dense.wo.w
    model.decoder.d0.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 64 d0.ff.ln.w
    model.decoder.d1.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 65 d1.sa.attn.q.w
    model.decoder.d1.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 66 d1.sa.attn.k.w
    model.decoder.d1.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 67 d1.sa.attn.v.w
    model.decoder.d1.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 68 d1.sa.attn.o.w
    model.decoder.d1.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 69 d1.sa.ln.w
    model.decoder.d1.ca.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 70 d1.ca.attn.q.w
    model.decoder.d1.ca.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 71 d1.ca.attn.k.w
    model.decoder.d1.ca.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 72 d1.ca.attn.v.w
    model.decoder.d1.ca.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 73 d1.ca.attn.o.w
    model.decoder.d1.ca.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 74 d1.ca.ln.w
    model.decoder.d1.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 75 d1.ff.dense.wi.w
    model.decoder.d1.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 76 d1.ff.dense.wo.w
    model.decoder.d1.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 77 d1.ff.ln.w
    model.decoder.d2.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 78 d2.sa.attn.q.w
    model.decoder.d2.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 79 d2.sa.attn.k.w
    model.decoder.d2.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 80 d2.sa.attn.v.w
    model.decoder.d2.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 81 d2.sa.attn.o.w
    model.decoder.d2.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 82 d2.sa.ln.w
    model.decoder.d2.ca.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 83 d2.ca.attn.q.w
    model.decoder.d2.ca.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 84 d2.ca.attn.k.w
    model.decoder.d2.ca.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 85 d2.ca.attn.v.w
    model.decoder.d2.ca.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 86 d2.ca.attn.o.w
    model.decoder.d2.ca.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 87 d2.ca.ln.w
    model.decoder.d2.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 88 d2.ff.dense.wi.w
    model.decoder.d2.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 89 d2.ff.dense.wo.w
    model.decoder.d2.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 90 d2.ff.ln.w
    model.decoder.d3.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 91 d3.sa.attn.q.w
    model.decoder.d3.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 92 d3.sa.attn.k.w
    model.decoder.d3.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 93 d3.sa.attn.v.w
    model.decoder.d3.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 94 d3.sa.attn.o.w
    model.decoder.d3.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 95 d3.sa.ln.w
    model.decoder.d3.ca.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 96 d3.ca.attn.q.w
    model.decoder.d3.ca.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 97 d3.ca.attn.k.w
    model.decoder.d3.ca.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 98 d3.ca.attn.v.w
    model.decoder.d3.ca.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 99 d3.ca.attn.o.w
    model.decoder.d3.ca.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 100 d3.ca.ln.w
    model.decoder.d3.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 101 d3.ff.dense.wi.w
    model.decoder.d3.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 102 d3.ff.dense.wo.w
    model.decoder.d3.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 103 d3.ff.ln.w
    model.decoder.d4.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 104 d4.sa.attn.q.w
    model.decoder.d4.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 105 d4.sa.attn.k.w
    model.decoder.d4.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 106 d4.sa.attn.v.w
    model.decoder.d4.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 107 d4.sa.attn.o.w
    model.decoder.d4.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 108 d4.sa.ln.w
    model.decoder.d4.ca.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 109 d4.ca.attn.q.w
    model.decoder.d4.ca.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 110 d4.ca.attn.k.w
    model.decoder.d4.ca.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 111 d4.ca.attn.v.w
    model.decoder.d4.ca.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 112 d4.ca.attn.o.w
    model.decoder.d4.ca.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 113 d4.ca.ln.w
    model.decoder.d4.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 114 d4.ff.dense.wi.w
    model.decoder.d4.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 115 d4.ff.dense.wo.w
    model.decoder.d4.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 116 d4.ff.ln.w
    model.decoder.d5.sa.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 117 d5.sa.attn.q.w
    model.decoder.d5.sa.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 118 d5.sa.attn.k.w
    model.decoder.d5.sa.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 119 d5.sa.attn.v.w
    model.decoder.d5.sa.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 120 d5.sa.attn.o.w
    model.decoder.d5.sa.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 121 d5.sa.ln.w
    model.decoder.d5.ca.attn.q.w = torch.nn.Parameter(torch.zeros(17476))  # param 122 d5.ca.attn.q.w
    model.decoder.d5.ca.attn.k.w = torch.nn.Parameter(torch.zeros(17476))  # param 123 d5.ca.attn.k.w
    model.decoder.d5.ca.attn.v.w = torch.nn.Parameter(torch.zeros(17476))  # param 124 d5.ca.attn.v.w
    model.decoder.d5.ca.attn.o.w = torch.nn.Parameter(torch.zeros(17476))  # param 125 d5.ca.attn.o.w
    model.decoder.d5.ca.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 126 d5.ca.ln.w
    model.decoder.d5.ff.dense.wi.w = torch.nn.Parameter(torch.zeros(69905))  # param 127 d5.ff.dense.wi.w
    model.decoder.d5.ff.dense.wo.w = torch.nn.Parameter(torch.zeros(69905))  # param 128 d5.ff.dense.wo.w
    model.decoder.d5.ff.ln.w = torch.nn.Parameter(torch.zeros(34))  # param 129 d5.ff.ln.w
    model.decoder.final_ln.w = torch.nn.Parameter(torch.zeros(34))  # param 130 decoder.final_ln.w
    modules = [model, model.shared, model.encoder, model.encoder.embed_tokens, model.encoder.e0, model.encoder.e0.sa, model.encoder.e0.sa.attn, model.encoder.e0.sa.attn.q, model.encoder.e0.sa.attn.k, model.encoder.e0.sa.attn.v, model.encoder.e0.sa.attn.o, model.encoder.e0.sa.attn.rel_bias, model.encoder.e0.sa.ln, model.encoder.e0.ff, model.encoder.e0.ff.dense, model.encoder.e0.ff.dense.wi, model.encoder.e0.ff.dense.wo, model.encoder.e0.ff.ln, model.encoder.e1, model.encoder.e1.sa, model.encoder.e1.sa.attn, model.encoder.e1.sa.attn.q, model.encoder.e1.sa.attn.k, model.encoder.e1.sa.attn.v, model.encoder.e1.sa.attn.o, model.encoder.e1.sa.ln, model.encoder.e1.ff, model.encoder.e1.ff.dense, model.encoder.e1.ff.dense.wi, model.encoder.e1.ff.dense.wo, model.encoder.e1.ff.ln, model.encoder.e2, model.encoder.e2.sa, model.encoder.e2.sa.attn, model.encoder.e2.sa.attn.q, model.encoder.e2.sa.attn.k, model.encoder.e2.sa.attn.v, model.encoder.e2.sa.attn.o, model.encoder.e2.sa.ln, model.encoder.e2.ff, model.encoder.e2.ff.dense, model.encoder.e2.ff.dense.wi, model.encoder.e2.ff.dense.wo, model.encoder.e2.ff.ln, model.encoder.e3, model.encoder.e3.sa, model.encoder.e3.sa.attn, model.encoder.e3.sa.attn.q, model.encoder.e3.sa.attn.k, model.encoder.e3.sa.attn.v, model.encoder.e3.sa.attn.o, model.encoder.e3.sa.ln, model.encoder.e3.ff, model.encoder.e3.ff.dense, model.encoder.e3.ff.dense.wi, model.encoder.e3.ff.dense.wo, model.encoder.e3.ff.ln, model.encoder.e4, model.encoder.e4.sa, model.encoder.e4.sa.attn, model.encoder.e4.sa.attn.q, model.encoder.e4.sa.attn.k, model.encoder.e4.sa.attn.v, model.encoder.e4.sa.attn.o, model.encoder.e4.sa.ln, model.encoder.e4.ff, model.encoder.e4.ff.dense, model.encoder.e4.ff.dense.wi, model.encoder.e4.ff.dense.wo, model.encoder.e4.ff.ln, model.encoder.e5, model.encoder.e5.sa, model.encoder.e5.sa.attn, model.encoder.e5.sa.attn.q, model.encoder.e5.sa.attn.k, model.encoder.e5.sa.attn.v, model.encoder.e5.sa.attn.o, model.encoder.e5.sa.ln, model.encoder.e5.ff, model.encoder.e5.ff.dense, model.encoder.e5.ff.dense.wi, model.encoder.e5.ff.dense.wo, model.encoder.e5.ff.ln, model.encoder.final_ln, model.decoder, model.decoder.embed_tokens, model.decoder.d0, model.decoder.d0.sa, model.decoder.d0.sa.attn, model.decoder.d0.sa.attn.q, model.decoder.d0.sa.attn.k, model.decoder.d0.sa.attn.v, model.decoder.d0.sa.attn.o, model.decoder.d0.sa.attn.rel_bias, model.decoder.d0.sa.ln, model.decoder.d0.ca, model.decoder.d0.ca.attn, model.decoder.d0.ca.attn.q, model.decoder.d0.ca.attn.k, model.decoder.d0.ca.attn.v, model.decoder.d0.ca.attn.o, model.decoder.d0.ca.ln, model.decoder.d0.ff, model.decoder.d0.ff.dense, model.decoder.d0.ff.dense.wi, model.decoder.d0.ff.dense.wo, model.decoder.d0.ff.ln, model.decoder.d1, model.decoder.d1.sa, model.decoder.d1.sa.attn, model.decoder.d1.sa.attn.q, model.decoder.d1.sa.attn.k, model.decoder.d1.sa.attn.v, model.decoder.d1.sa.attn.o, model.decoder.d1.sa.ln, model.decoder.d1.ca, model.decoder.d1.ca.attn, model.decoder.d1.ca.attn.q, model.decoder.d1.ca.attn.k, model.decoder.d1.ca.attn.v, model.decoder.d1.ca.attn.o, model.decoder.d1.ca.ln, model.decoder.d1.ff, model.decoder.d1.ff.dense, model.decoder.d1.ff.dense.wi, model.decoder.d1.ff.dense.wo, model.decoder.d1.ff.ln, model.decoder.d2, model.decoder.d2.sa, model.decoder.d2.sa.attn, model.decoder.d2.sa.attn.q, model.decoder.d2.sa.attn.k, model.decoder.d2.sa.attn.v, model.decoder.d2.sa.attn.o, model.decoder.d2.sa.ln, model.decoder.d2.ca, model.decoder.d2.ca.attn, model.decoder.d2.ca.attn.q, model.decoder.d2.ca.attn.k, model.decoder.d2.ca.attn.v, model.decoder.d2.ca.attn.o, model.decoder.d2.ca.ln, model.decoder.d2.ff, model.decoder.d2.ff.dense, model.decoder.d2.ff.dense.wi, model.decoder.d2.ff.dense.wo, model.decoder.d2.ff.ln, model.decoder.d3, model.decoder.d3.sa, model.decoder.d3.sa.attn, model.decoder.d3.sa.attn.q, model.decoder.d3.sa.attn.k, model.decoder.d3.sa.attn.v, model.decoder.d3.sa.attn.o, model.decoder.d3.sa.ln, model.decoder.d3.ca, model.decoder.d3.ca.attn, model.decoder.d3.ca.attn.q, model.decoder.d3.ca.attn.k, model.decoder.d3.ca.attn.v, model.decoder.d3.ca.attn.o, model.decoder.d3.ca.ln, model.decoder.d3.ff, model.decoder.d3.ff.dense, model.decoder.d3.ff.dense.wi, model.decoder.d3.ff.dense.wo, model.decoder.d3.ff.ln, model.decoder.d4, model.decoder.d4.sa, model.decoder.d4.sa.attn, model.decoder.d4.sa.attn.q, model.decoder.d4.sa.attn.k, model.decoder.d4.sa.attn.v, model.decoder.d4.sa.attn.o, model.decoder.d4.sa.ln, model.decoder.d4.ca, model.decoder.d4.ca.attn, model.decoder.d4.ca.attn.q, model.decoder.d4.ca.attn.k, model.decoder.d4.ca.attn.v, model.decoder.d4.ca.attn.o, model.decoder.d4.ca.ln, model.decoder.d4.ff, model.decoder.d4.ff.dense, model.decoder.d4.ff.dense.wi, model.decoder.d4.ff.dense.wo, model.decoder.d4.ff.ln, model.decoder.d5, model.decoder.d5.sa, model.decoder.d5.sa.attn, model.decoder.d5.sa.attn.q, model.decoder.d5.sa.attn.k, model.decoder.d5.sa.attn.v, model.decoder.d5.sa.attn.o, model.decoder.d5.sa.ln, model.decoder.d5.ca, model.decoder.d5.ca.attn, model.decoder.d5.ca.attn.q, model.decoder.d5.ca.attn.k, model.decoder.d5.ca.attn.v, model.decoder.d5.ca.attn.o, model.decoder.d5.ca.ln, model.decoder.d5.ff, model.decoder.d5.ff.dense, model.decoder.d5.ff.dense.wi, model.decoder.d5.ff.dense.wo, model.decoder.d5.ff.ln, model.decoder.final_ln, model.lm_head]
    params = [model.shared.w, model.encoder.e0.sa.attn.q.w, model.encoder.e0.sa.attn.k.w, model.encoder.e0.sa.attn.v.w, model.encoder.e0.sa.attn.o.w, model.encoder.e0.sa.attn.rel_bias.w, model.encoder.e0.sa.ln.w, model.encoder.e0.ff.dense.wi.w, model.encoder.e0.ff.dense.wo.w, model.encoder.e0.ff.ln.w, model.encoder.e1.sa.attn.q.w, model.encoder.e1.sa.attn.k.w, model.encoder.e1.sa.attn.v.w, model.encoder.e1.sa.attn.o.w, model.encoder.e1.sa.ln.w, model.encoder.e1.ff.dense.wi.w, model.encoder.e1.ff.dense.wo.w, model.encoder.e1.ff.ln.w, model.encoder.e2.sa.attn.q.w, model.encoder.e2.sa.attn.k.w, model.encoder.e2.sa.attn.v.w, model.encoder.e2.sa.attn.o.w, model.encoder.e2.sa.ln.w, model.encoder.e2.ff.dense.wi.w, model.encoder.e2.ff.dense.wo.w, model.encoder.e2.ff.ln.w, model.encoder.e3.sa.attn.q.w, model.encoder.e3.sa.attn.k.w, model.encoder.e3.sa.attn.v.w, model.encoder.e3.sa.attn.o.w, model.encoder.e3.sa.ln.w, model.encoder.e3.ff.dense.wi.w, model.encoder.e3.ff.dense.wo.w, model.encoder.e3.ff.ln.w, model.encoder.e4.sa.attn.q.w, model.encoder.e4.sa.attn.k.w, model.encoder.e4.sa.attn.v.w, model.encoder.e4.sa.attn.o.w, model.encoder.e4.sa.ln.w, model.encoder.e4.ff.dense.wi.w, model.encoder.e4.ff.dense.wo.w, model.encoder.e4.ff.ln.w, model.encoder.e5.sa.attn.q.w, model.encoder.e5.sa.attn.k.w, model.encoder.e5.sa.attn.v.w, model.encoder.e5.sa.attn.o.w, model.encoder.e5.sa.ln.w, model.encoder.e5.ff.dense.wi.w, model.encoder.e5.ff.dense.wo.w, model.encoder.e5.ff.ln.w, model.encoder.final_ln.w, model.decoder.d0.sa.attn.q.w, model.decoder.d0.sa.attn.k.w, model.decoder.d0.sa.attn.v.w, model.decoder.d0.sa.attn.o.w, model.decoder.d0.sa.attn.rel_bias.w, model.decoder.d0.sa.ln.w, model.decoder.d0.ca.attn.q.w, model.decoder.d0.ca.attn.k.w, model.decoder.d0.ca.attn.v.w, model.decoder.d0.ca.attn.o.w, model.decoder.d0.ca.ln.w, model.decoder.d0.ff.dense.wi.w, model.decoder.d0.ff.dense.wo.w, model.decoder.d0.ff.ln.w, model.decoder.d1.sa.attn.q.w, model.decoder.d1.sa.attn.k.w, model.decoder.d1.sa.attn.v.w, model.decoder.d1.sa.attn.o.w, model.decoder.d1.sa.ln.w, model.decoder.d1.ca.attn.q.w, model.decoder.d1.ca.attn.k.w, model.decoder.d1.ca.attn.v.w, model.decoder.d1.ca.attn.o.w, model.decoder.d1.ca.ln.w, model.decoder.d1.ff.dense.wi.w, model.decoder.d1.ff.dense.wo.w, model.decoder.d1.ff.ln.w, model.decoder.d2.sa.attn.q.w, model.decoder.d2.sa.attn.k.w, model.decoder.d2.sa.attn.v.w, model.decoder.d2.sa.attn.o.w, model.decoder.d2.sa.ln.w, model.decoder.d2.ca.attn.q.w, model.decoder.d2.ca.attn.k.w, model.decoder.d2.ca.attn.v.w, model.decoder.d2.ca.attn.o.w, model.decoder.d2.ca.ln.w, model.decoder.d2.ff.dense.wi.w, model.decoder.d2.ff.dense.wo.w, model.decoder.d2.ff.ln.w, model.decoder.d3.sa.attn.q.w, model.decoder.d3.sa.attn.k.w, model.decoder.d3.sa.attn.v.w, model.decoder.d3.sa.attn.o.w, model.decoder.d3.sa.ln.w, model.decoder.d3.ca.attn.q.w, model.decoder.d3.ca.attn.k.w, model.decoder.d3.ca.attn.v.w, model.decoder.d3.ca.attn.o.w, model.decoder.d3.ca.ln.w, model.decoder.d3.ff.dense.wi.w, model.decoder.d3.ff.dense.wo.w, model.decoder.d3.ff.ln.w, model.decoder.d4.sa.attn.q.w, model.decoder.d4.sa.attn.k.w, model.decoder.d4.sa.attn.v.w, model.decoder.d4.sa.attn.o.w, model.decoder.d4.sa.ln.w, model.decoder.d4.ca.attn.q.w, model.decoder.d4.ca.attn.k.w, model.decoder.d4.ca.attn.v.w, model.decoder.d4.ca.attn.o.w, model.decoder.d4.ca.ln.w, model.decoder.d4.ff.dense.wi.w, model.decoder.d4.ff.dense.wo.w, model.decoder.d4.ff.ln.w, model.decoder.d5.sa.attn.q.w, model.decoder.d5.sa.attn.k.w, model.decoder.d5.sa.attn.v.w, model.decoder.d5.sa.attn.o.w, model.decoder.d5.sa.ln.w, model.decoder.d5.ca.attn.q.w, model.decoder.d5.ca.attn.k.w, model.decoder.d5.ca.attn.v.w, model.decoder.d5.ca.attn.o.w, model.decoder.d5.ca.ln.w, model.decoder.d5.ff.dense.wi.w, model.decoder.d5.ff.dense.wo.w, model.decoder.d5.ff.ln.w, model.decoder.final_ln.w]
    return modules, params


MODULE_IDS = {"t5": 0, "shared": 1, "encoder": 2, "encoder.embed_tokens": 3, "e0": 4, "e0.sa": 5, "e0.sa.attn": 6, "e0.sa.attn.q": 7, "e0.sa.attn.k": 8, "e0.sa.attn.v": 9, "e0.sa.attn.o": 10, "e0.sa.attn.rel_bias": 11, "e0.sa.ln": 12, "e0.ff": 13, "e0.ff.dense": 14, "e0.ff.dense.wi": 15, "e0.ff.dense.wo": 16, "e0.ff.ln": 17, "e1": 18, "e1.sa": 19, "e1.sa.attn": 20, "e1.sa.attn.q": 21, "e1.sa.attn.k": 22, "e1.sa.attn.v": 23, "e1.sa.attn.o": 24, "e1.sa.ln": 25, "e1.ff": 26, "e1.ff.dense": 27, "e1.ff.dense.wi": 28, "e1.ff.dense.wo": 29, "e1.ff.ln": 30, "e2": 31, "e2.sa": 32, "e2.sa.attn": 33, "e2.sa.attn.q": 34, "e2.sa.attn.k": 35, "e2.sa.attn.v": 36, "e2.sa.attn.o": 37, "e2.sa.ln": 38, "e2.ff": 39, "e2.ff.dense": 40, "e2.ff.dense.wi": 41, "e2.ff.dense.wo": 42, "e2.ff.ln": 43, "e3": 44, "e3.sa": 45, "e3.sa.attn": 46, "e3.sa.attn.q": 47, "e3.sa.attn.k": 48, "e3.sa.attn.v": 49, "e3.sa.attn.o": 50, "e3.sa.ln": 51, "e3.ff": 52, "e3.ff.dense": 53, "e3.ff.dense.wi": 54, "e3.ff.dense.wo": 55, "e3.ff.ln": 56, "e4": 57, "e4.sa": 58, "e4.sa.attn": 59, "e4.sa.attn.q": 60, "e4.sa.attn.k": 61, "e4.sa.attn.v": 62, "e4.sa.attn.o": 63, "e4.sa.ln": 64, "e4.ff": 65, "e4.ff.dense": 66, "e4.ff.dense.wi": 67, "e4.ff.dense.wo": 68, "e4.ff.ln": 69, "e5": 70, "e5.sa": 71, "e5.sa.attn": 72, "e5.sa.attn.q": 73, "e5.sa.attn.k": 74, "e5.sa.attn.v": 75, "e5.sa.attn.o": 76, "e5.sa.ln": 77, "e5.ff": 78, "e5.ff.dense": 79, "e5.ff.dense.wi": 80, "e5.ff.dense.wo": 81, "e5.ff.ln": 82, "encoder.final_ln": 83, "decoder": 84, "decoder.embed_tokens": 85, "d0": 86, "d0.sa": 87, "d0.sa.attn": 88, "d0.sa.attn.q": 89, "d0.sa.attn.k": 90, "d0.sa.attn.v": 91, "d0.sa.attn.o": 92, "d0.sa.attn.rel_bias": 93, "d0.sa.ln": 94, "d0.ca": 95, "d0.ca.attn": 96, "d0.ca.attn.q": 97, "d0.ca.attn.k": 98, "d0.ca.attn.v": 99, "d0.ca.attn.o": 100, "d0.ca.ln": 101, "d0.ff": 102, "d0.ff.dense": 103, "d0.ff.dense.wi": 104, "d0.ff.dense.wo": 105, "d0.ff.ln": 106, "d1": 107, "d1.sa": 108, "d1.sa.attn": 109, "d1.sa.attn.q": 110, "d1.sa.attn.k": 111, "d1.sa.attn.v": 112, "d1.sa.attn.o": 113, "d1.sa.ln": 114, "d1.ca": 115, "d1.ca.attn": 116, "d1.ca.attn.q": 117, "d1.ca.attn.k": 118, "d1.ca.attn.v": 119, "d1.ca.attn.o": 120, "d1.ca.ln": 121, "d1.ff": 122, "d1.ff.dense": 123, "d1.ff.dense.wi": 124, "d1.ff.dense.wo": 125, "d1.ff.ln": 126, "d2": 127, "d2.sa": 128, "d2.sa.attn": 129, "d2.sa.attn.q": 130, "d2.sa.attn.k": 131, "d2.sa.attn.v": 132, "d2.sa.attn.o": 133, "d2.sa.ln": 134, "d2.ca": 135, "d2.ca.attn": 136, "d2.ca.attn.q": 137, "d2.ca.attn.k": 138, "d2.ca.attn.v": 139, "d2.ca.attn.o": 140, "d2.ca.ln": 141, "d2.ff": 142, "d2.ff.dense": 143, "d2.ff.dense.wi": 144, "d2.ff.dense.wo": 145, "d2.ff.ln": 146, "d3": 147, "d3.sa": 148, "d3.sa.attn": 149, "d3.sa.attn.q": 150, "d3.sa.attn.k": 151, "d3.sa.attn.v": 152, "d3.sa.attn.o": 153, "d3.sa.ln": 154, "d3.ca": 155, "d3.ca.attn": 156, "d3.ca.attn.q": 157, "d3.ca.attn.k": 158, "d3.ca.attn.v": 159, "d3.ca.attn.o": 160, "d3.ca.ln": 161, "d3.ff": 162, "d3.ff.dense": 163, "d3.ff.dense.wi": 164, "d3.ff.dense.wo": 165, "d3.ff.ln": 166, "d4": 167, "d4.sa": 168, "d4.sa.attn": 169, "d4.sa.attn.q": 170, "d4.sa.attn.k": 171, "d4.sa.attn.v": 172, "d4.sa.attn.o": 173, "d4.sa.ln": 174, "d4.ca": 175, "d4.ca.attn": 176, "d4.ca.attn.q": 177, "d4.ca.attn.k": 178, "d4.ca.attn.v": 179, "d4.ca.attn.o": 180, "d4.ca.ln": 181, "d4.ff": 182, "d4.ff.dense": 183, "d4.ff.dense.wi": 184, "d4.ff.dense.wo": 185, "d4.ff.ln": 186, "d5": 187, "d5.sa": 188, "d5.sa.attn": 189, "d5.sa.attn.q": 190, "d5.sa.attn.k": 191, "d5.sa.attn.v": 192, "d5.sa.attn.o": 193, "d5.sa.ln": 194, "d5.ca": 195, "d5.ca.attn": 196, "d5.ca.attn.q": 197, "d5.ca.attn.k": 198, "d5.ca.attn.v": 199, "d5.ca.attn.o": 200, "d5.ca.ln": 201, "d5.ff": 202, "d5.ff.dense": 203, "d5.ff.dense.wi": 204, "d5.ff.dense.wo": 205, "d5.ff.ln": 206, "decoder.final_ln": 207, "lm_head": 208}
PARAM_NAMES = ["shared.w", "e0.sa.attn.q.w", "e0.sa.attn.k.w", "e0.sa.attn.v.w", "e0.sa.attn.o.w", "e0.sa.attn.rel_bias.w", "e0.sa.ln.w", "e0.ff.dense.wi.w", "e0.ff.dense.wo.w", "e0.ff.ln.w", "e1.sa.attn.q.w", "e1.sa.attn.k.w", "e1.sa.attn.v.w", "e1.sa.attn.o.w", "e1.sa.ln.w", "e1.ff.dense.wi.w", "e1.ff.dense.wo.w", "e1.ff.ln.w", "e2.sa.attn.q.w", "e2.sa.attn.k.w", "e2.sa.attn.v.w", "e2.sa.attn.o.w", "e2.sa.ln.w", "e2.ff.dense.wi.w", "e2.ff.dense.wo.w", "e2.ff.ln.w", "e3.sa.attn.q.w", "e3.sa.attn.k.w", "e3.sa.attn.v.w", "e3.sa.attn.o.w", "e3.sa.ln.w", "e3.ff.dense.wi.w", "e3.ff.dense.wo.w", "e3.ff.ln.w", "e4.sa.attn.q.w", "e4.sa.attn.k.w", "e4.sa.attn.v.w", "e4.sa.attn.o.w", "e4.sa.ln.w", "e4.ff.dense.wi.w", "e4.ff.dense.wo.w", "e4.ff.ln.w", "e5.sa.attn.q.w", "e5.sa.attn.k.w", "e5.sa.attn.v.w", "e5.sa.attn.o.w", "e5.sa.ln.w", "e5.ff.dense.wi.w", "e5.ff.dense.wo.w", "e5.ff.ln.w", "encoder.final_ln.w", "d0.sa.attn.q.w", "d0.sa.attn.k.w", "d0.sa.attn.v.w", "d0.sa.attn.o.w", "d0.sa.attn.rel_bias.w", "d0.sa.ln.w", "d0.ca.attn.q.w", "d0.ca.attn.k.w", "d0.ca.attn.v.w", "d0.ca.attn.o.w", "d0.ca.ln.w", "d0.ff.dense.wi.w", "d0.ff.dense.wo.w", "d0.ff.ln.w", "d1.sa.attn.q.w", "d1.sa.attn.k.w", "d1.sa.attn.v.w", "d1.sa.attn.o.w", "d1.sa.ln.w", "d1.ca.attn.q.w", "d1.ca.attn.k.w", "d1.ca.attn.v.w", "d1.ca.attn.o.w", "d1.ca.ln.w", "d1.ff.dense.wi.w", "d1.ff.dense.wo.w", "d1.ff.ln.w", "d2.sa.attn.q.w", "d2.sa.attn.k.w", "d2.sa.attn.v.w", "d2.sa.attn.o.w", "d2.sa.ln.w", "d2.ca.attn.q.w", "d2.ca.attn.k.w", "d2.ca.attn.v.w", "d2.ca.attn.o.w", "d2.ca.ln.w", "d2.ff.dense.wi.w", "d2.ff.dense.wo.w", "d2.ff.ln.w", "d3.sa.attn.q.w", "d3.sa.attn.k.w", "d3.sa.attn.v.w", "d3.sa.attn.o.w", "d3.sa.ln.w", "d3.ca.attn.q.w", "d3.ca.attn.k.w", "d3.ca.attn.v.w", "d3.ca.attn.o.w", "d3.ca.ln.w", "d3.ff.dense.wi.w", "d3.ff.dense.wo.w", "d3.ff.ln.w", "d4.sa.attn.q.w", "d4.sa.attn.k.w", "d4.sa.attn.v.w", "d4.sa.attn.o.w", "d4.sa.ln.w", "d4.ca.attn.q.w", "d4.ca.attn.k.w", "d4.ca.attn.v.w", "d4.ca.attn.o.w", "d4.ca.ln.w", "d4.ff.dense.wi.w", "d4.ff.dense.wo.w", "d4.ff.ln.w", "d5.sa.attn.q.w", "d5.sa.attn.k.w", "d5.sa.attn.v.w", "d5.sa.attn.o.w", "d5.sa.ln.w", "d5.ca.attn.q.w", "d5.ca.attn.k.w", "d5.ca.attn.v.w", "d5.ca.attn.o.w", "d5.ca.ln.w", "d5.ff.dense.wi.w", "d5.ff.dense.wo.w", "d5.ff.ln.w", "decoder.final_ln.w"]
# z3 leaf modules (deepspeed.utils.set_z3_leaf_modules): fetch their whole
# subtree at once; the modules inside get no hooks
Z3_LEAF = []
# tied / external parameter uses (module, param): the module's op also reads
# the parameter; deepspeed.zero.register_external_parameter(module, param)
EXTERNAL = [(3, 0), (85, 0), (208, 0)]  # encoder.embed_tokens uses shared.w, decoder.embed_tokens uses shared.w, lm_head uses shared.w

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
#            REF.detach (x.detach())
#   flags    no_grad: the caller makes the call under torch.no_grad()
#            ckpt=reentrant / ckpt=non-reentrant: the caller makes it as
#              torch.utils.checkpoint.checkpoint(module, *inputs, use_reentrant=...)
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
            (0, None, "t5", ["batch"], 1, ["out2.0"], []),
              (1, 0, "encoder", ["arg0"], 1, ["out7.0"], []),
                (2, 1, "encoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "e0", ["out0.0"], 2, ["out1.0", "out0.1"], []),
                  (4, 3, "e0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (5, 4, "e0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (6, 4, "e0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (7, 6, "e0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (8, 6, "e0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (9, 6, "e0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (10, 6, "e0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (11, 6, "e0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (12, 3, "e0.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (13, 12, "e0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (14, 12, "e0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (15, 14, "e0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (16, 14, "e0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (17, 1, "e1", ["out1.0", "out1.1"], 2, ["out1.0", "out0.1"], []),
                  (18, 17, "e1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (19, 18, "e1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (20, 18, "e1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (21, 20, "e1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (22, 20, "e1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (23, 20, "e1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (24, 20, "e1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (25, 17, "e1.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (26, 25, "e1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (27, 25, "e1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (28, 27, "e1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (29, 27, "e1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (30, 1, "e2", ["out2.0", "out2.1"], 2, ["out1.0", "out0.1"], []),
                  (31, 30, "e2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (32, 31, "e2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "e2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (34, 33, "e2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "e2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (36, 33, "e2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (37, 33, "e2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (38, 30, "e2.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (39, 38, "e2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (40, 38, "e2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (41, 40, "e2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (42, 40, "e2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (43, 1, "e3", ["out3.0", "out3.1"], 2, ["out1.0", "out0.1"], []),
                  (44, 43, "e3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (45, 44, "e3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (46, 44, "e3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (47, 46, "e3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (48, 46, "e3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (49, 46, "e3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (50, 46, "e3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (51, 43, "e3.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (52, 51, "e3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (53, 51, "e3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (54, 53, "e3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (55, 53, "e3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (56, 1, "e4", ["out4.0", "out4.1"], 2, ["out1.0", "out0.1"], []),
                  (57, 56, "e4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (58, 57, "e4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (59, 57, "e4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (60, 59, "e4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (61, 59, "e4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (62, 59, "e4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (63, 59, "e4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (64, 56, "e4.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (65, 64, "e4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (66, 64, "e4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (67, 66, "e4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (68, 66, "e4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (69, 1, "e5", ["out5.0", "out5.1"], 2, ["out1.0", "out0.1"], []),
                  (70, 69, "e5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (71, 70, "e5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (72, 70, "e5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (73, 72, "e5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (74, 72, "e5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (75, 72, "e5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (76, 72, "e5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (77, 69, "e5.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (78, 77, "e5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (79, 77, "e5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (80, 79, "e5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (81, 79, "e5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (82, 1, "encoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (83, 0, "decoder", ["arg0", "out0.0"], 1, ["out7.0"], []),
                (84, 83, "decoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (85, 83, "d0", ["out0.0", "arg1"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (86, 85, "d0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (87, 86, "d0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (88, 86, "d0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (89, 88, "d0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (90, 88, "d0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (91, 88, "d0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (92, 88, "d0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (93, 88, "d0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (94, 85, "d0.ca", ["out0.0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (95, 94, "d0.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (96, 94, "d0.ca.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0"], []),
                      (97, 96, "d0.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (98, 96, "d0.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (99, 96, "d0.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (100, 96, "d0.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (101, 85, "d0.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (102, 101, "d0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (103, 101, "d0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (104, 103, "d0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "d0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (106, 83, "d1", ["out1.0", "out1.1", "arg1", "out1.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (107, 106, "d1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (108, 107, "d1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (109, 107, "d1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (110, 109, "d1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (111, 109, "d1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (112, 109, "d1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (113, 109, "d1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (114, 106, "d1.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (115, 114, "d1.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (116, 114, "d1.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (117, 116, "d1.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (118, 116, "d1.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (119, 116, "d1.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (120, 116, "d1.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (121, 106, "d1.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (122, 121, "d1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (123, 121, "d1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (124, 123, "d1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (125, 123, "d1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (126, 83, "d2", ["out2.0", "out2.1", "arg1", "out2.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (127, 126, "d2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (128, 127, "d2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (129, 127, "d2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (130, 129, "d2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (131, 129, "d2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (132, 129, "d2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (133, 129, "d2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (134, 126, "d2.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (135, 134, "d2.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (136, 134, "d2.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (137, 136, "d2.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (138, 136, "d2.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (139, 136, "d2.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (140, 136, "d2.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (141, 126, "d2.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (142, 141, "d2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (143, 141, "d2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (144, 143, "d2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (145, 143, "d2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (146, 83, "d3", ["out3.0", "out3.1", "arg1", "out3.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (147, 146, "d3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (148, 147, "d3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (149, 147, "d3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (150, 149, "d3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (151, 149, "d3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (152, 149, "d3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (153, 149, "d3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (154, 146, "d3.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (155, 154, "d3.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (156, 154, "d3.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (157, 156, "d3.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (158, 156, "d3.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (159, 156, "d3.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (160, 156, "d3.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (161, 146, "d3.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (162, 161, "d3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (163, 161, "d3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (164, 163, "d3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (165, 163, "d3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (166, 83, "d4", ["out4.0", "out4.1", "arg1", "out4.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (167, 166, "d4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (168, 167, "d4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (169, 167, "d4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (170, 169, "d4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (171, 169, "d4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (172, 169, "d4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (173, 169, "d4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (174, 166, "d4.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (175, 174, "d4.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (176, 174, "d4.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (177, 176, "d4.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (178, 176, "d4.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (179, 176, "d4.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (180, 176, "d4.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (181, 166, "d4.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (182, 181, "d4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (183, 181, "d4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (184, 183, "d4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (185, 183, "d4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (186, 83, "d5", ["out5.0", "out5.1", "arg1", "out5.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (187, 186, "d5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (188, 187, "d5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (189, 187, "d5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (190, 189, "d5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (191, 189, "d5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (192, 189, "d5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (193, 189, "d5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (194, 186, "d5.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (195, 194, "d5.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (196, 194, "d5.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (197, 196, "d5.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (198, 196, "d5.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (199, 196, "d5.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (200, 196, "d5.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (201, 186, "d5.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (202, 201, "d5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (203, 201, "d5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (204, 203, "d5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (205, 203, "d5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (206, 83, "decoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (207, 0, "lm_head", ["out1.0"], 1, ["arg0"], []),
        ]),
    ]),
    ("train", [  # step 1
        dict(loss=[0], calls=[  # pass 0
            (0, None, "t5", ["batch"], 1, ["out2.0"], []),
              (1, 0, "encoder", ["arg0"], 1, ["out7.0"], []),
                (2, 1, "encoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "e0", ["out0.0"], 2, ["out1.0", "out0.1"], []),
                  (4, 3, "e0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (5, 4, "e0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (6, 4, "e0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (7, 6, "e0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (8, 6, "e0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (9, 6, "e0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (10, 6, "e0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (11, 6, "e0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (12, 3, "e0.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (13, 12, "e0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (14, 12, "e0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (15, 14, "e0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (16, 14, "e0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (17, 1, "e1", ["out1.0", "out1.1"], 2, ["out1.0", "out0.1"], []),
                  (18, 17, "e1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (19, 18, "e1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (20, 18, "e1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (21, 20, "e1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (22, 20, "e1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (23, 20, "e1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (24, 20, "e1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (25, 17, "e1.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (26, 25, "e1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (27, 25, "e1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (28, 27, "e1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (29, 27, "e1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (30, 1, "e2", ["out2.0", "out2.1"], 2, ["out1.0", "out0.1"], []),
                  (31, 30, "e2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (32, 31, "e2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "e2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (34, 33, "e2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "e2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (36, 33, "e2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (37, 33, "e2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (38, 30, "e2.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (39, 38, "e2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (40, 38, "e2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (41, 40, "e2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (42, 40, "e2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (43, 1, "e3", ["out3.0", "out3.1"], 2, ["out1.0", "out0.1"], []),
                  (44, 43, "e3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (45, 44, "e3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (46, 44, "e3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (47, 46, "e3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (48, 46, "e3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (49, 46, "e3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (50, 46, "e3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (51, 43, "e3.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (52, 51, "e3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (53, 51, "e3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (54, 53, "e3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (55, 53, "e3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (56, 1, "e4", ["out4.0", "out4.1"], 2, ["out1.0", "out0.1"], []),
                  (57, 56, "e4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (58, 57, "e4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (59, 57, "e4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (60, 59, "e4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (61, 59, "e4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (62, 59, "e4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (63, 59, "e4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (64, 56, "e4.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (65, 64, "e4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (66, 64, "e4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (67, 66, "e4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (68, 66, "e4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (69, 1, "e5", ["out5.0", "out5.1"], 2, ["out1.0", "out0.1"], []),
                  (70, 69, "e5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (71, 70, "e5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (72, 70, "e5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (73, 72, "e5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (74, 72, "e5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (75, 72, "e5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (76, 72, "e5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (77, 69, "e5.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (78, 77, "e5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (79, 77, "e5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (80, 79, "e5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (81, 79, "e5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (82, 1, "encoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (83, 0, "decoder", ["arg0", "out0.0"], 1, ["out7.0"], []),
                (84, 83, "decoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (85, 83, "d0", ["out0.0", "arg1"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (86, 85, "d0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (87, 86, "d0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (88, 86, "d0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (89, 88, "d0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (90, 88, "d0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (91, 88, "d0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (92, 88, "d0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (93, 88, "d0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (94, 85, "d0.ca", ["out0.0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (95, 94, "d0.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (96, 94, "d0.ca.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0"], []),
                      (97, 96, "d0.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (98, 96, "d0.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (99, 96, "d0.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (100, 96, "d0.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (101, 85, "d0.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (102, 101, "d0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (103, 101, "d0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (104, 103, "d0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "d0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (106, 83, "d1", ["out1.0", "out1.1", "arg1", "out1.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (107, 106, "d1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (108, 107, "d1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (109, 107, "d1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (110, 109, "d1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (111, 109, "d1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (112, 109, "d1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (113, 109, "d1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (114, 106, "d1.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (115, 114, "d1.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (116, 114, "d1.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (117, 116, "d1.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (118, 116, "d1.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (119, 116, "d1.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (120, 116, "d1.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (121, 106, "d1.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (122, 121, "d1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (123, 121, "d1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (124, 123, "d1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (125, 123, "d1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (126, 83, "d2", ["out2.0", "out2.1", "arg1", "out2.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (127, 126, "d2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (128, 127, "d2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (129, 127, "d2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (130, 129, "d2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (131, 129, "d2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (132, 129, "d2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (133, 129, "d2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (134, 126, "d2.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (135, 134, "d2.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (136, 134, "d2.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (137, 136, "d2.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (138, 136, "d2.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (139, 136, "d2.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (140, 136, "d2.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (141, 126, "d2.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (142, 141, "d2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (143, 141, "d2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (144, 143, "d2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (145, 143, "d2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (146, 83, "d3", ["out3.0", "out3.1", "arg1", "out3.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (147, 146, "d3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (148, 147, "d3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (149, 147, "d3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (150, 149, "d3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (151, 149, "d3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (152, 149, "d3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (153, 149, "d3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (154, 146, "d3.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (155, 154, "d3.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (156, 154, "d3.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (157, 156, "d3.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (158, 156, "d3.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (159, 156, "d3.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (160, 156, "d3.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (161, 146, "d3.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (162, 161, "d3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (163, 161, "d3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (164, 163, "d3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (165, 163, "d3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (166, 83, "d4", ["out4.0", "out4.1", "arg1", "out4.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (167, 166, "d4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (168, 167, "d4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (169, 167, "d4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (170, 169, "d4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (171, 169, "d4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (172, 169, "d4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (173, 169, "d4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (174, 166, "d4.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (175, 174, "d4.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (176, 174, "d4.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (177, 176, "d4.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (178, 176, "d4.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (179, 176, "d4.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (180, 176, "d4.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (181, 166, "d4.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (182, 181, "d4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (183, 181, "d4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (184, 183, "d4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (185, 183, "d4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (186, 83, "d5", ["out5.0", "out5.1", "arg1", "out5.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (187, 186, "d5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (188, 187, "d5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (189, 187, "d5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (190, 189, "d5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (191, 189, "d5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (192, 189, "d5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (193, 189, "d5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (194, 186, "d5.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (195, 194, "d5.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (196, 194, "d5.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (197, 196, "d5.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (198, 196, "d5.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (199, 196, "d5.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (200, 196, "d5.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (201, 186, "d5.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (202, 201, "d5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (203, 201, "d5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (204, 203, "d5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (205, 203, "d5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (206, 83, "decoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (207, 0, "lm_head", ["out1.0"], 1, ["arg0"], []),
        ]),
    ]),
    ("eval", [  # step 2
        dict(loss=[], calls=[  # pass 0
            (0, None, "t5", ["batch"], 1, ["out2.0"], []),
              (1, 0, "encoder", ["arg0"], 1, ["out7.0"], []),
                (2, 1, "encoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "e0", ["out0.0"], 2, ["out1.0", "out0.1"], []),
                  (4, 3, "e0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (5, 4, "e0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (6, 4, "e0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (7, 6, "e0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (8, 6, "e0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (9, 6, "e0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (10, 6, "e0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (11, 6, "e0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (12, 3, "e0.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (13, 12, "e0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (14, 12, "e0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (15, 14, "e0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (16, 14, "e0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (17, 1, "e1", ["out1.0", "out1.1"], 2, ["out1.0", "out0.1"], []),
                  (18, 17, "e1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (19, 18, "e1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (20, 18, "e1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (21, 20, "e1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (22, 20, "e1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (23, 20, "e1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (24, 20, "e1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (25, 17, "e1.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (26, 25, "e1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (27, 25, "e1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (28, 27, "e1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (29, 27, "e1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (30, 1, "e2", ["out2.0", "out2.1"], 2, ["out1.0", "out0.1"], []),
                  (31, 30, "e2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (32, 31, "e2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "e2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (34, 33, "e2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "e2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (36, 33, "e2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (37, 33, "e2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (38, 30, "e2.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (39, 38, "e2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (40, 38, "e2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (41, 40, "e2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (42, 40, "e2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (43, 1, "e3", ["out3.0", "out3.1"], 2, ["out1.0", "out0.1"], []),
                  (44, 43, "e3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (45, 44, "e3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (46, 44, "e3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (47, 46, "e3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (48, 46, "e3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (49, 46, "e3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (50, 46, "e3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (51, 43, "e3.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (52, 51, "e3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (53, 51, "e3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (54, 53, "e3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (55, 53, "e3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (56, 1, "e4", ["out4.0", "out4.1"], 2, ["out1.0", "out0.1"], []),
                  (57, 56, "e4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (58, 57, "e4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (59, 57, "e4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (60, 59, "e4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (61, 59, "e4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (62, 59, "e4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (63, 59, "e4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (64, 56, "e4.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (65, 64, "e4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (66, 64, "e4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (67, 66, "e4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (68, 66, "e4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (69, 1, "e5", ["out5.0", "out5.1"], 2, ["out1.0", "out0.1"], []),
                  (70, 69, "e5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (71, 70, "e5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (72, 70, "e5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (73, 72, "e5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (74, 72, "e5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (75, 72, "e5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (76, 72, "e5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (77, 69, "e5.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (78, 77, "e5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (79, 77, "e5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (80, 79, "e5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (81, 79, "e5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (82, 1, "encoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (83, 0, "decoder", ["arg0", "out0.0"], 1, ["out7.0"], []),
                (84, 83, "decoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (85, 83, "d0", ["out0.0", "arg1"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (86, 85, "d0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (87, 86, "d0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (88, 86, "d0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (89, 88, "d0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (90, 88, "d0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (91, 88, "d0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (92, 88, "d0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (93, 88, "d0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (94, 85, "d0.ca", ["out0.0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (95, 94, "d0.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (96, 94, "d0.ca.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0"], []),
                      (97, 96, "d0.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (98, 96, "d0.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (99, 96, "d0.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (100, 96, "d0.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (101, 85, "d0.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (102, 101, "d0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (103, 101, "d0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (104, 103, "d0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "d0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (106, 83, "d1", ["out1.0", "out1.1", "arg1", "out1.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (107, 106, "d1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (108, 107, "d1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (109, 107, "d1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (110, 109, "d1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (111, 109, "d1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (112, 109, "d1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (113, 109, "d1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (114, 106, "d1.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (115, 114, "d1.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (116, 114, "d1.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (117, 116, "d1.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (118, 116, "d1.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (119, 116, "d1.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (120, 116, "d1.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (121, 106, "d1.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (122, 121, "d1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (123, 121, "d1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (124, 123, "d1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (125, 123, "d1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (126, 83, "d2", ["out2.0", "out2.1", "arg1", "out2.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (127, 126, "d2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (128, 127, "d2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (129, 127, "d2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (130, 129, "d2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (131, 129, "d2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (132, 129, "d2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (133, 129, "d2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (134, 126, "d2.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (135, 134, "d2.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (136, 134, "d2.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (137, 136, "d2.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (138, 136, "d2.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (139, 136, "d2.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (140, 136, "d2.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (141, 126, "d2.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (142, 141, "d2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (143, 141, "d2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (144, 143, "d2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (145, 143, "d2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (146, 83, "d3", ["out3.0", "out3.1", "arg1", "out3.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (147, 146, "d3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (148, 147, "d3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (149, 147, "d3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (150, 149, "d3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (151, 149, "d3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (152, 149, "d3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (153, 149, "d3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (154, 146, "d3.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (155, 154, "d3.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (156, 154, "d3.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (157, 156, "d3.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (158, 156, "d3.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (159, 156, "d3.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (160, 156, "d3.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (161, 146, "d3.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (162, 161, "d3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (163, 161, "d3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (164, 163, "d3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (165, 163, "d3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (166, 83, "d4", ["out4.0", "out4.1", "arg1", "out4.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (167, 166, "d4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (168, 167, "d4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (169, 167, "d4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (170, 169, "d4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (171, 169, "d4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (172, 169, "d4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (173, 169, "d4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (174, 166, "d4.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (175, 174, "d4.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (176, 174, "d4.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (177, 176, "d4.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (178, 176, "d4.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (179, 176, "d4.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (180, 176, "d4.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (181, 166, "d4.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (182, 181, "d4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (183, 181, "d4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (184, 183, "d4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (185, 183, "d4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (186, 83, "d5", ["out5.0", "out5.1", "arg1", "out5.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (187, 186, "d5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (188, 187, "d5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (189, 187, "d5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (190, 189, "d5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (191, 189, "d5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (192, 189, "d5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (193, 189, "d5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (194, 186, "d5.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (195, 194, "d5.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (196, 194, "d5.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (197, 196, "d5.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (198, 196, "d5.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (199, 196, "d5.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (200, 196, "d5.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (201, 186, "d5.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (202, 201, "d5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (203, 201, "d5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (204, 203, "d5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (205, 203, "d5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (206, 83, "decoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (207, 0, "lm_head", ["out1.0"], 1, ["arg0"], []),
        ]),
    ]),
    ("accum", [  # step 3
        dict(loss=[0], calls=[  # pass 0
            (0, None, "t5", ["batch"], 1, ["out2.0"], []),
              (1, 0, "encoder", ["arg0"], 1, ["out7.0"], []),
                (2, 1, "encoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "e0", ["out0.0"], 2, ["out1.0", "out0.1"], []),
                  (4, 3, "e0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (5, 4, "e0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (6, 4, "e0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (7, 6, "e0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (8, 6, "e0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (9, 6, "e0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (10, 6, "e0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (11, 6, "e0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (12, 3, "e0.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (13, 12, "e0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (14, 12, "e0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (15, 14, "e0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (16, 14, "e0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (17, 1, "e1", ["out1.0", "out1.1"], 2, ["out1.0", "out0.1"], []),
                  (18, 17, "e1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (19, 18, "e1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (20, 18, "e1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (21, 20, "e1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (22, 20, "e1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (23, 20, "e1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (24, 20, "e1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (25, 17, "e1.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (26, 25, "e1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (27, 25, "e1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (28, 27, "e1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (29, 27, "e1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (30, 1, "e2", ["out2.0", "out2.1"], 2, ["out1.0", "out0.1"], []),
                  (31, 30, "e2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (32, 31, "e2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "e2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (34, 33, "e2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "e2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (36, 33, "e2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (37, 33, "e2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (38, 30, "e2.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (39, 38, "e2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (40, 38, "e2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (41, 40, "e2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (42, 40, "e2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (43, 1, "e3", ["out3.0", "out3.1"], 2, ["out1.0", "out0.1"], []),
                  (44, 43, "e3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (45, 44, "e3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (46, 44, "e3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (47, 46, "e3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (48, 46, "e3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (49, 46, "e3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (50, 46, "e3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (51, 43, "e3.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (52, 51, "e3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (53, 51, "e3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (54, 53, "e3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (55, 53, "e3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (56, 1, "e4", ["out4.0", "out4.1"], 2, ["out1.0", "out0.1"], []),
                  (57, 56, "e4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (58, 57, "e4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (59, 57, "e4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (60, 59, "e4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (61, 59, "e4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (62, 59, "e4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (63, 59, "e4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (64, 56, "e4.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (65, 64, "e4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (66, 64, "e4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (67, 66, "e4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (68, 66, "e4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (69, 1, "e5", ["out5.0", "out5.1"], 2, ["out1.0", "out0.1"], []),
                  (70, 69, "e5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (71, 70, "e5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (72, 70, "e5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (73, 72, "e5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (74, 72, "e5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (75, 72, "e5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (76, 72, "e5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (77, 69, "e5.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (78, 77, "e5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (79, 77, "e5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (80, 79, "e5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (81, 79, "e5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (82, 1, "encoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (83, 0, "decoder", ["arg0", "out0.0"], 1, ["out7.0"], []),
                (84, 83, "decoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (85, 83, "d0", ["out0.0", "arg1"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (86, 85, "d0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (87, 86, "d0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (88, 86, "d0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (89, 88, "d0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (90, 88, "d0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (91, 88, "d0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (92, 88, "d0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (93, 88, "d0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (94, 85, "d0.ca", ["out0.0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (95, 94, "d0.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (96, 94, "d0.ca.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0"], []),
                      (97, 96, "d0.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (98, 96, "d0.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (99, 96, "d0.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (100, 96, "d0.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (101, 85, "d0.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (102, 101, "d0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (103, 101, "d0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (104, 103, "d0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "d0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (106, 83, "d1", ["out1.0", "out1.1", "arg1", "out1.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (107, 106, "d1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (108, 107, "d1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (109, 107, "d1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (110, 109, "d1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (111, 109, "d1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (112, 109, "d1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (113, 109, "d1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (114, 106, "d1.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (115, 114, "d1.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (116, 114, "d1.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (117, 116, "d1.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (118, 116, "d1.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (119, 116, "d1.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (120, 116, "d1.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (121, 106, "d1.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (122, 121, "d1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (123, 121, "d1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (124, 123, "d1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (125, 123, "d1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (126, 83, "d2", ["out2.0", "out2.1", "arg1", "out2.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (127, 126, "d2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (128, 127, "d2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (129, 127, "d2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (130, 129, "d2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (131, 129, "d2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (132, 129, "d2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (133, 129, "d2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (134, 126, "d2.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (135, 134, "d2.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (136, 134, "d2.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (137, 136, "d2.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (138, 136, "d2.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (139, 136, "d2.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (140, 136, "d2.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (141, 126, "d2.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (142, 141, "d2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (143, 141, "d2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (144, 143, "d2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (145, 143, "d2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (146, 83, "d3", ["out3.0", "out3.1", "arg1", "out3.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (147, 146, "d3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (148, 147, "d3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (149, 147, "d3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (150, 149, "d3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (151, 149, "d3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (152, 149, "d3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (153, 149, "d3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (154, 146, "d3.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (155, 154, "d3.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (156, 154, "d3.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (157, 156, "d3.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (158, 156, "d3.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (159, 156, "d3.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (160, 156, "d3.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (161, 146, "d3.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (162, 161, "d3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (163, 161, "d3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (164, 163, "d3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (165, 163, "d3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (166, 83, "d4", ["out4.0", "out4.1", "arg1", "out4.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (167, 166, "d4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (168, 167, "d4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (169, 167, "d4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (170, 169, "d4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (171, 169, "d4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (172, 169, "d4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (173, 169, "d4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (174, 166, "d4.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (175, 174, "d4.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (176, 174, "d4.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (177, 176, "d4.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (178, 176, "d4.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (179, 176, "d4.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (180, 176, "d4.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (181, 166, "d4.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (182, 181, "d4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (183, 181, "d4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (184, 183, "d4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (185, 183, "d4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (186, 83, "d5", ["out5.0", "out5.1", "arg1", "out5.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (187, 186, "d5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (188, 187, "d5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (189, 187, "d5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (190, 189, "d5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (191, 189, "d5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (192, 189, "d5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (193, 189, "d5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (194, 186, "d5.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (195, 194, "d5.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (196, 194, "d5.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (197, 196, "d5.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (198, 196, "d5.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (199, 196, "d5.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (200, 196, "d5.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (201, 186, "d5.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (202, 201, "d5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (203, 201, "d5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (204, 203, "d5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (205, 203, "d5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (206, 83, "decoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (207, 0, "lm_head", ["out1.0"], 1, ["arg0"], []),
        ]),
        dict(loss=[0], calls=[  # pass 1
            (0, None, "t5", ["batch"], 1, ["out2.0"], []),
              (1, 0, "encoder", ["arg0"], 1, ["out7.0"], []),
                (2, 1, "encoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (3, 1, "e0", ["out0.0"], 2, ["out1.0", "out0.1"], []),
                  (4, 3, "e0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (5, 4, "e0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (6, 4, "e0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (7, 6, "e0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (8, 6, "e0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (9, 6, "e0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (10, 6, "e0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (11, 6, "e0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (12, 3, "e0.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (13, 12, "e0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (14, 12, "e0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (15, 14, "e0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (16, 14, "e0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (17, 1, "e1", ["out1.0", "out1.1"], 2, ["out1.0", "out0.1"], []),
                  (18, 17, "e1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (19, 18, "e1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (20, 18, "e1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (21, 20, "e1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (22, 20, "e1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (23, 20, "e1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (24, 20, "e1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (25, 17, "e1.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (26, 25, "e1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (27, 25, "e1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (28, 27, "e1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (29, 27, "e1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (30, 1, "e2", ["out2.0", "out2.1"], 2, ["out1.0", "out0.1"], []),
                  (31, 30, "e2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (32, 31, "e2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (33, 31, "e2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (34, 33, "e2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "e2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (36, 33, "e2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (37, 33, "e2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (38, 30, "e2.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (39, 38, "e2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (40, 38, "e2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (41, 40, "e2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (42, 40, "e2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (43, 1, "e3", ["out3.0", "out3.1"], 2, ["out1.0", "out0.1"], []),
                  (44, 43, "e3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (45, 44, "e3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (46, 44, "e3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (47, 46, "e3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (48, 46, "e3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (49, 46, "e3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (50, 46, "e3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (51, 43, "e3.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (52, 51, "e3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (53, 51, "e3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (54, 53, "e3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (55, 53, "e3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (56, 1, "e4", ["out4.0", "out4.1"], 2, ["out1.0", "out0.1"], []),
                  (57, 56, "e4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (58, 57, "e4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (59, 57, "e4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (60, 59, "e4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (61, 59, "e4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (62, 59, "e4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (63, 59, "e4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (64, 56, "e4.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (65, 64, "e4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (66, 64, "e4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (67, 66, "e4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (68, 66, "e4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (69, 1, "e5", ["out5.0", "out5.1"], 2, ["out1.0", "out0.1"], []),
                  (70, 69, "e5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (71, 70, "e5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (72, 70, "e5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (73, 72, "e5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (74, 72, "e5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (75, 72, "e5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (76, 72, "e5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (77, 69, "e5.ff", ["out0.0"], 1, ["out1.0", "arg0"], []),
                    (78, 77, "e5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (79, 77, "e5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (80, 79, "e5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (81, 79, "e5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (82, 1, "encoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (83, 0, "decoder", ["arg0", "out0.0"], 1, ["out7.0"], []),
                (84, 83, "decoder.embed_tokens", ["arg0"], 1, ["arg0"], []),
                (85, 83, "d0", ["out0.0", "arg1"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (86, 85, "d0.sa", ["arg0"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (87, 86, "d0.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (88, 86, "d0.sa.attn", ["out0.0"], 2, ["out4.0", "out0.0", "out1.0", "out3.0"], []),
                      (89, 88, "d0.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (90, 88, "d0.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (91, 88, "d0.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (92, 88, "d0.sa.attn.rel_bias", ["batch"], 1, ["arg0"], []),
                      (93, 88, "d0.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (94, 85, "d0.ca", ["out0.0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (95, 94, "d0.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (96, 94, "d0.ca.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0"], []),
                      (97, 96, "d0.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (98, 96, "d0.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (99, 96, "d0.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (100, 96, "d0.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (101, 85, "d0.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (102, 101, "d0.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (103, 101, "d0.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (104, 103, "d0.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "d0.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (106, 83, "d1", ["out1.0", "out1.1", "arg1", "out1.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (107, 106, "d1.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (108, 107, "d1.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (109, 107, "d1.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (110, 109, "d1.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (111, 109, "d1.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (112, 109, "d1.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (113, 109, "d1.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (114, 106, "d1.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (115, 114, "d1.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (116, 114, "d1.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (117, 116, "d1.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (118, 116, "d1.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (119, 116, "d1.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (120, 116, "d1.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (121, 106, "d1.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (122, 121, "d1.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (123, 121, "d1.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (124, 123, "d1.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (125, 123, "d1.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (126, 83, "d2", ["out2.0", "out2.1", "arg1", "out2.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (127, 126, "d2.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (128, 127, "d2.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (129, 127, "d2.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (130, 129, "d2.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (131, 129, "d2.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (132, 129, "d2.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (133, 129, "d2.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (134, 126, "d2.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (135, 134, "d2.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (136, 134, "d2.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (137, 136, "d2.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (138, 136, "d2.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (139, 136, "d2.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (140, 136, "d2.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (141, 126, "d2.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (142, 141, "d2.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (143, 141, "d2.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (144, 143, "d2.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (145, 143, "d2.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (146, 83, "d3", ["out3.0", "out3.1", "arg1", "out3.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (147, 146, "d3.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (148, 147, "d3.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (149, 147, "d3.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (150, 149, "d3.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (151, 149, "d3.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (152, 149, "d3.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (153, 149, "d3.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (154, 146, "d3.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (155, 154, "d3.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (156, 154, "d3.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (157, 156, "d3.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (158, 156, "d3.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (159, 156, "d3.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (160, 156, "d3.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (161, 146, "d3.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (162, 161, "d3.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (163, 161, "d3.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (164, 163, "d3.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (165, 163, "d3.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (166, 83, "d4", ["out4.0", "out4.1", "arg1", "out4.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (167, 166, "d4.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (168, 167, "d4.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (169, 167, "d4.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (170, 169, "d4.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (171, 169, "d4.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (172, 169, "d4.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (173, 169, "d4.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (174, 166, "d4.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (175, 174, "d4.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (176, 174, "d4.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (177, 176, "d4.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (178, 176, "d4.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (179, 176, "d4.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (180, 176, "d4.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (181, 166, "d4.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (182, 181, "d4.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (183, 181, "d4.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (184, 183, "d4.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (185, 183, "d4.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (186, 83, "d5", ["out5.0", "out5.1", "arg1", "out5.2.detach"], 3, ["out2.0", "out0.1", "out1.1"], []),
                  (187, 186, "d5.sa", ["arg0", "arg1"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (188, 187, "d5.sa.ln", ["arg0"], 1, ["arg0"], []),
                    (189, 187, "d5.sa.attn", ["out0.0", "arg1"], 2, ["out3.0", "out0.0", "out1.0", "arg1"], []),
                      (190, 189, "d5.sa.attn.q", ["arg0"], 1, ["arg0"], []),
                      (191, 189, "d5.sa.attn.k", ["arg0"], 1, ["arg0"], []),
                      (192, 189, "d5.sa.attn.v", ["arg0"], 1, ["arg0"], []),
                      (193, 189, "d5.sa.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (194, 186, "d5.ca", ["out0.0", "arg2", "arg3"], 2, ["out1.0", "arg0", "out1.1"], []),
                    (195, 194, "d5.ca.ln", ["arg0"], 1, ["arg0"], []),
                    (196, 194, "d5.ca.attn", ["out0.0", "arg1", "arg2"], 2, ["out3.0", "out0.0", "out1.0", "arg2"], []),
                      (197, 196, "d5.ca.attn.q", ["arg0"], 1, ["arg0"], []),
                      (198, 196, "d5.ca.attn.k", ["arg1"], 1, ["arg0"], []),
                      (199, 196, "d5.ca.attn.v", ["arg1"], 1, ["arg0"], []),
                      (200, 196, "d5.ca.attn.o", ["out2.0"], 1, ["arg0"], []),
                  (201, 186, "d5.ff", ["out1.0"], 1, ["out1.0", "arg0"], []),
                    (202, 201, "d5.ff.ln", ["arg0"], 1, ["arg0"], []),
                    (203, 201, "d5.ff.dense", ["out0.0"], 1, ["out1.0"], []),
                      (204, 203, "d5.ff.dense.wi", ["arg0"], 1, ["arg0"], []),
                      (205, 203, "d5.ff.dense.wo", ["out0.0"], 1, ["arg0"], []),
                (206, 83, "decoder.final_ln", ["out6.0"], 1, ["arg0"], []),
              (207, 0, "lm_head", ["out1.0"], 1, ["arg0"], []),
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
    if s in ("batch", "batch_rg"):
        return (s, 0, 0, detach)
    if s.startswith("arg"):
        return ("arg", 0, int(s[3:]), detach)
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
            c = dict(module=MODULE_IDS[mod], parent=-1 if parent is None else parent, n_out=n_out,
                     inputs=[parse_ref(r) for r in inputs], uses=[parse_ref(r) for r in uses],
                     no_grad="no_grad" in flags, ckpt="none", raise_=False, catcher=-1)
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
        else:
            t = x.out[(x.p.children[scope][k], j)]
        return t.detach() if detach else t

    def invoke(self, x, ci, args):
        mod = self.mods[x.p.calls[ci]["module"]]
        mod.pending.append((x, ci))
        try:
            outs = mod(*args)
        finally:
            if mod.pending and mod.pending[-1] == (x, ci):  # its forward never ran
                mod.pending.pop()
        for j, t in enumerate(outs):
            x.out[(ci, j)] = t
        return outs

    def call(self, x, ci, args):
        """What the caller's code does for call ci: plain, or checkpointed."""
        ck = x.p.calls[ci]["ckpt"]
        if ck == "none":
            return self.invoke(x, ci, args)
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

    def body(self, x, ci, args):
        """Block.forward of call ci: child calls, [raise], own op."""
        p = x.p
        c = p.calls[ci]
        x.win[ci] = args
        for j in p.children.get(ci, []):
            ch = p.calls[j]
            cargs = tuple(self.resolve(x, ci, r) for r in ch["inputs"])
            try:
                if ch["no_grad"]:
                    with torch.no_grad():
                        self.call(x, j, cargs)
                else:
                    self.call(x, j, cargs)
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
        return ModuleOp.apply(self, mod, c["n_out"], *used, *mod.pset)

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
        args = tuple(self.resolve(x, -1, r) for r in c0["inputs"])
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
        ctx.save_for_backward(outs[0])
        ctx.shapes = [t.shape for t in inputs]
        ctx.rt, ctx.module = rt, module
        return outs

    @staticmethod
    def backward(ctx, *grads):
        _ = ctx.saved_tensors
        ctx.rt.check_i4(ctx.module, "backward")
        return (None, None, None) + tuple(torch.zeros(s) for s in ctx.shapes)


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
