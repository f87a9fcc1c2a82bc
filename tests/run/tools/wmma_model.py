#!/usr/bin/env python3
"""Model of wmma.load / wmma.mma / wmma.store and generator of tests/run/matrix/wmma_*.ptx.

The ISA leaves wmma fragment layouts unspecified, so these tests never look at fragment
registers: every case loads A, B and C from memory (.row or .col, default or explicit stride,
generic, .global or .shared addresses), multiplies, and stores D (again any layout/stride);
the expected memory is a plain matmul of the matrices as stored (D = C + sum_k A[m][k]*B[k][n],
summed in binary64 in k order after C and rounded once, as for mma; f64 by fused multiply-adds
in k order with the instruction's rounding; integers exact, wrapping or clamping with
.satfinite; b1 popcounts of AND/XOR). Whatever layout an implementation picks, a correct one
gives these results. Number formats and roundings come from mma_model.py (same directory).

Sub-byte matrices (.s4/.u4 two per byte, .b1 eight per byte) are stored low bits first; with A
.row and B .col (the only layouts the ISA allows for them) a product does not depend on that
order, as long as A and B use the same one.

    python3 tests/run/tools/wmma_model.py           # rewrite tests/run/matrix/wmma_*.ptx
"""

import math
import os
import random
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mma_model as mm  # noqa: E402

SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
          "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4), "m8n8k32": (8, 8, 32),
          "m8n8k128": (8, 8, 128)}


def regs(shape, frag, t):
    m, n, k = SHAPES[shape]
    if frag in "ab" and t == "f16":
        return 8
    cnt = {"a": m * k, "b": k * n, "c": m * n}[frag] // 32
    return cnt // mm.per_reg(t)


def rcls(t):
    return {"f32": "f", "f64": "fd"}.get(t, "r")


def round_dir(x, mode):
    """Fraction x rounded to binary64 toward zero / -inf / +inf / nearest."""
    f = float(x)  # nearest even
    if mode == "rn" or Fraction(f) == x:
        return f
    if mode == "rz":
        want_smaller_mag = True
        if abs(Fraction(f)) > abs(x):
            f = math.nextafter(f, 0.0)
        return f if want_smaller_mag else f
    if mode == "rm":
        return f if Fraction(f) < x else math.nextafter(f, -math.inf)
    if mode == "rp":
        return f if Fraction(f) > x else math.nextafter(f, math.inf)
    raise ValueError(mode)


class Case:
    def __init__(self, shape, at, ct, dt, lay, strides=(None,) * 4, space="generic", sat=False,
                 op=None, rnd=None, special=None):
        self.shape, self.at, self.ct, self.dt = shape, at, ct, dt
        self.lay = lay  # layouts of a, b, c, d: "row"/"col"
        self.strides = strides  # explicit strides of a, b, c, d (None: default)
        self.space, self.sat, self.op, self.rnd, self.special = space, sat, op, rnd, special


def store_matrix(buf, off, mat, t, layout, stride):
    """Write matrix mat (list of rows of element bits) of type t at byte offset off."""
    bits = mm.BITS[t]
    rows, cols = len(mat), len(mat[0])
    for r in range(rows):
        for c in range(cols):
            idx = r * stride + c if layout == "row" else c * stride + r
            v = mat[r][c]
            if bits >= 8:
                nb = bits // 8
                for j in range(nb):
                    buf[off + idx * nb + j] = (v >> (8 * j)) & 0xFF
            else:
                per = 8 // bits
                byte = off + idx // per
                buf[byte] |= (v & ((1 << bits) - 1)) << ((idx % per) * bits)


def extent(rows, cols, t, layout, stride):
    n = (rows - 1) * stride + cols if layout == "row" else (cols - 1) * stride + rows
    return (n * mm.BITS[t] + 7) // 8


def default_stride(rows, cols, layout):
    return cols if layout == "row" else rows


