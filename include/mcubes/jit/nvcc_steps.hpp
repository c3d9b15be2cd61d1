#pragma once
/// @file jit/nvcc_steps.hpp
/// nvcc's compilation of a generated unit, run as nvcc's own steps with the host front end beside
/// the device compilation (POSIX; host only). The unit, the flags and every step's command line are
/// nvcc's: only their order changes, so the object is the one nvcc makes (the same device code,
/// the same host code).
///
/// nvcc runs its steps one after the other (`nvcc --dryrun` lists them): (1) the host
/// preprocessor and cudafe++, the host front end, which also writes the unit's module id (a name
/// for its internal symbols); (2) the device preprocessor, cicc (which reads the module id and
/// writes the kernels' host stubs), ptxas and fatbinary; (3) the host compiler on cudafe++'s output
/// (it includes cicc's stubs and the fat binary), the device link and the link. (1) and (2) share
/// only the module id: with the id written beforehand (cudafe++ reads an existing id file when it
/// is not asked to generate one) they run side by side, and the first use waits for the longer of
/// the two instead of their sum. ptxas also compiles the unit's kernels in parallel threads
/// (--split-compile, where this ptxas has it): the machine code of every kernel is the same as
/// with one thread (only the order of the cubin's symbol table differs).
///
/// nvcc_step_script() turns the --dryrun listing into that schedule (a sh script), or returns ""
/// when the listing is not of the known shape; run_nvcc() runs it, and runs the plain nvcc
/// command instead when there is no script or the script fails: a text that does not compile gets
/// nvcc's own diagnostics, in nvcc's order, as before.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "../atomic_file.hpp"
#include "process.hpp"

namespace mcubes::jit {

/// The name of this schedule in the cache key (jit.hpp): a change to how the steps run changes it.
inline constexpr const char* nvcc_steps_recipe = "front-end-beside-device ptxas-split 1";

namespace detail {

/// The words of a command line of `nvcc --dryrun` as sh splits it (blanks; "..." with \" \\ \$
/// escapes; '...'; a backslash outside quotes escapes the next character); $NAME is left as is.
inline std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string w;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(w), w.clear(), in_word = false;
      continue;
    }
    in_word = true;
    if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() &&
            (line[i + 1] == '"' || line[i + 1] == '\\' || line[i + 1] == '$' || line[i + 1] == '`'))
          ++i;
        w += line[i];
      }
    } else if (c == '\'') {
      for (++i; i < line.size() && line[i] != '\''; ++i) w += line[i];
    } else if (c == '\\' && i + 1 < line.size()) {
      w += line[++i];
    } else {
      w += c;
    }
  }
  if (in_word) words.push_back(w);
  return words;
}

/// The word after `option` in `words`, or "" (also when `option` is not there).
inline std::string word_after(const std::vector<std::string>& words, const std::string& option) {
  for (std::size_t k = 0; k + 1 < words.size(); ++k)
    if (words[k] == option) return words[k + 1];
  return {};
}

inline std::size_t count_word(const std::vector<std::string>& words, const std::string& w) {
  std::size_t n = 0;
  for (const std::string& x : words) n += x == w;
  return n;
}

