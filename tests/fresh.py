"""Run a program in a fresh interpreter: for what importing leafgrad loads, which an already
running test process cannot show, and for how ``python -m leafgrad`` runs a program."""
import os
import subprocess
import sys

import leafgrad

LEAFGRAD_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(leafgrad.__file__)))


def fresh_python_output(code):
    """The standard output (stripped) of ``python -c code`` in a new process; raises if it fails."""
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.strip()


def run_python(*args, cwd):
    """``python *args`` in ``cwd`` with this leafgrad importable (first on PYTHONPATH), whatever
    the directory; returns the CompletedProcess (text output), failed or not."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [LEAFGRAD_ROOT, os.environ.get('PYTHONPATH')])))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
