#include "reduce_tune/runtime/selector.h"

#include <gtest/gtest.h>

#include "reduce_tune/context.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"
#include "reduce_tune/reduce.h"
#include "../common/axis_grid_class.h"

namespace reduce_tune {
namespace {

DeviceKey device(const std::string& uuid, const std::string& name = "NVIDIA H200", int major = 9) {
  DeviceKey d;
  d.name = name;
  d.cc_major = major;
  d.sm_count = 132;
  d.uuid = uuid;
  return d;
}

// Stores one winner per (problem, bucket) for `key` into an in-memory database.
void store_winner(db::Database& database, const DeviceKey& key, Op op, DType dtype, DType out, int bucket,
                  const std::string& config, double ms, bool nondeterministic = false) {
  db::BucketResult r;
  r.device = key;
  r.problem = {op, dtype, out, {}};
  r.bucket = bucket;
  db::Measurement m;
  m.problem = ProblemKey{op, dtype, out, {}, 1ull << bucket};
  m.config = *parse_config(config).config;
  m.status = db::MeasurementStatus::ok;
  m.median_ms = ms;
  m.repetitions = 10;
  m.gbps = 1;
  m.tool_version = "reduce-tune test";
  m.created_at = db::now_timestamp();
  r.measurements = {m};
  r.winners = {{nondeterministic ? db::Determinism::nondeterministic : db::Determinism::deterministic, 0}};
  r.tool_version = "reduce-tune test";
  r.created_at = db::now_timestamp();
  database.store_bucket(r);
}

Selector selector_for(db::Database& database, const DeviceKey& key) {
  std::vector<db::Winner> own;
  if (auto id = database.find_device(key.uuid)) own = database.winners_for_device(*id);
  std::map<db::RowId, std::string> names;
  for (const auto& d : database.list_devices()) names[d.id] = d.key.name;
  return Selector(key, own, database.winners_for_same_arch(key), names);
}

const TypeRule kF32Sum = *resolve_types(Op::sum, DType::f32, DType::f32).rule;

TEST(Selector, ExactBucketWins) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 20, "warp_shuffle:block=512", 0.01);
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 21, "vectorized:block=128", 0.02);
  const auto s = selector_for(database, me).select(Op::sum, kF32Sum, (1u << 20) + 5, false);
  EXPECT_EQ(s.match, MatchKind::exact);
  EXPECT_EQ(to_string(s.config), to_string(*parse_config("warp_shuffle:block=512").config));
  ASSERT_TRUE(s.winner);
  EXPECT_EQ(s.winner->bucket, 20);
  EXPECT_EQ(s.source_device, "NVIDIA H200");
}

TEST(Selector, FallsBackToNearestSize) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 10, "warp_shuffle:block=64", 0.003);
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 26, "vectorized:block=512", 0.05);
  const auto sel = selector_for(database, me);
  auto s = sel.select(Op::sum, kF32Sum, 1u << 24, false);
  EXPECT_EQ(s.match, MatchKind::nearest_size);
  EXPECT_EQ(s.winner->bucket, 26);
  EXPECT_NE(s.reason.find("nearest tuned size 2^26"), std::string::npos) << s.reason;
  // Equally far: the smaller bucket.
  s = sel.select(Op::sum, kF32Sum, 1u << 18, false);
  EXPECT_EQ(s.winner->bucket, 10);
}

TEST(Selector, FallsBackToTheSameComputeCapability) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_winner(database, device("GPU-b", "NVIDIA H100 80GB HBM3"), Op::max, DType::i64, DType::i64, 16,
               "multi_element:block=1024", 0.004);
  store_winner(database, device("GPU-c", "NVIDIA A100", 8), Op::max, DType::i64, DType::i64, 16,
               "warp_shuffle:block=128", 0.004);
  const TypeRule types = *resolve_types(Op::max, DType::i64, DType::i64).rule;
  const auto s = selector_for(database, me).select(Op::max, types, 1u << 16, false);
  EXPECT_EQ(s.match, MatchKind::same_arch);
  EXPECT_EQ(s.config.block_threads, 1024u);
  EXPECT_EQ(s.source_device, "NVIDIA H100 80GB HBM3");
}

