#include "recipe/recipe.h"

#include <tuple>

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"

namespace archbuild {
namespace {

const std::filesystem::path kSourceData = ARCHBUILD_SOURCE_DIR;
const RecipeDir kBuiltIn{kSourceData / "recipes", kSourceData / "patches", "built-in"};

void write_recipe(const std::filesystem::path& dir, const std::string& name, const std::string& extra = "") {
  write(dir / (name + ".toml"), "name = \"" + name + "\"\ndescription = \"site " + name +
                                    "\"\narch_dialect = \"extension\"\n" + extra +
                                    "\n[[build]]\nversions = \"*\"\nsystem = \"setup.py\"\n"
                                    "command = [\"{python}\", \"setup.py\", \"bdist_wheel\"]\n");
}

TEST(RecipeBook, TheFirstDirOnTheSearchPathWinsAndShadowsTheRest) {
  TempDir first, second;
  write_recipe(first.path, "torch", "repository = \"https://github.com/me/pytorch\"\ndefault_ref = \"mine\"");
  write_recipe(second.path, "torch", "repository = \"https://github.com/other/pytorch\"\ndefault_ref = \"x\"");
  write_recipe(second.path, "site-only");
  auto book = RecipeBook::load_search_path(
      {{first.path, first.path / "patches", "recipe_path (env ARCHBUILD_RECIPE_PATH)"},
       {second.path, second.path / "patches", "recipe_path (env ARCHBUILD_RECIPE_PATH)"},
       kBuiltIn});
  const Recipe* torch = book.find("torch");
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->default_ref, "mine");
  EXPECT_EQ(torch->file, first.path / "torch.toml");
  EXPECT_EQ(torch->origin, "recipe_path (env ARCHBUILD_RECIPE_PATH)");
  EXPECT_EQ(torch->shadows,
            (std::vector<std::filesystem::path>{second.path / "torch.toml", kSourceData / "recipes" / "torch.toml"}));
  ASSERT_NE(book.find("site-only"), nullptr);
  ASSERT_NE(book.find("torchvision"), nullptr);
  EXPECT_EQ(book.find("torchvision")->origin, "built-in");
  EXPECT_TRUE(book.find("torchvision")->shadows.empty());
  // torchvision (built-in) depends on torch: the site one now.
  EXPECT_EQ(book.find(book.find("torchvision")->depends_on.at(0))->file, first.path / "torch.toml");
}

TEST(RecipeBook, ASiteRecipesPatchesAndKernelTestLiveBesideIt) {
  TempDir site;
  write(site.path / "patches" / "fix.patch", "diff --git a/x b/x\n");
  write(site.path / "tests" / "mine.py", "print('ok')\n");
  write_recipe(site.path, "ext-a",
               "repository = \"https://example.invalid/a\"\ndefault_ref = \"v1.0\"\nkernel_test = \"tests/mine.py\"\n"
               "[[patches]]\nversions = \"*\"\nfiles = [\"fix.patch\"]");
  // The shipped scripts can be named too: not beside it, so in the data dir.
  write_recipe(site.path, "ext-b", "kernel_test = \"recipes/tests/extension_import.py\"");
  auto book = RecipeBook::load_search_path(
      {{site.path, site.path / "patches", "recipe_path (--recipe-path)"}, kBuiltIn});
  const Recipe* a = book.find("ext-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kernel_test, (site.path / "tests" / "mine.py").string());
  EXPECT_EQ(book.resolve(*a, "v1.0").patch_files,
            std::vector<std::filesystem::path>{site.path / "patches" / "fix.patch"});
  EXPECT_EQ(book.find("ext-b")->kernel_test, (kSourceData / "recipes" / "tests" / "extension_import.py").string());
  // The built-in ones keep theirs, relative to the data dir.
  EXPECT_EQ(book.find("torch")->kernel_test, "recipes/tests/torch_kernels.py");

  write_recipe(site.path, "ext-c", "[[patches]]\nversions = \"*\"\nfiles = [\"missing.patch\"]");
  auto why = error_of([&] { RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}); });
  EXPECT_NE(why.find("patch 'missing.patch' not found in " + (site.path / "patches").string()), std::string::npos)
      << why;
  // Absolute paths and '..' would reach anything on the machine: refused, naming the key.
  for (const auto& [body, expected] : std::vector<std::pair<std::string, std::string>>{
           {"kernel_test = \"/etc/passwd\"", "key 'kernel_test': '/etc/passwd' is an absolute path"},
           {"kernel_test = \"../outside.py\"", "key 'kernel_test': '../outside.py' climbs out with '..'"},
           {"[[patches]]\nversions = \"*\"\nfiles = [\"/etc/passwd\"]", "'/etc/passwd' is an absolute path"}}) {
    write_recipe(site.path, "ext-c", body);
    why = error_of([&] { RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}); });
    EXPECT_NE(why.find(expected), std::string::npos) << why;
  }
}

