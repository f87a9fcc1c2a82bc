#!/usr/bin/env python3
"""Model of the warp-level matrix instructions (mma, ldmatrix, stmatrix, movmatrix) and generator
of the run tests under tests/run/matrix/.

The fragment layouts are coded here shape by shape from the row/column formulas under the PTX ISA's
figures "Matrix Fragments for mma.mMnNkK" (groupID = %laneid >> 2, threadID_in_group = %laneid % 4),
independently of ptxvm's code (which uses one general rule). The products come from a plain matmul:
D = C + sum_k A[m][k]*B[k][n] in Python floats (binary64) in k order after C, rounded once to the
destination type; f64 inputs are chosen so every product and partial sum is exact (so fused and
unfused agree); integers are exact and wrap (or clamp with .satfinite). tf32 inputs carry random low
bits that the model drops (the ISA ignores the low 13 bits).

Each generated test has one kernel run by one warp: every lane loads its fragment registers from an
initialised .global array (laid out [case][lane][register]), runs the instruction, and stores its
result registers to the output buffer; the header's EXPECT line lists the expected words.

    python3 tests/run/tools/mma_model.py            # rewrite tests/run/matrix/*.ptx
"""

import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "matrix")

# --------------------------------------------------------------------------------------------
# number formats


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_val(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f16_val(b):
    return struct.unpack("<e", struct.pack("<H", b))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def bf16_val(b):
    return f32_val(b << 16)


def fp8_val(b, ebits, mbits, has_inf):
    s = -1.0 if b & 0x80 else 1.0
    e = (b >> mbits) & ((1 << ebits) - 1)
    m = b & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    if has_inf and e == (1 << ebits) - 1:
        return s * math.inf if m == 0 else math.nan
    if not has_inf and e == (1 << ebits) - 1 and m == (1 << mbits) - 1:
        return math.nan
    if e == 0:
        return s * m * 2.0 ** (1 - bias - mbits)
    return s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def value(t, b):
    """Exact value of element bits b of type t."""
    if t == "f16":
        return f16_val(b)
    if t == "bf16":
        return bf16_val(b)
    if t == "tf32":
        return f32_val(b & 0xFFFFE000)
    if t == "e4m3":
        return fp8_val(b, 4, 3, False)
    if t == "e5m2":
        return fp8_val(b, 5, 2, True)
    if t == "s8":
        return b - 256 if b & 0x80 else b
    if t == "u8":
        return b
    if t == "s4":
        return b - 16 if b & 0x8 else b
    if t == "u4":
        return b
    if t == "b1":
        return b
    if t == "f64":
        return struct.unpack("<d", struct.pack("<Q", b))[0]
    raise ValueError(t)


BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "s4": 4,
        "u4": 4, "b1": 1, "f32": 32, "s32": 32, "f64": 64}


def per_reg(t):
    return 1 if t == "f64" else 32 // BITS[t]


def rand_elem(rng, t):
    """Random element bits of type t (finite, moderate magnitudes)."""
    if t == "f16":
        return f16_bits(rng.randint(-64, 64) / 16.0 * (1 + rng.randint(0, 7) / 8.0))
    if t == "bf16":
        return f32_bits(rng.randint(-64, 64) / 16.0 * (1 + rng.randint(0, 127) / 128.0)) >> 16
    if t == "tf32":
        # a value with 10 fraction bits plus random low bits the instruction must ignore
        base = f32_bits(rng.randint(-64, 64) / 16.0 * (1 + rng.randint(0, 1023) / 1024.0))
        return (base & 0xFFFFE000) | rng.getrandbits(13)
    if t in ("e4m3", "e5m2"):
        while True:
            b = rng.getrandbits(8)
            if math.isfinite(value(t, b)) and abs(value(t, b)) <= 64:
                return b
    if t in ("s8", "u8"):
        return rng.getrandbits(8)
    if t in ("s4", "u4"):
        return rng.getrandbits(4)
    if t == "b1":
        return rng.getrandbits(1)
    if t == "f64":
        return f64_bits(rng.randint(-256, 256) / 8.0)
    raise ValueError(t)


def rand_acc(rng, t):
    if t == "f32":
        return f32_bits(rng.randint(-512, 512) / 32.0)
    if t == "f16":
        return f16_bits(rng.randint(-512, 512) / 32.0)
    if t == "s32":
        return rng.getrandbits(32)
    if t == "f64":
        return f64_bits(rng.randint(-512, 512) / 32.0)
    raise ValueError(t)


def acc_value(t, b):
    if t == "f32":
        return f32_val(b)
    if t == "f16":
        return f16_val(b)
    if t == "f64":
        return struct.unpack("<d", struct.pack("<Q", b))[0]
    if t == "s32":
        return b - (1 << 32) if b & 0x80000000 else b
    raise ValueError(t)


def round_to(t, x, satfinite=False):
    if t == "s32":
        if satfinite:
            return max(-(1 << 31), min((1 << 31) - 1, x)) & 0xFFFFFFFF
        return x & 0xFFFFFFFF
    if math.isnan(x):
        return {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "f64": 0x7FFFFFFFFFFFFFFF}[t]
    if t == "f32":
        if math.isinf(x):
            return 0x7F800000 if x > 0 else 0xFF800000
        try:
            return f32_bits(x)
        except OverflowError:
            return 0x7F800000 if x > 0 else 0xFF800000
    if t == "f16":
        if math.isinf(x):
            return 0x7C00 if x > 0 else 0xFC00
        try:
            return f16_bits(x)
        except OverflowError:
            return 0x7C00 if x > 0 else 0xFC00
    if t == "f64":
        return f64_bits(x)
    raise ValueError(t)


# --------------------------------------------------------------------------------------------
# fragment layouts, shape by shape, as the ISA's formulas give them


