// Reductions along axes (issue 12): kernels for the canonical layouts of
// core/include/reduce_tune/tensor.h. Every output is reduced by a fixed set of threads in
// a fixed order, so results are the same bits on every run (no atomics).
//
//   axis_rows_kernel<C, PEELED>  rows and general: a group of GROUP threads per output
//                           (GROUP <= 32 within a warp, or the whole block). Rows read
//                           R contiguous elements with 16-byte vector loads after a
//                           scalar head that reaches alignment (PEELED: the head's and
//                           the tail's loads issued with the body's, see fold_row);
//                           general decomposes the reduced index over up to 8 dimensions
//                           (PEELED: a kept dimension the densest, vectors of outputs
//                           off the grid, see general_output_vectors).
//   axis_columns_kernel<C>  [outer, R, inner] with inner contiguous: threads across
//                           outputs (consecutive inner elements, coalesced), BY threads
//                           of a block across R, combined in shared memory in order.
//   axis_columns_dense_kernel<C>  columns whose rows are contiguous and narrow (inner
//                           <= the block): the block reads its slice [outer, rows) as one
//                           contiguous run in steps of whole rows and vectors, thread t
//                           always holding the same positions (so the same columns),
//                           then the threads of each column fold in shared memory.
//   axis_rows_dense_kernel<C>  short contiguous rows: the block stages tiles of whole
//                           rows through shared memory, loaded as a flat sum loads
//                           (16-byte vectors, a warp's loads contiguous), then groups
//                           of lanes fold the tile's rows.
//   axis_transpose_kernel<C>  general views that reduce nothing (R = 1: a staged
//                           reorder's copy into the caller's order) whose densest kept
//                           dimension is not the outputs' innermost: 32 x 32 tiles
//                           through shared memory, read along the one, written along
//                           the other.
//   axis_short_columns_kernel<C>  columns read a vector of kVec outputs a thread, R in
//                           rounds of kUnroll rows (their loads in flight together), in
//                           few registers; kUnroll 1: R = 1 over contiguous outputs, a
//                           converting copy.
//   axis_columns_staged_kernel<C>  columns of outputs side by side in a row, on the
//                           vector grid or off it: tiles of rows' segments read as the
//                           aligned 16-byte vectors that hold them into shared memory,
//                           each thread folding its columns there at each row's shift.
//   axis_rows_packed_kernel<C>  contiguous rows of 2 to 8 elements: a thread takes the
//                           fewest whole rows that fill whole 16-byte vectors, every
//                           vector's load in flight, and stores their results together
//                           (ordered: each at its place in the output's order).
//   axis_columns_folded_kernel<C>  general views of dense rows of W <= the block
//                           elements whose columns fold in groups (the engine's
//                           FoldedColumns): read as columns_dense reads its slices, each
//                           output then folding its columns in shared memory.
//   axis_finalize_kernel<C> where R is split across `splits` blocks per output, each
//                           block writes one partial per output; one warp per output
//                           folds an output's partials in order and writes it. SPLIT 1
//                           runs this as a second kernel (from sm_90 launched while the
//                           main one still runs, and waiting for it: common.cuh); SPLIT
//                           2 (few outputs) lets the last block to finish (by a ticket)
//                           do it, in one launch;
//                           SPLIT 3 is SPLIT 2 for rows and columns_dense whose splits
//                           take tiles of R in turn instead of one contiguous chunk each
//                           (columns_dense with four loads in flight over up to 16
//                           outputs: single steps, see dense_interleaves).
//                           A split program whose plan has one split for a shape (a
//                           class's winner on a shape with more outputs) writes its
//                           outputs directly, as an unsplit one does.
#pragma once
#include "rt/common.cuh"
#include "rt/load.cuh"
#include "rt/ops.cuh"
#include "rt/warp_reduce.cuh"

namespace rt {

enum AxisFamilyId : int {
  axis_rows = 0,
  axis_general = 1,
  axis_columns = 2,
  axis_columns_dense = 3,
  axis_rows_dense = 4,
  axis_transpose = 5,
  axis_short_columns = 6,
  axis_columns_staged = 7,
  axis_rows_packed = 8,
  axis_columns_folded = 9
};
enum AxisSplitId : int { axis_split_none = 0, axis_split_two_pass = 1, axis_split_ticket = 2, axis_split_ticket_tiles = 3 };

// Kernel arguments: rt::AxisParams is defined at the top of every generated source from
// the host's one list of its fields (REDUCE_TUNE_AXIS_PARAMS in the engine's axis.h).

template <class T> __device__ __forceinline__ T shfl_xor(T v, int offset) {
  return __shfl_xor_sync(0xffffffffu, v, offset);
}

template <class OpT, class InT, class AccT, class OutT, int FAMILY, int BLOCK, int GROUP, int VEC, int SPLIT,
          int ROWS, int UNROLL, int TAIL = 0, int ORDERED = 0, int OCC = 0>
struct AxisConfig {
  typedef OpT Op;
  typedef InT In;
  typedef AccT Acc;
  typedef OutT Out;
  static constexpr int kFamily = FAMILY;
  static constexpr int kBlock = BLOCK;
  // rows/general: threads per output; columns: threads across R (BY).
  static constexpr int kGroup = GROUP;
  static constexpr int kVec = VEC;
  static constexpr bool kSplit = SPLIT != 0;
  static constexpr bool kTicket = SPLIT == 2 || SPLIT == 3;
  // Split with a ticket, the splits taking tiles of R in turn (rows: fold_row_split;
  // columns_dense: tiles of whole rows).
  static constexpr bool kTiles = SPLIT == 3;
  // rows, general: outputs a group takes per pass (their loads issued together);
  // columns: outputs a thread takes per pass, or vectors of them.
  static constexpr int kRows = ROWS;
  // Independent loads in flight per thread along R (4 or 8; short_columns also 1 and 2).
  static constexpr int kUnroll = UNROLL;
  static_assert(UNROLL == 4 || UNROLL == 8 ||
                    ((FAMILY == axis_short_columns || FAMILY == axis_rows_packed) && (UNROLL == 1 || UNROLL == 2)),
                "4 or 8 loads in flight (short_columns and rows_packed: 1, 2, 4 or 8)");
  // How the end of a reduced run is read (rows and columns; see batched_index):
  // false, each thread its own loop, a guarded load per step; true, the last, partial
  // tile's loads issued together. (Columns of several outputs a pass have at most one
  // step left over, whose loads the guarded loop already issues together.)
  static constexpr bool kTail = TAIL != 0;
  // Outputs written where p.out_* puts them (write_output), not at their index.
  static constexpr bool kOrdered = ORDERED != 0;
  // Threads per SM the kernel is compiled to fit (its registers capped so that OCC /
  // BLOCK blocks are resident), or 0, the compiler's own choice (columns and
  // short_columns only).
  static constexpr int kMinBlocks = OCC / BLOCK;
  static_assert(OCC == 0 ||
                    ((FAMILY == axis_columns || FAMILY == axis_short_columns) && OCC % BLOCK == 0 && OCC <= 2048),
                "occupancy applies to columns and short_columns, a multiple of the block up to 2048 threads");
  static_assert(TAIL == 0 || ((FAMILY == axis_rows || FAMILY == axis_columns) && SPLIT != 3),
                "the batched tail is for unsplit or contiguously split rows and columns");
  static_assert(ROWS == 1 || (ROWS >= 1 && GROUP <= 32 && (FAMILY != axis_columns || (GROUP == 1 && (VEC == 1 || SPLIT == 0))) &&
                              FAMILY != axis_columns_dense),
                "several outputs per pass: rows and general with groups within a warp, columns with BY = 1 "
                "(of vectors: unsplit)");
  static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0, "block must be 32..1024, a multiple of 32");
  static_assert(GROUP >= 1 && GROUP <= BLOCK && BLOCK % GROUP == 0, "groups must tile the block");
  static_assert(GROUP <= 32 || GROUP == BLOCK || FAMILY >= axis_columns, "a group is within a warp or the block");
  static_assert(VEC == 1 || (VEC * sizeof(InT) <= 16 && (VEC & (VEC - 1)) == 0), "vector loads are 2^k, <= 16 bytes");
};

// Deliberate faults for the tuner's mutation test (-DRT_MUTATION, common.cuh): 2 drops
// the last reduced element of every output, 5 leaves the last output unwritten (3 drops
// the rows' scalar head, in fold_row; 4 returns the identity, in the epilogue).
__device__ __forceinline__ void axis_mutate(AxisParams& p) {
  if (RT_MUTATION == 2 && p.reduced > 1) p.reduced -= 1;
  if (RT_MUTATION == 5 && p.outputs > 1) p.outputs -= 1;
}

// The start of a main kernel: the wait for the grid ahead, where axis_finalize_kernel
// runs next (SPLIT 1) that kernel's launch allowed from here (common.cuh), and the
// mutation.
template <class C> __device__ __forceinline__ void axis_main_begin(AxisParams& p) {
  begin_after_previous_grid(true, C::kSplit && !C::kTicket);
  axis_mutate(p);
}

// Offset of reduced index k over the reduced dimensions (general family).
__device__ __forceinline__ long long reduced_offset(const AxisParams& p, u64 k) {
  long long off = 0;
  for (int d = p.reduced_rank - 1; d >= 0; --d) {
    const u64 e = (u64)p.reduced_extents[d];
    off += (long long)(k % e) * p.reduced_strides[d];
    k /= e;
  }
  return off;
}

// The general family's walk over reduced indices k, k + step, k + 2 step, ... without a
// division per element: the index's digits over the reduced dimensions (the innermost
// the least significant) and its offset, advanced by the step's digits with one carry
// per dimension. The innermost dimension counts in units of V elements (V > 1: vectors
// along a contiguous innermost dimension whose extent V divides). For reduced extents
// and steps below 2^31 (GeneralWalk::fits) and a reduced rank of 1 to MAXR (MAXR 2:
// no carry loop past the second dimension, a hot loop of a fraction of the code).
template <int V, int MAXR = 8>
struct GeneralWalk {
  long long off;      // offset (elements) of the current index from the output's first element
  long long by_off;   // the step's offset, before carries
  long long in_wrap;  // an innermost wrap: its extent back, one of the next dimension on
  unsigned in_digit, in_by, in_extent;
  unsigned digit[MAXR - 1], by[MAXR - 1];  // the outer dimensions' digits (0 the outermost), the step's
  static __device__ __forceinline__ bool fits(const AxisParams& p, u64 step) {
    bool ok = step < 0x7fffffffull && p.reduced_rank >= 1;
#pragma unroll
    for (int d = 0; d < 8; ++d)
      if (d < p.reduced_rank) ok = ok && (u64)p.reduced_extents[d] < 0x7fffffffull;
    return ok;
  }
  __device__ __forceinline__ GeneralWalk(const AxisParams& p, u64 k, unsigned step) {
    const int in = p.reduced_rank - 1;
    in_extent = (unsigned)(p.reduced_extents[in] / V);
    const long long in_stride = V == 1 ? p.reduced_strides[in] : V;
    in_digit = (unsigned)(k % in_extent);
    k /= in_extent;
    in_by = step % in_extent;
    step /= in_extent;
    off = (long long)in_digit * in_stride;
    by_off = (long long)in_by * in_stride;
    in_wrap = in >= 1 ? p.reduced_strides[in - 1] - (long long)in_extent * in_stride : 0;
#pragma unroll
    for (int d = MAXR - 2; d >= 0; --d) {
      digit[d] = by[d] = 0;
      if (d < in) {
        const unsigned e = (unsigned)p.reduced_extents[d];
        if (k <= 0xffffffffull) {
          const unsigned k32 = (unsigned)k;
          digit[d] = k32 % e;
          k = k32 / e;
        } else {
          digit[d] = (unsigned)(k % e);
          k /= e;
        }
        by[d] = step % e;
        step /= e;
        off += (long long)digit[d] * p.reduced_strides[d];
        by_off += (long long)by[d] * p.reduced_strides[d];
      }
    }
  }
  // The next index. Past the last index the outermost digit runs on: never read.
  __device__ __forceinline__ void advance(const AxisParams& p) {
    off += by_off;
    const unsigned x = in_digit + in_by;  // < 2 in_extent: one wrap at most
    unsigned carry = x >= in_extent ? 1u : 0u;
    in_digit = carry ? x - in_extent : x;
    if (carry) off += in_wrap;
    const int in = p.reduced_rank - 1;
#pragma unroll
    for (int d = MAXR - 2; d >= 1; --d)
      if (d < in) {
        const unsigned e = (unsigned)p.reduced_extents[d];
        const unsigned y = digit[d] + by[d] + carry;
        carry = y >= e ? 1u : 0u;
        digit[d] = carry ? y - e : y;
        if (carry) off += p.reduced_strides[d - 1] - (long long)e * p.reduced_strides[d];
      }
    if (in >= 1) digit[0] += by[0] + carry;
  }
};

// Offset of output j's first element (rows: j * outer_stride; general: over the kept
// dimensions).
template <int FAMILY>
__device__ __forceinline__ long long output_offset(const AxisParams& p, u64 j) {
  if (FAMILY == axis_rows) return (long long)j * p.outer_stride;
  long long off = 0;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    const u64 e = (u64)p.kept_extents[d];
    off += (long long)(j % e) * p.kept_strides[d];
    j /= e;
  }
  return off;
}

// Where output j is written: j, or, in an ORDERED program (a permuted view reduced in the
// order of its strides, written straight into the caller's order: the engine's
// AxisOutputOrder), j's place there: its digits over out_extents (the last the fastest),
// each times its out_stride. Out of line, so that the index costs the kernels' loops no
// registers; the engine sets an order of at most 4 dimensions and 2^32 outputs.
__device__ __noinline__ unsigned ordered_slot(unsigned j, int rank, uint4 extents, uint4 strides) {
  const unsigned e[4] = {extents.x, extents.y, extents.z, extents.w};
  const unsigned s[4] = {strides.x, strides.y, strides.z, strides.w};
  unsigned off = 0;
#pragma unroll
  for (int d = 3; d > 0; --d)
    if (d < rank) {
      off += j % e[d] * s[d];
      j /= e[d];
    }
  return off + j * s[0];
}
// Where output j goes: j, or (kOrdered) its place in the output's order.
template <class C> __device__ __forceinline__ u64 output_slot(const AxisParams& p, u64 j) {
  if (!C::kOrdered) return j;
  return ordered_slot((unsigned)j, p.out_rank,
                      make_uint4(p.out_extents[0], p.out_extents[1], p.out_extents[2], p.out_extents[3]),
                      make_uint4(p.out_strides[0], p.out_strides[1], p.out_strides[2], p.out_strides[3]));
}

template <class C> __device__ __forceinline__ void write_output(const AxisParams& p, u64 j, typename C::Acc v) {
  static_cast<typename C::Out*>(p.out)[output_slot<C>(p, j)] =
      epilogue<typename C::Op, typename C::Out>(v, p.reduced, MeanDivisor{p.mean_n, p.mean_inv});
}

// Columns: output j is column j % inner of slice j / inner. The 64-bit division is a
// long software sequence, paid per output where R is short (at R = 1 a converting copy
// is bound by it), so one slice (outputs <= inner) takes no division and indices within
// 32 bits a 32-bit one.
struct ColumnIndex {
  u64 slice, column;
};
__device__ __forceinline__ ColumnIndex column_index(const AxisParams& p, u64 j) {
  if (p.outputs <= p.inner) return {0, j};
  if (p.outputs <= 0xffffffffull) {
    const unsigned jj = (unsigned)j, n = (unsigned)p.inner;
    return {jj / n, jj % n};
  }
  return {j / p.inner, j % p.inner};
}
// Output j's first element: a column of a stepped view (inner_step > 1) lies
// inner_step elements from its neighbour.
__device__ __forceinline__ long long column_offset(const AxisParams& p, u64 j) {
  const ColumnIndex c = column_index(p, j);
  return (long long)c.slice * p.outer_stride + (long long)c.column * p.inner_step;
}

