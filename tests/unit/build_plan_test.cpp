#include "builder/build_plan.h"

#include <gtest/gtest.h>

using namespace trainpack::builder;

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
  EXPECT_EQ(steps.back().args, in.entrypoint);
  EXPECT_TRUE(unsupported_steps_message(steps).empty());
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
  std::string msg = unsupported_steps_message(plan_steps(in));
  EXPECT_NE(msg.find("setup.py"), std::string::npos);
  EXPECT_NE(msg.find("requirements.txt"), std::string::npos);
  EXPECT_NE(msg.find("pandas==1.2.0"), std::string::npos);
}

TEST(BuildPlan, NonAsciiPathsAreEscapedLikeJsonDumps) {
  PlanInput in;
  in.main_dir = "d\xc3\xa4t\xc3\xa4";
  in.entrypoint = {"python", "d\xc3\xa4t\xc3\xa4/t.py"};
  auto steps = plan_steps(in);
  EXPECT_EQ(steps[steps.size() - 2].instruction, "COPY [\"d\\u00e4t\\u00e4\", \"d\\u00e4t\\u00e4\"]");
}
