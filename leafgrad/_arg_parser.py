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

from . import backend
from .tensor import Tensor

_np = backend.numpy


def _is_int(value):
    if isinstance(value, Tensor):  # a 0-dim integer tensor reads as its number
        return value._data.ndim == 0 and value._data.dtype.kind in 'iu'
    return isinstance(value, (int, _np.integer)) and not isinstance(value, (bool, _np.bool_))


_CHECKS = {'Tensor': lambda v: isinstance(v, Tensor), 'int': _is_int,
           'bool': lambda v: isinstance(v, (bool, _np.bool_))}


class _Param:
    __slots__ = ('type', 'name', 'optional', 'default', 'keyword_only')

    def __init__(self, text, keyword_only):
        declaration, _, default = text.partition(' = ')
        self.type, self.name = declaration.split(' ')
        self.optional = bool(default)
        self.default = ast.literal_eval(default) if default else None
        self.keyword_only = keyword_only


class _Signature:
    """One overload: its parameters, and the text PyTorch prints for it."""
    __slots__ = ('text', 'params', 'pieces', 'max_pos_args', 'min_args')

    def __init__(self, pieces):
        self.pieces = pieces
        self.text = '(' + ', '.join(pieces) + ')'
        star = pieces.index('*') if '*' in pieces else len(pieces)
        self.params = [_Param(p, i > star) for i, p in enumerate(pieces) if p != '*']
        self.max_pos_args = sum(not p.keyword_only for p in self.params)
        self.min_args = sum(not p.optional for p in self.params)

    def parse(self, name, args, kwargs, raise_error):
        """{name: value} for every parameter, or None (raise_error: PyTorch's error why not)."""
        if len(args) > self.max_pos_args:
            return _fail(raise_error, self._extra_args(name, len(args)))
        values, consumed = {}, 0
        for i, param in enumerate(self.params):
            if i < len(args):
                value, is_keyword = args[i], False
            elif param.name in kwargs:
                value, is_keyword = kwargs[param.name], True
                consumed += 1
            else:
                if not param.optional:
                    missing = [f'"{p.name}"' for p in self.params[i:] if not p.optional]
                    return _fail(raise_error, f'{name}() missing {len(missing)} required positional arguments: '
                                              f'{", ".join(missing)}')
                values[param.name] = param.default
                continue
            if not (value is None and param.optional and param.default is None) and not _CHECKS[param.type](value):
                where = '' if is_keyword else f' (position {i + 1})'
                return _fail(raise_error, f"{name}(): argument '{param.name}'{where} must be {param.type}, not "
                                          f'{type(value).__name__}')
            values[param.name] = int(value) if param.type == 'int' and value is not None else value
        if consumed < len(kwargs):
            names = [p.name for p in self.params]
            for key in kwargs:
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
        return [(p[:p.rfind(' ')] if ' ' in p else p, p[p.rfind(' ') + 1:]) for p in self.pieces]


def _fail(raise_error, message):
    if raise_error:
        raise TypeError(message)
    return None


class Overloads:
    """A function's overloads, each written as PyTorch prints it (its function form, with
    ``Tensor input`` first); the method form drops ``input`` and ``out``."""
    __slots__ = ('name', 'function', 'method')

    def __init__(self, name, *signatures):
        self.name = name
        pieces = [text[1:-1].split(', ') for text in signatures]
        self.function = [_Signature(p) for p in pieces]
        self.method = [_Signature([q for q in p[1:] if not q.startswith('Tensor out ')]) for p in pieces]
        for signature in self.method:  # a '*' that nothing follows any more is not printed
            if signature.pieces[-1:] == ['*']:
                signature.pieces.pop()
                signature.text = '(' + ', '.join(signature.pieces) + ')'

    def bind(self, args, kwargs, method=False):
        """The overload's values of the arguments (the method's: without ``self``), as
        {parameter name: value}; PyTorch's TypeError where no overload binds them."""
        signatures = self.method if method else self.function
        for signature in signatures:
            values = signature.parse(self.name, args, kwargs, False)
            if values is not None:
                return values
        given = len(args) + len(kwargs)
        plausible = [s for s in signatures if s.min_args <= given <= len(s.params)]
        if len(plausible) == 1:
            plausible[0].parse(self.name, args, kwargs, True)
        raise TypeError(self._invalid_combination(signatures, args, kwargs))

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
