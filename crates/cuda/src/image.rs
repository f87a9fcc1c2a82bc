//! Module images: PTX text, NVIDIA fatbins holding PTX, ptxvm's linker container; cubins and
//! SASS-only fatbins are recognised to be refused.
#![deny(unsafe_code)]

use crate::abi::*;

/// Magic of a fatbin (`0xBA55ED50`, little-endian).
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Magic of the `__fatBinC_Wrapper_t` (`__cudaFatBinaryWrapper`) that points to a fatbin.
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// Magic of the linker's output.
pub const CONTAINER_MAGIC: &[u8; 8] = b"PTXVMLNK";

/// What an image's first bytes say it is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    Elf,
    Fatbin,
    Wrapper,
    Container,
    Text,
}

/// Classifies an image from its first (up to) eight bytes, read up to the first NUL.
pub fn classify(head: &[u8]) -> Kind {
    let word = |b: &[u8]| {
        b.get(..4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    if head.starts_with(b"\x7fELF") {
        Kind::Elf
    } else if word(head) == Some(FATBIN_MAGIC) {
        Kind::Fatbin
    } else if word(head) == Some(WRAPPER_MAGIC) {
        Kind::Wrapper
    } else if head.starts_with(CONTAINER_MAGIC) {
        Kind::Container
    } else {
        Kind::Text
    }
}

/// The hint printed when an image holds no PTX.
pub fn no_ptx_hint(what: &str) {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "ptxvm: the {what} holds no PTX, only machine code (SASS) that ptxvm cannot run; build with `-gencode arch=compute_XX,code=compute_XX` to embed PTX"
    );
}

/// The largest PTX text a fatbin entry may decompress to (a hostile size is refused before
/// anything is allocated).
pub const MAX_PTX_BYTES: u64 = 256 << 20;

/// One PTX entry of a fatbin: the virtual architecture it was generated for (`compute_80` is
/// 80) and its text.
#[derive(Debug, PartialEq, Eq)]
pub struct PtxEntry {
    pub arch: u32,
    pub text: String,
}

/// The PTX entries of a fatbin (`data` holds its header and entries; several fatbins may
/// follow each other, as in a `.nv_fatbin` section). Machine-code entries are skipped, so
/// an empty result means SASS only.
///
/// The layout, as nvcc 13 writes it (little-endian): a 16-byte header (magic `0xBA55ED50`,
/// u16 version, u16 header size, u64 size of the entries), then entries, each a header
/// (u16 kind: 1 PTX, 2 ELF; u32 header size at 4; u64 padded payload size at 8; u32
/// compressed size at 16; u32 architecture at 28; u64 flags at 40, where `0x8000` marks zstd
/// and `0x2000` LZ4 block compression; u64 decompressed size at 56) and its payload.
pub fn fatbin_ptx(data: &[u8]) -> Result<Vec<PtxEntry>, CUresult> {
    let bad = CUDA_ERROR_INVALID_IMAGE;
    let u16_at = |o: usize| {
        data.get(o..o.checked_add(2)?)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |o: usize| {
        data.get(o..o.checked_add(4)?)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        data.get(o..o.checked_add(8)?)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    let mut out = Vec::new();
    let mut at = 0usize;
    let mut fatbins = 0;
    while u32_at(at) == Some(FATBIN_MAGIC) {
        fatbins += 1;
        let header = u16_at(at + 6).ok_or(bad)? as usize;
        let size = u64_at(at + 8).ok_or(bad)?;
        if header < 16 {
            return Err(bad);
        }
        let first = at.checked_add(header).ok_or(bad)?;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| first.checked_add(s))
            .filter(|&e| e <= data.len())
            .ok_or(bad)?;
        let mut e = first;
        while e < end {
            let kind = u16_at(e).ok_or(bad)?;
            let eh = u32_at(e + 4).ok_or(bad)? as usize;
            let padded = u64_at(e + 8).ok_or(bad)?;
            if eh < 64 || e + eh > end {
                return Err(bad);
            }
            let start = e + eh;
            let next = usize::try_from(padded)
                .ok()
                .and_then(|p| start.checked_add(p))
                .filter(|&n| n <= end)
                .ok_or(bad)?;
            if kind == 1 {
                let compressed = u32_at(e + 16).ok_or(bad)? as usize;
                let arch = u32_at(e + 28).ok_or(bad)?;
                let flags = u64_at(e + 40).ok_or(bad)?;
                let full = u64_at(e + 56).ok_or(bad)?;
                let body = &data[start..next];
                let text = if flags & (ZSTD | LZ4) != 0 {
                    let body = body.get(..compressed).ok_or(bad)?;
                    decompress(body, flags, full)?
                } else {
                    body.to_vec()
                };
                let text = String::from_utf8(text).map_err(|_| bad)?;
                out.push(PtxEntry {
                    arch,
                    text: text.trim_end_matches('\0').to_string(),
                });
            }
            e = next;
        }
        at = end;
    }
    if fatbins == 0 {
        return Err(bad);
    }
    Ok(out)
}

/// The entry of `entries` a device of compute capability `cc` (`80` for 8.0) runs: the
/// highest architecture not above it, as the driver picks.
pub fn pick(entries: Vec<PtxEntry>, cc: u32) -> Option<PtxEntry> {
    entries
        .into_iter()
        .filter(|e| e.arch <= cc)
        .max_by_key(|e| e.arch)
}

const ZSTD: u64 = 0x8000;
const LZ4: u64 = 0x2000;

/// Decompresses an entry to exactly `size` bytes, never more than [`MAX_PTX_BYTES`].
fn decompress(body: &[u8], flags: u64, size: u64) -> Result<Vec<u8>, CUresult> {
    let bad = CUDA_ERROR_INVALID_IMAGE;
    if size == 0 || size > MAX_PTX_BYTES {
        return Err(bad);
    }
    let size = size as usize;
    if flags & ZSTD != 0 {
        use std::io::Read as _;
        let decoder = ruzstd::decoding::StreamingDecoder::new(body).map_err(|_| bad)?;
        let mut out = Vec::new();
        // one byte more than declared shows a lying header (a bomb) without reading it all
        decoder
            .take(size as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|_| bad)?;
        (out.len() == size).then_some(out).ok_or(bad)
    } else {
        let mut out = vec![0u8; size];
        let n = lz4_flex::block::decompress_into(body, &mut out).map_err(|_| bad)?;
        (n == size).then_some(out).ok_or(bad)
    }
}

/// The linker's output: the magic, a u32 count, then per PTX a u64 length and the text.
pub fn container(ptx: &[String]) -> Vec<u8> {
    let mut out = CONTAINER_MAGIC.to_vec();
    let total: u64 = 20 + ptx.iter().map(|p| 8 + p.len() as u64).sum::<u64>();
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&(ptx.len() as u32).to_le_bytes());
    for p in ptx {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p.as_bytes());
    }
    out
}

