#pragma once
// The Dockerfile that `gcloud ai custom-jobs local-run` (Cloud SDK 578.0.0, command_lib/ai/docker/build.py) writes to
// `docker build -f-`, reproduced byte for byte, quirks included. trainpack prints it and builds the same image from it.
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::gcloud {

// gcloud's _DEFAULT_WORKDIR and _DEFAULT_HOME; local-run offers no way to change them.
inline constexpr const char* kWorkdir = "/usr/app";
inline constexpr const char* kHome = "/home";

// What the Dockerfile depends on. Fill the inputs, then derive() (render_dockerfile derives on its own copy, so the
// derived fields are for callers that need them, e.g. the layer builder).
struct DockerfileSpec {
  // --- inputs ---
  std::string base_image;             // --executor-image-uri, written unquoted after FROM
  bool has_setup_py = false;          // os.path.isfile(<pkg>/./setup.py)
  bool has_requirements_txt = false;  // os.path.isfile(<pkg>/./requirements.txt)
  std::vector<std::string> extra_packages;  // --extra-packages, paths relative to the package dir
  std::vector<std::string> requirements;    // --requirements
  std::vector<std::string> extra_dirs;      // --extra-dirs
  std::string script;         // --script as given; for --python-module it may be left empty (derive() fills it)
  std::string python_module;  // --python-module, empty when --script is used

  // --- derived by derive() ---
  bool prebuilt = false;                // is_vertex_prebuilt_image(base_image): pip3/python3 + sitecustomize removal
  std::string parent_dir;               // dirname(script) or "."; source and destination of the main COPY
  std::vector<std::string> entrypoint;  // the ENTRYPOINT argv

  // Sets `script` to module_to_path(python_module) when a module is given and no script, turns '\' into '/' in
  // `script` (gcloud's os.sep -> posixpath.sep on Windows), and computes prebuilt, parent_dir and entrypoint.
  // Idempotent.
  DockerfileSpec& derive();
};

// The Dockerfile text: starts with "\n", ends right after the ENTRYPOINT line without a newline.
std::string render_dockerfile(const DockerfileSpec& spec);

// gcloud's _IsVertexTrainingPrebuiltImage: re.fullmatch(
//   r"^(us|europe|asia)-docker.pkg.dev/vertex-ai/training/(tf|scikit-learn|pytorch|xgboost)-.+$", uri)
// exactly, gaps included: the dots are unescaped (any character but '\n' matches), sklearn-* and ray-* images and
// regional hosts (us-central1-docker.pkg.dev) do not match, matching is case-sensitive.
bool is_vertex_prebuilt_image(std::string_view uri);

// Python's json.dumps(list_of_str) with default arguments: ["a", "b"], ensure_ascii (non-ASCII as lowercase \uXXXX,
// surrogate pairs above U+FFFF), '/' unescaped. Input is UTF-8; a byte that is not part of valid UTF-8 becomes
// \udcXX like Python's surrogateescape, which is how such bytes reach gcloud from argv or the file system.
std::string json_list(const std::vector<std::string>& items);

// Python's shlex.quote (six.moves.shlex_quote): '' for the empty string, the string itself when every byte is in
// [A-Za-z0-9_@%+=:,./-], else the string in single quotes with each ' written as '"'"'.
std::string shlex_quote(std::string_view s);

// gcloud's ModuleToPath on POSIX: "a.b.c" -> "a/b/c.py".
std::string module_to_path(std::string_view module);

// Python's textwrap.dedent as gcloud's bundled Python runs it (the regex implementation of CPython <= 3.13): lines of
// only spaces/tabs are emptied, then the longest common leading run of spaces/tabs of the other lines is removed.
std::string python_dedent(std::string_view text);

}  // namespace trainpack::gcloud
