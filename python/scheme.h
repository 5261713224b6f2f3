#pragma once
// Where pip installs each part of a wheel (sysconfig's scheme keys), as absolute paths inside the image.
#include <string>

namespace trainpack::python {

struct InstallScheme {
  std::string purelib;  // "/usr/local/lib/python3.11/dist-packages"
  std::string platlib;
  std::string headers;  // include dir + "/" + project name as written (pip's `headers` key)
  std::string scripts;  // "/usr/local/bin"
  std::string data;     // "/usr/local"
};

}  // namespace trainpack::python
