#include "builder/build_time_model.h"

#include <gtest/gtest.h>

using namespace archbuild;

namespace {

// A cold build: `images` per nvcc call, nvcc steps h + d x images per call
// over `calls` calls, `slots` at once, fully busy, plus `serial` seconds.
BuildTimeRecord cold_build(size_t images, unsigned slots, double serial = 10, double h = 1, double d = 2,
                           double calls = 100) {
  BuildTimeRecord record;
  record.recipe = "demo";
  record.ref = "v1.0";
  record.arch_list = std::to_string(images) + " archs";
  record.compile_inputs = "inputs-" + std::to_string(images);
  record.code_images = images;
  record.parallelism = slots;
  record.cores = 16;
  record.nvcc_seconds = calls * (h + d * static_cast<double>(images));
  record.other_seconds = 20;
  record.span_seconds = (record.nvcc_seconds + record.other_seconds) / slots;
  record.serial_seconds = serial;
  record.wall_seconds = record.serial_seconds + record.span_seconds;
  return record;
}

ForecastRequest request_for(size_t images, unsigned slots, const std::string& inputs = "new") {
  ForecastRequest request;
  request.recipe = "demo";
  request.ref = "v1.0";
  request.compile_inputs = inputs;
  request.code_images = images;
  request.parallelism = slots;
  request.cores = 16;
  return request;
}

}  // namespace

TEST(BuildTimeModel, TheSameBuildAgainIsPredictedAsItTook) {
  auto before = cold_build(2, 8);
  auto forecast = forecast_build_time({before}, request_for(2, 8));
  ASSERT_TRUE(forecast.seconds);
  EXPECT_TRUE(forecast.from_history);
  EXPECT_NEAR(*forecast.seconds, before.wall_seconds, 1e-6);
  EXPECT_NE(forecast.basis.find("demo v1.0"), std::string::npos) << forecast.basis;
}

TEST(BuildTimeModel, HalfTheSlotsDoublesTheCompileSteps) {
  auto before = cold_build(2, 8);
  auto forecast = forecast_build_time({before}, request_for(2, 4));
  EXPECT_NEAR(*forecast.seconds, before.serial_seconds + 2 * before.span_seconds, 1e-6);
  // More jobs than cores run no faster.
  auto capped = request_for(2, 64);
  capped.cores = 8;
  EXPECT_NEAR(*forecast_build_time({before}, capped).seconds, before.wall_seconds, 1e-6);
}

TEST(BuildTimeModel, TwoBuildsOfOneRefFitTheCostOfAnImage) {
  // The true model is h = 1, d = 2: with both builds known, 6 images are exact.
  std::vector<BuildTimeRecord> history = {cold_build(1, 8), cold_build(3, 8)};
  auto expected = cold_build(6, 8);
  EXPECT_NEAR(*forecast_build_time(history, request_for(6, 8)).seconds, expected.wall_seconds, 1e-6);
  // From one build, the default ratio (1.0) is used: off, but in the right direction.
  auto one = *forecast_build_time({cold_build(1, 8)}, request_for(6, 8)).seconds;
  EXPECT_GT(one, cold_build(1, 8).wall_seconds);
  EXPECT_LT(one, expected.wall_seconds);
}

TEST(BuildTimeModel, AWarmCompileCacheIsAFractionUntilAWarmBuildIsRecorded) {
  auto before = cold_build(2, 8);
  before.compile_cache = true;
  auto request = request_for(2, 8, before.compile_inputs);
  request.compile_cache = true;
  auto guess = forecast_build_time({before}, request);
  EXPECT_TRUE(guess.warm);
  EXPECT_NEAR(*guess.seconds, before.serial_seconds + kWarmShare * before.span_seconds, 1e-6);
  auto warm = before;
  warm.warm = true;
  warm.span_seconds = 7;
  warm.serial_seconds = 3;
  auto measured = forecast_build_time({before, warm}, request);
  EXPECT_NEAR(*measured.seconds, 10, 1e-6);
  EXPECT_NE(measured.basis.find("warm build"), std::string::npos) << measured.basis;
  // Without a compile cache, the same inputs build cold.
  request.compile_cache = false;
  EXPECT_FALSE(forecast_build_time({before, warm}, request).warm);
}

TEST(BuildTimeModel, AnotherRefScalesAndSaysSo) {
  auto before = cold_build(2, 8);
  before.ref = "v0.9";
  auto forecast = forecast_build_time({before}, request_for(2, 8));
  EXPECT_NEAR(*forecast.seconds, before.wall_seconds, 1e-6);
  EXPECT_NE(forecast.basis.find("another ref"), std::string::npos) << forecast.basis;
}

TEST(BuildTimeModel, WithoutHistoryTheRecipesEstimateOrNothing) {
  auto request = request_for(6, 10);
  request.cores = 10;
  EXPECT_FALSE(forecast_build_time({}, request).seconds);
  request.estimate = RecipeEstimate{16, 3, 20};
  auto forecast = forecast_build_time({}, request);
  ASSERT_TRUE(forecast.seconds);
  EXPECT_FALSE(forecast.from_history);
  EXPECT_NEAR(*forecast.seconds, (16 + 3 * 5) * 3600.0 / 10, 1e-6);
  EXPECT_NE(forecast.basis.find("no history: about 3.1 hours on 10 cores"), std::string::npos) << forecast.basis;
  // Another recipe's history is not this one's.
  auto other = cold_build(6, 10);
  other.recipe = "other";
  EXPECT_FALSE(forecast_build_time({other}, request).from_history);
}

TEST(BuildTimeModel, IncrementalBuildsAreScaledFromOnlyWithoutACleanOne) {
  auto clean = cold_build(2, 8);
  auto incremental = cold_build(2, 8, 10, 0.1, 0.2);  // ran a tenth of the steps
  incremental.clean = false;
  EXPECT_NEAR(*forecast_build_time({clean, incremental}, request_for(2, 8)).seconds, clean.wall_seconds, 1e-6);
  auto only = forecast_build_time({incremental}, request_for(2, 8));
  EXPECT_NEAR(*only.seconds, incremental.wall_seconds, 1e-6);
  EXPECT_NE(only.basis.find("an incremental build"), std::string::npos) << only.basis;
  auto request = request_for(2, 8);
  request.clean = false;
  EXPECT_NE(forecast_build_time({clean}, request).basis.find("may take less"), std::string::npos);
}

TEST(BuildTimeModel, OnlyBuildsOfTheSameSourceCount) {
  // The generic recipe builds many projects: one's history says nothing of another's.
  auto other = cold_build(2, 8);
  other.source = "github.com/org/other";
  other.ref = "master";
  auto request = request_for(2, 8);
  request.source = "github.com/org/this#subdirectory=ops";
  EXPECT_FALSE(forecast_build_time({other}, request).seconds);
  auto same = other;
  same.source = request.source;
  auto forecast = forecast_build_time({other, same}, request);
  ASSERT_TRUE(forecast.seconds);
  EXPECT_NE(forecast.basis.find("demo master"), std::string::npos) << forecast.basis;
}
