//! Module header rules: `.version` first, `.target` next, `.address_size` 32 or 64.

use crate::codes;
use crate::CheckOptions;
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{ArchKind, ArchVariant, PtxVersion, SmTarget};
use ptx_syntax::ast::{Directive, Module};

/// What the header fixes for the rest of the check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub version: Option<PtxVersion>,
    pub target: Option<SmTarget>,
    pub address_size: u32,
}

/// Target options that may follow the architecture in `.target`.
const TARGET_OPTIONS: &[&str] = &[
    "texmode_unified",
    "texmode_independent",
    "debug",
    "map_f64_to_f32",
];

/// The architectures ptxas knows, with the PTX version that introduced each.
const ARCHS: &[(u32, (u16, u16))] = &[
    (10, (1, 0)),
    (11, (1, 0)),
    (12, (1, 2)),
    (13, (1, 2)),
    (20, (2, 0)),
    (21, (2, 0)),
    (30, (3, 0)),
    (32, (4, 0)),
    (35, (3, 1)),
    (37, (4, 1)),
    (50, (4, 0)),
    (52, (4, 1)),
    (53, (4, 2)),
    (60, (5, 0)),
    (61, (5, 0)),
    (62, (5, 0)),
    (70, (6, 0)),
    (72, (6, 1)),
    (75, (6, 3)),
    (80, (7, 0)),
    (86, (7, 1)),
    (87, (7, 4)),
    (88, (9, 0)),
    (89, (7, 8)),
    (90, (7, 8)),
    (100, (8, 6)),
    (101, (8, 6)),
    (103, (8, 8)),
    (110, (9, 0)),
    (120, (8, 7)),
    (121, (8, 8)),
];

/// The PTX version that introduced `t` (an `a` suffix needs 8.0 for sm_90a, the family suffix
/// `f` 8.8), or `None` for an unknown architecture.
pub(crate) fn min_version_for(t: &SmTarget) -> Option<PtxVersion> {
    let (_, (maj, min)) = ARCHS.iter().find(|(n, _)| *n == t.number)?;
    let base = PtxVersion::new(*maj, *min);
    Some(match t.variant {
        ArchVariant::Base => base,
        ArchVariant::ArchSpecific if t.number == 90 => PtxVersion::new(8, 0),
        ArchVariant::ArchSpecific => base,
        ArchVariant::FamilySpecific => base.max(PtxVersion::new(8, 8)),
    })
}

