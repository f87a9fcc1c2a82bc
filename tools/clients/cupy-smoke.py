"""CuPy on ptxvm: elementwise, reductions (CUB's and CuPy's own), indexing and the three kernel
kinds, each checked against numpy. Run as tools/clients/run.sh cupy does:

    CUPY_COMPILE_WITH_PTX=1 ptxvm exec --cc 12.0 -- python cupy-smoke.py

(NVRTC must write PTX, not SASS; CuPy's CUB module carries PTX for compute_120 only.)
"""
import numpy as np
import cupy as cp

checks = []


def check(name, got, want, **tol):
    ok = np.allclose(got, want, **tol) if tol else np.array_equal(got, want)
    checks.append(ok)
    print(f"{name}: {'ok' if ok else 'WRONG'}")
    if not ok:
        print("  got ", got)
        print("  want", want)


x = np.arange(1000, dtype=np.float32)
check("arange * 2", (cp.arange(10) * 2).get(), np.arange(10) * 2)
check("sum (CUB)", float(cp.asarray(x).sum()), float(x.sum()))
lin = np.linspace(0, 1, 1000)
check("mean of sqrt", float(cp.sqrt(cp.asarray(lin)).mean()), float(np.sqrt(lin).mean()), rtol=1e-12)
m = np.arange(12).reshape(3, 4)
check("slice", cp.asarray(m)[1:, ::2].get(), m[1:, ::2])
check("transpose sum", cp.asarray(m).T.sum(axis=0).get(), m.T.sum(axis=0))
check("max axis 1", cp.asarray(m).max(axis=1).get(), m.max(axis=1))
sq = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * x + 1", "sq")
check("ElementwiseKernel", sq(cp.arange(4, dtype=cp.float32)).get(), np.arange(4, dtype=np.float32) ** 2 + 1)
red = cp.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", "0", "mysum")
check("ReductionKernel", float(red(cp.asarray(x))), float(x.sum()))
raw = cp.RawKernel(r'extern "C" __global__ void dbl(float* x) { x[threadIdx.x] *= 2; }', "dbl")
v = cp.ones(8, dtype=cp.float32)
raw((1, ), (8, ), (v, ))
check("RawKernel", v.get(), np.full(8, 2, dtype=np.float32))
a = np.random.default_rng(1).standard_normal((33, 17)).astype(np.float32)
check("argmax", int(cp.asarray(a).argmax()), int(a.argmax()))
check("cumsum", cp.cumsum(cp.arange(100)).get(), np.cumsum(np.arange(100)))
raise SystemExit(0 if all(checks) else 1)
