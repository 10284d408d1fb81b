// Sums a device array with one call and prints what reduce-tune chose and why.
//   build: see examples/CMakeLists.txt (find_package(reduce_tune) in your own project)
//   run:   ./sum_and_explain [n]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <reduce_tune/reduce_tune.h>

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1u << 24);
  try {
    std::vector<float> host(n);
    for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 7) - 3.0f;
    float *d_in = nullptr, *d_out = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(float)) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&d_out), sizeof(float)) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc failed: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    cudaMemcpy(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);

    reduce_tune::sum(d_in, n, d_out);  // asynchronous, on the default stream
    float result = 0;
    cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("sum of %llu floats = %.1f\n", static_cast<unsigned long long>(n), result);
    std::printf("%s\n", reduce_tune::explain<float>(reduce_tune::Op::sum, n).to_string().c_str());
    cudaFree(d_in);
    cudaFree(d_out);
  } catch (const reduce_tune::Error& e) {
    std::fprintf(stderr, "reduce-tune: %s\n", e.what());
    return 1;
  }
  return 0;
}
