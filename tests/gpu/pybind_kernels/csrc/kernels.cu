// pybind_kernels: the CUDA kernels. With -DPLANT_DEFECT=1, scale_add's sm_90
// code is wrong (adds 1.0f); otherwise every kernel is right.
#include <csignal>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

namespace {

constexpr int kThreads = 256;

__global__ void scale_add_kernel(const float* x, const float* y, float alpha, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float value = x[i] * alpha + y[i];
#if defined(PLANT_DEFECT) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  value += 1.0f;  // the planted defect: wrong on sm_90 only
#endif
  out[i] = value;
}

__global__ void square_kernel(const float* x, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * x[i];
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

void check_cuda_float(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be float32");
}

}  // namespace

at::Tensor scale_add_cuda(const at::Tensor& x, const at::Tensor& y, double alpha) {
  check_cuda_float(x, "x");
  check_cuda_float(y, "y");
  TORCH_CHECK(x.device() == y.device(), "x and y must be on the same device");
  TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous(), yc = y.contiguous();
  at::Tensor out = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return out;
  scale_add_kernel<<<blocks_for(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), yc.data_ptr<float>(), static_cast<float>(alpha), out.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

at::Tensor square_cuda(const at::Tensor& x) {
  check_cuda_float(x, "x");
  const c10::cuda::CUDAGuard guard(x.device());
  auto xc = x.contiguous();
  at::Tensor out = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return out;
  square_kernel<<<blocks_for(n), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(),
                                                                                    out.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

// A function that trusts its caller, as many do: `rows` must be x's row
// count, and any other value reads past x's memory on the host (here made a
// deterministic SIGSEGV). Called with valid inputs it launches square_kernel.
at::Tensor unchecked_rows_cuda(const at::Tensor& x, int64_t rows) {
  check_cuda_float(x, "x");
  if (x.dim() != 2 || rows != x.size(0)) std::raise(SIGSEGV);
  return square_cuda(x);
}
