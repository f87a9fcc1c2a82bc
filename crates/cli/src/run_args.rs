//! `ptxvm run` argument specs (`shared/corpus/RUN-FORMAT.md`): turning one `--arg` text into the
//! bytes of a scalar parameter or the contents of a device buffer, and printing buffers back.
//!
//! One spec per kernel parameter:
//! - a **scalar** (`42`, `-7`, `0x1f`, `2.5`, `-1e-3`, `inf`, `nan`, `true`) is parsed according to
//!   the parameter's declared PTX type and becomes exactly the parameter's bytes, little-endian.
//!   Integers are decimal (range-checked for the type) or `0x` hex, taken as raw bits (so `0xff` is
//!   `-1` for `.s8`; hex has no sign). `.b32`/`.b64` also take a float, stored as its `f32`/`f64`
//!   bits. Floats (`.f16 .bf16 .f32 .f64`) are decimal, `inf`, `-inf` or `nan`, correctly rounded
//!   to the type (ties to even), or `0x` hex raw bits. `.pred` takes `0 1 true false`. An aggregate
//!   (`.align A .b8 name[N]`) takes an unsigned integer or `0x` hex of any length, stored
//!   little-endian and zero-extended to its N bytes (so `0` is an all-zero struct).
//! - a **buffer** is passed by its device address, so only to a `.u64`, `.s64` or `.b64` parameter:
//!   `DTYPE[N]` (zero-filled), `DTYPE[N]=iota` (0, 1, 2, … converted to DTYPE: integers wrap
//!   modulo 2^bits, floats round to nearest even), `DTYPE[N]=VALUE` (VALUE parsed as a scalar of
//!   DTYPE), `DTYPE[N]=rand` / `=rand:SEED` (see below), `@PATH.npy` (the array in the file, its
//!   dtype) or `@PATH` (the file's raw bytes, `u8`). N may be 0; a buffer holds at most
//!   [`MAX_BUFFER_BYTES`].
//!
//! **Random fill.** The generator is SplitMix64 (Steele, Lea and Flood, 2014: state += 0x9E37…7C15,
//! then two xor-shift-multiply rounds), seeded with SEED (decimal or `0x` hex; [`DEFAULT_SEED`] = 0
//! when omitted), one 64-bit output per element, in element order: the same values on every
//! platform and run. Integers are uniform in [0, 100) (rejection sampling, so unbiased); floats are
//! uniform in [0, 1) on the grid of the type's significand: the top 53 (`f64`), 24 (`f32`), 11 (`f16`)
//! or 8 (`bf16`) bits of the output times 2^-53, 2^-24, 2^-11 or 2^-8, all exactly representable.

use crate::npy;
use std::path::Path;

/// The largest device buffer a spec may ask for, in bytes (16 GiB).
pub const MAX_BUFFER_BYTES: u64 = 1 << 34;

/// The most bytes read from an `@PATH` argument that is not a regular file (a pipe, a device,
/// `/dev/stdin`), whose size is not known in advance: 256 MiB. A regular file is read up to
/// [`MAX_BUFFER_BYTES`], straight into device memory.
pub const MAX_STREAM_BYTES: u64 = 256 << 20;

/// The seed of `=rand` without `:SEED`.
pub const DEFAULT_SEED: u64 = 0;

/// Element type of a host buffer (RUN-FORMAT `DTYPE`): the runtime's, shared with `.npy` files
/// and the run tests.
pub use ptxvm::Dtype;

/// How a `=VALUE` of `dtype` is parsed.
fn dtype_kind(dtype: Dtype) -> Kind {
    match dtype {
        Dtype::U8 => Kind::Unsigned(8),
        Dtype::I8 => Kind::Signed(8),
        Dtype::U16 => Kind::Unsigned(16),
        Dtype::I16 => Kind::Signed(16),
        Dtype::U32 => Kind::Unsigned(32),
        Dtype::I32 => Kind::Signed(32),
        Dtype::U64 => Kind::Unsigned(64),
        Dtype::I64 => Kind::Signed(64),
        float => Kind::Float(float),
    }
}

/// The declared PTX type of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// `.u8`
    U8,
    /// `.u16`
    U16,
    /// `.u32`
    U32,
    /// `.u64`
    U64,
    /// `.s8`
    S8,
    /// `.s16`
    S16,
    /// `.s32`
    S32,
    /// `.s64`
    S64,
    /// `.b8`
    B8,
    /// `.b16`
    B16,
    /// `.b32`
    B32,
    /// `.b64`
    B64,
    /// `.f16`
    F16,
    /// `.bf16`
    BF16,
    /// `.f32`
    F32,
    /// `.f64`
    F64,
    /// `.pred`
    Pred,
    /// An array parameter (`.b8 name[N]`, `.align A .b8 name[N]`): a by-value struct of
    /// [`ParamInfo::size`] bytes.
    Aggregate,
}

impl ParamType {
    /// The type of a PTX type name, with or without its dot (`.u32`, `u32`); not for aggregates.
    pub fn from_ptx(name: &str) -> Option<ParamType> {
        let name = name.strip_prefix('.').unwrap_or(name);
        Some(match name {
            "u8" => ParamType::U8,
            "u16" => ParamType::U16,
            "u32" => ParamType::U32,
            "u64" => ParamType::U64,
            "s8" => ParamType::S8,
            "s16" => ParamType::S16,
            "s32" => ParamType::S32,
            "s64" => ParamType::S64,
            "b8" => ParamType::B8,
            "b16" => ParamType::B16,
            "b32" => ParamType::B32,
            "b64" => ParamType::B64,
            "f16" => ParamType::F16,
            "bf16" => ParamType::BF16,
            "f32" => ParamType::F32,
            "f64" => ParamType::F64,
            "pred" => ParamType::Pred,
            _ => return None,
        })
    }

    /// The PTX spelling, with its dot (`.u32`); `.b8[]` for an aggregate.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::U8 => ".u8",
            ParamType::U16 => ".u16",
            ParamType::U32 => ".u32",
            ParamType::U64 => ".u64",
            ParamType::S8 => ".s8",
            ParamType::S16 => ".s16",
            ParamType::S32 => ".s32",
            ParamType::S64 => ".s64",
            ParamType::B8 => ".b8",
            ParamType::B16 => ".b16",
            ParamType::B32 => ".b32",
            ParamType::B64 => ".b64",
            ParamType::F16 => ".f16",
            ParamType::BF16 => ".bf16",
            ParamType::F32 => ".f32",
            ParamType::F64 => ".f64",
            ParamType::Pred => ".pred",
            ParamType::Aggregate => ".b8[]",
        }
    }

    /// How a scalar for this type is parsed; `None` for an aggregate.
    fn kind(self) -> Option<Kind> {
        Some(match self {
            ParamType::U8 => Kind::Unsigned(8),
            ParamType::U16 => Kind::Unsigned(16),
            ParamType::U32 => Kind::Unsigned(32),
            ParamType::U64 => Kind::Unsigned(64),
            ParamType::S8 => Kind::Signed(8),
            ParamType::S16 => Kind::Signed(16),
            ParamType::S32 => Kind::Signed(32),
            ParamType::S64 => Kind::Signed(64),
            ParamType::B8 => Kind::Bits(8),
            ParamType::B16 => Kind::Bits(16),
            ParamType::B32 => Kind::Bits(32),
            ParamType::B64 => Kind::Bits(64),
            ParamType::F16 => Kind::Float(Dtype::F16),
            ParamType::BF16 => Kind::Float(Dtype::BF16),
            ParamType::F32 => Kind::Float(Dtype::F32),
            ParamType::F64 => Kind::Float(Dtype::F64),
            ParamType::Pred => Kind::Pred,
            ParamType::Aggregate => return None,
        })
    }
}

/// What the CLI knows of a kernel parameter (filled from the module by the caller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The parameter's name in the PTX.
    pub name: String,
    /// Its declared type.
    pub ty: ParamType,
    /// Its size in bytes (the type's width; N for an aggregate `.b8 name[N]`).
    pub size: usize,
}

impl ParamInfo {
    /// The declared type as PTX writes it: `.u32`, `.b8[16]`.
    pub fn type_text(&self) -> String {
        match self.ty {
            ParamType::Aggregate => format!(".b8[{}]", self.size),
            ty => ty.name().to_string(),
        }
    }
}

/// A parsed `--arg`: what to put in the parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostArg {
    /// The parameter's value: exactly [`ParamInfo::size`] little-endian bytes.
    Scalar(Vec<u8>),
    /// A device buffer to allocate and fill (with [`fill_buffer`]); the parameter gets its
    /// address. The contents are made piece by piece straight into device memory, never whole
    /// on the host.
    Buffer {
        /// The element type (for `--print` and `--out`).
        dtype: Dtype,
        /// The size in bytes (a multiple of `dtype.size()`, at most [`MAX_BUFFER_BYTES`]).
        bytes: u64,
        /// How the contents are made.
        fill: Fill,
    },
    /// A by-value struct `{FIELD, FIELD, …}`, laid out with C rules when it is passed.
    Struct(Vec<FieldSpec>),
}

