/// @file tests/jit/test_jit_unit.cpp
/// The parts of the run-time compilation (include/mcubes/jit/) that run no compiler: the checks
/// of the user's text, the generated unit, the reading of compiler diagnostics (GCC, Clang and
/// nvcc formats, as they print them), SHA-256 (FIPS 180-4 known answers), the cache's checks before
/// loading, the process runner's time limit, and the schedule of nvcc's steps (a recorded
/// --dryrun listing; a stand-in nvcc). Fast (label `fast`: also run under the sanitizers).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mcubes/jit.hpp>

namespace {

namespace jit = mcubes::jit;

/// The single diagnostic of check_source's compile_error for `src` (line 0 if none was thrown).
jit::diagnostic check_error(const jit::integrand_source& src) {
  try {
    jit::check_source(src);
  } catch (const jit::compile_error& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    EXPECT_TRUE(e.compiler_output().empty());
    EXPECT_EQ(std::string(e.what()).rfind(src.name() + ":", 0), 0u) << e.what();
    return e.diagnostics().at(0);
  }
  return {};
}

TEST(JitSource, ValidTextsPassTheChecks) {
  for (const char* t : {"exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5)))", "x[0] * x[1]", "1",
                        "x[+1] + x[0x0] + x[0b1] + x[1u] + x[ 1 ]", "[&] { double s = 0; s += x[0]; return s; }()",
                        "\"a;b(\" [0] == 'a' ? x[0] : x[1]  // a comment with ; and (", "x [1] /* ) */"})
    EXPECT_NO_THROW(jit::check_source(jit::expression(t, 2))) << t;
  EXPECT_NO_THROW(jit::check_source(jit::body("double s = 0;\nfor (int i = 0; i < D; ++i) s += x[i];\nreturn sin(s);", 3)));
  EXPECT_NO_THROW(jit::check_source(jit::body("#define OPEN (\nreturn x[0];", 1)));  // directives aside
  EXPECT_NO_THROW(jit::check_source(jit::body("struct q { double x[4]; } v{}; return v.x[3];", 1)));  // not the point
  EXPECT_NO_THROW(jit::check_source(jit::body("double x[10] = {}; x[5] = 1; return x[5];", 1)));     // its own x
}

TEST(JitSource, EachProblemIsReportedAtItsLineAndColumn) {
  struct c {
    jit::integrand_source src;
    int line, column;
    const char* fragment;
  };
  const c cases[] = {
      {jit::expression("", 1), 1, 1, "the expression is empty"},
      {jit::expression("  // nothing\n", 1), 1, 1, "the expression is empty"},
      {jit::body("  ", 1), 1, 1, "the body is empty"},
      {jit::expression("exp(x[0]", 1), 1, 4, "'(' is never closed"},
      {jit::expression("x[0])", 1), 1, 5, "')' closes nothing"},
      {jit::expression("(x[0]]", 1), 1, 6, "']' does not match the '(' at line 1, column 1"},
      {jit::expression("x[0]; x[0]", 1), 1, 5, "';' in an expression"},
      {jit::expression("x[0] /* open", 1), 1, 6, "unterminated comment"},
      {jit::expression("x[0] + \"open", 1), 1, 8, "unterminated string literal"},
      {jit::expression("x[0] + 'a", 1), 1, 8, "unterminated character literal"},
      {jit::expression("x[0] \\", 1), 1, 6, "line continuation"},
      {jit::expression("x[0] + x[2]", 2), 1, 8, "x[2] is out of range: D = 2, the coordinates are x[0] .. x[1]"},
      {jit::expression("x[-1]", 2), 1, 1, "x[-1] is out of range"},
      {jit::expression("x[0x10]", 8), 1, 1, "x[0x10] is out of range: D = 8"},
      {jit::expression("x[1]", 1), 1, 1, "the coordinates are x[0]"},
      {jit::body("double s = 0;\n  s += x[3];\nreturn s;", 3), 2, 8, "x[3] is out of range"},
      {jit::body("double s = x[0];", 1), 1, 1, "the body has no return statement"},
      {jit::body("return x[5];", 2), 1, 8, "x[5] is out of range"},
      {jit::body("if (x[0] < 0.5) {\n return 1;\n", 1), 1, 17, "'{' is never closed"},
      {jit::expression("p[0] * x[0] + p[2]", 1, 2), 1, 15, "p[2] is out of range: P = 2, the parameters are p[0] .. p[1]"},
      {jit::expression("p[0] * x[0]", 1), 1, 1, "p[0] is out of range: P = 0, the integrand has no parameters"},
      {jit::expression("p[-1]", 1, 3), 1, 1, "p[-1] is out of range"},
  };
  for (const c& k : cases) {
    const jit::diagnostic d = check_error(k.src);
    EXPECT_EQ(d.line, k.line) << k.src.text;
    EXPECT_EQ(d.column, k.column) << k.src.text;
    EXPECT_NE(d.message.find(k.fragment), std::string::npos) << k.src.text << ": " << d.message;
  }
}

TEST(JitSource, TheParametersTheTextReadsWithALiteralIndexAreListedInOrder) {
  const std::vector<jit::parameter_use> u =
      jit::literal_parameter_uses(jit::body("double s = p[3] * x[0];\n  s += q.p[7] + p[0x1] + p[i];\nreturn s + p[3];", 1));
  ASSERT_EQ(u.size(), 3u);  // q.p[7] is a member, p[i] has no literal index
  EXPECT_EQ(u[0].index, 3);
  EXPECT_EQ(u[0].line, 1);
  EXPECT_EQ(u[0].column, 12);
  EXPECT_EQ(u[1].index, 1);
  EXPECT_EQ(u[1].line, 2);
  EXPECT_EQ(u[1].column, 17);
  EXPECT_EQ(u[2].index, 3);
  EXPECT_EQ(u[2].line, 3);
  EXPECT_TRUE(jit::literal_parameter_uses(jit::body("double p[4] = {}; return p[3];", 1)).empty());  // its own p
  EXPECT_TRUE(jit::literal_parameter_uses(jit::expression("x[0]", 1)).empty());
  EXPECT_NO_THROW(jit::check_source(jit::body("double p[4] = {}; p[3] = x[0]; return p[3];", 1)));
  EXPECT_THROW(jit::literal_parameter_uses(jit::expression("p[0] /* open", 1)), jit::compile_error);
}

TEST(JitSource, DimensionAndParameterCountAreBadInput) {
  EXPECT_THROW(jit::check_source(jit::expression("1", 0)), mcubes::invalid_input);
  EXPECT_THROW(jit::check_source(jit::expression("1", jit::max_dim + 1)), mcubes::invalid_input);
  EXPECT_THROW(jit::check_source(jit::expression("1", 2, -1)), mcubes::invalid_input);
  EXPECT_NO_THROW(jit::check_source(jit::expression("1", jit::max_dim, 3)));
}

TEST(JitSource, TheLabelNamesTheTextInMessages) {
  jit::integrand_source s = jit::expression("(", 1);
  s.label = "--expr";
  try {
    jit::check_source(s);
    FAIL() << "no error";
  } catch (const jit::compile_error& e) {
    EXPECT_EQ(std::string(e.what()), "--expr:1:1: error: '(' is never closed");
  }
}

TEST(JitSource, TheGeneratedUnitPlacesTheTextAtLineOneOfItsLabel) {
  jit::integrand_source s = jit::body("double s = 0;\nreturn s;", 4, 2);
  s.label = "my \"body\"";
  const std::string u = jit::generate_source(s, mcubes_jit_vegas, mcubes_jit_cpu);
  EXPECT_NE(u.find("#line 1 \"my \\\"body\\\"\"\ndouble s = 0;\nreturn s;\n#line "), std::string::npos) << u;
  EXPECT_NE(u.find("constexpr int D = 4;"), std::string::npos);
  EXPECT_NE(u.find("double p[P];"), std::string::npos);
  // With parameters the integrand is the batch's form, run through with_parameters (jit/source.hpp).
  EXPECT_NE(u.find("using integrand = mcubes::with_parameters<integrand_of_parameters, parameters>;"), std::string::npos);
  EXPECT_NE(u.find("mcubes_jit_run("), std::string::npos);
  EXPECT_EQ(u.find("mcubes_jit_run_batch"), std::string::npos);
  const std::string batch = jit::generate_source(s, mcubes_jit_vegas_batch, mcubes_jit_cpu);
  EXPECT_NE(batch.find("mcubes_jit_run_batch(mcubes_jit_batch_call* call)"), std::string::npos) << batch;
  EXPECT_EQ(batch.find("mcubes_jit_run("), std::string::npos);
  EXPECT_EQ(jit::generate_source(jit::body("return 1;", 4), mcubes_jit_vegas, mcubes_jit_cpu).find("p[P]"),
            std::string::npos);
  EXPECT_NE(u.find(jit::key_placeholder), std::string::npos);
  EXPECT_NE(u.find("#define MCUBES_CHI2_Q_EXTERNAL"), std::string::npos);
  EXPECT_EQ(u, jit::generate_source(s, mcubes_jit_vegas, mcubes_jit_cpu));  // deterministic: part of the key
  EXPECT_NE(u, jit::generate_source(s, mcubes_jit_plain_mc, mcubes_jit_cpu));
  // The #line after the text gives the wrapper's next physical line its own number.
  const std::size_t back = u.find("#line ", u.find("return s;"));
  const int stated = std::stoi(u.substr(back + 6));
  int physical = 1;
  for (std::size_t i = 0; i < back; ++i) physical += u[i] == '\n';
  EXPECT_EQ(stated, physical + 1);
}

// A suite integrand as a run-time source (jit::suite_integrand): the unit includes the suite and
// calls the integrand's own functor with its parameters built from p[0..P-1] (fA: no parameters);
// the name, dimension and parameter count are checked before anything is generated.
TEST(JitSource, ASuiteIntegrandCallsItsOwnFunctor) {
  const std::string u = jit::generate_source(jit::suite_integrand("f4", 13, 2), mcubes_jit_vegas, mcubes_jit_cpu);
  EXPECT_NE(u.find("#include <mcubes/suite.hpp>"), std::string::npos) << u;
  EXPECT_NE(u.find("return mcubes::suite::f4_desc::functor{}(mcubes_jit_point, mcubes::suite::f4_desc::params{p[0], "
                   "p[1]});"),
            std::string::npos)
      << u;
  EXPECT_NE(u.find("constexpr int D = 13;"), std::string::npos);
  EXPECT_NE(u.find("using integrand = mcubes::with_parameters<integrand_of_parameters, parameters>;"), std::string::npos);
  const std::string a = jit::generate_source(jit::suite_integrand("fA", 6, 0), mcubes_jit_vegas, mcubes_jit_cpu);
  EXPECT_NE(a.find("return mcubes::suite::fA_desc::functor{}(mcubes_jit_point);"), std::string::npos) << a;
  EXPECT_NO_THROW(jit::check_source(jit::suite_integrand("f3", 32, 1)));
  EXPECT_THROW(jit::check_source(jit::suite_integrand("f9", 13, 2)), mcubes::invalid_input);
  EXPECT_THROW(jit::check_source(jit::suite_integrand("f4", 33, 2)), mcubes::invalid_input);
  EXPECT_THROW(jit::check_source(jit::suite_integrand("fA", 7, 0)), mcubes::invalid_input);
  EXPECT_THROW(jit::check_source(jit::suite_integrand("f4", 13, 1)), mcubes::invalid_input);
  EXPECT_EQ(jit::suite_integrand("f4", 13, 2).name(), "<f4>");
}

// The dimensions compiled ahead of time, and the visitor over them: another dimension of the
// integrand is refused (the command routes it to the run-time compiler first).
TEST(SuitePrecompiledDims, TheListAndItsVisitor) {
  namespace suite = mcubes::suite;
  for (int d = 1; d <= 12; ++d) EXPECT_TRUE(suite::is_precompiled_dim(d)) << d;
  EXPECT_TRUE(suite::is_precompiled_dim(16));
  for (int d : {0, 13, 14, 15, 17, 24, 32, 33}) EXPECT_FALSE(suite::is_precompiled_dim(d)) << d;
  auto dim_of = [](auto dim) { return decltype(dim)::value; };
  EXPECT_EQ((suite::visit_precompiled_dimension<suite::f4_desc, int>(16, dim_of)), 16);
  EXPECT_EQ((suite::visit_precompiled_dimension<suite::fB_desc, int>(9, dim_of)), 9);
  EXPECT_THROW((suite::visit_precompiled_dimension<suite::f4_desc, int>(13, dim_of)), mcubes::invalid_input);
  EXPECT_THROW((suite::visit_precompiled_dimension<suite::f4_desc, int>(33, dim_of)), mcubes::invalid_input);
  EXPECT_THROW((suite::visit_precompiled_dimension<suite::fA_desc, int>(5, dim_of)), mcubes::invalid_input);
}

TEST(JitDiagnostics, GccClangAndNvccErrorsAreReadAgainstTheUserText) {
  const std::string gcc =
      "/tmp/b/integrand.cpp: In member function 'double mcubes_jit_user::integrand::operator()(const "
      "mcubes::point<2>&) const':\n"
      "--expr:1:6: error: 'foo' was not declared in this scope\n"
      "--expr:1:6: error: 'foo' was not declared in this scope\n"  // a repeat
      "--expr:2:1: warning: unused\n"
      "mcubes-jit-wrapper:17:5: note: in expansion\n"
      "--expr:3:12: fatal error: nothing.h: No such file or directory\n";
  const auto d = jit::user_diagnostics(gcc, "--expr", 2);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].line, 1);
  EXPECT_EQ(d[0].column, 6);
  EXPECT_EQ(d[0].message, "'foo' was not declared in this scope");
  EXPECT_EQ(d[1].line, 3);
  EXPECT_EQ(d[1].message, "nothing.h: No such file or directory");

  const std::string nvcc = "--body(2): error: identifier \"bar\" is undefined\n"
                           "--body(4): error #20-D: identifier \"baz\" is undefined\n"
                           "2 errors detected in the compilation of \"/tmp/b/integrand.cu\".\n";
  const auto n = jit::user_diagnostics(nvcc, "--body", 2);
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].line, 2);
  EXPECT_EQ(n[0].column, 0);
  EXPECT_EQ(n[0].message, "identifier \"bar\" is undefined");
  EXPECT_EQ(n[1].line, 4);
  EXPECT_EQ(n[1].message, "identifier \"baz\" is undefined");

  // checked_point's constant-index error is reported inside the wrapper; the user's call site is
  // the first "inlined from ... at <label>" of its group.
  const std::string index =
      "In member function 'double mcubes::jit::checked_point<D>::operator[](I) const [with I = int]',\n"
      "    inlined from 'double mcubes_jit_user::integrand::operator()(const mcubes::point<2>&) const' at <expr>:1:9,\n"
      "    inlined from 'void mcubes::sample(...)' at /inc/mcubes/core/sampler.hpp:40:5:\n"
      "/inc/mcubes/jit/entry.hpp:80:73: error: call to 'mcubes::jit::detail::constant_index_out_of_range' declared "
      "with attribute error: " +
      std::string(jit::constant_index_marker) + "\n";
  const auto i = jit::user_diagnostics(index, "<expr>", 2);
  ASSERT_EQ(i.size(), 1u);
  EXPECT_EQ(i[0].line, 1);
  EXPECT_EQ(i[0].column, 9);
  EXPECT_NE(i[0].message.find("constant index i outside 0 .. D-1 (D = 2)"), std::string::npos);

  EXPECT_TRUE(jit::user_diagnostics("mcubes-jit-wrapper:20:1: error: expected '}'\n", "<expr>", 1).empty());
  EXPECT_EQ(jit::first_error_line("x\nmcubes-jit-wrapper:20:1: error: expected '}'\n"),
            "mcubes-jit-wrapper:20:1: error: expected '}'");
}

