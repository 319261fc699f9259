/**
 * Typed access to scripts/opensearch-local.js (the local OpenSearch nodes, one JVM each), for
 * suites that start, kill and restart nodes of a cluster of their own.
 */
export interface LocalNode {
  name: string;
  httpPort: number;
  transportPort: number;
  /** The node's data and configuration (kept when the node is killed or stopped). */
  home: string;
  pidFile: string;
  logFile: string;
}

export interface LocalCluster {
  home: string;
  nodes: LocalNode[];
  seeds: number[] | null;
  /** The first node's HTTP address. */
  url: string;
}

export interface ClusterOptions {
  nodes?: number;
  port?: number;
  transportPort?: number;
  home?: string;
  heap?: string;
  /** More JVM options of every node (after the heap and GC options). */
  javaOptions?: string[];
  timeoutMs?: number;
  fresh?: boolean;
}

export interface ClusterHealth {
  status: 'green' | 'yellow' | 'red';
  number_of_nodes: number;
  active_primary_shards: number;
  unassigned_shards: number;
  [key: string]: unknown;
}

interface LocalOpenSearchModule {
  layout(options?: ClusterOptions): LocalCluster;
  startCluster(
    options?: ClusterOptions,
  ): Promise<LocalCluster & { nodes: Array<LocalNode & { pid: number }> }>;
  stopCluster(cluster: LocalCluster): Promise<void>;
  startNode(
    cluster: LocalCluster,
    node: LocalNode,
    options?: { heap?: string; clusterName?: string; javaOptions?: string[] },
  ): number;
  stopNode(node: LocalNode, options?: { graceMs?: number }): Promise<void>;
  killNode(node: LocalNode): Promise<number | null>;
  waitHealthy(
    cluster: LocalCluster,
    options?: { nodes?: number; status?: 'green' | 'yellow' | 'red'; timeoutMs?: number },
  ): Promise<ClusterHealth>;
  health(url: string, query?: string): Promise<ClusterHealth | null>;
}

// A CommonJS script (also the npm run opensearch:* CLI), not a TypeScript module.
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const localOpenSearch: LocalOpenSearchModule = require('../../scripts/opensearch-local.js');
