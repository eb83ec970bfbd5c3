#!/usr/bin/env python3
"""listing_stub: an S3 look-alike on loopback that lists keys a real server will not store.

SeaweedFS refuses '..' in keys and folds '\\' and leading '/' into plain paths, so a test
of how a client treats hostile keys (zip-slip style: '../x', '/abs', 'a\\b') needs a server
that lists them anyway. Stdlib only; no auth checked.

    python3 tools/listing_stub.py --key 't/../../x' --key 't/good.txt'
    # first stdout line: "PORT <n>"

ListObjectsV2 (GET /BUCKET?list-type=2...) answers every --key whose name starts with the
prefix; GET /BUCKET/KEY answers "body of KEY" for a listed key; everything else is 404.
"""
import argparse
import hashlib
import http.server
import sys
import urllib.parse
from xml.sax.saxutils import escape


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--key", action="append", default=[])
    a = ap.parse_args()
    keys = a.key

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body=b"", content_type="application/xml", head=False, etag=None):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if etag:
                self.send_header("ETag", '"%s"' % etag)
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def route(self, head):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            parts = url.path.lstrip("/").split("/", 1)
            key = urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
            if "list-type" in query and not key:
                prefix = query.get("prefix", [""])[0]
                items = "".join(
                    "<Contents><Key>%s</Key><Size>%d</Size><ETag>&quot;%s&quot;</ETag>"
                    "<LastModified>2026-11-22T10:00:00.000Z</LastModified></Contents>"
                    % (escape(k), len(body_of(k)), hashlib.md5(body_of(k)).hexdigest())
                    for k in keys if k.startswith(prefix))
                xml = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
                       "<IsTruncated>false</IsTruncated>%s</ListBucketResult>" % items)
                return self.reply(200, xml.encode(), head=head)
            if key in keys:
                body = body_of(key)
                return self.reply(200, body, "application/octet-stream", head, hashlib.md5(body).hexdigest())
            self.reply(404, b"<Error><Code>NoSuchKey</Code><Message>no</Message></Error>", head=head)

        def do_GET(self):
            self.route(False)

        def do_HEAD(self):
            self.route(True)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


def body_of(key):
    return ("body of " + key).encode()


if __name__ == "__main__":
    sys.exit(main())
