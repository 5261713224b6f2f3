#include "gcloud/build_plan.h"

#include <gtest/gtest.h>

#include "support/error.h"

using namespace trainpack::gcloud;

namespace {
std::vector<std::string> instructions(const std::vector<BuildStep>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(s.instruction);
  return out;
}
}  // namespace

TEST(BuildPlan, FollowsTheDockerfileOrderForAPlainScript) {
  PlanInput in;
  in.main_dir = "trainer";
  in.entrypoint = {"python", "trainer/task.py"};
  in.extra_dirs = {"config"};
  auto steps = plan_steps(in);
  std::vector<std::string> want{"RUN mkdir -m 777 -p /usr/app /home",
                                "WORKDIR /usr/app",
                                "ENV HOME=/home",
                                "ENV PYTHONDONTWRITEBYTECODE=1",
                                "COPY [\"config\", \"config\"]",
                                "COPY [\"trainer\", \"trainer\"]",
                                "ENTRYPOINT [\"python\", \"trainer/task.py\"]"};
  EXPECT_EQ(instructions(steps), want);
  EXPECT_EQ(std::get<EntrypointStep>(steps.back().action).argv, in.entrypoint);
  EXPECT_EQ(std::get<CopyStep>(steps[4].action).src, "config");
  EXPECT_EQ(std::get<EnvStep>(steps[3].action).key, "PYTHONDONTWRITEBYTECODE");
}

TEST(BuildPlan, PrebuiltImagesRemoveSitecustomizeAndUsePip3) {
  PlanInput in;
  in.prebuilt = true;
  in.has_setup_py = true;
  in.has_requirements_txt = true;
  in.extra_packages = {"dep/foo.tar.gz"};
  in.requirements = {"pandas==1.2.0"};
  in.main_dir = ".";
  in.entrypoint = {"python3", "task.py"};
  auto got = instructions(plan_steps(in));
  std::vector<std::string> want{"RUN mkdir -m 777 -p /usr/app /home",
                                "WORKDIR /usr/app",
                                "ENV HOME=/home",
                                "ENV PYTHONDONTWRITEBYTECODE=1",
                                "RUN rm -rf /var/sitecustomize",
                                "COPY [\"./setup.py\", \"./setup.py\"]",
                                "RUN pip3 install --no-cache-dir .",
                                "COPY [\"./requirements.txt\", \"./requirements.txt\"]",
                                "RUN pip3 install --no-cache-dir -r ./requirements.txt",
                                "COPY [\"dep/foo.tar.gz\", \"foo.tar.gz\"]",
                                "RUN pip3 install --no-cache-dir foo.tar.gz",
                                "RUN pip3 install --no-cache-dir --upgrade pandas==1.2.0",
                                "COPY [\".\", \".\"]",
                                "ENTRYPOINT [\"python3\", \"task.py\"]"};
  EXPECT_EQ(got, want);
  // What each pip step installs, and how: the builder's python steps read these.
  std::vector<PipInstallStep> pips;
  for (const auto& s : plan_steps(in))
    if (const auto* pip = std::get_if<PipInstallStep>(&s.action)) pips.push_back(*pip);
  ASSERT_EQ(pips.size(), 4u);
  for (const auto& pip : pips) EXPECT_TRUE(pip.pip3);
  EXPECT_EQ(std::get<ProjectSource>(pips[0].source).dir, ".");
  EXPECT_EQ(std::get<RequirementsFileSource>(pips[1].source).path, "./requirements.txt");
  EXPECT_EQ(std::get<ExtraPackageSource>(pips[2].source).given, "dep/foo.tar.gz");
  EXPECT_EQ(std::get<ExtraPackageSource>(pips[2].source).file, "foo.tar.gz");
  EXPECT_EQ(std::get<RequirementSource>(pips[3].source).requirement, "pandas==1.2.0");
  std::vector<std::string> descriptions;
  for (const auto& pip : pips) descriptions.push_back(pip.description());
  std::vector<std::string> want_descriptions{"the project in setup.py", "requirements.txt",
                                             "--extra-packages dep/foo.tar.gz", "--requirements pandas==1.2.0"};
  EXPECT_EQ(descriptions, want_descriptions);
}

TEST(BuildPlan, PlainImagesUsePip) {
  PlanInput in;
  in.has_requirements_txt = true;
  in.main_dir = ".";
  in.entrypoint = {"python", "task.py"};
  auto steps = plan_steps(in);
  EXPECT_EQ(steps[5].instruction, "RUN pip install --no-cache-dir -r ./requirements.txt");
  EXPECT_FALSE(std::get<PipInstallStep>(steps[5].action).pip3);
}

TEST(BuildPlan, NonAsciiPathsAreEscapedLikeJsonDumps) {
  PlanInput in;
  in.main_dir = "d\xc3\xa4t\xc3\xa4";
  in.entrypoint = {"python", "d\xc3\xa4t\xc3\xa4/t.py"};
  auto steps = plan_steps(in);
  EXPECT_EQ(steps[steps.size() - 2].instruction, "COPY [\"d\\u00e4t\\u00e4\", \"d\\u00e4t\\u00e4\"]");
}

// Docker's build runs gcloud's first RUN as the base's User: only root (any spelling) gets past it.
TEST(BuildPlan, ABaseThatDoesNotRunAsRootIsRefusedNamingTheUserAndTheStep) {
  PlanInput in;
  in.main_dir = "trainer";
  in.entrypoint = {"python", "trainer/task.py"};
  auto steps = plan_steps(in);
  for (const char* root : {"", "root", "0", "0:0", "root:root", "root:0"})
    EXPECT_NO_THROW(check_runs_as_root(root, steps));
  for (const char* user : {"1000", "jovyan", "1000:0", "jovyan:users"}) {
    try {
      check_runs_as_root(user, steps);
      ADD_FAILURE() << user << " was not refused";
    } catch (const trainpack::Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("the base image runs as user ") + user +
                                           " (its config's User), so gcloud's `RUN mkdir -m 777 -p /usr/app /home` "
                                           "fails in docker's build (Permission denied)");
      EXPECT_EQ(e.hint(), "build on a base that runs as root, or derive one from it with `USER root`");
    }
  }
  EXPECT_THROW(check_runs_as_root("0:1000", steps), trainpack::Error);
  EXPECT_NO_THROW(check_runs_as_root("1000", {}));  // nothing runs
}
