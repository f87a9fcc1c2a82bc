//! Launching a [`Kernel`]: [`LaunchOptions`], [`Arg`]uments checked against the parameters,
//! the [`LaunchReport`], and the diagnostics of a kernel that faults, deadlocks or runs past its
//! limits.

use ptx_diag::{Code, Diagnostic};
use ptx_interp::exec::{ExecError, Stuck, StuckState, ThreadPos, WaitKind};
use ptx_interp::launch::{launch_with_sink, LaunchConfig};
use ptx_interp::program::{FaultKind, Program};
use ptx_isa::{ScalarType, TypeKind};
use std::time::Duration;

use crate::module::dims;
use crate::{
    codes, limits, BufferView, DeviceBuffer, Element, Error, Kernel, ParamInfo, Progress,
    DEFAULT_STACK_SIZE, SHARED_LIMIT,
};

/// Options of one launch.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// OS threads running CTAs (0: all cores).
    pub threads: usize,
    /// Thread-instruction budget.
    pub max_instructions: u64,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// Stack (local memory) bytes per thread, like `cudaLimitStackSize`: the bound on what
    /// calls, recursion and `alloca` use ([`DEFAULT_STACK_SIZE`], 64 KiB). A launch raises it
    /// to what the kernel's `.local` variables and non-recursive call tree need, up to
    /// [`LOCAL_MAX`](crate::LOCAL_MAX) (512 KiB, an sm_90 thread's most); a larger value also raises that cap.
    pub stack_size: u64,
    /// Shared memory bytes per block, static and dynamic together ([`SHARED_LIMIT`],
    /// 227 KiB as on sm_90; at most [`SHARED_LIMIT_MAX`](crate::SHARED_LIMIT_MAX)).
    pub shared_limit: u64,
    /// The printf FIFO, in bytes (CUDA's `cudaLimitPrintfFifoSize`; 1 MiB by default): how much
    /// printf output blocks after the lowest unfinished one may hold while they wait for their
    /// turn. A block that would overfill it pauses until earlier blocks finish; no output is
    /// lost and the output is in block order whatever `threads` is (see
    /// [`Kernel::launch_streaming`]).
    pub printf_fifo: usize,
    /// Cluster shape in blocks (`cudaLaunchAttributeClusterDimension`): `None` launches
    /// without one (clusters of one block, or the kernel's `.reqnctapercluster`). The grid
    /// must be a multiple of it; the blocks of a cluster run together (distributed shared
    /// memory, `barrier.cluster`).
    pub cluster: Option<[u32; 3]>,
    /// Allows clusters of up to 16 blocks instead of the portable 8
    /// (`cudaFuncAttributeNonPortableClusterSizeAllowed`).
    pub non_portable_cluster: bool,
    /// Sanitizer checks (`ptxvm run --check`): data races and uninitialised reads of shared
    /// memory, barriers not every thread reaches. Their reports come back in
    /// [`LaunchReport::hazards`] (and in the stats of a launch that faults); the launch itself
    /// goes on. With none on (the default) the launch runs the usual program and pays nothing;
    /// with any on, the kernel runs without the bytecode rewrites and every shared-memory access
    /// is checked, several times slower. Bounds and alignment checks always run.
    pub checks: ptx_interp::exec::Checks,
}

/// The most blocks a cluster may have (portable size; 16 with
/// [`LaunchOptions::non_portable_cluster`], as on sm_90).
pub const CLUSTER_MAX: u64 = 8;

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            threads: 0,
            max_instructions: 1 << 40,
            timeout: Some(Duration::from_secs(600)),
            stack_size: DEFAULT_STACK_SIZE,
            shared_limit: SHARED_LIMIT,
            printf_fifo: ptx_interp::fifo::DEFAULT_PRINTF_FIFO,
            cluster: None,
            non_portable_cluster: false,
            checks: ptx_interp::exec::Checks::NONE,
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
    /// The kernel's printf output, in CTA order ([`Kernel::launch_streaming`] writes it to its
    /// sink instead and leaves this empty).
    pub stdout: Vec<u8>,
    /// The sanitizer reports of a checked launch ([`LaunchOptions::checks`]), one per site
    /// (kind and instructions), in block order; [`Kernel::hazard_diagnostic`] renders one.
    pub hazards: Vec<crate::Hazard>,
}

