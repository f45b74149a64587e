"""The public core is typed (issue: type hints on Tensor, autograd, nn.Module, optim.Optimizer):
every public function and method defined in these classes and modules annotates its parameters
or its result, and the annotations resolve (typing.get_type_hints)."""
import inspect
import typing

import pytest

import leafgrad
from leafgrad.autograd import engine, function

CLASSES = [leafgrad.Tensor, leafgrad.nn.Module, leafgrad.optim.Optimizer, function.Function, function.FunctionCtx]
FUNCTIONS = [leafgrad.autograd.backward, leafgrad.autograd.grad, function.once_differentiable,
             engine.current_graph_task_id, engine.will_engine_execute_node, engine.queue_callback]


def _public_methods(cls):
    for name, value in vars(cls).items():
        if name.startswith('_'):
            continue
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if inspect.isfunction(fn) and fn.__qualname__.startswith(cls.__name__ + '.'):
            yield f'{cls.__name__}.{name}', fn


def _annotated(fn):
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.name not in ('self', 'cls')]
    return sig.return_annotation is not inspect.Signature.empty or any(
        p.annotation is not inspect.Parameter.empty for p in params)


CASES = [case for cls in CLASSES for case in _public_methods(cls)] + [(f.__qualname__, f) for f in FUNCTIONS]


@pytest.mark.parametrize('name,fn', CASES, ids=[name for name, _ in CASES])
def test_public_core_is_annotated(name, fn):
    assert _annotated(fn), f'{name} has no type hints'
    # the annotations name things that exist ('Tensor' where the module cannot import it at its top)
    typing.get_type_hints(fn, localns={'Tensor': leafgrad.Tensor})


def test_the_check_sees_the_classes():
    assert len(CASES) > 80
