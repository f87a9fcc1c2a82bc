/* Under PTXVM_TRACE=1 every call is traced on stderr; cuGetProcAddress also names the symbol
 * it was asked for (the call's own line shows only its address). c_programs.rs checks the
 * lines. */
#include "check.h"

int main(void) {
    OK(cuInit(0));
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    OK(cuGetProcAddress("cuMemAlloc", &fn, 3020, 0, &q));
    ASSERT(fn != NULL);
    EXPECT(cuGetProcAddress("cuNoSuchFunction", &fn, 13000, 0, &q), CUDA_ERROR_NOT_FOUND);
    (void)KERNELS; /* check.h's shared kernels are not used here */
    printf("trace: ok\n");
    return 0;
}
