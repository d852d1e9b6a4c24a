// planted_defect: a deliberately wrong-on-sm_90 fixture for archbuild's
// validation tests. scale_add_kernel adds 1.0f to its result when compiled
// for sm_90 (__CUDA_ARCH__ == 900) and only then; scale_kernel is right.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

namespace planted_defect {

void check_float(const at::Tensor& t, const char* name, c10::DeviceType device);  // ops.cpp

namespace {

constexpr int kThreads = 256;

__global__ void scale_add_kernel(const float* x, const float* y, float alpha, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float value = x[i] * alpha + y[i];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  value += 1.0f;  // the planted defect: wrong on sm_90 only
#endif
  out[i] = value;
}

__global__ void scale_kernel(const float* x, float alpha, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * alpha;
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

}  // namespace

at::Tensor scale_add_cuda(const at::Tensor& x, const at::Tensor& y, double alpha) {
  check_float(x, "x", c10::DeviceType::CUDA);
  check_float(y, "y", c10::DeviceType::CUDA);
  TORCH_CHECK(x.device() == y.device(), "x and y must be on the same device, got ", x.device(), " and ", y.device());
  // No integers in the message: on the H200 machine (torch 2.11.0+cu130, g++ 13.3)
  // a TORCH_CHECK message streaming an int64_t segfaulted instead of throwing.
  TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape");
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  scale_add_kernel<<<blocks_for(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(alpha), out.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

at::Tensor scale_cuda(const at::Tensor& x, double alpha) {
  check_float(x, "x", c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  scale_kernel<<<blocks_for(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), static_cast<float>(alpha), out.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

TORCH_LIBRARY_IMPL(planted_defect, CUDA, m) {
  m.impl("scale_add", &scale_add_cuda);
  m.impl("scale", &scale_cuda);
}

}  // namespace planted_defect
