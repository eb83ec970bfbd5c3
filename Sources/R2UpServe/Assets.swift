/// The page's style and script, compiled into the binary: no CDN, works offline.
enum Assets {
    static let css = """
        :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
        body { margin: 0 auto; max-width: 60rem; padding: 0 1rem 3rem; }
        nav { display: flex; gap: 1rem; padding: .75rem 0; border-bottom: 1px solid #8884; }
        nav a[aria-current] { font-weight: bold; }
        .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        .group { border-bottom: 1px solid #8883; padding: .5rem 0; }
        .group header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem; }
        .group h2 { font-size: 1.05rem; margin: 0; }
        .folder, .count { color: #888; font-size: .85rem; margin: 0; }
        ul { list-style: none; padding-left: 0; margin: .25rem 0; }
        li.track { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; padding: .15rem 0; }
        .icon { display: inline-block; width: 1.2em; text-align: center; font-weight: bold; }
        progress.sent { width: 6em; height: 0.8em; vertical-align: middle; }
        .i-uploading, .s-uploading { color: #f5820d; }
        .i-uploadError, .i-downloadError, .s-error { color: #d70015; }
        .i-downloading, .i-cloudOnly { color: #0a66d8; }
        .i-downloaded, .i-uploaded, .s-allUploaded { color: #1a8f3a; }
        .i-downloading { -webkit-text-stroke: 1px currentColor; color: transparent; }
        .s-partial { color: #888; }
        .error { color: #d70015; font-size: .85rem; }
        .actions { margin-left: auto; display: flex; gap: .25rem; }
        .url { display: none; }
        form.action { display: inline; }
        [hidden] { display: none !important; }
        .notice { background: #8882; padding: .5rem; }
        .hud { display: flex; gap: 2rem; } .hud dd { font-size: 1.5rem; margin: 0; }
        table.history { border-collapse: collapse; width: 100%; } table.history td, table.history th { text-align: left; padding: .2rem .4rem; }
        img.art { width: 48px; height: 48px; object-fit: cover; border-radius: 4px; }
        #player { position: sticky; bottom: 0; background: Canvas; padding: .5rem 0; }
        """

    static let js = """
        "use strict";
        (function () {
          var live = document.getElementById("live");
          function hideMissingArt() {
            document.querySelectorAll("img.art").forEach(function (image) {
              image.addEventListener("error", function () { image.hidden = true; });
            });
          }
          hideMissingArt();
          function say(text) { if (live) live.textContent = text; }
          function byData(name, value) {
            return document.querySelector("[" + name + "=\\"" + CSS.escape(value) + "\\"]");
          }
          function apply(update) {
            function showActions(element, names) {
              var shown = names.split(" ");
              element.querySelectorAll("[data-action]").forEach(function (action) {
                action.hidden = shown.indexOf(action.dataset.action) < 0;
              });
            }
            (update.t || []).forEach(function (t) {
              var row = byData("data-path", t[0]);
              if (!row) return;
              row.dataset.icon = t[1];
              var icon = row.querySelector(".icon");
              icon.className = "icon i-" + t[1];
              icon.textContent = t[2];
              row.querySelector("[data-role=state]").textContent = t[3];
              row.querySelector("button.copy").dataset.url = t[4];
              row.querySelector("[data-role=error]").textContent = t[5];
              showActions(row, t[6]);
              var sent = row.querySelector("progress.sent");
              if (sent) { sent.hidden = t[7] === ""; sent.value = t[7] === "" ? 0 : Number(t[7]); }
            });
            (update.g || []).forEach(function (g) {
              var group = byData("data-group", g[0]);
              if (!group) return;
              group.dataset.summary = g[1];
              var summary = group.querySelector("[data-role=summary]");
              summary.className = "summary s-" + g[2];
              summary.firstChild.textContent = g[1];
              summary.lastChild.textContent = g[3];
              showActions(group.querySelector("header"), g[4]);
            });
            if (update.q) {
              Object.keys(update.q).forEach(function (name) {
                var cell = document.querySelector("[data-count=" + name + "]");
                if (cell) cell.textContent = update.q[name];
              });
              if (document.getElementById("hud")) refresh("/queue");
            }
            // Tracks came or went (found on disk): the Library lays itself out again.
            if (update.n && document.querySelector("section.space")) refresh(location.pathname + location.search);
          }
          // The Queue's lists (uploading, up next, failed), or the Library's groups, from the server as they are now.
          var refreshing = false;
          function refresh(url) {
            if (refreshing) return;
            refreshing = true;
            fetch(url, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
              var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("main");
              var main = document.querySelector("main");
              if (!fresh || !main) return;
              // The notice an action left is shown once: the fresh copy no longer has it.
              var notice = main.querySelector("p.notice");
              var playing = main.querySelector("#player");
              main.innerHTML = fresh.innerHTML;
              if (playing) main.appendChild(playing);
              hideMissingArt();
              var live = main.querySelector("#live");
              if (notice && live && !main.querySelector("p.notice")) live.after(notice);
            }).finally(function () { refreshing = false; });
          }
          if (window.EventSource) {
            var since = live && live.dataset.since;
            var source = new EventSource("/events" + (since ? "?since=" + encodeURIComponent(since) : ""));
            source.addEventListener("state", function (e) { apply(JSON.parse(e.data)); });
            source.onerror = function () { say("Live updates paused; retrying."); };
            source.onopen = function () { say(""); };
          }
          var player = null;
          function title(button) {
            var name = button.closest("li").querySelector(".name");
            return name ? name.textContent : "";
          }
          // The next playable track of the same list (the album plays on).
          function following(button) {
            var row = button && button.closest("li");
            var next = row && row.nextElementSibling;
            while (next && !(next.querySelector("button.play") && !next.querySelector("button.play").hidden)) next = next.nextElementSibling;
            return next ? next.querySelector("button.play") : null;
          }
          function play(button) {
            if (!player) {
              player = document.createElement("audio");
              player.id = "player"; player.controls = true;
              document.querySelector("main").appendChild(player);
              player.addEventListener("ended", function () {
                var next = following(player.current);
                if (next) play(next);
              });
            }
            player.current = button;
            player.src = button.dataset.src;
            player.play();
            var next = following(button);
            say("Now playing: " + title(button) + (next ? " · Up next: " + title(next) : ""));
          }
          document.addEventListener("click", function (e) {
            var button = e.target.closest("button");
            if (!button) return;
            if (button.classList.contains("copy")) {
              var url = button.dataset.url;
              if (navigator.clipboard) {
                navigator.clipboard.writeText(url).then(function () { say("Copied " + url); }, function () { say(url); });
              } else { say(url); }
              document.body.dataset.copied = url;
            } else if (button.classList.contains("play")) {
              play(button);
            }
          });
        })();
        """
}
