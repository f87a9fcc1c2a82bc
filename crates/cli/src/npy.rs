//! NumPy `.npy` reading and writing, for `ptxvm run` `@PATH.npy` arguments and `--out N=PATH.npy`.
//!
//! The format (NumPy's `numpy.lib.format`): the magic `\x93NUMPY`, a major and minor version byte, the
//! header length (2 bytes little-endian in version 1, 4 bytes in versions 2 and 3), a header that is a
//! Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }` padded with spaces
//! and ended by `\n`, then the raw element data.
//!
//! Reading accepts versions 1, 2 and 3, little-endian (`<`) or byte-order-free (`|`) plain numeric
//! dtypes (`bool` is read as `u8`), and any shape in C order (flattened). It rejects big-endian data,
//! Fortran order (unless the layout is the same as C order: at most one dimension longer than 1),
//! structured, object, string, complex and other dtypes. Writing produces what `np.save` writes for a
//! 1-D array: version 1.0, the header padded so the data starts at a multiple of 64 bytes.

use ptxvm::Dtype;

/// The magic string every `.npy` file starts with.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Parses a `.npy` file's bytes into its element type and its data (little-endian, C order, flattened).
pub fn read_npy(bytes: &[u8]) -> Result<(Dtype, Vec<u8>), String> {
    let (dtype, start, _) = npy_layout(bytes, bytes.len() as u64)?;
    Ok((dtype, bytes[start..].to_vec()))
}

/// The longest `.npy` header read (NumPy itself refuses headers over 10,000 bytes by default).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Parses the start of a `.npy` file of `file_len` bytes: its element type, where its data
/// starts and how many bytes it is (checked against `file_len`). `prefix` holds the file's
/// first bytes, at least its whole header when the header is at most [`MAX_HEADER_BYTES`].
pub fn npy_layout(prefix: &[u8], file_len: u64) -> Result<(Dtype, usize, u64), String> {
    let bytes = prefix;
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err("not a .npy file (it does not start with the magic `\\x93NUMPY`)".to_string());
    }
    let (major, minor) = match bytes.get(6..8) {
        Some(v) => (v[0], v[1]),
        None => return Err("truncated .npy file: no format version".to_string()),
    };
    let (len_size, header_start): (usize, usize) = match major {
        1 => (2, 10),
        2 | 3 => (4, 12),
        _ => {
            return Err(format!(
                "unsupported .npy format version {major}.{minor} (expected 1.0, 2.0 or 3.0)"
            ))
        }
    };
    let header_len = match bytes.get(8..8 + len_size) {
        Some(b) => b
            .iter()
            .rev()
            .fold(0usize, |acc, &byte| (acc << 8) | usize::from(byte)),
        None => return Err("truncated .npy file: no header length".to_string()),
    };
    let data_start = header_start.saturating_add(header_len);
    if header_len > MAX_HEADER_BYTES && (data_start as u64) <= file_len {
        return Err(format!(
            "the .npy header is {header_len} bytes, more than the {MAX_HEADER_BYTES} ptxvm reads"
        ));
    }
    let header = bytes.get(header_start..data_start).ok_or_else(|| {
        format!(
            "truncated .npy file: the header is {header_len} bytes but the file has only {}",
            file_len.saturating_sub(header_start as u64)
        )
    })?;
    let header = parse_header(header)?;
    let (dtype, item_size) = dtype_of_descr(&header.descr)?;
    if header.fortran_order && header.shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(format!(
            "Fortran-ordered arrays (shape {}) are not supported; save `np.ascontiguousarray(a)` instead",
            shape_text(&header.shape)
        ));
    }
    let count = header
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let need = count
        .and_then(|c| c.checked_mul(item_size))
        .ok_or_else(|| {
            format!(
                "shape {} is too large to be an array",
                shape_text(&header.shape)
            )
        })?;
    let data_len = file_len.saturating_sub(data_start as u64);
    if data_len != need as u64 {
        return Err(format!(
            "the data is {data_len} bytes but shape {} of `{}` needs {need}",
            shape_text(&header.shape),
            header.descr
        ));
    }
    Ok((dtype, data_start, data_len))
}

