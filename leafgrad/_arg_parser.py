"""PyTorch's argument parser for a function with overloads: which overload a call binds to, and
the TypeError PyTorch raises when none does, word for word.

PyTorch (``python_arg_parser.cpp``) tries each overload in turn. When none binds it counts the
overloads whose number of parameters admits the number of arguments given: if exactly one
does, the error is that overload's own (``argsort() missing 1 required positional arguments:
"stable"``); otherwise it lists the overloads (``invalid_arguments.cpp``). That listing splits
each overload at ", " and reads a name off the end of each piece, so a parameter with a default
is known by its default ("-1"), "*" counts as a parameter, and a type is matched by its Python
type's name: the quirks below are PyTorch's and are kept because its messages show them.
``int_list`` is the parser's reading of an int-list argument (sizes, dims, repeats), so that
``x.view(3, 2.0)`` is refused instead of being read as ``(3, 2)``.

>>> from leafgrad._arg_parser import Overloads
>>> argsort = Overloads('argsort', '(Tensor input, int dim = -1, bool descending = False)')
>>> argsort.bind((0,), {'descending': 1}, method=True)
Traceback (most recent call last):
TypeError: argsort(): argument 'descending' must be bool, not int
"""
import ast
import operator
import inspect
import re
import sys

from . import backend
from .backend import type_name
from .generator import Generator
from .tensor import Tensor

_np = backend.numpy


def _is_int(value):
    if isinstance(value, Tensor):  # a 0-dim integer tensor reads as its number (_is_float's rule)
        return _is_float(value) and value._data.dtype.kind in 'iu'
    return isinstance(value, (int, _np.integer)) and not isinstance(value, (bool, _np.bool_))


def _is_float(value):
    if isinstance(value, Tensor):  # a 0-dim tensor reads as its number, unless it requires grad (the
        # number would drop its gradient): clamp(x, 0.5, tensor) is refused as of no overload
        return value._data.ndim == 0 and not value._requires_grad
    return isinstance(value, (int, float, _np.integer, _np.floating))


def is_number(value):
    """A 'Number' argument as PyTorch's parser takes one: a Python or NumPy number, or a 0-dim tensor."""
    return isinstance(value, (int, float, complex, _np.number)) or _is_float(value)


def check_number(fname, param, position, value):
    """PyTorch's TypeError for a 'Number' parameter given anything else: a string, None, a tensor
    of one dim or more, or a 0-dim one that requires grad (its number would drop the gradient).
    ``position``: the parameter's, counted from 1 with ``input``. Called by a forward only where
    the value is no float (the common case checked inline), so the parser's keyword form, which
    names no position, is not told apart."""
    if not is_number(value):
        raise TypeError(f"{fname}(): argument '{param}' (position {position}) must be Number, not "
                        f'{type_name(value)}')


def is_dtype(value):
    """A dtype argument as PyTorch's parser takes one: a leafgrad dtype or a Python type (float:
    float64); not a string nor a NumPy dtype, though backend.to_dtype reads those for leafgrad's own use."""
    return type(value) is backend.dtype or value is float or value is int or value is bool or value is complex


def _is_int_list(value):  # ('tuple of ints': one int, or a tuple or list of them)
    return _is_int(value) or isinstance(value, (tuple, list)) and all(_is_int(v) for v in value)


_CHECKS = {'Tensor': lambda v: isinstance(v, Tensor), 'int': _is_int,
           'bool': lambda v: isinstance(v, (bool, _np.bool_)), 'tuple of ints': _is_int_list,
           'Number': is_number, 'str': lambda v: isinstance(v, str), 'float': _is_float,
           'tuple of floats': lambda v: isinstance(v, (tuple, list)) and all(_is_float(x) for x in v),
           'leafgrad.dtype': is_dtype,
           'leafgrad.Generator': lambda v: type(v) is Generator,
           'tuple of Tensors': lambda v: isinstance(v, (tuple, list)) and all(isinstance(t, Tensor) for t in v),
           'tuple of Scalars': lambda v: isinstance(v, (tuple, list)) and all(is_number(x) for x in v)}


# NumPy's names of parameters, which PyTorch's parser takes for its own (``axis=`` for ``dim=``)
_NUMPY_NAMES = {'dim': 'axis', 'keepdim': 'keepdims'}
_OWN_NAMES = {alias: own for own, alias in _NUMPY_NAMES.items()}


