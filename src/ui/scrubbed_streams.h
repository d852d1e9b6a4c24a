#pragma once

// Every line archbuild writes to std::cout and std::cerr passes through
// secrets::scrub (core/secrets.h) and terminal_safe (core/strings.h) on its
// way out: whatever a command prints (a URL from a report, a server's
// answer, an exception's text) holds no secret archbuild knows of and no
// control sequence but colour. Installed once by main; the C stdio writers
// (the status line, the log's terminal sink) do the same for their lines.
namespace archbuild {

void scrub_standard_streams();

}  // namespace archbuild
