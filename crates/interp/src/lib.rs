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
//!
//! [`disasm`] prints a compiled kernel as the executor sees it (`ptxvm ir --bytecode`): one line
//! per bytecode instruction with its pc, guard, handler, operand slots and immediates, and the
//! PTX line it came from, after every rewrite (the prelude of hoisted instructions, guards from
//! if-conversion, superinstructions and the no-ops they leave, skip counts). Handlers are bare
//! `fn` pointers in [`program::Insn`], which stays small for the hot loop: a handler is named
//! by the PTX instruction it was decoded from, and a superinstruction by the instructions it
//! runs, which [`program::Program::fused`] records when `fuse` makes it.

pub mod compile;
pub mod coverage;
mod decode;
pub mod disasm;
pub mod exec;
pub(crate) mod handlers;
pub mod mem;
pub(crate) mod ops_async;
pub(crate) mod ops_float;
pub(crate) mod ops_int;
pub(crate) mod ops_matrix;
pub(crate) mod ops_mma_kind;
pub(crate) mod ops_move;
pub(crate) mod ops_warp;
pub mod printf;
pub mod program;
mod rewrite;
/// The scalar semantics, now the `ptx-semantics` crate, under the path the handlers use.
pub use ptx_semantics as semantics;

pub use exec::{fifo, launch};
// the executor asks which special registers are the same in every CTA
pub(crate) use rewrite::invariant;

pub use handlers::set_simd;