class _Param:
    __slots__ = ('type', 'name', 'optional', 'default', 'keyword_only', 'nullable')

    def __init__(self, text, keyword_only):
        declaration, _, default = text.partition(' = ')
        self.type, self.name = declaration.rsplit(' ', 1)
        self.nullable = self.type.endswith('?')  # ('bool? stable': None too; printed without '?', as PyTorch)
        self.type = self.type.rstrip('?')
        self.optional = bool(default)
        self.default = ast.literal_eval(default) if default else None
        self.keyword_only = keyword_only


class _Signature:
    """One overload: its parameters, and the text PyTorch prints for it."""
    __slots__ = ('text', 'params', 'pieces', 'max_pos_args', 'min_args')

    def __init__(self, pieces):
        star = pieces.index('*') if '*' in pieces else len(pieces)
        self.params = [_Param(p, i > star) for i, p in enumerate(pieces) if p != '*']
        self.pieces = pieces = [p.replace('? ', ' ') for p in pieces]
        self.text = '(' + ', '.join(pieces) + ')'
        self.max_pos_args = sum(not p.keyword_only for p in self.params)
        self.min_args = sum(not p.optional for p in self.params)

    def parse(self, name, args, kwargs, raise_error, numbers=False):
        """{name: value} for every parameter, or None (raise_error: PyTorch's error why not);
        ``numbers``: a number is taken for a Tensor too."""
        if len(args) > self.max_pos_args:
            return _fail(raise_error, self._extra_args(name, len(args)))
        values, consumed = {}, 0
        for i, param in enumerate(self.params):
            if i < len(args):
                value, is_keyword = args[i], False
            elif param.name in kwargs or _NUMPY_NAMES.get(param.name) in kwargs:
                value, is_keyword = kwargs[param.name if param.name in kwargs else _NUMPY_NAMES[param.name]], True
                consumed += 1
            else:
                if not param.optional:
                    missing = [p.name for p in self.params[i:] if not p.optional]
                    return _fail(raise_error, missing_message(name, missing))
                values[param.name] = param.default
                continue
            if not (value is None and (param.nullable or param.optional and param.default is None)) and \
                    not _CHECKS[param.type](value) and not (numbers and param.type == 'Tensor' and is_number(value)):
                if param.type == 'tuple of ints' and isinstance(value, (list, tuple)) and value and \
                        _is_int(value[0]) and not isinstance(value[0], Tensor):
                    # (PyTorch's parser takes a sequence for one of ints by its first element, then
                    # fails unpacking another, whatever overloads remain)
                    int_list((value,), name, param.name, i + 1)
                if param.type == 'tuple of Tensors' and isinstance(value, (list, tuple)):
                    # (PyTorch's parser, reaching a tensor list, throws at its first non-tensor, whatever
                    # overloads remain)
                    bad = next(k for k, v in enumerate(value) if not isinstance(v, Tensor))
                    raise TypeError(f'expected Tensor as element {bad} in argument {i}, but got '
                                    f'{type(value[bad]).__name__}')
                where = '' if is_keyword else f' (position {i + 1})'
                return _fail(raise_error, f"{name}(): argument '{param.name}'{where} must be {param.type}, not "
                                          f'{type(value).__name__}')
            values[param.name] = int(value) if param.type == 'int' and value is not None else value
        if consumed < len(kwargs):
            names = [p.name for p in self.params]
            for key in kwargs:
                if key not in names and _OWN_NAMES.get(key) in names:
                    own = _OWN_NAMES[key]
                    if own in kwargs or names.index(own) < len(args):  # (given twice: the alias is unknown)
                        return _fail(raise_error, f"{name}() got an unexpected keyword argument '{key}'")
                    key = own
                if key not in names:
                    return _fail(raise_error, f"{name}() got an unexpected keyword argument '{key}'")
                if names.index(key) < len(args):
                    return _fail(raise_error, f"{name}() got multiple values for argument '{key}'")
        return values

    def _extra_args(self, name, given):
        if self.min_args != self.max_pos_args:
            return f'{name}() takes from {self.min_args} to {self.max_pos_args} positional arguments but {given} were given'
        s = '' if self.max_pos_args == 1 else 's'
        return f'{name}() takes {self.max_pos_args} positional argument{s} but {given} were given'

    # what invalid_arguments.cpp reads off the printed text: one (type, name) per piece
    def listed(self):
        # ('()' is one piece, empty: an overload without parameters is told apart from one argument)
        return [(p[:p.rfind(' ')] if ' ' in p else p, p[p.rfind(' ') + 1:]) for p in self.pieces or ['']]


