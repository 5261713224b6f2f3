// docs/architecture.md is the map of the code: every room it lists is a room of CMakeLists.txt and every room is
// listed, every path it names exists, every type it names is declared in a header (public), and each room's main
// types and entry points are declared in that room's headers. The map's arrows are the USES of each
// trainpack_room() line: the rooms a room's files include, no more and no fewer.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/fs.h"
#include "support/text.h"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = TRAINPACK_SOURCE_DIR;

std::string doc() { return trainpack::read_file(kSource / "docs" / "architecture.md"); }

// The text of each `code span` in `text`.
std::vector<std::string> code_spans(std::string_view text) {
  static const RE2 span("`([^`\n]+)`");
  std::vector<std::string> out;
  re2::StringPiece rest(text.data(), text.size());
  std::string found;
  while (RE2::FindAndConsume(&rest, span, &found)) out.push_back(found);
  return out;
}

// Room name → the text of its headers, for the rooms CMakeLists.txt defines.
std::map<std::string, std::string> room_headers() {
  static const RE2 room_line(R"(trainpack_room\((\w+))");
  std::string cmake = trainpack::read_file(kSource / "CMakeLists.txt");
  re2::StringPiece rest(cmake);
  std::string name;
  std::map<std::string, std::string> rooms;
  while (RE2::FindAndConsume(&rest, room_line, &name)) {
    std::string& text = rooms[name];
    for (const auto& e : fs::directory_iterator(kSource / name))
      if (e.path().extension() == ".h") text += trainpack::read_file(e.path());
  }
  return rooms;
}

// Room name → the rooms its trainpack_room() line USES (up to LIBRARIES, GENERATED or the closing parenthesis).
std::map<std::string, std::set<std::string>> declared_uses() {
  static const RE2 room_call(R"(trainpack_room\((\w+)([^)]*)\))");
  std::string cmake = trainpack::read_file(kSource / "CMakeLists.txt");
  re2::StringPiece rest(cmake);
  std::string name, arguments;
  std::map<std::string, std::set<std::string>> uses;
  while (RE2::FindAndConsume(&rest, room_call, &name, &arguments)) {
    std::set<std::string>& used = uses[name];
    bool in_uses = false;
    for (const std::string& word : trainpack::split_nonempty(arguments, " \n")) {
      if (word == "USES" || word == "LIBRARIES" || word == "GENERATED") in_uses = word == "USES";
      else if (in_uses) used.insert(word);
    }
  }
  return uses;
}

// The other rooms whose headers the files of `room` include.
std::set<std::string> included_rooms(const std::string& room,
                                     const std::map<std::string, std::set<std::string>>& rooms) {
  static const RE2 include(R"re(#include "(\w+)/)re");
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / room)) {
    if (e.path().extension() != ".cpp" && e.path().extension() != ".h") continue;
    std::string text = trainpack::read_file(e.path());
    re2::StringPiece rest(text);
    std::string included;
    while (RE2::FindAndConsume(&rest, include, &included))
      if (included != room && rooms.count(included)) out.insert(included);
  }
  return out;
}

bool declares_type(const std::string& headers, const std::string& type) {
  return RE2::PartialMatch(headers, "(class|struct|enum class|enum|using) " + type + R"(\b[^;(]*[{=:])");
}

bool declares_name(const std::string& headers, const std::string& name) {
  return declares_type(headers, name) || RE2::PartialMatch(headers, R"(\b)" + name + R"(\()") ||
         RE2::PartialMatch(headers, R"(\b)" + name + R"( *[;={])");  // a member
}

// The rows of the rooms table: room directory → the code spans of its last column.
std::map<std::string, std::vector<std::string>> room_rows(const std::string& text) {
  static const RE2 row(R"(\n\| `(\w+)/` \|[^\n]*\| ([^\n]*) \|)");
  std::map<std::string, std::vector<std::string>> rows;
  re2::StringPiece rest(text);
  std::string room, names;
  while (RE2::FindAndConsume(&rest, row, &room, &names)) rows[room] = code_spans(names);
  return rows;
}

bool holds_code(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".cpp" || e.path().extension() == ".h") return true;
  return false;
}

