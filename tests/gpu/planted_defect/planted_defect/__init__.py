"""planted_defect: a deliberately wrong-on-sm_90 fixture for archbuild's
validation tests (see setup.py). Importing it loads the extension, whose static
initialisers register torch.ops.planted_defect.scale_add and .scale."""
import torch  # noqa: F401  (the extension links against torch's libraries)

from . import _C  # noqa: F401

scale_add = torch.ops.planted_defect.scale_add
scale = torch.ops.planted_defect.scale

__all__ = ["scale_add", "scale"]
