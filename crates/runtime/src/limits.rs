//! The resources a launch needs, checked before it starts, as a GPU driver refuses a launch it
//! cannot provide for (`cudaErrorLaunchOutOfResources`): local memory per thread (the stack),
//! shared memory per block, and the local memory of a whole block. Every size here comes from
//! the program or the launch, so nothing is allocated until it has passed these bounds.

use crate::{codes, Error, LaunchOptions};
use ptx_diag::{Diagnostic, SourceFile, Span};
use ptx_interp::exec::{CALL_OVERHEAD, LOCAL_MAX};
use ptx_interp::launch::LOCAL_TOTAL;
use ptx_interp::program::Program;
use ptx_ir::Module;
use ptx_isa::StateSpace;
use std::collections::HashMap;

/// Shared memory a block may use by default (static and dynamic together): the 227 KiB an
/// sm_90 GPU gives one block (its 228 KiB per SM less 1 KiB the system keeps).
pub const SHARED_LIMIT: u64 = 227 << 10;
/// The most shared memory per block a launch may be allowed (`LaunchOptions::shared_limit`).
pub const SHARED_LIMIT_MAX: u64 = 1 << 30;

/// Register storage one block may have (bytes): ptxvm keeps 8 bytes per register and thread
/// (32 lanes of a warp side by side), for the registers a kernel's code names (after sharing
/// slots), not those it declares. A launch beyond it is refused.
pub const REGISTER_FILE_MAX: u64 = 256 << 20;

/// The largest variable among `vars` (size, name, span).
type Culprit = Option<(u64, String, Span)>;

fn bigger(a: Culprit, b: Culprit) -> Culprit {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 > x.0 { y } else { x }),
        (x, y) => x.or(y),
    }
}

/// The stack a thread of function `f` needs before its calls recurse: its frame, plus the
/// deepest chain of calls that is not a cycle (a cycle needs what the stack size allows), and
/// the largest `.local` variable met on the way. A depth-first walk with an explicit stack
/// (a static chain of 30,000 calls overflowed the host stack when this recursed: issue 23),
/// and the functions on the current path marked in a vector, not searched for.
fn static_need(m: &Module, f: u32) -> (u64, Culprit) {
    /// A function being walked: its next callee, and what its callees so far need.
    struct Frame {
        f: u32,
        next: usize,
        deepest: u64,
        culprit: Culprit,
    }
    let own = |f: u32| -> Culprit {
        let mut culprit = None;
        for l in m
            .functions
            .get(f as usize)
            .map_or(&[][..], |g| &g.locals[..])
        {
            if l.space == StateSpace::Local || l.space == StateSpace::Param {
                culprit = bigger(culprit, Some((l.size, l.name.to_string(), l.span)));
            }
        }
        culprit
    };
    if m.functions.get(f as usize).is_none() {
        return (0, None);
    }
    let mut memo: HashMap<u32, (u64, Culprit)> = HashMap::new();
    let mut on_path = vec![false; m.functions.len()];
    on_path[f as usize] = true;
    let mut stack = vec![Frame {
        f,
        next: 0,
        deepest: 0,
        culprit: own(f),
    }];
    loop {
        let Some(top) = stack.last_mut() else {
            return (0, None);
        };
        let func = &m.functions[top.f as usize];
        if let Some(c) = func.callees.get(top.next).map(|c| c.raw()) {
            top.next += 1;
            if on_path.get(c as usize).copied().unwrap_or(true)
                || !m.functions.get(c as usize).is_some_and(|g| g.defined)
            {
                continue;
            }
            if let Some((need, cul)) = memo.get(&c).cloned() {
                top.deepest = top.deepest.max(need.saturating_add(CALL_OVERHEAD + 15));
                top.culprit = bigger(top.culprit.take(), cul);
                continue;
            }
            on_path[c as usize] = true;
            stack.push(Frame {
                f: c,
                next: 0,
                deepest: 0,
                culprit: own(c),
            });
            continue;
        }
        // every callee walked: this function's need, handed to its caller
        let Some(done) = stack.pop() else {
            return (0, None);
        };
        on_path[done.f as usize] = false;
        let r = (func.frame_size.saturating_add(done.deepest), done.culprit);
        match stack.last_mut() {
            None => return r,
            Some(caller) => {
                caller.deepest = caller.deepest.max(r.0.saturating_add(CALL_OVERHEAD + 15));
                caller.culprit = bigger(caller.culprit.take(), r.1.clone());
                memo.insert(done.f, r);
            }
        }
    }
}

fn refuse(file: &SourceFile, message: String, span: Span, label: String, help: String) -> Error {
    Error::Invalid {
        file: file.clone(),
        diagnostics: vec![Diagnostic::error(codes::RESOURCES, message, span)
            .with_label_message(label)
            .with_help(help)],
    }
}

