#!/usr/bin/env python3
"""Model of wgmma.mma_async (sm_90a) and generator of the run tests tests/run/matrix/wgmma_*.ptx.

Coded from the PTX ISA's sections "Matrix Descriptor" and "Shared Memory Matrix Layout" of the
asynchronous warpgroup-level matrix instructions, independently of ptxvm:
- the 64-bit descriptor: start address (bits 0-13), leading-dimension byte offset (16-29) and
  stride-dimension byte offset (32-45), each in 16-byte units; base offset (49-51: the swizzle
  pattern's start address bits 7..9 when it is not on its 256/512/1024-byte boundary, taken as
  where the pattern's row 0 is); swizzle mode (62-63: 0 none, 1 128B, 2 64B, 3 32B);
- the canonical layouts: a matrix is made of 8x16-byte core matrices; K-major without swizzle
  puts core matrices LBO apart along K and SBO apart along M/N; a swizzled K-major operand has
  rows of W bytes (W the swizzle width), 8-row groups SBO apart; an M/N-major operand runs
  16-byte (no swizzle) or W-byte chunks along M/N, with the roles of LBO and SBO as the ISA's
  MN-major table gives them; the swizzle XORs bits 7.. of the byte address into bits 4..;
- the fragment layouts (ISA figures "WGMMA .m64nNk16/k8/k32 register fragment layout"): warp w of
  the warpgroup holds rows 16w..16w+15; accumulator element i of lane l sits at row
  16w + l/4 + 8*((i%4)/2), column 8*(i/4) + 2*(l%4) + i%2; A in registers follows the mma
  .m16n8kK A layout within the warp's 16 rows.
- sparse A (wgmma.mma_async.sp, ISA "Sparse matrix storage" and the sparse fragment and metadata
  figures): the compressed 64 x K/2 A is laid out like a dense A of K/2 columns; each chunk of 4
  columns (.tf32: 2) stores 2 (1) elements whose positions a 4-bit metadata field gives, held by
  the threads the figures name (meta_pos);
- .b1 (.m64nNk256 .and.popc): bits packed low first, popc(a AND b) sums.
The product is a plain matmul in Python binary64 floats (C first, then k = 0, 1, ...), with inputs
chosen so that every sum is exact, rounded once to the destination type.

Each test kernel runs one warpgroup (128 threads): it copies an initialised .global image into
shared memory, builds the descriptors from the shared address, loads its accumulators (and A
registers), runs wgmma, commits, and stores the accumulators before and after
`wgmma.wait_group 0`: both hold the product, since ptxas inserts the wait before the first use of
registers an unfinished wgmma defines (ptxas info C7517), so a GPU shows the product there too.

    python3 tests/run/tools/wgmma_model.py        # rewrite tests/run/matrix/wgmma_*.ptx
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mma_model import (BITS, acc_value, f16_bits, f32_bits, rand_acc, round_to,  # noqa: E402
                       value)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "matrix")
FAULT_DIR = os.path.join(HERE, "..", "fault")

WIDTH = {0: 0, 1: 128, 2: 64, 3: 32}


def descriptor(start, lbo, sbo, mode, base=0):
    assert start % 16 == 0 and lbo % 16 == 0 and sbo % 16 == 0
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | base << 49 | mode << 62


def address(desc, mn_major, mn, k, eb):
    """Shared byte address of element (mn, k) (row of A / column of B, and k)."""
    start = (desc & 0x3FFF) << 4
    lbo = (desc >> 16 & 0x3FFF) << 4
    sbo = (desc >> 32 & 0x3FFF) << 4
    w = WIDTH[desc >> 62]
    if not mn_major:
        kb = k * eb
        if w == 0:
            off = (mn % 8) * 16 + (mn // 8) * sbo + (kb % 16) + (kb // 16) * lbo
        else:
            off = (mn % 8) * w + (mn // 8) * sbo + kb
    else:
        b = mn * eb
        if w == 0:
            off = (b % 16) + (b // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            off = (b % w) + (b // w) * lbo + (k % 8) * w + (k // 8) * sbo
    a = start + off
    # the swizzle: 16-byte chunk index (bits 4..6) XOR the 128-byte row within the repeating
    # pattern; the pattern starts `base` rows into its 256/512/1024-byte block (the base offset,
    # bits 49-51: the pattern start address's bits 7..9)
    base = desc >> 49 & 7
    mask = {0: 0, 32: 1, 64: 3, 128: 7}[w]
    return a ^ ((((a >> 7) - base) & mask) << 4)


def d_pos(warp, lane, i):
    gid, tig = lane // 4, lane % 4
    return 16 * warp + gid + 8 * ((i % 4) // 2), 8 * (i // 4) + 2 * tig + (i % 2)


def a_reg_pos(t, warp, lane, i):
    """Row and column of element i (counted across A's 4 registers) of a thread in warp."""
    gid, tig = lane // 4, lane % 4
    if t in ("f16", "bf16"):
        # a0,a1: (gid, 2tig..); a2,a3: (gid+8, ..); a4,a5: (gid, 2tig+8..); a6,a7: (gid+8, ..)
        row = gid + 8 * ((i // 2) % 2)
        col = 2 * tig + (i % 2) + 8 * (i // 4)
    elif t == "tf32":
        row = gid + 8 * (i % 2)
        col = tig + 4 * (i // 2)
    elif t == "b1":
        # a0..a31: (gid, 32tig..); a32..a63: (gid+8, ..); a64..a127: the same 128 columns on
        row = gid + 8 * ((i // 32) % 2)
        col = 32 * tig + (i % 32) + 128 * (i // 64)
    else:  # 8-bit
        row = gid + 8 * ((i // 4) % 2)
        col = 4 * tig + (i % 4) + 16 * (i // 8)
    return 16 * warp + row, col


def meta_pos(t, sel, r, c):
    """(lane, bit) of the 4-bit metadata field of chunk c of row r (0..15) of a warp's rows of a
    sparse A: the ISA's metadata figures (sparse mma .m16n8k32 .f16/.bf16 and .m16n8k16 .tf32,
    and .m16n8k64 8-bit, reused by the sparse wgmma sections): 'Tk: [m..n]' in cell [x][y..z]."""
    gid = r % 8
    if BITS[t] == 8:
        # T(4g): row g, columns 0-31 (chunks 0-7, bits 0-31); T(4g+1): row g+8, columns 0-31;
        # T(4g+2), T(4g+3): the same rows, columns 32-63
        lane = 4 * gid + (r // 8) + 2 * (c // 8)
        return lane, 4 * (c % 8)
    # T(4g+2sel): row g in bits 0-15 and row g+8 in bits 16-31, chunks 0-3 (columns 0-15 for
    # 16-bit types, 0-7 for .tf32); T(4g+2sel+1): chunks 4-7
    lane = 4 * gid + 2 * sel + (c // 4)
    return lane, 16 * (r // 8) + 4 * (c % 4)


def rand_in(rng, t):
    """Element bits whose products and sums stay exact in binary64."""
    if t == "f16":
        return f16_bits(rng.randint(-64, 64) / 16.0 * (1 + rng.randint(0, 7) / 8.0))
    if t == "bf16":
        return f32_bits(rng.randint(-64, 64) / 16.0 * (1 + rng.randint(0, 127) / 128.0)) >> 16
    if t == "tf32":
        base = f32_bits(rng.randint(-64, 64) / 16.0 * (1 + rng.randint(0, 1023) / 1024.0))
        return (base & 0xFFFFE000) | rng.getrandbits(13)
    if t == "e4m3":
        while True:
            b = rng.getrandbits(8)
            if 4 <= (b >> 3 & 15) <= 12:
                return b
    if t == "e5m2":
        while True:
            b = rng.getrandbits(8)
            if 10 <= (b >> 2 & 31) <= 20:
                return b
    if t in ("s8", "u8"):
        return rng.getrandbits(8)
    if t == "b1":
        return rng.getrandbits(1)
    raise ValueError(t)


def sparse_pattern(rng, at, kc, desc_pairs):
    """For one row of a sparse A: the column (in K) of each of its kc stored elements, and the
    metadata field (4 bits) of each chunk. 2:4 types: two of each four columns, their two 2-bit
    indices low first; .tf32: one of each two, field 0b0100 (first) or 0b1110 (second)."""
    cols, fields = [], []
    if at == "tf32":
        for c in range(kc):
            p = rng.randrange(2)
            cols.append(2 * c + p)
            fields.append(0b1110 if p else 0b0100)
        return cols, fields
    for c in range(kc // 2):
        i0, i1 = sorted(rng.sample(range(4), 2))
        if desc_pairs and rng.random() < 0.3:
            # the ISA lists only equal indices as invalid: a descending pair is taken as given
            i0, i1 = i1, i0
        cols += [4 * c + i0, 4 * c + i1]
        fields.append(i0 | i1 << 2)
    return cols, fields


def gen(fname, title, rng, dt, at, bt, n, a_mode, b_mode, trans_a=0, trans_b=0, a_regs=False,
        neg_a=False, neg_b=False, scale_d=True, satfinite=False, chain=False, c_vals=None,
        sparse=False, sel=0, desc_pairs=False, a_start=0, b_start=8192, smem_size=16384,
        bad_meta=False, fault=None, version=None):
    kc = 256 // BITS[at]  # columns of A as stored
    k = 2 * kc if sparse else kc
    ea, eb_ = max(BITS[at] // 8, 1), max(BITS[bt] // 8, 1)
    A = [[rand_in(rng, at) for _ in range(kc)] for _ in range(64)]
    B = [[rand_in(rng, bt) for _ in range(n)] for _ in range(k)]
    # sparse: the column of each stored element, and the metadata registers (random bits in
    # every field that the selector does not name: they must not matter)
    acol = [list(range(kc)) for _ in range(64)]
    meta = []
    if sparse:
        meta = [rng.getrandbits(32) for _ in range(128)]
        for r in range(64):
            acol[r], fields = sparse_pattern(rng, at, kc, desc_pairs)
            for c, f in enumerate(fields):
                lane, bit = meta_pos(at, sel, r % 16, c)
                t = 32 * (r // 16) + lane
                meta[t] = meta[t] & ~(15 << bit) | f << bit
        if bad_meta:
            # row 37, chunk 1: two equal indices (.tf32: 0b0000), which the ISA leaves undefined
            lane, bit = meta_pos(at, sel, 37 % 16, 1)
            t = 32 * (37 // 16) + lane
            meta[t] = meta[t] & ~(15 << bit) | (0b0101 if at != "tf32" else 0) << bit
    smem = bytearray(smem_size)

    def lay(mode, mn_major, rows_mn, elem_bytes, base, kdim, ebits):
        w = WIDTH[mode]
        # the ISA's base offset: the pattern start address's bits 7..9 (swizzled modes only)
        bo = (base >> 7) & 7 if w else 0
        if not mn_major:
            kbytes = kdim * ebits // 8
            if w == 0:
                # LBO: next K core matrix; SBO: next 8 rows, after all of K
                return descriptor(base, 128, 128 * (kbytes // 16), mode)
            # a swizzled K-major row holds w bytes of K (a fault test breaks this on purpose)
            assert kbytes <= w or fault
            return descriptor(base, 16, 8 * w, mode, bo)  # LBO unused
        if w == 0:
            # 16-byte chunks along M/N SBO=128 apart, 8-row k groups LBO apart
            return descriptor(base, 128 * ((rows_mn * elem_bytes + 15) // 16), 128, mode)
        return descriptor(base, 8 * w * (kdim // 8), 8 * w, mode, bo)

    da = lay(a_mode, trans_a, 64, ea, a_start, kc, BITS[at])
    db = lay(b_mode, trans_b, n, eb_, b_start, k, BITS[bt])

    def put(desc, mn_major, mn, kk, t, bits, lo, hi):
        if t == "b1":
            a = address(desc, mn_major, mn, kk // 8, 1)
            assert lo <= a < hi
            smem[a] |= bits << (kk % 8)
            return
        e = BITS[t] // 8
        a = address(desc, mn_major, mn, kk, e)
        assert lo <= a and a + e <= hi
        smem[a:a + e] = bits.to_bytes(e, "little")

    if not a_regs:
        for r in range(64):
            for kk in range(kc):
                put(da, trans_a, r, kk, at, A[r][kk], 0, b_start)
    for kk in range(k):
        for c in range(n):
            put(db, trans_b, c, kk, bt, B[kk][c], b_start, len(smem))
    per_d = 32 // BITS[dt]
    nd = 64 * n // 128 // per_d
    # accumulators: element (row, col)
    C = [[(c_vals(rng) if c_vals else rand_acc(rng, dt)) for _ in range(n)] for _ in range(64)]

    def regs_of(M, t, pos, nregs):
        per = 32 // BITS[t]
        out = []
        for tid in range(128):
            w, lane = tid // 32, tid % 32
            for r in range(nregs):
                word = 0
                for s in range(per):
                    row, col = pos(w, lane, r * per + s)
                    word |= M[row][col] << (s * BITS[t])
                out.append(word)
        return out

    c_words = regs_of(C, dt, d_pos, nd)
    a_words = regs_of(A, at, lambda w, l, i: a_reg_pos(at, w, l, i), 4) if a_regs else []
    sa = -1 if neg_a else 1
    sb = -1 if neg_b else 1
    is_int = dt == "s32"

    def product(Cm):
        D = [[0] * n for _ in range(64)]
        for r in range(64):
            # the stored elements of the row, in K order (a sparse A's pruned zeros take no part)
            terms = sorted(range(kc), key=lambda j: acol[r][j])
            for c in range(n):
                acc = acc_value(dt, Cm[r][c]) if scale_d else (0 if is_int else 0.0)
                for j in terms:
                    a, b = value(at, A[r][j]), value(bt, B[acol[r][j]][c])
                    if at == "b1":
                        acc += a & b
                    else:
                        acc += sa * a * sb * b
                D[r][c] = round_to(dt, acc, satfinite)
        return D

    D = product(C)
    if chain:
        D = product(D)
    out = regs_of(D, dt, d_pos, nd) * 2

    words = [int.from_bytes(smem[i:i + 4], "little") for i in range(0, len(smem), 4)]
    words += c_words + a_words + meta
    nsm = len(smem) // 4
    body = []
    body.append("\tmov.u32 %r1, %tid.x;")
    body.append("\tmov.u64 %rd2, IN;")
    body.append("\tmov.u32 %r2, %r1;")
    body.append("COPY:")
    body.append("\tmul.wide.u32 %rd3, %r2, 4;")
    body.append("\tadd.s64 %rd4, %rd2, %rd3;")
    body.append("\tld.global.u32 %r3, [%rd4];")
    body.append("\tmov.u32 %r4, SM;")
    body.append("\tmad.lo.u32 %r4, %r2, 4, %r4;")
    body.append("\tst.shared.u32 [%r4], %r3;")
    body.append("\tadd.u32 %r2, %r2, 128;")
    body.append(f"\tsetp.lt.u32 %p1, %r2, {nsm};")
    body.append("\t@%p1 bra COPY;")
    body.append("\tbar.sync 0;")
    # descriptors: start address += shared address of SM >> 4
    body.append("\tmov.u32 %r5, SM;")
    body.append("\tshr.u32 %r5, %r5, 4;")
    body.append("\tcvt.u64.u32 %rd5, %r5;")
    body.append(f"\tadd.u64 %rd6, %rd5, {da:#x};")
    body.append(f"\tadd.u64 %rd7, %rd5, {db:#x};")
    # accumulators
    body.append(f"\tmul.lo.u32 %r6, %r1, {nd * 4};")
    body.append("\tcvt.u64.u32 %rd8, %r6;")
    body.append(f"\tadd.s64 %rd8, %rd8, {nsm * 4};")
    body.append("\tadd.s64 %rd8, %rd2, %rd8;")
    for r in range(nd):
        body.append(f"\tld.global.u32 %d{r}, [%rd8+{4 * r}];")
    if a_regs:
        body.append("\tmul.lo.u32 %r6, %r1, 16;")
        body.append("\tcvt.u64.u32 %rd9, %r6;")
        body.append(f"\tadd.s64 %rd9, %rd9, {(nsm + 128 * nd) * 4};")
        body.append("\tadd.s64 %rd9, %rd2, %rd9;")
        for r in range(4):
            body.append(f"\tld.global.u32 %a{r}, [%rd9+{4 * r}];")
    if sparse:
        body.append("\tmul.lo.u32 %r6, %r1, 4;")
        body.append("\tcvt.u64.u32 %rd9, %r6;")
        body.append(f"\tadd.s64 %rd9, %rd9, {(nsm + 128 * nd + len(a_words)) * 4};")
        body.append("\tadd.s64 %rd9, %rd2, %rd9;")
        body.append("\tld.global.u32 %r7, [%rd9];")
    body.append(f"\tsetp.ne.u32 %p2, {1 if scale_d else 0}, 0;")
    dvec = "{" + ", ".join(f"%d{r}" for r in range(nd)) + "}"
    a_op = "{%a0, %a1, %a2, %a3}" if a_regs else "%rd6"
    shape = f".m64n{n}k{k}"
    types = f".{dt}.{at}.{bt}"
    sat = ".satfinite" if satfinite else ""
    if version is None:
        version = "8.4" if at != bt or sparse or at == "b1" else "8.0"
    imms = []
    if not is_int:
        imms += [str(sa), str(sb)]
        if at in ("f16", "bf16"):
            if not a_regs:
                imms.append(str(trans_a))
            imms.append(str(trans_b))
    sp_ops = ["%r7", str(sel)] if sparse else []
    ops = ", ".join([dvec, a_op, "%rd7"] + sp_ops + ["%p2"] + imms)
    name = "wgmma.mma_async.sp" if sparse else "wgmma.mma_async"
    popc = ".and.popc" if at == "b1" else ""
    body.append("\twgmma.fence.sync.aligned;")
    for _ in range(2 if chain else 1):
        body.append(f"\t{name}.sync.aligned{shape}{sat}{types}{popc} {ops};")
    body.append("\twgmma.commit_group.sync.aligned;")
    # out[0 .. 128*nd): the accumulators before the wait; then after it

    def store(base):
        body.append(f"\tmul.lo.u32 %r6, %r1, {nd * 4};")
        body.append("\tcvt.u64.u32 %rd3, %r6;")
        body.append(f"\tadd.s64 %rd3, %rd3, {base};")
        body.append("\tadd.s64 %rd3, %rd1, %rd3;")
        for r in range(nd):
            body.append(f"\tst.global.u32 [%rd3+{4 * r}], %d{r};")

    store(0)
    body.append("\twgmma.wait_group.sync.aligned 0;")
    store(128 * nd * 4)

    hdr = [f"// {title}",
           "// Generated by tests/run/tools/wgmma_model.py (the ISA's descriptor, shared-memory",
           "// layout and fragment figures, and a plain matmul); do not edit by hand.",
           f"// RUN: --grid 1 --block 128 --arg u32[{len(out)}]"]
    from mma_model import expect_line
    if fault:
        exit_code, stderr = fault
        hdr += [f"// EXIT: {exit_code}"] + [f"// STDERR: {e}" for e in stderr]
    else:
        hdr += expect_line(out)
    src = "\n".join(hdr) + "\n\n.version " + version + "\n.target sm_90a\n.address_size 64\n\n"
    src += f".global .align 16 .b32 IN[{len(words)}] = {{\n"
    for i in range(0, len(words), 8):
        src += "\t" + ", ".join(f"0x{w:08x}" for w in words[i:i + 8])
        src += ",\n" if i + 8 < len(words) else "\n"
    src += "};\n\n"
    src += f".shared .align 1024 .b8 SM[{len(smem)}];\n\n"
    src += ".visible .entry k(.param .u64 out)\n{\n"
    src += "\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<10>;\n\t.reg .pred %p<4>;\n"
    src += f"\t.reg .b32 %d<{nd}>;\n\t.reg .b32 %a<4>;\n\n"
    src += "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
    src += "\n".join(body) + "\n\tret;\n}\n"
    with open(os.path.join(FAULT_DIR if fault else OUT_DIR, fname), "w") as f:
        f.write(src)


def main():
    rng = random.Random(90)
    gen("wgmma_f16.ptx", "wgmma.mma_async .m64n16k16 .f32.f16.f16, descriptors without swizzle, "
        "imm-scale-a -1, two chained operations into one accumulator", rng,
        "f32", "f16", "f16", 16, 0, 0, neg_a=True, chain=True)
    gen("wgmma_swizzle128_trans.ptx", "wgmma.mma_async .m64n32k16 .f32.bf16.bf16, A M-major "
        "(imm-trans-a) 128B swizzle, B N-major (imm-trans-b) 64B swizzle", rng,
        "f32", "bf16", "bf16", 32, 1, 2, trans_a=1, trans_b=1)
    gen("wgmma_swizzle_kmajor.ptx", "wgmma.mma_async .m64n24k16 .f16.f16.f16, A K-major 32B "
        "swizzle, B K-major 128B swizzle, imm-scale-b -1", rng,
        "f16", "f16", "f16", 24, 3, 1, neg_b=True)
    gen("wgmma_trans_noswizzle.ptx", "wgmma.mma_async .m64n16k16 .f32.f16.f16, A and B "
        "M/N-major without swizzle", rng, "f32", "f16", "f16", 16, 0, 0, trans_a=1, trans_b=1)
    gen("wgmma_rega.ptx", "wgmma.mma_async .m64n8k16 .f32.f16.f16 with A in registers, B K-major "
        "64B swizzle, scale-d false (C ignored)", rng,
        "f32", "f16", "f16", 8, 0, 2, a_regs=True, scale_d=False)
    gen("wgmma_tf32.ptx", "wgmma.mma_async .m64n8k8 .f32.tf32.tf32 (low 13 input bits ignored), "
        "128B swizzle", rng, "f32", "tf32", "tf32", 8, 1, 1)
    gen("wgmma_fp8.ptx", "wgmma.mma_async .m64n16k32 .f32.e4m3.e5m2 with A in registers, B 32B "
        "swizzle", rng, "f32", "e4m3", "e5m2", 16, 0, 3, a_regs=True)
    gen("wgmma_int.ptx", "wgmma.mma_async .m64n8k32 .satfinite .s32.s8.u8, accumulators near the "
        ".s32 limits", rng, "s32", "s8", "u8", 8, 0, 0, satfinite=True,
        c_vals=lambda r: r.choice([0x7FFFFF00, 0x80000100, r.getrandbits(16)]))

    # sparse A (wgmma.mma_async.sp), .b1, and descriptors with a base offset
    rng = random.Random(91)
    near_limits = lambda r: r.choice([0x7FFFFF00, 0x80000100, r.getrandbits(16)])  # noqa: E731
    gen("wgmma_sp_f16.ptx", "wgmma.mma_async.sp .m64n16k32 .f32.f16.f16, compressed A K-major "
        "128B swizzle, B K-major 64B swizzle, sp-sel 0 (random bits in the metadata the selector "
        "does not name)", rng, "f32", "f16", "f16", 16, 1, 2, sparse=True, sel=0)
    gen("wgmma_sp_bf16_trans.ptx", "wgmma.mma_async.sp .m64n24k32 .f32.bf16.bf16, compressed A "
        "M-major (imm-trans-a) 64B swizzle, B N-major (imm-trans-b) 128B swizzle, sp-sel 1, "
        "imm-scale-a -1", rng, "f32", "bf16", "bf16", 24, 2, 1, trans_a=1, trans_b=1,
        neg_a=True, sparse=True, sel=1)
    gen("wgmma_sp_f16_rega.ptx", "wgmma.mma_async.sp .m64n8k32 .f16.f16.f16 with compressed A in "
        "registers, B K-major without swizzle, sp-sel 1, imm-scale-b -1, scale-d false", rng,
        "f16", "f16", "f16", 8, 0, 0, a_regs=True, neg_b=True, scale_d=False, sparse=True, sel=1)
    gen("wgmma_sp_tf32.ptx", "wgmma.mma_async.sp .m64n8k16 .f32.tf32.tf32 (1:2 sparsity, "
        "metadata 0b0100/0b1110), A without swizzle, B K-major 64B swizzle, sp-sel 1", rng,
        "f32", "tf32", "tf32", 8, 0, 2, sparse=True, sel=1)
    gen("wgmma_sp_tf32_rega.ptx", "wgmma.mma_async.sp .m64n16k16 .f32.tf32.tf32 with compressed "
        "A in registers, B K-major 128B swizzle, sp-sel 0", rng,
        "f32", "tf32", "tf32", 16, 0, 1, a_regs=True, sparse=True, sel=0)
    gen("wgmma_sp_fp8.ptx", "wgmma.mma_async.sp .m64n16k64 .f16.e4m3.e5m2 with compressed A in "
        "registers (some index pairs in descending order), B K-major 128B swizzle", rng,
        "f16", "e4m3", "e5m2", 16, 0, 1, a_regs=True, sparse=True, desc_pairs=True)
    gen("wgmma_sp_int.ptx", "wgmma.mma_async.sp .m64n16k64 .satfinite .s32.s8.u8, A K-major 64B "
        "swizzle, B without swizzle, accumulators near the .s32 limits", rng,
        "s32", "s8", "u8", 16, 2, 0, satfinite=True, sparse=True, c_vals=near_limits)
    gen("wgmma_sp_u8_rega.ptx", "wgmma.mma_async.sp .m64n24k64 .s32.u8.u8 (wrapping) with "
        "compressed A in registers, B K-major 64B swizzle", rng,
        "s32", "u8", "u8", 24, 0, 2, a_regs=True, sparse=True)
    gen("wgmma_b1.ptx", "wgmma.mma_async .m64n16k256 .s32.b1.b1 .and.popc, A K-major 128B "
        "swizzle, B without swizzle", rng, "s32", "b1", "b1", 16, 1, 0)
    gen("wgmma_b1_rega.ptx", "wgmma.mma_async .m64n48k256 .s32.b1.b1 .and.popc with A in "
        "registers, B K-major 32B swizzle, scale-d false", rng,
        "s32", "b1", "b1", 48, 0, 3, a_regs=True, scale_d=False)
    gen("wgmma_base_offset.ptx", "wgmma.mma_async .m64n16k16 .f32.f16.f16 with descriptor base "
        "offsets: A K-major 128B swizzle whose pattern starts at 0x180 (base offset 3), B N-major "
        "64B swizzle starting at 0x3280 (base offset 5)", rng,
        "f32", "f16", "f16", 16, 1, 2, trans_b=1, a_start=0x180, b_start=0x3280,
        smem_size=20480)
    gen("wgmma_base_offset_32b.ptx", "wgmma.mma_async .m64n16k16 .f32.bf16.bf16 with descriptor "
        "base offsets: A M-major 32B swizzle starting at 0x480 (base offset 1), B K-major 32B "
        "swizzle starting at 0x2180 (base offset 3)", rng,
        "f32", "bf16", "bf16", 16, 3, 3, trans_a=1, a_start=0x480, b_start=0x2180)

    # misuse: the ISA leaves invalid metadata undefined (ptxvm faults), and a swizzled K-major
    # B cannot hold the 64 bytes of K of a sparse operation with a 32-byte swizzle
    gen("wgmma_sp_bad_metadata.ptx", "wgmma.mma_async.sp .f16 whose metadata gives chunk 1 of "
        "row 37 the same index twice (0b0101): undefined in the ISA, a fault in ptxvm", rng,
        "f32", "f16", "f16", 8, 0, 0, sparse=True, sel=1, bad_meta=True,
        fault=(2, ["invalid sparsity metadata 0b0101 for chunk 1 of row 37 of A",
                   f"lane {meta_pos('f16', 1, 37 % 16, 1)[0]} of warp 2"]))
    gen("wgmma_sp_tf32_bad_metadata.ptx", "wgmma.mma_async.sp .tf32 whose metadata field for "
        "chunk 1 of row 37 is 0b0000 (only 0b0100 and 0b1110 are defined): a fault", rng,
        "f32", "tf32", "tf32", 8, 0, 0, sparse=True, sel=0, bad_meta=True,
        fault=(2, ["invalid sparsity metadata 0b0000 for chunk 1 of row 37 of A",
                   ".tf32 takes 0b0100 or 0b1110"]))
    gen("wgmma_sp_swizzle32_kmajor.ptx", "wgmma.mma_async.sp .f16 with B K-major under a 32-byte "
        "swizzle: its 64 bytes of K do not fit the swizzle's 32-byte rows (the ISA has no place "
        "for them): a fault", rng, "f32", "f16", "f16", 8, 0, 3, sparse=True,
        fault=(2, ["B is K-major with a 32-byte swizzle", "byte 32 of K"]))


if __name__ == "__main__":
    main()
