/* Hostile call sequences (issue 23, item 1): freeing memory or resetting the primary context
 * while a created stream still holds queued host functions or a queued kernel that faults. Each
 * call must return: the free path used to hold the driver's lock while it waited for the
 * stream, whose worker needs that lock, and never returned. An alarm turns a hang into a
 * failure instead of a stuck test. */
#include "check.h"
#include <signal.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig) {
    (void)sig;
    static const char m[] = "hostile: hung (a call did not return within 30 s)\n";
    ssize_t w = write(2, m, sizeof m - 1);
    (void)w;
    _exit(3);
}

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void nap(void *user) { sleep_ms(*(int *)user); }

static const char *FAULT =
    ".version 7.5\n.target sm_80\n.address_size 64\n"
    ".visible .entry fault()\n{\n\t.reg .b64 %rd1;\n\t.reg .b32 %r1;\n"
    "\tmov.u64 %rd1, 16;\n\tmov.u32 %r1, 1;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(30);
    CUdevice dev;
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDeviceGet(&dev, 0));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
    int ms = 100;

    /* cuMemFree with host functions queued on a created stream */
    CUstream s;
    CUdeviceptr d;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuMemAlloc(&d, 64));
    OK(cuLaunchHostFunc(s, nap, &ms));
    OK(cuLaunchHostFunc(s, nap, &ms));
    OK(cuMemFree(d));

    /* cuMemFreeHost likewise */
    void *h;
    OK(cuMemHostAlloc(&h, 64, 0));
    OK(cuLaunchHostFunc(s, nap, &ms));
    OK(cuMemFreeHost(h));
    OK(cuStreamSynchronize(s));

    /* cuDevicePrimaryCtxReset with host functions still queued: it waits for them */
    OK(cuLaunchHostFunc(s, nap, &ms));
    OK(cuLaunchHostFunc(s, nap, &ms));
    OK(cuDevicePrimaryCtxReset(dev));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    /* cuMemFree with a queued kernel that faults: it returns (the fault is the context's
       sticky error from then on, as on a GPU) */
    CUmodule mod;
    CUfunction fault;
    (void)KERNELS;
    OK(cuModuleLoadData(&mod, FAULT));
    OK(cuModuleGetFunction(&fault, mod, "fault"));
    OK(cuMemAlloc(&d, 64));
    OK(cuLaunchHostFunc(s, nap, &ms));
    OK(cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CUresult r = cuMemFree(d);
    ASSERT(r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS);
    /* and the reset, with work queued behind the fault, returns and clears the sticky error */
    EXPECT(cuLaunchHostFunc(s, nap, &ms), CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(cuDevicePrimaryCtxReset(dev));


    printf("hostile: ok\n");
    return 0;
}
