// The one-line API: typed, asynchronous reductions of device arrays through the default
// context, and synchronous forms that return the value to the host.
//
//   reduce_tune::sum(d_in, n, d_out, stream);            // float sum into *d_out
//   reduce_tune::sum(d_ints, n, d_wide_out);             // int32 in, int64 out (widening)
//   double m = reduce_tune::mean_value(d_ints, n);       // synchronous
//
// Semantics (README, "Semantics"): float sums accumulate in float, double in double,
// the 16-bit floats (reduce_tune::Half, BFloat16) in float;
// integer sums accumulate in the output type and wrap; NaN propagates through sum, prod,
// min and max; empty input gives the identity (mean of nothing is NaN).
#pragma once

#include <cstdint>
#include <type_traits>

#include "reduce_tune/context.h"
#include "reduce_tune/float16.h"

namespace reduce_tune {

template <typename T>
struct DTypeOf {
  static_assert(sizeof(T) == 0,
                "reduce_tune supports int32_t, int64_t, uint32_t, float, double, reduce_tune::Half and "
                "reduce_tune::BFloat16 (and __half, __nv_bfloat16 through <reduce_tune/reduce_fp16.h>)");
};
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct DTypeOf<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::bf16; };
template <typename T>
inline constexpr DType dtype_of = DTypeOf<std::remove_cv_t<T>>::value;

// mean writes float for float input, the input type for a 16-bit float (rounded once),
// double otherwise.
template <typename T>
struct MeanOf {
  using type = std::conditional_t<std::is_same_v<T, float>, float, double>;
};
template <> struct MeanOf<Half> { using type = Half; };
template <> struct MeanOf<BFloat16> { using type = BFloat16; };
template <typename T>
using mean_t = typename MeanOf<std::remove_cv_t<T>>::type;

template <typename T, typename Out = T>
void sum(const T* in, std::uint64_t n, Out* out, cudaStream_t stream = nullptr) {
  default_context().reduce(Op::sum, dtype_of<T>, dtype_of<Out>, in, n, out, stream);
}
template <typename T, typename Out = T>
void prod(const T* in, std::uint64_t n, Out* out, cudaStream_t stream = nullptr) {
  default_context().reduce(Op::prod, dtype_of<T>, dtype_of<Out>, in, n, out, stream);
}
template <typename T>
void min(const T* in, std::uint64_t n, T* out, cudaStream_t stream = nullptr) {
  default_context().reduce(Op::min, dtype_of<T>, dtype_of<T>, in, n, out, stream);
}
template <typename T>
void max(const T* in, std::uint64_t n, T* out, cudaStream_t stream = nullptr) {
  default_context().reduce(Op::max, dtype_of<T>, dtype_of<T>, in, n, out, stream);
}
template <typename T, typename Out = mean_t<T>>
void mean(const T* in, std::uint64_t n, Out* out, cudaStream_t stream = nullptr) {
  default_context().reduce(Op::mean, dtype_of<T>, dtype_of<Out>, in, n, out, stream);
}

namespace detail {
template <typename Out, typename T>
Out reduce_value(Op op, const T* in, std::uint64_t n, cudaStream_t stream) {
  Out value{};
  default_context().reduce_to_host(op, dtype_of<T>, dtype_of<Out>, in, n, &value, stream);
  return value;
}
}  // namespace detail

template <typename T, typename Out = T>
Out sum_value(const T* in, std::uint64_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_value<Out>(Op::sum, in, n, stream);
}
template <typename T, typename Out = T>
Out prod_value(const T* in, std::uint64_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_value<Out>(Op::prod, in, n, stream);
}
template <typename T>
T min_value(const T* in, std::uint64_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_value<T>(Op::min, in, n, stream);
}
template <typename T>
T max_value(const T* in, std::uint64_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_value<T>(Op::max, in, n, stream);
}
template <typename T, typename Out = mean_t<T>>
Out mean_value(const T* in, std::uint64_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_value<Out>(Op::mean, in, n, stream);
}

// Along axes of an N-d tensor (reduce_tune/tensor.h): out receives the tensor with the
// axes removed, C-contiguous.
//   reduce_tune::sum(d_x, TensorDesc::contiguous({b, m, n}), {1}, d_out, stream);  // b*n values
template <typename T, typename Out = T>
void sum(const T* in, const TensorDesc& tensor, const AxisList& axes, Out* out, cudaStream_t stream = nullptr) {
  default_context().reduce_axes(Op::sum, dtype_of<T>, dtype_of<Out>, in, tensor, axes, out, stream);
}
template <typename T, typename Out = T>
void prod(const T* in, const TensorDesc& tensor, const AxisList& axes, Out* out, cudaStream_t stream = nullptr) {
  default_context().reduce_axes(Op::prod, dtype_of<T>, dtype_of<Out>, in, tensor, axes, out, stream);
}
template <typename T>
void min(const T* in, const TensorDesc& tensor, const AxisList& axes, T* out, cudaStream_t stream = nullptr) {
  default_context().reduce_axes(Op::min, dtype_of<T>, dtype_of<T>, in, tensor, axes, out, stream);
}
template <typename T>
void max(const T* in, const TensorDesc& tensor, const AxisList& axes, T* out, cudaStream_t stream = nullptr) {
  default_context().reduce_axes(Op::max, dtype_of<T>, dtype_of<T>, in, tensor, axes, out, stream);
}
template <typename T, typename Out = mean_t<T>>
void mean(const T* in, const TensorDesc& tensor, const AxisList& axes, Out* out, cudaStream_t stream = nullptr) {
  default_context().reduce_axes(Op::mean, dtype_of<T>, dtype_of<Out>, in, tensor, axes, out, stream);
}

// What the default context would run for op<T, Out> over n elements on the current device.
template <typename T, typename Out = T>
Explanation explain(Op op, std::uint64_t n) {
  return default_context().explain(op, dtype_of<T>, dtype_of<Out>, n);
}

// What the default context would run for op<T, Out> along `axes` of `tensor` (at `in`,
// where known: Context::explain_axes).
template <typename T, typename Out = T>
AxisExplanation explain(Op op, const TensorDesc& tensor, const AxisList& axes, const T* in = nullptr) {
  return default_context().explain_axes(op, dtype_of<T>, dtype_of<Out>, tensor, axes, in);
}

}  // namespace reduce_tune
