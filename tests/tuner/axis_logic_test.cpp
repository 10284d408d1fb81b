// The axis tuner's logic without a GPU: which classes a run tunes, the shapes and
// candidates of a class, and how its winner is chosen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"
#include "reduce_tune/tuner/axis_tuner.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune::tuner {
namespace {

class NotingProgress : public Progress {
 public:
  void device_started(const DeviceKey&, int, int) override {}
  void bucket_finished(const BucketReport&) override {}
  void note(std::string_view m) override { notes.emplace_back(m); }
  std::vector<std::string> notes;
};

const TypeRule kF32{DType::f32, DType::f32, DType::f32};

db::AxisProblemClass rows_class(int a, int b, Op op = Op::sum) {
  return {op, DType::f32, DType::f32, AxisLayout::rows, a, b};
}

db::AxisMeasurement timed(const AxisShape& s, const std::string& config, double ms,
                          db::MeasurementStatus status = db::MeasurementStatus::ok) {
  db::AxisMeasurement m;
  m.layout = s.layout;
  m.reduced = s.reduced;
  m.outputs = s.outputs;
  m.inner = s.layout == AxisLayout::columns ? s.outputs : 1;
  m.config = config;
  m.status = status;
  m.median_ms = status == db::MeasurementStatus::ok ? ms : std::numeric_limits<double>::quiet_NaN();
  return m;
}

// The three shapes rule revisions before 20 sampled a class at: its corner, the odd shape
// inside, and its top (rows of 8 and more: 2^(a+1) - 8 long; columns: the top itself).
// The timings of the winner-rule tests below were taken there.
std::vector<AxisShape> corner_inside_top(const db::AxisProblemClass& c) {
  const auto inside = [](int k) {
    const std::uint64_t low = std::uint64_t{1} << k;
    return k == 1 ? std::uint64_t{3} : low + low / 2 + 1;
  };
  AxisShape top = axis_top_shape(c);
  if (c.layout == AxisLayout::rows && c.reduced_bucket >= 3) top.reduced -= 7;
  return {{c.layout, std::uint64_t{1} << c.reduced_bucket, std::uint64_t{1} << c.outputs_bucket},
          {c.layout, inside(c.reduced_bucket), inside(c.outputs_bucket)},
          top};
}

std::vector<bool> on_grid_flags(const std::vector<AxisShape>& shapes, std::size_t element_bytes) {
  std::vector<bool> flags;
  for (const auto& shape : shapes) flags.push_back(axis_on_16byte_grid(canonical_axis_shape(shape), element_bytes));
  return flags;
}

TEST(AxisTuning, DefaultGridReachesEveryClassWithAnOddBucket) {
  const auto shapes = default_axis_shapes();
  EXPECT_EQ(shapes.size(), 71u);
  std::set<std::pair<int, int>> tuned;
  for (const auto& [r, o] : shapes) {
    const int a = size_bucket(r), b = size_bucket(o);
    EXPECT_EQ(r, 1ull << a);
    EXPECT_EQ(o, 1ull << b);
    EXPECT_GE(a + b, 16);
    EXPECT_LE(a + b, 28);
    tuned.insert({a, b});
  }
  // Every class with 2^16 <= R * outputs <= 2^28 and an odd R or output bucket is tuned,
  // or one bucket in one dimension from a tuned class (the runtime's neighbour); classes
  // with both buckets even take the built-in choice.
  for (int a = 1; a <= 23; ++a)
    for (int b = 1; b <= 23; ++b) {
      if (a + b < 16 || a + b > 28 || (a % 2 == 0 && b % 2 == 0)) continue;
      const bool near = tuned.count({a, b}) || tuned.count({a - 1, b}) || tuned.count({a + 1, b}) ||
                        tuned.count({a, b - 1}) || tuned.count({a, b + 1});
      EXPECT_TRUE(near) << a << "," << b;
    }
}

TEST(AxisTuning, SampleShapesAreTheCornerALongCornerOffTheGridAnOddShapeInsideAndTheTop) {
  const auto shapes = axis_sample_shapes(rows_class(10, 14));
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0], (AxisShape{AxisLayout::rows, 1024, 16384}));
  // The longest R over the fewest outputs: off the 16-byte grid.
  EXPECT_EQ(shapes[1], (AxisShape{AxisLayout::rows, 2047, 16384}));
  EXPECT_EQ(shapes[2], (AxisShape{AxisLayout::rows, 1024 + 512 + 1, 16384 + 8192 + 1}));
  // Rows near the top on the vector grid (the plain rows kernel; the odd shape inside
  // runs the peeled twin); the class's largest shape stays its top for fitting.
  EXPECT_EQ(shapes[3], (AxisShape{AxisLayout::rows, 2040, 32767}));
  for (const auto& s : shapes) {
    EXPECT_EQ(size_bucket(s.reduced), 10);
    EXPECT_EQ(size_bucket(s.outputs), 14);
  }
  // Each side of the grid at the class's fewest outputs and at more.
  EXPECT_EQ(on_grid_flags(shapes, 4), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(axis_top_shape(rows_class(10, 14)), (AxisShape{AxisLayout::rows, 2047, 32767}));
  // Columns: the long corner has one output more, the top 2^(b+1) - 8 outputs.
  const db::AxisProblemClass columns{Op::sum, DType::f32, DType::f32, AxisLayout::columns, 9, 14};
  const auto cs = axis_sample_shapes(columns);
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_EQ(cs[1], (AxisShape{AxisLayout::columns, 1023, 16385}));
  EXPECT_EQ(cs[2], (AxisShape{AxisLayout::columns, 769, 24577}));
  EXPECT_EQ(cs[3], (AxisShape{AxisLayout::columns, 1023, 32760}));
  EXPECT_EQ(on_grid_flags(cs, 4), (std::vector<bool>{true, false, false, true}));
  for (DType dtype : {DType::f16, DType::f64}) {  // the top is on the grid of every element size
    const db::AxisProblemClass c{Op::sum, dtype, dtype, AxisLayout::columns, 9, 14};
    EXPECT_EQ(on_grid_flags(axis_sample_shapes(c), size_of(dtype)), (std::vector<bool>{true, false, false, true}));
  }
  EXPECT_EQ(axis_sample_shapes(rows_class(3, 14))[3].reduced, 8u);  // [8, 16): 8 is also the corner
  EXPECT_EQ(axis_sample_shapes(rows_class(2, 14))[3].reduced, 7u);  // below 8: the top
  // No long corner where the corner is off the grid: f32 rows of 2, f16 rows of 4, columns of
  // 2 f32 outputs; R = 1 has no other value.
  const auto small = axis_sample_shapes(rows_class(1, 1));
  ASSERT_EQ(small.size(), 2u);  // each shape once: in [2, 4) the inside shape is the top
  EXPECT_EQ(small[1], (AxisShape{AxisLayout::rows, 3, 3}));
  const db::AxisProblemClass f16_rows{Op::sum, DType::f16, DType::f16, AxisLayout::rows, 2, 14};
  EXPECT_EQ(axis_sample_shapes(f16_rows).size(), 3u);
  const db::AxisProblemClass f64_rows{Op::sum, DType::f64, DType::f64, AxisLayout::rows, 1, 14};
  EXPECT_EQ(axis_sample_shapes(f64_rows)[1], (AxisShape{AxisLayout::rows, 3, 16384}));  // 2 doubles: on it
  const db::AxisProblemClass narrow{Op::sum, DType::f32, DType::f32, AxisLayout::columns, 9, 1};
  EXPECT_EQ(axis_sample_shapes(narrow).size(), 3u);  // 2 outputs; 769 x 3; 1023 x 3
  const auto mixed = axis_sample_shapes(rows_class(2, 3));
  ASSERT_EQ(mixed.size(), 4u);
  EXPECT_EQ(mixed[1], (AxisShape{AxisLayout::rows, 7, 8}));
  EXPECT_EQ(mixed[2], (AxisShape{AxisLayout::rows, 7, 13}));
  EXPECT_EQ(mixed[3], (AxisShape{AxisLayout::rows, 7, 15}));
  EXPECT_EQ(axis_sample_shapes(rows_class(0, 1)).size(), 2u);  // R = 1: (1, 2), (1, 3)
}

