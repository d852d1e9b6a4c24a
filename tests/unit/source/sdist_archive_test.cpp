#include "source/sdist_archive.h"

#include <sys/stat.h>

#include <cstring>
#include <functional>

#include <gtest/gtest.h>
#include <zip.h>
#include <zlib.h>

#include "core/error.h"
#include "test_support.h"

namespace archbuild {
namespace {

// ---- a small tar writer: ustar headers, pax records for long names ----

struct TarEntry {
  std::string name;
  char type = '0';
  std::string data;  // a file's bytes
  std::string link;  // a symlink's or hardlink's target
  unsigned mode = 0644;
};

// length - 1 octal digits and a NUL.
void put_octal(char* field, size_t length, uint64_t value) {
  for (size_t i = length - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
  field[length - 1] = '\0';
}

std::string header(const std::string& name, char type, uint64_t size, const std::string& link, unsigned mode) {
  std::string block(512, '\0');
  std::memcpy(block.data(), name.data(), std::min<size_t>(name.size(), 100));
  put_octal(block.data() + 100, 8, mode);
  put_octal(block.data() + 108, 8, 0);
  put_octal(block.data() + 116, 8, 0);
  put_octal(block.data() + 124, 12, size);
  put_octal(block.data() + 136, 12, 0);
  block[156] = type;
  std::memcpy(block.data() + 157, link.data(), std::min<size_t>(link.size(), 100));
  std::memcpy(block.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memset(block.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : block) sum += c;
  put_octal(block.data() + 148, 7, sum);
  return block;
}

std::string padded(const std::string& data) { return data + std::string((512 - data.size() % 512) % 512, '\0'); }

std::string pax_record(const std::string& key, const std::string& value) {
  std::string body = " " + key + "=" + value + "\n";
  size_t length = body.size() + 1;
  while (std::to_string(length).size() + body.size() != length) ++length;
  return std::to_string(length) + body;
}

std::string tar_bytes(const std::vector<TarEntry>& entries) {
  std::string out;
  for (const auto& entry : entries) {
    if (entry.name.size() > 100 || entry.link.size() > 100) {
      std::string records;
      if (entry.name.size() > 100) records += pax_record("path", entry.name);
      if (entry.link.size() > 100) records += pax_record("linkpath", entry.link);
      out += header("PaxHeader", 'x', records.size(), "", 0644) + padded(records);
    }
    out += header(entry.name, entry.type, entry.data.size(), entry.link, entry.mode) + padded(entry.data);
  }
  return out + std::string(1024, '\0');
}

void write_gzip(const std::filesystem::path& path, const std::string& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(gz);
}

std::filesystem::path make_sdist(const TempDir& dir, const std::vector<TarEntry>& entries,
                                 const std::string& name = "demo-1.0.tar.gz") {
  auto path = dir.path / name;
  write_gzip(path, tar_bytes(entries));
  return path;
}

ArchiveMember file(const std::string& name, const std::string& data = "x") {
  return {name, MemberKind::file, "", false, data.size(), ""};
}
ArchiveMember directory(const std::string& name) { return {name, MemberKind::directory, "", false, 0, ""}; }
ArchiveMember symlink(const std::string& name, const std::string& target) {
  return {name, MemberKind::symlink, "", false, 0, target};
}
ArchiveMember hardlink(const std::string& name, const std::string& target) {
  return {name, MemberKind::hardlink, "", false, 0, target};
}

std::vector<std::string> paths(const std::vector<SdistTreeEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& entry : entries) out.push_back(entry.path);
  return out;
}

// ---- reading archives ----

TEST(SdistArchive, ListsUstarPaxAndGnuLongNames) {
  TempDir dir;
  const std::string deep = "demo-1.0/" + std::string(120, 'd') + "/deep.py";
  std::string gnu_name = "demo-1.0/" + std::string(110, 'g') + ".txt";
  auto bytes = tar_bytes({{"demo-1.0/", '5'}, {"demo-1.0/setup.py", '0', "print(1)\n", "", 0755}, {deep, '0', "d"}});
  // A GNU long name ('L') before its member, as GNU tar writes it.
  std::string gnu = header("././@LongLink", 'L', gnu_name.size() + 1, "", 0644) + padded(gnu_name + '\0') +
                    header(gnu_name.substr(0, 100), '0', 1, "", 0644) + padded("g");
  bytes.insert(bytes.size() - 1024, gnu);
  auto path = dir.path / "demo-1.0.tar.gz";
  write_gzip(path, bytes);
  auto members = list_sdist_members(path);
  ASSERT_EQ(members.size(), 4u);
  EXPECT_EQ(members[0].kind, MemberKind::directory);
  EXPECT_EQ(members[1].name, "demo-1.0/setup.py");
  EXPECT_TRUE(members[1].executable);
  EXPECT_EQ(members[1].size, 9u);
  EXPECT_EQ(members[2].name, deep);
  EXPECT_EQ(members[3].name, gnu_name);
}

TEST(SdistArchive, ReadsAnUncompressedTar) {
  TempDir dir;
  auto path = dir.path / "demo-1.0.tar";
  write(path, tar_bytes({{"demo-1.0/a.py", '0', "a"}}));
  EXPECT_EQ(list_sdist_members(path).at(0).name, "demo-1.0/a.py");
}

TEST(SdistArchive, RefusesABadChecksumATruncatedArchiveAndAnUnknownFormat) {
  TempDir dir;
  auto bytes = tar_bytes({{"demo-1.0/a.py", '0', "aaaa"}});
  bytes[10] ^= 1;  // the name changes, the checksum no longer matches
  auto bad = dir.path / "bad-1.0.tar.gz";
  write_gzip(bad, bytes);
  EXPECT_NE(error_of([&] { list_sdist_members(bad); }).find("checksum"), std::string::npos);

  auto whole = tar_bytes({{"demo-1.0/a.py", '0', std::string(5000, 'a')}});
  auto truncated = dir.path / "short-1.0.tar.gz";
  write_gzip(truncated, whole.substr(0, 1500));
  EXPECT_NE(error_of([&] { list_sdist_members(truncated); }).find("ends in the middle"), std::string::npos);

  auto other = dir.path / "demo-1.0.tar.bz2";
  write(other, "BZh9");
  EXPECT_NE(error_of([&] { list_sdist_members(other); }).find("is not a .tar.gz"), std::string::npos);
}

TEST(SdistArchive, RefusesWhatGoesOverTheLimits) {
  TempDir dir;
  auto path = make_sdist(dir, {{"demo-1.0/a.bin", '0', std::string(4096, 'a')}, {"demo-1.0/b", '0', "b"}});
  SdistLimits small;
  small.max_unpacked_bytes = 2048;
  EXPECT_NE(error_of([&] { list_sdist_members(path, small); }).find("unpacks to more than 2048 bytes"),
            std::string::npos);
  SdistLimits one_member;
  one_member.max_members = 1;
  EXPECT_NE(error_of([&] { list_sdist_members(path, one_member); }).find("more than 1 members"), std::string::npos);
  SdistLimits small_files;
  small_files.max_member_bytes = 100;
  auto why = error_of([&] { list_sdist_members(path, small_files); });
  EXPECT_NE(why.find("member 'demo-1.0/a.bin' is 4096 bytes"), std::string::npos) << why;
}

TEST(SdistArchive, ListsDevicesFifosAndLinksAsTheyAre) {
  TempDir dir;
  auto path = make_sdist(dir, {{"demo-1.0/dev", '3'},
                               {"demo-1.0/pipe", '6'},
                               {"demo-1.0/l", '2', "", "x"},
                               {"demo-1.0/h", '1', "", "demo-1.0/x"}});
  auto members = list_sdist_members(path);
  ASSERT_EQ(members.size(), 4u);
  EXPECT_EQ(members[0].type, "character device");
  EXPECT_EQ(members[1].type, "fifo");
  EXPECT_EQ(members[2].kind, MemberKind::symlink);
  EXPECT_EQ(members[2].link_target, "x");
  EXPECT_EQ(members[3].kind, MemberKind::hardlink);
}

// ---- the checked tree ----

TEST(SdistTree, StripsTheOneTopDirectory) {
  auto tree = sdist_tree({directory("demo-1.0/"), file("demo-1.0/setup.py"), directory("./demo-1.0/pkg/"),
                          file("./demo-1.0/pkg/__init__.py")},
                         "demo-1.0.tar.gz");
  EXPECT_EQ(paths(tree), (std::vector<std::string>{"setup.py", "pkg/__init__.py"}));
  // Two top-level entries: nothing is stripped.
  auto flat = sdist_tree({file("setup.py"), file("pkg/__init__.py")}, "flat.tar.gz");
  EXPECT_EQ(paths(flat), (std::vector<std::string>{"setup.py", "pkg/__init__.py"}));
  // One top-level directory that is no NAME-VERSION/ (a flat sdist holding only its package): kept.
  auto package_only = sdist_tree({directory("mypkg/"), file("mypkg/__init__.py")}, "mypkg-1.0.tar.gz");
  EXPECT_EQ(paths(package_only), (std::vector<std::string>{"mypkg/__init__.py"}));
}

TEST(SdistTree, ATopDirectoryOfAnotherProjectIsRefused) {
  // The name as sdist builders spell it (Demo_Ext vs demo-ext, PEP 503) is the same project.
  auto spelled = sdist_tree({file("Demo_Ext-1.0/setup.py")}, "demo-ext-1.0.tar.gz");
  EXPECT_EQ(paths(spelled), (std::vector<std::string>{"setup.py"}));
  auto why = error_of([] { sdist_tree({file("something-else-9.9/setup.py")}, "mypkg-1.0.tar.gz"); });
  EXPECT_NE(why.find("member 'something-else-9.9/' is the sdist's single top-level directory, and it names the "
                     "project something-else, not mypkg"),
            std::string::npos)
      << why;
  // An archive whose own name says no project (renamed by hand) is taken as pip takes it: stripped.
  auto renamed = sdist_tree({file("something-else-9.9/setup.py")}, "download.tar.gz");
  EXPECT_EQ(paths(renamed), (std::vector<std::string>{"setup.py"}));
}

TEST(SdistTree, RefusesPathsThatLeaveTheTree) {
  const std::vector<std::pair<ArchiveMember, std::string>> cases = {
      {file("demo-1.0/../x"), "member 'demo-1.0/../x' climbs out with '..'"},
      {file("/etc/passwd"), "member '/etc/passwd' is an absolute path"},
      {file("demo-1.0/../.git/config"), "climbs out with '..'"},
      {file("demo-1.0/a\\b"), "holds a backslash"},
      {file("demo-1.0//a"), "is not normalised"},
      {file(std::string("demo-1.0/a\nb")), "member 'demo-1.0/a\\x0ab'"},
  };
  for (const auto& [member, expected] : cases) {
    auto why = error_of([&] { sdist_tree({file("demo-1.0/setup.py"), member}, "demo-1.0.tar.gz"); });
    EXPECT_NE(why.find(expected), std::string::npos) << why;
    EXPECT_NE(why.find("sdist demo-1.0.tar.gz"), std::string::npos) << why;
  }
}

TEST(SdistTree, LeavesOutVcsMetadataAndNamesIt) {
  // A vendored submodule leaves a 69-byte .git file; an sdist made from an hg
  // checkout may carry .hg/. Both are dropped, every other member kept.
  std::vector<std::string> dropped;
  auto tree = sdist_tree({file("demo-1.0/setup.py"), file("demo-1.0/third_party/glm/.git"),
                          file("demo-1.0/third_party/glm/glm.hpp"), directory("demo-1.0/.hg/"),
                          file("demo-1.0/.hg/store/data"), file("demo-1.0/.SVN/entries")},
                         "demo-1.0.tar.gz", &dropped);
  std::vector<std::string> paths;
  for (const auto& entry : tree) paths.push_back(entry.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"setup.py", "third_party/glm/glm.hpp"}));
  EXPECT_EQ(dropped, (std::vector<std::string>{"demo-1.0/third_party/glm/.git", "demo-1.0/.hg", "demo-1.0/.SVN"}));
  // What is dangerous stays refused, VCS metadata or not.
  auto why = error_of([&] { sdist_tree({file("demo-1.0/setup.py"), file("/abs/.git")}, "demo-1.0.tar.gz"); });
  EXPECT_NE(why.find("is an absolute path"), std::string::npos) << why;
  ArchiveMember device = file("demo-1.0/.git/dev");
  device.kind = MemberKind::unsupported;
  device.type = "character device";
  why = error_of([&] { sdist_tree({file("demo-1.0/setup.py"), device}, "demo-1.0.tar.gz"); });
  EXPECT_NE(why.find("character device"), std::string::npos) << why;
}

TEST(SdistTree, RefusesSymlinksThatLeadOut) {
  const std::vector<std::pair<ArchiveMember, std::string>> cases = {
      {symlink("demo-1.0/out", "/etc"), "target '/etc' is absolute"},
      {symlink("demo-1.0/out", "../../x"), "climbs out of the tree"},
      // Inside the archive, but above the stripped top directory.
      {symlink("demo-1.0/out", "../demo-1.0/setup.py"), "climbs out of the tree"},
      {symlink("demo-1.0/git", ".git/hooks"), "goes into .git"},
      // More than symlink(2) takes: refused as the archive's fault, not left to the checkout.
      {symlink("demo-1.0/long", std::string(6000, 'a')), "is 6000 bytes long; a symlink holds at most 4095 bytes"},
  };
  for (const auto& [member, expected] : cases) {
    auto why = error_of([&] { sdist_tree({file("demo-1.0/setup.py"), member}, "demo-1.0.tar.gz"); });
    EXPECT_NE(why.find(expected), std::string::npos) << why;
  }
  // d/up -> .. is inside; through it, d/up/.. would be above the top, which a lexical reading misses.
  auto why = error_of([&] {
    sdist_tree({file("demo-1.0/setup.py"), directory("demo-1.0/d"), symlink("demo-1.0/d/up", ".."),
                symlink("demo-1.0/escape", "d/up/..")},
               "demo-1.0.tar.gz");
  });
  EXPECT_NE(why.find("passes through the symlink 'd/up'"), std::string::npos) << why;
}

TEST(SdistTree, KeepsSymlinksInsideAndHardlinksToEarlierFiles) {
  auto tree = sdist_tree({file("demo-1.0/setup.py"), file("demo-1.0/src/a.cu"), symlink("demo-1.0/inc", "src"),
                          hardlink("demo-1.0/b.cu", "demo-1.0/src/a.cu")},
                         "demo-1.0.tar.gz");
  ASSERT_EQ(tree.size(), 4u);
  EXPECT_TRUE(tree[2].symlink);
  EXPECT_EQ(tree[2].link_target, "src");
  EXPECT_EQ(tree[3].path, "b.cu");
  EXPECT_EQ(tree[3].member, 1u);  // the data of src/a.cu
}

TEST(SdistTree, RefusesBadLinksDuplicatesAndDevices) {
  const std::vector<std::pair<std::vector<ArchiveMember>, std::string>> cases = {
      {{hardlink("demo-1.0/h", "/etc/shadow"), file("demo-1.0/a")}, "not an earlier file of the archive"},
      {{hardlink("demo-1.0/h", "demo-1.0/a"), file("demo-1.0/a")}, "not an earlier file of the archive"},
      {{file("demo-1.0/a"), file("demo-1.0/a")}, "appears twice in the archive"},
      {{file("demo-1.0/a"), symlink("demo-1.0/a", "b")}, "appears twice in the archive"},
      {{symlink("demo-1.0/lnk", "sub"), file("demo-1.0/lnk/x")}, "lies inside 'lnk', which is a symlink"},
      {{file("demo-1.0/f"), file("demo-1.0/f/x")}, "lies inside 'f', which is a file"},
      {{file("demo-1.0/a"), {"demo-1.0/dev", MemberKind::unsupported, "character device", false, 0, ""}},
       "member 'demo-1.0/dev' is a character device"},
      {{directory("demo-1.0/")}, "holds no files"},
  };
  for (const auto& [members, expected] : cases) {
    auto why = error_of([&] { sdist_tree(members, "demo-1.0.tar.gz"); });
    EXPECT_NE(why.find(expected), std::string::npos) << why;
  }
}

TEST(SdistTree, ChecksEveryNameAndTheTopDirectoryBeforeWhereThePathsLie) {
  // f/x lies inside the file f, but ../y comes later and is refused first: every name is read before the tree is.
  auto why = error_of([] {
    sdist_tree({file("demo-1.0/f"), file("demo-1.0/f/x"), file("demo-1.0/../y")}, "demo-1.0.tar.gz");
  });
  EXPECT_NE(why.find("member 'demo-1.0/../y' climbs out with '..'"), std::string::npos) << why;
  // The top directory of another project is refused before it, too.
  why = error_of([] { sdist_tree({file("other-1.0/f"), file("other-1.0/f/x")}, "demo-1.0.tar.gz"); });
  EXPECT_NE(why.find("member 'other-1.0/' is the sdist's single top-level directory"), std::string::npos) << why;
}

TEST(SdistTree, ARepeatedDirectoryIsOneAndMetadataIsNamedOnce) {
  std::vector<std::string> dropped;
  auto tree = sdist_tree({directory("demo-1.0/"), directory("demo-1.0/src/"), directory("./demo-1.0/src"),
                          file("demo-1.0/src/a.cu"), file("demo-1.0/.git/config"), file("demo-1.0/.git/HEAD")},
                         "demo-1.0.tar.gz", &dropped);
  EXPECT_EQ(paths(tree), (std::vector<std::string>{"src/a.cu"}));
  EXPECT_EQ(dropped, (std::vector<std::string>{"demo-1.0/.git"}));
  // A single top-level file is no directory to strip.
  EXPECT_EQ(paths(sdist_tree({file("demo-1.0")}, "demo-1.0.tar.gz")), (std::vector<std::string>{"demo-1.0"}));
}

// ---- written as git objects ----

struct BareRepo {
  TempDir dir;
  Repository repo;
  BareRepo() {
    ensure_libgit2();
    git_repository* raw = nullptr;
    EXPECT_EQ(git_repository_init(&raw, (dir.path / "r.git").c_str(), 1), 0);
    repo.reset(raw);
  }
  std::string blob_text(const git_oid& tree_id, const std::string& path, git_filemode_t* mode = nullptr) {
    git_tree* tree = nullptr;
    EXPECT_EQ(git_tree_lookup(&tree, repo.get(), &tree_id), 0);
    GitTree tree_holder(tree);
    git_tree_entry* entry = nullptr;
    if (git_tree_entry_bypath(&entry, tree, path.c_str()) != 0) return "<missing>";
    if (mode) *mode = git_tree_entry_filemode(entry);
    git_blob* blob = nullptr;
    EXPECT_EQ(git_blob_lookup(&blob, repo.get(), git_tree_entry_id(entry)), 0);
    std::string text(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob));
    git_blob_free(blob);
    git_tree_entry_free(entry);
    return text;
  }
};