/// A launch's parameters: typed arguments to check and lay out, or the laid-out buffer.
#[derive(Clone, Copy)]
enum Params<'a> {
    Args(&'a [Arg]),
    Raw(&'a [u8]),
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
    /// A by-value struct laid out field by field ([`StructArg`]), for a parameter declared
    /// `.param .align A .b8 name[N]`: its size must be N and its alignment at most A.
    Struct(StructArg),
}

/// A by-value struct argument, built field by field with the C layout nvcc and clang give a
/// struct: each field starts at the next multiple of its alignment (a scalar's size, an array's
/// element size, 8 for a pointer, or more after [`StructArg::align_next`]), and the struct's size
/// is rounded up to its largest alignment. The kernel declares such a parameter as
/// `.param .align A .b8 name[N]` with A the struct's alignment and N its size; a launch refuses a
/// struct whose size differs from N or whose alignment exceeds A, naming the parameter.
///
/// ```
/// use ptxvm::StructArg;
/// // struct { float scale; float *data; unsigned n; }  ->  offsets 0, 8, 16; 24 bytes
/// let s = StructArg::new().f32(1.5).pointer(0x1000).u32(7);
/// assert_eq!(s.fields(), &[(0, 4), (8, 8), (16, 4)]);
/// assert_eq!((s.size(), s.align()), (24, 8));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructArg {
    data: Vec<u8>,
    align: u64,
    fields: Vec<(u64, u64)>,
    next_align: u64,
    error: Option<String>,
}

impl Default for StructArg {
    fn default() -> Self {
        StructArg::new()
    }
}

macro_rules! struct_field {
    ($($f:ident, $t:ty;)*) => {$(
        #[doc = concat!("Appends a `", stringify!($t), "` field, aligned to its size.")]
        pub fn $f(self, v: $t) -> StructArg {
            self.field(std::mem::size_of::<$t>() as u64, &v.to_le_bytes())
        }
    )*};
}

/// Whether `a` is an alignment [`StructArg`] takes.
fn valid_align(a: u64) -> bool {
    a.is_power_of_two() && a <= StructArg::MAX_ALIGN
}

impl StructArg {
    /// The largest field alignment: 4096 bytes (a kernel's whole parameter buffer is at most
    /// 32 KiB).
    pub const MAX_ALIGN: u64 = 4096;

    /// An empty struct (size 0, alignment 1).
    pub fn new() -> StructArg {
        StructArg {
            data: Vec::new(),
            align: 1,
            fields: Vec::new(),
            next_align: 1,
            error: None,
        }
    }

    /// Appends a field of raw bytes `data` aligned to `align` (a power of two up to
    /// [`StructArg::MAX_ALIGN`]); another alignment makes the launch fail with an error.
    pub fn field(mut self, align: u64, data: &[u8]) -> StructArg {
        if !valid_align(align) {
            self.error.get_or_insert(format!(
                "field {} has alignment {align}, which is not a power of two up to {}",
                self.fields.len(),
                StructArg::MAX_ALIGN
            ));
            return self;
        }
        let align = align.max(std::mem::take(&mut self.next_align)).max(1);
        self.next_align = 1;
        self.align = self.align.max(align);
        let at = (self.data.len() as u64).next_multiple_of(align);
        self.data.resize(at as usize, 0);
        self.data.extend_from_slice(data);
        self.fields.push((at, data.len() as u64));
        self
    }

    /// Raises the alignment of the next field to at least `align` (a power of two), like an
    /// `__align__(N)` member or a `float4`/`int4` member (16).
    pub fn align_next(mut self, align: u64) -> StructArg {
        if !valid_align(align) {
            self.error.get_or_insert(format!(
                "alignment {align} before field {} is not a power of two up to {}",
                self.fields.len(),
                StructArg::MAX_ALIGN
            ));
            return self;
        }
        self.next_align = self.next_align.max(align);
        self
    }

    struct_field! {
        u8, u8; i8, i8; u16, u16; i16, i16; u32, u32; i32, i32;
        u64, u64; i64, i64; f32, f32; f64, f64;
    }

    /// Appends a device address (8 bytes, 8-aligned): a pointer member.
    pub fn pointer(self, addr: u64) -> StructArg {
        self.field(8, &addr.to_le_bytes())
    }

    /// Appends the address of `buffer`.
    pub fn buffer<T: Element>(self, buffer: &DeviceBuffer<T>) -> StructArg {
        self.pointer(buffer.addr())
    }

