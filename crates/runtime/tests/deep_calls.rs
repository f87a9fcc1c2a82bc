//! A long static call chain (issue 23, item 3): the launch's stack-need walk and the
//! compiler's recursion analysis are iterative and linear, so a 5,000-deep chain of `.func`
//! calls neither overflows a 256 KiB host stack nor takes quadratic time. Launched with the
//! default stack size it is refused with the documented resource error (5,000 frames need more
//! than a thread's 512 KiB); with the stack raised it runs.

use ptxvm::{Device, Error, LaunchOptions, Module};

fn chain(n: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for i in (0..n).rev() {
        s.push_str(&format!(".func f{i}()\n{{\n"));
        if i + 1 < n {
            s.push_str(&format!("\tcall f{}, ();\n", i + 1));
        }
        s.push_str("\tret;\n}\n");
    }
    s.push_str(".visible .entry k(.param .u64 out)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r1;\n");
    s.push_str("\tcall f0, ();\n\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, 7;\n");
    s.push_str("\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n");
    s
}

#[test]
fn a_deep_static_call_chain_is_refused_or_run_without_host_recursion() {
    let outcome = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let device = Device::new();
            let module = Module::from_ptx(&device, "chain.ptx", &chain(12_000)).expect("loads");
            let k = module.kernel("k").expect("kernel");
            let out = device.alloc::<u32>(1).expect("alloc");
            let refused = k.launch(
                [1, 1, 1],
                [1, 1, 1],
                0,
                &[ptxvm::Arg::buffer(&out)],
                &LaunchOptions::default(),
            );
            let opts = LaunchOptions {
                stack_size: 1 << 20,
                ..LaunchOptions::default()
            };
            let ran = k.launch([1, 1, 1], [1, 1, 1], 0, &[ptxvm::Arg::buffer(&out)], &opts);
            (refused.map(|_| ()), ran.map(|_| ()), out.to_vec())
        })
        .expect("spawn")
        .join()
        .expect("no stack overflow");
    match outcome.0 {
        Err(Error::Usage(m)) => assert!(m.contains("bytes of local memory per thread"), "{m}"),
        other => panic!("expected the resource refusal, got {other:?}"),
    }
    assert!(outcome.1.is_ok(), "{:?}", outcome.1.err());
    assert_eq!(outcome.2, vec![7]);
}
