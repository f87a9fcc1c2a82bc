//! `ptxvm`: run PTX kernels on the CPU from Rust.
//!
//! The API mirrors the CUDA driver API at a smaller size: a [`Device`] owns device memory; a
//! [`Module`] is PTX text parsed, checked, lowered and loaded onto a device (its `.global` and
//! `.const` variables allocated and initialised); a [`Kernel`] is one `.entry` of a module;
//! [`DeviceBuffer`]s hold typed device memory; [`Kernel::launch`] runs a grid and returns a
//! [`LaunchReport`]. Everything that can go wrong — invalid PTX, wrong arguments, a kernel that
//! faults, deadlocks or runs away — is an [`Error`] whose [`Error::render`] gives the message
//! with the PTX source location (and the CUDA source line when the PTX has `.loc` information).
//!
//! ```
//! use ptxvm::{Arg, Device, LaunchOptions, Module};
//!
//! let ptx = r#"
//! .version 8.0
//! .target sm_80
//! .address_size 64
//! .visible .entry scale(.param .u64 out, .param .f32 k, .param .u32 n)
//! {
//!     .reg .pred %p;
//!     .reg .b32 %r<4>;
//!     .reg .f32 %f<3>;
//!     .reg .b64 %rd<4>;
//!     ld.param.u64 %rd1, [out];
//!     ld.param.f32 %f1, [k];
//!     ld.param.u32 %r1, [n];
//!     mov.u32 %r2, %tid.x;
//!     setp.ge.u32 %p, %r2, %r1;
//!     @%p bra DONE;
//!     cvt.rn.f32.u32 %f2, %r2;
//!     mul.f32 %f2, %f2, %f1;
//!     mul.wide.u32 %rd2, %r2, 4;
//!     add.u64 %rd3, %rd1, %rd2;
//!     st.global.f32 [%rd3], %f2;
//! DONE:
//!     ret;
//! }
//! "#;
//! let device = Device::new();
//! let module = Module::from_ptx(&device, "scale.ptx", ptx)?;
//! let kernel = module.kernel("scale")?;
//! let out = device.alloc::<f32>(8)?;
//! let report = kernel.launch(
//!     [1, 1, 1],
//!     [8, 1, 1],
//!     0,
//!     &[Arg::buffer(&out), Arg::f32(0.5), Arg::u32(8)],
//!     &LaunchOptions::default(),
//! )?;
//! assert_eq!(out.to_vec(), vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]);
//! assert!(report.thread_instructions > 0);
//! # Ok::<(), ptxvm::Error>(())
//! ```

use ptx_diag::{Code, Diagnostic, SourceFile};
use ptx_interp::compile::{compile, func_addr, GlobalAddrs};
use ptx_interp::exec::{ExecError, ThreadPos};
use ptx_interp::launch::{launch, LaunchConfig};
use ptx_interp::mem::{Allocation, GlobalMemory};
use ptx_interp::program::{FaultKind, Program};
use ptx_ir::SymbolRef;
use ptx_isa::{ScalarType, StateSpace, TypeKind};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use ptx_interp::coverage;
pub use ptx_interp::launch::LaunchStats;
pub use ptx_interp::set_simd;

pub mod fuzz;

/// Stable codes of runtime errors (rendered like the checker's diagnostics).
pub mod codes {
    use ptx_diag::Code;
    /// An access outside every allocation.
    pub const OUT_OF_BOUNDS: Code = Code("E0601");
    /// A misaligned access.
    pub const MISALIGNED: Code = Code("E0602");
    /// `trap`.
    pub const TRAP: Code = Code("E0603");
    /// A barrier deadlock.
    pub const DEADLOCK: Code = Code("E0604");
    /// An aligned barrier reached by part of a warp.
    pub const DIVERGENT_BARRIER: Code = Code("E0605");
    /// The instruction budget ran out.
    pub const BUDGET: Code = Code("E0606");
    /// The wall-clock limit passed.
    pub const TIMEOUT: Code = Code("E0607");
    /// A failed device-side `assert`.
    pub const ASSERT: Code = Code("E0608");
    /// An instruction ptxvm cannot execute yet.
    pub const UNSUPPORTED: Code = Code("E0609");
    /// Other kernel faults (stores to constant memory, bad indirect calls, stack overflow…).
    pub const FAULT: Code = Code("E0610");
    /// Bad launch arguments.
    pub const BAD_ARGUMENT: Code = Code("E0620");
}

