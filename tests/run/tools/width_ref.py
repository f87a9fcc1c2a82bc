#!/usr/bin/env python3
"""Writes tests/run/width/*.ptx: ISA 9.4.1 ("Operand Size Exceeding Instruction-Type Size") at
every warp shape.

For `ld`, `st` and `cvt` a destination register wider than the instruction type is
sign-extended for signed types and zero-extended otherwise; a source register wider than the
type is truncated. Each generated kernel runs every case three ways in a block of 48 threads
(warp 0 full, warp 1 partial with 16 lanes):

  all   - every thread executes the instruction;
  guard - `@%p` with %p true in odd lanes; the other lanes keep the sentinel the register held;
  split - a divergent branch: lanes with tid % 3 == 0 load element 47 - tid, the others tid.

and stores the whole destination register (st.b16/b32/b64 of its width) to an output buffer
at [case * 48 + tid]. The expected values come from the model below (sign/zero extension and
truncation written from the ISA text, integer `cvt` saturation and float-to-integer clamping
from the `cvt` section), never from ptxvm. The input bytes are a fixed pseudo-random pattern
(half of them with the top bit set) placed in module variables.

    python3 tests/run/tools/width_ref.py          # rewrite tests/run/width/
"""
import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "width")
T = 48  # threads per block: a full warp and a 16-lane partial warp
NB = 1024  # bytes of input data
SENT = {16: 0x5A5A, 32: 0x5A5A5A5A, 64: 0x5A5A5A5A5A5A5A5A}
REG = {16: "%h", 32: "%r", 64: "%rd"}

rng = random.Random(22)
DATA = bytes(rng.randrange(256) for _ in range(NB))
# floats for the float-to-integer conversions: edges of every integer range, NaN, infinities
FLOATS = [
    -0.0, 0.0, 0.75, -0.75, 127.9, -128.9, 128.0, -129.0, 255.5, 256.0, -1.0, 32767.9,
    -32768.9, 32768.0, 65535.9, 65536.0, -65536.0, 2147483520.0, -2147483648.0, 2147483648.0,
    4294967040.0, 4294967296.0, -4294967296.0, 9.2233715e18, -9.2233720e18, 9.2233720e18,
    1.8446743e19, 1.8446744e19, float("inf"), float("-inf"), float("nan"), 1e-30, -1e-30,
    100.5, -100.5, 3e9, -3e9, 1e20, -1e20, 12345.678, -12345.678, 0.5, -0.5, 1.5, -1.5,
    200.25, -200.25, 70000.0,
]
assert len(FLOATS) == T
FDATA = b"".join(struct.pack("<f", x) for x in FLOATS)


def bits(t):
    return {"8": 8, "16": 16, "32": 32, "64": 64}[t[1:]]


def signed(t):
    return t[0] == "s"


def chop(v, n):
    return v & ((1 << n) - 1)


def sext(v, n):
    v = chop(v, n)
    return v - (1 << n) if v >> (n - 1) else v


def extend(v, t, w):
    """Value `v` of instruction type `t` written to a register of w bits."""
    n = bits(t)
    return chop(sext(v, n) if signed(t) else chop(v, n), w)


def elem(data, i, n):
    """Little-endian element i of n bits."""
    k = n // 8
    return int.from_bytes(data[i * k:(i + 1) * k], "little")


def rows(per_tid, mode, sentinel):
    """The 48 expected register values of one case in one mode; per_tid(i) is the value
    loaded for element i."""
    out = []
    for t in range(T):
        if mode == "all":
            out.append(per_tid(t))
        elif mode == "guard":
            out.append(per_tid(t) if t & 1 else sentinel)
        else:
            out.append(per_tid(T - 1 - t) if t % 3 == 0 else per_tid(t))
    return out