def missing_message(name, missing):
    """PyTorch's words for required arguments not given (its plural, inverted, too)."""
    quoted = ', '.join(f'"{p}"' for p in missing)
    return f'{name}() missing {len(missing)} required positional argument{"s" if len(missing) == 1 else ""}: {quoted}'


def _fail(raise_error, message):
    if raise_error:
        raise TypeError(message)
    return None


def _without_out(pieces):
    """A signature's pieces without its ``out`` parameter (nor a '*' that nothing follows any more)."""
    pieces = [q for q in pieces if not q.partition(' = ')[0].endswith(' out')]
    return pieces[:-1] if pieces[-1:] == ['*'] else pieces


class Overloads:
    """A function's overloads, each written as PyTorch prints it (its function form, with
    ``Tensor input`` first); the method form drops ``input`` and ``out``. ``numbers``: a number
    is taken for a Tensor, as PyTorch's parser takes one for add's, sub's, mul's and div's;
    ``function_only``: the indices of the signatures that have no method form
    (``repeat_interleave(Tensor repeats)``)."""
    __slots__ = ('name', 'signatures', 'numbers', 'function_only', 'function', 'method')

    def __init__(self, name, *signatures, numbers=False, function_only=()):
        self.name, self.signatures, self.numbers, self.function_only = name, signatures, numbers, function_only

    def __getattr__(self, name):  # (Python calls it only while a slot is unset)
        if name not in ('function', 'method'):
            raise AttributeError(name)
        # the overloads are read when first bound, not at import (~1 ms for the ops that have them)
        pieces = [text[1:-1].split(', ') for text in self.signatures]
        self.function = [_Signature(p) for p in pieces]
        # (a 'Number self' overload's method form is another's: PyTorch lists it once)
        methods = dict.fromkeys(tuple(_without_out(p[1:])) for i, p in enumerate(pieces) if i not in self.function_only)
        self.method = [_Signature(list(p)) for p in methods]
        return getattr(self, name)

    def named(self, name):
        """The same overloads under another name (an alias's), which the errors print; an
        in-place variant's (``name`` ending in '_') take no ``out``, nor a number for ``self``."""
        signatures, function_only = self.signatures, self.function_only
        if name.endswith('_'):
            kept = [i for i, text in enumerate(signatures) if not text.startswith('(Number self')]
            function_only = tuple(kept.index(i) for i in function_only if i in kept)
            signatures = ['(' + ', '.join(_without_out(signatures[i][1:-1].split(', '))) + ')' for i in kept]
        return Overloads(name, *signatures, numbers=self.numbers, function_only=function_only)

    def bind(self, args, kwargs, method=False):
        """The overload's values of the arguments (the method's: without ``self``), as
        {parameter name: value}; PyTorch's TypeError where no overload binds them."""
        signatures = self.method if method else self.function
        for signature in signatures:
            values = signature.parse(self.name, args, kwargs, False, self.numbers)
            if values is not None:
                return values
        given = len(args) + len(kwargs)
        plausible = [s for s in signatures if s.min_args <= given <= len(s.params)]
        if len(plausible) == 1:
            plausible[0].parse(self.name, args, kwargs, True, self.numbers)
        raise TypeError(self._invalid_combination(signatures, args, kwargs))

    def invalid(self, args, kwargs, method=False):
        """PyTorch's TypeError listing the overloads, for arguments that none of them takes (where
        a check of the function's own refuses what the signatures would let through)."""
        return TypeError(self._invalid_combination(self.method if method else self.function, args, kwargs))

    def _invalid_combination(self, signatures, args, kwargs):
        # PyTorch holds the keywords in a hash map: a few of them come out newest first
        keywords = list(reversed(kwargs.items()))
        got = ', '.join([type(a).__name__ for a in args] + [f'{k}={type(v).__name__}' for k, v in keywords])
        message = (f'{self.name}() received an invalid combination of arguments - got ({got}'
                   f'{"" if args or not kwargs else ", "}), but expected one of:\n')
        for signature in signatures:
            message += f' * {signature.text}\n'
            listed = signature.listed()
            if len(listed) != len(args) + len(kwargs):
                continue
            names = [n for _, n in listed[max(len(listed) - len(kwargs), 0):]]
            unmatched = [k for k, _ in keywords if k not in names]
            if unmatched:
                message += f"      didn't match because some of the keywords were incorrect: {', '.join(unmatched)}\n"
                continue
            shown = []
            for i, (kind, name) in enumerate(listed):
                value = args[i] if i < len(args) else kwargs[name]
                matching = type(value).__name__ in _LISTED_TYPES.get(kind, (kind,))
                text = (f'{name}=' if i >= len(args) else '') + type(value).__name__
                if isinstance(value, (list, tuple)):  # (PyTorch names the elements: 'list of [int]', 'tuple of (int,)')
                    inner = ', '.join(type(v).__name__ for v in value)
                    text += f' of [{inner}]' if isinstance(value, list) else \
                        f' of ({inner}{"," if len(value) == 1 else ""})'
                shown.append(text if matching else f'!{text}!')
            shown = ', '.join(shown) + ('' if args else ', ')
            message += f"      didn't match because some of the arguments have invalid types: ({shown})\n"
        return message


