#!/bin/sh
# Regenerates the fatbins here from k.cu with nvcc 13 (pip nvidia-cuda-nvcc); the tests need
# only the committed outputs. nvcc 13 compresses fatbin entries with zstd by default and with
# LZ4 under --compress-mode=speed; --no-compress writes them plain.
set -e
P=${P:-$(python3 -c 'import nvidia;print(nvidia.__path__[0])')/cu13/bin}
G="-gencode arch=compute_80,code=compute_80"
cd "$(dirname "$0")"
"$P/nvcc" -fatbin $G --no-compress k.cu -o plain.fatbin
"$P/nvcc" -fatbin $G k.cu -o zstd.fatbin
"$P/nvcc" -fatbin $G --compress-mode=speed k.cu -o lz4.fatbin
"$P/nvcc" -fatbin -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=compute_90 \
    -gencode arch=compute_80,code=compute_80 k.cu -o multi.fatbin
"$P/nvcc" -fatbin -gencode arch=compute_80,code=sm_80 k.cu -o sass.fatbin
"$P/nvcc" -c $G k.cu -o host.o
"$P/nvcc" -fatbin registration.cu -o registration.fatbin
"$P/nvcc" -cubin -arch=sm_80 k.cu -o sass.cubin
# cubins as `ptxvm ptxas` writes them (the PTX inside): for sm_80, for sm_90 (which an 8.0
# device cannot run) and relocatable (-c) for sm_80; PTXVM: the ptxvm binary
"$P/nvcc" -ptx -arch=compute_80 k.cu -o k80.ptx
PTXVM=${PTXVM:-../../../../target/release/ptxvm}
"$PTXVM" ptxas -arch=sm_80 k80.ptx -o ptxvm.cubin
"$PTXVM" ptxas -arch=sm_90 k80.ptx -o ptxvm_sm90.cubin
"$PTXVM" ptxas -c -arch=sm_80 k80.ptx -o ptxvm_rel.cubin
