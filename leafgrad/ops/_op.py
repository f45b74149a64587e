"""The declaration of an op: one class statement from which everything about the op follows.

Design note
-----------
An op is declared once, as a subclass of ``Op``. The class body holds, side by side, what
PyTorch spreads over ``native_functions.yaml`` (the name, the variants, ``out=``) and
``derivatives.yaml`` (the node, what it saves, the derivative), in one vocabulary::

    class Mul(Op):
        '''mul(input, other, *, out=None): the elementwise product.'''
        op = 'mul'                       # leafgrad.mul and Tensor.mul
        aliases = ('multiply',)          # leafgrad.multiply, Tensor.multiply
        node = 'MulBackward0'            # the class's name: type(y.grad_fn).__name__
        saved = ('self', 'other')        # y.grad_fn._saved_self, ._saved_other
        inplace = True                   # Tensor.mul_
        out = CAST                       # leafgrad.mul(a, b, out=o), PyTorch's rules for o
        __slots__ = ('self_shape', 'other_shape')   # what one recorded node keeps

        def forward(input, other):       # the op: arrays in, a recorded node out
            ...
            result, node = record(x * y, Mul, (input, other))
            ...

        def apply(self, grad):           # the derivative: gradients of the inputs
            ...

The class is at once the declaration and the node type: a recorded ``Mul`` node is an
instance of it (``Op`` is a ``Node``), so the forward names its node by the class it is
written in, and the derivative (``apply``) reads the node's saved tensors and slots.

What follows from a declaration, when its class statement runs (``Op.__init_subclass__``):

* the **function** ``leafgrad.<op>`` (bound in the declaring module, listed in its
  ``__all__``, exported by ``leafgrad.ops``), with PyTorch's signature: the forward's own
  parameters, and its name in the errors Python raises for wrong arguments
  (``mul() got an unexpected keyword argument 'foo'``);
* the **method** ``Tensor.<name>`` (``method = False``: function only; ``function = False``:
  method only; ``def method(self, ...)`` in the body: a method with its own signature, as
  ``Tensor.where(condition, other)``; ``method = property(forward)``: an attribute, as
  ``Tensor.T``);
* the **operators**: ``operators``, the dunders whose function is the forward (``'__add__'``;
  a binary one is the forward's code under the dunder's name, by which the forward returns
  NotImplemented for an operand that is no tensor nor number, as PyTorch's operators do)
  or ``{dunder: function}`` for those that are not (``__invert__``, ``__matmul__``);
  ``reflected_operators``, the op with its operands swapped (``'__rsub__'``: ``number - t`` is
  ``ops.sub(number, t)``); ``inplace_operators``, the augmented assignments that are the
  in-place variant (``'__isub__'``). The transforms' wrappers know an operator that is no
  forward by its dunder (``bound_ops``);
* the **in-place variant** ``Tensor.<name>_`` (``inplace = True``: the forward run through the
  shared in-place machinery, which records it as PyTorch does and bumps the version; ``def
  inplace(self, ...)`` in the body: a hand-written one; ``inplace_function = True``: also
  ``leafgrad.<name>_``); an op without a method (``method = False``) has no in-place method
  either (``torch.selu_`` is a function only);
* the **node name** (``node``; an op with several overloads declares one class per node, the
  others without ``op``, as ``PowBackward1``), the **saved names** (``saved``: the
  tensors given to ``node.save`` in order, and ``'name=attr'`` for a number kept as a slot);
* **out=** (``out``: the rule that checks and fills ``out``, below; ``None``: PyTorch's
  function has no ``out=``, and Python's TypeError refuses it). Methods take no ``out=``, as
  in PyTorch.
* ``public = False``: an ``nn.functional`` op that PyTorch has not as ``torch.<name>``
  (``gelu``): its function is bound in its family module, for ``nn.functional`` to import, but
  not listed in ``__all__``;
* the op's entry in the late-bound namespace ``ops``: a derivative or a forward reaches a
  sibling op as ``ops.<name>`` (looked up when it runs), so that no family imports another.

Room for what comes next, each a named slot that is ``None`` until filled:

* ``jvp(self_or_inputs, tangents)``: the forward-mode rule (``autograd.forward_ad``);
* ``vmap``: the batching rule (``func.vmap``);
* ``array_forward`` / ``array_backward``: the op as pure functions of arrays (the forward of
  the input arrays and the arguments; the backward of the output gradient and the saved
  arrays), the form that a compiler traces once and replays without tensors or nodes.
  An elementwise op that gives ``array_forward`` and no ``forward`` gets its forward made from
  it (``elementwise_forward``).

Speed. Nothing here runs per call: the class statement produces the functions once, at import.
The method and the operators are the forward itself (or its code, renamed). The function is the forward too, except
where PyTorch gives it ``out=`` and the forward does not take ``out`` itself: then a small
wrapper adds it (one extra call for ``leafgrad.add(a, b)``, none for ``a + b`` or
``a.add(b)``). Forwards made by ``elementwise_forward`` take ``out`` inline, with a separate
method closure, so that ``leafgrad.tanh(x)`` costs one call.

Does input i need a gradient? One idiom, in forwards and derivatives alike: its edge leads
somewhere, ``node.next_functions[i][0] is not None`` (the engine gives an input that needs no
gradient the edge ``(None, 0)``; reading it costs a fraction of a method call).
"""
import inspect
import sys
import types
import warnings

