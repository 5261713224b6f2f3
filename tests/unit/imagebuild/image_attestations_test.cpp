// What a build attaches to its image (imagebuild/image_attestations.h): the packages named with what the pip steps
// installed from where, the trainer's files with their checksums, the provenance's dependencies, and the referrers
// themselves (image/artifact_image.h). Attached to real pushes and layouts in
// tests/integration/registry_build_test.cpp.
#include "imagebuild/image_attestations.h"

#include <gtest/gtest.h>

#include <functional>
#include <tuple>
#include <nlohmann/json.hpp>

#include "image/media_types.h"
#include "image/artifact_image.h"
#include "layers/memory_filesystem.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/sbom_example.h"

using namespace trainpack::imagebuild;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;
using nlohmann::json;

namespace {

const std::string kSite = "usr/local/lib/python3.11/dist-packages";

void add_dist(trainpack::layers::MemoryFilesystem& fs, const std::string& dir, const std::string& name,
              const std::string& version) {
  fs.add_file(kSite + "/" + dir + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
}

const trainpack::sbom::Package& named(const std::vector<trainpack::sbom::Package>& packages, const std::string& name) {
  for (const auto& p : packages)
    if (p.name == name) return p;
  throw std::runtime_error("no package " + name);
}

}  // namespace

// A distribution the steps installed carries their origin, URL and hash, matched by canonical name and normalised
// version ("Tp_Alpha" 1.0 is the resolver's "tp-alpha" 1.0.0); another one is the base's.
TEST(ImageAttestations, PackagesInstalledByThePipStepsNameWhereTheyCameFrom) {
  trainpack::layers::MemoryFilesystem fs;
  fs.add_file("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n");
  fs.add_file("var/lib/dpkg/status", "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\n"
                                     "Version: 2.36-9\n");
  add_dist(fs, "Tp_Alpha-1.0.dist-info", "Tp_Alpha", "1.0");
  add_dist(fs, "tp_local-0.1.dist-info", "tp-local", "0.1");
  add_dist(fs, "tp_built-2.0.dist-info", "tp-built", "2.0");
  add_dist(fs, "pip-23.0.1.dist-info", "pip", "23.0.1");
  std::vector<InstalledArtifact> installed{
      {"tp-alpha", "1.0.0", "tp_alpha-1.0-py3-none-any.whl", "https://files.example/tp_alpha-1.0-py3-none-any.whl",
       std::string(64, 'a'), false, false},
      {"tp_local", "0.1", "tp_local-0.1-py3-none-any.whl", "", std::string(64, 'b'), true, false},
      {"tp-built", "2.0", "tp-built-2.0.tar.gz", "https://files.example/tp-built-2.0.tar.gz", std::string(64, 'c'),
       false, true}};
  trainpack::python::PythonFacts python;
  python.site_dirs = {"/" + kSite};
  python.python_full_version = "3.11.2";
  python.machine = "x86_64";
  python.prefix = "/usr";
  std::vector<trainpack::sbom::Package> packages = image_packages(fs, &python, installed);
  ASSERT_EQ(packages.size(), 5u);
  EXPECT_EQ(named(packages, "libc6").origin, trainpack::sbom::Origin::kBaseOs);
  const auto& alpha = named(packages, "Tp_Alpha");
  EXPECT_EQ(alpha.origin, trainpack::sbom::Origin::kInstalled);
  EXPECT_EQ(alpha.download_url, "https://files.example/tp_alpha-1.0-py3-none-any.whl");
  EXPECT_EQ(alpha.sha256, std::string(64, 'a'));
  EXPECT_EQ(named(packages, "tp-local").origin, trainpack::sbom::Origin::kLocalArchive);
  EXPECT_EQ(named(packages, "tp-built").origin, trainpack::sbom::Origin::kBuiltFromSource);
  EXPECT_EQ(named(packages, "pip").origin, trainpack::sbom::Origin::kBasePython);
  EXPECT_TRUE(named(packages, "pip").sha256.empty());
  EXPECT_EQ(image_packages(fs, nullptr, installed).size(), 1u) << "without a Python: the OS packages only";
}

// SPDX wants a file's SHA-1; both digests come from one read of the host file (or of inline bytes), and a later
// layer's file of the same path wins.
// The packages a build keeps for the next one come back field for field; a list it did not write is refused.
TEST(ImageAttestations, KeptPackagesComeBackAsTheyWere) {
  const std::vector<trainpack::sbom::Package> packages = trainpack::sbom::example_document().packages;
  std::vector<trainpack::sbom::Package> back = packages_from_json(json::parse(packages_json(packages).dump()));
  ASSERT_EQ(back.size(), packages.size());
  for (std::size_t i = 0; i < packages.size(); ++i) {
    const trainpack::sbom::Package &a = packages[i], &b = back[i];
    EXPECT_EQ(std::tie(a.name, a.version, a.purl, a.origin, a.license_expression, a.license_text, a.download_url,
                       a.sha256, a.depends_on),
              std::tie(b.name, b.version, b.purl, b.origin, b.license_expression, b.license_text, b.download_url,
                       b.sha256, b.depends_on))
        << a.name;
  }
  json unknown_origin = packages_json(packages);
  unknown_origin[0]["origin"] = "somewhere";
  EXPECT_THROW(packages_from_json(unknown_origin), json::exception);
  json missing_field = packages_json(packages);
  missing_field[1].erase("purl");
  EXPECT_THROW(packages_from_json(missing_field), json::exception);
  EXPECT_THROW(packages_from_json(json::object()), json::exception);
}

TEST(ImageAttestations, CopiedFilesCarrySha1AndSha256) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "attestations-"));
  trainpack::write_file_atomic(dir.path() / "task.py", "abc");
  FileEntry on_host = FileEntry::inline_file("usr/app/trainer/task.py", "old");
  on_host.source = (dir.path() / "task.py").string();
  FileEntries first{FileEntry::inline_file("usr/app/trainer/task.py", "replaced later"),
                    FileEntry::directory("usr/app/trainer", 0755)};
  FileEntries second{on_host, FileEntry::inline_file("usr/app/config/a.yaml", "")};
  std::vector<trainpack::sbom::File> files = merged_files({layer_files(first), layer_files(second)});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "usr/app/config/a.yaml");
  EXPECT_EQ(files[0].sha1, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(files[1].path, "usr/app/trainer/task.py");
  EXPECT_EQ(files[1].sha1, "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(files[1].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A file name that is not UTF-8 is in the image byte for byte; the SBOM, JSON, names it with U+FFFD for its stray
// bytes, and its list is kept and read back like any other.
TEST(ImageAttestations, AFileNameThatIsNotUtf8IsNamedWithReplacementCharacters) {
  FileEntries layer{FileEntry::inline_file("usr/app/caf\xe9.txt", "x"), FileEntry::inline_file("usr/app/b", "y")};
  std::vector<trainpack::sbom::File> files = layer_files(layer);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].path, "usr/app/caf\xef\xbf\xbd.txt");
  EXPECT_EQ(files_from_json(json::parse(files_json(files).dump())).at(1).path, files[1].path);
}