TEST(Selector, FallsBackToTheBuiltinDefault) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 20, "warp_shuffle", 0.01);
  const TypeRule types = *resolve_types(Op::min, DType::f64, DType::f64).rule;
  const auto s = selector_for(database, me).select(Op::min, types, 1000, false);
  EXPECT_EQ(s.match, MatchKind::default_config);
  EXPECT_FALSE(s.winner);
  EXPECT_EQ(s.config, builtin_default_config(Op::min, types, 90));
  EXPECT_EQ(s.config.vec_width, 2u);  // 16 bytes of f64
  EXPECT_FALSE(check_config(KernelSpec{Op::min, types, s.config}, DeviceLimits{}));
}

TEST(Selector, NondeterministicWinnersOnlyWhenAllowed) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 20, "vectorized:passes=single_pass_ticket", 0.010);
  store_winner(database, me, Op::sum, DType::f32, DType::f32, 20, "vectorized:passes=single_pass_atomic", 0.008, true);
  const auto sel = selector_for(database, me);
  EXPECT_EQ(sel.select(Op::sum, kF32Sum, 1u << 20, false).config.passes, Passes::single_pass_ticket);
  EXPECT_EQ(sel.select(Op::sum, kF32Sum, 1u << 20, true).config.passes, Passes::single_pass_atomic);
}

TEST(Selector, MeanUsesTheWinnersOfTheMatchingSum) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_winner(database, me, Op::sum, DType::i32, DType::i64, 12, "warp_shuffle:block=128", 0.003);
  const TypeRule mean = *resolve_types(Op::mean, DType::i32, DType::f64).rule;
  EXPECT_EQ(tuning_problem(Op::mean, mean), (db::ProblemClass{Op::sum, DType::i32, DType::i64, {}}));
  const auto s = selector_for(database, me).select(Op::mean, mean, 4096, false);
  EXPECT_EQ(s.match, MatchKind::exact);
  EXPECT_EQ(s.config.block_threads, 128u);
}

TEST(Selector, PassesOverWinnersInvalidOnThisDevice) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  // redux needs sm_80; stored for an sm_90 device, read by an sm_75 one of the same uuid.
  store_winner(database, me, Op::sum, DType::i32, DType::i32, 12, "vectorized:warp=redux", 0.003);
  auto old = me;
  old.cc_major = 7;
  old.cc_minor = 5;
  const TypeRule types = *resolve_types(Op::sum, DType::i32, DType::i32).rule;
  const auto s = selector_for(database, old).select(Op::sum, types, 4096, false);
  EXPECT_EQ(s.match, MatchKind::default_config);
}

// Axis reductions: one winner per (layout, R bucket, outputs bucket) class.
void store_axis_winner(db::Database& database, const DeviceKey& key, Op op, DType dtype, AxisLayout layout,
                       std::uint64_t r, std::uint64_t outputs, const std::string& config, double ms,
                       bool tuned = true, const std::string& winner_config = "") {
  db::AxisBucketResult result;
  result.mark_tuned = tuned;
  result.winner_config = winner_config;  // the tuner's mark for the built-in choice, where set
  result.device = key;
  result.problem = {op, dtype, dtype, layout, size_bucket(r), size_bucket(outputs)};
  db::AxisMeasurement m = testing::axis_measurement(op, dtype, layout, r, outputs, config, ms);
  m.gbps = 1;
  result.measurements = {m};
  result.winner = 0;
  result.tool_version = "reduce-tune test";
  result.created_at = db::now_timestamp();
  database.store_axis_bucket(result);
}

AxisSelector axis_selector_for(db::Database& database, const DeviceKey& key) {
  std::vector<db::AxisWinner> own;
  std::vector<db::AxisProblemClass> tuned;
  if (auto id = database.find_device(key.uuid)) {
    own = database.axis_winners_for_device(*id);
    tuned = database.axis_tuned_buckets(*id);
  }
  std::map<db::RowId, std::string> names;
  for (const auto& d : database.list_devices()) names[d.id] = d.key.name;
  return AxisSelector(key, own, database.axis_winners_for_same_arch(key), names, tuned);
}

