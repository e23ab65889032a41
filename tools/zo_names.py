"""Names the C headers define once, for the Python tools.

include/zoffload.h keeps its status codes, counter policies, DeepSpeed
profiles and event kinds as X-macro lists (ZO_STATUS_MAP and friends);
this module reads those lists from the header instead of copying them, so
a policy added in C is a policy here.  Raises RuntimeError if the header
is missing or a list cannot be parsed."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "include", "zoffload.h")


def xmacro(name, path=HEADER):
    """The entries of `#define name(XX) XX(...) XX(...) ...` in `path`, each
    as a tuple of its arguments (string literals unquoted, in list order)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise RuntimeError("zo_names: cannot read %s: %s" % (path, e))
    m = re.search(r"^#define %s\(XX\)((?:.*\\\n)*.*)$" % re.escape(name), text, re.M)
    if not m:
        raise RuntimeError("zo_names: %s not found in %s" % (name, path))
    body = re.sub(r"/\*.*?\*/", " ", m.group(1).replace("\\\n", " "), flags=re.S)
    out = []
    for args in re.findall(r"XX\(([^)]*)\)", body):
        parts = [a.strip() for a in args.split(",")]
        out.append(tuple(a[1:-1] if a.startswith('"') and a.endswith('"') else a for a in parts))
    if not out:
        raise RuntimeError("zo_names: %s in %s has no entries" % (name, path))
    return out


POLICIES = tuple(text for _, _, text in sorted(xmacro("ZO_GRADS_POLICY_MAP"), key=lambda e: int(e[1])))
"""Counter policy names in zo_grads_policy order ("per-call" first)."""
DS_PROFILES = tuple(text for _, _, text in sorted(xmacro("ZO_DS_PROFILE_MAP"), key=lambda e: int(e[1])))
"""zo_ds_profile names in value order ("0.19" first, the default)."""
STATUS = {int(v): "ZO_ERR_" + n for n, v, _ in xmacro("ZO_STATUS_MAP")}
"""zo_status value -> its name (ZO_OK not included)."""
EVENT_KINDS = tuple(n for (n,) in xmacro("ZO_EVENT_KIND_MAP"))
"""zo_event_kind names in value order."""