TEST(RecipeBook, ABadDirNamesItsOriginAndABadRecipeItsFile) {
  auto why = error_of([&] {
    RecipeBook::load_search_path(
        {{"/nonexistent/recipes", "/nonexistent/recipes/patches", "recipe_path (--recipe-path)"}, kBuiltIn});
  });
  EXPECT_NE(why.find("recipe dir /nonexistent/recipes (from recipe_path (--recipe-path)) is not a directory"),
            std::string::npos)
      << why;
  TempDir site;
  write(site.path / "broken.toml", "name = \"broken\"\nbogus = 1\n");
  why = error_of([&] { RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}); });
  EXPECT_NE(why.find((site.path / "broken.toml").string() + ":2: key 'bogus': unknown key"), std::string::npos) << why;
  write(site.path / "broken.toml", "");
  write_recipe(site.path, "broken", "repository = \"pypi:not a name\"\ndefault_ref = \"1.0\"");
  why = error_of([&] { RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}); });
  EXPECT_NE(why.find("pypi:NAME needs a valid project name"), std::string::npos) << why;
}

TEST(RecipeBook, FindsTheRecipeOfARepositoryUrl) {
  TempDir site;
  write_recipe(site.path, "tiny-sdist", "repository = \"pypi:Tiny_Kernels\"\ndefault_ref = \"2.1.2\"");
  auto book = RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn});
  for (const std::string url : {"https://github.com/pytorch/vision", "git@github.com:pytorch/vision.git",
                                "http://GITHUB.com/pytorch/vision/"}) {
    const Recipe* found = book.find_by_repository(url);
    ASSERT_NE(found, nullptr) << url;
    EXPECT_EQ(found->name, "torchvision");
  }
  ASSERT_NE(book.find_by_repository("pypi:tiny-kernels"), nullptr);  // PEP 503's spelling matches
  EXPECT_EQ(book.find_by_repository("pypi:tiny-kernels")->name, "tiny-sdist");
  EXPECT_EQ(book.find_by_repository("https://github.com/someone/else"), nullptr);
  EXPECT_EQ(book.find_by_repository(""), nullptr);

  // Two recipes of one repository: neither is picked by itself.
  write_recipe(site.path, "vision-fork", "repository = \"https://github.com/pytorch/vision.git\"\ndefault_ref = \"x\"");
  auto both = RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn});
  EXPECT_EQ(both.find_by_repository("https://github.com/pytorch/vision"), nullptr);
}

TEST(RecipeBook, FindsTheRecipeOfAPypiProjectByItsPypiKeyOrRepository) {
  TempDir site;
  write_recipe(site.path, "demo-git",
               "pypi = \"Demo_Kernels\"\nrepository = \"https://git.example.invalid/org/demo\"\ndefault_ref = \"v1\"");
  write_recipe(site.path, "tiny-sdist", "repository = \"pypi:Tiny_Kernels\"\ndefault_ref = \"2.1.2\"");
  auto book = RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn});
  ASSERT_NE(book.find("demo-git"), nullptr);
  EXPECT_EQ(book.find("demo-git")->pypi_name, "demo-kernels");  // PEP 503's spelling
  for (const std::string name : {"demo-kernels", "Demo.Kernels", "demo_kernels"}) {
    ASSERT_NE(book.find_by_pypi_name(name), nullptr) << name;
    EXPECT_EQ(book.find_by_pypi_name(name)->name, "demo-git");
  }
  ASSERT_NE(book.find_by_pypi_name("tiny-kernels"), nullptr);
  EXPECT_EQ(book.find_by_pypi_name("tiny-kernels")->name, "tiny-sdist");
  ASSERT_NE(book.find_by_pypi_name("torch_scatter"), nullptr);  // a shipped recipe's pypi key
  EXPECT_EQ(book.find_by_pypi_name("torch_scatter")->name, "pytorch-scatter");
  EXPECT_EQ(book.find_by_pypi_name("unknown-project"), nullptr);
  // the PyPI name is no repository: a URL does not match it
  EXPECT_EQ(book.find_by_repository("pypi:demo-kernels"), nullptr);
  // two recipes of one project: neither is picked by itself
  write_recipe(site.path, "demo-sdist", "repository = \"pypi:demo-kernels\"\ndefault_ref = \"1.0\"");
  auto both = RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn});
  EXPECT_EQ(both.find_by_pypi_name("demo-kernels"), nullptr);
}