def a_pos(shape, t, lane, i):
    g, q = lane >> 2, lane % 4
    if t in ("f16", "bf16"):
        if shape == "m16n8k8":
            return (g if i < 2 else g + 8, q * 2 + (i & 1))
        if shape == "m16n8k16":
            row = g if (i < 2 or 4 <= i < 6) else g + 8
            return (row, q * 2 + (i & 1) + (8 if i >= 4 else 0))
    if t == "tf32" or (t == "f64" and shape in ("m16n8k4", "m16n8k8")):
        if shape == "m16n8k4":
            return (g if i == 0 else g + 8, q)
        if shape == "m16n8k8":
            return (g if i in (0, 2) else g + 8, q if i < 2 else q + 4)
    if t == "f64":
        if shape == "m8n8k4":
            return (g, q)
        if shape == "m16n8k16":
            row = g if i % 2 == 0 else g + 8
            col = i * 2 + q if i % 2 == 0 else (i * 2 - 2) + q
            return (row, col)
    if t in ("s8", "u8", "e4m3", "e5m2"):
        if shape == "m8n8k16":
            return (g, q * 4 + i)
        if shape == "m16n8k16":
            return (g if i < 4 else g + 8, q * 4 + (i & 3))
        if shape == "m16n8k32":
            row = g if (i < 4 or 8 <= i < 12) else g + 8
            return (row, q * 4 + (i & 3) + (16 if i >= 8 else 0))
    if t in ("s4", "u4"):
        if shape == "m8n8k32":
            return (g, q * 8 + i)
        if shape == "m16n8k32":
            return (g if i < 8 else g + 8, q * 8 + (i & 7))
        if shape == "m16n8k64":
            row = g if (i < 8 or 16 <= i < 24) else g + 8
            return (row, q * 8 + (i & 7) + (32 if i >= 16 else 0))
    if t == "b1":
        if shape == "m8n8k128":
            return (g, q * 32 + i)
        if shape == "m16n8k128":
            return (g if i < 32 else g + 8, q * 32 + (i & 31))
        if shape == "m16n8k256":
            row = g if (i < 32 or 64 <= i < 96) else g + 8
            return (row, q * 32 + (i & 31) + (128 if i >= 64 else 0))
    raise ValueError((shape, t))


def b_pos(shape, t, lane, i):
    g, q = lane >> 2, lane % 4
    if t in ("f16", "bf16"):
        if shape == "m16n8k8":
            return (q * 2 + i, g)
        if shape == "m16n8k16":
            return (q * 2 + (i & 1) + (8 if i >= 2 else 0), g)
    if t in ("tf32", "f64"):
        if shape in ("m16n8k4", "m8n8k4"):
            return (q, g)
        if shape == "m16n8k8":
            return (q if i == 0 else q + 4, g)
        if shape == "m16n8k16":
            return (q + 4 * i, g)
    if t in ("s8", "u8", "e4m3", "e5m2"):
        if shape in ("m8n8k16", "m16n8k16"):
            return (q * 4 + i, g)
        if shape == "m16n8k32":
            return (q * 4 + (i & 3) + (16 if i >= 4 else 0), g)
    if t in ("s4", "u4"):
        if shape in ("m8n8k32", "m16n8k32"):
            return (q * 8 + i, g)
        if shape == "m16n8k64":
            return (q * 8 + (i & 7) + (32 if i >= 8 else 0), g)
    if t == "b1":
        if shape in ("m8n8k128", "m16n8k128"):
            return (q * 32 + i, g)
        if shape == "m16n8k256":
            return (q * 32 + (i & 31) + (128 if i >= 32 else 0), g)
    raise ValueError((shape, t))


def c_pos(shape, lane, i):
    g, q = lane >> 2, lane % 4
    if shape.startswith("m16"):
        return (g if i < 2 else g + 8, q * 2 + (i & 1))
    return (g, q * 2 + i)


# m8n8k4 .f16: four products, one per quad pair; (product, row, col)
def quad_pos(frag, lane, i, alayout="row", blayout="col", ctype="f32"):
    prod = (lane >> 2) % 4
    hi = 4 if lane >= 16 else 0
    q = lane % 4
    if frag == "a":
        if alayout == "row":
            return (prod, q + hi, i)
        return (prod, i % 4 + hi, q)
    if frag == "b":
        if blayout == "row":
            return (prod, q, i + hi)
        return (prod, i, q + hi)
    if ctype == "f16":
        return (prod, q + hi, i)
    x = (q & 1) + (i & 2)
    return (prod, x + hi, (q & 2) + (i & 1) + (i & 4))


def dims(shape):
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


# --------------------------------------------------------------------------------------------
# one mma case: matrices, registers, expected result


