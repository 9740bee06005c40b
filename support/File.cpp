#include "support/File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dsc {

std::optional<std::string> read_file(const std::string& path, std::string* error) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = std::strerror(errno ? errno : ENOENT);
    return std::nullopt;
  }
  std::string text;
  char buf[65536];
  for (;;) {
    size_t n = std::fread(buf, 1, sizeof(buf), f);
    text.append(buf, n);
    if (n < sizeof(buf)) break;
  }
  // Reading a directory opens fine and fails here (EISDIR).
  bool failed = std::ferror(f) != 0;
  int saved = errno;
  std::fclose(f);
  if (failed) {
    *error = std::strerror(saved ? saved : EIO);
    return std::nullopt;
  }
  return text;
}

bool write_file(const std::string& path, std::string_view bytes, std::string* error) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *error = std::strerror(errno ? errno : EACCES);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int saved = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) *error = std::strerror(saved ? saved : EIO);
  return ok;
}

} // namespace dsc
