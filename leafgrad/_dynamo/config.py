"""torch._dynamo.config: PyTorch's settings, with their defaults. leafgrad.compile reads
``recompile_limit`` (``cache_size_limit`` is its old name), the switches of dynamic shapes and
``disable`` (from ``TORCH_COMPILE_DISABLE=1``, as PyTorch's); setting another warns once that
it has no effect here."""
import os
import sys

from ._config_module import install
from ._torch_configs import DYNAMO

install(sys.modules[__name__], dict(DYNAMO, disable=os.environ.get('TORCH_COMPILE_DISABLE', '0') == '1'),
        read={'recompile_limit', 'automatic_dynamic_shapes', 'assume_static_by_default', 'specialize_int',
              'specialize_float', 'disable'})
