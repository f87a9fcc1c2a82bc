//! The Rust API of issue 15 point 4: module variables, by-value struct arguments, sub-buffer
//! views, `Module::from_file`, copying into an existing slice and the parameter layout.
//! Expected values are worked out by hand in the comments.

use ptxvm::{Arg, Device, Error, LaunchOptions, Module, StructArg};

/// `store(p, idx, val)`: one thread stores the u32 `val` at `p[idx]` (`idx` sign-extended, so a
/// negative index reaches before `p`).
const STORE: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry store(.param .u64 p, .param .s32 idx, .param .u32 val)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.s32 %r1, [idx];
    ld.param.u32 %r2, [val];
    mul.wide.s32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#;

/// Variables of every kind and a kernel that reads and writes them: `out[0] = k[0] + k[1]`
/// (f32), `out[1] = bias`, `counter += 1`.
const VARS: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.const .align 4 .f32 k[2] = {1.25, 2.5};
.global .align 4 .s32 bias;
.global .align 4 .u32 counter = 1000;
.global .align 8 .b8 blob[24];
.extern .global .align 4 .u32 elsewhere[];

.visible .entry vars(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    ld.const.f32 %f1, [k];
    ld.const.f32 %f2, [k+4];
    add.rn.f32 %f3, %f1, %f2;
    st.global.f32 [%rd1], %f3;
    ld.global.s32 %r1, [bias];
    st.global.s32 [%rd1+4], %r1;
    ld.global.u32 %r2, [counter];
    add.u32 %r2, %r2, 1;
    st.global.u32 [counter], %r2;
    ret;
}
"#;

/// nvcc 13.5's PTX of `scale_struct(Params p, float *out)` (its CUDA source is in the file's
/// header), with `Params { float scale; float *data; unsigned n; }` by value.
const STRUCT_NVCC: &str = include_str!("../../../tests/run/args/struct_nvcc.ptx");

/// nvcc 13.5's PTX of `small_struct(int k, Small s, double *out)`,
/// `Small { short a; char b; double c; }`: `out[0] = s.a + s.b + s.c + k`.
const SMALL_NVCC: &str = include_str!("../../../tests/run/args/struct_padding.ptx");

fn one() -> LaunchOptions {
    LaunchOptions {
        threads: 1,
        ..LaunchOptions::default()
    }
}

fn usage(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Err(Error::Usage(m)) => m,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

#[test]
fn variables_are_read_and_written_by_name() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "vars.ptx", VARS).unwrap();
    let names: Vec<String> = m.globals().iter().map(|g| g.declaration()).collect();
    // the extern without a definition has no storage
    assert_eq!(
        names,
        [
            ".const .f32 k[2]",
            ".global .s32 bias",
            ".global .u32 counter",
            ".global .b8 blob[24]"
        ]
    );
    let k = m.global_info("k").unwrap();
    assert!(k.constant && k.size == 8 && k.align == 4);
    assert_eq!(m.global("k"), Some((k.addr, 8)));
    // initializers
    assert_eq!(m.read_global::<f32>("k").unwrap(), [1.25, 2.5]);
    assert_eq!(m.read_global::<u32>("counter").unwrap(), [1000]);
    assert_eq!(m.read_global_bytes("blob").unwrap(), vec![0u8; 24]);
    // host writes, .const included, reach the kernel
    m.write_global("k", &[0.5f32, 4.0]).unwrap();
    m.write_global("bias", &[-7i32]).unwrap();
    m.write_global_bytes("counter", 0, &41u32.to_le_bytes())
        .unwrap();
    let out = device.alloc::<u32>(2).unwrap();
    let kern = m.kernel("vars").unwrap();
    for _ in 0..2 {
        kern.launch([1, 1, 1], [1, 1, 1], 0, &[Arg::buffer(&out)], &one())
            .unwrap();
    }
    // 0.5 + 4.0 = 4.5; -7 as u32 bits
    assert_eq!(out.to_vec(), [4.5f32.to_bits(), (-7i32) as u32]);
    // two launches: 41 + 2
    assert_eq!(m.read_global::<u32>("counter").unwrap(), [43]);
    // a part of a variable
    m.write_global_bytes("blob", 20, &[1, 2, 3, 4]).unwrap();
    assert_eq!(m.read_global::<u32>("blob").unwrap()[5], 0x0403_0201);
}

