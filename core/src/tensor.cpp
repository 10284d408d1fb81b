#include "reduce_tune/tensor.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace reduce_tune {

namespace {

using i128 = __int128;
constexpr i128 kI64Max = std::numeric_limits<std::int64_t>::max();

TensorDesc make(const std::int64_t* extents, const std::int64_t* strides, int rank) {
  TensorDesc t;
  t.rank = rank;
  for (int d = 0; d < std::min(rank, kMaxRank); ++d) {
    t.extents[d] = extents[d];
    t.strides[d] = strides[d];
  }
  return t;
}

struct Dim {
  std::int64_t extent;
  std::int64_t stride;
};

// Merges neighbours (outermost first) where the outer one steps exactly over the inner
// one: then the pair walks the same elements as one dimension.
int merge(Dim* dims, int count) {
  int out = 0;
  for (int i = 0; i < count; ++i) {
    if (out > 0 && dims[out - 1].stride == dims[i].extent * dims[i].stride) {
      dims[out - 1] = Dim{dims[out - 1].extent * dims[i].extent, dims[i].stride};
    } else {
      dims[out++] = dims[i];
    }
  }
  return out;
}

// Whether one or two kept dimensions over one reduced dimension of stride `reduced_stride`
// make columns: the innermost kept one contiguous, or of a stride of 2 .. kMaxInnerStep
// that is the smallest of all (so that neighbouring outputs are the densest walk).
bool columns_step(const Dim* kept, int nk, std::int64_t reduced_stride) {
  const std::int64_t step = kept[nk - 1].stride;
  if (step == 1) return true;
  if (step < 2 || step > kMaxInnerStep || step >= reduced_stride) return false;
  return nk == 1 || kept[0].stride > step || kept[0].stride < -step;
}

CanonicalResult fail(std::string why) {
  CanonicalResult r;
  r.error = std::move(why);
  return r;
}

}  // namespace

TensorDesc TensorDesc::contiguous(const std::int64_t* extents, int rank) {
  std::int64_t strides[kMaxRank] = {};
  std::int64_t step = 1;
  for (int d = std::min(rank, kMaxRank) - 1; d >= 0; --d) {
    strides[d] = step;
    // Wraps only for extents whose product overflows, which canonicalize refuses.
    step = static_cast<std::int64_t>(static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(extents[d]));
  }
  return make(extents, strides, rank);
}

TensorDesc TensorDesc::strided(const std::int64_t* extents, const std::int64_t* strides, int rank) {
  return make(extents, strides, rank);
}

TensorDesc TensorDesc::contiguous(std::initializer_list<std::int64_t> extents) {
  TensorDesc t = contiguous(extents.begin(), static_cast<int>(std::min<std::size_t>(extents.size(), kMaxRank)));
  t.rank = static_cast<int>(extents.size());
  return t;
}

TensorDesc TensorDesc::strided(std::initializer_list<std::int64_t> extents, std::initializer_list<std::int64_t> strides) {
  if (extents.size() != strides.size()) {
    TensorDesc bad;
    bad.rank = -1;  // refused by canonicalize, which names the mismatch
    bad.extents[0] = static_cast<std::int64_t>(extents.size());
    bad.strides[0] = static_cast<std::int64_t>(strides.size());
    return bad;
  }
  TensorDesc t = strided(extents.begin(), strides.begin(),
                         static_cast<int>(std::min<std::size_t>(extents.size(), kMaxRank)));
  t.rank = static_cast<int>(extents.size());
  return t;
}

AxisList::AxisList(std::initializer_list<int> list) : AxisList(list.begin(), static_cast<int>(list.size())) {}

AxisList::AxisList(const int* list, int n) {
  count = n;
  for (int i = 0; i < std::min(n, kMaxRank + 1); ++i) axes[i] = list[i];
}

AxisList AxisList::all(int rank) {
  AxisList a;
  a.count = std::clamp(rank, 0, kMaxRank);
  for (int i = 0; i < a.count; ++i) a.axes[i] = i;
  return a;
}

