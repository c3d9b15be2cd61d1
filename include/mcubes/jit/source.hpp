#pragma once
/// @file jit/source.hpp
/// The user's text as a translation unit: what an integrand compiled at run time is made of
/// (integrand_source), the checks made before anything is compiled (check_source: empty text,
/// unbalanced brackets, unterminated comments and literals, a ';' in an expression, a body without
/// return, x[k] with a literal k outside 0..D-1, p[k] outside 0..P-1), the parameters the text
/// names (literal_parameter_uses), the generated translation unit (generate_source) and the mapping
/// of the compiler's diagnostics back to the user's text (user_diagnostics). Host only; no compiler
/// is run here (jit.hpp does that).
///
/// The generated unit defines, in namespace mcubes_jit_user, without parameters (P = 0)
/// ```
///   constexpr int D = <dim>;  constexpr int P = 0;
///   struct integrand {
///     MCUBES_HOST_DEVICE double operator()(const mcubes::point<D>& point) const {
///       const mcubes::jit::checked_point<D> x(point);
///       return (<expression>);                       // or: <body>
///     }
///   };
/// ```
/// and with parameters (P > 0) the batch's form of the same (algorithm/vegas_batch.hpp):
/// ```
///   struct parameters { double p[P]; };
///   struct integrand_of_parameters {
///     MCUBES_HOST_DEVICE double operator()(const mcubes::point<D>& point, const parameters& q) const {
///       const mcubes::jit::checked_point<D> x(point);
///       const double (&p)[P] = q.p;                  // p[0] .. p[P-1]
///       return (<expression>);                       // or: <body>
///     }
///   };
///   using integrand = mcubes::with_parameters<integrand_of_parameters, parameters>;
/// ```
/// so that a single run (integrand) and integral k of a batch evaluate the same functor, bit for
/// bit. With `using namespace std;` (so that exp, sin, abs, pow, fmin, ... are the `<cmath>`
/// overloads for double, and abs is never the int one), and the C entry points of jit/abi.hpp
/// around it. The user's text sits between `#line 1 "<label>"` and a `#line` back to the wrapper,
/// so the compiler reports its errors at the user's own line and column. A p[i] with an index
/// known only at run time is not checked: outside 0..P-1 it reads outside the array.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../suite.hpp"
#include "abi.hpp"

namespace mcubes::jit {

/// Largest dimension D of an integrand compiled at run time (the library's tested range).
inline constexpr int max_dim = max_tested_dim;

/// Largest number of parameters p[0..P-1].
inline constexpr int max_params = 1024;

/// The forms of an integrand's text.
enum class source_kind {
  expression,  ///< a C++ expression of x[0..D-1] (and D, p[0..P-1]): the integrand's value
  body,        ///< the statements of a function body that returns the value
  suite        ///< the name of a suite integrand (suite.hpp: "f1".."f6"; suite_integrand): its own
               ///< functor, for the dimensions the command does not compile ahead of time
};

/// An integrand given as text. The text is C++ in a function of `x` (the point: x[0] .. x[D-1],
/// doubles in the region's coordinates), the constants D and P, the parameters p[0..P-1] when P > 0,
/// and the `<cmath>` functions for double. It is compiled as it is, with the rights of the program.
struct integrand_source {
  source_kind kind = source_kind::expression;
  std::string text;   ///< the expression, or the body
  int dim = 0;        ///< D, 1..max_dim
  int n_params = 0;   ///< P, 0..max_params: the integrand reads p[0..P-1] (values given for each run)
  std::string label;  ///< the name of the text in messages ("<label>:line:column: error: ..."); empty:
                      ///< "<expr>" or "<body>"

