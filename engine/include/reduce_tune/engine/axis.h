// The host side of the axis kernels (kernel_templates/rt/axis.cuh): what decides one
// compiled axis kernel, its source, the built-in choice of config for a canonical shape,
// the launch plan and the enqueue step. Enqueueing allocates nothing and never waits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"

namespace reduce_tune {

enum class AxisFamily : std::uint8_t {
  rows = 0,
  general = 1,
  columns = 2,
  columns_dense = 3,
  rows_dense = 4,
  transpose = 5,
  short_columns = 6,
  columns_staged = 7,
  rows_packed = 8,
  columns_folded = 9
};
const char* to_string(AxisFamily family);

// How a reduction split across blocks along R finishes: not split; a second kernel folds
// the partials; or the last block to finish does (one launch). ticket: in columns, the
// last of the splits of each group of blocks sharing tiles of outputs folds those
// outputs (a ticket slot per group, the folds side by side); in the other families, the
// last block folds every output (for few outputs). Splits read one contiguous chunk of R
// each, except ticket_tiles (rows and columns_dense): a ticket finish whose splits take
// tiles of R in turn, as a grid-stride loop does.
enum class AxisSplit : std::uint8_t { none = 0, two_pass = 1, ticket = 2, ticket_tiles = 3 };
const char* to_string(AxisSplit split);

struct AxisKernelSpec {
  Op op = Op::sum;
  TypeRule types{DType::f32, DType::f32, DType::f32};
  AxisFamily family = AxisFamily::rows;
  std::uint32_t block = 256;
  // rows, general: threads per output (1..32, or the block); columns: threads across R;
  // rows_dense: lanes folding a staged row (1..32); columns_dense: 1 (the block's threads
  // cover whole columns); columns_staged: threads folding a staged column (1, 2 or 4).
  std::uint32_t group = 32;
  std::uint32_t vec = 1;  // elements per load (rows)
  AxisSplit split = AxisSplit::none;
  // Outputs a group (rows, general with group <= 32) or a thread (columns with by = 1)
  // takes per pass: 1 or 4; columns of vectors (vec > 1, by = 1, unsplit): vectors of
  // outputs a thread takes per pass, 1, 2 or 4; columns_staged: columns a thread folds,
  // 1, 2 or 4 (a tile holds block / group x rows columns).
  std::uint32_t rows_per_pass = 1;
  // Independent loads in flight per thread along R: 4 or 8.
  std::uint32_t unroll = 4;
  // Split plans: blocks per SM the split of R aims at in all (4, 8 or 16).
  std::uint32_t blocks_per_sm = 4;
  // How the end of a run along R is read (rows, columns; rt::batched_index in
  // kernel_templates/rt/axis.cuh): 0, each thread a guarded load per step; 1, the last,
  // partial tile's loads issued together ("tail=1" in the config text).
  std::uint32_t tail = 0;
  // 1: output j is written where the launch's AxisOutputOrder puts it (columns,
  // columns_dense and general; ",ordered=1"). Not tuned: the runtime's form of a tuned or
  // built-in spec for a reordered view written in one launch.
  std::uint32_t ordered = 0;
  // Columns: threads per SM the kernel is compiled to fit, its registers capped so that
  // occupancy / block blocks stay resident (1024, 1536 or 2048; ",occ=" in the config
  // text), or 0, the compiler's own choice. Short columns of many outputs wait on their
  // loads, and more resident threads keep more of them in flight (occupancy_that_pays).
  std::uint32_t occupancy = 0;
  friend bool operator==(const AxisKernelSpec&, const AxisKernelSpec&) = default;
};
std::string to_string(const AxisKernelSpec& spec);

// Everything that decides an axis kernel's program, in 64 bits (no string per call): two
// valid specs have one key only where they are equal. The runtime's kernel cache is keyed
// by it.
std::uint64_t axis_spec_key(const AxisKernelSpec& spec);

// Why `spec` is not a valid instantiation, or empty when it is.
std::string axis_spec_problem(const AxisKernelSpec& spec);

// The tunables of a spec (not its op and types) as one canonical line, what the
// database stores: "rows:block=256,group=4,vec=4,split=none,rows=4,unroll=4,sm=4", with
// ",tail=1" where tail is 1 and ",occ=N" where occupancy is set. unroll and sm may be
// left out (4 each), tail and occ (0).
std::string axis_config_text(const AxisKernelSpec& spec);
// Parses axis_config_text's form into a spec of `op` and `types`; empty (with `error`
// set when given) for text that is not one, or names an invalid instantiation.
std::optional<AxisKernelSpec> parse_axis_config(std::string_view text, Op op, const TypeRule& types,
                                                std::string* error = nullptr);
// The config text a tuned class stores where no config beat the built-in choice made for
// each shape (builtin_axis_spec) across its sample shapes: the runtime then makes that
// choice per shape, as it does untuned. The built-in choice can change inside a class
// (f32 rows of 64 take the plain rows kernel, of 68 to 127 the staged one), so no one
// config can stand for it. Not a config: parse_axis_config refuses it.
inline constexpr std::string_view kAxisBuiltinConfig = "built-in";

// Why `spec` cannot reduce `shape` (a family of another layout, a dense kernel past its
// limits), or empty when it can. Every config of a tuned class fits every shape of it.
// Static text, no allocation: a call checks its config with it every time.
std::string_view axis_spec_mismatch(const AxisKernelSpec& spec, const CanonicalAxes& shape);

// The tuner's candidates for a rows or columns shape on a GPU of `sm_count` SMs: the
// families of its layout across block size, threads per output (or across R), vector
// width, outputs per pass and the split of R across blocks, each fitting `shape`. The
// built-in choice is always among them.
std::vector<AxisKernelSpec> axis_candidates(Op op, const TypeRule& types, const CanonicalAxes& shape, int sm_count);

struct AxisLaunchPlan {
  std::uint32_t grid = 1;           // blocks of the main kernel (a multiple of splits)
  std::uint32_t block = 256;
  std::uint64_t splits = 1;         // blocks per output along R
  std::uint32_t finalize_grid = 0;  // blocks of the finalize kernel (0: none)
  std::uint64_t partial_count = 0;  // accumulators the workspace must hold
  std::uint32_t skew = 1;           // rows_dense: its shared-memory skew (rows_dense_skew)
};

// rows_dense stages a tile in shared memory with element q at q + (q >> 5) * skew
// (rt::rows_dense_slot), skew 1 in its main kernel or kRowsDenseMaxSkew in its twin: an
// odd skew keeps a warp's stores (lanes a vector apart) at most two to a bank either way,
// and the fold's reads (32 / G rows R apart, G lanes each) meet in fewer banks at one or
// the other.
inline constexpr std::uint32_t kRowsDenseMaxSkew = 3;
// The passes a warp's read of shared memory takes on average while the staged kernel
// (rt::axis_rows_dense_kernel) folds rows of `reduced` elements of `element_size` bytes
// with groups of `group` lanes at `skew`, over tiles that start 0 .. vec - 1 elements
// past the vector grid: 1 where no two lanes meet in a bank, n where n words share one.
// A model (no GPU): banks of 4 bytes, 8-byte elements a half-warp at a time.
double rows_dense_fold_passes(std::size_t element_size, std::uint32_t group, std::uint32_t vec,
                              std::uint64_t reduced, std::uint32_t skew);
// Skew 1 keeps its place unless its fold averages kRowsDenseSkewConflict passes or more
// and kRowsDenseMaxSkew takes at least one fewer (engine/src/axis.cpp says what was
// measured). Computed once for each (element size, group, vector, R) and kept.
inline constexpr double kRowsDenseSkewConflict = 3.5;
std::uint32_t rows_dense_skew(std::size_t element_size, std::uint32_t group, std::uint32_t vec,
                              std::uint64_t reduced);

// columns_staged (rt::axis_columns_staged_kernel) reads a slice's columns in tiles: at
// most columns_staged_width (block / group x rows) columns a tile, every tile of a slice
// `width` columns (the fewest tiles of the widest width, evened out and rounded up to a
// whole number of vectors), `count` of them, and `rows` rows' segments staged at once
// (block x unroll vectors over width / vec + 1 a segment).
std::uint64_t columns_staged_width(const AxisKernelSpec& spec);
struct ColumnsStagedTiles {
  std::uint64_t width = 0, count = 0, rows = 0;
};
ColumnsStagedTiles columns_staged_tiles(const AxisKernelSpec& spec, std::uint64_t inner);

// Where builtin_axis_spec reads columns with columns_staged (its spec:
// columns_staged_builtin): long columns of outputs side by side in rows of at least 1000,
// 4-byte sums and means from R = 24576 over 1000 to 6200 outputs, and 4-byte min and max
// there from 2500 outputs or from 2^27 elements, where the columns program would read an
// output a thread (or outputs four a thread off their grid, below 2048 outputs).
// engine/src/axis.cpp says what was measured.
bool columns_staged_pays(Op op, const TypeRule& types, const CanonicalAxes& shape);
AxisKernelSpec columns_staged_builtin(Op op, const TypeRule& types);

// The round trips to L2 that the fold of one group of a columns program split with a
// ticket takes (rt::columns_ticket_finish: the last of a group's `splits` blocks folds
// the outputs of its tiles). The built-in choice and the tuner's candidates split columns
// so only where it is a few; a second kernel folds the others.
std::uint64_t axis_columns_fold_trips(const AxisKernelSpec& spec, std::uint64_t splits);

// A general shape that reduces nothing (R = 1: the staged reorder's copy, or a view
// reduced over dimensions of extent 1) whose densest kept dimension is not the outputs'
// innermost: the transpose family copies it in square tiles through shared memory, read
// along that densest dimension and written along the innermost, both coalesced (a thread
// per output would read the densest dimension a stride apart). Both dimensions need an
// extent of at least kAxisTransposeMinExtent. The densest kept dimension's index, or -1
// where the shape is not such a copy. The kernel finds the same dimension itself.
inline constexpr std::int64_t kAxisTransposeMinExtent = 8;
inline constexpr std::uint64_t kAxisTransposeTile = 32;  // rt::kTransposeTile
int axis_transpose_dim(const CanonicalAxes& shape);

// A shape that reduces nothing (R = 1) and reads its outputs from one contiguous run
// ([1, outputs] columns, or slices whose runs abut): a converting copy, which the
// short_columns family reads one vector a thread (rt::axis_short_columns_kernel).
bool axis_copies(const CanonicalAxes& shape);

// The rows_packed family (rt::axis_rows_packed_kernel) reads contiguous rows of 2 to
// kRowsPackedMaxReduced elements, a thread the fewest whole rows that fill whole 16-byte
// vectors (rows_packed_rows of them), and stores their results together.
inline constexpr std::uint64_t kRowsPackedMaxReduced = 8;
std::uint64_t rows_packed_rows(std::uint64_t reduced, std::size_t element_size);
// Where the built-in choice reads rows with rows_packed: 2^20 elements or more in
// contiguous rows of 2 to 7 elements (16-bit; means not over 4), of 2, 3 and 6 (4-byte)
// or 2, 3, 4 and 6 (8-byte), `in` (the view's base where known; offset 0 of the canonical
// form) 16-byte aligned.
bool rows_packed_pays(Op op, const TypeRule& types, const CanonicalAxes& shape, const void* in);

// A general view read as dense columns whose neighbouring columns fold together
// (rt::axis_columns_folded_kernel): every element lies in rows of W contiguous elements,
// one reduced dimension of `rows` stepping from row to row (stride W), and each row holds
// [a][b][c] (c innermost): a kept dimension of a (stride b c) outside, a reduced run of b
// (stride c) and a kept dimension of c (stride 1) inside, a or c possibly 1. At most one
// more kept dimension, of any positive stride, takes slices of such rows. Output
// (slice, i, k) folds position i b c + j c + k of every row of its slice, j < b. Its index
// among the outputs is slice * out_slice + i * out_a + k * out_c, the kept dimensions'
// order in the caller's view (C order). x.view(N, C, K) reduced over (0, 2) is one, with
// a = C and c = 1; so is x[..., 2] of complex pairs reduced over its middle dimension.
struct FoldedColumns {
  std::uint64_t slices = 1;
  std::int64_t slice_stride = 0;
  std::uint64_t rows = 0;
  std::uint64_t a = 1, b = 1, c = 1;
  std::uint64_t out_slice = 0, out_a = 0, out_c = 0;
  std::uint64_t width() const { return a * b * c; }
};
// The widest row the family reads (a block's threads hold a row's columns).
inline constexpr std::uint64_t kFoldedColumnsMaxWidth = 1024;
// The view `shape` as folded columns: a general shape of two reduced dimensions and one
// to three kept ones, every stride positive, rows of at most kFoldedColumnsMaxWidth
// elements; empty otherwise.
std::optional<FoldedColumns> axis_folded_columns(const CanonicalAxes& shape);

// 16-bit columns of R = 2 to 4 over 2^21 outputs and more whose vectors of eight outputs
// lie on the 16-byte grid (each slice whole vectors, the strides multiples of eight, and
// `in`, the view's base where known, aligned): the built-in choice reads them with the
// short_columns family, every row's load in flight.
bool short_16bit_columns_pay(const TypeRule& types, const CanonicalAxes& shape, const void* in);

// Whether a rows or columns shape lies on the 16-byte grid for elements of
// `element_bytes`: its contiguous extent (rows: R; columns: the slice's outputs) and every
// stride whole 16-byte vectors, and `base` (where known; offset 0 of the canonical form)
// 16-byte aligned. A class's shapes on that grid and off it can want different kernels
// (the built-in choice changes family there); a tuned class may keep a winner for each
// (db::AxisWinner::grid_config). False for other layouts and stepped columns.
bool axis_on_16byte_grid(const CanonicalAxes& shape, std::size_t element_bytes, const void* base = nullptr);

// The built-in choice for a canonical (non-flat) reduction on a GPU with `sm_count` SMs
// (good everywhere, tuned by nothing), and, when `plan` is given, its launch plan, the
// same as plan_axis_launch would make (computed once, for the call's hot path). `in`:
// the view's base (offset 0 of the canonical form) where known; null stands for a base
// on every vector grid (as cudaMalloc returns). Kept-densest general views whose base it
// leaves off the vector grid (the twin: scalar loads) split where aligned ones need not.
AxisKernelSpec builtin_axis_spec(Op op, const TypeRule& types, const CanonicalAxes& shape, int sm_count,
                                 AxisLaunchPlan* plan = nullptr, const void* in = nullptr);
AxisLaunchPlan plan_axis_launch(const AxisKernelSpec& spec, const CanonicalAxes& shape, int sm_count);
// A general view whose dimensions are permuted: the general kernels would read it in the
// caller's order, a stride apart per thread or per group. Two kinds are reduced instead
// with their dimensions in the order of their strides (largest first), into the
// C-contiguous `stage1` order:
// - the densest dimension kept but not the outputs' innermost: the stride order makes it
//   columns or a general view whose outputs run along the densest dimension;
// - the densest dimension reduced, the kept ones out of their strides' order (a
//   transposed batch of rows, as x.transpose(1, 2).sum(-1)): taken only where the stride
//   order makes it rows.
// Then that result is copied into the caller's output order (`copy`: the stage-1 result
// seen as the caller's kept dimensions, each with its stride there, nothing reduced), or
// written there directly (below).
// Where R >= kAxisReorderMinReduced and every kept stride is positive. The runtime takes
// the first kind where axis_reorder_pays: not for a small view (R <= kAxisReorderSmallReduced
// and at most kAxisReorderSmallElements elements), which one launch of the general kernel
// reads faster than two; the second kind up to kAxisDirectOrderFewOutputs outputs
// (written directly or staged: axis_reorder_writes_directly), and past that for rows of
// at most kAxisReorderShortRowBytes bytes only.
inline constexpr std::uint64_t kAxisReorderMinReduced = 4;
inline constexpr std::uint64_t kAxisReorderSmallReduced = 256;
inline constexpr std::uint64_t kAxisReorderSmallElements = std::uint64_t{1} << 18;
inline constexpr std::uint64_t kAxisReorderShortRowBytes = 32;
// Where the outputs are few enough (axis_reorder_writes_directly), the stage-1 kernel's
// ordered form writes each result straight to its place in the caller's order instead
// (`order`), in one launch and without the staged copy: up to kAxisDirectOrderAnyRows
// outputs whatever R, up to kAxisDirectOrderFewOutputs where an output reads more than
// kAxisDirectOrderLongRowBytes.
inline constexpr std::uint64_t kAxisDirectOrderFewOutputs = std::uint64_t{1} << 18;
inline constexpr std::uint64_t kAxisDirectOrderAnyRows = std::uint64_t{1} << 17;
inline constexpr std::uint64_t kAxisDirectOrderLongRowBytes = 64;
// Where output j of a canonical reduction goes in the caller's C-contiguous output: j
// decomposed over `extents` (the last the fastest), each digit times its stride there.
// Extents and strides are 32-bit (outputs below 2^32); rank 0 is j itself. The kernels
// take up to kAxisOrderMaxRank dimensions (after merging those that stay one run).
inline constexpr int kAxisOrderMaxRank = 4;
struct AxisOutputOrder {
  int rank = 0;
  std::uint32_t extents[kMaxRank] = {};
  std::uint32_t strides[kMaxRank] = {};
  std::uint64_t offset(std::uint64_t j) const;
};
struct AxisReorder {
  TensorDesc stage1;  // the caller's view, dimensions ordered by stride (same base)
  AxisList stage1_axes;
  CanonicalAxes stage1_shape;
  TensorDesc copy;  // over the stage-1 result
  CanonicalAxes copy_shape;
  AxisOutputOrder order;  // the stage-1 result's place in the caller's output (rank 0: none)
  // The second kind: the densest dimension reduced, rows in the order of the strides.
  bool reduces_densest() const { return stage1_shape.layout == AxisLayout::rows; }
};
std::optional<AxisReorder> axis_reorder(const TensorDesc& tensor, const AxisList& axes, const CanonicalAxes& shape);
// A few recent axis_reorder answers, keyed by the view and its axes (all the answer
// depends on: `shape` is canonicalize(tensor, axes)). On the build machine (an AMD EPYC,
// bench/probes/axis_reorder_cache_probe.cpp) axis_reorder took 0.34 to 0.38 us of host
// time for a permuted 4-d view, a hit copied out 0.02 to 0.04. Not thread-safe: the
// runtime keeps one per thread. No allocation.
class AxisReorderCache {
 public:
  const std::optional<AxisReorder>& get(const TensorDesc& tensor, const AxisList& axes, const CanonicalAxes& shape);
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  struct Entry {
    bool used = false;
    TensorDesc tensor;
    AxisList axes;
    std::optional<AxisReorder> value;
  };
  Entry entries_[8];
  std::uint64_t hits_ = 0, misses_ = 0;
};
// `in_size`: the input's element size in bytes.
bool axis_reorder_pays(const AxisReorder& reorder, const CanonicalAxes& shape, std::size_t in_size);
// False where no reorder of `shape` can pay, told from the canonical shape alone: the
// runtime asks it first on every call, before its AxisReorderCache (axis_reorder: two
// canonicalizations and a sort).
bool axis_reorder_may_pay(const CanonicalAxes& shape);
// Whether the kernel of reorder.stage1_shape writes the caller's order itself (one
// launch: its ordered form) rather than staging its result to be copied (the copy: the
// transpose family): the limits of kAxisDirectOrderFewOutputs above (engine/src/axis.cpp
// says what was measured). `in_size`: the input's element size in bytes. The runtime
// writes directly only where the spec chosen for stage 1 also has an ordered form
// (axis_spec_has_ordered_form).
bool axis_reorder_writes_directly(const AxisReorder& reorder, std::size_t in_size);
// Whether `spec` with ordered=1 is a valid spec (axis_spec_problem): every family but
// short_columns and transpose, which write each output at its index (a tuned winner may
// be short_columns). No allocation: the runtime asks on every call of a permuted view.
bool axis_spec_has_ordered_form(const AxisKernelSpec& spec);

// Whether `spec` with tail=1 is the built-in choice's read of `shape` (engine/src/axis.cpp
// says where it measured faster); the candidates hold both forms there.
bool batched_tail_pays(const AxisKernelSpec& spec, const CanonicalAxes& shape);
// Appends to `specs` the batched twin (tail=1) of each spec with tail 0 that
// batched_tail_pays takes at one of `shapes` at least, where not there already.
void add_batched_twins(std::vector<AxisKernelSpec>& specs, const std::vector<CanonicalAxes>& shapes);
// Whether `spec` is a split columns program capped at 1024 threads an SM where its
// occupancy is 0: a thread per output in blocks of 256, 8 threads across R, four blocks per
// SM, eight loads in flight (elements of 4 bytes and less, split with a ticket or a second
// kernel) or four (8-byte sums, products and means, a second kernel).
bool capped_split_columns(const AxisKernelSpec& spec);
// The occupancy (threads per SM, registers capped to fit them) builtin_axis_spec gives
// `spec` at `shape`, or 0 (the compiler's choice): short columns of vectors of outputs,
// and capped_split_columns.
std::uint32_t occupancy_that_pays(const AxisKernelSpec& spec, const CanonicalAxes& shape);
// Whether builtin_axis_spec reads `shape` with `spec` two vectors of outputs a thread a
// pass (rows=2): 4-byte short columns capped at 1024 threads, in blocks of 256.
bool two_vectors_a_pass_pay(const AxisKernelSpec& spec, const CanonicalAxes& shape);
// Appends to `specs` the twin of each spec with occupancy 0 that occupancy_that_pays caps
// at one of `shapes` at least, and of each capped spec the twin of two vectors a pass
// where two_vectors_a_pass_pay takes it, where not there already.
void add_occupancy_twins(std::vector<AxisKernelSpec>& specs, const std::vector<CanonicalAxes>& shapes);

// The compile request for one spec: name expressions main kernel, then the finalize
// kernel where the spec splits in two passes (no other plan launches it), then, where
// axis_has_twin, the main kernel's twin. KernelSet tells the finalize kernel by its name.
CompileRequest make_axis_compile_request(const AxisKernelSpec& spec, int arch);

// Whether a spec's program has a twin of its main kernel for data off the vector grid
// (kernel_templates/rt/axis.cuh): rows of vector loads with at most 8 head and tail
// elements per lane and pass to hold in registers (rt::fold_row's peeled code), columns
// of several adjacent outputs per thread (one address a row for them), and general
// programs of a thread per vector of outputs (groups within a warp: scalar loads on the
// walk for vectors off the grid, rt::general_output_vectors). rows_dense programs have a
// twin of another kind: their tile skewed by kRowsDenseMaxSkew (rows_dense_skew).
bool axis_has_twin(const AxisKernelSpec& spec);
// Whether a launch of `spec` over `shape` from `in` takes the twin, where it has one.
// Rows: the rows (or their splits) are at most 16 vectors a lane, and some row it folds
// with fold_row starts or ends off the 16-byte vector grid (a row not a multiple of the
// vector, rows or a base not aligned, splits of R that cut vectors); splits that take
// tiles of R in turn read their heads in fold_row_split: no. Columns: the base, the R
// stride or the outer stride is off the grid of the spec's vector. General: a kept
// dimension is the densest, and the base, the innermost kept dimension (not contiguous,
// or an extent the vector does not divide) or another stride is off that grid.
// rows_dense: the plan's skew is kRowsDenseMaxSkew.
bool axis_launch_takes_twin(const AxisKernelSpec& spec, const CanonicalAxes& shape, const AxisLaunchPlan& plan,
                            const void* in);

// The axis kernels' one argument, written once: the host's AxisKernelParams and, as
// text, the device's rt::AxisParams at the top of every generated axis source.
#define REDUCE_TUNE_AXIS_PARAMS(FIELD)     \
  FIELD(const void*, in)                   \
  FIELD(void*, out)                        \
  FIELD(void*, partials)                   \
  FIELD(unsigned int*, ticket)             \
  FIELD(unsigned long long, outputs)       \
  FIELD(unsigned long long, reduced)       \
  FIELD(long long, outer_stride)           \
  FIELD(long long, reduced_stride)         \
  FIELD(unsigned long long, inner)         \
  FIELD(long long, inner_step)             \
  FIELD(unsigned long long, splits)        \
  FIELD(float, mean_n)                     \
  FIELD(float, mean_inv)                   \
  FIELD(int, kept_rank)                    \
  FIELD(int, reduced_rank)                 \
  FIELD(long long, kept_extents[8])        \
  FIELD(long long, kept_strides[8])        \
  FIELD(long long, reduced_extents[8])     \
  FIELD(long long, reduced_strides[8])     \
  FIELD(int, out_rank)                     \
  FIELD(unsigned int, out_extents[4])      \
  FIELD(unsigned int, out_strides[4])      \
  FIELD(unsigned int, fold_inner)          \
  FIELD(unsigned long long, fold_out[3])

struct AxisKernelParams {
#define REDUCE_TUNE_FIELD(type, name) type name;
  REDUCE_TUNE_AXIS_PARAMS(REDUCE_TUNE_FIELD)
#undef REDUCE_TUNE_FIELD
};
const char* axis_params_source();

// `in` is where canonical offset 0 lies (the caller's base pointer plus
// shape.base_offset); split plans use the workspace's partials and ticket. A spec with
// ordered=1 writes output j at order.offset(j) (an order of 1 to 4 dimensions, fewer
// than 2^32 outputs), and needs one.
AxisKernelParams make_axis_params(const AxisKernelSpec& spec, const CanonicalAxes& shape, const AxisLaunchPlan& plan,
                                  const void* in, void* out, const WorkspaceView* workspace,
                                  const AxisOutputOrder* order = nullptr);

// Enqueues the main kernel and, for two-pass plans, the finalize kernel on `stream`.
// Split plans need a workspace holding plan.partial_count accumulators.
void enqueue_axis_reduction(Launcher& launcher, const KernelHandles& kernels, const AxisKernelSpec& spec,
                            const AxisLaunchPlan& plan, const CanonicalAxes& shape, const void* in, void* out,
                            const WorkspaceView* workspace, void* stream, const AxisOutputOrder* output_order = nullptr);

}  // namespace reduce_tune
