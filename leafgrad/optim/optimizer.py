"""Optimizer: parameter groups, per-parameter state, in-place updates under no_grad."""
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor


class _RequiredParameter:
    def __repr__(self):
        return '<required parameter>'


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError('params argument given to the optimizer should be an iterable of Tensors or dicts, '
                            f'but got {type(params).__name__}')
        groups = list(params)
        if len(groups) == 0:
            raise ValueError('optimizer got an empty parameter list')
        if not isinstance(groups[0], dict):
            groups = [{'params': groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        params = param_group['params']
        param_group['params'] = [params] if isinstance(params, Tensor) else list(params)
        for p in param_group['params']:
            if not isinstance(p, Tensor):
                raise TypeError('optimizer can only optimize Tensors, but one of the params is ' + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in param_group:
                raise ValueError(f'parameter group didn\'t specify a value of required optimization parameter {k}')
            param_group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g['params']}
        if any(id(p) in seen for p in param_group['params']):
            raise ValueError('some parameters appear in more than one parameter group')
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group['params']:
                if p._grad is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        p._grad.detach_()
                        p._grad.zero_()

    def step(self, closure=None):
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError

    def __repr__(self):
        s = self.__class__.__name__ + ' ('
        for i, group in enumerate(self.param_groups):
            s += '\nParameter Group {}'.format(i)
            for key in sorted(group.keys()):
                if key != 'params':
                    s += '\n    {}: {}'.format(key, group[key])
        return s + '\n)'

    def state_dict(self):
        index = {}
        packed_groups = []
        start = 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != 'params'}
            ids = list(range(start, start + len(g['params'])))
            for i, p in zip(ids, g['params']):
                index[id(p)] = i
            packed['params'] = ids
            start += len(ids)
            packed_groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {'state': state, 'param_groups': packed_groups}

    def load_state_dict(self, state_dict):
        groups = state_dict['param_groups']
        if len(groups) != len(self.param_groups):
            raise ValueError('loaded state dict has a different number of parameter groups')
        params = [p for g in self.param_groups for p in g['params']]
        by_index = {}
        for saved, g in zip(groups, self.param_groups):
            if len(saved['params']) != len(g['params']):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            for i, p in zip(saved['params'], g['params']):
                by_index[i] = p
            for k, v in saved.items():
                if k != 'params':
                    g[k] = v
        self.state = {}
        for i, s in state_dict['state'].items():
            p = by_index[int(i)]
            self.state[p] = {k: (v.clone() if isinstance(v, Tensor) else v) for k, v in s.items()}
        del params
