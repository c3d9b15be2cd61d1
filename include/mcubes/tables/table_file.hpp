#pragma once
/// @file tables/table_file.hpp
/// Reading the tables that interpolators are built from: text columns (whitespace- or
/// comma-separated) and NumPy .npy arrays, into a table_data (shape + values in C order).
/// Host code only (C++17 standard library and POSIX, no CUDA): it may be included in .cu files.
/// Every failure is a table_file_error whose what() is one line naming the file, and the line and
/// column where they apply.
///
/// Why our own small readers: xtensor's load_npy was not used because it would add two header
/// libraries (xtensor, xtl) to every translation unit that reads a table, nvcc ones included, for
/// about a hundred lines here, and because its errors do not say what is wrong. Numbers are parsed
/// by std::from_chars (locale-independent, exact round trip of 17 significant digits).

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "../error.hpp"

namespace mcubes {

/// A table read from a file: `values` in C order (last index fastest) with its `shape`.
/// read_columns gives shape {rows, columns}; read_npy gives the array's shape (at least 1-D).
struct table_data {
  std::vector<std::size_t> shape;  ///< text files: {rows, columns}; .npy: the array's shape
  std::vector<double> values;      ///< product(shape) values, C order

  /// shape[0] (0 for a default-constructed table).
  std::size_t rows() const { return shape.empty() ? 0 : shape[0]; }
  /// The product of shape[1..]: the number of columns of a 2-D table, 1 for a 1-D array.
  std::size_t columns() const {
    std::size_t c = 1;
    for (std::size_t k = 1; k < shape.size(); ++k) c *= shape[k];
    return c;
  }
  /// Column c (0-based) of a 2-D table, rows() values; for a 1-D array column(0) is the array.
  /// @throws invalid_input if the table is not 1-D or 2-D, if its shape does not hold exactly
  ///         values.size() values (a table_data built by hand), or if c >= columns().
  std::vector<double> column(std::size_t c) const {
    if (shape.empty() || shape.size() > 2)
      detail::throw_invalid("table_data::column: the table has ", shape.size(), " dimensions (1 or 2 needed)");
    const std::size_t nrows = shape[0], ncols = shape.size() == 2 ? shape[1] : 1;
    if ((ncols != 0 && nrows > std::numeric_limits<std::size_t>::max() / ncols) || nrows * ncols != values.size())
      detail::throw_invalid("table_data::column: the shape (", nrows, shape.size() == 2 ? ", " + std::to_string(ncols) : ",",
                            ") does not match the ", values.size(), " values");
    if (c >= ncols)
      detail::throw_invalid("table_data::column: column ", c, " (0-based) of a table with ", ncols, " columns");
    std::vector<double> out(nrows);
    for (std::size_t r = 0; r < nrows; ++r) out[r] = values[r * ncols + c];
    return out;
  }
};

/// A table file that cannot be read or parsed. what() is one line
/// "<path>:<line>:<column>: <what is wrong>" (1-based line and column of the offending field), or
/// "<path>: <what is wrong>" where no position applies (line() and column() are then 0): a file
/// that cannot be opened or read, a text file without data, any .npy error.
class table_file_error : public invalid_input {
 public:
  table_file_error(std::string path, std::size_t line, std::size_t column, const std::string& what)
      : invalid_input(path + (line ? ":" + std::to_string(line) : "") +
                      (line && column ? ":" + std::to_string(column) : "") + ": " + what),
        path_(std::move(path)),
        line_(line),
        column_(column) {}
  /// The file's path, as given to the reader.
  const std::string& path() const noexcept { return path_; }
  /// 1-based line of the error, 0 where none applies.
  std::size_t line() const noexcept { return line_; }
  /// 1-based column (byte) of the first character of the offending field, 0 where none applies.
  std::size_t column() const noexcept { return column_; }