/// Everything that can fail.
#[derive(Debug)]
pub enum Error {
    /// The PTX did not parse, check or lower: diagnostics against the source.
    Invalid {
        /// The source.
        file: SourceFile,
        /// What is wrong.
        diagnostics: Vec<Diagnostic>,
    },
    /// Bad use of the API: unknown kernel, wrong argument count or type, bad geometry.
    Usage(String),
    /// The kernel faulted, deadlocked or ran past its limits.
    Kernel {
        /// The source the kernel came from.
        file: SourceFile,
        /// The rendered diagnostic (code, message, span, notes).
        diagnostic: Box<Diagnostic>,
        /// What ran before it stopped.
        stats: LaunchStats,
    },
    /// Device memory could not be allocated.
    Memory(String),
}

impl Error {
    /// Whether the error is the kernel's own fault (exit status 2 in the CLI) rather than bad
    /// input (exit status 1).
    pub fn is_kernel_fault(&self) -> bool {
        matches!(self, Error::Kernel { .. })
    }
    /// The full message as plain text, with source snippets.
    pub fn render(&self) -> String {
        match self {
            Error::Invalid { file, diagnostics } => ptx_diag::render_plain(file, diagnostics),
            Error::Usage(m) | Error::Memory(m) => format!("error: {m}\n"),
            Error::Kernel {
                file, diagnostic, ..
            } => ptx_diag::render_plain(file, std::slice::from_ref(diagnostic)),
        }
    }
    /// Writes the message to stderr (with colour when `mode` allows).
    pub fn render_to_stderr(&self, mode: ptx_diag::ColorMode) {
        match self {
            Error::Invalid { file, diagnostics } => {
                ptx_diag::render_to_stderr(file, diagnostics, mode)
            }
            Error::Kernel {
                file, diagnostic, ..
            } => ptx_diag::render_to_stderr(file, std::slice::from_ref(diagnostic), mode),
            _ => eprint!("{}", self.render()),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Kernel { diagnostic, .. } => write!(f, "{}", diagnostic.message),
            Error::Invalid { diagnostics, .. } => match diagnostics.first() {
                Some(d) => write!(f, "{}", d.message),
                None => write!(f, "invalid PTX"),
            },
            Error::Usage(m) | Error::Memory(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// A CPU "device": its global memory.
#[derive(Clone, Default)]
pub struct Device {
    mem: Arc<Mutex<GlobalMemory>>,
    next_label: Arc<Mutex<u64>>,
}

/// Element types of device buffers.
pub trait Element: Copy + Default + 'static {
    /// Size in bytes.
    const SIZE: usize;
    /// The PTX type name for messages.
    const NAME: &'static str;
    /// Little-endian bytes.
    fn write_le(self, out: &mut Vec<u8>);
    /// From little-endian bytes (`SIZE` long).
    fn read_le(b: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty, $n:literal;)*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = $n;
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}

element! {
    u8, ".u8"; i8, ".s8"; u16, ".u16"; i16, ".s16"; u32, ".u32"; i32, ".s32";
    u64, ".u64"; i64, ".s64"; f32, ".f32"; f64, ".f64";
}

/// Typed device memory.
pub struct DeviceBuffer<T: Element> {
    alloc: Arc<Allocation>,
    len: usize,
    device: Device,
    _t: PhantomData<T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.alloc.base
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Copies the contents back to the host.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        let mut start = 0;
        while start < self.len {
            let n = COPY_CHUNK.min(self.len - start);
            let bytes = self
                .alloc
                .read_bytes((start * T::SIZE) as u64, (n * T::SIZE) as u64);
            out.extend(bytes.chunks_exact(T::SIZE).map(T::read_le));
            start += n;
        }
        out
    }
    /// The raw bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.alloc.read_bytes(0, (self.len * T::SIZE) as u64)
    }
    /// Copies `data` in (its length must equal the buffer's).
    pub fn copy_from(&self, data: &[T]) -> Result<(), Error> {
        if data.len() != self.len {
            return Err(Error::Usage(format!(
                "copy of {} elements into a buffer of {}",
                data.len(),
                self.len
            )));
        }
        let mut bytes = Vec::with_capacity(COPY_CHUNK * T::SIZE);
        for (k, part) in data.chunks(COPY_CHUNK).enumerate() {
            bytes.clear();
            for x in part {
                x.write_le(&mut bytes);
            }
            self.alloc
                .write_bytes((k * COPY_CHUNK * T::SIZE) as u64, &bytes);
        }
        Ok(())
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.device.mem.lock() {
            m.free(self.alloc.base);
        }
    }
}

impl Device {
    /// A new device with empty memory.
    pub fn new() -> Device {
        Device::default()
    }