class Kernel:
    def __init__(self, name, comment):
        self.name, self.comment = name, comment
        self.body = []
        self.cases = {16: [], 32: [], 64: []}  # expected rows per output width
        self.labels = 0

    def emit(self, s):
        self.body.append("\t" + s)

    def case(self, w, insn_at, model, modes=("all", "guard", "split")):
        """insn_at(index_reg) gives the instruction lines that load element [index] into
        the destination register of width w; model(i) its expected value."""
        d = f"{REG[w]}90"
        for mode in modes:
            slot = len(self.cases[w])
            self.emit(f"// case {slot} ({w}-bit): {mode}")
            self.emit(f"mov.b{w} {d}, {SENT[w]:#x};")
            if mode == "all":
                for ln in insn_at("%rd60"):
                    self.emit(ln)
            elif mode == "guard":
                lines = insn_at("%rd60")
                for ln in lines[:-1]:
                    self.emit(ln)
                self.emit("@%p1 " + lines[-1])
            else:
                k = self.labels
                self.labels += 1
                self.emit(f"@%p2 bra $L_then{k};")
                for ln in insn_at("%rd60"):
                    self.emit(ln)
                self.emit(f"bra.uni $L_join{k};")
                self.body.append(f"$L_then{k}:")
                for ln in insn_at("%rd61"):
                    self.emit(ln)
                self.body.append(f"$L_join{k}:")
            self.emit(f"mad.lo.s64 %rd71, %rd60, {w // 8}, %rd{ {16: 3, 32: 2, 64: 1}[w] };")
            self.emit(f"add.s64 %rd70, %rd71, {slot * T * w // 8};")
            self.emit(f"st.global.b{w} [%rd70], {d};")
            self.cases[w].append(rows(model, mode, SENT[w]))

    def text(self, extra_decls="", param="", arg=""):
        def init(b):
            return ", ".join(str(x) for x in b)

        n = {w: max(1, len(c)) * T for w, c in self.cases.items()}
        run = f"// RUN: --block {T} --arg u64[{n[64]}] --arg u32[{n[32]}] --arg u16[{n[16]}]{arg}"
        exp = []
        for k, w in [(0, 64), (1, 32), (2, 16)]:
            vals = [v for c in self.cases[w] for v in c] or [0] * T
            exp.append(f"// EXPECT {k} u{w}: " + " ".join(f"{v:#x}" for v in vals))
        head = "\n".join(f"// {ln}" for ln in self.comment.strip().splitlines())
        return f"""{head}
// Generated by tests/run/tools/width_ref.py (expected values from its model of ISA 9.4.1).
{run}
{chr(10).join(exp)}
.version 8.0
.target sm_80
.address_size 64

.global .align 16 .b8 gdata[{NB}] = {{{init(DATA)}}};
.const .align 16 .b8 cdata[{NB}] = {{{init(DATA)}}};
.global .align 16 .b8 fdata[{len(FDATA)}] = {{{init(FDATA)}}};
{extra_decls}
.visible .entry {self.name}(.param .u64 out64, .param .u64 out32, .param .u64 out16{param})
{{
\t.reg .b16 %h<100>;
\t.reg .b32 %r<100>;
\t.reg .b64 %rd<100>;
\t.reg .f32 %f<10>;
\t.reg .pred %p<4>;
\tld.param.u64 %rd1, [out64];
\tld.param.u64 %rd2, [out32];
\tld.param.u64 %rd3, [out16];
\tcvta.to.global.u64 %rd1, %rd1;
\tcvta.to.global.u64 %rd2, %rd2;
\tcvta.to.global.u64 %rd3, %rd3;
\tmov.u32 %r1, %tid.x;
\tcvt.u64.u32 %rd60, %r1;
\tsub.u32 %r2, {T - 1}, %r1;
\tcvt.u64.u32 %rd61, %r2;
\tand.b32 %r3, %r1, 1;
\tsetp.eq.u32 %p1, %r3, 1;
\trem.u32 %r4, %r1, 3;
\tsetp.eq.u32 %p2, %r4, 0;
{chr(10).join(self.body)}
\tret;
}}
"""


INT_TYPES = ["u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32"]


def widths_for(t):
    n = bits(t)
    return [w for w in (16, 32, 64) if w >= n]


def address(base_reg, idx, size, tag):
    """Lines computing base + idx * size into %rd{tag}; returns (lines, reg)."""
    return [f"mad.lo.s64 %rd{tag}, {idx}, {size}, {base_reg};"], f"%rd{tag}"