// Given the GPU's SM count, a class whose built-in choice on the 16-byte grid changes
// kernel family inside it is also sampled at the grid's interior, last, one 16-byte
// vector past 1.5 * 2^k: f32 rows of R 2^6 take the plain rows kernel at 64 and the
// staged one at 100.
TEST(AxisTuning, AClassWhoseBuiltInChoiceChangesFamilyOnTheGridIsSampledInsideIt) {
  const db::AxisProblemClass rows{Op::sum, DType::f32, DType::f32, AxisLayout::rows, 6, 17};
  const auto plain = axis_sample_shapes(rows);
  const auto shapes = axis_sample_shapes(rows, 132);
  ASSERT_EQ(shapes.size(), plain.size() + 1);
  EXPECT_TRUE(std::equal(plain.begin(), plain.end(), shapes.begin()));
  EXPECT_EQ(shapes.back(), (AxisShape{AxisLayout::rows, 96 + 4, 65536 + 131072 + 1}));
  EXPECT_TRUE(on_grid_flags(shapes, 4).back());
  const TypeRule f32 = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  EXPECT_NE(builtin_axis_spec(Op::sum, f32, canonical_axis_shape(shapes.back()), 132).family,
            builtin_axis_spec(Op::sum, f32, canonical_axis_shape(shapes.front()), 132).family);
  // Columns alike, where the contiguous extent is the outputs.
  const db::AxisProblemClass columns{Op::sum, DType::f32, DType::f32, AxisLayout::columns, 15, 6};
  const auto cs = axis_sample_shapes(columns, 132);
  ASSERT_EQ(cs.size(), axis_sample_shapes(columns).size() + 1);
  EXPECT_EQ(cs.back(), (AxisShape{AxisLayout::columns, 32768 + 16384 + 1, 96 + 4}));
  // One family across the grid: no more shapes.
  EXPECT_EQ(axis_sample_shapes(rows_class(10, 14), 132), axis_sample_shapes(rows_class(10, 14)));
}

// The grid's interior sample ends every power-of-two step of up to half the class's
// lowest contiguous extent with a single 16-byte vector, the worst last step of a kernel
// that walks the extent in whole steps (f32 rows max of 100 x 131072: the plain rows
// kernel, steps of 16, held within 2% of the staged one at 96 and ran 100 at 0.92 times
// it, set BK), where that shape stays in the class; it is on the grid and in the class.
TEST(AxisTuning, TheGridsInteriorSampleEndsEveryStepWithOneVector) {
  int sampled = 0;
  for (const DType dtype : {DType::f32, DType::f64, DType::f16, DType::i32, DType::i64})
    for (const Op op : {Op::sum, Op::max})
      for (const AxisLayout layout : {AxisLayout::rows, AxisLayout::columns})
        for (int a = 1; a <= 22; ++a)
          for (int b = 1; b <= 22; ++b) {
            if (a + b > 30) continue;
            const auto types = resolve_types(op, dtype, dtype);
            if (!types.rule) continue;
            const db::AxisProblemClass c{op, dtype, types.rule->out, layout, a, b};
            const auto base = axis_sample_shapes(c), shapes = axis_sample_shapes(c, 132);
            if (shapes.size() == base.size()) continue;
            ASSERT_EQ(shapes.size(), base.size() + 1);
            ++sampled;
            const AxisShape& s = shapes.back();
            const int k = layout == AxisLayout::rows ? a : b;
            const std::uint64_t contiguous = layout == AxisLayout::rows ? s.reduced : s.outputs;
            const std::uint64_t low = std::uint64_t{1} << k, vector = 16 / size_of(dtype);
            EXPECT_GE(contiguous, low);
            EXPECT_LT(contiguous, 2 * low);
            EXPECT_EQ(axis_class_of(op, *types.rule, s), c);
            EXPECT_TRUE(on_grid_flags({s}, size_of(dtype)).front()) << contiguous;
            if (low + low / 2 + vector < 2 * low) {
              for (std::uint64_t step = 2 * vector; step <= low / 2; step *= 2)
                EXPECT_EQ(contiguous % step, vector) << to_string(dtype) << " 2^" << k << " step " << step;
            } else {
              EXPECT_EQ(contiguous, low + low / 2);  // one vector more would leave the class
            }
          }
  EXPECT_GT(sampled, 20);
}

