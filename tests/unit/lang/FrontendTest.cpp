// The front end's file handling: parse_file, imports from the stdlib directories, and the
// directories themselves.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "LangTestUtil.h"

namespace dsc::lang {
namespace {

namespace fs = std::filesystem;
using testing::parse;

// A fresh directory that is removed with the object.
class TempDir {
public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("dsc-lang-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }

private:
  fs::path path_;
};

const char* const kNN = R"(
fn relu(x: tensor) { return maximum(x, 0.0) }
fn softmax(x: tensor, axis: int = -1) {
  let e = exp(x - max(x, axis=axis, keepdims=true))
  return e / sum(e, axis=axis, keepdims=true)
}
)";

TEST(Frontend, ImportLoadsTheModule) {
  TempDir dir;
  dir.write("nn.dsc", kNN);
  auto p = parse("import nn\nfn f(x: f32[B, 10]) { return nn.softmax(nn.relu(x), axis=1) }",
                 {dir.path()});
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& m = *p->module;
  ASSERT_EQ(m.imports.size(), 1u);
  EXPECT_EQ(m.imports[0].name, "nn");
  EXPECT_EQ(m.imports[0].loc.line, 1u);
  EXPECT_EQ(m.imports[0].loc.col, 8u);
  ASSERT_TRUE(m.imports[0].module);
  EXPECT_TRUE(m.imported_function("nn.softmax").defined());
  EXPECT_EQ(m.imported_function("nn.softmax")->params.size(), 2u);
  const ir::Call* call = m.function("f")->body.as<ir::Block>()->result.as<ir::Call>();
  ASSERT_TRUE(call);
  EXPECT_EQ(call->callee, "nn.softmax");
  EXPECT_EQ(call->args[0].as<ir::Call>()->callee, "nn.relu");
}

TEST(Frontend, FirstDirectoryWins) {
  TempDir a, b;
  a.write("nn.dsc", "fn first(x: tensor) { return x }");
  b.write("nn.dsc", "fn second(x: tensor) { return x }");
  auto p = parse("import nn\nfn f(x: f32[B]) { return nn.first(x) }", {a.path(), b.path()});
  ASSERT_TRUE(p->module) << p->printed();
  EXPECT_TRUE(p->module->imported_function("nn.first").defined());
}

TEST(Frontend, MissingModuleListsTheDirectories) {
  TempDir a, b;
  auto p = parse("fn f(x: f32[B]) { return x }\nimport nnx", {a.path(), b.path()});
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->errors(), "2:8: cannot find module 'nnx'\n");
  EXPECT_EQ(p->notes(), "looked for nnx.dsc in: " + a.path() + ", " + b.path() + "\n");
}

TEST(Frontend, UnknownFunctionOfAModule) {
  TempDir dir;
  dir.write("nn.dsc", kNN);
  auto p = parse("import nn\nfn f(x: f32[B]) { return nn.sofmax(x) }", {dir.path()});
  EXPECT_EQ(p->errors(), "2:26: module 'nn' has no function 'sofmax'\n");
  EXPECT_EQ(p->notes(), "did you mean 'softmax'?\n");
}

TEST(Frontend, ErrorsInsideAnImportPointIntoIt) {
  TempDir dir;
  dir.write("nn.dsc", "fn relu(x: tensor) {\n  return maximum(x, zero)\n}\n");
  auto p = parse("import nn\nfn f(x: f32[B]) { return nn.relu(x) }", {dir.path()});
  EXPECT_FALSE(p->module);
  ASSERT_EQ(p->diags.error_count(), 1u);
  const Diagnostic& d = *p->first();
  EXPECT_EQ(d.message, "unknown name 'zero'");
  EXPECT_EQ(p->sources.name(d.loc.file), (fs::path(dir.path()) / "nn.dsc").string());
  EXPECT_EQ(d.loc.line, 2u);
  EXPECT_EQ(d.loc.col, 21u);
}

TEST(Frontend, ImportCycle) {
  TempDir dir;
  dir.write("a.dsc", "import b\nfn fa(x: tensor) { return x }");
  dir.write("b.dsc", "import a\nfn fb(x: tensor) { return x }");
  auto p = parse("import a\nfn f(x: f32[B]) { return a.fa(x) }", {dir.path()});
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->first_error(), "import cycle: a.dsc -> b.dsc -> a.dsc");
  EXPECT_NE(p->sources.name(p->first()->loc.file).find("b.dsc"), std::string::npos);
}

TEST(Frontend, SelfImport) {
  TempDir dir;
  dir.write("a.dsc", "import a\nfn fa(x: tensor) { return x }");
  auto p = parse("import a", {dir.path()});
  EXPECT_EQ(p->first_error(), "import cycle: a.dsc -> a.dsc");
}

TEST(Frontend, DiamondImportsLoadOnce) {
  TempDir dir;
  dir.write("b.dsc", "import d\nfn fb(x: tensor) { return d.fd(x) }");
  dir.write("c.dsc", "import d\nfn fc(x: tensor) { return d.fd(x) }");
  dir.write("d.dsc", "fn fd(x: tensor) { return x }");
  auto p = parse("import b\nimport c\nfn f(x: f32[B]) { return c.fc(b.fb(x)) }", {dir.path()});
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& b = *p->module->imports[0].module;
  const ir::Module& c = *p->module->imports[1].module;
  EXPECT_EQ(b.imports[0].module.get(), c.imports[0].module.get());
}

TEST(Frontend, DuplicateImport) {
  TempDir dir;
  dir.write("nn.dsc", kNN);
  auto p = parse("import nn\nimport nn", {dir.path()});
  EXPECT_EQ(p->errors(), "2:8: module 'nn' is imported twice\n");
}

TEST(Frontend, ParseFile) {
  TempDir dir;
  dir.write("m.dsc", "fn f(x: f32[B]) { return x }");
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::optional<ir::Module> m = parse_file(dir.path() + "/m.dsc", sources, diags);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->function("f").defined());
  EXPECT_EQ(sources.name(m->function("f")->loc.file), dir.path() + "/m.dsc");
}

TEST(Frontend, ParseFileMissing) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  EXPECT_FALSE(parse_file("/nonexistent/x.dsc", sources, diags));
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message,
            "cannot read '/nonexistent/x.dsc': No such file or directory");
  EXPECT_FALSE(diags.diagnostics()[0].loc.valid());
  std::ostringstream os;
  diags.print(os);
  EXPECT_EQ(os.str(), "error: cannot read '/nonexistent/x.dsc': No such file or directory\n");
}

TEST(Frontend, ParseFileDirectory) {
  TempDir dir;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  EXPECT_FALSE(parse_file(dir.path(), sources, diags));
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message, "cannot read '" + dir.path() + "': Is a directory");
}

TEST(Frontend, DefaultStdlibDirs) {
  ::setenv("DSC_STDLIB_PATH", "/first:/second::/third", 1);
  std::vector<std::string> dirs = default_stdlib_dirs();
  ::unsetenv("DSC_STDLIB_PATH");
  ASSERT_GE(dirs.size(), 4u);
  EXPECT_EQ(dirs[0], "/first");
  EXPECT_EQ(dirs[1], "/second");
  EXPECT_EQ(dirs[2], "/third");
  // Then beside the binary, then the source tree.
  EXPECT_EQ(fs::path(dirs.back()).filename(), "stdlib");
  for (size_t i = 3; i < dirs.size(); ++i)
    EXPECT_FALSE(dirs[i].empty());
  std::vector<std::string> plain = default_stdlib_dirs();
  EXPECT_EQ(plain.size(), dirs.size() - 3);
}

} // namespace
} // namespace dsc::lang
