// Corkboard: the board editor (CONTRACT.md 16). Served by the binary at
// /assets/editor-<hash>.js (CSP `script-src 'self'`), only on the page of a board its user
// may change; everything it does is also a form of the page, except dragging and resizing.
// It sends the page's own forms and the layout changes as same-origin POSTs to
// /boards/{id}/... (the session cookie, `Accept: application/json`), never to the API. The
// board itself is still drawn by the server: assets/live.js swaps in its fragment after every
// change (ours, or anyone's), and this script only adds the handles to what it drew.
(function () {
  "use strict";
  var body = document.body;
  var tools = document.getElementById("tools");
  if (!tools || !window.fetch || !window.URLSearchParams) return;

  var base = tools.getAttribute("data-board");
  var editing = tools.hasAttribute("data-editing");
  // The newest version of the board seen: the page's, the answers', the redraws'. ISO 8601
  // instants of one format, so text order is time order.
  var version = tools.getAttribute("data-version") || "";
  var COLUMNS = 12;

  function seen(v) {
    if (v && v > version) version = v;
  }

  function current() {
    var main = document.querySelector("body > main");
    if (main) seen(main.getAttribute("data-version"));
    return version;
  }

  function say(text, ok) {
    var notice = document.getElementById("notice");
    if (!notice) return;
    notice.textContent = text || "";
    notice.className = "notice" + (ok ? " ok" : "");
    notice.hidden = !text;
    // Good news goes by itself; a refusal stays until the next change.
    if (ok) setTimeout(function () { if (notice.textContent === text) notice.hidden = true; }, 4000);
  }

  // Asks live.js for the board as it is now (it fetches the fragment and swaps it in).
  function redraw() {
    document.dispatchEvent(new CustomEvent("corkboard:refresh"));
  }

  // POSTs `fields` to `url` as a form; resolves to {ok, status, data}.
  function send(url, fields) {
    var form = new URLSearchParams();
    Object.keys(fields).forEach(function (k) {
      if (fields[k] !== undefined && fields[k] !== null) form.append(k, String(fields[k]));
    });
    return fetch(url, {
      method: "POST", body: form, credentials: "same-origin", redirect: "manual",
      headers: { "Accept": "application/json" }
    }).then(function (res) {
      // The session ended: the page itself goes to sign-in.
      if (res.type === "opaqueredirect") { location.reload(); throw new Error("signed out"); }
      return res.json().catch(function () { return {}; }).then(function (data) {
        return { ok: res.ok, status: res.status, data: data };
      });
    });
  }

  // What an answer means for the page: true when the change was saved. A refused change
  // shows why, and the board as it is now.
  function settle(r) {
    if (r.ok) {
      seen(r.data.version);
      return true;
    }
    var message = (r.data && r.data.error && r.data.error.message) || "";
    if (r.status === 409) {
      say("Not saved: " + (message || "someone else changed this board") +
        ". This is the board as it is now.");
    } else if (r.status === 404) {
      say("Not saved: the board or the pin is gone. This is the board as it is now.");
    } else {
      say("Not saved: " + (message || "the server answered " + r.status) + ".");
    }
    redraw();
    return false;
  }

  function failed() {
    say("Not saved: the server could not be reached. This is the board as it was last seen.");
    redraw();
  }

  // The tools again from the server (after a share, settings or collaborator change),
  // keeping which dialogs are open and the search typed.
  function reloadTools() {
    return fetch(location.pathname + location.search, { credentials: "same-origin", cache: "no-store" })
      .then(function (res) { return res.text(); })
      .then(function (text) {
        // Parsed inert (a template), so the page's own <style> in it is never applied.
        var t = document.createElement("template");
        t.innerHTML = text;
        var fresh = t.content.getElementById("tools");
        var now = document.getElementById("tools");
        if (!fresh || !now) return;
        var open = {};
        now.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
        var q = now.querySelector("input[name=q]");
        fresh.querySelectorAll("details[id]").forEach(function (d) {
          if (d.id in open) d.open = open[d.id];
        });
        var fq = fresh.querySelector("input[name=q]");
        if (q && fq) fq.value = q.value;
        var notice = now.querySelector("#notice");
        var freshNotice = fresh.querySelector("#notice");
        if (notice && freshNotice) freshNotice.replaceWith(notice);
        now.replaceWith(fresh);
        tools = fresh;
        seen(fresh.getAttribute("data-version"));
        showScripted();
      })
      .catch(function () {});
  }

  function showScripted() {
    document.querySelectorAll("[data-copy]").forEach(function (b) { b.hidden = false; });
  }

  // The page's forms, sent without leaving the page.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.closest("#tools")) return;
    if (form.classList.contains("search")) {
      e.preventDefault();
      search(form.querySelector("input[name=q]").value);
      return;
    }
    if ((form.getAttribute("method") || "").toLowerCase() !== "post") return;
    e.preventDefault();
    var fields = {};
    new FormData(form).forEach(function (value, key) { fields[key] = value; });
    if ("version" in fields) fields.version = current();
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    send(form.action, fields).then(function (r) {
      if (r.ok && r.data.go) { location.href = r.data.go; return; }
      if (!settle(r)) return;
      var pick = form.closest("[data-pick]");
      if (pick) {
        pick.remove();
        say("Added to the board.", true);
      } else {
        say("Saved.", true);
        reloadTools();
      }
      redraw();
    }, failed).then(function () { if (button) button.disabled = false; });
  });

  // Copy the share link.
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-copy]");
    if (!b) return;
    var input = document.getElementById(b.getAttribute("data-copy"));
    if (!input) return;
    input.select();
    var done = function () {
      b.textContent = "Copied";
      setTimeout(function () { b.textContent = "Copy"; }, 1500);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(input.value).then(done, function () {
        document.execCommand("copy");
        done();
      });
    } else {
      document.execCommand("copy");
      done();
    }
  });

  // The picker's search, as it is typed.
  var searchTimer = 0;
  function search(q) {
    fetch(base + "/picker?q=" + encodeURIComponent(q), { credentials: "same-origin", cache: "no-store" })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (html) {
        var picker = document.getElementById("picker");
        if (html !== null && picker) picker.innerHTML = html;
      })
      .catch(function () {});
  }
  document.addEventListener("input", function (e) {
    if (!e.target.matches("#tools input[name=q]")) return;
    clearTimeout(searchTimer);
    var q = e.target.value;
    searchTimer = setTimeout(function () { search(q); }, 200);
  });

  showScripted();
  if (!editing) return;

  // ---- Edit mode: the layout. ----
  body.classList.add("editing");

  function boardEl() { return document.querySelector("body > main .board"); }
  function cells() { return Array.prototype.slice.call(document.querySelectorAll("body > main .board > [data-pin]")); }
  function cellOf(id) { return document.querySelector("body > main .board > [data-pin=\"" + CSS.escape(id) + "\"]"); }
  function pos(cell) {
    return { x: +cell.getAttribute("data-x"), y: +cell.getAttribute("data-y"),
      w: +cell.getAttribute("data-w"), h: +cell.getAttribute("data-h") };
  }
  function overlaps(a, b) {
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  }
  function fits(id, p) {
    if (p.x < 0 || p.y < 0 || p.w < 1 || p.h < 1 || p.x + p.w > COLUMNS || p.y > 999 || p.h > 100) return false;
    return cells().every(function (c) { return c.getAttribute("data-pin") === id || !overlaps(p, pos(c)); });
  }
  function put(el, p) {
    el.style.gridColumn = (p.x + 1) + " / span " + p.w;
    el.style.gridRow = (p.y + 1) + " / span " + p.h;
  }
  function apply(cell, p) {
    cell.setAttribute("data-x", p.x); cell.setAttribute("data-y", p.y);
    cell.setAttribute("data-w", p.w); cell.setAttribute("data-h", p.h);
    put(cell, p);
    var where = cell.querySelector(".pin-bar .where");
    if (where) where.textContent = label(p);
  }
  function label(p) { return "x " + p.x + ", y " + p.y + " · " + p.w + "×" + p.h; }

  function button(act, text, name) {
    var b = document.createElement("button");
    b.type = "button";
    b.setAttribute("data-act", act);
    b.setAttribute("aria-label", name);
    b.title = name;
    b.textContent = text;
    return b;
  }

  // Handles on each pin the server drew: a bar of buttons (what a phone edits with) and a
  // resize corner; the pin itself takes focus for the keyboard.
  function decorate() {
    cells().forEach(function (cell) {
      if (cell.querySelector(".pin-bar")) return;
      var name = (cell.querySelector("h2") || {}).textContent || cell.getAttribute("aria-label") || "pin";
      cell.tabIndex = 0;
      cell.setAttribute("aria-roledescription", "movable pin");
      cell.setAttribute("aria-keyshortcuts", "ArrowLeft ArrowRight ArrowUp ArrowDown Shift+ArrowLeft Shift+ArrowRight Shift+ArrowUp Shift+ArrowDown");
      var bar = document.createElement("div");
      bar.className = "pin-bar";
      var where = document.createElement("span");
      where.className = "where";
      where.textContent = label(pos(cell));
      bar.appendChild(where);
      [["left", "←", "Move left"], ["up", "↑", "Move up"], ["down", "↓", "Move down"],
        ["right", "→", "Move right"], ["narrower", "−w", "Narrower"], ["wider", "+w", "Wider"],
        ["shorter", "−h", "Shorter"], ["taller", "+h", "Taller"]].forEach(function (a) {
        bar.appendChild(button(a[0], a[1], a[2] + ": " + name));
      });
      var off = button("remove", "✕", "Take " + name + " off the board");
      bar.appendChild(off);
      cell.insertBefore(bar, cell.firstChild);
      var corner = document.createElement("span");
      corner.className = "resize";
      corner.setAttribute("aria-hidden", "true");
      cell.appendChild(corner);
    });
  }

  var STEPS = {
    left: [-1, 0, 0, 0], right: [1, 0, 0, 0], up: [0, -1, 0, 0], down: [0, 1, 0, 0],
    narrower: [0, 0, -1, 0], wider: [0, 0, 1, 0], shorter: [0, 0, 0, -1], taller: [0, 0, 0, 1]
  };

  function step(cell, act) {
    var p = pos(cell), d = STEPS[act];
    var next = { x: p.x + d[0], y: p.y + d[1], w: p.w + d[2], h: p.h + d[3] };
    var id = cell.getAttribute("data-pin");
    if (!fits(id, next)) {
      say(next.x < 0 || next.y < 0 || next.w < 1 || next.h < 1 || next.x + next.w > COLUMNS
        ? "That would leave the grid." : "Another pin is in the way.");
      return;
    }
    say("");
    apply(cell, next);
    save(id, next);
  }

  // Saves go one at a time, in order, each with the version the one before left; a pin
  // moved again meanwhile is saved once, where it ended. While any is pending, live.js
  // holds its redraws, so the board doesn't jump back under the pointer.
  var pending = {}, order = [], busy = false;
  function save(id, p) {
    if (!(id in pending)) order.push(id);
    pending[id] = p;
    pump();
  }
  function pump() {
    if (busy) return;
    var id = order.shift();
    if (!id) { body.removeAttribute("data-hold"); return; }
    var p = pending[id];
    delete pending[id];
    busy = true;
    body.setAttribute("data-hold", "1");
    var cell = cellOf(id);
    if (cell) cell.classList.add("saving");
    send(base + "/pins/" + encodeURIComponent(id), { x: p.x, y: p.y, w: p.w, h: p.h, version: current() })
      .then(function (r) {
        if (!settle(r)) { pending = {}; order = []; }
      }, function () { pending = {}; order = []; failed(); })
      .then(function () {
        var c = cellOf(id);
        if (c) c.classList.remove("saving");
        busy = false;
        pump();
      });
  }

  function takeOff(cell) {
    var id = cell.getAttribute("data-pin");
    cell.classList.add("saving");
    send(base + "/pins/" + encodeURIComponent(id) + "/remove", { version: current() })
      .then(function (r) {
        if (settle(r)) { cell.remove(); say("Taken off the board (the pin itself stays).", true); }
        redraw();
      }, failed);
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest(".pin-bar [data-act]");
    if (!b) return;
    var cell = b.closest("[data-pin]");
    var act = b.getAttribute("data-act");
    if (act === "remove") takeOff(cell);
    else step(cell, act);
  });

  var KEYS = { ArrowLeft: ["left", "narrower"], ArrowRight: ["right", "wider"],
    ArrowUp: ["up", "shorter"], ArrowDown: ["down", "taller"] };
  document.addEventListener("keydown", function (e) {
    var cell = e.target;
    if (!KEYS[e.key] || !cell.matches || !cell.matches("body > main .board > [data-pin]")) return;
    e.preventDefault();
    step(cell, KEYS[e.key][e.shiftKey ? 1 : 0]);
  });

  // Dragging: the grid's tracks as drawn, a dashed outline where the pin would land.
  function grid() {
    var board = boardEl();
    var style = getComputedStyle(board);
    var rect = board.getBoundingClientRect();
    var gap = parseFloat(style.columnGap) || 12;
    var rowGap = parseFloat(style.rowGap) || gap;
    var rows = style.gridTemplateRows.split(" ").map(parseFloat).filter(function (n) { return n > 0; });
    return { board: board, rect: rect, gap: gap, rowGap: rowGap, rows: rows,
      col: (rect.width - gap * (COLUMNS - 1)) / COLUMNS };
  }
  function colAt(g, px) {
    return Math.floor((px - g.rect.left + g.gap / 2) / (g.col + g.gap));
  }
  function rowAt(g, py) {
    var y = py - g.rect.top, top = 0;
    for (var i = 0; i < g.rows.length; i++) {
      var h = g.rows[i] + g.rowGap;
      if (y < top + h) return i;
      top += h;
    }
    return g.rows.length + Math.max(0, Math.floor((y - top) / (90 + g.rowGap)));
  }

  var drag = null;
  document.addEventListener("pointerdown", function (e) {
    if (e.button !== 0) return;
    var cell = e.target.closest && e.target.closest("body > main .board > [data-pin]");
    if (!cell) return;
    var resize = !!e.target.closest(".resize");
    if (!resize && e.target.closest("button, a, input, select, textarea, .pin-bar")) return;
    var g = grid();
    if (getComputedStyle(g.board).display !== "grid") return;
    var p = pos(cell);
    drag = { cell: cell, id: cell.getAttribute("data-pin"), from: p, to: p, resize: resize, g: g,
      dc: colAt(g, e.clientX) - p.x, dr: rowAt(g, e.clientY) - p.y,
      sx: e.clientX, sy: e.clientY, moved: false, ghost: null, pointer: e.pointerId };
    cell.setPointerCapture(e.pointerId);
    cell.focus({ preventScroll: true });
    e.preventDefault();
  });

  document.addEventListener("pointermove", function (e) {
    if (!drag || e.pointerId !== drag.pointer) return;
    if (!drag.moved && Math.abs(e.clientX - drag.sx) + Math.abs(e.clientY - drag.sy) < 5) return;
    if (!drag.moved) {
      drag.moved = true;
      body.setAttribute("data-hold", "1");
      drag.cell.classList.add("dragging");
      drag.ghost = document.createElement("div");
      drag.ghost.className = "ghost";
      drag.g.board.appendChild(drag.ghost);
    }
    var g = drag.g, f = drag.from, to;
    if (drag.resize) {
      to = { x: f.x, y: f.y,
        w: Math.min(Math.max(colAt(g, e.clientX) - f.x + 1, 1), COLUMNS - f.x),
        h: Math.min(Math.max(rowAt(g, e.clientY) - f.y + 1, 1), 100) };
    } else {
      to = { x: Math.min(Math.max(colAt(g, e.clientX) - drag.dc, 0), COLUMNS - f.w),
        y: Math.min(Math.max(rowAt(g, e.clientY) - drag.dr, 0), 999), w: f.w, h: f.h };
    }
    drag.to = to;
    put(drag.ghost, to);
    drag.ghost.classList.toggle("bad", !fits(drag.id, to));
  });

  function endDrag(e) {
    if (!drag || e.pointerId !== drag.pointer) return;
    var d = drag;
    drag = null;
    d.cell.classList.remove("dragging");
    if (d.ghost) d.ghost.remove();
    if (!d.moved) return;
    var t = d.to, f = d.from;
    if (e.type === "pointercancel" || (t.x === f.x && t.y === f.y && t.w === f.w && t.h === f.h)) {
      if (!busy) body.removeAttribute("data-hold");
      return;
    }
    if (!fits(d.id, t)) {
      say("Another pin is in the way: the pin stays where it was.");
      if (!busy) body.removeAttribute("data-hold");
      return;
    }
    say("");
    apply(d.cell, t);
    save(d.id, t);
  }
  document.addEventListener("pointerup", endDrag);
  document.addEventListener("pointercancel", endDrag);

  // After every redraw: handles on the new pins, the keyboard's pin focused again.
  var focused = null;
  document.addEventListener("focusin", function (e) {
    if (e.target.matches && e.target.matches("body > main .board > [data-pin]")) focused = e.target.getAttribute("data-pin");
  });
  document.addEventListener("corkboard:swapped", function () {
    decorate();
    current();
    if (focused && (document.activeElement === body || !document.activeElement)) {
      var cell = cellOf(focused);
      if (cell) cell.focus({ preventScroll: true });
    }
  });
  decorate();
})();
