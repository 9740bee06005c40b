#include "passes/legalize/VendorEpilogue.h"

#include <functional>
#include <map>
#include <variant>
#include <vector>

#include "ir/Intrinsics.h"
#include "ir/OpRegistry.h"
#include "ir/StructuralEqual.h"
#include "passes/legalize/Families.h"
#include "passes/legalize/Scalar.h"

namespace dsc::passes::lowering {

namespace {

// What cuBLASLt's CUBLASLT_EPILOGUE_GELU_BIAS computes of x = product + bias (its
// documentation's formula), as legalize would write it over f32.
ir::PrimExpr cublaslt_gelu(const ir::PrimExpr& x) {
  using ir::BinaryOp;
  const ir::DType f = ir::DType::F32;
  ir::PrimExpr cube = binary(
      BinaryOp::Mul, binary(BinaryOp::Mul, binary(BinaryOp::Mul, float_imm(f, 0.044715), x), x), x);
  ir::PrimExpr inner =
      binary(BinaryOp::Mul, float_imm(f, 0.7978845608028654), binary(BinaryOp::Add, x, cube));
  ir::PrimExpr half =
      binary(BinaryOp::Add, float_imm(f, 1.0), intrinsic(ir::IntrinsicId::tanh, {inner}));
  return binary(BinaryOp::Mul, binary(BinaryOp::Mul, x, float_imm(f, 0.5)), half);
}

// Each vendor epilogue: the stdlib function that is its activation (none for the bias alone),
// and what the vendor computes. An epilogue is taken when its element is the stdlib function's
// body at product + bias AND that is what the vendor computes, both structurally: were
// stdlib/nn.dsc's formula to change, the vendor's would no longer be the stdlib's, and the
// epilogue would stay a kernel (and lit fuse/vendor_epilogue.test fail) rather than compute
// something else. cuBLASLt's ReLU is left out on purpose (VendorEpilogue.h).
struct Activation {
  ir::RoutineRole role;
  const char* stdlib_function;                  // null: the bias alone
  ir::PrimExpr (*vendor)(const ir::PrimExpr& x); // null: x itself
};
constexpr Activation kActivations[] = {
    {ir::RoutineRole::MatmulBias, nullptr, nullptr},
    {ir::RoutineRole::MatmulBiasGeluTanh, "nn.gelu_tanh", cublaslt_gelu},
};

// The element the body of `fn` (a function of one tensor made of elementwise arithmetic and
// unary float intrinsics over it and float literals, as stdlib/nn.dsc's activations are)
// computes at `x`, written as legalize writes those ops over f32; nullopt for any other body.
std::optional<ir::PrimExpr> element_of(const ir::Function& fn, const ir::PrimExpr& x) {
  const ir::Block* block = fn.body.as<ir::Block>();
  if (fn.params.size() != 1 || !block) return std::nullopt;
  std::map<std::string, ir::PrimExpr> values = {{fn.params[0]->name, x}};
  std::function<std::optional<ir::PrimExpr>(const ir::Expr&)> value =
      [&](const ir::Expr& e) -> std::optional<ir::PrimExpr> {
    if (const ir::Var* v = e.as<ir::Var>()) {
      auto it = values.find(v->name);
      return it == values.end() ? std::nullopt : std::optional<ir::PrimExpr>(it->second);
    }
    if (const ir::Literal* l = e.as<ir::Literal>()) {
      if (const double* d = std::get_if<double>(&l->value)) return float_imm(ir::DType::F32, *d);
      return std::nullopt;
    }
    const ir::Call* call = e.as<ir::Call>();
    if (!call || !call->kwargs.empty()) return std::nullopt;
    const std::optional<ir::OpId> op = ir::op_id(call->callee);
    if (!op) return std::nullopt;
    std::vector<ir::PrimExpr> args;
    for (const ir::Expr& a : call->args) {
      std::optional<ir::PrimExpr> v = value(a);
      if (!v) return std::nullopt;
      args.push_back(*v);
    }
    switch (*op) {
    case ir::OpId::add:
    case ir::OpId::sub:
    case ir::OpId::mul:
    case ir::OpId::div:
      if (args.size() != 2) return std::nullopt;
      return binary(binary_op(*op), args[0], args[1]);
    default:
      break;
    }
    const ir::IntrinsicDef* fn_row = ir::find_intrinsic(call->callee);
    if (!fn_row || fn_row->arity != 1 || fn_row->domain != ir::IntrinsicDomain::Float ||
        args.size() != 1)
      return std::nullopt;
    return intrinsic(fn_row->id, {args[0]});
  };
  for (const ir::Binding& b : block->bindings) {
    if (b.vars.size() != 1) return std::nullopt;
    std::optional<ir::PrimExpr> v = value(b.value);
    if (!v) return std::nullopt;
    values[b.vars[0]->name] = *v;
  }
  return value(block->result);
}

} // namespace

bool takes_vendor_epilogues(const ir::LibraryRoutine& routine) {
  return ir::extending_routine(routine.id, ir::RoutineRole::MatmulBias, routine.target) != nullptr;
}

std::optional<VendorEpilogue> match_vendor_epilogue(const ComputeDesc& epilogue,
                                                    const ir::LibraryRoutine& routine_of_product,
                                                    const ir::Module& module,
                                                    const ir::Target& target, std::string* why) {
  *why = "cuBLASLt finishes a bias, or a bias and GELU's tanh approximation (nn.gelu_tanh), "
         "over f32; this epilogue is neither";
  if (epilogue.kind != ComputeDesc::Kind::Map || epilogue.maps.size() != 1 ||
      epilogue.outputs.size() != 1 || epilogue.inputs.size() != 1 ||
      epilogue.outputs[0].dtype != ir::DType::F32 ||
      epilogue.inputs[0].buffer.dtype != ir::DType::F32)
    return std::nullopt;
  const MapOutput& map = epilogue.maps[0];
  if (map.space.vars.size() != 2 || !map.element.lets.empty()) return std::nullopt;
  const symbolic::Expr& col = map.space.vars[1];
  ir::PrimExpr product = ir::Load::make(ir::DType::F32, epilogue.outputs[0].name,
                                        {index(map.space.vars[0]), index(col)});
  // The bias, read whole at the column: [col], or [0, ..., col] for leading dims of 1.
  const ir::Buffer& bias = epilogue.inputs[0].buffer;
  if (bias.shape.empty()) return std::nullopt;
  std::vector<ir::PrimExpr> at(bias.shape.size() - 1, index(symbolic::Expr(0)));
  at.push_back(index(col));
  ir::PrimExpr bias_value = ir::Load::make(ir::DType::F32, bias.name, std::move(at));
  for (const ir::PrimExpr& x : {binary(ir::BinaryOp::Add, product, bias_value),
                                binary(ir::BinaryOp::Add, bias_value, product)}) {
    for (const Activation& activation : kActivations) {
      std::optional<ir::PrimExpr> expected = x;
      if (activation.stdlib_function) {
        // The activation as the module's own import defines it: a module that does not import
        // it cannot have inlined it.
        Ref<ir::Function> fn = module.imported_function(activation.stdlib_function);
        expected = fn ? element_of(*fn, x) : std::nullopt;
      }
      if (!expected || !ir::structural_equal(map.element.value, *expected)) continue;
      if (activation.vendor && !ir::structural_equal(*expected, activation.vendor(x))) continue;
      const ir::LibraryRoutine* routine = ir::extending_routine(
          routine_of_product.id, activation.role, routine_of_product.target);
      if (!routine || !target.offers(*routine)) {
        *why = std::string("the target offers no routine that finishes this epilogue after ") +
               routine_of_product.symbol;
        return std::nullopt;
      }
      return VendorEpilogue{routine, 0};
    }
  }
  return std::nullopt;
}

} // namespace dsc::passes::lowering
