"""scripts/benchlib.py - what the scripts/bench-* programs share.

Where the sandtrace build is (BUILD_DIR, default build, relative to the repository), its
binaries, an environment free of any tracing of the caller's, and the build of a helper
program of tests/bench with $CC.  Imported by the bench scripts (which put scripts/ on
sys.path); not a program.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_SRC = os.path.join(ROOT, "tests", "bench")


def build_dir():
    """The sandtrace build directory, absolute: $BUILD_DIR (default build) under the repository."""
    bd = os.environ.get("BUILD_DIR", "build")
    return bd if os.path.isabs(bd) else os.path.join(ROOT, bd)


def sandtrace_bins(prog, bd=None):
    """(CLI, shim) of the build in bd (default build_dir()); exits naming prog when not built."""
    bd = bd or build_dir()
    st = os.path.join(bd, "daemon", "sandtrace")
    shim = os.path.join(bd, "shim", "libsandtrace.so")
    if not (os.access(st, os.X_OK) and os.path.exists(shim)):
        sys.exit("%s: sandtrace is not built in %s (run scripts/setup)" % (prog, bd))
    return st, shim


def clean_env(drop=(), **set_vars):
    """os.environ without LD_PRELOAD, without every SANDTRACE_* variable (a benchmark run
    from inside a traced shell must not inherit its run) and without the names in drop;
    LC_ALL=C, then set_vars."""
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.startswith("SANDTRACE_") and k not in drop}
    env["LC_ALL"] = "C"
    env.update(set_vars)
    return env


def build_helper(src, out, shared=False, libs=(), std=None):
    """Compile tests/bench/SRC into OUT with $CC (default gcc) -O2 -Wall (a shared object
    with -shared -fPIC when shared); raises CalledProcessError on a failed build."""
    cmd = [os.environ.get("CC", "gcc"), "-O2", "-Wall"]
    if std:
        cmd.append("-std=" + std)
    if shared:
        cmd += ["-shared", "-fPIC"]
    cmd += ["-o", out, os.path.join(BENCH_SRC, src)] + list(libs)
    subprocess.run(cmd, check=True)
    return out
