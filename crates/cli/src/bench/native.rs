//! Native Rust implementations of the benchmark kernels: the reference point of `ptxvm bench`.
//!
//! Every kernel has a single-threaded version (plain loops, the obvious code) and a `_par`
//! version doing the same computation with rayon over the kernel's own work decomposition (per
//! element, per output row, per block chunk); the `_par` versions use whatever rayon pool they
//! are called in. Floating-point code performs the PTX's operations in the PTX's order wherever
//! the suite checks results exactly: `f32::mul_add` where the PTX has `fma.rn`, plain `*` and `+`
//! where the kernel was compiled with `-fmad=false` (see `bench/README.md`).
//!
//! Inputs come from [`Lcg`], a 64-bit linear congruential generator, so that every run (and the
//! tests) sees the same data without a random-number crate.
//!
//! This file depends only on `std` and `rayon`: `tests/bench.rs` includes it to unit-test it.

use rayon::prelude::*;

/// A 64-bit linear congruential generator (Knuth's MMIX constants); outputs its high bits.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    /// The next 32 random bits (bits 32..64 of the state after one step).
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    /// A float uniformly drawn from the 2^24 multiples of 2^-24 in [0, 1).
    pub fn next_unit_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }
}

/// `n` floats uniform in `[lo, hi)` from `seed`.
pub fn random_f32(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut g = Lcg::new(seed);
    (0..n).map(|_| lo + (hi - lo) * g.next_unit_f32()).collect()
}

/// `n` random 32-bit words from `seed`.
pub fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut g = Lcg::new(seed);
    (0..n).map(|_| g.next_u32()).collect()
}

/// `n` random bytes from `seed`.
pub fn random_u8(n: usize, seed: u64) -> Vec<u8> {
    let mut g = Lcg::new(seed);
    (0..n).map(|_| (g.next_u32() >> 24) as u8).collect()
}

// ---- vector add ----

/// `c[i] = a[i] + b[i]`.
pub fn vector_add(a: &[f32], b: &[f32], c: &mut [f32]) {
    for ((c, &a), &b) in c.iter_mut().zip(a).zip(b) {
        *c = a + b;
    }
}

/// [`vector_add`], parallel over elements.
pub fn vector_add_par(a: &[f32], b: &[f32], c: &mut [f32]) {
    c.par_iter_mut()
        .zip(a.par_iter().zip(b))
        .for_each(|(c, (&a, &b))| *c = a + b);
}

// ---- saxpy ----

/// `out[i] = a * x[i] + y[i]` (one rounding after the multiply, one after the add).
pub fn saxpy(a: f32, x: &[f32], y: &[f32], out: &mut [f32]) {
    for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
        *o = a * x + y;
    }
}

/// [`saxpy`], parallel over elements.
pub fn saxpy_par(a: f32, x: &[f32], y: &[f32], out: &mut [f32]) {
    out.par_iter_mut()
        .zip(x.par_iter().zip(y))
        .for_each(|(o, (&x, &y))| *o = a * x + y);
}

// ---- FMA chain ----

/// One thread of the FMA chain: four chains `a = fma(a, b, c)` started from `x`, `x + 1`,
/// `x + 2`, `x + 3`, run `iters` times, then `(a0 + a1) + (a2 + a3)`.
#[inline(always)]
pub fn fma_chain_one(x: f32, b: f32, c: f32, iters: u32) -> f32 {
    let (mut a0, mut a1, mut a2, mut a3) = (x, x + 1.0, x + 2.0, x + 3.0);
    for _ in 0..iters {
        a0 = a0.mul_add(b, c);
        a1 = a1.mul_add(b, c);
        a2 = a2.mul_add(b, c);
        a3 = a3.mul_add(b, c);
    }
    (a0 + a1) + (a2 + a3)
}

