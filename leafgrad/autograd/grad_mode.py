"""Grad modes: whether ops record a graph, per thread.

Each mode is a context manager and a decorator, as in PyTorch. ``inference_mode`` turns
recording off like ``no_grad`` and marks the tensors it creates as inference tensors.

``state.grad_enabled`` is the one flag the ops test: it says whether they record. Outside
inference mode it is grad mode itself. Inside, ops record nothing whatever grad mode says
(PyTorch's InferenceMode removes autograd from dispatch, so ``enable_grad`` inside it turns
grad mode on and still records nothing): there the flag stays False and grad mode, which
``is_grad_enabled`` reports and the managers save and restore, is kept in
``state.grad_in_inference``.
"""
import functools
import sys
import _thread  # (threading's local and Lock are _thread's: importing threading costs ~0.8 ms)


class _State(_thread._local):
    # Class attributes are the defaults every new thread starts from.
    grad_enabled = True        # ops record (grad mode, and not in inference mode)
    inference = False
    grad_in_inference = False  # grad mode while in inference mode
    multithreading = True      # set_multithreading_enabled's flag (leafgrad's backward runs on the calling thread)


state = _State()


INPLACE_ERROR = ('Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to '
                 'get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more '
                 'details.')
SAVE_ERROR = ('Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode '
              'in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor '
              'and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.')


class InferenceCounter(list):
    """The version counter of an inference tensor (and of its views, which share it): what
    makes a tensor one. PyTorch's inference tensors track no version; this one refuses a bump
    outside inference mode with PyTorch's error (the in-place ops check first, so that a
    refused update writes nothing). Once one exists, Node.save refuses to save one."""
    __slots__ = ()

    def __init__(self, *args):
        super().__init__(*args)
        sys.modules['leafgrad.autograd.graph'].inference_made = True

    def __setitem__(self, i, value):
        if not state.inference:
            raise RuntimeError(INPLACE_ERROR)
        list.__setitem__(self, i, value)


def check_not_inference(t):
    """PyTorch's error for an in-place update of an inference tensor outside inference mode."""
    if type(t._version_counter) is InferenceCounter and not state.inference:
        raise RuntimeError(INPLACE_ERROR)


def is_grad_enabled():
    return state.grad_in_inference if state.inference else state.grad_enabled


def _set_grad_mode(mode):
    if state.inference:
        state.grad_in_inference = mode
    else:
        state.grad_enabled = mode


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


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A manager without parameters also decorates bare: ``@no_grad`` as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Ops inside record nothing: their results have requires_grad=False."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_grad_mode(False)

    def __exit__(self, *exc):
        _set_grad_mode(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    def __init__(self):
        self.prev = True

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_grad_mode(True)

    def __exit__(self, *exc):
        _set_grad_mode(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at once (usable as a function), and restores it on exit. As a decorator
    it puts back the mode it set when made, and sets its own at each call."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f'{type(mode).__name__}')
        self.prev = is_grad_enabled()
        self.mode = mode
        _set_grad_mode(self.mode)

    def __call__(self, func):
        _set_grad_mode(self.prev)
        return super().__call__(func)

    def __enter__(self):
        _set_grad_mode(self.mode)

    def __exit__(self, *exc):
        _set_grad_mode(self.prev)

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
        self.prev = (state.grad_enabled, state.inference, state.grad_in_inference)
        _count_inference_contexts(1)
        # as PyTorch's InferenceMode(enabled): grad mode is the opposite of ``enabled``, so
        # inference_mode(False) turns recording on, even inside no_grad
        state.inference = bool(self.mode)
        state.grad_enabled = state.grad_in_inference = False
        _set_grad_mode(not self.mode)

    def __exit__(self, *exc):
        state.grad_enabled, state.inference, state.grad_in_inference = self.prev
        _count_inference_contexts(-1)

    def clone(self):
        return self.__class__(self.mode)


_contexts_lock = _thread.allocate_lock()
inference_contexts = 0  # how many inference_mode contexts are open, in all threads
# Called with that number whenever it changes. origins registers one: while any thread is inside
# inference_mode, ops that record nothing report their outputs to it (origins.note_no_grad),
# which marks them inference tensors, at no cost outside. (A listener, so that grad modes, below
# everything, import nothing.)
inference_listeners = []


def _count_inference_contexts(step):
    global inference_contexts
    with _contexts_lock:
        inference_contexts += step
        for listener in inference_listeners:
            listener(inference_contexts)


class set_multithreading_enabled(_DecoratorContextManager):
    """Whether backward may run on the devices' worker threads (PyTorch's switch: set at once,
    usable as a function, restored on exit; per thread). leafgrad's backward always runs on the
    calling thread, as PyTorch's does on the CPU: the switch is kept and read back."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_multithreading_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f'{type(mode).__name__}')
        self.prev = state.multithreading
        state.multithreading = self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)