    fn label(&self) -> String {
        let mut n = self.next_label.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        format!("buffer #{}", *n - 1)
    }

    /// `n` zeroed elements.
    pub fn alloc<T: Element>(&self, n: usize) -> Result<DeviceBuffer<T>, Error> {
        let label = self.label();
        self.alloc_labelled(n, label)
    }

    fn alloc_labelled<T: Element>(
        &self,
        n: usize,
        label: String,
    ) -> Result<DeviceBuffer<T>, Error> {
        let bytes = (n as u64)
            .checked_mul(T::SIZE as u64)
            .ok_or_else(|| Error::Memory(format!("{n} elements overflow the address space")))?;
        let alloc = self
            .mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc(bytes, false, label)
            .map_err(|e| Error::Memory(e.0))?;
        Ok(DeviceBuffer {
            alloc,
            len: n,
            device: self.clone(),
            _t: PhantomData,
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let b = self.alloc::<T>(data.len())?;
        b.copy_from(data)?;
        Ok(b)
    }

    /// A buffer of raw bytes (for arguments of any element type, as `ptxvm run` passes them);
    /// `label` names it in fault messages.
    pub fn from_bytes(&self, data: &[u8], label: &str) -> Result<DeviceBuffer<u8>, Error> {
        let b = self.alloc_labelled::<u8>(data.len(), label.to_string())?;
        b.alloc.write_bytes(0, data);
        Ok(b)
    }
}

/// A PTX module loaded on a device.
pub struct Module {
    device: Device,
    file: SourceFile,
    ir: Arc<ptx_ir::Module>,
    globals: GlobalAddrs,
    _allocs: Vec<Arc<Allocation>>,
    programs: Mutex<HashMap<u32, Arc<Program>>>,
}

/// Options of one launch.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// OS threads running CTAs (0: all cores).
    pub threads: usize,
    /// Thread-instruction budget.
    pub max_instructions: u64,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            threads: 0,
            max_instructions: 1 << 40,
            timeout: Some(Duration::from_secs(600)),
        }
    }
}

/// What a launch did.
#[derive(Clone, Debug)]
pub struct LaunchReport {
    /// Kernel name.
    pub kernel: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Thread instructions executed.
    pub thread_instructions: u64,
    /// Warp instructions executed.
    pub warp_instructions: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The kernel's printf output, in CTA order.
    pub stdout: Vec<u8>,
}

/// A kernel argument.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A device address.
    Pointer(u64),
    /// A scalar of a PTX type (little-endian bytes).
    Scalar(ScalarType, Vec<u8>),
    /// Raw bytes for a parameter of any type of the same size (structs, `.b8` arrays).
    Bytes(Vec<u8>),
}

macro_rules! arg_ctor {
    ($($f:ident, $t:ty, $st:expr;)*) => {$(
        #[doc = concat!("A `", stringify!($t), "` scalar.")]
        pub fn $f(v: $t) -> Arg {
            Arg::Scalar($st, v.to_le_bytes().to_vec())
        }
    )*};
}

impl Arg {
    /// The address of a buffer.
    pub fn buffer<T: Element>(b: &DeviceBuffer<T>) -> Arg {
        Arg::Pointer(b.addr())
    }
    arg_ctor! {
        u8, u8, ScalarType::U8; i8, i8, ScalarType::S8;
        u16, u16, ScalarType::U16; i16, i16, ScalarType::S16;
        u32, u32, ScalarType::U32; i32, i32, ScalarType::S32;
        u64, u64, ScalarType::U64; i64, i64, ScalarType::S64;
        f32, f32, ScalarType::F32; f64, f64, ScalarType::F64;
    }
}

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
    /// Declared as an array (`.b8 p[16]`).
    pub array: bool,
}

/// One kernel of a module.
pub struct Kernel<'m> {
    module: &'m Module,
    index: u32,
}

/// Elements per step of a host copy into or out of a device buffer, so that a copy costs no
/// host memory the size of the buffer.
const COPY_CHUNK: usize = 1 << 14;

/// The three dimensions of a `.reqntid`/`.maxntid` directive (missing ones are 1).
fn dims(args: &[u64]) -> [u64; 3] {
    [0, 1, 2].map(|k| args.get(k).copied().unwrap_or(1))
}

