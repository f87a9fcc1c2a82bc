//! Calls and returns, and the calls ptxvm provides (`vprintf`, `__assertfail`).
//!
//! Each lane has its own call stack of frames. A call copies its arguments into the callee's
//! frame (local memory after the caller's) or parameter registers, saves the registers of a
//! recursive callee, and counts the call against the thread's stack size (frame, bookkeeping
//! [`CALL_OVERHEAD`] and saved registers), so that recursion depth and host memory stay
//! bounded. An indirect call splits the group by target. `vprintf` formats the record and
//! queues it in the launch's printf FIFO.

use super::cta::Cta;
use super::fault::ExecError;
use crate::program::{lane_bits, CallOperand, CallTarget, Fault, FaultKind, Insn};
use std::time::Instant;

/// Local memory a thread can have by default (bytes): what an sm_90 GPU allows per thread. A
/// kernel whose `.local` variables need more is refused at launch unless the stack size is
/// raised to cover them.
pub const LOCAL_MAX: u64 = 512 << 10;
/// The default per-thread stack (bytes), as `cudaLimitStackSize` sets it on a GPU: the bound on
/// the local memory a thread's calls and `alloca` can use when it is not known before the
/// launch (recursion, indirect calls, `alloca`); the launch raises it to what the kernel's own
/// `.local` frame and its call tree need. CUDA's default is 1 KiB, but a ptxvm frame also holds
/// the registers a recursive call saves (8 bytes each), so the default is larger.
pub const DEFAULT_STACK_SIZE: u64 = 64 << 10;
/// Bookkeeping bytes every call counts against the thread's stack (return address, saved frame
/// pointer), besides the callee's frame and, for a recursive callee, 8 bytes per register and
/// predicate it saves: every call costs stack, so call depth and the host memory of call
/// frames are bounded by the stack size. (They are counted, not laid out in local memory: a
/// frame's local addresses follow the caller's.)
pub const CALL_OVERHEAD: u64 = 32;

/// The stack bytes a call to `callee` counts besides its frame ([`CALL_OVERHEAD`]).
pub(super) fn call_cost(callee: &crate::program::FuncInfo) -> u64 {
    let saved = if callee.recursive {
        8 * ((callee.slots.1 - callee.slots.0) + (callee.pred_slots.1 - callee.pred_slots.0)) as u64
    } else {
        0
    };
    CALL_OVERHEAD + saved
}

/// A call in progress of one lane.
#[derive(Clone, Debug)]
pub(super) struct Frame {
    /// Where the return goes.
    pub(super) ret_pc: u32,
    /// The caller's frame pointer.
    pub(super) fp: u64,
    /// The caller's stack top.
    pub(super) sp: u64,
    /// The call site (index in `Program::calls`).
    pub(super) call: u32,
    /// The callee (index in `Program::funcs`).
    pub(super) callee: u32,
    /// The caller.
    pub(super) caller: u32,
}

pub(super) fn copy_local(local: &mut crate::mem::LocalMem, from: u64, to: u64, n: u64) {
    let len = local.len() as u64 * 4;
    for b in 0..n {
        if from + b + 1 > len || to + b + 1 > len {
            break;
        }
        let v = crate::mem::load(local, from + b, 1);
        crate::mem::store(local, to + b, 1, v);
    }
}

