//! `ptxvm doc` with the CUDA C++ names a new user knows: each points at the PTX that nvcc emits
//! for it and shows that instruction's documentation.

use std::process::Command;

fn doc(query: &str) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .args(["doc", query])
        .output()
        .expect("run ptxvm");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn syncthreads_is_bar_sync() {
    let (code, out, err) = doc("__syncthreads");
    assert_eq!(code, Some(0), "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("__syncthreads (CUDA C++) compiles to `bar.sync 0` (the same as `barrier.sync.aligned 0`).")
    );
    assert_eq!(lines.next(), Some(""));
    // then what `ptxvm doc bar.sync` shows
    let (_, bar, _) = doc("bar.sync");
    assert_eq!(lines.collect::<Vec<_>>().join("\n"), bar.trim_end());
}

/// Each CUDA name of the list, and the PTX it must name (from nvcc's output for these
/// intrinsics: `shared/corpus/src/*.cu` and their sm_80 PTX).
#[test]
fn cuda_names_name_their_ptx() {
    let cases = [
        ("__syncwarp", "`bar.warp.sync mask`"),
        ("__shfl_sync", "`shfl.sync.idx.b32`"),
        ("__shfl_down_sync", "`shfl.sync.down.b32`"),
        ("__shfl_xor_sync()", "`shfl.sync.bfly.b32`"),
        ("__ballot_sync", "`vote.sync.ballot.b32`"),
        ("__any_sync", "`vote.sync.any.pred`"),
        ("__all_sync", "`vote.sync.all.pred`"),
        ("__syncthreads_count", "`bar.red.popc.u32 d, 0, p`"),
        ("atomicAdd", "`atom.add`"),
        ("atomicCAS", "`atom.cas.b32`"),
        ("__threadfence", "`membar.gl`"),
        ("__threadfence_block", "`membar.cta`"),
        ("threadIdx", "`%tid`"),
        ("threadIdx.x", "`%tid.x`"),
        ("blockIdx", "`%ctaid`"),
        ("blockDim", "`%ntid`"),
        ("__ldg", "`ld.global.nc`"),
        ("__popc", "`popc.b32`"),
        ("__clz", "`clz.b32`"),
        ("__ffs", "`bfind.shiftamt`"),
        ("__brev", "`brev.b32`"),
        ("__umulhi", "`mul.hi.u32`"),
        ("__fmaf_rn", "`fma.rn.f32`"),
        ("__float2half", "`cvt.rn.f16.f32`"),
        ("nvcuda::wmma::mma_sync", "`wmma.mma.sync.aligned`"),
    ];
    for (query, ptx) in cases {
        let (code, out, err) = doc(query);
        assert_eq!(code, Some(0), "{query}: {err}");
        let first = out.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("{query} (CUDA C++) compiles to ")),
            "{query}: {first}"
        );
        assert!(first.contains(ptx), "{query}: {first}");
    }
}

#[test]
fn a_misspelt_cuda_name_gets_the_cuda_name() {
    let (code, out, err) = doc("__syncthread");
    assert_eq!(code, Some(1));
    assert_eq!(out, "");
    assert_eq!(
        err,
        "error: unknown opcode `__syncthread`; did you mean `__syncthreads`?\n"
    );
}
