// Compiles against the installed headers only, as C++17: no CUDA include is needed to call.
#include <reduce_tune/reduce_tune.h>

#include <cstdio>

static_assert(__cplusplus == 201703L, "the consumer is built as C++17");

int main() {
  try {
    const auto e = reduce_tune::explain<float>(reduce_tune::Op::sum, 1 << 20);
    std::printf("%s\n", e.to_string().c_str());
    return 0;
  } catch (const reduce_tune::NoDeviceError& e) {
    std::printf("consumer built and ran: %s\n", e.what());
    return 0;
  }
}
