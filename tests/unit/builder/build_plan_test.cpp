#include "builder/build_plan.h"

#include <string>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "builder/arch_enforcement.h"
#include "builder/step_launcher.h"
#include "core/error.h"
#include "recipe/version_range.h"

using namespace archbuild;

namespace {

// A plan's inputs and facts made by hand: make_plan reads nothing else.
struct PlanFixture {
  Recipe recipe;
  BuildStep step;
  Toolchain toolchain;
  PlanInputs inputs;
  PlanFacts facts;

  PlanFixture() {
    recipe.name = "demo";
    recipe.dialect = ArchDialect::cmake;
    recipe.job_memory_gb = 2.0;
    recipe.file_sha256 = "abc";
    step.system = "setup.py";
    step.command = {"{python}", "setup.py", "bdist_wheel", "--dist-dir", "{wheel_dir}"};
    step.env = {{"USE_CUDA", "1"}};
    InstalledToolkit toolkit;
    toolkit.root = "/opt/cuda";
    toolkit.nvcc = "/opt/cuda/bin/nvcc";
    toolkit.version = {13, 0};
    toolkit.release = "13.0.88";
    toolchain.installed = toolkit;
    toolchain.facts.version = {13, 0};
    inputs.recipe = &recipe;
    inputs.resolved = {&recipe, "v1.0", std::nullopt, &step, {}};
    inputs.package = "demo";
    inputs.archs.add({{8, 0}, ArchVariant::plain, true, false});
    inputs.archs.add({{9, 0}, ArchVariant::plain, true, true});
    inputs.toolchain = &toolchain;
    inputs.source_dir = "/work/tree";
    inputs.out_dir = "/work/out";
    inputs.cache_dir = "/work/cache";
    inputs.python = "/usr/bin/python3";
    facts.path = "/usr/bin:/bin";
    facts.self_executable = "/opt/archbuild/bin/archbuild";
    facts.data_dir = "/opt/archbuild/share";
    facts.python_tag = "cp311";
    facts.cores = 16;
    facts.available_memory_bytes = 64ull << 30;
    facts.cuda_files = 40;
  }
};

}  // namespace

TEST(Plan, IsAPureFunctionOfInputsAndFacts) {
  PlanFixture fixture;
  auto plan = make_plan(fixture.inputs, fixture.facts);
  EXPECT_EQ(plan.arch_list, "8.0;9.0+PTX");
  EXPECT_EQ(plan.env.at("TORCH_CUDA_ARCH_LIST"), "8.0;9.0+PTX");
  EXPECT_EQ(plan.argv, (std::vector<std::string>{"/usr/bin/python3", "setup.py", "bdist_wheel", "--dist-dir",
                                                 "/work/out/wheels"}));
  EXPECT_EQ(plan.env.at("USE_CUDA"), "1");
  // A setup.py or Makefile calling $CUDA_HOME/bin/nvcc or `nvcc` from PATH
  // reaches the step launcher through the launcher toolkit, in any dialect.
  const auto& toolkit = plan.env.at("CUDA_HOME");
  EXPECT_EQ(toolkit.rfind("/work/cache/launcher-cuda/", 0), 0u) << toolkit;
  EXPECT_EQ(plan.env.at("CUDA_PATH"), toolkit);
  EXPECT_EQ(plan.env.at("PATH"), toolkit + "/bin:/opt/cuda/bin:/usr/bin:/bin");  // then the caller's PATH
  EXPECT_EQ(plan.env.at("CMAKE_CUDA_COMPILER"), toolkit + "/bin/nvcc");
  EXPECT_EQ(plan.env.at("MAX_JOBS"), std::to_string(plan.jobs.jobs));
  EXPECT_EQ(plan.jobs.jobs, 16u);  // 16 cores, 64 GiB at 2 GiB a job
  EXPECT_EQ(plan.key_inputs().at("python_tag"), "cp311");
  EXPECT_EQ(plan.key_inputs().at("cuda"), "13.0.88");
  EXPECT_FALSE(plan.configure.fresh);
  // the same inputs and facts: the same plan, twice
  EXPECT_EQ(make_plan(fixture.inputs, fixture.facts).to_json(), plan.to_json());
}

