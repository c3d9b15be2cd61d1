// Table files (tables/table_file.hpp): text columns and NumPy .npy files written here byte by byte,
// read back value for value (bit for bit), and every error with its exact file, line, column and message.
#include <mcubes/tables/table_file.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "support/bits.hpp"

namespace {

using mcubes::read_columns;
using mcubes::read_npy;
using mcubes::read_table;
using mcubes::table_data;
using mcubes::table_file_error;

static_assert(std::is_base_of_v<mcubes::invalid_input, table_file_error>, "table_file_error is an invalid_input");

// A directory of this process (mkdtemp), removed at exit.
struct temp_dir {
  std::string path;
  temp_dir() {
    std::string t = ::testing::TempDir() + "/mcubes_table_file_XXXXXX";
    if (!mkdtemp(t.data())) std::abort();
    path = t;
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};
const std::string& dir() {
  static const temp_dir d;
  return d.path;
}

std::string write_file(const std::string& name, const std::string& content) {
  const std::string path = dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Calls read(path) and checks the table_file_error: path(), line(), column() and the whole what(),
// "<path>:<line>:<column>: <reason>" (or "<path>: <reason>" for line 0).
template <class Read>
void expect_error(Read read, const std::string& path, std::size_t line, std::size_t column, const std::string& reason) {
  SCOPED_TRACE(path);
  try {
    read(path);
    ADD_FAILURE() << "no table_file_error";
  } catch (const table_file_error& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.column(), column);
    const std::string where =
        line ? path + ":" + std::to_string(line) + ":" + std::to_string(column) + ":" : path + ":";
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(where, 0), 0u) << what;
    EXPECT_EQ(what, where + " " + reason);
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}
void columns_error(const std::string& name, const std::string& text, std::size_t line, std::size_t column,
                   const std::string& reason) {
  expect_error(read_columns, write_file(name, text), line, column, reason);
}

// ---------------------------------------------------------------------------------------------
// Text columns

TEST(ReadColumns, WhitespaceCommasTabsAndMixed) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"spaces.txt", "1 2 3\n4   5  6\n"},
      {"commas.csv", "1,2,3\n4,5,6\n"},
      {"mixed.txt", "  1 , 2\t,3\n4,5 6  \n"},
      {"tabs.txt", "1\t2\t\t3\n\t4\t5\t6\t\n"},
      {"crlf.txt", "1 2 3\r\n4,5,6\r\n"},
      {"no_final_newline.txt", "1 2 3\n4 5 6"},
      {"bom.csv", "\xEF\xBB\xBF" "1,2,3\n4,5,6\n"},
  };
  for (const auto& [name, text] : files) {
    SCOPED_TRACE(name);
    const table_data t = read_columns(write_file(name, text));
    EXPECT_EQ(t.shape, (std::vector<std::size_t>{2, 3}));
    EXPECT_EQ(t.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(t.rows(), 2u);
    EXPECT_EQ(t.columns(), 3u);
  }
}

