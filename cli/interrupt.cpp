/// @file cli/interrupt.cpp
/// See interrupt.hpp. The handlers do only async-signal-safe things: stores to lock-free atomics,
/// sigaction, alarm and write.
#include "interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace mcubes::cli {

namespace {

volatile std::sig_atomic_t received = 0;
volatile std::sig_atomic_t pass_mode = static_cast<int>(pass_stop::none);
stop_request stop_flag;

void write_notice() {
  const ssize_t n = ::write(STDERR_FILENO, interrupt_notice, sizeof interrupt_notice - 1);
  (void)n;
}

void set_action(int sig, void (*handler)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

extern "C" void on_alarm(int) {  // one second after the first signal: the run has not stopped
  if (pass_mode == static_cast<int>(pass_stop::abandoned)) write_notice();
}

extern "C" void on_signal(int sig) {
  const bool first = received == 0;
  if (first) received = sig;
  stop_flag.request();
  set_action(sig, SIG_DFL);  // a second one ends the process at once
  if (!first) {  // the other of SIGINT and SIGTERM, second: delivered again on return, by default
    raise(sig);
    return;
  }
  if (pass_mode == static_cast<int>(pass_stop::at_end))
    write_notice();
  else if (pass_mode == static_cast<int>(pass_stop::abandoned))
    alarm(1);
}

}  // namespace

void install_interrupt_handlers() {
  set_action(SIGALRM, on_alarm);
  if (received != 0) return;  // after the first signal the default action stays
  set_action(SIGINT, on_signal);
  set_action(SIGTERM, on_signal);
}

int interrupt_signal() { return received; }

const stop_request& interrupt_stop() { return stop_flag; }

void set_pass_stop(pass_stop how) { pass_mode = static_cast<int>(how); }

namespace {

volatile std::sig_atomic_t guarding = 0;

void write_text(const char* text) {
  const ssize_t n = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)n;
}

extern "C" void on_crash(int sig) {
  if (guarding) {
    const char* what = "a fatal signal";
    switch (sig) {
      case SIGSEGV: what = "SIGSEGV: invalid memory access"; break;
      case SIGBUS: what = "SIGBUS: invalid memory access"; break;
      case SIGFPE: what = "SIGFPE: arithmetic exception"; break;
      case SIGILL: what = "SIGILL: illegal instruction"; break;
      case SIGABRT: what = "SIGABRT: abort() called"; break;
      default: break;
    }
    write_text("mcubes: error: the integrand crashed (signal ");
    write_text(what);
    write_text(")\n");
    guarding = 0;
  }
  set_action(sig, SIG_DFL);
  raise(sig);  // delivered with the default action when the handler returns
}

extern "C" void on_exit_during_run() {
  if (!guarding) return;
  write_text("mcubes: error: the integrand called exit() during the run\n");
  _exit(3);
}

}  // namespace

integrand_guard::integrand_guard() {
  static const bool installed = [] {
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) set_action(sig, on_crash);
    std::atexit(on_exit_during_run);
    std::at_quick_exit(on_exit_during_run);
    return true;
  }();
  (void)installed;
  guarding = 1;
}

integrand_guard::~integrand_guard() { guarding = 0; }

}  // namespace mcubes::cli
