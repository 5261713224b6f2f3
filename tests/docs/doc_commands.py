#!/usr/bin/env python3
"""Runs every trainpack command the documentation and the CI templates show, so none can go stale.

    doc_commands.py markdown FILE.md...     every ```sh / ```bash block of each file (a directory: its *.md)
    doc_commands.py templates FILE.yaml...  every trainpack command of each CI template (Cloud Build, GitHub
                                            Actions, GitLab CI, Tekton), read as YAML (a directory: its *.yaml,
                                            *.yml)
    doc_commands.py selftest                the checks themselves, on testdata/doc_commands/ (each must fail)

A trainpack line is a command whose program is `trainpack` (or a path ending in /trainpack). Each one is
1. checked against `trainpack [SUBCOMMAND] --help`: a subcommand or flag the help does not name fails the run, even
   in a block that is not run (Markdown inline code that starts with `trainpack ` is checked the same way);
2. run with bash (`set -euo pipefail`, so an undefined variable fails), after the placeholder substitutions below,
   from a copy of testdata/example-trainer, with the assignments (`NAME=value`) that came before it in its block
   or script; it must exit 0. Other lines (gcloud, curl, apt, bash scripts/...) are shown, never run.
A Markdown block that cannot run in the test says why on the line before it: `<!-- not run: REASON -->`.

Placeholders and the test values that replace them (docs/testing.md lists them too):
    any *-docker.pkg.dev host (REGION-docker.pkg.dev, us-docker.pkg.dev, ...)  the test registry (127.0.0.1:5100)
    PROJECT, REPO (whole words)                                               project, repo
    DIR                                                                       the trainer directory (the copy)
    BASEDIR                                                                   the test base's OCI layout
    OUTDIR                                                                    an empty directory
    /workspace (Cloud Build's working directory)                              the trainer directory
A base named by --executor-image-uri or --base-source=docker://... in the test registry is first copied there from
the test base (skopeo), so a command may name any repository as its base.
CI templates get their variables from the template (Cloud Build substitutions, GitHub/GitLab env and variables,
Tekton params' defaults) and the CI's own from CI_VALUES below; a variable neither defines fails the run.

Environment (set by ctest for integration tests): TRAINPACK_BIN, TRAINPACK_SOURCE_DIR, TRAINPACK_TEST_BASE,
TRAINPACK_TEST_REGISTRY, TRAINPACK_TEST_TMPDIR.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SOURCE_DIR = os.environ.get("TRAINPACK_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
COMMAND_TIMEOUT = 600

# What each CI defines for a job, as the test sets it (values a template may use without defining them).
CI_VALUES = {
    "cloudbuild": {"PROJECT_ID": "project", "BUILD_ID": "build-1", "LOCATION": "us-central1"},
    "github": {"GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567", "GITHUB_WORKSPACE": "{work}",
               "RUNNER_TEMP": "{tmp}", "GITHUB_PATH": "{tmp}/github_path", "GITHUB_ENV": "{tmp}/github_env",
               "GITHUB_REPOSITORY": "owner/trainer", "GITHUB_REF_NAME": "main", "GITHUB_RUN_ID": "1"},
    "gitlab": {"CI_COMMIT_SHA": "0123456789abcdef0123456789abcdef01234567", "CI_COMMIT_SHORT_SHA": "01234567",
               "CI_PROJECT_DIR": "{work}", "CI_PROJECT_URL": "https://gitlab.example/owner/trainer",
               "CI_PIPELINE_ID": "1", "CI_JOB_ID": "1", "CI_COMMIT_REF_NAME": "main"},
    "tekton": {},
}


class DocError(Exception):
    """A documented command that is wrong: names a missing flag, cannot run, or fails."""


# ---------------------------------------------------------------------------------------------------------------
# The binary's own description of its commands


class Help:
    """Subcommands and flags as `trainpack [SUBCOMMAND] --help` lists them (at the start of its lines; flags named in
    a description, such as gcloud's, do not count)."""

    OPTION_LINE = re.compile(r"^\s+((?:--?[A-Za-z0-9][\w.-]*)(?:,\s*--?[A-Za-z0-9][\w.-]*)*)", re.M)
    SUBCOMMAND_LINE = re.compile(r"^\s+([a-z][a-z0-9-]*)\s{2,}\S", re.M)

    def __init__(self, binary):
        self.binary = binary
        top = self._help([])
        self.top_flags = self._flags(top)
        # Only the "Subcommands:" section lists commands; other sections (exit status) have indented words too.
        section = re.search(r"^Subcommands:\n((?:[ \t]+\S.*\n)+)", top, re.M)
        self.subcommands = set(self.SUBCOMMAND_LINE.findall(section.group(1))) if section else set()
        if not self.subcommands:
            raise DocError(f"{binary} --help lists no subcommands:\n{top}")
        self.flags = {}

    def _help(self, sub):
        r = subprocess.run([self.binary, *sub, "--help"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise DocError(f"`trainpack {' '.join(sub)} --help` exited {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def _flags(self, text):
        return {f.strip() for group in self.OPTION_LINE.findall(text) for f in group.split(",")}

    def flags_of(self, sub):
        if sub not in self.flags:
            self.flags[sub] = self._flags(self._help([sub]))
        return self.flags[sub]

    def check(self, argv):
        """argv without the program: raises DocError naming a subcommand or flag the help does not have."""
        words = [w.strip("[]") for w in argv]
        options = words[:words.index("--")] if "--" in words else words
        sub = next((w for w in options if not w.startswith("-")), None)
        if sub is not None and re.fullmatch(r"[A-Z][A-Z_]*", sub):
            # A placeholder (`trainpack COMMAND --help`): the flags of any command.
            known = self.top_flags.union(*(self.flags_of(c) for c in self.subcommands))
            sub = None
        elif sub is not None and sub not in self.subcommands:
            raise DocError(f"`trainpack {sub}`: no such subcommand (trainpack --help lists "
                           f"{', '.join(sorted(self.subcommands))})")
        else:
            known = self.flags_of(sub) if sub else self.top_flags
        for w in options:
            if not w.startswith("-") or w == "-":
                continue
            flag = w.split("=", 1)[0]
            if flag not in known:
                raise DocError(f"`{flag}` is not a flag of `trainpack{' ' + sub if sub else ''}` "
                               f"(see its --help)")


# ---------------------------------------------------------------------------------------------------------------
# Placeholders and the test's registry, base and trainer


class TestWorld:
    def __init__(self):
        self.binary = os.path.abspath(os.environ["TRAINPACK_BIN"])
        self.registry = os.environ["TRAINPACK_TEST_REGISTRY"]
        self.base_layout = os.path.join(os.environ["TRAINPACK_TEST_BASE"], "oci")
        tmp_root = os.environ.get("TRAINPACK_TEST_TMPDIR") or None
        # The placeholders become words of shell text, as a reader pastes them: the paths put there must have no
        # blanks, wherever the checkout is (a build tree under "/tmp/x y/").
        if tmp_root and re.search(r"\s", tmp_root):
            tmp_root = "/tmp"
        if tmp_root:
            os.makedirs(tmp_root, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="doc-commands-", dir=tmp_root)
        if re.search(r"\s", self.base_layout):
            alias = os.path.join(self.tmp, "base-oci")
            os.symlink(self.base_layout, alias)
            self.base_layout = alias
        self.shims = os.path.join(self.tmp, "bin")
        os.makedirs(self.shims)
        os.symlink(self.binary, os.path.join(self.shims, "trainpack"))
        self.cache = os.path.join(self.tmp, "cache")
        self.seeded = set()
        self.help = Help(self.binary)
        self.serial = 0
        self.errors = []  # one line per wrong command; the run goes on, so one run shows them all

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def new_workdir(self):
        """A fresh copy of the example trainer, the directory commands run from, and an empty OUTDIR."""
        self.serial += 1
        root = os.path.join(self.tmp, f"run-{self.serial}")
        work = os.path.join(root, "trainer")
        shutil.copytree(os.path.join(SOURCE_DIR, "testdata", "example-trainer"), work, symlinks=True)
        os.makedirs(os.path.join(root, "out"))
        os.makedirs(os.path.join(root, "home"))
        return root, work

    def substitute(self, text, root, work):
        text = re.sub(r"\b[A-Za-z0-9-]*-docker\.pkg\.dev\b", self.registry, text)
        text = re.sub(r"\bPROJECT\b", "project", text)
        text = re.sub(r"\bREPO\b", "repo", text)
        text = re.sub(r"\bBASEDIR\b", self.base_layout, text)
        text = re.sub(r"\bOUTDIR\b", os.path.join(root, "out"), text)
        text = re.sub(r"\bDIR\b", work, text)
        text = text.replace("{work}", work).replace("{tmp}", root)
        return re.sub(r"(?<![\w/.-])/workspace\b", work, text)

    def seed_bases(self, argv):
        """Copies the test base to every registry base the command names, once."""
        for w in argv:
            m = re.match(r"--(?:executor-image-uri|base-source)=(?:docker://)?(.+)", w)
            if not m or not m.group(1).startswith(self.registry + "/") or m.group(1) in self.seeded:
                continue
            r = subprocess.run(["skopeo", "copy", "-q", "--dest-tls-verify=false", f"oci:{self.base_layout}:3.11",
                                f"docker://{m.group(1)}"], capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise RuntimeError(f"seeding {m.group(1)} from the test base: {r.stderr.strip()}")
            self.seeded.add(m.group(1))

    def bash(self, script, env, root, work):
        full_env = {"PATH": self.shims + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": os.path.join(root, "home"), "TMPDIR": self.tmp,
                    "TRAINPACK_CACHE_DIR": self.cache}
        for name in ("DOCKER_HOST", "DOCKER_CONFIG"):
            if name in os.environ:
                full_env[name] = os.environ[name]
        full_env.update(env)
        try:
            return subprocess.run(["bash", "-c", script], cwd=work, env=full_env, capture_output=True,
                                  timeout=COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise DocError(f"did not finish within {COMMAND_TIMEOUT} s")

    def run(self, line, assignments, env, root, work):
        """Runs one trainpack line (already substituted) with bash; raises DocError when it fails."""
        prelude = "set -euo pipefail\n" + "".join(a + "\n" for a in assignments)
        # The arguments as the shell expands them (variables, quotes), to seed the bases they name.
        words = self.bash(prelude + "trainpack() { printf '%s\\0' \"$@\"; }\n" + line + "\n", env, root, work)
        if words.returncode != 0:
            raise DocError(f"the shell cannot expand it:\n{words.stderr.decode(errors='replace').strip()}")
        self.seed_bases(words.stdout.decode(errors="replace").split("\0"))
        r = self.bash(prelude + line + "\n", env, root, work)
        if r.returncode != 0:
            raise DocError(f"exited {r.returncode}:\n{r.stderr.decode(errors='replace').strip()[-3000:]}")


def split_words(line):
    try:
        return shlex.split(line, comments=True)
    except ValueError as e:
        raise DocError(f"cannot be split into words as the shell would: {e}")


ASSIGNMENT = re.compile(r"^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=")


def trainpack_argv(words):
    """The arguments after the program when the words are a trainpack command (after NAME=value prefixes)."""
    i = 0
    while i < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]):
        i += 1
    if i < len(words) and (words[i] == "trainpack" or words[i].endswith("/trainpack")):
        return words[i + 1:]
    return None


def logical_lines(text):
    """Shell lines with backslash continuations joined."""
    lines, current = [], ""
    for raw in text.splitlines():
        part = raw.strip() if current else raw
        if part.rstrip().endswith("\\"):
            current += part.rstrip()[:-1].rstrip() + " "
            continue
        lines.append(current + part)
        current = ""
    if current:
        lines.append(current)
    return lines


def program_path_to_trainpack(line):
    """`./trainpack-1.0/bin/trainpack --version` runs the binary under test: the program becomes `trainpack`."""
    return re.sub(r"^(\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)\S*/trainpack(?=\s|$)", r"\1trainpack", line)


def check_script(world, script, env, where, run):
    """Checks, and when run is true runs, every trainpack line of a shell script; returns how many it found."""
    found = 0
    assignments = []
    root = work = None
    for line in logical_lines(script):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if ASSIGNMENT.match(stripped) and len(split_words(stripped)) == 1:
            assignments.append(stripped)
            continue
        argv = trainpack_argv(split_words(stripped))
        if argv is None:
            continue
        found += 1
        try:
            world.help.check(argv)
            if run:
                if root is None:
                    root, work = world.new_workdir()
                concrete = world.substitute(program_path_to_trainpack(stripped), root, work)
                world.run(concrete, [world.substitute(a, root, work) for a in assignments],
                          {k: world.substitute(v, root, work) for k, v in env.items()}, root, work)
        except DocError as e:
            world.errors.append(f"{where}: `{stripped}`: {e}")
    return found


# ---------------------------------------------------------------------------------------------------------------
# Markdown

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)[^\n]*$")
NOT_RUN = re.compile(r"<!--\s*not run:(.*?)-->")
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}


def markdown_blocks(text):
    """(line number, language, body, the line before the fence) of each fenced block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, language, start = m.group(2), m.group(3), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(m.group(1)):] if lines[i].startswith(m.group(1)) else lines[i])
            i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        yield start + 1, language, "\n".join(body), before
        i += 1


def inline_commands(text):
    """(line number, code) of inline code spans outside fenced blocks that start with `trainpack `."""
    in_fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            in_fence = None if in_fence and m.group(2).startswith(in_fence) else (in_fence or m.group(2))
            continue
        if in_fence:
            continue
        for code in re.findall(r"(?<!`)`([^`]+)`(?!`)", line):
            if code.startswith("trainpack "):
                yield number, code


def check_markdown(world, path):
    text = open(path, encoding="utf-8").read()
    name = os.path.relpath(path, SOURCE_DIR)
    found = 0
    for number, language, body, before in markdown_blocks(text):
        if language not in SHELL_LANGUAGES:
            continue
        marker = NOT_RUN.search(before)
        if marker and not marker.group(1).strip():
            world.errors.append(f"{name}:{number}: `<!-- not run: -->` needs a reason")
            continue
        found += check_script(world, body, {}, f"{name}:{number}", run=marker is None)
    for number, code in inline_commands(text):
        try:
            world.help.check(split_words(code.replace("…", ""))[1:])
        except DocError as e:
            world.errors.append(f"{name}:{number}: `{code}`: {e}")
        found += 1
    return found


# ---------------------------------------------------------------------------------------------------------------
# CI templates


def yaml_load(path):
    import yaml  # python3-yaml (scripts/install-deps.sh --test)
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def template_kind(doc):
    if not isinstance(doc, dict):
        raise DocError("not a YAML mapping")
    if str(doc.get("apiVersion", "")).startswith("tekton.dev/"):
        return "tekton"
    if "on" in doc or True in doc:  # YAML 1.1 reads a bare `on:` key as true
        return "github"
    if isinstance(doc.get("steps"), list):
        return "cloudbuild"
    if any(isinstance(v, dict) and "script" in v for v in doc.values()):
        return "gitlab"
    raise DocError("neither Cloud Build, GitHub Actions, GitLab CI nor a Tekton Task")


def substitute_variables(text, values, pattern, where):
    """Replaces each match of pattern (group 1 = the name) with its value; an unknown name is an error."""
    def value(m):
        if m.group(1) not in values:
            raise DocError(f"{where}: `{m.group(0)}` is not defined by the template nor by the CI")
        return str(values[m.group(1)])
    return re.sub(pattern, value, text)


def cloudbuild_scripts(doc, name):
    values = dict(CI_VALUES["cloudbuild"])
    values.update(doc.get("substitutions") or {})
    pattern = r"\$\{?(_?[A-Z][A-Z0-9_]*)\}?"  # Cloud Build: $NAME, ${NAME}; $$ is a literal $
    trainpack_image = substitute_variables(str(values.get("_TRAINPACK_IMAGE", "")), values, pattern, name)
    for i, step in enumerate(doc["steps"]):
        image = substitute_variables(str(step.get("name", "")), values, pattern, f"{name} step {i}")
        args = [substitute_variables(str(a).replace("$$", "\0"), values, pattern, f"{name} step {i}")
                .replace("\0", "$") for a in step.get("args") or []]
        if trainpack_image and image == trainpack_image and "entrypoint" not in step:
            yield f"{name} step {step.get('id', i)}", "trainpack " + shlex.join(args), {}
        elif step.get("entrypoint") in ("bash", "sh") and len(args) >= 2 and args[0] == "-c":
            yield f"{name} step {step.get('id', i)}", args[1], {}


def github_scripts(doc, name):
    def expressions(text, env):
        known = {"github.sha": CI_VALUES["github"]["GITHUB_SHA"], "runner.temp": "{tmp}",
                 "github.workspace": "{work}"}
        known.update({"env." + k: v for k, v in env.items()})
        return substitute_variables(text, known, r"\$\{\{\s*([\w.-]+)\s*\}\}", name)
    base_env = {k: str(v) for k, v in (doc.get("env") or {}).items()}
    for job_name, job in (doc.get("jobs") or {}).items():
        job_env = {**base_env, **{k: str(v) for k, v in (job.get("env") or {}).items()}}
        for i, step in enumerate(job.get("steps") or []):
            if "run" not in step:
                continue
            env = {**job_env, **{k: str(v) for k, v in (step.get("env") or {}).items()}}
            env = {k: expressions(v, env) for k, v in env.items()}
            yield (f"{name} job {job_name} step {step.get('name', i)}", expressions(step["run"], env),
                   {**CI_VALUES["github"], **env})


def gitlab_scripts(doc, name):
    global_vars = {k: str(v) for k, v in (doc.get("variables") or {}).items()}
    for job_name, job in doc.items():
        if not isinstance(job, dict) or "script" not in job:
            continue
        env = {**CI_VALUES["gitlab"], **global_vars, **{k: str(v) for k, v in (job.get("variables") or {}).items()}}
        env.update({k: "test-id-token" for k in (job.get("id_tokens") or {})})
        env = expand_variables(env)
        # Every variable the job names (its image too) must be defined: GitLab leaves an undefined one empty.
        text = repr({k: v for k, v in job.items() if k != "variables"}) + repr(job.get("variables"))
        for m in re.finditer(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text):
            if m.group(1) not in env and m.group(1) not in ("PATH", "HOME") and not re.search(rf"\b{m.group(1)}=", text):
                raise DocError(f"{name} job {job_name}: `{m.group(0)}` is not defined by the template nor by GitLab")
        for part in ("before_script", "script"):
            items = job.get(part) or []
            yield f"{name} job {job_name} {part}", "\n".join(items if isinstance(items, list) else [items]), env


def expand_variables(env):
    """GitLab expands $NAME and ${NAME} in a variable's value with the other variables (undefined: left as is)."""
    def one(value, depth=0):
        if depth > 10:
            return value
        return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?",
                      lambda m: one(env[m.group(1)], depth + 1) if m.group(1) in env else m.group(0), value)
    return {k: one(v) for k, v in env.items()}


def tekton_scripts(doc, name):
    spec = doc.get("spec") or {}
    values = {f"params.{p['name']}": p.get("default", f"test-{p['name']}") for p in spec.get("params") or []}
    for w in spec.get("workspaces") or []:
        values[f"workspaces.{w['name']}.path"] = "{work}" if w["name"] == "source" else "{tmp}/" + w["name"]
        values[f"workspaces.{w['name']}.bound"] = "false" if w.get("optional") else "true"
    for r in spec.get("results") or []:
        values[f"results.{r['name']}.path"] = "{tmp}/result-" + r["name"]
    def params(text):
        return substitute_variables(str(text), values, r"\$\(([\w.-]+)\)", name)
    for i, step in enumerate(spec.get("steps") or []):
        env = {e["name"]: params(e.get("value", "")) for e in step.get("env") or []}
        where = f"{name} step {step.get('name', i)}"
        if "script" in step:
            yield where, params(step["script"]), env
        elif step.get("command", [None])[0] == "trainpack" or (step.get("args") and not step.get("command")):
            yield where, "trainpack " + shlex.join(params(a) for a in step.get("args") or []), env


SCRIPTS = {"cloudbuild": cloudbuild_scripts, "github": github_scripts, "gitlab": gitlab_scripts,
           "tekton": tekton_scripts}


def check_template(world, path):
    name = os.path.relpath(path, SOURCE_DIR)
    doc = yaml_load(path)
    kind = template_kind(doc)
    found = 0
    for where, script, env in SCRIPTS[kind](doc, name):
        found += check_script(world, script, env, where, run=True)
    if found == 0:
        raise DocError(f"{name} ({kind}): no trainpack command found")
    return found


# ---------------------------------------------------------------------------------------------------------------


def expand_paths(kind, paths):
    """A directory stands for its Markdown files (markdown) or YAML files (templates)."""
    suffixes = (".md",) if kind == "markdown" else (".yaml", ".yml")
    for path in paths:
        if os.path.isdir(path):
            yield from sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(suffixes))
        else:
            yield path


