#include "cli/command_reference.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "cli/command.h"

namespace archbuild {
namespace {

constexpr std::string_view kPage = R"(# Command reference

Intro.

## archbuild alpha

```
archbuild alpha [--x]
```

Alpha's text.
- a bullet

### archbuild alpha one

One's text.

## archbuild beta

Beta's text.

## Exit codes

Not a command.
)";

TEST(ReferenceSection, IsTheTextUpToTheNextHeadingWithCodeIndented) {
  EXPECT_EQ(reference_section(kPage, "alpha"), "  archbuild alpha [--x]\n\nAlpha's text.\n- a bullet\n");
  EXPECT_EQ(reference_section(kPage, "alpha", "one"), "One's text.\n");
  EXPECT_EQ(reference_section(kPage, "beta"), "Beta's text.\n");
}

TEST(ReferenceSection, MissingSectionsAreNullopt) {
  EXPECT_EQ(reference_section(kPage, "gamma"), std::nullopt);
  EXPECT_EQ(reference_section(kPage, "alpha", "two"), std::nullopt);
  EXPECT_EQ(reference_section(kPage, "alph"), std::nullopt);  // whole names only
  EXPECT_EQ(reference_section(kPage, "Exit codes"), std::nullopt);
}

TEST(ReferenceSection, AHashInsideCodeIsNotAHeading) {
  constexpr std::string_view page = "## archbuild x\n\n```sh\n# a comment\nrun\n```\n\nafter\n## archbuild y\n";
  EXPECT_EQ(reference_section(page, "x"), "  # a comment\n  run\n\nafter\n");
}

// docs/COMMANDS.md as compiled in: one section per command and per cache
// subcommand, and no section for a command that does not exist.
TEST(CommandReference, EveryCommandAndSubcommandHasItsSection) {
  const auto page = command_reference_markdown();
  std::set<std::string> names;
  for (const auto& command : command_table()) {
    names.insert(command.name);
    auto section = reference_section(page, command.name);
    ASSERT_TRUE(section.has_value()) << "docs/COMMANDS.md has no '## archbuild " << command.name << "'";
    EXPECT_NE(section->find("archbuild " + command.name), std::string::npos) << command.name << ": no usage line";
    CLI::App app{"test"};
    auto* sub = app.add_subcommand(command.name, command.synopsis);
    command.setup(*sub);
    for (auto* child : sub->get_subcommands([](CLI::App*) { return true; }))
      EXPECT_TRUE(reference_section(page, command.name, child->get_name()).has_value())
          << "docs/COMMANDS.md has no '### archbuild " << command.name << " " << child->get_name() << "'";
  }
  const std::string heading = "\n## archbuild ";
  for (auto at = page.find(heading); at != std::string_view::npos; at = page.find(heading, at + 1)) {
    auto end = page.find('\n', at + heading.size());
    auto name = std::string(page.substr(at + heading.size(), end - at - heading.size()));
    EXPECT_TRUE(names.count(name)) << "docs/COMMANDS.md documents '" << name << "', which is not a command";
  }
}

}  // namespace
}  // namespace archbuild