// Reduces a group's values into lane 0 of the group (GROUP <= 32: shuffles within the
// group; GROUP == BLOCK: the whole block through shared memory).
template <class C>
__device__ __forceinline__ typename C::Acc group_reduce(typename C::Acc v, typename C::Acc* smem) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  if (C::kGroup == 1) return v;
  if (C::kGroup <= 32) {
#pragma unroll
    for (int offset = C::kGroup / 2; offset > 0; offset /= 2)
      v = Op::template apply<A>(v, shfl_xor(v, offset));
    return v;
  }
  // The whole block: warps, then warp 0 over the warp totals, in a fixed order.
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = Op::template apply<A>(v, shfl_xor(v, offset));
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (unsigned)(C::kBlock / 32) ? smem[lane] : Op::template identity<A>();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v = Op::template apply<A>(v, shfl_xor(v, offset));
  }
  return v;
}

// The finalize kernel's fold (SPLIT 1): the partials of outputs warp, warp + warps, ...
// (one warp each, in order), written out. Its grid has a warp per output.
//
// Each lane folds partials lane, lane + 32, lane + 64, ... in that order. In
// columns_dense's last block, four loads in flight a lane: the loop of one load a trip
// waits on L2 once per 32 splits (the compiler keeps __ldcg's loads in their trips),
// about 17 round trips over its 528 splits. On an H200 (set CB, r1706: two rounds
// alternating against the loop, the best of each), dense columns of 2 to 7 outputs read
// up to 1.09 times as fast (f16 sum of 1048577 x 7 9.61 -> 8.81 us, f32 12.88 -> 12.52;
// 16777216 x 7 1.00 to 1.01), 9 outputs (folded by fold_outputs_in_block) as before. The
// rows kernel's sums of 7 long rows took 1.04 to 1.07 times as long so (r1704), and the
// finalize kernel gained nothing (columns 65537 x 100 and 1048577 x 100 0.97 to 1.00
// times as fast): they keep the loop. Past the last split a load is the identity, which
// leaves the value as it was.
template <class C>
__device__ __forceinline__ void finish_outputs(const AxisParams& p, u64 warp, u64 warps) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  constexpr int kLoads = C::kFamily == axis_columns_dense && C::kTicket ? 4 : 1;  // loads in flight a lane
  const unsigned lane = threadIdx.x & 31u;
  const A* partials = static_cast<const A*>(p.partials);
  // Four outputs per pass, their loads issued before the shuffles.
  for (u64 first = warp; first < p.outputs; first += 4 * warps) {
    A v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const u64 j = first + u * warps;
      v[u] = Op::template identity<A>();
      if (j < p.outputs && kLoads == 1)
        for (u64 s = lane; s < p.splits; s += 32) v[u] = Op::template apply<A>(v[u], __ldcg(partials + j * p.splits + s));
      if (j < p.outputs && kLoads > 1) {
        const A* q = partials + j * p.splits;
        for (u64 s = lane; s < p.splits; s += 32 * kLoads) {
          A x[kLoads];
#pragma unroll
          for (int k = 0; k < kLoads; ++k)
            x[k] = s + 32 * k < p.splits ? __ldcg(q + s + 32 * k) : Op::template identity<A>();
#pragma unroll
          for (int k = 0; k < kLoads; ++k) v[u] = Op::template apply<A>(v[u], x[k]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const u64 j = first + u * warps;
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) v[u] = Op::template apply<A>(v[u], shfl_xor(v[u], offset));
      if (lane == 0 && j < p.outputs) write_output<C>(p, j, v[u]);
    }
  }
}

// The last block's fold (SPLIT 2 and 3): the partials of every output, written out by
// the block's threads. A group of g lanes takes an output (g a power of two up to
// the warp), each lane keeping eight loads in flight over the output's partials, then a
// shuffle tree over the group; g is the one that needs the fewest round trips to L2 for
// this many outputs, splits and threads. Every output's partials fold in a fixed order
// for a given launch. Ties go to the larger group (fewer loads a lane). One warp per
// output, as the finalize kernel folds, left the last block 3-6 us behind a second
// kernel over 100 outputs and 7 splits (H100, columns 1000 x 100): a few warps then
// wait on a round trip to L2 per output. With the groups: 10.2 -> 5.7 us there, 1000 x
// 1000 51 -> 7.8 us, rows 65537 x 100 23 -> 14.8 us (docs/BENCHMARKS.md, fifteenth set).
template <class C>
__device__ __forceinline__ void fold_outputs_in_block(const AxisParams& p, u64 first, u64 count) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  const u64 warp = threadIdx.x / 32, warps = C::kBlock / 32;
  const A* partials = static_cast<const A*>(p.partials);
  const u64 splits = p.splits;
  // The choice in float arithmetic without a division: a 64-bit division is a long
  // subroutine here, and a dozen of them cost the last block more than the loads they
  // would save (up to 10 us on an H100: columns 65537 x 100 in blocks of 1024).
  unsigned g = 1, log_g = 0;
  float fewest = 3.0e38f;
  const float threads = (float)(warps * 32), outputs_f = (float)count, splits_f = (float)splits;
  for (unsigned c = 1, log_c = 0; c <= 32; c *= 2, ++log_c) {
    const float trips = ceilf(__fdividef(outputs_f * (float)c, threads)) * ceilf(splits_f * (0.125f / (float)c));
    if (trips <= fewest) {
      fewest = trips;
      g = c;
      log_g = log_c;
    }
  }
  const unsigned lane = threadIdx.x & 31u, sub = lane & (g - 1);
  const u64 groups = (warps * 32) >> log_g, group = (warp * 32 + lane) >> log_g;
  // Passes are the same for every lane of a warp, so all of them reach the shuffles.
  for (u64 base = 0; base < count; base += groups) {
    const u64 j = first + base + group;
    const bool live = base + group < count;
    A v = Op::template identity<A>();
    if (live) {
      const A* q = partials + j * splits;
      for (u64 s = sub; s < splits; s += 8 * g) {
        A x[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) x[u] = s + u * g < splits ? __ldcg(q + s + u * g) : Op::template identity<A>();
#pragma unroll
        for (int u = 0; u < 8; ++u) v = Op::template apply<A>(v, x[u]);
      }
    }
    for (unsigned offset = g / 2; offset > 0; offset /= 2) v = Op::template apply<A>(v, shfl_xor(v, (int)offset));
    if (sub == 0 && live) write_output<C>(p, j, v);
  }
}

template <class C>
__device__ __forceinline__ void finish_outputs_in_block(const AxisParams& p) {
  const u64 warp = threadIdx.x / 32, warps = C::kBlock / 32;
  // An output or none per warp: the finalize kernel's fold, which measured 0.2-0.7 us
  // faster there than the groups below (H100, 7 outputs over 32 to 512 splits).
  if (p.outputs <= warps) {
    finish_outputs<C>(p, warp, warps);
    return;
  }
  fold_outputs_in_block<C>(p, 0, p.outputs);
}

// SPLIT 2: after a block's partials are written, the last block to finish folds them all.
template <class C>
__device__ __forceinline__ void ticket_finish(const AxisParams& p) {
  // A split program whose plan did not split (one block per output for this shape)
  // wrote the outputs itself.
  if (!C::kTicket || p.splits <= 1) return;
  __shared__ bool is_last;
  // The barrier orders the block's partials before thread 0's releasing ticket; its
  // acquire, then the second barrier, orders every block's partials before the fold.
  __syncthreads();
  if (threadIdx.x == 0) is_last = take_ticket(p.ticket) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  finish_outputs_in_block<C>(p);
  if (threadIdx.x == 0) *p.ticket = 0;
}

// Columns split with a ticket (SPLIT 2): the `splits` blocks of a group (those that share
// their tiles of outputs, blockIdx.x / splits) each take a ticket of the group's own after
// writing their partials, and the last of them folds the outputs of the group's tiles,
// TILE outputs from group * TILE, then every groups * TILE. The folds of all groups run
// side by side at the end of the one launch (a single last block folding every output
// was slower than a second kernel from about 2000 partials). p.ticket holds a slot per
// group (kAxisTicketSlots in the engine's launch.h; the plan keeps the groups within
// them), each zero between launches: its last block sets it back.
//
// The fold: kG lanes per output (the block's threads over a tile, up to a warp), each
// lane four loads in flight a stride of kG apart, then a shuffle tree over the kG lanes:
// a fixed order for a given launch. Its strides are constants and its indices 32-bit
// (the group from blockIdx.x here, not kept live across the main loop), so that it needs
// few registers beside the main loop's: the block-wide fold of finish_outputs_in_block,
// its strides chosen at run time, doubled the kernel's registers (32 -> 64, f32 max) and
// halved the blocks resident per SM. Even so the compiler may leave the main loop fewer
// loads in flight than the two-pass program's (f32 sums of eight loads), so the engine
// splits so only over small inputs, where each group's fold takes a few round trips
// (columns_fold_in_one_launch and axis_columns_fold_trips in the engine's axis.cpp).
template <class C, int TILE>
__device__ __forceinline__ void columns_ticket_finish(const AxisParams& p) {
  if (!C::kTicket || p.splits <= 1) return;
  const unsigned splits32 = (unsigned)p.splits;  // at most the grid's blocks
  const unsigned group = blockIdx.x / splits32, groups = gridDim.x / splits32;
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  __shared__ bool is_last;
  __syncthreads();
  if (threadIdx.x == 0) is_last = take_ticket(p.ticket + group) == splits32 - 1;
  __syncthreads();
  if (!is_last) return;
  constexpr int kLanes = C::kBlock / TILE;
  constexpr int kG = kLanes >= 32 ? 32 : kLanes >= 16 ? 16 : kLanes >= 8 ? 8 : kLanes >= 4 ? 4 : kLanes >= 2 ? 2 : 1;
  constexpr unsigned kPerPass = C::kBlock / kG;
  constexpr int kLoads = 4;  // loads in flight a lane
  const unsigned sub = threadIdx.x % kG, slot = threadIdx.x / kG;
  const A* partials = static_cast<const A*>(p.partials);
  const unsigned splits = splits32;
  for (u64 first = (u64)group * TILE; first < p.outputs; first += (u64)groups * TILE) {
    const unsigned count = p.outputs - first < (u64)TILE ? (unsigned)(p.outputs - first) : (unsigned)TILE;
    // Passes are the same for every thread of the block, so all lanes reach the shuffles.
    for (unsigned base = 0; base < count; base += kPerPass) {
      const bool live = base + slot < count;
      const u64 j = first + base + slot;
      A v = Op::template identity<A>();
      if (live) {
        const A* q = partials + j * splits + sub;
        for (unsigned s = sub; s < splits; s += kLoads * kG, q += kLoads * kG) {
          A x[kLoads];
#pragma unroll
          for (int u = 0; u < kLoads; ++u) x[u] = s + u * kG < splits ? __ldcg(q + u * kG) : Op::template identity<A>();
#pragma unroll
          for (int u = 0; u < kLoads; ++u) v = Op::template apply<A>(v, x[u]);
        }
      }
#pragma unroll
      for (int offset = kG / 2; offset > 0; offset /= 2) v = Op::template apply<A>(v, shfl_xor(v, offset));
      if (sub == 0 && live) write_output<C>(p, j, v);
    }
  }
  if (threadIdx.x == 0) p.ticket[group] = 0;
}

// Aligned vector of VEC elements of T.
template <class T, int VEC> struct alignas(sizeof(T) * VEC) AxisVec { T v[VEC]; };

// The batched tail (AxisConfig::kTail): in the last, partial tile of a run of `count`
// (> 0) loads, index i is clamped to the last one, so that a load past the end reads
// it again, and its value is folded as the op's identity (live false), which leaves the
// accumulator's bits as they are. Every load is then unconditional and used, so all of
// them go out before the first is waited for. A guarded load per step (`if (i < count)
// v = fold(v, load(i))`) is issued one or two at a time behind its branch, each group a
// round trip to memory, and the lanes of a group that have more of them than the
// others keep the whole warp waiting: rows of 1000 f32 elements, 32 lanes of 16-byte
// vectors, take four round trips instead of two. Which form is faster depends on the
// shape (fewer instructions against fewer round trips) and on how the compiler
// schedules each one, so it is a tunable (`tail`), chosen by builtin_axis_spec.
__device__ __forceinline__ u64 batched_index(u64 i, u64 count) { return i < count ? i : count - 1; }
template <class Op, class A> __device__ __forceinline__ A live_or_identity(bool live, A x) {
  return live ? x : Op::template identity<A>();
}

// Elements of a row's scalar head (or tail) one lane of a group reads at most.
template <class C> __host__ __device__ constexpr int rows_peel_count() {
  return C::kVec > 1 ? (C::kVec - 1 + C::kGroup - 1) / C::kGroup : 0;
}

// One whole tile of a row's vectors: lane loads first, first + kGroup, ... (kUnroll of
// them), all in flight before the first is folded, then folds them in that order.
template <class C>
__device__ __forceinline__ typename C::Acc fold_vector_tile(const AxisVec<typename C::In, C::kVec>* body, u64 first,
                                                            typename C::Acc v) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  AxisVec<typename C::In, C::kVec> x[C::kUnroll];
#pragma unroll
  for (int u = 0; u < C::kUnroll; ++u) x[u] = body[first + u * C::kGroup];
#pragma unroll
  for (int u = 0; u < C::kUnroll; ++u)
#pragma unroll
    for (int e = 0; e < C::kVec; ++e) v = Op::template fold<A>(v, (A)x[u].v[e]);
  return v;
}

// Rows: lane `lane` of a group folds vectors lane, lane + kGroup, ... < vectors into v,
// kUnroll of them in flight at a time, in a fixed order.
template <class C>
__device__ __forceinline__ typename C::Acc fold_row_body(const AxisVec<typename C::In, C::kVec>* body, u64 vectors,
                                                         unsigned lane, typename C::Acc v) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  constexpr int U = C::kUnroll;
  if (C::kTail) {
    // The group takes the tiles together, so every lane runs the same number of them;
    // the last one partial, its loads batched.
    constexpr u64 kTile = (u64)U * C::kGroup;
    u64 base = 0;
    for (; base + kTile <= vectors; base += kTile) v = fold_vector_tile<C>(body, base + lane, v);
    if (base < vectors) {
      AxisVec<typename C::In, C::kVec> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = body[batched_index(base + lane + u * C::kGroup, vectors)];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int e = 0; e < C::kVec; ++e)
          v = Op::template fold<A>(v, live_or_identity<Op, A>(base + lane + u * C::kGroup < vectors, (A)x[u].v[e]));
    }
    return v;
  }
  u64 i = lane;
  for (; i + (U - 1) * C::kGroup < vectors; i += U * C::kGroup) v = fold_vector_tile<C>(body, i, v);
  for (; i < vectors; i += C::kGroup) {
    const AxisVec<typename C::In, C::kVec> x = body[i];
#pragma unroll
    for (int e = 0; e < C::kVec; ++e) v = Op::template fold<A>(v, (A)x.v[e]);
  }
  return v;
}

