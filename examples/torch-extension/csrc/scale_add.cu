#include <cstdint>

#include <cuda_runtime.h>

__global__ void scale_add_kernel(const float* x, float* y, float alpha, float beta, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + beta;
}

cudaError_t scale_add_launch(const float* x, float* y, float alpha, float beta, int64_t n, cudaStream_t stream) {
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  scale_add_kernel<<<blocks, threads, 0, stream>>>(x, y, alpha, beta, n);
  return cudaGetLastError();
}
