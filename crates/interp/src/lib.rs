//! Execution of PTX kernels on the CPU.
//!
//! This crate will turn the IR of `ptx-ir` into a compact register bytecode and run it on a warp
//! executor (32 lanes per warp, an active mask, registers stored lane-major per slot). What every
//! instruction *computes* lives apart from how it is dispatched: [`semantics`] holds the scalar
//! behaviour of each instruction as pure, allocation-free functions (`add_sat_s32(a, b)`), shared
//! by the interpreter, constant folding and a later JIT. They follow the PTX ISA to the bit:
//! rounding modes, flush-to-zero, saturation, wrap-around and NaN rules.

pub mod printf;
pub mod semantics;
