#!/usr/bin/env python3
"""Probe what an S3-compatible server really checks (python3 stdlib only).

Usage (after `scripts/seaweedfs.sh start`):
    . .seaweedfs/env && python3 tools/s3facts.py
    python3 tools/s3facts.py --endpoint http://127.0.0.1:18306 --bucket r2up-test \
        --access-key KEY --secret-key SECRET [--region us-east-1] [--json]

Each check sends hand-signed SigV4 requests (path-style unless stated) and
prints one line: PASS/FAIL, the name, and what the server answered. It
creates objects under the prefix `s3facts/` and deletes them afterwards.
Exit status: 0 if every expectation held, 1 otherwise. The expectations are
SeaweedFS 4.48's behaviour (see scripts/seaweedfs.sh); against another
server read the lines, not the status.

The last line, "profile: ...", is what r2up's ServerProfile table records per server
(Sources/R2UpTransfer/Providers/ServerProfile.swift, docs/explanation/server-quirks.md): which request checksums
the server verifies (a damaged body refused) and whether conditional writes hold. It also says
whether a trailing checksum (aws-chunked) is verified and whether the object then keeps
`Content-Encoding: aws-chunked`; r2up sends none (docs/explanation/server-quirks.md).
Against moto (`moto_server -H 127.0.0.1 -p PORT`, any keys; create the bucket first):
    python3 tools/s3facts.py --endpoint http://127.0.0.1:PORT --access-key k --secret-key s
"""
import argparse
import base64
import binascii
import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import sys
import urllib.parse
import zlib


def sha256_hex(b):
    return hashlib.sha256(b).hexdigest()


