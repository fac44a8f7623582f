// The report's own script: the chart formatters and soak.draw, which the
// charts' option snippets (built in Go with go-echarts, after this script)
// call, zoom connected across the charts, and the event log.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("soak-data").textContent);
  var start = data.start_ms;

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function elapsed(sec) {
    var neg = sec < 0, s = Math.abs(Math.round(sec));
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60);
    return (neg ? "−" : "+") + pad(h) + ":" + pad(m) + ":" + pad(s % 60);
  }
  function utc(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC (" + elapsed((ms - start) / 1000) + ")";
  }
  function fmt(v) {
    if (v === null || v === undefined || isNaN(v)) return "–";
    var a = Math.abs(v);
    return a >= 100 ? Math.round(v).toLocaleString("en-US") : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }

  var instances = {};
  window.soak = {
    // axisTip(unit) formats the axis tooltip: the instant, then each line's value.
    axisTip: function (unit) {
      return function (ps) {
        if (!ps.length) return "";
        var lines = [utc(ps[0].axisValue)];
        ps.forEach(function (p) {
          if (p.seriesType === "line") lines.push(p.marker + esc(p.seriesName) + ": <b>" + fmt(p.value[p.encode.y[0]]) + "</b> " + esc(unit));
        });
        return lines.join("<br>");
      };
    },
    // markerTip formats a marker's tooltip: its kind, library and instant.
    markerTip: function (p) {
      return "<b>" + esc(p.seriesName) + "</b> · " + esc(p.name) + "<br>" + utc(p.value[0]);
    },
    // draw makes the chart of container chart-ID from its option.
    draw: function (id, option) {
      var el = document.getElementById("chart-" + id);
      if (!el) return;
      var chart = echarts.init(el, null, { renderer: "canvas" });
      chart.setOption(option);
      chart.group = "soak";
      instances[id] = chart;
    },
    charts: instances // for the browser test and the console
  };
  window.soakCharts = instances;
  echarts.connect("soak");
  window.addEventListener("resize", function () {
    Object.keys(instances).forEach(function (id) { instances[id].resize(); });
  });

  // Event counts (complete) and the event log (capped), with filters.
  var counts = document.getElementById("event-counts");
  if (data.counts.length) {
    var t = "<table class='data'><thead><tr><th>library</th>" +
      data.kinds.map(function (k) { return "<th>" + esc(k) + "</th>"; }).join("") + "</tr></thead><tbody>";
    data.counts.forEach(function (c) {
      t += "<tr><td>" + esc(c.lib) + "</td>" + data.kinds.map(function (k) {
        return "<td class='n'>" + (c.by_kind[k] || 0) + "</td>";
      }).join("") + "</tr>";
    });
    counts.innerHTML = t + "</tbody></table>";
  } else {
    counts.textContent = "No event recorded.";
  }
  var libSel = document.getElementById("ev-lib"), kindSel = document.getElementById("ev-kind");
  var libs = [];
  data.events.rows.forEach(function (r) { if (libs.indexOf(r[1]) < 0) libs.push(r[1]); });
  libs.forEach(function (l) { libSel.add(new Option(l, l)); });
  data.kinds.forEach(function (k) { kindSel.add(new Option(k, k)); });
  document.getElementById("ev-head").innerHTML = "<tr>" +
    data.events.cols.map(function (c) { return "<th>" + esc(c) + "</th>"; }).join("") + "</tr>";
  var maxRows = 2000;
  function renderEvents() {
    var lib = libSel.value, kind = kindSel.value;
    var rows = data.events.rows.filter(function (r) {
      return (!lib || r[1] === lib) && (!kind || r[2] === kind);
    });
    var html = rows.slice(0, maxRows).map(function (r) {
      return "<tr>" + r.map(function (v, i) {
        return "<td" + (i === 0 || i === 4 || i === 6 || i === 7 ? " class='n'" : "") + ">" + esc(String(v)) + "</td>";
      }).join("") + "</tr>";
    }).join("");
    document.getElementById("ev-body").innerHTML = html;
    var note = rows.length + " matching of " + data.events.shown + " listed (" + data.events.total + " recorded)";
    if (rows.length > maxRows) note += "; the first " + maxRows + " shown: narrow with the filters";
    document.getElementById("ev-note").textContent = note;
  }
  libSel.addEventListener("change", renderEvents);
  kindSel.addEventListener("change", renderEvents);
  renderEvents();

  function esc(s) {
    return s.replace(/[&<>"']/g, function (ch) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }[ch];
    });
  }
})();
