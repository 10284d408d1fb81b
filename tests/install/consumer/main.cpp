// Compiles against the installed package only, as C++17: reduce_tune::runtime brings the
// CUDA runtime's headers and library along, as a program that allocates device memory needs.
#include <reduce_tune/reduce_tune.h>

#include <cuda_runtime_api.h>

#include <cstdio>

static_assert(__cplusplus == 201703L, "the consumer is built as C++17");

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("consumer built and ran: no CUDA device here\n");
  }
  // Axis reductions' shape checks come before any device access.
  const reduce_tune::CanonicalResult c =
      reduce_tune::canonicalize(reduce_tune::TensorDesc::contiguous({4, 5, 6}), {0, 2});
  if (!c.ok || c.axes.layout != reduce_tune::AxisLayout::general || c.axes.outputs != 5) {
    std::printf("consumer: canonical form of a [4, 5, 6] tensor reduced along 0 and 2 is wrong\n");
    return 1;
  }
  try {
    float x = 0;
    reduce_tune::sum(&x, reduce_tune::TensorDesc::contiguous({4, 5}), {2}, &x);
    std::printf("consumer: an out-of-range axis was accepted\n");
    return 1;
  } catch (const reduce_tune::InvalidArgument& e) {
    std::printf("consumer: %s\n", e.what());
  }
  // The host 16-bit floats: one rounding to nearest even, exact widening.
  const reduce_tune::Half h(1.0 + 0x1p-11 + 0x1p-40);
  const reduce_tune::BFloat16 b(257.0f);
  if (h.bits != 0x3c01 || static_cast<float>(b) != 256.0f) {
    std::printf("consumer: 16-bit float rounding is wrong (%04x, %f)\n", h.bits, static_cast<float>(b));
    return 1;
  }
  try {
    reduce_tune::Half out;
    reduce_tune::sum(&h, 1, &out);  // a host pointer: refused (or no device)
    std::printf("consumer: a host pointer was accepted\n");
    return 1;
  } catch (const reduce_tune::Error& e) {
    std::printf("consumer: %s\n", e.what());
  }
  try {
    const auto e = reduce_tune::explain<float>(reduce_tune::Op::sum, 1 << 20);
    std::printf("%s\n", e.to_string().c_str());
    return 0;
  } catch (const reduce_tune::NoDeviceError& e) {
    std::printf("consumer built and ran: %s\n", e.what());
    return 0;
  }
}
