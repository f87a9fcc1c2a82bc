//! Module images: PTX text, NVIDIA fatbins holding PTX (plain, zstd or LZ4 entries, several
//! fatbins in a row as in a host object's `.nv_fatbin` section), the `__cudaFatBinaryWrapper`
//! magic, ptxvm's linker container, the cubin `ptxvm ptxas` writes (an ELF image holding the
//! PTX, see [`cubin`]); SASS cubins and SASS-only fatbins are recognised, to be refused.
//! libcuda (`crates/cuda`) loads images through this module, and `ptxvm run` runs the PTX of a
//! fatbin or of a host program with one.

/// A fatbin or container whose headers do not hold together, or whose PTX cannot be decoded
/// (bad compression, a size past [`MAX_PTX_BYTES`], not UTF-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidImage;

impl std::fmt::Display for InvalidImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the fatbin's headers or entries are not valid")
    }
}

impl std::error::Error for InvalidImage {}

/// Magic of a fatbin (`0xBA55ED50`, little-endian).
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Magic of the `__fatBinC_Wrapper_t` (`__cudaFatBinaryWrapper`) that points to a fatbin.
pub const WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// Magic of the linker's output.
pub const CONTAINER_MAGIC: &[u8; 8] = b"PTXVMLNK";

/// What an image's first bytes say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An ELF file: a cubin (SASS, or `ptxvm ptxas`'s holding PTX: [`read_elf`]), or a host
    /// object or program (which may embed a fatbin).
    Elf,
    /// A fatbin.
    Fatbin,
    /// The `__fatBinC_Wrapper_t` a host program registers (it points to a fatbin).
    Wrapper,
    /// ptxvm's linker output.
    Container,
    /// Anything else: PTX text, or not an image at all.
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

/// The largest PTX text a fatbin entry may decompress to (a hostile size is refused before
/// anything is allocated).
pub const MAX_PTX_BYTES: u64 = 256 << 20;

/// One PTX entry of a fatbin: the virtual architecture it was generated for (`compute_80` is
/// 80) and its text.
#[derive(Debug, PartialEq, Eq)]
pub struct PtxEntry {
    /// The virtual architecture (`compute_80`: 80).
    pub arch: u32,
    /// The PTX.
    pub text: String,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    b.get(o..o.checked_add(2)?)
        .map(|w| u16::from_le_bytes([w[0], w[1]]))
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    b.get(o..o.checked_add(4)?)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    b.get(o..o.checked_add(8)?)
        .and_then(|w| w.try_into().ok())
        .map(u64::from_le_bytes)
}

/// One entry of a fatbin as its header describes it.
struct Entry {
    /// Where its header starts.
    at: usize,
    /// 1: PTX, 2: ELF (SASS).
    kind: u16,
    /// Its payload (padded).
    payload: std::ops::Range<usize>,
}

/// The entries of the fatbins starting at `at` (several may follow each other, as in a
/// `.nv_fatbin` section), and where the last one ends.
///
/// The layout, as nvcc 13 writes it (little-endian): a 16-byte header (magic `0xBA55ED50`,
/// u16 version, u16 header size, u64 size of the entries), then entries, each a header
/// (u16 kind: 1 PTX, 2 ELF; u32 header size at 4; u64 padded payload size at 8; u32
/// compressed size at 16; u32 architecture at 28; u64 flags at 40, where `0x8000` marks zstd
/// and `0x2000` LZ4 block compression; u64 decompressed size at 56) and its payload.
fn entries(data: &[u8], mut at: usize) -> Result<Vec<Entry>, InvalidImage> {
    let bad = InvalidImage;
    let mut out = Vec::new();
    let mut fatbins = 0;
    while u32_at(data, at) == Some(FATBIN_MAGIC) {
        fatbins += 1;
        let header = u16_at(data, at + 6).ok_or(bad)? as usize;
        let size = u64_at(data, at + 8).ok_or(bad)?;
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
            let kind = u16_at(data, e).ok_or(bad)?;
            let eh = u32_at(data, e + 4).ok_or(bad)? as usize;
            let padded = u64_at(data, e + 8).ok_or(bad)?;
            if eh < 64 || e + eh > end {
                return Err(bad);
            }
            let start = e + eh;
            let next = usize::try_from(padded)
                .ok()
                .and_then(|p| start.checked_add(p))
                .filter(|&n| n <= end)
                .ok_or(bad)?;
            out.push(Entry {
                at: e,
                kind,
                payload: start..next,
            });
            e = next;
        }
        at = end;
    }
    if fatbins == 0 {
        return Err(bad);
    }
    Ok(out)
}

