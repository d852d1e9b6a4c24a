#include "toolchain/cxx_runtime_link.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "binary/byte_view.h"
#include "binary/elf_file.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "test_support.h"

using namespace archbuild;

namespace {

// A compiler as some toolchains ship it: its own lib dir, searched after
// the caller's -L dirs, holds only the static libstdc++.
std::string static_runtime_compiler(const std::filesystem::path& dir, const std::string& extra = "") {
  const auto archive = trim(run_process({"g++", "-print-file-name=libstdc++.a"}).out);
  std::filesystem::create_directories(dir / "lib");
  std::filesystem::create_symlink(archive, dir / "lib" / "libstdc++.a");
  const auto compiler = dir / "g++";
  write(compiler, "#!/bin/sh\nexec g++ " + extra + " \"$@\" -L" + (dir / "lib").string() + "\n");
  std::filesystem::permissions(compiler, std::filesystem::perms::owner_all);
  return compiler.string();
}

std::vector<std::string> needed_of(const std::filesystem::path& library) {
  std::string bytes;
  EXPECT_EQ(read_regular_file(library, 64 << 20, bytes), "");
  const ByteView view(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  return elf_needed_libraries(view, read_elf(view));
}

}  // namespace

TEST(CxxRuntimeLink, ReadsTheLibrariesAnElfFileNeeds) {
  TempDir dir;
  write(dir.path / "a.cpp", "#include <string>\nextern \"C\" int f() { return std::to_string(7).size(); }\n");
  ASSERT_TRUE(
      run_process({"g++", "-shared", "-fPIC", (dir.path / "a.cpp").string(), "-o", (dir.path / "a.so").string()})
          .succeeded());
  const auto needed = needed_of(dir.path / "a.so");
  EXPECT_TRUE(needs_shared_cxx_runtime(needed)) << testing::PrintToString(needed);
  ASSERT_TRUE(run_process({"g++", "-shared", "-fPIC", "-static-libstdc++", (dir.path / "a.cpp").string(), "-o",
                           (dir.path / "b.so").string()})
                  .succeeded());
  EXPECT_FALSE(needs_shared_cxx_runtime(needed_of(dir.path / "b.so")));
}

TEST(CxxRuntimeLink, TheSystemCompilerLinksTheSharedRuntimeAndNeedsNothing) {
  TempDir dir;
  const auto link = probe_cxx_runtime_link("g++", dir.path / "links");
  ASSERT_TRUE(link.probed) << link.not_probed;
  EXPECT_FALSE(link.static_by_default);
  EXPECT_TRUE(link.ldflags.empty());
  EXPECT_FALSE(link.remedied());
  EXPECT_NE(link.summary().find("links the shared C++ runtime"), std::string::npos) << link.summary();
}

TEST(CxxRuntimeLink, ACompilerWithOnlyTheStaticRuntimeGetsTheSharedOneFromTheLibraryPath) {
  TempDir dir;
  const auto compiler = static_runtime_compiler(dir.path / "cc");
  const auto links = dir.path / "links";
  const auto link = probe_cxx_runtime_link(compiler, links);
  ASSERT_TRUE(link.probed) << link.not_probed;
  EXPECT_TRUE(link.static_by_default);
  ASSERT_TRUE(link.remedied()) << link.summary();
  ASSERT_EQ(link.ldflags.size(), 1u);
  const std::filesystem::path own_dir = link.ldflags[0].substr(2);
  EXPECT_EQ(own_dir.parent_path(), links);                              // a dir per machine and runtime
  const auto triplet = trim(run_process({"g++", "-dumpmachine"}).out);  // the machine g++ links for
  EXPECT_EQ(own_dir.filename().string().rfind(triplet + "-", 0), 0u) << own_dir;
  EXPECT_EQ(std::filesystem::read_symlink(own_dir / "libstdc++.so"), link.runtime);
  // The flags do what the probe says: a library linked with them needs the shared runtime.
  write(dir.path / "x.cpp", "#include <stdexcept>\nvoid f() { throw std::runtime_error(\"x\"); }\n");
  ASSERT_TRUE(run_process({compiler, "-shared", "-fPIC", link.ldflags[0], (dir.path / "x.cpp").string(), "-o",
                           (dir.path / "x.so").string()})
                  .succeeded());
  EXPECT_TRUE(needs_shared_cxx_runtime(needed_of(dir.path / "x.so")));
  EXPECT_NE(link.summary().find("links libstdc++ statically; archbuild links the shared one"), std::string::npos);
  // Asked again (a second build), the link is replaced in place.
  EXPECT_TRUE(probe_cxx_runtime_link(compiler, links).remedied());
}

TEST(CxxRuntimeLink, ACompilerThatInsistsOnItsStaticCopyGetsTheSharedOneNamed) {
  TempDir dir;
  const auto compiler = static_runtime_compiler(dir.path / "cc", "-static-libstdc++");
  const auto link = probe_cxx_runtime_link(compiler, dir.path / "links");
  ASSERT_TRUE(link.probed) << link.not_probed;
  ASSERT_TRUE(link.remedied()) << link.summary();
  EXPECT_EQ(link.ldflags.size(), 4u);
  EXPECT_EQ(link.ldflags[2], "-lstdc++");
}

TEST(CxxRuntimeLink, ACompilerOfSeveralWordsIsRunAsThemAndOneNotFoundIsNotJudged) {
  TempDir dir;
  const auto link = probe_cxx_runtime_link("env g++", dir.path / "links");  // as setuptools splits $CXX
  ASSERT_TRUE(link.probed) << link.not_probed;
  EXPECT_FALSE(link.static_by_default);
  const auto missing = probe_cxx_runtime_link("/nonexistent/g++", dir.path / "links");
  EXPECT_FALSE(missing.probed);
  EXPECT_NE(missing.not_probed.find("/nonexistent/g++"), std::string::npos) << missing.not_probed;
  EXPECT_FALSE(probe_cxx_runtime_link("g++ 'unterminated", dir.path / "links").probed);
}

TEST(CxxRuntimeLink, ACompilerThatCannotLinkIsNotJudged) {
  TempDir dir;
  write(dir.path / "cc", "#!/bin/sh\necho 'cc: fatal error: no input files' >&2\nexit 1\n");
  std::filesystem::permissions(dir.path / "cc", std::filesystem::perms::owner_all);
  const auto link = probe_cxx_runtime_link((dir.path / "cc").string(), dir.path / "links");
  EXPECT_FALSE(link.probed);
  EXPECT_TRUE(link.failure.empty());
  EXPECT_NE(link.not_probed.find("no input files"), std::string::npos) << link.not_probed;
  EXPECT_NE(link.summary().find("is not known"), std::string::npos);
}
