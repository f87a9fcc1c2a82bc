/* Fatbins made by nvcc 13 (tests/fatbin, see gen.sh there): uncompressed, zstd and LZ4
 * entries, several PTX versions, SASS only, the fatbin embedded in a host object, given to
 * cuModuleLoadData, cuModuleLoadFatBinary, cuModuleLoad and the linker; hostile files; the
 * linker's logs. Kernel `k` writes out[i] = 3 * i + the PTX's virtual architecture (80 for
 * compute_80), so each check also says which entry ran. */
#include "check.h"
#include <elf.h>

static const char *dir;

static void *slurp(const char *name, size_t *size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    ASSERT(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* 8-byte aligned, as a fatbin embedded by nvcc is */
    void *p = aligned_alloc(8, ((size_t)n + 8) & ~(size_t)7);
    ASSERT(p != NULL && fread(p, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    if (size) *size = (size_t)n;
    return p;
}

/* Runs k on 16 threads and checks out[i] = 3 * i + arch. */
static void run_k(CUmodule m, unsigned arch) {
    CUfunction k;
    OK(cuModuleGetFunction(&k, m, "k"));
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 16 * sizeof(unsigned)));
    void *params[] = {&out};
    OK(cuLaunchKernel(k, 1, 1, 1, 16, 1, 1, 0, NULL, params, NULL));
    unsigned host[16];
    OK(cuMemcpyDtoH(host, out, sizeof host));
    for (unsigned i = 0; i < 16; i++) ASSERT(host[i] == 3 * i + arch);
    OK(cuMemFree(out));
    OK(cuModuleUnload(m));
}

/* The `.nv_fatbin` section of a relocatable x86-64 ELF object. */
static const void *nv_fatbin(const unsigned char *elf) {
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
    ASSERT(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
    const char *names = (const char *)elf + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++)
        if (strcmp(names + sh[i].sh_name, ".nv_fatbin") == 0) return elf + sh[i].sh_offset;
    ASSERT(!"no .nv_fatbin section");
    return NULL;
}

/* Writes `n` bytes to a scratch file and returns its name. */
static const char *scratch_file(const char *name, const void *p, size_t n) {
    FILE *f = fopen(name, "wb");
    ASSERT(f != NULL && fwrite(p, 1, n, f) == n);
    fclose(f);
    return name;
}

int main(void) {
    dir = getenv("FATBIN_DIR");
    ASSERT(dir != NULL);
    CUdevice dev;
    CUcontext ctx = create_context(&dev);
    CUmodule m;

    /* uncompressed, zstd (nvcc's default) and LZ4 (--compress-mode=speed) */
    const char *plain[] = {"plain.fatbin", "zstd.fatbin", "lz4.fatbin"};
    for (int i = 0; i < 3; i++) {
        void *fb = slurp(plain[i], NULL);
        OK(cuModuleLoadData(&m, fb));
        run_k(m, 80);
        OK(cuModuleLoadFatBinary(&m, fb));
        run_k(m, 80);
        free(fb);
    }
    /* compute_75, compute_90 and compute_80 PTX: an 8.0 device takes compute_80 */
    void *multi = slurp("multi.fatbin", NULL);
    OK(cuModuleLoadData(&m, multi));
    run_k(m, 80);
    free(multi);
    /* by path */
    char path[4096];
    snprintf(path, sizeof path, "%s/lz4.fatbin", dir);
    OK(cuModuleLoad(&m, path));
    run_k(m, 80);

    /* SASS only: no binary for the GPU (and the hint on stderr) */
    size_t sass_size;
    void *sass = slurp("sass.fatbin", &sass_size);
    EXPECT(cuModuleLoadData(&m, sass), CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT(cuModuleLoadFatBinary(&m, sass), CUDA_ERROR_NO_BINARY_FOR_GPU);

    /* cubins: `ptxvm ptxas`'s hold PTX and load through every module and library entry point
     * (cuModuleLoad, cuModuleLoadData(Ex), cuLibraryLoadData, cuLibraryLoadFromFile); one for
     * sm_90 is no binary for an 8.0 device, as SASS for sm_90 would be; nvcc's SASS cubin is
     * no binary either */
    void *cubin = slurp("ptxvm.cubin", NULL);
    OK(cuModuleLoadData(&m, cubin));
    run_k(m, 80);
    OK(cuModuleLoadDataEx(&m, cubin, 0, NULL, NULL));
    run_k(m, 80);
    snprintf(path, sizeof path, "%s/ptxvm.cubin", dir);
    OK(cuModuleLoad(&m, path));
    run_k(m, 80);
    CUlibrary lib;
    CUkernel lk;
    OK(cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&lk, lib, "k"));
    OK(cuLibraryUnload(lib));
    OK(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetModule(&m, lib));
    {
        CUfunction k;
        OK(cuModuleGetFunction(&k, m, "k"));
    }
    OK(cuLibraryUnload(lib));
    size_t cubin90_size;
    void *cubin90 = slurp("ptxvm_sm90.cubin", &cubin90_size);
    EXPECT(cuModuleLoadData(&m, cubin90), CUDA_ERROR_NO_BINARY_FOR_GPU);
    void *sass_cubin = slurp("sass.cubin", NULL);
    EXPECT(cuModuleLoadData(&m, sass_cubin), CUDA_ERROR_NO_BINARY_FOR_GPU);
    /* a cubin cut short (its section table past the end of the file) */
    size_t cubin_size;
    free(cubin);
    cubin = slurp("ptxvm.cubin", &cubin_size);
    EXPECT(cuModuleLoad(&m, scratch_file("short.cubin", cubin, cubin_size - 8)), CUDA_ERROR_INVALID_IMAGE);

    /* the fatbin nvcc embeds in a host object, and the wrapper cudart registers */
    unsigned char *obj = slurp("host.o", NULL);
    const void *section = nv_fatbin(obj);
    struct {
        int magic, version;
        const void *data;
        void *filename;
    } wrapper = {0x466243b1, 1, section, NULL};
    OK(cuModuleLoadFatBinary(&m, &wrapper));
    run_k(m, 80);
    OK(cuModuleLoadData(&m, &wrapper));
    run_k(m, 80);
    OK(cuModuleLoadData(&m, section));
    run_k(m, 80);

    /* hostile files: truncated, a size past the end, a zstd entry whose decompressed size
     * lies (smaller and larger than the data), a huge decompressed size */
    size_t n;
    unsigned char *z = slurp("zstd.fatbin", &n);
    EXPECT(cuModuleLoad(&m, scratch_file("trunc.fatbin", z, n - 40)), CUDA_ERROR_INVALID_IMAGE);
    unsigned char *bad = malloc(n);
    memcpy(bad, z, n);
    bad[8] = 0xff, bad[9] = 0xff, bad[12] = 0x7f; /* the fatbin's size */
    EXPECT(cuModuleLoad(&m, scratch_file("size.fatbin", bad, n)), CUDA_ERROR_INVALID_IMAGE);
    /* the entry header starts at 16; its decompressed size is at 16 + 56 */
    unsigned long long real;
    memcpy(&real, z + 16 + 56, 8);
    ASSERT(real > 100 && real < 4096);
    const unsigned long long sizes[] = {10, real - 1, real + 1, real + 4096, 1ull << 40};
    for (int i = 0; i < 5; i++) {
        memcpy(bad, z, n);
        memcpy(bad + 16 + 56, &sizes[i], 8);
        EXPECT(cuModuleLoad(&m, scratch_file("bomb.fatbin", bad, n)), CUDA_ERROR_INVALID_IMAGE);
    }
    memcpy(bad, z, n);
    for (size_t i = 100; i < 140; i++) bad[i] ^= 0x5a; /* corrupt compressed data */
    EXPECT(cuModuleLoad(&m, scratch_file("corrupt.fatbin", bad, n)), CUDA_ERROR_INVALID_IMAGE);
    free(bad);
    /* a fatbin or container magic with nothing after it; a wrapper's magic in a file (a
     * file cannot hold the host pointer a wrapper carries) */
    const unsigned char magic_only[] = {0x50, 0xed, 0x55, 0xba};
    EXPECT(cuModuleLoad(&m, scratch_file("magic.fatbin", magic_only, 4)), CUDA_ERROR_INVALID_IMAGE);
    EXPECT(cuModuleLoad(&m, scratch_file("short.bin", "PTXVMLNK", 8)), CUDA_ERROR_INVALID_IMAGE);
    const unsigned char wrapper_file[16] = {0xb1, 0x43, 0x62, 0x46, 1, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde};
    EXPECT(cuModuleLoad(&m, scratch_file("wrapper.bin", wrapper_file, 16)), CUDA_ERROR_INVALID_IMAGE);

    /* the linker: a fatbin input, then a load of its output */
    char info[1024] = "", error[1024] = "";
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {info, (void *)sizeof info, error, (void *)sizeof error};
    CUlinkState link;
    OK(cuLinkCreate(4, opts, values, &link));
    OK(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, z, n, "zstd.fatbin", 0, NULL, NULL));
    void *image;
    size_t image_size;
    OK(cuLinkComplete(link, &image, &image_size));
    ASSERT(image_size > 0 && error[0] == 0);
    OK(cuModuleLoadData(&m, image));
    OK(cuLinkDestroy(link));
    run_k(m, 80);
    /* `ptxvm ptxas` cubins as linker inputs: relocatable (-c) as an object, whole-program as a
     * cubin; the sm_90 one and nvcc's SASS cubin are no binary for the GPU */
    values[1] = (void *)sizeof info, values[3] = (void *)sizeof error;
    OK(cuLinkCreate(4, opts, values, &link));
    size_t rel_size;
    void *rel = slurp("ptxvm_rel.cubin", &rel_size);
    OK(cuLinkAddData(link, CU_JIT_INPUT_OBJECT, rel, rel_size, "ptxvm_rel.cubin", 0, NULL, NULL));
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, cubin90, cubin90_size, "sm90", 0, NULL, NULL),
           CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, sass_cubin, 3112, "sass.cubin", 0, NULL, NULL),
           CUDA_ERROR_NO_BINARY_FOR_GPU);
    OK(cuLinkComplete(link, &image, &image_size));
    OK(cuModuleLoadData(&m, image));
    OK(cuLinkDestroy(link));
    run_k(m, 80);
    OK(cuLinkCreate(0, NULL, NULL, &link));
    OK(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, cubin, cubin_size, "ptxvm.cubin", 0, NULL, NULL));
    OK(cuLinkComplete(link, &image, &image_size));
    OK(cuModuleLoadData(&m, image));
    OK(cuLinkDestroy(link));
    run_k(m, 80);
    free(rel);
    free(cubin);
    free(cubin90);
    free(sass_cubin);
    /* a SASS-only fatbin and a cubin are no binary for the GPU; an undefined reference is a
     * link error written to the error log, with the log's size written back (the size
     * options are in/out: reset them) */
    values[1] = (void *)sizeof info, values[3] = (void *)sizeof error;
    OK(cuLinkCreate(4, opts, values, &link));
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, sass, sass_size, "sass", 0, NULL, NULL),
           CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, obj, 64, "lib.a", 0, NULL, NULL),
           CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, (void *)wrapper_file, 16, "w", 0, NULL, NULL),
           CUDA_ERROR_INVALID_IMAGE);
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, (void *)magic_only, 4, "m", 0, NULL, NULL),
           CUDA_ERROR_INVALID_IMAGE);
    const char *caller = ".version 8.0\n.target sm_80\n.address_size 64\n"
                         ".extern .func missing();\n"
                         ".visible .entry e() { call missing, (); ret; }\n";
    OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)caller, strlen(caller) + 1, "caller.ptx", 0,
                     NULL, NULL));
    EXPECT(cuLinkComplete(link, &image, &image_size), CUDA_ERROR_INVALID_IMAGE);
    ASSERT(strstr(error, "undefined reference to `missing` in caller.ptx") != NULL);
    ASSERT((size_t)values[3] == strlen(error) + 1);
    OK(cuLinkDestroy(link));
    /* a PTX input that does not check is refused when added, its errors in the log */
    values[1] = (void *)sizeof info, values[3] = (void *)sizeof error;
    OK(cuLinkCreate(4, opts, values, &link));
    const char *broken = ".version 8.0\n.target sm_80\n.address_size 64\n"
                         ".visible .entry e() { mov.u32 %r1, 1; ret; }\n";
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)broken, strlen(broken) + 1, "broken.ptx",
                         0, NULL, NULL),
           CUDA_ERROR_INVALID_PTX);
    ASSERT(strstr(error, "broken.ptx:4:") != NULL);
    OK(cuLinkDestroy(link));

    free(z);
    free(obj);
    free(sass);
    OK(cuCtxDestroy(ctx));
    (void)KERNELS; /* check.h's shared kernels are not used here */
    printf("fatbin: ok\n");
    return 0;
}
