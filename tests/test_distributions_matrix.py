"""LKJCholesky and Wishart: seeded samples, densities, moments, constraints, gradients and
argument errors, each against torch's."""
import pytest

from both import lg, same, torch


def _spd(M, n=3, batch=()):
    M.manual_seed(7)
    a = M.randn(*batch, n, n, dtype=M.float64)
    return a @ a.mT + n * M.eye(n, dtype=M.float64)


# ---- LKJCholesky -------------------------------------------------------------------------------

@pytest.mark.parametrize('dim,conc', [(2, 1.0), (3, 0.5), (4, 2.0), (5, 1.0)])
def test_lkj_seeded_sample(dim, conc):
    def program(M):
        M.manual_seed(0)
        d = M.distributions.LKJCholesky(dim, conc)
        return d.sample(), d.sample((2,)), d.batch_shape, d.event_shape
    same(program)


def test_lkj_batched_concentration_sample_and_log_prob():
    def program(M):
        M.manual_seed(1)
        d = M.distributions.LKJCholesky(3, M.tensor([0.5, 1.0, 3.0], dtype=M.float64))
        x = d.sample((2,))
        return x, d.log_prob(x), d.expand((2, 3)).sample().shape, d.expand((2, 3)).log_prob(x)
    same(program)


def test_lkj_log_prob_gradient():
    def program(M):
        M.manual_seed(2)
        c = M.tensor([0.7, 2.5], dtype=M.float64, requires_grad=True)
        d = M.distributions.LKJCholesky(4, c)
        x = d.sample()
        lp = d.log_prob(x)
        lp.sum().backward()
        return lp, c.grad, type(lp.grad_fn).__name__
    same(program)


@pytest.mark.parametrize('call', [
    lambda M: M.distributions.LKJCholesky(1),
    lambda M: M.distributions.LKJCholesky(3, -1.0, validate_args=True),
    lambda M: M.distributions.LKJCholesky(3, M.tensor([1.0, 0.0]), validate_args=True),
    lambda M: M.distributions.LKJCholesky(2, validate_args=True).log_prob(M.eye(3)),
    lambda M: M.distributions.LKJCholesky(2, validate_args=True).log_prob(M.tensor([[1.0, 0.0], [0.5, 0.5]])),
    lambda M: M.distributions.LKJCholesky(2, validate_args=True).log_prob(M.tensor([[1.0, 0.0], [0.6, 0.8]])),
    lambda M: M.distributions.LKJCholesky(2).rsample(),
    lambda M: (M.distributions.LKJCholesky.arg_constraints, M.distributions.LKJCholesky.support,
               M.distributions.LKJCholesky.has_rsample),
    lambda M: repr(M.distributions.LKJCholesky(3, 0.5)),
    lambda M: M.distributions.LKJCholesky(3).mean,
])
def test_lkj_checks(call):
    same(lambda M: str(call(M)).replace('leafgrad', 'torch'))


# ---- Wishart -----------------------------------------------------------------------------------

@pytest.mark.parametrize('kind', ['covariance_matrix', 'precision_matrix', 'scale_tril'])
def test_wishart_seeded_sample_and_moments(kind):
    def program(M):
        cov = _spd(M)
        param = M.linalg.cholesky(cov) if kind == 'scale_tril' else cov
        d = M.distributions.Wishart(M.tensor(5.0, dtype=M.float64), **{kind: param})
        M.manual_seed(0)
        x = d.sample()
        return (x, d.sample((2,)), d.log_prob(x), d.mean, d.variance, d.mode, d.entropy(),
                d.covariance_matrix, d.precision_matrix, d.scale_tril)
    same(program)


def test_wishart_api_table_row():
    def program(M):
        M.manual_seed(0)
        return M.distributions.Wishart(M.tensor(5.), M.eye(2)).sample()
    same(program)