from .. import _arg_parser, backend, return_types
from .._warn import user_stacklevel, warn_once  # noqa: F401  (the ops' warnings, imported from here)
from .._arg_parser import SignatureWith, bound_when_refused, parsing, refuse_non_tensors
from ..autograd.grad_mode import state
from ..autograd.graph import Node
from ..tensor import Tensor
from . import _util
from ._util import (SCALAR_NAMES, NotImplementedNode, float_dtype_for, is_operand, load_deferred,
                    not_a_tensor, ops, record, refuse_operands, unary)

xp = backend.numpy


class Op(Node):
    """A declared op: see the module's design note. A subclass that declares neither ``op``
    nor ``node`` is a shared base (``_BinaryNode``) and makes nothing."""
    __slots__ = ()
    op = None                 # PyTorch's name of the function and method
    aliases = ()              # other names of the same function and method
    node = None               # PyTorch's name of the recorded node; None: not differentiable
    saved = ()                # grad_fn._saved_<name>, in the order the forward saves them
    function = True           # leafgrad.<name> (or a function: the function with its own signature)
    method = True             # Tensor.<name> (or a function: the method with its own signature)
    operators = ()            # Python operators that are the forward itself ('__add__', ...), or {name: function}
    reflected_operators = ()  # Python's reflected operators ('__rsub__'): the op, operands swapped
    inplace_operators = ()    # the augmented assignments ('__isub__'): the in-place variant
    inplace = False           # Tensor.<name>_ (True: from the forward; or a function)
    inplace_function = False  # also leafgrad.<name>_ (True; or the names that are)
    out = None                # the out= rule (None: PyTorch's function takes no out=)
    out_name = None           # the op named in out='s errors, if not this one (square: pow)
    public = True             # False: nn.functional's only (not in __all__: no leafgrad.<name>)
    tensors = ()              # the parameters PyTorch's parser takes as Tensor only (no number): its
                              # TypeError for anything else, in the function, method and in-place variant
    differentiable = True     # False: out= needs no check for autograd (comparisons)
    overloads = None          # PyTorch's signatures, where it has several (_arg_parser.Overloads):
                              # each call bound to one, or refused with PyTorch's TypeError
    refusals = None           # the same, bound only when the forward raises (its error PyTorch's)
    operands = ()             # PyTorch's signatures (Overloads) of the op and of each alias, for a binary op whose
                              # forward refuses an operand that is no tensor nor number: bound on that failure
                              # only (_util.refuse_operands), by the method and the function's out= wrapper
    parameter_types = None    # the types PyTorch's parser checks of this op's own parameters ({'dim': 'int'})
    listed = None             # PyTorch's signatures (Overloads), bound only where a typed parameter has the
                              # wrong type: the parser's listing of them is the error
    parsed = True             # PyTorch's argument parser reads the arguments (NumPy's names, the
                              # types of the parameters it types by name: _arg_parser.parsing);
                              # 'function': the function only; False: neither (Python in PyTorch)
    forward = None            # the op (a plain function in the class body)
    jvp = None                # forward-mode rule (slot)
    vmap = None               # batching rule (slot)
    array_forward = None      # the forward as a pure function of arrays (slot; see design note)
    array_backward = None     # the backward as a pure function of arrays and saved arrays (slot)

    def __init_subclass__(cls, **kwargs):
        own = cls.__dict__
        module = sys.modules[own['__module__']]
        if own.get('node') is not None:
            cls.__name__ = cls.__qualname__ = own['node']
        if 'saved' in own and 'saved_names' not in own:
            cls.saved_names = own['saved']  # (Node makes grad_fn._saved_<name> of them)
        super().__init_subclass__(**kwargs)
        if own.get('op') is not None:
            _provide(cls, own['op'], vars(module))


declared = []  # every declared op's class, in declaration order


def _plain(fn):
    return fn.__func__ if isinstance(fn, staticmethod) else fn


