// Simple-repository project pages (python/index_page): PEP 503 HTML and PEP 691 JSON, as an index serves them.
// The input is read as both. Every file found has a name with no '/' and no NUL (it becomes a path in the blob
// store and the image), and percent-encoding round-trips.
#include "net/encoding.h"
#include "python/index_page.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;
using namespace trainpack::python;

const std::string kPageUrl = "https://user:secret@example.org/simple/demo/";

void check_files(const IndexPage& page) {
  for (const IndexFile& f : page.files) {
    require(f.filename.find('/') == std::string::npos && f.filename.find('\0') == std::string::npos);
    f.sha256();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  try {
    check_files(parse_html_page(text, kPageUrl));
  } catch (const trainpack::Error&) {
  }
  try {
    check_files(parse_json_page(text, kPageUrl));
  } catch (const trainpack::Error&) {
  }
  require(trainpack::net::percent_decode(percent_encode_path(text)) == text);
  html_unescape(text);
  std::string href(text.substr(0, text.find('\n')));
  resolve_link(kPageUrl, href);
  page_format_for(href);
  is_archive_filename(href);
  path_from_file_url(href);
  return 0;
}