impl<'s, 'a> Cta<'s, 'a> {
    pub(super) fn call(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
        k: u32,
    ) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let site = &prog.calls[k as usize];
        let rest = mask & !m;
        if m == 0 {
            self.warps[wi].cur = Some((pc + 1, mask));
            return Ok(());
        }
        match &site.target {
            CallTarget::Func(f) => {
                self.enter(wi, pc, m, k, *f)?;
            }
            CallTarget::Indirect(slot) => {
                let mut left = m;
                while left != 0 {
                    let l = left.trailing_zeros() as usize;
                    let addr = self.warps[wi].regs[*slot as usize][l];
                    let Some(f) = crate::compile::func_of_addr(prog, addr) else {
                        let e = Fault {
                            kind: FaultKind::Other(format!(
                                "indirect call to {addr:#x}, which is not the address of a function"
                            )),
                            lane: Some(l as u32),
                        };
                        return Err(self.fault(wi, insn, e, m));
                    };
                    let mut same = 0;
                    for x in lane_bits(left) {
                        if self.warps[wi].regs[*slot as usize][x] == addr {
                            same |= 1 << x;
                        }
                    }
                    self.enter(wi, pc, same, k, f)?;
                    left &= !same;
                }
                // lanes may now be in different functions: regroup by pc
                let w = &mut self.warps[wi];
                let target_pc = w.pcs[m.trailing_zeros() as usize];
                let all_same = lane_bits(m).all(|l| w.pcs[l] == target_pc);
                if !all_same || rest != 0 {
                    Self::save(w, pc + 1, rest);
                    w.cur = None;
                } else {
                    w.cur = Some((target_pc, m));
                }
                return Ok(());
            }
            CallTarget::Vprintf => {
                self.vprintf(wi, insn, m, site)?;
                self.warps[wi].cur = Some((pc + 1, mask));
                return Ok(());
            }
            CallTarget::Malloc | CallTarget::Free => {
                self.heap_call(wi, insn, m, site)?;
                self.warps[wi].cur = Some((pc + 1, mask));
                return Ok(());
            }
            CallTarget::AssertFail => {
                let l = m.trailing_zeros() as usize;
                let message = self.assert_message(wi, l, site);
                return Err(ExecError::Assert {
                    message,
                    pos: self.pos(wi, l, insn),
                });
            }
            CallTarget::Undefined(name) => {
                let l = m.trailing_zeros() as usize;
                return Err(ExecError::Unsupported {
                    message: format!(
                        "call to `{name}`, which is declared but not defined in this module"
                    ),
                    pos: self.pos(wi, l, insn),
                });
            }
        }
        let w = &mut self.warps[wi];
        let entry = w.pcs[m.trailing_zeros() as usize];
        if rest != 0 {
            Self::save(w, pc + 1, rest);
            w.cur = None;
        } else {
            w.cur = Some((entry, m));
        }
        Ok(())
    }

    /// Pushes a frame for lanes `m` calling function `f` from call site `k` at `pc`.
    pub(super) fn enter(
        &mut self,
        wi: usize,
        pc: u32,
        m: u32,
        k: u32,
        f: u32,
    ) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let callee = &prog.funcs[f as usize];
        let site = &prog.calls[k as usize];
        let fp_slot = prog.fp_slot as usize;
        for l in lane_bits(m) {
            let w = &mut self.warps[wi];
            let caller_fp = w.regs[fp_slot][l];
            let new_fp = (w.sp[l] + 15) & !15;
            let new_sp = new_fp + callee.frame_size;
            // the stack the thread uses: local memory up to the new frame's end, and the
            // bookkeeping of the calls in progress and this one (the registers a recursive
            // call saves are held beside the stack but counted in it)
            let cost = call_cost(callee);
            let used = new_sp + w.booked[l] + cost;
            let limit = self.sh.env.local_limit;
            if used > limit {
                let e = Fault {
                    kind: FaultKind::Other(format!(
                        "stack overflow: calling `{}` needs {used} bytes of the thread's stack, the stack size is {limit} bytes (raise it with --stack-size, LaunchOptions::stack_size)",
                        callee.name
                    )),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
            // a recursive callee's registers are the caller's (the same function): save them
            // before the arguments are written into them
            if callee.recursive {
                let (a, b) = callee.slots;
                let (pa, pb) = callee.pred_slots;
                let s = &mut w.saves[l];
                s.extend((a..b).map(|r| w.regs[r as usize][l]));
                s.extend((pa..pb).map(|p| (w.preds[p as usize] >> l & 1) as u64));
            }
            let local = &mut w.local[l];
            local.grow(new_sp.div_ceil(4) as usize);
            // arguments
            for (arg, param) in site.args.iter().zip(&callee.params) {
                let (poff, psize, preg) = *param;
                match (arg, preg) {
                    (CallOperand::Frame(off, size), None) => {
                        let n = (*size).min(psize);
                        copy_local(local, caller_fp + off, new_fp + poff, n);
                    }
                    (CallOperand::Slot(s), None) => {
                        let v = w.regs[*s as usize][l];
                        for b in 0..psize.min(8) {
                            crate::mem::store(local, new_fp + poff + b, 1, v >> (8 * b));
                        }
                    }
                    (CallOperand::Slot(s), Some(r)) => {
                        w.regs[r as usize][l] = w.regs[*s as usize][l];
                    }
                    (CallOperand::Frame(off, size), Some(r)) => {
                        let mut v = 0u64;
                        for b in 0..(*size).min(8) {
                            v |= crate::mem::load(local, caller_fp + off + b, 1) << (8 * b);
                        }
                        w.regs[r as usize][l] = v;
                    }
                }
            }
            let caller = w.func[l];
            w.stacks[l].push(Frame {
                ret_pc: pc + 1,
                fp: caller_fp,
                sp: w.sp[l],
                call: k,
                callee: f,
                caller,
            });
            if w.stacks[l].len() > 100_000 {
                let e = Fault {
                    kind: FaultKind::Other("call depth exceeds 100000: runaway recursion".into()),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
            w.booked[l] += cost;
            w.regs[fp_slot][l] = new_fp;
            w.sp[l] = new_sp;
            w.func[l] = f;
            w.pcs[l] = callee.entry;
        }
        Ok(())
    }

    pub(super) fn ret(&mut self, wi: usize, pc: u32, mask: u32, m: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let fp_slot = prog.fp_slot as usize;
        let rest = mask & !m;
        if m == 0 {
            self.warps[wi].cur = Some((pc + 1, mask));
            return Ok(());
        }
        let mut exiting = 0u32;
        // a `ret` in the kernel's own code ends the threads (no lane there has a caller)
        let in_kernel = prog.funcs.get(1).is_none_or(|f| pc < f.entry);
        if in_kernel {
            exiting = m;
        } else {
            let w = &mut self.warps[wi];
            for l in lane_bits(m) {
                let Some(fr) = w.stacks[l].pop() else {
                    exiting |= 1 << l;
                    continue;
                };
                let callee = &prog.funcs[fr.callee as usize];
                w.booked[l] -= call_cost(callee);
                let site = &prog.calls[fr.call as usize];
                let callee_fp = w.regs[fp_slot][l];
                // results
                for (dst, ret) in site.rets.iter().zip(&callee.returns) {
                    let (roff, rsize, rreg) = *ret;
                    match (dst, rreg) {
                        (CallOperand::Frame(off, size), None) => {
                            copy_local(
                                &mut w.local[l],
                                callee_fp + roff,
                                fr.fp + off,
                                (*size).min(rsize),
                            );
                        }
                        (CallOperand::Slot(s), None) => {
                            let mut v = 0u64;
                            for b in 0..rsize.min(8) {
                                v |= crate::mem::load(&w.local[l], callee_fp + roff + b, 1)
                                    << (8 * b);
                            }
                            w.regs[*s as usize][l] = v;
                        }
                        (CallOperand::Slot(s), Some(r)) => {
                            w.regs[*s as usize][l] = w.regs[r as usize][l];
                        }
                        (CallOperand::Frame(off, size), Some(r)) => {
                            let v = w.regs[r as usize][l];
                            for b in 0..(*size).min(8) {
                                crate::mem::store(
                                    &mut w.local[l],
                                    fr.fp + off + b,
                                    1,
                                    v >> (8 * b),
                                );
                            }
                        }
                    }
                }
                if callee.recursive {
                    let (a, b) = callee.slots;
                    let (pa, pb) = callee.pred_slots;
                    let s = &mut w.saves[l];
                    let base = s.len() - (b - a + pb - pa) as usize;
                    for (i, &v) in s[base..base + (b - a) as usize].iter().enumerate() {
                        w.regs[a as usize + i][l] = v;
                    }
                    for (i, &v) in s[base + (b - a) as usize..].iter().enumerate() {
                        let p = &mut w.preds[pa as usize + i];
                        *p = (*p & !(1 << l)) | ((v as u32) << l);
                    }
                    s.truncate(base);
                }
                w.regs[fp_slot][l] = fr.fp;
                w.sp[l] = fr.sp;
                w.func[l] = fr.caller;
                w.pcs[l] = fr.ret_pc;
            }
        }
        if exiting != 0 {
            self.exit_lanes(wi, exiting)?;
        }
        let w = &mut self.warps[wi];
        let back = m & !exiting;
        if rest != 0 {
            Self::save(w, pc + 1, rest);
        }
        if back != 0 {
            let t = w.pcs[back.trailing_zeros() as usize];
            if rest == 0 && lane_bits(back).all(|l| w.pcs[l] == t) {
                w.cur = Some((t, back));
                let mut others = u32::MAX;
                for l in lane_bits(w.ready & !back) {
                    others = others.min(w.pcs[l]);
                }
                w.others_min = others;
                return Ok(());
            }
        }
        w.cur = None;
        Ok(())
    }

    pub(super) fn read_frame_u64(&self, wi: usize, l: usize, off: u64) -> u64 {
        let w = &self.warps[wi];
        let fp = w.regs[self.sh.prog.fp_slot as usize][l];
        let mut v = 0u64;
        for b in 0..8 {
            let a = fp + off + b;
            if a + 1 > w.local[l].len() as u64 * 4 {
                return 0;
            }
            v |= crate::mem::load(&w.local[l], a, 1) << (8 * b);
        }
        v
    }

    pub(super) fn arg_u64(
        &self,
        wi: usize,
        l: usize,
        site: &crate::program::CallSite,
        i: usize,
    ) -> u64 {
        match site.args.get(i) {
            Some(CallOperand::Frame(off, _)) => self.read_frame_u64(wi, l, *off),
            Some(CallOperand::Slot(s)) => self.warps[wi].regs[*s as usize][l],
            None => 0,
        }
    }

    /// Reads a NUL-terminated string at a generic address (at most 64 KiB).
    pub(super) fn read_cstr(&self, wi: usize, l: usize, addr: u64) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut a = addr;
        while out.len() < 65536 {
            let b = self.read_byte(wi, l, a)?;
            if b == 0 {
                return Some(out);
            }
            out.push(b);
            a += 1;
        }
        Some(out)
    }

    pub(super) fn read_byte(&self, wi: usize, l: usize, addr: u64) -> Option<u8> {
        use crate::mem::{LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
        if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
            let off = addr - LOCAL_WINDOW;
            let local = &self.warps[wi].local[l];
            if off < local.len() as u64 * 4 {
                return Some(crate::mem::load(local, off, 1) as u8);
            }
            return None;
        }
        if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
            let off = addr - SHARED_WINDOW;
            if off < self.sh.env.shared_size {
                return Some(crate::mem::load(&self.shared, off, 1) as u8);
            }
            return None;
        }
        let a = self.sh.env.mem.find(addr, 1)?;
        Some(crate::mem::load(&a.words, addr - a.base, 1) as u8)
    }

    pub(super) fn vprintf(
        &mut self,
        wi: usize,
        insn: &Insn,
        m: u32,
        site: &crate::program::CallSite,
    ) -> Result<(), ExecError> {
        for l in lane_bits(m) {
            let fmt_addr = self.arg_u64(wi, l, site, 0);
            let args_addr = self.arg_u64(wi, l, site, 1);
            let Some(fmt) = self.read_cstr(wi, l, fmt_addr) else {
                let e = Fault {
                    kind: FaultKind::Other(format!(
                        "printf format string at {fmt_addr:#x} is not in device memory"
                    )),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            };
            // The argument buffer: read up to 32 8-byte slots, as far as memory allows.
            let mut args = Vec::new();
            if args_addr != 0 {
                for k in 0..(32 * 8 + 64) {
                    match self.read_byte(wi, l, args_addr + k) {
                        Some(b) => args.push(b),
                        None => break,
                    }
                }
            }
            let mut read = |a: u64| self.read_cstr(wi, l, a);
            match crate::printf::format(&fmt, &args, &mut read) {
                Ok(text) => {
                    if let Some(f) = self.sh.printf {
                        if f.record(self.linear, &text, &self.sh.cancel).is_err() {
                            return Err(ExecError::Cancelled);
                        }
                    }
                    // one call can format up to 32 MiB per lane (32 conversions of
                    // `printf::MAX_FIELD`): the clock is checked per record, not only every
                    // `flush_every` instructions, so that the deadline holds for printf loops
                    if let Some(d) = self.sh.deadline {
                        if Instant::now() >= d {
                            return Err(ExecError::Timeout {
                                seconds: self.sh.timeout_seconds(),
                                at: Some(Box::new(self.stuck())),
                            });
                        }
                    }
                }
                Err(e) => {
                    let f = Fault {
                        kind: FaultKind::Other(format!("printf: {e}")),
                        lane: Some(l as u32),
                    };
                    return Err(self.fault(wi, insn, f, m));
                }
            }
            // return value: number of arguments (CUDA returns the count); write 0-extended
            if let Some(CallOperand::Frame(off, _)) = site.rets.first() {
                let w = &mut self.warps[wi];
                let fp = w.regs[self.sh.prog.fp_slot as usize][l];
                crate::mem::store(&mut w.local[l], fp + off, 4, 0);
            }
        }
        Ok(())
    }

    /// Device-side `malloc(size)` / `free(ptr)` for lanes `m`, in lane order, on the device
    /// heap ([`crate::mem::DeviceHeap`]). A `free` of an address `malloc` did not return (or
    /// already freed) is a fault: CUDA's would corrupt the heap or trap.
    fn heap_call(
        &mut self,
        wi: usize,
        insn: &Insn,
        m: u32,
        site: &crate::program::CallSite,
    ) -> Result<(), ExecError> {
        let Some(heap) = self.sh.env.mem.heap.clone() else {
            let e = Fault {
                kind: FaultKind::Other("the launch has no device heap for malloc/free".into()),
                lane: Some(m.trailing_zeros()),
            };
            return Err(self.fault(wi, insn, e, m));
        };
        for l in lane_bits(m) {
            let arg = self.arg_u64(wi, l, site, 0);
            if matches!(site.target, CallTarget::Malloc) {
                let p = heap.malloc(arg);
                match site.rets.first() {
                    Some(CallOperand::Frame(off, _)) => {
                        let w = &mut self.warps[wi];
                        let fp = w.regs[self.sh.prog.fp_slot as usize][l];
                        crate::mem::store(&mut w.local[l], fp + off, 8, p);
                    }
                    Some(CallOperand::Slot(s)) => self.warps[wi].regs[*s as usize][l] = p,
                    None => {}
                }
            } else if let Err(why) = heap.free(arg) {
                let what = match why {
                    crate::mem::FreeError::NotInHeap => "which is not in the device heap",
                    crate::mem::FreeError::NotLive => {
                        "which is not a live block of the device heap (freed twice, or not the \
                         start of a block malloc returned)"
                    }
                };
                let e = Fault {
                    kind: FaultKind::Other(format!("free of {arg:#x}, {what}")),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
        }
        Ok(())
    }

    pub(super) fn assert_message(
        &self,
        wi: usize,
        l: usize,
        site: &crate::program::CallSite,
    ) -> String {
        let s = |i: usize| {
            let a = self.arg_u64(wi, l, site, i);
            self.read_cstr(wi, l, a)
                .map(|v| String::from_utf8_lossy(&v).into_owned())
                .unwrap_or_else(|| "?".into())
        };
        let line = self.arg_u64(wi, l, site, 2) as u32;
        format!(
            "assertion `{}` failed at {}:{} in {}",
            s(0),
            s(1),
            line,
            s(3)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(
        slots: (u32, u32),
        pred_slots: (u32, u32),
        recursive: bool,
    ) -> crate::program::FuncInfo {
        crate::program::FuncInfo {
            ir_index: 0,
            name: "f".into(),
            entry: 0,
            frame_size: 48,
            slots,
            pred_slots,
            recursive,
            params: Vec::new(),
            returns: Vec::new(),
        }
    }

    #[test]
    fn a_call_costs_its_overhead_and_a_recursive_one_its_saved_registers() {
        // a plain callee: the 32 bookkeeping bytes only (its frame is counted apart)
        assert_eq!(call_cost(&func((10, 20), (0, 3), false)), 32);
        // a recursive one saves its 10 registers and 3 predicates, 8 bytes each
        assert_eq!(call_cost(&func((10, 20), (0, 3), true)), 32 + 8 * 13);
        assert_eq!(call_cost(&func((4, 4), (2, 2), true)), 32);
    }
}