TEST(AxisTuning, ClassCandidatesFitTheWholeClass) {
  // The staged rows kernel takes rows of up to an eighth of its tile: f32 rows of
  // 16..31 and of 512..1023 fit every shape of their class (tiles of 8192 elements hold
  // 1023), rows of 1024..2047 would not fit at the top, so it is no candidate there.
  auto has_dense = [](const std::vector<AxisKernelSpec>& cs) {
    return std::any_of(cs.begin(), cs.end(), [](const AxisKernelSpec& c) { return c.family == AxisFamily::rows_dense; });
  };
  EXPECT_TRUE(has_dense(axis_class_candidates(Op::sum, kF32, rows_class(4, 16), 132)));
  EXPECT_TRUE(has_dense(axis_class_candidates(Op::sum, kF32, rows_class(9, 12), 132)));
  EXPECT_FALSE(has_dense(axis_class_candidates(Op::sum, kF32, rows_class(10, 12), 132)));
  for (const auto& problem : {rows_class(3, 20), rows_class(13, 9), rows_class(21, 3),
                              db::AxisProblemClass{Op::max, DType::f64, DType::f64, AxisLayout::columns, 7, 9}}) {
    const TypeRule types = *resolve_types(problem.op, problem.dtype, problem.out_dtype).rule;
    const auto candidates = axis_class_candidates(problem.op, types, problem, 132);
    ASSERT_FALSE(candidates.empty());
    std::vector<AxisShape> shapes = axis_sample_shapes(problem);
    shapes.push_back(axis_top_shape(problem));
    for (const auto& c : candidates)
      for (const auto& s : shapes) EXPECT_EQ(axis_spec_mismatch(c, canonical_axis_shape(s)), "") << to_string(c);
    // The built-in choice at the corner is the first candidate.
    EXPECT_EQ(candidates.front(),
              builtin_axis_spec(problem.op, types, canonical_axis_shape(axis_sample_shapes(problem).front()), 132));
  }
}

// The batched tail is searched beside the guarded one wherever a shape of the class
// ends its runs in several loads, though the corner, where the candidates are drawn,
// does not (rows of 512 f32 elements: 128 vectors, a tile of 32 lanes exactly; rows of
// 1016, the class's top sample, leave 126); classes of short rows never take it.
TEST(AxisTuning, ClassCandidatesHoldTheBatchedTailWhereSomeShapeOfTheClassPaysForIt) {
  auto batched = [](const std::vector<AxisKernelSpec>& cs) {
    return std::count_if(cs.begin(), cs.end(), [](const AxisKernelSpec& c) { return c.tail == 1; });
  };
  const auto tens = axis_class_candidates(Op::sum, kF32, rows_class(9, 14), 132);
  EXPECT_GT(batched(tens), 0);
  for (const auto& c : tens)
    if (c.tail == 1) {
      AxisKernelSpec guarded = c;
      guarded.tail = 0;
      EXPECT_NE(std::find(tens.begin(), tens.end(), guarded), tens.end()) << to_string(c);
    }
  EXPECT_EQ(batched(axis_class_candidates(Op::sum, kF32, rows_class(4, 16), 132)), 0);
}

TEST(AxisTuning, CanonicalShapesHaveTheirLayout) {
  EXPECT_EQ(canonical_axis_shape({AxisLayout::rows, 100, 7}).layout, AxisLayout::rows);
  const CanonicalAxes c = canonical_axis_shape({AxisLayout::columns, 100, 7});
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 7u);
  EXPECT_EQ(c.reduced, 100u);
  // One output is the flat layout, not rows.
  EXPECT_THROW(canonical_axis_shape({AxisLayout::rows, 100, 1}), InvalidArgument);
}

TEST(AxisTuning, WorkPlanFollowsLayoutsOpsAndDtypes) {
  auto database = db::Database::open_in_memory();
  NotingProgress progress;
  TuneOptions o;
  o.axis_shapes = {{1024, 4096}, {1 << 20, 16}};
  auto plan = plan_axis_work(o, database, 1, ~0ull, progress);
  // The default scope: sum, min, max (not prod) x f32, f64 x rows, columns x 2 shapes;
  // sums first. The 16-bit floats' axis classes are tuned when named.
  EXPECT_EQ(plan.items.size(), 3u * 2 * 2 * 2);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(plan.items[i].op, Op::sum);
  EXPECT_FALSE(in_axis_scope(o, DType::f16));
  EXPECT_FALSE(in_flat_scope(o, Op::prod, DType::bf16));
  EXPECT_TRUE(in_flat_scope(o, Op::prod, DType::f32));
  EXPECT_TRUE(in_flat_scope(o, Op::max, DType::f16));
  o.default_scope = false;  // as after --dtypes or --ops
  EXPECT_TRUE(in_axis_scope(o, DType::bf16));
  EXPECT_TRUE(in_flat_scope(o, Op::prod, DType::f16));
  EXPECT_FALSE(in_axis_scope(o, DType::i32));
  plan = plan_axis_work(o, database, 1, ~0ull, progress);
  EXPECT_EQ(plan.items.size(), 3u * 4 * 2 * 2);
  o.layouts = {AxisLayout::flat, AxisLayout::columns};
  plan = plan_axis_work(o, database, 1, ~0ull, progress);
  EXPECT_EQ(plan.items.size(), 3u * 4 * 2);
  for (const auto& w : plan.items) EXPECT_EQ(w.problem.layout, AxisLayout::columns);
  o.layouts = {AxisLayout::flat};
  EXPECT_TRUE(plan_axis_work(o, database, 1, ~0ull, progress).items.empty());
  // f16's sums come before bf16's, whatever the order asked: bf16 starts from f16's best.
  o.layouts = {AxisLayout::rows};
  o.dtypes = {DType::bf16, DType::f16};
  o.ops = {Op::sum};
  plan = plan_axis_work(o, database, 1, ~0ull, progress);
  ASSERT_EQ(plan.items.size(), 4u);
  EXPECT_EQ(plan.items[0].types.in, DType::f16);
  EXPECT_EQ(plan.items[1].types.in, DType::f16);
  EXPECT_EQ(plan.items[2].types.in, DType::bf16);
  EXPECT_EQ(plan.items[3].types.in, DType::bf16);
  EXPECT_EQ(plan.items[2].types.acc, DType::f32);
  // Integer dtypes and products are not tuned along axes; mean is the sum's class.
  o.layouts = {AxisLayout::rows};
  o.dtypes = {DType::i32, DType::f64};
  o.ops = {Op::mean, Op::sum, Op::prod};
  plan = plan_axis_work(o, database, 1, ~0ull, progress);
  ASSERT_EQ(plan.items.size(), 2u);
  for (const auto& w : plan.items) {
    EXPECT_EQ(w.op, Op::sum);
    EXPECT_EQ(w.types.in, DType::f64);
  }
}

