#!/usr/bin/env python3
"""Drives `r2up serve` in headless Chromium (selenium + Debian's chromium-driver) and over
plain HTTP, and prints what it saw as one JSON object for ServeCommandTests to assert.

usage: serve_browser.py URL UPLOAD_ALL_GROUP PUSH_FILE PUSH_PREFIX R2UP_BINARY CLOUD_ONLY_FILE OFFLOAD_FILE EDITED_FILE
The environment is r2up's (settings for the push from another process)."""
import http.client
import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import WebDriverWait

url, group_id, push_file, push_prefix, binary, cloud_only, offload_file, edited_file = sys.argv[1:9]
parts = urllib.parse.urlsplit(url)
host, port = parts.hostname, parts.port
seen = {}


def request(method, path, headers=None, body=None, host_header=None, raw=False):
    """One request on a fresh connection: (status, body text, or bytes when raw)."""
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    connection.putheader("Host", host_header or f"{host}:{port}")
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    data = body.encode() if isinstance(body, str) else body
    if data is not None:
        connection.putheader("Content-Length", str(len(data)))
    connection.endheaders(data)
    reply = connection.getresponse()
    data = reply.read()
    connection.close()
    return reply.status, data if raw else data.decode("utf-8", "replace")


def big_header(cookie):
    """A 10 MB header, written by a thread while this one reads: the status line of the answer,
    or "closed" when the server closed the connection without one."""
    sock = socket.create_connection((host, port), timeout=5)
    head = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {cookie}\r\nX-Big: ".encode()

    def send():
        try:
            sock.sendall(head + b"a" * (10 << 20) + b"\r\n\r\n")
        except OSError:
            pass
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        reply = sock.recv(64)
    except OSError:
        reply = b""
    sock.close()
    if reply.startswith(b"HTTP/1.1 "):
        return int(reply[9:12])
    return "closed"


def snapshot(driver):
    rows = {r.get_attribute("data-path"): r.get_attribute("data-icon")
            for r in driver.find_elements(By.CSS_SELECTOR, "li.track")}
    groups = {g.get_attribute("data-group"): g.get_attribute("data-summary")
              for g in driver.find_elements(By.CSS_SELECTOR, "section.group")}
    return rows, groups


def icon_of(driver, selector):
    """The row's icon, or None while the page is being replaced (a form's redirect)."""
    try:
        return driver.find_element(By.CSS_SELECTOR, selector).get_attribute("data-icon")
    except Exception:
        return None


def replaced(element):
    """Whether the page no longer holds `element`: stale, or its document mid-replacement (Chromium
    then answers "Node with given id does not belong to the document", not a stale element)."""
    try:
        element.is_enabled()
        return False
    except WebDriverException:
        return True


def notice(driver):
    try:
        return driver.find_element(By.CSS_SELECTOR, "p.notice").text
    except Exception:
        return None


def wait(predicate, limit):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        try:
            if predicate():
                return time.monotonic() - start
        except WebDriverException:
            pass  # the live page replaced the element between finding and reading it: look again
        time.sleep(0.05)
    return None


