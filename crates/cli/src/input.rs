//! Reading input files with a bound, so that an endless or huge stream (`/dev/zero`, a pipe that
//! never closes) is refused with an error instead of filling memory.

use std::io::Read;

/// The largest PTX source ptxvm reads: 256 MiB (the largest real-world PTX we know of is a few
/// tens of MiB; the parser's own benchmark uses 100 MB).
pub const MAX_SOURCE_BYTES: u64 = 256 << 20;

/// Reads `path` (`-`: standard input) whole, refusing more than `limit` bytes. `what` names the
/// content in the error ("PTX source"). Errors start with the file's name.
pub fn read_bounded(path: &str, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let name = if path == "-" { "<stdin>" } else { path };
    let too_big = |size: Option<u64>| match size {
        Some(s) => format!(
            "{name}: {s} bytes is more than the {} MiB ptxvm reads as {what}",
            limit >> 20
        ),
        None => format!(
            "{name}: more than {} MiB, the most ptxvm reads as {what}",
            limit >> 20
        ),
    };
    let mut bytes = Vec::new();
    let read = |r: &mut dyn Read, bytes: &mut Vec<u8>, expect: u64| {
        // room for everything up front (pages are committed as they are read), so that the
        // vector never doubles while reading an endless stream
        let want = usize::try_from(expect.min(limit) + 1).unwrap_or(usize::MAX);
        bytes
            .try_reserve_exact(want)
            .map_err(|_| format!("{name}: cannot allocate {want} bytes to read it"))?;
        r.take(limit + 1)
            .read_to_end(bytes)
            .map_err(|e| format!("{name}: {e}"))
    };
    if path == "-" {
        read(&mut std::io::stdin().lock(), &mut bytes, limit)?;
    } else {
        let mut file = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let mut expect = limit;
        if let Ok(m) = file.metadata() {
            if m.is_dir() {
                return Err(format!("{name}: is a directory"));
            }
            if m.is_file() {
                if m.len() > limit {
                    return Err(too_big(Some(m.len())));
                }
                expect = m.len();
            }
        }
        read(&mut file, &mut bytes, expect)?;
    }
    if bytes.len() as u64 > limit {
        return Err(too_big(None));
    }
    Ok(bytes)
}

/// The error for a file that failed to load as PTX but looks like CUDA C++ source instead
/// ([`looks_like_cuda`]), or `None`: the one hint `ptxvm run` and `ptxvm check` give. `name` is
/// the file's name as shown (`<stdin>` for `-`), `command` the subcommand (`run`, `check`).
pub fn cuda_hint(path: &str, name: &str, text: &str, command: &str) -> Option<String> {
    looks_like_cuda(path, text).then(|| {
        format!(
            "{name} looks like CUDA C++, not PTX; compile it with `nvcc -ptx` first \
             (e.g. `nvcc -ptx -arch=sm_90 kernel.cu -o kernel.ptx`) and {command} the .ptx file"
        )
    })
}

/// Whether a file that failed to load as PTX looks like CUDA C++ source instead: a `.cu`/`.cuh`
/// name, or the marks of C++ (`#include`, `__global__`, `__device__`) in its text.
fn looks_like_cuda(path: &str, text: &str) -> bool {
    let ext = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("cu" | "cuh"))
        || text.contains("__global__")
        || text.contains("__device__")
        || text.lines().any(|l| l.trim_start().starts_with("#include"))
}
