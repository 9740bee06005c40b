// Which image of a compiled CUDA module a device loads (runtime/cuda/ChooseImage.h): a pure
// function, so every rule is tested without a GPU.
#include "runtime/cuda/ChooseImage.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dsc::runtime::cuda {
namespace {

const char kBytes[] = "image bytes";

dsc_cuda_image cubin(int arch) {
  return dsc_cuda_image{arch, 0, kBytes, sizeof kBytes};
}
dsc_cuda_image ptx(int arch) {
  return dsc_cuda_image{arch, 1, kBytes, sizeof kBytes};
}

// The chosen image as text ("sm_80 (cubin)"), or the error.
std::string choose(std::vector<dsc_cuda_image> images, int device_arch) {
  dsc_cuda_module module{"layer", static_cast<int32_t>(images.size()), images.data(), "", nullptr};
  std::string error;
  int index = choose_image(module, device_arch, &error);
  if (index < 0) return "error: " + error;
  EXPECT_EQ(error, "");
  return describe_image(images[static_cast<size_t>(index)]);
}

TEST(CudaChooseImage, ExactCubinFirst) {
  EXPECT_EQ(choose({ptx(80), cubin(80), cubin(90), cubin(86)}, 90), "sm_90 (cubin)");
  EXPECT_EQ(choose({cubin(86), cubin(80)}, 86), "sm_86 (cubin)");
}

TEST(CudaChooseImage, HighestCubinOfTheSameMajorBelow) {
  EXPECT_EQ(choose({cubin(80), cubin(86), ptx(80)}, 89), "sm_86 (cubin)");
  EXPECT_EQ(choose({cubin(86), cubin(80)}, 87), "sm_86 (cubin)");
  // A cubin of a newer minor version does not run, nor one of an older major version.
  EXPECT_EQ(choose({cubin(89), cubin(80)}, 86), "sm_80 (cubin)");
  EXPECT_EQ(choose({cubin(80), ptx(75)}, 90), "compute_75 (PTX)");
}

TEST(CudaChooseImage, HighestPtxAtOrBelowTheDevice) {
  EXPECT_EQ(choose({ptx(70), ptx(80), ptx(90)}, 86), "compute_80 (PTX)");
  EXPECT_EQ(choose({ptx(90), cubin(90)}, 100), "compute_90 (PTX)");
  EXPECT_EQ(choose({ptx(86)}, 86), "compute_86 (PTX)");
}

TEST(CudaChooseImage, NothingFits) {
  EXPECT_EQ(choose({cubin(80), ptx(80)}, 75),
            "error: module 'layer' has no image for sm_75: it has sm_80 (cubin), "
            "compute_80 (PTX)");
  EXPECT_EQ(choose({cubin(80)}, 90),
            "error: module 'layer' has no image for sm_90: it has sm_80 (cubin)");
  EXPECT_EQ(choose({}, 90), "error: module 'layer' has no image for sm_90: it has none");
}

TEST(CudaChooseImage, ImagesWithoutDataAreIgnored) {
  dsc_cuda_image empty = cubin(90);
  empty.data = nullptr;
  dsc_cuda_image zero = cubin(90);
  zero.size = 0;
  EXPECT_EQ(choose({empty, zero, ptx(80)}, 90), "compute_80 (PTX)");
  EXPECT_EQ(choose({empty}, 90), "error: module 'layer' has no image for sm_90: it has none");
  // A module whose image array is null.
  dsc_cuda_module module{nullptr, 3, nullptr, nullptr, nullptr};
  std::string error;
  EXPECT_EQ(choose_image(module, 90, &error), -1);
  EXPECT_EQ(error, "module '?' has no image for sm_90: it has none");
}

} // namespace
} // namespace dsc::runtime::cuda
