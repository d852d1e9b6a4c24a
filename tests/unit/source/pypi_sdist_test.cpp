#include "source/pypi_sdist.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace archbuild {
namespace {

std::string spec_error_of(const std::string& spec) {
  try {
    parse_pypi_spec(spec);
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  ADD_FAILURE() << spec << " was accepted";
  return "";
}

TEST(PypiSpec, ParsesNameAndExactVersion) {
  auto spec = parse_pypi_spec("pypi:Torch_Scatter==2.1.2");
  EXPECT_EQ(spec.name, "torch-scatter");
  EXPECT_EQ(spec.version, "2.1.2");
  EXPECT_EQ(parse_pypi_spec("pypi: flash-attn == 2.8.3 ").version, "2.8.3");
  EXPECT_EQ(parse_pypi_spec("pypi:demo==1.0rc1+cu130").version, "1.0rc1+cu130");
  EXPECT_EQ(parse_pypi_spec("pypi:demo==1!2.0.post3.dev4").version, "1!2.0.post3.dev4");
  auto unversioned = parse_pypi_spec("pypi:demo");
  EXPECT_EQ(unversioned.name, "demo");
  EXPECT_EQ(unversioned.version, "");
}

TEST(PypiSpec, RefusesWhatNamesNoOneSdist) {
  EXPECT_NE(spec_error_of("pypi:").find("no project name"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo==").find("no version after =="), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo>=1.0").find("only an exact version"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo~=1.0").find("only an exact version"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo===1.0").find("==="), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo[cuda]==1.0").find("extras"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo==1.*").find("not one exact version"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo==../../x").find("not one exact version"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:../x==1.0").find("not a valid project name"), std::string::npos);
  EXPECT_NE(spec_error_of("pypi:demo @ https://x/y.tar.gz").find("only an exact version"), std::string::npos);
  // Every message shows the expected form.
  EXPECT_NE(spec_error_of("pypi:").find("pypi:NAME==VERSION"), std::string::npos);
}

}  // namespace
}  // namespace archbuild
