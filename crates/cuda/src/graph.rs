//! Graphs from stream capture: `cuStreamBeginCapture` … `cuStreamEndCapture` records a
//! stream's work as nodes ([`crate::stream`]); `cuGraphInstantiate` freezes them and
//! `cuGraphLaunch` replays them, in capture order, as one unit of work of a stream. Graphs are
//! linear chains of the captured nodes (capture order is a valid order of any captured
//! dependency graph). Building graphs node by node (`cuGraphAdd*Node`) is not supported.

use crate::abi::*;
use crate::api;
use crate::state;
use crate::stream::{self, NodeKind, Nodes, Op};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

type Handle = *mut c_void;

/// A graph: its context and its nodes in order.
struct Graph {
    ctx: u64,
    nodes: Nodes,
    /// The handle of node k is `node_base + 16 k`.
    node_base: u64,
}

#[derive(Default)]
struct Registry {
    next: u64,
    graphs: HashMap<u64, Graph>,
    execs: HashMap<u64, (u64, Nodes)>,
}

/// Graph, exec and node handles: apart from the state's handles, never reused, never NULL.
const GRAPH_BASE: u64 = 0x00C0_6A00_0000;

static GRAPHS: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);

fn graphs() -> MutexGuard<'static, Registry> {
    GRAPHS.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    fn fresh(&mut self, n: u64) -> u64 {
        let h = GRAPH_BASE + (self.next + 1) * 16;
        self.next += n + 1;
        h
    }

    fn add_graph(&mut self, ctx: u64, nodes: Vec<(NodeKind, Op)>) -> u64 {
        let h = self.fresh(0);
        let node_base = self.fresh(nodes.len() as u64);
        self.graphs.insert(
            h,
            Graph {
                ctx,
                nodes: Arc::new(nodes),
                node_base,
            },
        );
        h
    }
}

/// How many graphs and executable graphs of context `ctx` are registered (the driver fuzzer's
/// leak check).
pub fn graphs_of_ctx(ctx: u64) -> usize {
    let r = graphs();
    r.graphs.values().filter(|g| g.ctx == ctx).count()
        + r.execs.values().filter(|e| e.0 == ctx).count()
}

fn h(p: Handle) -> u64 {
    p as u64
}