  /// The label of messages (label, or the default of the kind).
  std::string name() const {
    if (!label.empty()) return label;
    return kind == source_kind::expression ? "<expr>" : kind == source_kind::body ? "<body>" : "<" + text + ">";
  }
};

/// An expression of dimension `dim` (see integrand_source).
inline integrand_source expression(std::string text, int dim, int n_params = 0) {
  integrand_source s;
  s.kind = source_kind::expression;
  s.text = std::move(text);
  s.dim = dim;
  s.n_params = n_params;
  return s;
}

/// A function body of dimension `dim` (see integrand_source).
inline integrand_source body(std::string text, int dim, int n_params = 0) {
  integrand_source s = expression(std::move(text), dim, n_params);
  s.kind = source_kind::body;
  return s;
}

/// The suite integrand `name` (f1..f6, fA, fB: suite/registry.hpp) in dimension `dim` as an
/// integrand compiled at run time: its own functor type with its P = number of parameters of the
/// integrand (f1..f6: a and, but f3, u; values given per run as for any parameters; the paper's
/// values are suite::entry::parameters' defaults). The generated unit evaluates
///   with_parameters<integrand_of_parameters, parameters>, integrand_of_parameters(x, q) =
///   `<Desc>::functor{}(x, <Desc>::params{q.p[0], ...})`
/// (fA, fB: `<Desc>::functor{}(x)`), the same arithmetic on the same values as the functor the
/// command compiles ahead of time (cli/dispatch_impl.hpp integrand_at), so the same bits.
/// Checked by check_source (the name, the dimension, P).
inline integrand_source suite_integrand(const std::string& name, int dim, int n_params) {
  integrand_source s;
  s.kind = source_kind::suite;
  s.text = name;
  s.dim = dim;
  s.n_params = n_params;
  return s;
}

/// One error in the user's text: 1-based line and byte column (0: unknown) and the message (the
/// compiler's own words, or the check's).
struct diagnostic {
  int line = 0;
  int column = 0;
  std::string message;
};

/// The user's text does not compile: bad input (the `mcubes` command exits 2). what() is the first
/// error as "<label>:<line>:<column>: error: <message>" (one line); diagnostics() holds every error
/// found in the user's text, compiler_output() the compiler's whole output (empty for the checks
/// made before compiling).
class compile_error : public invalid_input {
 public:
  compile_error(const std::string& label, std::vector<diagnostic> diagnostics, std::string compiler_output = {})
      : invalid_input(format(label, diagnostics)), diagnostics_(std::move(diagnostics)),
        compiler_output_(std::move(compiler_output)) {}
  const std::vector<diagnostic>& diagnostics() const noexcept { return diagnostics_; }
  const std::string& compiler_output() const noexcept { return compiler_output_; }

  /// "<label>:<line>:<column>: error: <message>" for the first diagnostic (without a position for
  /// line 0, without the column for column 0).
  static std::string format(const std::string& label, const std::vector<diagnostic>& d) {
    if (d.empty()) return label + ": error: the text does not compile";
    std::ostringstream s;
    s << label;
    if (d[0].line > 0) s << ":" << d[0].line;
    if (d[0].line > 0 && d[0].column > 0) s << ":" << d[0].column;
    s << ": error: " << d[0].message;
    return s.str();
  }

