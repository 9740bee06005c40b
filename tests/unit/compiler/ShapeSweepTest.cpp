// One BERT layer built once into a .so and run at a thousand distinct (B, S): 1, primes, sizes
// that are not multiples of the vector width, and S = 512 (the where clause's bound). Nothing
// is compiled after the build, a sample of the shapes is checked against the reference
// interpreter, and every call's output has the shape the signature promises.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {
namespace {

// The 1,000 pairs with the fewest tokens (B*S; the sweep's cost), plus the largest S, in a
// shuffled order so that consecutive calls change shape both ways.
std::vector<std::pair<int64_t, int64_t>> sweep_shapes(std::mt19937_64& rng) {
  std::vector<std::pair<int64_t, int64_t>> all;
  for (int64_t b = 1; b <= 256; ++b)
    for (int64_t s = 1; s <= 511 && b * s <= 256; ++s)
      all.emplace_back(b, s);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
    return x.first * x.second < y.first * y.second ||
           (x.first * x.second == y.first * y.second && x < y);
  });
  internal_assert(all.size() >= 999) << "too few small shapes";
  all.resize(999);
  all.emplace_back(1, 512);
  std::shuffle(all.begin(), all.end(), rng);
  return all;
}

runtime::Tensor random_tensor(ir::DType dtype, std::vector<int64_t> shape, std::mt19937_64& rng) {
  runtime::Tensor t = runtime::Tensor::zeros(reference::to_dl(dtype), shape);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_as<float>()[i] = uniform(rng);
  return t;
}

TEST(ShapeSweep, BertLayerBuiltOnceRunsAtAThousandShapes) {
  CompiledProgram p = compile_program(read_source("examples/bert_layer.dsc"), "layer");
  ASSERT_EQ(p.errors, "");
  std::string so =
      (std::filesystem::temp_directory_path() / ("dsc_sweep_" + std::to_string(::getpid()) + ".so"))
          .string();
  runtime::Manifest manifest;
  manifest.functions.push_back(cpu::describe_host_program(p.host));
  std::string error;
  ASSERT_TRUE(
      cpu::build_shared_library(p.lowered, {p.host}, manifest, ir::cpu_target(), so, &error))
      << error;
  std::unique_ptr<runtime::Model> model = runtime::load_shared_library(so, &error);
  std::filesystem::remove(so);
  ASSERT_TRUE(model) << error;
  const uint64_t compiled = cpu::models_compiled();

  std::mt19937_64 rng(2026);
  // The weights (every parameter after x and mask) once, for all shapes.
  std::vector<runtime::Tensor> weights = random_inputs(p.host, {{"B", 1}, {"S", 1}}, rng, 2);
  weights.erase(weights.begin(), weights.begin() + 2);
  std::vector<DLTensor> weight_views;
  for (runtime::Tensor& w : weights)
    weight_views.push_back(w.dl_view());
  const std::set<std::pair<int64_t, int64_t>> checked = {{1, 1}, {1, 7}, {2, 13}, {3, 5}, {1, 31}};
  std::vector<std::pair<int64_t, int64_t>> shapes = sweep_shapes(rng);
  std::set<std::pair<int64_t, int64_t>> distinct(shapes.begin(), shapes.end());
  ASSERT_EQ(distinct.size(), 1000u);
  for (const auto& shape : checked)
    ASSERT_TRUE(distinct.count(shape));
  size_t compared = 0;
  for (auto [b, s] : shapes) {
    std::string at = "B=" + std::to_string(b) + ", S=" + std::to_string(s);
    runtime::Tensor x = random_tensor(ir::DType::F32, {b, s, 768}, rng);
    runtime::Tensor mask = random_tensor(ir::DType::F32, {b, s}, rng);
    std::vector<DLTensor> views = {x.dl_view(), mask.dl_view()};
    views.insert(views.end(), weight_views.begin(), weight_views.end());
    std::vector<const DLTensor*> ptrs;
    for (const DLTensor& v : views)
      ptrs.push_back(&v);
    runtime::CallResult got = model->run("layer", ptrs);
    ASSERT_TRUE(got.ok()) << at << ": " << got.error;
    ASSERT_EQ(got.outputs.size(), 1u);
    ASSERT_EQ(got.outputs[0].type_string(),
              "f32[" + std::to_string(b) + ", " + std::to_string(s) + ", 768]")
        << at;
    if (!checked.count({b, s})) continue;
    std::vector<runtime::Tensor> inputs;
    inputs.push_back(std::move(x));
    inputs.push_back(std::move(mask));
    for (const runtime::Tensor& w : weights)
      inputs.push_back(w.clone());
    reference::RunResult expected = reference::interpret(p.typed, "layer", inputs);
    ASSERT_TRUE(expected.ok()) << at << ": " << expected.error;
    const runtime::Tensor& e = expected.outputs[0];
    int failures = 0;
    for (int64_t i = 0; i < e.numel() && failures < 5; ++i) {
      double want = element(e, i), have = element(got.outputs[0], i);
      if (std::fabs(want - have) > 1e-3 * std::max(1.0, std::fabs(want))) {
        ++failures;
        ADD_FAILURE() << at << " element " << i << ": expected " << want << ", got " << have;
      }
    }
    ++compared;
  }
  EXPECT_EQ(compared, checked.size());
  EXPECT_EQ(cpu::models_compiled(), compiled) << "a call compiled code after the build";
}

} // namespace
} // namespace dsc::testing
