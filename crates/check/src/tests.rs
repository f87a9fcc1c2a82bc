//! Unit tests: one module per diagnostic code, each with a failing and (where useful) a passing
//! input.

use crate::{check_module, CheckOptions, Checked};
use ptx_diag::Severity;

fn check_with(src: &str, target: Option<&str>) -> Checked {
    let parsed = ptx_syntax::parse(src);
    check_module(
        &parsed.module,
        &CheckOptions {
            target_override: target.map(String::from),
        },
    )
}

/// The codes reported for a kernel body under `.version 8.0 / .target sm_80`.
fn body_codes(body: &str) -> Vec<&'static str> {
    codes(&format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{body}\n}}\n"
    ))
}

fn codes(src: &str) -> Vec<&'static str> {
    check_with(src, None)
        .diagnostics
        .iter()
        .map(|d| d.code.0)
        .collect()
}

const HDR: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

macro_rules! code_test {
    ($m:ident, $code:literal, bad: $bad:expr, good: $good:expr) => {
        mod $m {
            use super::*;
            #[test]
            fn reports() {
                let got = body_codes($bad);
                assert!(got.contains(&$code), "expected {} in {:?}", $code, got);
            }
            #[test]
            fn accepts() {
                let got = body_codes($good);
                assert!(got.is_empty(), "unexpected {:?}", got);
            }
        }
    };
}

code_test!(e0101, "E0101", bad: ".reg .b32 %x;\n.reg .b32 %x;", good: ".reg .b32 %x;\n{ .reg .f32 %x; }");
code_test!(e0102, "E0102", bad: ".reg .b32 %r<2>;\nadd.u32 %r1, %r7, 1;", good: ".reg .b32 %r<8>;\nadd.u32 %r1, %r7, 1;");
code_test!(e0103, "E0103", bad: "bra $L_x;", good: "bra $L_x;\n$L_x:\nret;");
code_test!(e0104, "E0104", bad: ".reg .bf16 %h;", good: ".reg .b16 %h;");
code_test!(e0201, "E0201", bad: "ad.u32 _, 1, 2;", good: "ret;");
code_test!(e0202, "E0202", bad: ".reg .b32 %r;\n.reg .b64 %rd;\nld.foo.u32 %r, [%rd];", good: ".reg .b32 %r;\n.reg .b64 %rd;\nld.global.u32 %r, [%rd];");
code_test!(e0203, "E0203", bad: ".reg .b32 %r<3>;\nadd.s32 %r1, %r2;", good: ".reg .b32 %r<3>;\nadd.s32 %r1, %r2, %r0;");
code_test!(e0204, "E0204", bad: ".reg .b32 %r;\n.reg .f32 %f;\nadd.u32 %r, %f, 1;", good: ".reg .b32 %r;\n.reg .f32 %f;\nadd.f32 %f, %r, %f;");
code_test!(e0205, "E0205", bad: ".reg .pred %p;\n.reg .b32 %r;\nadd.s32 %r, %p, 1;", good: ".reg .pred %p;\n.reg .b32 %r;\nselp.u32 %r, 1, 0, %p;");
code_test!(e0206, "E0206", bad: ".reg .f32 %f;\nmov.f32 %f, 1;", good: ".reg .f32 %f;\nmov.f32 %f, 0f3F800000;");
code_test!(e0207, "E0207", bad: ".reg .b32 %r<3>;\n.reg .b64 %rd;\nld.global.v4.u32 {%r1, %r2}, [%rd];", good: ".reg .b32 %r<3>;\n.reg .b64 %rd;\nld.global.v2.u32 {%r1, %r2}, [%rd];");
code_test!(e0208, "E0208", bad: ".reg .b64 %rd;\nst.const.u32 [%rd], 1;", good: ".reg .b64 %rd;\nst.global.u32 [%rd], 1;");
code_test!(e0209, "E0209", bad: ".reg .b32 %r;\n.reg .f32 %f;\ncvt.s32.f32 %r, %f;", good: ".reg .b32 %r;\n.reg .f32 %f;\ncvt.rzi.s32.f32 %r, %f;\ncvt.rn.f32.s32 %f, %r;");
code_test!(e0210, "E0210", bad: ".reg .b32 %r;\nadd %r, %r, 1;", good: ".reg .b32 %r;\nadd.u32 %r, %r, 1;");
code_test!(e0211, "E0211", bad: ".reg .b32 %r;\n.reg .b64 %rd;\nld.global.u32 %r, %rd;", good: ".reg .b32 %r;\n.reg .b64 %rd;\nld.global.u32 %r, [%rd+4];");
code_test!(e0212, "E0212", bad: ".reg .f64 %d;\nadd.ftz.f64 %d, %d, %d;", good: ".reg .f32 %f;\nadd.ftz.f32 %f, %f, %f;");
code_test!(e0404, "E0404", bad: ".reg .b32 %r;\nbra %r;", good: "bra.uni $L;\n$L:");

