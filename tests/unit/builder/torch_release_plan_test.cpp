// What `archbuild plan torch` sets, per (torch version, CUDA version),
// against what PyTorch's own release build sets (docs/TORCH_RELEASE.md):
// the shipped recipe, planned as make_plan plans it.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "builder/build_plan.h"
#include "recipe/recipe.h"

using namespace archbuild;

namespace {

struct TorchPlan {
  // The host's CPU the plan is made on (the same on every machine the tests run on).
  std::string machine;
  RecipeBook book;
  Toolchain toolchain;

  explicit TorchPlan(std::string host = "x86_64")
      : machine(std::move(host)),
        book(RecipeBook::load(ARCHBUILD_SOURCE_DIR "/recipes", ARCHBUILD_SOURCE_DIR "/patches", machine)) {}

  BuildPlan plan(const std::string& ref, CudaVersion cuda, std::map<std::string, FoundLibrary> libraries = {}) {
    InstalledToolkit toolkit;
    toolkit.root = "/opt/cuda";
    toolkit.nvcc = "/opt/cuda/bin/nvcc";
    toolkit.version = cuda;
    toolkit.release = cuda.str();
    toolchain.installed = toolkit;
    toolchain.facts.version = cuda;
    PlanInputs inputs;
    inputs.recipe = book.find("torch");
    inputs.resolved = book.resolve(*inputs.recipe, ref);
    inputs.package = "torch";
    inputs.archs.add({{9, 0}, ArchVariant::plain, true, false});
    inputs.toolchain = &toolchain;
    inputs.source_dir = "/work/pytorch";
    inputs.out_dir = "/work/out";
    inputs.cache_dir = "/work/cache";
    inputs.python = "/usr/bin/python3";
    PlanFacts facts;
    facts.self_executable = "/opt/archbuild/bin/archbuild";
    facts.data_dir = "/opt/archbuild/share";
    facts.machine = machine;
    facts.cores = 16;
    facts.available_memory_bytes = 128ull << 30;
    facts.cuda_files = 400;
    facts.has_cmake_build_dir = true;  // configured before by someone else: a fresh configure
    facts.system_libraries = std::move(libraries);
    return make_plan(inputs, facts);
  }
};

std::string env_of(const BuildPlan& plan, const std::string& key) {
  auto it = plan.env.find(key);
  return it == plan.env.end() ? "(unset)" : it->second;
}

}  // namespace

TEST(TorchReleasePlan, MatchesTheReleaseBuildPerVersionAndToolkit) {
  struct Row {
    const char* ref;
    CudaVersion cuda;
    const char* system;         // setup.py through 2.13, scikit-build-core from 2.14
    const char* nvcc_flags;     // TORCH_NVCC_FLAGS: compressed fatbins, size mode on CUDA 13
    const char* bundle_ptxas;   // BUILD_BUNDLE_PTXAS: CUDA 13 wheels of 2.9 to 2.12
    const char* build_version;  // PYTORCH_BUILD_VERSION: the tag's version
    const char* use_ninja;      // gone with scikit-build-core
  } rows[] = {
      {"v2.8.0", {12, 8}, "setup.py", "-Xfatbin -compress-all", "(unset)", "2.8.0", "1"},
      {"v2.9.1", {12, 8}, "setup.py", "-Xfatbin -compress-all", "(unset)", "2.9.1", "1"},
      {"v2.9.1", {13, 0}, "setup.py", "-Xfatbin -compress-all -compress-mode=size", "1", "2.9.1", "1"},
      {"v2.11.0", {13, 0}, "setup.py", "-Xfatbin -compress-all -compress-mode=size", "1", "2.11.0", "1"},
      {"v2.12.1", {13, 0}, "setup.py", "-Xfatbin -compress-all -compress-mode=size", "1", "2.12.1", "1"},
      {"v2.13.0", {13, 0}, "setup.py", "-Xfatbin -compress-all -compress-mode=size", "(unset)", "2.13.0", "1"},
      {"v2.14.1", {13, 0}, "pyproject", "-Xfatbin -compress-all -compress-mode=size", "(unset)", "2.14.1", "(unset)"},
      {"v2.15.0", {13, 2}, "pyproject", "-Xfatbin -compress-all -compress-mode=size", "(unset)", "2.15.0", "(unset)"},
      {"main", {13, 0}, "pyproject", "-Xfatbin -compress-all -compress-mode=size", "(unset)", "(unset)", "(unset)"},
  };
  TorchPlan torch;
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.ref) + " CUDA " + row.cuda.str());
    auto plan = torch.plan(row.ref, row.cuda);
    EXPECT_EQ(plan.build_system, row.system);
    EXPECT_EQ(env_of(plan, "TORCH_NVCC_FLAGS"), row.nvcc_flags);
    EXPECT_EQ(env_of(plan, "BUILD_BUNDLE_PTXAS"), row.bundle_ptxas);
    EXPECT_EQ(env_of(plan, "PYTORCH_BUILD_VERSION"), row.build_version);
    // archbuild's own USE_NINJA=1 goes to every build; the recipe's does not reach 2.14+
    EXPECT_EQ(plan.key_inputs().count("build.env.USE_NINJA") ? "1" : "(unset)", std::string(row.use_ninja));
    // what must hold for every release: the arch list, the CUDA build, no tests
    EXPECT_EQ(env_of(plan, "TORCH_CUDA_ARCH_LIST"), "9.0");
    EXPECT_EQ(env_of(plan, "USE_CUDA"), "1");
    EXPECT_EQ(env_of(plan, "BUILD_TEST"), "0");
    EXPECT_EQ(plan.key_inputs().at("build.env.TORCH_NVCC_FLAGS"), row.nvcc_flags);
    // a fresh configure: CMAKE_FRESH for setup.py; scikit-build-core reads none, so build/ goes
    const bool removes_build_dir = std::find(plan.configure.stale_outputs.begin(), plan.configure.stale_outputs.end(),
                                             "/work/pytorch/build") != plan.configure.stale_outputs.end();
    EXPECT_EQ(removes_build_dir, std::string(row.system) == "pyproject");
  }
}

