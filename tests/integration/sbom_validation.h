#pragma once
// An SBOM checked against the official JSON schemas vendored in testdata/sbom-schemas (SPDX 2.3, CycloneDX 1.6 with
// the schemas it refers to) by Debian's python3-jsonschema.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/fs.h"
#include "tests/integration/test_support.h"

namespace trainpack::testing {

// Validates DOCUMENT against SCHEMA, the other schemas of the directory resolving its $refs by their $id; prints
// each error with its path in the document.
inline const char* const kValidate = R"(
import json, pathlib, sys
import jsonschema
schemas = pathlib.Path(sys.argv[1])
store = {}
for f in schemas.glob("*.json"):
    s = json.loads(f.read_text())
    if "$id" in s:
        store[s["$id"]] = s
schema = json.loads((schemas / sys.argv[2]).read_text())
resolver = jsonschema.RefResolver(schema.get("$id", ""), schema, store=store)
validator = jsonschema.validators.validator_for(schema)(schema, resolver=resolver,
                                                        format_checker=jsonschema.FormatChecker())
errors = sorted(validator.iter_errors(json.loads(pathlib.Path(sys.argv[3]).read_text())), key=str)
for e in errors:
    print("/".join(str(p) for p in e.absolute_path), e.message)
sys.exit(1 if errors else 0)
)";

inline void expect_valid(const std::string& schema, const std::string& document, const std::string& what) {
  ScopedDir dir(make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-sbom-"));
  std::filesystem::path file = dir.path() / "document.json";
  write_file_atomic(file, document);
  CommandResult r = run_command({"/usr/bin/python3", "-c", kValidate,
                                 (std::filesystem::path(source_dir()) / "testdata" / "sbom-schemas").string(), schema,
                                 file.string()});
  EXPECT_EQ(r.exit_code, 0) << what << " does not pass " << schema << ":\n" << r.out << r.err;
}

}  // namespace trainpack::testing
