"""When inputs require gradients: FGSM adversarial examples and a saliency map.

A small MLP is trained briefly on scikit-learn's 8x8 digits (random data when scikit-learn is
missing). Then the *input* asks for a gradient:

* FGSM (Goodfellow et al., 2015): x_adv = x + eps * sign(d loss / d x) -- accuracy drops;
* saliency (Simonyan et al., 2014): |d score / d x|, which pixels the predicted class is most
  sensitive to -- drawn to examples/out/saliency.png.
"""
import numpy as np

import leafgrad as torch
import leafgrad.nn as nn

from _common import out_dir, parser, pyplot


def load_data(n, seed=0):
    """(x float32 [n, 64] in [0, 1], y int64 [n], source name)."""
    import importlib.util
    import os
    spec = importlib.util.find_spec('sklearn')
    if spec is None:
        print('(scikit-learn is not installed: using random data; pip install scikit-learn for digits)')
        rng = np.random.default_rng(seed)
        x = rng.random((n, 64)).astype(np.float32)
        y = (x[:, :8].mean(1) > 0.5).astype(np.int64)   # a learnable rule: the first row's brightness
        return x, y, 'random'
    # The digits ship inside scikit-learn as a small CSV; reading it directly skips the
    # seconds that importing scikit-learn takes (load_digits reads the same file).
    path = os.path.join(os.path.dirname(spec.origin), 'datasets', 'data', 'digits.csv.gz')
    if os.path.exists(path):
        data = np.loadtxt(path, delimiter=',', max_rows=n)
        x, y = data[:, :-1], data[:, -1]
    else:
        from sklearn.datasets import load_digits
        digits = load_digits()
        x, y = digits.data[:n], digits.target[:n]
    return (x / 16.0).astype(np.float32), y.astype(np.int64), 'digits'


def cross_entropy(logits, y):
    """Mean cross-entropy of integer labels, written with basic ops (log-softmax shifted by the
    row maximum, a constant for the gradient)."""
    f = getattr(nn.functional, 'cross_entropy', None)
    if f is not None:
        return f(logits, y)
    shift = torch.tensor(logits.detach().numpy().max(1, keepdims=True))
    z = logits - shift
    logp = z - z.exp().sum(1, keepdim=True).log()
    onehot = torch.tensor(np.eye(logits.shape[1], dtype=np.float32)[y.numpy()])
    return -(logp * onehot).sum(1).mean()


def accuracy(model, x, y):
    with torch.no_grad():
        return float((model(x).numpy().argmax(1) == y.numpy()).mean())


def train(x, y, classes, epochs, hidden=32, lr=0.5, seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(x.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, classes))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(epochs):
        for i in range(0, x.shape[0], 64):
            opt.zero_grad()
            loss = cross_entropy(model(x[i:i + 64]), y[i:i + 64])
            loss.backward()
            opt.step()
    return model


def fgsm(model, x, y, eps):
    """x + eps * sign(grad of the loss with respect to x), clipped to the pixel range."""
    model.requires_grad_(False)                   # only the input asks for a gradient
    x = x.detach().clone().requires_grad_(True)
    cross_entropy(model(x), y).backward()
    model.requires_grad_(True)
    adv = np.clip(x.detach().numpy() + eps * x.grad.sign().numpy(), 0.0, 1.0)
    return torch.tensor(adv), x.grad


def saliency(model, x):
    """|d (score of the predicted class) / d x| for each input row."""
    x = x.detach().clone().requires_grad_(True)
    scores = model(x)
    pred = scores.detach().numpy().argmax(1)
    mask = torch.tensor(np.eye(scores.shape[1], dtype=np.float32)[pred])
    (scores * mask).sum().backward()              # each row's own predicted score
    return x.grad.abs().numpy(), pred


def main(argv=None):
    p = parser(__doc__)
    p.add_argument('--n', type=int, default=1797, help='number of examples')
    p.add_argument('--epochs', type=int, default=20)
    p.add_argument('--eps', type=float, default=0.1)
    args = p.parse_args(argv)
    out = out_dir(args.out)
    xs, ys, source = load_data(args.n)
    x, y = torch.tensor(xs), torch.tensor(ys)
    classes = int(ys.max()) + 1
    model = train(x, y, classes, args.epochs)
    clean = accuracy(model, x, y)
    x_adv, _ = fgsm(model, x, y, args.eps)
    adv = accuracy(model, x_adv, y)
    print(f'data: {source}, {len(ys)} examples')
    print(f'accuracy on clean inputs: {clean:.3f}')
    print(f'accuracy after FGSM (eps={args.eps}): {adv:.3f}')
    sal, pred = saliency(model, x[:8])
    print('saliency map shape:', sal.shape)
    plt = pyplot()
    if plt is not None:
        import os
        side = int(round(np.sqrt(xs.shape[1])))
        fig, axes = plt.subplots(2, 8, figsize=(10, 2.8))
        for i in range(8):
            axes[0, i].imshow(xs[i].reshape(side, side), cmap='gray_r')
            axes[0, i].set_title(f'pred {pred[i]}', fontsize=9)
            axes[1, i].imshow(sal[i].reshape(side, side), cmap='hot')
            for ax in axes[:, i]:
                ax.axis('off')
        axes[0, 0].text(-4, side / 2, 'input', rotation=90, va='center')
        axes[1, 0].text(-4, side / 2, 'saliency', rotation=90, va='center')
        fig.suptitle('Saliency: |d score / d input| of the predicted class', fontsize=10)
        fig.tight_layout()
        path = os.path.join(out, 'saliency.png')
        fig.savefig(path, dpi=100)
        plt.close(fig)
        print('saliency picture:', path)
    return dict(clean=clean, adversarial=adv, saliency=sal)


if __name__ == '__main__':
    main()
