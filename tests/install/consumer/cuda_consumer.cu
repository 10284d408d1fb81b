// A CUDA program compiled by nvcc (its default C++ standard) that fills an array with its
// own kernel and sums it with reduce-tune on a stream of its own.
#include <cstdio>

#include <cuda_runtime.h>

#include <reduce_tune/reduce_fp16.h>
#include <reduce_tune/reduce_tune.h>

__global__ void fill_ones(float* out, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) out[i] = 1.0f;
}
__global__ void fill_half_ones(__half* out, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) out[i] = __float2half(1.0f);
}

int main() {
  const unsigned long long n = (1ull << 20) + 3;
  float* d_in = nullptr;
  float* d_out = nullptr;
  if (cudaMalloc(&d_in, n * sizeof(float)) != cudaSuccess || cudaMalloc(&d_out, sizeof(float)) != cudaSuccess) {
    std::printf("cuda consumer built and ran: no usable CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
  }
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  fill_ones<<<256, 256, 0, stream>>>(d_in, n);
  try {
    reduce_tune::sum(d_in, n, d_out, stream);
    float total = 0;
    cudaMemcpyAsync(&total, d_out, sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    const double mean = reduce_tune::mean_value(d_in, n, stream);
    if (total != static_cast<float>(n) || mean != 1.0) {
      std::printf("cuda consumer: wrong result %f (mean %f)\n", total, mean);
      return 1;
    }
    std::printf("cuda consumer: sum of %llu ones = %.0f, match: %s\n", n, total,
                std::string(reduce_tune::to_string(reduce_tune::explain<float>(reduce_tune::Op::sum, n).match)).c_str());
    // Along an axis: the first 1000 * 1001 ones as [1000, 1001], each row summed.
    float* d_rows = nullptr;
    if (cudaMalloc(&d_rows, 1000 * sizeof(float)) != cudaSuccess) return 1;
    reduce_tune::sum(d_in, reduce_tune::TensorDesc::contiguous({1000, 1001}), {1}, d_rows, stream);
    float rows[1000];
    cudaMemcpyAsync(rows, d_rows, sizeof(rows), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    for (float r : rows)
      if (r != 1001.0f) {
        std::printf("cuda consumer: a row sum is %f, not 1001\n", r);
        return 1;
      }
    std::printf("cuda consumer: 1000 row sums of 1001 ones, %s\n",
                reduce_tune::explain<float>(reduce_tune::Op::sum, reduce_tune::TensorDesc::contiguous({1000, 1001}), {1})
                    .kernel.c_str());
    cudaFree(d_rows);
    // __half through <reduce_tune/reduce_fp16.h>: accumulated in float, written as float.
    __half* d_half = nullptr;
    if (cudaMalloc(&d_half, n * sizeof(__half)) != cudaSuccess) return 1;
    fill_half_ones<<<256, 256, 0, stream>>>(d_half, n);
    const float half_total = reduce_tune::sum_value<__half, float>(d_half, n, stream);
    if (half_total != static_cast<float>(n)) {
      std::printf("cuda consumer: the __half sum is %f, not %llu\n", half_total, n);
      return 1;
    }
    std::printf("cuda consumer: sum of %llu __half ones = %.0f (f32 output)\n", n, half_total);
    cudaFree(d_half);
  } catch (const reduce_tune::Error& e) {
    std::printf("cuda consumer: %s\n", e.what());
    return 1;
  }
  cudaStreamDestroy(stream);
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
