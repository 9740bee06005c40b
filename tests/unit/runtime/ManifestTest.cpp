#include "runtime/Manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dsc::runtime {
namespace {

using ::testing::HasSubstr;

Manifest sample() {
  Manifest m;
  FunctionInfo layer;
  layer.name = "layer";
  layer.host_symbol = "dsc_host_layer";
  layer.params = {
      {"x", "f32", {"B", "S", "768"}}, {"mask", "bool", {"B", "S"}}, {"scale", "f32", {}}};
  // output0 is x updated in place.
  layer.outputs = {{"output0", "f32", {"B", "S", "768"}, 0}, {"output1", "i64", {"B*S/2"}}};
  layer.where_clauses = {"1 <= S && S <= 512", "B >= 1"};
  layer.arena_bytes = "B*S*3072 + 64";
  layer.peak_bytes = "B*S*3072";
  FunctionInfo empty;
  empty.name = "nothing";
  empty.host_symbol = "_nothing2";
  empty.arena_bytes = "0";
  empty.peak_bytes = "0";
  m.functions = {layer, empty};
  return m;
}

void expect_equal(const TensorInfo& a, const TensorInfo& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.dims, b.dims);
  EXPECT_EQ(a.updates_param, b.updates_param);
}

TEST(ManifestJson, RoundTrip) {
  Manifest m = sample();
  std::string text = to_json(m);
  Manifest back;
  std::string error;
  ASSERT_TRUE(from_json(text, &back, &error)) << error << "\n" << text;
  EXPECT_EQ(back.version, 7);
  ASSERT_EQ(back.functions.size(), m.functions.size());
  for (size_t f = 0; f < m.functions.size(); ++f) {
    const FunctionInfo& a = m.functions[f];
    const FunctionInfo& b = back.functions[f];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.host_symbol, b.host_symbol);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.arena_bytes, b.arena_bytes);
    EXPECT_EQ(a.where_clauses, b.where_clauses);
    EXPECT_EQ(a.peak_bytes, b.peak_bytes);
    ASSERT_EQ(a.params.size(), b.params.size());
    for (size_t i = 0; i < a.params.size(); ++i)
      expect_equal(a.params[i], b.params[i]);
    ASSERT_EQ(a.outputs.size(), b.outputs.size());
    for (size_t i = 0; i < a.outputs.size(); ++i)
      expect_equal(a.outputs[i], b.outputs[i]);
  }
  EXPECT_EQ(to_json(back), text);
}

TEST(ManifestJson, JsonLayout) {
  Manifest m;
  FunctionInfo f;
  f.name = "f";
  f.host_symbol = "f_host";
  f.params = {{"x", "f32", {"n"}}};
  f.outputs = {{"output0", "f32", {"n"}}};
  f.arena_bytes = "0";
  f.peak_bytes = "0";
  m.functions = {f};
  EXPECT_EQ(to_json(m), R"({"version":7,"functions":[{"name":"f","host_symbol":"f_host","device":"cpu",)"
                        R"("params":[{"name":"x","dtype":"f32","dims":["n"]}],)"
                        R"("outputs":[{"name":"output0","dtype":"f32","dims":["n"],"updates_param":-1}],)"
                        R"("where_clauses":[],"arena_bytes":"0","peak_bytes":"0"}]})");
}

TEST(ManifestJson, TypeStringAndFind) {
  Manifest m = sample();
  EXPECT_EQ(m.functions[0].params[0].type_string(), "f32[B, S, 768]");
  EXPECT_EQ(m.functions[0].params[2].type_string(), "f32[]");
  EXPECT_EQ(m.functions[0].outputs[1].type_string(), "i64[B*S/2]");
  ASSERT_NE(m.find("nothing"), nullptr);
  EXPECT_EQ(m.find("nothing")->host_symbol, "_nothing2");
  EXPECT_EQ(m.find("missing"), nullptr);
}

TEST(ManifestJson, EmptyFunctionList) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(from_json(R"({"version": 7, "functions": []})", &m, &error)) << error;
  EXPECT_TRUE(m.functions.empty());
}

