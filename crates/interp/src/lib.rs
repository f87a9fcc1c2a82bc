//! Execution of PTX kernels on the CPU.
//!
//! The pipeline: [`compile`] turns the IR of one kernel (and every function reachable from
//! it) into [`program::Program`], a pre-decoded bytecode over register *slots*: `decode` turns
//! each typed IR instruction into one bytecode instruction (one `match` on its opcode; the
//! handlers it picks live in the `ops_*` modules), then the bytecode rewrites of `rewrite`
//! run (the kernel's registers share slots by liveness, and what is the same in every CTA is
//! computed once per warp in a prelude: `invariant`, on the analyses of `ptx_ir::dataflow`; a
//! guarded branch or an if-else over a few lane-wise instructions becomes guards on them:
//! `ifconv`; frequent pairs and triples run as one superinstruction: `fuse`; `skips` marks
//! the no-ops the fast path steps over); [`exec`] runs it one CTA at a time
//! on a SIMT warp
//! executor (32 lanes per warp, an active mask, registers
//! stored lane-major per slot so that one dispatch serves all active lanes); [`launch`] spreads
//! the CTAs of a grid over OS threads. What each instruction *computes* lives apart from how it
//! is dispatched: [`semantics`] holds the scalar behaviour of every instruction as pure,
//! allocation-free functions (`add_sat_s32(a, b)`), shared by the interpreter, constant folding
//! and a later JIT. They follow the PTX ISA to the bit: rounding modes, flush-to-zero,
//! saturation, wrap-around and NaN rules. [`mem`] is device memory; [`printf`] formats device
//! `printf` exactly as CUDA does.

pub mod compile;
pub mod coverage;
mod decode;
pub mod exec;
pub mod fifo;
pub(crate) mod handlers;
pub mod launch;
pub mod mem;
pub(crate) mod ops_float;
pub(crate) mod ops_int;
pub(crate) mod ops_move;
pub(crate) mod ops_warp;
pub mod printf;
pub mod program;
mod rewrite;
pub mod semantics;

// the executor asks which special registers are the same in every CTA
pub(crate) use rewrite::invariant;

pub use handlers::set_simd;