 private:
  std::string path_;
  std::size_t line_, column_;
};

namespace detail {
/// The whole file (POSIX open/read, so that errno names the reason of a failure).
inline std::string table_file_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw table_file_error(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  struct closer { int fd; ~closer() { ::close(fd); } } guard{fd};
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw table_file_error(path, 0, 0, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}
/// `s` cut to `limit` characters ("..." at the end), control characters as \xNN, quoted: a message
/// stays one short line whatever the file holds.
inline std::string table_quote(const std::string& s, std::size_t limit = 40, const char* quote = "'") {
  std::string out = quote;
  for (const char c : s.size() <= limit ? s : s.substr(0, limit - 3) + "...") {
    const unsigned u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? std::string("\\x") + "0123456789abcdef"[u >> 4] + "0123456789abcdef"[u & 15]
                                 : std::string(1, c);
  }
  return out + quote;
}
/// "(3, 2)", "(5,)", "()": a shape or an index as Python writes a tuple.
inline std::string table_tuple(const std::vector<std::size_t>& v) {
  std::string s = "(";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + (v.size() == 1 ? ",)" : ")");
}
enum class table_field_kind { number, empty, not_number, out_of_range, non_finite };
/// One text field: an optional '+', then std::from_chars (general format) consuming it entirely.
inline table_field_kind parse_table_field(const std::string& f, double& v) {
  if (f.empty()) return table_field_kind::empty;
  const char *b = f.data(), *e = f.data() + f.size();
  if (*b == '+' && (++b == e || *b == '+' || *b == '-')) return table_field_kind::not_number;
  const auto r = std::from_chars(b, e, v, std::chars_format::general);
  const bool range = r.ec == std::errc::result_out_of_range;
  if (r.ptr != e || (r.ec != std::errc() && !range)) return table_field_kind::not_number;
  if (range) return table_field_kind::out_of_range;
  return std::isfinite(v) ? table_field_kind::number : table_field_kind::non_finite;
}
/// The value of one .npy element of dtype '<' + `type` (f8, f4, i8, i4) from its bits `w`.
inline double npy_value(const std::string& type, std::uint64_t w) {
  const std::uint32_t w32 = static_cast<std::uint32_t>(w);
  double f8;  // memcpy: the bits as the type's (the host's float and integer byte orders agree)
  float f4;
  std::int64_t i8;
  std::int32_t i4;
  if (type == "f8") return std::memcpy(&f8, &w, 8), f8;
  if (type == "f4") return std::memcpy(&f4, &w32, 4), static_cast<double>(f4);
  if (type == "i8") return std::memcpy(&i8, &w, 8), static_cast<double>(i8);
  return std::memcpy(&i4, &w32, 4), static_cast<double>(i4);
}
struct table_field {
  std::size_t column;  // 1-based column of its first character (of the separator after it if empty)
  std::string text;
};
/// The fields of one line (comment and CR already removed); none for a blank line.
inline std::vector<table_field> split_table_line(const std::string& line) {
  std::vector<table_field> fields;
  const auto blank = [&](std::size_t k) { return k < line.size() && (line[k] == ' ' || line[k] == '\t'); };
  std::size_t i = 0;
  while (blank(i)) ++i;
  while (i < line.size()) {
    const std::size_t start = i;
    while (i < line.size() && line[i] != ',' && !blank(i)) ++i;
    fields.push_back({start + 1, line.substr(start, i - start)});
    while (blank(i)) ++i;
    if (i < line.size() && line[i] == ',') {
      ++i;
      while (blank(i)) ++i;
      if (i == line.size()) fields.push_back({i + 1, ""});  // a trailing comma: an empty last field
    }
  }
  return fields;
}
}  // namespace detail

/// Reads a table of text columns: one row per line, shape {rows, columns}.
/// - Fields are separated by runs of spaces/tabs, or by single commas optionally surrounded by
///   spaces/tabs (both may be mixed); a trailing carriage return (CRLF line ends) and a UTF-8 byte order mark
///   at the start of the file (spreadsheets' "CSV UTF-8") are dropped.
/// - Blank lines and lines whose first non-blank character is '#' are skipped; a '#' after data
///   starts a trailing comment.
/// - The first non-blank, non-comment line may be a header of column names, skipped, only if NONE
///   of its fields is a number (as read below, finite or not, in range or not), starts like one (a
///   digit, '.', '+', '-': "1.5x" or "0x10" is a typo, not a name) or is empty. Otherwise it is
///   data: a line mixing names and numbers is an error naming its first bad field (its first empty
///   field if all the others are names).
/// - Each field is read by std::from_chars (std::chars_format::general) and must be consumed
///   entirely; a leading '+' is accepted (not "+-1"). Values are exact (17 digits round-trip).
/// @throws table_file_error "<path>:<line>:<column>: ..." with the column of the field's first
///         character (the separator after it for an empty field) for: an empty field (",,"), a
///         field that is not a number ("1.5x"), a non-finite value (nan, inf: tables must be
///         finite), a value out of the range of double (from_chars' result_out_of_range, "1e400"),
///         a row with another number of fields than the first data row ("row has 3 fields,
///         expected 2"; column of the first extra field, 1 for a short row); "<path>: ..." for a
///         file that cannot be opened or read (with strerror) or that holds no data row.
inline table_data read_columns(const std::string& path) {
  const std::string text = detail::table_file_bytes(path);
  using kind = detail::table_field_kind;
  table_data t;
  std::size_t ncols = 0, nrows = 0, line_no = 0;
  bool first = true;  // the next non-blank line is the first one: it may be a header
  for (std::size_t pos = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0; pos < text.size();) {  // skip a UTF-8 BOM
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    line = line.substr(0, line.find('#'));
    const std::vector<detail::table_field> fields = detail::split_table_line(line);
    if (fields.empty()) continue;
    const std::size_t n = fields.size();
    std::vector<double> row(n);
    std::size_t bad = n, empty = n, names = 0, empties = 0;  // bad, empty: the first such field
    kind why = kind::number;
    for (std::size_t k = 0; k < n; ++k) {
      const kind r = detail::parse_table_field(fields[k].text, row[k]);
      names += r == kind::not_number && std::strchr("0123456789.+-", fields[k].text[0]) == nullptr;
      empties += r == kind::empty;
      if (r == kind::empty && empty == n) empty = k;
      if (r != kind::number && bad == n) bad = k, why = r;
    }
    const bool header = first && names == n;
    if (first && !header && names + empties == n) bad = empty, why = kind::empty;  // names and empty fields
    first = false;
    if (header) continue;
    if (bad < n) {
      const std::string f = detail::table_quote(fields[bad].text);
      throw table_file_error(path, line_no, fields[bad].column,
                             why == kind::empty          ? "empty field"
                             : why == kind::not_number   ? f + " is not a number"
                             : why == kind::out_of_range ? f + " is out of the range of double"
                                                         : f + " is not finite (tables must be finite)");
    }
    if (ncols == 0) ncols = n;
    if (n != ncols)
      throw table_file_error(path, line_no, n > ncols ? fields[ncols].column : 1,
                             "row has " + std::to_string(n) + " fields, expected " + std::to_string(ncols));
    t.values.insert(t.values.end(), row.begin(), row.end());
    ++nrows;
  }
  if (nrows == 0) throw table_file_error(path, 0, 0, "no data (only blank lines, comments or a header)");
  t.shape = {nrows, ncols};
  return t;
}

/// Reads a NumPy .npy file (format versions 1.0, 2.0 and 3.0): the magic "\x93NUMPY", two version
/// bytes, the header length (little-endian uint16 for 1.0, uint32 for 2.0/3.0), the header (a
/// Python dict literal such as "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }",
/// keys in any order, padded with spaces and ending with '\n'), then the data. The dtype must be
/// '<f8', '<f4', '<i4' or '<i8' (little-endian; any host byte order), converted to double (i8
/// exactly up to 2^53); 'fortran_order': True arrays are transposed to C order. Bytes after the
/// data are ignored, as np.load does. (Our own parser, not xtensor's load_npy: see the file comment.)
/// @throws table_file_error "<path>: ..." for: a file that cannot be opened or read, a bad magic
///         string, another format version, a file shorter than its header says, a malformed header
///         (a missing or unknown key), another dtype (big-endian '>f8', object, complex '<c16',
///         structured), a 0-d array (shape ()) or one without elements, a data section shorter
///         than the shape needs, a non-finite element ("element 12 (index (3, 0)) is not finite:
///         nan", the index in C order, as in the returned table).
inline table_data read_npy(const std::string& path) {
  const std::string b = detail::table_file_bytes(path);
  const auto fail = [&](const std::string& why) { return table_file_error(path, 0, 0, why); };
  const auto byte = [&](std::size_t k) { return static_cast<std::uint64_t>(static_cast<unsigned char>(b[k])); };
  if (b.size() < 8 || b.compare(0, 6, "\x93NUMPY") != 0) throw fail("not a .npy file (no \\x93NUMPY magic string)");
  const std::uint64_t major = byte(6), minor = byte(7);
  if (major < 1 || major > 3 || minor != 0)
    throw fail("format version " + std::to_string(major) + "." + std::to_string(minor) + " (1.0, 2.0, 3.0 are read)");
  const std::size_t pre = major == 1 ? 10 : 12;  // magic, version, header length
  if (b.size() < pre) throw fail("the file ends inside its header");
  const std::uint64_t hlen = byte(8) | byte(9) << 8 | (major == 1 ? 0 : byte(10) << 16 | byte(11) << 24);
  if (hlen > b.size() - pre)
    throw fail("the header is " + std::to_string(hlen) + " bytes but the file ends " + std::to_string(b.size() - pre) +
               " bytes after its start");
  const std::string h = b.substr(pre, hlen);
  std::size_t i = 0;  // the header's parser: position, then helpers
  const auto at = [&](char c) { return i < h.size() && h[i] == c; };
  const auto skip = [&] { while (at(' ') || at('\t')) ++i; };
  const auto bad = [&](const std::string& what) {
    return fail("malformed header (" + what + " expected at byte " + std::to_string(i) +
                "): " + detail::table_quote(h.substr(0, h.find_last_not_of(" \n") + 1), 100, "\""));
  };
  const auto expect = [&](char c) { if (!at(c)) throw bad(std::string("'") + c + "'"); ++i; };
  const auto literal = [&] {  // a quoted string, without escapes
    const char q = at('"') ? '"' : '\'';
    if (!at(q)) throw bad("a quoted string");
    ++i;
    const std::size_t close = h.find(q, i);
    if (close == std::string::npos) throw bad("a closing quote");
    const std::size_t open = i;
    i = close + 1;
    return h.substr(open, close - open);
  };
  std::string descr;
  bool fortran = false, seen[3] = {false, false, false};
  std::vector<std::size_t> shape;
  skip();
  expect('{');
  for (skip(); !at('}'); skip()) {
    const std::string key = literal();
    skip();
    expect(':');
    skip();
    if (key == "descr") {
      if (at('[')) throw fail("structured dtype (a list of fields): tables are '<f8', '<f4', '<i4' or '<i8'");
      descr = literal(), seen[0] = true;
    } else if (key == "fortran_order") {
      fortran = h.compare(i, 4, "True") == 0;
      if (!fortran && h.compare(i, 5, "False") != 0) throw bad("True or False");
      i += fortran ? 4 : 5, seen[1] = true;
    } else if (key == "shape") {
      for (expect('('), skip(); !at(')'); skip()) {
        std::size_t n = 0;
        const auto r = std::from_chars(h.data() + i, h.data() + h.size(), n);
        if (r.ec != std::errc()) throw bad("a dimension");
        shape.push_back(n), i = static_cast<std::size_t>(r.ptr - h.data());
        skip();
        if (!at(')')) expect(',');
      }
      ++i, seen[2] = true;
    } else {
      throw fail("unexpected key " + detail::table_quote(key) + " in the header (descr, fortran_order, shape)");
    }
    skip();
    if (!at('}')) expect(',');
  }
  for (++i; at(' ') || at('\t');) ++i;
  if (i + 1 != h.size() || !at('\n')) throw bad("the header's end, '\\n'");
  const char* keys[] = {"descr", "fortran_order", "shape"};
  for (int k = 0; k < 3; ++k)
    if (!seen[k]) throw fail(std::string("the header has no '") + keys[k] + "'");
  const std::string type = descr.size() == 3 ? descr.substr(1) : "";
  const std::size_t width = type == "f8" || type == "i8" ? 8 : type == "f4" || type == "i4" ? 4 : 0;
  if (!width || descr[0] != '<')  // '>': big-endian; '|O', '<c16', '<f2', '<u4', ...: not tables
    throw fail("dtype " + detail::table_quote(descr) +
               (width && descr[0] == '>' ? " is big-endian" : " is not supported") +
               ": tables are '<f8', '<f4', '<i4' or '<i8'");
  if (shape.empty()) throw fail("a 0-d array (shape ()) is not a table");
  std::size_t n = 1;
  for (const std::size_t e : shape) {
    if (e != 0 && n > SIZE_MAX / width / e) throw fail("the shape " + detail::table_tuple(shape) + " is too large");
    n *= e;
  }
  if (n == 0) throw fail("the array has no elements (shape " + detail::table_tuple(shape) + ")");
  const std::size_t data = pre + hlen;
  if (b.size() - data < n * width)
    throw fail("truncated data: shape " + detail::table_tuple(shape) + " of '" + descr + "' needs " +
               std::to_string(n * width) + " bytes, the file has " + std::to_string(b.size() - data));
  const std::size_t d = shape.size();
  std::vector<std::size_t> stride(d, 1), idx(d, 0);  // C-order strides; idx: Fortran-order odometer
  for (std::size_t a = d - 1; a > 0; --a) stride[a - 1] = stride[a] * shape[a];
  table_data t;
  t.shape = shape;
  t.values.resize(n);
  for (std::size_t k = 0, c = 0; k < n; ++k) {  // k: index in the file; c: its index in C order
    std::uint64_t w = 0;  // the element's bytes, little-endian, as an integer (any host byte order)
    for (std::size_t j = width; j-- > 0;) w = w << 8 | byte(data + k * width + j);
    t.values[fortran ? c : k] = detail::npy_value(type, w);
    for (std::size_t a = 0; fortran && a < d; ++a) {  // the next Fortran-order index: axis 0 fastest
      c += stride[a];
      if (++idx[a] < shape[a]) break;
      c -= idx[a] * stride[a], idx[a] = 0;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (std::isfinite(t.values[k])) continue;
    for (std::size_t a = 0; a < d; ++a) idx[a] = k / stride[a] % shape[a];
    throw fail("element " + std::to_string(k) + " (index " + detail::table_tuple(idx) + ") is not finite: " +
               (std::isnan(t.values[k]) ? "nan" : t.values[k] > 0 ? "inf" : "-inf"));
  }
  return t;
}

/// read_npy for a path ending in ".npy" (case-sensitive), read_columns otherwise.
/// @throws table_file_error as the reader chosen does.
inline table_data read_table(const std::string& path) {
  const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  return npy ? read_npy(path) : read_columns(path);
}

}  // namespace mcubes
