//! Tensor maps: ptxvm's encoding of the 128-byte opaque `CUtensorMap` object that
//! `cp.async.bulk.tensor` and its relatives read, and the element walk of a tile-mode box.
//!
//! The encoding (little-endian, naturally aligned so that a C struct of these fields has this
//! layout; documented in docs/async.md):
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic [`MAGIC`] |
//! | 4 | version (1) |
//! | 5 | data type (`CUtensorMapDataType` value, 0..=12) |
//! | 6 | rank (1..=5) |
//! | 7 | mode: 0 tile, 1 im2col |
//! | 8..16 | global address |
//! | 16..36 | global dims, 5 × u32 (unused dims 1) |
//! | 36..40 | zero |
//! | 40..72 | global strides of dims 1..=4 in bytes, 4 × u64 (unused 0) |
//! | 72..82 | box dims, 5 × u16 (unused 1) |
//! | 82..87 | element strides, 5 × u8 (unused 1) |
//! | 87 | interleave (0 none, 1 16B, 2 32B) |
//! | 88 | swizzle (0 none, 1 32B, 2 64B, 3 128B) |
//! | 89 | L2 promotion (0..=3, no effect) |
//! | 90 | out-of-bounds fill (0 zeros, 1 NaN-request-zero-FMA) |
//! | 91..94 | im2col lower corner, 3 × i8 |
//! | 94..97 | im2col upper corner, 3 × i8 |
//! | 97 | swizzle atomicity (0 16B; the sm_100 32B/64B atoms are refused by the copies) |
//! | 98..100 | im2col channels per pixel, u16 |
//! | 100..102 | im2col pixels per column, u16 |
//! | 102..128 | zero |

/// The first four bytes of a tensor map (`"TMAP"` read as a little-endian u32).
pub const MAGIC: u32 = u32::from_le_bytes(*b"TMAP");

/// A decoded tensor map.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TensorMap {
    /// `CUtensorMapDataType` value.
    pub dtype: u8,
    /// Dimensions, 1..=5.
    pub rank: u8,
    /// im2col mode (else tile).
    pub im2col: bool,
    /// Global address of element 0.
    pub addr: u64,
    /// Size of each dimension in elements.
    pub dims: [u32; 5],
    /// Stride of dimensions 1.. in bytes (`strides[0]` is dimension 1's).
    pub strides: [u64; 4],
    /// Box size per dimension in elements (tile mode).
    pub boxd: [u16; 5],
    /// Traversal stride per dimension.
    pub estrides: [u8; 5],
    /// Interleave: 0 none, 1 16 bytes, 2 32 bytes.
    pub interleave: u8,
    /// Swizzle: 0 none, 1 32 bytes, 2 64 bytes, 3 128 bytes.
    pub swizzle: u8,
    /// L2 promotion (no effect).
    pub l2promo: u8,
    /// Out-of-bounds fill: 0 zeros, 1 NaN (request zero FMA).
    pub oob_nan: bool,
    /// im2col lower corner.
    pub lower: [i8; 3],
    /// im2col upper corner.
    pub upper: [i8; 3],
    /// im2col channels per pixel.
    pub channels: u16,
    /// im2col pixels per column.
    pub pixels: u16,
    /// Swizzle atomicity (`tensormap.replace.swizzle_atomicity`): 0 16 bytes, 1 32 bytes,
    /// 2 32 bytes with the 8-byte flip, 3 64 bytes. Copies execute 0 only.
    pub atomicity: u8,
}

/// Size in bytes of an element of `CUtensorMapDataType` `t` (`None`: not a data type).
pub fn dtype_size(t: u8) -> Option<u32> {
    // UINT8, UINT16, UINT32, INT32, UINT64, INT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16,
    // FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ
    const SIZES: [u32; 13] = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4];
    SIZES.get(t as usize).copied()
}

/// Whether data type `t` is a floating-point type (the NaN fill applies).
pub fn dtype_is_float(t: u8) -> bool {
    matches!(t, 6..=12)
}

/// The fill of an out-of-bounds element: zeros, or the type's all-ones-mantissa NaN.
pub fn oob_fill(t: u8, nan: bool) -> u64 {
    if !nan || !dtype_is_float(t) {
        return 0;
    }
    match t {
        6 => 0x7FFF,
        9 => 0x7FFF,
        8 => 0x7FFF_FFFF_FFFF_FFFF,
        _ => 0x7FFF_FFFF,
    }
}

