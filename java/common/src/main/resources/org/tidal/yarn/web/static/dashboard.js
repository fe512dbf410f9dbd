// Tidal's dashboard: the queue tree, shares over time, latency-queue bursts and admission
// decisions, drawn with uPlot from the core's status and history JSON. Live on the RM (polls the
// RM web app's Tidal routes) or static in a simulator report (window.TIDAL_DATA holds a finished
// run's status and history).
(function () {
  "use strict";

  var POLL_MS = 2000;
  // Samples a live page keeps: one hour at the RM's default one-second interval (a report shows
  // every sample of its run).
  var MAX_SAMPLES = 3600;
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

  var samples = [];
  var bursts = [];
  var admissions = [];
  var status = null;
  var nowMs = 0;
  var charts = {};

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%"; }
  function secs(ms) { return ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1); }
  // A queue keeps its colour in every chart: its place among all sampled queues (set by render).
  var colourOrder = [];
  function colour(name) {
    var i = colourOrder.indexOf(name);
    return PALETTE[Math.max(0, i) % PALETTE.length];
  }

  // Queues of the status sorted so that a parent precedes its children: the tree, flattened.
  function queueRows() {
    return status.queues.slice().sort(function (a, b) { return a.name < b.name ? -1 : 1; });
  }

  function renderSummary() {
    var s = document.getElementById("summary");
    var used = status.used, cluster = status.cluster;
    var share = Math.max(cluster.memory_mb ? used.memory_mb / cluster.memory_mb : 0,
      cluster.vcores ? used.vcores / cluster.vcores : 0);
    s.textContent = "policy " + status.policy + " / " + status.app_policy + " · " + status.nodes +
      " nodes · " + cluster.memory_mb + " MB, " + cluster.vcores + " vcores · utilisation " +
      pct(share) + " · " + status.apps + " apps · scheduler time " + secs(nowMs) + " s" +
      (window.TIDAL_DATA ? " · " + (window.TIDAL_DATA.title || "simulation") : " · live");
  }

  function shareBar(q, guaranteedShare) {
    var bar = el("div", { "class": "bar", "title": "used " + pct(q.dominant_share) + ", fair " +
      pct(q.fair_share) + (guaranteedShare !== null ? ", guaranteed " + pct(guaranteedShare) : "") });
    var used = el("div", { "class": "used" });
    used.style.width = Math.min(100, 100 * q.dominant_share) + "%";
    bar.appendChild(used);
    var fair = el("div", { "class": "fair" });
    fair.style.left = Math.min(100, 100 * q.fair_share) + "%";
    bar.appendChild(fair);
    if (guaranteedShare !== null) {
      var g = el("div", { "class": "guaranteed" });
      g.style.left = Math.min(100, 100 * guaranteedShare) + "%";
      bar.appendChild(g);
    }
    return bar;
  }

  function guaranteedShareOf(q) {
    if (!q.guaranteed) { return null; }
    var c = status.cluster;
    return Math.max(c.memory_mb ? q.guaranteed.memory_mb / c.memory_mb : 0,
      c.vcores ? q.guaranteed.vcores / c.vcores : 0);
  }

  function renderQueues() {
    var body = document.querySelector("#queues tbody");
    body.textContent = "";
    queueRows().forEach(function (q) {
      var phase = q.burst ? q.burst.phase : null;
      var tr = el("tr", { "data-queue": q.name, "data-class": q["class"],
        "data-burst-phase": phase || "none" });
      var depth = q.name.split(".").length - 2;
      var name = el("td", { "title": q.admission_reason }, q.name);
      name.style.paddingLeft = (8 + 16 * Math.max(0, depth)) + "px";
      tr.appendChild(name);
      tr.appendChild(el("td", {}, q.type));
      tr.appendChild(el("td", { "class": "class-" + q["class"], "title": q.admission_reason },
        q["class"]));
      tr.appendChild(el("td", { "class": "num" }, q.weight));
      var barCell = el("td");
      barCell.appendChild(shareBar(q, guaranteedShareOf(q)));
      tr.appendChild(barCell);
      tr.appendChild(el("td", { "class": "num" }, pct(q.long_term_share)));
      tr.appendChild(el("td", { "class": phase ? "phase-" + phase : "" }, phase || "–"));
      var deadline = q.burst && q.burst.deadline_at_ms !== null && q.burst.deadline_at_ms !== undefined
        ? secs(q.burst.deadline_at_ms) + " s (" + secs(q.burst.deadline_at_ms - nowMs) + " s left)"
        : "–";
      tr.appendChild(el("td", {}, deadline));
      tr.appendChild(el("td", { "class": "num" }, q.apps));
      tr.appendChild(el("td", { "class": "num" }, q.running_containers));
      tr.appendChild(el("td", { "class": "num" }, q.pending_containers));
      body.appendChild(tr);
    });
  }

  function renderBursts() {
    var body = document.querySelector("#bursts tbody");
    body.textContent = "";
    bursts.forEach(function (b) {
      var state = b.ended_ms === null ? "on" : "ended";
      var tr = el("tr", { "data-queue": b.queue, "data-state": state });
      tr.appendChild(el("td", {}, b.queue));
      tr.appendChild(el("td", { "class": "num" }, secs(b.started_ms)));
      tr.appendChild(el("td", { "class": "num" }, secs(b.deadline_at_ms)));
      tr.appendChild(el("td", { "class": "num" }, b.ended_ms === null ? "running" : secs(b.ended_ms)));
      tr.appendChild(el("td", { "class": "num" }, pct(b.guaranteed_share)));
      tr.appendChild(el("td", {}, b.met_deadline === null ? "–" : (b.met_deadline ? "yes" : "no")));
      body.appendChild(tr);
    });
  }

  function renderAdmissions() {
    var body = document.querySelector("#admissions tbody");
    body.textContent = "";
    admissions.slice().reverse().forEach(function (a) {
      var tr = el("tr", { "data-queue": a.queue, "data-class": a["class"] });
      tr.appendChild(el("td", { "class": "num" }, secs(a.t_ms)));
      tr.appendChild(el("td", {}, a.queue));
      tr.appendChild(el("td", { "class": "class-" + a["class"] }, a["class"]));
      tr.appendChild(el("td", {}, a.admitted ? "yes" : "no"));
      tr.appendChild(el("td", {}, a.reason));
      body.appendChild(tr);
    });
  }

  // The queues seen in the kept samples, in name order.
  function sampledQueues(filter) {
    var names = {};
    samples.forEach(function (s) {
      s.queues.forEach(function (q) { if (!filter || filter(q)) { names[q.name] = true; } });
    });
    return Object.keys(names).sort();
  }

  // uPlot's columnar data: x in seconds, then one column per (queue, field); null where absent.
  function columns(queues, fields) {
    var xs = samples.map(function (s) { return s.t_ms / 1000; });
    var cols = [xs];
    queues.forEach(function (name) {
      fields.forEach(function (field) {
        cols.push(samples.map(function (s) {
          for (var i = 0; i < s.queues.length; i++) {
            if (s.queues[i].name === name) {
              var v = s.queues[i][field];
              return v === undefined ? null : v;
            }
          }
          return null;
        }));
      });
    });
    return cols;
  }

  function width() { return Math.max(480, document.querySelector("main").clientWidth - 40); }

  // Builds the chart again when its series change (a queue appeared or left), else updates it
  // in place.
  function draw(id, key, makeOpts, data) {
    var c = charts[id];
    if (c && c.key === key) {
      c.plot.setData(data);
      return;
    }
    var node = document.getElementById(id);
    if (c) { c.plot.destroy(); }
    node.textContent = "";
    charts[id] = { key: key, plot: new uPlot(makeOpts(), data, node) };
  }

  function axes(label) {
    return [{ label: "scheduler time (s)" }, { label: label, values: function (u, vals) {
      return vals.map(function (v) { return (100 * v).toFixed(0) + "%"; });
    } }];
  }

  function shareOpts(queues) {
    var series = [{ label: "t (s)" },
      { label: "cluster", stroke: "#444", dash: [4, 4], width: 1, points: { show: false } }];
    queues.forEach(function (name) { series.push({ label: name, stroke: colour(name), width: 2 }); });
    return { width: width(), height: 260, scales: { x: { time: false }, y: { range: [0, 1] } },
      axes: axes("dominant share"), series: series };
  }

  function renderShareChart() {
    var queues = sampledQueues();
    var data = columns(queues, ["share"]);
    data.splice(1, 0, samples.map(function (s) { return s.cluster_share; }));
    draw("share-chart", queues.join("|"), function () { return shareOpts(queues); }, data);
  }

  // Shades each burst of a charted queue from its start to its end (or now) and marks its
  // deadline with a red line.
  function burstBands(queues) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, height = u.bbox.height;
      ctx.save();
      bursts.forEach(function (b) {
        if (queues.indexOf(b.queue) < 0) { return; }
        var x0 = u.valToPos(b.started_ms / 1000, "x", true);
        var end = b.ended_ms === null ? nowMs : b.ended_ms;
        var x1 = u.valToPos(end / 1000, "x", true);
        ctx.globalAlpha = 0.12;
        ctx.fillStyle = colour(b.queue);
        ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
        if (b.deadline_at_ms !== null) {
          var xd = u.valToPos(b.deadline_at_ms / 1000, "x", true);
          ctx.globalAlpha = 0.9;
          ctx.strokeStyle = "#d62728";
          ctx.lineWidth = 2;
          ctx.beginPath();
          ctx.moveTo(xd, top);
          ctx.lineTo(xd, top + height);
          ctx.stroke();
        }
      });
      ctx.restore();
    };
  }

  function renderBurstChart() {
    var lqs = sampledQueues(function (q) { return q.burst_phase !== null && q.burst_phase !== undefined; });
    var data = columns(lqs, ["share", "guaranteed_share"]);
    draw("burst-chart", lqs.join("|"), function () {
      var series = [{ label: "t (s)" }];
      lqs.forEach(function (name) {
        series.push({ label: name + " share", stroke: colour(name), width: 2 });
        series.push({ label: name + " guaranteed", stroke: colour(name), dash: [6, 4], width: 1,
          paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } });
      });
      // The time axis reaches the deadline of a burst still on, so its mark is in view.
      var xRange = function (u, min, max) {
        bursts.forEach(function (b) {
          if (b.ended_ms === null && b.deadline_at_ms !== null) {
            max = Math.max(max, b.deadline_at_ms / 1000);
          }
        });
        return [min, max];
      };
      return { width: width(), height: 260,
        scales: { x: { time: false, range: xRange }, y: { range: [0, 1] } },
        axes: axes("dominant share"), series: series, hooks: { drawClear: [burstBands(lqs)] } };
    }, data);
  }

  function renderLongTermChart() {
    var queues = sampledQueues();
    var data = columns(queues, ["long_term_share", "fair_share"]);
    draw("longterm-chart", queues.join("|"), function () {
      var series = [{ label: "t (s)" }];
      queues.forEach(function (name) {
        series.push({ label: name + " long-term", stroke: colour(name), width: 2 });
        series.push({ label: name + " fair", stroke: colour(name), dash: [2, 4], width: 1,
          points: { show: false } });
      });
      return { width: width(), height: 260, scales: { x: { time: false }, y: { range: [0, 1] } },
        axes: axes("share"), series: series };
    }, data);
  }

  function render() {
    renderSummary();
    renderQueues();
    renderBursts();
    renderAdmissions();
    colourOrder = sampledQueues();
    renderShareChart();
    renderBurstChart();
    renderLongTermChart();
    document.body.setAttribute("data-samples", String(samples.length));
  }

  function absorb(history) {
    nowMs = history.now_ms;
    Array.prototype.push.apply(samples, history.samples);
    if (!window.TIDAL_DATA && samples.length > MAX_SAMPLES) {
      samples.splice(0, samples.length - MAX_SAMPLES);
    }
    bursts = history.bursts;
    admissions = history.admissions;
  }

  function getJson(path) {
    return fetch(path, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) { throw new Error(path + ": HTTP " + r.status); }
        return r.json();
      });
  }

  function poll() {
    var since = samples.length ? samples[samples.length - 1].t_ms : -1;
    Promise.all([getJson("../ws/v1/cluster/tidal/status"),
      getJson("../ws/v1/cluster/tidal/history?since=" + since)])
      .then(function (replies) {
        status = replies[0];
        absorb(replies[1]);
        render();
      })
      .catch(function (e) {
        var s = document.getElementById("summary");
        s.textContent = "cannot read Tidal's state: " + e.message;
        s.className = "summary error";
      })
      .then(function () { setTimeout(poll, POLL_MS); });
  }

  if (window.TIDAL_DATA) {
    document.querySelector("header nav").style.display = "none";
    status = window.TIDAL_DATA.status;
    absorb(window.TIDAL_DATA.history);
    render();
  } else {
    poll();
  }
})();
