#!/usr/bin/env python3
"""Independent checks for r2up's audio features (used by the Swift tests).

  audiocheck.py make DIR SPEC.json   encode audio with ffmpeg, write tags with mutagen
  audiocheck.py tags FILE...         tags as mutagen reads them, one JSON object per file
  audiocheck.py head BUCKET KEY...   x-amz-meta-* as boto3's head_object returns them, RFC 2047
                                     words decoded by Python's email.header (JSON)
  audiocheck.py list BUCKET PREFIX   the keys under a prefix (boto3, JSON)
  audiocheck.py browse URL OUT.png   open the catalog page in headless Chromium (Selenium):
                                     list artists/albums, click a track and see currentTime
                                     advance, type in the filter; prints a JSON report

SPEC.json: [{"name": "a.flac", "tags": {"title": ..., "artist": ..., "albumartist": ...,
"album": ..., "date": ..., "tracknumber": ..., "discnumber": ..., "genre": ..., "compilation": "1"},
"picture": "cover.jpg", "seconds": 2}, ...]
Nothing is downloaded: ffmpeg, chromium and chromium-driver come from Debian.
"""
import json
import os
import subprocess
import sys
import time

CODECS = {
    ".mp3": ["-c:a", "libmp3lame", "-b:a", "64k"],
    ".m4a": ["-c:a", "aac", "-b:a", "64k"],
    ".flac": ["-c:a", "flac"],
    ".ogg": ["-c:a", "libvorbis", "-q:a", "1"],
    ".opus": ["-c:a", "libopus", "-b:a", "32k"],
    ".wav": ["-c:a", "pcm_s16le"],
    ".aiff": ["-c:a", "pcm_s16be"],
}


def write_tags(path, tags, picture=None):
    """tags may hold genre and compilation ("1") too; picture is a JPEG file to embed as the front cover."""
    import mutagen
    from mutagen.id3 import ID3, TIT2, TPE1, TPE2, TALB, TDRC, TRCK, TPOS, TCON, TCMP, APIC
    ext = os.path.splitext(path)[1]
    image = open(picture, "rb").read() if picture else None
    if ext in (".mp3", ".wav", ".aiff"):
        f = mutagen.File(path)
        if f.tags is None:
            f.add_tags()
        id3 = f.tags
        frames = {"title": TIT2, "artist": TPE1, "albumartist": TPE2, "album": TALB,
                  "date": TDRC, "tracknumber": TRCK, "discnumber": TPOS, "genre": TCON, "compilation": TCMP}
        for name, value in tags.items():
            id3.add(frames[name](encoding=3, text=[value]))
        if image:
            id3.add(APIC(encoding=3, mime="image/jpeg", type=3, desc="Cover", data=image))
        f.save()
    elif ext == ".m4a":
        from mutagen.mp4 import MP4, MP4Cover
        f = MP4(path)
        names = {"title": "\xa9nam", "artist": "\xa9ART", "albumartist": "aART", "album": "\xa9alb", "date": "\xa9day",
                 "genre": "\xa9gen"}
        for name, value in tags.items():
            if name == "tracknumber":
                f["trkn"] = [(int(value.split("/")[0]), 0)]
            elif name == "discnumber":
                f["disk"] = [(int(value.split("/")[0]), 0)]
            elif name == "compilation":
                f["cpil"] = value == "1"
            else:
                f[names[name]] = [value]
        if image:
            f["covr"] = [MP4Cover(image, imageformat=MP4Cover.FORMAT_JPEG)]
        f.save()
    else:  # flac, ogg vorbis, opus: Vorbis comments
        from mutagen.flac import Picture
        f = mutagen.File(path)
        for name, value in tags.items():
            f[name.upper()] = [value]
        if image:
            cover = Picture()
            cover.type, cover.mime, cover.data = 3, "image/jpeg", image
            if ext == ".flac":
                f.add_picture(cover)
            else:
                import base64
                f["METADATA_BLOCK_PICTURE"] = [base64.b64encode(cover.write()).decode("ascii")]
        f.save()


def make(folder, spec_path):
    with open(spec_path) as handle:
        spec = json.load(handle)
    for item in spec:
        path = os.path.join(folder, item["name"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        ext = os.path.splitext(path)[1]
        seconds = str(item.get("seconds", 2))
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        "sine=frequency=440:sample_rate=44100:duration=" + seconds, "-ac", "2",
                        "-map_metadata", "-1"] + CODECS[ext] + [path], check=True)
        if item.get("tags") or item.get("picture"):
            write_tags(path, item.get("tags") or {}, item.get("picture"))


