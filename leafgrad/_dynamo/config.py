"""torch._dynamo.config: PyTorch's settings, with their defaults. leafgrad.compile reads
``recompile_limit`` (``cache_size_limit`` is its old name) and the switches of dynamic shapes;
setting another warns once that it has no effect here."""
import sys

from ._config_module import install
from ._torch_configs import DYNAMO

install(sys.modules[__name__], DYNAMO, read={'recompile_limit', 'automatic_dynamic_shapes', 'assume_static_by_default',
                                           'specialize_int', 'specialize_float'})
