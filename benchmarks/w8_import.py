"""W8: import time -- wall time of ``python -c "import leafgrad"`` in a fresh
subprocess, best of 5, next to ``import torch`` (best of 2: it takes
seconds) and ``import numpy`` (which
leafgrad has to pay for) and a bare ``python -c pass`` (interpreter start-up,
included in every number).  Target: leafgrad <= 0.15 s (whole command).
"""
import _common  # noqa: F401
import os
import subprocess
import sys
import tempfile
import time

ID = "W8"
TITLE = "python -c 'import X' wall time (best of 5, incl. interpreter start)"
KIND = "import"
VARIANTS = [("import", "s", 1.0)]
TARGET_S = 0.15
REPEATS = 5


def compile_bytecode(module, path):
    """Write ``module``'s bytecode caches under ``path``, as ``pip install`` does, so that the
    timing measures an installed package. Without this a checkout whose caches are stale is
    recompiled on every import when PYTHONDONTWRITEBYTECODE is set (this machine sets it):
    ~50 ms more, which is not what a user pays."""
    import compileall
    package = os.path.join(path, module)
    if os.path.isdir(package):
        compileall.compile_dir(package, quiet=1)


def time_import(module, extra_path=None, repeats=REPEATS):
    """Best-of-``repeats`` wall time (s) of ``python -c 'import module'``."""
    env = dict(os.environ)
    if extra_path:
        compile_bytecode(module, extra_path)
        env["PYTHONPATH"] = os.pathsep.join([extra_path] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    code = "pass" if module is None else f"import {module}"
    best, err = None, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           cwd=tempfile.gettempdir())  # not the repo: '' is on sys.path
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or ["rc=%d" % p.returncode])[-1]
            break
        best = dt if best is None else min(best, dt)
    return best, err


if __name__ == "__main__":
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
