"""Real git repositories made with the git CLI, for the source-stage tests."""
import os
import pathlib
import subprocess

GIT_ENV = {
    "GIT_AUTHOR_NAME": "archbuild tests", "GIT_AUTHOR_EMAIL": "tests@archbuild.invalid",
    "GIT_COMMITTER_NAME": "archbuild tests", "GIT_COMMITTER_EMAIL": "tests@archbuild.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd, *args):
    env = dict(os.environ, **GIT_ENV)
    result = subprocess.run(["git", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", *args],
                            cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}:\n{result.stderr}")
    return result.stdout.strip()


def make_repo(path, files, message="initial"):
    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    commit_files(path, files, message)
    return path


def commit_files(path, files, message):
    for name, content in files.items():
        target = pathlib.Path(path) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


def add_submodule(path, url, where, message):
    git(path, "submodule", "add", "-q", url, where)
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


class Forest:
    """leaf <- mid <- sub <- top: three levels of nested submodules, all by
    file:// URL (or, with `url_base`, by a URL that --mirror must rewrite),
    plus a relative-URL submodule. top has tags v1.0 (submodule at
    third_party/sub) and v2.0 (moved to external/sub), and a branch `feature`."""

    def __init__(self, root, url_base=None):
        self.root = pathlib.Path(root)
        self.origin = self.root / "origin"
        self.url_base = url_base or f"file://{self.origin}/"
        leaf = make_repo(self.origin / "leaf", {"leaf.txt": "leaf\n"})
        self.leaf_commit = git(leaf, "rev-parse", "HEAD")
        mid = make_repo(self.origin / "mid", {"mid.txt": "mid\n"})
        self.mid_commit = add_submodule(mid, f"file://{leaf}", "deps/leaf", "add leaf")
        sub = make_repo(self.origin / "sub", {"sub.txt": "sub\n"})
        self.sub_commit = add_submodule(sub, f"file://{mid}", "third_party/mid", "add mid")
        make_repo(self.origin / "helper", {"helper.txt": "helper\n"})
        top = make_repo(self.origin / "top", {"README": "top\n", "src/main.c": "int main(void) { return 0; }\n"})
        git(top, "submodule", "add", "-q", f"file://{sub}", "third_party/sub")
        if self.url_base != f"file://{self.origin}/":
            # recorded under a URL only --mirror / the config file can reach
            git(top, "submodule", "set-url", "third_party/sub", self.url_base + "sub")
        git(top, "commit", "-q", "-m", "add sub")
        # a relative URL, resolved against top's own URL
        git(top, "submodule", "add", "-q", "../helper", "third_party/helper")
        git(top, "commit", "-q", "-m", "add helper")
        git(top, "tag", "v1.0")
        self.v1 = git(top, "rev-parse", "HEAD")
        (top / "external").mkdir()
        git(top, "mv", "third_party/sub", "external/sub")
        git(top, "commit", "-q", "-m", "move sub")
        git(top, "tag", "-a", "v2.0", "-m", "release 2.0")
        self.v2 = git(top, "rev-parse", "HEAD")
        git(top, "checkout", "-q", "-b", "feature")
        self.feature = commit_files(top, {"feature.txt": "feature\n"}, "feature work")
        git(top, "checkout", "-q", "main")
        self.top = top
        self.url = self.url_base + "top"