def tags(paths):
    import mutagen
    result = {}
    for path in paths:
        f = mutagen.File(path, easy=True)
        out = {"duration": round(f.info.length, 3), "sample_rate": getattr(f.info, "sample_rate", None),
               "channels": getattr(f.info, "channels", None)}
        id3 = getattr(f, "tags", None)
        if id3 is not None and hasattr(id3, "getall") and not hasattr(id3, "keys_easy"):
            # WAVE and AIFF carry an ID3 tag that easy mode does not map: read its frames.
            frames = {"TIT2": "title", "TPE1": "artist", "TPE2": "albumartist", "TALB": "album",
                      "TDRC": "date", "TRCK": "tracknumber", "TPOS": "discnumber"}
            for frame, name in frames.items():
                found = id3.getall(frame)
                if found and found[0].text:
                    out[name] = str(found[0].text[0])
        elif f.tags is not None:
            for name in ("title", "artist", "albumartist", "album", "date", "tracknumber", "discnumber"):
                try:
                    values = f.tags.get(name)
                except Exception:
                    values = None
                if values:
                    out[name] = str(values[0])
        result[path] = out
    print(json.dumps(result))


def client():
    import boto3
    return boto3.client("s3", endpoint_url=os.environ["R2UP_ENDPOINT"], region_name="us-east-1",
                      aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"])


def decoded(value):
    from email.header import decode_header
    if not value.startswith("=?"):
        return value
    return "".join(part.decode(charset or "ascii") if isinstance(part, bytes) else part
                   for part, charset in decode_header(value))


def head(bucket, keys):
    s3 = client()
    result = {}
    for key in keys:
        raw = s3.head_object(Bucket=bucket, Key=key)["Metadata"]
        result[key] = {"raw": raw, "decoded": {name: decoded(value) for name, value in raw.items()}}
    print(json.dumps(result))


def listing(bucket, prefix):
    s3 = client()
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [item["Key"] for item in page.get("Contents", [])]
    print(json.dumps(keys))


def browse(url, screenshot):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--autoplay-policy=no-user-gesture-required",
                "--window-size=1100,900", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    report = {}
    try:
        started = time.time()
        driver.get(url)
        deadline = time.time() + 20
        while time.time() < deadline and not driver.find_elements(By.CSS_SELECTOR, ".track"):
            time.sleep(0.05)
        report["render_seconds"] = round(time.time() - started, 3)
        # In the page's own clock (ms since navigation): index.json parsed, then the list built.
        report["page_ms"] = driver.execute_script(
            "return [window.r2upFetchedAt || null, window.r2upRenderedAt || null, performance.timing.responseEnd - performance.timing.navigationStart]")
        report["stats"] = driver.find_element(By.ID, "stats").text
        report["artists"] = [e.get_attribute("data-name") for e in driver.find_elements(By.CSS_SELECTOR, ".artist")]
        report["albums"] = [e.get_attribute("data-name") for e in driver.find_elements(By.CSS_SELECTOR, ".album")]
        tracks = driver.find_elements(By.CSS_SELECTOR, ".track")
        report["tracks"] = len(tracks)
        # Album art: each album's cover as loaded (its natural width; null when the album has none).
        art_script = ("return [...document.querySelectorAll('.album')].map(a => { const i = a.querySelector('img.art');"
                      " return [a.dataset.name, i ? (i.complete ? i.naturalWidth : -1) : null]; })")
        for _ in range(50):
            report["art"] = driver.execute_script(art_script)
            if all(width != -1 for _, width in report["art"]):
                break
            time.sleep(0.1)
        report["discs"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "h4.disc")]
        if tracks:
            tracks[0].click()
            times = []
            for _ in range(40):
                times.append(driver.execute_script("return document.getElementById('player').currentTime"))
                if times[-1] > 0.3:
                    break
                time.sleep(0.1)
            report["played_key"] = tracks[0].get_attribute("data-key")
            report["current_time"] = times[-1]
            report["player_error"] = driver.execute_script("const e = document.getElementById('player').error; return e ? e.code : null")
            report["now"] = driver.find_element(By.ID, "now").text
        if screenshot:
            driver.save_screenshot(screenshot)
        words = os.environ.get("AUDIOCHECK_FILTER", "")
        if words:
            driver.find_element(By.ID, "filter").send_keys(words)
            time.sleep(0.3)
            report["filtered_tracks"] = [e.get_attribute("data-key") for e in driver.find_elements(By.CSS_SELECTOR, ".track") if e.is_displayed()]
            report["filtered_artists"] = [e.get_attribute("data-name") for e in driver.find_elements(By.CSS_SELECTOR, ".artist") if e.is_displayed()]
    finally:
        driver.quit()
    print(json.dumps(report))


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "make":
        make(args[0], args[1])
    elif command == "tags":
        tags(args)
    elif command == "head":
        head(args[0], args[1:])
    elif command == "list":
        listing(args[0], args[1])
    elif command == "browse":
        browse(args[0], args[1] if len(args) > 1 else None)
    else:
        sys.exit("unknown command " + command)
