// The Vertex AI job spec: field names and nesting of CustomJobSpec / CustomJob, digest pinning, validation, and the
// job-spec command. Checked against the documented JSON shape only; gcloud is not run here (it is not installed).
#include "gcloud/job_spec.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gcloud/gcloud_flags.h"
#include "support/error.h"
#include "support/fs.h"

namespace {

using nlohmann::json;
using trainpack::Error;
using trainpack::gcloud::JobSpecFormat;
using trainpack::gcloud::JobSpecOptions;
namespace b = trainpack::gcloud;
namespace fs = std::filesystem;

const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kImage = "us-central1-docker.pkg.dev/proj/repo/trainer@" + kDigest;

JobSpecOptions base_opts() {
  JobSpecOptions o;
  o.display_name = "train-1";
  o.image_uri = kImage;
  return o;
}

// The Error message of make_job_spec(o), or "" when it succeeds.
std::string job_spec_error(const JobSpecOptions& o) {
  try {
    b::make_job_spec(o);
  } catch (const Error& e) {
    EXPECT_FALSE(e.hint().empty()) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  return "";
}

TEST(JobSpec, MinimalConfigIsACustomJobSpec) {
  json j = b::make_job_spec(base_opts());
  json want = json::parse(R"({
    "workerPoolSpecs": [{
      "machineSpec": {"machineType": "n1-standard-4"},
      "replicaCount": 1,
      "containerSpec": {"imageUri": ")" + kImage + R"("}
    }]
  })");
  EXPECT_EQ(j, want) << j.dump(2);
  EXPECT_FALSE(j.contains("displayName"));  // gcloud takes it from --display-name and rejects unknown keys
  EXPECT_FALSE(j.contains("jobSpec"));
}

TEST(JobSpec, AllFieldsNestedWhereTheApiWantsThem) {
  JobSpecOptions o = base_opts();
  o.machine_type = "a2-highgpu-1g";
  o.replica_count = 3;
  o.accelerator_type = "NVIDIA_TESLA_A100";
  o.accelerator_count = 2;
  o.args = {"--epochs=3", "--lr", "0.1"};
  o.env = {"MODE=train", "EMPTY=", "EQ=a=b"};
  o.command = {"python3", "-m", "trainer.task"};
  o.service_account = "trainer@proj.iam.gserviceaccount.com";
  o.base_output_dir = "gs://bucket/out";
  o.network = "projects/123/global/networks/vpc";
  o.timeout = "7200s";
  o.boot_disk_type = "pd-ssd";
  o.boot_disk_size_gb = 200;
  json j = b::make_job_spec(o);
  ASSERT_EQ(j["workerPoolSpecs"].size(), 1u);
  const json& pool = j["workerPoolSpecs"][0];
  EXPECT_EQ(pool["machineSpec"], json({{"machineType", "a2-highgpu-1g"},
                                       {"acceleratorType", "NVIDIA_TESLA_A100"},
                                       {"acceleratorCount", 2}}));
  EXPECT_EQ(pool["replicaCount"], 3);
  EXPECT_EQ(pool["diskSpec"], json({{"bootDiskType", "pd-ssd"}, {"bootDiskSizeGb", 200}}));
  const json& c = pool["containerSpec"];
  EXPECT_EQ(c["imageUri"], kImage);
  EXPECT_EQ(c["command"], json({"python3", "-m", "trainer.task"}));
  EXPECT_EQ(c["args"], json({"--epochs=3", "--lr", "0.1"}));
  EXPECT_EQ(c["env"], json::parse(R"([{"name":"MODE","value":"train"},{"name":"EMPTY","value":""},
                                      {"name":"EQ","value":"a=b"}])"));
  EXPECT_EQ(j["baseOutputDirectory"], json({{"outputUriPrefix", "gs://bucket/out"}}));
  EXPECT_EQ(j["serviceAccount"], "trainer@proj.iam.gserviceaccount.com");
  EXPECT_EQ(j["network"], "projects/123/global/networks/vpc");
  EXPECT_EQ(j["scheduling"], json({{"timeout", "7200s"}}));
  // Nothing but documented CustomJobSpec keys, all camelCase (gcloud's --config rejects keys with underscores).
  for (const auto& [k, v] : j.items()) {
    EXPECT_TRUE(k == "workerPoolSpecs" || k == "baseOutputDirectory" || k == "serviceAccount" || k == "network" ||
                k == "scheduling")
        << k;
  }
  // No key anywhere has an underscore (values such as NVIDIA_TESLA_A100 may).
  std::function<void(const json&)> check_keys = [&](const json& v) {
    if (v.is_object())
      for (const auto& [k, sub] : v.items()) {
        EXPECT_EQ(k.find('_'), std::string::npos) << k;
        check_keys(sub);
      }
    else if (v.is_array())
      for (const auto& sub : v) check_keys(sub);
  };
  check_keys(j);
}

TEST(JobSpec, RestFormatWrapsTheSpec) {
  JobSpecOptions o = base_opts();
  o.base_output_dir = "gs://b";
  json config = b::make_job_spec(o);
  o.format = JobSpecFormat::kRest;
  json rest = b::make_job_spec(o);
  EXPECT_EQ(rest, json({{"displayName", "train-1"}, {"jobSpec", config}}));
  o.display_name.clear();
  EXPECT_NE(job_spec_error(o).find("display name"), std::string::npos);
  o.format = JobSpecFormat::kConfig;
  EXPECT_EQ(job_spec_error(o), "");  // the config format has no display name in it
}

TEST(JobSpec, AcceleratorTypeAloneMeansOne) {
  JobSpecOptions o = base_opts();
  o.accelerator_type = "NVIDIA_TESLA_T4";
  EXPECT_EQ(b::make_job_spec(o)["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"], 1);
}

TEST(JobSpec, TextIsPrettyJsonWithTrailingNewline) {
  std::string t = b::job_spec_text(base_opts());
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.back(), '\n');
  EXPECT_NE(t.find("\n  \"workerPoolSpecs\": ["), std::string::npos) << t;
  EXPECT_EQ(json::parse(t), b::make_job_spec(base_opts()));
  // Document order, as in Google's examples (not nlohmann's sorted keys).
  EXPECT_LT(t.find("machineSpec"), t.find("replicaCount"));
  EXPECT_LT(t.find("replicaCount"), t.find("containerSpec"));
  JobSpecOptions o = base_opts();
  o.format = JobSpecFormat::kRest;
  std::string r = b::job_spec_text(o);
  EXPECT_LT(r.find("displayName"), r.find("jobSpec")) << r;
}

