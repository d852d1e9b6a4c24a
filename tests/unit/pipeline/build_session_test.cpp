#include "pipeline/build_session.h"

#include <csignal>

#include <gtest/gtest.h>

#include "cache/cache_key.h"
#include "cache/wheel_store.h"
#include "core/ed25519.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "pipeline/dependency_resolver.h"
#include "pipeline/pipeline_test_support.h"
#include "test_support.h"
#include "wheel/build_record.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_test_support.h"

using namespace archbuild;

namespace {

// A real wheel of `name` 1.0, as the build step would leave it.
std::filesystem::path write_wheel(const std::filesystem::path& dir, const std::string& name) {
  auto path = write_minimal_wheel(dir, name, "cp311-cp311-linux_x86_64");
  // Coarse file clocks may stamp it before the build's start: make it plainly newer.
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() + std::chrono::seconds(1));
  return path;
}

// The build step: writes the wheel the recipe's command names
// (`{python} build-NAME.py {wheel_dir}`), or ends as scripted.
class FakeBuildStep : public CommandRunner {
 public:
  GroupRunOutcome run(const GroupRunSpec& spec, const LineHandler& on_line, const TickHandler&) override {
    runs.push_back(spec);
    GroupRunOutcome outcome;
    outcome.status = ExitStatus::exited(0);
    if (interrupt) {
      outcome.interrupted = true;
      outcome.interrupt_signal = SIGINT;
      return outcome;
    }
    const auto script = std::filesystem::path(spec.argv.at(1)).stem().string();  // build-NAME
    on_line("[1/1] Linking " + script, false);
    write_wheel(spec.argv.back(), script.substr(6));
    return outcome;
  }
  std::vector<GroupRunSpec> runs;
  bool interrupt = false;
};

