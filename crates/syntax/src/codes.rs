//! Stable codes of the syntax diagnostics (`E00xx`). They are defined, with their
//! explanations for `ptxvm explain`, in the one registry of the tool, [`ptx_diag::codes`]:
//! add a code there.

pub use ptx_diag::codes::syntax::*;