# the Python type names a listed type accepts (any other: its own name only)
_LISTED_TYPES = {'int': ('int', 'long'), 'float': ('float', 'int', 'long')}


# ---- int lists: sizes, dims, repeats ------------------------------------------------------------

def _is_index(value):
    """An int as PyTorch's parser takes one: anything with ``__index__`` (Python and NumPy
    integers, a one-element integer tensor)."""
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


# the functions whose parser, given no size, lists their overloads
_SAMPLED = ('(tuple of ints size, *, leafgrad.Generator generator, Tensor out = None, leafgrad.dtype dtype = None, '
            'leafgrad.layout layout = None, leafgrad.device device = None, bool pin_memory = False, '
            'bool requires_grad = False)',
            '(tuple of ints size, *, Tensor out = None, leafgrad.dtype dtype = None, leafgrad.layout layout = None, '
            'leafgrad.device device = None, bool pin_memory = False, bool requires_grad = False)')
_LISTED_WITHOUT_SIZE = {
    'view': Overloads('view', '(Tensor input, leafgrad.dtype dtype)', '(Tensor input, tuple of ints size)'),
    'rand': Overloads('rand', *_SAMPLED), 'randn': Overloads('randn', *_SAMPLED)}


def int_list(args, fname, argument='size', position=1):
    """The ints of an int-list argument given as ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])``,
    with PyTorch's TypeError for anything else (a float, None, a float tensor, a nested list)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        values = args[0]
    elif len(args) == 1:
        if isinstance(args[0], bool) or not _is_index(args[0]):
            raise TypeError(f"{fname}(): argument '{argument}' (position {position}) must be tuple of ints, not "
                            f'{type(args[0]).__name__}')
        values = args
    elif args and (isinstance(args[0], (bool, tuple, list)) or not _is_index(args[0])):
        # (only an int first makes the parser read the positional arguments as one list)
        raise TypeError(f'{fname}() takes 1 positional argument but {len(args)} were given')
    elif not args:  # (none given: no size at all, which PyTorch refuses; () is the 0-dim one)
        if fname in _LISTED_WITHOUT_SIZE:
            _LISTED_WITHOUT_SIZE[fname].bind((), {}, method=fname == 'view')
        raise TypeError(missing_message(fname, [argument]))
    else:
        values = args
    for i, value in enumerate(values):
        if i == 0 and isinstance(value, bool) or not _is_index(value):
            if i == 0:  # (the parser asks the first element whether the sequence is one of ints)
                raise TypeError(f"{fname}(): argument '{argument}' (position {position}) must be tuple of ints, but found "
                                f'element of type {type(value).__name__} at pos 0')
            raise TypeError(f"{fname}(): argument '{argument}' failed to unpack the object at pos {i + 1} with error "
                            f'"type must be tuple of ints,but got {type(value).__name__}"')
    return tuple(map(operator.index, values))


# ---- one signature, read by Python: what PyTorch's parser adds ---------------------------------
# A declared op's function and method (ops/_op.py) take their arguments as Python binds them; where
# PyTorch's parser reads them, it also takes NumPy's names of two parameters and checks the types
# of the parameters below, which have one name and one type in every op that has them.

_NUMPY_ALIASES = tuple(_OWN_NAMES.items())  # (alias, own name)

PARAMETER_TYPES = {'keepdim': 'bool', 'descending': 'bool', 'largest': 'bool', 'sorted': 'bool', 'equal_nan': 'bool',
                   'diagonal': 'int', 'decimals': 'int', 'k': 'int', 'offset': 'int', 'chunks': 'int',
                   'dim0': 'int', 'dim1': 'int', 'dim2': 'int',
                   'nan': 'float?', 'posinf': 'float?', 'neginf': 'float?',  # (?: or None)
                   'dtype': 'leafgrad.dtype?'}
_STRICT = {'bool': lambda v: type(v) is bool, 'int': _is_int, 'float': _is_float, 'float?': _is_float,
           'leafgrad.dtype?': is_dtype, 'int?': _is_int,
           'tuple of ints': _is_int_list, 'tuple of ints?': _is_int_list,
           'Tensor or int': lambda v: isinstance(v, Tensor) or _is_int(v),  # (max(other) or max(dim))
           'Tensor or int?': lambda v: isinstance(v, Tensor) or _is_int(v),  # (repeat_interleave's repeats)
           'Tensor or float': lambda v: isinstance(v, Tensor) or _is_float(v),  # (quantile's q)
           # (an int of sections or the indices: hsplit's; tensor_split's, or a tensor of either)
           'Tensor or tuple of ints': lambda v: isinstance(v, Tensor) or _is_int_list(v),
           'Tensor': lambda v: isinstance(v, Tensor), 'Tensor?': lambda v: isinstance(v, Tensor),
           'Number': is_number,
           # a tuple or list of ints, not one int (as_strided's size and stride: no length to repeat it to)
           'sizes': lambda v: isinstance(v, (tuple, list)) and all(_is_int(x) for x in v)}
_KIND_NAMES = {'sizes': 'tuple of ints'}  # (a kind of _STRICT named otherwise in the errors)


def check_dtype(fname, value):
    """PyTorch's TypeError for a ``dtype=`` of ``fname`` that is no dtype (None: the default)."""
    if value is not None and not is_dtype(value):
        raise TypeError(f"{fname}(): argument 'dtype' must be leafgrad.dtype, not {type_name(value)}")


