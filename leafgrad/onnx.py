"""leafgrad.onnx: what a PyTorch program that imports torch.onnx finds.

leafgrad records no graph an ONNX exporter could translate (it runs eagerly on NumPy), so
``export`` refuses with a RuntimeError that says so; a program that only imports the module, or
asks ``is_in_onnx_export()``, runs as under PyTorch.
"""

__all__ = ['export', 'is_in_onnx_export']


def is_in_onnx_export():
    """False: leafgrad never runs a model inside an ONNX export."""
    return False


def export(model, args=(), f=None, *rest, **kwargs):
    raise RuntimeError('leafgrad cannot export models to ONNX: it runs eagerly on NumPy and records no graph an '
                       'ONNX exporter could translate (export with PyTorch)')