TEST(RecipeBook, AKindOrPypiNameThatIsWrongIsRefusedNamingTheLine) {
  TempDir site;
  write_recipe(site.path, "bad-kind", "kind = \"gpu-stuff\"");
  try {
    RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}});
    ADD_FAILURE() << "loaded a recipe of an unknown kind";
  } catch (const UserError& error) {
    EXPECT_NE(
        std::string(error.what()).find("bad-kind.toml:4: key 'kind': 'gpu-stuff' is not a kind (one of: pytorch, "),
        std::string::npos)
        << error.what();
  }
  std::filesystem::remove(site.path / "bad-kind.toml");
  write_recipe(site.path, "bad-pypi", "pypi = \"not a name\"");
  try {
    RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}});
    ADD_FAILURE() << "loaded a recipe with a bad pypi name";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("key 'pypi': 'not a name' is not a valid PyPI project name"),
              std::string::npos)
        << error.what();
  }
  // no kind: "other", listed last
  std::filesystem::remove(site.path / "bad-pypi.toml");
  write_recipe(site.path, "plain");
  auto book = RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}});
  EXPECT_EQ(book.find("plain")->kind, "other");
}

TEST(ShippedRecipes, EachHasAKindADescriptionAndAKernelTestThatExists) {
  auto book = RecipeBook::load(kSourceData / "recipes", kSourceData / "patches");
  for (const auto& recipe : book.all()) {
    SCOPED_TRACE(recipe.name);
    EXPECT_NE(recipe.kind, "other") << "a shipped recipe says its kind";
    EXPECT_FALSE(recipe.description.empty());
    if (recipe.repository.empty()) continue;  // the generic recipe and the demo: the user's project
    ASSERT_FALSE(recipe.kernel_test.empty()) << "a catalogued project is proven by a kernel test";
    EXPECT_TRUE(std::filesystem::is_regular_file(kSourceData / recipe.kernel_test)) << recipe.kernel_test;
  }
}

// Each recipe's `verified` agrees with its row in docs/RECIPES.md's table: the
// doc's "Verified on the H200" and the file's key come from the same GPU run.
TEST(ShippedRecipes, VerifiedAgreesWithTheDocsTable) {
  auto book = RecipeBook::load(kSourceData / "recipes", kSourceData / "patches");
  const auto docs = read(kSourceData / "docs" / "RECIPES.md");
  for (const auto& recipe : book.all()) {
    if (recipe.repository.empty()) continue;
    SCOPED_TRACE(recipe.name);
    const auto start = docs.find("\n| `" + recipe.name + "` |");
    ASSERT_NE(start, std::string::npos) << "no row in docs/RECIPES.md's table";
    const auto row = docs.substr(start + 1, docs.find('\n', start + 1) - start - 1);
    const bool documented = row.find("Verified on the H200") != std::string::npos ||
                            row.find("Built and tested on an H200") != std::string::npos;
    EXPECT_EQ(!recipe.verified.empty(), documented) << row;
    if (!recipe.verified.empty()) {
      EXPECT_NE(recipe.verified.find("H200"), std::string::npos) << recipe.verified;
    }
  }
}

TEST(RecipeBook, AVerifiedRecipeSaysWhereAndHasAKernelTest) {
  TempDir site;
  auto load = [&] { return RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}); };
  write_recipe(site.path, "proven",
               "kernel_test = \"recipes/tests/extension_import.py\"\nverified = \"H200 (9.0), 2026-12-05\"\n");
  EXPECT_EQ(load().find("proven")->verified, "H200 (9.0), 2026-12-05");
  write_recipe(site.path, "proven", "kernel_test = \"recipes/tests/extension_import.py\"\nverified = \" \"\n");
  EXPECT_NE(error_of(load).find("key 'verified': is empty"), std::string::npos) << error_of(load);
  write_recipe(site.path, "proven", "verified = \"H200\"\n");
  EXPECT_NE(error_of(load).find("key 'verified': needs a kernel_test"), std::string::npos) << error_of(load);
}

