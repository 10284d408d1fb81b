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
  try {
    const auto e = reduce_tune::explain<float>(reduce_tune::Op::sum, 1 << 20);
    std::printf("%s\n", e.to_string().c_str());
    return 0;
  } catch (const reduce_tune::NoDeviceError& e) {
    std::printf("consumer built and ran: %s\n", e.what());
    return 0;
  }
}