/// The total length a container's header gives (bytes 8..16).
pub fn container_len(head: &[u8]) -> Option<u64> {
    head.get(8..16)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

/// The PTX texts of a container.
pub fn container_ptx(data: &[u8]) -> Result<Vec<String>, CUresult> {
    let bad = CUDA_ERROR_INVALID_IMAGE;
    let n = data
        .get(16..20)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(bad)?;
    let mut at = 20usize;
    let mut out = Vec::new();
    for _ in 0..n {
        let len = data
            .get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .ok_or(bad)? as usize;
        let text = data.get(at + 8..at + 8 + len).ok_or(bad)?;
        out.push(String::from_utf8(text.to_vec()).map_err(|_| bad)?);
        at += 8 + len;
    }
    Ok(out)
}

/// Whether a library given to the linker is the CUDA device runtime (`libcudadevrt.a`: an ar
/// archive whose member is `cuda_device_runtime.o`).
pub fn is_device_runtime(data: &[u8]) -> bool {
    data.starts_with(b"!<arch>\n")
        && data
            .windows(b"cuda_device_runtime".len())
            .take(4096)
            .any(|w| w == b"cuda_device_runtime")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_images_by_their_first_bytes() {
        assert_eq!(classify(b"\x7fELF\x02"), Kind::Elf);
        assert_eq!(classify(&[0x50, 0xED, 0x55, 0xBA]), Kind::Fatbin);
        assert_eq!(classify(&[0xB1, 0x43, 0x62, 0x46]), Kind::Wrapper);
        assert_eq!(classify(b"PTXVMLNK"), Kind::Container);
        assert_eq!(classify(b".version 8.0"), Kind::Text);
    }

    #[test]
    fn a_container_round_trips() {
        let c = container(&["a".to_string(), "bc".to_string()]);
        assert_eq!(container_len(&c), Some(c.len() as u64));
        assert_eq!(container_ptx(&c).unwrap(), vec!["a", "bc"]);
    }

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fatbin/");

    fn file(name: &str) -> Vec<u8> {
        std::fs::read(format!("{DIR}{name}")).unwrap()
    }

    #[test]
    fn compressed_entries_decompress_to_the_uncompressed_text() {
        let plain = fatbin_ptx(&file("plain.fatbin")).unwrap();
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].arch, 80);
        assert!(plain[0].text.contains(".visible .entry k("));
        assert!(
            plain[0].text.trim_end().ends_with('}'),
            "{:?}",
            plain[0].text
        );
        for name in ["zstd.fatbin", "lz4.fatbin"] {
            assert_eq!(fatbin_ptx(&file(name)).unwrap(), plain, "{name}");
        }
    }

    #[test]
    fn the_highest_ptx_not_above_the_device_is_picked() {
        let archs = |cc| pick(fatbin_ptx(&file("multi.fatbin")).unwrap(), cc).map(|e| e.arch);
        assert_eq!(fatbin_ptx(&file("multi.fatbin")).unwrap().len(), 3);
        assert_eq!(archs(75), Some(75));
        assert_eq!(archs(80), Some(80));
        assert_eq!(archs(86), Some(80));
        assert_eq!(archs(90), Some(90));
        assert_eq!(archs(120), Some(90));
        assert_eq!(archs(70), None);
    }

    #[test]
    fn sass_only_fatbins_have_no_ptx() {
        assert_eq!(fatbin_ptx(&file("sass.fatbin")).unwrap(), vec![]);
    }

    /// Hostile fatbins: every one is `CUDA_ERROR_INVALID_IMAGE`, none panics or allocates
    /// more than the declared (bounded) size.
    #[test]
    fn hostile_fatbins_are_invalid_images() {
        let set = |mut d: Vec<u8>, at: usize, v: &[u8]| {
            d[at..at + v.len()].copy_from_slice(v);
            d
        };
        let z = file("zstd.fatbin");
        let l = file("lz4.fatbin");
        let p = file("plain.fatbin");
        // the entry header starts at 16: header size +4, padded size +8, compressed size +16,
        // decompressed size +56
        let real = u64::from_le_bytes(z[72..80].try_into().unwrap());
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("empty", vec![]),
            ("magic only", p[..4].to_vec()),
            ("header only", p[..16].to_vec()),
            ("truncated entry header", p[..40].to_vec()),
            ("truncated payload", p[..p.len() - 50].to_vec()),
            (
                "fatbin size past the end",
                set(p.clone(), 8, &u64::MAX.to_le_bytes()),
            ),
            ("header size 0", set(p.clone(), 6, &[0, 0])),
            ("entry header size 0", set(p.clone(), 20, &[0; 4])),
            ("entry header size huge", set(p.clone(), 20, &[0xff; 4])),
            (
                "padded size huge",
                set(p.clone(), 24, &u64::MAX.to_le_bytes()),
            ),
            (
                "padded size past the fatbin",
                set(p.clone(), 24, &4096u64.to_le_bytes()),
            ),
            (
                "compressed size past the payload",
                set(z.clone(), 32, &[0xff, 0xff, 0, 0]),
            ),
            ("zstd: decompressed size 0", set(z.clone(), 72, &[0; 8])),
            (
                "zstd: declared smaller (a bomb)",
                set(z.clone(), 72, &(real - 1).to_le_bytes()),
            ),
            (
                "zstd: declared larger",
                set(z.clone(), 72, &(real + 1).to_le_bytes()),
            ),
            (
                "zstd: declared 1 TiB",
                set(z.clone(), 72, &(1u64 << 40).to_le_bytes()),
            ),
            ("zstd: corrupt frame", set(z.clone(), 96, &[0; 8])),
            (
                "lz4: declared smaller",
                set(l.clone(), 72, &(real - 1).to_le_bytes()),
            ),
            (
                "lz4: declared larger",
                set(l.clone(), 72, &(real + 1).to_le_bytes()),
            ),
            (
                "lz4: declared 1 TiB",
                set(l.clone(), 72, &(1u64 << 40).to_le_bytes()),
            ),
            ("lz4: corrupt block", set(l.clone(), 100, &[0xff; 16])),
            ("not UTF-8", set(p.clone(), 100, &[0xff, 0xfe])),
        ];
        for (what, data) in cases {
            assert_eq!(fatbin_ptx(&data), Err(CUDA_ERROR_INVALID_IMAGE), "{what}");
        }
        // every prefix of each real fatbin is refused or parsed, never a panic
        for f in [&z, &l, &p] {
            for n in 0..f.len() {
                let _ = fatbin_ptx(&f[..n]);
            }
        }
    }
}
