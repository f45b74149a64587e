"""torch._inductor.config: PyTorch's settings, with their defaults (``triton.cudagraphs``
and the other dotted ones read as ``config.triton.cudagraphs``). leafgrad.compile reads none
of them: setting one warns once that it has no effect here."""
import sys

from .._dynamo._config_module import install
from .._dynamo._torch_configs import INDUCTOR

install(sys.modules[__name__], INDUCTOR)