mod header {
    use super::*;

    #[test]
    fn e0301_missing_version() {
        assert!(codes(".target sm_80\n").contains(&"E0301"));
    }

    #[test]
    fn e0302_target_not_after_version() {
        assert!(codes(".version 8.0\n.address_size 64\n.target sm_80\n").contains(&"E0302"));
        assert!(codes(".version 8.0\n").contains(&"E0302"));
        assert!(check_with(".version 8.0\n", Some("sm_80"))
            .diagnostics
            .is_empty());
    }

    #[test]
    fn e0303_unknown_target() {
        assert!(codes(".version 8.0\n.target sm_81\n").contains(&"E0303"));
        let c = check_with(HDR, Some("sm_999"));
        assert!(c.diagnostics.iter().any(|d| d.code.0 == "E0303"));
    }

    #[test]
    fn e0304_target_needs_version() {
        assert_eq!(codes(".version 6.0\n.target sm_90\n"), ["E0304"]);
        assert!(codes(".version 7.8\n.target sm_90\n").is_empty());
        assert!(codes(".version 7.8\n.target sm_90a\n").contains(&"E0304"));
    }

    #[test]
    fn e0305_address_size() {
        assert!(codes(".version 8.0\n.target sm_80\n.address_size 48\n").contains(&"E0305"));
    }

    #[test]
    fn e0308_unknown_version() {
        assert!(codes(".version 0.5\n.target sm_80\n").contains(&"E0308"));
    }

    #[test]
    fn override_replaces_target() {
        let src = format!(
            "{HDR}.entry k() {{ .reg .b32 %r; .reg .pred %p; elect.sync %r|%p, -1; ret; }}"
        );
        assert!(check_with(&src, None)
            .diagnostics
            .iter()
            .any(|d| d.code.0 == "E0307"));
        let c = check_with(&src, Some("sm_90"));
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        assert_eq!(c.target.map(|t| t.number), Some(90));
    }
}

mod gates {
    use super::*;

    #[test]
    fn e0306_needs_version() {
        let src = ".version 7.8\n.target sm_90\n.entry k() { .reg .b32 %r; .reg .pred %p; elect.sync %r|%p, -1; ret; }";
        let c = check_with(src, None);
        let d = c.diagnostics.iter().find(|d| d.code.0 == "E0306").unwrap();
        assert!(
            d.message.contains("8.0") && d.message.contains("7.8"),
            "{}",
            d.message
        );
    }

    #[test]
    fn e0307_needs_target() {
        let src = ".version 8.0\n.target sm_75\n.entry k() { .reg .b32 %r; .reg .pred %p; elect.sync %r|%p, -1; ret; }";
        let c = check_with(src, None);
        let d = c.diagnostics.iter().find(|d| d.code.0 == "E0307").unwrap();
        assert!(
            d.message.contains("sm_90") && d.message.contains("sm_75"),
            "{}",
            d.message
        );
        assert!(d.help.is_some());
    }

    #[test]
    fn e0307_feature_gate() {
        let src = ".version 8.0\n.target sm_50\n.entry k(.param .u64 p) { .reg .b64 %rd; .reg .f64 %fd; atom.global.add.f64 %fd, [%rd], %fd; ret; }";
        assert!(codes(src).contains(&"E0307"));
    }