def _provide(cls, name, namespace):
    """Make what the declaration ``cls`` provides and bind it where it is found: the function
    in its module (``namespace``), the method, operators and in-place variant on Tensor, the
    forward in ``ops``."""
    own = cls.__dict__
    forward = _plain(own.get('forward'))
    if forward is None and cls.array_forward is not None:
        forward, method = elementwise_forward(cls)
    else:
        method = forward
    cls.forward = staticmethod(forward)
    function = forward
    params = _parameters(forward) if forward is not None else ()
    if callable(cls.function):  # a function with its own signature (out='s rule by the arguments)
        function = _plain(cls.function)
    elif cls.out is not None and 'out' not in params:
        function = _with_out(forward, cls.out_name or name, cls.out, cls.differentiable, cls.listed)
    copied = None  # (the forward's copy that is the method, under parsing's wrapper or not)
    if callable(cls.method):  # a method with its own signature
        method = _plain(cls.method)
    elif not cls.method:
        method = None
    elif isinstance(cls.method, property):  # an attribute (Tensor.T)
        method = cls.method
    elif method is forward and 'out' in params:  # a forward that writes out= itself
        method = _refusing_out(forward, name)
    elif method is forward and 'refuse_arguments' in forward.__code__.co_names:
        method = copied = _renamed(forward, name)  # (its own code: refuse_arguments counts positions after self)
    if cls.parsed:
        function = parsing(function, name, False, cls.overloads, cls.refusals, cls.parameter_types, cls.listed)
        if cls.parsed is True:
            method = parsing(method, name, True, cls.overloads, cls.refusals, cls.parameter_types, cls.listed)
    inplace = cls.inplace
    if inplace is True:
        inplace = _inplace_variant(forward, name + '_')
        inplace.__wrapped__ = forward  # (the parameters parsing reads)
    else:
        inplace = _plain(inplace)
    if inplace and cls.parsed is True and type(inplace) is types.FunctionType:
        # its typed parameters checked as the method's, its errors naming it
        if inplace.__name__ != name + '_':
            _name_function(inplace, name + '_')
        parsed = parsing(inplace, name + '_', True, None, None, cls.parameter_types,
                         cls.listed and cls.listed.named(name + '_'))
        if parsed is inplace and cls.inplace is True:
            del inplace.__wrapped__
        inplace = parsed
    for fn, fn_name in ((forward, name), (function, name), (method, name), (inplace, name + '_')):
        if isinstance(fn, property):
            continue
        if fn and fn.__name__ != fn_name:
            _name_function(fn, fn_name)
        if fn:
            fn.__module__ = namespace['__name__']  # (made here or in the class body: the family's)
            if fn.__doc__ is None and fn is not inplace:  # the declaration's docstring: PyTorch's signature first
                fn.__doc__ = own.get('__doc__')
    if method is not forward and type(method) is types.FunctionType and method.__code__.co_name == forward.__name__ \
            and method.__code__.co_code == forward.__code__.co_code:  # (the forward's copy, named: the method's code)
        _arg_parser.METHOD_CODES.add(id(method.__code__))  # (by identity: code objects compare equal by value)
    if copied is not None:  # (its code now final: an id registered before a renaming could be reused)
        _arg_parser.METHOD_CODES.add(id(copied.__code__))
    if method is not function and callable(method) and 'out=None' in (method.__doc__ or ''):  # (a method takes no out=)
        method.__doc__ = _without_out_parameter(method.__doc__)
    exported = namespace.setdefault('__all__', [])
    # where it binds what it provides, by PyTorch's name: read by the profiler and the transforms'
    # wrappers (bound_ops), which find there what is in place now (another layer's wrapper, say)
    module = sys.modules[namespace['__name__']]
    provided = cls.provided = [(name, ops, name)]
    for overloads in cls.operands:
        _util.OPERANDS[overloads.name] = overloads
    if cls.function:
        provided.append((name, module, name))
    for n in (name,) + tuple(cls.aliases):
        setattr(ops, n, forward)  # (leafgrad's own calls: the forward, unchecked)
        if cls.tensors:  # each name's own check, which names it
            fn_n = _tensors_only(function, n, params, cls.tensors, False, namespace)
            method_n = method if method is None or isinstance(method, property) else _tensors_only(
                method, n, _parameters(method) if callable(cls.method) else params, cls.tensors, True, namespace)
            inplace_n = inplace and _tensors_only(inplace, n + '_', params, cls.tensors, True, namespace)
            # (leafgrad.ldexp_(x, 1): the function form counts positions from input, as PyTorch's)
            inplace_fn_n = inplace and _tensors_only(inplace, n + '_', params, cls.tensors, False, namespace)
        else:
            fn_n, method_n, inplace_n = function, method, inplace
            inplace_fn_n = inplace_n
            if n != name:  # (an alias's own copy, no call added: its errors name it, as PyTorch's)
                fn_n, inplace_n = _renamed(function, n), inplace and _renamed(inplace, n + '_')
                inplace_fn_n = inplace_n
                if cls.operands and type(method) is types.FunctionType:  # (operator_refusal reads the name)
                    method_n = _renamed(method, n)
        if cls.refusals is not None:  # (PyTorch's TypeError names the alias, the in-place variant)
            if n != name:
                fn_n = bound_when_refused(fn_n, cls.refusals.named(n), False)
                if callable(method_n) and not isinstance(method_n, property):
                    method_n = bound_when_refused(method_n, cls.refusals.named(n), True)
            if inplace_n:  # (its method form, and its function form, named alike)
                inplace_fn_n = bound_when_refused(inplace_n, cls.refusals.named(n + '_'), False)
                inplace_n = bound_when_refused(inplace_n, cls.refusals.named(n + '_'), True)
        elif cls.operands and inplace_n:  # (an operand refused: the in-place variant's own signatures)
            overloads = next((o for o in cls.operands if o.name == n), cls.operands[0]).named(n + '_')
            inplace_fn_n = bound_when_refused(inplace_n, overloads, False)
            inplace_n = bound_when_refused(inplace_n, overloads, True)
        if cls.function:
            namespace[n] = fn_n
            if cls.public:
                exported.append(n)
            if n != name and cls.refusals is not None:  # (an alias of its own: its wrapper)
                provided.append((name, module, n))
        if method is not None:
            setattr(Tensor, n, method_n)
            provided.append((name, Tensor, n))
        if inplace:
            if method is not None:
                setattr(Tensor, n + '_', inplace_n)
                provided.append((name + '_', Tensor, n + '_'))
            setattr(ops, n + '_', inplace)
            if cls.inplace_function is True or n + '_' in (cls.inplace_function or ()):
                namespace[n + '_'] = inplace_fn_n
                if cls.public:
                    exported.append(n + '_')
                if method is None or inplace_fn_n is not inplace_n:  # (a function of its own)
                    provided.append((name + '_', module, n + '_'))
    operators = cls.operators  # the dunder names whose function is the forward, or {name: function}
    for dunder in operators:
        if isinstance(operators, dict):  # (a function of its own: known by its dunder, __invert__)
            setattr(Tensor, dunder, _plain(operators[dunder]))
            provided.append((dunder, Tensor, dunder))
        else:
            setattr(Tensor, dunder, _as_operator(forward, dunder) if dunder in _BINARY_OPERATORS else forward)
            provided.append((name, Tensor, dunder))
    for dunder in cls.reflected_operators:
        setattr(Tensor, dunder, _reflected(name, dunder, namespace['__name__']))
        provided.append((dunder, Tensor, dunder))
    for dunder in cls.inplace_operators:
        setattr(Tensor, dunder, _as_operator(inplace, dunder) if dunder in _BINARY_OPERATORS else inplace)
        provided.append((name + '_', Tensor, dunder))
    declared.append(cls)


