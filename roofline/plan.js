// roofline's numeric plan, evaluated in a browser: the same float64 arithmetic as derivations/engine/codegen.py writes in
// Python (its scalar code) and derivations/engine/numeric.py runs, node by node over the plan's whitelisted exprjson data.
// Nothing here evaluates text or builds code: each node's tag picks one of the operations below, anything else is refused.
// A missing value is ABSENT inside a step, absorbed by a zero factor and passed on by everything else; a step that cannot do
// without it is missing for the first reason it read (sorted), as in Python.
"use strict";
(function (root) {
  var SNAP = 1e-9, VALUE_LIMIT = 1e300;
  var ABSENT = { absent: true };
  function Fail(kind) { this.kind = kind; }  // "nan" (Python's ZeroDivisionError, ValueError, TypeError), "overflow", "absent"

  function isAbsent(x) { return x === ABSENT; }
  function isZero(x) { return !isAbsent(x) && (x === 0 || x === false); }
  function isOne(x) { return !isAbsent(x) && (x === 1 || x === true); }
  function truth(x) { if (isAbsent(x)) { throw new Fail("absent"); } return !!x; }

  function roundHalfEven(x) {
    if (!isFinite(x)) { throw new Fail(isNaN(x) ? "nan" : "overflow"); }
    var r = Math.round(x);
    if (Math.abs(x % 1) === 0.5 && r % 2 !== 0) { r -= 1; }
    return r;
  }
  function snap(x) { var r = roundHalfEven(x); return Math.abs(x - r) <= SNAP * Math.max(1, Math.abs(x)) ? r : x; }

  // a sum in order, each term and an exact opposite of it cancelled first: x + y - x - y is 0, as the exact sum Python prints
  // is, not the residue of rounding (x + y) - x
  function add(xs) {
    var i, j, terms = [], gone = [], s = 0, first = true;
    for (i = 0; i < xs.length; i++) { if (isAbsent(xs[i])) { return ABSENT; } terms.push(+xs[i]); gone.push(false); }
    for (i = 0; i < terms.length; i++) {
      if (gone[i] || terms[i] === 0 || !isFinite(terms[i])) { continue; }
      for (j = i + 1; j < terms.length; j++) {
        if (!gone[j] && terms[j] === -terms[i]) { gone[i] = gone[j] = true; break; }
      }
    }
    for (i = 0; i < terms.length; i++) { if (!gone[i]) { s = first ? terms[i] : s + terms[i]; first = false; } }
    return s;
  }
  function mul2(a, b) {
    if (isAbsent(a)) { return isZero(b) ? 0 : ABSENT; }
    if (isAbsent(b)) { return isZero(a) ? 0 : ABSENT; }
    return a * b;
  }
  function mul(xs) { var p = xs[0]; for (var i = 1; i < xs.length; i++) { p = mul2(p, xs[i]); } return isAbsent(p) ? p : +p; }
  function inverse(x) {
    if (isAbsent(x)) { return ABSENT; }
    if (x === 0 || x === false) { throw new Fail("nan"); }
    return 1 / x;
  }
  function pow(a, b) {
    if (isAbsent(a)) { return isZero(b) ? 1 : ABSENT; }
    if (isAbsent(b)) { return isOne(a) ? 1 : (isZero(a) ? 0 : ABSENT); }
    a = +a; b = +b;
    if (a === 1 || b === 0) { return 1; }
    if (a === 0 && b < 0) { throw new Fail("nan"); }
    if (a < 0 && b !== Math.floor(b)) { throw new Fail("nan"); }  // Python: a complex number, which the step reads as nan
    var r = Math.pow(a, b);
    if (!isFinite(r) && isFinite(a) && isFinite(b) && !isNaN(r)) { throw new Fail("overflow"); }
    return r;
  }
  function anyAbsent(xs) { for (var i = 0; i < xs.length; i++) { if (isAbsent(xs[i])) { return true; } } return false; }
  function extreme(xs, larger) {
    if (anyAbsent(xs)) { return ABSENT; }
    var best = +xs[0];
    for (var i = 0; i < xs.length; i++) { if (xs[i] !== xs[i]) { return NaN; } }
    for (i = 1; i < xs.length; i++) { if (larger ? xs[i] > best : xs[i] < best) { best = +xs[i]; } }
    return best;
  }
  function rounding(x, up) {
    if (isAbsent(x)) { return x; }
    var s = snap(+x);
    return up ? Math.ceil(s) : Math.floor(s);
  }
  function log(x) { if (isAbsent(x)) { return x; } x = +x; if (!(x > 0)) { throw new Fail("nan"); } return Math.log(x); }
  function exp(x) { if (isAbsent(x)) { return x; } return Math.exp(+x); }
  function abs(x) { return isAbsent(x) ? x : Math.abs(x); }
  function argmax(xs) {
    if (anyAbsent(xs)) { return ABSENT; }
    var best = 0;
    for (var i = 1; i < xs.length; i++) { if (xs[i] > xs[best]) { best = i; } }
    return best;
  }
  function pick(xs) {
    var index = xs[0], values = xs.slice(1);
    if (isAbsent(index)) { return ABSENT; }
    if (index !== index) { return NaN; }
    var i = roundHalfEven(+index);
    return i >= 0 && i < values.length ? values[i] : NaN;
  }
  function compare(tag, a, b) {
    if (isAbsent(a) || isAbsent(b)) { return ABSENT; }
    switch (tag) {
      case "Lt": return a < b;
      case "Le": return a <= b;
      case "Gt": return a > b;
      case "Ge": return a >= b;
      case "Eq": return a == b;  // eslint-disable-line eqeqeq -- a number against a number, as Python's ==
      default: return a != b;  // eslint-disable-line eqeqeq
    }
  }
  function literal(node) {
    switch (node[0]) {
      case "Integer": return Number(node[1]);
      case "Rational": return Number(node[1]) / Number(node[2]);
      case "Float": return Number(node[1]);
      default: return undefined;
    }
  }
  var CONSTANTS = { nan: NaN, oo: Infinity, "-oo": -Infinity, pi: Math.PI, E: Math.E, "true": true, "false": false };

  // one expression (exprjson document) at `values` (symbol name -> number or ABSENT); lazy where Python's code is (the cases
  // of a case split, and, or), eager elsewhere
  function expression(doc, values) {
    var nodes = doc.nodes, memo = new Array(nodes.length), done = new Array(nodes.length);
    function at(i) {
      if (done[i]) { return memo[i]; }
      var v = node(i);
      memo[i] = v; done[i] = true;
      return v;
    }
    function kids(i, from) { var n = nodes[i], out = []; for (var k = from; k < n.length; k++) { out.push(at(n[k])); } return out; }
    function node(i) {
      var n = nodes[i], tag = n[0], x = literal(n);
      if (x !== undefined) { return x; }
      if (tag === "Symbol") {
        if (!Object.prototype.hasOwnProperty.call(values, n[1])) { throw new Error("a symbol the step does not read: " + n[1]); }
        return values[n[1]];
      }
      if (tag === "zoo") { throw new Fail("nan"); }
      if (Object.prototype.hasOwnProperty.call(CONSTANTS, tag)) { return CONSTANTS[tag]; }
      switch (tag) {
        case "Add": return add(kids(i, 1));
        case "Mul": return mul(kids(i, 1));
        case "Pow": {
          var e = nodes[n[2]];
          if (literal(e) === -1) { return inverse(at(n[1])); }
          return pow(at(n[1]), at(n[2]));
        }
        case "Max": return extreme(kids(i, 1), true);
        case "Min": return extreme(kids(i, 1), false);
        case "Abs": return abs(at(n[1]));
        case "ceiling": return rounding(at(n[1]), true);
        case "floor": return rounding(at(n[1]), false);
        case "log": return log(at(n[1]));
        case "exp": return exp(at(n[1]));
        case "Lt": case "Le": case "Gt": case "Ge": case "Eq": case "Ne": return compare(tag, at(n[1]), at(n[2]));
        case "Piecewise": {
          for (var k = 1; k + 1 < n.length; k += 2) { if (truth(at(n[k + 1]))) { return at(n[k]); } }
          return NaN;
        }
        case "ITE": return truth(at(n[1])) ? at(n[2]) : at(n[3]);
        case "And": { var a = at(n[1]); for (k = 1; k < n.length; k++) { a = at(n[k]); if (!truth(a)) { return a; } } return a; }
        case "Or": { var o = at(n[1]); for (k = 1; k < n.length; k++) { o = at(n[k]); if (truth(o)) { return o; } } return o; }
        case "Not": return !truth(at(n[1]));
        case "Function":
          if (n[1] === "ArgMax") { return argmax(kids(i, 2)); }
          if (n[1] === "Pick") { return pick(kids(i, 2)); }
          throw new Error("a function the plan may not name: " + String(n[1]).slice(0, 40));
        default: throw new Error("a node the plan may not hold: " + String(tag).slice(0, 40));
      }
    }
    return at(doc.root);
  }

  function missing(kind, reason) { return { missing: true, kind: kind, reason: reason }; }
  function isMissing(v) { return v !== null && typeof v === "object" && v.missing === true; }

  // numeric._call: the value of one expression, or the first missing value it cannot do without; NaN where it is undefined
  function call(doc, args, values) {
    var local = {}, read = [];
    args.forEach(function (a) {
      var v = values[a];
      if (isMissing(v)) { read.push(v); local[a] = ABSENT; } else { local[a] = v; }
    });
    var v;
    try { v = expression(doc, local); } catch (err) {
      if (!(err instanceof Fail)) { throw err; }
      if (err.kind === "overflow") { return { overflow: true }; }
      v = err.kind === "absent" ? ABSENT : NaN;
    }
    if (isAbsent(v)) { read.sort(function (p, q) { return p.reason < q.reason ? -1 : (p.reason > q.reason ? 1 : 0); }); return read[0]; }
    return +v;
  }

  function outOfRange(s) {
    return s.name + " is out of range here (its magnitude is beyond 1e300 or below 1e-300 in " + (s.unit || "1") + ")";
  }

  // numeric.in_domain
  function inDomain(s, v) {
    if (v !== null && typeof v === "object" && v.overflow) { return missing("none", outOfRange(s)); }
    var finite = isFinite(v), inRange = v === 0 || (1 / VALUE_LIMIT <= Math.abs(v) && Math.abs(v) <= VALUE_LIMIT);
    if (finite && !inRange) { return missing("none", outOfRange(s)); }
    if (s.rule === "solve" || s.rule === "positive") {
      if (!finite || !(v > 0)) { return missing("none", s.none); }
    } else if (!finite) {
      if (s.rule === "finite_named") { return missing("none", s.none); }
      return missing("none", s.name + " is undefined here (a zero denominator)");
    }
    return v;
  }

  function evaluate(plan, values) {
    var byName = {}, out = {};
    plan.steps.forEach(function (s) { byName[s.name] = s; });
    function step(s, vals) {
      if (s.of) { return atStep(s, vals); }
      var v = call(s.expr, s.args, vals);
      return isMissing(v) ? v : inDomain(s, v);
    }
    function atStep(s, vals) {
      var local = Object.assign({}, vals);
      s.where.forEach(function (w) { local[w[0]] = call(w[2], w[1], vals); });
      s.redo.forEach(function (name) { local[name] = step(byName[name], local); });
      var v = local[s.of];
      if (isMissing(v)) { return s.none && v.kind === "none" ? missing("none", s.none) : v; }
      return inDomain(s, v);
    }
    var vals = Object.assign({}, values);
    plan.steps.forEach(function (s) { var v = step(s, vals); vals[s.name] = v; out[s.name] = v; });
    return out;
  }

  root.RooflinePlan = { evaluate: evaluate, isMissing: isMissing };
}(typeof window !== "undefined" ? window : globalThis));