/// Encodes `data` (little-endian elements of `dtype`) as a 1-D `.npy` file, version 1.0, as `np.save`
/// writes it. `bf16` has no NumPy dtype and is written as its raw bits, `<u2` (view it with
/// `ml_dtypes.bfloat16`). A trailing partial element, if any, is dropped.
pub fn write_npy(dtype: Dtype, data: &[u8]) -> Vec<u8> {
    let count = data.len() / dtype.size();
    let data = &data[..count * dtype.size()];
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({count},), }}",
        descr(dtype)
    );
    // Pad with spaces so that magic + version + length + header (ending in '\n') is a multiple of 64.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let header_len = u16::try_from(header.len()).unwrap_or(u16::MAX);
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// The three fields of a `.npy` header.
#[derive(Debug)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Renders a shape as Python does: `()`, `(3,)`, `(2, 3)`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The NumPy type string `.npy` files use for `dtype`: `<f4`, `|u1`, … (`bf16`, which NumPy
/// lacks, is written as its raw bits, `<u2`).
pub fn descr(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::U8 => "|u1",
        Dtype::I8 => "|i1",
        Dtype::U16 | Dtype::BF16 => "<u2",
        Dtype::I16 => "<i2",
        Dtype::U32 => "<u4",
        Dtype::I32 => "<i4",
        Dtype::U64 => "<u8",
        Dtype::I64 => "<i8",
        Dtype::F16 => "<f2",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    }
}

/// Maps a NumPy type string (`<f4`, `|u1`, `<i8`, `|b1`) to the dtype and its item size.
fn dtype_of_descr(descr: &str) -> Result<(Dtype, usize), String> {
    let mut chars = descr.chars();
    let order = chars.next();
    let kind_size = chars.as_str();
    if !matches!(order, Some('<' | '=' | '|' | '>')) {
        return Err(format!("malformed dtype `{descr}` in the .npy header"));
    }
    let dtype = match kind_size {
        "u1" | "b1" => Dtype::U8,
        "i1" => Dtype::I8,
        "u2" => Dtype::U16,
        "i2" => Dtype::I16,
        "u4" => Dtype::U32,
        "i4" => Dtype::I32,
        "u8" => Dtype::U64,
        "i8" => Dtype::I64,
        "f2" => Dtype::F16,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        _ => {
            let what = match kind_size.chars().next() {
                Some('O') => " (Python objects)",
                Some('c') => " (complex)",
                Some('U' | 'S' | 'a') => " (strings)",
                Some('V') => " (raw void records)",
                Some('M' | 'm') => " (dates and times)",
                Some('f') => " (extended precision)",
                _ => "",
            };
            return Err(format!(
                "dtype `{descr}`{what} is not supported (expected bool, int8..int64, uint8..uint64, float16, float32 or float64)"
            ));
        }
    };
    // `|` (not applicable) and `=` (native) are taken as little-endian; `>` matters only for
    // multi-byte elements.
    if order == Some('>') && dtype.size() > 1 {
        return Err(format!(
            "big-endian arrays (`{descr}`) are not supported; save `a.astype('<{kind_size}')` instead"
        ));
    }
    Ok((dtype, dtype.size()))
}

/// Parses the header dict literal.
fn parse_header(text: &[u8]) -> Result<Header, String> {
    let mut p = HeaderParser { text, pos: 0 };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    p.expect(b'{')?;
    loop {
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        let slot_taken = match key.as_str() {
            "descr" => {
                if p.peek() == Some(b'[') {
                    return Err("structured dtypes (records with fields) are not supported".into());
                }
                descr.replace(p.string()?).is_some()
            }
            "fortran_order" => fortran.replace(p.boolean()?).is_some(),
            "shape" => shape.replace(p.tuple()?).is_some(),
            _ => return Err(format!("unexpected key `{key}` in the .npy header")),
        };
        if slot_taken {
            return Err(format!("key `{key}` appears twice in the .npy header"));
        }
        if !p.eat(b',') {
            if !p.eat(b'}') {
                return Err(p.error("`,` or `}`"));
            }
            break;
        }
    }
    p.skip_space();
    if p.pos != text.len() {
        return Err(p.error("the end of the header after `}`"));
    }
    let missing = |k: &str| format!("the .npy header has no `{k}`");
    Ok(Header {
        descr: descr.ok_or_else(|| missing("descr"))?,
        fortran_order: fortran.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
    })
}

