/// `index.html`: one self-contained page (no external asset) that reads `index.json` beside it
/// and browses artists → albums (art, discs as sections) → tracks, plays a track and goes on through its album (seed 001's
/// queue), filters as you type, and shows durations and sizes. Relative URLs only, so it works
/// from an r2.dev bucket URL or a custom domain alike.
enum CatalogPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="r2up">
<title>Catalog</title>
<style>
:root { color-scheme: light dark; --accent: #d2691e; --muted: #888; }
body { font: 15px/1.4 system-ui, sans-serif; margin: 0; padding: 0 1rem 7rem; max-width: 60rem; }
header { position: sticky; top: 0; background: Canvas; padding: .75rem 0; border-bottom: 1px solid #8884; z-index: 1; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
#filter { width: 100%; box-sizing: border-box; font: inherit; padding: .4rem .6rem; }
#stats { color: var(--muted); font-size: .85rem; margin-top: .3rem; }
.artist > h2 { font-size: 1.15rem; margin: 1.2rem 0 .3rem; }
.album > h3 { font-size: 1rem; margin: .6rem 0 .2rem; font-weight: 600; }
.album > h3 .meta { color: var(--muted); font-weight: normal; }
ol { list-style: none; margin: 0; padding: 0; }
.track { display: grid; grid-template-columns: 2.5rem 1fr auto auto; gap: .75rem; padding: .25rem .4rem; cursor: pointer; border-radius: .3rem; }
.track:hover { background: #8882; }
.track.playing { background: #d2691e33; }
.track .n, .track .d, .track .s { color: var(--muted); font-variant-numeric: tabular-nums; }
.track .s { min-width: 4.5rem; text-align: right; }
footer { position: fixed; bottom: 0; left: 0; right: 0; background: Canvas; border-top: 1px solid #8884; padding: .5rem 1rem; }
#now { font-size: .9rem; margin-bottom: .3rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
audio { width: 100%; }
.hidden { display: none; }
.album { content-visibility: auto; contain-intrinsic-size: auto 12rem; }
.album::after { content: ""; display: block; clear: both; }
.album > .art { float: left; margin: .6rem .8rem .4rem 0; border-radius: .3rem; object-fit: cover; }
.album > h4.disc { font-size: .85rem; color: var(--muted); margin: .5rem 0 .1rem .4rem; font-weight: 600; }
</style>
</head>
<body>
<header>
<h1 id="title">Catalog</h1>
<input id="filter" type="search" placeholder="Filter by artist, album or title" autocomplete="off">
<div id="stats">Loading index.json…</div>
</header>
<main id="library"></main>
<footer><div id="now">Nothing playing</div><audio id="player" controls preload="none"></audio></footer>
<script>
"use strict";
const library = document.getElementById("library");
const player = document.getElementById("player");
const filter = document.getElementById("filter");
const stats = document.getElementById("stats");
const now = document.getElementById("now");
let queue = [], position = -1, rows = [];

function size(bytes) {
  if (bytes < 1024) return bytes + " bytes";
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes, unit = -1;
  do { value /= 1024; unit++; } while (value >= 1024 && unit < units.length - 1);
  return (Math.round(value * 10) / 10).toString() + " " + units[unit];
}
function duration(seconds) {
  if (seconds == null) return "";
  const s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(r).padStart(2, "0");
}
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}
function play(album, index) {
  queue = album; position = index;
  const track = queue[position];
  player.src = track.url;
  player.play().catch(() => {});
  for (const row of document.querySelectorAll(".track.playing")) row.classList.remove("playing");
  track.row.classList.add("playing");
  now.textContent = "▶ " + track.title + " — " + (track.artist || track.albumArtist || "Unknown Artist") + (track.album ? " · " + track.album : "");
}
library.addEventListener("click", event => {
  const row = event.target.closest(".track");
  if (row && row.r2up) play(row.r2up[0], row.r2up[1]);
});
player.addEventListener("ended", () => { if (position + 1 < queue.length) play(queue, position + 1); });

function render(index) {
  document.getElementById("title").textContent = "Catalog · " + index.bucket + (index.prefix ? "/" + index.prefix : "");
  // Albums as r2up groups them (compilations under Various Artists, discs as sections), in order.
  const byKey = new Map(index.tracks.map(t => [t.key, t]));
  const artists = new Map();
  for (const album of index.albums || []) {
    if (!artists.has(album.artist)) artists.set(album.artist, []);
    artists.get(album.artist).push(album);
  }
  const fragment = document.createDocumentFragment();
  for (const [artist, albums] of artists) {
    const section = el("section", "artist");
    section.dataset.name = artist;
    section.append(el("h2", null, artist));
    for (const album of albums) {
      const tracks = album.tracks.map(key => byKey.get(key)).filter(Boolean);
      const box = el("div", "album");
      box.dataset.name = album.album;
      if (album.art) {
        const img = el("img", "art");
        img.src = album.art.thumbnailURL || album.art.url;
        img.alt = "Cover of " + album.album;
        img.loading = "lazy";
        img.width = 96; img.height = 96;
        box.dataset.art = album.art.url;
        box.append(img);
      }
      const heading = el("h3", null, album.album + " ");
      heading.append(el("span", "meta", (album.year ? "(" + album.year + ") " : "") + (album.genre ? "· " + album.genre + " " : "") + "· " + tracks.length + (tracks.length == 1 ? " track" : " tracks") + (album.duration ? " · " + duration(album.duration) : "")));
      box.append(heading);
      const discs = album.discs.length ? album.discs : [{ title: null, tracks: album.tracks }];
      for (const disc of discs) {
        if (disc.title) box.append(el("h4", "disc", disc.title));
        const list = el("ol");
        for (const key of disc.tracks) {
          const t = byKey.get(key);
          if (!t) continue;
          const row = el("li", "track");
          row.dataset.key = t.key;
          const title = album.compilation && t.artist ? t.title + " — " + t.artist : t.title;
          row.append(el("span", "n", t.track ? String(t.track) : ""), el("span", "t", title), el("span", "d", duration(t.duration)), el("span", "s", size(t.size)));
          row.r2up = [tracks, tracks.indexOf(t)];
          t.row = row;
          t.search = [t.title, t.artist, t.albumArtist, t.album, t.genre, artist, album.album, t.key].join("\n").toLowerCase();
          rows.push(t);
          list.append(row);
        }
        box.append(list);
      }
      section.append(box);
    }
    fragment.append(section);
  }
  library.replaceChildren(fragment);
  window.r2upRenderedAt = performance.now();
  stats.textContent = index.tracks.length + " tracks · " + artists.size + " artists · " + size(index.tracks.reduce((s, t) => s + t.size, 0));
}
filter.addEventListener("input", () => {
  const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
  for (const t of rows) t.row.classList.toggle("hidden", !words.every(w => t.search.includes(w)));
  for (const box of document.querySelectorAll(".album")) box.classList.toggle("hidden", !box.querySelector(".track:not(.hidden)"));
  for (const section of document.querySelectorAll(".artist")) section.classList.toggle("hidden", !section.querySelector(".album:not(.hidden)"));
});
fetch("index.json", { cache: "no-cache" })
  .then(r => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
  .then(index => { window.r2upFetchedAt = performance.now(); return index; })
  .then(index => { if (index.version !== 1) throw new Error("index.json version " + index.version); render(index); })
  .catch(error => { stats.textContent = "Could not load index.json: " + error.message; });
</script>
</body>
</html>
"""#
}
