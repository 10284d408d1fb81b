// Compiles against the installed headers only: no CUDA include is needed to call.
#include <reduce_tune/reduce_tune.h>

#include <cstdio>

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