 private:
  std::vector<diagnostic> diagnostics_;
  std::string compiler_output_;
};

/// The marker of the error attribute of checked_point (jit/entry.hpp): a constant index out of range.
inline constexpr const char* constant_index_marker = "mcubes-jit: constant index out of range";

namespace detail {

/// A token of the user's text, as far as the checks need: identifiers, numbers, punctuation.
struct token {
  enum kind_t { identifier, number, punct, literal } kind = punct;
  std::string text;
  int line = 1, column = 1;
  bool directive = false;  ///< on a preprocessor line (#...): left out of the checks
};

[[noreturn]] inline void fail_at(const integrand_source& src, int line, int column, const std::string& message) {
  throw compile_error(src.name(), {diagnostic{line, column, message}});
}

/// Splits the text into tokens (comments and whitespace dropped, string and character literals as
/// one token). @throws compile_error for an unterminated comment or literal, a NUL byte, or a text
/// that ends in a line continuation.
inline std::vector<token> tokenize(const integrand_source& src) {
  const std::string& t = src.text;
  std::vector<token> out;
  int line = 1, col = 1;
  std::size_t i = 0;
  bool at_line_start = true, in_directive = false;
  auto advance = [&](std::size_t n) {
    for (std::size_t k = 0; k < n && i < t.size(); ++k, ++i) {
      if (t[i] == '\n') {
        ++line;
        col = 1;
        at_line_start = true;
        if (!(i > 0 && t[i - 1] == '\\')) in_directive = false;
      } else {
        ++col;
      }
    }
  };
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  {
    std::size_t end = t.size();
    while (end > 0 && (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\n' || t[end - 1] == '\r')) --end;
    if (end > 0 && t[end - 1] == '\\') {
      int l = 1, c = 1;
      for (std::size_t k = 0; k + 1 < end; ++k) {
        if (t[k] == '\n') ++l, c = 1;
        else ++c;
      }
      fail_at(src, l, c, "the text ends with a line continuation '\\'");
    }
  }
  while (i < t.size()) {
    const char c = t[i];
    if (c == '\0') fail_at(src, line, col, "a NUL byte in the text");
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      advance(1);
      continue;
    }
    if (c == '\\' && i + 1 < t.size() && t[i + 1] == '\n') {  // line continuation
      advance(2);
      continue;
    }
    const int l0 = line, c0 = col;
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      while (i < t.size() && t[i] != '\n') advance(1);
      continue;
    }
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
      const std::size_t close = t.find("*/", i + 2);
      if (close == std::string::npos) fail_at(src, l0, c0, "unterminated comment '/*'");
      advance(close + 2 - i);
      continue;
    }
    if (c == '#' && at_line_start) in_directive = true;
    at_line_start = false;
    token tk;
    tk.line = l0;
    tk.column = c0;
    tk.directive = in_directive;
    if (c == '"' || c == '\'') {
      // a raw string R"d( ... )d" when the previous token is an encoding prefix ending in R, adjacent
      if (c == '"' && !out.empty() && out.back().kind == token::identifier && !out.back().text.empty() &&
          out.back().text.back() == 'R' && out.back().line == line && out.back().column + static_cast<int>(out.back().text.size()) == col) {
        const std::size_t paren = t.find('(', i + 1);
        if (paren == std::string::npos) fail_at(src, l0, c0, "unterminated raw string literal");
        const std::string close = ")" + t.substr(i + 1, paren - i - 1) + "\"";
        const std::size_t end = t.find(close, paren + 1);
        if (end == std::string::npos) fail_at(src, l0, c0, "unterminated raw string literal");
        out.back().kind = token::literal;
        advance(end + close.size() - i);
        continue;
      }
      std::size_t k = i + 1;
      while (k < t.size() && t[k] != c && t[k] != '\n') k += (t[k] == '\\' && k + 1 < t.size()) ? 2 : 1;
      if (k >= t.size() || t[k] != c)
        fail_at(src, l0, c0, c == '"' ? "unterminated string literal" : "unterminated character literal");
      tk.kind = token::literal;
      tk.text = t.substr(i, k + 1 - i);
      advance(k + 1 - i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
      std::size_t k = i + 1;  // a pp-number: digits, letters, '.', digit separators, exponent signs
      while (k < t.size() && (is_ident(t[k]) || t[k] == '.' || t[k] == '\'' ||
                              ((t[k] == '+' || t[k] == '-') && std::strchr("eEpP", t[k - 1]) != nullptr)))
        ++k;
      tk.kind = token::number;
      tk.text = t.substr(i, k - i);
      advance(k - i);
    } else if (is_ident(c)) {
      std::size_t k = i + 1;
      while (k < t.size() && is_ident(t[k])) ++k;
      tk.kind = token::identifier;
      tk.text = t.substr(i, k - i);
      advance(k - i);
    } else {
      std::size_t n = 1;
      if (t.compare(i, 2, "->") == 0 || t.compare(i, 2, "::") == 0) n = 2;
      tk.kind = token::punct;
      tk.text = t.substr(i, n);
      advance(n);
    }
    out.push_back(std::move(tk));
  }
  return out;
}

/// The value of an integer literal (decimal, 0x, 0b, octal; separators and suffixes allowed), or
/// false if `s` is not one (or does not fit in 62 bits).
inline bool integer_literal(const std::string& s, long long& value) {
  std::string d;
  for (char c : s)
    if (c != '\'') d += c;
  while (!d.empty() && std::strchr("uUlLzZ", d.back()) != nullptr) d.pop_back();
  if (d.empty()) return false;
  int base = 10;
  std::size_t at = 0;
  if (d.size() > 1 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) base = 16, at = 2;
  else if (d.size() > 1 && d[0] == '0' && (d[1] == 'b' || d[1] == 'B')) base = 2, at = 2;
  else if (d.size() > 1 && d[0] == '0') base = 8, at = 1;
  if (at >= d.size()) return false;
  long long v = 0;
  for (std::size_t k = at; k < d.size(); ++k) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(d[k])));
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else return false;
    if (digit >= base) return false;
    if (v > (1LL << 58)) return false;
    v = v * base + digit;
  }
  value = v;
  return true;
}

