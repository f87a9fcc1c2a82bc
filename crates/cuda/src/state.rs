//! The driver's state: settings, the handle registry, contexts and the per-thread context
//! stack, allocations, modules, functions, streams, events and link states.
#![deny(unsafe_code)]

use crate::abi::*;
use ptxvm::{Device, DeviceBuffer, Module};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Duration;

/// Settings read once from the environment.
pub struct Settings {
    pub trace: bool,
    pub threads: usize,
    pub timeout: Option<Duration>,
    pub max_instructions: u64,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    /// Report every kernel access past an allocation's requested size (`PTXVM_EXACT_BOUNDS=1`);
    /// by default allocations are 256-byte granular as on a GPU, whose programs (and test
    /// suites) often read a little past the end of small buffers without noticing.
    pub exact_bounds: bool,
    /// When a launch shows a progress line on stderr (`PTXVM_PROGRESS`): `Some(d)` after it has
    /// run `d`, `None` never. Unset: after 2 s when stderr is a terminal; `always`: at once;
    /// `0`: never.
    pub progress: Option<Duration>,
    /// stderr is a terminal (asked once: a launch must not pay a system call for it).
    pub stderr_tty: bool,
}

/// The settings (from `PTXVM_*` variables, read at first use).
pub fn settings() -> &'static Settings {
    static S: LazyLock<Settings> = LazyLock::new(|| {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        let defaults = ptxvm::LaunchOptions::default();
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let cc = var("PTXVM_CC")
            .and_then(|v| {
                let v = v.trim_start_matches("sm_");
                let (a, b) = match v.split_once('.') {
                    Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
                    None => {
                        let n: i32 = v.parse().ok()?;
                        (n / 10, n % 10)
                    }
                };
                Some((a, b))
            })
            .unwrap_or((8, 0));
        Settings {
            trace: var("PTXVM_TRACE").is_some_and(|v| v != "0"),
            threads: var("PTXVM_THREADS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            timeout: match var("PTXVM_TIMEOUT").and_then(|v| v.parse::<f64>().ok()) {
                Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
                Some(_) => None,
                None => defaults.timeout,
            },
            max_instructions: var("PTXVM_MAX_INSTRUCTIONS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(defaults.max_instructions),
            cc,
            exact_bounds: var("PTXVM_EXACT_BOUNDS").is_some_and(|v| v != "0"),
            stderr_tty: tty,
            progress: match var("PTXVM_PROGRESS").as_deref() {
                Some("0") => None,
                Some("always") => Some(Duration::ZERO),
                _ => tty.then_some(Duration::from_secs(2)),
            },
        }
    });
    &S
}

/// What kind of memory an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    Device,
    Host,
    Managed,
    /// Host memory registered with `cuMemHostRegister` (the host owns it).
    Registered,
    /// Another process's memory opened with `cuIpcOpenMemHandle`.
    Imported,
}

pub struct Alloc {
    pub buf: DeviceBuffer<u8>,
    /// The size asked for (the buffer may be rounded up to the allocation granularity).
    pub size: u64,
    pub kind: MemKind,
    pub ctx: u64,
    pub flags: u32,
}

pub struct Ctx {
    pub primary: bool,
    pub flags: u32,
    /// The sticky error of a faulted kernel: every later call in the context returns it.
    pub sticky: Option<CUresult>,
    pub stack_size: u64,
    pub printf_fifo: u64,
    pub cache_config: u32,
    pub id: u64,
}

impl Ctx {
    /// A context with the default limits and no error (its `id` is 0: the caller sets it).
    fn fresh(primary: bool, flags: u32) -> Ctx {
        Ctx {
            primary,
            flags,
            sticky: None,
            stack_size: 1024,
            printf_fifo: 1 << 20,
            cache_config: 0,
            id: 0,
        }
    }
}

pub struct Loaded {
    pub module: Module,
    pub ctx: u64,
    /// Kernel name → function handle (so that a name always gives the same handle).
    pub funcs: Mutex<HashMap<String, u64>>,
}

pub struct Func {
    pub module: Arc<Loaded>,
    pub module_handle: u64,
    pub name: String,
    /// (offset, size) of each parameter, and the parameter buffer's size.
    pub layout: Vec<(u64, u64)>,
    pub param_size: u64,
    pub resources: ptxvm::KernelResources,
    pub max_dynamic_shared: i32,
    pub carveout: i32,
    /// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`: clusters of up to 16 CTAs.
    pub non_portable_cluster: bool,
    /// `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH` set at run time (all 0: none):
    /// the cluster shape of launches that give none.
    pub required_cluster: [i32; 3],
    /// `CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE` (a hint: kept and reported).
    pub cluster_scheduling: i32,
    /// `CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE` (kept and reported; ptxvm has one shared memory).
    pub shared_memory_mode: i32,
    pub cname: std::ffi::CString,
}

pub struct Stream {
    pub ctx: u64,
    pub flags: u32,
    pub priority: i32,
    pub id: u64,
}

pub struct Event {
    pub ctx: u64,
    pub flags: u32,
}

