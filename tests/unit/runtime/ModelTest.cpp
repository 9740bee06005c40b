// load_shared_library and Model::run on the hand-written models of tests/runtime_fixtures.
#include "runtime/Model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/unit/runtime/Fixtures.h"

namespace dsc::runtime {
namespace {

using testing::fixture_path;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<Model> load_tiny() {
  std::string error;
  std::unique_ptr<Model> m = load_shared_library(fixture_path("dsc_fixture_tiny_model"), &error);
  EXPECT_TRUE(m) << error;
  return m;
}

Tensor iota(std::vector<int64_t> shape, float scale = 1.0f) {
  Tensor t = Tensor::zeros(dl_float(32), std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_as<float>()[i] = static_cast<float>(i) * scale;
  return t;
}

TEST(SharedLibraryModel, ManifestOfTheTinyModel) {
  DSC_SKIP_WITHOUT_FIXTURES();
  auto m = load_tiny();
  ASSERT_TRUE(m);
  const Manifest& manifest = m->manifest();
  ASSERT_EQ(manifest.functions.size(), 4u);
  const FunctionInfo* scale = manifest.find("scale_rows");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->params.at(0).type_string(), "f32[B, D]");
  EXPECT_EQ(scale->params.at(1).type_string(), "f32[D]");
  EXPECT_EQ(scale->outputs.size(), 2u);
  EXPECT_EQ(scale->arena_bytes, "B*D*4");
  EXPECT_NE(m->host_function("add_one"), nullptr);
  EXPECT_EQ(m->host_function("missing"), nullptr);
}

TEST(SharedLibraryModel, RunsAddOneAtManySizes) {
  DSC_SKIP_WITHOUT_FIXTURES();
  auto m = load_tiny();
  ASSERT_TRUE(m);
  for (int64_t n : {0, 1, 255, 256, 257, 100003}) {
    Tensor x = iota({n}, 0.5f);
    DLTensor v = x.dl_view();
    CallResult r = m->run("add_one", {&v});
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].type_string(), "f32[" + std::to_string(n) + "]");
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(r.outputs[0].data_as<float>()[i], static_cast<float>(i) * 0.5f + 1.0f);
  }
}

TEST(SharedLibraryModel, RunsScaleRows) {
  DSC_SKIP_WITHOUT_FIXTURES();
  auto m = load_tiny();
  ASSERT_TRUE(m);
  const int64_t b = 5, d = 3;
  Tensor x = iota({b, d});
  Tensor w = iota({d}, -1.0f);
  DLTensor xv = x.dl_view(), wv = w.dl_view();
  CallResult r = m->run("scale_rows", {&xv, &wv});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.arena_bytes, b * d * 4);
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0].type_string(), "f32[5, 3]");
  EXPECT_EQ(r.outputs[1].type_string(), "f32[5]");
  for (int64_t i = 0; i < b; ++i) {
    float sum = 0;
    for (int64_t j = 0; j < d; ++j) {
      float want = static_cast<float>(i * d + j) * -static_cast<float>(j);
      EXPECT_EQ(r.outputs[0].data_as<float>()[i * d + j], want);
      sum += want;
    }
    EXPECT_FLOAT_EQ(r.outputs[1].data_as<float>()[i], sum);
  }
}

TEST(SharedLibraryModel, RunErrors) {
  DSC_SKIP_WITHOUT_FIXTURES();
  auto m = load_tiny();
  ASSERT_TRUE(m);
  Tensor x = iota({4, 3});
  Tensor w = iota({4});
  Tensor ints = Tensor::zeros(dl_int(64), {4, 3});
  Tensor big = iota({65, 3});
  Tensor w3 = iota({3});
  DLTensor xv = x.dl_view(), wv = w.dl_view(), iv = ints.dl_view(), bv = big.dl_view(),
           w3v = w3.dl_view();
  EXPECT_EQ(m->run("nope", {}).error,
            "the model has no function 'nope' (it has: add_one, scale_rows, forgets_output, "
            "fails_silently)");
  EXPECT_EQ(m->run("scale_rows", {&xv}).error,
            "function 'scale_rows' takes 2 inputs (x, w); got 1");
  EXPECT_EQ(m->run("scale_rows", {&iv, &wv}).error, "input 'x' is i64[4, 3]; expected f32[B, D]");
  EXPECT_EQ(m->run("scale_rows", {&xv, &xv}).error,
            "input 'w' is f32[4, 3]; expected f32[D] (rank 1)");
  EXPECT_EQ(m->run("scale_rows", {&xv, &wv}).error,
            "input 'w' dim 0 is 4, but it must equal D = 3");
  EXPECT_EQ(m->run("scale_rows", {&bv, &w3v}).error,
            "where B <= 64 violated: B = 65 (tiny.dsc:2:40)");
  EXPECT_EQ(m->run("scale_rows", {&xv, nullptr}).error, "input 'w' is null; expected f32[D]");
  EXPECT_EQ(m->run("forgets_output", {&w3v}).error,
            "internal error: function 'forgets_output' returned without output 0");
  EXPECT_EQ(m->run("fails_silently", {&w3v}).error,
            "function 'fails_silently' failed (status 1) without an error message");
}

