// Corkboard kiosk mode (?kiosk=1): fits a board to the screen. Served by the binary at
// /assets/kiosk-<hash>.js next to live.js (CSP `script-src 'self'`); without it the style
// sheet alone shares the window's height among the board's rows.
//
// Rows take the screen's height, but never less than the least row height at which every
// pin still shows its content cut down as far as it goes (one item of a list, a chart at its
// smallest). A board that doesn't fit at that height shows in pages of whole rows, never
// cutting a pin, each in turn for <html data-page-secs> seconds, with "2 / 3" at the bottom. A pin
// whose content is still too long for its cell shows fewer items and says "+N more". It
// works through CSS variables on <html> and hidden items: the server's HTML is never
// rebuilt, and each live redraw (live.js's corkboard:swapped) is fitted again.
(function () {
  "use strict";
  var root = document.documentElement;
  var body = document.body;
  if (!root.classList.contains("kiosk")) return;
  var SECS = Math.max(1, +root.getAttribute("data-page-secs") || 15);
  // The least row height, in root ems, whatever the pins need.
  var FLOOR_REM = 3;
  // Content a pin can show less of: [container, its items, the tag of its "+N more"].
  var LISTS = [
    [".cards", ".card", "p"],
    ["ul.progress, ul.list, ul.status-grid, ol.timeline", "li", "li"],
    ["tbody", "tr", "tr"],
    ["ul.jt", "li", "li"],
    [".md", "*", "p"]
  ];
  // Lines of preformatted text (json, code) kept at least.
  var LEAST_LINES = 2;

  var pages = [{ start: 0, end: 1 }];
  var current = 0;
  var row = 0;
  var gap = 0;
  // The row height the pins were last fitted at.
  var fitted = -1;
  var undo = [];

  var indicator = document.createElement("div");
  indicator.id = "pages";
  indicator.hidden = true;
  body.appendChild(indicator);

  function fits(pin) {
    return pin.scrollHeight <= pin.clientHeight + 1 && pin.scrollWidth <= pin.clientWidth + 1;
  }

  function px(name, value) {
    root.style.setProperty(name, value + "px");
  }

  function restore() {
    while (undo.length) undo.pop()();
  }

  // The parts of `pin` that can show fewer items, last first: each as show(k), which keeps
  // the first k of its n items and says "+N more" for the rest.
  function parts(pin) {
    var out = [];
    LISTS.forEach(function (kind) {
      var boxes = pin.querySelectorAll(kind[0]);
      for (var i = 0; i < boxes.length; i++) {
        var box = boxes[i];
        var items = [].filter.call(box.children, function (c) { return c.matches(kind[1]); });
        if (items.length > 1) out.push(listPart(box, items, kind[2]));
      }
    });
    var pres = pin.querySelectorAll("pre");
    for (var i = 0; i < pres.length; i++) {
      var text = pres[i].querySelector("code") || pres[i];
      var lines = text.textContent.replace(/\n$/, "").split("\n");
      if (lines.length > LEAST_LINES) out.push(textPart(text, lines));
    }
    out.sort(function (a, b) {
      return a.node.compareDocumentPosition(b.node) & Node.DOCUMENT_POSITION_FOLLOWING ? 1 : -1;
    });
    return out;
  }

  function listPart(box, items, tag) {
    var more = null;
    var shown = items.length;
    return {
      node: box, n: items.length, least: 1,
      show: function (k) {
        if (k === shown) return;
        if (!more && k < items.length) {
          more = document.createElement(tag);
          more.className = "more";
          var line = more;
          if (tag === "tr") {
            line = document.createElement("td");
            line.colSpan = Math.max(1, items[0].children.length);
            more.appendChild(line);
          }
          box.appendChild(more);
          undo.push(function () {
            more.remove();
            items.forEach(function (item) { item.hidden = false; });
          });
          more.line = line;
        }
        for (var i = 0; i < items.length; i++) items[i].hidden = i >= k;
        if (more) {
          more.hidden = k >= items.length;
          more.line.textContent = "+" + (items.length - k) + " more";
        }
        shown = k;
      }
    };
  }

  function textPart(el, lines) {
    var whole = el.textContent;
    var cut = false;
    return {
      node: el, n: lines.length, least: LEAST_LINES,
      show: function (k) {
        if (k >= lines.length) {
          if (cut) el.textContent = whole;
          return;
        }
        if (!cut) {
          cut = true;
          undo.push(function () { el.textContent = whole; });
        }
        el.textContent = lines.slice(0, k).join("\n") + "\n";
        var more = document.createElement("span");
        more.className = "more";
        more.textContent = "+" + (lines.length - k) + " more lines";
        el.appendChild(more);
      }
    };
  }

  // Cuts `pin`'s content (its last parts first) to the most that fits its cell; a table
  // too wide for it first lets its headings and cells break inside words (until then a
  // cell's words stay whole, so a narrow column isn't squeezed to a letter a line).
  function fit(pin) {
    if (fits(pin)) return;
    if (pin.scrollWidth > pin.clientWidth + 1) {
      [].forEach.call(pin.querySelectorAll("table"), function (table) {
        table.classList.add("tight");
        undo.push(function () { table.classList.remove("tight"); });
      });
    }
    var all = parts(pin);
    for (var p = 0; p < all.length && !fits(pin); p++) {
      var part = all[p];
      var lo = part.least, hi = part.n - 1, best = part.least;
      while (lo <= hi) {
        var mid = (lo + hi) >> 1;
        part.show(mid);
        if (fits(pin)) { best = mid; lo = mid + 1; } else hi = mid - 1;
      }
      part.show(best);
    }
  }

  // `pin`'s content cut down as far as it goes.
  function squeeze(pin) {
    parts(pin).forEach(function (part) { part.show(part.least); });
  }

  // The height `pin`'s content needs, borders included: with rows of one pixel, flexible
  // parts (charts, dials) are at their minimum height.
  function outer(pin) {
    return pin.scrollHeight + pin.offsetHeight - pin.clientHeight;
  }

  function cells(board) {
    return [].filter.call(board.children, function (c) { return c.hasAttribute("data-pin"); });
  }

  // Pages of whole rows, `per` rows each at most unless a pin is taller: a page ends where
  // no pin crosses, and starts with a pin (empty rows between pages are left out).
  function paginate(items, total, per) {
    function clean(r) {
      return items.every(function (it) { return !(it.y < r && r < it.y + it.h); });
    }
    function next(r) {
      return items.reduce(function (m, it) { return it.y >= r ? Math.min(m, it.y) : m; }, total);
    }
    var out = [];
    for (var start = next(0); start < total; start = next(start)) {
      var end = Math.min(start + per, total);
      while (end > start + 1 && !clean(end)) end--;
      if (!clean(end)) {
        end = start + per;
        while (end < total && !clean(end)) end++;
      }
      out.push({ start: start, end: end });
      start = end;
    }
    return out.length ? out : [{ start: 0, end: total }];
  }

  function room() {
    var style = getComputedStyle(body);
    return body.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  }

  function layout() {
    restore();
    var board = document.querySelector("body > main .board");
    if (!board) {
      root.classList.remove("fitted", "paged");
      indicator.hidden = true;
      [].forEach.call(document.querySelectorAll("main [data-pin]"), fit);
      return;
    }
    var list = cells(board);
    var items = list.map(function (c) {
      return { pin: c, y: +c.getAttribute("data-y"), h: +c.getAttribute("data-h") };
    });
    var total = items.reduce(function (m, it) { return Math.max(m, it.y + it.h); }, 1);
    root.classList.add("fitted");
    root.classList.remove("paged");
    gap = parseFloat(getComputedStyle(board).rowGap) || 0;
    var rem = parseFloat(getComputedStyle(root).fontSize);
    px("--k-row", 1);
    px("--k-shift", 0);
    px("--k-page", 1e6);
    items.forEach(function (it) { squeeze(it.pin); });
    var needs = items.map(function (it) { return outer(it.pin); });
    restore();
    var height = room();
    var want = items.reduce(function (m, it, i) {
      return Math.max(m, (needs[i] - (it.h - 1) * gap) / it.h);
    }, FLOOR_REM * rem);
    want = Math.min(Math.ceil(want), height);
    if (total * want + (total - 1) * gap <= height) {
      row = (height - (total - 1) * gap) / total;
      pages = [{ start: 0, end: total }];
    } else {
      root.classList.add("paged");
      height = room();
      var per = Math.max(1, Math.floor((height + gap) / (want + gap)));
      pages = paginate(items, total, per);
      // Pages end where no pin crosses, often short of `per` rows: rows as tall as the
      // longest page (of at most `per`) allows.
      var longest = pages.reduce(function (m, p) {
        var rows = p.end - p.start;
        return rows <= per ? Math.max(m, rows) : m;
      }, 1);
      row = (height - (longest - 1) * gap) / longest;
    }
    current = Math.min(current, pages.length - 1);
    fitted = -1;
    show(current);
  }

  // Shows page `k`: its rows at the top, the main cut after its last row; its pins fitted
  // when its rows differ from the last fitted (a page with a pin taller than the screen).
  function show(k) {
    current = k;
    var page = pages[k];
    var rows = page.end - page.start;
    var size = Math.min(row, (room() - (rows - 1) * gap) / rows);
    if (size !== fitted) {
      restore();
      fitted = size;
      px("--k-row", size);
      var board = document.querySelector("body > main .board");
      if (board) cells(board).forEach(fit);
    }
    px("--k-shift", -page.start * (size + gap));
    px("--k-page", rows * size + (rows - 1) * gap);
    indicator.hidden = pages.length < 2;
    indicator.textContent = (k + 1) + " / " + pages.length;
    indicator.setAttribute("aria-label", "Page " + (k + 1) + " of " + pages.length);
  }

  setInterval(function () {
    if (pages.length > 1) show((current + 1) % pages.length);
  }, SECS * 1000);

  var pending = 0;
  function soon() {
    if (!pending) pending = requestAnimationFrame(function () { pending = 0; layout(); });
  }
  window.addEventListener("resize", soon);
  document.addEventListener("corkboard:swapped", layout);
  layout();
})();