/// One member of a fatbin: PTX (`ptx`) or machine code, and its architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// PTX (else SASS).
    pub ptx: bool,
    /// `compute_XX` of PTX, `sm_XX` of SASS, as the number XX.
    pub arch: u32,
}

/// The members of the fatbin(s) starting at byte `at` of `data`, from their headers only
/// (nothing is decompressed).
pub fn fatbin_members(data: &[u8], at: usize) -> Result<Vec<Member>, InvalidImage> {
    entries(data, at)?
        .iter()
        .map(|e| {
            Ok(Member {
                ptx: e.kind == 1,
                arch: u32_at(data, e.at + 28).ok_or(InvalidImage)?,
            })
        })
        .collect()
}

/// Where the first well-formed fatbin inside `data` (an ELF host object or program, whose
/// `.nv_fatbin` section holds it) starts, searched for at 8-byte alignment.
pub fn embedded_fatbin(data: &[u8]) -> Option<usize> {
    let magic = FATBIN_MAGIC.to_le_bytes();
    (0..data.len().saturating_sub(16))
        .step_by(8)
        .filter(|&o| data[o..o + 4] == magic)
        .find(|&o| entries(data, o).is_ok())
}

/// The PTX entries of a fatbin (`data` holds its header and entries; several fatbins may
/// follow each other, as in a `.nv_fatbin` section). Machine-code entries are skipped, so
/// an empty result means SASS only.
pub fn fatbin_ptx(data: &[u8]) -> Result<Vec<PtxEntry>, InvalidImage> {
    let bad = InvalidImage;
    let mut out = Vec::new();
    for e in entries(data, 0)?.into_iter().filter(|e| e.kind == 1) {
        let compressed = u32_at(data, e.at + 16).ok_or(bad)? as usize;
        let arch = u32_at(data, e.at + 28).ok_or(bad)?;
        let flags = u64_at(data, e.at + 40).ok_or(bad)?;
        let full = u64_at(data, e.at + 56).ok_or(bad)?;
        let body = &data[e.payload];
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
fn decompress(body: &[u8], flags: u64, size: u64) -> Result<Vec<u8>, InvalidImage> {
    let bad = InvalidImage;
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
pub fn container_ptx(data: &[u8]) -> Result<Vec<String>, InvalidImage> {
    let bad = InvalidImage;
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

/// The section of a `ptxvm ptxas` cubin holding the module's PTX text (NUL-terminated).
pub const CUBIN_PTX_SECTION: &[u8] = b".nv.ptxvm.ptx";
/// The section of a `ptxvm ptxas` cubin holding the GPU it was assembled for (`sm_90a`).
pub const CUBIN_TARGET_SECTION: &[u8] = b".nv.ptxvm.target";
/// The largest ELF image read as a module: room for [`MAX_PTX_BYTES`] of PTX and headers.
pub const MAX_ELF_BYTES: u64 = MAX_PTX_BYTES * 2;

/// A cubin as `ptxvm ptxas` writes it: the PTX it was made from and its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cubin {
    /// The GPU it was assembled for (`--gpu-name`): `sm_80`, `sm_90a`, `sm_100f`.
    pub target: String,
    /// The module's PTX.
    pub ptx: String,
}

/// What an ELF image handed over as a module is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElfImage {
    /// A cubin `ptxvm ptxas` wrote.
    Cubin(Cubin),
    /// A cubin of machine code (SASS) only: ptxvm cannot run it.
    Sass,
    /// Not a CUDA image (another machine's ELF: a host object or library).
    Host,
}

/// The cubin `ptxvm ptxas` writes in place of machine code: an ELF64 image for `EM_CUDA`, with
/// OS/ABI and ABI version as ptxas 13 sets them, `e_flags` holding the SM number
/// (`sm << 8 | 0x0600_0004`, the layout of ptxas's flags), the PTX and the target in
/// [`CUBIN_PTX_SECTION`] and [`CUBIN_TARGET_SECTION`]; `relocatable` (`ptxas -c`) makes it
/// `ET_REL` instead of `ET_EXEC`.
pub fn cubin(ptx: &str, target: &str, relocatable: bool) -> Vec<u8> {
    use object::write::elf::{FileHeader, SectionHeader, Writer};
    let mut text = ptx.as_bytes().to_vec();
    text.push(0);
    let mut tgt = target.as_bytes().to_vec();
    tgt.push(0);
    let mut out = Vec::new();
    let mut w = Writer::new(object::Endianness::Little, true, &mut out);
    w.reserve_file_header();
    w.reserve_null_section_index();
    let ptx_name = w.add_section_name(CUBIN_PTX_SECTION);
    w.reserve_section_index();
    let tgt_name = w.add_section_name(CUBIN_TARGET_SECTION);
    w.reserve_section_index();
    w.reserve_shstrtab_section_index();
    let ptx_at = w.reserve(text.len(), 1);
    let tgt_at = w.reserve(tgt.len(), 1);
    w.reserve_shstrtab();
    w.reserve_section_headers();
    let sm = sm_number(target).unwrap_or(0);
    // writing into a Vec cannot fail; the header's fields are all in range
    let _ = w.write_file_header(&FileHeader {
        os_abi: 0x41,
        abi_version: 8,
        e_type: if relocatable {
            object::elf::ET_REL
        } else {
            object::elf::ET_EXEC
        },
        e_machine: object::elf::EM_CUDA,
        e_entry: 0,
        e_flags: 0x0600_0004 | ((sm & 0xff) << 8),
    });
    w.write(&text);
    w.write(&tgt);
    w.write_shstrtab();
    w.write_null_section_header();
    for (name, at, len) in [
        (ptx_name, ptx_at, text.len()),
        (tgt_name, tgt_at, tgt.len()),
    ] {
        w.write_section_header(&SectionHeader {
            name: Some(name),
            sh_type: object::elf::SHT_PROGBITS,
            sh_flags: 0,
            sh_addr: 0,
            sh_offset: at as u64,
            sh_size: len as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    w.write_shstrtab_section_header();
    out
}

/// The length of the ELF64 image whose first 64 bytes are `head`: the end of its section
/// header table or of its program header table, whichever is later (what libcuda reads of an
/// image given by address only). `None` when `head` is not a little-endian ELF64 header or the
/// length passes [`MAX_ELF_BYTES`].
pub fn elf_len(head: &[u8]) -> Option<u64> {
    use object::read::elf::FileHeader as _;
    let h = object::elf::FileHeader64::<object::LittleEndian>::parse(head).ok()?;
    let e = object::LittleEndian;
    let table = |off: u64, n: u16, size: u16| off.checked_add(n as u64 * size as u64);
    let sh = table(h.e_shoff.get(e), h.e_shnum.get(e), h.e_shentsize.get(e))?;
    let ph = table(h.e_phoff.get(e), h.e_phnum.get(e), h.e_phentsize.get(e))?;
    let len = sh.max(ph).max(64);
    (len <= MAX_ELF_BYTES).then_some(len)
}

/// Reads an ELF image handed over as a module: `ptxvm ptxas`'s cubin, a SASS cubin, or a host
/// ELF. Headers or sections that do not fit `data` are [`InvalidImage`].
pub fn read_elf(data: &[u8]) -> Result<ElfImage, InvalidImage> {
    use object::read::elf::{FileHeader as _, SectionHeader as _};
    let bad = InvalidImage;
    let h = object::elf::FileHeader64::<object::LittleEndian>::parse(data).map_err(|_| bad)?;
    let e = h.endian().map_err(|_| bad)?;
    if h.e_machine(e) != object::elf::EM_CUDA {
        return Ok(ElfImage::Host);
    }
    let sections = h.sections(e, data).map_err(|_| bad)?;
    let text = |name: &[u8]| -> Result<Option<String>, InvalidImage> {
        let Some((_, s)) = sections.section_by_name(e, name) else {
            return Ok(None);
        };
        let bytes = s.data(e, data).map_err(|_| bad)?;
        let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| bad)
    };
    match (text(CUBIN_PTX_SECTION)?, text(CUBIN_TARGET_SECTION)?) {
        (Some(ptx), Some(target)) => Ok(ElfImage::Cubin(Cubin { target, ptx })),
        (None, None) => Ok(ElfImage::Sass),
        _ => Err(bad),
    }
}

/// The GPU a PTX text's `.target` directive names (`sm_90a`): its first `sm_` entry, read from
/// the text's first 400 lines (where the header is).
pub fn ptx_target(text: &str) -> Option<&str> {
    text.lines().take(400).find_map(|line| {
        let rest = line.trim_start().strip_prefix(".target")?;
        rest.split([',', ' ', '\t'])
            .map(str::trim)
            .find(|t| t.starts_with("sm_"))
    })
}

/// The SM number of a GPU name: `sm_90a` is 90, `sm_100f` 100 (`None` for anything else).
pub fn sm_number(target: &str) -> Option<u32> {
    let digits = target.strip_prefix("sm_")?.trim_end_matches(['a', 'f']);
    digits.parse().ok()
}

/// Whether a cubin assembled for `target` runs on a device of compute capability `cc` (86 for
/// 8.6), by the rule CUDA gives machine code: `sm_XY` runs on X.Z for Z ≥ Y (the same major
/// version), `sm_XYf` on the same family (the same major version, Z ≥ Y), `sm_XYa` on X.Y
/// only.
pub fn cubin_runs_on(target: &str, cc: u32) -> bool {
    let Some(sm) = sm_number(target) else {
        return false;
    };
    if target.ends_with('a') {
        return cc == sm;
    }
    cc / 10 == sm / 10 && cc % 10 >= sm % 10
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

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../cuda/tests/fatbin/");

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

    /// Hostile fatbins: every one is `InvalidImage`, none panics or allocates
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
            assert_eq!(fatbin_ptx(&data), Err(InvalidImage), "{what}");
        }
        // every prefix of each real fatbin is refused or parsed, never a panic
        for f in [&z, &l, &p] {
            for n in 0..f.len() {
                let _ = fatbin_ptx(&f[..n]);
            }
        }
    }

    #[test]
    fn a_cubin_round_trips_and_says_how_long_it_is() {
        let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
        for (target, rel) in [("sm_80", false), ("sm_90a", true), ("sm_100f", false)] {
            let c = cubin(ptx, target, rel);
            assert_eq!(classify(&c[..8]), Kind::Elf);
            assert_eq!(elf_len(&c[..64]), Some(c.len() as u64));
            let want = Cubin {
                target: target.to_string(),
                ptx: ptx.to_string(),
            };
            assert_eq!(read_elf(&c), Ok(ElfImage::Cubin(want)));
            // ET_REL (1) for `-c`, ET_EXEC (2) otherwise; EM_CUDA (190)
            assert_eq!(c[16], if rel { 1 } else { 2 });
            assert_eq!(u16::from_le_bytes([c[18], c[19]]), 190);
            // one byte short: the section table no longer fits
            assert_eq!(read_elf(&c[..c.len() - 1]), Err(InvalidImage));
        }
    }

    #[test]
    fn a_sass_cubin_and_a_host_object_are_told_apart() {
        let sass = file("sass.cubin");
        assert_eq!(
            elf_len(&sass[..64]).map(|n| n <= sass.len() as u64),
            Some(true)
        );
        assert_eq!(read_elf(&sass), Ok(ElfImage::Sass));
        assert_eq!(read_elf(&file("host.o")), Ok(ElfImage::Host));
        assert_eq!(elf_len(b"\x7fELF"), None);
    }

    #[test]
    fn machine_code_runs_on_its_major_version_and_a_variants_on_their_own_gpu() {
        // CUDA's rule for cubins: same major version, minor not lower; `a` only on itself
        assert!(
            cubin_runs_on("sm_80", 80) && cubin_runs_on("sm_80", 86) && cubin_runs_on("sm_80", 89)
        );
        assert!(
            !cubin_runs_on("sm_80", 90)
                && !cubin_runs_on("sm_86", 80)
                && !cubin_runs_on("sm_80", 75)
        );
        assert!(cubin_runs_on("sm_90a", 90) && !cubin_runs_on("sm_100a", 103));
        assert!(cubin_runs_on("sm_100f", 103) && !cubin_runs_on("sm_100f", 120));
        assert!(cubin_runs_on("sm_120", 121) && !cubin_runs_on("compute_80", 80));
        assert_eq!(sm_number("sm_100a"), Some(100));
        assert_eq!(sm_number("sm_x"), None);
    }
}