TEST(ArchitectureDoc, ListsEveryRoomAndOtherwiseOnlyDirectoriesOfData) {
  std::map<std::string, std::string> rooms = room_headers();
  std::map<std::string, std::vector<std::string>> rows = room_rows(doc());
  for (const auto& [room, headers] : rooms) EXPECT_TRUE(rows.count(room)) << room << "/ has no row";
  for (const auto& [dir, names] : rows) {
    if (rooms.count(dir)) continue;
    ASSERT_TRUE(fs::is_directory(kSource / dir)) << dir << "/ is no directory";
    EXPECT_FALSE(holds_code(kSource / dir)) << dir << "/ holds code but is no room of CMakeLists.txt";
  }
}

TEST(ArchitectureDoc, EachRoomUsesExactlyTheRoomsItIncludes) {
  const std::map<std::string, std::set<std::string>> uses = declared_uses();
  ASSERT_GE(uses.size(), 10u) << "no trainpack_room() lines read from CMakeLists.txt";
  for (const auto& [room, used] : uses) {
    const std::set<std::string> included = included_rooms(room, uses);
    for (const std::string& u : used)
      EXPECT_TRUE(included.count(u)) << room << " USES " << u << " but includes none of its headers";
    for (const std::string& i : included)
      EXPECT_TRUE(used.count(i)) << room << "/ includes " << i << "/ but its trainpack_room() line does not USE it";
  }
}

TEST(ArchitectureDoc, EachRoomsMainTypesAndEntryPointsAreInItsHeaders) {
  std::map<std::string, std::string> rooms = room_headers();
  for (const auto& [room, names] : room_rows(doc())) {
    if (!rooms.count(room)) continue;
    for (const std::string& span : names) {
      std::string name = span.substr(0, span.find_first_of(" (<"));
      if (!RE2::FullMatch(name, R"(\w+)") || fs::exists(kSource / room / (name + ".h"))) continue;  // a file
      EXPECT_TRUE(declares_name(rooms[room], name)) << "`" << span << "` is in no header of " << room << "/";
    }
  }
}

TEST(ArchitectureDoc, EveryPathItNamesExists) {
  std::set<std::string> top;
  for (const auto& e : fs::directory_iterator(kSource))
    if (e.is_directory()) top.insert(e.path().filename().string());
  for (const std::string& span : code_spans(doc())) {
    if (!RE2::FullMatch(span, R"([\w.-]+/[\w./-]*)")) continue;
    if (!top.count(span.substr(0, span.find('/')))) continue;  // a cache directory (`blobs/`), not a path here
    const fs::path path = kSource / span;
    EXPECT_TRUE(fs::exists(path) || fs::exists(path.string() + ".h") || fs::exists(path.string() + ".cpp"))
        << "`" << span << "` names no file or directory";
  }
}

TEST(ArchitectureDoc, EveryFileItNamesByItselfExists) {
  std::set<std::string> names;
  for (auto it = fs::recursive_directory_iterator(kSource); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it.depth() == 0 && (name == "build" || name.starts_with("build-") || name.starts_with("."))) {
      it.disable_recursion_pending();  // build trees and caches: not the source
      continue;
    }
    names.insert(name);
  }
  for (const std::string& span : code_spans(doc())) {
    if (RE2::FullMatch(span, R"([\w-]+\.(cpp|h|cmake|txt|yaml|yml|md))")) {
      EXPECT_TRUE(names.count(span)) << "`" << span << "` is no file of the source tree";
    }
  }
}

TEST(ArchitectureDoc, EveryTypeItNamesIsDeclaredInAHeader) {
  std::string headers;
  for (const auto& [room, text] : room_headers()) headers += text;
  static const RE2 type_span(R"((?:[a-z]+::)*([A-Z][a-z]\w*)(?:::(\w+))?(?:\(\))?)");
  for (const std::string& span : code_spans(doc())) {
    std::string type, member;
    if (!RE2::FullMatch(span, type_span, &type, &member)) continue;
    EXPECT_TRUE(declares_type(headers, type)) << "`" << span << "`: no header declares " << type;
    if (!member.empty()) {
      EXPECT_TRUE(declares_name(headers, member)) << "`" << span << "`: no header has " << member;
    }
  }
}

}  // namespace
