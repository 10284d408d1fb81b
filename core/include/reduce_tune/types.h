// Core value types shared by the database, the runtime, the tuner and the reports:
// the reduction operator, the element types and the problem key. All are printable,
// parseable and comparable; none pulls in CUDA, NVRTC or SQLite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>

namespace reduce_tune {

enum class Op : std::uint8_t { sum, prod, min, max, mean };
inline constexpr Op kAllOps[] = {Op::sum, Op::prod, Op::min, Op::max, Op::mean};

// New element types go at the end. The database stores the names (to_string), so the
// numbering may change; the NVRTC sources use the C++ spellings. f16 is IEEE binary16 and
// bf16 is bfloat16 (host values: reduce_tune/float16.h); both accumulate in f32.
enum class DType : std::uint8_t { i32, i64, u32, f32, f64, f16, bf16 };
inline constexpr DType kAllDTypes[] = {DType::i32, DType::i64, DType::u32, DType::f32,
                                       DType::f64, DType::f16, DType::bf16};

std::string_view to_string(Op op);
std::string_view to_string(DType dtype);
std::optional<Op> parse_op(std::string_view text);
std::optional<DType> parse_dtype(std::string_view text);
std::ostream& operator<<(std::ostream& os, Op op);
std::ostream& operator<<(std::ostream& os, DType dtype);

std::size_t size_of(DType dtype);
bool is_floating(DType dtype);  // f32, f64, f16, bf16
bool is_16bit_float(DType dtype);
bool is_signed_integer(DType dtype);
// The C++ spelling NVRTC sees for the type ("int", "long long", ...).
std::string_view cuda_type_name(DType dtype);

// The accumulator and output rules of design section 4, resolved once per problem.
struct TypeRule {
  DType in;
  DType out;
  DType acc;
};
inline bool operator==(const TypeRule& a, const TypeRule& b) {
  return a.in == b.in && a.out == b.out && a.acc == b.acc;
}
inline bool operator!=(const TypeRule& a, const TypeRule& b) { return !(a == b); }

// The output type a call gets when it names none: the input type, except mean of an
// integer type, which is f64. (A 16-bit float's mean is its own type, rounded once.)
DType default_out_dtype(Op op, DType in);

// Resolves (op, in, out) to the accumulator type, or says why the pair is unsupported.
// Supported: min/max out == in; sum/prod out == in, or widening (i32->i64, u32->i64,
// f32->f64) which then accumulates in the wider type; mean out is floating: f32->f32,
// f32->f64, f64->f64, and integers -> f64 accumulating in i64. f16 and bf16 accumulate
// in f32 for every op and write their own type (rounded once, at the end) or f32.
struct TypeRuleResult {
  std::optional<TypeRule> rule;
  std::string error;  // set when rule is empty
};
TypeRuleResult resolve_types(Op op, DType in, DType out);

// How the reduced dimension sits in memory. `flat` reduces n contiguous elements to one.
// The fields for an [outer, reduce, inner] axis view are reserved here so that keys
// stored today stay valid when axis reductions arrive.
enum class LayoutKind : std::uint8_t { flat };
struct Layout {
  LayoutKind kind = LayoutKind::flat;
  std::uint64_t outer = 1;
  std::uint64_t inner = 1;
  auto tie() const { return std::tie(kind, outer, inner); }
};
inline bool operator==(const Layout& a, const Layout& b) { return a.tie() == b.tie(); }
inline bool operator!=(const Layout& a, const Layout& b) { return !(a == b); }
inline bool operator<(const Layout& a, const Layout& b) { return a.tie() < b.tie(); }
std::string to_string(const Layout& layout);

struct ProblemKey {
  Op op = Op::sum;
  DType dtype = DType::f32;
  DType out_dtype = DType::f32;
  Layout layout;
  std::uint64_t n = 0;
  auto tie() const { return std::tie(op, dtype, out_dtype, layout, n); }
};
inline bool operator==(const ProblemKey& a, const ProblemKey& b) { return a.tie() == b.tie(); }
inline bool operator!=(const ProblemKey& a, const ProblemKey& b) { return !(a == b); }
inline bool operator<(const ProblemKey& a, const ProblemKey& b) { return a.tie() < b.tie(); }
std::string to_string(const ProblemKey& key);
std::ostream& operator<<(std::ostream& os, const ProblemKey& key);

// Size buckets are powers of two: bucket b holds n in [2^b, 2^(b+1)); n = 0 is bucket 0.
int size_bucket(std::uint64_t n);

// Why the runtime chose the config it chose.
enum class MatchKind : std::uint8_t { exact, nearest_size, same_arch, default_config };
std::string_view to_string(MatchKind kind);

}  // namespace reduce_tune