// Everything a session does to the world, played back.
class FakeServices : public SessionServices {
 public:
  std::string utc_now() override {
    // After validation the publish asks the clock first: the signal lands inside the publish.
    if (signal_at_publish && !validated.empty()) std::raise(SIGINT);
    return "2026-12-01T00:00:00Z";
  }
  bool signal_at_publish = false;
  std::string host_name() override { return "builder-1"; }
  CommandRunner& build_runner() override { return step; }
  SourceTree checkout(const CheckoutRequest& request, const MirrorCache&) override {
    checkouts.push_back(request.url);
    std::filesystem::create_directories(request.dest);
    SourceTree tree;
    tree.dir = request.dest;
    tree.url = request.url;
    tree.ref = request.ref;
    tree.ref_kind = "tag";
    tree.commit = sha256_hex(request.url).substr(0, 40);
    return tree;
  }
  DependencyEnv prepare_dependencies(const DependencyRequest& request) override {
    DependencyEnv env;
    env.python = request.python;
    for (const auto& wheel : request.wheels) {
      dependency_wheels.push_back(wheel);
      auto name = WheelName::parse(wheel.filename().string());
      env.built_against[name->name] = wheel.filename().string() + " sha256 " + sha256_hex(wheel.string());
      env.versions[name->name] = name->version;
    }
    return env;
  }
  BuildRequirementsEnv install_build_requirements(const std::string& python, const std::filesystem::path&,
                                                  const std::vector<std::string>& requirements, bool) override {
    ADD_FAILURE() << "no recipe here asks for build requirements: " << requirements.size();
    BuildRequirementsEnv env;
    env.python = python;
    return env;
  }
  PlanFacts plan_facts(const std::filesystem::path&, const std::string&) override {
    PlanFacts facts;
    facts.path = "/usr/bin:/bin";
    facts.self_executable = "/opt/archbuild/bin/archbuild";
    facts.python_tag = "cp311";
    facts.cores = 4;
    facts.available_memory_bytes = 16ull << 30;
    return facts;
  }
  CxxRuntimeLink cxx_runtime_link(const std::string& compiler, const std::filesystem::path& links_dir) override {
    runtime_link_asked = compiler + " " + links_dir.string();
    auto link = runtime_link;
    link.compiler = compiler;
    return link;
  }
  CxxRuntimeLink runtime_link{.probed = true};
  std::string runtime_link_asked;
  NetworkIsolationProbe network_isolation() override {
    NetworkIsolationProbe probe;
    probe.mode = NetworkIsolation::network_namespace;
    probe.sockets_closed = probe.unix_sockets_refused = true;
    return probe;
  }
  AuditTool audit_tool(const std::string&, const std::filesystem::path& tools_dir, bool offline) override {
    audit_tools_dir = tools_dir;
    return {{}, offline ? "offline" : "no auditwheel in a unit test"};
  }
  std::filesystem::path audit_tools_dir;
  // `auditwheel repair` stands in as a copy under the manylinux name (or a refusal).
  WheelRepair repair_wheel(const std::string&, const AuditTool&, const std::filesystem::path& wheel,
                           const std::filesystem::path& out_dir) override {
    repaired.push_back(wheel);
    WheelRepair repair;
    repair.wheel = wheel;
    if (!repair_error.empty()) {
      repair.error = repair_error;
      repair.environment = repair_environment;
      return repair;
    }
    auto name = wheel.filename().string();
    name.replace(name.rfind("linux_x86_64"), std::string("linux_x86_64").size(), "manylinux_2_34_x86_64");
    std::filesystem::create_directories(out_dir);
    std::filesystem::copy_file(wheel, out_dir / name);
    repair.wheel = out_dir / name;
    repair.bundled = {"libzstd.so.1"};
    repair.platform_tag = "manylinux_2_34_x86_64";
    return repair;
  }
  std::vector<std::filesystem::path> repaired;
  std::string repair_error;
  bool repair_environment = false;
  WheelValidation validate(const WheelValidationRequest& request) override {
    validated.push_back(request.wheel);
    WheelValidation validation;
    // A project that builds its CUDA code only with FORCE_CUDA=1 in its environment.
    const auto forced = [&] {
      if (step.runs.empty()) return false;
      const auto found = step.runs.back().env.find("FORCE_CUDA");
      return found != step.runs.back().env.end() && found->second == "1";
    };
    if (cpu_only_without_switch && !forced()) {
      validation.static_checks.cuda_switches = {{{"FORCE_CUDA", "1"}}, {"FORCE_ONLY_CPU"}};
      return validation;  // no CUDA code: the static checks fail
    }
    validation.static_checks.libraries.emplace_back();  // "CUDA code found": static checks pass
    validation.device.ran = true;
    DeviceCheck check{"kernel test (native SASS)", verdict == "valid", verdict, {}, 0, FailureKind::none};
    if (verdict == "untestable") check.failure = FailureKind::environment;
    validation.device.checks.push_back(check);
    // What the launch recorder saw: one of the wheel's two kernels, or none.
    KernelCensus census;
    census.recorded = true;
    census.wheel_kernels = 2;
    if (kernels_launched) {
      census.launched = {"_Z6muladdPKfS0_fPfi"};
      census.devices = {0};
    }
    validation.device.census = census;
    return validation;
  }

  std::unique_ptr<CompileCluster> connect_compile_cluster(const CompileClusterRequest& request) override {
    cluster_requests.push_back(request);
    return std::make_unique<FakeCluster>(cluster_link, cluster_counts);
  }
  // A compile cluster as its sccache server would report it.
  class FakeCluster : public CompileCluster {
   public:
    FakeCluster(ClusterConnection link, CompileCounts counts) : link_(std::move(link)), counts_(std::move(counts)) {}
    const ClusterConnection& connection() const override { return link_; }
    CompileCounts counts() override { return counts_; }

   private:
    ClusterConnection link_;
    CompileCounts counts_;
  };

  FakeBuildStep step;
  ClusterConnection cluster_link;
  CompileCounts cluster_counts;
  std::vector<CompileClusterRequest> cluster_requests;
  std::string verdict = "valid";         // what validation finds: valid, invalid, untestable
  bool cpu_only_without_switch = false;  // the wheel has CUDA code only when FORCE_CUDA was set
  bool kernels_launched = true;          // whether a kernel of the wheel launched in its device checks
  std::vector<std::string> checkouts;
  std::vector<std::filesystem::path> dependency_wheels, validated;
};

