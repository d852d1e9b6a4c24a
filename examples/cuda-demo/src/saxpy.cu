#include <cuda_runtime.h>

__global__ void saxpy_kernel(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// y = 2x + y on `device`, checked against the host. Returns 0, a cudaError_t
// (209: no kernel image for this GPU), or -1 when a result is wrong.
extern "C" int cuda_demo_saxpy_check(int device) {
  const int n = 1 << 14;
  static float x[n], y[n], back[n];
  for (int i = 0; i < n; ++i) x[i] = 0.5f * (i % 101), y[i] = 1.f;
  float *dx = nullptr, *dy = nullptr;
  cudaError_t status = cudaSetDevice(device);
  if (!status) status = cudaMalloc(&dx, sizeof x);
  if (!status) status = cudaMalloc(&dy, sizeof y);
  if (!status) status = cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  if (!status) status = cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice);
  if (!status) {
    saxpy_kernel<<<(n + 255) / 256, 256>>>(2.f, dx, dy, n);
    status = cudaGetLastError();
  }
  if (!status) status = cudaMemcpy(back, dy, sizeof back, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
  if (status) return static_cast<int>(status);
  for (int i = 0; i < n; ++i)
    if (back[i] != 2.f * x[i] + y[i]) return -1;
  return 0;
}