# parameters that PyTorch's signatures type Tensor (or a list of tensors), by their names: where
# an op's forward fails reading one that is no tensor, the parser's TypeError is PyTorch's error
TENSOR_PARAMETERS = frozenset([
    'input', 'self', 'other', 'tensor', 'tensor1', 'tensor2', 'mat', 'mat1', 'mat2', 'vec', 'vec1', 'vec2',
    'batch1', 'batch2', 'index', 'src', 'source', 'mask', 'values', 'boundaries', 'sorted_sequence', 'end',
    'exponent', 'A', 'B', 'LU', 'x', 'y', 'x1', 'x2', 'indices', 'condition', 'elements', 'test_elements',
    'weight', 'target', 'input2', 'tensors', 'count', 'prob', 'the_template', 'input1', 'input3', 'anchor',
    'positive', 'negative', 'var', 'log_input', 'running_mean', 'running_var', 'bias', 'L', 'tau'])


def refuse_non_tensors(name, params, args, kwargs, method=False):
    """PyTorch's parser's TypeError, where ``name``'s forward (``params``: its parameters in
    order; a ``method``'s self first) raised an AttributeError: the first argument of a Tensor
    parameter that is no tensor (None: an optional one's default) is named; nothing where every
    such argument is a tensor. Called in an ``except``, so the valid path pays nothing for it."""
    shift = 0 if method else 1
    for i, p in enumerate(params):
        if p not in TENSOR_PARAMETERS and i or method and i == 0:  # (the first: a Tensor in every op here)
            continue
        if i < len(args):
            value, position = (args[i:] if p == 'tensors' else args[i]), i + shift
        elif p in kwargs:
            value, position = kwargs[p], None
        else:
            continue
        if p == 'tensors':  # (a list of tensors, or *tensors)
            if len(value) == 1 and isinstance(value[0], (list, tuple)):
                value = value[0]
            for j, v in enumerate(value):
                if not isinstance(v, Tensor):
                    raise TypeError(f'expected Tensor as element {j} in argument {i}, but got '
                                    f'{type(v).__name__}') from None
            continue
        if value is not None and not isinstance(value, Tensor):
            where = f"argument '{p}'" if position is None else f"argument '{p}' (position {position})"
            raise TypeError(f'{name}(): {where} must be Tensor, not {type_name(value)}') from None


# the ids of the code of the methods that are a forward's copy (ops/_op.py; each held by its method),
# whose refuse_arguments counts positions after self
METHOD_CODES = set()


_FROM_CUPY = re.compile(r'numpy\.ndarray|Implicit conversion to a NumPy array')