TEST(SdistTree, WritesFilesModesSymlinksAndHardlinksAsGitObjects) {
  TempDir dir;
  auto path = make_sdist(dir, {{"demo-1.0/", '5'},
                               {"demo-1.0/setup.py", '0', "setup()\n", "", 0755},
                               {"demo-1.0/src/k.cu", '0', "__global__ void k() {}\n"},
                               {"demo-1.0/include", '2', "", "src"},
                               {"demo-1.0/copy.cu", '1', "", "demo-1.0/src/k.cu"}});
  auto members = list_sdist_members(path);
  auto entries = sdist_tree(members, path.filename().string());
  BareRepo bare;
  git_oid tree = write_sdist_tree(bare.repo.get(), path, members, entries);
  git_filemode_t mode{};
  EXPECT_EQ(bare.blob_text(tree, "setup.py", &mode), "setup()\n");
  EXPECT_EQ(mode, GIT_FILEMODE_BLOB_EXECUTABLE);
  EXPECT_EQ(bare.blob_text(tree, "src/k.cu", &mode), "__global__ void k() {}\n");
  EXPECT_EQ(mode, GIT_FILEMODE_BLOB);
  EXPECT_EQ(bare.blob_text(tree, "include", &mode), "src");
  EXPECT_EQ(mode, GIT_FILEMODE_LINK);
  EXPECT_EQ(bare.blob_text(tree, "copy.cu"), "__global__ void k() {}\n");
  EXPECT_EQ(bare.blob_text(tree, "demo-1.0/setup.py"), "<missing>");

  // An archive that no longer holds what was checked is not written.
  write_gzip(path, tar_bytes({{"demo-1.0/setup.py", '0', "other()\n"}}));
  auto why = error_of([&] { write_sdist_tree(bare.repo.get(), path, members, entries); });
  EXPECT_NE(why.find("changed while archbuild read it"), std::string::npos) << why;
}

