"""``leafgrad.onnx``: the module ``torch.onnx`` is, without an exporter.

PyTorch exports a model to ONNX by translating a graph it has captured of the model
(``torch.export`` or a TorchScript trace). leafgrad runs programs eagerly and captures no such
graph, so it cannot write ONNX files: ``export`` raises ``OnnxExporterError`` saying so. The
module exists so that a program which imports ``torch.onnx`` and exports only when asked (the
``--onnx-export`` option of pytorch/examples' word_language_model, for one) runs unchanged.

>>> import leafgrad
>>> leafgrad.onnx.is_in_onnx_export()
False
"""

__all__ = ['OnnxExporterError', 'export', 'is_in_onnx_export']


class OnnxExporterError(RuntimeError):
    """Raised when an ONNX export fails (in leafgrad: always, see the module's docstring)."""


OnnxExporterError.__module__ = 'leafgrad.onnx'


def is_in_onnx_export():
    """Whether an ONNX export is under way: never, in leafgrad."""
    return False


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, custom_translation_table=None,
           report=False, optimize=True, verify=False, profile=False, dump_exported_program=False, artifacts_dir='.',
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None, training=None,
           operator_export_type=None, do_constant_folding=True, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True):
    """Export a model to ONNX, as ``torch.onnx.export`` does: leafgrad cannot.

    Takes ``torch.onnx.export``'s parameters (another keyword is PyTorch's TypeError) and raises
    ``OnnxExporterError``, writing nothing.

    Raises
    ------
    OnnxExporterError
        Always: leafgrad captures no graph of a model to translate into ONNX.
    """
    raise OnnxExporterError(
        'leafgrad cannot export models to ONNX: PyTorch translates a graph captured by torch.export or a TorchScript '
        'trace, and leafgrad runs programs eagerly without capturing one. Export the model with PyTorch.')
