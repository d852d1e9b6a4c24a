// pybind_kernels: the module's functions; the CPU twin is here, the CUDA
// entry points in kernels.cu.
#include <torch/extension.h>

at::Tensor scale_add_cuda(const at::Tensor& x, const at::Tensor& y, double alpha);  // kernels.cu
at::Tensor square_cuda(const at::Tensor& x);                                        // kernels.cu
at::Tensor unchecked_rows_cuda(const at::Tensor& x, int64_t rows);                  // kernels.cu

at::Tensor scale_add_cpu(const at::Tensor& x, const at::Tensor& y, double alpha) {
  TORCH_CHECK(x.device().is_cpu() && y.device().is_cpu(), "x and y must be CPU tensors");
  TORCH_CHECK(x.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat, "x and y must be float32");
  TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape");
  auto xc = x.contiguous(), yc = y.contiguous();
  at::Tensor out = at::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* yp = yc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) op[i] = xp[i] * a + yp[i];
  return out;
}

// Returns its output unwritten: what a kernel reading past a tensor (a size
// guessed wrong) gives, different on every run.
at::Tensor unwritten_cuda(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  return at::empty_like(x);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale_add_cuda", &scale_add_cuda, "x * alpha + y on the GPU", py::arg("x"), py::arg("y"), py::arg("alpha"));
  m.def("scale_add_cpu", &scale_add_cpu, "x * alpha + y on the CPU", py::arg("x"), py::arg("y"), py::arg("alpha"));
  m.def("square_cuda", &square_cuda, "x * x on the GPU");
  m.def("unchecked_rows_cuda", &unchecked_rows_cuda, "x * x for a 2-D x of `rows` rows; checks nothing", py::arg("x"),
        py::arg("rows"));
  m.def("unwritten_cuda", &unwritten_cuda, "an output never written");  // no py::arg: arg0
}