/// A cursor over the header's bytes.
struct HeaderParser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl HeaderParser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn error(&self, expected: &str) -> String {
        let rest = &self.text[self.pos.min(self.text.len())..];
        let near: String = String::from_utf8_lossy(rest).chars().take(20).collect();
        if near.trim().is_empty() {
            format!("malformed .npy header: expected {expected} at its end")
        } else {
            format!("malformed .npy header: expected {expected} at `{near}`")
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.error(&format!("`{}`", char::from(byte))))
        }
    }

    /// A Python string literal in single or double quotes, without escapes.
    fn string(&mut self) -> Result<String, String> {
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(self.error("a quoted string")),
        };
        let start = self.pos + 1;
        let len = self.text[start..]
            .iter()
            .position(|&b| b == quote)
            .ok_or_else(|| self.error("a closed string"))?;
        self.pos = start + len + 1;
        Ok(String::from_utf8_lossy(&self.text[start..start + len]).into_owned())
    }

    fn boolean(&mut self) -> Result<bool, String> {
        self.skip_space();
        for (word, value) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.text[self.pos..].starts_with(word) {
                self.pos += word.len();
                return Ok(value);
            }
        }
        Err(self.error("`True` or `False`"))
    }

    /// A tuple of non-negative integers (Python 2 files may write `3L`).
    fn tuple(&mut self) -> Result<Vec<usize>, String> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            let start = self.pos;
            while self.text.get(self.pos).is_some_and(u8::is_ascii_digit) {
                self.pos += 1;
            }
            if self.pos == start {
                return Err(self.error("a dimension (a non-negative integer)"));
            }
            let digits = String::from_utf8_lossy(&self.text[start..self.pos]);
            let dim = digits
                .parse::<usize>()
                .map_err(|_| format!("dimension {digits} in the .npy header is too large"))?;
            dims.push(dim);
            if self.text.get(self.pos) == Some(&b'L') {
                self.pos += 1;
            }
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a fixture written by NumPy 2.4 (`tests/data/npy/`, made by the commands in its README).
    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!("../tests/data/npy/", $name))
        };
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn read_ok(bytes: &[u8]) -> (Dtype, String) {
        let (dtype, data) = read_npy(bytes).unwrap();
        (dtype, hex(&data))
    }

    fn read_err(bytes: &[u8]) -> String {
        read_npy(bytes).unwrap_err()
    }

    /// A file with a hand-written header (version 1.0, no padding).
    fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    // Expected data bytes: `np.load(f).ravel().tobytes().hex()`.
    #[test]
    fn reads_numpy_files() {
        let cases: [(&[u8], Dtype, &str); 11] = [
            (fixture!("f32_1d.npy"), Dtype::F32, "0000c03f00000080cdcccc3d0000807f"),
            (
                fixture!("f64_2x3.npy"),
                Dtype::F64,
                "0000000000000000000000000000e03f000000000000f03f000000000000f83f00000000000000400000000000000440",
            ),
            (fixture!("i8.npy"), Dtype::I8, "80ff007f"),
            (fixture!("u16.npy"), Dtype::U16, "00000100ffff"),
            (fixture!("bool.npy"), Dtype::U8, "010001"),
            (fixture!("f16.npy"), Dtype::F16, "003c662e00c1ff7b"),
            (fixture!("i64_scalar.npy"), Dtype::I64, "fbffffffffffffff"),
            (
                fixture!("u64.npy"),
                Dtype::U64,
                "0000000000000000ffffffffffffffff0000000000000080",
            ),
            (fixture!("f32_v2.npy"), Dtype::F32, "0000803f0000004000004040"),
            (fixture!("u8_v3.npy"), Dtype::U8, "0708"),
            (
                fixture!("i16_3d.npy"),
                Dtype::I16,
                "00000100020003000400050006000700080009000a000b000c000d000e000f0010001100120013001400150016001700",
            ),
        ];
        for (bytes, dtype, data) in cases {
            assert_eq!(read_ok(bytes), (dtype, data.to_string()));
        }
        assert_eq!(
            read_ok(fixture!("u32_empty.npy")),
            (Dtype::U32, String::new())
        );
    }

    #[test]
    fn writes_what_numpy_writes() {
        for (bytes, dtype) in [
            (&fixture!("f32_1d.npy")[..], Dtype::F32),
            (fixture!("i8.npy"), Dtype::I8),
            (fixture!("u16.npy"), Dtype::U16),
            (fixture!("f16.npy"), Dtype::F16),
            (fixture!("u64.npy"), Dtype::U64),
            (fixture!("u32_empty.npy"), Dtype::U32),
        ] {
            let (_, data) = read_npy(bytes).unwrap();
            assert_eq!(write_npy(dtype, &data), bytes, "{dtype:?}");
        }
    }

    #[test]
    fn round_trips_every_dtype() {
        for dtype in Dtype::ALL {
            let data: Vec<u8> = (0..dtype.size() * 5)
                .map(|i| (i * 37 % 256) as u8)
                .collect();
            let file = write_npy(dtype, &data);
            assert_eq!(
                file.len() % 64,
                data.len() % 64,
                "{dtype:?}: data is 64-aligned"
            );
            let back_dtype = if dtype == Dtype::BF16 {
                Dtype::U16
            } else {
                dtype
            };
            assert_eq!(read_npy(&file).unwrap(), (back_dtype, data), "{dtype:?}");
        }
    }

    #[test]
    fn write_drops_a_partial_element() {
        let file = write_npy(Dtype::U32, &[1, 0, 0, 0, 9, 9]);
        assert_eq!(read_npy(&file).unwrap(), (Dtype::U32, vec![1, 0, 0, 0]));
    }

    #[test]
    fn header_variants() {
        // Python 2 style long dimensions, double quotes, no trailing comma, no padding.
        let file = with_header(
            "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2L,)}\n",
            &[1, 0, 0, 0, 2, 0, 0, 0],
        );
        assert_eq!(read_ok(&file), (Dtype::I32, "0100000002000000".into()));
        // Fortran order with the same layout as C order (one dimension longer than 1).
        let file = with_header(
            "{'descr': '<u2', 'fortran_order': True, 'shape': (1, 2, 1), }",
            &[5, 0, 6, 0],
        );
        assert_eq!(read_ok(&file), (Dtype::U16, "05000600".into()));
        // `=` (native) and `|` orders, and `>` for single bytes, are accepted.
        let file = with_header(
            "{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}",
            &[0, 0, 0x80, 0x3f],
        );
        assert_eq!(read_ok(&file), (Dtype::F32, "0000803f".into()));
        let file = with_header(
            "{'descr': '=f8', 'fortran_order': False, 'shape': (0,)}",
            &[],
        );
        assert_eq!(read_ok(&file), (Dtype::F64, String::new()));
        let file = with_header(
            "{'descr': '>u1', 'fortran_order': False, 'shape': (1,)}",
            &[3],
        );
        assert_eq!(read_ok(&file), (Dtype::U8, "03".into()));
    }

    #[test]
    fn rejects_unsupported_files() {
        let cases: [(&[u8], &str); 5] = [
            (
                fixture!("i32_big_endian.npy"),
                "big-endian arrays (`>i4`) are not supported; save `a.astype('<i4')` instead",
            ),
            (
                fixture!("f32_fortran_2x2.npy"),
                "Fortran-ordered arrays (shape (2, 2)) are not supported; save `np.ascontiguousarray(a)` instead",
            ),
            (
                fixture!("object.npy"),
                "dtype `|O` (Python objects) is not supported (expected bool, int8..int64, uint8..uint64, float16, float32 or float64)",
            ),
            (
                fixture!("c64.npy"),
                "dtype `<c8` (complex) is not supported (expected bool, int8..int64, uint8..uint64, float16, float32 or float64)",
            ),
            (
                fixture!("structured.npy"),
                "structured dtypes (records with fields) are not supported",
            ),
        ];
        for (bytes, message) in cases {
            assert_eq!(read_err(bytes), message);
        }
    }

    #[test]
    fn rejects_malformed_files() {
        let good = fixture!("f32_1d.npy");
        assert_eq!(
            read_err(b"PK\x03\x04"),
            "not a .npy file (it does not start with the magic `\\x93NUMPY`)"
        );
        assert_eq!(read_err(b""), read_err(b"PK\x03\x04"));
        assert_eq!(
            read_err(&good[..7]),
            "truncated .npy file: no format version"
        );
        assert_eq!(
            read_err(&good[..9]),
            "truncated .npy file: no header length"
        );
        assert_eq!(
            read_err(&good[..50]),
            "truncated .npy file: the header is 118 bytes but the file has only 40"
        );
        let mut v4 = good.to_vec();
        v4[6] = 4;
        assert_eq!(
            read_err(&v4),
            "unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)"
        );
        assert_eq!(
            read_err(&good[..good.len() - 1]),
            "the data is 15 bytes but shape (4,) of `<f4` needs 16"
        );
        let mut longer = good.to_vec();
        longer.push(0);
        assert_eq!(
            read_err(&longer),
            "the data is 17 bytes but shape (4,) of `<f4` needs 16"
        );
    }

    #[test]
    fn rejects_malformed_headers() {
        let err = |header: &str| read_err(&with_header(header, &[]));
        let fields = "'fortran_order': False, 'shape': (0,)";
        assert_eq!(
            err("'descr': '<f4'}"),
            "malformed .npy header: expected `{` at `'descr': '<f4'}`"
        );
        assert_eq!(
            err(&format!("{{'descr': '<f4', {fields}")),
            "malformed .npy header: expected `,` or `}` at its end"
        );
        assert_eq!(
            err(&format!("{{'descr': '<f4', {fields}}} x")),
            "malformed .npy header: expected the end of the header after `}` at `x`"
        );
        assert_eq!(
            err(&format!("{{descr: '<f4', {fields}}}")),
            "malformed .npy header: expected a quoted string at `descr: '<f4', 'fortr`"
        );
        assert_eq!(
            err(&format!("{{'descr: '<f4', {fields}}}")),
            "malformed .npy header: expected `:` at `<f4', 'fortran_order`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': false, 'shape': (0,)}"),
            "malformed .npy header: expected `True` or `False` at `false, 'shape': (0,)`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}"),
            "malformed .npy header: expected a dimension (a non-negative integer) at `-1,)}`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}"),
            "malformed .npy header: expected `)` at `2)}`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}"),
            "malformed .npy header: expected `(` at `[1]}`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
            "dimension 99999999999999999999 in the .npy header is too large"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
            "shape (4294967296, 4294967296) is too large to be an array"
        );
        assert_eq!(
            err(&format!("{{'descr': '<f4', 'descr': '<f4', {fields}}}")),
            "key `descr` appears twice in the .npy header"
        );
        assert_eq!(
            err(&format!("{{'descr': '<f4', 'x': 1, {fields}}}")),
            "unexpected key `x` in the .npy header"
        );
        assert_eq!(
            err(&format!("{{{fields}}}")),
            "the .npy header has no `descr`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'shape': (0,)}"),
            "the .npy header has no `fortran_order`"
        );
        assert_eq!(
            err("{'descr': '<f4', 'fortran_order': False}"),
            "the .npy header has no `shape`"
        );
        assert_eq!(
            err(&format!("{{'descr': 'f4', {fields}}}")),
            "malformed dtype `f4` in the .npy header"
        );
        assert_eq!(
            err(&format!("{{'descr': '<f16', {fields}}}")),
            "dtype `<f16` (extended precision) is not supported (expected bool, int8..int64, uint8..uint64, float16, float32 or float64)"
        );
        assert_eq!(
            err(&format!("{{'descr': '<f4, {fields}}}")),
            "malformed .npy header: expected `,` or `}` at `fortran_order': Fals`"
        );
        assert_eq!(
            err("{'descr': '<f4"),
            "malformed .npy header: expected a closed string at `'<f4`"
        );
    }
}
