#!/usr/bin/env node
/*
 * A real OpenSearch without Docker: OpenSearch 2.17.1 from Maven Central (tools/opensearch-local),
 * one JVM per node, on 127.0.0.1.
 *
 *   npm run opensearch:start                      one node, HTTP 9200, transport 9300
 *   npm run opensearch:start -- --nodes 3         three nodes, HTTP 9200-9202, transport 9300-9302
 *   npm run opensearch:start -- --port 9250 --transport-port 9350 --data /tmp/os --heap 512m --fresh
 *   npm run opensearch:stop [-- --data DIR]       stops the nodes started from DIR, by their pids
 *
 * `start` builds the launcher if needed (Maven; the first build downloads OpenSearch into ~/.m2),
 * starts the nodes in the background (logs and data under --data, default var/opensearch/), and
 * returns once the cluster has all its nodes and is green, printing one JSON line on stdout:
 * {"url": "http://127.0.0.1:9200", "nodes": [{"name", "pid", "httpPort", "transportPort"}]}.
 * Nodes already running from the same directory are kept (start is idempotent). Data stays
 * between runs unless --fresh. Exit status 1, with the node's last log lines on stderr, if a node
 * dies or the cluster is not green within --timeout seconds (default 180).
 *
 * Also a module: the three-node test (test/e2e/opensearch-cluster.e2e-spec.ts) starts the cluster,
 * kills one node (killNode: SIGKILL) and starts it again on its data with it.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS script that node runs as it is */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const TOOL = path.join(ROOT, 'tools', 'opensearch-local');
const JAR = path.join(TOOL, 'target', 'opensearch-local-2.17.1.jar');
const CLASSPATH = path.join(TOOL, 'target', 'classpath.txt');
/** Touched after a successful build: Maven leaves an unchanged jar's time alone. */
const STAMP = path.join(TOOL, 'target', 'built.stamp');
const SOURCES = [
  path.join(TOOL, 'pom.xml'),
  path.join(TOOL, 'src', 'main', 'java', 'local', 'opensearch', 'LocalNode.java'),
];

const log = (line) => process.stderr.write(`opensearch-local: ${line}\n`);

/** Builds the launcher when its jar or classpath is missing or older than its sources. */
function build() {
  const built = [JAR, CLASSPATH, STAMP].every((f) => fs.existsSync(f));
  const newest = Math.max(...SOURCES.map((f) => fs.statSync(f).mtimeMs));
  if (built && fs.statSync(STAMP).mtimeMs >= newest && classpathPresent()) return;
  log('building tools/opensearch-local (Maven; a first build downloads OpenSearch 2.17.1)');
  // Maven's output goes to stderr: stdout carries the JSON summary alone.
  const mvn = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      '--no-transfer-progress',
      '-Dstyle.color=never',
      '-f',
      path.join(TOOL, 'pom.xml'),
      'package',
    ],
    { stdio: ['ignore', 2, 2] },
  );
  if (mvn.error) throw new Error(`could not run mvn: ${mvn.error.message}`);
  if (mvn.status !== 0) throw new Error(`mvn package failed with status ${mvn.status}`);
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

/** Whether every jar of the recorded classpath is still in the local repository. */
function classpathPresent() {
  return fs
    .readFileSync(CLASSPATH, 'utf8')
    .trim()
    .split(path.delimiter)
    .every((jar) => fs.existsSync(jar));
}

/** The layout of a cluster of `nodes` nodes whose files live under `home`. */
function layout({
  nodes = 1,
  port = 9200,
  transportPort = 9300,
  home = path.join(ROOT, 'var', 'opensearch'),
} = {}) {
  const all = [];
  for (let i = 1; i <= nodes; i++)
    all.push({
      name: `node-${i}`,
      httpPort: port + i - 1,
      transportPort: transportPort + i - 1,
      home: path.join(home, `node-${i}`),
      pidFile: path.join(home, `node-${i}.pid`),
      logFile: path.join(home, `node-${i}.log`),
    });
  return {
    home,
    nodes: all,
    seeds: nodes > 1 ? all.map((n) => n.transportPort) : null,
    url: `http://127.0.0.1:${port}`,
  };
}