    #[test]
    fn e0309_and_w0301_shfl() {
        let body = ".reg .b32 %r<3>;\nshfl.down.b32 %r1, %r2, 1, 31;";
        assert!(body_codes(body).contains(&"E0309"));
        let old = format!(".version 6.0\n.target sm_60\n.entry k() {{ {body} ret; }}");
        let c = check_with(&old, None);
        assert!(c
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning));
        assert!(c.diagnostics.iter().any(|d| d.code.0 == "W0301"));
    }

    #[test]
    fn w0302_maxnctapersm() {
        let src = format!("{HDR}.entry k() .maxnctapersm 2 {{ ret; }}");
        let c = check_with(&src, None);
        assert_eq!(c.diagnostics.len(), 1, "{:?}", c.diagnostics);
        assert_eq!(c.diagnostics[0].code.0, "W0302");
        assert!(!c.has_errors());
    }
}

mod calls {
    use super::*;

    const CALLEE: &str = ".func (.param .b32 r) f(.param .b32 x)\n{\nret;\n}\n";

    fn call(stmt: &str) -> Vec<&'static str> {
        codes(&format!(
            "{HDR}{CALLEE}.entry k()\n{{\n{{\n.param .b32 a;\n.param .b32 b;\n.param .b32 rv;\n{stmt}\n}}\nret;\n}}\n"
        ))
    }

    #[test]
    fn e0401_undeclared_function() {
        assert_eq!(call("call.uni g, (a);"), ["E0401"]);
    }

    #[test]
    fn e0402_argument_count() {
        assert_eq!(call("call.uni (rv), f, (a, b);"), ["E0402"]);
    }

    #[test]
    fn e0403_return_count() {
        assert_eq!(call("call.uni f, (a);"), ["E0403"]);
    }

    #[test]
    fn good_call() {
        assert!(call("call.uni (rv), f, (a);").is_empty());
    }

    #[test]
    fn e0405_malformed_call() {
        assert!(call("call.uni;").contains(&"E0405"));
    }

    /// A module with callees of several signatures and a kernel body of `body`.
    fn sig(body: &str) -> Vec<&'static str> {
        codes(&format!(
            "{HDR}.global .b32 gv;\n\
             .func (.param .b32 r) f(.param .b32 x)\n{{\nret;\n}}\n\
             .func g(.param .f32 x)\n{{\nret;\n}}\n\
             .func h(.param .align 8 .b8 v[16])\n{{\nret;\n}}\n\
             .func (.reg .b32 r) rg(.reg .b32 a)\n{{\nret;\n}}\n\
             .entry k(.param .b32 kp)\n{{\n.reg .b32 %r;\n.reg .b64 %rd;\n.reg .f32 %f;\n\
             .reg .pred %p;\n.param .b32 b32;\n.param .u32 u32;\n.param .s32 s32;\n\
             .param .f32 f32;\n.param .b64 b64;\n.param .align 8 .b32 al8;\n\
             .param .align 8 .b8 a16[16];\n.param .align 8 .b32 w16[4];\n\
             .param .align 4 .b8 a16al4[16];\n.param .align 8 .b8 a8[8];\n\
             {body}\nret;\n}}\n"
        ))
    }

    // Each case was run through ptxas (CUDA 13.5, sm_80): accepted ones give nothing here.
    #[test]
    fn e0406_arguments_follow_ptxas() {
        for ok in [
            "call (b32), f, (b32);",
            "call (b32), f, (u32);",
            "call (b32), f, (f32);",
            "call (b32), f, (%r);",
            "call (b32), f, (%f);",
            "call (b32), f, (5);",
            "call (b32), f, (1.0);",
            "call g, (b32);",
            "call g, (%r);",
            "call g, (f32);",
            "call h, (a16);",
            "call h, (w16);",
            "call (%r), rg, (b32);",
        ] {
            assert!(sig(ok).is_empty(), "{ok}: {:?}", sig(ok));
        }
        for bad in [
            "call (b32), f, (b64);",
            "call (b32), f, (%rd);",
            "call (b32), f, (%p);",
            "call (b32), f, (al8);",
            "call (b32), f, (gv);",
            "call (b32), f, (kp);",
            "call (b32), f, (a16);",
            "call g, (s32);",
            "call g, (1);",
            "call h, (a8);",
            "call h, (a16al4);",
            "call h, (b64);",
            "call h, (%rd);",
            "call h, (5);",
            "call (%r), rg, (%rd);",
        ] {
            assert_eq!(sig(bad), ["E0406"], "{bad}");
        }
    }

    #[test]
    fn e0407_results_follow_ptxas() {
        for ok in [
            "call (u32), f, (b32);",
            "call (%f), f, (b32);",
            "call (%r), f, (b32);",
        ] {
            assert!(sig(ok).is_empty(), "{ok}: {:?}", sig(ok));
        }
        for bad in [
            "call (b64), f, (b32);",
            "call (%rd), f, (b32);",
            "call (%rd), rg, (%r);",
        ] {
            assert_eq!(sig(bad), ["E0407"], "{bad}");
        }
    }

    #[test]
    fn indirect_calls_use_the_prototype_or_every_target() {
        let proto = "pr: .callprototype (.param .b32 _) _ (.param .b32 _);\n\
                     tl: .calltargets f;\ntg: .calltargets f, g;\nL:\n";
        let run = |c: &str| sig(&format!("{proto}{c}"));
        assert!(run("call (b32), %rd, (b32), pr;").is_empty());
        assert!(run("call (b32), %rd, (%r), tl;").is_empty());
        assert_eq!(run("call (b32), %rd, (b64), pr;"), ["E0406"]);
        assert_eq!(run("call (b64), %rd, (b32), pr;"), ["E0407"]);
        assert_eq!(run("call (b32), %rd, (b32, b32), pr;"), ["E0402"]);
        assert_eq!(run("call %rd, (b32), pr;"), ["E0403"]);
        assert_eq!(run("call (b32), %rd, (b64), tl;"), ["E0406"]);
        // `g` returns nothing: the result list does not fit it
        assert_eq!(run("call (b32), %rd, (b32), tg;"), ["E0403"]);
        assert_eq!(run("call (b32), %rd, (b32);"), ["E0405"]);
        assert_eq!(run("call (b32), %rd, (b32), L;"), ["E0405"]);
        assert_eq!(run("call (b32), %rd, (b32), nowhere;"), ["E0103"]);
        // a table of function addresses as the target list (ptxas takes it)
        assert!(run("call (b32), %rd, (b32), gv;").is_empty());
    }
}

