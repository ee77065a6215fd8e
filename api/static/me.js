// Comforts only: /me works without this script (a reload shows what changed).
// While the page is open, follow the player's stream of events (GET /v1/me/events)
// and, when one of its games changed, fetch the page again and swap its lists in place.
(function () {
  "use strict";
  var root = document.getElementById("my-games");
  if (!root || !window.EventSource) { return; }

  // Waits before following again after the stream was refused or cut: doubled up to the longest.
  var FIRST_WAIT = 2000;
  var LONGEST_WAIT = 60 * 1000;
  // A page hidden this long may sit on a connection that died unnoticed (a laptop asleep).
  var LONG_ABSENCE = 60 * 1000;

  // Whether the page already shows this version of the game (a resumed stream repeats).
  function shown(change) {
    var row = root.querySelector("[data-game='" + String(change.game_id).replace(/[^0-9a-f]/g, "") + "']");
    return row !== null && row.dataset.version === String(change.version);
  }

  var fetching = false;
  var again = false;
  var refetchWait = FIRST_WAIT;

  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    // From /me itself: this page may be the answer to the token form (/me/tokens, no GET).
    fetch(root.dataset.page, {
      credentials: "same-origin", cache: "no-store", headers: { Accept: "text/html" }
    })
      .then(function (reply) {
        if (reply.redirected || !reply.ok) { throw new Error("status " + reply.status); }
        return reply.text();
      })
      .then(function (text) {
        var page = new DOMParser().parseFromString(text, "text/html");
        var fresh = page.getElementById("my-games");
        if (fresh) {
          // The stream goes on from where it is: only the lists are swapped.
          root.replaceChildren.apply(root, Array.prototype.slice.call(fresh.childNodes));
          document.title = page.title;
        }
        refetchWait = FIRST_WAIT;
        fetching = false;
        if (again) { again = false; refresh(); }
      })
      .catch(function () {
        // Busy, offline or signed out for a moment: look again after a while.
        fetching = false;
        window.setTimeout(refresh, refetchWait);
        refetchWait = Math.min(refetchWait * 2, LONGEST_WAIT);
      });
  }

  var source = null;
  var retry = null;
  var wait = FIRST_WAIT;
  var hiddenSince = null;

  function stop() {
    if (source) { source.close(); source = null; }
    if (retry) { window.clearTimeout(retry); retry = null; }
  }

  function follow() {
    stop();
    // From the moment the page was read (`since`); a reconnection resumes by Last-Event-ID.
    source = new EventSource(root.dataset.events);
    source.onmessage = function (event) {
      wait = FIRST_WAIT;
      var change;
      try { change = JSON.parse(event.data); } catch (garbled) { return; }
      if (!shown(change)) { refresh(); }
    };
    source.onerror = function () {
      // EventSource reconnects by itself after a cut connection, but gives up on an
      // answer that is no stream: a 401 (signed out), a 429, a 503, a proxy's error page.
      if (source && source.readyState === EventSource.CLOSED) { later(); }
    };
  }

  function later() {
    stop();
    var delay = wait * (0.5 + Math.random());
    wait = Math.min(wait * 2, LONGEST_WAIT);
    retry = window.setTimeout(function () { retry = null; refresh(); follow(); }, delay);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState !== "visible") { hiddenSince = Date.now(); return; }
    var away = hiddenSince === null ? 0 : Date.now() - hiddenSince;
    hiddenSince = null;
    if (!source || away > LONG_ABSENCE) { refresh(); follow(); }
  });
  window.addEventListener("online", function () { refresh(); follow(); });
  window.addEventListener("pagehide", stop);
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) { refresh(); follow(); }
  });

  follow();
})();