#[derive(Default)]
pub struct Link {
    pub inputs: Vec<crate::link::Input>,
    /// `libcudadevrt.a` was added: its functions may stay unresolved.
    pub device_runtime: bool,
    /// The host's log buffers (address, capacity) and where to write back the bytes used.
    pub info_log: Option<(u64, usize, u64)>,
    pub error_log: Option<(u64, usize, u64)>,
    pub output: Option<Vec<u8>>,
}

pub enum Obj {
    Ctx(Ctx),
    Module(Arc<Loaded>),
    Func(Arc<Func>),
    Stream(Stream),
    Event(Event),
    Link(Link),
}

/// The context an object belongs to (`None` for contexts and links).
pub fn owner(o: &Obj) -> Option<u64> {
    match o {
        Obj::Module(m) => Some(m.ctx),
        Obj::Func(f) => Some(f.module.ctx),
        Obj::Stream(s) => Some(s.ctx),
        Obj::Event(e) => Some(e.ctx),
        Obj::Ctx(_) | Obj::Link(_) => None,
    }
}

pub struct State {
    pub initialized: bool,
    /// The process that called `cuInit`: in a child forked after it, every call answers
    /// `CUDA_ERROR_NOT_INITIALIZED`, as the driver does (numba detects forks by it).
    pub init_pid: u32,
    pub device: Device,
    next: u64,
    pub objects: HashMap<u64, Obj>,
    pub allocs: BTreeMap<u64, Alloc>,
    pub primary: Option<u64>,
    pub primary_refs: u32,
    pub primary_flags: u32,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    Mutex::new(State {
        initialized: false,
        init_pid: 0,
        device: Device::identity(),
        next: 1,
        objects: HashMap::new(),
        allocs: BTreeMap::new(),
        primary: None,
        primary_refs: 0,
        primary_flags: 0,
    })
});

thread_local! {
    /// This thread's context stack; the last one is current.
    static STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The state, locked (a panic elsewhere does not poison it for good).
pub fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The state after `cuInit`.
pub fn init_lock() -> Result<MutexGuard<'static, State>, CUresult> {
    let s = lock();
    if !s.initialized || s.init_pid != std::process::id() {
        return Err(CUDA_ERROR_NOT_INITIALIZED);
    }
    Ok(s)
}

pub fn stack_top() -> Option<u64> {
    STACK.with(|s| s.borrow().last().copied())
}

pub fn stack_set(ctx: Option<u64>) {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop();
        if let Some(c) = ctx {
            s.push(c);
        }
    })
}

pub fn stack_push(ctx: u64) {
    STACK.with(|s| s.borrow_mut().push(ctx))
}

pub fn stack_pop() -> Option<u64> {
    STACK.with(|s| s.borrow_mut().pop())
}

/// Handle values: distinct, never reused, never NULL, and shaped like pointers.
const HANDLE_BASE: u64 = 0x00C0_DA00_0000;

impl State {
    pub fn insert(&mut self, o: Obj) -> u64 {
        let h = HANDLE_BASE + self.next * 16;
        self.next += 1;
        self.objects.insert(h, o);
        h
    }

    pub fn fresh_id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub fn ctx(&self, h: u64) -> Result<&Ctx, CUresult> {
        match self.objects.get(&h) {
            Some(Obj::Ctx(c)) => Ok(c),
            _ if h == 0 => Err(CUDA_ERROR_INVALID_CONTEXT),
            _ if h >= HANDLE_BASE && h < HANDLE_BASE + self.next * 16 => {
                Err(CUDA_ERROR_CONTEXT_IS_DESTROYED)
            }
            _ => Err(CUDA_ERROR_INVALID_CONTEXT),
        }
    }

    pub fn ctx_mut(&mut self, h: u64) -> Result<&mut Ctx, CUresult> {
        self.ctx(h)?;
        match self.objects.get_mut(&h) {
            Some(Obj::Ctx(c)) => Ok(c),
            _ => Err(CUDA_ERROR_INVALID_CONTEXT),
        }
    }

    /// The calling thread's current context, with its sticky error if it has one.
    pub fn current(&self) -> Result<u64, CUresult> {
        let h = stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        let c = self.ctx(h)?;
        if let Some(e) = c.sticky {
            return Err(e);
        }
        Ok(h)
    }

