//! Binary files given where PTX text is wanted: cubins (those of `ptxvm ptxas` hold PTX, read
//! by [`ptxvm_cubin`]) and other ELF files, fatbins, anything
//! else with NUL bytes or mostly non-text bytes near its start. Each gets one error that says
//! what the file is and how to get PTX from it, instead of a diagnostic that quotes its bytes.
//!
//! Only the first bytes and, for fatbins, the entry headers are read (kind and architecture of
//! each member, by `ptxvm::image`, which libcuda loads images with); nothing is decompressed.

use ptxvm::image::{classify, fatbin_members, Kind, Member};

/// ELF `e_machine` of NVIDIA GPU code (a cubin).
const EM_CUDA: u16 = 190;
/// How much of the file's start is looked at for NUL bytes and non-text bytes.
const SAMPLE: usize = 8 << 10;

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    b.get(o..o.checked_add(2)?)
        .map(|w| u16::from_le_bytes([w[0], w[1]]))
}

/// "PTX for compute_75 and compute_80, and SASS for sm_80" (or "nothing").
fn members_text(members: &[Member]) -> String {
    let list = |ptx: bool, prefix: &str| -> Option<String> {
        let mut archs: Vec<u32> = members
            .iter()
            .filter(|m| m.ptx == ptx)
            .map(|m| m.arch)
            .collect();
        archs.sort_unstable();
        archs.dedup();
        let names: Vec<String> = archs.iter().map(|a| format!("{prefix}_{a}")).collect();
        match names.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
        }
    };
    match (list(true, "compute"), list(false, "sm")) {
        (Some(p), Some(s)) => format!("PTX for {p}, and SASS for {s}"),
        (Some(p), None) => format!("PTX for {p}"),
        (None, Some(s)) => format!("only SASS, for {s}"),
        (None, None) => "no members".to_string(),
    }
}

/// What to tell about the fatbin members found in `name`: where the PTX is, or that there is
/// none.
fn fatbin_help(name: &str, members: &[Member]) -> String {
    if members.iter().any(|m| m.ptx) {
        format!(
            "help: extract it with `cuobjdump -xptx all {name}` (one .ptx file per \
             architecture) and give ptxvm one of those files"
        )
    } else {
        "help: SASS cannot run on ptxvm; rebuild with PTX included \
         (`-gencode arch=compute_XX,code=compute_XX`), or compile the kernel with `nvcc -ptx`"
            .to_string()
    }
}

/// The members of the first fatbin inside an ELF file (nvcc's `.nv_fatbin` section of a host
/// object or program).
fn embedded_fatbin(data: &[u8]) -> Option<Vec<Member>> {
    let at = ptxvm::image::embedded_fatbin(data)?;
    fatbin_members(data, at).ok()
}

fn machine_name(m: u16) -> String {
    match m {
        3 => "x86".into(),
        40 => "ARM".into(),
        62 => "x86-64".into(),
        183 => "AArch64".into(),
        21 => "PowerPC64".into(),
        243 => "RISC-V".into(),
        other => format!("machine {other}"),
    }
}

/// The PTX a fatbin holds, as [`fatbin_ptx`] finds it.
pub struct FatbinPtx {
    /// The text of the entry used.
    pub text: String,
    /// Its architecture (`compute_90`: 90).
    pub arch: u32,
    /// How many PTX entries the fatbin has.
    pub entries: usize,
}

/// The PTX inside `bytes` when they are a fatbin or an ELF host object or program with a
/// fatbin holding PTX: the entry of the newest architecture (as a GPU of the newest
/// generation would JIT it). `None` when there is no fatbin with PTX; `Some(Err)` when there
/// is one whose PTX cannot be decoded.
pub fn fatbin_ptx(bytes: &[u8]) -> Option<Result<FatbinPtx, String>> {
    let at = match classify(bytes) {
        Kind::Fatbin => 0,
        Kind::Elf if u16_at(bytes, 18) != Some(EM_CUDA) => ptxvm::image::embedded_fatbin(bytes)?,
        _ => return None,
    };
    let members = fatbin_members(bytes, at).ok()?;
    if !members.iter().any(|m| m.ptx) {
        return None;
    }
    Some(match ptxvm::image::fatbin_ptx(&bytes[at..]) {
        Ok(entries) => {
            let n = entries.len();
            match ptxvm::image::pick(entries, u32::MAX) {
                Some(e) => Ok(FatbinPtx {
                    text: e.text,
                    arch: e.arch,
                    entries: n,
                }),
                None => Err("its fatbin holds no PTX".into()),
            }
        }
        Err(e) => Err(e.to_string()),
    })
}

