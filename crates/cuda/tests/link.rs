//! The JIT linker (`cuda::link`) on the PTX pairs under tests/link/: extern resolution by name,
//! private names kept apart, an undefined reference, numba's C-ABI prototype mismatch (linked
//! through an adapter, with a warning), a by-value array of another size, two definitions.
//! Each linked module is run by the runtime and its output compared with values worked out
//! by hand in the test files' comments.

use cuda::link::{link, Input};
use ptxvm::{Arg, Device, LaunchOptions, Module};

fn input(name: &str) -> Input {
    let path = format!("{}/tests/link/{name}", env!("CARGO_MANIFEST_DIR"));
    Input {
        name: name.to_string(),
        text: std::fs::read_to_string(path).unwrap(),
    }
}

/// Runs kernel `k(out)` of `ptx` on one block of `n` threads and returns `out`.
fn run(ptx: &str, n: usize) -> Vec<u32> {
    let device = Device::new();
    let module =
        Module::from_ptx(&device, "linked", ptx).unwrap_or_else(|e| panic!("{}", e.render()));
    let out = device.alloc::<u32>(n).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(
            [1, 1, 1],
            [n as u32, 1, 1],
            0,
            &[Arg::buffer(&out)],
            &LaunchOptions::default(),
        )
        .unwrap();
    out.to_vec()
}

#[test]
fn an_extern_resolves_to_another_inputs_definition_and_private_names_stay_apart() {
    let l = link(&[input("caller.ptx"), input("callee.ptx")], false).unwrap();
    assert!(l.info.is_empty(), "{}", l.info);
    // out[i] = times3(i) + helper(i) = 3i + (i + 1000)
    let want: Vec<u32> = (0..8).map(|i| 4 * i + 1000).collect();
    assert_eq!(run(&l.ptx, 8), want);
    // the order of inputs does not matter
    let l = link(&[input("callee.ptx"), input("caller.ptx")], false).unwrap();
    assert_eq!(run(&l.ptx, 8), want);
}

#[test]
fn an_undefined_reference_is_a_link_error_naming_the_input_and_place() {
    let e = link(&[input("unresolved.ptx")], false).unwrap_err();
    assert!(
        e.contains("undefined reference to `missing` in unresolved.ptx"),
        "{e}"
    );
    assert!(e.contains("unresolved.ptx:6:"), "{e}");
}

#[test]
fn numbas_c_abi_prototype_mismatch_links_through_an_adapter_with_a_warning() {
    let l = link(&[input("cabi_caller.ptx"), input("cabi_callee.ptx")], false).unwrap();
    assert!(
        l.info.contains("prototype doesn't match for `consume`"),
        "{}",
        l.info
    );
    assert!(
        l.info.contains("cabi_caller.ptx:7:") && l.info.contains("cabi_callee.ptx:6:"),
        "{}",
        l.info
    );
    // consume(&out[i]) stores 42
    assert_eq!(run(&l.ptx, 4), vec![42; 4]);
}

#[test]
fn a_by_value_array_of_another_size_passes_its_common_prefix() {
    let l = link(
        &[input("array_caller.ptx"), input("array_callee.ptx")],
        false,
    )
    .unwrap();
    assert!(
        l.info.contains("prototype doesn't match for `take`"),
        "{}",
        l.info
    );
    let device = Device::new();
    let m =
        Module::from_ptx(&device, "linked", &l.ptx).unwrap_or_else(|e| panic!("{}", e.render()));
    m.kernel("k")
        .unwrap()
        .launch([1, 1, 1], [1, 1, 1], 0, &[], &LaunchOptions::default())
        .unwrap();
}

#[test]
fn two_strong_definitions_are_a_link_error_naming_both() {
    let e = link(
        &[
            input("callee.ptx"),
            input("caller.ptx"),
            input("callee.ptx"),
        ],
        false,
    )
    .unwrap_err();
    assert!(e.contains("multiple definition of `times3`"), "{e}");
    assert_eq!(e.matches("callee.ptx:17:32").count(), 2, "{e}");
}

#[test]
fn device_runtime_functions_stay_declared_when_libcudadevrt_is_linked() {
    let text = input("unresolved.ptx")
        .text
        .replace("missing", "cudaCGGetIntrinsicHandle");
    let i = Input {
        name: "cg.ptx".to_string(),
        text,
    };
    assert!(link(std::slice::from_ref(&i), false).is_err());
    let l = link(&[i], true).unwrap();
    assert!(l
        .ptx
        .contains(".extern .func (.param .b32 r) cudaCGGetIntrinsicHandle"));
}

#[test]
fn extern_shared_memory_is_dynamic_shared_memory_not_a_reference() {
    // numba declares its dynamic shared arrays `.extern .shared`
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
                .extern .shared .align 4 .b8 smem[];\n\
                .visible .entry k() { .reg .b64 %rd1; mov.u64 %rd1, smem; ret; }\n";
    let i = Input {
        name: "smem.ptx".to_string(),
        text: text.to_string(),
    };
    let l = link(&[i], false).unwrap();
    assert!(l.ptx.contains(".extern .shared .align 4 .b8 smem[];"));
}

#[test]
fn an_extern_global_variable_resolves_to_another_inputs_definition() {
    let user = ".version 8.0\n.target sm_80\n.address_size 64\n\
                .extern .global .align 4 .u32 g;\n\
                .visible .entry k(.param .u64 out)\n\
                { .reg .b32 %r1; .reg .b64 %rd<3>; mov.u32 %r1, %tid.x;\n\
                  ld.global.u32 %r1, [g]; ld.param.u64 %rd1, [out];\n\
                  mov.u32 %r1, %r1; st.global.u32 [%rd1], %r1; ret; }\n";
    let def = ".version 8.0\n.target sm_80\n.address_size 64\n\
               .visible .global .align 4 .u32 g = 1234;\n";
    let i = |n: &str, t: &str| Input {
        name: n.to_string(),
        text: t.to_string(),
    };
    let e = link(&[i("user.ptx", user)], false).unwrap_err();
    assert!(e.contains("undefined reference to `g` in user.ptx"), "{e}");
    let l = link(&[i("user.ptx", user), i("def.ptx", def)], false).unwrap();
    // every thread stores g's 1234 to out[0]
    assert_eq!(run(&l.ptx, 1), vec![1234]);
}
