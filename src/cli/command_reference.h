#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// docs/COMMANDS.md, compiled into the binary: `archbuild help COMMAND` and
// `archbuild COMMAND --help` print its sections, so the docs page and the
// terminal say the same thing.
std::string_view command_reference_markdown();

// The body of the section `## archbuild COMMAND` (or, with a subcommand,
// `### archbuild COMMAND SUB`) of `markdown`, up to the next heading, laid out
// for a terminal: code fences dropped and their lines indented. nullopt when
// there is no such section.
std::optional<std::string> reference_section(std::string_view markdown, std::string_view command,
                                             std::string_view subcommand = {});

}  // namespace archbuild