// Records what the pipeline reports.
class RecordingEvents : public PipelineEvents {
 public:
  void stage(const std::string& stage, const std::string& text, Tone) override { lines.push_back(stage + ": " + text); }
  void validation(const WheelValidation&) override {}
  StatusLine& status() override { return status_; }
  BuildProgressSink& build_progress() override { return progress_; }
  bool said(const std::string& text) const {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const auto& line) { return line.find(text) != std::string::npos; });
  }
  std::vector<std::string> lines;

 private:
  struct : BuildProgressSink {
    void progress(const StatusText&) override {}
    void note(const std::string&) override {}
    void finished() override {}
  } progress_;
  std::FILE* null_ = std::fopen("/dev/null", "we");
  StatusLine status_{null_};
};

class BuildSessionTest : public PipelineTest {
 protected:
  BuildOutcome build(const BuildRequest& request) { return run_build(request, events_, services_); }

  FakeServices services_;
  RecordingEvents events_;
};

}  // namespace

TEST_F(BuildSessionTest, AWheelNoneOfWhoseKernelsLaunchedIsPublishedAsLoaded) {
  services_.kernels_launched = false;
  auto outcome = build(request("fixture"));
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  EXPECT_TRUE(outcome.report.published);
  EXPECT_EQ(outcome.report.validation_level, ValidationLevel::loaded);
  EXPECT_EQ(outcome.report.kernel_census_summary(), "launched 0 of 2 kernels of this wheel");
  EXPECT_EQ(outcome.report.kernels_launched(), 0u);
  // The manifest reads back the same level, and the provenance statement says it.
  auto manifest = BuildReport::from_json(outcome.report.to_json());
  EXPECT_EQ(manifest.validation_level, ValidationLevel::loaded);
  const auto envelope = nlohmann::json::parse(read(*outcome.report.store / "provenance.intoto.json"));
  const auto statement = nlohmann::json::parse(base64_decode(envelope.at("payload").get<std::string>()));
  const auto& validation = statement["predicate"]["runDetails"]["byproducts"][0];
  EXPECT_EQ(validation["name"], "validation");
  EXPECT_EQ(validation["annotations"]["level"], "loaded");
  EXPECT_EQ(validation["annotations"]["kernels"], "launched 0 of 2 kernels of this wheel");
}

TEST_F(BuildSessionTest, ACpuOnlyResultGetsTheSwitchItsSetupNamesAndIsBuiltAgain) {
  services_.cpu_only_without_switch = true;
  auto outcome = build(request("fixture"));
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  ASSERT_EQ(services_.step.runs.size(), 2u);
  EXPECT_EQ(services_.step.runs[1].env.at("FORCE_CUDA"), "1");
  EXPECT_TRUE(events_.said("building again with them set"));
  EXPECT_EQ(outcome.report.cuda_switches_set, (std::vector<std::pair<std::string, std::string>>{{"FORCE_CUDA", "1"}}));
  EXPECT_EQ(outcome.plan.key_inputs().at("env.FORCE_CUDA"), "1");  // a switch set is in the key
  // the manifest keeps it
  EXPECT_EQ(BuildReport::from_json(outcome.report.to_json()).cuda_switches_set, outcome.report.cuda_switches_set);
}

TEST_F(BuildSessionTest, NoCudaSwitchesKeepsTheCpuOnlyResultRefused) {
  services_.cpu_only_without_switch = true;
  auto asked = request("fixture");
  asked.no_cuda_switches = true;
  auto outcome = build(asked);
  EXPECT_EQ(outcome.exit, ExitCode::work_failed);
  EXPECT_EQ(services_.step.runs.size(), 1u);
  EXPECT_FALSE(outcome.report.published);
  EXPECT_TRUE(outcome.report.cuda_switches_set.empty());
}

TEST_F(BuildSessionTest, ASwitchThatTurnsCudaOffSetByTheUserKeepsTheCpuOnlyResult) {
  services_.cpu_only_without_switch = true;
  auto asked = request("fixture");
  asked.env = {{"FORCE_ONLY_CPU", "1"}};  // the CPU variant, asked for
  auto outcome = build(asked);
  EXPECT_EQ(outcome.exit, ExitCode::work_failed);
  EXPECT_EQ(services_.step.runs.size(), 1u);
  EXPECT_TRUE(outcome.report.cuda_switches_set.empty());
}

