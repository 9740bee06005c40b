#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0), C order, little-endian. The dtypes are
// those dsc and numpy share: <f2 <f4 <f8 |i1 <i4 <i8 and |b1 (bool). bfloat16 has no numpy
// descr, so a bf16 tensor cannot be written.
//
// Reading is strict, as numpy's own reader is: the header must be exactly the dict numpy
// writes (keys descr, fortran_order, shape; any order, optional trailing comma), Fortran order
// and big-endian data are refused, and the data must be exactly shape * itemsize bytes with
// nothing after it. A malformed file gives an error string and nullopt; it never crashes and
// never reads past the buffer.

#include <optional>
#include <string>
#include <string_view>

#include "runtime/Tensor.h"

namespace dsc::runtime {

// Whether a tensor of this dtype can be written as .npy (every dsc dtype but bf16).
bool npy_supports(DLDataType dtype);

std::optional<Tensor> read_npy_bytes(std::string_view bytes, std::string* error);
// Errors are prefixed with the path.
std::optional<Tensor> read_npy(const std::string& path, std::string* error);

// The file as numpy 1.x writes it: a v1.0 header (v2.0 when the header needs more than 65535
// bytes), padded with spaces so that the data starts at a multiple of 64 bytes.
// Precondition: t.defined() && npy_supports(t.dtype()).
std::string npy_bytes(const Tensor& t);
// Checks the precondition of npy_bytes and reports I/O failures.
bool write_npy(const std::string& path, const Tensor& t, std::string* error);

} // namespace dsc::runtime