def refuse_mixed_devices(values):
    """PyTorch's RuntimeError where the error being handled is CuPy's refusal of a host array in
    a GPU's work and ``values`` (arguments; sequences of them) hold tensors on different devices:
    a CPU tensor given to an op with a GPU one. Nothing otherwise."""
    error = sys.exc_info()[1]
    if error is None or not _FROM_CUPY.search(str(error)):
        return
    devices = []
    for value in values:
        for t in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(t, Tensor):
                device = t.device
                if device.type != 'meta' and device not in devices:
                    devices.append(device)
    if len(devices) > 1:
        raise RuntimeError(f'Expected all tensors to be on the same device, but found at least two devices, '
                           f'{devices[0]} and {devices[1]}!') from None


def refuse_arguments(name=None, params=None, overloads=None):
    """PyTorch's parser's TypeError, in the ``except`` of a function whose body failed (an
    AttributeError, a TypeError) on an argument that is no tensor: the first Tensor parameter
    (``TENSOR_PARAMETERS``, and the first parameter, named ``input`` as PyTorch's function forms
    name ``self``) holding no tensor is named, as ``refuse_non_tensors`` names it; nothing where
    each holds one. The function and its arguments are read off the failing frame, so the
    ``try`` around the body is all the valid path has of it, and costs nothing there. ``name``:
    PyTorch's name, if not the function's; ``params``: PyTorch's Tensor parameters in its order,
    where they are not the function's, each checked, as ``'name'`` or ``'name=local'``
    (F.embedding: ``('weight', 'indices=input')``); ``overloads``: PyTorch's signatures where it
    has several, whose listing is then the error where a Tensor parameter holds no tensor (the
    arguments as ``_given`` reads them off the frame)."""
    frame = sys._getframe(1)
    code, values = frame.f_code, frame.f_locals
    del frame
    refuse_mixed_devices(values.values())
    name = name or code.co_name
    method = id(code) in METHOD_CODES
    n = code.co_argcount
    if params is None:
        params = list(code.co_varnames[:n])
        args = [values.get(p) for p in params]
        if code.co_flags & inspect.CO_VARARGS:  # (*tensors)
            params.append(code.co_varnames[n + code.co_kwonlyargcount])
            args.extend(values.get(params[-1], ()))
        kwargs = {p: values.get(p) for p in code.co_varnames[n:n + code.co_kwonlyargcount]}
    else:  # (each a Tensor parameter, given by position)
        for i, (shown, _, local) in enumerate(p.partition('=') for p in params):
            value = values.get(local or shown)
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{name}(): argument '{shown}' (position {i + 1 - method}) must be Tensor, not "
                                f'{type_name(value)}') from None
        return
    if params and params[0] == 'self':
        params[0] = 'input'
    if overloads is None or params[-1:] == ['tensors'] and len(args) == len(params) and \
            isinstance(args[-1], (list, tuple)):  # (one sequence for *tensors: read element-wise)
        refuse_non_tensors(name, params, args, kwargs, method)
        return
    try:
        refuse_non_tensors(name, params, args, kwargs, method)
    except TypeError:
        if overloads.name != name:  # (an alias's copy of the function: its name, as PyTorch's listing)
            overloads = overloads.named(name)
        if method:
            overloads.bind(*_given(overloads, params[1:], args[1:], kwargs), method=True)
        overloads.bind(*_given(overloads, params, args, kwargs))
        raise


def _given(overloads, params, args, kwargs):
    """The arguments of a call read off its frame, as given: those that equal their default in
    ``overloads``' first signature taken for not given, and those after the first of them for
    given by keyword (the frame cannot tell; so a call commonly reads)."""
    defaults = {p.name: p.default for p in overloads.function[0].params if p.optional}

    def default(param, value):
        return param in defaults and (value is None if defaults[param] is None else
                                      type(value) in (int, float, bool, str) and value == defaults[param])
    positional, keywords, by_keyword = [], {}, False
    for param, value in zip(params, args):
        if default(param, value):
            by_keyword = True
        elif by_keyword:
            keywords[param] = value
        else:
            positional.append(value)
    keywords.update((k, v) for k, v in kwargs.items() if not default(k, v))
    return tuple(positional), keywords