DeviceKey fake_device(const std::string& uuid) {
  DeviceKey device;
  device.name = "Fake GPU";
  device.cc_major = 9;
  device.sm_count = 132;
  device.uuid = uuid;
  return device;
}

// Stores a class with one measurement at its corner, the winner; `tuned` marks it done,
// as this version of the tool (or `version`) would.
db::RowId store_rows_class(db::Database& database, const DeviceKey& device, const db::AxisProblemClass& c,
                           const std::string& config, bool tuned, const std::string& version = axis_tool_version_string()) {
  db::AxisBucketResult r;
  r.device = device;
  r.problem = c;
  db::AxisMeasurement m = timed(axis_sample_shapes(c).front(), config, 0.01);
  m.op = c.op;
  m.dtype = m.out_dtype = DType::f32;
  m.tool_version = version;
  m.created_at = db::now_timestamp();
  r.measurements = {m};
  r.winner = 0;
  r.tool_version = version;
  r.created_at = db::now_timestamp();
  r.mark_tuned = tuned;
  return database.store_axis_bucket(r).device_id;
}

TEST(AxisTuning, ResumeSkipsStoredClassesAndMemoryLimitsSkipWithANote) {
  auto database = db::Database::open_in_memory();
  const DeviceKey device = fake_device("GPU-00000000-0000-0000-0000-0000000000a1");
  TuneOptions o;
  o.ops = {Op::sum};
  o.dtypes = {DType::f32};
  o.layouts = {AxisLayout::rows};
  o.axis_shapes = {{1024, 4096}, {1 << 20, 64}};
  const db::RowId id = store_rows_class(database, device, rows_class(10, 12),
                                        "rows:block=256,group=32,vec=4,split=none,rows=1", true);
  NotingProgress progress;
  auto plan = plan_axis_work(o, database, id, ~0ull, progress);
  ASSERT_EQ(plan.items.size(), 1u);
  EXPECT_EQ(plan.already_done, 1);
  EXPECT_EQ(plan.retuned, 0);
  EXPECT_EQ(plan.items[0].problem, rows_class(20, 6));
  // A class another version of the tool (or of its kernels) marked done is tuned again.
  store_rows_class(database, device, rows_class(20, 6), "rows:block=256,group=32,vec=4,split=none,rows=1", true,
                   "reduce-tune 0.0.9 kernels 0000000000000000");
  plan = plan_axis_work(o, database, id, ~0ull, progress);
  ASSERT_EQ(plan.items.size(), 1u);
  EXPECT_EQ(plan.items[0].problem, rows_class(20, 6));
  EXPECT_EQ(plan.already_done, 1);
  EXPECT_EQ(plan.retuned, 1);
  // So is one that this tool chose by an earlier axis winner rule (its rows carry the
  // tool's version without the rule's revision); flat buckets do not carry the revision.
  store_rows_class(database, device, rows_class(20, 6), "rows:block=256,group=32,vec=4,split=none,rows=1", true,
                   tool_version_string());
  plan = plan_axis_work(o, database, id, ~0ull, progress);
  ASSERT_EQ(plan.items.size(), 1u);
  EXPECT_EQ(plan.retuned, 1);
  EXPECT_EQ(axis_tool_version_string().rfind(tool_version_string(), 0), 0u) << axis_tool_version_string();
  EXPECT_NE(axis_tool_version_string(), tool_version_string());
  o.fresh = true;
  plan = plan_axis_work(o, database, id, ~0ull, progress);
  EXPECT_EQ(plan.items.size(), 2u);
  EXPECT_EQ(plan.retuned, 0);  // fresh tunes everything anyway
  // The largest sample shape of [2^20, 2^21) x [64, 128), near its top on the vector
  // grid, has (2^21 - 8)(127) elements.
  const std::uint64_t needed = ((2ull << 20) - 8) * 127 * 4;
  plan = plan_axis_work(o, database, id, needed - 1, progress);
  EXPECT_EQ(plan.items.size(), 1u);
  EXPECT_EQ(plan.skipped, 1);
  ASSERT_FALSE(progress.notes.empty());
  EXPECT_NE(progress.notes.back().find("MiB of device memory"), std::string::npos) << progress.notes.back();
}