    pub fn module(&self, h: u64) -> Result<Arc<Loaded>, CUresult> {
        match self.objects.get(&h) {
            Some(Obj::Module(m)) => Ok(m.clone()),
            _ => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    }

    pub fn func(&self, h: u64) -> Result<Arc<Func>, CUresult> {
        match self.objects.get(&h) {
            Some(Obj::Func(f)) => Ok(f.clone()),
            _ => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    }

    pub fn func_mut(&mut self, h: u64) -> Result<&mut Arc<Func>, CUresult> {
        match self.objects.get_mut(&h) {
            Some(Obj::Func(f)) => Ok(f),
            _ => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    }

    /// Checks a stream handle (NULL, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` are the
    /// default stream) and returns its context.
    pub fn stream_ctx(&self, h: u64) -> Result<u64, CUresult> {
        match h {
            0..=2 => self.current(),
            _ => match self.objects.get(&h) {
                Some(Obj::Stream(s)) => {
                    let c = self.ctx(s.ctx)?;
                    match c.sticky {
                        Some(e) => Err(e),
                        None => Ok(s.ctx),
                    }
                }
                _ => Err(CUDA_ERROR_INVALID_HANDLE),
            },
        }
    }

    pub fn event_mut(&mut self, h: u64) -> Result<&mut Event, CUresult> {
        match self.objects.get_mut(&h) {
            Some(Obj::Event(e)) => Ok(e),
            _ => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    }

    pub fn link_mut(&mut self, h: u64) -> Result<&mut Link, CUresult> {
        match self.objects.get_mut(&h) {
            Some(Obj::Link(l)) => Ok(l),
            _ => Err(CUDA_ERROR_INVALID_HANDLE),
        }
    }

    /// The allocation holding `[addr, addr + len)`.
    pub fn find(&self, addr: u64, len: u64) -> Option<(u64, &Alloc)> {
        let (&base, a) = self.allocs.range(..=addr).next_back()?;
        let end = addr.checked_add(len)?;
        (end <= base + a.size).then_some((base, a))
    }

    /// Checks that `[addr, addr + len)` is device-accessible memory: one of our allocations or a
    /// module variable.
    pub fn check_range(&self, addr: u64, len: u64) -> Result<(), CUresult> {
        if addr == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if len == 0 || self.find(addr, len).is_some() {
            return Ok(());
        }
        // in one of our buffers (its granule included) but past its requested size
        if let Some((&base, a)) = self.allocs.range(..=addr).next_back() {
            if addr < base + a.buf.len() as u64 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        // a module variable
        if self.device.allocation(addr, len).is_some() {
            return Ok(());
        }
        Err(CUDA_ERROR_INVALID_VALUE)
    }

    /// The device's primary context, created (inactive, not retained) if it does not exist.
    pub fn primary_ctx(&mut self) -> u64 {
        match self.primary {
            Some(c) => c,
            None => {
                let flags = self.primary_flags;
                let c = self.new_ctx(true, flags);
                self.primary = Some(c);
                c
            }
        }
    }

    pub fn new_ctx(&mut self, primary: bool, flags: u32) -> u64 {
        let id = self.fresh_id();
        self.insert(Obj::Ctx(Ctx {
            id,
            ..Ctx::fresh(primary, flags)
        }))
    }

    /// Resets primary context `h` (`cuDevicePrimaryCtxReset`): everything it owns goes, its
    /// sticky error and settings are cleared and it is no longer retained, but the handle stays
    /// the device's primary context, as the driver keeps it (cudart makes it current again
    /// after `cudaDeviceReset`, then retains it).
    pub fn reset_primary(&mut self, h: u64) {
        self.allocs.retain(|_, a| a.ctx != h);
        self.objects.retain(|_, o| owner(o) != Some(h));
        let flags = self.primary_flags;
        if let Some(Obj::Ctx(c)) = self.objects.get_mut(&h) {
            *c = Ctx {
                id: c.id,
                ..Ctx::fresh(true, flags)
            };
        }
        self.primary_refs = 0;
    }

    /// Destroys a context and everything it owns.
    pub fn destroy_ctx(&mut self, h: u64) {
        self.objects.remove(&h);
        self.allocs.retain(|_, a| a.ctx != h);
        self.objects.retain(|_, o| owner(o) != Some(h));
        if self.primary == Some(h) {
            self.primary = None;
            self.primary_refs = 0;
        }
    }
}

/// The device-memory ends of a copy or memset (driver allocations, pinned or registered host
/// memory, module variables), claimed when the call is made and held while the operation
/// runs. Work that runs later — queued on a stream, or recorded into a graph and replayed any
/// number of times — thus never writes into memory freed in the meantime (nor into whatever
/// allocation took its place): it fails with `CUDA_ERROR_INVALID_VALUE`, as the same call made
/// after the free does, and says why on stderr. Pageable host memory cannot be claimed: the
/// caller vouches for it, as CUDA requires.
pub struct Ends {
    device: Device,
    claims: Vec<ptxvm::Claim>,
}

impl Ends {
    /// Claims each of `ranges` (address, length) that lies in device-accessible memory.
    pub fn claim(s: &State, ranges: &[(u64, u64)]) -> Ends {
        Ends {
            device: s.device.clone(),
            claims: ranges
                .iter()
                .filter(|&&(_, len)| len > 0)
                .filter_map(|&(a, len)| s.device.claim(a, len))
                .collect(),
        }
    }

    /// Holds every claimed allocation for as long as the result lives; `what` names the
    /// operation for the message when one was freed.
    pub fn hold(&self, what: &str) -> Result<Vec<ptxvm::Held>, CUresult> {
        self.claims
            .iter()
            .map(|c| {
                self.device.hold(c).ok_or_else(|| {
                    eprintln!(
                        "ptxvm: {what} at {:#x} runs after its memory was freed: not run \
                         (CUDA_ERROR_INVALID_VALUE)",
                        c.addr()
                    );
                    CUDA_ERROR_INVALID_VALUE
                })
            })
            .collect()
    }
}
