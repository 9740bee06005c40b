#include "runtime/cuda/ChooseImage.h"

namespace dsc::runtime::cuda {

std::string describe_image(const dsc_cuda_image& image) {
  return (image.is_ptx ? "compute_" : "sm_") + std::to_string(image.arch) +
         (image.is_ptx ? " (PTX)" : " (cubin)");
}

int choose_image(const dsc_cuda_module& module, int device_arch, std::string* error) {
  int exact = -1, same_major = -1, ptx = -1;
  const int count = module.images ? module.num_images : 0;
  for (int i = 0; i < count; ++i) {
    const dsc_cuda_image& image = module.images[i];
    if (!image.data || image.size <= 0 || image.arch > device_arch) continue;
    if (image.is_ptx) {
      if (ptx < 0 || image.arch > module.images[ptx].arch) ptx = i;
    } else if (image.arch == device_arch) {
      if (exact < 0) exact = i;
    } else if (image.arch / 10 == device_arch / 10) {
      if (same_major < 0 || image.arch > module.images[same_major].arch) same_major = i;
    }
  }
  if (exact >= 0) return exact;
  if (same_major >= 0) return same_major;
  if (ptx >= 0) return ptx;
  if (error) {
    std::string images;
    for (int i = 0; i < count; ++i) {
      const dsc_cuda_image& image = module.images[i];
      if (image.data && image.size > 0)
        images += (images.empty() ? "" : ", ") + describe_image(image);
    }
    *error = "module '" + std::string(module.name ? module.name : "?") + "' has no image for sm_" +
             std::to_string(device_arch) + ": " +
             (images.empty() ? "it has none" : "it has " + images);
  }
  return -1;
}

} // namespace dsc::runtime::cuda
