//! Unit tests of the table as a whole (the pure helpers test themselves in their modules).

use super::*;

#[test]
fn all_sections_present() {
    // 240 sections of the reference extract and 37 of the supplement (crates/isa/data).
    assert_eq!(entries().len(), 277);
    for e in entries() {
        assert!(!e.summary.is_empty(), "{} has no summary", e.title);
        assert!(!e.anchor.is_empty());
        assert!(e.coverage.parses);
    }
}

#[test]
fn every_syntax_parses_into_forms() {
    for e in entries() {
        if e.kind == EntryKind::SpecialRegister {
            continue; // the reference gives registers no syntax block
        }
        assert!(!e.forms.is_empty(), "{} has no forms", e.title);
        for f in e.forms {
            let root = f.path.split('.').next().unwrap();
            assert!(
                e.opcode.split('/').any(|o| o == root)
                    || e.names.iter().any(|n| n.starts_with(root)),
                "{}: form path {} does not start with its opcode",
                e.title,
                f.path
            );
            for s in f.slots {
                assert!(
                    !s.values.is_empty(),
                    "{}: slot {} has no values",
                    e.title,
                    s.name
                );
            }
        }
    }
}

#[test]
fn lookup_finds_shared_opcodes() {
    let add = lookup("add");
    assert_eq!(add.len(), 5);
    assert!(add
        .iter()
        .any(|e| e.category == "Half Precision Floating Point Instructions"));
    assert_eq!(lookup("add.f32").len(), 5);
    assert_eq!(lookup("cp").len(), 13);
    assert_eq!(lookup("mov").len(), 2);
    assert_eq!(lookup("fence").len(), 1);
    assert_eq!(lookup("membar")[0].opcode, "membar/fence");
    assert_eq!(lookup(".entry").len(), 1);
    assert_eq!(lookup(".entry")[0].kind, EntryKind::Directive);
    assert_eq!(lookup("%tid")[0].kind, EntryKind::SpecialRegister);
    assert!(lookup("%entry").is_empty());
    assert_eq!(lookup("%pm5")[0].opcode, "pm0");
    assert_eq!(lookup("%envreg3")[0].opcode, "envreg<32>");
    assert!(lookup("wibble").is_empty());
    assert!(is_known_opcode("ld"));
    assert!(is_known_opcode("ld.global"));
    assert!(is_known_opcode("%laneid"));
    assert!(!is_known_opcode("lod"));
}

#[test]
fn forms_have_structure() {
    let int_add = lookup("add")
        .iter()
        .find(|e| e.category == "Integer Arithmetic Instructions")
        .unwrap();
    let f = &int_add.forms[0];
    assert_eq!(f.path, "add");
    assert_eq!(f.slots[0].name, ".type");
    assert!(f.slots[0].placeholder && !f.slots[0].optional);
    assert!(f.slots[0].values.contains(&".u16x2"));
    assert_eq!(
        f.operands.iter().map(|o| o.name).collect::<Vec<_>>(),
        ["d", "a", "b"]
    );

    let tensor = lookup("cp")
        .iter()
        .find(|e| e.names == ["cp.async.bulk.tensor"])
        .unwrap();
    let f = &tensor.forms[0];
    assert_eq!(f.path, "cp.async.bulk.tensor");
    let dim = f.slots.iter().find(|s| s.name == ".dim").unwrap();
    assert_eq!(dim.values, [".1d", ".2d", ".3d", ".4d", ".5d"]);
    assert!(f.slots.iter().any(|s| s.name == ".load_mode" && s.optional));

    let atom = &lookup("atom")[0];
    let space = atom.forms[0]
        .slots
        .iter()
        .find(|s| s.name == ".space")
        .unwrap();
    assert!(space.optional);
    assert_eq!(
        space.values,
        [".global", ".shared", ".shared::cta", ".shared::cluster"]
    );
    assert!(atom.forms[0]
        .operands
        .iter()
        .any(|o| o.name == "cache-policy" && o.optional));
    assert!(atom.forms[0].operands.iter().any(|o| o.address));

    let setp = &lookup("setp")[0];
    assert!(setp.forms[0].slots[0].values.contains(&".ltu"));
    assert!(setp.forms[1].operands[3].negatable);
}

