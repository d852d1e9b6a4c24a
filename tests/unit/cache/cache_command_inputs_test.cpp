#include "cache/cache_command_inputs.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/ed25519.h"
#include "test_support.h"

using namespace archbuild;

TEST(CacheCommandInputs, AKeyTextComesFromAFileOrABuildDir) {
  TempDir dir("archbuild-cache-inputs");
  write(dir.path / "out" / "key.txt", "cache_format 2\nref v1\n");
  write(dir.path / "other.txt", "cache_format 2\nref v2\n");
  EXPECT_EQ(read_key_text_at((dir.path / "out").string()), "cache_format 2\nref v1\n");
  EXPECT_EQ(read_key_text_at((dir.path / "other.txt").string()), "cache_format 2\nref v2\n");

  const auto missing = dir.path / "nothing";
  EXPECT_EQ(error_of([&] { read_key_text_at(missing.string()); }),
            "no cache key text at " + missing.string() + " (give a key.txt or a build's --out dir)");
  write(dir.path / "notes.txt", "ref v1\n");
  EXPECT_EQ(error_of([&] { read_key_text_at((dir.path / "notes.txt").string()); }),
            (dir.path / "notes.txt").string() + " is not an archbuild key text");
  // A build dir whose key.txt is a directory.
  std::filesystem::create_directories(dir.path / "odd" / "key.txt");
  EXPECT_EQ(error_of([&] { read_key_text_at((dir.path / "odd").string()); }),
            (dir.path / "odd" / "key.txt").string() + " is not a regular file (a key text is)");
}

TEST(CacheCommandInputs, APushDirectoryIsGivenAndIsNoFile) {
  TempDir dir("archbuild-cache-inputs");
  EXPECT_EQ(error_of([] { push_directory(""); }), "cache push: give the destination directory");
  write(dir.path / "file", "x");
  EXPECT_EQ(error_of([&] { push_directory((dir.path / "file").string()); }),
            "cache push: " + (dir.path / "file").string() + " is not a directory");
  EXPECT_EQ(push_directory((dir.path / "new").string()), dir.path / "new");  // made by the push
  EXPECT_EQ(push_directory(dir.path.string()), dir.path);
  EXPECT_EQ(code_of([] { push_directory(std::string(5000, 'a')); }), ExitCode::bad_input);  // over NAME_MAX
}

TEST(CacheCommandInputs, AnIndexGoesUnderTheWheelsUnlessNamedAndNeverThroughTheirLink) {
  TempDir dir("archbuild-cache-inputs");
  const auto wheels = dir.path / "wheels";
  std::filesystem::create_directories(wheels);
  auto place = simple_index_place(wheels.string(), "");
  EXPECT_EQ(place.wheels, wheels);
  EXPECT_EQ(place.index, wheels / "simple");
  place = simple_index_place(wheels.string(), (dir.path / "pages").string());
  EXPECT_EQ(place.index, dir.path / "pages");

  std::filesystem::create_directories(dir.path / "elsewhere");
  std::filesystem::create_directory_symlink(dir.path / "elsewhere", wheels / "simple");
  EXPECT_EQ(error_of([&] { simple_index_place(wheels.string(), ""); }),
            (wheels / "simple").string() +
                " is a symbolic link: archbuild follows no link below WHEELS (name the index dir with --index DIR)");
  // A link the user names with --index is theirs to give.
  EXPECT_EQ(simple_index_place(wheels.string(), (wheels / "simple").string()).index, wheels / "simple");
}

TEST(CacheCommandInputs, TrustedKeysAreReadInOrderAndABadOneIsNamed) {
  TempDir dir("archbuild-cache-inputs");
  Ed25519Key::generate(dir.path / "a.key");
  Ed25519Key::generate(dir.path / "b.key");
  const auto keys = read_trusted_keys({(dir.path / "b.key.pub").string(), (dir.path / "a.key.pub").string()});
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].key_id(), Ed25519Key::load_private(dir.path / "b.key").key_id());
  EXPECT_EQ(keys[1].key_id(), Ed25519Key::load_private(dir.path / "a.key").key_id());
  EXPECT_TRUE(read_trusted_keys({}).empty());

  const auto missing = (dir.path / "none.pub").string();
  const auto why = error_of([&] { read_trusted_keys({missing}); });
  EXPECT_TRUE(why.starts_with("--trusted-key " + missing + " cannot be opened")) << why;
  write(dir.path / "junk.pub", "not a key");
  const auto junk = (dir.path / "junk.pub").string();
  EXPECT_EQ(error_of([&] { read_trusted_keys({junk}); }),
            "--trusted-key " + junk + " is not an ed25519 public key in PEM");
}
