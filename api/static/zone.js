// Tells the server this browser's time zone (the `tz` cookie), so pages say times in it
// from the next page on when no signed-in player has chosen one.
(function () {
  "use strict";
  var zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch (e) {
    return;
  }
  // IANA names are letters, digits and _/+-: safe in a cookie as they are.
  if (!zone || !/^[A-Za-z0-9_\/+-]{1,64}$/.test(zone)) return;
  var found = document.cookie.match(/(?:^|;\s*)tz=([^;]*)/);
  var current = found ? found[1] : "";
  if (current === zone) return;
  document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax" +
    (location.protocol === "https:" ? "; Secure" : "");
})();