TEST(ImageAttestations, KeptLayerFilesComeBackAsTheyWere) {
  const std::vector<trainpack::sbom::File> files{{"usr/app/a b.py", std::string(40, '1'), std::string(64, '2')},
                                                 {"usr/app/\xc3\xa9.txt", std::string(40, '3'), std::string(64, '4')}};
  const std::vector<trainpack::sbom::File> back = files_from_json(json::parse(files_json(files).dump()));
  ASSERT_EQ(back.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(back[i].path, files[i].path);
    EXPECT_EQ(back[i].sha1, files[i].sha1);
    EXPECT_EQ(back[i].sha256, files[i].sha256);
  }
  EXPECT_THROW(files_from_json(json::object()), json::exception);
  EXPECT_THROW(files_from_json(json::array({json::array({"only a path"})})), json::exception);
  EXPECT_THROW(files_from_json(json::array({json::array({1, 2, 3})})), json::exception);
  json out_of_order = files_json(files);
  std::swap(out_of_order[0], out_of_order[1]);
  EXPECT_THROW(files_from_json(std::move(out_of_order)), json::exception);
}

// Later layers win where paths meet; the result is by path, each path once, whatever the lists' lengths.
TEST(ImageAttestations, MergedFilesInterleaveTheLayersByPathTheLaterWinning) {
  using File = trainpack::sbom::File;
  std::vector<File> first{{"a", "1", ""}, {"c", "1", ""}, {"e", "1", ""}};
  std::vector<File> second{{"b", "2", ""}, {"c", "2", ""}, {"f", "2", ""}, {"g", "2", ""}};
  std::vector<File> third{{"a", "3", ""}};
  std::vector<File> files = merged_files({first, {}, second, third});
  std::string seen;
  for (const File& f : files) seen += f.path + f.sha1 + " ";
  EXPECT_EQ(seen, "a3 b2 c2 e1 f2 g2 ");
  EXPECT_TRUE(merged_files({}).empty());
}