CanonicalAxes rows_shape(std::int64_t outputs, std::int64_t r) {
  return canonicalize(TensorDesc::contiguous({outputs, r}), {1}).axes;
}
CanonicalAxes columns_shape(std::int64_t r, std::int64_t outputs) {
  return canonicalize(TensorDesc::contiguous({r, outputs}), {0}).axes;
}

const char* const kRowsConfig = "rows:block=128,group=8,vec=4,split=none,rows=4,unroll=4,sm=4";
const char* const kColumnsConfig = "columns:block=512,by=4,vec=1,split=none,rows=1,unroll=8,sm=4";

TEST(AxisSelector, TheShapesClassWinnerServesEveryShapeInIt) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 1024, 4096, kRowsConfig, 0.01);
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::columns, 1024, 4096, kColumnsConfig, 0.01);
  const auto sel = axis_selector_for(database, me);
  for (auto shape : {rows_shape(4096, 1024), rows_shape(8191, 2047), rows_shape(5000, 1500)}) {
    const auto s = sel.select(Op::sum, kF32Sum, shape);
    EXPECT_EQ(s.match, MatchKind::exact) << shape.to_string();
    EXPECT_EQ(axis_config_text(s.spec), kRowsConfig);
    ASSERT_TRUE(s.winner);
    EXPECT_EQ(s.source_device, "NVIDIA H200");
  }
  const auto c = sel.select(Op::sum, kF32Sum, columns_shape(1500, 5000));
  EXPECT_EQ(c.match, MatchKind::exact);
  EXPECT_EQ(axis_config_text(c.spec), kColumnsConfig);
  // The mean of f32 is served by the sum's winner, with its own op.
  const TypeRule mean = *resolve_types(Op::mean, DType::f32, DType::f32).rule;
  const auto m = sel.select(Op::mean, mean, rows_shape(4096, 1024));
  EXPECT_EQ(m.match, MatchKind::exact);
  EXPECT_EQ(m.spec.op, Op::mean);
  EXPECT_EQ(axis_config_text(m.spec), kRowsConfig);
  // Another op, dtype or layout has nothing tuned.
  const TypeRule max = *resolve_types(Op::max, DType::f32, DType::f32).rule;
  EXPECT_EQ(sel.select(Op::max, max, rows_shape(4096, 1024)).match, MatchKind::default_config);
}

TEST(AxisSelector, FallsBackToANeighbourThenTheSameArchThenTheBuiltInChoice) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 1 << 9, 1 << 13, kRowsConfig, 0.01);
  store_axis_winner(database, device("GPU-b", "NVIDIA H100 80GB HBM3"), Op::sum, DType::f32, AxisLayout::rows,
                    1 << 16, 1 << 4, "rows:block=512,group=512,vec=4,split=two_pass,rows=1", 0.01);
  const auto sel = axis_selector_for(database, me);
  // One bucket away in R, or in outputs: the neighbour's winner.
  for (auto shape : {rows_shape(1 << 13, 1 << 10), rows_shape(1 << 14, 1 << 9), rows_shape(1 << 12, 1 << 9)}) {
    auto s = sel.select(Op::sum, kF32Sum, shape);
    EXPECT_EQ(s.match, MatchKind::nearest_size) << shape.to_string();
    EXPECT_EQ(axis_config_text(s.spec), kRowsConfig);
    EXPECT_NE(s.reason.find("R 2^9 x 2^13 outputs"), std::string::npos) << s.reason;
  }
  // One bucket away in both: not a neighbour (its winner can be far from right there).
  auto s = sel.select(Op::sum, kF32Sum, rows_shape(1 << 14, 1 << 10));
  EXPECT_EQ(s.match, MatchKind::default_config) << s.reason;
  // Two buckets away: not a neighbour.
  s = sel.select(Op::sum, kF32Sum, rows_shape(1 << 15, 1 << 9));
  EXPECT_EQ(s.match, MatchKind::default_config);
  EXPECT_EQ(s.spec, builtin_axis_spec(Op::sum, kF32Sum, rows_shape(1 << 15, 1 << 9), 132));
  // Another device of the same compute capability tuned this class.
  s = sel.select(Op::sum, kF32Sum, rows_shape(1 << 4, 1 << 16));
  EXPECT_EQ(s.match, MatchKind::same_arch);
  EXPECT_EQ(s.source_device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.spec.split, AxisSplit::two_pass);
  // General strided views are never tuned.
  const CanonicalResult general = canonicalize(TensorDesc::strided({64, 32, 16}, {1, 2048, 128}), {0, 2});
  ASSERT_TRUE(general.ok);
  ASSERT_EQ(general.axes.layout, AxisLayout::general);
  s = sel.select(Op::sum, kF32Sum, general.axes);
  EXPECT_EQ(s.match, MatchKind::default_config);
  EXPECT_EQ(s.spec.family, AxisFamily::general);
}

