#pragma once
/// @file tables/table_file.hpp
/// Reading tables from files: text columns (whitespace- or comma-separated) and NumPy .npy arrays.
/// Host code only (no CUDA); errors are table_file_error, one line naming the file, and the line
/// and column where they apply.
///
/// Why our own small readers: Debian's libcsv does not collapse runs of blanks and reports no
/// positions for bad numbers; xtensor's load_npy (libxtensor-dev) would add two header libraries
/// (xtensor, xtl) to every translation unit that reads a table, nvcc ones included, for about a
/// hundred lines, and its errors do not say what is wrong. Numbers are parsed by std::from_chars.

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "../error.hpp"

namespace mcubes {

/// A table read from a file: `values` in C order (last index fastest) with its `shape`; text
/// files give {rows, columns}.
struct table_data {
  std::vector<std::size_t> shape;
  std::vector<double> values;
  std::size_t rows() const { return shape.empty() ? 0 : shape[0]; }
  /// Product of shape[1..] (1 for a 1-D array).
  std::size_t columns() const {
    std::size_t c = 1;
    for (std::size_t k = 1; k < shape.size(); ++k) c *= shape[k];
    return c;
  }
  /// Column c of a 1-D or 2-D table (a 1-D array is one column).
  /// @throws invalid_input if c >= columns() or the table has more than 2 dimensions.
  std::vector<double> column(std::size_t c) const {
    if (shape.size() > 2) detail::throw_invalid("table_data::column: the table has ", shape.size(), " dimensions");
    if (c >= columns()) detail::throw_invalid("table_data::column: column ", c, " of a table with ", columns(), " columns");
    std::vector<double> out(rows());
    for (std::size_t r = 0; r < rows(); ++r) out[r] = values[r * columns() + c];
    return out;
  }
};

/// A file that cannot be read or parsed; what() is "<path>:<line>:<column>: <reason>" (1-based),
/// or "<path>: <reason>" where no position applies (line() and column() then 0).
class table_file_error : public invalid_input {
 public:
  table_file_error(const std::string& path, std::size_t line, std::size_t column, const std::string& reason)
      : invalid_input(path + (line ? ":" + std::to_string(line) + ":" + std::to_string(column) : std::string()) + ": " +
                      reason),
        path_(path),
        line_(line),
        column_(column) {}
  const std::string& path() const noexcept { return path_; }
  std::size_t line() const noexcept { return line_; }
  std::size_t column() const noexcept { return column_; }

