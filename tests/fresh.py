"""Run a program in a fresh interpreter: for what importing leafgrad loads, which an already
running test process cannot show."""
import subprocess
import sys


def fresh_python_output(code):
    """The standard output (stripped) of ``python -c code`` in a new process; raises if it fails."""
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.strip()