/// The program of a command: its first word after the last '/' ("$CICC_PATH/cicc" -> "cicc").
inline std::string program_of(const std::vector<std::string>& words) {
  if (words.empty()) return {};
  const std::string& p = words.front();
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

/// `s` as one sh word ('...').
inline std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Whether `s` is a sh variable name.
inline bool is_name(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace detail

/// The module id the script gives a unit: the form of cudafe++'s own ids
/// (`_<hex>_<length>_<file name>_<hex>`), from `key` (the hex cache key: one id per object).
inline std::string nvcc_module_id(const std::string& key, const std::string& unit_name) {
  std::string name;
  for (char c : unit_name) name += (c == '.' || c == '-' || c == '/') ? '_' : c;
  const std::string k = key.size() >= 16 ? key : key + std::string(16 - key.size(), '0');
  return "_" + k.substr(0, 8) + "_" + std::to_string(name.size()) + "_" + name + "_" + k.substr(8, 8);
}

/// A sh script that runs the steps of `dryrun` (the output of the nvcc command with --keep
/// --keep-dir `<folder>` --dryrun, its intermediate files in `<folder>`) as the file comment says:
/// nvcc's environment (its NAME=value lines), then the host front end (the steps up to cudafe++,
/// without --gen_module_id_file, after the id `module_id` is written to its file) in the background
/// beside the device steps (from the device preprocessor to fatbinary; ptxas with
/// --split-compile=0 where it has that option), then the rest in nvcc's order. Removals are `rm
/// -f`. Returns "" unless the listing has exactly one cudafe++ step that generates its module id in
/// `folder`, a cicc step after it that reads that id, and a host compilation of cudafe++'s output
/// after those, with no device step reading cudafe++'s output.
inline std::string nvcc_step_script(const std::string& dryrun, const std::string& folder, const std::string& module_id) {
  std::vector<std::string> env, commands;
  {
    std::size_t start = 0;
    while (start < dryrun.size()) {
      std::size_t end = dryrun.find('\n', start);
      if (end == std::string::npos) end = dryrun.size();
      std::string l = dryrun.substr(start, end - start);
      start = end + 1;
      if (l.compare(0, 3, "#$ ") != 0) continue;
      l = l.substr(3);
      while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
      const std::size_t eq = l.find('=');
      if (commands.empty() && eq != std::string::npos && detail::is_name(l.substr(0, eq))) {
        env.push_back(l);
      } else if (!l.empty()) {
        commands.push_back(l);
      }
    }
  }
  std::vector<std::vector<std::string>> words;
  for (const std::string& c : commands) words.push_back(detail::shell_words(c));

  // cudafe++: exactly one, generating its module id in the folder
  std::size_t fe = commands.size();
  for (std::size_t k = 0; k < commands.size(); ++k)
    if (detail::program_of(words[k]) == "cudafe++") {
      if (fe != commands.size()) return {};
      fe = k;
    }
  if (fe == commands.size()) return {};
  const std::string id_file = detail::word_after(words[fe], "--module_id_file_name");
  const std::string front_end_out = detail::word_after(words[fe], "--gen_c_file_name");
  if (detail::count_word(words[fe], "--gen_module_id_file") != 1 || id_file.empty() || front_end_out.empty() ||
      id_file.compare(0, folder.size() + 1, folder + "/") != 0 || id_file.find('\'') != std::string::npos)
    return {};
  // the host compilation of cudafe++'s output: the first "-c" step after it that reads it
  std::size_t host = commands.size();
  for (std::size_t k = fe + 1; k < commands.size() && host == commands.size(); ++k)
    if (detail::count_word(words[k], "-c") > 0 && detail::count_word(words[k], front_end_out) > 0) host = k;
  if (host == commands.size()) return {};
  // the device steps between them: a cicc reading the id, none reading cudafe++'s output
  bool cicc = false;
  for (std::size_t k = fe + 1; k < host; ++k) {
    if (detail::count_word(words[k], front_end_out) > 0) return {};
    if (detail::program_of(words[k]) == "cicc") {
      if (detail::word_after(words[k], "--module_id_file_name") != id_file) return {};
      cicc = true;
    }
  }
  if (!cicc || fe + 1 == host) return {};

  auto step = [&](std::size_t k) {
    const std::string program = detail::program_of(words[k]);
    std::string c = commands[k];
    if (k == fe) {  // cudafe++ reads the id written below instead of generating one
      const std::string flag = " --gen_module_id_file";
      const std::size_t at = c.find(flag);
      if (at == std::string::npos || (at + flag.size() < c.size() && c[at + flag.size()] != ' ')) return std::string();
      c.erase(at, flag.size());
    } else if (program == "rm" && words[k].size() >= 2 && words[k][0] == "rm") {
      c = "rm -f" + c.substr(2);
    } else if (program == "ptxas" && c.find("split-compile") == std::string::npos) {
      c += " $mcubes_ptxas_split";
    }
    return c + "\n";
  };
  std::string s =
      "# nvcc's steps (nvcc --dryrun), the host front end beside the device compilation: written by mcubes\n"
      "# (include/mcubes/jit/nvcc_steps.hpp).\n";
  for (const std::string& e : env) {
    const std::size_t eq = e.find('=');
    s += "export " + e.substr(0, eq) + "=" + detail::sh_quote(e.substr(eq + 1)) + "\n";
  }
  s += "printf '%s' " + detail::sh_quote(module_id) + " > " + detail::sh_quote(id_file) + " || exit 1\n";
  s += "(\nset -e\n";
  for (std::size_t k = 0; k <= fe; ++k) {
    const std::string c = step(k);
    if (c.empty()) return {};
    s += c;
  }
  s += ") &\nmcubes_front_end=$!\n(\nset -e\nmcubes_ptxas_split=\n";
  bool probed = false;
  for (std::size_t k = fe + 1; k < host; ++k) {
    if (!probed && detail::program_of(words[k]) == "ptxas") {
      // the option where this ptxas lists it (CUDA 13); otherwise ptxas runs as nvcc runs it
      s += "if " + detail::sh_quote(words[k][0]) +
           " --help 2>/dev/null | grep -q -e --split-compile; then mcubes_ptxas_split=--split-compile=0; fi\n";
      probed = true;
    }
    s += step(k);
  }
  s += ")\nmcubes_device=$?\nwait $mcubes_front_end\nmcubes_front_end=$?\n"
       "if [ $mcubes_device -ne 0 ] || [ $mcubes_front_end -ne 0 ]; then exit 1; fi\nset -e\n";
  for (std::size_t k = host; k < commands.size(); ++k) s += step(k);
  return s;
}

/// Compiles with nvcc's `command` (…, "-o", `<object>`, `<unit>`, the unit in `folder`) as the file
/// comment says: `command` --keep --keep-dir `folder` --dryrun lists the steps, the script of
/// nvcc_step_script (module id from `key`) runs them; without a script, or when it fails, `command`
/// itself runs (its output is the result's). The whole within `timeout_seconds`; `cancelled`
/// as run_process. The result's seconds: the whole.
/// @throws error as run_process.
inline process_result run_nvcc(const std::vector<std::string>& command, const std::string& folder, const std::string& key,
                               double timeout_seconds, const std::function<bool()>& cancelled = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  auto finish = [&](process_result r) {
    r.seconds = elapsed();
    return r;
  };
  if (command.size() >= 4 && command[command.size() - 3] == "-o") {
    std::vector<std::string> dry(command.begin(), command.end() - 3);
    dry.insert(dry.end(), {"--keep", "--keep-dir", folder, "--dryrun"});
    dry.insert(dry.end(), command.end() - 3, command.end());
    const process_result d = run_process(dry, folder + "/nvcc-dryrun.log", timeout_seconds, cancelled);
    if (d.cancelled || d.timed_out) return finish(d);
    const std::string unit = command.back();
    const std::string script =
        d.ok() ? nvcc_step_script(d.output, folder, nvcc_module_id(key, unit.substr(unit.rfind('/') + 1))) : std::string();
    if (!script.empty()) {
      const std::string path = folder + "/nvcc-steps.sh";
      write_file_atomically(path, script, false);
      const process_result r = run_process({"/bin/sh", path}, folder + "/compiler.log", timeout_seconds - elapsed(), cancelled);
      if (r.ok() || r.cancelled || r.timed_out || r.signal != 0) return finish(r);
    }
  }
  const double left = timeout_seconds - elapsed();
  if (left <= 0) {
    process_result r;
    r.timed_out = true;
    return finish(r);
  }
  return finish(run_process(command, folder + "/compiler.log", left, cancelled));
}

}  // namespace mcubes::jit
