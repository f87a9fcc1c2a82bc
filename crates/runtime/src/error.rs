//! [`Error`]: everything that can fail, with the diagnostics that say where.

use ptx_diag::{Diagnostic, SourceFile};

use crate::LaunchStats;

/// Everything that can fail.
#[derive(Debug)]
pub enum Error {
    /// The PTX did not parse, check or lower: diagnostics against the source.
    Invalid {
        /// The source.
        file: SourceFile,
        /// What is wrong.
        diagnostics: Vec<Diagnostic>,
    },
    /// Bad use of the API: unknown kernel, wrong argument count or type, bad geometry.
    Usage(String),
    /// The kernel faulted, deadlocked or ran past its limits.
    Kernel {
        /// The source the kernel came from.
        file: SourceFile,
        /// What stopped it, for callers that act on the kind (libcuda's error codes).
        failure: Failure,
        /// The rendered diagnostic (code, message, span, notes).
        diagnostic: Box<Diagnostic>,
        /// What ran before it stopped (boxed: with the sanitizer reports it holds, it would make
        /// every `Result<_, Error>` large).
        stats: Box<LaunchStats>,
    },
    /// Device memory could not be allocated.
    Memory(String),
    /// The launch's cluster shape is refused: by the kernel's cluster directives, the cluster
    /// size limit, or a grid that is not a whole number of clusters (libcuda:
    /// `CUDA_ERROR_INVALID_CLUSTER_SIZE`).
    Cluster(String),
}

/// What stopped a kernel ([`Error::Kernel`]): the kind, without the report's text, so that
/// callers match on it instead of on diagnostic codes and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// An access outside every allocation of its space; `shared` when the space was `.shared`.
    OutOfBounds {
        /// The access was to shared memory.
        shared: bool,
    },
    /// An address not aligned to its access size.
    Misaligned,
    /// A store to read-only memory (`.const` data, host memory registered read-only).
    ReadOnly,
    /// `trap`.
    Trap,
    /// `__assertfail` (a failed device `assert`).
    Assert,
    /// An instruction ptxvm does not execute yet.
    Unsupported,
    /// An aligned barrier reached by part of a warp.
    DivergentBarrier,
    /// A barrier that can never complete.
    Deadlock,
    /// The thread-instruction budget ran out.
    Budget,
    /// The time limit passed (while compiling the kernel or running it).
    Timeout,
    /// The launch was cancelled.
    Cancelled,
    /// Any other fault.
    Other,
}

impl Error {
    /// Whether the error is the kernel's own fault (exit status 2 in the CLI) rather than bad
    /// input (exit status 1).
    pub fn is_kernel_fault(&self) -> bool {
        matches!(self, Error::Kernel { .. })
    }
    /// The full message as plain text, with source snippets.
    pub fn render(&self) -> String {
        match self {
            Error::Invalid { file, diagnostics } => ptx_diag::render_plain(file, diagnostics),
            Error::Usage(m) | Error::Memory(m) | Error::Cluster(m) => format!("error: {m}\n"),
            Error::Kernel {
                file, diagnostic, ..
            } => ptx_diag::render_plain(file, std::slice::from_ref(diagnostic)),
        }
    }
    /// Writes the message to stderr (with colour when `mode` allows).
    pub fn render_to_stderr(&self, mode: ptx_diag::ColorMode) {
        match self {
            Error::Invalid { file, diagnostics } => {
                ptx_diag::render_to_stderr(file, diagnostics, mode)
            }
            Error::Kernel {
                file, diagnostic, ..
            } => ptx_diag::render_to_stderr(file, std::slice::from_ref(diagnostic), mode),
            _ => eprint!("{}", self.render()),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Kernel { diagnostic, .. } => write!(f, "{}", diagnostic.message),
            Error::Invalid { diagnostics, .. } => match diagnostics.first() {
                Some(d) => write!(f, "{}", d.message),
                None => write!(f, "invalid PTX"),
            },
            Error::Usage(m) | Error::Memory(m) | Error::Cluster(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// The error of PTX that does not parse, check or lower.
pub(crate) fn invalid(file: &SourceFile, diagnostics: Vec<Diagnostic>) -> Error {
    Error::Invalid {
        file: file.clone(),
        diagnostics,
    }
}
