"""The recipe search path (the recipe_path setting: config file, env
ARCHBUILD_RECIPE_PATH, --recipe-path): site recipes shadow built-in ones by
name, first dir first, `archbuild recipes` says where each comes from and
what it shadows, a site recipe's patches come from its own dir's patches/;
and recipes picked by the repository URL a build names."""
import io
import json
import os
import pathlib
import tarfile
import unittest

from gitrepos import git, make_repo
from harness import SOURCE_DIR, SYSTEM_NVCC, run, scratch_dir
from waiting import scaled

ENV_ORIGIN = "recipe_path (env ARCHBUILD_RECIPE_PATH)"


def write_recipe(directory, name, extra=""):
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.toml").write_text(f'''name = "{name}"
description = "site recipe {name} in {directory.name}"
arch_dialect = "extension"
{extra}

[[build]]
versions = "*"
system = "setup.py"
command = ["{{python}}", "setup.py", "bdist_wheel", "--dist-dir", "{{wheel_dir}}"]
''')
    return directory / f"{name}.toml"


class RecipePath(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.first, self.second = self.dir / "first", self.dir / "second"
        write_recipe(self.first, "torchvision",
                     'repository = "https://github.com/me/vision"\ndefault_ref = "mine"\ndepends_on = ["torch"]')
        write_recipe(self.first, "site-ext")
        write_recipe(self.second, "site-ext", "depends_on = []")
        write_recipe(self.second, "second-only")
        self.config = self.dir / "config.toml"
        self.config.write_text("")
        self.env = {"ARCHBUILD_CONFIG": str(self.config), "ARCHBUILD_RECIPE_PATH": f"{self.first}:{self.second}"}

    def recipes(self, *args, env=None):
        result = run("recipes", "--json", *args, env=dict(self.env, **(env or {})))
        self.assertEqual(result.returncode, 0, result.stderr)
        return {recipe["name"]: recipe for recipe in json.loads(result.stdout)}

    def test_site_recipes_shadow_built_in_ones_and_say_so(self):
        book = self.recipes()
        vision = book["torchvision"]
        self.assertEqual((vision["file"], vision["origin"], vision["default_ref"]),
                         (str(self.first / "torchvision.toml"), ENV_ORIGIN, "mine"))
        self.assertEqual(vision["shadows"], [str(SOURCE_DIR / "recipes" / "torchvision.toml")])
        self.assertEqual(book["site-ext"]["file"], str(self.first / "site-ext.toml"))
        self.assertEqual(book["site-ext"]["shadows"], [str(self.second / "site-ext.toml")])
        self.assertEqual(book["second-only"]["origin"], ENV_ORIGIN)
        self.assertEqual((book["torch"]["origin"], book["torch"]["shadows"]), ("built-in", []))
        self.assertEqual(book["site-ext"]["patches_dir"], str(self.first / "patches"))
        text = run("recipes", env=self.env)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn(f"{self.first / 'torchvision.toml'} ({ENV_ORIGIN}), shadows "
                      f"{SOURCE_DIR / 'recipes' / 'torchvision.toml'}", text.stdout)
        one = run("recipes", "torchvision", env=self.env)
        self.assertIn(f"file          {self.first / 'torchvision.toml'} ({ENV_ORIGIN}), shadows", one.stdout)

    def test_flag_over_env_over_config_file(self):
        self.config.write_text(f'recipe_path = "{self.second}"\n')
        from_config = self.recipes(env={"ARCHBUILD_RECIPE_PATH": None})
        self.assertEqual(from_config["site-ext"]["file"], str(self.second / "site-ext.toml"))
        self.assertIn(f"config file {self.config}:1", from_config["site-ext"]["origin"])
        self.assertEqual(from_config["torchvision"]["origin"], "built-in")
        from_flag = self.recipes("--recipe-path", str(self.first))
        self.assertEqual(from_flag["site-ext"]["origin"], "recipe_path (--recipe-path)")
        self.assertNotIn("second-only", from_flag)
        shown = run("config", env=self.env)
        self.assertIn("recipe_path", shown.stdout)
        self.assertIn("env ARCHBUILD_RECIPE_PATH", shown.stdout)

    def test_bad_dirs_name_the_path_and_the_origin(self):
        missing = self.dir / "missing"
        for env, args, origin in ((dict(self.env, ARCHBUILD_RECIPE_PATH=f"{self.first}:{missing}"), [],
                                   "env ARCHBUILD_RECIPE_PATH"),
                                  (self.env, ["--recipe-path", str(missing)], "--recipe-path")):
            result = run("recipes", *args, env=env)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(f"recipe_path entry '{missing}' (from {origin}) is not a directory", result.stderr)
        self.config.write_text(f'recipe_path = "{missing}"\n')
        result = run("source", "torch", "--cache-dir", str(self.dir / "cache"),
                     env=dict(self.env, ARCHBUILD_RECIPE_PATH=None))
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"(from config file {self.config}:1) is not a directory", result.stderr)
        # a broken site recipe names its file; a FIFO in its place is refused, not read (which would block)
        (self.first / "broken.toml").write_text('name = "broken"\nbogus = 1\n')
        result = run("recipes", env=self.env)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"{self.first / 'broken.toml'}:2: key 'bogus': unknown key", result.stderr)
        (self.first / "broken.toml").unlink()
        os.mkfifo(self.first / "blocked.toml")
        result = run("recipes", env=self.env, timeout=scaled(60))  # a read would block for ever
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"recipe {self.first / 'blocked.toml'} (from {ENV_ORIGIN}) is not a regular file", result.stderr)


class RecipesByRepository(unittest.TestCase):
    """A site recipe for a repository reached only through --mirror (a URL no
    test can reach), and its own patch from its dir's patches/."""

    def setUp(self):
        self.dir = scratch_dir(self)
        self.repo = make_repo(self.dir / "origin" / "demo", {"setup.py": "print('demo')\n", "VERSION": "1.0\n"})
        git(self.repo, "tag", "v1.0")
        git(self.repo, "checkout", "-q", "-b", "other")
        (self.repo / "VERSION").write_text("other\n")
        git(self.repo, "commit", "-q", "-am", "other branch")
        git(self.repo, "checkout", "-q", "main")
        self.site = self.dir / "site"
        (self.site / "patches").mkdir(parents=True)
        (self.site / "patches" / "version.patch").write_text(
            "diff --git a/VERSION b/VERSION\n--- a/VERSION\n+++ b/VERSION\n@@ -1 +1 @@\n-1.0\n+1.0+site\n")
        write_recipe(self.site, "demo", 'repository = "https://git.example.invalid/Org/demo"\ndefault_ref = "v1.0"\n'
                                        '[[patches]]\nversions = "*"\nfiles = ["version.patch"]')
        self.cache = self.dir / "cache"
        (self.dir / "empty.toml").write_text("")
        self.env = {"ARCHBUILD_RECIPE_PATH": str(self.site), "ARCHBUILD_CONFIG": str(self.dir / "empty.toml")}

    def source(self, url, *args):
        mirror = f"{url}=file://{self.repo}"
        result = run("source", url, "--mirror", mirror, "--cache-dir", str(self.cache), "--json", *args, env=self.env)
        return result, (json.loads(result.stdout) if result.returncode == 0 else None)

    def test_a_url_spelling_of_a_recipes_repository_picks_it(self):
        for url in ("git@git.example.invalid:Org/demo.git", "http://GIT.example.invalid/Org/demo/",
                    "https://git.example.invalid/Org/demo.git"):
            result, report = self.source(url)
            self.assertEqual(result.returncode, 0, (url, result.stderr))
            self.assertIn(f"note: using recipe demo for {url} (its repository is "
                          "https://git.example.invalid/Org/demo; --recipe picks another)", result.stderr)
            # the recipe's default ref, its patch (from the site dir's patches/), its work tree name
            self.assertEqual(report["ref"], "v1.0")
            self.assertEqual([p["file"] for p in report["patches"]], [str(self.site / "patches" / "version.patch")])
            self.assertEqual(pathlib.Path(report["dir"]).name, "demo-v1.0")
            self.assertEqual((pathlib.Path(report["dir"]) / "VERSION").read_text(), "1.0+site\n")
        # a path that differs (case) is another repository: the generic recipe, no note
        result, report = self.source("https://git.example.invalid/org/demo", "--ref", "other")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("using recipe", result.stderr)
        self.assertEqual(report["patches"], [])

    def test_a_local_clone_of_a_recipes_repository_is_built_with_it(self):
        # its origin is that URL, spelled another way: the recipe (and its patch), said in a note
        clone = self.dir / "clone"
        git(self.dir, "clone", "-q", str(self.repo), str(clone))
        git(clone, "remote", "set-url", "origin", "git@git.example.invalid:Org/demo.git")
        result = run("source", str(clone), "--cache-dir", str(self.cache), "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"note: using recipe demo for {clone} (its origin remote git@git.example.invalid:Org/demo.git "
                      "is the recipe's repository; --recipe cpp-extension builds it without)", result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual([p["file"] for p in report["patches"]], [str(self.site / "patches" / "version.patch")])
        self.assertEqual(pathlib.Path(report["dir"]).name, "demo-main")
        self.assertEqual((pathlib.Path(report["dir"]) / "VERSION").read_text(), "1.0+site\n")
        # --recipe cpp-extension builds it as the user's own project
        result = run("source", str(clone), "--recipe", "cpp-extension", "--cache-dir", str(self.cache), "--json",
                     env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("using recipe", result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["patches"], [])
        self.assertEqual(pathlib.Path(report["dir"]).name, "clone-main")

    def test_an_sdist_of_a_recipes_pypi_project_is_built_with_it(self):
        # a recipe of a git repository that names its PyPI project: a local sdist of it picks the recipe
        write_recipe(self.site, "demo", 'pypi = "Demo_Kernels"\n'
                                        'repository = "https://git.example.invalid/Org/demo"\ndefault_ref = "v1.0"\n'
                                        '[[patches]]\nversions = "*"\nfiles = ["version.patch"]')
        top = "demo_kernels-1.0"
        sdist = self.dir / f"{top}.tar.gz"
        with tarfile.open(sdist, "w:gz") as tar:
            for name, text in ((f"{top}/PKG-INFO", "Metadata-Version: 2.1\nName: demo-kernels\nVersion: 1.0\n"),
                               (f"{top}/setup.py", "print('demo')\n"), (f"{top}/VERSION", "1.0\n")):
                info = tarfile.TarInfo(name)
                info.size = len(text.encode())
                tar.addfile(info, io.BytesIO(text.encode()))
        result = run("source", str(sdist), "--cache-dir", str(self.cache), "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"note: using recipe demo for {sdist} (the recipe of the PyPI project demo-kernels, whose "
                      "repository is https://git.example.invalid/Org/demo; --recipe picks another)", result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual((pathlib.Path(report["dir"]) / "VERSION").read_text(), "1.0+site\n")
        # and `archbuild recipes` shows the project
        listed = json.loads(run("recipes", "demo", "--json", env=self.env).stdout)
        self.assertEqual(listed["pypi"], "demo-kernels")

    def test_plan_of_a_github_url_uses_the_built_in_recipe(self):
        env = {"ARCHBUILD_RECIPE_PATH": None, "ARCHBUILD_CONFIG": str(self.dir / "empty.toml")}
        for url in ("https://github.com/pytorch/vision", "git@github.com:pytorch/vision.git"):
            result = run("plan", url, "--arch", "9.0", "--cache-dir", str(self.cache), "--json", env=env)
            self.assertEqual(result.returncode, 0, result.stderr)
            plan = json.loads(result.stdout)
            self.assertEqual((plan["recipe"], plan["package"], plan["ref"]), ("torchvision", "torchvision", "v0.29.0"))
        # --recipe still decides
        result = run("plan", "https://github.com/pytorch/vision", "--recipe", "cpp-extension", "--ref", "v0.24.1",
                     "--arch", "9.0", "--cache-dir", str(self.cache), "--json", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["recipe"], "cpp-extension")


if __name__ == "__main__":
    unittest.main()