/// Whether the text declares its own `name` (an identifier other than a keyword such as return
/// right before it: "double x[4]").
inline bool declares(const std::vector<token>& tokens, const std::string& name) {
  for (std::size_t k = 1; k < tokens.size(); ++k) {
    const token &prev = tokens[k - 1], &t = tokens[k];
    if (t.kind == token::identifier && t.text == name && prev.kind == token::identifier && prev.text != "return" &&
        prev.text != "case" && prev.text != "throw" && prev.text != "else" && prev.text != "do" && prev.text != "sizeof")
      return true;
  }
  return false;
}

/// `name[k]` at token `at` with an integer literal k, optionally signed ("x[2]", "p[-1]"): not a
/// member (a.name, q->name, ::name).
struct subscript {
  bool negative = false;
  long long value = 0;  ///< |k|
  std::string text;     ///< k as written, with its '-'
};

/// Whether tokens[at] starts `name[k]` with an integer literal k (then `out` describes it).
inline bool literal_subscript(const std::vector<token>& tokens, std::size_t at, const std::string& name, subscript& out) {
  const token& t = tokens[at];
  if (t.directive || t.kind != token::identifier || t.text != name) return false;
  if (at > 0 && (tokens[at - 1].text == "." || tokens[at - 1].text == "->" || tokens[at - 1].text == "::")) return false;
  if (at + 1 >= tokens.size() || tokens[at + 1].text != "[") return false;
  std::size_t n = at + 2;
  out = subscript{};
  if (n < tokens.size() && (tokens[n].text == "-" || tokens[n].text == "+")) out.negative = tokens[n++].text == "-";
  if (!(n + 1 < tokens.size() && tokens[n].kind == token::number && tokens[n + 1].text == "]" &&
        integer_literal(tokens[n].text, out.value)))
    return false;
  out.text = (out.negative ? "-" : "") + tokens[n].text;
  return true;
}


/// The checks of a suite source (suite_integrand): a known name, a dimension of that integrand,
/// P its number of parameters. @throws invalid_input naming what is wrong.
inline void check_suite_source(const integrand_source& src) {
  const suite::entry* e = suite::find(src.text);
  MCUBES_EXPECTS(e != nullptr, "'", src.text, "' is not an integrand of the suite");
  if (e->any_dim)
    MCUBES_EXPECTS(src.dim >= 1 && src.dim <= e->max_dim, "dimension of ", e->name, " must be in [1, ", e->max_dim,
                   "], got ", src.dim);
  else
    MCUBES_EXPECTS(src.dim == e->default_dim, "dimension of ", e->name, " is fixed at ", e->default_dim, ", got ",
                   src.dim);
  MCUBES_EXPECTS(static_cast<std::size_t>(src.n_params) == e->parameters.size(), e->name, " has ",
                 e->parameters.size(), " parameters, the source gives ", src.n_params);
}

}  // namespace detail

/// Where the text reads a parameter p[k] with a non-negative integer literal k: k, and the 1-based
/// line and byte column of the `p`.
struct parameter_use {
  long long index = 0;
  int line = 0, column = 0;
};