const char* to_string(AxisLayout layout) {
  switch (layout) {
    case AxisLayout::flat: return "flat";
    case AxisLayout::rows: return "rows";
    case AxisLayout::columns: return "columns";
    case AxisLayout::general: return "general";
  }
  return "?";
}

std::string CanonicalAxes::to_string() const {
  std::ostringstream os;
  os << reduce_tune::to_string(layout) << " outputs=" << outputs << " R=" << reduced;
  if (layout == AxisLayout::rows) os << " row_stride=" << outer_stride;
  if (layout == AxisLayout::columns)
  {
    os << " outer=" << (inner ? outputs / inner : 0) << " outer_stride=" << outer_stride << " R_stride=" << reduced_stride
       << " inner=" << inner;
    if (inner_step != 1) os << " inner_step=" << inner_step;
  }
  if (layout == AxisLayout::general) {
    os << " kept=[";
    for (int i = 0; i < kept_rank; ++i) os << (i ? "," : "") << kept_extents[i] << ":" << kept_strides[i];
    os << "] reduced=[";
    for (int i = 0; i < reduced_rank; ++i) os << (i ? "," : "") << reduced_extents[i] << ":" << reduced_strides[i];
    os << "]";
  }
  return os.str();
}

CanonicalResult canonicalize(const TensorDesc& t, const AxisList& axis_list) {
  if (t.rank == -1 && t.extents[0] != t.strides[0])
    return fail(std::to_string(t.extents[0]) + " extents but " + std::to_string(t.strides[0]) +
                " strides: give one stride per dimension");
  if (t.rank < 0 || t.rank > kMaxRank)
    return fail("a tensor of rank " + std::to_string(t.rank) + ": reduce-tune reduces tensors of rank 0 to " +
                std::to_string(kMaxRank));
  for (int d = 0; d < t.rank; ++d)
    if (t.extents[d] < 0)
      return fail("dimension " + std::to_string(d) + " has a negative extent (" + std::to_string(t.extents[d]) + ")");
  if (axis_list.count < 0 || axis_list.count > t.rank)
    return fail(std::to_string(axis_list.count) + " axes for a tensor of rank " + std::to_string(t.rank));
  bool reduced_dim[kMaxRank] = {};
  for (int i = 0; i < axis_list.count; ++i) {
    const int given = axis_list.axes[i];
    const int a = given < 0 ? given + t.rank : given;
    if (a < 0 || a >= t.rank)
      return fail("axis " + std::to_string(given) + " is out of range for a tensor of rank " + std::to_string(t.rank));
    if (reduced_dim[a]) return fail("axis " + std::to_string(given) + " is repeated");
    reduced_dim[a] = true;
  }

  // Sizes and offsets in 128 bits, so every overflow of 64 bits is seen.
  i128 elements = 1, outputs = 1, reduced = 1;
  bool empty = false;
  for (int d = 0; d < t.rank; ++d) empty = empty || t.extents[d] == 0;
  for (int d = 0; d < t.rank; ++d) {
    elements *= t.extents[d];
    if (!empty && elements > kI64Max)
      return fail("the extents' product overflows 64 bits (at dimension " + std::to_string(d) + ")");
    (reduced_dim[d] ? reduced : outputs) *= t.extents[d];
  }
  i128 lowest = 0, highest = 0, base = 0;
  if (!empty) {
    for (int d = 0; d < t.rank; ++d) {
      const i128 reach = static_cast<i128>(t.extents[d] - 1) * t.strides[d];
      (reach < 0 ? lowest : highest) += reach;
      if (lowest < -kI64Max || highest > kI64Max)
        return fail("the offsets dimension " + std::to_string(d) + " reaches overflow 64 bits (extent " +
                    std::to_string(t.extents[d]) + ", stride " + std::to_string(t.strides[d]) + ")");
    }
  }

  // No allocation holds 2^62 elements: a view reaching that far is refused before any
  // pointer arithmetic over it.
  if (highest - lowest >= (i128{1} << 62))
    return fail("the view reaches from offset " + std::to_string(static_cast<long long>(lowest)) + " to " +
                std::to_string(static_cast<long long>(highest)) +
                " elements: more than any allocation holds (2^62 elements)");

  CanonicalResult r;
  r.ok = true;
  CanonicalAxes& c = r.axes;
  c.outputs = static_cast<std::uint64_t>(outputs);
  c.reduced = static_cast<std::uint64_t>(reduced);
  if (!c.reads_nothing()) {
    c.lowest_offset = static_cast<std::int64_t>(lowest);
    c.highest_offset = static_cast<std::int64_t>(highest);
  }

  Dim kept[kMaxRank], red[kMaxRank];
  int nk = 0, nr = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.extents[d] == 1) continue;
    if (!reduced_dim[d]) {
      kept[nk++] = Dim{t.extents[d], t.strides[d]};
    } else {
      Dim dim{t.extents[d], t.strides[d]};
      // A reduced dimension reads the same elements walked either way: start from its far
      // end and walk forwards.
      if (dim.stride < 0 && dim.extent > 0) {
        base += static_cast<i128>(dim.extent - 1) * dim.stride;
        dim.stride = -dim.stride;
      }
      red[nr++] = dim;
    }
  }
  // The reduced dimensions' order is free: largest stride outermost, so that the
  // innermost is the densest, then merged.
  std::stable_sort(red, red + nr, [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  nk = merge(kept, nk);
  nr = merge(red, nr);
  c.base_offset = c.reads_nothing() ? 0 : static_cast<std::int64_t>(base);
  c.kept_rank = nk;
  c.reduced_rank = nr;
  for (int i = 0; i < nk; ++i) {
    c.kept_extents[i] = kept[i].extent;
    c.kept_strides[i] = kept[i].stride;
  }
  for (int i = 0; i < nr; ++i) {
    c.reduced_extents[i] = red[i].extent;
    c.reduced_strides[i] = red[i].stride;
  }

  const bool r_contiguous = nr == 0 || (nr == 1 && red[0].stride == 1);
  if (c.reduced == 0) {
    // Nothing to read: every output is the identity (NaN for mean).
    c.layout = c.outputs == 1 ? AxisLayout::flat : AxisLayout::rows;
    c.outer_stride = 0;
  } else if (nk == 0 && r_contiguous) {
    c.layout = AxisLayout::flat;
  } else if (nr == 0 && nk == 1 && kept[0].stride == 1) {
    // Every reduced extent is 1 (R = 1) over contiguous outputs: a converting copy, read
    // as columns [1, inner], whose kernels load and store along the outputs (16-byte
    // vectors where the outputs allow it); as rows of one element, a thread read four
    // neighbouring rows a pass (H100, f32 sum of 2^24 outputs: 62.9 us, 2.1 TB/s).
    c.layout = AxisLayout::columns;
    c.inner = static_cast<std::uint64_t>(kept[0].extent);
    c.reduced_stride = kept[0].extent;
  } else if (nk == 1 && r_contiguous) {
    c.layout = AxisLayout::rows;
    c.outer_stride = kept[0].stride;
  } else if (nr == 1 && (nk == 1 || nk == 2) && columns_step(kept, nk, red[0].stride)) {
    // Columns, their outputs contiguous or a few elements apart: threads across the
    // outputs read neighbouring elements at each step of R. A general program reads such
    // a view a group of lanes per output, each lane its own row (H200, i32 min of x[:, ::2]
    // of [1024, 4096] along 0: 24.0 us).
    c.layout = AxisLayout::columns;
    c.outer_stride = nk == 2 ? kept[0].stride : 0;
    c.inner = static_cast<std::uint64_t>(kept[nk - 1].extent);
    c.inner_step = kept[nk - 1].stride;
    c.reduced_stride = red[0].stride;
  } else {
    c.layout = AxisLayout::general;
  }
  return r;
}

}  // namespace reduce_tune
