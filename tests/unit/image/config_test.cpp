#include "image/config.h"

#include <gtest/gtest.h>

#include "support/error.h"

using trainpack::image::EnvList;
using trainpack::image::ImageConfig;
using nlohmann::json;

namespace {

// A config as registries serve them: keys in the writer's order, whitespace, fields trainpack does not model.
const char* const kConfig = R"({
  "architecture": "amd64",
  "os": "linux",
  "config": {"Env": ["PATH=/usr/bin", "LANG=C.UTF-8", "PATH=/opt/bin"], "Cmd": ["python3"],
             "Labels": {"maintainer": "x"}, "ExposedPorts": {"8080/tcp": {}}, "User": "1000",
             "OnBuild": null, "Healthcheck": {"Test": ["CMD", "true"]}},
  "rootfs": {"type": "layers", "diff_ids": ["sha256:aa", "sha256:bb"]},
  "history": [{"created_by": "x"}, {"created_by": "y"}],
  "moby.buildkit.buildinfo.v1": "e30=",
  "container_config": {"Hostname": "abc"}
})";

// What build.cpp and appended_image.cpp did to the raw JSON before ImageConfig: the expected bytes of an edit.
std::string edited_the_old_way(const std::string& raw) {
  json cfg = json::parse(raw);
  json exec = cfg["config"].is_object() ? cfg["config"] : json::object();
  json& env = exec["Env"];
  if (!env.is_array()) env = json::array();
  bool replaced = false;
  for (auto& e : env)
    if (!replaced && e.is_string() && e.get<std::string>().starts_with("PYTHONUNBUFFERED=")) {
      e = "PYTHONUNBUFFERED=1";
      replaced = true;
    }
  if (!replaced) env.push_back("PYTHONUNBUFFERED=1");
  exec["WorkingDir"] = "/usr/app";
  exec["Entrypoint"] = std::vector<std::string>{"python", "trainer/task.py"};
  exec.erase("Cmd");
  cfg["created"] = "1970-01-01T00:00:00Z";
  cfg["config"] = exec;
  cfg["rootfs"]["diff_ids"].push_back("sha256:cc");
  cfg["history"].push_back({{"created_by", "COPY"}});
  return cfg.dump();
}

std::string edited(const std::string& raw) {
  ImageConfig cfg = ImageConfig::parse(raw, "test");
  cfg.set_env("PYTHONUNBUFFERED", "1");
  cfg.set_working_dir("/usr/app");
  cfg.set_entrypoint({"python", "trainer/task.py"});
  cfg.set_created("1970-01-01T00:00:00Z");
  cfg.ensure_execution_config();
  cfg.fill_missing_history(2);
  cfg.append_history({{"created_by", "COPY"}}, "sha256:cc");
  return cfg.serialize();
}

}  // namespace

TEST(ImageConfig, UneditedConfigSerialisesToTheBytesItWasReadFrom) {
  EXPECT_EQ(ImageConfig::parse(kConfig, "test").serialize(), kConfig);
}

TEST(ImageConfig, EditsGiveTheBytesTheRawJsonEditsGave) {
  EXPECT_EQ(edited(kConfig), edited_the_old_way(kConfig));
  std::string no_exec = R"({"os":"linux","rootfs":{"diff_ids":["sha256:aa","sha256:bb"]},"history":[{},{}],"x":[1,2.5]})";
  EXPECT_EQ(edited(no_exec), edited_the_old_way(no_exec));
  std::string odd_env = R"({"config":{"Env":[1,"PYTHONUNBUFFERED=0","A"]},"rootfs":{"diff_ids":[]},"history":[{}]})";
  EXPECT_EQ(edited(odd_env), edited_the_old_way(odd_env));
}

TEST(ImageConfig, ReadsTheModelledFields) {
  ImageConfig cfg = ImageConfig::parse(kConfig, "test");
  EXPECT_EQ(cfg.os(), "linux");
  EXPECT_EQ(cfg.architecture(), "amd64");
  EXPECT_EQ(cfg.variant(), "");
  EXPECT_EQ(cfg.env().value("PATH"), "/opt/bin");
  EXPECT_EQ(cfg.cmd(), std::vector<std::string>{"python3"});
  EXPECT_TRUE(cfg.entrypoint().empty());
  EXPECT_EQ(cfg.user(), "1000");
  EXPECT_EQ(cfg.labels().at("maintainer"), "x");
  EXPECT_EQ(cfg.exposed_ports(), std::vector<std::string>{"8080/tcp"});
  EXPECT_EQ(cfg.diff_id_count(), 2u);
  EXPECT_EQ(cfg.history().size(), 2u);
  EXPECT_FALSE(ImageConfig::parse("{}", "test").diff_ids());
  EXPECT_THROW(ImageConfig::parse("[]", "test"), trainpack::Error);
}

TEST(ImageConfig, FillsHistoryOnlyWhenTheBaseHasNone) {
  ImageConfig cfg = ImageConfig::parse(R"({"rootfs":{"diff_ids":["a","b"]}})", "test");
  cfg.fill_missing_history(2);
  EXPECT_EQ(cfg.history().size(), 2u);
  cfg.fill_missing_history(2);
  EXPECT_EQ(cfg.history().size(), 2u);
}

TEST(EnvList, ReadsAndSetsLikeAProcessEnvironment) {
  EnvList env({"A=1", "B", "A=2", "C=x=y"});
  EXPECT_TRUE(env.has("A"));
  EXPECT_FALSE(env.has("B")) << "a bare name sets nothing";
  EXPECT_EQ(env.value("A"), "2");
  EXPECT_EQ(env.value("C"), "x=y");
  EXPECT_EQ(env.pairs(), (std::vector<std::pair<std::string, std::string>>{{"A", "2"}, {"C", "x=y"}}));
  env.set("B", "3");
  env.set("A", "4");
  env.set("D", "5");
  EXPECT_EQ(env.entries(), (std::vector<std::string>{"A=4", "B=3", "A=2", "C=x=y", "D=5"}));
}