TEST(ReadColumns, CommentsBlankLinesAndHeader) {
  const table_data t = read_columns(write_file("comments.txt",
                                               "# a comment\n\n   \t\n  # an indented comment\r\n"
                                               "z, D(z)\r\n"
                                               "0.5 1.5 # trailing comment\n\n3,4#x\n# end\n"));
  EXPECT_EQ(t.shape, (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{0.5, 1.5, 3, 4}));
  const table_data h = read_columns(write_file("header_first.txt", "y S\n1 2\n"));
  EXPECT_EQ(h.shape, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(h.values, (std::vector<double>{1, 2}));
  // Names that begin like "nan" or "inf" are names; the header's field count is not checked.
  const table_data n = read_columns(write_file("header_nan_inf.csv", "nanoseconds,infected,x_1\n1,2\n"));
  EXPECT_EQ(n.shape, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(n.values, (std::vector<double>{1, 2}));
}

TEST(ReadColumns, SignsAndExponents) {
  const table_data t = read_columns(write_file("signs.txt", "+1.5 -2.5e-3 +1E+2 -0 .5 5. 1e-2 -7E2\n"));
  EXPECT_EQ(t.values, (std::vector<double>{1.5, -2.5e-3, 100, 0, 0.5, 5, 0.01, -700}));
  EXPECT_TRUE(std::signbit(t.values[3]));
}

TEST(ReadColumns, SeventeenDigitsRoundTripBitForBit) {
  const std::vector<double> v = {0.1, 1.0 / 3, std::acos(-1.0), -2.0 / 7, 1e-300, 6.02214076e23,
                                 4.9406564584124654e-324, std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::min(), std::nextafter(1.0, 2.0)};
  std::ostringstream s;
  s.precision(17);
  for (std::size_t k = 0; k < v.size(); ++k) s << v[k] << (k % 2 ? "\n" : ", ");
  const table_data t = read_columns(write_file("digits.csv", s.str()));
  ASSERT_EQ(t.shape, (std::vector<std::size_t>{5, 2}));
  for (std::size_t k = 0; k < v.size(); ++k) EXPECT_EQ(mcubes_test::bits(v[k]), mcubes_test::bits(t.values[k])) << "value " << k;
}

TEST(ReadColumns, Column) {
  const table_data t = read_columns(write_file("column.txt", "1 10\n2 20\n3 30\n"));
  EXPECT_EQ(t.column(0), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(t.column(1), (std::vector<double>{10, 20, 30}));
  EXPECT_THROW(t.column(2), mcubes::invalid_input);
  const table_data one = read_columns(write_file("one_column.txt", "4\n5\n"));
  EXPECT_EQ(one.shape, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(one.column(0), (std::vector<double>{4, 5}));
  // A table_data built by hand whose shape does not match its values is refused, not read past its end.
  table_data bad;
  bad.shape = {3, 2};
  bad.values = {1, 2, 3};
  EXPECT_THROW(bad.column(1), mcubes::invalid_input);
  bad.shape = {std::size_t(1) << 32, std::size_t(1) << 32};  // the product wraps to 0
  bad.values = {};
  EXPECT_THROW(bad.column(0), mcubes::invalid_input);
  bad.shape = {4};
  bad.values = {1, 2};
  try {
    bad.column(0);
    ADD_FAILURE() << "no exception";
  } catch (const mcubes::invalid_input& e) {
    EXPECT_EQ(std::string(e.what()), "table_data::column: the shape (4,) does not match the 2 values");
  }
}

TEST(ReadColumns, FieldErrorsNameLineAndColumn) {
  columns_error("empty.csv", "1,2,3\n4,,6\n", 2, 3, "empty field");
  columns_error("empty_spaced.csv", "1 , , 2\n", 1, 5, "empty field");
  columns_error("leading_comma.csv", ",1\n", 1, 1, "empty field");
  columns_error("trailing_comma.csv", "1,2,\n", 1, 5, "empty field");
  columns_error("not_number.txt", "1 2\n3   1.5x\n", 2, 5, "'1.5x' is not a number");
  columns_error("plus_minus.txt", "1 +-1\n", 1, 3, "'+-1' is not a number");
  columns_error("plus_alone.txt", "1 +\n", 1, 3, "'+' is not a number");
  columns_error("hex.txt", "1\n0x10\n", 2, 1, "'0x10' is not a number");
  columns_error("nan.txt", "1 2\n3 nan\n", 2, 3, "'nan' is not finite (tables must be finite)");
  columns_error("inf.csv", "1,2\n-inf,3\n", 2, 1, "'-inf' is not finite (tables must be finite)");
  columns_error("range.txt", "1 2\n3 1e400\n", 2, 3, "'1e400' is out of the range of double");
  columns_error("range_neg.txt", "-1e999 2\n", 1, 1, "'-1e999' is out of the range of double");
  columns_error("long_field.txt", "1 " + std::string(50, 'x') + "\n", 1, 3,
                "'" + std::string(37, 'x') + "...' is not a number");
  // Lines are counted with blank and comment lines (CRLF included); columns are 1-based bytes.
  columns_error("crlf_error.txt", "# c\r\n\r\n1 2\r\n3\tx\r\n", 4, 3, "'x' is not a number");
  // Control characters in a field are written as \xNN: the message stays one line.
  columns_error("control.txt", "1 a\rb\n", 1, 3, "'a\\x0db' is not a number");
  // Columns after a UTF-8 byte order mark are counted from its end.
  columns_error("bom_error.csv", "\xEF\xBB\xBF" "1,y\n", 1, 3, "'y' is not a number");
}

TEST(ReadColumns, RowLengthErrors) {
  columns_error("long_row.txt", "1 2\n3 4 5\n", 2, 5, "row has 3 fields, expected 2");
  columns_error("short_row.csv", "# h\n1,2,3\n4,5\n", 3, 1, "row has 2 fields, expected 3");
  columns_error("long_after_header.txt", "a b\n1 2\n\n3, 4 ,5\n", 4, 7, "row has 3 fields, expected 2");
}

TEST(ReadColumns, HeaderRules) {
  // A first line mixing names and numbers: the first field that is not a number.
  columns_error("mixed_header.txt", "x 1\n2 3\n", 1, 1, "'x' is not a number");
  columns_error("mixed_header2.txt", "1 y\n2 3\n", 1, 3, "'y' is not a number");
  // Non-finite and out-of-range fields count as numbers: not a header.
  columns_error("nan_header.txt", "x nan\n2 3\n", 1, 1, "'x' is not a number");
  // Fields that start like numbers are typos, not names: the line is data.
  columns_error("typo_line.txt", "1.5x 2.0x\n1 2\n", 1, 1, "'1.5x' is not a number");
  columns_error("hex_line.txt", "0x10\n", 1, 1, "'0x10' is not a number");
  columns_error("minus_line.txt", "a -b\n", 1, 1, "'a' is not a number");
  // Names and empty fields: not a header; the error names the first empty field.
  columns_error("empty_header.csv", "a,,b\n1,2,3\n", 1, 3, "empty field");
  columns_error("empty_header2.csv", "a,b,\n1,2,3\n", 1, 5, "empty field");
  columns_error("empty_and_number.csv", "a,,1\n1,2,3\n", 1, 1, "'a' is not a number");
  // Only the first non-comment line may be a header.
  columns_error("two_headers.txt", "a b\nc d\n1 2\n", 2, 1, "'c' is not a number");
  columns_error("late_header.txt", "# c\n1 2\nx y\n", 3, 1, "'x' is not a number");
}

TEST(ReadColumns, FileErrors) {
  const std::string none = "no data (only blank lines, comments or a header)";
  columns_error("empty_file.txt", "", 0, 0, none);
  columns_error("comments_only.txt", "# a\n\n  # b\n", 0, 0, none);
  columns_error("header_only.txt", "# a\nx y\n", 0, 0, none);
  const std::string missing = dir() + "/does_not_exist.txt";
  expect_error(read_columns, missing, 0, 0, "cannot open: No such file or directory");
  expect_error(read_columns, dir(), 0, 0, "cannot read: Is a directory");
}

// ---------------------------------------------------------------------------------------------
// NumPy .npy

// A .npy file built byte by byte: magic, version (major.0), little-endian header length (uint16 for
// 1.0, uint32 for 2.0 and 3.0), the header padded with spaces so that magic + version + length +
// header is a multiple of 64 bytes, ending in '\n', then the data.
std::string npy(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(major) + char(0);
  for (std::size_t k = 0, n = header.size(); k < pre - 8; ++k) out += char((n >> (8 * k)) & 0xff);
  EXPECT_EQ((out.size() + header.size()) % 64, 0u);
  return out + header + data;
}
std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}
// Little-endian bytes of each value, as the dtype T (whatever the host's byte order).
template <class T, class U>
std::string le(const std::vector<U>& v) {
  std::string out;
  for (const U x : v) {
    const T y = static_cast<T>(x);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &y, sizeof y);
    for (std::size_t k = 0; k < sizeof y; ++k) out += char((bits >> (8 * k)) & 0xff);
  }
  return out;
}
std::string npy_file(const std::string& name, const std::string& content) { return write_file(name + ".npy", content); }
void npy_error(const std::string& name, const std::string& content, const std::string& reason) {
  expect_error(read_npy, npy_file(name, content), 0, 0, reason);
}

TEST(ReadNpy, DtypesInCOrder) {
  const std::vector<double> d = {0.1, -2.5, 1e300, 1.0 / 3, -0.0, 6.0};
  const table_data f8 = read_npy(npy_file("f8", npy(1, dict("<f8", false, "(2, 3)"), le<double>(d))));
  EXPECT_EQ(f8.shape, (std::vector<std::size_t>{2, 3}));
  ASSERT_EQ(f8.values.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(mcubes_test::bits(f8.values[k]), mcubes_test::bits(d[k])) << k;
  EXPECT_EQ(f8.column(1), (std::vector<double>{-2.5, -0.0}));

  const std::vector<float> f = {0.1f, -1.5f, 3e38f};
  const table_data f4 = read_npy(npy_file("f4", npy(1, dict("<f4", false, "(3,)"), le<float>(f))));
  EXPECT_EQ(f4.shape, (std::vector<std::size_t>{3}));
  EXPECT_EQ(f4.values, (std::vector<double>{double(0.1f), -1.5, double(3e38f)}));

  const std::vector<std::int32_t> i4 = {-7, 2147483647, -2147483647 - 1, 0};
  const table_data t4 = read_npy(npy_file("i4", npy(1, dict("<i4", false, "(2, 2)"), le<std::int32_t>(i4))));
  EXPECT_EQ(t4.values, (std::vector<double>{-7, 2147483647.0, -2147483648.0, 0}));

  const std::vector<std::int64_t> i8 = {-(std::int64_t(1) << 53), 123456789012, 1, -1};
  const table_data t8 = read_npy(npy_file("i8", npy(1, dict("<i8", false, "(4, 1)"), le<std::int64_t>(i8))));
  EXPECT_EQ(t8.shape, (std::vector<std::size_t>{4, 1}));
  EXPECT_EQ(t8.values, (std::vector<double>{-9007199254740992.0, 123456789012.0, 1, -1}));
}

TEST(ReadNpy, FortranOrderIsTransposed) {
  // a(i, j) = 10 i + j, shape (2, 3): stored column by column (i fastest).
  const std::vector<double> fortran = {0, 10, 1, 11, 2, 12};
  const table_data t = read_npy(npy_file("fortran2d", npy(1, dict("<f8", true, "(2, 3)"), le<double>(fortran))));
  EXPECT_EQ(t.shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(t.values, (std::vector<double>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(t.column(2), (std::vector<double>{2, 12}));

  // a(i, j, k) = 100 i + 10 j + k, shape (2, 3, 4): stored with i fastest, then j, then k.
  std::vector<std::int32_t> f3;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) f3.push_back(100 * i + 10 * j + k);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expected.push_back(100 * i + 10 * j + k);
  const table_data t3 = read_npy(npy_file("fortran3d", npy(1, dict("<i4", true, "(2, 3, 4)"), le<std::int32_t>(f3))));
  EXPECT_EQ(t3.shape, (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(t3.values, expected);

  // 1-D: Fortran and C order are the same.
  const std::vector<double> v1 = {1, 2, 3};
  const table_data t1 = read_npy(npy_file("fortran1d", npy(1, dict("<f8", true, "(3,)"), le<double>(v1))));
  EXPECT_EQ(t1.values, (std::vector<double>{1, 2, 3}));
}

TEST(ReadNpy, ShapesAndColumns) {
  const std::vector<double> v1 = {5, 4, 3, 2, 1};
  const table_data one = read_npy(npy_file("one_d", npy(1, dict("<f8", false, "(5,)"), le<double>(v1))));
  EXPECT_EQ(one.shape, (std::vector<std::size_t>{5}));
  EXPECT_EQ(one.rows(), 5u);
  EXPECT_EQ(one.columns(), 1u);
  EXPECT_EQ(one.column(0), (std::vector<double>{5, 4, 3, 2, 1}));
  EXPECT_THROW(one.column(1), mcubes::invalid_input);

  std::vector<double> v(24);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = double(k) / 4;
  const table_data three = read_npy(npy_file("three_d", npy(1, dict("<f8", false, "(2, 3, 4)"), le<double>(v))));
  EXPECT_EQ(three.shape, (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(three.values, v);
  EXPECT_EQ(three.rows(), 2u);
  EXPECT_EQ(three.columns(), 12u);
  EXPECT_THROW(three.column(0), mcubes::invalid_input);
}

TEST(ReadNpy, VersionsKeyOrderAndTrailingBytes) {
  const std::string data = le<double>(std::vector<double>{1.25, -3.5});
  for (int major : {1, 2, 3}) {
    SCOPED_TRACE(major);
    const std::string name = "version" + std::to_string(major);
    const table_data t = read_npy(npy_file(name, npy(major, dict("<f8", false, "(2,)"), data)));
    EXPECT_EQ(t.shape, (std::vector<std::size_t>{2}));
    EXPECT_EQ(t.values, (std::vector<double>{1.25, -3.5}));
  }
  const std::string reordered = "{'shape': (1, 2), 'fortran_order': False, 'descr': '<f8'}";  // no trailing comma
  const table_data k = read_npy(npy_file("key_order", npy(2, reordered, data)));
  EXPECT_EQ(k.shape, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(k.values, (std::vector<double>{1.25, -3.5}));
  // Bytes after the data (a second array saved to the same file) are ignored, as np.load does.
  const table_data tail = read_npy(npy_file("trailing", npy(1, dict("<f8", false, "(1,)"), data)));
  EXPECT_EQ(tail.values, (std::vector<double>{1.25}));
}

TEST(ReadNpy, ReadTableDispatchesOnTheExtension) {
  const std::vector<double> v = {7, 8};
  const table_data n = read_table(npy_file("dispatch", npy(1, dict("<f8", false, "(2,)"), le<double>(v))));
  EXPECT_EQ(n.shape, (std::vector<std::size_t>{2}));
  EXPECT_EQ(n.values, (std::vector<double>{7, 8}));
  const table_data c = read_table(write_file("dispatch.txt", "7 8\n"));
  EXPECT_EQ(c.shape, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(c.values, (std::vector<double>{7, 8}));
  // A text file named .npy is read as .npy.
  expect_error(read_table, write_file("text.npy", "7 8\n"), 0, 0, "not a .npy file (no \\x93NUMPY magic string)");
}

TEST(ReadNpy, Errors) {
  const std::string six = le<double>(std::vector<double>(6, 1.0));
  const std::string good = npy(1, dict("<f8", false, "(3, 2)"), six);
  npy_error("bad_magic", "\x93NUMPX" + good.substr(6), "not a .npy file (no \\x93NUMPY magic string)");
  npy_error("short", "\x93NUM", "not a .npy file (no \\x93NUMPY magic string)");
  std::string v4 = good;
  v4[6] = 4;
  npy_error("version4", v4, "format version 4.0 (1.0, 2.0, 3.0 are read)");
  npy_error("big_endian", npy(1, dict(">f8", false, "(3, 2)"), six),
            "dtype '>f8' is big-endian: tables are '<f8', '<f4', '<i4' or '<i8'");
  npy_error("complex", npy(1, dict("<c16", false, "(3,)"), six),
            "dtype '<c16' is not supported: tables are '<f8', '<f4', '<i4' or '<i8'");
  npy_error("object", npy(1, dict("|O", false, "(3,)"), six),
            "dtype '|O' is not supported: tables are '<f8', '<f4', '<i4' or '<i8'");
  npy_error("structured", npy(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }", six),
            "structured dtype (a list of fields): tables are '<f8', '<f4', '<i4' or '<i8'");
  npy_error("truncated", npy(1, dict("<f8", false, "(3, 2)"), six.substr(0, 40)),
            "truncated data: shape (3, 2) of '<f8' needs 48 bytes, the file has 40");
  npy_error("zero_d", npy(1, dict("<f8", false, "()"), six.substr(0, 8)), "a 0-d array (shape ()) is not a table");
  npy_error("empty_array", npy(1, dict("<f8", false, "(0, 2)"), ""), "the array has no elements (shape (0, 2))");
  npy_error("no_shape", npy(1, "{'descr': '<f8', 'fortran_order': False}", six), "the header has no 'shape'");
  npy_error("extra_key", npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), 'x': 1}", six),
            "unexpected key 'x' in the header (descr, fortran_order, shape)");
  npy_error("no_colon", npy(1, "{'descr' '<f8', 'fortran_order': False, 'shape': (6,), }", six),
            "malformed header (':' expected at byte 9): \"{'descr' '<f8', 'fortran_order': False, 'shape': (6,), }\"");
  // The header length runs past the end of the file (v2: uint32 length).
  std::string long_header = npy(2, dict("<f8", false, "(1,)"), "");
  ASSERT_EQ(long_header.size(), 128u);  // 12 + a header of 116 bytes, no data
  ASSERT_EQ(long_header[9], 0);
  long_header[9] = 1;  // the header length: 116 + 256
  npy_error("long_header", long_header, "the header is 372 bytes but the file ends 116 bytes after its start");
}

TEST(ReadNpy, NonFiniteElementsNamedByIndex) {
  std::vector<double> v(16, 1.0);
  v[12] = std::numeric_limits<double>::quiet_NaN();
  npy_error("nan", npy(1, dict("<f8", false, "(4, 4)"), le<double>(v)), "element 12 (index (3, 0)) is not finite: nan");
  // Fortran order: the index is the element's in C order (file position 2 is a(0, 1)).
  std::vector<float> f(6, 1.0f);
  f[2] = std::numeric_limits<float>::infinity();
  npy_error("inf_fortran", npy(1, dict("<f4", true, "(2, 3)"), le<float>(f)),
            "element 1 (index (0, 1)) is not finite: inf");
  std::vector<double> w = {1, 2, -std::numeric_limits<double>::infinity()};
  npy_error("minus_inf", npy(3, dict("<f8", false, "(3,)"), le<double>(w)),
            "element 2 (index (2,)) is not finite: -inf");
}

}  // namespace
