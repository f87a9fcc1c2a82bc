"""Device arrays for Triton without PyTorch: numpy data in CUDA driver memory.

Triton launches a kernel with any argument that has ``data_ptr()`` and ``dtype`` (its
torch-free path); these arrays are just that, over ``cuMemAlloc`` of cuda-bindings, with what
the tutorials ask of a tensor (``shape``, ``stride``, ``numel``, ``element_size``, ``T`` …) and
copies to and from numpy. Run under ``ptxvm exec`` they live in ptxvm's device memory; the
same code runs on a real GPU.
"""

import numpy as np
from cuda.bindings import driver as cu


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {err!r}")
    return rest[0] if len(rest) == 1 else tuple(rest)


_ctx = None


def init(device=0):
    """Makes the primary context of ``device`` current (once)."""
    global _ctx
    if _ctx is None:
        check(cu.cuInit(0))
        dev = check(cu.cuDeviceGet(device))
        _ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(_ctx))
    return _ctx


def capability(device=0):
    init(device)
    dev = check(cu.cuDeviceGet(device))
    a = cu.CUdevice_attribute
    major = check(cu.cuDeviceGetAttribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = check(cu.cuDeviceGetAttribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    return major, minor


class Dtype:
    """A dtype Triton reads by name (``str(dtype)``: ``float32``, ``bfloat16``, ``float8_e4m3fn``)
    with the numpy type that holds its bits."""

    def __init__(self, name, storage):
        self.name = name
        self.storage = np.dtype(storage)
        self.itemsize = self.storage.itemsize

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        return str(other) == self.name

    def __hash__(self):
        return hash(self.name)


float32 = Dtype("float32", np.float32)
float16 = Dtype("float16", np.float16)
float64 = Dtype("float64", np.float64)
int32 = Dtype("int32", np.int32)
int64 = Dtype("int64", np.int64)
int8 = Dtype("int8", np.int8)
uint8 = Dtype("uint8", np.uint8)
int16 = Dtype("int16", np.int16)
uint32 = Dtype("uint32", np.uint32)
bfloat16 = Dtype("bfloat16", np.uint16)
float8_e4m3fn = Dtype("float8_e4m3fn", np.uint8)
float8_e5m2 = Dtype("float8_e5m2", np.uint8)
bool_ = Dtype("bool", np.bool_)

_BY_NUMPY = {d.storage: d for d in (float32, float16, float64, int32, int64, int8, uint8, int16, uint32, bool_)}


def dtype_of(x):
    if isinstance(x, Dtype):
        return x
    return _BY_NUMPY[np.dtype(x)]


class DeviceArray:
    """A strided view of a device allocation."""

    def __init__(self, shape, dtype, base=None, offset=0, strides=None):
        init()
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype_of(dtype)
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shape):
                strides.insert(0, acc)
                acc *= s
        self._strides = tuple(strides)
        if base is None:
            nbytes = max(1, self.numel() * self.dtype.itemsize)
            self._alloc = _Allocation(nbytes)
        else:
            self._alloc = base
        self._offset = offset  # in elements

    # --- what Triton and the tutorials ask of a tensor
    def data_ptr(self):
        return self._alloc.ptr + self._offset * self.dtype.itemsize

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self):
        return self.dtype.itemsize

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    @property
    def T(self):
        return DeviceArray(self.shape[::-1], self.dtype, self._alloc, self._offset, self._strides[::-1])

    def is_contiguous(self):
        return self._strides == DeviceArray(self.shape, self.dtype, self._alloc).stride()

    def __getitem__(self, rows):
        """``a[i]`` of the first dimension (a view)."""
        if isinstance(rows, int):
            return DeviceArray(self.shape[1:], self.dtype, self._alloc, self._offset + rows * self._strides[0],
                               self._strides[1:])
        raise TypeError("only a[int] views are supported")

    # --- copies
    def numpy(self):
        """The array's values (a contiguous copy)."""
        span = self._span()
        host = np.empty(span, dtype=self.dtype.storage)
        if span:
            check(cu.cuMemcpyDtoH(host.ctypes.data, self.data_ptr(), span * self.dtype.itemsize))
        return np.lib.stride_tricks.as_strided(host, self.shape, [s * self.dtype.itemsize for s in self._strides]).copy()

    def copy_from(self, a):
        a = np.ascontiguousarray(a, dtype=self.dtype.storage)
        assert a.shape == self.shape and self.is_contiguous(), (a.shape, self.shape)
        if a.nbytes:
            check(cu.cuMemcpyHtoD(self.data_ptr(), a.ctypes.data, a.nbytes))
        return self

    def fill_zero(self):
        assert self.is_contiguous()
        check(cu.cuMemsetD8(self.data_ptr(), 0, self.numel() * self.dtype.itemsize))
        return self

    def _span(self):
        if not self.shape or 0 in self.shape:
            return 1 if not self.shape else 0
        return 1 + sum((n - 1) * s for n, s in zip(self.shape, self._strides))


class _Allocation:

    def __init__(self, nbytes):
        self.ptr = int(check(cu.cuMemAlloc(nbytes)))
        self.nbytes = nbytes

    def __del__(self):
        try:
            cu.cuMemFree(self.ptr)
        except Exception:
            pass


def empty(shape, dtype=float32):
    if isinstance(shape, int):
        shape = (shape, )
    return DeviceArray(shape, dtype)


def zeros(shape, dtype=float32):
    return empty(shape, dtype).fill_zero()


def to_device(a, dtype=None):
    """A device copy of numpy array ``a`` (``dtype``: an adapter dtype for bf16/fp8 bits)."""
    a = np.asarray(a)
    d = dtype_of(dtype if dtype is not None else a.dtype)
    return DeviceArray(a.shape, d).copy_from(a.view(d.storage) if a.dtype != d.storage else a)


def empty_like(x):
    return DeviceArray(x.shape, x.dtype)


def synchronize():
    check(cu.cuCtxSynchronize())


# --- bfloat16 bits <-> float32 (round to nearest even), for inputs and references
def to_bf16_bits(a):
    b = np.asarray(a, dtype=np.float32).view(np.uint32)
    rounded = b + 0x7FFF + ((b >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def do_bench(kernel_call, quantiles=None, runs=2):
    """The autotuner's benchmark without PyTorch: wall-clock time of ``runs`` calls after one
    warm-up call, in ms, as ``triton.testing.do_bench`` returns it (one value per quantile)."""
    import time
    kernel_call()
    synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        kernel_call()
        synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    if quantiles is None:
        return times[len(times) // 2]
    return [times[min(len(times) - 1, int(q * len(times)))] for q in quantiles]