/// The cubin `ptxvm ptxas` wrote, when `bytes` are one.
pub fn ptxvm_cubin(bytes: &[u8]) -> Option<ptxvm::image::Cubin> {
    if classify(bytes) != Kind::Elf {
        return None;
    }
    match ptxvm::image::read_elf(bytes) {
        Ok(ptxvm::image::ElfImage::Cubin(c)) => Some(c),
        _ => None,
    }
}

/// The error (several lines, without the leading `error: `) for `bytes` read from the file
/// shown as `name`, when they are not PTX text; `None` for text (which may still hold a stray
/// invalid byte: the E0020 diagnostic points at it).
pub fn refuse(name: &str, bytes: &[u8]) -> Option<String> {
    match classify(bytes) {
        Kind::Elf => return Some(elf(name, bytes)),
        Kind::Fatbin => {
            let members = fatbin_members(bytes, 0).unwrap_or_default();
            return Some(format!(
                "{name} is a CUDA fatbin (a container of compiled GPU code) holding {}, not PTX text\n{}",
                members_text(&members),
                fatbin_help(name, &members)
            ));
        }
        Kind::Wrapper => {
            return Some(format!(
                "{name} is a CUDA fatbin wrapper (`__fatBinC_Wrapper_t`, which points at a fatbin in a \
                 running program's memory), not PTX text\n\
                 help: run the whole program with `ptxvm exec -- ./program`, or extract its PTX \
                 with `cuobjdump -ptx ./program`"
            ));
        }
        _ => {}
    }
    let sample = &bytes[..bytes.len().min(SAMPLE)];
    if sample.starts_with(&[0xff, 0xfe]) || sample.starts_with(&[0xfe, 0xff]) {
        return Some(format!(
            "{name} is UTF-16 text, not the UTF-8 (or ASCII) text ptxvm reads\n\
             help: convert it, e.g. `iconv -f UTF-16 -t UTF-8 {name} > kernel.ptx`"
        ));
    }
    let not_text = |nul: Option<usize>| {
        let why = match nul {
            Some(at) => format!("a NUL byte at offset {at}"),
            None => "mostly bytes that are not text".to_string(),
        };
        Some(format!(
            "{name} is a binary file ({why}), not PTX text\n\
             help: ptxvm reads PTX, the text that `nvcc -ptx` writes (it starts with `.version`); \
             to run a whole CUDA program, use `ptxvm exec -- ./program`"
        ))
    };
    if let Some(at) = sample.iter().position(|&b| b == 0) {
        return not_text(Some(at));
    }
    // bytes of invalid UTF-8 sequences and control characters other than whitespace; a
    // sequence cut by the end of the sample is not counted
    let mut odd = 0usize;
    let mut rest = sample;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                odd += count_controls(s);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                odd += count_controls(std::str::from_utf8(good).unwrap_or(""));
                match e.error_len() {
                    Some(n) => {
                        odd += n;
                        rest = &bad[n..];
                    }
                    None => break,
                }
            }
        }
    }
    // a few stray bytes (a Latin-1 comment) are text with a mistake, shown by E0020
    if odd * 10 > sample.len() {
        return not_text(None);
    }
    None
}

fn count_controls(s: &str) -> usize {
    s.bytes()
        .filter(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)) || b == 0x7f)
        .count()
}

