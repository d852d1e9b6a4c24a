"""pybind_kernels' own tests: they need expecttest, which a validation venv
has only when a wheelhouse holds it (archbuild's --test-wheelhouse)."""
import torch
from expecttest import TestCase

import pybind_kernels


class Kernels(TestCase):
    def test_scale_add_matches_the_cpu(self):
        x, y = torch.rand(64), torch.rand(64)
        expected = pybind_kernels.scale_add_cpu(x, y, 0.5)
        got = pybind_kernels.scale_add_cuda(x.cuda(), y.cuda(), 0.5).cpu()
        torch.testing.assert_close(got, expected)

    def test_square(self):
        x = torch.rand(32)
        torch.testing.assert_close(pybind_kernels.square_cuda(x.cuda()).cpu(), x * x)