/// Checks the launch of kernel `k` against the limits; returns the local memory (stack) bytes
/// each thread may use.
pub(crate) fn check_launch(
    file: &SourceFile,
    m: &Module,
    k: u32,
    prog: &Program,
    block: [u32; 3],
    shared_bytes: u64,
    opts: &LaunchOptions,
) -> Result<u64, Error> {
    let kernel = &m.functions[k as usize];
    let kname = &kernel.name;
    if opts.stack_size > LOCAL_TOTAL {
        return Err(Error::Usage(format!(
            "a stack size of {} bytes per thread is more than the {LOCAL_TOTAL} bytes of local memory ptxvm gives a block",
            opts.stack_size
        )));
    }
    if opts.shared_limit > SHARED_LIMIT_MAX {
        return Err(Error::Usage(format!(
            "a shared memory limit of {} bytes per block is more than the {SHARED_LIMIT_MAX} ptxvm allows",
            opts.shared_limit
        )));
    }
    // shared memory: static (every `.shared` variable of the module and of the kernel's
    // functions) and dynamic, per block
    let shared = prog.shared_static.saturating_add(shared_bytes);
    if shared > opts.shared_limit {
        let mut culprit: Culprit = None;
        for g in &m.globals {
            if matches!(g.space, StateSpace::Shared | StateSpace::SharedCta)
                && g.size > 0
                && !g.external
            {
                culprit = bigger(culprit, Some((g.size, g.name.to_string(), g.span)));
            }
        }
        for f in &m.functions {
            for l in &f.locals {
                if l.space == StateSpace::Shared {
                    culprit = bigger(culprit, Some((l.size, l.name.to_string(), l.span)));
                }
            }
        }
        let limit = opts.shared_limit;
        let help = format!(
            "a GPU refuses this launch (an sm_90 block has at most {SHARED_LIMIT} bytes, 227 KiB); to run it anyway, raise the limit: --shared-limit {shared} (LaunchOptions::shared_limit)"
        );
        let message = format!(
            "kernel `{kname}` needs {shared} bytes of shared memory per block ({} static, {shared_bytes} dynamic), more than the limit of {limit}",
            prog.shared_static
        );
        return Err(match culprit {
            Some((size, name, span)) if prog.shared_static > limit || shared_bytes == 0 => {
                refuse(
                    file,
                    message,
                    span,
                    format!("`.shared` variable `{name}` is {size} bytes"),
                    help,
                )
            }
            _ => Error::Usage(format!(
                "{message}: the dynamic shared memory asked for at launch (--shared {shared_bytes}) does not fit\n  = help: {help}"
            )),
        });
    }
    // registers: 8 bytes per slot and thread, 4 bytes per predicate slot and warp
    let threads = block.iter().map(|&b| b as u64).product::<u64>();
    let warps = threads.div_ceil(32);
    let regs = (prog.nslots as u64 * 256 + prog.npreds as u64 * 4) * warps;
    if regs > REGISTER_FILE_MAX {
        return Err(Error::Usage(format!(
            "kernel `{kname}` uses {} registers per thread: a block of {threads} threads needs {regs} bytes of register storage, more than the {REGISTER_FILE_MAX} ptxvm gives a block; use fewer threads per block",
            prog.nslots
        )));
    }
    // local memory: the kernel's frame and its call tree must fit what a thread can have
    let (need, culprit) = static_need(m, k);
    let max = LOCAL_MAX.max(opts.stack_size);
    if need > max {
        let message = format!(
            "kernel `{kname}` needs {need} bytes of local memory per thread, more than the {max} a thread can have"
        );
        let help = format!(
            "a GPU refuses this launch (an sm_90 thread has at most {LOCAL_MAX} bytes of local memory, 512 KiB); to run it anyway, raise the stack size: --stack-size {need} (LaunchOptions::stack_size)"
        );
        return Err(match culprit {
            Some((size, name, span)) => refuse(
                file,
                message,
                span,
                format!("`.local` variable `{name}` is {size} bytes"),
                help,
            ),
            None => Error::Usage(format!("{message}\n  = help: {help}")),
        });
    }
    let local_limit = need.max(opts.stack_size);
    let per_block = local_limit.saturating_mul(threads);
    if per_block > LOCAL_TOTAL {
        return Err(Error::Usage(format!(
            "a block of {threads} threads with {local_limit} bytes of local memory (stack) each needs {per_block} bytes, more than the {LOCAL_TOTAL} ptxvm gives a block; lower the stack size (--stack-size, LaunchOptions::stack_size) or the block size"
        )));
    }
    Ok(local_limit)
}