/// The parameters the text reads as p[k] with an integer literal k >= 0, in the order of the text
/// (a p the text declares itself, or a member a.p, is not a parameter; an index the compiler alone
/// can know, p[i], is not listed). For a caller that must supply every parameter the text names
/// (the command's --param checks); check_source refuses a k outside 0..P-1.
/// @throws compile_error where the text cannot be split into tokens (as check_source).
inline std::vector<parameter_use> literal_parameter_uses(const integrand_source& src) {
  const std::vector<detail::token> tokens = detail::tokenize(src);
  std::vector<parameter_use> uses;
  if (detail::declares(tokens, "p")) return uses;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    detail::subscript sub;
    if (detail::literal_subscript(tokens, k, "p", sub) && (!sub.negative || sub.value == 0))
      uses.push_back(parameter_use{sub.value, tokens[k].line, tokens[k].column});
  }
  return uses;
}

/// Checks the user's text before it is compiled: dimension and parameter count in range; text not
/// empty; comments, string and character literals terminated; (), [] and {} balanced (preprocessor
/// lines aside); an expression without a ';' outside braces; a body with a `return`; x[k] with an
/// integer literal k (optionally signed) within 0..D-1, and p[k] within 0..P-1.
/// @throws invalid_input for a bad dimension or parameter count; compile_error naming the line and
/// column of the first problem.
inline void check_source(const integrand_source& src) {
  MCUBES_EXPECTS(src.dim >= 1 && src.dim <= max_dim, "the dimension of an integrand compiled at run time must be in 1..",
                 max_dim, ", got ", src.dim);
  MCUBES_EXPECTS(src.n_params >= 0 && src.n_params <= max_params, "the number of parameters must be in 0..", max_params,
                 ", got ", src.n_params);
  if (src.kind == source_kind::suite) {
    detail::check_suite_source(src);
    return;
  }
  const bool expr = src.kind == source_kind::expression;
  const std::vector<detail::token> tokens = detail::tokenize(src);
  bool any = false;
  for (const detail::token& t : tokens) any = any || !t.directive;
  if (!any) detail::fail_at(src, 1, 1, expr ? "the expression is empty" : "the body is empty");

  // A body that declares its own x or p (a type name before it: "double x[4]") reads that one,
  // not the point or the parameters: the literal-index check is left to the compiler there.
  const bool own_x = detail::declares(tokens, "x"), own_p = detail::declares(tokens, "p");
  std::vector<const detail::token*> open;
  bool has_return = false;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const detail::token& t = tokens[k];
    if (t.directive) continue;
    if (t.kind == detail::token::identifier && t.text == "return") has_return = true;
    if (t.kind != detail::token::punct) {
      // x[k] with an integer literal k: within 0..D-1 (x as a member, a.x or p->x, is not the point);
      // p[k] likewise within 0..P-1
      detail::subscript sub;
      if (!own_x && detail::literal_subscript(tokens, k, "x", sub) && (sub.negative ? sub.value != 0 : sub.value >= src.dim)) {
        std::ostringstream m;
        m << "x[" << sub.text << "] is out of range: D = " << src.dim << ", the coordinates are x[0]"
          << (src.dim > 1 ? " .. x[" + std::to_string(src.dim - 1) + "]" : std::string());
        detail::fail_at(src, t.line, t.column, m.str());
      }
      if (!own_p && detail::literal_subscript(tokens, k, "p", sub) &&
          (sub.negative ? sub.value != 0 : sub.value >= src.n_params)) {
        std::ostringstream m;
        m << "p[" << sub.text << "] is out of range: P = " << src.n_params;
        if (src.n_params == 0) m << ", the integrand has no parameters";
        else m << ", the parameters are p[0]" << (src.n_params > 1 ? " .. p[" + std::to_string(src.n_params - 1) + "]" : std::string());
        detail::fail_at(src, t.line, t.column, m.str());
      }
      continue;
    }
    const char c = t.text[0];
    if (t.text.size() == 1 && (c == '(' || c == '[' || c == '{')) {
      open.push_back(&t);
    } else if (t.text.size() == 1 && (c == ')' || c == ']' || c == '}')) {
      const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (open.empty()) detail::fail_at(src, t.line, t.column, std::string("'") + c + "' closes nothing");
      if (open.back()->text[0] != want)
        detail::fail_at(src, t.line, t.column,
                        std::string("'") + c + "' does not match the '" + open.back()->text + "' at line " +
                            std::to_string(open.back()->line) + ", column " + std::to_string(open.back()->column));
      open.pop_back();
    } else if (c == ';' && expr) {
      const bool in_braces =
          std::any_of(open.begin(), open.end(), [](const detail::token* o) { return o->text[0] == '{'; });
      if (!in_braces)
        detail::fail_at(src, t.line, t.column,
                        "';' in an expression: an expression has no statements (give a function body for statements)");
    }
  }
  if (!open.empty())
    detail::fail_at(src, open.back()->line, open.back()->column, "'" + open.back()->text + "' is never closed");
  if (!expr && !has_return) detail::fail_at(src, 1, 1, "the body has no return statement (it must return the integrand's value)");
}