 private:
  std::string path_;
  std::size_t line_, column_;
};

namespace detail {
inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw table_file_error(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace detail

/// Text columns: one row per line; fields separated by runs of blanks (spaces, tabs) or by single
/// commas with optional blanks around them; CRLF accepted. Blank lines and lines starting with '#'
/// are skipped, and '#' after data starts a comment. The first non-comment line may be a header
/// of column names if none of its fields is a number. Fields are parsed by std::from_chars
/// (general format; a leading '+' allowed) and must be consumed entirely.
/// @throws table_file_error naming line and column (of the field's first character) for an empty
///         field, a field that is not a number, a non-finite value (nan, inf), a value out of the
///         range of double, a row with another number of fields than the first; naming the file
///         if it cannot be opened or holds no data.
inline table_data read_columns(const std::string& path) {
  const std::string text = detail::read_whole_file(path);
  table_data t;
  std::size_t ncols = 0, nrows = 0, line_no = 0, pos = 0;
  bool header_allowed = true;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    struct field { std::size_t column; std::string text; };
    std::vector<field> fields;
    std::size_t i = 0;
    const auto blank = [&](std::size_t k) { return line[k] == ' ' || line[k] == '\t'; };
    while (i < line.size() && blank(i)) ++i;
    if (i == line.size()) continue;  // blank or comment line
    while (true) {
      const std::size_t start = i;
      while (i < line.size() && !blank(i) && line[i] != ',') ++i;
      fields.push_back({start + 1, line.substr(start, i - start)});
      while (i < line.size() && blank(i)) ++i;
      if (i == line.size()) break;
      if (line[i] == ',') {
        ++i;
        while (i < line.size() && blank(i)) ++i;
        if (i == line.size()) { fields.push_back({i + 1, ""}); break; }
      }
    }
    std::vector<double> row;
    std::size_t bad = 0;  // 1 + index of the first field that is not a number
    std::string reason;
    for (std::size_t k = 0; k < fields.size(); ++k) {
      const std::string& f = fields[k].text;
      double v = 0;
      const char* b = f.data() + (!f.empty() && f[0] == '+' ? 1 : 0);
      const auto r = std::from_chars(b, f.data() + f.size(), v, std::chars_format::general);
      if (f.empty()) reason = "empty field";
      else if (r.ec == std::errc::result_out_of_range) reason = "'" + f + "' is out of the range of double";
      else if (r.ec != std::errc() || r.ptr != f.data() + f.size()) reason = "'" + f + "' is not a number";
      else if (!std::isfinite(v)) reason = "'" + f + "' is not finite (tables must be finite)";
      if (!reason.empty()) { bad = k + 1; break; }
      row.push_back(v);
    }
    if (bad) {
      bool all_names = header_allowed;  // a header: no field parses as a number
      for (const field& f : fields) {
        double v;
        const char* b = f.text.data() + (!f.text.empty() && f.text[0] == '+' ? 1 : 0);
        const auto r = std::from_chars(b, f.text.data() + f.text.size(), v, std::chars_format::general);
        if (f.text.empty() || r.ec == std::errc() || r.ec == std::errc::result_out_of_range) all_names = false;
      }
      header_allowed = false;
      if (all_names) continue;
      throw table_file_error(path, line_no, fields[bad - 1].column, reason);
    }
    header_allowed = false;
    if (ncols == 0) ncols = row.size();
    if (row.size() != ncols)
      throw table_file_error(path, line_no, 1,
                             "row has " + std::to_string(row.size()) + " fields, expected " + std::to_string(ncols));
    t.values.insert(t.values.end(), row.begin(), row.end());
    ++nrows;
  }
  if (nrows == 0) throw table_file_error(path, 0, 0, "no data rows");
  t.shape = {nrows, ncols};
  return t;
}

/// A NumPy .npy file (format versions 1.0, 2.0, 3.0) of dtype '<f8', '<f4', '<i4' or '<i8' (or
/// '|' / '=' byte-order marks on a little-endian machine), in C or Fortran order, read into a
/// table_data in C order (Fortran-ordered arrays are transposed).
/// @throws table_file_error naming the file for a bad magic string or header, another dtype
///         (big-endian, complex, object, structured), a 0-d array, a data section shorter than the
///         shape says, or a non-finite element (with its flat C-order index).
inline table_data read_npy(const std::string& path) {
  const std::string bytes = detail::read_whole_file(path);
  const auto fail = [&](const std::string& why) { return table_file_error(path, 0, 0, why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw fail("not a NumPy .npy file (bad magic string)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  const auto byte = [&](std::size_t k) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[k])); };
  if (major == 1) header_len = byte(8) | byte(9) << 8, offset = 10;
  else if ((major == 2 || major == 3) && bytes.size() >= 12)
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24, offset = 12;
  else throw fail(".npy format version " + std::to_string(major) + " is not supported (1, 2 or 3)");
  if (bytes.size() < offset + header_len) throw fail("the file ends inside its header");
  const std::string h = bytes.substr(offset, header_len);
  const auto value_of = [&](const std::string& key) {
    const std::size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) throw fail("the header has no '" + key + "'");
    std::size_t v = h.find(':', k);
    if (v == std::string::npos) throw fail("bad header");
    ++v;
    while (v < h.size() && h[v] == ' ') ++v;
    return v;
  };
  std::size_t d = value_of("descr");
  if (d >= h.size() || h[d] != '\'') throw fail("unsupported dtype (structured arrays are not tables)");
  const std::string descr = h.substr(d + 1, h.find('\'', d + 1) - d - 1);
  const std::size_t fo = value_of("fortran_order");
  const bool fortran = h.compare(fo, 4, "True") == 0;
  if (!fortran && h.compare(fo, 5, "False") != 0) throw fail("bad 'fortran_order' in the header");
  std::size_t s = value_of("shape");
  if (s >= h.size() || h[s] != '(') throw fail("bad 'shape' in the header");
  std::vector<std::size_t> shape;
  for (++s; s < h.size() && h[s] != ')';) {
    if (h[s] == ' ' || h[s] == ',') { ++s; continue; }
    std::size_t v = 0;
    const auto r = std::from_chars(h.data() + s, h.data() + h.size(), v);
    if (r.ec != std::errc()) throw fail("bad 'shape' in the header");
    shape.push_back(v);
    s = static_cast<std::size_t>(r.ptr - h.data());
  }
  if (shape.empty()) throw fail("a 0-d array is not a table");
  const char order = descr.empty() ? '?' : descr[0];
  const std::string kind = descr.size() > 1 ? descr.substr(1) : "";
  std::size_t width = 0;
  if (kind == "f8" || kind == "i8") width = 8;
  else if (kind == "f4" || kind == "i4") width = 4;
  if (width == 0 || (order != '<' && order != '|' && order != '='))
    throw fail("dtype '" + descr + "' is not supported (little-endian f8, f4, i4 or i8)");
  std::size_t n = 1;
  for (std::size_t e : shape) n *= e;
  const std::size_t data = offset + header_len;
  if (bytes.size() - data < n * width)
    throw fail("the data section has " + std::to_string(bytes.size() - data) + " bytes, the shape needs " +
               std::to_string(n * width));
  std::vector<double> flat(n);
  for (std::size_t k = 0; k < n; ++k) {
    const char* p = bytes.data() + data + k * width;
    if (kind == "f8") { double v; std::memcpy(&v, p, 8); flat[k] = v; }
    else if (kind == "f4") { float v; std::memcpy(&v, p, 4); flat[k] = v; }
    else if (kind == "i8") { std::int64_t v; std::memcpy(&v, p, 8); flat[k] = static_cast<double>(v); }
    else { std::int32_t v; std::memcpy(&v, p, 4); flat[k] = v; }
  }
  table_data t;
  t.shape = shape;
  t.values.resize(n);
  for (std::size_t k = 0; k < n; ++k) {  // k: C-order index; Fortran order reads the transposed index
    std::size_t src = k;
    if (fortran) {
      std::size_t rest = k, stride = 1;
      src = 0;
      std::vector<std::size_t> idx(shape.size());
      for (std::size_t a = shape.size(); a-- > 0;) idx[a] = rest % shape[a], rest /= shape[a];
      for (std::size_t a = 0; a < shape.size(); ++a) src += idx[a] * stride, stride *= shape[a];
    }
    t.values[k] = flat[src];
    if (!std::isfinite(t.values[k])) throw fail("element " + std::to_string(k) + " (C order) is not finite");
  }
  return t;
}

/// read_npy for a path ending in ".npy", read_columns otherwise.
inline table_data read_table(const std::string& path) {
  const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  return npy ? read_npy(path) : read_columns(path);
}

}  // namespace mcubes
