"""leafgrad.nn.parallel: DistributedDataParallel (one process per rank, on MPI) and
DataParallel (PyTorch's single-device behaviour: the module itself)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ['DataParallel', 'DistributedDataParallel', 'data_parallel']
