#pragma once
// A product's epilogue (passes/legalize/Epilogue.h) that the vendor's GEMM finishes itself:
// cuBLASLt adds a bias, one value per column, and may apply GELU's tanh approximation, before
// it stores the product (runtime/cuda/CublasLt.h). fuse asks this for a cublas.sgemm product,
// whose routine runs no epilogue prim.
//
// The epilogue is recognised by form, not by sampling or printed text: its element must be
// structurally equal (ir/StructuralEqual.h) to what legalize writes for `product + bias`
// (either order), or for nn.gelu_tanh of that, over f32, with the bias read whole at the
// column. nn.gelu_tanh's form is made from its body in the module's own import of stdlib/nn.dsc,
// and must also be the formula cuBLASLt computes: a change to the stdlib's formula keeps the
// epilogue a kernel (correct, and lit fuse/vendor_epilogue.test fails) instead of silently
// computing the vendor's. ReLU is left out on purpose: cuBLASLt's max(x, 0) turns NaN into 0, where dsc's
// maximum keeps it (cublaslt.sgemm_bias_relu is there for hand-written externs).

#include <optional>
#include <string>

#include "ir/Target.h"
#include "passes/legalize/ComputeDesc.h"

namespace dsc::passes::lowering {

struct VendorEpilogue {
  const ir::LibraryRoutine* routine; // cublaslt.sgemm_bias
  size_t bias_input;                 // the epilogue's input that is the bias
};

// Whether products of `routine` may take a vendor epilogue: a routine of the table extends
// them with a bias (cublas.sgemm).
bool takes_vendor_epilogues(const ir::LibraryRoutine& routine);

// The routine that finishes `epilogue` (make_epilogue's map over [R, N], whose one output is
// a product of `routine_of_product`), among those `target` offers; `module` is the one being
// legalized (its imports define the stdlib's activations). nullopt with `*why` set when there
// is none.
std::optional<VendorEpilogue> match_vendor_epilogue(const ComputeDesc& epilogue,
                                                    const ir::LibraryRoutine& routine_of_product,
                                                    const ir::Module& module,
                                                    const ir::Target& target, std::string* why);

} // namespace dsc::passes::lowering