// Gates below were read by hand from the reference notes, independently of the generator.
fn single(name: &str) -> &'static Entry {
    let found = lookup(name);
    assert_eq!(found.len(), 1, "{name}");
    &found[0]
}

fn min_target(e: &Entry) -> SmTarget {
    match e.target {
        TargetReq::Min(t) => t,
        other => panic!("{}: expected a minimum target, got {other:?}", e.title),
    }
}

#[test]
fn gates_match_the_reference() {
    let redux = single("redux");
    assert_eq!(redux.ptx, Some(PtxVersion::new(7, 0)));
    assert_eq!(min_target(redux), SmTarget::sm(80, ArchVariant::Base));

    let elect = single("elect");
    assert_eq!(elect.ptx, Some(PtxVersion::new(8, 0)));
    assert_eq!(min_target(elect), SmTarget::sm(90, ArchVariant::Base));

    // The text says PTX 6.0; ptxas 13.5 accepts fns from `.version 5.1` (and rejects it at 5.0
    // with "requires PTX ISA .version 6.0"), and the table follows ptxas.
    let fns = single("fns");
    assert_eq!(fns.ptx, Some(PtxVersion::new(5, 1)));
    assert_eq!(min_target(fns), SmTarget::sm(30, ArchVariant::Base));

    // setmaxnreg is the one arch-specific (sm_90a) instruction of the reference; ptxas 13.5
    // also takes it on the `a` and `f` targets of sm_100 and later, never on plain targets.
    let smr = single("setmaxnreg");
    assert_eq!(smr.ptx, Some(PtxVersion::new(8, 0)));
    let allows = |t: &str| smr.target.allows(&SmTarget::parse(t).unwrap());
    assert!(allows("sm_90a") && allows("sm_100a") && allows("sm_100f") && allows("sm_120a"));
    assert!(!allows("sm_90") && !allows("sm_100") && !allows("sm_89") && !allows("sm_120"));

    let alloca = single("alloca");
    assert!(alloca.preview);
    assert_eq!(alloca.ptx, Some(PtxVersion::new(7, 3)));
    assert_eq!(min_target(alloca), SmTarget::sm(52, ArchVariant::Base));

    assert_eq!(single("%clock64").ptx, Some(PtxVersion::new(2, 0)));
    assert_eq!(single("%tid").target, TargetReq::All);
    assert_eq!(single(".alias").ptx, Some(PtxVersion::new(6, 3)));

    // atom: no statement for the whole instruction, per-feature gates instead.
    // The text says PTX 1.1; ptxas 13.5 accepts `atom.global` at `.version 1.0` (.target sm_11).
    let atom = single("atom");
    assert_eq!(atom.ptx, Some(PtxVersion::new(1, 0)));
    let f64_add = atom
        .target_gates
        .iter()
        .find(|g| g.feature == "atom.add.f64")
        .unwrap();
    assert_eq!(f64_add.sm, Some(SmTarget::sm(60, ArchVariant::Base)));
    assert!(f64_add.modifiers.contains(&".f64"));
    let sem = atom
        .ptx_gates
        .iter()
        .find(|g| g.feature == ".sem qualifier")
        .unwrap();
    // The text says 6.0; ptxas 13.5 takes `atom.acquire` (any `.sem`) at `.version 5.1`.
    assert_eq!(sem.ptx, Some(PtxVersion::new(5, 1)));

    // floating-point abs: the text says f64 needs sm_13; ptxas 13.5 takes `abs.f64` on every
    // target, .target sm_10 included, so the gate holds no target.
    let abs = &lookup("abs")[0];
    let g = abs
        .target_gates
        .iter()
        .find(|g| g.feature == "abs.f64")
        .unwrap();
    assert_eq!(g.sm, None);

    // the video SIMD list with its misspelling `varvg2` still counts as the whole entry
    assert_eq!(
        min_target(single("vadd2")),
        SmTarget::sm(30, ArchVariant::Base)
    );
}

