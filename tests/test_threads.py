"""Autograd under threads, against torch: backward calls in several threads into shared leaves
(accumulation serialised per leaf, no update lost), independent graphs side by side, grad mode
and inference mode per thread, anomaly mode for the whole process, hooks, retain_grad and
autograd.grad from several threads, saved-tensor hooks disabled per thread."""
import sys
import threading

import numpy as np
import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402

MODULES = pytest.mark.parametrize('m', [lg, torch], ids=['leafgrad', 'torch'])


def run_threads(n, target, *args):
    """Run ``target(i, *args)`` in ``n`` threads started together; re-raise the first error."""
    errors = []
    start = threading.Barrier(n)

    def body(i):
        try:
            start.wait()
            target(i, *args)
        except BaseException as e:  # noqa: BLE001  (reported in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.fixture
def fast_switching():
    """Threads switch as often as the interpreter allows, so that races show up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@MODULES
def test_backward_into_shared_leaf_loses_no_update(m):
    # NumPy releases the GIL inside a large addition: an unguarded `.grad += g` from two
    # threads loses updates (1158-1198 instead of 1200 in this very loop, before the lock).
    n_threads, steps = 4, 150
    w = m.ones(200_000, requires_grad=True)

    def work(i):
        for _ in range(steps):
            (w * 2).sum().backward()

    run_threads(n_threads, work)
    g = w.grad.numpy()
    assert g.min() == g.max() == 2 * n_threads * steps


@MODULES
def test_first_write_of_grad_races_with_second(m, fast_switching):
    # Many fresh leaves, each receiving its first gradient from several threads at once.
    leaves = [m.zeros(50_000, requires_grad=True) for _ in range(40)]
    together = threading.Barrier(3)

    def work(i):
        for w in leaves:
            y = (w + 1.).sum()
            together.wait(10)
            y.backward()

    run_threads(3, work)
    for w in leaves:
        g = w.grad.numpy()
        assert g.min() == g.max() == 3


@MODULES
def test_graphs_recorded_at_once_share_the_leaf_accumulator(m, fast_switching):
    # Threads recording ops on the same fresh leaves at once: each leaf must get one
    # AccumulateGrad (whose lock serialises its accumulation), not one per thread.
    def work(i, leaves, seen):
        keep = []
        for w in leaves:
            y = w * 2
            keep.append(y)  # the graph stays, and with it the leaf's accumulator
            seen[i].append(y.grad_fn.next_functions[0][0])

    for _ in range(8):
        seen = [[] for _ in range(3)]
        run_threads(3, work, [m.ones(3, requires_grad=True) for _ in range(500)], seen)
        assert all(a is b is c for a, b, c in zip(*seen))


def _mlp_grads(m, seed):
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.standard_normal((32, 20)))
    w1 = m.tensor(rng.standard_normal((20, 30)) * 0.2, requires_grad=True)
    w2 = m.tensor(rng.standard_normal((30, 5)) * 0.2, requires_grad=True)
    for _ in range(5):
        h = (x @ w1).tanh() * 1.0
        v = h[:, 1:]                 # a view, changed in place
        v.mul_(1.5)
        loss = ((h @ w2) ** 2).mean()
        loss.backward()
    return w1.grad.numpy().copy(), w2.grad.numpy().copy()


@MODULES
def test_independent_graphs_in_threads_match_serial(m):
    serial = [_mlp_grads(m, seed) for seed in range(4)]
    threaded = [None] * 4

    def work(i):
        threaded[i] = _mlp_grads(m, i)

    run_threads(4, work)
    for (a1, a2), (b1, b2) in zip(serial, threaded):
        np.testing.assert_array_equal(a1, b1)
        np.testing.assert_array_equal(a2, b2)


def _modes_seen_by_a_new_thread(m):
    seen = {}

    def probe(key):
        seen[key] = (m.is_grad_enabled(), m.is_inference_mode_enabled(), (m.ones(2, requires_grad=True) * 2).requires_grad)

    def in_thread(key):
        t = threading.Thread(target=probe, args=(key,))
        t.start()
        t.join()

    with m.no_grad():
        in_thread('no_grad')
    with m.inference_mode():
        in_thread('inference_mode')
    with m.set_grad_enabled(False):
        in_thread('set_grad_enabled')
    return seen


def test_grad_modes_are_per_thread_and_new_threads_start_with_defaults():
    assert _modes_seen_by_a_new_thread(lg) == _modes_seen_by_a_new_thread(torch)
    assert _modes_seen_by_a_new_thread(lg)['no_grad'] == (True, False, True)


@MODULES
def test_grad_mode_set_in_one_thread_leaves_another_recording(m):
    entered, recorded = threading.Event(), threading.Event()
    results = {}
    w = m.ones(2, requires_grad=True)

    def quiet():
        with m.no_grad():
            entered.set()
            recorded.wait(10)
            results['inside'] = (w * 2).requires_grad

    t = threading.Thread(target=quiet)
    t.start()
    entered.wait(10)
    results['other'] = (w * 2).requires_grad, m.is_grad_enabled()
    recorded.set()
    t.join()
    assert results == {'inside': False, 'other': (True, True)}


def _anomaly_seen_by_a_new_thread(m):
    is_enabled = getattr(m, 'is_anomaly_enabled', None) or m.autograd.is_anomaly_enabled
    seen = []

    def probe():
        seen.append(is_enabled())

    with pytest.warns(UserWarning, match='Anomaly Detection has been enabled'):
        with m.autograd.detect_anomaly():
            t = threading.Thread(target=probe)
            t.start()
            t.join()
    probe()
    return seen


def test_anomaly_mode_is_one_for_the_process():
    assert _anomaly_seen_by_a_new_thread(lg) == _anomaly_seen_by_a_new_thread(torch) == [True, False]


def test_disabled_saved_tensor_hooks_are_per_thread():
    results = []
    for m in (lg, torch):
        seen = []

        def probe():
            try:
                with m.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                    seen.append('entered')
            except RuntimeError as e:
                seen.append(str(e))

        with m.autograd.graph.disable_saved_tensors_hooks('no hooks here'):
            t = threading.Thread(target=probe)
            t.start()
            t.join()
            probe()
        results.append(seen)
    assert results[0] == results[1] == [['entered', 'no hooks here']][0]


@MODULES
def test_hooks_run_in_the_thread_that_runs_backward(m):
    w = m.ones(1000, requires_grad=True)
    calls, lock = [], threading.Lock()

    def tensor_hook(g):
        with lock:
            calls.append(('tensor', threading.get_ident()))

    def post_hook(t):
        with lock:
            calls.append(('post', threading.get_ident()))

    w.register_hook(tensor_hook)
    w.register_post_accumulate_grad_hook(post_hook)
    idents = {}

    def work(i):
        idents[i] = threading.get_ident()
        for _ in range(50):
            (w * 3).sum().backward()

    run_threads(3, work)
    assert len(calls) == 300
    assert {kind for kind, _ in calls} == {'tensor', 'post'}
    assert {ident for _, ident in calls} == set(idents.values())
    assert w.grad.numpy().min() == w.grad.numpy().max() == 450


def test_retain_grad_through_a_shared_graph():
    # (torch's retain_grad adds to .grad without a lock and loses an update now and then
    # here; leafgrad's is locked)
    m = lg
    x = m.tensor(np.arange(1., 5.), requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y ** 2).sum()

    def work(i):
        for _ in range(40):
            z.backward(retain_graph=True)

    run_threads(4, work)
    np.testing.assert_array_equal(y.grad.numpy(), 160 * 2 * y.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), 160 * 4 * y.detach().numpy())


@MODULES
def test_autograd_grad_from_threads_through_a_shared_graph(m):
    rng = np.random.default_rng(3)
    x = m.tensor(rng.standard_normal((50, 40)), requires_grad=True)
    w = m.tensor(rng.standard_normal((40, 40)), requires_grad=True)
    out = ((x @ w).sin() ** 2).sum()
    expected = [g.numpy().copy() for g in m.autograd.grad(out, (x, w), retain_graph=True)]
    got = [None] * 4

    def work(i):
        for _ in range(20):
            got[i] = m.autograd.grad(out, (x, w), retain_graph=True)

    run_threads(4, work)
    for gx, gw in got:
        np.testing.assert_array_equal(gx.numpy(), expected[0])
        np.testing.assert_array_equal(gw.numpy(), expected[1])
    assert x.grad is None and w.grad is None


@MODULES
def test_create_graph_in_threads(m):
    results = [None] * 3

    def work(i):
        x = m.tensor([1., 2., 3.], dtype=m.float64, requires_grad=True)
        y = (x ** 3).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        results[i] = (g.detach().numpy().copy(), gg.numpy().copy())

    run_threads(3, work)
    for g, gg in results:
        np.testing.assert_array_equal(g, [3., 12., 27.])
        np.testing.assert_array_equal(gg, [6., 12., 18.])
