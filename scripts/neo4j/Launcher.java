import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Runs an embedded Neo4j Community DBMS with Bolt on 127.0.0.1 until SIGTERM.
 * Started by scripts/neo4j-local; not part of the amem_graph package.
 *
 * Usage: java [jvm flags] -cp 'lib/*:classes' Launcher HOME PORT [DATA_DIR]
 * Env:   NEO4J_PASSWORD  when set (non-empty), auth is on and user "neo4j" gets this password
 *                        (re-applied at every start, so the env value is the source of truth).
 *        NEO4J_PAGECACHE_MB  page cache size, default 256.
 *
 * Prints "NEO4J-LOCAL READY bolt://127.0.0.1:PORT" once Bolt is up and a RETURN 1 went through;
 * exits with status 1 if the DBMS fails to start; on SIGTERM shuts the DBMS down cleanly.
 */
public final class Launcher {
    public static final String READY = "NEO4J-LOCAL READY";

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: Launcher HOME PORT [DATA_DIR]");
            System.exit(2);
        }
        long t0 = System.nanoTime();
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = System.getenv("NEO4J_PASSWORD");
        boolean auth = password != null && !password.isEmpty();
        long pagecacheMb = Long.parseLong(envOr("NEO4J_PAGECACHE_MB", "256"));

        final DatabaseManagementService dbms;
        try {
            Files.createDirectories(home);
            DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                    .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                    .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                    // Any non-empty password is accepted (the default minimum is 8 characters).
                    .setConfig(GraphDatabaseSettings.auth_minimum_password_length, 1)
                    .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pagecacheMb))
                    .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                    .setConfig(GraphDatabaseSettings.udc_enabled, false)
                    // Long-running queries from a dev tool should not hang the test suite forever.
                    .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(10))
                    // Bolt otherwise waits 5 s + 5 s for its (idle) connections and event loops at shutdown.
                    .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ZERO)
                    .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ZERO);
            if (args.length >= 3 && !args[2].isEmpty()) {
                builder.setConfig(GraphDatabaseSettings.data_directory, Path.of(args[2]).toAbsolutePath());
            }
            dbms = builder.build();
        } catch (Throwable e) {
            System.err.println("NEO4J-LOCAL FAILED to start the DBMS: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J-LOCAL shutting down");
            System.out.flush();
            try {
                dbms.shutdown();
                System.out.println("NEO4J-LOCAL stopped cleanly");
            } catch (Throwable e) {
                System.err.println("NEO4J-LOCAL shutdown error: " + e);
            } finally {
                System.out.flush();
                stopped.countDown();
            }
        }, "neo4j-local-shutdown"));

        try {
            if (auth) {
                // Embedded transactions run with full access, so the system database takes admin commands.
                try {
                    dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                            "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
                } catch (RuntimeException e) {
                    // A restart of a store that already has this password: Neo4j refuses to "change"
                    // a password to itself, which means it is already what was asked for.
                    if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
                        throw e;
                    }
                }
            }
            Object one = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME)
                    .executeTransactionally("RETURN 1 AS one", Map.of(), r -> r.next().get("one"));
            if (!Long.valueOf(1L).equals(one)) {
                throw new IllegalStateException("RETURN 1 gave " + one);
            }
        } catch (Throwable e) {
            System.err.println("NEO4J-LOCAL FAILED after start: " + e);
            e.printStackTrace();
            System.exit(1); // runs the shutdown hook
            return;
        }

        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println(READY + " bolt://127.0.0.1:" + port + " auth=" + (auth ? "on" : "off")
                + " dbms_start_ms=" + ms);
        System.out.flush();

        try {
            stopped.await(); // woken only by the shutdown hook (SIGTERM / SIGINT)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }
}
