#include "gcloud/build_plan.h"

#include <algorithm>

#include "support/error.h"

namespace trainpack::gcloud {

namespace {
std::string basename_of(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

BuildStep copy_step(const std::string& src, const std::string& dest) {
  return {"COPY " + json_list({src, dest}), CopyStep{src, dest}};
}
}  // namespace

std::string PipInstallStep::description() const {
  return std::visit(StepVisitor{
                        [](const ProjectSource&) -> std::string { return "the project in setup.py"; },
                        [](const RequirementsFileSource&) -> std::string { return "requirements.txt"; },
                        [](const ExtraPackageSource& s) { return "--extra-packages " + s.given; },
                        [](const RequirementSource& s) { return "--requirements " + s.requirement; },
                    },
                    source);
}

std::vector<BuildStep> plan_steps(const PlanInput& in) {
  std::vector<BuildStep> steps;
  steps.push_back({"RUN mkdir -m 777 -p /usr/app /home", MkdirStep{{kWorkdir, kHome}}});
  steps.push_back({"WORKDIR /usr/app", WorkdirStep{kWorkdir}});
  steps.push_back({"ENV HOME=/home", EnvStep{"HOME", kHome}});
  steps.push_back({"ENV PYTHONDONTWRITEBYTECODE=1", EnvStep{"PYTHONDONTWRITEBYTECODE", "1"}});
  if (in.prebuilt) steps.push_back({"RUN rm -rf /var/sitecustomize", RemovePathStep{"/var/sitecustomize"}});
  const std::string pip = in.prebuilt ? "pip3" : "pip";
  auto pip_step = [&](const std::string& arguments, PipSource source) {
    return BuildStep{"RUN " + pip + " install --no-cache-dir " + arguments, PipInstallStep{std::move(source), in.prebuilt}};
  };
  if (in.has_setup_py) {
    steps.push_back(copy_step("./setup.py", "./setup.py"));
    steps.push_back(pip_step(".", ProjectSource{"."}));
  }
  if (in.has_requirements_txt) {
    steps.push_back(copy_step("./requirements.txt", "./requirements.txt"));
    steps.push_back(pip_step("-r ./requirements.txt", RequirementsFileSource{"./requirements.txt"}));
  }
  for (const auto& p : in.extra_packages) {
    std::string base = basename_of(p);
    steps.push_back(copy_step(p, base));
    steps.push_back(pip_step(shlex_quote(base), ExtraPackageSource{p, base}));
  }
  for (const auto& r : in.requirements)
    steps.push_back(pip_step("--upgrade " + shlex_quote(r), RequirementSource{r}));
  for (const auto& d : in.extra_dirs) steps.push_back(copy_step(d, d));
  steps.push_back(copy_step(in.main_dir, in.main_dir));
  steps.push_back({"ENTRYPOINT " + json_list(in.entrypoint), EntrypointStep{in.entrypoint}});
  return steps;
}

// gcloud's first RUN runs as the base config's User, as in docker's build (an image's User is inherited: Dockerfile
// reference, USER). `mkdir -m 777 -p /usr/app /home` as any other user cannot create /usr/app in the root-owned
// /usr, so docker's build stops there with Permission denied; so does this one, before any work. Root with another
// group makes docker's RUN steps write files of that group, which this build does not reproduce.
void check_runs_as_root(const std::string& user, const std::vector<BuildStep>& steps) {
  auto is_root = [](const std::string& id) { return id.empty() || id == "root" || id == "0"; };
  auto colon = user.find(':');
  const bool root_uid = is_root(user.substr(0, colon));
  if (root_uid && (colon == std::string::npos || is_root(user.substr(colon + 1)))) return;
  const auto first_run = std::find_if(steps.begin(), steps.end(), [](const BuildStep& step) {
    return std::holds_alternative<MkdirStep>(step.action);
  });
  if (first_run == steps.end()) return;
  const std::string hint = "build on a base that runs as root, or derive one from it with `USER root`";
  if (root_uid)
    throw Error("the base image runs as user " + user + " (its config's User), so docker's RUN steps write files " +
                    "of that group, which trainpack does not reproduce", hint);
  throw Error("the base image runs as user " + user + " (its config's User), so gcloud's `" + first_run->instruction +
                  "` fails in docker's build (Permission denied)", hint);
}

}  // namespace trainpack::gcloud