// After tuning, each untuned class one bucket from a tuned class of the run's scope is
// filled: its candidates are the built-in choice and its tuned neighbours' winners
// (never a filled class's), each fitting the whole class; a class filled before is
// skipped unless the run is fresh; --no-fill plans nothing.
TEST(AxisTuning, FillPlansTheUntunedNeighboursOfTunedClasses) {
  auto database = db::Database::open_in_memory();
  const DeviceKey device = fake_device("GPU-00000000-0000-0000-0000-0000000000f1");
  const std::string w1 = "rows:block=128,group=8,vec=4,split=none,rows=4,unroll=4,sm=4";
  const std::string w2 = "rows:block=256,group=32,vec=4,split=none,rows=1,unroll=8,sm=4";
  const std::string w3 = "rows:block=256,group=16,vec=4,split=none,rows=1,unroll=4,sm=4";
  for (const auto& w : {w1, w2, w3}) {
    const auto spec = parse_axis_config(w, Op::sum, kF32);
    ASSERT_TRUE(spec) << w;
    ASSERT_EQ(axis_config_text(*spec), w);
  }
  store_rows_class(database, device, rows_class(9, 13), w1, true);
  store_rows_class(database, device, rows_class(9, 15), w2, true);
  store_rows_class(database, device, rows_class(8, 14), w3, false);  // filled before
  const db::RowId id = *database.find_device(device.uuid);
  TuneOptions o;
  o.ops = {Op::sum};
  o.dtypes = {DType::f32};
  o.layouts = {AxisLayout::rows};
  o.axis_shapes = {{512, 1 << 13}, {512, 1 << 15}, {1 << 12, 1 << 12}};  // the last is not tuned
  auto plan = plan_axis_fill(o, database, id, ~0ull, 132);
  std::map<db::AxisProblemClass, std::vector<std::string>> planned;
  for (const auto& w : plan.items) {
    EXPECT_TRUE(w.fill);
    EXPECT_EQ(w.op, Op::sum);
    auto& texts = planned[w.problem];
    EXPECT_TRUE(texts.empty()) << "planned twice: " << db::to_string(w.problem);
    for (const auto& c : w.candidates) {
      texts.push_back(axis_config_text(c));
      for (const auto& s : axis_sample_shapes(w.problem))
        EXPECT_EQ(axis_spec_mismatch(c, canonical_axis_shape(s)), "") << texts.back();
      EXPECT_EQ(axis_spec_mismatch(c, canonical_axis_shape(axis_top_shape(w.problem))), "") << texts.back();
    }
    ASSERT_GE(texts.size(), 2u) << db::to_string(w.problem);
    EXPECT_EQ(std::set<std::string>(texts.begin(), texts.end()).size(), texts.size()) << "a config twice";
    // The built-in choice at the corner comes first.
    const auto corner = canonical_axis_shape(axis_sample_shapes(w.problem).front());
    EXPECT_EQ(texts.front(), axis_config_text(builtin_axis_spec(Op::sum, kF32, corner, 132)));
    // Never the filled class's winner, unless it is a built-in choice here.
    std::set<std::string> builtins;
    for (const auto& shape : axis_sample_shapes(w.problem))
      builtins.insert(axis_config_text(builtin_axis_spec(Op::sum, kF32, canonical_axis_shape(shape), 132)));
    if (!builtins.count(w3)) {
      EXPECT_EQ(std::count(texts.begin(), texts.end(), w3), 0) << db::to_string(w.problem);
    }
  }
  // The neighbours of (9, 13) and (9, 15), (9, 14) once, less (8, 14) which has a winner;
  // nothing around the untuned 2^12 x 2^12.
  const std::set<db::AxisProblemClass> want = {rows_class(8, 13), rows_class(10, 13), rows_class(9, 12),
                                               rows_class(9, 14), rows_class(8, 15), rows_class(10, 15),
                                               rows_class(9, 16)};
  std::set<db::AxisProblemClass> got;
  for (const auto& [c, texts] : planned) got.insert(c);
  EXPECT_EQ(got, want);
  EXPECT_EQ(plan.already_done, 0);  // (8, 14) is no neighbour of a tuned class
  // Between the two tuned classes: both winners are candidates.
  const auto& between = planned[rows_class(9, 14)];
  EXPECT_EQ(std::count(between.begin(), between.end(), w1), 1);
  EXPECT_EQ(std::count(between.begin(), between.end(), w2), 1);
  EXPECT_EQ(std::count(between.begin(), between.end(), w3), 0);  // the filled (8, 14)'s
  // One bucket from (9, 13) only: its winner, not (9, 15)'s.
  const auto& below = planned[rows_class(9, 12)];
  EXPECT_EQ(std::count(below.begin(), below.end(), w1), 1);
  EXPECT_EQ(std::count(below.begin(), below.end(), w2), 0);

  // A class filled before (a winner, not marked tuned) is skipped; fresh refills it.
  store_rows_class(database, device, rows_class(9, 14), w1, false);
  plan = plan_axis_fill(o, database, id, ~0ull, 132);
  EXPECT_EQ(plan.items.size(), want.size() - 1);
  EXPECT_EQ(plan.already_done, 1);
  EXPECT_EQ(plan.retuned, 0);
  // One that another version of the tool filled is filled again.
  store_rows_class(database, device, rows_class(9, 14), w1, false, "reduce-tune 0.0.9 kernels 0000000000000000");
  plan = plan_axis_fill(o, database, id, ~0ull, 132);
  EXPECT_EQ(plan.items.size(), want.size());
  EXPECT_EQ(plan.already_done, 0);
  EXPECT_EQ(plan.retuned, 1);
  // The run's line says so.
  EXPECT_NE(axis_fill_note(plan).find("filling 7 untuned axis classes next to tuned ones"), std::string::npos)
      << axis_fill_note(plan);
  EXPECT_NE(axis_fill_note(plan).find("(1 of them filled before by another version"), std::string::npos)
      << axis_fill_note(plan);
  o.fresh = true;
  plan = plan_axis_fill(o, database, id, ~0ull, 132);
  EXPECT_EQ(plan.items.size(), want.size());
  EXPECT_EQ(axis_fill_note(plan).find("another version"), std::string::npos) << axis_fill_note(plan);
  // Memory: classes whose interior shape does not fit are skipped.
  const std::uint64_t largest = 2040ull * 65535 * 4;  // (10, 15)'s top sample, the largest shape
  plan = plan_axis_fill(o, database, id, largest - 1, 132);
  EXPECT_EQ(plan.items.size(), want.size() - 1);
  EXPECT_EQ(plan.skipped, 1);
  // Another op's or layout's scope does not reach these classes; --no-fill plans nothing.
  o.ops = {Op::max};
  EXPECT_TRUE(plan_axis_fill(o, database, id, ~0ull, 132).items.empty());
  o.ops = {Op::sum};
  o.fill_axis_neighbours = false;
  EXPECT_TRUE(plan_axis_fill(o, database, id, ~0ull, 132).items.empty());
}

const std::string kBuiltin(kAxisBuiltinConfig);

TEST(AxisWinner, TheConfigThatHoldsAcrossTheClassWins) {
  const auto shapes = corner_inside_top(rows_class(10, 14));
  ASSERT_EQ(shapes.size(), 3u);
  // a: fastest at the corner, 1.5x the best inside; b: 1.05x at the corner, best inside
  // and at the top; c: the best at the corner and inside, twice b's time at the top.
  // The built-in choice ("builtin", never timed here) sets no bar.
  const std::vector<db::AxisMeasurement> ms = {
      timed(shapes[0], "a", 1.00), timed(shapes[0], "b", 1.05), timed(shapes[1], "a", 3.0), timed(shapes[1], "b", 2.0),
      timed(shapes[2], "a", 5.0),  timed(shapes[2], "b", 4.0),  timed(shapes[0], "c", 0.99), timed(shapes[1], "c", 1.99),
      timed(shapes[2], "c", 8.0)};
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"builtin"}), "b");
  const auto chosen = choose_axis_winners(ms, shapes, {"builtin"}, {});
  ASSERT_TRUE(chosen.winner);
  EXPECT_FALSE(chosen.builtin);
  EXPECT_EQ(ms[*chosen.winner].config, "b");
  EXPECT_EQ(ms[*chosen.winner].reduced, shapes[0].reduced);  // the winner's corner measurement
}

