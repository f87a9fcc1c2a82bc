//! A [`Module`]: PTX text parsed, checked, lowered and loaded onto a device, and its
//! [`Kernel`]s.

use ptx_diag::{Diagnostic, SourceFile};
use ptx_interp::compile::{compile_with, func_addr, CompileOptions, GlobalAddrs};
use ptx_interp::mem::Allocation;
use ptx_interp::program::Program;
use ptx_ir::SymbolRef;
use ptx_isa::{ScalarType, StateSpace};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::invalid;
use crate::{Device, Error};

/// The most bytes of PTX source a module may have, on every path (files, text, libcuda
/// images): 256 MiB.
pub const MAX_SOURCE_BYTES: u64 = 256 << 20;

/// A PTX module loaded on a device.
pub struct Module {
    pub(crate) device: Device,
    pub(crate) file: SourceFile,
    pub(crate) ir: Arc<ptx_ir::Module>,
    pub(crate) globals: GlobalAddrs,
    _allocs: Vec<Arc<Allocation>>,
    pub(crate) programs: Mutex<HashMap<u32, Arc<Program>>>,
    /// Kernels compiled for checked launches (`LaunchOptions::checks`): without rewrites and
    /// instrumented, with whether the init check covers shared memory.
    pub(crate) checked: Mutex<HashMap<(u32, ptx_interp::exec::Checks), CheckedProgram>>,
    /// How its kernels are compiled ([`Module::set_compile_options`]).
    compile_opts: CompileOptions,
}

/// A kernel compiled for a checked launch, and whether the init check covers its shared memory.
pub(crate) type CheckedProgram = (Arc<Program>, bool);

/// A kernel parameter as declared.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    /// Name.
    pub name: String,
    /// Element type (`None` for opaque types).
    pub ty: Option<ScalarType>,
    /// The type as written.
    pub type_name: String,
    /// Size in bytes.
    pub size: u64,
    /// Declared as an array (`.b8 p[16]`): a by-value struct, passed with
    /// [`Arg::Struct`](crate::Arg::Struct) or [`Arg::Bytes`](crate::Arg::Bytes).
    pub array: bool,
    /// Byte offset in the kernel's parameter buffer: the previous parameter's end rounded up
    /// to this parameter's alignment (the layout `cuLaunchKernel`'s `extra` buffer uses).
    pub offset: u64,
    /// Alignment in bytes: `.align A` when declared, else the type's size.
    pub align: u64,
}

/// One kernel of a module.
pub struct Kernel<'m> {
    pub(crate) module: &'m Module,
    pub(crate) index: u32,
}

/// The three dimensions of a `.reqntid`/`.maxntid` directive (missing ones are 1).
pub(crate) fn dims(args: &[u64]) -> [u64; 3] {
    [0, 1, 2].map(|k| args.get(k).copied().unwrap_or(1))
}