TEST(ImageAttestations, DependenciesAreTheBaseByDigestTheDownloadsAndTheIndexes) {
  std::vector<InstalledArtifact> installed{
      {"tp-alpha", "1.0", "tp_alpha-1.0-py3-none-any.whl", "https://files.example/tp_alpha-1.0-py3-none-any.whl",
       std::string(64, 'a'), false, false},
      {"trainer-pkg", "0.1", "", "", "", true, true}};  // the project itself: nothing to name
  auto deps = build_dependencies("us-docker.pkg.dev/p/r/base:1", "sha256:" + std::string(64, 'e'), installed,
                                 {"https://pypi.example/simple/"});
  ASSERT_EQ(deps.size(), 3u);
  EXPECT_EQ(deps[0].uri,
            "pkg:oci/base@sha256%3A" + std::string(64, 'e') + "?repository_url=us-docker.pkg.dev/p/r/base");
  EXPECT_EQ(deps[0].sha256, std::string(64, 'e'));
  EXPECT_EQ(deps[1].uri, "https://files.example/tp_alpha-1.0-py3-none-any.whl");
  EXPECT_EQ(deps[1].name, "tp_alpha-1.0-py3-none-any.whl");
  EXPECT_EQ(deps[2].uri, "https://pypi.example/simple/");
  EXPECT_TRUE(deps[2].sha256.empty());
}

TEST(ImageAttestations, SbomFormatsByName) {
  EXPECT_EQ(parse_sbom_format("spdx"), SbomFormat::kSpdx);
  EXPECT_EQ(parse_sbom_format("cyclonedx"), SbomFormat::kCycloneDx);
  EXPECT_EQ(parse_sbom_format("none"), SbomFormat::kNone);
  EXPECT_FALSE(parse_sbom_format("SPDX").has_value());
}

// Each referrer is an OCI 1.1 artifact: the empty config, one blob of the document's type, the image as subject, and
// the image's own creation time, so the same build gives the same referrers.
TEST(ImageAttestations, ReferrersAreArtifactsWhoseSubjectIsTheImage) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "attestations-"));
  auto store = std::make_shared<trainpack::store::BlobStore>(dir.path());
  std::string config = "{}";
  trainpack::image::ArtifactImage image(
      json{{"schemaVersion", 2},
           {"mediaType", trainpack::image::media::kOciManifest},
           {"config", {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                       {"digest", trainpack::image::sha256_of(config).str()}, {"size", 2}}},
           {"layers", json::array()}}.dump(),
      config, store, nullptr, "an image");
  auto referrers = attestation_referrers(store, image, SbomFormat::kSpdx, std::string("{\"spdx\":1}"),
                                         std::string("{\"intoto\":1}"), "2026-12-05T00:00:00Z");
  ASSERT_EQ(referrers.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    json manifest = json::parse(referrers[i]->raw_manifest());
    std::string type = i == 0 ? "application/spdx+json" : "application/vnd.in-toto+json";
    EXPECT_EQ(manifest.at("artifactType"), type);
    EXPECT_EQ(trainpack::image::artifact_type_of(*referrers[i]), type);
    EXPECT_EQ(manifest.at("subject").at("digest"), image.manifest_digest().str());
    EXPECT_EQ(manifest.at("subject").at("size"), image.raw_manifest().size());
    EXPECT_EQ(manifest.at("config").at("mediaType"), "application/vnd.oci.empty.v1+json");
    EXPECT_EQ(manifest.at("config").at("digest"),
              "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    EXPECT_EQ(manifest.at("annotations").at("org.opencontainers.image.created"), "2026-12-05T00:00:00Z");
    const auto& blob = manifest.at("layers").at(0);
    EXPECT_EQ(blob.at("mediaType"), type);
    EXPECT_EQ(trainpack::read_file(referrers[i]->blob_path(trainpack::image::Digest::parse_or_throw(
                  blob.at("digest").get<std::string>(), "test"))),
              i == 0 ? "{\"spdx\":1}" : "{\"intoto\":1}");
  }
  EXPECT_EQ(json::parse(referrers[1]->raw_manifest()).at("annotations").at("in-toto.io/predicate-type"),
            "https://slsa.dev/provenance/v1");
  auto again = attestation_referrers(store, image, SbomFormat::kSpdx, std::string("{\"spdx\":1}"), std::nullopt,
                                     "2026-12-05T00:00:00Z");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0]->manifest_digest(), referrers[0]->manifest_digest());
}

