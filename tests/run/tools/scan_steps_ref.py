# Expected values of tests/run/warp/scan_steps.ptx: a model of the kernel written from the
# PTX ISA pseudo-code of shfl (not from ptxvm). Prints the EXPECT lines.
# Independent model of the scan_steps.ptx kernel (ISA pseudo-code for shfl; inactive source
# lane -> own value, ptxvm's documented choice). Threads 0..47, warp 1 has 16 lanes.
M=0xffffffff
def shfl(vals, active, mode, b, c, l):
    seg=(c>>8)&31; cval=c&31
    maxl=(l&seg)|(cval&~seg); minl=l&seg
    if mode=='up': j=l-b; ok=j>=maxl
    elif mode=='down': j=l+b; ok=j<=maxl
    elif mode=='bfly': j=l^b; ok=j<=maxl
    ok = ok and j in active
    return (vals[j] if ok else vals[l]), ok
outs=[[0]*48 for _ in range(6)]
for w,n in ((0,32),(1,16)):
    act=set(range(n))
    x=[32*w+l+1 for l in range(32)]
    # out0: scan of x, selp s, 0, t, (lane < d), v = s + v in place
    v=x[:]
    for d in (1,2,4,8,16):
        t=[shfl(v,act,'up',d,0,l)[0] if l in act else 0 for l in range(32)]
        v=[((0 if l<d else t[l]) + v[l]) & M for l in range(32)]
    for l in range(n): outs[0][32*w+l]=v[l]
    # out1: scan of 2t+1 with selp s, t, 0, (lane >= d), SSA registers
    v=[2*(32*w+l)+1 for l in range(32)]
    for d in (1,2,4,8,16):
        t=[shfl(v,act,'up',d,0,l)[0] if l in act else 0 for l in range(32)]
        v=[((t[l] if l>=d else 0) + v[l]) & M for l in range(32)]
    for l in range(n): outs[1][32*w+l]=v[l]
    # out2: down 1, c=31, selp s, t, y=1000, (lane < 31); d = s + x
    for l in range(n):
        t=shfl(x,act,'down',1,31,l)[0]
        outs[2][32*w+l]=((t if l<31 else 1000)+x[l])&M
    # out3: bfly 16, selp s, t, 0, (lane >= 0: true); v = s + v in place
    v=x[:]
    t=[shfl(v,act,'bfly',16,31,l)[0] for l in range(32)]
    for l in range(n): outs[3][32*w+l]=(t[l]+v[l])&M
    # out4: bfly 2, selp s, 0, t, (lane > 40: false); v = s + v in place
    t=[shfl(v,act,'bfly',2,31,l)[0] for l in range(32)]
    for l in range(n): outs[4][32*w+l]=(t[l]+v[l])&M
    # out5: up 4, selp s, 0, t, (lane < 4); d = s + 100; with x = 0xfffffff0 + t (wraps)
    xw=[(0xfffffff0+32*w+l)&M for l in range(32)]
    for l in range(n):
        t=shfl(xw,act,'up',4,0,l)[0]
        outs[5][32*w+l]=((0 if l<4 else t)+100)&M
for k,o in enumerate(outs):
    print(f"// EXPECT {k} u32: "+" ".join(map(str,o)))
