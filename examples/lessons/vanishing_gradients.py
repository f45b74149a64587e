"""The exercise of "Leaf vs intermediate tensors": vanishing gradients, seen through hooks.

A 3-layer MLP; a hook on every weight records the mean and std of its gradient for one batch of
random data. Run once with ReLU and once with Sigmoid: under Sigmoid the gradients shrink toward
zero in the earlier layers (each sigmoid multiplies the gradient by at most 0.25). The bar chart
goes to examples/out/vanishing_gradients.png.
"""
import leafgrad as torch
import leafgrad.nn as nn

from _common import out_dir, parser, pyplot


def build(activation, sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


def gradient_stats(model, x, y, lib=torch):
    """{layer number: (mean |grad|, std)} of each Linear weight after one backward.
    (``lib`` is the library: the tests pass real PyTorch to check leafgrad's numbers.)"""
    stats = {}
    linears = [m for m in model if isinstance(m, lib.nn.Linear)]
    for i, layer in enumerate(linears, 1):
        def hook(grad, i=i):
            stats[i] = (grad.abs().mean().item(), grad.std().item())
        layer.weight.register_hook(hook)
    loss = lib.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return dict(sorted(stats.items()))


def main(argv=None):
    p = parser(__doc__)
    p.add_argument('--sizes', default='32,64,64,1', help='layer widths: 3 Linear layers by default')
    p.add_argument('--batch', type=int, default=64)
    args = p.parse_args(argv)
    out = out_dir(args.out)
    sizes = [int(s) for s in args.sizes.split(',')]
    results = {}
    for name, act in (('ReLU', nn.ReLU), ('Sigmoid', nn.Sigmoid)):
        torch.manual_seed(0)
        model = build(act, sizes)
        x, y = torch.randn(args.batch, sizes[0]), torch.randn(args.batch, sizes[-1])
        results[name] = stats = gradient_stats(model, x, y)
        print(f'{name}:')
        for layer, (mean, std) in stats.items():
            print(f'  layer {layer} weight: |grad|.mean={mean:.2e}  std={std:.2e}')
        first, last = stats[1][0], stats[len(stats)][0]
        print(f'  first/last layer |grad| ratio: {first / last:.3f}')
    plt = pyplot()
    if plt is not None:
        import os
        layers = list(results['ReLU'])
        width = 0.38
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for k, (name, color) in enumerate((('ReLU', '#4c6ef5'), ('Sigmoid', '#f76707'))):
            means = [results[name][layer][0] for layer in layers]
            ax.bar([layer + (k - 0.5) * width for layer in layers], means, width, label=name, color=color)
        ax.set_yscale('log')
        ax.set_xticks(layers)
        ax.set_xticklabels([f'layer {layer}' + (' (first)' if layer == 1 else '') for layer in layers])
        ax.set_ylabel('mean |gradient| of the weight')
        ax.set_title('Vanishing gradients: earlier layers under Sigmoid')
        ax.legend()
        fig.tight_layout()
        path = os.path.join(out, 'vanishing_gradients.png')
        fig.savefig(path, dpi=100)
        plt.close(fig)
        print('bar chart:', path)
    return results


if __name__ == '__main__':
    main()