def ld_cases(k, space, base, data=DATA):
    for t in INT_TYPES:
        n = bits(t)
        for w in widths_for(t):
            def at(idx, t=t, n=n, w=w):
                a, r = address(base, idx, n // 8, 80)
                return a + [f"ld{space}.{t} {REG[w]}90, [{r}];"]

            k.case(w, at, lambda i, t=t, n=n, w=w: extend(elem(data, i, n), t, w))


def ld_kernel(name, space, setup, base, comment, decls=""):
    k = Kernel(name, comment)
    for ln in setup:
        k.body.append(ln if ln.endswith(":") else "\t" + ln)
    ld_cases(k, space, base)
    return k.text(decls)


def copy_loop(dst_space, dst, words=NB // 4, per_thread=False):
    """Copies gdata into `dst` word by word: all threads share the work (shared memory), or
    each thread copies everything (local memory)."""
    start, step = ("0", "1") if per_thread else ("%r1", str(T))
    return [
        "mov.u64 %rd10, gdata;",
        f"mov.u32 %r10, {start};",
        "$L_copy:",
        "mul.wide.u32 %rd11, %r10, 4;",
        "add.s64 %rd12, %rd10, %rd11;",
        "ld.global.b32 %r11, [%rd12];",
        f"add.s64 %rd13, {dst}, %rd11;",
        f"st{dst_space}.b32 [%rd13], %r11;",
        f"add.u32 %r10, %r10, {step};",
        f"setp.lt.u32 %p3, %r10, {words};",
        "@%p3 bra $L_copy;",
    ]


def vector_kernel():
    k = Kernel(
        "ld_st_vectors",
        """ld.global/ld.shared .v2/.v4 of signed and unsigned integer types into wider registers:
every element is extended on its own (sign for .s, zero for .u/.b); element 0 and the last
element go to the output.""",
    )
    k.body += ["\tmov.u64 %rd20, gdata;"]
    for t in ["s8", "u8", "s16", "u16", "s32", "u32"]:
        n = bits(t)
        for vec in (2, 4):
            for w in widths_for(t):
                for which in (0, vec - 1):
                    regs = [f"{REG[w]}{91 + j}" for j in range(vec)]
                    regs[which] = f"{REG[w]}90"

                    def at(idx, t=t, n=n, vec=vec, regs=regs):
                        a, r = address("%rd20", idx, n * vec // 8, 80)
                        return a + [f"ld.global.v{vec}.{t} {{{', '.join(regs)}}}, [{r}];"]

                    k.case(
                        w,
                        at,
                        lambda i, t=t, n=n, vec=vec, w=w, which=which: extend(
                            elem(DATA, i * vec + which, n), t, w
                        ),
                    )
    return k.text()


def st_kernel():
    """st of narrow types from wider registers: the register is truncated. Each case stores
    the source's low bytes into a zeroed scratch word (global or shared), reads the whole
    word back with ld.b{w}, and that is the value checked."""
    k = Kernel(
        "st_truncates",
        """st.global / st.shared / generic st of an 8/16/32-bit type from a wider register stores
the low bytes only (ISA 9.4.1): each case zeroes a scratch slot, stores the source register
with the narrow type, and reads the whole slot back.""",
    )
    k.body += [
        "\tmov.u64 %rd20, gdata;",
        "\tmov.b64 %rd99, 0;",
        "\tmov.u64 %rd21, scratch;",
        "\tmov.u64 %rd22, sscratch;",
        "\tcvta.shared.u64 %rd23, %rd22;",
    ]
    for space, base in [(".global", "%rd21"), (".shared", "%rd22"), ("", "%rd23")]:
        for t in ["u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32"]:
            n = bits(t)
            for sw in widths_for(t):
                if sw == n:
                    continue
                rd = "ld.shared" if space == ".shared" else ("ld" if space == "" else "ld.global")

                def at(idx, t=t, n=n, sw=sw, space=space, base=base, rd=rd):
                    a, src = address("%rd20", idx, sw // 8, 80)
                    s, dst = address(base, "%rd60", 8, 81)
                    return a + s + [
                        f"ld.global.b{sw} {REG[sw]}80, [{src}];",
                        f"st{space}.b64 [{dst}], %rd99;",
                        f"st{space}.{t} [{dst}], {REG[sw]}80;",
                        f"{rd}.b64 %rd90, [{dst}];",
                    ]

                # the guard covers only the last line (the read back): use all and split
                k.case(64, at, lambda i, n=n, sw=sw: chop(elem(DATA, i, sw), n), modes=("all", "split"))
    return k.text(
        f".global .align 16 .b8 scratch[{T * 8}];\n.shared .align 16 .b8 sscratch[{T * 8}];"
    )


def cvt_int_model(dt, st, sat):
    def f(x):
        v = sext(x, bits(st)) if signed(st) else chop(x, bits(st))
        if sat:
            lo = -(1 << (bits(dt) - 1)) if signed(dt) else 0
            hi = (1 << (bits(dt) - 1)) - 1 if signed(dt) else (1 << bits(dt)) - 1
            v = min(max(v, lo), hi)
        return v

    return f


def cvt_kernel():
    k = Kernel(
        "cvt_widths",
        """cvt between integer types with registers wider than the types: the source is truncated
to the source type, the result (wrapped, or clamped with .sat) is sign-extended into a wider
destination for a signed destination type and zero-extended otherwise.""",
    )
    k.body += ["\tmov.u64 %rd20, gdata;"]
    types = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]
    for dt in types:
        for st in types:
            for sat in (False, True):
                # ptxas refuses .sat where every source value fits the destination
                fits = (signed(dt) == signed(st) and bits(dt) >= bits(st)) or (
                    signed(dt) and not signed(st) and bits(dt) > bits(st))
                if sat and fits:
                    continue
                sws = sorted({max(16, bits(st)), 64})
                dws = sorted({max(16, bits(dt)), 64})
                for sw in sws:
                    for w in dws:
                        if sat and (sw, w) != (sws[0], dws[-1]):
                            continue
                        m = cvt_int_model(dt, st, sat)

                        def at(idx, dt=dt, st=st, sw=sw, w=w, sat=sat):
                            a, src = address("%rd20", idx, sw // 8, 80)
                            s = ".sat" if sat else ""
                            return a + [
                                f"ld.global.b{sw} {REG[sw]}80, [{src}];",
                                f"cvt{s}.{dt}.{st} {REG[w]}90, {REG[sw]}80;",
                            ]

                        modes = ("all", "guard", "split") if (sw, w) == (sws[-1], dws[-1]) else ("all",)
                        k.case(
                            w,
                            at,
                            lambda i, dt=dt, sw=sw, w=w, m=m: extend(m(elem(DATA, i, sw)), dt, w),
                            modes=modes,
                        )
    return k.text()


def f2i(x, dt, mode):
    """cvt.{mode}i.dt.f32: rounding to an integer, clamped to dt's range, NaN gives 0."""
    n = bits(dt)
    lo = -(1 << (n - 1)) if signed(dt) else 0
    hi = (1 << (n - 1)) - 1 if signed(dt) else (1 << n) - 1
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    if mode == "rz":
        v = math.trunc(x)
    elif mode == "rm":
        v = math.floor(x)
    elif mode == "rp":
        v = math.ceil(x)
    else:
        v = round(x)  # ties to even, as Python rounds
    return min(max(v, lo), hi)


def f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def cvt_float_kernel():
    k = Kernel(
        "cvt_float_widths",
        """cvt between f32 and integer types with wider registers: float to integer rounds, clamps
to the destination type (NaN gives 0) and extends into a wider register by the destination's
signedness; integer to float reads the source truncated to the source type.""",
    )
    k.body += ["\tmov.u64 %rd20, fdata;", "\tmov.u64 %rd21, gdata;"]
    for dt in ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]:
        for mode in ["rz", "rn", "rm", "rp"]:
            w = 64

            def at(idx, dt=dt, mode=mode):
                a, src = address("%rd20", idx, 4, 80)
                return a + [f"ld.global.f32 %f1, [{src}];", f"cvt.{mode}i.{dt}.f32 %rd90, %f1;"]

            modes = ("all", "guard", "split") if mode == "rz" else ("all",)
            k.case(w, at, lambda i, dt=dt, mode=mode: extend(
                f2i(f32(elem(FDATA, i, 32)), dt, mode), dt, w), modes=modes)
            if bits(dt) <= 16:
                def at32(idx, dt=dt, mode=mode):
                    a, src = address("%rd20", idx, 4, 80)
                    return a + [f"ld.global.f32 %f1, [{src}];", f"cvt.{mode}i.{dt}.f32 %r90, %f1;"]

                k.case(32, at32, lambda i, dt=dt, mode=mode: extend(
                    f2i(f32(elem(FDATA, i, 32)), dt, mode), dt, 32), modes=("all",))
    # integer to float from a wider register: exact for values below 2^24
    for st in ["u8", "s8", "u16", "s16"]:
        for sw in (32, 64):
            def at(idx, st=st, sw=sw):
                a, src = address("%rd21", idx, sw // 8, 80)
                return a + [
                    f"ld.global.b{sw} {REG[sw]}80, [{src}];",
                    f"cvt.rn.f32.{st} %f1, {REG[sw]}80;",
                    "mov.b32 %r90, %f1;",
                ]

            def model(i, st=st, sw=sw):
                x = elem(DATA, i, sw)
                v = sext(x, bits(st)) if signed(st) else chop(x, bits(st))
                return struct.unpack("<I", struct.pack("<f", float(v)))[0]

            k.case(32, at, model)
    return k.text()


def param_kernel():
    """ld.param of every integer type into wider registers, from a by-value array parameter:
    at a per-thread offset (the parameter's address in a register) and at a fixed one (a
    load every lane shares)."""
    k = Kernel(
        "ld_param",
        """ld.param of every 8/16/32-bit integer type into 16/32/64-bit registers, from a 64-byte
by-value parameter holding the first 64 input bytes: at a per-thread offset (tid % 16 elements)
and at the fixed offset 8 (one load for the warp).""",
    )
    pb = DATA[:64]
    k.body += ["\tmov.u64 %rd20, pv;", "\tand.b64 %rd62, %rd60, 15;", "\tand.b64 %rd63, %rd61, 15;"]
    for t in INT_TYPES:
        n = bits(t)
        for w in widths_for(t):
            def at(idx, t=t, n=n, w=w):
                i = "%rd62" if idx == "%rd60" else "%rd63"
                a, r = address("%rd20", i, n // 8, 80)
                return a + [f"ld.param.{t} {REG[w]}90, [{r}];"]

            k.case(w, at, lambda i, t=t, n=n, w=w: extend(elem(pb, i % 16, n), t, w))

            def fixed(idx, t=t, w=w):
                return [f"ld.param.{t} {REG[w]}90, [pv+8];"]

            k.case(w, fixed, lambda i, t=t, n=n, w=w: extend(int.from_bytes(pb[8:8 + n // 8], "little"), t, w),
                   modes=("all", "guard"))
    arg = " --arg {u8:[" + ",".join(str(b) for b in pb) + "]}"
    return k.text(param=",\n\t.param .align 8 .b8 pv[64]", arg=arg)


def main():
    os.makedirs(OUT, exist_ok=True)
    files = {
        "ld_global.ptx": ld_kernel(
            "ld_global", ".global", ["mov.u64 %rd20, gdata;"], "%rd20",
            """ld.global of every 8/16/32-bit integer type into 16/32/64-bit registers: .s types
sign-extend, .u/.b zero-extend, whatever the warp shape (issue 22: the full-warp 4-byte
path zero-extended ld.global.s32 into a 64-bit register)."""),
        "ld_generic.ptx": ld_kernel(
            "ld_generic", "", ["mov.u64 %rd21, gdata;", "cvta.global.u64 %rd20, %rd21;"], "%rd20",
            "Generic ld (a global address through cvta) of every integer type into wider registers."),
        "ld_nc.ptx": ld_kernel(
            "ld_nc", ".global.nc", ["mov.u64 %rd20, gdata;"], "%rd20",
            "ld.global.nc of every integer type into wider registers."),
        "ld_const.ptx": ld_kernel(
            "ld_const", ".const", ["mov.u64 %rd20, cdata;"], "%rd20",
            "ld.const of every integer type into wider registers."),
        "ld_shared.ptx": ld_kernel(
            "ld_shared", ".shared",
            ["mov.u64 %rd20, sdata;"] + copy_loop(".shared", "%rd20") + ["bar.sync 0;"], "%rd20",
            "ld.shared (and generic ld of shared memory) of every integer type into wider registers.",
            f".shared .align 16 .b8 sdata[{NB}];"),
        "ld_local.ptx": ld_kernel(
            "ld_local", ".local",
            ["mov.u64 %rd20, ldata;"] + copy_loop(".local", "%rd20", words=T * 8 // 4, per_thread=True),
            "%rd20",
            "ld.local of every integer type into wider registers (each thread copies the data first).",
        ).replace("\t.reg .b16 %h<100>;", f"\t.local .align 16 .b8 ldata[{T * 8}];\n\t.reg .b16 %h<100>;"),
        "ld_st_vectors.ptx": vector_kernel(),
        "st_truncates.ptx": st_kernel(),
        "cvt_int_widths.ptx": cvt_kernel(),
        "cvt_float_widths.ptx": cvt_float_kernel(),
        "ld_param.ptx": param_kernel(),
    }
    for name, text in files.items():
        with open(os.path.join(OUT, name), "w") as f:
            f.write(text)
    print(f"wrote {len(files)} files to {OUT}")


if __name__ == "__main__":
    main()
