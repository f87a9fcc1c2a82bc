//! [`Device`] memory and typed [`DeviceBuffer`]s of host [`Element`]s.

use ptx_interp::mem::{Allocation, GlobalMemory};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use crate::Error;

/// A CPU "device": its global memory.
#[derive(Clone, Default)]
pub struct Device {
    pub(crate) mem: Arc<Mutex<GlobalMemory>>,
    next_label: Arc<Mutex<u64>>,
}

/// Element types of device buffers.
pub trait Element: Copy + Default + 'static {
    /// Size in bytes.
    const SIZE: usize;
    /// The PTX type name for messages.
    const NAME: &'static str;
    /// Little-endian bytes.
    fn write_le(self, out: &mut Vec<u8>);
    /// From little-endian bytes (`SIZE` long).
    fn read_le(b: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty, $n:literal;)*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = $n;
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}

element! {
    u8, ".u8"; i8, ".s8"; u16, ".u16"; i16, ".s16"; u32, ".u32"; i32, ".s32";
    u64, ".u64"; i64, ".s64"; f32, ".f32"; f64, ".f64";
}

/// Typed device memory.
pub struct DeviceBuffer<T: Element> {
    alloc: Arc<Allocation>,
    len: usize,
    device: Device,
    _t: PhantomData<T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.alloc.base
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Copies the contents back to the host.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        let mut start = 0;
        while start < self.len {
            let n = COPY_CHUNK.min(self.len - start);
            let bytes = self
                .alloc
                .read_bytes((start * T::SIZE) as u64, (n * T::SIZE) as u64);
            out.extend(bytes.chunks_exact(T::SIZE).map(T::read_le));
            start += n;
        }
        out
    }
    /// The raw bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.alloc.read_bytes(0, (self.len * T::SIZE) as u64)
    }
    /// Writes the raw bytes `data` at byte `offset` (for filling a buffer piece by piece).
    pub fn write_bytes(&self, offset: u64, data: &[u8]) -> Result<(), Error> {
        let size = (self.len * T::SIZE) as u64;
        if offset
            .checked_add(data.len() as u64)
            .is_none_or(|end| end > size)
        {
            return Err(Error::Usage(format!(
                "write of {} bytes at offset {offset} into a buffer of {size} bytes",
                data.len()
            )));
        }
        self.alloc.write_bytes(offset, data);
        Ok(())
    }
    /// Copies `data` in (its length must equal the buffer's).
    pub fn copy_from(&self, data: &[T]) -> Result<(), Error> {
        if data.len() != self.len {
            return Err(Error::Usage(format!(
                "copy of {} elements into a buffer of {}",
                data.len(),
                self.len
            )));
        }
        let mut bytes = Vec::with_capacity(COPY_CHUNK * T::SIZE);
        for (k, part) in data.chunks(COPY_CHUNK).enumerate() {
            bytes.clear();
            for x in part {
                x.write_le(&mut bytes);
            }
            self.alloc
                .write_bytes((k * COPY_CHUNK * T::SIZE) as u64, &bytes);
        }
        Ok(())
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.device.mem.lock() {
            m.free(self.alloc.base);
        }
    }
}

impl Device {
    /// A new device with empty memory.
    pub fn new() -> Device {
        Device::default()
    }

    fn label(&self) -> String {
        let mut n = self.next_label.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        format!("buffer #{}", *n - 1)
    }

    /// `n` zeroed elements.
    pub fn alloc<T: Element>(&self, n: usize) -> Result<DeviceBuffer<T>, Error> {
        let label = self.label();
        self.alloc_labelled(n, label)
    }

    fn alloc_labelled<T: Element>(
        &self,
        n: usize,
        label: String,
    ) -> Result<DeviceBuffer<T>, Error> {
        let bytes = (n as u64)
            .checked_mul(T::SIZE as u64)
            .ok_or_else(|| Error::Memory(format!("{n} elements overflow the address space")))?;
        let alloc = self
            .mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc(bytes, false, label)
            .map_err(|e| Error::Memory(e.0))?;
        Ok(DeviceBuffer {
            alloc,
            len: n,
            device: self.clone(),
            _t: PhantomData,
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let b = self.alloc::<T>(data.len())?;
        b.copy_from(data)?;
        Ok(b)
    }

    /// `len` zeroed bytes, named `label` in fault messages (fill it with
    /// [`DeviceBuffer::write_bytes`]). Pages are committed on first touch, so a large buffer
    /// costs host memory only for what is written or read of it.
    pub fn alloc_bytes(&self, len: usize, label: &str) -> Result<DeviceBuffer<u8>, Error> {
        self.alloc_labelled::<u8>(len, label.to_string())
    }

    /// A buffer of `len` bytes over memory that already exists at its host address (identity
    /// mode only; `words` from [`ptx_interp::mem::AtomicWords::external`]): host memory the
    /// CUDA driver layer registers, or memory shared with another process. `read_only` makes
    /// kernel stores to it fault.
    pub fn adopt_bytes(
        &self,
        len: usize,
        words: ptx_interp::mem::AtomicWords,
        read_only: bool,
        label: &str,
    ) -> Result<DeviceBuffer<u8>, Error> {
        let alloc = self
            .mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(len as u64, words, read_only, label.to_string())
            .map_err(|e| Error::Memory(e.0))?;
        Ok(DeviceBuffer {
            alloc,
            len,
            device: self.clone(),
            _t: PhantomData,
        })
    }

    /// A buffer of raw bytes (for arguments of any element type, as `ptxvm run` passes them);
    /// `label` names it in fault messages.
    pub fn from_bytes(&self, data: &[u8], label: &str) -> Result<DeviceBuffer<u8>, Error> {
        let b = self.alloc_labelled::<u8>(data.len(), label.to_string())?;
        b.alloc.write_bytes(0, data);
        Ok(b)
    }
}

/// Elements per step of a host copy into or out of a device buffer, so that a copy costs no
/// host memory the size of the buffer.
const COPY_CHUNK: usize = 1 << 14;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_in_and_out_across_chunk_boundaries() {
        let device = Device::new();
        // 40000 elements: more than two 16 Ki chunks and a ragged end
        let data: Vec<u16> = (0..40_000u32).map(|k| (k * 7 + 3) as u16).collect();
        let buf = device.from_slice(&data).unwrap();
        assert_eq!(buf.to_vec(), data);
        let again: Vec<u16> = data.iter().map(|x| x ^ 0xFFFF).collect();
        buf.copy_from(&again).unwrap();
        assert_eq!(buf.to_vec(), again);
        let wide: Vec<f64> = (0..20_000).map(|k| k as f64 * 0.5 - 3.0).collect();
        assert_eq!(device.from_slice(&wide).unwrap().to_vec(), wide);
    }
}