/// Placeholder of the cache key in a generated unit (jit.hpp replaces it once the key is known).
inline constexpr const char* key_placeholder = "@MCUBES_JIT_KEY@";

/// Name of the wrapper in the `#line` directives of a generated unit (diagnostics there are about
/// the code around the user's text).
inline constexpr const char* wrapper_name = "mcubes-jit-wrapper";

/// A C string literal of `s` (quotes and backslashes escaped, control characters as octal).
inline std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// The translation unit of an integrand for `method` (mcubes_jit_method) on `backend`
/// (mcubes_jit_backend; cuda: a .cu file for nvcc), with key_placeholder where the key goes. With
/// P > 0 the integrand is `integrand_of_parameters` (f(x, parameters), the batch's form) and a run
/// evaluates with_parameters<integrand_of_parameters, parameters>, the functor a batch evaluates
/// for each of its integrals (file comment). Method vegas_batch (P >= 1) exports
/// mcubes_jit_run_batch instead of mcubes_jit_run. Method mcubes_jit_method_points (CPU only): the
/// integrand alone (jit/points_entry.hpp: mcubes_jit_points and mcubes_jit_index_at, the same
/// functor; the program runs the method, jit/object_run.hpp). Deterministic: the same arguments
/// give the same text (it is part of the cache key).
inline std::string generate_source(const integrand_source& src, int method, int backend) {
  const bool points = method == mcubes_jit_method_points;
  const bool expr = src.kind == source_kind::expression;
  const bool with_params = src.n_params > 0;
  std::ostringstream s;
  int line = 0;
  auto emit = [&](const std::string& text) {
    s << text << "\n";
    ++line;
  };
  emit("// An integrand compiled at run time by mcubes " MCUBES_VERSION_STRING
       " (include/mcubes/jit/source.hpp). Generated: do not edit.");
  if (points) {
    emit("#include <mcubes/jit/points_entry.hpp>");
  } else {
    emit("#define MCUBES_CHI2_Q_EXTERNAL 1");
    emit("#include <mcubes/jit/entry.hpp>");
  }
  if (src.kind == source_kind::suite) emit("#include <mcubes/suite.hpp>");
  emit("#include <cmath>");
  emit("");
  emit("namespace mcubes_jit_user {");
  emit("using namespace std;");
  emit("constexpr int D = " + std::to_string(src.dim) + ";  // the coordinates are x[0] .. x[D-1]");
  emit("constexpr int P = " + std::to_string(src.n_params) + ";  // the parameters are p[0] .. p[P-1]");
  if (with_params) {
    emit("struct parameters {");
    emit("  double p[P];");
    emit("};");
    emit("struct integrand_of_parameters {");
    emit("  MCUBES_HOST_DEVICE double operator()(const mcubes::point<D>& mcubes_jit_point,");
    emit("                                       const parameters& mcubes_jit_parameters) const {");
    emit("    const mcubes::jit::checked_point<D> x(mcubes_jit_point);");
    emit("    const double (&p)[P] = mcubes_jit_parameters.p;");
    emit("    (void)p;");
  } else {
    emit("struct integrand {");
    emit("  MCUBES_HOST_DEVICE double operator()(const mcubes::point<D>& mcubes_jit_point) const {");
    emit("    const mcubes::jit::checked_point<D> x(mcubes_jit_point);");
  }
  if (src.kind == source_kind::suite) {  // the suite's own functor (suite_integrand; checked by check_source)
    const std::string desc = "mcubes::suite::" + src.text + "_desc";
    std::string call = desc + "::functor{}(mcubes_jit_point";
    if (with_params) {
      call += ", " + desc + "::params{";
      for (int k = 0; k < src.n_params; ++k) call += (k > 0 ? ", p[" : "p[") + std::to_string(k) + "]";
      call += "}";
    }
    emit("    (void)x;");
    emit("    return " + call + ");");
  } else {
    if (expr) emit("    return (");
    emit("#line 1 " + c_string_literal(src.name()));
    s << src.text << "\n";
    line += 1 + static_cast<int>(std::count(src.text.begin(), src.text.end(), '\n'));
    emit("#line " + std::to_string(line + 2) + " " + c_string_literal(wrapper_name));  // the next physical line
    if (expr) emit("    );");
  }
  emit("  }");
  emit("};");
  if (with_params && !points) emit("using integrand = mcubes::with_parameters<integrand_of_parameters, parameters>;");
  emit("}  // namespace mcubes_jit_user");
  emit("");
  if (!points) emit("MCUBES_JIT_DEFINE_CHI2_Q");
  const std::string d = std::to_string(src.dim), b = std::to_string(backend), n = std::to_string(src.n_params);
  const std::string args = d + ", " + std::to_string(method) + ", " + b + ", " + n;
  emit("extern \"C\" MCUBES_JIT_EXPORT const mcubes_jit_object* mcubes_jit_object_info(void) {");
  emit("  static const mcubes_jit_object info = {MCUBES_JIT_ABI_VERSION, " + args + ", \"" + key_placeholder + "\"};");
  emit("  return &info;");
  emit("}");
  if (points) {
    const std::string f = with_params ? "mcubes::jit::detail::bound_parameters<mcubes_jit_user::integrand_of_parameters, "
                                        "mcubes_jit_user::parameters, " + n + ">(params)"
                                      : "mcubes_jit_user::integrand{}";
    emit("extern \"C\" MCUBES_JIT_EXPORT int mcubes_jit_points(const double* params, const double* x, uint64_t n,");
    emit("                                                     double* values, char* message) {");
    if (!with_params) emit("  (void)params;");
    emit("  return mcubes::jit::detail::points_entry<" + d + ">(" + f + ", x, n, values, message);");
    emit("}");
    emit("extern \"C\" MCUBES_JIT_EXPORT int32_t mcubes_jit_index_at(const double* params, const double* x) {");
    if (!with_params) emit("  (void)params;");
    emit("  return mcubes::jit::detail::index_entry<" + d + ">(" + f + ", x);");
    emit("}");
    return s.str();
  }
  if (method == mcubes_jit_vegas_batch) {
    emit("extern \"C\" MCUBES_JIT_EXPORT int mcubes_jit_run_batch(mcubes_jit_batch_call* call) {");
    emit("  return mcubes::jit::detail::run_batch_entry<mcubes_jit_user::integrand_of_parameters, "
         "mcubes_jit_user::parameters, " + d + ", " + b + ", " + n + ">(call);");
  } else {
    emit("extern \"C\" MCUBES_JIT_EXPORT int mcubes_jit_run(mcubes_jit_call* call) {");
    emit("  return mcubes::jit::detail::run_entry<mcubes_jit_user::integrand, " + args + ">(call);");
  }
  emit("}");
  return s.str();
}