    /// Appends the address of the first element of `view`.
    pub fn view<T: Element>(self, view: &BufferView<'_, T>) -> StructArg {
        self.pointer(view.addr())
    }

    /// Appends an array member (`float v[3]`, or a `float3`), aligned to its element size.
    pub fn array<T: Element>(self, values: &[T]) -> StructArg {
        let mut bytes = Vec::with_capacity(values.len() * T::SIZE);
        for v in values {
            v.write_le(&mut bytes);
        }
        self.field(T::SIZE as u64, &bytes)
    }

    /// `(offset, size)` of each field, in order.
    pub fn fields(&self) -> &[(u64, u64)] {
        &self.fields
    }

    /// The struct's alignment: its largest field's.
    pub fn align(&self) -> u64 {
        self.align
    }

    /// The struct's size: the end of its last field rounded up to its alignment.
    pub fn size(&self) -> u64 {
        (self.data.len() as u64).next_multiple_of(self.align)
    }

    /// The struct's bytes for parameter `p`: an error (naming neither; the caller names the
    /// parameter) when its size is not the parameter's, its alignment exceeds the parameter's
    /// or a field's alignment was invalid.
    pub fn bytes_for(&self, p: &ParamInfo) -> Result<Vec<u8>, String> {
        let bytes = self.to_bytes().map_err(|e| e.to_string())?;
        if self.size() != p.size {
            let offsets: Vec<String> = self.fields.iter().map(|f| f.0.to_string()).collect();
            return Err(format!(
                "the struct is {} bytes (fields at offsets {}, alignment {}), the parameter is {} bytes",
                self.size(),
                if offsets.is_empty() {
                    "none".to_string()
                } else {
                    offsets.join(", ")
                },
                self.align,
                p.size
            ));
        }
        if self.align > p.align {
            return Err(format!(
                "the struct needs {}-byte alignment (its largest field), the parameter is declared with {}",
                self.align, p.align
            ));
        }
        Ok(bytes)
    }

    /// The struct's bytes, padding included (zeros), `size()` long; an error when a field's
    /// alignment was not a power of two.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        if let Some(e) = &self.error {
            return Err(Error::Usage(format!("struct argument: {e}")));
        }
        let mut b = self.data.clone();
        b.resize(self.size() as usize, 0);
        Ok(b)
    }
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
    /// The address of the first element of a view of a buffer ([`DeviceBuffer::view`]; the
    /// kernel's accesses are checked against the parent buffer's bounds).
    pub fn view<T: Element>(v: &BufferView<'_, T>) -> Arg {
        Arg::Pointer(v.addr())
    }
    arg_ctor! {
        u8, u8, ScalarType::U8; i8, i8, ScalarType::S8;
        u16, u16, ScalarType::U16; i16, i16, ScalarType::S16;
        u32, u32, ScalarType::U32; i32, i32, ScalarType::S32;
        u64, u64, ScalarType::U64; i64, i64, ScalarType::S64;
        f32, f32, ScalarType::F32; f64, f64, ScalarType::F64;
    }
}

