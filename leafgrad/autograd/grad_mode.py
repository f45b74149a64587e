"""Grad modes: whether ops record a graph, per thread.

Each mode is a context manager and a decorator, as in PyTorch. ``inference_mode`` turns
recording off like ``no_grad`` and marks the tensors it creates as inference tensors.
"""
import functools
import threading


class _State(threading.local):
    # Class attributes are the defaults every new thread starts from.
    grad_enabled = True
    inference = False


state = _State()


def is_grad_enabled():
    return state.grad_enabled


def is_inference_mode_enabled():
    return state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (a fresh instance per call)."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Ops inside record nothing: their results have requires_grad=False."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(_DecoratorContextManager):
    def __init__(self):
        self.prev = True

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at once (usable as a function), and restores it on exit. As a decorator
    it puts back the mode it set when made, and sets its own at each call."""

    def __init__(self, mode):
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __call__(self, func):
        state.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        state.grad_enabled = self.mode

    def __exit__(self, *exc):
        state.grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = mode
        self.prev = None

    def __new__(cls, mode=True):
        # @inference_mode used bare on a function
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        # as PyTorch's InferenceMode(enabled): grad mode is the opposite of ``enabled``, so
        # inference_mode(False) turns recording on, even inside no_grad
        state.grad_enabled = not self.mode
        state.inference = bool(self.mode)

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)
