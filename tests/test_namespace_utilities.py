"""Small utilities of PyTorch's namespace that programs call, against torch: the SymInt-aware
number helpers (torch.sym_*), torch.GradScaler, is_storage, get_device_module,
autograd.set_multithreading_enabled, func.replace_all_batch_norm_modules_ and
nn.utils.convert_conv2d/3d_weight_memory_format."""
import math

import pytest

from both import same


def _calls(M, name, args_list):
    out = []
    fn = getattr(M, name)
    for args in args_list:
        try:
            value = fn(*args)
            out.append((type(value).__name__, value))
        except (AssertionError, ValueError, TypeError) as e:
            out.append((type(e).__name__, str(e).replace("<class 'numpy.", '').split(',')[0]))
    return out


SYM = {
    'sym_int': [(3.7,), (-3.7,), ('3',), (True,)],
    'sym_float': [(3,), ('2.5',)],
    'sym_max': [(2, 3.0), (3, 2.0), (2, 3), (True, 0), ('a', 1)],
    'sym_min': [(2, 3.0), (3, 2), (1.5, 1)],
    'sym_not': [(True,), (0,)],
    'sym_ite': [(True, 1, 2), (False, 1, 2), (1, 1, 2), (True, 1, 2.0)],
    'sym_sum': [([1, 2, 3],), (1, 2.5), ([],)],
    'sym_sqrt': [(4,), (2.0,), (-1,)],
    'sym_fresh_size': [(3,), (2.5,)],
}


@pytest.mark.parametrize('name', SYM)
def test_sym_helpers_on_numbers(name):
    same(lambda M: _calls(M, name, SYM[name]))


def test_grad_scaler_is_amp_s_and_storages_and_device_modules():
    def program(M):
        out = [M.GradScaler is M.amp.GradScaler, M.is_storage(M.tensor([1.]).untyped_storage()),
               M.is_storage(M.tensor([1.])), M.is_storage([1, 2]),
               M.get_device_module().__name__, M.get_device_module('cpu').__name__,
               M.get_device_module(M.device('cpu')).__name__]
        for bad in (3, 'meta'):
            try:
                M.get_device_module(bad)
            except RuntimeError as e:
                out.append(str(e))
        return [x.replace(M.__name__, 'torch') if isinstance(x, str) else x for x in out]
    same(program)


def test_set_multithreading_enabled():
    def program(M):
        flag = M.autograd.set_multithreading_enabled
        out = [flag.__module__.replace(M.__name__, 'torch')]
        with flag(False):
            x = M.ones(3, requires_grad=True)
            (x * 2).sum().backward()
            out.append(x.grad)
        try:
            flag('no')
        except TypeError as e:
            out.append(str(e))

        @flag(False)
        def f():
            return M.ones(2) + 1
        out.append(f())
        return out
    same(program)


def test_replace_all_batch_norm_modules_():
    def program(M):
        nn = M.nn
        model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(4)),
                              nn.BatchNorm2d(3, track_running_stats=False))
        assert M.func.replace_all_batch_norm_modules_(model) is model
        x = M.randn(2, 2, 4, 4)
        return ([(m.running_mean, m.running_var, m.num_batches_tracked, m.track_running_stats)
                 for m in model.modules() if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d))],
                model[:2](x).shape, sorted(model.state_dict()))
    same(program)


def test_convert_conv_weight_memory_format():
    def program(M):
        nn = M.nn
        model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(), nn.Sequential(nn.ConvTranspose2d(3, 2, 2)),
                              nn.Conv3d(2, 2, 1), nn.Linear(4, 4))
        weights = [p for p in model.parameters()]
        assert nn.utils.convert_conv2d_weight_memory_format(model, M.channels_last) is model
        after2 = [(p.stride(), p.is_leaf, p.requires_grad) for p in model.parameters()]
        nn.utils.convert_conv3d_weight_memory_format(model, M.channels_last_3d)
        after3 = [p.stride() for p in model.parameters()]
        return after2, after3, all(a is b for a, b in zip(weights, model.parameters())), model[0](M.ones(1, 2, 4, 4)).shape
    same(program)