# the binary operators whose forwards (_util.operator_refusal) or in-place variants
# (_inplace.inplace_binary) refuse an operand that is no tensor nor number with NotImplemented,
# as PyTorch's do
_BINARY_OPERATORS = frozenset(['__add__', '__radd__', '__sub__', '__mul__', '__rmul__', '__truediv__', '__pow__',
                               '__floordiv__', '__mod__', '__and__', '__or__', '__xor__', '__lshift__', '__rshift__',
                               '__iand__', '__ior__', '__ixor__', '__ilshift__', '__irshift__',
                               '__iadd__', '__isub__', '__imul__', '__itruediv__'])


def _as_operator(forward, dunder):
    """``forward`` bound as the operator ``dunder``: the same code (no call added) under the
    dunder's name, by which the forward tells, when an operand is refused, that it runs as an
    operator."""
    code = forward.__code__.replace(co_name=dunder, co_qualname=dunder)
    fn = types.FunctionType(code, forward.__globals__, dunder, forward.__defaults__, forward.__closure__)
    fn.__kwdefaults__, fn.__module__ = forward.__kwdefaults__, forward.__module__
    if forward.__doc__ is not None:  # (an operator takes no out=, as a method)
        fn.__doc__ = _without_out_parameter(forward.__doc__)
    return fn


def _reflected(name, dunder, module):
    """``number - t``: the op ``name`` with its operands swapped, looked up in ``ops`` when it
    runs (so that another layer's wrapper of the op, installed there, is the one called); an
    operand that is no tensor nor number: NotImplemented, as PyTorch's."""
    def reflected(self, other):
        try:
            return getattr(ops, name)(other, self)
        except TypeError:
            if is_operand(other):
                raise
            return NotImplemented
    reflected.__name__ = reflected.__qualname__ = dunder
    reflected.__module__ = module
    return reflected


def every_declaration():
    """``declared``, the op families imported on first use (ops/__init__.py) imported first: what
    reads every declaration (the transforms' wrappers, the profiler, batching and compiling
    rules) finds every op."""
    if load_deferred[0] is not None:
        load_deferred[0]()
    return declared


def bound_ops():
    """(PyTorch's name, function) for every function, method, variant and operator that the
    declarations bound, as bound now (while a transform runs, its wrapper)."""
    for cls in every_declaration():
        for name, holder, key in cls.provided:
            yield name, getattr(holder, key)


