#include "sbom/streamed_json.h"

#include <utility>

namespace trainpack::sbom {

namespace {

// `value` as dump(2) writes it `depth` levels deep: each line after its first indented by 2 * depth more spaces.
// nlohmann's own serializer (what dump() runs at indent 0, into a string of its own) takes that starting indent and
// appends to `out`: each element's text is written once, not dumped and then copied line by line.
void append_nested(std::string& out, const nlohmann::json& value, std::size_t depth) {
  nlohmann::detail::serializer<nlohmann::json> serializer(nlohmann::detail::output_adapter<char, std::string>(out), ' ',
                                                          nlohmann::json::error_handler_t::strict);
  serializer.dump(value, true, false, 2, static_cast<unsigned>(2 * depth));
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

std::string& StreamedJson::raw_element() {
  out_ += elements_++ == 0 ? "\n    " : ",\n    ";
  return out_;
}

void StreamedJson::append_string(std::string& out, const std::string& text) {
  append_nested(out, nlohmann::json(text), 0);
}

void StreamedJson::end_array() { out_ += elements_ == 0 ? "]" : "\n  ]"; }

std::string StreamedJson::finish() && {
  out_ += members_ == 0 ? "{}\n" : "\n}\n";
  return std::move(out_);
}

}  // namespace trainpack::sbom
