"""Lesson "requires_grad and backward": linear regression with a hand-written update loop.

The update runs in place under no_grad, so w and b stay leaves. The end shows the common
mistake -- ``w = w - lr * w.grad`` -- and what leafgrad.explain says about it.
"""
import leafgrad as torch
from leafgrad import viz

from _common import out_dir, parser, save_graph


def main(argv=None):
    p = parser(__doc__)
    p.add_argument('--epochs', type=int, default=1000)
    args = p.parse_args(argv)
    out = out_dir(args.out)
    torch.manual_seed(0)

    # Training data
    x = torch.linspace(0, 10, 100)
    y_true = 3 * x + 2 + torch.randn(100) * 0.5

    # Model parameters
    w = torch.randn(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)

    learning_rate = 0.01
    for epoch in range(args.epochs):
        # Forward pass
        y_pred = w * x + b
        loss = (y_pred - y_true).pow(2).mean()
        if epoch == 0:
            save_graph(viz.draw(loss, params=dict(w=w, b=b, x=x, y_true=y_true, loss=loss)), out,
                       'linear_regression')

        # Backward pass
        loss.backward()

        # Update parameters (no autograd tracking)
        with torch.no_grad():
            w -= learning_rate * w.grad
            b -= learning_rate * b.grad

        # Zero gradients
        w.grad.zero_()
        b.grad.zero_()

    print(f'Learned w: {w.item():.3f}, b: {b.item():.3f}, loss: {loss.item():.4f}')

    # The mistake: an update written without no_grad makes w an op result.
    loss = (w * x + b - y_true).pow(2).mean()
    loss.backward()
    w = w - learning_rate * w.grad
    print('after `w = w - lr * w.grad`: w.is_leaf =', w.is_leaf)
    print(torch.explain(w, dict(w=w)))
    return w, b


if __name__ == '__main__':
    main()
