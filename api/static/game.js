// Comforts only: the page works without this script.
// 1. While the game is in play, reload when it moves on (unless a move is being typed).
// 2. Tapping a piece of a move adds it to the move field.
(function () {
  "use strict";
  var root = document.getElementById("game");
  if (!root) { return; }
  var field = document.getElementById("notation");

  document.querySelectorAll("button.piece").forEach(function (button) {
    button.addEventListener("click", function () {
      if (!field) { return; }
      field.value = field.value ? field.value + " " + button.value : button.value;
      field.focus();
    });
  });

  if (root.dataset.watch !== "yes") { return; }
  var url = "/v1/games/" + encodeURIComponent(root.dataset.game);
  var version = Number(root.dataset.version);
  function look() {
    if (document.hidden || (field && field.value && document.activeElement === field)) {
      return;
    }
    fetch(url, { headers: { Accept: "application/json" }, credentials: "omit" })
      .then(function (answer) { return answer.ok ? answer.json() : null; })
      .then(function (summary) {
        if (summary && summary.version !== version) {
          window.location.replace(window.location.pathname);
        }
      })
      .catch(function () { /* offline for a moment: look again later */ });
  }
  window.setInterval(look, 5000);
})();
