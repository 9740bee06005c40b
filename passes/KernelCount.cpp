#include "passes/KernelCount.h"

#include "ir/Functor.h"

namespace dsc::passes {

KernelCount count_kernels(const ir::Expr& body,
                          const std::function<const ir::Module::Decl*(const std::string&)>& find) {
  struct Calls : ir::IRVisitor {
    const std::function<const ir::Module::Decl*(const std::string&)>& find;
    KernelCount count;
    explicit Calls(const std::function<const ir::Module::Decl*(const std::string&)>& f) : find(f) {}

  protected:
    void visit_node(const ir::Call* call) override {
      if (const ir::Module::Decl* d = find(call->callee)) {
        count.generated += d->prim ? 1 : 0;
        count.library += d->ext ? 1 : 0;
        count.with_epilogue += d->ext && !d->ext->epilogue.empty() ? 1 : 0;
      }
      ir::IRVisitor::visit_node(call);
    }
  } calls(find);
  calls.visit(body);
  return calls.count;
}

} // namespace dsc::passes
