/* Streams that run asynchronously: host functions that block until the host releases them,
 * truthful queries, stream order across streams (events), events that time real work, the
 * legacy stream's synchronization, stream capture and graph replay, capture errors, and a
 * kernel fault on an asynchronous stream that is reported at the next synchronize. */
#include "check.h"
#include <stdatomic.h>
#include <time.h>

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* a gate a host function waits on (5 s at most: a broken driver fails, never hangs) */
static atomic_int gate;
static atomic_int order;
static atomic_int first_seen;
static atomic_int second_seen;
static atomic_int counter;
static atomic_int slept;

static void wait_gate(void *user) {
    (void)user;
    for (int k = 0; k < 5000 && !atomic_load(&gate); k++) sleep_ms(1);
    atomic_store(&first_seen, atomic_fetch_add(&order, 1) + 1);
}

static void second(void *user) {
    (void)user;
    atomic_store(&second_seen, atomic_fetch_add(&order, 1) + 1);
}

static void count(void *user) {
    (void)user;
    atomic_fetch_add(&counter, 1);
}

static void nap(void *user) {
    sleep_ms(*(int *)user);
    atomic_store(&slept, 1);
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction vadd, poke;
    OK(cuInit(0));
    OK(cuDeviceGet(&dev, 0));
    OK(cuCtxCreate(&ctx, 0, dev));
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&vadd, mod, "vadd"));
    OK(cuModuleGetFunction(&poke, mod, "poke"));

    CUstream s1, s2;
    CUevent e, t0, t1;
    OK(cuStreamCreate(&s1, 0));
    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, 0));
    OK(cuEventCreate(&t0, 0));
    OK(cuEventCreate(&t1, 0));

    /* a blocked host function: the stream and an event recorded after it are pending */
    OK(cuStreamQuery(s1));
    OK(cuEventQuery(e)); /* never recorded: complete */
    OK(cuLaunchHostFunc(s1, wait_gate, NULL));
    OK(cuEventRecord(e, s1));
    EXPECT(cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
    EXPECT(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    /* s2 waits for e: its host function runs after the gate opens */
    OK(cuStreamWaitEvent(s2, e, 0));
    OK(cuLaunchHostFunc(s2, second, NULL));
    sleep_ms(20);
    EXPECT(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
    ASSERT(atomic_load(&second_seen) == 0);
    atomic_store(&gate, 1);
    OK(cuEventSynchronize(e));
    OK(cuEventQuery(e));
    OK(cuStreamSynchronize(s2));
    OK(cuStreamQuery(s1));
    OK(cuStreamQuery(s2));
    ASSERT(atomic_load(&first_seen) == 1 && atomic_load(&second_seen) == 2);

    /* events time the work between them: a host function that sleeps 30 ms */
    int ms30 = 30;
    OK(cuEventRecord(t0, s1));
    OK(cuLaunchHostFunc(s1, nap, &ms30));
    OK(cuEventRecord(t1, s1));
    float ms = -1;
    EXPECT(cuEventElapsedTime(&ms, t0, t1), CUDA_ERROR_NOT_READY);
    OK(cuEventSynchronize(t1));
    OK(cuEventElapsedTime(&ms, t0, t1));
    ASSERT(ms >= 25.0f && ms < 5000.0f);
    OK(cuEventElapsedTime(&ms, t1, t0));
    ASSERT(ms <= -25.0f);
    CUevent untimed, unrecorded;
    OK(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
    OK(cuEventCreate(&unrecorded, 0));
    OK(cuEventRecord(untimed, s1));
    OK(cuEventSynchronize(untimed));
    EXPECT(cuEventElapsedTime(&ms, t0, untimed), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventElapsedTime(&ms, t0, unrecorded), CUDA_ERROR_INVALID_HANDLE);

    /* the legacy stream waits for the blocking stream s1 */
    int ms20 = 20;
    atomic_store(&slept, 0);
    OK(cuLaunchHostFunc(s1, nap, &ms20));
    CUdeviceptr scratch;
    unsigned word = 5;
    OK(cuMemAlloc(&scratch, 4));
    OK(cuMemcpyHtoD(scratch, &word, 4));
    ASSERT(atomic_load(&slept) == 1);

    /* a kernel and copies on an asynchronous stream, with pinned host memory */
    enum { N = 256 };
    float ha[N], hb[N], *out;
    for (int i = 0; i < N; i++) ha[i] = (float)i, hb[i] = 2.0f * (float)i;
    CUdeviceptr a, b, c;
    OK(cuMemAlloc(&a, sizeof ha));
    OK(cuMemAlloc(&b, sizeof hb));
    OK(cuMemAlloc(&c, sizeof ha));
    OK(cuMemHostAlloc((void **)&out, sizeof ha, 0));
    OK(cuMemcpyHtoDAsync(a, ha, sizeof ha, s1));
    OK(cuMemcpyHtoDAsync(b, hb, sizeof hb, s1));
    /* pageable sources are read by the call: changing them afterwards changes nothing */
    ha[0] = 1000.0f;
    unsigned n = N;
    void *params[] = {&a, &b, &c, &n};
    OK(cuLaunchKernel(vadd, 2, 1, 1, 128, 1, 1, 0, s1, params, NULL));
    OK(cuMemcpyDtoHAsync(out, c, sizeof ha, s1));
    OK(cuStreamSynchronize(s1));
    for (int i = 0; i < N; i++) ASSERT(out[i] == 3.0f * (float)i);

    /* capture: work is recorded, not run; the graph replays it in order */
    CUstreamCaptureStatus st;
    EXPECT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    OK(cuStreamIsCapturing(s1, &st));
    ASSERT(st == CU_STREAM_CAPTURE_STATUS_NONE);
    OK(cuMemsetD32(c, 0, N));
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    OK(cuStreamIsCapturing(s1, &st));
    ASSERT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    OK(cuMemsetD32Async(c, 0x3f800000u, N, s1)); /* 1.0f */
    OK(cuLaunchHostFunc(s1, count, NULL));
    OK(cuLaunchKernel(vadd, 2, 1, 1, 128, 1, 1, 0, s1, params, NULL));
    OK(cuMemcpyDtoHAsync(out, c, sizeof ha, s1));
    OK(cuEventRecord(e, s1));
    /* the legacy stream cannot be used meanwhile, but this query does not invalidate */
    EXPECT(cuStreamIsCapturing(NULL, &st), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph graph = NULL;
    OK(cuStreamEndCapture(s1, &graph));
    ASSERT(graph != NULL);
    OK(cuStreamIsCapturing(s1, &st));
    ASSERT(st == CU_STREAM_CAPTURE_STATUS_NONE);
    ASSERT(atomic_load(&counter) == 0);
    float probe = -1;
    OK(cuMemcpyDtoH(&probe, c + 4, 4));
    ASSERT(probe == 0.0f); /* the captured memset did not run */
    size_t nodes = 0;
    OK(cuGraphGetNodes(graph, NULL, &nodes));
    ASSERT(nodes == 5);
    CUgraphNode list[5];
    OK(cuGraphGetNodes(graph, list, &nodes));
    CUgraphNodeType want[5] = {CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_HOST,
                               CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_MEMCPY,
                               CU_GRAPH_NODE_TYPE_EVENT_RECORD};
    for (int k = 0; k < 5; k++) {
        CUgraphNodeType t;
        OK(cuGraphNodeGetType(list[k], &t));
        ASSERT(t == want[k]);
    }
    CUgraphExec exec;
    EXPECT(cuGraphInstantiateWithFlags(&exec, graph,
                                       CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                           CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
           CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphInstantiateWithFlags(&exec, graph, 0));
    /* replays read the data as it is at launch time */
    for (int i = 0; i < N; i++) ha[i] = 10.0f * (float)i;
    OK(cuMemcpyHtoD(a, ha, sizeof ha));
    memset(out, 0, sizeof ha);
    OK(cuGraphLaunch(exec, s1));
    OK(cuGraphLaunch(exec, s1));
    OK(cuStreamSynchronize(s1));
    ASSERT(atomic_load(&counter) == 2);
    for (int i = 0; i < N; i++) ASSERT(out[i] == 12.0f * (float)i);
    OK(cuEventQuery(e));
    OK(cuGraphExecDestroy(exec));
    OK(cuGraphDestroy(graph));

    /* capture errors: an implicit use of the legacy stream, a synchronize, an event query */
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    EXPECT(cuMemcpyHtoD(scratch, &word, 4), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    OK(cuStreamIsCapturing(s1, &st));
    ASSERT(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    graph = (CUgraph)&graph;
    EXPECT(cuStreamEndCapture(s1, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    ASSERT(graph == NULL);
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    EXPECT(cuStreamSynchronize(s1), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT(cuStreamEndCapture(s1, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT(cuStreamEndCapture(s1, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    OK(cuEventRecord(e, s1));
    EXPECT(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
    (void)cuStreamEndCapture(s1, &graph);
    if (graph) OK(cuGraphDestroy(graph));
    /* after capture, the stream works as before */
    OK(cuMemcpyHtoDAsync(scratch, &word, 4, s1));
    OK(cuStreamSynchronize(s1));
    OK(cuCtxSynchronize());

    OK(cuMemFree(a));
    OK(cuMemFree(b));
    OK(cuMemFree(c));
    OK(cuMemFreeHost(out));
    OK(cuMemFree(scratch));
    OK(cuEventDestroy(e));
    OK(cuEventDestroy(t0));
    OK(cuEventDestroy(t1));
    OK(cuEventDestroy(untimed));
    OK(cuEventDestroy(unrecorded));
    OK(cuStreamDestroy(s2));

    /* a fault on an asynchronous stream: the launch returns at once, the synchronize reports
     * it, and the context keeps it (sticky) */
    CUdeviceptr small;
    OK(cuMemAlloc(&small, 4));
    unsigned long long far = 1ull << 40;
    void *pp[] = {&small, &far};
    OK(cuLaunchKernel(poke, 1, 1, 1, 1, 1, 1, 0, s1, pp, NULL));
    EXPECT(cuStreamSynchronize(s1), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuMemAlloc(&small, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(cuCtxDestroy(ctx));
    printf("streams: ok\n");
    return 0;
}