def test_wishart_batched_df_and_expand():
    def program(M):
        cov = _spd(M, 2, (3,))
        d = M.distributions.Wishart(M.tensor([3.0, 4.5, 8.0], dtype=M.float64), covariance_matrix=cov)
        M.manual_seed(3)
        x = d.rsample((2,))
        e = d.expand((4, 3))
        return x, d.log_prob(x), e.sample().shape, e.log_prob(x[:1]), e.mean, d.batch_shape, d.event_shape
    same(program)


def test_wishart_number_df_and_low_df_warning():
    def program(M):
        d = M.distributions.Wishart(2.5, covariance_matrix=M.eye(3))
        M.manual_seed(4)
        return d.df, d.sample(), d.mode
    same(program)


def test_wishart_rsample_gradients():
    # (rsample redraws through sample[mask] = new, then writes to mask: the gradient is the new draw's)
    def program(M):
        cov = _spd(M)
        L = M.linalg.cholesky(cov).requires_grad_()
        d = M.distributions.Wishart(M.tensor(6.0, dtype=M.float64), scale_tril=L)
        M.manual_seed(5)
        x = d.rsample()
        (x.sum() + d.log_prob(x.detach())).backward()
        return x, L.grad
    same(program)


@pytest.mark.filterwarnings('ignore:Singular sample detected')
def test_wishart_df_gradient_close():
    # (the chi-square sample's derivative in df is the gamma's implicit one, whose approximation
    # in leafgrad agrees with PyTorch's to about 1e-5)
    def grad(M):
        df = M.tensor(6.0, dtype=M.float64, requires_grad=True)
        d = M.distributions.Wishart(df, covariance_matrix=_spd(M))
        M.manual_seed(5)
        d.rsample().sum().backward()
        return float(df.grad)
    assert grad(lg) == pytest.approx(grad(torch), rel=1e-4)


def test_setitem_zero_dim_mask_written_after_keeps_gradient():
    # (a 0-d mask selects the whole tensor; PyTorch does not save it, so writing to it later is fine)
    def program(M):
        a = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        b = M.tensor([[[5., 6.], [7., 8.]]], requires_grad=True)
        s = a * 2
        mask = M.tensor(True)
        s[mask] = b * 3
        mask[mask.clone()] = M.tensor([False])
        (s * M.tensor([[1., 10.], [100., 1000.]])).sum().backward()
        return s, a.grad, b.grad, mask
    same(program)


def test_wishart_log_prob_value_gradient():
    def program(M):
        d = M.distributions.Wishart(M.tensor(4.0, dtype=M.float64), covariance_matrix=_spd(M))
        v = _spd(M).requires_grad_()
        d.log_prob(v).backward()
        return v.grad
    same(program)


@pytest.mark.parametrize('call', [
    lambda M: M.distributions.Wishart(M.tensor(3.)),
    lambda M: M.distributions.Wishart(M.tensor(3.), M.eye(2), scale_tril=M.eye(2)),
    lambda M: M.distributions.Wishart(M.tensor(3.), M.ones(2)),
    lambda M: M.distributions.Wishart(M.tensor(0.5), M.eye(2)),
    lambda M: M.distributions.Wishart(1, M.eye(3)),
    lambda M: M.distributions.Wishart(M.tensor(3.), M.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True),
    lambda M: M.distributions.Wishart(M.tensor(3.), scale_tril=M.tensor([[1.0, 1.0], [0.0, 1.0]]),
                                      validate_args=True),
    lambda M: M.distributions.Wishart(M.tensor(3.), M.eye(2), validate_args=True).log_prob(-M.eye(2)),
    lambda M: M.distributions.Wishart(M.tensor(3.), M.eye(2), validate_args=True).log_prob(M.eye(3)),
    lambda M: M.distributions.Wishart(M.tensor(3.), M.eye(2)).arg_constraints,
    lambda M: (M.distributions.Wishart.support, M.distributions.Wishart.has_rsample),
    lambda M: repr(M.distributions.Wishart(M.tensor(3.), M.eye(2))),
    lambda M: M.distributions.Wishart(M.tensor([3., 4.]), M.eye(2)).batch_shape,
])
def test_wishart_checks(call):
    same(lambda M: str(call(M)).replace('leafgrad', 'torch'))
