"""tinygrad on ptxvm: a simple op, a matmul, a conv and a few elementwise ops, checked against
numpy (run with DEV=CUDA:PTX under `ptxvm exec`)."""
import numpy as np
from tinygrad import Device, Tensor

assert Device.DEFAULT == "CUDA", Device.DEFAULT
v = (Tensor([1, 2, 3]) * 2 + 1).sum().item()
assert v == 15, v
rng = np.random.default_rng(0)
a = rng.standard_normal((33, 47)).astype(np.float32)
b = rng.standard_normal((47, 29)).astype(np.float32)
err = float(np.abs((Tensor(a) @ Tensor(b)).numpy() - a @ b).max())
assert err < 1e-4, err
x = rng.standard_normal((2, 3, 12, 12)).astype(np.float32)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
y = Tensor(x).conv2d(Tensor(w), padding=1).numpy()
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
ref = np.zeros((2, 4, 12, 12), np.float32)
for i in range(12):
    for j in range(12):
        ref[:, :, i, j] = np.einsum("ncij,ocij->no", xp[:, :, i:i + 3, j:j + 3], w)
err = float(np.abs(y - ref).max())
assert err < 1e-4, err
m = Tensor([-1.0, 0.0, 2.0]).relu().exp().mean().item()
assert abs(m - (2 + np.exp(2)) / 3) < 1e-5, m
print("tinygrad smoke: ok (sum, matmul 33x47x29, conv 2x3x12x12 * 4x3x3x3, relu/exp/mean)")
