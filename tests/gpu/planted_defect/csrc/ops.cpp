// planted_defect: a deliberately wrong-on-sm_90 fixture for archbuild's
// validation tests. This file defines the ops and their CPU kernels (right);
// ops_cuda.cu holds the CUDA kernels, of which scale_add is wrong on sm_90.
#include <ATen/ATen.h>
#include <Python.h>
#include <torch/library.h>

extern "C" {
// An empty Python module: `from . import _C` loads this library, and loading
// it runs the TORCH_LIBRARY registrations below.
PyObject* PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&module);
}
}

namespace planted_defect {

void check_float(const at::Tensor& t, const char* name, c10::DeviceType device) {
  TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be float32, got ", t.scalar_type());
  TORCH_CHECK(t.device().type() == device, name, " must be on ", device, ", got ", t.device());
  TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

at::Tensor scale_add_cpu(const at::Tensor& x, const at::Tensor& y, double alpha) {
  check_float(x, "x", c10::DeviceType::CPU);
  check_float(y, "y", c10::DeviceType::CPU);
  // No integers in the message: on the H200 machine (torch 2.11.0+cu130, g++ 13.3)
  // a TORCH_CHECK message streaming an int64_t segfaulted instead of throwing.
  TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape");
  at::Tensor out = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* yp = y.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) op[i] = xp[i] * a + yp[i];
  return out;
}

at::Tensor scale_cpu(const at::Tensor& x, double alpha) {
  check_float(x, "x", c10::DeviceType::CPU);
  at::Tensor out = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) op[i] = xp[i] * a;
  return out;
}

TORCH_LIBRARY(planted_defect, m) {
  m.def("scale_add(Tensor x, Tensor y, float alpha) -> Tensor");
  m.def("scale(Tensor x, float alpha) -> Tensor");
}

TORCH_LIBRARY_IMPL(planted_defect, CPU, m) {
  m.impl("scale_add", &scale_add_cpu);
  m.impl("scale", &scale_cpu);
}

}  // namespace planted_defect