/// One entry of a struct spec `{…}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldSpec {
    /// `DTYPE:VALUE` or `DTYPE:[V,V,…]`: these bytes, aligned to the element size.
    Value {
        /// The element size (the field's alignment).
        align: usize,
        /// Little-endian bytes.
        bytes: Vec<u8>,
    },
    /// A buffer spec (`DTYPE[N]…`, `@PATH`): a new device buffer whose address (8 bytes,
    /// 8-aligned) is the field.
    Buffer {
        /// The element type.
        dtype: Dtype,
        /// The size in bytes.
        bytes: u64,
        /// How the contents are made.
        fill: Fill,
        /// The field's text, for messages.
        spec: String,
    },
    /// `align:A`: the next field starts at a multiple of A.
    AlignNext(u64),
}

/// How a buffer's contents are made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Zeros (device memory starts zeroed: nothing is written).
    Zero,
    /// 0, 1, 2, … converted to the element type.
    Iota,
    /// Every element these bits.
    Value(u64),
    /// `=rand:SEED`.
    Rand(u64),
    /// The buffer's bytes are those of the regular file `path` from byte `offset`.
    File {
        /// The file.
        path: std::path::PathBuf,
        /// Where the data starts (after a `.npy` header).
        offset: u64,
    },
    /// Bytes already read (from a pipe or device, whose size is not known in advance).
    Data(Vec<u8>),
}

/// Where [`fill_buffer`] puts each piece: `(offset, bytes)`.
pub type WritePiece<'a> = dyn FnMut(u64, &[u8]) -> Result<(), String> + 'a;

/// Bytes made at once by [`fill_buffer`].
const FILL_CHUNK: usize = 1 << 20;

/// Makes the contents of a buffer of `bytes` bytes of `dtype` filled by `fill`, in order, in
/// pieces of at most 1 MiB: `write(offset, piece)`. `spec` names the argument in errors.
pub fn fill_buffer(
    spec: &str,
    dtype: Dtype,
    bytes: u64,
    fill: &Fill,
    write: &mut WritePiece<'_>,
) -> Result<(), String> {
    use std::io::{Read, Seek, SeekFrom};
    let size = dtype.size();
    let per_chunk = (FILL_CHUNK / size) as u64;
    let count = bytes / size as u64;
    let element = |i: u64, rng: &mut SplitMix64| -> u64 {
        match fill {
            Fill::Iota => iota_bits(dtype, i),
            Fill::Value(bits) => *bits,
            _ => random_bits(dtype, rng),
        }
    };
    match fill {
        Fill::Zero => Ok(()),
        Fill::Iota | Fill::Value(_) | Fill::Rand(_) => {
            let mut rng = SplitMix64(if let Fill::Rand(seed) = fill {
                *seed
            } else {
                0
            });
            let mut buf = Vec::with_capacity(FILL_CHUNK);
            let mut i = 0;
            while i < count {
                buf.clear();
                let end = (i + per_chunk).min(count);
                for j in i..end {
                    buf.extend_from_slice(&element(j, &mut rng).to_le_bytes()[..size]);
                }
                write(i * size as u64, &buf)?;
                i = end;
            }
            Ok(())
        }
        Fill::File { path, offset } => {
            let cannot =
                |e: std::io::Error| format!("`{spec}`: cannot read `{}`: {e}", path.display());
            let mut f = std::fs::File::open(path).map_err(cannot)?;
            f.seek(SeekFrom::Start(*offset)).map_err(cannot)?;
            let mut buf = vec![0u8; FILL_CHUNK];
            let mut done = 0u64;
            while done < bytes {
                let n = (bytes - done).min(FILL_CHUNK as u64) as usize;
                f.read_exact(&mut buf[..n]).map_err(cannot)?;
                write(done, &buf[..n])?;
                done += n as u64;
            }
            Ok(())
        }
        Fill::Data(data) => {
            for (k, piece) in data.chunks(FILL_CHUNK).enumerate() {
                write((k * FILL_CHUNK) as u64, piece)?;
            }
            Ok(())
        }
    }
}

/// Parses one `--arg` spec for `param`. Relative `@PATH`s are resolved against `base_dir` (the caller
/// passes the current directory). Errors are one line naming the offending text.
pub fn parse_arg(spec: &str, param: &ParamInfo, base_dir: &Path) -> Result<HostArg, String> {
    if spec.is_empty() {
        return Err("empty argument (expected a number, DTYPE[N] or @PATH)".to_string());
    }
    if spec.starts_with('{') {
        return parse_struct(spec, base_dir);
    }
    let is_buffer = spec.starts_with('@') || spec.contains('[');
    if !is_buffer {
        return parse_scalar(spec, param).map(HostArg::Scalar);
    }
    if !matches!(param.ty, ParamType::U64 | ParamType::S64 | ParamType::B64) || param.size != 8 {
        return Err(format!(
            "`{spec}`: a buffer is passed by its device address, which needs a .u64, .s64 or .b64 parameter, but `{}` is {}",
            param.name,
            param.type_text()
        ));
    }
    match spec.strip_prefix('@') {
        Some(path) => read_file_buffer(spec, path, base_dir),
        None => make_buffer(spec),
    }
}

/// Parses a `--symbol NAME=SPEC` spec for the variable described by `var` (its declared type;
/// `size` its whole size). The contents it gives must be exactly the variable's size (the caller
/// checks): a struct `{…}` (its bytes; buffer fields are allocated and their addresses stored),
/// `DTYPE:VALUE` / `DTYPE:[V,V,…]` (those elements), a buffer spec `DTYPE[N]…` / `@PATH`
/// (its contents, not an address), or a bare scalar parsed per the variable's type when it is
/// not an array (`array`).
pub fn parse_symbol(
    spec: &str,
    var: &ParamInfo,
    array: bool,
    base_dir: &Path,
) -> Result<HostArg, String> {
    if spec.is_empty() {
        return Err(
            "empty value (expected DTYPE:VALUE, DTYPE:[V,…], DTYPE[N]=…, @PATH or {…})".to_string(),
        );
    }
    if spec.starts_with('{') {
        return parse_struct(spec, base_dir);
    }
    if let Some((_, bytes)) = parse_typed(spec)? {
        return Ok(HostArg::Scalar(bytes));
    }
    if let Some(path) = spec.strip_prefix('@') {
        return read_file_buffer(spec, path, base_dir);
    }
    if spec.contains('[') {
        return make_buffer(spec);
    }
    if array {
        return Err(format!(
            "`{spec}`: `{}` is an array of {} bytes; give all its elements, e.g. DTYPE:[V,V,…] or DTYPE[N]=VALUE",
            var.name, var.size
        ));
    }
    parse_scalar(spec, var).map(HostArg::Scalar)
}

/// `DTYPE:VALUE` or `DTYPE:[V,V,…]` (DTYPE a buffer element type): its little-endian bytes;
/// `None` when `text` does not start with `DTYPE:`.
pub fn parse_typed(text: &str) -> Result<Option<(Dtype, Vec<u8>)>, String> {
    let Some((head, value)) = text.split_once(':') else {
        return Ok(None);
    };
    if head.contains('[') || head.starts_with('@') {
        return Ok(None);
    }
    let Some(dtype) = Dtype::from_name(head.trim()) else {
        return Ok(None);
    };
    let value = value.trim();
    let items: Vec<&str> = match value.strip_prefix('[') {
        Some(rest) => {
            let inner = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("`{text}`: missing `]` at the end of the list"))?;
            if inner.trim().is_empty() {
                return Err(format!("`{text}`: the list is empty"));
            }
            inner.split(',').map(str::trim).collect()
        }
        None => vec![value],
    };
    let mut bytes = Vec::with_capacity(items.len() * dtype.size());
    for item in items {
        let bits = parse_kind(item, dtype_kind(dtype)).map_err(|e| format!("`{text}`: {e}"))?;
        bytes.extend_from_slice(&bits.to_le_bytes()[..dtype.size()]);
    }
    Ok(Some((dtype, bytes)))
}

