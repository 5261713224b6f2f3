// Likely credentials in a build context (secrets/credential_scan.h): each kind the CI tools and SDKs write, files
// that merely resemble them, and what is read at all.
#include "secrets/credential_scan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/fs.h"

namespace fs = std::filesystem;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;
using trainpack::secrets::credential_kind;
using trainpack::secrets::find_credentials;
using trainpack::secrets::may_hold_credentials;

namespace {

// Shapes of the real formats; no real secret.
const char* const kServiceAccountKey =
    R"({"type": "service_account", "project_id": "p", "private_key_id": "0a1b",
        "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n",
        "client_email": "trainer@p.iam.gserviceaccount.com", "client_id": "1"})";
const char* const kAuthorizedUser =
    R"({"client_id": "x.apps.googleusercontent.com", "client_secret": "d-FL95Q", "refresh_token": "1//0gLd",
        "type": "authorized_user"})";
const char* const kExternalAccount =
    R"({"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/x",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": "https://sts.googleapis.com/v1/token"})";

std::string kind(const std::string& path, const std::string& bytes) {
  EXPECT_TRUE(may_hold_credentials(path)) << path;
  return credential_kind(path, bytes);
}

}  // namespace

TEST(CredentialScan, GoogleKeysAndTheFilesGithubActionsAuthWrites) {
  EXPECT_EQ(kind(".gcp-creds.json", kServiceAccountKey), "a Google service-account key");
  EXPECT_EQ(kind("keys/sa.json", kServiceAccountKey), "a Google service-account key");
  EXPECT_EQ(kind("application_default_credentials.json", kAuthorizedUser),
            "Google user credentials (a refresh token)");
  EXPECT_EQ(kind("gha-creds-2f6a1c3e9d.json", kExternalAccount), "credentials google-github-actions/auth wrote");
  EXPECT_EQ(kind("wif.json", kExternalAccount), "") << "a federation config names a token file, it holds none";
}

TEST(CredentialScan, PemPrivateKeysButNotCertificatesOrPublicKeys) {
  const std::string rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n";
  const std::string openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----\n";
  EXPECT_EQ(kind("tls/server.key", rsa), "a PEM private key");
  EXPECT_EQ(kind("bundle.pem", "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n" + rsa),
            "a PEM private key");
  EXPECT_EQ(kind(".ssh/id_ed25519", openssh), "a PEM private key");
  EXPECT_EQ(kind("deploy_rsa", openssh), "a PEM private key");
  EXPECT_EQ(kind("ca.pem", "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n"), "");
  EXPECT_FALSE(may_hold_credentials(".ssh/id_ed25519.pub"));
}

TEST(CredentialScan, DockerConfigNetrcAndGitCredentials) {
  EXPECT_EQ(kind(".docker/config.json", R"({"auths": {"us-docker.pkg.dev": {"auth": "b2F1dGg6c2VjcmV0"}}})"),
            "registry credentials (a docker config.json with auths)");
  EXPECT_EQ(kind("config.json", R"({"credHelpers": {"us-docker.pkg.dev": "gcloud"}, "auths": {"x": {}}})"), "")
      << "a credential helper's name is no credential";
  EXPECT_EQ(kind(".netrc", "machine pypi.example.com\n  login ci\n  password s3cr3t\n"), "a .netrc with a password");
  EXPECT_EQ(kind("_netrc", "machine example.com login anonymous\n"), "");
  EXPECT_EQ(kind(".git-credentials", "https://ci:ghp_0123456789@github.com\n"),
            "git credentials (URLs with passwords)");
}

TEST(CredentialScan, EnvironmentFilesWithSecretValues) {
  EXPECT_EQ(kind(".env", "# local\nDEBUG=1\nexport WANDB_API_KEY=\"0123abcd\"\nDB_PASSWORD='pw'\n"),
            "an environment file setting secrets: WANDB_API_KEY, DB_PASSWORD");
  EXPECT_EQ(kind("prod.env", "HF_TOKEN=hf_abc\n"), "an environment file setting secrets: HF_TOKEN");
  EXPECT_EQ(kind(".env.production", "AWS_SECRET_ACCESS_KEY=abc\n"),
            "an environment file setting secrets: AWS_SECRET_ACCESS_KEY");
  EXPECT_EQ(kind(".env", "API_TOKEN=\nSECRET_NAME=${FROM_CI}\nEPOCHS=3\n"), "") << "unset or referring to a variable";
  EXPECT_FALSE(may_hold_credentials(".env.example"));
  EXPECT_FALSE(may_hold_credentials("settings.env.template"));
  EXPECT_FALSE(may_hold_credentials("example.env"));
  EXPECT_EQ(kind("distributed.env", "NCCL_TOKEN=x\n"), "an environment file setting secrets: NCCL_TOKEN");
}