def matmul(cs, A, B, C):
    m, n, k = SHAPES[cs.shape]
    D = [[0] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            if cs.at == "f64":
                acc = Fraction(mm.acc_value("f64", C[i][j]))
                accf = float(acc)
                for x in range(k):
                    exact = Fraction(mm.value("f64", A[i][x])) * Fraction(mm.value("f64", B[x][j])) + Fraction(accf)
                    accf = round_dir(exact, cs.rnd or "rn")
                D[i][j] = mm.f64_bits(accf)
                continue
            if cs.at == "b1":
                acc = mm.acc_value("s32", C[i][j])
                for x in range(k):
                    acc += (A[i][x] & B[x][j]) if cs.op == "and" else (A[i][x] ^ B[x][j])
                D[i][j] = acc & 0xFFFFFFFF
                continue
            acc = mm.acc_value(cs.ct, C[i][j])
            for x in range(k):
                acc += mm.value(cs.at, A[i][x]) * mm.value(cs.at, B[x][j])
            if cs.dt == "s32":
                D[i][j] = mm.round_to("s32", acc, cs.sat)
            else:
                v = mm.round_to(cs.dt, acc)
                if cs.sat:  # f16 .satfinite: infinities clamp to the largest finite value
                    mx = {"f16": 0x7BFF, "f32": 0x7F7FFFFF}[cs.dt]
                    inf = {"f16": 0x7C00, "f32": 0x7F800000}[cs.dt]
                    sgn = {"f16": 0x8000, "f32": 0x80000000}[cs.dt]
                    if v & ~sgn == inf:
                        v = (v & sgn) | mx
                D[i][j] = v
    return D


def gen_file(fname, target, version, cases, title, seed):
    rng = random.Random(seed)
    inbuf = bytearray()
    outbuf = bytearray()
    body = []
    counters = {"r": 10, "f": 0, "fd": 0}
    shared_bytes = 0

    def newregs(t, cnt):
        c = rcls(t)
        names = []
        for _ in range(cnt):
            counters[c] += 1
            names.append(f"%{c}{counters[c]}")
        return names

    def align(buf, a=32):
        while len(buf) % a:
            buf.append(0)

    for ci, cs in enumerate(cases):
        m, n, k = SHAPES[cs.shape]
        bt = cs.at
        A = [[mm.rand_elem(rng, cs.at) for _ in range(k)] for _ in range(m)]
        B = [[mm.rand_elem(rng, bt) for _ in range(n)] for _ in range(k)]
        C = [[mm.rand_acc(rng, cs.ct) for _ in range(n)] for _ in range(m)]
        if cs.at == "f64":
            # values with many significant bits, so the rounding direction matters
            A = [[mm.f64_bits(rng.uniform(-4, 4)) for _ in range(k)] for _ in range(m)]
            B = [[mm.f64_bits(rng.uniform(-4, 4)) for _ in range(n)] for _ in range(k)]
            C = [[mm.f64_bits(rng.uniform(-4, 4)) for _ in range(n)] for _ in range(m)]
        if cs.special:
            cs.special(A, B, C)
        D = matmul(cs, A, B, C)
        dims = {"a": (m, k, cs.at), "b": (k, n, bt), "c": (m, n, cs.ct), "d": (m, n, cs.dt)}
        mats = {"a": A, "b": B, "c": C}
        offs, strides = {}, {}
        for q, frag in enumerate("abcd"):
            rows, cols, t = dims[frag]
            lay = cs.lay[q]
            st = cs.strides[q]
            strides[frag] = st if st is not None else default_stride(rows, cols, lay)
            buf = outbuf if frag == "d" else inbuf
            align(buf)
            offs[frag] = len(buf)
            buf.extend(b"\0" * extent(rows, cols, t, lay, strides[frag]))
            if frag != "d":
                store_matrix(inbuf, offs[frag], mats[frag], t, lay, strides[frag])
            else:
                store_matrix(outbuf, offs[frag], D, t, lay, strides[frag])
        align(inbuf)
        align(outbuf)
        # the kernel: addresses of the four matrices
        body.append(f"\t// case {ci}: {cs.shape} {cs.at} -> {cs.dt}, layouts {cs.lay}, "
                    f"strides {cs.strides}, {cs.space}")
        ss = {"generic": "", "global": ".global", "shared": ".shared"}[cs.space]
        if cs.space == "global":
            body.append(f"\tadd.u64 %rd3, %rd2, {0};")  # %rd2: global-space address of IN
        elif cs.space == "generic":
            body.append("\tcvta.global.u64 %rd3, %rd2;")
        if cs.space == "shared":
            # copy A, B, C into shared memory (one word per lane per step), then use it
            lo = offs["a"]
            hi = len(inbuf)
            words = (hi - lo) // 4
            shared_bytes = max(shared_bytes, hi - lo + (offs["d"] and 0) + 4096)
            body += [f"\tmov.u32 %r2, %r1;",
                     f"L{ci}_copy:",
                     f"\tsetp.ge.u32 %p1, %r2, {words};",
                     f"\t@%p1 bra L{ci}_done;",
                     f"\tmul.wide.u32 %rd4, %r2, 4;",
                     f"\tadd.u64 %rd5, %rd2, %rd4;",
                     f"\tld.global.u32 %r3, [%rd5+{lo}];",
                     f"\tmov.u32 %r4, SH;",
                     f"\tcvt.u64.u32 %rd6, %r4;",
                     f"\tadd.u64 %rd6, %rd6, %rd4;",
                     f"\tst.shared.u32 [%rd6], %r3;",
                     f"\tadd.u32 %r2, %r2, 32;",
                     f"\tbra.uni L{ci}_copy;",
                     f"L{ci}_done:",
                     f"\tbar.sync 0;",
                     f"\tmov.u32 %r4, SH;",
                     f"\tcvt.u64.u32 %rd3, %r4;",
                     f"\tsub.u64 %rd3, %rd3, {lo};"]
        fr = {}
        for q, frag in enumerate("abc"):
            rows, cols, t = dims[frag]
            cnt = regs(cs.shape, frag, t)
            rr = newregs(t if not (frag in "ab" and t != "f64") else "b32", cnt)
            fr[frag] = rr
            st = "" if cs.strides[q] is None else f", {cs.strides[q]}"
            if cs.strides[q] is not None and q == 1:
                body.append(f"\tmov.u32 %r5, {cs.strides[q]};")
                st = ", %r5"
            body.append(f"\twmma.load.{frag}.sync.aligned.{cs.lay[q]}.{cs.shape}{ss}.{t} "
                        f"{{{', '.join(rr)}}}, [%rd3+{offs[frag]}]{st};")
        dcnt = regs(cs.shape, "c", cs.dt)
        dr = newregs(cs.dt, dcnt)
        if cs.at == "f16":
            types = f".{cs.dt}.{cs.ct}"
        else:
            types = f".{cs.dt}.{cs.at}.{bt}.{cs.ct}"
        op = f".{cs.op}.popc" if cs.op else ""
        rnd = f".{cs.rnd}" if cs.rnd else ""
        sat = ".satfinite" if cs.sat else ""
        body.append(f"\twmma.mma{op}.sync.aligned.{cs.lay[0]}.{cs.lay[1]}.{cs.shape}{rnd}{types}{sat} "
                    f"{{{', '.join(dr)}}}, {{{', '.join(fr['a'])}}}, {{{', '.join(fr['b'])}}}, "
                    f"{{{', '.join(fr['c'])}}};")
        st = "" if cs.strides[3] is None else f", {cs.strides[3]}"
        dspace = ".global" if cs.space != "shared" else ""
        body.append(f"\twmma.store.d.sync.aligned.{cs.lay[3]}.{cs.shape}{dspace}.{cs.dt} "
                    f"[%rd1+{offs['d']}], {{{', '.join(dr)}}}{st};")
    words = list(struct.unpack(f"<{len(inbuf) // 4}I", bytes(inbuf)))
    out_words = list(struct.unpack(f"<{len(outbuf) // 4}I", bytes(outbuf)))
    shared = f".shared .align 32 .b8 SH[{shared_bytes}];\n" if shared_bytes else None
    mm.OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "matrix")
    mm.write_test(fname, target, version, title, words, body, out_words, counters,
                  shared=shared)
    # name the generator in the header
    path = os.path.join(mm.OUT_DIR, fname)
    src = open(path).read().replace(
        "// Generated by tests/run/tools/mma_model.py (the ISA's fragment formulas and a plain\n"
        "// matmul); do not edit by hand.",
        "// Generated by tests/run/tools/wmma_model.py (a plain matmul of the matrices as\n"
        "// stored; no fragment layout assumed); do not edit by hand.")
    open(path, "w").write(src)


