//! Itanium C++ demangling of kernel names (nvcc and clang mangle every kernel not declared
//! `extern "C"`: `fill(int*, int)` is `_Z4fillPii`), so that `--kernel fill` can find it and a
//! wrong name gets a did-you-mean in C++ terms.
//!
//! A subset of the ABI, enough for kernels: plain, nested (`_ZN2ns4fillE…`, `std::`) and
//! template names (`_Z6kernelIfEvPT_i`, `kernel<float>`), and parameter types built from the
//! builtin types, pointers, references, cv-qualifiers, class names, template parameters and
//! substitutions. Anything else (operator names, function and member pointer types, local
//! names, …) leaves the parameter list out ([`Demangled::signature`] is `None`); a name whose
//! function name cannot be read is not demangled at all. We keep our own instead of a crate
//! (`cpp_demangle`) because this is all `ptxvm` needs of it: a name to match and to show.

/// A demangled function name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demangled {
    /// The qualified name without template arguments: `ns::fill`, `kernel`.
    pub qualified: String,
    /// With template arguments and parameter types, as c++filt shows it without the return
    /// type: `ns::fill(int*, int)`, `kernel<float>(float*, int)`; `None` when the parameter
    /// types use what this demangler does not read.
    pub signature: Option<String>,
}

impl Demangled {
    /// The function's own name, the last component of [`Demangled::qualified`]: `fill`.
    pub fn base(&self) -> &str {
        self.qualified
            .rsplit("::")
            .next()
            .unwrap_or(&self.qualified)
    }

    /// The signature, else the qualified name.
    pub fn shown(&self) -> &str {
        self.signature.as_deref().unwrap_or(&self.qualified)
    }
}

/// Demangles `symbol` when it is an Itanium-mangled function name (`_Z…`).
pub fn demangle(symbol: &str) -> Option<Demangled> {
    let rest = symbol.strip_prefix("_Z")?;
    let mut p = Parser {
        s: rest.as_bytes(),
        pos: 0,
        subs: Vec::new(),
        template_args: Vec::new(),
    };
    let name = p.name()?;
    p.template_args = name.template_args.clone().unwrap_or_default();
    let qualified = name.parts.join("::");
    let mut full = qualified.clone();
    if let Some(args) = &name.template_args {
        full += &format_template_args(args);
    }
    // the rest is the parameter types, after the return type for a template function
    let signature = (|| {
        if name.template_args.is_some() {
            p.ty()?;
        }
        let mut params = Vec::new();
        while p.pos < p.s.len() {
            // a `.` starts a clone suffix (`_Z1fv.cold`)
            if p.peek() == Some(b'.') {
                break;
            }
            params.push(p.ty()?);
        }
        if params.is_empty() {
            return None;
        }
        let list = if params == ["void"] {
            String::new()
        } else {
            params.join(", ")
        };
        Some(format!("{full}({list})"))
    })();
    Some(Demangled {
        qualified,
        signature,
    })
}

fn format_template_args(args: &[String]) -> String {
    let list = args.join(", ");
    // `a<b<c> >` was C++03's spelling; c++filt writes `a<b<c> >` too
    if list.ends_with('>') {
        format!("<{list} >")
    } else {
        format!("<{list}>")
    }
}