#[inline(always)]
fn fma_chain_loop(seed: &[f32], out: &mut [f32], b: f32, c: f32, iters: u32) {
    for (o, &x) in out.iter_mut().zip(seed) {
        *o = fma_chain_one(x, b, c, iters);
    }
}

/// Runs `f` compiled for the FMA instruction when the CPU has it. The workspace builds for
/// baseline x86-64, where `f32::mul_add` is a library call per use; a native program built for
/// the machine (`-C target-cpu=native`) would use the instruction, and so does the interpreter
/// (it picks its FMA copies at run time), so the reference does the same.
#[inline(always)]
fn with_fma(f: impl FnOnce()) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "fma")]
        fn fma(f: impl FnOnce()) {
            f()
        }
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `fma` only needs the FMA instructions, which the CPU has just been found
            // to support.
            #[allow(unsafe_code)]
            unsafe {
                fma(f)
            };
            return;
        }
    }
    f()
}

/// `out[i] = fma_chain_one(seed[i], b, c, iters)`.
pub fn fma_chain(seed: &[f32], out: &mut [f32], b: f32, c: f32, iters: u32) {
    with_fma(|| fma_chain_loop(seed, out, b, c, iters));
}

/// [`fma_chain`], parallel over chunks of threads (elements).
pub fn fma_chain_par(seed: &[f32], out: &mut [f32], b: f32, c: f32, iters: u32) {
    out.par_chunks_mut(256)
        .zip(seed.par_chunks(256))
        .for_each(|(o, s)| with_fma(|| fma_chain_loop(s, o, b, c, iters)));
}

// ---- matmul ----

/// One output row of [`matmul`]: `c_row = a_row * b` in i-k-j order, each element summed from 0
/// in increasing k.
fn matmul_row(a_row: &[f32], b: &[f32], c_row: &mut [f32]) {
    let n = c_row.len();
    c_row.fill(0.0);
    for (&a, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
        for (c, &b) in c_row.iter_mut().zip(b_row) {
            *c += a * b;
        }
    }
}

/// `c[m][n] = a[m][k] * b[k][n]`, row-major (the i-k-j loop; each element of `c` adds its `k`
/// products in increasing `k`, like the kernel's accumulator).
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], k: usize, n: usize) {
    if k == 0 || n == 0 {
        c.fill(0.0);
        return;
    }
    for (a_row, c_row) in a.chunks_exact(k).zip(c.chunks_exact_mut(n)) {
        matmul_row(a_row, b, c_row);
    }
}

/// [`matmul`], parallel over output rows.
pub fn matmul_par(a: &[f32], b: &[f32], c: &mut [f32], k: usize, n: usize) {
    if k == 0 || n == 0 {
        c.fill(0.0);
        return;
    }
    c.par_chunks_exact_mut(n)
        .zip(a.par_chunks_exact(k))
        .for_each(|(c_row, a_row)| matmul_row(a_row, b, c_row));
}

// ---- block reduction ----

/// `partial[b]` = the sum of chunk `b` of `x` (`per_block` elements), added in order.
pub fn block_reduce(x: &[f32], partial: &mut [f32], per_block: usize) {
    for (p, chunk) in partial.iter_mut().zip(x.chunks(per_block.max(1))) {
        let mut sum = 0.0f32;
        for &v in chunk {
            sum += v;
        }
        *p = sum;
    }
}

/// [`block_reduce`], parallel over blocks.
pub fn block_reduce_par(x: &[f32], partial: &mut [f32], per_block: usize) {
    partial
        .par_iter_mut()
        .zip(x.par_chunks(per_block.max(1)))
        .for_each(|(p, chunk)| {
            let mut sum = 0.0f32;
            for &v in chunk {
                sum += v;
            }
            *p = sum;
        });
}

// ---- histogram ----

/// The 256-bin histogram of `data`.
pub fn histogram(data: &[u8], bins: &mut [u32; 256]) {
    bins.fill(0);
    for &b in data {
        bins[b as usize] += 1;
    }
}