namespace {

const trainpack::image::Descriptor kSubject{std::string(trainpack::image::media::kOciManifest),
                                            trainpack::image::sha256_of("the image"), 9, {}, {}, {}};

std::string statement(const std::string& finished, const std::string& subject_hex = kSubject.digest.hex(),
                      const std::string& predicate_type = "https://slsa.dev/provenance/v1") {
  json metadata = json::object();
  if (!finished.empty()) metadata = {{"startedOn", "2026-01-01T00:00:00Z"}, {"finishedOn", finished}};
  return json{{"_type", "https://in-toto.io/Statement/v1"},
              {"subject", json::array({{{"name", "r/a"}, {"digest", {{"sha256", subject_hex}}}}})},
              {"predicateType", predicate_type},
              {"predicate", {{"runDetails", {{"metadata", metadata}}}}}}.dump();
}

// An attached document as a transport reads it back: the listing's type, the manifest, its blob.
struct Found {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "attached-")};
  std::shared_ptr<trainpack::store::BlobStore> store{std::make_shared<trainpack::store::BlobStore>(dir.path())};

  trainpack::image::AttachedDocument of(const std::string& type, const std::string& content,
                                        const std::function<void(json&)>& edit = {}) {
    auto referrer = trainpack::image::make_referrer(store, kSubject, type, type, content, {}, "a referrer");
    json manifest = json::parse(referrer->raw_manifest());
    if (edit) edit(manifest);
    std::string raw = manifest.dump();
    return {type, trainpack::image::sha256_of(raw), raw, content};
  }
};

std::string attachment_error(const trainpack::image::AttachedDocument& found) {
  try {
    checked_attachment(found, kSubject.digest);
  } catch (const trainpack::Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(found.referrer.str()), std::string::npos) << e.what();
    return e.what();
  }
  return "accepted";
}

}  // namespace

// What trainpack build attaches passes, with the time each document gives.
TEST(ImageAttestations, AnAttachmentIsWhatItsReferrerSays) {
  Found f;
  std::optional<Attachment> a = checked_attachment(
      f.of(std::string(kInTotoType), statement("2026-02-03T04:05:06Z")), kSubject.digest);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->type, kInTotoType);
  EXPECT_EQ(a->time, "2026-02-03T04:05:06Z");
  std::string spdx = json{{"spdxVersion", "SPDX-2.3"}, {"SPDXID", "SPDXRef-DOCUMENT"},
                          {"creationInfo", {{"created", "1970-01-01T00:00:00Z"}}}}.dump();
  a = checked_attachment(f.of(std::string(kSpdxType), spdx), kSubject.digest);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->content, spdx);
  EXPECT_EQ(a->time, "1970-01-01T00:00:00Z");
  std::string bom = json{{"bomFormat", "CycloneDX"}, {"specVersion", "1.6"},
                         {"metadata", {{"timestamp", "2026-01-01T00:00:00Z"}}}}.dump();
  a = checked_attachment(f.of(std::string(kCycloneDxType), bom), kSubject.digest);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->time, "2026-01-01T00:00:00Z");
  // Outside CI a statement gives no time.
  EXPECT_EQ(checked_attachment(f.of(std::string(kInTotoType), statement("")), kSubject.digest)->time, "");
  // Another kind of in-toto attestation is not a provenance statement: passed over, not refused.
  const std::string scan = statement("", kSubject.digest.hex(), "https://cosign.sigstore.dev/attestation/vuln/v1");
  EXPECT_FALSE(checked_attachment(f.of(std::string(kInTotoType), scan), kSubject.digest));
}

