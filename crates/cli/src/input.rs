//! Reading input files with a bound, so that an endless or huge stream (`/dev/zero`, a pipe that
//! never closes) is refused with an error instead of filling memory.

use std::io::Read;

/// The largest PTX source ptxvm reads: 256 MiB (the largest real-world PTX we know of is a few
/// tens of MiB; the parser's own benchmark uses 100 MB).
pub const MAX_SOURCE_BYTES: u64 = 256 << 20;

/// The most bytes read from an `@PATH` argument that is not a regular file (a pipe, a device,
/// `/dev/stdin`), whose size is not known in advance: 256 MiB. A regular file is read up to the
/// buffer limit, straight into device memory.
pub const MAX_STREAM_BYTES: u64 = 256 << 20;

/// Reads `path` (`-`: standard input) whole, refusing more than `limit` bytes. `what` names the
/// content in the error ("PTX source"). Errors start with the file's name.
pub fn read_bounded(path: &str, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let name = if path == "-" { "<stdin>" } else { path };
    let too_big = |size: Option<u64>| {
        let size = match size {
            Some(s) => format!("{s} bytes"),
            None => format!("more than {limit} bytes"),
        };
        format!(
            "{name}: {size} is more than the {} MiB ptxvm reads as {what}",
            limit >> 20
        )
    };
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
        if let Ok(m) = file.metadata() {
            if m.is_dir() {
                return Err(format!("{name}: is a directory"));
            }
            if m.is_file() && m.len() > limit {
                return Err(too_big(Some(m.len())));
            }
        }
        file.take(limit + 1).read_to_end(&mut bytes)
    };
    read.map_err(|e| format!("{name}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(None));
    }
    Ok(bytes)
}

/// Whether a file that failed to load as PTX looks like CUDA C++ source instead: a `.cu`/`.cuh`
/// name, or the marks of C++ (`#include`, `__global__`, `__device__`) in its text.
pub fn looks_like_cuda(path: &str, text: &str) -> bool {
    let ext = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("cu" | "cuh"))
        || text.contains("__global__")
        || text.contains("__device__")
        || text.lines().any(|l| l.trim_start().starts_with("#include"))
}