options = webdriver.ChromeOptions()
for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
    options.add_argument(flag)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    # Refusals before the token is used: no session, and a foreign Host even with the token.
    seen["noSession"] = request("GET", "/")[0]
    seen["wrongHost"] = request("GET", parts.path + "?" + parts.query, host_header="evil.example:%d" % port)[0]
    driver.get(url)
    seen["title"] = driver.title
    seen["rows"], seen["groups"] = snapshot(driver)
    space = driver.find_element(By.CSS_SELECTOR, "section.space")
    seen["space"] = {name: int(space.get_attribute("data-" + name))
                     for name in ("tracks", "on-disk", "in-bucket", "local-only", "cloud-only", "both")}
    seen["tokenAgain"] = request("GET", parts.path + "?" + parts.query)[0]
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
    origin = f"http://{host}:{port}"
    csrf = driver.find_element(By.CSS_SELECTOR, "form.action input[name=csrf]").get_attribute("value")
    withCookie = {"Cookie": cookie, "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}
    form = urllib.parse.urlencode({"action": "upload", "path": push_file})
    seen["postWithoutCSRF"] = request("POST", "/action", withCookie, form)[0]
    seen["postOtherOrigin"] = request(
        "POST", "/action", dict(withCookie, Origin="http://evil.example"), form + "&csrf=" + csrf)[0]
    seen["mediaTraversal"] = request("GET", "/media?path=../../etc/passwd", {"Cookie": cookie})[0]
    seen["mediaOutside"] = request("GET", "/media?path=/etc/passwd", {"Cookie": cookie})[0]
    seen["mediaDotDot"] = request("GET", "/media?path=" + urllib.parse.quote(push_file + "/../../../../etc/passwd"), {"Cookie": cookie})[0]
    seen["nonUTF8"] = request("GET", "/media?path=%ff%fe", {"Cookie": cookie})[0]
    seen["bigBody"] = request("POST", "/action", withCookie, "x" * (1 << 20))[0]
    seen["bigHeader"] = big_header(cookie)
    seen["stillServing"] = request("GET", "/", {"Cookie": cookie})[0]
    # Play: the bytes the page's player gets for a track are the file's.
    play = driver.find_element(By.CSS_SELECTOR, f'li.track[data-path="{push_file}"] button.play').get_attribute("data-src")
    status, data = request("GET", play, {"Cookie": cookie}, raw=True)
    seen["playStatus"], seen["playSHA256"] = status, hashlib.sha256(data).hexdigest()
    with open(push_file, "rb") as track:
        seen["fileSHA256"] = hashlib.sha256(track.read()).hexdigest()
    seen["secretInPage"] = None  # filled by the test, which knows the secret

    # The page must not reload: a mark set now survives only on the same document.
    driver.execute_script("window.__r2upMark = 1")
    section = driver.find_element(By.CSS_SELECTOR, f'section.group[data-group="{group_id}"]')
    section.find_element(By.XPATH, ".//button[normalize-space()='Upload All to Cloud']").click()

    def group_uploaded():
        rows = driver.find_elements(By.CSS_SELECTOR, f'section.group[data-group="{group_id}"] li.track')
        return rows and all(r.get_attribute("data-icon") == "uploaded" for r in rows)
    seen["uploadAllSeconds"] = wait(group_uploaded, 60)
    driver.execute_script("window.__r2upMark = 2")

    row = f'li.track[data-path="{push_file}"]'
    states = []
    env_push = subprocess.Popen([binary, "push", push_file, "--prefix", push_prefix],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pushed_at = time.monotonic()

    exited = []

    def row_uploaded():
        if not exited and env_push.poll() is not None:
            exited.append(time.monotonic())
        icon = driver.find_element(By.CSS_SELECTOR, row).get_attribute("data-icon")
        if not states or states[-1] != icon:
            states.append(icon)
        return icon == "uploaded"
    waited = wait(row_uploaded, 60)
    seen["pushExit"] = env_push.wait(60)
    seen["pushIcons"] = states
    seen["pushSeconds"] = waited
    # From the push's exit to the icon on screen (negative: shown before the process ended).
    # Shown before the exit was seen (the page can be quicker than this poll): no lag at all.
    seen["exitToScreen"] = None if waited is None else ((pushed_at + waited) - exited[0] if exited else 0.0)
    seen["noReload"] = driver.execute_script("return window.__r2upMark") == 2
    seen["copyURL"] = driver.find_element(By.CSS_SELECTOR, row + " button.copy").get_attribute("data-url")
    seen["buttons"] = sorted({b.text for b in driver.find_elements(By.CSS_SELECTOR, "button")})
    # Download of a cloud-only track: fetched back to its path, shown ↓ without a reload.
    cloud_row = f'li.track[data-path="{cloud_only}"]'
    driver.find_element(By.CSS_SELECTOR, cloud_row).find_element(By.XPATH, ".//button[normalize-space()='Download']").click()
    seen["downloadSeconds"] = wait(
        lambda: driver.find_element(By.CSS_SELECTOR, cloud_row).get_attribute("data-icon") == "downloaded", 30)
    seen["after"], seen["groupsAfter"] = snapshot(driver)
    # Offload (issue 30): a track, then a group; a file edited since its upload is kept.
    off_row = f'li.track[data-path="{offload_file}"]'
    old_row = driver.find_element(By.CSS_SELECTOR, off_row)
    old_row.find_element(By.XPATH, ".//button[normalize-space()='Offload']").click()
    # The live feed may turn the icon before the POST's answer (a new page with its notice) comes.
    WebDriverWait(driver, 30).until(lambda d: replaced(old_row))
    seen["offloadSeconds"] = wait(lambda: icon_of(driver, off_row) == "cloudOnly", 30)
    wait(lambda: (notice(driver) or "").startswith("Offloaded"), 30)
    seen["offloadNotice"] = notice(driver)
    seen["offloadButtonsAfter"] = [b.text for b in driver.find_elements(By.CSS_SELECTOR, off_row + " button") if b.is_displayed()]
    section = driver.find_element(By.CSS_SELECTOR, f'section.group[data-group="{group_id}"]')
    section.find_element(By.XPATH, "./header//button[normalize-space()='Offload']").click()
    # The track's notice is still on the page until the POST's answer replaces it: wait for the new page.
    WebDriverWait(driver, 30).until(lambda d: replaced(section))
    wait(lambda: (notice(driver) or "").startswith("Offloaded") and notice(driver) != seen["offloadNotice"], 30)
    seen["groupOffloadNotice"] = notice(driver)
    with open(edited_file, "ab") as edited:
        edited.write(b"edited")
    form = urllib.parse.urlencode({"action": "offload", "path": edited_file, "csrf": csrf})
    seen["editedOffloadStatus"] = request("POST", "/action", withCookie, form)[0]
    page = request("GET", "/", {"Cookie": cookie})[1]
    start = page.find('<p class="notice"')
    seen["editedOffloadNotice"] = page[page.find(">", start) + 1:page.find("</p>", start)] if start >= 0 else None
    driver.refresh()
    seen["afterOffload"], _ = snapshot(driver)
    # Browse (seed 001): the pushed track under its folder of the bucket, playable from its public URL.
    driver.get(f"{origin}/browse?prefix=" + urllib.parse.quote(push_prefix))
    seen["browseSources"] = [b.get_attribute("data-src") for b in driver.find_elements(By.CSS_SELECTOR, "button.play")]
    seen["pageSource"] = driver.page_source
finally:
    driver.quit()
print(json.dumps(seen))