TEST(JobSpec, RefusesImagesNotPinnedByDigest) {
  for (const std::string& bad : std::vector<std::string>{"", "us-docker.pkg.dev/p/r/img", "us-docker.pkg.dev/p/r/img:latest", "img@sha256:abc",
                          "img@sha512:" + std::string(128, 'a'), "@" + kDigest, "img@sha256:" + std::string(64, 'A'),
                          "img:@" + kDigest, "img @" + kDigest}) {
    JobSpecOptions o = base_opts();
    o.image_uri = bad;
    std::string err = job_spec_error(o);
    EXPECT_NE(err, "") << bad;
    try {
      b::check_digest_pinned(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(e.hint().find("@sha256:"), std::string::npos);
    }
  }
  EXPECT_NE(job_spec_error([] { auto o = base_opts(); o.image_uri = "r/img:v1"; return o; }()).find("not pinned by digest"),
            std::string::npos);
  for (const std::string& good : std::vector<std::string>{kImage, "img@" + kDigest, "localhost:5000/img:v1@" + kDigest}) {
    EXPECT_NO_THROW(b::check_digest_pinned(good)) << good;
  }
}

TEST(JobSpec, PinImageUri) {
  EXPECT_EQ(b::pin_image_uri("us-docker.pkg.dev/p/r/img:v1", kDigest), "us-docker.pkg.dev/p/r/img@" + kDigest);
  EXPECT_EQ(b::pin_image_uri("localhost:5000/img", kDigest), "localhost:5000/img@" + kDigest);
  EXPECT_EQ(b::pin_image_uri("localhost:5000/img:v1", kDigest), "localhost:5000/img@" + kDigest);
  EXPECT_EQ(b::pin_image_uri("r/img@sha256:" + std::string(64, 'b'), kDigest), "r/img@" + kDigest);
  EXPECT_THROW(b::pin_image_uri("r/img", "sha256:short"), Error);
}

TEST(JobSpec, ValidationErrorsAreOneLineWithHints) {
  auto with = [](auto f) {
    JobSpecOptions o = base_opts();
    f(o);
    return job_spec_error(o);
  };
  EXPECT_NE(with([](auto& o) { o.replica_count = 0; }).find("replica count"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.machine_type = ""; }).find("machine type"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.accelerator_count = 2; }).find("--accelerator-type"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.accelerator_count = -1; }), "");
  EXPECT_NE(with([](auto& o) { o.accelerator_type = "nvidia-tesla-t4"; }), "");
  EXPECT_NE(with([](auto& o) { o.env = {"NOVALUE"}; }).find("KEY=VALUE"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.env = {"1BAD=x"}; }).find("'1BAD'"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.env = {"BAD-NAME=x"}; }), "");
  EXPECT_NE(with([](auto& o) { o.env = {"=x"}; }), "");
  EXPECT_NE(with([](auto& o) { o.env = {"A=1", "A=2"}; }).find("twice"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.base_output_dir = "/local/out"; }).find("Cloud Storage"), std::string::npos);
  EXPECT_NE(with([](auto& o) { o.base_output_dir = "gs://"; }), "");
  EXPECT_NE(with([](auto& o) { o.service_account = "trainer"; }), "");
  EXPECT_NE(with([](auto& o) { o.timeout = "2h"; }), "");
  EXPECT_NE(with([](auto& o) { o.boot_disk_type = "ssd"; }), "");
  EXPECT_NE(with([](auto& o) { o.display_name = "a\nb"; }), "");
  EXPECT_EQ(with([](auto& o) { o.timeout = "1.5s"; }), "");
}