// Rows: lanes of a group fold [lo, hi) of a row starting at `row`, in a fixed pattern:
// a scalar head up to the first 16-byte boundary, the vector body, a scalar tail.
//   PEELED false: the head, the body and the tail are read in turn, each its own round
//                 trip to memory; the kernel for rows that are all on the vector grid
//                 (no head, no tail), where it is the faster code.
//   PEELED true:  the head's and the tail's loads (up to 3 of each per lane) go out before
//                 the body's, and are folded after it: one round trip fewer per row end
//                 off the grid. The runtime launches this twin, where the program has one
//                 (axis_has_twin in the engine's axis.h), for rows off the grid
//                 (axis_launch_takes_twin). Measured on an H200 (f32 and f16 sum and max,
//                 R = 33 .. 12289, built-in configs): up to 1.13 times faster off the
//                 grid, and up to 1.03 times slower on it, hence two kernels.
// Either way the fold order is fixed, so results are the same bits on every run.
template <class C, bool PEELED>
__device__ __forceinline__ typename C::Acc fold_row(const typename C::In* row, u64 lo, u64 hi, unsigned lane) {
  typedef typename C::Acc A;
  typedef typename C::In T;
  typedef typename C::Op Op;
  A v = Op::template identity<A>();
  constexpr int U = C::kUnroll;
  if (C::kVec == 1 && C::kTail) {
    // As fold_row_body's batched tail, over elements.
    constexpr u64 kTile = (u64)U * C::kGroup;
    u64 base = lo;
    for (; base + kTile <= hi; base += kTile) {
      A a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = (A)ldg(row + base + lane + u * C::kGroup);
#pragma unroll
      for (int u = 0; u < U; ++u) v = Op::template fold<A>(v, a[u]);
    }
    if (base < hi) {
      A a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = (A)ldg(row + lo + batched_index(base - lo + lane + u * C::kGroup, hi - lo));
#pragma unroll
      for (int u = 0; u < U; ++u)
        v = Op::template fold<A>(v, live_or_identity<Op, A>(base + lane + u * C::kGroup < hi, a[u]));
    }
    return v;
  }
  if (C::kVec == 1) {
    u64 k = lo + lane;
    for (; k + (U - 1) * C::kGroup < hi; k += U * C::kGroup) {
      A a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = (A)ldg(row + k + u * C::kGroup);
#pragma unroll
      for (int u = 0; u < U; ++u) v = Op::template fold<A>(v, a[u]);
    }
    for (; k < hi; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(row + k));
    return v;
  }
  const u64 bytes = sizeof(T) * C::kVec;
  const u64 address = (u64)(row + lo);
  u64 head = ((bytes - address % bytes) % bytes) / sizeof(T);
  if (!PEELED || rows_peel_count<C>() > 3) {
    if (address % sizeof(T) != 0) head = hi - lo;  // never: inputs are element-aligned
    if (head > hi - lo) head = hi - lo;
    // The head has up to kVec - 1 elements: lanes stride over it (a group may be narrower).
    if (RT_MUTATION != 3)
      for (u64 k = lane; k < head; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(row + lo + k));
    const u64 start = lo + head;
    const u64 vectors = (hi - start) / C::kVec;
    v = fold_row_body<C>(reinterpret_cast<const AxisVec<T, C::kVec>*>(row + start), vectors, lane, v);
    for (u64 k = start + vectors * C::kVec + lane; k < hi; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(row + k));
    return v;
  }
  // Inputs are element-aligned (the runtime refuses others), so the head is < kVec.
  if (head > hi - lo) head = hi - lo;
  const u64 start = lo + head;
  const u64 vectors = (hi - start) / C::kVec;
  const u64 tail = start + vectors * C::kVec;  // [tail, hi): fewer than kVec elements
  const AxisVec<T, C::kVec>* body = reinterpret_cast<const AxisVec<T, C::kVec>*>(row + start);
  constexpr int kHeld = rows_peel_count<C>() >= 1 && rows_peel_count<C>() <= 3 ? rows_peel_count<C>() : 1;
  A h[kHeld], t[kHeld];
#pragma unroll
  for (int m = 0; m < kHeld; ++m) {
    const u64 k = lane + (u64)m * C::kGroup;
    h[m] = t[m] = Op::template identity<A>();
    if (k < head) h[m] = (A)ldg(row + lo + k);
    if (tail + k < hi) t[m] = (A)ldg(row + tail + k);
  }
  v = fold_row_body<C>(body, vectors, lane, v);
#pragma unroll
  for (int m = 0; m < kHeld; ++m)
    if (RT_MUTATION != 3) v = Op::template fold<A>(v, h[m]);
#pragma unroll
  for (int m = 0; m < kHeld; ++m) v = Op::template fold<A>(v, t[m]);
  return v;
}

// Rows split with a ticket finish, SPLIT 3: split `split` of `splits` folds tiles split,
// split + splits, ... of the row (a tile: kUnroll loads of every lane of the group), so
// that at any moment the blocks of a row read neighbouring tiles, as a grid-stride loop
// does, instead of one contiguous chunk each, far apart. Split 0 also folds the scalar
// head and tail. Which split folds what, and in which order, is fixed: deterministic.
template <class C>
__device__ __forceinline__ typename C::Acc fold_row_split(const typename C::In* row, u64 n, u64 split, u64 splits,
                                                          unsigned lane) {
  typedef typename C::Acc A;
  typedef typename C::In T;
  typedef typename C::Op Op;
  A v = Op::template identity<A>();
  constexpr int U = C::kUnroll;
  constexpr u64 kTile = (u64)U * C::kGroup;  // loads (elements or vectors) of one tile
  if (C::kVec == 1) {
    for (u64 base = split * kTile; base < n; base += splits * kTile) {
      if (base + kTile <= n) {
        A a[U];
#pragma unroll
        for (int u = 0; u < U; ++u) a[u] = (A)ldg(row + base + lane + u * C::kGroup);
#pragma unroll
        for (int u = 0; u < U; ++u) v = Op::template fold<A>(v, a[u]);
      } else {
        for (u64 k = base + lane; k < n; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(row + k));
      }
    }
    return v;
  }
  const u64 bytes = sizeof(T) * C::kVec;
  u64 head = ((bytes - (u64)row % bytes) % bytes) / sizeof(T);
  if (head > n) head = n;
  if (RT_MUTATION != 3 && split == 0)
    for (u64 k = lane; k < head; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(row + k));
  const u64 vectors = (n - head) / C::kVec;
  const AxisVec<T, C::kVec>* body = reinterpret_cast<const AxisVec<T, C::kVec>*>(row + head);
  for (u64 base = split * kTile; base < vectors; base += splits * kTile) {
    if (base + kTile <= vectors) {
      v = fold_vector_tile<C>(body, base + lane, v);
    } else {
      for (u64 i = base + lane; i < vectors; i += C::kGroup) {
        const AxisVec<T, C::kVec> x = body[i];
#pragma unroll
        for (int e = 0; e < C::kVec; ++e) v = Op::template fold<A>(v, (A)x.v[e]);
      }
    }
  }
  if (split == 0)
    for (u64 k = head + vectors * C::kVec + lane; k < n; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(row + k));
  return v;
}

// General: whether an output starting at `start` reads kVec-element vectors along the
// innermost reduced dimension: that dimension contiguous, its extent a multiple of kVec,
// every other reduced stride too, and `start` on the vector grid.
template <class C>
__device__ __forceinline__ bool general_vectors(const AxisParams& p, const typename C::In* start) {
  constexpr int V = C::kVec;
  if (V == 1 || p.reduced_rank < 1) return false;
  const int in = p.reduced_rank - 1;
  bool ok = p.reduced_strides[in] == 1 && p.reduced_extents[in] % V == 0 &&
            (u64)start % (sizeof(typename C::In) * V) == 0;
#pragma unroll
  for (int d = 0; d < 7; ++d)
    if (d < in) ok = ok && p.reduced_strides[d] % V == 0;
  return ok;
}

// General: lane `lane` of a group folds the reduced indices lo + lane, lo + lane +
// kGroup, ... < hi, in that order, kUnroll loads in flight; where general_vectors holds,
// vectors [lo / kVec, hi / kVec) the same way (the splits' bounds rounded down, so they
// still partition R). A group of one thread per output reads neighbouring outputs across
// a warp (the built-in choice where a kept dimension is the densest); wider groups read
// along the reduced dimensions. Reduced extents of 2^31 or more decompose every index.
template <class T, int V> __device__ __forceinline__ AxisVec<T, V> general_load(const T* at) {
  AxisVec<T, V> x;
  if (V == 1)
    x.v[0] = ldg(at);
  else
    x = *reinterpret_cast<const AxisVec<T, V>*>(at);
  return x;
}

// MAXR: the walk's largest reduced rank (2 for views of one or two reduced dimensions:
// the hot loop without the outer carries, as fold_output_vectors). Against the full walk
// (H200, held, sums over two reduced dimensions): 1.03 to 1.17 times faster in f16 (2000
// outputs over 100 x 30, rows of 32: 15.95 -> 13.69 us), 1.03 to 1.14 in f32; over three,
// on the full walk still, within 1%.
template <class C, int V, int MAXR>
__device__ __forceinline__ typename C::Acc fold_general_walk(const AxisParams& p, const typename C::In* start, u64 k,
                                                             u64 end, typename C::Acc v) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int U = C::kUnroll;
  constexpr u64 G = C::kGroup;
  GeneralWalk<V, MAXR> w(p, k, C::kGroup);
  for (; k + (U - 1) * G < end; k += U * G) {
    AxisVec<T, V> x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      x[u] = general_load<T, V>(start + w.off);
      w.advance(p);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int e = 0; e < V; ++e) v = Op::template fold<A>(v, (A)x[u].v[e]);
  }
  // The rest one load at a time: issued together as general_output_vectors does, f16
  // sums over a permuted view (128 outputs of 64 x 512) took 14.4-19.1 us on an H100
  // against 11.1 this way.
  for (; k < end; k += G) {
    const AxisVec<T, V> x = general_load<T, V>(start + w.off);
#pragma unroll
    for (int e = 0; e < V; ++e) v = Op::template fold<A>(v, (A)x.v[e]);
    w.advance(p);
  }
  return v;
}

// Every other element (one reduced dimension of stride 2, the first element on the
// 4-byte grid): lanes read the aligned 16-byte vectors that hold the run and fold their
// even elements, a warp's loads one contiguous run of 512 bytes where 16-bit scalars read
// 128 bytes a load. Indices [lo, hi): a scalar head up to the first vector's start,
// vectors of kW indices, a scalar tail. No vector reaches past the view's last element
// (R - 1, whose successor the view need not own): a vector's last element is the
// successor of its last index, so vectors end at index R - 1 at the latest. The bytes
// are those the scalars' sectors hold anyway: the gain is in load instructions, not in
// DRAM traffic. Taken by block-wide groups of 16-bit elements where each lane has at
// least a pass of kUnroll vectors (fold_general). On an H200 (set BV in
// docs/BENCHMARKS.md, paced, two rounds), f16 sums of every other element of 2^26 69.9
// and 70.1 -> 66.4 and 65.6 us, of 39160703 1.07 to 1.09 times as fast, of 8388609 0.98;
// of 4-byte elements, and in groups within a warp (rows of every other element), no
// faster or up to 1.12 times slower, the scalars' loads already near the DRAM's pace.
template <class C>
__device__ __forceinline__ typename C::Acc fold_every_other(const AxisParams& p, const typename C::In* start, u64 lo,
                                                            u64 hi, unsigned lane) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int E = 16 / sizeof(T);  // elements a vector
  constexpr u64 kW = E / 2;          // indices a vector
  constexpr int U = C::kUnroll;
  constexpr u64 G = C::kGroup;
  A v = Op::template identity<A>();
  // Index k lies at start + 2k; those on the 16-byte grid are k0 mod kW.
  const u64 k0 = ((16 - (u64)start % 16) % 16) / (2 * sizeof(T));
  const u64 r = (u64)p.reduced_extents[0];
  const u64 limit = hi < r - 1 ? hi : r - 1;
  u64 a = lo + (k0 + kW - lo % kW) % kW;
  const u64 n = a < limit ? (limit - a) / kW : 0;
  if (a > hi) a = hi;
  const u64 b = a + n * kW;
  for (u64 k = lo + lane; k < a; k += G) v = Op::template fold<A>(v, (A)ldg(start + 2 * k));
  const AxisVec<T, E>* body = reinterpret_cast<const AxisVec<T, E>*>(start + 2 * a);
  u64 q = lane;
  for (; q + (U - 1) * G < n; q += U * G) {
    AxisVec<T, E> x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = body[q + u * G];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int e = 0; e < E; e += 2)
        if (RT_MUTATION != 8 || e != 0) v = Op::template fold<A>(v, (A)x[u].v[e]);
  }
  for (; q < n; q += G) {
    const AxisVec<T, E> x = body[q];
#pragma unroll
    for (int e = 0; e < E; e += 2) v = Op::template fold<A>(v, (A)x.v[e]);
  }
  for (u64 k = b + lane; k < hi; k += G) v = Op::template fold<A>(v, (A)ldg(start + 2 * k));
  return v;
}

template <class C>
__device__ __forceinline__ typename C::Acc fold_general(const AxisParams& p, const typename C::In* start, u64 lo,
                                                        u64 hi, unsigned lane) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  A v = Op::template identity<A>();
  if (!GeneralWalk<1>::fits(p, C::kGroup)) {
    // Reduced extents of 2^31 or more (or R = 1 with no reduced dimension left).
    for (u64 k = lo + lane; k < hi; k += C::kGroup) v = Op::template fold<A>(v, (A)ldg(start + reduced_offset(p, k)));
    return v;
  }
  if (general_vectors<C>(p, start)) {
    const u64 k = lo / C::kVec + lane, end = hi / C::kVec;
    if (k >= end) return v;
    return p.reduced_rank <= 2 ? fold_general_walk<C, C::kVec, 2>(p, start, k, end, v)
                               : fold_general_walk<C, C::kVec, 8>(p, start, k, end, v);
  }
  if (p.reduced_rank == 1) {
    // One strided reduced dimension (a row read every few elements): no digits to carry.
    constexpr int U = C::kUnroll;
    constexpr u64 G = C::kGroup;
    const long long stride = p.reduced_strides[0];
    if (C::kVec == 1 && sizeof(typename C::In) == 2 && C::kGroup > 32 && stride == 2 && (u64)start % 4 == 0 &&
        hi - lo >= (u64)C::kGroup * 4 * U)
      return fold_every_other<C>(p, start, lo, hi, lane);
    u64 k = lo + lane;
    for (; k + (U - 1) * G < hi; k += U * G) {
      A a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = (A)ldg(start + (long long)(k + u * G) * stride);
#pragma unroll
      for (int u = 0; u < U; ++u) v = Op::template fold<A>(v, a[u]);
    }
    if (k < hi) {
      A a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = (A)ldg(start + (long long)batched_index(k + u * G, hi) * stride);
#pragma unroll
      for (int u = 0; u < U; ++u) v = Op::template fold<A>(v, live_or_identity<Op, A>(k + u * G < hi, a[u]));
    }
    return v;
  }
  const u64 k = lo + lane;
  if (k >= hi) return v;
  return p.reduced_rank == 2 ? fold_general_walk<C, 1, 2>(p, start, k, hi, v)
                             : fold_general_walk<C, 1, 8>(p, start, k, hi, v);
}

// General shapes whose densest dimension is a kept one (the engine's
// general_kept_densest): a thread per output, so a warp reads neighbouring outputs at each
// reduced index.
__device__ __forceinline__ bool general_kept_densest(const AxisParams& p) {
  if (p.reduced_rank < 1 || p.kept_rank < 1) return false;
  const long long reduced = p.reduced_strides[p.reduced_rank - 1];  // sorted, positive
  bool kept = false;
#pragma unroll
  for (int d = 0; d < 8; ++d)
    if (d < p.kept_rank) kept = kept || (p.kept_strides[d] < 0 ? -p.kept_strides[d] : p.kept_strides[d]) < reduced;
  return kept;
}

// general_output_vectors' aligned vectors: R steps k, k + kGroup, ... < hi of one
// thread's vector of outputs from `start`, kUnroll loads in flight, folded into acc, on a
// walk of reduced ranks up to MAXR (2: the hot loop without the outer dimensions' carries).
template <class C, int MAXR>
__device__ __forceinline__ void fold_output_vectors(const AxisParams& p, const typename C::In* start, u64 k, u64 hi,
                                                    typename C::Acc (&acc)[C::kVec]) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec, U = C::kUnroll;
  constexpr unsigned BY = C::kGroup;
  GeneralWalk<1, MAXR> w(p, k, BY);
  for (; k + (u64)(U - 1) * BY < hi; k += (u64)U * BY) {
    AxisVec<T, V> x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      x[u] = *reinterpret_cast<const AxisVec<T, V>*>(start + w.off);
      w.advance(p);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = Op::template fold<A>(acc[e], (A)x[u].v[e]);
  }
  if (k < hi) {
    // The last, partial round's loads together: past the end a load reads the last index
    // again and folds the identity.
    AxisVec<T, V> x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      x[u] = *reinterpret_cast<const AxisVec<T, V>*>(start + w.off);
      if (k + (u + 1) * BY < hi) w.advance(p);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int e = 0; e < V; ++e)
        acc[e] = Op::template fold<A>(acc[e], live_or_identity<Op, A>(k + u * BY < hi, (A)x[u].v[e]));
  }
}