/// A struct spec `{FIELD, FIELD, …}`; see [`FieldSpec`].
fn parse_struct(spec: &str, base_dir: &Path) -> Result<HostArg, String> {
    let inner = spec
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| {
            format!("`{spec}`: a struct is written {{FIELD, FIELD, …}} and must end with `}}`")
        })?;
    let mut fields = Vec::new();
    if inner.trim().is_empty() {
        return Ok(HostArg::Struct(fields));
    }
    for (k, raw) in split_top(inner).into_iter().enumerate() {
        let f = raw.trim();
        let bad = |m: String| format!("`{spec}`: field {k} `{f}`: {m}");
        if f.is_empty() {
            return Err(bad("empty field".to_string()));
        }
        if f.starts_with('{') {
            return Err(bad(
                "nested structs are not supported: write the inner struct's fields in line (with `align:A` before it if it is more aligned than its first field)".to_string(),
            ));
        }
        if let Some(a) = f.strip_prefix("align:") {
            let a: u64 = a
                .trim()
                .parse()
                .ok()
                .filter(|a: &u64| a.is_power_of_two() && *a <= 4096)
                .ok_or_else(
                    || bad("the alignment must be a power of two up to 4096".to_string()),
                )?;
            fields.push(FieldSpec::AlignNext(a));
            continue;
        }
        if let Some((dtype, bytes)) =
            parse_typed(f).map_err(|e| format!("`{spec}`: field {k}: {e}"))?
        {
            fields.push(FieldSpec::Value {
                align: dtype.size(),
                bytes,
            });
            continue;
        }
        let buffer = if let Some(path) = f.strip_prefix('@') {
            read_file_buffer(f, path, base_dir)
        } else if f.contains('[') {
            make_buffer(f)
        } else {
            Err(format!(
                "`{f}`: a field is DTYPE:VALUE, DTYPE:[V,V,…], a buffer (DTYPE[N]…, @PATH) or align:A"
            ))
        };
        match buffer.map_err(|e| format!("`{spec}`: field {k}: {e}"))? {
            HostArg::Buffer { dtype, bytes, fill } => fields.push(FieldSpec::Buffer {
                dtype,
                bytes,
                fill,
                spec: f.to_string(),
            }),
            _ => return Err(bad("not a buffer".to_string())),
        }
    }
    Ok(HostArg::Struct(fields))
}

/// Splits at the commas outside `[…]` and `{…}`.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Formats the elements of a buffer for `--print N[:COUNT]`: `[1, 2, 3]`, or with `…` after the first
/// `count`. Numbers read back exactly: integers in decimal, floats in the shortest text that rounds
/// back to them (`1.5`, `0.1`, `1e-45`, `-0`, `inf`, `nan`; `f16`/`bf16` via their `f32` value).
pub fn format_values(dtype: Dtype, data: &[u8], count: Option<usize>) -> String {
    let elements = data.chunks_exact(dtype.size());
    let total = elements.len();
    let shown = count.map_or(total, |c| c.min(total));
    let mut parts: Vec<String> = elements
        .take(shown)
        .map(|e| format_element(dtype, e))
        .collect();
    if shown < total {
        parts.push("…".to_string());
    }
    format!("[{}]", parts.join(", "))
}

/// One element, `bytes` being exactly `dtype.size()` long.
fn format_element(dtype: Dtype, bytes: &[u8]) -> String {
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    dtype.format_bits(u64::from_le_bytes(raw))
}

/// A `@PATH` buffer: a `.npy` array or raw bytes.
fn read_file_buffer(spec: &str, path: &str, base_dir: &Path) -> Result<HostArg, String> {
    if path.is_empty() {
        return Err("`@`: missing file path after `@`".to_string());
    }
    use std::io::Read;
    let full = base_dir.join(path);
    let cannot = |e: std::io::Error| format!("`{spec}`: cannot read `{}`: {e}", full.display());
    let file = std::fs::File::open(&full).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if meta.is_dir() {
        return Err(format!(
            "`{spec}`: cannot read `{}`: it is a directory",
            full.display()
        ));
    }
    let is_npy = Path::new(path)
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("npy"));
    let too_big = |bytes: u64| {
        format!(
            "`{spec}`: the buffer would be {bytes} bytes, more than the limit of {MAX_BUFFER_BYTES} (16 GiB)"
        )
    };
    if meta.is_file() {
        // a regular file says its size: its data is read later, straight into device memory
        let size = meta.len();
        let (dtype, offset, bytes) = if is_npy {
            let mut prefix = Vec::new();
            file.take(npy::MAX_HEADER_BYTES as u64 + 16)
                .read_to_end(&mut prefix)
                .map_err(cannot)?;
            let (dtype, start, len) =
                npy::npy_layout(&prefix, size).map_err(|e| format!("`{spec}`: {e}"))?;
            (dtype, start as u64, len)
        } else {
            (Dtype::U8, 0, size)
        };
        if bytes > MAX_BUFFER_BYTES {
            return Err(too_big(bytes));
        }
        return Ok(HostArg::Buffer {
            dtype,
            bytes,
            fill: Fill::File { path: full, offset },
        });
    }
    // a pipe or a device (`/dev/stdin`, `/dev/zero`) is read whole, up to a bound
    let limit = MAX_STREAM_BYTES;
    let mut data = Vec::new();
    // room for the most that is read (pages are committed as they are read), so that the
    // vector never doubles while reading an endless stream
    data.try_reserve_exact(limit as usize + 1)
        .map_err(|_| format!("`{spec}`: cannot allocate {} bytes to read it", limit + 1))?;
    file.take(limit + 1)
        .read_to_end(&mut data)
        .map_err(cannot)?;
    if data.len() as u64 > limit {
        return Err(format!(
            "`{spec}`: `{}` is not a regular file and gives more than {} MiB, the most ptxvm reads from a pipe or device; save the data to a file",
            full.display(),
            limit >> 20
        ));
    }
    let (dtype, data) = if is_npy {
        npy::read_npy(&data).map_err(|e| format!("`{spec}`: {e}"))?
    } else {
        (Dtype::U8, data)
    };
    Ok(HostArg::Buffer {
        dtype,
        bytes: data.len() as u64,
        fill: Fill::Data(data),
    })
}

/// A `DTYPE[N]` spec with its optional `=…` fill.
fn make_buffer(spec: &str) -> Result<HostArg, String> {
    let open = spec.find('[').unwrap_or(spec.len());
    let dtype_text = &spec[..open];
    let dtype = Dtype::from_name(dtype_text).ok_or_else(|| {
        let names: Vec<&str> = Dtype::ALL.iter().map(|d| d.name()).collect();
        format!(
            "`{spec}`: unknown dtype `{dtype_text}` (expected one of {})",
            names.join(" ")
        )
    })?;
    let after_open = spec.get(open + 1..).unwrap_or("");
    let close = after_open
        .find(']')
        .ok_or_else(|| format!("`{spec}`: missing `]` after the element count"))?;
    let count_text = &after_open[..close];
    if count_text.is_empty() || !count_text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "`{spec}`: the element count `{count_text}` is not a non-negative decimal integer"
        ));
    }
    let bytes = count_text
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(dtype.size() as u64))
        .filter(|&b| b <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            format!(
                "`{spec}`: {count_text} elements of {} are more than the buffer limit of {MAX_BUFFER_BYTES} bytes (16 GiB)",
                dtype.name()
            )
        })?;
    let fill = match &after_open[close + 1..] {
        "" => Fill::Zero,
        "=iota" => Fill::Iota,
        "=rand" => Fill::Rand(DEFAULT_SEED),
        rest => {
            if let Some(seed) = rest.strip_prefix("=rand:") {
                Fill::Rand(parse_seed(seed).map_err(|e| format!("`{spec}`: {e}"))?)
            } else if let Some(value) = rest.strip_prefix('=') {
                Fill::Value(
                    parse_kind(value, dtype_kind(dtype)).map_err(|e| format!("`{spec}`: {e}"))?,
                )
            } else {
                return Err(format!(
                    "`{spec}`: unexpected `{rest}` after `]` (expected nothing, `=iota`, `=VALUE`, `=rand` or `=rand:SEED`)"
                ));
            }
        }
    };
    Ok(HostArg::Buffer { dtype, bytes, fill })
}

/// The bits of `i` converted to `dtype` (integers wrap, floats round to nearest even).
fn iota_bits(dtype: Dtype, i: u64) -> u64 {
    match dtype {
        Dtype::F32 => u64::from((i as f32).to_bits()),
        // `i` is below 2^53 (a buffer has at most 2^34 bytes), so `i as f64` is exact and the
        // 16-bit formats round once
        float if float.is_float() => float.float_bits(i as f64).unwrap_or(0),
        // Truncation to the element's bytes happens when it is stored.
        _ => i,
    }
}

