#!/usr/bin/env python3
"""Expected values of tests/run/async/tensor_*.ptx, from the CUDA documentation of tensor maps
(cuTensorMapEncodeTiled) and of cp.async.bulk.tensor, independent of ptxvm.

Tile mode: the box of boxDim[i] elements (traversed with elementStrides[i]) starting at the
coordinates is stored densely in shared memory, dimension 0 innermost; elements outside the
tensor read as the fill (zero). Swizzle (CUDA programming guide, "TMA swizzle"): shared memory
is seen as 128-byte rows; the 16-byte chunk c of row r (of the unswizzled offset) is stored at
chunk c XOR (r mod n), n = 8 for 128B, 4 for 64B, 2 for 32B (patterns of 1024, 512, 256 bytes).

Usage: tensor_ref.py tile2d   (prints the EXPECT line)
"""
import sys


def box_tile(tensor, dims, box, coords, estrides=None):
    """The box as a flat list (dimension 0 innermost); None for out-of-bounds elements."""
    rank = len(dims)
    estrides = estrides or [1] * rank
    counts = [-(-box[i] // estrides[i]) for i in range(rank)]
    out = []

    def rec(d, idx):
        if d < 0:
            c = [coords[i] + idx[i] * estrides[i] for i in range(rank)]
            if all(0 <= c[i] < dims[i] for i in range(rank)):
                lin, mul = 0, 1
                for i in range(rank):
                    lin += c[i] * mul
                    mul *= dims[i]
                out.append(tensor(c))
            else:
                out.append(None)
            return
        for k in range(counts[d]):
            idx[d] = k
            rec(d - 1, idx)

    rec(rank - 1, [0] * rank)
    return out


def swizzle_words(words, mode_bytes):
    """Places 4-byte words (unswizzled order) as the swizzle of `mode_bytes` (32, 64, 128)."""
    n = {32: 2, 64: 4, 128: 8}[mode_bytes]
    out = [None] * len(words)
    for w, v in enumerate(words):
        byte = 4 * w
        row, chunk, within = byte // 128, (byte % 128) // 16, byte % 16
        new = row * 128 + ((chunk ^ (row % n)) * 16) + within
        out[new // 4] = v
    return out


def fmt(vals, fill="0"):
    return " ".join(fill if v is None else str(v) for v in vals)


def tile2d():
    # 40 x 10 f32 tensor holding its linear index (row stride 40 elements), box 32 x 8 at
    # (16, -2), swizzle 128B, zero fill
    box = box_tile(lambda c: c[0] + 40 * c[1], [40, 10], [32, 8], [16, -2])
    return "// EXPECT 1 f32: " + fmt(swizzle_words(box, 128))


def store3d():
    # u32 tensor 8 x 3 x 2 filled with 5; the 4 x 2 x 2 box at (6, 2, 1) holding t + 100 is
    # stored (in-bounds elements only), then added: 2 * (t + 100) where in bounds
    dims, box, at = [8, 3, 2], [4, 2, 2], [6, 2, 1]
    g = [5] * 48
    inside = box_tile(lambda c: c[0] + 8 * c[1] + 24 * c[2], dims, box, at)
    for t, lin in enumerate(inside):
        if lin is not None:
            g[lin] = 2 * (t + 100)
    return "// EXPECT 0.2 u32: " + fmt(g)


def tile5d():
    # f32 tensor 16 x 3 x 2 x 2 x 2 holding its linear index, box 16 x 2 x 2 x 2 x 2 with element
    # strides 1,1,1,1,2 at (-4, 2, 1, 0, 0), swizzle 64B, NaN fill
    dims = [16, 3, 2, 2, 2]

    def lin(c):
        return c[0] + 16 * (c[1] + 3 * (c[2] + 2 * (c[3] + 2 * c[4])))

    box = box_tile(lin, dims, [16, 2, 2, 2, 2], [-4, 2, 1, 0, 0], [1, 1, 1, 1, 2])
    return "// EXPECT 1 f32: " + fmt(swizzle_words(box, 64), "0f7fffffff")


def im2col4d():
    # NHWC f32 tensor: C = 4, W = 5, H = 4, N = 2, element (c, w, h, n) holds its linear index
    # c + 4 (w + 5 (h + 4 n)). A 3 x 3 convolution with padding 1 has the bounding box w in
    # -1..3, h in -1..2 (lower corner (-1, -1), upper corner (-1, -1): the far edge 1 short of
    # the last pixel). The output pixels in order (w fastest, then h, then n) are listed;
    # the copy takes 8 of them from the one at (w, h, n) = (2, 1, 1), reads each at
    # (w + 0, h + 1) (the im2col offsets: the filter tap), channels 0..3.
    C, W, H, N = 4, 5, 4, 2
    order = [(w, h, n) for n in range(N + 1) for h in range(-1, H - 1) for w in range(-1, W - 1)]
    start = order.index((2, 1, 1))
    vals = []
    for (w, h, n) in order[start:start + 8]:
        fw, fh = w + 0, h + 1
        for c in range(4):
            inside = 0 <= fw < W and 0 <= fh < H and 0 <= n < N and c < C
            vals.append(c + C * (fw + W * (fh + H * n)) if inside else None)
    return "// EXPECT 1 f32: " + fmt(vals)


def nvcc_tma_2d():
    # tests/run/async/nvcc/tma_2d.cu: block b loads the 32 x 8 box at (16 b, 3) of in (40 x 10,
    # in[k] = k, zeros out of bounds), computes v * 2 + b and stores it at (32 b, 8 b) of out
    # (64 x 16 zeros)
    out = [0] * (64 * 16)
    for b in range(2):
        box = box_tile(lambda c: c[0] + 40 * c[1], [40, 10], [32, 8], [16 * b, 3])
        for k, v in enumerate(box):
            r, c = divmod(k, 32)
            out[(8 * b + r) * 64 + 32 * b + c] = (0 if v is None else v) * 2 + b
    return "// EXPECT 1.2 f32: " + fmt(out)


def interleaved_image(tensor, dims, box, coords, estrides, esize, slice_bytes, swz_bytes):
    """The shared-memory bytes of an interleaved tile-mode box: each line of dimension 0 (its
    elements at the element stride, dimension-0 stride included) padded with zeros to whole
    slices, lines in order (dimension 1 fastest), then the swizzle of 16-byte chunks."""
    rank = len(dims)
    counts = [-(-box[i] // estrides[i]) for i in range(rank)]
    line_len = -(-counts[0] * esize // slice_bytes) * slice_bytes
    img = []
    outer = 1
    for n in counts[1:]:
        outer *= n
    for li in range(outer):
        idx, rem = [0] * rank, li
        for d in range(1, rank):
            idx[d], rem = rem % counts[d], rem // counts[d]
        line = []
        for k0 in range(counts[0]):
            idx[0] = k0
            c = [coords[d] + idx[d] * estrides[d] for d in range(rank)]
            v = tensor(c) if all(0 <= c[d] < dims[d] for d in range(rank)) else 0
            line += list(v.to_bytes(esize, "little"))
        img += line + [0] * (line_len - len(line))
    n = {32: 2, 64: 4, 128: 8}[swz_bytes]
    out = [0] * len(img)
    for b, v in enumerate(img):
        row, chunk, within = b // 128, (b % 128) // 16, b % 16
        out[row * 128 + (chunk ^ (row % n)) * 16 + within] = v
    return out


def interleave():
    # map 1: u16 (c, w, h) = c + 8 w + 40 h (strides 16, 80 bytes), dims 6 x 5 x 3, box
    # 6 x 4 x 4, element strides 2, 1, 1, at (0, 2, 0); 16B slices, 64B swizzle
    img1 = interleaved_image(lambda c: c[0] + 8 * c[1] + 40 * c[2], [6, 5, 3], [6, 4, 4],
                             [0, 2, 0], [2, 1, 1], 2, 16, 64)
    # map 2: u8 (c, w, h) = (c + 32 w + 96 h) mod 256 (u8 iota), dims 20 x 3 x 4, box 20 x 2 x 4 at (0, 1, 0);
    # 32B slices, 32B swizzle
    img2 = interleaved_image(lambda c: (c[0] + 32 * c[1] + 96 * c[2]) % 256, [20, 3, 4], [20, 2, 4],
                             [0, 1, 0], [1, 1, 1], 1, 32, 32)
    return ("// EXPECT 2 u32: " + fmt(words(img1)) + "\n"
            + "// EXPECT 3 u32: " + fmt(words(img2)))


def im2col_interleave():
    # u16 tensor (C, W, N) = (6, 5, 2) in 16-byte slices: element (c, w, n) at slot
    # c + 8 w + 40 n (u16 iota); bounding box w in -1..4 (lower corner -1, upper corner 0);
    # 8 pixels from (w, n) = (3, 0), each read at w + 1 (the im2col offset), channels 0..5 =
    # 12 bytes, padded with zeros to the 16-byte slice
    C, W, N = 6, 5, 2
    order = [(w, n) for n in range(N + 1) for w in range(-1, W)]
    start = order.index((3, 0))
    img = []
    for (w, n) in order[start:start + 8]:
        fw = w + 1
        px = []
        for c in range(C):
            inside = 0 <= fw < W and 0 <= n < N
            px += list(((c + 8 * fw + 40 * n) if inside else 0).to_bytes(2, "little"))
        img += px + [0] * (16 - len(px))
    return "// EXPECT 1 u32: " + fmt(words(img))


def words(bs):
    return [int.from_bytes(bytes(bs[i:i + 4]), "little") for i in range(0, len(bs), 4)]


def replace():
    # map 1: f32 12 x 5 holding its linear index, box 8 x 4 at (6, 3), NaN fill, no swizzle
    box1 = box_tile(lambda c: c[0] + 12 * c[1], [12, 5], [8, 4], [6, 3])
    # map 2: 2-byte elements (the ISA's elemtype 10 is bf16), 8 x 4 x 2 holding its linear
    # index, box 8 x 2 x 2 at (0, 3, 0), NaN fill: bf16's 0x7fff
    box2 = box_tile(lambda c: c[0] + 8 * (c[1] + 4 * c[2]), [8, 4, 2], [8, 2, 2], [0, 3, 0])
    return ("// EXPECT 1 f32: " + fmt(box1, "0f7fffffff") + "\n"
            + "// EXPECT 2 u16: " + fmt(box2, "0x7fff"))


if __name__ == "__main__":
    print({"tile2d": tile2d, "store3d": store3d, "tile5d": tile5d, "im2col4d": im2col4d,
           "nvcc_tma_2d": nvcc_tma_2d, "replace": replace, "interleave": interleave,
           "im2col_interleave": im2col_interleave}[sys.argv[1]]())
