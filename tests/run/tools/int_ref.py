#!/usr/bin/env python3
"""Reference semantics used to compute the expected values of tests/run/int and tests/run/logic.

Each function transcribes the PTX ISA pseudo-code of its instruction (section named in the
docstring) on Python integers, independently of ptxvm. Values are raw bits of the given width
unless a docstring says otherwise. Run this file to check the ISA's own worked examples.
"""


def mask(n):
    return (1 << n) - 1


def u(x, n):
    """x as an n-bit unsigned value."""
    return x & mask(n)


def s(x, n):
    """x as an n-bit two's complement value."""
    x = u(x, n)
    return x - (1 << n) if x >> (n - 1) else x


def tdiv(a, b):
    """div.s*: quotient truncated toward zero (C semantics)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trem(a, b):
    """rem.s*: a - b * tdiv(a, b), so the remainder has the dividend's sign."""
    return a - b * tdiv(a, b)


def bfe(a, pos, ln, n, signed):
    """bfe.{u,s}{32,64} d, a, b=pos, c=len (Integer Arithmetic Instructions: bfe)."""
    msb = n - 1
    pos &= 0xFF
    ln &= 0xFF
    a = u(a, n)
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(n):
        bit = ((a >> (pos + i)) & 1) if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def bfi(a, b, pos, ln, n):
    """bfi.b{32,64} f, a, b, c=pos, d=len (Integer Arithmetic Instructions: bfi)."""
    msb = n - 1
    pos &= 0xFF
    ln &= 0xFF
    f = u(b, n)
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


def bfind(a, n, signed, shiftamt):
    """bfind{.shiftamt}.{u,s}{32,64} (Integer Arithmetic Instructions: bfind)."""
    msb = n - 1
    a = u(a, n)
    if signed and (a >> msb) & 1:
        a = u(~a, n)
    d = mask(32)
    for i in range(msb, -1, -1):
        if (a >> i) & 1:
            d = i
            break
    if shiftamt and d != mask(32):
        d = msb - d
    return d


def fns(m, base, offset):
    """fns.b32 d, mask, base, offset (Integer Arithmetic Instructions: fns); base <= 31."""
    d = mask(32)
    if offset == 0:
        if (m >> base) & 1:
            d = base
    else:
        pos = base
        count = abs(offset) - 1
        inc = 1 if offset > 0 else -1
        while 0 <= pos < 32:
            if (m >> pos) & 1:
                if count == 0:
                    d = pos
                    break
                count -= 1
            pos += inc
    return d


def bmsk(a, b, clamp):
    """bmsk.{clamp,wrap}.b32 d, a, b (Integer Arithmetic Instructions: bmsk)."""
    a1 = a & 0x1F
    mask0 = u(mask(32) << a1, 32)
    b1 = b & 0x1F
    total = a1 + b1
    mask1 = u(mask(32) << total, 32) if total < 32 else 0
    overflow = total >= 32
    if clamp:
        if a >= 32:
            overflow = True
            mask0 = 0
        if b >= 32:
            overflow = True
    if overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = mask(32)
    return mask0 & u(~mask1, 32)


def szext(a, b, clamp, signed):
    """szext.{clamp,wrap}.{u32,s32} d, a, b (Integer Arithmetic Instructions: szext)."""
    b1 = b & 0x1F
    too_large = b >= 32 and clamp
    m = 0 if too_large else u(mask(32) << b1, 32)
    sign_pos = (b1 - 1) & 0x1F
    sign = False if (b1 == 0 or too_large or not signed) else (a >> sign_pos) & 1
    return (a & u(~m, 32)) | (m if sign else 0)


def lop3(a, b, c, lut):
    """lop3.b32: bit i of d is bit (a_i*4 + b_i*2 + c_i) of immLut (ta=0xF0, tb=0xCC, tc=0xAA)."""
    r = 0
    for i in range(32):
        idx = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        r |= ((lut >> idx) & 1) << i
    return r


# prmt modes: per selector c[1:0], the source byte of d.b0, d.b1, d.b2, d.b3 (the ISA's table
# lists d.b3 first).
PRMT_MODES = {
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}


def prmt(a, b, c, mode=None):
    """prmt.b32{.mode} d, a, b, c (Data Movement and Conversion Instructions: prmt)."""
    src = [((b << 32 | a) >> (8 * i)) & 0xFF for i in range(8)]
    r = 0
    for k in range(4):
        if mode is None:
            ctl = (c >> (4 * k)) & 0xF
            byte = src[ctl & 7]
            if ctl & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = src[PRMT_MODES[mode][c & 3][k]]
        r |= byte << (8 * k)
    return r


