//! CUDA C++ names and the PTX they compile to, for `ptxvm doc __syncthreads`: a user who
//! knows the CUDA intrinsic finds the instruction ptxvm documents and runs. This is the one
//! table of them; `ptxvm doc` renders an entry as one line (what nvcc emits) followed by the
//! documentation of the first PTX name it lists.
//!
//! What nvcc emits was read from its PTX output (nvcc 12–13, sm_80: `shared/corpus/src`
//! and `tests/corpus/cuda`) where we have it, else from the CUDA Math API and Programming
//! Guide's descriptions of each intrinsic. Every `doc` query must be one `ptxvm doc` answers,
//! and no CUDA name may also be a PTX name (both are tests): `clock()` and `clock64()` are
//! not here because `ptxvm doc clock` already shows `%clock`.

/// One CUDA C++ intrinsic, built-in variable or qualifier (or a family of them).
#[derive(Debug)]
pub struct CudaName {
    /// The CUDA C++ names, without `()` or namespace (`__shfl_sync`, `threadIdx`,
    /// `load_matrix_sync`).
    pub names: &'static [&'static str],
    /// What nvcc emits for it, as PTX text (`` `bar.sync 0` ``).
    pub emits: &'static str,
    /// The `ptxvm doc` queries that document it, the main one first.
    pub doc: &'static [&'static str],
}

const fn n(
    names: &'static [&'static str],
    emits: &'static str,
    doc: &'static [&'static str],
) -> CudaName {
    CudaName { names, emits, doc }
}

