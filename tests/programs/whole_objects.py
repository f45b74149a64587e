"""Whole objects through torch.save and torch.load, as PyTorch programs save them: a module with
submodules, a hook and a function attribute, NumPy arrays and scalars, argparse.Namespace and odd
containers, an optimizer. tests/test_checkpoint_objects.py runs it with python (PyTorch) and with
python -m leafgrad and compares what they print: what is refused and in which words, what each
allowlist admits, and what comes back."""
import argparse
import collections
import pickle
import sys

import numpy as np
import numpy.dtypes  # noqa: F401
import torch
import torch.nn as nn
import torch.nn.functional as F

def hook(module, args, out):
    return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 4)
        self.lstm = nn.LSTM(4, 5, 2)
        self.bn = nn.BatchNorm1d(5)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(5, 7)
        self.act = F.relu
        self.note = {'epochs': 3, 'name': 'net', 'shape': (2, 3)}
        self.out.register_forward_hook(hook)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.out(self.drop(self.act(self.bn(h[-1]))))


def detail(e):
    text = str(e)
    if 'WeightsUnpickler error: ' in text:
        text = text.split('WeightsUnpickler error: ', 1)[1]
    else:
        text = text.split('\n\n')[1]
    return f'{type(e) is pickle.UnpicklingError}: {text.split(chr(10) + chr(10) + "Check")[0].strip()}'


def attempt(path, allow, **kw):
    try:
        with torch.serialization.safe_globals(allow):
            return torch.load(path, **kw)
    except pickle.UnpicklingError as e:
        print('refused:', detail(e))


def run(suffix):
    print('== files ending in', suffix)
    torch.manual_seed(0)
    net = Net()
    net.eval()
    x = torch.tensor([[1, 2, 3], [4, 5, 6], [0, 1, 2]])
    path = 'net' + suffix
    torch.save(net, path)
    print('unsafe:', sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path)))
    attempt(path, [])
    attempt(path, [], weights_only=True)
    attempt(path, [Net])
    attempt(path, [Net, nn.Embedding, nn.LSTM, nn.BatchNorm1d, nn.Dropout, nn.Linear])
    allow = [Net, nn.Embedding, nn.LSTM, nn.BatchNorm1d, nn.Dropout, nn.Linear, F.relu, hook]
    back = attempt(path, allow)
    print('allowlisted after the with block:', [g for g in allow if g in torch.serialization.get_safe_globals()])
    print('same output:', torch.equal(back(x), net(x)), 'training:', back.training, back.lstm.training)
    print('parameters:', [(n, type(p).__name__, p.requires_grad, tuple(p.shape)) for n, p in back.named_parameters()])
    print('buffers:', [(n, str(b.dtype)) for n, b in back.named_buffers()])
    print('hooks:', len(back.out._forward_hooks), back.out._forward_hooks[next(iter(back.out._forward_hooks))] is hook)
    print('note:', back.note, 'act is relu:', back.act is F.relu)
    back.train()
    print('train():', back.training, back.bn.training)

    # NumPy: what time_sequence_prediction saves
    data = np.sin(np.arange(12.0).reshape(3, 4) / 3)
    torch.save(data, open('data' + suffix, 'wb'))
    steps = [[], [np._core.multiarray._reconstruct], [np._core.multiarray._reconstruct, np.ndarray],
             [np._core.multiarray._reconstruct, np.ndarray, np.dtype],
             [np._core.multiarray._reconstruct, np.ndarray, np.dtype, np.dtypes.Float64DType]]
    for allow in steps:
        got = attempt('data' + suffix, allow)
    print('array:', type(got).__name__, got.dtype, got.shape, np.array_equal(got, data))
    torch.save({'best': np.float32(0.25), 'epoch': np.int64(7)}, 'scalars' + suffix)
    for allow in ([], [np._core.multiarray.scalar], [np._core.multiarray.scalar, np.dtype],
                  [np._core.multiarray.scalar, np.dtype, np.dtypes.Float32DType, np.dtypes.Int64DType]):
        got = attempt('scalars' + suffix, allow)
    print('scalars:', {k: (type(v).__name__, v) for k, v in got.items()})

    # argparse.Namespace, sets, frozensets, defaultdicts, shared and self-referring containers
    args = argparse.Namespace(lr=0.1, layers=[1, 2], name='x')
    shared = [1, 2]
    loop = [3]
    loop.append(loop)
    torch.save({'args': args, 'a': shared, 'b': shared, 'loop': loop, 's': {1, 2}, 'f': frozenset([3]),
                'c': complex(1, 2), 'by': b'\x00\xff', 'ba': bytearray(b'ab'), 'od': collections.OrderedDict(z=1),
                'cnt': collections.Counter('aab'), 'size': torch.Size([2, 3]), 'dt': torch.float16,
                'dev': torch.device('cpu'), 'cls': nn.Linear, 'fn': F.relu}, 'misc' + suffix)
    print('unsafe:', sorted(torch.serialization.get_unsafe_globals_in_checkpoint('misc' + suffix)))
    attempt('misc' + suffix, [argparse.Namespace, frozenset, nn.Linear])
    got = attempt('misc' + suffix, [argparse.Namespace, frozenset, nn.Linear, F.relu])
    print('misc:', got['args'], got['a'] is got['b'], got['loop'][1] is got['loop'], got['s'], got['f'], got['c'],
          got['by'], got['ba'], got['od'], got['cnt'], got['size'], got['dt'], got['dev'], got['cls'] is nn.Linear,
          got['fn'] is F.relu)
    dd = collections.defaultdict(list)
    dd['k'].append(1)
    torch.save(dd, 'dd' + suffix)
    attempt('dd' + suffix, [collections.defaultdict])
    attempt('dd' + suffix, [collections.defaultdict, list])

    # an optimizer saved whole (its state is a defaultdict)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    net.train()
    net(x).sum().backward()
    opt.step()
    torch.save(opt, 'opt' + suffix)
    print('unsafe:', sorted(torch.serialization.get_unsafe_globals_in_checkpoint('opt' + suffix)))
    attempt('opt' + suffix, [torch.optim.Adam, collections.defaultdict, dict])

    # what cannot be saved
    for bad in (lambda: 0, {'lock': __import__('threading').Lock()}):
        try:
            torch.save(bad, 'bad' + suffix)
        except Exception as e:
            print('save refused:', type(e).__name__, str(e).split(' at 0x')[0])


for suffix in sys.argv[1:]:
    run(suffix)
