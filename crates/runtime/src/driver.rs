//! What a CUDA driver API layer (`crates/cuda`, the drop-in `libcuda.so.1`) needs of the
//! runtime beyond the Rust API: a device whose allocations sit at their host addresses, the
//! allocation containing an address, a module's variables by name, a kernel's parameter layout
//! and its resource figures.

use crate::{Device, Error, Kernel, Module};
use ptx_interp::mem::{Allocation, GlobalMemory};
use ptx_isa::StateSpace;
use std::sync::{Arc, Weak};

/// One allocation of a device, as [`Device::allocation`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocationInfo {
    /// Its first address.
    pub base: u64,
    /// Its size in bytes.
    pub size: u64,
    /// `.const` data (kernels cannot store to it).
    pub read_only: bool,
}

/// A kernel's resources, for `cuFuncGetAttribute`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// Static shared memory bytes: what the kernel's `.shared` variables take.
    pub shared_static: u64,
    /// Value slots of the compiled kernel (a stand-in for registers per thread).
    pub registers: u32,
    /// Bytes of the parameter buffer.
    pub param_size: u64,
    /// `.maxntid` (product) or `.reqntid`, if declared.
    pub max_threads: Option<u64>,
    /// Bytes of the module's `.const` variables (the constant bank a kernel may read).
    pub const_bytes: u64,
    /// Local memory per thread: the kernel's frame and the largest frame of what it calls.
    pub local_bytes: u64,
}

/// A claim on the allocation that held a range when the claim was made ([`Device::claim`]):
/// work queued or recorded now and run later (a stream's copy, a graph's memset node) holds it
/// while it runs ([`Device::hold`]), and finds out if the allocation was freed in between —
/// even when a new allocation now sits at the same address.
#[derive(Clone, Debug)]
pub struct Claim {
    alloc: Weak<Allocation>,
    addr: u64,
    len: u64,
}

impl Claim {
    /// The claimed range's first address.
    pub fn addr(&self) -> u64 {
        self.addr
    }
}

/// A claimed allocation kept alive: its storage is not released while this lives, even if it
/// is freed meanwhile, so a copy through its address cannot write into reused memory.
pub struct Held(#[allow(dead_code)] Arc<Allocation>);

impl Device {
    /// Claims the live allocation holding the `len` bytes at `addr` (`None` when none does).
    pub fn claim(&self, addr: u64, len: u64) -> Option<Claim> {
        let m = self.mem.lock().unwrap_or_else(|e| e.into_inner());
        m.find(addr, len).map(|a| Claim {
            alloc: Arc::downgrade(a),
            addr,
            len,
        })
    }

    /// Holds a claimed allocation if it is still live: the allocation the map finds for the
    /// claimed range is the very one claimed (`None` once it was freed, whatever took its
    /// place). The map's lookup costs O(log n) in live allocations.
    pub fn hold(&self, c: &Claim) -> Option<Held> {
        let a = c.alloc.upgrade()?;
        let m = self.mem.lock().unwrap_or_else(|e| e.into_inner());
        let live = m.find(c.addr, c.len).is_some_and(|x| Arc::ptr_eq(x, &a));
        live.then_some(Held(a))
    }

    /// A device in identity mode: the address of each allocation (buffers, module variables) is
    /// the host address of its storage, so host code may dereference device pointers (CUDA's
    /// mapped, pinned and managed memory). Addresses then differ from run to run; 16-byte
    /// alignment is guaranteed.
    pub fn identity() -> Device {
        let d = Device::new();
        *d.mem.lock().unwrap_or_else(|e| e.into_inner()) = GlobalMemory::identity();
        d
    }

    /// Whether allocations sit at their host addresses ([`Device::identity`]).
    pub fn is_identity(&self) -> bool {
        self.mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_identity()
    }

    /// The live allocation holding the `len` bytes at `addr`, if one does.
    pub fn allocation(&self, addr: u64, len: u64) -> Option<AllocationInfo> {
        let m = self.mem.lock().unwrap_or_else(|e| e.into_inner());
        m.find(addr, len).map(|a| AllocationInfo {
            base: a.base,
            size: a.size,
            read_only: a.read_only,
        })
    }
}

impl Module {
    /// The device the module is loaded on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The address and size of the module's `.global` or `.const` variable `name` (`None` when
    /// there is none or it is an extern without storage), as `cuModuleGetGlobal` gives them.
    /// [`Module::read_global`] and [`Module::write_global`] read and write it by name.
    pub fn global(&self, name: &str) -> Option<(u64, u64)> {
        self.ir
            .globals
            .iter()
            .enumerate()
            .filter(|(_, g)| matches!(g.space, StateSpace::Global | StateSpace::Const))
            .find(|(_, g)| &*g.name == name)
            .and_then(|(i, g)| match self.globals.addr.get(i) {
                Some(&a) if a != 0 => Some((a, g.size)),
                _ => None,
            })
    }
}

impl Kernel<'_> {
    /// The byte offset and size of each parameter in the parameter buffer, in order (how
    /// `cuLaunchKernel` reads `kernelParams` and `extra`), and the buffer's size. Each
    /// parameter starts at the previous one's end rounded up to its alignment;
    /// [`Kernel::params`] gives names, types and alignments with the same offsets.
    pub fn param_layout(&self) -> Result<(Vec<(u64, u64)>, u64), Error> {
        let p = self.program()?;
        Ok((p.params.clone(), p.param_size))
    }

    /// Resource figures of the compiled kernel.
    pub fn resources(&self) -> Result<KernelResources, Error> {
        let p = self.program()?;
        let f = &self.module.ir.functions[self.index as usize];
        let mut max_threads = None;
        for (name, args) in &f.attrs {
            if matches!(name.trim_start_matches('.'), "maxntid" | "reqntid") {
                let [x, y, z] = crate::module::dims(args);
                max_threads = Some(x.saturating_mul(y).saturating_mul(z));
            }
        }
        let const_bytes = self
            .module
            .ir
            .globals
            .iter()
            .filter(|g| g.space == StateSpace::Const)
            .map(|g| g.size)
            .sum();
        // static shared bytes as declared (the compiled layout rounds its end up to 16 for the
        // dynamic area; `cuFuncGetAttribute` reports what the variables take, as ptxas does)
        let mut shared = 0u64;
        let align = |off: u64, a: u64| off.div_ceil(a.max(1)).saturating_mul(a.max(1));
        for g in &self.module.ir.globals {
            if matches!(g.space, StateSpace::Shared | StateSpace::SharedCta)
                && g.size != 0
                && !g.external
            {
                shared = align(shared, g.align).saturating_add(g.size);
            }
        }
        for f in &p.funcs {
            if let Some(func) = self.module.ir.functions.get(f.ir_index as usize) {
                for l in func.locals.iter().filter(|l| l.space == StateSpace::Shared) {
                    shared = align(shared, l.align).saturating_add(l.size);
                }
            }
        }
        let kernel_frame = p.funcs.first().map_or(0, |f| f.frame_size);
        let callee_frame = p.funcs.iter().skip(1).map(|f| f.frame_size).max();
        Ok(KernelResources {
            shared_static: shared.min(p.shared_static),
            registers: p.nslots,
            param_size: p.param_size,
            max_threads,
            const_bytes,
            local_bytes: kernel_frame + callee_frame.unwrap_or(0),
        })
    }
}