TEST(RecipeBook, EntriesForAnotherHostsCpuAreLeftOut) {
  TempDir site;
  write_recipe(site.path, "ext",
               "[[env]]\nset = { ALL = \"1\" }\n[[env]]\nmachine = \"aarch64\"\nset = { ARM = \"1\" }\n"
               "[[system_library]]\nmachine = \"aarch64\"\nname = \"NVPL\"\nheader = \"nvpl_blas.h\"\n"
               "library = \"libnvpl_blas_lp64_gomp.so\"\n");
  for (const auto& [machine, overlays, libraries] :
       std::vector<std::tuple<std::string, size_t, size_t>>{{"x86_64", 1, 0}, {"aarch64", 2, 1}}) {
    auto book = RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}, machine);
    EXPECT_EQ(book.find("ext")->env_overlays.size(), overlays) << machine;
    EXPECT_EQ(book.find("ext")->system_libraries.size(), libraries) << machine;
  }
}

TEST(RecipeBook, EnvRowsAndPairsAreCheckedOnLoad) {
  TempDir site;
  auto load = [&] { return RecipeBook::load_search_path({{site.path, site.path / "patches", "x"}, kBuiltIn}); };
  write_recipe(site.path, "companion",
               "depends_on = [\"torch\"]\n[[env]]\ncuda = \">=13\"\nset = { FLAGS = \"-x\" }\n"
               "[[pairs]]\nversions = \"==1.0\"\ntorch = \"2.9.1\"\n");
  auto book = load();
  const auto* companion = book.find("companion");
  ASSERT_TRUE(companion);
  ASSERT_EQ(companion->env_overlays.size(), 1u);
  EXPECT_EQ(companion->env_overlays[0].set.at("FLAGS"), "-x");
  EXPECT_EQ(book.resolve(*companion, "v1.0").pinned.at("torch"), "2.9.1");
  EXPECT_TRUE(book.resolve(*companion, "v1.1").pinned.empty());
  for (const auto& [extra, why] : std::vector<std::pair<std::string, std::string>>{
           {"[[pairs]]\nversions = \"*\"\ntorchvision = \"1.0\"\n", "key 'pairs.torchvision': names no recipe"},
           {"depends_on = [\"torch\"]\n[[pairs]]\nversions = \"*\"\ntorch = \"latest\"\n", "must be a version"},
           {"[[env]]\ncuda = \">=13\"\n", "key 'env.set': must be a non-empty table"},
           {"[[env]]\ncuda = \"13+\"\nset = { A = \"1\" }\n", "key 'env.cuda'"},
           {"[[env]]\nset = { A = 1 }\n", "key 'env.set.A': must be a string"},
           {"depends_on = [\"torch\"]\n[[pairs]]\nversions = \"*\"\ntorch = \"v2.9.1\"\n", "digits and dots"},
           {"[estimate]\ncore_hours = -1\n", "key 'estimate.core_hours': must be a number from 0"},
           {"[estimate]\nhours = 1\n", "key 'estimate.hours': unknown key"},
           {"estimate = 3\n", "key 'estimate': must be a table"},
           {"[[system_library]]\nname = \"X\"\nheader = \"x.h\"\nlibrary = \"libx.so\"\nwheel = \"nvidia-x\"\n",
            "wheel and wheel_dir go together"},
           {"[[system_library]]\nname = \"X\"\nheader = \"x.h\"\nlibrary = \"libx.so\"\nwheel = \"nvidia-x\"\n"
            "wheel_dir = \"../x\"\n",
            "key 'system_library.wheel_dir': '../x' must be a dir inside site-packages"},
           {"[[env]]\nmachine = \"arm64\"\nset = { A = \"1\" }\n",
            "key 'env.machine': 'arm64' is not a host CPU archbuild builds on (x86_64 or aarch64)"},
           {"[[env]]\nmachine = \"\"\nset = { A = \"1\" }\n", "key 'env.machine': '' is not a host CPU"}}) {
    write_recipe(site.path, "companion", extra);
    EXPECT_NE(error_of(load).find(why), std::string::npos) << extra << "\n" << error_of(load);
  }
}
}  // namespace
}  // namespace archbuild
