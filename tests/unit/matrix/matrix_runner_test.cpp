#include "matrix/matrix_runner.h"

#include <gtest/gtest.h>

#include "recipe/recipe.h"

namespace archbuild {
namespace {

const std::filesystem::path kData = ARCHBUILD_SOURCE_DIR;

BuildMatrix matrix_of(const std::vector<std::string>& recipes, unsigned jobs = 0) {
  BuildMatrix matrix;
  for (const auto& recipe : recipes) matrix.cells.push_back({recipe, "", "9.0", "", {}});
  matrix.jobs = jobs;
  return matrix;
}

constexpr uint64_t kGiB = 1ull << 30;

TEST(MatrixJobBudget, JobsOptionWinsOverTheFileAndTheMachine) {
  auto book = RecipeBook::load(kData / "recipes", kData / "patches");
  auto budget = matrix_job_budget(matrix_of({"torch"}, 32), book, 12, 4, 64, 512 * kGiB);
  EXPECT_EQ(budget.total, 12u);
  EXPECT_EQ(budget.per_cell, 3u);
  budget = matrix_job_budget(matrix_of({"torch"}, 32), book, 0, 4, 64, 512 * kGiB);
  EXPECT_EQ(budget.total, 32u);
  EXPECT_EQ(budget.per_cell, 8u);
}

TEST(MatrixJobBudget, TheMachineIsSharedByTheHungriestRecipe) {
  auto book = RecipeBook::load(kData / "recipes", kData / "patches");
  // torch's 4.5 GB per job outweighs cuda-demo's 1.0: 45 GiB allows 10 jobs, under the 64 cores.
  auto budget = matrix_job_budget(matrix_of({"cuda-demo", "torch"}), book, 0, 2, 64, 45 * kGiB);
  EXPECT_EQ(budget.total, 10u);
  EXPECT_EQ(budget.per_cell, 5u);
  // Never under the default 2 GB per job, even for lighter recipes; the cores cap it.
  budget = matrix_job_budget(matrix_of({"cuda-demo"}), book, 0, 1, 64, 20 * kGiB);
  EXPECT_EQ(budget.total, 10u);
  budget = matrix_job_budget(matrix_of({"cuda-demo"}), book, 0, 1, 4, 20 * kGiB);
  EXPECT_EQ(budget.total, 4u);
}

TEST(MatrixJobBudget, EveryCellGetsAtLeastOneJob) {
  auto book = RecipeBook::load(kData / "recipes", kData / "patches");
  auto budget = matrix_job_budget(matrix_of({"torch"}), book, 3, 8, 64, 512 * kGiB);
  EXPECT_EQ(budget.total, 3u);
  EXPECT_EQ(budget.per_cell, 1u);
  // Unknown memory: one job.
  budget = matrix_job_budget(matrix_of({"torch"}), book, 0, 1, 64, 0);
  EXPECT_EQ(budget.total, 1u);
  EXPECT_EQ(budget.per_cell, 1u);
}

}  // namespace
}  // namespace archbuild