#[test]
fn suggestions() {
    assert_eq!(suggest("ad"), Some("add"));
    assert_eq!(suggest("mov"), Some("mov"));
    assert_eq!(suggest("ld.glbal"), Some("ld"));
    assert_eq!(suggest_modifier("ld", ".glbal"), Some(".global"));
    assert_eq!(suggest("shfl"), Some("shfl"));
    assert_eq!(suggest("brev1"), Some("brev"));
    assert_eq!(suggest("%lanied"), Some("laneid"));
    assert_eq!(suggest("qqqqqqqq"), None);
    assert_eq!(edit_distance("abc", "acb"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
}

#[test]
fn doc_renders_sections() {
    let add = render_doc("add").unwrap();
    assert_eq!(add.matches("reference: ").count(), 5);
    assert!(add.contains("#integer-arithmetic-instructions-add"));

    let f32 = render_doc("add.f32").unwrap();
    assert!(f32.contains("Floating Point Instructions: add"));
    assert!(!f32.contains("Integer Arithmetic Instructions: add"));
    assert!(f32.contains(".rnd"));

    let tensor = render_doc("cp.async.bulk.tensor").unwrap();
    assert_eq!(tensor.matches("reference: ").count(), 1);
    assert!(tensor.contains("introduced: PTX ISA 8.0"));
    assert!(tensor.contains("sm_90 or higher"));
    assert!(tensor.contains(
        "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#data-movement-and-conversion-instructions-cp-async-bulk-tensor"
    ));

    let entry = render_doc(".entry").unwrap();
    assert!(entry.starts_with(".entry"));
    let tid = render_doc("%tid").unwrap();
    assert!(tid.starts_with("%tid"));
    assert!(tid.contains("special-registers-tid"));

    match render_doc("ld.glbal") {
        Ok(text) => assert!(text.contains("did you mean .global")),
        Err(e) => panic!("{e}"),
    }
    let err = render_doc("ad").unwrap_err();
    assert_eq!(
        err,
        DocError::Unknown {
            query: "ad".into(),
            did_you_mean: Some("add".into())
        }
    );
    assert_eq!(err.to_string(), "unknown opcode `ad`; did you mean `add`?");
    assert_eq!(
        render_doc("lod.glbal").unwrap_err().to_string(),
        "unknown opcode `lod.glbal`; did you mean `ld.global`?"
    );
    assert_eq!(render_doc(" "), Err(DocError::Empty));
}

#[test]
fn list_and_coverage() {
    let list = render_list(None);
    assert_eq!(list.lines().count(), 277);
    assert!(list
        .lines()
        .any(|l| l.starts_with("elect ") && l.contains("8.0")));
    let cov = render_list(Some(&Stages::PARSE_ONLY));
    assert!(cov
        .lines()
        .all(|l| l.contains("parse:yes") && l.contains("check:-") && l.contains("exec:-")));
    let md = coverage_markdown(&Stages::PARSE_ONLY);
    assert!(md.starts_with("# PTX ISA coverage"));
    assert!(md.contains("277 sections: 277 parse, 0 check, 0 execute."));
    assert_eq!(md.lines().filter(|l| l.starts_with("| [`")).count(), 277);
}

/// The columns are what the stages report, entry by entry; totals count partial support apart.
#[test]
fn coverage_columns_come_from_the_stages() {
    let check = |e: &Entry| match e.opcode {
        "add" => Support::Yes,
        "ld" => Support::Partial,
        _ => Support::No,
    };
    let stages = Stages {
        check: &check,
        execute: &|e: &Entry| {
            if e.opcode == "exit" {
                Support::Yes
            } else {
                Support::No
            }
        },
    };
    let md = coverage_markdown(&stages);
    let n_ld = lookup("ld").iter().filter(|e| e.opcode == "ld").count();
    assert!(md.contains(&format!(
        "277 sections: 277 parse, 5 check (and {n_ld} in part), 1 execute."
    )));
    let row = |name: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| [`{name}`]")))
            .unwrap()
            .to_string()
    };
    assert!(row("add").ends_with("| yes | yes | - |"));
    assert!(row("ld").ends_with("| yes | partial | - |"));
    assert!(row("exit").ends_with("| yes | - | yes |"));
    let list = render_list(Some(&stages));
    assert!(list
        .lines()
        .any(|l| l.starts_with("exit ") && l.contains("check:-       exec:yes")));
}

#[test]
fn doc_error_is_small() {
    assert!(std::mem::size_of::<DocError>() <= 56);
}

#[test]
fn slot_values_split_into_modifiers() {
    let parts = |v| modifier_parts(v).collect::<Vec<_>>();
    assert_eq!(parts(".xorsign.abs"), [".xorsign", ".abs"]);
    assert_eq!(parts(".async.shared::cta"), [".async", ".shared::cta"]);
    assert_eq!(parts(".L2::cache_hint"), [".L2::cache_hint"]);
    assert_eq!(
        parts(".mbarrier::complete_tx::bytes"),
        [".mbarrier::complete_tx::bytes"]
    );
    assert_eq!(parts("16"), ["16"]);
    assert!(parts("").is_empty());
    let max = lookup("max")
        .iter()
        .find(|e| e.category == "Floating Point Instructions")
        .unwrap();
    assert!(max.forms[0].accepts_all(&[".xorsign", ".abs", ".f32"]));
    assert!(!max.forms[1].accepts_all(&[".xorsign"]));
}

// The supplement (crates/isa/data/supplement.json): instructions of PTX ISA 9.x that the
// reference extract lacks, with the versions and targets read by hand from the ISA text.
#[test]
fn supplement_sections_are_in_the_table() {
    for name in [
        "bfind",
        "bfi",
        "bmsk",
        "ldmatrix",
        "stmatrix",
        "movmatrix",
        "wmma.load",
        "wmma.store",
        "wmma.mma",
        "mma",
        "mma.sp",
        "wgmma.fence",
        "wgmma.commit_group",
        "wgmma.wait_group",
        "wgmma.mma_async",
        "wgmma.mma_async.sp",
        "tcgen05.alloc",
        "tcgen05.dealloc",
        "tcgen05.ld",
        "tcgen05.mma",
        "tcgen05.commit",
        "tensormap.replace",
        "tensormap.cp_fenceproxy",
        "clusterlaunchcontrol.try_cancel",
        "clusterlaunchcontrol.query_cancel",
        "st.bulk",
    ] {
        let root = name.split('.').next().unwrap();
        assert!(
            lookup(root)
                .iter()
                .any(|e| e.names.contains(&name) && !e.forms.is_empty() && !e.summary.is_empty()),
            "{name} is not in the table"
        );
    }
    // anchors of the official document that are not derived from the title
    assert_eq!(
        section("wmma", "wmma.load").anchor,
        "warp-level-matrix-instructions-wmma-ld"
    );
    assert_eq!(
        section("tcgen05", "tcgen05.cp").anchor,
        "tcgen05-instructions-tcgen05-cp"
    );
    assert_eq!(
        single("bfind").anchor,
        "integer-arithmetic-instructions-bfind"
    );
    // the non-sync warp operations sit beside their .sync sections
    assert_eq!(lookup("vote").len(), 2);
    assert_eq!(lookup("shfl").len(), 2);
}

fn section(root: &str, name: &str) -> &'static Entry {
    lookup(root)
        .iter()
        .find(|e| e.names.contains(&name))
        .unwrap_or_else(|| panic!("no section {name}"))
}