/// How a tiled tensor map lays out its box (the options of `cuTensorMapEncodeTiled`, as the
/// driver's enum values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// `CUtensorMapInterleave`: 0 none, 1 16B, 2 32B.
    pub interleave: u32,
    /// `CUtensorMapSwizzle`: 0 none, 1 32B, 2 64B, 3 128B.
    pub swizzle: u32,
    /// `CUtensorMapL2promotion`: 0..=3 (no effect).
    pub l2promo: u32,
    /// `CUtensorMapFloatOOBfill`: 0 zeros, 1 NaN (request zero FMA).
    pub oob_fill: u32,
}

impl TensorMap {
    /// A tile-mode map, checked as `cuTensorMapEncodeTiled` checks its arguments: data type
    /// `dtype` (`CUtensorMapDataType`), `dims.len()` dimensions (1..=5) at `addr`, the byte
    /// strides of dimensions 1.. (`strides.len() == dims.len() - 1`), the box and the element
    /// strides (one per dimension).
    pub fn tiled(
        dtype: u32,
        addr: u64,
        dims: &[u64],
        strides: &[u64],
        boxd: &[u32],
        estrides: &[u32],
        layout: Layout,
    ) -> Result<TensorMap, String> {
        let r = dims.len();
        let mut m = Self::common(dtype, addr, dims, strides, estrides, layout)?;
        if boxd.len() != r {
            return Err(format!("{} box dims for rank {r}", boxd.len()));
        }
        for (k, &b) in boxd.iter().enumerate() {
            if !(1..=256).contains(&b) {
                return Err(format!("box dim {k} ({b}) out of 1..=256"));
            }
            m.boxd[k] = b as u16;
        }
        m.check()?;
        Ok(m)
    }

    /// An im2col-mode map, checked as `cuTensorMapEncodeIm2col` checks its arguments (rank
    /// 3..=5; the corners give the bounding box of the spatial dimensions 1..rank-1).
    #[allow(clippy::too_many_arguments)]
    pub fn im2col(
        dtype: u32,
        addr: u64,
        dims: &[u64],
        strides: &[u64],
        lower: &[i32],
        upper: &[i32],
        channels: u32,
        pixels: u32,
        estrides: &[u32],
        layout: Layout,
    ) -> Result<TensorMap, String> {
        let r = dims.len();
        let mut m = Self::common(dtype, addr, dims, strides, estrides, layout)?;
        if !(3..=5).contains(&r) || lower.len() != r - 2 || upper.len() != r - 2 {
            return Err(format!(
                "im2col needs rank 3..=5 and rank-2 corners, rank {r}"
            ));
        }
        m.im2col = true;
        for k in 0..r - 2 {
            m.lower[k] = i8::try_from(lower[k]).map_err(|_| "corner out of range")?;
            m.upper[k] = i8::try_from(upper[k]).map_err(|_| "corner out of range")?;
        }
        m.channels = u16::try_from(channels).map_err(|_| "channels per pixel out of range")?;
        m.pixels = u16::try_from(pixels).map_err(|_| "pixels per column out of range")?;
        m.check()?;
        Ok(m)
    }

    fn common(
        dtype: u32,
        addr: u64,
        dims: &[u64],
        strides: &[u64],
        estrides: &[u32],
        layout: Layout,
    ) -> Result<TensorMap, String> {
        let r = dims.len();
        if !(1..=5).contains(&r) {
            return Err(format!("rank {r} out of 1..=5"));
        }
        if strides.len() + 1 != r || estrides.len() != r {
            return Err("the strides do not match the rank".into());
        }
        let small = |v: u32, max: u32, what: &str| {
            if v > max {
                Err(format!("{what} {v} out of range"))
            } else {
                Ok(v as u8)
            }
        };
        let mut m = TensorMap {
            dtype: small(dtype, 12, "data type")?,
            rank: r as u8,
            addr,
            dims: [1; 5],
            boxd: [1; 5],
            estrides: [1; 5],
            interleave: small(layout.interleave, 2, "interleave")?,
            swizzle: small(layout.swizzle, 3, "swizzle")?,
            l2promo: small(layout.l2promo, 3, "L2 promotion")?,
            oob_nan: small(layout.oob_fill, 1, "out-of-bounds fill")? == 1,
            ..Default::default()
        };
        for k in 0..r {
            // (the driver allows 2^32; this encoding holds up to 2^32 - 1)
            m.dims[k] = u32::try_from(dims[k])
                .ok()
                .filter(|&d| d > 0)
                .ok_or_else(|| format!("global dim {k} ({}) out of 1..2^32", dims[k]))?;
            if !(1..=8).contains(&estrides[k]) {
                return Err(format!("element stride {k} ({}) out of 1..=8", estrides[k]));
            }
            m.estrides[k] = estrides[k] as u8;
        }
        m.strides[..r - 1].copy_from_slice(strides);
        Ok(m)
    }

