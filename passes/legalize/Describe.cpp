// The dispatch of the first half of legalize: a call's arguments bound to its op's signature,
// then described by the op's family (ir/Ops.def).

#include "passes/legalize/Families.h"

namespace dsc::passes::lowering {

std::optional<ComputeDesc> describe(const ir::Call& call, FnContext& ctx) {
  const ir::OpDef* op = ir::find_op(call.callee);
  internal_assert(op) << "legalize: describe of '" << call.callee << "', which is no op";
  std::vector<ir::Type> arg_types, kwarg_types;
  for (const ir::Expr& a : call.args)
    arg_types.push_back(a->type);
  for (const ir::KeywordArg& k : call.kwargs)
    kwarg_types.push_back(k.value->type);
  DiagnosticEngine scratch(ctx.pass().diags.sources());
  std::optional<ir::BoundArgs> args =
      ir::bind_arguments(*op, call, arg_types, kwarg_types, scratch);
  if (!args) {
    ctx.pass().diags.error(ctx.loc(), "legalize: cannot bind the arguments of '" + call.callee +
                                          "': " + scratch.diagnostics().front().message);
    return std::nullopt;
  }
  const ir::Type& type = call.type;
  switch (op->family) {
  case ir::OpFamily::Elementwise:
    return describe_elementwise(call, *args, type, ctx);
  case ir::OpFamily::Reduce:
    return describe_reduce(call, *args, type, ctx);
  case ir::OpFamily::Layout:
    return describe_layout(call, *args, type, ctx);
  case ir::OpFamily::Matmul:
    return describe_matmul(call, *args, type, ctx);
  case ir::OpFamily::Conv:
    return describe_conv(call, *args, type, ctx);
  case ir::OpFamily::Pool:
    return describe_pool(call, *args, type, ctx);
  case ir::OpFamily::Creation:
    return describe_creation(call, *args, type, ctx);
  }
  return std::nullopt;
}

} // namespace dsc::passes::lowering
