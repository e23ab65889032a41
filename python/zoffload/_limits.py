"""The scenario model's bounds, read from the C header that defines them.

fuzz/scenario.h is the one place the bounds live (ZS_MAX_*, ZS_NAME_LEN);
the capture tool reads them from it at import time instead of keeping a
copy that could drift.  The header is looked up, in order:

  1. $ZOFFLOAD_SCENARIO_H (a path to scenario.h),
  2. scenario.h next to this file (the installed package carries it: in the
     source tree python/zoffload/scenario.h is a link to fuzz/scenario.h),
  3. fuzz/scenario.h of the source tree this package sits in.
"""
import os
import re

_NAMES = ("MAX_MODULES", "MAX_PARAMS", "MAX_USES", "MAX_STEPS", "MAX_PASSES", "MAX_CALLS",
          "MAX_CHILD_CALLS", "MAX_IN", "MAX_OUT", "MAX_USE", "MAX_KW", "MAX_MIX", "MAX_NUMEL",
          "NAME_LEN")

_DEFINE = re.compile(r"^\s*#\s*define\s+ZS_([A-Z0-9_]+)\s+(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\b", re.M)


def header_path():
    """The scenario.h this package reads (see the module docstring)."""
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.environ.get("ZOFFLOAD_SCENARIO_H") or None,
             os.path.join(here, "scenario.h"),
             os.path.join(here, os.pardir, os.pardir, "fuzz", "scenario.h")]
    for p in cands:
        if p and os.path.isfile(p):
            return os.path.normpath(p)
    raise ImportError("zoffload: cannot find the scenario model's header scenario.h (looked at %s); "
                      "set ZOFFLOAD_SCENARIO_H to zoffload's fuzz/scenario.h"
                      % ", ".join(p for p in cands if p))


def parse_limits(text):
    """{name: int} of every `#define ZS_NAME <integer>` in text (ZS_ dropped)."""
    return {m.group(1): int(m.group(2), 0) for m in _DEFINE.finditer(text)}


def load_limits(path=None):
    """The capture tool's bounds from scenario.h: MAX_* as the header's
    ZS_MAX_*, and NAME_LEN = ZS_NAME_LEN - 1 (the characters a name holds
    before its NUL).  Raises ImportError if a bound is missing."""
    path = path or header_path()
    with open(path, encoding="utf-8") as f:
        got = parse_limits(f.read())
    missing = [n for n in _NAMES if n not in got]
    if missing:
        raise ImportError("zoffload: %s defines no %s" % (path, ", ".join("ZS_" + n for n in missing)))
    out = {n: got[n] for n in _NAMES}
    out["NAME_LEN"] = got["NAME_LEN"] - 1
    return out
