// The routecalc page: pick, paste or upload a position, solve it, show the board,
// the routes and their revenue. Plain DOM code against the service's /v1 API.
"use strict";

const $ = (id) => document.getElementById(id);

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.className = kind || "";
}

async function apiError(response) {
  let body = null;
  try { body = await response.json(); } catch (e) { /* not JSON */ }
  if (body && body.error) return `${response.status}: ${body.error}`;
  return `${response.status} ${response.statusText}`;
}

async function loadChoices() {
  const [fixtures, health] = await Promise.all([
    fetch("/v1/fixtures").then((r) => r.json()),
    fetch("/healthz").then((r) => r.json()),
  ]);
  for (const f of fixtures) {
    const who = f.company ? `, ${f.company}: ${f.trains.join(", ")}` : "";
    const option = new Option(`${f.name} (${f.game}${who})`, f.name);
    $("fixture").add(option);
  }
  for (const name of health.solvers) {
    $("solver").add(new Option(name, name, false, name === health.default_solver));
  }
  $("time-limit").max = health.max_time_limit;
}

async function pickFixture() {
  const name = $("fixture").value;
  if (!name) return;
  const response = await fetch(`/v1/fixtures/${encodeURIComponent(name)}`);
  if (!response.ok) { setStatus(await apiError(response), "error"); return; }
  $("position").value = JSON.stringify(await response.json(), null, 1);
  setStatus(`Example ${name} loaded: press Solve.`);
}

function uploadFile() {
  const file = $("upload").files[0];
  if (!file) return;
  file.text().then((text) => {
    $("position").value = text;
    $("fixture").value = "";
    setStatus(`${file.name} loaded: press Solve.`);
  });
}

// Table rows as [label, path, revenue]: a company's routes, or 18XS's transports.
function drawnLines(answer) {
  return (answer.routes || []).map((route) => {
    const skip = new Set(route.skip || []);
    return [route.train, route.nodes.map((n) => (skip.has(n) ? `(${n})` : n)).join(" – "), route.revenue];
  }).concat((answer.plan || []).map((t) => [`${t.cube.color} cube`, `${t.cells.join(" – ")} (${t.to_kind})`, t.income]));
}

function showTable(answer) {
  const body = $("revenue").tBodies[0];
  body.replaceChildren();
  const lines = $("board").querySelectorAll("polyline.route");
  const rows = drawnLines(answer);
  rows.forEach(([label, path, revenue], k) => {
    const row = body.insertRow();
    const train = row.insertCell();
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    if (lines[k]) swatch.style.background = lines[k].style.stroke;
    train.append(swatch, label);
    row.insertCell().textContent = path;
    row.insertCell().textContent = revenue;
  });
  for (const part of answer.parts || []) {  // revenue that is not a route's (18Cuba's sugar, fees, ...)
    const row = body.insertRow();
    row.className = "part";
    row.insertCell().textContent = part.name;
    row.insertCell().textContent = part.detail;
    row.insertCell().textContent = part.amount;
  }
  if (!rows.length && !(answer.parts || []).length) {
    const row = body.insertRow();
    row.insertCell().textContent = "–";
    row.insertCell().textContent = "no train can run";
    row.insertCell().textContent = "0";
  }
  $("revenue-total").textContent = answer.revenue;
  $("revenue").hidden = false;
}

// A new solve makes the last answer stale: it leaves the page, so that an
// error never shows under another position's board and revenue.
function clearAnswer() {
  $("board").innerHTML = "";
  $("revenue").hidden = true;
  delete $("status").dataset.revenue;
  delete $("status").dataset.state;
}

async function solve() {
  clearAnswer();
  const text = $("position").value.trim();
  if (!text) { setStatus("Paste, upload or pick a position first.", "error"); return; }
  let position;
  try { position = JSON.parse(text); } catch (e) { setStatus(`Not JSON: ${e.message}`, "error"); return; }
  const params = new URLSearchParams();
  if ($("solver").value) params.set("solver", $("solver").value);
  if ($("time-limit").value) params.set("time_limit", $("time-limit").value);
  $("solve").disabled = true;
  setStatus("Solving…", "busy");
  const started = performance.now();
  try {
    const response = await fetch(`/v1/solve?${params}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: text,
    });
    if (!response.ok) { setStatus(await apiError(response), "error"); return; }
    const answer = await response.json();
    const board = await fetch("/v1/render", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ position, routes: answer.routes || answer.plan }),
    });
    if (!board.ok) { setStatus(await apiError(board), "error"); return; }
    $("board").innerHTML = await board.text();
    showTable(answer);
    const seconds = ((performance.now() - started) / 1000).toFixed(2);
    setStatus(`${answer.company || answer.game}: revenue ${answer.revenue}, ${answer.status} (bound ${answer.bound}), ` +
              `solver ${answer.solver}, solved in ${answer.elapsed.toFixed(3)} s (${seconds} s with drawing)`,
              answer.status === "optimal" ? "done" : "busy");
    if (answer.connect) {  // 18C2C's destination proof
      const c = answer.connect;
      const said = c.possible === null ? "unknown (time limit)" : !c.possible ? "impossible"
        : `possible with the ${c.route.train}${c.unfolded ? " unfolded" : ""}: ${c.route.nodes.join(" – ")}`;
      $("status").textContent += `; connect ${said}`;
    }
    $("status").dataset.revenue = answer.revenue;
    $("status").dataset.state = answer.status;
  } catch (e) {
    setStatus(`Request failed: ${e.message}`, "error");
  } finally {
    $("solve").disabled = false;
  }
}

$("fixture").addEventListener("change", pickFixture);
$("upload").addEventListener("change", uploadFile);
$("solve").addEventListener("click", solve);
loadChoices().catch((e) => setStatus(`Cannot reach the service: ${e.message}`, "error"));
