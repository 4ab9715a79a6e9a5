// The publish form: per-platform sections for the chosen channels, counters that count each
// platform's way, a schedule in the user's timezone, a dry-run check, and the upload with a
// progress bar. The form is sent as the API's multipart publish form; the server answers JSON.
"use strict";

(function () {
  var form = document.getElementById("publish-form");
  if (!form) return;
  var errorsBox = document.getElementById("form-errors");

  // ---- counting, the way each platform counts (app.js's reelayCount) ----
  var count = window.reelayCount, unitWords = window.reelayUnitWords;
  var title = document.getElementById("title");
  var caption = document.getElementById("caption");
  function fallbackText(kind) {
    switch (kind) {
      case "title": case "title_or_derived": return title.value;
      case "caption": return caption.value;
      case "caption_or_title": return caption.value || title.value;
    }
    return "";
  }
  function updateCounter(el) {
    var out = document.getElementById(el.id + "-count");
    if (!out) return;
    var own = el.value, text = own, from = "";
    if (!own && el.dataset.fallback) {
      var kind = el.dataset.fallback;
      text = fallbackText(kind);
      if (text) {
        from = " (from the " + (kind === "title" || kind === "title_or_derived" || (!caption.value && kind === "caption_or_title") ? "title" : "caption") + ")";
      } else if (kind === "title_or_derived") {
        // The server makes this one when the title is empty too (the check shows it).
        from = " (left empty: made from the caption's first line, else the video's file name)";
      }
    }
    var max = parseInt(el.dataset.max, 10), n = count(text, el.dataset.unit);
    out.textContent = n + " / " + max + " " + (unitWords[el.dataset.unit] || el.dataset.unit) + from +
      (n > max ? " — " + (n - max) + " over" : "");
    out.classList.toggle("over", n > max);
  }
  var counted = form.querySelectorAll("[data-max]");
  function updateAll() { counted.forEach(updateCounter); }
  form.addEventListener("input", function (ev) {
    if (ev.target === title || ev.target === caption) updateAll();
    else if (ev.target.dataset && ev.target.dataset.max) updateCounter(ev.target);
  });
  updateAll();

  // ---- sections of the platforms of the chosen channels ----
  var channelBoxes = form.querySelectorAll("input[name=channel]");
  function chosenPlatforms() {
    var set = {};
    channelBoxes.forEach(function (b) { if (b.checked) set[b.dataset.platform] = true; });
    return set;
  }
  function showSections() {
    var chosen = chosenPlatforms();
    form.querySelectorAll("[data-section]").forEach(function (s) { s.hidden = !chosen[s.dataset.section]; });
  }
  channelBoxes.forEach(function (b) { b.addEventListener("change", showSections); });
  showSections();

  // ---- schedule in the user's timezone, sent as RFC 3339 with its offset ----
  var tzSelect = document.getElementById("timezone");
  var here = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  var zones = Intl.supportedValuesOf ? Intl.supportedValuesOf("timeZone") : [here];
  if (zones.indexOf("UTC") < 0) zones.push("UTC");
  if (zones.indexOf(here) < 0) zones.push(here);
  zones.forEach(function (z) {
    var o = document.createElement("option");
    o.value = z; o.textContent = z.replace(/_/g, " ");
    if (z === here) o.selected = true;
    tzSelect.appendChild(o);
  });
  var scheduleFields = document.getElementById("schedule-fields");
  form.querySelectorAll("input[name=when]").forEach(function (r) {
    r.addEventListener("change", function () { scheduleFields.hidden = !form.querySelector("input[name=when][value=later]").checked; });
  });
  // offsetMinutes is how far the zone's wall clock is ahead of UTC at instant ms.
  function offsetMinutes(zone, ms) {
    var parts = {};
    new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit" }).formatToParts(new Date(ms)).forEach(function (p) { parts[p.type] = p.value; });
    var wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour % 24, +parts.minute, +parts.second);
    return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60000);
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  // rfc3339 turns "2026-12-01T09:00" on zone's wall clock into "2026-12-01T09:00:00+01:00".
  function rfc3339(local, zone) {
    var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(local);
    if (!m) return "";
    var wall = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]);
    var off = offsetMinutes(zone, wall - offsetMinutes(zone, wall) * 60000);
    var sign = off < 0 ? "-" : "+", a = Math.abs(off);
    return local + ":00" + sign + pad(Math.floor(a / 60)) + ":" + pad(a % 60);
  }
  window.reelayRFC3339 = rfc3339;

  // ---- the request ----
  function formData() {
    var fd = new FormData();
    fd.append("project_id", form.dataset.project);
    var file = document.getElementById("video").files[0];
    var url = document.getElementById("video_url").value.trim();
    if (url) fd.append("video_url", url);
    if (title.value) fd.append("title", title.value);
    if (caption.value) fd.append("caption", caption.value);
    var ids = [];
    channelBoxes.forEach(function (b) { if (b.checked) ids.push(b.value); });
    fd.append("channel_ids", JSON.stringify(ids));
    var chosen = chosenPlatforms(), objects = {};
    form.querySelectorAll("[data-section] [data-key]").forEach(function (el) {
      var p = el.dataset.platform;
      if (!chosen[p] || el.value === "") return;
      objects[p] = objects[p] || {};
      objects[p][el.dataset.key] = el.dataset.type === "boolean" ? el.value === "true" : el.value;
    });
    Object.keys(objects).forEach(function (p) { fd.append(p, JSON.stringify(objects[p])); });
    ["fit", "transcode"].forEach(function (name) {
      var v = document.getElementById(name).value;
      if (v) fd.append(name, v);
    });
    if (form.querySelector("input[name=when][value=later]").checked) {
      var at = document.getElementById("schedule_at").value;
      fd.append("scheduled_for", at ? rfc3339(at, tzSelect.value) : "");
    }
    // The file goes last, so that every check of the other fields has its values when the
    // server reads them while the video streams in.
    if (file) fd.append("video", file, file.name);
    return { body: fd, file: file };
  }

  // ---- errors beside their fields ----
  function clearErrors() {
    errorsBox.hidden = true; errorsBox.textContent = "";
    form.querySelectorAll(".field-error").forEach(function (p) { p.hidden = true; p.textContent = ""; });
    form.querySelectorAll("[aria-invalid]").forEach(function (el) { el.removeAttribute("aria-invalid"); });
  }
  // fieldBox finds where a field's message goes: "channel_ids[0]" is the channel list's.
  function fieldBox(name) {
    var base = name.replace(/\[\d+\]$/, "");
    return form.querySelector('[data-field="' + base + '"]');
  }
  function showErrors(body, status) {
    clearErrors();
    var err = (body && body.error) || { message: "The server answered " + status + "." };
    var fields = err.fields || {}, loose = [], first = null;
    Object.keys(fields).forEach(function (name) {
      var box = fieldBox(name), p = box && box.querySelector(".field-error");
      if (!p || box.closest("[hidden]")) { loose.push(name + ": " + fields[name]); return; }
      p.textContent = (p.textContent ? p.textContent + " " : "") + fields[name];
      p.hidden = false;
      var input = box.querySelector("input, textarea, select");
      if (input) { input.setAttribute("aria-invalid", "true"); first = first || input; }
    });
    var h = document.createElement("p");
    var placed = Object.keys(fields).length - loose.length;
    h.textContent = (placed > 0 && loose.length === 0 ? "Nothing was sent: correct the fields marked below." : err.message) +
      (body && body.request_id ? " (request id " + body.request_id + ")" : "");
    errorsBox.appendChild(h);
    if (loose.length) {
      var ul = document.createElement("ul");
      loose.forEach(function (t) { var li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
      errorsBox.appendChild(ul);
    }
    if (body && body.post_id) {
      var a = document.createElement("a");
      a.href = "/posts/" + body.post_id; a.textContent = "Open the existing post";
      errorsBox.appendChild(a);
    }
    errorsBox.hidden = false;
    errorsBox.focus();
  }

  // ---- sending, with upload progress ----
  var busy = false;
  var progress = document.getElementById("upload-progress"), progressText = document.getElementById("upload-text");
  var uploadBox = document.getElementById("upload"), uploadLabel = document.getElementById("upload-label");
  function send(dryRun) {
    if (busy) return;
    busy = true;
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    var req = formData(), xhr = new XMLHttpRequest();
    xhr.open("POST", "/publish" + (dryRun ? "?dry_run=true" : ""));
    xhr.setRequestHeader("X-CSRF-Token", form.dataset.csrf);
    xhr.setRequestHeader("Accept", "application/json");
    if (!dryRun) xhr.setRequestHeader("Idempotency-Key", form.dataset.key);
    uploadBox.hidden = !req.file;
    uploadLabel.textContent = dryRun ? "Sending the video for the check" : "Uploading";
    progress.value = 0; progressText.textContent = "";
    xhr.upload.addEventListener("progress", function (ev) {
      if (!ev.lengthComputable) return;
      var pct = Math.floor(ev.loaded / ev.total * 100);
      progress.value = pct;
      progressText.textContent = pct + "% of " + (ev.total / 1e6).toFixed(1) + " MB";
    });
    xhr.upload.addEventListener("load", function () { progressText.textContent = "Received; checking…"; });
    xhr.addEventListener("load", function () {
      busy = false;
      form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (e) {}
      if (xhr.status === 401) { window.location = "/signin?next=" + encodeURIComponent("/publish"); return; }
      if (xhr.status >= 400 || !body || !body.success) { uploadBox.hidden = true; showErrors(body, xhr.status); return; }
      clearErrors();
      if (body.dry_run) { uploadBox.hidden = true; showCheck(body); return; }
      window.location = body.location;
    });
    xhr.addEventListener("error", function () {
      busy = false;
      form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      showErrors({ error: { message: "The connection to the server was lost. Nothing may have been published; check the post list before trying again." } }, 0);
    });
    xhr.send(req.body);
  }

  var checkBox = document.getElementById("check-result");
  // derivedWords words the sources the check names for the texts reelay fills in.
  var derivedWords = { title: "the title", caption: "the caption", caption_first_line: "the caption's first line",
    video_file_name: "the video's file name", video_url: "the video link's file name" };
  function showCheck(body) {
    checkBox.textContent = "";
    var h = document.createElement("h2");
    h.textContent = "Check passed: this is what each destination would receive";
    checkBox.appendChild(h);
    if (body.video) {
      var v = document.createElement("p");
      v.className = "muted";
      v.textContent = "Video: " + body.video.content_type + ", " + (body.video.bytes / 1e6).toFixed(1) + " MB" +
        (body.video.duration_seconds ? ", " + body.video.duration_seconds.toFixed(1) + " s" : "") +
        (body.video.width ? ", " + body.video.width + "×" + body.video.height : "");
      checkBox.appendChild(v);
    }
    var dl = document.createElement("dl");
    (body.platforms || []).forEach(function (d) {
      var dt = document.createElement("dt"), dd = document.createElement("dd"), pre = document.createElement("pre");
      dt.textContent = d.platform_name + " · " + d.channel_title;
      pre.textContent = JSON.stringify(d.payload, null, 2);
      dd.appendChild(pre);
      var filled = Object.keys(d.derived || {}).sort().map(function (k) { return k + " from " + (derivedWords[d.derived[k]] || d.derived[k]); });
      if (filled.length) {
        var note = document.createElement("p");
        note.className = "muted derived";
        note.textContent = "Filled in by reelay: " + filled.join("; ") + ".";
        dd.appendChild(note);
      }
      dl.appendChild(dt); dl.appendChild(dd);
    });
    checkBox.appendChild(dl);
    checkBox.hidden = false;
  }

  document.getElementById("check").addEventListener("click", function () { send(true); });
  form.addEventListener("submit", function (ev) { ev.preventDefault(); send(false); });
})();