impl Kernel<'_> {
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

    /// [`Kernel::launch`] with a callback receiving the launch's [`Progress`] (blocks done,
    /// thread instructions executed) from the threads running it: when a block finishes, and
    /// every 64 Ki thread instructions or so while blocks run.
    pub fn launch_with_progress(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u64,
        args: &[Arg],
        opts: &LaunchOptions,
        progress: Option<&(dyn Fn(&Progress) + Sync)>,
    ) -> Result<LaunchReport, Error> {
        self.launch_inner(
            grid,
            block,
            shared_bytes,
            Params::Args(args),
            opts,
            progress,
            None,
        )
    }

    /// [`Kernel::launch_with_progress`], writing the kernel's printf output to `sink` while it
    /// runs instead of collecting it in [`LaunchReport::stdout`]: in block order (block 0's
    /// output, then block 1's, …) whatever the number of threads, with at most
    /// [`LaunchOptions::printf_fifo`] bytes held for blocks waiting for their turn, plus a
    /// 64 KiB write buffer flushed at least every 50 ms while output is produced. After the
    /// sink's first write error the rest of the output is discarded.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_streaming(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u64,
        args: &[Arg],
        opts: &LaunchOptions,
        progress: Option<&(dyn Fn(&Progress) + Sync)>,
        sink: &mut (dyn std::io::Write + Send),
    ) -> Result<LaunchReport, Error> {
        self.launch_inner(
            grid,
            block,
            shared_bytes,
            Params::Args(args),
            opts,
            progress,
            Some(sink),
        )
    }

    /// [`Kernel::launch_streaming`] with the parameter buffer given as it is laid out in
    /// parameter space (each parameter at its offset, [`Kernel::param_layout`]), as a CUDA
    /// driver hands it over (`cuLaunchKernel`'s `kernelParams` or `extra`): `params` must be
    /// exactly the kernel's parameter size. No argument is checked against its type: the bytes
    /// are the kernel's.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_raw_streaming(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u64,
        params: &[u8],
        opts: &LaunchOptions,
        progress: Option<&(dyn Fn(&Progress) + Sync)>,
        sink: &mut (dyn std::io::Write + Send),
    ) -> Result<LaunchReport, Error> {
        self.launch_inner(
            grid,
            block,
            shared_bytes,
            Params::Raw(params),
            opts,
            progress,
            Some(sink),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn launch_inner(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u64,
        args: Params<'_>,
        opts: &LaunchOptions,
        progress: Option<&(dyn Fn(&Progress) + Sync)>,
        sink: Option<&mut (dyn std::io::Write + Send)>,
    ) -> Result<LaunchReport, Error> {
        let params = self.params();
        if let Params::Args(args) = args {
            if args.len() != params.len() {
                return Err(Error::Usage(format!(
                    "kernel `{}` takes {} arguments, {} given",
                    self.name(),
                    params.len(),
                    args.len()
                )));
            }
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
        if grid[0] > i32::MAX as u32 || grid[1] > 65535 || grid[2] > 65535 {
            return Err(Error::Usage(format!(
                "grid {grid:?}: x must be below 2^31, y and z at most 65535"
            )));
        }
        if shared_bytes > 1 << 30 {
            return Err(Error::Usage(format!(
                "{shared_bytes} bytes of dynamic shared memory is more than the 1 GiB ptxvm allows"
            )));
        }
        // (the launch's time limit covers compiling the kernel, on its first launch)
        let (prog, init_shared) = if opts.checks.instrumented() {
            self.checked_program(opts.checks, opts.timeout)?
        } else {
            (self.program_within(opts.timeout)?, false)
        };
        self.refuse_unsupported(&prog)?;
        let (cluster, explicit_cluster) = self.cluster_shape(grid, opts, &prog, shared_bytes)?;
        let local_limit = limits::check_launch(
            &self.module.file,
            &self.module.ir,
            self.index,
            &prog,
            block,
            shared_bytes,
            opts,
        )?;
        let packed;
        let buf: &[u8] = match args {
            Params::Args(args) => {
                let mut buf = vec![0u8; prog.param_size as usize];
                for (k, (a, p)) in args.iter().zip(&params).enumerate() {
                    let bytes = check_arg(k, a, p)?;
                    let off = prog.params[k].0 as usize;
                    let n = bytes.len().min(p.size as usize);
                    buf[off..off + n].copy_from_slice(&bytes[..n]);
                }
                packed = buf;
                &packed
            }
            Params::Raw(raw) => {
                if raw.len() as u64 != prog.param_size {
                    return Err(Error::Usage(format!(
                        "kernel `{}` has {} bytes of parameters, {} given",
                        self.name(),
                        prog.param_size,
                        raw.len()
                    )));
                }
                raw
            }
        };
        let words: Vec<u32> = buf
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect();
        let snapshot = {
            let mut mem = self
                .module
                .device
                .mem
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if prog.uses_heap() {
                mem.heap().map_err(|e| Error::Memory(e.0))?;
            }
            mem.snapshot()
        };
        let cfg = LaunchConfig {
            grid,
            block,
            shared_bytes,
            threads: opts.threads,
            max_instructions: opts.max_instructions,
            timeout: opts.timeout,
            local_limit,
            printf_fifo: opts.printf_fifo,
            cluster,
            explicit_cluster,
            checks: opts.checks,
            init_shared,
        };
        match launch_with_sink(&prog, &snapshot, &words, &cfg, progress, sink) {
            Ok(s) => Ok(LaunchReport {
                kernel: self.name().to_string(),
                grid,
                block,
                thread_instructions: s.thread_instructions,
                warp_instructions: s.warp_instructions,
                seconds: s.seconds,
                stdout: s.stdout,
                hazards: s.hazards,
            }),
            Err(b) => {
                let (e, stats) = *b;
                let stats = Box::new(stats);
                Err(Error::Kernel {
                    file: self.module.file.clone(),
                    failure: failure_of(&e),
                    diagnostic: Box::new(self.describe(&e)),
                    stats,
                })
            }
        }
    }

    /// Compiles the kernel and refuses it as a launch would when its reachable code holds an
    /// instruction ptxvm does not execute (`ptxvm ptxas` reports that at assembly time).
    pub fn check_runnable(&self) -> Result<(), Error> {
        let prog = self.program_within(None)?;
        self.refuse_unsupported(&prog)
    }

    /// A kernel whose reachable code (the entry and every function it may call, directly,
    /// indirectly or through a function address) holds an instruction ptxvm does not execute
    /// is refused before it starts, with one diagnostic per such instruction (the first 20);
    /// the module's other kernels run.
    fn refuse_unsupported(&self, prog: &Program) -> Result<(), Error> {
        const SHOWN: usize = 20;
        let found = &prog.unsupported;
        if found.is_empty() {
            return Ok(());
        }
        let ir = &self.module.ir;
        let mut diagnostics = Vec::new();
        for &(f, k, m) in found.iter().take(SHOWN) {
            let func = ir.functions.get(f as usize);
            let inst = func.and_then(|x| x.insts.get(k as usize));
            let span = inst.map(|i| i.span).unwrap_or_default();
            let name = inst.map(|i| i.full_name()).unwrap_or_default();
            let why = prog.messages.get(m as usize).cloned().unwrap_or_default();
            let mut d = Diagnostic::error(
                codes::UNSUPPORTED,
                format!(
                    "kernel `{}` cannot run: ptxvm does not execute `{name}` yet",
                    self.name()
                ),
                span,
            )
            .with_label_message("not supported yet");
            if !why.starts_with("ptxvm does not execute") {
                d = d.with_note(why);
            }
            if f != self.index {
                if let Some(func) = func {
                    d = d.with_note(format!(
                        "in function `{}`, which the kernel may call",
                        func.name
                    ));
                }
            }
            diagnostics.push(d);
        }
        if let Some(last) = diagnostics.pop() {
            let more = found.len().saturating_sub(SHOWN);
            let last = if more > 0 {
                last.with_note(format!("and {more} more unsupported instructions"))
            } else {
                last
            };
            diagnostics.push(last.with_help(
                "the kernel was not started; the module's other kernels run. `ptxvm doc --list --coverage` lists what ptxvm executes",
            ));
        }
        Err(Error::Invalid {
            file: self.module.file.clone(),
            diagnostics,
        })
    }

    /// breaks either fails before it starts, as the CUDA driver refuses it.
    /// The launch's cluster shape and whether it is explicit: the one asked for, else the
    /// kernel's `.reqnctapercluster`, else clusters of one; checked against the kernel's
    /// cluster directives, the grid and the size limits.
    fn cluster_shape(
        &self,
        grid: [u32; 3],
        opts: &LaunchOptions,
        prog: &Program,
        shared_bytes: u64,
    ) -> Result<([u32; 3], bool), Error> {
        let f = &self.module.ir.functions[self.index as usize];
        let name = self.name();
        let attr = |n: &str| {
            f.attrs
                .iter()
                .find(|(a, _)| a.trim_start_matches('.') == n)
                .map(|(_, args)| args.clone())
        };
        let shape = |c: [u32; 3]| format!("{}x{}x{}", c[0], c[1], c[2]);
        let req =
            attr("reqnctapercluster").map(|a| dims(&a).map(|v| v.min(u32::MAX as u64) as u32));
        let cluster = match (opts.cluster, req) {
            (Some(c), Some(r)) if c != r => {
                return Err(Error::Cluster(format!(
                    "kernel `{name}` requires clusters of {} blocks (.reqnctapercluster); the launch asks for {}",
                    shape(r),
                    shape(c)
                )))
            }
            (Some(c), _) => Some(c),
            (None, r) => r,
        };
        if cluster.is_none() && attr("explicitcluster").is_some() {
            return Err(Error::Cluster(format!(
                "kernel `{name}` must be launched with a cluster shape (.explicitcluster): give one (--cluster X,Y,Z, LaunchOptions::cluster, cudaLaunchAttributeClusterDimension)"
            )));
        }
        let Some(c) = cluster else {
            return Ok(([1; 3], false));
        };
        if c.contains(&0) {
            return Err(Error::Cluster(format!(
                "cluster {} must have no zero dimension",
                shape(c)
            )));
        }
        let size = c.iter().map(|&v| v as u64).product::<u64>();
        let max = if opts.non_portable_cluster {
            16
        } else {
            CLUSTER_MAX
        };
        if size > max {
            return Err(Error::Cluster(format!(
                "a cluster of {} = {size} blocks exceeds the limit of {max}{}",
                shape(c),
                if opts.non_portable_cluster {
                    ""
                } else {
                    " (portable size; 16 when non-portable sizes are allowed)"
                }
            )));
        }
        if let Some(m) = attr("maxclusterrank").and_then(|a| a.first().copied()) {
            if size > m {
                return Err(Error::Cluster(format!(
                    "kernel `{name}` allows at most {m} blocks per cluster (.maxclusterrank); the launch asks for {size}"
                )));
            }
        }
        if (0..3).any(|d| grid[d] % c[d] != 0) {
            return Err(Error::Cluster(format!(
                "grid {} is not a multiple of the cluster shape {}",
                shape(grid),
                shape(c)
            )));
        }
        if size > 1 {
            let shared = prog.shared_static + shared_bytes;
            if shared > 1 << ptx_interp::exec::RANK_SHIFT {
                return Err(Error::Cluster(format!(
                    "{shared} bytes of shared memory per block: ptxvm's clusters allow at most 16 MiB per block"
                )));
            }
        }
        Ok((c, true))
    }

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
            // line 0 is nvcc's "no source line" (lowering keeps the last real one instead)
            let src = inst.src.filter(|s| s.line > 0)?;
            let file = ir.file(src.file as u64).unwrap_or("?");
            Some(if src.col > 0 {
                format!("CUDA source: {file}:{}:{}", src.line, src.col)
            } else {
                format!("CUDA source: {file}:{}", src.line)
            })
        };
        let loc_of = |p: &ThreadPos| -> String {
            let span = span_of(p);
            self.module.file.location(span.start)
        };
        let mk = |code: Code, msg: String, p: &ThreadPos| -> Diagnostic {
            // the snippet under the message shows the instruction and its location; a note
            // repeats them only when there is no snippet to show
            let mut d = Diagnostic::error(code, msg, span_of(p))
                .with_label_message(format!("{} executing this", where_(p)));
            if span_of(p).is_empty() {
                d = d.with_note(format!(
                    "at {}: `{}` in {}",
                    loc_of(p),
                    inst_text(p),
                    where_(p)
                ));
            }
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
                        "out-of-bounds {space} access of {size} byte{} at address {addr:#x}: {detail}",
                        if *size == 1 { "" } else { "s" }
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
                    format!(
                        "store to read-only memory at address {addr:#x} (`.const` data, or host memory registered read-only)"
                    ),
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
                for w in waits {
                    let p = ThreadPos {
                        block: *block,
                        thread: [0; 3],
                        func: w.func,
                        inst: w.inst,
                    };
                    first_span.get_or_insert(span_of(&p));
                    let op = inst_text(&p);
                    let op = op
                        .split_whitespace()
                        .next()
                        .unwrap_or("bar.sync")
                        .trim_end_matches(';')
                        .to_string();
                    let (n, expected, id, at) = (w.threads, w.expected, w.id, loc_of(&p));
                    parts.push(match w.kind {
                        WaitKind::Warpgroup => format!(
                            "{n} of the {expected} threads of warpgroup {id} wait at wgmma.mma_async at {at}; the others never reach it"
                        ),
                        WaitKind::Cluster => format!(
                            "{n} threads wait at {op} for the cluster's {expected} threads at {at}"
                        ),
                        WaitKind::Mbarrier => format!(
                            "{n} threads wait at {op} for the mbarrier at shared offset {id} ({expected} arrivals pending) at {at}"
                        ),
                        WaitKind::Barrier => {
                            format!("{n} of {expected} threads wait at {op} {id} at {at}")
                        }
                    });
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
            ExecError::Budget { limit, at } => self
                .stuck_report(
                    codes::BUDGET,
                    format!("instruction budget exhausted: the kernel executed more than {limit} thread instructions"),
                    at.as_deref(),
                )
                .with_help("raise the limit with --max-instructions N if the kernel is meant to run this long"),
            ExecError::Timeout { seconds, at } => self
                .stuck_report(
                    codes::TIMEOUT,
                    format!("timeout: the kernel ran longer than {seconds:.1} seconds"),
                    at.as_deref(),
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

impl Kernel<'_> {
    /// The diagnostic of a launch stopped by its budget or deadline: where the threads of the
    /// block that noticed it were, by group of threads in one state at one instruction
    /// (spinning in a loop, running, waiting at a barrier or at a warp-synchronous
    /// instruction), with the PTX and CUDA lines; the primary label is on the instruction of
    /// the first group.
    fn stuck_report(&self, code: Code, message: String, at: Option<&Stuck>) -> Diagnostic {
        let ir = &self.module.ir;
        let file = &self.module.file;
        let kernel_span = ir.functions[self.index as usize].span;
        let Some(st) = at else {
            return Diagnostic::error(code, message, kernel_span)
                .with_label_message("in this kernel")
                .with_note("every block had finished: the instructions of the last blocks are counted as they end");
        };
        let block = format!("block ({},{},{})", st.block[0], st.block[1], st.block[2]);
        // the blocks that other OS threads were running, stopped with this one
        let with_others = |d: Diagnostic, st: &Stuck| match st.other_blocks {
            0 => d,
            1 => d.with_note("1 other block was running; it was stopped"),
            n => d.with_note(format!("{n} other blocks were running; they were stopped")),
        };
        if let Some(what) = &st.setup {
            let d = Diagnostic::error(code, message, kernel_span)
                .with_label_message(format!("{block} of this kernel was being set up"))
                .with_note(format!("{block} had not started: its set-up was {what}"));
            return with_others(d, st);
        }
        if st.groups.is_empty() {
            let d = Diagnostic::error(code, message, kernel_span).with_label_message(format!(
                "{block} of this kernel had finished when the limit was checked"
            ));
            return with_others(d, st);
        }
        let inst = |f: u32, k: u32| ir.functions.get(f as usize)?.insts.get(k as usize);
        let span_of = |f: u32, k: u32| inst(f, k).map(|i| i.span).unwrap_or(kernel_span);
        let [nx, ny, _] = st.ntid;
        let coords = |t: u32| {
            let (nx, ny) = (nx.max(1), ny.max(1));
            if st.ntid[1] == 1 && st.ntid[2] == 1 {
                format!("{t}")
            } else {
                format!("({},{},{})", t % nx, (t / nx) % ny, t / (nx * ny))
            }
        };
        let threads = |g: &ptx_interp::exec::StuckGroup| {
            if g.count == 1 {
                format!("thread {}", coords(g.first))
            } else if g.count == g.last - g.first + 1 {
                format!("threads {}..{}", coords(g.first), coords(g.last))
            } else {
                format!(
                    "{} threads of {}..{}",
                    g.count,
                    coords(g.first),
                    coords(g.last)
                )
            }
        };
        let mut d: Option<Diagnostic> = None;
        let mut labelled = Vec::new();
        let mut notes = Vec::new();
        for g in &st.groups {
            let span = span_of(g.func, g.inst);
            let text = file.text().get(span.range()).unwrap_or("").trim();
            let op = text
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_end_matches(';');
            let (doing, short) = match &g.state {
                StuckState::Running => match self.loop_lines(g.func, g.inst) {
                    Some((a, b)) => (
                        format!("spinning in a loop (lines {a}-{b}) at"),
                        "spinning in this loop".to_string(),
                    ),
                    None => ("running at".to_string(), "running here".to_string()),
                },
                StuckState::Barrier {
                    id,
                    arrived,
                    expected,
                    all,
                } => {
                    let exited = if *all && st.exited > 0 {
                        format!(", {} exited", st.exited)
                    } else {
                        String::new()
                    };
                    let count = format!("{arrived} of {expected} threads arrived{exited}");
                    (
                        format!("waiting at barrier {id} ({count}) at"),
                        format!("waiting at barrier {id}: {count}"),
                    )
                }
                StuckState::WarpSync => (
                    format!("waiting at `{op}` for other lanes of their warp at"),
                    "waiting here for other lanes of their warp".to_string(),
                ),
            };
            let who = format!("{block} {}", threads(g));
            let mut note = format!("{who}: {doing} {}: `{text}`", file.location(span.start));
            if let Some(src) = inst(g.func, g.inst).and_then(|i| i.src) {
                let name = ir.file(src.file as u64).unwrap_or("?");
                note.push_str(&format!(" (CUDA source {name}:{})", src.line));
            }
            notes.push(note);
            let label = format!("{who} {short}");
            match d {
                None => {
                    d = Some(
                        Diagnostic::error(code, message.clone(), span).with_label_message(label),
                    );
                    labelled.push(span);
                }
                Some(x) if labelled.len() < 4 && !labelled.contains(&span) => {
                    labelled.push(span);
                    d = Some(x.with_secondary(span, label));
                }
                Some(x) => d = Some(x),
            }
        }
        let mut d = d.unwrap_or_else(|| Diagnostic::error(code, message, kernel_span));
        for n in notes {
            d = d.with_note(n);
        }
        if st.more_groups > 0 {
            d = d.with_note(format!(
                "… and {} more groups of {} threads in all in {block}",
                st.more_groups, st.more_threads
            ));
        }
        with_others(d, st)
    }

    /// The first and last PTX lines of the loop around instruction `inst` of IR function `f`
    /// (the blocks of its CFG that reach it and that it reaches), if it is in one.
    fn loop_lines(&self, f: u32, inst: u32) -> Option<(u32, u32)> {
        let func = self.module.ir.functions.get(f as usize)?;
        let blocks = &func.blocks;
        let b = blocks
            .iter()
            .position(|x| x.start <= inst && inst < x.end)?;
        let succs: Vec<Vec<usize>> = blocks
            .iter()
            .map(|x| x.succs.iter().map(|&s| s.index()).collect())
            .collect();
        let mut preds = vec![Vec::new(); blocks.len()];
        for (x, ss) in succs.iter().enumerate() {
            for &s in ss {
                if let Some(p) = preds.get_mut(s) {
                    p.push(x);
                }
            }
        }
        let reach = |edges: &[Vec<usize>]| -> Vec<bool> {
            let mut seen = vec![false; blocks.len()];
            let mut stack = vec![b];
            while let Some(x) = stack.pop() {
                for &n in &edges[x] {
                    if n < blocks.len() && !std::mem::replace(&mut seen[n], true) {
                        stack.push(n);
                    }
                }
            }
            seen
        };
        let fwd = reach(&succs);
        if !fwd[b] {
            return None;
        }
        let back = reach(&preds);
        let file = &self.module.file;
        let mut lines = (u32::MAX, 0);
        for (x, blk) in blocks.iter().enumerate() {
            if fwd[x] && back[x] {
                for i in &func.insts[blk.start as usize..blk.end as usize] {
                    let l = file.line_col(i.span.start).line;
                    lines = (lines.0.min(l), lines.1.max(l));
                }
            }
        }
        Some(lines)
    }
}

fn check_arg(k: usize, a: &Arg, p: &ParamInfo) -> Result<Vec<u8>, Error> {
    let ty = if p.array {
        format!("{}[{}]", p.type_name, p.size)
    } else {
        p.type_name.clone()
    };
    let what = format!("argument {} (`{}`, {ty})", k + 1, p.name);
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
        Arg::Struct(st) => st
            .bytes_for(p)
            .map_err(|e| Error::Usage(format!("{what}: {e}"))),
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

/// The kind of a launch's failure ([`crate::Failure`]).
fn failure_of(e: &ExecError) -> crate::Failure {
    use crate::Failure as F;
    match e {
        ExecError::Fault { kind, .. } => match kind {
            FaultKind::OutOfBounds { space, .. } => F::OutOfBounds {
                shared: *space == "shared",
            },
            FaultKind::Misaligned { .. } => F::Misaligned,
            FaultKind::ReadOnly { .. } => F::ReadOnly,
            FaultKind::Other(_) => F::Other,
        },
        ExecError::Trap(_) => F::Trap,
        ExecError::Assert { .. } => F::Assert,
        ExecError::Unsupported { .. } => F::Unsupported,
        ExecError::DivergentBarrier { .. } => F::DivergentBarrier,
        ExecError::Deadlock { .. } => F::Deadlock,
        ExecError::Budget { .. } => F::Budget,
        ExecError::Timeout { .. } => F::Timeout,
        ExecError::Cancelled => F::Cancelled,
    }
}
