/* Memory beyond 1D copies: 2D/3D and peer copies, registered host memory (identity mapped,
 * read-only registrations), kernel constant/local sizes, per-thread-stream proc addresses and
 * interprocess memory and events (this program runs itself as the importing process). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "check.h"
#include <cuda_memory.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *LOCAL_PTX =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    "// out[0] = a value stored to and loaded from a 64-byte local array\n"
    ".visible .entry localbuf(.param .u64 out)\n"
    "{\n"
    "    .local .align 4 .b8 buf[64];\n"
    "    .reg .b32 %r<3>;\n"
    "    .reg .b64 %rd<2>;\n"
    "    mov.u32 %r1, 5;\n"
    "    st.local.u32 [buf+60], %r1;\n"
    "    ld.local.u32 %r2, [buf+60];\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    st.global.u32 [%rd1], %r2;\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// out[0] = a value stored to and loaded from a 40-byte shared array\n"
    ".visible .entry sharedbuf(.param .u64 out)\n"
    "{\n"
    "    .shared .align 16 .b8 sbuf[40];\n"
    "    .reg .b32 %r<3>;\n"
    "    .reg .b64 %rd<2>;\n"
    "    mov.u32 %r1, 9;\n"
    "    st.shared.u32 [sbuf+36], %r1;\n"
    "    ld.shared.u32 %r2, [sbuf+36];\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    st.global.u32 [%rd1], %r2;\n"
    "    ret;\n"
    "}\n";

static CUfunction poke;

/* Stores 7 at p + off from a kernel; returns the launch's result. */
static CUresult poke_at(CUdeviceptr p, unsigned long long off) {
    void *params[] = {&p, &off};
    CUresult r = cuLaunchKernel(poke, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    if (r != CUDA_SUCCESS) return r;
    return cuCtxSynchronize();
}

static void hex(const unsigned char *b, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static void unhex(const char *s, unsigned char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(s + 2 * i, "%2x", &v);
        b[i] = (unsigned char)v;
    }
}

/* The importing process: reads the exporter's words, adds 100 to each, stores 7 past them from
 * a kernel, checks the open count and that an imported event has completed. */
static int child(const char *mem_hex, const char *event_hex) {
    use_primary_context();
    CUmodule mod;
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&poke, mod, "poke"));
    CUipcMemHandle h;
    unhex(mem_hex, (unsigned char *)h.reserved, 64);
    CUdeviceptr p = 0, q = 0;
    /* a handle altered anywhere past its magic opens nothing: the range comes from the
       exporter's own record, found by an unguessable token (it used to map whatever offset and
       length the handle said, the exporter's other allocations included) */
    for (int k = 8; k < 64; k++) {
        for (int bit = 0; bit < 8; bit += 3) {
            CUipcMemHandle bad = h;
            bad.reserved[k] ^= (char)(1 << bit);
            CUresult r = cuIpcOpenMemHandle(&p, bad, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
            if (r == CUDA_SUCCESS) {
                fprintf(stderr, "byte %d bit %d altered: cuIpcOpenMemHandle returned %d\n", k,
                        bit, (int)r);
                return 1;
            }
        }
    }
    EXPECT(cuIpcOpenMemHandle(&p, h, 7), CUDA_ERROR_INVALID_VALUE);
    OK(cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    /* opened twice: the same pointer, counted */
    OK(cuIpcOpenMemHandle(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    ASSERT(p == q);
    unsigned int mt = 0;
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
    ASSERT(mt == CU_MEMORYTYPE_DEVICE);
    int v[64];
    OK(cuMemcpyDtoH(v, p, sizeof v));
    for (int i = 0; i < 64; i++) ASSERT(v[i] == 3 * i);
    /* the import is the exported allocation (65 ints, one 512-byte block) and no more */
    {
        unsigned char past[513];
        OK(cuMemcpyDtoH(past, p, 512));
        EXPECT(cuMemcpyDtoH(past, p, 513), CUDA_ERROR_INVALID_VALUE);
    }
    for (int i = 0; i < 64; i++) v[i] += 100;
    OK(cuMemcpyHtoD(p, v, sizeof v));
    /* a kernel writes the imported memory too */
    OK(poke_at(p, 64 * sizeof(int)));
    OK(cuIpcCloseMemHandle(p));
    OK(cuIpcCloseMemHandle(p));
    EXPECT(cuIpcCloseMemHandle(p), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyDtoH(v, p, sizeof v), CUDA_ERROR_INVALID_VALUE);

    CUipcEventHandle eh;
    unhex(event_hex, (unsigned char *)eh.reserved, 64);
    CUevent e;
    OK(cuIpcOpenEventHandle(&e, eh));
    OK(cuEventQuery(e));
    OK(cuEventSynchronize(e));
    OK(cuEventDestroy(e));
    printf("mem child: ok\n");
    return 0;
}

/* An importer after the exporter freed the memory: the handle opens nothing. */
static int stale(const char *mem_hex) {
    use_primary_context();
    CUipcMemHandle h;
    unhex(mem_hex, (unsigned char *)h.reserved, 64);
    CUdeviceptr p = 0;
    EXPECT(cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
           CUDA_ERROR_INVALID_VALUE);
    return 0;
}

/* Runs this program again as `mode ARGS…` and waits for it to succeed. */
static void spawn(char **argv, const char *mode, const char *a, const char *b) {
    fflush(stdout);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], mode, a, b, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    ASSERT(waitpid(pid, &status, 0) == pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "stale") == 0) return stale(argv[2]);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod, lmod;
    CUfunction vadd, localbuf;
    OK(cuInit(0));
    OK(cuDeviceGet(&dev, 0));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&poke, mod, "poke"));
    OK(cuModuleGetFunction(&vadd, mod, "vadd"));
    OK(cuModuleLoadData(&lmod, LOCAL_PTX));
    OK(cuModuleGetFunction(&localbuf, lmod, "localbuf"));

    /* ---- function attributes: the module's one 4-byte .const, a kernel's 64 local bytes, another's
     * 40 shared bytes (declared with 16-byte alignment: no padding is counted) */
    int v = -1;
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, vadd));
    ASSERT(v == 4);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, vadd));
    ASSERT(v == 0);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, localbuf));
    ASSERT(v == 64);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, localbuf));
    ASSERT(v == 0);
    CUfunction sharedbuf;
    OK(cuModuleGetFunction(&sharedbuf, lmod, "sharedbuf"));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, sharedbuf));
    ASSERT(v == 40);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, localbuf));
    ASSERT(v == 0);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, sharedbuf));
    ASSERT(v == 0);

    /* ---- 2D copies: a 5x3 block of bytes at (2, 1) of a 16-wide host image into a pitched
     * device buffer at (4, 2), back out through a device-to-device copy */
    enum { W = 16, H = 8 };
    unsigned char img[H][W], out[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) img[y][x] = (unsigned char)(16 * y + x);
    CUdeviceptr pitched, flat;
    size_t pitch = 0;
    OK(cuMemAllocPitch(&pitched, &pitch, 32, H, 4));
    ASSERT(pitch >= 32 && pitch % 4 == 0);
    OK(cuMemAlloc(&flat, W * H));
    OK(cuMemsetD8(pitched, 0xEE, pitch * H));
    OK(cuMemsetD8(flat, 0, W * H));
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = img;
    c.srcPitch = W;
    c.srcXInBytes = 2;
    c.srcY = 1;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = pitched;
    c.dstPitch = pitch;
    c.dstXInBytes = 4;
    c.dstY = 2;
    c.WidthInBytes = 5;
    c.Height = 3;
    OK(cuMemcpy2D(&c));
    /* device (4,2)..(9,5) -> flat device image at (0,0), pitch W, through UNIFIED addressing */
    CUDA_MEMCPY2D d;
    memset(&d, 0, sizeof d);
    d.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    d.srcDevice = pitched;
    d.srcPitch = pitch;
    d.srcXInBytes = 4;
    d.srcY = 2;
    d.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    d.dstDevice = flat;
    d.dstPitch = W;
    d.WidthInBytes = 5;
    d.Height = 3;
    OK(cuMemcpy2DUnaligned(&d));
    OK(cuMemcpyDtoH(out, flat, sizeof out));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int expect = (y < 3 && x < 5) ? img[y + 1][x + 2] : 0;
            ASSERT(out[y][x] == expect);
        }
    /* the pitched buffer's untouched bytes are still 0xEE */
    unsigned char row[64];
    OK(cuMemcpyDtoH(row, pitched + 2 * pitch, 16));
    ASSERT(row[3] == 0xEE && row[4] == img[1][2] && row[8] == img[1][6] && row[9] == 0xEE);
    /* asynchronous, on a stream, device -> host */
    CUstream st;
    OK(cuStreamCreate(&st, 0));
    memset(out, 0, sizeof out);
    d.dstMemoryType = CU_MEMORYTYPE_HOST;
    d.dstHost = out;
    d.dstXInBytes = 1;
    OK(cuMemcpy2DAsync(&d, st));
    OK(cuStreamSynchronize(st));
    ASSERT(out[0][0] == 0 && out[0][1] == img[1][2] && out[2][5] == img[3][6] && out[2][6] == 0);
    /* error paths */
    CUDA_MEMCPY2D e = c;
    e.WidthInBytes = W; /* srcXInBytes + WidthInBytes > srcPitch */
    EXPECT(cuMemcpy2D(&e), CUDA_ERROR_INVALID_VALUE);
    e = c;
    e.dstY = H; /* rows past the end of the device buffer */
    EXPECT(cuMemcpy2D(&e), CUDA_ERROR_INVALID_VALUE);
    e = c;
    e.dstDevice = 0;
    EXPECT(cuMemcpy2D(&e), CUDA_ERROR_INVALID_VALUE);
    e = c;
    e.dstMemoryType = (CUmemorytype)9;
    EXPECT(cuMemcpy2D(&e), CUDA_ERROR_INVALID_VALUE);
    e = c;
    e.dstMemoryType = (CUmemorytype)CU_MEMORYTYPE_ARRAY;
    EXPECT(cuMemcpy2D(&e), CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(cuMemcpy2D(NULL), CUDA_ERROR_INVALID_VALUE);
    e = c;
    e.Height = 0; /* nothing to copy */
    OK(cuMemcpy2D(&e));
    e = c;
    e.Height = 1;
    e.srcPitch = 0; /* one row: the pitch is not used */
    OK(cuMemcpy2D(&e));

    /* ---- 3D: a 2x2x2 box of ints at (1,1,1) of a 4x3x3 host volume to (0,0,0) of a
     * 2x2x2 device volume, and back into a zeroed host volume at (2,0,1) */
    int vol[3][3][4], back[3][3][4];
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) vol[z][y][x] = 100 * z + 10 * y + x;
    CUdeviceptr box;
    OK(cuMemAlloc(&box, 8 * sizeof(int)));
    CUDA_MEMCPY3D t;
    memset(&t, 0, sizeof t);
    t.srcMemoryType = CU_MEMORYTYPE_HOST;
    t.srcHost = vol;
    t.srcPitch = 4 * sizeof(int);
    t.srcHeight = 3;
    t.srcXInBytes = sizeof(int);
    t.srcY = 1;
    t.srcZ = 1;
    t.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    t.dstDevice = box;
    t.dstPitch = 2 * sizeof(int);
    t.dstHeight = 2;
    t.WidthInBytes = 2 * sizeof(int);
    t.Height = 2;
    t.Depth = 2;
    OK(cuMemcpy3D(&t));
    int flatbox[8];
    OK(cuMemcpyDtoH(flatbox, box, sizeof flatbox));
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++)
                ASSERT(flatbox[4 * z + 2 * y + x] == 100 * (z + 1) + 10 * (y + 1) + (x + 1));
    memset(back, 0, sizeof back);
    CUDA_MEMCPY3D u;
    memset(&u, 0, sizeof u);
    u.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    u.srcDevice = box;
    u.srcPitch = 2 * sizeof(int);
    u.srcHeight = 2;
    u.dstMemoryType = CU_MEMORYTYPE_HOST;
    u.dstHost = back;
    u.dstPitch = 4 * sizeof(int);
    u.dstHeight = 3;
    u.dstXInBytes = 2 * sizeof(int);
    u.dstZ = 1;
    u.WidthInBytes = 2 * sizeof(int);
    u.Height = 2;
    u.Depth = 2;
    OK(cuMemcpy3DAsync(&u, st));
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) {
                int in = z >= 1 && y < 2 && x >= 2;
                ASSERT(back[z][y][x] == (in ? 100 * z + 10 * (y + 1) + (x - 1) : 0));
            }
    CUDA_MEMCPY3D f = t;
    f.Depth = 3; /* one slice too many for the device volume */
    EXPECT(cuMemcpy3D(&f), CUDA_ERROR_INVALID_VALUE);
    f = t;
    f.srcHeight = 2; /* srcY + Height > srcHeight */
    EXPECT(cuMemcpy3D(&f), CUDA_ERROR_INVALID_VALUE);
    f = t;
    f.srcLOD = 1;
    EXPECT(cuMemcpy3D(&f), CUDA_ERROR_INVALID_VALUE);

    /* ---- peer copies between two contexts of the one device */
    CUcontext other;
    OK(cuCtxCreate(&other, 0, dev));
    OK(cuCtxSetCurrent(ctx));
    CUdeviceptr peer_src, peer_dst;
    OK(cuMemAlloc(&peer_src, 64));
    OK(cuMemAlloc(&peer_dst, 64));
    OK(cuMemsetD32(peer_src, 0x01020304, 16));
    OK(cuMemcpyPeer(peer_dst, other, peer_src, ctx, 64));
    unsigned int words[16];
    OK(cuMemcpyDtoH(words, peer_dst, sizeof words));
    ASSERT(words[0] == 0x01020304 && words[15] == 0x01020304);
    EXPECT(cuMemcpyPeer(peer_dst, other, peer_src, ctx, 65), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyPeer(peer_dst, NULL, peer_src, ctx, 4), CUDA_ERROR_INVALID_CONTEXT);
    CUDA_MEMCPY3D_PEER pc;
    memset(&pc, 0, sizeof pc);
    pc.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    pc.srcDevice = peer_src;
    pc.srcContext = ctx;
    pc.dstMemoryType = CU_MEMORYTYPE_HOST;
    pc.dstHost = words;
    pc.dstContext = other;
    pc.WidthInBytes = 8;
    pc.Height = 1;
    pc.Depth = 1;
    memset(words, 0, sizeof words);
    OK(cuMemcpy3DPeer(&pc));
    ASSERT(words[1] == 0x01020304 && words[2] == 0);
    OK(cuCtxDestroy(other));
    OK(cuCtxSetCurrent(ctx));

    /* ---- registered host memory: the host address is the device address */
    int *host = aligned_alloc(4096, 4096);
    ASSERT(host != NULL);
    memset(host, 0, 4096);
    EXPECT(cuMemHostRegister(NULL, 64, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemHostRegister(host, 0, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemHostRegister(host, 64, 0x100), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemHostRegister(host, 1024, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE));
    EXPECT(cuMemHostRegister(host, 1024, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT(cuMemHostRegister(host + 100, 64, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CUdeviceptr hp = 0;
    OK(cuMemHostGetDevicePointer(&hp, host, 0));
    ASSERT(hp == (CUdeviceptr)(uintptr_t)host);
    OK(cuMemHostGetDevicePointer(&hp, host + 10, 0));
    ASSERT(hp == (CUdeviceptr)(uintptr_t)(host + 10));
    unsigned int flags = 0;
    OK(cuMemHostGetFlags(&flags, host));
    ASSERT(flags & CU_MEMHOSTREGISTER_DEVICEMAP);
    unsigned int mt = 0;
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)host));
    ASSERT(mt == CU_MEMORYTYPE_HOST);
    CUdeviceptr rbase = 0;
    OK(cuPointerGetAttribute(&rbase, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                             (CUdeviceptr)(uintptr_t)(host + 3)));
    ASSERT(rbase == (CUdeviceptr)(uintptr_t)host);
    /* kernels write it; the host sees the store at once */
    OK(poke_at((CUdeviceptr)(uintptr_t)host, 40));
    ASSERT(host[10] == 7);
    /* vadd on registered memory: host[0..8) + host[8..16) -> host[16..24) */
    float *hf = (float *)host;
    for (int i = 0; i < 16; i++) hf[i] = (float)i;
    CUdeviceptr a0 = (CUdeviceptr)(uintptr_t)hf, b0 = a0 + 32, c0 = a0 + 64;
    unsigned int n = 8;
    void *vp[] = {&a0, &b0, &c0, &n};
    OK(cuLaunchKernel(vadd, 1, 1, 1, 32, 1, 1, 0, NULL, vp, NULL));
    OK(cuCtxSynchronize());
    for (int i = 0; i < 8; i++) ASSERT(hf[16 + i] == (float)(2 * i + 8));
    /* copies check registered ranges like device ones */
    EXPECT(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)host + 1000, words, 64), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemHostUnregister(host + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    OK(cuMemHostUnregister(host));
    EXPECT(cuMemHostUnregister(host), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT(cuMemHostGetDevicePointer(&hp, host, 0), CUDA_ERROR_INVALID_VALUE);
    /* unmapped memory cannot be registered */
    void *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(gone != MAP_FAILED);
    munmap(gone, 8192);
    EXPECT(cuMemHostRegister(gone, 64, 0), CUDA_ERROR_INVALID_VALUE);
    /* read-only pages need CU_MEMHOSTREGISTER_READ_ONLY; kernels may then only load */
    int *ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(ro != MAP_FAILED);
    for (int i = 0; i < 16; i++) ro[i] = i + 1;
    ASSERT(mprotect(ro, 4096, PROT_READ) == 0);
    EXPECT(cuMemHostRegister(ro, 64, 0), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemHostRegister(ro, 64, CU_MEMHOSTREGISTER_READ_ONLY));
    CUdeviceptr sum_dst;
    OK(cuMemAlloc(&sum_dst, 64));
    CUdeviceptr ra = (CUdeviceptr)(uintptr_t)ro, rb = ra + 32;
    void *rp[] = {&ra, &rb, &sum_dst, &n};
    OK(cuLaunchKernel(vadd, 1, 1, 1, 8, 1, 1, 0, NULL, rp, NULL));
    float sums[8];
    OK(cuMemcpyDtoH(sums, sum_dst, sizeof sums));
    { /* the ints read as floats: compare bit patterns' sums computed the same way */
        float fa, fb;
        memcpy(&fa, &ro[0], 4);
        memcpy(&fb, &ro[8], 4);
        ASSERT(sums[0] == fa + fb);
    }
    /* a store faults (in a context of its own: the fault is sticky) */
    CUcontext roctx;
    OK(cuCtxCreate(&roctx, 0, dev));
    CUmodule m2;
    OK(cuModuleLoadData(&m2, KERNELS));
    OK(cuModuleGetFunction(&poke, m2, "poke"));
    EXPECT(poke_at(ra, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(cuCtxDestroy(roctx));
    OK(cuCtxSetCurrent(ctx));
    OK(cuModuleGetFunction(&poke, mod, "poke"));
    OK(cuMemHostUnregister(ro));
    munmap(ro, 4096);

    /* ---- cuGetProcAddress: the per-thread default stream variant when asked for */
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    OK(cuGetProcAddress("cuMemcpyHtoD", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    ASSERT(fn == (void *)cuMemcpyHtoD_v2_ptds && q == CU_GET_PROC_ADDRESS_SUCCESS);
    OK(cuGetProcAddress("cuMemcpyHtoD", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    ASSERT(fn == (void *)cuMemcpyHtoD_v2);
    OK(cuGetProcAddress("cuInit", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    ASSERT(fn == (void *)cuInit);
    {
        int one = 1;
        CUresult (*htod)(CUdeviceptr, const void *, size_t) = NULL;
        OK(cuGetProcAddress("cuMemcpyHtoD", (void **)&htod, 13000,
                            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
        OK(htod(sum_dst, &one, 4));
        EXPECT(htod(sum_dst, &one, 65), CUDA_ERROR_INVALID_VALUE);
    }

    /* ---- interprocess memory and events */
    CUdeviceptr shared;
    OK(cuMemAlloc(&shared, 65 * sizeof(int)));
    int init[64];
    for (int i = 0; i < 64; i++) init[i] = 3 * i;
    OK(cuMemcpyHtoD(shared, init, sizeof init));
    CUipcMemHandle mh;
    EXPECT(cuIpcGetMemHandle(&mh, shared + 4), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuIpcGetMemHandle(NULL, shared), CUDA_ERROR_INVALID_VALUE);
    OK(cuIpcGetMemHandle(&mh, shared));
    CUdeviceptr self = 0;
    EXPECT(cuIpcOpenMemHandle(&self, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
           CUDA_ERROR_INVALID_CONTEXT);
    CUipcMemHandle junk;
    memset(&junk, 0x5A, sizeof junk);
    EXPECT(cuIpcOpenMemHandle(&self, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuIpcCloseMemHandle(shared), CUDA_ERROR_INVALID_VALUE);
    CUevent plain, ipce;
    CUipcEventHandle eh;
    OK(cuEventCreate(&plain, 0));
    EXPECT(cuIpcGetEventHandle(&eh, plain), CUDA_ERROR_INVALID_VALUE);
    OK(cuEventCreate(&ipce, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    OK(cuEventRecord(ipce, NULL));
    OK(cuIpcGetEventHandle(&eh, ipce));
    CUevent same;
    EXPECT(cuIpcOpenEventHandle(&same, eh), CUDA_ERROR_INVALID_CONTEXT);
    char mem_hex[129], event_hex[129];
    hex((unsigned char *)mh.reserved, 64, mem_hex);
    hex((unsigned char *)eh.reserved, 64, event_hex);
    spawn(argv, "child", mem_hex, event_hex);
    /* the importer's writes are the exporter's memory */
    int after[65];
    OK(cuMemcpyDtoH(after, shared, sizeof after));
    for (int i = 0; i < 64; i++) ASSERT(after[i] == 3 * i + 100);
    ASSERT(after[64] == 7);
    OK(cuMemFree(shared));
    /* its handle dies with it */
    spawn(argv, "stale", mem_hex, event_hex);
    /* memory freed and allocated again reads as zero */
    CUdeviceptr again;
    OK(cuMemAlloc(&again, 65 * sizeof(int)));
    OK(cuMemcpyDtoH(after, again, sizeof after));
    for (int i = 0; i < 65; i++) ASSERT(after[i] == 0);
    OK(cuMemFree(again));
    /* so does a large one (whose whole pages go back to the system when it is freed) */
    {
        size_t big = (1 << 20) + 100;
        int marks[3] = {0, (1 << 18) + 6, (int)(big / 4) - 1};
        int one = 0x5A5A5A5A, got = -1;
        OK(cuMemAlloc(&again, big));
        for (int k = 0; k < 3; k++) OK(cuMemcpyHtoD(again + 4 * (size_t)marks[k], &one, 4));
        OK(cuMemFree(again));
        OK(cuMemAlloc(&again, big));
        for (int k = 0; k < 3; k++) {
            OK(cuMemcpyDtoH(&got, again + 4 * (size_t)marks[k], 4));
            ASSERT(got == 0);
        }
        OK(cuMemFree(again));
    }

    printf("mem: ok\n");
    return 0;
}
