#include <torch/extension.h>

torch::Tensor scale_add_cuda(const torch::Tensor& x, double alpha, double beta);

torch::Tensor scale_add(const torch::Tensor& x, double alpha, double beta) {
  TORCH_CHECK(x.is_cuda(), "scale_add: x must be a CUDA tensor");
  return scale_add_cuda(x, alpha, beta);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale_add", &scale_add, "alpha * x + beta on the GPU"); }