// A class the tuner filled in between tuned ones (its winner timed against the
// neighbours' and the built-in choice only) serves its own shapes, but is never lent to
// a neighbouring class: there the nearest tuned class's winner, or the built-in choice.
TEST(AxisSelector, AFilledClassServesItselfButIsNotLentToItsNeighbours) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  const char* const filled = "rows:block=256,group=32,vec=4,split=none,rows=1,unroll=8,sm=4";
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 1 << 9, 1 << 13, kRowsConfig, 0.01);
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 1 << 9, 1 << 14, filled, 0.01,
                    /*tuned=*/false);
  const auto sel = axis_selector_for(database, me);
  auto s = sel.select(Op::sum, kF32Sum, rows_shape(3 << 13, 600));
  EXPECT_EQ(s.match, MatchKind::exact) << s.reason;
  EXPECT_EQ(axis_config_text(s.spec), filled);
  EXPECT_NE(s.reason.find("filled in between tuned classes"), std::string::npos) << s.reason;
  EXPECT_EQ(sel.select(Op::sum, kF32Sum, rows_shape(1 << 13, 600)).reason.find("filled"), std::string::npos);
  // One bucket from the filled class and from the tuned one: the tuned one's winner.
  s = sel.select(Op::sum, kF32Sum, rows_shape(1 << 13, 1 << 10));
  EXPECT_EQ(s.match, MatchKind::nearest_size) << s.reason;
  EXPECT_EQ(axis_config_text(s.spec), kRowsConfig);
  // One bucket from the filled class only: the built-in choice.
  s = sel.select(Op::sum, kF32Sum, rows_shape(1 << 15, 1 << 9));
  EXPECT_EQ(s.match, MatchKind::default_config) << s.reason;
  EXPECT_EQ(s.spec, builtin_axis_spec(Op::sum, kF32Sum, rows_shape(1 << 15, 1 << 9), 132));
  // The filled class is not marked done: a run that tunes it searches it.
  const auto id = database.find_device(me.uuid);
  ASSERT_TRUE(id);
  EXPECT_EQ(database.axis_tuned_buckets(*id).size(), 1u);
  EXPECT_EQ(database.axis_winners_for_device(*id).size(), 2u);
}

TEST(AxisSelector, PassesOverConfigsThatDoNotParseOrDoNotFitTheShape) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  // A staged rows kernel, tuned for rows of 16..31 (its tile of 64 x 4 elements takes
  // rows of at most 32): a strided view of the same class cannot use it; a neighbouring
  // class's config that does not parse is passed over.
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 16, 1 << 16,
                    "rows_dense:block=64,group=1,vec=1,split=none,rows=1", 0.01);
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 32, 1 << 16, "rows:block=999", 0.01);
  const auto sel = axis_selector_for(database, me);
  EXPECT_EQ(sel.select(Op::sum, kF32Sum, rows_shape(1 << 16, 16)).spec.family, AxisFamily::rows_dense);
  const CanonicalResult strided = canonicalize(TensorDesc::strided({1 << 16, 16}, {32, 1}), {1});
  ASSERT_TRUE(strided.ok);
  const auto s = sel.select(Op::sum, kF32Sum, strided.axes);
  EXPECT_EQ(s.match, MatchKind::default_config) << s.reason << " " << strided.axes.to_string();
  EXPECT_EQ(axis_spec_mismatch(s.spec, strided.axes), "");
  // Rows of 40: their own class's config does not parse, the neighbour's dense kernel
  // takes rows of at most 32: the built-in choice.
  const auto forty = sel.select(Op::sum, kF32Sum, rows_shape(1 << 16, 40));
  EXPECT_EQ(forty.match, MatchKind::default_config) << forty.reason;
  EXPECT_NE(forty.spec.block, 64u);  // not the neighbour's kernel
  EXPECT_EQ(axis_spec_mismatch(forty.spec, rows_shape(1 << 16, 40)), "");
  // Rows of 24 in half as many outputs (no winner of its own): the neighbour's dense
  // kernel fits.
  const auto fewer = sel.select(Op::sum, kF32Sum, rows_shape(1 << 15, 24));
  EXPECT_EQ(fewer.match, MatchKind::nearest_size) << fewer.reason;
  EXPECT_EQ(fewer.spec.family, AxisFamily::rows_dense);
}