#[test]
fn variable_errors_name_the_variable() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "vars.ptx", VARS).unwrap();
    let e = usage(m.read_global_bytes("nope"));
    assert_eq!(
        e,
        "no .global or .const variable named `nope` in vars.ptx; it has: k, bias, counter, blob"
    );
    let e = usage(m.read_global_bytes("elsewhere"));
    assert!(e.contains("named `elsewhere`"), "{e}");
    let e = usage(m.write_global("k", &[1.0f32, 2.0, 3.0]));
    assert_eq!(
        e,
        "3 .f32 elements are 12 bytes, `k` (.const .f32 k[2]) is 8 bytes"
    );
    let e = usage(m.read_global::<f64>("bias"));
    assert_eq!(
        e,
        "`bias` (.global .s32 bias) is 4 bytes, not a whole number of .f64 elements"
    );
    let e = usage(m.write_global_bytes("blob", 22, &[0; 4]));
    assert_eq!(
        e,
        "write of 4 bytes at offset 22 into `blob` (.global .b8 blob[24]), which is 24 bytes"
    );
    let e = usage(m.write_global_bytes("blob", u64::MAX, &[0]));
    assert!(e.contains("offset 18446744073709551615"), "{e}");
}

#[test]
fn from_file_loads_and_names_the_file() {
    let dir = std::env::temp_dir().join(format!("ptxvm-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let device = Device::new();
    let good = dir.join("store.ptx");
    std::fs::write(&good, STORE).unwrap();
    let m = Module::from_file(&device, &good).unwrap();
    assert_eq!(m.kernel_names(), ["store"]);
    assert_eq!(m.source().name(), good.display().to_string());

    let missing = dir.join("missing.ptx");
    let e = usage(Module::from_file(&device, &missing).map(|_| ()));
    assert!(
        e.starts_with(&format!("cannot read {}: ", missing.display())),
        "{e}"
    );
    let e = usage(Module::from_file(&device, &dir).map(|_| ()));
    assert!(e.ends_with("it is a directory"), "{e}");

    let binary = dir.join("binary.ptx");
    std::fs::write(&binary, b".version 8.0\n\xff\xfe").unwrap();
    let e = usage(Module::from_file(&device, &binary).map(|_| ()));
    assert!(
        e.contains("not UTF-8 text (invalid byte at offset 13)"),
        "{e}"
    );

    // a PTX error is reported against the file's path
    let bad = dir.join("bad.ptx");
    std::fs::write(&bad, STORE.replace("ret;", "bogus.op;")).unwrap();
    match Module::from_file(&device, &bad) {
        Err(e @ Error::Invalid { .. }) => {
            let text = e.render();
            assert!(
                text.contains(&format!("{}:", bad.display())),
                "no file:line in {text}"
            );
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn copy_to_fills_an_existing_slice() {
    let device = Device::new();
    let data: Vec<i16> = (0..40_000).map(|k| (k * 3 - 7) as i16).collect();
    let b = device.from_slice(&data).unwrap();
    let mut out = vec![0i16; data.len()];
    b.copy_to(&mut out).unwrap();
    assert_eq!(out, data);
    let mut short = vec![0i16; 3];
    assert_eq!(
        usage(b.copy_to(&mut short)),
        "copy of a buffer of 40000 elements into a slice of 3"
    );
}

#[test]
fn views_read_write_and_launch_within_their_parent() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "store.ptx", STORE).unwrap();
    let store = m.kernel("store").unwrap();
    let parent = device.from_slice(&[0u32; 10]).unwrap();
    let v = parent.view(2..6).unwrap();
    assert_eq!((v.offset(), v.len(), v.addr()), (2, 4, parent.addr() + 8));
    v.copy_from(&[1, 2, 3, 4]).unwrap();
    assert_eq!(parent.to_vec(), [0, 0, 1, 2, 3, 4, 0, 0, 0, 0]);
    let inner = v.view(1..=2).unwrap();
    assert_eq!((inner.offset(), inner.to_vec()), (3, vec![2, 3]));
    let mut out = [0u32; 2];
    inner.copy_to(&mut out).unwrap();
    assert_eq!(out, [2, 3]);
    // a kernel gets the view's first element: index 1 is parent element 3
    let launch = |view: &ptxvm::BufferView<'_, u32>, idx: i32, val: u32| {
        store.launch(
            [1, 1, 1],
            [1, 1, 1],
            0,
            &[Arg::view(view), Arg::i32(idx), Arg::u32(val)],
            &one(),
        )
    };
    launch(&v, 1, 20).unwrap();
    assert_eq!(v.to_vec(), [1, 20, 3, 4]);
    // past the view but inside the parent: the parent's bounds apply, as for a CUDA pointer
    // into the middle of an allocation (parent elements 7 and 0)
    launch(&v, 5, 70).unwrap();
    launch(&v, -2, 99).unwrap();
    assert_eq!(parent.to_vec(), [99, 0, 1, 20, 3, 4, 0, 70, 0, 0]);
    // past the parent: a fault naming the parent buffer
    let e = launch(&v, 8, 1).unwrap_err();
    assert!(e.is_kernel_fault(), "{e:?}");
    let text = e.render();
    assert!(text.contains("out-of-bounds global access"), "{text}");
    assert!(
        text.contains("past the end of buffer #0 (") && text.contains(", 40 bytes)"),
        "{text}"
    );
    // bad ranges
    assert_eq!(
        usage(parent.view(4..11).map(|_| ())),
        "view Included(4)..Excluded(11) is outside a buffer of 10 elements"
    );
    assert!(usage(v.view(3..5).map(|_| ())).contains("outside a buffer of 4 elements"));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = parent.view(5..2).map(|_| ());
    assert!(usage(reversed).contains("outside"));
    assert!(parent.view(10..).unwrap().is_empty());
    assert_eq!(
        usage(v.copy_from(&[1])),
        "copy of 1 elements into a view of 4"
    );
}

#[test]
fn parameter_layout_gives_names_offsets_sizes_and_alignment() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "small.ptx", SMALL_NVCC).unwrap();
    let k = m.kernel("small_struct").unwrap();
    let got: Vec<(String, u64, u64, u64, bool)> = k
        .params()
        .into_iter()
        .map(|p| (p.name, p.offset, p.size, p.align, p.array))
        .collect();
    // .u32 at 0; the 8-aligned 16-byte struct at 8; the pointer at 24; 32 bytes in all
    assert_eq!(
        got,
        [
            ("small_struct_param_0".to_string(), 0, 4, 4, false),
            ("small_struct_param_1".to_string(), 8, 16, 8, true),
            ("small_struct_param_2".to_string(), 24, 8, 8, false),
        ]
    );
    assert_eq!(
        k.param_layout().unwrap(),
        (vec![(0, 4), (8, 16), (24, 8)], 32)
    );
}

