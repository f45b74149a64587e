"""Memory and time of saving and loading a checkpoint, leafgrad against PyTorch.

    python benchmarks/checkpoint_memory.py            # a 256 MiB state dict (8 float32 tensors)
                                                      # (leafgrad saves .lgt in its format, .pt in torch's)
    python benchmarks/checkpoint_memory.py --mib 64

Each measurement runs in a fresh process: the peak of tracemalloc (NumPy's and PyTorch's tensor
memory are both traced) and the growth of the peak resident set (VmHWM) during the call, both as a
multiple of the bytes of the tensors, and the wall time of the call.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r'''
import json, os, sys, time, tracemalloc
sys.path.insert(0, sys.argv[4])
import numpy as np
what, lib_name, path, _, mib = sys.argv[1:6]
mib = int(mib)
lib = __import__(lib_name)

def hwm():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith('VmHWM'))

def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')

n = mib << 20
if what.startswith('save'):
    obj = {f'w{i}': lib.ones(n // 32) for i in range(8)}
    kw = {'_use_new_zipfile_serialization': False} if what == 'save-legacy' else {}
    call = lambda: lib.save(obj, path, **kw)
else:
    call = lambda: lib.load(path)
os.system('true')  # (fork once before measuring: no copy-on-write surprises later)
start_rss = rss()
with open('/proc/self/clear_refs', 'w') as f:  # reset VmHWM to the current resident set
    f.write('5')
tracemalloc.start()
t = time.perf_counter()
out = call()
seconds = time.perf_counter() - t
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({'seconds': seconds, 'traced': peak / n, 'rss': (hwm() - start_rss) / n}))
'''


def _run(what, lib, path, mib):
    out = subprocess.run([sys.executable, '-c', _CHILD, what, lib, path, _ROOT, str(mib)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--mib', type=int, default=256, help='size of the state dict in MiB (default 256)')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {'leafgrad': os.path.join(tmp, 'ck.lgt'), 'torch zip': os.path.join(tmp, 'ck.pt'),
                 'torch legacy': os.path.join(tmp, 'legacy.pt'), 'leafgrad .pt': os.path.join(tmp, 'lg.pt')}
        rows = [('leafgrad.save', _run('save', 'leafgrad', files['leafgrad'], args.mib)),
                ('leafgrad.save to .pt (zip)', _run('save', 'leafgrad', files['leafgrad .pt'], args.mib)),
                ('torch.save', _run('save', 'torch', files['torch zip'], args.mib)),
                ('torch.save (legacy)', _run('save-legacy', 'torch', files['torch legacy'], args.mib))]
        for kind, path in files.items():
            rows.append((f'leafgrad.load {kind} file', _run('load', 'leafgrad', path, args.mib)))
            if kind != 'leafgrad':
                rows.append((f'torch.load {kind} file', _run('load', 'torch', path, args.mib)))
    print(f'{args.mib} MiB of tensors; peak memory during the call as a multiple of that')
    print(f'{"call":<34} {"seconds":>8} {"tracemalloc":>12} {"peak RSS":>9}')
    for name, r in rows:
        print(f'{name:<34} {r["seconds"]:>8.2f} {r["traced"]:>11.2f}x {r["rss"]:>8.2f}x')


if __name__ == '__main__':
    main()