// The kernel a call runs (axis_spec_for): a class's winner wherever it fits; where the
// class has none, the built-in choice of each shape, not the one made for the first
// shape of the class that came (an f16 columns class takes vectors of four outputs on
// the 4-element grid and a thread per output off it).
TEST(AxisSelector, EachShapeOfAClassWithoutAWinnerTakesItsOwnBuiltInChoice) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::columns, 1024, 4096, kColumnsConfig, 0.01);
  const auto sel = axis_selector_for(database, me);
  const TypeRule f16 = *resolve_types(Op::sum, DType::f16, DType::f16).rule;
  const CanonicalAxes on_grid = columns_shape(70000, 600), off_grid = columns_shape(70000, 601);
  const auto first = sel.select(Op::sum, f16, on_grid);
  ASSERT_FALSE(first.winner);
  ASSERT_EQ(db::to_string(*axis_tuning_problem(Op::sum, f16, on_grid)),
            db::to_string(*axis_tuning_problem(Op::sum, f16, off_grid)));  // one class
  const AxisKernelSpec built_on = builtin_axis_spec(Op::sum, f16, on_grid, 132);
  const AxisKernelSpec built_off = builtin_axis_spec(Op::sum, f16, off_grid, 132);
  ASSERT_NE(built_on, built_off);
  EXPECT_EQ(axis_spec_for(first, Op::sum, f16, on_grid, 132, nullptr, nullptr), built_on);
  AxisLaunchPlan plan;
  EXPECT_EQ(axis_spec_for(first, Op::sum, f16, off_grid, 132, &plan, nullptr), built_off);
  EXPECT_EQ(plan.grid, plan_axis_launch(built_off, off_grid, 132).grid);
  // A winner serves every shape of its class it fits.
  const auto tuned = sel.select(Op::sum, kF32Sum, columns_shape(1500, 5000));
  ASSERT_TRUE(tuned.winner);
  EXPECT_EQ(axis_config_text(axis_spec_for(tuned, Op::sum, kF32Sum, columns_shape(1100, 4097), 132, nullptr, nullptr)),
            kColumnsConfig);
}

