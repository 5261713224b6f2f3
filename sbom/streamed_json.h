#pragma once
// A JSON document written member by member, and an array member element by element, as nlohmann's dump(2) of the
// whole document would be: the same bytes, without holding the document as one tree. An SBOM of an image with tens
// of thousands of files is such a document: building, dumping and freeing its tree took most of a warm build.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace trainpack::sbom {

// The caller gives the members in key order (nlohmann's objects keep their keys sorted, std::map's order), each once.
class StreamedJson {
 public:
  void member(const std::string& key, const nlohmann::json& value);
  void begin_array(const std::string& key);
  void element(const nlohmann::json& value);  // of the array begun last
  // An element of the array begun last that the caller appends to the returned text itself, as dump(2) of the
  // document has it: the first line where the separator leaves it, each later one indented as two levels deep (an
  // SBOM writes its files this way, tens of thousands of them, without an object of each).
  std::string& raw_element();
  // `text` as dump() writes a JSON string (escaped; text that is not UTF-8 throws, as dump() does).
  static void append_string(std::string& out, const std::string& text);
  void end_array();
  // The document, ending with a newline.
  std::string finish() &&;

 private:
  void begin_member(const std::string& key);

  std::string out_;
  std::size_t members_ = 0;
  std::size_t elements_ = 0;
};

}  // namespace trainpack::sbom