TEST_F(BuildSessionTest, ASwitchTheUserSetToAnotherValueIsNotOverridden) {
  services_.cpu_only_without_switch = true;
  auto asked = request("fixture");
  asked.env = {{"FORCE_CUDA", "0"}};
  auto outcome = build(asked);
  EXPECT_EQ(outcome.exit, ExitCode::work_failed);
  EXPECT_EQ(services_.step.runs.size(), 1u);
}

TEST_F(BuildSessionTest, AMissBuildsValidatesAndPublishes) {
  auto outcome = build(request("fixture"));
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  EXPECT_EQ(services_.step.runs.size(), 1u);
  EXPECT_EQ(services_.validated.size(), 1u);
  EXPECT_TRUE(outcome.report.published);
  EXPECT_EQ(outcome.report.validation_level, ValidationLevel::launched);
  EXPECT_EQ(outcome.report.kernel_census_summary(), "launched 1 of 2 kernels of this wheel, on 1 GPU");
  EXPECT_EQ(outcome.report.local_version_label, "cu130.sm90");
  EXPECT_EQ(outcome.report.published_at, "2026-12-01T00:00:00Z");  // the session's clock
  ASSERT_TRUE(outcome.report.store);
  // The store entry is the key the plan computed, with the labelled wheel and its build record.
  const auto key = CacheKey::compute(outcome.plan.key_inputs());
  auto entry = WheelStore(dir_.path / "cache").find(key);
  ASSERT_TRUE(entry);
  ASSERT_EQ(entry->wheels.size(), 1u);
  EXPECT_EQ(entry->wheels[0].filename(), "fixture-1.0+cu130.sm90-cp311-cp311-linux_x86_64.whl");
  auto record = read_build_record(entry->wheels[0]);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->key, key.hash);
  EXPECT_EQ(entry->inputs.recipe(), "fixture");
  // The provenance names this host, from the services.
  const auto envelope = nlohmann::json::parse(read(entry->dir / "provenance.intoto.json"));
  const auto statement = nlohmann::json::parse(base64_decode(envelope.at("payload").get<std::string>()));
  EXPECT_EQ(statement["predicate"]["runDetails"]["builder"]["id"], "urn:archbuild:builder:builder-1");
  EXPECT_EQ(statement["predicate"]["runDetails"]["metadata"]["startedOn"], "2026-12-01T00:00:00Z");
  // report.json and key.txt are beside the build.
  EXPECT_EQ(read(outcome.plan.out_dir / "key.txt"), key.text);
  EXPECT_NE(read(outcome.plan.out_dir / "report.json").find(key.hash), std::string::npos);
}

TEST_F(BuildSessionTest, PortableRepairsTheWheelBeforeItIsLabelledValidatedAndPublished) {
  auto asked = request("fixture");
  asked.setting_flags["portable"] = "true";
  auto outcome = build(asked);
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  ASSERT_EQ(services_.repaired.size(), 1u);
  EXPECT_EQ(services_.repaired[0].filename(), "fixture-1.0-cp311-cp311-linux_x86_64.whl");  // the built one
  // validation saw the repaired wheel, labelled; the store holds it under its manylinux name
  ASSERT_EQ(services_.validated.size(), 1u);
  EXPECT_EQ(services_.validated[0].filename(), "fixture-1.0+cu130.sm90-cp311-cp311-manylinux_2_34_x86_64.whl");
  auto entry = WheelStore(dir_.path / "cache").find(CacheKey::compute(outcome.plan.key_inputs()));
  ASSERT_TRUE(entry);
  ASSERT_EQ(entry->wheels.size(), 1u);
  EXPECT_EQ(entry->wheels[0].filename(), "fixture-1.0+cu130.sm90-cp311-cp311-manylinux_2_34_x86_64.whl");
  EXPECT_TRUE(std::filesystem::exists(dir_.path / "cache" / "simple" / "fixture"));
  // the repair is a key input (its pinned tools), and the report says what was bundled
  EXPECT_EQ(outcome.plan.key_inputs().at("portable").rfind("auditwheel==", 0), 0u);
  EXPECT_EQ(outcome.report.repair.at(0).at("bundled"), nlohmann::json::array({"libzstd.so.1"}));
  EXPECT_TRUE(
      events_.said("repair: fixture-1.0-cp311-cp311-linux_x86_64.whl: bundled libzstd.so.1; tagged "
                   "manylinux_2_34_x86_64"));
  // without the setting the key has no such line: keys of earlier builds stay as they were
  EXPECT_EQ(build(request("fixture")).plan.key_inputs().count("portable"), 0u);
}