TEST(JitSha256, KnownAnswers) {
  EXPECT_EQ(jit::sha256::of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(jit::sha256::of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(jit::sha256::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  jit::sha256 h;  // a million 'a' in uneven pieces
  const std::string chunk(977, 'a');
  std::size_t left = 1000000;
  while (left > 0) {
    const std::size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  EXPECT_EQ(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/// A fresh folder under the test temporary folder.
std::string fresh_folder(const std::string& name) {
  std::string templ = ::testing::TempDir() + name + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  EXPECT_NE(::mkdtemp(buf.data()), nullptr);
  return buf.data();
}

void write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

TEST(JitCache, FoldersArePrivateAndEntriesAreCheckedBeforeUse) {
  const std::string base = fresh_folder("jit_cache") + "/deeper/mcubes";
  const std::string dir = jit::cache_folder(base);
  struct stat st;
  ASSERT_EQ(::stat(base.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);  // opened to others: closed again
  jit::cache_folder(base);
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  const std::string key_text = "mcubes-jit-key 1\nsource-sha256 0\n";
  const std::string hash = jit::sha256::of(key_text);
  EXPECT_EQ(jit::cache_lookup(dir, hash, key_text), "");  // nothing stored
  write(dir + "/build.o", "object bytes");
  const std::string stored = jit::cache_store(dir, hash, key_text, dir + "/build.o", "// source", ".cpp");
  EXPECT_EQ(jit::cache_lookup(dir, hash, key_text), stored);
  EXPECT_EQ(jit::cache_lookup(dir, hash, key_text + "x"), "");  // another key text: a miss
  write(stored, "object bytez");                                 // a changed object: a miss
  EXPECT_EQ(jit::cache_lookup(dir, hash, key_text), "");
  write(stored, "object bytes");
  EXPECT_EQ(jit::cache_lookup(dir, hash, key_text), stored);
  write(dir + "/" + hash + ".key", key_text);  // a key file without the object's hash: a miss
  EXPECT_EQ(jit::cache_lookup(dir, hash, key_text), "");
}

TEST(JitCache, ASymbolicLinkIsNotACacheFolder) {
  const std::string base = fresh_folder("jit_link");
  ASSERT_EQ(::symlink("/tmp", (base + "/mcubes").c_str()), 0);
  EXPECT_THROW(jit::cache_folder(base + "/mcubes"), mcubes::error);
}

TEST(JitProcess, TheTimeLimitKillsTheWholeProcessGroup) {
  const std::string dir = fresh_folder("jit_process");
  const std::string pid_file = dir + "/grandchild.pid";
  const std::string sh = jit::find_program("sh");
  ASSERT_FALSE(sh.empty());
  const auto t0 = std::chrono::steady_clock::now();
  const jit::process_result r =
      jit::run_process({sh, "-c", "sleep 30 & echo $! > '" + pid_file + "'; wait"}, dir + "/out.txt", 0.5);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(seconds, 10.0);
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  bool gone = false;  // killed with the group (then reaped by init: allow it a moment)
  for (int k = 0; k < 200 && !gone; ++k) {
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone) << "the compiler's child " << grandchild << " survived the time limit";
}

TEST(JitProcess, OutputExitCodeAndCancellation) {
  const std::string dir = fresh_folder("jit_process2");
  const std::string sh = jit::find_program("sh");
  const jit::process_result r = jit::run_process({sh, "-c", "echo out; echo err >&2; echo $LC_ALL; exit 3"}, dir + "/o", 10);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "out\nerr\nC\n");
  int polls = 0;
  const jit::process_result c =
      jit::run_process({sh, "-c", "sleep 30"}, dir + "/o2", 60, [&] { return ++polls > 3; });
  EXPECT_TRUE(c.cancelled);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(jit::find_program("no-such-program-mcubes"), "");
}

TEST(JitToolchain, AMissingCompilerNamesWhereItLookedAndWhatToInstall) {
  const char* old_path = std::getenv("PATH");
  const std::string saved_path = old_path != nullptr ? old_path : "";
  const char* old_cxx = std::getenv("CXX");
  const std::string saved_cxx = old_cxx != nullptr ? old_cxx : "";
  const std::string empty = fresh_folder("jit_empty_path");
  ::setenv("PATH", empty.c_str(), 1);
  ::unsetenv("CXX");
  try {
    jit::find_cxx("", 5, empty + "/v");
    ADD_FAILURE() << "a compiler was found on an empty PATH";
  } catch (const jit::toolchain_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "no C++ compiler found (looked for $CXX (unset), c++ and g++ on PATH): install g++ (Debian: apt-get "
              "install g++)");
  }
  ::setenv("CXX", "my-cxx", 1);
  try {
    jit::find_cxx("", 5, empty + "/v");
    ADD_FAILURE() << "a compiler was found on an empty PATH";
  } catch (const jit::toolchain_error& e) {
    EXPECT_NE(std::string(e.what()).find("the C++ compiler of $CXX, 'my-cxx', was not found"), std::string::npos)
        << e.what();
  }
  // A $CXX that is set but not found is refused even where c++ is on PATH (never another compiler).
  ::setenv("PATH", saved_path.c_str(), 1);
  ::setenv("CXX", "clang++-99", 1);
  try {
    const jit::compiler c = jit::find_cxx("", 5, empty + "/v");
    ADD_FAILURE() << "$CXX=clang++-99 gave " << c.path;
  } catch (const jit::toolchain_error& e) {
    EXPECT_NE(std::string(e.what()).find("$CXX, 'clang++-99', was not found"), std::string::npos) << e.what();
  }
  ::setenv("PATH", empty.c_str(), 1);
  ::setenv("CXX", "my-cxx", 1);
  ::setenv("CUDACXX", "/nonexistent/nvcc", 1);
  if (jit::find_program("/usr/local/cuda/bin/nvcc").empty()) {
    EXPECT_THROW(jit::find_nvcc("", 5, empty + "/v"), jit::toolchain_error);
  }
  ::unsetenv("CUDACXX");
  ::setenv("PATH", saved_path.c_str(), 1);
  if (old_cxx != nullptr) ::setenv("CXX", saved_cxx.c_str(), 1);
  else ::unsetenv("CXX");
  EXPECT_THROW(jit::find_cxx("/nonexistent/c++", 5, empty + "/v"), jit::toolchain_error);
}

// MCUBES_JIT_CXXFLAGS / MCUBES_JIT_NVCCFLAGS: words split at blanks, each variable for its compiler.
TEST(JitToolchain, ExtraFlagsComeFromTheEnvironmentOfTheirCompiler) {
  const char* old_cxx = std::getenv("MCUBES_JIT_CXXFLAGS");
  const std::string saved_cxx = old_cxx != nullptr ? old_cxx : "";
  const char* old_nvcc = std::getenv("MCUBES_JIT_NVCCFLAGS");
  const std::string saved_nvcc = old_nvcc != nullptr ? old_nvcc : "";
  ::setenv("MCUBES_JIT_CXXFLAGS", "  -O1\t-march=x86-64-v2 \n-g0 ", 1);
  ::setenv("MCUBES_JIT_NVCCFLAGS", "-lineinfo", 1);
  EXPECT_EQ(jit::env_extra_flags(false), (std::vector<std::string>{"-O1", "-march=x86-64-v2", "-g0"}));
  EXPECT_EQ(jit::env_extra_flags(true), (std::vector<std::string>{"-lineinfo"}));
  ::setenv("MCUBES_JIT_CXXFLAGS", " \t ", 1);
  ::unsetenv("MCUBES_JIT_NVCCFLAGS");
  EXPECT_TRUE(jit::env_extra_flags(false).empty());
  EXPECT_TRUE(jit::env_extra_flags(true).empty());
  if (old_cxx != nullptr) ::setenv("MCUBES_JIT_CXXFLAGS", saved_cxx.c_str(), 1);
  else ::unsetenv("MCUBES_JIT_CXXFLAGS");
  if (old_nvcc != nullptr) ::setenv("MCUBES_JIT_NVCCFLAGS", saved_nvcc.c_str(), 1);
}

TEST(JitToolchain, TheHeadersOfThisVersionAreFound) {
  const std::string dir = jit::find_include_dir("");
  std::ifstream entry(dir + "/mcubes/jit/entry.hpp");
  EXPECT_TRUE(entry.good()) << dir;
  EXPECT_THROW(jit::find_include_dir(fresh_folder("jit_no_headers")), jit::toolchain_error);
}

// nvcc's steps (jit/nvcc_steps.hpp): the listing of `nvcc --dryrun` (CUDA 13.0's shape, shortened)
// becomes a script with the host front end beside the device steps.
const char* const dryrun_listing =
    "#$ _NVVM_BRANCH_=nvvm\n"
    "#$ _SPACE_= \n"
    "#$ CICC_PATH=/cuda/bin/../nvvm/bin\n"
    "#$ PATH=/cuda/bin/../nvvm/bin:/cuda/bin:/usr/bin\n"
    "#$ INCLUDES=\"-I/cuda/include\"  \n"
    "#$ rm /b/integrand_dlink.reg.c\n"
    "#$ gcc -std=c++17 -E -x c++ -D__CUDACC__ \"/b/integrand.cu\" -o \"/b/integrand.cpp4.ii\" \n"
    "#$ cudafe++ --c++17 --orig_src_file_name \"/b/integrand.cu\" --gen_c_file_name \"/b/integrand.cudafe1.cpp\" "
    "--stub_file_name \"integrand.cudafe1.stub.c\" --gen_module_id_file --module_id_file_name \"/b/integrand.module_id\" "
    "\"/b/integrand.cpp4.ii\" \n"
    "#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -E -x c++ \"/b/integrand.cu\" -o \"/b/integrand.cpp1.ii\" \n"
    "#$ \"$CICC_PATH/cicc\" --c++17 -arch compute_90 --module_id_file_name \"/b/integrand.module_id\" --stub_file_name "
    "\"/b/integrand.cudafe1.stub.c\" \"/b/integrand.cpp1.ii\" -o \"/b/integrand.ptx\"\n"
    "#$ ptxas -arch=sm_90 -m64  \"/b/integrand.ptx\"  -o \"/b/integrand.sm_90.cubin\" \n"
    "#$ fatbinary --create=\"/b/integrand.fatbin\" -64 --embedded-fatbin=\"/b/integrand.fatbin.c\" \n"
    "#$ gcc -std=c++17 -c -x c++ -O1 \"/b/integrand.cudafe1.cpp\" -o \"/b/integrand.o\" \n"
    "#$ nvlink -m64 --shared \"/b/integrand.o\" -o \"/b/integrand_dlink.sm_90.cubin\"\n"
    "#$ g++ -fPIC -shared \"/b/integrand_dlink.o\" \"/b/integrand.o\" -o \"/b/integrand.so\" \n";

TEST(JitNvccSteps, TheDryRunBecomesTheFrontEndBesideTheDeviceSteps) {
  EXPECT_EQ(jit::detail::shell_words("a \"b c\" 'd e' f\\ g \"h\\\"i\" $X/y"),
            (std::vector<std::string>{"a", "b c", "d e", "f g", "h\"i", "$X/y"}));
  EXPECT_EQ(jit::nvcc_module_id("0123456789abcdef99", "integrand.cu"), "_01234567_12_integrand_cu_89abcdef");
  const std::string s = jit::nvcc_step_script(dryrun_listing, "/b", "_01234567_12_integrand_cu_89abcdef");
  ASSERT_FALSE(s.empty());
  auto at = [&](const std::string& text) {
    const std::size_t k = s.find(text);
    EXPECT_NE(k, std::string::npos) << "missing: " << text << "\n" << s;
    return k;
  };
  EXPECT_LT(at("export CICC_PATH='/cuda/bin/../nvvm/bin'\n"), at("export PATH='/cuda/bin/../nvvm/bin:/cuda/bin:/usr/bin'\n"));
  at("export INCLUDES='\"-I/cuda/include\"'\n");
  // the id first, then the front end (without --gen_module_id_file) in the background ...
  const std::size_t id = at("printf '%s' '_01234567_12_integrand_cu_89abcdef' > '/b/integrand.module_id'");
  const std::size_t rm = at("rm -f /b/integrand_dlink.reg.c\n");
  const std::size_t fe = at("cudafe++ --c++17");
  EXPECT_EQ(s.find("--gen_module_id_file"), std::string::npos);
  EXPECT_NE(s.find("--stub_file_name \"integrand.cudafe1.stub.c\" --module_id_file_name \"/b/integrand.module_id\""),
            std::string::npos);
  const std::size_t bg = at(") &\n");
  // ... beside the device steps (ptxas with --split-compile where it has it) ...
  const std::size_t pp1 = at("-D__CUDA_ARCH__=900 -E");
  const std::size_t probe = at("if 'ptxas' --help 2>/dev/null | grep -q -e --split-compile; then");
  const std::size_t ptxas = at("\"/b/integrand.sm_90.cubin\" $mcubes_ptxas_split\n");
  const std::size_t fatbin = at("fatbinary --create");
  // ... then, once both succeeded, the rest in nvcc's order
  const std::size_t wait = at("wait $mcubes_front_end\n");
  const std::size_t host = at("gcc -std=c++17 -c -x c++ -O1");
  const std::size_t link = at("g++ -fPIC -shared");
  EXPECT_TRUE(id < rm && rm < fe && fe < bg && bg < pp1 && pp1 < probe && probe < ptxas && ptxas < fatbin &&
              fatbin < wait && wait < host && host < link)
      << s;
}

TEST(JitNvccSteps, AListingOfAnotherShapeGivesNoScript) {
  const std::string ok = dryrun_listing;
  auto without = [&](const std::string& text, const std::string& by) {
    std::string l = ok;
    const std::size_t k = l.find(text);
    EXPECT_NE(k, std::string::npos) << text;
    return k == std::string::npos ? l : l.replace(k, text.size(), by);
  };
  EXPECT_FALSE(jit::nvcc_step_script(ok, "/b", "_id").empty());
  EXPECT_EQ(jit::nvcc_step_script(ok, "/other", "_id"), "");  // the id file outside the build folder
  EXPECT_EQ(jit::nvcc_step_script(without("--gen_module_id_file ", ""), "/b", "_id"), "");  // no id generated
  EXPECT_EQ(jit::nvcc_step_script(without("\"$CICC_PATH/cicc\"", "\"$CICC_PATH/cicc2\""), "/b", "_id"), "");  // no cicc
  EXPECT_EQ(jit::nvcc_step_script(without("--module_id_file_name \"/b/integrand.module_id\" --stub", "--stub"), "/b", "_id"),
            "");  // cicc without the id
  EXPECT_EQ(jit::nvcc_step_script(without("\"/b/integrand.ptx\"  -o", "\"/b/integrand.cudafe1.cpp\"  -o"), "/b", "_id"),
            "");  // a device step reads the front end's output
  EXPECT_EQ(jit::nvcc_step_script(without("-c -x c++ -O1", "-x c++ -O1"), "/b", "_id"), "");  // no host compilation
  EXPECT_EQ(jit::nvcc_step_script(ok + "#$ cudafe++ --gen_module_id_file --module_id_file_name \"/b/x\"\n", "/b", "_id"),
            "");  // two front ends
  EXPECT_EQ(jit::nvcc_step_script("", "/b", "_id"), "");
}

/// Writes an executable sh script.
void write_script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
}

// run_nvcc with a stand-in nvcc and stand-in tools: the steps run as scheduled (the front end
// reads the id written for it, ptxas gets --split-compile); when they fail, the plain command
// runs and its output is the result's.
TEST(JitNvccSteps, TheStepsRunAndAFailureFallsBackToThePlainCommand) {
  const std::string f = fresh_folder("jit_nvcc_steps");
  write_script(f + "/nvcc",
               "case \" $* \" in *\" --dryrun \"*)\ncat <<EOT\n"
               "#\\$ TOOLS=" + f + "\n"
               "#\\$ rm " + f + "/u_dlink.reg.c\n"
               "#\\$ \"\\$TOOLS/cudafe++\" --gen_c_file_name \"" + f + "/u.cudafe1.cpp\" --gen_module_id_file "
               "--module_id_file_name \"" + f + "/u.module_id\" \"" + f + "/u.cu\"\n"
               "#\\$ \"" + f + "/cicc\" --module_id_file_name \"" + f + "/u.module_id\" -o \"" + f + "/u.ptx\"\n"
               "#\\$ \"" + f + "/ptxas\" \"" + f + "/u.ptx\"\n"
               "#\\$ \"" + f + "/host\" -c \"" + f + "/u.cudafe1.cpp\"\n"
               "EOT\nexit 0;;\nesac\necho plain nvcc\n");
  // the front end goes on only once cicc has started (side by side; in nvcc's order it would wait
  // in vain and fail after 20 s)
  write_script(f + "/cudafe++", "for a; do [ \"$a\" = --gen_module_id_file ] && exit 9; done\n"
                                "i=0; while [ ! -f '" + f + "/cicc.ran' ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done\n"
                                "test -f '" + f + "/cicc.ran' || exit 5\n"
                                "echo \"front end reads $(cat '" + f + "/u.module_id')\"; touch '" + f + "/u.cudafe1.cpp'\n");
  write_script(f + "/cicc", "test -f '" + f + "/u.module_id' || exit 8\ntouch '" + f + "/cicc.ran'\n"
                            "if [ -n \"$MCUBES_TEST_FAIL\" ]; then echo 'u.cu(1): error: bad'; exit 2; fi\necho device\n");
  write_script(f + "/ptxas", "if [ \"$1\" = --help ]; then echo '--split-compile <N>'; exit 0; fi\necho \"ptxas $*\"\n");
  write_script(f + "/host", "test -f '" + f + "/u.cudafe1.cpp' || exit 7\necho host\n");
  const std::vector<std::string> command = {f + "/nvcc", "-o", f + "/u.so", f + "/u.cu"};
  const jit::process_result r = jit::run_nvcc(command, f, "0123456789abcdef", 30);
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_NE(r.output.find("front end reads _01234567_4_u_cu_89abcdef\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ptxas " + f + "/u.ptx --split-compile=0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("host\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("plain nvcc"), std::string::npos) << r.output;
  EXPECT_GT(r.seconds, 0.0);
  ::unlink((f + "/cicc.ran").c_str());
  ::setenv("MCUBES_TEST_FAIL", "1", 1);
  const jit::process_result p = jit::run_nvcc(command, f, "0123456789abcdef", 30);
  ::unsetenv("MCUBES_TEST_FAIL");
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.output, "plain nvcc\n");
}

TEST(JitBox, BoxesAreCheckedAsRegions) {
  EXPECT_NO_THROW(jit::validate(jit::box::unit(3), 3));
  EXPECT_THROW(jit::validate(jit::box::unit(3), 2), mcubes::invalid_input);
  EXPECT_THROW(jit::validate(jit::box{{0, 1}, {1, 1}}, 2), mcubes::invalid_input);
  EXPECT_THROW(jit::validate(jit::box{{0}, {std::numeric_limits<double>::infinity()}}, 1), mcubes::invalid_input);
}

}  // namespace
