//! The sanitizer checks through the Rust API (`LaunchOptions::checks`): reports come back in
//! `LaunchReport::hazards`, render with `Kernel::hazard_diagnostic`, and an unchecked launch
//! of the same kernel reports nothing.

use ptxvm::{Arg, Checks, Device, HazardKind, LaunchOptions, Module};

/// Every thread writes `s[tid]` and reads `s[tid ^ 32]` (the same lane of the other warp)
/// with a barrier between when `sync` is set, none otherwise.
fn exchange(sync: bool) -> String {
    format!(
        r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry exchange(.param .u64 out)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b8 s[256];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, s;
    shl.b32 %r3, %r1, 2;
    add.s32 %r4, %r2, %r3;
    st.shared.u32 [%r4], %r1;
    {}
    xor.b32 %r5, %r3, 128;
    add.s32 %r5, %r2, %r5;
    ld.shared.u32 %r6, [%r5];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r6;
    ret;
}}
"#,
        if sync { "bar.sync 0;" } else { "" }
    )
}

fn run(sync: bool, checks: Checks) -> (Vec<u32>, Vec<ptxvm::Hazard>, Vec<String>) {
    let device = Device::new();
    let module = Module::from_ptx(&device, "exchange.ptx", &exchange(sync)).unwrap();
    let kernel = module.kernel("exchange").unwrap();
    let out = device.alloc::<u32>(64).unwrap();
    let opts = LaunchOptions {
        threads: 1,
        checks,
        ..LaunchOptions::default()
    };
    let r = kernel
        .launch([2, 1, 1], [64, 1, 1], 0, &[Arg::buffer(&out)], &opts)
        .unwrap();
    let messages = r
        .hazards
        .iter()
        .map(|h| kernel.hazard_diagnostic(h).message)
        .collect();
    (out.to_vec(), r.hazards, messages)
}

#[test]
fn races_between_warps_are_reported_once_from_the_first_block() {
    let (_, hazards, messages) = run(false, Checks::parse("race").unwrap());
    // both blocks race the same way; each site is reported once, from block 0
    assert_eq!(hazards.len(), 2, "{messages:?}");
    assert!(hazards.iter().all(|h| h.at.pos.block == [0, 0, 0]));
    let h = &hazards[0];
    // warp 0 reads s[32..64] before warp 1 writes it: warp 1's store is the second access
    assert_eq!(h.kind, HazardKind::WriteAfterRead);
    assert_eq!(h.at.pos.block, [0, 0, 0]);
    assert_eq!(h.at.pos.thread, [32, 0, 0]);
    assert_eq!(h.other.as_ref().unwrap().pos.thread, [0, 0, 0]);
    assert_eq!(h.var, Some(("s".to_string(), 128)));
    assert!(messages[0].contains("write after read"), "{}", messages[0]);
    // then warp 1 reads s[0..32], which warp 0 wrote
    assert_eq!(hazards[1].kind, HazardKind::ReadAfterWrite);
    assert_eq!(hazards[1].at.pos.thread, [32, 0, 0]);
}

#[test]
fn a_barrier_between_the_accesses_silences_it_and_results_match() {
    let (checked, hazards, _) = run(true, Checks::ALL);
    assert!(hazards.is_empty(), "{hazards:?}");
    let (plain, none, _) = run(true, Checks::NONE);
    assert!(none.is_empty());
    assert_eq!(checked, plain);
    assert_eq!(plain[0], 32);
}

#[test]
fn unchecked_launches_report_nothing() {
    let (_, hazards, _) = run(false, Checks::default());
    assert!(hazards.is_empty());
}

#[test]
fn check_lists_parse() {
    assert_eq!(Checks::parse("mem").unwrap(), Checks::NONE);
    assert_eq!(Checks::parse("all").unwrap(), Checks::ALL);
    let c = Checks::parse("race,sync").unwrap();
    assert!(c.race && c.sync && !c.init);
    assert!(Checks::parse("race,,init").is_err());
    assert!(Checks::parse("leak")
        .unwrap_err()
        .contains("unknown check `leak`"));
}
