// roofline practice page: grades a number answer in the browser by the rules `roofline check --against` grades one.
// Everything it compares with is data the build computed (the page's JSON block); nothing here evaluates text.
"use strict";
(function () {
  var block = document.getElementById("practice-data");
  if (!block) { return; }
  var data = JSON.parse(block.textContent);
  var NUMBER = new RegExp(data.number_pattern);
  var answers = {};
  data.questions.forEach(function (q) { q.answers.forEach(function (a) { answers[a.id] = a; }); });

  function isclose(a, b, tol) { return Math.abs(a - b) <= tol * Math.max(Math.abs(a), Math.abs(b)); }

  function examples(unit) { return data.units[unit].examples.join(", "); }

  // the answer's value in its step's unit, or {error}: the grader's number pattern, the unit looked up in its table
  function read(text, a) {
    if (text.length > 100) { return { error: "an answer is at most 100 characters" }; }
    var m = NUMBER.exec(text);
    if (m === null) { return { error: "expected a number with its unit, such as '4.5 ms'" }; }
    var number = m[1], unit = (m[2] || "").trim();
    if (/^[eE]/.test(unit) && /[eE]/.test(text.trim().charAt(number.length))) {
      return { error: "expected a number with its unit, such as '4.5 ms'" };
    }
    var x = Number(number.replace(/,/g, ""));
    if (!isFinite(x)) { return { error: number + " is out of range" }; }
    if (unit === "") {
      if (a.bare) { return { value: x }; }
      return { error: number + " has no unit, and the answer is in " + a.unit + ": give one (" + examples(a.unit) + ")" };
    }
    var table = data.units[a.unit].factors;
    if (!Object.prototype.hasOwnProperty.call(table, unit)) {
      return { error: "'" + unit + "' is not a unit of this answer's kind; for example: " + examples(a.unit) };
    }
    return { value: x * table[unit] };
  }

  // compare.closest_slips: the slips within the tolerance of the ratio, closest first, one per slip, at most four
  function closestSlips(slips, ratio, tol) {
    var found = slips.filter(function (s) { return isclose(ratio, s.ratio, tol); });
    found.sort(function (p, q) { return Math.abs(Math.log(ratio / p.ratio)) - Math.abs(Math.log(ratio / q.ratio)); });
    var seen = {}, out = [];
    found.forEach(function (s) { if (!seen[s.key] && out.length < 4) { seen[s.key] = true; out.push(s); } });
    return out;
  }

  // compare.left_out_terms: one term (else two) whose leaving out gives the ratio, the closest
  function leftOut(terms, v, ratio, tol) {
    var best = null, n = terms.length, k, i, j;
    function tryCombo(combo) {
      var sum = 0;
      combo.forEach(function (c) { sum += terms[c].value; });
      var left = 1 - sum / v;
      if (left > 0 && isclose(ratio, left, tol) && (best === null || Math.abs(left - ratio) < best.gap)) {
        best = { gap: Math.abs(left - ratio), combo: combo, left: left };
      }
    }
    for (k = 1; k <= 2 && best === null; k++) {
      for (i = 0; i < n; i++) {
        if (k === 1) { tryCombo([i]); continue; }
        for (j = i + 1; j < n; j++) { tryCombo([i, j]); }
      }
    }
    return best === null ? { terms: [], left: 1 } : { terms: best.combo.map(function (c) { return terms[c]; }), left: best.left };
  }

  // compare.grade_number, from the answer's value on
  function grade(value, a) {
    var tol = data.tolerance, v = a.value;
    if (v === 0) { return { kind: value === 0 ? "within" : "off", causes: [], missing: [] }; }
    var ratio = value / v;
    if (Math.abs(ratio - 1) <= tol) { return { kind: "within", ratio: ratio, causes: [], missing: [] }; }
    var missing = leftOut(a.terms, v, ratio, tol), causes = closestSlips(a.slips, ratio, tol);
    if (missing.terms.length && causes.length) {
      if (Math.abs(Math.log(ratio / missing.left)) < Math.abs(Math.log(ratio / causes[0].ratio))) { causes = []; }
      else { missing = { terms: [], left: 1 }; }
    }
    return { kind: "off", ratio: ratio, causes: causes, missing: missing.terms };
  }

  function times(r) { return (r >= 0.1 && r < 10 ? r.toFixed(3) : r.toPrecision(3)).replace(/\.?0+$/, "") + "×"; }

  function words(verdict, a) {
    var pct = verdict.ratio === undefined ? "" : " (" + ((verdict.ratio - 1) * 100).toFixed(1) + "%)";
    if (verdict.kind === "within") { return "Right: the sheet's value is " + a.shown + pct + "."; }
    var text = "Not right: " + times(verdict.ratio) + " the sheet's " + a.shown + ".";
    if (verdict.causes.length) {
      text += " The likely slip: " + verdict.causes.map(function (c) { return c.text; }).join("; or ") + ".";
    } else if (verdict.missing.length) {
      text += " It leaves out " + verdict.missing.map(function (t) { return t.title.charAt(0).toLowerCase() + t.title.slice(1); }).join(" and ") + ".";
    } else {
      text += " No known slip gives that factor: the key's argument below shows each step.";
    }
    return text;
  }

  Array.prototype.forEach.call(document.querySelectorAll("form.answer"), function (form) {
    var id = form.getAttribute("data-answer"), a = answers[id];
    var input = form.querySelector("input"), output = form.querySelector("output");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var got = read(input.value.trim(), a);
      output.removeAttribute("data-kind");
      output.removeAttribute("data-slips");
      output.removeAttribute("data-terms");
      if (got.error) {
        output.textContent = got.error;
        output.setAttribute("data-kind", "unread");
        return;
      }
      var verdict = grade(got.value, a);
      output.textContent = words(verdict, a);
      output.setAttribute("data-kind", verdict.kind);
      output.setAttribute("data-slips", verdict.causes.map(function (c) { return c.key; }).join(" "));
      output.setAttribute("data-terms", verdict.missing.map(function (t) { return t.title; }).join("|"));
      var key = document.getElementById(form.closest("section").id + "-key");
      if (key) { key.open = true; }
    });
  });
}());
