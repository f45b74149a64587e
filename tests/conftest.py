import os
import warnings

import numpy as np
import pytest

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # users may run without the oracle; CI may not
    if os.environ.get('LEAFGRAD_REQUIRE_ORACLE'):
        raise
    torch = None


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    import leafgrad
    leafgrad.manual_seed(0)  # (unseeded, leafgrad's stream starts from the OS's randomness, as torch's)
    if torch is not None:
        torch.manual_seed(0)
    yield
