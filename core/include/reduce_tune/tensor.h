// Reductions along axes of an N-d tensor: how a caller describes the tensor and the axes,
// and the canonical form the engine reduces (merged dimensions, one of four layout
// classes). C++17, no CUDA: the public headers include this.
//
//   TensorDesc t = TensorDesc::contiguous({batch, rows, cols});   // C order
//   reduce_tune::sum(d_in, t, {2}, d_out, stream);               // d_out: batch*rows values
//
// Strides are in elements, may be zero (broadcast) or negative (a reversed view), and
// describe any permuted, sliced or transposed view; the base pointer is the element at
// index (0, ..., 0). The output is the tensor with the reduced axes removed, written
// C-contiguous (keepdims is the same data under another shape).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace reduce_tune {

inline constexpr int kMaxRank = 8;

struct TensorDesc {
  int rank = 0;
  std::int64_t extents[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};  // in elements

  // C-contiguous strides for the extents. More than kMaxRank extents, or a negative
  // extent, is kept as given and refused when the tensor is reduced.
  static TensorDesc contiguous(std::initializer_list<std::int64_t> extents);
  // Explicit strides, one per extent (a size mismatch is refused when reduced).
  static TensorDesc strided(std::initializer_list<std::int64_t> extents, std::initializer_list<std::int64_t> strides);
  static TensorDesc contiguous(const std::int64_t* extents, int rank);
  static TensorDesc strided(const std::int64_t* extents, const std::int64_t* strides, int rank);
};

// The axes to reduce: indices into the tensor's dimensions, negative ones counting from
// the end (-1 is the last), as in NumPy and PyTorch. An empty list reduces nothing.
struct AxisList {
  int count = 0;
  int axes[kMaxRank + 1] = {};  // one spare, so that too many axes is reported, not cut
  AxisList() = default;
  AxisList(std::initializer_list<int> list);
  AxisList(const int* list, int n);
  // Every axis of a tensor of this rank.
  static AxisList all(int rank);
};

// Layout classes of a canonical reduction (issue 12):
//   flat     everything reduced from one contiguous run: the flat kernels;
//   rows     [outputs, R] with R contiguous (stride 1), rows `row_stride` apart;
//   columns  [outer, R, inner] with inner > 1, contiguous (stride 1) or, for a view that
//            steps over its innermost kept dimension (x[:, ::2] reduced along 0), of a
//            small stride (inner_step 2 .. kMaxInnerStep) below R's;
//   general  anything else (any strides, up to 8 kept and 8 reduced dimensions).
enum class AxisLayout : std::uint8_t { flat, rows, columns, general };
// The largest inner stride (in elements) of a columns shape: views that step over their
// innermost kept dimension by up to this read as columns, wider steps as general views.
constexpr std::int64_t kMaxInnerStep = 8;
const char* to_string(AxisLayout layout);

// A reduction after dimensions of extent 1 are dropped and adjacent dimensions that are
// contiguous with each other are merged. Output element j (C order over the kept
// dimensions) reduces the R input elements at base + offset(j) + reduced_offset(k).
struct CanonicalAxes {
  AxisLayout layout = AxisLayout::flat;
  std::uint64_t outputs = 1;  // product of the kept extents
  std::uint64_t reduced = 1;  // R: product of the reduced extents
  // rows: distance between row starts. columns: distance between outer slices.
  std::int64_t outer_stride = 0;
  // columns: the R dimension's stride; inner extent and stride (1: contiguous).
  std::int64_t reduced_stride = 0;
  std::uint64_t inner = 1;
  std::int64_t inner_step = 1;
  // general (and, for the record, every class): the kept and reduced dimensions, merged,
  // outermost first.
  int kept_rank = 0, reduced_rank = 0;
  std::int64_t kept_extents[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  std::int64_t reduced_extents[kMaxRank] = {}, reduced_strides[kMaxRank] = {};
  // Where offset 0 of the canonical form lies, relative to the caller's base pointer:
  // reduced dimensions with negative strides are walked forwards from their far end.
  std::int64_t base_offset = 0;
  // The input elements the reduction reads, relative to the caller's base pointer:
  // [lowest, highest] (both 0 when nothing is read).
  std::int64_t lowest_offset = 0, highest_offset = 0;
  bool reads_nothing() const { return outputs == 0 || reduced == 0; }
  std::string to_string() const;
};

struct CanonicalResult {
  bool ok = false;
  CanonicalAxes axes;
  std::string error;  // why not, naming the axis or dimension
};

// Validates and canonicalises: rank 0..8, extents >= 0, axes in range and not repeated,
// extents, their product and every reachable offset within 64 bits.
CanonicalResult canonicalize(const TensorDesc& tensor, const AxisList& axes);

}  // namespace reduce_tune
