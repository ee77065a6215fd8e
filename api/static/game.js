// Comforts only: the page works without this script.
// 1. While the game is in play, follow its event stream and update the page in place
//    (a past position too: its move count and move list grow, the board stays).
// 2. The move list shows the position on show (the newest move, on the present's page).
// 3. Tapping a piece of a move adds it to the move field.
// 4. With the player's leave (a button, never unasked), a notification when it becomes their turn.
// 5. A move is built by clicking targets on the board, step by step, and sent with one confirm.
// 6. The arrow keys step through the history.
// 7. Table talk: messages are sent without leaving the page, and new ones appear as the
//    stream tells of them (read once the page is in view: reading marks them seen).
// 8. A finished game's rematch: who accepted shows as they do, and a seat that accepted
//    is taken to its seat in the new game when it starts.
(function () {
  "use strict";
  var root = document.getElementById("game");
  if (!root) { return; }

  // Waits before following again after the stream was refused or cut: doubled up to the longest.
  var FIRST_WAIT = 2000;
  var LONGEST_WAIT = 60 * 1000;
  // A page hidden this long may sit on a connection that died unnoticed (a laptop asleep).
  var LONG_ABSENCE = 60 * 1000;
  var NOTIFY_KEY = "referee-notify";

  function field() { return document.getElementById("notation"); }

  // The words this script shows, in the page's language (`#game-words`, rendered by the
  // server); English where the page gave none.
  var WORDS = (function () {
    var block = document.getElementById("game-words");
    try { return block ? JSON.parse(block.textContent) : {}; } catch (e) { return {}; }
  })();

  function words(key, english) { return WORDS[key] || english; }

  // -- the move list --------------------------------------------------------------

  function showCurrentMove() {
    var box = document.getElementById("log-scroll");
    if (!box) { return; }
    var current = box.querySelector("li[aria-current=step]");
    if (!current) {
      // The newest move: the box is reversed, and either scroll sign clamps to its end.
      box.scrollTop = box.scrollHeight;
      return;
    }
    var from = box.getBoundingClientRect();
    var to = current.getBoundingClientRect();
    box.scrollTop += to.top - from.top - (box.clientHeight - to.height) / 2;
  }

  // -- building a move on the board ----------------------------------------------------

  // The steps taken so far: the referee keeps nothing of a half-built move, so
  // each click asks for the board with every step taken, and a refused step
  // (the game moved on) starts the move again.
  var steps = [];
  var building = false;

  function builder() { return document.getElementById("builder"); }

  // `answering`: what the seat answered while it built the steps (the builder's
  // key); when an update changes it (a new card, a new turn), they are dropped.
  function startBuilding(answering) {
    var form = builder();
    if (!form) { steps = []; return; }
    form.hidden = false;
    // A typed move the referee refused stays open in its field, to be put right.
    var asText = root.querySelector("details.as-text");
    if (asText && !asText.dataset.keep) { asText.open = false; }
    if (steps.length && answering !== undefined && answering !== form.dataset.key) {
      steps = [];
      say(words("moved_on", "The game moved on: start your move again."));
    }
    if (steps.length) { loadBoard(false); }
  }

  function loadBoard(focusBoard) {
    var form = builder();
    if (!form || building) { return; }
    building = true;
    var query = steps.map(function (step) { return "step=" + encodeURIComponent(step); }).join("&");
    fetch(form.dataset.build + (query ? "?" + query : ""), {
      credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" }
    })
      .then(function (reply) {
        return reply.json().then(function (body) { return { ok: reply.ok, body: body }; });
      })
      .then(function (answer) {
        building = false;
        if (!answer.ok) {
          steps = [];
          say(answer.body.detail || words("cannot_choose", "That cannot be chosen now."));
          if (answer.body.code === "bad_step") { loadBoard(focusBoard); }
          return;
        }
        showBuilt(answer.body, focusBoard);
      })
      .catch(function () {
        building = false;
        steps.pop();
        say(words("unreachable", "The referee could not be reached: try that again."));
      });
  }

  function say(words) {
    var prompt = document.getElementById("build-prompt");
    if (prompt) { prompt.textContent = words; }
  }

  function showBuilt(built, focusBoard) {
    var figure = document.getElementById("board");
    var form = builder();
    if (!figure || !form) { return; }
    var drawn = new DOMParser().parseFromString(built.svg, "image/svg+xml").documentElement;
    if (drawn.nodeName !== "svg") { return; }
    figure.replaceChildren(document.importNode(drawn, true));
    var notation = built.notation || "";
    document.getElementById("built").value = notation;
    document.getElementById("build-notation").textContent = notation;
    document.getElementById("build-send").disabled = !notation;
    document.getElementById("build-undo").disabled = !steps.length;
    form.dataset.taken = String(steps.length);
    say(built.prompt + (notation ? ": " + notation : "") + ".");
    if (focusBoard) {
      var next = figure.querySelector("[data-step]") || document.getElementById("build-send");
      if (next && !next.disabled) { next.focus(); }
    }
  }

  function choose(target, byKeyboard) {
    if (building) { return; }
    steps.push(target.getAttribute("data-step"));
    loadBoard(byKeyboard);
  }

  root.addEventListener("keydown", function (event) {
    var target = event.target.closest && event.target.closest("#board [data-step]");
    if (target && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      choose(target, true);
    }
  });

  // -- the arrow keys: back and forth through the history ---------------------------------

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    var link = { ArrowLeft: "prev", ArrowRight: "next" }[event.key];
    var place = event.target;
    if (!link || (place.closest && place.closest("input, textarea, select, [data-step]"))) { return; }
    var found = document.getElementById(link);
    if (found) { event.preventDefault(); window.location.assign(found.href); }
  });

  // -- clicks: the board, pieces of a move, notifications --------------------------------

  root.addEventListener("click", function (event) {
    var target = event.target.closest("#board [data-step]");
    if (target) { choose(target, false); }
    if (event.target.closest("#build-undo") && steps.length) {
      steps.pop();
      loadBoard(true);
    }
    var piece = event.target.closest("button.piece");
    var input = field();
    if (piece && input) {
      input.value = input.value ? input.value + " " + piece.value : piece.value;
      input.focus();
    }
    if (event.target.closest("#notify")) { toggleNotifications(); }
  });

  function stored(value) {
    try {
      if (value !== undefined) { window.localStorage.setItem(NOTIFY_KEY, value); }
      return window.localStorage.getItem(NOTIFY_KEY);
    } catch (blocked) {
      return null;
    }
  }

  function notifying() {
    return "Notification" in window && Notification.permission === "granted" && stored() === "on";
  }

  function toggleNotifications() {
    if (notifying()) {
      stored("off");
      showNotifyButton();
      return;
    }
    Notification.requestPermission().then(function (answer) {
      stored(answer === "granted" ? "on" : "off");
      showNotifyButton();
    });
  }

  function showNotifyButton() {
    var button = document.getElementById("notify");
    if (!button || !("Notification" in window) || Notification.permission === "denied") { return; }
    button.textContent = notifying()
      ? words("stop_notifying", "Stop notifying me")
      : words("notify", "Notify me when it is my turn");
    button.setAttribute("aria-pressed", notifying() ? "true" : "false");
    button.hidden = false;
  }

  function tellTurn() {
    if (!notifying() || (document.visibilityState === "visible" && document.hasFocus())) { return; }
    var status = document.getElementById("status");
    var note = new Notification(document.title, {
      body: status ? status.textContent.replace(/\s+/g, " ").trim() : "",
      tag: "referee-" + root.dataset.game
    });
    note.onclick = function () { window.focus(); note.close(); };
  }

  // -- table talk ------------------------------------------------------------------------

  var talkBehind = false;
  var talkFetching = false;
  var talkWait = FIRST_WAIT;

  function talk() { return document.getElementById("talk"); }

  function lastSaid(section) { return Number(section.dataset.last || "0"); }

  // Each message as text nodes only: what a player wrote is never read as markup or a link.
  function messageItem(said, mine) {
    var item = document.createElement("li");
    item.dataset.seq = String(said.seq);
    if (mine) { item.className = "mine"; }
    var who = document.createElement("span");
    who.className = "who";
    var isolated = document.createElement("bdi");
    isolated.textContent = said.name;
    who.appendChild(isolated);
    var when = document.createElement("time");
    when.setAttribute("datetime", said.created_at);
    when.textContent = said.at;
    var text = document.createElement("p");
    text.className = "said";
    text.textContent = said.text;
    item.append(who, " ", when, text);
    return item;
  }

  function showSaid(messages) {
    var section = talk();
    if (!section) { return; }
    var list = document.getElementById("talk-list");
    var last = lastSaid(section);
    messages.forEach(function (said) {
      if (said.seq <= last) { return; }
      list.appendChild(messageItem(said, String(said.seat) === section.dataset.seat));
      last = said.seq;
    });
    section.dataset.last = String(last);
    var empty = document.getElementById("talk-empty");
    if (empty && list.children.length) { empty.hidden = true; }
    var box = document.getElementById("talk-scroll");
    // Reversed like the move list: either scroll sign clamps to the newest message.
    if (box) { box.scrollTop = box.scrollHeight; }
  }

  // New messages, read (and so marked seen) only while the page is in view.
  function catchUp() {
    var section = talk();
    if (!section) { return; }
    if (document.visibilityState !== "visible") { talkBehind = true; return; }
    if (talkFetching) { talkBehind = true; return; }
    talkFetching = true;
    talkBehind = false;
    fetch(section.dataset.messages + "?after=" + lastSaid(section), {
      credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" }
    })
      .then(function (reply) {
        if (!reply.ok) { throw new Error("status " + reply.status); }
        return reply.json();
      })
      .then(function (body) {
        talkFetching = false;
        talkWait = FIRST_WAIT;
        showSaid(body.messages || []);
        if (talkBehind) { catchUp(); }
      })
      .catch(function () {
        // Busy or offline for a moment: messages may have come meanwhile, and no event
        // will tell of them again, so look again after a while.
        talkFetching = false;
        window.setTimeout(catchUp, talkWait);
        talkWait = Math.min(talkWait * 2, LONGEST_WAIT);
      });
  }

  function talkProblem(words) {
    var problem = document.getElementById("talk-problem");
    if (!problem) { return; }
    problem.textContent = words || "";
    problem.hidden = !words;
  }

  function sendSaid(form) {
    var send = document.getElementById("talk-send");
    var text = document.getElementById("talk-text");
    if (!text.value.trim()) { talkProblem(words("write_first", "Write something first.")); return; }
    send.disabled = true;
    fetch(form.action, {
      method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: { Accept: "application/json" }
    })
      .then(function (reply) {
        return reply.json().then(function (body) { return { ok: reply.ok, body: body }; });
      })
      .then(function (answer) {
        send.disabled = false;
        if (!answer.ok) { talkProblem(answer.body.detail || words("not_sent", "The message was not sent.")); return; }
        talkProblem("");
        text.value = "";
        showSaid([answer.body]);
        text.focus();
      })
      .catch(function () {
        send.disabled = false;
        talkProblem(words("talk_unreachable", "The referee could not be reached: your message was not sent. Try again."));
      });
  }

  root.addEventListener("submit", function (event) {
    var form = event.target.closest("#talk-form");
    if (!form || !window.fetch || !window.FormData) { return; }
    event.preventDefault();
    sendSaid(form);
  });

  root.addEventListener("keydown", function (event) {
    // Ctrl+Enter (Cmd+Enter) sends; Enter alone starts a new line.
    if (event.target.id === "talk-text" && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      sendSaid(document.getElementById("talk-form"));
    }
  });

  // -- updating in place ---------------------------------------------------------------

  // What the player is typing survives an update: its text, and the focus and caret.
  function typing() {
    var input = field();
    if (!input || (!input.value && document.activeElement !== input)) { return null; }
    return {
      value: input.value,
      focused: document.activeElement === input,
      start: input.selectionStart,
      end: input.selectionEnd,
      section: input.closest("section")
    };
  }

  function keepTyping(kept) {
    if (!kept) { return; }
    var input = field();
    if (!input) {
      if (!kept.value) { return; }
      // No move can be sent now (the game moved on without this seat): the text stays to copy.
      var log = document.getElementById("log-heading");
      var place = log ? log.closest("section") : null;
      kept.section.querySelectorAll("form.moves").forEach(function (form) { form.remove(); });
      kept.section.querySelectorAll("button").forEach(function (button) { button.disabled = true; });
      var note = document.createElement("p");
      note.className = "notice warn";
      note.textContent = words("typed_too_late", "The game moved on while you typed: this move cannot be sent now.");
      kept.section.appendChild(note);
      root.querySelector(".side").insertBefore(kept.section, place);
      input = field();
    } else {
      input.value = kept.value;
    }
    if (kept.focused) {
      input.focus();
      input.setSelectionRange(kept.start, kept.end);
    }
  }

  function openDetails() {
    var open = {};
    root.querySelectorAll("details").forEach(function (details) {
      open[details.className + "|" + details.querySelector("summary").textContent] = details.open;
    });
    return open;
  }

  function reopen(open) {
    root.querySelectorAll("details").forEach(function (details) {
      var key = details.className + "|" + details.querySelector("summary").textContent;
      if (key in open) { details.open = open[key]; }
    });
  }

  function swap(page) {
    var fresh = page.getElementById("game");
    if (!fresh) { return false; }
    var wasActing = root.dataset.acting === "yes";
    var awaitingRematch = Boolean(document.getElementById("rematch-mine"));
    var answering = builder() ? builder().dataset.key : undefined;
    var kept = typing();
    var open = openDetails();
    var scrolled = window.scrollY;
    // The table talk stays as it is (a message half typed, the scroll): it only gains
    // the messages the fresh page holds beyond it.
    var talking = talk();
    Array.prototype.forEach.call(fresh.attributes, function (attribute) {
      root.setAttribute(attribute.name, attribute.value);
    });
    root.replaceChildren.apply(root, Array.prototype.slice.call(fresh.childNodes));
    var freshTalk = talk();
    if (talking && freshTalk) {
      var newer = [];
      freshTalk.querySelectorAll("#talk-list li").forEach(function (item) {
        if (Number(item.dataset.seq) > lastSaid(talking)) { newer.push(item); }
      });
      freshTalk.replaceWith(talking);
      var list = document.getElementById("talk-list");
      newer.forEach(function (item) { list.appendChild(item); });
      if (newer.length) {
        talking.dataset.last = newer[newer.length - 1].dataset.seq;
        document.getElementById("talk-empty").hidden = true;
      }
    }
    document.title = page.title;
    forgetOldAnswer();
    reopen(open);
    keepTyping(kept);
    window.scrollTo(window.scrollX, scrolled);
    showCurrentMove();
    showNotifyButton();
    if (!wasActing && root.dataset.acting === "yes") { tellTurn(); }
    startBuilding(answering);
    // This seat accepted a rematch and waited: it starts, and the page opens its seat there.
    var rematch = document.getElementById("rematch-open");
    if (awaitingRematch && rematch) { window.location.assign(rematch.href); }
    return true;
  }

  // The referee's answer to a move (`?sub=`) is old news once the next move is played:
  // the page no longer shows it, and the address, reloaded, asks for it no more.
  function forgetOldAnswer() {
    if (document.getElementById("answer") || !/[?&]sub=/.test(window.location.search)) { return; }
    if (window.history && window.history.replaceState) {
      window.history.replaceState(window.history.state, "", root.dataset.page + window.location.hash);
    }
  }

  // The seat's token is an HttpOnly cookie the stream never sees: the stream (a
  // spectator's) only says that the game changed, and the page's own address,
  // fetched with the page's cookies, gives what this browser may see.
  var fetching = false;
  var again = false;
  var refetchWait = FIRST_WAIT;

  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    // A past position stays the one shown: only the history around it grows.
    var answer = /[?&]sub=[0-9a-f]+/.exec(window.location.search);
    var query = root.dataset.at !== undefined ? "at=" + root.dataset.at : answer ? answer[0].slice(1) : "";
    var url = root.dataset.page + (query ? "?" + query : "");
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "text/html" } })
      .then(function (reply) {
        if (!reply.ok) { throw new Error("status " + reply.status); }
        return reply.text();
      })
      .then(function (text) {
        swap(new DOMParser().parseFromString(text, "text/html"));
        refetchWait = FIRST_WAIT;
        done();
      })
      .catch(function () {
        // Busy or offline for a moment: the page is behind, so look again after a while.
        fetching = false;
        window.setTimeout(refresh, refetchWait);
        refetchWait = Math.min(refetchWait * 2, LONGEST_WAIT);
      });
  }

  function done() {
    fetching = false;
    if (again) { again = false; refresh(); }
    if (!watching()) { stop(); }
  }

  // -- following the stream ----------------------------------------------------------

  var source = null;
  var retry = null;
  var wait = FIRST_WAIT;
  var hiddenSince = null;

  function stop() {
    if (source) { source.close(); source = null; }
    if (retry) { window.clearTimeout(retry); retry = null; }
  }

  // A game in play is followed; a seat's page goes on following a finished game for its talk.
  function watching() { return root.dataset.watch === "yes" || root.dataset.talk === "yes"; }

  function follow() {
    stop();
    if (!watching()) { return; }
    // One stream per page: a client may hold only a few (REFEREE_EVENTS_PER_CLIENT).
    source = new EventSource(root.dataset.events);
    source.onmessage = function (event) {
      wait = FIRST_WAIT;
      var change;
      try { change = JSON.parse(event.data); } catch (garbled) { return; }
      // A message of the table talk (told to a seat's stream only): read it, no page.
      if (change.kind === "message") { catchUp(); return; }
      // A finished game's rematch moved on (told to a seat's stream only): who accepted.
      if (change.kind === "rematch") {
        if (change.rematch !== root.dataset.rematch) { refresh(); }
        return;
      }
      // A new stream starts with the game as it is: only a page that is behind fetches.
      if (String(change.version) !== root.dataset.version || (change.status !== "active" && root.dataset.watch === "yes")) {
        refresh();
      }
    };
    // Messages written while the stream was away are read as it opens again.
    source.onopen = function () { if (talk()) { catchUp(); } };
    source.onerror = function () {
      // EventSource reconnects by itself (with Last-Event-ID) after a cut connection,
      // but gives up on an answer that is no stream: a 429, a 503, a proxy's error page.
      if (source && source.readyState === EventSource.CLOSED) { later(); }
    };
  }

  function later() {
    stop();
    var delay = wait * (0.5 + Math.random());
    wait = Math.min(wait * 2, LONGEST_WAIT);
    retry = window.setTimeout(function () { retry = null; follow(); }, delay);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState !== "visible") { hiddenSince = Date.now(); return; }
    var away = hiddenSince === null ? 0 : Date.now() - hiddenSince;
    hiddenSince = null;
    if (talkBehind) { catchUp(); }
    if (watching() && (!source || away > LONG_ABSENCE)) { follow(); }
  });
  window.addEventListener("online", function () {
    if (watching()) { follow(); }
  });
  window.addEventListener("pagehide", stop);
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) { refresh(); follow(); }
  });

  showCurrentMove();
  showNotifyButton();
  startBuilding();
  // A move refused: the caret goes back to its text, once the page has scrolled to it.
  window.addEventListener("load", function () {
    var refused = document.getElementById("message");
    if (refused && refused.closest("#your-move") && field()) { field().focus(); }
  });
  follow();
})();