#[test]
fn supplement_gates() {
    let sm = |s: &str| SmTarget::parse(s).unwrap();
    let bmsk = single("bmsk");
    assert_eq!(bmsk.ptx, Some(PtxVersion::new(7, 6)));
    assert_eq!(min_target(bmsk), SmTarget::sm(70, ArchVariant::Base));
    assert_eq!(single("bfind").ptx, Some(PtxVersion::new(2, 0)));

    // wgmma is arch-specific: sm_90a, not sm_90 and not sm_100a.
    let wg = section("wgmma", "wgmma.mma_async");
    assert_eq!(wg.ptx, Some(PtxVersion::new(8, 0)));
    assert!(wg.target.allows(&sm("sm_90a")));
    assert!(!wg.target.allows(&sm("sm_90")));
    let f = &wg.forms[0];
    assert_eq!(f.path, "wgmma.mma_async");
    let shape = f.slots.iter().find(|s| s.name == ".shape16").unwrap();
    assert_eq!(shape.values.len(), 32);
    assert_eq!(shape.values[31], ".m64n256k16");

    let tc = section("tcgen05", "tcgen05.mma");
    assert_eq!(tc.ptx, Some(PtxVersion::new(8, 6)));
    assert!(tc.target.allows(&sm("sm_100a")));
    assert!(!tc.target.allows(&sm("sm_90a")));

    // mma: the whole instruction from 6.4/sm_70, shapes and types gated one by one.
    let mma = section("mma", "mma");
    assert_eq!(mma.ptx, Some(PtxVersion::new(6, 4)));
    assert_eq!(min_target(mma), SmTarget::sm(70, ArchVariant::Base));
    let e4m3 = mma
        .target_gates
        .iter()
        .find(|g| g.modifiers == [".e4m3"])
        .unwrap();
    assert_eq!(e4m3.sm, Some(SmTarget::sm(89, ArchVariant::Base)));
    let sp = section("mma", "mma.sp");
    assert_eq!(sp.ptx, Some(PtxVersion::new(7, 1)));
    assert_eq!(min_target(sp), SmTarget::sm(80, ArchVariant::Base));

    // .b128 forms extend the reference sections of ld, st, mov and atom.
    let atom = single("atom");
    let b128 = atom
        .ptx_gates
        .iter()
        .find(|g| g.modifiers == [".b128"])
        .unwrap();
    assert_eq!(b128.ptx, Some(PtxVersion::new(8, 3)));
    let b128 = atom
        .target_gates
        .iter()
        .find(|g| g.modifiers == [".b128"])
        .unwrap();
    assert_eq!(b128.sm, Some(SmTarget::sm(90, ArchVariant::Base)));
    assert!(atom
        .forms
        .iter()
        .any(|f| f.accepts_all(&[".exch", ".b128"])));
    let ld = section("ld", "ld");
    assert!(ld
        .forms
        .iter()
        .any(|f| f.accepts_all(&[".global", ".v8", ".f32"])));
    let v4 = ld
        .ptx_gates
        .iter()
        .find(|g| g.modifiers == [".v4", ".b64"])
        .unwrap();
    assert_eq!(v4.ptx, Some(PtxVersion::new(8, 8)));
    let mov = lookup("mov");
    assert!(mov
        .iter()
        .any(|e| e.forms.iter().any(|f| f.accepts_all(&[".b128"]))));

    // the newer cvt formats
    let cvt = section("cvt", "cvt");
    assert!(cvt
        .forms
        .iter()
        .any(|f| f.accepts_all(&[".rn", ".satfinite", ".e2m1x2", ".f32"])));
    let ue8m0 = cvt
        .target_gates
        .iter()
        .find(|g| g.modifiers == [".ue8m0x2"])
        .unwrap();
    // The text says sm_100a; ptxas 13.5 also takes the .ue8m0x2 conversions on sm_100f (and
    // the other families' a/f targets), and the table follows ptxas.
    assert_eq!(ue8m0.sm.unwrap().to_string(), "sm_100f");
}

