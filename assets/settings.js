// Corkboard: the settings pages' copy buttons. Served by the binary at
// /assets/settings-<hash>.js (CSP `script-src 'self'`); without it the pages still work: the
// secret or link sits selected in a read-only field, and the buttons stay hidden.
(function () {
  "use strict";
  var buttons = document.querySelectorAll("button[data-copy]");
  Array.prototype.forEach.call(buttons, function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      field.select();
      var done = function () {
        button.textContent = "Copied";
        window.setTimeout(function () { button.textContent = label; }, 2000);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          document.execCommand("copy");
          done();
        });
      } else {
        document.execCommand("copy");
        done();
      }
    });
  });
  // A shown secret is selected at once, ready to copy by hand.
  var secret = document.querySelector("input[data-secret]");
  if (secret) {
    secret.focus();
    secret.select();
  }
})();
