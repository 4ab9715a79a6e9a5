// Applies the chosen theme before the page paints (no flash of the other theme). Without a
// choice the page follows the system's prefers-color-scheme through the stylesheet.
(function () {
  try {
    var t = localStorage.getItem("reelay-theme");
    if (t === "light" || t === "dark") document.documentElement.setAttribute("data-theme", t);
  } catch (e) {}
})();