#[test]
fn any_of_target_gates() {
    // ptxas 13.5 takes the .b8 ldmatrix/stmatrix shapes on the sm_100, sm_110 and sm_120
    // families: each gate is a run of alternatives, met by any of its targets
    for (root, name, feature) in [
        ("ldmatrix", "ldmatrix", "Support for .m8n16"),
        ("ldmatrix", "ldmatrix", "Support for .m16n16"),
        ("ldmatrix", "ldmatrix", "Support for .b8"),
        ("stmatrix", "stmatrix", "Support for .m16n8"),
        ("stmatrix", "stmatrix", "Support for .b8"),
    ] {
        let e = section(root, name);
        let run = e
            .target_gate_runs()
            .find(|r| r[0].feature == feature)
            .unwrap_or_else(|| panic!("{name}: no gate {feature}"));
        let allows = |t: &str| {
            let t = SmTarget::parse(t).unwrap();
            run.iter().any(|g| t.supports(&g.sm.unwrap()))
        };
        for t in [
            "sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f", "sm_120a", "sm_121f",
        ] {
            assert!(allows(t), "{name} {feature} on {t}");
        }
        for t in ["sm_90a", "sm_100", "sm_110", "sm_120", "sm_121"] {
            assert!(!allows(t), "{name} {feature} on {t}");
        }
    }
}

