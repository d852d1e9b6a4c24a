#include <cuda_runtime.h>

__global__ void sum_kernel(const int* x, unsigned long long* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, static_cast<unsigned long long>(x[i]));
}

// The sum of 0..n-1 on `device`, checked against n(n-1)/2. Returns as
// cuda_demo_saxpy_check does.
extern "C" int cuda_demo_sum_check(int device) {
  const int n = 1 << 16;
  static int x[n];
  for (int i = 0; i < n; ++i) x[i] = i;
  int* dx = nullptr;
  unsigned long long* dtotal = nullptr;
  unsigned long long total = 0;
  cudaError_t status = cudaSetDevice(device);
  if (!status) status = cudaMalloc(&dx, sizeof x);
  if (!status) status = cudaMalloc(&dtotal, sizeof total);
  if (!status) status = cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  if (!status) status = cudaMemset(dtotal, 0, sizeof total);
  if (!status) {
    sum_kernel<<<(n + 255) / 256, 256>>>(dx, dtotal, n);
    status = cudaGetLastError();
  }
  if (!status) status = cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dtotal);
  if (status) return static_cast<int>(status);
  return total == static_cast<unsigned long long>(n) * (n - 1) / 2 ? 0 : -1;
}
