#include "builder/build_plan.h"

#include "templates/dockerfile.h"

namespace trainpack::builder {

namespace {
std::string basename_of(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

BuildStep copy_step(const std::string& src, const std::string& dest) {
  return {BuildStep::Kind::kCopy, "COPY " + templates::json_list({src, dest}), {src, dest}};
}
}  // namespace

std::vector<BuildStep> plan_steps(const PlanInput& in) {
  using K = BuildStep::Kind;
  std::vector<BuildStep> steps;
  steps.push_back({K::kMkdir, "RUN mkdir -m 777 -p /usr/app /home", {kWorkdir, kHome}});
  steps.push_back({K::kWorkdir, "WORKDIR /usr/app", {kWorkdir}});
  steps.push_back({K::kEnv, "ENV HOME=/home", {"HOME", kHome}});
  steps.push_back({K::kEnv, "ENV PYTHONDONTWRITEBYTECODE=1", {"PYTHONDONTWRITEBYTECODE", "1"}});
  if (in.prebuilt) steps.push_back({K::kRemovePath, "RUN rm -rf /var/sitecustomize", {"/var/sitecustomize"}});
  const std::string pip = in.prebuilt ? "pip3" : "pip";
  if (in.has_setup_py) {
    steps.push_back(copy_step("./setup.py", "./setup.py"));
    steps.push_back({K::kPipInstall, "RUN " + pip + " install --no-cache-dir .", {"the project in setup.py", "project", ".", pip}});
  }
  if (in.has_requirements_txt) {
    steps.push_back(copy_step("./requirements.txt", "./requirements.txt"));
    steps.push_back({K::kPipInstall, "RUN " + pip + " install --no-cache-dir -r ./requirements.txt",
                     {"requirements.txt", "requirements-file", "./requirements.txt", pip}});
  }
  for (const auto& p : in.extra_packages) {
    std::string base = basename_of(p);
    steps.push_back(copy_step(p, base));
    steps.push_back({K::kPipInstall, "RUN " + pip + " install --no-cache-dir " + templates::shlex_quote(base), {"--extra-packages " + p, "archive", base, pip}});
  }
  for (const auto& r : in.requirements)
    steps.push_back({K::kPipInstall, "RUN " + pip + " install --no-cache-dir --upgrade " + templates::shlex_quote(r), {"--requirements " + r, "requirement", r, pip}});
  for (const auto& d : in.extra_dirs) steps.push_back(copy_step(d, d));
  steps.push_back(copy_step(in.main_dir, in.main_dir));
  steps.push_back({K::kEntrypoint, "ENTRYPOINT " + templates::json_list(in.entrypoint), in.entrypoint});
  return steps;
}

}  // namespace trainpack::builder