/// A function's name: its components and its template arguments.
struct Name {
    parts: Vec<String>,
    template_args: Option<Vec<String>>,
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    /// Substitution candidates, in order (`S_`, `S0_`, …).
    subs: Vec<String>,
    /// The function's template arguments (`T_`, `T0_`, …).
    template_args: Vec<String>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }

    /// `<length><identifier>`.
    fn source_name(&mut self) -> Option<String> {
        let len = self.number()?;
        let end = self.pos.checked_add(len).filter(|&e| e <= self.s.len())?;
        let id = std::str::from_utf8(&self.s[self.pos..end]).ok()?;
        self.pos = end;
        // ABI tags (`B2v1`, as Numba writes them) are left out of the name
        while self.peek() == Some(b'B') && self.s.get(self.pos + 1).is_some_and(u8::is_ascii_digit)
        {
            self.pos += 1;
            let len = self.number()?;
            self.pos = self.pos.checked_add(len).filter(|&e| e <= self.s.len())?;
        }
        Some(if id.starts_with("_GLOBAL__N") {
            "(anonymous namespace)".to_string()
        } else {
            id.to_string()
        })
    }

    /// `S_`, `S<base-36>_` (after the `S`), or an abbreviation (`St` handled by the caller).
    fn substitution(&mut self) -> Option<String> {
        let abbreviation = match self.peek()? {
            b'a' => Some("std::allocator"),
            b'b' => Some("std::basic_string"),
            b's' => Some("std::string"),
            b'i' => Some("std::istream"),
            b'o' => Some("std::ostream"),
            b'd' => Some("std::iostream"),
            _ => None,
        };
        if let Some(a) = abbreviation {
            self.pos += 1;
            return Some(a.to_string());
        }
        let mut index = 0usize;
        if !self.eat(b'_') {
            while let Some(b) = self.peek() {
                self.pos += 1;
                let digit = match b {
                    b'0'..=b'9' => usize::from(b - b'0'),
                    b'A'..=b'Z' => usize::from(b - b'A') + 10,
                    b'_' => break,
                    _ => return None,
                };
                index = index.checked_mul(36)?.checked_add(digit)?;
            }
            index += 1;
        }
        self.subs.get(index).cloned()
    }

    /// `T_`, `T<n>_` (after the `T`).
    fn template_param(&mut self) -> Option<String> {
        let index = if self.eat(b'_') {
            0
        } else {
            let n = self.number()? + 1;
            self.eat(b'_').then_some(n)?
        };
        self.template_args.get(index).cloned()
    }

    /// `I <arg>+ E` (after the `I`).
    fn template_args(&mut self) -> Option<Vec<String>> {
        let mut args = Vec::new();
        while !self.eat(b'E') {
            args.push(self.template_arg()?);
        }
        Some(args)
    }

    fn template_arg(&mut self) -> Option<String> {
        if self.eat(b'J') {
            // an argument pack
            let mut args = Vec::new();
            while !self.eat(b'E') {
                args.push(self.template_arg()?);
            }
            return Some(args.join(", "));
        }
        if self.eat(b'L') {
            // a literal: `Li256E`, `Lj4E`, `Lb1E`
            let ty = self.ty()?;
            let negative = self.eat(b'n');
            let value = self.number()?;
            if !self.eat(b'E') {
                return None;
            }
            let sign = if negative { "-" } else { "" };
            return Some(match ty.as_str() {
                "bool" => (if value == 0 { "false" } else { "true" }).to_string(),
                "int" => format!("{sign}{value}"),
                "unsigned int" => format!("{value}u"),
                "long" => format!("{sign}{value}l"),
                "unsigned long" => format!("{value}ul"),
                "long long" => format!("{sign}{value}ll"),
                "unsigned long long" => format!("{value}ull"),
                other => format!("({other}){sign}{value}"),
            });
        }
        self.ty()
    }

    /// The function's name (or, under [`Parser::ty`], a nested type name). Each prefix that
    /// another component follows is a substitution candidate; the whole name is not (a type's
    /// is added by [`Parser::ty`]).
    fn name(&mut self) -> Option<Name> {
        if self.eat(b'N') {
            // cv- and ref-qualifiers of a member function
            while matches!(self.peek(), Some(b'r' | b'V' | b'K' | b'R' | b'O')) {
                self.pos += 1;
            }
            let mut parts: Vec<String> = Vec::new();
            let mut template_args = None;
            // whether `parts` is a new candidate once another component follows
            let mut pending = false;
            loop {
                if self.eat(b'E') {
                    break;
                }
                if template_args.is_some() {
                    // template arguments end the name
                    return None;
                }
                if pending {
                    self.subs.push(parts.join("::"));
                }
                if self.eat(b'S') {
                    if !parts.is_empty() {
                        return None;
                    }
                    if self.eat(b't') {
                        parts.push("std".to_string());
                        pending = false;
                    } else {
                        parts.push(self.substitution()?);
                        pending = false;
                    }
                    continue;
                }
                if self.eat(b'I') {
                    if parts.is_empty() {
                        return None;
                    }
                    template_args = Some(self.template_args()?);
                    pending = false;
                    continue;
                }
                parts.push(self.source_name()?);
                pending = true;
            }
            if parts.is_empty() || parts == ["std"] {
                return None;
            }
            return Some(Name {
                parts,
                template_args,
            });
        }
        let mut parts = Vec::new();
        if self.s[self.pos..].starts_with(b"St") {
            self.pos += 2;
            parts.push("std".to_string());
        }
        parts.push(self.source_name()?);
        let mut template_args = None;
        if self.eat(b'I') {
            // an unscoped template name is a substitution candidate
            self.subs.push(parts.join("::"));
            template_args = Some(self.template_args()?);
        }
        Some(Name {
            parts,
            template_args,
        })
    }

    /// One type; adds the substitution candidates it makes.
    fn ty(&mut self) -> Option<String> {
        let b = self.peek()?;
        self.pos += 1;
        let builtin = match b {
            b'v' => Some("void"),
            b'w' => Some("wchar_t"),
            b'b' => Some("bool"),
            b'c' => Some("char"),
            b'a' => Some("signed char"),
            b'h' => Some("unsigned char"),
            b's' => Some("short"),
            b't' => Some("unsigned short"),
            b'i' => Some("int"),
            b'j' => Some("unsigned int"),
            b'l' => Some("long"),
            b'm' => Some("unsigned long"),
            b'x' => Some("long long"),
            b'y' => Some("unsigned long long"),
            b'n' => Some("__int128"),
            b'o' => Some("unsigned __int128"),
            b'f' => Some("float"),
            b'd' => Some("double"),
            b'e' => Some("long double"),
            b'g' => Some("__float128"),
            b'z' => Some("..."),
            _ => None,
        };
        if let Some(t) = builtin {
            return Some(t.to_string());
        }
        let made = match b {
            b'D' => {
                let t = match self.peek()? {
                    b'h' => "half",
                    b'n' => "decltype(nullptr)",
                    b's' => "char16_t",
                    b'i' => "char32_t",
                    b'u' => "char8_t",
                    _ => return None,
                };
                self.pos += 1;
                return Some(t.to_string());
            }
            b'P' => format!("{}*", self.ty()?),
            b'R' => format!("{}&", self.ty()?),
            b'O' => format!("{}&&", self.ty()?),
            b'K' | b'V' | b'r' => {
                let q = match b {
                    b'K' => "const",
                    b'V' => "volatile",
                    _ => "restrict",
                };
                let inner = self.ty()?;
                format!("{inner} {q}")
            }
            b'T' => {
                let t = self.template_param()?;
                if self.eat(b'I') {
                    let args = self.template_args()?;
                    format!("{t}{}", format_template_args(&args))
                } else {
                    t
                }
            }
            b'S' => {
                if self.eat(b't') {
                    let mut t = format!("std::{}", self.source_name()?);
                    self.subs.push(t.clone());
                    if self.eat(b'I') {
                        let args = self.template_args()?;
                        t += &format_template_args(&args);
                    } else {
                        return Some(t);
                    }
                    t
                } else {
                    let t = self.substitution()?;
                    if !self.eat(b'I') {
                        // a substitution is not a new candidate
                        return Some(t);
                    }
                    let args = self.template_args()?;
                    format!("{t}{}", format_template_args(&args))
                }
            }
            b'N' => {
                self.pos -= 1;
                let name = self.name()?;
                let mut t = name.parts.join("::");
                if let Some(args) = &name.template_args {
                    t += &format_template_args(args);
                }
                t
            }
            b'0'..=b'9' => {
                self.pos -= 1;
                let mut t = self.source_name()?;
                if self.eat(b'I') {
                    self.subs.push(t.clone());
                    let args = self.template_args()?;
                    t += &format_template_args(&args);
                }
                t
            }
            _ => return None,
        };
        self.subs.push(made.clone());
        Some(made)
    }
}

