"""A git repository holding examples/torch-extension: a real
torch.utils.cpp_extension project with one CUDA kernel and an
archbuild_kernel_test(), built by the generic cpp-extension recipe."""
import pathlib
import shutil

from gitrepos import git
from harness import SOURCE_DIR


def make_extension_repo(root):
    repo = pathlib.Path(root) / "torch-extension"
    shutil.copytree(SOURCE_DIR / "examples" / "torch-extension", repo,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "torch extension example")
    git(repo, "tag", "v0.1.0")
    return repo
