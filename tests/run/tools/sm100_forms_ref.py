#!/usr/bin/env python3
"""Reference model and generator for the sm_100 float forms of tests/run:

  float/f32x2_arith.ptx      add/sub/mul{.rnd}{.ftz}.f32x2, fma.rnd{.ftz}.f32x2
  float/mixed_precision.ptx  add/sub{.rnd}{.sat}.f32.{f16,bf16}, fma.rnd{.sat}.f32.{f16,bf16}
  float/minmax3_f32.ptx      min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c
  cvt/fp4_fp6_ue8m0.ptx      cvt to/from .e2m1x2 .e2m3x2 .e3m2x2 and .ue8m0x2
  cvt/rs_f16x2_bf16x2.ptx    cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 (stochastic rounding)
  cvt/narrow_bf16x2.ptx      cvt between .bf16x2 and the 4-, 6- and 8-bit formats (PTX 9.1)

Written from the PTX ISA text, independently of ptxvm: values are exact Fractions, and one
generic rounding routine (`round_bin`) rounds an exact value to a binary format per .rn .rz .rm
.rp the way IEEE 754 describes it (gradual underflow, overflow to inf or MAX by direction).
The .f32x2 forms are the .f32 operation on each 32-bit half (element 0 in bits 0..31); the
mixed-precision forms widen the half operand(s) exactly and round the .f32 result once; the
three-input min/max is the minimum/maximum of the three (NaN inputs passed over unless .NaN,
.abs on every input); NaN results are ptxvm's documented canonical NaN 0x7fffffff.

Run `python3 sm100_forms_ref.py write` to rewrite the six test files (expected values and
kernels), `python3 sm100_forms_ref.py` to print them.
"""
import sys
from fractions import Fraction as Fr
from pathlib import Path

NAN = "nan"
INF = "inf"
NINF = "-inf"
CNAN32 = 0x7FFFFFFF


# ---------------------------------------------------------------- formats

class Fmt:
    def __init__(self, ebits, mbits, ieee=True):
        self.e, self.m, self.ieee = ebits, mbits, ieee
        self.bias = (1 << (ebits - 1)) - 1

    def decode(self, bits):
        """Exact value of `bits`: a Fraction (signed zero as (0, neg)), INF/NINF or NAN."""
        s = bits >> (self.e + self.m) & 1
        ex = bits >> self.m & ((1 << self.e) - 1)
        fr = bits & ((1 << self.m) - 1)
        if self.ieee and ex == (1 << self.e) - 1:
            if fr:
                return NAN
            return NINF if s else INF
        if ex == 0:
            v = Fr(fr, 1 << self.m) * Fr(2) ** (1 - self.bias)
        else:
            v = (1 + Fr(fr, 1 << self.m)) * Fr(2) ** (ex - self.bias)
        return (-v if s else v, bool(s))

    def max_mag_bits(self):
        top = (1 << self.e) - (2 if self.ieee else 1)
        return top << self.m | ((1 << self.m) - 1)


F32 = Fmt(8, 23)
F16 = Fmt(5, 10)
BF16 = Fmt(8, 7)
E2M1 = Fmt(2, 1, ieee=False)
E2M3 = Fmt(2, 3, ieee=False)
E3M2 = Fmt(3, 2, ieee=False)