fn arch_names() -> String {
    ARCHS
        .iter()
        .filter(|(n, _)| *n >= 50)
        .map(|(n, _)| format!("sm_{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_arch(text: &str) -> Option<SmTarget> {
    let t = SmTarget::parse(text)?;
    if !text.starts_with("sm_") && !text.starts_with("compute_") {
        return None;
    }
    if t.kind == ArchKind::Compute && t.variant != ArchVariant::Base && t.number < 90 {
        return None;
    }
    ARCHS.iter().any(|(n, _)| *n == t.number).then_some(t)
}

fn skippable(d: &Directive) -> bool {
    matches!(d, Directive::Preprocessor(_) | Directive::Dwarf(_))
}

fn span_of(d: &Directive) -> Span {
    match d {
        Directive::Version { loc, .. }
        | Directive::Target { loc, .. }
        | Directive::AddressSize { loc, .. }
        | Directive::Alias { loc, .. } => loc.0,
        Directive::File(f) => f.loc.0,
        Directive::Section(s) => s.loc.0,
        Directive::Dwarf(w) | Directive::Preprocessor(w) => w.loc.0,
        Directive::Pragma(p) => p.loc.0,
        Directive::Variable(v) => v.loc.0,
        Directive::Function(f) => f.name.loc.0,
        Directive::DebugLoc(l) => l.loc.0,
    }
}

/// Checks the header and returns the version and target that gate the rest of the module.
pub(crate) fn check_header(
    module: &Module,
    opts: &CheckOptions,
    diags: &mut Vec<Diagnostic>,
) -> Header {
    let mut h = Header {
        version: None,
        target: None,
        address_size: 64,
    };
    let dirs: Vec<&Directive> = module.directives.iter().filter(|d| !skippable(d)).collect();
    let mut target_span = None;
    let mut seen_version: Option<Span> = None;
    let mut seen_target: Option<Span> = None;
    let mut seen_addr: Option<Span> = None;
    // Without a `.version` (`.target`) at all, only that is reported, not the order of the rest.
    let any_version = dirs.iter().any(|d| matches!(d, Directive::Version { .. }));
    let any_target = dirs.iter().any(|d| matches!(d, Directive::Target { .. }));
    for (i, d) in dirs.iter().enumerate() {
        match d {
            Directive::Version { major, minor, loc } => {
                if let Some(prev) = seen_version {
                    diags.push(
                        Diagnostic::error(
                            codes::VERSION_DIRECTIVE,
                            "`.version` appears twice",
                            loc.0,
                        )
                        .with_label_message("second `.version`")
                        .with_secondary(prev, "first declared here")
                        .with_help("a module has exactly one `.version`, its first directive"),
                    );
                    continue;
                }
                seen_version = Some(loc.0);
                if i != 0 {
                    diags.push(
                        Diagnostic::error(
                            codes::VERSION_DIRECTIVE,
                            "`.version` must be the first directive of the module",
                            loc.0,
                        )
                        .with_secondary(span_of(dirs[0]), "this comes before it")
                        .with_help("move `.version` to the top of the file"),
                    );
                }
                if *major == 0 || *major > 9 || *minor > 9 {
                    diags.push(
                        Diagnostic::error(
                            codes::UNKNOWN_VERSION,
                            format!("unknown PTX ISA version {major}.{minor}"),
                            loc.0,
                        )
                        .with_help("PTX ISA versions run from 1.0 to 9.x (e.g. `.version 8.0`)"),
                    );
                } else {
                    h.version = u16::try_from(*major)
                        .ok()
                        .zip(u16::try_from(*minor).ok())
                        .map(|(a, b)| PtxVersion::new(a, b));
                }
            }
            Directive::Target { targets, loc } => {
                if let Some(prev) = seen_target {
                    diags.push(
                        Diagnostic::error(
                            codes::TARGET_DIRECTIVE,
                            "`.target` appears twice",
                            loc.0,
                        )
                        .with_secondary(prev, "first declared here")
                        .with_help("a module has exactly one `.target`"),
                    );
                    continue;
                }
                seen_target = Some(loc.0);
                target_span = Some(loc.0);
                if any_version && (i == 0 || !matches!(dirs[i - 1], Directive::Version { .. })) {
                    diags.push(
                        Diagnostic::error(
                            codes::TARGET_DIRECTIVE,
                            "`.target` must directly follow `.version`",
                            loc.0,
                        )
                        .with_help("write `.version X.Y` then `.target sm_XX` at the top"),
                    );
                }
                let mut arch_seen = false;
                for w in targets {
                    let text = w.text.as_str();
                    if TARGET_OPTIONS.contains(&text) {
                        continue;
                    }
                    match parse_arch(text) {
                        Some(t) if !arch_seen => {
                            arch_seen = true;
                            h.target = Some(t);
                        }
                        Some(_) => diags.push(
                            Diagnostic::error(
                                codes::TARGET_DIRECTIVE,
                                "`.target` names more than one architecture",
                                w.loc.0,
                            )
                            .with_help("keep one `sm_XX`; options such as `debug` may follow it"),
                        ),
                        None => diags.push(
                            Diagnostic::error(
                                codes::UNKNOWN_TARGET,
                                format!("unknown target `{text}`"),
                                w.loc.0,
                            )
                            .with_label_message("not a known architecture or target option")
                            .with_help(format!(
                                "use one of {} (optionally with an `a`/`f` suffix), or an \
                                 option: {}",
                                arch_names(),
                                TARGET_OPTIONS.join(", ")
                            )),
                        ),
                    }
                }
            }
            Directive::AddressSize { bits, loc } => {
                if let Some(prev) = seen_addr {
                    diags.push(
                        Diagnostic::error(
                            codes::ADDRESS_SIZE,
                            "`.address_size` appears twice",
                            loc.0,
                        )
                        .with_secondary(prev, "first declared here")
                        .with_help("write `.address_size` once, after `.target`"),
                    );
                    continue;
                }
                seen_addr = Some(loc.0);
                if *bits != 32 && *bits != 64 {
                    diags.push(
                        Diagnostic::error(
                            codes::ADDRESS_SIZE,
                            format!("`.address_size {bits}` is not supported"),
                            loc.0,
                        )
                        .with_help("`.address_size` is 32 or 64"),
                    );
                } else {
                    h.address_size = *bits;
                }
                if any_target && (i == 0 || !matches!(dirs[i - 1], Directive::Target { .. })) {
                    diags.push(
                        Diagnostic::error(
                            codes::ADDRESS_SIZE,
                            "`.address_size` must directly follow `.target`",
                            loc.0,
                        )
                        .with_help("write `.address_size 64` right after `.target`"),
                    );
                }
            }
            _ => {}
        }
    }
    let file_start = dirs.first().map_or(Span::at(0), |d| span_of(d));
    // ptxas notices a missing `.version` (`.target`) at the first directive that is not a
    // `.target` (`.version`), and names that line.
    let first_other = |skip: fn(&Directive) -> bool| {
        dirs.iter()
            .find(|d| !skip(d))
            .map_or(file_start, |d| span_of(d))
    };
    if seen_version.is_none() {
        diags.push(
            Diagnostic::error(
                codes::VERSION_DIRECTIVE,
                "the module has no `.version`",
                first_other(|d| matches!(d, Directive::Target { .. })),
            )
            .with_label_message("`.version` is missing before this")
            .with_help("start the module with `.version 8.0` (or the version you target)"),
        );
    }
    if seen_target.is_none() && opts.target_override.is_none() && seen_version.is_some() {
        diags.push(
            Diagnostic::error(
                codes::TARGET_DIRECTIVE,
                "the module has no `.target`",
                first_other(|d| matches!(d, Directive::Version { .. })),
            )
            .with_label_message("`.target` is missing before this")
            .with_help("add `.target sm_XX` after `.version`, or pass `--target sm_XX`"),
        );
    }
    if let Some(o) = &opts.target_override {
        match parse_arch(o) {
            Some(t) => h.target = Some(t),
            None => diags.push(
                Diagnostic::error(
                    codes::UNKNOWN_TARGET,
                    format!("unknown target `{o}` given with --target"),
                    target_span.unwrap_or(file_start),
                )
                .with_help(format!("use one of {}", arch_names())),
            ),
        }
    }
    if let (Some(v), Some(t)) = (h.version, h.target) {
        if let Some(need) = min_version_for(&t) {
            if v < need {
                let span = target_span.or(seen_version).unwrap_or(file_start);
                diags.push(
                    Diagnostic::error(
                        codes::TARGET_NEEDS_VERSION,
                        format!("PTX .version {v} does not support .target {t}"),
                        span,
                    )
                    .with_label_message(format!("{t} needs PTX ISA {need} or later"))
                    .with_help(format!(
                        "raise `.version` to {need} or later, or choose a target that PTX {v} \
                         supports"
                    )),
                );
            }
        }
    }
    h
}
