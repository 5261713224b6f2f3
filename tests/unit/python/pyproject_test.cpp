// pyproject.toml's [build-system] as pip's load_pyproject_toml reads it.
#include "python/pyproject.h"

#include <gtest/gtest.h>

#include "support/error.h"

using namespace trainpack::python;

TEST(Pyproject, BuildSystemRequiresBackendAndPath) {
  BuildSystem b = read_build_system(
      "[project]\nname = 'x'\n\n[build-system]\n# a comment\nrequires = [\n  \"setuptools>=61\",  # trailing\n"
      "  'wheel',\n]\nbuild-backend = \"backend.api\"\nbackend-path = [\"_build\"]\n",
      "x");
  EXPECT_TRUE(b.has_table);
  EXPECT_EQ(b.build_requires, (std::vector<std::string>{"setuptools>=61", "wheel"}));
  EXPECT_EQ(b.build_backend, std::optional<std::string>("backend.api"));
  EXPECT_EQ(b.backend_path, std::vector<std::string>{"_build"});
}

TEST(Pyproject, NoTableMeansNothingDeclared) {
  BuildSystem b = read_build_system("[tool.black]\nline-length = 100\n", "x");
  EXPECT_FALSE(b.has_table);
  EXPECT_TRUE(b.build_requires.empty());
  EXPECT_FALSE(b.build_backend.has_value());
}

TEST(Pyproject, PipsRefusals) {
  for (const char* bad : {"[build-system\n", "[build-system]\nbuild-backend = 'x'\n",
                          "[build-system]\nrequires = 'setuptools'\n", "[build-system]\nrequires = [1]\n",
                          "[build-system]\nrequires = ['not a requirement!!']\n",
                          "[build-system]\nrequires = []\nbuild-backend = 3\n"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(read_build_system(bad, "x"), trainpack::Error);
  }
}
