"""Train a small network on scikit-learn's bundled 8x8 digits with leafgrad, written exactly as
a PyTorch program would be (``import leafgrad as torch``).

It shows a progress bar (tqdm), prints the test accuracy, saves a checkpoint (leafgrad.save:
safetensors + JSON, no pickle), reloads it into a fresh model and checks that the predictions
are identical, and draws the loss curve to examples/out/digits_loss.png.

    python examples/train_digits.py                # the full run (well under a minute)
    python examples/train_digits.py --epochs 3     # a quick run (the test suite's reduced mode)
    LEAFGRAD_DIGITS_EPOCHS=3 python examples/train_digits.py

The default network is an MLP (98% test accuracy in a few seconds, as PyTorch gets with this
script: the seeded split, shuffle and weights are its numbers); ``--model cnn``
trains a small CNN (as accurate, slower on NumPy).
"""
import argparse
import os
import sys
import time

import numpy as np

import leafgrad as torch
import leafgrad.nn as nn
from leafgrad.utils.data import DataLoader, TensorDataset, random_split

HERE = os.path.dirname(os.path.abspath(__file__))


def make_model(kind):
    if kind == 'cnn':
        return nn.Sequential(
            nn.Unflatten(1, (1, 8, 8)),
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
            nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def load_digits_dataset(seed):
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target, dtype=torch.int64)
    train, test = random_split(TensorDataset(x, y), [0.8, 0.2], generator=torch.Generator().manual_seed(seed))
    return train, test


def evaluate(model, loader):
    model.eval()
    correct, total, logits = 0, 0, []
    with torch.no_grad():
        for xb, yb in loader:
            out = model(xb)
            logits.append(out.numpy())
            correct += int((out.argmax(1) == yb).sum())
            total += yb.shape[0]
    return correct / total, np.concatenate(logits)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--epochs', type=int, default=int(os.environ.get('LEAFGRAD_DIGITS_EPOCHS', 20)))
    parser.add_argument('--model', choices=['mlp', 'cnn'], default='mlp')
    parser.add_argument('--out', default=os.path.join(HERE, 'out'))
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--min-accuracy', type=float, default=0.97)
    parser.add_argument('--no-progress', action='store_true')
    args = parser.parse_args(argv)

    kind = args.model
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    start = time.time()

    train_set, test_set = load_digits_dataset(args.seed)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True,
                              generator=torch.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=256)

    model = make_model(kind)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, epochs=args.epochs,
                                                    steps_per_epoch=len(train_loader))

    from tqdm import tqdm
    losses = []
    bar = tqdm(range(args.epochs), desc=f'digits ({kind})', unit='epoch', disable=args.no_progress,
               file=sys.stdout)
    for _ in bar:
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        bar.set_postfix(loss=f'{np.mean(losses[-len(train_loader):]):.4f}')

    accuracy, logits = evaluate(model, test_loader)
    print(f'test accuracy: {accuracy:.2%} ({len(test_set)} images, {kind}, {args.epochs} epochs, '
          f'{time.time() - start:.1f} s)')

    # checkpoint: save, reload into a fresh model, same predictions
    path = os.path.join(args.out, f'digits_{kind}.lgt')
    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'epochs': args.epochs,
                'kind': kind}, path)
    checkpoint = torch.load(path)
    restored = make_model(checkpoint['kind'])
    restored.load_state_dict(checkpoint['model'])
    _, restored_logits = evaluate(restored, test_loader)
    identical = np.array_equal(logits, restored_logits)
    print(f'checkpoint {os.path.relpath(path)}: reloaded predictions identical: {identical}')

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(losses, lw=0.8, label='batch loss')
    per_epoch = len(train_loader)
    ax.plot(np.arange(per_epoch - 1, len(losses), per_epoch),
            [np.mean(losses[i:i + per_epoch]) for i in range(0, len(losses), per_epoch)], 'o-', label='epoch mean')
    ax.set_xlabel('step')
    ax.set_ylabel('cross-entropy')
    ax.set_yscale('log')
    ax.set_title(f'leafgrad on digits ({kind}): {accuracy:.1%} test accuracy')
    ax.legend()
    fig.tight_layout()
    png = os.path.join(args.out, 'digits_loss.png')
    fig.savefig(png, dpi=100)
    plt.close(fig)
    print(f'loss curve: {os.path.relpath(png)}')

    if not identical:
        print('error: the reloaded model predicts differently', file=sys.stderr)
        return 1
    if accuracy < args.min_accuracy:
        print(f'error: accuracy {accuracy:.2%} is below {args.min_accuracy:.0%}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