TEST(AxisWinner, FailedOrIncompleteConfigsNeverWin) {
  auto shapes = corner_inside_top(rows_class(10, 14));
  shapes.resize(2);  // the corner and inside
  const std::vector<db::AxisMeasurement> ms = {
      timed(shapes[0], "fast_but_wrong_inside", 0.5), timed(shapes[1], "fast_but_wrong_inside", 0.5,
                                                              db::MeasurementStatus::wrong_result),
      timed(shapes[0], "corner_only", 0.6),  // never measured inside
      timed(shapes[0], "slow", 2.0), timed(shapes[1], "slow", 3.0)};
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"builtin"}), "slow");
  const std::vector<db::AxisMeasurement> none = {timed(shapes[0], "x", 1, db::MeasurementStatus::wrong_result)};
  EXPECT_FALSE(choose_axis_winner(none, shapes, {"builtin"}));
  // The built-in choice made at each shape is no candidate where one of them was not
  // timed, nor where it failed there.
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"corner_only", "corner_only"}), "slow");
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"slow", "fast_but_wrong_inside"}), "slow");
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"slow", "slow"}), kBuiltin);
}

TEST(AxisWinner, TheBuiltInChoiceWinsTiesWithinOnePercent) {
  auto shapes = corner_inside_top(rows_class(10, 14));
  shapes.resize(2);  // the corner and inside
  std::vector<db::AxisMeasurement> ms = {timed(shapes[0], "tuned", 1.000), timed(shapes[1], "tuned", 2.000),
                                         timed(shapes[0], "builtin", 1.005), timed(shapes[1], "builtin", 2.010)};
  // The built-in choice named at the corner alone: that config wins the tie.
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"builtin"}), "builtin");
  // Named at both shapes: the built-in choice made at each shape wins it.
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"builtin", "builtin"}), kBuiltin);
  ms[2].median_ms = 1.03;  // 3% slower: the tuned config wins
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"builtin"}), "tuned");
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"builtin", "builtin"}), "tuned");
}

// Columns of R 2^9 x 2^14 outputs, f32 sums as an H100 timed them (us): the built-in
// choice is "v1" at the corner, "v4" inside and "v4t" at the top. "v1" has the best worst
// ratio (1.05x inside, where "v4t" is 1.09x at the top), but it is 5% behind the built-in
// choice inside, so it may not win. "v4t" holds (within 2% of the built-in choice at every
// shape), but the built-in choice made at each shape does as well as it everywhere, and
// wins: a config that is not the built-in choice everywhere must beat it to be stored.
TEST(AxisWinner, TheWinnerHoldsAgainstTheBuiltInChoiceAtEveryShape) {
  db::AxisProblemClass columns = rows_class(9, 14);
  columns.layout = AxisLayout::columns;
  const auto shapes = corner_inside_top(columns);
  ASSERT_EQ(shapes.size(), 3u);
  const std::map<std::string, std::vector<double>> times = {{"v1", {13.04, 29.72, 48.12}},
                                                            {"v4", {12.98, 28.24, 56.29}},
                                                            {"v4t", {13.03, 28.24, 52.46}},
                                                            {"by32", {13.00, 29.46, 53.33}}};
  std::vector<db::AxisMeasurement> ms;
  for (const auto& [config, t] : times)
    for (std::size_t i = 0; i < shapes.size(); ++i) ms.push_back(timed(shapes[i], config, t[i]));
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"v1", "v4", "v4t"}), kBuiltin);
  // A config ahead of the built-in choice at every shape wins.
  std::vector<db::AxisMeasurement> faster = ms;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    faster.push_back(timed(shapes[i], "v4u", std::vector<double>{12.9, 27.9, 50.0}[i]));
  EXPECT_EQ(choose_axis_winner(faster, shapes, {"v1", "v4", "v4t"}), "v4u");
  // With the built-in choice timed at the corner alone, the best worst ratio among the
  // configs that hold against it there wins, as before.
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"v1"}), "v1");
  // A config 2% behind the built-in choice somewhere still holds; 2.5% does not.
  const std::vector<AxisShape> two(shapes.begin(), shapes.begin() + 2);
  std::vector<db::AxisMeasurement> close = {timed(shapes[0], "b", 1.0),  timed(shapes[1], "b", 2.0),
                                            timed(shapes[0], "t", 0.8),  timed(shapes[1], "t", 2.0 * kAxisHoldFactor)};
  EXPECT_EQ(choose_axis_winner(close, two, {"b", "b"}), "t");
  close[3].median_ms = 2.05;
  EXPECT_EQ(choose_axis_winner(close, two, {"b", "b"}), kBuiltin);
}

// f32 rows sum of R 2^6 x 2^17 outputs on the 16-byte grid, as an H200 timed them (us;
// set BK in docs/BENCHMARKS.md): the built-in choice is the plain rows kernel at the
// corner (64 x 131072) and the staged one (rows_dense) from 68 on. The plain kernel was
// the corner's built-in choice within 1.4% of the staged one at the top (120 x 262143),
// so it won, and served 100 x 131072 at 0.91 times the built-in choice. The built-in
// choice made at each shape is ahead of both at the samples, and wins.
TEST(AxisWinner, TheBuiltInChoiceMadeAtEachShapeStandsForAChoiceThatChangesInsideTheClass) {
  const db::AxisProblemClass rows{Op::sum, DType::f32, DType::f32, AxisLayout::rows, 6, 17};
  const auto all = axis_sample_shapes(rows);
  const std::vector<bool> on_grid = on_grid_flags(all, 4);
  std::vector<AxisShape> shapes;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (on_grid[i]) shapes.push_back(all[i]);
  ASSERT_EQ(shapes.size(), 2u);  // the corner and the top
  const std::vector<db::AxisMeasurement> ms = {timed(shapes[0], "plain", 17.87), timed(shapes[1], "plain", 36.27),
                                               timed(shapes[0], "dense", 19.15), timed(shapes[1], "dense", 35.77)};
  const std::vector<std::string> builtins = {"plain", "dense"};
  EXPECT_EQ(choose_axis_winner(ms, shapes, builtins), kBuiltin);
  const auto chosen = choose_axis_winners(ms, shapes, builtins, {true, true});
  ASSERT_TRUE(chosen.winner);
  EXPECT_TRUE(chosen.builtin);
  EXPECT_FALSE(chosen.grid_winner);
  // The built-in choice's measurement at the corner stands for it.
  EXPECT_EQ(ms[*chosen.winner].config, "plain");
  EXPECT_EQ(ms[*chosen.winner].reduced, shapes[0].reduced);
}