TEST(Plan, StepLauncherAndChosenLauncherAreInTheEnvironment) {
  PlanFixture fixture;
  auto plain = make_plan(fixture.inputs, fixture.facts);
  const std::string step = std::string("/opt/archbuild/bin/archbuild;") + kStepLauncherCommand +
                           ";--nvcc-targets=sm_80,sm_90,compute_90";
  EXPECT_EQ(plain.env.at("CMAKE_CUDA_COMPILER_LAUNCHER"), step);
  EXPECT_EQ(plain.env.at("ARCHBUILD_STEP_LOG"), "/work/out/steps.log");
  fixture.inputs.compiler_launcher = CompilerLauncher::ccache;
  auto cached = make_plan(fixture.inputs, fixture.facts);
  for (const char* key : {"CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_CUDA_COMPILER_LAUNCHER"})
    EXPECT_EQ(cached.env.at(key), step + ";ccache") << key;
  EXPECT_EQ(cached.env.at("CCACHE_DIR"), "/work/cache/ccache");
  // what decides a fresh configure is the launcher the user chose, not archbuild's own path
  EXPECT_EQ(cached.configure.inputs.at("CMAKE_CUDA_COMPILER_LAUNCHER"), "ccache");
  fixture.facts.self_executable = "/elsewhere/archbuild";
  fixture.facts.recorded_configure_inputs = cached.configure.inputs;
  EXPECT_FALSE(make_plan(fixture.inputs, fixture.facts).configure.fresh);
}

TEST(Plan, ChangedConfigureInputsAskForAFreshConfigure) {
  PlanFixture fixture;
  auto first = make_plan(fixture.inputs, fixture.facts);
  fixture.facts.recorded_configure_inputs = first.configure.inputs;
  EXPECT_FALSE(make_plan(fixture.inputs, fixture.facts).configure.fresh);
  fixture.inputs.archs = ArchList();
  fixture.inputs.archs.add({{9, 0}, ArchVariant::plain, true, false});
  fixture.facts.setuptools_outputs = {"/work/tree/build/lib.linux-x86_64-cpython-311"};
  auto changed = make_plan(fixture.inputs, fixture.facts);
  EXPECT_TRUE(changed.configure.fresh);
  EXPECT_EQ(changed.env.at("CMAKE_FRESH"), "1");
  EXPECT_NE(changed.configure.reason.find("TORCH_CUDA_ARCH_LIST changed: 8.0;9.0+PTX -> 9.0"), std::string::npos)
      << changed.configure.reason;
  EXPECT_EQ(changed.configure.stale_outputs, fixture.facts.setuptools_outputs);
  // nothing recorded, but a configured CMake dir exists: fresh, to be sure
  fixture.facts.recorded_configure_inputs.reset();
  fixture.facts.setuptools_outputs.clear();
  fixture.facts.has_cmake_build_dir = true;
  EXPECT_TRUE(make_plan(fixture.inputs, fixture.facts).configure.fresh);
}

TEST(Plan, FewFilesManyArchsGetNvccThreads) {
  PlanFixture fixture;
  fixture.facts.cuda_files = 4;
  auto plan = make_plan(fixture.inputs, fixture.facts);
  EXPECT_GT(plan.jobs.nvcc_threads, 1u);
  EXPECT_EQ(plan.env.at("NVCC_APPEND_FLAGS"), "--threads " + std::to_string(plan.jobs.nvcc_threads));
  fixture.inputs.jobs_override = 3;
  EXPECT_EQ(make_plan(fixture.inputs, fixture.facts).jobs.jobs, 3u);
}

