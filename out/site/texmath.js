// LaTeX to MathML in a browser for the subset the sheets print (renderers/site.py's mathml_inner: its pre-processing, then
// latex2mathml, then one <mi> per upright word and one <mn> per digit-grouped number), as the same elements and attributes.
// tree(latex) is a plain [tag, {attribute: value}, child...] tree (a child is a node or text), or null for LaTeX outside the
// subset; build(node, doc) makes DOM elements of it, refusing any element or attribute site.py does not whitelist. Nothing
// here parses markup or runs text: text only ever becomes a text node.
"use strict";
(function (root) {
  var NS = "http://www.w3.org/1998/Math/MathML";
  function table(pairs) { var t = Object.create(null); for (var k in pairs) { t[k] = pairs[k]; } return t; }
  function set(words) { var t = Object.create(null); words.split(" ").forEach(function (w) { t[w] = true; }); return t; }
  function own(t, k) { return typeof k === "string" && Object.prototype.hasOwnProperty.call(t, k); }

  // site.py's MATHML_ELEMENTS and MATHML_ATTRIBUTES
  var MATHML_ELEMENTS = set("math mi mn mo ms mtext mspace mrow mfrac msqrt mroot mstyle merror mpadded mphantom menclose msub msup " +
                            "msubsup munder mover munderover mmultiscripts mprescripts none mtable mtr mtd");
  var MATHML_ATTRIBUTES = set("accent accentunder close columnalign columnlines columnspacing depth display displaystyle fence form " +
                              "height largeop linethickness lspace mathsize mathvariant maxsize minsize movablelimits notation open " +
                              "rowalign rowlines rowspacing rspace scriptlevel separator separators stretchy symmetric width");

  // latex2mathml's tokenizer for the subset (no comment, \operatorname or \verb token; of the font letters, \mathrm{x}, which
  // latex2mathml reads as the bare letter: only \operatorname{x} leads there, \mathrm{x} itself is \text{x} already)
  var TOKEN = new RegExp([
    "([a-zA-Z])", "([_^])(\\d)", "(-?\\d+(?:\\.\\d+)?\\s*(?:in|mm|cm|pt|em|ex|pc|bp|dd|cc|sp|mu))", "(\\d+(?:\\.\\d+)?)", "(\\.\\d*)",
    "(\\\\[\\\\\\[\\]{}\\s!,:>;|_%#$&])", "\\\\(begin|end)\\s*\\{([a-zA-Z]+\\*?)\\}",
    "\\\\(text(?:bf|it|md|normal|rm|sf|tt|up)?)\\s*\\{([^}]*)\\}", "(\\\\[cdt]?frac)\\s*([.\\d])\\s*([.\\d])?",
    "\\\\mathrm\\{([a-zA-Z])\\}", "(\\\\[a-zA-Z]+)", "(\\S)"
  ].join("|"), "gu");

  function Bad() {}
  function fail() { throw new Bad(); }

  function tokenize(s) {
    var out = [], m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(s)) !== null) {
      if (m[1] !== undefined) { out.push(m[1]); }
      else if (m[2] !== undefined) { out.push(m[2], m[3]); }
      else if (m[4] !== undefined) { out.push(/^\d/.test(m[4]) ? m[4].replace(/ /g, "") : m[4]); }
      else if (m[5] !== undefined) { out.push(m[5]); }
      else if (m[6] !== undefined) { out.push(m[6]); }
      else if (m[7] !== undefined) { out.push(m[7]); }
      else if (m[8] !== undefined) { out.push("\\" + m[8] + "{" + m[9] + "}"); }
      else if (m[10] !== undefined) { out.push({ text: m[11], command: "\\" + m[10] }); }
      else if (m[12] !== undefined) { out.push(m[12], m[13]); if (m[14] !== undefined) { out.push(m[14]); } }
      else if (m[15] !== undefined) { out.push(m[15]); }
      else if (m[16] !== undefined) { out.push(m[16]); }
      else { out.push(m[17]); }
    }
    return out;
  }

  var DELIMITERS = table({ "(": "(", ")": ")", "[": "[", "]": "]", "|": "|", "/": "/", ".": "", "\\{": "{", "\\}": "}", "\\|": "\u2016",
                           "\\vert": "|", "\\lvert": "|", "\\rvert": "|", "\\Vert": "\u2016", "\\lceil": "\u2308", "\\rceil": "\u2309",
                           "\\lfloor": "\u230A", "\\rfloor": "\u230B", "\\langle": "\u27E8", "\\rangle": "\u27E9" });
  var BIG = table({ "\\big": "1.2em", "\\Big": "1.623em", "\\bigg": "2.047em", "\\Bigg": "2.470em" });
  var BIG_TEXT = set("( ) [ ] | / .");
  // command: [element, its attributes, the mark, the mark's attributes]
  var ACCENTS = table({
    "\\hat": ["mover", { accent: "true" }, "^", {}], "\\widehat": ["mover", {}, "^", {}], "\\bar": ["mover", {}, "\u00AF", { stretchy: "true" }],
    "\\tilde": ["mover", {}, "~", { stretchy: "false" }], "\\widetilde": ["mover", {}, "~", {}], "\\vec": ["mover", {}, "\u2192", { stretchy: "true" }],
    "\\dot": ["mover", {}, "\u02D9", {}], "\\ddot": ["mover", {}, "\u00A8", {}], "\\check": ["mover", {}, "\u02C7", {}],
    "\\acute": ["mover", {}, "\u00B4", {}], "\\grave": ["mover", {}, "`", {}], "\\breve": ["mover", {}, "\u02D8", {}],
    "\\overline": ["mover", {}, "\u2015", { accent: "true" }], "\\underline": ["munder", {}, "\u2015", { accent: "true" }]
  });
  var TEXTS = table({ "\\text": {}, "\\textrm": {}, "\\textup": {}, "\\textnormal": {}, "\\textmd": {}, "\\textit": { mathvariant: "italic" },
                      "\\textbf": { mathvariant: "bold" }, "\\textsf": { mathvariant: "sans-serif" }, "\\texttt": { mathvariant: "monospace" } });
  var SPACES = table({ "\\,": "0.167em", "\\:": "0.222em", "\\>": "0.222em", "\\;": "0.278em", "\\!": "negativethinmathspace",
                       "\\enspace": "0.5em", "\\quad": "1em", "\\qquad": "2em" });
  var LIMITS = set("\\max \\min \\lim \\sup \\inf");
  // <mo>: latex2mathml's operators and the symbols in U+2190..21FF and U+2200..22FF; FENCES are not stretched
  var OPERATORS = table({
    "+": "+", "-": "\u2212", "*": "*", "/": "/", "(": "(", ")": ")", "=": "=", ",": ",", "?": "?", "[": "[", "]": "]", "|": "|", "!": "!",
    "<": "<", ">": ">", ".": ".", "\\{": "{", "\\}": "}", "\\|": "\u2016", "\\cdot": "\u00B7", "\\times": "\u00D7", "\\div": "\u00F7",
    "\\ast": "*", "\\lt": "<", "\\gt": ">", "\\dots": "\u2026", "\\cdots": "\u22EF", "\\vdots": "\u22EE", "\\ddots": "\u22F1",
    "\\wedge": "\u2227", "\\land": "\u2227", "\\vee": "\u2228", "\\lor": "\u2228", "\\leq": "\u2264", "\\le": "\u2264", "\\geq": "\u2265",
    "\\ge": "\u2265", "\\neq": "\u2260", "\\ne": "\u2260", "\\ll": "\u226A", "\\gg": "\u226B", "\\approx": "\u2248", "\\simeq": "\u2243",
    "\\equiv": "\u2261", "\\propto": "\u221D", "\\to": "\u2192", "\\rightarrow": "\u2192", "\\leftarrow": "\u2190",
    "\\Rightarrow": "\u21D2", "\\Leftrightarrow": "\u21D4", "\\mapsto": "\u21A6", "\\infty": "\u221E", "\\partial": "\u2202",
    "\\nabla": "\u2207", "\\sum": "\u2211", "\\prod": "\u220F", "\\int": "\u222B", "\\circ": "\u2218", "\\star": "\u22C6",
    "\\in": "\u2208", "\\notin": "\u2209", "\\mp": "\u2213", "\\mid": "\u2223"
  });
  var FENCES = set("( ) [ ] | \\{ \\} \\|");
  // <mi>: letters, functions' names and the other symbols
  var IDENTIFIERS = table({
    "\\alpha": "\u03B1", "\\beta": "\u03B2", "\\gamma": "\u03B3", "\\delta": "\u03B4", "\\epsilon": "\u03F5", "\\varepsilon": "\u03B5",
    "\\zeta": "\u03B6", "\\eta": "\u03B7", "\\theta": "\u03B8", "\\vartheta": "\u03D1", "\\iota": "\u03B9", "\\kappa": "\u03BA",
    "\\varkappa": "\u03F0", "\\lambda": "\u03BB", "\\mu": "\u03BC", "\\nu": "\u03BD", "\\xi": "\u03BE", "\\pi": "\u03C0",
    "\\varpi": "\u03D6", "\\rho": "\u03C1", "\\varrho": "\u03F1", "\\sigma": "\u03C3", "\\varsigma": "\u03C2", "\\tau": "\u03C4",
    "\\upsilon": "\u03C5", "\\phi": "\u03D5", "\\varphi": "\u03C6", "\\chi": "\u03C7", "\\psi": "\u03C8", "\\omega": "\u03C9",
    "\\Gamma": "\u0393", "\\Delta": "\u0394", "\\Theta": "\u0398", "\\Lambda": "\u039B", "\\Xi": "\u039E", "\\Pi": "\u03A0",
    "\\Sigma": "\u03A3", "\\Upsilon": "\u03A5", "\\Phi": "\u03A6", "\\Psi": "\u03A8", "\\Omega": "\u03A9",
    "\\pm": "\u00B1", "\\neg": "\u00AC", "\\lnot": "\u00AC", "\\ldots": "\u2026", "\\ell": "\u2113", "\\prime": "\u2032",
    "\\dprime": "\u2033", "\\trprime": "\u2034", "\\qprime": "\u2057", "\\%": "%", "\\#": "#", "\\$": "$", "\\&": "&", "\\_": "_",
    "\\log": "log", "\\ln": "ln", "\\lg": "lg", "\\exp": "exp", "\\sin": "sin", "\\cos": "cos", "\\tan": "tan", "\\sinh": "sinh",
    "\\cosh": "cosh", "\\tanh": "tanh", "\\arcsin": "arcsin", "\\arccos": "arccos", "\\arctan": "arctan", "\\sec": "sec", "\\csc": "csc",
    "\\cot": "cot"
  });
  var PRIMES = ["\\prime", "\\dprime", "\\trprime", "\\qprime"];

  // latex2mathml's walker: the token list as nodes, up to `end` (a closing token, its node last) or `limit` nodes
  function walk(w, end, limit) {
    var group = [], any = false;
    while (w.i < w.tokens.length) {
      var tok = w.tokens[w.i++], node;
      any = true;
      if (tok === end || tok === "}" || tok === "\\right" || (typeof tok === "string" && tok.slice(0, 5) === "\\end{")) {
        if (tok !== end || limit) { fail(); }
        group.push(tok === "\\right" ? { k: "right", delim: delimiter(next(w)) } : { k: "end" });
        return group;
      }
      if (typeof tok !== "string") {
        node = { k: "text", attrs: TEXTS[tok.command], text: tok.text };
      } else if (tok === "\\left") {
        var open = delimiter(next(w));
        node = { k: "left", delim: open, kids: walk(w, "\\right", 0) };
      } else if (tok === "{") {
        node = { k: "group", kids: walk(w, "}", 0).slice(0, -1) };
      } else if (tok === "_" || tok === "^") {
        node = script(tok, group.length ? group.pop() : { k: "sym", t: "" }, w, end);
      } else if (tok === "'") {
        node = prime(group.length ? group.pop() : { k: "sym", t: "" });
      } else if (tok === "\\frac") {
        node = { k: "frac", kids: walk(w, end, 2) };
      } else if (own(ACCENTS, tok) || tok === "\\mathrm") {
        node = { k: tok === "\\mathrm" ? "roman" : "accent", t: tok, kids: walk(w, end, 1) };
      } else if (tok === "\\sqrt") {
        node = radical(w, end);
      } else if (tok === "\\begin{cases}") {
        node = { k: "cases", kids: walk(w, "\\end{cases}", 0).slice(0, -1) };
        var first = node.kids[0];
        if (first && ((first.k === "sym" && first.t === "[") ||
                      (first.k === "group" && first.kids.every(function (c) { return c.k === "sym" && "lcr|".indexOf(c.t) >= 0; })))) {
          fail();  // latex2mathml reads these as the columns' alignment
        }
      } else if (own(BIG, tok.replace(/[lmr]$/, ""))) {
        var t = next(w);
        if (!own(BIG_TEXT, t)) { fail(); }
        node = { k: "big", t: tok, text: t };
      } else {
        node = { k: "sym", t: tok };
      }
      group.push(node);
      if (limit && group.length >= limit) { return group; }
    }
    if (!any || end || limit) { fail(); }
    return group;
  }
  function next(w) { if (w.i >= w.tokens.length) { fail(); } return w.tokens[w.i++]; }
  function delimiter(tok) { if (!own(DELIMITERS, tok)) { fail(); } return tok; }
  function one(w, end) { return walk(w, end, 1)[0]; }

  function script(tok, prev, w, end) {
    if (tok === "_" && prev.k === "sub") { fail(); }
    if (tok === "^" && prev.k === "sup" && !(prev.kids[1].k === "sym" && prev.kids[1].t === "\\prime")) { fail(); }
    var arg = one(w, end);
    if (tok === "_" && prev.k === "sup") { return { k: "subsup", kids: [prev.kids[0], arg, prev.kids[1]] }; }
    if (tok === "^" && prev.k === "sub") { return { k: "subsup", kids: [prev.kids[0], prev.kids[1], arg] }; }
    if (tok === "^" && prev.k === "sup") { return { k: "sup", kids: [prev.kids[0], { k: "group", kids: [prev.kids[1], arg] }] }; }
    return { k: tok === "_" ? "sub" : "sup", kids: [prev, arg] };
  }
  function prime(prev) {
    var sup = prev.k === "sup" ? prev.kids[1] : null;
    var count = !sup ? 0 : (sup.k === "primes" ? sup.n : (sup.k === "sym" ? PRIMES.indexOf(sup.t) + 1 : 0));
    if (sup && !count) { fail(); }
    if (count) {
      return { k: "sup", kids: [prev.kids[0], count < 4 ? { k: "sym", t: PRIMES[count] } : { k: "primes", n: count + 1 }] };
    }
    if (prev.k === "sub") { return { k: "subsup", kids: [prev.kids[0], prev.kids[1], { k: "sym", t: "\\prime" }] }; }
    return { k: "sup", kids: [prev, { k: "sym", t: "\\prime" }] };
  }
  function radical(w, end) {
    var arg = one(w, end);
    if (!(arg.k === "sym" && arg.t === "[")) { return { k: "sqrt", kids: [arg] }; }
    var index = walk(w, "]", 0).slice(0, -1);
    arg = one(w, end);
    if (!index.length) { return { k: "sqrt", kids: [arg] }; }
    return { k: "root", kids: [arg, index.length > 1 ? { k: "group", kids: index } : index[0]] };
  }

  // latex2mathml's converter: one node as one element; `roman` (inside \mathrm) makes identifiers upright
  function convert(n, roman) {
    var kids = function () { return n.kids.map(function (c) { return convert(c, roman); }); };
    switch (n.k) {
      case "sym": return symbol(n.t, roman);
      case "primes": return ["mi", {}, new Array(n.n + 1).join("\u2032")];
      case "group": return ["mrow", {}].concat(kids());
      case "sub": return ["msub", {}].concat(kids());
      case "sup": return ["msup", {}].concat(kids());
      case "subsup": return ["msubsup", {}].concat(kids());
      case "frac": return ["mfrac", {}].concat(kids());
      case "sqrt": return ["msqrt", {}].concat(kids());
      case "root": return ["mroot", {}].concat(kids());
      case "roman": return convert(n.kids[0], true);
      case "left": return ["mrow", {}, fence(n.delim, "prefix")].concat(kids());
      case "right": return fence(n.delim, "postfix");
      case "text": return ["mtext", table(n.attrs)].concat(n.text ? [n.text.replace(/ /g, "\u00A0")] : []);
      case "big": {
        var size = BIG[n.t.replace(/[lmr]$/, "")], attrs = { minsize: size, maxsize: size };
        if (!own(BIG, n.t)) { attrs.stretchy = "true"; attrs.fence = "true"; }
        return ["mo", attrs, n.text];
      }
      case "accent": {
        var a = ACCENTS[n.t];
        return [a[0], table(a[1]), convert(n.kids[0], roman), ["mo", table(a[3]), a[2]]];
      }
      case "cases": return ["mrow", {}, ["mo", { stretchy: "true", fence: "true", form: "prefix" }, "{"], ["mtable", {}].concat(cases(n.kids))];
      default: return fail();
    }
  }
  function fence(delim, form) {
    var text = DELIMITERS[delim];
    return ["mo", { stretchy: "true", fence: "true", form: form }].concat(text ? [text] : []);
  }
  function cases(nodes) {
    var rows = [], row = null, cell = null;
    function newCell() { cell = ["mtd", { columnalign: "left" }]; row.push(cell); }
    nodes.forEach(function (n) {
      if (!row) { row = ["mtr", {}]; rows.push(row); }
      if (!cell) { newCell(); }
      if (n.k === "sym" && n.t === "&") { newCell(); }
      else if (n.k === "sym" && n.t === "\\\\") { row = ["mtr", {}]; rows.push(row); newCell(); }
      else { cell.push(convert(n, false)); }
    });
    if (cell && cell.length === 2) { rows.pop(); }  // latex2mathml drops a last row whose last cell is empty
    return rows;
  }
  function symbol(t, roman) {
    var mi = function (text) { return ["mi", roman ? { mathvariant: "normal" } : {}].concat(text ? [text] : []); };
    if (own(SPACES, t)) { return ["mspace", { width: SPACES[t] }]; }
    if (own(LIMITS, t)) { return ["mo", {}, t.slice(1)]; }
    if (/^\d/.test(t)) { return ["mn", {}, t]; }
    if (own(OPERATORS, t)) {
      var attrs = {};
      if (t === "\\|") { attrs.fence = "false"; }
      if (own(FENCES, t)) { attrs.stretchy = "false"; }
      return ["mo", attrs, OPERATORS[t]];
    }
    if (t === "\\ " || t === "~") { return ["mtext", {}, "\u00A0"]; }
    if (own(IDENTIFIERS, t)) { return mi(IDENTIFIERS[t]); }
    if (t === "" || t.length > 1 ? t.charAt(0) !== "\\" : /[A-Za-z:;@"`]/.test(t) || t.charCodeAt(0) > 127) { return mi(t); }
    return fail();  // an unknown command; outside `cases`, & and \\
  }

  // site.py's mathml_inner after latex2mathml: a run of one-letter upright <mi> as one word, a number with digit groups as one <mn>
  function tidy(node) {
    if (typeof node === "string") { return node; }
    var kids = node.slice(2).map(tidy), out = [], i = 0;
    while (i < kids.length) {
      var j = i;
      while (j < kids.length && isLetter(kids[j])) { j++; }
      if (j - i >= 2) {
        out.push(["mi", {}, kids.slice(i, j).map(function (k) { return k[2]; }).join("")]);
        i = j;
        continue;
      }
      j = i + 1;
      if (isNumber(kids[i], /^\d+$/)) {
        while (j + 1 < kids.length && isComma(kids[j]) && isNumber(kids[j + 1], /^[\d.]+$/)) { j += 2; }
      }
      out.push(j > i + 1 ? ["mn", {}, kids.slice(i, j).map(function (k) { return k[0] === "mn" ? k[2] : ","; }).join("")] : kids[i]);
      i = j;
    }
    return [node[0], node[1]].concat(out);
  }
  function bare(n, tag) { return typeof n !== "string" && n[0] === tag && Object.keys(n[1]).length === 0; }
  function isLetter(n) {
    return typeof n !== "string" && n[0] === "mi" && n.length === 3 && Object.keys(n[1]).join() === "mathvariant" &&
           n[1].mathvariant === "normal" && Array.from(n[2]).length === 1 && n[2] !== "<" && n[2] !== "&";
  }
  function isNumber(n, digits) { return bare(n, "mn") && n.length === 3 && digits.test(n[2]); }
  function isComma(n) { return bare(n, "mrow") && n.length === 3 && bare(n[2], "mo") && n[2].length === 3 && n[2][2] === ","; }

  // mathml_inner's pre-processing: % as a unit, one upright letter as text, an operator's name as an upright word
  function prepare(latex) {
    var s = "";
    for (var i = 0; i < latex.length; i++) { s += latex[i] === "%" && latex[i - 1] !== "\\" ? "\\%" : latex[i]; }
    s = s.replace(/\\mathrm\{([A-Za-z])\}/g, function (m, letter) { return "\\text{" + letter + "}"; });
    return s.replace(/\\operatorname\{([^{}]*)\}/g, function (m, name) { return "\\mathrm{" + name.split("\\,").join(" ") + "}"; });
  }

  function tree(latex) {
    if (typeof latex !== "string") { return null; }
    try {
      var w = { tokens: tokenize(prepare(latex)), i: 0 };
      return tidy(["mrow", {}].concat(walk(w, null, 0).map(function (n) { return convert(n, false); })));
    } catch (err) {
      return null;
    }
  }

  function element(node, doc) {
    if (!Array.isArray(node) || node.length < 2 || !own(MATHML_ELEMENTS, node[0])) { fail(); }
    var attrs = node[1];
    if (attrs === null || typeof attrs !== "object" || Array.isArray(attrs)) { fail(); }
    var el = doc.createElementNS(NS, node[0]);
    Object.keys(attrs).forEach(function (name) {
      if (!own(MATHML_ATTRIBUTES, name) || typeof attrs[name] !== "string") { fail(); }
      el.setAttribute(name, attrs[name]);
    });
    for (var i = 2; i < node.length; i++) {
      el.appendChild(typeof node[i] === "string" ? doc.createTextNode(node[i]) : element(node[i], doc));
    }
    return el;
  }
  function build(node, doc) {
    try { return element(node, doc); } catch (err) { return null; }
  }

  root.RooflineTexMath = { tree: tree, build: build };
}(typeof window !== "undefined" ? window : globalThis));