impl Module {
    /// Parses, checks, lowers and loads `text`. `name` is used in messages.
    pub fn from_ptx(device: &Device, name: &str, text: &str) -> Result<Module, Error> {
        if text.len() as u64 > MAX_SOURCE_BYTES {
            return Err(Error::Usage(format!(
                "{name}: {} bytes of PTX, more than the 256 MiB ptxvm reads as PTX source",
                text.len()
            )));
        }
        let file = SourceFile::new(name, text);
        let parsed = ptx_syntax::parse(text);
        if ptx_diag::has_errors(&parsed.diagnostics) {
            return Err(invalid(&file, parsed.diagnostics));
        }
        let checked = ptx_check::check_module(&parsed.module, &ptx_check::CheckOptions::default());
        if checked.has_errors() {
            let mut d = checked.diagnostics;
            d.retain(Diagnostic::is_error);
            return Err(invalid(&file, d));
        }
        // lowering reads the checker's name resolution: one resolver
        let ir = ptx_ir::lower(&parsed.module, &checked).map_err(|d| invalid(&file, d))?;
        let problems = ptx_ir::verify(&ir);
        if !problems.is_empty() {
            return Err(Error::Usage(format!(
                "internal error: the lowered IR is invalid: {}",
                problems.join("; ")
            )));
        }
        // allocate .global and .const variables
        let mut addr = vec![0u64; ir.globals.len()];
        let mut allocs = Vec::new();
        {
            let mut mem = device.mem.lock().unwrap_or_else(|e| e.into_inner());
            for (i, g) in ir.globals.iter().enumerate() {
                if !matches!(g.space, StateSpace::Global | StateSpace::Const) {
                    continue;
                }
                if g.external && g.init.is_empty() && g.size == 0 {
                    continue;
                }
                let a = mem
                    .alloc(
                        g.size.max(1),
                        g.space == StateSpace::Const,
                        format!("{} `{}`", g.space.suffix(), g.name),
                    )
                    .map_err(|e| Error::Memory(e.0))?;
                addr[i] = a.base;
                allocs.push(a);
            }
        }
        // initial values, with symbol addresses patched in
        let mut k = 0;
        for (i, g) in ir.globals.iter().enumerate() {
            if addr[i] == 0 {
                continue;
            }
            let a = &allocs[k];
            k += 1;
            if g.init.is_empty() {
                continue;
            }
            let mut bytes = g.init.clone();
            for r in &g.relocs {
                let target = match r.target {
                    SymbolRef::Global(t) => addr.get(t.index()).copied().unwrap_or(0),
                    SymbolRef::Function(f) => func_addr(f.raw()),
                };
                let v = target.wrapping_add(r.addend as u64);
                let at = r.offset as usize;
                let n = (r.size as usize).min(8);
                if at + n <= bytes.len() {
                    bytes[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
                }
            }
            a.write_bytes(0, &bytes);
        }
        Ok(Module {
            device: device.clone(),
            file,
            ir: Arc::new(ir),
            globals: GlobalAddrs { addr },
            _allocs: allocs,
            programs: Mutex::new(HashMap::new()),
            checked: Mutex::new(HashMap::new()),
            compile_opts: CompileOptions::default(),
        })
    }

    /// Sets how the module's kernels are compiled, from the next launch on (a kernel compiled
    /// before is compiled again). With `rewrites: false` the interpreter runs every
    /// instruction as decoded, without hoisting, if-conversion or fusion: a diagnostic switch,
    /// as results are the same either way (`PTXVM_REWRITES=0` for the `ptxvm` binary).
    pub fn set_compile_options(&mut self, opts: CompileOptions) {
        self.compile_opts = opts;
        self.programs
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.checked
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Reads the PTX file at `path` and loads it like [`Module::from_ptx`]; messages name the
    /// file by `path`. A file that cannot be read, is not UTF-8 or is larger than 256 MiB is an
    /// [`Error::Usage`] naming it.
    pub fn from_file(device: &Device, path: impl AsRef<std::path::Path>) -> Result<Module, Error> {
        use std::io::Read;
        const LIMIT: u64 = MAX_SOURCE_BYTES;
        let path = path.as_ref();
        let name = path.display().to_string();
        let cannot = |e: std::io::Error| Error::Usage(format!("cannot read {name}: {e}"));
        let file = std::fs::File::open(path).map_err(cannot)?;
        if file.metadata().map_err(cannot)?.is_dir() {
            return Err(Error::Usage(format!(
                "cannot read {name}: it is a directory"
            )));
        }
        let mut bytes = Vec::new();
        file.take(LIMIT + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        if bytes.len() as u64 > LIMIT {
            return Err(Error::Usage(format!(
                "cannot read {name}: more than 256 MiB, the most ptxvm reads as PTX source"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::Usage(format!(
                "cannot read {name}: not UTF-8 text (invalid byte at offset {}); PTX is text",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Module::from_ptx(device, &name, &text)
    }

    /// The lowered IR (for `ptxvm ir`).
    pub fn ir(&self) -> &ptx_ir::Module {
        &self.ir
    }

    /// The source file.
    pub fn source(&self) -> &SourceFile {
        &self.file
    }

    /// Names of the module's kernels.
    pub fn kernel_names(&self) -> Vec<String> {
        self.ir
            .functions
            .iter()
            .filter(|f| f.kind == ptx_ir::FunctionKind::Entry && f.defined)
            .map(|f| f.name.to_string())
            .collect()
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Result<Kernel<'_>, Error> {
        match self.ir.function(name) {
            Some((i, f)) if f.kind == ptx_ir::FunctionKind::Entry && f.defined => Ok(Kernel {
                module: self,
                index: i,
            }),
            _ => {
                let names = self.kernel_names();
                Err(Error::Usage(format!(
                    "no kernel named `{name}` in {}; it has: {}",
                    self.file.name(),
                    if names.is_empty() {
                        "no kernels".to_string()
                    } else {
                        names.join(", ")
                    }
                )))
            }
        }
    }
}

impl Kernel<'_> {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.module.ir.functions[self.index as usize].name
    }

    /// Its parameters, in order.
    pub fn params(&self) -> Vec<ParamInfo> {
        self.module.ir.functions[self.index as usize]
            .params
            .iter()
            .map(|p| ParamInfo {
                name: p.name.to_string(),
                ty: p.ty,
                type_name: p.type_name.to_string(),
                size: p.size,
                array: p.array,
                offset: p.offset,
                align: p.align,
            })
            .collect()
    }

    pub(crate) fn program(&self) -> Result<Arc<Program>, Error> {
        self.program_within(None)
    }

    /// Compiles the kernel now (once: later launches and queries reuse the result), giving up
    /// after `limit`: a timeout error (code E0607, as a launch that runs too long) that names
    /// the kernel. `cuModuleGetFunction` compiles this way under the launch time limit.
    pub fn compile_within(&self, limit: Option<std::time::Duration>) -> Result<(), Error> {
        self.program_within(limit).map(drop)
    }

    /// The compiled kernel, compiled within `limit` if it has not been yet.
    pub(crate) fn program_within(
        &self,
        limit: Option<std::time::Duration>,
    ) -> Result<Arc<Program>, Error> {
        let mut cache = self
            .module
            .programs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(&self.index) {
            return Ok(p.clone());
        }
        let start = std::time::Instant::now();
        let opts = CompileOptions {
            deadline: limit.and_then(|l| start.checked_add(l)),
            ..self.module.compile_opts
        };
        let p = compile_with(&self.module.ir, self.index, &self.module.globals, opts).map_err(
            |ptx_interp::compile::CompileError::TimedOut| {
                let seconds = limit.unwrap_or_default().as_secs_f64();
                let span = self.module.ir.functions[self.index as usize].span;
                Error::Kernel {
                    file: self.module.file.clone(),
                    failure: crate::Failure::Timeout,
                    diagnostic: Box::new(
                        Diagnostic::error(
                            crate::codes::TIMEOUT,
                            format!(
                                "timeout: compiling kernel `{}` took longer than the {seconds:.1} \
                                 seconds its launch may run",
                                self.name()
                            ),
                            span,
                        )
                        .with_label_message("this kernel")
                        .with_help("raise the limit with --timeout SECONDS (PTXVM_TIMEOUT under ptxvm exec)"),
                    ),
                    stats: Default::default(),
                }
            },
        )?;
        let p = Arc::new(p);
        cache.insert(self.index, p.clone());
        Ok(p)
    }

    /// The kernel compiled for a launch with sanitizer `checks`: every instruction as decoded
    /// (no rewrites), then instrumented ([`ptx_interp::exec::instrument`]); with whether the
    /// init check covers shared memory. Compiled once per set of checks.
    pub(crate) fn checked_program(
        &self,
        checks: ptx_interp::exec::Checks,
        limit: Option<std::time::Duration>,
    ) -> Result<CheckedProgram, Error> {
        let key = (self.index, checks);
        if let Some(p) = self
            .module
            .checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(p.clone());
        }
        // the plain program first: its compile reports a timeout with the usual message
        self.program_within(limit)?;
        let opts = CompileOptions {
            rewrites: false,
            deadline: None,
        };
        let mut p = compile_with(&self.module.ir, self.index, &self.module.globals, opts)
            .map_err(|_| Error::Usage("compiling the checked kernel timed out".into()))?;
        let unwatched = ptx_interp::exec::instrument(&mut p, &self.module.ir, checks);
        let r = (Arc::new(p), !unwatched);
        self.module
            .checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, r.clone());
        Ok(r)
    }

    /// The cluster shape the kernel's `.reqnctapercluster` directive requires, if it has one
    /// (a compile-time cluster shape, which `cuFuncSetAttribute` may not change).
    pub fn required_cluster(&self) -> Option<[u32; 3]> {
        self.directive_dims("reqnctapercluster")
    }

    /// The block shape the kernel's `.reqntid` directive requires, if it has one.
    pub fn required_block(&self) -> Option<[u32; 3]> {
        self.directive_dims("reqntid")
    }

    /// The three dimensions of the kernel's performance directive `directive` (without its dot).
    fn directive_dims(&self, directive: &str) -> Option<[u32; 3]> {
        let f = &self.module.ir.functions[self.index as usize];
        f.attrs
            .iter()
            .find(|(name, _)| name.trim_start_matches('.') == directive)
            .map(|(_, args)| dims(args).map(|d| d.min(u32::MAX as u64) as u32))
    }
}
