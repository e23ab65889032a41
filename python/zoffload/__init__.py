"""zoffload: tools for bringing a real PyTorch model to the zoffload harness.

zoffload.capture records one or more training steps of a real model with
DeepSpeed-shaped ZeRO-3 hooks and writes them as a .scn scenario plus the
real hook trace (see python/README.md).  zoffload.torch trains a real model
with libzoffload as its ZeRO-3 coordinator (live mode, through the ctypes
binding zoffload._lib), and zoffload.check runs a training step live and
reports the first protocol invariant broken."""

__version__ = "0.1.0"
