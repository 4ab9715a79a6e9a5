// reelay dashboard: small enhancements over pages that work without them.
"use strict";

(function () {
  // Theme toggle: remembers the choice; the initial theme follows the system.
  var toggle = document.querySelector("[data-theme-toggle]");
  function currentTheme() {
    var t = document.documentElement.getAttribute("data-theme");
    if (t) return t;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function showTheme() {
    var dark = currentTheme() === "dark";
    toggle.setAttribute("aria-pressed", dark ? "true" : "false");
    toggle.textContent = "Dark theme";
  }
  if (toggle) {
    toggle.hidden = false;
    showTheme();
    toggle.addEventListener("click", function () {
      var next = currentTheme() === "dark" ? "light" : "dark";
      document.documentElement.setAttribute("data-theme", next);
      try { localStorage.setItem("reelay-theme", next); } catch (e) {}
      showTheme();
    });
  }

  document.documentElement.classList.add("js");

  // The server shows and reads times in the browser's timezone, which only the browser knows.
  try {
    var tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (tz) document.cookie = "reelay_tz=" + encodeURIComponent(tz) + "; path=/; max-age=31536000; samesite=lax";
  } catch (e) {}

  // Selects that submit their form on change (the project switcher).
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
  });

  // A select that shows only the part of its form for the option chosen (the credentials form):
  // the other parts are hidden and their fields left out of the form.
  document.querySelectorAll("select[data-switch]").forEach(function (sel) {
    var parts = sel.form.querySelectorAll('[data-case="' + sel.dataset.switch + '"]');
    function show() {
      parts.forEach(function (p) {
        var on = p.dataset.value === sel.value;
        p.hidden = !on;
        p.querySelectorAll("input, select, textarea").forEach(function (el) { el.disabled = !on; });
      });
    }
    sel.addEventListener("change", show);
    show();
  });

  // Forms that ask before doing something that cannot be undone.
  document.addEventListener("submit", function (ev) {
    var msg = ev.target.getAttribute && ev.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) ev.preventDefault();
  });

  // Forms that spend AI credits are sent once: a second click while the first is on its way
  // would start (and charge) a second render. Coming back to the page makes them usable again.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (ev.defaultPrevented || !form.hasAttribute || !form.hasAttribute("data-once")) return;
    if (form.dataset.sent) { ev.preventDefault(); return; }
    form.dataset.sent = "1";
    form.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = true; });
  });
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-once]").forEach(function (form) {
      delete form.dataset.sent;
      form.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = false; });
    });
  });

  // Times are written in UTC; show them in the reader's timezone.
  var fmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  window.reelayLocalTimes = function (root) {
    (root || document).querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) { el.title = el.textContent; el.textContent = fmt.format(d); }
    });
  };
  window.reelayLocalTimes();

  // Text lengths the way each platform counts them (the units of the platform registry):
  // graphemes (Bluesky, Mastodon), UTF-16 units (TikTok), code points, or UTF-8 bytes.
  var segmenter = window.Intl && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;
  var encoder = new TextEncoder();
  window.reelayCount = function (text, unit) {
    switch (unit) {
      case "graphemes":
        if (segmenter) { var n = 0; for (var _ of segmenter.segment(text)) n++; return n; }
        return Array.from(text).length;
      case "utf16": return text.length;
      case "characters": return Array.from(text).length;
      case "emoji_bytes": // code points, but an emoji (a cluster with a pictograph or a flag) as its UTF-8 bytes
        var m = 0, parts = segmenter ? Array.from(segmenter.segment(text), function (s) { return s.segment; }) : Array.from(text);
        parts.forEach(function (p) { m += /\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(p) ? encoder.encode(p).length : Array.from(p).length; });
        return m;
      default: return encoder.encode(text).length; // bytes, and any unit not known here
    }
  };
  window.reelayUnitWords = { graphemes: "characters", utf16: "UTF-16 units", characters: "characters", bytes: "bytes", emoji_bytes: "characters" };

  // Counters of fields outside the publish form (which counts its own way, with fallbacks).
  function updateCounter(el) {
    var out = document.getElementById(el.id + "-count");
    if (!out) return;
    var max = parseInt(el.dataset.max, 10), n = window.reelayCount(el.value, el.dataset.unit);
    out.textContent = n + " / " + max + " " + (window.reelayUnitWords[el.dataset.unit] || el.dataset.unit) + (n > max ? " — " + (n - max) + " over" : "");
    out.classList.toggle("over", n > max);
  }
  document.querySelectorAll("[data-max]").forEach(function (el) {
    if (el.closest("#publish-form")) return;
    updateCounter(el);
    el.addEventListener("input", function () { updateCounter(el); });
  });

  document.querySelectorAll("[data-select-on-focus]").forEach(function (el) {
    el.addEventListener("focus", function () { el.select(); });
  });

  // A post's status follows the server's event stream until the post settles.
  var live = document.querySelector("[data-live]");
  if (live && window.EventSource) {
    var es = new EventSource(live.getAttribute("data-live"));
    var update = function (ev) {
      live.innerHTML = ev.data;
      window.reelayLocalTimes(live);
    };
    es.addEventListener("status", update);
    es.addEventListener("settled", function (ev) { update(ev); es.close(); live.removeAttribute("data-live"); });
  }
})();
