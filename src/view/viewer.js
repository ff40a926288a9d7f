// tafl-lab game viewer. The data (see src/view/page.rs) holds each game's moves with the
// squares each move captured, computed by the rules in Rust; this script only moves pieces,
// removes the captured ones and draws. No network, no other file.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var DATA = JSON.parse(document.getElementById("data").textContent);
  var CELL = 40, MARGIN = 22;
  var state = { game: 0, ply: 0 };
  var parsedGames = {};

  function $(id) { return document.getElementById(id); }
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function sqIndex(name, n) {
    return (parseInt(name.slice(1), 10) - 1) * n + (name.charCodeAt(0) - 97);
  }
  function sqName(i, n) {
    return String.fromCharCode(97 + (i % n)) + (Math.floor(i / n) + 1);
  }
  var PIECE = { a: "attacker", d: "defender", k: "king" };
  var SIDE_NAME = { attackers: "Attackers", defenders: "Defenders" };
  function other(side) { return side === "attackers" ? "defenders" : "attackers"; }

  // Boards after every ply, built once per game from the moves and their captures.
  function parsed(gi) {
    if (parsedGames[gi]) return parsedGames[gi];
    var g = DATA.games[gi], v = DATA.variants[g.v], n = v.size;
    var tokens = g.moves ? g.moves.split(" ") : [];
    var boards = [v.start.split("")], plies = [];
    tokens.forEach(function (tok) {
      var parts = tok.split("x"), ft = parts[0].split("-");
      var from = sqIndex(ft[0], n), to = sqIndex(ft[1], n);
      var b = boards[boards.length - 1].slice();
      b[to] = b[from];
      b[from] = ".";
      var caps = (parts[1] ? parts[1].split("/") : []).map(function (c) {
        var i = sqIndex(c, n), p = b[i];
        b[i] = ".";
        return { sq: i, piece: p };
      });
      plies.push({ from: from, to: to, caps: caps, text: ft[0] + "-" + ft[1] });
      boards.push(b);
    });
    parsedGames[gi] = { game: g, variant: v, n: n, boards: boards, plies: plies };
    return parsedGames[gi];
  }

  function center(i, n) {
    return [MARGIN + (i % n) * CELL + CELL / 2, MARGIN + (n - 1 - Math.floor(i / n)) * CELL + CELL / 2];
  }

  function drawBoard(pg, ply) {
    var n = pg.n, v = pg.variant, size = n * CELL + 2 * MARGIN;
    var svg = el("svg", { id: "board", viewBox: "0 0 " + size + " " + size, "data-size": n, role: "img", "aria-label": v.name + " board" });
    var squares = el("g", { id: "squares" }, svg);
    for (var i = 0; i < n * n; i++) {
      var kind = { t: "throne", c: "corner", m: "camp" }[v.squares[i]] || "plain";
      var c = center(i, n), x = c[0] - CELL / 2, y = c[1] - CELL / 2;
      el("rect", { class: "sq " + kind, x: x, y: y, width: CELL, height: CELL, "data-sq": sqName(i, n) }, squares);
      if (kind === "throne" || kind === "corner") {
        el("path", { class: "mark", d: "M" + (x + 6) + " " + (y + 6) + "L" + (x + CELL - 6) + " " + (y + CELL - 6) + "M" + (x + CELL - 6) + " " + (y + 6) + "L" + (x + 6) + " " + (y + CELL - 6) }, squares);
      }
    }
    for (var f = 0; f < n; f++) {
      var t = el("text", { class: "coord", x: MARGIN + f * CELL + CELL / 2, y: size - MARGIN / 2 }, svg);
      t.textContent = String.fromCharCode(97 + f);
      var t2 = el("text", { class: "coord", x: MARGIN / 2, y: MARGIN + (n - 1 - f) * CELL + CELL / 2 }, svg);
      t2.textContent = f + 1;
    }
    var last = ply > 0 ? pg.plies[ply - 1] : null;
    if (last) {
      var a = center(last.from, n), b = center(last.to, n);
      el("rect", { class: "last-to", x: b[0] - CELL / 2, y: b[1] - CELL / 2, width: CELL, height: CELL, "data-sq": sqName(last.to, n) }, svg);
      el("rect", { class: "last-from", x: a[0] - CELL / 2 + 2, y: a[1] - CELL / 2 + 2, width: CELL - 4, height: CELL - 4, "data-sq": sqName(last.from, n) }, svg);
    }
    var board = pg.boards[ply], pieces = el("g", { id: "pieces" }, svg), r = CELL * 0.38;
    for (var j = 0; j < n * n; j++) {
      var p = board[j];
      if (p === ".") continue;
      var cc = center(j, n);
      el("circle", { class: "piece " + PIECE[p], cx: cc[0], cy: cc[1], r: r, "data-sq": sqName(j, n) }, pieces);
      if (p === "k") {
        el("path", { class: "crown", d: "M" + (cc[0] - 8) + " " + cc[1] + "H" + (cc[0] + 8) + "M" + cc[0] + " " + (cc[1] - 8) + "V" + (cc[1] + 8) }, pieces);
      }
    }
    if (last) {
      last.caps.forEach(function (cap) {
        var g = el("g", { class: "captured", "data-sq": sqName(cap.sq, n), "data-piece": PIECE[cap.piece] || "" }, svg), c = center(cap.sq, n);
        el("circle", { class: "ghost " + (PIECE[cap.piece] || ""), cx: c[0], cy: c[1], r: r }, g);
        var d = CELL * 0.3;
        el("path", { d: "M" + (c[0] - d) + " " + (c[1] - d) + "L" + (c[0] + d) + " " + (c[1] + d) + "M" + (c[0] + d) + " " + (c[1] - d) + "L" + (c[0] - d) + " " + (c[1] + d) }, g);
      });
    }
    // A captured king stays on its square (as the rules leave it); it gets the capture mark.
    if (ply === pg.plies.length && pg.game.reason === "king_captured") {
      var ks = board.indexOf("k");
      if (ks >= 0) {
        var kg = el("g", { class: "captured", "data-sq": sqName(ks, n), "data-piece": "king" }, svg), kc = center(ks, n), kd = CELL * 0.3;
        el("path", { d: "M" + (kc[0] - kd) + " " + (kc[1] - kd) + "L" + (kc[0] + kd) + " " + (kc[1] + kd) + "M" + (kc[0] + kd) + " " + (kc[1] - kd) + "L" + (kc[0] - kd) + " " + (kc[1] + kd) }, kg);
      }
    }
    var note = pg.game.notes && pg.game.notes[ply];
    if (note && note.length > 1) {
      var hints = el("g", { id: "hints" }, svg);
      for (var k = 1; k + 1 < note.length && k < 7; k += 2) {
        var ft = note[k].split("-"), share = note[k + 1];
        var s = center(sqIndex(ft[0], n), n), e = center(sqIndex(ft[1], n), n);
        var line = el("path", { class: "hint", d: "M" + s[0] + " " + s[1] + "L" + e[0] + " " + e[1], "stroke-width": 2 + 10 * share, opacity: 0.3 + 0.6 * share, "data-move": note[k] }, hints);
        line.appendChild(document.createElementNS(NS, "title")).textContent = note[k] + " " + Math.round(100 * share) + "%";
        el("circle", { class: "hint-head", cx: e[0], cy: e[1], r: 4 + 6 * share, opacity: 0.3 + 0.6 * share }, hints);
      }
    }
    var wrap = $("board-wrap");
    wrap.innerHTML = "";
    wrap.appendChild(svg);
  }

  function sideToMove(pg, ply) {
    return ply % 2 === 0 ? pg.variant.first : other(pg.variant.first);
  }

  function drawAnalysis(pg, ply) {
    var box = $("analysis"), notes = pg.game.notes;
    box.innerHTML = "";
    if (!notes) return;
    var h = document.createElement("h2");
    h.textContent = "Search";
    box.appendChild(h);
    var note = notes[ply], p = document.createElement("p");
    p.id = "value";
    box.appendChild(p);
    if (!note) {
      p.textContent = ply >= pg.plies.length ? "The game is over." : "No search recorded at this position.";
      return;
    }
    var side = sideToMove(pg, ply);
    p.textContent = "Value for " + side + " (to move): " + (note[0] >= 0 ? "+" : "") + note[0].toFixed(2) + (note.length > 1 ? "" : " (fast search, no policy)");
    if (note.length < 2) return;
    var table = document.createElement("table");
    table.id = "top-moves";
    var played = ply < pg.plies.length ? pg.plies[ply].text : null;
    for (var k = 1; k + 1 < note.length; k += 2) {
      var tr = table.insertRow();
      tr.dataset.move = note[k];
      if (note[k] === played) tr.className = "played";
      tr.insertCell().textContent = note[k];
      tr.insertCell().textContent = (100 * note[k + 1]).toFixed(1) + "%";
      var bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = Math.max(1, Math.round(80 * note[k + 1])) + "px";
      tr.insertCell().appendChild(bar);
    }
    box.appendChild(table);
    if (played) {
      var q = document.createElement("p");
      q.textContent = "Played: " + played;
      box.appendChild(q);
    }
  }

  function fillMoves(pg) {
    var ol = $("moves");
    ol.innerHTML = "";
    pg.plies.forEach(function (p, i) {
      var li = document.createElement("li");
      li.dataset.ply = i + 1;
      li.textContent = (i + 1) + ". " + p.text;
      if (p.caps.length) li.className = "cap";
      li.addEventListener("click", function () { go(state.game, i + 1); });
      ol.appendChild(li);
    });
  }

  function showGame(gi) {
    var pg = parsed(gi);
    $("game-title").textContent = (gi + 1) + ". " + pg.game.label + " (" + pg.variant.name + ")";
    fillMoves(pg);
    var slider = $("slider");
    slider.max = pg.plies.length;
    Array.prototype.forEach.call(document.querySelectorAll("#games li"), function (li) {
      li.classList.toggle("cur", +li.dataset.game === gi);
    });
  }

  function go(gi, ply) {
    gi = Math.max(0, Math.min(DATA.games.length - 1, gi | 0));
    var changed = gi !== state.game || !$("board");
    state.game = gi;
    if (changed) showGame(gi);
    var pg = parsed(gi), total = pg.plies.length;
    ply = Math.max(0, Math.min(total, ply | 0));
    state.ply = ply;
    drawBoard(pg, ply);
    drawAnalysis(pg, ply);
    $("counter").textContent = "ply " + ply + " / " + total;
    $("slider").value = ply;
    var status = $("status");
    if (ply === total && pg.game.result !== "unfinished") {
      status.textContent = pg.game.end;
      status.className = "final";
    } else if (ply === total) {
      status.textContent = pg.game.end + "; " + sideToMove(pg, ply) + " to move";
      status.className = "final";
    } else {
      status.textContent = SIDE_NAME[sideToMove(pg, ply)] + " to move";
      status.className = "";
    }
    var last = ply > 0 ? pg.plies[ply - 1] : null;
    $("captures").textContent = last && last.caps.length
      ? "Captured by " + last.text + ": " + last.caps.map(function (c) { return sqName(c.sq, pg.n) + " (" + PIECE[c.piece] + ")"; }).join(", ")
      : "";
    Array.prototype.forEach.call(document.querySelectorAll("#moves li"), function (li) {
      var cur = +li.dataset.ply === ply;
      li.classList.toggle("cur", cur);
      if (cur && li.scrollIntoView) li.scrollIntoView({ block: "nearest" });
    });
    if (history.replaceState) history.replaceState(null, "", "#game=" + (gi + 1) + "&ply=" + ply);
  }

  function onKey(e) {
    if (e.target && e.target.id === "slider") return;
    var total = parsed(state.game).plies.length, handled = true;
    switch (e.key) {
      case "ArrowRight": go(state.game, state.ply + 1); break;
      case "ArrowLeft": go(state.game, state.ply - 1); break;
      case "Home": go(state.game, 0); break;
      case "End": go(state.game, total); break;
      case "ArrowDown": case "PageDown": go(state.game + 1, 0); break;
      case "ArrowUp": case "PageUp": go(state.game - 1, 0); break;
      default: handled = false;
    }
    if (handled && e.preventDefault) e.preventDefault();
  }

  function params() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) out[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }

  function init() {
    document.title = DATA.title;
    $("game-count").textContent = DATA.games.length;
    var list = $("games");
    DATA.games.forEach(function (g, i) {
      var li = document.createElement("li");
      li.dataset.game = i;
      li.className = g.result;
      li.textContent = (i + 1) + ". " + g.listed;
      li.addEventListener("click", function () { go(i, 0); });
      list.appendChild(li);
    });
    $("first").addEventListener("click", function () { go(state.game, 0); });
    $("prev").addEventListener("click", function () { go(state.game, state.ply - 1); });
    $("next").addEventListener("click", function () { go(state.game, state.ply + 1); });
    $("last").addEventListener("click", function () { go(state.game, parsed(state.game).plies.length); });
    $("slider").addEventListener("input", function () { go(state.game, +this.value); });
    document.addEventListener("keydown", onKey);
    var p = params();
    go((parseInt(p.game, 10) || 1) - 1, parseInt(p.ply, 10) || 0);
    window.addEventListener("hashchange", function () {
      var q = params();
      if (q.game || q.ply) go((parseInt(q.game, 10) || 1) - 1, parseInt(q.ply, 10) || 0);
    });
    if (p.keys) {
      p.keys.split(",").forEach(function (key) {
        document.body.dispatchEvent(new KeyboardEvent("keydown", { key: key, bubbles: true, cancelable: true }));
      });
    }
    document.body.setAttribute("data-ready", "1");
  }

  init();
})();