// The twin's adjacent outputs: R steps k, k + kGroup, ... < hi of kVec adjacent elements
// from `start` (off the vector grid: scalar loads), at most 16 loads in flight, folded into
// acc, on a walk of reduced ranks up to MAXR (as fold_output_vectors). MAXR 2 against the
// full walk (H200, held, sums over (0,2) from an element or three in): f32 1.05 to 1.23
// times faster ([64,32,128,128] 60.50 -> 49.30 us), f16 0.99 to 1.08 ([100,33,100,128]
// 38.03 -> 38.25, split; [16,1024,16,256] 53.42 -> 49.41).
template <class C, int MAXR>
__device__ __forceinline__ void fold_output_run(const AxisParams& p, const typename C::In* start, u64 k, u64 hi,
                                                typename C::Acc (&acc)[C::kVec]) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec, U = C::kUnroll;
  constexpr int US = V * U > 16 ? (16 / V > 0 ? 16 / V : 1) : U;
  constexpr unsigned BY = C::kGroup;
  GeneralWalk<1, MAXR> w(p, k, BY);
  for (; k + (u64)(US - 1) * BY < hi; k += (u64)US * BY) {
    T x[US][V];
#pragma unroll
    for (int u = 0; u < US; ++u) {
#pragma unroll
      for (int e = 0; e < V; ++e) x[u][e] = ldg(start + w.off + e);
      w.advance(p);
    }
#pragma unroll
    for (int u = 0; u < US; ++u)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = Op::template fold<A>(acc[e], (A)x[u][e]);
  }
  for (; k < hi; k += BY) {
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = Op::template fold<A>(acc[e], (A)ldg(start + w.off + e));
    w.advance(p);
  }
}

// General, a kept dimension the densest: a thread per kVec adjacent outputs (a vector),
// kGroup threads of a block across R for each (BY: thread t takes vector t % (kBlock /
// kGroup) and the R steps t / (kBlock / kGroup), + kGroup, ...), folded in shared memory
// in that order. Where the innermost kept dimension is contiguous and its extent, every
// other stride and the base are multiples of the vector, a thread reads one aligned
// vector at each reduced index; elsewhere kVec scalars. kUnroll steps of R in flight.
// Splits and outputs as the rows kernel's.
// OFF_GRID true: the twin (axis_launch_takes_twin), for vectors off that grid (a base the
// vector does not divide, or a view the vector was not chosen for): scalar loads on the
// same walk. (Beside the vector loads in the main kernel, this code slowed them: H100,
// f16 sums over (0,2) of [40,24,300,64] 32.0 us against 26.3, of [64,32,128,128] 41.0
// against 37.4.)
template <class C, bool OFF_GRID = false>
__device__ __forceinline__ void general_output_vectors(const AxisParams& p) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec, U = C::kUnroll;
  constexpr unsigned BY = C::kGroup, BX = C::kBlock / C::kGroup;
  __shared__ A smem[BY > 1 ? C::kBlock * V : 1];
  const unsigned tx = threadIdx.x % BX, ty = threadIdx.x / BX;
  const T* in = static_cast<const T*>(p.in);
  bool aligned = p.kept_strides[p.kept_rank - 1] == 1 && p.kept_extents[p.kept_rank - 1] % V == 0 &&
                 (u64)in % (sizeof(T) * V) == 0;
#pragma unroll
  for (int d = 0; d < 8; ++d) {
    if (d < p.kept_rank - 1) aligned = aligned && p.kept_strides[d] % V == 0;
    if (d < p.reduced_rank) aligned = aligned && p.reduced_strides[d] % V == 0;
  }
  const bool walks = GeneralWalk<1>::fits(p, BY);
  const u64 splits = C::kSplit ? p.splits : 1;
  const u64 split = C::kSplit ? blockIdx.x % splits : 0;
  const u64 first_block = C::kSplit ? blockIdx.x / splits : blockIdx.x;
  const u64 block_stride = C::kSplit ? gridDim.x / splits : gridDim.x;
  const u64 chunk = (p.reduced + splits - 1) / splits;
  const u64 lo = split * chunk < p.reduced ? split * chunk : p.reduced;
  const u64 hi = lo + chunk < p.reduced ? lo + chunk : p.reduced;
  // Every thread of the block runs every pass (the fold across R synchronises).
  for (u64 pass = first_block; pass * BX * V < p.outputs; pass += block_stride) {
    const u64 j0 = (pass * BX + tx) * V;
    A acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = Op::template identity<A>();
    if (j0 < p.outputs) {
      if (!OFF_GRID && aligned && walks) {
        const T* start = in + output_offset<axis_general>(p, j0);
        if (p.reduced_rank <= 2)
          fold_output_vectors<C, 2>(p, start, lo + ty, hi, acc);
        else
          fold_output_vectors<C, 8>(p, start, lo + ty, hi, acc);
      } else if (OFF_GRID && walks) {
        // Where the vector's outputs are adjacent elements (a contiguous innermost kept
        // dimension whose run holds all of them: the built-in choice's vectors from a base
        // off the grid), one walk reads the V elements at each reduced index, at most 16
        // loads in flight; elsewhere (vectors across runs, a strided innermost kept
        // dimension, the last partial vector) each output its own walk.
        const int kin = p.kept_rank - 1;
        const u64 run = (u64)p.kept_extents[kin];
        if (p.kept_strides[kin] == 1 && j0 % run + V <= run) {
          const T* start = in + output_offset<axis_general>(p, j0);
          if (p.reduced_rank <= 2)
            fold_output_run<C, 2>(p, start, lo + ty, hi, acc);
          else
            fold_output_run<C, 8>(p, start, lo + ty, hi, acc);
        } else {
#pragma unroll 1
          for (int e = 0; e < V; ++e) {
            if (j0 + e >= p.outputs) break;
            const T* start = in + output_offset<axis_general>(p, j0 + e);
            A v = Op::template identity<A>();
            u64 k = lo + ty;
            GeneralWalk<1> w(p, k, BY);
            for (; k + (u64)(U - 1) * BY < hi; k += (u64)U * BY) {
              T x[U];
#pragma unroll
              for (int u = 0; u < U; ++u) {
                x[u] = ldg(start + w.off);
                w.advance(p);
              }
#pragma unroll
              for (int u = 0; u < U; ++u) v = Op::template fold<A>(v, (A)x[u]);
            }
            for (; k < hi; k += BY) {
              v = Op::template fold<A>(v, (A)ldg(start + w.off));
              w.advance(p);
            }
#pragma unroll
            for (int f = 0; f < V; ++f)
              if (f == e) acc[f] = v;  // acc stays in registers (no indexing by e)
          }
        }
      } else {
        // Scalars, a division per element (the main kernel off the grid, or reduced
        // extents of 2^31 or more): each output of the vector its own start (the last
        // vector may be partial).
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (j0 + e < p.outputs) {
            const T* start = in + output_offset<axis_general>(p, j0 + e);
            for (u64 k = lo + ty; k < hi; k += BY)
              acc[e] = Op::template fold<A>(acc[e], (A)ldg(start + reduced_offset(p, k)));
          }
      }
    }
    if (BY > 1) {
      __syncthreads();  // the last pass's fold has read shared memory
#pragma unroll
      for (int e = 0; e < V; ++e) smem[threadIdx.x * V + e] = acc[e];
      __syncthreads();
      if (ty == 0)
        for (unsigned y = 1; y < BY; ++y)
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = Op::template fold<A>(acc[e], smem[(y * BX + tx) * V + e]);
    }
    if (ty == 0)
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const u64 j = j0 + e;
        if (j >= p.outputs) break;
        if (C::kSplit && splits > 1)
          static_cast<A*>(p.partials)[j * splits + split] = acc[e];
        else
          write_output<C>(p, j, acc[e]);
      }
  }
  ticket_finish<C>(p);
}

template <class C, bool PEELED = false>
__global__ void __launch_bounds__(C::kBlock) axis_rows_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  // Programs of a group wider than a warp never take it: their code is the rows path
  // alone. (With a block-wide fold across R compiled in beside it, one H100 run of
  // reduced-densest views took up to 1.8 times as long: f32 sums of 1024 outputs over 64
  // x 64, 13.3 us against 7.6; the cause was not isolated.)
  // The twin of a general program is this path alone.
  if (C::kFamily == axis_general && C::kGroup <= 32 && (PEELED || general_kept_densest(p))) {
    general_output_vectors<C, PEELED>(p);
    return;
  }
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  __shared__ A smem[32];
  const T* in = static_cast<const T*>(p.in);
  constexpr unsigned kGroups = C::kBlock / C::kGroup;
  const unsigned lane = threadIdx.x % C::kGroup;
  const unsigned group = threadIdx.x / C::kGroup;
  // Split programs: block b works on split b % splits of its outputs.
  const u64 splits = C::kSplit ? p.splits : 1;
  const u64 split = C::kSplit ? blockIdx.x % splits : 0;
  const u64 first_block = C::kSplit ? blockIdx.x / splits : blockIdx.x;
  const u64 block_stride = C::kSplit ? gridDim.x / splits : gridDim.x;
  const u64 chunk = (p.reduced + splits - 1) / splits;
  const u64 lo = split * chunk < p.reduced ? split * chunk : p.reduced;
  const u64 hi = lo + chunk < p.reduced ? lo + chunk : p.reduced;
  // Every thread of a block runs the same number of iterations (the block reduction
  // synchronises); outputs past the end compute nothing and write nothing. Groups
  // within a warp take kRows outputs per pass, their loads all issued before the
  // shuffles, so short rows keep several loads in flight per lane.
  constexpr unsigned kRows = C::kRows;
  for (u64 base = first_block * kGroups * kRows; base < p.outputs; base += block_stride * kGroups * kRows) {
    A v[kRows];
#pragma unroll
    for (unsigned u = 0; u < kRows; ++u) {
      const u64 j = base + u * kGroups + group;
      v[u] = Op::template identity<A>();
      if (j < p.outputs) {
        const T* start = in + output_offset<C::kFamily>(p, j);
        if (C::kFamily == axis_rows && C::kTiles && splits > 1) {
          v[u] = fold_row_split<C>(start, p.reduced, split, splits, lane);
        } else if (C::kFamily == axis_rows) {
          v[u] = fold_row<C, PEELED>(start, lo, hi, lane);
        } else {
          v[u] = fold_general<C>(p, start, lo, hi, lane);
        }
      }
    }
#pragma unroll
    for (unsigned u = 0; u < kRows; ++u) {
      const u64 j = base + u * kGroups + group;
      const A r = group_reduce<C>(v[u], smem);
      if (lane == 0 && j < p.outputs) {
        if (C::kSplit && splits > 1)
          static_cast<A*>(p.partials)[j * splits + split] = r;
        else
          write_output<C>(p, j, r);
      }
    }
  }
  ticket_finish<C>(p);
}

// The columns twin's funnel (16-bit vectors off the grid, one slice): lane t of a warp
// owns the V adjacent outputs j = j0 + V * t .. + V - 1 of every row, and in each row
// reads the aligned vector K elements past its first output (K the row's distance to
// the next grid point: the same for every lane and, where kGroup rows span whole
// vectors, for every row a thread row takes). That vector holds the lane's outputs K ..
// V - 1 and its upper neighbour's 0 .. K - 1; a lane takes its own 0 .. K - 1 from its
// lower neighbour's vector by a shuffle, lane 0 loading the vector below its own (the
// lower warp's last vector, which the L1 holds; it holds the lane's first output, so it
// lies within the allocation). Every lane of a warp takes the same rows, so the loops
// and the shuffles are the whole warp's.
//
// The passes of kUnroll rows below `safe` take K as a template argument (a loop per K),
// so that picking each output's element costs no arithmetic. The last pass or two of a
// lane's rows, which may reach `safe`, take it as a value and pick by comparisons, so
// that they compile once: with every pass compiled per K, NVRTC and ptxas took 1.6 to
// 1.8 s for a program of vectors of four (sm_90, on the build machine; 1.1 s so), and its
// kernels took up to 1.04 times as long (set CG in docs/BENCHMARKS.md). A fold in window
// order with K a value everywhere, lane 0 folding the vector below in every row, took
// 1.03 to 1.52 times as long (set CG).
//
// At a row's end a lane's vector may reach up to V - 1 elements past the row's last
// output. Below `safe` (columns_funnel_safe_rows) that is still within the view's span,
// so within its allocation, and every lane reads whole vectors. In the rows from `safe`
// on (the view's last, or its last few where rows overlap) a lane whose vector would
// reach past the row reads its outputs element by element instead (memcheck caught a
// vector there reaching past an allocation that ends at the view's last element), within
// the same pass of kUnroll rows as the others: an earlier form had the row-end lanes walk
// all their rows element by element beside the vector lanes, their warps took both paths
// in turn, and where those blocks set the kernel's time it ran 0.59 times as fast.
template <class T, int V>
__device__ __forceinline__ AxisVec<T, V> shfl_up_vector(const AxisVec<T, V>& x) {
  static_assert(sizeof(AxisVec<T, V>) % 4 == 0, "whole words");
  constexpr int W = sizeof(AxisVec<T, V>) / 4;
  AxisVec<T, V> r;
  const unsigned* xw = reinterpret_cast<const unsigned*>(&x);
  unsigned* rw = reinterpret_cast<unsigned*>(&r);
#pragma unroll
  for (int w = 0; w < W; ++w) rw[w] = __shfl_up_sync(0xffffffffu, xw[w], 1);
  return r;
}

// The first row from which a row-end lane's vector (up to V - 1 elements past the row's
// last output) may reach past the view's last element: rows k with k * stride + V - 1
// <= (reduced - 1) * stride are safe (stride > 0).
template <int V>
__device__ __forceinline__ u64 columns_funnel_safe_rows(u64 reduced, long long stride) {
  const u64 back = ((u64)(V - 1) + (u64)stride - 1) / (u64)stride;
  return reduced > back ? reduced - back : 0;
}

// U rows of a lane's funnel below `safe`, k, k + kGroup, ... (`at`: row k's address K
// past the lane's first output), their loads in flight together; K a template argument,
// so that taking outputs 0 .. K - 1 from the vector below costs no arithmetic.
template <class C, int K, int U>
__device__ __forceinline__ void columns_funnel_pass(const typename C::In* at, long long step, bool live_x,
                                                    bool own_y, typename C::Acc (&v)[C::kVec]) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec;
  typedef AxisVec<T, V> Vec;
  const bool lane0 = (threadIdx.x & 31u) == 0;
  Vec none;
#pragma unroll
  for (int w = 0; w < (int)(sizeof(Vec) / 4); ++w) reinterpret_cast<unsigned*>(&none)[w] = 0u;
  Vec x[U], y[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    x[u] = live_x ? *reinterpret_cast<const Vec*>(at + u * step) : none;
    y[u] = K > 0 && own_y ? *reinterpret_cast<const Vec*>(at + u * step - V) : none;
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    Vec below = none;
    if (K > 0) {
      below = shfl_up_vector<T, V>(x[u]);
      if (lane0) below = y[u];
    }
#pragma unroll
    for (int e = 0; e < K; ++e) v[e] = Op::template apply<A>(v[e], (A)below.v[V - K + e]);
#pragma unroll
    for (int e = K; e < V; ++e) v[e] = Op::template apply<A>(v[e], (A)x[u].v[e - K]);
  }
}

