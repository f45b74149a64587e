"""Programs of torch.multiprocessing run under either library, for tests/test_multiprocessing.py:
``python tests/mp_cases.py torch|leafgrad CASE`` prints what the program observed, one line
per observation (the test compares the two libraries' lines)."""
import sys

if sys.argv[1:2] == ['leafgrad']:
    import leafgrad as torch
    import leafgrad.multiprocessing as mp
else:
    import torch
    import torch.multiprocessing as mp


def _values(t):
    return [round(float(v), 4) for v in t.detach().reshape(-1).tolist()]


def hogwild_worker(rank, model, results):
    torch.manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.ones(3, 2)).pow(2).mean().backward()
        optimizer.step()
    results.put((rank, model.weight.is_shared(), model.weight.requires_grad, type(model.weight).__name__))


def hogwild(method):
    """Two processes train one shared model in turn (each waits for the other: the result is
    deterministic); the parent sees both's updates."""
    mp.set_start_method(method, force=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    print('returns itself', model.share_memory() is model)
    print('shared', model.weight.is_shared(), model.bias.is_shared())
    results = mp.SimpleQueue()
    for rank in range(2):
        p = mp.Process(target=hogwild_worker, args=(rank, model, results))
        p.start()
        p.join()
        print('worker', results.get(), p.exitcode)
    print('weight', _values(model.weight), 'bias', _values(model.bias))


def writer(t, done):
    t.add_(1)
    done.put(_values(t))


def sent_leaf(t, done):
    done.put((t.requires_grad, t.is_leaf, t.grad is None, _values(t)))


def through_a_queue(method):
    """A shared tensor sent to a child is the same memory; an unshared one is a copy; a view of
    a shared tensor writes into its base."""
    ctx = mp.get_context(method)
    shared = torch.arange(6.0).reshape(2, 3).share_memory_()
    plain = torch.arange(6.0).reshape(2, 3)
    view = shared[:, 1]
    for name, t in (('shared', shared), ('plain', plain), ('view', view)):
        done = ctx.SimpleQueue()
        p = ctx.Process(target=writer, args=(t, done))
        p.start()
        p.join()
        print(name, 'child saw', done.get(), 'parent has', _values(t), 'shared', t.is_shared())
    print('base after the view', _values(shared))
    try:
        ctx.SimpleQueue().put(torch.ones(2, requires_grad=True) * 2)
    except RuntimeError as e:
        print('non-leaf refused:', e)
    leaf = torch.ones(2, requires_grad=True)
    done = ctx.SimpleQueue()
    p = ctx.Process(target=sent_leaf, args=(leaf, done))
    p.start()
    p.join()
    print('leaf', done.get())


def views_move_with_their_base():
    base = torch.zeros(4, 3)
    view = base[1:3].t()
    other = base[0]
    print('before', base.is_shared(), view.is_shared(), other.is_shared())
    view.share_memory_()
    print('after', base.is_shared(), view.is_shared(), other.is_shared())
    other.fill_(7)
    view[0, 1] = 5
    print('base', _values(base), 'view', _values(view), 'version', base._version)
    for dtype in (torch.int64, torch.bool, torch.float64):
        t = torch.zeros(3, dtype=dtype)
        print(dtype, t.share_memory_().is_shared(), t.dtype, _values(t))
    empty = torch.zeros(0).share_memory_()
    print('empty', empty.is_shared(), tuple(empty.shape))
    t = torch.ones(2, requires_grad=True)
    t.share_memory_()
    (t * 3).sum().backward()
    print('grad', _values(t.grad), t.is_leaf, t.is_shared(), t.grad.is_shared())


def fails(i, how):
    if i == how[0]:
        if how[1] == 'raise':
            raise ValueError(f'bad {i}')
        sys.exit(3)


def spawned(i, q):
    q.put(i * 10)


def spawning():
    try:
        mp.spawn(fails, args=((1, 'raise'),), nprocs=2)
    except mp.ProcessRaisedException as e:
        text = str(e)
        print('raised', e.error_index, text.startswith('\n\n-- Process 1 terminated with the following error:\n'),
              text.rstrip().splitlines()[-1])
    try:
        mp.spawn(fails, args=((0, 'exit'),), nprocs=2)
    except mp.ProcessExitedException as e:
        print('exited', e.error_index, e.exit_code, str(e))
    q = mp.get_context('spawn').SimpleQueue()
    print('joined', mp.spawn(spawned, args=(q,), nprocs=2), sorted([q.get(), q.get()]))
    context = mp.spawn(spawned, args=(q,), nprocs=2, join=False)
    while not context.join():
        pass
    print('context', type(context).__name__, len(context.pids()), context.join(), sorted([q.get(), q.get()]))
    print('strategies', mp.get_sharing_strategy(), 'file_descriptor' in mp.get_all_sharing_strategies())
    try:
        mp.set_sharing_strategy('no such strategy')
    except AssertionError:
        print('unknown strategy refused')


if __name__ == '__main__':
    globals()[sys.argv[2]](*sys.argv[3:])
