//! Compiling is bounded (issue 23, item 5): a launch's time limit covers compiling its kernel,
//! and a kernel with many registers live at once compiles in time linear in its size (the
//! dead-copy pass used to take quadratic time: 50k registers 2.9 s, 200k 60 s). The figures
//! live in `cargo bench -p ptxvm --bench pipeline -- compile`; here the limit's behaviour and
//! a large kernel's result.

use ptxvm::{Arg, Device, Error, LaunchOptions, Module};
use std::time::Duration;

/// A kernel that sets `n` registers, all live until a loop-free sum reads them:
/// `sum(1..=n)` in `out[0]` (mod 2^32).
fn many_live_registers(n: usize) -> String {
    let mut s = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n\
         \t.reg .b32 %r<{}>;\n\t.reg .b64 %rd1;\n",
        n + 1
    );
    for i in 1..=n {
        s.push_str(&format!("\tmov.u32 %r{i}, {i};\n"));
    }
    s.push_str("\tmov.u32 %r0, 0;\n");
    for i in 1..=n {
        s.push_str(&format!("\tadd.u32 %r0, %r0, %r{i};\n"));
    }
    s.push_str("\tld.param.u64 %rd1, [out];\n\tst.global.u32 [%rd1], %r0;\n\tret;\n}\n");
    s
}

#[test]
fn the_launch_time_limit_covers_compiling() {
    let device = Device::new();
    let module = Module::from_ptx(&device, "big.ptx", &many_live_registers(5_000)).unwrap();
    let k = module.kernel("k").unwrap();
    let out = device.alloc::<u32>(1).unwrap();
    // a limit already past when decoding ends: the compile gives up, as a timeout
    let opts = LaunchOptions {
        timeout: Some(Duration::from_nanos(1)),
        ..LaunchOptions::default()
    };
    match k.launch([1, 1, 1], [1, 1, 1], 0, &[Arg::buffer(&out)], &opts) {
        Err(Error::Kernel { diagnostic, .. }) => {
            assert_eq!(diagnostic.code.0, "E0607");
            assert!(
                diagnostic
                    .message
                    .contains("compiling kernel `k` took longer"),
                "{}",
                diagnostic.message
            );
        }
        other => panic!("expected a compile timeout, got {:?}", other.map(|_| ())),
    }
    // nothing was cached: with the default limit the same kernel compiles and runs
    k.launch(
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[Arg::buffer(&out)],
        &LaunchOptions::default(),
    )
    .unwrap();
    assert_eq!(out.to_vec(), vec![5_000 * 5_001 / 2]);
    // compiled once, the kernel is not compiled again under a later limit
    k.launch([1, 1, 1], [1, 1, 1], 0, &[Arg::buffer(&out)], &opts)
        .map(drop)
        .or_else(|e| match e {
            // the run itself may meet the 1 ns limit; a compile timeout may not recur
            Error::Kernel { diagnostic, .. } if !diagnostic.message.contains("compiling") => Ok(()),
            e => Err(e),
        })
        .unwrap();
    // compile_within answers the same way
    let fresh = Module::from_ptx(&device, "big.ptx", &many_live_registers(5_000)).unwrap();
    let k2 = fresh.kernel("k").unwrap();
    assert!(k2.compile_within(Some(Duration::from_nanos(1))).is_err());
    assert!(k2.compile_within(None).is_ok());
}

#[test]
fn forty_thousand_live_registers_compile_and_sum() {
    let n = 40_000u64;
    let device = Device::new();
    let module = Module::from_ptx(&device, "big.ptx", &many_live_registers(n as usize)).unwrap();
    let k = module.kernel("k").unwrap();
    let out = device.alloc::<u32>(1).unwrap();
    k.launch(
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[Arg::buffer(&out)],
        &LaunchOptions::default(),
    )
    .unwrap();
    assert_eq!(out.to_vec(), vec![(n * (n + 1) / 2) as u32]);
}