def _parameters(fn):
    code = fn.__code__
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _name_function(fn, name):
    """Name ``fn`` as PyTorch names the op, also in the TypeErrors Python raises for wrong
    arguments (they name the code object)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name)


def _renamed(fn, name):
    """A copy of ``fn`` (the same code, closure and attributes) named ``name``, also in the errors
    that read the running code's name (an alias's function: PyTorch's errors name the alias)."""
    code = fn.__code__.replace(co_name=name, co_qualname=name)
    copy = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__doc__, copy.__module__ = fn.__kwdefaults__, fn.__doc__, fn.__module__
    copy.__dict__.update(fn.__dict__)
    return copy


def _without_out_parameter(doc):
    """``doc`` without out= in its signatures: ``(input, *, out=None)`` -> ``(input)``,
    ``(input, *, alpha=1, out=None)`` -> ``(input, *, alpha=1)``."""
    return doc.replace(', *, out=None)', ')').replace(', out=None', '')


def _refusing_out(forward, name):
    """The method of an op whose forward takes ``out`` itself: the forward, refusing ``out=``
    with Python's TypeError, as PyTorch's methods do."""
    def method(*args, **kwargs):
        if 'out' in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        return forward(*args, **kwargs)
    signature = inspect.signature(forward)
    method.__signature__ = signature.replace(parameters=[p for p in signature.parameters.values() if p.name != 'out'])
    return method


# the keyword PyTorch's functions with out= take after their own parameters
_OUT = (('out', None),)


def _with_out(forward, name, rule, differentiable, listed=None):
    """``forward`` with PyTorch's ``out=``: the result is computed as without it, then written
    into ``out`` by ``rule``; ``listed``: the op's overloads, listed where the input is no tensor."""

    def function(*args, out=None, **kwargs):
        if out is None:
            try:
                return forward(*args, **kwargs)
            except AttributeError:  # (leafgrad.abs(1): PyTorch's parser's TypeError)
                called = sys._getframe().f_code.co_name  # (an alias's copy of this function: the alias)
                if listed is not None and not isinstance(args[0] if args else kwargs.get('input'), Tensor):
                    (listed if called == listed.name else listed.named(called)).bind(args, kwargs)
                refuse_non_tensors(called, _parameters(forward), args, kwargs)
                raise
            except TypeError:  # (leafgrad.add(x, 'a'): the function's words, where the method's were raised)
                refuse_operands(sys._getframe().f_code.co_name, args, kwargs, False)
                raise
        try:
            result = forward(*args, **kwargs)
        except TypeError:
            refuse_operands(sys._getframe().f_code.co_name, args, dict(kwargs, out=out), False)
            raise
        return rule(name, out, result, differentiable)
    function.__doc__ = forward.__doc__
    function.__signature__ = SignatureWith.of(forward, _OUT)
    _name_function(function, name)  # (its refusal reads its name: an alias's copy, the alias's)
    return function


def _tensors_only(fn, name, params, tensors, method, namespace):
    """``fn`` refusing first, as PyTorch's argument parser, anything but a tensor for the
    parameters ``tensors`` (``params``: its parameters in order; a ``method`` counts positions
    after self, which is a tensor); named ``name`` (an alias's check names the alias)."""
    checked = [(i, p) for i, p in enumerate(params) if p in tensors and not (method and i == 0)]
    shift = 0 if method else 1

    def function(*args, **kwargs):
        for i, p in checked:
            if i < len(args):
                if not isinstance(args[i], Tensor):
                    raise not_a_tensor(name, p, args[i], i + shift)
            elif p in kwargs and not isinstance(kwargs[p], Tensor):
                raise not_a_tensor(name, p, kwargs[p])
        return fn(*args, **kwargs)
    function.__doc__ = fn.__doc__
    function.__wrapped__ = fn  # (its signature is fn's: inspect.signature reads it there when asked)
    function.__module__ = namespace['__name__']
    _name_function(function, name)
    return function


# The in-place machinery (ops/inplace.py) puts its runner here when it is imported: the
# in-place variants made below look it up only when they run.
inplace_runner = [None]


def _inplace_variant(forward, name):
    params = _parameters(forward)

    def inplace(self, *args, **kwargs):
        others = tuple([a for a in args if isinstance(a, Tensor)] +
                       [a for a in kwargs.values() if isinstance(a, Tensor)])
        try:
            return inplace_runner[0](self, lambda s: forward(s, *args, **kwargs), others)
        except AttributeError:  # (leafgrad.abs_(1), x.addr_(1, v): PyTorch's parser's TypeError)
            refuse_non_tensors(sys._getframe().f_code.co_name, ('input',), (self,), {})
            refuse_non_tensors(sys._getframe().f_code.co_name, params, (self,) + args, kwargs, True)
            raise
        except TypeError as e:  # (the forward refused an argument: the same words, as the method's, naming this)
            if str(e).startswith(forward.__name__ + '(): argument '):
                refuse_non_tensors(sys._getframe().f_code.co_name, params, (self,) + args, kwargs, True)
            raise
    _name_function(inplace, name)  # (its refusal reads its name: an alias's copy, the alias's)
    return inplace


