"""nn.utils.prune against torch: the masks each method computes, how pruning rearranges a
module's parameters, buffers and hooks, combined (container) pruning, removal, global pruning,
gradients through a pruned weight, and the errors of bad amounts and dims."""
import importlib

import pytest

from both import same


def prune_of(M):
    return importlib.import_module(M.__name__ + '.nn.utils.prune')


def lenet(M):
    M.manual_seed(0)
    return M.nn.Sequential(M.nn.Conv2d(1, 4, 3), M.nn.ReLU(), M.nn.Flatten(), M.nn.Linear(4 * 6 * 6, 5))


def layout(module):
    return dict(parameters=[n for n, _ in module.named_parameters()], buffers=[n for n, _ in module.named_buffers()],
                hooks=[type(h).__name__ for h in module._forward_pre_hooks.values()])


def test_unstructured_methods_and_the_module_layout():
    def program(M):
        prune = prune_of(M)
        model = lenet(M)
        conv, fc = model[0], model[3]
        prune.l1_unstructured(conv, name='weight', amount=0.3)
        prune.l1_unstructured(conv, name='bias', amount=2)
        M.manual_seed(1)
        prune.random_unstructured(fc, name='weight', amount=0.5)
        out = model(M.randn(2, 1, 8, 8))
        out.sum().backward()
        return dict(conv=layout(conv), fc=layout(fc), state=list(model.state_dict()), weight=conv.weight,
                    mask=conv.weight_mask, bias=conv.bias, fc_mask=fc.weight_mask, grad=conv.weight_orig.grad,
                    out=out, pruned=prune.is_pruned(model), grad_fn=type(conv.weight.grad_fn).__name__)
    same(program)


def test_pruning_twice_builds_a_container_and_remove_makes_it_permanent():
    def program(M):
        prune = prune_of(M)
        conv = lenet(M)[0]
        prune.l1_unstructured(conv, name='weight', amount=5)
        prune.ln_structured(conv, name='weight', amount=0.5, n=2, dim=0)
        hook = [h for h in conv._forward_pre_hooks.values() if h._tensor_name == 'weight'][0]
        before = dict(layout(conv), methods=[type(m).__name__ for m in hook], length=len(hook),
                      weight=conv.weight.detach().clone(), first=type(hook[0]).__name__)
        prune.remove(conv, 'weight')
        return dict(before=before, after=layout(conv), weight=conv.weight, is_param=type(conv.weight).__name__,
                    pruned=prune.is_pruned(conv))
    same(program)


def test_global_structured_and_custom_masks():
    def program(M):
        prune = prune_of(M)
        model = lenet(M)
        prune.global_unstructured([(model[0], 'weight'), (model[3], 'weight')], pruning_method=prune.L1Unstructured,
                                  amount=0.25)
        zeros = [int((model[i].weight == 0).sum()) for i in (0, 3)]
        prune.custom_from_mask(model[3], 'bias', mask=M.tensor([1., 0., 1., 0., 1.]))
        M.manual_seed(2)
        prune.random_structured(model[0], 'weight', amount=1, dim=-1)
        prune.identity(model[0], 'bias')
        return dict(zeros=zeros, bias=model[3].bias, weight=model[0].weight, conv=layout(model[0]),
                    fc=layout(model[3]), prune_of_tensor=prune.L1Unstructured(2).prune(M.tensor([3., -1., 2., .5])))
    same(program)


def test_a_custom_pruning_method():
    def program(M):
        prune = prune_of(M)

        class EveryOther(prune.BasePruningMethod):
            PRUNING_TYPE = 'unstructured'

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        fc = lenet(M)[3]
        EveryOther.apply(fc, 'bias')
        prune.l1_unstructured(fc, 'bias', amount=1)
        return dict(mask=fc.bias_mask, bias=fc.bias, fc=layout(fc))
    same(program)


@pytest.mark.parametrize('call', [
    lambda prune, m: prune.l1_unstructured(m, 'weight', amount=1.5),
    lambda prune, m: prune.l1_unstructured(m, 'weight', amount=-1),
    lambda prune, m: prune.l1_unstructured(m, 'weight', amount='a'),
    lambda prune, m: prune.l1_unstructured(m, 'weight', amount=1000),
    lambda prune, m: prune.ln_structured(m, 'bias', amount=1, n=2, dim=0),
    lambda prune, m: prune.ln_structured(m, 'weight', amount=1, n=2, dim=4),
    lambda prune, m: prune.remove(m, 'weight'),
    lambda prune, m: prune.global_unstructured([(m, 'weight')], pruning_method=prune.LnStructured, amount=1, n=1),
    lambda prune, m: prune.l1_unstructured(m, 'weight', amount=1, importance_scores=m.bias),
])
def test_errors(call):
    def program(M):
        fc = lenet(M)[3]
        call(prune_of(M), fc)
        return layout(fc)
    same(program)
