//! The bytecode rewrites that run after decoding, in place and keeping one `Insn` per IR
//! instruction: [`invariant`] (registers that are copies, and what is the same in every CTA,
//! hoisted into the prelude), [`ifconv`] (short guarded branches become guards), [`fuse`]
//! (superinstructions of frequent pairs and triples) and [`skips`] (the no-op runs that the
//! fast path steps over). They match typed instructions (opcodes, modifiers and table flags),
//! never strings, and depend on the decoder's state and the handlers, not the reverse.

pub(crate) mod fuse;
pub(crate) mod ifconv;
pub(crate) mod invariant;
pub(crate) mod skips;