TEST_F(BuildSessionTest, AWheelPortableCannotRepairIsQuarantined) {
  services_.repair_error = "libfoo.so.1 is found nowhere on this machine: there is nothing to bundle";
  auto asked = request("fixture");
  asked.setting_flags["portable"] = "true";
  auto outcome = build(asked);
  EXPECT_EQ(outcome.exit, ExitCode::work_failed);
  EXPECT_FALSE(outcome.report.published);
  EXPECT_TRUE(services_.validated.empty());
  ASSERT_TRUE(outcome.report.quarantine);
  EXPECT_TRUE(
      std::filesystem::exists(*outcome.report.quarantine / "wheels" / "fixture-1.0-cp311-cp311-linux_x86_64.whl"));
  EXPECT_TRUE(events_.said("not repaired: libfoo.so.1 is found nowhere"));
  EXPECT_FALSE(WheelStore(dir_.path / "cache").find(CacheKey::compute(outcome.plan.key_inputs())));
}

TEST_F(BuildSessionTest, AWheelThisMachineCouldNotRepairIsNotProvenWrong) {
  services_.repair_error = "auditwheel is not installed and --offline installs nothing";
  services_.repair_environment = true;
  auto asked = request("fixture");
  asked.setting_flags["portable"] = "true";
  auto outcome = build(asked);
  EXPECT_EQ(outcome.exit, ExitCode::environment);  // exit 3: nothing says the wheel is wrong
  EXPECT_FALSE(outcome.report.published);
  EXPECT_TRUE(outcome.report.quarantine);
  EXPECT_TRUE(events_.said("NOT PROVEN (--portable: this machine could not repair it)"));
}

TEST_F(BuildSessionTest, AHitBuildsNothing) {
  ASSERT_EQ(build(request("fixture")).exit, ExitCode::success);
  auto again = build(request("fixture"));
  EXPECT_EQ(again.exit, ExitCode::success);
  EXPECT_TRUE(again.report.cache_hit);
  EXPECT_EQ(services_.step.runs.size(), 1u);  // the first build only
  EXPECT_EQ(services_.validated.size(), 1u);
  EXPECT_TRUE(events_.said("cache: hit"));
  // --rebuild builds again under the same key
  auto rebuild = request("fixture");
  rebuild.rebuild = true;
  EXPECT_EQ(build(rebuild).exit, ExitCode::success);
  EXPECT_EQ(services_.step.runs.size(), 2u);
}

TEST_F(BuildSessionTest, AnInvalidWheelIsQuarantinedNotPublished) {
  services_.verdict = "invalid";
  auto outcome = build(request("fixture"));
  EXPECT_EQ(outcome.exit, ExitCode::work_failed);
  EXPECT_FALSE(outcome.report.published);
  ASSERT_TRUE(outcome.report.quarantine);
  EXPECT_TRUE(std::filesystem::is_directory(*outcome.report.quarantine));
  EXPECT_TRUE(WheelStore(dir_.path / "cache").entries().empty());
  EXPECT_TRUE(events_.said("FAILED: not published"));
}

TEST_F(BuildSessionTest, AWheelThisMachineCouldNotTestIsNotProven) {
  services_.verdict = "untestable";
  auto outcome = build(request("fixture"));
  EXPECT_EQ(outcome.exit, ExitCode::environment);
  EXPECT_TRUE(outcome.report.quarantine);
  EXPECT_TRUE(events_.said("NOT PROVEN"));
}

TEST_F(BuildSessionTest, AnInterruptedBuildPublishesNothing) {
  services_.step.interrupt = true;
  auto outcome = build(request("fixture"));
  EXPECT_EQ(outcome.exit, ExitCode::interrupted);
  EXPECT_TRUE(services_.validated.empty());
  EXPECT_TRUE(WheelStore(dir_.path / "cache").entries().empty());
  EXPECT_FALSE(outcome.report.published);
}

