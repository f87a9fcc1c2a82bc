#!/usr/bin/env python3
"""Model of the sm_120a `mma` kinds (`.kind::f8f6f4`, block-scaled `.kind::mxf8f6f4`,
`.kind::mxf4`, `.kind::mxf4nvf4`) and of the sm_100a `.b8` shapes of `ldmatrix`/`stmatrix`, and
generator of their run tests (tests/run/matrix/mma_kind_*.ptx, ldmatrix_b8.ptx, stmatrix_b8.ptx).
It extends mma_model.py (whose shape-by-shape fragment formulas and number helpers it reuses)
and is independent of ptxvm's code. What it codes, from NVIDIA's PTX ISA:

- the FP6/FP4 formats ("Alternate floating point data formats"): .e3m2 (bias 3, largest 28),
  .e2m3 (bias 1, largest 7.5), .e2m1 (the eight values 0 0.5 1 1.5 2 3 4 6), no inf/NaN; the
  scale formats .ue8m0 (2^(e-127), 0xff NaN) and .ue4m3 (unsigned e4m3, 0x7f NaN);
- the 8-bit containers of .kind::f8f6f4/.kind::mxf8f6f4 (mma's description: .e2m1 in the
  central 4 bits, .e3m2/.e2m3 in the low 6 bits, padding ignored) and the unpadded packing of
  .kind::mxf4/.kind::mxf4nvf4 (eight .e2m1 per register, as .s4);
- the fragment layouts: .m16n8k32 as the 8-bit .e4m3 figures, .m16n8k64 .e2m1 as the 4-bit
  .s4/.u4 figures (mma_model.a_pos/b_pos/c_pos);
- block scaling ("Block Scaling for mma.sync"): D = (A*scale_A)*(B*scale_B) + C, each row of A
  (column of B) cut into scale_vec chunks along K; thread-id-a picks the thread pair of each quad
  (lanes %4 in {0,1} or {2,3}) whose first thread holds the factors of row groupID and second of
  row groupID+8; thread-id-b picks the one thread of quad n holding column n's; byte-id picks
  the byte (1X), byte pair from 0 or 2 (2X) or all four bytes (4X) of the scale register, the
  i-th selected byte being chunk i;
- the sparse forms mma.sp::ordered_metadata ("Matrix multiply-accumulate operation using
  mma.sp instruction with sparse matrix A"): .kind::f8f6f4/.kind::mxf8f6f4 .m16n8k64 with 2:4
  sparsity over the 8-bit containers and the compressed A, B and metadata figures of the 8-bit
  .m16n8k64 types; .kind::mxf4/.kind::mxf4nvf4 .m16n8k128 .e2m1 with the pair-wise 4:8
  sparsity and figures of .s4/.u4 .m16n8k128 (mma_model.sp_a_pos/sp_b_pos/sp_meta_loc, the
  compressor of mma_model's SparseCase); sparsity selector 0 (the four threads of a quad hold
  the metadata); the scale factors cut the dense K (64 or 128) into scale_vec chunks, as for
  the dense forms (CUTLASS's SM120 sparse atoms: vector size 64 for 1X at K = 64);
- ldmatrix .m16n16 (.trans): lane t's registers 2j, 2j+1 hold 4 consecutive columns 4(t%4)..
  of rows t/4 and t/4+8 of the transposed 16x16 byte matrix j, whose 16 rows come from the
  addresses of lanes 16j..16j+15; .m8n16: register j of lane t holds 4 consecutive columns
  4(t%4).. of row t/4 of 8x16 matrix j (rows from lanes 8j..8j+7); .b6x16_p32/.b4x16_p64: a
  16-byte source row is 16 6-bit (4-bit) elements, little-endian from bit 0, then 4 (8) bytes
  of padding, each element unpacked into the low bits of its byte (as CUTLASS's SM120 code
  documents: 0b0000ABCD for 4-bit data);
- stmatrix .m16n8 .trans .b8: register j of lane t holds elements (t/4, 2(t%4)), (t/4,
  2(t%4)+1), (t/4+8, 2(t%4)), (t/4+8, 2(t%4)+1) of a 16x8 byte matrix (the .m16n8 accumulator
  figure with byte elements); its transpose (8 rows of 16 bytes) goes to the addresses of lanes
  8j..8j+7.

Products are exact and summed in Python floats (binary64) in k order after C, rounded once.

    python3 tests/run/tools/mma_kind_model.py    # rewrite the files above
"""

import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mma_model as mm  # noqa: E402

OUT_DIR = mm.OUT_DIR
FAULT_DIR = os.path.join(HERE, "..", "fault")

# --------------------------------------------------------------------------------------------
# formats

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def small(code, ebits, mbits):
    """A sign/exponent/fraction format without inf/NaN."""
    s = -1.0 if code >> (ebits + mbits) & 1 else 1.0
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    if e == 0:
        return s * m * 2.0 ** (1 - bias - mbits)
    return s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def e2m1(code):
    v = E2M1[code & 7]
    return -v if code & 8 else v


def container_value(t, byte):
    """Value of an element in its 8-bit container (f8f6f4 kinds)."""
    if t == "e2m1":
        return e2m1((byte >> 2) & 0xF)
    if t == "e3m2":
        return small(byte & 0x3F, 3, 2)
    if t == "e2m3":
        return small(byte & 0x3F, 2, 3)
    return mm.value(t, byte)