/** Whether `pid` runs; a zombie (killed, not yet reaped by its parent) counts as gone. */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ...".
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z';
  } catch {
    return true; // no /proc (macOS): kill(pid, 0) has the last word
  }
}

/**
 * The node's pid when its recorded process is alive and is that node: a pid file left by a
 * crashed run may name a pid reused since by another process, which must never be signalled.
 */
function pidOf(node) {
  try {
    const pid = Number(fs.readFileSync(node.pidFile, 'utf8').trim());
    if (!(pid > 0 && alive(pid))) return null;
    let cmdline;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return pid; // no /proc: trust the pid file
    }
    return cmdline.includes('local.opensearch.LocalNode') && cmdline.includes(node.home) ? pid : null;
  } catch {
    return null;
  }
}

/** Starts one node in the background (kept if its recorded process is alive); returns its pid. */
function startNode(cluster, node, { heap = '1g', clusterName = 'sa-local', javaOptions = [] } = {}) {
  const running = pidOf(node);
  if (running) return running;
  fs.mkdirSync(node.home, { recursive: true });
  const out = fs.openSync(node.logFile, 'a');
  const args = [
    `-Xms${heap}`,
    `-Xmx${heap}`,
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    '-Dlog4j2.formatMsgNoLookups=true',
    ...javaOptions,
    '-cp',
    `${JAR}${path.delimiter}${fs.readFileSync(CLASSPATH, 'utf8').trim()}`,
    'local.opensearch.LocalNode',
    '--name',
    node.name,
    '--home',
    node.home,
    '--http-port',
    String(node.httpPort),
    '--transport-port',
    String(node.transportPort),
    '--cluster-name',
    clusterName,
    ...(cluster.seeds ? ['--seeds', cluster.seeds.join(',')] : []),
  ];
  const child = spawn('java', args, { detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  child.unref();
  fs.writeFileSync(node.pidFile, `${child.pid}\n`);
  return child.pid;
}

/** Stops one node by its pid: SIGTERM, then SIGKILL after `graceMs`. Resolves once it is gone. */
async function stopNode(node, { graceMs = 30_000 } = {}) {
  const pid = pidOf(node);
  if (pid) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (alive(pid) && Date.now() < deadline) await sleep(100);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(50);
  }
  fs.rmSync(node.pidFile, { force: true });
}

/**
 * Kills one node at once with SIGKILL (no shutdown: as a crash or a lost machine does) and
 * resolves once it is gone, its pid file removed (startNode then starts it again on its data).
 * Returns the pid killed, or null if the node was not running.
 */
async function killNode(node) {
  const pid = pidOf(node);
  if (pid) {
    process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(20);
  }
  fs.rmSync(node.pidFile, { force: true });
  return pid;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The cluster's health as seen by `url`, or null if it does not answer. */
async function health(url, query = '') {
  try {
    const res = await fetch(`${url}/_cluster/health${query}`, { signal: AbortSignal.timeout(5_000) });
    return res.ok || res.status === 408 ? await res.json() : null;
  } catch {
    return null;
  }
}

/** Waits until some node of the cluster reports `nodes` nodes and `status`; throws on a dead node or timeout. */
async function waitHealthy(
  cluster,
  { nodes = cluster.nodes.length, status = 'green', timeoutMs = 180_000 } = {},
) {
  const deadline = Date.now() + timeoutMs;
  const rank = { red: 0, yellow: 1, green: 2 };
  for (;;) {
    for (const node of cluster.nodes) {
      if (!pidOf(node)) continue;
      const h = await health(`http://127.0.0.1:${node.httpPort}`, `?wait_for_nodes=${nodes}&timeout=1s`);
      if (h && h.number_of_nodes >= nodes && rank[h.status] >= rank[status]) return h;
    }
    const dead = cluster.nodes.find((n) => fs.existsSync(n.pidFile) && !pidOf(n));
    if (dead) throw new Error(`${dead.name} exited; its log ends with:\n${tail(dead.logFile)}`);
    if (Date.now() > deadline)
      throw new Error(
        `not ${status} with ${nodes} nodes after ${timeoutMs / 1000} s; ${cluster.nodes[0].name}'s log ends with:\n${tail(cluster.nodes[0].logFile)}`,
      );
    await sleep(500);
  }
}

function tail(file, lines = 25) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Builds if needed, starts every node, waits for green; returns the cluster with pids. */
async function startCluster(options = {}) {
  const cluster = layout(options);
  if (options.fresh) {
    await stopCluster(cluster);
    fs.rmSync(cluster.home, { recursive: true, force: true });
  }
  const foreign = !cluster.nodes.some(pidOf) && (await health(cluster.url));
  if (foreign)
    throw new Error(
      `${cluster.url} already answers, and not from ${cluster.home}: stop that OpenSearch first`,
    );
  build();
  const started = cluster.nodes.map((node) => ({ ...node, pid: startNode(cluster, node, options) }));
  await waitHealthy(cluster, { timeoutMs: options.timeoutMs });
  return { ...cluster, nodes: started };
}

async function stopCluster(cluster) {
  await Promise.all(cluster.nodes.map((node) => stopNode(node)));
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    const int = () => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`);
      return n;
    };
    if (flag === '--nodes') options.nodes = int();
    else if (flag === '--port') options.port = int();
    else if (flag === '--transport-port') options.transportPort = int();
    else if (flag === '--data') options.home = path.resolve(value());
    else if (flag === '--heap') options.heap = value();
    else if (flag === '--timeout') options.timeoutMs = int() * 1000;
    else if (flag === '--fresh') options.fresh = true;
    else throw new Error(`unknown option ${flag}`);
  }
  if (options.nodes > 9) throw new Error('--nodes: at most 9');
  return options;
}

/** The pid files under the data directory say which nodes `stop` ends. */
function recordedCluster(options) {
  const home = options.home ?? path.join(ROOT, 'var', 'opensearch');
  const count = fs.existsSync(home)
    ? fs.readdirSync(home).filter((f) => /^node-\d+\.pid$/.test(f)).length
    : 0;
  return layout({ ...options, home, nodes: Math.max(count, options.nodes ?? 0) });
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const options = parseArgs(rest);
  if (command === 'start') {
    const cluster = await startCluster(options);
    log(`${cluster.nodes.length} node(s) green at ${cluster.url} (data and logs in ${cluster.home})`);
    process.stdout.write(
      `${JSON.stringify({
        url: cluster.url,
        nodes: cluster.nodes.map(({ name, pid, httpPort, transportPort }) => ({
          name,
          pid,
          httpPort,
          transportPort,
        })),
      })}\n`,
    );
  } else if (command === 'stop') {
    const cluster = recordedCluster(options);
    const running = cluster.nodes.filter(pidOf).length;
    await stopCluster(cluster);
    log(
      running
        ? `stopped ${running} node(s) started from ${cluster.home}`
        : `no node running from ${cluster.home}`,
    );
  } else {
    throw new Error(
      'usage: opensearch-local.js start|stop [--nodes N] [--port P] [--transport-port P] [--data DIR] [--heap 1g] [--timeout S] [--fresh]',
    );
  }
}

if (require.main === module)
  main().catch((error) => {
    log(error.message);
    process.exit(1);
  });

module.exports = {
  layout,
  startCluster,
  stopCluster,
  startNode,
  stopNode,
  killNode,
  waitHealthy,
  health,
  build,
};