// The passes below `safe` (columns_funnel_pass), for one K; returns the first row left.
template <class C, int K>
__device__ __forceinline__ u64 columns_funnel_body(const typename C::In* column, long long stride, u64 k, u64 stop,
                                                   bool live_x, bool own_y, typename C::Acc (&v)[C::kVec]) {
  constexpr int U = C::kUnroll;
  constexpr u64 kBy = C::kGroup;
  const typename C::In* at = column + (long long)k * stride + K;
  const long long step = (long long)kBy * stride;
  for (; k + (U - 1) * kBy < stop; k += U * kBy, at += U * step) columns_funnel_pass<C, K, U>(at, step, live_x, own_y, v);
  return k;
}

// U rows of a lane's funnel that may reach `safe` (`at`: row k's address K past the
// lane's first output), K a value: the last pass or two of a lane's rows, compiled once
// for every K. From `safe` on no vector reaches past the row: there a lane that does not
// `fit` (its vector, or lane 0's below, reaching past it) reads its `own` outputs element
// by element, in the same pass as the others' vectors.
template <class C, int U>
__device__ __forceinline__ void columns_funnel_edge(const typename C::In* at, long long step, unsigned K, u64 k,
                                                    u64 safe, bool live_x, bool own_y, bool fits, u64 own,
                                                    typename C::Acc (&v)[C::kVec]) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec;
  constexpr u64 kBy = C::kGroup;
  typedef AxisVec<T, V> Vec;
  const bool lane0 = (threadIdx.x & 31u) == 0;
  Vec none;
#pragma unroll
  for (int w = 0; w < (int)(sizeof(Vec) / 4); ++w) reinterpret_cast<unsigned*>(&none)[w] = 0u;
  // A lane that is not `whole` in a row holds its own outputs there in x (element e its
  // output e), not a vector K past them: the lanes above it in the warp are not whole
  // either, so none takes outputs from it.
  Vec x[U], y[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool whole = fits || k + u * kBy < safe;
    x[u] = live_x && whole ? *reinterpret_cast<const Vec*>(at + u * step) : none;
    y[u] = own_y && whole ? *reinterpret_cast<const Vec*>(at + u * step - V) : none;
    if (!whole)
#pragma unroll
      for (int e = 0; e < V; ++e)
        if ((u64)e < own) x[u].v[e] = ldg(at + u * step - K + e);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool whole = fits || k + u * kBy < safe;
    Vec below = shfl_up_vector<T, V>(x[u]);
    if (lane0) below = y[u];
    // Output e: element V - K + e of [below, x], picked by comparisons (not an index, so
    // that both stay in registers); a lane not whole holds it at e.
#pragma unroll
    for (int e = 0; e < V; ++e) {
      T t = x[u].v[e];
      if (whole)
#pragma unroll
        for (int d = 0; d < V; ++d) {
          if ((unsigned)e >= K && (unsigned)(e - d) == K) t = x[u].v[d];
          if ((unsigned)e < K && (unsigned)(V + e - d) == K) t = below.v[d];
        }
      if (whole || (u64)e < own) v[e] = Op::template apply<A>(v[e], (A)t);
    }
  }
}

// A lane's rows k, k + kGroup, ... below hi (K: their distance to the next grid point):
// kUnroll at a time, through one K's loop while the pass stays below `safe`, then
// guarded, the rest one at a time (at most kUnroll - 1 rows).
template <class C>
__device__ __forceinline__ void columns_funnel_rows(const typename C::In* column, long long stride, unsigned K,
                                                    u64 k, u64 hi, u64 safe, u64 j, u64 inner,
                                                    typename C::Acc (&v)[C::kVec]) {
  constexpr int V = C::kVec, U = C::kUnroll;
  constexpr u64 kBy = C::kGroup;
  const bool live_x = j + K < inner;
  const bool own_y = (threadIdx.x & 31u) == 0 && K > 0 && j < inner;
  const bool fits = j + K + V <= inner;
  const u64 own = j < inner ? (inner - j < (u64)V ? inner - j : (u64)V) : 0;
  const u64 stop = hi < safe ? hi : safe;
  switch (K) {
#define RT_FUNNEL_CASE(KK)                                                                                  \
  case KK:                                                                                                  \
    if constexpr (KK < V) k = columns_funnel_body<C, (KK < V ? KK : 0)>(column, stride, k, stop, live_x, own_y, v); \
    break;
    RT_FUNNEL_CASE(0)
    RT_FUNNEL_CASE(1)
    RT_FUNNEL_CASE(2)
    RT_FUNNEL_CASE(3)
    RT_FUNNEL_CASE(4)
    RT_FUNNEL_CASE(5)
    RT_FUNNEL_CASE(6)
    RT_FUNNEL_CASE(7)
#undef RT_FUNNEL_CASE
    default: break;
  }
  const typename C::In* at = column + (long long)k * stride + K;
  const long long step = (long long)kBy * stride;
  for (; k + (U - 1) * kBy < hi; k += U * kBy, at += U * step)
    columns_funnel_edge<C, U>(at, step, K, k, safe, live_x, own_y, fits, own, v);
  if (U > 1)
    for (; k < hi; k += kBy, at += step) columns_funnel_edge<C, 1>(at, step, K, k, safe, live_x, own_y, fits, own, v);
}

// Columns. PEELED false: the kernel for outputs on the vector grid (or a thread per
// output). PEELED true: its twin for outputs off the grid, where a thread's kVec outputs
// of a row are kVec scalar loads from one address (the plain kernel takes an address per
// output); the runtime launches it where the rows or the base are off the grid
// (axis_launch_takes_twin in the engine's axis.h). Two kernels, so that neither path's
// code weighs on the other's registers: one kernel with both ran the grid's path up to
// 1.03 times slower (H200, f16 and f32, 100 x 2^20).
template <class C, bool PEELED = false>
__global__ void __launch_bounds__(C::kBlock, C::kMinBlocks) axis_columns_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int kBy = C::kGroup;
  constexpr int kBx = C::kBlock / kBy;
  __shared__ A smem[kBy > 1 ? C::kBlock * C::kVec : 1];
  const T* in = static_cast<const T*>(p.in);
  const unsigned tx = threadIdx.x % kBx, ty = threadIdx.x / kBx;
  const u64 splits = C::kSplit ? p.splits : 1;
  const u64 split = C::kSplit ? blockIdx.x % splits : 0;
  const u64 first_block = C::kSplit ? blockIdx.x / splits : blockIdx.x;
  const u64 block_stride = C::kSplit ? gridDim.x / splits : gridDim.x;
  const u64 chunk = (p.reduced + splits - 1) / splits;
  const u64 lo = split * chunk < p.reduced ? split * chunk : p.reduced;
  const u64 hi = lo + chunk < p.reduced ? lo + chunk : p.reduced;
  if (C::kRows > 1 && C::kVec > 1 && !PEELED) {
    // kRows vectors of kVec adjacent outputs a thread (BY = 1, unsplit), kBx vectors
    // apart, the loads of 2 x kUnroll / kRows steps along R of all of them issued before
    // any is folded: short columns (R of a few) keep kRows times the bytes in flight
    // that one vector a thread does. A pass with a vector off the grid or across a
    // slice's end reads each of its outputs by itself. The twin (PEELED) takes the
    // vector path below.
    constexpr unsigned kRows = C::kRows;
    constexpr int V = C::kVec;
    constexpr int kSteps = 2 * C::kUnroll / (int)kRows;
    const u64 vectors = (p.outputs + V - 1) / V;
    const bool rows_on_grid = p.inner_step == 1 && (u64)p.reduced_stride % V == 0 &&
                              (u64)p.outer_stride % V == 0 && (u64)in % (sizeof(T) * V) == 0;
    for (u64 base = first_block * kBx * kRows; base < vectors; base += block_stride * kBx * kRows) {
      A v[kRows][V];
      const T* column[kRows];
      bool live[kRows];
      bool whole = rows_on_grid;
#pragma unroll
      for (unsigned u = 0; u < kRows; ++u) {
        const u64 j = (base + u * kBx + tx) * V;
        live[u] = j < p.outputs;
        const ColumnIndex ci = column_index(p, live[u] ? j : 0);
        column[u] = in + (long long)ci.slice * p.outer_stride + (long long)ci.column;
        whole = whole && (!live[u] || (ci.column % V == 0 && ci.column + V <= p.inner));
#pragma unroll
        for (int e = 0; e < V; ++e) v[u][e] = Op::template identity<A>();
      }
      if (whole) {
        for (u64 k = lo; k < hi; k += kSteps) {
          AxisVec<T, V> a[kSteps][kRows] = {};
#pragma unroll
          for (int s = 0; s < kSteps; ++s)
#pragma unroll
            for (unsigned u = 0; u < kRows; ++u)
              if (live[u] && k + s < hi)
                a[s][u] = *reinterpret_cast<const AxisVec<T, V>*>(column[u] + (long long)(k + s) * p.reduced_stride);
#pragma unroll
          for (int s = 0; s < kSteps; ++s)
#pragma unroll
            for (unsigned u = 0; u < kRows; ++u)
#pragma unroll
              for (int e = 0; e < V; ++e)
                v[u][e] = Op::template apply<A>(v[u][e], live_or_identity<Op, A>(k + s < hi, (A)a[s][u].v[e]));
        }
      } else {
#pragma unroll
        for (unsigned u = 0; u < kRows; ++u)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const u64 je = (base + u * kBx + tx) * V + e;
            if (je >= p.outputs) continue;
            const T* c = in + column_offset(p, je);
            for (u64 k = lo; k < hi; ++k) v[u][e] = Op::template apply<A>(v[u][e], (A)ldg(c + (long long)k * p.reduced_stride));
          }
      }
      typedef typename C::Out O;
#pragma unroll
      for (unsigned u = 0; u < kRows; ++u) {
        const u64 j = (base + u * kBx + tx) * V;
        if (!live[u]) continue;
        O* out = static_cast<O*>(p.out) + j;
        if (!C::kOrdered && j + V <= p.outputs && (u64)out % (sizeof(O) * V) == 0) {
          AxisVec<O, V> r;
#pragma unroll
          for (int e = 0; e < V; ++e) r.v[e] = epilogue<Op, O>(v[u][e], p.reduced, MeanDivisor{p.mean_n, p.mean_inv});
          *reinterpret_cast<AxisVec<O, V>*>(out) = r;
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (j + e < p.outputs) write_output<C>(p, j + e, v[u][e]);
        }
      }
    }
    return;
  }
  if (C::kRows > 1 && C::kVec == 1) {
    // One thread per output (BY = 1), kRows outputs per pass with their loads
    // interleaved: short columns keep several loads in flight per thread.
    constexpr unsigned kRows = C::kRows;
    for (u64 base = first_block * kBx * kRows; base < p.outputs; base += block_stride * kBx * kRows) {
      A v[kRows];
      const T* column[kRows];
#pragma unroll
      for (unsigned u = 0; u < kRows; ++u) {
        const u64 j = base + u * kBx + tx;
        v[u] = Op::template identity<A>();
        const u64 jj = j < p.outputs ? j : 0;
        column[u] = in + column_offset(p, jj);
      }
      // kUnroll loads in flight: kRows outputs x (kUnroll / kRows) steps along R.
      constexpr unsigned kSteps = C::kUnroll / kRows > 0 ? C::kUnroll / kRows : 1;
      bool live[kRows];
#pragma unroll
      for (unsigned u = 0; u < kRows; ++u) live[u] = base + u * kBx + tx < p.outputs;
      u64 k = lo;
      for (; k + kSteps <= hi; k += kSteps) {
        A a[kSteps][kRows];
#pragma unroll
        for (unsigned s = 0; s < kSteps; ++s)
#pragma unroll
          for (unsigned u = 0; u < kRows; ++u)
            a[s][u] = live[u] ? (A)ldg(column[u] + (long long)(k + s) * p.reduced_stride) : Op::template identity<A>();
#pragma unroll
        for (unsigned s = 0; s < kSteps; ++s)
#pragma unroll
          for (unsigned u = 0; u < kRows; ++u) v[u] = Op::template apply<A>(v[u], a[s][u]);
      }
      for (; k < hi; ++k)
#pragma unroll
        for (unsigned u = 0; u < kRows; ++u)
          if (live[u]) v[u] = Op::template apply<A>(v[u], (A)ldg(column[u] + (long long)k * p.reduced_stride));
#pragma unroll
      for (unsigned u = 0; u < kRows; ++u) {
        const u64 j = base + u * kBx + tx;
        if (j >= p.outputs) continue;
        if (C::kSplit && splits > 1)
          static_cast<A*>(p.partials)[j * splits + split] = v[u];
        else
          write_output<C>(p, j, v[u]);
      }
    }
    columns_ticket_finish<C, kBx * kRows>(p);
    return;
  }
  // kVec adjacent outputs per thread (one vector load per row where the outputs lie in
  // one slice on the vector grid, else one scalar load each).
  constexpr int V = C::kVec;
  const u64 vectors = (p.outputs + V - 1) / V;
  // Vectors of outputs need them adjacent (stepped columns read each output by itself).
  const bool adjacent = p.inner_step == 1;
  const bool rows_on_grid = adjacent && (u64)p.reduced_stride % V == 0 && (u64)p.outer_stride % V == 0 &&
                            (u64)in % (sizeof(T) * V) == 0;
  // The twin's funnel (columns_funnel_rows): 16-bit vectors, warps within a thread row,
  // one slice, and thread rows kGroup rows apart that span whole vectors (so each keeps
  // its shift from the grid).
  constexpr bool kFunnels = PEELED && V > 1 && sizeof(T) == 2 && kBx % 32 == 0;
  const bool funnel = kFunnels && adjacent && p.outputs <= p.inner && p.reduced_stride > 0 &&
                      ((long long)kBy * p.reduced_stride) % V == 0;
  const u64 safe = kFunnels && funnel ? columns_funnel_safe_rows<V>(p.reduced, p.reduced_stride) : 0;
  for (u64 base = first_block * kBx; base < vectors; base += block_stride * kBx) {
    const u64 j = (base + tx) * V;
    A v[V];
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = Op::template identity<A>();
    if (kFunnels && funnel) {
      const u64 k = lo + ty;
      if (k < hi) {
        // j is a multiple of V, so every lane of the row has the same shift.
        const T* column = in + j;
        const unsigned shift = (unsigned)(((u64)(column + (long long)k * p.reduced_stride) / sizeof(T)) % V);
        const unsigned K = (V - shift) % V;
        if constexpr (kFunnels) columns_funnel_rows<C>(column, p.reduced_stride, K, k, hi, safe, j, p.inner, v);
      }
    } else if (j < p.outputs) {
      const ColumnIndex ci = column_index(p, j);
      const u64 o = ci.slice, i = ci.column;
      const T* column = in + (long long)o * p.outer_stride + (long long)i;
      u64 k = lo + ty;
      // kUnroll independent loads in flight per thread.
      constexpr int U = C::kUnroll;
      if (!PEELED && V > 1 && rows_on_grid && i % V == 0 && i + V <= p.inner) {
        for (; k + (U - 1) * kBy < hi; k += U * kBy) {
          AxisVec<T, V> a[U];
#pragma unroll
          for (int u = 0; u < U; ++u)
            a[u] = *reinterpret_cast<const AxisVec<T, V>*>(column + (long long)(k + u * kBy) * p.reduced_stride);
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], (A)a[u].v[e]);
        }
        if (C::kTail && k < hi) {
          AxisVec<T, V> a[U] = {};
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (k + (u64)u * kBy < hi)
              a[u] = *reinterpret_cast<const AxisVec<T, V>*>(column + (long long)(k + u * kBy) * p.reduced_stride);
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e)
              v[e] = Op::template apply<A>(v[e], live_or_identity<Op, A>(k + (u64)u * kBy < hi, (A)a[u].v[e]));
          k = hi;
        }
        for (; k < hi; k += kBy) {
          const AxisVec<T, V> a = *reinterpret_cast<const AxisVec<T, V>*>(column + (long long)k * p.reduced_stride);
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], (A)a.v[e]);
        }
      } else if (PEELED && V > 1 && adjacent && i + V <= p.inner) {
        // Off the vector grid, the outputs in one slice: one address a row, kVec scalar
        // loads from it.
        for (; k + (U - 1) * kBy < hi; k += U * kBy) {
          A a[U][V];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const T* row = column + (long long)(k + u * kBy) * p.reduced_stride;
#pragma unroll
            for (int e = 0; e < V; ++e) a[u][e] = (A)ldg(row + e);
          }
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], a[u][e]);
        }
        if (C::kTail && k < hi) {
          A a[U][V];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const T* row = column + (long long)(k + u * kBy) * p.reduced_stride;
#pragma unroll
            for (int e = 0; e < V; ++e) {
              a[u][e] = Op::template identity<A>();
              if (k + (u64)u * kBy < hi) a[u][e] = (A)ldg(row + e);
            }
          }
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], a[u][e]);
          k = hi;
        }
        for (; k < hi; k += kBy) {
          const T* row = column + (long long)k * p.reduced_stride;
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], (A)ldg(row + e));
        }
      } else {
        // One output per thread, or outputs off the vector grid or across a slice
        // boundary: each its own column, their scalar loads of kUnroll rows in flight
        // together.
        const T* c[V];
        bool live[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          live[e] = j + e < p.outputs;
          const u64 je = live[e] ? j + e : j;
          c[e] = in + column_offset(p, je);
        }
        for (; k + (U - 1) * kBy < hi; k += U * kBy) {
          A a[U][V];
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e)
              a[u][e] = live[e] ? (A)ldg(c[e] + (long long)(k + u * kBy) * p.reduced_stride) : Op::template identity<A>();
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], a[u][e]);
        }
        if (C::kTail && k < hi) {
          A a[U][V];
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) {
              a[u][e] = Op::template identity<A>();
              if (live[e] && k + (u64)u * kBy < hi) a[u][e] = (A)ldg(c[e] + (long long)(k + u * kBy) * p.reduced_stride);
            }
