"""numba-cuda on ptxvm: one @cuda.jit kernel through the driver's JIT linker (no nvJitLink)."""
import numpy as np
from numba import cuda
from numba.cuda.cudadrv.driver import _have_nvjitlink

assert not _have_nvjitlink(), "nvJitLink is installed: uninstall it (the [cu12]/[cu13] extras)"


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


n = 1000
a = np.arange(n, dtype=np.float32)
c = np.zeros_like(a)
add[(n + 127) // 128, 128](a, 2 * a, c)
assert np.array_equal(c, 3 * a)
print("numba smoke: ok")