// Where no config holds against the built-in choice at every shape (each built-in choice
// trails the other at the other's shape), the built-in choice made at each shape wins:
// the best worst ratio ("c", 1.4) would be 1.2 times its time at the corner.
TEST(AxisWinner, WhereNoneHoldsTheBuiltInChoiceMadeAtEachShapeWins) {
  auto shapes = corner_inside_top(rows_class(10, 14));
  shapes.resize(2);
  const std::vector<db::AxisMeasurement> ms = {timed(shapes[0], "a", 1.0), timed(shapes[1], "a", 3.0),
                                               timed(shapes[0], "b", 2.0), timed(shapes[1], "b", 2.0),
                                               timed(shapes[0], "c", 1.2), timed(shapes[1], "c", 2.8)};
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"a", "b"}), kBuiltin);
  // Without the built-in choice timed at every shape, the best worst ratio, as before.
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"a", "z"}), "a");  // "a" holds where it is the bar
  EXPECT_EQ(choose_axis_winner(ms, shapes, {"y", "z"}), "c");  // no bar: c 1.4, a 1.5, b 2.0
}

// f16 max of columns of R 2^1 x 2^23 outputs, shaped on what an H200 timed (us; set BG in
// docs/BENCHMARKS.md): eight outputs a thread ("short", the built-in choice on the
// 16-byte grid) is 1.86x faster than four with a peeled tail ("tail", the built-in
// choice off it) at the corner, which is on the grid, and 2.3-2.4x slower at the two odd
// shapes. "grid" (made up) is faster still on the grid and slower off it. The built-in
// choice made at each shape wins the class, where "grid" does not hold off the grid; on
// the grid, "grid" is ahead of it and wins that side.
TEST(AxisWinner, EachSideOfTheGridGetsItsOwnWhereNoConfigBeatsTheBuiltInChoiceAtEveryShape) {
  db::AxisProblemClass columns{Op::max, DType::f16, DType::f16, AxisLayout::columns, 1, 23};
  const auto shapes = corner_inside_top(columns);
  ASSERT_EQ(shapes.size(), 3u);
  const std::vector<bool> on_grid = on_grid_flags(shapes, 2);
  EXPECT_EQ(on_grid, (std::vector<bool>{true, false, false}));  // 2^23; 1.5 * 2^23 + 1 and 2^24 - 1 are odd
  const std::map<std::string, std::vector<double>> times = {{"short", {12.95, 76.61, 105.38}},
                                                            {"tail", {24.10, 33.83, 43.97}},
                                                            {"grid", {11.00, 90.00, 120.00}},
                                                            {"slow", {40.0, 60.0, 80.0}}};
  std::vector<db::AxisMeasurement> ms;
  for (const auto& [config, t] : times)
    for (std::size_t i = 0; i < shapes.size(); ++i) ms.push_back(timed(shapes[i], config, t[i]));
  const std::vector<std::string> builtins = {"short", "tail", "tail"};
  EXPECT_EQ(choose_axis_winner(ms, shapes, builtins), kBuiltin);
  const auto both = choose_axis_winners(ms, shapes, builtins, on_grid);
  ASSERT_TRUE(both.winner);
  ASSERT_TRUE(both.grid_winner);
  EXPECT_TRUE(both.builtin);
  EXPECT_FALSE(both.grid_builtin);
  EXPECT_EQ(ms[*both.winner].config, "short");  // the built-in choice's measurement at the corner
  EXPECT_EQ(ms[*both.grid_winner].config, "grid");
  EXPECT_EQ(ms[*both.winner].outputs, shapes[0].outputs);  // each at the corner, where it was timed
  EXPECT_EQ(ms[*both.grid_winner].outputs, shapes[0].outputs);
  // Without a sample on one side, or with no split asked for, one winner.
  for (const std::vector<bool>& flags : {std::vector<bool>{false, false, false}, {true, true, true}, {}}) {
    const auto one = choose_axis_winners(ms, shapes, builtins, flags);
    EXPECT_FALSE(one.grid_winner);
    EXPECT_TRUE(one.builtin);
  }
  // Off the grid, a config that holds there but is slow at the corner (the class's only
  // sample of its smallest extents: too few blocks for them) does not win over the
  // built-in choice there, a little slower off the grid but fast at every shape: the side
  // off the grid is ranked at all three.
  for (std::size_t i = 0; i < shapes.size(); ++i)
    ms.push_back(timed(shapes[i], "few_blocks", std::vector<double>{41.0, 33.5, 43.5}[i]));
  const auto ranked_everywhere = choose_axis_winners(ms, shapes, builtins, on_grid);
  ASSERT_TRUE(ranked_everywhere.winner && ranked_everywhere.grid_winner);
  EXPECT_TRUE(ranked_everywhere.builtin);
  EXPECT_EQ(ms[*ranked_everywhere.grid_winner].config, "grid");
  // A config that holds against the built-in choice at every shape and ranks ahead of it
  // serves the class; the grid keeps its own where another is ahead there ("grid", 4.5%
  // faster at the grid's sample).
  const std::vector<double> both_times = {11.5, 33.0, 43.0};
  for (std::size_t i = 0; i < shapes.size(); ++i) ms.push_back(timed(shapes[i], "both", both_times[i]));
  const auto held = choose_axis_winners(ms, shapes, builtins, on_grid);
  ASSERT_TRUE(held.winner && held.grid_winner);
  EXPECT_EQ(ms[*held.winner].config, "both");
  EXPECT_FALSE(held.builtin);
  EXPECT_EQ(ms[*held.grid_winner].config, "grid");
  // One ahead on the grid too serves both sides.
  const std::vector<double> best_times = {10.9, 33.0, 43.0};
  for (std::size_t i = 0; i < shapes.size(); ++i) ms.push_back(timed(shapes[i], "best", best_times[i]));
  const auto one = choose_axis_winners(ms, shapes, builtins, on_grid);
  ASSERT_TRUE(one.winner);
  EXPECT_EQ(ms[*one.winner].config, "best");
  EXPECT_FALSE(one.grid_winner);
}