/// One random element: integers uniform in [0, 100), floats uniform in [0, 1).
fn random_bits(dtype: Dtype, rng: &mut SplitMix64) -> u64 {
    match dtype {
        // exact: 11 and 8 significant bits
        Dtype::F16 => dtype
            .float_bits((rng.next() >> 53) as f64 / 2048.0)
            .unwrap_or(0),
        Dtype::BF16 => dtype
            .float_bits((rng.next() >> 56) as f64 / 256.0)
            .unwrap_or(0),
        Dtype::F32 => u64::from(((rng.next() >> 40) as f32 / 16_777_216.0).to_bits()),
        Dtype::F64 => ((rng.next() >> 11) as f64 / 9_007_199_254_740_992.0).to_bits(),
        _ => {
            // The largest multiple of 100 representable, so that `x % 100` is unbiased below it.
            const ZONE: u64 = u64::MAX / 100 * 100;
            loop {
                let x = rng.next();
                if x < ZONE {
                    return x % 100;
                }
            }
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", 2014).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A `=rand:SEED` seed: a decimal or `0x` hex `u64`.
fn parse_seed(text: &str) -> Result<u64, String> {
    let value = match parse_int(text) {
        Some(IntLit::Hex(digits)) => hex_value(digits),
        Some(IntLit::Dec {
            negative: false,
            magnitude,
        }) => magnitude,
        _ => None,
    };
    value
        .and_then(|v| u64::try_from(v).ok())
        .ok_or_else(|| format!("the seed `{text}` is not a 64-bit unsigned integer"))
}

/// How a scalar's text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unsigned(u32),
    Signed(u32),
    Bits(u32),
    /// A floating-point dtype.
    Float(Dtype),
    Pred,
}

impl Kind {
    /// Width of the value in bytes.
    fn width(self) -> usize {
        match self {
            Kind::Unsigned(b) | Kind::Signed(b) | Kind::Bits(b) => b as usize / 8,
            Kind::Float(f) => f.size(),
            Kind::Pred => 1,
        }
    }

    /// The PTX name of the type, for messages.
    fn name(self) -> String {
        match self {
            Kind::Unsigned(b) => format!(".u{b}"),
            Kind::Signed(b) => format!(".s{b}"),
            Kind::Bits(b) => format!(".b{b}"),
            Kind::Float(f) => format!(".{}", f.name()),
            Kind::Pred => ".pred".to_string(),
        }
    }
}

/// The bytes of a scalar parameter.
fn parse_scalar(text: &str, param: &ParamInfo) -> Result<Vec<u8>, String> {
    let Some(kind) = param.ty.kind() else {
        return parse_aggregate(text, param.size);
    };
    let bits = parse_kind(text, kind)?;
    let width = kind.width();
    if param.size < width {
        return Err(format!(
            "parameter `{}` is declared {} but has only {} bytes",
            param.name,
            param.type_text(),
            param.size
        ));
    }
    let mut bytes = bits.to_le_bytes()[..width].to_vec();
    bytes.resize(param.size, 0);
    Ok(bytes)
}

/// An aggregate's bytes: an unsigned integer or hex of any length, little-endian, zero-extended.
fn parse_aggregate(text: &str, size: usize) -> Result<Vec<u8>, String> {
    let mut bytes = match parse_int(text) {
        Some(IntLit::Hex(digits)) => {
            let digits = digits.trim_start_matches('0').as_bytes();
            // Pairs of digits from the right: the least significant byte first.
            digits
                .rchunks(2)
                .map(|pair| {
                    pair.iter()
                        .fold(0u8, |acc, &d| (acc << 4) | hex_digit(d).unwrap_or(0))
                })
                .collect()
        }
        Some(IntLit::Dec {
            negative: false,
            magnitude: Some(v),
        }) => {
            let mut bytes = v.to_le_bytes().to_vec();
            while bytes.last() == Some(&0) {
                bytes.pop();
            }
            bytes
        }
        _ => Vec::new(),
    };
    let valid = matches!(
        parse_int(text),
        Some(IntLit::Hex(_))
            | Some(IntLit::Dec {
                negative: false,
                magnitude: Some(_)
            })
    );
    if !valid || bytes.len() > size {
        return Err(format!(
            "`{text}` does not fit a {size}-byte aggregate parameter (expected an unsigned integer or 0x hex of at most {size} bytes, stored little-endian)"
        ));
    }
    bytes.resize(size, 0);
    Ok(bytes)
}

/// An integer literal's shape.
enum IntLit<'a> {
    /// `0x…`: the hex digits (at least one).
    Hex(&'a str),
    /// Decimal with an optional sign; `None` when the magnitude exceeds `u128`.
    Dec {
        negative: bool,
        magnitude: Option<u128>,
    },
}

/// Recognises `0x1F`, `42`, `-7`, `+3`; `None` for anything else (floats, words, signed hex).
fn parse_int(text: &str) -> Option<IntLit<'_>> {
    if let Some(digits) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .then_some(IntLit::Hex(digits));
    }
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.bytes().try_fold(0u128, |acc, d| {
        acc.checked_mul(10)?.checked_add(u128::from(d - b'0'))
    });
    Some(IntLit::Dec {
        negative,
        magnitude,
    })
}

fn hex_digit(d: u8) -> Option<u8> {
    char::from(d).to_digit(16).map(|v| v as u8)
}

/// The value of hex digits, `None` beyond `u128`.
fn hex_value(digits: &str) -> Option<u128> {
    digits.bytes().try_fold(0u128, |acc, d| {
        acc.checked_mul(16)?.checked_add(u128::from(hex_digit(d)?))
    })
}

/// Parses a scalar's text for `kind` into its bits (the low `kind.width()` bytes).
fn parse_kind(text: &str, kind: Kind) -> Result<u64, String> {
    let bits = match kind {
        Kind::Unsigned(b) | Kind::Signed(b) | Kind::Bits(b) => b,
        Kind::Float(format) => return parse_float(text, format),
        Kind::Pred => {
            return match text {
                "0" | "false" => Ok(0),
                "1" | "true" => Ok(1),
                _ => Err(format!(
                    "`{text}` is not a predicate value (expected 0, 1, true or false)"
                )),
            }
        }
    };
    let mask = u128::MAX >> (128 - bits);
    match parse_int(text) {
        Some(IntLit::Hex(digits)) => match hex_value(digits) {
            Some(v) if v <= mask => Ok(v as u64),
            _ => Err(format!(
                "`{text}` does not fit in {} (at most 0x{mask:x})",
                kind.name()
            )),
        },
        Some(IntLit::Dec {
            negative,
            magnitude,
        }) => {
            let half = 1i128 << (bits - 1);
            // an unsigned or untyped parameter also takes a negative decimal that fits the
            // width, as its two's complement: nvcc declares C `int` parameters `.u32`
            let (min, max) = match kind {
                Kind::Signed(_) => (-half, half - 1),
                _ => (-half, mask as i128),
            };
            let value = magnitude
                .and_then(|m| i128::try_from(m).ok())
                .map(|m| if negative { -m } else { m })
                .filter(|v| (min..=max).contains(v));
            match value {
                Some(v) => Ok((v as u128 & mask) as u64),
                None => Err(format!(
                    "`{text}` is out of range for {} ({min}..={max})",
                    kind.name()
                )),
            }
        }
        None if text.starts_with("-0x") || text.starts_with("+0x") => Err(format!(
            "`{text}`: hex is taken as raw bits and has no sign (expected a {} value)",
            kind.name()
        )),
        None => match kind {
            Kind::Bits(32) => parse_float(text, Dtype::F32).map_err(|_| bits_error(text, kind)),
            Kind::Bits(64) => parse_float(text, Dtype::F64).map_err(|_| bits_error(text, kind)),
            _ => Err(format!(
                "`{text}` is not an integer (expected a {} value: decimal or 0x hex)",
                kind.name()
            )),
        },
    }
}

fn bits_error(text: &str, kind: Kind) -> String {
    format!(
        "`{text}` is not a number (expected a {} value: an integer, 0x hex bits or a float)",
        kind.name()
    )
}

