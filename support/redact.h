#pragma once
// Secrets out of what trainpack shows: messages, logs, and its own command line (/proc/PID/cmdline is readable by
// every user of the machine, among them the unprivileged one that runs a project's setup.py).
#include <string>
#include <string_view>

namespace trainpack {

// `text` with the password of every userinfo masked, as pip's redact_auth_from_url does
// (pip/_internal/utils/misc.py): "https://user:pass@host/simple" → "https://user:***@host/simple", a user alone
// (a token, "https://TOKEN@host") → "https://***@host", and an image reference "user:pass@host/repo:tag" →
// "user:***@host/repo:tag". A digest after '@' ("python:3.11@sha256:…") and an e-mail address are left alone.
std::string mask_userinfo(std::string_view text);

// For text from other programs (a credential helper's stderr): mask_userinfo, the value after a name that says
// password, secret, token, api key or auth ("password=…", "\"Secret\": \"…\"", "--token=…"), what follows
// "Basic"/"Bearer", and long opaque words that mix upper case, lower case and digits (tokens, keys) become "***".
std::string mask_secrets(std::string_view text);

// Overwrites in place what mask_secrets masks in argv[1..argc) (but long opaque words: paths stay), and the whole
// argument after a flag whose name says password, secret or token, so /proc/PID/cmdline no longer shows them (as curl does for -u). Call once the
// arguments are parsed into strings of their own.
void blank_secret_arguments(int argc, char** argv);

}  // namespace trainpack
