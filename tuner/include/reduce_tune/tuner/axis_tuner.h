// Tuning axis reductions (issue 12): for each class (op, types, layout, R bucket,
// outputs bucket) the candidates of engine/axis.h are verified per output element and
// timed at a corner shape of the class and at one inside it, and the config that holds
// best across both wins. Everything the GPU run does not need (which classes, which
// shapes, which winner) is here as plain functions, tested without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/db/database.h"
#include "reduce_tune/db/records.h"
#include "reduce_tune/engine/axis.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/tuner/tune_options.h"
#include "reduce_tune/types.h"

namespace reduce_tune::tuner {

class Progress;

// A C-contiguous shape of one layout: rows [outputs, R] reduced along dim 1, columns
// [R, outputs] reduced along dim 0.
struct AxisShape {
  AxisLayout layout = AxisLayout::rows;
  std::uint64_t reduced = 1;
  std::uint64_t outputs = 1;
  std::uint64_t elements() const { return reduced * outputs; }
  friend bool operator==(const AxisShape&, const AxisShape&) = default;
};
// Its canonical form (layout rows or columns; throws InvalidArgument for extents that
// do not give that layout: R < 1, outputs < 2 for rows, outputs < 2 or R < 2 for columns).
CanonicalAxes canonical_axis_shape(const AxisShape& shape);

// The class a shape falls in (op and types of the caller's problem).
db::AxisProblemClass axis_class_of(Op op, const TypeRule& types, const AxisShape& shape);

// The shapes a class is measured at, each once: its corner (2^a, 2^b); where the corner
// lies on the 16-byte grid (axis_on_16byte_grid), its long corner off the grid, the
// longest R over the fewest outputs (2^(a+1) - 1; rows: 2^b rows, columns: 2^b + 1
// outputs); one inside the class where the bucket holds more than one value
// (1.5 * 2^k + 1 in each such dimension: odd, a multiple of no vector or tile); and its
// top (axis_top_shape, with a contiguous extent of 8 and more at 2^(k+1) - 8, on the
// vector grid). So each side of the grid is sampled at the class's fewest outputs and at
// more. The first is the one the winner's time is stored at. A rule that changes inside
// the class (rows of 1000 want more threads than rows of 512) shows at the top. Given the
// GPU's SM count, last, the grid's interior (the contiguous extent 1.5 * 2^k, the other
// the inside shape's) where it lies on the grid and the built-in choice there is of
// another kernel family than at the corner (f32 rows of 64 take the plain rows kernel,
// of 96 the staged one).
std::vector<AxisShape> axis_sample_shapes(const db::AxisProblemClass& problem, int sm_count = 0);
// The largest shape of the class (2^(a+1) - 1, 2^(b+1) - 1): a winner must fit it.
AxisShape axis_top_shape(const db::AxisProblemClass& problem);

// The candidates of a class: those of engine/axis.h at its corner that also fit its
// interior and top shapes (a dense kernel with a size limit must hold for the whole
// class), the built-in choice of each sample shape first.
std::vector<AxisKernelSpec> axis_class_candidates(Op op, const TypeRule& types, const db::AxisProblemClass& problem,
                                                  int sm_count);

struct AxisWorkItem {
  Op op;
  TypeRule types;
  db::AxisProblemClass problem;
  // A class filled in between tuned ones: these configs are timed (no search), and the
  // class is not marked tuned.
  bool fill = false;
  std::vector<AxisKernelSpec> candidates;
};
struct AxisWorkPlan {
  std::vector<AxisWorkItem> items;  // sums first (their results narrow the other ops' search)
  int already_done = 0;
  int skipped = 0;  // did not fit in device memory
  int retuned = 0;  // among items: marked done (or filled) by another tool version
};
// The axis classes a run tunes: `options.layouts` rows and columns x the float dtypes
// among options.dtypes x options.ops (mean as sum) x options.axis_shapes (or the default
// grid), minus the classes the database holds for the device (unless options.fresh) and
// those whose shapes would not fit in `input_capacity` bytes.
AxisWorkPlan plan_axis_work(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                            std::uint64_t input_capacity, Progress& progress);

// The classes a run fills after tuning (options.fill_axis_neighbours): each class one
// bucket in R or in outputs from a class of the run's scope that the database holds as
// tuned on the device, which is itself not tuned and (unless options.fresh) has no
// winner. The runtime would otherwise serve it a neighbour's winner, never timed there.
// Its candidates are the built-in choice at its sample shapes and the winners of its
// tuned neighbours, those that fit the whole class; a class with one candidate is left
// out (the fallback gives the same config). Sums first, as in plan_axis_work; classes
// that would not fit in `input_capacity` bytes are skipped.
AxisWorkPlan plan_axis_fill(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                            std::uint64_t input_capacity, int sm_count);
// The line a run prints before filling `fill`'s classes: how many, and how many of them
// another version of reduce-tune or of its kernels filled before (filled again).
std::string axis_fill_note(const AxisWorkPlan& fill);

// What an axis class's measurements, winner and done mark record: tool_version_string()
// and the revision of the axis tuner's rule and programs, so that a run tunes again the
// classes an earlier revision chose or compiled, and leaves the flat buckets done. 2: a
// class's winner holds against the built-in choice at every sample shape (ac6b866). 3: an
// axis program carries the finalize kernel only where it splits in two passes, which
// changes the binary-cache key of every other winner's program; without a new tune the
// runtime would compile those at their first call in every process (it never writes the
// database) and `db gc` would drop the binaries stored under the old keys. 4: the built-in
// choice a winner holds against (and that fills classes) reads columns off the 4-element
// grid with a thread per output from R = 32, where the twin's vectors were up to 1.7 times
// slower; classes filled with the old choice would keep it at those shapes. 5: the built-in
// choice reads columns of a thread per output from 31 outputs per SM up to one wave
// unsplit in blocks of 1024, with eight loads in flight where few threads are resident per
// SM, and 16-bit columns on the 2-element grid there two outputs a thread, split (up to
// 2.07 times faster than before at shapes between the grid's output counts). 6: the
// built-in choice splits R only where each split reads at least 32 rows (columns of 8 to
// 15 rows over 2^17 to 2^18 outputs on 132 SMs were split in two, up to 3 times slower), and reads
// columns of 257 outputs up to 8 per SM over R >= 8192 with eight loads in flight, two
// outputs a thread on the 2-element grid (up to 2.67 times faster). 7: general views whose
// block per output reads element by element and splits R (every other element, rows of a
// stride) take blocks of 256 with eight loads in flight (up to 1.77 times faster), and
// general views whose runs of 2 to 4 reduced elements lie side by side with the outputs
// read them with 1 to 4 lanes per output (up to 2.6 times faster). 8: columns splits of at
// most 1536 partials fold in the last block, up to 8 outputs over a short R take one block
// across R, general views with a kept dimension the densest give an output at most R / 2
// lanes, and split columns of a thread per output keep four loads in flight for min and
// max (eight blocks per SM in the band of 257 outputs up to 8 per SM) and take eight for
// 16-bit sums from 8 outputs per SM (up to 1.7 times faster, set AJ). 9: split columns
// fold in one launch, the last block of each group of blocks sharing tiles of outputs
// folding those (a ticket per group), where a second kernel folded past 1536 partials;
// the tuner's columns candidates split so too. 10: a general view's split takes the count
// of blocks per output, rounded down or up, whose busiest SM reads least (no last round of
// a few blocks; up to 1.41 times faster), and eight slices and more of contiguous columns
// over R <= 2^14 that the dense kernel would split take a thread per output instead (up
// to 2.58 times faster, set AT). 11: 8-byte dense columns of up to 64 outputs a slice,
// split, take blocks of 256 with four loads in flight, interleaved steps up to 16 outputs
// and a second kernel from 17, and one slice of up to 16 outputs is read dense from R =
// 2^16 (set AU). 12: 16-bit means of columns whose threads read fewer loads than a tile
// (R = 2 or 3) take the guarded loads, not the batched tail (1.02 to 1.15 times faster,
// set AV). 13: general views whose kept dimension is the densest, split, take blocks of
// 128 and a second kernel from 1.5 x 2^20 elements however few their outputs (the last
// block folded up to 64 in blocks of 256: 1.10 to 1.80 times faster), and i64 min and max of 2
// to 4 long rows per SM take blocks of 512 (1.01 to 1.17 times faster, set AW). 14:
// columns of R = 2 or 3 read in vectors of outputs, a thread walking R alone, take kernels
// compiled to fit 1024 threads per SM (4-byte elements) or 1536 (16-bit), their registers
// capped, and the tuner's candidates hold both forms (set AX). 15: those of 4-byte
// elements in blocks of 256 read two vectors of outputs a thread a pass on the grid (0.98
// to 1.11 times as fast), and off it the twin's vectors, capped, where they took a thread
// per output (1.13 to 1.30 times faster; set AZ). 16: converting copies (R = 1) and
// 16-bit columns of R = 2 to 4 on the 16-byte grid take the short_columns family (1.03 to
// 2.07 and 1.10 to 2.02 times faster, set BA). 17: 16-bit columns of R >= 32 on the
// 2-element grid but off the 4-element one take two outputs a thread where they took one
// (1.02 to 1.28 times faster, set BB). 18: contiguous rows of 2 to 7 four-byte elements
// from 2^22 rows (R = 2, 3) or 2^24 (R = 4 to 7) are staged a tile at a time (rows_dense,
// a lane per row; means only over R = 2 and 4) where a thread read its row alone (1.01 to
// 1.17 times faster, set BC). 19: the winner rule: a class sampled on both sides of the
// 16-byte grid where no config holds against the built-in choice at every shape keeps a
// second winner for the grid (choose_axis_winners; f16 columns max 3 x 16777216 0.70 ->
// 0.95 times the built-in choice, set BG). 20: the sample shapes: a long corner off the
// grid, and columns' top on it (axis_sample_shapes; f32 columns sum of 1000 x 16385 and
// max of 65537 x 1000 ran 0.82 and 0.90 times the built-in choice, set BH). 21: the
// built-in choice made at each shape is a candidate of its own, and wins ties
// (kAxisBuiltinConfig; f32 rows sum of 100 x 131072 ran 0.91 times it, set BK); a class
// whose built-in choice changes family on the grid is sampled at the grid's interior
// (axis_sample_shapes). 22: that interior sample is one 16-byte vector past 1.5 * 2^k,
// the last step of any power-of-two step a single vector (f32 rows max of 100 x 131072
// ran 0.92 times the built-in choice, the plain rows kernel held at 96, set BK). 23: the
// staged rows kernel (rows_dense) launches its twin, skewed by 3, where a model of its
// fold finds skew 1 meeting 3.5 or more words to a bank (rows_dense_skew; the built-in
// choice's f32 rows where skew 3 took over ran 0.47 to 1.00 times as long, set BM). 24:
// long columns of 1000 to 4096 outputs side by side take the staged columns kernel
// (columns_staged_pays), and columns classes of R >= 4096 search it (set BN). 25: split
// columns a thread per output in blocks of 256 at four blocks per SM are compiled to keep
// just those resident (capped_split_columns: every load of a round issued before the
// first fold), with eight loads in flight and a ticket for elements of 4 bytes and less;
// 16-bit sums no longer staged, and 16-bit columns of R >= 12288 up to 6200 outputs split
// where they read unsplit in blocks of 1024 (1.02 to 1.73 times faster, set BO). 26:
// 4-byte columns on the 4-element grid up to 48 outputs per SM split so too where they
// read four outputs a thread in blocks of 128 (R < 16384 from 257 outputs, else from 2048;
// from R = 16384 rows of whole 128 bytes only), and 16-bit pairs on the 2-element grid
// from 8 up to 31 outputs per SM (over R >= 8192, from 16 outputs per SM where R >= 2^16
// read four outputs a thread) take two outputs a thread uncapped, the last block folding
// up to 384 MiB; 16-bit vectors of four unsplit keep eight loads in flight from R = 4096,
// and 4-byte vectors of four in blocks of 128 fold in one launch where a group's fold
// takes four round trips or fewer (1.00 to 1.47 times as fast where the choice changed
// over the 156 columns shapes of set BP's last A/B). 27: 16-bit columns on the 4-element
// grid (base too) read four outputs a thread in blocks of 128 with eight loads in flight
// from R = 16384 over 31 to 64 outputs per SM (the last block folding), and from R = 2^16
// over 512 outputs up to 8 per SM; where vectors of four read R >= 2^16 from 8 up to 16
// outputs per SM, pairs instead; 16-bit pairs over 31 to 64 outputs per SM fold in one
// launch (set BQ). 28: f32 min and max of long columns off the 16-byte grid staged as
// the sums are, R >= 24576 over 1000 to 6200 outputs, where a staged element folds with
// one instruction (set BR). 29: i32 and u32 min and max there too (set BR). 30: a
// thread per output summing R = 6, 7 (a tile and two or three loads past it at four in
// flight) takes the batched tail from 2^22 elements, and so do 8-byte sums of R = 3
// (not four outputs a pass); the twin's vectors of four over R = 2 or 3 only over slices
// of 256 outputs and more (set BS). 31: general views whose densest dimension is kept,
// read element by element in 4 bytes or less, split over R >= 2048 where their blocks hold
// fewer than 8 bytes a load per SM, and split in groups of 8 across R (set BT). 32:
// contiguous rows of 2 to 8 elements packed a chunk of whole 16-byte vectors a thread
// (rows_packed; set BU). 33: general views of dense rows whose columns fold into their
// outputs, from 2^22 elements, read as columns (columns_folded; set BW). 34: dense rows of
// 9 to 16 elements a thread per row over 2^24 rows and more in blocks of 512 (set BY). 35:
// split rows of 4 bytes and less from 2^22 elements in blocks of 128, their splits taking
// tiles in turn, at four per SM below 2^23 elements and eight from there (but 4-byte rows
// over more than 64 outputs from 2^25 elements); rows split in tiles in blocks of 128 at
// eight per SM round their split count down past 8.5 blocks an SM (set CC). 36: of
// revision 34's rows, 16-bit sums, min and max of rows of 16, f64 sums and means and i64
// min and max read four rows a pass (set CD). 37: 16-bit columns of one slice off the
// 4-element grid read as the aligned vectors that hold them (the twin's funnel, set CF).
inline constexpr int kAxisRuleRevision = 37;
const std::string& axis_tool_version_string();

// How much slower than the built-in choice at a sample shape a config may be and still
// hold against it there.
inline constexpr double kAxisHoldFactor = 1.02;

// The winner among a class's measurements: of the configs verified and timed at every
// sample shape, the one whose worst ratio to the fastest config at any shape is lowest.
// `builtins` holds the built-in choice (config text) at each sample shape, and that
// choice made at each shape is a candidate of its own, kAxisBuiltinConfig, where it was
// timed at every one. Where some configs hold against the built-in choice at every
// shape (at most kAxisHoldFactor times its time there, wherever it was timed), the
// winner is one of them (kAxisBuiltinConfig holds): the built-in choice can change inside
// a class, and a winner behind it at one shape would make tuning a loss there. Among
// configs within 1% of the best score, kAxisBuiltinConfig wins if it is one of them, else
// the built-in choice of the first shape, so a rerun or a tie keeps what a user gets
// without tuning: the built-in choice also changes between the sample shapes, where a
// config that is it at the samples is not (f32 rows sum of 100 x 131072: the plain rows
// kernel, the built-in choice at 64 x 131072, ran 0.91 times the staged one an H200's
// built-in choice takes there; the stored config served it, set BK). Returns the winning
// config's text.
std::optional<std::string> choose_axis_winner(const std::vector<db::AxisMeasurement>& measurements,
                                              const std::vector<AxisShape>& shapes,
                                              const std::vector<std::string>& builtins);

// A class's winners where its sample shapes lie on both sides of the 16-byte grid
// (`on_grid[i]`: axis_on_16byte_grid of shapes[i]). Each side may get a winner of its own
// by choose_axis_winner's rule, for its kernels differ (no peeled ends on the grid) and
// the built-in choice can change family across it (16-bit columns of R = 2 to 4 read
// eight outputs a thread on it, four off it): `grid_winner`, judged at the shapes on the
// grid alone, is kept where it differs from the class's winner; on the grid, a config
// must beat the built-in choice made at each shape at the grid's samples, or that choice
// serves there (a config can fall off a cliff between the samples that the built-in
// choice steps around). `winner` serves the shapes off the grid: choose_axis_winner's
// where that is a config; where it is kAxisBuiltinConfig, the winner held against the
// built-in choice at the shapes off the grid but ranked by its worst ratio at every shape
// (the corner is the class's only sample of its smallest extents). Where one side has no
// sample, one winner (grid_winner empty). Indices of measurements at the first sample
// shape where the config was timed there, else at the grid's first; for
// kAxisBuiltinConfig (`builtin`, `grid_builtin`), the built-in choice's measurement there.
struct AxisWinnerChoice {
  std::optional<std::size_t> winner;
  std::optional<std::size_t> grid_winner;
  bool builtin = false;       // the winner is kAxisBuiltinConfig
  bool grid_builtin = false;  // the grid's winner is
};
AxisWinnerChoice choose_axis_winners(const std::vector<db::AxisMeasurement>& measurements,
                                     const std::vector<AxisShape>& shapes, const std::vector<std::string>& builtins,
                                     const std::vector<bool>& on_grid);

// The kernels the runtime loads for an axis winner: its own, and for a float sum the
// mean it also serves. The database keeps their binaries, so that no call compiles. For
// kAxisBuiltinConfig, the built-in choice at the class's sample shapes and top on a GPU
// of `sm_count` SMs (none where it is 0).
std::vector<AxisKernelSpec> axis_runtime_specs(const db::AxisProblemClass& problem, const std::string& config,
                                               int sm_count = 0);

// The axis checks of single candidates outside a run, on device `ordinal`: exactly what
// a candidate of a class goes through at one shape (outputs poisoned, then every output
// compared bit for bit with the reference on the exact data set). The mutation test
// feeds it deliberately broken kernels.
class AxisChecker {
 public:
  explicit AxisChecker(int ordinal);
  ~AxisChecker();
  AxisChecker(const AxisChecker&) = delete;
  AxisChecker& operator=(const AxisChecker&) = delete;
  // "" when `spec` reduces `shape` right, else why not. `nvrtc_options` are extra
  // compile options (-DRT_MUTATION=k).
  std::string check(const AxisKernelSpec& spec, const AxisShape& shape,
                    const std::vector<std::string>& nvrtc_options = {});
  // Runs `spec` on the checks' data at `shape`, writing shape.outputs values to `out`
  // (device memory); for tests that alter a right answer.
  void run(const AxisKernelSpec& spec, const AxisShape& shape, void* out);
  // Compares `got` (device memory, shape.outputs values of types.out) with the
  // reference of (op, types) on the exact data at `shape`: "" when every output
  // matches bit for bit, else how many differ and the first. The test that feeds the
  // comparison a wrong answer uses it directly.
  std::string compare(Op op, const TypeRule& types, const AxisShape& shape, const void* got);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reduce_tune::tuner
