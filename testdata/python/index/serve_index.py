#!/usr/bin/python3
"""A static PEP 503/691 index for the index client's unit tests.

usage: serve_index.py ROOT
Serves ROOT on 127.0.0.1 at a free port and prints the port on the first line of stdout.
 - a directory is served as its index.html (text/html), or as its index.json
   (application/vnd.pypi.simple.v1+json) when that exists and the Accept header asks for the JSON API;
 - paths under /private/ need Basic credentials equal to the contents of ROOT/auth.txt (else 401);
 - a JSON page carries an ETag (its sha256) and answers 304 to an If-None-Match naming it; files and HTML pages
   get http.server's Last-Modified and 304 for an If-Modified-Since not older than the file;
 - every request is appended to ROOT/requests.log as
   "METHOD PATH auth=<yes|no> host=<Host header> if-none-match=<value|-> if-modified-since=<value|->".
"""
import base64
import hashlib
import os
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(sys.argv[1])
LOG_LOCK = threading.Lock()


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real indexes

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=ROOT, **kwargs)

    def log_message(self, *args):  # quiet
        pass

    def _record(self):
        auth = "yes" if self.headers.get("Authorization") else "no"
        with LOG_LOCK, open(os.path.join(ROOT, "requests.log"), "a") as f:
            f.write(f"{self.command} {self.path} auth={auth} host={self.headers.get('Host')} "
                    f"if-none-match={self.headers.get('If-None-Match', '-')} "
                    f"if-modified-since={self.headers.get('If-Modified-Since', '-')}\n")

    def _authorized(self):
        if not self.path.startswith("/private/"):
            return True
        with open(os.path.join(ROOT, "auth.txt")) as f:
            want = "Basic " + base64.b64encode(f.read().strip().encode()).decode()
        return self.headers.get("Authorization") == want

    def do_GET(self):
        self._record()
        if not self._authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = self.translate_path(self.path)
        accept = self.headers.get("Accept", "")
        json_page = os.path.join(path, "index.json")
        if os.path.isdir(path) and self.path.endswith("/") and "vnd.pypi.simple.v1+json" in accept \
                and os.path.isfile(json_page):
            with open(json_page, "rb") as f:
                body = f.read()
            etag = '"' + hashlib.sha256(body).hexdigest() + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("ETag", etag)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