def parsing(fn, name, method, overloads=None, refusals=None, types=None, listed=None):
    """``fn`` (a declared op's function or method, ``name`` its name) reading its arguments as
    PyTorch's parser: NumPy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=`` (given as well
    as its own name, an alias is refused), and the parameters of ``PARAMETER_TYPES`` of their
    type or refused with PyTorch's TypeError (None where the parameter's default is None), and
    those of ``types`` (the op's own: ``{'dim': 'int'}``; None only for a type ending in '?'). ``fn``
    itself where it has none of these parameters (nothing added to its calls). ``overloads``
    (an op's ``Overloads``, where PyTorch has several signatures): every call is bound to one of
    them first, or refused with PyTorch's TypeError; ``refusals`` (the same, for an op whose
    forward refuses what they refuse): bound only when the forward raises, so that its error
    becomes PyTorch's TypeError where none of them binds the arguments; ``listed`` (the same, for
    an op whose typed parameters are checked here): bound only where one of them has the wrong
    type, so that PyTorch's listing of the overloads (or the one plausible overload's error) is
    the error, as its parser gives where no overload binds the arguments."""
    if not callable(fn) or isinstance(fn, property):
        return fn
    if overloads is not None:
        fn = _bound_first(fn, overloads, method)
    elif refusals is not None:
        fn = bound_when_refused(fn, refusals, method)
    types, read = _types(types)
    params = _names(fn)
    if read.isdisjoint(params):  # (most functions and methods: fn itself, nothing made)
        return fn
    positional, defaults, required = _parameters(fn)
    aliases = tuple((alias, own, params.index(own)) for alias, own in _NUMPY_ALIASES if own in params)
    typed = []
    for i, param in enumerate(params):
        if param in types and overloads is None:  # (the overloads check them)
            kind = types[param]
            nullable = kind.endswith('?') or not kind.endswith('!') and param in defaults and defaults[param] is None
            kind = kind.rstrip('!')
            position = i if i < positional else 1 << 30  # (keyword only: never given by position)
            shown = f' (position {i + (not method)})'  # (PyTorch counts a method's arguments after self)
            typed.append((param, position, _STRICT[kind], _KIND_NAMES.get(kind, kind).rstrip('?'), nullable, shown))
    typed = tuple(typed)

    def parsed(*args, **kwargs):
        if len(args) < len(required):
            missing = [p for p in required[len(args):] if p not in kwargs and _NUMPY_NAMES.get(p) not in kwargs]
            if missing:
                raise TypeError(missing_message(name, missing))
        if kwargs:
            for alias, own, position in aliases:
                if alias in kwargs:
                    if own in kwargs or len(args) > position:
                        raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
                    kwargs[own] = kwargs.pop(alias)
        for param, position, check, kind, nullable, shown in typed:
            if len(args) > position:
                value, where = args[position], shown
            elif param in kwargs:
                value, where = kwargs[param], ''
            else:
                continue
            if not check(value) and not (value is None and nullable):
                if listed is not None:
                    listed.bind(args[1:] if method else args, kwargs, method)
                if kind == 'tuple of ints' and where and isinstance(value, (tuple, list)):
                    int_list((value,), name, param, position + (not method))  # (its words for the element)
                raise TypeError(f"{name}(): argument '{param}'{where} must be {kind}, not {type_name(value)}")
        try:
            return fn(*args, **kwargs)
        except AttributeError:  # (leafgrad.cumsum(1, 0): PyTorch's parser's TypeError)
            called = sys._getframe().f_code.co_name  # (an alias's copy of this function: the alias)
            if listed is not None:  # (no overload takes it: their listing, as PyTorch's parser gives)
                (listed if called == name else listed.named(called)).bind(args[1:] if method else args, kwargs, method)
            refuse_non_tensors(called, params, args, kwargs, method)
            raise
    # (its signature is fn's: inspect.signature follows __wrapped__, and reads it only when asked)
    parsed.__doc__, parsed.__wrapped__ = fn.__doc__, fn
    return parsed


_OP_TYPES = {}  # an op's own parameter_types -> (those merged with PARAMETER_TYPES, the names read)


def _types(types):
    """PARAMETER_TYPES with an op's own ``types`` (``{'dim': 'int'}``) marked '!': checked even
    where the parameter's default is None (None passes only for a type ending in '?'); and the
    names of the parameters that ``parsing`` reads (those and NumPy's aliases' own names).
    Made once for each op's ``types``: ``parsing`` runs for ~800 functions and methods at import."""
    key = tuple(sorted(types.items())) if types else ()
    made = _OP_TYPES.get(key)
    if made is None:
        merged = dict(PARAMETER_TYPES, **{p: t if t.endswith('?') else t + '!' for p, t in key})
        made = _OP_TYPES[key] = merged, frozenset(merged).union(_OWN_NAMES.values())
    return made


_FunctionType = type(_types)


