"""``leafgrad.autograd.functional``: derivatives of whole functions (vjp, jvp, jacobian,
hessian, hvp, vhp), with PyTorch's arguments, results and errors.

Each computes its derivative with ``autograd.grad`` on a fresh graph: the inputs are
detached copies that require grad (or views of them with ``create_graph=True``, so that the
result stays connected to the caller's graph). Forward-mode products (``jvp``, ``hvp``)
use the double-backward trick: the vjp ``u -> J^T u`` is linear in ``u``, so differentiating
it with respect to ``u`` in the direction ``v`` gives ``J v``.
"""
from . import grad as autograd_grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .._transforms import jacfwd
from ..creation import zeros_like
from ..ops.rearrange import stack
from ..tensor import Tensor

__all__ = ['vjp', 'jvp', 'jacobian', 'hessian', 'hvp', 'vhp']


def _stack(tensors):
    """Stack along a new first dim."""
    return stack(tensors, 0)


_TENSOR_OR_TUPLE = 'must be either a Tensor or a tuple of Tensors but'


def _as_tuple(inp, arg_name, fn_name):
    """(was it a tuple, the tuple of tensors), checking that each element is a tensor."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f'the value at index {i}' if is_tuple else f'the given {arg_name}'
            raise TypeError(f'The {arg_name} given to {fn_name} {_TENSOR_OR_TUPLE} {where} has type {type(el)}.')
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo the tuple-wrapping of inputs/outputs that were single tensors."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh graph inputs: a view of an input that requires grad (so the result stays connected
    to the caller's graph) under create_graph, otherwise a detached copy."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f'v is a tuple of invalid length: should be {len(other)} but got {len(v)}.')
        raise RuntimeError('The given v should contain a single Tensor.')
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f'Entry {idx} in ' if is_other_tuple else ''
            raise RuntimeError(f'{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.')


_STRICT = 'This is not allowed in strict mode.'


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f'The output of the user-provided function is independent of input {i}. {_STRICT}')
        if inp.requires_grad:
            continue
        if input_type == 'hessian':
            raise RuntimeError(f'The hessian of the user-provided function with respect to input {i} is independent '
                               f'of the input. {_STRICT} You should ensure that your function is thrice '
                               'differentiable and that the hessian depends on the inputs.')
        if input_type == 'jacobian':
            raise RuntimeError('While computing the hessian, found that the jacobian of the user-provided function '
                               f'with respect to input {i} is independent of the input. {_STRICT} You should ensure '
                               'that your function is twice differentiable and that the jacobian depends on the '
                               'inputs (this would be violated by a linear function for example).')
        if input_type == 'grad_inputs':
            raise RuntimeError(f'The gradient with respect to input {i} is independent of the inputs of the '
                               f'user-provided function. {_STRICT}')
        raise RuntimeError(f'Output {i} of the user-provided function does not require gradients. The outputs must '
                           'be computed in a differentiable manner from the input when running in strict mode.')


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; all None when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                         allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_STRICT_NONE = {
    'back': 'The output of the user-provided function is independent of input {i}. ' + _STRICT,
    'back_trick': ('The gradient with respect to the input is independent of entry {i} in the grad_outputs when '
                   'using the double backward trick to compute forward mode gradients. ' + _STRICT),
    'double_back': 'The jacobian of the user-provided function is independent of input {i}. ' + _STRICT,
    'double_back_trick': ('The hessian of the user-provided function is independent of entry {i} in the '
                          'grad_jacobian. This is not allowed in strict mode as it prevents from using the double '
                          'backward trick to replace forward mode AD.'),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients become zeros (or, with strict, errors)."""
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = 'hessian' if 'double' in stage else 'jacobian'
            raise RuntimeError(f'The {what} of the user-provided function is independent of input {i}. This is not '
                               'allowed in strict mode when create_graph=True.')
        res += (grads_i,)
    return res


def _prepare(inputs, v, create_graph, fn_name, v_like_inputs=True):
    """The inputs as fresh graph inputs, and v checked against them."""
    is_inputs_tuple, inputs = _as_tuple(inputs, 'inputs', fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, 'v', fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        if v_like_inputs:
            _validate_v(v, inputs, is_inputs_tuple)
    elif v_like_inputs and (len(inputs) != 1 or inputs[0].nelement() != 1):
        raise RuntimeError('The vector v can only be None if the input to the user-provided function is a single '
                           'Tensor with a single element.')
    return is_inputs_tuple, inputs, v


def _outputs(func, inputs, fn_name, strict):
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), 'outputs of the user-provided function', fn_name)
    _check_requires_grad(outputs, 'outputs', strict=strict)
    return is_outputs_tuple, outputs


