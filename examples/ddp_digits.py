"""Train on scikit-learn's digits with several processes: DistributedDataParallel on MPI,
written as a PyTorch DDP program would be (``import leafgrad as torch``).

    mpiexec -n 4 python examples/ddp_digits.py                  # 4 processes on this machine
    mpiexec -n 8 --hostfile hosts python examples/ddp_digits.py  # 8 processes across machines
    python examples/ddp_digits.py                               # a world of one process

Every rank builds the same model; DDP broadcasts rank 0's parameters, each rank trains on its
shard of every batch (DistributedSampler: the global batch of 32 split across the ranks), and
DDP averages the gradients while backward runs, so that the replicas stay identical. The test
set is shared out too, and the correct answers summed with all_reduce. Rank 0 prints.

``--crash-rank R`` makes rank R raise in the second epoch, to see what a failure does: the
traceback (lines prefixed ``[rankR]:``), then MPI_Abort ends every rank, within seconds.
"""
import argparse
import datetime
import os
import sys
import time

import numpy as np

import leafgrad as torch
import leafgrad.distributed as dist
import leafgrad.nn as nn
from leafgrad.nn.parallel import DistributedDataParallel as DDP
from leafgrad.utils.data import DataLoader, DistributedSampler, Subset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_digits import load_digits_dataset, make_model  # noqa: E402  (the same data and model)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--model', choices=['mlp', 'cnn'], default='mlp')
    parser.add_argument('--batch-size', type=int, default=32, help='the global batch, split across the ranks')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--timeout', type=float, default=60, help='seconds a rank waits for the others')
    parser.add_argument('--min-accuracy', type=float, default=0.97)
    parser.add_argument('--crash-rank', type=int, default=None, help='this rank raises in the second epoch')
    args = parser.parse_args(argv)

    dist.init_process_group('gloo', timeout=datetime.timedelta(seconds=args.timeout))  # gloo is served by MPI
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f'--batch-size {args.batch_size} must be a multiple of the {world} ranks')

    torch.manual_seed(args.seed + rank)  # different on every rank: DDP makes them rank 0's
    train_set, test_set = load_digits_dataset(args.seed)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler)

    model = DDP(make_model(args.model))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, epochs=args.epochs,
                                                    steps_per_epoch=len(loader))
    if rank == 0:
        print(f'{world} rank(s), {len(loader)} steps of {args.batch_size // world} examples per rank and epoch')

    start = time.time()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle, the same on every rank
        model.train()
        epoch_start = time.time()
        total = torch.zeros(2)  # loss sum, batches
        for xb, yb in loader:
            if epoch == 1 and rank == args.crash_rank:
                raise RuntimeError(f'rank {rank} crashes on purpose (--crash-rank)')
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()  # the gradients are averaged across the ranks here
            optimizer.step()
            scheduler.step()
            total += torch.tensor([loss.item(), 1.0])
        dist.all_reduce(total)
        if rank == 0:
            print(f'epoch {epoch + 1:2d}: loss {total[0].item() / total[1].item():.4f} '
                  f'({time.time() - epoch_start:.2f} s)', flush=True)
    train_seconds = time.time() - start

    # every rank evaluates its share of the test set; the counts are summed
    model.eval()
    shard = Subset(test_set, list(range(rank, len(test_set), world)))
    counts = torch.zeros(2, dtype=torch.int64)  # correct, seen
    with torch.no_grad():
        for xb, yb in DataLoader(shard, batch_size=256):
            counts += torch.tensor([int((model(xb).argmax(1) == yb).sum()), len(yb)])
    dist.all_reduce(counts)
    accuracy = counts[0].item() / counts[1].item()

    # the replicas are identical, bit for bit
    flat = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    everyone = [None] * world
    dist.all_gather_object(everyone, flat)
    identical = all(np.array_equal(flat, other) for other in everyone)
    if rank == 0:
        print(f'test accuracy: {accuracy:.2%} ({counts[1].item()} images, {args.model}, {args.epochs} epochs, '
              f'{world} ranks, {train_seconds:.1f} s training, {train_seconds / args.epochs:.2f} s per epoch)')
        print(f'replicas identical on all ranks: {identical}')
    dist.destroy_process_group()
    if not identical or accuracy < args.min_accuracy:
        print(f'error: rank {rank}: accuracy {accuracy:.2%}, replicas identical: {identical}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