TEST(Plan, ExtensionLauncherGoesThroughShimsNamedByTheFacts) {
  PlanFixture fixture;
  fixture.recipe.dialect = ArchDialect::extension;
  fixture.inputs.compiler_launcher = CompilerLauncher::ccache;
  fixture.facts.cxx = "/usr/lib/gcc12/bin/g++";
  auto plan = make_plan(fixture.inputs, fixture.facts);
  EXPECT_EQ(plan.env.at("CXX"), "/work/cache/ccache-bin/g++");
  const auto& toolkit = plan.env.at("CUDA_HOME");
  EXPECT_EQ(toolkit.rfind("/work/cache/launcher-cuda/ccache-", 0), 0u) << toolkit;
  EXPECT_EQ(plan.env.at("PATH"),
            toolkit + "/bin:/work/cache/ccache-bin:/usr/lib/gcc12/bin:/opt/cuda/bin:/usr/bin:/bin");
  // the script a user pastes extends their own PATH
  EXPECT_NE(plan.shell_script().find("export PATH=" + toolkit +
                                     "/bin:/work/cache/ccache-bin:/usr/lib/gcc12/bin:/opt/cuda/bin:\"$PATH\"\n"),
            std::string::npos)
      << plan.shell_script();
}

TEST(Plan, TheLauncherPartNamesTheShimsTheEnvironmentUses) {
  PlanFixture fixture;
  fixture.recipe.dialect = ArchDialect::extension;
  fixture.inputs.compiler_launcher = CompilerLauncher::ccache;
  auto plan = make_plan(fixture.inputs, fixture.facts);
  const auto& launchers = plan.launchers;
  EXPECT_TRUE(launchers.ccache_masquerade);
  // cpp_extension's toolkit (ccache over the step launcher), then CMake's device-link one (the step launcher only)
  ASSERT_EQ(launchers.toolkits.size(), 2u);
  EXPECT_EQ(launchers.toolkits[0].launcher, "ccache");
  EXPECT_EQ(plan.env.at("CUDA_HOME"), launchers.toolkits[0].dir.string());
  EXPECT_EQ(launchers.toolkits[1].launcher, "");
  EXPECT_EQ(plan.env.at("CUDACXX"), (launchers.toolkits[1].dir / "bin" / "nvcc").string());
  EXPECT_EQ(launchers.toolkits[1].toolkit_root, "/opt/cuda");
  EXPECT_EQ(plan.env.at("ARCHBUILD_STEP_LOG"), launchers.step_log.string());
  // the failing command a user sees is the one their compiler got
  const auto step = launchers.step_launcher;
  ASSERT_EQ(step.size(), 3u);
  EXPECT_EQ(launchers.without_step_launcher(step[0] + " " + step[1] + " " + step[2] + " ccache nvcc -c x.cu"),
            "ccache nvcc -c x.cu");
  EXPECT_EQ(launchers.without_step_launcher("g++ -c x.cpp"), "g++ -c x.cpp");
  // without enforcement nor a launcher a CMake build needs no shim
  PlanFixture plain;
  plain.inputs.enforce_archs = false;
  auto bare = make_plan(plain.inputs, plain.facts);
  EXPECT_TRUE(bare.launchers.toolkits.empty());
  EXPECT_FALSE(bare.launchers.ccache_masquerade);
  EXPECT_EQ(bare.env.at("CUDA_HOME"), "/opt/cuda");  // the real toolkit: nothing to enforce
  EXPECT_EQ(bare.env.at("PATH"), "/opt/cuda/bin:/usr/bin:/bin");
  EXPECT_EQ(bare.env.count(kNvccTargetsVariable), 0u);
}

