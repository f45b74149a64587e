"""default_collate: a list of samples -> one batch, with PyTorch's rules (tensors and arrays are
stacked, numbers become tensors, tuples and lists are transposed, dicts collated per key)."""
import collections.abc

import numpy as np

from ...ops.rearrange import stack
from ...tensor import Tensor


def default_collate(batch):
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch)  # as PyTorch: recorded when a sample requires grad, its size errors
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in 'OUS':
            raise TypeError(f'default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; '
                            f'found {elem.dtype}')
        return Tensor._wrap(np.stack(batch))
    if isinstance(elem, np.generic):
        return Tensor._wrap(np.asarray(batch))
    if isinstance(elem, bool):
        return Tensor._wrap(np.asarray(batch, dtype=np.bool_))
    if isinstance(elem, float):
        return Tensor._wrap(np.asarray(batch, dtype=np.float64))
    if isinstance(elem, int):
        return Tensor._wrap(np.asarray(batch, dtype=np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem}) \
            if not isinstance(elem, dict) or type(elem) is dict else {key: default_collate([d[key] for d in batch])
                                                                      for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, '_fields'):  # namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError('each element in list of batch should be of equal size')
        transposed = list(zip(*batch))
        # PyTorch returns a list for tuple samples too
        return [default_collate(samples) for samples in transposed]
    raise TypeError('default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found '
                    f'{type(elem)}')


def default_convert(data):
    if isinstance(data, np.ndarray) and data.dtype.kind not in 'OUS':
        return Tensor._wrap(data)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, '_fields'):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data


