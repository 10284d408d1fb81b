#include "reduce_tune/types.h"

#include <bit>
#include <sstream>

namespace reduce_tune {

std::string_view to_string(Op op) {
  switch (op) {
    case Op::sum: return "sum";
    case Op::prod: return "prod";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::mean: return "mean";
  }
  return "?";
}

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u32: return "u32";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view text) {
  for (Op op : kAllOps)
    if (to_string(op) == text) return op;
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (DType d : kAllDTypes)
    if (to_string(d) == text) return d;
  // Common spellings a user types.
  if (text == "int32" || text == "int") return DType::i32;
  if (text == "int64") return DType::i64;
  if (text == "uint32") return DType::u32;
  if (text == "float" || text == "float32") return DType::f32;
  if (text == "double" || text == "float64") return DType::f64;
  if (text == "half" || text == "float16") return DType::f16;
  if (text == "bfloat16") return DType::bf16;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, Op op) { return os << to_string(op); }
std::ostream& operator<<(std::ostream& os, DType dtype) { return os << to_string(dtype); }

std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::i32:
    case DType::u32:
    case DType::f32: return 4;
    case DType::i64:
    case DType::f64: return 8;
    case DType::f16:
    case DType::bf16: return 2;
  }
  return 0;
}

bool is_floating(DType dtype) { return dtype == DType::f32 || dtype == DType::f64 || is_16bit_float(dtype); }
bool is_16bit_float(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16; }
bool is_signed_integer(DType dtype) { return dtype == DType::i32 || dtype == DType::i64; }

std::string_view cuda_type_name(DType dtype) {
  switch (dtype) {
    case DType::i32: return "int";
    case DType::i64: return "long long";
    case DType::u32: return "unsigned int";
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16: return "rt::half_t";
    case DType::bf16: return "rt::bfloat16_t";
  }
  return "?";
}

DType default_out_dtype(Op op, DType in) {
  if (op == Op::mean && !is_floating(in)) return DType::f64;
  return in;
}

TypeRuleResult resolve_types(Op op, DType in, DType out) {
  // Called on every runtime call: the supported pairs return without building a message.
  auto ok = [&](DType acc) { return TypeRuleResult{TypeRule{in, out, acc}, {}}; };
  if (is_16bit_float(in)) {
    if (out == in || out == DType::f32) return ok(DType::f32);
    std::string why = std::string(to_string(op)) + "<" + std::string(to_string(in)) + ", " +
                      std::string(to_string(out)) + "> is not supported: " + std::string(to_string(in)) +
                      " accumulates in f32 and writes " + std::string(to_string(in)) + " or f32";
    return TypeRuleResult{std::nullopt, why};
  }
  const bool widening = (in == DType::i32 && out == DType::i64) || (in == DType::u32 && out == DType::i64) ||
                        (in == DType::f32 && out == DType::f64);
  switch (op) {
    case Op::min:
    case Op::max:
      if (out == in) return ok(in);
      break;
    case Op::sum:
    case Op::prod:
      if (out == in || widening) return ok(out);
      break;
    case Op::mean:
      if (is_floating(in) && is_floating(out) && size_of(out) >= size_of(in)) return ok(out);
      if (!is_floating(in) && out == DType::f64) return ok(DType::i64);
      break;
  }
  std::ostringstream why;
  switch (op) {
    case Op::min:
    case Op::max:
      why << to_string(op) << " writes its input type: " << to_string(op) << "<" << to_string(in)
          << "> cannot output " << to_string(out);
      break;
    case Op::sum:
    case Op::prod:
      why << to_string(op) << "<" << to_string(in) << ", " << to_string(out)
          << "> is not supported: the output must be the input type or a wider one "
             "(i32->i64, u32->i64, f32->f64)";
      break;
    case Op::mean:
      why << "mean<" << to_string(in) << ", " << to_string(out)
          << "> is not supported: mean writes f32 or f64 for float input and f64 for "
             "integer input";
      break;
  }
  return TypeRuleResult{std::nullopt, why.str()};
}

std::string to_string(const Layout& layout) {
  switch (layout.kind) {
    case LayoutKind::flat: return "flat";
  }
  return "?";
}

std::string to_string(const ProblemKey& key) {
  std::ostringstream os;
  os << to_string(key.op) << "<" << to_string(key.dtype);
  if (key.out_dtype != key.dtype) os << "," << to_string(key.out_dtype);
  os << ">[" << to_string(key.layout) << ",n=" << key.n << "]";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const ProblemKey& key) { return os << to_string(key); }

int size_bucket(std::uint64_t n) {
  return n == 0 ? 0 : static_cast<int>(std::bit_width(n)) - 1;
}

std::string_view to_string(MatchKind kind) {
  switch (kind) {
    case MatchKind::exact: return "exact";
    case MatchKind::nearest_size: return "nearest_size";
    case MatchKind::same_arch: return "same_arch";
    case MatchKind::default_config: return "default";
  }
  return "?";
}

}  // namespace reduce_tune
