"""leafgrad.onnx: importable as torch.onnx; export refuses with a RuntimeError, is_in_onnx_export is
False as in PyTorch outside an export."""
import pytest

from oracle import torch
import leafgrad as lg


def test_onnx_module():
    import leafgrad.onnx
    assert lg.onnx is leafgrad.onnx
    assert lg.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    with pytest.raises(RuntimeError, match='cannot export models to ONNX'):
        lg.onnx.export(lg.nn.Linear(2, 2), (lg.zeros(1, 2),), 'model.onnx')