// A valid function object with one field replaced (or removed, for an empty replacement).
std::string with_function(const std::string& key, const std::string& value) {
  std::string fields[][2] = {{"name", R"("f")"},
                             {"host_symbol", R"("f_host")"},
                             {"device", R"("cpu")"},
                             {"params", R"([{"name":"x","dtype":"f32","dims":["n"]}])"},
                             {"outputs", R"([{"name":"output0","dtype":"f32","dims":["n"],"updates_param":-1}])"},
                             {"where_clauses", R"(["n >= 2"])"},
                             {"arena_bytes", R"("0")"},
                             {"peak_bytes", R"("0")"}};
  std::string s = "{";
  bool first = true;
  for (auto& [k, v] : fields) {
    std::string text = k == key ? value : v;
    if (text.empty()) continue;
    s += std::string(first ? "" : ",") + "\"" + k + "\":" + text;
    first = false;
  }
  if (key == "extra") s += ",\"extra\":" + value;
  return R"({"version":7,"functions":[)" + s + "}]}";
}

std::string error_of(const std::string& text) {
  Manifest m = sample();
  std::string error;
  EXPECT_FALSE(from_json(text, &m, &error)) << text;
  EXPECT_EQ(m.functions.size(), 2u) << "a failed read must leave the output alone";
  return error;
}