#pragma unroll
          for (int u = 0; u < U; ++u)
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], a[u][e]);
          k = hi;
        }
        for (; k < hi; k += kBy)
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (live[e]) v[e] = Op::template apply<A>(v[e], (A)ldg(c[e] + (long long)k * p.reduced_stride));
      }
    }
    if (kBy > 1) {
      __syncthreads();
#pragma unroll
      for (int e = 0; e < V; ++e) smem[(ty * kBx + tx) * V + e] = v[e];
      __syncthreads();
      if (ty == 0)
        for (int y = 1; y < kBy; ++y)
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] = Op::template apply<A>(v[e], smem[(y * kBx + tx) * V + e]);
    }
    if (ty == 0) {
      typedef typename C::Out O;
      O* out = static_cast<O*>(p.out) + j;
      if (V > 1 && !C::kOrdered && !(C::kSplit && splits > 1) && j + V <= p.outputs &&
          (u64)out % (sizeof(O) * V) == 0) {
        // The V adjacent results as one aligned vector store (the outputs are written
        // C-contiguous, so they are adjacent there too).
        AxisVec<O, V> r;
#pragma unroll
        for (int e = 0; e < V; ++e) r.v[e] = epilogue<Op, O>(v[e], p.reduced, MeanDivisor{p.mean_n, p.mean_inv});
        *reinterpret_cast<AxisVec<O, V>*>(out) = r;
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const u64 je = j + e;
          if (je >= p.outputs) break;
          if (C::kSplit && splits > 1)
            static_cast<A*>(p.partials)[je * splits + split] = v[e];
          else
            write_output<C>(p, je, v[e]);
        }
      }
    }
  }
  columns_ticket_finish<C, kBx * V>(p);
}

// columns_dense: thread t folds its positions t * kVec + j (+ k * step) of the slice's
// elements [begin, end) into acc (begin a multiple of kVec and of step from the slice's
// start; end anywhere: the last vector may be partial).
template <class C>
__device__ __forceinline__ void columns_dense_fold(const typename C::In* slice, u64 begin, u64 end, u64 step,
                                                   unsigned t, typename C::Acc (&acc)[C::kVec]) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec;
  constexpr int U = C::kUnroll;
  u64 q = begin + t * V;
  if (V > 1 && (u64)slice % (sizeof(T) * V) == 0) {
    // begin is a multiple of kVec, so every q is a vector boundary.
    const AxisVec<T, V>* vs = reinterpret_cast<const AxisVec<T, V>*>(slice);
    for (; q + (U - 1) * step + V <= end; q += U * step) {
      AxisVec<T, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = vs[(q + u * step) / V];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], (A)x[u].v[j]);
    }
    for (; q + V <= end; q += step) {
      const AxisVec<T, V> x = vs[q / V];
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], (A)x.v[j]);
    }
  } else {
    // Scalar loads of the same positions (kVec 1, or a slice off the vector grid).
    for (; q + (U - 1) * step + V <= end; q += U * step) {
      A a[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) a[u][j] = (A)ldg(slice + q + u * step + j);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], a[u][j]);
    }
    for (; q + V <= end; q += step) {
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], (A)ldg(slice + q + j));
    }
  }
  // The last, partial vector of this thread's positions.
#pragma unroll
  for (int j = 0; j < V; ++j)
    if (q + j < end) acc[j] = Op::template apply<A>(acc[j], (A)ldg(slice + q + j));
}

// columns_dense with four loads in flight over up to this many outputs a slice: split
// with a ticket in tiles (SPLIT 3), the splits interleave single steps
// (columns_dense_fold_interleaved), and a warp folds each column's groups. Otherwise
// (eight loads in flight, or wider) the splits take tiles of kUnroll steps and one thread
// folds a column's groups. The engine's plan_axis_launch sizes the splits by the same
// rule (axis_dense_interleaves).
constexpr unsigned kDenseInterleavedInner = 16;
template <class C> __device__ __forceinline__ bool dense_interleaves(u64 inner) {
  return C::kUnroll == 4 && inner <= kDenseInterleavedInner;
}

// columns_dense split in interleaved steps (SPLIT 3): thread t of split `split` folds the
// vectors at positions q, q + stride, q + 2 * stride, ... < end of the slice (q = split *
// step + t * kVec, stride = splits * step: every position keeps its column), kUnroll
// loads in flight, the last, partial round's loads issued together (an index past the
// end reads q's vector again and folds the identity, as batched_index), then the scalars
// of a last, partial vector.
template <class C>
__device__ __forceinline__ void columns_dense_fold_interleaved(const typename C::In* slice, u64 q, u64 end,
                                                               u64 stride, typename C::Acc (&acc)[C::kVec]) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec;
  constexpr int U = C::kUnroll;
  if (V > 1 && (u64)slice % (sizeof(T) * V) == 0) {
    const AxisVec<T, V>* vs = reinterpret_cast<const AxisVec<T, V>*>(slice);
    for (; q + (U - 1) * stride + V <= end; q += U * stride) {
      AxisVec<T, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = vs[(q + u * stride) / V];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], (A)x[u].v[j]);
    }
    if (q + V <= end) {
      AxisVec<T, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const u64 at = q + u * stride;
        x[u] = vs[(at + V <= end ? at : q) / V];
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j)
          acc[j] = Op::template apply<A>(acc[j], live_or_identity<Op, A>(q + u * stride + V <= end, (A)x[u].v[j]));
      int live = 0;
#pragma unroll
      for (int u = 0; u < U; ++u) live += q + u * stride + V <= end ? 1 : 0;
      q += live * stride;
    }
  } else {
    for (; q + (U - 1) * stride + V <= end; q += U * stride) {
      A a[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) a[u][j] = (A)ldg(slice + q + u * stride + j);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], a[u][j]);
    }
    for (; q + V <= end; q += stride) {
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::template apply<A>(acc[j], (A)ldg(slice + q + j));
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j)
    if (q + j < end) acc[j] = Op::template apply<A>(acc[j], (A)ldg(slice + q + j));
}

// The elements a block of columns_dense or columns_folded reads a step over rows of
// `width` contiguous elements: a whole number of rows and of vectors, at most kVec
// elements per thread, so that thread t always holds the elements at positions t * kVec
// + j of a step, whose columns ((position) % width) never change from step to step. I:
// the kernel's index type (u64 for columns_dense's slices, 32 bits for folded rows of at
// most a block).
template <class C, class I> __device__ __forceinline__ I dense_rows_step(I width) {
  constexpr int V = C::kVec;
  I whole = width;
  while (whole % V != 0) whole += width;
  return (C::kBlock * V / whole) * whole;
}

template <class C>
__global__ void __launch_bounds__(C::kBlock) axis_columns_dense_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec;
  __shared__ A smem[C::kBlock * V];
  const u64 inner = p.inner;
  const u64 step = dense_rows_step<C>(inner);
  const u64 active = step / V;  // threads in use
  const unsigned t = threadIdx.x;
  const u64 splits = p.splits;
  const u64 outer = p.outputs / inner;
  // Splits start on whole vectors (later ones may be empty: they fold the identity).
  const u64 chunk = ((p.reduced + splits - 1) / splits + V - 1) / V * V;
  for (u64 b = blockIdx.x; b < outer * splits; b += gridDim.x) {
    const u64 o = b / splits, split = b % splits;
    const u64 lo = split * chunk < p.reduced ? split * chunk : p.reduced;
    const u64 hi = lo + chunk < p.reduced ? lo + chunk : p.reduced;
    const T* slice = static_cast<const T*>(p.in) + (long long)o * p.outer_stride;
    const u64 end = hi * inner;
    A acc[V];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Op::template identity<A>();
    if (t < active) {
      if (C::kTiles && splits > 1 && dense_interleaves<C>(inner)) {
        // Steps split, split + splits, ...: the blocks of a slice read neighbouring steps
        // at any moment, as a grid-stride loop does, a thread's loads a grid's steps apart.
        columns_dense_fold_interleaved<C>(slice, split * step + t * V, p.reduced * inner, splits * step, acc);
      } else if (C::kTiles && splits > 1) {
        // Tiles of kUnroll steps (whole rows), split, split + splits, ...: a thread's loads
        // a step apart, within its block's tile.
        const u64 tile_rows = C::kUnroll * step / inner;
        for (u64 r0 = split * tile_rows; r0 < p.reduced; r0 += splits * tile_rows)
          columns_dense_fold<C>(slice, r0 * inner, (r0 + tile_rows < p.reduced ? r0 + tile_rows : p.reduced) * inner,
                                step, t, acc);
      } else {
        columns_dense_fold<C>(slice, lo * inner, end, step, t, acc);
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < V; ++j) smem[t * V + j] = acc[j];
    __syncthreads();
    // Column c's result: a partial of this split, or the output.
    auto emit = [&](u64 c, A v) {
      const u64 j = o * inner + c;
      if (C::kSplit && splits > 1)
        static_cast<A*>(p.partials)[j * splits + split] = v;
      else
        write_output<C>(p, j, v);
    };
    if (dense_interleaves<C>(inner)) {
      // Groups of `inner` threads take every groups-th row of the step; then, where there
      // are 16 groups or more, a warp per column folds its groups (lanes, then shuffles),
      // else one thread per column, in order.
      const unsigned in32 = (unsigned)inner, step32 = (unsigned)step;
      const unsigned groups = C::kBlock / in32;
      const unsigned column = t % in32, g = t / in32;
      A v = Op::template identity<A>();
      if (g < groups)
        for (unsigned k = column + in32 * g; k < step32; k += in32 * groups) v = Op::template apply<A>(v, smem[k]);
      __syncthreads();
      smem[t] = v;
      __syncthreads();
      if (groups >= 16) {
        const unsigned lane = t & 31u, warp = t / 32;
        for (unsigned c = warp; c < in32; c += C::kBlock / 32) {
          A w = Op::template identity<A>();
          for (unsigned gg = lane; gg < groups; gg += 32) w = Op::template apply<A>(w, smem[c + in32 * gg]);
          w = warp_reduce_shuffle<Op>(w);
          if (lane == 0) emit(c, w);
        }
      } else if (t < in32) {
        for (unsigned k = t + in32; k < groups * in32; k += in32) v = Op::template apply<A>(v, smem[k]);
        emit(t, v);
      }
    } else {
      // Each column's positions fold in two rounds: groups of `inner` threads take every
      // groups-th row of the step, then one thread per column folds the groups, in order.
      const u64 groups = C::kBlock / inner;
      const u64 column = t % inner, g = t / inner;
      A v = Op::template identity<A>();
      if (g < groups)
        for (u64 k = column + inner * g; k < step; k += inner * groups) v = Op::template apply<A>(v, smem[k]);
      __syncthreads();
      smem[t] = v;
      __syncthreads();
      if (t < inner) {
        for (u64 k = t + inner; k < groups * inner; k += inner) v = Op::template apply<A>(v, smem[k]);
        emit(t, v);
      }
    }
  }
  ticket_finish<C>(p);
}

// columns_folded (the engine's FoldedColumns and plan_axis_launch): rows of W = p.inner
// contiguous elements, p.reduced / b of them a slice (p.inner_step = b), each row
// [a][b][c] with c = p.fold_inner. The block reads a chunk of a slice's rows as
// columns_dense does (whole rows and vectors a step, thread t holding the same columns,
// kUnroll loads in flight; split in tiles of kUnroll steps in turn, or a contiguous
// chunk each), then folds in shared memory, in a fixed order: thread x < W the step's
// rows of column x, then thread y < W / b the b columns y / c * b c + j c + y % c of its
// output, written at index slice * fold_out[0] + (y / c) * fold_out[1] + (y % c) *
// fold_out[2] (or, split, its partial; ticket_finish or the finalize kernel folds them).
template <class C>
__global__ void __launch_bounds__(C::kBlock) axis_columns_folded_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr int V = C::kVec;
  __shared__ A smem[C::kBlock * V];
  const unsigned width = (unsigned)p.inner, fold = (unsigned)p.inner_step, fold_inner = p.fold_inner;
  const unsigned per_slice = width / fold;
  const u64 rows = p.reduced / fold;
  const unsigned step = dense_rows_step<C>(width);
  const unsigned active = step / V;
  const unsigned t = threadIdx.x;
  const u64 splits = p.splits;
  const u64 slices = p.outputs / per_slice;
  const u64 chunk = ((rows + splits - 1) / splits + V - 1) / V * V;
  for (u64 blk = blockIdx.x; blk < slices * splits; blk += gridDim.x) {
    const u64 o = blk / splits, split = blk % splits;
    const T* slice = static_cast<const T*>(p.in) + (long long)o * p.outer_stride;
    A acc[V];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Op::template identity<A>();
    if (t < active) {
      if (C::kTiles && splits > 1) {
        const u64 tile_rows = (u64)C::kUnroll * step / width;
        for (u64 r0 = split * tile_rows; r0 < rows; r0 += splits * tile_rows)
          columns_dense_fold<C>(slice, r0 * width, (r0 + tile_rows < rows ? r0 + tile_rows : rows) * width, step, t,
                                acc);
      } else {
        const u64 lo = split * chunk < rows ? split * chunk : rows;
        const u64 hi = lo + chunk < rows ? lo + chunk : rows;
        columns_dense_fold<C>(slice, lo * width, hi * width, step, t, acc);
      }
    }
    __syncthreads();  // the previous slice's folds are done with smem
#pragma unroll
    for (int j = 0; j < V; ++j) smem[t * V + j] = acc[j];
    __syncthreads();
    A v = Op::template identity<A>();
    if (t < width)
      for (unsigned k = t; k < step; k += width) v = Op::template apply<A>(v, smem[k]);
    __syncthreads();
    if (t < width) smem[t] = v;
    __syncthreads();
    if (t < per_slice) {
      const unsigned i = t / fold_inner, k = t % fold_inner;
      const A* column = smem + i * fold * fold_inner + k;
      A w = Op::template identity<A>();
      for (unsigned j = 0; j < fold; ++j) w = Op::template apply<A>(w, column[j * fold_inner]);
      const u64 out = o * p.fold_out[0] + i * p.fold_out[1] + k * p.fold_out[2];
      if (C::kSplit && splits > 1)
        static_cast<A*>(p.partials)[out * splits + split] = w;
      else
        write_output<C>(p, out, w);
    }
  }
  ticket_finish<C>(p);
}