mod support {
    use crate::support;
    use ptx_isa::{lookup, EntryKind, Support};

    fn of(name: &str, category: &str) -> Support {
        let e = lookup(name)
            .iter()
            .find(|e| e.category.starts_with(category))
            .unwrap_or_else(|| panic!("{name} {category}"));
        support(e)
    }

    #[test]
    fn checked_entries() {
        assert_eq!(of("add", "Integer"), Support::Yes);
        assert_eq!(of("add", "Half"), Support::Yes);
        // the supplement's .rs and sub-byte formats have no operand rule yet
        assert_eq!(of("cvt", "Data"), Support::Partial);
        assert_eq!(of("shfl", "Data"), Support::Yes);
        assert_eq!(of("bar", "Parallel"), Support::Yes);
        // from the operand roles of the table
        assert_eq!(of("prmt", "Data"), Support::Yes);
        assert_eq!(of("lop3", "Logic"), Support::Yes);
        assert_eq!(of("mbarrier", "Parallel"), Support::Yes);
        assert_eq!(of("tex", "Texture"), Support::Partial);
        assert_eq!(of(".version", "PTX Module"), Support::Yes);
        assert_eq!(of(".callprototype", "Control Flow"), Support::Yes);
        assert_eq!(of(".extern", "Linking"), Support::Partial);
        assert_eq!(of(".pragma", ""), Support::No);
        assert_eq!(of("%tid", "Special"), Support::Yes);
        // `cvt.pack` is outside the `cvt` operand rule.
        let pack = lookup("cvt")
            .iter()
            .find(|e| e.names.contains(&"cvt.pack"))
            .unwrap();
        assert_eq!(support(pack), Support::Partial);
        for e in ptx_isa::entries() {
            if e.kind == EntryKind::Instruction {
                assert_ne!(support(e), Support::No, "{}", e.title);
            }
        }
    }

    /// Every opcode the coverage table calls checked in full has a working operand rule: a
    /// form with one operand too many is rejected with E0203 (or, for `call`, E0405).
    #[test]
    fn operand_rules_exist_for_every_checked_entry() {
        let mut probed = 0;
        for e in ptx_isa::entries() {
            if e.kind != EntryKind::Instruction || support(e) != Support::Yes {
                continue;
            }
            for f in e.forms {
                if f.path == "call" {
                    continue;
                }
                let mut text = f.path.to_string();
                for s in f.slots.iter().filter(|s| !s.optional) {
                    text.push_str(s.values[0]);
                }
                let ops = ["%r"; 9].join(", ");
                // The newest version and an sm_100a target, so that no gate of a form (the
                // cvt.rs forms need PTX 8.7 and sm_100a) hides the operand rule.
                let got = super::codes(&format!(
                    ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r;\n{text} {ops};\n}}\n"
                ));
                assert!(got.contains(&"E0203"), "{text}: {got:?}");
                probed += 1;
            }
        }
        assert!(probed > 100, "{probed}");
    }
}

