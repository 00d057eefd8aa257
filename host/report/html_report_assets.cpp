// SPDX-License-Identifier: Apache-2.0
// The static parts of the HTML report (html_report_assets.hpp). BokehJS and its licence are
// assembled into the library with .incbin from the files cmake/bokehjs.cmake found (nothing is
// vendored into the repository); the renderer and the style are below.
#include "host/report/html_report_assets.hpp"

#include "html_report_assets_config.hpp"

#if TRIALSTAT_HAVE_BOKEHJS
// The hashes make the compiled source differ when the bundle does (ccache, rebuilds).
extern "C" const char trialstat_bokeh_js_hash[] = TRIALSTAT_BOKEH_JS_SHA256 TRIALSTAT_BOKEH_API_JS_SHA256;
__asm__(".section .rodata.trialstat_bokeh,\"a\"\n"
        ".global trialstat_bokeh_js_begin\n"
        "trialstat_bokeh_js_begin:\n"
        ".incbin \"" TRIALSTAT_BOKEH_JS_PATH "\"\n"
        ".byte 10\n"
        ".incbin \"" TRIALSTAT_BOKEH_API_JS_PATH "\"\n"
        ".global trialstat_bokeh_js_end\n"
        "trialstat_bokeh_js_end:\n"
        ".global trialstat_bokeh_license_begin\n"
        "trialstat_bokeh_license_begin:\n"
        ".incbin \"" TRIALSTAT_BOKEH_LICENSE_PATH "\"\n"
        ".global trialstat_bokeh_license_end\n"
        "trialstat_bokeh_license_end:\n"
        ".previous\n");
extern "C" const char trialstat_bokeh_js_begin[], trialstat_bokeh_js_end[];
extern "C" const char trialstat_bokeh_license_begin[], trialstat_bokeh_license_end[];
#endif