def sign(method, host, path, query, headers, payload_hash, access, secret, region,
         service="s3", now=None):
    """Return headers (dict) with SigV4 Authorization added."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = now.strftime("%Y%m%d")
    h = {k.lower(): str(v).strip() for k, v in headers.items()}
    h["host"] = host
    h["x-amz-date"] = amz_date
    h["x-amz-content-sha256"] = payload_hash
    signed = sorted(h)
    canon_headers = "".join(f"{k}:{h[k]}\n" for k in signed)
    q = urllib.parse.parse_qsl(query, keep_blank_values=True)
    canon_query = "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
        for k, v in sorted(q))
    canon_path = urllib.parse.quote(path, safe="/-_.~")
    creq = "\n".join([method, canon_path, canon_query, canon_headers,
                      ";".join(signed), payload_hash])
    scope = f"{date}/{region}/{service}/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, sha256_hex(creq.encode())])
    k = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    h["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access}/{scope}, "
                          f"SignedHeaders={';'.join(signed)}, Signature={sig}")
    return h


class Client:
    def __init__(self, endpoint, access, secret, region):
        u = urllib.parse.urlsplit(endpoint)
        self.hostport = u.netloc
        self.host, _, port = u.netloc.partition(":")
        self.port = int(port or 80)
        self.access, self.secret, self.region = access, secret, region

    def req(self, method, path, query="", body=b"", headers=None, payload="unsigned",
            host_header=None, secret=None, access=None):
        headers = dict(headers or {})
        if payload == "unsigned":
            ph = "UNSIGNED-PAYLOAD"
        elif payload == "signed":
            ph = sha256_hex(body)
        else:
            ph = payload
        host = host_header or self.hostport
        h = sign(method, host, path, query, headers, ph, access or self.access,
                 secret or self.secret, self.region)
        if body or method in ("PUT", "POST"):
            h["content-length"] = str(len(body))
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        url = urllib.parse.quote(path, safe="/-_.~") + ("?" + query if query else "")
        conn.putrequest(method, url, skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            conn.putheader(k, v)
        conn.endheaders()
        if body:
            conn.send(body)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def xml_code(data):
    m = re.search(rb"<Code>([^<]*)</Code>", data)
    return m.group(1).decode() if m else ""


def b64md5(b):
    return base64.b64encode(hashlib.md5(b).digest()).decode()


def b64crc32(b):
    return base64.b64encode((zlib.crc32(b) & 0xFFFFFFFF).to_bytes(4, "big")).decode()


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def b64crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = CRC32C_TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return base64.b64encode((c ^ 0xFFFFFFFF).to_bytes(4, "big")).decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", default=os.environ.get("R2UP_ENDPOINT"))
    ap.add_argument("--bucket", default=os.environ.get("R2UP_BUCKET", "r2up-test"))
    ap.add_argument("--access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"))
    ap.add_argument("--secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"))
    ap.add_argument("--region", default=os.environ.get("AWS_REGION", "us-east-1"))
    ap.add_argument("--json", action="store_true", help="one JSON object per check")
    a = ap.parse_args()
    if not (a.endpoint and a.access_key and a.secret_key):
        ap.error("need --endpoint/--access-key/--secret-key (or source the env file)")
    c = Client(a.endpoint, a.access_key, a.secret_key, a.region)
    B = a.bucket
    results = []

    def check(name, ok, detail):
        results.append(ok)
        if a.json:
            print(json.dumps({"check": name, "ok": bool(ok), "detail": detail}))
        else:
            print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")

    body = os.urandom(4096)
    bad = bytearray(body)
    bad[100] ^= 0x01
    bad = bytes(bad)
    key = f"/{B}/s3facts/obj.bin"

    # 1. UNSIGNED-PAYLOAD + correct Content-MD5 on PUT.
    s, h, d = c.req("PUT", key, body=body, headers={"Content-MD5": b64md5(body)})
    etag = h.get("etag", "").strip('"')
    check("put unsigned-payload + content-md5 accepted", s == 200, f"{s} {xml_code(d)}")
    check("single PUT etag is hex md5", etag == hashlib.md5(body).hexdigest(),
          f"etag={etag}")
    # 2. wrong Content-MD5 (body damaged relative to the digest).
    s, h, d = c.req("PUT", f"/{B}/s3facts/bad.bin", body=bad,
                    headers={"Content-MD5": b64md5(body)})
    check("put wrong content-md5 -> 400 BadDigest", s == 400 and xml_code(d) == "BadDigest",
          f"{s} {xml_code(d)}")
    md5_refused = s == 400
    s, _, _ = c.req("HEAD", f"/{B}/s3facts/bad.bin")
    check("  ...and nothing stored", s == 404, f"HEAD {s}")
    # 3. x-amz-checksum-crc32
    s, h, d = c.req("PUT", f"/{B}/s3facts/crc.bin", body=body,
                    headers={"x-amz-checksum-crc32": b64crc32(body)})
    check("put x-amz-checksum-crc32 (correct) accepted", s == 200,
          f"{s} {xml_code(d)} echoed={h.get('x-amz-checksum-crc32')}")
    s, h, d = c.req("PUT", f"/{B}/s3facts/crcbad.bin", body=bad,
                    headers={"x-amz-checksum-crc32": b64crc32(body)})
    check("put x-amz-checksum-crc32 (wrong) rejected 400", s == 400,
          f"{s} {xml_code(d)}")
    crc32_refused = s == 400
    # 3b. x-amz-checksum-crc32c, right and wrong; conditional writes.
    facts = {}
    s, h, d = c.req("PUT", f"/{B}/s3facts/crcc.bin", body=body,
                    headers={"x-amz-checksum-crc32c": b64crc32c(body)})
    check("put x-amz-checksum-crc32c (correct) accepted", s == 200,
          f"{s} {xml_code(d)} echoed={h.get('x-amz-checksum-crc32c')}")
    s, h, d = c.req("PUT", f"/{B}/s3facts/crccbad.bin", body=bad,
                    headers={"x-amz-checksum-crc32c": b64crc32c(body)})
    check("put x-amz-checksum-crc32c (wrong) rejected 400", s == 400, f"{s} {xml_code(d)}")
    facts["crc32c"] = s == 400
    s, h, d = c.req("PUT", key, body=body, headers={"If-None-Match": "*"})
    check("put If-None-Match: * on an existing key -> 412", s == 412, f"{s} {xml_code(d)}")
    facts["if-none-match"] = s == 412
    s, h, d = c.req("PUT", key, body=body, headers={"If-Match": '"0123456789abcdef0123456789abcdef"'})
    check("put If-Match: other ETag -> 412", s == 412, f"{s} {xml_code(d)}")
    facts["if-match"] = s == 412
    # 3c. a trailing checksum (STREAMING-UNSIGNED-PAYLOAD-TRAILER, aws-chunked): computed while the
    # body is sent, so a client reads the file once. Is a wrong trailer refused, and is the object
    # the payload (not the framing), without the aws-chunked encoding left on it?
    def framed(payload, trailer):
        out = b"".join(b"%x\r\n" % len(payload[i:i + 8192]) + payload[i:i + 8192] + b"\r\n"
                       for i in range(0, len(payload), 8192))
        return out + b"0\r\nx-amz-checksum-crc32c:" + trailer.encode() + b"\r\n\r\n"
    chunked = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(body)),
               "x-amz-trailer": "x-amz-checksum-crc32c"}
    for name, sent in (("right", body), ("wrong", bad)):
        s, h, d = c.req("PUT", f"/{B}/s3facts/trailer-{name}.bin", body=framed(sent, b64crc32c(body)),
                        headers=chunked, payload="STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        g, gh, gd = c.req("GET", f"/{B}/s3facts/trailer-{name}.bin")
        stored = "nothing" if g == 404 else "the payload" if gd == body else "the damaged payload" if gd == bad \
            else f"{len(gd)} other bytes"
        detail = f"{s} {xml_code(d)}; stored: {stored}; Content-Encoding on GET: {gh.get('content-encoding')}"
        if name == "right":
            check("put with a right trailing crc32c accepted, the payload stored", s == 200 and gd == body, detail)
            trailer_kept_encoding = "aws-chunked" in gh.get("content-encoding", "")
        else:
            check("put with a wrong trailing crc32c -> 400, nothing stored", s == 400 and g == 404, detail)
            facts["trailer"] = s == 400 and g == 404
    facts["trailer-keeps-aws-chunked"] = trailer_kept_encoding
    # 4. signed payload hash, wrong body: does the server check it?
    s, h, d = c.req("PUT", f"/{B}/s3facts/sha.bin", body=bad, payload=sha256_hex(body))
    check("put signed x-amz-content-sha256 mismatch NOT checked (200)", s == 200,
          f"{s} {xml_code(d)}")
    # 5. multipart: UploadPart with Content-MD5, right and wrong.
    mkey = f"/{B}/s3facts/multi.bin"
    s, h, d = c.req("POST", mkey, query="uploads=")
    m = re.search(rb"<UploadId>([^<]*)</UploadId>", d)
    uid = m.group(1).decode() if m else ""
    check("create multipart upload", s == 200 and uid, f"{s} uploadId={uid[:16]}...")
    part = os.urandom(5 * 1024 * 1024)
    s, h, d = c.req("PUT", mkey, query=f"partNumber=1&uploadId={uid}", body=part,
                    headers={"Content-MD5": b64md5(part)})
    p1 = h.get("etag", "").strip('"')
    check("upload part unsigned-payload + content-md5 accepted", s == 200,
          f"{s} {xml_code(d)} etag={p1}")
    check("part etag is hex md5", p1 == hashlib.md5(part).hexdigest(), f"etag={p1}")
    badpart = bytearray(part)
    badpart[7] ^= 0x80
    s, h, d = c.req("PUT", mkey, query=f"partNumber=2&uploadId={uid}",
                    body=bytes(badpart), headers={"Content-MD5": b64md5(part)})
    check("upload part wrong content-md5 -> 400 BadDigest",
          s == 400 and xml_code(d) == "BadDigest", f"{s} {xml_code(d)}")
    s, h, d = c.req("PUT", mkey, query=f"partNumber=2&uploadId={uid}", body=b"tail",
                    headers={"x-amz-checksum-crc32": b64crc32(b"tail")})
    p2 = h.get("etag", "").strip('"')
    check("upload part x-amz-checksum-crc32 accepted", s == 200, f"{s} {xml_code(d)}")
    cx = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"{p1}\"</ETag>"
          f"</Part><Part><PartNumber>2</PartNumber><ETag>\"{p2}\"</ETag></Part>"
          f"</CompleteMultipartUpload>").encode()
    s, h, d = c.req("POST", mkey, query=f"uploadId={uid}", body=cx, payload="signed")
    m = re.search(rb"<ETag>([^<]*)</ETag>", d)
    metag = m.group(1).decode().replace("&#34;", "").replace("&quot;", "").strip('"') if m else ""
    want = hashlib.md5(binascii.unhexlify(p1) + binascii.unhexlify(p2)).hexdigest() + "-2"
    check("complete multipart; etag md5-of-md5s-N", s == 200 and metag == want,
          f"{s} etag={metag} want={want}")
    s, h, _ = c.req("HEAD", mkey)
    check("HEAD multipart object size", s == 200 and h.get("content-length") == str(len(part) + 4),
          f"{s} len={h.get('content-length')} etag={h.get('etag')}")
    # 5b. a multipart upload created for CRC-32C: does a part sent without a checksum header get
    # the server's CRC-32C in its reply (a client could then checksum while sending and compare,
    # reading the file once), and is a wrong part checksum in CompleteMultipartUpload refused?
    ckey = f"/{B}/s3facts/multi-crc32c.bin"
    s, h, d = c.req("POST", ckey, query="uploads=", headers={"x-amz-checksum-algorithm": "CRC32C"})
    m = re.search(rb"<UploadId>([^<]*)</UploadId>", d)
    cuid = m.group(1).decode() if m else ""
    s, h, d = c.req("PUT", ckey, query=f"partNumber=1&uploadId={cuid}", body=part)
    echoed = h.get("x-amz-checksum-crc32c")
    check("a part sent without a checksum (upload created for CRC32C) gets its CRC-32C in the reply",
          s == 200 and echoed == b64crc32c(part), f"{s} {xml_code(d)} echoed={echoed}")
    facts["part-crc32c-echo"] = echoed == b64crc32c(part)
    cpe = h.get("etag", "").strip('"')
    wrong = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"{cpe}\"</ETag>"
             f"<ChecksumCRC32C>{b64crc32c(b'other')}</ChecksumCRC32C></Part></CompleteMultipartUpload>").encode()
    s, h, d = c.req("POST", ckey, query=f"uploadId={cuid}", body=wrong, payload="signed")
    check("complete with a wrong part CRC-32C refused (400)", s == 400, f"{s} {xml_code(d)}")
    facts["complete-part-crc32c"] = s == 400
    if s == 400:
        c.req("DELETE", ckey, query=f"uploadId={cuid}")
    c.req("DELETE", ckey)
    # 6. virtual-hosted style.
    vh = f"{B}.{c.hostport}"
    s, h, d = c.req("GET", "/s3facts/obj.bin", host_header=vh)
    check("virtual-hosted-style GET (Host: bucket.127.0.0.1:port)",
          s == 200 and hashlib.md5(d).hexdigest() == hashlib.md5(body).hexdigest(),
          f"{s} {xml_code(d)} len={len(d)}")
    s, h, d = c.req("PUT", "/s3facts/vh.bin", body=body, host_header=vh,
                    headers={"Content-MD5": b64md5(body)})
    check("virtual-hosted-style signed PUT", s == 200, f"{s} {xml_code(d)}")
    c.req("DELETE", "/s3facts/vh.bin", host_header=vh)
    # 7. wrong secret.
    s, h, d = c.req("GET", key, secret=a.secret_key + "x")
    check("wrong secret -> 403 SignatureDoesNotMatch (XML)",
          s == 403 and xml_code(d) == "SignatureDoesNotMatch"
          and "xml" in h.get("content-type", ""),
          f"{s} {xml_code(d)} content-type={h.get('content-type')}")
    s, h, d = c.req("GET", key, access="NOSUCHKEY")
    check("unknown access key -> 403 InvalidAccessKeyId", s == 403,
          f"{s} {xml_code(d)}")
    # 8. unknown bucket.
    s, h, d = c.req("GET", "/r2up-no-such-bucket-7f3a/x")
    check("unknown bucket -> 404 NoSuchBucket", s == 404 and xml_code(d) == "NoSuchBucket",
          f"{s} {xml_code(d)}")
    s, h, d = c.req("GET", f"/{B}/s3facts/no-such-key")
    check("unknown key -> 404 NoSuchKey", s == 404 and xml_code(d) == "NoSuchKey",
          f"{s} {xml_code(d)}")
    # 9. anonymous read (public URL), anonymous write refused.
    conn = http.client.HTTPConnection(c.host, c.port, timeout=30)
    conn.request("GET", key)
    r = conn.getresponse()
    d = r.read()
    check("anonymous GET of object (public URL)", r.status == 200 and d == body,
          f"{r.status} len={len(d)}")
    conn.request("PUT", f"/{B}/s3facts/anon.bin", body=b"x")
    r = conn.getresponse()
    d = r.read()
    check("anonymous PUT refused 403", r.status == 403, f"{r.status} {xml_code(d)}")
    conn.close()

    # 10. deleting a non-empty bucket (S3: 409 BucketNotEmpty).
    tb = f"s3facts-tmp-{os.getpid()}"
    c.req("PUT", f"/{tb}", payload="signed")
    c.req("PUT", f"/{tb}/x", body=b"x", headers={"Content-MD5": b64md5(b"x")})
    s, h, d = c.req("DELETE", f"/{tb}", payload="signed")
    check("DELETE of a non-empty bucket is allowed (204; S3 says 409 BucketNotEmpty)",
          s == 204, f"{s} {xml_code(d)}")
    if s != 204:
        c.req("DELETE", f"/{tb}/x")
        c.req("DELETE", f"/{tb}", payload="signed")

    # Clean up.
    for k in ("obj.bin", "crc.bin", "sha.bin", "multi.bin", "bad.bin", "crcbad.bin", "crcc.bin", "crccbad.bin",
              "trailer-right.bin", "trailer-wrong.bin"):
        c.req("DELETE", f"/{B}/s3facts/{k}")
    ok = all(results)
    s, h, _ = c.req("HEAD", f"/{B}")
    profile = {"server": h.get("server", ""), "content-md5": md5_refused, "crc32": crc32_refused, **facts}
    if a.json:
        print(json.dumps({"profile": profile}))
    else:
        print("profile: " + " ".join(f"{k}={'yes' if v is True else 'no' if v is False else repr(v)}"
                                     for k, v in profile.items()))
    if not a.json:
        print(f"{sum(1 for r in results if r)} passed, {sum(1 for r in results if not r)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