// A class that keeps a second winner for its shapes on the 16-byte grid (f16 columns of
// R = 2 to 3 over 2^23 outputs, as an H200 tuned them: eight outputs a thread on the grid,
// four with a peeled tail off it): each shape takes its side's winner, and a base off the
// grid takes the winner off it.
TEST(AxisSelector, AClassWithAWinnerOnTheGridServesEachSideItsOwn) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  const char* const off = "columns:block=256,by=1,vec=4,split=none,rows=1,unroll=4,sm=4,tail=1,occ=1536";
  const char* const on = "short_columns:block=128,group=1,vec=8,split=none,rows=1,unroll=2,sm=4";
  database.store_axis_bucket(testing::axis_class_with_grid_winner(me, Op::max, DType::f16, 1, 23, 2, 1u << 23, off,
                                                                 on, 0.02));
  const auto sel = axis_selector_for(database, me);
  const TypeRule f16 = *resolve_types(Op::max, DType::f16, DType::f16).rule;
  const CanonicalAxes grid = columns_shape(3, 1 << 23), odd = columns_shape(3, (1 << 23) + 1);
  ASSERT_TRUE(axis_on_16byte_grid(grid, 2));
  ASSERT_FALSE(axis_on_16byte_grid(odd, 2));
  const auto s = sel.select(Op::max, f16, grid);
  ASSERT_TRUE(s.winner);
  EXPECT_EQ(s.match, MatchKind::exact);
  ASSERT_TRUE(s.grid_spec);
  EXPECT_EQ(axis_config_text(*s.grid_spec), on);
  EXPECT_EQ(axis_config_text(s.spec), off);
  alignas(16) static const unsigned char buffer[32] = {};
  EXPECT_EQ(axis_config_text(axis_spec_for(s, Op::max, f16, grid, 132, nullptr, nullptr)), on);
  EXPECT_EQ(axis_config_text(axis_spec_for(s, Op::max, f16, grid, 132, nullptr, buffer)), on);
  EXPECT_EQ(axis_config_text(axis_spec_for(s, Op::max, f16, grid, 132, nullptr, buffer + 2)), off);
  EXPECT_EQ(axis_config_text(axis_spec_for(s, Op::max, f16, odd, 132, nullptr, nullptr)), off);
  // The same selection made first at a shape off the grid serves the grid alike (one
  // selection serves a class).
  const auto first_odd = sel.select(Op::max, f16, odd);
  EXPECT_EQ(axis_config_text(axis_spec_for(first_odd, Op::max, f16, grid, 132, nullptr, nullptr)), on);
  // A class without one serves every shape its one winner.
  store_axis_winner(database, me, Op::max, DType::f16, AxisLayout::columns, 2, 1 << 21, off, 0.01);
  const auto one = axis_selector_for(database, me).select(Op::max, f16, columns_shape(2, 1 << 21));
  EXPECT_FALSE(one.grid_spec);
  EXPECT_EQ(axis_config_text(axis_spec_for(one, Op::max, f16, columns_shape(2, 1 << 21), 132, nullptr, nullptr)),
            off);
}

