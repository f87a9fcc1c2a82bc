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
        copy_in(&self.alloc, 0, self.len, data, "a buffer")
    }
    /// Copies the contents into `out`, an existing slice whose length must equal the buffer's
    /// (like `cuMemcpyDtoH` into memory the caller already has; [`DeviceBuffer::to_vec`]
    /// allocates a new vector instead).
    pub fn copy_to(&self, out: &mut [T]) -> Result<(), Error> {
        copy_out(&self.alloc, 0, self.len, out, "a buffer")
    }
    /// A view of the elements `range` (`2..6`, `4..`, `..`): a sub-buffer at an offset that
    /// reads and writes only its own elements on the host and can be passed to a kernel with
    /// [`Arg::view`](crate::Arg::view). An out-of-range or reversed range is an error.
    ///
    /// **Bounds in kernels.** A kernel given a view gets the address of its first element, a
    /// pointer into the middle of the parent allocation, exactly as CUDA code passes
    /// `ptr + offset`: its accesses are checked against the *parent* buffer's bounds, not the
    /// view's. An access past the view but inside the parent succeeds (and is visible in the
    /// parent); one past the parent faults with an out-of-bounds report naming the parent
    /// buffer. Host-side reads and writes through the view are checked against the view.
    pub fn view(
        &self,
        range: impl std::ops::RangeBounds<usize>,
    ) -> Result<BufferView<'_, T>, Error> {
        let (start, len) = sub_range(range, self.len)?;
        Ok(BufferView {
            buf: self,
            start,
            len,
        })
    }
}

/// A range of elements of a [`DeviceBuffer`], from [`DeviceBuffer::view`].
#[derive(Clone, Copy)]
pub struct BufferView<'a, T: Element> {
    buf: &'a DeviceBuffer<T>,
    start: usize,
    len: usize,
}

impl<'a, T: Element> BufferView<'a, T> {
    /// The device address of the view's first element (the parent's address plus
    /// `offset() * size_of::<T>()`).
    pub fn addr(&self) -> u64 {
        self.buf.addr() + (self.start * T::SIZE) as u64
    }
    /// The index in the parent buffer of the view's first element.
    pub fn offset(&self) -> usize {
        self.start
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The buffer the view is part of.
    pub fn parent(&self) -> &'a DeviceBuffer<T> {
        self.buf
    }
    /// A view of the elements `range` of this view (indices relative to the view).
    pub fn view(
        &self,
        range: impl std::ops::RangeBounds<usize>,
    ) -> Result<BufferView<'a, T>, Error> {
        let (start, len) = sub_range(range, self.len)?;
        Ok(BufferView {
            buf: self.buf,
            start: self.start + start,
            len,
        })
    }
    /// Copies the view's elements back to the host.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = vec![T::default(); self.len];
        // the lengths agree: cannot fail
        let _ = self.copy_to(&mut out);
        out
    }
    /// Copies `data` into the view (its length must equal the view's).
    pub fn copy_from(&self, data: &[T]) -> Result<(), Error> {
        copy_in(&self.buf.alloc, self.start, self.len, data, "a view")
    }
    /// Copies the view's elements into `out` (its length must equal the view's).
    pub fn copy_to(&self, out: &mut [T]) -> Result<(), Error> {
        copy_out(&self.buf.alloc, self.start, self.len, out, "a view")
    }
}

/// `(start, len)` of `range` within `0..len`.
fn sub_range(
    range: impl std::ops::RangeBounds<usize>,
    len: usize,
) -> Result<(usize, usize), Error> {
    use std::ops::Bound;
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e - s)),
        _ => Err(Error::Usage(format!(
            "view {:?}..{:?} is outside a buffer of {len} elements",
            range.start_bound(),
            range.end_bound()
        ))),
    }
}

/// Copies `data` into the `len` elements of `alloc` from element `start`.
fn copy_in<T: Element>(
    alloc: &Allocation,
    start: usize,
    len: usize,
    data: &[T],
    what: &str,
) -> Result<(), Error> {
    if data.len() != len {
        return Err(Error::Usage(format!(
            "copy of {} elements into {what} of {len}",
            data.len()
        )));
    }
    let mut bytes = Vec::with_capacity(COPY_CHUNK.min(len) * T::SIZE);
    for (k, part) in data.chunks(COPY_CHUNK).enumerate() {
        bytes.clear();
        for x in part {
            x.write_le(&mut bytes);
        }
        alloc.write_bytes(((start + k * COPY_CHUNK) * T::SIZE) as u64, &bytes);
    }
    Ok(())
}

/// Copies the `len` elements of `alloc` from element `start` into `out`.
fn copy_out<T: Element>(
    alloc: &Allocation,
    start: usize,
    len: usize,
    out: &mut [T],
    what: &str,
) -> Result<(), Error> {
    if out.len() != len {
        return Err(Error::Usage(format!(
            "copy of {what} of {len} elements into a slice of {}",
            out.len()
        )));
    }
    for (k, part) in out.chunks_mut(COPY_CHUNK).enumerate() {
        let bytes = alloc.read_bytes(
            ((start + k * COPY_CHUNK) * T::SIZE) as u64,
            (part.len() * T::SIZE) as u64,
        );
        for (x, b) in part.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *x = T::read_le(b);
        }
    }
    Ok(())
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

    /// The size of the device heap that kernels' `malloc` draws from (8 MiB unless set, as
    /// CUDA's `cudaLimitMallocHeapSize`).
    pub fn heap_size(&self) -> u64 {
        self.mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .heap_size()
    }

    /// Sets the size of the device heap. Refused once a kernel that calls `malloc` or `free`
    /// has been launched on this device (the heap then exists), as CUDA refuses it.
    pub fn set_heap_size(&self, bytes: u64) -> Result<(), Error> {
        self.mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .set_heap_size(bytes)
            .map_err(|e| Error::Usage(e.0))
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