namespace detail {

/// Parses "<file>:<line>:<col>: <severity>: <message>" (GCC, Clang) or "<file>(<line>): <severity>[
/// #N-D]: <message>" (nvcc's front end) starting at `at` in `l`, where <file> is `name`.
inline bool parse_location(const std::string& l, std::size_t at, const std::string& name, int& line, int& column,
                           std::string& rest) {
  if (l.compare(at, name.size(), name) != 0) return false;
  std::size_t k = at + name.size();
  auto number = [&](int& v) {
    const std::size_t b = k;
    v = 0;
    while (k < l.size() && std::isdigit(static_cast<unsigned char>(l[k])) && v < 100000000) v = v * 10 + (l[k++] - '0');
    return k > b;
  };
  column = 0;
  if (k < l.size() && l[k] == ':') {
    ++k;
    if (!number(line)) return false;
    if (k < l.size() && l[k] == ':') {
      ++k;
      const std::size_t save = k;
      if (!number(column)) k = save, column = 0;
    }
  } else if (k < l.size() && l[k] == '(') {
    ++k;
    if (!number(line) || k >= l.size() || l[k] != ')') return false;
    ++k;
  } else {
    return false;
  }
  rest = l.substr(k);
  return true;
}

/// "error: m" / " error #20-D: m" / "fatal error: m" -> m; else "".
inline std::string error_message(std::string rest) {
  std::size_t k = 0;
  while (k < rest.size() && (rest[k] == ':' || rest[k] == ' ')) ++k;
  rest = rest.substr(k);
  for (const char* severity : {"fatal error", "error"}) {
    const std::string sv = severity;
    if (rest.compare(0, sv.size(), sv) != 0) continue;
    std::size_t m = sv.size();
    if (m < rest.size() && rest[m] == ' ' && m + 1 < rest.size() && rest[m + 1] == '#') {  // nvcc: error #20-D:
      m = rest.find(':', m);
      if (m == std::string::npos) return {};
    }
    if (m < rest.size() && rest[m] == ':') {
      std::string msg = rest.substr(m + 1);
      while (!msg.empty() && msg.front() == ' ') msg.erase(0, 1);
      while (!msg.empty() && (msg.back() == ' ' || msg.back() == '\r')) msg.pop_back();
      return msg.empty() ? std::string("error") : msg;
    }
  }
  return {};
}

}  // namespace detail

