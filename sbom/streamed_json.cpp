#include "sbom/streamed_json.h"

#include <utility>

namespace trainpack::sbom {

namespace {

// `value` as dump(2) writes it `depth` levels deep: each line after its first indented by 2 * depth more spaces. A
// newline inside a string is written escaped, so every newline in the text ends a line.
void append_nested(std::string& out, const nlohmann::json& value, std::size_t depth) {
  const std::string text = value.dump(2);
  const std::string pad(2 * depth, ' ');
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    out.append(text, start, end + 1 - start);
    out += pad;
  }
  out.append(text, start);
}

}  // namespace

void StreamedJson::begin_member(const std::string& key) {
  out_ += members_++ == 0 ? "{\n  " : ",\n  ";
  out_ += nlohmann::json(key).dump();
  out_ += ": ";
}

void StreamedJson::member(const std::string& key, const nlohmann::json& value) {
  begin_member(key);
  append_nested(out_, value, 1);
}

void StreamedJson::begin_array(const std::string& key) {
  begin_member(key);
  out_ += '[';
  elements_ = 0;
}

void StreamedJson::element(const nlohmann::json& value) {
  out_ += elements_++ == 0 ? "\n    " : ",\n    ";
  append_nested(out_, value, 2);
}

void StreamedJson::end_array() { out_ += elements_ == 0 ? "]" : "\n  ]"; }

std::string StreamedJson::finish() && {
  out_ += members_ == 0 ? "{}\n" : "\n}\n";
  return std::move(out_);
}

}  // namespace trainpack::sbom
