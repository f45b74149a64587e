"""Bad arguments, as tools/bad_args_sweep.py gives them: each function below called with an int,
a str and a list of floats in place of each Tensor argument of a call both libraries take raises
PyTorch's exception, type and message (the parser's "argument 'input' (position 1) must be
Tensor, not int", or the error of PyTorch's Python where its function is Python), or returns
what PyTorch returns. None of them lets an internal error (AttributeError on ``_data``) out."""
import importlib.util
import pathlib
import warnings

import pytest

_spec = importlib.util.spec_from_file_location(
    'bad_args_sweep', pathlib.Path(__file__).resolve().parent.parent / 'tools' / 'bad_args_sweep.py')
sweep = importlib.util.module_from_spec(_spec)
with warnings.catch_warnings():  # (the sweep silences warnings when it runs as a script)
    _spec.loader.exec_module(sweep)

FUNCTIONS = {name: (f_lg, f_t) for name, f_lg, f_t in sweep.names()}

# the functions whose bad arguments match PyTorch's in every call the sweep makes (meshgrid not:
# the sweep calls it without indexing=, which PyTorch warns of once a process)
EXACT = [
    'addmm', 'adjoint', 'argwhere', 'baddbmm', 'binomial', 'bmm', 'cartesian_prod', 'celu',
    'celu_', 'clone', 'combinations', 'conj', 'conj_physical_', 'corrcoef', 'cov', 'det',
    'flatten', 'fliplr', 'flipud', 'hardshrink', 'isfinite', 'isinf', 'isnan', 'isreal', 'logdet',
    'lu', 'matrix_exp', 'mm', 'mv', 'pdist', 'pinverse', 'positive', 'ravel', 'real',
    'relu', 'resize_as_', 'resolve_conj', 'roll', 'selu', 'selu_', 'split', 'split_with_sizes',
    't', 'threshold', 'threshold_', 'tile', 'trace', 'vander', 'zero_',
    'F.adaptive_avg_pool1d', 'F.adaptive_max_pool1d', 'F.avg_pool1d', 'F.avg_pool2d',
    'F.batch_norm', 'F.bilinear', 'F.celu', 'F.celu_', 'F.conv_transpose1d', 'F.cosine_similarity',
    'F.cross_entropy', 'F.elu', 'F.elu_', 'F.embedding', 'F.gelu', 'F.gumbel_softmax',
    'F.hardshrink', 'F.hardsigmoid', 'F.hardswish', 'F.hardtanh', 'F.hardtanh_', 'F.kl_div',
    'F.layer_norm', 'F.leaky_relu', 'F.leaky_relu_', 'F.linear', 'F.logsigmoid', 'F.max_pool1d',
    'F.max_pool1d_with_indices', 'F.max_pool2d', 'F.max_pool2d_with_indices', 'F.mish',
    'F.multi_margin_loss', 'F.nll_loss', 'F.pad', 'F.pdist', 'F.prelu', 'F.relu6', 'F.rms_norm',
    'F.rrelu', 'F.rrelu_', 'F.scaled_dot_product_attention', 'F.selu', 'F.selu_', 'F.silu',
    'F.soft_margin_loss', 'F.softplus', 'F.softshrink', 'F.threshold', 'F.threshold_', 'F.unfold',
]


@pytest.mark.parametrize('name', EXACT)
def test_bad_arguments_raise_torchs_error(name):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        results = sweep.compare(*FUNCTIONS[name])
    assert results, f'{name}: no template both libraries take'
    differing = [(i, kind, torch_outcome, leafgrad_outcome)
                 for _, i, kind, torch_outcome, leafgrad_outcome in results if torch_outcome != leafgrad_outcome]
    assert not differing
