//! Module images: PTX text, NVIDIA fatbins holding PTX, ptxvm's linker container; cubins and
//! SASS-only fatbins are recognised to be refused.
#![deny(unsafe_code)]

use crate::abi::*;

/// Magic of a fatbin (`0xBA55ED50`, little-endian).
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Magic of the `__fatBinC_Wrapper_t` that points to a fatbin.
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

/// The PTX texts of a fatbin (`data` holds its header and entries). Entries of kind 1 are PTX;
/// compressed ones are decompressed when the format is known.
pub fn fatbin_ptx(data: &[u8]) -> Result<Vec<String>, CUresult> {
    let u16_at = |o: usize| data.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        data.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        data.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let bad = CUDA_ERROR_INVALID_IMAGE;
    let mut out = Vec::new();
    let mut any = false;
    let mut at = 0usize;
    // a fatbin section may hold several fatbins back to back
    while u32_at(at) == Some(FATBIN_MAGIC) {
        let header = u16_at(at + 6).ok_or(bad)? as usize;
        let size = u64_at(at + 8).ok_or(bad)? as usize;
        let end = (at + header).checked_add(size).ok_or(bad)?;
        let mut e = at + header;
        while e + 64 <= end.min(data.len()) {
            let kind = u16_at(e).ok_or(bad)?;
            let eh = u32_at(e + 4).ok_or(bad)? as usize;
            let padded = u64_at(e + 8).ok_or(bad)? as usize;
            let payload = u32_at(e + 20).ok_or(bad)? as usize;
            let flags = u64_at(e + 48).ok_or(bad)?;
            let uncompressed = u64_at(e + 64).unwrap_or(0) as usize;
            if eh == 0 {
                return Err(bad);
            }
            any = true;
            if kind == 1 {
                let start = e + eh;
                let len = if payload == 0 { padded } else { payload };
                let body = data.get(start..start + len).ok_or(bad)?;
                let text = if flags & 0x2000 != 0 || flags & 0x8000 != 0 {
                    decompress(body, flags, uncompressed)?
                } else {
                    body.to_vec()
                };
                let text = String::from_utf8_lossy(&text);
                out.push(text.trim_end_matches('\0').to_string());
            }
            e = e + eh + padded;
        }
        at = end;
    }
    if !any {
        return Err(bad);
    }
    Ok(out)
}

fn decompress(_body: &[u8], _flags: u64, _size: usize) -> Result<Vec<u8>, CUresult> {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "ptxvm: the fatbin's PTX is compressed, which ptxvm cannot read yet; build with `-Xfatbin -compress-all=false` (nvcc) or `--no-compress`"
    );
    Err(CUDA_ERROR_NOT_SUPPORTED)
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
}