namespace trialstat::report::detail {

std::string_view bokeh_js() noexcept {
#if TRIALSTAT_HAVE_BOKEHJS
  return {trialstat_bokeh_js_begin, static_cast<std::size_t>(trialstat_bokeh_js_end - trialstat_bokeh_js_begin)};
#else
  return {};
#endif
}

std::string_view bokeh_license() noexcept {
#if TRIALSTAT_HAVE_BOKEHJS
  return {trialstat_bokeh_license_begin,
          static_cast<std::size_t>(trialstat_bokeh_license_end - trialstat_bokeh_license_begin)};
#else
  return {};
#endif
}

std::string_view bokeh_version() noexcept { return TRIALSTAT_BOKEH_VERSION; }

std::string_view report_css() noexcept {
  return R"CSS(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto;
       max-width: 1320px; padding: 12px 24px; color: #1d1d1f; }
h1 { font-size: 1.5em; margin: 0.4em 0; } h2 { font-size: 1.2em; margin-top: 1.6em;
  border-bottom: 1px solid #ddd; } h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
table { border-collapse: collapse; font-size: 0.88em; margin: 0.4em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f6; }
.status-IssuesFound { color: #b3261e; font-weight: 600; }
.status-NoIssuesFound { color: #1e7b34; font-weight: 600; }
.status-Error { color: #8a4b00; font-weight: 600; }
.muted { color: #666; font-size: 0.9em; }
.tensor-plot { margin: 6px 0 14px; } .tensor-plot .title { font-weight: 600; font-size: 0.92em; }
.tensor-plot .plots { display: flex; flex-wrap: wrap; gap: 4px; }
.heatmap-plot { margin: 6px 0 16px; }
.legend-key span { display: inline-block; margin-right: 14px; }
.swatch { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 4px; }
#report-errors { display: none; background: #fde7e9; color: #b3261e; padding: 8px; }
details pre { white-space: pre-wrap; font-size: 0.8em; }
)CSS";
}

std::string_view report_js() noexcept {
  return R"JS(
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const ndarray = Bokeh.require("core/util/ndarray").ndarray;
  const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"];
  const NONFINITE = "#d62728", FINDING = "#ff7f0e", RECORD_ERROR = "#555555";
  // Plain arrays: BokehJS's glyph methods take typed arrays for something else.
  const num = (a) => a.map((v) => (v === null ? NaN : v));
  const positive = (a) => a.map((v) => (v === null || !(v > 0) ? NaN : v));

  // Runs of consecutive kept points with NaN/±Inf → [first step, last step] intervals.
  function runs(steps, marked) {
    const set = new Set(marked), out = [];
    let start = null, prev = null;
    for (const s of steps) {
      if (set.has(s)) {
        if (start === null) start = s;
        prev = s;
      } else if (start !== null) {
        out.push([start, prev]);
        start = null;
      }
    }
    if (start !== null) out.push([start, prev]);
    return out;
  }

  function figure(title, opts) {
    return Bokeh.Plotting.figure(Object.assign({
      title: title, width: 330, height: 190, tools: "pan,box_zoom,wheel_zoom,reset,save,hover",
      toolbar_location: "right", x_axis_label: "step", min_border_left: 40,
    }, opts || {}));
  }

  function marks(p, t, w) {
    // NaN/±Inf steps (red bands), unreadable records (grey, dotted), the first finding of each
    // rule (orange, dashed; the findings tables list them all).
    for (const [a, b] of runs(w.s, w.nf)) {
      p.add_layout(new Bokeh.BoxAnnotation({ left: a - 0.5, right: b + 0.5, fill_color: NONFINITE,
                                             fill_alpha: 0.12, line_alpha: 0 }));
    }
    if (w.err.length) p.vspan(w.err, { line_color: RECORD_ERROR, line_alpha: 0.6, line_dash: "dotted" });
    if (t.first_findings.length) {
      p.vspan(t.first_findings, { line_color: FINDING, line_width: 2, line_dash: "dashed" });
    }
  }

  function tensorPlots(div, t) {
    const box = div.querySelector(".plots");
    const l2 = figure("l2 (log)", { y_axis_type: "log" });
    const mean = figure("mean \u00b1 std, min/max band");
    const ratio = t.has_ratio ? figure("update ratio (log)", { y_axis_type: "log" }) : null;
    t.workers.forEach((w, i) => {
      const color = COLORS[i % COLORS.length];
      const x = w.s;
      const m = num(w.mean), sd = num(w.std);
      const legend = t.workers.length > 1 ? { legend_label: w.worker } : {};
      const dots = (p, y) => p.scatter({ x: x, y: y, size: 3, color: color });
      l2.line(Object.assign({ x: x, y: positive(w.l2), line_color: color }, legend));
      dots(l2, positive(w.l2));
      mean.varea({ x: x, y1: num(w.min), y2: num(w.max), fill_color: color, fill_alpha: 0.12 });
      mean.varea({ x: x, y1: m.map((v, k) => v - sd[k]), y2: m.map((v, k) => v + sd[k]),
                   fill_color: color, fill_alpha: 0.28 });
      mean.line(Object.assign({ x: x, y: m, line_color: color }, legend));
      dots(mean, m);
      if (ratio) {
        ratio.line(Object.assign({ x: x, y: positive(w.ratio), line_color: color }, legend));
        dots(ratio, positive(w.ratio));
      }
      for (const p of [l2, mean, ratio]) if (p) marks(p, t, w);
    });
    for (const p of [l2, mean, ratio]) {
      if (!p) continue;
      if (t.workers.length > 1) {
        p.legend.location = "top_left";
        p.legend.label_text_font_size = "8pt";
        p.legend.background_fill_alpha = 0.5;
        p.legend.padding = 2;
        p.legend.spacing = 0;
      }
      const d = document.createElement("div");
      d.className = "bk-figure";
      box.appendChild(d);
      Bokeh.Plotting.show(p, d);
    }
  }

  function decode(b64) {
    const s = atob(b64), out = new Float32Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  function heatmap(div, h) {
    const p = figure(h.tensor + " (" + h.worker + ")", {
      width: 900, height: 300, x_axis_label: "step", y_axis_label: "value (log-scale bins)",
      tools: "pan,box_zoom,wheel_zoom,reset,save", x_range: [0, h.cols], y_range: [0, h.rows],
    });
    const palette = ["#ffffff"].concat(Bokeh.Palettes.viridis(255).reverse());
    const mapper = new Bokeh.LinearColorMapper({ palette: palette, low: 0, high: 255 });
    p.image({ image: [ndarray(decode(h.data), { shape: [h.rows, h.cols], dtype: "float32" })],
              x: 0, y: 0, dw: h.cols, dh: h.rows, color_mapper: mapper });
    const xt = [], xl = new Map();
    const every = Math.max(1, Math.ceil(h.cols / 8));
    for (let c = 0; c < h.cols; c += every) { xt.push(c + 0.5); xl.set(c + 0.5, String(h.steps[c])); }
    p.xaxis.ticker = new Bokeh.FixedTicker({ ticks: xt });
    p.xaxis.major_label_overrides = xl;
    const yt = [], yl = new Map();
    const yevery = Math.max(1, Math.ceil(h.rows / 8));
    for (let r = 0; r <= h.rows; r += yevery) { yt.push(r); yl.set(r, h.row_edges[r]); }
    p.yaxis.ticker = new Bokeh.FixedTicker({ ticks: yt });
    p.yaxis.major_label_overrides = yl;
    const cols = h.steps.map((s, c) => c), nf = [], fs = [];
    h.steps.forEach((s, c) => { if (h.nonfinite[c] > 0) nf.push(c); });
    h.finding_columns.forEach((c) => fs.push(c + 0.5));
    for (const [a, b] of runs(cols, nf)) {
      p.add_layout(new Bokeh.BoxAnnotation({ left: a, right: b + 1, fill_color: NONFINITE,
                                             fill_alpha: 0.15, line_alpha: 0 }));
    }
    if (fs.length) p.vspan(fs, { line_color: FINDING, line_width: 2, line_dash: "dashed" });
    const d = document.createElement("div");
    div.appendChild(d);
    Bokeh.Plotting.show(p, d);
  }

  document.querySelectorAll(".tensor-plot").forEach((div) => tensorPlots(div, D.tensors[div.dataset.index]));
  document.querySelectorAll(".heatmap-plot").forEach((div) => heatmap(div, D.heatmaps[div.dataset.index]));
  document.body.dataset.rendered = "true";
})();
)JS";
}

}  // namespace trialstat::report::detail