#[test]
fn struct_arguments_follow_the_c_layout() {
    // struct Small { short a; char b; double c; }: 0, 2, 8; 16 bytes, alignment 8
    let s = StructArg::new().i16(-3).i8(5).f64(0.25);
    assert_eq!(s.fields(), &[(0, 2), (2, 1), (8, 8)]);
    assert_eq!((s.size(), s.align()), (16, 8));
    let mut bytes = vec![0xfd, 0xff, 5, 0, 0, 0, 0, 0];
    bytes.extend_from_slice(&0.25f64.to_le_bytes());
    assert_eq!(s.to_bytes().unwrap(), bytes);
    // an array member aligns to its element; align_next to 16 (a float4 member)
    let s = StructArg::new()
        .u8(1)
        .array(&[1.0f32, 2.0, 3.0])
        .align_next(16)
        .u32(9);
    assert_eq!(s.fields(), &[(0, 1), (4, 12), (16, 4)]);
    assert_eq!((s.size(), s.align()), (32, 16));
    assert_eq!(StructArg::new().size(), 0);
    let e = usage(StructArg::new().u8(1).field(3, &[0]).to_bytes());
    assert_eq!(
        e,
        "struct argument: field 1 has alignment 3, which is not a power of two up to 4096"
    );
    let e = usage(StructArg::new().align_next(1 << 40).u8(1).to_bytes());
    assert_eq!(
        e,
        "struct argument: alignment 1099511627776 before field 0 is not a power of two up to 4096"
    );

    let device = Device::new();
    let m = Module::from_ptx(&device, "small.ptx", SMALL_NVCC).unwrap();
    let k = m.kernel("small_struct").unwrap();
    let out = device.alloc::<f64>(1).unwrap();
    let run = |s: StructArg| {
        k.launch(
            [1, 1, 1],
            [1, 1, 1],
            0,
            &[Arg::i32(10), Arg::Struct(s), Arg::buffer(&out)],
            &one(),
        )
    };
    run(StructArg::new().i16(-3).i8(5).f64(0.25)).unwrap();
    // -3 + 5 + 0.25 + 10
    assert_eq!(out.to_vec(), [12.25]);
    let e = usage(run(StructArg::new().i16(-3).i8(5).f32(0.25)));
    assert_eq!(
        e,
        "argument 2 (`small_struct_param_1`, .b8[16]): the struct is 8 bytes (fields at offsets 0, 2, 4, alignment 4), the parameter is 16 bytes"
    );
    let e = usage(run(StructArg::new().align_next(16).i16(1).f64(2.0)));
    assert_eq!(
        e,
        "argument 2 (`small_struct_param_1`, .b8[16]): the struct needs 16-byte alignment (its largest field), the parameter is declared with 8"
    );
    // raw bytes still work
    run(StructArg::new().i16(1).i8(2).f64(3.5)).unwrap();
    assert_eq!(out.to_vec(), [16.5]);
    k.launch(
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[Arg::i32(0), Arg::Bytes(bytes), Arg::buffer(&out)],
        &one(),
    )
    .unwrap();
    assert_eq!(out.to_vec(), [2.25]);
}

