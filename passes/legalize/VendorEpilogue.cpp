#include "passes/legalize/VendorEpilogue.h"

#include <vector>

#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "passes/legalize/Scalar.h"

namespace dsc::passes::lowering {

namespace {

// nn.gelu_tanh(x) as legalize writes it from stdlib/nn.dsc:
// x * 0.5 * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))).
ir::PrimExpr gelu_tanh(const ir::PrimExpr& x) {
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

} // namespace

bool takes_vendor_epilogues(const ir::LibraryRoutine& routine) {
  return ir::extending_routine(routine.id, ir::RoutineRole::MatmulBias, routine.target) != nullptr;
}

std::optional<VendorEpilogue> match_vendor_epilogue(const ComputeDesc& epilogue,
                                                    const ir::LibraryRoutine& routine_of_product,
                                                    const ir::Target& target, std::string* why) {
  *why = "cuBLASLt finishes a bias, or a bias and GELU's tanh approximation, over f32; this "
         "epilogue is neither";
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
  const std::string value = ir::to_string(map.element.value);
  for (const ir::PrimExpr& x : {binary(ir::BinaryOp::Add, product, bias_value),
                                binary(ir::BinaryOp::Add, bias_value, product)}) {
    std::optional<ir::RoutineRole> role;
    if (value == ir::to_string(x))
      role = ir::RoutineRole::MatmulBias;
    else if (value == ir::to_string(gelu_tanh(x)))
      role = ir::RoutineRole::MatmulBiasGeluTanh;
    if (!role) continue;
    const ir::LibraryRoutine* routine =
        ir::extending_routine(routine_of_product.id, *role, routine_of_product.target);
    if (!routine || !target.offers(*routine)) {
      *why = std::string("the target offers no routine that finishes this epilogue after ") +
             routine_of_product.symbol;
      return std::nullopt;
    }
    return VendorEpilogue{routine, 0};
  }
  return std::nullopt;
}

} // namespace dsc::passes::lowering
