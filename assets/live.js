// Corkboard: keeps a share page live. Served by the binary at /assets/live-<hash>.js (CSP
// `script-src 'self'`); the page works without it. It follows /share/{id}/events (or
// <data-base>/events) and, on any change, fetches /share/{id}/fragment (the page's body, drawn
// by the server's one renderer)
// and swaps in what changed. It never builds a pin's HTML itself. It also shows each
// <time datetime> (written by the server in UTC) in the reader's language and time zone.
(function () {
  "use strict";
  var body = document.body;

  // A date-time as the reader's browser writes it (its language, its zone); a bare date as
  // a date (no zone shifts it); "updated 3 min ago" relative, its full time as a tooltip.
  var intl = window.Intl && Intl.DateTimeFormat;
  var dateTime = intl && new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  var dateOnly = intl && new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });
  var relative = window.Intl && Intl.RelativeTimeFormat && new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  var UNITS = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400],
    ["hour", 3600], ["minute", 60], ["second", 1]];

  function ago(ms) {
    var secs = Math.round((ms - Date.now()) / 1000);
    // Under a minute is "now": the text changes every 30 s, not every second.
    if (Math.abs(secs) < 60) return relative.format(0, "second");
    for (var i = 0; i < UNITS.length - 1 && Math.abs(secs) < UNITS[i][1]; i++);
    return relative.format(Math.round(secs / UNITS[i][1]), UNITS[i][0]);
  }

  function localTimes(root, which) {
    if (!intl) return;
    var times = root.querySelectorAll(which || "time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var t = times[i], value = t.getAttribute("datetime");
      if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
        t.textContent = dateOnly.format(new Date(value + "T00:00:00Z"));
        continue;
      }
      var at = new Date(value);
      if (isNaN(at.getTime())) continue;
      if (t.hasAttribute("data-ago") && relative) {
        t.textContent = ago(at.getTime());
        t.title = dateTime.format(at);
      } else {
        t.textContent = dateTime.format(at);
      }
    }
  }

  localTimes(document);
  setInterval(function () { localTimes(document, "time[data-ago]"); }, 30000);

  var share = body.getAttribute("data-share");
  if (!share || !window.EventSource || !window.fetch) return;

  // A signed-in user's board page names its own routes (/boards/{id}); a share page doesn't.
  var base = body.getAttribute("data-base") || "/share/" + encodeURIComponent(share);
  // No event nor heartbeat (the server sends one every 15 s) for this long: stale.
  var STALE_MS = 45000;
  // At most one fragment request every GAP_MS (and one at a time): a burst of changes
  // costs one or two fetches, and a viewer of a busy board stays far below the address's
  // share limit.
  var GAP_MS = 1000;
  // pin.status and pin.stale redraw the pin's signals (its status word, "No update for").
  var EVENTS = ["pin.created", "pin.updated", "pin.deleted", "pin.status", "pin.stale",
    "pinboard.created",
    "pinboard.updated", "pinboard.deleted", "dataset.created", "dataset.updated",
    "dataset.deleted", "reset", "heartbeat"];

  var lastId = body.getAttribute("data-since") || "";
  var source = null;
  var state = "";
  var lastSign = Date.now();
  var busy = false;
  var again = false;
  var lastFetch = 0;
  var timer = 0;
  var retryMs = 1000;
  var gone = false;

  var badge = document.createElement("div");
  badge.id = "live";
  badge.setAttribute("role", "status");
  body.appendChild(badge);

  function show(s) {
    if (s === state) return;
    state = s;
    badge.className = s;
    badge.textContent = s;
    body.setAttribute("data-live", s);
  }

  // Grid positions as CSSOM properties (allowed by the CSP, unlike style attributes).
  function place(root) {
    var cells = root.querySelectorAll(".board > [data-pin]");
    for (var i = 0; i < cells.length; i++) {
      var c = cells[i];
      var x = +c.getAttribute("data-x"), y = +c.getAttribute("data-y");
      c.style.gridColumn = (x + 1) + " / span " + c.getAttribute("data-w");
      c.style.gridRow = (y + 1) + " / span " + c.getAttribute("data-h");
    }
  }

  // Swaps in the server's fragment: the header, footer and title when they changed; in the
  // new main, each pin whose HTML is unchanged keeps its old node (no flicker, images stay).
  function swap(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    var next = t.content;
    var main = next.querySelector("main");
    var old = document.querySelector("body > main");
    if (!main || !old) return;
    place(next);
    localTimes(next);
    ["header", "footer"].forEach(function (tag) {
      var was = document.querySelector("body > " + tag), now = next.querySelector(tag);
      if (was && now && !was.isEqualNode(now)) was.replaceWith(now);
      else if (was && !now) was.remove();
    });
    document.title = main.getAttribute("data-title") || document.title;
    if (old.isEqualNode(main)) return;
    var kept = {};
    var cells = old.querySelectorAll("[data-pin]");
    for (var i = 0; i < cells.length; i++) kept[cells[i].getAttribute("data-pin")] = cells[i];
    var fresh = main.querySelectorAll("[data-pin]");
    for (var j = 0; j < fresh.length; j++) {
      var was = kept[fresh[j].getAttribute("data-pin")];
      if (was && was.isEqualNode(fresh[j])) fresh[j].replaceWith(was);
    }
    old.replaceWith(main);
  }

  function later(ms) {
    if (!timer) timer = setTimeout(function () { timer = 0; refresh(); }, ms);
  }

  function refresh() {
    if (gone) return;
    // The board editor (editor.js) holds redraws while a change of its own is under way.
    if (body.hasAttribute("data-hold")) { later(300); return; }
    if (busy) { again = true; return; }
    var wait = lastFetch + GAP_MS - Date.now();
    if (wait > 0) { later(wait); return; }
    busy = true;
    again = false;
    lastFetch = Date.now();
    fetch(base + "/fragment", { cache: "no-store", credentials: "same-origin" })
      .then(function (res) {
        if (res.status === 429) {
          var after = +(res.headers.get("retry-after") || 5);
          later(Math.max(after, 1) * 1000);
          return null;
        }
        if (res.status === 404) gone = true;
        else if (!res.ok) throw new Error("HTTP " + res.status);
        return res.text();
      })
      .then(function (html) {
        if (html === null) return;
        swap(html);
        document.dispatchEvent(new CustomEvent("corkboard:swapped"));
        if (gone) { source.close(); show("stale"); }
      })
      .catch(function () { later(5000); })
      .then(function () {
        busy = false;
        if (again) refresh();
      });
  }

  function alive() {
    lastSign = Date.now();
    retryMs = 1000;
    show("live");
  }

  function onEvent(e) {
    if (e.lastEventId) lastId = e.lastEventId;
    alive();
    if (e.type !== "heartbeat") refresh();
  }

  function connect() {
    if (gone) return;
    // Resumes after the last event seen (the page's own when none yet); the browser's own
    // reconnects send Last-Event-ID, which the server prefers to the query.
    var url = base + "/events" + (lastId ? "?last_event_id=" + encodeURIComponent(lastId) : "");
    source = new EventSource(url);
    source.onopen = alive;
    EVENTS.forEach(function (name) { source.addEventListener(name, onEvent); });
    source.onerror = function () {
      show("reconnecting");
      if (source.readyState === EventSource.CLOSED) {
        // Refused (429, 404, a proxy's error): the browser gives up, so retry ourselves.
        // The first time, the page may be gone: the fragment says (and shows the 404 page).
        if (retryMs === 1000) refresh();
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 30000);
      }
    };
  }

  setInterval(function () {
    if (state === "live" && Date.now() - lastSign > STALE_MS) {
      // A silent connection may be dead without an error: show it, and open a new one.
      show("stale");
      source.close();
      connect();
    }
  }, 5000);

  // The board editor asks for the board as it is now after each of its changes.
  document.addEventListener("corkboard:refresh", function () { refresh(); });

  place(document);
  show("reconnecting");
  connect();
})();
