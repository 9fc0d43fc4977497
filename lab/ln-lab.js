/*
 * The Lab's live LayerNorm panel: the blue team normalizes, the red team flips the axis,
 * the witness watches.
 *
 * Layer normalization, Ba, Kiros and Hinton (2016, arXiv:1607.06450), eqs. (3)-(4): each token
 * (a row of H features) is standardized with its own mean and population variance, then
 * scaled and shifted per feature,
 *
 *     y_k = gamma_k * (x_k - mu) / sqrt(sigma^2 + eps) + beta_k.
 *
 * Every number on the panel is recomputed here, from x and the controls, on every input;
 * nothing is looked up. The block x comes from the page's JSON element #lab-data, which
 * normlab.lab_data writes when the book builds. The page includes this file inline as a module
 * (a module script element), so the panel also runs from file://, where module files cannot
 * load.
 */

// ---------------------------------------------------------------- the math (no DOM)

/** Mean, centred values and population variance of one record: normlab.stats's two passes. */
function statistics(values) {
  const shift = values[0]; // any member of the record: keeps the summands small
  const shiftedMean = values.reduce((sum, v) => sum + (v - shift), 0) / values.length;
  const centred = values.map((v) => v - shift - shiftedMean); // x - mu
  // sigma^2 = mean((x - mu)^2): population variance, divide by the count, not count - 1
  const variance = centred.reduce((sum, c) => sum + c * c, 0) / values.length;
  return { mu: shift + shiftedMean, centred, variance };
}

/** (x - mu) / sqrt(sigma^2 + eps) for one record: eps sits inside the square root. */
function standardize(values, eps) {
  const { centred, variance } = statistics(values);
  const denom = Math.sqrt(variance + eps);
  return centred.map((c) => c / denom);
}

/** gamma_k * xhat_k + beta_k, feature by feature. */
function affine(xhat, gamma, beta) {
  return xhat.map((v, k) => v * gamma[k] + beta[k]);
}

function transpose(rows) {
  return rows[0].map((_, k) => rows.map((row) => row[k]));
}

/** The blue team's LayerNorm: every row (token) standardized across its own features. */
function layerNorm(x, gamma, beta, eps) {
  return x.map((row) => affine(standardize(row, eps), gamma, beta));
}

/** The red team's flip: every column (feature) standardized down the batch, like batch-norm. */
function columnNorm(x, gamma, beta, eps) {
  const columns = transpose(x).map((column) => standardize(column, eps));
  return transpose(columns).map((xhat) => affine(xhat, gamma, beta));
}

// ---------------------------------------------------------------- the blue team's witness

/** The first row whose mean is not 0 or whose variance is not 1, described; null if none. */
function offStandard(rows, describe, tol) {
  for (let t = 0; t < rows.length; t += 1) {
    const { mu, variance } = statistics(rows[t]);
    if (!(Math.abs(mu) <= tol.mean_atol)) return `${describe(t)} has mean ${fmt(mu)}, not 0`;
    if (!(Math.abs(variance - 1) <= tol.var_atol)) {
      return `${describe(t)} has variance ${fmt(variance)}, not 1`;
    }
  }
  return null;
}

/**
 * Run `normalize` itself with gamma = 1 and beta = 0 (never reusing the panel's output) and
 * check LayerNorm's promises: every row of the batch at mean 0 and variance 1; every token
 * alone, a batch of one, too; and each token alone equal to itself inside the batch.
 */
function witness(normalize, x, eps, tol) {
  const h = x[0].length;
  const run = (rows) => normalize(rows, Array(h).fill(1), Array(h).fill(0), eps);
  const inBatch = run(x);
  const alone = x.map((row) => run([row])[0]);
  const token = (t) => `token ${t + 1}`;
  const batchProblem = offStandard(inBatch, token, tol);
  const aloneProblem = offStandard(alone, (t) => `${token(t)} alone`, tol);
  let gap = 0;
  let worst = 0;
  alone.forEach((row, t) =>
    row.forEach((v, k) => {
      const g = Math.abs(v - inBatch[t][k]);
      if (!(g <= gap)) [gap, worst] = [g, t];
    }),
  );
  const sameProblem =
    gap <= tol.batch_of_one_atol
      ? null
      : `${token(worst)} alone differs from itself in the batch by ${fmt(gap)}`;
  const count = x.length === 1 ? "the batch of 1" : `the batch of ${x.length}`;
  const checks = [
    { passed: !batchProblem, text: batchProblem || `every row of ${count}: mean 0, variance 1` },
    { passed: !aloneProblem, text: aloneProblem || "every token alone: mean 0, variance 1" },
    { passed: !sameProblem, text: sameProblem || "every token alone equals itself in the batch" },
  ];
  return { ok: checks.every((c) => c.passed), checks };
}

