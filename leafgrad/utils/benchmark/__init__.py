"""``torch.utils.benchmark``: ``Timer`` (``timeit``, ``blocked_autorange``, ``adaptive_autorange``),
the ``Measurement`` it returns (printed as PyTorch prints it: median, IQR, measurements and runs
per measurement) and ``Compare``, a table of many measurements.

    >>> import leafgrad as torch
    >>> from leafgrad.utils.benchmark import Timer
    >>> x = torch.randn(100)
    >>> m = Timer('x * 2', globals={'x': x}, label='mul').blocked_autorange(min_run_time=0.05)
    >>> m.median > 0
    True
"""
from .utils.common import *  # noqa: F401,F403
from .utils.timer import *  # noqa: F401,F403
from .utils.compare import *  # noqa: F401,F403
