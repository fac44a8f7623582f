// The bench page's script: soak.draw, which the charts' option snippets
// (built in Go with go-echarts, after this script) call, and soak.whisker,
// the renderItem of the min–max whiskers drawn over the bars.
(function () {
  "use strict";
  var instances = {};
  window.soak = {
    // whisker draws one whisker: value [path index, min, max, library
    // index, libraries], placed over its bar as echarts lays bars out
    // (barGap and barCategoryGap as the Go side sets them).
    whisker: function (params, api) {
      var x = api.value(0), lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
      var bars = api.barLayout({ count: api.value(4), barGap: "20%", barCategoryGap: "30%" });
      var bar = bars[api.value(3)];
      var cx = lo[0] + bar.offsetCenter, half = Math.max(2, bar.width / 4);
      var style = { stroke: "#222", lineWidth: 1.2 };
      return {
        type: "group",
        children: [
          { type: "line", shape: { x1: cx, y1: lo[1], x2: cx, y2: hi[1] }, style: style },
          { type: "line", shape: { x1: cx - half, y1: lo[1], x2: cx + half, y2: lo[1] }, style: style },
          { type: "line", shape: { x1: cx - half, y1: hi[1], x2: cx + half, y2: hi[1] }, style: style }
        ]
      };
    },
    // draw makes the chart of container chart-ID from its option.
    draw: function (id, option) {
      var el = document.getElementById("chart-" + id);
      if (!el) return;
      var chart = echarts.init(el, null, { renderer: "canvas" });
      chart.setOption(option);
      instances[id] = chart;
    },
    charts: instances // for the browser test and the console
  };
  window.soakCharts = instances;
  window.addEventListener("resize", function () {
    Object.keys(instances).forEach(function (id) { instances[id].resize(); });
  });
})();
