//! The text of kernel faults: where they say the kernel was.

use ptxvm::{Arg, Device, LaunchOptions, Module};

/// Runs kernel `k` of `ptx` with a 4-word buffer and `i`, expecting a fault; its rendered text.
fn fault(ptx: &str, i: u32) -> String {
    let device = Device::new();
    let module = Module::from_ptx(&device, "t.ptx", ptx).expect("the module loads");
    let buf = device.alloc::<u32>(4).expect("allocates");
    let kernel = module.kernel("k").expect("kernel k");
    let args = [Arg::buffer(&buf), Arg::u32(i)];
    let e = kernel
        .launch([1, 1, 1], [1, 1, 1], 0, &args, &LaunchOptions::default())
        .expect_err("the kernel faults");
    assert!(e.is_kernel_fault(), "{}", e.render());
    e.render()
}

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"stencil.cu\"\n\
    .visible .entry k(.param .u64 buf, .param .u32 i)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<5>;\n";

#[test]
fn line_zero_takes_the_last_real_line_and_the_location_is_shown_once() {
    let ptx = format!(
        "{HEAD}\t.loc 1 12 5\n\tld.param.u64 %rd1, [buf];\n\t.loc 1 0 0\n\tst.global.u32 [%rd1+64], 1;\n\tret;\n}}\n"
    );
    let text = fault(&ptx, 0);
    assert!(text.contains("CUDA source: stencil.cu:12:5"), "{text}");
    assert!(!text.contains(":0:0"), "{text}");
    assert!(!text.contains("= at "), "{text}");
    assert_eq!(text.matches("t.ptx:").count(), 1, "{text}");
}

#[test]
fn line_zero_before_any_real_line_gives_no_cuda_line() {
    let ptx = format!(
        "{HEAD}\t.loc 1 0 0\n\tld.param.u64 %rd1, [buf];\n\tst.global.u32 [%rd1+64], 1;\n\tret;\n}}\n"
    );
    let text = fault(&ptx, 0);
    assert!(!text.contains("CUDA source"), "{text}");
    assert!(text.contains("t.ptx:11:2"), "{text}");
}