fn invalid(file: &SourceFile, diagnostics: Vec<Diagnostic>) -> Error {
    Error::Invalid {
        file: file.clone(),
        diagnostics,
    }
}

impl Module {
    /// Parses, checks, lowers and loads `text`. `name` is used in messages.
    pub fn from_ptx(device: &Device, name: &str, text: &str) -> Result<Module, Error> {
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
        let ir = ptx_ir::lower(&parsed.module).map_err(|d| invalid(&file, d))?;
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
                    SymbolRef::Global(t) => addr.get(t as usize).copied().unwrap_or(0),
                    SymbolRef::Function(f) => func_addr(f),
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
        })
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
            })
            .collect()
    }

    fn program(&self) -> Result<Arc<Program>, Error> {
        let mut cache = self
            .module
            .programs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(&self.index) {
            return Ok(p.clone());
        }
        let p = compile(&self.module.ir, self.index, &self.module.globals)
            .map_err(|e| Error::Usage(e.0))?;
        let p = Arc::new(p);
        cache.insert(self.index, p.clone());
        Ok(p)
    }

    /// Runs the kernel over `grid` blocks of `block` threads with `shared_bytes` of dynamic
    /// shared memory. Arguments are checked against the declared parameters.
    pub fn launch(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u64,
        args: &[Arg],
        opts: &LaunchOptions,
    ) -> Result<LaunchReport, Error> {
        self.launch_with_progress(grid, block, shared_bytes, args, opts, None)
    }

    /// [`Kernel::launch`] with a callback receiving (CTAs done, CTAs total).
    pub fn launch_with_progress(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u64,
        args: &[Arg],
        opts: &LaunchOptions,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<LaunchReport, Error> {
        let params = self.params();
        if args.len() != params.len() {
            return Err(Error::Usage(format!(
                "kernel `{}` takes {} arguments, {} given",
                self.name(),
                params.len(),
                args.len()
            )));
        }
        if grid.contains(&0) || block.contains(&0) {
            return Err(Error::Usage(format!(
                "grid {grid:?} and block {block:?} must have no zero dimension"
            )));
        }
        let threads = block[0] as u64 * block[1] as u64 * block[2] as u64;
        if threads > 1024 || block[2] > 64 {
            return Err(Error::Usage(format!(
                "a block of {}x{}x{} = {threads} threads exceeds the limits (1024 threads, z ≤ 64)",
                block[0], block[1], block[2]
            )));
        }
        self.check_block_directives(block)?;
        if grid[1] > 65535 || grid[2] > 65535 {
            return Err(Error::Usage(format!(
                "grid {grid:?}: y and z must be at most 65535"
            )));
        }
        if shared_bytes > 1 << 30 {
            return Err(Error::Usage(format!(
                "{shared_bytes} bytes of dynamic shared memory is more than the 1 GiB ptxvm allows"
            )));
        }
        let prog = self.program()?;
        let mut buf = vec![0u8; prog.param_size as usize];
        for (k, (a, p)) in args.iter().zip(&params).enumerate() {
            let bytes = check_arg(k, a, p)?;
            let off = prog.params[k].0 as usize;
            let n = bytes.len().min(p.size as usize);
            buf[off..off + n].copy_from_slice(&bytes[..n]);
        }
        let words: Vec<u32> = buf
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect();
        let snapshot = self
            .module
            .device
            .mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .snapshot();
        let cfg = LaunchConfig {
            grid,
            block,
            shared_bytes,
            threads: opts.threads,
            max_instructions: opts.max_instructions,
            timeout: opts.timeout,
        };
        match launch(&prog, &snapshot, &words, &cfg, progress) {
            Ok(s) => Ok(LaunchReport {
                kernel: self.name().to_string(),
                grid,
                block,
                thread_instructions: s.thread_instructions,
                warp_instructions: s.warp_instructions,
                seconds: s.seconds,
                stdout: s.stdout,
            }),
            Err(b) => {
                let (e, stats) = *b;
                Err(Error::Kernel {
                    file: self.module.file.clone(),
                    diagnostic: Box::new(self.describe(&e)),
                    stats,
                })
            }
        }
    }

    /// The block shape the kernel's `.reqntid` directive requires, if it has one.
    pub fn required_block(&self) -> Option<[u32; 3]> {
        let f = &self.module.ir.functions[self.index as usize];
        f.attrs
            .iter()
            .find(|(name, _)| name.trim_start_matches('.') == "reqntid")
            .map(|(_, args)| dims(args).map(|d| d.min(u32::MAX as u64) as u32))
    }

    /// `.reqntid` fixes the block's shape and `.maxntid` bounds its thread count; a launch that
    /// breaks either fails before it starts, as the CUDA driver refuses it.
    fn check_block_directives(&self, block: [u32; 3]) -> Result<(), Error> {
        let f = &self.module.ir.functions[self.index as usize];
        for (name, args) in &f.attrs {
            let [x, y, z] = dims(args);
            match name.trim_start_matches('.') {
                "reqntid" if [x, y, z] != block.map(u64::from) => {
                    return Err(Error::Usage(format!(
                        "kernel `{}` requires blocks of {x}x{y}x{z} threads (.reqntid); the launch asks for {}x{}x{}",
                        self.name(),
                        block[0],
                        block[1],
                        block[2]
                    )));
                }
                "maxntid" => {
                    let max = x.saturating_mul(y).saturating_mul(z);
                    let n = block.iter().map(|&b| b as u64).product::<u64>();
                    if n > max {
                        return Err(Error::Usage(format!(
                            "kernel `{}` allows at most {max} threads per block (.maxntid {}); the launch asks for {n}",
                            self.name(),
                            args.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                        )));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn describe(&self, e: &ExecError) -> Diagnostic {
        let ir = &self.module.ir;
        let span_of = |p: &ThreadPos| {
            ir.functions
                .get(p.func as usize)
                .and_then(|f| f.insts.get(p.inst as usize))
                .map(|i| i.span)
                .unwrap_or_default()
        };
        let inst_text = |p: &ThreadPos| -> String {
            let span = span_of(p);
            let text = self.module.file.text();
            text.get(span.range()).unwrap_or("").trim().to_string()
        };
        let where_ = |p: &ThreadPos| -> String {
            format!(
                "block ({},{},{}) thread ({},{},{})",
                p.block[0], p.block[1], p.block[2], p.thread[0], p.thread[1], p.thread[2]
            )
        };
        let cuda_line = |p: &ThreadPos| -> Option<String> {
            let inst = ir
                .functions
                .get(p.func as usize)?
                .insts
                .get(p.inst as usize)?;
            let src = inst.src?;
            let file = ir.file(src.file as u64).unwrap_or("?");
            Some(format!("CUDA source: {file}:{}:{}", src.line, src.col))
        };
        let loc_of = |p: &ThreadPos| -> String {
            let span = span_of(p);
            self.module.file.location(span.start)
        };
        let mk = |code: Code, msg: String, p: &ThreadPos| -> Diagnostic {
            let mut d = Diagnostic::error(code, msg, span_of(p))
                .with_label_message(format!("{} executing this", where_(p)))
                .with_note(format!(
                    "at {}: `{}` in {}",
                    loc_of(p),
                    inst_text(p),
                    where_(p)
                ));
            if let Some(c) = cuda_line(p) {
                d = d.with_note(c);
            }
            d
        };
        match e {
            ExecError::Fault { kind, pos } => match kind {
                FaultKind::OutOfBounds {
                    space,
                    addr,
                    size,
                    detail,
                } => mk(
                    codes::OUT_OF_BOUNDS,
                    format!(
                        "out-of-bounds {space} access of {size} bytes at address {addr:#x}: {detail}"
                    ),
                    pos,
                ),
                FaultKind::Misaligned { space, addr, align } => mk(
                    codes::MISALIGNED,
                    format!(
                        "misaligned {space} access at address {addr:#x}: it must be a multiple of {align}"
                    ),
                    pos,
                ),
                FaultKind::ReadOnly { addr } => mk(
                    codes::FAULT,
                    format!("store to read-only `.const` memory at address {addr:#x}"),
                    pos,
                ),
                FaultKind::Other(m) => mk(codes::FAULT, m.clone(), pos),
            },
            ExecError::Trap(pos) => mk(codes::TRAP, "the kernel executed `trap`".into(), pos),
            ExecError::Assert { message, pos } => mk(codes::ASSERT, message.clone(), pos),
            ExecError::Unsupported { message, pos } => mk(codes::UNSUPPORTED, message.clone(), pos),
            ExecError::DivergentBarrier {
                pos,
                arrived,
                expected,
            } => mk(
                codes::DIVERGENT_BARRIER,
                format!(
                    "divergent barrier: {arrived} of the warp's {expected} active threads reached this aligned barrier together"
                ),
                pos,
            )
            .with_help("`bar.sync`/`__syncthreads()` must be reached by every thread of a warp at once; use `barrier.sync` (non-aligned) for divergent code"),
            ExecError::Deadlock {
                block,
                waits,
                threads,
                exited,
                other,
            } => {
                let mut parts = Vec::new();
                let mut first_span = None;
                for (n, expected, id, f, inst) in waits {
                    let p = ThreadPos {
                        block: *block,
                        thread: [0; 3],
                        func: *f,
                        inst: *inst,
                    };
                    first_span.get_or_insert(span_of(&p));
                    let op = inst_text(&p);
                    let op = op.split_whitespace().next().unwrap_or("bar.sync").to_string();
                    parts.push(format!(
                        "{n} of {expected} threads wait at {op} {id} at {}",
                        loc_of(&p)
                    ));
                }
                let mut msg = format!(
                    "deadlock: block ({},{},{}) of {threads} threads: {}",
                    block[0],
                    block[1],
                    block[2],
                    parts.join("; ")
                );
                msg.push_str(&format!(", {exited} exited"));
                if !other.is_empty() {
                    msg.push_str(&format!(", {other}"));
                }
                let d = Diagnostic::error(codes::DEADLOCK, msg, first_span.unwrap_or_default())
                    .with_label_message("this barrier can never complete");
                d.with_help("every thread the barrier counts must arrive; threads that exited never will")
            }
            ExecError::Budget(n) => Diagnostic::error(
                codes::BUDGET,
                format!("instruction budget exhausted: the kernel executed more than {n} thread instructions"),
                ptx_diag::Span::default(),
            )
            .with_help("raise the limit with --max-instructions N if the kernel is meant to run this long"),
            ExecError::Timeout(s) => Diagnostic::error(
                codes::TIMEOUT,
                format!("timeout: the kernel ran longer than {s:.1} seconds"),
                ptx_diag::Span::default(),
            )
            .with_help("raise the limit with --timeout SECONDS if the kernel is meant to run this long"),
            ExecError::Cancelled => Diagnostic::error(
                codes::FAULT,
                "the launch was cancelled".to_string(),
                ptx_diag::Span::default(),
            ),
        }
    }
}

fn check_arg(k: usize, a: &Arg, p: &ParamInfo) -> Result<Vec<u8>, Error> {
    let what = format!("argument {} (`{}`, {})", k + 1, p.name, p.type_name);
    match a {
        Arg::Pointer(addr) => {
            if p.size != 8 || p.array {
                return Err(Error::Usage(format!(
                    "{what}: a buffer address is 8 bytes, the parameter is {} bytes",
                    p.size
                )));
            }
            Ok(addr.to_le_bytes().to_vec())
        }
        Arg::Scalar(ty, bytes) => {
            let ok_size = bytes.len() as u64 == p.size;
            let ok_kind = match p.ty {
                Some(pt) => {
                    pt.kind() == TypeKind::Bit
                        || pt == *ty
                        || (pt.kind() != TypeKind::Float
                            && ty.kind() != TypeKind::Float
                            && pt.size_bits() == ty.size_bits())
                }
                None => true,
            };
            if !ok_size || !ok_kind {
                return Err(Error::Usage(format!(
                    "{what}: a {} value does not match the parameter",
                    ty.suffix()
                )));
            }
            Ok(bytes.clone())
        }
        Arg::Bytes(b) => {
            if b.len() as u64 != p.size {
                return Err(Error::Usage(format!(
                    "{what}: {} bytes given, the parameter has {}",
                    b.len(),
                    p.size
                )));
            }
            Ok(b.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_in_and_out_across_chunk_boundaries() {
        let device = Device::new();
        // 40000 elements: more than two 16 Ki chunks and a ragged end
        let data: Vec<u16> = (0..40_000u32).map(|k| (k * 7 + 3) as u16).collect();
        let buf = device.from_slice(&data).unwrap();
        assert_eq!(buf.to_vec(), data);
        let again: Vec<u16> = data.iter().map(|x| x ^ 0xFFFF).collect();
        buf.copy_from(&again).unwrap();
        assert_eq!(buf.to_vec(), again);
        let wide: Vec<f64> = (0..20_000).map(|k| k as f64 * 0.5 - 3.0).collect();
        assert_eq!(device.from_slice(&wide).unwrap().to_vec(), wide);
    }
}
