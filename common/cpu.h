/*
 * cpu.h - the one CPU-specific hint the tree uses, behind a portable name,
 * so the code builds on x86-64 and arm64 alike.
 */
#ifndef ATTIC_CPU_H
#define ATTIC_CPU_H

/* Tell the core we are spinning on a value another core will change: it
 * saves power and lets a sibling hyperthread run (x86 PAUSE, arm YIELD). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

#endif