TEST(JobSpec, ParseFormat) {
  EXPECT_EQ(b::parse_job_spec_format("config"), JobSpecFormat::kConfig);
  EXPECT_EQ(b::parse_job_spec_format("rest"), JobSpecFormat::kRest);
  EXPECT_THROW(b::parse_job_spec_format("yaml"), Error);
}

// Runs `trainpack job-spec ARGS... --output=FILE` through CLI11 and returns the parsed file.
json run_job_spec(std::vector<std::string> args) {
  fs::path dir = trainpack::make_temp_dir({}, "job-spec-test");
  trainpack::ScopedDir cleanup(dir);
  fs::path out = dir / "spec.json";
  CLI::App app;
  b::add_job_spec_command(app);
  std::vector<std::string> argv = {"trainpack", "job-spec", "--output=" + out.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<const char*> cargv;
  for (auto& a : argv) cargv.push_back(a.c_str());
  b::parse_like_argparse(app, static_cast<int>(cargv.size()), cargv.data());
  std::string text = trainpack::read_file(out);
  EXPECT_EQ(text.back(), '\n');
  return json::parse(text);
}

TEST(JobSpecCommand, FlagsAndArgsAfterDoubleDash) {
  json j = run_job_spec({"--image-uri=" + kImage, "--machine-type=n1-highmem-8", "--replica-count=2",
                         "--accelerator-type=NVIDIA_L4", "--accelerator-count=1", "--args=--epochs=3", "--args",
                         "x,y", "--env", "A=1", "--env=B=two words", "--command=python3", "--command=task.py",
                         "--service-account=sa@p.iam.gserviceaccount.com", "--base-output-dir=gs://b/o", "--",
                         "--lr", "0.5", "--lr", "0.5"});
  const json& pool = j["workerPoolSpecs"][0];
  EXPECT_EQ(pool["machineSpec"],
            json({{"machineType", "n1-highmem-8"}, {"acceleratorType", "NVIDIA_L4"}, {"acceleratorCount", 1}}));
  EXPECT_EQ(pool["replicaCount"], 2);
  // --args is a gcloud list; what follows -- is appended as it is, repeats included.
  EXPECT_EQ(pool["containerSpec"]["args"], json({"--epochs=3", "x", "y", "--lr", "0.5", "--lr", "0.5"}));
  EXPECT_EQ(pool["containerSpec"]["command"], json({"python3", "task.py"}));
  EXPECT_EQ(pool["containerSpec"]["env"][1], json({{"name", "B"}, {"value", "two words"}}));
  EXPECT_EQ(j["baseOutputDirectory"]["outputUriPrefix"], "gs://b/o");
  EXPECT_EQ(j["serviceAccount"], "sa@p.iam.gserviceaccount.com");
}

TEST(JobSpecCommand, ArgsAndCommandAreGcloudUpdateLists) {
  // custom_jobs/flags.py: ArgList with arg_parsers.UpdateAction. Occurrences add up; delimiter, spaces and empty
  // items as ArgList reads them.
  json c = run_job_spec({"--image-uri=" + kImage, "--args=^;^--tags=a,b;--n=1", "--args=x, y,,", "--command=",
                         "--command=python3,-m", "--command", "trainer.task"})["workerPoolSpecs"][0]["containerSpec"];
  EXPECT_EQ(c["args"], json({"--tags=a,b", "--n=1", "x", " y", ""}));
  EXPECT_EQ(c["command"], json({"python3", "-m", "trainer.task"}));
  c = run_job_spec({"--image-uri=" + kImage, "--args=", "--command="})["workerPoolSpecs"][0]["containerSpec"];
  EXPECT_FALSE(c.contains("args"));
  EXPECT_FALSE(c.contains("command"));
  try {
    run_job_spec({"--image-uri=" + kImage, "--args=--lr,1", "--args=--epochs,1"});
    FAIL() << "a repeated item was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "argument --args: \"1\" cannot be specified multiple times");
  }
  EXPECT_THROW(run_job_spec({"--image-uri=" + kImage, "--command=python3,python3"}), Error);
}