/// The errors of a compiler's output that concern the user's text (the file `label` of the `#line`
/// directives), in order and without repeats: GCC/Clang "label:L:C: error: m", nvcc's
/// "label(L): error: m", and checked_point's constant-index error (reported by GCC inside the
/// wrapper, "inlined from ... at label:L:C"), rewritten as "x[i] with a constant index i outside
/// 0..D-1". `dim` is D (for that message).
inline std::vector<diagnostic> user_diagnostics(const std::string& output, const std::string& label, int dim) {
  std::vector<std::string> lines;
  {
    std::istringstream in(output);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::vector<diagnostic> out;
  auto add = [&](diagnostic d) {
    for (const diagnostic& e : out)
      if (e.line == d.line && e.column == d.column && e.message == d.message) return;
    out.push_back(std::move(d));
  };
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string& l = lines[n];
    int line = 0, column = 0;
    std::string rest;
    if (l.find(constant_index_marker) != std::string::npos) {
      // The user's call site: the first "inlined from ... at label:L:C" of this diagnostic's group.
      diagnostic d;
      d.message = "x[i] with a constant index i outside 0 .. D-1 (D = " + std::to_string(dim) + ")";
      for (std::size_t b = n; b-- > 0;) {
        const std::string& g = lines[b];
        const std::size_t in = g.find("inlined from ");
        if (in == std::string::npos) {
          if (g.find("In ") != std::string::npos || g.find("In member function") != std::string::npos) break;
          continue;
        }
        const std::size_t at = g.find(" at " + label + ":", in);
        if (at != std::string::npos && detail::parse_location(g, at + 4, label, line, column, rest)) {
          d.line = line;
          d.column = column;
        }
      }
      add(d);
      continue;
    }
    std::size_t start = 0;
    while (start < l.size() && l[start] == ' ') ++start;
    if (detail::parse_location(l, start, label, line, column, rest)) {
      const std::string m = detail::error_message(rest);
      if (!m.empty()) add(diagnostic{line, column, m});
    }
  }
  return out;
}

/// The first error of a compiler's output anywhere ("" if none): for a failure outside the user's
/// text (the wrapper, a header, the linker).
inline std::string first_error_line(const std::string& output) {
  std::istringstream in(output);
  for (std::string l; std::getline(in, l);) {
    if (l.find("undefined reference to") != std::string::npos) {
      const std::size_t at = l.find("undefined reference to");
      return l.substr(at) + " (a function declared but not defined?)";
    }
    for (const char* severity : {": fatal error: ", ": error: ", ": error #", " error: "}) {
      const std::size_t at = l.find(severity);
      if (at != std::string::npos) return l;
    }
  }
  return {};
}

}  // namespace mcubes::jit
