// Printing results (result_io.hpp): the value(error) form, a result's line, the iterations' table.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "mcubes/result_io.hpp"

namespace {

TEST(ResultIo, ValueWithErrorHasTheDigitsTheErrorSupports) {
  EXPECT_EQ(mcubes::format_with_error(1.0846530e-2, 6.9e-7), "1.084653(69)e-02");
  EXPECT_EQ(mcubes::format_with_error(6.38504e-10, 1.3e-13), "6.3850(13)e-10");
  EXPECT_EQ(mcubes::format_with_error(1.5, 0.25), "1.50(25)");
  EXPECT_EQ(mcubes::format_with_error(-2.0, 0.996), "-2.0(10)");  // 99.6 units -> one place up
  EXPECT_EQ(mcubes::format_with_error(9.996, 0.0012), "9.9960(12)");
  EXPECT_EQ(mcubes::format_with_error(0.001, 0.5), "0.0(50)e-01");  // estimate below the error: at its scale
  EXPECT_EQ(mcubes::format_with_error(0.1, 0.0), "0.10000000000000001");  // no error: every digit
  EXPECT_EQ(mcubes::format_with_error(1.0, std::numeric_limits<double>::infinity()), "1");
}

mcubes::result two_iterations() {
  mcubes::result r;
  r.estimate = 1.0846530e-2;
  r.error = 6.9e-7;
  r.status = mcubes::status::converged;
  r.iterations = 2;
  r.n_eval = 7810000;
  r.chi2_dof = 0.84;
  r.q = 0.58;
  mcubes::iteration_record a;
  a.index = 0;
  a.adapted = true;
  a.estimate = 1.09e-2;
  a.error = 1e-4;
  a.weighted_estimate = std::numeric_limits<double>::quiet_NaN();  // skipped
  a.chi2_dof = a.q = std::numeric_limits<double>::quiet_NaN();
  mcubes::iteration_record b;
  b.index = 1;
  b.accumulated = true;
  b.estimate = 1.0846530e-2;
  b.error = 6.9e-7;
  b.weighted_estimate = 1.0846530e-2;
  b.weighted_error = 6.9e-7;
  b.chi2_dof = 0;
  b.q = 1;
  r.records = {a, b};
  return r;
}

TEST(ResultIo, OneLinePerResult) {
  std::ostringstream os;
  os << two_iterations();
  EXPECT_EQ(os.str(), "1.084653(69)e-02 (converged; 2 iterations, 7.81e+06 evaluations, chi2/dof 0.84, Q 0.58)");
  mcubes::result w = two_iterations();
  w.warnings = mcubes::warning_heavy_tail;
  std::ostringstream ow;
  ow << w;
  EXPECT_NE(ow.str().find(std::string(", warning ") + mcubes::to_string(mcubes::warning_heavy_tail) + ")"), std::string::npos)
      << ow.str();
}

TEST(ResultIo, TheExtendedSummaryIsTheCommandsTable) {
  const mcubes::result r = two_iterations();
  const std::string s = mcubes::summary(r, true);
  std::string rows;
  for (const mcubes::iteration_record& it : r.records) rows += mcubes::iteration_row(it);
  EXPECT_EQ(s.rfind(mcubes::iteration_table_header() + rows + mcubes::iteration_table_legend(), 0), 0u) << s;
  EXPECT_NE(mcubes::iteration_table_header().find("iter flags"), std::string::npos);
  EXPECT_EQ(mcubes::iteration_row(r.records[0]).rfind("   0 a----", 0), 0u) << mcubes::iteration_row(r.records[0]);
  EXPECT_NE(s.find("\nresult: 1.084653(69)e-02 (converged"), std::string::npos) << s;
}

TEST(ResultIo, SummaryTabulatesTheIterations) {
  const std::string s = mcubes::summary(two_iterations());
  EXPECT_NE(s.find("itn   integral"), std::string::npos) << s;
  EXPECT_NE(s.find("1a    1.090(10)e-02        -                    -          -  (not accumulated)"), std::string::npos) << s;
  EXPECT_NE(s.find("2     1.084653(69)e-02     1.084653(69)e-02     0          1\n"), std::string::npos) << s;
  EXPECT_NE(s.find("result: 1.084653(69)e-02 (converged"), std::string::npos) << s;
}

}  // namespace