/// A kernel's name as messages show it: a mangled one with its C++ signature,
/// `_Z4fillPii (fill(int*, int))`.
pub fn shown_kernel(name: &str) -> String {
    match demangle(name) {
        Some(d) => format!("{name} ({})", d.shown()),
        None => name.to_string(),
    }
}

/// The kernel of `kernels` (the module's `.entry` names; the module is `file` in messages) that
/// `--kernel wanted` means: the one with exactly that name, else the one kernel whose C++ name
/// is `wanted` — its function name (`fill`), qualified name (`ns::fill`), name with template
/// arguments (`kernel<float>`) or whole signature (`fill(int*, int)`, spaces ignored). Several
/// kernels with that C++ name (overloads, template instances) are an error listing them;
/// no match lists the kernels with a did-you-mean.
pub fn find_kernel(kernels: &[String], wanted: &str, file: &str) -> Result<String, String> {
    if kernels.iter().any(|k| k == wanted) {
        return Ok(wanted.to_string());
    }
    let squash = |s: &str| -> String { s.chars().filter(|c| !c.is_whitespace()).collect() };
    let w = squash(wanted);
    let cpp_names = |k: &str| -> Vec<String> {
        let Some(d) = demangle(k) else {
            return Vec::new();
        };
        let mut names = vec![d.base().to_string(), d.qualified.clone()];
        if let Some(sig) = &d.signature {
            names.push(squash(sig));
            // the name with template arguments, before the parameter list
            if let Some(open) = sig.rfind('(') {
                names.push(squash(&sig[..open]));
            }
        }
        names
    };
    let matches: Vec<&String> = kernels
        .iter()
        .filter(|k| cpp_names(k).contains(&w))
        .collect();
    match matches.as_slice() {
        [one] => return Ok((*one).clone()),
        [] => {}
        many => {
            let list: Vec<String> = many.iter().map(|k| shown_kernel(k)).collect();
            return Err(format!(
                "--kernel {wanted}: {} kernels of {file} have this C++ name: {}; give the one to run by its mangled name",
                many.len(),
                list.join(", ")
            ));
        }
    }
    let list: Vec<String> = kernels.iter().map(|k| shown_kernel(k)).collect();
    let mut msg = format!(
        "no kernel named `{wanted}` in {file}; it has: {}",
        if list.is_empty() {
            "no kernels".to_string()
        } else {
            list.join(", ")
        }
    );
    // the nearest kernel by its mangled or C++ names, within a third of the name's length
    let limit = (wanted.chars().count() / 3).max(1);
    let nearest = kernels
        .iter()
        .filter_map(|k| {
            let mut names = cpp_names(k);
            names.push(k.clone());
            let d = names.iter().map(|n| ptx_isa::edit_distance(&w, n)).min()?;
            (d <= limit).then_some((d, k))
        })
        .min_by_key(|(d, _)| *d);
    if let Some((_, k)) = nearest {
        msg += &format!("\nhelp: did you mean `{}`?", shown_kernel(k));
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(symbol: &str) -> Option<String> {
        demangle(symbol).and_then(|d| d.signature)
    }

    /// Expected strings are c++filt's output for each symbol with its return type dropped.
    #[test]
    fn kernels_nvcc_mangles() {
        assert_eq!(sig("_Z4fillPii").as_deref(), Some("fill(int*, int)"));
        assert_eq!(
            sig("_Z6vecAddPKfS0_Pfi").as_deref(),
            Some("vecAdd(float const*, float const*, float*, int)")
        );
        assert_eq!(sig("_Z1kv").as_deref(), Some("k()"));
        assert_eq!(
            sig("_ZN2ns4fillEPii").as_deref(),
            Some("ns::fill(int*, int)")
        );
        assert_eq!(
            sig("_ZN5outer5inner1kEPS_").as_deref(),
            Some("outer::inner::k(outer*)")
        );
        assert_eq!(
            sig("_Z6kernelIfEvPT_i").as_deref(),
            Some("kernel<float>(float*, int)")
        );
        assert_eq!(
            sig("_Z6reduceILi256EEvPKfPf").as_deref(),
            Some("reduce<256>(float const*, float*)")
        );
        assert_eq!(
            sig("_Z4axpyIdLj4EEvT_PKS0_PS0_").as_deref(),
            Some("axpy<double, 4u>(double, double const*, double*)")
        );
        assert_eq!(
            sig("_ZN12_GLOBAL__N_16kernelEPy").as_deref(),
            Some("(anonymous namespace)::kernel(unsigned long long*)")
        );
        assert_eq!(
            sig("_Z3absP6__halfS0_").as_deref(),
            Some("abs(__half*, __half*)")
        );
        assert_eq!(
            sig("_ZN3foo3barIiEEvPNS_3bazE").as_deref(),
            Some("foo::bar<int>(foo::baz*)")
        );
        assert_eq!(
            sig("_ZN2ns6kernelIfEEvPT_").as_deref(),
            Some("ns::kernel<float>(float*)")
        );
        assert_eq!(
            sig("_Z1fRKSt6vectorIiSaIiEE").as_deref(),
            Some("f(std::vector<int, std::allocator<int> > const&)")
        );
    }

    /// `PTXVM_DEMANGLE_LIST=FILE`: prints each symbol of FILE (one a line) with its
    /// demangling, to compare with c++filt by hand.
    #[test]
    fn list_from_env() {
        let Ok(path) = std::env::var("PTXVM_DEMANGLE_LIST") else {
            return;
        };
        for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
            let d = demangle(line.trim());
            println!("{}\t{}", line.trim(), d.as_ref().map_or("-", |d| d.shown()));
        }
    }

    #[test]
    fn names_and_bases() {
        let d = demangle("_ZN2ns4fillEPii").unwrap();
        assert_eq!(d.qualified, "ns::fill");
        assert_eq!(d.base(), "fill");
        let t = demangle("_Z6kernelIfEvPT_i").unwrap();
        assert_eq!(t.qualified, "kernel");
        // a parameter type this demangler does not read: the name still comes out
        let f = demangle("_Z5applyPFviE").unwrap();
        assert_eq!(f.qualified, "apply");
        assert_eq!(f.signature, None);
        assert_eq!(f.shown(), "apply");
    }

    #[test]
    fn not_mangled_or_broken() {
        for s in [
            "fill",
            "_Z",
            "_Z9fill",
            "_ZN4fillE",
            "_ZN3abcI",
            "_Z4fillS5_",
            "_ZN3abc",
        ] {
            assert!(
                demangle(s).is_none_or(|d| d.signature.is_none()),
                "{s}: {:?}",
                demangle(s)
            );
        }
        assert_eq!(demangle("fill"), None);
        assert_eq!(demangle("_Z99x"), None);
    }

    #[test]
    fn kernels_are_found_by_their_cpp_names() {
        let ks: Vec<String> = [
            "_Z4fillPii",
            "_ZN2ns5scaleEPff",
            "_Z6kernelIfEvPT_i",
            "plain",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let find = |w: &str| find_kernel(&ks, w, "m.ptx");
        for (wanted, kernel) in [
            ("_Z4fillPii", "_Z4fillPii"),
            ("fill", "_Z4fillPii"),
            ("fill(int*, int)", "_Z4fillPii"),
            ("fill(int*,int)", "_Z4fillPii"),
            ("scale", "_ZN2ns5scaleEPff"),
            ("ns::scale", "_ZN2ns5scaleEPff"),
            ("kernel", "_Z6kernelIfEvPT_i"),
            ("kernel<float>", "_Z6kernelIfEvPT_i"),
            ("plain", "plain"),
        ] {
            assert_eq!(find(wanted).as_deref(), Ok(kernel), "{wanted}");
        }
        assert_eq!(
            find("fil"),
            Err(
                "no kernel named `fil` in m.ptx; it has: _Z4fillPii (fill(int*, int)), \
                 _ZN2ns5scaleEPff (ns::scale(float*, float)), _Z6kernelIfEvPT_i \
                 (kernel<float>(float*, int)), plain\n\
                 help: did you mean `_Z4fillPii (fill(int*, int))`?"
                    .to_string()
            )
        );
        assert!(find("plan")
            .unwrap_err()
            .ends_with("help: did you mean `plain`?"));
        assert!(!find("zzzzzz").unwrap_err().contains("did you mean"));
        let overloads: Vec<String> = vec!["_Z4fillPii".into(), "_Z4fillPfi".into()];
        assert_eq!(
            find_kernel(&overloads, "fill", "m.ptx"),
            Err("--kernel fill: 2 kernels of m.ptx have this C++ name: _Z4fillPii (fill(int*, int)), \
                 _Z4fillPfi (fill(float*, int)); give the one to run by its mangled name"
                .to_string())
        );
        assert_eq!(
            find_kernel(&overloads, "fill(float*, int)", "m.ptx").as_deref(),
            Ok("_Z4fillPfi")
        );
    }
}