// A class where no config beat the built-in choice made at each sample shape keeps that
// choice (kAxisBuiltinConfig): each of its shapes takes the built-in choice made for it
// (f32 rows of 64 the plain rows kernel, of 100 the staged one; an H200's tuner stored
// the plain one for the class, and rows of 100 x 131072 ran at 0.91 times the built-in
// choice), and so do the neighbours it is lent to, as a tuned class. On the side of the
// 16-byte grid only, the other side keeps its config.
TEST(AxisSelector, AClassThatKeepsTheBuiltInChoiceServesEachShapeTheChoiceMadeForIt) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  const std::string builtin(kAxisBuiltinConfig);
  const std::string plain = "rows:block=256,group=4,vec=4,split=none,rows=1,unroll=4,sm=4";
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::rows, 64, 131072, plain, 0.017, true, builtin);
  const auto id = database.find_device(me.uuid);
  ASSERT_TRUE(id);
  ASSERT_EQ(database.axis_winners_for_device(*id).at(0).config, builtin);  // stored as the mark
  const auto sel = axis_selector_for(database, me);
  const CanonicalAxes corner = rows_shape(131072, 64), hundred = rows_shape(131072, 100);
  const AxisKernelSpec at_corner = builtin_axis_spec(Op::sum, kF32Sum, corner, 132);
  const AxisKernelSpec at_hundred = builtin_axis_spec(Op::sum, kF32Sum, hundred, 132);
  ASSERT_NE(at_corner, at_hundred);  // the built-in choice changes inside the class
  for (const auto& shape : {corner, hundred}) {
    const auto s = sel.select(Op::sum, kF32Sum, shape);
    ASSERT_TRUE(s.winner) << s.reason;
    EXPECT_EQ(s.match, MatchKind::exact);
    EXPECT_TRUE(s.builtin);
    EXPECT_EQ(s.spec, builtin_axis_spec(Op::sum, kF32Sum, shape, 132));
    // Whichever shape selected for the class, each shape runs its own built-in choice.
    EXPECT_EQ(axis_spec_for(s, Op::sum, kF32Sum, corner, 132, nullptr, nullptr), at_corner);
    AxisLaunchPlan plan;
    EXPECT_EQ(axis_spec_for(s, Op::sum, kF32Sum, hundred, 132, &plan, nullptr), at_hundred);
    EXPECT_EQ(plan.grid, plan_axis_launch(at_hundred, hundred, 132).grid);
    alignas(16) static const float buffer[8] = {};
    EXPECT_EQ(axis_spec_for(s, Op::sum, kF32Sum, hundred, 132, nullptr, buffer + 1),
              builtin_axis_spec(Op::sum, kF32Sum, hundred, 132, nullptr, buffer + 1));
  }
  // The mean it serves, and a neighbouring class it is lent to.
  const TypeRule mean = *resolve_types(Op::mean, DType::f32, DType::f32).rule;
  const auto m = sel.select(Op::mean, mean, hundred);
  EXPECT_TRUE(m.builtin);
  EXPECT_EQ(axis_spec_for(m, Op::mean, mean, hundred, 132, nullptr, nullptr),
            builtin_axis_spec(Op::mean, mean, hundred, 132));
  const CanonicalAxes next = rows_shape(262144, 100);  // R 2^6 x 2^18 outputs
  const auto n = sel.select(Op::sum, kF32Sum, next);
  EXPECT_EQ(n.match, MatchKind::nearest_size) << n.reason;
  EXPECT_EQ(axis_spec_for(n, Op::sum, kF32Sum, next, 132, nullptr, nullptr),
            builtin_axis_spec(Op::sum, kF32Sum, next, 132));
  // The mark on one side of the grid: f16 columns keep a config off the grid and the
  // built-in choice on it.
  const char* const off = "columns:block=256,by=1,vec=4,split=none,rows=1,unroll=4,sm=4,tail=1,occ=1536";
  auto grid_class = testing::axis_class_with_grid_winner(me, Op::max, DType::f16, 1, 23, 2, 1u << 23, off,
                                                         "short_columns:block=128,group=1,vec=8,split=none,rows=1",
                                                         0.02);
  grid_class.grid_winner_config = builtin;
  database.store_axis_bucket(grid_class);
  const TypeRule f16 = *resolve_types(Op::max, DType::f16, DType::f16).rule;
  const CanonicalAxes grid = columns_shape(3, 1 << 23), odd = columns_shape(3, (1 << 23) + 1);
  const auto g = axis_selector_for(database, me).select(Op::max, f16, odd);
  ASSERT_TRUE(g.winner && g.grid_spec);
  EXPECT_FALSE(g.builtin);
  EXPECT_TRUE(g.grid_builtin);
  EXPECT_EQ(axis_config_text(axis_spec_for(g, Op::max, f16, odd, 132, nullptr, nullptr)), off);
  EXPECT_EQ(axis_spec_for(g, Op::max, f16, grid, 132, nullptr, nullptr), builtin_axis_spec(Op::max, f16, grid, 132));
}

// Columns stepped over their outputs (x[:, ::2] along 0) are not tuned: the built-in
// choice, even where contiguous columns of their class have a winner.
TEST(AxisSelector, SteppedColumnsTakeTheBuiltInChoice) {
  auto database = db::Database::open_in_memory();
  const auto me = device("GPU-a");
  store_axis_winner(database, me, Op::sum, DType::f32, AxisLayout::columns, 1024, 2048, kColumnsConfig, 0.01);
  const auto sel = axis_selector_for(database, me);
  EXPECT_EQ(sel.select(Op::sum, kF32Sum, columns_shape(1024, 2048)).match, MatchKind::exact);
  const CanonicalResult stepped = canonicalize(TensorDesc::strided({1024, 2048}, {4096, 2}), {0});
  ASSERT_TRUE(stepped.ok);
  ASSERT_EQ(stepped.axes.layout, AxisLayout::columns);
  EXPECT_FALSE(axis_tuning_problem(Op::sum, kF32Sum, stepped.axes));
  const auto s = sel.select(Op::sum, kF32Sum, stepped.axes);
  EXPECT_EQ(s.match, MatchKind::default_config);
  EXPECT_NE(s.reason.find("not contiguous"), std::string::npos) << s.reason;
  EXPECT_EQ(s.spec, builtin_axis_spec(Op::sum, kF32Sum, stepped.axes, 132));
}

