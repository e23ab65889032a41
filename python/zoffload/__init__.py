"""zoffload: tools for bringing a real PyTorch model to the zoffload harness.

zoffload.capture records one or more training steps of a real model with
DeepSpeed-shaped ZeRO-3 hooks and writes them as a .scn scenario plus the
real hook trace (see python/README.md)."""

__version__ = "0.1.0"
