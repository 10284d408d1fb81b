// A crash reporter to LD_PRELOAD into a process that dies of a signal on the GPU machine:
// on SIGSEGV, SIGBUS, SIGABRT, SIGILL or SIGFPE it writes the faulting thread's native
// backtrace (module+offset) and /proc/self/maps to stderr, then lets the signal take its
// course (Python's faulthandler, if on, still prints the Python stacks). The module's
// offsets resolve with addr2line against an unstripped link of the same objects (nanobind
// strips the module; link it again without -Wl,-s).
//   gcc -O1 -g -fPIC -shared -o libsegv.so scripts/crash-report.c
//   LD_PRELOAD=$PWD/libsegv.so python3 -X faulthandler ...
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <stdio.h>
static struct sigaction old[32];
static void w(const char* s) { (void)!write(2, s, strlen(s)); }
static void handler(int sig, siginfo_t* info, void* uc) {
  char buf[256];
  ucontext_t* u = (ucontext_t*)uc;
  snprintf(buf, sizeof buf, "\n=== SEGV-REPORT signal %d addr %p tid %ld rip %p\n", sig, info->si_addr,
           (long)syscall(SYS_gettid), (void*)u->uc_mcontext.gregs[REG_RIP]);
  w(buf);
  void* frames[128];
  int n = backtrace(frames, 128);
  backtrace_symbols_fd(frames, n, 2);
  w("=== MAPS\n");
  int fd = open("/proc/self/maps", O_RDONLY);
  if (fd >= 0) {
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) (void)!write(2, buf, (size_t)r);
    close(fd);
  }
  w("=== END\n");
  sigaction(sig, &old[sig], NULL);
  raise(sig);
}
__attribute__((constructor)) static void install(void) {
  static char stack[1 << 16];
  stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
  for (unsigned i = 0; i < sizeof sigs / sizeof *sigs; ++i) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(sigs[i], &sa, &old[sigs[i]]);
  }
}