#[test]
fn struct_pointer_fields_and_constant_memory_with_nvcc_output() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "struct_nvcc.ptx", STRUCT_NVCC).unwrap();
    let k = m.kernel("scale_struct").unwrap();
    m.write_global("coeffs", &[1.0f32, 2.0, 3.0]).unwrap();
    let data = device
        .from_slice(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0])
        .unwrap();
    let out = device.alloc::<f32>(6).unwrap();
    let params = StructArg::new().f32(2.0).buffer(&data).u32(5);
    assert_eq!(params.fields(), &[(0, 4), (8, 8), (16, 4)]);
    k.launch(
        [1, 1, 1],
        [8, 1, 1],
        0,
        &[Arg::Struct(params), Arg::buffer(&out)],
        &one(),
    )
    .unwrap();
    // out[i] = data[i] * 2 + coeffs[i % 3] for i < 5
    assert_eq!(out.to_vec(), [1.0, 4.0, 7.0, 7.0, 10.0, 0.0]);
    assert_eq!(data.to_vec(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(m.read_global::<u32>("counter").unwrap(), [5]);
    // a view as a struct's pointer: data[2..] seen as its own array of n = 3
    let v = data.view(2..).unwrap();
    let params = StructArg::new().f32(1.0).view(&v).u32(3);
    k.launch(
        [1, 1, 1],
        [4, 1, 1],
        0,
        &[Arg::Struct(params), Arg::buffer(&out)],
        &one(),
    )
    .unwrap();
    // out[i] = data[2 + i] * 1 + coeffs[i % 3]: 2+1, 3+2, 4+3; data[2 + i] = i
    assert_eq!(&out.to_vec()[..3], &[3.0, 5.0, 7.0]);
    assert_eq!(data.to_vec(), [0.0, 1.0, 0.0, 1.0, 2.0, 5.0]);
    assert_eq!(m.read_global::<u32>("counter").unwrap(), [8]);
}

/// The 2x1x1 cluster test of `tests/run/cluster/` (block b writes its cluster registers).
const CLUSTER_SREGS: &str = include_str!("../../../tests/run/cluster/sregs_2x1x1.ptx");

#[test]
fn launch_options_name_the_cluster_shape() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "sregs_2x1x1.ptx", CLUSTER_SREGS).unwrap();
    let kern = m.kernel("k").unwrap();
    let out = device.alloc::<u32>(32).unwrap();
    let opts = LaunchOptions {
        cluster: Some([2, 1, 1]),
        ..one()
    };
    kern.launch([4, 1, 1], [32, 1, 1], 0, &[Arg::buffer(&out)], &opts)
        .unwrap();
    // block 3: cluster 1 of 2, rank 1 of 2, explicit (by hand)
    assert_eq!(out.to_vec()[24..], [1, 2, 1, 2, 1, 2, 1, 1]);
    // without a shape: clusters of one, not explicit
    kern.launch([4, 1, 1], [32, 1, 1], 0, &[Arg::buffer(&out)], &one())
        .unwrap();
    assert_eq!(out.to_vec()[24..], [3, 4, 0, 1, 0, 1, 0, 1]);
    // refusals
    let bad = |c: [u32; 3], grid: u32, portable: bool| {
        let o = LaunchOptions {
            cluster: Some(c),
            non_portable_cluster: !portable,
            ..one()
        };
        match kern.launch([grid, 1, 1], [32, 1, 1], 0, &[Arg::buffer(&out)], &o) {
            Err(Error::Cluster(m)) => m,
            other => panic!("expected a cluster error, got {other:?}"),
        }
    };
    assert!(bad([2, 1, 1], 3, true).contains("not a multiple"));
    assert!(bad([16, 1, 1], 16, true).contains("limit of 8"));
    assert!(bad([32, 1, 1], 32, false).contains("limit of 16"));
    // 16 blocks are allowed when non-portable sizes are
    let o = LaunchOptions {
        cluster: Some([16, 1, 1]),
        non_portable_cluster: true,
        ..one()
    };
    let big = device.alloc::<u32>(16 * 8).unwrap();
    kern.launch([16, 1, 1], [32, 1, 1], 0, &[Arg::buffer(&big)], &o)
        .unwrap();
    assert_eq!(big.to_vec()[15 * 8..], [0, 1, 15, 16, 15, 16, 1, 1]);
}

