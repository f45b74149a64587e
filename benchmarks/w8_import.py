"""W8: import time -- what ``import leafgrad`` adds to ``import numpy``, measured in one process.

A fresh interpreter imports NumPy, then the library, and times each import with perf_counter
(best of 7 fresh processes). The leafgrad and torch columns are each library's import *after*
NumPy's (torch: best of 2, it takes seconds); the numpy column is NumPy's own import, which
every leafgrad program pays and leafgrad cannot change. Interpreter start-up is in none of
them. Target: leafgrad <= 30 ms above NumPy.

Also measured (notes under the table): leafgrad's import in CPU time (the same on a loaded
machine, where wall time includes waiting for a core), and what ``python -m leafgrad`` adds to
``import leafgrad``: its runner and the finder that resolves ``import torch`` to leafgrad
(``import leafgrad.__main__``, ``install_as_torch()``, ``import torch``), timed the same way.
"""
import _common  # noqa: F401
import json
import os
import subprocess
import sys
import tempfile

ID = "W8"
TITLE = "import X after import numpy, in one process (best of 7; numpy: its own import)"
KIND = "import"
VARIANTS = [("import", "ms", 1.0)]
TARGET_MS = 30.0
TARGET = f"leafgrad <= {TARGET_MS:g} ms above numpy"
REPEATS = 7

# Run in a fresh interpreter: argv[1] the module to import after numpy ('numpy': none), argv[2]
# 'runner' to time python -m leafgrad's additions after it. Prints the times in seconds, and the
# process's CPU time for the module's import (on a loaded machine wall time waits for a core).
PROGRAM = """
import json, sys, time
t0 = time.perf_counter()
import numpy
t1, c1 = time.perf_counter(), time.process_time()
if sys.argv[1] != 'numpy':
    __import__(sys.argv[1])
t2, c2 = time.perf_counter(), time.process_time()
if sys.argv[2:] == ['runner']:
    import leafgrad.__main__
    sys.modules['leafgrad'].install_as_torch()
    import torch
t3 = time.perf_counter()
print(json.dumps({'numpy': t1 - t0, 'module': t2 - t1, 'module_cpu': c2 - c1, 'runner': t3 - t2}))
"""


def compile_bytecode(module, path):
    """Write ``module``'s bytecode caches under ``path``, as ``pip install`` does, so that the
    timing measures an installed package. Without this a checkout whose caches are stale is
    recompiled on every import when PYTHONDONTWRITEBYTECODE is set (this machine sets it):
    ~50 ms more, which is not what a user pays."""
    import compileall
    package = os.path.join(path, module)
    if os.path.isdir(package):
        compileall.compile_dir(package, quiet=1)


def _best(module, extra_path, repeats, runner=False):
    """Best-of-``repeats`` times (s) of PROGRAM's parts for ``module``; or an error line."""
    env = dict(os.environ)
    if extra_path:
        compile_bytecode(module, extra_path)
        env["PYTHONPATH"] = os.pathsep.join([extra_path] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    best = None
    for _ in range(repeats):
        p = subprocess.run([sys.executable, "-c", PROGRAM, module] + (["runner"] if runner else []), env=env,
                           capture_output=True, text=True, cwd=tempfile.gettempdir())  # not the repo: '' is on sys.path
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or ["rc=%d" % p.returncode])[-1]
        times = json.loads(p.stdout)
        best = times if best is None else {k: min(v, times[k]) for k, v in best.items()}
    return best, None


def time_import(module, extra_path=None, repeats=REPEATS):
    """Best-of-``repeats`` milliseconds of ``import module`` after ``import numpy`` in one fresh
    interpreter (for 'numpy', of ``import numpy`` itself); returns (ms, error)."""
    best, err = _best(module, extra_path, repeats)
    if err:
        return None, err
    return 1e3 * best["numpy" if module == "numpy" else "module"], None


def time_runner(extra_path, repeats=REPEATS):
    """Best-of-``repeats`` milliseconds that ``python -m leafgrad``'s runner and torch finder add
    to ``import leafgrad``, and of ``import leafgrad``'s CPU time; returns ((ms, cpu ms), error)."""
    best, err = _best("leafgrad", extra_path, repeats, runner=True)
    return (None, err) if err else ((1e3 * best["runner"], 1e3 * best["module_cpu"]), None)


if __name__ == "__main__":
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
