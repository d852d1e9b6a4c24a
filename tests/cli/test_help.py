"""One source for a command's reference: `archbuild help COMMAND` is
`archbuild COMMAND --help`, which ends with the command's section of
docs/COMMANDS.md; README's table has one short line per command, the
command's own synopsis."""
import re
import unittest

from harness import SOURCE_DIR, run


def commands():
    """(name, synopsis) of each command `archbuild help` lists."""
    listing = run("help").stdout
    block = listing.split("Subcommands:", 1)[1]
    return [tuple(re.split(r"\s{2,}", line.strip(), maxsplit=1)) for line in block.splitlines()
            if line.startswith("  ") and line.strip()]


def section(name):
    text = (SOURCE_DIR / "docs" / "COMMANDS.md").read_text()
    body = text.split(f"\n## archbuild {name}\n", 1)[1]
    return re.split(r"\n#{2,3} ", body, maxsplit=1)[0]


class Help(unittest.TestCase):
    def test_help_is_the_commands_own_help_with_its_reference(self):
        listed = commands()
        self.assertGreaterEqual(len(listed), 14, listed)
        for name, _ in listed:
            with self.subTest(command=name):
                helped = run("help", name)
                self.assertEqual(helped.returncode, 0, helped.stderr)
                self.assertEqual(helped.stdout, run(name, "--help").stdout)
                self.assertIn(f"Usage: archbuild {name} ", helped.stdout)
                # the section's prose, as docs/COMMANDS.md has it (code blocks are indented in the terminal)
                prose = [line for line in section(name).splitlines() if line and not line.startswith(("```", "  "))]
                self.assertTrue(prose, name)
                for line in prose[:5]:
                    self.assertIn(line, helped.stdout)

    def test_a_subcommand_has_its_own_section(self):
        helped = run("help", "cache", "push")
        self.assertEqual(helped.returncode, 0, helped.stderr)
        self.assertIn("Usage: archbuild cache push ", helped.stdout)
        self.assertIn("s3://BUCKET/PREFIX", helped.stdout)
        self.assertEqual(helped.stdout, run("cache", "push", "--help").stdout)

    def test_an_unknown_command_is_named(self):
        result = run("help", "no-such-command")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no such command: 'no-such-command'", result.stderr)

    def test_readme_has_one_short_line_per_command(self):
        readme = (SOURCE_DIR / "README.md").read_text()
        rows = {}
        for line in readme.splitlines():
            if line.startswith("| `archbuild "):
                self.assertLessEqual(len(line), 120, line)
                name, text = re.match(r"\| `archbuild ([^` ]+)` \| (.*) \|$", line).groups()
                rows[name] = text
        for name, synopsis in commands():
            with self.subTest(command=name):
                self.assertEqual(rows.get(name), synopsis, f"README's row for {name} is not its synopsis")


if __name__ == "__main__":
    unittest.main()