/// Parses a float's text (decimal, `inf`, `nan`, or `0x` raw bits) into the bits of `dtype`
/// (a floating-point dtype), correctly rounded from the exact decimal value.
fn parse_float(text: &str, dtype: Dtype) -> Result<u64, String> {
    let name = format!(".{}", dtype.name());
    if let Some(IntLit::Hex(digits)) = parse_int(text) {
        let max = u128::MAX >> (128 - 8 * dtype.size());
        return match hex_value(digits) {
            Some(v) if v <= max => Ok(v as u64),
            _ => Err(format!(
                "`{text}` does not fit in {name} (at most 0x{max:x})"
            )),
        };
    }
    dtype.parse_float(text).ok_or_else(|| {
        if text.starts_with("-0x") || text.starts_with("+0x") {
            format!("`{text}`: hex is taken as raw bits and has no sign (expected a {name} value)")
        } else {
            format!(
                "`{text}` is not a number (expected a {name} value: a decimal float, inf, nan or 0x hex bits)"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn param(ty: &str) -> ParamInfo {
        let ty = ParamType::from_ptx(ty).unwrap();
        let size = match ty {
            ParamType::Pred => 1,
            _ => ty.kind().unwrap().width(),
        };
        ParamInfo {
            name: "p".to_string(),
            ty,
            size,
        }
    }

    fn aggregate(size: usize) -> ParamInfo {
        ParamInfo {
            name: "s".to_string(),
            ty: ParamType::Aggregate,
            size,
        }
    }

    fn here() -> PathBuf {
        PathBuf::from(".")
    }

    /// The scalar's bytes as a little-endian number.
    fn scalar(spec: &str, ty: &str) -> u64 {
        match parse_arg(spec, &param(ty), &here()) {
            Ok(HostArg::Scalar(bytes)) => {
                let mut raw = [0u8; 8];
                raw[..bytes.len()].copy_from_slice(&bytes);
                u64::from_le_bytes(raw)
            }
            other => panic!("`{spec}` for {ty}: {other:?}"),
        }
    }

    fn error(spec: &str, ty: &str) -> String {
        parse_arg(spec, &param(ty), &here()).unwrap_err()
    }

    /// A buffer argument's dtype and contents, made as `ptxvm run` makes them.
    fn materialize(arg: Result<HostArg, String>) -> Result<(Dtype, Vec<u8>), String> {
        match arg? {
            HostArg::Buffer { dtype, bytes, fill } => {
                let mut data = vec![0u8; bytes as usize];
                let mut write = |off: u64, piece: &[u8]| {
                    data[off as usize..off as usize + piece.len()].copy_from_slice(piece);
                    Ok(())
                };
                fill_buffer("test", dtype, bytes, &fill, &mut write)?;
                Ok((dtype, data))
            }
            other => Err(format!("not a buffer: {other:?}")),
        }
    }

    fn buffer(spec: &str) -> (Dtype, Vec<u8>) {
        materialize(parse_arg(spec, &param("u64"), &here()))
            .unwrap_or_else(|e| panic!("`{spec}`: {e}"))
    }

    fn buffer_error(spec: &str) -> String {
        parse_arg(spec, &param("u64"), &here()).unwrap_err()
    }

    /// Buffer contents as `format_values` prints them.
    fn shown(spec: &str) -> String {
        let (dtype, data) = buffer(spec);
        format_values(dtype, &data, None)
    }

    #[test]
    fn integers_in_range() {
        assert_eq!(scalar("0", "u8"), 0);
        assert_eq!(scalar("255", "u8"), 255);
        assert_eq!(scalar("+7", "u16"), 7);
        assert_eq!(scalar("-0", "u32"), 0);
        assert_eq!(scalar("007", "u32"), 7);
        assert_eq!(scalar("4294967295", "u32"), 0xffff_ffff);
        assert_eq!(scalar("18446744073709551615", "u64"), u64::MAX);
        assert_eq!(scalar("-128", "s8"), 0x80);
        assert_eq!(scalar("127", "s8"), 0x7f);
        assert_eq!(scalar("-1", "s16"), 0xffff);
        assert_eq!(scalar("-2147483648", "s32"), 0x8000_0000);
        assert_eq!(scalar("-9223372036854775808", "s64"), 1 << 63);
        assert_eq!(scalar("9223372036854775807", "s64"), i64::MAX as u64);
        // .uN takes a negative decimal that fits the width as its two's complement (nvcc
        // declares C `int` parameters .u32)
        assert_eq!(scalar("-1", "u32"), 0xffff_ffff);
        assert_eq!(scalar("-2147483648", "u32"), 0x8000_0000);
        assert_eq!(scalar("-128", "u8"), 0x80);
        assert_eq!(scalar("-1", "u16"), 0xffff);
        assert_eq!(scalar("-9223372036854775808", "u64"), 1 << 63);
        // .bN takes both signed and unsigned readings.
        assert_eq!(scalar("-1", "b8"), 0xff);
        assert_eq!(scalar("255", "b8"), 0xff);
        assert_eq!(scalar("-32768", "b16"), 0x8000);
        assert_eq!(scalar("4294967295", "b32"), 0xffff_ffff);
        assert_eq!(scalar("-9223372036854775808", "b64"), 1 << 63);
        assert_eq!(scalar("18446744073709551615", "b64"), u64::MAX);
    }

    #[test]
    fn hex_is_raw_bits() {
        assert_eq!(scalar("0x1f", "u32"), 0x1f);
        assert_eq!(scalar("0X1F", "u8"), 0x1f);
        assert_eq!(scalar("0xff", "s8"), 0xff);
        assert_eq!(scalar("0x80000000", "s32"), 0x8000_0000);
        assert_eq!(scalar("0xffffffffffffffff", "s64"), u64::MAX);
        assert_eq!(scalar("0x000000000000000000ff", "u8"), 0xff);
        assert_eq!(scalar("0xdeadbeef", "b32"), 0xdead_beef);
        assert_eq!(scalar("0x3f800000", "f32"), 0x3f80_0000);
        assert_eq!(scalar("0x7ff8000000000001", "f64"), 0x7ff8_0000_0000_0001);
        assert_eq!(scalar("0x7e00", "f16"), 0x7e00);
        assert_eq!(scalar("0xffff", "bf16"), 0xffff);
    }

    #[test]
    fn integer_errors() {
        assert_eq!(
            error("300", "u8"),
            "`300` is out of range for .u8 (-128..=255)"
        );
        assert_eq!(
            error("-2147483649", "u32"),
            "`-2147483649` is out of range for .u32 (-2147483648..=4294967295)"
        );
        assert_eq!(
            error("-129", "u8"),
            "`-129` is out of range for .u8 (-128..=255)"
        );
        assert_eq!(
            error("128", "s8"),
            "`128` is out of range for .s8 (-128..=127)"
        );
        assert_eq!(
            error("-129", "s8"),
            "`-129` is out of range for .s8 (-128..=127)"
        );
        assert_eq!(
            error("-9223372036854775809", "s64"),
            "`-9223372036854775809` is out of range for .s64 (-9223372036854775808..=9223372036854775807)"
        );
        assert_eq!(
            error("18446744073709551616", "u64"),
            "`18446744073709551616` is out of range for .u64 (-9223372036854775808..=18446744073709551615)"
        );
        assert_eq!(
            error("99999999999999999999999999999999999999999", "u64"),
            "`99999999999999999999999999999999999999999` is out of range for .u64 (-9223372036854775808..=18446744073709551615)"
        );
        assert_eq!(
            error("4294967296", "b32"),
            "`4294967296` is out of range for .b32 (-2147483648..=4294967295)"
        );
        assert_eq!(
            error("-129", "b8"),
            "`-129` is out of range for .b8 (-128..=255)"
        );
        assert_eq!(
            error("0x100", "u8"),
            "`0x100` does not fit in .u8 (at most 0xff)"
        );
        assert_eq!(
            error("0x1ffffffffffffffffffffffffffffffff", "u64"),
            "`0x1ffffffffffffffffffffffffffffffff` does not fit in .u64 (at most 0xffffffffffffffff)"
        );
        assert_eq!(
            error("-0x1", "s32"),
            "`-0x1`: hex is taken as raw bits and has no sign (expected a .s32 value)"
        );
        assert_eq!(
            error("2.5", "u32"),
            "`2.5` is not an integer (expected a .u32 value: decimal or 0x hex)"
        );
        assert_eq!(
            error("1e3", "s64"),
            "`1e3` is not an integer (expected a .s64 value: decimal or 0x hex)"
        );
        assert_eq!(
            error("0x", "u32"),
            "`0x` is not an integer (expected a .u32 value: decimal or 0x hex)"
        );
        assert_eq!(
            error("1.5", "b16"),
            "`1.5` is not an integer (expected a .b16 value: decimal or 0x hex)"
        );
        assert_eq!(
            error(" 1", "u32"),
            "` 1` is not an integer (expected a .u32 value: decimal or 0x hex)"
        );
        assert_eq!(
            error("", "u32"),
            "empty argument (expected a number, DTYPE[N] or @PATH)"
        );
    }

    #[test]
    fn bits_take_floats() {
        assert_eq!(scalar("1.5", "b32"), 0x3fc0_0000);
        assert_eq!(scalar("-inf", "b32"), 0xff80_0000);
        assert_eq!(scalar("1e-3", "b64"), 0x3f50_624d_d2f1_a9fc);
        assert_eq!(scalar("1e3", "b32"), 0x447a_0000);
        assert_eq!(
            error("abc", "b32"),
            "`abc` is not a number (expected a .b32 value: an integer, 0x hex bits or a float)"
        );
        assert_eq!(
            error("1.5.", "b64"),
            "`1.5.` is not a number (expected a .b64 value: an integer, 0x hex bits or a float)"
        );
    }

    // Expected bits from `numpy.float32(text).view(np.uint32)` and `numpy.float64`.
    #[test]
    fn floats_f32_f64() {
        assert_eq!(scalar("2.5", "f32"), 0x4020_0000);
        assert_eq!(scalar("-1e-3", "f32"), 0xba83_126f);
        assert_eq!(scalar("0.1", "f32"), 0x3dcc_cccd);
        assert_eq!(scalar("3", "f32"), 0x4040_0000);
        assert_eq!(scalar("-0", "f32"), 0x8000_0000);
        assert_eq!(scalar("inf", "f32"), 0x7f80_0000);
        assert_eq!(scalar("-inf", "f32"), 0xff80_0000);
        assert_eq!(scalar("nan", "f32"), 0x7fc0_0000);
        assert_eq!(scalar("1e-45", "f32"), 1);
        assert_eq!(scalar("1e39", "f32"), 0x7f80_0000);
        // Double rounding via f64 would give 0x3f800000 (the f64 value is an exact f32 tie).
        assert_eq!(scalar("1.00000005960464477550", "f32"), 0x3f80_0001);
        assert_eq!(scalar("0.1", "f64"), 0x3fb9_9999_9999_999a);
        assert_eq!(scalar("-1e-3", "f64"), 0xbf50_624d_d2f1_a9fc);
        assert_eq!(scalar("5e-324", "f64"), 1);
        assert_eq!(scalar("nan", "f64"), 0x7ff8_0000_0000_0000);
        assert_eq!(
            error("1,5", "f32"),
            "`1,5` is not a number (expected a .f32 value: a decimal float, inf, nan or 0x hex bits)"
        );
        assert_eq!(
            error("0x100000000", "f32"),
            "`0x100000000` does not fit in .f32 (at most 0xffffffff)"
        );
        assert_eq!(
            error("-0x3f800000", "f32"),
            "`-0x3f800000`: hex is taken as raw bits and has no sign (expected a .f32 value)"
        );
    }

    // Expected bits computed in Python with exact rational arithmetic (fractions.Fraction, round to
    // nearest even), not via numpy (whose float16 parsing goes through double).
    #[test]
    fn floats_f16_bf16_correctly_rounded() {
        let f16_cases = [
            ("1", 0x3c00),
            ("2.5", 0x4100),
            ("-1e-3", 0x9419),
            ("0.1", 0x2e66),
            ("65504", 0x7bff),
            ("65519.99", 0x7bff),
            ("65520", 0x7c00), // the tie above the largest finite rounds to even: inf
            ("1e5", 0x7c00),
            ("-inf", 0xfc00),
            ("nan", 0x7e00),
            ("-0", 0x8000),
            ("5.9604644775390625e-8", 0x0001), // 2^-24, the smallest subnormal
            ("2.98023223876953125e-8", 0x0000), // 2^-25: tie, to even (zero)
            ("2.98023223876953125000001e-8", 0x0001), // just above the tie
            ("1e-9", 0x0000),
            ("6.103515625e-5", 0x0400), // 2^-14, the smallest normal
            ("1.00048828125", 0x3c00),  // 1 + 2^-11: tie, to even
            ("1.00146484375", 0x3c02),  // 1 + 3*2^-11: tie, to even (up)
            // 1 + 2^-11 + 10^-30: the f64 is the tie 1 + 2^-11, the exact value is above it.
            ("1.000488281250000000000000000001", 0x3c01),
            ("1.000488281249999999999999999999", 0x3c00),
            ("-1.000488281250000000000000000001", 0xbc01),
            ("100000000000000000000000000000000000000000000e-40", 0x70e2), // 10^4 = 10000
        ];
        for (text, bits) in f16_cases {
            assert_eq!(scalar(text, "f16"), bits, "f16 `{text}`");
        }
        let bf16_cases = [
            ("1", 0x3f80),
            ("2.5", 0x4020),
            ("0.1", 0x3dcd),
            ("-1e-3", 0xba83),
            ("3.3895313892515355e38", 0x7f7f), // the largest finite
            ("3.3961775292304e38", 0x7f7f),    // just below the overflow tie
            ("339617752923046005526922703901628039168", 0x7f80), // the tie: to even, inf
            ("1e-45", 0x0000),
            ("1.00390625", 0x3f80), // 1 + 2^-8: tie, to even
            ("1.003906250000000000000000000000001", 0x3f81),
            ("9.183549615799121e-41", 0x0001), // about 2^-133, the smallest subnormal
            ("inf", 0x7f80),
        ];
        for (text, bits) in bf16_cases {
            assert_eq!(scalar(text, "bf16"), bits, "bf16 `{text}`");
        }
        assert_eq!(
            error("0x10000", "f16"),
            "`0x10000` does not fit in .f16 (at most 0xffff)"
        );
        assert_eq!(
            error("one", "bf16"),
            "`one` is not a number (expected a .bf16 value: a decimal float, inf, nan or 0x hex bits)"
        );
    }

    #[test]
    fn predicates() {
        assert_eq!(scalar("1", "pred"), 1);
        assert_eq!(scalar("true", "pred"), 1);
        assert_eq!(scalar("0", "pred"), 0);
        assert_eq!(scalar("false", "pred"), 0);
        assert_eq!(
            error("2", "pred"),
            "`2` is not a predicate value (expected 0, 1, true or false)"
        );
        // A predicate parameter laid out in 4 bytes is zero-extended.
        let wide = ParamInfo {
            size: 4,
            ..param("pred")
        };
        assert_eq!(
            parse_arg("true", &wide, &here()),
            Ok(HostArg::Scalar(vec![1, 0, 0, 0]))
        );
    }

    #[test]
    fn scalar_bytes_are_exactly_the_param_size() {
        assert_eq!(
            parse_arg("0x01020304", &param("u32"), &here()),
            Ok(HostArg::Scalar(vec![4, 3, 2, 1]))
        );
        assert_eq!(
            parse_arg("-2", &param("s16"), &here()),
            Ok(HostArg::Scalar(vec![0xfe, 0xff]))
        );
        assert_eq!(
            parse_arg("1", &param("f64"), &here()),
            Ok(HostArg::Scalar(1f64.to_bits().to_le_bytes().to_vec()))
        );
        let short = ParamInfo {
            size: 2,
            ..param("u32")
        };
        assert_eq!(
            parse_arg("1", &short, &here()),
            Err("parameter `p` is declared .u32 but has only 2 bytes".to_string())
        );
    }

    #[test]
    fn aggregates() {
        let arg = |spec: &str, size| parse_arg(spec, &aggregate(size), &here());
        assert_eq!(arg("0", 12), Ok(HostArg::Scalar(vec![0; 12])));
        assert_eq!(
            arg("0x0000000200000001", 8),
            Ok(HostArg::Scalar(vec![1, 0, 0, 0, 2, 0, 0, 0]))
        );
        assert_eq!(
            arg("0x102030405060708090a0b0c0d0e0f0", 16),
            Ok(HostArg::Scalar(vec![
                0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0, 0x90, 0x80, 0x70, 0x60, 0x50, 0x40, 0x30, 0x20,
                0x10, 0
            ]))
        );
        assert_eq!(arg("258", 3), Ok(HostArg::Scalar(vec![2, 1, 0])));
        assert_eq!(arg("0x00000000ff", 1), Ok(HostArg::Scalar(vec![0xff])));
        let message = "does not fit a 2-byte aggregate parameter (expected an unsigned integer or 0x hex of at most 2 bytes, stored little-endian)";
        assert_eq!(arg("65536", 2), Err(format!("`65536` {message}")));
        assert_eq!(arg("0x10000", 2), Err(format!("`0x10000` {message}")));
        assert_eq!(arg("-1", 2), Err(format!("`-1` {message}")));
        assert_eq!(arg("1.5", 2), Err(format!("`1.5` {message}")));
        assert_eq!(
            arg(&"9".repeat(50), 2),
            Err(format!("`{}` {message}", "9".repeat(50)))
        );
        assert_eq!(
            arg("f32[4]", 8),
            Err("`f32[4]`: a buffer is passed by its device address, which needs a .u64, .s64 or .b64 parameter, but `s` is .b8[8]".to_string())
        );
    }

    #[test]
    fn buffers_only_for_8_byte_params() {
        for ty in ["u64", "s64", "b64"] {
            assert!(matches!(
                parse_arg("u8[1]", &param(ty), &here()),
                Ok(HostArg::Buffer { .. })
            ));
        }
        assert_eq!(
            error("f32[4]", "u32"),
            "`f32[4]`: a buffer is passed by its device address, which needs a .u64, .s64 or .b64 parameter, but `p` is .u32"
        );
        assert_eq!(
            error("@missing.npy", "f64"),
            "`@missing.npy`: a buffer is passed by its device address, which needs a .u64, .s64 or .b64 parameter, but `p` is .f64"
        );
    }

    #[test]
    fn zero_filled_buffers() {
        assert_eq!(buffer("f32[3]"), (Dtype::F32, vec![0; 12]));
        assert_eq!(buffer("bf16[2]"), (Dtype::BF16, vec![0; 4]));
        assert_eq!(buffer("u8[0]"), (Dtype::U8, vec![]));
        assert_eq!(buffer("i64[0]=iota"), (Dtype::I64, vec![]));
        for dtype in Dtype::ALL {
            let (d, data) = buffer(&format!("{}[5]", dtype.name()));
            assert_eq!((d, data.len()), (dtype, 5 * dtype.size()));
        }
    }

    #[test]
    fn iota() {
        assert_eq!(shown("i32[4]=iota"), "[0, 1, 2, 3]");
        assert_eq!(shown("f64[3]=iota"), "[0, 1, 2]");
        assert_eq!(buffer("u16[3]=iota").1, vec![0, 0, 1, 0, 2, 0]);
        // Integers wrap like numpy.arange(n).astype(dtype).
        let (_, bytes) = buffer("u8[258]=iota");
        assert_eq!((bytes[255], bytes[256], bytes[257]), (255, 0, 1));
        let (_, bytes) = buffer("i8[130]=iota");
        assert_eq!(
            format_values(Dtype::I8, &bytes[127..], None),
            "[127, -128, -127]"
        );
        // Floats round to nearest even: f16 has 11 significant bits, bf16 8, f32 24.
        let (_, bytes) = buffer("f16[2052]=iota");
        assert_eq!(
            format_values(Dtype::F16, &bytes[2 * 2047..], None),
            "[2047, 2048, 2048, 2050, 2052]"
        );
        let (_, bytes) = buffer("bf16[260]=iota");
        assert_eq!(
            format_values(Dtype::BF16, &bytes[2 * 255..], None),
            "[255, 256, 256, 258, 260]"
        );
        let (_, bytes) = buffer("f16[65600]=iota");
        assert_eq!(
            format_values(Dtype::F16, &bytes[2 * 65503..2 * 65505], None),
            "[65504, 65504]"
        );
        assert_eq!(
            format_values(Dtype::F16, &bytes[2 * 65519..2 * 65521], None),
            "[65504, inf]"
        );
    }

    #[test]
    fn value_fill() {
        assert_eq!(shown("f32[3]=1.5"), "[1.5, 1.5, 1.5]");
        assert_eq!(shown("i16[2]=-7"), "[-7, -7]");
        assert_eq!(shown("u8[2]=0xff"), "[255, 255]");
        assert_eq!(shown("i8[1]=0x80"), "[-128]");
        assert_eq!(shown("f16[2]=0.1"), "[0.099975586, 0.099975586]");
        assert_eq!(shown("bf16[1]=-inf"), "[-inf]");
        assert_eq!(shown("f64[1]=nan"), "[nan]");
        assert_eq!(
            shown("u64[1]=18446744073709551615"),
            "[18446744073709551615]"
        );
        assert_eq!(
            buffer_error("u8[4]=300"),
            "`u8[4]=300`: `300` is out of range for .u8 (-128..=255)"
        );
        assert_eq!(
            buffer_error("i32[4]=1.5"),
            "`i32[4]=1.5`: `1.5` is not an integer (expected a .s32 value: decimal or 0x hex)"
        );
        assert_eq!(
            buffer_error("f32[4]="),
            "`f32[4]=`: `` is not a number (expected a .f32 value: a decimal float, inf, nan or 0x hex bits)"
        );
    }

    // Expected values from a Python SplitMix64 (the reference's first outputs for seed 0 are
    // 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f).
    #[test]
    fn random_fill() {
        let mut rng = SplitMix64(0);
        assert_eq!(
            [rng.next(), rng.next(), rng.next()],
            [
                0xe220_a839_7b1d_cdaf,
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f
            ]
        );
        assert_eq!(buffer("u32[3]=rand"), buffer("u32[3]=rand:0"));
        assert_eq!(buffer("u32[3]=rand:0x2a"), buffer("u32[3]=rand:42"));
        assert_ne!(buffer("u32[3]=rand:1").1, buffer("u32[3]=rand:2").1);
        assert_eq!(shown("u32[5]=rand"), "[35, 0, 79, 44, 47]");
        assert_eq!(shown("i8[5]=rand:7"), "[87, 4, 46, 3, 74]");
        assert_eq!(
            shown("f64[3]=rand"),
            "[0.8833108082136426, 0.43152799704850997, 0.026433771592597743]"
        );
        assert_eq!(shown("f32[3]=rand"), "[0.8833108, 0.43152797, 0.026433766]");
        assert_eq!(shown("f16[3]=rand"), "[0.8833008, 0.43115234, 0.026367188]");
        assert_eq!(shown("bf16[3]=rand"), "[0.8828125, 0.4296875, 0.0234375]");
        // Integers are in [0, 100), floats in [0, 1).
        let (_, data) = buffer("u64[1000]=rand:5");
        assert!(data
            .chunks(8)
            .all(|c| u64::from_le_bytes(c.try_into().unwrap()) < 100));
        let (_, data) = buffer("f32[1000]=rand:5");
        assert!(data.chunks(4).all(|c| {
            let x = f32::from_le_bytes(c.try_into().unwrap());
            (0.0..1.0).contains(&x)
        }));
        assert_eq!(
            buffer_error("f32[2]=rand:x"),
            "`f32[2]=rand:x`: the seed `x` is not a 64-bit unsigned integer"
        );
        assert_eq!(
            buffer_error("f32[2]=rand:-1"),
            "`f32[2]=rand:-1`: the seed `-1` is not a 64-bit unsigned integer"
        );
        assert_eq!(
            buffer_error("f32[2]=rand:18446744073709551616"),
            "`f32[2]=rand:18446744073709551616`: the seed `18446744073709551616` is not a 64-bit unsigned integer"
        );
    }

    #[test]
    fn buffer_spec_errors() {
        assert_eq!(
            buffer_error("f33[4]"),
            "`f33[4]`: unknown dtype `f33` (expected one of u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)"
        );
        assert_eq!(
            buffer_error("[4]"),
            "`[4]`: unknown dtype `` (expected one of u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)"
        );
        assert_eq!(
            buffer_error("f32[4"),
            "`f32[4`: missing `]` after the element count"
        );
        assert_eq!(
            buffer_error("f32[]"),
            "`f32[]`: the element count `` is not a non-negative decimal integer"
        );
        assert_eq!(
            buffer_error("f32[-1]"),
            "`f32[-1]`: the element count `-1` is not a non-negative decimal integer"
        );
        assert_eq!(
            buffer_error("f32[0x10]"),
            "`f32[0x10]`: the element count `0x10` is not a non-negative decimal integer"
        );
        assert_eq!(
            buffer_error("f32[4294967297]"),
            "`f32[4294967297]`: 4294967297 elements of f32 are more than the buffer limit of 17179869184 bytes (16 GiB)"
        );
        assert_eq!(
            buffer_error("u8[99999999999999999999999]"),
            "`u8[99999999999999999999999]`: 99999999999999999999999 elements of u8 are more than the buffer limit of 17179869184 bytes (16 GiB)"
        );
        assert_eq!(
            buffer_error("f32[4]x"),
            "`f32[4]x`: unexpected `x` after `]` (expected nothing, `=iota`, `=VALUE`, `=rand` or `=rand:SEED`)"
        );
        assert_eq!(
            buffer_error("f32[4]]"),
            "`f32[4]]`: unexpected `]` after `]` (expected nothing, `=iota`, `=VALUE`, `=rand` or `=rand:SEED`)"
        );
    }

    fn data_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy")
    }

    #[test]
    fn file_buffers() {
        let dir = data_dir();
        let arg = |spec: &str| parse_arg(spec, &param("u64"), &dir);
        assert_eq!(
            materialize(arg("@f32_1d.npy")),
            Ok((
                Dtype::F32,
                [1.5f32, -0.0, 0.1, f32::INFINITY]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect()
            ))
        );
        // An absolute path ignores base_dir; a file that is not .npy is raw bytes.
        let readme = dir.join("README.md");
        let spec = format!("@{}", readme.display());
        assert_eq!(
            materialize(parse_arg(&spec, &param("b64"), Path::new("/nonexistent"))),
            Ok((Dtype::U8, std::fs::read(&readme).unwrap()))
        );
        // Any case of the extension is a .npy file.
        let err = arg("@README.NPY").unwrap_err();
        assert!(err.starts_with("`@README.NPY`: cannot read `"), "{err}");
        assert_eq!(
            arg("@i32_big_endian.npy"),
            Err("`@i32_big_endian.npy`: big-endian arrays (`>i4`) are not supported; save `a.astype('<i4')` instead".to_string())
        );
        assert_eq!(
            arg("@"),
            Err("`@`: missing file path after `@`".to_string())
        );
        let err = arg("@nope.npy").unwrap_err();
        let expected_path = dir.join("nope.npy");
        assert!(
            err.starts_with(&format!(
                "`@nope.npy`: cannot read `{}`: ",
                expected_path.display()
            )),
            "{err}"
        );
        // A directory cannot be read as a file.
        let err = parse_arg("@npy", &param("u64"), &dir.join("..")).unwrap_err();
        assert!(err.starts_with("`@npy`: cannot read `"), "{err}");
    }

    #[test]
    fn formats_values() {
        let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>();
        assert_eq!(
            format_values(Dtype::U32, &bytes(&[1, 2, 3]), None),
            "[1, 2, 3]"
        );
        assert_eq!(
            format_values(Dtype::U32, &bytes(&[1, 2, 3]), Some(2)),
            "[1, 2, …]"
        );
        assert_eq!(
            format_values(Dtype::U32, &bytes(&[1, 2, 3]), Some(3)),
            "[1, 2, 3]"
        );
        assert_eq!(
            format_values(Dtype::U32, &bytes(&[1, 2, 3]), Some(9)),
            "[1, 2, 3]"
        );
        assert_eq!(
            format_values(Dtype::U32, &bytes(&[1, 2, 3]), Some(0)),
            "[…]"
        );
        assert_eq!(format_values(Dtype::U32, &[], None), "[]");
        assert_eq!(format_values(Dtype::U32, &[1, 0, 0, 0, 7], None), "[1]");
        assert_eq!(
            format_values(Dtype::I32, &bytes(&[u32::MAX, 0x8000_0000]), None),
            "[-1, -2147483648]"
        );
        assert_eq!(format_values(Dtype::I16, &[0xff, 0xff], None), "[-1]");
        assert_eq!(format_values(Dtype::U16, &[0xff, 0xff], None), "[65535]");
        assert_eq!(
            format_values(Dtype::I64, &i64::MIN.to_le_bytes(), None),
            "[-9223372036854775808]"
        );
        assert_eq!(
            format_values(Dtype::U64, &u64::MAX.to_le_bytes(), None),
            "[18446744073709551615]"
        );
        let f32s: Vec<u8> = [
            1.5f32,
            0.1,
            1e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -0.0,
            1e20,
            100.0,
        ]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
        assert_eq!(
            format_values(Dtype::F32, &f32s, None),
            "[1.5, 0.1, 1e-45, inf, -inf, nan, -0, 1e20, 100]"
        );
        let f64s: Vec<u8> = [0.1f64, 5e-324, -2.0, 1.7976931348623157e308]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(
            format_values(Dtype::F64, &f64s, None),
            "[0.1, 5e-324, -2, 1.7976931348623157e308]"
        );
        // f16: 1, the smallest subnormal, the largest finite, -inf, a NaN, -0.
        let f16s: Vec<u8> = [0x3c00u16, 0x0001, 0x7bff, 0xfc00, 0x7e01, 0x8000]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(
            format_values(Dtype::F16, &f16s, None),
            "[1, 5.9604645e-8, 65504, -inf, nan, -0]"
        );
        let bf16s: Vec<u8> = [0x3f80u16, 0x3dcd, 0x7f7f, 0x0001, 0xff81]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(
            format_values(Dtype::BF16, &bf16s, None),
            "[1, 0.100097656, 3.3895314e38, 9.1835e-41, nan]"
        );
    }

    #[test]
    fn printed_values_read_back_exactly() {
        for spec in [
            "f32[200]=rand:3",
            "f64[200]=rand:3",
            "f16[200]=rand:3",
            "bf16[200]=rand:3",
        ] {
            let (dtype, data) = buffer(spec);
            let text = format_values(dtype, &data, None);
            let values = text.trim_matches(['[', ']']).split(", ");
            let reparsed: Vec<u8> = values
                .flat_map(|v| {
                    let bits = parse_kind(v, dtype_kind(dtype)).unwrap();
                    bits.to_le_bytes()[..dtype.size()].to_vec()
                })
                .collect();
            assert_eq!(reparsed, data, "{spec}");
        }
        // Every f16 and bf16 bit pattern (NaNs aside) survives print and parse.
        for dtype in [Dtype::F16, Dtype::BF16] {
            for bits in 0..=0xffffu64 {
                let text = dtype.format_bits(bits);
                if text == "nan" {
                    continue;
                }
                assert_eq!(parse_float(&text, dtype), Ok(bits), "{dtype:?} {text}");
            }
        }
    }

    #[test]
    fn param_types() {
        assert_eq!(ParamType::from_ptx(".u32"), Some(ParamType::U32));
        assert_eq!(ParamType::from_ptx("bf16"), Some(ParamType::BF16));
        assert_eq!(ParamType::from_ptx(".pred"), Some(ParamType::Pred));
        assert_eq!(ParamType::from_ptx(".f16x2"), None);
        assert_eq!(ParamType::U32.name(), ".u32");
        assert_eq!(Dtype::from_name("bf16"), Some(Dtype::BF16));
        assert_eq!(Dtype::from_name("F32"), None);
        for dtype in Dtype::ALL {
            assert_eq!(Dtype::from_name(dtype.name()), Some(dtype));
        }
    }

    #[test]
    fn typed_values_and_lists() {
        assert_eq!(
            parse_typed("u16:0x1234"),
            Ok(Some((Dtype::U16, vec![0x34, 0x12])))
        );
        // -2 as i8 is 0xfe; 1.5 as f32 is 0x3fc00000
        assert_eq!(
            parse_typed("i8:[-2, 3]"),
            Ok(Some((Dtype::I8, vec![0xfe, 3])))
        );
        assert_eq!(
            parse_typed("f32:1.5"),
            Ok(Some((Dtype::F32, vec![0, 0, 0xc0, 0x3f])))
        );
        // not typed values: a buffer spec, a path, a bare scalar
        for text in ["f32[4]=rand:3", "@a:b.npy", "7", "x:1"] {
            assert_eq!(parse_typed(text), Ok(None), "{text}");
        }
        assert_eq!(
            parse_typed("u8:[1,2"),
            Err("`u8:[1,2`: missing `]` at the end of the list".to_string())
        );
        assert_eq!(
            parse_typed("u8:[]"),
            Err("`u8:[]`: the list is empty".to_string())
        );
        assert!(parse_typed("u8:256").unwrap_err().starts_with("`u8:256`: "));
    }

    #[test]
    fn struct_specs() {
        let s = parse_arg(
            "{f32:1.5, f32[4]=iota, align:16, u32:[7,8]}",
            &aggregate(32),
            &here(),
        );
        let Ok(HostArg::Struct(fields)) = s else {
            panic!("{s:?}")
        };
        assert_eq!(
            fields,
            [
                FieldSpec::Value {
                    align: 4,
                    bytes: vec![0, 0, 0xc0, 0x3f]
                },
                FieldSpec::Buffer {
                    dtype: Dtype::F32,
                    bytes: 16,
                    fill: Fill::Iota,
                    spec: "f32[4]=iota".to_string()
                },
                FieldSpec::AlignNext(16),
                FieldSpec::Value {
                    align: 4,
                    bytes: vec![7, 0, 0, 0, 8, 0, 0, 0]
                },
            ]
        );
        assert_eq!(
            parse_arg("{}", &aggregate(8), &here()),
            Ok(HostArg::Struct(Vec::new()))
        );
        let e = |spec: &str| parse_arg(spec, &aggregate(8), &here()).unwrap_err();
        assert_eq!(
            e("{u8:1"),
            "`{u8:1`: a struct is written {FIELD, FIELD, …} and must end with `}`"
        );
        assert_eq!(e("{u8:1,,u8:2}"), "`{u8:1,,u8:2}`: field 1 ``: empty field");
        assert!(e("{{u8:1}}").contains("nested structs are not supported"));
        assert_eq!(
            e("{align:3,u8:1}"),
            "`{align:3,u8:1}`: field 0 `align:3`: the alignment must be a power of two up to 4096"
        );
        assert!(e("{q32:1}").contains("field 0: `q32:1`: a field is DTYPE:VALUE"));
        assert!(e("{f32[x]}").contains("field 0: `f32[x]`: the element count `x`"));
    }

    #[test]
    fn symbol_specs() {
        let var = |ty: &str, size: usize| ParamInfo {
            name: "v".to_string(),
            ty: ParamType::from_ptx(ty).unwrap(),
            size,
        };
        let scalar =
            |spec: &str, v: &ParamInfo, array: bool| match parse_symbol(spec, v, array, &here()) {
                Ok(HostArg::Scalar(b)) => b,
                other => panic!("{spec}: {other:?}"),
            };
        // a bare scalar per the variable's type; a typed value or list as given
        assert_eq!(
            scalar("-7", &var(".s32", 4), false),
            vec![0xf9, 0xff, 0xff, 0xff]
        );
        assert_eq!(scalar("u16:[1,2]", &var(".f32", 8), true), vec![1, 0, 2, 0]);
        // buffer specs are contents
        assert!(matches!(
            parse_symbol("f32[2]=0.5", &var(".f32", 8), true, &here()),
            Ok(HostArg::Buffer {
                dtype: Dtype::F32,
                bytes: 8,
                fill: Fill::Value(0x3f00_0000)
            })
        ));
        assert!(matches!(
            parse_symbol("{u32[4]}", &var(".u64", 8), false, &here()),
            Ok(HostArg::Struct(_))
        ));
        assert_eq!(
            parse_symbol("1.5", &var(".f32", 8), true, &here()).unwrap_err(),
            "`1.5`: `v` is an array of 8 bytes; give all its elements, e.g. DTYPE:[V,V,…] or DTYPE[N]=VALUE"
        );
        assert!(parse_symbol("", &var(".f32", 4), false, &here())
            .unwrap_err()
            .starts_with("empty value"));
    }
}
