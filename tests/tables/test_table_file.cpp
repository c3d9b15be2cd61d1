// Table files (tables/table_file.hpp): text columns and NumPy .npy, their values bit for bit, and
// every error with the exact file, line and column.
#include <mcubes/tables/table_file.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::string write_file(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "/mcubes_table_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// A .npy file built byte by byte: magic, version, little-endian header length, header padded with
// spaces to a multiple of 64 bytes and ending in '\n', then the data.
std::string npy(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(major) + char(0);
  const std::size_t n = header.size();
  out += char(n & 0xff);
  out += char((n >> 8) & 0xff);
  if (major != 1) out += char((n >> 16) & 0xff), out += char((n >> 24) & 0xff);
  return out + header + data;
}
template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

void expect_error(const std::string& path, std::size_t line, std::size_t column, const std::string& reason) {
  try {
    (void)mcubes::read_table(path);
    ADD_FAILURE() << "no exception for " << path;
  } catch (const mcubes::table_file_error& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.column(), column);
    const std::string where = line ? path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " : path + ": ";
    EXPECT_EQ(std::string(e.what()), where + reason);
  }
}

}  // namespace

TEST(TableFile, ColumnsInEverySeparatorStyleWithCommentsAndAHeader) {
  const std::string p = write_file("cols.txt",
                                   "# a comment\n"
                                   "z, D(z)\n"
                                   "\n"
                                   "0.1  1.5\r\n"
                                   "\t0.2,2.5   # trailing comment\n"
                                   "+0.3 , -3e2\n"
                                   "4\t\t0.30000000000000004\n");
  const mcubes::table_data t = mcubes::read_columns(p);
  ASSERT_EQ(t.shape, (std::vector<std::size_t>{4, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{0.1, 1.5, 0.2, 2.5, 0.3, -300.0, 4.0, 0.30000000000000004}));
  EXPECT_EQ(t.column(0), (std::vector<double>{0.1, 0.2, 0.3, 4.0}));
  EXPECT_EQ(t.column(1)[3], 0.1 + 0.2);  // 17 digits round-trip bit for bit
  EXPECT_THROW((void)t.column(2), mcubes::invalid_input);
}

TEST(TableFile, ColumnErrorsNameLineAndColumn) {
  expect_error(write_file("e1.txt", "1 2\n3 4x\n"), 2, 3, "'4x' is not a number");
  expect_error(write_file("e2.csv", "1,2\n3,,4\n"), 2, 3, "empty field");
  expect_error(write_file("e3.txt", "1 2\n3 4 5\n"), 2, 1, "row has 3 fields, expected 2");
  expect_error(write_file("e4.txt", "# only\n\n"), 0, 0, "no data rows");
  expect_error(write_file("e5.txt", "1 nan\n"), 1, 3, "'nan' is not finite (tables must be finite)");
  expect_error(write_file("e6.txt", "1 2\n3 1e999\n"), 2, 3, "'1e999' is out of the range of double");
  expect_error(write_file("e7.txt", "x 2\n"), 1, 1, "'x' is not a number");        // a header mixing names and numbers
  expect_error(write_file("e8.txt", "1 2\nz D\n"), 2, 1, "'z' is not a number");    // a header after data
  expect_error(write_file("e9.csv", "1,2,\n"), 1, 5, "empty field");
  try {
    (void)mcubes::read_columns(::testing::TempDir() + "/no such file.txt");
    ADD_FAILURE();
  } catch (const mcubes::table_file_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open: No such file or directory"), std::string::npos) << e.what();
  }
}

TEST(TableFile, NpyEveryDtypeBothOrdersAndVersions) {
  const std::vector<double> v{1.5, -2.0, 3.25, 4.0, 5.0, 6.125};
  const auto c = mcubes::read_npy(write_file("c.npy", npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", raw(v))));
  EXPECT_EQ(c.shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(c.values, v);
  // Fortran order: memory holds column-major a(0,0), a(1,0), a(0,1), ... -> transposed to C order
  const auto f = mcubes::read_npy(write_file("f.npy", npy(2, "{'fortran_order': True, 'shape': (2, 3), 'descr': '<f8'}", raw(v))));
  EXPECT_EQ(f.values, (std::vector<double>{1.5, 3.25, 5.0, -2.0, 4.0, 6.125}));
  const auto f4 = mcubes::read_npy(write_file("f4.npy", npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                                                            raw(std::vector<float>{0.5f, 0.1f, -7.0f}))));
  EXPECT_EQ(f4.shape, (std::vector<std::size_t>{3}));
  EXPECT_EQ(f4.values, (std::vector<double>{0.5, double(0.1f), -7.0}));
  EXPECT_EQ(f4.column(0), f4.values);
  const auto i4 = mcubes::read_npy(write_file("i4.npy", npy(3, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1, 2), }",
                                                            raw(std::vector<std::int32_t>{1, -2, 3, 2147483647}))));
  EXPECT_EQ(i4.shape, (std::vector<std::size_t>{2, 1, 2}));
  EXPECT_EQ(i4.values, (std::vector<double>{1, -2, 3, 2147483647}));
  const auto i8 = mcubes::read_table(write_file("i8.npy", npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                                             raw(std::vector<std::int64_t>{-5, 1LL << 40}))));
  EXPECT_EQ(i8.values, (std::vector<double>{-5, double(1LL << 40)}));
  // 3-D Fortran order: element (i, j, k) at i + 2 j + 4 k in memory
  std::vector<double> m(8);
  for (int k = 0; k < 8; ++k) m[k] = k;
  const auto f3 = mcubes::read_npy(write_file("f3.npy", npy(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2, 2), }", raw(m))));
  EXPECT_EQ(f3.values, (std::vector<double>{0, 4, 2, 6, 1, 5, 3, 7}));
}

TEST(TableFile, NpyErrorsSayWhatIsWrong) {
  const std::string d = raw(std::vector<double>{1, 2});
  expect_error(write_file("b1.npy", "not numpy at all"), 0, 0, "not a NumPy .npy file (bad magic string)");
  expect_error(write_file("b2.npy", npy(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", d)), 0, 0,
               "dtype '>f8' is not supported (little-endian f8, f4, i4 or i8)");
  expect_error(write_file("b3.npy", npy(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", d)), 0, 0,
               "dtype '<c16' is not supported (little-endian f8, f4, i4 or i8)");
  expect_error(write_file("b4.npy", npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d)), 0, 0,
               "the data section has 16 bytes, the shape needs 24");
  expect_error(write_file("b5.npy", npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", d)), 0, 0,
               "a 0-d array is not a table");
  expect_error(write_file("b6.npy", npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                        raw(std::vector<double>{1, INFINITY}))),
               0, 0, "element 1 (C order) is not finite");
  expect_error(write_file("b7.npy", npy(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", d)), 0, 0,
               "unsupported dtype (structured arrays are not tables)");
  expect_error(write_file("b8.npy", npy(1, "{'fortran_order': False, 'shape': (2,), }", d)), 0, 0, "the header has no 'descr'");
}