TEST(Plan, WithJobsIsTheSamePlanAtFewerJobsWithoutAFreshConfigure) {
  PlanFixture fixture;
  fixture.facts.has_cmake_build_dir = true;  // unrecorded inputs: CMAKE_FRESH=1
  auto plan = make_plan(fixture.inputs, fixture.facts);
  ASSERT_EQ(plan.env.at("CMAKE_FRESH"), "1");
  auto retry = plan.with_jobs(2);
  EXPECT_EQ(retry.jobs.jobs, 2u);
  EXPECT_EQ(retry.env.at("MAX_JOBS"), "2");
  EXPECT_EQ(retry.env.at("CMAKE_BUILD_PARALLEL_LEVEL"), "2");
  EXPECT_EQ(retry.env.count("CMAKE_FRESH"), 0u);
  auto expected = plan.env;
  expected["MAX_JOBS"] = expected["CMAKE_BUILD_PARALLEL_LEVEL"] = "2";
  expected.erase("CMAKE_FRESH");
  EXPECT_EQ(retry.env, expected);  // nothing else changes
  EXPECT_EQ(retry.key_inputs(), plan.key_inputs());
}

TEST(Plan, TheEnvironmentIsThePartsSum) {
  PlanFixture fixture;
  fixture.inputs.network.mode = NetworkIsolation::unavailable;
  fixture.inputs.network.reason = "no namespaces";
  auto plan = make_plan(fixture.inputs, fixture.facts);
  for (const auto* part : {&plan.recipe_env.env, &plan.launchers.env, &plan.enforcement.env, &plan.network.env}) {
    for (const auto& [key, value] : *part) {
      if (key != "PATH" && key != "CUDACXX" && key != "CMAKE_CUDA_COMPILER" && key != "CUDA_HOME" &&
          key != "CUDA_PATH") {
        EXPECT_EQ(plan.env.at(key), value) << key;
      }
    }
  }
  EXPECT_TRUE(plan.network.offline);
  EXPECT_EQ(plan.env.at("PIP_NO_INDEX"), "1");
  EXPECT_EQ(plan.to_json()["network"], plan.network.description);
}

TEST(Plan, DependencyInputsJoinTheKey) {
  PlanFixture fixture;
  fixture.inputs.dependencies = {{"torch", "torch-2.11.0 sha256 abc"}};
  fixture.inputs.build_requirements = {{"cmake", "3.31.2"}};
  const auto with_deps = make_plan(fixture.inputs, fixture.facts);
  EXPECT_EQ(with_deps.key_inputs().at("dep.torch"), "torch-2.11.0 sha256 abc");
  EXPECT_EQ(with_deps.key_inputs().at("build.requires.cmake"), "3.31.2");
  EXPECT_EQ(with_deps.key.dependencies().at("torch"), "torch-2.11.0 sha256 abc");
}

TEST(Plan, TheFrontendsParallelCompilesCanBeTurnedOff) {
  BuildStep step;
  step.command = {"{python}", "{archbuild_data}/recipes/frontends/pep517_wheel.py", "{source_dir}", "{wheel_dir}"};
  EXPECT_TRUE(runs_parallel_frontend(step));
  step.env["ARCHBUILD_PARALLEL_SETUPTOOLS"] = "0";
  EXPECT_FALSE(runs_parallel_frontend(step));
  step.env.clear();
  step.command = {"{python}", "setup.py", "bdist_wheel"};
  EXPECT_FALSE(runs_parallel_frontend(step));
}

TEST(Plan, EnvOptionGoesIntoTheBuildTheKeyAndTheConfigureInputs) {
  PlanFixture fixture;
  fixture.inputs.extra_env = {{"FORCE_CUDA", "1"}, {"USE_CUDA", "0"}, {"EMPTY", ""}};
  auto plan = make_plan(fixture.inputs, fixture.facts);
  EXPECT_EQ(plan.env.at("FORCE_CUDA"), "1");
  EXPECT_EQ(plan.env.at("USE_CUDA"), "0");  // over the recipe's USE_CUDA=1
  EXPECT_EQ(plan.env.at("EMPTY"), "");
  EXPECT_EQ(plan.key_inputs().at("env.FORCE_CUDA"), "1");
  EXPECT_EQ(plan.configure.inputs.at("USE_CUDA"), "0");
  auto without = make_plan(PlanFixture().inputs, fixture.facts);
  EXPECT_EQ(without.key_inputs().count("env.FORCE_CUDA"), 0u);
}