TEST_F(BuildSessionTest, ASignalDuringThePublishLeavesItPublishedAndExits130) {
  install_interrupt_exit();
  clear_pending_interrupt();
  {
    InterruptibleScope held;  // as while a build runs: the handler records the signal instead of exiting
    services_.signal_at_publish = true;
    auto outcome = build(request("fixture"));
    clear_pending_interrupt();
    EXPECT_EQ(outcome.exit, ExitCode::interrupted);
    EXPECT_TRUE(outcome.report.published);  // consistent: the entry and the index, not half of them
    EXPECT_EQ(WheelStore(dir_.path / "cache").entries().size(), 1u);
    EXPECT_TRUE(events_.said("interrupted after the publish completed"));
  }
}

TEST_F(BuildSessionTest, AMissingDependencyIsBuiltFirstWithNoneOfTheExtensionsOptions) {
  auto asked = request("companion");
  asked.env = {{"SECRET_TOKEN", "t"}};
  asked.no_validate = true;
  asked.test_command = "pytest -k cuda";
  auto outcome = build(asked);
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  ASSERT_EQ(services_.step.runs.size(), 2u);
  // fixture first, without the companion's --env; validated (its own request has no --no-validate)
  EXPECT_EQ(services_.step.runs[0].argv.at(1), "build-fixture.py");
  EXPECT_EQ(services_.step.runs[0].env.count("SECRET_TOKEN"), 0u);
  EXPECT_EQ(services_.step.runs[1].env.at("SECRET_TOKEN"), "t");
  EXPECT_EQ(services_.validated.size(), 1u);  // the dependency's wheel only: the companion said --no-validate
  // the companion built against the store's copy of the fixture, found through the index
  ASSERT_EQ(services_.dependency_wheels.size(), 1u);
  EXPECT_EQ(services_.dependency_wheels[0].filename(), "fixture-1.0+cu130.sm90-cp311-cp311-linux_x86_64.whl");
  EXPECT_NE(services_.dependency_wheels[0].string().find("/store/"), std::string::npos);
  EXPECT_EQ(outcome.plan.key.dependencies().count("fixture"), 1u);
  // and a second companion build finds the fixture in the cache: nothing more of it is built
  auto second = request("companion");
  second.env = {{"SECRET_TOKEN", "other"}};
  ASSERT_EQ(build(second).exit, ExitCode::success);
  EXPECT_EQ(services_.step.runs.size(), 3u);
}

TEST(DependencyRequest, NamesItsFieldsAndTakesNothingElseOfTheParents) {
  BuildRequest parent;
  parent.what = "torchvision";
  parent.cuda = "13.0";
  parent.mirrors = {"https://github.com/=file:///srv/git/"};
  parent.env = {{"TOKEN", "x"}};
  parent.patches = {"/tmp/fix.patch"};
  parent.no_validate = parent.rebuild = parent.keep_project_archs = parent.allow_network = true;
  parent.test_command = "pytest";
  parent.max_failed_tests = 3;
  parent.setting_flags = {{"cache_dir", "/c"}};
  ArchList archs = arch_list_of({{{9, 0}}});
  const auto intent = BuildIntent::of(parent);
  auto dependency = dependency_build_request(intent, "torch", archs, "2.9.1");
  EXPECT_EQ(dependency.what, "torch");
  ASSERT_TRUE(dependency.archs);
  EXPECT_EQ(dependency.archs->canonical(), "9.0");  // the list itself, never spelled and parsed again
  EXPECT_TRUE(dependency.arch.empty());
  EXPECT_EQ(dependency.ref, "v2.9.1");
  EXPECT_EQ(dependency.cuda, "13.0");
  EXPECT_EQ(dependency.mirrors, parent.mirrors);
  EXPECT_EQ(dependency.setting_flags, parent.setting_flags);
  EXPECT_TRUE(dependency.env.empty());
  EXPECT_TRUE(dependency.patches.empty());
  EXPECT_FALSE(dependency.no_validate || dependency.rebuild || dependency.keep_project_archs ||
               dependency.allow_network);
  EXPECT_TRUE(dependency.test_command.empty());
  EXPECT_FALSE(dependency.max_failed_tests);
  EXPECT_TRUE(dependency_build_request(intent, "torch", archs, "").ref.empty());
}