/// [`histogram`], parallel over chunks of `per_block` bytes (one local histogram each, then
/// summed), like the kernel's blocks.
pub fn histogram_par(data: &[u8], bins: &mut [u32; 256], per_block: usize) {
    *bins = data
        .par_chunks(per_block.max(1))
        .map(|chunk| {
            let mut local = [0u32; 256];
            for &b in chunk {
                local[b as usize] += 1;
            }
            local
        })
        .reduce(
            || [0u32; 256],
            |mut a, b| {
                for (a, b) in a.iter_mut().zip(b) {
                    *a += b;
                }
                a
            },
        );
}

// ---- Mandelbrot ----

/// The image of [`mandelbrot`]: pixel `(px, py)` is `c = (x_min + px*dx, y_min + py*dy)`.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Real part of pixel column 0.
    pub x_min: f32,
    /// Imaginary part of pixel row 0.
    pub y_min: f32,
    /// Step between columns.
    pub dx: f32,
    /// Step between rows.
    pub dy: f32,
    /// Iteration limit.
    pub max_iter: u32,
}

/// Iterations of `z = z^2 + c` from 0 before `|z|^2 > 4`, at most `max_iter`, with the kernel's
/// operations: `x2 = x*x`, `y2 = y*y`, `x2 + y2 > 4`, `x = (x2 - y2) + x0`,
/// `y = (2*x)*y + y0`, each rounded once.
pub fn mandelbrot_point(x0: f32, y0: f32, max_iter: u32) -> u32 {
    let (mut x, mut y) = (0.0f32, 0.0f32);
    let mut it = 0;
    while it < max_iter {
        let x2 = x * x;
        let y2 = y * y;
        if x2 + y2 > 4.0 {
            break;
        }
        let xt = (x2 - y2) + x0;
        y = (2.0 * x) * y + y0;
        x = xt;
        it += 1;
    }
    it
}

fn mandelbrot_row(v: &View, py: usize, row: &mut [u32]) {
    let y0 = v.y_min + py as f32 * v.dy;
    for (px, out) in row.iter_mut().enumerate() {
        let x0 = v.x_min + px as f32 * v.dx;
        *out = mandelbrot_point(x0, y0, v.max_iter);
    }
}

/// Escape counts of every pixel of `v`, row-major into `out` (`width * height`).
pub fn mandelbrot(v: &View, out: &mut [u32]) {
    if v.width == 0 {
        return;
    }
    for (py, row) in out.chunks_exact_mut(v.width).enumerate() {
        mandelbrot_row(v, py, row);
    }
}

/// [`mandelbrot`], parallel over rows.
pub fn mandelbrot_par(v: &View, out: &mut [u32]) {
    if v.width == 0 {
        return;
    }
    out.par_chunks_exact_mut(v.width)
        .enumerate()
        .for_each(|(py, row)| mandelbrot_row(v, py, row));
}

// ---- scan ----

/// Inclusive scan (wrapping `u32` sums) within each chunk of `block` elements: `out[i]` is the
/// sum of `input[start .. i]`, where `start` is the first index of `i`'s chunk.
pub fn block_scan(input: &[u32], out: &mut [u32], block: usize) {
    for (ic, oc) in input.chunks(block.max(1)).zip(out.chunks_mut(block.max(1))) {
        let mut sum = 0u32;
        for (o, &x) in oc.iter_mut().zip(ic) {
            sum = sum.wrapping_add(x);
            *o = sum;
        }
    }
}

/// [`block_scan`], parallel over blocks.
pub fn block_scan_par(input: &[u32], out: &mut [u32], block: usize) {
    out.par_chunks_mut(block.max(1))
        .zip(input.par_chunks(block.max(1)))
        .for_each(|(oc, ic)| {
            let mut sum = 0u32;
            for (o, &x) in oc.iter_mut().zip(ic) {
                sum = sum.wrapping_add(x);
                *o = sum;
            }
        });
}