def round_bin(fmt, x, mode, satfinite=False):
    """Round the exact nonzero Fraction x into fmt's bits per mode ('rn','rz','rm','rp')."""
    neg = x < 0
    a = -x if neg else x
    emin = 1 - fmt.bias
    e = 0
    while Fr(2) ** e > a:
        e -= 1
    while Fr(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    q = Fr(2) ** (e - fmt.m)  # weight of the last fraction bit
    n = a / q
    lo = n.numerator // n.denominator
    rem = n - lo
    if rem == 0:
        r = lo
    elif mode == "rn":
        r = lo + 1 if rem > Fr(1, 2) or (rem == Fr(1, 2) and lo % 2) else lo
    elif mode == "rz":
        r = lo
    elif mode == "rp":
        r = lo if neg else lo + 1
    elif mode == "rm":
        r = lo + 1 if neg else lo
    else:
        raise ValueError(mode)
    val = r * q
    sign = 1 << (fmt.e + fmt.m)
    maxb = fmt.max_mag_bits()
    maxv = fmt.decode(maxb)[0]
    if val > maxv:
        to_max = satfinite or not fmt.ieee or mode == "rz" or (mode == "rp" and neg) or (mode == "rm" and not neg)
        mag = maxb if to_max else ((1 << fmt.e) - 1) << fmt.m
        return (sign if neg else 0) | mag
    # encode val exactly
    if val < Fr(2) ** emin:
        mag = int(val / Fr(2) ** (emin - fmt.m))
    else:
        ee = 0
        while Fr(2) ** ee > val:
            ee -= 1
        while Fr(2) ** (ee + 1) <= val:
            ee += 1
        frac = int((val / Fr(2) ** ee - 1) * (1 << fmt.m))
        mag = (ee + fmt.bias) << fmt.m | frac
    return (sign if neg else 0) | mag


def to_f32(v, mode, ftz=False, sat=False):
    """An exact result (Fraction, (0, neg) zero tuple, INF, NINF, NAN) as f32 bits."""
    if v == NAN:
        return 0 if sat else CNAN32
    if v in (INF, NINF):
        b = 0x7F800000 if v == INF else 0xFF800000
    elif v[0] == 0:
        b = 0x80000000 if v[1] else 0
    else:
        b = round_bin(F32, v[0], mode)
    if ftz and (b & 0x7FFFFFFF) < 0x00800000:
        b &= 0x80000000
    if sat:
        x = F32.decode(b)
        if x == NAN or x == NINF or (isinstance(x, tuple) and (x[1] or x[0] <= 0)):
            b = 0
        elif x == INF or x[0] > 1:
            b = 0x3F800000
    return b


def val32(bits, ftz=False):
    """Decoded f32 input, flushed first with ftz."""
    if ftz and (bits & 0x7FFFFFFF) < 0x00800000:
        bits &= 0x80000000
    return F32.decode(bits)


def is_zero(x):
    return isinstance(x, tuple) and x[0] == 0


def num(x):
    """Fraction of a finite decoded value (zeros give 0)."""
    return x[0]


# ---------------------------------------------------------------- exact arithmetic with specials

def add(x, y, mode):
    if NAN in (x, y):
        return NAN
    if x in (INF, NINF) or y in (INF, NINF):
        if {x, y} == {INF, NINF}:
            return NAN
        return x if x in (INF, NINF) else y
    s = num(x) + num(y)
    if s == 0:
        if is_zero(x) and is_zero(y) and x[1] and y[1]:
            return (Fr(0), True)
        if is_zero(x) and is_zero(y):
            return (Fr(0), False) if mode != "rm" or not (x[1] or y[1]) else (Fr(0), True)
        return (Fr(0), mode == "rm")
    return (s, s < 0)


def neg(x):
    if x == NAN:
        return NAN
    if x == INF:
        return NINF
    if x == NINF:
        return INF
    return (-x[0], not x[1])


def mul(x, y):
    if NAN in (x, y):
        return NAN
    xi, yi = x in (INF, NINF), y in (INF, NINF)
    sx = x == NINF if xi else x[1]
    sy = y == NINF if yi else y[1]
    if xi or yi:
        if (not xi and is_zero(x)) or (not yi and is_zero(y)):
            return NAN
        return NINF if sx != sy else INF
    p = num(x) * num(y)
    if p == 0:
        return (Fr(0), sx != sy)
    return (p, p < 0)


def fma(x, y, z, mode):
    p = mul(x, y)
    return add(p, z, mode)


# ---------------------------------------------------------------- helpers for the PTX files

HEADER = """.version {ver}
.target {target}
.address_size 64
"""


def u64_of(lo, hi):
    return lo | hi << 32


def emit(path, comment, run, expects, body_lines, params, regs, ver="8.6", target="sm_100a"):
    out = []
    for c in comment:
        out.append("// " + c if c else "//")
    out.append("// RUN: " + run)
    for e in expects:
        out.append("// EXPECT " + e)
    out.append(HEADER.format(ver=ver, target=target))
    out.append(".visible .entry run(")
    out.append(",\n".join("\t.param .u64 " + p for p in params))
    out.append(")")
    out.append("{")
    for r in regs:
        out.append("\t" + r)
    out.append("")
    for k, p in enumerate(params):
        out.append(f"\tld.param.u64 %rd{k + 1}, [{p}];")
        out.append(f"\tcvta.to.global.u64 %rd{k + 1}, %rd{k + 1};")
    out.extend("\t" + l if l and not l.startswith("//") else l for l in body_lines)
    out.append("\tret;")
    out.append("}")
    return path, "\n".join(out) + "\n"


def hexes(vals, width):
    return " ".join(f"0x{v:0{width}x}" for v in vals)


# ---------------------------------------------------------------- float/f32x2_arith.ptx

def f32x2_file():
    P = lambda e: Fr(2) ** e
    one, tiny = 0x3F800000, 0x33C00000  # 1.0, 1.5 * 2^-24
    cases = []  # (op, mods, a, b, c, why)
    # add: 1 + 1.5*2^-24 (above the half ulp: .rn and .rp round up) | -1 - 1.5*2^-24
    a, b = u64_of(one, 0xBF800000), u64_of(tiny, 0xB3C00000)
    for m in ["", ".rn", ".rz", ".rm", ".rp"]:
        cases.append(("add", m, a, b, None, "1 + 1.5*2^-24 | -1 - 1.5*2^-24"))
    # sub: 1 - (-1.5*2^-24) | 2^-149 - (+0): a subnormal kept, flushed by .ftz
    a, b = u64_of(one, 0x00000001), u64_of(0xB3C00000, 0x00000000)
    for m in [".rn", ".rz", ".rm", ".rp", ".rn.ftz"]:
        cases.append(("sub", m, a, b, None, "1 - (-1.5*2^-24) | 2^-149 - 0"))
    # mul: (1+2^-23)^2 = 1 + 2^-22 + 2^-46 | MAX * 2 overflows (inf or MAX by direction)
    a, b = u64_of(0x3F800001, 0x7F7FFFFF), u64_of(0x3F800001, 0x40000000)
    for m in ["", ".rn", ".rz", ".rm", ".rp"]:
        cases.append(("mul", m, a, b, None, "(1+2^-23)^2 | MAX*2"))
    # mul.ftz: 2^-126 * 0.5 = 2^-127 (a subnormal result) | -2^-126 * 0.5
    a, b = u64_of(0x00800000, 0x80800000), u64_of(0x3F000000, 0x3F000000)
    for m in [".rn", ".rz.ftz", ".rn.ftz"]:
        cases.append(("mul", m, a, b, None, "2^-126*0.5 | -2^-126*0.5"))
    # fma: (1+2^-23)(1-2^-24) - 1 = 2^-24 - 2^-47 exactly | inf*0 + 1 = NaN
    a, b, c = u64_of(0x3F800001, 0x7F800000), u64_of(0x3F7FFFFF, 0), u64_of(0xBF800000, one)
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("fma", m, a, b, c, "(1+2^-23)(1-2^-24)-1 | inf*0+1"))
    # fma: (1+2^-23)^2 - 1 = 2^-22 + 2^-46: a tie below .rp | -(1+2^-23)^2 + (-0)
    a, b, c = u64_of(0x3F800001, 0x3F800001), u64_of(0x3F800001, 0xBF800001), u64_of(0xBF800000, 0x80000000)
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("fma", m, a, b, c, "(1+2^-23)^2-1 | -(1+2^-23)^2-0"))
    # fma.ftz: 2^-149*1 + 0 (subnormal input flushed) | 2^-126 * 0.5 + 0 (subnormal result)
    a, b, c = u64_of(0x00000001, 0x00800000), u64_of(one, 0x3F000000), u64_of(0, 0)
    for m in [".rn", ".rn.ftz", ".rp.ftz"]:
        cases.append(("fma", m, a, b, c, "2^-149*1+0 | 2^-126*0.5+0"))
    # add: inf + -inf = NaN | -0 + -0 = -0 (and +0 + -0 = -0 under .rm only: next case)
    a, b = u64_of(0x7F800000, 0x80000000), u64_of(0xFF800000, 0x80000000)
    cases.append(("add", ".rn", a, b, None, "inf + -inf | -0 + -0"))
    a, b = u64_of(0x00000000, 0x00000000), u64_of(0x80000000, 0x80000000)
    cases.append(("add", ".rn", a, b, None, "+0 + -0 | +0 + -0"))
    cases.append(("add", ".rm", a, b, None, "+0 + -0 | +0 + -0 (.rm: -0)"))

    expect, body = [], []
    for k, (op, m, a, b, c, why) in enumerate(cases):
        mode = m.split(".")[1] if m.startswith(".r") else "rn"
        ftz = ".ftz" in m
        lanes = []
        for sh in (0, 32):
            x, y = val32(a >> sh & 0xFFFFFFFF, ftz), val32(b >> sh & 0xFFFFFFFF, ftz)
            if op == "add":
                r = add(x, y, mode)
            elif op == "sub":
                r = add(x, neg(y), mode)
            elif op == "mul":
                r = mul(x, y)
            else:
                r = fma(x, y, val32(c >> sh & 0xFFFFFFFF, ftz), mode)
            lanes.append(to_f32(r, mode, ftz))
        d = u64_of(*lanes)
        expect.append(d)
        body.append(f"// [{k}] {op}{m}.f32x2: {why}")
        body.append(f"mov.b64 %rd10, 0x{a:016x};")
        body.append(f"mov.b64 %rd11, 0x{b:016x};")
        if c is not None:
            body.append(f"mov.b64 %rd12, 0x{c:016x};")
            body.append(f"{op}{m}.f32x2 %rd13, %rd10, %rd11, %rd12;")
        else:
            body.append(f"{op}{m}.f32x2 %rd13, %rd10, %rd11;")
        body.append(f"st.global.u64 [%rd1+{8 * k}], %rd13;\t// 0x{d:016x}")
        body.append("")
    return emit(
        "float/f32x2_arith.ptx",
        [
            "add/sub/mul{.rnd}{.ftz}.f32x2 and fma.rnd{.ftz}.f32x2 (sm_100+): each .b64 operand holds two",
            ".f32 elements (element 0 in bits 0..31) and each element is computed as the .f32",
            "instruction would: every rounding mode (none written is .rn), ties, overflow to inf or MAX",
            "by direction, the exact fma product, signed zeros, .ftz on subnormal inputs and results,",
            "NaN (ptxvm's canonical 0x7fffffff). ptxas takes no .sat or .relu on .f32x2, and fma needs a",
            "rounding. Expected values: tests/run/tools/sm100_forms_ref.py (exact fractions, one",
            "IEEE rounding routine written from the ISA text), which also wrote this kernel.",
        ],
        f"--grid 1 --block 1 --arg u64[{len(cases)}]",
        [f"0 u64: {hexes(expect, 16)}"],
        body,
        ["out"],
        [".reg .b64 %rd<16>;"],
    )