# ---- out= ----------------------------------------------------------------------------------
# One engine writes every op's out=: ``write_out`` (one tensor), ``write_outs`` (a tuple, such as
# (values, indices) or (U, S, Vh)) and ``copy_out`` (the ops PyTorch writes as ``out.copy_(result)``);
# ``writes_out`` gives a function out= by one of them. What differs between ops is data: the
# name in the errors and the dtype rule (``exact_dtype``, ``castable_dtype``, ``safely_castable``
# or the op's own check).

RESIZE_WARNING = (
    'An output with one or more elements was resized since it had shape {}, which does not match the '
    'required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will '
    'not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing '
    'it, inplace, to zero elements with t.resize_(0).')

# PyTorch's C++ names of the dtypes, as its dtype-mismatch errors print them
CPP_NAMES = {'bool': 'bool', 'uint8': 'unsigned char', 'int8': 'signed char', 'int16': 'short int',
             'int32': 'int', 'int64': 'long int', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16',
             'float32': 'float', 'float64': 'double', 'complex64': 'c10::complex<float>',
             'complex128': 'c10::complex<double>'}
_CPP_NAMES = CPP_NAMES
_GRAD_ERROR = ("{}(): functions with out=... arguments don't support automatic differentiation, but one of the "
               'arguments requires grad.')