def shf(a, b, c, left, clamp):
    """shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: funnel shift of b:a (Logic and Shift Instructions: shf)."""
    n = min(c, 32) if clamp else c & 31
    v = b << 32 | a
    return ((v << n) >> 32) & mask(32) if left else (v >> n) & mask(32)


def byte_ext(x, width, k, signed):
    """Element k of width-bit lanes of x, sign- or zero-extended (dp4a/dp2a operands)."""
    v = (x >> (width * k)) & mask(width)
    return s(v, width) if signed else v


def dp4a(a, b, c, a_signed, b_signed):
    """dp4a.atype.btype: c + sum of the four byte products, modulo 2^32."""
    return u(c + sum(byte_ext(a, 8, k, a_signed) * byte_ext(b, 8, k, b_signed) for k in range(4)), 32)


def dp2a(a, b, c, hi, a_signed, b_signed):
    """dp2a.{lo,hi}.atype.btype: c + two 16-bit x 8-bit products (bytes 0,1 or 2,3 of b)."""
    sel = 2 if hi else 0
    return u(c + sum(byte_ext(a, 16, k, a_signed) * byte_ext(b, 8, sel + k, b_signed) for k in range(2)), 32)


def vop4_select(a, b, sel, signed):
    """extractAndSignExt_4(a, b, .sel, .type) of the SIMD video instructions: four bytes picked
    from the eight bytes of {b, a} (a is bytes 0-3, b bytes 4-7) by the selector's digits, the
    last digit giving lane 0 (`.b3210`: lane i is byte i), each sign- or zero-extended."""
    src = (b << 32) | a
    digits = [int(ch) for ch in reversed(sel)]
    out = []
    for i in range(4):
        v = (src >> (8 * digits[i])) & 0xFF
        out.append(v - 256 if signed and v >= 128 else v)
    return out


def vabsdiff4(a, b, c, d_signed, a_signed, b_signed, sat=False, add=False, mask="3210",
              asel="3210", bsel="7654"):
    """vabsdiff4.dtype.atype.btype{.sat|.add} d{.mask}, a{.asel}, b{.bsel}, c (SIMD Video
    Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4): per lane |Va[i] - Vb[i]|,
    clamped to the destination type's byte range with .sat; then either c plus the sum of the
    masked lanes (.add), or the masked lanes' low bytes merged over c's bytes."""
    va = vop4_select(a, b, asel, a_signed)
    vb = vop4_select(a, b, bsel, b_signed)
    t = [abs(va[i] - vb[i]) for i in range(4)]
    if sat:
        lo, hi = (-128, 127) if d_signed else (0, 255)
        t = [min(max(x, lo), hi) for x in t]
    lanes = {int(ch) for ch in mask}
    if add:
        return u(c + sum(t[i] for i in range(4) if i in lanes), 32)
    d = 0
    for i in range(4):
        byte = t[i] & 0xFF if i in lanes else (c >> (8 * i)) & 0xFF
        d |= byte << (8 * i)
    return d


if __name__ == "__main__":
    # The ISA's worked examples.
    assert fns(0xAAAAAAAA, 3, 1) == 3 and fns(0xAAAAAAAA, 3, -1) == 3
    assert fns(0xAAAAAAAA, 2, 1) == 3 and fns(0xAAAAAAAA, 2, -1) == 1
    assert bmsk(1, 2, clamp=False) == 6
    assert szext(0xFFFFFFFF, 0, clamp=False, signed=False) == 0
    assert lop3(0xF0, 0xCC, 0xAA, 0x80) == 0xF0 & 0xCC & 0xAA
    assert lop3(0xF0, 0xCC, 0xAA, 0x1A) & 0xFF == 0x1A
    # vabsdiff4 by hand: |4-8| |3-7| |2-6| |1-5| = 4 in every byte
    assert vabsdiff4(0x01020304, 0x05060708, 0, False, False, False) == 0x04040404
    assert vabsdiff4(0x01020304, 0x05060708, 10, False, False, False, add=True) == 26
    # signed bytes: |-128 - 127| = 255, clamped to 127 for an .s32 destination with .sat
    assert vabsdiff4(0x80, 0x7F, 0, True, True, True, sat=True) == 0x7F
    print("ok")
