#include "sbom/streamed_json.h"

#include <algorithm>
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

// `text` as dump() writes a JSON string. Printable ASCII without a quote or backslash is as it is (what most names
// and every digest are); anything else goes through the serializer: escapes, and UTF-8 checked.
void append_string(std::string& out, std::string_view text) {
  const bool plain =
      std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  if (!plain) return append_nested(out, nlohmann::json(text), 0);
  out += '"';
  out += text;
  out += '"';
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

// The layout of dump(2) at an element's depth: the element's members 6 spaces in, an array's objects 8, their
// members 10.
StreamedJson::ObjectElement::ObjectElement(StreamedJson& doc) : out_(doc.out_) {
  out_ += doc.elements_++ == 0 ? "\n    {" : ",\n    {";
}

void StreamedJson::ObjectElement::begin_member(std::string_view key) {
  out_ += members_++ == 0 ? "\n      " : ",\n      ";
  append_string(out_, key);
  out_ += ": ";
}

void StreamedJson::ObjectElement::member(std::string_view key, std::string_view value) {
  begin_member(key);
  append_string(out_, value);
}

void StreamedJson::ObjectElement::objects(std::string_view key,
                                          std::initializer_list<std::initializer_list<StringMember>> objects) {
  begin_member(key);
  out_ += '[';
  std::size_t n = 0;
  for (const auto& object : objects) {
    out_ += n++ == 0 ? "\n        {" : ",\n        {";
    std::size_t m = 0;
    for (const auto& [name, value] : object) {
      out_ += m++ == 0 ? "\n          " : ",\n          ";
      append_string(out_, name);
      out_ += ": ";
      append_string(out_, value);
    }
    out_ += m == 0 ? "}" : "\n        }";
  }
  out_ += n == 0 ? "]" : "\n      ]";
}

void StreamedJson::ObjectElement::end() { out_ += members_ == 0 ? "}" : "\n    }"; }

void StreamedJson::end_array() { out_ += elements_ == 0 ? "]" : "\n  ]"; }

std::string StreamedJson::finish() && {
  out_ += members_ == 0 ? "{}\n" : "\n}\n";
  return std::move(out_);
}

}  // namespace trainpack::sbom