# ---------------------------------------------------------------- float/mixed_precision.ptx

def mixed_file():
    P = lambda e: Fr(2) ** e
    # (op, mods, halftype, a, b (half or None), c (f32), why)
    cases = []
    big = 0x4B800000  # 2^24: the f32 ulp there is 2
    for m in ["", ".rn", ".rz", ".rm", ".rp"]:
        cases.append(("add", m, "f16", 0x3C01, None, big, "(1+2^-10) + 2^24: above the half ulp"))
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("add", m, "f16", 0x0001, None, 0x3F800000, "2^-24 (f16 subnormal) + 1: a tie"))
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("add", m, "bf16", 0x3F81, None, big, "(1+2^-7) + 2^24"))
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("sub", m, "f16", 0x3C00, None, 0x30800000, "1 - 2^-30"))
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("sub", m, "bf16", 0xBF80, None, 0x30800000, "-1 - 2^-30"))
    cases.append(("add", ".sat", "f16", 0x3C00, None, 0x3F000000, "1 + 0.5 -> 1 with .sat"))
    cases.append(("add", ".rn.sat", "bf16", 0xBF80, None, 0x3E800000, "-1 + 0.25 -> +0 with .sat"))
    cases.append(("sub", ".rz.sat", "f16", 0x3800, None, 0x3E800000, "0.5 - 0.25 = 0.25 with .sat"))
    cases.append(("add", ".rn", "f16", 0x7E00, None, 0x3F800000, "NaN + 1"))
    cases.append(("add", ".rn.sat", "f16", 0x7E00, None, 0x3F800000, "NaN + 1 with .sat -> +0"))
    cases.append(("add", ".rn", "bf16", 0xFF80, None, 0x7F800000, "-inf + inf"))
    cases.append(("sub", ".rm", "f16", 0x8000, None, 0x80000000, "-0 - (-0) = -0 under .rm"))
    cases.append(("add", ".rn", "f16", 0x7BFF, None, 0x7F7FFFFF, "65504 + MAX overflows"))
    cases.append(("add", ".rz", "f16", 0x7BFF, None, 0x7F7FFFFF, "65504 + MAX with .rz -> MAX"))
    for m in [".rn", ".rz", ".rm", ".rp"]:
        cases.append(("fma", m, "f16", 0x3C01, 0x3C01, big, "(1+2^-10)^2 + 2^24"))
    for m in [".rn", ".rz"]:
        cases.append(("fma", m, "f16", 0x3C01, 0x3C01, 0xBF800000, "(1+2^-10)^2 - 1 = 2^-9 + 2^-20 exactly"))
    for m in [".rn", ".rm", ".rp"]:
        cases.append(("fma", m, "bf16", 0x3F81, 0xBF81, 0x3F800000, "1 - (1+2^-7)^2 = -(2^-6 + 2^-14)"))
    cases.append(("fma", ".rn", "f16", 0x0001, 0x0001, 0x00000000, "2^-24 * 2^-24 + 0 = 2^-48"))
    cases.append(("fma", ".rn.sat", "bf16", 0x4000, 0x4000, 0xBF800000, "2*2 - 1 = 3 -> 1 with .sat"))
    cases.append(("fma", ".rz.sat", "f16", 0x7C00, 0x0000, 0x3F800000, "inf*0 + 1 = NaN -> +0 with .sat"))
    cases.append(("fma", ".rp", "bf16", 0x7F80, 0x0000, 0x3F800000, "inf*0 + 1 = NaN"))

    expect, body = [], []
    for k, (op, m, ht, a, b, c, why) in enumerate(cases):
        hf = F16 if ht == "f16" else BF16
        mode = m.split(".")[1] if m.startswith(".r") else "rn"
        sat = ".sat" in m
        x = hf.decode(a)
        z = F32.decode(c)
        if op == "add":
            r = add(x, z, mode)
        elif op == "sub":
            r = add(x, neg(z), mode)
        else:
            r = fma(x, hf.decode(b), z, mode)
        d = to_f32(r, mode, False, sat)
        expect.append(d)
        body.append(f"// [{k}] {op}{m}.f32.{ht}: {why}")
        body.append(f"mov.b16 %h1, 0x{a:04x};")
        body.append(f"mov.b32 %f2, 0f{c:08X};")
        if b is not None:
            body.append(f"mov.b16 %h2, 0x{b:04x};")
            body.append(f"{op}{m}.f32.{ht} %f3, %h1, %h2, %f2;")
        else:
            body.append(f"{op}{m}.f32.{ht} %f3, %h1, %f2;")
        body.append(f"st.global.f32 [%rd1+{4 * k}], %f3;\t// 0f{d:08X}")
        body.append("")
    return emit(
        "float/mixed_precision.ptx",
        [
            "Mixed precision (PTX 8.6, sm_100+): add/sub{.rnd}{.sat}.f32.{f16,bf16} d, a, c and",
            "fma.rnd{.sat}.f32.{f16,bf16} d, a, b, c: the half operands are widened exactly (f16",
            "subnormals included) and the .f32 result is rounded once per mode; .sat clamps to [0, 1]",
            "with NaN -> +0; NaN results are ptxvm's canonical 0x7fffffff. (These ran as half-precision",
            "arithmetic before.) ptxas takes no .ftz here, and fma needs a rounding. Expected values:",
            "tests/run/tools/sm100_forms_ref.py (exact fractions), which also wrote this kernel.",
        ],
        f"--grid 1 --block 1 --arg f32[{len(cases)}]",
        ["0 f32: " + " ".join(f"0f{v:08X}" for v in expect)],
        body,
        ["out"],
        [".reg .b64 %rd<4>;", ".reg .b16 %h<4>;", ".reg .f32 %f<4>;"],
    )