TEST(TorchReleasePlan, NcclAndCudnnComeFromThisMachineOrThePlanSaysWhy) {
  TorchPlan torch;
  auto found = torch.plan("v2.9.1", {13, 0}, {{"NCCL", {"/opt/cuda/include", "/opt/cuda/lib64"}}});
  EXPECT_EQ(env_of(found, "USE_SYSTEM_NCCL"), "1");  // as the release build: never NCCL from source
  EXPECT_EQ(env_of(found, "NCCL_INCLUDE_DIR"), "/opt/cuda/include");
  EXPECT_EQ(env_of(found, "NCCL_LIB_DIR"), "/opt/cuda/lib64");
  EXPECT_EQ(found.key_inputs().at("build.env.USE_SYSTEM_NCCL"), "1");
  ASSERT_EQ(found.recipe_env.libraries.size(), 2u);
  EXPECT_EQ(found.recipe_env.libraries[0], "NCCL: /opt/cuda/include, /opt/cuda/lib64 (this machine's)");
  EXPECT_NE(found.recipe_env.libraries[1].find("cuDNN: not found on this machine"), std::string::npos)
      << found.recipe_env.libraries[1];
  EXPECT_EQ(env_of(found, "CUDNN_INCLUDE_DIR"), "(unset)");
  auto missing = torch.plan("v2.9.1", {13, 0});
  EXPECT_EQ(env_of(missing, "USE_SYSTEM_NCCL"), "(unset)");
  EXPECT_NE(missing.recipe_env.libraries[0].find("the build installs nvidia-nccl-cu13 before the build step"),
            std::string::npos)
      << missing.recipe_env.libraries[0];
  EXPECT_NE(missing.recipe_env.libraries[1].find("nvidia-cudnn-cu13"), std::string::npos)
      << missing.recipe_env.libraries[1];
  // Taken from the wheels: named as the wheel's requirements, and keyed by the wheel, not by this venv's paths.
  auto wheels = torch.plan(
      "v2.9.1", {13, 0},
      {{"NCCL", {"/venv/site-packages/nvidia/nccl/include", "/out/library-links/NCCL", "nvidia-nccl-cu13==2.28.9"}},
       {"cuDNN",
        {"/venv/site-packages/nvidia/cudnn/include", "/out/library-links/cuDNN", "nvidia-cudnn-cu13==9.19.0.56"}}});
  EXPECT_EQ(env_of(wheels, "NCCL_LIB_DIR"), "/out/library-links/NCCL");
  EXPECT_EQ(env_of(wheels, "PYTORCH_EXTRA_INSTALL_REQUIREMENTS"),
            "nvidia-nccl-cu13==2.28.9 | nvidia-cudnn-cu13==9.19.0.56");
  EXPECT_EQ(wheels.key_inputs().at("build.env.NCCL_LIB_DIR"), "from nvidia-nccl-cu13==2.28.9");
  EXPECT_EQ(wheels.recipe_env.libraries[0],
            "NCCL: /venv/site-packages/nvidia/nccl/include, /out/library-links/NCCL (from the wheel "
            "nvidia-nccl-cu13==2.28.9)");
  EXPECT_EQ(env_of(found, "PYTORCH_EXTRA_INSTALL_REQUIREMENTS"),
            "(unset)");  // the machine's NCCL is linked, not required
}