#[test]
fn tensor_maps_feed_nvcc_tma_code() {
    use ptxvm::{TensorMap, TensorMapLayout};
    let device = Device::new();
    let src = include_str!("../../../tests/run/async/nvcc/tma_2d.ptx");
    let m = Module::from_ptx(&device, "tma_2d.ptx", src).unwrap();
    let k = m.kernel("tma_2d").unwrap();
    let input: Vec<f32> = (0..400).map(|v| v as f32).collect();
    let inb = device.from_slice(&input).unwrap();
    let outb = device.alloc::<f32>(64 * 16).unwrap();
    let l = TensorMapLayout::default();
    let tin = TensorMap::tiled(7, inb.addr(), &[40, 10], &[160], &[32, 8], &[1, 1], l).unwrap();
    let tout = TensorMap::tiled(7, outb.addr(), &[64, 16], &[256], &[32, 8], &[1, 1], l).unwrap();
    let args = [Arg::tensor_map(&tin), Arg::tensor_map(&tout)];
    k.launch([2, 1, 1], [256, 1, 1], 0, &args, &one()).unwrap();
    let out = outb.to_vec();
    // block b: out(32 b + x, 8 b + y) = in(16 b + x, 3 + y) * 2 + b, zeros past column 39
    assert_eq!(out[0], 240.0); // in(0, 3) = 120
    assert_eq!(out[8 * 64 + 32], 273.0); // in(16, 3) = 136
    assert_eq!(out[8 * 64 + 32 + 24], 1.0); // in(40, 3): out of bounds
    assert_eq!(out[15 * 64 + 63], 1.0); // in(47, 10): out of bounds
    assert_eq!(out[63], 0.0); // not written
                              // bytes that are not a tensor map: a fault, not an access
    let e = k
        .launch(
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[Arg::Bytes(vec![0x5a; 128]), Arg::tensor_map(&tout)],
            &one(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("not a tensor map"), "{e}");
}

/// gridDim.x is below 2^31, as on the device (issue 23: 2^31 and 2^32 - 1 were accepted and ran
/// until the timeout); the refusal comes before any block runs.
#[test]
fn grid_x_of_2_to_the_31_is_refused() {
    let device = Device::new();
    let m = Module::from_ptx(&device, "store.ptx", STORE).unwrap();
    let k = m.kernel("store").unwrap();
    let out = device.alloc::<u32>(1).unwrap();
    for gx in [1u32 << 31, u32::MAX] {
        let r = k.launch(
            [gx, 1, 1],
            [1, 1, 1],
            0,
            &[Arg::buffer(&out), Arg::i32(0), Arg::u32(5)],
            &LaunchOptions::default(),
        );
        match r {
            Err(Error::Usage(m)) => assert!(m.contains("below 2^31"), "{m}"),
            other => panic!("grid x {gx}: expected a usage error, got {other:?}"),
        }
    }
}

/// PTX text over 256 MiB is refused before it is parsed, on every path (issue 23).
#[test]
fn sources_over_256_mib_are_refused() {
    let device = Device::new();
    let mut text = String::from(".version 8.0\n.target sm_80\n");
    text.push_str(&" ".repeat(ptxvm::MAX_SOURCE_BYTES as usize));
    match Module::from_ptx(&device, "big.ptx", &text) {
        Err(Error::Usage(m)) => assert!(m.contains("256 MiB"), "{m}"),
        Err(e) => panic!("expected a usage error, got {e}"),
        Ok(_) => panic!("a 256 MiB source was loaded"),
    }
}