// Anything a referrer says that is not so is refused with one line naming the referrer.
TEST(ImageAttestations, AnAttachmentThatIsNotWhatItsReferrerSaysIsRefused) {
  Found f;
  const std::string good = statement("");
  const std::string other = trainpack::image::sha256_of("another image").str();
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), good, [&](json& m) { m["subject"]["digest"] = other; }))
                .find(other),
            std::string::npos);
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), good, [](json& m) { m.erase("subject"); })), "accepted");
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), good, [](json& m) { m["artifactType"] = "text/plain"; }))
                .find("text/plain"),
            std::string::npos);
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), good,
                          [](json& m) { m["layers"][0]["mediaType"] = "application/octet-stream"; }))
                .find("application/octet-stream"),
            std::string::npos);
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), good, [](json& m) { m["layers"].push_back(m["layers"][0]); })),
            "accepted");
  auto not_a_manifest = f.of(std::string(kInTotoType), good);
  not_a_manifest.manifest = "[]";
  EXPECT_NE(attachment_error(not_a_manifest), "accepted");
  // Documents that do not parse as the format claimed.
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), "#!/bin/sh\nrm -rf /\n")), "accepted");
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), "{\"_type\":\"https://in-toto.io/Statement/v0.1\"}")),
            "accepted");
  EXPECT_NE(attachment_error(f.of(std::string(kInTotoType), statement("", std::string(64, 'f')))).find("subject"),
            std::string::npos)
      << "a statement about another image";
  EXPECT_NE(attachment_error(f.of(std::string(kSpdxType), "{\"bomFormat\":\"CycloneDX\",\"specVersion\":\"1.6\"}")),
            "accepted");
  EXPECT_NE(attachment_error(f.of(std::string(kCycloneDxType), "{\"spdxVersion\":\"SPDX-2.3\"}")), "accepted");
  EXPECT_NE(attachment_error(f.of(std::string(kSpdxType), "")), "accepted");
}

// A rebuild in another CI run attaches a second statement beside the first: the newest by its own time is shown,
// the later listed when times are equal or missing; an SPDX SBOM is preferred to a CycloneDX one unless all are asked.
TEST(ImageAttestations, TheNewestAttachmentComesFirst) {
  auto at = [](const std::string& name, const std::string& time, const std::string& type = std::string(kInTotoType)) {
    return Attachment{trainpack::image::sha256_of(name), type, name, time};
  };
  const std::vector<std::string> provenance{std::string(kInTotoType)};
  auto order = [](const std::vector<Attachment>& list) {
    std::vector<std::string> names;
    for (const Attachment& a : list) names.push_back(a.content);
    return names;
  };
  EXPECT_EQ(order(newest_first({at("b", "2026-03-01T00:00:00Z"), at("a", "2026-01-01T10:00:00+02:00"),
                                at("c", "2026-02-01T00:00:00Z")},
                               provenance, false)),
            (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_EQ(order(newest_first({at("a", "2026-01-01T00:00:00Z"), at("b", "2026-01-01T00:00:00Z")}, provenance,
                               false)),
            (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(order(newest_first({at("a", "2026-03-01T00:00:00Z"), at("b", "")}, provenance, false)),
            (std::vector<std::string>{"b", "a"}));
  const std::vector<std::string> sboms{std::string(kSpdxType), std::string(kCycloneDxType)};
  std::vector<Attachment> mixed{at("c1", "", std::string(kCycloneDxType)), at("s1", "", std::string(kSpdxType)),
                                at("c2", "", std::string(kCycloneDxType))};
  EXPECT_EQ(order(newest_first(mixed, sboms, false)), (std::vector<std::string>{"s1"}));
  EXPECT_EQ(order(newest_first(mixed, sboms, true)), (std::vector<std::string>{"c2", "s1", "c1"}));
  EXPECT_EQ(order(newest_first({mixed[0], mixed[2]}, sboms, false)), (std::vector<std::string>{"c2", "c1"}));
  EXPECT_TRUE(newest_first({}, sboms, false).empty());

  std::vector<Attachment> three = newest_first(
      {at("a", "2026-01-01T00:00:00Z"), at("b", "2026-03-01T00:00:00Z"), at("c", "2026-02-01T00:00:00Z")},
      provenance, false);
  std::string note = choice_note(three);
  EXPECT_EQ(note, "3 provenance statements are attached; showing the newest (" + three[0].referrer.str() +
                      ", 2026-03-01T00:00:00Z); --all lists them");
  EXPECT_EQ(choice_note({at("a", "")}), "");
  EXPECT_EQ(choice_note(newest_first({at("a", "", std::string(kSpdxType)), at("b", "", std::string(kSpdxType))},
                                     sboms, false)),
            "2 SBOMs are attached; showing the last listed (" + trainpack::image::sha256_of("b").str() +
                "); --all lists them");
}
