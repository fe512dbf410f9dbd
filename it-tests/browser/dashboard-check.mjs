// Opens Tidal's live dashboard and the RM's scheduler page in headless Chromium while a
// latency-queue burst runs, checks what they show and saves screenshots.
//
//   node dashboard-check.mjs --rm http://host:port --out DIR --queues root.a,root.b,root.lq
//                            --burst-queue root.lq [--chromium /usr/bin/chromium] [--timeout-ms N]
//
// Exit 0 when every check passed; 1 with the failed check on stderr (and a screenshot of the
// page as it was); 2 on bad usage.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

function usage(message) {
  console.error(`dashboard-check: ${message}`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      rm: { type: "string" },
      out: { type: "string" },
      queues: { type: "string" },
      "burst-queue": { type: "string" },
      chromium: { type: "string", default: "/usr/bin/chromium" },
      "timeout-ms": { type: "string", default: "60000" },
    },
  }).values;
} catch (e) {
  usage(e.message);
}
for (const required of ["rm", "out", "queues", "burst-queue"]) {
  if (!args[required]) usage(`--${required} is required`);
}
const timeout = Number(args["timeout-ms"]);
if (!Number.isFinite(timeout) || timeout <= 0) usage(`--timeout-ms must be a positive number`);
const rm = args.rm.replace(/\/+$/, "");
const queues = args.queues.split(",").filter((q) => q);
const burstQueue = args["burst-queue"];
mkdirSync(args.out, { recursive: true });

// Without the background-networking switches Chromium keeps trying hosts a closed network refuses.
const browser = await chromium.launch({
  executablePath: args.chromium,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(String(e)));
let step = "start";
const seen = {};

async function check(name, fn) {
  step = name;
  await fn();
  console.log(`ok: ${name}`);
}

try {
  await check("the dashboard loads", async () => {
    const reply = await page.goto(`${rm}/tidal/dashboard`, { timeout });
    if (!reply || reply.status() !== 200) throw new Error(`HTTP ${reply && reply.status()}`);
  });
  await check(`the queue tree lists ${queues.join(", ")}`, async () => {
    for (const q of queues) {
      await page.waitForSelector(`#queues tr[data-queue="${q}"]`, { timeout });
    }
  });
  await check(`${burstQueue} shows a burst in the queue tree`, async () => {
    const row = `#queues tr[data-queue="${burstQueue}"]`;
    const phases = ["on", "catch-up", "beyond-declaration"];
    await page.waitForSelector(phases.map((p) => `${row}[data-burst-phase="${p}"]`).join(", "),
      { timeout });
    seen.burstRow = await page.textContent(row);
  });
  await check(`the burst table has ${burstQueue}'s running burst with a deadline`, async () => {
    const row = `#bursts tr[data-queue="${burstQueue}"][data-state="on"]`;
    await page.waitForSelector(row, { timeout });
    seen.burst = await page.$$eval(`${row} td`, (cells) => cells.map((c) => c.textContent));
    if (!/^[0-9.]+$/.test(seen.burst[2])) throw new Error(`no deadline in ${seen.burst}`);
  });
  await check("the admission decisions name the LQ's class and reason", async () => {
    const row = `#admissions tr[data-queue="${burstQueue}"]`;
    await page.waitForSelector(row, { timeout });
    seen.admission = await page.$$eval(`${row} td`, (cells) => cells.map((c) => c.textContent));
    if (!seen.admission[4]) throw new Error("admission without a reason");
  });
  await check("the charts are drawn from several samples, updating live", async () => {
    const first = Number(await page.getAttribute("body", "data-samples"));
    await page.waitForFunction((n) => Number(document.body.dataset.samples) > n && n >= 0,
      first, { timeout });
    for (const id of ["share-chart", "burst-chart", "longterm-chart"]) {
      await page.waitForSelector(`#${id} canvas`, { timeout });
    }
    seen.samples = Number(await page.getAttribute("body", "data-samples"));
  });
  await page.screenshot({ path: join(args.out, "dashboard-burst.png"), fullPage: true });

  await check("the RM's scheduler page shows Tidal's queue tree", async () => {
    const reply = await page.goto(`${rm}/cluster/scheduler`, { timeout });
    if (!reply || reply.status() !== 200) throw new Error(`HTTP ${reply && reply.status()}`);
    const text = await page.textContent("body");
    for (const q of queues) {
      const leaf = q.split(".").pop();
      if (!text.includes(leaf)) throw new Error(`no queue ${q} on the page`);
    }
    if (!/hard|soft|elastic/.test(text)) throw new Error("no admission class on the page");
  });
  await page.screenshot({ path: join(args.out, "rm-scheduler-page.png"), fullPage: true });
  if (pageErrors.length) {
    step = "no script errors";
    throw new Error(pageErrors.join("; "));
  }
  console.log(`seen: ${JSON.stringify(seen)}`);
} catch (e) {
  console.error(`dashboard-check failed at "${step}": ${e.message}`);
  await page.screenshot({ path: join(args.out, "failure.png"), fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await browser.close();
