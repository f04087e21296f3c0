/* report.js - the HTML report's behaviour (embedded in the file by html.c;
 * no network, no other file): a tooltip with each hit area's note, wheel
 * zoom and drag pan of the charts (a viewBox transform: cairo's SVG stays
 * crisp), the breakdown table sorted by a click on a header, and, when the
 * page is opened as FILE.html#selftest, a scripted hover over the first
 * breakdown bar whose tooltip text goes into the pre element "selftest", then
 * a wheel step in and a click on the table's bytes header, said there too
 * (what the headless Chromium test reads back with --dump-dom). */
(function () {
  "use strict";
  var svg = document.getElementById("view");
  var tip = document.getElementById("tip");
  var box = document.getElementById("chart");
  if (!svg || !tip || !box) return;
  var W = +svg.getAttribute("data-w"), H = +svg.getAttribute("data-h");
  var vb = { x: 0, y: 0, w: W, h: H };

  function apply() { svg.setAttribute("viewBox", vb.x + " " + vb.y + " " + vb.w + " " + vb.h); }

  function show(el, cx, cy) {
    tip.textContent = el.getAttribute("data-note");
    tip.style.display = "block";
    var x = cx + 14, y = cy + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, cx - tip.offsetWidth - 14);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, cy - tip.offsetHeight - 14);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hide() { tip.style.display = "none"; }

  svg.addEventListener("mousemove", function (e) {
    var t = e.target;
    if (t && t.classList && t.classList.contains("hit")) show(t, e.clientX, e.clientY);
    else hide();
  });
  svg.addEventListener("mouseleave", hide);

  /* zoom about the pointer; the picture never shrinks below its size */
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect();
    var px = vb.x + (e.clientX - r.left) / r.width * vb.w;
    var py = vb.y + (e.clientY - r.top) / r.height * vb.h;
    var k = e.deltaY < 0 ? 0.8 : 1.25;
    var nw = Math.min(W, Math.max(W / 64, vb.w * k)), f = nw / vb.w;
    vb.x = px - (px - vb.x) * f;
    vb.y = py - (py - vb.y) * f;
    vb.w = nw;
    vb.h = vb.h * f;
    clamp();
    apply();
  }, { passive: false });

  function clamp() {
    vb.x = Math.min(Math.max(vb.x, 0), W - vb.w);
    vb.y = Math.min(Math.max(vb.y, 0), H - vb.h);
  }

  var drag = null;
  svg.addEventListener("mousedown", function (e) {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, vx: vb.x, vy: vb.y };
    box.classList.add("drag");
    e.preventDefault();
  });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    var r = svg.getBoundingClientRect();
    vb.x = drag.vx - (e.clientX - drag.x) / r.width * vb.w;
    vb.y = drag.vy - (e.clientY - drag.y) / r.height * vb.h;
    clamp();
    apply();
  });
  window.addEventListener("mouseup", function () { drag = null; box.classList.remove("drag"); });
  svg.addEventListener("dblclick", function () { vb = { x: 0, y: 0, w: W, h: H }; apply(); });

  /* the breakdown table: a click on a header sorts by it, again reverses */
  var table = document.getElementById("breakdown");
  if (table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("data-dir") === "1" ? -1 : 1;
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", String(dir));
        var num = th.classList.contains("num"), body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          if (num) return dir * (Number(x) - Number(y));
          return dir * (x < y ? -1 : x > y ? 1 : 0);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  if (location.hash === "#selftest") {
    var out = document.getElementById("selftest"), bar = svg.querySelector('.hit[data-tag="bar"]');
    if (!bar) { out.textContent = "selftest: no bar"; return; }
    bar.scrollIntoView({ block: "center", inline: "center" });
    var r = bar.getBoundingClientRect();
    var cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    /* what a pointer there meets first: the hit area, or what hides it */
    var hitEl = document.elementFromPoint(cx, cy);
    if (hitEl) hitEl.dispatchEvent(new MouseEvent("mousemove", { clientX: cx, clientY: cy, bubbles: true }));
    var said = "selftest: " + (hitEl === bar ? "pointer on the bar" : "pointer not on the bar") +
      ", tooltip " + (tip.style.display === "block" ? "shown" : "hidden") + "\n" + tip.textContent;
    /* then a map's block and a timeline column: the hit areas over pixels */
    ["map-block", "timeline-column"].forEach(function (tag) {
      var el = svg.querySelector('.hit[data-tag="' + tag + '"]');
      if (!el) { said += "\nselftest: no " + tag; return; }
      el.scrollIntoView({ block: "center", inline: "center" });
      var b = el.getBoundingClientRect(), x = b.left + b.width / 2, y = b.top + b.height / 2;
      var at = document.elementFromPoint(x, y);
      if (at) at.dispatchEvent(new MouseEvent("mousemove", { clientX: x, clientY: y, bubbles: true }));
      said += "\nselftest: " + tag + (at === el ? ", pointer on it" : ", pointer not on it") + "\n" + tip.textContent;
    });
    bar.scrollIntoView({ block: "center", inline: "center" });
    /* one wheel step in at the bar, then a click on the bytes header */
    svg.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: cx, clientY: cy, bubbles: true,
                                                cancelable: true }));
    said += "\nzoomed: viewBox width " + svg.getAttribute("viewBox").split(" ")[2];
    if (table) {
      table.tHead.rows[0].cells[3].click();
      said += "\nsorted by bytes, first: " + table.tBodies[0].rows[0].cells[2].textContent;
    }
    out.textContent = said;
  }
})();
