// The calendar: drag a scheduled post to another day to move it there, at the same time of day
// in the calendar's timezone. Each post's page has a form that does the same without dragging.
"use strict";

(function () {
  var cal = document.getElementById("calendar");
  if (!cal) return;
  var zone = cal.dataset.zone, csrf = cal.dataset.csrf;
  var status = document.getElementById("calendar-status");

  // The page was drawn in the zone the server knew; app.js has just told it the browser's.
  var here = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (here && here !== zone) {
    try {
      if (!sessionStorage.getItem("reelay-tz-reload")) {
        sessionStorage.setItem("reelay-tz-reload", "1");
        location.reload();
        return;
      }
    } catch (e) {}
  }

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? "error-box" : "notice";
    status.hidden = false;
  }

  var dragged = null;
  cal.addEventListener("dragstart", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[data-post][draggable=true]");
    if (!a) return;
    dragged = a;
    ev.dataTransfer.setData("text/plain", a.dataset.post);
    ev.dataTransfer.effectAllowed = "move";
    a.classList.add("dragging");
  });
  cal.addEventListener("dragend", function () {
    if (dragged) dragged.classList.remove("dragging");
    cal.querySelectorAll(".drop").forEach(function (d) { d.classList.remove("drop"); });
  });
  cal.addEventListener("dragover", function (ev) {
    var day = ev.target.closest && ev.target.closest("[data-date]");
    if (!day || !dragged) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = "move";
    cal.querySelectorAll(".drop").forEach(function (d) { if (d !== day) d.classList.remove("drop"); });
    day.classList.add("drop");
  });
  cal.addEventListener("drop", function (ev) {
    var day = ev.target.closest && ev.target.closest("[data-date]");
    if (!day || !dragged) return;
    ev.preventDefault();
    day.classList.remove("drop");
    var entry = dragged;
    dragged = null;
    if (entry.closest("[data-date]") === day) return;
    move(entry, day);
  });

  function move(entry, day) {
    var body = new URLSearchParams({ scheduled_local: day.dataset.date + "T" + entry.dataset.time, timezone: zone });
    fetch("/posts/" + entry.dataset.post + "/reschedule", {
      method: "POST", credentials: "same-origin", body: body,
      headers: { "X-CSRF-Token": csrf, "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded" }
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (b) { return { res: res, body: b }; });
    }).then(function (r) {
      var name = entry.textContent.replace(/\s+/g, " ").trim();
      if (r.res.status === 401) { location = "/signin?next=" + encodeURIComponent(location.pathname + location.search); return; }
      if (!r.res.ok) {
        var e = r.body.error || {}, msg = e.message || ("the server answered " + r.res.status);
        if (e.fields) msg = Object.keys(e.fields).map(function (k) { return e.fields[k]; }).join(" ");
        say("Not moved: " + name + ": " + msg + (r.body.request_id ? " (request id " + r.body.request_id + ")" : ""), true);
        return;
      }
      day.querySelector(".entries").appendChild(entry.parentElement);
      say("Moved " + name + " to " + day.dataset.label + ".");
    }).catch(function () { say("Not moved: the connection to the server was lost.", true); });
  }
})();