namespace {

// An `sccache` on PATH for the test (the launcher setting looks for one);
// it never runs: the fake services stand for archbuild's sccache server.
class SccacheOnPath {
 public:
  explicit SccacheOnPath(const std::filesystem::path& dir) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    write(dir / "sccache", "#!/bin/sh\nexit 1\n");
    std::filesystem::permissions(dir / "sccache", std::filesystem::perms::owner_all);
    setenv("PATH", (dir.string() + ":" + old_).c_str(), 1);
  }
  ~SccacheOnPath() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

}  // namespace

TEST_F(BuildSessionTest, ACompileClusterTakesTheCompilesAndLeavesTheKeyAsItWas) {
  SccacheOnPath sccache(dir_.path / "bin");
  auto local = request("fixture");
  local.setting_flags["compiler_launcher"] = "sccache";
  const auto alone = build(local);
  ASSERT_EQ(alone.exit, ExitCode::success) << alone.report.to_json().dump(2);
  EXPECT_TRUE(services_.cluster_requests.empty());
  EXPECT_EQ(alone.plan.jobs.jobs, 4u);

  auto& link = services_.cluster_link;
  link.scheduler_url = "http://10.0.0.5:10600";
  link.status = parse_dist_status(
      R"({"SchedulerStatus":["http://10.0.0.5:10600/",{"num_servers":11,"num_cpus":44,"in_progress":0}]})");
  link.distributing = true;
  link.trial = "a trial compile ran on 10.0.0.6:10501";
  link.port = 4321;
  link.config = dir_.path / "sccache-config";
  services_.cluster_counts = parse_sccache_stats(
      R"({"stats":{"compilations":12,"dist_compiles":{"10.0.0.6:10501":7,"10.0.0.7:10501":3},"dist_errors":0}})");
  auto spread = local;
  spread.setting_flags["compile_cluster"] = "http://10.0.0.5:10600";
  spread.rebuild = true;
  const auto outcome = build(spread);
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  ASSERT_EQ(services_.cluster_requests.size(), 1u);
  EXPECT_EQ(services_.cluster_requests[0].scheduler_url, "http://10.0.0.5:10600");
  EXPECT_EQ(services_.cluster_requests[0].state_dir, outcome.plan.out_dir / "sccache");
  // The same key: where compiles ran is not what the wheel is.
  EXPECT_EQ(outcome.plan.key_inputs(), alone.plan.key_inputs());
  // 4 cores + 44 on the cluster, bounded by 16 GiB / 0.5 GB for what stays here.
  EXPECT_EQ(outcome.plan.jobs.jobs, 32u) << outcome.plan.jobs.reason;
  // The build step's sccache clients reach archbuild's server, behind the step launcher.
  const auto& env = services_.step.runs.back().env;
  EXPECT_EQ(env.at("SCCACHE_SERVER_PORT"), "4321");
  EXPECT_EQ(env.at("SCCACHE_CONF"), (dir_.path / "sccache-config").string());
  EXPECT_TRUE(env.at("CMAKE_CUDA_COMPILER_LAUNCHER").ends_with(";sccache")) << env.at("CMAKE_CUDA_COMPILER_LAUNCHER");
  EXPECT_TRUE(env.at("CMAKE_CUDA_COMPILER_LAUNCHER").starts_with("/opt/archbuild/bin/archbuild;_launch"));
  EXPECT_FALSE(outcome.plan.network.offline);
  const auto& compiles = outcome.report.build.at("compile_cluster").at("compiles");
  EXPECT_EQ(compiles.at("on_cluster"), 10);
  EXPECT_EQ(compiles.at("local"), 2);
  EXPECT_TRUE(events_.said("cluster: compiles go to the cluster: 11 build servers, 44 cores"));
  EXPECT_TRUE(events_.said("cluster: compiles: 10 on the cluster"));

  // A cache hit compiles nothing: no server, no trial compile.
  auto again = spread;
  again.rebuild = false;
  EXPECT_TRUE(build(again).report.cache_hit);
  EXPECT_EQ(services_.cluster_requests.size(), 1u);

  // The scheduler down: compiles stay here, planned for this machine alone.
  link.distributing = false;
  link.status = parse_dist_status(R"({"NotConnected":["http://10.0.0.5:10600/","enabled, not connected"]})");
  link.why_local = link.status.describe();
  const auto fallback = build(spread);
  ASSERT_EQ(fallback.exit, ExitCode::success);
  EXPECT_EQ(fallback.plan.jobs.jobs, 4u);
  EXPECT_EQ(fallback.plan.key_inputs(), alone.plan.key_inputs());
  EXPECT_TRUE(events_.said("cluster: compiles stay on this machine: scheduler http://10.0.0.5:10600/ not reachable"));
}

TEST_F(BuildSessionTest, ACompileClusterSettingIsChecked) {
  SccacheOnPath sccache(dir_.path / "bin");
  auto cases = std::vector<std::pair<std::map<std::string, std::string>, std::string>>{
      {{{"compile_cluster", "http://10.0.0.5:10600"}}, "needs compiler_launcher = sccache"},
      {{{"compile_cluster", "10.0.0.5:10600"}, {"compiler_launcher", "sccache"}}, "expected the sccache-dist"},
      {{{"compile_cluster", "http://a b"}, {"compiler_launcher", "sccache"}}, "expected the sccache-dist"},
      {{{"compile_cluster_token_file", "/tmp/t"}, {"compiler_launcher", "sccache"}}, "compile_cluster is not"},
  };
  for (const auto& [flags, says] : cases) {
    auto bad = request("fixture");
    for (const auto& [key, value] : flags) bad.setting_flags[key] = value;
    try {
      build(bad);
      ADD_FAILURE() << says;
    } catch (const UserError& error) {
      EXPECT_EQ(error.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  }
  EXPECT_TRUE(services_.cluster_requests.empty());
}

TEST_F(BuildSessionTest, ACompilerThatLinksItsStaticCxxRuntimeGetsTheSharedOneOnTheLinkLine) {
  services_.runtime_link.static_by_default = true;
  services_.runtime_link.runtime = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
  services_.runtime_link.ldflags = {"-L/cache/cxx-runtime"};
  auto outcome = build(request("fixture"));
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  EXPECT_NE(services_.runtime_link_asked.find("cxx-runtime"), std::string::npos) << services_.runtime_link_asked;
  ASSERT_FALSE(services_.step.runs.empty());
  EXPECT_EQ(services_.step.runs[0].env.at("LDFLAGS"), "-L/cache/cxx-runtime");
  // a tree built before with the static runtime is configured afresh (CMake caches its linker flags)
  EXPECT_EQ(outcome.plan.configure.inputs.at("archbuild.cxx_runtime"), "-L/cache/cxx-runtime");
  // other binaries than the compiler's default: another key
  EXPECT_NE(outcome.plan.key_inputs().at("host_compiler").find("shared libstdc++ linked by archbuild"),
            std::string::npos);
  EXPECT_TRUE(events_.said("links libstdc++ statically; archbuild links the shared one"));
  EXPECT_NE(outcome.plan.to_json()["cxx_runtime"].get<std::string>().find("links libstdc++ statically"),
            std::string::npos);
}

TEST_F(BuildSessionTest, ACompilerThatLinksItsStaticCxxRuntimeAndCannotBeHelpedStopsBeforeTheBuild) {
  services_.runtime_link.static_by_default = true;
  services_.runtime_link.failure = "linking the shared one did not work";
  try {
    build(request("fixture"));
    ADD_FAILURE() << "a build went ahead";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), ExitCode::environment);
    EXPECT_NE(std::string(error.what()).find("links libstdc++ statically: linking the shared one did not work"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(services_.step.runs.empty());
}

TEST_F(BuildSessionTest, ACompilerThatLinksTheSharedCxxRuntimeChangesNothing) {
  auto outcome = build(request("fixture"));
  ASSERT_EQ(outcome.exit, ExitCode::success) << outcome.report.to_json().dump(2);
  ASSERT_FALSE(services_.step.runs.empty());
  EXPECT_EQ(services_.step.runs[0].env.count("LDFLAGS"), 0u);
  EXPECT_EQ(outcome.plan.configure.inputs.count("archbuild.cxx_runtime"), 0u);
  EXPECT_EQ(outcome.plan.key_inputs().at("host_compiler").find("libstdc++"), std::string::npos);
}
