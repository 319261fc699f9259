package local.opensearch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * One OpenSearch node in this JVM, on the ports it is given (never "the next free one"):
 *
 * <pre>
 * java -cp ... local.opensearch.LocalNode --name node-1 --home DIR --http-port 9200 \
 *     --transport-port 9300 [--cluster-name NAME] [--seeds 9300,9301,9302]
 * </pre>
 *
 * Without --seeds the node is a single-node cluster; with them it joins (or forms, with the
 * other named nodes) a cluster whose cluster-manager-eligible nodes are node-1 .. node-N, N being
 * the number of seeds. Stops cleanly on SIGTERM. Listens on 127.0.0.1 only; no security plugin.
 */
public final class LocalNode {
    private LocalNode() {}

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = parse(argv);
        final String name = require(args, "name");
        final String home = require(args, "home");
        final String httpPort = require(args, "http-port");
        final String transportPort = require(args, "transport-port");
        final String clusterName = args.getOrDefault("cluster-name", "sa-local");
        final String seeds = args.get("seeds");

        final OpenSearchRunner runner = new OpenSearchRunner();
        runner.onBuild((index, settings) -> {
            settings.put("node.name", name);
            settings.put("network.host", "127.0.0.1");
            settings.put("http.port", httpPort);
            settings.put("transport.port", transportPort);
            settings.put("http.cors.enabled", false);
            // A shared development disk must not turn the index read-only under the tests.
            settings.put("cluster.routing.allocation.disk.threshold_enabled", false);
            if (seeds == null || seeds.isEmpty()) {
                settings.put("discovery.type", "single-node");
            } else {
                final List<String> hosts = new ArrayList<>();
                final List<String> managers = new ArrayList<>();
                final String[] ports = seeds.split(",");
                for (int i = 0; i < ports.length; i++) {
                    hosts.add("127.0.0.1:" + ports[i].trim());
                    managers.add("node-" + (i + 1));
                }
                settings.putList("discovery.seed_hosts", hosts);
                settings.putList("cluster.initial_cluster_manager_nodes", managers);
                // Notice a stopped node within seconds, not the default 30 s x 3.
                settings.put("cluster.fault_detection.follower_check.interval", "1s");
                settings.put("cluster.fault_detection.follower_check.retry_count", 2);
                settings.put("cluster.fault_detection.leader_check.interval", "1s");
                settings.put("cluster.fault_detection.leader_check.retry_count", 2);
            }
        }).build(OpenSearchRunner.newConfigs().basePath(home).numOfNode(1).clusterName(clusterName));

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final Exception e) {
                System.err.println("close failed: " + e);
            }
        }, "local-node-shutdown"));
        System.out.println("node " + name + " started: http 127.0.0.1:" + httpPort + ", transport " + transportPort);
        Thread.currentThread().join();
    }

    private static Map<String, String> parse(final String[] argv) {
        final Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + Arrays.toString(argv));
            }
            args.put(argv[i].substring(2), argv[++i]);
        }
        return args;
    }

    private static String require(final Map<String, String> args, final String key) {
        final String value = args.get(key);
        if (value == null) throw new IllegalArgumentException("--" + key + " is required");
        return value;
    }
}