def sat_edges(A, B, C):
    for c in range(len(C[0])):
        C[0][c] = 0x7FFFFFF0
        C[1][c] = 0x80000010


def f16_overflow(A, B, C):
    # row 0 of A and column sums overflow f16: with .satfinite D is 65504, not inf
    for x in range(len(A[0])):
        A[0][x] = 0x7BFF  # 65504
        A[1][x] = 0xFBFF
    for r in range(len(B)):
        B[r][0] = 0x3C00


def layout_pos(shape, frag, t, lane, i):
    """The fragment layout ptxvm documents (docs/matrix.md, sm_80: wmma tiles made of the
    mma.m16n8 / m8n8 tiles), coded from that text: (row, col) of element i of lane's fragment."""
    m, n, k = SHAPES[shape]
    g, tg = lane >> 2, lane % 4
    p = mm.per_reg(t)
    uniq = {"a": m * k, "b": k * n, "c": m * n}[frag] // 32
    i %= uniq  # .f16 multiplicands repeat their elements
    reg, sub = divmod(i, p)
    if frag == "a":
        row_blocks = m // 8
        return g + 8 * (reg % row_blocks), 4 * p * (reg // row_blocks) + tg * p + sub
    if frag == "b":
        k_blocks = k // (4 * p)
        return 4 * p * (reg % k_blocks) + tg * p + sub, g + 8 * (reg // k_blocks)
    half, odd = divmod(i, 2)
    row_blocks = m // 8
    return g + 8 * (half % row_blocks), 8 * (half // row_blocks) + 2 * tg + odd


def gen_layout():
    """wmma_layout.ptx: the registers wmma.load gives each lane for matrices whose elements are
    their own index (row * cols + col), against layout_pos; loads only, stored raw."""
    frags = [("m16n16k16", "a", "f16", "row"), ("m16n16k16", "b", "f16", "col"),
             ("m16n16k16", "c", "f32", "row"), ("m32n8k16", "a", "bf16", "col"),
             ("m8n32k16", "b", "bf16", "row"), ("m16n16k16", "c", "f16", "col"),
             ("m16n16k8", "a", "tf32", "row"), ("m8n8k4", "c", "f64", "row"),
             ("m16n16k16", "a", "u8", "row"), ("m8n32k16", "c", "s32", "row")]
    inbuf = bytearray()
    body = []
    out_words = []
    counters = {"r": 10, "f": 0, "fd": 0}

    def enc(t, v):
        return {"f16": lambda x: mm.f16_bits(float(x)), "bf16": lambda x: mm.f32_bits(float(x)) >> 16,
                "tf32": lambda x: mm.f32_bits(float(x)), "f32": lambda x: mm.f32_bits(float(x)),
                "f64": lambda x: mm.f64_bits(float(x)), "u8": lambda x: x & 0xFF,
                "s32": lambda x: x}[t](v)

    for shape, frag, t, lay in frags:
        m, n, k = SHAPES[shape]
        rows, cols = {"a": (m, k), "b": (k, n), "c": (m, n)}[frag]
        mat = [[enc(t, r * cols + c) for c in range(cols)] for r in range(rows)]
        while len(inbuf) % 32:
            inbuf.append(0)
        off = len(inbuf)
        inbuf.extend(b"\0" * extent(rows, cols, t, lay, default_stride(rows, cols, lay)))
        store_matrix(inbuf, off, mat, t, lay, default_stride(rows, cols, lay))
        cnt = regs(shape, frag, t)
        cls = rcls(t) if frag == "c" else "r"
        names = []
        for _ in range(cnt):
            counters[cls] += 1
            names.append(f"%{cls}{counters[cls]}")
        body.append(f"\t// {frag} {shape} {t} {lay}")
        body.append(f"\twmma.load.{frag}.sync.aligned.{lay}.{shape}.global.{t} {{{', '.join(names)}}}, [%rd2+{off}];")
        words_per = 2 if t == "f64" else 1
        base = len(out_words)
        body.append(f"\tmul.wide.u32 %rd4, %r1, {4 * words_per * cnt};")
        body.append(f"\tadd.u64 %rd5, %rd1, %rd4;")
        for q, nm in enumerate(names):
            st = "f64" if t == "f64" else ("f32" if cls == "f" else "u32")
            body.append(f"\tst.global.{st} [%rd5+{4 * base + 4 * words_per * q}], {nm};")
        p = mm.per_reg(t)
        bits = mm.BITS[t]
        for lane in range(32):
            for q in range(cnt):
                v = 0
                for sub in range(p):
                    r, c = layout_pos(shape, frag, t, lane, q * p + sub)
                    v |= mat[r][c] << (sub * bits)
                if t == "f64":
                    out_words += [v & 0xFFFFFFFF, v >> 32]
                else:
                    out_words.append(v)
    words = list(struct.unpack(f"<{len(inbuf) // 4}I", bytes(inbuf)))
    mm.OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "matrix")
    mm.write_test("wmma_layout.ptx", "sm_80", "8.0",
                  "wmma fragment layouts (ptxvm's choice, sm_80's: docs/matrix.md): registers after "
                  "wmma.load", words, body, out_words, counters)
    path = os.path.join(mm.OUT_DIR, "wmma_layout.ptx")
    src = open(path).read().replace(
        "// Generated by tests/run/tools/mma_model.py (the ISA's fragment formulas and a plain\n"
        "// matmul); do not edit by hand.",
        "// Generated by tests/run/tools/wmma_model.py (layout_pos: the documented layout);\n"
        "// do not edit by hand.")
    open(path, "w").write(src)


def main():
    R, Cc = "row", "col"
    gen_layout()
    gen_file("wmma_f16.ptx", "sm_80", "8.0", [
        Case("m16n16k16", "f16", "f32", "f32", (R, Cc, R, R), space="global"),
        Case("m16n16k16", "f16", "f32", "f32", (Cc, R, Cc, Cc), strides=(24, 40, 32, 24)),
        Case("m16n16k16", "f16", "f16", "f16", (R, R, R, Cc)),
        Case("m16n16k16", "f16", "f16", "f32", (Cc, Cc, R, R), space="shared"),
        Case("m16n16k16", "f16", "f32", "f16", (R, Cc, Cc, R), strides=(None, 32, None, 24)),
        Case("m32n8k16", "f16", "f32", "f32", (R, Cc, R, Cc)),
        Case("m32n8k16", "f16", "f16", "f16", (Cc, R, Cc, R), strides=(40, 16, 48, None)),
        Case("m8n32k16", "f16", "f32", "f32", (Cc, R, R, R), space="shared"),
        Case("m8n32k16", "f16", "f16", "f32", (R, Cc, R, Cc), strides=(24, None, 40, 16)),
    ], "wmma .f16: m16n16k16, m32n8k16, m8n32k16; f16/f32 C and D; .row/.col A, B, C, D; "
       "strides; generic, .global, .shared", 1601)
    gen_file("wmma_bf16_tf32.ptx", "sm_80", "8.0", [
        Case("m16n16k16", "bf16", "f32", "f32", (R, Cc, R, R)),
        Case("m32n8k16", "bf16", "f32", "f32", (Cc, R, Cc, R), strides=(40, 16, None, 16)),
        Case("m8n32k16", "bf16", "f32", "f32", (R, R, R, Cc), space="shared"),
        Case("m16n16k8", "tf32", "f32", "f32", (R, Cc, R, R), space="global"),
        Case("m16n16k8", "tf32", "f32", "f32", (Cc, R, Cc, Cc), strides=(20, 20, 20, 20)),
    ], "wmma .bf16 (m16n16k16, m32n8k16, m8n32k16) and .tf32 (m16n16k8, low 13 bits ignored)",
        1602)
    gen_file("wmma_f64.ptx", "sm_80", "8.0", [
        Case("m8n8k4", "f64", "f64", "f64", (R, Cc, R, R)),
        Case("m8n8k4", "f64", "f64", "f64", (Cc, R, Cc, Cc), strides=(12, 12, 12, 12), rnd="rn"),
        Case("m8n8k4", "f64", "f64", "f64", (R, R, R, R), rnd="rz", space="shared"),
        Case("m8n8k4", "f64", "f64", "f64", (R, Cc, R, R), rnd="rm"),
        Case("m8n8k4", "f64", "f64", "f64", (Cc, Cc, R, R), rnd="rp", space="global"),
    ], "wmma .f64 m8n8k4: fused multiply-adds in k order, .rn/.rz/.rm/.rp", 1603)
    gen_file("wmma_int.ptx", "sm_80", "8.0", [
        Case("m16n16k16", "s8", "s32", "s32", (R, Cc, R, R), special=sat_edges),
        Case("m16n16k16", "u8", "s32", "s32", (Cc, R, Cc, R), sat=True, special=sat_edges),
        Case("m32n8k16", "s8", "s32", "s32", (R, R, R, Cc), sat=True, special=sat_edges,
             strides=(32, 16, None, 48)),
        Case("m8n32k16", "u8", "s32", "s32", (Cc, Cc, R, R), space="shared"),
        Case("m8n8k32", "s4", "s32", "s32", (R, Cc, R, R), special=sat_edges),
        Case("m8n8k32", "u4", "s32", "s32", (R, Cc, Cc, R), sat=True, special=sat_edges,
             strides=(64, 64, 16, 16)),
        Case("m8n8k128", "b1", "s32", "s32", (R, Cc, R, R), op="xor"),
        Case("m8n8k128", "b1", "s32", "s32", (R, Cc, R, Cc), op="and", strides=(256, 256, None, None),
             space="global"),
    ], "wmma integer: .s8/.u8 (three shapes), .s4/.u4 m8n8k32, .b1 m8n8k128 .xor/.and.popc, "
       ".satfinite", 1604)
    gen_file("wmma_satfinite_f16.ptx", "sm_75", "6.4", [
        Case("m16n16k16", "f16", "f32", "f16", (R, Cc, R, R), sat=True, special=f16_overflow),
        Case("m16n16k16", "f16", "f16", "f16", (R, Cc, R, R), special=f16_overflow),
    ], "wmma .f16 .satfinite (PTX ISA before 6.5): an infinite result clamps to 65504", 1605)


if __name__ == "__main__":
    main()
