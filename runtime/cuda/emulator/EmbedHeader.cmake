# cmake -DINPUT=dsc_cuda_emulator.h -DOUTPUT=EmulatorHeader.cpp -P EmbedHeader.cmake
# Writes a C++ file that defines dsc::runtime::cuda::kEmulatorHeader as INPUT's text, so that
# the runtime can compile kernels for the emulator without the source tree (cuda/Emulator.cpp).
file(READ "${INPUT}" text)
set(delimiter "dsc_emu_header") # at most 16 characters
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )${delimiter}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by EmbedHeader.cmake; do not edit.\n"
  "namespace dsc::runtime::cuda {\n"
  "extern const char kEmulatorHeader[];\n"
  "const char kEmulatorHeader[] = R\"${delimiter}(${text})${delimiter}\";\n"
  "} // namespace dsc::runtime::cuda\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