/// `CUgraphInstantiate_flags`: AUTO_FREE_ON_LAUNCH 1, UPLOAD 2, DEVICE_LAUNCH 4,
/// USE_NODE_PRIORITY 8.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn instantiate(pexec: *mut Handle, graph: u64, flags: u64) -> Result<(), CUresult> {
    state::init_lock().map(drop)?;
    if pexec.is_null() || flags & !0xF != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut r = graphs();
    let g = r.graphs.get(&graph).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if flags & 4 != 0 {
        // a device-launchable graph: not with AUTO_FREE_ON_LAUNCH, and only kernel, copy and
        // set nodes
        let plain = g
            .nodes
            .iter()
            .all(|(k, _)| matches!(k, NodeKind::Kernel | NodeKind::Memcpy | NodeKind::Memset));
        if flags & 1 != 0 || !plain {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
    }
    let exec = (g.ctx, g.nodes.clone());
    let e = r.fresh(0);
    r.execs.insert(e, exec);
    put(pexec, e as Handle)
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn graph_nodes(
    graph: u64,
    nodes: *mut Handle,
    n: *mut usize,
    roots: bool,
) -> Result<(), CUresult> {
    let r = graphs();
    let g = r.graphs.get(&graph).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let count = if roots {
        g.nodes.len().min(1)
    } else {
        g.nodes.len()
    };
    if nodes.is_null() {
        return put(n, count);
    }
    let room = get(n)?;
    for k in 0..room.min(count) {
        put(
            nodes.wrapping_add(k),
            (g.node_base + 16 * k as u64) as Handle,
        )?;
    }
    for k in count..room {
        put(nodes.wrapping_add(k), std::ptr::null_mut())?;
    }
    put(n, count)
}

fn node_type(node: u64) -> Result<c_int, CUresult> {
    let r = graphs();
    for g in r.graphs.values() {
        if node >= g.node_base && node < g.node_base + 16 * g.nodes.len() as u64 {
            let k = ((node - g.node_base) / 16) as usize;
            return Ok(g.nodes[k].0 as c_int);
        }
    }
    Err(CUDA_ERROR_INVALID_VALUE)
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn end_capture(stream: u64, pgraph: *mut Handle) -> Result<(), CUresult> {
    if pgraph.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    put(pgraph, std::ptr::null_mut())?;
    let nodes = stream::end_capture(stream)?;
    let g = graphs().add_graph(ctx, nodes);
    put(pgraph, g as Handle)
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn capture_info(
    stream: u64,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut Handle,
    deps: *mut *const Handle,
    edges: *mut *const c_void,
    n: *mut usize,
) -> Result<(), CUresult> {
    let (st, cid) = stream::capture_info(stream)?;
    put(status, st as c_int)?;
    if !id.is_null() && st != 0 {
        put(id, cid)?;
    }
    // the graph under construction is not exposed: NULL, with no dependencies
    if !graph.is_null() {
        put(graph, std::ptr::null_mut())?;
    }
    if !deps.is_null() {
        put(deps, std::ptr::null())?;
    }
    if !edges.is_null() {
        put(edges, std::ptr::null())?;
    }
    if !n.is_null() {
        put(n, 0)?;
    }
    Ok(())
}

fn graph_launch(exec: u64, stream: u64) -> Result<(), CUresult> {
    let (ctx, nodes) = graphs()
        .execs
        .get(&exec)
        .cloned()
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let sctx = state::init_lock()?.stream_ctx(stream)?;
    if sctx != ctx {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    stream::launch_nodes(stream, nodes)
}

fn mode_arg(mode: c_int) -> Result<u32, CUresult> {
    u32::try_from(mode).map_err(|_| CUDA_ERROR_INVALID_VALUE)
}

api! {
    fn cuStreamBeginCapture(stream: Handle) {
        stream::begin_capture(h(stream), stream::MODE_GLOBAL)
    }

    fn cuStreamBeginCapture_ptsz(stream: Handle) {
        stream::begin_capture(h(stream), stream::MODE_GLOBAL)
    }

    fn cuStreamBeginCapture_v2(stream: Handle, mode: c_int) {
        stream::begin_capture(h(stream), mode_arg(mode)?)
    }

    fn cuStreamBeginCapture_v2_ptsz(stream: Handle, mode: c_int) {
        stream::begin_capture(h(stream), mode_arg(mode)?)
    }

    fn cuStreamEndCapture(stream: Handle, graph: *mut Handle) {
        end_capture(h(stream), graph)
    }

    fn cuStreamEndCapture_ptsz(stream: Handle, graph: *mut Handle) {
        end_capture(h(stream), graph)
    }

    fn cuStreamIsCapturing(stream: Handle, status: *mut c_int) {
        let (st, _) = stream::capture_info(h(stream))?;
        put(status, st as c_int)
    }

    fn cuStreamIsCapturing_ptsz(stream: Handle, status: *mut c_int) {
        let (st, _) = stream::capture_info(h(stream))?;
        put(status, st as c_int)
    }

    fn cuStreamGetCaptureInfo(stream: Handle, status: *mut c_int, id: *mut u64) {
        capture_info(h(stream), status, id, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut())
    }

    fn cuStreamGetCaptureInfo_ptsz(stream: Handle, status: *mut c_int, id: *mut u64) {
        capture_info(h(stream), status, id, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut())
    }

    fn cuStreamGetCaptureInfo_v2(stream: Handle, status: *mut c_int, id: *mut u64, graph: *mut Handle, deps: *mut *const Handle, n: *mut usize) {
        capture_info(h(stream), status, id, graph, deps, std::ptr::null_mut(), n)
    }

    fn cuStreamGetCaptureInfo_v2_ptsz(stream: Handle, status: *mut c_int, id: *mut u64, graph: *mut Handle, deps: *mut *const Handle, n: *mut usize) {
        capture_info(h(stream), status, id, graph, deps, std::ptr::null_mut(), n)
    }

    fn cuStreamGetCaptureInfo_v3(stream: Handle, status: *mut c_int, id: *mut u64, graph: *mut Handle, deps: *mut *const Handle, edges: *mut *const c_void, n: *mut usize) {
        capture_info(h(stream), status, id, graph, deps, edges, n)
    }

    fn cuStreamGetCaptureInfo_v3_ptsz(stream: Handle, status: *mut c_int, id: *mut u64, graph: *mut Handle, deps: *mut *const Handle, edges: *mut *const c_void, n: *mut usize) {
        capture_info(h(stream), status, id, graph, deps, edges, n)
    }

    fn cuThreadExchangeStreamCaptureMode(mode: *mut u32) {
        stream::exchange_mode(mode)
    }

    fn cuGraphCreate(pgraph: *mut Handle, flags: u32) {
        if pgraph.is_null() || flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let ctx = state::init_lock()?.current()?;
        let g = graphs().add_graph(ctx, Vec::new());
        put(pgraph, g as Handle)
    }

    fn cuGraphDestroy(graph: Handle) {
        state::init_lock().map(drop)?;
        graphs().graphs.remove(&h(graph)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_VALUE)
    }

    fn cuGraphGetNodes(graph: Handle, nodes: *mut Handle, n: *mut usize) {
        state::init_lock().map(drop)?;
        graph_nodes(h(graph), nodes, n, false)
    }

    fn cuGraphGetRootNodes(graph: Handle, nodes: *mut Handle, n: *mut usize) {
        state::init_lock().map(drop)?;
        graph_nodes(h(graph), nodes, n, true)
    }

    fn cuGraphNodeGetType(node: Handle, kind: *mut c_int) {
        state::init_lock().map(drop)?;
        put(kind, node_type(h(node))?)
    }

    fn cuGraphInstantiate(pexec: *mut Handle, graph: Handle, error_node: *mut Handle, log: *mut c_char, log_size: usize) {
        if !error_node.is_null() {
            put(error_node, std::ptr::null_mut())?;
        }
        if !log.is_null() && log_size > 0 {
            put(log, 0)?;
        }
        instantiate(pexec, h(graph), 0)
    }

    fn cuGraphInstantiate_v2(pexec: *mut Handle, graph: Handle, error_node: *mut Handle, log: *mut c_char, log_size: usize) {
        if !error_node.is_null() {
            put(error_node, std::ptr::null_mut())?;
        }
        if !log.is_null() && log_size > 0 {
            put(log, 0)?;
        }
        instantiate(pexec, h(graph), 0)
    }

    fn cuGraphInstantiateWithFlags(pexec: *mut Handle, graph: Handle, flags: u64) {
        instantiate(pexec, h(graph), flags)
    }

    fn cuGraphExecDestroy(exec: Handle) {
        state::init_lock().map(drop)?;
        graphs().execs.remove(&h(exec)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_VALUE)
    }

    fn cuGraphLaunch(exec: Handle, stream: Handle) {
        graph_launch(h(exec), h(stream))
    }

    fn cuGraphLaunch_ptsz(exec: Handle, stream: Handle) {
        graph_launch(h(exec), h(stream))
    }

    fn cuGraphUpload(exec: Handle, stream: Handle) {
        graphs().execs.get(&h(exec)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        state::init_lock()?.stream_ctx(h(stream)).map(|_| ())
    }

    fn cuGraphUpload_ptsz(exec: Handle, stream: Handle) {
        graphs().execs.get(&h(exec)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        state::init_lock()?.stream_ctx(h(stream)).map(|_| ())
    }
}