// ---- zip sdists ----

void add_zip_member(zip_t* archive, const std::string& name, const std::string& data, uint32_t mode) {
  zip_source_t* source = zip_source_buffer(archive, strdup(data.c_str()), data.size(), 1);
  zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
  ASSERT_GE(index, 0);
  ASSERT_EQ(zip_file_set_external_attributes(archive, index, 0, ZIP_OPSYS_UNIX, mode << 16), 0);
}

struct ZipEntry {
  std::string name, data;
  uint32_t mode;
};

std::filesystem::path make_zip(const std::filesystem::path& path, const std::vector<ZipEntry>& entries) {
  std::filesystem::create_directories(path.parent_path());
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  EXPECT_NE(archive, nullptr);
  for (const auto& entry : entries) add_zip_member(archive, entry.name, entry.data, entry.mode);
  EXPECT_EQ(zip_close(archive), 0);
  return path;
}

TEST(SdistArchive, ReadsZipSdistsWithUnixModes) {
  TempDir dir;
  const std::vector<ZipEntry> good = {{"demo-1.0/setup.py", "setup()\n", S_IFREG | 0755},
                                      {"demo-1.0/inc", "src", S_IFLNK | 0777}};
  auto path = make_zip(dir.path / "demo-1.0.zip", good);
  auto members = list_sdist_members(path);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_TRUE(members[0].executable);
  EXPECT_EQ(members[0].size, 8u);
  EXPECT_EQ(members[1].kind, MemberKind::symlink);
  EXPECT_EQ(members[1].link_target, "src");
  auto entries = sdist_tree(members, path.filename().string());
  BareRepo bare;
  git_oid tree = write_sdist_tree(bare.repo.get(), path, members, entries);
  EXPECT_EQ(bare.blob_text(tree, "setup.py"), "setup()\n");

  auto hostile = good;
  hostile.push_back({"demo-1.0/out", "../../etc", S_IFLNK | 0777});
  auto bad = make_zip(dir.path / "bad" / "demo-1.0.zip", hostile);
  auto why = error_of([&] { sdist_tree(list_sdist_members(bad), "demo-1.0.zip"); });
  EXPECT_NE(why.find("member 'demo-1.0/out' is a symlink whose target '../../etc' climbs out"), std::string::npos)
      << why;
  hostile.back() = {"demo-1.0/dev", "", S_IFCHR | 0600};
  why = error_of(
      [&] { sdist_tree(list_sdist_members(make_zip(dir.path / "dev" / "demo-1.0.zip", hostile)), "demo-1.0.zip"); });
  EXPECT_NE(why.find("member 'demo-1.0/dev' is a character device"), std::string::npos) << why;
}

}  // namespace
}  // namespace archbuild