def run_checks(kind, paths):
    world = TestWorld()
    try:
        for path in expand_paths(kind, paths):
            try:
                found = (check_markdown if kind == "markdown" else check_template)(world, path)
                print(f"{os.path.relpath(path, SOURCE_DIR)}: {found} trainpack command(s) checked", flush=True)
            except DocError as e:
                world.errors.append(f"{os.path.relpath(path, SOURCE_DIR)}: {e}")
    finally:
        world.close()
    for error in world.errors:
        print(f"doc_commands: {error}", file=sys.stderr)
    return 1 if world.errors else 0


# Each sample is wrong in one way; the checks must say so (and exit 1).
SELFTEST_CASES = [
    ("markdown", "missing_flag.md", "`--no-such-flag` is not a flag of `trainpack build`"),
    ("markdown", "missing_flag_not_run.md", "`--output-name` is not a flag of `trainpack build`"),
    ("markdown", "missing_flag_inline.md", "`--imge-uri` is not a flag of `trainpack job-spec`"),
    ("markdown", "no_such_subcommand.md", "`trainpack bild`: no such subcommand"),
    ("markdown", "rejected_value.md", 'unknown image location "registry:'),
    ("markdown", "not_run_without_reason.md", "needs a reason"),
    ("templates", "gitlab_undefined_variable.yml", "`$TRAINPACK_IMAGE` is not defined"),
    ("templates", "github_undefined_expression.yml", "`${{ env.IMAGE }}` is not defined"),
]


def selftest():
    samples = os.path.join(SOURCE_DIR, "testdata", "doc_commands")
    failures = 0
    for kind, sample, expected in SELFTEST_CASES:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), kind, os.path.join(samples, sample)],
                           capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
        ok = r.returncode == 1 and expected in r.stderr
        print(f"{'ok  ' if ok else 'FAIL'} {sample}: expected exit 1 with {expected!r}", flush=True)
        if not ok:
            print(f"     got exit {r.returncode}\n{r.stdout}{r.stderr}", flush=True)
            failures += 1
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) < 3 or argv[1] not in ("markdown", "templates"):
        print(__doc__, file=sys.stderr)
        return 2
    return run_checks(argv[1], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