# ---------------------------------------------------------------- float/minmax3_f32.ptx

def order_key(x):
    """Total order of non-NaN decoded values with -0 < +0."""
    if x == NINF:
        return (-2, 0)
    if x == INF:
        return (2, 0)
    if is_zero(x):
        return (0, -1 if x[1] else 0)
    return (1 if x[0] > 0 else -1, x[0])


def minmax3(vals, want_max, nan, ftz, absm):
    xs = []
    for b in vals:
        if ftz and (b & 0x7FFFFFFF) < 0x00800000:
            b &= 0x80000000
        if absm:
            b &= 0x7FFFFFFF
        xs.append(F32.decode(b))
    if nan and NAN in xs:
        return CNAN32
    xs = [x for x in xs if x != NAN]
    if not xs:
        return CNAN32
    r = (max if want_max else min)(xs, key=order_key)
    if r == INF:
        return 0x7F800000
    if r == NINF:
        return 0xFF800000
    if is_zero(r):
        return 0x80000000 if r[1] else 0
    return round_bin(F32, r[0], "rn")


def minmax3_file():
    NANB, SUB = 0x7FC00000, 0x00000001
    rows = [
        (0x3F800000, 0x40400000, 0x40000000, "1, 3, 2"),
        (0xC0A00000, 0x40400000, 0x40800000, "-5, 3, 4"),
        (0xC0A00000, 0xC0400000, 0x40800000, "-5, -3, 4"),
        (NANB, 0x40000000, NANB, "NaN, 2, NaN"),
        (NANB, 0x40000000, 0x40400000, "NaN, 2, 3"),
        (NANB, NANB, NANB, "NaN, NaN, NaN"),
        (0x00000000, 0x80000000, 0x00000000, "+0, -0, +0"),
        (0x80000000, 0x80000000, 0x00000000, "-0, -0, +0"),
        (SUB, 0x3F800000, 0x40000000, "2^-149, 1, 2"),
        (0x80000001, 0xBF800000, 0xC0000000, "-2^-149, -1, -2"),
        (0xFF800000, 0xFF800000, 0xC0400000, "-inf, -inf, -3"),
        (0x7F800000, NANB, 0x40A00000, "inf, NaN, 5"),
    ]
    forms = [("", False, False, False), (".NaN", True, False, False), (".ftz", False, True, False),
             (".abs", False, False, True), (".ftz.NaN.abs", True, True, True)]
    expect, body, k = [], [], 0
    for (a, b, c, why) in rows:
        body.append(f"// {why}")
        body.append(f"mov.b32 %f1, 0f{a:08X};")
        body.append(f"mov.b32 %f2, 0f{b:08X};")
        body.append(f"mov.b32 %f3, 0f{c:08X};")
        for op in ("min", "max"):
            for (m, nan, ftz, absm) in forms:
                d = minmax3((a, b, c), op == "max", nan, ftz, absm)
                expect.append(d)
                body.append(f"{op}{m}.f32 %f4, %f1, %f2, %f3;")
                body.append(f"st.global.f32 [%rd1+{4 * k}], %f4;\t// [{k}] 0f{d:08X}")
                k += 1
        body.append("")
    return emit(
        "float/minmax3_f32.ptx",
        [
            "Three-input min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c (PTX 8.8, sm_100+): the minimum or",
            "maximum of the three with the two-input rules: -0 < +0, a NaN input is passed over (all",
            "NaN gives NaN) unless .NaN, which gives NaN for any NaN input; .ftz flushes subnormal",
            "inputs; .abs takes the absolute value of every input. Per row of inputs the stores are",
            "min, min.NaN, min.ftz, min.abs, min.ftz.NaN.abs, then the same five for max. NaN",
            "results: ptxvm's canonical 0x7fffffff. (ptxas takes .abs only on the three-input form",
            "and no .xorsign there.) Expected values: tests/run/tools/sm100_forms_ref.py.",
        ],
        f"--grid 1 --block 1 --arg f32[{k}]",
        ["0 f32: " + " ".join(f"0f{v:08X}" for v in expect)],
        body,
        ["out"],
        [".reg .b64 %rd<4>;", ".reg .f32 %f<6>;"],
        ver="8.8",
    )