def check_out_type(label, out):
    """PyTorch's TypeError for an ``out`` that is no tensor (``label``: the function it names)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{label}(): argument 'out' must be Tensor, not {type(out).__name__}")


def check_out(name, out, result, differentiable=True, label=None):
    """What every out= checks first, as PyTorch does: a tensor (``label``: the function named in
    the TypeError, if not ``name``), no autograd through it (for a differentiable op), and no
    element of it written twice (an expanded tensor)."""
    check_out_type(label or name, out)
    if not backend.writeable(out._data):
        raise RuntimeError('unsupported operation: more than one element of the written-to tensor refers to '
                           'a single memory location. Please clone() the tensor before performing the '
                           'operation.')
    if differentiable and state.grad_enabled and _needs_grad(name, result, out):
        raise RuntimeError(_GRAD_ERROR.format(name))


def _needs_grad(name, result, out):
    """Does out= meet autograd? PyTorch names an op that has no derivative ``aten::<op>`` in this
    error and refuses only an ``out`` that requires grad (its inputs may); a differentiable op
    refuses an input that does too (then its result does)."""
    return out._requires_grad or (not name.startswith('aten::') and result._requires_grad)


def cast_array(data, np_dtype):
    """``data.astype(np_dtype)``; complex to real keeps the real part with PyTorch's warning (once a
    process, as its TORCH_WARN_ONCE), where NumPy would warn its own ComplexWarning."""
    if data.dtype.kind == 'c' and np_dtype.kind == 'b':  # (nonzero, imaginary part included, as PyTorch's)
        return data != 0
    if data.dtype.kind == 'c' and np_dtype.kind != 'c':
        warn_once('Casting complex values to real discards the imaginary part')
        data = data.real
    return data.astype(np_dtype, copy=False)


def _resize(out, shape):
    """``out`` of ``shape`` (its array replaced; PyTorch's warning when it held elements)."""
    data = out._data
    if data.size:
        warnings.warn(RESIZE_WARNING.format(list(data.shape), list(shape)), UserWarning, stacklevel=user_stacklevel())
    out._data = xp.empty(shape, dtype=data.dtype)


def fill_out(out, values):
    """Write ``values`` (an array of the result's shape) into ``out``, cast to its dtype,
    resizing it as PyTorch does (with its warning when it held elements), and bump its version."""
    if out._data.shape != values.shape:
        _resize(out, values.shape)
    out._data[...] = values
    out._version_counter[0] += 1
    return out


# ---- the dtype rules: check(result dtype, out dtype), leafgrad dtypes; each raises PyTorch's error

def exact_dtype(rd, od):
    """``out`` of the result's dtype only (the BLAS and LAPACK ops: matmul, linalg.inv ...)."""
    if rd != od:
        raise RuntimeError(f'Expected out tensor to have dtype {CPP_NAMES[rd.name]}, but got {CPP_NAMES[od.name]} '
                           'instead')


def castable_dtype(rd, od):
    """TensorIterator's rule: any dtype the result casts to without leaving its category (a float
    result into float64 or float16, not into an integer tensor)."""
    if rd.category > od.category:
        raise RuntimeError(f"result type {SCALAR_NAMES[rd.name]} can't be cast to the desired output type "
                           f'{SCALAR_NAMES[od.name]}')


def safely_castable(label, what='result'):
    """The rule of the linalg ops that check with ``checkLinalgCompatibleDtype``: castable_dtype,
    its message naming the op (``label``) and the output (``what``)."""
    def check(rd, od):
        if rd.category > od.category:
            raise RuntimeError(f'{label}: Expected {what} to be safely castable from {SCALAR_NAMES[rd.name]} dtype, '
                               f'but got {what} with dtype {SCALAR_NAMES[od.name]}')
    return check


def same_dtype(message):
    """``out`` of the result's dtype only, refused with the op's own ``message`` (formatted with
    ``result``/``out``: the dtypes' scalar names, ``result_cpp``/``out_cpp``: their C++ names)."""
    def check(rd, od):
        if rd != od:
            raise RuntimeError(message.format(result=SCALAR_NAMES[rd.name], out=SCALAR_NAMES[od.name],
                                              result_cpp=CPP_NAMES[rd.name], out_cpp=CPP_NAMES[od.name]))
    return check


# ---- the writers ---------------------------------------------------------------------------

def write_out(name, out, result, check=exact_dtype, differentiable=True, label=None):
    """``out=`` of an op with an out kernel: ``result`` (computed as without ``out``) checked by
    ``check``, written into ``out`` (resized as PyTorch resizes it), which is returned. ``name``:
    the op in the autograd error (PyTorch's aten name: 'linalg_inv_ex' for linalg.inv);
    ``label``: the function in the TypeError, if not ``name``."""
    check_out(name, out, result, differentiable, label)
    od = backend.from_np(out._data.dtype)
    if check is not None:
        check(backend.from_np(result._data.dtype), od)
    return _take_node(fill_out(out, result._data), result, name)


def _take_node(out, result, name=''):
    """``out`` as the result in the graph: the node of an op without a derivative (PyTorch's
    NotImplemented, recorded when an input requires grad) becomes out's grad_fn, as PyTorch's out
    is that op's output; an op whose out= variant has none (``aten::<op>``: conj_physical) gets
    one. (A differentiable op's result here has no node: autograd refused it.)"""
    if name.startswith('aten::') and result._requires_grad and state.grad_enabled and \
            type(result._grad_fn).__name__ != 'NotImplemented':
        result, node = record(result._data, NotImplementedNode, (result,))
        node.op_name = name[6:]
    if result._grad_fn is not None:
        out._grad_fn, out._requires_grad, out._output_nr = result._grad_fn, True, result._output_nr
    return out


def write_outs(name, out, results, check=exact_dtype, differentiable=True, label=None):
    """``out=`` of an op with several results (a named tuple: (values, indices), (Q, R) ...):
    ``out`` a tuple or list of as many tensors, all checked before any is written.
    ``check``: one rule for all, or one per result; ``differentiable``: True, False, or one flag
    per result (linalg.lu's P is no differentiable result: an ``out`` for it may require grad).
    Returns the ``out`` tensors in the results' named tuple for out= (``linalg_qr_out``)."""
    n = len(results)
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{label or name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != n:
        raise TypeError(f'expected tuple of {n} elements but got {len(out)}')
    checks = check if isinstance(check, tuple) else (check,) * n
    flags = differentiable if isinstance(differentiable, tuple) else (differentiable,) * n
    for o, r, flag in zip(out, results, flags):
        check_out(name, o, r, flag, label)
    for o, r, c in zip(out, results, checks):
        if c is not None:
            c(backend.from_np(r._data.dtype), backend.from_np(o._data.dtype))
    for o, r in zip(out, results):
        _take_node(fill_out(o, r._data), r, name)
    named = type(results)
    if hasattr(named, '_fields'):
        return getattr(return_types, named.__name__ + '_out', named)(*out)
    return tuple(out)


def copy_out(name, out, result, check=None):
    """``out=`` of an op that PyTorch writes as ``out.copy_(result)`` (quantile, tensorinv,
    linalg.cond, inner): ``out`` resized (with PyTorch's warning) and written by the recorded
    copy_, so that an input requiring grad is no error (``out`` then has grad_fn CopyBackwards)
    and an ``out`` that is a leaf requiring grad is refused as any in-place op refuses it."""
    check_out_type(name, out)
    if check is not None:
        check(backend.from_np(result._data.dtype), backend.from_np(out._data.dtype))
    out._check_inplace()
    if out._data.shape != result._data.shape:
        _resize(out, result._data.shape)
    return out.copy_(result)


def writes_out(name, check=exact_dtype, differentiable=True, label=None, copy=False):
    """Decorate a function whose PyTorch signature has ``out=``: the function runs as without it
    and its result is written into ``out`` by ``write_out``, ``write_outs`` (a tuple result) or
    ``copy_out`` (``copy``). The function decorated takes no ``out`` (it is the method: PyTorch's
    methods take none, ``function.without_out``); the function made has its signature and ``out``."""
    rule = out_rule(name, check, differentiable, label, copy)

    def decorate(fn):
        def function(*args, out=None, **kwargs):
            result = fn(*args, **kwargs)
            if out is None:
                return result
            return rule(name, out, result)
        function.__name__, function.__qualname__ = fn.__name__, fn.__qualname__
        function.__doc__, function.__module__, function.without_out = fn.__doc__, fn.__module__, fn
        function.__signature__ = SignatureWith.of(fn, _OUT)
        return function
    return decorate


def out_rule(name, check=exact_dtype, differentiable=True, label=None, copy=False):
    """A declaration's ``out`` rule from the same data as ``writes_out``: ``out = out_rule(
    'linalg_inv_ex', label='linalg_inv')`` writes the result into ``out`` by ``write_out``,
    ``write_outs`` (a tuple result) or ``copy_out`` (``copy``), ``name`` the op in the autograd
    error, ``label`` the function in the TypeError."""
    def rule(_op, out, result, _differentiable=True):
        if copy:
            return copy_out(label or name, out, result, check)
        if isinstance(result, tuple):
            return write_outs(name, out, result, check, differentiable, label)
        return write_out(name, out, result, check, differentiable, label)
    return rule


def CAST(name, out, result, differentiable=True):
    """TensorIterator's rule (elementwise ops and most others): ``castable_dtype``; the values
    are cast to ``out``'s dtype."""
    return write_out(name, out, result, castable_dtype, differentiable)


def NO_GRAD_CAST(name, out, result, differentiable=False):
    """CAST for an op PyTorch gives no derivative (floor_divide, the bitwise ops): an input that
    requires grad is no error, an ``out`` that does is refused under the name aten::<op>."""
    return write_out('aten::' + name, out, result, castable_dtype, True, name)


def SAME(name, out, result, differentiable=True):
    """The rule of the ops that keep their input's dtype (neg, abs, sign): ``out`` must be of
    the result's dtype."""
    return write_out(name, out, result, same_dtype('Found dtype {out} but expected {result}'), differentiable)


def EXACT(name, out, result, differentiable=True):
    """The rule of matmul and the BLAS-backed ops: ``out`` must be of the result's dtype."""
    return write_out(name, out, result, exact_dtype, differentiable)


def scalar_name(array):
    """PyTorch's scalar-type name of an array's dtype (``Float``), as its errors print it."""
    return SCALAR_NAMES[backend.from_np(array.dtype).name]


# ---- elementwise forwards made from their array function -------------------------------------

def _refuse_no_tensor(name, value, param='input'):
    """PyTorch's TypeError where the first argument of ``name``, whose forward raised an
    AttributeError reading it, is no tensor."""
    if not isinstance(value, Tensor):
        raise not_a_tensor(name, param, value, 1) from None


def elementwise_forward(cls):
    """The forward of a one-input elementwise op declared by its ``array_forward`` alone:
    integer and bool input computes in the default float dtype (``float_input``, as PyTorch's
    float functions), and the node saves its ``'self'``, its ``'result'`` or nothing (the first
    of ``saved``). Returns (function with out=, method): two closures, so that neither calls
    the other and neither costs more than the op itself."""
    fn = _plain(cls.array_forward)
    float_input = cls.__dict__.get('float_input', True)
    save = {'self': 'input', 'result': 'output'}.get(cls.saved[0]) if cls.saved else None
    rule, name = cls.out, cls.op
    node_cls = cls if cls.node is not None else None

    if float_input:
        def method(input):
            try:
                return unary(node_cls, input, fn(float_dtype_for(input._data)), save)
            except AttributeError:  # (leafgrad.exp(1.0): PyTorch's parser's TypeError)
                _refuse_no_tensor(sys._getframe().f_code.co_name, input)  # (an alias's copy: its name)
                raise

        def function(input, *, out=None):
            try:
                result = unary(node_cls, input, fn(float_dtype_for(input._data)), save)
            except AttributeError:
                _refuse_no_tensor(sys._getframe().f_code.co_name, input)  # (an alias's copy: its name)
                raise
            if out is not None:
                return rule(name, out, result, True)
            return result
    else:
        def method(input):
            try:
                return unary(node_cls, input, fn(input._data), save)
            except AttributeError:
                _refuse_no_tensor(sys._getframe().f_code.co_name, input)  # (an alias's copy: its name)
                raise

        def function(input, *, out=None):
            try:
                result = unary(node_cls, input, fn(input._data), save)
            except AttributeError:
                _refuse_no_tensor(sys._getframe().f_code.co_name, input)  # (an alias's copy: its name)
                raise
            if out is not None:
                return rule(name, out, result, True)
            return result
    if rule is None:
        function = method
    return function, method


__all__ = ['Op', 'ops', 'CAST', 'NO_GRAD_CAST', 'SAME', 'EXACT', 'check_out', 'fill_out', 'scalar_name',
           'elementwise_forward', 'write_out', 'write_outs', 'copy_out', 'writes_out', 'out_rule', 'check_out_type',
           'exact_dtype', 'castable_dtype', 'safely_castable', 'same_dtype', 'user_stacklevel', 'warn_once']
