//! `Kernel::launch_raw_streaming`: a launch from the parameter buffer as laid out in parameter
//! space (what libcuda hands over), exactly the kernel's parameter size.

use ptxvm::{Device, Error, LaunchOptions, Module};

const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
.visible .entry k(.param .u64 out, .param .u32 a, .param .u64 b)\n{\n\
\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<2>;\n\
\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [a];\n\tld.param.u64 %rd2, [b];\n\
\tcvt.u64.u32 %rd3, %r1;\n\tadd.u64 %rd3, %rd3, %rd2;\n\tst.global.u64 [%rd1], %rd3;\n\tret;\n}\n";

#[test]
fn a_launch_from_the_laid_out_parameter_buffer() {
    let device = Device::new();
    let module = Module::from_ptx(&device, "k.ptx", PTX).unwrap();
    let k = module.kernel("k").unwrap();
    // out at 0 (8 bytes), a at 8 (4 bytes), b at 16 (8-aligned): 24 bytes
    let (layout, size) = k.param_layout().unwrap();
    assert_eq!((layout, size), (vec![(0, 8), (8, 4), (16, 8)], 24));
    let out = device.alloc::<u64>(1).unwrap();
    let mut params = vec![0u8; 24];
    params[0..8].copy_from_slice(&out.addr().to_le_bytes());
    params[8..12].copy_from_slice(&7u32.to_le_bytes());
    params[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let mut sink = Vec::new();
    let opts = LaunchOptions::default();
    k.launch_raw_streaming([1, 1, 1], [1, 1, 1], 0, &params, &opts, None, &mut sink)
        .unwrap();
    assert_eq!(out.to_vec(), vec![(1u64 << 40) + 7]);
    // a buffer of another size is refused, naming both sizes
    match k.launch_raw_streaming(
        [1, 1, 1],
        [1, 1, 1],
        0,
        &params[..20],
        &opts,
        None,
        &mut sink,
    ) {
        Err(Error::Usage(m)) => assert!(m.contains("24 bytes of parameters, 20 given"), "{m}"),
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
}
