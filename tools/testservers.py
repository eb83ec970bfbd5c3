#!/usr/bin/env python3
"""testservers: small loopback servers for r2up's bad-input tests (Python 3 stdlib only).

    python3 tools/testservers.py html
        # an HTTP server that answers every request with 200 and an HTML page (not S3)
    python3 tools/testservers.py tls --cert server.pem --key server.key --upstream 127.0.0.1:18306
        # terminates TLS with the given certificate and relays the plain bytes to upstream

The first stdout line is "PORT <n>". Both bind 127.0.0.1 only, exit after --max-seconds
(default 600) and die with the test that started them (SIGKILL by PID).
"""
import argparse
import select
import socket
import ssl
import sys
import threading
import time

PAGE = b"<!DOCTYPE html><html><head><title>Welcome</title></head><body>It works!</body></html>"


def pump(tls, upstream):
    """Both directions of one TLS connection in one thread: an SSL socket read in one thread
    while another writes it crashed the interpreter (SIGSEGV) under the AWS CLI's load."""
    try:
        while True:
            ready = [tls] if tls.pending() else select.select([tls, upstream], [], [], 600)[0]
            if not ready:
                return
            for src in ready:
                data = src.recv(65536)
                if not data:
                    return
                (upstream if src is tls else tls).sendall(data)
    except (OSError, ssl.SSLError):
        pass
    finally:
        for sock in (tls, upstream):
            try:
                sock.close()
            except OSError:
                pass


def serve_tls(listener, a):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(a.cert, a.key)
    host, _, port = a.upstream.rpartition(":")
    while True:
        client, _ = listener.accept()

        def handle(client=client):
            try:
                tls = context.wrap_socket(client, server_side=True)
            except (ssl.SSLError, OSError):
                client.close()  # the client refused our certificate: that is the point of the test
                return
            try:
                upstream = socket.create_connection((host, int(port)), timeout=30)
            except OSError:
                tls.close()
                return
            pump(tls, upstream)

        threading.Thread(target=handle, daemon=True).start()


def serve_html(listener):
    def handle(conn):
        try:
            conn.settimeout(30)
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buffer) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                buffer = buffer[length:]
                is_head = head.startswith(b"HEAD ")
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                             + f"Content-Length: {len(PAGE)}\r\n\r\n".encode() + (b"" if is_head else PAGE))
        except OSError:
            pass
        finally:
            conn.close()

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["html", "tls"])
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--upstream", help="HOST:PORT on loopback (tls mode)")
    ap.add_argument("--max-seconds", type=float, default=600)
    a = ap.parse_args()
    if a.mode == "tls" and not (a.cert and a.key and a.upstream):
        ap.error("tls needs --cert, --key and --upstream")
    if a.upstream and not a.upstream.startswith(("127.", "localhost:")):
        ap.error("--upstream must be on loopback")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    target = serve_tls if a.mode == "tls" else serve_html
    args = (listener, a) if a.mode == "tls" else (listener,)
    threading.Thread(target=target, args=args, daemon=True).start()
    time.sleep(a.max_seconds)
    sys.exit(0)


if __name__ == "__main__":
    main()