/// Every CUDA C++ name `ptxvm doc` knows.
#[rustfmt::skip]
pub static CUDA_NAMES: &[CudaName] = &[
    // barriers and memory ordering
    n(&["__syncthreads"], "`bar.sync 0` (the same as `barrier.sync.aligned 0`)", &["bar.sync"]),
    n(&["__syncthreads_count"], "`bar.red.popc.u32 d, 0, p`", &["bar.red"]),
    n(&["__syncthreads_and"], "`bar.red.and.pred d, 0, p`", &["bar.red"]),
    n(&["__syncthreads_or"], "`bar.red.or.pred d, 0, p`", &["bar.red"]),
    n(&["__syncwarp"], "`bar.warp.sync mask`", &["bar.warp.sync"]),
    n(&["__threadfence"], "`membar.gl` (on sm_70 and later the same as `fence.sc.gpu`)", &["membar"]),
    n(&["__threadfence_block"], "`membar.cta` (on sm_70 and later the same as `fence.sc.cta`)", &["membar"]),
    n(&["__threadfence_system"], "`membar.sys` (on sm_70 and later the same as `fence.sc.sys`)", &["membar"]),
    // warp-level primitives
    n(&["__shfl_sync"], "`shfl.sync.idx.b32`", &["shfl.sync"]),
    n(&["__shfl_up_sync"], "`shfl.sync.up.b32`", &["shfl.sync"]),
    n(&["__shfl_down_sync"], "`shfl.sync.down.b32`", &["shfl.sync"]),
    n(&["__shfl_xor_sync"], "`shfl.sync.bfly.b32`", &["shfl.sync"]),
    n(&["__ballot_sync"], "`vote.sync.ballot.b32`", &["vote.sync"]),
    n(&["__any_sync"], "`vote.sync.any.pred`", &["vote.sync"]),
    n(&["__all_sync"], "`vote.sync.all.pred`", &["vote.sync"]),
    n(&["__uni_sync"], "`vote.sync.uni.pred`", &["vote.sync"]),
    n(&["__activemask"], "`activemask.b32`", &["activemask"]),
    n(&["__match_any_sync"], "`match.any.sync.b32` (`.b64` for 64-bit values)", &["match.sync"]),
    n(&["__match_all_sync"], "`match.all.sync.b32` (`.b64` for 64-bit values)", &["match.sync"]),
    n(
        &["__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"],
        "`redux.sync.OP` (`.add`, `.min`, `.max`: `.s32`/`.u32`; `.and`, `.or`, `.xor`: `.b32`)",
        &["redux.sync"],
    ),
    // atomics
    n(
        &["atomicAdd", "atomicAdd_block", "atomicAdd_system"],
        "`atom.add` (`red.add` when the result is unused; `_block`: `.cta`, `_system`: `.sys`)",
        &["atom", "red"],
    ),
    n(&["atomicSub"], "`atom.add` of the negated value (PTX has no `atom.sub`)", &["atom", "red"]),
    n(&["atomicExch"], "`atom.exch`", &["atom"]),
    n(&["atomicMin"], "`atom.min` (`red.min` when the result is unused)", &["atom", "red"]),
    n(&["atomicMax"], "`atom.max` (`red.max` when the result is unused)", &["atom", "red"]),
    n(&["atomicInc"], "`atom.inc.u32` (`red.inc.u32` when the result is unused)", &["atom", "red"]),
    n(&["atomicDec"], "`atom.dec.u32` (`red.dec.u32` when the result is unused)", &["atom", "red"]),
    n(&["atomicAnd"], "`atom.and.b32` (`.b64`; `red.and` when the result is unused)", &["atom", "red"]),
    n(&["atomicOr"], "`atom.or.b32` (`.b64`; `red.or` when the result is unused)", &["atom", "red"]),
    n(&["atomicXor"], "`atom.xor.b32` (`.b64`; `red.xor` when the result is unused)", &["atom", "red"]),
    n(&["atomicCAS"], "`atom.cas.b32` (`.b64`, `.b16`)", &["atom"]),
    // built-in variables
    n(&["threadIdx"], "reads of `%tid` (`threadIdx.x` is `%tid.x`)", &["%tid"]),
    n(&["blockIdx"], "reads of `%ctaid` (`blockIdx.x` is `%ctaid.x`)", &["%ctaid"]),
    n(&["blockDim"], "reads of `%ntid` (`blockDim.x` is `%ntid.x`)", &["%ntid"]),
    n(&["gridDim"], "reads of `%nctaid` (`gridDim.x` is `%nctaid.x`)", &["%nctaid"]),
    // loads and stores with cache hints
    n(&["__ldg"], "`ld.global.nc` (the read-only data cache)", &["ld.global.nc"]),
    n(&["__ldca"], "`ld.global.ca` (cache at all levels)", &["ld.global"]),
    n(&["__ldcg"], "`ld.global.cg` (cache in L2, not L1)", &["ld.global"]),
    n(&["__ldcs"], "`ld.global.cs` (streaming: likely read once)", &["ld.global"]),
    n(&["__ldlu"], "`ld.global.lu` (last use)", &["ld.global"]),
    n(&["__ldcv"], "`ld.global.cv` (do not cache; fetch again)", &["ld.global"]),
    n(&["__stwb"], "`st.global.wb` (write back)", &["st.global"]),
    n(&["__stcg"], "`st.global.cg` (cache in L2, not L1)", &["st.global"]),
    n(&["__stcs"], "`st.global.cs` (streaming: likely written once)", &["st.global"]),
    n(&["__stwt"], "`st.global.wt` (write through)", &["st.global"]),
    // integer intrinsics
    n(&["__popc"], "`popc.b32`", &["popc"]),
    n(&["__popcll"], "`popc.b64`", &["popc"]),
    n(&["__clz"], "`clz.b32`", &["clz"]),
    n(&["__clzll"], "`clz.b64`", &["clz"]),
    n(
        &["__ffs", "__ffsll"],
        "`brev` then `bfind.shiftamt`, plus one (PTX has no find-first-set instruction)",
        &["bfind", "brev"],
    ),
    n(&["__brev"], "`brev.b32`", &["brev"]),
    n(&["__brevll"], "`brev.b64`", &["brev"]),
    n(&["__fns"], "`fns.b32`", &["fns"]),
    n(&["__byte_perm"], "`prmt.b32`", &["prmt"]),
    n(&["__funnelshift_l"], "`shf.l.wrap.b32`", &["shf"]),
    n(&["__funnelshift_lc"], "`shf.l.clamp.b32`", &["shf"]),
    n(&["__funnelshift_r"], "`shf.r.wrap.b32`", &["shf"]),
    n(&["__funnelshift_rc"], "`shf.r.clamp.b32`", &["shf"]),
    n(&["__mulhi"], "`mul.hi.s32`", &["mul.hi"]),
    n(&["__umulhi"], "`mul.hi.u32`", &["mul.hi"]),
    n(&["__mul64hi"], "`mul.hi.s64`", &["mul.hi"]),
    n(&["__umul64hi"], "`mul.hi.u64`", &["mul.hi"]),
    n(&["__sad"], "`sad.s32`", &["sad"]),
    n(&["__usad"], "`sad.u32`", &["sad"]),
    n(&["__dp4a"], "`dp4a` (`.s32.s32`, `.u32.u32` or mixed, per the argument types)", &["dp4a"]),
    n(&["__dp2a_lo"], "`dp2a.lo`", &["dp2a"]),
    n(&["__dp2a_hi"], "`dp2a.hi`", &["dp2a"]),
    // floating-point intrinsics
    n(
        &["__fmaf_rn", "__fmaf_rz", "__fmaf_ru", "__fmaf_rd", "__fma_rn", "__fma_rz", "__fma_ru", "__fma_rd"],
        "`fma.rn.f32` (`_rz`: `.rz`, `_ru`: `.rp`, `_rd`: `.rm`; `__fma_*`: `.f64`)",
        &["fma"],
    ),
    n(&["__fadd_rn", "__fadd_rz", "__fadd_ru", "__fadd_rd", "__dadd_rn"], "`add.rn.f32` (and the other roundings; `__dadd_*`: `.f64`)", &["add.f32"]),
    n(&["__fsub_rn", "__fsub_rz", "__fsub_ru", "__fsub_rd", "__dsub_rn"], "`sub.rn.f32` (and the other roundings; `__dsub_*`: `.f64`)", &["sub.f32"]),
    n(&["__fmul_rn", "__fmul_rz", "__fmul_ru", "__fmul_rd", "__dmul_rn"], "`mul.rn.f32` (and the other roundings; `__dmul_*`: `.f64`)", &["mul.f32"]),
    n(&["__fdiv_rn", "__fdiv_rz", "__fdiv_ru", "__fdiv_rd", "__ddiv_rn"], "`div.rn.f32` (and the other roundings; `__ddiv_*`: `.f64`)", &["div.f32"]),
    n(&["__frcp_rn", "__frcp_rz", "__frcp_ru", "__frcp_rd", "__drcp_rn"], "`rcp.rn.f32` (and the other roundings; `__drcp_*`: `.f64`)", &["rcp"]),
    n(&["__fsqrt_rn", "__fsqrt_rz", "__fsqrt_ru", "__fsqrt_rd", "__dsqrt_rn"], "`sqrt.rn.f32` (and the other roundings; `__dsqrt_*`: `.f64`)", &["sqrt"]),
    n(&["__expf"], "`ex2.approx.f32` of the argument times log2(e)", &["ex2"]),
    n(&["__exp10f"], "`ex2.approx.f32` of the argument times log2(10)", &["ex2"]),
    n(&["__log2f"], "`lg2.approx.f32`", &["lg2"]),
    n(&["__logf"], "`lg2.approx.f32`, times ln(2)", &["lg2"]),
    n(&["__log10f"], "`lg2.approx.f32`, times log10(2)", &["lg2"]),
    n(&["__sinf"], "`sin.approx.f32`", &["sin"]),
    n(&["__cosf"], "`cos.approx.f32`", &["cos"]),
    n(&["__saturatef"], "`cvt.sat.f32.f32` (clamp to [0, 1])", &["cvt"]),
    n(&["rsqrtf"], "`rsqrt.approx.f32`", &["rsqrt"]),
    // conversions
    n(&["__float2half", "__float2half_rn"], "`cvt.rn.f16.f32`", &["cvt"]),
    n(&["__half2float"], "`cvt.f32.f16`", &["cvt"]),
    n(&["__float2bfloat16", "__float2bfloat16_rn"], "`cvt.rn.bf16.f32`", &["cvt"]),
    n(&["__float2int_rn", "__float2int_rz", "__float2int_ru", "__float2int_rd"], "`cvt.rni.s32.f32` (`_rz`: `.rzi`, `_ru`: `.rpi`, `_rd`: `.rmi`)", &["cvt"]),
    n(&["__float2uint_rn", "__float2uint_rz", "__float2uint_ru", "__float2uint_rd"], "`cvt.rni.u32.f32` (`_rz`: `.rzi`, `_ru`: `.rpi`, `_rd`: `.rmi`)", &["cvt"]),
    n(&["__int2float_rn", "__int2float_rz", "__int2float_ru", "__int2float_rd"], "`cvt.rn.f32.s32` (and the other roundings)", &["cvt"]),
    n(&["__uint2float_rn", "__uint2float_rz", "__uint2float_ru", "__uint2float_rd"], "`cvt.rn.f32.u32` (and the other roundings)", &["cvt"]),
    n(
        &["__float_as_int", "__int_as_float", "__float_as_uint", "__uint_as_float", "__double_as_longlong", "__longlong_as_double"],
        "`mov.b32` / `mov.b64` (the same bits; often no instruction at all)",
        &["mov"],
    ),
    // half precision
    n(&["__hadd"], "`add.f16` (for `__half`; `__hadd(int, int)`, the integer average, is shifts and adds)", &["add.f16"]),
    n(&["__hadd2"], "`add.f16x2`", &["add.f16"]),
    n(&["__hsub"], "`sub.f16`", &["sub.f16"]),
    n(&["__hsub2"], "`sub.f16x2`", &["sub.f16"]),
    n(&["__hmul"], "`mul.f16`", &["mul.f16"]),
    n(&["__hmul2"], "`mul.f16x2`", &["mul.f16"]),
    n(&["__hfma"], "`fma.rn.f16`", &["fma.f16"]),
    n(&["__hfma2"], "`fma.rn.f16x2`", &["fma.f16"]),
    // address spaces
    n(&["__isGlobal"], "`isspacep.global`", &["isspacep"]),
    n(&["__isShared"], "`isspacep.shared`", &["isspacep"]),
    n(&["__isConstant"], "`isspacep.const`", &["isspacep"]),
    n(&["__isLocal"], "`isspacep.local`", &["isspacep"]),
    n(&["__cvta_generic_to_shared"], "`cvta.to.shared`", &["cvta"]),
    n(&["__cvta_generic_to_global"], "`cvta.to.global`", &["cvta"]),
    n(&["__cvta_shared_to_generic"], "`cvta.shared`", &["cvta"]),
    n(&["__cvta_global_to_generic"], "`cvta.global`", &["cvta"]),
    // control
    n(&["__trap"], "`trap`", &["trap"]),
    n(&["__brkpt"], "`brkpt`", &["brkpt"]),
    n(&["__nanosleep"], "`nanosleep.u32`", &["nanosleep"]),
    n(&["__prof_trigger"], "`pmevent`", &["pmevent"]),
    // asynchronous copies and tensor cores
    n(&["__pipeline_memcpy_async"], "`cp.async.ca.shared.global` / `.cg` (4, 8 or 16 bytes)", &["cp.async"]),
    n(&["__pipeline_commit"], "`cp.async.commit_group`", &["cp.async.commit_group"]),
    n(&["__pipeline_wait_prior"], "`cp.async.wait_group N`", &["cp.async.wait_group"]),
    n(&["load_matrix_sync"], "`wmma.load.a`, `wmma.load.b` or `wmma.load.c`, per the fragment (nvcuda::wmma)", &["wmma.load"]),
    n(&["store_matrix_sync"], "`wmma.store.d` (nvcuda::wmma)", &["wmma.store"]),
    n(&["mma_sync"], "`wmma.mma.sync.aligned` (nvcuda::wmma)", &["wmma.mma"]),
    // qualifiers
    n(&["__global__"], "a `.entry` (a kernel)", &[".entry"]),
    n(&["__launch_bounds__"], "`.maxntid` (the first argument), `.minnctapersm` (the second) and `.maxclusterrank` (the third)", &[".maxntid", ".minnctapersm", ".maxclusterrank"]),
    n(&["__cluster_dims__"], "`.reqnctapercluster`", &[".reqnctapercluster"]),
];

/// The entry for a CUDA C++ name as a user may type it: `__syncthreads`, `__syncthreads()`,
/// `threadIdx.x`, `nvcuda::wmma::mma_sync`.
pub fn cuda_name(query: &str) -> Option<&'static CudaName> {
    let name = query.trim();
    let name = name.split('(').next().unwrap_or(name).trim_end();
    let name = name.rsplit("::").next().unwrap_or(name);
    // `threadIdx.x`: the member of a built-in variable
    let name = match name.split_once('.') {
        Some((base, "x" | "y" | "z")) => base,
        _ => name,
    };
    CUDA_NAMES.iter().find(|c| c.names.contains(&name))
}

/// Every CUDA name of the table, for suggestions.
pub(crate) fn all_cuda_names() -> impl Iterator<Item = &'static str> {
    CUDA_NAMES.iter().flat_map(|c| c.names.iter().copied())
}