TEST(JobSpecCommand, RestFormat) {
  json j = run_job_spec({"--image-uri=" + kImage, "--format=rest", "--display-name=nightly"});
  EXPECT_EQ(j["displayName"], "nightly");
  EXPECT_EQ(j["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"], kImage);
}

TEST(JobSpecCommand, RefusesTagOnlyImageAndBadFormat) {
  EXPECT_THROW(run_job_spec({"--image-uri=us-docker.pkg.dev/p/r/img:latest"}), Error);
  EXPECT_THROW(run_job_spec({"--image-uri=" + kImage, "--format=yaml"}), CLI::ParseError);
  EXPECT_THROW(run_job_spec({}), CLI::ParseError);  // --image-uri is required
}

TEST(JobSpecCommand, BuildFlagsFillOptions) {
  CLI::App app;
  CLI::App* build = app.add_subcommand("build");
  std::string fmt;  // build's own --format must still work beside the job flags
  build->add_option("--format", fmt);
  JobSpecOptions opts;
  std::string out;
  b::add_job_spec_flags(*build, opts, out);
  std::vector<std::string> argv = {"trainpack", "build", "--format=json", "--job-spec-out=job.json",
                                   "--job-spec-format=rest", "--display-name=d", "--machine-type=m",
                                   "--env=K=V", "--args=a,b", "--args", "c"};
  std::vector<const char*> cargv;
  for (auto& a : argv) cargv.push_back(a.c_str());
  b::parse_like_argparse(app, static_cast<int>(cargv.size()), cargv.data());
  EXPECT_EQ(fmt, "json");
  EXPECT_EQ(out, "job.json");
  EXPECT_EQ(opts.format, JobSpecFormat::kRest);
  EXPECT_EQ(opts.machine_type, "m");
  opts.image_uri = b::pin_image_uri("r/img:v1", kDigest);
  json j = json::parse(b::job_spec_text(opts));
  EXPECT_EQ(j["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"][0]["value"], "V");
  EXPECT_EQ(j["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"], json({"a", "b", "c"}));
}

}  // namespace