/// An ELF file: a cubin (SASS for one GPU) or a host object, program or library.
fn elf(name: &str, bytes: &[u8]) -> String {
    // e_ident[EI_DATA] 1: little-endian (every CUDA host and cubin); e_type at 16, e_machine at 18
    let le = bytes.get(5) == Some(&1);
    let machine = if le { u16_at(bytes, 18) } else { None };
    let ty = if le { u16_at(bytes, 16) } else { None };
    if machine == Some(EM_CUDA) {
        return format!(
            "{name} is a CUDA cubin (an ELF file of SASS, the machine code of one GPU), not PTX text\n\
             help: SASS cannot run on ptxvm; compile the kernel to PTX instead: `nvcc -ptx kernel.cu` \
             (clang: `--cuda-device-only -S`), or run the whole program with `ptxvm exec -- ./program`"
        );
    }
    let what = match ty {
        Some(1) => "a host object file",
        Some(2) => "a host program",
        Some(3) => "a host program or shared library",
        _ => "an ELF file",
    };
    let arch = machine.map_or(String::new(), |m| format!(" ({})", machine_name(m)));
    let mut text = format!("{name} is {what}{arch}, not PTX text");
    let members = embedded_fatbin(bytes);
    if let Some(m) = &members {
        text += &format!("; its CUDA fatbin holds {}", members_text(m));
    }
    text += "\nhelp: ";
    text += match ty {
        Some(1) => {
            "compile the kernel to PTX with `nvcc -ptx kernel.cu` (clang: `--cuda-device-only -S`), \
             or link the program and run it with `ptxvm exec -- ./program`"
        }
        _ => "run a whole CUDA program with `ptxvm exec -- ./program`",
    };
    if let Some(m) = members.filter(|m| m.iter().any(|x| x.ptx)) {
        text += "\n";
        text += &fatbin_help(name, &m);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fatbin of `members` (`(kind, arch, payload length)`), laid out as nvcc writes it.
    fn fatbin(members: &[(u16, u32, usize)]) -> Vec<u8> {
        let mut entries = Vec::new();
        for &(kind, arch, len) in members {
            let mut h = vec![0u8; 64];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[4..8].copy_from_slice(&64u32.to_le_bytes());
            h[8..16].copy_from_slice(&(len as u64).to_le_bytes());
            h[28..32].copy_from_slice(&arch.to_le_bytes());
            entries.extend(h);
            entries.extend(std::iter::repeat_n(b'x', len));
        }
        let mut f = ptxvm::image::FATBIN_MAGIC.to_le_bytes().to_vec();
        f.extend(1u16.to_le_bytes());
        f.extend(16u16.to_le_bytes());
        f.extend((entries.len() as u64).to_le_bytes());
        f.extend(entries);
        f
    }

    #[test]
    fn fatbin_members_are_listed_by_kind_and_architecture() {
        let f = fatbin(&[(1, 90, 24), (2, 80, 40), (1, 75, 8), (1, 80, 16)]);
        let m = |ptx, arch| Member { ptx, arch };
        assert_eq!(
            fatbin_members(&f, 0),
            Ok(vec![m(true, 90), m(false, 80), m(true, 75), m(true, 80)])
        );
        assert_eq!(
            members_text(&fatbin_members(&f, 0).unwrap()),
            "PTX for compute_75, compute_80 and compute_90, and SASS for sm_80"
        );
        assert_eq!(
            members_text(&[m(false, 80), m(false, 90)]),
            "only SASS, for sm_80 and sm_90"
        );
    }

    #[test]
    fn broken_fatbin_headers_are_no_members() {
        let mut f = fatbin(&[(1, 80, 16)]);
        // the entries claim more bytes than the file has
        f[8] = 0xff;
        assert!(fatbin_members(&f, 0).is_err());
        // an entry header too small
        let mut g = fatbin(&[(1, 80, 16)]);
        g[16 + 4] = 8;
        assert!(fatbin_members(&g, 0).is_err());
        // still refused as a fatbin, with no members named
        assert!(refuse("x", &f).unwrap().starts_with("x is a CUDA fatbin"));
    }

    #[test]
    fn text_with_a_stray_byte_is_text() {
        let latin1 = b".version 8.0 // caf\xe9\n.target sm_80\n.address_size 64\n";
        assert_eq!(refuse("k.ptx", latin1), None);
        assert_eq!(refuse("k.ptx", b".version 8.0\n"), None);
        assert_eq!(refuse("k.ptx", b""), None);
        // a multi-byte character cut by the end of the sample is not counted
        let mut long = vec![b' '; SAMPLE - 1];
        long.extend("é".as_bytes());
        assert_eq!(refuse("k.ptx", &long), None);
        let noise: Vec<u8> = (0..400u32).map(|i| (i * 37 % 255 + 1) as u8).collect();
        assert!(refuse("r", &noise)
            .unwrap()
            .starts_with("r is a binary file (mostly bytes that are not text)"));
    }
}