// An element of a staged tile folded into its column's accumulator: with the op's one
// instruction (`fold`: min.NaN/max.NaN) where the element is the accumulator's type (f32
// in f32), with the compare and select (`apply`) where a 16-bit element converts to f32
// (rt/ops.cuh says why). Folding from shared memory, f32 max over 65537 x 5001 took 368
// us with the compare and select and 315 with the instruction, as long as the sum (set
// BR in docs/BENCHMARKS.md). The kernels that fold straight from their loads keep
// `apply`: there the instruction made f32 max over 262145 x 1001 4% slower.
template <class C> __device__ __forceinline__ typename C::Acc staged_fold(typename C::Acc a, typename C::Acc b) {
  typedef typename C::Op Op;
  typedef typename C::Acc A;
  return IsSame<typename C::In, A>::value ? Op::template fold<A>(a, b) : Op::template apply<A>(a, b);
}

// columns_staged: columns whose outputs lie side by side in a row (inner_step 1), off the
// 16-byte grid or not, read through shared memory. A block takes up to kWidth adjacent
// columns of a slice (kBlock / kGroup threads across them, kRows columns a thread) and
// a chunk of R. Each row's segment of those columns is read as the aligned 16-byte
// vectors that hold it (width / kVec + 1 of them, kVec elements a vector), wherever the
// segment starts: kUnroll vectors a thread, a tile of whole segments, stored to shared
// memory as they are. Thread c then folds column c of every staged row at that row's
// shift (its segment's offset from the vector grid), kGroup threads a column taking
// every kGroup-th row, their results folded in order. The next tile's loads are in
// flight while a tile folds. A thread per output reads 2 or 4 bytes a load there, and a
// warp 64 or 128 bytes of a row: a few long columns (R in the tens of thousands over a
// few thousand outputs) kept too few bytes in flight (set BN in docs/BENCHMARKS.md). The
// columns of a slice are cut into tiles of one width, a whole number of vectors (the
// engine's plan counts them the same way: columns_staged_tiles). A vector that reaches
// past the view's first or last element is read element by element, so no read leaves
// the view's span (strides of either sign). Split, each block writes a partial per output and
// axis_finalize_kernel folds them (SPLIT 1).
template <class C>
__global__ void __launch_bounds__(C::kBlock, 1024 / C::kBlock) axis_columns_staged_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr unsigned VE = C::kVec;
  static_assert(VE * sizeof(T) == 16, "columns_staged reads 16-byte vectors");
  constexpr unsigned kPer = C::kGroup;            // threads a column
  constexpr unsigned kAcross = C::kBlock / kPer;  // threads across the columns
  constexpr unsigned kCols = C::kRows;            // columns a thread
  constexpr unsigned kWidth = kAcross * kCols;    // the most columns a tile holds
  constexpr unsigned kSlots = C::kBlock * C::kUnroll;
  constexpr int U = C::kUnroll;
  __shared__ uint4 tile[kSlots];
  __shared__ A red[kPer > 1 ? C::kBlock * kCols : 1];
  const T* in = static_cast<const T*>(p.in);
  const u64 inner = p.inner;
  if (inner == 0 || p.outputs == 0) return;
  const u64 wide = (inner + kWidth - 1) / kWidth;
  const u64 width = ((inner + wide - 1) / wide + VE - 1) / VE * VE;
  const u64 tiles_x = (inner + width - 1) / width;
  const unsigned nvr = (unsigned)(width / VE) + 1;  // vectors a segment can touch
  const unsigned rows_per_tile = kSlots / nvr;
  const u64 outer = (p.outputs + inner - 1) / inner;
  const u64 splits = C::kSplit ? p.splits : 1;
  const u64 chunk = (p.reduced + splits - 1) / splits;
  const unsigned t = threadIdx.x;
  // A slot's row and vector in a tile: the same in every tile.
  unsigned row_of[U], k_of[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const unsigned slot = t + u * C::kBlock;
    row_of[u] = slot / nvr;
    k_of[u] = slot % nvr;
  }
  // Element offsets from `grid0`, `in` rounded down to the 16-byte grid (signed: a
  // stride may be negative); the view spans [lo_e, hi_e) there.
  const unsigned base_mis = (unsigned)(((u64)in % 16) / sizeof(T));
  const T* grid0 = in - base_mis;
  const long long os = p.outer_stride, rs = p.reduced_stride;
  const long long last_slice = (long long)(outer - 1) * os, last_row = (long long)(p.reduced - 1) * rs;
  const long long lo_e = (long long)base_mis + (last_slice < 0 ? last_slice : 0) + (last_row < 0 ? last_row : 0);
  const long long hi_e =
      (long long)base_mis + (last_slice > 0 ? last_slice : 0) + (last_row > 0 ? last_row : 0) + (long long)inner;
  const unsigned pm = (unsigned)(rs & (long long)(VE - 1));  // rs mod VE
  const unsigned c = t % kAcross, g = t / kAcross;
  const unsigned per_shift = (kPer * pm) & (VE - 1);
  const unsigned tile_shift = (unsigned)(((u64)rows_per_tile * pm) & (VE - 1));
  const T* st = reinterpret_cast<const T*>(tile);
  for (u64 b = blockIdx.x; b < outer * tiles_x * splits; b += gridDim.x) {
    const u64 bx = b % tiles_x, rest = b / tiles_x;
    const u64 split = rest % splits, o = rest / splits;
    const u64 c0 = bx * width;
    const u64 w = inner - c0 < width ? inner - c0 : width;
    const u64 lo = split * chunk < p.reduced ? split * chunk : p.reduced;
    const u64 hi = lo + chunk < p.reduced ? lo + chunk : p.reduced;
    const long long seg = (long long)o * os + (long long)c0 + base_mis;  // row 0's segment
    uint4 x[U];
    auto load = [&](u64 r0) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        x[u] = make_uint4(0u, 0u, 0u, 0u);
        if (row_of[u] < rows_per_tile && r0 + row_of[u] < hi) {
          const long long e0 = seg + (long long)(r0 + row_of[u]) * rs;
          const long long a = (e0 & ~(long long)(VE - 1)) + (long long)k_of[u] * VE;  // rounded down
          if (a < e0 + (long long)w) {
            if (a >= lo_e && a + (long long)VE <= hi_e) {
              x[u] = ldg(reinterpret_cast<const uint4*>(grid0 + a));
            } else {
              T* e = reinterpret_cast<T*>(&x[u]);
#pragma unroll
              for (unsigned j = 0; j < VE; ++j)
                if (a + j >= lo_e && a + j < hi_e) e[j] = ldg(grid0 + a + j);
            }
          }
        }
      }
    };
    A acc[kCols], acc2[kCols];
#pragma unroll
    for (unsigned i = 0; i < kCols; ++i) acc[i] = acc2[i] = Op::template identity<A>();
    unsigned shift0 = (unsigned)((seg + (long long)lo * rs) & (long long)(VE - 1));  // the tile's first row's shift
    if (lo < hi) load(lo);
    for (u64 r0 = lo; r0 < hi; r0 += rows_per_tile) {
      __syncthreads();
#pragma unroll
      for (int u = 0; u < U; ++u) tile[t + u * C::kBlock] = x[u];
      __syncthreads();
      if (r0 + rows_per_tile < hi) load(r0 + rows_per_tile);
      const unsigned rows = hi - r0 < (u64)rows_per_tile ? (unsigned)(hi - r0) : rows_per_tile;
      unsigned s = (shift0 + g * pm) & (VE - 1);
      const T* at = st + g * nvr * VE + c;
      unsigned row = g;
      // Two rows a step, into two accumulators (every column in the same order).
      for (; row + kPer < rows; row += 2 * kPer) {
        const unsigned s1 = (s + per_shift) & (VE - 1);
#pragma unroll
        for (unsigned i = 0; i < kCols; ++i)
          if (c + i * kAcross < w) {
            acc[i] = staged_fold<C>(acc[i], (A)at[s + i * kAcross]);
            acc2[i] = staged_fold<C>(acc2[i], (A)at[kPer * nvr * VE + s1 + i * kAcross]);
          }
        s = (s1 + per_shift) & (VE - 1);
        at += 2 * kPer * nvr * VE;
      }
      if (row < rows)
#pragma unroll
        for (unsigned i = 0; i < kCols; ++i)
          if (c + i * kAcross < w) acc[i] = staged_fold<C>(acc[i], (A)at[s + i * kAcross]);
      shift0 = (shift0 + tile_shift) & (VE - 1);
    }
#pragma unroll
    for (unsigned i = 0; i < kCols; ++i) acc[i] = Op::template apply<A>(acc[i], acc2[i]);
    if (kPer > 1) {
      __syncthreads();
#pragma unroll
      for (unsigned i = 0; i < kCols; ++i) red[t * kCols + i] = acc[i];
      __syncthreads();
      if (g == 0)
        for (unsigned q = 1; q < kPer; ++q)
#pragma unroll
          for (unsigned i = 0; i < kCols; ++i) acc[i] = Op::template apply<A>(acc[i], red[(q * kAcross + c) * kCols + i]);
      __syncthreads();  // read before the next block's tile (or fold) writes shared memory
    }
    if (g == 0)
#pragma unroll
      for (unsigned i = 0; i < kCols; ++i) {
        const u64 cc = c + i * kAcross;
        const u64 j = o * inner + c0 + cc;
        if (cc >= w || j >= p.outputs) continue;
        if (C::kSplit && splits > 1)
          static_cast<A*>(p.partials)[j * splits + split] = acc[i];
        else
          write_output<C>(p, j, acc[i]);
      }
  }
}

// rows_dense: contiguous rows (outer_stride == R) of at most an eighth of a tile, never
// split. A tile is kBlock * kUnroll vectors of kVec elements (16 KiB of f32 at 256
// threads and unroll 4); the block stages as many whole rows as fit one, read exactly
// as a flat sum reads its input (each thread kUnroll vectors, a warp's loads
// contiguous; the scalar head before the first vector boundary and the tail after the
// last whole vector read by the first threads), then groups of kGroup lanes fold the
// tile's rows from shared memory (lane l the row's elements l, l + kGroup, ..., then a
// shuffle tree) and write them. The next tile's loads are issued before this tile's
// fold, so a block keeps its loads in flight while it folds. Rows shorter than a vector
// or off the vector grid read as fast as rows on it: the loads never depend on where a
// row starts. Shared memory is skewed by 1 element every 32, or by 3 in the kernel's twin
// (kSkewThree): an odd skew keeps a warp's stores (lanes a vector apart) at most two to a
// bank, and the host launches the one at which the rows a warp folds at once (32 /
// kGroup of them, R apart) meet in fewer banks (reduce_tune::rows_dense_skew). With skew
// 1 alone, f32 rows of 124 folded by groups of 4 lanes met 8 to a bank and rows of 62
// read a lane per row 16 (set BL in docs/BENCHMARKS.md). The skew is a constant of each
// kernel: read at run time, or chosen in one kernel holding both forms, it made the
// shapes that keep skew 1 slower (sets BL and BM). Every row folds in the same order on
// every run, whichever skew holds it.
constexpr unsigned kRowsDenseMaxSkew = 3;  // reduce_tune::kRowsDenseMaxSkew
template <unsigned skew>
__device__ __forceinline__ unsigned rows_dense_slot(unsigned q) { return q + (q >> 5) * skew; }

// Tile k of a rows_dense launch: rows [first, first + rows) of the input, elements
// [s, s + count) from s = first * R; `base` is s rounded down to the vector grid, m = s -
// base (< kVec); whole vectors [k0, k1) of base, the scalars [m, k0 * kVec) before them
// and [max(k0, k1) * kVec, m + count) after them.
template <class C>
struct RowsDenseTile {
  typedef typename C::In T;
  u64 first;
  unsigned rows, count, m, k0, k1;
  const T* base;
  __device__ __forceinline__ RowsDenseTile(const AxisParams& p, u64 k, unsigned rows_per_tile) {
    first = k * rows_per_tile;
    const u64 left = p.outputs - first;
    rows = left < rows_per_tile ? (unsigned)left : rows_per_tile;
    count = rows * (unsigned)p.reduced;
    const T* s = static_cast<const T*>(p.in) + first * p.reduced;
    m = C::kVec > 1 ? (unsigned)(((u64)s / sizeof(T)) & (C::kVec - 1)) : 0u;
    base = s - m;
    k0 = m != 0 ? 1u : 0u;
    k1 = (m + count) / C::kVec;
  }
  // The scalar position thread t reads (t < 2 (kVec - 1)), or ~0u for none.
  __device__ __forceinline__ unsigned scalar_position(unsigned t) const {
    if (C::kVec == 1) return ~0u;
    if (t < C::kVec - 1) {
      const unsigned q = m + t;
      return m != 0 && q < C::kVec && q < m + count ? q : ~0u;
    }
    const unsigned q = (k1 > k0 ? k1 : k0) * C::kVec + (t - (C::kVec - 1));
    return t < 2 * (C::kVec - 1) && q < m + count ? q : ~0u;
  }
};

template <class C, bool kSkewThree = false>
__global__ void __launch_bounds__(C::kBlock) axis_rows_dense_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  constexpr unsigned skew = kSkewThree ? kRowsDenseMaxSkew : 1;
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  constexpr unsigned V = C::kVec, U = C::kUnroll, B = C::kBlock, G = C::kGroup;
  constexpr unsigned kTile = B * U * V;  // elements staged per tile
  static_assert(G <= 32, "rows_dense folds a row with lanes of one warp");
  __shared__ T tile[kTile + (kTile / 32 + 1) * skew];
  typedef AxisVec<T, V> Vec;
  const unsigned t = threadIdx.x;
  const unsigned r = (unsigned)p.reduced;  // the host keeps R within an eighth of a tile
  const unsigned rows_per_tile = (kTile - (V - 1)) / r;
  const u64 tiles = (p.outputs + rows_per_tile - 1) / rows_per_tile;
  Vec x[U];
  T scalar;
  // Issues tile k's loads into registers; none is used before the next barrier.
  auto load = [&](u64 k) {
    const RowsDenseTile<C> g(p, k, rows_per_tile);
    const Vec* vectors = reinterpret_cast<const Vec*>(g.base);
#pragma unroll
    for (unsigned j = 0; j < U; ++j) {
      const unsigned i = g.k0 + t + j * B;
      if (i < g.k1) x[j] = vectors[i];
    }
    const unsigned q = g.scalar_position(t);
    if (q != ~0u) scalar = ldg(g.base + q);
  };
  u64 k = blockIdx.x;
  if (k < tiles) load(k);
  for (; k < tiles; k += gridDim.x) {
    const RowsDenseTile<C> g(p, k, rows_per_tile);
    __syncthreads();  // the previous tile's fold has read the shared tile
#pragma unroll
    for (unsigned j = 0; j < U; ++j) {
      const unsigned i = g.k0 + t + j * B;
      if (i < g.k1)
#pragma unroll
        for (unsigned e = 0; e < V; ++e) tile[rows_dense_slot<skew>(i * V + e)] = x[j].v[e];
    }
    {
      const unsigned q = g.scalar_position(t);
      if (q != ~0u) tile[rows_dense_slot<skew>(q)] = scalar;
    }
    __syncthreads();
    if (k + gridDim.x < tiles) load(k + gridDim.x);  // in flight during the fold below
    const unsigned lane = t % G, group = t / G;
    for (unsigned row0 = 0; row0 < g.rows; row0 += B / G) {
      const unsigned row = row0 + group;
      A v = Op::template identity<A>();
      if (row < g.rows) {
        const unsigned q0 = g.m + row * r;
#pragma unroll 4
        for (unsigned e = lane; e < r; e += G) {
          // Mutation 3 drops the tile's scalar head.
          if (RT_MUTATION == 3 && q0 + e < g.k0 * V) continue;
          v = Op::template fold<A>(v, (A)tile[rows_dense_slot<skew>(q0 + e)]);
        }
      }
#pragma unroll
      for (unsigned offset = G / 2; offset > 0; offset /= 2) v = Op::template apply<A>(v, shfl_xor(v, (int)offset));
      if (lane == 0 && row < g.rows)
        write_output<C>(p, g.first + row, v);
    }
  }
}

