// trainpack's SPDX 2.3 and CycloneDX 1.6 documents against the official JSON schemas (testdata/sbom-schemas, with
// where each comes from), checked by Debian's python3-jsonschema.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sbom/cyclonedx.h"
#include "sbom/spdx.h"
#include "support/fs.h"
#include "tests/integration/test_support.h"
#include "tests/unit/sbom_example.h"

namespace fs = std::filesystem;
using namespace trainpack::testing;

namespace {

// Validates DOCUMENT against SCHEMA, the other schemas of the directory resolving its $refs by their $id; prints
// each error with its path in the document.
const char* const kValidate = R"(
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

void expect_valid(const std::string& schema, const std::string& document, const std::string& what) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-sbom-"));
  fs::path file = dir.path() / "document.json";
  trainpack::write_file_atomic(file, document);
  CommandResult r = run_command({"/usr/bin/python3", "-c", kValidate,
                                 (fs::path(source_dir()) / "testdata" / "sbom-schemas").string(), schema,
                                 file.string()});
  EXPECT_EQ(r.exit_code, 0) << what << " does not pass " << schema << ":\n" << r.out << r.err;
}

}  // namespace

TEST(SbomSchema, SpdxDocumentsPassTheSpdx23Schema) {
  expect_valid("spdx-2.3.schema.json", trainpack::sbom::spdx_json(trainpack::sbom::example_document()), "SPDX");
  trainpack::sbom::Document bare;  // no base, no packages, no files
  bare.image_digest = "sha256:" + std::string(64, '1');
  bare.created = "2026-12-05T00:00:00Z";
  bare.tool_version = "0.1.0";
  expect_valid("spdx-2.3.schema.json", trainpack::sbom::spdx_json(bare), "a bare SPDX document");
}

TEST(SbomSchema, CycloneDxBomsPassTheCycloneDx16Schema) {
  expect_valid("bom-1.6.schema.json", trainpack::sbom::cyclonedx_json(trainpack::sbom::example_document()),
               "CycloneDX");
}

// The check itself: a document the schema refuses fails it.
TEST(SbomSchema, TheCheckRefusesADocumentTheSchemaDoesNot) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-sbom-"));
  fs::path file = dir.path() / "document.json";
  trainpack::write_file_atomic(file, R"({"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{}]})");
  CommandResult r = run_command({"/usr/bin/python3", "-c", kValidate,
                                 (fs::path(source_dir()) / "testdata" / "sbom-schemas").string(),
                                 "bom-1.6.schema.json", file.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("components/0"), std::string::npos) << r.out;
}
