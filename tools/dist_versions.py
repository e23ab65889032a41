"""dist_versions.py - the installed versions of Python distributions, read
from their metadata without importing them (importing torch 2.x costs
seconds of CPU; the oracles import it themselves anyway).

    PYTHON tools/dist_versions.py torch [deepspeed ...]

prints one line `torch 2.15.0 deepspeed 0.19.8` (the distribution's version
without a local part: `1.13.0a0+gitunknown` -> `1.13.0a0`, as
torch.__version__ gives it) and exits 0; exits 1 with `cannot import X`
on stderr when a module cannot be found on that interpreter's path; exits
2 with a usage line when no name is given, or a name is empty or repeated.
"""
import importlib.metadata
import importlib.util
import sys


def found(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is missing
        return False


def main(names):
    if not names or any(not n for n in names) or len(set(names)) != len(names):
        sys.stderr.write("usage: dist_versions.py MODULE [MODULE ...] (distinct, non-empty names)\n")
        return 2
    missing = [n for n in names if not found(n)]
    if missing:
        sys.stderr.write("cannot import %s\n" % ", ".join(missing))
        return 1
    out = []
    for n in names:
        try:
            v = importlib.metadata.version(n)
        except importlib.metadata.PackageNotFoundError:
            v = "unknown"
        out.append("%s %s" % (n, v.split("+")[0]))
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