// One warp per output: the SPLIT partials of output j, folded in a fixed order.
template <class C>
__global__ void __launch_bounds__(C::kBlock) axis_finalize_kernel(AxisParams p) {
  axis_mutate(p);
  begin_after_previous_grid(false, true);  // the main kernel's partials (common.cuh)
  finish_outputs<C>(p, (u64)blockIdx.x * (C::kBlock / 32) + threadIdx.x / 32, (u64)gridDim.x * (C::kBlock / 32));
}

// The transpose family (the engine's axis_transpose_dim): nothing is reduced, and the
// densest kept dimension `a` is not the outputs' innermost `b` (the last kept one). A
// thread per output would read `a` a stride apart; here a block takes 32 x 32 tiles of
// (a, b) for each index of the other kept dimensions, reads a tile along a (a warp's
// loads one run where a's stride is 1) into shared memory and writes it along b (one run
// of the output). Each element is folded as the one element of its output (identity,
// then the epilogue), so the values are those a thread per output writes.
constexpr unsigned kTransposeTile = 32;
__device__ __forceinline__ u64 stride_magnitude(long long s) { return s < 0 ? 0ull - (u64)s : (u64)s; }
// The densest kept dimension of extent > 1, the innermost on a tie (as the engine finds it).
__device__ __forceinline__ int transpose_dim(const AxisParams& p) {
  int a = -1;
  for (int d = 0; d < p.kept_rank; ++d)
    if (p.kept_extents[d] > 1 &&
        (a < 0 || stride_magnitude(p.kept_strides[d]) <= stride_magnitude(p.kept_strides[a])))
      a = d;
  return a;
}

template <class C>
__global__ void __launch_bounds__(C::kBlock) axis_transpose_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  typedef typename C::In T;
  typedef typename C::Out O;
  constexpr unsigned kT = kTransposeTile;
  constexpr unsigned kPass = C::kBlock / kT;  // tile rows a pass
  static_assert(C::kBlock % kT == 0 && kT % kPass == 0, "the block is a power of two of 32 to 1024 threads");
  __shared__ A tile[kT][kT + 1];
  const int a = transpose_dim(p), b = p.kept_rank - 1;
  if (a < 0 || a == b) return;  // not a transpose (the engine launches none)
  const u64 ea = (u64)p.kept_extents[a], eb = (u64)p.kept_extents[b];
  const long long sa = p.kept_strides[a], sb = p.kept_strides[b];
  u64 oa = 1;  // a's stride in the output: the extents after it
  for (int d = a + 1; d < p.kept_rank; ++d) oa *= (u64)p.kept_extents[d];
  const u64 tiles_a = (ea + kT - 1) / kT, tiles_b = (eb + kT - 1) / kT;
  const u64 tiles = p.outputs / (ea * eb) * tiles_a * tiles_b;
  const unsigned tx = threadIdx.x % kT, ty = threadIdx.x / kT;
  const T* in = static_cast<const T*>(p.in);
  O* out = static_cast<O*>(p.out);
  for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    const u64 jb = t % tiles_b * kT;
    u64 rest = t / tiles_b;
    const u64 ja = rest % tiles_a * kT;
    rest /= tiles_a;
    // `rest` indexes the other kept dimensions (the last the fastest).
    long long in_off = 0;
    u64 out_off = 0, out_stride = 1;
    for (int d = p.kept_rank - 1; d >= 0; --d) {
      const u64 e = (u64)p.kept_extents[d];
      if (d != a && d != b) {
        const u64 digit = rest % e;
        rest /= e;
        in_off += (long long)digit * p.kept_strides[d];
        out_off += digit * out_stride;
      }
      out_stride *= e;
    }
#pragma unroll
    for (unsigned i = 0; i < kT / kPass; ++i) {
      const unsigned r = ty + i * kPass;  // along b
      const u64 ia = ja + tx, ib = jb + r;
      if (ia < ea && ib < eb)
        tile[r][tx] = Op::template fold<A>(Op::template identity<A>(),
                                           (A)ldg(in + in_off + (long long)ia * sa + (long long)ib * sb));
    }
    __syncthreads();
#pragma unroll
    for (unsigned i = 0; i < kT / kPass; ++i) {
      const unsigned r = ty + i * kPass;  // along a
      const u64 ia = ja + r, ib = jb + tx;
      if (ia < ea && ib < eb)
        out[out_off + ia * oa + ib] = epilogue<Op, O>(tile[tx][r], p.reduced, MeanDivisor{p.mean_n, p.mean_inv});
    }
    __syncthreads();
  }
}

// The short_columns family: columns ([outer, R, inner], inner contiguous) read a vector
// of kVec outputs a thread, its R rows kUnroll at a time with their loads in flight
// together; at kUnroll 1, R = 1 over one contiguous run (the engine's axis_copies), a
// converting copy with no loop along R. Each output is folded from the identity along R
// in order, then the epilogue, so its value is the same bits the columns kernel writes
// with a thread per output. Vectors are loaded and stored whole where the base, the
// output, the strides and the slices are on the vector's grid, in few registers (a copy
// fits 2048 threads per SM, each with its load in flight; the columns kernel's registers
// left 1024 threads or 1536 for 16-bit ones, with vectors of four 16-bit outputs; set BA
// in docs/BENCHMARKS.md). Off the grid, a block's kVec * kBlock outputs are read a column
// at a time, lane-adjacent.
template <class C, class T, class O>
__device__ __forceinline__ O copy_one(T x, const MeanDivisor& d) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  return epilogue<Op, O>(Op::template fold<A>(Op::template identity<A>(), (A)x), 1, d);
}

template <class C>
__device__ __forceinline__ typename C::Acc fold_column(const AxisParams& p, const typename C::In* c) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  constexpr int U = C::kUnroll;
  A v = Op::template identity<A>();
  for (u64 k = 0; k < p.reduced; k += U) {
    typename C::In x[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (k + u < p.reduced) x[u] = ldg(c + (long long)(k + u) * p.reduced_stride);
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (k + u < p.reduced) v = Op::template fold<A>(v, (A)x[u]);
  }
  return v;
}

template <class C>
__global__ void __launch_bounds__(C::kBlock, C::kMinBlocks) axis_short_columns_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  typedef typename C::In T;
  typedef typename C::Out O;
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  constexpr int V = C::kVec, U = C::kUnroll;
  const MeanDivisor d{p.mean_n, p.mean_inv};
  const T* in = static_cast<const T*>(p.in);
  O* out = static_cast<O*>(p.out);
  const u64 n = p.outputs;
  const u64 thread = (u64)blockIdx.x * C::kBlock + threadIdx.x;
  const u64 threads = (u64)gridDim.x * C::kBlock;
  if (U == 1) {
    // R = 1 over one contiguous run (axis_copies): a converting copy, no loop along R.
    const bool aligned = (u64)in % (sizeof(T) * V) == 0 && (u64)out % (sizeof(O) * V) == 0;
    if (V > 1 && !aligned) {
      for (u64 base = (u64)blockIdx.x * C::kBlock * V; base < n; base += threads * V) {
        T x[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const u64 j = base + (u64)e * C::kBlock + threadIdx.x;
          if (j < n) x[e] = ldg(in + j);
        }
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const u64 j = base + (u64)e * C::kBlock + threadIdx.x;
          if (j < n) out[j] = copy_one<C, T, O>(x[e], d);
        }
      }
      return;
    }
    const u64 vectors = n / V;
    const AxisVec<T, V>* src = reinterpret_cast<const AxisVec<T, V>*>(in);
    AxisVec<O, V>* dst = reinterpret_cast<AxisVec<O, V>*>(out);
    for (u64 i = thread; i < vectors; i += threads) {
      const AxisVec<T, V> x = src[i];
      AxisVec<O, V> r;
#pragma unroll
      for (int e = 0; e < V; ++e) r.v[e] = copy_one<C, T, O>(x.v[e], d);
      dst[i] = r;
    }
    const u64 j = vectors * V + thread;
    if (V > 1 && thread < n % V) out[j] = copy_one<C, T, O>(ldg(in + j), d);
    return;
  }
  const bool one_slice = n <= p.inner;
  const bool on_grid = (u64)in % (sizeof(T) * V) == 0 && (u64)out % (sizeof(O) * V) == 0 &&
                       (p.reduced == 1 || p.reduced_stride % V == 0) &&
                       (one_slice || (p.inner % V == 0 && p.outer_stride % V == 0));
  if (V > 1 && !on_grid) {
    for (u64 base = (u64)blockIdx.x * C::kBlock * V; base < n; base += threads * V)
#pragma unroll 1
      for (int e = 0; e < V; ++e) {
        const u64 j = base + (u64)e * C::kBlock + threadIdx.x;
        if (j < n) out[j] = epilogue<Op, O>(fold_column<C>(p, in + column_offset(p, j)), p.reduced, d);
      }
    return;
  }
  // Vectors within one slice (on the grid, a slice holds whole vectors, or there is one).
  const u64 vectors = n / V;
  for (u64 i = thread; i < vectors; i += threads) {
    const AxisVec<T, V>* c = reinterpret_cast<const AxisVec<T, V>*>(in + column_offset(p, i * V));
    const long long step = p.reduced_stride / V;
    A v[V];
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = Op::template identity<A>();
    for (u64 k = 0; k < p.reduced; k += U) {
      AxisVec<T, V> x[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (k + u < p.reduced) x[u] = c[(long long)(k + u) * step];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (k + u < p.reduced)
#pragma unroll
          for (int e = 0; e < V; ++e) v[e] = Op::template fold<A>(v[e], (A)x[u].v[e]);
    }
    AxisVec<O, V> r;
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = epilogue<Op, O>(v[e], p.reduced, d);
    reinterpret_cast<AxisVec<O, V>*>(out)[i] = r;
  }
  // The last n % V outputs (one slice), a thread each.
  const u64 j = vectors * V + thread;
  if (V > 1 && thread < n % V) out[j] = epilogue<Op, O>(fold_column<C>(p, in + column_offset(p, j)), p.reduced, d);
}

// The rows_packed family: contiguous rows of 2 to 8 elements (the engine's
// kRowsPackedMaxReduced), read as a flat copy reads. A thread takes a chunk of P whole
// rows that fills NV 16-byte vectors exactly (P = 16 / gcd(16, row bytes): rows of 3
// halves, 8 rows in 3 vectors), kUnroll chunks a pass with every vector's load in flight,
// folds each row in registers from the identity in order, and stores its P results
// together. A thread per row reading its elements one at a time (the rows kernel at
// group 1, vec 1) keeps 6 bytes in flight for rows of 3 halves. R is a template
// parameter of the body, chosen once per launch. A base off the 16-byte grid, the last
// n % P rows and a mutated R take a thread per row.
__host__ __device__ constexpr unsigned rows_packed_rows(unsigned row_bytes) {
  return (row_bytes % 16 == 0) ? 1u : (row_bytes % 8 == 0) ? 2u : (row_bytes % 4 == 0) ? 4u : (row_bytes % 2 == 0) ? 8u : 16u;
}

template <class C>
__device__ __forceinline__ void rows_packed_scalar(const AxisParams& p, u64 first) {
  typedef typename C::In T;
  typedef typename C::Out O;
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  const MeanDivisor d{p.mean_n, p.mean_inv};
  const T* in = static_cast<const T*>(p.in);
  O* out = static_cast<O*>(p.out);
  const u64 threads = (u64)gridDim.x * C::kBlock;
  for (u64 j = first + (u64)blockIdx.x * C::kBlock + threadIdx.x; j < p.outputs; j += threads) {
    const T* row = in + j * (u64)p.outer_stride;
    A v = Op::template identity<A>();
    for (u64 k = 0; k < p.reduced; ++k) v = Op::template fold<A>(v, (A)ldg(row + k));
    out[output_slot<C>(p, j)] = epilogue<Op, O>(v, p.reduced, d);
  }
}

template <class C, unsigned R>
__device__ __forceinline__ void rows_packed_body(const AxisParams& p) {
  typedef typename C::In T;
  typedef typename C::Out O;
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  constexpr unsigned E = 16 / sizeof(T);                  // elements a vector
  constexpr unsigned P = rows_packed_rows(R * sizeof(T));  // rows a chunk
  constexpr unsigned NV = P * R / E;                      // vectors a chunk
  constexpr unsigned U = C::kUnroll, B = C::kBlock;
  constexpr unsigned W = P * sizeof(O) <= 16 ? P : 16 / sizeof(O);  // results a store
  static_assert(P * R % E == 0 && NV >= 1, "a chunk is whole vectors");
  typedef AxisVec<T, E> Vec;
  typedef AxisVec<O, W> OutVec;
  // A mean's divisor as the host makes it (R and its reciprocal rounded to nearest), here
  // constants: the epilogue's tests on them fold away.
  const MeanDivisor d{(float)R, 1.0f / (float)R};
  const u64 chunks = (u64)p.in % 16 == 0 ? p.outputs / P : 0;
  const bool out_whole = (u64)p.out % sizeof(OutVec) == 0;
  const Vec* src = static_cast<const Vec*>(p.in);
  O* out = static_cast<O*>(p.out);
  const u64 stride = (u64)gridDim.x * B * U;
  for (u64 c0 = (u64)blockIdx.x * B * U + threadIdx.x; c0 < chunks; c0 += stride) {
    Vec x[U][NV];
#pragma unroll
    for (unsigned u = 0; u < U; ++u) {
      const u64 c = c0 + (u64)u * B;
      if (c < chunks)
#pragma unroll
        for (unsigned v = 0; v < NV; ++v) x[u][v] = src[c * NV + v];
    }
#pragma unroll
    for (unsigned u = 0; u < U; ++u) {
      const u64 c = c0 + (u64)u * B;
      if (c >= chunks) continue;
      O r[P];
#pragma unroll
      for (unsigned q = 0; q < P; ++q) {
        A v = Op::template identity<A>();
#pragma unroll
        for (unsigned k = 0; k < R; ++k) v = Op::template fold<A>(v, (A)x[u][(q * R + k) / E].v[(q * R + k) % E]);
        r[q] = epilogue<Op, O>(v, R, d);
      }
      if (C::kOrdered) {
#pragma unroll
        for (unsigned q = 0; q < P; ++q) out[output_slot<C>(p, c * P + q)] = r[q];
      } else if (out_whole) {
#pragma unroll
        for (unsigned w = 0; w < P / W; ++w) {
          OutVec o;
#pragma unroll
          for (unsigned e = 0; e < W; ++e) o.v[e] = r[w * W + e];
          reinterpret_cast<OutVec*>(out + c * P)[w] = o;
        }
      } else {
#pragma unroll
        for (unsigned q = 0; q < P; ++q) out[c * P + q] = r[q];
      }
    }
  }
  rows_packed_scalar<C>(p, chunks * P);
}

template <class C>
__global__ void __launch_bounds__(C::kBlock) axis_rows_packed_kernel(AxisParams p) {
  axis_main_begin<C>(p);
  // The engine launches rows of 2 to 8 contiguous elements; any other R (a mutation's)
  // takes a thread per row.
  if (p.outer_stride != (long long)p.reduced) {
    rows_packed_scalar<C>(p, 0);
    return;
  }
  switch (p.reduced) {
    case 2: rows_packed_body<C, 2>(p); return;
    case 3: rows_packed_body<C, 3>(p); return;
    case 4: rows_packed_body<C, 4>(p); return;
    case 5: rows_packed_body<C, 5>(p); return;
    case 6: rows_packed_body<C, 6>(p); return;
    case 7: rows_packed_body<C, 7>(p); return;
    case 8: rows_packed_body<C, 8>(p); return;
    default: rows_packed_scalar<C>(p, 0);
  }
}

}  // namespace rt

