#!/usr/bin/env python3
"""A zoffload scenario on real DeepSpeed ZeRO stage 3 (CPU, gloo, world size 1).

Source:     corpus/models/bert.scn
Made by:    zofuzz export corpus/models/bert.scn --to deepspeed -o
            corpus/deepspeed/models-bert.py
Simulator:  policy reset-on-forward (DeepSpeed upstream's counters), torch
            2.x, deepspeed 0.19: invariant I3 violated: step 2, event 8420, at
            after eval forward, module -, param 0, policy reset-on-forward:
            not released: non-persistent parameter 0 still AVAILABLE (0 active
            modules)
            (under the scenario's own policy per-call: all invariants hold)
Run:        pip install torch deepspeed; DS_ACCELERATOR=cpu python models-bert.py
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
- numels and finite thresholds divided by 27: 110106428 elements in all is over
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
    "param_persistence_threshold": 3703,
    "model_persistence_threshold": 10**15,  # infinite
    "prefetch_bucket_size": 1851851,
    "max_live_parameters": 37037037,
    "max_reuse_distance": 37037037,
}


def build_model():
    """The module tree (ids in registration order, as named_modules() lists
    them), then the parameters (registered after every module, in .scn order;
    float32, numel as in the scenario divided by the scaling factor above)."""
    model = Block("pretrain", 0)  # module 0
    model.bert = Block("bert", 1)  # module 1
    model.bert.emb = Block("emb", 2)  # module 2
    model.bert.emb.word = Block("emb.word", 3)  # module 3
    model.bert.emb.position = Block("emb.position", 4)  # module 4
    model.bert.emb.token_type = Block("emb.token_type", 5)  # module 5
    model.bert.emb.LN = Block("emb.LN", 6)  # module 6
    model.bert.encoder = Block("encoder", 7)  # module 7
    model.bert.encoder.l0 = Block("l0", 8)  # module 8
    model.bert.encoder.l0.attn = Block("l0.attn", 9)  # module 9
    model.bert.encoder.l0.attn.self = Block("l0.attn.self", 10)  # module 10
    model.bert.encoder.l0.attn.self.query = Block("l0.attn.self.query", 11)  # module 11
    model.bert.encoder.l0.attn.self.key = Block("l0.attn.self.key", 12)  # module 12
    model.bert.encoder.l0.attn.self.value = Block("l0.attn.self.value", 13)  # module 13
    model.bert.encoder.l0.attn.output = Block("l0.attn.output", 14)  # module 14
    model.bert.encoder.l0.attn.output.dense = Block("l0.attn.output.dense", 15)  # module 15
    model.bert.encoder.l0.attn.output.LN = Block("l0.attn.output.LN", 16)  # module 16
    model.bert.encoder.l0.inter = Block("l0.inter", 17)  # module 17
    model.bert.encoder.l0.inter.dense = Block("l0.inter.dense", 18)  # module 18
    model.bert.encoder.l0.output = Block("l0.output", 19)  # module 19
    model.bert.encoder.l0.output.dense = Block("l0.output.dense", 20)  # module 20
    model.bert.encoder.l0.output.LN = Block("l0.output.LN", 21)  # module 21
    model.bert.encoder.l1 = Block("l1", 22)  # module 22
    model.bert.encoder.l1.attn = Block("l1.attn", 23)  # module 23
    model.bert.encoder.l1.attn.self = Block("l1.attn.self", 24)  # module 24
    model.bert.encoder.l1.attn.self.query = Block("l1.attn.self.query", 25)  # module 25
    model.bert.encoder.l1.attn.self.key = Block("l1.attn.self.key", 26)  # module 26
    model.bert.encoder.l1.attn.self.value = Block("l1.attn.self.value", 27)  # module 27
    model.bert.encoder.l1.attn.output = Block("l1.attn.output", 28)  # module 28
    model.bert.encoder.l1.attn.output.dense = Block("l1.attn.output.dense", 29)  # module 29
    model.bert.encoder.l1.attn.output.LN = Block("l1.attn.output.LN", 30)  # module 30
    model.bert.encoder.l1.inter = Block("l1.inter", 31)  # module 31
    model.bert.encoder.l1.inter.dense = Block("l1.inter.dense", 32)  # module 32
    model.bert.encoder.l1.output = Block("l1.output", 33)  # module 33
    model.bert.encoder.l1.output.dense = Block("l1.output.dense", 34)  # module 34
    model.bert.encoder.l1.output.LN = Block("l1.output.LN", 35)  # module 35
    model.bert.encoder.l2 = Block("l2", 36)  # module 36
    model.bert.encoder.l2.attn = Block("l2.attn", 37)  # module 37
    model.bert.encoder.l2.attn.self = Block("l2.attn.self", 38)  # module 38
    model.bert.encoder.l2.attn.self.query = Block("l2.attn.self.query", 39)  # module 39
    model.bert.encoder.l2.attn.self.key = Block("l2.attn.self.key", 40)  # module 40
    model.bert.encoder.l2.attn.self.value = Block("l2.attn.self.value", 41)  # module 41
    model.bert.encoder.l2.attn.output = Block("l2.attn.output", 42)  # module 42
    model.bert.encoder.l2.attn.output.dense = Block("l2.attn.output.dense", 43)  # module 43
    model.bert.encoder.l2.attn.output.LN = Block("l2.attn.output.LN", 44)  # module 44
    model.bert.encoder.l2.inter = Block("l2.inter", 45)  # module 45
    model.bert.encoder.l2.inter.dense = Block("l2.inter.dense", 46)  # module 46
    model.bert.encoder.l2.output = Block("l2.output", 47)  # module 47
    model.bert.encoder.l2.output.dense = Block("l2.output.dense", 48)  # module 48
    model.bert.encoder.l2.output.LN = Block("l2.output.LN", 49)  # module 49
    model.bert.encoder.l3 = Block("l3", 50)  # module 50
    model.bert.encoder.l3.attn = Block("l3.attn", 51)  # module 51
    model.bert.encoder.l3.attn.self = Block("l3.attn.self", 52)  # module 52
    model.bert.encoder.l3.attn.self.query = Block("l3.attn.self.query", 53)  # module 53
    model.bert.encoder.l3.attn.self.key = Block("l3.attn.self.key", 54)  # module 54
    model.bert.encoder.l3.attn.self.value = Block("l3.attn.self.value", 55)  # module 55
    model.bert.encoder.l3.attn.output = Block("l3.attn.output", 56)  # module 56
    model.bert.encoder.l3.attn.output.dense = Block("l3.attn.output.dense", 57)  # module 57
    model.bert.encoder.l3.attn.output.LN = Block("l3.attn.output.LN", 58)  # module 58
    model.bert.encoder.l3.inter = Block("l3.inter", 59)  # module 59
    model.bert.encoder.l3.inter.dense = Block("l3.inter.dense", 60)  # module 60
    model.bert.encoder.l3.output = Block("l3.output", 61)  # module 61
    model.bert.encoder.l3.output.dense = Block("l3.output.dense", 62)  # module 62
    model.bert.encoder.l3.output.LN = Block("l3.output.LN", 63)  # module 63
    model.bert.encoder.l4 = Block("l4", 64)  # module 64
    model.bert.encoder.l4.attn = Block("l4.attn", 65)  # module 65
    model.bert.encoder.l4.attn.self = Block("l4.attn.self", 66)  # module 66
    model.bert.encoder.l4.attn.self.query = Block("l4.attn.self.query", 67)  # module 67
    model.bert.encoder.l4.attn.self.key = Block("l4.attn.self.key", 68)  # module 68
    model.bert.encoder.l4.attn.self.value = Block("l4.attn.self.value", 69)  # module 69
    model.bert.encoder.l4.attn.output = Block("l4.attn.output", 70)  # module 70
    model.bert.encoder.l4.attn.output.dense = Block("l4.attn.output.dense", 71)  # module 71
    model.bert.encoder.l4.attn.output.LN = Block("l4.attn.output.LN", 72)  # module 72
    model.bert.encoder.l4.inter = Block("l4.inter", 73)  # module 73
    model.bert.encoder.l4.inter.dense = Block("l4.inter.dense", 74)  # module 74
    model.bert.encoder.l4.output = Block("l4.output", 75)  # module 75
    model.bert.encoder.l4.output.dense = Block("l4.output.dense", 76)  # module 76
    model.bert.encoder.l4.output.LN = Block("l4.output.LN", 77)  # module 77
    model.bert.encoder.l5 = Block("l5", 78)  # module 78
    model.bert.encoder.l5.attn = Block("l5.attn", 79)  # module 79
    model.bert.encoder.l5.attn.self = Block("l5.attn.self", 80)  # module 80
    model.bert.encoder.l5.attn.self.query = Block("l5.attn.self.query", 81)  # module 81
    model.bert.encoder.l5.attn.self.key = Block("l5.attn.self.key", 82)  # module 82
    model.bert.encoder.l5.attn.self.value = Block("l5.attn.self.value", 83)  # module 83
    model.bert.encoder.l5.attn.output = Block("l5.attn.output", 84)  # module 84
    model.bert.encoder.l5.attn.output.dense = Block("l5.attn.output.dense", 85)  # module 85
    model.bert.encoder.l5.attn.output.LN = Block("l5.attn.output.LN", 86)  # module 86
    model.bert.encoder.l5.inter = Block("l5.inter", 87)  # module 87
    model.bert.encoder.l5.inter.dense = Block("l5.inter.dense", 88)  # module 88
    model.bert.encoder.l5.output = Block("l5.output", 89)  # module 89
    model.bert.encoder.l5.output.dense = Block("l5.output.dense", 90)  # module 90
    model.bert.encoder.l5.output.LN = Block("l5.output.LN", 91)  # module 91
    model.bert.encoder.l6 = Block("l6", 92)  # module 92
    model.bert.encoder.l6.attn = Block("l6.attn", 93)  # module 93
    model.bert.encoder.l6.attn.self = Block("l6.attn.self", 94)  # module 94
    model.bert.encoder.l6.attn.self.query = Block("l6.attn.self.query", 95)  # module 95
    model.bert.encoder.l6.attn.self.key = Block("l6.attn.self.key", 96)  # module 96
    model.bert.encoder.l6.attn.self.value = Block("l6.attn.self.value", 97)  # module 97
    model.bert.encoder.l6.attn.output = Block("l6.attn.output", 98)  # module 98
    model.bert.encoder.l6.attn.output.dense = Block("l6.attn.output.dense", 99)  # module 99
    model.bert.encoder.l6.attn.output.LN = Block("l6.attn.output.LN", 100)  # module 100
    model.bert.encoder.l6.inter = Block("l6.inter", 101)  # module 101
    model.bert.encoder.l6.inter.dense = Block("l6.inter.dense", 102)  # module 102
    model.bert.encoder.l6.output = Block("l6.output", 103)  # module 103
    model.bert.encoder.l6.output.dense = Block("l6.output.dense", 104)  # module 104
    model.bert.encoder.l6.output.LN = Block("l6.output.LN", 105)  # module 105
    model.bert.encoder.l7 = Block("l7", 106)  # module 106
    model.bert.encoder.l7.attn = Block("l7.attn", 107)  # module 107
    model.bert.encoder.l7.attn.self = Block("l7.attn.self", 108)  # module 108
    model.bert.encoder.l7.attn.self.query = Block("l7.attn.self.query", 109)  # module 109
    model.bert.encoder.l7.attn.self.key = Block("l7.attn.self.key", 110)  # module 110
    model.bert.encoder.l7.attn.self.value = Block("l7.attn.self.value", 111)  # module 111
    model.bert.encoder.l7.attn.output = Block("l7.attn.output", 112)  # module 112
    model.bert.encoder.l7.attn.output.dense = Block("l7.attn.output.dense", 113)  # module 113
    model.bert.encoder.l7.attn.output.LN = Block("l7.attn.output.LN", 114)  # module 114
    model.bert.encoder.l7.inter = Block("l7.inter", 115)  # module 115
    model.bert.encoder.l7.inter.dense = Block("l7.inter.dense", 116)  # module 116
    model.bert.encoder.l7.output = Block("l7.output", 117)  # module 117
    model.bert.encoder.l7.output.dense = Block("l7.output.dense", 118)  # module 118
    model.bert.encoder.l7.output.LN = Block("l7.output.LN", 119)  # module 119
    model.bert.encoder.l8 = Block("l8", 120)  # module 120
    model.bert.encoder.l8.attn = Block("l8.attn", 121)  # module 121
    model.bert.encoder.l8.attn.self = Block("l8.attn.self", 122)  # module 122
    model.bert.encoder.l8.attn.self.query = Block("l8.attn.self.query", 123)  # module 123
    model.bert.encoder.l8.attn.self.key = Block("l8.attn.self.key", 124)  # module 124
    model.bert.encoder.l8.attn.self.value = Block("l8.attn.self.value", 125)  # module 125
    model.bert.encoder.l8.attn.output = Block("l8.attn.output", 126)  # module 126
    model.bert.encoder.l8.attn.output.dense = Block("l8.attn.output.dense", 127)  # module 127
    model.bert.encoder.l8.attn.output.LN = Block("l8.attn.output.LN", 128)  # module 128
    model.bert.encoder.l8.inter = Block("l8.inter", 129)  # module 129
    model.bert.encoder.l8.inter.dense = Block("l8.inter.dense", 130)  # module 130
    model.bert.encoder.l8.output = Block("l8.output", 131)  # module 131
    model.bert.encoder.l8.output.dense = Block("l8.output.dense", 132)  # module 132
    model.bert.encoder.l8.output.LN = Block("l8.output.LN", 133)  # module 133
    model.bert.encoder.l9 = Block("l9", 134)  # module 134
    model.bert.encoder.l9.attn = Block("l9.attn", 135)  # module 135
    model.bert.encoder.l9.attn.self = Block("l9.attn.self", 136)  # module 136
    model.bert.encoder.l9.attn.self.query = Block("l9.attn.self.query", 137)  # module 137
    model.bert.encoder.l9.attn.self.key = Block("l9.attn.self.key", 138)  # module 138
    model.bert.encoder.l9.attn.self.value = Block("l9.attn.self.value", 139)  # module 139
    model.bert.encoder.l9.attn.output = Block("l9.attn.output", 140)  # module 140
    model.bert.encoder.l9.attn.output.dense = Block("l9.attn.output.dense", 141)  # module 141
    model.bert.encoder.l9.attn.output.LN = Block("l9.attn.output.LN", 142)  # module 142
    model.bert.encoder.l9.inter = Block("l9.inter", 143)  # module 143
    model.bert.encoder.l9.inter.dense = Block("l9.inter.dense", 144)  # module 144
    model.bert.encoder.l9.output = Block("l9.output", 145)  # module 145
    model.bert.encoder.l9.output.dense = Block("l9.output.dense", 146)  # module 146
    model.bert.encoder.l9.output.LN = Block("l9.output.LN", 147)  # module 147
    model.bert.encoder.l10 = Block("l10", 148)  # module 148
    model.bert.encoder.l10.attn = Block("l10.attn", 149)  # module 149
    model.bert.encoder.l10.attn.self = Block("l10.attn.self", 150)  # module 150
    model.bert.encoder.l10.attn.self.query = Block("l10.attn.self.query", 151)  # module 151
    model.bert.encoder.l10.attn.self.key = Block("l10.attn.self.key", 152)  # module 152
    model.bert.encoder.l10.attn.self.value = Block("l10.attn.self.value", 153)  # module 153
    model.bert.encoder.l10.attn.output = Block("l10.attn.output", 154)  # module 154
    model.bert.encoder.l10.attn.output.dense = Block("l10.attn.output.dense", 155)  # module 155
    model.bert.encoder.l10.attn.output.LN = Block("l10.attn.output.LN", 156)  # module 156
    model.bert.encoder.l10.inter = Block("l10.inter", 157)  # module 157
    model.bert.encoder.l10.inter.dense = Block("l10.inter.dense", 158)  # module 158
    model.bert.encoder.l10.output = Block("l10.output", 159)  # module 159
    model.bert.encoder.l10.output.dense = Block("l10.output.dense", 160)  # module 160
    model.bert.encoder.l10.output.LN = Block("l10.output.LN", 161)  # module 161
    model.bert.encoder.l11 = Block("l11", 162)  # module 162
    model.bert.encoder.l11.attn = Block("l11.attn", 163)  # module 163
    model.bert.encoder.l11.attn.self = Block("l11.attn.self", 164)  # module 164
    model.bert.encoder.l11.attn.self.query = Block("l11.attn.self.query", 165)  # module 165
    model.bert.encoder.l11.attn.self.key = Block("l11.attn.self.key", 166)  # module 166
    model.bert.encoder.l11.attn.self.value = Block("l11.attn.self.value", 167)  # module 167
    model.bert.encoder.l11.attn.output = Block("l11.attn.output", 168)  # module 168
    model.bert.encoder.l11.attn.output.dense = Block("l11.attn.output.dense", 169)  # module 169
    model.bert.encoder.l11.attn.output.LN = Block("l11.attn.output.LN", 170)  # module 170
    model.bert.encoder.l11.inter = Block("l11.inter", 171)  # module 171
    model.bert.encoder.l11.inter.dense = Block("l11.inter.dense", 172)  # module 172
    model.bert.encoder.l11.output = Block("l11.output", 173)  # module 173
    model.bert.encoder.l11.output.dense = Block("l11.output.dense", 174)  # module 174
    model.bert.encoder.l11.output.LN = Block("l11.output.LN", 175)  # module 175
    model.bert.pooler = Block("pooler", 176)  # module 176
    model.bert.pooler.dense = Block("pooler.dense", 177)  # module 177
    model.cls = Block("cls", 178)  # module 178
    model.cls.predictions = Block("cls.predictions", 179)  # module 179
    model.cls.predictions.transform = Block("cls.transform", 180)  # module 180
    model.cls.predictions.transform.dense = Block("cls.transform.dense", 181)  # module 181
    model.cls.predictions.transform.LN = Block("cls.transform.LN", 182)  # module 182
    model.cls.predictions.decoder = Block("cls.decoder", 183)  # module 183
    model.cls.seq_relationship = Block("cls.seq_relationship", 184)  # module 184
    model.bert.emb.word.w = torch.nn.Parameter(torch.zeros(868181))  # param 0 emb.word.w
    model.bert.emb.position.w = torch.nn.Parameter(torch.zeros(14563))  # param 1 emb.position.w
    model.bert.emb.token_type.w = torch.nn.Parameter(torch.zeros(56))  # param 2 emb.token_type.w
    model.bert.emb.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 3 emb.LN.w
    model.bert.emb.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 4 emb.LN.b
    model.bert.encoder.l0.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 5 l0.attn.self.query.w
    model.bert.encoder.l0.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 6 l0.attn.self.query.b
    model.bert.encoder.l0.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 7 l0.attn.self.key.w
    model.bert.encoder.l0.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 8 l0.attn.self.key.b
    model.bert.encoder.l0.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 9 l0.attn.self.value.w
    model.bert.encoder.l0.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 10 l0.attn.self.value.b
    model.bert.encoder.l0.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 11 l0.attn.output.dense.w
    model.bert.encoder.l0.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 12 l0.attn.output.dense.b
    model.bert.encoder.l0.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 13 l0.attn.output.LN.w
    model.bert.encoder.l0.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 14 l0.attn.output.LN.b
    model.bert.encoder.l0.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 15 l0.inter.dense.w
    model.bert.encoder.l0.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 16 l0.inter.dense.b
    model.bert.encoder.l0.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 17 l0.output.dense.w
    model.bert.encoder.l0.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 18 l0.output.dense.b
    model.bert.encoder.l0.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 19 l0.output.LN.w
    model.bert.encoder.l0.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 20 l0.output.LN.b
    model.bert.encoder.l1.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 21 l1.attn.self.query.w
    model.bert.encoder.l1.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 22 l1.attn.self.query.b
    model.bert.encoder.l1.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 23 l1.attn.self.key.w
    model.bert.encoder.l1.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 24 l1.attn.self.key.b
    model.bert.encoder.l1.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 25 l1.attn.self.value.w
    model.bert.encoder.l1.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 26 l1.attn.self.value.b
    model.bert.encoder.l1.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 27 l1.attn.output.dense.w
    model.bert.encoder.l1.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 28 l1.attn.output.dense.b
    model.bert.encoder.l1.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 29 l1.attn.output.LN.w
    model.bert.encoder.l1.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 30 l1.attn.output.LN.b
    model.bert.encoder.l1.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 31 l1.inter.dense.w
    model.bert.encoder.l1.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 32 l1.inter.dense.b
    model.bert.encoder.l1.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 33 l1.output.dense.w
    model.bert.encoder.l1.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 34 l1.output.dense.b
    model.bert.encoder.l1.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 35 l1.output.LN.w
    model.bert.encoder.l1.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 36 l1.output.LN.b
    model.bert.encoder.l2.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 37 l2.attn.self.query.w
    model.bert.encoder.l2.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 38 l2.attn.self.query.b
    model.bert.encoder.l2.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 39 l2.attn.self.key.w
    model.bert.encoder.l2.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 40 l2.attn.self.key.b
    model.bert.encoder.l2.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 41 l2.attn.self.value.w
    model.bert.encoder.l2.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 42 l2.attn.self.value.b
    model.bert.encoder.l2.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 43 l2.attn.output.dense.w
    model.bert.encoder.l2.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 44 l2.attn.output.dense.b
    model.bert.encoder.l2.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 45 l2.attn.output.LN.w
    model.bert.encoder.l2.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 46 l2.attn.output.LN.b
    model.bert.encoder.l2.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 47 l2.inter.dense.w
    model.bert.encoder.l2.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 48 l2.inter.dense.b
    model.bert.encoder.l2.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 49 l2.output.dense.w
    model.bert.encoder.l2.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 50 l2.output.dense.b
    model.bert.encoder.l2.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 51 l2.output.LN.w
    model.bert.encoder.l2.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 52 l2.output.LN.b
    model.bert.encoder.l3.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 53 l3.attn.self.query.w
    model.bert.encoder.l3.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 54 l3.attn.self.query.b
    model.bert.encoder.l3.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 55 l3.attn.self.key.w
    model.bert.encoder.l3.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 56 l3.attn.self.key.b
    model.bert.encoder.l3.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 57 l3.attn.self.value.w
    model.bert.encoder.l3.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 58 l3.attn.self.value.b
    model.bert.encoder.l3.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 59 l3.attn.output.dense.w
    model.bert.encoder.l3.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 60 l3.attn.output.dense.b
    model.bert.encoder.l3.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 61 l3.attn.output.LN.w
    model.bert.encoder.l3.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 62 l3.attn.output.LN.b
    model.bert.encoder.l3.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 63 l3.inter.dense.w
    model.bert.encoder.l3.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 64 l3.inter.dense.b
    model.bert.encoder.l3.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 65 l3.output.dense.w
    model.bert.encoder.l3.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 66 l3.output.dense.b
    model.bert.encoder.l3.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 67 l3.output.LN.w
    model.bert.encoder.l3.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 68 l3.output.LN.b
    model.bert.encoder.l4.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 69 l4.attn.self.query.w
    model.bert.encoder.l4.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 70 l4.attn.self.query.b
    model.bert.encoder.l4.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 71 l4.attn.self.key.w
    model.bert.encoder.l4.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 72 l4.attn.self.key.b
    model.bert.encoder.l4.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 73 l4.attn.self.value.w
    model.bert.encoder.l4.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 74 l4.attn.self.value.b
    model.bert.encoder.l4.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 75 l4.attn.output.dense.w
    model.bert.encoder.l4.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 76 l4.attn.output.dense.b
    model.bert.encoder.l4.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 77 l4.attn.output.LN.w
    model.bert.encoder.l4.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 78 l4.attn.output.LN.b
    model.bert.encoder.l4.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 79 l4.inter.dense.w
    model.bert.encoder.l4.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 80 l4.inter.dense.b
    model.bert.encoder.l4.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 81 l4.output.dense.w
    model.bert.encoder.l4.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 82 l4.output.dense.b
    model.bert.encoder.l4.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 83 l4.output.LN.w
    model.bert.encoder.l4.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 84 l4.output.LN.b
    model.bert.encoder.l5.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 85 l5.attn.self.query.w
    model.bert.encoder.l5.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 86 l5.attn.self.query.b
    model.bert.encoder.l5.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 87 l5.attn.self.key.w
    model.bert.encoder.l5.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 88 l5.attn.self.key.b
    model.bert.encoder.l5.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 89 l5.attn.self.value.w
    model.bert.encoder.l5.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 90 l5.attn.self.value.b
    model.bert.encoder.l5.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 91 l5.attn.output.dense.w
    model.bert.encoder.l5.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 92 l5.attn.output.dense.b
    model.bert.encoder.l5.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 93 l5.attn.output.LN.w
    model.bert.encoder.l5.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 94 l5.attn.output.LN.b
    model.bert.encoder.l5.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 95 l5.inter.dense.w
    model.bert.encoder.l5.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 96 l5.inter.dense.b
    model.bert.encoder.l5.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 97 l5.output.dense.w
    model.bert.encoder.l5.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 98 l5.output.dense.b
    model.bert.encoder.l5.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 99 l5.output.LN.w
    model.bert.encoder.l5.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 100 l5.output.LN.b
    model.bert.encoder.l6.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 101 l6.attn.self.query.w
    model.bert.encoder.l6.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 102 l6.attn.self.query.b
    model.bert.encoder.l6.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 103 l6.attn.self.key.w
    model.bert.encoder.l6.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 104 l6.attn.self.key.b
    model.bert.encoder.l6.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 105 l6.attn.self.value.w
    model.bert.encoder.l6.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 106 l6.attn.self.value.b
    model.bert.encoder.l6.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 107 l6.attn.output.dense.w
    model.bert.encoder.l6.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 108 l6.attn.output.dense.b
    model.bert.encoder.l6.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 109 l6.attn.output.LN.w
    model.bert.encoder.l6.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 110 l6.attn.output.LN.b
    model.bert.encoder.l6.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 111 l6.inter.dense.w
    model.bert.encoder.l6.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 112 l6.inter.dense.b
    model.bert.encoder.l6.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 113 l6.output.dense.w
    model.bert.encoder.l6.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 114 l6.output.dense.b
    model.bert.encoder.l6.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 115 l6.output.LN.w
    model.bert.encoder.l6.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 116 l6.output.LN.b
    model.bert.encoder.l7.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 117 l7.attn.self.query.w
    model.bert.encoder.l7.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 118 l7.attn.self.query.b
    model.bert.encoder.l7.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 119 l7.attn.self.key.w
    model.bert.encoder.l7.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 120 l7.attn.self.key.b
    model.bert.encoder.l7.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 121 l7.attn.self.value.w
    model.bert.encoder.l7.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 122 l7.attn.self.value.b
    model.bert.encoder.l7.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 123 l7.attn.output.dense.w
    model.bert.encoder.l7.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 124 l7.attn.output.dense.b
    model.bert.encoder.l7.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 125 l7.attn.output.LN.w
    model.bert.encoder.l7.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 126 l7.attn.output.LN.b
    model.bert.encoder.l7.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 127 l7.inter.dense.w
    model.bert.encoder.l7.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 128 l7.inter.dense.b
    model.bert.encoder.l7.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 129 l7.output.dense.w
    model.bert.encoder.l7.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 130 l7.output.dense.b
    model.bert.encoder.l7.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 131 l7.output.LN.w
    model.bert.encoder.l7.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 132 l7.output.LN.b
    model.bert.encoder.l8.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 133 l8.attn.self.query.w
    model.bert.encoder.l8.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 134 l8.attn.self.query.b
    model.bert.encoder.l8.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 135 l8.attn.self.key.w
    model.bert.encoder.l8.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 136 l8.attn.self.key.b
    model.bert.encoder.l8.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 137 l8.attn.self.value.w
    model.bert.encoder.l8.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 138 l8.attn.self.value.b
    model.bert.encoder.l8.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 139 l8.attn.output.dense.w
    model.bert.encoder.l8.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 140 l8.attn.output.dense.b
    model.bert.encoder.l8.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 141 l8.attn.output.LN.w
    model.bert.encoder.l8.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 142 l8.attn.output.LN.b
    model.bert.encoder.l8.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 143 l8.inter.dense.w
    model.bert.encoder.l8.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 144 l8.inter.dense.b
    model.bert.encoder.l8.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 145 l8.output.dense.w
    model.bert.encoder.l8.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 146 l8.output.dense.b
    model.bert.encoder.l8.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 147 l8.output.LN.w
    model.bert.encoder.l8.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 148 l8.output.LN.b
    model.bert.encoder.l9.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 149 l9.attn.self.query.w
    model.bert.encoder.l9.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 150 l9.attn.self.query.b
    model.bert.encoder.l9.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 151 l9.attn.self.key.w
    model.bert.encoder.l9.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 152 l9.attn.self.key.b
    model.bert.encoder.l9.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 153 l9.attn.self.value.w
    model.bert.encoder.l9.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 154 l9.attn.self.value.b
    model.bert.encoder.l9.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 155 l9.attn.output.dense.w
    model.bert.encoder.l9.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 156 l9.attn.output.dense.b
    model.bert.encoder.l9.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 157 l9.attn.output.LN.w
    model.bert.encoder.l9.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 158 l9.attn.output.LN.b
    model.bert.encoder.l9.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 159 l9.inter.dense.w
    model.bert.encoder.l9.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 160 l9.inter.dense.b
    model.bert.encoder.l9.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 161 l9.output.dense.w
    model.bert.encoder.l9.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 162 l9.output.dense.b
    model.bert.encoder.l9.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 163 l9.output.LN.w
    model.bert.encoder.l9.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 164 l9.output.LN.b
    model.bert.encoder.l10.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 165 l10.attn.self.query.w
    model.bert.encoder.l10.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 166 l10.attn.self.query.b
    model.bert.encoder.l10.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 167 l10.attn.self.key.w
    model.bert.encoder.l10.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 168 l10.attn.self.key.b
    model.bert.encoder.l10.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 169 l10.attn.self.value.w
    model.bert.encoder.l10.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 170 l10.attn.self.value.b
    model.bert.encoder.l10.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 171 l10.attn.output.dense.w
    model.bert.encoder.l10.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 172 l10.attn.output.dense.b
    model.bert.encoder.l10.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 173 l10.attn.output.LN.w
    model.bert.encoder.l10.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 174 l10.attn.output.LN.b
    model.bert.encoder.l10.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 175 l10.inter.dense.w
    model.bert.encoder.l10.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 176 l10.inter.dense.b
    model.bert.encoder.l10.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 177 l10.output.dense.w
    model.bert.encoder.l10.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 178 l10.output.dense.b
    model.bert.encoder.l10.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 179 l10.output.LN.w
    model.bert.encoder.l10.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 180 l10.output.LN.b
    model.bert.encoder.l11.attn.self.query.w = torch.nn.Parameter(torch.zeros(21845))  # param 181 l11.attn.self.query.w
    model.bert.encoder.l11.attn.self.query.b = torch.nn.Parameter(torch.zeros(28))  # param 182 l11.attn.self.query.b
    model.bert.encoder.l11.attn.self.key.w = torch.nn.Parameter(torch.zeros(21845))  # param 183 l11.attn.self.key.w
    model.bert.encoder.l11.attn.self.key.b = torch.nn.Parameter(torch.zeros(28))  # param 184 l11.attn.self.key.b
    model.bert.encoder.l11.attn.self.value.w = torch.nn.Parameter(torch.zeros(21845))  # param 185 l11.attn.self.value.w
    model.bert.encoder.l11.attn.self.value.b = torch.nn.Parameter(torch.zeros(28))  # param 186 l11.attn.self.value.b
    model.bert.encoder.l11.attn.output.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 187 l11.attn.output.dense.w
    model.bert.encoder.l11.attn.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 188 l11.attn.output.dense.b
    model.bert.encoder.l11.attn.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 189 l11.attn.output.LN.w
    model.bert.encoder.l11.attn.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 190 l11.attn.output.LN.b
    model.bert.encoder.l11.inter.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 191 l11.inter.dense.w
    model.bert.encoder.l11.inter.dense.b = torch.nn.Parameter(torch.zeros(113))  # param 192 l11.inter.dense.b
    model.bert.encoder.l11.output.dense.w = torch.nn.Parameter(torch.zeros(87381))  # param 193 l11.output.dense.w
    model.bert.encoder.l11.output.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 194 l11.output.dense.b
    model.bert.encoder.l11.output.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 195 l11.output.LN.w
    model.bert.encoder.l11.output.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 196 l11.output.LN.b
    model.bert.pooler.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 197 pooler.dense.w
    model.bert.pooler.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 198 pooler.dense.b
    model.cls.predictions.bias = torch.nn.Parameter(torch.zeros(1130))  # param 199 cls.predictions.bias
    model.cls.predictions.transform.dense.w = torch.nn.Parameter(torch.zeros(21845))  # param 200 cls.transform.dense.w
    model.cls.predictions.transform.dense.b = torch.nn.Parameter(torch.zeros(28))  # param 201 cls.transform.dense.b
    model.cls.predictions.transform.LN.w = torch.nn.Parameter(torch.zeros(28))  # param 202 cls.transform.LN.w
    model.cls.predictions.transform.LN.b = torch.nn.Parameter(torch.zeros(28))  # param 203 cls.transform.LN.b
    model.cls.seq_relationship.w = torch.nn.Parameter(torch.zeros(56))  # param 204 cls.seq_relationship.w
    model.cls.seq_relationship.b = torch.nn.Parameter(torch.zeros(1))  # param 205 cls.seq_relationship.b
    modules = [model, model.bert, model.bert.emb, model.bert.emb.word, model.bert.emb.position, model.bert.emb.token_type, model.bert.emb.LN, model.bert.encoder, model.bert.encoder.l0, model.bert.encoder.l0.attn, model.bert.encoder.l0.attn.self, model.bert.encoder.l0.attn.self.query, model.bert.encoder.l0.attn.self.key, model.bert.encoder.l0.attn.self.value, model.bert.encoder.l0.attn.output, model.bert.encoder.l0.attn.output.dense, model.bert.encoder.l0.attn.output.LN, model.bert.encoder.l0.inter, model.bert.encoder.l0.inter.dense, model.bert.encoder.l0.output, model.bert.encoder.l0.output.dense, model.bert.encoder.l0.output.LN, model.bert.encoder.l1, model.bert.encoder.l1.attn, model.bert.encoder.l1.attn.self, model.bert.encoder.l1.attn.self.query, model.bert.encoder.l1.attn.self.key, model.bert.encoder.l1.attn.self.value, model.bert.encoder.l1.attn.output, model.bert.encoder.l1.attn.output.dense, model.bert.encoder.l1.attn.output.LN, model.bert.encoder.l1.inter, model.bert.encoder.l1.inter.dense, model.bert.encoder.l1.output, model.bert.encoder.l1.output.dense, model.bert.encoder.l1.output.LN, model.bert.encoder.l2, model.bert.encoder.l2.attn, model.bert.encoder.l2.attn.self, model.bert.encoder.l2.attn.self.query, model.bert.encoder.l2.attn.self.key, model.bert.encoder.l2.attn.self.value, model.bert.encoder.l2.attn.output, model.bert.encoder.l2.attn.output.dense, model.bert.encoder.l2.attn.output.LN, model.bert.encoder.l2.inter, model.bert.encoder.l2.inter.dense, model.bert.encoder.l2.output, model.bert.encoder.l2.output.dense, model.bert.encoder.l2.output.LN, model.bert.encoder.l3, model.bert.encoder.l3.attn, model.bert.encoder.l3.attn.self, model.bert.encoder.l3.attn.self.query, model.bert.encoder.l3.attn.self.key, model.bert.encoder.l3.attn.self.value, model.bert.encoder.l3.attn.output, model.bert.encoder.l3.attn.output.dense, model.bert.encoder.l3.attn.output.LN, model.bert.encoder.l3.inter, model.bert.encoder.l3.inter.dense, model.bert.encoder.l3.output, model.bert.encoder.l3.output.dense, model.bert.encoder.l3.output.LN, model.bert.encoder.l4, model.bert.encoder.l4.attn, model.bert.encoder.l4.attn.self, model.bert.encoder.l4.attn.self.query, model.bert.encoder.l4.attn.self.key, model.bert.encoder.l4.attn.self.value, model.bert.encoder.l4.attn.output, model.bert.encoder.l4.attn.output.dense, model.bert.encoder.l4.attn.output.LN, model.bert.encoder.l4.inter, model.bert.encoder.l4.inter.dense, model.bert.encoder.l4.output, model.bert.encoder.l4.output.dense, model.bert.encoder.l4.output.LN, model.bert.encoder.l5, model.bert.encoder.l5.attn, model.bert.encoder.l5.attn.self, model.bert.encoder.l5.attn.self.query, model.bert.encoder.l5.attn.self.key, model.bert.encoder.l5.attn.self.value, model.bert.encoder.l5.attn.output, model.bert.encoder.l5.attn.output.dense, model.bert.encoder.l5.attn.output.LN, model.bert.encoder.l5.inter, model.bert.encoder.l5.inter.dense, model.bert.encoder.l5.output, model.bert.encoder.l5.output.dense, model.bert.encoder.l5.output.LN, model.bert.encoder.l6, model.bert.encoder.l6.attn, model.bert.encoder.l6.attn.self, model.bert.encoder.l6.attn.self.query, model.bert.encoder.l6.attn.self.key, model.bert.encoder.l6.attn.self.value, model.bert.encoder.l6.attn.output, model.bert.encoder.l6.attn.output.dense, model.bert.encoder.l6.attn.output.LN, model.bert.encoder.l6.inter, model.bert.encoder.l6.inter.dense, model.bert.encoder.l6.output, model.bert.encoder.l6.output.dense, model.bert.encoder.l6.output.LN, model.bert.encoder.l7, model.bert.encoder.l7.attn, model.bert.encoder.l7.attn.self, model.bert.encoder.l7.attn.self.query, model.bert.encoder.l7.attn.self.key, model.bert.encoder.l7.attn.self.value, model.bert.encoder.l7.attn.output, model.bert.encoder.l7.attn.output.dense, model.bert.encoder.l7.attn.output.LN, model.bert.encoder.l7.inter, model.bert.encoder.l7.inter.dense, model.bert.encoder.l7.output, model.bert.encoder.l7.output.dense, model.bert.encoder.l7.output.LN, model.bert.encoder.l8, model.bert.encoder.l8.attn, model.bert.encoder.l8.attn.self, model.bert.encoder.l8.attn.self.query, model.bert.encoder.l8.attn.self.key, model.bert.encoder.l8.attn.self.value, model.bert.encoder.l8.attn.output, model.bert.encoder.l8.attn.output.dense, model.bert.encoder.l8.attn.output.LN, model.bert.encoder.l8.inter, model.bert.encoder.l8.inter.dense, model.bert.encoder.l8.output, model.bert.encoder.l8.output.dense, model.bert.encoder.l8.output.LN, model.bert.encoder.l9, model.bert.encoder.l9.attn, model.bert.encoder.l9.attn.self, model.bert.encoder.l9.attn.self.query, model.bert.encoder.l9.attn.self.key, model.bert.encoder.l9.attn.self.value, model.bert.encoder.l9.attn.output, model.bert.encoder.l9.attn.output.dense, model.bert.encoder.l9.attn.output.LN, model.bert.encoder.l9.inter, model.bert.encoder.l9.inter.dense, model.bert.encoder.l9.output, model.bert.encoder.l9.output.dense, model.bert.encoder.l9.output.LN, model.bert.encoder.l10, model.bert.encoder.l10.attn, model.bert.encoder.l10.attn.self, model.bert.encoder.l10.attn.self.query, model.bert.encoder.l10.attn.self.key, model.bert.encoder.l10.attn.self.value, model.bert.encoder.l10.attn.output, model.bert.encoder.l10.attn.output.dense, model.bert.encoder.l10.attn.output.LN, model.bert.encoder.l10.inter, model.bert.encoder.l10.inter.dense, model.bert.encoder.l10.output, model.bert.encoder.l10.output.dense, model.bert.encoder.l10.output.LN, model.bert.encoder.l11, model.bert.encoder.l11.attn, model.bert.encoder.l11.attn.self, model.bert.encoder.l11.attn.self.query, model.bert.encoder.l11.attn.self.key, model.bert.encoder.l11.attn.self.value, model.bert.encoder.l11.attn.output, model.bert.encoder.l11.attn.output.dense, model.bert.encoder.l11.attn.output.LN, model.bert.encoder.l11.inter, model.bert.encoder.l11.inter.dense, model.bert.encoder.l11.output, model.bert.encoder.l11.output.dense, model.bert.encoder.l11.output.LN, model.bert.pooler, model.bert.pooler.dense, model.cls, model.cls.predictions, model.cls.predictions.transform, model.cls.predictions.transform.dense, model.cls.predictions.transform.LN, model.cls.predictions.decoder, model.cls.seq_relationship]
    params = [model.bert.emb.word.w, model.bert.emb.position.w, model.bert.emb.token_type.w, model.bert.emb.LN.w, model.bert.emb.LN.b, model.bert.encoder.l0.attn.self.query.w, model.bert.encoder.l0.attn.self.query.b, model.bert.encoder.l0.attn.self.key.w, model.bert.encoder.l0.attn.self.key.b, model.bert.encoder.l0.attn.self.value.w, model.bert.encoder.l0.attn.self.value.b, model.bert.encoder.l0.attn.output.dense.w, model.bert.encoder.l0.attn.output.dense.b, model.bert.encoder.l0.attn.output.LN.w, model.bert.encoder.l0.attn.output.LN.b, model.bert.encoder.l0.inter.dense.w, model.bert.encoder.l0.inter.dense.b, model.bert.encoder.l0.output.dense.w, model.bert.encoder.l0.output.dense.b, model.bert.encoder.l0.output.LN.w, model.bert.encoder.l0.output.LN.b, model.bert.encoder.l1.attn.self.query.w, model.bert.encoder.l1.attn.self.query.b, model.bert.encoder.l1.attn.self.key.w, model.bert.encoder.l1.attn.self.key.b, model.bert.encoder.l1.attn.self.value.w, model.bert.encoder.l1.attn.self.value.b, model.bert.encoder.l1.attn.output.dense.w, model.bert.encoder.l1.attn.output.dense.b, model.bert.encoder.l1.attn.output.LN.w, model.bert.encoder.l1.attn.output.LN.b, model.bert.encoder.l1.inter.dense.w, model.bert.encoder.l1.inter.dense.b, model.bert.encoder.l1.output.dense.w, model.bert.encoder.l1.output.dense.b, model.bert.encoder.l1.output.LN.w, model.bert.encoder.l1.output.LN.b, model.bert.encoder.l2.attn.self.query.w, model.bert.encoder.l2.attn.self.query.b, model.bert.encoder.l2.attn.self.key.w, model.bert.encoder.l2.attn.self.key.b, model.bert.encoder.l2.attn.self.value.w, model.bert.encoder.l2.attn.self.value.b, model.bert.encoder.l2.attn.output.dense.w, model.bert.encoder.l2.attn.output.dense.b, model.bert.encoder.l2.attn.output.LN.w, model.bert.encoder.l2.attn.output.LN.b, model.bert.encoder.l2.inter.dense.w, model.bert.encoder.l2.inter.dense.b, model.bert.encoder.l2.output.dense.w, model.bert.encoder.l2.output.dense.b, model.bert.encoder.l2.output.LN.w, model.bert.encoder.l2.output.LN.b, model.bert.encoder.l3.attn.self.query.w, model.bert.encoder.l3.attn.self.query.b, model.bert.encoder.l3.attn.self.key.w, model.bert.encoder.l3.attn.self.key.b, model.bert.encoder.l3.attn.self.value.w, model.bert.encoder.l3.attn.self.value.b, model.bert.encoder.l3.attn.output.dense.w, model.bert.encoder.l3.attn.output.dense.b, model.bert.encoder.l3.attn.output.LN.w, model.bert.encoder.l3.attn.output.LN.b, model.bert.encoder.l3.inter.dense.w, model.bert.encoder.l3.inter.dense.b, model.bert.encoder.l3.output.dense.w, model.bert.encoder.l3.output.dense.b, model.bert.encoder.l3.output.LN.w, model.bert.encoder.l3.output.LN.b, model.bert.encoder.l4.attn.self.query.w, model.bert.encoder.l4.attn.self.query.b, model.bert.encoder.l4.attn.self.key.w, model.bert.encoder.l4.attn.self.key.b, model.bert.encoder.l4.attn.self.value.w, model.bert.encoder.l4.attn.self.value.b, model.bert.encoder.l4.attn.output.dense.w, model.bert.encoder.l4.attn.output.dense.b, model.bert.encoder.l4.attn.output.LN.w, model.bert.encoder.l4.attn.output.LN.b, model.bert.encoder.l4.inter.dense.w, model.bert.encoder.l4.inter.dense.b, model.bert.encoder.l4.output.dense.w, model.bert.encoder.l4.output.dense.b, model.bert.encoder.l4.output.LN.w, model.bert.encoder.l4.output.LN.b, model.bert.encoder.l5.attn.self.query.w, model.bert.encoder.l5.attn.self.query.b, model.bert.encoder.l5.attn.self.key.w, model.bert.encoder.l5.attn.self.key.b, model.bert.encoder.l5.attn.self.value.w, model.bert.encoder.l5.attn.self.value.b, model.bert.encoder.l5.attn.output.dense.w, model.bert.encoder.l5.attn.output.dense.b, model.bert.encoder.l5.attn.output.LN.w, model.bert.encoder.l5.attn.output.LN.b, model.bert.encoder.l5.inter.dense.w, model.bert.encoder.l5.inter.dense.b, model.bert.encoder.l5.output.dense.w, model.bert.encoder.l5.output.dense.b, model.bert.encoder.l5.output.LN.w, model.bert.encoder.l5.output.LN.b, model.bert.encoder.l6.attn.self.query.w, model.bert.encoder.l6.attn.self.query.b, model.bert.encoder.l6.attn.self.key.w, model.bert.encoder.l6.attn.self.key.b, model.bert.encoder.l6.attn.self.value.w, model.bert.encoder.l6.attn.self.value.b, model.bert.encoder.l6.attn.output.dense.w, model.bert.encoder.l6.attn.output.dense.b, model.bert.encoder.l6.attn.output.LN.w, model.bert.encoder.l6.attn.output.LN.b, model.bert.encoder.l6.inter.dense.w, model.bert.encoder.l6.inter.dense.b, model.bert.encoder.l6.output.dense.w, model.bert.encoder.l6.output.dense.b, model.bert.encoder.l6.output.LN.w, model.bert.encoder.l6.output.LN.b, model.bert.encoder.l7.attn.self.query.w, model.bert.encoder.l7.attn.self.query.b, model.bert.encoder.l7.attn.self.key.w, model.bert.encoder.l7.attn.self.key.b, model.bert.encoder.l7.attn.self.value.w, model.bert.encoder.l7.attn.self.value.b, model.bert.encoder.l7.attn.output.dense.w, model.bert.encoder.l7.attn.output.dense.b, model.bert.encoder.l7.attn.output.LN.w, model.bert.encoder.l7.attn.output.LN.b, model.bert.encoder.l7.inter.dense.w, model.bert.encoder.l7.inter.dense.b, model.bert.encoder.l7.output.dense.w, model.bert.encoder.l7.output.dense.b, model.bert.encoder.l7.output.LN.w, model.bert.encoder.l7.output.LN.b, model.bert.encoder.l8.attn.self.query.w, model.bert.encoder.l8.attn.self.query.b, model.bert.encoder.l8.attn.self.key.w, model.bert.encoder.l8.attn.self.key.b, model.bert.encoder.l8.attn.self.value.w, model.bert.encoder.l8.attn.self.value.b, model.bert.encoder.l8.attn.output.dense.w, model.bert.encoder.l8.attn.output.dense.b, model.bert.encoder.l8.attn.output.LN.w, model.bert.encoder.l8.attn.output.LN.b, model.bert.encoder.l8.inter.dense.w, model.bert.encoder.l8.inter.dense.b, model.bert.encoder.l8.output.dense.w, model.bert.encoder.l8.output.dense.b, model.bert.encoder.l8.output.LN.w, model.bert.encoder.l8.output.LN.b, model.bert.encoder.l9.attn.self.query.w, model.bert.encoder.l9.attn.self.query.b, model.bert.encoder.l9.attn.self.key.w, model.bert.encoder.l9.attn.self.key.b, model.bert.encoder.l9.attn.self.value.w, model.bert.encoder.l9.attn.self.value.b, model.bert.encoder.l9.attn.output.dense.w, model.bert.encoder.l9.attn.output.dense.b, model.bert.encoder.l9.attn.output.LN.w, model.bert.encoder.l9.attn.output.LN.b, model.bert.encoder.l9.inter.dense.w, model.bert.encoder.l9.inter.dense.b, model.bert.encoder.l9.output.dense.w, model.bert.encoder.l9.output.dense.b, model.bert.encoder.l9.output.LN.w, model.bert.encoder.l9.output.LN.b, model.bert.encoder.l10.attn.self.query.w, model.bert.encoder.l10.attn.self.query.b, model.bert.encoder.l10.attn.self.key.w, model.bert.encoder.l10.attn.self.key.b, model.bert.encoder.l10.attn.self.value.w, model.bert.encoder.l10.attn.self.value.b, model.bert.encoder.l10.attn.output.dense.w, model.bert.encoder.l10.attn.output.dense.b, model.bert.encoder.l10.attn.output.LN.w, model.bert.encoder.l10.attn.output.LN.b, model.bert.encoder.l10.inter.dense.w, model.bert.encoder.l10.inter.dense.b, model.bert.encoder.l10.output.dense.w, model.bert.encoder.l10.output.dense.b, model.bert.encoder.l10.output.LN.w, model.bert.encoder.l10.output.LN.b, model.bert.encoder.l11.attn.self.query.w, model.bert.encoder.l11.attn.self.query.b, model.bert.encoder.l11.attn.self.key.w, model.bert.encoder.l11.attn.self.key.b, model.bert.encoder.l11.attn.self.value.w, model.bert.encoder.l11.attn.self.value.b, model.bert.encoder.l11.attn.output.dense.w, model.bert.encoder.l11.attn.output.dense.b, model.bert.encoder.l11.attn.output.LN.w, model.bert.encoder.l11.attn.output.LN.b, model.bert.encoder.l11.inter.dense.w, model.bert.encoder.l11.inter.dense.b, model.bert.encoder.l11.output.dense.w, model.bert.encoder.l11.output.dense.b, model.bert.encoder.l11.output.LN.w, model.bert.encoder.l11.output.LN.b, model.bert.pooler.dense.w, model.bert.pooler.dense.b, model.cls.predictions.bias, model.cls.predictions.transform.dense.w, model.cls.predictions.transform.dense.b, model.cls.predictions.transform.LN.w, model.cls.predictions.transform.LN.b, model.cls.seq_relationship.w, model.cls.seq_relationship.b]
    return modules, params


MODULE_IDS = {"pretrain": 0, "bert": 1, "emb": 2, "emb.word": 3, "emb.position": 4, "emb.token_type": 5, "emb.LN": 6, "encoder": 7, "l0": 8, "l0.attn": 9, "l0.attn.self": 10, "l0.attn.self.query": 11, "l0.attn.self.key": 12, "l0.attn.self.value": 13, "l0.attn.output": 14, "l0.attn.output.dense": 15, "l0.attn.output.LN": 16, "l0.inter": 17, "l0.inter.dense": 18, "l0.output": 19, "l0.output.dense": 20, "l0.output.LN": 21, "l1": 22, "l1.attn": 23, "l1.attn.self": 24, "l1.attn.self.query": 25, "l1.attn.self.key": 26, "l1.attn.self.value": 27, "l1.attn.output": 28, "l1.attn.output.dense": 29, "l1.attn.output.LN": 30, "l1.inter": 31, "l1.inter.dense": 32, "l1.output": 33, "l1.output.dense": 34, "l1.output.LN": 35, "l2": 36, "l2.attn": 37, "l2.attn.self": 38, "l2.attn.self.query": 39, "l2.attn.self.key": 40, "l2.attn.self.value": 41, "l2.attn.output": 42, "l2.attn.output.dense": 43, "l2.attn.output.LN": 44, "l2.inter": 45, "l2.inter.dense": 46, "l2.output": 47, "l2.output.dense": 48, "l2.output.LN": 49, "l3": 50, "l3.attn": 51, "l3.attn.self": 52, "l3.attn.self.query": 53, "l3.attn.self.key": 54, "l3.attn.self.value": 55, "l3.attn.output": 56, "l3.attn.output.dense": 57, "l3.attn.output.LN": 58, "l3.inter": 59, "l3.inter.dense": 60, "l3.output": 61, "l3.output.dense": 62, "l3.output.LN": 63, "l4": 64, "l4.attn": 65, "l4.attn.self": 66, "l4.attn.self.query": 67, "l4.attn.self.key": 68, "l4.attn.self.value": 69, "l4.attn.output": 70, "l4.attn.output.dense": 71, "l4.attn.output.LN": 72, "l4.inter": 73, "l4.inter.dense": 74, "l4.output": 75, "l4.output.dense": 76, "l4.output.LN": 77, "l5": 78, "l5.attn": 79, "l5.attn.self": 80, "l5.attn.self.query": 81, "l5.attn.self.key": 82, "l5.attn.self.value": 83, "l5.attn.output": 84, "l5.attn.output.dense": 85, "l5.attn.output.LN": 86, "l5.inter": 87, "l5.inter.dense": 88, "l5.output": 89, "l5.output.dense": 90, "l5.output.LN": 91, "l6": 92, "l6.attn": 93, "l6.attn.self": 94, "l6.attn.self.query": 95, "l6.attn.self.key": 96, "l6.attn.self.value": 97, "l6.attn.output": 98, "l6.attn.output.dense": 99, "l6.attn.output.LN": 100, "l6.inter": 101, "l6.inter.dense": 102, "l6.output": 103, "l6.output.dense": 104, "l6.output.LN": 105, "l7": 106, "l7.attn": 107, "l7.attn.self": 108, "l7.attn.self.query": 109, "l7.attn.self.key": 110, "l7.attn.self.value": 111, "l7.attn.output": 112, "l7.attn.output.dense": 113, "l7.attn.output.LN": 114, "l7.inter": 115, "l7.inter.dense": 116, "l7.output": 117, "l7.output.dense": 118, "l7.output.LN": 119, "l8": 120, "l8.attn": 121, "l8.attn.self": 122, "l8.attn.self.query": 123, "l8.attn.self.key": 124, "l8.attn.self.value": 125, "l8.attn.output": 126, "l8.attn.output.dense": 127, "l8.attn.output.LN": 128, "l8.inter": 129, "l8.inter.dense": 130, "l8.output": 131, "l8.output.dense": 132, "l8.output.LN": 133, "l9": 134, "l9.attn": 135, "l9.attn.self": 136, "l9.attn.self.query": 137, "l9.attn.self.key": 138, "l9.attn.self.value": 139, "l9.attn.output": 140, "l9.attn.output.dense": 141, "l9.attn.output.LN": 142, "l9.inter": 143, "l9.inter.dense": 144, "l9.output": 145, "l9.output.dense": 146, "l9.output.LN": 147, "l10": 148, "l10.attn": 149, "l10.attn.self": 150, "l10.attn.self.query": 151, "l10.attn.self.key": 152, "l10.attn.self.value": 153, "l10.attn.output": 154, "l10.attn.output.dense": 155, "l10.attn.output.LN": 156, "l10.inter": 157, "l10.inter.dense": 158, "l10.output": 159, "l10.output.dense": 160, "l10.output.LN": 161, "l11": 162, "l11.attn": 163, "l11.attn.self": 164, "l11.attn.self.query": 165, "l11.attn.self.key": 166, "l11.attn.self.value": 167, "l11.attn.output": 168, "l11.attn.output.dense": 169, "l11.attn.output.LN": 170, "l11.inter": 171, "l11.inter.dense": 172, "l11.output": 173, "l11.output.dense": 174, "l11.output.LN": 175, "pooler": 176, "pooler.dense": 177, "cls": 178, "cls.predictions": 179, "cls.transform": 180, "cls.transform.dense": 181, "cls.transform.LN": 182, "cls.decoder": 183, "cls.seq_relationship": 184}
PARAM_NAMES = ["emb.word.w", "emb.position.w", "emb.token_type.w", "emb.LN.w", "emb.LN.b", "l0.attn.self.query.w", "l0.attn.self.query.b", "l0.attn.self.key.w", "l0.attn.self.key.b", "l0.attn.self.value.w", "l0.attn.self.value.b", "l0.attn.output.dense.w", "l0.attn.output.dense.b", "l0.attn.output.LN.w", "l0.attn.output.LN.b", "l0.inter.dense.w", "l0.inter.dense.b", "l0.output.dense.w", "l0.output.dense.b", "l0.output.LN.w", "l0.output.LN.b", "l1.attn.self.query.w", "l1.attn.self.query.b", "l1.attn.self.key.w", "l1.attn.self.key.b", "l1.attn.self.value.w", "l1.attn.self.value.b", "l1.attn.output.dense.w", "l1.attn.output.dense.b", "l1.attn.output.LN.w", "l1.attn.output.LN.b", "l1.inter.dense.w", "l1.inter.dense.b", "l1.output.dense.w", "l1.output.dense.b", "l1.output.LN.w", "l1.output.LN.b", "l2.attn.self.query.w", "l2.attn.self.query.b", "l2.attn.self.key.w", "l2.attn.self.key.b", "l2.attn.self.value.w", "l2.attn.self.value.b", "l2.attn.output.dense.w", "l2.attn.output.dense.b", "l2.attn.output.LN.w", "l2.attn.output.LN.b", "l2.inter.dense.w", "l2.inter.dense.b", "l2.output.dense.w", "l2.output.dense.b", "l2.output.LN.w", "l2.output.LN.b", "l3.attn.self.query.w", "l3.attn.self.query.b", "l3.attn.self.key.w", "l3.attn.self.key.b", "l3.attn.self.value.w", "l3.attn.self.value.b", "l3.attn.output.dense.w", "l3.attn.output.dense.b", "l3.attn.output.LN.w", "l3.attn.output.LN.b", "l3.inter.dense.w", "l3.inter.dense.b", "l3.output.dense.w", "l3.output.dense.b", "l3.output.LN.w", "l3.output.LN.b", "l4.attn.self.query.w", "l4.attn.self.query.b", "l4.attn.self.key.w", "l4.attn.self.key.b", "l4.attn.self.value.w", "l4.attn.self.value.b", "l4.attn.output.dense.w", "l4.attn.output.dense.b", "l4.attn.output.LN.w", "l4.attn.output.LN.b", "l4.inter.dense.w", "l4.inter.dense.b", "l4.output.dense.w", "l4.output.dense.b", "l4.output.LN.w", "l4.output.LN.b", "l5.attn.self.query.w", "l5.attn.self.query.b", "l5.attn.self.key.w", "l5.attn.self.key.b", "l5.attn.self.value.w", "l5.attn.self.value.b", "l5.attn.output.dense.w", "l5.attn.output.dense.b", "l5.attn.output.LN.w", "l5.attn.output.LN.b", "l5.inter.dense.w", "l5.inter.dense.b", "l5.output.dense.w", "l5.output.dense.b", "l5.output.LN.w", "l5.output.LN.b", "l6.attn.self.query.w", "l6.attn.self.query.b", "l6.attn.self.key.w", "l6.attn.self.key.b", "l6.attn.self.value.w", "l6.attn.self.value.b", "l6.attn.output.dense.w", "l6.attn.output.dense.b", "l6.attn.output.LN.w", "l6.attn.output.LN.b", "l6.inter.dense.w", "l6.inter.dense.b", "l6.output.dense.w", "l6.output.dense.b", "l6.output.LN.w", "l6.output.LN.b", "l7.attn.self.query.w", "l7.attn.self.query.b", "l7.attn.self.key.w", "l7.attn.self.key.b", "l7.attn.self.value.w", "l7.attn.self.value.b", "l7.attn.output.dense.w", "l7.attn.output.dense.b", "l7.attn.output.LN.w", "l7.attn.output.LN.b", "l7.inter.dense.w", "l7.inter.dense.b", "l7.output.dense.w", "l7.output.dense.b", "l7.output.LN.w", "l7.output.LN.b", "l8.attn.self.query.w", "l8.attn.self.query.b", "l8.attn.self.key.w", "l8.attn.self.key.b", "l8.attn.self.value.w", "l8.attn.self.value.b", "l8.attn.output.dense.w", "l8.attn.output.dense.b", "l8.attn.output.LN.w", "l8.attn.output.LN.b", "l8.inter.dense.w", "l8.inter.dense.b", "l8.output.dense.w", "l8.output.dense.b", "l8.output.LN.w", "l8.output.LN.b", "l9.attn.self.query.w", "l9.attn.self.query.b", "l9.attn.self.key.w", "l9.attn.self.key.b", "l9.attn.self.value.w", "l9.attn.self.value.b", "l9.attn.output.dense.w", "l9.attn.output.dense.b", "l9.attn.output.LN.w", "l9.attn.output.LN.b", "l9.inter.dense.w", "l9.inter.dense.b", "l9.output.dense.w", "l9.output.dense.b", "l9.output.LN.w", "l9.output.LN.b", "l10.attn.self.query.w", "l10.attn.self.query.b", "l10.attn.self.key.w", "l10.attn.self.key.b", "l10.attn.self.value.w", "l10.attn.self.value.b", "l10.attn.output.dense.w", "l10.attn.output.dense.b", "l10.attn.output.LN.w", "l10.attn.output.LN.b", "l10.inter.dense.w", "l10.inter.dense.b", "l10.output.dense.w", "l10.output.dense.b", "l10.output.LN.w", "l10.output.LN.b", "l11.attn.self.query.w", "l11.attn.self.query.b", "l11.attn.self.key.w", "l11.attn.self.key.b", "l11.attn.self.value.w", "l11.attn.self.value.b", "l11.attn.output.dense.w", "l11.attn.output.dense.b", "l11.attn.output.LN.w", "l11.attn.output.LN.b", "l11.inter.dense.w", "l11.inter.dense.b", "l11.output.dense.w", "l11.output.dense.b", "l11.output.LN.w", "l11.output.LN.b", "pooler.dense.w", "pooler.dense.b", "cls.predictions.bias", "cls.transform.dense.w", "cls.transform.dense.b", "cls.transform.LN.w", "cls.transform.LN.b", "cls.seq_relationship.w", "cls.seq_relationship.b"]
# z3 leaf modules (deepspeed.utils.set_z3_leaf_modules): fetch their whole
# subtree at once; the modules inside get no hooks
Z3_LEAF = []
# tied / external parameter uses (module, param): the module's op also reads
# the parameter; deepspeed.zero.register_external_parameter(module, param)
EXTERNAL = [(183, 0), (183, 199)]  # cls.decoder uses emb.word.w, cls.decoder uses cls.predictions.bias

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
            (0, None, "pretrain", ["batch"], 1, ["out1.0", "out1.1"], []),
              (1, 0, "bert", ["arg0"], 2, ["out1.0", "out2.0"], []),
                (2, 1, "emb", ["arg0"], 1, ["out3.0", "out1.0", "out2.0"], []),
                  (3, 2, "emb.word", ["arg0"], 1, ["arg0"], []),
                  (4, 2, "emb.token_type", ["batch"], 1, ["arg0"], []),
                  (5, 2, "emb.position", ["batch"], 1, ["arg0"], []),
                  (6, 2, "emb.LN", ["out0.0"], 1, ["arg0"], []),
                (7, 1, "encoder", ["out0.0"], 1, ["out11.0"], []),
                  (8, 7, "l0", ["arg0"], 1, ["out2.0"], []),
                    (9, 8, "l0.attn", ["arg0"], 1, ["out1.0"], []),
                      (10, 9, "l0.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (11, 10, "l0.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (12, 10, "l0.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (13, 10, "l0.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (14, 9, "l0.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (15, 14, "l0.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (16, 14, "l0.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (17, 8, "l0.inter", ["out0.0"], 1, ["out0.0"], []),
                      (18, 17, "l0.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (19, 8, "l0.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (20, 19, "l0.output.dense", ["arg0"], 1, ["arg0"], []),
                      (21, 19, "l0.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (22, 7, "l1", ["out0.0"], 1, ["out2.0"], []),
                    (23, 22, "l1.attn", ["arg0"], 1, ["out1.0"], []),
                      (24, 23, "l1.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (25, 24, "l1.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (26, 24, "l1.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (27, 24, "l1.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (28, 23, "l1.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (29, 28, "l1.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (30, 28, "l1.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (31, 22, "l1.inter", ["out0.0"], 1, ["out0.0"], []),
                      (32, 31, "l1.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (33, 22, "l1.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (34, 33, "l1.output.dense", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "l1.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (36, 7, "l2", ["out1.0"], 1, ["out2.0"], []),
                    (37, 36, "l2.attn", ["arg0"], 1, ["out1.0"], []),
                      (38, 37, "l2.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (39, 38, "l2.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (40, 38, "l2.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (41, 38, "l2.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (42, 37, "l2.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (43, 42, "l2.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (44, 42, "l2.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (45, 36, "l2.inter", ["out0.0"], 1, ["out0.0"], []),
                      (46, 45, "l2.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (47, 36, "l2.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (48, 47, "l2.output.dense", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l2.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (50, 7, "l3", ["out2.0"], 1, ["out2.0"], []),
                    (51, 50, "l3.attn", ["arg0"], 1, ["out1.0"], []),
                      (52, 51, "l3.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (53, 52, "l3.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (54, 52, "l3.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (55, 52, "l3.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (56, 51, "l3.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (57, 56, "l3.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (58, 56, "l3.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (59, 50, "l3.inter", ["out0.0"], 1, ["out0.0"], []),
                      (60, 59, "l3.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (61, 50, "l3.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (62, 61, "l3.output.dense", ["arg0"], 1, ["arg0"], []),
                      (63, 61, "l3.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (64, 7, "l4", ["out3.0"], 1, ["out2.0"], []),
                    (65, 64, "l4.attn", ["arg0"], 1, ["out1.0"], []),
                      (66, 65, "l4.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (67, 66, "l4.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (68, 66, "l4.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (69, 66, "l4.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (70, 65, "l4.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (71, 70, "l4.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (72, 70, "l4.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (73, 64, "l4.inter", ["out0.0"], 1, ["out0.0"], []),
                      (74, 73, "l4.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (75, 64, "l4.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (76, 75, "l4.output.dense", ["arg0"], 1, ["arg0"], []),
                      (77, 75, "l4.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (78, 7, "l5", ["out4.0"], 1, ["out2.0"], []),
                    (79, 78, "l5.attn", ["arg0"], 1, ["out1.0"], []),
                      (80, 79, "l5.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (81, 80, "l5.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (82, 80, "l5.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (83, 80, "l5.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (84, 79, "l5.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (85, 84, "l5.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (86, 84, "l5.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (87, 78, "l5.inter", ["out0.0"], 1, ["out0.0"], []),
                      (88, 87, "l5.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (89, 78, "l5.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (90, 89, "l5.output.dense", ["arg0"], 1, ["arg0"], []),
                      (91, 89, "l5.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (92, 7, "l6", ["out5.0"], 1, ["out2.0"], []),
                    (93, 92, "l6.attn", ["arg0"], 1, ["out1.0"], []),
                      (94, 93, "l6.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (95, 94, "l6.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (96, 94, "l6.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (97, 94, "l6.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (98, 93, "l6.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (99, 98, "l6.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (100, 98, "l6.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (101, 92, "l6.inter", ["out0.0"], 1, ["out0.0"], []),
                      (102, 101, "l6.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (103, 92, "l6.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (104, 103, "l6.output.dense", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "l6.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (106, 7, "l7", ["out6.0"], 1, ["out2.0"], []),
                    (107, 106, "l7.attn", ["arg0"], 1, ["out1.0"], []),
                      (108, 107, "l7.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (109, 108, "l7.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (110, 108, "l7.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (111, 108, "l7.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (112, 107, "l7.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (113, 112, "l7.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (114, 112, "l7.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (115, 106, "l7.inter", ["out0.0"], 1, ["out0.0"], []),
                      (116, 115, "l7.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (117, 106, "l7.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (118, 117, "l7.output.dense", ["arg0"], 1, ["arg0"], []),
                      (119, 117, "l7.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (120, 7, "l8", ["out7.0"], 1, ["out2.0"], []),
                    (121, 120, "l8.attn", ["arg0"], 1, ["out1.0"], []),
                      (122, 121, "l8.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (123, 122, "l8.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (124, 122, "l8.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (125, 122, "l8.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (126, 121, "l8.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (127, 126, "l8.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (128, 126, "l8.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (129, 120, "l8.inter", ["out0.0"], 1, ["out0.0"], []),
                      (130, 129, "l8.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (131, 120, "l8.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (132, 131, "l8.output.dense", ["arg0"], 1, ["arg0"], []),
                      (133, 131, "l8.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (134, 7, "l9", ["out8.0"], 1, ["out2.0"], []),
                    (135, 134, "l9.attn", ["arg0"], 1, ["out1.0"], []),
                      (136, 135, "l9.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (137, 136, "l9.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (138, 136, "l9.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (139, 136, "l9.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (140, 135, "l9.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (141, 140, "l9.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (142, 140, "l9.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (143, 134, "l9.inter", ["out0.0"], 1, ["out0.0"], []),
                      (144, 143, "l9.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (145, 134, "l9.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (146, 145, "l9.output.dense", ["arg0"], 1, ["arg0"], []),
                      (147, 145, "l9.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (148, 7, "l10", ["out9.0"], 1, ["out2.0"], []),
                    (149, 148, "l10.attn", ["arg0"], 1, ["out1.0"], []),
                      (150, 149, "l10.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (151, 150, "l10.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (152, 150, "l10.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (153, 150, "l10.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (154, 149, "l10.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (155, 154, "l10.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (156, 154, "l10.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (157, 148, "l10.inter", ["out0.0"], 1, ["out0.0"], []),
                      (158, 157, "l10.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (159, 148, "l10.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (160, 159, "l10.output.dense", ["arg0"], 1, ["arg0"], []),
                      (161, 159, "l10.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (162, 7, "l11", ["out10.0"], 1, ["out2.0"], []),
                    (163, 162, "l11.attn", ["arg0"], 1, ["out1.0"], []),
                      (164, 163, "l11.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (165, 164, "l11.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (166, 164, "l11.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (167, 164, "l11.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (168, 163, "l11.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (169, 168, "l11.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (170, 168, "l11.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (171, 162, "l11.inter", ["out0.0"], 1, ["out0.0"], []),
                      (172, 171, "l11.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (173, 162, "l11.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (174, 173, "l11.output.dense", ["arg0"], 1, ["arg0"], []),
                      (175, 173, "l11.output.LN", ["out0.0"], 1, ["arg0"], []),
                (176, 1, "pooler", ["out1.0"], 1, ["out0.0"], []),
                  (177, 176, "pooler.dense", ["arg0"], 1, ["arg0"], []),
              (178, 0, "cls", ["out0.0", "out0.1"], 2, ["out0.0", "out1.0"], []),
                (179, 178, "cls.predictions", ["arg0"], 1, ["out1.0"], []),
                  (180, 179, "cls.transform", ["arg0"], 1, ["out1.0"], []),
                    (181, 180, "cls.transform.dense", ["arg0"], 1, ["arg0"], []),
                    (182, 180, "cls.transform.LN", ["out0.0"], 1, ["arg0"], []),
                  (183, 179, "cls.decoder", ["out0.0"], 1, ["arg0"], []),
                (184, 178, "cls.seq_relationship", ["arg1"], 1, ["arg0"], []),
        ]),
    ]),
    ("train", [  # step 1
        dict(loss=[0], calls=[  # pass 0
            (0, None, "pretrain", ["batch"], 1, ["out1.0", "out1.1"], []),
              (1, 0, "bert", ["arg0"], 2, ["out1.0", "out2.0"], []),
                (2, 1, "emb", ["arg0"], 1, ["out3.0", "out1.0", "out2.0"], []),
                  (3, 2, "emb.word", ["arg0"], 1, ["arg0"], []),
                  (4, 2, "emb.token_type", ["batch"], 1, ["arg0"], []),
                  (5, 2, "emb.position", ["batch"], 1, ["arg0"], []),
                  (6, 2, "emb.LN", ["out0.0"], 1, ["arg0"], []),
                (7, 1, "encoder", ["out0.0"], 1, ["out11.0"], []),
                  (8, 7, "l0", ["arg0"], 1, ["out2.0"], []),
                    (9, 8, "l0.attn", ["arg0"], 1, ["out1.0"], []),
                      (10, 9, "l0.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (11, 10, "l0.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (12, 10, "l0.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (13, 10, "l0.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (14, 9, "l0.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (15, 14, "l0.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (16, 14, "l0.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (17, 8, "l0.inter", ["out0.0"], 1, ["out0.0"], []),
                      (18, 17, "l0.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (19, 8, "l0.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (20, 19, "l0.output.dense", ["arg0"], 1, ["arg0"], []),
                      (21, 19, "l0.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (22, 7, "l1", ["out0.0"], 1, ["out2.0"], []),
                    (23, 22, "l1.attn", ["arg0"], 1, ["out1.0"], []),
                      (24, 23, "l1.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (25, 24, "l1.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (26, 24, "l1.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (27, 24, "l1.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (28, 23, "l1.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (29, 28, "l1.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (30, 28, "l1.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (31, 22, "l1.inter", ["out0.0"], 1, ["out0.0"], []),
                      (32, 31, "l1.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (33, 22, "l1.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (34, 33, "l1.output.dense", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "l1.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (36, 7, "l2", ["out1.0"], 1, ["out2.0"], []),
                    (37, 36, "l2.attn", ["arg0"], 1, ["out1.0"], []),
                      (38, 37, "l2.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (39, 38, "l2.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (40, 38, "l2.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (41, 38, "l2.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (42, 37, "l2.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (43, 42, "l2.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (44, 42, "l2.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (45, 36, "l2.inter", ["out0.0"], 1, ["out0.0"], []),
                      (46, 45, "l2.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (47, 36, "l2.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (48, 47, "l2.output.dense", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l2.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (50, 7, "l3", ["out2.0"], 1, ["out2.0"], []),
                    (51, 50, "l3.attn", ["arg0"], 1, ["out1.0"], []),
                      (52, 51, "l3.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (53, 52, "l3.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (54, 52, "l3.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (55, 52, "l3.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (56, 51, "l3.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (57, 56, "l3.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (58, 56, "l3.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (59, 50, "l3.inter", ["out0.0"], 1, ["out0.0"], []),
                      (60, 59, "l3.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (61, 50, "l3.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (62, 61, "l3.output.dense", ["arg0"], 1, ["arg0"], []),
                      (63, 61, "l3.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (64, 7, "l4", ["out3.0"], 1, ["out2.0"], []),
                    (65, 64, "l4.attn", ["arg0"], 1, ["out1.0"], []),
                      (66, 65, "l4.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (67, 66, "l4.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (68, 66, "l4.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (69, 66, "l4.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (70, 65, "l4.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (71, 70, "l4.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (72, 70, "l4.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (73, 64, "l4.inter", ["out0.0"], 1, ["out0.0"], []),
                      (74, 73, "l4.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (75, 64, "l4.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (76, 75, "l4.output.dense", ["arg0"], 1, ["arg0"], []),
                      (77, 75, "l4.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (78, 7, "l5", ["out4.0"], 1, ["out2.0"], []),
                    (79, 78, "l5.attn", ["arg0"], 1, ["out1.0"], []),
                      (80, 79, "l5.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (81, 80, "l5.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (82, 80, "l5.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (83, 80, "l5.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (84, 79, "l5.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (85, 84, "l5.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (86, 84, "l5.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (87, 78, "l5.inter", ["out0.0"], 1, ["out0.0"], []),
                      (88, 87, "l5.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (89, 78, "l5.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (90, 89, "l5.output.dense", ["arg0"], 1, ["arg0"], []),
                      (91, 89, "l5.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (92, 7, "l6", ["out5.0"], 1, ["out2.0"], []),
                    (93, 92, "l6.attn", ["arg0"], 1, ["out1.0"], []),
                      (94, 93, "l6.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (95, 94, "l6.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (96, 94, "l6.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (97, 94, "l6.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (98, 93, "l6.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (99, 98, "l6.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (100, 98, "l6.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (101, 92, "l6.inter", ["out0.0"], 1, ["out0.0"], []),
                      (102, 101, "l6.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (103, 92, "l6.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (104, 103, "l6.output.dense", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "l6.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (106, 7, "l7", ["out6.0"], 1, ["out2.0"], []),
                    (107, 106, "l7.attn", ["arg0"], 1, ["out1.0"], []),
                      (108, 107, "l7.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (109, 108, "l7.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (110, 108, "l7.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (111, 108, "l7.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (112, 107, "l7.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (113, 112, "l7.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (114, 112, "l7.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (115, 106, "l7.inter", ["out0.0"], 1, ["out0.0"], []),
                      (116, 115, "l7.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (117, 106, "l7.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (118, 117, "l7.output.dense", ["arg0"], 1, ["arg0"], []),
                      (119, 117, "l7.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (120, 7, "l8", ["out7.0"], 1, ["out2.0"], []),
                    (121, 120, "l8.attn", ["arg0"], 1, ["out1.0"], []),
                      (122, 121, "l8.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (123, 122, "l8.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (124, 122, "l8.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (125, 122, "l8.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (126, 121, "l8.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (127, 126, "l8.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (128, 126, "l8.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (129, 120, "l8.inter", ["out0.0"], 1, ["out0.0"], []),
                      (130, 129, "l8.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (131, 120, "l8.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (132, 131, "l8.output.dense", ["arg0"], 1, ["arg0"], []),
                      (133, 131, "l8.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (134, 7, "l9", ["out8.0"], 1, ["out2.0"], []),
                    (135, 134, "l9.attn", ["arg0"], 1, ["out1.0"], []),
                      (136, 135, "l9.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (137, 136, "l9.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (138, 136, "l9.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (139, 136, "l9.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (140, 135, "l9.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (141, 140, "l9.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (142, 140, "l9.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (143, 134, "l9.inter", ["out0.0"], 1, ["out0.0"], []),
                      (144, 143, "l9.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (145, 134, "l9.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (146, 145, "l9.output.dense", ["arg0"], 1, ["arg0"], []),
                      (147, 145, "l9.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (148, 7, "l10", ["out9.0"], 1, ["out2.0"], []),
                    (149, 148, "l10.attn", ["arg0"], 1, ["out1.0"], []),
                      (150, 149, "l10.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (151, 150, "l10.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (152, 150, "l10.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (153, 150, "l10.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (154, 149, "l10.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (155, 154, "l10.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (156, 154, "l10.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (157, 148, "l10.inter", ["out0.0"], 1, ["out0.0"], []),
                      (158, 157, "l10.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (159, 148, "l10.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (160, 159, "l10.output.dense", ["arg0"], 1, ["arg0"], []),
                      (161, 159, "l10.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (162, 7, "l11", ["out10.0"], 1, ["out2.0"], []),
                    (163, 162, "l11.attn", ["arg0"], 1, ["out1.0"], []),
                      (164, 163, "l11.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (165, 164, "l11.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (166, 164, "l11.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (167, 164, "l11.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (168, 163, "l11.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (169, 168, "l11.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (170, 168, "l11.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (171, 162, "l11.inter", ["out0.0"], 1, ["out0.0"], []),
                      (172, 171, "l11.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (173, 162, "l11.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (174, 173, "l11.output.dense", ["arg0"], 1, ["arg0"], []),
                      (175, 173, "l11.output.LN", ["out0.0"], 1, ["arg0"], []),
                (176, 1, "pooler", ["out1.0"], 1, ["out0.0"], []),
                  (177, 176, "pooler.dense", ["arg0"], 1, ["arg0"], []),
              (178, 0, "cls", ["out0.0", "out0.1"], 2, ["out0.0", "out1.0"], []),
                (179, 178, "cls.predictions", ["arg0"], 1, ["out1.0"], []),
                  (180, 179, "cls.transform", ["arg0"], 1, ["out1.0"], []),
                    (181, 180, "cls.transform.dense", ["arg0"], 1, ["arg0"], []),
                    (182, 180, "cls.transform.LN", ["out0.0"], 1, ["arg0"], []),
                  (183, 179, "cls.decoder", ["out0.0"], 1, ["arg0"], []),
                (184, 178, "cls.seq_relationship", ["arg1"], 1, ["arg0"], []),
        ]),
    ]),
    ("eval", [  # step 2
        dict(loss=[], calls=[  # pass 0
            (0, None, "pretrain", ["batch"], 1, ["out1.0", "out1.1"], []),
              (1, 0, "bert", ["arg0"], 2, ["out1.0", "out2.0"], []),
                (2, 1, "emb", ["arg0"], 1, ["out3.0", "out1.0", "out2.0"], []),
                  (3, 2, "emb.word", ["arg0"], 1, ["arg0"], []),
                  (4, 2, "emb.token_type", ["batch"], 1, ["arg0"], []),
                  (5, 2, "emb.position", ["batch"], 1, ["arg0"], []),
                  (6, 2, "emb.LN", ["out0.0"], 1, ["arg0"], []),
                (7, 1, "encoder", ["out0.0"], 1, ["out11.0"], []),
                  (8, 7, "l0", ["arg0"], 1, ["out2.0"], []),
                    (9, 8, "l0.attn", ["arg0"], 1, ["out1.0"], []),
                      (10, 9, "l0.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (11, 10, "l0.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (12, 10, "l0.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (13, 10, "l0.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (14, 9, "l0.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (15, 14, "l0.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (16, 14, "l0.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (17, 8, "l0.inter", ["out0.0"], 1, ["out0.0"], []),
                      (18, 17, "l0.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (19, 8, "l0.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (20, 19, "l0.output.dense", ["arg0"], 1, ["arg0"], []),
                      (21, 19, "l0.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (22, 7, "l1", ["out0.0"], 1, ["out2.0"], []),
                    (23, 22, "l1.attn", ["arg0"], 1, ["out1.0"], []),
                      (24, 23, "l1.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (25, 24, "l1.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (26, 24, "l1.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (27, 24, "l1.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (28, 23, "l1.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (29, 28, "l1.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (30, 28, "l1.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (31, 22, "l1.inter", ["out0.0"], 1, ["out0.0"], []),
                      (32, 31, "l1.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (33, 22, "l1.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (34, 33, "l1.output.dense", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "l1.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (36, 7, "l2", ["out1.0"], 1, ["out2.0"], []),
                    (37, 36, "l2.attn", ["arg0"], 1, ["out1.0"], []),
                      (38, 37, "l2.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (39, 38, "l2.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (40, 38, "l2.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (41, 38, "l2.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (42, 37, "l2.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (43, 42, "l2.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (44, 42, "l2.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (45, 36, "l2.inter", ["out0.0"], 1, ["out0.0"], []),
                      (46, 45, "l2.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (47, 36, "l2.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (48, 47, "l2.output.dense", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l2.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (50, 7, "l3", ["out2.0"], 1, ["out2.0"], []),
                    (51, 50, "l3.attn", ["arg0"], 1, ["out1.0"], []),
                      (52, 51, "l3.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (53, 52, "l3.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (54, 52, "l3.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (55, 52, "l3.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (56, 51, "l3.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (57, 56, "l3.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (58, 56, "l3.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (59, 50, "l3.inter", ["out0.0"], 1, ["out0.0"], []),
                      (60, 59, "l3.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (61, 50, "l3.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (62, 61, "l3.output.dense", ["arg0"], 1, ["arg0"], []),
                      (63, 61, "l3.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (64, 7, "l4", ["out3.0"], 1, ["out2.0"], []),
                    (65, 64, "l4.attn", ["arg0"], 1, ["out1.0"], []),
                      (66, 65, "l4.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (67, 66, "l4.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (68, 66, "l4.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (69, 66, "l4.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (70, 65, "l4.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (71, 70, "l4.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (72, 70, "l4.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (73, 64, "l4.inter", ["out0.0"], 1, ["out0.0"], []),
                      (74, 73, "l4.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (75, 64, "l4.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (76, 75, "l4.output.dense", ["arg0"], 1, ["arg0"], []),
                      (77, 75, "l4.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (78, 7, "l5", ["out4.0"], 1, ["out2.0"], []),
                    (79, 78, "l5.attn", ["arg0"], 1, ["out1.0"], []),
                      (80, 79, "l5.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (81, 80, "l5.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (82, 80, "l5.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (83, 80, "l5.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (84, 79, "l5.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (85, 84, "l5.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (86, 84, "l5.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (87, 78, "l5.inter", ["out0.0"], 1, ["out0.0"], []),
                      (88, 87, "l5.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (89, 78, "l5.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (90, 89, "l5.output.dense", ["arg0"], 1, ["arg0"], []),
                      (91, 89, "l5.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (92, 7, "l6", ["out5.0"], 1, ["out2.0"], []),
                    (93, 92, "l6.attn", ["arg0"], 1, ["out1.0"], []),
                      (94, 93, "l6.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (95, 94, "l6.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (96, 94, "l6.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (97, 94, "l6.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (98, 93, "l6.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (99, 98, "l6.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (100, 98, "l6.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (101, 92, "l6.inter", ["out0.0"], 1, ["out0.0"], []),
                      (102, 101, "l6.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (103, 92, "l6.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (104, 103, "l6.output.dense", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "l6.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (106, 7, "l7", ["out6.0"], 1, ["out2.0"], []),
                    (107, 106, "l7.attn", ["arg0"], 1, ["out1.0"], []),
                      (108, 107, "l7.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (109, 108, "l7.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (110, 108, "l7.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (111, 108, "l7.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (112, 107, "l7.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (113, 112, "l7.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (114, 112, "l7.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (115, 106, "l7.inter", ["out0.0"], 1, ["out0.0"], []),
                      (116, 115, "l7.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (117, 106, "l7.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (118, 117, "l7.output.dense", ["arg0"], 1, ["arg0"], []),
                      (119, 117, "l7.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (120, 7, "l8", ["out7.0"], 1, ["out2.0"], []),
                    (121, 120, "l8.attn", ["arg0"], 1, ["out1.0"], []),
                      (122, 121, "l8.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (123, 122, "l8.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (124, 122, "l8.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (125, 122, "l8.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (126, 121, "l8.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (127, 126, "l8.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (128, 126, "l8.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (129, 120, "l8.inter", ["out0.0"], 1, ["out0.0"], []),
                      (130, 129, "l8.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (131, 120, "l8.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (132, 131, "l8.output.dense", ["arg0"], 1, ["arg0"], []),
                      (133, 131, "l8.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (134, 7, "l9", ["out8.0"], 1, ["out2.0"], []),
                    (135, 134, "l9.attn", ["arg0"], 1, ["out1.0"], []),
                      (136, 135, "l9.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (137, 136, "l9.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (138, 136, "l9.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (139, 136, "l9.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (140, 135, "l9.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (141, 140, "l9.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (142, 140, "l9.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (143, 134, "l9.inter", ["out0.0"], 1, ["out0.0"], []),
                      (144, 143, "l9.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (145, 134, "l9.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (146, 145, "l9.output.dense", ["arg0"], 1, ["arg0"], []),
                      (147, 145, "l9.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (148, 7, "l10", ["out9.0"], 1, ["out2.0"], []),
                    (149, 148, "l10.attn", ["arg0"], 1, ["out1.0"], []),
                      (150, 149, "l10.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (151, 150, "l10.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (152, 150, "l10.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (153, 150, "l10.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (154, 149, "l10.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (155, 154, "l10.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (156, 154, "l10.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (157, 148, "l10.inter", ["out0.0"], 1, ["out0.0"], []),
                      (158, 157, "l10.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (159, 148, "l10.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (160, 159, "l10.output.dense", ["arg0"], 1, ["arg0"], []),
                      (161, 159, "l10.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (162, 7, "l11", ["out10.0"], 1, ["out2.0"], []),
                    (163, 162, "l11.attn", ["arg0"], 1, ["out1.0"], []),
                      (164, 163, "l11.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (165, 164, "l11.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (166, 164, "l11.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (167, 164, "l11.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (168, 163, "l11.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (169, 168, "l11.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (170, 168, "l11.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (171, 162, "l11.inter", ["out0.0"], 1, ["out0.0"], []),
                      (172, 171, "l11.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (173, 162, "l11.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (174, 173, "l11.output.dense", ["arg0"], 1, ["arg0"], []),
                      (175, 173, "l11.output.LN", ["out0.0"], 1, ["arg0"], []),
                (176, 1, "pooler", ["out1.0"], 1, ["out0.0"], []),
                  (177, 176, "pooler.dense", ["arg0"], 1, ["arg0"], []),
              (178, 0, "cls", ["out0.0", "out0.1"], 2, ["out0.0", "out1.0"], []),
                (179, 178, "cls.predictions", ["arg0"], 1, ["out1.0"], []),
                  (180, 179, "cls.transform", ["arg0"], 1, ["out1.0"], []),
                    (181, 180, "cls.transform.dense", ["arg0"], 1, ["arg0"], []),
                    (182, 180, "cls.transform.LN", ["out0.0"], 1, ["arg0"], []),
                  (183, 179, "cls.decoder", ["out0.0"], 1, ["arg0"], []),
                (184, 178, "cls.seq_relationship", ["arg1"], 1, ["arg0"], []),
        ]),
    ]),
    ("accum", [  # step 3
        dict(loss=[0], calls=[  # pass 0
            (0, None, "pretrain", ["batch"], 1, ["out1.0", "out1.1"], []),
              (1, 0, "bert", ["arg0"], 2, ["out1.0", "out2.0"], []),
                (2, 1, "emb", ["arg0"], 1, ["out3.0", "out1.0", "out2.0"], []),
                  (3, 2, "emb.word", ["arg0"], 1, ["arg0"], []),
                  (4, 2, "emb.token_type", ["batch"], 1, ["arg0"], []),
                  (5, 2, "emb.position", ["batch"], 1, ["arg0"], []),
                  (6, 2, "emb.LN", ["out0.0"], 1, ["arg0"], []),
                (7, 1, "encoder", ["out0.0"], 1, ["out11.0"], []),
                  (8, 7, "l0", ["arg0"], 1, ["out2.0"], []),
                    (9, 8, "l0.attn", ["arg0"], 1, ["out1.0"], []),
                      (10, 9, "l0.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (11, 10, "l0.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (12, 10, "l0.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (13, 10, "l0.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (14, 9, "l0.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (15, 14, "l0.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (16, 14, "l0.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (17, 8, "l0.inter", ["out0.0"], 1, ["out0.0"], []),
                      (18, 17, "l0.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (19, 8, "l0.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (20, 19, "l0.output.dense", ["arg0"], 1, ["arg0"], []),
                      (21, 19, "l0.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (22, 7, "l1", ["out0.0"], 1, ["out2.0"], []),
                    (23, 22, "l1.attn", ["arg0"], 1, ["out1.0"], []),
                      (24, 23, "l1.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (25, 24, "l1.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (26, 24, "l1.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (27, 24, "l1.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (28, 23, "l1.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (29, 28, "l1.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (30, 28, "l1.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (31, 22, "l1.inter", ["out0.0"], 1, ["out0.0"], []),
                      (32, 31, "l1.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (33, 22, "l1.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (34, 33, "l1.output.dense", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "l1.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (36, 7, "l2", ["out1.0"], 1, ["out2.0"], []),
                    (37, 36, "l2.attn", ["arg0"], 1, ["out1.0"], []),
                      (38, 37, "l2.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (39, 38, "l2.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (40, 38, "l2.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (41, 38, "l2.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (42, 37, "l2.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (43, 42, "l2.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (44, 42, "l2.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (45, 36, "l2.inter", ["out0.0"], 1, ["out0.0"], []),
                      (46, 45, "l2.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (47, 36, "l2.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (48, 47, "l2.output.dense", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l2.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (50, 7, "l3", ["out2.0"], 1, ["out2.0"], []),
                    (51, 50, "l3.attn", ["arg0"], 1, ["out1.0"], []),
                      (52, 51, "l3.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (53, 52, "l3.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (54, 52, "l3.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (55, 52, "l3.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (56, 51, "l3.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (57, 56, "l3.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (58, 56, "l3.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (59, 50, "l3.inter", ["out0.0"], 1, ["out0.0"], []),
                      (60, 59, "l3.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (61, 50, "l3.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (62, 61, "l3.output.dense", ["arg0"], 1, ["arg0"], []),
                      (63, 61, "l3.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (64, 7, "l4", ["out3.0"], 1, ["out2.0"], []),
                    (65, 64, "l4.attn", ["arg0"], 1, ["out1.0"], []),
                      (66, 65, "l4.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (67, 66, "l4.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (68, 66, "l4.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (69, 66, "l4.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (70, 65, "l4.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (71, 70, "l4.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (72, 70, "l4.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (73, 64, "l4.inter", ["out0.0"], 1, ["out0.0"], []),
                      (74, 73, "l4.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (75, 64, "l4.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (76, 75, "l4.output.dense", ["arg0"], 1, ["arg0"], []),
                      (77, 75, "l4.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (78, 7, "l5", ["out4.0"], 1, ["out2.0"], []),
                    (79, 78, "l5.attn", ["arg0"], 1, ["out1.0"], []),
                      (80, 79, "l5.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (81, 80, "l5.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (82, 80, "l5.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (83, 80, "l5.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (84, 79, "l5.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (85, 84, "l5.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (86, 84, "l5.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (87, 78, "l5.inter", ["out0.0"], 1, ["out0.0"], []),
                      (88, 87, "l5.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (89, 78, "l5.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (90, 89, "l5.output.dense", ["arg0"], 1, ["arg0"], []),
                      (91, 89, "l5.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (92, 7, "l6", ["out5.0"], 1, ["out2.0"], []),
                    (93, 92, "l6.attn", ["arg0"], 1, ["out1.0"], []),
                      (94, 93, "l6.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (95, 94, "l6.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (96, 94, "l6.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (97, 94, "l6.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (98, 93, "l6.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (99, 98, "l6.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (100, 98, "l6.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (101, 92, "l6.inter", ["out0.0"], 1, ["out0.0"], []),
                      (102, 101, "l6.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (103, 92, "l6.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (104, 103, "l6.output.dense", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "l6.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (106, 7, "l7", ["out6.0"], 1, ["out2.0"], []),
                    (107, 106, "l7.attn", ["arg0"], 1, ["out1.0"], []),
                      (108, 107, "l7.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (109, 108, "l7.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (110, 108, "l7.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (111, 108, "l7.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (112, 107, "l7.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (113, 112, "l7.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (114, 112, "l7.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (115, 106, "l7.inter", ["out0.0"], 1, ["out0.0"], []),
                      (116, 115, "l7.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (117, 106, "l7.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (118, 117, "l7.output.dense", ["arg0"], 1, ["arg0"], []),
                      (119, 117, "l7.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (120, 7, "l8", ["out7.0"], 1, ["out2.0"], []),
                    (121, 120, "l8.attn", ["arg0"], 1, ["out1.0"], []),
                      (122, 121, "l8.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (123, 122, "l8.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (124, 122, "l8.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (125, 122, "l8.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (126, 121, "l8.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (127, 126, "l8.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (128, 126, "l8.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (129, 120, "l8.inter", ["out0.0"], 1, ["out0.0"], []),
                      (130, 129, "l8.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (131, 120, "l8.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (132, 131, "l8.output.dense", ["arg0"], 1, ["arg0"], []),
                      (133, 131, "l8.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (134, 7, "l9", ["out8.0"], 1, ["out2.0"], []),
                    (135, 134, "l9.attn", ["arg0"], 1, ["out1.0"], []),
                      (136, 135, "l9.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (137, 136, "l9.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (138, 136, "l9.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (139, 136, "l9.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (140, 135, "l9.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (141, 140, "l9.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (142, 140, "l9.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (143, 134, "l9.inter", ["out0.0"], 1, ["out0.0"], []),
                      (144, 143, "l9.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (145, 134, "l9.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (146, 145, "l9.output.dense", ["arg0"], 1, ["arg0"], []),
                      (147, 145, "l9.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (148, 7, "l10", ["out9.0"], 1, ["out2.0"], []),
                    (149, 148, "l10.attn", ["arg0"], 1, ["out1.0"], []),
                      (150, 149, "l10.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (151, 150, "l10.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (152, 150, "l10.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (153, 150, "l10.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (154, 149, "l10.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (155, 154, "l10.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (156, 154, "l10.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (157, 148, "l10.inter", ["out0.0"], 1, ["out0.0"], []),
                      (158, 157, "l10.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (159, 148, "l10.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (160, 159, "l10.output.dense", ["arg0"], 1, ["arg0"], []),
                      (161, 159, "l10.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (162, 7, "l11", ["out10.0"], 1, ["out2.0"], []),
                    (163, 162, "l11.attn", ["arg0"], 1, ["out1.0"], []),
                      (164, 163, "l11.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (165, 164, "l11.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (166, 164, "l11.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (167, 164, "l11.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (168, 163, "l11.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (169, 168, "l11.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (170, 168, "l11.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (171, 162, "l11.inter", ["out0.0"], 1, ["out0.0"], []),
                      (172, 171, "l11.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (173, 162, "l11.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (174, 173, "l11.output.dense", ["arg0"], 1, ["arg0"], []),
                      (175, 173, "l11.output.LN", ["out0.0"], 1, ["arg0"], []),
                (176, 1, "pooler", ["out1.0"], 1, ["out0.0"], []),
                  (177, 176, "pooler.dense", ["arg0"], 1, ["arg0"], []),
              (178, 0, "cls", ["out0.0", "out0.1"], 2, ["out0.0", "out1.0"], []),
                (179, 178, "cls.predictions", ["arg0"], 1, ["out1.0"], []),
                  (180, 179, "cls.transform", ["arg0"], 1, ["out1.0"], []),
                    (181, 180, "cls.transform.dense", ["arg0"], 1, ["arg0"], []),
                    (182, 180, "cls.transform.LN", ["out0.0"], 1, ["arg0"], []),
                  (183, 179, "cls.decoder", ["out0.0"], 1, ["arg0"], []),
                (184, 178, "cls.seq_relationship", ["arg1"], 1, ["arg0"], []),
        ]),
        dict(loss=[0], calls=[  # pass 1
            (0, None, "pretrain", ["batch"], 1, ["out1.0", "out1.1"], []),
              (1, 0, "bert", ["arg0"], 2, ["out1.0", "out2.0"], []),
                (2, 1, "emb", ["arg0"], 1, ["out3.0", "out1.0", "out2.0"], []),
                  (3, 2, "emb.word", ["arg0"], 1, ["arg0"], []),
                  (4, 2, "emb.token_type", ["batch"], 1, ["arg0"], []),
                  (5, 2, "emb.position", ["batch"], 1, ["arg0"], []),
                  (6, 2, "emb.LN", ["out0.0"], 1, ["arg0"], []),
                (7, 1, "encoder", ["out0.0"], 1, ["out11.0"], []),
                  (8, 7, "l0", ["arg0"], 1, ["out2.0"], []),
                    (9, 8, "l0.attn", ["arg0"], 1, ["out1.0"], []),
                      (10, 9, "l0.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (11, 10, "l0.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (12, 10, "l0.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (13, 10, "l0.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (14, 9, "l0.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (15, 14, "l0.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (16, 14, "l0.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (17, 8, "l0.inter", ["out0.0"], 1, ["out0.0"], []),
                      (18, 17, "l0.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (19, 8, "l0.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (20, 19, "l0.output.dense", ["arg0"], 1, ["arg0"], []),
                      (21, 19, "l0.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (22, 7, "l1", ["out0.0"], 1, ["out2.0"], []),
                    (23, 22, "l1.attn", ["arg0"], 1, ["out1.0"], []),
                      (24, 23, "l1.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (25, 24, "l1.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (26, 24, "l1.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (27, 24, "l1.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (28, 23, "l1.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (29, 28, "l1.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (30, 28, "l1.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (31, 22, "l1.inter", ["out0.0"], 1, ["out0.0"], []),
                      (32, 31, "l1.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (33, 22, "l1.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (34, 33, "l1.output.dense", ["arg0"], 1, ["arg0"], []),
                      (35, 33, "l1.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (36, 7, "l2", ["out1.0"], 1, ["out2.0"], []),
                    (37, 36, "l2.attn", ["arg0"], 1, ["out1.0"], []),
                      (38, 37, "l2.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (39, 38, "l2.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (40, 38, "l2.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (41, 38, "l2.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (42, 37, "l2.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (43, 42, "l2.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (44, 42, "l2.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (45, 36, "l2.inter", ["out0.0"], 1, ["out0.0"], []),
                      (46, 45, "l2.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (47, 36, "l2.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (48, 47, "l2.output.dense", ["arg0"], 1, ["arg0"], []),
                      (49, 47, "l2.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (50, 7, "l3", ["out2.0"], 1, ["out2.0"], []),
                    (51, 50, "l3.attn", ["arg0"], 1, ["out1.0"], []),
                      (52, 51, "l3.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (53, 52, "l3.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (54, 52, "l3.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (55, 52, "l3.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (56, 51, "l3.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (57, 56, "l3.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (58, 56, "l3.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (59, 50, "l3.inter", ["out0.0"], 1, ["out0.0"], []),
                      (60, 59, "l3.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (61, 50, "l3.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (62, 61, "l3.output.dense", ["arg0"], 1, ["arg0"], []),
                      (63, 61, "l3.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (64, 7, "l4", ["out3.0"], 1, ["out2.0"], []),
                    (65, 64, "l4.attn", ["arg0"], 1, ["out1.0"], []),
                      (66, 65, "l4.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (67, 66, "l4.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (68, 66, "l4.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (69, 66, "l4.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (70, 65, "l4.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (71, 70, "l4.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (72, 70, "l4.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (73, 64, "l4.inter", ["out0.0"], 1, ["out0.0"], []),
                      (74, 73, "l4.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (75, 64, "l4.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (76, 75, "l4.output.dense", ["arg0"], 1, ["arg0"], []),
                      (77, 75, "l4.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (78, 7, "l5", ["out4.0"], 1, ["out2.0"], []),
                    (79, 78, "l5.attn", ["arg0"], 1, ["out1.0"], []),
                      (80, 79, "l5.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (81, 80, "l5.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (82, 80, "l5.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (83, 80, "l5.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (84, 79, "l5.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (85, 84, "l5.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (86, 84, "l5.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (87, 78, "l5.inter", ["out0.0"], 1, ["out0.0"], []),
                      (88, 87, "l5.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (89, 78, "l5.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (90, 89, "l5.output.dense", ["arg0"], 1, ["arg0"], []),
                      (91, 89, "l5.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (92, 7, "l6", ["out5.0"], 1, ["out2.0"], []),
                    (93, 92, "l6.attn", ["arg0"], 1, ["out1.0"], []),
                      (94, 93, "l6.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (95, 94, "l6.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (96, 94, "l6.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (97, 94, "l6.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (98, 93, "l6.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (99, 98, "l6.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (100, 98, "l6.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (101, 92, "l6.inter", ["out0.0"], 1, ["out0.0"], []),
                      (102, 101, "l6.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (103, 92, "l6.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (104, 103, "l6.output.dense", ["arg0"], 1, ["arg0"], []),
                      (105, 103, "l6.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (106, 7, "l7", ["out6.0"], 1, ["out2.0"], []),
                    (107, 106, "l7.attn", ["arg0"], 1, ["out1.0"], []),
                      (108, 107, "l7.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (109, 108, "l7.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (110, 108, "l7.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (111, 108, "l7.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (112, 107, "l7.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (113, 112, "l7.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (114, 112, "l7.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (115, 106, "l7.inter", ["out0.0"], 1, ["out0.0"], []),
                      (116, 115, "l7.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (117, 106, "l7.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (118, 117, "l7.output.dense", ["arg0"], 1, ["arg0"], []),
                      (119, 117, "l7.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (120, 7, "l8", ["out7.0"], 1, ["out2.0"], []),
                    (121, 120, "l8.attn", ["arg0"], 1, ["out1.0"], []),
                      (122, 121, "l8.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (123, 122, "l8.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (124, 122, "l8.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (125, 122, "l8.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (126, 121, "l8.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (127, 126, "l8.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (128, 126, "l8.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (129, 120, "l8.inter", ["out0.0"], 1, ["out0.0"], []),
                      (130, 129, "l8.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (131, 120, "l8.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (132, 131, "l8.output.dense", ["arg0"], 1, ["arg0"], []),
                      (133, 131, "l8.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (134, 7, "l9", ["out8.0"], 1, ["out2.0"], []),
                    (135, 134, "l9.attn", ["arg0"], 1, ["out1.0"], []),
                      (136, 135, "l9.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (137, 136, "l9.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (138, 136, "l9.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (139, 136, "l9.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (140, 135, "l9.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (141, 140, "l9.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (142, 140, "l9.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (143, 134, "l9.inter", ["out0.0"], 1, ["out0.0"], []),
                      (144, 143, "l9.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (145, 134, "l9.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (146, 145, "l9.output.dense", ["arg0"], 1, ["arg0"], []),
                      (147, 145, "l9.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (148, 7, "l10", ["out9.0"], 1, ["out2.0"], []),
                    (149, 148, "l10.attn", ["arg0"], 1, ["out1.0"], []),
                      (150, 149, "l10.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (151, 150, "l10.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (152, 150, "l10.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (153, 150, "l10.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (154, 149, "l10.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (155, 154, "l10.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (156, 154, "l10.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (157, 148, "l10.inter", ["out0.0"], 1, ["out0.0"], []),
                      (158, 157, "l10.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (159, 148, "l10.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (160, 159, "l10.output.dense", ["arg0"], 1, ["arg0"], []),
                      (161, 159, "l10.output.LN", ["out0.0"], 1, ["arg0"], []),
                  (162, 7, "l11", ["out10.0"], 1, ["out2.0"], []),
                    (163, 162, "l11.attn", ["arg0"], 1, ["out1.0"], []),
                      (164, 163, "l11.attn.self", ["arg0"], 1, ["out0.0", "out1.0", "out2.0"], []),
                        (165, 164, "l11.attn.self.query", ["arg0"], 1, ["arg0"], []),
                        (166, 164, "l11.attn.self.key", ["arg0"], 1, ["arg0"], []),
                        (167, 164, "l11.attn.self.value", ["arg0"], 1, ["arg0"], []),
                      (168, 163, "l11.attn.output", ["out0.0", "arg0"], 1, ["out1.0", "arg1"], []),
                        (169, 168, "l11.attn.output.dense", ["arg0"], 1, ["arg0"], []),
                        (170, 168, "l11.attn.output.LN", ["out0.0"], 1, ["arg0"], []),
                    (171, 162, "l11.inter", ["out0.0"], 1, ["out0.0"], []),
                      (172, 171, "l11.inter.dense", ["arg0"], 1, ["arg0"], []),
                    (173, 162, "l11.output", ["out1.0", "out0.0"], 1, ["out1.0", "arg1"], []),
                      (174, 173, "l11.output.dense", ["arg0"], 1, ["arg0"], []),
                      (175, 173, "l11.output.LN", ["out0.0"], 1, ["arg0"], []),
                (176, 1, "pooler", ["out1.0"], 1, ["out0.0"], []),
                  (177, 176, "pooler.dense", ["arg0"], 1, ["arg0"], []),
              (178, 0, "cls", ["out0.0", "out0.1"], 2, ["out0.0", "out1.0"], []),
                (179, 178, "cls.predictions", ["arg0"], 1, ["out1.0"], []),
                  (180, 179, "cls.transform", ["arg0"], 1, ["out1.0"], []),
                    (181, 180, "cls.transform.dense", ["arg0"], 1, ["arg0"], []),
                    (182, 180, "cls.transform.LN", ["out0.0"], 1, ["arg0"], []),
                  (183, 179, "cls.decoder", ["out0.0"], 1, ["arg0"], []),
                (184, 178, "cls.seq_relationship", ["arg1"], 1, ["arg0"], []),
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
