// The report's own script: builds one echarts chart per entry of the data
// JSON (id "soak-data"), connects their zoom, and renders the event log.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("soak-data").textContent);
  var start = data.start_ms;
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
  var markerStyle = {
    "reconnect": { symbol: "triangle", color: "#555" },
    "stall": { symbol: "diamond", color: "#e6a700" },
    "fault": { symbol: "pin", color: "#c00" },
    "worker restart": { symbol: "rect", color: "#000" },
    "worker exit": { symbol: "rect", color: "#900" },
    "worker hung": { symbol: "rect", color: "#609" },
    "unrepairable": { symbol: "circle", color: "#f0f" },
    "outage": { symbol: "arrow", color: "#06c" }
  };

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function elapsed(sec) {
    var neg = sec < 0, s = Math.abs(Math.round(sec));
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60);
    return (neg ? "−" : "+") + pad(h) + ":" + pad(m) + ":" + pad(s % 60);
  }
  function utc(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC";
  }
  function fmt(v) {
    if (v === null || v === undefined) return "–";
    var a = Math.abs(v);
    return a >= 100 ? Math.round(v).toLocaleString("en-US") : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }

  var instances = {};
  data.charts.forEach(function (c) {
    var el = document.getElementById("chart-" + c.id);
    if (!el) return;
    var chart = echarts.init(el, null, { renderer: "canvas" });
    var series = c.series.map(function (s, i) {
      return {
        name: s.name, type: "line", showSymbol: false, symbolSize: 3, connectNulls: false,
        step: c.step ? "end" : false, lineStyle: { width: 1.2 }, color: palette[i % palette.length],
        data: s.points.map(function (p) { return [start + p[0] * 1000, p[1]]; })
      };
    });
    if (c.markers) {
      var kinds = [];
      c.markers.forEach(function (m) { if (kinds.indexOf(m.kind) < 0) kinds.push(m.kind); });
      kinds.forEach(function (k) {
        var st = markerStyle[k] || { symbol: "circle", color: "#333" };
        series.push({
          name: k, type: "scatter", symbol: st.symbol, symbolSize: 9, color: st.color, z: 5,
          data: c.markers.filter(function (m) { return m.kind === k; }).map(function (m) {
            return { value: [start + m.x * 1000, m.y], lib: m.lib < 0 ? "run-wide" : data.libs[m.lib], n: m.n };
          }),
          tooltip: {
            trigger: "item", formatter: function (p) {
              return "<b>" + k + "</b> · " + p.data.lib + (p.data.n > 1 ? " · " + p.data.n + " events in this bucket" : "") +
                "<br>" + utc(p.value[0]) + " (" + elapsed((p.value[0] - start) / 1000) + ")";
            }
          }
        });
      });
    }
    chart.setOption({
      animation: false,
      useUTC: true,
      color: palette,
      grid: { left: 64, right: 24, top: 36, bottom: 64 },
      legend: { top: 4, type: "scroll" },
      tooltip: {
        trigger: "axis",
        formatter: function (ps) {
          if (!ps.length) return "";
          var t = ps[0].value[0];
          var lines = [utc(t) + " (" + elapsed((t - start) / 1000) + ")"];
          ps.forEach(function (p) {
            if (p.seriesType === "line") lines.push(p.marker + p.seriesName + ": <b>" + fmt(p.value[1]) + "</b> " + c.unit);
          });
          return lines.join("<br>");
        }
      },
      xAxis: { type: "time", name: "UTC", nameLocation: "end" },
      yAxis: { type: "value", name: c.unit, nameTextStyle: { align: "left" }, scale: c.id !== "reconnects" },
      dataZoom: [{ type: "inside", filterMode: "none" }, { type: "slider", filterMode: "none", height: 20, bottom: 8 }],
      series: series
    });
    chart.group = "soak";
    instances[c.id] = chart;
  });
  echarts.connect("soak");
  window.addEventListener("resize", function () {
    Object.keys(instances).forEach(function (id) { instances[id].resize(); });
  });
  window.soakCharts = instances; // for the browser test and the console

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