# ---------------------------------------------------------------- cvt/fp4_fp6_ue8m0.ptx

def small_code(fmt, bits, relu):
    """.rn.satfinite{.relu} f32 -> fmt (no inf, no NaN); NaN inputs are not tested."""
    x = F32.decode(bits)
    sign = 1 << (fmt.e + fmt.m)
    if x in (INF, NINF):
        r = fmt.max_mag_bits() | (sign if x == NINF else 0)
    elif is_zero(x):
        r = sign if x[1] else 0
    else:
        r = round_bin(fmt, x[0], "rn", satfinite=True)
    if relu and r & sign:
        r = 0
    return r


def small_to_f16(fmt, code, relu):
    x = fmt.decode(code)
    if is_zero(x):
        h = 0x8000 if x[1] else 0
    else:
        h = round_bin(F16, x[0], "rn")
    if relu and h & 0x8000:
        h = 0
    return h


def ue8m0(bits, up, sat):
    """cvt.{rz,rp}{.satfinite}.ue8m0.f32: 2^(e-127) at or below (.rz) / above (.rp) |x|."""
    x = F32.decode(bits)
    if x == NAN:
        return 0xFF
    if x in (INF, NINF):
        return 0xFE if sat else 0xFF
    a = abs(x[0])
    best = None
    for e in range(0, 255):
        v = Fr(2) ** (e - 127)
        if (not up and v <= a) or (up and v >= a and best is None):
            best = e
    if best is None:  # .rz below 2^-127 (or zero): the smallest code
        best = 0
    if up and Fr(2) ** (254 - 127) < a:
        return 0xFE if sat else 0xFF
    return best


