//! Stable codes of the semantic diagnostics: `E01xx` names and scopes; `E02xx` instructions,
//! operands and types; `E03xx` module header, PTX versions and targets; `E04xx` calls and
//! control flow; `W03xx` warnings. They are defined, with their explanations for
//! `ptxvm explain`, in the one registry of the tool, [`ptx_diag::codes`]: add a code there.

pub use ptx_diag::codes::check::*;