mod tables {
    use super::*;
    use crate::NameRef;

    #[test]
    fn side_tables_record_uses() {
        let src = format!(
            "{HDR}.global .u32 g;\n.entry k()\n{{\n.reg .b32 %r<4>;\nmov.u32 %r3, %tid.x;\n@%p bra L;\nL:\nld.global.u32 %r1, [g];\nret;\n}}\n"
        );
        let c = check_with(&src, None);
        // `%p` is undeclared
        assert_eq!(c.diagnostics.len(), 1);
        assert_eq!(c.diagnostics[0].code.0, "E0102");
        let f = &c.functions[0];
        assert_eq!(f.labels.len(), 1);
        assert!(f.uses.iter().any(|(_, r)| *r == NameRef::Special));
        assert!(f.uses.iter().any(|(_, r)| matches!(r, NameRef::Module(_))));
        assert!(f.uses.iter().any(|(_, r)| matches!(r, NameRef::Label(_))));
        assert_eq!(c.module_symbols.len(), 2);
    }

    #[test]
    fn explanations_cover_every_code() {
        // the registry (`ptx_diag::codes`) defines each code with its explanation; its own
        // test checks the whole tool's codes
        assert!(!crate::EXPLANATIONS.is_empty());
        for (c, title, text) in crate::EXPLANATIONS {
            assert!(!title.is_empty() && text.len() > 40, "{c}");
        }
    }

    #[test]
    fn partial_trees_do_not_panic() {
        for src in [
            "",
            ".version",
            ".entry k( { add.s32 %r1, ; }",
            ".version 8.0\n.target sm_80\n.entry k() { { { ld.v4 {}, [; } ",
            ".version 8.0\n.target\n.func f(.param) { call (), , (); bra; mov; cvt.rn; }",
            "}}} .reg .b32 %r<99999999999>; add",
        ] {
            let _ = check_with(src, None);
            let _ = check_with(src, Some("nonsense"));
        }
    }
}

/// Rules checked against ptxas (CUDA 13.5, sm_80) case by case: the modifiers each kind of
/// instruction takes, special-register operands, and cache hints with their policy operand.
mod ptxas_rules {
    use super::*;