def _single_scalar(is_outputs_tuple, outputs, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f'The function given to {fn_name} should return a single Tensor')
    if outputs[0].nelement() != 1:
        raise RuntimeError(f'The Tensor returned by the function given to {fn_name} should contain a single element')


def _pair_result(outputs, is_outputs_tuple, result, is_result_tuple, create_graph):
    """(outputs, result) shaped as the caller passed them (tensor or tuple), detached unless
    create_graph."""
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_result_tuple))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product."""
    with enable_grad():
        is_inputs_tuple, inputs, _ = _prepare(inputs, None, create_graph, 'vjp', v_like_inputs=False)
        is_outputs_tuple, outputs = _outputs(func, inputs, 'vjp', strict)
        if v is not None:
            _, v = _as_tuple(v, 'v', 'vjp')
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError('The vector v can only be None if the user-provided function returns a single Tensor '
                               'with a single element.')
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, 'back')
    return _pair_result(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepare(inputs, v, create_graph, 'jvp')
        is_outputs_tuple, outputs = _outputs(func, inputs, 'jvp', strict)
        # u -> J^T u is linear in u; its derivative in direction v is J v.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, 'grad_inputs', strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, 'back_trick')
    return _pair_result(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy='reverse-mode'):
    """The Jacobian of func at inputs: for each output and input, a tensor of shape
    output.shape + input.shape, built one output element (one backward) at a time."""
    if strategy not in ('forward-mode', 'reverse-mode'):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == 'forward-mode':
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward_mode(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs, _ = _prepare(inputs, None, create_graph, 'jacobian', v_like_inputs=False)
        is_outputs_tuple, outputs = _outputs(func, inputs, 'jacobian', strict)
        # vectorize=True asks for a batched backward (vmap); leafgrad has none, so both
        # settings take this loop and give the same result.
        result = ()
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (row, vj_el, inp) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is None:
                        if strict:
                            raise RuntimeError(f'Output {i} of the user-provided function is independent of input '
                                               f'{k}. {_STRICT}')
                        vj_el = zeros_like(inp)
                    elif strict and create_graph and not vj_el.requires_grad:
                        raise RuntimeError(f'The jacobian of the user-provided function is independent of input {i}. '
                                           'This is not allowed in strict mode when create_graph=True.')
                    row.append(vj_el)
            result += (tuple(_stack(row).view(out.size() + inp.size()) for row, inp in zip(rows, inputs)),)
        result = _grad_postprocess(result, create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_forward_mode(func, inputs, strict, vectorize):
    """jacobian(strategy='forward-mode', vectorize=True): ``func.jacfwd`` over every input (one
    forward pass carrying the basis of tangents as a batch), as PyTorch computes it."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, 'inputs', 'jacobian')
    if not vectorize:  # (PyTorch's message, its missing space kept)
        raise NotImplementedError('Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly '
                                  'implemented for `vectorize=True`.')
    outputs_were_tuple = []

    def outputs_as_tuple(*args):
        outputs = func(*args)
        outputs_were_tuple[:] = [isinstance(outputs, tuple)]
        return outputs if isinstance(outputs, tuple) else (outputs,)
    columns = jacfwd(outputs_as_tuple, argnums=tuple(range(len(inputs))))(*inputs)
    columns = [list(per_input) for per_input in columns]  # (PyTorch's forward mode nests lists, not tuples)
    return _tuple_postprocess(columns, (outputs_were_tuple[0], is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy='reverse-mode'):
    """The Hessian of a scalar func: the Jacobian of its gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, 'inputs', 'hessian')
    if outer_jacobian_strategy not in ('forward-mode', 'reverse-mode'):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, 'outputs of the user-provided function', 'hessian')
        _check_requires_grad(t_out, 'outputs', strict=strict)
        _single_scalar(is_out_tuple, t_out, 'hessian')
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == 'forward-mode':  # (so that the inner jacobian does not detach the duals)
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, 'jacobian', strict=strict)
        return jac
    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepare(inputs, v, create_graph, 'vhp')
        is_outputs_tuple, outputs = _outputs(func, inputs, 'vhp', strict)
        _single_scalar(is_outputs_tuple, outputs, 'vhp')
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, 'jacobian', strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, 'double_back')
    return _pair_result(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, by the double-backward trick on the gradient."""
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepare(inputs, v, create_graph, 'hvp')
        is_outputs_tuple, outputs = _outputs(func, inputs, 'hvp', strict)
        _single_scalar(is_outputs_tuple, outputs, 'hvp')
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, 'jacobian', strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, 'hessian', strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, 'double_back_trick')
    return _pair_result(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)
