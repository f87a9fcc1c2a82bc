//! Streams and events (cuda.h: "Stream Management", "Event Management"; the queues are `crate::stream`).

use super::*;

api! {
    fn cuStreamCreate(ph: *mut Handle, flags: c_uint) {
        if ph.is_null() || flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(ph, handle(new_stream(flags, 0)?))
    }

    fn cuStreamCreateWithPriority(ph: *mut Handle, flags: c_uint, priority: c_int) {
        if ph.is_null() || flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(ph, handle(new_stream(flags, priority)?))
    }

    fn cuStreamDestroy(stream: Handle) {
        stream_destroy(h(stream))
    }

    fn cuStreamDestroy_v2(stream: Handle) {
        stream_destroy(h(stream))
    }

    fn cuStreamSynchronize(stream: Handle) {
        stream::synchronize(h(stream))
    }

    fn cuStreamQuery(stream: Handle) {
        stream::query(h(stream))
    }

    fn cuStreamWaitEvent(stream: Handle, event: Handle, flags: c_uint) {
        // CU_EVENT_WAIT_DEFAULT 0, CU_EVENT_WAIT_EXTERNAL 1
        if flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        stream::wait_event(h(stream), h(event))
    }

    fn cuStreamGetCtx(stream: Handle, pctx: *mut Handle) {
        let s = state::init_lock()?;
        let c = match h(stream) {
            0..=2 => state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?,
            x => match s.objects.get(&x) {
                Some(Obj::Stream(st)) => st.ctx,
                _ => return Err(CUDA_ERROR_INVALID_HANDLE),
            },
        };
        put(pctx, handle(c))
    }

    fn cuStreamGetFlags(stream: Handle, flags: *mut c_uint) {
        let s = state::init_lock()?;
        match h(stream) {
            0..=2 => put(flags, 0),
            x => match s.objects.get(&x) {
                Some(Obj::Stream(st)) => put(flags, st.flags),
                _ => Err(CUDA_ERROR_INVALID_HANDLE),
            },
        }
    }

    fn cuStreamGetPriority(stream: Handle, priority: *mut c_int) {
        let s = state::init_lock()?;
        match h(stream) {
            0..=2 => put(priority, 0),
            x => match s.objects.get(&x) {
                Some(Obj::Stream(st)) => put(priority, st.priority),
                _ => Err(CUDA_ERROR_INVALID_HANDLE),
            },
        }
    }

    fn cuStreamGetId(stream: Handle, id: *mut u64) {
        let s = state::init_lock()?;
        match h(stream) {
            x @ 0..=2 => put(id, x),
            x => match s.objects.get(&x) {
                Some(Obj::Stream(st)) => put(id, st.id),
                _ => Err(CUDA_ERROR_INVALID_HANDLE),
            },
        }
    }

    fn cuStreamAddCallback(stream: Handle, callback: Option<unsafe extern "C" fn(Handle, CUresult, *mut c_void)>, user: *mut c_void, flags: c_uint) {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let cb = callback.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        stream::add_callback(h(stream), stream::Callback(cb, h(stream), user))
    }

    fn cuLaunchHostFunc(stream: Handle, f: Option<unsafe extern "C" fn(*mut c_void)>, user: *mut c_void) {
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        stream::host_func(h(stream), stream::HostFn(f, user))
    }

    fn cuEventCreate(ph: *mut Handle, flags: c_uint) {
        let mut s = state::init_lock()?;
        let ctx = s.current()?;
        if ph.is_null() || flags & !0xF != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let e = s.insert(Obj::Event(Event { ctx, flags }));
        put(ph, handle(e))
    }

    fn cuEventDestroy(event: Handle) {
        event_destroy(h(event))
    }

    fn cuEventDestroy_v2(event: Handle) {
        event_destroy(h(event))
    }

    fn cuEventRecord(event: Handle, stream: Handle) {
        stream::event_record(h(event), h(stream))
    }

    fn cuEventRecordWithFlags(event: Handle, stream: Handle, flags: c_uint) {
        // CU_EVENT_RECORD_DEFAULT 0, CU_EVENT_RECORD_EXTERNAL 1
        if flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        stream::event_record(h(event), h(stream))
    }

    fn cuEventQuery(event: Handle) {
        stream::event_query(h(event))
    }

    fn cuEventSynchronize(event: Handle) {
        stream::event_synchronize(h(event))
    }

    fn cuEventElapsedTime(ms: *mut f32, start: Handle, end: Handle) {
        stream::elapsed(ms, h(start), h(end))
    }

    fn cuEventElapsedTime_v2(ms: *mut f32, start: Handle, end: Handle) {
        stream::elapsed(ms, h(start), h(end))
    }
}