TEST(SharedLibraryModel, OutputsOutliveTheModel) {
  DSC_SKIP_WITHOUT_FIXTURES();
  CallResult r;
  {
    auto m = load_tiny();
    ASSERT_TRUE(m);
    Tensor x = iota({10});
    DLTensor v = x.dl_view();
    r = m->run("add_one", {&v});
  }
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.outputs[0].data_as<float>()[9], 10.0f);
}

TEST(SharedLibraryModel, TwoModelsFromOneFile) {
  DSC_SKIP_WITHOUT_FIXTURES();
  auto a = load_tiny();
  auto b = load_tiny();
  ASSERT_TRUE(a && b);
  a.reset();
  Tensor x = iota({3});
  DLTensor v = x.dl_view();
  EXPECT_TRUE(b->run("add_one", {&v}).ok());
}

TEST(SharedLibraryModel, PathWithoutASlashIsAFileNotALibrarySearch) {
  DSC_SKIP_WITHOUT_FIXTURES();
  std::filesystem::path path = fixture_path("dsc_fixture_tiny_model");
  std::filesystem::path saved = std::filesystem::current_path();
  std::filesystem::current_path(path.parent_path());
  std::string error;
  auto m = load_shared_library(path.filename().string(), &error);
  std::filesystem::current_path(saved);
  EXPECT_TRUE(m) << error;
}

std::string load_error(const std::string& path) {
  std::string error;
  EXPECT_EQ(load_shared_library(path, &error), nullptr) << path;
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(SharedLibraryModel, LoadErrors) {
  DSC_SKIP_WITHOUT_FIXTURES();
  EXPECT_EQ(load_error("/no/such/model.so"),
            "cannot load model '/no/such/model.so': No such file or directory");
  EXPECT_EQ(load_error("/"), "cannot load model '/': not a regular file");

  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dsc_model_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string text = (dir / "text.so").string();
  std::ofstream(text) << "this is not a shared library\n";
  EXPECT_THAT(load_error(text),
              StartsWith("cannot load model '" + text + "' as a shared library: "));
  std::string empty = (dir / "empty.so").string();
  std::ofstream(empty).close();
  EXPECT_THAT(load_error(empty),
              StartsWith("cannot load model '" + empty + "' as a shared library: "));
  std::filesystem::remove_all(dir);

  std::string no_manifest = fixture_path("dsc_fixture_no_manifest");
  EXPECT_EQ(load_error(no_manifest),
            "'" + no_manifest + "' is not a dsc model: it has no dsc_manifest symbol");
  std::string bad = fixture_path("dsc_fixture_bad_manifest");
  EXPECT_THAT(load_error(bad), StartsWith("'" + bad +
                                          "' has an invalid manifest: the manifest "
                                          "is not valid JSON: "));
  std::string missing = fixture_path("dsc_fixture_missing_symbol");
  EXPECT_EQ(load_error(missing), "'" + missing +
                                     "' has no host function 'not_defined_here' for its function "
                                     "'add_one'");
  std::string unterminated = fixture_path("dsc_fixture_unterminated_manifest");
  EXPECT_EQ(load_error(unterminated),
            "'" + unterminated +
                "' has an invalid manifest: dsc_manifest is not a NUL-terminated string");
}

} // namespace
} // namespace dsc::runtime
