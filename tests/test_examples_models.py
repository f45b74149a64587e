"""pytorch/examples' super_resolution and language_translation models, their own files from the
corpus (never copied here), built by the same seed in PyTorch and under ``python -m leafgrad``:
outputs, loss and gradients agree (issue: these models give torch's values on the same weights;
leafgrad reproduces PyTorch's CPU random stream, so the same seed is the same weights)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from test_corpus import CORPUS

pytest.importorskip('torch')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = r'''
import json, os, sys
import torch
examples = os.path.join(sys.argv[1], 'pytorch+examples')
out = {}
sys.path.insert(0, os.path.join(examples, 'super_resolution'))
from model import Net
torch.manual_seed(0)
net = Net(upscale_factor=3)
x = torch.rand(2, 1, 8, 8, requires_grad=True)
y = net(x)
(y * y).sum().backward()
out['super_resolution'] = [y.detach().reshape(-1).tolist(), x.grad.reshape(-1).tolist(),
                           net.conv1.weight.grad.reshape(-1).tolist(), list(y.shape)]
sys.path.insert(0, os.path.join(examples, 'language_translation'))
from src.model import Translator
torch.manual_seed(0)
m = Translator(2, 2, 16, 4, 11, 13, 32, 0.0)
src, tgt = torch.randint(0, 11, (7, 3)), torch.randint(0, 13, (5, 3))
tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
src_mask = torch.zeros(7, 7, dtype=torch.bool)
src_pad, tgt_pad = (src == 0).T, (tgt == 0).T
logits = m(src, tgt, src_mask, tgt_mask, src_pad, tgt_pad, src_pad)
loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 13), tgt.reshape(-1), ignore_index=0)
loss.backward()
out['language_translation'] = [logits.detach().reshape(-1).tolist(), [loss.item()],
                               m.src_embedding.weight.grad.reshape(-1).tolist(), list(logits.shape)]
json.dump(out, sys.stdout)
'''


def _run(tmp_path, *launch):
    driver = tmp_path / 'driver.py'
    driver.write_text(DRIVER)
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, *launch, str(driver), CORPUS], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.skipif(CORPUS is None, reason='no corpus of real PyTorch programs here ($LEAFGRAD_CORPUS)')
def test_models_give_torchs_values_on_the_same_weights(tmp_path):
    ours, theirs = _run(tmp_path, '-m', 'leafgrad'), _run(tmp_path)
    for model in ('super_resolution', 'language_translation'):
        *values, shape = ours[model]
        *expected, expected_shape = theirs[model]
        assert shape == expected_shape, model
        for got, want in zip(values, expected):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=model)