TEST(Plan, VersionPlaceholdersAndTheKeyOfRecipeVariables) {
  PlanFixture fixture;
  fixture.step.env = {{"BUILD_VERSION", "{ref_version}"}, {"TOOL", "{python}"}, {"PIN", "torch=={version:torch}"}};
  fixture.inputs.dependency_versions = {{"torch", "2.9.1+cu130.sm90"}};
  for (const auto& [ref, expected] : std::vector<std::pair<std::string, std::string>>{
           {"v2.9.1", "2.9.1"}, {"2.9.1", "2.9.1"}, {"v2.9.1-rc1", ""}, {"2.10-fixes", ""}, {"main", ""}}) {
    fixture.inputs.resolved.ref = ref;
    fixture.inputs.resolved.version = version_of_ref(ref);
    auto plan = make_plan(fixture.inputs, fixture.facts);
    EXPECT_EQ(plan.env.count("BUILD_VERSION") ? plan.env.at("BUILD_VERSION") : "", expected) << ref;
    EXPECT_EQ(plan.env.at("PIN"), "torch==2.9.1");  // the public version, without the local label
    // the build gets the path; the key keeps the placeholder (no machine path in it)
    EXPECT_EQ(plan.env.at("TOOL"), "/usr/bin/python3");
    EXPECT_EQ(plan.key_inputs().at("build.env.TOOL"), "{python}");
  }
  fixture.inputs.dependency_versions.clear();  // a plan before the dependencies: not set at all
  EXPECT_EQ(make_plan(fixture.inputs, fixture.facts).env.count("PIN"), 0u);
}

TEST(Plan, AConfigureLeftPendingAsksForAFreshOne) {
  PlanFixture fixture;
  auto first = make_plan(fixture.inputs, fixture.facts);
  auto pending = first.configure.inputs;
  pending[kConfigurePendingKey] = "1";  // a build of the same inputs was killed before it compiled
  fixture.facts.recorded_configure_inputs = pending;
  auto plan = make_plan(fixture.inputs, fixture.facts);
  EXPECT_TRUE(plan.configure.fresh);
  EXPECT_EQ(plan.env.at("CMAKE_FRESH"), "1");
  EXPECT_NE(plan.configure.reason.find("stopped before it compiled"), std::string::npos) << plan.configure.reason;
}

TEST(Plan, SourceDateEpochIsTheCommitsTimeOnceTheSourceIsKnownAndNotInTheKey) {
  PlanFixture fixture;
  EXPECT_EQ(make_plan(fixture.inputs, fixture.facts).env.count("SOURCE_DATE_EPOCH"), 0u);  // before the checkout
  SourceTree tree;
  tree.commit = std::string(40, 'a');
  tree.commit_time = 1700000000;
  fixture.inputs.source = tree;
  const auto plan = make_plan(fixture.inputs, fixture.facts);
  EXPECT_EQ(plan.env.at("SOURCE_DATE_EPOCH"), "1700000000");
  fixture.inputs.source->commit_time = 0;  // archbuild's own commit of an sdist: the first time a zip file holds
  const auto own_commit = make_plan(fixture.inputs, fixture.facts);
  EXPECT_EQ(own_commit.env.at("SOURCE_DATE_EPOCH"), "315532800");
  EXPECT_EQ(own_commit.key.values(), plan.key.values());  // the commit is in the key already
  fixture.inputs.extra_env = {{"SOURCE_DATE_EPOCH", "1234567890"}};
  EXPECT_EQ(make_plan(fixture.inputs, fixture.facts).env.at("SOURCE_DATE_EPOCH"), "1234567890");
}