TEST(Context, RejectsBadArgumentsBeforeTouchingAnyDevice) {
  Context context;
  float x = 0;
  try {
    context.reduce(Op::min, DType::i32, DType::i64, &x, 1, &x, nullptr);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("min writes its input type"), std::string::npos);
  }
  EXPECT_THROW(context.reduce(Op::sum, DType::f32, DType::f32, nullptr, 10, &x, nullptr), InvalidArgument);
  EXPECT_THROW(context.reduce(Op::sum, DType::f32, DType::f32, &x, 1, nullptr, nullptr), InvalidArgument);
  alignas(8) unsigned char bytes[16];
  EXPECT_THROW(context.reduce(Op::sum, DType::f64, DType::f64, bytes + 4, 1, bytes, nullptr), InvalidArgument);
  EXPECT_THROW(context.reduce_to_host(Op::sum, DType::f32, DType::f32, &x, 1, nullptr, nullptr), InvalidArgument);
}

TEST(Context, RejectsBadShapesAndAxesBeforeTouchingAnyDevice) {
  Context context;
  float x[16] = {};
  auto message = [&](const TensorDesc& t, const AxisList& axes, DType out = DType::f32) {
    try {
      context.reduce_axes(Op::sum, DType::f32, out, x, t, axes, x + 8, nullptr);
      return std::string("accepted");
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(message(TensorDesc::contiguous({4, 4}), {2}).find("axis 2 is out of range"), std::string::npos);
  EXPECT_NE(message(TensorDesc::contiguous({4, 4}), {0, -2}).find("axis -2 is repeated"), std::string::npos);
  EXPECT_NE(message(TensorDesc::strided({4, 4}, {1ll << 62, 1}), {0}).find("overflow"), std::string::npos);
  EXPECT_NE(message(TensorDesc::contiguous({4, 4}), {0}, DType::i32).find("sum"), std::string::npos);
  // A span of 2^61 + 1 elements fits the canonical form, but not as 8-byte elements.
  try {
    double d[4] = {};
    context.reduce_axes(Op::sum, DType::f64, DType::f64, d, TensorDesc::strided({2, 2}, {1ll << 61, 1}), {1}, d + 2,
                        nullptr);
    ADD_FAILURE() << "a view of 2^64 bytes was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("more bytes than any device allocation"), std::string::npos) << e.what();
  }
  // So many outputs that their bytes overflow.
  EXPECT_NE(message(TensorDesc::strided({(1ll << 60) + 1, 2}, {0, 0}), {1}).find("outputs is larger"), std::string::npos);
  // The typed functions go through the same checks.
  EXPECT_THROW(sum(x, TensorDesc::contiguous({4, 4}), {3}, x + 8), InvalidArgument);
  EXPECT_THROW(context.explain_axes(Op::max, DType::f32, DType::f32, TensorDesc::contiguous({4}), {1}), InvalidArgument);
}

TEST(Context, WithoutADeviceCallsFailWithNoDeviceError) {
  Context context;
  const std::uint64_t host_marker = 0;  // never dereferenced: the device check comes first
  try {
    const Explanation e = context.explain(Op::sum, DType::f32, DType::f32, 100);
    GTEST_SKIP() << "a CUDA device is present (" << e.device << "); the GPU tests cover calls";
  } catch (const NoDeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos);
  }
  float out = 0;
  EXPECT_THROW(context.reduce(Op::sum, DType::f32, DType::f32, &host_marker, 1, &out, nullptr), NoDeviceError);
}

TEST(PublicApi, TypedCallsMapToDTypes) {
  static_assert(dtype_of<std::int32_t> == DType::i32);
  static_assert(dtype_of<const double> == DType::f64);
  static_assert(std::is_same_v<mean_t<float>, float>);
  static_assert(std::is_same_v<mean_t<std::int64_t>, double>);
  EXPECT_EQ(dtype_of<std::uint32_t>, DType::u32);
}

}  // namespace
}  // namespace reduce_tune