TEST(CredentialScan, AwsCredentialsAndPackageIndexUrlsWithPasswords) {
  EXPECT_EQ(kind(".aws/credentials", "[default]\naws_access_key_id = AKIA\naws_secret_access_key = wJalr\n"),
            "AWS credentials");
  EXPECT_EQ(kind(".aws/config", "[default]\nregion = us-east-1\n"), "");
  EXPECT_EQ(kind("requirements.txt",
                 "--extra-index-url https://oauth2accesstoken:ya29.a0@us-python.pkg.dev/p/r/simple\ntorch==2.1.0\n"),
            "a package index URL with a password");
  EXPECT_EQ(kind("requirements-gpu.txt", "--index-url https://${USER}:${TOKEN}@example.com/simple\n"), "")
      << "pip expands the variables; the file holds none";
  EXPECT_EQ(kind("pip.conf", "[global]\nindex-url = https://u:p@example.com/simple\n"),
            "a package index URL with a password");
  EXPECT_EQ(kind("requirements.txt", "pkg @ https://example.com/pkg-1.0.tar.gz\n"), "");
}

TEST(CredentialScan, OnlyCandidateNamesAreLookedAt) {
  EXPECT_FALSE(may_hold_credentials("trainer/task.py"));
  EXPECT_FALSE(may_hold_credentials("data/train.csv"));
  EXPECT_FALSE(may_hold_credentials("model.bin"));
  EXPECT_EQ(kind("data/labels.json", R"({"cat": 0, "dog": 1})"), "");
  EXPECT_EQ(kind("broken.json", "{not json"), "");
}

// find_credentials reads candidates from disk, no more than kMaxRead bytes of any, and names each by its path in
// the context and in the image.
TEST(CredentialScan, FindsCandidatesOnDiskByContextAndImagePath) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "credential-scan-"));
  fs::path context = dir.path() / "ctx";
  fs::create_directories(context);
  trainpack::write_file_atomic(context / ".gcp-creds.json", kServiceAccountKey);
  trainpack::write_file_atomic(context / "task.py", "print('x')\n");
  std::string big(trainpack::secrets::kMaxRead + 1, ' ');
  trainpack::write_file_atomic(context / "big.json", big.replace(0, std::string(kServiceAccountKey).size(),
                                                                 kServiceAccountKey));
  auto entry = [&](const std::string& name) {
    FileEntry e;
    e.path = "usr/app/" + name;
    e.source = (context / name).string();
    e.size = fs::file_size(context / name);
    return e;
  };
  FileEntries entries{FileEntry::directory("usr", 0755), entry(".gcp-creds.json"), entry("big.json"),
                      entry("task.py"), FileEntry::inline_file("usr/app/.env", "HF_TOKEN=hf_x\n")};
  std::vector<trainpack::secrets::Finding> found = find_credentials(entries, context, "usr/app");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].context_path, ".gcp-creds.json");
  EXPECT_EQ(found[0].image_path, "usr/app/.gcp-creds.json");
  EXPECT_EQ(found[0].kind, "a Google service-account key");
  EXPECT_EQ(found[1].context_path, "usr/app/.env") << "inline bytes have no context path but their image path";
}

// COPY copies a symlink as a link, so the image holds the key under the link's name when the target comes along: a
// link named like a key is judged by the content of the file it leads to in the image (through linked directories
// too), and named by its own path. A link whose target the image lacks, or that leads to no key, is no finding.
TEST(CredentialScan, ALinkNamedLikeAKeyIsJudgedByItsTargetInTheImage) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "credential-scan-"));
  fs::path context = dir.path() / "ctx";
  fs::create_directories(context / "data");
  trainpack::write_file_atomic(context / "data" / "blob.bin", kServiceAccountKey);
  trainpack::write_file_atomic(context / "data" / "labels.bin", R"({"cat": 0})");
  FileEntry target;
  target.path = "usr/app/data/blob.bin";
  target.source = (context / "data" / "blob.bin").string();
  target.size = fs::file_size(target.source);
  FileEntry harmless = target;
  harmless.path = "usr/app/data/labels.bin";
  harmless.source = (context / "data" / "labels.bin").string();
  harmless.size = fs::file_size(harmless.source);
  auto link = [](const std::string& path, const std::string& to) {
    FileEntry e;
    e.path = path;
    e.type = FileEntry::Type::kSymlink;
    e.link_target = to;
    return e;
  };
  FileEntries entries{FileEntry::directory("usr/app", 0755), FileEntry::directory("usr/app/data", 0755), target,
                      harmless, link("usr/app/key.json", "data/blob.bin"),
                      link("usr/app/conf/sa.json", "/usr/app/d/blob.bin"), link("usr/app/d", "data"),
                      link("usr/app/labels.json", "data/labels.bin"),
                      link("usr/app/gone.json", "/home/me/.config/gcloud/key.json"),
                      link("usr/app/loop.json", "loop.json"), link("usr/app/data.bin", "data/blob.bin")};
  std::vector<trainpack::secrets::Finding> found = find_credentials(entries, context, "usr/app");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].context_path, "key.json");
  EXPECT_EQ(found[0].image_path, "usr/app/key.json");
  EXPECT_EQ(found[0].kind, "a Google service-account key");
  EXPECT_EQ(found[1].context_path, "conf/sa.json") << "absolute targets and linked directories are followed";
  EXPECT_EQ(found[1].kind, "a Google service-account key");
}
