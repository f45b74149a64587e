"""LAPACK's symmetric indefinite factorization (``?sytrf``/``?hetrf``, Bunch-Kaufman pivoting,
lower triangle) and its solve (``?sytrs``/``?hetrs``), in NumPy, for ``linalg.ldl_factor``,
``ldl_factor_ex`` and ``ldl_solve`` (written in leafgrad/linalg.py).

The factorization is LAPACK's unblocked one (``?sytf2``/``?hetf2``): for matrices up to LAPACK's
block size (64) that is the routine ``?sytrf`` itself runs, so pivots and LD agree with PyTorch's
exactly in their choices and to rounding in their values. Above it, ``?sytrf`` factors in blocks
(``?lasyf``), which makes the same pivoting tests on values rounded in another order (random
matrices of 65 and 100 rows gave PyTorch's pivots); an exact tie between two candidate pivots
(matrices of small integers) may be decided differently.
"""
import numpy as np

_ALPHA = (1 + np.sqrt(17.0)) / 8


def _abs1(x):
    """LAPACK's pivot size: |x| for reals, |re| + |im| (CABS1) for complex numbers."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _argmax(v):
    """IxAMAX: the first index of the largest size (NaN is never larger)."""
    if v.size == 0:
        return 0
    s = _abs1(v)
    best, at = s[0], 0
    for i in range(1, s.size):
        if s[i] > best or (best != best and s[i] == s[i]):  # (LAPACK's loop: a NaN first is passed over)
            best, at = s[i], i
    return at


def factor(a, hermitian):
    """(LD, pivots, info) of one n x n matrix, read from its lower triangle (LAPACK's 1-based
    pivots; a 2 x 2 block's two entries are both -p)."""
    n = a.shape[0]
    A = np.tril(a).astype(a.dtype, copy=True)
    cplx = np.iscomplexobj(A)
    herm = hermitian and cplx
    conj = np.conj if herm else (lambda x: x)
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    if herm:
        A[np.diag_indices(n)] = A.diagonal().real
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(A[k, k].real) if herm else _abs1(A[k, k])
        if k < n - 1:
            imax = k + 1 + _argmax(A[k + 1:, k])
            colmax = _abs1(A[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or absakk != absakk:
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                A[k, k] = A[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + _argmax(A[imax, k:imax])
                rowmax = _abs1(A[imax, jmax])
                if imax < n - 1:
                    jmax = imax + 1 + _argmax(A[imax + 1:, imax])
                    rowmax = max(rowmax, _abs1(A[jmax, imax]))
                diag_imax = abs(A[imax, imax].real) if herm else _abs1(A[imax, imax])
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag_imax >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                # interchange rows and columns kk and kp of the trailing lower triangle
                if kp < n - 1:
                    A[kp + 1:, kk], A[kp + 1:, kp] = A[kp + 1:, kp].copy(), A[kp + 1:, kk].copy()
                seg = slice(kk + 1, kp)
                col, row = A[seg, kk].copy(), A[kp, seg].copy()
                A[seg, kk], A[kp, seg] = conj(row), conj(col)
                if herm:
                    A[kp, kk] = np.conj(A[kp, kk])
                A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
                if kstep == 2:
                    A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]
            elif herm:
                A[k, k] = A[k, k].real
                if kstep == 2:
                    A[k + 1, k + 1] = A[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    d11 = (1 / A[k, k].real) if herm else 1 / A[k, k]
                    x = A[k + 1:, k].copy()
                    for j in range(k + 1, n):  # (?syr/?her on the lower triangle, column by column)
                        A[j:, j] -= (d11 * conj(x[j - k - 1])) * x[j - k - 1:]
                    if herm:
                        A[k + 1:, k + 1:][np.diag_indices(n - k - 1)] = A[k + 1:, k + 1:].diagonal().real
                    A[k + 1:, k] = x * d11
            else:
                if k < n - 2:
                    if herm:
                        d = abs(A[k + 1, k])
                        d11 = A[k + 1, k + 1].real / d
                        d22 = A[k, k].real / d
                        tt = 1 / (d11 * d22 - 1)
                        d21 = A[k + 1, k] / d
                        d = tt / d
                        for j in range(k + 2, n):
                            wk = d * (d11 * A[j, k] - d21 * A[j, k + 1])
                            wkp1 = d * (d22 * A[j, k + 1] - np.conj(d21) * A[j, k])
                            A[j:, j] -= A[j:, k] * np.conj(wk) + A[j:, k + 1] * np.conj(wkp1)
                            A[j, k], A[j, k + 1] = wk, wkp1
                            A[j, j] = A[j, j].real
                    else:
                        d21 = A[k + 1, k]
                        d11 = A[k + 1, k + 1] / d21
                        d22 = A[k, k] / d21
                        tt = 1 / (d11 * d22 - 1)
                        d21 = tt / d21
                        for j in range(k + 2, n):
                            wk = d21 * (d11 * A[j, k] - A[j, k + 1])
                            wkp1 = d21 * (d22 * A[j, k + 1] - A[j, k])
                            A[j:, j] -= A[j:, k] * wk + A[j:, k + 1] * wkp1
                            A[j, k], A[j, k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return A, ipiv, info


def solve(LD, ipiv, B, hermitian):
    """X with A X = B, A factored as ``factor`` gives (LD, 1-based pivots) (LAPACK's ?sytrs/?hetrs, lower)."""
    n = LD.shape[0]
    A = LD
    herm = hermitian and np.iscomplexobj(A)
    conj = np.conj if herm else (lambda x: x)
    B = B.copy()
    k = 0
    while k < n:  # L D Y = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                B[[k, kp]] = B[[kp, k]]
            if k < n - 1:
                B[k + 1:] -= np.outer(A[k + 1:, k], B[k])
            B[k] = B[k] * (1 / A[k, k].real) if herm else B[k] / A[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                B[[k + 1, kp]] = B[[kp, k + 1]]
            if k < n - 2:
                B[k + 2:] -= np.outer(A[k + 2:, k], B[k])
                B[k + 2:] -= np.outer(A[k + 2:, k + 1], B[k + 1])
            akm1k = A[k + 1, k]
            akm1 = A[k, k] / (conj(akm1k))
            ak = A[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = B[k] / conj(akm1k)
            bk = B[k + 1] / akm1k
            B[k] = (ak * bkm1 - bk) / denom
            B[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H when hermitian)
        if ipiv[k] > 0:
            if k < n - 1:
                B[k] -= conj(A[k + 1:, k]) @ B[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                B[[k, kp]] = B[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                B[k] -= conj(A[k + 1:, k]) @ B[k + 1:]
                B[k - 1] -= conj(A[k + 1:, k - 1]) @ B[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                B[[k, kp]] = B[[kp, k]]
            k -= 2
    return B
