"""trainpack's launcher in its CI step image (scripts/self-image.sh writes @INTERP@).

`python -m trainpack_step ARGS` (the image's ENTRYPOINT) and the `trainpack` command (a console script) run the
packaged binary with ARGS, through the dynamic loader, so the libraries packed beside it are found without
LD_LIBRARY_PATH leaking into the programs trainpack starts, and a lost executable bit does not matter.
"""
import os
import sys

INTERP = "@INTERP@"
DATA = "trainpack_step_data"
# Where distributions keep their CA bundle: the places trainpack looks (net/http_client.cpp, system_ca_file).
SYSTEM_CA_FILES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                   "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem")


def data_dir():
    """trainpack_step_data beside this file (site-packages), else on sys.path (this file is /usr/app's copy)."""
    for d in [os.path.dirname(os.path.abspath(__file__))] + sys.path:
        candidate = os.path.join(d or os.curdir, DATA)
        if os.path.isfile(os.path.join(candidate, "bin", "trainpack")):
            return os.path.abspath(candidate)
    sys.exit("trainpack_step: %s is not installed (no %s/bin/trainpack on sys.path)" % (DATA, DATA))


def ca_file(data):
    """The packaged CA bundle when neither SSL_CERT_FILE nor a system bundle gives one, else None."""
    if os.environ.get("SSL_CERT_FILE"):
        return None
    for path in SYSTEM_CA_FILES:
        try:
            if os.path.getsize(path) > 0 and os.access(path, os.R_OK):
                return None
        except OSError:
            pass
    return os.path.join(data, "cacert.pem")


def main():
    data = data_dir()
    env = dict(os.environ)
    ca = ca_file(data)
    if ca is not None:
        env["SSL_CERT_FILE"] = ca
    argv = [INTERP, "--library-path", os.path.join(data, "lib"), "--argv0", "trainpack",
            os.path.join(data, "bin", "trainpack")] + sys.argv[1:]
    os.execve(INTERP, argv, env)


if __name__ == "__main__":
    main()
