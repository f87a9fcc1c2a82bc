//! Tensor maps for `cp.async.bulk.tensor`: [`TensorMap`] builds the 128-byte object a kernel
//! receives as a `.param .align 64 .b8 tmap[128]` parameter (its encoding: docs/async.md).

pub use ptx_semantics::tensormap::{Layout as TensorMapLayout, TensorMap};

use crate::Arg;

impl Arg {
    /// A tensor map passed by value (`const __grid_constant__ CUtensorMap`).
    ///
    /// ```
    /// use ptxvm::{Arg, TensorMap, TensorMapLayout};
    /// // a 64 x 32 f32 matrix at 0x10000 (rows of 256 bytes), boxes of 32 x 8
    /// let m = TensorMap::tiled(7, 0x10000, &[64, 32], &[256], &[32, 8], &[1, 1],
    ///                          TensorMapLayout::default()).unwrap();
    /// assert!(matches!(Arg::tensor_map(&m), Arg::Bytes(b) if b.len() == 128));
    /// ```
    pub fn tensor_map(m: &TensorMap) -> Arg {
        Arg::Bytes(m.encode().to_vec())
    }
}