class Case:
    def __init__(self, rng, shape, dt, at, bt, ct, alayout="row", blayout="col", sat=False,
                 bitop=None, special=None, alias=False):
        self.shape, self.dt, self.at, self.bt, self.ct = shape, dt, at, bt, ct
        # D written into A's first registers (the instruction reads all of A, B and C first)
        self.alias = alias
        self.alayout, self.blayout, self.sat, self.bitop = alayout, blayout, sat, bitop
        m, n, k = dims(shape)
        self.quad = shape == "m8n8k4" and at == "f16"
        G = 4 if self.quad else 1
        A = [[[rand_elem(rng, at) for _ in range(k)] for _ in range(m)] for _ in range(G)]
        B = [[[rand_elem(rng, bt) for _ in range(n)] for _ in range(k)] for _ in range(G)]
        C = [[[rand_acc(rng, ct) for _ in range(n)] for _ in range(m)] for _ in range(G)]
        if special:
            special(A, B, C)
        self.A, self.B, self.C = A, B, C
        # D = C + sum_k A*B in k order after C, rounded once
        D = [[[0] * n for _ in range(m)] for _ in range(G)]
        for g in range(G):
            for r in range(m):
                for c in range(n):
                    acc = acc_value(ct, C[g][r][c])
                    for kk in range(k):
                        x, y = A[g][r][kk], B[g][kk][c]
                        if bitop == "and":
                            acc += x & y
                        elif bitop == "xor":
                            acc += x ^ y
                        elif dt == "s32":
                            acc += value(at, x) * value(bt, y)
                        else:
                            p = value(at, x) * value(bt, y)
                            acc = acc + p
                    D[g][r][c] = round_to(dt, acc, sat)
        self.D = D
        per_lane = lambda rows, cols: G * rows * cols // 32
        self.na = per_lane(m, k) // per_reg(at)
        self.nb = per_lane(k, n) // per_reg(bt)
        self.nc = per_lane(m, n) // per_reg(ct)
        self.nd = per_lane(m, n) // per_reg(dt)
        self.m, self.n, self.k = m, n, k

    def pos(self, frag, lane, i, t):
        if self.quad:
            return quad_pos(frag, lane, i, self.alayout, self.blayout, t)
        if frag == "a":
            return (0,) + a_pos(self.shape, self.at, lane, i)
        if frag == "b":
            return (0,) + b_pos(self.shape, self.bt, lane, i)
        return (0,) + c_pos(self.shape, lane, i)

    def regs(self, frag, lane):
        """The register words (32- or 64-bit) lane `lane` holds for fragment frag."""
        t = {"a": self.at, "b": self.bt, "c": self.ct, "d": self.dt}[frag]
        mat = {"a": self.A, "b": self.B, "c": self.C, "d": self.D}[frag]
        nreg = {"a": self.na, "b": self.nb, "c": self.nc, "d": self.nd}[frag]
        p, bits = per_reg(t), BITS[t]
        words = [0] * nreg
        for i in range(nreg * p):
            g, r, c = self.pos("c" if frag == "d" else frag, lane, i, t)
            words[i // p] |= mat[g][r][c] << ((i % p) * bits)
        return words

    def name(self):
        lay = f".{self.alayout}.{self.blayout}"
        sat = ".satfinite" if self.sat else ""
        tail = f".{self.bitop}.popc" if self.bitop else ""
        return (f"mma.sync.aligned.{self.shape}{lay}{sat}.{self.dt}.{self.at}.{self.bt}.{self.ct}"
                f"{tail}")


def reg_class(t, frag):
    if t == "f64":
        return "fd"
    if frag in ("c", "d") and t == "f32":
        return "f"
    return "r"


def gen_mma_file(fname, target, version, cases, title):
    """A run test executing each case once with one warp."""
    words = []  # the input array, 32-bit words
    body = []
    out_words = []  # expected output, 32-bit words
    counters = {"r": 10, "f": 0, "fd": 0}
    out_off = 0
    for ci, cs in enumerate(cases):
        # inputs of this case: [lane][a regs, b regs, c regs], 64-bit registers as two words,
        # every lane's block padded to 8 bytes
        layout = []
        for frag, t, nreg in (("a", cs.at, cs.na), ("b", cs.bt, cs.nb), ("c", cs.ct, cs.nc),
                              ("e", "b32", getattr(cs, "ne", 0))):
            for j in range(nreg):
                layout.append((frag, j, t))
        lane_words = sum(2 if t == "f64" else 1 for _, _, t in layout)
        lane_words += lane_words % 2
        base = len(words)
        for lane in range(32):
            lw = []
            regs = {f: cs.regs(f, lane) for f in "abc"}
            if getattr(cs, "ne", 0):
                regs["e"] = [cs.meta[lane]]
            for frag, j, t in layout:
                v = regs[frag][j]
                if t == "f64":
                    lw += [v & 0xFFFFFFFF, v >> 32]
                else:
                    lw.append(v)
            lw += [0] * (lane_words - len(lw))
            words += lw
        # registers
        names = {}
        for frag, t, nreg in (("a", cs.at, cs.na), ("b", cs.bt, cs.nb), ("c", cs.ct, cs.nc),
                              ("d", cs.dt, cs.nd), ("e", "b32", getattr(cs, "ne", 0))):
            cls = reg_class(t, frag)
            names[frag] = []
            for _ in range(nreg):
                names[frag].append(f"%{cls}{counters[cls]}")
                counters[cls] += 1
        if cs.alias:
            names["d"] = names["a"][:cs.nd]
        body.append(f"\t// case {ci}: {cs.name()}")
        body.append(f"\tmad.wide.u32 %rd3, %r1, {lane_words * 4}, %rd2;")
        body.append(f"\tadd.u64 %rd3, %rd3, {base * 4};")
        off = 0
        for (frag, j, t) in layout:
            reg = names[frag][j]
            ty = {"fd": "f64", "f": "f32", "r": "b32"}[reg_class(t, frag)]
            body.append(f"\tld.global.{ty} {reg}, [%rd3+{off}];")
            off += 8 if t == "f64" else 4
        vec = lambda f: "{" + ", ".join(names[f]) + "}"
        tail = f", {names['e'][0]}, {cs.sel}" if getattr(cs, "ne", 0) else ""
        if getattr(cs, "meta_vec", False):
            tail = f", {{{names['e'][0]}}}, {cs.sel}"  # the one-element vector ptxas takes
        body.append(f"\t{cs.name()} {vec('d')}, {vec('a')}, {vec('b')}, {vec('c')}{tail};")
        # outputs: [case][lane][d regs]
        d_words = cs.nd * (2 if cs.dt == "f64" else 1)
        body.append(f"\tmad.wide.u32 %rd4, %r1, {d_words * 4}, %rd1;")
        body.append(f"\tadd.u64 %rd4, %rd4, {out_off * 4};")
        off = 0
        for reg in names["d"]:
            ty = {"fd": "f64", "f": "f32", "r": "b32"}[reg_class(cs.dt, "d")]
            body.append(f"\tst.global.{ty} [%rd4+{off}], {reg};")
            off += 8 if cs.dt == "f64" else 4
        for lane in range(32):
            for v in cs.regs("d", lane):
                if cs.dt == "f64":
                    out_words += [v & 0xFFFFFFFF, v >> 32]
                else:
                    out_words.append(v)
        out_off += 32 * d_words
    write_test(fname, target, version, title, words, body, out_words, counters)


def expect_line(out_words):
    parts = []
    k = 0
    while k < len(out_words):
        j = k
        while j < len(out_words) and out_words[j] == out_words[k]:
            j += 1
        if j - k > 2:
            parts.append(f"{j - k}*0x{out_words[k]:x}")
        else:
            parts += [f"0x{w:x}" for w in out_words[k:j]]
        k = j
    lines = []
    line = "// EXPECT 0 u32:"
    for p in parts:
        line += " " + p
    lines.append(line)
    return lines


def write_test(fname, target, version, title, words, body, out_words, counters,
               extra_header=(), run=None, shared=None):
    path = os.path.join(OUT_DIR, fname)
    hdr = [f"// {title}",
           "// Generated by tests/run/tools/mma_model.py (the ISA's fragment formulas and a plain",
           "// matmul); do not edit by hand.",
           run or f"// RUN: --grid 1 --block 32 --arg u32[{len(out_words)}]"]
    hdr += list(extra_header)
    hdr += expect_line(out_words)
    src = "\n".join(hdr) + "\n\n"
    src += f".version {version}\n.target {target}\n.address_size 64\n\n"
    if words:
        src += f".global .align 16 .b32 IN[{len(words)}] = {{\n"
        for k in range(0, len(words), 8):
            src += "\t" + ", ".join(f"0x{w:08x}" for w in words[k:k + 8])
            src += ",\n" if k + 8 < len(words) else "\n"
        src += "};\n\n"
    if shared:
        src += shared + "\n"
    src += ".visible .entry k(.param .u64 out)\n{\n"
    src += f"\t.reg .b32 %r<{max(counters['r'], 10) + 1}>;\n"
    if counters["f"]:
        src += f"\t.reg .f32 %f<{counters['f'] + 1}>;\n"
    if counters["fd"]:
        src += f"\t.reg .f64 %fd<{counters['fd'] + 1}>;\n"
    src += "\t.reg .b64 %rd<10>;\n\t.reg .pred %p<4>;\n\n"
    src += "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
    src += "\tmov.u32 %r1, %tid.x;\n\tmov.u64 %rd2, IN;\n" if words else "\tmov.u32 %r1, %tid.x;\n"
    src += "\n".join(body) + "\n\tret;\n}\n"
    with open(path, "w") as f:
        f.write(src)


# --------------------------------------------------------------------------------------------
# special values


def f16_specials(A, B, C):
    """Row 0: +inf in k = 0 meets a zero in column 0 (NaN there, +inf elsewhere); row 1: -inf
    (every column -inf); row 8: 65504*x - 65504*65504, large exact products that cancel."""
    a, b = A[0], B[0]
    a[0][0] = 0x7C00
    for c in range(8):
        b[0][c] = 0x0000 if c == 0 else 0x3C00
    a[1][3] = 0xFC00
    for c in range(8):
        b[3][c] = 0x3C00
    a[8] = [0x7BFF, 0xFBFF] + [0] * 14
    for c in range(8):
        b[1][c] = 0x7BFF


def int_sat(A, B, C):
    # first row's accumulators at the top of the range: the sum overflows
    for c in range(8):
        C[0][0][c] = 0x7FFFFFF0
        C[0][1][c] = 0x80000010


def main():
    rng = random.Random(16)
    os.makedirs(OUT_DIR, exist_ok=True)
    gen_mma_file("mma_f16.ptx", "sm_80", "8.0", [
        Case(rng, "m16n8k16", "f32", "f16", "f16", "f32"),
        Case(rng, "m16n8k16", "f16", "f16", "f16", "f16"),
        Case(rng, "m16n8k8", "f32", "f16", "f16", "f32"),
        Case(rng, "m16n8k8", "f16", "f16", "f16", "f16"),
        Case(rng, "m16n8k16", "f32", "f16", "f16", "f32", special=f16_specials),
        Case(rng, "m16n8k16", "f16", "f16", "f16", "f16", alias=True),
    ], "mma.sync.aligned .f16 multiplicands: m16n8k16 and m16n8k8, f32/f16 accumulators, inf/NaN,"
       " D in A's registers")
    gen_mma_file("mma_bf16_tf32.ptx", "sm_80", "8.0", [
        Case(rng, "m16n8k16", "f32", "bf16", "bf16", "f32"),
        Case(rng, "m16n8k8", "f32", "bf16", "bf16", "f32"),
        Case(rng, "m16n8k8", "f32", "tf32", "tf32", "f32"),
        Case(rng, "m16n8k4", "f32", "tf32", "tf32", "f32"),
    ], "mma.sync.aligned .bf16 and .tf32 (low 13 bits of the inputs ignored)")
    gen_mma_file("mma_m8n8k4_f16.ptx", "sm_80", "8.0", [
        Case(rng, "m8n8k4", "f32", "f16", "f16", "f32", "row", "col"),
        Case(rng, "m8n8k4", "f16", "f16", "f16", "f16", "col", "row"),
        Case(rng, "m8n8k4", "f32", "f16", "f16", "f16", "row", "row"),
        Case(rng, "m8n8k4", "f16", "f16", "f16", "f16", "row", "col"),
    ], "mma.sync.aligned.m8n8k4 .f16: four products on quad pairs, every layout")
    gen_mma_file("mma_fp8.ptx", "sm_89", "8.7", [
        Case(rng, "m16n8k32", "f32", "e4m3", "e4m3", "f32"),
        Case(rng, "m16n8k32", "f32", "e5m2", "e5m2", "f32"),
        Case(rng, "m16n8k32", "f32", "e4m3", "e5m2", "f32"),
        Case(rng, "m16n8k32", "f32", "e5m2", "e4m3", "f32"),
        Case(rng, "m16n8k32", "f16", "e4m3", "e4m3", "f16"),
        Case(rng, "m16n8k16", "f32", "e5m2", "e4m3", "f32"),
        Case(rng, "m16n8k16", "f16", "e4m3", "e5m2", "f16"),
    ], "mma.sync.aligned.m16n8k32/k16 .e4m3/.e5m2 (fp8) with f32 and f16 accumulators")
    gen_mma_file("mma_int.ptx", "sm_80", "8.0", [
        Case(rng, "m16n8k32", "s32", "s8", "s8", "s32"),
        Case(rng, "m16n8k32", "s32", "u8", "s8", "s32", special=int_sat),
        Case(rng, "m16n8k32", "s32", "s8", "u8", "s32", sat=True, special=int_sat),
        Case(rng, "m16n8k16", "s32", "u8", "u8", "s32"),
        Case(rng, "m8n8k16", "s32", "s8", "s8", "s32"),
        Case(rng, "m16n8k64", "s32", "s4", "s4", "s32"),
        Case(rng, "m16n8k64", "s32", "u4", "s4", "s32", sat=True, special=int_sat),
        Case(rng, "m16n8k32", "s32", "u4", "u4", "s32"),
        Case(rng, "m8n8k32", "s32", "s4", "u4", "s32"),
    ], "mma.sync.aligned integer: s8/u8 and s4/u4, wrapping and .satfinite")
    gen_mma_file("mma_b1.ptx", "sm_80", "8.0", [
        Case(rng, "m16n8k256", "s32", "b1", "b1", "s32", bitop="xor"),
        Case(rng, "m16n8k256", "s32", "b1", "b1", "s32", bitop="and"),
        Case(rng, "m16n8k128", "s32", "b1", "b1", "s32", bitop="xor"),
        Case(rng, "m8n8k128", "s32", "b1", "b1", "s32", bitop="xor"),
    ], "mma.sync.aligned .b1: .xor.popc and .and.popc")
    gen_mma_file("mma_f64.ptx", "sm_90", "8.0", [
        Case(rng, "m8n8k4", "f64", "f64", "f64", "f64"),
        Case(rng, "m16n8k4", "f64", "f64", "f64", "f64"),
        Case(rng, "m16n8k8", "f64", "f64", "f64", "f64"),
        Case(rng, "m16n8k16", "f64", "f64", "f64", "f64"),
    ], "mma.sync.aligned .f64: m8n8k4, m16n8k4, m16n8k8, m16n8k16")
    gen_ldst(rng)
    gen_sparse(random.Random(1616))


# --------------------------------------------------------------------------------------------
# ldmatrix / stmatrix / movmatrix


def gen_ldst(rng):
    """ldmatrix .x1/.x2/.x4 (plain and .trans), movmatrix, stmatrix (sm_90)."""
    # shared memory: 4 matrices of 8 rows; row r of matrix j starts at byte 32*(8j+r)+16*(r%2)
    # (rows not contiguous, to show each row comes from its own lane's address); 16-bit values
    smem_halves = 4 * 8 * 16
    S = [rng.getrandbits(16) for _ in range(smem_halves)]
    words = [S[2 * k] | S[2 * k + 1] << 16 for k in range(smem_halves // 2)]

    def row_addr(j, r):
        return 32 * (8 * j + r) + 16 * (r % 2)

    def elem(j, r, c):
        return S[(row_addr(j, r) >> 1) + c]

    def frag(j, lane, trans):
        r, c = lane // 4, 2 * (lane % 4)
        if trans:
            return elem(j, c, r) | elem(j, c + 1, r) << 16
        return elem(j, r, c) | elem(j, r, c + 1) << 16

    body = ["\t// copy IN to shared memory (each lane 8 words)",
            "\tmov.u32 %r2, 0;",
            "$copy:",
            "\tmad.lo.u32 %r3, %r1, 8, %r2;",
            "\tmul.wide.u32 %rd3, %r3, 4;",
            "\tadd.u64 %rd4, %rd2, %rd3;",
            "\tld.global.b32 %r4, [%rd4];",
            "\tshl.b32 %r5, %r3, 2;",
            "\tmov.u32 %r6, S;",
            "\tadd.u32 %r6, %r6, %r5;",
            "\tst.shared.b32 [%r6], %r4;",
            "\tadd.u32 %r2, %r2, 1;",
            "\tsetp.lt.u32 %p1, %r2, 8;",
            "\t@%p1 bra $copy;",
            "\tbar.warp.sync -1;",
            "\t// this lane's row address: matrix j = lane/8, row r = lane%8",
            "\tshr.u32 %r7, %r1, 3;",
            "\tand.b32 %r8, %r1, 7;",
            "\tmad.lo.u32 %r9, %r7, 8, %r8;",
            "\tshl.b32 %r9, %r9, 5;",
            "\tand.b32 %r10, %r8, 1;",
            "\tshl.b32 %r10, %r10, 4;",
            "\tadd.u32 %r9, %r9, %r10;",
            "\tmov.u32 %r6, S;",
            "\tadd.u32 %r9, %r9, %r6;",
            "\tcvt.u64.u32 %rd5, %r9;"]
    out = []  # [lane][result words of all steps]
    steps = []
    nxt = [20]

    def regs(n):
        r = [f"%r{nxt[0] + k}" for k in range(n)]
        nxt[0] += n
        return r

    stores = []
    # ldmatrix forms
    for num in (1, 2, 4):
        for trans in (False, True):
            rs = regs(num)
            t = ".trans" if trans else ""
            ss = ".shared" if num != 2 else ".shared::cta"
            body.append(f"\tldmatrix.sync.aligned.m8n8.x{num}{t}{ss}.b16 {{{', '.join(rs)}}}, [%r9];")
            stores += rs
            steps.append([[frag(j, lane, trans) for j in range(num)] for lane in range(32)])
    # a generic address (no state space) of the same rows
    rs = regs(4)
    body.append("\tcvta.shared.u64 %rd6, %rd5;")
    body.append(f"\tldmatrix.sync.aligned.m8n8.x4.b16 {{{', '.join(rs)}}}, [%rd6];")
    stores += rs
    steps.append([[frag(j, lane, False) for j in range(4)] for lane in range(32)])
    # the destination vector starts with the address register
    rs = regs(4)
    body.append(f"\tmov.u32 {rs[0]}, %r9;")
    body.append(f"\tldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{', '.join(rs)}}}, [{rs[0]}];")
    stores += rs
    steps.append([[frag(j, lane, True) for j in range(4)] for lane in range(32)])
    # movmatrix of matrix 0's plain fragment (the first x1 load's register)
    rs = regs(1)
    body.append(f"\tmovmatrix.sync.aligned.m8n8.trans.b16 {rs[0]}, %r20;")
    stores += rs
    steps.append([[frag(0, lane, True)] for lane in range(32)])
    nwords = len(stores)
    body.append(f"\tmad.wide.u32 %rd7, %r1, {nwords * 4}, %rd1;")
    for k, r in enumerate(stores):
        body.append(f"\tst.global.b32 [%rd7+{k * 4}], {r};")
    for lane in range(32):
        row = []
        for st in steps:
            row += st[lane]
        out += row
    counters = {"r": nxt[0], "f": 0, "fd": 0}
    shared = ".shared .align 16 .b8 S[1024];\n"
    write_test("ldmatrix.ptx", "sm_80", "8.0",
               "ldmatrix .m8n8 .x1/.x2/.x4 (plain, .trans, .shared, .shared::cta, generic, into its "
               "address register) and movmatrix.trans", words, body, out, counters, shared=shared)
    gen_stmatrix(rng)


def gen_stmatrix(rng):
    """stmatrix .x1/.x2/.x4 (plain and .trans): lanes hold random fragments; each matrix is
    stored to shared memory, then the whole shared array is copied out."""
    frags = [[rng.getrandbits(32) for _ in range(4)] for _ in range(32)]  # [lane][reg]
    words = [w for lane in frags for w in lane]

    def elem(j, r, c):  # element (r, c) of matrix j as the fragments hold it
        w = frags[r * 4 + c // 2][j]
        return (w >> (16 * (c % 2))) & 0xFFFF

    # store plan: (num, trans, base byte offset); row r of matrix j at base + 16*(8j + r)
    plan = [(1, False, 0), (2, True, 256), (4, False, 512), (4, True, 1024)]
    size = 1536
    mem = [0] * (size // 2)
    for num, trans, base in plan:
        for j in range(num):
            for r in range(8):
                for c in range(8):
                    v = elem(j, c, r) if trans else elem(j, r, c)
                    mem[(base + 16 * (8 * j + r)) // 2 + c] = v
    out = [mem[2 * k] | mem[2 * k + 1] << 16 for k in range(size // 4)]
    body = ["\tmad.wide.u32 %rd3, %r1, 16, %rd2;",
            "\tld.global.v4.b32 {%r20, %r21, %r22, %r23}, [%rd3];",
            "\tmov.u32 %r6, S;",
            "\t// zero the shared array (each lane 12 words)",
            "\tmov.u32 %r2, 0;",
            "$zero:",
            "\tmad.lo.u32 %r3, %r1, 12, %r2;",
            "\tshl.b32 %r4, %r3, 2;",
            "\tadd.u32 %r4, %r4, %r6;",
            "\tst.shared.b32 [%r4], 0;",
            "\tadd.u32 %r2, %r2, 1;",
            "\tsetp.lt.u32 %p1, %r2, 12;",
            "\t@%p1 bra $zero;",
            "\tbar.warp.sync -1;",
            "\tshr.u32 %r7, %r1, 3;",
            "\tand.b32 %r8, %r1, 7;",
            "\tmad.lo.u32 %r9, %r7, 8, %r8;",
            "\tshl.b32 %r9, %r9, 4;",
            "\tadd.u32 %r9, %r9, %r6;"]
    regs = ["%r20", "%r21", "%r22", "%r23"]
    for num, trans, base in plan:
        t = ".trans" if trans else ""
        body.append(f"\tstmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 [%r9+{base}], "
                    f"{{{', '.join(regs[:num])}}};")
    body += ["\tbar.warp.sync -1;",
             "\t// copy the shared array out: lane l copies words 12l .. 12l+11",
             "\tmov.u32 %r2, 0;",
             "$out:",
             "\tmad.lo.u32 %r3, %r1, 12, %r2;",
             "\tshl.b32 %r4, %r3, 2;",
             "\tadd.u32 %r5, %r4, %r6;",
             "\tld.shared.b32 %r10, [%r5];",
             "\tcvt.u64.u32 %rd4, %r4;",
             "\tadd.u64 %rd4, %rd4, %rd1;",
             "\tst.global.b32 [%rd4], %r10;",
             "\tadd.u32 %r2, %r2, 1;",
             "\tsetp.lt.u32 %p1, %r2, 12;",
             "\t@%p1 bra $out;"]
    counters = {"r": 24, "f": 0, "fd": 0}
    write_test("stmatrix.ptx", "sm_90", "8.0",
               "stmatrix .m8n8 .x1/.x2/.x4, plain and .trans", words, body, out, counters,
               shared=f".shared .align 16 .b8 S[{size}];\n")


# --------------------------------------------------------------------------------------------
# mma.sp / mma.sp::ordered_metadata: structured sparse A
#
# From the ISA's sections "Sparse matrix storage" and "Matrix fragments for multiply-accumulate
# operation with sparse matrix A". A row of the dense M x K matrix A is cut into chunks: four
# elements (.f16/.bf16, .s8/.u8, .e4m3/.e5m2) of which two are stored, two elements (.tf32) of
# which one is stored, or eight elements (.s4/.u4) of which two aligned pairs are stored. A 4-bit
# metadata group describes a chunk: two 2-bit indices, the first stored element's (pair's) in the
# low bits; .tf32 writes its index as 0b0100 (element 0) or 0b1110 (element 1).
# ::ordered_metadata needs the indices increasing; plain .sp also accepts them decreasing.
#
# The model is a compressor: it draws a dense sparse A, then builds each lane's compressed
# registers with the per-shape formulas below (row and first column of a_i) and each quad's
# metadata words with the per-shape metadata table below; D is a plain matmul of the dense A.


def sp_a_pos(shape, t, lane, i):
    """(row, first column) of the dense columns compressed element a_i is taken from (it covers
    firstcol..lastcol as the ISA's per-shape formulas give them)."""
    g, q = lane >> 2, lane % 4
    if t in ("f16", "bf16"):
        if shape == "m16n8k16":
            return (g if i < 2 else g + 8, q * 4)
        if shape == "m16n8k32":
            return (g if (i < 2 or 4 <= i < 6) else g + 8, q * 4 + (16 if i >= 4 else 0))
    if t == "tf32":
        if shape == "m16n8k8":
            return (g if i == 0 else g + 8, q * 2)
        if shape == "m16n8k16":
            return (g if i in (0, 2) else g + 8, q * 2 + (8 if i >= 2 else 0))
    if t in ("s8", "u8", "e4m3", "e5m2"):
        if shape == "m16n8k32":
            return (g if i < 4 else g + 8, q * 8)
        if shape == "m16n8k64":
            return (g if (i < 4 or 8 <= i < 12) else g + 8, q * 8 + (32 if i >= 8 else 0))
    if t in ("s4", "u4"):
        if shape == "m16n8k64":
            return (g if i < 8 else g + 8, q * 16)
        if shape == "m16n8k128":
            return (g if (i < 8 or 16 <= i < 24) else g + 8, q * 16 + (64 if i >= 16 else 0))
    raise ValueError((shape, t))


def sp_b_pos(shape, t, lane, i):
    """B fragments: the dense figures, plus the shapes only mma.sp has (f16 k32, tf32 k16, 8-bit
    k64, 4-bit k128), whose figures continue the same pattern down K."""
    g, q = lane >> 2, lane % 4
    if t in ("f16", "bf16") and shape == "m16n8k32":
        return (q * 2 + (i & 1) + 8 * (i >> 1), g)
    if t in ("s8", "u8", "e4m3", "e5m2") and shape == "m16n8k64":
        return (q * 4 + (i & 3) + 16 * (i >> 2), g)
    if t in ("s4", "u4") and shape == "m16n8k128":
        return (q * 8 + (i & 7) + 32 * (i >> 3), g)
    return b_pos(shape, t, lane, i)


def sp_chunk(t):
    """(dense elements per chunk, stored elements per chunk, elements per 2-bit index)."""
    if t == "tf32":
        return (2, 1, 1)
    if t in ("s4", "u4"):
        return (8, 4, 2)
    return (4, 2, 1)


def sp_meta_threads(shape, t):
    return {("f16", "m16n8k16"): 1, ("f16", "m16n8k32"): 2, ("bf16", "m16n8k16"): 1,
            ("bf16", "m16n8k32"): 2, ("tf32", "m16n8k8"): 1, ("tf32", "m16n8k16"): 2,
            ("s8", "m16n8k32"): 2, ("u8", "m16n8k32"): 2, ("s8", "m16n8k64"): 4,
            ("u8", "m16n8k64"): 4, ("e4m3", "m16n8k64"): 4, ("e5m2", "m16n8k64"): 4,
            ("s4", "m16n8k64"): 2, ("u4", "m16n8k64"): 2, ("s4", "m16n8k128"): 4,
            ("u4", "m16n8k128"): 4}[(t, shape)]


def sp_meta_loc(shape, t, sel, row, c):
    """(thread of the quad, low bit) of the 4-bit group of chunk c of row `row` (the quad of
    groupID row % 8), as the metadata figures lay it out: 16-bit types and tf32 put row groupID
    in bits 0-15 and groupID+8 in bits 16-31 of one thread per 16 (f16) or 8 (tf32) columns;
    the 8-bit and 4-bit types give each thread 32 bits of one row: row groupID to the first
    thread, groupID+8 to the second, then (K = 64 s8 / 128 s4) the same for the second half of
    the columns."""
    hi = 1 if row >= 8 else 0
    if t in ("f16", "bf16", "tf32"):
        per = 4  # chunks per 16 bits
        return (sel * sp_meta_threads(shape, t) + c // per, 16 * hi + 4 * (c % per))
    per = 8  # chunks per 32 bits
    if sp_meta_threads(shape, t) == 2:
        return (2 * sel + hi, 4 * c)
    return (hi + 2 * (c // per), 4 * (c % per))


class SparseCase:
    """One mma.sp: dense sparse A (its kept positions), compressed registers, metadata, D."""

    def __init__(self, rng, shape, dt, at, bt, ct, sel, ordered, sat=False, special=None,
                 unordered=False, zero_chunks=False, alias=False):
        self.shape, self.dt, self.at, self.bt, self.ct = shape, dt, at, bt, ct
        self.sel, self.ordered, self.sat, self.alias = sel, ordered, sat, alias
        m, n, k = dims(shape)
        self.m, self.n, self.k = m, n, k
        ce, cs, per_idx = sp_chunk(at)
        nchunks = k // ce
        # kept index lists per (row, chunk): indices in units of per_idx elements
        units = ce // per_idx
        keep = [[sorted(rng.sample(range(units), cs // per_idx)) for _ in range(nchunks)]
                for _ in range(m)]
        # plain .sp may list the two indices in decreasing order
        rev = [[unordered and at != "tf32" and rng.random() < 0.5 for _ in range(nchunks)]
               for _ in range(m)]
        # chunks with nothing stored and metadata 0b0000 (undefined, harmless: all zero)
        zero = [[zero_chunks and r in (3, 12) and c % 2 == 0 for c in range(nchunks)]
                for r in range(m)]
        A = [[0] * k for _ in range(m)]
        for r in range(m):
            for c in range(nchunks):
                if zero[r][c]:
                    continue
                for u in keep[r][c]:
                    for e in range(per_idx):
                        A[r][c * ce + u * per_idx + e] = rand_elem(rng, at)
        B = [[rand_elem(rng, bt) for _ in range(n)] for _ in range(k)]
        C = [[rand_acc(rng, ct) for _ in range(n)] for _ in range(m)]
        if special:
            special([A], [B], [C])
        self.A, self.B, self.C = A, B, C
        # D: plain matmul of the dense A, C first then k in order
        self.D = [[0] * n for _ in range(m)]
        for r in range(m):
            for c in range(n):
                acc = acc_value(ct, C[r][c])
                for kk in range(k):
                    acc = acc + value(at, A[r][kk]) * value(bt, B[kk][c])
                self.D[r][c] = round_to(dt, acc, sat)
        # compressed A: lane's element i is the j-th stored element of its row's columns
        # firstcol.., where j counts the elements of the lane with the same (row, firstcol)
        p = per_reg(at)
        na = m * k // 2 // 32 // p
        self.na, self.nb = na, k * n // 32 // per_reg(bt)
        self.nc, self.nd = m * n // 32 // per_reg(ct), m * n // 32 // per_reg(dt)
        self.ne = 1
        self.aregs = []
        for lane in range(32):
            words = [0] * na
            seen = {}
            for i in range(na * p):
                row, first = sp_a_pos(shape, at, lane, i)
                j = seen.get((row, first), 0)
                seen[(row, first)] = j + 1
                c = first // ce + j // cs  # chunk
                u = (j % cs) // per_idx  # stored unit of the chunk
                kept = keep[row][c][::-1] if rev[row][c] else keep[row][c]
                col = c * ce + kept[u] * per_idx + (j % per_idx)
                words[i // p] |= A[row][col] << ((i % p) * BITS[at])
            self.aregs.append(words)
        # metadata: the selected threads of each quad get the groups, every other lane noise
        self.meta = [rng.getrandbits(32) for _ in range(32)]
        T = sp_meta_threads(shape, at)
        for quad in range(8):
            for t in range(T):
                self.meta[4 * quad + sel * T + t] = 0
            for row in (quad, quad + 8):
                for c in range(nchunks):
                    kept = keep[row][c][::-1] if rev[row][c] else keep[row][c]
                    if zero[row][c]:
                        grp = 0
                    elif at == "tf32":
                        grp = 0b0100 if kept[0] == 0 else 0b1110
                    else:
                        grp = kept[0] | kept[1] << 2
                    th, bit = sp_meta_loc(shape, at, sel, row, c)
                    assert sel * T <= th < sel * T + T
                    self.meta[4 * quad + th] |= grp << bit

    def regs(self, frag, lane):
        if frag == "a":
            return self.aregs[lane]
        t = {"b": self.bt, "c": self.ct, "d": self.dt}[frag]
        mat = {"b": self.B, "c": self.C, "d": self.D}[frag]
        nreg = {"b": self.nb, "c": self.nc, "d": self.nd}[frag]
        p, bits = per_reg(t), BITS[t]
        words = [0] * nreg
        for i in range(nreg * p):
            r, c = sp_b_pos(self.shape, t, lane, i) if frag == "b" else c_pos(self.shape, lane, i)
            words[i // p] |= mat[r][c] << ((i % p) * bits)
        return words

    def name(self):
        sp = "sp::ordered_metadata" if self.ordered else "sp"
        sat = ".satfinite" if self.sat else ""
        return (f"mma.{sp}.sync.aligned.{self.shape}.row.col{sat}.{self.dt}.{self.at}.{self.bt}"
                f".{self.ct}")


def f16_sparse_specials(A, B, C):
    """An infinity in A's row 0 meets a zero in B's column 0 (NaN there, +inf elsewhere)."""
    a, b = A[0], B[0]
    col = next(c for c in range(len(a[0])) if a[0][c] != 0)
    a[0][col] = 0x7C00
    for c in range(8):
        b[col][c] = 0x0000 if c == 0 else 0x3C00


def gen_sparse(rng):
    S = SparseCase
    gen_mma_file("mma_sp_f16.ptx", "sm_80", "8.5", [
        S(rng, "m16n8k16", "f32", "f16", "f16", "f32", 0, True),
        S(rng, "m16n8k16", "f32", "f16", "f16", "f32", 1, False, unordered=True),
        S(rng, "m16n8k16", "f32", "f16", "f16", "f32", 2, True),
        S(rng, "m16n8k16", "f32", "f16", "f16", "f32", 3, False),
        S(rng, "m16n8k16", "f16", "f16", "f16", "f16", 0, False, unordered=True),
        S(rng, "m16n8k16", "f16", "f16", "f16", "f16", 1, True),
        S(rng, "m16n8k16", "f16", "f16", "f16", "f16", 2, False),
        S(rng, "m16n8k16", "f16", "f16", "f16", "f16", 3, True),
        S(rng, "m16n8k32", "f32", "f16", "f16", "f32", 0, False, unordered=True),
        S(rng, "m16n8k32", "f32", "f16", "f16", "f32", 1, True),
        S(rng, "m16n8k32", "f16", "f16", "f16", "f16", 0, True),
        S(rng, "m16n8k32", "f16", "f16", "f16", "f16", 1, False, zero_chunks=True),
        S(rng, "m16n8k16", "f32", "f16", "f16", "f32", 0, True, special=f16_sparse_specials),
        S(rng, "m16n8k32", "f16", "f16", "f16", "f16", 1, True, alias=True),
    ], "mma.sp / mma.sp::ordered_metadata .f16: m16n8k16 and m16n8k32, f32/f16 accumulators,"
       " every sparsity selector, unordered and all-zero (0b0000) metadata for plain .sp, inf/NaN,"
       " D in A's registers")
    gen_mma_file("mma_sp_bf16_tf32.ptx", "sm_80", "8.5", [
        S(rng, "m16n8k16", "f32", "bf16", "bf16", "f32", 0, True),
        S(rng, "m16n8k16", "f32", "bf16", "bf16", "f32", 1, False, unordered=True),
        S(rng, "m16n8k16", "f32", "bf16", "bf16", "f32", 2, True),
        S(rng, "m16n8k16", "f32", "bf16", "bf16", "f32", 3, False),
        S(rng, "m16n8k32", "f32", "bf16", "bf16", "f32", 0, True),
        S(rng, "m16n8k32", "f32", "bf16", "bf16", "f32", 1, False, unordered=True),
        S(rng, "m16n8k8", "f32", "tf32", "tf32", "f32", 0, False),
        S(rng, "m16n8k8", "f32", "tf32", "tf32", "f32", 1, True),
        S(rng, "m16n8k8", "f32", "tf32", "tf32", "f32", 2, False, zero_chunks=True),
        S(rng, "m16n8k8", "f32", "tf32", "tf32", "f32", 3, True),
        S(rng, "m16n8k16", "f32", "tf32", "tf32", "f32", 0, True),
        S(rng, "m16n8k16", "f32", "tf32", "tf32", "f32", 1, False),
    ], "mma.sp / mma.sp::ordered_metadata .bf16 (m16n8k16, m16n8k32) and .tf32 (m16n8k8,"
       " m16n8k16, 1:2 sparsity, low 13 input bits ignored), every sparsity selector")
    gen_mma_file("mma_sp_fp8.ptx", "sm_89", "8.5", [
        S(rng, "m16n8k64", "f32", "e4m3", "e4m3", "f32", 0, True),
        S(rng, "m16n8k64", "f32", "e5m2", "e5m2", "f32", 0, False, unordered=True),
        S(rng, "m16n8k64", "f32", "e4m3", "e5m2", "f32", 0, False),
        S(rng, "m16n8k64", "f32", "e5m2", "e4m3", "f32", 0, True),
    ], "mma.sp / mma.sp::ordered_metadata .m16n8k64 .e4m3/.e5m2 (sm_89), any mix")
    gen_mma_file("mma_sp_int.ptx", "sm_80", "8.5", [
        S(rng, "m16n8k32", "s32", "s8", "s8", "s32", 0, True),
        S(rng, "m16n8k32", "s32", "u8", "s8", "s32", 1, False, unordered=True),
        S(rng, "m16n8k32", "s32", "s8", "u8", "s32", 0, False, sat=True, special=int_sat),
        S(rng, "m16n8k32", "s32", "u8", "u8", "s32", 1, True, special=int_sat),
        S(rng, "m16n8k64", "s32", "s8", "s8", "s32", 0, False, unordered=True),
        S(rng, "m16n8k64", "s32", "u8", "s8", "s32", 0, True, sat=True, special=int_sat),
        S(rng, "m16n8k64", "s32", "s4", "s4", "s32", 0, True),
        S(rng, "m16n8k64", "s32", "u4", "s4", "s32", 1, False, unordered=True),
        S(rng, "m16n8k64", "s32", "s4", "u4", "s32", 1, True, sat=True, special=int_sat),
        S(rng, "m16n8k128", "s32", "u4", "u4", "s32", 0, False, zero_chunks=True),
        S(rng, "m16n8k128", "s32", "s4", "u4", "s32", 0, True, sat=True, special=int_sat),
        S(rng, "m16n8k128", "s32", "u4", "s4", "s32", 0, True, special=int_sat),
    ], "mma.sp / mma.sp::ordered_metadata integer: s8/u8 m16n8k32/k64, s4/u4 m16n8k64/k128,"
       " every sparsity selector, wrapping and .satfinite")
    # the metadata operand written as a one-element vector {%r} (ptxas takes it)
    rng = random.Random(1210)
    vec = [S(rng, "m16n8k16", "f32", "f16", "f16", "f32", 2, True),
           S(rng, "m16n8k32", "s32", "s8", "u8", "s32", 1, False, unordered=True),
           S(rng, "m16n8k64", "f32", "e4m3", "e5m2", "f32", 0, True)]
    for cs in vec:
        cs.meta_vec = True
    gen_mma_file("mma_sp_meta_vector.ptx", "sm_89", "8.5", vec,
                 "mma.sp / mma.sp::ordered_metadata with the metadata operand written {%r}")


if __name__ == "__main__":
    main()
