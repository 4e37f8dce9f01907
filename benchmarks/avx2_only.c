/* Hides AVX-512, VNNI and AMX from a process (LD_PRELOAD), so that libraries which pick their kernels at run time
 * (onnxruntime, numpy, OpenCV) take the code paths of an AVX2 + FMA x86-64 CPU without VNNI (AMD Zen 2/3, Intel
 * before Ice Lake): the int8 kernels without VNNI, the float ones at 256 bits. The hardware stays what it is, so
 * timings show those code paths on this CPU, not on an older one.
 *
 * How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, 0; CPUs and hypervisors that offer it show `cpuid_fault`
 * in /proc/cpuinfo) turns every CPUID instruction into a SIGSEGV. The handler runs the real CPUID with faulting off
 * for that moment, clears the hidden feature bits and steps over the instruction. The setting is inherited by the
 * process's threads and children. Built and used by benchmarks/avx2_only.py. */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

static void on_segv(int sig, siginfo_t *info, void *raw) {
    (void)sig;
    (void)info;
    ucontext_t *uc = raw;
    greg_t *r = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)r[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0xa2) { /* a real fault: the default action on return */
        signal(SIGSEGV, SIG_DFL);
        return;
    }
    unsigned leaf = (unsigned)r[REG_RAX], sub = (unsigned)r[REG_RCX], a, b, c, d;
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    __cpuid_count(leaf, sub, a, b, c, d);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
    if (leaf == 7 && sub == 0) {
        /* EBX: AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL */
        b &= ~(BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31));
        /* ECX: AVX512 VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ */
        c &= ~(BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14));
        /* EDX: AVX512 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512-FP16, AMX-TILE, AMX-INT8 */
        d &= ~(BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25));
    } else if (leaf == 7 && sub == 1) {
        a &= ~(BIT(4) | BIT(5) | BIT(23));  /* AVX-VNNI, AVX512-BF16, AVX-IFMA */
        d &= ~(BIT(4) | BIT(5) | BIT(10));  /* AVX-VNNI-INT8, AVX-NE-CONVERT, AVX-VNNI-INT16 */
    }
    r[REG_RAX] = a;
    r[REG_RBX] = b;
    r[REG_RCX] = c;
    r[REG_RDX] = d;
    r[REG_RIP] += 2;
}

__attribute__((constructor)) static void hide_features(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
        perror("avx2_only: this CPU or kernel offers no CPUID faulting");
        exit(3);
    }
}