// ---------------------------------------------------------------- formatting

const SUPERSCRIPTS = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴" };
Object.assign(SUPERSCRIPTS, { 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" });

const minus = (text) => text.replace("-", "−"); // U+2212, the typographic minus

/** Four significant digits; powers of ten written out beyond 10^5 or below 10^-2. */
function fmt(v, digits = 4) {
  if (v === 0) return "0";
  if (!Number.isFinite(v)) return String(v);
  const [mantissa, exponent] = v.toExponential(digits - 1).split("e");
  const e = Number(exponent);
  if (e >= -2 && e < 5) return minus(String(Number(v.toPrecision(digits))));
  const power = [...String(e)].map((c) => SUPERSCRIPTS[c]).join("");
  return `${minus(String(Number(mantissa)))} × 10${power}`;
}

/** A fixed number of decimals, without a "−0.000". */
function fixed(v, decimals) {
  const text = v.toFixed(decimals);
  return Number(text) === 0 ? (0).toFixed(decimals) : minus(text);
}

// ---------------------------------------------------------------- the page

const $ = (id) => document.getElementById(id);

function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

function readData() {
  const block = $("lab-data");
  if (!block) throw new Error("lab: the page carries no #lab-data element (normlab.lab_data)");
  const data = JSON.parse(block.textContent);
  if (!data.x.length || data.x.some((row) => row.length !== data.x[0].length)) {
    throw new Error("lab: #lab-data holds no rectangular block x");
  }
  return data;
}

function setRows(tbody, rows) {
  tbody.replaceChildren(...rows);
}

/** One table row per token: the token's number, then its cells. */
function matrixRows(block, show, shade) {
  return block.map((row, t) => {
    const tr = element("tr");
    tr.append(element("th", { scope: "row" }, String(t + 1)));
    row.forEach((v, k) => {
      const td = element("td", { "data-value": String(v), "data-feature": String(k + 1) }, show(v));
      if (shade) {
        td.dataset.sign = v < 0 ? "-" : "+";
        td.style.setProperty("--lab-shade", String(Math.min(1, Math.abs(v) / 3)));
      }
      tr.append(td);
    });
    return tr;
  });
}

const SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉";

/** The header of a block: "token", then x₁ ... x_H. */
function matrixHeader(table, symbol, h) {
  const tr = element("tr");
  tr.append(element("th", { scope: "col" }, "token"));
  for (let k = 1; k <= h; k += 1) {
    const index = [...String(k)].map((c) => SUBSCRIPTS[Number(c)]).join("");
    tr.append(element("th", { scope: "col" }, `${symbol}${index}`));
  }
  table.tHead.replaceChildren(tr);
}

/** One table row per token carrying its statistics in data- attributes (full precision). */
function statsRow(t, stats) {
  const tr = element("tr");
  tr.append(element("th", { scope: "row" }, String(t + 1)));
  for (const [name, value, show] of stats) {
    tr.setAttribute(`data-${name}`, String(value));
    if (show) tr.append(element("td", {}, show(value)));
  }
  return tr;
}

function columnFooter(x) {
  const columns = transpose(x).map(statistics);
  const line = (label, pick) => {
    const tr = element("tr");
    tr.append(element("th", { scope: "row" }, label));
    for (const c of columns) {
      tr.append(element("td", { "data-value": String(pick(c)) }, fmt(pick(c))));
    }
    return tr;
  };
  return [line("col μ", (c) => c.mu), line("col σ²", (c) => c.variance)];
}

function numberInput(id, label, value) {
  const input = element("input", { id, type: "number", step: "0.1", "aria-label": label });
  input.value = String(value);
  return input;
}

/** The per-feature gamma and beta table: one column per feature. */
function buildPerFeature(h) {
  const table = element("table", { class: "lab-params" });
  table.append(element("caption", {}, "Per-feature gain γ and bias β"));
  const head = element("tr");
  head.append(element("td"));
  for (let k = 1; k <= h; k += 1) head.append(element("th", { scope: "col" }, `feature ${k}`));
  table.append(element("thead"), element("tbody"));
  table.tHead.append(head);
  for (const [name, symbol, value] of [["gamma", "γ", 1], ["beta", "β", 0]]) {
    const tr = element("tr");
    tr.append(element("th", { scope: "row" }, symbol));
    for (let k = 1; k <= h; k += 1) {
      const td = element("td");
      td.append(numberInput(`lab-${name}-${k}`, `${symbol}, feature ${k}`, value));
      tr.append(td);
    }
    table.tBodies[0].append(tr);
  }
  $("lab-per-feature-params").replaceChildren(table);
}

/** A finite number from an input, or null (and the input marked invalid) while it is not one. */
function readNumber(input) {
  const value = Number(input.value);
  const valid = input.value.trim() !== "" && Number.isFinite(value);
  if (valid) input.removeAttribute("aria-invalid");
  else input.setAttribute("aria-invalid", "true");
  return valid ? value : null;
}

const allEqual = (values) => values.every((v) => v === values[0]);

/** Recompute everything from x and the state, and show it. */
function render(data, state) {
  const x = data.x.slice(0, state.tokens);
  const normalize = state.redTeam ? columnNorm : layerNorm;
  const y = normalize(x, state.gamma, state.beta, data.eps);

  const lab = $("ln-lab");
  lab.dataset.axis = state.axis;
  lab.dataset.redTeam = state.redTeam ? "on" : "off";

  setRows($("lab-raw-block").tBodies[0], matrixRows(x, (v) => fmt(v)));
  const foot = $("lab-raw-block").tFoot;
  setRows(foot, columnFooter(x));
  foot.hidden = state.axis !== "cols";
  const rawStats = x.map(statistics).map((s, t) =>
    statsRow(t, [
      ["mu", s.mu, fmt],
      ["var", s.variance, fmt],
    ]),
  );
  setRows($("lab-raw-stats").tBodies[0], rawStats);

  setRows($("lab-out-block").tBodies[0], matrixRows(y, (v) => fixed(v, 3), true));
  const outStats = y.map(statistics).map((s, t) =>
    statsRow(t, [
      ["mu", s.mu, (v) => fixed(v, 4)],
      ["sigma", Math.sqrt(s.variance), (v) => fixed(v, 4)],
      ["var", s.variance, null],
    ]),
  );
  setRows($("lab-out-stats").tBodies[0], outStats);

  renderNotes(state, x.length, x[0].length);
  renderWitness(witness(normalize, x, data.eps, data.witness));
}

function renderNotes(state, count, h) {
  const single = count === 1;
  $("lab-axis-note").textContent =
    state.axis === "rows"
      ? `Layer-norm reads along each row: the ${h} numbers of one token give that token's ` +
        "μ and σ² (the table beside the block). No other token is read."
      : "Batch-norm would read down each column: one μ and σ² per feature, shared by " +
        (single ? "the single token" : `all ${count} tokens`) +
        " (the two rows under the block)." +
        (single ? " A batch of one leaves each column a single number: σ² = 0." : "");

  let out;
  if (state.redTeam) {
    out =
      "The red team flipped the axis: each column was standardized down the batch. The " +
      "rows' μ and σ no longer follow β and |γ|" +
      (single ? "; a lone token collapses to β, with σ = 0." : ".");
  } else if (allEqual(state.gamma) && allEqual(state.beta)) {
    out =
      `Every row lands at μ = β = ${fmt(state.beta[0])} and σ = |γ| = ` +
      `${fmt(Math.abs(state.gamma[0]))}, whatever its raw scale and however many tokens ` +
      "share the batch.";
  } else {
    out =
      "Per-feature γ and β: after the affine step a row's mean is the average of " +
      "γ_k·x̂_k + β_k, so the rows no longer share one μ and one σ.";
  }
  $("lab-out-note").textContent = out;

  $("lab-flow-text").textContent = state.redTeam
    ? "Red team: each column minus the column's μ, over √(σ² + ε), then × γ + β"
    : "Layer-norm: each row minus its own μ, over √(σ² + ε), then × γ + β";
}

/** The badge: its state and its checks; rewritten only when its text changes (aria-live). */
function renderWitness(verdict) {
  const badge = $("lab-witness");
  const state = verdict.ok ? "ok" : "alarm";
  const headline = verdict.ok
    ? "Witness: LayerNorm's promises hold (checked with γ = 1, β = 0)."
    : "Witness: alarm! The output is not standardized row by row.";
  const fresh = element("div");
  const list = element("ul", { class: "lab-witness-checks" });
  for (const check of verdict.checks) {
    const mark = check.passed ? "✓" : "✗";
    list.append(element("li", { "data-passed": String(check.passed) }, `${mark} ${check.text}`));
  }
  fresh.append(element("p", { class: "lab-witness-verdict" }, headline), list);
  if (fresh.textContent !== badge.textContent || badge.dataset.state !== state) {
    badge.replaceChildren(...fresh.childNodes);
  }
  badge.dataset.state = state;
}

/** Connect every control to the state; each change re-renders the panel. */
function wire(data, state) {
  const h = data.x[0].length;
  const maxTokens = data.x.length;
  const update = () => render(data, state);
  const tokens = $("lab-tokens");
  const setTokens = (value) => {
    state.tokens = Math.max(1, Math.min(maxTokens, Math.round(value)));
  };

  // the number of tokens: typed, or stepped with the arrow keys
  tokens.addEventListener("input", () => {
    const value = readNumber(tokens);
    if (value === null) return;
    setTokens(value);
    update();
  });
  tokens.addEventListener("change", () => {
    tokens.value = String(state.tokens); // the clamped value, once editing ends
    tokens.removeAttribute("aria-invalid");
  });

  // one gamma and one beta: a number field and a slider in step; each sets every feature
  for (const name of ["gamma", "beta"]) {
    const field = $(`lab-${name}`);
    const slider = $(`lab-${name}-range`);
    const setAll = (value) => {
      state[name] = Array(h).fill(value);
      for (let k = 1; k <= h; k += 1) $(`lab-${name}-${k}`).value = String(value);
      update();
    };
    for (const event of ["input", "change"]) {
      field.addEventListener(event, () => {
        const value = readNumber(field);
        if (value === null) return;
        slider.value = String(value);
        setAll(value);
      });
      slider.addEventListener(event, () => {
        field.value = slider.value;
        field.removeAttribute("aria-invalid");
        setAll(Number(slider.value));
      });
    }
    // one per feature
    for (let k = 1; k <= h; k += 1) {
      const input = $(`lab-${name}-${k}`);
      input.addEventListener("input", () => {
        const value = readNumber(input);
        if (value === null) return;
        state[name][k - 1] = value;
        update();
      });
    }
  }

  const perFeature = $("lab-per-feature");
  perFeature.addEventListener("change", () => {
    $("lab-per-feature-params").hidden = !perFeature.checked;
    if (!perFeature.checked) {
      // back to one gamma and one beta for every feature: the scalar fields' values
      for (const name of ["gamma", "beta"]) {
        const value = readNumber($(`lab-${name}`)) ?? state[name][0];
        state[name] = Array(h).fill(value);
        for (let k = 1; k <= h; k += 1) $(`lab-${name}-${k}`).value = String(value);
      }
    }
    update();
  });

  for (const radio of document.querySelectorAll('input[name="lab-axis"]')) {
    radio.addEventListener("change", () => {
      if (radio.checked) state.axis = radio.value;
      update();
    });
  }

  const redTeam = $("lab-red-team");
  const setRedTeam = (on) => {
    state.redTeam = on;
    redTeam.setAttribute("aria-pressed", String(on));
    update();
  };
  redTeam.addEventListener("click", () => setRedTeam(!state.redTeam));

  // the misconception cards' "try it" buttons set the panel up, then bring it into view
  for (const button of document.querySelectorAll("[data-lab-try]")) {
    button.addEventListener("click", () => {
      setTokens(1);
      tokens.value = "1";
      setRedTeam(button.dataset.labTry === "flip-one-token");
      const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      $("ln-lab").scrollIntoView({ behavior: still ? "auto" : "smooth", block: "start" });
    });
  }
}

function start() {
  const data = readData();
  const h = data.x[0].length;
  const state = {
    tokens: data.x.length, // 1 .. all the tokens of the block
    gamma: Array(h).fill(1), // per feature; the scalar controls set them all
    beta: Array(h).fill(0),
    axis: "rows", // how the raw block is read on screen: "rows" (LN) or "cols" (BN)
    redTeam: false, // true: the normalization itself runs down the columns
  };
  const tokens = $("lab-tokens");
  tokens.max = String(data.x.length);
  tokens.value = String(data.x.length);
  buildPerFeature(h);
  matrixHeader($("lab-raw-block"), "x", h);
  matrixHeader($("lab-out-block"), "y", h);
  wire(data, state);
  render(data, state);
  $("ln-lab").dataset.ready = "true";
}

start();
