"""Lesson "Leaf vs intermediate tensors and .retain_grad()": its three programs, and the graph
with a retained intermediate and hooks drawn (examples/out/retain_grad_and_hooks.svg)."""
import leafgrad as torch
import leafgrad.nn as nn
from leafgrad import viz

from _common import out_dir, parser, save_graph


def main(argv=None):
    p = parser(__doc__)
    p.add_argument('--batch', type=int, default=16)
    args = p.parse_args(argv)
    out = out_dir(args.out)
    import warnings
    warnings.simplefilter('ignore')  # reading .grad of a non-leaf warns, as the lesson says

    # Why .grad is None on intermediates
    a = torch.tensor(2.0, requires_grad=True)   # LEAF
    b = a * 3                                    # INTERMEDIATE
    c = b + 1                                    # INTERMEDIATE
    c.backward()
    print(a.is_leaf, a.grad)   # True tensor(3.)
    print(b.is_leaf, b.grad)   # False None  (intermediate, .grad not stored)
    print(c.is_leaf, c.grad)   # False None

    # retain_grad -- diagnostic-only
    a = torch.tensor(2.0, requires_grad=True)
    b = a * 3
    b.retain_grad()                       # tell autograd to keep b's grad
    c = b + 1
    c.backward()
    print(b.grad)                         # tensor(1.) -- now available

    # register_hook -- modify or log gradients in-flight
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    stats = {}

    def make_hook(name):
        def _hook(grad):
            stats[name] = (grad.abs().mean().item(), grad.std().item())
        _hook.__qualname__ = f'record_stats[{name}]'
        return _hook

    for name, p in model.named_parameters():
        p.register_hook(make_hook(name))
    x = torch.randn(args.batch, 4)
    y = torch.randn(args.batch, 2)
    hidden = model[1](model[0](x))
    hidden.retain_grad()                  # keep one intermediate, to see it in the picture
    loss = nn.functional.mse_loss(model[2](hidden), y)
    names = dict(model.named_parameters(), x=x, hidden=hidden, loss=loss)
    graph = viz.draw(loss, params=names)
    loss.backward()
    for name, (mean, std) in stats.items():
        print(f'{name}: |grad|.mean={mean:.4f}  std={std:.4f}')
    print('hidden.grad is kept:', tuple(hidden.grad.shape))
    save_graph(graph, out, 'retain_grad_and_hooks')
    save_graph(viz.draw(loss, params=names), out, 'retain_grad_and_hooks_after_backward')
    return stats


if __name__ == '__main__':
    main()