    fn run(stmt: &str) -> Vec<&'static str> {
        body_codes(&format!(
            ".reg .b16 %h;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f16 %x;\n.reg .f32 %f;\n\
             .reg .f64 %fd;\n.reg .pred %p;\n{stmt}"
        ))
    }

    #[test]
    fn accepted_by_ptxas() {
        for ok in [
            "cvt.rni.f32.f32 %f, %f;",
            "cvt.f64.f32 %fd, %f;",
            "cvt.ftz.f64.f32 %fd, %f;",
            "cvt.ftz.rn.f32.f64 %f, %fd;",
            "cvt.rzi.ftz.s32.f32 %r1, %f;",
            "cvt.ftz.rn.f32.s32 %f, %r1;",
            "cvt.rn.ftz.f16.f32 %x, %f;",
            "cvt.sat.f64.f32 %fd, %f;",
            "cvt.rni.f16.f16 %x, %x;",
            "cvt.u32.u64 %r1, %clock64;",
            "cvt.u16.u32 %h, %tid.x;",
            "setp.eq.ftz.f32 %p, %f, %f;",
            "setp.eq.ftz.f16 %p, %x, %x;",
            "mad.rn.f32 %f, %f, %f, %f;",
            "mov.u16 %h, %tid.x;",
            "mov.s32 %r1, %tid.x;",
            "mov.b64 %rd1, %clock64;",
            "mov.u64 %rd1, %globaltimer;",
            "mov.u32 %r1, %envreg3;",
            "mov.u32 %r1, %gridid;",
            "mov.u16 %h, %gridid;",
            "ld.global.L2::cache_hint.b32 %r1, [%rd0], %rd2;",
            "atom.global.and.b32 %r0, [%rd0], %r1, %r2;",
            "atom.global.exch.b32 %r0, [%rd0], %r1, %r2;",
            "atom.global.add.L2::cache_hint.u32 %r0, [%rd0], %r1, %rd2;",
        ] {
            assert!(run(ok).is_empty(), "{ok}: {:?}", run(ok));
        }
    }

    #[test]
    fn rejected_by_ptxas() {
        for (bad, code) in [
            ("add.ftz.f64 %fd, %fd, %fd;", "E0212"),
            ("add.sat.f64 %fd, %fd, %fd;", "E0212"),
            ("mul.lo.ftz.s32 %r1, %r1, %r1;", "E0212"),
            ("setp.eq.ftz.b16 %p, %h, %h;", "E0212"),
            ("setp.eq.ftz.f64 %p, %fd, %fd;", "E0212"),
            ("cvt.rn.f64.f32 %fd, %f;", "E0212"),
            ("cvt.rni.f64.f32 %fd, %f;", "E0212"),
            ("cvt.rn.s32.f32 %r1, %f;", "E0212"),
            ("cvt.rni.f32.s32 %f, %r1;", "E0212"),
            ("cvt.rn.f32.f32 %f, %f;", "E0212"),
            ("cvt.rzi.f32.f64 %f, %fd;", "E0212"),
            ("cvt.rni.u16.u32 %h, %r1;", "E0212"),
            ("cvt.ftz.u32.u16 %r1, %h;", "E0212"),
            ("cvt.ftz.f16.f16 %x, %x;", "E0212"),
            ("cvt.rzi.ftz.s32.f64 %r1, %fd;", "E0212"),
            ("mad.f32 %f, %f, %f, %f;", "E0209"),
            ("mad.f64 %fd, %fd, %fd, %fd;", "E0209"),
            ("add.u32 %r1, %tid.x, 1;", "E0211"),
            ("setp.eq.u32 %p, %tid.x, 0;", "E0211"),
            ("selp.u32 %r1, %tid.x, 0, %p;", "E0211"),
            ("shfl.sync.idx.b32 %r1, %r2, %laneid, 31, -1;", "E0211"),
            ("mov.u64 %rd1, %tid.x;", "E0204"),
            ("mov.b32 %r1, %clock64;", "E0204"),
            ("mov.f32 %f, %tid.x;", "E0204"),
            ("mov.u16 %h, %laneid;", "E0204"),
            ("mov.u32 %r1, %globaltimer;", "E0204"),
            ("mov.u32 %r1, %tid;", "E0207"),
            ("ld.global.L2::cache_hint.b32 %r1, [%rd0];", "E0203"),
            ("ld.global.b32 %r1, [%rd0], %rd2;", "E0203"),
            ("atom.global.add.u32 %r0, [%rd0], %r1, %r2;", "E0203"),
            ("red.global.add.u32 [%rd0], %r1, %r2;", "E0203"),
        ] {
            assert_eq!(run(bad), [code], "{bad}");
        }
        // on sm_80 the cluster registers do not exist yet (ptxas: "Feature '%cluster_ctaid'
        // requires .target sm_90 or higher"); the width rule applies as well
        assert_eq!(run("mov.u16 %h, %cluster_ctaid.x;"), ["E0307", "E0204"]);
    }

    /// The opcode checks are skipped for a spelling that passed before, not for one that
    /// failed, and the operand checks always run.
    #[test]
    fn repeated_spellings() {
        assert_eq!(
            run("add.ftz.f64 %fd, %fd, %fd;\nadd.ftz.f64 %fd, %fd, %fd;"),
            ["E0212", "E0212"]
        );
        assert_eq!(
            run("add.f64 %fd, %fd, %fd;\nadd.f64 %fd, %fd, %f;\nadd.f64 %fd, %r1, %fd;"),
            ["E0204", "E0204"]
        );
    }

    /// `mad.f32` without rounding is the sm_1x form.
    #[test]
    fn mad_f32_without_rounding_on_sm_1x() {
        let src = ".version 1.4\n.target sm_13\n.entry k()\n{\n.reg .f32 %f;\nmad.f32 %f, %f, %f, %f;\nret;\n}\n";
        assert!(!codes(src).contains(&"E0209"), "{:?}", codes(src));
    }
}
