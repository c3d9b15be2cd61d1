#pragma once
/// @file cli/interrupt.hpp
/// SIGINT / SIGTERM during a run: the first signal asks the run to stop at the next iteration
/// boundary (the handler only records it); the handler then restores the default action, so a
/// second signal ends the process at once. The command prints the result so far with status
/// "interrupted", writes its JSON record and exits 128 + the signal number (130, 143).

namespace mcubes::cli {

/// Installs the handlers for SIGINT and SIGTERM (for the lifetime of the process).
void install_interrupt_handlers();

/// The signal received since install_interrupt_handlers (SIGINT or SIGTERM), or 0.
int interrupt_signal();

}  // namespace mcubes::cli