class SignatureWith(inspect.Signature):
    """The signature of a function that takes ``fn``'s parameters and keyword-only ones after
    them (``extra``: (name, default) pairs; PyTorch's ``out=None`` of a function made with out=),
    made when first read (by ``inspect.signature``, ``help``): making the ~150 of them took ~5 ms
    of ``import leafgrad``. ``parsing`` reads the parameters off ``fn``'s code instead."""
    __slots__ = ('_fn', '_extra')

    @classmethod
    def of(cls, fn, extra):
        signature = cls.__new__(cls)  # (no parameters yet: __getattr__ makes them when read)
        signature._fn, signature._extra = fn, extra
        return signature

    def __getattr__(self, name):  # (Python calls it only while a slot is unset)
        if name not in ('_parameters', '_return_annotation'):
            raise AttributeError(name)
        signature = inspect.signature(self._fn)
        made = signature.replace(parameters=list(signature.parameters.values()) + [
            inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=default) for p, default in self._extra])
        self._parameters, self._return_annotation = made._parameters, made._return_annotation
        return getattr(self, name)

    def __repr__(self):
        return f'<Signature {self}>'


def _made_by_of(signature):
    # (SignatureWith.of's, not one that its replace() made: that one has its parameters only)
    return isinstance(signature, SignatureWith) and hasattr(signature, '_fn')


def _names(fn):
    """The names of ``fn``'s parameters that Python binds by name (a function made with out=: its
    forward's and out's, from the signature it declares)."""
    signature = getattr(fn, '__signature__', None)
    if _made_by_of(signature):
        return tuple(_names(signature._fn)) + tuple(p for p, _ in signature._extra)
    if signature is None and not hasattr(fn, '__wrapped__'):
        code = fn.__code__
        return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return list((signature or inspect.signature(fn)).parameters)


def _parameters(fn):
    """How many of ``fn``'s parameters are positional, their defaults by name, and the names of
    the positional ones without a default. Read off the code object where ``fn`` declares no
    other signature: ``inspect.signature`` of each op took ~5 ms of ``import leafgrad``."""
    signature = getattr(fn, '__signature__', None)
    if _made_by_of(signature):
        positional, defaults, required = _parameters(signature._fn)
        return positional, dict(defaults, **dict(signature._extra)), required
    if signature is None and not hasattr(fn, '__wrapped__'):
        code = fn.__code__
        positional = code.co_argcount
        params = code.co_varnames[:positional + code.co_kwonlyargcount]
        given = fn.__defaults__ or ()
        first_default = positional - len(given)
        defaults = dict(zip(params[first_default:positional], given), **(fn.__kwdefaults__ or {}))
        return positional, defaults, params[:first_default]
    values = (signature or inspect.signature(fn)).parameters.values()
    defaults = {p.name: p.default for p in values if p.default is not p.empty}
    positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in values)
    required = tuple(p.name for p in values
                     if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return positional, defaults, required


def _signature_of(fn):
    """``inspect.signature(fn)``, for a wrapper of ``fn`` to declare as its own: made when first
    read where ``fn`` is a plain function without ``*args`` nor ``**kwargs`` (then ``_names`` and
    ``_parameters`` read the same off its code, and making it at import took ~0.5 ms)."""
    signature = getattr(fn, '__signature__', None)
    if signature is not None:
        return signature
    if type(fn) is _FunctionType and not hasattr(fn, '__wrapped__') and not fn.__code__.co_flags & _VARIADIC:
        return SignatureWith.of(fn, ())
    return inspect.signature(fn)


_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _bound_first(fn, overloads, method):
    """``fn`` binding its arguments to one of ``overloads`` before it runs."""
    def bound(*args, **kwargs):
        overloads.bind(args[1:] if method else args, kwargs, method)
        return fn(*args, **kwargs)
    bound.__signature__ = _signature_of(fn)
    bound.__doc__ = fn.__doc__
    return bound


def bound_when_refused(fn, overloads, method):
    """``fn``, whose error (a NumPy one, for a string where a number belongs) is PyTorch's
    TypeError when none of ``overloads`` binds the arguments."""
    def refusing(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:
            try:
                overloads.bind(args[1:] if method else args, kwargs, method)
            except TypeError as refused:
                raise refused from None  # (PyTorch's parser's error alone, not chained to leafgrad's own)
            raise
    refusing.__signature__ = _signature_of(fn)
    # (the name of what it wraps: the transforms know an op by it, an alias by its op's)
    refusing.__doc__, refusing.__module__, refusing.__wrapped__ = fn.__doc__, fn.__module__, fn
    refusing.__name__, refusing.__qualname__ = fn.__name__, fn.__qualname__
    return refusing