def cvt_file():
    expect8, expect16, expect32, body = [], [], [], []
    # e2m1x2 from f32 pairs
    e2m1_pairs = [
        (0x3E800000, 0x3F400000, "0.25 (tie -> 0), 0.75 (tie -> 1.0)"),
        (0x40A00000, 0xC0E00000, "5 (tie -> 4), -7 (saturates to -6)"),
        (0x7F800000, 0x80000000, "inf -> 6, -0"),
        (0x3FA00000, 0x3E000000, "1.25 (tie -> 1.0), 0.125 (below 0.25 -> 0)"),
        (0x40300000, 0xBF200000, "2.75 (-> 3), -0.625 (-> -0.5)"),
    ]
    k8 = 0
    for relu in (False, True):
        for (a, b, why) in e2m1_pairs:
            d = small_code(E2M1, a, relu) << 4 | small_code(E2M1, b, relu)
            expect8.append(d)
            r = ".relu" if relu else ""
            body.append(f"mov.b32 %f1, 0f{a:08X};\t// {why}")
            body.append(f"mov.b32 %f2, 0f{b:08X};")
            body.append(f"cvt.rn.satfinite{r}.e2m1x2.f32 %b1, %f1, %f2;")
            body.append(f"st.global.b8 [%rd1+{k8}], %b1;\t// [{k8}] 0x{d:02x}")
            k8 += 1
    # e2m3x2 / e3m2x2 from f32 pairs
    fp6_pairs = [
        (0x3F880000, 0x40F80000, "1.0625 (tie -> 1.0), 7.75 (saturates)"),
        (0xC0E00000, 0x3D800000, "-7, 0.0625 (smallest subnormal of e2m3 is 0.125: a tie -> 0)"),
        (0x41D00000, 0x3DC00000, "26 (e3m2: tie between 24 and 28 -> 24), 0.09375"),
        (0xFF800000, 0x42000000, "-inf, 32"),
    ]
    k16 = 0
    for ty, fmt in (("e2m3x2", E2M3), ("e3m2x2", E3M2)):
        for relu in (False, True):
            for (a, b, why) in fp6_pairs:
                d = small_code(fmt, a, relu) << 8 | small_code(fmt, b, relu)
                expect16.append(d)
                r = ".relu" if relu else ""
                body.append(f"mov.b32 %f1, 0f{a:08X};\t// {ty}: {why}")
                body.append(f"mov.b32 %f2, 0f{b:08X};")
                body.append(f"cvt.rn.satfinite{r}.{ty}.f32 %h1, %f1, %f2;")
                body.append(f"st.global.b16 [%rd2+{2 * k16}], %h1;\t// [{k16}] 0x{d:04x}")
                k16 += 1
    # ue8m0x2 from f32 pairs and bf16x2
    ue_pairs = [
        (0x3F800000, 0x3FC00000, "1.0, 1.5"),
        (0x00100000, 0x00400001, "2^-130, just above 2^-127"),
        (0x00000000, 0x00400000, "+0, 2^-127"),
        (0x7F400000, 0x7F800000, "1.5*2^127, inf"),
        (0x7F7FFFFF, 0x7FC00000, "MAX, NaN"),
    ]
    for m in (".rz", ".rp", ".rz.satfinite", ".rp.satfinite"):
        for (a, b, why) in ue_pairs:
            up, sat = ".rp" in m, ".satfinite" in m
            d = ue8m0(a, up, sat) << 8 | ue8m0(b, up, sat)
            expect16.append(d)
            body.append(f"mov.b32 %f1, 0f{a:08X};\t// ue8m0x2{m}: {why}")
            body.append(f"mov.b32 %f2, 0f{b:08X};")
            body.append(f"cvt{m}.ue8m0x2.f32 %h1, %f1, %f2;")
            body.append(f"st.global.b16 [%rd2+{2 * k16}], %h1;\t// [{k16}] 0x{d:04x}")
            k16 += 1
    for m in (".rz", ".rp"):
        for a, why in ((0x3FC00040, "bf16 1.5, 2^-127"), (0x7F807F00, "bf16 inf, 2^127")):
            up = m == ".rp"
            d = ue8m0(a & 0xFFFF0000, up, False) << 8 | ue8m0((a & 0xFFFF) << 16, up, False)
            expect16.append(d)
            body.append(f"mov.b32 %r1, 0x{a:08x};\t// ue8m0x2.bf16x2{m}: {why}")
            body.append(f"cvt{m}.ue8m0x2.bf16x2 %h1, %r1;")
            body.append(f"st.global.b16 [%rd2+{2 * k16}], %h1;\t// [{k16}] 0x{d:04x}")
            k16 += 1
    # to f16x2 / bf16x2
    k32 = 0
    for relu in (False, True):
        r = ".relu" if relu else ""
        for byte in (0x7F, 0x9A, 0x08, 0x35):
            d = small_to_f16(E2M1, byte >> 4, relu) << 16 | small_to_f16(E2M1, byte & 0xF, relu)
            expect32.append(d)
            body.append(f"mov.b16 %h2, 0x{byte:04x};")
            body.append(f"cvt.u8.u16 %b2, %h2;")
            body.append(f"cvt.rn{r}.f16x2.e2m1x2 %r2, %b2;")
            body.append(f"st.global.b32 [%rd3+{4 * k32}], %r2;\t// [{k32}] 0x{d:08x}")
            k32 += 1
        for ty, fmt in (("e2m3x2", E2M3), ("e3m2x2", E3M2)):
            for half in (0x1F3F, 0x2101, 0x0020, 0xC0C5):
                d = small_to_f16(fmt, half >> 8 & 0x3F, relu) << 16 | small_to_f16(fmt, half & 0x3F, relu)
                expect32.append(d)
                body.append(f"mov.b16 %h2, 0x{half:04x};")
                body.append(f"cvt.rn{r}.f16x2.{ty} %r2, %h2;")
                body.append(f"st.global.b32 [%rd3+{4 * k32}], %r2;\t// [{k32}] 0x{d:08x}")
                k32 += 1
    for half in (0x7F00, 0x8001, 0xFE80):
        def one(e):
            # 2^(e-127) as bf16 bits: exponent field e (e = 0: the subnormal 2^-127)
            return 0x0040 if e == 0 else e << 7
        d = one(half >> 8) << 16 | one(half & 0xFF)
        expect32.append(d)
        body.append(f"mov.b16 %h2, 0x{half:04x};")
        body.append(f"cvt.rn.bf16x2.ue8m0x2 %r2, %h2;")
        body.append(f"st.global.b32 [%rd3+{4 * k32}], %r2;\t// [{k32}] 0x{d:08x}")
        k32 += 1
    return emit(
        "cvt/fp4_fp6_ue8m0.ptx",
        [
            "cvt to and from the sm_100 block-scaling formats. .e2m1 (max 6), .e2m3 (max 7.5), .e3m2",
            "(max 28) have no inf and no NaN: cvt.rn.satfinite{.relu}.{e2m1x2,e2m3x2,e3m2x2}.f32 d, a, b",
            "rounds to nearest even (subnormals included), saturates overflow and infinities to the",
            "signed largest value, .relu makes negatives (and -0) +0; a goes into the upper element",
            "(bits 7..4 of a .b8, or 13..8 with the byte's two top bits zero). cvt.rn{.relu}.f16x2.*",
            "widens exactly (the upper element into the upper half). .ue8m0 is 2^(e-127) with 0xff",
            "NaN: cvt.{rz,rp}{.satfinite}.ue8m0x2.{f32,bf16x2} gives the power of two at or below",
            "(.rz, code 0 below 2^-127) or at or above (.rp) the value; past 2^127 and inf give 0xff,",
            "or 0xfe with .satfinite; NaN gives 0xff. cvt.rn.bf16x2.ue8m0x2 (code 0 is the bf16",
            "subnormal 0x0040). Not tested: NaN into the 4/6-bit formats (no NaN code; the ISA text",
            "at hand does not say), negative inputs to .ue8m0, and .ue8m0 code 0xff into .bf16x2.",
            "Expected values: tests/run/tools/sm100_forms_ref.py (exact fractions), which wrote this.",
        ],
        f"--grid 1 --block 1 --arg u8[{k8}] --arg u16[{k16}] --arg u32[{k32}]",
        [f"0 u8: {hexes(expect8, 2)}", f"1 u16: {hexes(expect16, 4)}", f"2 u32: {hexes(expect32, 8)}"],
        body,
        ["out8", "out16", "out32"],
        [".reg .b64 %rd<4>;", ".reg .b8 %b<3>;", ".reg .b16 %h<3>;", ".reg .b32 %r<3>;", ".reg .f32 %f<3>;"],
    )


