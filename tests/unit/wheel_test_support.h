#pragma once
// Test helpers for wheels: zips written with libzip, and small valid wheels (WHEEL, METADATA, entry points and a
// RECORD that lists every member with its hash) for tests that install them.
#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <string>
#include <vector>

#include "python/records.h"

namespace trainpack::test_support {

struct ZipItem {
  std::string name;  // a trailing '/' makes a directory member
  std::string data;
  unsigned mode = 0100644;  // st_mode, file type included: the high half of the external attributes
  zip_int32_t method = ZIP_CM_DEFLATE;
};

// Writes a zip with libzip, members named as given and in that order.
inline void write_zip(const std::filesystem::path& path, const std::vector<ZipItem>& items) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr) << path << ": libzip error " << err;
  for (const ZipItem& it : items) {
    zip_int64_t idx;
    if (it.name.ends_with("/")) {
      idx = zip_dir_add(za, it.name.c_str(), ZIP_FL_ENC_UTF_8);
    } else {
      // libzip reads the buffer at zip_close, while `items` is still alive.
      zip_source_t* src = zip_source_buffer(za, it.data.data(), it.data.size(), 0);
      idx = zip_file_add(za, it.name.c_str(), src, ZIP_FL_ENC_UTF_8);
      if (idx < 0) zip_source_free(src);
      else zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), it.method, 0);
    }
    EXPECT_GE(idx, 0) << it.name << ": " << zip_strerror(za);
    if (idx >= 0)
      zip_file_set_external_attributes(za, static_cast<zip_uint64_t>(idx), 0, ZIP_OPSYS_UNIX, it.mode << 16);
  }
  EXPECT_EQ(zip_close(za), 0) << path;
}

struct WheelSpec {
  std::string name;  // as the file name and the .dist-info directory spell it: "alpha", "Demo_Pkg"
  std::string version;
  std::vector<std::string> requires_dist = {};  // Requires-Dist lines: "beta>=2", "gamma; python_version < \"3.10\""
  std::vector<ZipItem> files = {};              // the distribution's own files: "alpha/__init__.py"
  std::string entry_points = {};                // entry_points.txt; empty: none
  std::string tag = "py3-none-any";
};

inline std::string wheel_filename(const WheelSpec& spec) {
  return spec.name + "-" + spec.version + "-" + spec.tag + ".whl";
}

// `spec` as a wheel in `dir`, named as pip expects; returns its path.
inline std::filesystem::path write_wheel(const std::filesystem::path& dir, const WheelSpec& spec) {
  const std::string dist_info = spec.name + "-" + spec.version + ".dist-info/";
  std::vector<ZipItem> items = spec.files;
  std::string metadata = "Metadata-Version: 2.1\nName: " + spec.name + "\nVersion: " + spec.version + "\n";
  for (const std::string& r : spec.requires_dist) metadata += "Requires-Dist: " + r + "\n";
  items.push_back({dist_info + "METADATA", metadata});
  items.push_back({dist_info + "WHEEL", "Wheel-Version: 1.0\nGenerator: trainpack-tests\nRoot-Is-Purelib: " +
                                            std::string(spec.tag.ends_with("-none-any") ? "true" : "false") +
                                            "\nTag: " + spec.tag + "\n"});
  if (!spec.entry_points.empty()) items.push_back({dist_info + "entry_points.txt", spec.entry_points});
  std::vector<python::RecordRow> rows;
  for (const ZipItem& item : items)
    if (!item.name.ends_with("/"))
      rows.push_back({item.name, python::record_hash(item.data), std::to_string(item.data.size())});
  rows.push_back({dist_info + "RECORD", "", ""});
  items.push_back({dist_info + "RECORD", python::format_record(rows)});
  std::filesystem::path path = dir / wheel_filename(spec);
  write_zip(path, items);
  return path;
}

}  // namespace trainpack::test_support
