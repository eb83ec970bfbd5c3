#!/usr/bin/env bash
# benchmarks/serve.sh — `r2up serve` over a 20,000-track library (issue 27's numbers).
#
#   benchmarks/serve.sh                  # release build
#   BIN=.build/debug/r2up benchmarks/serve.sh
#   CONCURRENT=20 benchmarks/serve.sh    # fewer concurrent loads (default 200)
#
# Makes 200 folders of 100 small files, records them as uploaded tracks (straight into the
# store with sqlite3, as a push would leave them), starts `r2up serve` on loopback (no S3
# server is needed: nothing is sent), and measures with headless Chromium and plain HTTP:
#   - the start: how long until the server prints its URL (it reads the library first);
#   - the first screen: Chromium's load event of the first page, opened as soon as the server
#     prints its URL; then the server's time
#     to answer `/` and Chromium's load event (5 loads, 1.5 s apart);
#   - state change → on screen: a track's state written by another process (sqlite3, with its
#     `updatedAt` as r2up's writes set it) until its row's icon changes in the open page, median of 20;
#   - idle RSS (VmRSS after the loads, settled), and after the concurrent loads;
#   - 200 concurrent page loads (200 connections at once): how many failed.
set -euo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
WORK=$ROOT/benchmarks/work/serve
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null; }
if [ -z "${BIN:-}" ]; then
  swift build -c release --product r2up >&2
  BIN=$ROOT/.build/release/r2up
fi

if [ ! -f "$WORK/ready" ]; then
  rm -rf "$WORK" && mkdir -p "$WORK/music"
  python3 benchmarks/library.py files "$WORK/music" 200
  # Creates the store (the run itself stops at the missing configuration).
  HOME=$WORK "$BIN" retry --all --db "$WORK/r2up.sqlite" >/dev/null 2>&1 || true
  python3 benchmarks/library.py rows "$WORK/music" bench-bucket | sqlite3 "$WORK/r2up.sqlite"
  touch "$WORK/ready"
fi

# selenium lives in the project's venv (scripts/setup.sh).
PYTHON=python3
[ -x "$ROOT/.venv/bin/python3" ] && PYTHON=$ROOT/.venv/bin/python3
export HOME=$WORK R2UP_DB=$WORK/r2up.sqlite R2UP_ENDPOINT=http://127.0.0.1:9 R2UP_BUCKET=bench-bucket \
  AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench R2UP_PUBLIC_URL=http://127.0.0.1:9/bench-bucket
"$PYTHON" - "$BIN" "$WORK" "${CONCURRENT:-200}" <<'PY'
import http.client, statistics, subprocess, sys, threading, time, urllib.parse
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

binary, work = sys.argv[1:3]
concurrent = int(sys.argv[3])
db = work + "/r2up.sqlite"
started = time.monotonic()
server = subprocess.Popen([binary, "serve", work + "/music", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
url = server.stdout.readline().strip()
print("the URL printed %.2f s after the start (the first read of the library included)" % (time.monotonic() - started))
u = urllib.parse.urlsplit(url)
origin = f"http://{u.netloc}"

def rss():
    """VmRSS and, in parentheses, its anonymous part (the rest is the binary and its libraries, mapped)."""
    fields = {}
    with open(f"/proc/{server.pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon"):
                fields[name] = int(value.split()[0]) / 1024
    return "%.1f MiB (anonymous %.1f MiB)" % (fields["VmRSS"], fields["RssAnon"])

def get(path, cookie):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    start = time.monotonic()
    c.request("GET", path, headers={"Cookie": cookie})
    r = c.getresponse(); r.read(); c.close()
    return r.status, time.monotonic() - start

options = webdriver.ChromeOptions()
for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
    options.add_argument(flag)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    print(f"RSS at start: {rss()}")
    driver.get(url)
    print("first screen after start: Chromium load event %.2f s" % driver.execute_script(
        "var t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd / 1000;"))
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
    server_times, loads, shared = [], [], []
    for _ in range(5):
        time.sleep(1.5)
        server_times.append(get("/", cookie)[1])
        shared.append(get("/", cookie)[1])
        time.sleep(1.5)
        driver.get(origin + "/")
        loads.append(driver.execute_script(
            "var t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd / 1000;"))
    print("first screen: server %.2f s (median of 5, %.2f-%.2f), Chromium load event %.2f s (%.2f-%.2f); "
          "a load right after: %.2f s" % (
        statistics.median(server_times), min(server_times), max(server_times),
        statistics.median(loads), min(loads), max(loads), statistics.median(shared)))
    rows = driver.find_elements(By.CSS_SELECTOR, "li.track")
    path = rows[0].get_attribute("data-path")
    row = f'li.track[data-path="{path}"]'
    lags = []
    for n in range(20):
        state = "error" if n % 2 == 0 else "uploaded"
        want = "uploadError" if state == "error" else "uploaded"
        quoted = path.replace("'", "''")
        subprocess.run(["sqlite3", db, f"UPDATE tracks SET uploadState = '{state}', updatedAt = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE path = '{quoted}';"], check=True)
        written = time.monotonic()
        while driver.find_element(By.CSS_SELECTOR, row).get_attribute("data-icon") != want:
            if time.monotonic() - written > 30:
                break
            time.sleep(0.01)
        lags.append(time.monotonic() - written)
    print("state change → on screen: median %.3f s of 20 (%.3f-%.3f)" % (statistics.median(lags), min(lags), max(lags)))
    time.sleep(5)
    print(f"idle RSS after the loads: {rss()}")
    results = []
    def load():
        try:
            results.append(get("/", cookie))
        except Exception as error:
            results.append((str(error), 0))
    threads = [threading.Thread(target=load) for _ in range(concurrent)]
    start = time.monotonic()
    for t in threads: t.start()
    for t in threads: t.join()
    wall = time.monotonic() - start
    failed = [r for r in results if r[0] != 200]
    times = sorted(r[1] for r in results if r[0] == 200)
    print("%d concurrent page loads: %d failed, all done in %.1f s (median %.2f s, slowest %.2f s)" % (
        concurrent, len(failed), wall, statistics.median(times) if times else 0, times[-1] if times else 0))
    time.sleep(5)
    print(f"RSS after them, settled: {rss()}")
finally:
    driver.quit()
    server.terminate()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
PY
