// roofline live sheet: a sweep figure drawn again as SVG for the reader's setup (live.js computes its numbers). Nothing here
// evaluates text or builds markup from strings: every element is made with createElementNS and every text set as text.
"use strict";
(function (root) {
  var SVG = "http://www.w3.org/2000/svg";
  // renderers.plot_draw's palette (Okabe and Ito's, yellow left out) and inks
  var PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];
  var INK = "#1a1a1a", MUTED = "#5a5a5a", SHADE = "#ececec", RULE = "#d9d9d9";
  // a white outline under a label's glyphs: a line or a bar behind it does not cross its text
  var HALO = { stroke: "#ffffff", "stroke-width": 3, "paint-order": "stroke", "stroke-linejoin": "round" };
  var WIDTH = 640, MIN_WIDTH = 300, LEGEND_LEFT = 16, LEFT = 70, RIGHT = 18, PLOT_HEIGHT = 270, FONT = 12, TITLE_FONT = 13;

  // renderers.figure_data.sweep_grid: the x values a sweep draws, from its span widened to show every marked x value
  function grid(lo, hi, log, whole, degrees, marks, points) {
    if (marks.length) {
      var room = log ? 2 : 1.1;
      lo = Math.min(lo, Math.min.apply(null, marks) / room);
      hi = Math.max(hi, Math.max.apply(null, marks) * room);
    }
    if (whole) { lo = Math.max(Math.floor(lo), 1); hi = Math.ceil(hi); }
    var n = points - 1, out = [lo], a = Math.log10(lo), b = Math.log10(hi), i;
    for (i = 1; i < n; i++) { out.push(log ? Math.pow(10, a + (b - a) * i / n) : lo + (hi - lo) * i / n); }
    out.push(hi);
    if (whole) { out = out.map(roundHalfEven); }
    if (degrees) {
      out = marks.slice();
      for (var k = Math.trunc(Math.log2(lo)); k <= Math.trunc(Math.log2(hi)); k++) {
        if (lo <= Math.pow(2, k) && Math.pow(2, k) <= hi) { out.push(Math.pow(2, k)); }
      }
    }
    return distinct(out);
  }

  function roundHalfEven(x) {  // Python's round()
    var r = Math.round(x);
    return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  }

  function distinct(xs) {
    var out = xs.slice().sort(function (p, q) { return p - q; });
    return out.filter(function (x, i) { return i === 0 || x !== out[i - 1]; });
  }

  // --- scales and ticks ---
  function scale(lo, hi, log, from, to) {
    var f = log ? Math.log10 : function (v) { return v; }, a = f(lo), b = f(hi);
    return function (v) { return b === a ? (from + to) / 2 : from + (f(v) - a) / (b - a) * (to - from); };
  }

  // an axis's range: the values' extent, padded as matplotlib pads it (5% of the span, in log space on a log axis)
  function extent(values, log) {
    var vs = values.filter(function (v) { return v !== null && isFinite(v) && (!log || v > 0); });
    if (!vs.length) { return log ? [1, 10] : [0, 1]; }
    var lo = Math.min.apply(null, vs), hi = Math.max.apply(null, vs);
    if (log) {
      var a = Math.log10(lo), b = Math.log10(hi), pad = b > a ? (b - a) * 0.05 : 0.5;
      return [Math.pow(10, a - pad), Math.pow(10, b + pad)];
    }
    if (lo === hi) { return [lo - 1, hi + 1]; }
    var m = (hi - lo) * 0.05;
    return [lo >= 0 && lo - m < 0 ? 0 : lo - m, hi + m];
  }

  function ticks(lo, hi, log) {
    var out = [], k, v;
    if (log) {
      for (k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) {
        [1, 2, 5].forEach(function (m) { v = m * Math.pow(10, k); if (v >= lo && v <= hi) { out.push({ v: v, major: m === 1 }); } });
      }
      var majors = out.filter(function (t) { return t.major; });
      if (majors.length >= 2) { out = majors; }
      while (out.length > 8) { out = out.filter(function (t, i) { return i % 2 === 0; }); }
      return out.map(function (t) { return t.v; });
    }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 5)));
    [2, 5, 10].forEach(function (m) { if ((hi - lo) / step > 7) { step = m * Math.pow(10, Math.floor(Math.log10((hi - lo) / 5))); } });
    for (v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) { out.push(Math.abs(v) < step * 1e-9 ? 0 : v); }
    return out;
  }

  // --- elements ---
  function el(doc, name, attrs, text) {
    var e = doc.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // text broken into lines of at most `chars` characters at spaces
  function wrap(text, chars) {
    var lines = [], line = "";
    text.split(" ").forEach(function (w) {
      if (line && (line + " " + w).length > chars) { lines.push(line); line = w; } else { line = line ? line + " " + w : w; }
    });
    if (line) { lines.push(line); }
    return lines;
  }

  // a label: text, or pieces [text, "" | "sub" | "sup"] set on, below or above the line
  function label(doc, pieces, attrs) {
    var t = el(doc, "text", attrs), shift = 0;
    (typeof pieces === "string" ? [[pieces, ""]] : pieces).forEach(function (p) {
      var want = p[1] === "sub" ? 3 : (p[1] === "sup" ? -5 : 0), span = el(doc, "tspan", { dy: want - shift }, p[0]);
      if (p[1]) { span.setAttribute("font-size", String(FONT - 3)); }
      shift = want;
      t.appendChild(span);
    });
    return t;
  }

  // pieces broken into lines of at most `chars` characters, at the spaces of their text on the line
  function breakLines(pieces, chars) {
    var lines = [[]], length = 0;
    pieces.forEach(function (p) {
      var words = p[1] ? [p[0]] : p[0].split(/(?= )/);
      words.forEach(function (w) {
        var size = w.length * (p[1] ? 0.75 : 1);
        if (length && length + size > chars && !p[1]) { lines.push([]); length = 0; w = w.replace(/^ /, ""); size = w.length; }
        lines[lines.length - 1].push([w, p[1]]);
        length += size;
      });
    });
    return lines;
  }

  function textLength(pieces) {
    return typeof pieces === "string" ? pieces.length : pieces.reduce(function (n, p) { return n + p[0].length * (p[1] ? 0.75 : 1); }, 0);
  }

  function path(points) {
    var d = "", pen = false;
    points.forEach(function (p) {
      if (p === null) { pen = false; return; }
      d += (pen ? " L " : " M ") + p[0].toFixed(2) + " " + p[1].toFixed(2);
      pen = true;
    });
    return d.trim();
  }

  // the width a figure is laid out at: the room it has in CSS pixels, within [MIN_WIDTH, WIDTH]
  function roomOf(f) { return Math.max(MIN_WIDTH, Math.min(WIDTH, f.width || WIDTH)); }

  // the finding broken into the lines the title band holds at width W
  function titleLinesOf(f, W) { return wrap(f.title, Math.floor((W - 24) / (TITLE_FONT * 0.56))); }

  // every figure's frame: the SVG element (its alt text, the house font size), a white ground and the title band
  function frame(doc, f, W, height, titleLines) {
    var svg = el(doc, "svg", { xmlns: SVG, viewBox: "0 0 " + W + " " + height, width: "100%", role: "img", "aria-label": f.alt,
                                 "font-size": FONT, fill: INK, "data-drawn": "live" });
    svg.appendChild(el(doc, "rect", { x: 0, y: 0, width: W, height: height, fill: "#ffffff" }));
    titleLines.forEach(function (line, i) {
      svg.appendChild(el(doc, "text", { x: W / 2, y: 14 + (i + 1) * (TITLE_FONT + 5) - 4, "text-anchor": "middle", "font-size": TITLE_FONT,
                                        "font-weight": "bold" }, line));
    });
    return svg;
  }

  // A sweep (or a roofline, a scatter: curves and points on two axes) as an SVG element. `f`: title, alt, xlabel, ylabel,
  // xlog, ylog, x (values shown), curves [{label, y (shown, null where none), colour and dash (its own, else the palette's
  // next)}], points [{x, y, group (its colour and legend entry), label, note (placed beside it)}], vlines and hlines
  // [{label, value}], overflow {from, to, label} or null, discrete, note, width (the room it has in CSS pixels: the text
  // keeps its size on a phone), `tick` (a y value's text: the number, or the number with its unit where each tick says its
  // own) and `xtick` (an x value's text)
  function draw(doc, f) {
    var W = roomOf(f), plotHeight = Math.min(PLOT_HEIGHT, Math.round(W * 0.62));
    var titleLines = titleLinesOf(f, W), top = 14 + titleLines.length * (TITLE_FONT + 5) + 8;
    var xlabelLines = wrap(f.xlabel, Math.floor((W - LEFT - RIGHT) / (FONT * 0.52)));
    // the legend: one entry per curve (and the shading), flowed into rows, an entry too long for a row broken into lines
    var legend = [], room = W - LEGEND_LEFT - RIGHT, used = 0, rowY = 0, rowLines = 1, charWidth = FONT * 0.52;
    // the points' colours follow the curves' own (a curve drawn in a colour of its own, a roof in ink, takes none)
    var pointsFrom = f.curves.filter(function (c) { return !c.colour; }).length;
    var groups = f.points ? distinct(f.points.map(function (q) { return q.group; })).map(function (g) {
      return { label: f.points.filter(function (q) { return q.group === g; })[0].label, marker: true, colour: PALETTE[(pointsFrom + g) % PALETTE.length] };
    }) : [];
    f.curves.concat(groups, f.overflow ? [{ label: f.overflow.label, shade: true }] : []).forEach(function (c, i) {
      var lines = breakLines(typeof c.label === "string" ? [[c.label, ""]] : c.label, Math.floor((room - 34) / charWidth));
      var width = 34 + Math.max.apply(null, lines.map(textLength)) * charWidth;
      if (used && used + width > room) { rowY += rowLines * (FONT + 4) + 4; used = 0; rowLines = 1; }
      legend.push({ c: c, i: i, x: LEGEND_LEFT + used, y: rowY, lines: lines });
      used += width + 14; rowLines = Math.max(rowLines, lines.length);
    });
    var legendHeight = legend.length ? rowY + rowLines * (FONT + 4) + 4 : 0;
    var plotBottom = top + plotHeight, below = 20 + xlabelLines.length * (FONT + 4);
    var height = plotBottom + below + 16 + legendHeight + (f.note ? FONT + 8 : 0) + 6;
    var svg = frame(doc, f, W, height, titleLines);
    var xs = [f.x[0], f.x[f.x.length - 1]], ally = [];
    if (xs[0] === xs[1]) { xs = f.xlog ? [xs[0] / 2, xs[1] * 2] : [xs[0] - 1, xs[1] + 1]; }
    f.curves.forEach(function (c) { ally = ally.concat(c.y); });
    f.hlines.forEach(function (h) { ally.push(h.value); });
    (f.points || []).forEach(function (q) { ally.push(q.y); });
    var ys = extent(ally, f.ylog), X = scale(xs[0], xs[1], f.xlog, LEFT, W - RIGHT), Y = scale(ys[0], ys[1], f.ylog, plotBottom, top);
    var plot = el(doc, "g", {});
    if (f.overflow) {
      var a = X(Math.max(f.overflow.from, xs[0])), b = X(Math.min(f.overflow.to, xs[1]));
      plot.appendChild(el(doc, "rect", { x: a, y: top, width: Math.max(0, b - a), height: plotHeight, fill: SHADE, "data-overflow": "" }));
    }
    ticks(ys[0], ys[1], f.ylog).forEach(function (v) {
      plot.appendChild(el(doc, "line", { x1: LEFT, x2: W - RIGHT, y1: Y(v), y2: Y(v), stroke: RULE, "stroke-width": 0.6 }));
      svg.appendChild(el(doc, "text", { x: LEFT - 6, y: Y(v) + 4, "text-anchor": "end" }, f.tick(v)));
    });
    (f.discrete ? f.x : ticks(xs[0], xs[1], f.xlog)).forEach(function (v) {
      plot.appendChild(el(doc, "line", { x1: X(v), x2: X(v), y1: top, y2: plotBottom, stroke: RULE, "stroke-width": 0.6 }));
      var edge = X(v) > W - RIGHT - 16 ? "end" : "middle";  // the last tick kept inside the figure
      svg.appendChild(el(doc, "text", { x: edge === "end" ? W - 2 : X(v), y: plotBottom + 16, "text-anchor": edge }, f.xtick(v)));
    });
    svg.appendChild(plot);
    svg.appendChild(el(doc, "rect", { x: LEFT, y: top, width: W - LEFT - RIGHT, height: plotHeight, fill: "none", stroke: INK, "stroke-width": 0.8 }));
    var inside = function (v, r) { return v !== null && isFinite(v) && v >= r[0] && v <= r[1]; }, placed = [], shown = [];
    // the marked values' lines first, then the curves, then the marks' labels on top, each where no line or label is yet
    f.hlines.concat(f.vlines).forEach(function (m, i) {
      var vertical = i >= f.hlines.length;
      if (!inside(m.value, vertical ? xs : ys)) { return; }
      var at = vertical ? X(m.value) : Y(m.value);
      var ends = vertical ? { x1: at, x2: at, y1: top, y2: plotBottom } : { x1: LEFT, x2: W - RIGHT, y1: at, y2: at };
      svg.appendChild(el(doc, "line", Object.assign(ends, { stroke: MUTED, "stroke-dasharray": "5 3", "stroke-width": 1 })));
      placed.push(vertical ? [at - 0.5, top, at + 0.5, plotBottom] : [LEFT, at - 0.5, W - RIGHT, at + 0.5]);
      shown.push({ m: m, at: at, vertical: vertical });
    });
    f.curves.forEach(function (c, i) {
      var colour = c.colour || PALETTE[i % PALETTE.length], pts = f.x.map(function (x, j) { return inside(c.y[j], ys) ? [X(x), Y(c.y[j])] : null; });
      svg.appendChild(el(doc, "path", Object.assign({ d: path(pts), fill: "none", stroke: colour, "stroke-width": 1.8, "data-curve": c.step },
                                                    c.dash ? { "stroke-dasharray": c.dash } : {})));
      if (f.discrete) {
        pts.forEach(function (p) { if (p) { svg.appendChild(el(doc, "circle", { cx: p[0], cy: p[1], r: 3, fill: colour })); } });
      }
    });
    (f.points || []).forEach(function (q) {
      if (!inside(q.x, xs) || !inside(q.y, ys)) { return; }
      var cx = X(q.x), cy = Y(q.y);
      svg.appendChild(el(doc, "circle", { cx: cx, cy: cy, r: 4, fill: PALETTE[(pointsFrom + q.group) % PALETTE.length], stroke: "#ffffff",
                                          "stroke-width": 1, "data-point": q.name }));
      placed.push([cx - 4, cy - 4, cx + 4, cy + 4]);
      if (q.note) { shown.push({ m: { label: q.note, name: q.name }, point: [cx, cy] }); }
    });
    shown.forEach(function (s) {
      var at = s.at, candidates = [], k;
      if (s.point) {
        candidates.push([s.point[0] + 7, s.point[1] + 4, "start"], [s.point[0] - 7, s.point[1] + 4, "end"], [s.point[0] + 5, s.point[1] - 7, "start"],
                        [s.point[0] - 5, s.point[1] - 7, "end"], [s.point[0] + 5, s.point[1] + FONT + 4, "start"], [s.point[0] - 5, s.point[1] + FONT + 4, "end"]);
      } else if (s.vertical) {
        for (k = 0; k < 8; k++) { candidates.push([at + 4, top + 14 + k * (FONT + 4), "start"], [at - 4, top + 14 + k * (FONT + 4), "end"]); }
      } else {
        candidates.push([W - RIGHT - 4, at - 4, "end"], [W - RIGHT - 4, at + FONT + 2, "end"], [LEFT + 4, at - 4, "start"],
                        [LEFT + 4, at + FONT + 2, "start"]);
      }
      var width = textLength(s.m.label) * FONT * 0.55, box = function (c) {
        var x0 = c[2] === "start" ? c[0] : c[0] - width;
        return [x0, c[1] - FONT, x0 + width, c[1] + 3];
      };
      var free = function (c) {
        var b = box(c);
        return b[0] >= LEFT && b[2] <= W - RIGHT && b[1] >= top && b[3] <= plotBottom
          && placed.every(function (q) { return b[2] < q[0] || b[0] > q[2] || b[3] < q[1] || b[1] > q[3]; });
      };
      var spot = candidates.filter(free)[0] || candidates[0];
      placed.push(box(spot));
      svg.appendChild(label(doc, s.m.label, Object.assign({ x: spot[0], y: spot[1], "text-anchor": spot[2], fill: MUTED, "data-mark": s.m.name }, HALO)));
    });
    xlabelLines.forEach(function (line, i) {
      svg.appendChild(el(doc, "text", { x: (LEFT + W - RIGHT) / 2, y: plotBottom + 36 + i * (FONT + 4), "text-anchor": "middle" }, line));
    });
    svg.appendChild(el(doc, "text", { x: 16, y: (top + plotBottom) / 2, "text-anchor": "middle",
                                      transform: "rotate(-90 16 " + (top + plotBottom) / 2 + ")" }, f.ylabel));
    legend.forEach(function (it) {
      var y = plotBottom + below + 22 + it.y;
      svg.appendChild(it.c.shade ? el(doc, "rect", { x: it.x, y: y - 9, width: 26, height: 10, fill: SHADE, stroke: RULE })
        : it.c.marker ? el(doc, "circle", { cx: it.x + 13, cy: y - 4, r: 4, fill: it.c.colour })
        : el(doc, "line", Object.assign({ x1: it.x, x2: it.x + 26, y1: y - 4, y2: y - 4, stroke: it.c.colour || PALETTE[it.i % PALETTE.length],
                                          "stroke-width": 2.2 }, it.c.dash ? { "stroke-dasharray": it.c.dash } : {})));
      it.lines.forEach(function (line, k) { svg.appendChild(label(doc, line, { x: it.x + 32, y: y + k * (FONT + 4) })); });
    });
    if (f.note) { svg.appendChild(el(doc, "text", { x: LEFT, y: height - 8, fill: MUTED }, f.note)); }
    return svg;
  }

  // Bars as an SVG element, one row per bar (renderers.draw_kinds' bars and stacks): each bar its parts stacked from zero, or
  // one part drawn as an arrow from `base` to a dot at its value; its text beside it; the figure's marks as dashed lines
  // across every bar, a bar's own marks as ticks on it; a legend of the parts where there are several. `f`: title, alt,
  // width, rows [{label, parts (shown values, null where the bar has none), text, marks (shown values)}], parts (their
  // names), base (shown, or null), marks [{name, label, value}] (across every bar), rowMarks (the names of a bar's own marks),
  // xlabel, xlog, tick
  // a part's colour past the palette's length: the palette again, lighter
  function shade(k) { return k < PALETTE.length ? 1 : 0.5; }

  function drawBars(doc, f) {
    var W = roomOf(f), charWidth = FONT * 0.52;
    var titleLines = titleLinesOf(f, W), top = 14 + titleLines.length * (TITLE_FONT + 5) + 8 + FONT + 6;
    var longest = Math.max.apply(null, f.rows.map(function (r) { return r.label.length; }));
    // labels beside the bars where they take at most 45% of the width, else above them
    var narrow = 12 + longest * charWidth > W * 0.45, plotLeft = narrow ? LEGEND_LEFT : 12 + longest * charWidth, rowHeight = narrow ? 40 : 26;
    var widest = Math.max.apply(null, f.rows.map(function (r) { return r.text.length; }));
    var keys = (f.parts.length > 1 ? f.parts.map(function (name, i) { return { label: name, colour: PALETTE[i % PALETTE.length] }; }) : [])
      .concat(f.rowMarks.map(function (name) { return { label: name, tick: true }; }));
    var plotBottom = top + f.rows.length * rowHeight + 6, height = plotBottom + 52 + keys.length * (FONT + 6);
    var svg = frame(doc, f, W, height, titleLines);
    // the axis from zero (a linear one), with room left of the lowest value for its text
    var all = f.marks.map(function (m) { return m.value; }).concat(f.base === null || !f.xlog ? [0] : [f.base]);
    f.rows.forEach(function (r) {
      var sum = 0;
      (r.parts || []).forEach(function (v) { sum += v; all.push(f.base === null ? sum : v); });
      all = all.concat(r.marks || []);
    });
    var xs = extent(all, f.xlog), right = W - RIGHT - Math.min(W * 0.3, 12 + widest * charWidth), X = scale(xs[0], xs[1], f.xlog, plotLeft + 48, right);
    ticks(xs[0], xs[1], f.xlog).forEach(function (v) {
      svg.appendChild(el(doc, "line", { x1: X(v), x2: X(v), y1: top, y2: plotBottom, stroke: RULE, "stroke-width": 0.6 }));
      svg.appendChild(el(doc, "text", { x: X(v), y: plotBottom + 16, "text-anchor": "middle" }, f.tick(v)));
    });
    svg.appendChild(el(doc, "line", { x1: X(xs[0]) - 8, x2: right + 8, y1: plotBottom, y2: plotBottom, stroke: INK, "stroke-width": 0.8 }));
    f.marks.forEach(function (m, k) {
      if (m.value === null || !isFinite(m.value)) { return; }
      svg.appendChild(el(doc, "line", { x1: X(m.value), x2: X(m.value), y1: top - 4, y2: plotBottom, stroke: MUTED, "stroke-dasharray": "5 3" }));
      svg.appendChild(label(doc, m.label, { x: X(m.value) + 4, y: top - 8 - k * (FONT + 2), fill: MUTED, "data-mark": m.name }));
    });
    f.rows.forEach(function (r, i) {
      var y = top + i * rowHeight + (narrow ? 30 : rowHeight / 2 + 4), from = f.base === null ? Math.max(xs[0], 0) : f.base, end = from;
      svg.appendChild(el(doc, "text", Object.assign(narrow ? { x: plotLeft, y: y - 16 } : { x: plotLeft - 8, y: y + 4, "text-anchor": "end" }, HALO), r.label));
      if (r.parts === null) {
        svg.appendChild(el(doc, "text", { x: X(from) + 6, y: y + 4, fill: MUTED }, r.text));
        return;
      }
      if (f.base !== null) {
        end = r.parts[0];
        svg.appendChild(el(doc, "line", { x1: X(from), x2: X(end), y1: y, y2: y, stroke: PALETTE[0], "stroke-width": 2, "data-bar": i }));
        svg.appendChild(el(doc, "circle", { cx: X(end), cy: y, r: 4.5, fill: PALETTE[0] }));
      } else {
        r.parts.forEach(function (v, k) {
          var a = X(end), b = X(end + v);
          svg.appendChild(el(doc, "rect", { x: Math.min(a, b), y: y - 7, width: Math.abs(b - a), height: 14, fill: PALETTE[k % PALETTE.length],
                                            "fill-opacity": shade(k), "data-bar": i, "data-part": k }));
          end += v;
        });
      }
      (r.marks || []).forEach(function (v) {
        if (v !== null && isFinite(v)) { svg.appendChild(el(doc, "line", { x1: X(v), x2: X(v), y1: y - 10, y2: y + 10, stroke: INK, "stroke-width": 2 })); }
      });
      var after = end >= from;
      svg.appendChild(el(doc, "text", Object.assign({ x: X(end) + (after ? 9 : -9), y: y + 4, "text-anchor": after ? "start" : "end" }, HALO), r.text));
    });
    svg.appendChild(el(doc, "text", { x: (plotLeft + right) / 2, y: plotBottom + 36, "text-anchor": "middle" }, f.xlabel));
    keys.forEach(function (key, i) {
      var y = plotBottom + 58 + i * (FONT + 6);
      svg.appendChild(key.tick ? el(doc, "line", { x1: LEGEND_LEFT + 6, x2: LEGEND_LEFT + 6, y1: y - 10, y2: y + 2, stroke: INK, "stroke-width": 2 })
        : el(doc, "rect", { x: LEGEND_LEFT, y: y - 9, width: 14, height: 10, fill: key.colour, "fill-opacity": shade(i) }));
      svg.appendChild(el(doc, "text", { x: LEGEND_LEFT + 22, y: y }, key.label));
    });
    return svg;
  }

  // A heat map as an SVG element (renderers.draw_kinds' heat map): a cell per row and column coloured by its value (light
  // to dark blue from the lowest to the highest; grey where it has none), its text in it, the colour bar's words under it.
  // `f`: title, alt, width, columns, rows [{label, cells (values, null where none), texts}], xlabel, ylabel, colorbar
  function drawHeat(doc, f) {
    var W = roomOf(f), charWidth = FONT * 0.52;
    var titleLines = titleLinesOf(f, W), top = 14 + titleLines.length * (TITLE_FONT + 5) + 12;
    var labelWidth = 16 + Math.max.apply(null, f.rows.map(function (r) { return r.label.length; })) * charWidth, left = 24 + labelWidth;
    var cellWidth = (W - RIGHT - left) / f.columns.length, cellHeight = 26, bottom = top + f.rows.length * cellHeight;
    var height = bottom + 62;
    var svg = frame(doc, f, W, height, titleLines);
    var all = [];
    f.rows.forEach(function (r) { r.cells.forEach(function (v) { if (v !== null && isFinite(v)) { all.push(v); } }); });
    var lo = all.length ? Math.min.apply(null, all) : 0, hi = all.length ? Math.max.apply(null, all) : 1;
    var light = [247, 251, 255], dark = [8, 48, 107];
    f.rows.forEach(function (r, i) {
      var y = top + i * cellHeight;
      svg.appendChild(el(doc, "text", { x: left - 8, y: y + cellHeight / 2 + 4, "text-anchor": "end" }, r.label));
      r.cells.forEach(function (v, j) {
        var t = v === null ? null : (hi > lo ? (v - lo) / (hi - lo) : 0.5), x = left + j * cellWidth;
        var rgb = t === null ? [220, 220, 220] : light.map(function (c, k) { return Math.round(c + (dark[k] - c) * t); });
        svg.appendChild(el(doc, "rect", { x: x, y: y, width: cellWidth, height: cellHeight, fill: "rgb(" + rgb.join(",") + ")", stroke: "#ffffff",
                                          "data-cell": i + "," + j }));
        svg.appendChild(el(doc, "text", { x: x + cellWidth / 2, y: y + cellHeight / 2 + 4, "text-anchor": "middle",
                                          fill: t !== null && t > 0.55 ? "#ffffff" : INK, "font-size": FONT - 1 }, r.texts[j]));
      });
    });
    f.columns.forEach(function (c, j) {
      svg.appendChild(el(doc, "text", { x: left + (j + 0.5) * cellWidth, y: bottom + 16, "text-anchor": "middle" }, c));
    });
    svg.appendChild(el(doc, "text", { x: left + (W - RIGHT - left) / 2, y: bottom + 34, "text-anchor": "middle" }, f.xlabel));
    svg.appendChild(el(doc, "text", { x: 14, y: (top + bottom) / 2, "text-anchor": "middle", transform: "rotate(-90 14 " + (top + bottom) / 2 + ")" },
                       f.ylabel));
    svg.appendChild(el(doc, "text", { x: left + (W - RIGHT - left) / 2, y: bottom + 52, "text-anchor": "middle", fill: MUTED }, f.colorbar));
    return svg;
  }

  root.RooflineFigure = { grid: grid, draw: draw, drawBars: drawBars, drawHeat: drawHeat };
}(typeof window !== "undefined" ? window : globalThis));
