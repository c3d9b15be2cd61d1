// Placeholder until the pi subcommand lands (issue 4); registers nothing yet.
#include "pi_command.hpp"
namespace mcubes::cli {
std::function<int()> add_pi_command(CLI::App&) { return {}; }
}
