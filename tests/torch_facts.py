"""Facts asked of PyTorch in a process of its own: torch.compile's frame hook, once installed,
stays for the rest of a process, and so do torch's log and config settings."""
import json
import subprocess
import sys

import pytest


def ask_torch(script):
    """Run ``script`` with PyTorch (it prints a JSON object last) and return that object;
    the test is skipped where PyTorch is not installed."""
    pytest.importorskip('torch')
    out = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