# ---------------------------------------------------------------- cvt/rs_f16x2_bf16x2.ptx

def rs_convert(fmt, k, bits, rnd, relu, satfinite):
    """cvt.rs to .f16 (k = 13) or .bf16 (k = 16): truncate, then step one ulp away from zero
    when the dropped fraction (its top k bits) plus the k random bits carries out."""
    x = F32.decode(bits)
    sign = 1 << (fmt.e + fmt.m)
    inf = ((1 << fmt.e) - 1) << fmt.m
    if x == NAN:
        return sign - 1  # ptxvm's canonical NaN (0x7fff)
    if x in (INF, NINF):
        r = (fmt.max_mag_bits() if satfinite else inf) | (sign if x == NINF else 0)
    elif is_zero(x):
        r = sign if x[1] else 0
    else:
        t = round_bin(fmt, x[0], "rz", satfinite=True)
        tmag = t & (sign - 1)
        biased = tmag >> fmt.m
        ulp = Fr(2) ** ((max(biased, 1) - fmt.bias) - fmt.m)
        tv = fmt.decode(tmag)[0]
        f = (abs(x[0]) - tv) / ulp  # in [0, 1) below the largest finite value
        top = int(f * (1 << k))
        up = top + (rnd & ((1 << k) - 1)) >= 1 << k
        mag = tmag + up
        if mag >= inf and satfinite:
            mag = fmt.max_mag_bits()
        r = mag | (t & sign)
    if relu and r & sign:
        r = 0
    return r


def rs_file():
    # (a bits, b bits, rbits, why): a goes with rbits[31:16], b with rbits[15:0]
    bf_cases = [
        (0x3F80C000, 0xBFC00001, 0x3FFFFFFF, "1+2^-8+2^-9 (dropped 0xc000 + 0x3fff: no carry) | -(1.5+2^-23) (0x0001 + 0xffff: carry)"),
        (0x3F80C000, 0xBFC00001, 0x4000FFFE, "the same, random 0x4000 (carry) | 0xfffe (no carry)"),
        (0x7F7FFFFF, 0x00008001, 0x00017FFF, "MAX (dropped 0xffff + 1: carries into inf) | f32 subnormal 0x8001 + 0x7fff"),
        (0x7F800000, 0x00008001, 0x00007FFE, "inf | f32 subnormal 0x8001 + 0x7ffe: truncated to +0"),
        (0x7FC00000, 0xBF800000, 0xFFFFFFFF, "NaN | -1 (nothing dropped: exact)"),
    ]
    f16_cases = [
        (0x3F801800, 0xC0400400, 0x07FF1C00, "1+2^-11+2^-12 (dropped 0x1800 + 0x7ff) | -(3+2^-12) (0x400 + 0x1c00: carry)"),
        (0x3F801800, 0xC0400400, 0xE8001BFF, "the same, random 0x0800 (3 MSBs ignored: carry) | 0x1bff (no carry)"),
        (0x477FE001, 0x477FE001, 0x1FFF0000, "65504+2^-9 with random 0x1fff (carries to inf) | random 0"),
        (0xFF800000, 0x7FC00000, 0x00000000, "-inf | NaN"),
        (0x3E2AAAAB, 0xBE2AAAAB, 0x0AAA1555, "1/6 (dropped 0x1555 + 0xaaa: no carry) | -1/6 (+0x1555: carry)"),
    ]
    expect, body, k = [], [], 0
    for ty, fmt, kb, cases in (("bf16x2", BF16, 16, bf_cases), ("f16x2", F16, 13, f16_cases)):
        for mods in ("", ".satfinite", ".relu", ".relu.satfinite"):
            relu, sat = ".relu" in mods, ".satfinite" in mods
            for (a, b, rb, why) in cases:
                hi = rs_convert(fmt, kb, a, rb >> 16, relu, sat)
                lo = rs_convert(fmt, kb, b, rb & 0xFFFF, relu, sat)
                d = hi << 16 | lo
                expect.append(d)
                body.append(f"// [{k}] cvt.rs{mods}.{ty}.f32: {why}")
                body.append(f"mov.b32 %f1, 0f{a:08X};")
                body.append(f"mov.b32 %f2, 0f{b:08X};")
                body.append(f"mov.b32 %r1, 0x{rb:08x};")
                body.append(f"cvt.rs{mods}.{ty}.f32 %r2, %f1, %f2, %r1;")
                body.append(f"st.global.b32 [%rd1+{4 * k}], %r2;\t// 0x{d:08x}")
                k += 1
    return emit(
        "cvt/rs_f16x2_bf16x2.ptx",
        [
            "Stochastic rounding cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits (sm_100a",
            "family): a goes to the upper half with the random bits of rbits[31:16], b to the lower",
            "half with rbits[15:0]; for .f16x2 only the 13 low bits of each half are random bits. The",
            "result is the value truncated toward zero, moved one ulp away from zero when the carry",
            "out of (dropped mantissa bits + random bits) is set: 13 bits are dropped for a normal",
            ".f16 result, 16 for every .bf16 result (f32 subnormal inputs included). Overflow gives",
            "inf, or MAX with .satfinite (inf inputs too); .relu makes negatives +0; NaN gives",
            "ptxvm's canonical 0x7fff. Not tested: .f16 subnormal results (more bits dropped than",
            "random bits given; the ISA text at hand does not describe the alignment). Expected",
            "values: tests/run/tools/sm100_forms_ref.py (fractions of an ulp), which wrote this.",
        ],
        f"--grid 1 --block 1 --arg u32[{k}]",
        [f"0 u32: {hexes(expect, 8)}"],
        body,
        ["out"],
        [".reg .b64 %rd<2>;", ".reg .b32 %r<3>;", ".reg .f32 %f<3>;"],
        ver="8.7",
    )