TEST(ManifestJson, Malformed) {
  EXPECT_THAT(error_of(""), HasSubstr("the manifest is not valid JSON"));
  EXPECT_THAT(error_of("{\"version\": 1, \"functions\": ["), HasSubstr("not valid JSON"));
  EXPECT_THAT(error_of(R"({"version":7,"functions":[]} trailing)"), HasSubstr("not valid JSON"));
  EXPECT_THAT(error_of(R"({"version":7,"functions":[]} // comment)"), HasSubstr("not valid JSON"));
  EXPECT_EQ(error_of("[1, 2]"), "the manifest is an array, not an object");
  EXPECT_EQ(error_of(R"({"functions":[]})"), "the manifest: missing key 'version'");
  EXPECT_EQ(error_of(R"({"version":7})"), "the manifest: missing key 'functions'");
  EXPECT_EQ(error_of(R"({"version":7,"functions":[],"x":0})"), "the manifest: unexpected key 'x'");
  EXPECT_EQ(error_of(R"({"version":4,"functions":[]})"),
            "unsupported manifest version 4 (this runtime reads 7)");
  EXPECT_EQ(error_of(R"({"version":"1","functions":[]})"),
            "the manifest: 'version' is a string, not an integer");
  EXPECT_EQ(error_of(R"({"version":7.0,"functions":[]})"),
            "the manifest: 'version' is a number, not an integer");
  EXPECT_EQ(error_of(R"({"version":7,"functions":{}})"),
            "the manifest: 'functions' is an object, not an array");
  EXPECT_EQ(error_of(R"({"version":7,"functions":[null]})"), "functions[0] is null, not an object");
  EXPECT_EQ(error_of(R"({"version":7,"version":4,"functions":[]})"),
            "the manifest has a duplicate key 'version'");

  EXPECT_EQ(error_of(with_function("name", "")), "functions[0]: missing key 'name'");
  EXPECT_EQ(error_of(with_function("name", R"("")")), "functions[0].name is an empty string");
  EXPECT_EQ(error_of(with_function("name", "7")), "functions[0].name is a number, not a string");
  EXPECT_EQ(error_of(with_function("extra", "true")), "functions[0]: unexpected key 'extra'");
  EXPECT_EQ(error_of(with_function("host_symbol", R"("f-host")")),
            "functions[0].host_symbol: 'f-host' is not a C identifier");
  EXPECT_EQ(error_of(with_function("host_symbol", R"("9f")")),
            "functions[0].host_symbol: '9f' is not a C identifier");
  EXPECT_EQ(error_of(with_function("params", R"({"x":1})")),
            "functions[0].params is an object, not an array");
  EXPECT_EQ(error_of(with_function("params", R"([{"name":"x","dtype":"f33","dims":[]}])")),
            "functions[0].params[0].dtype: unknown dtype 'f33' (known: bool i8 i32 i64 f16 bf16 "
            "f32 f64)");
  EXPECT_EQ(error_of(with_function("params", R"([{"name":"x","dtype":"f32","dims":"n"}])")),
            "functions[0].params[0].dims is a string, not an array");
  EXPECT_EQ(error_of(with_function("params", R"([{"name":"x","dtype":"f32","dims":["n",3]}])")),
            "functions[0].params[0].dims[1] is a number, not a string");
  EXPECT_EQ(error_of(with_function("params", R"([{"name":"x","dtype":"f32","dims":[""]}])")),
            "functions[0].params[0].dims[0] is an empty string");
  EXPECT_EQ(error_of(with_function("params", R"([{"name":"x","dtype":"f32"}])")),
            "functions[0].params[0]: missing key 'dims'");
  EXPECT_EQ(error_of(with_function("params", R"([{"name":"x","dtype":"f32","dims":[],"rank":0}])")),
            "functions[0].params[0]: unexpected key 'rank'");
  EXPECT_EQ(error_of(with_function(
                "params",
                R"([{"name":"x","dtype":"f32","dims":[]},{"name":"x","dtype":"f32","dims":[]}])")),
            "functions[0].params[1]: duplicate name 'x'");
  EXPECT_EQ(error_of(with_function("outputs", R"([{"name":"o","dtype":true,"dims":[],"updates_param":-1}])")),
            "functions[0].outputs[0].dtype is a boolean, not a string");
  EXPECT_EQ(error_of(with_function("outputs", R"([{"name":"o","dtype":"f32","dims":["n"]}])")),
            "functions[0].outputs[0]: missing key 'updates_param'");
  EXPECT_EQ(error_of(with_function("outputs", R"([{"name":"o","dtype":"f32","dims":["n"],"updates_param":1}])")),
            "functions[0].outputs[0] updates parameter 1, which does not exist");
  EXPECT_EQ(error_of(with_function("outputs", R"([{"name":"o","dtype":"i64","dims":["n"],"updates_param":0}])")),
            "functions[0].outputs[0] updates parameter 0 (f32[n]) but is i64[n]");
  EXPECT_EQ(error_of(with_function("outputs", R"([{"name":"o","dtype":"f32","dims":["n"],"updates_param":-2}])")),
            "functions[0].outputs[0].updates_param is -2, not -1 or a parameter's index");
  EXPECT_EQ(error_of(with_function("arena_bytes", "0")),
            "functions[0].arena_bytes is a number, not a string");
  EXPECT_EQ(error_of(with_function("peak_bytes", "")), "functions[0]: missing key 'peak_bytes'");
  EXPECT_EQ(error_of(with_function("where_clauses", "")), "functions[0]: missing key 'where_clauses'");
  EXPECT_EQ(error_of(with_function("where_clauses", R"("n >= 2")")),
            "functions[0].where_clauses is a string, not an array");
  EXPECT_EQ(error_of(with_function("where_clauses", R"([""])")), "functions[0].where_clauses[0] is an empty string");
  EXPECT_EQ(error_of(with_function("device", "")), "functions[0]: missing key 'device'");
  EXPECT_EQ(error_of(with_function("device", R"("tpu")")),
            "functions[0].device: 'tpu' is not a device (cpu or cuda)");

  std::string f = with_function("name", R"("f")");
  std::string body = f.substr(f.find("[{") + 1, f.rfind("}]") - f.find("[{"));
  EXPECT_EQ(error_of(R"({"version":7,"functions":[)" + body + "," + body + "]}"),
            "functions[1]: duplicate function name 'f'");
}

TEST(ManifestJson, ValidVariantsOfTheMalformedOnes) {
  // The helper's unmodified document is valid, so each failure above is the field's fault.
  Manifest m;
  std::string error;
  EXPECT_TRUE(from_json(with_function("", ""), &m, &error)) << error;
  EXPECT_EQ(m.functions.at(0).params.at(0).type_string(), "f32[n]");
}

} // namespace
} // namespace dsc::runtime
