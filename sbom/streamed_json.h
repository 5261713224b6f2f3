#pragma once
// A JSON document written member by member, and an array member element by element, as nlohmann's dump(2) of the
// whole document would be: the same bytes, without holding the document as one tree. An SBOM of an image with tens
// of thousands of files is such a document: building, dumping and freeing its tree took most of a warm build.
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace trainpack::sbom {

// The caller gives the members in key order (nlohmann's objects keep their keys sorted, std::map's order), each once.
class StreamedJson {
 public:
  void member(const std::string& key, const nlohmann::json& value);
  void begin_array(const std::string& key);
  void element(const nlohmann::json& value);  // of the array begun last
  class ObjectElement;                        // an object element written member by member, below
  void end_array();
  // The document, ending with a newline.
  std::string finish() &&;

 private:
  void begin_member(const std::string& key);

  std::string out_;
  std::size_t members_ = 0;
  std::size_t elements_ = 0;
};

// An object element of the array begun last, written member by member as dump(2) of the document writes it, without
// building it: an SBOM has one per file, tens of thousands. Its members, in key order, are strings, or arrays of
// objects whose members are strings. Strings that are not UTF-8 throw, as in dump().
class StreamedJson::ObjectElement {
 public:
  using StringMember = std::pair<std::string_view, std::string_view>;
  explicit ObjectElement(StreamedJson& doc);
  void member(std::string_view key, std::string_view value);
  void objects(std::string_view key, std::initializer_list<std::initializer_list<StringMember>> objects);
  void end();  // the object's closing brace

 private:
  void begin_member(std::string_view key);

  std::string& out_;
  std::size_t members_ = 0;
};

}  // namespace trainpack::sbom