def container_bits(t, code, pad):
    """The container byte of element `code` with padding bits `pad` (random)."""
    if t == "e2m1":
        return (code & 0xF) << 2 | (pad & 0xC3)
    if t in ("e3m2", "e2m3"):
        return (code & 0x3F) | (pad & 0xC0)
    return code


def ue8m0(b):
    return math.nan if b == 0xFF else 2.0 ** (b - 127)


def ue4m3(b):
    return mm.fp8_val(b & 0x7F, 4, 3, False)


def rand_code(rng, t):
    """A random element code (finite)."""
    if t == "e2m1":
        return rng.getrandbits(4)
    if t in ("e3m2", "e2m3"):
        return rng.getrandbits(6)
    while True:
        b = rng.getrandbits(8)
        if math.isfinite(mm.value(t, b)) and abs(mm.value(t, b)) <= 64:
            return b


# --------------------------------------------------------------------------------------------
# one case


class KindCase:
    """`kind` in f8f6f4, mxf8f6f4, mxf4, mxf4nvf4; `vec` 1/2/4 and `stype` for the scaled ones;
    `sel` = (byte-id-a, thread-id-a, byte-id-b, thread-id-b); `sel_regs`: selectors from .b16
    registers instead of immediates; `special(case)` edits codes and scale words."""

    def __init__(self, rng, kind, at, bt, acc="f32", vec=None, stype=None, sel=(0, 0, 0, 0),
                 sel_regs=False, special=None, order="shape_first", explicit_vec=True,
                 sparse=False, meta_vec=False, sdata_vec=False):
        self.kind, self.at, self.bt, self.acc = kind, at, bt, acc
        self.vec, self.stype, self.sel, self.sel_regs = vec, stype, sel, sel_regs
        self.order, self.explicit_vec = order, explicit_vec
        # sparse: mma.sp::ordered_metadata; meta_vec/sdata_vec: metadata / scale data written
        # as one-element vectors {%r}
        self.sparse, self.meta_vec, self.sdata_vec = sparse, meta_vec, sdata_vec
        self.packed = kind in ("mxf4", "mxf4nvf4")
        self.shape = "m16n8k64" if self.packed else "m16n8k32"
        if sparse:
            self.shape = "m16n8k128" if self.packed else "m16n8k64"
        m, n, k = mm.dims(self.shape)
        self.m, self.n, self.k = m, n, k
        self.A = [[rand_code(rng, at) for _ in range(k)] for _ in range(m)]
        self.B = [[rand_code(rng, bt) for _ in range(n)] for _ in range(k)]
        self.Apad = [[rng.getrandbits(8) for _ in range(k)] for _ in range(m)]
        self.Bpad = [[rng.getrandbits(8) for _ in range(n)] for _ in range(k)]
        self.C = [[mm.rand_acc(rng, acc) for _ in range(n)] for _ in range(m)]
        self.scaled = kind != "f8f6f4"
        # per lane scale words
        def sbyte():
            if stype == "ue4m3":
                return rng.randint(0x28, 0x48)
            return rng.randint(120, 134)
        self.SA = [sum(sbyte() << (8 * i) for i in range(4)) for _ in range(32)]
        self.SB = [sum(sbyte() << (8 * i) for i in range(4)) for _ in range(32)]
        if special:
            special(self)
        if sparse:
            self.sparsify(rng)
        self.compute()

    # sparse A ------------------------------------------------------------------------------
    # a chunk is 4 elements (8-bit containers, 2 kept) or 8 (packed .e2m1: 2 kept pairs); a
    # 2-bit index names an element or a pair

    def sp_geom(self):
        """(proxy type of the figures, dense elements per chunk, stored elements per chunk,
        elements per 2-bit index, elements per register)."""
        if self.packed:
            return ("s4", 8, 4, 2, 8)
        return ("e4m3", 4, 2, 1, 4)

    def sparsify(self, rng):
        _, ce, _, _, _ = self.sp_geom()
        nch = self.k // ce
        self.keep = [[sorted(rng.sample(range(4), 2)) for _ in range(nch)] for _ in range(self.m)]
        # rows 0 and 2 keep units 0 and 1 of chunk 0, where the special values go
        self.keep[0][0] = [0, 1]
        self.keep[2][0] = [0, 1]
        # metadata: the four threads of each quad (selector 0), as the figures lay them out
        proxy, ce, _, _, _ = self.sp_geom()
        self.meta = [0] * 32
        for quad in range(8):
            for row in (quad, quad + 8):
                for c in range(nch):
                    grp = self.keep[row][c][0] | self.keep[row][c][1] << 2
                    th, bit = mm.sp_meta_loc(self.shape, proxy, 0, row, c)
                    self.meta[4 * quad + th] |= grp << bit

    def stored(self, r, c):
        """Whether dense element (r, c) of A is one of the stored (kept) ones."""
        if not self.sparse:
            return True
        _, ce, _, per_idx, _ = self.sp_geom()
        return (c % ce) // per_idx in self.keep[r][c // ce]

    def elem_a(self, r, c):
        if not self.stored(r, c):
            return 0.0
        if self.packed:
            return e2m1(self.A[r][c])
        return container_value(self.at, container_bits(self.at, self.A[r][c], self.Apad[r][c]))

    def elem_b(self, r, c):
        if self.packed:
            return e2m1(self.B[r][c])
        return container_value(self.bt, container_bits(self.bt, self.B[r][c], self.Bpad[r][c]))

    def scale_tables(self):
        """SF_A[row][chunk], SF_B[chunk][col], by walking the lanes that supply them."""
        m, n = self.m, self.n
        vec = self.vec
        sfa = [[None] * vec for _ in range(m)]
        sfb = [[None] * n for _ in range(vec)]
        bida, tida, bidb, tidb = self.sel
        dec = ue4m3 if self.stype == "ue4m3" else ue8m0
        for lane in range(32):
            g, q = lane >> 2, lane % 4
            if q in (2 * tida, 2 * tida + 1):
                row = g if q == 2 * tida else g + 8
                for ch in range(vec):
                    sfa[row][ch] = dec((self.SA[lane] >> (8 * (bida + ch))) & 0xFF)
            if q == tidb:
                for ch in range(vec):
                    sfb[ch][g] = dec((self.SB[lane] >> (8 * (bidb + ch))) & 0xFF)
        return sfa, sfb

    def compute(self):
        m, n, k = self.m, self.n, self.k
        if self.scaled:
            sfa, sfb = self.scale_tables()
            size = k // self.vec
        D = [[0] * n for _ in range(m)]
        for r in range(m):
            for c in range(n):
                acc = mm.acc_value(self.acc, self.C[r][c])
                for kk in range(k):
                    a, b = self.elem_a(r, kk), self.elem_b(kk, c)
                    if self.scaled:
                        a = a * sfa[r][kk // size]
                        b = b * sfb[kk // size][c]
                    acc = acc + a * b
                D[r][c] = mm.round_to(self.acc, acc)
        self.D = D

    # registers -----------------------------------------------------------------------------

    def a_words(self, lane):
        if self.sparse:
            # lane's element i is the j-th stored element of the dense columns first.. of its
            # row (j counting the lane's elements with the same row and first column)
            proxy, ce, cs, per_idx, p = self.sp_geom()
            words = [0] * 4
            seen = {}
            for i in range(4 * p):
                row, first = mm.sp_a_pos(self.shape, proxy, lane, i)
                j = seen.get((row, first), 0)
                seen[(row, first)] = j + 1
                c = first // ce + j // cs
                u = (j % cs) // per_idx
                col = c * ce + self.keep[row][c][u] * per_idx + j % per_idx
                if self.packed:
                    words[i // p] |= self.A[row][col] << (4 * (i % p))
                else:
                    bits = container_bits(self.at, self.A[row][col], self.Apad[row][col])
                    words[i // p] |= bits << (8 * (i % p))
            return words
        if self.packed:
            words = [0] * 4
            for i in range(32):
                r, c = mm.a_pos("m16n8k64", "s4", lane, i)
                words[i // 8] |= self.A[r][c] << (4 * (i % 8))
            return words
        words = [0] * 4
        for i in range(16):
            r, c = mm.a_pos("m16n8k32", "e4m3", lane, i)
            words[i // 4] |= container_bits(self.at, self.A[r][c], self.Apad[r][c]) << (8 * (i % 4))
        return words

    def b_words(self, lane):
        if self.sparse:
            proxy, _, _, _, p = self.sp_geom()
            words = [0] * 4
            for i in range(4 * p):
                r, c = mm.sp_b_pos(self.shape, proxy, lane, i)
                if self.packed:
                    words[i // p] |= self.B[r][c] << (4 * (i % p))
                else:
                    bits = container_bits(self.bt, self.B[r][c], self.Bpad[r][c])
                    words[i // p] |= bits << (8 * (i % p))
            return words
        words = [0] * 2
        if self.packed:
            for i in range(16):
                r, c = mm.b_pos("m16n8k64", "s4", lane, i)
                words[i // 8] |= self.B[r][c] << (4 * (i % 8))
            return words
        for i in range(8):
            r, c = mm.b_pos("m16n8k32", "e4m3", lane, i)
            words[i // 4] |= container_bits(self.bt, self.B[r][c], self.Bpad[r][c]) << (8 * (i % 4))
        return words

    def acc_words(self, mat, lane):
        per = mm.per_reg(self.acc)
        bits = mm.BITS[self.acc]
        words = [0] * (4 // per)
        for i in range(4):
            r, c = mm.c_pos(self.shape, lane, i)
            words[i // per] |= mat[r][c] << ((i % per) * bits)
        return words

    def name(self):
        kind = f".kind::{self.kind}"
        scale = ""
        if self.scaled:
            scale = ".block_scale" + (f".scale_vec::{self.vec}X" if self.explicit_vec else "")
        types = f".{self.acc}.{self.at}.{self.bt}.{self.acc}" + (f".{self.stype}" if self.scaled else "")
        if self.sparse:
            # CUTLASS's SM120 atoms write the kind first and `.sp::ordered_metadata` after it
            if self.order == "kind_first":
                return (f"mma.sync.aligned{kind}.sp::ordered_metadata{scale}.{self.shape}.row.col"
                        f"{types}")
            return f"mma.sp::ordered_metadata.sync.aligned.{self.shape}.row.col{kind}{scale}{types}"
        if self.order == "kind_first":
            return f"mma.sync.aligned{kind}{scale}.{self.shape}.row.col{types}"
        return f"mma.sync.aligned.{self.shape}.row.col{kind}{scale}{types}"


def gen_kind_file(fname, cases, title, version="8.7"):
    words = []
    body = []
    out_words = []
    counters = {"r": 10, "f": 0, "fd": 0}
    nh = [0]
    out_off = 0
    for ci, cs in enumerate(cases):
        nc = 4 if cs.acc == "f32" else 2
        nb = 4 if cs.sparse else 2
        layout = [("a", j) for j in range(4)] + [("b", j) for j in range(nb)] + \
            [("c", j) for j in range(nc)]
        if cs.sparse:
            layout += [("e", 0)]
        if cs.scaled:
            layout += [("sa", 0), ("sb", 0)]
        if cs.sel_regs:
            layout += [("sel", 0)]
        lane_words = len(layout) + len(layout) % 2
        base = len(words)
        for lane in range(32):
            regs = {"a": cs.a_words(lane), "b": cs.b_words(lane), "c": cs.acc_words(cs.C, lane),
                    "sa": [cs.SA[lane]], "sb": [cs.SB[lane]],
                    "sel": [cs.sel[0] | cs.sel[1] << 8 | cs.sel[2] << 16 | cs.sel[3] << 24],
                    "e": [cs.meta[lane]] if cs.sparse else []}
            lw = [regs[f][j] for f, j in layout]
            words += lw + [0] * (lane_words - len(lw))
        names = {}
        for frag, cnt, cls in (("a", 4, "r"), ("b", nb, "r"), ("e", int(cs.sparse), "r"), ("c", nc, "f" if cs.acc == "f32" else "r"),
                               ("d", nc, "f" if cs.acc == "f32" else "r"), ("sa", 1, "r"),
                               ("sb", 1, "r"), ("sel", 1, "r")):
            names[frag] = []
            for _ in range(cnt):
                names[frag].append(f"%{cls}{counters[cls]}")
                counters[cls] += 1
        body.append(f"\t// case {ci}: {cs.name()}")
        body.append(f"\tmad.wide.u32 %rd3, %r1, {lane_words * 4}, %rd2;")
        body.append(f"\tadd.u64 %rd3, %rd3, {base * 4};")
        for off, (frag, j) in enumerate(layout):
            reg = names[frag][j]
            ty = "f32" if reg.startswith("%f") else "b32"
            body.append(f"\tld.global.{ty} {reg}, [%rd3+{off * 4}];")
        vec = lambda f: "{" + ", ".join(names[f]) + "}"
        ops = f"{vec('d')}, {vec('a')}, {vec('b')}, {vec('c')}"
        if cs.sparse:
            e = names["e"][0]
            ops += f", {{{e}}}, 0" if cs.meta_vec else f", {e}, 0"
        if cs.scaled:
            if cs.sel_regs:
                hs = [f"%h{nh[0] + q}" for q in range(4)]
                nh[0] += 4
                # byte q of the word is selector q (byte-id-a, thread-id-a, byte-id-b, ...)
                for q, h in enumerate(hs):
                    body.append(f"\tshr.b32 %r2, {names['sel'][0]}, {8 * q};")
                    body.append(f"\tcvt.u16.u32 {h}, %r2;")
                    body.append(f"\tand.b16 {h}, {h}, 255;")
                sa, sb = f"{{{hs[0]}, {hs[1]}}}", f"{{{hs[2]}, {hs[3]}}}"
            else:
                sa = f"{{{cs.sel[0]}, {cs.sel[1]}}}"
                sb = f"{{{cs.sel[2]}, {cs.sel[3]}}}"
            da, db = names["sa"][0], names["sb"][0]
            if cs.sdata_vec:
                da, db = f"{{{da}}}", f"{{{db}}}"
            ops += f", {da}, {sa}, {db}, {sb}"
        body.append(f"\t{cs.name()} {ops};")
        body.append(f"\tmad.wide.u32 %rd4, %r1, {nc * 4}, %rd1;")
        body.append(f"\tadd.u64 %rd4, %rd4, {out_off * 4};")
        for q, reg in enumerate(names["d"]):
            ty = "f32" if reg.startswith("%f") else "b32"
            body.append(f"\tst.global.{ty} [%rd4+{q * 4}], {reg};")
        for lane in range(32):
            out_words += cs.acc_words(cs.D, lane)
        out_off += 32 * nc
    write_kind_test(os.path.join(OUT_DIR, fname), "sm_120a", version, title, words, body, out_words,
                    counters, nh[0])


def write_kind_test(path, target, version, title, words, body, out_words, counters, nh,
                    extra_header=(), run=None, shared=None, gen_note=True):
    hdr = [f"// {title}"]
    if gen_note:
        hdr += ["// Generated by tests/run/tools/mma_kind_model.py (the ISA's formats, fragment",
                "// figures and block-scaling selectors, and a plain matmul); do not edit by hand."]
    hdr.append(run or f"// RUN: --grid 1 --block 32 --arg u32[{len(out_words)}]")
    hdr += list(extra_header)
    if out_words:
        hdr += mm.expect_line(out_words)
    src = "\n".join(hdr) + "\n\n"
    src += f".version {version}\n.target {target}\n.address_size 64\n\n"
    if words:
        src += f".global .align 16 .b32 IN[{len(words)}] = {{\n"
        for q in range(0, len(words), 8):
            src += "\t" + ", ".join(f"0x{w:08x}" for w in words[q:q + 8])
            src += ",\n" if q + 8 < len(words) else "\n"
        src += "};\n\n"
    if shared:
        src += shared + "\n"
    src += ".visible .entry k(.param .u64 out)\n{\n"
    src += f"\t.reg .b32 %r<{max(counters['r'], 10) + 1}>;\n"
    if counters["f"]:
        src += f"\t.reg .f32 %f<{counters['f'] + 1}>;\n"
    if nh:
        src += f"\t.reg .b16 %h<{nh + 1}>;\n"
    src += "\t.reg .b64 %rd<10>;\n\t.reg .pred %p<4>;\n\n"
    src += "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
    src += "\tmov.u32 %r1, %tid.x;\n\tmov.u64 %rd2, IN;\n" if words else "\tmov.u32 %r1, %tid.x;\n"
    src += "\n".join(body) + "\n\tret;\n}\n"
    with open(path, "w") as f:
        f.write(src)


# --------------------------------------------------------------------------------------------
# special values

MAXC = {"e2m1": 0x7, "e3m2": 0x1F, "e2m3": 0x1F, "e4m3": 0x7E, "e5m2": 0x7B}


def extremes(cs):
    """Row 0 of A: the largest finite value of its type (and its negative) in k = 0, 1; row 1:
    the smallest subnormals; row 8: zeros of both signs; column 0 of B all largest values."""
    neg = {"e2m1": 0x8, "e3m2": 0x20, "e2m3": 0x20, "e4m3": 0x80, "e5m2": 0x80}
    at, bt = cs.at, cs.bt
    cs.A[0][0] = MAXC[at]
    cs.A[0][1] = MAXC[at] | neg[at]
    cs.A[1] = [1 if kk % 2 == 0 else 1 | neg[at] for kk in range(cs.k)]
    cs.A[8] = [0 if kk % 2 == 0 else neg[at] for kk in range(cs.k)]
    for kk in range(cs.k):
        cs.B[kk][0] = MAXC[bt]
        cs.B[kk][1] = 1


def e5m2_inf(cs):
    """Row 0: +inf in k = 0 times column 0's zero (NaN) and column 1's one (inf); row 2: -inf and
    +inf in k 0 and 1 (NaN everywhere)."""
    cs.A[0][0] = 0x7C
    cs.B[0][0] = 0x00
    cs.B[0][1] = 0x3C
    cs.A[2][0] = 0xFC
    cs.A[2][1] = 0x7C
    for c in range(8):
        cs.B[1][c] = 0x3C


def scale_extremes(cs):
    """Scale bytes at the ends of .ue8m0: row groupID 0's factor 2^127 (byte 254) against B's
    2^-127 (byte 0) in column 0, NaN (0xff) for row 9 (lane 4·1 + 2·tid + 1), 2^0 elsewhere in
    row 3's supplier; an A row of the largest values."""
    bida, tida, bidb, tidb = cs.sel
    def setb(words, lane, byte, v):
        words[lane] = (words[lane] & ~(0xFF << (8 * byte))) | v << (8 * byte)
    for ch in range(cs.vec):
        setb(cs.SA, 2 * tida, bida + ch, 254)       # row 0
        setb(cs.SB, tidb, bidb + ch, 0)             # column 0
        setb(cs.SA, 4 + 2 * tida + 1, bida + ch, 0xFF)  # row 9: NaN
        setb(cs.SA, 12 + 2 * tida, bida + ch, 127)  # row 3: 1.0
    cs.A[0][0] = MAXC[cs.at]


def ue4m3_specials(cs):
    """.ue4m3 factors: zero for row 2 (its products are +0 or -0 and D = C), NaN (0x7f) for
    column 5, bit 7 set (ignored) for row 10, and the largest (448, 0x7e) for row 4's."""
    bida, tida, bidb, tidb = cs.sel
    def setb(words, lane, byte, v):
        words[lane] = (words[lane] & ~(0xFF << (8 * byte))) | v << (8 * byte)
    for ch in range(cs.vec):
        setb(cs.SA, 8 + 2 * tida, bida + ch, 0x00)          # row 2
        setb(cs.SB, 20 + tidb, bidb + ch, 0x7F)             # column 5
        setb(cs.SA, 8 + 2 * tida + 1, bida + ch, 0xB8)      # row 10: 0x38 = 1.0 with bit 7
        setb(cs.SA, 16 + 2 * tida, bida + ch, 0x7E)         # row 4: 448


def main_kinds():
    rng = random.Random(1207)
    gen_kind_file("mma_kind_f8f6f4.ptx", [
        KindCase(rng, "f8f6f4", "e2m1", "e2m1"),
        KindCase(rng, "f8f6f4", "e3m2", "e2m3"),
        KindCase(rng, "f8f6f4", "e2m3", "e4m3", acc="f16"),
        KindCase(rng, "f8f6f4", "e5m2", "e2m1", order="kind_first"),
        KindCase(rng, "f8f6f4", "e4m3", "e3m2", special=extremes),
        KindCase(rng, "f8f6f4", "e2m1", "e3m2", acc="f16", special=extremes),
        KindCase(rng, "f8f6f4", "e2m3", "e2m3", special=extremes),
        KindCase(rng, "f8f6f4", "e5m2", "e5m2", special=e5m2_inf),
    ], "mma.sync.aligned.m16n8k32 .kind::f8f6f4: e4m3/e5m2/e3m2/e2m3/e2m1 in any mix (8-bit "
       "containers with random padding), f32/f16 accumulators, largest and subnormal values, inf")
    gen_kind_file("mma_kind_mxf8f6f4.ptx", [
        KindCase(rng, "mxf8f6f4", "e4m3", "e4m3", vec=1, stype="ue8m0", sel=(0, 0, 0, 0)),
        KindCase(rng, "mxf8f6f4", "e3m2", "e2m1", vec=1, stype="ue8m0", sel=(1, 1, 3, 2)),
        KindCase(rng, "mxf8f6f4", "e2m3", "e5m2", vec=1, stype="ue8m0", sel=(2, 0, 1, 3),
                 sel_regs=True, explicit_vec=False),
        KindCase(rng, "mxf8f6f4", "e2m1", "e3m2", vec=1, stype="ue8m0", sel=(3, 1, 0, 1),
                 order="kind_first"),
        KindCase(rng, "mxf8f6f4", "e4m3", "e2m3", vec=1, stype="ue8m0", sel=(2, 1, 2, 0),
                 special=scale_extremes),
    ], "mma.sync.aligned.m16n8k32 .kind::mxf8f6f4.block_scale (.scale_vec::1X, .ue8m0): selectors "
       "as immediates and .b16 registers, scale factors 2^127, 2^-127 and NaN (0xff)")
    gen_kind_file("mma_kind_mxf4.ptx", [
        KindCase(rng, "mxf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(0, 0, 2, 3),
                 explicit_vec=False),
        KindCase(rng, "mxf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(2, 1, 0, 1)),
        KindCase(rng, "mxf4nvf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(2, 0, 2, 2),
                 sel_regs=True),
        KindCase(rng, "mxf4nvf4", "e2m1", "e2m1", vec=4, stype="ue8m0", sel=(0, 1, 0, 0),
                 special=scale_extremes),
        KindCase(rng, "mxf4nvf4", "e2m1", "e2m1", vec=4, stype="ue4m3", sel=(0, 0, 0, 3)),
        KindCase(rng, "mxf4nvf4", "e2m1", "e2m1", vec=4, stype="ue4m3", sel=(0, 1, 0, 1),
                 special=ue4m3_specials, order="kind_first"),
        KindCase(rng, "mxf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(2, 0, 0, 2),
                 sdata_vec=True),
    ], "mma.sync.aligned.m16n8k64 .kind::mxf4 and .kind::mxf4nvf4 (.e2m1 packed eight per "
       "register): 2X/4X, .ue8m0 and .ue4m3 scale factors (zero, NaN, 448, bit 7 set), scale data "
       "written {%r}; 4X with .ue8m0 needs PTX ISA 9.1", version="9.1")


def main_sparse_kinds():
    rng = random.Random(1209)
    K = KindCase
    gen_kind_file("mma_sp_kind_f8f6f4.ptx", [
        K(rng, "f8f6f4", "e2m1", "e2m1", sparse=True),
        K(rng, "f8f6f4", "e3m2", "e2m3", sparse=True, meta_vec=True),
        K(rng, "f8f6f4", "e2m3", "e4m3", acc="f16", sparse=True),
        K(rng, "f8f6f4", "e5m2", "e2m1", order="kind_first", sparse=True),
        K(rng, "f8f6f4", "e4m3", "e3m2", special=extremes, sparse=True),
        K(rng, "f8f6f4", "e2m1", "e3m2", acc="f16", special=extremes, sparse=True),
        K(rng, "f8f6f4", "e2m3", "e2m3", special=extremes, sparse=True),
        K(rng, "f8f6f4", "e5m2", "e5m2", special=e5m2_inf, sparse=True),
    ], "mma.sp::ordered_metadata .m16n8k64 .kind::f8f6f4: 2:4 sparse A, e4m3/e5m2/e3m2/e2m3/e2m1 "
       "in any mix (8-bit containers with random padding), f32/f16 accumulators, extremes, inf, "
       "metadata as %r and {%r}, CUTLASS's modifier order")
    gen_kind_file("mma_sp_kind_mxf8f6f4.ptx", [
        K(rng, "mxf8f6f4", "e4m3", "e4m3", vec=1, stype="ue8m0", sel=(0, 0, 0, 0), sparse=True),
        K(rng, "mxf8f6f4", "e3m2", "e2m1", vec=1, stype="ue8m0", sel=(1, 1, 3, 2), sparse=True,
          meta_vec=True, sdata_vec=True),
        K(rng, "mxf8f6f4", "e2m3", "e5m2", vec=1, stype="ue8m0", sel=(2, 0, 1, 3),
          sel_regs=True, explicit_vec=False, sparse=True),
        K(rng, "mxf8f6f4", "e2m1", "e3m2", vec=1, stype="ue8m0", sel=(3, 1, 0, 1),
          order="kind_first", sparse=True, meta_vec=True, sdata_vec=True),
        K(rng, "mxf8f6f4", "e4m3", "e2m3", vec=1, stype="ue8m0", sel=(2, 1, 2, 0),
          special=scale_extremes, sparse=True),
    ], "mma.sp::ordered_metadata .m16n8k64 .kind::mxf8f6f4.block_scale (.scale_vec::1X: one "
       ".ue8m0 factor per 64 columns): selectors as immediates and .b16 registers, scale data "
       "and metadata as {%r}, factors 2^127, 2^-127 and NaN")
    gen_kind_file("mma_sp_kind_mxf4.ptx", [
        K(rng, "mxf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(0, 0, 2, 3),
          explicit_vec=False, sparse=True),
        K(rng, "mxf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(2, 1, 0, 1), sparse=True,
          order="kind_first", meta_vec=True, sdata_vec=True),
        K(rng, "mxf4nvf4", "e2m1", "e2m1", vec=2, stype="ue8m0", sel=(2, 0, 2, 2),
          sel_regs=True, sparse=True),
        K(rng, "mxf4nvf4", "e2m1", "e2m1", vec=4, stype="ue8m0", sel=(0, 1, 0, 0),
          special=scale_extremes, sparse=True),
        K(rng, "mxf4nvf4", "e2m1", "e2m1", vec=4, stype="ue4m3", sel=(0, 0, 0, 3), sparse=True),
        K(rng, "mxf4nvf4", "e2m1", "e2m1", vec=4, stype="ue4m3", sel=(0, 1, 0, 1),
          special=ue4m3_specials, order="kind_first", sparse=True),
    ], "mma.sp::ordered_metadata .m16n8k128 .kind::mxf4 and .kind::mxf4nvf4 (.e2m1 packed, "
       "pair-wise 4:8 sparse A): 2X/4X, .ue8m0 and .ue4m3 factors (zero, NaN, 448, bit 7 set); "
       "4X with .ue8m0 needs PTX ISA 9.1", version="9.1")


# --------------------------------------------------------------------------------------------
# ldmatrix / stmatrix .b8


def unpack(fmt, row):
    """The 16 bytes .b8x16 makes of a 16-byte source row."""
    if fmt == "b8":
        return list(row)
    bits, data = (6, 12) if fmt == "b6x16_p32" else (4, 8)
    v = int.from_bytes(bytes(row[:data]), "little")
    return [(v >> (bits * i)) & ((1 << bits) - 1) for i in range(16)]


def gen_ldmatrix_b8(rng, target="sm_100a", version="8.6", fname="ldmatrix_b8.ptx"):
    # shared memory: 64 rows of 16 bytes, row r at byte 32*r + 16*(r%2)... placed so that lane
    # l's row is row perm[l] (not in lane order)
    nrows = 32
    size = 32 * nrows
    S = [rng.getrandbits(8) for _ in range(size)]
    words = [int.from_bytes(bytes(S[4 * q:4 * q + 4]), "little") for q in range(size // 4)]
    perm = list(range(32))
    rng.shuffle(perm)

    def row_addr(lane):
        r = perm[lane]
        return 32 * r + 16 * (r % 2)

    def row_bytes(lane, fmt):
        a = row_addr(lane)
        return unpack(fmt, S[a:a + 16])

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
            "\t// this lane's row address, from the table ADDR"
            ,"\tmul.wide.u32 %rd5, %r1, 4;",
            "\tmov.u64 %rd6, ADDR;",
            "\tadd.u64 %rd6, %rd6, %rd5;",
            "\tld.global.u32 %r9, [%rd6];",
            "\tmov.u32 %r6, S;",
            "\tadd.u32 %r9, %r9, %r6;",
            "\tcvt.u64.u32 %rd7, %r9;",
            "\tcvta.shared.u64 %rd8, %rd7;"]
    nxt = [20]

    def regs(k):
        r = [f"%r{nxt[0] + q}" for q in range(k)]
        nxt[0] += k
        return r

    stores, steps = [], []
    plans = [("m16n16", 1, "b8", ".shared"), ("m16n16", 2, "b8", ".shared::cta"),
             ("m16n16", 1, "b6x16_p32", ".shared"), ("m16n16", 2, "b4x16_p64", ""),
             ("m8n16", 1, "b6x16_p32", ".shared"), ("m8n16", 2, "b4x16_p64", ".shared::cta"),
             ("m8n16", 4, "b6x16_p32", ""), ("m8n16", 4, "b4x16_p64", ".shared")]
    for shape, num, fmt, ss in plans:
        nreg = 2 * num if shape == "m16n16" else num
        rs = regs(nreg)
        trans = ".trans" if shape == "m16n16" else ""
        ty = ".b8" if fmt == "b8" else f".b8x16.{fmt}"
        addr = "%rd8" if ss == "" else "%r9"
        body.append(f"\tldmatrix.sync.aligned.{shape}.x{num}{trans}{ss}{ty} "
                    f"{{{', '.join(rs)}}}, [{addr}];")
        stores += rs
        per_lane = []
        for t in range(32):
            ws = []
            for j in range(num):
                if shape == "m16n16":
                    # transposed matrix T[r][c] = M[c][r], M's rows from lanes 16j..16j+15
                    M = [row_bytes(16 * j + i, fmt) for i in range(16)]
                    T = [[M[c][r] for c in range(16)] for r in range(16)]
                    for half in range(2):
                        r = t // 4 + 8 * half
                        ws.append(sum(T[r][4 * (t % 4) + b] << (8 * b) for b in range(4)))
                else:
                    M = [row_bytes(8 * j + i, fmt) for i in range(8)]
                    ws.append(sum(M[t // 4][4 * (t % 4) + b] << (8 * b) for b in range(4)))
            per_lane.append(ws)
        steps.append(per_lane)
    nwords = len(stores)
    body.append(f"\tmad.wide.u32 %rd9, %r1, {nwords * 4}, %rd1;")
    for q, r in enumerate(stores):
        body.append(f"\tst.global.b32 [%rd9+{q * 4}], {r};")
    out = []
    for t in range(32):
        for st in steps:
            out += st[t]
    counters = {"r": nxt[0], "f": 0, "fd": 0}
    addr_tab = ".global .align 4 .u32 ADDR[32] = {" + ", ".join(str(row_addr(l)) for l in range(32)) + "};\n"
    shared = addr_tab + f".shared .align 16 .b8 S[{size}];\n"
    write_kind_test(os.path.join(OUT_DIR, fname), target, version,
                    "ldmatrix .m16n16 .x1/.x2 .trans (.b8, .b8x16.b6x16_p32/.b4x16_p64) and .m8n16 "
                    ".x1/.x2/.x4 (.b8x16 with 6- and 4-bit sources): rows at scattered addresses, "
                    "shared, shared::cta and generic", words, body, out, counters, 0,
                    shared=shared)


def gen_stmatrix_b8(rng, target="sm_100a", version="8.6", fname="stmatrix_b8.ptx"):
    frags = [[rng.getrandbits(32) for _ in range(4)] for _ in range(32)]  # [lane][reg]
    words = [w for lane in frags for w in lane]

    def elem(j, r, c):
        """Element (r, c) of the 16x8 byte matrix j the registers hold."""
        lane = 4 * (r % 8) + c // 2
        byte = (c % 2) + 2 * (r // 8)
        return (frags[lane][j] >> (8 * byte)) & 0xFF

    plan = [(1, 0), (2, 256), (4, 512)]
    size = 1024
    mem = [0] * size
    for num, base in plan:
        for j in range(num):
            for r in range(8):  # row r of matrix j's transpose, at base + 16*(8j + r)
                for c in range(16):
                    mem[base + 16 * (8 * j + r) + c] = elem(j, c, r)
    out = [int.from_bytes(bytes(mem[4 * q:4 * q + 4]), "little") for q in range(size // 4)]
    body = ["\tmad.wide.u32 %rd3, %r1, 16, %rd2;",
            "\tld.global.v4.b32 {%r20, %r21, %r22, %r23}, [%rd3];",
            "\tmov.u32 %r6, S;",
            "\t// zero the shared array (each lane 8 words)",
            "\tmov.u32 %r2, 0;",
            "$zero:",
            "\tmad.lo.u32 %r3, %r1, 8, %r2;",
            "\tshl.b32 %r4, %r3, 2;",
            "\tadd.u32 %r4, %r4, %r6;",
            "\tst.shared.b32 [%r4], 0;",
            "\tadd.u32 %r2, %r2, 1;",
            "\tsetp.lt.u32 %p1, %r2, 8;",
            "\t@%p1 bra $zero;",
            "\tbar.warp.sync -1;",
            "\tshl.b32 %r9, %r1, 4;",
            "\tadd.u32 %r9, %r9, %r6;",
            "\tcvt.u64.u32 %rd5, %r9;",
            "\tcvta.shared.u64 %rd6, %rd5;"]
    regs = ["%r20", "%r21", "%r22", "%r23"]
    for (num, base), ss in zip(plan, [".shared", ".shared::cta", ""]):
        addr = f"%rd6+{base}" if ss == "" else f"%r9+{base}"
        body.append(f"\tstmatrix.sync.aligned.m16n8.x{num}.trans{ss}.b8 [{addr}], "
                    f"{{{', '.join(regs[:num])}}};")
    body += ["\tbar.warp.sync -1;",
             "\t// copy the shared array out: lane l copies words 8l .. 8l+7",
             "\tmov.u32 %r2, 0;",
             "$out:",
             "\tmad.lo.u32 %r3, %r1, 8, %r2;",
             "\tshl.b32 %r4, %r3, 2;",
             "\tadd.u32 %r5, %r4, %r6;",
             "\tld.shared.b32 %r10, [%r5];",
             "\tcvt.u64.u32 %rd4, %r4;",
             "\tadd.u64 %rd4, %rd4, %rd1;",
             "\tst.global.b32 [%rd4], %r10;",
             "\tadd.u32 %r2, %r2, 1;",
             "\tsetp.lt.u32 %p1, %r2, 8;",
             "\t@%p1 bra $out;"]
    counters = {"r": 24, "f": 0, "fd": 0}
    write_kind_test(os.path.join(OUT_DIR, fname), target, version,
                    "stmatrix .m16n8 .x1/.x2/.x4 .trans .b8 (shared, shared::cta, generic)",
                    words, body, out, counters, 0,
                    shared=f".shared .align 16 .b8 S[{size}];\n")


def main():
    main_kinds()
    main_sparse_kinds()
    rng = random.Random(1208)
    gen_ldmatrix_b8(rng)
    gen_stmatrix_b8(rng)
    # the same shapes on sm_120a (ptxas 13.5 takes them on the sm_100, sm_110 and sm_120
    # families; CUTLASS's SM120 FP4 path loads with ldmatrix .m8n16 .b4x16_p64): own seeds, so
    # the files above do not change
    gen_ldmatrix_b8(random.Random(1201), "sm_120a", "8.7", "ldmatrix_b8_sm120a.ptx")
    gen_stmatrix_b8(random.Random(1202), "sm_120a", "8.7", "stmatrix_b8_sm120a.ptx")


if __name__ == "__main__":
    main()
