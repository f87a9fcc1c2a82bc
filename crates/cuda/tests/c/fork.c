/* A child forked after cuInit gets CUDA_ERROR_NOT_INITIALIZED from every call, cuInit
 * included, as from NVIDIA's driver (numba detects forks by it); the parent goes on. */
#include "check.h"
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    CUdevice dev;
    CUcontext ctx = create_context(&dev);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        CUdeviceptr p;
        int ok = cuMemAlloc(&p, 16) == CUDA_ERROR_NOT_INITIALIZED &&
                 cuDeviceGet(&dev, 0) == CUDA_ERROR_NOT_INITIALIZED &&
                 cuInit(0) == CUDA_ERROR_NOT_INITIALIZED;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT(waitpid(pid, &status, 0) == pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CUdeviceptr p;
    OK(cuMemAlloc(&p, 16));
    OK(cuMemFree(p));
    OK(cuCtxDestroy(ctx));
    (void)KERNELS;
    printf("fork: ok\n");
    return 0;
}
