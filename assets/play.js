// Corkboard: plays a playlist. Served by the binary at /assets/play-<hash>.js (CSP
// `script-src 'self'`) on a playlist's page, which is one board's kiosk page (kept live by
// live.js) naming the next one: after data-seconds it opens data-next, the page of the
// next board. Before leaving it asks whether that page answers, so a network break keeps
// the board shown (live.js reconnects it) instead of an error page on the screen.
(function () {
  "use strict";
  var body = document.body;
  var next = body.getAttribute("data-next");
  var seconds = +body.getAttribute("data-seconds");
  if (!next || !(seconds > 0)) return;

  function go() {
    fetch(next, { method: "HEAD", cache: "no-store", credentials: "same-origin" })
      .then(function (res) {
        // 404 too: the playlist stopped being shown, and its next page says so.
        if (res.status === 429 || res.status >= 500) throw new Error("HTTP " + res.status);
        location.replace(next);
      })
      .catch(function () { setTimeout(go, 5000); });
  }

  setTimeout(go, seconds * 1000);
})();