# ---------------------------------------------------------------- cvt/narrow_bf16x2.ptx

class E4M3Fmt(Fmt):
    """OCP E4M3: no infinities, S.1111.111 is NaN, so the largest value is 448 (0x7e)."""

    def __init__(self):
        super().__init__(4, 3, ieee=False)

    def max_mag_bits(self):
        return 0x7E


E4M3 = E4M3Fmt()
E5M2 = Fmt(5, 2)


def to_16(fmt, v, relu):
    """An exact decoded value into .f16/.bf16 bits (exact here), .relu on negatives."""
    if v in (INF, NINF):
        h = ((1 << fmt.e) - 1) << fmt.m | (0x8000 if v == NINF else 0)
    elif is_zero(v):
        h = 0x8000 if v[1] else 0
    else:
        h = round_bin(fmt, v[0], "rn")
    if relu and h & 0x8000:
        h = 0
    return h


def narrow_file():
    body, expect16, expect32, k16, k32 = [], [], [], 0, 0
    # bf16x2 / f16x2 sources into the 4-, 6- and 8-bit formats (.rn.satfinite{.relu})
    srcs = [
        (0x3E803F40, "bf16 0.25 | 0.75"),
        (0x40A0C0E0, "bf16 5 | -7"),
        (0x7F80BF20, "bf16 inf | -0.625"),
        (0x41D03DC0, "bf16 26 | 0.09375"),
        (0x43E04400, "bf16 448 | 512"),
        (0xC7804780, "bf16 -65536 | 65536"),
    ]
    for ty, fmt, wide in (("e2m1x2", E2M1, False), ("e2m3x2", E2M3, False), ("e3m2x2", E3M2, False),
                          ("e4m3x2", E4M3, False), ("e5m2x2", E5M2, False)):
        for relu in (False, True):
            r = ".relu" if relu else ""
            for (a, why) in srcs:
                hi = small_code(fmt, a & 0xFFFF0000, relu)
                lo = small_code(fmt, (a & 0xFFFF) << 16, relu)
                d = hi << 4 | lo if ty == "e2m1x2" else hi << 8 | lo
                if ty == "e2m1x2":
                    body.append(f"mov.b32 %r1, 0x{a:08x};\t// {ty}{r}: {why}")
                    body.append(f"cvt.rn.satfinite{r}.{ty}.bf16x2 %b1, %r1;")
                    body.append("cvt.u16.u8 %h1, %b1;")
                else:
                    body.append(f"mov.b32 %r1, 0x{a:08x};\t// {ty}{r}: {why}")
                    body.append(f"cvt.rn.satfinite{r}.{ty}.bf16x2 %h1, %r1;")
                body.append(f"st.global.b16 [%rd1+{2 * k16}], %h1;\t// [{k16}] 0x{d:04x}")
                expect16.append(d)
                k16 += 1
    # the 4- and 6-bit formats widened to bf16x2
    for relu in (False, True):
        r = ".relu" if relu else ""
        for byte in (0x7F, 0x9A, 0x08, 0x35):
            d = to_16(BF16, E2M1.decode(byte >> 4), relu) << 16 | to_16(BF16, E2M1.decode(byte & 0xF), relu)
            body.append(f"mov.b16 %h2, 0x{byte:04x};")
            body.append("cvt.u8.u16 %b2, %h2;")
            body.append(f"cvt.rn{r}.bf16x2.e2m1x2 %r2, %b2;")
            body.append(f"st.global.b32 [%rd2+{4 * k32}], %r2;\t// [{k32}] 0x{d:08x}")
            expect32.append(d)
            k32 += 1
        for ty, fmt in (("e2m3x2", E2M3), ("e3m2x2", E3M2)):
            for half in (0x1F3F, 0x2101, 0x0020):
                d = to_16(BF16, fmt.decode(half >> 8 & 0x3F), relu) << 16 | to_16(BF16, fmt.decode(half & 0x3F), relu)
                body.append(f"mov.b16 %h2, 0x{half:04x};")
                body.append(f"cvt.rn{r}.bf16x2.{ty} %r2, %h2;")
                body.append(f"st.global.b32 [%rd2+{4 * k32}], %r2;\t// [{k32}] 0x{d:08x}")
                expect32.append(d)
                k32 += 1
    return emit(
        "cvt/narrow_bf16x2.ptx",
        [
            "The .bf16x2 conversions of PTX 9.1/9.2 (sm_100a family): cvt.rn.satfinite{.relu}.",
            "{e2m1x2,e2m3x2,e3m2x2,e4m3x2,e5m2x2}.bf16x2 d, a converts each .bf16 of a (the upper",
            "one into the upper element) as the .f32-source forms do: round to nearest even,",
            "overflow and infinities to the signed largest finite value (.satfinite), .relu makes",
            "negatives +0; e4m3's largest value is 448 and e5m2's 57344. cvt.rn{.relu}.bf16x2.",
            "{e2m1x2,e2m3x2,e3m2x2} widens exactly. Not tested: NaN inputs. Expected values:",
            "tests/run/tools/sm100_forms_ref.py (exact fractions), which wrote this kernel.",
        ],
        f"--grid 1 --block 1 --arg u16[{k16}] --arg u32[{k32}]",
        [f"0 u16: {hexes(expect16, 4)}", f"1 u32: {hexes(expect32, 8)}"],
        body,
        ["out16", "out32"],
        [".reg .b64 %rd<3>;", ".reg .b8 %b<3>;", ".reg .b16 %h<3>;", ".reg .b32 %r<3>;"],
        ver="9.2",
    )


def main():
    root = Path(__file__).resolve().parent.parent
    files = [f32x2_file(), mixed_file(), minmax3_file(), cvt_file(), rs_file(), narrow_file()]
    for path, text in files:
        if sys.argv[1:] == ["write"]:
            (root / path).write_text(text)
        else:
            print(f"==> {path}\n{text}")


if __name__ == "__main__":
    main()
