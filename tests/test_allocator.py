"""leafgrad keeps freed memory for reuse (backend._keep_freed_memory): NumPy's temporaries of a
repeated computation are served from memory already mapped, not faulted in again on every call.
Counted in page faults of a fresh interpreter, with and without the setting."""
import os
import platform
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PROGRAM = '''
import resource, sys
import leafgrad, numpy as np
x = np.ones(65536)
def work():  # four 512 KiB temporaries, freed together
    a = x * 2.0; b = a * a; c = b * b; d = c + a
for _ in range(5): work()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50): work()
print(leafgrad.backend.keeps_freed_memory, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 50)
'''
_GLIBC = sys.platform.startswith('linux') and platform.libc_ver()[0] == 'glibc'


def _faults(**env):
    full = dict(os.environ, PYTHONPATH=ROOT, **env)
    for name in ('MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_', 'GLIBC_TUNABLES', 'LEAFGRAD_KEEP_FREED_MEMORY'):
        if name not in env:
            full.pop(name, None)
    out = subprocess.run([sys.executable, '-c', _PROGRAM], env=full, capture_output=True, text=True, check=True)
    kept, faults = out.stdout.split()
    return kept == 'True', float(faults)


def test_freed_memory_is_reused():
    kept, faults = _faults()
    assert kept is _GLIBC
    if _GLIBC:
        assert faults < 5  # (glibc's defaults: ~480 a call, every temporary's pages again)


@pytest.mark.parametrize('env', [{'LEAFGRAD_KEEP_FREED_MEMORY': '0'}, {'MALLOC_TRIM_THRESHOLD_': '131072'},
                                 {'GLIBC_TUNABLES': 'glibc.malloc.trim_threshold=131072'}], ids=lambda e: next(iter(e)))
def test_glibc_defaults_kept_when_asked(env):
    kept, faults = _faults(**env)
    assert not kept
    if _GLIBC:
        assert faults > 100  # the pattern above does fault without the setting