/// The CUDA C++ names of `ptxvm doc`: every PTX query of the table is documented, the extra
/// ones show other sections than the first, no CUDA name is also a PTX name (so the order of
/// the two look-ups never matters), and no name is listed twice.
#[test]
fn cuda_names_point_at_documented_ptx() {
    let mut seen = std::collections::HashSet::new();
    for c in CUDA_NAMES {
        assert!(!c.doc.is_empty(), "{:?}", c.names);
        let first = render_doc(c.doc[0]).unwrap_or_else(|e| panic!("{:?}: {e}", c.names));
        for q in &c.doc[1..] {
            let other = render_doc(q).unwrap_or_else(|e| panic!("{:?}: {e}", c.names));
            assert_ne!(
                first.lines().next(),
                other.lines().next(),
                "{:?}: `{q}` shows the same section as `{}`",
                c.names,
                c.doc[0]
            );
        }
        for name in c.names {
            assert!(seen.insert(*name), "{name} listed twice");
            for ptx in [name.to_string(), format!(".{name}"), format!("%{name}")] {
                assert!(lookup(&ptx).is_empty(), "{name} is also the PTX name {ptx}");
            }
            assert!(
                render_doc(name)
                    .unwrap()
                    .starts_with(&format!("{name} (CUDA C++) compiles to ")),
                "{name}"
            );
        }
    }
}

#[test]
fn cuda_names_as_users_type_them() {
    let sync = render_doc("__syncthreads").unwrap();
    let mut lines = sync.lines();
    assert_eq!(
        lines.next(),
        Some("__syncthreads (CUDA C++) compiles to `bar.sync 0` (the same as `barrier.sync.aligned 0`).")
    );
    assert_eq!(lines.next(), Some(""));
    // then the section of bar.sync itself
    assert!(lines.next().unwrap().starts_with("bar — "), "{sync}");
    assert!(sync.contains("bar{.cta}.sync a{, b};"), "{sync}");
    // with the call's parentheses, a namespace, a member of a built-in variable
    assert!(render_doc("__syncthreads()")
        .unwrap()
        .starts_with("__syncthreads() (CUDA C++)"));
    assert!(render_doc("nvcuda::wmma::mma_sync")
        .unwrap()
        .contains("compiles to `wmma.mma.sync.aligned`"));
    assert!(render_doc("threadIdx.x")
        .unwrap()
        .contains("(`threadIdx.x` is `%tid.x`)"));
    // extra sections are named
    assert!(render_doc("__launch_bounds__")
        .unwrap()
        .contains("See also `ptxvm doc .minnctapersm`, `ptxvm doc .maxclusterrank`."));
    // a misspelt CUDA name gets the CUDA name
    assert_eq!(
        render_doc("__syncthread").unwrap_err().to_string(),
        "unknown opcode `__syncthread`; did you mean `__syncthreads`?"
    );
    assert_eq!(
        render_doc("atomicCas").unwrap_err().to_string(),
        "unknown opcode `atomicCas`; did you mean `atomicCAS`?"
    );
    assert_eq!(
        cuda_name("__shfl_down_sync()").map(|c| c.doc),
        Some(&["shfl.sync"][..])
    );
    assert!(cuda_name("__nosuch").is_none());
}
