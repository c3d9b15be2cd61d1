/// @file cli/interrupt.cpp
/// See interrupt.hpp.
#include "interrupt.hpp"

#include <csignal>

namespace mcubes::cli {

namespace {

volatile std::sig_atomic_t received = 0;

extern "C" void on_signal(int sig) {
  if (received == 0) received = sig;
  std::signal(sig, SIG_DFL);  // a second one ends the process at once
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

int interrupt_signal() { return received; }

}  // namespace mcubes::cli