TEST(TorchReleasePlan, OnAarch64HostsAsPyTorchsOwnAarch64Wheels) {
  struct Row {
    const char* machine;
    const char* use_magma;     // MAGMA has no aarch64 build
    const char* linker_flags;  // 64 KiB pages (Grace kernels)
    const char* blas;          // NVPL where the machine has it
    size_t libraries;          // NCCL, cuDNN, and NVPL on aarch64
    const char* key_machine;   // the key names a host other than x86-64
  } rows[] = {
      {"x86_64", "(unset)", "(unset)", "(unset)", 2, "(absent)"},
      {"aarch64", "0", "-Wl,-z,max-page-size=0x10000", "NVPL", 3, "aarch64"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.machine);
    TorchPlan torch(row.machine);
    for (const char* ref : {"v2.11.0", "v2.15.0"}) {
      auto plan = torch.plan(ref, {13, 0}, {{"NVPL", {"/usr/include", "/usr/lib/aarch64-linux-gnu"}}});
      EXPECT_EQ(env_of(plan, "USE_MAGMA"), row.use_magma);
      EXPECT_EQ(env_of(plan, "CMAKE_SHARED_LINKER_FLAGS"), row.linker_flags);
      EXPECT_EQ(env_of(plan, "BLAS"), row.blas);
      EXPECT_EQ(env_of(plan, "TORCH_NVCC_FLAGS"), "-Xfatbin -compress-all -compress-mode=size");
      EXPECT_EQ(plan.recipe_env.libraries.size(), row.libraries);
      auto key = plan.key_inputs();
      EXPECT_EQ(key.count("host_machine") ? key.at("host_machine") : "(absent)", row.key_machine);
    }
  }
  // Without NVPL the plan says what torch does then, and BLAS is left to torch.
  auto missing = TorchPlan("aarch64").plan("v2.11.0", {13, 0});
  EXPECT_EQ(env_of(missing, "BLAS"), "(unset)");
  ASSERT_EQ(missing.recipe_env.libraries.size(), 3u);
  EXPECT_NE(missing.recipe_env.libraries[2].find("NVPL: not found on this machine"), std::string::npos)
      << missing.recipe_env.libraries[2];
  EXPECT_NE(missing.recipe_env.libraries[2].find("LAPACK library not found"), std::string::npos);
}

TEST(TorchReleasePlan, CompanionsPairWithTheirTorchAndPinIt) {
  auto book = RecipeBook::load(ARCHBUILD_SOURCE_DIR "/recipes", ARCHBUILD_SOURCE_DIR "/patches");
  const auto* vision = book.find("torchvision");
  ASSERT_TRUE(vision);
  EXPECT_EQ(book.resolve(*vision, "v0.24.1").pinned.at("torch"), "2.9.1");
  EXPECT_EQ(book.resolve(*vision, "v0.26.0").pinned.at("torch"), "2.11.0");
  EXPECT_TRUE(book.resolve(*vision, "main").pinned.empty());  // no pair for a branch: any torch
  EXPECT_EQ(book.resolve(*book.find("torchaudio"), "v2.9.1").pinned.at("torch"), "2.9.1");
  // each recipe's default ref is paired, with a torch the torch recipe knows
  const auto* torch = book.find("torch");
  for (const char* name : {"torchvision", "torchaudio"}) {
    auto pinned = book.resolve(*book.find(name), "").pinned;
    ASSERT_FALSE(pinned.empty()) << name;
    EXPECT_NE(std::find(torch->releases.begin(), torch->releases.end(), pinned.at("torch")), torch->releases.end())
        << name;
  }
}

TEST(ShippedRecipes, DefaultRefIsTheNewestReleaseAndEveryReleaseBuilds) {
  auto book = RecipeBook::load(ARCHBUILD_SOURCE_DIR "/recipes", ARCHBUILD_SOURCE_DIR "/patches");
  size_t checked = 0;
  for (const auto& recipe : book.all()) {
    if (recipe.releases.empty()) continue;
    ++checked;
    SCOPED_TRACE(recipe.name);
    std::vector<int> newest;
    for (const auto& release : recipe.releases) {
      auto version = *version_of_ref(release);
      newest = std::max(newest, version);
      EXPECT_NO_THROW(book.resolve(recipe, "v" + release)) << "no [[build]] range covers " << release;
    }
    EXPECT_EQ(version_of_ref(recipe.default_ref), newest) << "default_ref " << recipe.default_ref;
  }
  EXPECT_GE(checked, 2u);  // torch and torchvision name their releases
}
