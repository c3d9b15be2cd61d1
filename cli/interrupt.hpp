#pragma once
/// @file cli/interrupt.hpp
/// SIGINT / SIGTERM during a run. The first signal asks the run to stop: the handler records it and
/// requests the stop of interrupt_stop() (execution::stop of the run's options), then restores the
/// default action, so that a second signal ends the process at once. On the CPU backend the
/// workers abandon the current pass between tiles, so the run stops within about a second even in
/// the middle of a long pass; the command prints the completed iterations and the result with
/// status "interrupted", writes its JSON record and exits 128 + the signal number (130, 143).
///
/// A pass that cannot be abandoned (a CUDA kernel; an integrand call that does not return) ends
/// the run only when it completes. Then the first signal prints at once (CUDA) or after one second
/// without a stop (CPU) the one line interrupt_notice on stderr: the run stops at the end of the
/// current pass, a second signal aborts at once.

#include <mcubes/execution.hpp>

namespace mcubes::cli {

/// Installs the handlers for SIGINT and SIGTERM (for the lifetime of the process).
void install_interrupt_handlers();

/// The signal received since install_interrupt_handlers (SIGINT or SIGTERM), or 0.
int interrupt_signal();

/// The stop request that the first signal sets: the runs' execution::stop.
const stop_request& interrupt_stop();

/// The line printed when a run does not stop at once after the first signal.
inline constexpr const char interrupt_notice[] =
    "mcubes: interrupt: the run stops at the end of the current pass (it cannot be abandoned mid-way); a second "
    "SIGINT or SIGTERM aborts at once\n";

/// How the run under way reacts to the first signal (what the handler says about it).
enum class pass_stop {
  none,       ///< no run under way (compiling, printing): nothing to say
  abandoned,  ///< the CPU backend abandons the pass between tiles: the notice only if the run has not
              ///< stopped one second later (an integrand call that does not return)
  at_end      ///< the pass cannot be abandoned (CUDA): the notice at once
};

/// Sets what the first signal says from now on (set before the run, back to none after it).
void set_pass_stop(pass_stop how);

/// set_pass_stop(how) for the lifetime of the object (then none): the span of a run.
class pass_stop_scope {
 public:
  explicit pass_stop_scope(pass_stop how) { set_pass_stop(how); }
  ~pass_stop_scope() { set_pass_stop(pass_stop::none); }
  pass_stop_scope(const pass_stop_scope&) = delete;
  pass_stop_scope& operator=(const pass_stop_scope&) = delete;
};

/// While an object of this class lives (the run of an integrand compiled from --expr / --body, which
/// runs in this process), a crash or an exit of the integrand is reported instead of ending the
/// program silently:
///  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT (a null dereference, abort(), a trap): one line
///    "mcubes: error: the integrand crashed (signal SIGSEGV: ...)" on stderr, then the signal again
///    with its default action (the program ends by that signal, a core dump where enabled);
///  - exit() or quick_exit() called by the integrand: one line "mcubes: error: the integrand called
///    exit() during the run" on stderr and exit code 3 (runtime failure), never its own code.
/// A crash on an exhausted stack (endless recursion) may end the program without the line.
class integrand_guard {
 public:
  integrand_guard();
  ~integrand_guard();
  integrand_guard(const integrand_guard&) = delete;
  integrand_guard& operator=(const integrand_guard&) = delete;
};

}  // namespace mcubes::cli
