// roofline live sheet: the page's inputs recompute its steps in the browser, from the sheet's numeric plan (plan.js) and the
// data the build wrote into the page (roofline/live.py). Nothing here evaluates text: a field is read as a number and a unit
// looked up in a table; the plan is whitelisted data that plan.js walks.
"use strict";
(function (root) {
  var PLURALS = { token: "tokens", parameter: "parameters" };
  var isMissing = RooflinePlan.isMissing;

  function own(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }

  // Python's round(x, places) on a float: the nearest to x's exact binary value (as toFixed), a tie (an exact binary half,
  // read off x's exact decimal expansion: a double of magnitude at least 2^-10 has at most 62 decimals) to the even neighbour
  function roundPlaces(x, places) {
    if (places <= 0) {
      var unit = Math.pow(10, -places), q = x / unit, r = Math.round(q);
      if (Math.abs(q % 1) === 0.5 && r % 2 !== 0) { r -= 1; }
      return { value: r * unit, text: String(r * unit) };
    }
    var text = x.toFixed(Math.min(100, places));
    var exact = Math.abs(x).toFixed(Math.min(100, places + 70)), tail = exact.slice(exact.indexOf(".") + 1 + places);
    if (/^50*$/.test(tail)) {  // a tie, which toFixed breaks away from zero
      var kept = exact.slice(0, exact.indexOf(".") + 1 + places), last = Number(kept.charAt(kept.length - 1));
      text = last % 2 === 0 ? kept : Math.abs(x).toFixed(places);
      text = (x < 0 ? "-" : "") + text;
    }
    return { value: Number(text), text: text };
  }

  // renderers.numbers.digits: three significant figures (or `figures`), trailing zeros dropped, whole numbers whole,
  // powers of ten outside [1e-3, 1e6)
  // x is a float64 evaluation where Python rounds the double nearest its exact value: read to 15 significant figures first,
  // so a decimal tie the arithmetic's last bits moved (1.835 computed as 1.8350000000000002) rounds as Python's does
  function digits(x, figures) {
    figures = figures || 3;
    if (isFinite(x) && x !== 0) { x = Number(x.toPrecision(15)); }
    if (isFinite(x) && Math.abs(x) < 1e13) {
      var nearest = Math.round(x);
      if (Math.abs(x - nearest) <= 1e-12 * Math.abs(x)) { return { mantissa: String(nearest), exponent: null }; }
    }
    if (x === 0) { return { mantissa: "0", exponent: null }; }
    var whole = Math.round(x);
    if (figures === 3 && whole !== 0 && Math.abs(x - whole) <= 1e-3 * Math.abs(x) && Math.abs(x) < Math.pow(10, figures - 1)) {
      return { mantissa: String(whole), exponent: null };
    }
    var m = Math.abs(x);
    if (m >= 1e-3 && m < 1e6) {
      var places = figures - 1 - Math.floor(Math.log10(m));
      var r = roundPlaces(x, places);
      if (Math.abs(r.value) >= Math.pow(10, figures - places)) { places -= 1; r = roundPlaces(x, places); }
      if (places <= 0) { return { mantissa: String(Math.trunc(r.value)), exponent: null }; }
      return { mantissa: r.text.replace(/0+$/, "").replace(/\.$/, ""), exponent: null };
    }
    var parts = x.toExponential(figures - 1).split("e");
    var mant = parts[0].indexOf(".") >= 0 ? parts[0].replace(/0+$/, "").replace(/\.$/, "") : parts[0];
    return { mantissa: mant, exponent: parseInt(parts[1], 10) };
  }

  function numberText(n) {
    if (n.exponent !== null) { return n.mantissa + "e" + n.exponent; }
    var dot = n.mantissa.indexOf("."), whole = dot < 0 ? n.mantissa : n.mantissa.slice(0, dot), rest = dot < 0 ? "" : n.mantissa.slice(dot);
    var sign = whole.charAt(0) === "-" ? "-" : "", ds = whole.replace("-", "");
    if (ds.length >= 4) { ds = ds.replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
    return sign + ds + rest;
  }

  function isOne(n) { return n.exponent === null && (n.mantissa === "1" || n.mantissa === "-1"); }

  function unitWord(text, n) {
    var slash = text.indexOf("/"), head = slash < 0 ? text : text.slice(0, slash), rest = slash < 0 ? "" : text.slice(slash);
    if (head === "1" && rest) { return rest; }
    if (own(PLURALS, head) && !isOne(n)) { return PLURALS[head] + rest; }
    return text;
  }

  function rung(ladder, v) {
    if (v === 0) { return ladder.zero; }
    var k = Math.floor(Math.log10(Math.abs(v))) - ladder.from;
    return ladder.rungs[Math.max(0, Math.min(ladder.rungs.length - 1, k))];
  }

  function plainText(v, ladder, figures) {
    var r = rung(ladder, v), n = digits(v * r[1], figures);
    return r[0] === "1" ? numberText(n) : numberText(n) + " " + unitWord(r[0], n);
  }

  // renderers.numbers.whole_count
  function wholeCount(rounds, x) {
    var nearest = Math.round(x);
    if (Math.abs(x - nearest) <= 1e-9 * Math.max(1, Math.abs(x))) { return nearest; }
    return rounds === "up" ? Math.ceil(x) : (rounds === "down" ? Math.floor(x) : Math.round(x));
  }

  // numbers.float_whole: the whole number a float stands for up to float noise, or null
  function floatWhole(x) {
    if (!isFinite(x) || Math.abs(x) >= 1e13) { return null; }
    var nearest = Math.round(x);
    return Math.abs(x - nearest) <= 1e-12 * Math.abs(x) ? nearest : null;
  }

  // value_text.is_count: whether a value is the whole number n, up to float noise
  function isCount(n, x) { return x === n || floatWhole(x) === n; }

  // a count's whole number with its noun ('296 sequences'), as every mention but its equation's last line gives it
  function wholeText(v, step, ladder) {
    var n = wholeCount(step.rounds, v), r = rung(ladder, v);
    var noun = r[0] === "1" ? (n === 1 && /s$/.test(step.counts) ? step.counts.slice(0, -1) : step.counts) : "";
    var whole = { mantissa: String(n), exponent: null };
    return numberText(whole) + (r[0] === "1" ? "" : " " + unitWord(r[0], whole)) + (noun ? " " + noun : "");
  }

  // renderers.value_text.count_plain: a value as the sheet's equation ends it; a count whole, with where it comes from
  function valueText(v, step, ladder) {
    if (!step.counts) { return plainText(v, ladder, 3); }
    var r = rung(ladder, v), text = wholeText(v, step, ladder), d = unroundedNumber(v, step, r);
    return d === null ? text : numberText(d) + (r[0] === "1" ? "" : " " + unitWord(r[0], d)) + ", so " + text;
  }

  // renderers.value_text.step_value_text on the site: a value as a sentence gives it, a count whole, a unit readable
  function runningText(data, v, step, ladder) {
    var text = step.counts ? wholeText(v, step, ladder) : plainText(v, ladder, 3);
    data.readable.forEach(function (pair) { text = text.split(pair[0]).join(pair[1]); });
    return text;
  }


  // a step's title inside a sentence: its first letter lower-cased unless the first word is an acronym (MBU, KV, TP)
  function lower(title) { return /^[A-Z][A-Z]/.test(title) ? title : title.charAt(0).toLowerCase() + title.slice(1); }

  // a field's text as a magnitude in its input's unit, or {error}
  function readField(text, inp, data) {
    var m = new RegExp(data.number_pattern).exec(text);
    if (m === null) { return { error: inp.name + ": expected a number" + (inp.bare ? "" : " with its unit") + ", such as " + example(inp) }; }
    var x = Number(m[1].replace(/,/g, "")), unit = (m[2] || "").trim();
    if (unit !== "") {
      if (!own(inp.units, unit)) {
        return { error: inp.name + ": '" + unit + "' is not a unit of " + inp.unit + "; for example: " + Object.keys(inp.units).slice(0, 4).join(", ") };
      }
      x *= inp.units[unit];
    } else if (!inp.bare) {
      return { error: inp.name + ": give a unit (" + inp.unit + "), such as " + example(inp) };
    }
    if (!isFinite(x) || !within(inp, x, data.limits)) { return { error: inp.name + ": expected " + inp.domain_text + ", found " + text.trim() }; }
    return { value: x };
  }

  function example(inp) { return numberText(digits(inp.value, 6)) + (inp.bare ? "" : " " + inp.unit); }

  // derivations.engine.blueprint.within, its bounds (MAX_MAGNITUDE, MAX_COUNT) carried in the data as `limits`
  function within(inp, m, limits) {
    var integer = Math.floor(m) === m, top = limits.magnitude, count = limits.count;
    switch (inp.domain) {
      case "positive": return m > 0 && m <= top;
      case "nonnegative": return m >= 0 && m <= top;
      case "fraction": return m > 0 && m <= 1;
      case "share": return m >= 0 && m <= 1;
      case "count": return integer && m >= 1 && m <= count;
      case "whole": return integer && m >= 0 && m <= count;
      case "at_least_one": return m >= 1 && m <= top;
      default: return false;
    }
  }

  // derivations.engine.run.layout_problem: why tp, dp and ep make no layout of the model, or null
  function layoutProblem(model, experts, tp, dp, ep) {
    var gpus = tp * dp;
    if (experts === null) { return ep !== 1 ? "ep=" + ep + ": " + model + " is a dense model, it has no routed experts to split (ep must be 1)" : null; }
    if (experts % ep) { return "ep=" + ep + " does not divide " + model + "'s " + experts + " routed experts per MoE layer"; }
    if (gpus % ep) {
      return "ep=" + ep + " does not divide the layout's tp x dp = " + tp + " x " + dp + " = " + gpus + " GPUs (each GPU holds " + experts + "/ep whole experts)";
    }
    if (dp > 1 && ep === 1) {
      return "dp=" + dp + " with ep=1: data-parallel attention feeds expert-parallel MoE layers; set ep to a divisor of the " + gpus
        + " GPUs and the " + experts + " experts (DeepSeek-V3's decode: tp=1, dp=ep=128)";
    }
    return null;
  }

  // what the chip, model and formats chosen in `given` bind (the page's where none is chosen), or {error}; a math picked
  // (`--math`) replaces the peaks and the math's own values; `lenient` (a table's or a claim's row): a chip with no peak at
  // that math leaves the peak without a value, as a row's setup has it, rather than refusing
  function bound(data, given, lenient) {
    var sp = data.specs, values = Object.assign({}, data.values);
    if (own(given, "engine") && !own(sp.engines, given.engine)) { return { error: "not a shipped engine profile: " + String(given.engine).slice(0, 40) }; }
    var pick = { hardware: own(given, "hardware") ? given.hardware : sp.chip, model: own(given, "model") ? given.model : sp.model,
                 weights: own(given, "weights") ? given.weights : sp.weights, kv: own(given, "kv") ? given.kv : sp.kv };
    var sc = sp.second, second = sc && own(given, sc.name) && given[sc.name] !== sc.page ? given[sc.name] : null;
    if (second !== null && !own(sc.choices, second)) { return { error: "not a shipped " + sc.label + ": " + String(second).slice(0, 40) }; }
    var math = own(given, "math") && given.math !== sp.math ? given.math : null;
    if (math !== null && !own(sp.maths, math)) { return { error: "not a math precision: " + String(math).slice(0, 40) }; }
    if (pick.hardware === sp.chip && pick.model === sp.model && pick.weights === sp.weights && pick.kv === sp.kv && second === null && math === null) {
      return { values: values, pick: pick };
    }
    var at = [sp.chip_order.indexOf(pick.hardware), sp.model_order.indexOf(pick.model), sp.weight_choices.indexOf(pick.weights), sp.kv_choices.indexOf(pick.kv)];
    if (at.indexOf(-1) >= 0) { return { error: "not a shipped chip, model or format: " + [pick.hardware, pick.model, pick.weights, pick.kv].join(", ").slice(0, 80) }; }
    // a setup refused only for the math its weights default to holds at a math the reader picks
    var usable = function (v) { return Array.isArray(v) ? v : (math !== null && v.values ? v.values : null); };
    var vector = sp.vectors[sp.index[((at[0] * sp.model_order.length + at[1]) * sp.weight_choices.length + at[2]) * sp.kv_choices.length + at[3]]];
    if (usable(vector) === null) { return { error: vector.error }; }
    vector = usable(vector);
    // a second chip or model other than the page's: its values for the group the target and its weights fall in
    var mw = at[1] * sp.weight_choices.length + at[2], choice = second === null ? null : sc.choices[second];
    var twins = !sp.twins.length ? [] : sp.twin_vectors[choice === null ? sp.twin_index[mw] : choice.groups[sc.keys[choice.rule][mw]]];
    if (usable(twins) === null) { return { error: twins.error }; }
    twins = usable(twins);
    [sp.chips[pick.hardware].values, sp.models[pick.model].values].forEach(function (table) { Object.assign(values, table); });
    sp.joint.forEach(function (name, i) { values[name] = vector[i]; });
    sp.twins.forEach(function (name, i) { values[name] = twins[i]; });
    if (math !== null) {  // context.make_context: an explicit math runs the tensor cores (and attention) at it, on both chips
      var peakOf = function (key, names, lead) {
        var chip = sp.chips[key], peak = chip.peaks[math];
        if (typeof peak !== "number" && !lenient) { return lead + chip.name + " lists no dense " + math + " peak; it lists " + chip.listed; }
        var v = typeof peak === "number" ? peak : { missing: true, kind: "n/a", reason: chip.name + " lists no dense " + math + " peak; it lists " + chip.listed };
        names.forEach(function (n) { values[n] = v; });
        return null;
      };
      var secondChip = sp.second && sp.second.name === "second_hardware" && second !== null ? second : sp.second_chip;
      var refused = peakOf(pick.hardware, sp.peaked, "--math " + math + ": ")  // a second chip needs the peak too (api's second chip)
        || (secondChip ? peakOf(secondChip, sp.twin_peaks, "") : null);
      if (refused) { return { error: refused + (refused.indexOf("--math") === 0 ? "; choose one with --math" : "") }; }
      Object.assign(values, sp.maths[math]);
    }
    return { values: values, pick: pick };
  }

  // each input's magnitude in its own unit at `given` (run.input_magnitude): as typed, else the input it follows, else the
  // engine profile's where `given` picks another than the page's, else the serving context, else the page's
  function inputMagnitudes(data, given) {
    var byName = {}, magnitude = {}, sp = data.specs;
    var engine = own(given, "engine") && given.engine !== sp.engine && own(sp.engines, given.engine) ? sp.engines[given.engine].values : {};
    data.inputs.forEach(function (inp) { byName[inp.name] = inp; });
    function value(inp) {
      if (own(magnitude, inp.name)) { return magnitude[inp.name]; }
      var v;
      if (own(given, inp.name)) { v = given[inp.name]; }
      else if (inp.follows && byName[inp.follows]) { v = value(byName[inp.follows]); }
      else if (own(engine, inp.name)) { v = engine[inp.name]; }
      else if (inp.name === "context" && own(given, "output_len") && given.output_len > 0 && byName.prompt_len) {
        v = value(byName.prompt_len) + given.output_len / 2;  // conventions.serving_context: the prompt plus half the output
      } else { v = inp.value; }
      magnitude[inp.name] = v;
      return v;
    }
    data.inputs.forEach(value);
    return magnitude;
  }

  // the values the plan is evaluated at for `given` (input name -> magnitude in its own unit, and any of hardware, model,
  // weights and kv -> a choice; the others as the page has them), or {error} where the choices or the layout make no setup
  function setupValues(data, given, lenient) {
    var setup = bound(data, given, lenient);
    if (setup.error) { return { error: setup.error }; }
    var values = setup.values, magnitude = inputMagnitudes(data, given);
    data.inputs.forEach(function (inp) { values[inp.symbol] = magnitude[inp.name] * inp.factor; });
    var problem = layoutAt(data, values, setup.pick.model);
    return problem === null ? { values: values, pick: setup.pick, magnitude: magnitude } : { error: problem };
  }

  // run.layout_missing: why the layout in `values` is none of the model's (tensor parallelism alone needs no check), or null
  function layoutAt(data, values, model) {
    var layout = data.specs.layout;
    if (layout.indexOf("n_dp") < 0 && layout.indexOf("n_ep") < 0) { return null; }
    var degree = function (s) { return layout.indexOf(s) >= 0 ? values[s] : 1; };
    var m = data.specs.models[model];
    return layoutProblem(m.name, m.experts, degree("n_tp"), degree("n_dp"), degree("n_ep"));
  }

  // a row's setup on top of the reader's (`given`): the row's choices and inputs win, and a row that sets other weights and
  // no math runs at their default math even where the reader picked one (specs.weight_formats.row_formats)
  function onTop(data, given, row) {
    var at = Object.assign({}, given, row), weights = own(given, "weights") ? given.weights : data.specs.weights;
    if (own(row, "weights") && row.weights !== weights && !own(row, "math")) { delete at.math; }
    return at;
  }

  // the steps' values for `given` (as setupValues), or {error} where the sheet refuses the setup
  function compute(data, given, asRow) {
    var setup = setupValues(data, given, asRow);
    if (setup.error) { return { error: setup.error }; }
    var out = RooflinePlan.evaluate(data.plan, setup.values);
    for (var i = 0; i < data.results.length && !asRow; i++) {  // run.solve: a result that does not apply refuses the sheet (not a row)
      var r = out[data.results[i]];
      if (isMissing(r) && r.kind === "n/a") { return { error: r.reason }; }
    }
    return out;
  }

  // renderers.plots' sweeps at `given` (whose steps' values are `values`): for each, the grid (x in its symbol's unit), each
  // drawn step's values over it (null where it has none; every other input as set), the marked values (a count at the whole
  // number the sheet runs) and where the setup stops fitting in memory
  function sweeps(data, given, values) {
    var setup = setupValues(data, given);
    if (setup.error) { return setup; }
    var byName = {};
    data.inputs.forEach(function (inp) { byName[inp.name] = inp; });
    return data.sweeps.map(function (fig) {
      var inp = byName[fig.x], marks = [];
      fig.marks.forEach(function (m) {
        var v = m.input ? setup.magnitude[m.name] * byName[m.name].factor : values[m.name];
        if (isMissing(v) || typeof v !== "number" || !isFinite(v)) { return; }
        if (!m.input && data.steps[m.name].counts) { v = wholeCount(data.steps[m.name].rounds, v); }
        marks.push({ name: m.name, axis: m.axis, symbol: m.symbol, input: m.input, value: v });
      });
      var xs = marks.filter(function (m) { return m.axis === "x"; }).map(function (m) { return m.value; });
      var grid = RooflineFigure.grid(fig.lo, fig.hi, fig.log.indexOf("x") >= 0, fig.whole, fig.degrees, xs, data.grid.points);
      var curves = fig.y.map(function () { return []; });
      grid.forEach(function (x) {
        var at = Object.assign({}, setup.values);
        at[inp.symbol] = x;
        var out = fig.degrees && layoutAt(data, at, setup.pick.model) !== null ? {} : RooflinePlan.evaluate(data.plan, at);
        fig.y.forEach(function (name, k) {
          var v = out[name];
          curves[k].push(typeof v === "number" && isFinite(v) ? v : null);
        });
      });
      var fit = fig.fit ? values[fig.fit] : null, last = grid[grid.length - 1];
      return { name: fig.name, x: grid, y: curves, marks: marks, fit: fig.fit ? (typeof fit === "number" ? fit : "none") : null,
               overflow: typeof fit === "number" && fit < last ? [fit, last] : null };
    });
  }

  // renderers.plots' rooflines at `given` (whose steps' values are `values`): each chip of the sheet's grid (the reader's
  // first, the others where it is one of them) with its peak and bandwidth at the reader's formats, its ridge
  // (primitives.ridge_point: peak over bandwidth) and roof over the x grid (primitives.roofline_time's attainable rate,
  // min(peak, intensity x bandwidth)); each intensity step placed at each batch, in the page's setup and in each row
  function rooflines(data, given, values) {
    var sp = data.specs, first = own(given, "hardware") ? given.hardware : sp.chip;
    return data.rooflines.map(function (fig) {
      var keys = [first].concat(fig.chips.indexOf(first) >= 0 ? fig.chips.filter(function (k) { return k !== first; }) : []);
      var chips = [];
      keys.forEach(function (key) {
        var b = bound(data, Object.assign({}, given, { hardware: key }));
        if (!b.error && typeof b.values.pi === "number" && typeof b.values.beta === "number") {
          chips.push({ key: key, name: sp.chips[key].name, peak: b.values.pi, bandwidth: b.values.beta, ridge: b.values.pi / b.values.beta });
        }
      });
      var found = [];
      [{ given: {}, label: "" }].concat(fig.rows).forEach(function (row) {
        var names = row.label ? fig.row_points : fig.points;
        (fig.batches.length ? fig.batches : [null]).forEach(function (b) {
          var n = null;
          if (b !== null) {
            n = b.step ? values[b.step] : b.value;
            if (typeof n !== "number" || !isFinite(n)) { return; }  // a batch the sheet has no value for here: nothing to place
            if (b.step) { n = Math.max(1, b.down ? Math.floor(n) : Math.ceil(n - 1e-12)); }
          }
          var at = onTop(data, given, row.given);
          if (n !== null) { at.batch = n; }
          var got = row.label || n !== null ? compute(data, at, true) : values;
          if (got.error) { return; }
          names.forEach(function (name) {
            var v = got[name];
            if (typeof v !== "number" || !(v > 0)) { return; }  // a kernel this model does not run
            found.push({ name: name, label: fig.labels[name] + (row.label ? ", " + row.label : ""), x: v, batch: b, n: n });
          });
        });
      });
      var xs = found.map(function (f) { return f.x; }).concat(chips.map(function (c) { return c.ridge; }));
      var lo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, xs) / 2))), hi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, xs) * 8)));
      var grid = RooflineFigure.grid(lo, hi, true, false, false, [], data.grid.points);
      var roof = function (c, x) { return Math.min(c.peak, x * c.bandwidth); };
      var points = [];
      chips.forEach(function (c, k) {
        if (k === 0 || fig.each_chip) {
          found.forEach(function (f) { points.push({ name: f.name, label: f.label, x: f.x, y: roof(c, f.x), roof: k, batch: f.batch, n: f.n }); });
        }
      });
      return { name: fig.name, x: grid, roofs: chips.map(function (c) {
        return { key: c.key, name: c.name, peak: c.peak, ridge: c.ridge, y: grid.map(function (x) { return roof(c, x); }) };
      }), points: points };
    });
  }

  // renderers.plots' bars and stacks at `given` (whose steps' values are `values`): per bar (a stack's rows, each computed on
  // top of the reader's setup as a claim's row is; a bar figure's one row at the reader's values) each part's value (null
  // where it has none), the marked steps' values (a count at the whole number the sheet runs) and whether the row's setup
  // does not fit in memory; a bar figure's base; a bar missing a part has none, with that part's reason
  function bars(data, values, given) {
    var value = function (at, name) {
      var v = at[name], step = data.steps[name];
      return typeof v !== "number" || !isFinite(v) ? null : (step.counts ? wholeCount(step.rounds, v) : v);
    };
    var row = function (fig, at) {
      if (at.error) { return { parts: null, missing: "n/a: " + at.error, marks: [] }; }
      var gone = fig.parts.filter(function (p) { return typeof at[p[1]] !== "number"; })[0];
      var why = gone ? (isMissing(at[gone[1]]) ? at[gone[1]].kind + ": " + at[gone[1]].reason : "no value") : "";
      return { parts: fig.kind === "stack" && gone ? null : fig.parts.map(function (p) { return typeof at[p[1]] === "number" ? at[p[1]] : null; }),
               missing: why, marks: fig.marks.map(function (m) { return value(at, m.name); }),
               over: typeof at[data.fit] === "number" && at[data.fit] > 1 };
    };
    return data.bars.map(function (fig) {
      if (fig.kind === "bars") { return Object.assign({ name: fig.name, base: fig.base ? value(values, fig.base) : null }, row(fig, values)); }
      var rows = fig.rows.length ? fig.rows : [{ given: {}, label: "" }];
      return { name: fig.name, rows: rows.map(function (r) {
        var at = Object.keys(r.given).length ? compute(data, onTop(data, given, r.given), true) : values;
        return Object.assign({ label: r.label }, row(fig, at));
      }) };
    });
  }

  // renderers.plots' heat maps at `given`: for each table row (computed on top of the reader's setup as a claim's row is)
  // each column's value, null where it has none, with the missing value's kind as its text
  function heatmaps(data, values, given) {
    return data.heatmaps.map(function (fig) {
      return { name: fig.name, rows: fig.rows.map(function (r) {
        var at = compute(data, onTop(data, given, r.given), true);
        return { label: r.label, cells: fig.y.map(function (n) { return !at.error && typeof at[n] === "number" ? at[n] : null; }),
                 kinds: fig.y.map(function (n) { return at.error ? "n/a" : (isMissing(at[n]) ? at[n].kind : ""); }) };
      }) };
    });
  }

  // what each `{name}` of the answer's sentences is filled with at `given`: the steps' and the inputs' values as running text
  function fills(data, given, values) {
    var out = {}, magnitude = inputMagnitudes(data, given);
    Object.keys(data.steps).forEach(function (name) {
      var v = values[name], step = data.steps[name];
      if (!isMissing(v)) { out[name] = runningText(data, v, step, data.ladders[step.ladder]); }
    });
    data.inputs.forEach(function (inp) {
      out[inp.name] = runningText(data, magnitude[inp.name] * inp.factor, { counts: "" }, data.ladders[inp.ladder]);
    });
    return out;
  }

  // renderers.plots._title: a figure's finding filled as a figure writes values (three figures, a count whole without its
  // noun, a step with no value by its kind)
  function figureTitle(data, fig, values, magnitude) {
    var byName = {};
    data.inputs.forEach(function (inp) { byName[inp.name] = inp; });
    return fig.title.map(function (part) {
      if (typeof part === "string") { return part; }
      var name = part[0], step = data.steps[name];
      if (own(byName, name)) { return plainText(magnitude[name] * byName[name].factor, data.ladders[byName[name].ladder], 3); }
      var v = values[name];
      if (isMissing(v)) { return v.kind; }
      return plainText(step.counts ? wholeCount(step.rounds, v) : v, data.ladders[step.ladder], 3);
    }).join("");
  }

  function texts(data, given) {
    var values = compute(data, given), out = {};
    if (values.error) { return values; }
    Object.keys(data.steps).forEach(function (name) {
      var v = values[name], step = data.steps[name];
      out[name] = isMissing(v) ? (v.kind === "none" ? "none: " : "n/a: ") + v.reason : valueText(v, step, data.ladders[step.ladder]);
    });
    return out;
  }

  // run._read_claim: each claim read again at the reader's setup (`given`, whose values are `values`), a claim with a row
  // read at that row on top of it; holds is null where a side has no value
  function claimVerdicts(data, values, given) {
    return data.claims.map(function (c) {
      var at = values;
      if (c.where) { at = compute(data, onTop(data, given || {}, c.where.given), true); }
      if (at.error) { return { index: c.index, holds: null, left: "no value (" + at.error + ")", right: "" }; }
      var l = at[c.left], r = c.right ? at[c.right] : c.constant, ladder = data.ladders[data.steps[c.left].ladder];
      var show = function (name) { var v = at[name]; return isMissing(v) ? "no value (" + v.reason + ")" : valueText(v, data.steps[name], data.ladders[data.steps[name].ladder]); };
      var out = { index: c.index, holds: null, left: show(c.left),
                  right: c.right ? show(c.right) : plainText(c.constant * c.right_factor / c.left_factor, ladder, 3) };
      if (isMissing(l) || isMissing(r)) { return out; }
      var lv = l * c.left_factor, rv = r * c.right_factor, slack = c.rel_tol * Math.max(Math.abs(lv), Math.abs(rv));
      out.holds = c.at_least ? lv >= rv - slack : Math.abs(lv - rv) <= slack;
      return out;
    });
  }

  // --- the result tables: renderers.tables' layout, ported ---
  function distinct(xs) { var seen = new Set(), out = []; xs.forEach(function (x) { if (!seen.has(x)) { seen.add(x); out.push(x); } }); return out; }
  function present(v) { return typeof v === "number"; }

  // a rung's factor by its unit's text (a column's one unit is the shown unit of one of its values: a rung of its ladder)
  function factorOf(ladder, unit) {
    var found = ladder.rungs.concat([ladder.zero]).filter(function (r) { return r[0] === unit; })[0];
    return found ? found[1] : NaN;
  }

  // tables._shown_in: a value in its own display unit, or in the column's one unit: {number, unit}
  function shownIn(v, ladder, forced) {
    var r = forced === null ? rung(ladder, v) : [forced, factorOf(ladder, forced)];
    return { number: digits(v * r[1], 3), unit: r[0] };
  }

  // tables._common_unit: one unit for a column whose values would show in several, the one most of them read best in
  function commonUnit(values, ladder) {
    var units = values.map(function (v) { return rung(ladder, v)[0]; }), kinds = distinct(units);
    if (kinds.length <= 1) { return null; }
    var score = function (u) {
      var f = factorOf(ladder, u), inRange = values.filter(function (v) { var m = Math.abs(v * f); return m >= 1 && m < 1000; }).length;
      return [inRange, units.filter(function (x) { return x === u; }).length];
    };
    return kinds.reduce(function (best, u) {
      var a = score(u), b = score(best);
      return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]) ? u : best;
    });
  }

  // tables._cell_text on the site: a dash for no value; a count whole in its own unit (value_text.count_shown); else the
  // value in its display unit or the column's; with its unit where the column's header does not carry one
  function cellText(data, v, column, step, ladder, forced, withUnit) {
    if (!present(v)) { return data.table_rules.no_value; }
    var s;
    if (step.counts && isFinite(v)) {
      var own = rung(ladder, v)[0];
      s = { number: { mantissa: String(wholeCount(step.rounds, v)), exponent: null }, unit: own === column.unit ? own : column.unit_text };
    } else {
      s = shownIn(v, ladder, forced);
    }
    if (!withUnit || s.unit === "1") { return numberText(s.number); }
    var unit = unitWord(s.unit, s.number);
    data.readable.forEach(function (pair) { unit = unit.split(pair[0]).join(pair[1]); });
    return numberText(s.number) + (unit === "1" ? "" : " " + unit);
  }

  function cellKey(v) { return v === null || v === undefined ? "none" : (isMissing(v) ? "missing:" + v.kind : "value:" + String(v)); }

  // tables._depends over the columns `cols`: [a chip column, a model column], each only where some value differs by it
  function depends(rows, cols) {
    var key = function (r) { return cols.map(function (j) { return cellKey(r.cells[j]); }).join("|"); };
    var varies = function (by) {
      var groups = new Map();
      rows.forEach(function (r) {
        var g = r.parts[1 - by];
        if (!groups.has(g)) { groups.set(g, new Set()); }
        groups.get(g).add(key(r));
      });
      return Array.from(groups.values()).some(function (s) { return s.size > 1; });
    };
    var hw = distinct(rows.map(function (r) { return r.parts[0]; })).length > 1 && varies(0);
    return [hw, (distinct(rows.map(function (r) { return r.parts[1]; })).length > 1 && varies(1)) || !hw];
  }

  // tables._table over the columns `cols`: the choices it makes (`key`) and each kept row's cells' texts
  function layTable(data, columns, rowsIn, cols) {
    var named = rowsIn.every(function (r) { return r.parts !== null; }), keepHw = true, keepModel = true;
    var idx = rowsIn.map(function (r, i) { return i; }), overs = rowsIn.map(function (r) { return r.over; });
    if (named) {
      var d = depends(rowsIn, cols);
      keepHw = d[0]; keepModel = d[1];
      if (!(keepHw && keepModel)) {  // a row that stands for several chips (or models) does not fit only if it fits on none
        var keys = rowsIn.map(function (r) { return JSON.stringify([keepHw ? r.parts[0] : "", keepModel ? r.parts[1] : "", r.settings]); });
        idx = idx.filter(function (i) { return keys.indexOf(keys[i]) === i; });
        overs = idx.map(function (i) { return rowsIn.every(function (r, m) { return keys[m] !== keys[i] || r.over; }); });
      }
    }
    var rows = idx.map(function (i) { return rowsIn[i]; }), kept = [], constants = [], units = [], nouns = [], rounded = [];
    cols.forEach(function (j) {
      var c = columns[j], step = data.steps[c.step], ladder = data.ladders[step.ladder];
      var col = rows.map(function (r) { return r.cells[j]; }), values = col.filter(present);
      var forced = step.counts ? null : commonUnit(values, ladder);
      var texts = distinct(values.map(function (v) { return cellText(data, v, c, step, ladder, forced, true); }));
      if (rows.length >= data.table_rules.constant_rows && texts.length === 1 && values.length === col.length) { constants.push([j, texts[0]]); return; }
      kept.push(j);
      var shown = distinct(values.map(function (v) { return shownIn(v, ladder, forced).unit; }));
      units.push(values.length && shown.length === 1 && shown[0] !== "1" ? shownIn(values[0], ladder, forced).unit : null);
      nouns.push(step.counts && shown.length === 1 && shown[0] === "1" ? step.counts : "");
      if (step.counts && values.some(function (v) { return !isCount(wholeCount(step.rounds, v), v); })) { rounded.push(j); }
    });
    var reasons = rows.map(function (r) {
      return [r.why].concat(cols.map(function (j) { var v = r.cells[j]; return isMissing(v) ? v.kind + ": " + v.reason : ""; }));
    });
    var cells = rows.map(function (r) {
      return kept.map(function (j, k) {
        var c = columns[j], step = data.steps[c.step];
        return cellText(data, r.cells[j], c, step, data.ladders[step.ladder], units[k], units[k] === null && !(step.counts && c.unit === "1"));
      });
    });
    // a row that stops (or starts) fitting changes its label only (`fits`), unless a reason under the table names it
    var namedReasons = reasons.some(function (r) { return r.some(function (x) { return x; }); });
    return { key: [named, keepHw, keepModel, idx, constants, kept, units, nouns, rounded, namedReasons ? overs : [], reasons], cells: cells, fits: overs,
             headers: named ? (keepHw ? 1 : 0) + (keepModel ? 1 : 0) : 1,
             groups: rows.map(function (r, k) { return [r.chip, r.group + (overs[k] ? " (does not fit)" : "")]; }) };
  }

  // tables._pivot: a one-column table of (chip, model) rows as a grid, one row per model, one column per chip
  function pivot(data, t) {
    var chips = distinct(t.groups.map(function (g) { return g[0]; })), models = distinct(t.groups.map(function (g) { return g[1]; }));
    var cell = new Map();
    t.groups.forEach(function (g, k) { cell.set(JSON.stringify(g), t.cells[k][0]); });
    return { key: ["grid", t.key, chips, models], fits: null, cells: models.map(function (m) {
      return chips.map(function (c) { var k = JSON.stringify([c, m]); return cell.has(k) ? cell.get(k) : data.table_rules.no_value; });
    }) };
  }

  // tables.table_items: a table over chips and models as read (the columns a chip changes as a grid of models against chips
  // where there is one such column)
  function tableItems(data, columns, rows) {
    var all = columns.map(function (c, j) { return j; });
    var named = rows.every(function (r) { return r.parts !== null; });
    if (!named || distinct(rows.map(function (r) { return r.parts[0]; })).length < 2) { return [layTable(data, columns, rows, all)]; }
    var byChip = all.filter(function (j) { return depends(rows, [j])[0]; });
    if (!byChip.length || (byChip.length === all.length && byChip.length > 1)) { return [layTable(data, columns, rows, all)]; }
    var others = all.filter(function (j) { return byChip.indexOf(j) < 0; });
    var out = others.length ? [layTable(data, columns, rows, others)] : [], chipTable = layTable(data, columns, rows, byChip);
    var models = distinct(rows.map(function (r) { return r.parts[1]; }));
    out.push(byChip.length === 1 && models.length > 1 && chipTable.headers === 2 ? pivot(data, chipTable) : chipTable);
    return out;
  }

  // the result tables at `given` as renderers.tables lays them out, each row computed on top of the reader's setup as a
  // claim's row is (run._solve_table: a row the sheet refuses has no values, and its refusal as its reason): for each of
  // data.tables, null where the page cannot compute it, else {key: every choice the layout made, as text, items: each
  // printed table's cells' texts, row by row}
  function tables(data, given) {
    return data.tables.map(function (t) {
      if (t === null) { return null; }
      var rows = t.rows.map(function (r) {
        var at = compute(data, onTop(data, given, r.given), true);
        if (at.error) { return { cells: t.columns.map(function () { return null; }), why: at.error, parts: null, over: false, settings: r.settings }; }
        return { cells: t.columns.map(function (c) { return at[c.step]; }), why: "", parts: r.parts, chip: r.chip, group: r.group,
                 settings: r.settings, over: !!data.fit && typeof at[data.fit] === "number" && at[data.fit] > 1 };
      });
      var items = tableItems(data, t.columns, rows);
      return { key: JSON.stringify(items.map(function (x) { return x.key; })), items: items.map(function (x) { return x.cells; }),
               fits: items.map(function (x) { return x.fits; }) };
    });
  }

  // the scatters that stay as drawn at `given`: every row's two steps and the figure's other steps (its lines, its finding)
  // the same as at the page's inputs, each row at its own setup on top of the reader's (live._scatters)
  function keptScatters(data, given) {
    var out = {}, here = compute(data, given, true), page = compute(data, {}, true);
    var same = function (a, b) { return a === b || (isMissing(a) && isMissing(b) && a.kind === b.kind && a.reason === b.reason); };
    data.scatters.forEach(function (sc) {
      var t = data.tables[sc.table];
      if (t === null || here.error || page.error) { return; }
      var kept = sc.steps.every(function (n) { return same(here[n], page[n]); }) && t.rows.every(function (r) {
        var a = compute(data, onTop(data, given, r.given), true), b = compute(data, onTop(data, {}, r.given), true);
        return a.error ? b.error === a.error : !b.error && same(a[sc.x], b[sc.x]) && same(a[sc.y], b[sc.y]);
      });
      if (kept) { out[sc.name] = true; }
    });
    return out;
  }

  // --- a step's displayed equation at the reader's setup: renderers.equations.equation and renderers.printed, ported ---------

  // printed.fill: a printed formula's pieces with each slot filled from `names` (a slot with no name: the line is not printed)
  function fillPieces(pieces, names) {
    return pieces.map(function (p) {
      if (typeof p === "string") { return p; }
      if (!own(names, p[1])) { throw new Error("no value for " + p[1]); }
      var v = names[p[1]];
      if (p[0] === "s") { return v; }
      if (p[0] === "p") {  // printed._power: a number with its unit in brackets
        return / |\\qty|\\mathrm/.test(v) ? "\\left(" + v + "\\right)^{" + p[2] + "}" : parenthesizeSuper(v) + "^{" + p[2] + "}";
      }
      if (p[0] === "e") { return v.replace(/\\,\\mathrm\{(?:[^{}]|\{[^{}]*\})*\}$/, ""); }  // printed.bare
      return parenthesizeSuper(v);
    }).join("");
  }

  function parenthesizeSuper(s) { return s.indexOf("^") >= 0 ? "\\left(" + s + "\\right)" : s; }

  // printed.math_width: about how many characters wide a line of LaTeX sets
  function mathWidth(text, rules) { return widthFrom(text, 0, rules); }

  function braced(text, i) {
    if (text.charAt(i) === "{") {
      for (var depth = 0, j = i; j < text.length; j++) {
        depth += text.charAt(j) === "{" ? 1 : (text.charAt(j) === "}" ? -1 : 0);
        if (depth === 0) { return [text.slice(i + 1, j), j + 1]; }
      }
      return [text.slice(i + 1), text.length];
    }
    return [text.slice(i, i + 1), i + 1];
  }

  function widthFrom(text, i, rules) {
    var w = 0, a, b;
    while (i < text.length) {
      var ch = text.charAt(i);
      if (ch === "\\") {
        var m = /^\\([A-Za-z]+|.)/.exec(text.slice(i)), name = m ? m[1] : "";
        i += name.length + 1;
        if (rules.wide.indexOf(name) >= 0) {
          a = braced(text, i); b = braced(text, a[1]); i = b[1];
          w += Math.max(mathWidth(a[0], rules), mathWidth(b[0], rules));
        } else if (rules.worded.indexOf(name) >= 0) {
          a = braced(text, i); i = a[1];
          w += 0.85 * a[0].split("\\,").join("").split("{,}").join(",").length;
        } else if (rules.operators.indexOf(name) >= 0) {
          w += 2;  // a binary operator or relation with its spacing
        } else if (rules.zero.indexOf(name) < 0) {
          w += 1;
        }
      } else if (ch === "_" || ch === "^") {
        a = braced(text, i + 1); i = a[1];
        w += 0.7 * mathWidth(a[0], rules);
      } else if ("{}& ".indexOf(ch) >= 0) {
        i += 1;
      } else {
        w += "+-=<>".indexOf(ch) >= 0 ? 2 : 1;
        i += 1;
      }
    }
    return w;
  }

  // printed.Printed.lines: one line, or a long sum a term a line and a wide case split a case a line; the terms that are
  // zero where the symbols in `zero` are left out
  function printedLines(p, names, width, zero, rules) {
    var terms = p.terms, whole;
    var kept = zero.length && p.zeros.length ? terms.filter(function (t, k) {
      return !p.zeros[k].some(function (a) { return a.every(function (x) { return zero.indexOf(x) >= 0; }); });
    }) : terms;
    if (kept.length && kept.length < terms.length) {
      var first = kept[0], lead = first.length && typeof first[0] === "string" ? first[0] : "";
      if (lead.indexOf("+ ") === 0) { first = [lead.slice(2)].concat(first.slice(1)); }  // the first term kept loses its plus
      terms = [first].concat(kept.slice(1));
      whole = terms.map(function (t) { return fillPieces(t, names); }).join(" ");
    } else {
      whole = p.whole === null ? null : fillPieces(p.whole, names);  // null: a case split too wide for a line whatever fills it
    }
    if (p.cases.length && (whole === null || mathWidth(whole, rules) > width)) { return caseLines(p.cases, names, width, rules); }
    if (!terms.length || mathWidth(whole, rules) <= width) { return [whole]; }
    var out = [], current = "";
    terms.forEach(function (term) {
      var piece = fillPieces(term, names);
      if (current && mathWidth(current + piece, rules) > width) { out.push(current); current = piece; }
      else { current = current ? current + " " + piece : piece; }
    });
    out.push(current);
    return out;
  }

  // printed._case_lines: a case a line, its condition on the next; a case too wide counted in its place
  function caseLines(cases, names, width, rules) {
    var lines = [], leftOut = 0;
    function flush() {
      if (!leftOut) { return; }
      var more = leftOut === 1 ? "one more case" : leftOut + " more cases";
      lines.push("\\text{" + (lines.length ? "or " : "") + more + " (too wide to print; the JSON holds the closed form)}");
      leftOut = 0;
    }
    cases.forEach(function (c) {
      if (c === null) { leftOut += 1; return; }  // too wide whatever fills it (live._printed_json)
      var shown = fillPieces(c[0], names), when = fillPieces(c[1], names);
      if (mathWidth(shown, rules) > width || mathWidth(when, rules) > width) { leftOut += 1; return; }
      flush();
      lines.push((lines.length ? "\\text{or } " : "") + shown, "\\qquad " + when);
    });
    flush();
    return lines;
  }

  // equations.whole_roundings: the ceiling or floor of a whole number is that number, of a fraction that divides, the fraction
  var WHOLE_NUMBER = "-?\\d+(?:(?:\\{,\\}|,)\\d{3})*";
  var ROUNDED_WHOLE = new RegExp("\\\\left\\\\l(ceil|floor)\\{(" + WHOLE_NUMBER + ")\\}\\\\right\\\\r\\1", "g");
  var ROUNDED_FRACTION = new RegExp("\\\\left\\\\l(ceil|floor)\\{\\\\frac\\{(" + WHOLE_NUMBER + ")\\}\\{(" + WHOLE_NUMBER + ")\\}\\}\\\\right\\\\r\\1", "g");

  function wholeRoundings(line) {
    var whole = function (x) { return BigInt(x.replace(/\D/g, "")) * (x.charAt(0) === "-" ? BigInt(-1) : BigInt(1)); };
    return line.replace(ROUNDED_FRACTION, function (all, kind, p, q) {
      var a = whole(p), b = whole(q);
      return b !== BigInt(0) && a % b === BigInt(0) ? "\\frac{" + p + "}{" + q + "}" : all;
    }).replace(ROUNDED_WHOLE, function (all, kind, n) { return n; });
  }

  // unitfmt.mathrm and targets._md_quantity: a number with its unit as the site's math prints it
  function unitLatex(text, plural) {
    var slash = text.indexOf("/"), head = slash < 0 ? text : text.slice(0, slash), rest = slash < 0 ? "" : text.slice(slash);
    if (plural && own(PLURALS, head)) { text = PLURALS[head] + rest; }
    if (text === "1") { return ""; }
    if (head === "1" && rest) { text = rest; }
    return "\\mathrm{" + text.split("*").join("\\cdot ").split("\u00b5").join("\\mu ").split("%").join("\\%") + "}";
  }

  function quantityLatex(n, unit) {
    var number = n.exponent === null ? numberText(n).split(",").join("{,}") : n.mantissa + " \\times 10^{" + n.exponent + "}";
    var u = unitLatex(unit, !isOne(n));
    return number + (u ? "\\," + u : "");
  }

  // value_text.unrounded: a count that is not whole to as many figures as show it is not (null for a whole count)
  function unroundedNumber(v, step, r) {
    if (isCount(wholeCount(step.rounds, v), v)) { return null; }
    var size = String(Math.trunc(Math.abs(v))).length;
    for (var f = Math.max(4, size + 1); f <= Math.max(12, size + 6); f++) {
      var d = digits(v * r[1], f);
      if (d.exponent !== null) {  // a million or more: in full, its decimals after it
        var x = v * r[1], t = null;
        for (var k = 1; k <= 6 && t === null; k++) { var s = x.toFixed(k); if (!/\.0*$/.test(s)) { t = s; } }
        return { mantissa: t === null ? x.toFixed(7) : t, exponent: null };
      }
      if (d.mantissa.indexOf(".") >= 0) { return d; }
    }
    return digits(v * r[1], Math.max(12, size + 6));
  }

  // equations.result_math: the value as the equation's last line (a count that is not whole: "295.3, so 296 sequences")
  function resultLatex(v, step, ladder, unit) {
    var r = rung(ladder, v), fraction = step.counts ? unroundedNumber(v, step, r) : null;
    if (fraction === null) { return quantityLatex(digits(v * r[1], 3), r[0]); }
    var n = wholeCount(step.rounds, v), count = { mantissa: String(n), exponent: null };
    var noun = unit !== "1" ? "" : (n === 1 && /s$/.test(step.counts) ? step.counts.slice(0, -1) : step.counts);
    return quantityLatex(fraction, r[0]) + ",\\ \\text{so}\\ " + quantityLatex(count, r[0] === unit ? r[0] : unit)
      + (noun ? "\\ \\text{" + noun + "}" : "");
  }

  // forms.at_latex: an At step as its head and its replacements filled
  function atLatex(e, names) {
    var subs = e.at_where.map(function (w) { return w[0] + " = " + fillPieces(w[1].whole, names); }).join(",\\ ");
    return e.at_head + (subs ? "\\big|_{" + subs + "}" : "");
  }

  // renderers.equations.equation: a step's rows at the values `ops` (every operand's and its own): the formula's lines, the
  // numbers line's (null where this setup needs a special numbers line the page does not carry) and the result's LaTeX
  function equationRows(data, name, ops) {
    var e = data.equations.steps[name], rules = data.equation_rules, step = data.steps[name], v = ops[name];
    var names = {}, numbers = {}, zeros = [], ones = [];
    e.operands.forEach(function (n) {
      var op = data.equations.symbols[n], x = ops[n];
      names[n] = op.latex;
      if (!present(x)) { numbers[n] = op.latex; return; }
      var r = rung(data.ladders[op.ladder], x);
      var more = e.rounded.indexOf(n) >= 0 && floatWhole(x) === null;  // equations._operand_shown: more figures inside a rounding
      numbers[n] = quantityLatex(digits(x * r[1], more ? rules.rounding_figures : 3), r[0]);
      if (x === 0) { zeros.push(n); }
      if (x === 1 && op.plain && rules.ones.indexOf(n) >= 0) { ones.push(n); }
    });
    var formula;
    if (e.at) {
      formula = [atLatex(e, names)];
    } else if (Array.isArray(e.formula)) {  // lines no zero changes, as printed
      formula = e.formula.slice();
    } else {  // equations.equation_lines
      formula = printedLines(e.formula, {}, rules.line, zeros, rules);
      if (formula.length === 1 && mathWidth(formula[0], rules) > rules.max) { formula = [rules.too_wide]; }
    }
    if (!present(v)) { return { formula: formula, numbers: [], result: null }; }
    var result = resultLatex(v, step, data.ladders[step.ladder], e.unit);
    var form = e.numbers;
    if ((zeros.length || ones.length) && !e.at) {
      var key = "0:" + zeros.slice().sort().join(",") + "|1:" + ones.slice().sort().join(",");
      if (!own(e.special, key)) { return { formula: formula, numbers: null, result: result }; }
      form = e.special[key];
    }
    // live._numbers_form: no symbol (no numbers line), the one case of a split with a value, or the whole printed form
    var lines = [];
    if (e.at) { lines = [atLatex(e, numbers)]; }
    else if (form.case) { lines = [fillPieces(form.case, numbers)]; }
    else if (!form.none && !(e.formula_cases && formula.length > 1)) { lines = printedLines(form, numbers, rules.line, [], rules); }
    lines = lines.map(wholeRoundings);
    var fits = lines.every(function (l) { return mathWidth(l, rules) <= rules.max; });
    var shown = lines.length && fits && lines[0] !== result && !(formula.length === 1 && lines[0] === formula[0]) && lines.length <= 4;
    return { formula: formula, numbers: shown ? lines : [], result: result };
  }

  // every step's values and the values its setup binds (the operands a numbers line prints), or {error}
  function operandValues(data, given) {
    var setup = setupValues(data, given);
    if (setup.error) { return setup; }
    return Object.assign({}, setup.values, RooflinePlan.evaluate(data.plan, setup.values));
  }

  // the equations of every step the page prints, at `given`: name -> equationRows, or null where a line cannot be made
  function equations(data, given) {
    var ops = operandValues(data, given), out = {};
    if (ops.error) { return ops; }
    Object.keys(data.equations.steps).forEach(function (name) {
      try { out[name] = equationRows(data, name, ops); } catch (err) { out[name] = null; }
    });
    return out;
  }

  root.RooflineLive = { compute: compute, equations: equations, keptScatters: keptScatters, texts: texts, fills: fills, readField: readField, digits: digits, numberText: numberText,
                        claimVerdicts: claimVerdicts, tables: tables, sweeps: sweeps, rooflines: rooflines, bars: bars, heatmaps: heatmaps,
                        figureTitle: function (data, given, k) {
                          return figureTitle(data, data.sweeps[k], compute(data, given), setupValues(data, given).magnitude);
                        } };

  // --- the page ---
  if (typeof document === "undefined") { return; }
  var block = document.getElementById("live-data"), section = document.getElementById("live");
  if (!block || !section) { return; }
  var data = JSON.parse(block.textContent), form = section.querySelector("form");
  section.hidden = false;
  var MATHML = "http://www.w3.org/1998/Math/MathML", CHOICES = ["hardware", "model", "weights", "kv", "math", "engine", "second_hardware", "second_model"];
  // an element the page fills again: its page content kept aside once; emptied for a new value (true), or given its page
  // content back (false) when the reader's setup is the page's
  function emptied(el, changed) {
    if (!el.pageNodes) { el.pageNodes = Array.prototype.slice.call(el.childNodes); }
    while (el.firstChild) { el.removeChild(el.firstChild); }
    if (!changed) { el.pageNodes.forEach(function (n) { el.appendChild(n); }); }
    return changed;
  }
  // a table row's label with the page's words and, where its setup does not fit in memory at the reader's setup, the
  // renderers' " (does not fit)" (`suffix`), added or taken off
  function relabel(td, pageFits, fits, suffix) {
    if (!emptied(td, pageFits !== fits)) { return; }
    td.pageNodes.forEach(function (n) { td.appendChild(n.cloneNode(true)); });
    var last = td.lastChild;
    if (fits) { td.appendChild(document.createTextNode(suffix)); }
    else if (last && last.nodeType === 3 && last.textContent.slice(-suffix.length) === suffix) { last.textContent = last.textContent.slice(0, -suffix.length); }
  }
  var pageLaid = null;
  // each step's equation written again at the reader's setup: its formula and numbers lines made as renderers.equations makes
  // them (equationRows) and set as MathML (texmath.js); the last row keeps its cell, which the value is written into. A step
  // whose lines cannot be made here (a special numbers line the page does not carry, a line texmath.js does not read) keeps
  // the page's formula and hides its numbers lines; at the page's own inputs every equation is the page's
  var PAGE_ROWS = new WeakMap();

  function redrawEquations(data, given, changed) {
    var eqs = changed ? equations(data, given) : {};
    Array.prototype.forEach.call(document.querySelectorAll("[data-live]"), function (cell) {
      var last = cell.parentNode, table = last.parentNode, name = cell.getAttribute("data-live");
      if (!PAGE_ROWS.has(table)) { PAGE_ROWS.set(table, Array.prototype.slice.call(table.children)); }
      var page = PAGE_ROWS.get(table), e = own(eqs, name) ? eqs[name] : null;
      var built = e && e.numbers !== null ? equationMathML(e, page[0]) : null;
      Array.prototype.slice.call(table.children).forEach(function (r) { if (r !== last) { table.removeChild(r); } });
      (built || page.filter(function (r) { return r !== last; })).forEach(function (r) { table.insertBefore(r, last); });
      page.forEach(function (r) { r.toggleAttribute("data-hide", changed && !built && r.hasAttribute("data-numbers")); });
    });
  }

  // an equation's rows but the last as site.equation writes them: the first with the page's left side, a row that goes on
  // from the one before (a long sum broken) indented; null where a line is not one texmath.js reads
  function equationMathML(e, first) {
    var lines = [];
    [e.formula, e.numbers].forEach(function (part, k) {
      part.forEach(function (math, i) { lines.push({ math: math, op: i === 0, numbers: k === 1 }); });
    });
    var out = [];
    for (var i = 0; i < lines.length; i++) {
      var tree = RooflineTexMath.tree(lines[i].math), math = tree && RooflineTexMath.build(tree, document);
      if (!math) { return null; }
      var tr = document.createElementNS(MATHML, "mtr"), lhs = document.createElementNS(MATHML, "mtd");
      var rhs = document.createElementNS(MATHML, "mtd"), row = document.createElementNS(MATHML, "mrow");
      var op = document.createElementNS(MATHML, lines[i].op ? "mo" : "mspace");
      lhs.setAttribute("class", "lhs"); rhs.setAttribute("class", "rhs");
      if (i === 0) { Array.prototype.forEach.call(first.firstElementChild.childNodes, function (c) { lhs.appendChild(c.cloneNode(true)); }); }
      if (lines[i].op) { op.textContent = "="; } else { op.setAttribute("width", "1em"); }
      if (lines[i].numbers) { tr.setAttribute("data-numbers", ""); }
      row.appendChild(op); row.appendChild(math); rhs.appendChild(row); tr.appendChild(lhs); tr.appendChild(rhs);
      out.push(tr);
    }
    return out;
  }

  function pageTables() { return pageLaid || (pageLaid = tables(data, {})); }
  // what every redrawn figure takes from its page and its finding: the title filled at the reader's setup, the page's alt
  // text, the room the figure has
  function framed(data, fig, given, values) {
    var figure = document.querySelector('figure[data-plot="' + fig.name + '"]'), img = figure ? figure.querySelector("img") : null;
    return { title: figureTitle(data, fig, values, setupValues(data, given).magnitude), alt: img ? img.getAttribute("alt") : fig.name,
             width: figure ? figure.clientWidth : 0 };
  }

  // each sweep drawn for the reader's setup (figure.js), as renderers.plots lays it out: x in its input's unit, y in the unit
  // the first curve's step shows the values' middle in (each tick with its own unit over more than five decades), the marks
  // labelled with their symbol and value, what does not fit shaded; by figure name
  function drawSweeps(data, given, values) {
    var got = sweeps(data, given, values), out = {}, byName = {};
    if (got.error) { return out; }
    data.inputs.forEach(function (inp) { byName[inp.name] = inp; });
    data.sweeps.forEach(function (fig, i) {
      var s = got[i], inp = byName[fig.x], ladder = data.ladders[data.steps[fig.y[0]].ladder], ylog = fig.log.indexOf("y") >= 0;
      var ys = [];
      s.y.forEach(function (c) { c.forEach(function (v) { if (v !== null && v !== 0) { ys.push(Math.abs(v)); } }); });
      ys.sort(function (a, b) { return a - b; });
      var r = ys.length ? rung(ladder, ys[Math.floor(ys.length / 2)]) : ["1", 1], each = ylog && ys.length && ys[ys.length - 1] / ys[0] > 1e5;
      var mark = function (m) {
        var ladderOf = m.input ? data.ladders[byName[m.name].ladder] : data.ladders[data.steps[m.name].ladder];
        return m.symbol.concat([[" = " + runningText(data, m.value, m.input ? { counts: "" } : data.steps[m.name], ladderOf), ""]]);
      };
      var curves = [], none = [];
      s.y.forEach(function (c, k) {
        if (c.some(function (v) { return v !== null; })) {
          curves.push({ label: fig.labels[k], step: fig.y[k], y: c.map(function (v) { return v === null ? null : v * r[1]; }) });
        } else { none.push(fig.labels[k]); }
      });
      var unit = r[0] === "1" ? "" : unitWord(r[0], { mantissa: "2", exponent: null }), xunit = inp.unit === "1" ? "" : unitWord(inp.unit, { mantissa: "2", exponent: null });
      var fitMark = s.overflow ? fig.marks.filter(function (m) { return m.name === fig.fit; })[0] : null;
      out[fig.name] = RooflineFigure.draw(document, Object.assign(framed(data, fig, given, values), {
        xlog: fig.log.indexOf("x") >= 0, ylog: ylog,
        xlabel: fig.xlabel.charAt(0).toUpperCase() + fig.xlabel.slice(1) + (xunit ? " (" + xunit + ")" : ""),
        ylabel: each ? fig.ylabel || "" : (fig.ylabel ? fig.ylabel + (unit ? " (" + unit + ")" : "") : unit),
        x: s.x.map(function (x) { return x / inp.factor; }), curves: curves, discrete: fig.whole && s.x.length <= data.grid.discrete,
        vlines: s.marks.filter(function (m) { return m.axis === "x"; }).map(function (m) { return { name: m.name, label: mark(m), value: m.value / inp.factor }; }),
        hlines: s.marks.filter(function (m) { return m.axis === "y"; }).map(function (m) { return { name: m.name, label: mark(m), value: m.value * r[1] }; }),
        overflow: s.overflow ? { from: s.overflow[0] / inp.factor, to: s.overflow[1] / inp.factor,
                                 label: [["does not fit in memory beyond ", ""]].concat(fitMark ? fitMark.symbol : [], [[(fitMark ? " = " : "")
                                   + runningText(data, s.overflow[0], data.steps[fig.fit], data.ladders[data.steps[fig.fit].ladder]), ""]]) } : null,
        note: (none.length ? none.join(", ") + ": no value in this setup" : "") + (s.fit === "none" ? (none.length ? "; " : "") + "does not fit in memory at any " + fig.x + " shown" : ""),
        tick: function (v) { return each ? plainText(v / r[1], ladder, 3) : numberText(digits(v, 3)); },
        xtick: function (v) { return numberText(digits(v, 3)); } }));
    });
    return out;
  }
  // each roofline drawn for the reader's setup (figure.js), as renderers.plots lays it out: the roofs in the unit the lowest
  // peak shows in, each chip's peak and ridge in its legend entry, the intensities as points (a colour per kernel, each
  // point's batch beside it where there are few); by figure name
  function drawRooflines(data, given, values) {
    var got = rooflines(data, given, values), out = {};
    data.rooflines.forEach(function (fig, i) {
      var r = got[i];
      if (!r.roofs.length) { return; }
      var unit = rung(fig.ladder, Math.min.apply(null, r.roofs.map(function (c) { return c.peak; }))), groups = [];
      var points = r.points.map(function (q) {
        if (groups.indexOf(q.label) < 0) { groups.push(q.label); }
        var note = q.batch ? q.batch.symbol.concat([[" = " + numberText({ mantissa: String(q.n), exponent: null }), ""]]) : null;
        return { name: q.name, x: q.x, y: q.y * unit[1], group: groups.indexOf(q.label), label: q.label, note: note };
      });
      if (points.length > 15) { points.forEach(function (q) { q.note = null; }); }
      out[fig.name] = RooflineFigure.draw(document, Object.assign(framed(data, fig, given, values), {
        xlog: true, ylog: true, x: r.x, discrete: false, vlines: [], hlines: [], overflow: null, note: "",
        curves: r.roofs.map(function (c, k) {  // the reader's chip in ink, the others grey and dashed
          return { label: c.name.replace(/\s*\([^()]*\)$/, "") + ": " + plainText(c.peak, fig.ladder, 3) + ", ridge " + numberText(digits(c.ridge, 3)) + " flop/B",
                   step: c.key, y: c.y.map(function (v) { return v * unit[1]; }), colour: k === 0 ? "#1a1a1a" : "#8c8c8c", dash: k === 0 ? "" : "6 3" };
        }), points: points, xlabel: "Arithmetic intensity (flop/B)", ylabel: "Attainable FLOP/s (" + unit[0] + ")",
        tick: function (v) { return numberText(digits(v, 3)); }, xtick: function (v) { return numberText(digits(v, 3)); } }));
    });
    return out;
  }

  // each bar figure and stack drawn for the reader's setup (figure.js), in the unit the first part's step shows the values'
  // middle in (a stack: its totals')
  function drawBars(data, given, values) {
    var got = bars(data, values, given), out = {};
    data.bars.forEach(function (fig, i) {
      var b = got[i];
      var ladder = data.ladders[fig.ladder], stack = fig.kind === "stack";
      var rows = stack ? b.rows : fig.parts.map(function (p, k) {
        return { label: p[0], parts: b.parts === null || b.parts[k] === null ? null : [b.parts[k]], missing: b.parts === null || b.parts[k] === null ? (b.missing || "no value") : "", marks: [] };
      });
      var sizes = rows.filter(function (r) { return r.parts !== null; }).map(function (r) { return Math.abs(r.parts.reduce(function (x, y) { return x + y; }, 0)); })
        .filter(function (v) { return v !== 0; }).sort(function (p, q) { return p - q; });
      var r = sizes.length ? rung(ladder, sizes[Math.floor(sizes.length / 2)]) : ["1", 1];
      var scaled = function (v) { return v === null ? null : v * r[1]; };
      var markLabel = function (m, v) {
        var st = data.steps[m.name];
        return m.symbol.concat([[" = " + (v === null ? "no value" : runningText(data, v, st, data.ladders[st.ladder])), ""]]);
      };
      out[fig.name] = RooflineFigure.drawBars(document, Object.assign(framed(data, fig, given, values), {
        parts: stack ? fig.parts.map(function (p) { return p[0]; }) : [],
        rows: rows.map(function (row) {
          var total = row.parts === null ? null : row.parts.reduce(function (x, y) { return x + y; }, 0);
          return { label: row.label, parts: row.parts === null ? null : row.parts.map(scaled), marks: stack ? row.marks.map(scaled) : [],
                   text: total === null ? "no value (" + row.missing + ")" : plainText(total, ladder, 3) + (row.over ? ", does not fit" : "") };
        }),
        base: stack ? null : scaled(b.base),
        marks: stack ? [] : fig.marks.map(function (m, k) { return { name: m.name, value: scaled(b.marks[k]), label: markLabel(m, b.marks[k]) }; }),
        rowMarks: stack ? fig.marks.map(function (m) { return m.title; }) : [],
        xlabel: (fig.xlabel || "") + (r[0] === "1" ? "" : (fig.xlabel ? " (" + r[0] + ")" : r[0])), xlog: !stack && fig.log.indexOf("x") >= 0,
        tick: function (v) { return numberText(digits(v, 3)); } }));
    });
    return out;
  }

  // each heat map drawn for the reader's setup (figure.js): a cell's text its number in the unit its step shows it in
  function drawHeats(data, given, values) {
    var got = heatmaps(data, values, given), out = {};
    data.heatmaps.forEach(function (fig, i) {
      out[fig.name] = RooflineFigure.drawHeat(document, Object.assign(framed(data, fig, given, values), {
        columns: fig.columns, xlabel: fig.xlabel, ylabel: fig.ylabel, colorbar: fig.colorbar,
        rows: got[i].rows.map(function (r) {
          return { label: r.label, cells: r.cells, texts: r.cells.map(function (v, j) {
            var step = data.steps[fig.y[j]];
            return v === null ? r.kinds[j] || "n/a" : numberText(digits(v * rung(data.ladders[step.ladder], v)[1], 3));
          }) };
        }) }));
    });
    return out;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var given = {}, errors = [];
    data.inputs.forEach(function (inp) {
      var field = form.elements.namedItem(inp.name);
      if (!field || field.value.trim() === "" || field.value.trim() === field.defaultValue.trim()) { return; }
      var got = readField(field.value, inp, data);
      if (got.error) { errors.push(got.error); } else { given[inp.name] = got.value; }
    });
    var sp = data.specs, picked = [], page = { hardware: sp.chip, model: sp.model, weights: sp.weights, kv: sp.kv, math: sp.math, engine: sp.engine };
    if (sp.second) { page[sp.second.name] = sp.second.page; }
    CHOICES.forEach(function (name) {  // the chip, model and formats: a choice only where it is not the page's
      var field = form.elements.namedItem(name);
      if (field && field.value !== page[name]) {
        given[name] = field.value;
        picked.push(name === "engine" ? "the " + field.value + " engine profile" : name === "math" ? field.options[field.selectedIndex].text + " math"
          : (name.indexOf("second_") === 0 ? "the " + sp.second.label + " " : "") + field.options[field.selectedIndex].text);
      }
    });
    var status = section.querySelector("output");
    var values = errors.length ? { error: errors[0] } : compute(data, given);
    if (values.error) { status.textContent = values.error; status.setAttribute("data-kind", "unread"); return; }
    var shown = texts(data, given), changed = Object.keys(given);
    var fit = data.fit ? values[data.fit] : null, over = typeof fit === "number" && fit > 1;  // run._overflows
    var typed = changed.filter(function (n) { return CHOICES.indexOf(n) < 0; });
    var warning = own(given, "model") && !own(given, "weights") ? sp.models[given.model].warning : "";
    status.setAttribute("data-kind", changed.length ? "live" : "page");
    status.toggleAttribute("data-over", changed.length > 0 && over);
    status.textContent = changed.length
      ? "Recomputed for " + picked.concat(typed.map(function (n) { return n + " = " + form.elements.namedItem(n).value.trim(); })).join(", ")
        + ". The answer's numbers, the steps' equations and values, the results and most figures follow (a figure that does not "
        + "says so in its caption; an equation whose numbers line this page cannot write here hides it), "
        + "and each claim is read again after its sentence (one read at a setup of its own, at that setup on top of "
        + "yours); a result table is computed again where its layout stays the page's (its rows, columns, units and notes), "
        + "else it keeps the page's values, dimmed, as do the appendix's other tables."
        + (warning ? " " + warning : "") + (sp.second_note && picked.length ? " " + sp.second_note : "")
        + (over ? " Does not fit: this setup needs " + numberText(digits(fit, 3)) + " times the memory one GPU has, so its times "
           + "describe a server that cannot be built as stated (more GPUs, a smaller batch or a shorter context)." : "")
      : "The page's own inputs.";
    Array.prototype.forEach.call(document.querySelectorAll("[data-live]"), function (cell) {
      var name = cell.getAttribute("data-live");
      if (!own(shown, name) || !emptied(cell, changed.length > 0)) { return; }
      var row = document.createElementNS(MATHML, "mrow"), eq = document.createElementNS(MATHML, "mo"), text = document.createElementNS(MATHML, "mtext");
      eq.textContent = "="; text.textContent = "\u00a0" + shown[name];
      row.appendChild(eq); row.appendChild(text); cell.appendChild(row);
    });
    redrawEquations(data, given, changed.length > 0);
    // the answer's sentences: each value filled again (a value with none here says so in its place)
    var filled = fills(data, given, values);
    // the sweeps drawn again; what does not follow yet (the other figures, the tables but the results) is dimmed
    var drawn = changed.length ? Object.assign(drawSweeps(data, given, values), drawRooflines(data, given, values), drawBars(data, given, values),
                                                 drawHeats(data, given, values)) : {};
    // the result tables refilled where their layout is the page's (the same rows, columns, units and notes); one whose layout
    // changes at the reader's setup gets the page's values back and is dimmed
    var laid = changed.length ? tables(data, given) : null, page = laid ? pageTables() : null, parts = {};
    var kept = changed.length ? keptScatters(data, given) : {};  // a scatter whose points and lines stay where they are
    Array.prototype.forEach.call(document.querySelectorAll("table[data-table]"), function (el) {
      var k = Number(el.getAttribute("data-table")), part = parts[k] = own(parts, k) ? parts[k] + 1 : 0;
      var rows = Array.prototype.slice.call(el.querySelectorAll("tr"), 1);
      var same = laid && laid[k] && laid[k].key === page[k].key && laid[k].items[part] && laid[k].items[part].length === rows.length;
      var fits = same && laid[k].fits[part], pageFits = same && page[k].fits[part];
      rows.forEach(function (tr, i) {
        var labels = tr.querySelectorAll("td:not(.num)");
        Array.prototype.forEach.call(tr.querySelectorAll("td.num"), function (td, j) { if (emptied(td, !!same)) { td.textContent = laid[k].items[part][i][j]; } });
        if (labels.length) { relabel(labels[labels.length - 1], pageFits ? pageFits[i] : false, fits ? fits[i] : false, data.table_rules.does_not_fit); }
      });
      el.toggleAttribute("data-stale", changed.length > 0 && !same);
    });
    Array.prototype.forEach.call(document.querySelectorAll("figure, table:not([data-table])"), function (el) {
      if (section.contains(el)) { return; }
      var name = el.getAttribute("data-plot"), link = el.querySelector("a"), svg = el.querySelector("svg[data-drawn]");
      if (svg) { el.removeChild(svg); }
      if (link) { link.hidden = own(drawn, name); }
      if (own(drawn, name)) { el.insertBefore(drawn[name].cloneNode(true), el.firstChild); }
      el.toggleAttribute("data-stale", changed.length > 0 && !own(drawn, name) && !own(kept, name));
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-fill]"), function (span) {
      var name = span.getAttribute("data-fill"), v = values[name];
      if (!emptied(span, changed.length > 0)) { return; }
      span.textContent = own(filled, name) ? filled[name] : "no value (" + (isMissing(v) ? v.reason : "not computed") + ")";
    });
    // the answer figure's sentence on the engine profile's error: the chosen profile's
    var engine = own(given, "engine") ? given.engine : sp.engine;
    Array.prototype.forEach.call(document.querySelectorAll("[data-band]"), function (span) {
      if (emptied(span, engine !== sp.engine)) { span.textContent = sp.engines[engine].band; }
    });
    // the page's verdict and sentence stay (they read the page's values); the claim read again at the reader's inputs follows them
    claimVerdicts(data, values, given).forEach(function (v) {
      var item = document.querySelector('[data-claim="' + v.index + '"]'), c = null;
      if (!item) { return; }
      data.claims.forEach(function (x) { if (x.index === v.index) { c = x; } });
      var note = item.querySelector("[data-claim-live]");
      if (!note) { note = document.createElement("span"); note.setAttribute("data-claim-live", ""); item.appendChild(note); }
      note.setAttribute("data-holds", String(v.holds));
      if (!changed.length) { note.textContent = ""; return; }
      var right = c.right ? lower(c.right_title) + " " + v.right : "the claimed " + v.right;
      note.textContent = (c.where ? " At that setup on top of your inputs " : " At your inputs ")
        + (v.holds === null ? "it cannot be checked" : (v.holds ? "it holds" : "it does not hold")) + ": "
        + lower(c.left_title) + " " + v.left + (v.right ? "; " + right : "") + ".";
    });
    Array.prototype.forEach.call(section.querySelectorAll("[data-result]"), function (cell) {
      cell.textContent = shown[cell.getAttribute("data-result")];
    });
  });
}(typeof window !== "undefined" ? window : globalThis));