    /// The 128 bytes of this map.
    pub fn encode(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4] = 1;
        b[5] = self.dtype;
        b[6] = self.rank;
        b[7] = self.im2col as u8;
        b[8..16].copy_from_slice(&self.addr.to_le_bytes());
        for k in 0..5 {
            b[16 + 4 * k..20 + 4 * k].copy_from_slice(&self.dims[k].to_le_bytes());
            b[72 + 2 * k..74 + 2 * k].copy_from_slice(&self.boxd[k].to_le_bytes());
            b[82 + k] = self.estrides[k];
        }
        for k in 0..4 {
            b[40 + 8 * k..48 + 8 * k].copy_from_slice(&self.strides[k].to_le_bytes());
        }
        b[87] = self.interleave;
        b[88] = self.swizzle;
        b[89] = self.l2promo;
        b[90] = self.oob_nan as u8;
        for k in 0..3 {
            b[91 + k] = self.lower[k] as u8;
            b[94 + k] = self.upper[k] as u8;
        }
        b[97] = self.atomicity;
        b[98..100].copy_from_slice(&self.channels.to_le_bytes());
        b[100..102].copy_from_slice(&self.pixels.to_le_bytes());
        b
    }

    /// Decodes and checks 128 bytes; the error says what is wrong.
    pub fn decode(b: &[u8; 128]) -> Result<TensorMap, String> {
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        if u32_at(0) != MAGIC || b[4] != 1 {
            return Err("it is not a tensor map (no ptxvm tensor-map header: build it with cuTensorMapEncodeTiled/Im2col or ptxvm::TensorMap)".into());
        }
        let mut m = TensorMap {
            dtype: b[5],
            rank: b[6],
            im2col: b[7] == 1,
            addr: u64_at(8),
            interleave: b[87],
            swizzle: b[88],
            l2promo: b[89],
            oob_nan: b[90] == 1,
            channels: u16_at(98),
            pixels: u16_at(100),
            atomicity: b[97],
            ..Default::default()
        };
        for k in 0..5 {
            m.dims[k] = u32_at(16 + 4 * k);
            m.boxd[k] = u16_at(72 + 2 * k);
            m.estrides[k] = b[82 + k];
        }
        for k in 0..4 {
            m.strides[k] = u64_at(40 + 8 * k);
        }
        for k in 0..3 {
            m.lower[k] = b[91 + k] as i8;
            m.upper[k] = b[94 + k] as i8;
        }
        if b[7] > 1 || b[90] > 1 || b[36..40] != [0; 4] || b[102..] != [0; 26] {
            return Err("its reserved bytes are not valid".into());
        }
        // the fields of the dimensions past the rank are not read (a map built field by field
        // with `tensormap.replace` in zeroed memory leaves them 0)
        if (1..=5).contains(&m.rank) {
            for k in m.rank as usize..5 {
                (m.dims[k], m.boxd[k], m.estrides[k]) = (1, 1, 1);
                if k > 0 {
                    m.strides[k - 1] = 0;
                }
            }
        }
        m.check()?;
        Ok(m)
    }

    /// Checks the fields as `cuTensorMapEncodeTiled`/`Im2col` do.
    pub fn check(&self) -> Result<(), String> {
        let es = dtype_size(self.dtype).ok_or("data type out of range")?;
        let r = self.rank as usize;
        if !(1..=5).contains(&r) || (self.im2col && r < 3) {
            return Err(format!("rank {r} out of range"));
        }
        if self.interleave > 2 || self.swizzle > 3 || self.l2promo > 3 {
            return Err("interleave, swizzle or L2 promotion out of range".into());
        }
        if self.atomicity > 3 {
            return Err("swizzle atomicity out of range".into());
        }
        if self.interleave != 0 && r < 3 {
            return Err("an interleaved layout needs rank 3 or more".into());
        }
        if self.interleave == 2 && self.swizzle != 1 {
            return Err("the 32-byte interleave needs the 32-byte swizzle".into());
        }
        if self.oob_nan && !dtype_is_float(self.dtype) {
            return Err("NaN fill needs a floating-point data type".into());
        }
        let align = if self.interleave == 2 { 32 } else { 16 };
        if self.addr % align != 0 {
            return Err(format!(
                "global address {:#x} not {align}-byte aligned",
                self.addr
            ));
        }
        for k in 0..5 {
            let used = k < r;
            if used && self.dims[k] == 0 {
                return Err(format!("global dim {k} is 0"));
            }
            if !used && (self.dims[k] != 1 || self.boxd[k] != 1 || self.estrides[k] != 1) {
                return Err(format!("unused dimension {k} must be 1"));
            }
            if used && !(1..=8).contains(&self.estrides[k]) {
                return Err(format!("element stride {k} out of 1..=8"));
            }
            if used && !self.im2col && !(1..=256).contains(&self.boxd[k]) {
                return Err(format!("box dim {k} out of 1..=256"));
            }
        }
        for k in 0..4 {
            let used = k + 1 < r;
            let s = self.strides[k];
            if used && (s % align != 0 || s >= 1 << 40) {
                return Err(format!(
                    "global stride {} not a multiple of {align} below 2^40",
                    k + 1
                ));
            }
            if !used && s != 0 {
                return Err(format!("unused stride {} must be 0", k + 1));
            }
        }
        if self.interleave == 0 && !self.im2col {
            let inner = self.boxd[0] as u64 * es as u64;
            if inner % 16 != 0 {
                return Err(format!(
                    "the box's inner dimension ({inner} bytes) is not a multiple of 16 bytes"
                ));
            }
            if self.swizzle != 0 && inner > 16 << self.swizzle {
                return Err(format!(
                    "the box's inner dimension ({inner} bytes) exceeds the swizzle span ({} bytes)",
                    16 << self.swizzle
                ));
            }
        }
        if self.im2col {
            if self.channels == 0 || self.channels > 256 || self.pixels == 0 || self.pixels > 1024 {
                return Err("im2col channels per pixel or pixels per column out of range".into());
            }
            let inner = self.channels as u64 * es as u64;
            if self.interleave == 0 && self.swizzle != 0 && inner > 16 << self.swizzle {
                return Err(format!(
                    "the channels of a pixel ({inner} bytes) exceed the swizzle span ({} bytes)",
                    16 << self.swizzle
                ));
            }
            let span = 1i32
                << (if r == 3 {
                    15
                } else if r == 4 {
                    7
                } else {
                    4
                });
            for k in 0..r - 2 {
                for v in [self.lower[k], self.upper[k]] {
                    if !(-span..span).contains(&(v as i32)) {
                        return Err("im2col corner out of range".into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Element size in bytes.
    pub fn elem_size(&self) -> u32 {
        dtype_size(self.dtype).unwrap_or(1)
    }

    /// The size in bytes of an interleave slice (16 or 32; 0 without interleave).
    pub fn slice(&self) -> u64 {
        match self.interleave {
            1 => 16,
            2 => 32,
            _ => 0,
        }
    }

    /// `n` bytes of dimension-0 data as they lie in shared memory: in an interleaved map,
    /// rounded up to whole slices.
    fn padded(&self, n: u64) -> u64 {
        match self.slice() {
            0 => n,
            s => n.div_ceil(s) * s,
        }
    }

    /// The traversal stride of dimension `k`: the element stride, except that a map without
    /// interleave ignores that of dimension 0 (the driver documents that the TMA has none).
    pub fn traversal(&self, k: usize) -> u64 {
        if k == 0 && self.interleave == 0 {
            1
        } else {
            self.estrides[k] as u64
        }
    }

    /// The elements of the tile-mode box at `coords` (elements), in shared-memory order: for
    /// each, its byte offset in the box before swizzling and its global byte address, `None`
    /// when out of bounds. The box holds ⌈boxDim[k] / stride[k]⌉ elements per dimension,
    /// dimension 0 innermost; each line of dimension 0 takes its bytes rounded up to whole
    /// slices in an interleaved map (the padding is listed as out of bounds).
    pub fn tile_elements(&self, coords: &[i32]) -> Vec<(u64, Option<u64>)> {
        let r = self.rank as usize;
        let es = self.elem_size() as u64;
        let n: Vec<u64> = (0..r)
            .map(|k| (self.boxd[k] as u64).div_ceil(self.traversal(k)))
            .collect();
        let line = self.padded(n[0] * es);
        let per_line = line / es;
        let lines: u64 = n[1..].iter().product();
        let mut out = Vec::with_capacity((lines * per_line) as usize);
        let mut idx = [0u64; 5];
        for li in 0..lines {
            let mut rem = li;
            for k in 1..r {
                idx[k] = rem % n[k];
                rem /= n[k];
            }
            for k0 in 0..per_line {
                idx[0] = k0;
                let mut addr = (k0 < n[0]).then_some(self.addr);
                for k in 0..r {
                    let c = coords[k] as i64 + (idx[k] * self.traversal(k)) as i64;
                    if c < 0 || c >= self.dims[k] as i64 {
                        addr = None;
                        break;
                    }
                    let stride = if k == 0 { es } else { self.strides[k - 1] };
                    addr = addr.map(|a| a.wrapping_add(c as u64 * stride));
                }
                out.push((li * line + k0 * es, addr));
            }
        }
        out
    }

    /// The elements an im2col-mode copy moves, as [`TensorMap::tile_elements`]: `pixels`
    /// pixels of `channels` elements each, pixel after pixel in shared memory (each pixel's
    /// bytes rounded up to whole slices in an interleaved map, the padding out of bounds).
    /// Dimension 0 is the channel, dimensions 1..rank-1 the spatial ones (W, H, D), the last
    /// the image (N). The pixels are those of the bounding box, `lower[d] ..= dims[d] - 1 +
    /// upper[d]` in each spatial dimension (stepped by the element strides), taken in order
    /// (W fastest, then H, D, then the next image) from the spatial position
    /// `coords[1..rank-1]` of image `coords[rank-1]`; each is read at its position plus
    /// `offsets` (the im2col offsets), its channels from `coords[0]` on. What lies outside
    /// the tensor is out of bounds.
    pub fn im2col_elements(&self, coords: &[i32], offsets: &[u16]) -> Vec<(u64, Option<u64>)> {
        let r = self.rank as usize;
        let ns = r - 2; // spatial dimensions
        let es = self.elem_size() as u64;
        let stride = |k: usize| if k == 0 { es } else { self.strides[k - 1] };
        let lo = |d: usize| self.lower[d] as i64;
        let hi = |d: usize| self.dims[d + 1] as i64 - 1 + self.upper[d] as i64;
        let mut pos: Vec<i64> = (0..ns).map(|d| coords[d + 1] as i64).collect();
        let mut n = coords[r - 1] as i64;
        let per_pixel = self.padded(self.channels as u64 * es) / es;
        let mut out = Vec::new();
        let mut off = 0u64;
        for _ in 0..self.pixels {
            for ch in 0..per_pixel as i64 {
                let c = coords[0] as i64 + ch;
                let mut addr = (ch < self.channels as i64 && (0..self.dims[0] as i64).contains(&c))
                    .then(|| c as u64 * es);
                for (d, &at) in pos.iter().enumerate() {
                    let p = at + offsets.get(d).copied().unwrap_or(0) as i64;
                    addr = addr.filter(|_| (0..self.dims[d + 1] as i64).contains(&p));
                    addr = addr.map(|a| a.wrapping_add((p as u64).wrapping_mul(stride(d + 1))));
                }
                addr = addr.filter(|_| (0..self.dims[r - 1] as i64).contains(&n));
                addr = addr.map(|a| {
                    self.addr
                        .wrapping_add(a)
                        .wrapping_add((n as u64).wrapping_mul(stride(r - 1)))
                });
                out.push((off, addr));
                off += es;
            }
            // the next pixel of the bounding box
            let mut d = 0;
            loop {
                if d == ns {
                    n += 1;
                    break;
                }
                pos[d] += self.estrides[d + 1] as i64;
                if pos[d] <= hi(d) {
                    break;
                }
                pos[d] = lo(d);
                d += 1;
            }
        }
        out
    }

    /// Bytes in shared memory: the box (tile mode) or the pixels' channels (im2col), with the
    /// slice padding of an interleaved map.
    pub fn box_bytes(&self) -> u64 {
        let es = self.elem_size() as u64;
        if self.im2col {
            return self.pixels as u64 * self.padded(self.channels as u64 * es);
        }
        let n = |k: usize| (self.boxd[k] as u64).div_ceil(self.traversal(k));
        self.padded(n(0) * es) * (1..self.rank as usize).map(n).product::<u64>()
    }
}

/// A field of `tensormap.replace.tile` (the ISA's `.field1`, `.field2`, `.field3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `.global_address` (b64).
    GlobalAddress,
    /// `.rank`: the rank less one.
    Rank,
    /// `.box_dim` of dimension `ord`.
    BoxDim,
    /// `.global_dim` of dimension `ord`.
    GlobalDim,
    /// `.global_stride` of dimension `ord + 1` (b64).
    GlobalStride,
    /// `.element_stride` of dimension `ord`.
    ElementStride,
    /// `.elemtype`: the ISA's element-type code (0..=15), not `CUtensorMapDataType`.
    Elemtype,
    /// `.interleave_layout`: 0 none, 1 16B, 2 32B.
    InterleaveLayout,
    /// `.swizzle_mode`: 0 none, 1 32B, 2 64B, 3 128B.
    SwizzleMode,
    /// `.swizzle_atomicity`: 0 16B, 1 32B, 2 32B + 8B flip, 3 64B.
    SwizzleAtomicity,
    /// `.fill_mode`: 0 zeros, 1 NaN.
    FillMode,
}

impl Field {
    /// Every field, in the order of their codes (`Field::ALL[code]`).
    pub const ALL: [Field; 11] = [
        Field::GlobalAddress,
        Field::Rank,
        Field::BoxDim,
        Field::GlobalDim,
        Field::GlobalStride,
        Field::ElementStride,
        Field::Elemtype,
        Field::InterleaveLayout,
        Field::SwizzleMode,
        Field::SwizzleAtomicity,
        Field::FillMode,
    ];

    /// The field's modifier (`.box_dim`).
    pub fn name(self) -> &'static str {
        [
            ".global_address",
            ".rank",
            ".box_dim",
            ".global_dim",
            ".global_stride",
            ".element_stride",
            ".elemtype",
            ".interleave_layout",
            ".swizzle_mode",
            ".swizzle_atomicity",
            ".fill_mode",
        ][self as usize]
    }

    /// Whether the field takes the `ord` operand.
    pub fn has_ord(self) -> bool {
        matches!(
            self,
            Field::BoxDim | Field::GlobalDim | Field::GlobalStride | Field::ElementStride
        )
    }
}

/// The `CUtensorMapDataType` (this encoding's data type) of the ISA's `.elemtype` code: the two
/// orders differ from 8 on (the ISA has `.f32.ftz`, `.f64`, `.bf16` where the driver has f64,
/// bf16, f32 ftz). Codes 13..=15 (the packed 4- and 6-bit types) keep their number, which no
/// copy executes.
pub fn dtype_of_elemtype(code: u64) -> u8 {
    const MAP: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 10, 8, 9, 11, 12, 13, 14, 15];
    MAP.get(code as usize).copied().unwrap_or(u8::MAX)
}

/// `tensormap.replace.tile.field [addr], {ord,} value` on the 128 bytes `b` of a tensor map:
/// writes the field of this encoding and the header (magic and version: a map built field by
/// field in zeroed memory is a map). A value is written as given where its field can hold it
/// and saturated where it cannot (a box dim above 65535, an element stride above 255, a rank
/// above 255): it stays out of range, and the copy that uses the map reports it. Nothing is
/// checked here (a map is usually invalid while its fields are replaced one by one); the error
/// is for an ordinal the encoding has no field for (`.global_stride` ordinal 4: strides
/// exist for dimensions 1..=4 only).
pub fn replace(b: &mut [u8; 128], field: Field, ord: u32, v: u64) -> Result<(), String> {
    let k = ord as usize;
    if field.has_ord() && k > 4 || field == Field::GlobalStride && k > 3 {
        return Err(format!(
            "ordinal {ord} of {}: a tensor map has {}",
            field.name(),
            if field == Field::GlobalStride {
                "the strides of dimensions 1..=4 (ordinals 0..=3)"
            } else {
                "5 (ordinals 0..=4)"
            }
        ));
    }
    let sat = |max: u64| v.min(max);
    match field {
        Field::GlobalAddress => b[8..16].copy_from_slice(&v.to_le_bytes()),
        Field::Rank => b[6] = sat(254) as u8 + 1,
        Field::BoxDim => {
            b[72 + 2 * k..74 + 2 * k].copy_from_slice(&(sat(0xFFFF) as u16).to_le_bytes())
        }
        Field::GlobalDim => b[16 + 4 * k..20 + 4 * k].copy_from_slice(&(v as u32).to_le_bytes()),
        Field::GlobalStride => b[40 + 8 * k..48 + 8 * k].copy_from_slice(&v.to_le_bytes()),
        Field::ElementStride => b[82 + k] = sat(255) as u8,
        Field::Elemtype => b[5] = dtype_of_elemtype(v),
        Field::InterleaveLayout => b[87] = sat(255) as u8,
        Field::SwizzleMode => b[88] = sat(255) as u8,
        Field::SwizzleAtomicity => b[97] = sat(255) as u8,
        Field::FillMode => b[90] = sat(255) as u8,
    }
    b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    b[4] = 1;
    Ok(())
}

/// The shared-memory byte offset `off` after the swizzle of mode `swizzle` (1 32B, 2 64B, 3
/// 128B): the 16-byte chunk index (bits 4..) is XORed with bits 7.. of the address, 1, 2 or 3
/// bits of them (the pattern repeats every 256, 512 or 1024 bytes).
pub fn swizzle(off: u64, swizzle: u8) -> u64 {
    if swizzle == 0 {
        return off;
    }
    let mask = (1u64 << swizzle) - 1;
    off ^ (((off >> 7) & mask) << 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map2d() -> TensorMap {
        TensorMap {
            dtype: 7,
            rank: 2,
            addr: 0x1000,
            dims: [10, 6, 1, 1, 1],
            strides: [64, 0, 0, 0],
            boxd: [8, 4, 1, 1, 1],
            estrides: [1; 5],
            ..Default::default()
        }
    }

    #[test]
    fn round_trip_and_garbage() {
        let m = map2d();
        assert_eq!(TensorMap::decode(&m.encode()), Ok(m));
        assert!(TensorMap::decode(&[0x5a; 128]).is_err());
    }

    #[test]
    fn box_walk_with_oob() {
        let m = map2d();
        let e = m.tile_elements(&[4, -1]);
        assert_eq!(e.len(), 32);
        assert_eq!(e[0], (0, None)); // row -1
        assert_eq!(e[8], (32, Some(0x1000 + 4 * 4)));
        assert_eq!(e[8 + 6], (56, None)); // column 10
    }

    #[test]
    fn driver_checks() {
        let l = Layout::default();
        let ok = TensorMap::tiled(7, 0x1000, &[10, 6], &[64], &[8, 4], &[1, 1], l);
        assert_eq!(ok, Ok(map2d()));
        // unaligned address, stride not a multiple of 16, box too big, inner box not 16 bytes,
        // box wider than the swizzle span, NaN fill on integers, rank 0
        let bad = [
            TensorMap::tiled(7, 0x1004, &[10, 6], &[64], &[8, 4], &[1, 1], l),
            TensorMap::tiled(7, 0x1000, &[10, 6], &[40], &[8, 4], &[1, 1], l),
            TensorMap::tiled(7, 0x1000, &[10, 6], &[64], &[8, 257], &[1, 1], l),
            TensorMap::tiled(7, 0x1000, &[10, 6], &[64], &[3, 4], &[1, 1], l),
            TensorMap::tiled(
                7,
                0x1000,
                &[10, 6],
                &[64],
                &[16, 4],
                &[1, 1],
                Layout { swizzle: 1, ..l },
            ),
            TensorMap::tiled(
                2,
                0x1000,
                &[10, 6],
                &[64],
                &[8, 4],
                &[1, 1],
                Layout { oob_fill: 1, ..l },
            ),
            TensorMap::tiled(7, 0x1000, &[], &[], &[], &[], l),
            TensorMap::tiled(7, 0x1000, &[10, 6], &[64], &[8, 4], &[1, 9], l),
        ];
        for b in bad {
            assert!(b.is_err(), "{b:?}");
        }
    }

    #[test]
    fn interleaved_box() {
        // u16 rank 3, 16B interleave: a box line of 5 elements (10 bytes) takes one 16-byte
        // slice; element stride 2 on dimension 0 is honoured (ignored without interleave)
        let l = Layout {
            interleave: 1,
            ..Layout::default()
        };
        let m = TensorMap::tiled(
            1,
            0x1000,
            &[16, 4, 2],
            &[32, 128],
            &[10, 2, 1],
            &[2, 1, 1],
            l,
        )
        .unwrap();
        assert_eq!(m.box_bytes(), 32);
        let e = m.tile_elements(&[0, 0, 0]);
        assert_eq!(e.len(), 16);
        assert_eq!(e[1], (2, Some(0x1000 + 4)));
        assert_eq!(e[5], (10, None)); // padding
        assert_eq!(e[8], (16, Some(0x1000 + 32)));
        let plain = TensorMap::tiled(
            1,
            0x1000,
            &[16, 4, 2],
            &[32, 128],
            &[8, 2, 1],
            &[2, 1, 1],
            Layout::default(),
        )
        .unwrap();
        assert_eq!(plain.tile_elements(&[0, 0, 0])[1], (2, Some(0x1000 + 2)));
        // the driver's interleave rules
        let bad = [
            TensorMap::tiled(1, 0x1000, &[16, 4], &[32], &[8, 2], &[1, 1], l),
            TensorMap::tiled(
                1,
                0x1000,
                &[16, 4, 2],
                &[32, 128],
                &[8, 2, 1],
                &[1, 1, 1],
                Layout { interleave: 2, ..l },
            ),
            TensorMap::tiled(
                1,
                0x1010,
                &[16, 4, 2],
                &[32, 128],
                &[8, 2, 1],
                &[1, 1, 1],
                Layout {
                    interleave: 2,
                    swizzle: 1,
                    ..l
                },
            ),
            TensorMap::tiled(
                1,
                0x1000,
                &[16, 4, 2],
                &[48, 192],
                &[8, 2, 1],
                &[1, 1, 1],
                Layout {
                    interleave: 2,
                    swizzle: 1,
                    ..l
                },
            ),
        ];
        for b in bad {
            assert!(b.is_err(), "{b:?}");
        }
        // a 16B-interleaved box is not limited to 16-byte lines nor to the swizzle span
        assert!(TensorMap::tiled(
            0,
            0x1000,
            &[64, 4, 2],
            &[64, 256],
            &[40, 2, 1],
            &[1, 1, 1],
            Layout { swizzle: 1, ..l }
        )
        .is_ok());
    }

    #[test]
    fn replace_fields() {
        let mut b = [0u8; 128];
        let f = |b: &mut [u8; 128], f, o, v| replace(b, f, o, v).unwrap();
        f(&mut b, Field::GlobalAddress, 0, 0x1000);
        f(&mut b, Field::Rank, 0, 1);
        f(&mut b, Field::GlobalDim, 0, 10);
        f(&mut b, Field::GlobalDim, 1, 6);
        f(&mut b, Field::GlobalStride, 0, 64);
        f(&mut b, Field::BoxDim, 0, 8);
        f(&mut b, Field::BoxDim, 1, 4);
        f(&mut b, Field::ElementStride, 0, 1);
        f(&mut b, Field::ElementStride, 1, 1);
        f(&mut b, Field::Elemtype, 0, 7);
        assert_eq!(TensorMap::decode(&b), Ok(map2d()));
        // the ISA's element-type codes from 8 on are not the driver's
        f(&mut b, Field::Elemtype, 0, 10);
        assert_eq!(TensorMap::decode(&b).unwrap().dtype, 9); // bf16
        f(&mut b, Field::Elemtype, 0, 9);
        assert_eq!(TensorMap::decode(&b).unwrap().dtype, 8); // f64
                                                             // out-of-range values stay out of range: the map no longer decodes
        f(&mut b, Field::BoxDim, 1, 70000);
        assert!(TensorMap::decode(&b).is_err());
        f(&mut b, Field::BoxDim, 1, 4);
        f(&mut b, Field::SwizzleAtomicity, 0, 1);
        assert_eq!(TensorMap::decode(&b).unwrap().atomicity, 1);
        assert!(replace(&mut b, Field::GlobalStride, 4, 16).is_err());
        assert!(replace(&mut b, Field::BoxDim, 5, 16).is_err());
    }

    #[test]
    fn swizzle_128() {
        assert_eq!(swizzle(0x80, 3), 0x90);
        // row 7, chunk 7: chunk 7 ^ 7 = 0
        assert_eq!(swizzle(0x3f0, 3), 0x380);
        assert_eq!(swizzle(0x400, 3), 0x400);
        assert_eq!(swizzle(0x80, 1), 0x90);
        assert_eq!(swizzle(0x100, 1), 0x100);
    }
}
