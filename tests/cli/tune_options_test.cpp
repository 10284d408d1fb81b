#include "cli/command_support.h"
#include "cli/tune_options.h"
#include "reduce_tune/tuner/tune_options.h"

#include <gtest/gtest.h>

namespace reduce_tune::cli {
using namespace reduce_tune::tuner;
namespace {

TuneParseResult parse(std::vector<std::string> args) { return parse_tune_options(args); }

TEST(TuneOptions, DefaultsCoverTheDefaultScope) {
  const auto r = parse({});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->devices, std::vector<int>{0});
  EXPECT_EQ(r.options->ops.size(), 4u);
  EXPECT_EQ(r.options->dtypes.size(), 7u);  // the 16-bit floats included
  EXPECT_TRUE(r.options->default_scope);
  EXPECT_FALSE(parse({"--dtypes", "f16"}).options->default_scope);
  EXPECT_FALSE(parse({"--ops", "sum"}).options->default_scope);
  EXPECT_TRUE(parse({"--sizes", "2^20"}).options->default_scope);
  EXPECT_EQ(r.options->search, SearchKind::local);
  // The database keeps the winners' and finalists' binaries unless told to keep all.
  EXPECT_FALSE(r.options->keep_all_binaries);
  EXPECT_TRUE(parse({"--keep-binaries", "all"}).options->keep_all_binaries);
  EXPECT_FALSE(parse({"--keep-binaries", "winners"}).options->keep_all_binaries);
  // Axis classes next to tuned ones are filled unless told not to.
  EXPECT_TRUE(r.options->fill_axis_neighbours);
  EXPECT_FALSE(parse({"--no-fill"}).options->fill_axis_neighbours);
  EXPECT_EQ(default_sizes().size(), 21u);
  EXPECT_EQ(default_sizes().front(), 1024u);
  EXPECT_EQ(default_sizes().back(), 1ull << 30);
}

TEST(TuneOptions, ParsesListsSizesAndBudgets) {
  const auto r = parse({"--device", "all", "--ops", "sum,max", "--dtypes", "float,i64", "--sizes", "2^10..2^12,1e6,64k",
                        "--strategy", "random", "--budget", "90s", "--db", "/tmp/x.db", "--fresh", "--quiet"});
  ASSERT_TRUE(r.options) << r.error;
  const auto& o = *r.options;
  EXPECT_TRUE(o.all_devices);
  EXPECT_EQ(o.ops, (std::vector<Op>{Op::sum, Op::max}));
  EXPECT_EQ(o.dtypes, (std::vector<DType>{DType::f32, DType::i64}));
  EXPECT_EQ(o.sizes, (std::vector<std::uint64_t>{1024, 2048, 4096, 65536, 1000000}));
  EXPECT_EQ(o.search, SearchKind::random);
  EXPECT_EQ(o.budget.seconds, 90);
  EXPECT_EQ(*o.db, "/tmp/x.db");
  EXPECT_TRUE(o.fresh && o.quiet);
  EXPECT_EQ(parse({"--budget", "40"}).options->budget.evaluations_per_bucket, 40);
  EXPECT_EQ(parse({"--strategy", "exhaustive"}).options->budget.evaluations_per_bucket, 0);
  EXPECT_EQ(parse({"--device", "0,1"}).options->devices, (std::vector<int>{0, 1}));
}

TEST(TuneOptions, LayoutsAndAxisShapesNarrowTheAxisScope) {
  const auto defaults = parse({});
  ASSERT_TRUE(defaults.options);
  EXPECT_EQ(defaults.options->layouts,
            (std::vector<AxisLayout>{AxisLayout::flat, AxisLayout::rows, AxisLayout::columns}));
  EXPECT_TRUE(defaults.options->axis_shapes.empty());
  const auto r = parse({"--layouts", "rows,flat", "--axis-shapes", "1000x4096,2^10x2^14", "--ops", "max"});
  ASSERT_TRUE(r.options) << r.error;
  EXPECT_EQ(r.options->layouts, (std::vector<AxisLayout>{AxisLayout::rows, AxisLayout::flat}));
  EXPECT_EQ(r.options->axis_shapes,
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1000, 4096}, {1024, 16384}}));
  for (const auto& [args, why] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--layouts", "diagonal"}, "--layouts: unknown value 'diagonal'"},
           {{"--axis-shapes", "1000"}, "--axis-shapes: bad shape '1000'"},
           {{"--axis-shapes", "1x4096"}, "--axis-shapes: bad shape '1x4096'"},
           {{"--axis-shapes", "16xlots"}, "--axis-shapes: bad shape '16xlots'"},
           {{"--axis-shapes", "2^40x2"}, "each 2 to 2^31"}}) {
    const auto bad = parse(args);
    EXPECT_FALSE(bad.options) << args[1];
    EXPECT_NE(bad.error.find(why), std::string::npos) << bad.error;
  }
}

TEST(TuneOptions, ErrorsNameTheOptionAndTheAllowedValues) {
  EXPECT_EQ(parse({"--ops", "avg"}).error, "--ops: unknown value 'avg' (allowed: sum, prod, min, max, mean, all)");
  EXPECT_EQ(parse({"--dtypes", "f8"}).error,
            "--dtypes: unknown value 'f8' (allowed: i32, i64, u32, f32, f64, f16, bf16, all)");
  EXPECT_EQ(parse({"--strategy", "genetic"}).error, "--strategy: unknown value 'genetic' (allowed: exhaustive, random, local)");
  EXPECT_NE(parse({"--sizes", "3000..2^12"}).error.find("--sizes: bad range"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "2^12..2^10"}).error.find("--sizes: bad range"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "12.5"}).error.find("--sizes: bad size '12.5'"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "0"}).error.find("--sizes: bad size"), std::string::npos);
  EXPECT_NE(parse({"--budget", "-3"}).error.find("--budget: bad value"), std::string::npos);
  EXPECT_NE(parse({"--device", "gpu0"}).error.find("--device: bad value 'gpu0'"), std::string::npos);
  EXPECT_NE(parse({"--bogus"}).error.find("unrecognised option '--bogus'"), std::string::npos) << parse({"--bogus"}).error;
  EXPECT_NE(parse({"--quiet", "--verbose"}).error.find("exclude each other"), std::string::npos);
  EXPECT_EQ(parse({"--keep-binaries", "some"}).error, "--keep-binaries: unknown value 'some' (allowed: all, winners)");
}

}  // namespace
}  // namespace reduce_tune::cli