// f32 rows of R 2^6 x 2^17 outputs (times in us: the corner and the top as an H200 timed
// sums, set BK; the rest made up): the plain rows kernel's peeled twin is ahead of the built-in
// choice off the grid, and the plain kernel held on it (within 2% of the staged one at
// 96 and 120, revision 21's samples there), so it won the class and ran 100 x 131072 at 0.93 times the built-in
// choice. On the grid, the built-in choice made at each shape is as fast or faster at
// every sample, and serves that side.
TEST(AxisWinner, OnTheGridTheBuiltInChoiceStaysUnlessAConfigBeatsItThere) {
  const db::AxisProblemClass rows{Op::sum, DType::f32, DType::f32, AxisLayout::rows, 6, 17};
  const auto shapes = axis_sample_shapes(rows, 132);  // corner, long corner, inside, top, the grid's interior
  ASSERT_EQ(shapes.size(), 5u);
  const std::vector<bool> on_grid = on_grid_flags(shapes, 4);
  ASSERT_EQ(on_grid, (std::vector<bool>{true, false, false, true, true}));
  const std::map<std::string, std::vector<double>> times = {{"plain", {17.9, 30.0, 34.0, 36.3, 29.5}},
                                                            {"dense", {19.2, 34.0, 38.0, 35.8, 29.0}}};
  std::vector<db::AxisMeasurement> ms;
  for (const auto& [config, t] : times)
    for (std::size_t i = 0; i < shapes.size(); ++i) ms.push_back(timed(shapes[i], config, t[i]));
  const std::vector<std::string> builtins = {"plain", "dense", "dense", "dense", "dense"};
  EXPECT_EQ(choose_axis_winner(ms, shapes, builtins), "plain");
  const auto chosen = choose_axis_winners(ms, shapes, builtins, on_grid);
  ASSERT_TRUE(chosen.winner && chosen.grid_winner);
  EXPECT_EQ(ms[*chosen.winner].config, "plain");
  EXPECT_TRUE(chosen.grid_builtin);
  EXPECT_EQ(ms[*chosen.grid_winner].config, "plain");  // the built-in choice's measurement at the corner
}

// f32 columns of R 2^9 x 2^14 outputs (times in us made up, the built-in choice's in the
// proportions an H200 showed at 1000 x 16385, set BH in docs/BENCHMARKS.md): off the grid
// the built-in choice takes blocks of 512 with a peeled tail ("t512") over the class's
// fewest outputs (the long corner, 1023 x 16385) and blocks of 256 ("b256") higher up.
// "x" is ahead of the built-in choice at the corner, inside and the top, but over 16385
// outputs it takes 1.21 times "t512"'s time. Sampled at the corner, inside and the top
// alone, the class took "x"; the long corner judges it there, and the built-in choice
// made at each shape wins.
TEST(AxisWinner, TheLongCornerJudgesTheSideOffTheGridOverTheClassesFewestOutputs) {
  const db::AxisProblemClass columns{Op::sum, DType::f32, DType::f32, AxisLayout::columns, 9, 14};
  const auto shapes = axis_sample_shapes(columns);  // corner, long corner, inside, top
  ASSERT_EQ(shapes.size(), 4u);
  const std::vector<bool> on_grid = on_grid_flags(shapes, 4);
  const std::map<std::string, std::vector<double>> times = {{"g512", {11.0, 27.8, 22.0, 40.0}},
                                                            {"t512", {11.4, 23.2, 21.2, 42.6}},
                                                            {"b256", {11.8, 28.0, 20.8, 41.0}},
                                                            {"v4", {11.8, 30.0, 22.5, 38.0}},
                                                            {"x", {10.5, 28.0, 20.0, 37.0}}};
  std::vector<db::AxisMeasurement> ms;
  for (const auto& [config, t] : times)
    for (std::size_t i = 0; i < shapes.size(); ++i) ms.push_back(timed(shapes[i], config, t[i]));
  const std::vector<std::string> builtins = {"g512", "t512", "b256", "v4"};
  const auto chosen = choose_axis_winners(ms, shapes, builtins, on_grid);
  ASSERT_TRUE(chosen.winner);
  EXPECT_TRUE(chosen.builtin);
  // On the grid, "x" is ahead of the built-in choice at both samples, and serves that side.
  ASSERT_TRUE(chosen.grid_winner);
  EXPECT_EQ(ms[*chosen.grid_winner].config, "x");
  const std::vector<std::size_t> kept = {0, 2, 3};
  std::vector<AxisShape> without;
  std::vector<bool> without_grid;
  std::vector<std::string> without_builtins;
  for (std::size_t i : kept) {
    without.push_back(shapes[i]);
    without_grid.push_back(on_grid[i]);
    without_builtins.push_back(builtins[i]);
  }
  const auto blind = choose_axis_winners(ms, without, without_builtins, without_grid);
  ASSERT_TRUE(blind.winner);
  EXPECT_FALSE(blind.builtin);
  EXPECT_EQ(ms[*blind.winner].config, "x");
}

TEST(AxisWinner, AFloatSumWinnerAlsoServesTheMean) {
  const std::string config = "rows:block=256,group=32,vec=4,split=none,rows=1,unroll=8,sm=4";
  const auto specs = axis_runtime_specs(rows_class(10, 14), config);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].op, Op::sum);
  EXPECT_EQ(specs[1].op, Op::mean);
  EXPECT_EQ(axis_config_text(specs[1]), config);
  EXPECT_EQ(axis_runtime_specs(rows_class(10, 14, Op::max), config).size(), 1u);
  EXPECT_TRUE(axis_runtime_specs(rows_class(10, 14), "not a config").empty());
}

// A class that keeps the built-in choice made at each shape loads that choice's kernels
// at its sample shapes and top (the sum's and the mean's), each once.
TEST(AxisWinner, TheBuiltInChoiceMadeAtEachShapeLoadsItsKernelsAtTheClassesShapes) {
  const db::AxisProblemClass rows{Op::sum, DType::f32, DType::f32, AxisLayout::rows, 6, 17};
  EXPECT_TRUE(axis_runtime_specs(rows, kBuiltin).empty());  // no GPU named: no SM count
  const auto specs = axis_runtime_specs(rows, kBuiltin, 132);
  std::set<std::string> sums, means;
  for (const auto& s : specs) (s.op == Op::sum ? sums : means).insert(axis_config_text(s));
  EXPECT_EQ(sums.size() + means.size(), specs.size());  // no repeats
  std::set<std::string> expected;
  std::vector<AxisShape> at = axis_sample_shapes(rows, 132);
  at.push_back(axis_top_shape(rows));
  const TypeRule types = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  for (const auto& s : at) expected.insert(axis_config_text(builtin_axis_spec(Op::sum, types, canonical_axis_shape(s), 132)));
  EXPECT_EQ(sums, expected);
  EXPECT_GE(expected.size(), 2u);  // the plain rows kernel at 64, the staged one from 68 on
  EXPECT_EQ(means, expected);
  EXPECT_EQ(axis_runtime_specs(rows_class(6, 17, Op::max), kBuiltin, 132).size(), expected.size());
}

}  // namespace
}  // namespace reduce_tune::tuner
